"""A memory hierarchy (docs/targets.md, "The memories"; issue 21): weights in read-only
flash, activations in a small system SRAM first and DRAM for what does not fit, tiles
in the NPU's SRAM.

- a compile for such a target is bit-exact with the integer reference, reads its
  weights from flash, writes nothing there, and puts activations in both memories of
  activations; the report gives the traffic of each memory;
- the simulator's DMA timing takes each memory's latency, bursts and rate (the
  bandwidth, or what the transactions in flight allow) and its port: transfers on
  one port take turns, on two ports they overlap;
- every memory of the program is a byte array of the simulator, by name.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from test_compile_placement import assert_bit_exact, compiled

from irc.codegen.package import MANIFEST
from irc.driver.report import report_markdown
from irc.sim import timing
from irc.sim.schedule import Item, schedule
from irc.stream.scoreboard import View
from irc.targets import Target, load_target

REPOSITORY = Path(__file__).resolve().parent.parent
DIGITS = REPOSITORY / "models" / "digits" / "digits_cnn.onnx"
NPU_DEMO = REPOSITORY / "irc" / "targets" / "presets" / "npu-demo.toml"

HIERARCHY = """
[memories.flash]
size_kib = 65536
alignment_bytes = 64
read_bandwidth_gb_per_s = 0.5
write_bandwidth_gb_per_s = 0
read_latency_cycles = 64
write_latency_cycles = 0
burst_bytes = 128
max_reads = 4
max_writes = 0
port = "axi1"

[memories.system_sram]
size_kib = {fast_kib}
alignment_bytes = 16
read_bandwidth_gb_per_s = 4
write_bandwidth_gb_per_s = 4
read_latency_cycles = 8
write_latency_cycles = 8
burst_bytes = 32
max_reads = 8
max_writes = 8
port = "axi0"

[memories.dram]
size_kib = 1048576
alignment_bytes = 64
read_bandwidth_gb_per_s = 1
write_bandwidth_gb_per_s = 1
read_latency_cycles = 100
write_latency_cycles = 100
burst_bytes = 64
max_reads = 8
max_writes = 8
port = "axi1"

