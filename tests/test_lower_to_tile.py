"""`lower-to-tile` (irc/tiling/lowering.py, the lowerers of irc/backend/) against the `qnn` programs.

Each case writes a small `qnn` program as IR text, forces tiles that leave remainders
(`irc.tile_sizes` on the op, honoured by `plan-tiles`; pads and concats, which
plan-tiles does not plan, get a small SRAM instead), runs the program on random
int8/uint8 data, plans and lowers it to the tile level, runs the lowered program on
the same data and requires identical integers. The lowered module is then checked
for the structure the case is about: one compute op per loop body (remainders
peeled), K splits that accumulate, the stationary operand loaded in the outer loop,
zero-copy concats and in-place ops, ops the tile level does not run left on tensors,
and SRAM buffers that do not overlap.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pytest
from test_interp_tile import qtype
from xdsl.dialects import scf
from xdsl.dialects.builtin import (
    BoolAttr,
    DictionaryAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
)
from xdsl.dialects.func import FuncOp

from irc.backend import CPU, layer_of, lower_function, place
from irc.diagnostics import IrcError, collect_diagnostics
from irc.dialects import tile as tile_dialect
from irc.dialects.quant import UniformQuantizedType
from irc.interp import run_function
from irc.ir import fixed_point
from irc.ir.context import make_context
from irc.ir.io import module_to_string, parse_module, verify_module
from irc.passes import parse_pipeline
from irc.quantize import scheme
from irc.targets import Target, load_target, using_target
from irc.targets.schema import CAST_KINDS
from irc.testing.targets import every_op_supported
from irc.tiling.lowering import Statistics
from irc.tiling.planner import minimum_sram
from irc.transforms.plan_tiles import PLAN_ATTR, plan_module

_EVERY_OP = every_op_supported(load_target("npu-demo"))
NPU_DEMO = dataclasses.replace(
    _EVERY_OP,
    ops=MappingProxyType({k: v for k, v in _EVERY_OP.ops.items() if k not in CAST_KINDS}),
)
"""npu-demo's machine: these tests exercise the lowerings, not its support table; the
float casts around float islands stay on the host (they are tested on their own)."""
PRESETS = Path(__file__).resolve().parents[1] / "irc" / "targets" / "presets"


# --------------------------------------------------------------------------------------
# Writing qnn programs


def force(tile: Sequence[int] | None) -> str:
    """The attribute entry that forces an op's tile (rows, columns, channels, depth)."""
    if tile is None:
        return ""
    return f", irc.tile_sizes = array<i64: {', '.join(str(size) for size in tile)}>"


def dense(array: np.ndarray) -> str:
    """`dense<...>` literal of an integer array."""
    return f"dense<{array.tolist()}>"


def int8(rng: np.random.Generator, shape: Sequence[int]) -> np.ndarray:
    return rng.integers(-128, 128, tuple(shape)).astype(np.int8)


def uint8(rng: np.random.Generator, shape: Sequence[int]) -> np.ndarray:
    return rng.integers(0, 256, tuple(shape)).astype(np.uint8)


def conv_output(size: int, kernel: int, stride: int, dilation: int, before: int, after: int) -> int:
    return (size + before + after - (kernel - 1) * dilation - 1) // stride + 1


@dataclass
class Conv:
    """A `qnn.conv` + `qnn.requantize` with constant weights and bias, as IR lines."""

    lines: str
    output_type: str
    output_shape: tuple[int, int, int, int]


def conv(
    rng: np.random.Generator,
    name: str,
    source: str,
    source_type: str,
    source_shape: Sequence[int],
    out_channels: int,
    *,
    input_scale: float = 0.1,
    kernel: tuple[int, int] = (3, 3),
    strides: tuple[int, int] = (1, 1),
    dilations: tuple[int, int] = (1, 1),
    pads: tuple[int, int, int, int] = (1, 1, 1, 1),
    group: int = 1,
    bias: bool = True,
    output_zero_point: int = 3,
    output_scale: float | None = None,
    relu: bool = True,
    signed: bool = True,
    tile: Sequence[int] | None = None,
) -> Conv:
    """NHWC conv `%{name}` of `source`, requantized per channel (a fused relu: clamp_min
    = the output zero point); the output scale spreads the results over the range."""
    _, height, width, channels = source_shape
    in_per_group = channels // group
    weight = rng.integers(-127, 128, (out_channels, *kernel, in_per_group)).astype(np.int8)
    weight_scales = rng.uniform(0.005, 0.015, out_channels)
    if output_scale is None:
        # |accumulator| ~ 74 * 73 * sqrt(taps * depth): about 40 output steps per sigma.
        taps = kernel[0] * kernel[1] * in_per_group
        output_scale = 5400 * math.sqrt(taps) * input_scale * 0.01 / 40
    multipliers, shifts = scheme.output_multipliers(input_scale, weight_scales, output_scale)
    out_h = conv_output(height, kernel[0], strides[0], dilations[0], pads[0], pads[2])
    out_w = conv_output(width, kernel[1], strides[1], dilations[1], pads[1], pads[3])
    shape = (1, out_h, out_w, out_channels)
    accumulator = f"tensor<{'x'.join(map(str, shape))}xi32>"
    weight_type = qtype(weight.shape, weight_scales, axis=0)
    output_type = qtype(shape, output_scale, output_zero_point, signed=signed)
    properties = ['layout = "nhwc"', f"pads = {list(pads)}"]
    if strides != (1, 1):
        properties.append(f"strides = {list(strides)}")
    if dilations != (1, 1):
        properties.append(f"dilations = {list(dilations)}")
    if group != 1:
        properties.append(f"group = {group}")
    storage = f"tensor<{'x'.join(map(str, weight.shape))}xi8>"
    lines = [
        f"  %{name}_w = qnn.constant {dense(weight)} : {storage} to {weight_type}",
    ]
    operands, types = f"%{source}, %{name}_w", f"{source_type}, {weight_type}"
    if bias:
        values = rng.integers(-3000, 3000, out_channels).astype(np.int32)
        lines.append(f"  %{name}_b = nn.constant {dense(values)} : tensor<{out_channels}xi32>")
        operands += f", %{name}_b"
        types += f", tensor<{out_channels}xi32>"
    clamp = f", clamp_min = {output_zero_point}" if relu else ""
    lines += [
        f"  %{name}_acc = qnn.conv {operands} {{{', '.join(properties)}{force(tile)}}} "
        f": ({types}) -> {accumulator}",
        f"  %{name} = qnn.requantize %{name}_acc {{axis = 3{clamp}, multiplier = {multipliers}, "
        f"shift = {shifts}}} : ({accumulator}) -> {output_type}",
    ]
    return Conv("\n".join(lines), output_type, shape)


def program(
    arguments: Sequence[tuple[str, str]], body: str, results: Sequence[tuple[str, str]]
) -> str:
    """`func.func @main` with these (name, type) arguments and results."""
    signature = ", ".join(f"%{name}: {value_type}" for name, value_type in arguments)
    result_types = ", ".join(value_type for _, value_type in results)
    returned = ", ".join(f"%{name}" for name, _ in results)
    return (
        f"func.func @main({signature}) -> ({result_types}) {{\n{body}\n"
        f"  func.return {returned} : {result_types}\n}}"
    )


# --------------------------------------------------------------------------------------
# Lowering and comparing


@dataclass
class Lowered:
    """A lowered program: its text, the lowering's statistics, what it computes."""

    module: ModuleOp
    text: str
    stats: Statistics
    outputs: dict[str, np.ndarray]
    orders: dict[str, list[str]]
    """The loop order plan-tiles recorded, by op name."""

    def count(self, pattern: str) -> int:
        return len(re.findall(pattern, self.text))

    @property
    def qnn_ops(self) -> set[str]:
        """The qnn ops left in the lowered text (constants aside)."""
        return set(re.findall(r"qnn\.(?!constant)\w+", self.text))

    def largest_sram_buffer(self) -> int:
        """The most elements an SRAM buffer of the lowered program holds."""
        shapes = re.findall(r'memref<([0-9x]+)x(?:i8|ui8|i32|f32), "sram">', self.text)
        return max(math.prod(int(size) for size in shape.split("x")) for shape in shapes)

    def load_depths(self, source_shape: Sequence[int]) -> list[int]:
        """How many `scf.for` loops enclose each copy out of a DDR buffer of this shape."""
        depths = []
        for op in self.module.walk():
            if not isinstance(op, tile_dialect.CopyOp):
                continue
            source = op.source.type
            assert isinstance(source, MemRefType)
            if tuple(source.get_shape()) != tuple(source_shape):
                continue
            depth, parent = 0, op.parent_op()
            while parent is not None:
                depth += isinstance(parent, scf.ForOp)
                parent = parent.parent_op()
            depths.append(depth)
        return depths


def lower(
    text: str,
    inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray],
    target: Target = NPU_DEMO,
    distinct: int = 20,
) -> Lowered:
    """Run `text`, plan and lower it, run the lowered module on the same inputs and
    require identical outputs; each output of the reference must have at least
    `distinct` different values (the data exercises the arithmetic)."""
    module = parse_module(text, make_context(), "test.mlir")
    verify_module(module)
    expected = run_function(module, inputs)
    for name, values in expected.items():
        assert len(np.unique(values)) >= distinct, f"{name} is degenerate: {np.unique(values)}"
    plan_module(module, target)
    orders: dict[str, list[str]] = {}
    for op in module.walk():
        plan = op.attributes.get(PLAN_ATTR)
        if isinstance(plan, DictionaryAttr):
            order = plan.data["order"]
            assert isinstance(order, StringAttr)
            orders.setdefault(op.name, []).append(order.data)
    function = next(op for op in module.ops if isinstance(op, FuncOp))
    stats = lower_function(function, target)
    verify_module(module)
    lowered = module_to_string(module)
    actual = run_function(module, inputs)
    assert list(actual) == list(expected)
    for name in expected:
        assert actual[name].dtype == expected[name].dtype, name
        mismatches = int(np.sum(actual[name] != expected[name]))
        assert mismatches == 0, f"{name}: {mismatches} of {expected[name].size} values differ"
    return Lowered(module, lowered, stats, expected, orders)


def bodies(extents: Sequence[int], tiles: Sequence[int]) -> int:
    """The loop bodies a nest over `extents` in `tiles` has in the text: per dimension,
    the body of the whole tiles and, when the tile does not divide it, the remainder's."""
    return math.prod(
        (extent >= size) + (extent % size != 0) for extent, size in zip(extents, tiles)
    )


def target_with_sram(directory: Path, kib: int) -> Target:
    """npu-demo with `kib` KiB of SRAM, loaded from a target file."""
    preset = (PRESETS / "npu-demo.toml").read_text(encoding="utf-8")
    text = re.sub(r"size_kib = \d+", f"size_kib = {kib}", preset, count=1)  # the SRAM's
    text = text.replace('name = "npu-demo"', f'name = "npu-{kib}k"')
    path = directory / f"npu-{kib}k.toml"
    path.write_text(text, encoding="utf-8")
    target = every_op_supported(load_target(str(path)))
    assert target.scratch.size_bytes == kib * 1024
    return target


def _module_of(lowered_text: str) -> ModuleOp:
    """Parse and verify a lowered program's text."""
    module = parse_module(lowered_text, make_context(), "lowered.mlir")
    verify_module(module)
    return module


