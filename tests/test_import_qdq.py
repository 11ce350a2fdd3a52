"""Import of quantized ONNX models (irc/importers/onnx.py): QuantizeLinear and
DequantizeLinear (QDQ models), the QLinear ops, and onnxruntime's com.microsoft ops.

Each op is checked against onnxruntime running the same node: the casts exactly,
the QLinear ops (which onnxruntime computes with integer kernels, irc's import as
float ops between dequantize and quantize) within one step of the output scale. The
structure of the QDQ form that `lower-to-qnn` reads is checked on the IR, and whole
models made by onnxruntime's `quantize_static` (SqueezeNet, both formats) import,
round-trip through text, match onnxruntime and lower to integer ops.

The expected values must not depend on the CPU that runs the tests:

- onnxruntime's u8s8 kernels (uint8 activations, int8 weights) multiply with
  VPMADDUBSW on x86 CPUs without VNNI, which adds each pair of products in int16 with
  saturation; with VNNI they are exact. So every comparison with onnxruntime's integer
  kernels goes through `onnxruntime_outputs`, which fails unless each integer matrix
  kernel of the graph onnxruntime actually runs is exact on every x86 CPU
  (`irc.testing.quantized.integer_kernels`: u8s8 with 7-bit weights, whose pair sums
  2 * 255 * 64 fit int16, or u8u8, s8s8). A QLinearConv of uint8 activations keeps its
  full-range int8 weights on irc's side; onnxruntime computes the same convolution with
  the weights stored as uint8 (`with_unsigned_weights`, which its u8u8 kernel computes
  exactly: the conversion that onnxruntime's session option `session.x64quantprecision`
  makes, documented there as the remedy for u8s8 overflow on x64 CPUs without VNNI),
  and the SqueezeNet models have the 7-bit weights of `reduce_range`.
- Float kernels round differently on different CPUs (FMA, the order of the sums), so
  an exact comparison with a float computation of onnxruntime either has scales that
  are powers of two and small integers, for which every sum is exact in float32, or
  allows one step, where the quantize after the sums may round a value near the middle
  of two steps to the other one (SqueezeNet).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from irc.diagnostics import IrcError, collect_diagnostics
from irc.dialects import nn, quant
from irc.importers.onnx import import_model, supported_ops
from irc.importers.reference import run_onnxruntime
from irc.interp import run_function
from irc.ir.context import make_context
from irc.ir.io import PrintOptions, module_to_string, parse_module, verify_module
from irc.ir.weights import WeightsMode
from irc.testing import quantized
from irc.transforms.lower_to_qnn import lower_module

RNG = np.random.default_rng(7)

INT8, UINT8, INT32, INT16 = (
    TensorProto.INT8,
    TensorProto.UINT8,
    TensorProto.INT32,
    TensorProto.INT16,
)


# --------------------------------------------------------------------------------------
# Helpers


def tensor(name: str, shape, elem_type: int = TensorProto.FLOAT) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem_type, shape)


def const(name: str, array) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(array), name)


def make_model(
    nodes, inputs, outputs, initializers=(), opset: int = 13, contrib: bool = False
) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "qdq", inputs, outputs, list(initializers))
    opsets = [helper.make_opsetid("", opset)]
    if contrib:
        opsets.append(helper.make_opsetid("com.microsoft", 1))
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8 if opset < 19 else 10
    return model


def ops_of(module) -> list:
    function = module.body.block.first_op
    return list(function.body.block.ops)


def op_names(module) -> list[str]:
    return [op.name for op in ops_of(module) if op.name != "func.return"]


def assert_exact_on_every_x86_cpu(graph: onnx.ModelProto) -> list[quantized.IntegerKernel]:
    """Fail unless every integer matrix kernel of `graph` (a graph as onnxruntime runs it)
    computes the same integers on every x86 CPU (module docstring); the kernels."""
    kernels = quantized.integer_kernels(graph)
    inexact = [kernel for kernel in kernels if not kernel.exact_on_every_x86_cpu]
    assert not inexact, "the expected values depend on the CPU:\n" + "\n".join(
        f"{kernel.op_type} {kernel.node} ({kernel.activations} x {kernel.weights}): pair "
        f"sums up to {kernel.largest_pair_sum} saturate int16 on x86 CPUs without VNNI"
        for kernel in inexact
    )
    return kernels


def onnxruntime_outputs(
    model: onnx.ModelProto, feeds: dict, kernel: str | None = None
) -> dict[str, np.ndarray]:
    """onnxruntime's outputs, with its kernels for contrib and QLinear ops (and its graph
    optimizations), checked to be the same on every x86 CPU
    (`assert_exact_on_every_x86_cpu` on the graph it runs). `kernel`: the op type of
    the integer matrix kernels that graph must hold (one at least), so that the check
    sees them."""
    with tempfile.TemporaryDirectory() as directory:
        optimized = Path(directory) / "optimized.onnx"
        (outputs,) = quantized.run_quantized_onnxruntime(model, [feeds], optimized)
        kernels = assert_exact_on_every_x86_cpu(onnx.load(str(optimized)))
    if kernel is not None:
        assert kernels and {found.op_type for found in kernels} == {kernel}, kernels
    return outputs


def with_unsigned_weights(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` with the int8 weights of its QLinearConvs stored as uint8, w + 128 with
    zero point 128: the same convolution, which onnxruntime computes with its u8u8
    kernel (exact on every x86 CPU: it widens to 16 bits before multiplying). This is
    the conversion of onnxruntime's own `session.x64quantprecision` option."""
    converted = onnx.ModelProto()
    converted.CopyFrom(model)
    initializers = {tensor.name: tensor for tensor in converted.graph.initializer}
    for node in converted.graph.node:
        if node.op_type != "QLinearConv":
            continue
        weight, zero_point = initializers[node.input[3]], initializers[node.input[5]]
        values = numpy_helper.to_array(weight).astype(np.int16)
        zeros = numpy_helper.to_array(zero_point).astype(np.int16)
        assert weight.data_type == INT8 and not zeros.any(), "symmetric int8 weights only"
        weight.CopyFrom(numpy_helper.from_array((values + 128).astype(np.uint8), weight.name))
        zero_point.CopyFrom(
            numpy_helper.from_array(np.full(zeros.shape, 128, np.uint8), zero_point.name)
        )
    return converted


