"""The three-way layer diff: the float model, the integer reference and the simulator.

    levels = compile_levels(path, CompileOptions())     # the pipeline, in memory
    comparison = compare_layers(levels, inputs)         # each level run on the inputs
    print(comparison.format_text())
    comparison.first_difference()   # the first layer the simulator gets wrong
    comparison.widest_gap()         # the layer where int8 and float part most

`compile_levels` runs the pipeline of `irc-compile` (`CompileOptions.pipeline()`) and
keeps three levels of the model: the float module as `quantize` receives it, the
integer `qnn` module after `plan-ddr` (partitioned and placed in DDR, not yet lowered)
and the command stream. A layer is a quantized tensor of the `qnn` module
(`irc.quantize.report.quantized_tensors`: each requantized output, the quantized input),
named as the error report names it (`value_key`: the ONNX node name and result
index). Weights, function arguments and views (a reshape, a `part.transfer`: their
bytes are another tensor's) are not layers.

Each level gives every layer's output:

- **float**: the float value with the same key, from the float interpreter;
- **int8** (the reference): the `qnn` interpreter's storage integers;
- **npu** (the simulator): for a layer on the NPU, the bytes of its DDR buffer
  (`plan-ddr`'s offset above the weights region, its stored channels when channel
  alignment padded them), taken right after each command of that layer (commands carry
  their layer's location) that writes them, so a buffer that a later layer reuses is
  read before it is overwritten; for a layer on the host, the value the host function
  computes (the simulator's interpreter is listened to). A layer in a zero-copy
  concat's slice has no buffer of its own: its concat is compared; a layer inside a
  cascade (irc/tiling/cascade.py) lives a few rows at a time in a rolling buffer in
  SRAM: the cascade's output is compared (compile with -O1 to compare every layer).

Per layer: float against int8 (the cosine similarity of the dequantized reference and
the float value, the largest error in quantization steps of the layer's scale), int8
against npu (the share of elements that are equal and the largest difference in
integer steps). The first layer in program order whose simulated output differs from
the reference is where the NPU and the CPU part; later layers inherit its error. The
layer where int8 and float part most is the one whose cosine falls furthest below the
lowest cosine of its inputs (its own quantization loss, not the one it inherits).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.interpreter import Interpreter, PythonValues
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue

from irc.diagnostics import Location, collect_diagnostics, error
from irc.ir.placement import CPU, DEVICE_ATTR
from irc.sim.machine import Program

if TYPE_CHECKING:
    from irc.dialects.quant import UniformQuantizedType
    from irc.driver.pipeline import CompileOptions
    from irc.stream.scoreboard import View
    from irc.targets import Target

LAYERS_DIR = "layers"
"""The subdirectory of `irc-run --compare --output-dir` that holds the layer dumps."""


# --------------------------------------------------------------------------------------
# The levels of a compile


@dataclass
class CompiledLevels:
    """A model compiled in memory, with the levels the comparison runs."""

    float_module: ModuleOp | None
    """As `quantize` receives it (after graph-opt); None for a model that is integer
    already (a TFLite import), which has no float level."""
    planned: ModuleOp
    """The integer module after `plan-ddr`: the reference, with the DDR plan."""
    stream: ModuleOp
    """The command stream (what the package holds)."""
    target: Target
    files: dict[str, bytes]
    """The package's files, as `irc-compile` would write them."""
    warnings: list[str] = field(default_factory=list)


