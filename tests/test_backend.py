"""The backend table (irc/backend): its entries, placement by target and data type,
the support keys of the integer ops, the glue of a MAC layer and its requantize, and
the MACs of ops at every level.

Each expected reason is written out in full: they are what `irc-compile`'s report
and `partition`'s notes show a user.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import MappingProxyType

from test_cost import ops_of
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation

from irc import backend
from irc.backend import cost
from irc.backend.table import COMMANDS, ENTRIES
from irc.dialects import npu, tile
from irc.targets import OpSupport, load_target, parse_target
from irc.targets.schema import OP_LIMITS
from irc.testing.targets import with_ops

PRESETS = Path(__file__).resolve().parents[1] / "irc" / "targets" / "presets"

I8 = "!quant.uniform<i8:f32, 0.1:-3>"
W8 = "!quant.uniform<i8<-127:127>:f32, 0.01>"


def conv_ops(strides: int) -> dict[str, Operation]:
    """A 3x3 int8 conv of a 12x12x4 map to 8 channels, and its requantize."""
    out = (12 + 2 - 3) // strides + 1
    return ops_of(
        f"""
  %w = qnn.constant dense<1> : tensor<8x3x3x4xi8> to tensor<8x3x3x4x{W8}>
  %acc = qnn.conv %x, %w {{layout = "nhwc", pads = [1, 1, 1, 1], strides = [{strides}, {strides}]}} : (tensor<1x12x12x4x{I8}>, tensor<8x3x3x4x{W8}>) -> tensor<1x{out}x{out}x8xi32>
  %y = qnn.requantize %acc {{multiplier = [1073741824], shift = [3]}} : (tensor<1x{out}x{out}x8xi32>) -> tensor<1x{out}x{out}x8x{I8}>
""",
        f"%x: tensor<1x12x12x4x{I8}>",
    )


# --------------------------------------------------------------------------------------
# The table


def test_every_op_class_has_one_entry_and_every_kind_a_support_key() -> None:
    classes = [op for entry in ENTRIES for op in entry.ops]
    assert len(classes) == len(set(classes))
    for entry in ENTRIES:
        if entry.support_key is None and entry.kind != "transfer":
            assert entry.kind in OP_LIMITS, entry.kind
        assert entry.summary
        # Every entry is a view or lowers its ops; only views and lowerings that build
        # their pieces' plans have no layer model.
        assert (entry.lower is None) == entry.view, entry.kind


def test_every_tile_compute_op_becomes_one_command() -> None:
    compute = {
        op
        for op in tile.TILE.operations
        if op
        not in (
            tile.AllocOp,
            tile.ToBufferOp,
            tile.ToTensorOp,
            tile.ViewOp,
            tile.CopyOp,
            tile.BiasAddOp,
            tile.OnCoreOp,  # a region: its ops become commands of its core
        )
    }
    assert {spec.tile_op for spec in COMMANDS} == compute
    commands = {spec.command for spec in COMMANDS}
    assert len(commands) == len(COMMANDS)
    assert all(command in npu.NPU.operations for command in commands)
    for spec in COMMANDS:
        assert (spec.cost is None) == (spec.engine == "mac"), spec.tile_op.name
    # Every command an entry emits is in the table.
    assert {spec for entry in ENTRIES for spec in entry.commands} <= set(COMMANDS)


# --------------------------------------------------------------------------------------
# Placement


def test_a_stride_the_target_does_not_take_keeps_the_conv_on_the_host() -> None:
    ops = conv_ops(strides=3)
    target = load_target("npu-demo")
    placement = backend.place(ops["acc"], target)
    assert placement == backend.Placement(
        "cpu", ("qnn.conv stride 3x3: target npu-demo supports strides 1, 2",)
    )
    # Its requantize is its output stage: it goes where the conv goes, for the same reason.
    assert backend.place(ops["y"], target) == backend.Placement(
        "cpu",
        (
            "qnn.requantize runs with its qnn.conv, which stays on the host: stride 3x3: "
            "target npu-demo supports strides 1, 2",
        ),
    )
    assert backend.fused_with(ops["y"]) is ops["acc"]
    assert backend.fused_requantize(ops["acc"]) is ops["y"]


def test_a_target_file_that_allows_the_stride_runs_it_on_the_npu() -> None:
    text = (PRESETS / "npu-demo.toml").read_text(encoding="utf-8")
    text = text.replace(
        "strides = [1, 2]\ndilations = [1, 2]", "strides = [1, 2, 3]\ndilations = [1, 2]"
    )
    target = parse_target(text, "stride3.toml")
    assert target.ops["conv"].strides == (1, 2, 3)
    ops = conv_ops(strides=3)
    assert backend.place(ops["acc"], target) == backend.Placement("npu")
    assert backend.place(ops["y"], target) == backend.Placement("npu")
    assert backend.on_npu(ops["acc"], target) and not backend.on_npu(ops["w"], target)


def test_an_empty_support_table_keeps_everything_on_the_host() -> None:
    target = dataclasses.replace(load_target("npu-demo"), ops=MappingProxyType({}))
    ops = conv_ops(strides=1)
    assert backend.place(ops["acc"], target).reasons == (
        "qnn.conv: not in target npu-demo's support table",
    )
    assert backend.place(ops["y"], target).device == "cpu"


def test_float_ops_need_a_target_that_computes_in_float() -> None:
    ops = ops_of(
        """
  %w = nn.constant dense<0.5> : tensor<8x3x3x4xf32>
  %y = nn.conv %x, %w {layout = "nhwc", pads = [1, 1, 1, 1], irc.float = "excluded by name ('c1')"} : (tensor<1x8x8x4xf32>, tensor<8x3x3x4xf32>) -> tensor<1x8x8x8xf32>
  %s = nn.softmax %y : tensor<1x8x8x8xf32>
