"""The integer interpreter of the `qnn` dialect against onnxruntime and exact references.

Two kinds of check:
- exact: the i32 accumulators of conv, conv_transpose, matmul and gemm against
  independent int64 numpy loops (and onnxruntime's MatMulInteger), and the integer
  ops whose result leaves no room for rounding (max pool, pad, clamp) against
  onnxruntime;
- within 1 LSB: requantized results against onnxruntime's QLinear* kernels, which
  rescale in float32 where irc multiplies by a 31-bit fixed-point multiplier (both
  round half to even). The share of exact matches is asserted too.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import onnxruntime
import pytest
from onnx import helper, numpy_helper
from xdsl.dialects.builtin import TensorType

from irc.dialects.quant import UniformQuantizedType
from irc.interp import run_function
from irc.interp.quant import dequantize, quantize
from irc.ir import fixed_point
from irc.ir.context import make_context
from irc.ir.io import parse_module, verify_module
from irc.quantize import scheme

RNG = np.random.default_rng(66)


# --------------------------------------------------------------------------------------
# Helpers


def qtype(
    shape: Sequence[int],
    scales: float | Sequence[float],
    zero_points: int | Sequence[int] = 0,
    *,
    signed: bool = True,
    axis: int | None = None,
    narrow: bool = False,
) -> str:
    """The MLIR text of a quantized tensor type."""
    element = UniformQuantizedType.make(
        [float(s) for s in np.ravel(scales)] if axis is not None else float(scales),
        [int(z) for z in np.ravel(zero_points)] if np.ndim(zero_points) else int(zero_points),
        signed=signed,
        axis=axis,
        storage_range=(-127, 127) if narrow else None,
    )
    return str(TensorType(element, list(shape)))


def element_of(type_text: str) -> UniformQuantizedType:
    """The quantized element type of a tensor type written as text."""
    from irc.dialects.quant import quantized_element

    module = parse_module(
        f"func.func @f(%x: {type_text}) {{\n  func.return\n}}", make_context(), "type"
    )
    function = next(iter(module.ops))
    element = quantized_element(function.function_type.inputs.data[0])  # type: ignore[attr-defined]
    assert element is not None
    return element


def run_ir(body: str, arguments: Sequence[tuple[str, str, np.ndarray]], result: str) -> np.ndarray:
    """Run `body` (ops ending in a value %out of type `result`) on named arguments."""
    signature = ", ".join(f"%{name}: {type_text}" for name, type_text, _ in arguments)
    text = f"func.func @main({signature}) -> {result} {{\n{body}\n  func.return %out : {result}\n}}"
    module = parse_module(text, make_context(), "test.mlir")
    verify_module(module)
    outputs = run_function(module, [array for _, _, array in arguments])
    return next(iter(outputs.values()))


def onnx_type(array: np.ndarray) -> int:
    return helper.np_dtype_to_tensor_dtype(array.dtype)


def run_ort(
    nodes: list,
    inputs: dict[str, np.ndarray],
    initializers: dict[str, np.ndarray],
    output: str,
    output_dtype: np.dtype,
) -> np.ndarray:
    """Run a one-output ONNX graph (opset 17 and com.microsoft) in onnxruntime."""
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(n, onnx_type(a), list(a.shape)) for n, a in inputs.items()],
        [
            helper.make_tensor_value_info(
                output, helper.np_dtype_to_tensor_dtype(output_dtype), None
            )
        ],
        [numpy_helper.from_array(np.asarray(a), n) for n, a in initializers.items()],
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
    )
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    return session.run(None, inputs)[0]


AGREEMENT: dict[str, tuple[float, int, int]] = {}
"""Per compared case: (share of exact matches, max |difference|, elements); printed
at the end of the session with -s."""


def assert_within_one_lsb(name: str, ours: np.ndarray, theirs: np.ndarray, exact: float) -> None:
    """At most 1 LSB apart everywhere, and identical on at least `exact` of the elements."""
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    difference = np.abs(ours.astype(np.int64) - theirs.astype(np.int64))
    share = float(np.mean(difference == 0))
    AGREEMENT[name] = (share, int(difference.max(initial=0)), difference.size)
    print(f"{name}: {share:.4%} exact of {difference.size}, max |diff| {difference.max()}")
    assert difference.max(initial=0) <= 1
    assert share >= exact


def random_stored(shape: Sequence[int], signed: bool = True, narrow: bool = False) -> np.ndarray:
    low, high = (-127 if narrow else -128, 127) if signed else (0, 255)
    return RNG.integers(low, high, size=shape, endpoint=True).astype(
        np.int8 if signed else np.uint8
    )


def output_scale(reals: np.ndarray) -> np.float32:
    """A scale that keeps about 1% of `reals` saturated (so both paths saturate some)."""
    return np.float32(np.quantile(np.abs(reals), 0.99) / 127)


# --------------------------------------------------------------------------------------
# Convolution


def conv_reference(
    x: np.ndarray,
    w: np.ndarray,
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    group: int,
) -> np.ndarray:
    """Direct int64 convolution of centered integers (loops over output pixels' taps)."""
    batch, _, height, width = x.shape
    out_channels, group_channels, kh, kw = w.shape
    padded = np.pad(x, [(0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])])
    out_h = (height + pads[0] + pads[2] - (kh - 1) * dilations[0] - 1) // strides[0] + 1
    out_w = (width + pads[1] + pads[3] - (kw - 1) * dilations[1] - 1) // strides[1] + 1
    result = np.zeros((batch, out_channels, out_h, out_w), np.int64)
    per_group = out_channels // group
    for m in range(out_channels):
        g = m // per_group
        inputs = padded[:, g * group_channels : (g + 1) * group_channels]
        for i, j in itertools.product(range(kh), range(kw)):
            window = inputs[
                :,
                :,
                i * dilations[0] : i * dilations[0] + (out_h - 1) * strides[0] + 1 : strides[0],
                j * dilations[1] : j * dilations[1] + (out_w - 1) * strides[1] + 1 : strides[1],
            ]
            result[:, m] += np.einsum("nchw,c->nhw", window, w[m, :, i, j].astype(np.int64))
    return result


