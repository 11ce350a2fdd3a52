"""Streaming frames on the NPU simulator (irc/sim/streaming.py).

- One frame streamed is the `Program`'s own schedule, command for command.
- Hand-written streams on npu-demo, every cycle counted by hand: the next frame's
  input DMA overlapping this frame's compute (vector bound); buffers that the frames
  share, so that only the data allows overlap; a result written over the input, so
  that frames run one after another.
- Host calls at the start and the end of the stream (pre- and post-processing), on
  the host's two lanes, counted by hand: the next frame's host call and input DMA
  overlapping this frame's compute; frame k+2 after frame k on their lane; a buffer
  both host calls use ordering the lanes' calls.
- The dependencies between frames, found by the scoreboard for frame 1 -> 2, are those
  it finds for every later pair.
- Every pair of commands of different frames that touch the same bytes (one writing)
  runs in order, checked from the bytes apart from the scoreboard.
- On compiled programs: no faster than the busiest engine (each host lane taking
  every other frame) or the DDR allows, and no slower than one frame after another
  (within the DDR's first-come-first-served turns); the digits CNN, whose float input
  and output the host converts, overlaps its frames.
- Latency percentiles, FPS and the summary from known numbers.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Sequence

import numpy as np
import onnx
import pytest
from test_interp_tile import qtype
from test_lower_to_tile import conv, int8, program
from test_simulator import DIGITS, NPU_DEMO, STREAM, compile_to_npu, parse
from xdsl.dialects.builtin import ModuleOp

from irc.diagnostics import IrcError, collect_diagnostics
from irc.dialects import npu
from irc.ir.context import make_context
from irc.passes import parse_pipeline
from irc.sim.machine import Program
from irc.sim.run import Simulator
from irc.sim.streaming import (
    HOST_LANES,
    StreamTiming,
    cross_frame_dependencies,
    schedule_frames,
    stream_timing,
)
from irc.stream.scoreboard import View
from irc.targets import Target, using_target
from irc.testing.quantized import quantize_with_irc
from irc.testing.targets import host_casts

HEADER = (
    "func.func @main(%x: tensor<1x12x12x16xi8>) -> tensor<1x7x7x16xi8> attributes "
    "{npu.ddr_bytes = 4096 : i64, npu.weights_bytes = 0 : i64, npu.sram_bytes = 8192 : i64, "
    "npu.sram_alignment = 64 : i64} {"
)

# A 12x12x16 int8 map in (2,304 bytes), a 6x6 max pool out (7x7x16, 784 bytes), with a
# clamp on each side so that the pool reads neither the loaded buffer nor the stored one.
PIPELINED = f"""{HEADER}
  %xd = npu.view ddr[0] : memref<1x12x12x16xi8, "ddr">
  npu.place %x into %xd : tensor<1x12x12x16xi8>, memref<1x12x12x16xi8, "ddr">
  %yd = npu.view ddr[2304] : memref<1x7x7x16xi8, "ddr">
  %a = npu.view sram[0] : memref<1x12x12x16xi8, "sram">
  %a2 = npu.view sram[2304] : memref<1x12x12x16xi8, "sram">
  %b = npu.view sram[4608] : memref<1x7x7x16xi8, "sram">
  %b2 = npu.view sram[5440] : memref<1x7x7x16xi8, "sram">
  npu.dma %xd to %a : memref<1x12x12x16xi8, "ddr">, memref<1x12x12x16xi8, "sram">
  npu.signal {{queue = "dma_in", token = 0}}
  npu.wait {{queue = "vector", token = 0}}
  npu.clamp %a, %a2 {{clamp_min = -100}} : memref<1x12x12x16xi8, "sram">, memref<1x12x12x16xi8, "sram">
  npu.pool %a2, %b {{kind = "max", kernel_shape = [6, 6]}} : memref<1x12x12x16xi8, "sram">, memref<1x7x7x16xi8, "sram">
  npu.clamp %b, %b2 {{clamp_max = 100}} : memref<1x7x7x16xi8, "sram">, memref<1x7x7x16xi8, "sram">
  npu.signal {{queue = "vector", token = 1}}
  npu.wait {{queue = "dma_out", token = 1}}
  npu.dma %b2 to %yd : memref<1x7x7x16xi8, "sram">, memref<1x7x7x16xi8, "ddr">
  npu.end
  %y = npu.read %yd : memref<1x7x7x16xi8, "ddr"> to tensor<1x7x7x16xi8>
  func.return %y : tensor<1x7x7x16xi8>
}}"""


def shared(output_address: int) -> str:
    """The same pool reading the loaded buffer and writing the stored one, its result
    at DDR `output_address`."""
    return f"""{HEADER}
  %xd = npu.view ddr[0] : memref<1x12x12x16xi8, "ddr">
  npu.place %x into %xd : tensor<1x12x12x16xi8>, memref<1x12x12x16xi8, "ddr">
  %yd = npu.view ddr[{output_address}] : memref<1x7x7x16xi8, "ddr">
  %a = npu.view sram[0] : memref<1x12x12x16xi8, "sram">
  %b = npu.view sram[2304] : memref<1x7x7x16xi8, "sram">
  npu.dma %xd to %a : memref<1x12x12x16xi8, "ddr">, memref<1x12x12x16xi8, "sram">
  npu.signal {{queue = "dma_in", token = 0}}
  npu.wait {{queue = "vector", token = 0}}
  npu.pool %a, %b {{kind = "max", kernel_shape = [6, 6]}} : memref<1x12x12x16xi8, "sram">, memref<1x7x7x16xi8, "sram">
  npu.signal {{queue = "vector", token = 1}}
  npu.wait {{queue = "dma_out", token = 1}}
  npu.dma %b to %yd : memref<1x7x7x16xi8, "sram">, memref<1x7x7x16xi8, "ddr">
  npu.end
  %y = npu.read %yd : memref<1x7x7x16xi8, "ddr"> to tensor<1x7x7x16xi8>
  func.return %y : tensor<1x7x7x16xi8>
}}"""


MAP = "tensor<1x12x12x16xi8>"
MAP_DDR = 'memref<1x12x12x16xi8, "ddr">'
OUT = "tensor<1x7x7x16xi8>"
OUT_DDR = 'memref<1x7x7x16xi8, "ddr">'


def with_host_calls(keeps_scratch: bool = False) -> str:
    """The clamp, pool, clamp of `PIPELINED` between two host calls: `@pre` copies the
    runtime's input buffer into the one the NPU loads, `@post` the stored result into
    the one the runtime reads (identities: their cost is the transitions and the
    copies). With `keeps_scratch`, `@pre` also leaves a copy of the map in a DDR buffer
    no NPU command touches (`%s`), and `@post` reads it, as it would a normalisation's
    statistics."""
    if keeps_scratch:
        pre = f"""func.func @pre(%a: {MAP}) -> ({MAP}, {MAP}) {{
  func.return %a, %a : {MAP}, {MAP}
}}"""
        post = f"""func.func @post(%a: {OUT}, %s: {MAP}) -> {OUT} {{
  func.return %a : {OUT}
}}"""
        call_pre = f"npu.host_call @pre(%xh) -> (%xd, %s) : ({MAP_DDR}) -> ({MAP_DDR}, {MAP_DDR})"
        call_post = f"npu.host_call @post(%yd, %s) -> (%zd) : ({OUT_DDR}, {MAP_DDR}) -> ({OUT_DDR})"
    else:
        pre = f"""func.func @pre(%a: {MAP}) -> {MAP} {{
  func.return %a : {MAP}
}}"""
        post = f"""func.func @post(%a: {OUT}) -> {OUT} {{
  func.return %a : {OUT}
}}"""
        call_pre = f"npu.host_call @pre(%xh) -> (%xd) : ({MAP_DDR}) -> ({MAP_DDR})"
        call_post = f"npu.host_call @post(%yd) -> (%zd) : ({OUT_DDR}) -> ({OUT_DDR})"
    return f"""{pre}
{post}
func.func @main(%x: {MAP}) -> {OUT} attributes {{npu.ddr_bytes = 16384 : i64, npu.weights_bytes = 0 : i64, npu.sram_bytes = 8192 : i64, npu.sram_alignment = 64 : i64}} {{
  %xh = npu.view ddr[0] : {MAP_DDR}
  npu.place %x into %xh : {MAP}, {MAP_DDR}
  %xd = npu.view ddr[2304] : {MAP_DDR}
  %yd = npu.view ddr[4608] : {OUT_DDR}
  %zd = npu.view ddr[5440] : {OUT_DDR}
  %s = npu.view ddr[6272] : {MAP_DDR}
  %a = npu.view sram[0] : memref<1x12x12x16xi8, "sram">
  %a2 = npu.view sram[2304] : memref<1x12x12x16xi8, "sram">
  %b = npu.view sram[4608] : memref<1x7x7x16xi8, "sram">
  %b2 = npu.view sram[5440] : memref<1x7x7x16xi8, "sram">
  {call_pre}
  npu.signal {{queue = "host", token = 2}}
  npu.wait {{queue = "dma_in", token = 2}}
  npu.dma %xd to %a : {MAP_DDR}, memref<1x12x12x16xi8, "sram">
  npu.signal {{queue = "dma_in", token = 0}}
  npu.wait {{queue = "vector", token = 0}}
  npu.clamp %a, %a2 {{clamp_min = -100}} : memref<1x12x12x16xi8, "sram">, memref<1x12x12x16xi8, "sram">
  npu.pool %a2, %b {{kind = "max", kernel_shape = [6, 6]}} : memref<1x12x12x16xi8, "sram">, memref<1x7x7x16xi8, "sram">
  npu.clamp %b, %b2 {{clamp_max = 100}} : memref<1x7x7x16xi8, "sram">, memref<1x7x7x16xi8, "sram">
  npu.signal {{queue = "vector", token = 1}}
  npu.wait {{queue = "dma_out", token = 1}}
  npu.dma %b2 to %yd : memref<1x7x7x16xi8, "sram">, {OUT_DDR}
  npu.signal {{queue = "dma_out", token = 3}}
  npu.wait {{queue = "host", token = 3}}
  {call_post}
  npu.end
  %y = npu.read %zd : {OUT_DDR} to {OUT}
  func.return %y : {OUT}
}}"""


FAST_HOST = dataclasses.replace(
    NPU_DEMO,
    host=dataclasses.replace(
        NPU_DEMO.host, transition_seconds=1e-6, bandwidth_bytes_per_second=4e9
    ),
)
"""npu-demo with a host that switches to and from the NPU in 1 us (500 cycles, not
50 us) and copies at 4 GB/s (8 bytes a cycle): host calls as short as the NPU's work."""


