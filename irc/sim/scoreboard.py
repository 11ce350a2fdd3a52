"""Buffers at static addresses (`View`) and the happens-before check of accesses
(`Scoreboard`), shared by the simulator, which reports a race as a hazard, and by
`lower-to-npu`, which inserts the synchronisation that orders it.

Each queue runs its commands in order; a queue's vector clock holds, per queue, how
many of that queue's commands happen before its next command (its own earlier ones,
and through each wait the clock of the signal's queue at the signal). Every byte of
a memory remembers, per queue, the index of the last command of that queue that
wrote it and that read it. A command that reads a byte another queue wrote later
than its clock knows of, or writes a byte another queue read or wrote so, races
with that command: a `Conflict`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

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
        buffer_type = op.result.type
        assert isinstance(buffer_type, MemRefType)
        return cls(
            space_of(buffer_type),
            op.props().int("address") or 0,
            tuple(buffer_type.get_shape()),
            npu.strides_of(buffer_type),
            weights.dtype_of(buffer_type.element_type),
        )

    @property
    def extent(self) -> int:
        """Bytes from the first element to the end of the last."""
        if any(size == 0 for size in self.shape):
            return 0
        last = sum((size - 1) * stride for size, stride in zip(self.shape, self.strides))
        return (last + 1) * self.dtype.itemsize

    def moved(self, address: int) -> View:
        """The same view at another address."""
        return View(self.space, address, self.shape, self.strides, self.dtype)

    def byte_view(self, memory: np.ndarray) -> np.ndarray:
        """The view's bytes in `memory` (an array with one item per byte), with a
        trailing axis over each element's bytes."""
        unit = memory.itemsize
        size = self.dtype.itemsize
        return np.lib.stride_tricks.as_strided(
            memory[self.address :],
            shape=(*self.shape, size),
            strides=(*(stride * size * unit for stride in self.strides), unit),
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


class Scoreboard:
    """The queues' vector clocks and the last access of every byte, per queue."""

    def __init__(self, sizes: Mapping[str, int], weights_bytes: int) -> None:
        queues = len(npu.QUEUES)
        self.shadows = {
            space: _Shadow(weights_bytes if space == "ddr" else 0, size, queues)
            for space, size in sizes.items()
        }
        self.clocks = np.zeros((queues, queues), np.int64)
        """clocks[q][p]: how many of queue p's commands happen before q's next one."""
        self.counts = [0] * queues

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
        clock = self.clocks[queue]
        others = [p for p, count in enumerate(self.counts) if p != queue and count > clock[p]]
        found: list[Conflict] = []
        if not others:
            for view in (*reads, *writes):
                self._region(view, view in writes)  # bounds only
            return found
        for view in reads:
            shadow, region = self._region(view, write=False)
            for other in others:
                last = int(region(shadow.writers[other]).max(initial=0))
                if last > clock[other]:
                    found.append(Conflict("reads data written by", other, last))
        for view in writes:
            shadow, region = self._region(view, write=True)
            for other in others:
                last = int(region(shadow.writers[other]).max(initial=0))
                if last > clock[other]:
                    found.append(Conflict("overwrites data written by", other, last))
                last = int(region(shadow.readers[other]).max(initial=0))
                if last > clock[other]:
                    found.append(Conflict("overwrites data still read by", other, last))
        return found

    def record(self, queue: int, index: int, reads: Sequence[View], writes: Sequence[View]) -> None:
        """Remember a command's accesses."""
        for view in reads:
            shadow, region = self._region(view, write=False)
            region(shadow.readers[queue])[...] = index
        for view in writes:
            shadow, region = self._region(view, write=True)
            region(shadow.writers[queue])[...] = index

    def _region(
        self, view: View, write: bool
    ) -> tuple[_Shadow, Callable[[np.ndarray], np.ndarray]]:
        shadow = self.shadows[view.space]
        if view.address < 0 or view.address + view.extent > shadow.size:
            raise OutOfBounds(
                f"{view.space} bytes [{view.address}, {view.address + view.extent}) are "
                f"outside its {shadow.size} bytes"
            )
        if view.address < shadow.base:
            if write:
                raise OutOfBounds(
                    f"a write at DDR address {view.address} is in the read-only weights "
                    f"region [0, {shadow.base})"
                )
            return shadow, _nothing
        shifted = view.moved(view.address - shadow.base)
        return shadow, shifted.byte_view


def _nothing(array: np.ndarray) -> np.ndarray:
    return array[:0]
