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

from irc.diagnostics import IrcError, collect_diagnostics
from irc.dialects import npu, tile
from irc.interp import run_function
from irc.ir.context import make_context
from irc.ir.io import verify_module
from irc.passes import parse_pipeline
from irc.sim.machine import Hazard, Program
from irc.sim.run import Report, chrome_trace, simulate
from irc.sim.schedule import Item, schedule
from irc.sim.streaming import cross_frame_dependencies, stream_timing, unordered
from irc.targets import Target, load_target, using_target
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


SPLIT = "plan-tiles{split-cores=true},lower-to-tile,lower-to-npu"
"""Every layer of several tiles split across the cores, whatever the planner's costs
say (the tests of the synchronisation between them)."""


def exact_run(
    text: str, x: np.ndarray, target: Target, expected: dict[str, np.ndarray]
) -> tuple[ModuleOp, Report]:
    """`text` compiled for `target` and simulated on `x`: the stream and its report,
    every output checked against `expected`."""
    module = compile_to_npu(text, target=target)
    outputs, report = simulate(module, [x], target)
    for name in expected:
        assert np.array_equal(outputs[name], expected[name])
    return module, report


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
    one, report_one = exact_run(text, x, NPU_DEMO, expected)
    two, report_two = exact_run(text, x, TWO_CORES, expected)
    assert cores_of(one) == {0} and cores_of(two) == {0, 1}
    assert two.ops.first.attributes[npu.CORES_ATTR].value.data == 2  # type: ignore[union-attr]
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


def cross_core_tokens(compiled: ModuleOp) -> set[int | None]:
    """The tokens of the waits for a signal of another core."""
    signals = {
        op.props().int("token"): op for op in compiled.walk() if isinstance(op, npu.SignalOp)
    }
    return {
        op.props().int("token")
        for op in compiled.walk()
        if isinstance(op, npu.WaitOp)
        and signals[op.props().int("token")].core_index() != op.core_index()
    }


def test_deleting_any_synchronisation_across_cores_is_reported() -> None:
    """Every wait for another core's token, and every signal such a wait waits for,
    is needed: deleting one is a hazard naming both commands (or a wait for a token
    nothing sets). (Within a core: tests/test_simulator.py.)"""
    text, x = two_core_convs(np.random.default_rng(24), 8)
    compiled = compile_to_npu(text, SPLIT, TWO_CORES)
    across = cross_core_tokens(compiled)
    assert across, "the layers' cores synchronise"
    deleted = check_every_deletion(
        compiled, [x], TWO_CORES, only=lambda op: op.props().int("token") in across
    )
    assert deleted >= 2 * len(across)


def test_a_race_across_cores_names_both_commands_and_their_cores() -> None:
    text, x = two_core_convs(np.random.default_rng(24), 8)
    compiled = compile_to_npu(text, SPLIT, TWO_CORES)
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
    compiled = compile_to_npu(text, SPLIT, TWO_CORES)
    with pytest.raises(IrcError, match="runs on 2 cores; npu-demo has 1"):
        simulate(compiled, [x], NPU_DEMO)


def test_the_trace_has_one_process_per_core() -> None:
    text, x = two_core_convs(np.random.default_rng(23), 8)
    _, report = simulate(compile_to_npu(text, SPLIT, TWO_CORES), [x], TWO_CORES)
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


def streamed(text: str, pipeline: str) -> Program:
    """The loaded program of `text` compiled for TWO_CORES by `pipeline`."""
    from irc.sim.run import Simulator

    simulator = Simulator(compile_to_npu(text, pipeline, TWO_CORES), TWO_CORES)
    assert simulator.functions.program is not None
    return simulator.functions.program


def frame_cycles(program: Program) -> int:
    """One frame alone: the program's own schedule."""
    return max(event.end for event in program.events)


ONE_CORE_A_LAYER = "plan-tiles{layer-cores=1},plan-ddr{keep-inputs=true},lower-to-tile,lower-to-npu"
"""Every layer on one core; the input kept in its buffer: frames that take turns."""
SPLIT = "plan-tiles{split-cores=true},lower-to-tile,lower-to-npu"