[placement]
weights = "flash"
activations = ["system_sram", "dram"]
"""


def hierarchy_target(directory: Path, fast_kib: int) -> Path:
    """npu-demo with weights in flash and activations in `fast_kib` KiB of system SRAM
    first, then DRAM (DRAM shares the flash's port)."""
    text = NPU_DEMO.read_text()
    start, end = text.index("[memories.ddr]"), text.index("[vector_unit]")
    text = text[:start] + HIERARCHY.format(fast_kib=fast_kib).lstrip() + "\n" + text[end:]
    text = text.replace('name = "npu-demo"', 'name = "hierarchy"')
    path = directory / f"hierarchy-{fast_kib}.toml"
    path.write_text(text)
    return path


# At -O1: without cascades every tensor between layers lives in a system memory, which
# is what these tests are about (at -O2 a cascade keeps its intermediate tensors in the
# NPU's SRAM: the last test of this group).


@pytest.mark.parametrize("fast_kib", [1, 2, 4])
def test_a_model_on_a_memory_hierarchy_is_bit_exact(tmp_path: Path, fast_kib: int) -> None:
    target = hierarchy_target(tmp_path, fast_kib)
    result, package = compiled(DIGITS, str(target), tmp_path, opt_level=1)
    assert_bit_exact(result, DIGITS, package)
    manifest = json.loads((package / MANIFEST).read_text())
    memory = manifest["memory"]
    assert memory["weights_memory"] == "flash" and memory["weights_bytes"] > 0
    assert memory["flash_bytes"] >= memory["weights_bytes"]
    traffic = result.simulation.total.traffic
    assert traffic["flash"][0] > 0 and traffic["flash"][1] == 0  # read-only
    # The digits CNN's activations need 3 KiB at once: with 4 KiB of system SRAM every
    # tensor lives there; with 1 or 2 KiB only some do, and DRAM holds the rest.
    if fast_kib == 4:
        assert "dram" not in traffic and memory.get("dram_bytes", 0) == 0
        assert sum(traffic["system_sram"]) > 0
    else:
        assert sum(traffic["dram"]) > 0 and memory["dram_bytes"] > 0
        assert memory["system_sram_bytes"] <= fast_kib * 1024
        assert sum(traffic["system_sram"]) > 0
    report = report_markdown(result, plots=False)
    assert "flash read per inference" in report and "system_sram read per inference" in report


def test_more_fast_memory_means_less_dram_traffic_and_fewer_cycles(tmp_path: Path) -> None:
    runs = {
        kib: compiled(DIGITS, str(hierarchy_target(tmp_path, kib)), tmp_path, opt_level=1)[
            0
        ].simulation
        for kib in (1, 4)
    }
    assert runs[4].cycles < runs[1].cycles
    assert sum(runs[4].total.traffic.get("dram", [0, 0])) == 0
    assert sum(runs[1].total.traffic["dram"]) > 0


def test_cascades_keep_intermediate_tensors_off_the_system_memories(tmp_path: Path) -> None:
    """At -O2 the digits CNN's layers run as cascades: bit-exact, and less traffic to
    the system memories (DRAM and system SRAM) than at -O1 on the same hierarchy."""
    target = str(hierarchy_target(tmp_path, 1))
    apart, _ = compiled(DIGITS, target, tmp_path, opt_level=1)
    cascaded, package = compiled(DIGITS, target, tmp_path, opt_level=2)
    assert_bit_exact(cascaded, DIGITS, package)
    assert cascaded.tiling is not None and cascaded.tiling.cascades

    def activations(result: object) -> int:
        traffic = result.simulation.total.traffic  # type: ignore[attr-defined]
        return sum(sum(traffic.get(name, [0, 0])) for name in ("dram", "system_sram"))

    assert activations(cascaded) < activations(apart)


def test_the_activations_that_fit_nowhere_are_an_error(tmp_path: Path) -> None:
    text = hierarchy_target(tmp_path, 1).read_text()
    text = text.replace("size_kib = 1048576", "size_kib = 1", 1)  # the DRAM
    path = tmp_path / "tiny-dram.toml"
    path.write_text(text)
    from irc.diagnostics import IrcError

    with pytest.raises(IrcError, match="does not fit in system_sram or dram"):
        compiled(DIGITS, str(path), tmp_path, opt_level=1)


# --------------------------------------------------------------------------------------
# Timing


def view(space: str, size: int, address: int = 0) -> View:
    return View(space, address, (size,), (1,), np.dtype(np.int8))


def test_a_dma_takes_each_memorys_latency_rate_and_bursts(tmp_path: Path) -> None:
    from irc.targets import parse_target

    target = parse_target(hierarchy_target(tmp_path, 64).read_text(), "h.toml")
    # flash -> SRAM: 64 cycles of read latency, 1 byte a cycle (0.5 GB/s at 500 MHz;
    # 4 bursts of 128 bytes in flight over 64 cycles would allow 8), whole bursts.
    cost = timing.dma(target, [view("flash", 1000)], [view("sram", 1000)])
    assert cost.read == 1024 and cost.written == 0
    assert cost.cycles == 64 + 1024
    assert cost.ports == (("axi1", 1024),)  # the local SRAM's side takes no port
    assert cost.traffic == (("flash", 1024, 0),)
    # SRAM -> system SRAM: 8 cycles of write latency, 8 bytes a cycle, 32-byte bursts.
    cost = timing.dma(target, [view("sram", 1000)], [view("system_sram", 1000)])
    assert (cost.read, cost.written, cost.cycles) == (0, 1024, 8 + 128)
    # Few transactions in flight over a long latency bound the rate (Little's law):
    # 2 bursts of 64 bytes per 400 cycles is 0.32 bytes a cycle, not DRAM's 2.
    slow = target.with_memory("dram", read_latency_cycles=400, max_reads=2)
    assert slow.memories["dram"].read_bytes_per_cycle(500e6) == pytest.approx(0.32)
    cost = timing.dma(slow, [view("dram", 640)], [view("sram", 640)])
    assert cost.cycles == 400 + 2000


def test_transfers_on_one_port_take_turns_and_on_two_ports_overlap() -> None:
    def run(first_port: str, second_port: str) -> tuple[Item, Item]:
        a = Item("command", 110, ((first_port, 100),))
        b = Item("command", 110, ((second_port, 100),))
        schedule([[a], [b]])
        return a, b

    a, b = run("axi0", "axi1")
    assert (a.end, b.end) == (110, 110)  # after 10 cycles of latency each, side by side
    a, b = run("axi1", "axi1")
    assert sorted((a.end, b.end)) == [110, 210]  # the second waits for the port


def test_a_program_for_other_memories_does_not_run_on_a_target_without_them(
    tmp_path: Path,
) -> None:
    from irc.codegen.package import read_package
    from irc.diagnostics import IrcError
    from irc.sim.run import Simulator

    _, package = compiled(DIGITS, str(hierarchy_target(tmp_path, 64)), tmp_path)
    module = read_package(package).module
    # npu-demo has no flash: one clear error, naming the memory.
    with pytest.raises(
        IrcError, match="memories 'flash', 'system_sram' that npu-demo does not have"
    ):
        Simulator(module, load_target("npu-demo"), "main").run([np.zeros((1, 1, 8, 8), np.float32)])


# --------------------------------------------------------------------------------------
# The weight stream (`weight_stream`: Ethos-U fetches weights on a channel of its own)


def weight_stream_target(directory: Path, stream: bool) -> Path:
    """The hierarchy with 64 KiB of system SRAM, its MAC array with or without a weight
    stream: weights from flash (axi1), activations from system SRAM (axi0)."""
    text = hierarchy_target(directory, 64).read_text()
    text = text.replace("[mac_array]\n", f"[mac_array]\nweight_stream = {str(stream).lower()}\n")
    path = directory / f"stream-{stream}.toml"
    path.write_text(text)
    return path


def test_a_weight_stream_loads_weights_beside_the_inputs(tmp_path: Path) -> None:
    """With a weight stream, every load of weights from flash into SRAM runs on
    `dma_weights` (and nothing else does), the run stays bit-exact, and it is faster: the weights'
    loads from flash no longer hold up the inputs' loads from system SRAM."""
    from xdsl.dialects.func import FuncOp

    from irc.dialects import npu

    runs = {}
    for stream in (False, True):
        result, package = compiled(
            DIGITS, str(weight_stream_target(tmp_path, stream)), tmp_path, opt_level=1
        )
        assert_bit_exact(result, DIGITS, package)
        runs[stream] = result
        dmas = [
            op
            for function in result.module.ops
            if isinstance(function, FuncOp) and npu.is_stream(function)
            for op in function.walk()
            if isinstance(op, npu.DmaOp)
        ]
        # Loads from flash into SRAM (a copy into a stage in the system SRAM runs on
        # `dma_stage`, beside the layer before, on either target).
        from_flash = [
            op
            for op in dmas
            if op.source is not None
            and "flash" in str(op.source.type)
            and op.queue() != "dma_stage"
        ]
        on_stream = [op for op in dmas if op.queue() == "dma_weights"]
        assert from_flash
        assert on_stream == (from_flash if stream else [])
    busy = {stream: runs[stream].simulation.total.busy for stream in runs}
    assert busy[False]["dma_weights"] == 0 and busy[True]["dma_weights"] > 0
    assert busy[True]["dma_in"] < busy[False]["dma_in"]
    assert runs[True].simulation.cycles < runs[False].simulation.cycles


def test_the_planner_counts_a_weight_slice_that_straddles_bursts() -> None:
    """A slice of K of a 1x1 conv's weights over 1024 input channels: 32 runs of 104
    bytes, 1024 bytes apart, at slice offsets of multiples of 104. Within flash's
    128-byte bursts a run starts at a multiple of 8: 4 of the 16 offsets fit one burst,
    12 straddle two (1.75 bursts a run on average, as the simulator moves them)."""
    from irc.tiling.planner import REQUANT_PAIR_BYTES, Layer, LayerModel

    target = load_target("ethos-u55-256")
    layer = Layer(
        "conv", "qnn.conv", "conv", "mac", 1, 14, 14, 1024, 14, 14, 256,
        has_weights=True, conv_steps=True,
    )  # fmt: skip
    model = LayerModel(layer, target)
    cycles, moved = model.weight_dma(32, 104)
    # The bias (32 x 4 bytes) and the requantization pairs (32 x 8) of a 32-channel
    # tile: a DMA each, as the lowering emits them, at multiples of their sizes (whole
    # bursts here).
    bias, pairs = 32 * layer.accumulator_bytes, 32 * REQUANT_PAIR_BYTES
    assert moved == round(32 * 1.75 * 128) + bias + pairs
    # A slice of 128 channels starts on a burst: one burst a run.
    assert model.weight_dma(32, 128)[1] == 32 * 128 + bias + pairs
    flash = target.memories["flash"]
    assert cycles == 3 * flash.read_latency_cycles + moved  # three DMAs; a byte a cycle


def test_the_planner_counts_a_channel_slice_of_a_gemm_s_weights_row_by_row() -> None:
    """A gemm's K x N weights: a tile of 40 of its 1000 output channels is a run of 40
    bytes in each of its K rows (the lowering's box), 1000 bytes apart: runs start at
    multiples of 40 within 128-byte bursts, so some straddle two; the whole N is one
    run. The simulator moves a gemm tile so (the lit test plan-tiles.mlir's @gemm
    agrees with its simulation to 0.01%)."""
    from irc.tiling.planner import Layer, LayerModel, mean_bursts

    target = load_target("ethos-u55-256")
    layer = Layer(
        "fc", "qnn.gemm", "conv", "mac", 1, 1, 1, 512, 1, 1, 1000,
        has_weights=True, has_bias=False, weights_by_depth=True,
    )  # fmt: skip
    model = LayerModel(layer, target)
    flash = model.weight_memory
    runs = model._weight_runs(flash, 40, 64)
    assert runs[1] == round(64 * mean_bursts(40, 40, 128) * 128) > 64 * 40
    assert model._weight_runs(flash, 1000, 64) == (64 + 64_000, 64_000)


# --------------------------------------------------------------------------------------
# Staged weights (irc/tiling/planner.py `Plan.staged`, plan-tiles' `_hide_staging`)


def staging_program() -> tuple[str, list[np.ndarray]]:
    """Two 3x3 convs on a 24x24 map: 8 -> 32 channels, then 32 -> 64 (18 KiB of
    weights, which an 8 KiB SRAM cannot keep while the input passes)."""
    from test_interp_tile import qtype
    from test_lower_to_tile import conv, int8, program

    rng = np.random.default_rng(7)
    shape = (1, 24, 24, 8)
    x_type = qtype(shape, 0.1, -3)
    first = conv(rng, "a", "x", x_type, shape, 32)
    second = conv(rng, "b", "a", first.output_type, first.output_shape, 64, input_scale=0.1)
    text = program([("x", x_type)], first.lines + "\n" + second.lines, [("b", second.output_type)])
    return text, [int8(rng, shape)]


def staging_target(directory: Path) -> Target:
    """The hierarchy (flash at a byte a cycle, 1 MiB of system SRAM at 8 for every
    feature map) with a weight stream and 8 KiB of local SRAM."""
    from irc.targets import parse_target

    text = hierarchy_target(directory, 1024).read_text()
    text = text.replace("[mac_array]\n", "[mac_array]\nweight_stream = true\n")
    text = text.replace("size_kib = 512", "size_kib = 8", 1)  # the local SRAM
    # The feature maps in the system SRAM only (as Vela's Shared_Sram): the planner,
    # which plans before the memory plan, counts them in the slowest memory of them.
    text = text.replace('activations = ["system_sram", "dram"]', 'activations = ["system_sram"]')
    return parse_target(text, "staging.toml")


def compile_stream(text: str, target: Target) -> object:
    from irc.diagnostics import collect_diagnostics
    from irc.ir.context import make_context
    from irc.ir.io import parse_module
    from irc.passes import parse_pipeline
    from irc.targets import using_target

    module = parse_module(text, make_context(), "staging.mlir")
    with using_target(target), collect_diagnostics():
        for module_pass in parse_pipeline("plan-tiles,plan-ddr,lower-to-tile,lower-to-npu"):
            module_pass.apply(make_context(), module)
    return module


def test_staged_weights_are_copied_beside_the_layer_before_and_stay_bit_exact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second conv re-reads its weights for every tile: they are staged, copied
    from flash into the system SRAM on `dma_stage` before the first conv's commands
    (so the copy runs beside it), and its tiles load them from there. Bit-exact, fewer
    flash bytes and fewer cycles than with staging off."""
    from xdsl.dialects.func import FuncOp

    from irc.dialects import npu
    from irc.interp import run_function
    from irc.ir.context import make_context
    from irc.ir.io import parse_module
    from irc.sim.run import simulate
    from irc.tiling import planner

    text, inputs = staging_program()
    target = staging_target(tmp_path)
    expected = run_function(parse_module(text, make_context(), "staging.mlir"), inputs)
    module = compile_stream(text, target)
    outputs, report = simulate(module, inputs, target)
    for name, array in expected.items():
        np.testing.assert_array_equal(outputs[name], array, err_msg=name)
    stream = next(op for op in module.ops if isinstance(op, FuncOp))
    commands = [op for op in stream.walk() if isinstance(op, npu.Command)]
    staging = [
        i
        for i, op in enumerate(commands)
        if isinstance(op, npu.DmaOp) and op.queue() == "dma_stage"
    ]
    first_mac = next(i for i, op in enumerate(commands) if op.queue() == "mac")
    assert staging and max(staging) < first_mac  # before the first conv computes
    copies = [commands[i] for i in staging]
    for copy in copies:
        assert isinstance(copy, npu.DmaOp) and copy.source is not None and copy.dest is not None
        assert "system_sram" in str(copy.dest.type) and "flash" in str(copy.source.type)
    # Only the second conv's weights: the first one's copy could hide behind nothing.
    moved = sum(npu.extent_bytes(copy.dest.type) for copy in copies)  # type: ignore[union-attr]
    assert moved == 64 * 3 * 3 * 32
    assert report.total.busy["dma_stage"] > 0
    # The same without staging: more flash traffic, more cycles.
    monkeypatch.setattr(planner, "STAGED_OPS", ())
    planner._plan_shape.cache_clear()
    apart = compile_stream(text, target)
    outputs, unstaged = simulate(apart, inputs, target)
    for name, array in expected.items():
        np.testing.assert_array_equal(outputs[name], array, err_msg=name)
    assert unstaged.total.busy["dma_stage"] == 0
    assert report.total.traffic["flash"][0] < unstaged.total.traffic["flash"][0]
    assert report.cycles < unstaged.cycles
