"""Write the binary and ONNX files of the bad-input corpus, deterministically.

    .venv/bin/python tests/bad_inputs/make_corpus.py

The text cases (`mlir/`, `targets/`) are written by hand; this script writes `onnx/`,
`tflite/` and `data/` (the files cannot be read as text, and each is built from a valid model by
one deliberate mistake). Running it again gives the same bytes: the files are
committed, and tests/test_bad_inputs.py checks that they are up to date.
"""

from __future__ import annotations

import io
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = Path(__file__).resolve().parent
ONNX_DIR = HERE / "onnx"
TFLITE_DIR = HERE / "tflite"
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


def duplicate_node_names() -> onnx.ModelProto:
    """Two nodes named 'relu' (onnxruntime refuses the model; the checker does not)."""
    return graph_model(
        [
            helper.make_node("Relu", ["x"], ["r"], name="relu"),
            helper.make_node("Sigmoid", ["r"], ["y"], name="relu"),
        ],
        [tensor("x", [1, 4])],
        [tensor("y", [1, 4])],
    )


def initializer_against_input(declared: onnx.ValueInfoProto) -> onnx.ModelProto:
    """y = x + w, where w (float32, shape 4) is also a graph input declared as `declared`."""
    model = with_weight(np.ones(4))
    model.graph.input.append(declared)
    return model


def declared_output(output: onnx.ValueInfoProto) -> onnx.ModelProto:
    """The small model with its output 'y' declared as `output`."""
    model = small_model()
    model.graph.output[0].CopyFrom(output)
    return model


def declared_intermediate() -> onnx.ModelProto:
    """The small model with a value_info entry declaring 'xw' (1x3) as 2x2."""
    model = small_model()
    model.graph.value_info.append(tensor("xw", [2, 2]))
    return model


def initializer_as_output() -> onnx.ModelProto:
    """An initializer of shape 4 that is a graph output declared with shape 5."""
    return graph_model(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        [tensor("x", [1, 4])],
        [tensor("y", [1, 4]), tensor("w", [5])],
        [numpy_helper.from_array(np.ones(4, np.float32), "w")],
    )


def one_node(
    node: onnx.NodeProto,
    output_shape: list[int | str],
    initializers: list[onnx.TensorProto] | None = None,
    input_shape: list[int | str] | None = None,
    opset: int = 17,
) -> onnx.ModelProto:
    """A model of one node from x (1x4 unless told) to y, at `opset`."""
    return graph_model(
        [node],
        [tensor("x", input_shape or [1, 4])],
        [tensor("y", output_shape)],
        initializers,
        [helper.make_opsetid("", opset)],
    )


def int64s(name: str, values: list[int]) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(values, np.int64), name)


def constant_two_values() -> onnx.ModelProto:
    """A Constant with both value_float and value_ints (it must hold exactly one)."""
    return graph_model(
        [
            helper.make_node("Constant", [], ["c"], name="const", value_float=1.0, value_ints=[2]),
            helper.make_node("Add", ["x", "c"], ["y"], name="add"),
        ],
        [tensor("x", [1, 4])],
        [tensor("y", [1, 4])],
    )


def constant_of_shape_two_values() -> onnx.ModelProto:
    """ConstantOfShape whose fill value holds two elements instead of one."""
    fill = numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "fill")
    return graph_model(
        [helper.make_node("ConstantOfShape", ["shape"], ["y"], name="fill", value=fill)],
        [],
        [tensor("y", [2, 2])],
        [int64s("shape", [2, 2])],
    )


def slice_to_nothing() -> onnx.ModelProto:
    """Slice columns 2:2 of x (nothing), then Relu: an empty tensor at run time."""
    bounds = [int64s("starts", [2]), int64s("ends", [2]), int64s("axes", [1])]
    return graph_model(
        [
            helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["s"], name="slice"),
            helper.make_node("Relu", ["s"], ["y"], name="relu"),
        ],
        [tensor("x", [1, 4])],
        [tensor("y", [1, 0])],
        bounds,
    )


def empty_conv_input() -> onnx.ModelProto:
    """The conv model with a batch of 0 images."""
    model = conv_model()
    model.graph.input[0].CopyFrom(tensor("x", [0, 8, 16, 16]))
    model.graph.output[0].CopyFrom(tensor("y", [0, 16, 16, 16]))
    return model


