"""The layer-wise error report: float vs int8 for every quantized tensor.

    report = error_report(float_module, quantized_module, samples)
    print(report.format_text())
    report.first_below()        # the first tensor, in program order, below the threshold

Both modules run on every sample. Each quantized tensor of the quantized module is
matched with the float value it stands for, by `value_key` (the op location and
result index):

- in the QDQ form, a quantized tensor is the result of a `quant.qcast` (activations)
  or of a `quant.scast` of integer constants (weights, biases); the casts are followed
  back to the float value they quantize, whose key names the tensor (`conv1#0` for the
  quantized output of the op at `conv1`). A float value right after a `quant.dcast` is
  the same tensor, dequantized, and is not reported again;
- in the `qnn` form, the results of integer ops have quantized types (they hold storage
  integers at run time) and keep the location of the float op they replace. Plain
  `i32` accumulators have no quantized type and are not reported.

A quantized tensor is dequantized with its type's scales and zero points and compared
with its float counterpart: per tensor, the cosine similarity (the mean over samples
of each sample's cosine, and the worst sample's), the mean squared error and the
largest absolute error over all elements of all samples, and the SQNR in dB,
10 log10(sum x^2 / sum (x - x_q)^2) summed over all samples. Weights are compared once.
The report lists them sorted by cosine (worst first) or in program order, and names
the first tensor in program order whose cosine is below the threshold (0.99 by
default): where the accuracy is lost first, as later tensors inherit its error.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence, Sized
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.interpreter import Interpreter, PythonValues
from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.traits import ConstantLike

from irc.diagnostics import Location, error
from irc.dialects.part import TransferOp
from irc.dialects.quant import (
    DequantizeCastOp,
    QuantizeCastOp,
    StorageCastOp,
    UniformQuantizedType,
    quantized_element,
)
from irc.fileio import StagedOutputs
from irc.interp import function_signature
from irc.interp.quant import dequantize
from irc.quantize.calibration import (
    ProgressBar,
    bind_sample,
    entry_function,
    non_finite_values,
    require_weights,
    run_with_listener,
    value_key,
)

SCHEMA = "irc-error-report/1"
"""The `schema` field of a report's JSON."""

DEFAULT_THRESHOLD = 0.99
"""The cosine similarity below which a tensor counts as degraded."""

CASTS = (QuantizeCastOp, DequantizeCastOp, StorageCastOp)


# --------------------------------------------------------------------------------------
# Finding the quantized tensors


@dataclass(frozen=True)
class QuantizedTensor:
    """A value of a quantized type, and the key of the float value it stands for."""

    value: SSAValue
    key: str
    element: UniformQuantizedType
    is_weight: bool
    order: int


def _origin(value: SSAValue) -> SSAValue:
    """The float (or integer-constant) value a chain of quant casts (and copies between
    host and NPU memory) starts from."""
    while isinstance(value, OpResult) and isinstance(value.op, (*CASTS, TransferOp)):
        value = value.op.operands[0]
    return value


def _is_constant(value: SSAValue) -> bool:
    return isinstance(value, OpResult) and value.op.has_trait(ConstantLike)


def quantized_tensors(function: FuncOp) -> list[QuantizedTensor]:
    """Every value of a quantized type in `function`, in program order, keyed by the
    float value it stands for (see the module docstring)."""
    found: list[QuantizedTensor] = []
    values: list[SSAValue] = []
    entry_block = function.body.blocks.first
    if entry_block is not None:
        values.extend(entry_block.args)
    for op in function.walk():
        if op is not function:
            values.extend(op.results)
    for value in values:
        element = quantized_element(value.type)
        if element is None:
            continue
        origin = _origin(value)
        key = value_key(origin)
        if key is None:
            continue
        found.append(QuantizedTensor(value, key, element, _is_constant(origin), len(found)))
    return found


# --------------------------------------------------------------------------------------
# Errors


