"""Lowering a tile-level function to the `npu` command stream (docs/simulator.md).

The tile level's loops have static bounds and its buffers static offsets, so the
lowering runs the function's control abstractly: it unrolls every `scf.for`,
evaluates the index arithmetic, and turns each tile op into commands on views at
static addresses:

- **system memories**: in the weights' memory, the weights region (constants, at
  their `tile.to_buffer` offsets) from address 0; in each memory of activations, its
  activation arena (the memory plan's offsets; after the weights in theirs), then
  scratch space for the few buffers the plan leaves unplaced (staging copies of host
  results, in the last memory of activations); `npu.place` writes the arguments and
  the weights before the stream.
- **copies**: a `tile.copy` becomes one `npu.dma` of the part of the box inside its
  source, into its place in the destination box; when part of the box is padding
  (or the source is upsampled) the DMA first fills the whole box with the pad.
- **MAC commands**: a `tile.conv` or `tile.matmul` with the `tile.bias_add` and
  `tile.requantize` (or float `tile.clamp`) that finish its accumulator becomes one
  `npu.conv` or `npu.matmul` with that output stage; the vector ops map one to one.
- **streamed weights**: the first time a conv's weights are loaded whole, their DMA
  is cut into chunks of a MAC-array width of output channels, the first one at once
  and the rest behind the step's input box; the step becomes one command per chunk
  (on slices of the weights, accumulator and bias), its requantize a vector command,
  so the array starts on the first chunk instead of waiting for all of them.
- **double buffering**: an SRAM buffer with an `alternate` copy changes copies each
  time a command writes it whole (a new tile), so the next tile's loads go to the
  other copy while this one's compute reads the first;
- **host calls**: the tensor ops between tiled layers (`tile.to_tensor` ...
  `tile.to_buffer`) become functions of the module, each run of consecutive ones an
  `npu.host_call` reading and writing system memories;
- **synchronisation**: a scoreboard (irc/stream/scoreboard.py) follows every byte each
  command reads and writes and each queue's vector clock; when a command would race
  with an earlier one of another queue, a `npu.signal` is placed right after that
  one and an `npu.wait` before this one. A wait that the clocks already imply is
  not emitted, so the synchronisation is what correctness needs and no more.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StridedLayoutAttr,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    i32,
    i64,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Operation, SSAValue

from irc import backend
from irc.diagnostics import error
from irc.dialects import npu, tile
from irc.dialects.nn import ConstantOp
from irc.dialects.part import TransferOp
from irc.dialects.qnn import ConstantOp as QConstantOp
from irc.dialects.quant import quantized_element
from irc.ir import weights
from irc.ir.outline import boundary, outline
from irc.ir.placement import CPU, DEVICE_ATTR
from irc.stream.scoreboard import OutOfBounds, Scoreboard, View
from irc.targets import Target

SRAM = npu.SRAM

MAC_STAGE_PROPERTIES = ("output_zero_point", "clamp_min", "clamp_max", "rounding")
"""The properties of a `tile.requantize` that a MAC command's output stage takes."""


@dataclass
class Statistics:
    """What the lowering emitted."""

    commands: Counter[str] = field(default_factory=Counter)
    signals: int = 0
    waits: int = 0
    host_calls: int = 0
    memory_bytes: dict[str, int] = field(default_factory=dict)
    """The bytes of each system memory the program uses."""


@dataclass
class Slot:
    """A tile-level buffer: where it lives (both copies of a double-buffered one)."""

    space: str
    addresses: tuple[int, ...]
    shape: tuple[int, ...]
    dtype: np.dtype
    element: Attribute

    @property
    def key(self) -> tuple[str, tuple[int, ...]]:
        """Its copies' identity: the slot's place in memory, shared by every buffer there."""
        return (self.space, self.addresses)