""",
        "%x: tensor<1x8x8x4xf32>",
    )
    assert backend.place(ops["y"], load_target("npu-demo")).reasons == (
        "nn.conv computes in float (excluded by name ('c1')): target npu-demo computes in "
        "integers only (no fp16)",
    )
    # edge-2tops computes in fp16: the float conv runs on its NPU.
    assert backend.place(ops["y"], load_target("edge-2tops")) == backend.Placement("npu")
    # A kind without an entry stays on the host whatever the support table says.
    assert backend.place(ops["s"], load_target("edge-2tops")).reasons == (
        "nn.softmax: irc has no NPU lowering of it",
    )


def test_irc_checks_what_its_lowering_takes() -> None:
    ops = ops_of(
        f"""
  %w = qnn.constant dense<1> : tensor<8x4x3x3xi8> to tensor<8x4x3x3x{W8}>
  %acc = qnn.conv %x, %w {{pads = [1, 1, 1, 1]}} : (tensor<1x4x8x8x{I8}>, tensor<8x4x3x3x{W8}>) -> tensor<1x8x8x8xi32>
""",
        f"%x: tensor<1x4x8x8x{I8}>",
    )
    anything = with_ops(load_target("edge-2tops"), conv=OpSupport("conv"))
    assert backend.place(ops["acc"], anything).reasons == (
        'qnn.conv layout="nchw": irc tiles channels-last (nhwc) convolutions only '
        "(convert-layout makes them)",
    )


def test_a_matmul_of_two_activations_runs_where_the_target_takes_it() -> None:
    a, b = "!quant.uniform<i8:f32, 0.1:5>", "!quant.uniform<i8:f32, 0.2:-7>"
    ops = ops_of(
        f"""
  %acc = qnn.matmul %p, %v : (tensor<1x16x8x{a}>, tensor<1x8x32x{b}>) -> tensor<1x16x32xi32>
""",
        f"%p: tensor<1x16x8x{a}>, %v: tensor<1x8x32x{b}>",
    )
    # edge-2tops' matmul takes activations on both sides, with their zero points.
    assert backend.place(ops["acc"], load_target("edge-2tops")) == backend.Placement("npu")
    # npu-demo's needs constant weights.
    assert backend.place(ops["acc"], load_target("npu-demo")).reasons == (
        "qnn.matmul weights (operand #1) are not a constant: target npu-demo needs constant "
        "weights",
    )


def test_integer_ops_are_asked_about_by_what_they_compute() -> None:
    ops = ops_of(
        f"""
  %r = qnn.clamp %x {{clamp_min = -3}} : tensor<8x{I8}>
  %c = qnn.clamp %x {{clamp_min = -3, clamp_max = 57}} : tensor<8x{I8}>
  %s = qnn.lut %x {{function = "gelu", table = {list(range(-128, 128))}}} : (tensor<8x{I8}>) -> tensor<8x{I8}>