def compile_levels(
    path: Path,
    options: CompileOptions,
    check: Callable[[ModuleOp], None] | None = None,
) -> CompiledLevels:
    """Run `irc-compile`'s pipeline on the float model at `path` in memory, keeping the
    float module before `quantize` and the integer one after `plan-ddr`. `check` sees
    the imported module first (and may raise). An integer model (a TFLite file) has no
    float level: its float module is None."""
    from irc.codegen.package import package_files
    from irc.diagnostics import Severity
    from irc.driver.pipeline import check_options, package_info, with_model
    from irc.importers.load import load_module
    from irc.ir.context import make_context
    from irc.passes import parse_pipeline
    from irc.resources import fewer_collections
    from irc.targets import load_target

    check_options(options)
    options = with_model(options, path)
    if not options.quantized and not options.prequantized:
        raise error(
            "the layer comparison needs an int8 compile: with --quantize none there is no "
            "integer reference",
            Location(file="irc-run"),
            hint="compile with --quantize int8 (the default)",
        )
    target = load_target(options.target)
    float_module: ModuleOp | None = None
    planned: ModuleOp | None = None
    with fewer_collections(), collect_diagnostics() as diagnostics:
        module = load_module("irc-run", path, dict(options.input_shapes))
        if not options.prequantized:
            _require_float(module, path)
        if check is not None:
            check(module)
        for module_pass in parse_pipeline(options.pipeline(), require_anchor=True):
            if module_pass.name == "quantize":
                float_module = module.clone()
            run = getattr(module_pass, "run", None)
            if run is not None:
                run(module)
            else:
                module_pass.apply(make_context(), module)
            if module_pass.name == "plan-ddr":
                planned = module.clone()
        files = package_files(module, target, package_info(path, module, options))
    assert planned is not None, "the pipeline plans DDR"
    assert float_module is not None or options.prequantized, "the int8 pipeline quantizes"
    warnings = [d.message for d in diagnostics if d.severity == Severity.WARNING]
    return CompiledLevels(float_module, planned, module, target, files, warnings)


LOWERED_DIALECTS = ("quant.", "qnn.", "part.", "tile.", "npu.")


def _require_float(module: ModuleOp, path: Path) -> None:
    """The comparison starts from the float model: refuse a module already lowered."""
    for op in module.walk():
        if op.name.startswith(LOWERED_DIALECTS):
            raise error(
                f"'{path}' is not a float model: it holds {op.name}, so there is no float "
                "level to compare",
                op,
                hint="give the float model (.onnx or nn-level .mlir); for a package: "
                "irc-run DIR --compare --float-model MODEL.onnx",
            )


# --------------------------------------------------------------------------------------
# The layers and where each level keeps them


def _layer_key(location: Location) -> str | None:
    """A location as commands and ops share it: the ONNX name, else the position."""
    if location.name:
        return location.name
    if location.line is not None:
        return f"{location.file}:{location.line}:{location.col}"
    return None


def _display_name(key: str) -> str:
    return key.removesuffix("#0")


@dataclass
class _Layer:
    """A layer to compare: its quantized value in the planned module and where the
    simulator keeps it."""

    key: str
    value: SSAValue
    element: UniformQuantizedType
    op: str
    shape: tuple[int, ...]
    dtype: np.dtype
    on_host: bool
    owners: frozenset[str] = frozenset()
    """The layer names of the commands that write its buffer."""
    memory: str = ""
    """The system memory of its buffer."""
    address: int = -1
    """Its address there in the stream (-1: not in a buffer of its own)."""
    stored_shape: tuple[int, ...] = ()
    image: np.ndarray | None = None
    """The bytes of its buffer as its own commands left them."""
    host_value: np.ndarray | None = None


def _in_cascade(op: Operation) -> bool:
    """The op (or the MAC layer a requantize finishes) is a member of a cascade, whose
    output lives in a rolling buffer in SRAM, a few rows at a time."""
    from irc import backend
    from irc.tiling.cascade import CASCADE_ATTR

    producer = backend.fused_with(op) or op
    return CASCADE_ATTR in producer.attributes