def imported_outputs(model: onnx.ModelProto, feeds: dict, lower: bool = False) -> dict:
    module = import_model(model)
    verify_module(module)
    if lower:
        with collect_diagnostics():
            lower_module(module, None)
        verify_module(module)
    return run_function(module, feeds)


def assert_within_one_step(ours: np.ndarray, expected: np.ndarray) -> None:
    """Quantized outputs agree to one step (integers of the same type)."""
    assert ours.dtype == expected.dtype and ours.shape == expected.shape
    difference = np.abs(ours.astype(np.int64) - expected.astype(np.int64))
    assert difference.max(initial=0) <= 1, (
        f"{np.count_nonzero(difference > 1)} elements differ more"
    )


def diagnostics_of(failure: pytest.ExceptionInfo[IrcError]) -> list[str]:
    return [diagnostic.format() for diagnostic in failure.value.diagnostics]


def randn(*shape, scale: float = 1.0) -> np.ndarray:
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def ints(dtype, *shape, low=None, high=None) -> np.ndarray:
    info = np.iinfo(dtype)
    low = info.min if low is None else low
    high = info.max if high is None else high
    return RNG.integers(low, high + 1, size=shape).astype(dtype)


# --------------------------------------------------------------------------------------
# QuantizeLinear and DequantizeLinear


QDQ_CASES = {
    # name: (opset, scale, zero point (None: absent), axis, shape)
    "int8 per tensor, opset 10": (10, np.float32(0.05), np.int8(-3), None, (2, 3, 4)),
    "uint8 per tensor": (13, np.float32(0.1), np.uint8(128), None, (5, 7)),
    "no zero point (uint8)": (13, np.float32(0.02), None, None, (4, 4)),
    "int8 per axis 1 (the default axis)": (
        13,
        np.array([0.1, 0.02, 0.3], np.float32),
        np.array([1, -2, 0], np.int8),
        None,
        (2, 3, 4),
    ),
    "int8 per axis 0": (
        17,
        np.array([0.5, 0.05], np.float32),
        np.array([0, 4], np.int8),
        0,
        (2, 6),
    ),
    "uint8 per axis -1": (
        19,
        np.array([0.1, 0.2, 0.3, 0.4], np.float32),
        np.array([10, 128, 250, 0], np.uint8),
        -1,
        (3, 4),
    ),
    "int16 per tensor, opset 21": (21, np.float32(0.001), np.int16(-7), None, (3, 5)),
}


