"""Cycles of the NPU's commands, from the target's numbers (docs/simulator.md).

The planner (irc/tiling/planner.py) estimates a layer with these same formulas, so
a plan and its simulation agree on what a tile costs:

- **MAC array**: input channels map to the array's rows, output channels to its
  columns; an output pixel takes `ceil(channels / columns) * ceil(depth / rows)`
  passes per kernel tap (a depthwise conv puts the taps on the rows:
  `ceil(channels / columns) * ceil(taps / rows)`), and a command adds `rows +
  columns` cycles to fill and drain the array. The output stage (bias, requantize,
  clamp) is pipelined behind it. Over 16-bit activations every pass takes the
  target's `int16_cycles` (`[data_types]`; 2 on Ethos-U: half the input channels
  per cycle).
- **vector unit**: `ceil(channels / lanes)` cycles per output pixel (the last axis
  is the channels) and per window tap or input; times `int16_cycles` when the command
  reads or writes 16-bit activations.
- **DMA**: the DDR side of a box is a set of contiguous runs; each moves the bursts
  it touches at its addresses, at the DDR's bytes per cycle, after the DDR latency
  once per command. A fill of an SRAM frame alone writes a burst per cycle.
- **host**: the target's CPU model (irc/backend/cost.py) for the called function's ops, its
  arguments and results copied at the host bandwidth, and a transition each way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

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
    """DDR bytes read (whole bursts)."""
    written: int = 0
    """DDR bytes written (whole bursts)."""
    data_cycles: int = 0
    """The part of `cycles` that occupies the DDR (a DMA's data phase)."""


def mac_cycles(
    target: Target,
    pixels: int,
    channels: int,
    depth: int,
    taps: int,
    depthwise: bool,
    sixteen: bool = False,
) -> int:
    """A MAC-array step over `pixels` outputs of `channels` channels, each summing
    `depth` input channels over `taps` kernel taps (of 16-bit activations: `sixteen`)."""
    array = target.mac_array
    if depthwise:
        passes = math.ceil(channels / array.columns) * math.ceil(taps / array.rows)
    else:
        passes = math.ceil(channels / array.columns) * math.ceil(depth / array.rows) * taps
    passes *= target.data_types.activation_cycles(sixteen)
    return pixels * passes + array.rows + array.columns


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
    cycles = mac_cycles(target, pixels, channels, depth, taps, depthwise, sixteen)
    return Cost(cycles, macs=pixels * channels * taps * depth)


def matmul_cost(target: Target, rows: int, columns: int, depth: int, sixteen: bool = False) -> Cost:
    """A [M, K] x [K, N] tile: M pixels of N channels from K (an operand 16-bit if
    `sixteen`)."""
    cycles = mac_cycles(target, rows, columns, depth, 1, False, sixteen)
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
    """A DMA reading `reads` and writing `writes` (views, DDR or SRAM)."""
    burst = target.dma.burst_bytes
    read = sum(burst_bytes(view, burst) for view in reads if view.space == "ddr")
    written = sum(burst_bytes(view, burst) for view in writes if view.space == "ddr")
    moved = read + written
    if not moved:  # a fill of an SRAM frame
        frame = sum(view.extent for view in writes)
        return Cost(max(1, math.ceil(frame / burst)))
    bytes_per_cycle = target.ddr.bandwidth_bytes_per_second / target.mac_array.clock_hz
    data = math.ceil(moved / bytes_per_cycle)
    return Cost(target.ddr.latency_cycles + data, read=read, written=written, data_cycles=data)


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
