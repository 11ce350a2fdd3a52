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
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from irc.diagnostics import error
from irc.dialects import npu
from irc.sim.machine import Entry, Program, describe
from irc.sim.schedule import Item, schedule
from irc.stream.scoreboard import Conflict, Scoreboard, View

ENGINE_QUEUES = len(npu.QUEUES)
HOST_QUEUE = npu.QUEUES.index("host")
PLACE_QUEUE = ENGINE_QUEUES
"""The runtime placing each frame's inputs, in frame order."""
READ_QUEUE = ENGINE_QUEUES + 1
"""The runtime reading each frame's results, in frame order."""
HOST_LANES = 2
"""The host threads that run the frames' host calls: the runtime pipelines the pre-
and post-processing of consecutive frames on two threads, frame k's on lane k % 2.
Two, no more: frame k+2 sharing frame k's lane is what lets the dependencies of each
frame on the one before order every frame (the module docstring)."""
HOST_LANE_QUEUES = (HOST_QUEUE, *range(READ_QUEUE + 1, READ_QUEUE + HOST_LANES))
"""The scheduled queue of each host lane: lane 0 is the stream's host queue, lane 1
a queue after the runtime's."""
SCHEDULED_QUEUES = READ_QUEUE + HOST_LANES
"""The engines' queues, the runtime's two, and the host lanes after the first."""
BOARD_QUEUES = ENGINE_QUEUES + HOST_LANES - 1
"""The scoreboard's queues when finding the dependencies between frames: the
engines', and the host lanes after the first."""


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
    """Why frame k+1 waits for frame k: each command of a frame that waits for one of
    the frame before, and the bytes both use (`blockers`)."""

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
        return (
            f"{self.frames} frames in {self.total_cycles} cycles "
            f"({_milliseconds(self.total_cycles / self.clock_hz)} ms): {self.fps:.1f} FPS\n"
            f"latency {percentiles} ms (one frame alone: "
            f"{_milliseconds(self.single_frame_cycles / self.clock_hz)} ms)"
            + "".join(f"\nframe k+1 waits: {blocker}" for blocker in self.blockers[:MAX_SHOWN])
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
    """A command of frame k+1 that must wait for a command of frame k to end; both are
    positions in the stream's entries (`program.timeline.entries`)."""

    before: int
    after: int


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

    def __str__(self) -> str:
        return (
            f"{self.waiting} waits for the previous frame's {self.blocking}: both use "
            f"{self.memory} bytes [{self.start}, {self.end})"
        )


def stream_timing(program: Program, frames: int) -> StreamTiming:
    """Time `frames` copies of `program`'s stream run back to back, each overlapping
    the one before wherever the data allows (see the module docstring). A program on
    one core only: its queues are numbered as one core's (`ENGINE_QUEUES`)."""
    if program.cores > 1:
        raise error(
            f"streaming frames is timed for a program on one core; this one runs on "
            f"{program.cores}",
            program.function,
            hint="time single runs (Session.run), or compile for a target of one core",
        )
    dependencies = cross_frame_dependencies(program)[0]
    scheduled = schedule_frames(program, frames, dependencies)
    ends = [frame.end for frame in scheduled]
    return StreamTiming(
        frames,
        program.target.mac_array.clock_hz,
        [frame.start for frame in scheduled],
        ends,
        max(ends),
        max((event.end for event in program.events), default=0),
        blockers(program, dependencies),
    )


def blockers(program: Program, dependencies: Sequence[Dependency]) -> tuple[Blocker, ...]:
    """Each dependency of a frame on the one before, named: the two commands and the
    bytes they both use."""
    entries = program.timeline.entries
    events = {id(item): event for event, item in zip(program.events, program.timeline.items)}

    def named(position: int) -> str:
        entry = entries[position]
        event = events.get(id(entry.item))
        name = describe(event.op) if event is not None else entry.item.kind
        return f"{name} on {_queue_name(entry.queue)}"

    found = []
    for dependency in dependencies:
        after, before = entries[dependency.after], entries[dependency.before]
        shared = _shared_bytes(after, before)
        if shared is None:
            continue
        found.append(Blocker(named(dependency.after), named(dependency.before), *shared))
    return tuple(found)


def _queue_name(queue: int) -> str:
    return npu.QUEUES[queue] if queue < ENGINE_QUEUES else "host"


def _shared_bytes(after: Entry, before: Entry) -> tuple[str, int, int] | None:
    """The first byte range (in program order of `after`'s views) that `after` and
    `before` both use, one of them writing it."""
    pairs = [(view, other) for view in after.reads for other in before.writes]
    pairs += [(view, other) for view in after.writes for other in (*before.reads, *before.writes)]
    for view, other in pairs:
        if view.space != other.space:
            continue
        start = max(view.address, other.address)
        end = min(view.address + view.extent, other.address + other.extent)
        if start < end:
            return view.space, start, end
    return None


def schedule_frames(
    program: Program, frames: int, dependencies: Sequence[Dependency] | None = None
) -> list[ScheduledFrame]:
    """Every frame's commands and places in time, `frames` copies of the stream
    streamed (see the module docstring); `dependencies`: those of
    `cross_frame_dependencies`, if found already."""
    if frames < 1:
        raise error(
            f"a stream of frames needs at least one frame, got {frames}",
            hint="ask for 1 frame or more",
        )
    if dependencies is None:
        dependencies = cross_frame_dependencies(program)[0]
    with _without_cycle_collection():
        plan = _FramePlan(program, dependencies)
        queues: list[list[Item]] = [[] for _ in range(SCHEDULED_QUEUES)]
        scheduled = [plan.add_frame(frame, queues) for frame in range(frames)]
        schedule(queues)
    return scheduled


def cross_frame_dependencies(program: Program, frames: int = 2) -> list[list[Dependency]]:
    """The dependencies of each frame on the one before, found by the `Scoreboard`:
    `frames` copies of the stream are replayed on one board, each copy's host items
    on its own lane's queue, and each command of a later copy is checked against the
    board the copies before it left (each conflict then becomes a wait for the
    conflicting command of the previous copy). One list per frame after the first;
    they are all the same, so `stream_timing` replays two."""
    entries = program.timeline.entries
    sizes = {space: memory.size for space, memory in program.machine.memories.items()}
    board = Scoreboard(sizes, (program.weights_memory, program.weights_bytes), BOARD_QUEUES)
    found: list[list[Dependency]] = []
    previous: dict[tuple[int, int], tuple[int, np.ndarray]] = {}
    # Of the previous copy, by (queue, index on the board): the command's position and
    # its queue's clock right after it (what a signal there carries).
    for frame in range(frames):
        dependencies: list[Dependency] = []
        current: dict[tuple[int, int], tuple[int, np.ndarray]] = {}
        token_clocks: dict[int, np.ndarray] = {}
        for position, entry in enumerate(entries):
            queue, item = _board_queue(entry.queue, frame), entry.item
            if item.kind == "signal":
                token_clocks[item.token] = board.clocks[queue].copy()
                continue
            if item.kind == "wait":
                board.wait(queue, token_clocks[item.token])
                continue
            index = board.issue(queue)
            if frame:
                dependencies += _wait_for_previous(board, queue, entry, position, previous)
            board.record(queue, index, entry.reads, entry.writes)
            current[(queue, index)] = (position, board.clocks[queue].copy())
        if frame:
            found.append(dependencies)
        previous = current
    return found


def _board_queue(queue: int, frame: int) -> int:
    """The board's queue of an item of frame `frame` on the stream's `queue`: host
    items on their frame's lane (lane 0 is the host queue, the others follow the
    engines')."""
    lane = frame % HOST_LANES
    if queue != HOST_QUEUE or lane == 0:
        return queue
    return ENGINE_QUEUES + lane - 1


def _wait_for_previous(
    board: Scoreboard,
    queue: int,
    entry: Entry,
    position: int,
    previous: dict[tuple[int, int], tuple[int, np.ndarray]],
) -> list[Dependency]:
    """Order a command on the board's `queue` after the previous frame's commands it
    conflicts with: wait for the latest conflicting command of the queue with the
    most conflicts (its clock joins this queue's), re-check, and repeat until no
    conflict is left; the waits."""
    waits = []
    while conflicts := board.conflicts(queue, entry.reads, entry.writes):
        source_queue = _most_conflicting_queue(conflicts)
        index = max(conflict.index for conflict in conflicts if conflict.queue == source_queue)
        source = previous.get((source_queue, index))
        # The stream was checked on loading, and frames two apart are ordered through
        # the frame between (the module docstring): a command races only with the
        # frame before.
        assert source is not None, f"entry {position} races with a frame before the previous"
        waits.append(Dependency(source[0], position))
        board.wait(queue, source[1])
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

    def __init__(self, program: Program, dependencies: Sequence[Dependency]) -> None:
        self.program = program
        entries = program.timeline.entries
        stream_tokens = [entry.item.token for entry in entries if entry.item.kind == "signal"]
        self.next_token = max(stream_tokens, default=-1) + 1
        self.signals_after: dict[int, int] = {}
        """Entry position -> the token a signal right after that command sets."""
        self.waits_before: dict[int, list[_Slot]] = {}
        """Entry position -> the waits right before that command."""
        for dependency in dependencies:
            self._wait(dependency.after, self._signal_after(dependency.before), -1)
        self.template: list[list[_Slot]] = [[] for _ in range(ENGINE_QUEUES + 2)]
        read_tokens = []
        for view in program.results:
            touched = _touching(entries, view, self._size(view), writes_only=True)
            token = self._token()
            read_tokens.append(token)
            self.template[READ_QUEUE] += [
                *(_Slot("wait", token=self._signal_after(last)) for _, last in touched),
                _Slot("command", role="read"),
                _Slot("signal", token=token),
            ]
            for first, _ in touched:
                self._wait(first, token, -1)
        for view in program.placed:
            touched = _touching(entries, view, self._size(view), writes_only=False)
            token = self._token()
            after_results = [
                read_token
                for read_token, result in zip(read_tokens, program.results)
                if _overlap(view, result, self._size(view))
            ]
            self.template[PLACE_QUEUE] += [
                *(
                    _Slot("wait", token=self._signal_after(last), frame_offset=-1)
                    for _, last in touched
                ),
                *(_Slot("wait", token=read, frame_offset=-1) for read in after_results),
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
                slots.append(_Slot(item.kind, token=item.token))
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

    def _wait(self, position: int, token: int, frame_offset: int) -> None:
        slot = _Slot("wait", token=token, frame_offset=frame_offset)
        self.waits_before.setdefault(position, []).append(slot)

    def add_frame(self, frame: int, queues: list[list[Item]]) -> ScheduledFrame:
        """Append frame `frame`'s items to `queues` (to be scheduled)."""
        per_frame = self.tokens_per_frame
        commands = [Item("command")] * self.commands  # each replaced by its own item below
        placed: list[Item] = []
        for template_queue, slots in enumerate(self.template):
            if template_queue == HOST_QUEUE:
                queue = queues[HOST_LANE_QUEUES[frame % HOST_LANES]]
            else:
                queue = queues[template_queue]
            for kind, cycles, ports, token, frame_offset, role, ordinal in slots:
                if kind == "command":
                    item = Item(kind, cycles, ports)
                    if role == "engine":
                        commands[ordinal] = item
                    elif role == "place":
                        placed.append(item)
                elif frame + frame_offset < 0:
                    continue  # a wait for the frame before the first
                else:
                    item = Item(kind, token=(frame + frame_offset) * per_frame + token)
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