@pytest.mark.parametrize("case", QDQ_CASES)
def test_quantize_dequantize_match_onnxruntime(case: str) -> None:
    opset, scale, zero_point, axis, shape = QDQ_CASES[case]
    storage = UINT8 if zero_point is None else helper.np_dtype_to_tensor_dtype(zero_point.dtype)
    attrs = {} if axis is None else {"axis": axis}
    parameters = ["s"] if zero_point is None else ["s", "z"]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", *parameters], ["q"], name="quantize", **attrs),
        helper.make_node("DequantizeLinear", ["q", *parameters], ["y"], name="dequantize", **attrs),
    ]
    initializers = [const("s", scale)] + ([] if zero_point is None else [const("z", zero_point)])
    model = make_model(
        nodes,
        [tensor("x", shape)],
        [tensor("q", shape, storage), tensor("y", shape)],
        initializers,
        opset,
    )
    x = randn(*shape, scale=8.0)
    x.flat[0] = 1e6  # saturates
    expected = run_onnxruntime(model, {"x": x})
    ours = imported_outputs(model, {"x": x})
    for name in ("q", "y"):
        assert ours[name].dtype == expected[name].dtype
        np.testing.assert_array_equal(ours[name], expected[name])


def test_qdq_pair_becomes_qcast_and_dcast() -> None:
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], name="q"),
        helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], name="dq"),
    ]
    model = make_model(
        nodes,
        [tensor("x", [4])],
        [tensor("y", [4])],
        [const("s", np.float32(0.5)), const("z", np.int8(-3))],
    )
    module = import_model(model)
    assert op_names(module) == ["quant.qcast", "quant.dcast"]
    text = module_to_string(module)
    assert "quant.qcast %0 : tensor<4xf32> to tensor<4x!quant.uniform<i8:f32, 0.5:-3>>" in text


def test_weights_become_constant_scast_dcast_with_narrow_range() -> None:
    # A symmetric int8 weight (as quantize_static writes it) gets irc's type for
    # weights, [-127, 127]; a bias stays int32 of its per-channel scale. The scales are
    # powers of two, so that onnxruntime's float conv sums exactly on every CPU.
    weight = ints(np.int8, 3, 2, 1, 1, low=-127)
    bias = ints(np.int32, 3, low=-1000, high=1000)
    w_scale = np.array([2**-7, 2**-6, 2**-5], np.float32)
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=0),
        helper.make_node("DequantizeLinear", ["b", "bs"], ["bd"], axis=0),
        helper.make_node("Conv", ["xd", "wd", "bd"], ["y"], name="conv"),
        helper.make_node("QuantizeLinear", ["y", "ys", "yz"], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["out"]),
    ]
    initializers = [
        const("xs", np.float32(0.125)),
        const("xz", np.int8(2)),
        const("w", weight),
        const("ws", w_scale),
        const("wz", np.zeros(3, np.int8)),
        const("b", bias),
        const("bs", np.float32(0.125) * w_scale),
        const("ys", np.float32(0.25)),
        const("yz", np.int8(-5)),
    ]
    model = make_model(
        nodes, [tensor("x", [1, 2, 3, 3])], [tensor("out", [1, 3, 3, 3])], initializers
    )
    module = import_model(model)
    verify_module(module)
    assert op_names(module) == [
        "nn.constant",
        "nn.constant",
        "quant.qcast",
        "quant.dcast",
        "quant.scast",
        "quant.dcast",
        "quant.scast",
        "quant.dcast",
        "nn.conv",
        "quant.qcast",
        "quant.dcast",
    ]
    casts = [op for op in ops_of(module) if isinstance(op, quant.StorageCastOp)]
    weight_type, bias_type = (quant.quantized_element(op.result.type) for op in casts)
    assert weight_type.storage_range == (-127, 127) and weight_type.quantized_axis == 0
    assert weight_type.scale_values == [float(s) for s in w_scale]
    assert bias_type.storage_bits.data == 32 and bias_type.quantized_axis == 0
    x = randn(1, 2, 3, 3, scale=4.0)
    expected = run_onnxruntime(model, {"x": x})["out"]
    np.testing.assert_array_equal(run_function(module, {"x": x})["out"], expected)
    # lower-to-qnn reads the imported form like its own: the conv becomes integer.
    with collect_diagnostics():
        lower_module(module, None)
    names = op_names(module)
    assert "qnn.conv" in names and "nn.conv" not in names, names


def test_weights_using_minus_128_keep_the_full_range() -> None:
    weight = np.array([[-128, 5], [7, 127]], np.int8)
    node = helper.make_node("DequantizeLinear", ["w", "s"], ["y"], axis=0)
    model = make_model(
        [node],
        [],
        [tensor("y", [2, 2])],
        [const("w", weight), const("s", np.array([0.5, 0.25], np.float32))],
    )
    module = import_model(model)
    cast = next(op for op in ops_of(module) if isinstance(op, quant.StorageCastOp))
    assert quant.quantized_element(cast.result.type).storage_range == (-128, 127)
    np.testing.assert_array_equal(
        run_function(module, {})["y"], np.array([[-64, 2.5], [1.75, 31.75]], np.float32)
    )


