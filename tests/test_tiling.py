"""The tile planner (irc/tiling/planner.py) and `plan-tiles`.

- A hypothesis property test over random layers (conv, grouped, depthwise,
  transposed, gemm, pooling, elementwise) and SRAM sizes: a plan never needs more SRAM than the target
  has, its tiles cover the output, its estimate is never below the layer's lower
  bound; and a layer is refused exactly when its smallest tile does not fit.
- The worked example (docs/targets.md, "npu-demo"), recomputed from the model's formulas.
- The digits CNN in int8: every MAC layer is planned, deterministically.
- Bad options and forced tiles give located errors.
"""

from __future__ import annotations

import dataclasses
import json
import math
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp

from irc.backend import lower_function, plan_memory
from irc.diagnostics import IrcError, collect_diagnostics
from irc.interp import run_function
from irc.ir.context import make_context
from irc.ir.io import parse_module
from irc.passes import parse_pipeline
from irc.targets import load_target
from irc.tiling import Layer, Tile, TilingError, minimum_sram, plan_layer
from irc.tiling.planner import Plan, mean_bursts
from irc.transforms.plan_tiles import plan_module

NPU_DEMO = load_target("npu-demo")
REPO = Path(__file__).resolve().parents[1]


def with_sram(size: int) -> object:
    """npu-demo with another SRAM size."""
    return NPU_DEMO.with_memory("sram", size_bytes=size)


def conv_output(size: int, kernel: int, stride: int, dilation: int, pad: int) -> int:
    return (size + 2 * pad - (kernel - 1) * dilation - 1) // stride + 1