# --------------------------------------------------------------------------------------
# 1. A 3x3 conv with remainders everywhere, bias and a fused relu; K split


@pytest.mark.parametrize(
    ("tile", "split"),
    [
        ((3, 4, 8, 24), False),  # rows 3+3+1, columns 4+4+1, channels 8+8+4
        ((3, 4, 8, 8), True),  # K in three steps of 8
        ((3, 4, 8, 10), True),  # K 10+10+4: a remainder step
        ((7, 9, 20, 24), False),  # one tile
    ],
)
def test_conv_3x3_with_remainders_bias_and_relu(tile: tuple[int, ...], split: bool) -> None:
    rng = np.random.default_rng(11)
    x_type = qtype((1, 7, 9, 24), 0.1, -3)
    layer = conv(rng, "y", "x", x_type, (1, 7, 9, 24), 20, tile=tile)
    text = program([("x", x_type)], layer.lines, [("y", layer.output_type)])
    result = lower(text, [int8(rng, (1, 7, 9, 24))], distinct=60)
    assert result.stats.layers == {"qnn.conv": 1}
    assert not result.stats.kept
    assert ("accumulate = true" in result.text) == split
    assert (result.outputs["output_0"] == 3).any()  # the relu clamps at the zero point
    # A conv per loop body (K steps included), a requantize per output tile.
    assert result.count(r"tile\.conv ") == bodies((7, 9, 20, 24), tile)
    assert result.count(r"tile\.requantize ") == bodies((7, 9, 20), tile[:3])
    assert not result.qnn_ops


# --------------------------------------------------------------------------------------
# 2. Strides, dilations, asymmetric pads, uint8 with a zero point


@pytest.mark.parametrize("tile", [(2, 3, 3, 4), (1, 1, 5, 6), None])
def test_strided_dilated_conv_with_asymmetric_pads_on_uint8(tile: tuple[int, ...] | None) -> None:
    rng = np.random.default_rng(12)
    shape = (1, 11, 10, 6)
    x_type = qtype(shape, 0.05, 131, signed=False)
    layer = conv(
        rng, "y", "x", x_type, shape, 5, input_scale=0.05, strides=(2, 2), dilations=(2, 2),
        pads=(0, 1, 2, 1), output_zero_point=100, output_scale=0.1, relu=False, signed=False,
        tile=tile,
    )  # fmt: skip
    assert layer.output_shape == (1, 5, 4, 5)
    text = program([("x", x_type)], layer.lines, [("y", layer.output_type)])
    result = lower(text, [uint8(rng, shape)], distinct=40)
    assert result.outputs["output_0"].dtype == np.uint8
    assert "input_zero_point = 131" in result.text
    assert "pad = 131" in result.text  # the halo holds the zero point
    assert "strides = [2, 2]" in result.text and "dilations = [2, 2]" in result.text
    if tile is not None:
        assert ("accumulate = true" in result.text) == (tile[3] < 6)
        assert result.count(r"tile\.conv ") == bodies((5, 4, 5, 6), tile)


# --------------------------------------------------------------------------------------
# 3. Grouped and depthwise convs


@pytest.mark.parametrize(
    ("tile", "split"),
    [
        ((3, 4, 4, 4), False),  # a channel tile of 2 whole groups
        ((3, 4, 6, 4), False),  # 3 groups, then a remainder of 1 group
        ((3, 4, 1, 3), True),  # one channel inside a group, K 3+1
        ((6, 6, 2, 2), True),  # one group, K 2+2
    ],
)
def test_grouped_conv(tile: tuple[int, ...], split: bool) -> None:
    rng = np.random.default_rng(13)
    shape = (1, 6, 6, 16)
    x_type = qtype(shape, 0.1, 5)
    layer = conv(rng, "y", "x", x_type, shape, 8, group=4, tile=tile)
    text = program([("x", x_type)], layer.lines, [("y", layer.output_type)])
    result = lower(text, [int8(rng, shape)], distinct=40)
    assert result.stats.layers == {"qnn.conv": 1}
    assert ("accumulate = true" in result.text) == split
    # The groups of a channel tile run as one grouped conv (one group: a plain conv).
    groups = re.findall(r"tile\.conv [^{]*\{[^}]*group = (\d+)", result.text)
    whole_groups = tile[2] // 2
    assert (str(whole_groups) in groups) == (whole_groups > 1)
    assert result.count(r"tile\.conv ") == bodies((6, 6, 8, 4), tile)


@pytest.mark.parametrize(
    ("in_channels", "out_channels", "tile"),
    [
        (8, 8, (4, 3, 3, 1)),  # depthwise, channels 3+3+2
        (8, 8, (2, 6, 8, 1)),
        (4, 8, (3, 4, 2, 1)),  # multiplier 2: one group per tile
        (4, 8, (3, 4, 1, 1)),  # multiplier 2: half a group per tile
        (4, 8, (5, 5, 6, 1)),  # multiplier 2: 3 groups, then 1
    ],
)
def test_depthwise_conv(in_channels: int, out_channels: int, tile: tuple[int, ...]) -> None:
    rng = np.random.default_rng(14)
    shape = (1, 7, 6, in_channels)
    x_type = qtype(shape, 0.1, -7)
    layer = conv(
        rng, "y", "x", x_type, shape, out_channels, group=in_channels, strides=(1, 1), tile=tile
    )
    text = program([("x", x_type)], layer.lines, [("y", layer.output_type)])
    result = lower(text, [int8(rng, shape)], distinct=40)
    assert result.stats.layers == {"qnn.conv": 1}
    # A tile of several groups runs as a grouped conv, a tile of one as a plain conv.
    groups_per_tile = tile[2] // (out_channels // in_channels)
    assert ("group = " in result.text) == (groups_per_tile > 1)
    assert "accumulate = true" not in result.text
    assert result.count(r"tile\.conv ") == bodies((7, 6, out_channels), tile[:3])


# --------------------------------------------------------------------------------------
# 3b. Transposed convs: the stride-1 conv over the zero-inserted input


