"""Cycles of the NPU's commands, from the target's numbers (docs/simulator.md).

The planner (irc/tiling/planner.py) estimates a layer with these same formulas, so
a plan and its simulation agree on what a tile costs:

- **MAC array** (`MacArray.cycles`, irc/targets/model.py): on a plain array, input
  channels map to the array's rows, output channels to its columns; an output pixel
  takes `ceil(channels / columns) * ceil(depth / rows)` passes per kernel tap (a
  depthwise conv puts the taps on the rows: `ceil(channels / columns) * ceil(taps /
  rows)`), and a command adds `rows + columns` cycles to fill and drain the array.
  On an array of micro-blocks (Ethos-U, as Vela models it) the outputs are computed
  in blocks of `output_block`, each taking its cycles per `input_block_depth` input
  channels and tap, at least its weights' time through the decoder, and the output
  stage bounds the elements written a cycle. Otherwise the output stage (bias,
  requantize, clamp) is pipelined behind it. Over 16-bit activations every pass takes
  the target's `int16_cycles` (`[data_types]`; 2 on Ethos-U: half the input channels
  per cycle).
- **vector unit**: `ceil(channels / lanes)` cycles per output pixel (the last axis
  is the channels) and per window tap or input; times `int16_cycles` when the command
  reads or writes 16-bit activations.
- **DMA**: each side of a box is a set of contiguous runs; each moves the bursts (of
  its memory) it touches at its addresses. A command first waits the read latency of
  the memory it reads and the write latency of the one it writes, then moves its
  bytes through each memory's port at that memory's rate (the bandwidth, or fewer
  bytes per cycle when the latency is long and few bursts may be in flight); the
  system memories on one port share it (irc/sim/schedule.py), while the local SRAM's
  banks take every transfer at once (its side only bounds the transfer's time). A
  fill of an SRAM frame alone writes a burst of the SRAM per cycle.
- **host**: the target's CPU model (irc/backend/cost.py) for the called function's ops, its
  arguments and results copied at the host bandwidth, and a transition each way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from irc.dialects import npu

if TYPE_CHECKING:
    from xdsl.dialects.func import FuncOp

    from irc.stream.scoreboard import View
    from irc.targets import Target


@dataclass(frozen=True)
class Cost:
    """What one command costs."""

    cycles: int
    macs: int = 0
    read: int = 0
    """Bytes read from the system memories (whole bursts)."""
    written: int = 0
    """Bytes written to the system memories (whole bursts)."""
    ports: tuple[tuple[str, int], ...] = ()
    """The cycles the command's data phase needs each port (the longest is the part of
    `cycles` after the latency)."""
    traffic: tuple[tuple[str, int, int], ...] = ()
    """(memory, bytes read, bytes written) per system memory it touches."""


def mac_cycles(
    target: Target,
    shape: Sequence[int],
    depth: int,
    taps: int,
    depthwise: bool,
    sixteen: bool = False,
) -> int:
    """A MAC-array step over the outputs `shape` = [N, H, W, C], each summing `depth`
    input channels over `taps` kernel taps (of 16-bit activations: `sixteen`): the
    target's array model (`MacArray.cycles`)."""
    batch, rows, columns, channels = shape
    passes = target.data_types.activation_cycles(sixteen)
    return target.mac_array.cycles(batch, rows, columns, channels, depth, taps, depthwise, passes)


def vector_cycles(
    target: Target, pixels: int, channels: int, per_element: int, sixteen: bool = False
) -> int:
    """A vector-unit pass over `pixels` x `channels` outputs, `per_element` cycles per
    lane-wide group (window taps or inputs), of 16-bit activations if `sixteen`."""
    groups = pixels * math.ceil(channels / target.vector_unit.lanes) * per_element
    return groups * target.data_types.activation_cycles(sixteen)


def conv_cost(
    target: Target,
    acc_shape: Sequence[int],
    weight_shape: Sequence[int],
    group: int,
    sixteen: bool = False,
) -> Cost:
    """A conv tile: an [N, OH, OW, O] accumulator, weight [O, KH, KW, C / group]; its
    input 16-bit if `sixteen`."""
    batch, out_h, out_w, channels = acc_shape
    _, kernel_h, kernel_w, depth = weight_shape
    taps = kernel_h * kernel_w
    pixels = batch * out_h * out_w
    depthwise = group > 1 and depth == 1
    cycles = mac_cycles(target, acc_shape, depth, taps, depthwise, sixteen)
    return Cost(cycles, macs=pixels * channels * taps * depth)