def loaded(module: ModuleOp, target: Target = NPU_DEMO) -> tuple[Program, Simulator]:
    simulator = Simulator(module, target)
    assert simulator.functions.program is not None
    return simulator.functions.program, simulator


def spans(program: Program, frames: int) -> list[list[tuple[str, int, int]]]:
    """Each frame's commands in program order: (name on queue, start, end)."""
    names = [f"{event.op.name} {npu.QUEUES[event.queue]}" for event in program.events]
    return [
        [(name, item.start, item.end) for name, item in zip(names, frame.commands)]
        for frame in schedule_frames(program, frames)
    ]


def dependencies(program: Program) -> list[tuple[str, str]]:
    """The dependencies of frame 2 on frame 1, as (awaited command, waiting command)."""
    names = {}
    commands = iter(program.events)
    for position, entry in enumerate(program.timeline.entries):
        if entry.item.kind == "command":
            names[position] = next(commands).op.name
    (found,) = cross_frame_dependencies(program)
    return [(names[dependency.before], names[dependency.after]) for dependency in found]


# ---- one frame ------------------------------------------------------------------------


def two_convs() -> ModuleOp:
    """Two convs of a 12x12x16 int8 map (40 then 24 channels), several tiles each."""
    rng = np.random.default_rng(5)
    shape = (1, 12, 12, 16)
    x_type = qtype(shape, 0.1, -3)
    first = conv(rng, "a", "x", x_type, shape, 40, tile=(4, 12, 40, 16))
    second = conv(rng, "y", "a", first.output_type, first.output_shape, 24, tile=(6, 12, 24, 40))
    text = program([("x", x_type)], first.lines + second.lines, [("y", second.output_type)])
    return compile_to_npu(text)