def test_dequantize_with_other_parameters_reinterprets_the_integers() -> None:
    # DequantizeLinear reads the stored integers with its own scale and zero point.
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s1", "z1"], ["q"]),
        helper.make_node("DequantizeLinear", ["q", "s2", "z2"], ["y"]),
    ]
    initializers = [
        const("s1", np.float32(0.1)),
        const("z1", np.int8(4)),
        const("s2", np.float32(0.3)),
        const("z2", np.int8(-1)),
    ]
    model = make_model(nodes, [tensor("x", [8])], [tensor("y", [8])], initializers)
    x = randn(8, scale=5.0)
    module = import_model(model)
    assert op_names(module) == ["quant.qcast", "quant.scast", "quant.scast", "quant.dcast"]
    np.testing.assert_array_equal(
        run_function(module, {"x": x})["y"], run_onnxruntime(model, {"x": x})["y"]
    )


def test_quantized_graph_input_and_output_are_storage_integers() -> None:
    nodes = [
        helper.make_node("DequantizeLinear", ["q", "s", "z"], ["x"]),
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("QuantizeLinear", ["r", "s", "z"], ["out"]),
    ]
    model = make_model(
        nodes,
        [tensor("q", [6], UINT8)],
        [tensor("out", [6], UINT8)],
        [const("s", np.float32(0.25)), const("z", np.uint8(100))],
    )
    module = import_model(model)
    assert (
        'func.func @main(%0: tensor<6xui8> {irc.name = "q"}) -> (tensor<6xui8> {irc.name = "out"})'
        in module_to_string(module)
    )
    q = ints(np.uint8, 6)
    ours = run_function(module, {"q": q})["out"]
    assert ours.dtype == np.uint8
    np.testing.assert_array_equal(ours, run_onnxruntime(model, {"q": q})["out"])


def test_output_dtype_of_opset_21() -> None:
    node = helper.make_node("QuantizeLinear", ["x", "s"], ["q"], output_dtype=INT8)
    model = make_model(
        [node], [tensor("x", [5])], [tensor("q", [5], INT8)], [const("s", np.float32(0.1))], 21
    )
    x = np.array([-20.0, -0.04, 0.05, 0.15, 20.0], np.float32)
    ours = imported_outputs(model, {"x": x})["q"]
    assert ours.dtype == np.int8
    np.testing.assert_array_equal(ours, run_onnxruntime(model, {"x": x})["q"])


# --------------------------------------------------------------------------------------
# QLinearConv and QLinearMatMul


def qlinear_conv_model(
    per_channel: bool, storage: int, with_bias: bool, attrs: dict
) -> onnx.ModelProto:
    dtype = np.int8 if storage == INT8 else np.uint8
    channels_out, channels_in = 4, 6 // attrs.get("group", 1)
    w_scale = np.array([0.01, 0.03, 0.02, 0.05], np.float32) if per_channel else np.float32(0.02)
    w_zero = np.zeros(4, np.int8) if per_channel else np.int8(0)
    x_scale, y_scale = np.float32(0.05), np.float32(0.15)
    initializers = [
        const("xs", x_scale),
        const("xz", np.array(3 if storage == INT8 else 130, dtype)),
        const("w", ints(np.int8, channels_out, channels_in, 3, 3, low=-127)),
        const("ws", w_scale),
        const("wz", w_zero),
        const("ys", y_scale),
        const("yz", np.array(-2 if storage == INT8 else 120, dtype)),
    ]
    inputs = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"]
    if with_bias:
        initializers.append(const("b", ints(np.int32, 4, low=-2000, high=2000)))
        inputs.append("b")
    node = helper.make_node("QLinearConv", inputs, ["y"], name="qconv", **attrs)
    inferred = onnx.shape_inference.infer_shapes(
        make_model(
            [node], [tensor("x", [1, 6, 9, 9], storage)], [tensor("y", None, storage)], initializers
        )
    )
    return inferred


@pytest.mark.parametrize(
    ("per_channel", "storage", "with_bias", "attrs"),
    [
        (True, INT8, True, {"pads": [1, 1, 1, 1]}),
        (False, UINT8, True, {"strides": [2, 2]}),
        (True, UINT8, False, {"group": 2, "dilations": [2, 1]}),
        (True, INT8, True, {"auto_pad": "SAME_UPPER", "strides": [2, 2]}),
    ],
)
def test_qlinear_conv_matches_onnxruntime(per_channel, storage, with_bias, attrs) -> None:
    model = qlinear_conv_model(per_channel, storage, with_bias, attrs)
    dtype = np.int8 if storage == INT8 else np.uint8
    x = ints(dtype, 1, 6, 9, 9)
    # irc imports the full-range int8 weights; onnxruntime's u8s8 kernel would saturate
    # their pair sums on CPUs without VNNI, so with uint8 activations it computes the
    # same convolution from uint8 weights (s8s8 is exact as it is).
    reference = with_unsigned_weights(model) if storage == UINT8 else model
    expected = onnxruntime_outputs(reference, {"x": x}, kernel="QLinearConv")["y"]
    module = import_model(model)
    assert [
        name for name in op_names(module) if name.startswith("nn.") and name != "nn.constant"
    ] == ["nn.conv"]
    assert_within_one_step(run_function(module, {"x": x})["y"], expected)
    assert_within_one_step(imported_outputs(model, {"x": x}, lower=True)["y"], expected)


