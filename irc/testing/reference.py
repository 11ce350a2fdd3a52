"""onnxruntime as the reference, seeded inputs, and numeric comparison of outputs.

model = materialize_light_model(path, seed=0)
inputs = random_inputs(model, seed=1)
expected = run_onnxruntime(model, inputs)
report = compare(actual, expected, rtol=1e-4, atol=1e-5)
print(report.format())
assert report.ok
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from irc.diagnostics import Location, error

if TYPE_CHECKING:
    import onnx

ONNXRUNTIME_MIN_OPSET = 7
"""The oldest opset onnxruntime still implements; older models are converted."""

INDEX_INPUT_BOUND = 2
"""Integer inputs that index nothing irc can see are drawn from [0, this bound)."""


def run_onnxruntime(
    model: onnx.ModelProto | Path, inputs: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Run `model` in onnxruntime on the CPU; returns every graph output by name.

    A model older than opset 7 (most pytorch-converted cases are opset 6) is first
    converted by `for_onnxruntime`, since onnxruntime no longer implements those ops.
    """
    import onnx
    import onnxruntime

    options = onnxruntime.SessionOptions()
    # Graph optimizations are disabled so that each ONNX node runs as written, with its
    # own kernel. Even the "basic" level folds BatchNormalization into Conv weights and
    # fuses Conv + Add/Mul, which changes float rounding; a reference must rather be
    # the plain reading of the graph that irc's interpreter is compared with.
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 2
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # errors only: no warnings about unused initializers
    if isinstance(model, Path) and _default_opset(onnx.load(str(model))) < ONNXRUNTIME_MIN_OPSET:
        model = onnx.load(str(model))
    if isinstance(model, onnx.ModelProto) and _default_opset(model) < ONNXRUNTIME_MIN_OPSET:
        model = for_onnxruntime(model)
    source = str(model) if isinstance(model, Path) else model.SerializeToString()
    from onnxruntime.capi import onnxruntime_pybind11_state as ort_errors

    # A model or inputs that onnxruntime rejects are the user's to fix, not irc bugs.
    rejected = (
        ValueError,
        *(
            getattr(ort_errors, name)
            for name in (
                "Fail",
                "InvalidArgument",
                "InvalidGraph",
                "InvalidProtobuf",
                "NotImplemented",
                "RuntimeException",
            )
        ),
    )
    try:
        session = onnxruntime.InferenceSession(
            source, sess_options=options, providers=["CPUExecutionProvider"]
        )
        names = [output.name for output in session.get_outputs()]
        results = session.run(names, dict(inputs))
    except rejected as failure:
        where = Location(file=str(model)) if isinstance(model, Path) else None
        first_line = (
            str(failure).strip().splitlines()[0] if str(failure).strip() else type(failure).__name__
        )
        raise error(
            f"onnxruntime cannot run the reference model: {first_line}",
            where,
            hint="check that the model is valid (onnx.checker) and that the inputs match its graph inputs",
        ) from None
    return {name: np.asarray(value) for name, value in zip(names, results, strict=True)}


def _default_opset(model: onnx.ModelProto) -> int:
    return next((op.version for op in model.opset_import if op.domain in ("", "ai.onnx")), 1)