def _layers(planned: ModuleOp, stream_main: FuncOp, target: Target) -> list[_Layer]:
    """Every layer of the planned module's `@main`, in program order."""
    from irc import backend
    from irc.codegen.package import entry_function
    from irc.dialects import npu
    from irc.ir.weights import dtype_of
    from irc.quantize.report import quantized_tensors
    from irc.tiling.planner import stored_channels

    function = entry_function(planned)
    plan, index_of = backend.plan_memory(function, target)
    weights_memory, weights_bytes = npu.weights_region(stream_main)
    value_of = {index: value for value, index in index_of.items()}
    # The values that live in a slice of another's buffer (a zero-copy concat's
    # inputs), by that buffer: their commands write it too.
    slices: dict[int, list[SSAValue]] = {}
    for index, record in enumerate(plan.values):
        if record.role == "slice" and record.parent is not None and index in value_of:
            slices.setdefault(record.parent, []).append(value_of[index])
    layers: list[_Layer] = []
    for tensor in quantized_tensors(function):
        value = tensor.value
        if tensor.is_weight or not isinstance(value, OpResult) or value not in index_of:
            continue
        record = plan.values[index_of[value]]
        if record.role in ("view", "weight", "argument"):
            continue
        if record.role == "fused" and not _in_cascade(value.op):
            continue  # a MAC layer's accumulator, which never leaves SRAM
        op = value.op
        device = op.attributes.get(DEVICE_ATTR)
        on_host = getattr(device, "data", None) == CPU
        shape = tuple(value.type.get_shape())
        layer = _Layer(
            tensor.key,
            value,
            tensor.element,
            op.name,
            shape,
            np.dtype(dtype_of(tensor.element.storage_type)),
            on_host,
        )
        if not on_host and record.role in ("own", "in-place") and record.offset >= 0:
            writers = [op] + [
                part.op for part in slices.get(index_of[value], []) if isinstance(part, OpResult)
            ]
            owners: set[str | None] = set()
            for writer in writers:
                owners.add(_layer_key(Location.of(writer)))
                # A requantize runs as its MAC layer's output stage, with its commands.
                producer = backend.fused_with(writer)
                if producer is not None:
                    owners.add(_layer_key(Location.of(producer)))
            layer.owners = frozenset(name for name in owners if name is not None)
            layer.memory = record.memory
            arena = weights_bytes if record.memory == weights_memory else 0
            layer.address = arena + record.offset
            stored = stored_channels(value)
            layer.stored_shape = (*shape[:-1], stored) if stored else shape
            layer.image = np.zeros(math.prod(layer.stored_shape) * layer.dtype.itemsize, np.uint8)
        layers.append(layer)
    return layers


class _CapturingProgram(Program):
    """The simulator's `Program`, with a step after each command that writes a layer's
    buffer: it copies the bytes the command wrote into the layer's image."""

    def __init__(
        self, function: FuncOp, target: Target, interpreter: Interpreter, layers: list[_Layer]
    ) -> None:
        self.tracked = [layer for layer in layers if layer.image is not None]
        self.pending: Callable[[], None] | None = None
        super().__init__(function, target, interpreter)
        self._flush()

    def _flush(self) -> None:
        if self.pending is not None:
            self.steps.append(self.pending)
            self.pending = None

    def _command(
        self, op: Operation, reads: Sequence[View], writes: Sequence[View], *args, **kwargs
    ) -> None:
        # Called as each command loads, before its own step is appended: the capture
        # of the previous command goes after that command's step.
        self._flush()
        super()._command(op, reads, writes, *args, **kwargs)  # type: ignore[arg-type]
        name = _layer_key(Location.of(op))
        captures: list[tuple[np.ndarray, np.ndarray, int, int, int]] = []
        for view in writes:
            low, high = view.address, view.address + view.extent
            for layer in self.tracked:
                assert layer.image is not None
                start, end = layer.address, layer.address + layer.image.size
                if (
                    name in layer.owners
                    and view.space == layer.memory
                    and low < end
                    and start < high
                ):
                    first, last = max(low, start), min(high, end)
                    memory = self.machine.memories[view.space]
                    captures.append((memory, layer.image, first - start, first, last))
        if captures:
            self.pending = functools.partial(_capture, captures)


def _capture(captures: list[tuple[np.ndarray, np.ndarray, int, int, int]]) -> None:
    for memory, image, at, first, last in captures:
        image[at : at + last - first] = memory[first:last]