def matmul_cost(target: Target, rows: int, columns: int, depth: int, sixteen: bool = False) -> Cost:
    """A [M, K] x [K, N] tile: M pixels of N channels from K (an operand 16-bit if
    `sixteen`)."""
    cycles = mac_cycles(target, (1, rows, 1, columns), depth, 1, False, sixteen)
    return Cost(cycles, macs=rows * columns * depth)


def vector(target: Target, output: object, per_element: int, sixteen: bool = False) -> int:
    """A vector command writing the buffer `output` (an SSA value), over 16-bit
    activations if `sixteen`."""
    from irc.dialects.tile import shape_of

    shape = shape_of(output)  # type: ignore[arg-type]
    channels = shape[-1] if shape else 1
    pixels = math.prod(shape[:-1]) if shape else 1
    return vector_cycles(target, pixels, channels, per_element, sixteen)


def _runs(view: View) -> tuple[np.ndarray, int]:
    """The start addresses of a view's contiguous runs, and their length in bytes."""
    size = view.dtype.itemsize
    shape, strides = list(view.shape), list(view.strides)
    run = 1
    while shape and strides[-1] == run:
        run *= shape.pop()
        strides.pop()
    starts = np.array([view.address], np.int64)
    for extent, stride in zip(shape, strides):
        starts = np.add.outer(starts, np.arange(extent, dtype=np.int64) * stride * size).ravel()
    return starts, run * size


def burst_bytes(view: View, burst: int) -> int:
    """Bytes of the whole bursts a view's runs touch at their addresses."""
    if view.extent == 0:
        return 0
    starts, length = _runs(view)
    first = starts // burst
    last = (starts + length - 1) // burst
    return int(np.sum(last - first + 1)) * burst


def dma(target: Target, reads: Sequence[View], writes: Sequence[View]) -> Cost:
    """A DMA reading `reads` and writing `writes` (views in any memories)."""
    clock = target.mac_array.clock_hz
    moved: dict[str, list[int]] = {}
    port_cycles: dict[str, float] = {}
    local = 0.0
    latency = {True: 0, False: 0}
    for views, read in ((reads, True), (writes, False)):
        for view in views:
            sram = npu.is_sram(view.space)  # a core's own SRAM
            memory = target.scratch if sram else target.memories[view.space]
            size = burst_bytes(view, memory.burst_bytes)
            if sram and not read and not reads:
                continue  # a fill of an SRAM frame alone: below
            rate = (
                memory.read_bytes_per_cycle(clock) if read else memory.write_bytes_per_cycle(clock)
            )
            wait = memory.read_latency_cycles if read else memory.write_latency_cycles
            latency[read] = max(latency[read], wait)
            if sram:
                # The local SRAM's banks take every transfer at once: its side only
                # bounds this transfer's time.
                local += size / rate
                continue
            port_cycles[memory.port] = port_cycles.get(memory.port, 0.0) + size / rate
            counts = moved.setdefault(view.space, [0, 0])
            counts[0 if read else 1] += size
    if not port_cycles:  # a fill of an SRAM frame
        frame = sum(view.extent for view in writes)
        return Cost(max(1, math.ceil(frame / target.scratch.burst_bytes)))
    ports = tuple(
        (port, math.ceil(max(cycles, local))) for port, cycles in sorted(port_cycles.items())
    )
    data = max(cycles for _, cycles in ports)
    return Cost(
        latency[True] + latency[False] + data,
        read=sum(read for read, _ in moved.values()),
        written=sum(written for _, written in moved.values()),
        ports=ports,
        traffic=tuple((name, read, written) for name, (read, written) in sorted(moved.items())),
    )


def host(
    target: Target, function: FuncOp, inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray]
) -> int:
    """A host call of `function` with these argument and result buffers."""
    from irc.backend.cost import host_seconds

    seconds = 2 * target.host.transition_seconds
    seconds += sum(host_seconds(op, target) for op in function.walk())
    moved = sum(array.nbytes for array in (*inputs, *outputs))
    seconds += moved / target.host.bandwidth_bytes_per_second
    return math.ceil(seconds * target.mac_array.clock_hz)
