"""Streaming frames: the timing of N inferences of a loaded stream in flight at once.

`stream_timing(program, frames)` times `frames` copies of a loaded command stream
(irc/sim/machine.py `Program`) run back to back, each frame's commands allowed to
overlap the previous frame's wherever the memories allow, so that the input DMA of
frame k+1 overlaps the compute of frame k. It reports when each frame starts and
ends, the throughput (frames per second) and the latency percentiles (`StreamTiming`).

The rules (docs/simulator.md, "Streaming frames"):

- **Engine queues stay in order.** Each NPU engine's queue runs its items in program
  order, frame after frame: frame k+1's `dma_in` commands come after frame k's on
  `dma_in`, and so on. Within a frame the stream's own signals and waits order the
  queues, each frame copy with its own token numbers.
- **The host has two lanes.** The runtime of a streaming NPU SDK pipelines the host
  CPU's pre- and post-processing of consecutive frames on two threads
  (`HOST_LANES`): frame k's host items (its host calls, and the signals and waits of
  the stream's host queue) run on lane k % 2, in order there. Frame k+1 can then
  quantize its float input while frame k computes and converts its output, where
  one host queue would hold it until frame k's last host call (often the final
  softmax) ends; frame k+2 follows frame k on their lane. A frame alone uses lane 0,
  the stream's host queue: it is timed exactly as the `Program` times it.
- **Across frames, the data orders.** Every frame uses the same addresses, so a
  command of frame k+1 that reads bytes frame k wrote, or writes bytes frame k still
  reads or writes (an SRAM buffer, an activation in the DDR arena, a host call's
  buffer), must wait for that command of frame k to end. The simulator's own
  `Scoreboard` finds these: the stream's accesses are replayed twice on one board,
  the second copy's host items on a queue of their own (its lane), and each command
  of the second copy is checked against what the first left there. A conflict
  becomes a signal after the frame-k command on its queue and a wait before the
  frame-k+1 command (the check is then repeated, so a wait that another implies is
  not added). Frame k+1 meets the board left by frame k exactly as frame 2 meets
  frame 1's (lanes swapped), so the dependencies are found once and replicated for
  every k (`cross_frame_dependencies` with more frames checks it).
- **Frames two apart need nothing more.** Say command `a` of frame k and command `c`
  of frame k+2 conflict; their copies `a'` and `c'` in frame k+1 touch the same
  bytes, so `a'` conflicts with `c` and `a` with `c'`. If `a` runs on an engine, it
  comes before `a'` on its queue, and `a'` before `c` by the dependencies of frame
  k+2 on k+1. If `c` runs on an engine, `a` comes before `c'` by those of frame k+1
  on k, and `c'` before `c` on its queue. Otherwise both are host calls, and frames
  k and k+2 share a lane, which orders them. With three lanes frames k and k+2 would
  share none, and that case would need dependencies of its own: hence two lanes.
  (`cross_frame_dependencies` with more frames checks this as well: a conflict with
  a frame before the previous one that nothing orders fails its assertion.)
- **The runtime's boundary.** Placing an input (`npu.place` of an argument) takes no
  time but writes its DDR bytes: it is a zero-cycle item that waits for frame k's last
  command, on each queue, reading or writing those bytes (and for frame k's reading
  of a result there), and frame k+1's first command on each queue that touches them
  waits for it. Reading a result after `npu.end` (`npu.read`) reads its bytes: a
  zero-cycle item after frame k's last writer of them on each queue, which frame k+1's
  first writer of them on each queue waits for. The places run on a queue of their
  own, frame after frame, and the reads on another: the runtime writing and reading
  DDR is not a host call of the stream. Frames before k are ordered through the
  places and reads of the frames between, which keep frame order.

- **Frames on several cores.** A program with layers on several cores runs every
  frame on those cores (its queues numbered as in one run, `npu.engine`); its own
  cross-core waits keep their latency. A program on one core on a target of several
  takes turns on the cores (`Layout`): frame k on core k % n, with that core's queues,
  its SRAM and an arena of activations of its own (`Layout.arenas`: the runtime gives
  each core's frames a tensor arena), so that frames on different cores share only
  the weights and the memories' ports. The replay then runs each copy on its turn's
  core: 2n + 1 copies, after which every frame waits for the same commands of the
  frames before it, at most n back. Frames further apart need nothing more, by the
  argument above: a frame between them with a copy of the two commands on shared
  bytes (the same memory: every frame's, for the weights and the ports; the same
  core's, for its SRAM and arena) orders them. Waits between frames on different
  cores take the target's `sync_latency_cycles`; the runtime's places and reads of
  frame k meet frame k - n, which used the same arena.

All the frames are then timed together by the simulator's schedule
(irc/sim/schedule.py): the DDR serves the frames' transfers first come, first served,
so a later frame's early loads can take turns from an earlier frame's transfers.

A frame starts when its inputs are placed (each as soon as its bytes are free) and
ends when its last command ends; its latency is the difference. One frame alone is
timed exactly as the `Program` times it.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from irc.diagnostics import error
from irc.dialects import npu
from irc.sim.machine import Entry, Program, describe
from irc.sim.schedule import Item, schedule
from irc.stream.scoreboard import Conflict, Scoreboard, View

QUEUES_PER_CORE = len(npu.QUEUES)
HOST_QUEUE = npu.QUEUES.index("host")
HOST_LANES = 2
"""The host threads that run the frames' host calls: the runtime pipelines the pre-
and post-processing of consecutive frames on two threads, frame k's on lane k % 2.
Two, no more: frame k+2 sharing frame k's lane is what lets the dependencies of each
frame on the one before order every frame (the module docstring)."""


@dataclass(frozen=True)
class Layout:
    """How the frames of a stream use the target's cores, and the scheduled queues:
    every engine queue of every core (`npu.engine` numbering), then the runtime's
    place and read queues, then the host lanes after the first (lane 0 is the
    stream's host queue)."""

    cores: int
    """The cores in the schedule."""
    turns: int
    """The cores frames take turns on: frame k runs on core k % turns (a program of
    one core on a target of several); 1: every frame on the program's own cores."""
    arenas: tuple[tuple[str, int, int], ...] = ()
    """Frames taking turns: each memory of activations as (name, base, span): the
    arena `[base, base + span)` the program uses there, of which the frame on core c
    uses the copy `c * span` further on (one arena per core)."""

    @property
    def engines(self) -> int:
        """The engine queues: `npu.QUEUES` on each core."""
        return self.cores * QUEUES_PER_CORE

    @property
    def place(self) -> int:
        """The runtime placing each frame's inputs, in frame order."""
        return self.engines

    @property
    def read(self) -> int:
        """The runtime reading each frame's results, in frame order."""
        return self.engines + 1

    @property
    def lanes(self) -> tuple[int, ...]:
        """The scheduled queue of each host lane."""
        return (HOST_QUEUE, *range(self.read + 1, self.read + HOST_LANES))

    @property
    def scheduled(self) -> int:
        """The scheduled queues: the engines', the runtime's two, the later lanes."""
        return self.read + HOST_LANES

    @property
    def board(self) -> int:
        """The scoreboard's queues when finding the dependencies between frames: the
        engines', and the host lanes after the first (after the engines')."""
        return self.engines + HOST_LANES - 1

    def core(self, frame: int) -> int:
        """The core frame `frame` runs on, when frames take turns (else 0: a frame's
        commands keep the program's cores)."""
        return frame % self.turns

    def queue(self, queue: int, frame: int) -> int:
        """The scheduled queue of an engine item of frame `frame` on the program's
        `queue` (a host item's lane is `lanes[frame % HOST_LANES]`)."""
        return queue + self.core(frame) * QUEUES_PER_CORE

    def board_queue(self, queue: int, frame: int) -> int:
        """The board's queue of an item of frame `frame` on the program's `queue`: host
        items on their frame's lane."""
        if queue != HOST_QUEUE:
            return self.queue(queue, frame)
        lane = frame % HOST_LANES
        return HOST_QUEUE if lane == 0 else self.engines + lane - 1

    def item_core(self, queue: int, frame: int) -> int:
        """The core an item of frame `frame` on the program's `queue` runs on (the
        host's items: core 0's, as the program's host calls)."""
        return 0 if queue == HOST_QUEUE else self.queue(queue, frame) // QUEUES_PER_CORE

    def views(self, views: Sequence[View], frame: int) -> tuple[View, ...]:
        """A command's views in frame `frame`: the SRAM its core's, the activations in
        its core's arena."""
        core = self.core(frame)
        if not core:
            return tuple(views)
        return tuple(self._view(view, core) for view in views)

    def _view(self, view: View, core: int) -> View:
        if view.space == npu.SRAM:
            return replace(view, space=npu.core_sram(core))
        for space, base, span in self.arenas:
            if view.space == space and view.address >= base:
                return replace(view, address=view.address + core * span)
        return view

    def sizes(self, program: Program) -> dict[str, int]:
        """The bytes of every memory the frames use: each core's SRAM, and each
        memory of activations with an arena a core."""
        sizes = {space: memory.size for space, memory in program.machine.memories.items()}
        for core in range(self.cores):
            sizes.setdefault(npu.core_sram(core), sizes[npu.SRAM])
        for space, base, span in self.arenas:
            sizes[space] = max(sizes[space], base + self.turns * span)
        return sizes


def layout_of(program: Program, cores: int | None = None) -> Layout:
    """How frames of `program` use the target's cores: a program whose commands all
    run on core 0 takes turns on `cores` of the target's cores (default: as many as
    have room for an arena of activations each, at most all), frame k on core k %
    cores, with its own SRAM and arena; a program on several cores runs every frame
    on its own cores."""
    available = program.target.cores.count
    used = {entry.queue // QUEUES_PER_CORE for entry in program.timeline.entries}
    if used - {0}:
        if cores not in (None, 1):
            raise error(
                f"frames of a program split across {program.cores} cores run on those "
                f"cores; they cannot take turns on {cores}",
                program.function,
                hint="compile with --layer-cores 1 for frames that take turns on the cores",
            )
        return Layout(program.cores, 1)
    if cores is not None and not 1 <= cores <= available:
        raise error(
            f"frames can take turns on 1 to {available} cores of {program.target.name}, "
            f"not {cores}",
            program.function,
            hint=f"cores=1 to {available}",
        )
    short = None
    tried = range(available, 1, -1) if cores is None else range(cores, 1, -1)[:1]
    for turns in tried:
        arenas, short = _arenas(program, turns)
        if short is None:
            return Layout(max(turns, program.cores), turns, arenas)
    if cores is None or cores == 1:
        return Layout(program.cores, 1)  # every frame on core 0, in the program's arena
    raise error(
        f"frames taking turns on {cores} cores need an arena of activations each: {short}",
        program.function,
        hint="stream on fewer cores (cores=1 runs every frame on one)",
    )


def _arenas(program: Program, turns: int) -> tuple[tuple[tuple[str, int, int], ...], str | None]:
    """Each memory of activations as (name, base, span) when frames take turns on
    `turns` cores, an arena of `span` bytes (whole bursts and alignment units) a core
    after the program's own base (after the weights in their memory); and what does
    not fit, if a memory has no room for them."""
    target = program.target
    arenas = []
    for space, size in sorted(npu.memory_sizes(program.function).items()):
        if npu.is_sram(space) or space not in target.memories:
            continue
        memory = target.memories[space]
        base = program.weights_bytes if space == program.weights_memory else 0
        unit = max(memory.alignment_bytes, memory.burst_bytes)
        span = -(-(size - base) // unit) * unit
        if span <= 0:
            continue
        if base + turns * span > memory.size_bytes:
            return (), (
                f"{turns} x {span} bytes of {space} after its {base} bytes of weights; "
                f"it has {memory.size_bytes}"
            )
        arenas.append((space, base, span))
    return tuple(arenas), None


@dataclass
class StreamTiming:
    """When each of `frames` streamed frames starts and ends, in cycles."""

    frames: int
    clock_hz: float
    starts: list[int]
    """The cycle each frame's inputs are placed: its first command may start."""
    ends: list[int]
    """The cycle each frame's last command ends."""
    total_cycles: int
    """When the last frame ends."""
    single_frame_cycles: int
    """One frame alone (the `Program`'s own schedule)."""
    blockers: tuple[Blocker, ...] = ()
    """Why a frame waits for the frames before it (frame k+1 for frame k; taking turns
    on n cores, frame k+n for frame k): each command that waits, and the bytes both
    use (`blockers`)."""
    turns: int = 1
    """The cores the frames take turns on (1: every frame on the program's cores)."""

    @property
    def latencies(self) -> list[int]:
        """Each frame's cycles from its inputs' placing to its last command's end."""
        return [end - start for start, end in zip(self.starts, self.ends)]

    @property
    def fps(self) -> float:
        """Frames per second over the whole stream."""
        if not self.total_cycles:
            return math.inf
        return self.frames / (self.total_cycles / self.clock_hz)

    def latency_percentiles(self, percentiles: Sequence[float] = (50, 90, 99)) -> dict[int, float]:
        """The latency at each percentile, in seconds (interpolated linearly between
        frames, as `numpy.percentile`)."""
        seconds = np.asarray(self.latencies, np.float64) / self.clock_hz
        values = np.percentile(seconds, list(percentiles))
        return {int(p): float(value) for p, value in zip(percentiles, values)}

    def summary(self) -> str:
        """The stream in two lines: frames, time and throughput; latencies."""
        latency = self.latency_percentiles()
        percentiles = " ".join(f"p{p} {_milliseconds(value)}" for p, value in latency.items())
        turns = f", taking turns on {self.turns} cores" if self.turns > 1 else ""
        return (
            f"{self.frames} frames in {self.total_cycles} cycles "
            f"({_milliseconds(self.total_cycles / self.clock_hz)} ms){turns}: "
            f"{self.fps:.1f} FPS\n"
            f"latency {percentiles} ms (one frame alone: "
            f"{_milliseconds(self.single_frame_cycles / self.clock_hz)} ms)"
            + "".join(
                f"\nframe k+{blocker.back} waits: {blocker}"
                for blocker in self.blockers[:MAX_SHOWN]
            )
            + (
                f"\n... and {len(self.blockers) - MAX_SHOWN} more"
                if len(self.blockers) > MAX_SHOWN
                else ""
            )
        )


MAX_SHOWN = 3
"""The blockers `StreamTiming.summary` names (the rest are counted)."""


def _milliseconds(seconds: float) -> str:
    """Milliseconds to the microsecond, or to four digits below a millisecond."""
    value = seconds * 1e3
    return f"{value:.3f}" if value >= 1 else f"{value:.4g}"


@dataclass
class ScheduledFrame:
    """One streamed frame in time: its commands, in program order (as
    `Program.events`), and the placing of its inputs (zero-cycle items)."""

    commands: list[Item]
    placed: list[Item]

    @property
    def start(self) -> int:
        """When the frame's inputs are placed (without inputs: its first command's
        start)."""
        if self.placed:
            return max(item.end for item in self.placed)
        return min((item.start for item in self.commands), default=0)

    @property
    def end(self) -> int:
        """When the frame's last command ends."""
        return max((item.end for item in self.commands), default=self.start)


@dataclass(frozen=True)
class Dependency:
    """A command of frame k that must wait for a command of frame k - `back` to end;
    both are positions in the stream's entries (`program.timeline.entries`)."""

    before: int
    after: int
    back: int = 1


@dataclass(frozen=True)
class Blocker:
    """A dependency as a user reads it: the command of frame k+1 that waits, the
    command of frame k it waits for (each by `describe`, with its queue), and the
    bytes both use, one of them writing (the first such range)."""

    waiting: str
    blocking: str
    memory: str
    start: int
    end: int
    back: int = 1
    """How many frames before the waiting one the awaited command's frame is."""

    def __str__(self) -> str:
        # As the summary prints it: "frame k+{back} waits: ... waits for frame k's ..."
        frame = "the previous frame's" if self.back == 1 else "frame k's"
        return (
            f"{self.waiting} waits for {frame} {self.blocking}: both use "
            f"{self.memory} bytes [{self.start}, {self.end})"
        )


def stream_timing(program: Program, frames: int, cores: int | None = None) -> StreamTiming:
    """Time `frames` copies of `program`'s stream run back to back, each overlapping
    the ones before wherever the data allows (see the module docstring). A program on
    one core on a target of several takes turns on `cores` of them (default: as many
    as have room for an arena each); a program on several runs every frame on its
    cores (`layout_of`)."""
    layout = layout_of(program, cores)
    dependencies = cross_frame_dependencies(program, layout=layout)[-1]
    scheduled = schedule_frames(program, frames, dependencies, layout)
    ends = [frame.end for frame in scheduled]
    return StreamTiming(
        frames,
        program.target.mac_array.clock_hz,
        [frame.start for frame in scheduled],
        ends,
        max(ends),
        max((event.end for event in program.events), default=0),
        blockers(program, dependencies, layout),
        layout.turns,
    )


def blockers(
    program: Program, dependencies: Sequence[Dependency], layout: Layout | None = None
) -> tuple[Blocker, ...]:
    """Each dependency of a frame on one before, named: the two commands (on their
    queues in the waiting frame's and the awaited frame's turns) and the bytes they
    both use."""
    layout = layout or layout_of(program)
    entries = program.timeline.entries
    events = {id(item): event for event, item in zip(program.events, program.timeline.items)}

    def named(position: int, frame: int) -> str:
        entry = entries[position]
        event = events.get(id(entry.item))
        name = describe(event.op) if event is not None else entry.item.kind
        queue = (
            "host"
            if entry.queue == HOST_QUEUE
            else npu.engine_name(layout.queue(entry.queue, frame))
        )
        return f"{name} on {queue}"

    found = []
    for dependency in dependencies:
        after, before = entries[dependency.after], entries[dependency.before]
        # The awaited frame first (frame 0), the waiting one `back` frames later.
        shared = _shared_bytes(
            (
                layout.views(after.reads, dependency.back),
                layout.views(after.writes, dependency.back),
            ),
            (layout.views(before.reads, 0), layout.views(before.writes, 0)),
        )
        if shared is None:
            continue
        found.append(
            Blocker(
                named(dependency.after, dependency.back),
                named(dependency.before, 0),
                *shared,
                dependency.back,
            )
        )
    return tuple(found)


def _shared_bytes(
    after: tuple[Sequence[View], Sequence[View]], before: tuple[Sequence[View], Sequence[View]]
) -> tuple[str, int, int] | None:
    """The first byte range (in program order of `after`'s views) that two commands'
    (reads, writes) both use, one of them writing it."""
    (after_reads, after_writes), (before_reads, before_writes) = after, before
    pairs = [(view, other) for view in after_reads for other in before_writes]
    pairs += [(view, other) for view in after_writes for other in (*before_reads, *before_writes)]
    for view, other in pairs:
        if view.space != other.space:
            continue
        start = max(view.address, other.address)
        end = min(view.address + view.extent, other.address + other.extent)
        if start < end:
            return view.space, start, end
    return None


def schedule_frames(
    program: Program,
    frames: int,
    dependencies: Sequence[Dependency] | None = None,
    layout: Layout | None = None,
) -> list[ScheduledFrame]:
    """Every frame's commands and places in time, `frames` copies of the stream
    streamed (see the module docstring); `dependencies`: those of
    `cross_frame_dependencies` for `layout` (default `layout_of(program)`), if found
    already."""
    if frames < 1:
        raise error(
            f"a stream of frames needs at least one frame, got {frames}",
            hint="ask for 1 frame or more",
        )
    layout = layout or layout_of(program)
    if dependencies is None:
        dependencies = cross_frame_dependencies(program, layout=layout)[-1]
    with _without_cycle_collection():
        plan = _FramePlan(program, dependencies, layout)
        queues: list[list[Item]] = [[] for _ in range(layout.scheduled)]
        scheduled = [plan.add_frame(frame, queues) for frame in range(frames)]
        schedule(queues)
    return scheduled


def cross_frame_dependencies(
    program: Program, frames: int = 0, layout: Layout | None = None
) -> list[list[Dependency]]:
    """The dependencies of each frame on the ones before, found by the `Scoreboard`:
    `frames` copies of the stream (by default two, or 2n + 1 when frames take turns on
    n cores) are replayed on one board, each on its turn's core and each copy's host
    items on its own lane's queue, and each command of a later copy is checked
    against the board the copies before it left (each conflict then becomes a wait
    for the conflicting command of an earlier copy). One list per frame after the
    first; once a frame has met frames on every core they are all the same, so
    `stream_timing` takes the last (`unordered` checks that they order every frame)."""
    layout = layout or layout_of(program)
    frames = frames or _replayed(layout)
    board = _board(program, layout)
    found: list[list[Dependency]] = [[] for _ in range(frames - 1)]
    history: dict[tuple[int, int], tuple[int, int, np.ndarray]] = {}
    # Of every copy so far, by (queue, index on the board): its frame, the command's
    # position and its queue's clock right after it (what a signal there carries).
    for frame, position, queue, reads, writes in _replay(program, layout, board, frames):
        index = board.issue(queue)
        if frame:
            found[frame - 1] += _wait_for_earlier(
                board, queue, (reads, writes), position, frame, history, layout.turns
            )
        board.record(queue, index, reads, writes)
        history[(queue, index)] = (frame, position, board.clocks[queue].copy())
    return found


def _replay(
    program: Program, layout: Layout, board: Scoreboard, frames: int
) -> Iterator[tuple[int, int, int, tuple[View, ...], tuple[View, ...]]]:
    """`frames` copies of the stream on `board`, each on its turn's core: each copy's
    own signals and waits applied there, and each command yielded, before the caller
    issues it, as (frame, position in the stream, board queue, reads, writes)."""
    for frame in range(frames):
        token_clocks: dict[int, np.ndarray] = {}
        for position, entry in enumerate(program.timeline.entries):
            queue, item = layout.board_queue(entry.queue, frame), entry.item
            if item.kind == "signal":
                token_clocks[item.token] = board.clocks[queue].copy()
            elif item.kind == "wait":
                board.wait(queue, token_clocks[item.token])
            else:
                reads = layout.views(entry.reads, frame)
                yield frame, position, queue, reads, layout.views(entry.writes, frame)


def _replayed(layout: Layout) -> int:
    """The frames `cross_frame_dependencies` replays: two on one core (frame 2 meets
    frame 1 as every frame meets the one before); taking turns on n cores, 2n + 1, so
    that the last has met frames that met frames on every core."""
    return 2 if layout.turns == 1 else 2 * layout.turns + 1


def _board(program: Program, layout: Layout) -> Scoreboard:
    """A scoreboard of every memory the frames use (`Layout.sizes`)."""
    weights = (program.weights_memory, program.weights_bytes)
    return Scoreboard(layout.sizes(program), weights, layout.board)


def unordered(
    program: Program,
    dependencies: Sequence[Dependency],
    frames: int,
    layout: Layout | None = None,
) -> list[tuple[int, int]]:
    """Every command, as (frame, position), that still races with a command of an
    earlier frame when `frames` frames each wait only as `dependencies` say (the
    stream's own signals and waits within a frame, the template's between frames):
    none for the dependencies `stream_timing` uses, which the tests check."""
    layout = layout or layout_of(program)
    waits: dict[int, list[Dependency]] = {}
    for dependency in dependencies:
        waits.setdefault(dependency.after, []).append(dependency)
    board = _board(program, layout)
    clocks: dict[tuple[int, int], np.ndarray] = {}
    races = []
    for frame, position, queue, reads, writes in _replay(program, layout, board, frames):
        for dependency in waits.get(position, ()):
            if frame >= dependency.back:
                board.wait(queue, clocks[(frame - dependency.back, dependency.before)])
        index = board.issue(queue)
        if board.conflicts(queue, reads, writes):
            races.append((frame, position))
        board.record(queue, index, reads, writes)
        clocks[(frame, position)] = board.clocks[queue].copy()
    return races


def _wait_for_earlier(
    board: Scoreboard,
    queue: int,
    views: tuple[Sequence[View], Sequence[View]],
    position: int,
    frame: int,
    history: dict[tuple[int, int], tuple[int, int, np.ndarray]],
    turns: int,
) -> list[Dependency]:
    """Order a command of `frame` on the board's `queue` after the earlier frames'
    commands it conflicts with: wait for the latest conflicting command of the queue
    with the most conflicts (its clock joins this queue's), re-check, and repeat until
    no conflict is left; the waits."""
    reads, writes = views
    waits = []
    while conflicts := board.conflicts(queue, reads, writes):
        source_queue = _most_conflicting_queue(conflicts)
        index = max(conflict.index for conflict in conflicts if conflict.queue == source_queue)
        source_frame, source_position, clock = history[(source_queue, index)]
        back = frame - source_frame
        # The stream was checked on loading, and frames further apart are ordered
        # through the frames between (the module docstring): a command races only
        # with the `turns` frames before it.
        assert 1 <= back <= turns, f"entry {position} races with frame k-{back}"
        waits.append(Dependency(source_position, position, back))
        board.wait(queue, clock)
    return waits


def _most_conflicting_queue(conflicts: Sequence[Conflict]) -> int:
    counts: dict[int, int] = {}
    for conflict in conflicts:
        counts[conflict.queue] = counts.get(conflict.queue, 0) + 1
    return max(counts, key=lambda queue: counts[queue])


@contextmanager
def _without_cycle_collection() -> Iterator[None]:
    """Pause Python's cycle collector: a frame is tens of thousands of small items
    without cycles, and each collection they trigger walks the whole loaded module
    (millions of IR objects): it doubled the time on ResNet-50."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class _Slot(NamedTuple):
    """An item of the frame template: a command (its cycles, its ports' data cycles),
    or a signal or a wait of a token of the frame `frame_offset` from the current one."""

    kind: str
    cycles: int = 0
    ports: tuple[tuple[str, int], ...] = ()
    token: int = -1
    frame_offset: int = 0
    role: str = ""
    """Of a command: "engine" (the stream's), "place" or "read" (the runtime's)."""
    ordinal: int = -1
    """Of an engine command: its place in program order."""


class _FramePlan:
    """One frame's items on every queue with the cross-frame signals and waits (a
    template with frame-relative tokens, its host items on the stream's host queue),
    to append frame after frame (the host items on the frame's lane)."""

    def __init__(
        self, program: Program, dependencies: Sequence[Dependency], layout: Layout
    ) -> None:
        self.program, self.layout = program, layout
        entries = program.timeline.entries
        stream_tokens = [entry.item.token for entry in entries if entry.item.kind == "signal"]
        self.next_token = max(stream_tokens, default=-1) + 1
        self.signals_after: dict[int, int] = {}
        """Entry position -> the token a signal right after that command sets."""
        self.waits_before: dict[int, list[_Slot]] = {}
        """Entry position -> the waits right before that command."""
        latency = program.target.cores.sync_latency_cycles
        for dependency in dependencies:
            # A wait for a command of another core sees its signal the latency later.
            before = layout.item_core(entries[dependency.before].queue, 0)
            after = layout.item_core(entries[dependency.after].queue, dependency.back)
            self._wait(
                dependency.after,
                self._signal_after(dependency.before),
                -dependency.back,
                latency if before != after else 0,
            )
        self.engines = program.timeline.engines
        """The template's engine queues (the program's), then its place and read."""
        self.template: list[list[_Slot]] = [[] for _ in range(self.engines + 2)]
        place_queue, read_queue = self.engines, self.engines + 1
        # The runtime's places and reads meet the frame `turns` before, which used the
        # same arena (the frames between used their own).
        before = -layout.turns
        read_tokens = []
        for view in program.results:
            touched = _touching(entries, view, self._size(view), writes_only=True)
            token = self._token()
            read_tokens.append(token)
            self.template[read_queue] += [
                *(_Slot("wait", token=self._signal_after(last)) for _, last in touched),
                _Slot("command", role="read"),
                _Slot("signal", token=token),
            ]
            for first, _ in touched:
                self._wait(first, token, before)
        for view in program.placed:
            touched = _touching(entries, view, self._size(view), writes_only=False)
            token = self._token()
            after_results = [
                read_token
                for read_token, result in zip(read_tokens, program.results)
                if _overlap(view, result, self._size(view))
            ]
            self.template[place_queue] += [
                *(
                    _Slot("wait", token=self._signal_after(last), frame_offset=before)
                    for _, last in touched
                ),
                *(_Slot("wait", token=read, frame_offset=before) for read in after_results),
                _Slot("command", role="place"),
                _Slot("signal", token=token),
            ]
            for first, _ in touched:
                self._wait(first, token, 0)
        self.tokens_per_frame = self.next_token
        self.commands = 0
        for position, entry in enumerate(entries):
            item, slots = entry.item, self.template[entry.queue]
            if item.kind != "command":
                slots.append(_Slot(item.kind, item.cycles, token=item.token))
                continue
            slots += self.waits_before.get(position, ())
            slots.append(
                _Slot("command", item.cycles, item.ports, role="engine", ordinal=self.commands)
            )
            self.commands += 1
            if position in self.signals_after:
                slots.append(_Slot("signal", token=self.signals_after[position]))

    def _size(self, view: View) -> int:
        return int(self.program.machine.memories[view.space].size)

    def _token(self) -> int:
        self.next_token += 1
        return self.next_token - 1

    def _signal_after(self, position: int) -> int:
        if position not in self.signals_after:
            self.signals_after[position] = self._token()
        return self.signals_after[position]

    def _wait(self, position: int, token: int, frame_offset: int, cycles: int = 0) -> None:
        slot = _Slot("wait", cycles, token=token, frame_offset=frame_offset)
        self.waits_before.setdefault(position, []).append(slot)

    def add_frame(self, frame: int, queues: list[list[Item]]) -> ScheduledFrame:
        """Append frame `frame`'s items to `queues` (to be scheduled)."""
        per_frame = self.tokens_per_frame
        commands = [Item("command")] * self.commands  # each replaced by its own item below
        placed: list[Item] = []
        layout = self.layout
        for template_queue, slots in enumerate(self.template):
            if not slots:
                continue  # (frames taking turns: the program's queues of other cores)
            if template_queue == HOST_QUEUE:
                queue = queues[layout.lanes[frame % HOST_LANES]]
            elif template_queue >= self.engines:  # the runtime's place or read
                queue = queues[layout.place + template_queue - self.engines]
            else:
                queue = queues[layout.queue(template_queue, frame)]
            for kind, cycles, ports, token, frame_offset, role, ordinal in slots:
                if kind == "command":
                    item = Item(kind, cycles, ports)
                    if role == "engine":
                        commands[ordinal] = item
                    elif role == "place":
                        placed.append(item)
                elif frame + frame_offset < 0:
                    continue  # a wait for a frame before the first
                else:
                    item = Item(kind, cycles, token=(frame + frame_offset) * per_frame + token)
                queue.append(item)
        return ScheduledFrame(commands, placed)


def _byte_mask(view: View, size: int) -> np.ndarray:
    """Which bytes of its memory (of `size` bytes) a view covers."""
    mask = np.zeros(size, np.bool_)
    view.byte_view(mask)[...] = True
    return mask


def _overlap(view: View, other: View, size: int) -> bool:
    """Whether two views share a byte."""
    if other.space != view.space or other.end <= view.address or other.address >= view.end:
        return False
    return bool(other.byte_view(_byte_mask(view, size)).any())


def _touching(
    entries: Sequence[Entry], view: View, size: int, writes_only: bool
) -> list[tuple[int, int]]:
    """For each queue with commands that write (or, unless `writes_only`, read or
    write) a byte of `view`: the positions of the first and of the last of them."""
    mask: np.ndarray | None = None
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for position, entry in enumerate(entries):
        accessed = entry.writes if writes_only else (*entry.reads, *entry.writes)
        for other in accessed:
            if other.space != view.space or other.end <= view.address:
                continue
            if other.address >= view.end:
                continue
            if mask is None:
                mask = _byte_mask(view, size)
            if other.byte_view(mask).any():
                first.setdefault(entry.queue, position)
                last[entry.queue] = position
                break
    return [(first[queue], last[queue]) for queue in sorted(first)]