def test_comparisons_with_onnxruntime_refuse_kernels_that_depend_on_the_cpu() -> None:
    # Full-range int8 weights with uint8 activations: onnxruntime's u8s8 kernel saturates
    # pair sums of up to 2 * 255 * 127 on CPUs without VNNI, so the check refuses the
    # model on every CPU (whether this one saturates or not); the same convolution with
    # uint8 weights, and one with 7-bit weights, are exact everywhere.
    model = qlinear_conv_model(True, UINT8, True, {"pads": [1, 1, 1, 1]})
    feeds = {"x": ints(np.uint8, 1, 6, 9, 9)}
    refusal = r"QLinearConv qconv\S* \(uint8 x int8\): pair sums up to \d+ saturate int16"
    with pytest.raises(AssertionError, match=refusal):
        onnxruntime_outputs(model, feeds)
    exact = onnxruntime_outputs(with_unsigned_weights(model), feeds, kernel="QLinearConv")
    seven_bits = onnx.ModelProto()
    seven_bits.CopyFrom(model)
    weight = next(tensor for tensor in seven_bits.graph.initializer if tensor.name == "w")
    weight.CopyFrom(const("w", numpy_helper.to_array(weight) // 2))  # within [-64, 63]
    onnxruntime_outputs(seven_bits, feeds, kernel="QLinearConv")
    # The uint8 weights are the same convolution: irc's import of the int8 model agrees.
    assert_within_one_step(imported_outputs(model, feeds)["y"], exact["y"])


@pytest.mark.parametrize("per_column", [False, True])
def test_qlinear_matmul_matches_onnxruntime(per_column: bool) -> None:
    b_scale = (
        np.array([0.01, 0.02, 0.03, 0.015, 0.05], np.float32) if per_column else np.float32(0.02)
    )
    b_zero = np.array([0, 1, 250, 128, 7], np.uint8) if per_column else np.uint8(128)
    initializers = [
        const("as", np.float32(0.04)),
        const("az", np.uint8(120)),
        const("b", ints(np.uint8, 8, 5)),
        const("bs", b_scale),
        const("bz", b_zero),
        const("ys", np.float32(0.3)),
        const("yz", np.uint8(100)),
    ]
    node = helper.make_node(
        "QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"], name="qmatmul"
    )
    model = make_model(
        [node], [tensor("a", [3, 8], UINT8)], [tensor("y", [3, 5], UINT8)], initializers
    )
    a = ints(np.uint8, 3, 8)
    expected = onnxruntime_outputs(model, {"a": a}, kernel="QLinearMatMul")["y"]
    assert_within_one_step(imported_outputs(model, {"a": a})["y"], expected)
    assert_within_one_step(imported_outputs(model, {"a": a}, lower=True)["y"], expected)


# --------------------------------------------------------------------------------------
# onnxruntime's com.microsoft ops (quantize_static's QOperator format)


def contrib_model(node, inputs, output, initializers) -> onnx.ModelProto:
    return make_model([node], inputs, [output], initializers, contrib=True)


@pytest.mark.parametrize(
    ("attrs", "with_c", "quantized_output", "per_column"),
    [
        ({"transB": 1}, True, True, True),
        ({}, True, True, False),
        ({"transB": 1, "alpha": 0.5}, True, True, True),
        ({"transA": 1}, False, True, False),
        ({"transB": 1}, True, False, True),
    ],
)
def test_qgemm_matches_onnxruntime(attrs, with_c, quantized_output, per_column) -> None:
    trans_a, trans_b = attrs.get("transA", 0), attrs.get("transB", 0)
    a_shape = [6, 2] if trans_a else [2, 6]
    b_shape = [3, 6] if trans_b else [6, 3]
    b_scale = np.array([0.01, 0.02, 0.04], np.float32) if per_column else np.float32(0.03)
    b_zero = np.zeros(3, np.int8) if per_column else np.int8(0)
    initializers = [
        const("as", np.float32(0.05)),
        const("az", np.int8(-4)),
        const("b", ints(np.int8, *b_shape, low=-127)),
        const("bs", b_scale),
        const("bz", b_zero),
        const("c", ints(np.int32, 3, low=-3000, high=3000)),
        const("ys", np.float32(0.2)),
        const("yz", np.int8(5)),
    ]
    inputs = ["a", "as", "az", "b", "bs", "bz", "c" if with_c else ""]
    if quantized_output:
        inputs += ["ys", "yz"]
    node = helper.make_node("QGemm", inputs, ["y"], domain="com.microsoft", name="qgemm", **attrs)
    output = tensor("y", [2, 3], INT8 if quantized_output else TensorProto.FLOAT)
    model = contrib_model(node, [tensor("a", a_shape, INT8)], output, initializers)
    a = ints(np.int8, *a_shape)
    expected = onnxruntime_outputs(model, {"a": a}, kernel="QGemm")["y"]
    ours = imported_outputs(model, {"a": a})["y"]
    if quantized_output:
        assert_within_one_step(ours, expected)
    else:
        np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-5)


