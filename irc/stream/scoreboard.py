"""Buffers at static addresses (`View`) and the happens-before check of accesses
(`Scoreboard`): the command stream's own dependency analysis. `lower-to-npu` uses it
to insert the synchronisation that orders what races; the simulator (irc/sim/) runs
it again and reports a race as a hazard.

Each queue runs its commands in order; a queue's vector clock holds, per queue, how
many of that queue's commands happen before its next command (its own earlier ones,
and through each wait the clock of the signal's queue at the signal). Every byte of
a memory remembers, per queue, the index of the last command of that queue that
wrote it and that read it. A command that reads a byte another queue wrote later
than its clock knows of, or writes a byte another queue read or wrote so, races
with that command: a `Conflict`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from xdsl.dialects.builtin import MemRefType

from irc.dialects import npu
from irc.dialects.tile import space_of
from irc.ir import weights


@dataclass(frozen=True)
class View:
    """A buffer at a static address: where it is and what it holds."""

    space: str
    address: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    """In elements."""
    dtype: np.dtype

    @classmethod
    def of(cls, op: npu.ViewOp) -> View:
        """The view an `npu.view` op names."""
        buffer_type = op.result.type
        assert isinstance(buffer_type, MemRefType)
        return cls(
            space_of(buffer_type),
            op.props().int("address") or 0,
            tuple(buffer_type.get_shape()),
            npu.strides_of(buffer_type),
            weights.dtype_of(buffer_type.element_type),
        )

    @cached_property
    def extent(self) -> int:
        """Bytes from the first element to the end of the last."""
        if any(size == 0 for size in self.shape):
            return 0
        last = sum((size - 1) * stride for size, stride in zip(self.shape, self.strides))
        return (last + 1) * self.dtype.itemsize

    @property
    def end(self) -> int:
        """The address after the view's last byte."""
        return self.address + self.extent

    @cached_property
    def contiguous(self) -> bool:
        """The view's elements fill its extent (row-major, no gaps)."""
        return self.extent == math.prod(self.shape) * self.dtype.itemsize

    def moved(self, address: int) -> View:
        """The same view at another address."""
        return View(self.space, address, self.shape, self.strides, self.dtype)

    def within(self, space: str) -> View:
        """The same view in another memory (another core's SRAM)."""
        return View(space, self.address, self.shape, self.strides, self.dtype)

    def broadcast(self, op: npu.DmaOp) -> list[View]:
        """This view (what `op` writes) in every SRAM the DMA writes: its own, or with
        `broadcast = n` the SRAM of each of cores 0 to n-1, at the same address."""
        count = op.props().int("broadcast") or 1
        if count == 1:
            return [self]
        return [self.within(npu.core_sram(core)) for core in range(count)]

    def byte_view(self, memory: np.ndarray) -> np.ndarray:
        """The view's bytes in `memory` (an array with one item per byte, or rows of
        them: then the first axis is kept), with a trailing axis over each element's
        bytes."""
        unit = memory.itemsize
        size = self.dtype.itemsize
        leading = memory.shape[:-1]
        return np.lib.stride_tricks.as_strided(
            memory[..., self.address :],
            shape=(*leading, *self.shape, size),
            strides=(
                *memory.strides[:-1],
                *(stride * size * unit for stride in self.strides),
                unit,
            ),
            writeable=True,
        )


class OutOfBounds(Exception):
    """A view that is not inside its memory, or a write into the weights region."""


@dataclass(frozen=True)
class Conflict:
    """A race of the command being checked with an earlier one."""

    kind: str
    """"reads data written by", "overwrites data written by" or "overwrites data
    still read by"."""
    queue: int
    index: int
    """1-based, in its queue."""


class _Shadow:
    """Per byte of a memory from `base` on, per queue: the index of the queue's last
    command that wrote it and that read it (0: none)."""

    def __init__(self, base: int, size: int, queues: int) -> None:
        self.base = base
        self.size = size
        self.writers = np.zeros((queues, max(size - base, 0)), np.int32)
        self.readers = np.zeros((queues, max(size - base, 0)), np.int32)


@dataclass
class _Region:
    """A view's bytes in its memory's shadow: the writers' and readers' indices
    there, queue by queue along the first axis (views of the shadow arrays, made
    once per view)."""

    writers: np.ndarray
    readers: np.ndarray


