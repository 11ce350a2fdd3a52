"""Multi-core NPUs: layers split across cores, per-core queues and SRAMs, cross-core
synchronisation (docs/simulator.md, "Cores"; docs/tiling.md, "Cores")."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from test_interp_tile import qtype
from test_lower_to_tile import conv, int8, program
from test_simulator import check_every_deletion, compile_to_npu, parse
from xdsl.dialects.builtin import ModuleOp

from irc.diagnostics import IrcError
from irc.dialects import npu, tile
from irc.interp import run_function
from irc.ir.io import verify_module
from irc.sim.machine import Hazard
from irc.sim.run import chrome_trace, simulate
from irc.sim.schedule import Item, schedule
from irc.targets import load_target
from irc.targets.model import Cores
from irc.tiling.builder import core_shares, split_dimension
from irc.tiling.lowering import Dim
from irc.tiling.planner import Layer, plan_layer

DEMO = load_target("npu-demo")
FAST_DDR = replace(
    DEMO.memories["ddr"],
    read_bytes_per_second=4e9,
    write_bytes_per_second=4e9,
    max_reads=32,
    max_writes=32,
)
NPU_DEMO = replace(DEMO, memories={**DEMO.memories, "ddr": FAST_DDR})
"""npu-demo with four times its DDR bandwidth: its convs are compute bound."""
TWO_CORES = replace(NPU_DEMO, cores=Cores(count=2, sync_latency_cycles=40))
"""The same with two cores."""


def two_core_convs(rng: np.random.Generator, size: int = 32) -> tuple[str, np.ndarray]:
    """Two convs of size x size x 64, the second reading the first, each of several
    tiles (of rows, then of output channels): compute bound, so that the planner
    splits them across two cores."""
    shape = (1, size, size, 64)
    x_type = qtype(shape, 0.1, -3)
    first = conv(rng, "a", "x", x_type, shape, 64, tile=(max(size // 8, 2), size, 64, 64))
    second = conv(
        rng, "b", "a", first.output_type, first.output_shape, 64, input_scale=0.1,
        tile=(size, size, 16, 64),
    )  # fmt: skip
    text = program([("x", x_type)], first.lines + "\n" + second.lines, [("b", second.output_type)])
    return text, int8(rng, shape)


def cores_of(module: ModuleOp) -> set[int]:
    return {op.core_index() for op in module.walk() if isinstance(op, npu.Command)}


# ---- splitting a loop nest ----------------------------------------------------------


def test_the_outermost_dimension_of_several_tiles_is_cut_into_whole_tiles_per_core() -> None:
    dims = [Dim("c", 64, 64), Dim("n", 1, 1), Dim("h", 30, 4), Dim("w", 16, 16), Dim("k", 64, 8)]
    assert split_dimension(dims, 1) is None
    assert split_dimension(dims, 2) == dims[2]
    shares = core_shares(dims, 3)
    # 8 tiles of 4 rows (the last of 2): 3, 3 and 2 tiles.
    assert [(d.start, d.extent) for d in shares] == [(0, 12), (12, 12), (24, 6)]
    # More cores than tiles: one tile a core.
    assert [(d.start, d.extent) for d in core_shares([Dim("h", 8, 4)], 4)] == [(0, 4), (4, 4)]
    # A split K is never cut; nothing else to cut: no split.
    assert core_shares([Dim("c", 8, 8), Dim("k", 64, 8)], 2) == []


def big_conv(out_c: int = 256, size: int = 28) -> Layer:
    return Layer(
        "conv", "qnn.conv", "conv", "mac", 1, size, size, 128, size, size, out_c,
        kernel=(3, 3), pads=(1, 1, 1, 1), has_weights=True,
    )  # fmt: skip


def test_the_planner_splits_a_compute_bound_layer_and_says_why() -> None:
    layer = big_conv()
    one = plan_layer(layer, NPU_DEMO)
    two = plan_layer(layer, TWO_CORES)
    assert one.cores == 1 and one.cores_note == ""
    assert two.cores == 2 and two.split in ("output channels", "rows")
    assert two.cycles < 0.6 * two.one_core_cycles
    assert "split over" in two.cores_note and f"{two.one_core_cycles:,}" in two.cores_note


def test_a_layer_the_memory_port_bounds_stays_on_one_core() -> None:
    """An elementwise add moves three bytes for each it computes: two cores would only
    share the DDR port; the planner keeps it on one and says so."""
    layer = Layer(
        "add", "qnn.add", "elementwise", "vector", 1, 4096, 1, 64, 4096, 1, 64,
        groups=64, inputs=2,
    )  # fmt: skip
    plan = plan_layer(layer, TWO_CORES)
    assert plan.cores == 1
    assert plan.cores_note.startswith("one core")


# ---- the stream -----------------------------------------------------------------------


def test_split_layers_run_on_both_cores_bit_exact_and_faster() -> None:
    text, x = two_core_convs(np.random.default_rng(23))
    expected = run_function(parse(text), [x])
    one = compile_to_npu(text, target=NPU_DEMO)
    two = compile_to_npu(text, target=TWO_CORES)
    assert cores_of(one) == {0} and cores_of(two) == {0, 1}
    assert two.ops.first.attributes[npu.CORES_ATTR].value.data == 2  # type: ignore[union-attr]
    outputs_one, report_one = simulate(one, [x], NPU_DEMO)
    outputs_two, report_two = simulate(two, [x], TWO_CORES)
    for name in expected:
        assert np.array_equal(outputs_one[name], expected[name])
        assert np.array_equal(outputs_two[name], expected[name])
    # The MAC work is shared evenly between the two arrays (none is lost or done
    # twice; SRAM banks shift a few cycles), and the run is at least 1.5x faster: each layer's first loads and last
    # store, and the wait between the layers, are not shared.
    busy = report_two.total.busy
    shared = busy["mac"] + busy["core1.mac"]
    assert abs(shared - report_one.total.busy["mac"]) < 0.01 * shared
    assert abs(busy["mac"] - busy["core1.mac"]) < 0.01 * busy["mac"]
    assert report_one.cycles >= 1.5 * report_two.cycles
    assert "core1.mac" in report_two.queues and report_two.cores == 2
    # Core 1 computes in its own SRAM.
    spaces = {tile.space_of(op.result.type) for op in two.walk() if isinstance(op, npu.ViewOp)}
    assert {"sram", "sram1"} <= spaces


def test_the_tile_level_says_which_core_runs_which_tiles() -> None:
    text, _ = two_core_convs(np.random.default_rng(23), 16)
    module = compile_to_npu(text, "plan-tiles,lower-to-tile", TWO_CORES)
    regions = [op for op in module.walk() if isinstance(op, tile.OnCoreOp)]
    assert sorted(op.props().int("core") for op in regions) == [0, 0, 1, 1]
    # Each core's share has its own buffers.
    for region in regions:
        assert any(isinstance(op, tile.AllocOp) for op in region.body.walk())


def test_deleting_any_synchronisation_across_cores_is_reported() -> None:
    """Every wait for another core's token, and every signal such a wait waits for,
    is needed: deleting one is a hazard naming both commands (or a wait for a token
    nothing sets). (Within a core: tests/test_simulator.py.)"""
    text, x = two_core_convs(np.random.default_rng(24), 8)
    compiled = compile_to_npu(text, target=TWO_CORES)
    signals = {
        op.props().int("token"): op for op in compiled.walk() if isinstance(op, npu.SignalOp)
    }
    across = {
        op.props().int("token")
        for op in compiled.walk()
        if isinstance(op, npu.WaitOp)
        and signals[op.props().int("token")].core_index() != op.core_index()
    }
    assert across, "the layers' cores synchronise"
    deleted = check_every_deletion(
        compiled, [x], TWO_CORES, only=lambda op: op.props().int("token") in across
    )
    assert deleted >= 2 * len(across)


def test_a_race_across_cores_names_both_commands_and_their_cores() -> None:
    text, x = two_core_convs(np.random.default_rng(24), 8)
    compiled = compile_to_npu(text, target=TWO_CORES)
    function = compiled.ops.first
    signals = {
        op.props().int("token"): op for op in function.walk() if isinstance(op, npu.SignalOp)
    }
    for wait in [op for op in function.walk() if isinstance(op, npu.WaitOp)]:
        if signals[wait.props().int("token")].core_index() != wait.core_index() == 1:
            wait.detach()
            wait.erase()
            break
    with pytest.raises(Hazard, match=r"on core1\.\w+ .* on (dma_out|mac|vector|dma_in)"):
        simulate(compiled, [x], TWO_CORES)


def test_a_program_for_two_cores_does_not_run_on_one() -> None:
    text, x = two_core_convs(np.random.default_rng(23), 8)
    compiled = compile_to_npu(text, target=TWO_CORES)
    with pytest.raises(IrcError, match="runs on 2 cores; npu-demo has 1"):
        simulate(compiled, [x], NPU_DEMO)


def test_the_trace_has_one_process_per_core() -> None:
    text, x = two_core_convs(np.random.default_rng(23), 8)
    _, report = simulate(compile_to_npu(text, target=TWO_CORES), [x], TWO_CORES)
    events = chrome_trace(report)["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert names == {0: "npu-demo core 0", 1: "npu-demo core 1"}
    assert {e["pid"] for e in events if e.get("ph") == "X"} == {0, 1}


# ---- timing -------------------------------------------------------------------------------


def test_a_wait_for_another_cores_token_takes_the_sync_latency() -> None:
    signal, wait = Item("signal", token=0), Item("wait", 40, token=0)
    first, second = Item("command", 100), Item("command", 10)
    schedule([[first, signal], [wait, second]])
    assert second.start == 140 and second.end == 150


# ---- the dialects ---------------------------------------------------------------------------

PROGRAM = """func.func @main() attributes {{npu.cores = 2 : i64, npu.ddr_bytes = 64 : i64, npu.sram_bytes = 64 : i64}} {{
  %d = npu.view ddr[0] : memref<16xi8, "ddr">
  %s = npu.view {space}[0] : memref<16xi8, "{space}">
  npu.dma %d to %s {{core = {core} : i64}} : memref<16xi8, "ddr">, memref<16xi8, "{space}">
  npu.end
  func.return
}}"""


def test_a_core_reaches_its_own_sram_only() -> None:
    verify_module(parse(PROGRAM.format(space="sram1", core=1)))
    with pytest.raises(Exception, match="another core's SRAM"):
        verify_module(parse(PROGRAM.format(space="sram1", core=0)))
    with pytest.raises(Exception, match="runs on core 2; the program has 2 cores"):
        verify_module(parse(PROGRAM.format(space="sram", core=2)))


def test_core_srams_are_named_by_core() -> None:
    assert [npu.core_sram(core) for core in range(3)] == ["sram", "sram1", "sram2"]
    assert [npu.sram_core(name) for name in ("sram", "sram1", "sram12", "ddr", "sram0")] == [
        0, 1, 12, None, None,
    ]  # fmt: skip
    assert npu.engine_name(npu.engine(1, "mac")) == "core1.mac"
    assert npu.engine_name(npu.engine(0, "mac")) == "mac"


def test_split_cores_splits_every_layer_of_several_tiles_whatever_its_cost() -> None:
    """On npu-demo's own 1 GB/s DDR the convs are bound by the DDR port: the planner
    keeps them on one core; `plan-tiles{split-cores=true}` splits them all the same
    (for tests), and the stream stays bit-exact."""
    slow = replace(DEMO, cores=Cores(count=2, sync_latency_cycles=40))
    text, x = two_core_convs(np.random.default_rng(25), 8)
    expected = run_function(parse(text), [x])
    by_cost = compile_to_npu(text, target=slow)
    assert cores_of(by_cost) == {0}
    pipeline = "plan-tiles{split-cores=true},lower-to-tile,lower-to-npu"
    split = compile_to_npu(text, pipeline, slow)
    assert cores_of(split) == {0, 1}
    outputs, _ = simulate(split, [x], slow)
    assert all(np.array_equal(outputs[name], expected[name]) for name in expected)


def test_streaming_frames_of_a_two_core_program_is_refused_with_a_reason() -> None:
    """Frames pipelined across cores are not timed yet (issue 23, item 4): one clear
    error, not a wrong figure."""
    from irc.interp import make_interpreter
    from irc.sim.machine import Program
    from irc.sim.streaming import stream_timing

    text, _ = two_core_convs(np.random.default_rng(23), 8)
    compiled = compile_to_npu(text, target=TWO_CORES)
    function = compiled.ops.first
    program = Program(function, TWO_CORES, make_interpreter(compiled))  # type: ignore[arg-type]
    with pytest.raises(IrcError, match="timed for a program on one core; this one runs on 2"):
        stream_timing(program, 4)