def unary_contrib_case(op_type: str, attrs: dict, shape, out_shape, storage: int):
    dtype = np.int8 if storage == INT8 else np.uint8
    initializers = [
        const("xs", np.float32(0.04)),
        const("xz", np.array(-10 if storage == INT8 else 118, dtype)),
        const("ys", np.float32(1 / 256 if op_type == "QLinearSoftmax" else 0.03)),
        const("yz", np.array(-128 if storage == INT8 else 0, dtype)),
    ]
    node = helper.make_node(
        op_type, ["x", "xs", "xz", "ys", "yz"], ["y"], domain="com.microsoft", name="op", **attrs
    )
    model = contrib_model(
        node, [tensor("x", shape, storage)], tensor("y", out_shape, storage), initializers
    )
    return model, ints(dtype, *shape)


@pytest.mark.parametrize(
    ("op_type", "attrs", "shape", "out_shape", "storage"),
    [
        ("QLinearSigmoid", {}, [2, 50], [2, 50], INT8),
        ("QLinearLeakyRelu", {"alpha": 0.2}, [2, 50], [2, 50], UINT8),
        ("QLinearGlobalAveragePool", {}, [1, 4, 5, 5], [1, 4, 1, 1], UINT8),
        (
            "QLinearAveragePool",
            {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
            [1, 3, 8, 8],
            [1, 3, 4, 4],
            INT8,
        ),
        ("QLinearSoftmax", {"opset": 13, "axis": -1}, [3, 40], [3, 40], UINT8),
        ("QLinearSoftmax", {"opset": 11, "axis": 1}, [2, 3, 10], [2, 3, 10], INT8),
    ],
)
def test_unary_contrib_ops_match_onnxruntime(op_type, attrs, shape, out_shape, storage) -> None:
    model, x = unary_contrib_case(op_type, attrs, shape, out_shape, storage)
    expected = onnxruntime_outputs(model, {"x": x})["y"]
    assert_within_one_step(imported_outputs(model, {"x": x})["y"], expected)


@pytest.mark.parametrize("op_type", ["QLinearAdd", "QLinearMul"])
def test_binary_contrib_ops_match_onnxruntime(op_type: str) -> None:
    initializers = [
        const("as", np.float32(0.05)),
        const("az", np.uint8(128)),
        const("bs", np.float32(0.02)),
        const("bz", np.uint8(100)),
        const("cs", np.float32(0.08 if op_type == "QLinearAdd" else 0.01)),
        const("cz", np.uint8(110)),
    ]
    node = helper.make_node(
        op_type, ["a", "as", "az", "b", "bs", "bz", "cs", "cz"], ["c"], domain="com.microsoft"
    )
    model = contrib_model(
        node,
        [tensor("a", [2, 3, 4], UINT8), tensor("b", [3, 1], UINT8)],  # broadcasting
        tensor("c", [2, 3, 4], UINT8),
        initializers,
    )
    feeds = {"a": ints(np.uint8, 2, 3, 4), "b": ints(np.uint8, 3, 1)}
    expected = onnxruntime_outputs(model, feeds)["c"]
    assert_within_one_step(imported_outputs(model, feeds)["c"], expected)


def test_qlinear_concat_matches_onnxruntime() -> None:
    initializers = [
        const("ys", np.float32(0.1)),
        const("yz", np.int8(0)),
        const("s1", np.float32(0.05)),
        const("z1", np.int8(-5)),
        const("s2", np.float32(0.2)),
        const("z2", np.int8(3)),
    ]
    node = helper.make_node(
        "QLinearConcat",
        ["ys", "yz", "x1", "s1", "z1", "x2", "s2", "z2"],
        ["y"],
        domain="com.microsoft",
        axis=1,
    )
    model = contrib_model(
        node,
        [tensor("x1", [1, 2, 3], INT8), tensor("x2", [1, 4, 3], INT8)],
        tensor("y", [1, 6, 3], INT8),
        initializers,
    )
    feeds = {"x1": ints(np.int8, 1, 2, 3), "x2": ints(np.int8, 1, 4, 3)}
    expected = onnxruntime_outputs(model, feeds)["y"]
    assert_within_one_step(imported_outputs(model, feeds)["y"], expected)


def test_ops_that_move_values_apply_to_quantized_tensors() -> None:
    # QOperator models run MaxPool, Reshape, Transpose, ... on int8 data directly.
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
        helper.make_node("MaxPool", ["q"], ["p"], kernel_shape=[2, 2]),
        helper.make_node("Transpose", ["p"], ["t"], perm=[0, 2, 3, 1]),
        helper.make_node("Reshape", ["t", "shape"], ["r"]),
        helper.make_node("DequantizeLinear", ["r", "s", "z"], ["y"]),
    ]
    initializers = [
        const("s", np.float32(0.07)),
        const("z", np.int8(9)),
        const("shape", np.array([1, -1], np.int64)),
    ]
    model = make_model(
        nodes,
        [tensor("x", [1, 2, 4, 4])],
        [tensor("y", [1, 18]), tensor("r", [1, 18], INT8)],
        initializers,
    )
    x = randn(1, 2, 4, 4, scale=4.0)
    expected = run_onnxruntime(model, {"x": x})
    ours = imported_outputs(model, {"x": x})
    for name in ("y", "r"):
        np.testing.assert_array_equal(ours[name], expected[name])