class Scoreboard:
    """The queues' vector clocks and the last access of every byte, per queue."""

    def __init__(
        self,
        sizes: Mapping[str, int],
        weights: tuple[str, int],
        queues: int = len(npu.QUEUES),
    ) -> None:
        """A board for memories of `sizes` bytes (`weights`: the memory whose first
        bytes are the read-only weights, and how many) and `queues` queues: the
        engines' by default; irc/sim/streaming.py adds one for the host calls of every
        other frame."""
        memory, weights_bytes = weights
        self.shadows = {
            space: _Shadow(weights_bytes if space == memory else 0, size, queues)
            for space, size in sizes.items()
        }
        self.clocks = np.zeros((queues, queues), np.int64)
        """clocks[q][p]: how many of queue p's commands happen before q's next one."""
        self.counts = [0] * queues
        self.regions: dict[tuple[View, bool], _Region | None] = {}

    def issue(self, queue: int) -> int:
        """Count a command of `queue`; its index (1-based) there."""
        self.counts[queue] += 1
        self.clocks[queue][queue] = self.counts[queue]
        return self.counts[queue]

    def wait(self, queue: int, clock: np.ndarray) -> None:
        """`queue` waits for a signal made when the signalling queue's clock was `clock`."""
        np.maximum(self.clocks[queue], clock, out=self.clocks[queue])

    def conflicts(
        self, queue: int, reads: Sequence[View], writes: Sequence[View]
    ) -> list[Conflict]:
        """The races of a command of `queue` with these accesses (before recording)."""
        clock = self.clocks[queue].tolist()
        others = [p for p, count in enumerate(self.counts) if p != queue and count > clock[p]]
        found: list[Conflict] = []
        read_regions = [self._region(view, write=False) for view in reads]
        write_regions = [self._region(view, write=True) for view in writes]
        if not others:
            return found
        for region in read_regions:
            if region is None:
                continue
            writers = _latest(region.writers, others)
            for other in others:
                if writers[other] > clock[other]:
                    found.append(Conflict("reads data written by", other, writers[other]))
        for region in write_regions:
            assert region is not None  # a write into the weights region raised
            writers, readers = _latest(region.writers, others), _latest(region.readers, others)
            for other in others:
                if writers[other] > clock[other]:
                    found.append(Conflict("overwrites data written by", other, writers[other]))
                if readers[other] > clock[other]:
                    found.append(Conflict("overwrites data still read by", other, readers[other]))
        return found

    def record(self, queue: int, index: int, reads: Sequence[View], writes: Sequence[View]) -> None:
        """Remember a command's accesses."""
        for view in reads:
            region = self._region(view, write=False)
            if region is not None:
                region.readers[queue][...] = index
        for view in writes:
            region = self._region(view, write=True)
            assert region is not None
            region.writers[queue][...] = index

    def _region(self, view: View, write: bool) -> _Region | None:
        """The view's bytes in the shadow (None for a read of the weights region, which
        nothing writes); an `OutOfBounds` for a view outside its memory or a write
        into the weights region."""
        key = (view, write)
        if key in self.regions:
            return self.regions[key]
        shadow = self.shadows[view.space]
        extent = view.extent
        if view.address < 0 or view.address + extent > shadow.size:
            raise OutOfBounds(
                f"{view.space} bytes [{view.address}, {view.address + extent}) are "
                f"outside its {shadow.size} bytes"
            )
        region: _Region | None = None
        if view.address < shadow.base:
            if write:
                raise OutOfBounds(
                    f"a write at DDR address {view.address} is in the read-only weights "
                    f"region [0, {shadow.base})"
                )
        else:
            shifted = view.moved(view.address - shadow.base)
            if shifted.contiguous:
                begin, end = shifted.address, shifted.address + extent
                region = _Region(shadow.writers[:, begin:end], shadow.readers[:, begin:end])
            else:
                region = _Region(
                    shifted.byte_view(shadow.writers), shifted.byte_view(shadow.readers)
                )
        self.regions[key] = region
        return region


def _latest(indices: np.ndarray, queues: Sequence[int]) -> dict[int, int]:
    """For each of `queues` (the first axis), the largest command index over a
    region's bytes: one reduction for all queues when there are several."""
    if len(queues) == 1:
        return {queues[0]: int(indices[queues[0]].max(initial=0))}
    values = np.max(indices, axis=tuple(range(1, indices.ndim)), initial=0).tolist()
    return {queue: values[queue] for queue in queues}