CONV_CASES = {
    "3x3 pad 1": dict(x=(1, 8, 10, 10), w=(16, 8, 3, 3), strides=(1, 1), pads=(1, 1, 1, 1)),
    "strided dilated asymmetric pads": dict(
        x=(2, 6, 13, 11), w=(5, 6, 3, 2), strides=(2, 1), pads=(1, 0, 2, 1), dilations=(2, 1)
    ),
    "grouped": dict(x=(1, 8, 9, 9), w=(12, 4, 3, 3), group=2),
    "depthwise": dict(
        x=(1, 16, 12, 12), w=(16, 1, 3, 3), strides=(2, 2), pads=(1, 1, 1, 1), group=16
    ),
    "1x1 uint8 input": dict(x=(1, 32, 7, 7), w=(24, 32, 1, 1), unsigned=True),
    "deep 3x3": dict(x=(1, 256, 12, 12), w=(32, 256, 3, 3), pads=(1, 1, 1, 1)),
}


def unsigned_weights(w: np.ndarray, zero: int) -> tuple[np.ndarray, np.uint8]:
    """int8 weights with zero point `zero` as the same reals in uint8: w + 128, zero
    point `zero` + 128."""
    return (w.astype(np.int16) + 128).astype(np.uint8), np.uint8(zero + 128)


def conv_case(case: str):
    config = CONV_CASES[case]
    signed = not config.get("unsigned", False)
    strides = config.get("strides", (1, 1))
    pads = config.get("pads", (0, 0, 0, 0))
    dilations = config.get("dilations", (1, 1))
    group = config.get("group", 1)
    x = random_stored(config["x"], signed)
    x_scale, x_zero = np.float32(0.02), (-7 if signed else 131)
    w = random_stored(config["w"], narrow=True)
    w_scales = RNG.uniform(0.002, 0.02, size=config["w"][0]).astype(np.float32)
    bias = RNG.integers(-5000, 5000, size=config["w"][0]).astype(np.int32)
    return x, x_scale, x_zero, w, w_scales, bias, strides, pads, dilations, group, signed


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv_accumulators_are_exact(case: str) -> None:
    x, x_scale, x_zero, w, w_scales, bias, strides, pads, dilations, group, signed = conv_case(case)
    out_shape = list(conv_reference(x, w, strides, pads, dilations, group).shape)
    x_type = qtype(x.shape, x_scale, x_zero, signed=signed)
    w_type = qtype(w.shape, w_scales, 0, axis=0, narrow=True)
    acc_type = f"tensor<{'x'.join(map(str, out_shape))}xi32>"
    body = (
        f"  %out = qnn.conv %x, %w, %b {{strides = {list(strides)}, pads = {list(pads)}, "
        f"dilations = {list(dilations)}, group = {group}}} : ({x_type}, {w_type}, "
        f"tensor<{w.shape[0]}xi32>) -> {acc_type}"
    )
    ours = run_ir(
        body,
        [("x", x_type, x), ("w", w_type, w), ("b", f"tensor<{w.shape[0]}xi32>", bias)],
        acc_type,
    )
    expected = conv_reference(x.astype(np.int64) - x_zero, w, strides, pads, dilations, group)
    expected += bias.reshape(1, -1, 1, 1)
    assert ours.dtype == np.int32
    np.testing.assert_array_equal(ours, expected)


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv_requantize_matches_qlinearconv(case: str) -> None:
    x, x_scale, x_zero, w, w_scales, bias, strides, pads, dilations, group, signed = conv_case(case)
    accumulators = conv_reference(x.astype(np.int64) - x_zero, w, strides, pads, dilations, group)
    reals = (accumulators + bias.reshape(1, -1, 1, 1)) * (x_scale * w_scales).reshape(1, -1, 1, 1)
    # onnxruntime's QLinearConv wants the output of the input's signedness.
    y_scale, y_zero = output_scale(reals), (3 if signed else 131)
    out_shape = list(accumulators.shape)
    x_type = qtype(x.shape, x_scale, x_zero, signed=signed)
    w_type = qtype(w.shape, w_scales, 0, axis=0, narrow=True)
    y_type = qtype(out_shape, y_scale, y_zero, signed=signed)
    multipliers, shifts = scheme.output_multipliers(x_scale, w_scales, y_scale)
    acc_type = f"tensor<{'x'.join(map(str, out_shape))}xi32>"
    body = (
        f"  %acc = qnn.conv %x, %w, %b {{strides = {list(strides)}, pads = {list(pads)}, "
        f"dilations = {list(dilations)}, group = {group}}} : ({x_type}, {w_type}, "
        f"tensor<{w.shape[0]}xi32>) -> {acc_type}\n"
        f"  %out = qnn.requantize %acc {{axis = 1, multiplier = {multipliers}, shift = {shifts}}}"
        f" : ({acc_type}) -> {y_type}"
    )
    ours = run_ir(
        body,
        [("x", x_type, x), ("w", w_type, w), ("b", f"tensor<{w.shape[0]}xi32>", bias)],
        y_type,
    )
    node = helper.make_node(
        "QLinearConv",
        ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
        ["y"],
        strides=list(strides),
        pads=list(pads),
        dilations=list(dilations),
        group=group,
    )
    # With uint8 activations, onnxruntime gets the same weights as uint8 (w + 128, zero
    # point 128): its u8s8 kernels saturate pair sums in int16 on x86 CPUs without VNNI
    # (VPMADDUBSW), its u8u8 kernels are exact on every CPU (docs/testing.md, "The machine").
    ort_w, ort_wz = (w, np.zeros(w.shape[0], np.int8)) if signed else unsigned_weights(w, 0)
    theirs = run_ort(
        [node],
        {"x": x},
        {
            "xs": x_scale,
            "xz": np.array(x_zero, x.dtype),
            "w": ort_w,
            "ws": w_scales,
            "wz": ort_wz if signed else np.full(w.shape[0], ort_wz, np.uint8),
            "ys": y_scale,
            "yz": np.array(y_zero, x.dtype),
            "b": bias,
        },
        "y",
        x.dtype,
    )
    assert_within_one_lsb(f"conv {case}", ours, theirs, exact=0.99)
    low, high = (-128, 127) if signed else (0, 255)
    assert np.any(ours == low) or np.any(ours == high)  # the test exercises saturation