# --------------------------------------------------------------------------------------
# Errors


def test_quantized_errors_are_reported_at_their_nodes_all_at_once() -> None:
    nodes = [
        # a blocked quantization
        helper.make_node(
            "QuantizeLinear", ["x", "bs", "z"], ["q1"], name="blocked", axis=1, block_size=2
        ),
        # a scale computed at run time
        helper.make_node("Abs", ["x"], ["runtime_scale"]),
        helper.make_node("QuantizeLinear", ["x", "runtime_scale"], ["q2"], name="dynamic"),
        # Relu on stored integers is not a relu of the real values
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q3"], name="fine"),
        helper.make_node("Relu", ["q3"], ["r"], name="relu_on_integers"),
        # a zero point whose type is not the tensor's
        helper.make_node("DequantizeLinear", ["q3", "s", "uz"], ["d"], name="mismatch"),
    ]
    initializers = [
        const("bs", np.full((2, 2), 0.1, np.float32)),
        const("s", np.float32(0.1)),
        const("z", np.int8(0)),
        const("uz", np.uint8(0)),
    ]
    model = make_model(
        nodes,
        [tensor("x", [2, 4])],
        [
            tensor("q1", [2, 4], INT8),
            tensor("q2", [2, 4], UINT8),
            tensor("r", [2, 4], INT8),
            tensor("d", [2, 4]),
        ],
        initializers,
        opset=21,
    )
    with pytest.raises(IrcError) as failure:
        import_model(model)
    messages = diagnostics_of(failure)
    assert len(messages) == 4, messages
    assert "node 'blocked': error: QuantizeLinear: blocked quantization" in messages[0]
    assert (
        "node 'dynamic': error: QuantizeLinear: the output's scale (input #1, 'runtime_scale') must be known"
        in messages[1]
    )
    assert (
        "node 'relu_on_integers': error: Relu: input #0 'q3' is a quantized tensor" in messages[2]
    )
    assert (
        "node 'mismatch': error: DequantizeLinear: the input's zero point is uint8, but the tensor is stored as int8"
        in messages[3]
    )


def test_bad_scales_and_axes_are_errors() -> None:
    def dequantize(scale, axis=None, shape=(2, 3)) -> onnx.ModelProto:
        attrs = {} if axis is None else {"axis": axis}
        node = helper.make_node("DequantizeLinear", ["w", "s"], ["y"], name="dq", **attrs)
        return make_model(
            [node],
            [],
            [tensor("y", list(shape))],
            [const("w", np.zeros(shape, np.int8)), const("s", scale)],
        )

    cases = [
        (dequantize(np.float32(0.0)), "scales must be positive and finite"),
        (dequantize(np.array([0.1, 0.2], np.float32)), "has 3 slices along axis 1 but 2 scales"),
        (
            dequantize(np.array([0.1, 0.2], np.float32), axis=2),
            "quantization axis 2 is out of range",
        ),
        (dequantize(np.float16(0.1)), "scale is float16; irc's quantized types express float32"),
    ]
    for model, message in cases:
        with pytest.raises(IrcError, match=message):
            import_model(model)