def _cosine(x: np.ndarray, y: np.ndarray, squared_error: float) -> float:
    """Cosine similarity; two zero vectors are equal (1), one zero vector is not (0)."""
    norms = math.sqrt(float(x @ x)) * math.sqrt(float(y @ y))
    if norms == 0:
        return 1.0 if squared_error == 0 else 0.0
    return float(x @ y) / norms


@dataclass
class TensorError:
    """The errors of one quantized tensor against its float counterpart.

    `cosine` is the mean over samples of the cosine similarity, `worst_cosine` the
    smallest; `mse` and `max_abs_error` are over every element of every sample;
    `sqnr_db` is 10 log10(signal power / noise power) over all samples (infinite when
    the quantized tensor is exact).
    """

    key: str
    op: str
    quantized_type: str
    shape: tuple[int, ...]
    order: int
    is_weight: bool = False
    is_output: bool = False
    samples: int = 0
    cosine_sum: float = 0.0
    worst_cosine: float = 1.0
    squared_error: float = 0.0
    signal_power: float = 0.0
    max_abs_error: float = 0.0
    elements: int = 0

    def add(self, reference: np.ndarray, quantized: np.ndarray) -> None:
        """Account one sample: the float value and the dequantized one."""
        x = reference.astype(np.float64).reshape(-1)
        y = quantized.astype(np.float64).reshape(-1)
        finite = np.isfinite(x) & np.isfinite(y)
        if not finite.all():
            x, y = x[finite], y[finite]
        difference = x - y
        squared = float(difference @ difference)
        cosine = _cosine(x, y, squared)
        self.samples += 1
        self.cosine_sum += cosine
        self.worst_cosine = min(self.worst_cosine, cosine)
        self.squared_error += squared
        self.signal_power += float(x @ x)
        self.max_abs_error = max(
            self.max_abs_error, float(np.abs(difference).max()) if difference.size else 0.0
        )
        self.elements += x.size

    @property
    def cosine(self) -> float:
        """The mean cosine similarity over the samples."""
        return self.cosine_sum / self.samples if self.samples else 1.0

    @property
    def mse(self) -> float:
        """The mean squared error over all elements of all samples."""
        return self.squared_error / self.elements if self.elements else 0.0

    @property
    def sqnr_db(self) -> float:
        """Signal-to-quantization-noise ratio in dB (inf when there is no error)."""
        if self.squared_error == 0:
            return math.inf
        if self.signal_power == 0:
            return -math.inf
        return 10 * math.log10(self.signal_power / self.squared_error)

    def to_json(self) -> dict[str, Any]:
        """The tensor's entry in the report's JSON (a non-finite SQNR is null)."""
        sqnr = self.sqnr_db
        return {
            "key": self.key,
            "op": self.op,
            "type": self.quantized_type,
            "shape": list(self.shape),
            "order": self.order,
            "weight": self.is_weight,
            "output": self.is_output,
            "samples": self.samples,
            "cosine": self.cosine,
            "worst_cosine": self.worst_cosine,
            "mse": self.mse,
            "max_abs_error": self.max_abs_error,
            "sqnr_db": sqnr if math.isfinite(sqnr) else None,
        }


@dataclass(frozen=True)
class UnmatchedTensor:
    """A quantized tensor the report cannot compare, and why."""

    key: str
    op: str
    reason: str

    def to_json(self) -> dict[str, str]:
        """The entry in the report's `unmatched` list."""
        return {"key": self.key, "op": self.op, "reason": self.reason}


def describe_type(element: UniformQuantizedType) -> str:
    """The type as MLIR prints it, with a per-axis type's scales counted, not listed."""
    text = str(element)
    if element.is_per_axis:
        start = text.index("{")
        text = f"{text[:start]}{{{len(element.scale_values)} scales}}>"
    return text


def _format_number(value: float, width: int, digits: int) -> str:
    if math.isinf(value):
        return f"{'inf' if value > 0 else '-inf':>{width}}"
    return f"{value:>{width}.{digits}f}"