""",
        f"%x: tensor<8x{I8}>",
    )
    no_relu = with_ops(load_target("npu-demo"), relu=None)
    assert backend.place(ops["r"], no_relu).reasons == (
        "qnn.clamp (relu): not in target npu-demo's support table",
    )
    assert backend.place(ops["c"], no_relu) == backend.Placement("npu")
    no_gelu = with_ops(load_target("npu-demo"), gelu=None)
    assert backend.place(ops["s"], no_gelu).reasons == (
        "qnn.lut (gelu): not in target npu-demo's support table",
    )
    no_lut = dataclasses.replace(
        load_target("npu-demo"),
        lut=dataclasses.replace(load_target("npu-demo").lut, supported=False),
    )
    assert backend.place(ops["s"], no_lut).reasons == (
        "qnn.lut (gelu) needs a lookup table: target npu-demo has none",
    )


def test_float_conversions_run_where_the_support_table_lists_them() -> None:
    ops = ops_of(
        f"""
  %q = quant.qcast %x : tensor<8xf32> to tensor<8x{I8}>
  %d = quant.dcast %q : tensor<8x{I8}> to tensor<8xf32>
""",
        "%x: tensor<8xf32>",
    )
    # The Ethos-U presets convert on the host, as Vela leaves a float model's QUANTIZE
    # to the CPU: their support tables list neither kind.
    target = load_target("ethos-u55-256")
    assert backend.place(ops["q"], target).reasons == (
        "quant.qcast (quantize): not in target ethos-u55-256's support table",
    )
    assert backend.place(ops["d"], target).reasons == (
        "quant.dcast (dequantize): not in target ethos-u55-256's support table",
    )
    # npu-demo's and edge-2tops's vector units convert, even without fp16.
    for preset in ("npu-demo", "edge-2tops"):
        converting = load_target(preset)
        for name in ("q", "d"):
            assert backend.place(ops[name], converting).device == "npu"
    assert not load_target("npu-demo").data_types.fp16
    without = with_ops(load_target("npu-demo"), quantize=None, dequantize=None)
    assert backend.place(ops["q"], without).device == "cpu"


def test_marks_decide_over_the_table() -> None:
    ops = conv_ops(strides=1)
    target = load_target("npu-demo")
    assert backend.device_of(ops["acc"], target) == "npu"
    ops["acc"].attributes["irc.device"] = StringAttr("cpu")
    assert backend.device_of(ops["acc"], target) == "cpu"
    assert not backend.TileRules(target).lowerer(ops["acc"])


# --------------------------------------------------------------------------------------
# MACs at every level


def test_macs_of_integer_ops_are_those_of_their_float_forms() -> None:
    ops = conv_ops(strides=1)
    assert cost.op_macs(ops["acc"]) == 12 * 12 * 8 * 3 * 3 * 4
    assert cost.op_macs(ops["y"]) == 0
    matmul = ops_of(
        f"""
  %w = qnn.constant dense<1> : tensor<32x16xi8> to tensor<32x16x{W8}>
  %acc = qnn.matmul %x, %w : (tensor<1x8x32x{I8}>, tensor<32x16x{W8}>) -> tensor<1x8x16xi32>
""",
        f"%x: tensor<1x8x32x{I8}>",
    )
    assert cost.op_macs(matmul["acc"]) == 8 * 16 * 32


def test_macs_of_a_tile_step() -> None:
    space = '"sram"'
    ops = ops_of(
        f"""
  %i = tile.alloc : memref<1x6x14x4xi8, {space}>
  %w = tile.alloc : memref<16x3x3x4xi8, {space}>
  %a = tile.alloc : memref<1x4x12x16xi32, {space}>
  tile.conv %i, %w, %a : memref<1x6x14x4xi8, {space}>, memref<16x3x3x4xi8, {space}>, memref<1x4x12x16xi32, {space}>
""",
        "",
    )
    block = ops["a"].parent_block()
    assert block is not None
    step = next(op for op in block.ops if isinstance(op, tile.ConvOp))
    assert cost.op_macs(step) == 4 * 12 * 16 * 3 * 3 * 4