def test_conv_channels_last_equals_channels_first() -> None:
    x = random_stored((2, 5, 7, 6))
    w = random_stored((4, 5, 3, 3), narrow=True)
    w_scales = [0.1, 0.2, 0.3, 0.4]
    pads = [1, 0, 1, 2]

    def run(layout: str) -> np.ndarray:
        xs, ws = (x, w) if layout == "nchw" else (x.transpose(0, 2, 3, 1), w.transpose(0, 2, 3, 1))
        out = [2, 4, 7, 6] if layout == "nchw" else [2, 7, 6, 4]
        x_type = qtype(xs.shape, 0.1, 5)
        w_type = qtype(ws.shape, w_scales, 0, axis=0, narrow=True)
        acc = f"tensor<{'x'.join(map(str, out))}xi32>"
        body = (
            f'  %out = qnn.conv %x, %w {{layout = "{layout}", pads = {pads}}} '
            f": ({x_type}, {w_type}) -> {acc}"
        )
        return run_ir(body, [("x", x_type, xs), ("w", w_type, ws)], acc)

    np.testing.assert_array_equal(run("nhwc"), run("nchw").transpose(0, 2, 3, 1))


def conv_transpose_reference(
    x: np.ndarray, w: np.ndarray, strides: Sequence[int], pads: Sequence[int], group: int
) -> np.ndarray:
    """Direct int64 transposed convolution: scatter every input pixel's contributions."""
    batch, channels, height, width = x.shape
    _, group_out, kh, kw = w.shape
    full = np.zeros(
        (batch, group_out * group, (height - 1) * strides[0] + kh, (width - 1) * strides[1] + kw),
        np.int64,
    )
    per_group = channels // group
    for c in range(channels):
        g = c // per_group
        for i, j in itertools.product(range(height), range(width)):
            contribution = np.einsum("n,mhw->nmhw", x[:, c, i, j].astype(np.int64), w[c])
            full[
                :,
                g * group_out : (g + 1) * group_out,
                i * strides[0] : i * strides[0] + kh,
                j * strides[1] : j * strides[1] + kw,
            ] += contribution
    return full[:, :, pads[0] : full.shape[2] - pads[2], pads[1] : full.shape[3] - pads[3]]


@pytest.mark.parametrize(
    ("strides", "pads", "group"), [((2, 2), (0, 0, 0, 0), 1), ((2, 1), (1, 0, 0, 1), 2)]
)
def test_conv_transpose_accumulators_are_exact(
    strides: tuple[int, int], pads: tuple[int, ...], group: int
) -> None:
    x = random_stored((2, 4, 5, 4), signed=False)
    w = random_stored((4, 3, 3, 2), narrow=True)
    w_scales = [0.01, 0.02, 0.03]
    expected = conv_transpose_reference(x.astype(np.int64) - 120, w, strides, pads, group)
    x_type = qtype(x.shape, 0.05, 120, signed=False)
    w_type = qtype(w.shape, w_scales, 0, axis=1, narrow=True)
    acc = f"tensor<{'x'.join(map(str, expected.shape))}xi32>"
    body = (
        f"  %out = qnn.conv_transpose %x, %w {{strides = {list(strides)}, pads = {list(pads)}, "
        f"group = {group}}} : ({x_type}, {w_type}) -> {acc}"
    )
    ours = run_ir(body, [("x", x_type, x), ("w", w_type, w)], acc)
    np.testing.assert_array_equal(ours, expected)


def test_conv_transpose_channels_last_equals_channels_first() -> None:
    """In nhwc the weight is (C, k..., M/group), quantized along its last axis."""
    x = random_stored((1, 4, 5, 3))
    w = random_stored((4, 3, 2, 2), narrow=True)  # (C, M, kh, kw)
    scales = [0.1, 0.2, 0.3]
    results = {}
    for layout in ("nchw", "nhwc"):
        xs, ws = (x, w) if layout == "nchw" else (x.transpose(0, 2, 3, 1), w.transpose(0, 2, 3, 1))
        axis = 1 if layout == "nchw" else 3
        out = [1, 3, 10, 6] if layout == "nchw" else [1, 10, 6, 3]
        x_type = qtype(xs.shape, 0.1, 7)
        w_type = qtype(ws.shape, scales, [1, 0, -1], axis=axis, narrow=True)
        acc = f"tensor<{'x'.join(map(str, out))}xi32>"
        body = (
            f'  %out = qnn.conv_transpose %x, %w {{layout = "{layout}", strides = [2, 2]}}'
            f" : ({x_type}, {w_type}) -> {acc}"
        )
        results[layout] = run_ir(body, [("x", x_type, xs), ("w", w_type, ws)], acc)
    zero_points = np.array([1, 0, -1]).reshape(1, 3, 1, 1)
    expected = conv_transpose_reference(
        x.astype(np.int64) - 7, w.astype(np.int64) - zero_points, (2, 2), (0, 0, 0, 0), 1
    )
    np.testing.assert_array_equal(results["nchw"], expected)
    np.testing.assert_array_equal(results["nhwc"], expected.transpose(0, 2, 3, 1))