def for_onnxruntime(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of a model older than opset 7 converted to opset 7 for onnxruntime.

    onnx's version converter does the work. It misses one change: before opset 7 a
    PRelu slope of shape (C) applied per channel (axis 1); from opset 7 it broadcasts
    like numpy, against the last axis. Such slopes are reshaped to (C, 1, ..., 1) first.
    """
    import onnx
    from onnx import helper, numpy_helper, shape_inference, version_converter

    upgraded = onnx.ModelProto()
    upgraded.CopyFrom(model)
    graph = upgraded.graph
    inferred = shape_inference.infer_shapes(upgraded)
    ranks = {
        value.name: len(value.type.tensor_type.shape.dim)
        for value in [*inferred.graph.input, *inferred.graph.value_info]
        if value.type.tensor_type.HasField("shape")
    }
    initializers = {tensor.name: tensor for tensor in graph.initializer}
    for node in graph.node:
        if node.op_type != "PRelu" or node.input[1] not in initializers:
            continue
        slope = numpy_helper.to_array(initializers[node.input[1]])
        rank = ranks.get(node.input[0], 0)
        if slope.ndim == 1 and slope.size > 1 and rank > 2:
            name = f"{node.input[1]}_per_channel"
            per_channel = slope.reshape((slope.size,) + (1,) * (rank - 2))
            graph.initializer.append(numpy_helper.from_array(per_channel, name))
            if any(value.name == node.input[1] for value in graph.input):
                # Before IR version 4, every initializer is also a graph input.
                element_type = initializers[node.input[1]].data_type
                graph.input.append(
                    helper.make_tensor_value_info(name, element_type, per_channel.shape)
                )
            node.input[1] = name
    return version_converter.convert_version(upgraded, ONNXRUNTIME_MIN_OPSET)


# --------------------------------------------------------------------------------------
# Inputs


def random_inputs(
    model: onnx.ModelProto,
    seed: int,
    shapes: Mapping[str, Sequence[int]] | None = None,
) -> dict[str, np.ndarray]:
    """Seeded values for every graph input of `model` that is not an initializer.

    Floats are standard normal. Integers are valid indices: when the input is the
    `indices` of a Gather whose data has a known shape, they lie in range for the
    gathered axis, otherwise in [0, INDEX_INPUT_BOUND). Booleans are fair coin flips.
    `shapes` gives the shape of inputs whose shape in the model is not static.
    """
    from onnx import helper

    graph = model.graph
    initializers = {tensor.name for tensor in graph.initializer}
    bounds = _index_bounds(model)
    rng = np.random.default_rng(seed)
    values: dict[str, np.ndarray] = {}
    for value_info in graph.input:
        if value_info.name in initializers:
            continue
        tensor_type = value_info.type.tensor_type
        shape = _static_shape(value_info, shapes)
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(tensor_type.elem_type))
        if dtype.kind == "f":
            values[value_info.name] = rng.standard_normal(shape).astype(dtype)
        elif dtype.kind in "iu":
            bound = bounds.get(value_info.name, INDEX_INPUT_BOUND)
            values[value_info.name] = rng.integers(0, bound, size=shape).astype(dtype)
        elif dtype == np.bool_:
            values[value_info.name] = rng.integers(0, 2, size=shape).astype(np.bool_)
        else:
            raise error(
                f"cannot make random values of type {dtype} for input '{value_info.name}'",
                Location(name=value_info.name),
                hint="pass this input's values with --input NAME=file.npy",
            )
    return values


def _static_shape(
    value_info: onnx.ValueInfoProto, shapes: Mapping[str, Sequence[int]] | None
) -> tuple[int, ...]:
    if shapes and value_info.name in shapes:
        return tuple(int(dim) for dim in shapes[value_info.name])
    tensor_type = value_info.type.tensor_type
    dims = tensor_type.shape.dim
    if not tensor_type.HasField("shape") or not all(dim.HasField("dim_value") for dim in dims):
        written = "x".join(
            str(dim.dim_value) if dim.HasField("dim_value") else dim.dim_param or "?"
            for dim in dims
        )
        if not tensor_type.HasField("shape"):
            written = "unknown rank"
        raise error(
            f"input '{value_info.name}' has a dynamic shape ({written})",
            Location(name=value_info.name),
            hint=f"give its shape, e.g. --input-shape {value_info.name}=1x3x224x224",
        )
    return tuple(dim.dim_value for dim in dims)


def _index_bounds(model: onnx.ModelProto) -> dict[str, int]:
    """For inputs used as Gather indices: the size of the axis they index."""
    from onnx import numpy_helper

    graph = model.graph
    shapes: dict[str, tuple[int, ...]] = {
        tensor.name: tuple(tensor.dims) for tensor in graph.initializer
    }
    for value_info in [*graph.input, *graph.value_info]:
        dims = value_info.type.tensor_type.shape.dim
        if dims and all(dim.HasField("dim_value") for dim in dims):
            shapes.setdefault(value_info.name, tuple(dim.dim_value for dim in dims))
    for node in graph.node:
        if node.op_type == "Constant":
            for attribute in node.attribute:
                if attribute.name == "value":
                    shapes[node.output[0]] = numpy_helper.to_array(attribute.t).shape
    bounds: dict[str, int] = {}
    for node in graph.node:
        if node.op_type != "Gather" or len(node.input) < 2 or node.input[0] not in shapes:
            continue
        data_shape = shapes[node.input[0]]
        axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
        size = data_shape[axis]
        bounds[node.input[1]] = min(size, bounds.get(node.input[1], size))
    return bounds


# --------------------------------------------------------------------------------------
# Comparison


@dataclass
class OutputComparison:
    """How one output compares with its reference.

    `max_abs_error` is max |actual - expected|; `max_rel_error` is the largest
    |actual - expected| / |expected| over elements whose expected value is non-zero.
    An element passes when |actual - expected| <= atol + rtol * |expected| (numpy's
    `allclose`); `mismatched` counts those that do not. `problem` explains a failure
    that is not numeric (a missing output, a shape or dtype mismatch, NaNs).
    """

    name: str
    shape: tuple[int, ...]
    max_abs_error: float = 0.0
    max_rel_error: float = 0.0
    mismatched: int = 0
    problem: str | None = None

    @property
    def ok(self) -> bool:
        """True when every element is within tolerance and nothing else is wrong."""
        return self.problem is None and self.mismatched == 0


@dataclass
class ComparisonReport:
    """The comparison of every expected output; `ok` when all of them pass."""

    rtol: float
    atol: float
    outputs: list[OutputComparison] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every output passed."""
        return all(output.ok for output in self.outputs)

    def format(self) -> str:
        """A table with one line per output: errors, mismatches and the verdict."""
        lines = [f"compared with rtol={self.rtol:g}, atol={self.atol:g}:"]
        width = max((len(output.name) for output in self.outputs), default=4)
        for output in self.outputs:
            verdict = "ok" if output.ok else "FAIL"
            shape = "x".join(str(d) for d in output.shape) or "scalar"
            if output.problem is not None:
                lines.append(f"  {output.name:<{width}}  {verdict}: {output.problem}")
                continue
            lines.append(
                f"  {output.name:<{width}}  {shape:>14}  max abs {output.max_abs_error:.3e}"
                f"  max rel {output.max_rel_error:.3e}  mismatched {output.mismatched}  {verdict}"
            )
        lines.append("PASS" if self.ok else "FAIL")
        return "\n".join(lines)


def compare(
    actual: Mapping[str, np.ndarray],
    expected: Mapping[str, np.ndarray],
    rtol: float = 1e-4,
    atol: float = 1e-5,
) -> ComparisonReport:
    """Compare every output in `expected` with the one of the same name in `actual`.

    Integer and boolean outputs must match exactly (their tolerance is still applied,
    so keep atol < 1 to compare them exactly). NaNs must be at the same places.
    """
    report = ComparisonReport(rtol=rtol, atol=atol)
    for name, reference in expected.items():
        reference = np.asarray(reference)
        comparison = OutputComparison(name, tuple(reference.shape))
        report.outputs.append(comparison)
        if name not in actual:
            comparison.problem = "missing from the results"
            continue
        value = np.asarray(actual[name])
        if value.shape != reference.shape:
            comparison.problem = (
                f"shape {list(value.shape)} differs from the expected {list(reference.shape)}"
            )
            continue
        if value.dtype != reference.dtype:
            comparison.problem = f"dtype {value.dtype} differs from the expected {reference.dtype}"
            continue
        _measure(comparison, value, reference, rtol, atol)
    return report


def _measure(
    comparison: OutputComparison, value: np.ndarray, reference: np.ndarray, rtol: float, atol: float
) -> None:
    value64 = value.astype(np.float64)
    reference64 = reference.astype(np.float64)
    value_nan, reference_nan = np.isnan(value64), np.isnan(reference64)
    if np.any(value_nan != reference_nan):
        count = int(np.count_nonzero(value_nan != reference_nan))
        comparison.problem = f"NaN at {count} positions where the other side has a number"
        return
    both = ~value_nan
    # Equal infinities compare as equal; inf - inf would give NaN.
    same = (value64 == reference64) | ~both
    with np.errstate(invalid="ignore"):  # inf - inf, masked out by `same`
        difference = np.where(same, 0.0, np.abs(value64 - reference64))
    magnitude = np.abs(reference64)
    if difference.size:
        comparison.max_abs_error = float(difference.max())
        nonzero = (magnitude > 0) & np.isfinite(magnitude)
        if np.any(nonzero):
            comparison.max_rel_error = float((difference[nonzero] / magnitude[nonzero]).max())
        elif comparison.max_abs_error > 0:
            comparison.max_rel_error = float("inf")
    with np.errstate(invalid="ignore"):
        within = difference <= atol + rtol * np.where(np.isinf(magnitude), 0.0, magnitude)
    within |= value_nan  # NaNs on both sides, as checked above
    comparison.mismatched = int(np.count_nonzero(~within))