def conv_28x28() -> ModuleOp:
    """A 3x3 conv of 28x28x32 to 32 channels in tiles of 2 rows, double buffered."""
    rng = np.random.default_rng(21)
    shape = (1, 28, 28, 32)
    x_type = qtype(shape, 0.1, -3)
    layer = conv(rng, "y", "x", x_type, shape, 32, tile=(2, 28, 32, 32))
    return compile_to_npu(program([("x", x_type)], layer.lines, [("y", layer.output_type)]))


HOST_CASTS = host_casts(NPU_DEMO)
"""npu-demo without quantize and dequantize on its vector unit: host calls convert a
float model's input and output (the same machine, so `loaded` keeps NPU_DEMO)."""


def digits_cnn() -> ModuleOp:
    """The trained digits CNN quantized by irc, compiled for npu-demo with its casts on
    the host (`HOST_CASTS`): host calls convert its float input and output."""
    data = np.load(DIGITS / "digits_calibration.npz")
    model = onnx.load(DIGITS / "digits_cnn.onnx")
    name = model.graph.input[0].name
    samples = [{name: data["image"][index : index + 1]} for index in range(4)]
    module = quantize_with_irc(model, samples)
    with using_target(HOST_CASTS), collect_diagnostics():
        for module_pass in parse_pipeline("plan-tiles,lower-to-tile,lower-to-npu"):
            module_pass.apply(make_context(), module)
    return module


