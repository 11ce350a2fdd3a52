"""Data movement and reductions on the NPU (issue 20): depth_to_space, nearest resizes
(DMA by whole factors, a gather of whole planes otherwise), global max pools over images larger than a max pool's window, and
reduce_mean / reduce_sum / reduce_max over adjacent axes, in small ONNX models
compiled for edge-2tops (whose support table lists them all) with the default
partition. Every op runs on the NPU, and the simulated package is bit for bit the
integer reference (the `qnn` module in the interpreter)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from test_compile_placement import assert_bit_exact, compiled

from irc.driver.report import layers_csv


def _model(path: Path, nodes: list, inputs: list, outputs: list, constants: dict) -> Path:
    initializers = [numpy_helper.from_array(value, name) for name, value in constants.items()]
    graph = helper.make_graph(nodes, path.stem, inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, str(path))
    return path


def _value(name: str, shape: list[int]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def _weights(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return (rng.standard_normal(shape) * 0.3).astype(np.float32)


def _conv(name: str, source: str, weight: str) -> onnx.NodeProto:
    return helper.make_node("Conv", [source, weight], [name], pads=[1, 1, 1, 1], name=name)


def depth_to_space_model(directory: Path, mode: str) -> Path:
    """conv (16 channels) -> DepthToSpace(2) -> conv."""
    rng = np.random.default_rng(1)
    nodes = [
        _conv("a", "x", "w1"),
        helper.make_node("Relu", ["a"], ["r"], name="relu"),
        helper.make_node("DepthToSpace", ["r"], ["d"], blocksize=2, mode=mode, name="d2s"),
        _conv("y", "d", "w2"),
    ]
    constants = {"w1": _weights(rng, 16, 3, 3, 3), "w2": _weights(rng, 5, 4, 3, 3)}
    return _model(
        directory / f"d2s_{mode}.onnx",
        nodes,
        [_value("x", [1, 3, 6, 7])],
        [_value("y", [1, 5, 12, 14])],
        constants,
    )


def resize_model(directory: Path, coordinates: str, nearest: str) -> Path:
    """conv -> Resize(nearest, x2) -> conv, and the resized value as a second output."""
    rng = np.random.default_rng(2)
    nodes = [
        _conv("a", "x", "w1"),
        helper.make_node(
            "Resize",
            ["a", "", "scales"],
            ["u"],
            mode="nearest",
            coordinate_transformation_mode=coordinates,
            nearest_mode=nearest,
            name="up",
        ),
        _conv("y", "u", "w2"),
    ]
    constants = {
        "w1": _weights(rng, 6, 3, 3, 3),
        "w2": _weights(rng, 4, 6, 3, 3),
        "scales": np.array([1, 1, 2, 2], np.float32),
    }
    return _model(
        directory / f"resize_{coordinates}_{nearest}.onnx",
        nodes,
        [_value("x", [1, 3, 5, 6])],
        [_value("y", [1, 4, 10, 12]), _value("u", [1, 6, 10, 12])],
        constants,
    )


def reductions_model(directory: Path) -> Path:
    """conv -> GlobalMaxPool over 20x20 (past edge-2tops's 16x16 max pool window), and
    reduce_mean, reduce_sum and reduce_max over the spatial axes or the channels."""
    rng = np.random.default_rng(3)
    nodes = [
        _conv("a", "x", "w1"),
        helper.make_node("GlobalMaxPool", ["a"], ["g"], name="gmax"),
        helper.make_node("ReduceMean", ["a"], ["m"], axes=[2, 3], keepdims=1, name="mean"),
        helper.make_node("Add", ["g", "m"], ["gm"], name="add"),
        helper.make_node("ReduceMean", ["a"], ["c"], axes=[1], keepdims=1, name="channels"),
        helper.make_node("ReduceMax", ["a"], ["k"], axes=[1], keepdims=0, name="channel_max"),
        helper.make_node("Flatten", ["a"], ["f"], name="flat"),
        helper.make_node("ReduceSum", ["f", "sum_axes"], ["s"], keepdims=0, name="sum"),
    ]
    constants = {"w1": _weights(rng, 8, 3, 3, 3), "sum_axes": np.array([1], np.int64)}
    return _model(
        directory / "reductions.onnx",
        nodes,
        [_value("x", [1, 3, 20, 20])],
        [
            _value("gm", [1, 8, 1, 1]),
            _value("c", [1, 1, 20, 20]),
            _value("k", [1, 20, 20]),
            _value("s", [1]),
        ],
        constants,
    )


def _compile_on_the_npu(model: Path, tmp_path: Path) -> set[str]:
    result, package = compiled(model, "edge-2tops", tmp_path, partition="cost")
    assert result.partition.cpu_ops == [], [
        (op.layer, op.op, op.reason) for op in result.partition.cpu_ops
    ]
    assert_bit_exact(result, model, package)
    commands = {event.op.name for event in result.simulation.events}
    assert "npu.host_call" not in commands
    return commands


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_a_depth_to_space_is_a_transpose_on_the_npu(mode: str, tmp_path: Path) -> None:
    commands = _compile_on_the_npu(depth_to_space_model(tmp_path, mode), tmp_path)
    assert "npu.transpose" in commands


@pytest.mark.parametrize(
    ("coordinates", "nearest"),
    [("half_pixel", "round_prefer_floor"), ("asymmetric", "floor"), ("align_corners", "floor")],
)
def test_a_nearest_upsampling_is_dma_or_a_gather_on_the_npu(
    coordinates: str, nearest: str, tmp_path: Path
) -> None:
    """Whole repeats in half_pixel and asymmetric coordinates: DMA only. Corners
    aligned, 5 rows read 0, 0, 0, 1, 1, 2, ... (not repeats): a gather of whole planes
    on the vector unit (npu.resize)."""
    commands = _compile_on_the_npu(resize_model(tmp_path, coordinates, nearest), tmp_path)
    assert ("npu.resize" in commands) == (coordinates == "align_corners"), commands


def test_reductions_and_a_large_global_max_pool_are_pools_on_the_npu(tmp_path: Path) -> None:
    commands = _compile_on_the_npu(reductions_model(tmp_path), tmp_path)
    assert "npu.pool" in commands


def test_a_channels_last_map_made_channels_first_is_read_once(tmp_path: Path) -> None:
    """A conv to 2 channels whose NCHW output is the NPU's NHWC map transposed: the
    transpose is tiled by its source (each box whole rows of 2-channel pixels, read in
    one run), so DMA reads each byte once; tiled by the output, each box of a plane's
    rows read one byte a burst, 64 times the tensor (npu-demo's bursts are 64 bytes).
    Bit for bit the integer reference."""
    rng = np.random.default_rng(4)
    model = _model(
        tmp_path / "to_nchw.onnx",
        [_conv("y", "x", "w")],
        [_value("x", [1, 1, 64, 64])],
        [_value("y", [1, 2, 64, 64])],
        {"w": _weights(rng, 2, 1, 3, 3)},
    )
    result, package = compiled(model, "npu-demo", tmp_path)
    assert_bit_exact(result, model, package)
    rows = csv.DictReader(io.StringIO(layers_csv(result)))
    layers = {row["layer"]: row for row in rows}
    transpose = layers["y.transpose"]
    assert transpose["op"] == "nn.transpose"
    assert int(transpose["ddr_read_bytes"]) == int(transpose["ddr_written_bytes"]) == 2 * 64 * 64