class _HostListener(Interpreter.Listener):
    """Keeps what the host functions compute for the layers that run on the host."""

    def __init__(self, layers: list[_Layer]) -> None:
        self.by_signature: dict[tuple, _Layer] = {}
        for layer in layers:
            if layer.on_host:
                self.by_signature[_signature(layer.value)] = layer

    def did_interpret_op(self, op: Operation, results: PythonValues) -> None:
        for result, array in zip(op.results, results):
            layer = self.by_signature.get(_signature(result))
            if layer is not None:
                layer.host_value = np.asarray(array).copy()


def _signature(value: SSAValue) -> tuple:
    """What an op of a host function shares with the op of `@main` it was outlined
    from: name, location, result index and type."""
    assert isinstance(value, OpResult)
    return (value.op.name, str(Location.of(value.op)), value.index, str(value.type))


# --------------------------------------------------------------------------------------
# Comparing


@dataclass
class LayerDiff:
    """One layer at the three levels."""

    name: str
    op: str
    shape: tuple[int, ...]
    device: str
    """Where it runs: npu or host."""
    cosine: float | None
    """Float against the dequantized reference (None: no float counterpart)."""
    max_steps: float | None
    """The largest |float - reference| in quantization steps of the layer."""
    exact: float | None
    """The share of the simulator's elements equal to the reference's (None: the
    simulator keeps no buffer of its own for the layer)."""
    max_difference: int | None
    """The largest |simulator - reference| in integer steps."""
    input_cosine: float = 1.0
    """The lowest cosine of the layers it reads (1: it reads none)."""
    arrays: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    """By level (float, int8, npu): the layer's output."""

    @property
    def matches(self) -> bool:
        """The simulator equals the reference (or keeps nothing to compare)."""
        return self.max_difference in (None, 0)


@dataclass
class Comparison:
    """Every layer of a model at the three levels, in program order."""

    layers: list[LayerDiff]
    not_compared: list[str] = field(default_factory=list)
    """Layers the simulator keeps no buffer of its own for (in a concat's slice)."""

    @property
    def matches(self) -> bool:
        """The simulator matches the integer reference bit-exactly on every layer."""
        return all(layer.matches for layer in self.layers)

    def first_difference(self) -> LayerDiff | None:
        """The first layer, in program order, whose simulated output differs."""
        return next((layer for layer in self.layers if not layer.matches), None)

    def widest_gap(self) -> LayerDiff | None:
        """The layer whose cosine falls furthest below its inputs' (first of equals)."""
        scored = [layer for layer in self.layers if layer.cosine is not None]
        if not scored:
            return None
        return max(scored, key=lambda layer: layer.input_cosine - (layer.cosine or 0.0))

    def format_text(self) -> str:
        """The table, then the verdicts."""
        header = (
            f"{'layer':36} {'op':16} {'shape':16} {'on':4} {'cosine':>8} {'steps':>7} "
            f"{'exact':>8} {'max diff':>8}"
        )
        lines = [
            f"layer diff: {len(self.layers)} layers; float vs int8 reference (cosine, "
            "largest error in quantization steps), int8 reference vs simulator (share "
            "of exact elements, largest difference)",
            header,
        ]
        for layer in self.layers:
            cosine = "-" if layer.cosine is None else f"{layer.cosine:.5f}"
            steps = "-" if layer.max_steps is None else f"{layer.max_steps:.1f}"
            exact = "-" if layer.exact is None else f"{layer.exact:.2%}"
            difference = "-" if layer.max_difference is None else str(layer.max_difference)
            mark = " " if layer.matches else "*"
            shape = "x".join(map(str, layer.shape))
            lines.append(
                f"{_shorten(layer.name, 36):36} {layer.op[:16]:16} {shape[:16]:16} "
                f"{layer.device:4} {cosine:>8} {steps:>7} {exact:>8} {difference:>7}{mark}"
            )
        first = self.first_difference()
        if first is None:
            compared = len(self.layers) - len(self.not_compared)
            lines.append(
                f"the simulator matches the integer reference bit-exactly on all "
                f"{compared} layers it keeps in memory"
                + (f" ({len(self.layers)} in all)" if self.not_compared else "")
            )
        else:
            count = sum(not layer.matches for layer in self.layers)
            lines.append(
                f"first layer where the simulator differs from the integer reference: "
                f"{first.name} ({first.op} on the {first.device}): {first.exact:.2%} exact, "
                f"max difference {first.max_difference} ({count} layer"
                f"{'s' if count != 1 else ''} differ)"
            )
        gap = self.widest_gap()
        if gap is not None and gap.cosine is not None:
            lines.append(
                f"int8 and float part most at {gap.name} ({gap.op}): cosine falls from "
                f"{gap.input_cosine:.5f} to {gap.cosine:.5f}"
            )
        if self.not_compared:
            lines.append(
                f"not compared on the simulator (in a concat's buffer, or in a cascade's "
                f"rolling buffer in SRAM: compile with -O1 to see them): "
                f"{', '.join(self.not_compared)}"
            )
        return "\n".join(lines)