@pytest.mark.parametrize("build", [lambda: parse(STREAM), two_convs, digits_cnn])
def test_one_frame_is_the_programs_own_schedule(build: Callable[[], ModuleOp]) -> None:
    program, simulator = loaded(build())
    timing = stream_timing(program, 1)
    assert timing.total_cycles == timing.single_frame_cycles == simulator.report.cycles
    assert timing.starts == [0] and timing.ends == [simulator.report.cycles]
    (frame,) = spans(program, 1)
    assert [(start, end) for _, start, end in frame] == [
        (event.start, event.end) for event in program.events
    ]


# ---- hand-counted streams ---------------------------------------------------------------
# npu-demo: a DMA waits 100 cycles, then moves the whole 64-byte bursts it touches at 2
# bytes a cycle; the vector unit does 16 channels of a pixel a cycle, per window tap.
# Loading the 2,304-byte map: 100 + 1,152 = 1,252 cycles; the clamp of the map: 144;
# the pool: 49 pixels x 36 taps = 1,764; the clamp of its output: 49; storing the 784
# bytes (13 bursts): 100 + 416 = 516. The DDR serves data phases first come, first
# served; two asking at the same cycle go in queue order (dma_in first).


def test_the_next_frames_input_dma_overlaps_this_frames_compute() -> None:
    program, simulator = loaded(parse(PIPELINED))
    assert simulator.report.cycles == 1252 + 144 + 1764 + 49 + 516 == 3725
    # Frame 2's load overwrites what frame 1's first clamp reads; its last clamp
    # overwrites what frame 1's store reads. Nothing else: the pool has its own buffers.
    assert dependencies(program) == [("npu.clamp", "npu.dma"), ("npu.dma", "npu.clamp")]
    first, second, third = spans(program, 3)
    assert first == [
        ("npu.dma dma_in", 0, 1252),
        ("npu.clamp vector", 1252, 1396),
        ("npu.pool vector", 1396, 3160),
        ("npu.clamp vector", 3160, 3209),
        ("npu.dma dma_out", 3209, 3725),
    ]
    # Frame 2 is placed once frame 1 has loaded its input (1,252), and loads as soon as
    # frame 1's first clamp is done: during frame 1's pool. Its vector work follows
    # frame 1's, and its store frame 1's store.
    assert second == [
        ("npu.dma dma_in", 1396, 2648),
        ("npu.clamp vector", 3209, 3353),
        ("npu.pool vector", 3353, 5117),
        ("npu.clamp vector", 5117, 5166),
        ("npu.dma dma_out", 5166, 5682),
    ]
    # Frame 3 loads after frame 2's first clamp (3,353); its data phase waits for frame
    # 1's store to leave the DDR (3,725), and still ends before the vector unit wants it.
    assert third == [
        ("npu.dma dma_in", 3353, 3725 + 1152),
        ("npu.clamp vector", 5166, 5310),
        ("npu.pool vector", 5310, 7074),
        ("npu.clamp vector", 7074, 7123),
        ("npu.dma dma_out", 7123, 7639),
    ]
    timing = stream_timing(program, 3)
    assert timing.starts == [0, 1252, 2648] and timing.ends == [3725, 5682, 7639]
    assert stream_timing(program, 2).total_cycles == 5682
    # Vector bound: a frame every 144 + 1,764 + 49 cycles.
    assert stream_timing(program, 6).total_cycles == 3725 + 5 * 1957


