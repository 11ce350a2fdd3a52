"""Write the binary and ONNX files of the bad-input corpus, deterministically.

    .venv/bin/python tests/bad_inputs/make_corpus.py

The text cases (`mlir/`, `targets/`) are written by hand; this script writes `onnx/`
and `data/` (the files cannot be read as text, and each is built from a valid model by
one deliberate mistake). Running it again gives the same bytes: the files are
committed, and tests/test_bad_inputs.py checks that they are up to date.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = Path(__file__).resolve().parent
ONNX_DIR = HERE / "onnx"
DATA_DIR = HERE / "data"
TARGETS_DIR = HERE / "targets"
PRESET = HERE.parent.parent / "irc" / "targets" / "presets" / "npu-demo.toml"


def graph_model(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[onnx.ValueInfoProto],
    initializers: list[onnx.TensorProto] | None = None,
    opsets: list[onnx.OperatorSetIdProto] | None = None,
) -> onnx.ModelProto:
    """A model around one graph, at opset 17 unless told otherwise."""
    graph = helper.make_graph(nodes, "bad", inputs, outputs, initializers or [])
    model = helper.make_model(
        graph, opset_imports=opsets or [helper.make_opsetid("", 17)], producer_name="irc-corpus"
    )
    model.ir_version = 8
    return model


def tensor(name: str, shape: list[int | str]) -> onnx.ValueInfoProto:
    """A float tensor's value info."""
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def small_model() -> onnx.ModelProto:
    """relu(x @ w + b): the valid model the other cases break (x: 1x4, y: 1x3)."""
    rng = np.random.default_rng(0)
    weight = rng.standard_normal((4, 3)).astype(np.float32)
    bias = rng.standard_normal(3).astype(np.float32)
    return graph_model(
        [
            helper.make_node("MatMul", ["x", "w"], ["xw"], name="matmul"),
            helper.make_node("Add", ["xw", "b"], ["pre"], name="add"),
            helper.make_node("Relu", ["pre"], ["y"], name="relu"),
        ],
        [tensor("x", [1, 4])],
        [tensor("y", [1, 3])],
        [numpy_helper.from_array(weight, "w"), numpy_helper.from_array(bias, "b")],
    )


def relu_model(shape: list[int | str], opsets: list[onnx.OperatorSetIdProto] | None = None):
    """y = relu(x) over `shape`."""
    return graph_model(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        [tensor("x", shape)],
        [tensor("y", shape)],
        opsets=opsets,
    )


def with_weight(values: np.ndarray) -> onnx.ModelProto:
    """y = x + w, with `w` (shape 4) as an initializer."""
    return graph_model(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add")],
        [tensor("x", [1, 4])],
        [tensor("y", [1, 4])],
        [numpy_helper.from_array(values.astype(np.float32), "w")],
    )


def external_weight(location: str) -> onnx.ModelProto:
    """y = x + w, where w's 16 bytes are in an external file at `location`."""
    model = with_weight(np.zeros(4))
    weight = model.graph.initializer[0]
    weight.ClearField("raw_data")
    weight.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", "0"), ("length", "16")):
        entry = weight.external_data.add()
        entry.key, entry.value = key, value
    return model


def unsupported_op() -> onnx.ModelProto:
    """A default-domain op irc does not import (Hardmax)."""
    return graph_model(
        [helper.make_node("Hardmax", ["x"], ["y"], name="hardmax_1")],
        [tensor("x", [1, 4])],
        [tensor("y", [1, 4])],
    )


def custom_domain_op() -> onnx.ModelProto:
    """An op of a domain irc does not know (com.example.Frobnicate)."""
    return graph_model(
        [helper.make_node("Frobnicate", ["x"], ["y"], name="frob", domain="com.example")],
        [tensor("x", [1, 4])],
        [tensor("y", [1, 4])],
        opsets=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)],
    )


def only_ml_domain() -> onnx.ModelProto:
    """A default-domain op in a model that imports only the ai.onnx.ml opset."""
    return relu_model([1, 4], [helper.make_opsetid("ai.onnx.ml", 3)])


def checker_failure() -> onnx.ModelProto:
    """Relu with two inputs: onnx.checker rejects the node."""
    return graph_model(
        [helper.make_node("Relu", ["x", "x"], ["y"], name="relu")],
        [tensor("x", [1, 4])],
        [tensor("y", [1, 4])],
    )