def _shorten(name: str, limit: int) -> str:
    return name if len(name) <= limit else "…" + name[-(limit - 1) :]


class _Collector(Interpreter.Listener):
    def __init__(self, wanted: set[SSAValue]) -> None:
        self.wanted = wanted
        self.found: dict[SSAValue, np.ndarray] = {}

    def did_interpret_op(self, op: Operation, results: PythonValues) -> None:
        for result, array in zip(op.results, results):
            if result in self.wanted:
                self.found[result] = np.asarray(array)


def _run_collecting(
    module: ModuleOp, inputs: Mapping[str, np.ndarray], wanted: set[SSAValue]
) -> dict[SSAValue, np.ndarray]:
    from irc.codegen.package import entry_function
    from irc.interp import function_signature
    from irc.quantize.calibration import bind_sample, run_with_listener

    function = entry_function(module)
    arguments = bind_sample(inputs, function_signature(module)[0])
    collector = _Collector(wanted)
    block = function.body.blocks.first
    assert block is not None
    for argument, array in zip(block.args, arguments):
        if argument in wanted:
            collector.found[argument] = np.asarray(array)
    run_with_listener(module, function, arguments, collector)
    return collector.found


def _float_by_key(function: FuncOp) -> dict[str, SSAValue]:
    """The float function's values by key; the last of several with one key."""
    from irc.quantize.calibration import value_key

    by_key: dict[str, SSAValue] = {}
    block = function.body.blocks.first
    assert block is not None
    candidates: list[SSAValue] = list(block.args)
    for op in function.walk():
        if op is not function:
            candidates.extend(op.results)
    for value in candidates:
        key = value_key(value)
        if key is not None:
            by_key[key] = value
    return by_key


def _steps(error: np.ndarray, element: UniformQuantizedType) -> float:
    """The largest of `error` (real values) in quantization steps."""
    if error.size == 0:
        return 0.0
    scales = np.asarray(element.scale_values, dtype=np.float64)
    axis = element.quantized_axis
    if axis is not None:
        shape = [1] * error.ndim
        shape[axis] = scales.size
        scales = scales.reshape(shape)
    return float(np.max(np.abs(error) / scales))


def _cosine(x: np.ndarray, y: np.ndarray) -> float:
    """Cosine similarity; two zero vectors are equal (1), one zero vector is not (0)."""
    norms = math.sqrt(float(x @ x)) * math.sqrt(float(y @ y))
    if norms == 0:
        return 1.0 if np.array_equal(x, y) else 0.0
    return float(x @ y) / norms