def test_frames_sharing_the_buffers_overlap_only_where_the_data_allows() -> None:
    """The pool reads the loaded buffer and writes the stored one: frame 2 loads only
    after frame 1's pool, and pools only after frame 1's store."""
    program, simulator = loaded(parse(shared(2304)))
    assert simulator.report.cycles == 1252 + 1764 + 516 == 3532
    assert dependencies(program) == [("npu.pool", "npu.dma"), ("npu.dma", "npu.pool")]
    first, second, third = spans(program, 3)
    # Frame 2's load and frame 1's store start together when frame 1's pool ends
    # (3,016) and ask for the DDR together (3,116): the load goes first, so frame 1
    # ends 1,152 cycles later than alone.
    assert first == [
        ("npu.dma dma_in", 0, 1252),
        ("npu.pool vector", 1252, 3016),
        ("npu.dma dma_out", 3016, 3116 + 1152 + 416),
    ]
    assert second == [
        ("npu.dma dma_in", 3016, 4268),
        ("npu.pool vector", 4684, 6448),
        ("npu.dma dma_out", 6448, 6548 + 1152 + 416),
    ]
    assert third == [
        ("npu.dma dma_in", 6448, 7700),
        ("npu.pool vector", 8116, 9880),
        ("npu.dma dma_out", 9880, 10396),
    ]
    assert stream_timing(program, 2).total_cycles == 6964
    timing = stream_timing(program, 3)
    assert timing.total_cycles == 10396
    assert timing.starts == [0, 1252, 4268] and timing.ends == [4684, 8116, 10396]


def test_a_result_written_over_the_input_runs_frames_one_after_another() -> None:
    """The result goes where the input was: frame 2's input is placed only once frame
    1's result is read, after its store."""
    program, simulator = loaded(parse(shared(0)))
    assert simulator.report.cycles == 3532
    # The load reads the bytes frame 1's store wrote; the rest follows on the queues.
    assert dependencies(program) == [("npu.dma", "npu.dma")]
    timing = stream_timing(program, 4)
    assert timing.starts == [0, 3532, 2 * 3532, 3 * 3532]
    assert timing.ends == [3532, 2 * 3532, 3 * 3532, 4 * 3532]
    assert timing.latencies == [3532] * 4
    # Why, as the summary says: the load of the next frame's input reads the bytes
    # this frame's store writes (the 784-byte result at DDR 0, inside the input).
    (blocker,) = timing.blockers
    assert (blocker.memory, blocker.start, blocker.end) == ("ddr", 0, 784)
    assert blocker.waiting.startswith("npu.dma at line ") and blocker.waiting.endswith(" on dma_in")
    assert blocker.blocking.endswith(" on dma_out")
    assert f"frame k+1 waits: {blocker}" in timing.summary().splitlines()
    assert "previous frame's npu.dma at line" in str(blocker)


def test_the_blockers_of_frames_sharing_sram_buffers_name_the_buffers() -> None:
    """The result apart from the input, the SRAM buffers shared: frame k+1's load
    writes the buffer frame k's pool reads, its pool the one frame k's store reads."""
    program, _ = loaded(parse(shared(2304)))
    blockers = stream_timing(program, 3).blockers
    assert [(b.memory, b.start, b.end) for b in blockers] == [
        ("sram", 0, 2304),
        ("sram", 2304, 3088),
    ]
    assert [(b.waiting.split()[0], b.blocking.split()[0]) for b in blockers] == [
        ("npu.dma", "npu.pool"),
        ("npu.pool", "npu.dma"),
    ]


# ---- host calls on two lanes -----------------------------------------------------------
# FAST_HOST: a host call is 1,000 cycles of transitions and its copies at 8 bytes a
# cycle: @pre copies 2 x 2,304 bytes (576 cycles: 1,576 in all), @post 2 x 784 (196:
# 1,196). Between them the NPU's part of PIPELINED: load 1,252, clamp 144, pool 1,764,
# clamp 49, store 516. Frame k's host calls run on host lane (k - 1) % 2 (frames
# counted from 1 here).