def conv_transpose_output_padding() -> onnx.ModelProto:
    """ConvTranspose of stride 1 with output_padding 2 (it must be below the stride)."""
    weight = numpy_helper.from_array(np.ones((2, 3, 3, 3), np.float32), "w")
    node = helper.make_node(
        "ConvTranspose", ["x", "w"], ["y"], name="deconv", output_padding=[2, 2]
    )
    return one_node(node, [1, 3, 8, 8], [weight], input_shape=[1, 2, 4, 4])


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
    # importer checks: what onnxruntime or ONNX's strict shape inference refuses
    "duplicate-node-names.onnx": duplicate_node_names,
    "initializer-shape-vs-input.onnx": lambda: initializer_against_input(tensor("w", [1, 4])),
    "initializer-type-vs-input.onnx": lambda: initializer_against_input(
        helper.make_tensor_value_info("w", TensorProto.INT64, [4])
    ),
    "output-wrong-type.onnx": lambda: declared_output(
        helper.make_tensor_value_info("y", TensorProto.INT64, [1, 3])
    ),
    "output-wrong-shape.onnx": lambda: declared_output(tensor("y", [1, 5])),
    "value-info-wrong-shape.onnx": declared_intermediate,
    "initializer-output-wrong-shape.onnx": initializer_as_output,
    "constant-two-values.onnx": constant_two_values,
    "constant-of-shape-two-values.onnx": constant_of_shape_two_values,
    "split-zero-outputs.onnx": lambda: one_node(
        helper.make_node("Split", ["x"], ["y"], name="split", axis=1, num_outputs=0),
        [1, 4],
        opset=18,
    ),
    "resize-scales-and-sizes.onnx": lambda: one_node(
        helper.make_node("Resize", ["x", "", "scales", "sizes"], ["y"], name="resize"),
        [1, 1, 4, 4],
        [
            numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales"),
            int64s("sizes", [1, 1, 4, 4]),
        ],
        input_shape=[1, 1, 2, 2],
    ),
    "reshape-float-shape.onnx": lambda: one_node(
        helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape"),
        [2, 2],
        [numpy_helper.from_array(np.array([2.0, 2.0], np.float32), "shape")],
    ),
    "tile-2d-repeats.onnx": lambda: one_node(
        helper.make_node("Tile", ["x", "repeats"], ["y"], name="tile"),
        [1, 8],
        [numpy_helper.from_array(np.array([[1, 2]], np.int64), "repeats")],
    ),
    "gather-index-out-of-range.onnx": lambda: one_node(
        helper.make_node("Gather", ["x", "indices"], ["y"], name="gather", axis=1),
        [1, 2],
        [int64s("indices", [0, 7])],
    ),
    "dropout-ratio.onnx": lambda: one_node(
        helper.make_node("Dropout", ["x", "ratio"], ["y"], name="dropout"),
        [1, 4],
        [numpy_helper.from_array(np.array(1.5, np.float32), "ratio")],
    ),
    "conv-transpose-output-padding.onnx": conv_transpose_output_padding,
    "empty-conv-input.onnx": empty_conv_input,
    "slice-to-nothing.onnx": slice_to_nothing,
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
        # Runtime inputs of the right size but not of the input's kind (helper: runtime).
        "x-rank-3.npy": npy(good.reshape(1, 1, 4)),
        "x-0d.npy": npy(np.float32(0.5)),
        "x-object.npy": npy(np.array([[1.0, "two", None, 4]], dtype=object)),
        "x-complex.npy": npy((good + 1j).astype(np.complex64)),
        # Valid, but the NPU cannot see them as given: warnings (tests/test_runtime.py).
        "x-nan.npy": npy(np.array([[np.nan, 0.5, np.nan, -0.5]], np.float32)),
        "x-beyond-float32.npy": npy(np.array([[1e300, 0.5, -1e300, 1e300]], np.float64)),
        "not-npy.npy": b"PK\x03\x04 definitely not numpy\n",
        "truncated.npy": npy(good)[:-6],
        "calib-wrong-shape.npz": npz(x=np.zeros((2, 1, 5), np.float32)),
        "calib-not-npz.npz": b"not a zip archive\n",
        # Degenerate calibration data (helper: calibration).
        "calib-nan.npz": npz(x=np.full((3, 1, 4), np.nan, np.float32)),
        "calib-some-inf.npz": npz(x=np.stack([good, good, np.where(good > 0, np.inf, good)])),
        "calib-wrong-name.npz": npz(images=np.stack([good, -good])),
        "calib-int32.npz": npz(x=np.arange(12, dtype=np.int32).reshape(3, 1, 4)),
        "calib-float64-overflow.npy": npy(np.array([[1e300, 0.5, -0.5, 1.0]])),
        "calib-huge-header.npy": huge_header(),
        "calib-huge-member.npz": zipped({"x.npy": huge_header()}),
    }


def huge_header() -> bytes:
    """A .npy header claiming 2**36 samples of 1x4 float32 (1 TiB), and 64 bytes of data."""
    buffer = io.BytesIO()
    header = {"descr": "<f4", "fortran_order": False, "shape": (2**36, 1, 4)}
    np.lib.format.write_array_header_1_0(buffer, header)
    return buffer.getvalue() + bytes(64)