def test_conv_transpose_requantize_matches_float_convtranspose() -> None:
    """Against dequantize -> onnxruntime ConvTranspose (float) -> QuantizeLinear."""
    x = random_stored((1, 8, 6, 6))
    w = random_stored((8, 4, 3, 3), narrow=True)
    x_scale, x_zero = np.float32(0.03), -2
    w_scales = RNG.uniform(0.005, 0.02, size=4).astype(np.float32)
    bias = RNG.integers(-3000, 3000, size=4).astype(np.int32)
    x_real = dequantize(x, element_of(qtype(x.shape, x_scale, x_zero)))
    w_real = (w.astype(np.float32) * w_scales.reshape(1, -1, 1, 1)).astype(np.float32)
    b_real = (bias * (x_scale * w_scales)).astype(np.float32)
    node = helper.make_node(
        "ConvTranspose", ["x", "w", "b"], ["y"], strides=[2, 2], pads=[1, 1, 0, 0]
    )
    reals = run_ort([node], {"x": x_real}, {"w": w_real, "b": b_real}, "y", np.dtype(np.float32))
    y_scale, y_zero = output_scale(reals), -1
    theirs = quantize(reals, element_of(qtype(reals.shape, y_scale, y_zero)))
    x_type = qtype(x.shape, x_scale, x_zero)
    w_type = qtype(w.shape, w_scales, 0, axis=1, narrow=True)
    y_type = qtype(reals.shape, y_scale, y_zero)
    acc = f"tensor<{'x'.join(map(str, reals.shape))}xi32>"
    multipliers, shifts = scheme.output_multipliers(x_scale, w_scales, y_scale)
    body = (
        f"  %acc = qnn.conv_transpose %x, %w, %b {{strides = [2, 2], pads = [1, 1, 0, 0]}}"
        f" : ({x_type}, {w_type}, tensor<4xi32>) -> {acc}\n"
        f"  %out = qnn.requantize %acc {{axis = 1, multiplier = {multipliers}, shift = {shifts}}}"
        f" : ({acc}) -> {y_type}"
    )
    ours = run_ir(body, [("x", x_type, x), ("w", w_type, w), ("b", "tensor<4xi32>", bias)], y_type)
    assert_within_one_lsb("conv_transpose vs float ConvTranspose", ours, theirs, exact=0.99)


# --------------------------------------------------------------------------------------
# Matrix products


def test_matmul_matches_matmulinteger_exactly() -> None:
    a = random_stored((3, 5, 64))
    b = random_stored((64, 10))
    b_zero = RNG.integers(-5, 5, size=10).astype(np.int8)
    a_type = qtype(a.shape, 0.1, 9)
    b_type = qtype(b.shape, [0.01] * 10, b_zero, axis=1)
    body = f"  %out = qnn.matmul %a, %b : ({a_type}, {b_type}) -> tensor<3x5x10xi32>"
    ours = run_ir(body, [("a", a_type, a), ("b", b_type, b)], "tensor<3x5x10xi32>")
    node = helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])
    theirs = run_ort(
        [node], {"a": a, "b": b}, {"az": np.int8(9), "bz": b_zero}, "y", np.dtype(np.int32)
    )
    np.testing.assert_array_equal(ours, theirs)


def test_matmul_requantize_matches_qlinearmatmul() -> None:
    a = random_stored((4, 32, 48), signed=False)
    b = random_stored((48, 40))
    a_scale, b_scale = np.float32(0.02), np.float32(0.015)
    reals = (a.astype(np.int64) - 128) @ (b.astype(np.int64) - 2) * float(a_scale * b_scale)
    y_scale = output_scale(reals)
    a_type = qtype(a.shape, a_scale, 128, signed=False)
    b_type = qtype(b.shape, b_scale, 2)
    y_type = qtype(reals.shape, y_scale, 140, signed=False)
    multipliers, shifts = scheme.output_multipliers(a_scale, [b_scale], y_scale)
    body = (
        f"  %acc = qnn.matmul %a, %b : ({a_type}, {b_type}) -> tensor<4x32x40xi32>\n"
        f"  %out = qnn.requantize %acc {{multiplier = {multipliers}, shift = {shifts}}}"
        f" : (tensor<4x32x40xi32>) -> {y_type}"
    )
    ours = run_ir(body, [("a", a_type, a), ("b", b_type, b)], y_type)
    node = helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"])
    # uint8 weights for onnxruntime: its u8u8 kernel is exact on every x86 CPU, its u8s8
    # one saturates in int16 without VNNI (see test_conv_requantize_matches_qlinearconv).
    ort_b, ort_bz = unsigned_weights(b, 2)
    theirs = run_ort(
        [node],
        {"a": a, "b": ort_b},
        {
            "as": a_scale,
            "az": np.uint8(128),
            "bs": b_scale,
            "bz": ort_bz,
            "ys": y_scale,
            "yz": np.uint8(140),
        },
        "y",
        np.dtype(np.uint8),
    )
    assert_within_one_lsb("matmul vs QLinearMatMul", ours, theirs, exact=0.99)


@pytest.mark.parametrize("trans_b", [False, True])
def test_gemm_requantize_matches_qgemm(trans_b: bool) -> None:
    a = random_stored((16, 200))
    b = random_stored((200, 30) if not trans_b else (30, 200), narrow=True)
    a_scale, a_zero = np.float32(0.04), -20
    b_scales = RNG.uniform(0.001, 0.01, size=30).astype(np.float32)
    bias = RNG.integers(-20000, 20000, size=30).astype(np.int32)
    b_matrix = b.T if trans_b else b
    reals = ((a.astype(np.int64) - a_zero) @ b_matrix + bias) * (a_scale * b_scales)
    y_scale, y_zero = output_scale(reals), 0
    a_type = qtype(a.shape, a_scale, a_zero)
    b_type = qtype(b.shape, b_scales, 0, axis=0 if trans_b else 1, narrow=True)
    y_type = qtype(reals.shape, y_scale, y_zero)
    multipliers, shifts = scheme.output_multipliers(a_scale, b_scales, y_scale)
    body = (
        f"  %acc = qnn.gemm %a, %b, %c {{trans_b = {str(trans_b).lower()}}}"
        f" : ({a_type}, {b_type}, tensor<30xi32>) -> tensor<16x30xi32>\n"
        f"  %out = qnn.requantize %acc {{axis = 1, multiplier = {multipliers}, shift = {shifts}}}"
        f" : (tensor<16x30xi32>) -> {y_type}"
    )
    ours = run_ir(body, [("a", a_type, a), ("b", b_type, b), ("c", "tensor<30xi32>", bias)], y_type)
    node = helper.make_node(
        "QGemm",
        ["a", "as", "az", "b", "bs", "bz", "c", "ys", "yz"],
        ["y"],
        domain="com.microsoft",
        transB=int(trans_b),
    )
    theirs = run_ort(
        [node],
        {"a": a},
        {
            "as": a_scale,
            "az": np.int8(a_zero),
            "b": b,
            "bs": b_scales,
            "bz": np.zeros(30, np.int8),
            "c": bias,
            "ys": y_scale,
            "yz": np.int8(y_zero),
        },
        "y",
        np.dtype(np.int8),
    )
    assert_within_one_lsb(f"gemm trans_b={trans_b} vs QGemm", ours, theirs, exact=0.99)