def conv_transpose(
    rng: np.random.Generator,
    source_shape: Sequence[int],
    out_channels: int,
    *,
    kernel: tuple[int, int],
    strides: tuple[int, int],
    pads: tuple[int, int, int, int],
    dilations: tuple[int, int] = (1, 1),
    output_padding: tuple[int, int] = (0, 0),
    group: int = 1,
    zero_point: int = -5,
    tile: Sequence[int] | None = None,
) -> tuple[str, str, tuple[int, ...]]:
    """`func.func @main` of an NHWC `qnn.conv_transpose` (weight [C, KH, KW, M/g],
    per-channel) with bias and its requantize; (text, input type, output shape)."""
    _, height, width, channels = source_shape
    per_group = out_channels // group
    weight = rng.integers(-127, 128, (channels, *kernel, per_group)).astype(np.int8)
    weight_scales = rng.uniform(0.005, 0.015, per_group)
    out = [
        (size - 1) * s + extra + (k - 1) * d + 1 - before - after
        for size, s, extra, k, d, before, after in zip(
            (height, width), strides, output_padding, kernel, dilations, pads[:2], pads[2:]
        )
    ]
    shape = (1, out[0], out[1], out_channels)
    # A pixel sums about taps / strides^2 products of the input channels of its group.
    terms = max(kernel[0] * kernel[1] // (strides[0] * strides[1]), 1) * channels // group
    output_scale = 5400 * math.sqrt(terms) * 0.1 * 0.01 / 40
    multipliers, shifts = scheme.output_multipliers(
        0.1, np.tile(weight_scales, group), output_scale
    )
    x_type = qtype(source_shape, 0.1, zero_point)
    weight_type = qtype(weight.shape, weight_scales, axis=3)
    output_type = qtype(shape, output_scale, 2)
    accumulator = f"tensor<{'x'.join(map(str, shape))}xi32>"
    bias = rng.integers(-3000, 3000, out_channels).astype(np.int32)
    properties = [
        'layout = "nhwc"',
        f"pads = {list(pads)}",
        f"strides = {list(strides)}",
        f"dilations = {list(dilations)}",
        f"output_padding = {list(output_padding)}",
        f"group = {group}",
    ]
    storage = f"tensor<{'x'.join(map(str, weight.shape))}xi8>"
    body = "\n".join(
        [
            f"  %w = qnn.constant {dense(weight)} : {storage} to {weight_type}",
            f"  %b = nn.constant {dense(bias)} : tensor<{out_channels}xi32>",
            f"  %acc = qnn.conv_transpose %x, %w, %b {{{', '.join(properties)}{force(tile)}}} "
            f": ({x_type}, {weight_type}, tensor<{out_channels}xi32>) -> {accumulator}",
            f"  %y = qnn.requantize %acc {{axis = 3, multiplier = {multipliers}, "
            f"shift = {shifts}}} : ({accumulator}) -> {output_type}",
        ]
    )
    return program([("x", x_type)], body, [("y", output_type)]), x_type, shape


@pytest.mark.parametrize(
    ("kernel", "strides", "pads", "dilations", "output_padding", "group", "tile"),
    [
        ((3, 3), (2, 2), (1, 1, 1, 1), (1, 1), (1, 1), 1, (3, 4, 4, 6)),  # remainders
        ((4, 4), (2, 2), (1, 1, 1, 1), (1, 1), (0, 0), 1, (4, 5, 8, 3)),  # K split 3+3
        ((2, 2), (2, 2), (0, 0, 0, 0), (1, 1), (0, 0), 1, None),  # planned
        ((3, 2), (3, 2), (0, 2, 1, 0), (1, 1), (2, 1), 1, (5, 3, 5, 6)),  # asymmetric
        ((3, 3), (1, 1), (1, 1, 1, 1), (2, 2), (0, 0), 1, (4, 4, 8, 6)),  # dilated
        ((3, 3), (2, 2), (1, 1, 1, 1), (1, 1), (1, 1), 2, (4, 4, 2, 2)),  # groups, K split
        ((5, 5), (2, 2), (5, 5, 4, 4), (1, 1), (0, 0), 1, (2, 2, 8, 6)),  # pads > reach
    ],
)
def test_conv_transpose(
    kernel: tuple[int, int],
    strides: tuple[int, int],
    pads: tuple[int, int, int, int],
    dilations: tuple[int, int],
    output_padding: tuple[int, int],
    group: int,
    tile: tuple[int, ...] | None,
) -> None:
    rng = np.random.default_rng(16)
    shape = (1, 5, 6, 6)
    text, _, out_shape = conv_transpose(
        rng, shape, 8, kernel=kernel, strides=strides, pads=pads, dilations=dilations,
        output_padding=output_padding, group=group, tile=tile,
    )  # fmt: skip
    result = lower(text, [int8(rng, shape)], distinct=40)
    assert result.stats.layers == {"qnn.conv_transpose": 1}
    assert not result.qnn_ops
    if strides != (1, 1):
        assert f"upsample = [1, {strides[0]}, {strides[1]}, 1]" in result.text
    assert "strides" not in result.text  # a stride-1 conv
    assert "pad = -5" in result.text  # inserted pixels and halo hold the zero point
    if tile is not None:
        depth = shape[3] // group
        assert result.count(r"tile\.conv ") == bodies((*out_shape[1:], depth), tile)
        assert ("accumulate = true" in result.text) == (tile[3] < depth)


def test_conv_transpose_weights_take_the_place_of_the_originals() -> None:
    rng = np.random.default_rng(17)
    text, _, _ = conv_transpose(
        rng, (1, 4, 4, 8), 16, kernel=(3, 3), strides=(2, 2), pads=(1, 1, 1, 1)
    )
    module = parse_module(text, make_context(), "test.mlir")
    plan_module(module, NPU_DEMO)
    function = next(op for op in module.ops if isinstance(op, FuncOp))
    lower_function(function, NPU_DEMO)
    offsets = [
        (op.properties["offset"], tuple(op.results[0].type.get_shape()))
        for op in module.walk()
        if isinstance(op, tile_dialect.ToBufferOp) and "offset" in op.properties
    ]
    # The flipped [16, 3, 3, 8] weights sit where the [8, 3, 3, 16] ones were planned.
    weights = [offset for offset, shape in offsets if shape == (16, 3, 3, 8)]
    assert len(weights) == 1 and isinstance(weights[0], IntegerAttr)
    assert weights[0].value.data == 0
    assert not [shape for _, shape in offsets if shape == (8, 3, 3, 16)]


# --------------------------------------------------------------------------------------
# 4. Both loop orders


@pytest.mark.parametrize(
    ("shape", "out_channels", "kernel", "tile", "order"),
    [
        # Much input, few weights: each input tile stays while the channel tiles pass.
        ((1, 16, 16, 16), 32, (1, 1), (4, 16, 8, 16), "input"),
        # Many weights, little input: each weight tile stays while the rows pass.
        ((1, 4, 4, 32), 64, (3, 3), (2, 4, 16, 32), "weights"),
    ],
)
def test_both_loop_orders(
    shape: tuple[int, ...],
    out_channels: int,
    kernel: tuple[int, int],
    tile: tuple[int, ...],
    order: str,
) -> None:
    rng = np.random.default_rng(15)
    x_type = qtype(shape, 0.1, 1)
    pad = kernel[0] // 2
    layer = conv(
        rng, "y", "x", x_type, shape, out_channels, kernel=kernel, pads=(pad,) * 4, tile=tile
    )
    text = program([("x", x_type)], layer.lines, [("y", layer.output_type)])
    result = lower(text, [int8(rng, shape)], distinct=60)
    assert result.orders["qnn.conv"] == [order]
    # The stationary operand is loaded in an outer loop, the other in the loop inside.
    input_depths = result.load_depths(shape)
    weight_depths = result.load_depths((out_channels, *kernel, shape[3]))
    assert input_depths and weight_depths
    if order == "input":
        assert max(input_depths) < min(weight_depths)
    else:
        assert max(weight_depths) < min(input_depths)


# --------------------------------------------------------------------------------------
# 5. Matrix products


@pytest.mark.parametrize("trans_b", [True, False])
@pytest.mark.parametrize(("tile", "split"), [((4, 1, 5, 16), True), ((6, 1, 12, 40), False)])
def test_gemm_with_bias_k_split_and_remainders(
    trans_b: bool, tile: tuple[int, ...], split: bool
) -> None:
    rng = np.random.default_rng(16)
    rows, depth, features = 6, 40, 12
    a = int8(rng, (rows, depth))
    b_shape = (features, depth) if trans_b else (depth, features)
    b = rng.integers(-127, 128, b_shape).astype(np.int8)
    bias = rng.integers(-4000, 4000, features).astype(np.int32)
    weight_scales = rng.uniform(0.005, 0.015, features)
    output_scale = 5400 * math.sqrt(depth) * 0.05 * 0.01 / 40
    multipliers, shifts = scheme.output_multipliers(0.05, weight_scales, output_scale)
    a_type = qtype(a.shape, 0.05, 7)
    b_type = qtype(b_shape, weight_scales, axis=0 if trans_b else 1)
    y_type = qtype((rows, features), output_scale, -4)
    transposed = "trans_b = true" if trans_b else ""
    separator = ", " if trans_b else ""
    body = (
        f"  %acc = qnn.gemm %a, %b, %bias {{{transposed}{separator}{force(tile)[2:]}}} "
        f": ({a_type}, {b_type}, tensor<{features}xi32>) -> tensor<{rows}x{features}xi32>\n"
        f"  %y = qnn.requantize %acc {{axis = 1, clamp_min = -60, multiplier = {multipliers}, "
        f"shift = {shifts}}} : (tensor<{rows}x{features}xi32>) -> {y_type}"
    )
    text = program(
        [("a", a_type), ("b", b_type), ("bias", f"tensor<{features}xi32>")], body, [("y", y_type)]
    )
    result = lower(text, [a, b, bias], distinct=30)
    assert result.stats.layers == {"qnn.gemm": 1}
    assert ("accumulate = true" in result.text) == split
    assert ("trans_b = true" in result.text) == trans_b
    assert "a_zero_point = 7" in result.text
    assert result.count(r"tile\.matmul ") == bodies((rows, features, depth), tile[0:1] + tile[2:])


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("tile", [(3, 1, 4, 5), (7, 1, 3, 12)])
def test_matmul_with_a_rank_3_lhs_and_requantize(per_channel: bool, tile: tuple[int, ...]) -> None:
    rng = np.random.default_rng(17)
    a = int8(rng, (2, 5, 12))
    b = rng.integers(-127, 128, (12, 7)).astype(np.int8)
    output_scale = 5400 * math.sqrt(12) * 0.1 * 0.01 / 40
    a_type = qtype(a.shape, 0.1, -2)
    if per_channel:
        weight_scales = rng.uniform(0.005, 0.015, 7)
        b_type = qtype(b.shape, weight_scales, axis=1)
        multipliers, shifts = scheme.output_multipliers(0.1, weight_scales, output_scale)
        axis = "axis = 2, "
    else:
        b_type = qtype(b.shape, 0.01)
        multiplier, shift = fixed_point.quantize_multiplier(0.1 * 0.01 / output_scale)
        multipliers, shifts, axis = [multiplier], [shift], ""
    y_type = qtype((2, 5, 7), output_scale, 6)
    body = (
        f"  %acc = qnn.matmul %a, %b {{{force(tile)[2:]}}} "
        f": ({a_type}, {b_type}) -> tensor<2x5x7xi32>\n"
        f"  %y = qnn.requantize %acc {{{axis}multiplier = {multipliers}, shift = {shifts}}} "
        f": (tensor<2x5x7xi32>) -> {y_type}"
    )
    text = program([("a", a_type), ("b", b_type)], body, [("y", y_type)])
    result = lower(text, [a, b], distinct=30)
    assert result.stats.layers == {"qnn.matmul": 1}
    assert ("accumulate = true" in result.text) == (tile[3] < 12)
    if tile[0] == 3:
        # Rows of 3 over the [2, 5] leading axes: boxes of 1x3 and the remainder 1x2.
        assert "sizes [1, 3, 5]" in result.text and "sizes [1, 2, 2]" in result.text
    else:
        # Rows of 7 hold one whole [5] row: boxes of 1x5.
        assert "sizes [1, 5, 12]" in result.text


@pytest.mark.parametrize("rhs_batch", [(2, 3), (1, 3)])
@pytest.mark.parametrize("tile", [(4, 1, 5, 3), (16, 1, 16, 8)])
def test_a_batched_matmul_of_two_activations(
    rhs_batch: tuple[int, ...], tile: tuple[int, ...]
) -> None:
    # Q x K^T over heads: both sides are activations with zero points, the right side
    # one matrix per batch index (or broadcast over the first batch axis).
    rng = np.random.default_rng(23)
    a = int8(rng, (2, 3, 6, 8))
    b = int8(rng, (*rhs_batch, 8, 5))
    a_type, b_type = qtype(a.shape, 0.1, -3), qtype(b.shape, 0.05, 7)
    output_scale = 0.1 * 0.05 * 40
    multiplier, shift = fixed_point.quantize_multiplier(0.1 * 0.05 / output_scale)
    y_type = qtype((2, 3, 6, 5), output_scale, -1)
    body = (
        f"  %acc = qnn.matmul %a, %b {{{force(tile)[2:]}}} "
        f": ({a_type}, {b_type}) -> tensor<2x3x6x5xi32>\n"
        f"  %y = qnn.requantize %acc {{multiplier = [{multiplier}], shift = [{shift}]}} "
        f": (tensor<2x3x6x5xi32>) -> {y_type}"
    )
    text = program([("a", a_type), ("b", b_type)], body, [("y", y_type)])
    result = lower(text, [a, b], distinct=30)
    assert result.stats.layers == {"qnn.matmul": 1}
    assert "b_zero_point = 7" in result.text
    # One right-side matrix (or a part of its columns) per batch index, never more.
    assert f"sizes [1, 1, {min(8, tile[3])}, {min(5, tile[2])}]" in result.text
    assert ("accumulate = true" in result.text) == (tile[3] < 8)


def test_mac_layers_without_a_requantize_store_their_int32_accumulators() -> None:
    rng = np.random.default_rng(31)
    x_type = qtype((1, 5, 6, 12), 0.1, -3)
    weights = rng.integers(-127, 128, (7, 3, 3, 12)).astype(np.int8)
    w_type = qtype(weights.shape, rng.uniform(0.005, 0.015, 7), axis=0)
    a = uint8(rng, (6, 40))
    a_type = qtype(a.shape, 0.05, 130, signed=False)
    b = rng.integers(-127, 128, (40, 9)).astype(np.int8)
    b_type = qtype(b.shape, rng.uniform(0.005, 0.015, 9), axis=1)
    body = (
        f'  %conv = qnn.conv %x, %w, %bias {{layout = "nhwc", pads = [1, 1, 1, 1]'
        f"{force((2, 4, 3, 5))}}} : ({x_type}, {w_type}, tensor<7xi32>) -> tensor<1x5x6x7xi32>\n"
        f"  %gemm = qnn.gemm %a, %b {{{force((4, 1, 5, 16))[2:]}}} "
        f": ({a_type}, {b_type}) -> tensor<6x9xi32>\n"
        f"  %matmul = qnn.matmul %a, %b {{{force((6, 1, 4, 40))[2:]}}} "
        f": ({a_type}, {b_type}) -> tensor<6x9xi32>"
    )
    text = program(
        [("x", x_type), ("w", w_type), ("bias", "tensor<7xi32>"), ("a", a_type), ("b", b_type)],
        body,
        [("conv", "tensor<1x5x6x7xi32>"), ("gemm", "tensor<6x9xi32>"),
         ("matmul", "tensor<6x9xi32>")],
    )  # fmt: skip
    inputs = [int8(rng, (1, 5, 6, 12)), weights, rng.integers(-999, 999, 7).astype(np.int32), a, b]
    result = lower(text, inputs, distinct=50)
    assert result.stats.layers == {"qnn.conv": 1, "qnn.gemm": 1, "qnn.matmul": 1}
    assert "tile.requantize" not in result.text
    assert "a_zero_point = 130" in result.text
    # The i32 tiles go straight to DDR.
    assert result.count(r'to memref<1x5x6x7xi32, "ddr">') >= bodies((5, 6, 7), (2, 4, 3))


# --------------------------------------------------------------------------------------
# 6. Pooling


@dataclass(frozen=True)
class Pool:
    """A qnn pooling op's kind and window."""

    kind: str
    kernel: tuple[int, int] = (3, 3)
    strides: tuple[int, int] = (2, 2)
    pads: tuple[int, int, int, int] = (1, 1, 1, 1)
    dilations: tuple[int, int] = (1, 1)
    ceil_mode: bool = False
    count_include_pad: bool = False

    def output(self, height: int, width: int) -> tuple[int, int]:
        """ONNX's output size (in ceil mode, no window starts in the end padding)."""
        if self.kind == "global_average_pool":
            return 1, 1
        sizes = []
        for axis, extent in enumerate((height, width)):
            span = extent + self.pads[axis] + self.pads[axis + 2]
            span -= (self.kernel[axis] - 1) * self.dilations[axis] + 1
            stride = self.strides[axis]
            count = (-(-span // stride) if self.ceil_mode else span // stride) + 1
            if self.ceil_mode and (count - 1) * stride >= extent + self.pads[axis]:
                count -= 1
            sizes.append(count)
        return sizes[0], sizes[1]

    def properties(self) -> list[str]:
        if self.kind == "global_average_pool":
            return []
        entries = [
            f"kernel_shape = {list(self.kernel)}",
            f"strides = {list(self.strides)}",
            f"pads = {list(self.pads)}",
            f"dilations = {list(self.dilations)}",
        ]
        if self.ceil_mode:
            entries.append("ceil_mode = true")
        if self.count_include_pad:
            entries.append("count_include_pad = true")
        return entries


POOLS = {
    "max ceil": Pool("max_pool", ceil_mode=True),
    "max dilated asymmetric": Pool("max_pool", (2, 3), (1, 2), (0, 1, 1, 0), (2, 1)),
    "average include": Pool("average_pool", count_include_pad=True),
    "average exclude": Pool("average_pool"),
    "average exclude ceil": Pool("average_pool", ceil_mode=True),
    "average include ceil asymmetric": Pool(
        "average_pool", (3, 2), (2, 2), (1, 0, 0, 1), ceil_mode=True, count_include_pad=True
    ),
    "average dilated": Pool("average_pool", (2, 2), (1, 3), (1, 1, 1, 0), (2, 1), True, True),
    "average 2x2": Pool("average_pool", (2, 2), (1, 1), (0, 0, 0, 0)),
    "global": Pool("global_average_pool"),
}


@pytest.mark.parametrize("case", POOLS)
@pytest.mark.parametrize(("tile", "signed"), [((2, 2, 12, 1), True), ((4, 3, 16, 1), False)])
def test_pooling_with_row_and_channel_remainders(
    case: str, tile: tuple[int, ...], signed: bool
) -> None:
    rng = np.random.default_rng(18)
    pool = POOLS[case]
    shape = (1, 10, 9, 20)
    out_h, out_w = pool.output(shape[1], shape[2])
    x_scale, x_zero = 0.0917, -4 if signed else 120
    average = pool.kind != "max_pool"
    y_scale, y_zero = (0.0713, 6 if signed else 130) if average else (x_scale, x_zero)
    x_type = qtype(shape, x_scale, x_zero, signed=signed)
    y_type = qtype((1, out_h, out_w, shape[3]), y_scale, y_zero, signed=signed)
    entries = ['layout = "nhwc"', *pool.properties()]
    if average:
        multiplier, shift = scheme.rescale_multiplier(x_scale, y_scale)
        entries.append(f"multiplier = {multiplier}, shift = {shift}")
    body = (
        f"  %y = qnn.{pool.kind} %x {{{', '.join(entries)}{force(tile)}}} : ({x_type}) -> {y_type}"
    )
    text = program([("x", x_type)], body, [("y", y_type)])
    x = int8(rng, shape) if signed else uint8(rng, shape)
    distinct = 10 if pool.kind == "global_average_pool" else 80
    result = lower(text, [x], distinct=distinct)
    assert result.stats.layers == {f"qnn.{pool.kind}": 1}
    assert ('kind = "max"' in result.text) == (pool.kind == "max_pool")
    # The halo holds what never changes the result: the storage minimum for a max,
    # the zero point for an average.
    pad = (-128 if signed else 0) if pool.kind == "max_pool" else x_zero
    if any(pool.pads) or pool.kind != "max_pool":
        assert f"pad = {pad}" in result.text or pad == 0
    # One pool per loop body: whole tiles in a loop, each remainder peeled.
    extents = (out_h, out_w, shape[3])
    assert result.count(r"tile\.pool ") == bodies(extents, tile[:3])


# --------------------------------------------------------------------------------------
# 7. Elementwise ops


ELEMENTWISE_SHAPE = (1, 5, 6, 20)


def _elementwise_program(
    kind: str, rng: np.random.Generator, tile: Sequence[int]
) -> tuple[str, list[np.ndarray]]:
    shape = ELEMENTWISE_SHAPE
    a_type, b_type = qtype(shape, 0.05, 3), qtype(shape, 0.12, -9)
    a, b = int8(rng, shape), int8(rng, shape)
    forced = force(tile)
    if kind == "add":
        y_type = qtype(shape, 0.1, -2)
        props = ", ".join(
            f"{k} = {v}" for k, v in sorted(scheme.add_parameters(0.05, 0.12, 0.1).items())
        )
        body = f"  %y = qnn.add %a, %b {{{props}, clamp_min = -2{forced}}} : ({a_type}, {b_type}) -> {y_type}"
        return program([("a", a_type), ("b", b_type)], body, [("y", y_type)]), [a, b]
    if kind == "mul":
        y_type = qtype(shape, 0.2, 1)
        props = ", ".join(
            f"{k} = {v}" for k, v in sorted(scheme.mul_parameters(0.05, 0.12, 0.2).items())
        )
        body = f"  %y = qnn.mul %a, %b {{{props}{forced}}} : ({a_type}, {b_type}) -> {y_type}"
        return program([("a", a_type), ("b", b_type)], body, [("y", y_type)]), [a, b]
    if kind == "clamp":
        body = f"  %y = qnn.clamp %a {{clamp_min = -20, clamp_max = 90{forced}}} : {a_type}"
        return program([("a", a_type)], body, [("y", a_type)]), [a]
    if kind == "lut":
        y_type = qtype(shape, 1 / 128, 0)
        table = scheme.build_lut(np.tanh, _element(a_type), _element(y_type))
        body = f'  %y = qnn.lut %a {{function = "sigmoid", table = {table.tolist()}{forced}}} : ({a_type}) -> {y_type}'
        return program([("a", a_type)], body, [("y", y_type)]), [a]
    if kind == "lut u8":
        x_type, y_type = qtype(shape, 0.05, 128, signed=False), qtype(shape, 0.1, -5)
        table = rng.integers(-128, 128, 256)
        body = f'  %y = qnn.lut %x {{function = "sigmoid", table = {table.tolist()}{forced}}} : ({x_type}) -> {y_type}'
        return program([("x", x_type)], body, [("y", y_type)]), [uint8(rng, shape)]
    if kind == "requantize":
        y_type = qtype(shape, 0.03, 120, signed=False)
        multiplier, shift = scheme.rescale_multiplier(0.05, 0.03)
        body = (
            f"  %y = qnn.requantize %a {{multiplier = [{multiplier}], shift = [{shift}], "
            f"clamp_max = 230{forced}}} : ({a_type}) -> {y_type}"
        )
        return program([("a", a_type)], body, [("y", y_type)]), [a]
    assert kind == "requantize per channel"
    y_type = qtype(shape, 0.1, -1)
    multipliers, shifts = fixed_point.quantize_multipliers(rng.uniform(0.3, 1.5, shape[3]))
    body = (
        f"  %y = qnn.requantize %a {{axis = 3, multiplier = {multipliers}, shift = {shifts}"
        f"{forced}}} : ({a_type}) -> {y_type}"
    )
    return program([("a", a_type)], body, [("y", y_type)]), [a]


def _element(type_text: str) -> UniformQuantizedType:
    module = parse_module(
        f"func.func @main(%x: {type_text}) -> {type_text} {{\n  func.return %x : {type_text}\n}}",
        make_context(),
        "type.mlir",
    )
    function = next(op for op in module.ops if isinstance(op, FuncOp))
    element = function.args[0].type.get_element_type()  # type: ignore[attr-defined]
    assert isinstance(element, UniformQuantizedType)
    return element


ELEMENTWISE = ["add", "mul", "clamp", "lut", "lut u8", "requantize", "requantize per channel"]


@pytest.mark.parametrize("kind", ELEMENTWISE)
@pytest.mark.parametrize(
    ("tile", "boxes"),
    [
        ((4, 1, 8, 1), (1, 1, 4)),  # 4 rows: 1x1x4 boxes (columns 4+2), channels 8+8+4
        ((12, 1, 16, 1), (1, 2, 6)),  # 12 rows: 1x2x6 boxes (rows 2+2+1), channels 16+4
    ],
)
def test_elementwise_with_remainders(
    kind: str, tile: tuple[int, ...], boxes: tuple[int, ...]
) -> None:
    rng = np.random.default_rng(19)
    text, inputs = _elementwise_program(kind, rng, tile)
    result = lower(text, inputs, distinct=30)
    name = kind.split()[0]
    assert result.stats.layers == {f"qnn.{name}": 1}
    assert not result.stats.kept
    assert not result.qnn_ops
    # One op per loop body: the plan's rows become boxes over the leading axes.
    expected = bodies(ELEMENTWISE_SHAPE, (*boxes, tile[2]))
    assert result.count(rf"tile\.{name} ") == expected


def _softmax_program(input_type: str, output_type: str, tile: Sequence[int] | None) -> str:
    props = scheme.softmax_parameters(_element(input_type), _element(output_type))
    body = (
        f"  %y = qnn.softmax %x {{multiplier = {props['multiplier']}, shift = "
        f"{props['shift']}, table = {props['table']}{force(tile)}}} : ({input_type}) -> "
        f"{output_type}"
    )
    return program([("x", input_type)], body, [("y", output_type)])


@pytest.mark.parametrize(
    ("signed", "tile", "boxes"),
    [
        (True, None, None),
        (False, None, None),
        # A forced tile of 8 channels: a softmax's tiles hold whole rows, so 20.
        (True, (4, 1, 8, 1), (1, 1, 4, 20)),
    ],
)
def test_a_softmax_runs_on_whole_rows_bit_exactly(
    signed: bool, tile: tuple[int, ...] | None, boxes: tuple[int, ...] | None
) -> None:
    """qnn.softmax over the last axis: tiles of whole rows, the exp table in SRAM once,
    and the tile level's integers exactly the reference's."""
    rng = np.random.default_rng(23)
    shape = ELEMENTWISE_SHAPE
    if signed:
        x_type, x = qtype(shape, 0.06, 3), int8(rng, shape)
    else:
        x_type, x = qtype(shape, 0.04, 128, signed=False), uint8(rng, shape)
    y_type = qtype(shape, 1 / 255, -128)
    result = lower(_softmax_program(x_type, y_type, tile), [x], distinct=30)
    assert result.stats.layers == {"qnn.softmax": 1}
    assert not result.qnn_ops
    assert result.count(r"tile\.softmax ") >= 1
    assert re.search(r"memref<256xi16, \"sram\">", result.text)
    if boxes is not None:
        assert result.count(r"tile\.softmax ") == bodies(shape, boxes)
        assert re.findall(r"tile\.softmax [^\n]*: memref<(\d+)x(\d+)x", result.text)
    for sizes in re.findall(r"tile\.softmax [^\n]*: memref<([0-9x]+)xi8", result.text):
        assert sizes.split("x")[-1] == "20", sizes  # whole rows


@pytest.mark.parametrize("tile", [None, (2, 1, 8, 1)])
def test_a_layer_norm_runs_on_whole_rows_bit_exactly(tile: tuple[int, ...] | None) -> None:
    """qnn.layer_norm over the last axis: tiles of whole rows (a forced tile of 8
    channels gets all 20), its (weight, bias) pairs in SRAM, the tile level's integers
    exactly the reference's."""
    rng = np.random.default_rng(29)
    shape = ELEMENTWISE_SHAPE
    x_type, y_type = qtype(shape, 0.05, 3), qtype(shape, 4 / 255, -2)
    props = scheme.layer_norm_parameters(
        _element(x_type),
        _element(y_type),
        rng.uniform(0.5, 1.5, shape[-1]),
        rng.uniform(-0.2, 0.2, shape[-1]),
        1e-5,
    )
    entries = ", ".join(f"{key} = {value}" for key, value in sorted(props.items()))
    body = f"  %y = qnn.layer_norm %x {{{entries}{force(tile)}}} : ({x_type}) -> {y_type}"
    text = program([("x", x_type)], body, [("y", y_type)])
    result = lower(text, [int8(rng, shape)], distinct=30)
    assert result.stats.layers == {"qnn.layer_norm": 1}
    assert not result.qnn_ops
    assert re.search(r'memref<20x2xi32, "sram">', result.text)
    sizes = re.findall(r"tile\.layer_norm [^\n]*: memref<([0-9x]+)xi8", result.text)
    assert sizes and all(size.split("x")[-1] == "20" for size in sizes)


def test_a_broadcasting_add_is_tiled() -> None:
    """A per-channel operand [1, 1, 1, C]: its box is one pixel of the output box's
    channels, broadcast by tile.add."""
    rng = np.random.default_rng(20)
    shape = ELEMENTWISE_SHAPE
    a_type, b_type = qtype(shape, 0.05, 3), qtype((1, 1, 1, shape[3]), 0.12, -9)
    y_type = qtype(shape, 0.1, -2)
    props = ", ".join(
        f"{k} = {v}" for k, v in sorted(scheme.add_parameters(0.05, 0.12, 0.1).items())
    )
    x_type = qtype(shape, 0.05, 3)
    body = (
        f"  %a = qnn.clamp %x {{clamp_min = -100}} : {x_type}\n"
        f"  %y = qnn.add %a, %b {{{props}}} : ({a_type}, {b_type}) -> {y_type}"
    )
    text = program([("x", x_type), ("b", b_type)], body, [("y", y_type)])
    result = lower(text, [int8(rng, shape), int8(rng, (1, 1, 1, shape[3]))], distinct=30)
    assert result.stats.kept == {}
    assert result.stats.layers == {"qnn.clamp": 1, "qnn.add": 1}
    assert result.count(r"tile\.add ") >= 1
    assert result.count(r'to memref<1x1x1x\d+xi8, "sram">') >= 1  # the operand's box


@pytest.mark.parametrize(
    ("shape", "tile", "boxes"),
    [
        ((50,), (1, 1, 16, 1), ()),  # a vector: channels 16+16+16+2
        ((7, 20), (3, 1, 8, 1), (3,)),  # rows 3+3+1, channels 8+8+4
        ((2, 3, 4, 5, 6), (5, 1, 4, 1), (1, 1, 1, 5)),  # rank 5: channels 4+2
        ((2, 3, 4, 5, 6), (40, 1, 6, 1), (1, 2, 4, 5)),  # 2 whole inner axes, then 2 of 3
    ],
)
def test_elementwise_ops_of_other_ranks(
    shape: tuple[int, ...], tile: tuple[int, ...], boxes: tuple[int, ...]
) -> None:
    rng = np.random.default_rng(32)
    a_type, y_type = qtype(shape, 0.05, 3), qtype(shape, 0.1, -1)
    props = ", ".join(
        f"{k} = {v}" for k, v in sorted(scheme.add_parameters(0.05, 0.05, 0.1).items())
    )
    body = (
        f"  %c = qnn.clamp %a {{clamp_min = -60, clamp_max = 70{force(tile)}}} : {a_type}\n"
        f"  %y = qnn.add %c, %a {{{props}{force(tile)}}} : ({a_type}, {a_type}) -> {y_type}"
    )
    text = program([("a", a_type)], body, [("y", y_type)])
    result = lower(text, [int8(rng, shape)], distinct=30)
    assert result.stats.layers == {"qnn.clamp": 1, "qnn.add": 1}
    # Rows map onto the leading axes (whole inner axes first): one body per box kind.
    expected = bodies(shape, (*boxes, tile[2]))
    assert result.count(r"tile\.clamp ") == expected
    assert result.count(r"tile\.add ") == expected


def test_an_elementwise_op_of_a_conv_output_with_itself_runs_in_place() -> None:
    rng = np.random.default_rng(33)
    shape = (1, 6, 5, 8)
    x_type = qtype(shape, 0.1, 2)
    layer = conv(rng, "p", "x", x_type, shape, 4, tile=(4, 2, 4, 8), output_scale=1.0, relu=False)
    parameters = scheme.mul_parameters(1.0, 1.0, 40.0)
    y_type = qtype((1, 6, 5, 4), 40.0, 0)
    body = (
        f"{layer.lines}\n"
        f"  %y = qnn.mul %p, %p {{multiplier = {parameters['multiplier']}, "
        f"shift = {parameters['shift']}{force((7, 1, 3, 1))}}} "
        f": ({layer.output_type}, {layer.output_type}) -> {y_type}"
    )
    text = program([("x", x_type)], body, [("y", y_type)])
    result = lower(text, [int8(rng, shape)], distinct=30)
    assert result.stats.layers == {"qnn.conv": 1, "qnn.mul": 1}
    # The square is written over the conv's output: one DDR buffer for both.
    assert result.count(r'tile\.alloc[^:]*: memref<1x6x5x4xi8, "ddr">') == 1


SIGNEDNESS_CHANGES = {
    "requantize": "qnn.requantize %b {{multiplier = [1073741824], shift = [0]}} : ({a}) -> {u}",
    "lut": 'qnn.lut %b {{function = "sigmoid", table = {table}}} : ({a}) -> {u}',
}


@pytest.mark.parametrize("kind", SIGNEDNESS_CHANGES)
def test_an_elementwise_op_from_int8_to_uint8_of_a_computed_value(kind: str) -> None:
    rng = np.random.default_rng(38)
    shape = (1, 4, 4, 8)
    a_type = qtype(shape, 0.05, 3)
    u_type = qtype(shape, 0.05, 128, signed=False)
    table = rng.integers(0, 256, 256).tolist()
    operation = SIGNEDNESS_CHANGES[kind].format(a=a_type, u=u_type, table=table)
    body = f"  %b = qnn.clamp %a {{clamp_min = -100}} : {a_type}\n  %y = {operation}"
    text = program([("a", a_type)], body, [("y", u_type)])
    result = lower(text, [int8(rng, shape)], distinct=40)
    assert result.stats.layers == {"qnn.clamp": 1, f"qnn.{kind}": 1}


# --------------------------------------------------------------------------------------
# 8. Pads


@pytest.mark.parametrize(
    "pads",
    [
        [0, 1, 2, 0, 0, 2, 1, 3],
        [0, -1, 1, 2, 0, 2, -2, 0],  # crops rows and columns
        [0, 0, 0, 0, 0, 0, 0, 0],
    ],
)
def test_constant_pad(pads: list[int], tmp_path: Path) -> None:
    rng = np.random.default_rng(21)
    shape = (1, 12, 7, 10)
    out = [size + pads[axis] + pads[axis + 4] for axis, size in enumerate(shape)]
    x_type, y_type = qtype(shape, 0.1, -17), qtype(out, 0.1, -17)
    # plan-tiles does not plan pads: with 1 KiB of SRAM the lowering's own plan cuts
    # the pad into several tiles.
    body = f"  %y = qnn.pad %x {{pads = {pads}}} : ({x_type}) -> {y_type}"
    text = program([("x", x_type)], body, [("y", y_type)])
    result = lower(text, [int8(rng, shape)], target_with_sram(tmp_path, 1), distinct=100)
    assert result.stats.layers == {"qnn.pad": 1}
    assert result.largest_sram_buffer() < math.prod(out)  # moved in several tiles
    if any(p > 0 for p in pads):
        assert "pad = -17" in result.text  # the border holds the zero point


def test_the_lowering_honours_a_forced_tile_on_ops_plan_tiles_does_not_plan() -> None:
    """irc.tile_sizes on a pad: boxes of 2 rows (of 6x7 pixels: 3 whole) and 4 of 10
    channels (2 whole, a remainder of 2), so 3 x 3 copies out of the input."""
    rng = np.random.default_rng(23)
    shape = (1, 6, 7, 10)
    x_type = qtype(shape, 0.1, -17)
    body = (
        f"  %y = qnn.pad %x {{pads = [0, 0, 0, 0, 0, 0, 0, 0], "
        f"irc.tile_sizes = array<i64: 14, 1, 4, 1>}} : ({x_type}) -> {x_type}"
    )
    text = program([("x", x_type)], body, [("y", x_type)])
    result = lower(text, [int8(rng, shape)], distinct=100)
    assert result.stats.layers == {"qnn.pad": 1}
    assert result.count(r'to memref<1x2x7x4xi8, "sram">') == 1  # the whole tiles' box
    assert result.count(r'to memref<1x2x7x2xi8, "sram">') == 1  # the channel remainder
    # A malformed forced tile is an error at the op.
    bad = text.replace("array<i64: 14, 1, 4, 1>", "array<i64: 14, 1>")
    module = parse_module(bad, make_context(), "test.mlir")
    function = next(op for op in module.ops if isinstance(op, FuncOp))
    with pytest.raises(IrcError, match="a tile is 4 positive sizes"):
        lower_function(function, NPU_DEMO)


def test_a_reflect_pad_stays_on_tensors() -> None:
    rng = np.random.default_rng(22)
    shape = (1, 6, 7, 10)
    x_type = qtype(shape, 0.1, -17)
    layer = conv(rng, "c", "x", x_type, shape, 10, tile=(3, 7, 10, 10), output_scale=1.0)
    pads = [0, 1, 2, 0, 0, 2, 1, 0]
    out = [size + pads[axis] + pads[axis + 4] for axis, size in enumerate(layer.output_shape)]
    y_type = qtype(out, 1.0, 3)
    body = (
        f"{layer.lines}\n"
        f'  %y = qnn.pad %c {{pads = {pads}, mode = "reflect"}} : ({layer.output_type}) -> {y_type}'
    )
    text = program([("x", x_type)], body, [("y", y_type)])
    result = lower(text, [int8(rng, shape)], distinct=40)
    assert result.stats.kept == {"qnn.pad": 1}
    assert result.stats.layers == {"qnn.conv": 1}
    assert 'mode = "reflect"' in result.text
    assert "tile.to_tensor" in result.text  # the conv's output, read back for the pad


# --------------------------------------------------------------------------------------
# 9. Concats


def _two_convs_and_concat(
    rng: np.random.Generator, axis: int, also_return: bool
) -> tuple[str, list[tuple[int, ...]]]:
    """Two convs of one input concatenated along `axis`; the text and the convs' shapes.
    With `also_return`, the convs' outputs are results too (so not zero-copy slices)."""
    shape = (1, 6, 5, 8)
    x_type = qtype(shape, 0.1, 2)
    first = conv(rng, "p", "x", x_type, shape, 8, tile=(4, 5, 8, 8), output_scale=1.0)
    # The second conv matches the first on every axis but `axis`.
    channels, pads = {3: (4, (1, 1, 1, 1)), 1: (8, (0, 1, 0, 1)), 2: (8, (1, 0, 1, 0))}[axis]
    second = conv(rng, "q", "x", x_type, shape, channels, pads=pads, tile=(2, 3, 3, 8),
                  output_scale=1.0)  # fmt: skip
    joined = list(first.output_shape)
    joined[axis] += second.output_shape[axis]
    y_type = qtype(joined, 1.0, 3)
    body = (
        f"{first.lines}\n{second.lines}\n"
        f"  %y = qnn.concat %p, %q {{axis = {axis}}} "
        f": ({first.output_type}, {second.output_type}) -> {y_type}"
    )
    results = [("y", y_type)]
    if also_return:
        results += [("p", first.output_type), ("q", second.output_type)]
    return program([("x", x_type)], body, results), [first.output_shape, second.output_shape]


@pytest.mark.parametrize("axis", [3, 1, 2])
def test_a_concat_of_conv_outputs_is_zero_copy(axis: int) -> None:
    rng = np.random.default_rng(23)
    x = int8(rng, (1, 6, 5, 8))
    text, shapes = _two_convs_and_concat(np.random.default_rng(5), axis, False)
    zero_copy = lower(text, [x])
    copied = lower(_two_convs_and_concat(np.random.default_rng(5), axis, True)[0], [x])
    assert zero_copy.stats.layers == {"qnn.conv": 2, "qnn.concat": 1}
    assert np.array_equal(zero_copy.outputs["output_0"], copied.outputs["output_0"])
    # The convs store their tiles straight into the concat's buffer: no buffers of
    # their own, and fewer copies than when they must also be returned.
    assert zero_copy.count(r"tile\.copy") < copied.count(r"tile\.copy")
    for shape in shapes:
        own = rf'tile\.alloc[^:]*: memref<{"x".join(map(str, shape))}xi8, "ddr">'
        assert zero_copy.count(own) == 0
        assert copied.count(own) == 1


def test_a_concat_rescales_inputs_of_other_scales(tmp_path: Path) -> None:
    rng = np.random.default_rng(24)
    shapes = [(1, 12, 7, 6), (1, 12, 7, 10), (1, 12, 7, 3)]
    scales, zeros = [0.0513, 0.1137, 0.0871], [0, -20, -3]
    y_scale, y_zero = 0.0871, -3
    types = [qtype(shape, scale, zero) for shape, scale, zero in zip(shapes, scales, zeros)]
    y_type = qtype((1, 12, 7, 19), y_scale, y_zero)
    pairs = [scheme.rescale_multiplier(scale, y_scale) for scale in scales]
    pairs[2] = fixed_point.IDENTITY_MULTIPLIER  # the same type as the result: copied as is
    body = (
        f"  %y = qnn.concat %a, %b, %c {{axis = 3, multipliers = {[m for m, _ in pairs]}, "
        f"shifts = {[s for _, s in pairs]}}} "
        f": ({', '.join(types)}) -> {y_type}"
    )
    text = program(list(zip("abc", types)), body, [("y", y_type)])
    inputs = [int8(rng, shape) for shape in shapes]
    # A concat is not planned by plan-tiles: 1 KiB of SRAM makes the lowering tile it.
    result = lower(text, inputs, target_with_sram(tmp_path, 1), distinct=100)
    assert result.stats.layers == {"qnn.concat": 1}
    # a and b are rescaled tile by tile, c only copied.
    assert result.count(r"tile\.requantize ") >= 2
    assert result.largest_sram_buffer() < math.prod(shapes[1])


def test_a_concat_of_a_conv_output_and_a_function_argument() -> None:
    rng = np.random.default_rng(25)
    shape = (1, 6, 5, 8)
    x_type = qtype(shape, 0.1, 2)
    layer = conv(rng, "p", "x", x_type, shape, 4, tile=(4, 2, 4, 8), output_scale=1.0)
    z_type = qtype((1, 6, 5, 3), 1.0, 3)
    y_type = qtype((1, 6, 5, 7), 1.0, 3)
    body = (
        f"{layer.lines}\n"
        f"  %y = qnn.concat %z, %p {{axis = 3}} : ({z_type}, {layer.output_type}) -> {y_type}"
    )
    text = program([("x", x_type), ("z", z_type)], body, [("y", y_type)])
    result = lower(text, [int8(rng, shape), int8(rng, (1, 6, 5, 3))], distinct=60)
    assert result.stats.layers == {"qnn.conv": 1, "qnn.concat": 1}
    assert 'memref<1x6x5x4xi8, "ddr">' not in result.text  # the conv writes its slice


def test_a_concat_of_one_value_twice_copies_it() -> None:
    rng = np.random.default_rng(34)
    shape = (1, 6, 5, 8)
    x_type = qtype(shape, 0.1, 2)
    layer = conv(rng, "p", "x", x_type, shape, 4, tile=(4, 2, 4, 8), output_scale=1.0)
    y_type = qtype((1, 6, 5, 8), 1.0, 3)
    body = (
        f"{layer.lines}\n"
        f"  %y = qnn.concat %p, %p {{axis = 3{force((7, 1, 4, 1))}}} "
        f": ({layer.output_type}, {layer.output_type}) -> {y_type}"
    )
    text = program([("x", x_type)], body, [("y", y_type)])
    result = lower(text, [int8(rng, shape)], distinct=40)
    assert result.stats.layers == {"qnn.conv": 1, "qnn.concat": 1}
    assert np.array_equal(result.outputs["output_0"][..., :4], result.outputs["output_0"][..., 4:])
    assert 'memref<1x6x5x4xi8, "ddr">' in result.text  # the conv's own buffer, copied twice


def test_an_elementwise_op_writes_its_concat_slice_in_place() -> None:
    rng = np.random.default_rng(35)
    shape = (1, 6, 5, 8)
    x_type = qtype(shape, 0.1, 2)
    first = conv(rng, "p", "x", x_type, shape, 4, tile=(4, 2, 4, 8), output_scale=1.0, relu=False)
    second = conv(rng, "q", "x", x_type, shape, 4, tile=(4, 2, 4, 8), output_scale=1.0)
    y_type = qtype((1, 6, 5, 8), 1.0, 3)
    body = (
        f"{first.lines}\n{second.lines}\n"
        f"  %c = qnn.clamp %p {{clamp_min = -20, clamp_max = 40{force((7, 1, 3, 1))}}} "
        f": {first.output_type}\n"
        f"  %y = qnn.concat %c, %q {{axis = 3}} : ({first.output_type}, {second.output_type}) "
        f"-> {y_type}"
    )
    text = program([("x", x_type)], body, [("y", y_type)])
    result = lower(text, [int8(rng, shape)], distinct=40)
    assert result.stats.layers == {"qnn.conv": 2, "qnn.clamp": 1, "qnn.concat": 1}
    # The conv, the clamp over it and the other conv all write the concat's buffer.
    ddr_buffers = re.findall(r'tile\.alloc[^:]*: (memref<[^>]*"ddr">)', result.text)
    assert ddr_buffers == ['memref<1x6x5x8xi8, "ddr">']


@pytest.mark.parametrize("host", ["transpose", "sigmoid"])
def test_a_concat_input_computed_elsewhere_is_copied_into_its_slice(host: str) -> None:
    """A transpose (tiled on its own, into a buffer of its own: plan-ddr makes only a
    value with a single reader a slice) and a float sigmoid on tensors: each result is
    copied into its slice by the concat."""
    rng = np.random.default_rng(36)
    shape = (1, 6, 6, 8)
    x_type = qtype(shape, 0.1, 2)
    first = conv(rng, "p", "x", x_type, shape, 8, tile=(4, 3, 8, 8), output_scale=1.0)
    second = conv(rng, "q", "x", x_type, shape, 4, tile=(4, 3, 4, 8), output_scale=1.0)
    t_type = qtype((1, 6, 6, 4), 1.0, 3)
    float_type = "tensor<1x6x6x4xf32>"
    if host == "transpose":
        island = (
            f"  %t = nn.transpose %q {{perm = [0, 2, 1, 3]}} : ({second.output_type}) -> {t_type}"
        )
        kept = {}
    else:
        island = (
            f"  %f = quant.dcast %q : {second.output_type} to {float_type}\n"
            f"  %g = nn.sigmoid %f : {float_type}\n"
            f"  %t = quant.qcast %g : {float_type} to {qtype((1, 6, 6, 4), 1 / 256, -128)}"
        )
        t_type = qtype((1, 6, 6, 4), 1 / 256, -128)
        kept = {"quant.dcast": 1, "nn.sigmoid": 1, "quant.qcast": 1}
    y_type = qtype((1, 6, 6, 12), 1.0, 3)
    multiplier, shift = scheme.rescale_multiplier(1 / 256, 1.0)
    identity = fixed_point.IDENTITY_MULTIPLIER
    body = (
        f"{first.lines}\n{second.lines}\n{island}\n"
        f"  %y = qnn.concat %p, %t {{axis = 3, multipliers = [{identity[0]}, {multiplier}], "
        f"shifts = [{identity[1]}, {shift}]}} : ({first.output_type}, {t_type}) -> {y_type}"
    )
    text = program([("x", x_type)], body, [("y", y_type)])
    result = lower(text, [int8(rng, shape)], distinct=3 if host == "sigmoid" else 40)
    transposes = {"nn.transpose": 1} if host == "transpose" else {}
    assert result.stats.layers == {"qnn.conv": 2, "qnn.concat": 1, **transposes}
    assert result.stats.kept == kept
    assert ("tile.to_buffer %t" in result.text) == (host == "sigmoid")
    assert ("tile.transpose" in result.text) == (host == "transpose")


@pytest.mark.parametrize("signed", [True, False])
def test_a_conv_output_of_another_type_is_rescaled_in_its_concat_slice(signed: bool) -> None:
    rng = np.random.default_rng(39)
    shape = (1, 6, 5, 8)
    x_type = qtype(shape, 0.1, 2)
    first = conv(rng, "p", "x", x_type, shape, 8, tile=(4, 2, 8, 8), output_scale=0.5,
                 output_zero_point=7 if signed else 128, signed=signed, relu=False)  # fmt: skip
    second = conv(rng, "q", "x", x_type, shape, 4, tile=(4, 2, 4, 8), output_scale=1.0,
                  output_zero_point=-3, relu=False)  # fmt: skip
    y_type = qtype((1, 6, 5, 12), 1.0, -3)
    multiplier, shift = scheme.rescale_multiplier(0.5, 1.0)
    identity = fixed_point.IDENTITY_MULTIPLIER
    body = (
        f"{first.lines}\n{second.lines}\n"
        f"  %y = qnn.concat %p, %q {{axis = 3, multipliers = [{multiplier}, {identity[0]}], "
        f"shifts = [{shift}, {identity[1]}]}} : ({first.output_type}, {second.output_type}) "
        f"-> {y_type}"
    )
    text = program([("x", x_type)], body, [("y", y_type)])
    result = lower(text, [int8(rng, shape)], distinct=60)
    assert result.stats.layers == {"qnn.conv": 2, "qnn.concat": 1}
    # Each conv requantizes its tiles; the concat then rescales the first conv's values
    # (zero point 7) where they lie, or (uint8, zero point 128) as it copies them.
    convs = bodies((6, 5, 8), (4, 2, 8)) + bodies((6, 5, 4), (4, 2, 4))
    assert result.count(r"tile\.requantize ") > convs
    assert f"input_zero_point = {7 if signed else 128}" in result.text


# --------------------------------------------------------------------------------------
# 10. Ops on tensors between tiled layers


def test_a_transpose_between_two_convs_is_tiled() -> None:
    """Each output box of the transpose is read as the input box it comes from and
    permuted in SRAM (tile.transpose); no tensor round trip."""
    rng = np.random.default_rng(26)
    shape = (1, 6, 7, 8)
    x_type = qtype(shape, 0.1, 2)
    first = conv(rng, "p", "x", x_type, shape, 8, tile=(4, 3, 8, 8), output_scale=1.0)
    t_type = qtype((1, 7, 6, 8), 1.0, 3)
    second = conv(
        rng, "y", "t", t_type, (1, 7, 6, 8), 6, input_scale=1.0, tile=(3, 6, 4, 8), relu=False
    )
    body = (
        f"{first.lines}\n"
        f"  %t = nn.transpose %p {{perm = [0, 2, 1, 3]}} : ({first.output_type}) -> {t_type}\n"
        f"{second.lines}"
    )
    text = program([("x", x_type)], body, [("y", second.output_type)])
    result = lower(text, [int8(rng, shape)], distinct=40)
    assert result.stats.layers == {"qnn.conv": 2, "nn.transpose": 1}
    assert result.stats.kept == {}
    assert "tile.to_tensor" in result.text  # only for the function's result
    assert result.count(r"tile\.to_tensor ") == 1
    assert result.count(r"tile\.transpose .*perm = \[0, 2, 1, 3\]") >= 1


def _moved_between_layers(
    seed: int,
    moved: Callable[[str, str], str],
    shape: tuple[int, ...],
    out_shape: tuple[int, ...],
    into_concat: bool,
) -> Lowered:
    """`%p = conv(%x)` of `shape`, then `moved(p_type, m_type)`: the line of one op
    reading %p and defining %m of `out_shape` (scale 1.0, zero point 3); then a conv
    of %m or, `into_concat`, a concat of %m with an argument, so that %m lives in a
    box of the concat's buffer. Lowered and run bit-exactly, every op tiled."""
    rng = np.random.default_rng(seed)
    x_type = qtype(shape, 0.1, 2)
    first = conv(rng, "p", "x", x_type, shape, shape[3], tile=(2, 3, 8, 8), output_scale=1.0)
    m_type = qtype(out_shape, 1.0, 3)
    line = moved(first.output_type, m_type)
    body = f"{first.lines}\n  {line}"
    op_name = line.split(" = ", 1)[1].split(" ", 1)[0]
    if into_concat:
        y_type = qtype((*out_shape[:3], 2 * out_shape[3]), 1.0, 3)
        body += f"\n  %y = qnn.concat %m, %w {{axis = 3}} : ({m_type}, {m_type}) -> {y_type}"
        layers = {"qnn.conv": 1, op_name: 1, "qnn.concat": 1}
        arguments = [("x", x_type), ("w", m_type)]
        inputs = [int8(rng, shape), int8(rng, out_shape)]
    else:
        second = conv(rng, "y", "m", m_type, out_shape, 6, input_scale=1.0, tile=(3, 4, 6, 4))
        body += f"\n{second.lines}"
        y_type = second.output_type
        layers = {"qnn.conv": 2, op_name: 1}
        arguments, inputs = [("x", x_type)], [int8(rng, shape)]
    result = lower(program(arguments, body, [("y", y_type)]), inputs, distinct=40)
    assert result.stats.layers == layers
    assert result.stats.kept == {}
    # Into the concat: a buffer of its own first, then copied into the slice.
    out = "x".join(str(size) for size in out_shape)
    scratch = re.findall(rf'tile\.alloc : memref<{out}xi8, "ddr">', result.text)
    assert len(scratch) == into_concat
    return result


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
@pytest.mark.parametrize("into_concat", [False, True])
def test_a_depth_to_space_between_two_convs_is_a_transpose(mode: str, into_concat: bool) -> None:
    """ONNX's definition: the input's 6-D view (channels as blocks and depth)
    transposed into the output's (rows and columns as blocks), tile by tile in SRAM."""

    def moved(p_type: str, m_type: str) -> str:
        properties = f'blocksize = 2, mode = "{mode}", layout = "nhwc"'
        return f"%m = nn.depth_to_space %p {{{properties}}} : ({p_type}) -> {m_type}"

    result = _moved_between_layers(27, moved, (1, 3, 5, 16), (1, 6, 10, 4), into_concat)
    perm = "0, 1, 3, 2, 4, 5" if mode == "DCR" else "0, 1, 4, 2, 5, 3"
    assert result.count(rf"tile\.transpose .*perm = \[{perm}\]") >= 1
    assert re.search(r'tile\.view %\S+ : memref<1x3x5x16xi8, "ddr"> to memref<1x3x5x', result.text)


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_a_depth_to_space_in_nchw(mode: str) -> None:
    """The NCHW views: channels split before the rows, the blocks moved behind them."""
    rng = np.random.default_rng(28)
    shape = (2, 8, 3, 4)
    x_type = qtype(shape, 0.1, 2)
    y_type = qtype((2, 2, 6, 8), 0.1, 2)
    body = (
        f'  %y = nn.depth_to_space %x {{blocksize = 2, mode = "{mode}"}} : ({x_type}) -> {y_type}'
    )
    text = program([("x", x_type)], body, [("y", y_type)])
    result = lower(text, [int8(rng, shape)], distinct=40)
    assert result.stats.layers == {"nn.depth_to_space": 1}
    perm = "0, 3, 4, 1, 5, 2" if mode == "DCR" else "0, 1, 4, 2, 5, 3"
    assert result.count(rf"tile\.transpose .*perm = \[{perm}\]") >= 1


@pytest.mark.parametrize(
    ("coordinates", "into_concat"),
    [("half_pixel", False), ("asymmetric", False), ("half_pixel", True)],
)
def test_a_nearest_resize_by_whole_factors_is_dma(coordinates: str, into_concat: bool) -> None:
    """Each input box is loaded into its 4 places of an SRAM tile of the output (2x2)
    and the tile stored once: copies only, no compute op."""

    def moved(p_type: str, m_type: str) -> str:
        properties = (
            f'scales = [1.0, 2.0, 2.0, 1.0], coordinate_transformation_mode = "{coordinates}"'
        )
        return f"%m = nn.resize %p {{{properties}}} : ({p_type}) -> {m_type}"

    result = _moved_between_layers(29, moved, (1, 5, 6, 8), (1, 10, 12, 8), into_concat)
    assert re.search(
        r'tile\.view %\S+ : memref<1x5x6x8xi8, "ddr"> to memref<1x5x1x6x1x8xi8', result.text
    )
    assert re.search(r'to memref<1x5x2x6x2x8xi8, "ddr">', result.text)


def test_a_nearest_resize_by_another_pattern_is_a_gather_of_whole_planes() -> None:
    """Asymmetric coordinates rounded to nearest by 3 read rows 0, 0, 1, 1, 1, 2, ...
    (round(o / 3)): not whole repeats, so not DMA alone; the vector unit gathers whole
    planes (tile.resize in nearest mode), bit-exact."""
    rng = np.random.default_rng(30)
    shape = (1, 4, 4, 8)
    x_type = qtype(shape, 0.1, 2)
    u_type = qtype((1, 12, 12, 8), 0.1, 2)
    body = (
        f"  %y = nn.resize %x {{scales = [1.0, 3.0, 3.0, 1.0], "
        f'coordinate_transformation_mode = "asymmetric"}} : ({x_type}) -> {u_type}'
    )
    module = parse_module(program([("x", x_type)], body, [("y", u_type)]), make_context(), "t.mlir")
    resize = next(op for op in module.walk() if op.name == "nn.resize")
    assert place(resize, NPU_DEMO).device != CPU
    result = lower(program([("x", x_type)], body, [("y", u_type)]), [int8(rng, shape)], distinct=40)
    assert result.stats.layers["nn.resize"] == 1 and not result.stats.kept
    assert re.search(
        r'tile\.resize %\S+, %\S+ \{axes = \[1, 2\], coordinate_transformation_mode = "asymmetric", mode = "nearest"',
        result.text,
    )


@pytest.mark.parametrize(("float_op", "tiled"), [("nn.neg", False), ("nn.relu", True)])
def test_a_float_op_between_two_convs(float_op: str, tiled: bool) -> None:
    """A float negation stays on tensors (read back, copied in); a float relu is a float
    layer of the tile level (tile.clamp on f32 tiles)."""
    rng = np.random.default_rng(27)
    shape = (1, 6, 6, 8)
    x_type = qtype(shape, 0.1, 2)
    first = conv(rng, "p", "x", x_type, shape, 8, tile=(2, 6, 4, 8), output_scale=1.0, relu=False)
    float_type = "tensor<1x6x6x8xf32>"
    r_type = qtype((1, 6, 6, 8), 1.0, -5)
    second = conv(rng, "y", "r", r_type, (1, 6, 6, 8), 8, input_scale=1.0, tile=(6, 4, 8, 4))
    body = (
        f"{first.lines}\n"
        f"  %f = quant.dcast %p : {first.output_type} to {float_type}\n"
        f"  %g = {float_op} %f : {float_type}\n"
        f"  %r = quant.qcast %g : {float_type} to {r_type}\n"
        f"{second.lines}"
    )
    text = program([("x", x_type)], body, [("y", second.output_type)])
    result = lower(text, [int8(rng, shape)], distinct=40)
    assert result.stats.layers == {"qnn.conv": 2, **({float_op: 1} if tiled else {})}
    assert result.stats.kept == {
        "quant.dcast": 1,
        "quant.qcast": 1,
        **({} if tiled else {float_op: 1}),
    }
    assert "tile.to_tensor" in result.text and "tile.to_buffer %r" in result.text
    assert ("tile.clamp" in result.text) == tiled
    assert "accumulate = true" in result.text  # the second conv's K split


def test_a_small_cnn_with_a_residual_add_a_pool_a_flatten_and_a_gemm() -> None:
    rng = np.random.default_rng(37)
    shape = (1, 8, 8, 3)
    x_type = qtype(shape, 0.05, 128, signed=False)
    first = conv(rng, "c1", "x", x_type, shape, 8, input_scale=0.05, tile=(3, 5, 8, 3),
                 output_scale=1.0)  # fmt: skip
    second = conv(rng, "c2", "c1", first.output_type, first.output_shape, 8, input_scale=1.0,
                  tile=(8, 8, 3, 8), relu=False, output_scale=1.0, output_zero_point=-5)  # fmt: skip
    sum_type, pooled_type = qtype((1, 8, 8, 8), 1.5, -10), qtype((1, 4, 4, 8), 1.5, -10)
    flat_type = qtype((1, 128), 1.5, -10)
    add = ", ".join(f"{k} = {v}" for k, v in sorted(scheme.add_parameters(1.0, 1.0, 1.5).items()))
    weights = rng.integers(-127, 128, (10, 128)).astype(np.int8)
    weight_scales = rng.uniform(0.005, 0.015, 10)
    output_scale = 5400 * math.sqrt(128) * 1.5 * 0.01 / 40
    multipliers, shifts = scheme.output_multipliers(1.5, weight_scales, output_scale)
    w_type, y_type = qtype((10, 128), weight_scales, axis=0), qtype((1, 10), output_scale, 0)
    bias = rng.integers(-3000, 3000, 10).astype(np.int32)
    body = f"""{first.lines}
{second.lines}
  %s = qnn.add %c1, %c2 {{{add}, clamp_min = -10{force((12, 1, 5, 1))}}} : ({first.output_type}, {second.output_type}) -> {sum_type}
  %m = qnn.max_pool %s {{layout = "nhwc", kernel_shape = [2, 2], strides = [2, 2]{force((3, 3, 8, 1))}}} : ({sum_type}) -> {pooled_type}
  %f = nn.reshape %m : ({pooled_type}) -> {flat_type}
  %w = qnn.constant {dense(weights)} : tensor<10x128xi8> to {w_type}
  %b = nn.constant {dense(bias)} : tensor<10xi32>
  %acc = qnn.gemm %f, %w, %b {{trans_b = true{force((1, 1, 4, 48))}}} : ({flat_type}, {w_type}, tensor<10xi32>) -> tensor<1x10xi32>
  %y = qnn.requantize %acc {{axis = 1, multiplier = {multipliers}, shift = {shifts}}} : (tensor<1x10xi32>) -> {y_type}"""
    text = program([("x", x_type)], body, [("y", y_type)])
    result = lower(text, [uint8(rng, shape)], distinct=8)
    assert result.stats.layers == {
        "qnn.conv": 2, "qnn.add": 1, "qnn.max_pool": 1, "qnn.gemm": 1
    }  # fmt: skip
    assert not result.stats.kept
    # The flatten is a view of the pool's buffer; the gemm splits K = 128 in 48+48+32.
    assert result.count(r'tile\.view %\d+ : memref<1x4x4x8xi8, "ddr"> to memref<1x128xi8') == 1
    assert result.count(r"tile\.matmul ") == bodies((10, 128), (4, 48))
    # Both loop orders occur in one network.
    assert set(result.orders["qnn.conv"]) == {"weights", "input"}


# --------------------------------------------------------------------------------------
# 11. A layer too big for the SRAM


def test_a_layer_too_big_for_the_sram_is_an_error_naming_the_sram_it_needs(
    tmp_path: Path,
) -> None:
    target = target_with_sram(tmp_path, 1)
    # One window of a global pool is the whole 48x48 map: 2304 input bytes per channel.
    x_type, y_type = qtype((1, 48, 48, 4), 0.1, 0), qtype((1, 1, 1, 4), 0.1, 0)
    text = program(
        [("x", x_type)],
        f'  %y = qnn.global_average_pool %x {{layout = "nhwc"}} : ({x_type}) -> {y_type}',
        [("y", y_type)],
    )
    module = parse_module(text, make_context(), "test.mlir")
    verify_module(module)
    function = next(op for op in module.ops if isinstance(op, FuncOp))
    pool = next(op for op in function.walk() if op.name == "qnn.global_average_pool")
    layer = layer_of(pool, pool.name)
    assert layer is not None
    assert layer is not None
    needed = minimum_sram(layer, target)
    assert needed > 1024
    with pytest.raises(IrcError) as failure:
        lower_function(function, target)
    message = str(failure.value)
    assert f"needs at least {needed} bytes of SRAM" in message
    assert "the target has 1024" in message
    assert "test.mlir:2:" in message
    # The same layer fits the real npu-demo.
    lower(text, [int8(np.random.default_rng(28), (1, 48, 48, 4))], distinct=2)


# --------------------------------------------------------------------------------------
# 12. Determinism


def _network(rng: np.random.Generator) -> str:
    shape = (1, 6, 5, 8)
    x_type = qtype(shape, 0.1, 2)
    first = conv(rng, "p", "x", x_type, shape, 8, tile=(4, 2, 8, 4), output_scale=1.0)
    second = conv(rng, "q", "x", x_type, shape, 4, tile=(2, 3, 4, 8), output_scale=1.0)
    c_type = qtype((1, 6, 5, 12), 1.0, 3)
    y_type = qtype((1, 3, 3, 12), 1.0, 3)
    body = (
        f"{first.lines}\n{second.lines}\n"
        f"  %c = qnn.concat %p, %q {{axis = 3}} : ({first.output_type}, {second.output_type}) -> {c_type}\n"
        f'  %y = qnn.max_pool %c {{layout = "nhwc", kernel_shape = [3, 3], strides = [2, 2], '
        f"pads = [1, 1, 1, 1], irc.tile_sizes = array<i64: 2, 2, 5, 1>}} : ({c_type}) -> {y_type}"
    )
    return program([("x", x_type)], body, [("y", y_type)])


def test_lowering_is_deterministic() -> None:
    x = int8(np.random.default_rng(29), (1, 6, 5, 8))
    first = lower(_network(np.random.default_rng(6)), [x])
    second = lower(_network(np.random.default_rng(6)), [x])
    assert first.text == second.text
    assert first.stats == second.stats
    assert first.stats.layers == {"qnn.conv": 2, "qnn.concat": 1, "qnn.max_pool": 1}
    # The lowered text parses back and prints the same.
    assert module_to_string(_module_of(first.text)) == first.text


# --------------------------------------------------------------------------------------
# 13. The pass in a pipeline


def test_the_pass_runs_after_plan_tiles_and_reports_a_remark() -> None:
    rng = np.random.default_rng(30)
    text = _network(np.random.default_rng(6))
    x = int8(rng, (1, 6, 5, 8))
    module = parse_module(text, make_context(), "test.mlir")
    verify_module(module)
    expected = run_function(module, [x])
    with collect_diagnostics() as diagnostics, using_target(NPU_DEMO):
        for module_pass in parse_pipeline("plan-tiles,lower-to-tile"):
            module_pass.apply(make_context(), module)
    verify_module(module)
    remarks = [d.message for d in diagnostics if d.message.startswith("lower-to-tile:")]
    assert len(remarks) == 1
    assert remarks[0].startswith(
        "lower-to-tile: 4 layers tiled (qnn.concat x1, qnn.conv x2, qnn.max_pool x1), "
    )
    assert "on tensors" not in remarks[0]
    actual = run_function(module, [x])
    assert np.array_equal(actual["output_0"], expected["output_0"])
    assert not re.findall(r"qnn\.(?!constant)\w+", module_to_string(module))


# --------------------------------------------------------------------------------------
# 14. The SRAM buffers of a layer


def sram_conflicts(module: ModuleOp, capacity: int) -> list[str]:
    """The SRAM buffers of a one-layer program that overlap or leave the SRAM.

    A buffer's role is how the tile ops use it (which ops, which operand). Buffers of
    one role at one offset are one buffer the lowering reallocates for a remainder
    tile; any other two placed buffers are live at once in the loop nest and must not
    share bytes. Buffers without an offset are left out."""
    buffers = []
    for op in module.walk():
        if not isinstance(op, tile_dialect.AllocOp):
            continue
        buffer = op.results[0].type
        assert isinstance(buffer, MemRefType)
        offset = op.properties.get("offset")
        if tile_dialect.space_of(buffer) != "sram" or not isinstance(offset, IntegerAttr):
            continue
        bits = buffer.element_type.width.data
        size = math.prod(buffer.get_shape()) * bits // 8
        role = frozenset((use.operation.name, use.index) for use in op.results[0].uses)
        buffers.append((offset.value.data, size, role, f"{buffer} at {offset.value.data}"))
    conflicts = [f"{name} ends past {capacity}" for start, size, _, name in buffers
                 if start + size > capacity]  # fmt: skip
    for index, (start, size, role, name) in enumerate(buffers):
        for other_start, other_size, other_role, other in buffers[index + 1 :]:
            same = role == other_role and start == other_start
            if not same and start < other_start + other_size and other_start < start + size:
                conflicts.append(f"{name} overlaps {other}")
    return conflicts


def _gemm_program(rng: np.random.Generator, tile: Sequence[int]) -> tuple[str, list[np.ndarray]]:
    a, b = int8(rng, (6, 40)), rng.integers(-127, 128, (12, 40)).astype(np.int8)
    weight_scales = rng.uniform(0.005, 0.015, 12)
    output_scale = 5400 * math.sqrt(40) * 0.05 * 0.01 / 40
    multipliers, shifts = scheme.output_multipliers(0.05, weight_scales, output_scale)
    a_type, b_type = qtype(a.shape, 0.05, 7), qtype(b.shape, weight_scales, axis=0)
    y_type = qtype((6, 12), output_scale, -4)
    body = (
        f"  %acc = qnn.gemm %a, %b, %bias {{trans_b = true{force(tile)}}} "
        f": ({a_type}, {b_type}, tensor<12xi32>) -> tensor<6x12xi32>\n"
        f"  %y = qnn.requantize %acc {{axis = 1, multiplier = {multipliers}, shift = {shifts}}} "
        f": (tensor<6x12xi32>) -> {y_type}"
    )
    text = program(
        [("a", a_type), ("b", b_type), ("bias", "tensor<12xi32>")], body, [("y", y_type)]
    )
    return text, [a, b, rng.integers(-4000, 4000, 12).astype(np.int32)]


def _one_layer(layer: str, rng: np.random.Generator) -> tuple[str, list[np.ndarray]]:
    if layer.startswith("conv"):
        tile = (3, 4, 8, 8) if layer == "conv split" else (3, 4, 8, 24)
        x_type = qtype((1, 7, 9, 24), 0.1, -3)
        text = conv(rng, "y", "x", x_type, (1, 7, 9, 24), 20, tile=tile)
        return program([("x", x_type)], text.lines, [("y", text.output_type)]), [
            int8(rng, (1, 7, 9, 24))
        ]
    if layer == "gemm split":
        return _gemm_program(rng, (6, 1, 12, 36))
    return _elementwise_program(layer, rng, (4, 1, 8, 1))


@pytest.mark.parametrize(
    ("layer", "kib"),
    [
        ("conv split", 512),
        ("conv whole", 512),
        ("gemm split", 512),
        ("add", 512),
        ("conv split", 2),
        ("gemm split", 2),
        ("conv whole", 4),
    ],
)
def test_the_sram_buffers_of_a_layer_are_disjoint(layer: str, kib: int, tmp_path: Path) -> None:
    target = NPU_DEMO if kib == 512 else target_with_sram(tmp_path, kib)
    text, inputs = _one_layer(layer, np.random.default_rng(40))
    module = parse_module(text, make_context(), "test.mlir")
    plan_module(module, target)
    plans = [op.attributes[PLAN_ATTR] for op in module.walk() if PLAN_ATTR in op.attributes]
    assert len(plans) == 1 and isinstance(plans[0], DictionaryAttr)
    # npu-demo double buffers; the small SRAMs hold one copy of each buffer.
    assert plans[0].data["double_buffered"] == BoolAttr.from_bool(kib == 512)
    result = lower(text, inputs, target=target, distinct=20)
    assert sram_conflicts(result.module, target.scratch.size_bytes) == []