def zipped(members: dict[str, bytes]) -> bytes:
    """An .npz archive of the given members, as they are (with a fixed date)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in members.items():
            archive.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), content)
    return buffer.getvalue()


TARGET_EDITS: dict[str, tuple[tuple[str, str], ...]] = {
    "missing-section.toml": (('[placement]\nweights = "ddr"\nactivations = ["ddr"]\n', ""),),
    "negative-sram.toml": (("size_kib = 512", "size_kib = -64"),),
    "zero-clock.toml": (("clock_mhz = 500", "clock_mhz = 0"),),
    "non-numeric.toml": (("columns = 16", 'columns = "sixteen"'),),
    "unknown-key.toml": (("banks = 4", "banks = 4\nbankz = 4"),),
    "bad-toml.toml": (("[placement]", "[placement"),),
    # Numbers outside what real hardware has (helper: numerics).
    "vanishing-clock.toml": (("clock_mhz = 500", "clock_mhz = 1e-300"),),
    "nan-clock.toml": (("clock_mhz = 500", "clock_mhz = nan"),),
    "vanishing-ddr.toml": (("read_bandwidth_gb_per_s = 1.0", "read_bandwidth_gb_per_s = 1e-300"),),
    "vanishing-host.toml": (("gmacs_per_s = 2.0", "gmacs_per_s = 1e-300"),),
    "infinite-host-bandwidth.toml": (("bandwidth_gb_per_s = 2.0", "bandwidth_gb_per_s = inf"),),
    "tebibyte-sram.toml": (("size_kib = 512", "size_kib = 1073741824"),),
    "huge-latency.toml": (("latency_cycles = 100", f"latency_cycles = {10**400}"),),
    "huge-kernel-limit.toml": (("max_kernel = 7", f"max_kernel = {10**400}"),),
    "float-rows.toml": (("rows = 16", "rows = 16.0"),),
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


def tflite_files() -> dict[str, bytes]:
    """Broken and unsupported TFLite models, each from a valid one by one change."""
    from irc.testing import tflite_models

    valid = tflite_models.SINGLE_OP_MODELS["conv_same_relu6"](0)

    def float_model() -> bytes:
        builder = tflite_models.TFLiteBuilder(0)
        x = builder.tensor("x", (1, 4, 4, 2), "float32")
        w = builder.tensor("w", (2, 1, 1, 2), "float32", data=np.ones((2, 1, 1, 2), np.float32))
        y = builder.tensor("y", (1, 4, 4, 2), "float32")
        builder.operator(
            "CONV_2D", [x, w, -1], [y], "Conv2DOptions", Padding=0, StrideW=1, StrideH=1
        )
        return builder.finish([x], [y])

    def unsupported() -> bytes:
        builder = tflite_models.TFLiteBuilder(0)
        x = builder.activation("x", (1, 4), 0.1, 0)
        y = builder.activation("y", (1, 4), 0.1, 0)
        z = builder.activation("z", (1, 4), 0.1, 0)
        builder.custom("Frobnicate", [x], [y])
        builder.operator("GATHER", [y], [z])
        return builder.finish([x], [z])

    def relu(scale: float = 0.05, dtype: str = "int8", dynamic: bool = False) -> bytes:
        builder = tflite_models.TFLiteBuilder(0)
        x = builder.tensor("x", (1, 8), dtype, scale, 0)
        y = builder.tensor("y", (1, 8), dtype, 0.05, 0)
        if dynamic:
            builder.tensors[x].shape_signature = (-1, 8)
        builder.operator("RELU", [x], [y])
        return builder.finish([x], [y])

    return {
        "empty.tflite": b"",
        "random-bytes.tflite": np.random.default_rng(0).integers(0, 256, 4000, np.uint8).tobytes(),
        "truncated-50.tflite": valid[: len(valid) // 2],
        "float-model.tflite": float_model(),
        "unsupported-ops.tflite": unsupported(),
        "int16.tflite": relu(dtype="int16"),
        "dynamic.tflite": relu(dynamic=True),
        "zero-scale.tflite": relu(scale=0.0),
        "valid.tflite": valid,
    }


def write_corpus(
    onnx_dir: Path = ONNX_DIR,
    data_dir: Path = DATA_DIR,
    targets_dir: Path = TARGETS_DIR,
    tflite_dir: Path = TFLITE_DIR,
) -> None:
    """Write every generated file (replacing the directories' previous contents)."""
    for directory in (onnx_dir, data_dir, targets_dir, tflite_dir):
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
    for name, content in tflite_files().items():
        (tflite_dir / name).write_bytes(content)
    # Calibration directories: one empty (kept in git by a README), one with a bad sample.
    (data_dir / "calib-empty").mkdir()
    (data_dir / "calib-empty" / "README").write_text("no samples here, on purpose\n")
    (data_dir / "calib-bad-sample").mkdir()
    (data_dir / "calib-bad-sample" / "0.npy").write_bytes(b"\x93NUMPY broken header")


if __name__ == "__main__":
    write_corpus()
    print(f"wrote {ONNX_DIR}, {DATA_DIR}, {TARGETS_DIR} and {TFLITE_DIR}")