def dangling_edge() -> onnx.ModelProto:
    """A node reads a tensor nothing produces."""
    return graph_model(
        [helper.make_node("Add", ["x", "ghost"], ["y"], name="add")],
        [tensor("x", [1, 4])],
        [tensor("y", [1, 4])],
    )


def duplicate_output() -> onnx.ModelProto:
    """Two nodes write the same tensor (not single assignment)."""
    return graph_model(
        [
            helper.make_node("Relu", ["x"], ["y"], name="first"),
            helper.make_node("Sigmoid", ["x"], ["y"], name="second"),
        ],
        [tensor("x", [1, 4])],
        [tensor("y", [1, 4])],
    )


def unnamed_unsupported_op() -> onnx.ModelProto:
    """An unsupported op without a node name: the diagnostic still says which node."""
    return graph_model(
        [
            helper.make_node("Relu", ["x"], ["r"]),
            helper.make_node("Hardmax", ["r"], ["y"]),
        ],
        [tensor("x", [1, 4])],
        [tensor("y", [1, 4])],
    )


def constant_of_shape_overflow() -> onnx.ModelProto:
    """ConstantOfShape to 2**20 x 2**20 elements (4 TiB of float32)."""
    shape = numpy_helper.from_array(np.array([2**20, 2**20], np.int64), "shape")
    return graph_model(
        [helper.make_node("ConstantOfShape", ["shape"], ["y"], name="huge")],
        [],
        [tensor("y", [2**20, 2**20])],
        [shape],
    )


def reshape_overflow() -> onnx.ModelProto:
    """Expand a 1x4 input to 2**40 x 4 elements."""
    shape = numpy_helper.from_array(np.array([2**40, 4], np.int64), "shape")
    return graph_model(
        [helper.make_node("Expand", ["x", "shape"], ["y"], name="expand")],
        [tensor("x", [1, 4])],
        [tensor("y", [2**40, 4])],
        [shape],
    )


def truncated(fraction: float) -> bytes:
    """The small model's bytes cut at `fraction` of their length."""
    data = small_model().SerializeToString()
    return data[: int(len(data) * fraction)]


MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    "small.onnx": small_model,
    "conv.onnx": lambda: conv_model(),
    "checker-fails.onnx": checker_failure,
    "dangling-edge.onnx": dangling_edge,
    "duplicate-output.onnx": duplicate_output,
    "unsupported-op.onnx": unsupported_op,
    "unnamed-unsupported-op.onnx": unnamed_unsupported_op,
    "custom-domain.onnx": custom_domain_op,
    "only-ml-domain.onnx": only_ml_domain,
    "opset-too-old.onnx": lambda: relu_model([1, 4], [helper.make_opsetid("", 5)]),
    "opset-too-new.onnx": lambda: relu_model([1, 4], [helper.make_opsetid("", 40)]),
    "no-opset.onnx": lambda: relu_model([1, 4], [helper.make_opsetid("com.example", 1)]),
    "dynamic.onnx": lambda: relu_model(["batch", 4]),
    "huge-input.onnx": lambda: relu_model([2**31, 2**31, 2**31]),
    "constant-of-shape-overflow.onnx": constant_of_shape_overflow,
    "expand-overflow.onnx": reshape_overflow,
    "nan-weight.onnx": lambda: with_weight(np.array([1.0, np.nan, 2.0, 3.0])),
    "inf-weight.onnx": lambda: with_weight(np.array([1.0, 2.0, -np.inf, 3.0])),
    "external-outside.onnx": lambda: external_weight("../outside.bin"),
    "external-absolute.onnx": lambda: external_weight("/etc/passwd"),
    "external-missing.onnx": lambda: external_weight("missing.bin"),
}

RAW: dict[str, Callable[[], bytes]] = {
    "empty.onnx": lambda: b"",
    "random-bytes.onnx": lambda: np.random.default_rng(7).bytes(300),
    "text.onnx": lambda: b"this is not a model, just some text\n",
    "truncated-10.onnx": lambda: truncated(0.1),
    "truncated-50.onnx": lambda: truncated(0.5),
    "truncated-90.onnx": lambda: truncated(0.9),
    "truncated-last-byte.onnx": lambda: small_model().SerializeToString()[:-1],
}