# --------------------------------------------------------------------------------------
# Elementwise arithmetic


ELEMENTWISE_SHAPES = [((2, 8, 10, 10), (2, 8, 10, 10)), ((2, 8, 10, 10), (1, 8, 1, 1))]


def _binary_inputs(lhs_shape, rhs_shape):
    lhs, rhs = random_stored(lhs_shape), random_stored(rhs_shape)
    return lhs, np.float32(0.05), 4, rhs, np.float32(0.0123), -9


@pytest.mark.parametrize(("lhs_shape", "rhs_shape"), ELEMENTWISE_SHAPES)
@pytest.mark.parametrize("relu", [False, True])
def test_add_matches_qlinearadd(lhs_shape, rhs_shape, relu: bool) -> None:
    lhs, lhs_scale, lhs_zero, rhs, rhs_scale, rhs_zero = _binary_inputs(lhs_shape, rhs_shape)
    y_scale, y_zero = np.float32(0.06), -3
    params = scheme.add_parameters(lhs_scale, rhs_scale, y_scale)
    lhs_type, rhs_type = (
        qtype(lhs.shape, lhs_scale, lhs_zero),
        qtype(rhs.shape, rhs_scale, rhs_zero),
    )
    y_type = qtype(lhs_shape, y_scale, y_zero)
    properties = ", ".join(f"{k} = {v}" for k, v in params.items())
    if relu:
        properties += f", clamp_min = {y_zero}"
    body = f"  %out = qnn.add %a, %b {{{properties}}} : ({lhs_type}, {rhs_type}) -> {y_type}"
    ours = run_ir(body, [("a", lhs_type, lhs), ("b", rhs_type, rhs)], y_type)
    node = helper.make_node(
        "QLinearAdd", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"], domain="com.microsoft"
    )
    theirs = run_ort(
        [node],
        {"a": lhs, "b": rhs},
        {
            "as": lhs_scale,
            "az": np.int8(lhs_zero),
            "bs": rhs_scale,
            "bz": np.int8(rhs_zero),
            "ys": y_scale,
            "yz": np.int8(y_zero),
        },
        "y",
        np.dtype(np.int8),
    )
    if relu:
        theirs = np.maximum(theirs, np.int8(y_zero))
    name = f"add {list(rhs_shape)}{' relu' if relu else ''} vs QLinearAdd"
    assert_within_one_lsb(name, ours, theirs, exact=0.99)


@pytest.mark.parametrize(("lhs_shape", "rhs_shape"), ELEMENTWISE_SHAPES)
def test_mul_matches_qlinearmul(lhs_shape, rhs_shape) -> None:
    lhs, lhs_scale, lhs_zero, rhs, rhs_scale, rhs_zero = _binary_inputs(lhs_shape, rhs_shape)
    y_scale, y_zero = np.float32(0.01), 7
    params = scheme.mul_parameters(lhs_scale, rhs_scale, y_scale)
    lhs_type, rhs_type = (
        qtype(lhs.shape, lhs_scale, lhs_zero),
        qtype(rhs.shape, rhs_scale, rhs_zero),
    )
    y_type = qtype(lhs_shape, y_scale, y_zero)
    properties = ", ".join(f"{k} = {v}" for k, v in params.items())
    body = f"  %out = qnn.mul %a, %b {{{properties}}} : ({lhs_type}, {rhs_type}) -> {y_type}"
    ours = run_ir(body, [("a", lhs_type, lhs), ("b", rhs_type, rhs)], y_type)
    node = helper.make_node(
        "QLinearMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"], domain="com.microsoft"
    )
    theirs = run_ort(
        [node],
        {"a": lhs, "b": rhs},
        {
            "as": lhs_scale,
            "az": np.int8(lhs_zero),
            "bs": rhs_scale,
            "bz": np.int8(rhs_zero),
            "ys": y_scale,
            "yz": np.int8(y_zero),
        },
        "y",
        np.dtype(np.int8),
    )
    assert_within_one_lsb(f"mul {list(rhs_shape)} vs QLinearMul", ours, theirs, exact=0.99)


def test_add_with_ties_rounds_half_to_even() -> None:
    """Scales that make every rescale exact: the result is round_half_even of the real sum."""
    lhs = np.arange(-128, 128, dtype=np.int8)
    rhs = np.full(256, 1, np.int8)
    # 0.5 * x + 0.25 * 1, output scale 1: real sums k/2 + 1/4 -> ties never; use 0.5 * 1.
    params = scheme.add_parameters(0.5, 0.5, 1.0)
    lhs_type, y_type = qtype([256], 0.5, 0), qtype([256], 1.0, 0)
    properties = ", ".join(f"{k} = {v}" for k, v in params.items())
    body = f"  %out = qnn.add %a, %b {{{properties}}} : ({lhs_type}, {lhs_type}) -> {y_type}"
    ours = run_ir(body, [("a", lhs_type, lhs), ("b", lhs_type, rhs)], y_type)
    halves = (lhs.astype(np.int64) + 1) / 2  # exact reals, half of them ties
    expected = np.clip(np.round(halves), -128, 127).astype(np.int8)  # numpy: ties to even
    np.testing.assert_array_equal(ours, expected)