@dataclass
class ErrorReport:
    """Float vs quantized errors of every quantized tensor (program order in `tensors`)."""

    tensors: list[TensorError]
    samples: int
    threshold: float = DEFAULT_THRESHOLD
    unmatched: list[UnmatchedTensor] = field(default_factory=list)
    """Quantized tensors without a float value of the same key, kind and shape."""

    def by_cosine(self) -> list[TensorError]:
        """The tensors, worst cosine first (program order among equals)."""
        return sorted(self.tensors, key=lambda t: (t.cosine, t.order))

    def below(self, threshold: float | None = None) -> list[TensorError]:
        """The tensors whose cosine is below the threshold, in program order."""
        limit = self.threshold if threshold is None else threshold
        return [tensor for tensor in self.tensors if tensor.cosine < limit]

    def first_below(self, threshold: float | None = None) -> TensorError | None:
        """The first computed tensor in program order whose cosine is below the
        threshold: where the quantized model starts to drift. Weights and biases are
        left out (they are listed with the others): a bias that bias correction
        changed on purpose differs from the float one without being an error."""
        below = [tensor for tensor in self.below(threshold) if not tensor.is_weight]
        return below[0] if below else None

    def get(self, key: str) -> TensorError | None:
        """The first tensor (program order) with this key, or None."""
        return next((tensor for tensor in self.tensors if tensor.key == key), None)

    def outputs(self) -> list[TensorError]:
        """The tensors that are outputs of the model."""
        return [tensor for tensor in self.tensors if tensor.is_output]

    def format_text(self, order: str = "cosine", limit: int | None = None) -> str:
        """A table of the tensors, sorted by cosine (`order="cosine"`) or in program
        order (`"program"`), at most `limit` rows, after a summary."""
        lines = [
            f"layer-wise error: {len(self.tensors)} quantized tensors, {self.samples} "
            f"samples, threshold cosine {self.threshold:g}"
        ]
        first = self.first_below()
        if first is None:
            lines.append(f"every tensor has cosine >= {self.threshold:g}")
        else:
            count = len(self.below())
            lines.append(
                f"first below threshold: {first.key} ({first.op}) cosine {first.cosine:.6f} "
                f"({count} tensor{'s' if count != 1 else ''} below)"
            )
        for output in self.outputs():
            lines.append(
                f"output {output.key}: cosine {output.cosine:.6f}, SQNR "
                f"{_format_number(output.sqnr_db, 0, 2).strip()} dB"
            )
        if self.unmatched:
            first_unmatched = self.unmatched[0]
            lines.append(
                f"{len(self.unmatched)} quantized tensors have no float counterpart (first: "
                f"{first_unmatched.key} of {first_unmatched.op}: {first_unmatched.reason})"
            )
        rows = self.by_cosine() if order == "cosine" else list(self.tensors)
        shown = rows if limit is None else rows[:limit]
        lines.append(
            f"{'cosine':>9} {'worst':>9} {'SQNR dB':>8} {'MSE':>10} {'max abs':>10}  "
            "tensor  op  type"
        )
        for tensor in shown:
            mark = "*" if tensor.cosine < self.threshold else " "
            lines.append(
                f"{mark}{tensor.cosine:.6f} {tensor.worst_cosine:9.6f} "
                f"{_format_number(tensor.sqnr_db, 8, 2)} {tensor.mse:10.3e} "
                f"{tensor.max_abs_error:10.3e}  {tensor.key}  {tensor.op}"
                f"{' (weight)' if tensor.is_weight else ''}  {tensor.quantized_type}"
            )
        if len(shown) < len(rows):
            lines.append(f"... {len(rows) - len(shown)} more")
        return "\n".join(lines) + "\n"

    def to_json_text(self) -> str:
        """The report as JSON: summary, then one tensor per line in program order."""
        first = self.first_below()
        header = {
            "schema": SCHEMA,
            "samples": self.samples,
            "threshold": self.threshold,
            "first_below_threshold": first.key if first is not None else None,
            "unmatched": [tensor.to_json() for tensor in self.unmatched],
        }
        lines = ["{"]
        for key in sorted(header):
            lines.append(f"  {json.dumps(key)}: {json.dumps(header[key])},")
        lines.append('  "tensors": [')
        entries = [
            f"    {json.dumps(t.to_json(), sort_keys=True, allow_nan=False)}" for t in self.tensors
        ]
        lines.append(",\n".join(entries))
        lines.append("  ]")
        lines.append("}")
        return "\n".join(line for line in lines if line) + "\n"

    def save(self, path: Path | str) -> None:
        """Write the JSON report (atomically)."""
        with StagedOutputs() as staged:
            staged.stage_text(path, self.to_json_text())