def data_files() -> dict[str, bytes]:
    """Runtime inputs and calibration samples with one mistake each (for a 1x4 input x)."""
    import io

    def npy(array: np.ndarray) -> bytes:
        buffer = io.BytesIO()
        np.save(buffer, array)
        return buffer.getvalue()

    def npz(**arrays: np.ndarray) -> bytes:
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        return buffer.getvalue()

    good = np.linspace(-1, 1, 4, dtype=np.float32).reshape(1, 4)
    return {
        "x.npy": npy(good),
        "x-wrong-shape.npy": npy(np.zeros((2, 3), np.float32)),
        "x-wrong-dtype.npy": npy(np.array([["a", "b", "c", "d"]])),
        "x-int64.npy": npy(np.arange(4, dtype=np.int64).reshape(1, 4)),
        "not-npy.npy": b"PK\x03\x04 definitely not numpy\n",
        "truncated.npy": npy(good)[:-6],
        "calib-wrong-shape.npz": npz(x=np.zeros((2, 1, 5), np.float32)),
        "calib-not-npz.npz": b"not a zip archive\n",
    }


TARGET_EDITS: dict[str, tuple[tuple[str, str], ...]] = {
    "missing-section.toml": (("[sram]\nsize_kib = 512\nbanks = 4\nalignment_bytes = 64\n", ""),),
    "negative-sram.toml": (("size_kib = 512", "size_kib = -64"),),
    "zero-clock.toml": (("clock_mhz = 500", "clock_mhz = 0"),),
    "non-numeric.toml": (("columns = 16", 'columns = "sixteen"'),),
    "unknown-key.toml": (("banks = 4", "banks = 4\nbankz = 4"),),
    "bad-toml.toml": (("[dma]", "[dma"),),
    # Valid, but 1 KiB of SRAM in 512-byte aligned buffers holds no tile of a conv; in
    # fp16 too, so that the float IR of mlir/valid.mlir runs on its NPU.
    "tiny-sram.toml": (
        (
            "size_kib = 512\nbanks = 4\nalignment_bytes = 64",
            "size_kib = 1\nbanks = 1\nalignment_bytes = 512",
        ),
        ("fp16 = false", "fp16 = true"),
    ),
}
"""Target files made from the npu-demo preset by a few edits each: (old text, new text)."""


def target_files() -> dict[str, str]:
    """The text of every target file of the corpus."""
    preset = PRESET.read_text()
    files = {}
    for name, edits in TARGET_EDITS.items():
        text = preset
        for old, new in edits:
            assert old in text, f"{name}: the preset no longer contains {old!r}"
            text = text.replace(old, new, 1)
        files[name] = text
    return files


def conv_model() -> onnx.ModelProto:
    """A 3x3 conv of a 1x8x16x16 input to 16 channels: the layer tiny-sram.toml cannot hold."""
    rng = np.random.default_rng(1)
    weight = (rng.standard_normal((16, 8, 3, 3)) * 0.2).astype(np.float32)
    return graph_model(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="conv", pads=[1, 1, 1, 1])],
        [tensor("x", [1, 8, 16, 16])],
        [tensor("y", [1, 16, 16, 16])],
        [numpy_helper.from_array(weight, "w")],
    )


def write_corpus(
    onnx_dir: Path = ONNX_DIR, data_dir: Path = DATA_DIR, targets_dir: Path = TARGETS_DIR
) -> None:
    """Write every generated file (replacing the directories' previous contents)."""
    for directory in (onnx_dir, data_dir, targets_dir):
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir(parents=True)
    for name, build in MODELS.items():
        (onnx_dir / name).write_bytes(build().SerializeToString())
    for name, raw in RAW.items():
        (onnx_dir / name).write_bytes(raw())
    for name, content in data_files().items():
        (data_dir / name).write_bytes(content)
    for name, text in target_files().items():
        (targets_dir / name).write_text(text)
    # Calibration directories: one empty (kept in git by a README), one with a bad sample.
    (data_dir / "calib-empty").mkdir()
    (data_dir / "calib-empty" / "README").write_text("no samples here, on purpose\n")
    (data_dir / "calib-bad-sample").mkdir()
    (data_dir / "calib-bad-sample" / "0.npy").write_bytes(b"\x93NUMPY broken header")


if __name__ == "__main__":
    write_corpus()
    print(f"wrote {ONNX_DIR}, {DATA_DIR} and {TARGETS_DIR}")