def test_clamp_is_exact() -> None:
    x = random_stored((3, 50))
    x_type = qtype(x.shape, 0.1, -20)
    body = f"  %out = qnn.clamp %x {{clamp_min = -20, clamp_max = 40}} : {x_type}"
    np.testing.assert_array_equal(run_ir(body, [("x", x_type, x)], x_type), np.clip(x, -20, 40))


def test_requantize_per_channel_of_a_quantized_input() -> None:
    acc = RNG.integers(-(1 << 20), 1 << 20, size=(2, 3, 5)).astype(np.int32)
    reals = [0.001, 0.02, 0.3]
    multipliers, shifts = fixed_point.quantize_multipliers(reals)
    y_type = qtype(acc.shape, 1.0, 5, signed=False)
    body = (
        f"  %out = qnn.requantize %x {{axis = 1, multiplier = {multipliers}, shift = {shifts}, "
        f"clamp_max = 200}} : (tensor<2x3x5xi32>) -> {y_type}"
    )
    ours = run_ir(body, [("x", "tensor<2x3x5xi32>", acc)], y_type)
    expected = np.empty(acc.shape, np.int64)
    for channel in range(3):
        for index in np.ndindex(2, 5):
            a = int(acc[index[0], channel, index[1]])
            value = (a * multipliers[channel] + (1 << (30 + shifts[channel]))) >> (
                31 + shifts[channel]
            )
            expected[index[0], channel, index[1]] = min(200, max(0, value + 5))
    assert ours.dtype == np.uint8
    np.testing.assert_array_equal(ours, expected)


# --------------------------------------------------------------------------------------
# Lookup tables


@pytest.mark.parametrize("signed", [True, False])
def test_lut_sigmoid_matches_qlinearsigmoid(signed: bool) -> None:
    x = np.arange(-128, 128).astype(np.int8) if signed else np.arange(256).astype(np.uint8)
    x = np.tile(x, 4).reshape(4, 256)
    x_scale, x_zero = np.float32(0.07), (3 if signed else 130)
    y_scale, y_zero = np.float32(1 / 256), (-128 if signed else 0)
    x_type = qtype(x.shape, x_scale, x_zero, signed=signed)
    y_type = qtype(x.shape, y_scale, y_zero, signed=signed)

    def sigmoid(values: np.ndarray) -> np.ndarray:
        return (1 / (1 + np.exp(-values))).astype(np.float32)

    table = scheme.build_lut(sigmoid, element_of(x_type), element_of(y_type))
    body = f'  %out = qnn.lut %x {{function = "sigmoid", table = {table.tolist()}}} : ({x_type}) -> {y_type}'
    ours = run_ir(body, [("x", x_type, x)], y_type)
    node = helper.make_node(
        "QLinearSigmoid", ["x", "xs", "xz", "ys", "yz"], ["y"], domain="com.microsoft"
    )
    dtype = np.int8 if signed else np.uint8
    theirs = run_ort(
        [node],
        {"x": x},
        {"xs": x_scale, "xz": dtype(x_zero), "ys": y_scale, "yz": dtype(y_zero)},
        "y",
        np.dtype(dtype),
    )
    assert_within_one_lsb(f"lut sigmoid {'i8' if signed else 'u8'}", ours, theirs, exact=0.98)


def test_lut_equals_the_qdq_float_path() -> None:
    """dcast -> nn.hard_swish -> qcast in the float interpreter gives the table exactly."""
    from irc.interp.nn import hard_swish

    x = np.arange(-128, 128).astype(np.int8)
    x_type, y_type = qtype([256], 0.05, -10), qtype([256], 0.03, -100)
    table = scheme.build_lut(hard_swish, element_of(x_type), element_of(y_type))
    body = f'  %out = qnn.lut %x {{function = "sigmoid", table = {table.tolist()}}} : ({x_type}) -> {y_type}'
    ours = run_ir(body, [("x", x_type, x)], y_type)
    float_body = (
        f"  %f = quant.dcast %x : {x_type} to tensor<256xf32>\n"
        f"  %h = nn.hard_swish %f : tensor<256xf32>\n"
        f"  %out = quant.qcast %h : tensor<256xf32> to {y_type}"
    )
    np.testing.assert_array_equal(ours, run_ir(float_body, [("x", x_type, x)], y_type))


# --------------------------------------------------------------------------------------
# Pooling


POOL_CASES = {
    "2x2 stride 2": dict(kernel=[2, 2], strides=[2, 2]),
    "3x3 pads exclude": dict(kernel=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
    "3x3 pads include": dict(kernel=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], include=True),
    "ceil mode": dict(kernel=[3, 3], strides=[2, 2], ceil=True),
}


def _pool_properties(config: dict, average: bool = True) -> str:
    entries = [f"kernel_shape = {config['kernel']}", f"strides = {config['strides']}"]
    if "pads" in config:
        entries.append(f"pads = {config['pads']}")
    if config.get("ceil"):
        entries.append("ceil_mode = true")
    if config.get("include") and average:
        entries.append("count_include_pad = true")
    return ", ".join(entries)


def _pool_attributes(config: dict, average: bool = True) -> dict:
    attributes = dict(kernel_shape=config["kernel"], strides=config["strides"])
    if "pads" in config:
        attributes["pads"] = config["pads"]
    if config.get("ceil"):
        attributes["ceil_mode"] = 1
    if config.get("include") and average:
        attributes["count_include_pad"] = 1
    return attributes


def _pool_output_shape(config: dict, x_shape: Sequence[int]) -> list[int]:
    node = helper.make_node("MaxPool", ["x"], ["y"], **_pool_attributes(config, average=False))
    probe = np.zeros(x_shape, np.float32)
    return list(run_ort([node], {"x": probe}, {}, "y", np.dtype(np.float32)).shape)