@st.composite
def layers(draw: st.DrawFn) -> Layer:
    kind = draw(
        st.sampled_from(
            ["conv", "grouped", "depthwise", "gemm", "pool", "elementwise", "transposed"]
        )
    )
    if kind == "transposed":
        # The stride-1 conv over the zero-inserted input (planner.Layer.upsample).
        h, w = draw(st.integers(1, 32)), draw(st.integers(1, 32))
        kernel, factor, dilation = draw(st.integers(1, 5)), draw(st.integers(1, 3)), 1
        reach = kernel - 1
        pad = draw(st.integers(0, reach))
        extra = draw(st.integers(0, factor - 1))
        out = (h - 1) * factor + extra + reach + 1 - 2 * pad
        out_w = (w - 1) * factor + extra + reach + 1 - 2 * pad
        assume(out >= 1 and out_w >= 1)
        in_c, out_c = draw(st.integers(1, 64)), draw(st.integers(1, 64))
        return Layer(
            "deconv", "qnn.conv_transpose", "conv", "mac", 1, h, w, in_c, out, out_w, out_c,
            kernel=(kernel, kernel), dilations=(dilation, dilation),
            pads=(reach - pad, reach - pad, reach - pad + extra, reach - pad + extra),
            upsample=(factor, factor), has_weights=True, conv_steps=True,
        )  # fmt: skip
    if kind == "gemm":
        rows, depth, columns = (draw(st.integers(1, 300)) for _ in range(3))
        return Layer(
            "gemm", "qnn.gemm", "conv", "mac", 1, rows, 1, depth, rows, 1, columns,
            has_weights=True,
        )  # fmt: skip
    if kind == "elementwise":
        h, w, c = (draw(st.integers(1, 64)) for _ in range(3))
        inputs = draw(st.integers(1, 2))
        # A requantize's (multiplier, shift) pair, a lookup or exp table, or nothing.
        table = draw(st.sampled_from([0, 8, 256, 512]))
        return Layer(
            "add", "qnn.add", "elementwise", "vector", 1, h * w, 1, c, h * w, 1, c,
            groups=c, inputs=inputs, table_bytes=table,
        )  # fmt: skip
    h, w = draw(st.integers(1, 64)), draw(st.integers(1, 64))
    kernel = draw(st.integers(1, 7))
    stride, dilation = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    pad = draw(st.integers(0, kernel // 2))
    if (kernel - 1) * dilation + 1 > min(h, w) + 2 * pad:
        kernel, dilation = 1, 1
    out_h = conv_output(h, kernel, stride, dilation, pad)
    out_w = conv_output(w, kernel, stride, dilation, pad)
    if kind in ("depthwise", "pool"):
        c = draw(st.integers(1, 128))
        return Layer(
            kind, f"qnn.{kind}", kind, "mac" if kind == "depthwise" else "vector",
            1, h, w, c, out_h, out_w, c, kernel=(kernel, kernel), strides=(stride, stride),
            dilations=(dilation, dilation), pads=(pad, pad, pad, pad), groups=c,
            has_weights=kind == "depthwise", conv_steps=kind == "depthwise",
        )  # fmt: skip
    groups = draw(st.sampled_from([1, 2, 4])) if kind == "grouped" else 1
    in_c = groups * draw(st.integers(1, 64))
    out_c = groups * draw(st.integers(1, 64))
    return Layer(
        "conv", "qnn.conv", "conv", "mac", 1, h, w, in_c, out_h, out_w, out_c,
        kernel=(kernel, kernel), strides=(stride, stride), dilations=(dilation, dilation),
        pads=(pad, pad, pad, pad), groups=groups, has_weights=True, conv_steps=True,
        in_bytes=draw(st.sampled_from([1, 4])),
    )  # fmt: skip


@settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(layer=layers(), sram=st.integers(256, 1 << 20))
def test_plans_never_overflow_sram(layer: Layer, sram: int) -> None:
    target = with_sram(sram)
    try:
        plan = plan_layer(layer, target)  # type: ignore[arg-type]
    except TilingError as failure:
        needed = minimum_sram(layer, target)  # type: ignore[arg-type]
        assert needed > sram
        assert f"needs at least {needed} bytes of SRAM" in str(failure)
        return
    assert plan.sram_bytes == sum(plan.buffers.values()) <= sram
    # The SRAM layout: every copy of every buffer inside the SRAM, aligned, disjoint.
    copies = []
    for name, offsets in plan.sram_offsets.items():
        size = plan.buffers[name] // len(offsets)
        copies += [(offset, offset + size) for offset in offsets]
    assert sorted(plan.sram_offsets) == sorted(plan.buffers)
    assert all(
        start % NPU_DEMO.scratch.alignment_bytes == 0 and end <= sram for start, end in copies
    )
    copies.sort()
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in pairwise(copies))
    assert all(size % NPU_DEMO.scratch.alignment_bytes == 0 for size in plan.buffers.values())
    rows, columns, channels, steps = plan.counts
    assert rows * plan.tile.rows >= layer.out_h > (rows - 1) * plan.tile.rows
    assert columns * plan.tile.columns >= layer.out_w > (columns - 1) * plan.tile.columns
    assert channels * plan.tile.channels >= layer.out_c > (channels - 1) * plan.tile.channels
    assert steps >= 1 and ("accumulator" in plan.buffers) == layer.has_weights
    assert plan.cycles >= plan.lower_bound > 0
    assert plan.cycles >= plan.compute_cycles
    assert plan.ddr_written >= layer.out_h * layer.out_w * layer.out_c * layer.out_bytes


def worked_example(**changes: object) -> Layer:
    layer = Layer(
        "conv", "qnn.conv", "conv", "mac", 1, 56, 56, 32, 56, 56, 64,
        kernel=(3, 3), pads=(1, 1, 1, 1), has_weights=True, has_bias=False, conv_steps=True,
    )  # fmt: skip
    return dataclasses.replace(layer, **changes)  # type: ignore[arg-type]


def test_the_worked_example() -> None:
    """The worked example: 57.8 M MACs, 225,792 cycles on 256 MACs; DMA hides under compute."""
    layer = worked_example()
    assert layer.macs == 57_802_752
    plan = plan_layer(layer, NPU_DEMO)
    assert plan.lower_bound == layer.macs // 256 == 225_792
    assert plan.tile == Tile(3, 56, 64, 32) and plan.counts == (19, 1, 1, 1)
    # 18 tiles of 3 rows and one of 2 rows, each pixel 4 x 2 x 9 passes, plus the
    # array's fill per tile.
    assert plan.compute_cycles == (18 * 3 + 2) * 56 * 4 * 2 * 9 + 19 * (16 + 16) == 226_400
    assert plan.load_cycles + plan.store_cycles < plan.compute_cycles
    # Exposed: the first 5-row box (4,580), one 16-channel chunk of the weights (2,404)
    # and its requantization pairs (164, a DMA of their own), the first tile's
    # requantize on the vector unit (672) and the last 2-row store (3,684);
    # docs/tiling.md.
    assert plan.cycles == 226_400 + 4_580 + 2_404 + 164 + 672 + 3_684 == 237_904
    assert plan.efficiency > 0.94
    # At 500 MHz: 0.48 ms, against 0.45 ms for the array alone.
    assert math.isclose(plan.cycles / NPU_DEMO.mac_array.clock_hz, 0.000476, rel_tol=1e-2)


def test_five_row_tiles_would_leave_stores_behind_a_one_row_last_tile() -> None:
    # The store of a 5-row tile (9,060 cycles) outlasts the 1-row last tile's compute
    # (4,064): the 4,996 cycles left over come after it, before the last store (1,892).
    # First: a 7-row box (6,372), a weight chunk with its pairs (2,568), the
    # requantize (1,120).
    plan = plan_layer(worked_example(), NPU_DEMO, Tile(5, 56, 64, 32))
    assert plan.cycles == 226_176 + 6_372 + 2_568 + 5 * 56 * 4 + 1_892 + 4_996 == 243_124


def test_less_sram_means_smaller_tiles_and_more_traffic() -> None:
    layer = worked_example()
    plans = [plan_layer(layer, with_sram(size)) for size in (1 << 19, 1 << 16, 1 << 13)]  # type: ignore[arg-type]
    assert [p.sram_bytes <= s for p, s in zip(plans, (1 << 19, 1 << 16, 1 << 13), strict=True)]
    assert plans[0].cycles <= plans[1].cycles <= plans[2].cycles
    assert plans[0].ddr_read <= plans[2].ddr_read


def test_a_split_k_keeps_an_int32_accumulator() -> None:
    plan = plan_layer(worked_example(), NPU_DEMO, Tile(8, 56, 64, 16))
    assert plan.counts == (7, 1, 1, 2)
    assert plan.buffers["accumulator"] == 8 * 56 * 64 * 4


def test_a_forced_tile_that_does_not_fit_is_an_error() -> None:
    with pytest.raises(TilingError, match=r"forced tile 56x56x64/32 of 'conv' \(qnn.conv\) needs"):
        plan_layer(worked_example(), with_sram(1 << 16), Tile(56, 56, 64, 32))  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------
# The pass


def digits_int8() -> ModuleOp:
    from irc.importers.onnx import import_model
    from irc.quantize.calibration import calibrate, load_samples
    from irc.quantize.qdq import prepare_for_calibration, quantize_module
    from irc.transforms.lower_to_qnn import lower_module

    module = import_model(REPO / "models" / "digits" / "digits_cnn.onnx")
    with collect_diagnostics():
        for module_pass in parse_pipeline("graph-opt{activations=relu,clip}"):
            module_pass.apply(make_context(), module)
        prepare_for_calibration(module)
        samples = load_samples(REPO / "models" / "digits" / "digits_calibration.npz", module)
        stats = calibrate(module, list(samples)[:16], progress=False)
        quantize_module(module, stats)
        lower_module(module, None)
    return module


@pytest.mark.parametrize("target", ["npu-demo", "ethos-u55-256"])
def test_every_mac_layer_of_the_digits_model_is_planned(target: str) -> None:
    module = digits_int8()
    mac_ops = [op for op in module.walk() if op.name in ("qnn.conv", "qnn.gemm", "qnn.matmul")]
    report = plan_module(module, load_target(target))
    assert mac_ops and all("irc.tiling" in op.attributes for op in mac_ops)
    assert all(plan.cycles >= plan.lower_bound for plan in report.plans)
    assert report.peak_sram <= load_target(target).scratch.size_bytes
    again = plan_module(digits_int8(), load_target(target))
    assert again.to_json() == report.to_json()
    data = json.loads(report.to_json())
    assert data["cycles"] == sum(layer["cycles"] for layer in data["layers"])
    alignment_lines = len(report.alignments) + 1 if report.alignments else 0
    assert report.to_text().count("\n") == len(report.plans) + 2 + alignment_lines


WORKED_EXAMPLE_IR = """
func.func @main(%x: tensor<1x56x56x32x!quant.uniform<i8:f32, 0.1>>) -> tensor<1x56x56x64xi32> {
  %w = qnn.constant dense<1> : tensor<64x3x3x32xi8> to tensor<64x3x3x32x!quant.uniform<i8<-127:127>:f32, 0.01>>
  %acc = qnn.conv %x, %w {layout = "nhwc", pads = [1, 1, 1, 1]} : (tensor<1x56x56x32x!quant.uniform<i8:f32, 0.1>>, tensor<64x3x3x32x!quant.uniform<i8<-127:127>:f32, 0.01>>) -> tensor<1x56x56x64xi32>
  func.return %acc : tensor<1x56x56x64xi32>
}
"""


def run_pass(pipeline: str, target: str | None = "npu-demo") -> ModuleOp:
    from irc.targets import using_target

    module = parse_module(WORKED_EXAMPLE_IR, make_context(), "example.mlir")
    with collect_diagnostics(), using_target(load_target(target) if target else None):
        for module_pass in parse_pipeline(pipeline):
            module_pass.apply(make_context(), module)
    return module


@pytest.mark.parametrize(
    ("pipeline", "target", "message"),
    [
        ("plan-tiles{tile-sizes=1,2,3}", "npu-demo", "tile-sizes takes 4 positive sizes"),
        ("plan-tiles{tile-sizes=0,1,1,1}", "npu-demo", "tile-sizes takes 4 positive sizes"),
        ("plan-tiles", None, "pass 'plan-tiles' needs a target"),
        ("plan-tiles{tile-sizes=56,56,64,32 target=ethos-u55-256}", None, "the forced tile"),
    ],
)
def test_bad_options_are_errors(pipeline: str, target: str | None, message: str) -> None:
    with pytest.raises(IrcError, match=message):
        run_pass(pipeline, target)


def test_the_report_is_written_atomically(tmp_path: Path) -> None:
    report = tmp_path / "tiles.json"
    run_pass(f"plan-tiles{{report={report}}}")
    data = json.loads(report.read_text())
    # Without a requantize the int32 accumulators are the output: 4 bytes an element.
    assert data["layers"][0]["tile"] == [6, 56, 64, 32]
    assert [p.name for p in tmp_path.iterdir()] == ["tiles.json"]
    with pytest.raises(IrcError, match="cannot write the tiling report"):
        run_pass(f"plan-tiles{{report={report / 'r.txt'}}}")  # under a file


def test_ops_of_other_ranks_are_left_unplanned() -> None:
    text = """
func.func @main(%x: tensor<1x2x4x4x4xf32>) -> tensor<1x2x2x2x2xf32> {
  %y = nn.max_pool %x {kernel_shape = [2, 2, 2], strides = [2, 2, 2]} : (tensor<1x2x4x4x4xf32>) -> tensor<1x2x2x2x2xf32>
  func.return %y : tensor<1x2x2x2x2xf32>
}
"""
    module = parse_module(text, make_context(), "pool3d.mlir")
    report = plan_module(module, NPU_DEMO)
    assert report.plans == []
    assert not any("irc.tiling" in op.attributes for op in module.walk())


# --------------------------------------------------------------------------------------
# Channel alignment


def test_mean_bursts_counts_runs_that_straddle_a_burst() -> None:
    # 64-byte runs starting at multiples of 16: aligned once in four, else two bursts.
    assert mean_bursts(64, 16, 64) == (1 + 2 + 2 + 2) / 4
    assert mean_bursts(64, 128, 64) == 1.0
    # 20-byte runs at multiples of 4: the last 4 of the 16 offsets straddle.
    assert mean_bursts(20, 4, 64) == (12 * 1 + 4 * 2) / 16


def alignment_ir(producer_channels: int, consumer_channels: int) -> str:
    """A 1x1 conv to 80 channels, then a depthwise 3x3 conv, with forced channel tiles."""
    q = "!quant.uniform<i8:f32, 0.3:5>"
    rng = np.random.default_rng(5)
    pointwise = rng.integers(-127, 128, (80, 1, 1, 32)).tolist()
    depthwise = rng.integers(-127, 128, (80, 3, 3, 1)).tolist()
    return f"""
func.func @main(%x: tensor<1x16x16x32x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x16x16x80x{q}> {{
  %w = qnn.constant dense<{pointwise}> : tensor<80x1x1x32xi8> to tensor<80x1x1x32x!quant.uniform<i8<-127:127>:f32, 0.01>>
  %a = qnn.conv %x, %w {{layout = "nhwc", irc.tile_sizes = array<i64: 16, 16, {producer_channels}, 32>}} : (tensor<1x16x16x32x!quant.uniform<i8:f32, 0.1:-3>>, tensor<80x1x1x32x!quant.uniform<i8<-127:127>:f32, 0.01>>) -> tensor<1x16x16x80xi32>
  %p = qnn.requantize %a {{multiplier = [1431655765], shift = [10]}} : (tensor<1x16x16x80xi32>) -> tensor<1x16x16x80x{q}>
  %d = qnn.constant dense<{depthwise}> : tensor<80x3x3x1xi8> to tensor<80x3x3x1x!quant.uniform<i8<-127:127>:f32, 0.01>>
  %b = qnn.conv %p, %d {{layout = "nhwc", group = 80, pads = [1, 1, 1, 1], irc.tile_sizes = array<i64: 16, 16, {consumer_channels}, 1>}} : (tensor<1x16x16x80x{q}>, tensor<80x3x3x1x!quant.uniform<i8<-127:127>:f32, 0.01>>) -> tensor<1x16x16x80xi32>
  %y = qnn.requantize %b {{multiplier = [1431655765], shift = [9]}} : (tensor<1x16x16x80xi32>) -> tensor<1x16x16x80x{q}>
  func.return %y : tensor<1x16x16x80x{q}>
}}"""


@pytest.mark.parametrize(("producer", "consumer", "padded"), [(64, 64, True), (80, 80, False)])
def test_channel_alignment_pads_only_where_it_pays(
    producer: int, consumer: int, padded: bool
) -> None:
    """80 int8 channels are 80 bytes a pixel: a 64-channel tile's runs start at
    multiples of 16 bytes and mostly straddle two bursts. Stored as 128 channels they
    start on bursts. That pays when both layers cut the channels; when both read and
    write all 80 channels, padding would only cut their contiguous rows into pixels."""
    module = parse_module(alignment_ir(producer, consumer), make_context(), "align.mlir")
    report = plan_module(module, NPU_DEMO)
    (choice,) = report.alignments
    assert (choice.channels, choice.stored, choice.padded) == (80, 128, padded)
    assert choice.extra_bytes == 16 * 16 * 48
    assert (choice.padded_cycles < choice.cycles) == padded
    assert report.cycles == (choice.padded_cycles if padded else choice.cycles)
    requantize = next(op for op in module.walk() if op.name == "qnn.requantize")
    assert ("irc.stored_channels" in requantize.attributes) == padded
    verdict = "padded" if padded else "kept"
    assert f"80 -> 128 channels: {choice.cycles} cycles as is" in report.to_text()
    assert report.to_text().rstrip().endswith(verdict)
    # DDR planning gives the padded tensor its padded size.

    function = next(op for op in module.ops if op.name == "func.func")
    plan, index_of = plan_memory(function, NPU_DEMO)  # type: ignore[arg-type]
    stored = plan.values[index_of[requantize.results[0]]].size
    assert stored == 16 * 16 * (128 if padded else 80)
    # The tile level stores it so (128 channels a pixel) and computes the same integers.
    module = parse_module(alignment_ir(producer, consumer), make_context(), "align.mlir")
    x = np.random.default_rng(3).integers(-128, 128, (1, 16, 16, 32)).astype(np.int8)
    expected = run_function(module, [x])
    plan_module(module, NPU_DEMO)
    function = next(op for op in module.ops if op.name == "func.func")
    lower_function(function, NPU_DEMO)  # type: ignore[arg-type]
    assert ('memref<1x16x16x128xi8, "ddr">' in str(module)) == padded
    actual = run_function(module, [x])
    assert np.array_equal(actual["output_0"], expected["output_0"])
    assert len(np.unique(expected["output_0"])) > 20
    # Without alignment nothing is considered.
    module = parse_module(alignment_ir(producer, consumer), make_context(), "align.mlir")
    assert plan_module(module, NPU_DEMO, align_channels=False).alignments == []


# --------------------------------------------------------------------------------------
# The memories a layer's tensors will live in


def test_layers_are_costed_at_the_memory_their_tensors_will_live_in() -> None:
    """With predict-memories, on a placement of two memories of activations (the
    Ethos-U65's 384 KB system SRAM, then DRAM), a layer's loads and stores are costed
    where memory planning will put its tensors, not all in the slowest memory: a small
    map in the system SRAM, a map too large for it in DRAM."""
    from test_interp_tile import qtype
    from test_lower_to_tile import conv, program

    u65 = load_target("ethos-u65-256")
    rng = np.random.default_rng(3)

    def planned(size: int, target: object = u65, predict: bool = True) -> Plan:
        shape = (1, size, size, 32)
        x_type = qtype(shape, 0.1, -3)
        layer = conv(rng, "a", "x", x_type, shape, 32, kernel=(1, 1), pads=(0, 0, 0, 0))
        text = program([("x", x_type)], layer.lines, [("a", layer.output_type)])
        module = parse_module(text, make_context(), "m.mlir")
        [plan] = plan_module(module, target, predict_memories=predict).plans
        return plan

    # 28 x 28 x 32 bytes in and out (25 KB each): both in the system SRAM.
    small = planned(28)
    assert (small.layer.in_memory, small.layer.out_memory) == ("system_sram", "system_sram")
    # 128 x 128 x 32 (512 KB) each: too large for 384 KB, both in DRAM.
    large = planned(128)
    assert (large.layer.in_memory, large.layer.out_memory) == ("dram", "dram")
    # Costed in DRAM, the small layer would take longer (DRAM's latency, and Little's
    # law leaves it 6.1 bytes a cycle against the system SRAM's 16).
    in_dram = plan_layer(dataclasses.replace(small.layer, in_memory="dram", out_memory=""), u65)
    assert in_dram.cycles > small.cycles
    # One memory of activations (npu-demo's DDR): nothing to predict. Without
    # predict-memories (the default), every layer is costed in the slowest memory.
    assert planned(28, NPU_DEMO).layer.in_memory == ""
    assert planned(28, predict=False).layer.in_memory == ""