def test_the_next_frames_host_call_and_input_dma_overlap_this_frames_compute() -> None:
    program, simulator = loaded(parse(with_host_calls()), FAST_HOST)
    assert simulator.report.cycles == 1576 + 1252 + 144 + 1764 + 49 + 516 + 1196 == 6497
    # Frame 2's @pre overwrites the buffer frame 1's load reads, its load what frame
    # 1's first clamp reads, its last clamp what frame 1's store reads, and its store
    # what frame 1's @post reads.
    assert dependencies(program) == [
        ("npu.dma", "npu.host_call"),
        ("npu.clamp", "npu.dma"),
        ("npu.dma", "npu.clamp"),
        ("npu.host_call", "npu.dma"),
    ]
    first, second, third = spans(program, 3)
    assert first == [
        ("npu.host_call host", 0, 1576),
        ("npu.dma dma_in", 1576, 2828),
        ("npu.clamp vector", 2828, 2972),
        ("npu.pool vector", 2972, 4736),
        ("npu.clamp vector", 4736, 4785),
        # The store asks for the DDR at 4,885, while frame 2's load holds it (4,504 to
        # 5,656): its 416 cycles of data follow.
        ("npu.dma dma_out", 4785, 5656 + 416),
        ("npu.host_call host", 6072, 7268),
    ]
    # Frame 2 is placed once frame 1's @pre has read the input (1,576). Its @pre, on
    # the second lane, waits only for frame 1's load (2,828), and runs while frame 1
    # computes (2,828 to 4,785); so does its load (4,404 to 5,656), which frame 1's
    # first clamp has let go of (2,972). On one host queue its @pre would wait for
    # frame 1's @post: two frames took 2 x 6,497 = 12,994 cycles.
    assert second == [
        ("npu.host_call host", 2828, 4404),
        ("npu.dma dma_in", 4404, 5656),
        ("npu.clamp vector", 5656, 5800),
        ("npu.pool vector", 5800, 7564),
        ("npu.clamp vector", 7564, 7613),
        ("npu.dma dma_out", 7613, 8129),
        ("npu.host_call host", 8129, 9325),
    ]
    # Frame 3 shares frame 1's lane: its @pre follows frame 1's @post (7,268, later
    # than frame 2's load at 5,656), while frame 2's @post runs on the other lane
    # (8,129 to 9,325). It is placed once frame 2's @pre has read the input (4,404).
    assert third == [
        ("npu.host_call host", 7268, 8844),
        ("npu.dma dma_in", 8844, 8944 + 1152),
        ("npu.clamp vector", 10096, 10240),
        ("npu.pool vector", 10240, 12004),
        ("npu.clamp vector", 12004, 12053),
        ("npu.dma dma_out", 12053, 12569),
        ("npu.host_call host", 12569, 13765),
    ]
    assert spans(program, 2) == [first, second]
    assert stream_timing(program, 2).total_cycles == 9325
    timing = stream_timing(program, 3)
    # One host queue: 19,491 (3 x 6,497).
    assert timing.starts == [0, 1576, 4404] and timing.ends == [7268, 9325, 13765]


def test_a_buffer_both_host_calls_use_orders_the_lanes() -> None:
    """@pre leaves a buffer that @post reads: frame 2's @pre overwrites it only after
    frame 1's @post, on the other lane. The scoreboard sees this because it replays the
    second frame's host calls on a queue of their own; on one queue the order was
    implicit, and on the lanes without it frame 2's @pre would run at 1,864."""
    program, simulator = loaded(parse(with_host_calls(keeps_scratch=True)), FAST_HOST)
    # @pre copies 3 x 2,304 bytes (864 cycles), @post 784 + 2,304 + 784 (484).
    assert simulator.report.cycles == 1864 + 1252 + 144 + 1764 + 49 + 516 + 1484 == 7073
    # The one wait implies every other: frame 1's @post comes after all its commands.
    assert dependencies(program) == [("npu.host_call", "npu.host_call")]
    timing = stream_timing(program, 3)
    assert timing.starts == [0, 1864, 7073 + 1864]
    assert timing.ends == [7073, 2 * 7073, 3 * 7073]


# ---- every frame's data in order ---------------------------------------------------------


def byte_addresses(program: Program, views: Sequence[View]) -> set[int]:
    """The bytes the views cover, numbered across the memories (SRAM's after DDR's)."""
    first = {"ddr": 0, "sram": program.machine.memories["ddr"].size}
    found: set[int] = set()
    for view in views:
        memory = program.machine.memories[view.space]
        numbers = np.arange(memory.size, dtype=np.int64) + first[view.space]
        found.update(view.byte_view(numbers).flat)
    return found