def _row_major(shape: Sequence[int]) -> tuple[int, ...]:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def _align(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


@dataclass
class _Pending:
    """A MAC command whose output stage may still join it."""

    kind: type[npu.ConvOp] | type[npu.MatmulOp]
    operands: list[SSAValue]
    acc: Slot
    properties: dict[str, Attribute]
    location: Attribute
    bias: SSAValue | None = None
    params: SSAValue | None = None
    output: SSAValue | None = None
    reads: list[View] = field(default_factory=list)
    writes: list[View] = field(default_factory=list)
    streamed: _Streamed | None = None
    """Set when the step starts on part of its weights (see `StreamLowering.mac`)."""


@dataclass
class _Dma:
    """A DMA held back to be emitted later (`StreamLowering.copy`)."""

    source: View | None
    dest: View | None
    frame: View | None
    pad: Attribute | None
    location: Attribute
    element: Attribute
    broadcast: int = 0
    """Into the SRAM of this many cores (0: the running core's)."""

    def emit(self, lowering: StreamLowering) -> None:
        lowering.emit_dma(
            self.source, self.dest, self.frame, self.pad, self.location, self.element,
            self.broadcast,
        )  # fmt: skip


@dataclass
class _Streamed:
    """A conv step split by output channels, to start on its first weight chunk."""

    chunk: int
    """Output channels per command."""
    source: View
    weight: Slot
    acc: Slot
    bias: Slot | None = None
    requantize: tile.RequantizeOp | None = None
    params: Slot | None = None
    output: Slot | None = None


QUEUE_NAMES = [StringAttr(name) for name in npu.QUEUES]
"""The `queue` property of a signal or wait, by queue index."""


@functools.cache
def _segments(*present: bool) -> DenseArrayBase:
    """The operand segment sizes of a command whose optional operands are `present`."""
    return DenseArrayBase.from_list(i32, [int(flag) for flag in present])


@functools.lru_cache(maxsize=4096)  # bounded: shapes vary with every model compiled
def _memref_type(
    space: str, shape: tuple[int, ...], strides: tuple[int, ...], element: Attribute
) -> MemRefType:
    """The type of a view (made once per distinct view: building a memref type checks
    its parameters, which costs more than the rest of a view)."""
    if strides != _row_major(shape):
        return MemRefType(
            element,
            list(shape),
            layout=StridedLayoutAttr(list(strides), 0),
            memory_space=StringAttr(space),
        )
    return MemRefType(element, list(shape), memory_space=StringAttr(space))


class StreamLowering:
    """Lowers one tile-level function; see the module docstring."""

    def __init__(self, module: ModuleOp, function: FuncOp, target: Target, double: bool) -> None:
        self.module = module
        self.function = function
        self.target = target
        self.double = double
        self.weights_memory = target.placement.weights
        self.spill = target.placement.activations[-1]
        """The memory of the buffers the plan leaves unplaced, and of host tensors."""
        block = function.body.blocks.first
        assert block is not None
        self.block = block
        self.stats = Statistics()
        # Values of the abstract run: index integers, buffers, tensors in DDR.
        self.env: dict[SSAValue, object] = {}
        self.copy_of: dict[tuple[str, tuple[int, ...]], int] = {}
        # What the new function holds.
        self.prologue: list[Operation] = []
        self.views: dict[tuple[object, ...], SSAValue] = {}
        self.indices: dict[int, SSAValue] = {}
        self.stream: list[Operation] = []
        self.after: dict[int, list[Operation]] = {}
        # The tensors in DDR: value -> (slot) for tensors the stream reads or writes.
        self.tensor_slots: dict[SSAValue, Slot] = {}
        self.host_ops: list[Operation] = []
        self.reads: list[tuple[SSAValue, Slot]] = []
        self.pending: _Pending | None = None
        # Weight copies streamed in chunks: the copies done so, and per SRAM slot the
        # chunks not yet emitted (they follow the step's other loads).
        self.streamed_copies: set[Operation] = set()
        self.deferred: dict[tuple[str, tuple[int, ...]], list[_Dma]] = {}
        # While a step's weights stream in: the buffers its first commands read, and
        # the loads they do not need, held until the weights' last chunk is on its way.
        self.streaming_inputs: set[SSAValue] = set()
        self.held: list[_Dma] = []
        self._layout()
        self.cores = target.cores.count
        self.core = 0
        """The core that runs the commands emitted now (`tile.on_core`)."""
        srams = {npu.core_sram(core): target.scratch.size_bytes for core in range(self.cores)}
        self.sram_ends: Counter[str] = Counter()
        """The highest byte used of each core's SRAM."""
        engines = self.cores * len(npu.QUEUES)
        self.board = Scoreboard(
            {**self.planned_end, **srams}, (self.weights_memory, self.weights_bytes), engines
        )
        # Per queue, per command (1-based): its position in the stream and its clock.
        self.positions: list[list[int]] = [[] for _ in range(engines)]
        self.clocks: list[list[np.ndarray]] = [[] for _ in range(engines)]
        self.tokens: dict[tuple[int, int], int] = {}

    # ---- the layout of the system memories ------------------------------------------------

    def _alignment(self, memory: str) -> int:
        return self.target.memories[memory].alignment_bytes

    def _layout(self) -> None:
        """The weights region, each arena (after the weights in their memory), scratch
        after each arena."""
        weights_end = 0
        arena_end: Counter[str] = Counter()
        for op in self.block.ops:
            if isinstance(op, tile.ToBufferOp) and self._is_constant(op.operands[0]):
                offset = op.props().int("offset")
                if offset is not None:
                    weights_end = max(weights_end, offset + _bytes(op.results[0].type))
        self.weights_bytes = _align(weights_end, self._alignment(self.weights_memory))
        for op in self.block.ops:
            if not isinstance(op, tile.AllocOp | tile.ToBufferOp):
                continue
            space = _space(op.results[0])
            if space != SRAM:
                offset = op.props().int("offset")
                if offset is None or (
                    isinstance(op, tile.ToBufferOp) and self._is_constant(op.operands[0])
                ):
                    continue
                arena_end[space] = max(arena_end[space], offset + _bytes(op.results[0].type))
        memories = {self.weights_memory, self.spill, *arena_end}
        self.bases = {
            memory: self.weights_bytes if memory == self.weights_memory else 0
            for memory in memories
        }
        self.cursor = {
            memory: _align(self.bases[memory] + arena_end[memory], self._alignment(memory))
            for memory in memories
        }
        # Scratch buffers are allocated as the walk meets them; the scoreboard needs
        # each memory whole: an upper bound, the arena plus every unplaced buffer.
        unplaced: Counter[str] = Counter()
        for op in self.block.walk():
            if isinstance(op, tile.AllocOp | tile.ToBufferOp) and op.props().int("offset") is None:
                space = _space(op.results[0])
                if space != SRAM:
                    unplaced[space] += _align(_bytes(op.results[0].type), self._alignment(space))
        spill_alignment = self._alignment(self.spill)
        unplaced[self.spill] += sum(
            _align(_bytes(arg.type), spill_alignment)
            for arg in self.block.args
            if isinstance(arg.type, TensorType)
        )
        unplaced[self.spill] += sum(
            _align(_bytes(result.type), spill_alignment)
            for op in self.block.ops
            for result in op.results
            if isinstance(result.type, TensorType) and not self._is_constant(result)
        )
        self.planned_end = {
            memory: self.cursor.get(memory, 0) + unplaced[memory]
            for memory in {*self.cursor, *unplaced}
        }

    def _is_constant(self, value: SSAValue) -> bool:
        return _is_constant(value.owner)  # type: ignore[arg-type]

    def _scratch(self, value_type: Attribute, memory: str) -> int:
        """A new buffer in `memory` after its arena."""
        address = self.cursor.setdefault(memory, 0)
        self.cursor[memory] = _align(address + _bytes(value_type), self._alignment(memory))
        return address

    def _spilled(self, value: SSAValue) -> Slot:
        """A new buffer for a host tensor, in the spill memory."""
        buffer_type = _memref(value.type, self.spill)
        return _slot(self.spill, (self._scratch(value.type, self.spill),), buffer_type)

    # ---- views --------------------------------------------------------------------------

    def view(self, v: View, element: Attribute) -> SSAValue:
        """The SSA view of `v` (one per distinct view, in the prologue)."""
        key = (v.space, v.address, v.shape, v.strides, element)
        if key not in self.views:
            if npu.is_sram(v.space):
                self.sram_ends[v.space] = max(self.sram_ends[v.space], v.address + v.extent)
            buffer_type = _memref_type(v.space, v.shape, v.strides, element)
            op = npu.ViewOp.create(
                properties={"address": IntegerAttr(v.address, i64)}, result_types=[buffer_type]
            )
            self.prologue.append(op)
            self.views[key] = op.results[0]
        return self.views[key]

    def index(self, value: int) -> SSAValue:
        """An `arith.constant` index (one per value, in the prologue)."""
        if value not in self.indices:
            op = arith.ConstantOp.from_int_and_width(value, IndexType())
            self.prologue.append(op)
            self.indices[value] = op.results[0]
        return self.indices[value]

    def space_of(self, slot: Slot) -> str:
        """The memory of a slot as the running core sees it: an SRAM buffer is in the
        core's own SRAM (each core has its own, with the same buffers at the same
        offsets: `tile.on_core`)."""
        return npu.core_sram(self.core) if slot.space == SRAM else slot.space

    def _copy_key(self, slot: Slot) -> tuple[str, tuple[int, ...]]:
        return (self.space_of(slot), slot.addresses)

    def address_of(self, slot: Slot) -> int:
        """The current copy's address of a (double-buffered) slot."""
        return slot.addresses[self.copy_of.get(self._copy_key(slot), 0)]

    def whole(self, slot: Slot) -> View:
        """The view of a slot's current copy, whole."""
        return View(
            self.space_of(slot),
            self.address_of(slot),
            slot.shape,
            _row_major(slot.shape),
            slot.dtype,
        )

    def renew(self, slot: Slot, broadcast: int = 0) -> None:
        """A command writes `slot` whole: a new tile goes to the other copy (in the
        SRAM of every core a broadcast writes)."""
        if len(slot.addresses) > 1 and self.double:
            # The first tile takes the first copy.
            spaces = [npu.core_sram(core) for core in range(broadcast)] or [self.space_of(slot)]
            for space in spaces:
                key = (space, slot.addresses)
                self.copy_of[key] = 1 - self.copy_of.get(key, 1)

    def _check_broadcast(self, op: tile.CopyOp, count: int) -> None:
        """A broadcast load runs on core 0 and writes cores the target has, which can
        receive it."""
        cores = self.target.cores
        if not cores.broadcast_loads or count > cores.count or self.core:
            raise error(
                f"lower-to-npu: a copy broadcast to {count} cores' SRAM, on core {self.core} "
                f"of {self.target.name} ({cores.count} "
                f"{'core' if cores.count == 1 else 'cores'}, "
                f"{'' if cores.broadcast_loads else 'no '}broadcast loads)",
                op,
                hint="plan the program for this target (plan-tiles, lower-to-tile)",
            )

    def box(
        self, slot: Slot, offsets: Sequence[int], sizes: Sequence[int], factors: Sequence[int] = ()
    ) -> View:
        """A box of `slot` at `offsets` (element `i` along an axis of factor `f` at
        position `offset + i * f`)."""
        strides = _row_major(slot.shape)
        factors = list(factors) or [1] * len(sizes)
        address = (
            self.address_of(slot)
            + sum(o * s for o, s in zip(offsets, strides)) * slot.dtype.itemsize
        )
        return View(
            self.space_of(slot),
            address,
            tuple(sizes),
            tuple(s * f for s, f in zip(strides, factors)),
            slot.dtype,
        )

    # ---- the walk -----------------------------------------------------------------------

    def run(self) -> Statistics:
        """Lower the function; what was emitted."""
        self.walk(list(self.block.ops))
        self.flush_pending()
        self.flush_host()
        self._flush_all_deferred()
        self._finish()
        return self.stats

    def walk(self, ops: Sequence[Operation]) -> None:
        """Run ops in order (a loop body once per iteration)."""
        for op in ops:
            self.visit(op)

    def value(self, value: SSAValue) -> object:
        """What the abstract run holds for `value` (an IrcError if nothing)."""
        if value not in self.env:
            raise error("the tile-level program uses a value lower-to-npu cannot evaluate", value)
        return self.env[value]

    def int_of(self, value: SSAValue) -> int:
        """The integer of an index value."""
        result = self.value(value)
        assert isinstance(result, int)
        return result

    def slot(self, value: SSAValue) -> Slot:
        """The slot of a buffer value."""
        result = self.value(value)
        assert isinstance(result, Slot), f"{value} is not a buffer"
        return result

    def visit(self, op: Operation) -> None:
        """Run one op of the tile level: evaluate it, or emit its commands."""
        match op:
            case arith.ConstantOp():
                assert isinstance(op.value, IntegerAttr)
                self.env[op.result] = int(op.value.value.data)
            case arith.AddiOp():
                self.env[op.result] = self.int_of(op.lhs) + self.int_of(op.rhs)
            case arith.SubiOp():
                self.env[op.result] = self.int_of(op.lhs) - self.int_of(op.rhs)
            case arith.MuliOp():
                self.env[op.result] = self.int_of(op.lhs) * self.int_of(op.rhs)
            case arith.FloorDivSIOp():
                self.env[op.result] = self.int_of(op.lhs) // self.int_of(op.rhs)
            case scf.ForOp():
                self.flush_host()
                lower, upper, step = (self.int_of(v) for v in (op.lb, op.ub, op.step))
                body = op.body.block
                for value in range(lower, upper, step):
                    self.env[body.args[0]] = value
                    self.walk([o for o in body.ops if not isinstance(o, scf.YieldOp)])
            case tile.OnCoreOp():
                self.on_core(op)
            case tile.AllocOp():
                self.alloc(op)
            case tile.ToBufferOp():
                self.to_buffer(op)
            case tile.ViewOp():
                parent = self.slot(op.operands[0])
                result_type = op.results[0].type
                assert isinstance(result_type, MemRefType)
                self.env[op.results[0]] = Slot(
                    parent.space,
                    parent.addresses,
                    tuple(result_type.get_shape()),
                    parent.dtype,
                    parent.element,
                )
            case tile.ToTensorOp():
                self.env[op.results[0]] = self.slot(op.operands[0])
                self.tensor_slots[op.results[0]] = self.slot(op.operands[0])
            case tile.CopyOp():
                self.flush_pending()
                self.flush_host()
                self.copy(op)
            case tile.ConvOp() | tile.MatmulOp():
                self.flush_pending()
                self.flush_host()
                self.mac(op)
            case tile.BiasAddOp():
                self.bias_add(op)
            case tile.RequantizeOp() if self._joins_stage(op.acc):
                self.stage_requantize(op)
            case tile.ClampOp() if self._joins_stage(op.input) and op.input == op.output:
                self.stage_clamp(op)
            case _ if op.dialect_name() == "tile":
                self.flush_pending()
                self.flush_host()
                self._flush_all_deferred()
                self.vector(op)
            case ConstantOp() | QConstantOp():
                self.env[op.results[0]] = op
            case TransferOp() if op.operands[0] in self.tensor_slots:
                # host and NPU share DDR: the copy to the host is the same bytes
                self.tensor_slots[op.results[0]] = self.tensor_slots[op.operands[0]]
            case ReturnOp():
                self.flush_pending()
                self._flush_all_deferred()
                self.flush_host()
                self.returned(op)
            case _:
                self.flush_pending()
                self._flush_all_deferred()  # nothing is held past a host op
                self.host_ops.append(op)

    def on_core(self, op: tile.OnCoreOp) -> None:
        """The body's commands on core `core`, its SRAM buffers in that core's SRAM."""
        core = op.props().int("core") or 0
        if core >= self.cores:
            raise error(
                f"the tile-level program runs a part on core {core}; {self.target.name} has "
                f"{self.cores} {'core' if self.cores == 1 else 'cores'}",
                op,
                hint="plan the program for this target (plan-tiles, lower-to-tile)",
            )
        self.flush_pending()
        self.flush_host()
        self._flush_all_deferred()
        self.core = core
        try:
            self.walk(list(op.body.block.ops))
            self.flush_pending()
            self._flush_all_deferred()
        finally:
            self.core = 0

    # ---- buffers ------------------------------------------------------------------------

    def alloc(self, op: tile.AllocOp) -> None:
        """A buffer: in SRAM at its offset (and alternate), in a system memory in its
        arena or scratch."""
        result_type = op.results[0].type
        assert isinstance(result_type, MemRefType)
        props = op.props()
        space = _space(op.results[0])
        offset = props.int("offset")
        if space == SRAM:
            addresses: tuple[int, ...] = (offset or 0,)
            if props.int("alternate") is not None:
                addresses += (props.int("alternate") or 0,)
        elif offset is None:
            addresses = (self._scratch(result_type, space),)
        else:
            addresses = (self.bases[space] + offset,)
        self.env[op.results[0]] = _slot(space, addresses, result_type)

    def to_buffer(self, op: tile.ToBufferOp) -> None:
        """A tensor into a system memory: placed by the runtime, written by a host call,
        or copied."""
        if op.results[0] in self.env:
            return  # a host call wrote its result here
        slot = self._to_buffer_slot(op)
        self.env[op.results[0]] = slot
        source = op.operands[0]
        if source.owner in self.host_ops:
            self.flush_host()
        if source in self.tensor_slots:
            # A tensor already in memory elsewhere (a host result, a value read back):
            # the DMA copies it here.
            placed = self.tensor_slots[source]
            if placed.addresses != slot.addresses:
                self.flush_pending()
                self.emit_dma(
                    self.whole(placed), self.whole(slot), None, None, op.location, slot.element
                )
            return
        self.place(source, slot)

    def _to_buffer_slot(self, op: tile.ToBufferOp) -> Slot:
        """Where a `tile.to_buffer` puts its tensor: the weights region (a constant),
        the arena, or scratch."""
        result_type = op.results[0].type
        assert isinstance(result_type, MemRefType)
        space = tile.space_of(result_type)
        offset = op.props().int("offset")
        if offset is None:
            address = self._scratch(result_type, space)
        elif self._is_constant(op.operands[0]):
            address = offset
        else:
            address = self.bases[space] + offset
        return _slot(space, (address,), result_type)

    def place(self, value: SSAValue, slot: Slot) -> None:
        """`npu.place` of an argument or a constant into a system memory, before the
        stream."""
        view = self.view(self.whole(slot), slot.element)
        if isinstance(value.owner, Operation):
            self._keep_constant(value.owner)
        self.prologue.append(npu.PlaceOp.create(operands=[value, view]))
        self.tensor_slots[value] = slot

    def _keep_constant(self, op: Operation) -> None:
        if op not in self.prologue:
            op.detach()
            self.prologue.append(op)

    # ---- commands -----------------------------------------------------------------------

    def command(
        self,
        op: npu.Command,
        reads: Sequence[View],
        writes: Sequence[View],
    ) -> None:
        """Add a command to the stream, with the waits it needs before it."""
        if self.core:
            op.properties["core"] = IntegerAttr(self.core, i64)
        queue = op.engine()
        try:
            conflicts = self.board.conflicts(queue, reads, writes)
        except OutOfBounds as problem:
            raise error(
                f"lower-to-npu: {op.name} would access memory it may not: {problem}", op
            ) from None
        # Wait for one queue at a time, the one whose signal orders the most of what
        # races, until nothing does: a wait that another already implies is not made.
        while conflicts:
            latest: dict[int, int] = {}
            for conflict in conflicts:
                latest[conflict.queue] = max(latest.get(conflict.queue, 0), conflict.index)
            scores = {
                other: sum(self.clocks[other][index - 1][q] >= i for q, i in latest.items())
                for other, index in latest.items()
            }
            other = max(sorted(latest), key=lambda q: scores[q])
            index = latest[other]
            token = self._signal_after(other, index)
            self.stream.append(npu.WaitOp.create(properties=_sync_properties(queue, token)))
            self.stats.waits += 1
            self.board.wait(queue, self.clocks[other][index - 1])
            conflicts = self.board.conflicts(queue, reads, writes)
        index = self.board.issue(queue)
        self.board.record(queue, index, reads, writes)
        self.positions[queue].append(len(self.stream))
        self.clocks[queue].append(self.board.clocks[queue].copy())
        self.stream.append(op)
        self.stats.commands[op.name] += 1

    def _signal_after(self, queue: int, index: int) -> int:
        """The token set after command `index` of `queue` (a signal placed there)."""
        key = (queue, index)
        if key not in self.tokens:
            token = len(self.tokens)
            self.tokens[key] = token
            position = self.positions[queue][index - 1]
            self.after.setdefault(position, []).append(
                npu.SignalOp.create(properties=_sync_properties(queue, token))
            )
            self.stats.signals += 1
        return self.tokens[key]

    def emit_dma(
        self,
        source: View | None,
        dest: View | None,
        frame: View | None,
        pad: Attribute | None,
        location: Attribute,
        element: Attribute,
        broadcast: int = 0,
    ) -> None:
        """An `npu.dma` of `source` into `dest` (either may be None: a fill of `frame`);
        with `broadcast`, into the SRAM of that many cores."""
        operands = [self.view(v, element) for v in (source, dest, frame) if v is not None]
        properties: dict[str, Attribute] = {
            tile.SEGMENTS: _segments(source is not None, dest is not None, frame is not None)
        }
        if broadcast:
            properties["broadcast"] = IntegerAttr(broadcast, i64)
        if frame is not None:
            properties["pad"] = pad if pad is not None else IntegerAttr(0, i64)
        if (
            self.target.mac_array.weight_stream
            and source is not None
            and dest is not None
            and frame is None
            and source.space == self.weights_memory
            and source.address + source.extent <= self.weights_bytes
        ):
            properties["weights"] = BoolAttr.from_bool(True)
        op = npu.DmaOp.create(operands=operands, properties=properties)
        op.location = location  # type: ignore[assignment]
        reads = [source] if source is not None else []
        written = frame if frame is not None else dest
        assert written is not None
        self.command(op, reads, written.broadcast(op))

    def copy(self, op: tile.CopyOp) -> None:
        """A `tile.copy`: the part of the box inside the source, into its place in the
        destination box; the rest of the box (padding, inserted zeros) filled first."""
        source, dest = self.slot(op.source), self.slot(op.dest)
        rank = len(source.shape)
        offsets = [self.int_of(v) for v in op.source_offsets]
        dest_offsets = [self.int_of(v) for v in op.dest_offsets]
        props = op.props()
        sizes = props.ints("sizes") or []
        factors = props.ints("upsample") or [1] * rank
        source_rolling = props.ints("source_rolling")
        dest_rolling = props.ints("dest_rolling")
        firsts, counts, starts = [], [], []
        empty = False
        for offset, size, extent, factor in zip(
            offsets, sizes, source_rolling or source.shape, factors
        ):
            first = max(-(-offset // factor), 0)
            last = min((offset + size - 1) // factor, extent - 1)
            if first > last:
                empty = True
                break
            firsts.append(first)
            counts.append(last - first + 1)
            starts.append(first * factor - offset)
        whole_box = not empty and all(f == 1 for f in factors) and counts == list(sizes)
        self._flush_deferred(dest.key)
        broadcast = props.int("broadcast") or 0
        if broadcast:
            self._check_broadcast(op, broadcast)
        if _covers(dest, sizes):
            self.renew(dest, broadcast)
        frame = None if whole_box else self.box(dest, dest_offsets, sizes)
        if empty:
            self.emit_dma(
                None, None, frame, props.attr("pad"), op.location, dest.element, broadcast
            )
            return
        if source_rolling or dest_rolling:
            self._rolling_copy(op, source, dest, firsts, counts, starts, dest_offsets, frame)
            return
        streamable = whole_box and _covers(dest, sizes) and not broadcast
        chunk = self._weight_chunk(op, dest) if streamable else 0
        if chunk:
            # The first chunk now; the rest after the step's other loads (`mac`).
            self.streamed_copies.add(op)
            pieces = [
                _Dma(
                    self.box(source, [firsts[0] + start, *firsts[1:]], [n, *counts[1:]]),
                    self.box(dest, [start, *dest_offsets[1:]], [n, *counts[1:]]),
                    None,
                    None,
                    op.location,
                    dest.element,
                )
                for start, n in _chunks(counts[0], chunk)
            ]
            self.deferred[dest.key] = pieces[1:]
            self.streaming_inputs = {
                value
                for use in op.dest.uses
                if isinstance(use.operation, tile.ConvOp) and use.index == 1
                for value in _chunk_inputs(use.operation)
            }
            pieces[0].emit(self)
            return
        source_view = self.box(source, firsts, counts)
        dest_view = self.box(dest, [d + s for d, s in zip(dest_offsets, starts)], counts, factors)
        dma = _Dma(
            source_view, dest_view, frame, props.attr("pad"), op.location, dest.element, broadcast
        )
        # A broadcast (core 0's, between a layer's regions) is never held.
        if (
            self.deferred
            and dest.space == SRAM
            and op.dest not in self.streaming_inputs
            and not broadcast
        ):
            self.held.append(dma)  # a load the streamed step's first commands do not read
        else:
            dma.emit(self)

    def _rolling_copy(
        self,
        op: tile.CopyOp,
        source: Slot,
        dest: Slot,
        firsts: Sequence[int],
        counts: Sequence[int],
        starts: Sequence[int],
        dest_offsets: Sequence[int],
        frame: View | None,
    ) -> None:
        """A copy out of or into a rolling buffer: one DMA, or two when the box wraps
        around the buffer's end (the frame, padding, filled by the first)."""
        props = op.props()
        into = [d + s for d, s in zip(dest_offsets, starts)]
        rolling_source = props.ints("source_rolling") is not None
        rolled = source if rolling_source else dest
        rolled_at = list(firsts if rolling_source else into)
        other_at = list(into if rolling_source else firsts)
        logical = props.ints("source_rolling") or props.ints("dest_rolling") or []
        axis = tile.rolling_axis(logical, rolled.shape)
        pieces = [(0, counts[axis] if axis >= 0 else 0)]
        if axis >= 0:
            length = rolled.shape[axis]
            start = rolled_at[axis] % length
            rolled_at[axis] = start
            if start + counts[axis] > length:
                pieces = [(0, length - start), (length - start, counts[axis] - length + start)]
        for index, (skip, count) in enumerate(pieces):
            piece = list(counts)
            near, far = list(rolled_at), list(other_at)
            if axis >= 0:
                piece[axis] = count
                near[axis] = 0 if skip else rolled_at[axis]
                far[axis] += skip
            near_view, far_view = (
                self.box(rolled, near, piece),
                self.box(source if not rolling_source else dest, far, piece),
            )
            source_view, dest_view = (
                (near_view, far_view) if rolling_source else (far_view, near_view)
            )
            _Dma(
                source_view,
                dest_view,
                frame if index == 0 else None,
                props.attr("pad"),
                op.location,
                dest.element,
            ).emit(self)

    def _weight_chunk(self, op: tile.CopyOp, dest: Slot) -> int:
        """Output channels per chunk if this copy loads a conv's weights in chunks the
        first time it runs (0: in one piece).

        A conv's first step would otherwise wait for all of its weights: loaded one
        MAC-array width of output channels at a time, the step starts on the first
        chunk while the others arrive (the step is split to match, `mac`).
        """
        if op in self.streamed_copies or dest.space != SRAM or len(dest.shape) != 4:
            return 0
        consumers = [
            use.operation
            for use in op.dest.uses
            if isinstance(use.operation, tile.ConvOp) and use.index == 1
        ]
        if not consumers or not all(_streamable(conv) for conv in consumers):
            return 0
        chunk = self.target.mac_array.columns
        chunk_bytes = chunk * math.prod(dest.shape[1:]) * dest.dtype.itemsize
        if dest.shape[0] <= chunk or chunk_bytes % self.target.scratch.alignment_bytes:
            return 0
        return chunk

    def _flush_all_deferred(self) -> None:
        """Emit every held chunk and load: only loads and the streamed conv itself
        may pass them."""
        for key in list(self.deferred):
            self._flush_deferred(key)

    def _flush_deferred(self, key: tuple[str, tuple[int, ...]]) -> None:
        """Emit the weight chunks still held for the SRAM slot `key`, then the loads
        held behind them."""
        if key not in self.deferred:
            return
        for dma in [*self.deferred.pop(key), *self.held]:
            dma.emit(self)
        self.held = []

    def mac(self, op: tile.ConvOp | tile.MatmulOp) -> None:
        """A conv or matmul step: held until its output stage (bias, requantize) joins it."""
        slots = [self.slot(v) for v in op.operands]
        acc = slots[2]
        accumulate = op.props().bool("accumulate")
        # Weights arriving in chunks: the rest of them follow the step's other loads,
        # and the step is split to start on the first chunk (`_emit_streamed`).
        streamed = slots[1].key in self.deferred
        self._flush_all_deferred()
        views = [self.whole(s) for s in slots[:2]]
        if not accumulate:
            self.renew(acc)
        acc_view = self.whole(acc)
        operands = [self.view(v, s.element) for v, s in zip([*views, acc_view], slots)]
        properties = {name: value for name, value in op.properties.items() if name != tile.SEGMENTS}
        self.pending = _Pending(
            self._mac_command(op),
            operands,
            acc,
            properties,
            op.location,
            reads=[*views, *([acc_view] if accumulate else [])],
            writes=[acc_view],
        )
        if streamed and isinstance(op, tile.ConvOp) and _streamable(op):
            chunk = self.target.mac_array.columns
            self.pending.streamed = _Streamed(chunk, views[0], slots[1], acc)

    @staticmethod
    def _mac_command(op: tile.ConvOp | tile.MatmulOp) -> type[npu.ConvOp] | type[npu.MatmulOp]:
        spec = backend.command_for(op)
        assert spec is not None and spec.engine == "mac"
        return spec.command  # type: ignore[return-value]

    def _joins_stage(self, acc: SSAValue) -> bool:
        pending = self.pending
        return (
            pending is not None and self.slot(acc).key == pending.acc.key and pending.output is None
        )

    def bias_add(self, op: tile.BiasAddOp) -> None:
        """The bias of the pending MAC command's output stage."""
        if not self._joins_stage(op.acc) or self.pending is None or self.pending.bias is not None:
            raise error("lower-to-npu: a bias add that does not finish a MAC command", op)
        bias = self.slot(op.bias)
        view = self.whole(bias)
        self.pending.bias = self.view(view, bias.element)
        self.pending.reads.append(view)
        if self.pending.streamed is not None:
            self.pending.streamed.bias = bias

    def stage_requantize(self, op: tile.RequantizeOp) -> None:
        """The requantize of the pending MAC command's output stage; emits the command."""
        pending = self.pending
        assert pending is not None
        params, output = self.slot(op.params), self.slot(op.output)
        self.renew(output)
        params_view, output_view = self.whole(params), self.whole(output)
        pending.params = self.view(params_view, params.element)
        pending.output = self.view(output_view, output.element)
        pending.reads.append(params_view)
        pending.writes.append(output_view)
        props = op.props()
        for name in MAC_STAGE_PROPERTIES:
            value = props.attr(name) if name != "rounding" else op.properties.get(name)
            if value is not None:
                pending.properties[name] = value
        if props.int("input_zero_point"):
            raise error("lower-to-npu: a MAC output stage with an input zero point", op)
        if pending.streamed is not None:
            pending.streamed.requantize, pending.streamed.params = op, params
            pending.streamed.output = output
        self.flush_pending()

    def stage_clamp(self, op: tile.ClampOp) -> None:
        """A float layer's activation in the pending MAC command's stage; emits it."""
        pending = self.pending
        assert pending is not None
        props = op.props()
        for name in ("clamp_min", "clamp_max"):
            value = props.attr(name)
            if value is not None:
                pending.properties[name] = value
        self.flush_pending()

    def flush_pending(self) -> None:
        """Emit the pending MAC command with the stage it has."""
        pending = self.pending
        if pending is None:
            return
        self.pending = None
        if pending.streamed is not None and self._emit_streamed(pending, pending.streamed):
            return
        stage = [pending.bias, pending.params, pending.output]
        operands = [*pending.operands, *[v for v in stage if v is not None]]
        properties = dict(pending.properties)
        properties[tile.SEGMENTS] = DenseArrayBase.from_list(
            i32, [1, 1, 1, *(int(v is not None) for v in stage)]
        )
        op = pending.kind.create(operands=operands, properties=properties)
        op.location = pending.location  # type: ignore[assignment]
        self.command(op, pending.reads, pending.writes)

    def _emit_streamed(self, pending: _Pending, streamed: _Streamed) -> bool:
        """Emit a conv step as one command per chunk of output channels (each on its
        slice of the weights, of the accumulator and of the bias), then its
        requantize as one vector command: an 8-bit output slice would not be aligned.
        False (nothing emitted) when a slice would not be aligned either."""
        alignment = self.target.scratch.alignment_bytes
        weight, acc, bias = streamed.weight, streamed.acc, streamed.bias
        pieces = []
        for start, count in _chunks(acc.shape[-1], streamed.chunk):
            views = [
                self.box(weight, [start, 0, 0, 0], [count, *weight.shape[1:]]),
                self.box(acc, [0, 0, 0, start], [*acc.shape[:3], count]),
            ]
            if bias is not None:
                views.append(self.box(bias, [start], [count]))
            if any(view.address % alignment for view in views):
                return False
            pieces.append(views)
        properties = {k: v for k, v in pending.properties.items() if k not in MAC_STAGE_PROPERTIES}
        properties[tile.SEGMENTS] = DenseArrayBase.from_list(
            i32, [1, 1, 1, int(bias is not None), 0, 0]
        )
        source = pending.operands[0]
        for views in pieces:
            slots = [weight, acc, *([bias] if bias is not None else [])]
            operands = [source, *(self.view(v, slot.element) for v, slot in zip(views, slots))]
            conv = npu.ConvOp.create(operands=operands, properties=dict(properties))
            conv.location = pending.location  # type: ignore[assignment]
            reads = [streamed.source, views[0], *views[2:]]
            self.command(conv, reads, [views[1]])
        requantize = streamed.requantize
        if requantize is not None:
            assert streamed.params is not None and streamed.output is not None
            assert pending.params is not None and pending.output is not None
            acc_view = self.whole(acc)
            params_view, output_view = self.whole(streamed.params), self.whole(streamed.output)
            vector = npu.RequantizeOp.create(
                operands=[pending.operands[2], pending.params, pending.output],
                properties=dict(requantize.properties),
            )
            vector.location = requantize.location
            self.command(vector, [acc_view, params_view], [output_view])
        return True

    def vector(self, op: Operation) -> None:
        """A vector-unit op: its command on the same fields, at the views' addresses."""
        spec = backend.command_for(op)
        if spec is None:
            raise error(f"lower-to-npu: {op.name} has no command", op)
        kind = spec.command
        buffers = [v for v in op.operands if isinstance(v.type, MemRefType)]
        output = buffers[-1]
        inputs = buffers[:-1]
        input_views = [self.whole(self.slot(v)) for v in inputs]
        in_place = output in inputs
        if not in_place:
            self.renew(self.slot(output))
        output_view = self.whole(self.slot(output))
        mapping: dict[SSAValue, SSAValue] = {}
        for value, v in zip(inputs, input_views):
            mapping[value] = self.view(v, self.slot(value).element)
        mapping[output] = self.view(output_view, self.slot(output).element)
        operands = [mapping[v] if v in mapping else self.index(self.int_of(v)) for v in op.operands]
        command = kind.create(operands=operands, properties=dict(op.properties))
        command.location = op.location
        self.command(command, input_views, [output_view])

    # ---- host calls ---------------------------------------------------------------------

    def flush_host(self) -> None:
        """The pending tensor ops as one host call."""
        ops, self.host_ops = self.host_ops, []
        if not ops:
            return
        inputs, outputs = boundary(ops, _is_constant)
        # The callee: the ops move into a function of tensors.
        name = f"host_{self.stats.host_calls}"
        self.stats.host_calls += 1
        callee = outline(ops, name, inputs, outputs, _is_constant)
        callee.attributes[DEVICE_ATTR] = StringAttr(CPU)
        self.module.body.block.add_op(callee)
        # Arguments in system memory, results to their buffers.
        input_views = []
        for value in inputs:
            slot = self.tensor_slots.get(value)
            if slot is None:  # a function argument the host reads first
                slot = self._spilled(value)
                self.place(value, slot)
            input_views.append(self.whole(slot))
        output_views = []
        for value in outputs:
            destination = next(
                (u.operation for u in value.uses if isinstance(u.operation, tile.ToBufferOp)),
                None,
            )
            if destination is not None:
                slot = self._to_buffer_slot(destination)
                self.env[destination.results[0]] = slot
            else:
                slot = self._spilled(value)
            self.tensor_slots[value] = slot
            output_views.append(self.whole(slot))
        operands = [
            self.view(v, _memref(value.type, v.space).element_type)
            for v, value in zip([*input_views, *output_views], [*inputs, *outputs])
        ]
        call = npu.HostCallOp.create(
            operands=operands,
            properties={
                "callee": SymbolRefAttr(name),
                tile.SEGMENTS: DenseArrayBase.from_list(i32, [len(inputs), len(outputs)]),
            },
        )
        # The call is named after the first op that computes (not a copy or a view).
        computing = [op for op in ops if not _moves_nothing(op)]
        call.location = (computing or ops)[0].location
        self.command(call, input_views, output_views)

    def returned(self, op: ReturnOp) -> None:
        """The function's results: read from their memories after the stream."""
        for value in op.operands:
            slot = self.tensor_slots.get(value)
            if slot is None:
                slot = self._spilled(value)
                self.place(value, slot)
            self.reads.append((value, slot))

    # ---- the new function ---------------------------------------------------------------

    def _finish(self) -> None:
        self.stream.append(npu.EndOp.create())
        commands: list[Operation] = []
        for position, op in enumerate(self.stream):
            commands.append(op)
            commands.extend(self.after.get(position, []))
        results = []
        epilogue: list[Operation] = []
        for value, slot in self.reads:
            view = self.view(self.whole(slot), slot.element)
            read = npu.ReadOp.create(operands=[view], result_types=[value.type])
            epilogue.append(read)
            results.append(read.results[0])
        old_ops = list(self.block.ops)
        for op in self.prologue:
            if op.parent is not None:
                op.detach()
        self.block.add_ops([*self.prologue, *commands, *epilogue, ReturnOp(*results)])
        for op in reversed(old_ops):
            if op.parent is self.block:
                op.detach()
                op.erase(safe_erase=False)
        attributes = self.function.attributes
        for memory in sorted(self.cursor):
            size = _align(self.cursor[memory], self._alignment(memory))
            if not size and memory != self.weights_memory:
                continue  # a memory the placement allows but the program does not use
            capacity = self.target.memories[memory].size_bytes
            if size > capacity:
                raise error(
                    f"the program needs {size} bytes of {memory}; {self.target.name}'s "
                    f"{memory} holds {capacity}",
                    self.function,
                    hint="a target with more memory, or a smaller model",
                )
            self.stats.memory_bytes[memory] = size
            attributes[npu.memory_bytes_attr(memory)] = IntegerAttr(size, i64)
        attributes[npu.WEIGHTS_MEMORY_ATTR] = StringAttr(self.weights_memory)
        attributes[npu.WEIGHTS_BYTES_ATTR] = IntegerAttr(self.weights_bytes, i64)
        # The SRAM the program uses (up to its highest byte): a target with at least
        # that much runs it.
        alignment = self.target.scratch.alignment_bytes
        attributes[npu.SRAM_BYTES_ATTR] = IntegerAttr(_align(self.sram_ends[SRAM], alignment), i64)
        for core in range(1, self.cores):
            space = npu.core_sram(core)
            if self.sram_ends[space]:
                size = _align(self.sram_ends[space], alignment)
                attributes[npu.memory_bytes_attr(space)] = IntegerAttr(size, i64)
        if self.cores > 1:
            attributes[npu.CORES_ATTR] = IntegerAttr(self.cores, i64)
        attributes[npu.SRAM_ALIGNMENT_ATTR] = IntegerAttr(self.target.scratch.alignment_bytes, i64)
        attributes["npu.target"] = StringAttr(self.target.source)


def _is_constant(op: Operation) -> bool:
    return isinstance(op, ConstantOp | QConstantOp)


def _sync_properties(engine: int, token: int) -> dict[str, Attribute]:
    """The properties of a signal or wait on engine queue `engine` about `token`."""
    core, queue = divmod(engine, len(npu.QUEUES))
    properties: dict[str, Attribute] = {
        "queue": QUEUE_NAMES[queue],
        "token": IntegerAttr(token, i64),
    }
    if core:
        properties["core"] = IntegerAttr(core, i64)
    return properties


def _covers(slot: Slot, sizes: Sequence[int]) -> bool:
    return tuple(sizes) == slot.shape


def _space(value: SSAValue) -> str:
    value_type = value.type
    assert isinstance(value_type, MemRefType)
    return tile.space_of(value_type)


def _bytes(value_type: Attribute) -> int:
    """The bytes of a buffer, or of a tensor as stored (a quantized type's storage)."""
    assert isinstance(value_type, MemRefType | TensorType)
    element = value_type.element_type
    quantized = quantized_element(value_type) if isinstance(value_type, TensorType) else None
    if quantized is not None:
        element = quantized.storage_type
    return math.prod(value_type.get_shape()) * weights.dtype_of(element).itemsize


def _memref(value_type: Attribute, memory: str) -> MemRefType:
    """The buffer type holding a tensor (its storage element) in `memory`: a host
    call's arguments and results may be of any type (i64 indices, f64 values)."""
    if isinstance(value_type, MemRefType):
        return value_type
    from irc.tiling.lowering import memref

    assert isinstance(value_type, TensorType)
    quantized = quantized_element(value_type)
    element = quantized.storage_type if quantized is not None else value_type.element_type
    return memref(value_type.get_shape(), element, StringAttr(memory))


def _slot(space: str, addresses: tuple[int, ...], buffer_type: MemRefType) -> Slot:
    return Slot(
        space,
        addresses,
        tuple(buffer_type.get_shape()),
        weights.dtype_of(buffer_type.element_type),
        buffer_type.element_type,
    )


def _chunks(total: int, size: int) -> list[tuple[int, int]]:
    """(start, count) of consecutive pieces of `size` covering `total`."""
    return [(start, min(size, total - start)) for start in range(0, total, size)]


def _chunk_inputs(conv: tile.ConvOp) -> list[SSAValue]:
    """What the commands of a streamed conv step read besides its weights: the input
    box and the bias its output stage adds."""
    biases = [
        use.operation.bias for use in conv.acc.uses if isinstance(use.operation, tile.BiasAddOp)
    ]
    return [conv.input, *biases]


def _streamable(conv: tile.ConvOp) -> bool:
    """Whether a conv step can be split by output channels (`StreamLowering.mac`):
    an integer conv of one group that starts its accumulator."""
    props = conv.props()
    return (
        (props.int("group") or 1) == 1
        and not props.bool("accumulate")
        and isinstance(tile.element_of(conv.acc), IntegerType)
    )


def _moves_nothing(op: Operation) -> bool:
    """A view (a reshape, a `part.transfer` between host and NPU memory: the backend
    table's views) computes nothing, so a host call is not named after it."""
    entry = backend.entry_of(op)
    return entry is not None and entry.view