def test_unsupported_contrib_ops_are_listed() -> None:
    node = helper.make_node("QAttention", ["x"], ["y"], domain="com.microsoft", name="attention")
    model = make_model([node], [tensor("x", [2])], [tensor("y", [2])], contrib=True)
    with pytest.raises(
        IrcError, match=r"unsupported ONNX op 'QAttention' \(domain 'com.microsoft'"
    ):
        import_model(model)


def test_supported_ops_list_the_quantized_ops() -> None:
    ops = supported_ops()
    for name in ("QuantizeLinear", "DequantizeLinear", "QLinearConv", "QLinearMatMul"):
        assert name in ops
    for name in ("QGemm", "QLinearAdd", "QLinearConcat", "QLinearSoftmax", "QLinearAveragePool"):
        assert f"com.microsoft.{name}" in ops


# --------------------------------------------------------------------------------------
# Whole models made by quantize_static


@pytest.fixture(scope="module")
def squeezenet_dir(tmp_path_factory: pytest.TempPathFactory):
    return tmp_path_factory.mktemp("quantized-squeezenet")


@pytest.mark.parametrize("quant_format", ["qdq", "qoperator"])
@pytest.mark.parametrize("activations", ["int8", "uint8"])
def test_quantize_static_squeezenet_imports_and_matches_onnxruntime(
    squeezenet_dir, quant_format: str, activations: str
) -> None:
    light = quantized.ort_quantized_light_model(
        "squeezenet",
        squeezenet_dir,
        activations,
        quant_format,  # type: ignore[arg-type]
    )
    model = onnx.load(str(light.quantized_path))
    module = import_model(light.quantized_path)
    verify_module(module)
    text = module_to_string(module)
    storage = "i8" if activations == "int8" else "ui8"
    assert f"!quant.uniform<{storage.replace('ui', 'u')}:f32" in text
    assert "!quant.uniform<i8<-127:127>:f32:0, {" in text  # per-channel symmetric weights

    # The text round-trips (quantized types included) with the weights in a resource.
    printed = module_to_string(module, PrintOptions(weights=WeightsMode.RESOURCE))
    reparsed = parse_module(printed, make_context(), "squeezenet.mlir")
    verify_module(reparsed)

    # With its integer kernels (exact on every x86 CPU: the weights have 7 bits),
    # onnxruntime is within one step of the output scale. As written (onnxruntime without
    # graph optimizations runs every QDQ node as a float op) too: float sums round as
    # the CPU's kernels sum, and a quantize after them may then pick the next step.
    output_scale = quantized.output_quantization(model)["softmaxout_1"]
    ours = run_function(reparsed, light.inputs[0])["softmaxout_1"]
    kernels = onnxruntime_outputs(model, light.inputs[0], kernel="QLinearConv")["softmaxout_1"]
    difference = np.abs(output_scale.stored(ours) - output_scale.stored(kernels))
    assert difference.max() <= 1
    if quant_format == "qdq":
        as_written = run_onnxruntime(model, light.inputs[0])["softmaxout_1"]
        difference = np.abs(output_scale.stored(ours) - output_scale.stored(as_written))
        assert difference.max() <= 1

    # lower-to-qnn makes every conv integer, and the softmax (onnxruntime's
    # QLinearSoftmax) an integer qnn.softmax: no float island is left.
    with collect_diagnostics():
        records = lower_module(module, None)
    verify_module(module)
    names = [op.name for op in module.walk()]
    assert names.count("qnn.conv") == 26 and "nn.conv" not in names
    assert names.count("qnn.softmax") == 1 and "nn.softmax" not in names
    islands = [op.name for record in records.values() for op in record.float_reasons]
    assert islands == []
    lowered = run_function(module, light.inputs[0])["softmaxout_1"]
    assert np.abs(output_scale.stored(lowered) - output_scale.stored(kernels)).max() <= 1


def test_imported_qdq_model_prints_with_quantized_types(squeezenet_dir) -> None:
    light = quantized.ort_quantized_light_model("squeezenet", squeezenet_dir)
    module = import_model(light.quantized_path)
    stream_text = module_to_string(module)
    # One qcast per quantized activation, weights as scast of constants.
    names = [op.name for op in module.walk()]
    assert names.count("nn.conv") == 26
    assert names.count("quant.scast") == 52  # 26 weights + 26 biases
    assert "nn.constant dense_resource<conv1_w_0_quantized> : tensor<64x3x3x3xi8>" in stream_text
    # Every float nn op of the QDQ form reads dequantized values.
    for op in module.walk():
        if isinstance(op, nn.ConvOp):
            assert all(isinstance(operand.owner, quant.DequantizeCastOp) for operand in op.operands)
