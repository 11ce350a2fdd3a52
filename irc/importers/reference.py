"""onnxruntime as the reference implementation of an ONNX model.

`run_onnxruntime(model, inputs)` runs a model as written, each node with its own
kernel (graph optimisations off), on the CPU; `irc-run --compare-onnxruntime`, the
tests and the fuzzer compare irc's outputs with it (`irc.numerics.compare`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from irc.diagnostics import Location, error

if TYPE_CHECKING:
    import onnx

ONNXRUNTIME_MIN_OPSET = 7
"""The oldest opset onnxruntime still implements; older models are converted."""

LARGE_MODEL_BYTES = 64 * 2**20
"""A model proto above this size reaches onnxruntime through a file with its weights
as external data (see `session_source`), not as one serialized string."""


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
    options.add_session_config_entry("session.disable_prepacking", "1")
    if isinstance(model, Path) and _default_opset(onnx.load(str(model))) < ONNXRUNTIME_MIN_OPSET:
        model = onnx.load(str(model))
    if isinstance(model, onnx.ModelProto) and _default_opset(model) < ONNXRUNTIME_MIN_OPSET:
        model = for_onnxruntime(model)
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
        with session_source(model) as source:
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


@contextmanager
def session_source(model: onnx.ModelProto | Path) -> Iterator[str | bytes]:
    """What onnxruntime's session is made from: the path of a model file, the bytes
    of a small proto, or for a proto above LARGE_MODEL_BYTES a temporary file whose
    large initializers are external data, written from the proto without another
    copy of them (`with_bulk_replaced`): serializing VGG-19's 548 MB would hold its
    weights a third time, and a proto of 2 GB cannot be serialized at all.
    """
    from irc.importers.onnx import model_data_bytes

    if isinstance(model, Path):
        yield str(model)
        return
    if model_data_bytes(model) <= LARGE_MODEL_BYTES:
        yield model.SerializeToString()
        return
    with tempfile.TemporaryDirectory(prefix="irc-onnxruntime-") as directory:
        skeleton = with_external_weights(model, Path(directory) / "weights")
        path = Path(directory) / "model.onnx"
        path.write_bytes(skeleton.SerializeToString())
        yield str(path)


def with_external_weights(model: onnx.ModelProto, weights: Path) -> onnx.ModelProto:
    """A copy of `model` whose large inline initializers are written to the file
    `weights` and referenced as its external data (`with_bulk_replaced`: without
    another copy of them); a model file saved next to `weights` loads whole."""
    from onnx import TensorProto

    from irc.importers.onnx import with_bulk_replaced

    with weights.open("wb") as file:

        def external(tensor: onnx.TensorProto) -> onnx.TensorProto:
            reference = TensorProto(name=tensor.name, data_type=tensor.data_type)
            reference.dims.extend(tensor.dims)
            offset = file.tell()
            length = file.write(tensor.raw_data)
            for key, value in (("location", weights.name), ("offset", offset), ("length", length)):
                entry = reference.external_data.add()
                entry.key, entry.value = key, str(value)
            reference.data_location = TensorProto.EXTERNAL
            return reference

        return with_bulk_replaced(model, external)


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
