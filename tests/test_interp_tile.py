"""The `tile` interpreter against the `qnn` (and `nn`) ops that tiled programs replace.

Each case writes a tiled program by hand as IR text (buffers in DDR and SRAM, copies
with materialised padding, `scf.for` loops over tiles, K splits accumulated in i32),
runs it and the untiled `qnn` program on the same random data, and requires the
int8 results to be identical (`np.array_equal`); the float conv is compared with
`nn.conv` within 1e-5.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType

from irc.diagnostics import IrcError
from irc.dialects.quant import UniformQuantizedType
from irc.interp import run_function
from irc.ir import fixed_point
from irc.ir.context import make_context
from irc.ir.io import parse_module, verify_module
from irc.quantize import scheme

RNG = np.random.default_rng(7)


def qtype(
    shape: Sequence[int],
    scales: float | Sequence[float],
    zero_point: int = 0,
    *,
    signed: bool = True,
    axis: int | None = None,
) -> str:
    """The MLIR text of a quantized tensor type (per axis when `axis` is given)."""
    element = UniformQuantizedType.make(
        [float(s) for s in np.ravel(scales)] if axis is not None else float(scales),  # type: ignore[arg-type]
        [0] * np.size(scales) if axis is not None else zero_point,
        signed=signed,
        axis=axis,
        storage_range=(-127, 127) if axis is not None else None,
    )
    return str(TensorType(element, list(shape)))


def run(text: str, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """Parse, verify and run `func.func @main` of `text`; its only output."""
    module = parse_module(text, make_context(), "test.mlir")
    verify_module(module)
    return next(iter(run_function(module, list(inputs)).values()))


def constants(prefix: str = "c", values: Sequence[int] = (-1, 0, 1, 2, 3, 4, 5, 8)) -> str:
    """`arith.constant` index values named %c0, %c1, ... (%cm1 for -1)."""
    names = {v: f"%{prefix}{'m' if v < 0 else ''}{abs(v)}" for v in values}
    return "\n".join(f"  {name} = arith.constant {v} : index" for v, name in names.items())


def requant_params(reals: np.ndarray) -> np.ndarray:
    """[C, 2] int32 (multiplier, shift) pairs for real multipliers."""
    multipliers, shifts = fixed_point.quantize_multipliers(reals)
    return np.stack([multipliers, shifts], axis=1).astype(np.int32)


def ints(values: Sequence[int]) -> str:
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


# --------------------------------------------------------------------------------------
# (a) a 3x3 pad-1 conv tiled by rows of 4 with a K split, against qnn.conv + requantize


def test_conv_tiled_by_rows_with_k_split_is_bit_exact() -> None:
    zero_point, output_zero_point = -3, 5
    x = RNG.integers(-128, 128, (1, 12, 12, 8)).astype(np.int8)
    w = RNG.integers(-127, 128, (16, 3, 3, 8)).astype(np.int8)
    bias = RNG.integers(-2000, 2000, 16).astype(np.int32)
    weight_scales = RNG.uniform(0.002, 0.02, 16)
    reals = 0.1 * weight_scales / 0.3
    params = requant_params(reals)
    x_type = qtype(x.shape, 0.1, zero_point)
    w_type = qtype(w.shape, weight_scales, axis=0)
    y_type = qtype((1, 12, 12, 16), 0.3, output_zero_point)
    reference = run(
        f"""func.func @main(%x: {x_type}, %w: {w_type}, %b: tensor<16xi32>) -> {y_type} {{
  %acc = qnn.conv %x, %w, %b {{layout = "nhwc", pads = [1, 1, 1, 1]}} : ({x_type}, {w_type}, tensor<16xi32>) -> tensor<1x12x12x16xi32>
  %y = qnn.requantize %acc {{axis = 3, clamp_min = {output_zero_point}, multiplier = {ints(params[:, 0])}, shift = {ints(params[:, 1])}}} : (tensor<1x12x12x16xi32>) -> {y_type}
  func.return %y : {y_type}
}}""",
        [x, w, bias],
    )
    ddr = '"ddr"'
    sram = '"sram"'
    tiled = run(
        f"""func.func @main(%x: {x_type}, %w: {w_type}, %b: tensor<16xi32>, %p: tensor<16x2xi32>) -> {y_type} {{
{constants()}
  %xd = tile.to_buffer %x : {x_type} to memref<1x12x12x8xi8, {ddr}>
  %wd = tile.to_buffer %w : {w_type} to memref<16x3x3x8xi8, {ddr}>
  %bd = tile.to_buffer %b : tensor<16xi32> to memref<16xi32, {ddr}>
  %pd = tile.to_buffer %p : tensor<16x2xi32> to memref<16x2xi32, {ddr}>
  %yd = tile.alloc : memref<1x12x12x16xi8, {ddr}>
  %box = tile.alloc : memref<1x6x14x4xi8, {sram}>
  %ws = tile.alloc : memref<16x3x3x4xi8, {sram}>
  %acc = tile.alloc : memref<1x4x12x16xi32, {sram}>
  %bs = tile.alloc : memref<16xi32, {sram}>
  %ps = tile.alloc : memref<16x2xi32, {sram}>
  %ys = tile.alloc : memref<1x4x12x16xi8, {sram}>
  tile.copy %bd[%c0] to %bs[%c0] sizes [16] : memref<16xi32, {ddr}> to memref<16xi32, {sram}>
  tile.copy %pd[%c0, %c0] to %ps[%c0, %c0] sizes [16, 2] : memref<16x2xi32, {ddr}> to memref<16x2xi32, {sram}>
  scf.for %r = %c0 to %c3 step %c1 {{
    %row = arith.muli %r, %c4 : index
    %top = arith.subi %row, %c1 : index
    tile.fill %acc {{value = 0}} : memref<1x4x12x16xi32, {sram}>
    scf.for %k = %c0 to %c2 step %c1 {{
      %channel = arith.muli %k, %c4 : index
      tile.copy %xd[%c0, %top, %cm1, %channel] to %box[%c0, %c0, %c0, %c0] sizes [1, 6, 14, 4] {{pad = {zero_point}}} : memref<1x12x12x8xi8, {ddr}> to memref<1x6x14x4xi8, {sram}>
      tile.copy %wd[%c0, %c0, %c0, %channel] to %ws[%c0, %c0, %c0, %c0] sizes [16, 3, 3, 4] : memref<16x3x3x8xi8, {ddr}> to memref<16x3x3x4xi8, {sram}>
      tile.conv %box, %ws, %acc {{accumulate = true, input_zero_point = {zero_point}}} : memref<1x6x14x4xi8, {sram}>, memref<16x3x3x4xi8, {sram}>, memref<1x4x12x16xi32, {sram}>
    }}
    tile.bias_add %acc, %bs : memref<1x4x12x16xi32, {sram}>, memref<16xi32, {sram}>
    tile.requantize %acc, %ps, %ys {{clamp_min = {output_zero_point}, output_zero_point = {output_zero_point}}} : memref<1x4x12x16xi32, {sram}>, memref<16x2xi32, {sram}>, memref<1x4x12x16xi8, {sram}>
    tile.copy %ys[%c0, %c0, %c0, %c0] to %yd[%c0, %row, %c0, %c0] sizes [1, 4, 12, 16] : memref<1x4x12x16xi8, {sram}> to memref<1x12x12x16xi8, {ddr}>
  }}
  %y = tile.to_tensor %yd : memref<1x12x12x16xi8, {ddr}> to {y_type}
  func.return %y : {y_type}
}}""",
        [x, w, bias, params],
    )
    assert tiled.dtype == np.int8
    assert np.array_equal(tiled, reference)
    # Not a degenerate case: the clamp and the full range are both exercised.
    assert (reference == output_zero_point).any() and len(np.unique(reference)) > 50


# --------------------------------------------------------------------------------------
# (b) a depthwise stride-2 conv on uint8, one output row per tile


def test_depthwise_stride_2_conv_tiled_by_rows_is_bit_exact() -> None:
    zero_point = 128
    x = RNG.integers(0, 256, (1, 9, 9, 4)).astype(np.uint8)
    w = RNG.integers(-127, 128, (4, 3, 3, 1)).astype(np.int8)
    weight_scales = RNG.uniform(0.005, 0.02, 4)
    params = requant_params(0.05 * weight_scales / 0.4)
    x_type = qtype(x.shape, 0.05, zero_point, signed=False)
    w_type = qtype(w.shape, weight_scales, axis=0)
    y_type = qtype((1, 5, 5, 4), 0.4, 100, signed=False)
    reference = run(
        f"""func.func @main(%x: {x_type}, %w: {w_type}) -> {y_type} {{
  %acc = qnn.conv %x, %w {{group = 4, layout = "nhwc", pads = [1, 1, 1, 1], strides = [2, 2]}} : ({x_type}, {w_type}) -> tensor<1x5x5x4xi32>
  %y = qnn.requantize %acc {{axis = 3, multiplier = {ints(params[:, 0])}, shift = {ints(params[:, 1])}}} : (tensor<1x5x5x4xi32>) -> {y_type}
  func.return %y : {y_type}
}}""",
        [x, w],
    )
    tiled = run(
        f"""func.func @main(%x: {x_type}, %w: {w_type}, %p: tensor<4x2xi32>) -> {y_type} {{
{constants()}
  %xd = tile.to_buffer %x : {x_type} to memref<1x9x9x4xui8, "ddr">
  %wd = tile.to_buffer %w : {w_type} to memref<4x3x3x1xi8, "ddr">
  %pd = tile.to_buffer %p : tensor<4x2xi32> to memref<4x2xi32, "ddr">
  %yd = tile.alloc : memref<1x5x5x4xui8, "ddr">
  %box = tile.alloc : memref<1x3x11x4xui8, "sram">
  %acc = tile.alloc {{offset = 256}} : memref<1x1x5x4xi32, "sram">
  %ys = tile.alloc : memref<1x1x5x4xui8, "sram">
  scf.for %r = %c0 to %c5 step %c1 {{
    %twice = arith.muli %r, %c2 : index
    %top = arith.subi %twice, %c1 : index
    tile.copy %xd[%c0, %top, %cm1, %c0] to %box[%c0, %c0, %c0, %c0] sizes [1, 3, 11, 4] {{pad = {zero_point}}} : memref<1x9x9x4xui8, "ddr"> to memref<1x3x11x4xui8, "sram">
    tile.conv %box, %wd, %acc {{group = 4, input_zero_point = {zero_point}, strides = [2, 2]}} : memref<1x3x11x4xui8, "sram">, memref<4x3x3x1xi8, "ddr">, memref<1x1x5x4xi32, "sram">
    tile.requantize %acc, %pd, %ys {{output_zero_point = 100}} : memref<1x1x5x4xi32, "sram">, memref<4x2xi32, "ddr">, memref<1x1x5x4xui8, "sram">
    tile.copy %ys[%c0, %c0, %c0, %c0] to %yd[%c0, %r, %c0, %c0] sizes [1, 1, 5, 4] : memref<1x1x5x4xui8, "sram"> to memref<1x5x5x4xui8, "ddr">
  }}
  %y = tile.to_tensor %yd : memref<1x5x5x4xui8, "ddr"> to {y_type}
  func.return %y : {y_type}
}}""",
        [x, w, params],
    )
    assert tiled.dtype == np.uint8
    assert np.array_equal(tiled, reference)
    assert len(np.unique(reference)) > 20


# --------------------------------------------------------------------------------------
# (c) a gemm with its K split in two, per-tensor requantization


def test_gemm_with_k_split_is_bit_exact() -> None:
    a = RNG.integers(-128, 128, (6, 32)).astype(np.int8)
    b = RNG.integers(-127, 128, (10, 32)).astype(np.int8)
    bias = RNG.integers(-5000, 5000, 10).astype(np.int32)
    params = requant_params(np.array([0.05 * 0.01 / 0.25]))
    a_type = qtype(a.shape, 0.05, 7)
    b_type = qtype(b.shape, 0.01)
    y_type = qtype((6, 10), 0.25, -4)
    reference = run(
        f"""func.func @main(%a: {a_type}, %b: {b_type}, %bias: tensor<10xi32>) -> {y_type} {{
  %acc = qnn.gemm %a, %b, %bias {{trans_b = true}} : ({a_type}, {b_type}, tensor<10xi32>) -> tensor<6x10xi32>
  %y = qnn.requantize %acc {{multiplier = {ints(params[:, 0])}, shift = {ints(params[:, 1])}}} : (tensor<6x10xi32>) -> {y_type}
  func.return %y : {y_type}
}}""",
        [a, b, bias],
    )
    tiled = run(
        f"""func.func @main(%a: {a_type}, %b: {b_type}, %bias: tensor<10xi32>, %p: tensor<1x2xi32>) -> {y_type} {{
{constants(values=(0, 16))}
  %ad = tile.to_buffer %a : {a_type} to memref<6x32xi8, "ddr">
  %bd = tile.to_buffer %b : {b_type} to memref<10x32xi8, "ddr">
  %biasd = tile.to_buffer %bias : tensor<10xi32> to memref<10xi32, "ddr">
  %pd = tile.to_buffer %p : tensor<1x2xi32> to memref<1x2xi32, "ddr">
  %as = tile.alloc : memref<6x16xi8, "sram">
  %bs = tile.alloc : memref<10x16xi8, "sram">
  %acc = tile.alloc : memref<6x10xi32, "sram">
  %yd = tile.alloc : memref<6x10xi8, "ddr">
  // A stale accumulator: the first step must overwrite it.
  tile.fill %acc {{value = 12345}} : memref<6x10xi32, "sram">
  tile.copy %ad[%c0, %c0] to %as[%c0, %c0] sizes [6, 16] : memref<6x32xi8, "ddr"> to memref<6x16xi8, "sram">
  tile.copy %bd[%c0, %c0] to %bs[%c0, %c0] sizes [10, 16] : memref<10x32xi8, "ddr"> to memref<10x16xi8, "sram">
  tile.matmul %as, %bs, %acc {{a_zero_point = 7, trans_b = true}} : memref<6x16xi8, "sram">, memref<10x16xi8, "sram">, memref<6x10xi32, "sram">
  tile.copy %ad[%c0, %c16] to %as[%c0, %c0] sizes [6, 16] : memref<6x32xi8, "ddr"> to memref<6x16xi8, "sram">
  tile.copy %bd[%c0, %c16] to %bs[%c0, %c0] sizes [10, 16] : memref<10x32xi8, "ddr"> to memref<10x16xi8, "sram">
  tile.matmul %as, %bs, %acc {{a_zero_point = 7, accumulate = true, trans_b = true}} : memref<6x16xi8, "sram">, memref<10x16xi8, "sram">, memref<6x10xi32, "sram">
  tile.bias_add %acc, %biasd : memref<6x10xi32, "sram">, memref<10xi32, "ddr">
  tile.requantize %acc, %pd, %yd {{output_zero_point = -4}} : memref<6x10xi32, "sram">, memref<1x2xi32, "ddr">, memref<6x10xi8, "ddr">
  %y = tile.to_tensor %yd : memref<6x10xi8, "ddr"> to {y_type}
  func.return %y : {y_type}
}}""",
        [a, b, bias, params],
    )
    assert np.array_equal(tiled, reference)
    assert len(np.unique(reference)) > 20


def test_matmul_without_transpose_matches_int64_numpy() -> None:
    a = RNG.integers(0, 256, (4, 24)).astype(np.uint8)
    b = RNG.integers(-128, 128, (24, 3)).astype(np.int8)
    result = run(
        """func.func @main(%a: tensor<4x24xui8>, %b: tensor<24x3xi8>) -> tensor<4x3xi32> {
  %ad = tile.to_buffer %a : tensor<4x24xui8> to memref<4x24xui8, "ddr">
  %bd = tile.to_buffer %b : tensor<24x3xi8> to memref<24x3xi8, "ddr">
  %acc = tile.alloc : memref<4x3xi32, "ddr">
  tile.matmul %ad, %bd, %acc {a_zero_point = 200} : memref<4x24xui8, "ddr">, memref<24x3xi8, "ddr">, memref<4x3xi32, "ddr">
  %y = tile.to_tensor %acc : memref<4x3xi32, "ddr"> to tensor<4x3xi32>
  func.return %y : tensor<4x3xi32>
}""",
        [a, b],
    )
    expected = (a.astype(np.int64) - 200) @ b.astype(np.int64)
    assert np.array_equal(result, expected)


# --------------------------------------------------------------------------------------
# (d) max and average pooling with padding, tiled by rows


def _pool_programs(kind: str, properties: str, pad: int) -> tuple[str, str]:
    x_type = qtype((1, 7, 7, 4), 0.1, -6)
    y_type = qtype((1, 4, 4, 4), 0.08 if kind == "average" else 0.1, 3 if kind == "average" else -6)
    qnn_properties = 'kernel_shape = [3, 3], layout = "nhwc", pads = [1, 1, 1, 1], strides = [2, 2]'
    tile_properties = (
        f'kind = "{kind}", kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], '
        f"input_h = 7, input_w = 7{properties}"
    )
    if kind == "average":
        multiplier, shift = scheme.rescale_multiplier(0.1, 0.08)
        qnn_properties += f", multiplier = {multiplier}, shift = {shift}"
        tile_properties += f", multiplier = {multiplier}, shift = {shift}"
    reference = f"""func.func @main(%x: {x_type}) -> {y_type} {{
  %y = qnn.{kind}_pool %x {{{qnn_properties}}} : ({x_type}) -> {y_type}
  func.return %y : {y_type}
}}"""
    tiled = f"""func.func @main(%x: {x_type}) -> {y_type} {{
{constants()}
  %xd = tile.to_buffer %x : {x_type} to memref<1x7x7x4xi8, "ddr">
  %yd = tile.alloc : memref<1x4x4x4xi8, "ddr">
  %box = tile.alloc : memref<1x5x9x4xi8, "sram">
  %ys = tile.alloc : memref<1x2x4x4xi8, "sram">
  scf.for %t = %c0 to %c2 step %c1 {{
    %oy = arith.muli %t, %c2 : index
    %twice = arith.muli %oy, %c2 : index
    %top = arith.subi %twice, %c1 : index
    tile.copy %xd[%c0, %top, %cm1, %c0] to %box[%c0, %c0, %c0, %c0] sizes [1, 5, 9, 4] {{pad = {pad}}} : memref<1x7x7x4xi8, "ddr"> to memref<1x5x9x4xi8, "sram">
    tile.pool %box, %ys[%oy, %c0] {{{tile_properties}}} : memref<1x5x9x4xi8, "sram">, memref<1x2x4x4xi8, "sram">
    tile.copy %ys[%c0, %c0, %c0, %c0] to %yd[%c0, %oy, %c0, %c0] sizes [1, 2, 4, 4] : memref<1x2x4x4xi8, "sram"> to memref<1x4x4x4xi8, "ddr">
  }}
  %y = tile.to_tensor %yd : memref<1x4x4x4xi8, "ddr"> to {y_type}
  func.return %y : {y_type}
}}"""
    return reference, tiled


@pytest.mark.parametrize("kind", ["max", "average"])
def test_pooling_with_padding_tiled_by_rows_is_bit_exact(kind: str) -> None:
    x = RNG.integers(-128, 128, (1, 7, 7, 4)).astype(np.int8)
    if kind == "max":
        reference_text, tiled_text = _pool_programs("max", "", -128)
    else:
        reference_text, tiled_text = _pool_programs(
            "average", ", input_zero_point = -6, output_zero_point = 3", -6
        )
    reference = run(reference_text, [x])
    tiled = run(tiled_text, [x])
    assert np.array_equal(tiled, reference)
    if kind == "average":
        # The corner windows divide by 4 taps, the edges by 6, the inside by 9: a
        # tile that counted its padding would differ.
        centered = x.astype(np.int64) + 6
        corner = centered[0, 0:2, 0:2, :].sum(axis=(0, 1))
        expected = fixed_point.divide_round(corner, *scheme.rescale_multiplier(0.1, 0.08), 4) + 3
        assert np.array_equal(tiled[0, 0, 0], np.clip(expected, -128, 127))


# --------------------------------------------------------------------------------------
# (e) add, clamp and lut on tiles


def test_add_tiled_in_halves_is_bit_exact() -> None:
    a = RNG.integers(-128, 128, (1, 4, 4, 8)).astype(np.int8)
    b = RNG.integers(-128, 128, (1, 4, 4, 8)).astype(np.int8)
    a_type, b_type = qtype(a.shape, 0.05, 3), qtype(b.shape, 0.12, -9)
    y_type = qtype(a.shape, 0.1, -2)
    parameters = scheme.add_parameters(0.05, 0.12, 0.1)
    props = ", ".join(f"{name} = {value}" for name, value in sorted(parameters.items()))
    reference = run(
        f"""func.func @main(%a: {a_type}, %b: {b_type}) -> {y_type} {{
  %y = qnn.add %a, %b {{{props}, clamp_min = -2}} : ({a_type}, {b_type}) -> {y_type}
  func.return %y : {y_type}
}}""",
        [a, b],
    )
    sram = 'memref<1x2x4x8xi8, "sram">'
    tiled = run(
        f"""func.func @main(%a: {a_type}, %b: {b_type}) -> {y_type} {{
{constants()}
  %ad = tile.to_buffer %a : {a_type} to memref<1x4x4x8xi8, "ddr">
  %bd = tile.to_buffer %b : {b_type} to memref<1x4x4x8xi8, "ddr">
  %yd = tile.alloc : memref<1x4x4x8xi8, "ddr">
  %as = tile.alloc : {sram}
  %bs = tile.alloc : {sram}
  scf.for %t = %c0 to %c2 step %c1 {{
    %row = arith.muli %t, %c2 : index
    tile.copy %ad[%c0, %row, %c0, %c0] to %as[%c0, %c0, %c0, %c0] sizes [1, 2, 4, 8] : memref<1x4x4x8xi8, "ddr"> to {sram}
    tile.copy %bd[%c0, %row, %c0, %c0] to %bs[%c0, %c0, %c0, %c0] sizes [1, 2, 4, 8] : memref<1x4x4x8xi8, "ddr"> to {sram}
    tile.add %as, %bs, %as {{{props}, clamp_min = -2, lhs_zero_point = 3, rhs_zero_point = -9, output_zero_point = -2}} : {sram}, {sram}, {sram}
    tile.copy %as[%c0, %c0, %c0, %c0] to %yd[%c0, %row, %c0, %c0] sizes [1, 2, 4, 8] : {sram} to memref<1x4x4x8xi8, "ddr">
  }}
  %y = tile.to_tensor %yd : memref<1x4x4x8xi8, "ddr"> to {y_type}
  func.return %y : {y_type}
}}""",
        [a, b],
    )
    assert np.array_equal(tiled, reference)
    assert (reference == -2).any() and len(np.unique(reference)) > 30


def test_clamp_and_lut_match_qnn() -> None:
    x = np.arange(-128, 128, dtype=np.int8).reshape(16, 16)
    table = RNG.integers(-128, 128, 256).astype(np.int8)
    x_type = qtype(x.shape, 0.1, 0)
    reference = run(
        f"""func.func @main(%x: {x_type}) -> {x_type} {{
  %c = qnn.clamp %x {{clamp_min = -20, clamp_max = 90}} : {x_type}
  %y = qnn.lut %c {{function = "sigmoid", table = {ints(table)}}} : ({x_type}) -> {x_type}
  func.return %y : {x_type}
}}""",
        [x],
    )
    buffer = 'memref<16x16xi8, "ddr">'
    tiled = run(
        f"""func.func @main(%x: {x_type}, %table: tensor<256xi8>) -> {x_type} {{
  %xd = tile.to_buffer %x : {x_type} to {buffer}
  %td = tile.to_buffer %table : tensor<256xi8> to memref<256xi8, "ddr">
  %yd = tile.alloc : {buffer}
  tile.clamp %xd, %yd {{clamp_min = -20, clamp_max = 90}} : {buffer}, {buffer}
  tile.lut %yd, %td, %yd : {buffer}, memref<256xi8, "ddr">, {buffer}
  %y = tile.to_tensor %yd : {buffer} to {x_type}
  func.return %y : {x_type}
}}""",
        [x, table],
    )
    assert np.array_equal(tiled, reference)
    assert np.array_equal(tiled, table[np.clip(x.astype(np.int64), -20, 90) + 128])


# --------------------------------------------------------------------------------------
# (f) the conv of (a) in float32 against nn.conv


def test_float_conv_tiled_matches_nn_conv() -> None:
    x = RNG.standard_normal((1, 12, 12, 8)).astype(np.float32)
    w = RNG.standard_normal((16, 3, 3, 8)).astype(np.float32)
    bias = RNG.standard_normal(16).astype(np.float32)
    reference = run(
        """func.func @main(%x: tensor<1x12x12x8xf32>, %w: tensor<16x3x3x8xf32>, %b: tensor<16xf32>) -> tensor<1x12x12x16xf32> {
  %y = nn.conv %x, %w, %b {layout = "nhwc", pads = [1, 1, 1, 1]} : (tensor<1x12x12x8xf32>, tensor<16x3x3x8xf32>, tensor<16xf32>) -> tensor<1x12x12x16xf32>
  func.return %y : tensor<1x12x12x16xf32>
}""",
        [x, w, bias],
    )
    tiled = run(
        f"""func.func @main(%x: tensor<1x12x12x8xf32>, %w: tensor<16x3x3x8xf32>, %b: tensor<16xf32>) -> tensor<1x12x12x16xf32> {{
{constants()}
  %xd = tile.to_buffer %x : tensor<1x12x12x8xf32> to memref<1x12x12x8xf32, "ddr">
  %wd = tile.to_buffer %w : tensor<16x3x3x8xf32> to memref<16x3x3x8xf32, "ddr">
  %bd = tile.to_buffer %b : tensor<16xf32> to memref<16xf32, "ddr">
  %yd = tile.alloc : memref<1x12x12x16xf32, "ddr">
  %box = tile.alloc : memref<1x6x14x4xf32, "sram">
  %ws = tile.alloc : memref<16x3x3x4xf32, "sram">
  %acc = tile.alloc : memref<1x4x12x16xf32, "sram">
  scf.for %r = %c0 to %c3 step %c1 {{
    %row = arith.muli %r, %c4 : index
    %top = arith.subi %row, %c1 : index
    tile.fill %acc {{value = 0.0}} : memref<1x4x12x16xf32, "sram">
    scf.for %k = %c0 to %c2 step %c1 {{
      %channel = arith.muli %k, %c4 : index
      tile.copy %xd[%c0, %top, %cm1, %channel] to %box[%c0, %c0, %c0, %c0] sizes [1, 6, 14, 4] : memref<1x12x12x8xf32, "ddr"> to memref<1x6x14x4xf32, "sram">
      tile.copy %wd[%c0, %c0, %c0, %channel] to %ws[%c0, %c0, %c0, %c0] sizes [16, 3, 3, 4] : memref<16x3x3x8xf32, "ddr"> to memref<16x3x3x4xf32, "sram">
      tile.conv %box, %ws, %acc {{accumulate = true}} : memref<1x6x14x4xf32, "sram">, memref<16x3x3x4xf32, "sram">, memref<1x4x12x16xf32, "sram">
    }}
    tile.bias_add %acc, %bd : memref<1x4x12x16xf32, "sram">, memref<16xf32, "ddr">
    tile.copy %acc[%c0, %c0, %c0, %c0] to %yd[%c0, %row, %c0, %c0] sizes [1, 4, 12, 16] : memref<1x4x12x16xf32, "sram"> to memref<1x12x12x16xf32, "ddr">
  }}
  %y = tile.to_tensor %yd : memref<1x12x12x16xf32, "ddr"> to tensor<1x12x12x16xf32>
  func.return %y : tensor<1x12x12x16xf32>
}}""",
        [x, w, bias],
    )
    assert tiled.dtype == np.float32
    np.testing.assert_allclose(tiled, reference, rtol=1e-5, atol=1e-5)


# --------------------------------------------------------------------------------------
# (g) copy semantics


COPY = """func.func @main(%x: tensor<3x3xi8>) -> tensor<4x4xi8> {{
  %c0 = arith.constant 0 : index
  %cm1 = arith.constant -1 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %xd = tile.to_buffer %x : tensor<3x3xi8> to memref<3x3xi8, "ddr">
  %yd = tile.alloc : memref<4x4xi8, "sram">
  tile.fill %yd {{value = 9}} : memref<4x4xi8, "sram">
  tile.copy %xd[{source}] to %yd[{dest}] sizes [2, 3] {{pad = 7}} : memref<3x3xi8, "ddr"> to memref<4x4xi8, "sram">
  %out = tile.alloc : memref<4x4xi8, "ddr">
  tile.copy %yd[%c0, %c0] to %out[%c0, %c0] sizes [4, 4] : memref<4x4xi8, "sram"> to memref<4x4xi8, "ddr">
  %y = tile.to_tensor %out : memref<4x4xi8, "ddr"> to tensor<4x4xi8>
  func.return %y : tensor<4x4xi8>
}}"""


def test_copy_pads_the_part_of_the_box_outside_the_source() -> None:
    x = np.arange(1, 10, dtype=np.int8).reshape(3, 3)
    result = run(COPY.format(source="%cm1, %c1", dest="%c1, %c0"), [x])
    expected = np.full((4, 4), 9, np.int8)
    # Source rows -1..0 and columns 1..3: row -1 and column 3 are outside, so pad.
    expected[1:3, 0:3] = [[7, 7, 7], [2, 3, 7]]
    assert np.array_equal(result, expected)


@pytest.mark.parametrize(
    ("origin", "factors"),
    [((-1, -2), (2, 3)), ((0, 1), (2, 2)), ((3, -1), (3, 1)), ((5, 0), (2, 1))],
)
def test_copy_upsampled_inserts_pad_between_source_elements(
    origin: tuple[int, int], factors: tuple[int, int]
) -> None:
    x = np.arange(1, 10, dtype=np.int8).reshape(3, 3)
    text = COPY.replace(
        "sizes [2, 3] {{pad = 7}}", f"sizes [4, 4] {{{{pad = 7, upsample = {list(factors)}}}}}"
    )
    constants = {-2: "%cm2", -1: "%cm1", 0: "%c0", 1: "%c1", 3: "%c3", 5: "%c5"}
    text = text.replace(
        "%c3 = arith.constant 3 : index",
        "%c3 = arith.constant 3 : index\n"
        "  %cm2 = arith.constant -2 : index\n  %c5 = arith.constant 5 : index",
    )
    result = run(text.format(source=", ".join(constants[o] for o in origin), dest="%c0, %c0"), [x])
    # The reference: the source with factor - 1 pads between elements, then the box.
    up = np.full(((3 - 1) * factors[0] + 1, (3 - 1) * factors[1] + 1), 7, np.int8)
    up[:: factors[0], :: factors[1]] = x
    padded = np.full((up.shape[0] + 20, up.shape[1] + 20), 7, np.int8)
    padded[10:-10, 10:-10] = up
    expected = padded[10 + origin[0] : 14 + origin[0], 10 + origin[1] : 14 + origin[1]]
    assert np.array_equal(result, expected)


def test_copy_box_outside_the_destination_is_an_error() -> None:
    x = np.arange(1, 10, dtype=np.int8).reshape(3, 3)
    with pytest.raises(IrcError) as failure:
        run(COPY.format(source="%c0, %c0", dest="%c3, %c1"), [x])
    message = str(failure.value)
    assert "destination box [3:5, 1:4]" in message
    assert "shape [4, 4]" in message
    assert "test.mlir:10:" in message


def test_requantize_rejects_bad_parameters_at_run_time() -> None:
    text = """func.func @main(%p: tensor<1x2xi32>) -> tensor<2xi8> {
  %acc = tile.alloc : memref<2xi32, "sram">
  %pd = tile.to_buffer %p : tensor<1x2xi32> to memref<1x2xi32, "ddr">
  %out = tile.alloc : memref<2xi8, "ddr">
  tile.requantize %acc, %pd, %out : memref<2xi32, "sram">, memref<1x2xi32, "ddr">, memref<2xi8, "ddr">
  %y = tile.to_tensor %out : memref<2xi8, "ddr"> to tensor<2xi8>
  func.return %y : tensor<2xi8>
}"""
    with pytest.raises(IrcError, match="channel 0"):
        run(text, [np.array([[5, 0]], np.int32)])