def test_frames_of_a_one_core_program_take_turns_on_the_cores() -> None:
    """A program whose layers all run on core 0 (`layer-cores=1`) streams its frames
    over the two cores, frame k on core k % 2 with that core's SRAM and an arena of
    activations a core: frames on different cores share only the weights and the DDR's
    port, so frame k+1 runs beside frame k, and frame k+2 follows frame k on its core."""
    text, _ = two_core_convs(np.random.default_rng(23), 16)
    program = streamed(text, ONE_CORE_A_LAYER)
    assert {entry.queue // len(npu.QUEUES) for entry in program.timeline.entries} == {0}
    turns = stream_timing(program, 6)
    alone = stream_timing(program, 6, cores=1)
    assert (turns.turns, alone.turns) == (2, 1)
    single = frame_cycles(program)
    # One frame alone is the program's own run, whichever core it is on.
    assert turns.single_frame_cycles == alone.single_frame_cycles == single
    assert stream_timing(program, 1).total_cycles == single
    # Frames 0 and 1 start at once, each on its core; frame 2 once frame 0 has read
    # the input they share the arena of.
    assert turns.starts[:2] == [0, 0] and 0 < turns.starts[2] < turns.ends[0]
    # Twice the compute, one DDR: 1.8x the frames a second of one core.
    assert turns.fps > 1.7 * alone.fps
    assert all(start < end for start, end in zip(turns.starts, turns.ends))
    # Only frames on the same core (two apart) wait for each other.
    assert "taking turns on 2 cores" in turns.summary()
    assert {blocker.back for blocker in turns.blockers} == {2}
    assert {blocker.memory for blocker in turns.blockers} == {"sram"}


def test_frames_taking_turns_wait_for_the_same_commands_once_they_have_met_both_cores() -> None:
    """Replaying seven frames: frame 1 waits for nothing of frame 0 (another core,
    another arena); from frame 2 on, every frame waits for the same commands of the
    frame two before it, on its core, and none races with a frame further back (the
    replay asserts it). With every frame waiting as the last does, no command races
    with an earlier frame; without those waits, frames race."""
    text, _ = two_core_convs(np.random.default_rng(23), 16)
    program = streamed(text, ONE_CORE_A_LAYER)
    found = cross_frame_dependencies(program, 7)
    assert len(found) == 6 and found[0] == []
    assert {dependency.back for dependency in found[-1]} == {2}
    assert found[1] == found[2] == found[3] == found[4] == found[5]
    assert cross_frame_dependencies(program)[-1] == found[-1]
    assert unordered(program, found[-1], 8) == []
    assert unordered(program, [], 8)


def test_frames_take_turns_on_as_many_cores_as_have_room_for_an_arena() -> None:
    """Each core's frame has an arena of activations of its own: with room in the DDR
    for one only, the frames stay on one core by default, and asking for two is an
    error saying what does not fit."""
    text, _ = two_core_convs(np.random.default_rng(23), 16)
    program = streamed(text, ONE_CORE_A_LAYER)
    needed = npu.memory_sizes(program.function)["ddr"]
    small_ddr = TWO_CORES.with_memory("ddr", size_bytes=needed + 4096)
    again = Program(program.function, small_ddr, program.interpreter)
    assert stream_timing(again, 3).turns == 1
    with pytest.raises(
        IrcError, match="frames taking turns on 2 cores need an arena of activations each"
    ):
        stream_timing(again, 3, cores=2)


def test_frames_of_a_split_program_run_on_its_cores() -> None:
    """A program with layers split across the cores runs every frame on both: frame
    k+1's loads overlap frame k's last layer; the cross-core waits within a frame
    keep their latency."""
    text, _ = two_core_convs(np.random.default_rng(23), 16)
    program = streamed(text, SPLIT)
    assert {entry.queue // len(npu.QUEUES) for entry in program.timeline.entries} == {0, 1}
    timing = stream_timing(program, 4)
    assert timing.turns == 1
    assert timing.total_cycles < 4 * frame_cycles(program)
    assert timing.starts == sorted(timing.starts) and timing.ends == sorted(timing.ends)
    (found,) = cross_frame_dependencies(program)
    assert unordered(program, found, 4) == []
    # A frame alone is the program's run, the latency of its cross-core waits included.
    slow = replace(TWO_CORES, cores=Cores(count=2, sync_latency_cycles=20_000))
    again = Program(program.function, slow, program.interpreter)
    assert frame_cycles(again) > frame_cycles(program) + 19_000
    for each in (program, again):
        assert stream_timing(each, 1).total_cycles == frame_cycles(each)


@pytest.mark.parametrize(
    ("pipeline", "cores", "message"),
    [
        (ONE_CORE_A_LAYER, 3, "frames can take turns on 1 to 2 cores of"),
        (SPLIT, 2, "frames of a program split across 2 cores run on those cores"),
    ],
)
def test_frames_on_cores_a_program_cannot_use_are_errors(
    pipeline: str, cores: int, message: str
) -> None:
    text, _ = two_core_convs(np.random.default_rng(23), 8)
    with pytest.raises(IrcError, match=message):
        stream_timing(streamed(text, pipeline), 4, cores=cores)


def test_layer_cores_bounds_the_cores_a_layer_is_split_across() -> None:
    """`plan-tiles{layer-cores=1}` keeps on one core every layer the planner splits
    by default; more cores than the target has is an error naming the option."""
    text, _ = two_core_convs(np.random.default_rng(23), 16)
    by_cost = compile_to_npu(text, "plan-tiles,lower-to-tile,lower-to-npu", TWO_CORES)
    assert cores_of(by_cost) == {0, 1}
    assert cores_of(compile_to_npu(text, ONE_CORE_A_LAYER, TWO_CORES)) == {0}
    with pytest.raises(IrcError, match=r"layer-cores takes 0 \(all of them\) to the 2 cores"):
        compile_to_npu(text, "plan-tiles{layer-cores=3}", TWO_CORES)


def branches(rng: np.random.Generator) -> tuple[str, np.ndarray]:
    """Two convs that both read %x (an Inception block's branches), each small
    enough that splitting it across the cores does not pay, and a third reading the
    first: the second conv needs nothing the first computes."""
    shape = (1, 8, 8, 32)
    x_type = qtype(shape, 0.1, -3)
    first = conv(rng, "a", "x", x_type, shape, 32)
    second = conv(rng, "b", "x", x_type, shape, 32)
    third = conv(rng, "c", "a", first.output_type, first.output_shape, 32, input_scale=0.1)
    text = program(
        [("x", x_type)],
        first.lines + "\n" + second.lines + "\n" + third.lines,
        [("b", second.output_type), ("c", third.output_type)],
    )
    return text, int8(rng, shape)


def test_a_layer_that_does_not_wait_for_core_0_runs_on_core_1_beside_it() -> None:
    """Pipelining within a frame: plan-tiles puts each layer on one core where it ends
    first (`assign_cores`): the second branch does not need the first, so it runs on
    core 1 while core 0 computes the first branch and then the conv reading it (a
    chain stays on its core). Bit-exact, and faster than on one core."""
    text, x = branches(np.random.default_rng(31))
    expected = run_function(parse(text), [x])
    planned = compile_to_npu(text, "plan-tiles", TWO_CORES)
    convs = [op for op in planned.walk() if op.name == "qnn.conv"]
    recorded = [op.attributes["irc.tiling"] for op in convs]
    assert ["cores" in plan.data for plan in recorded] == [False] * 3  # type: ignore[attr-defined]
    assert [plan.data.get("core") for plan in recorded][1].value.data == 1  # type: ignore[attr-defined,union-attr]
    assert "core" not in recorded[0].data and "core" not in recorded[2].data  # type: ignore[attr-defined]
    _, report_one = exact_run(text, x, NPU_DEMO, expected)
    two, report_two = exact_run(text, x, TWO_CORES, expected)
    assert cores_of(two) == {0, 1}
    # The second branch's time is hidden but for the DDR the cores share, and its
    # inputs' loads and the sync with core 0: 8,836 -> 7,400 cycles.
    assert report_two.cycles < 0.9 * report_one.cycles
    assert report_two.total.busy["core1.mac"] > 0
    # With every layer on one core (layer-cores=1), nothing moves.
    assert cores_of(compile_to_npu(text, ONE_CORE_A_LAYER, TWO_CORES)) == {0}


# ---- lock step (a DMA that broadcasts into every core's SRAM) ---------------------------

LOCK_STEP_CORES = replace(TWO_CORES, cores=replace(TWO_CORES.cores, broadcast_loads=True))
"""Two npu-demo cores whose DMA can write one box into both SRAMs (as the U65-512's
parallel mode reads an IFM block once for both cores)."""


def lock_step_conv(rng: np.random.Generator, size: int = 16) -> tuple[str, np.ndarray]:
    """A 3x3 conv of size x size x 64 to 64 channels in tiles of 4 rows and 16 output
    channels, weights stationary: compute bound, four channel tiles."""
    shape = (1, size, size, 64)
    x_type = qtype(shape, 0.1, -3)
    layer = conv(rng, "a", "x", x_type, shape, 64, tile=(4, size, 16, 64))
    return program([("x", x_type)], layer.lines, [("a", layer.output_type)]), int8(rng, shape)


def test_a_layer_in_lock_step_loads_each_input_tile_once_for_both_cores() -> None:
    """With broadcast loads the planner splits the conv over output channels in lock
    step: the cores walk the same tiles, two channel tiles at a time; the input's load
    runs once, broadcast into both SRAMs, and each core's loads, compute and store of
    its channel tile sit in one tile.on_core a tile. Bit-exact at the tile level and
    on the simulator; faster than the split over output channels, where each core
    loads every input tile (26,288 -> 23,312 cycles; one core: 40,204), and the DDR
    reads the input once."""
    from irc.tiling.planner import LOCK_STEP

    text, x = lock_step_conv(np.random.default_rng(5))
    expected = run_function(parse(text), [x])
    planned = compile_to_npu(text, "plan-tiles", LOCK_STEP_CORES)
    recorded = next(op for op in planned.walk() if op.name == "qnn.conv").attributes["irc.tiling"]
    assert recorded.data["split"].data == LOCK_STEP  # type: ignore[attr-defined]
    tiled = compile_to_npu(text, "plan-tiles,lower-to-tile", LOCK_STEP_CORES)
    assert run_function(tiled, [x]).keys() == expected.keys()
    for name, value in run_function(tiled, [x]).items():
        assert np.array_equal(value, expected[name])
    copies = [op for op in tiled.walk() if isinstance(op, tile.CopyOp)]
    broadcast = [op for op in copies if op.props().int("broadcast") == 2]
    assert broadcast and all(op.parent_op() is not None for op in broadcast)
    assert not any(isinstance(op.parent_op(), tile.OnCoreOp) for op in broadcast)
    # Each loop body holds one region a core (merged), the broadcast load before them.
    for loop in [op for op in tiled.walk() if op.name == "scf.for"]:
        regions = [op for op in loop.body.block.ops if isinstance(op, tile.OnCoreOp)]
        assert [region.props().int("core") for region in regions] in ([], [0, 1])
    lock, report_lock = exact_run(text, x, LOCK_STEP_CORES, expected)
    _, report_split = exact_run(text, x, TWO_CORES, expected)
    assert any(isinstance(op, npu.DmaOp) and op.props().int("broadcast") == 2 for op in lock.walk())
    assert report_lock.cycles < 0.95 * report_split.cycles
    assert report_lock.total.ddr_read < report_split.total.ddr_read
    # Both cores computed half of the MACs.
    busy = report_lock.total.busy
    assert busy["mac"] == busy["core1.mac"] > 0


def test_deleting_any_synchronisation_of_a_layer_in_lock_step_is_reported() -> None:
    """Core 1 reads what core 0's broadcast wrote, and core 0's next broadcast
    overwrites what core 1 read: each wait across the cores, and each signal it waits
    for, is needed; deleting one is a hazard."""
    text, x = lock_step_conv(np.random.default_rng(6), 8)
    compiled = compile_to_npu(text, target=LOCK_STEP_CORES)
    across = cross_core_tokens(compiled)
    assert len(across) >= 4, "the cores synchronise on every tile"
    deleted = check_every_deletion(
        compiled, [x], LOCK_STEP_CORES, only=lambda op: op.props().int("token") in across
    )
    assert deleted >= 2 * len(across)


def test_a_broadcast_needs_a_target_that_can() -> None:
    """A plan in lock step lowered for cores without broadcast loads is an error naming
    the layer; so is a broadcast copy into a system memory."""
    text, _ = lock_step_conv(np.random.default_rng(5), 8)
    planned = compile_to_npu(text, "plan-tiles", LOCK_STEP_CORES)
    with (
        pytest.raises(IrcError, match="cannot broadcast a load to every core"),
        using_target(TWO_CORES),
        collect_diagnostics(),
    ):
        for module_pass in parse_pipeline("lower-to-tile"):
            module_pass.apply(make_context(), planned)
    bad = """func.func @main(%a: memref<4xi8, "ddr">, %b: memref<4xi8, "ddr">) {
  %c0 = arith.constant 0 : index
  tile.copy %a[%c0] to %b[%c0] sizes [4] {broadcast = 2} : memref<4xi8, "ddr"> to memref<4xi8, "ddr">
  func.return
}"""
    with pytest.raises(Exception, match="'broadcast' copies into an SRAM buffer"):
        verify_module(parse(bad))