def conflicting_commands(program: Program) -> list[tuple[int, int]]:
    """The pairs (a, c) of commands (their places in program order) that must run in
    that order when a is of an earlier frame than c: c reads bytes a writes, or writes
    bytes a reads or writes. Found from the bytes, apart from the scoreboard."""
    commands = [entry for entry in program.timeline.entries if entry.item.kind == "command"]
    reads = [byte_addresses(program, entry.reads) for entry in commands]
    writes = [byte_addresses(program, entry.writes) for entry in commands]
    return [
        (a, c)
        for a, c in itertools.product(range(len(commands)), repeat=2)
        if not writes[a].isdisjoint(reads[c] | writes[c]) or not reads[a].isdisjoint(writes[c])
    ]


@pytest.mark.parametrize(
    ("build", "target"),
    [
        (lambda: parse(with_host_calls()), FAST_HOST),
        (lambda: parse(with_host_calls(keeps_scratch=True)), FAST_HOST),
        (lambda: parse(PIPELINED), NPU_DEMO),
        (lambda: parse(shared(2304)), NPU_DEMO),
        (two_convs, NPU_DEMO),
        (digits_cnn, NPU_DEMO),
    ],
)
def test_commands_of_different_frames_that_share_bytes_run_in_order(
    build: Callable[[], ModuleOp], target: Target
) -> None:
    """Over four frames, every command of a later frame that touches bytes a command
    of an earlier frame touched, one of them writing, starts after that one ends; and
    each input is placed after the earlier frames' commands that touch its bytes end,
    and before the frame's own such commands start."""
    program, _ = loaded(build(), target)
    pairs = conflicting_commands(program)
    assert pairs
    frames = schedule_frames(program, 4)
    for earlier, later in itertools.combinations(frames, 2):
        early = [(a, c) for a, c in pairs if later.commands[c].start < earlier.commands[a].end]
        assert not early
    commands = [entry for entry in program.timeline.entries if entry.item.kind == "command"]
    for index, view in enumerate(program.placed):
        placed = byte_addresses(program, [view])
        touching = [
            c
            for c, entry in enumerate(commands)
            if not placed.isdisjoint(byte_addresses(program, (*entry.reads, *entry.writes)))
        ]
        assert touching
        for earlier, later in itertools.combinations(frames, 2):
            assert all(earlier.commands[c].end <= later.placed[index].end for c in touching)
        for frame in frames:
            assert all(frame.commands[c].start >= frame.placed[index].end for c in touching)


# ---- compiled programs ------------------------------------------------------------------


@pytest.mark.parametrize(
    "build",
    [two_convs, conv_28x28, digits_cnn, lambda: parse(with_host_calls(keeps_scratch=True))],
)
def test_every_frame_depends_on_the_one_before_as_frame_2_on_frame_1(
    build: Callable[[], ModuleOp],
) -> None:
    """The same dependencies between frames 3 and 2 (host lanes swapped) and 4 and 3;
    and none on a frame before the previous one that nothing orders (the replay
    stops at one)."""
    program, _ = loaded(build())
    found = cross_frame_dependencies(program, 4)
    assert len(found) == 3 and found[0]
    assert found[1] == found[0] and found[2] == found[0]


def engine_and_ddr_cycles(program: Program) -> tuple[dict[str, int], int]:
    """A frame's work: each engine's command cycles, and the DDR's data cycles."""
    work = dict.fromkeys(npu.QUEUES, 0)
    data = 0
    for entry in program.timeline.entries:
        if entry.item.kind == "command":
            work[npu.QUEUES[entry.queue]] += entry.item.cycles
            data += entry.item.data
    return work, data


@pytest.mark.parametrize(
    ("build", "busiest"), [(two_convs, "ddr"), (conv_28x28, "ddr"), (digits_cnn, "host")]
)
def test_throughput_is_bounded_by_the_busiest_engine_and_one_frame_after_another(
    build: Callable[[], ModuleOp], busiest: str
) -> None:
    program, simulator = loaded(build())
    single = simulator.report.cycles
    work, data = engine_and_ddr_cycles(program)
    # Each engine runs every frame's work and the DDR every frame's transfers, but a
    # host lane only every other frame's host calls. Changed with the lanes: the
    # digits CNN's bound was its host work, 100,167 cycles a frame (801,336 for 8
    # frames); it is now half that, still above dma_in's 15,052 (400,668 for 8).
    share = {**work, "host": work["host"] / HOST_LANES, "ddr": data}
    assert max(share, key=share.__getitem__) == busiest
    for frames in (2, 4, 8):
        timing = stream_timing(program, frames)
        least = max(
            *(frames * cycles for queue, cycles in work.items() if queue != "host"),
            frames * data,
            math.ceil(frames / HOST_LANES) * work["host"],
        )
        assert least <= timing.total_cycles
        assert timing.fps <= frames * NPU_DEMO.mac_array.clock_hz / least
        # Frames overlap, so streaming is no slower than one frame after another,
        # except that the DDR serves transfers first come, first served: the next
        # frame's first loads, which wait for nothing, may take turns from this
        # frame's stores (the digits CNN lost 56 cycles a frame so on one host queue).
        assert timing.total_cycles <= frames * single * 1.001
        assert timing.ends == sorted(timing.ends)
    assert stream_timing(program, 8).total_cycles < 8 * single