# --------------------------------------------------------------------------------------
# Running both modules


class _Collector(Interpreter.Listener):
    """Keeps the arrays of the wanted values, by value."""

    def __init__(self, wanted: Mapping[SSAValue, object]) -> None:
        self.wanted = wanted
        self.found: dict[SSAValue, np.ndarray] = {}

    def did_interpret_op(self, op: Operation, results: PythonValues) -> None:
        for result, array in zip(op.results, results):
            if result in self.wanted:
                self.found[result] = array


def _float_values(function: FuncOp) -> dict[str, SSAValue]:
    """The values of the float function by key; the last of several with one key."""
    by_key: dict[str, SSAValue] = {}
    entry_block = function.body.blocks.first
    assert entry_block is not None
    for argument in entry_block.args:
        key = value_key(argument)
        if key is not None:
            by_key[key] = argument
    for op in function.walk():
        if op is function:
            continue
        for result in op.results:
            key = value_key(result)
            if key is not None:
                by_key[key] = result
    return by_key


def _output_keys(function: FuncOp) -> set[str]:
    keys: set[str] = set()
    for op in function.walk():
        if isinstance(op, ReturnOp) and op.parent_op() is function:
            keys.update(key for key in map(value_key, op.operands) if key is not None)
    return keys


def _shape(value: SSAValue) -> tuple[int, ...] | None:
    return tuple(value.type.get_shape()) if isinstance(value.type, TensorType) else None


def _mismatch(tensor: QuantizedTensor, counterpart: SSAValue | None) -> str | None:
    """Why `counterpart` cannot be compared with the quantized tensor, or None."""
    if counterpart is None:
        return "no float value has this key"
    if _is_constant(counterpart) != tensor.is_weight:
        kinds = ("a constant", "a computed value")
        mine, theirs = (kinds[0], kinds[1]) if tensor.is_weight else (kinds[1], kinds[0])
        return f"it is {mine}, the float value with this key is {theirs}"
    shape, expected = _shape(tensor.value), _shape(counterpart)
    if shape != expected:
        return (
            f"its shape {list(shape or ())} differs from the float value's {list(expected or ())}"
        )
    return None


def _check_outputs(
    function: FuncOp,
    names: Sequence[str],
    float_results: Sequence[np.ndarray],
    quantized_results: Sequence[np.ndarray],
    sample: int,
) -> None:
    """An error when an output of either model is not finite: no cosine or SQNR
    can be measured then, and a report of `nan` would pass for a number."""
    block = function.body.blocks.first
    assert block is not None and block.last_op is not None
    returned = block.last_op.operands
    for model, results in (("float", float_results), ("int8", quantized_results)):
        for index, array in enumerate(results):
            problem = non_finite_values(np.asarray(array))
            if problem is None:
                continue
            name = names[index] if index < len(names) else f"#{index}"
            raise error(
                f"the {model} model's output '{name}' has {problem} on sample {sample}: "
                "the quantization error cannot be measured",
                returned[index] if index < len(returned) else function,
                hint="the inputs are finite, so the model computes them (an overflow, or a "
                "function outside its domain): check the model on this sample",
            )