def compare_layers(levels: CompiledLevels, inputs: Mapping[str, np.ndarray]) -> Comparison:
    """Run the float module, the integer reference and the simulator on `inputs` and
    compare every layer (see the module docstring)."""
    from irc.codegen.package import entry_function
    from irc.interp import make_interpreter
    from irc.interp.quant import dequantize
    from irc.sim.machine import NpuFunctions
    from irc.sim.run import run_function
    from irc.targets import using_target

    stream_main = entry_function(levels.stream)
    layers = _layers(levels.planned, stream_main, levels.target)

    # The simulator: the stream loaded with the captures, its interpreter listened to.
    interpreter = make_interpreter(levels.stream)
    listener = _HostListener(layers)
    interpreter.listeners = (*interpreter.listeners, listener)
    functions = NpuFunctions()
    with using_target(levels.target):
        functions.program = _CapturingProgram(stream_main, levels.target, interpreter, layers)
        with np.errstate(all="ignore"):
            run_function(levels.stream, inputs, "main", functions)

    reference = _run_collecting(levels.planned, inputs, {layer.value for layer in layers})
    float_values: dict[str, SSAValue] = {}
    floats: dict[SSAValue, np.ndarray] = {}
    if levels.float_module is not None:
        float_values = _float_by_key(entry_function(levels.float_module))
        wanted = {float_values[layer.key] for layer in layers if layer.key in float_values}
        floats = _run_collecting(levels.float_module, inputs, wanted)

    diffs: list[LayerDiff] = []
    by_value: dict[SSAValue, LayerDiff] = {}
    not_compared: list[str] = []
    for layer in layers:
        stored = np.asarray(reference[layer.value])
        real = dequantize(stored, layer.element).astype(np.float64)
        arrays = {"int8": stored}
        cosine = max_steps = None
        counterpart = float_values.get(layer.key)
        if counterpart is not None and counterpart in floats:
            float_array = np.asarray(floats[counterpart])
            if float_array.shape == stored.shape:
                arrays["float"] = float_array
                x = float_array.astype(np.float64)
                finite = np.isfinite(x) & np.isfinite(real)
                cosine = _cosine(x[finite].reshape(-1), real[finite].reshape(-1))
                max_steps = _steps(np.where(finite, x - real, 0.0), layer.element)
        simulated: np.ndarray | None = None
        if layer.on_host:
            simulated = layer.host_value
        elif layer.image is not None:
            full = np.frombuffer(layer.image.tobytes(), layer.dtype).reshape(layer.stored_shape)
            simulated = full[..., : layer.shape[-1]] if layer.shape else full
        exact = difference = None
        if simulated is not None and simulated.shape == stored.shape:
            arrays["npu"] = simulated
            delta = np.abs(simulated.astype(np.int64) - stored.astype(np.int64))
            exact = float(np.mean(delta == 0)) if delta.size else 1.0
            difference = int(delta.max()) if delta.size else 0
        elif simulated is None:
            not_compared.append(_display_name(layer.key))
        diff = LayerDiff(
            _display_name(layer.key),
            layer.op,
            layer.shape,
            "host" if layer.on_host else "npu",
            cosine,
            max_steps,
            exact,
            difference,
            arrays=arrays,
        )
        diff.input_cosine = _input_cosine(layer.value, by_value)
        by_value[layer.value] = diff
        diffs.append(diff)
    return Comparison(diffs, not_compared)


def _input_cosine(value: SSAValue, compared: Mapping[SSAValue, LayerDiff]) -> float:
    """The lowest cosine of the layers `value`'s op reads, through views, casts and
    the MAC layer a requantize finishes."""
    lowest = 1.0
    assert isinstance(value, OpResult)
    pending = list(value.op.operands)
    seen: set[SSAValue] = set()
    while pending:
        operand = pending.pop()
        if operand in seen or isinstance(operand, BlockArgument):
            continue
        seen.add(operand)
        diff = compared.get(operand)
        if diff is not None:
            if diff.cosine is not None:
                lowest = min(lowest, diff.cosine)
            continue
        assert isinstance(operand, OpResult)
        if not operand.op.results or len(operand.op.results) != 1:
            continue
        pending.extend(inner for inner in operand.op.operands if not _is_constant_value(inner))
    return lowest


def _is_constant_value(value: SSAValue) -> bool:
    from xdsl.traits import ConstantLike

    return isinstance(value, OpResult) and value.op.has_trait(ConstantLike)


def dump_file_name(index: int, name: str, level: str) -> str:
    """The `.npy` file of a layer at one level: program order first, then the name."""
    return f"{index:03d}_{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}.{level}.npy"