def test_the_digits_cnns_host_calls_of_consecutive_frames_overlap() -> None:
    """The host calls that convert the float input and output are the first and the
    last commands. On one host queue frame k+1's quantize waited for frame k's
    dequantize and softmax, and the frames did not overlap (8 frames: 941,536 cycles,
    8 x 117,643 + 392); on two lanes it runs while frame k computes and converts."""
    program, simulator = loaded(digits_cnn())
    queues = [npu.QUEUES[event.queue] for event in program.events]
    assert [index for index, queue in enumerate(queues) if queue == "host"] == [
        0,
        len(queues) - 1,
    ]
    frames = schedule_frames(program, 8)
    for earlier, later in itertools.pairwise(frames):
        quantize, convert = later.commands[0], earlier.commands[-1]
        assert quantize.start < convert.end and convert.start < quantize.end
    assert stream_timing(program, 8).total_cycles < 8 * simulator.report.cycles


# ---- the figures ------------------------------------------------------------------------


def test_latency_percentiles_fps_and_summary_from_known_numbers() -> None:
    # Ten frames at 1 MHz, latencies 100, 200, ..., 1000 cycles (0.1 to 1 ms).
    timing = StreamTiming(
        frames=10,
        clock_hz=1e6,
        starts=[0] * 10,
        ends=[100 * k for k in range(1, 11)],
        total_cycles=2000,
        single_frame_cycles=100,
    )
    assert timing.latencies == list(range(100, 1001, 100))
    # Linear between ranks: p50 halfway between 500 and 600, p90 at 910, p99 at 991.
    assert timing.latency_percentiles() == pytest.approx({50: 550e-6, 90: 910e-6, 99: 991e-6})
    assert timing.latency_percentiles([0, 100]) == pytest.approx({0: 100e-6, 100: 1000e-6})
    assert timing.fps == pytest.approx(10 / 2e-3)
    assert timing.summary() == (
        "10 frames in 2000 cycles (2.000 ms): 5000.0 FPS\n"
        "latency p50 0.55 p90 0.91 p99 0.991 ms (one frame alone: 0.1 ms)"
    )


def test_the_hand_streams_latencies() -> None:
    program, _ = loaded(parse(PIPELINED))
    timing = stream_timing(program, 3)
    assert timing.latencies == [3725, 5682 - 1252, 7639 - 2648]
    clock = NPU_DEMO.mac_array.clock_hz
    assert timing.latency_percentiles((50,)) == pytest.approx({50: 4430 / clock})
    assert timing.fps == pytest.approx(3 * clock / 7639)
    assert timing.single_frame_cycles == 3725


def test_streaming_needs_a_frame() -> None:
    program, _ = loaded(parse(PIPELINED))
    with pytest.raises(IrcError, match="at least one frame, got 0"):
        stream_timing(program, 0)


@pytest.mark.parametrize(
    "text", [PIPELINED, with_host_calls(), with_host_calls(keeps_scratch=True)]
)
def test_the_pipelined_streams_compute_clamp_pool_clamp(text: str) -> None:
    """The hand-written streams are real ones: a run gives the clamped max pool."""
    _, simulator = loaded(parse(text), FAST_HOST)
    rng = np.random.default_rng(3)
    for _ in range(2):
        x = int8(rng, (1, 12, 12, 16))
        clamped = np.maximum(x, -100)
        pooled = np.lib.stride_tricks.sliding_window_view(clamped[0], (6, 6), (0, 1)).max((-1, -2))
        expected = np.minimum(pooled, 100)[None]
        assert np.array_equal(simulator.run([x])["output_0"], expected)