@pytest.mark.parametrize("case", POOL_CASES)
def test_max_pool_matches_maxpool_exactly(case: str) -> None:
    config = POOL_CASES[case]
    x = random_stored((2, 3, 11, 10))
    out_shape = _pool_output_shape(config, x.shape)
    x_type, y_type = qtype(x.shape, 0.1, -4), qtype(out_shape, 0.1, -4)
    properties = _pool_properties(config, average=False)
    body = f"  %out = qnn.max_pool %x {{{properties}}} : ({x_type}) -> {y_type}"
    ours = run_ir(body, [("x", x_type, x)], y_type)
    node = helper.make_node("MaxPool", ["x"], ["y"], **_pool_attributes(config, average=False))
    theirs = run_ort([node], {"x": x}, {}, "y", np.dtype(np.int8))
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("case", POOL_CASES)
def test_average_pool_matches_qlinearaveragepool(case: str) -> None:
    config = POOL_CASES[case]
    x = random_stored((2, 3, 11, 10))
    out_shape = _pool_output_shape(config, x.shape)
    # Scales whose ratio is no simple fraction: with 0.1 / 0.07 = 10/7, means of k/4 hit
    # exact real ties, which float32 arithmetic then breaks either way.
    x_scale, x_zero, y_scale, y_zero = np.float32(0.0917), -4, np.float32(0.0713), 6
    x_type, y_type = qtype(x.shape, x_scale, x_zero), qtype(out_shape, y_scale, y_zero)
    multiplier, shift = scheme.rescale_multiplier(x_scale, y_scale)
    properties = f"{_pool_properties(config)}, multiplier = {multiplier}, shift = {shift}"
    body = f"  %out = qnn.average_pool %x {{{properties}}} : ({x_type}) -> {y_type}"
    ours = run_ir(body, [("x", x_type, x)], y_type)
    node = helper.make_node(
        "QLinearAveragePool",
        ["x", "xs", "xz", "ys", "yz"],
        ["y"],
        domain="com.microsoft",
        **_pool_attributes(config),
    )
    theirs = run_ort(
        [node],
        {"x": x},
        {"xs": x_scale, "xz": np.int8(x_zero), "ys": y_scale, "yz": np.int8(y_zero)},
        "y",
        np.dtype(np.int8),
    )
    assert_within_one_lsb(f"average_pool {case}", ours, theirs, exact=0.97)


def test_average_pool_rounds_the_exact_mean_half_to_even() -> None:
    """Same scale in and out: the result is round_half_even(mean) of the stored values."""
    x = random_stored((1, 4, 6, 6))
    x_type, y_type = qtype(x.shape, 0.1, 3), qtype([1, 4, 3, 3], 0.1, 3)
    body = f"  %out = qnn.average_pool %x {{kernel_shape = [2, 2], strides = [2, 2]}} : ({x_type}) -> {y_type}"
    ours = run_ir(body, [("x", x_type, x)], y_type)
    sums = x.astype(np.int64).reshape(1, 4, 3, 2, 3, 2).sum(axis=(3, 5)) - 4 * 3
    expected = np.round(sums / 4).astype(np.int64) + 3  # exact: quarters are exact
    np.testing.assert_array_equal(ours, np.clip(expected, -128, 127))


def test_global_average_pool_matches_qlinearglobalaveragepool() -> None:
    x = random_stored((2, 16, 7, 7))
    x_scale, x_zero, y_scale, y_zero = np.float32(0.2), 10, np.float32(0.01), -5
    x_type, y_type = qtype(x.shape, x_scale, x_zero), qtype([2, 16, 1, 1], y_scale, y_zero)
    multiplier, shift = scheme.rescale_multiplier(x_scale, y_scale)
    body = (
        f"  %out = qnn.global_average_pool %x {{multiplier = {multiplier}, shift = {shift}}}"
        f" : ({x_type}) -> {y_type}"
    )
    ours = run_ir(body, [("x", x_type, x)], y_type)
    node = helper.make_node(
        "QLinearGlobalAveragePool", ["x", "xs", "xz", "ys", "yz"], ["y"], domain="com.microsoft"
    )
    theirs = run_ort(
        [node],
        {"x": x},
        {"xs": x_scale, "xz": np.int8(x_zero), "ys": y_scale, "yz": np.int8(y_zero)},
        "y",
        np.dtype(np.int8),
    )
    assert_within_one_lsb("global_average_pool", ours, theirs, exact=0.95)


def test_pooling_channels_last_equals_channels_first() -> None:
    x = random_stored((1, 3, 9, 8))
    results = {}
    for layout in ("nchw", "nhwc"):
        data = x if layout == "nchw" else x.transpose(0, 2, 3, 1)
        out = [1, 3, 5, 4] if layout == "nchw" else [1, 5, 4, 3]
        x_type, y_type = qtype(data.shape, 0.1, 0), qtype(out, 0.05, 0)
        body = (
            f'  %out = qnn.average_pool %x {{layout = "{layout}", kernel_shape = [3, 3], '
            f"strides = [2, 2], pads = [1, 1, 1, 1], shift = -2}} : ({x_type}) -> {y_type}"
        )
        results[layout] = run_ir(body, [("x", x_type, data)], y_type)
    np.testing.assert_array_equal(results["nhwc"], results["nchw"].transpose(0, 2, 3, 1))


# --------------------------------------------------------------------------------------
# Data movement


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
def test_pad_matches_pad_with_the_zero_point(mode: str) -> None:
    x = random_stored((1, 2, 4, 5))
    pads = [0, 0, 1, 2, 0, 0, 2, 1]
    out = [1, 2, 7, 8]
    x_type, y_type = qtype(x.shape, 0.1, -17), qtype(out, 0.1, -17)
    body = f'  %out = qnn.pad %x {{pads = {pads}, mode = "{mode}"}} : ({x_type}) -> {y_type}'
    ours = run_ir(body, [("x", x_type, x)], y_type)
    node = helper.make_node("Pad", ["x", "p", "v"], ["y"], mode=mode)
    theirs = run_ort(
        [node], {"x": x}, {"p": np.array(pads, np.int64), "v": np.int8(-17)}, "y", np.dtype(np.int8)
    )
    np.testing.assert_array_equal(ours, theirs)
    if mode == "constant":
        assert np.all(ours[:, :, 0] == -17)


