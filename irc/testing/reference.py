"""Seeded inputs for the graph inputs of an ONNX model, to run it and its import on.

model = materialize_light_model(path, seed=0)
inputs = random_inputs(model, seed=1)
expected = run_onnxruntime(model, inputs)  # irc.importers.reference
report = compare(actual, expected, rtol=1e-4, atol=1e-5)  # irc.numerics
print(report.format())
assert report.ok
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from irc.diagnostics import Location, error

if TYPE_CHECKING:
    import onnx

INDEX_INPUT_BOUND = 2
"""Integer inputs that index nothing irc can see are drawn from [0, this bound)."""


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