def error_report(
    float_module: ModuleOp,
    quantized_module: ModuleOp,
    samples: Iterable[Mapping[str, np.ndarray] | Sequence[np.ndarray]],
    threshold: float = DEFAULT_THRESHOLD,
    *,
    progress: bool | None = None,
    entry: str = "main",
    model_outputs: list[tuple[list[np.ndarray], list[np.ndarray]]] | None = None,
) -> ErrorReport:
    """Run both modules on every sample and compare every quantized tensor with its
    float counterpart (see the module docstring). `samples` are as for `calibrate`.
    With `model_outputs`, each sample's (float, quantized) model outputs are appended
    to it, in result order."""
    if not 0 < threshold <= 1:
        raise error(f"the cosine threshold must be in (0, 1], got {threshold}")
    float_function = entry_function(float_module, entry)
    quantized_function = entry_function(quantized_module, entry)
    float_inputs, float_outputs = function_signature(float_module, entry)
    output_names = [name for name, _ in float_outputs]
    quantized_inputs = function_signature(quantized_module, entry)[0]
    require_weights(float_module)
    require_weights(quantized_module)

    float_by_key = _float_values(float_function)
    outputs = _output_keys(float_function)
    tensors: list[QuantizedTensor] = []
    errors: dict[SSAValue, TensorError] = {}
    unmatched: list[UnmatchedTensor] = []
    for tensor in quantized_tensors(quantized_function):
        counterpart = float_by_key.get(tensor.key)
        problem = _mismatch(tensor, counterpart)
        if problem is not None or counterpart is None:
            op_name = tensor.value.op.name if isinstance(tensor.value, OpResult) else "func.arg"
            unmatched.append(UnmatchedTensor(tensor.key, op_name, problem or ""))
            continue
        counterpart_op = counterpart.op.name if isinstance(counterpart, OpResult) else "func.arg"
        tensors.append(tensor)
        errors[tensor.value] = TensorError(
            tensor.key,
            counterpart_op,
            describe_type(tensor.element),
            _shape(tensor.value) or (),
            tensor.order,
            is_weight=tensor.is_weight,
            is_output=tensor.key in outputs,
        )
    float_wanted = {float_by_key[tensor.key]: None for tensor in tensors}
    quantized_wanted = {tensor.value: None for tensor in tensors}

    total = len(samples) if isinstance(samples, Sized) else None
    bar = ProgressBar("error report", total, progress)
    count = 0
    for sample in samples:
        float_collector = _Collector(float_wanted)
        float_arguments = bind_sample(sample, float_inputs)
        entry_block = float_function.body.blocks.first
        assert entry_block is not None
        for argument, array in zip(entry_block.args, float_arguments):
            if argument in float_wanted:
                float_collector.found[argument] = array
        float_results = run_with_listener(
            float_module, float_function, float_arguments, float_collector
        )

        quantized_collector = _Collector(quantized_wanted)
        quantized_arguments = bind_sample(sample, quantized_inputs)
        quantized_block = quantized_function.body.blocks.first
        assert quantized_block is not None
        for argument, array in zip(quantized_block.args, quantized_arguments):
            if argument in quantized_wanted:
                quantized_collector.found[argument] = array
        quantized_results = run_with_listener(
            quantized_module, quantized_function, quantized_arguments, quantized_collector
        )
        _check_outputs(float_function, output_names, float_results, quantized_results, count)
        if model_outputs is not None:
            model_outputs.append((float_results, quantized_results))
        for tensor in tensors:
            if tensor.is_weight and count > 0:
                continue  # constants: the same every sample
            quantized = quantized_collector.found.get(tensor.value)
            reference = float_collector.found.get(float_by_key[tensor.key])
            if quantized is None or reference is None:
                continue  # not computed (in a branch not taken)
            errors[tensor.value].add(reference, dequantize(quantized, tensor.element))
        count += 1
        bar.advance()
    bar.finish()
    if count == 0:
        raise error(
            "the error report needs at least one sample, and the sample set is empty",
            Location(),
        )
    return ErrorReport([errors[t.value] for t in tensors], count, threshold, unmatched)