def test_concat_matches_qlinearconcat() -> None:
    inputs = [random_stored((2, c, 6, 6)) for c in (3, 5, 2)]
    # Ratios to the output scale that are no simple fractions (0.11 / 0.08 = 11/8 makes
    # an eighth of the values exact real ties).
    scales = [np.float32(0.0513), np.float32(0.1137), np.float32(0.0719)]
    zeros = [0, -20, 15]
    y_scale, y_zero = np.float32(0.0871), -3
    types = [qtype(x.shape, s, z) for x, s, z in zip(inputs, scales, zeros)]
    y_type = qtype([2, 10, 6, 6], y_scale, y_zero)
    pairs = [scheme.rescale_multiplier(s, y_scale) for s in scales]
    body = (
        f"  %out = qnn.concat %a, %b, %c {{axis = 1, multipliers = {[m for m, _ in pairs]}, "
        f"shifts = {[s for _, s in pairs]}}} : ({', '.join(types)}) -> {y_type}"
    )
    ours = run_ir(body, [(n, t, x) for n, t, x in zip("abc", types, inputs)], y_type)
    node = helper.make_node(
        "QLinearConcat",
        ["ys", "yz", "a", "as", "az", "b", "bs", "bz", "c", "cs", "cz"],
        ["y"],
        domain="com.microsoft",
        axis=1,
    )
    initializers = {"ys": y_scale, "yz": np.int8(y_zero)}
    for name, scale, zero in zip("abc", scales, zeros):
        initializers[f"{name}s"], initializers[f"{name}z"] = scale, np.int8(zero)
    theirs = run_ort([node], dict(zip("abc", inputs)), initializers, "y", np.dtype(np.int8))
    assert_within_one_lsb("concat vs QLinearConcat", ours, theirs, exact=0.99)


def test_concat_of_one_type_copies() -> None:
    x, y = random_stored((2, 3)), random_stored((2, 4))
    x_type, y_type = qtype([2, 3], 0.1, 1), qtype([2, 4], 0.1, 1)
    out = qtype([2, 7], 0.1, 1)
    body = f"  %out = qnn.concat %x, %y {{axis = -1}} : ({x_type}, {y_type}) -> {out}"
    ours = run_ir(body, [("x", x_type, x), ("y", y_type, y)], out)
    np.testing.assert_array_equal(ours, np.concatenate([x, y], axis=1))


def test_nn_data_movement_ops_run_on_quantized_tensors() -> None:
    x = random_stored((1, 2, 3, 4))
    x_type = qtype(x.shape, 0.1, 2)
    t_type, r_type = qtype([1, 3, 4, 2], 0.1, 2), qtype([1, 24], 0.1, 2)
    body = (
        f"  %t = nn.transpose %x {{perm = [0, 2, 3, 1]}} : ({x_type}) -> {t_type}\n"
        f"  %out = nn.reshape %t : ({t_type}) -> {r_type}"
    )
    ours = run_ir(body, [("x", x_type, x)], r_type)
    np.testing.assert_array_equal(ours, x.transpose(0, 2, 3, 1).reshape(1, 24))


def test_a_module_with_qnn_constants_runs() -> None:
    """The example of the dialect's docstring: conv + requantize with constant weights."""
    x = random_stored((1, 2, 4, 4))
    # Powers of two make the multipliers 1/8 and 1/4 exact, and the ties real.
    w_type = qtype([2, 2, 1, 1], [0.25, 0.5], 0, axis=0, narrow=True)
    x_type, y_type = qtype(x.shape, 0.5, 0), qtype([1, 2, 4, 4], 1.0, 0)
    multipliers, shifts = scheme.output_multipliers(0.5, [0.25, 0.5], 1.0)
    body = (
        f"  %w = qnn.constant dense<[[[[1]], [[-1]]], [[[2]], [[3]]]]> : tensor<2x2x1x1xi8> to {w_type}\n"
        f"  %acc = qnn.conv %x, %w : ({x_type}, {w_type}) -> tensor<1x2x4x4xi32>\n"
        f"  %out = qnn.requantize %acc {{axis = 1, multiplier = {multipliers}, shift = {shifts}}}"
        f" : (tensor<1x2x4x4xi32>) -> {y_type}"
    )
    ours = run_ir(body, [("x", x_type, x)], y_type)
    xs = x.astype(np.int64)
    # Channel 0: (x0 - x1) * 0.5 * 0.25 = (x0 - x1) / 8; channel 1: (2 x0 + 3 x1) / 4.
    exact = [(xs[0, 0] - xs[0, 1]) / 8, (2 * xs[0, 0] + 3 * xs[0, 1]) / 4]
    expected = np.clip(np.round(np.stack(exact)), -128, 127)[None]  # ties to even
    np.testing.assert_array_equal(ours, expected)


# --------------------------------------------------------------------------------------
# Exactness and speed of the BLAS path


def test_large_reductions_stay_exact() -> None:
    """The worst case the verifier admits: K = 66000 products of 255 * 127."""
    k = 66_000
    a = np.full((2, k), 127, np.int8)
    a[1] = -128
    b = np.full((k, 3), 127, np.int8)
    b[:, 1] = -127
    a_type = qtype(a.shape, 0.1, -128)
    b_type = qtype(b.shape, 0.1, 0, narrow=True)
    body = f"  %out = qnn.matmul %a, %b : ({a_type}, {b_type}) -> tensor<2x3xi32>"
    ours = run_ir(body, [("a", a_type, a), ("b", b_type, b)], "tensor<2x3xi32>")
    expected = (a.astype(np.int64) + 128) @ b.astype(np.int64)
    assert int(expected.max()) == k * 255 * 127  # 2137...: just below 2^31
    np.testing.assert_array_equal(ours, expected)
