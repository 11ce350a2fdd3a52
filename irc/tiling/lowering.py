"""Lowering `qnn` layers to the `tile` level: DDR buffers, loops over tiles, SRAM tiles.

`lower_function` rewrites one function. Every tensor that an NPU layer reads or
writes becomes a DDR buffer placed as `irc.tiling.memory` plans it (the same
bufferization as `plan-ddr`: weights in a read-only region, zero-copy views and
concats, in-place elementwise ops, fused accumulators in SRAM), and every NPU layer
becomes a loop nest over its tiles as `plan-tiles` chose them (the op's `irc.tiling`,
or a plan made here when the op has none):

- the dimensions are the output's rows, columns and channels (a conv or pool), or
  the output's leading axes and its last axis (a gemm, an elementwise op), and the
  K steps of a split reduction, innermost; their order is the plan's (weights
  stationary: channels outermost; input stationary: channels inside the spatial
  loops);
- a dimension of `n` tiles of `t` is an `scf.for` over the `n // t` whole tiles and,
  when `t` does not divide `n`, the remainder tile after it, peeled, so that every
  copy and compute op has static sizes;
- each load (`tile.copy` DDR -> SRAM) is placed in the innermost loop whose index it
  depends on, so a stationary operand is loaded once per tile of the loops outside
  it; a conv's input box carries its halo, and its padding is written by the copy
  with the input's zero point (the storage minimum for a max pool);
- a split K accumulates into an int32 tile (float32 for a float layer); after the
  last K step the bias is added, the tile is requantized with its channels'
  (multiplier, shift) pairs (or clamped by a float layer's fused activation) and
  stored into the output's buffer, or into its slice of a concat's buffer.

Which ops are NPU layers, and how each is tiled, is the backend table's to say
(irc/backend): `lower_function` takes its `LoweringRules`. Ops on the host (softmax,
LRN, casts, and whatever the partition or the table put there; see docs/tiling.md)
stay tensor ops: their operands are read back with `tile.to_tensor`, and their
results become buffers with `tile.to_buffer` where an NPU layer reads them. Such an
op is what the command stream will run as a host call.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

import numpy as np
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    DictionaryAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    StringAttr,
    TensorType,
    UnknownLoc,
    f32,
    i32,
    i64,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.traits import ConstantLike

from irc.diagnostics import error
from irc.dialects import nn, tile
from irc.dialects.quant import quantized_element
from irc.targets.model import SCRATCH
from irc.tiling import memory
from irc.tiling.cascade import CASCADE_ATTR, Rows, Run, Schedule, core_spans, runs, schedule
from irc.tiling.planner import (
    FORCE_ATTR,
    LOCK_STEP,
    PLAN_ATTR,
    Layer,
    Plan,
    Tile,
    TilingError,
    plan_layer,
    plan_tile,
    stored_channels,
)

if TYPE_CHECKING:
    from irc.targets import Target


Lowerer = Callable[["FunctionLowering", Operation], None]
"""Emits an op's tiled loop nest into a function lowering."""


class LoweringRules(memory.OpKinds, Protocol):
    """What the lowering needs to know of an op (irc.backend.TileRules answers from the
    backend table): the bufferization's `OpKinds`, and how to tile an NPU layer."""

    def lowerer(self, op: Operation) -> Lowerer | None:
        """The lowering of an op that runs on the NPU, else None (a host op, a view, a
        constant: it stays on tensors)."""
        ...


SRAM = StringAttr(SCRATCH)
"""The memory space of tiles: the NPU's local SRAM."""


def space_attr(buffer: SSAValue) -> StringAttr:
    """The memory space of a buffer (the name of the memory it is in)."""
    buffer_type = buffer.type
    assert isinstance(buffer_type, MemRefType)
    space = buffer_type.memory_space
    assert isinstance(space, StringAttr)
    return space


# --------------------------------------------------------------------------------------
# Types


def storage_element(value_type: Attribute) -> Attribute | None:
    """The element type of the buffer holding a tensor of `value_type` (its storage
    integers if quantized), or None if no tile buffer can hold it."""
    if not isinstance(value_type, TensorType):
        return None
    quantized = quantized_element(value_type)
    element = quantized.storage_type if quantized is not None else value_type.element_type
    return element if element in tile.ELEMENT_TYPES else None


def tensor_shape(value: SSAValue) -> tuple[int, ...]:
    value_type = value.type
    assert isinstance(value_type, TensorType)
    return tuple(value_type.get_shape())


def zero_point_of(value: SSAValue) -> int:
    """The zero point of a per-tensor quantized value (0 for a plain integer)."""
    element = quantized_element(value.type)
    return int(element.zero_point_values[0]) if element is not None else 0


def is_symmetric(value: SSAValue) -> bool:
    element = quantized_element(value.type)
    return element is not None and not any(element.zero_point_values)


def memref(shape: Sequence[int], element: Attribute, space: StringAttr) -> MemRefType:
    """A static buffer type of `shape` in `space`."""
    return MemRefType(element, list(shape), memory_space=space)


# --------------------------------------------------------------------------------------
# Emitting loop nests


@dataclass(frozen=True)
class Bound:
    """One dimension of the current tile: origin = index * step + start, `size` wide."""

    index: SSAValue | None
    """The loop's induction variable (tile number), or None outside a loop."""
    start: int
    step: int
    size: int


@dataclass(frozen=True)
class Dim:
    """A dimension to tile: `extent` elements from `start` on, in tiles of `tile`."""

    name: str
    extent: int
    tile: int
    start: int = 0
    """The first element (a core's share of a dimension split across cores)."""


class Emitter:
    """Builds ops into nested blocks: a stack of op lists, index arithmetic, loops."""

    def __init__(self) -> None:
        self.stack: list[list[Operation]] = [[]]
        self.constants: list[dict[int, SSAValue]] = [{}]
        self.sums: list[dict[tuple[object, ...], SSAValue]] = [{}]
        self.known: dict[SSAValue, int] = {}
        """The values of the index constants made so far."""

    def add(self, op: Operation) -> Operation:
        self.stack[-1].append(op)
        return op

    def const(self, value: int) -> SSAValue:
        """An `index` constant (one per value per block, shared by inner blocks)."""
        for scope in reversed(self.constants):
            if value in scope:
                return scope[value]
        result = self.add(arith.ConstantOp.from_int_and_width(value, IndexType())).results[0]
        self.constants[-1][value] = result
        self.known[result] = value
        return result

    def offset(self, value: SSAValue, constant: int) -> SSAValue:
        """value + constant (folded when value is a constant)."""
        if constant == 0:
            return value
        if value in self.known:
            return self.const(self.known[value] + constant)
        return self.add(arith.AddiOp(value, self.const(constant))).results[0]

    def affine(self, terms: Sequence[tuple[Bound, int]], constant: int = 0) -> SSAValue:
        """sum(coefficient * origin(bound)) + constant, as an index value."""
        total = constant + sum(coefficient * bound.start for bound, coefficient in terms)
        key = (
            tuple((id(b.index), c * b.step) for b, c in terms if b.index is not None and c),
            total,
        )
        for scope in reversed(self.sums):
            if key in scope:
                return scope[key]
        value = self._sum(terms, total)
        self.sums[-1][key] = value
        return value

    def _sum(self, terms: Sequence[tuple[Bound, int]], total: int) -> SSAValue:
        value: SSAValue | None = None
        for bound, coefficient in terms:
            if bound.index is None or coefficient == 0:
                continue
            scale = coefficient * bound.step
            term = bound.index
            if scale != 1:
                term = self.add(arith.MuliOp(term, self.const(scale))).results[0]
            value = term if value is None else self.add(arith.AddiOp(value, term)).results[0]
        if value is None:
            return self.const(total)
        if total:
            value = self.add(arith.AddiOp(value, self.const(total))).results[0]
        return value

    def floor_div(self, bound: Bound, divisor: int) -> SSAValue:
        """origin(bound) // divisor."""
        if bound.index is None:
            return self.const(bound.start // divisor)
        if bound.step % divisor == 0 and bound.start % divisor == 0:
            scaled = Bound(bound.index, bound.start // divisor, bound.step // divisor, bound.size)
            return self.affine([(scaled, 1)])
        origin = self.affine([(bound, 1)])
        return self.add(arith.FloorDivSIOp(origin, self.const(divisor))).results[0]

    def scoped(self, body: Callable[[], None]) -> list[Operation]:
        """The ops `body` adds, in a block of their own (its constants and sums kept
        inside it)."""
        self.stack.append([])
        self.constants.append({})
        self.sums.append({})
        body()
        self.constants.pop()
        self.sums.pop()
        return self.stack.pop()

    def loop(self, count: int, body: Callable[[SSAValue], None]) -> None:
        """`scf.for %i = 0 to count step 1 { body(%i) }`."""
        lower, upper, step = self.const(0), self.const(count), self.const(1)
        block = Block(arg_types=[IndexType()])
        ops = self.scoped(lambda: body(block.args[0]))
        block.add_ops([*ops, scf.YieldOp()])
        self.add(scf.ForOp(lower, upper, step, [], block))

    def nest(
        self,
        dims: Sequence[Dim],
        enter: Callable[[int, dict[str, Bound]], None],
        leave: Callable[[int, dict[str, Bound]], None],
    ) -> int:
        """Loops over `dims` (outermost first), remainders peeled; `enter(level, bounds)`
        runs when dims[:level + 1] are bound, before the inner loops, `leave` after
        them. Returns the number of loop bodies emitted (peeled copies included)."""
        bodies = 0

        def visit(level: int, bounds: dict[str, Bound]) -> None:
            nonlocal bodies
            if level == len(dims):
                bodies += 1
                return
            dim = dims[level]
            full, rest = divmod(dim.extent, dim.tile)

            def body(bound: Bound) -> None:
                inner = {**bounds, dim.name: bound}
                enter(level, inner)
                visit(level + 1, inner)
                leave(level, inner)

            if full == 1:
                body(Bound(None, dim.start, dim.tile, dim.tile))
            elif full > 1:
                self.loop(full, lambda index: body(Bound(index, dim.start, dim.tile, dim.tile)))
            if rest:
                body(Bound(None, dim.start + full * dim.tile, dim.tile, rest))

        visit(0, {})
        return bodies


def row_boxes(lead: Sequence[int], rows: int) -> list[int]:
    """Box sizes over leading axes that hold at most `rows` of their rows: whole inner
    axes while they fit, then part of one axis, then 1 (a plan's `rows` of an
    elementwise op or a gemm, mapped onto the tensor's own axes)."""
    boxes = [1] * len(lead)
    remaining = max(1, rows)
    for axis in reversed(range(len(lead))):
        boxes[axis] = min(lead[axis], remaining)
        if boxes[axis] < lead[axis]:
            break
        remaining //= lead[axis]
        if remaining < 1:
            break
    return boxes


# --------------------------------------------------------------------------------------
# Where values live


@dataclass(frozen=True)
class Storage:
    """A value's elements in DDR: `buffer` from `base` on, the value's shape."""

    buffer: SSAValue
    base: tuple[int, ...]
    shape: tuple[int, ...]
    rolling: bool = False
    """The buffer is a cascade's rolling buffer in SRAM: a window of the value's rows,
    addressed by the value's own offsets (`tile.copy`'s `source_rolling`)."""

    @property
    def whole(self) -> bool:
        """The value fills its buffer (a rolling buffer holds nothing else)."""
        buffer_type = self.buffer.type
        assert isinstance(buffer_type, MemRefType)
        return self.rolling or (not any(self.base) and tuple(buffer_type.get_shape()) == self.shape)

    @property
    def spatially_whole(self) -> bool:
        """The value fills its buffer but for padding channels (the last axis): a box
        reaching past its rows or columns reads padding, never a neighbour's data."""
        buffer_type = self.buffer.type
        assert isinstance(buffer_type, MemRefType)
        shape = tuple(buffer_type.get_shape())
        return self.rolling or (
            not any(self.base) and shape[:-1] == self.shape[:-1] and shape[-1] >= self.shape[-1]
        )


@dataclass
class Statistics:
    """What the lowering did to one function."""

    layers: Counter[str] = field(default_factory=Counter)
    """Tiled layers by op name."""
    kept: Counter[str] = field(default_factory=Counter)
    """Ops left on tensors (for the host) by op name."""
    loops: int = 0
    """Loop bodies emitted (peeled remainders included)."""
    cascades: int = 0
    """Cascades emitted as stripe loops."""


# --------------------------------------------------------------------------------------
# The function lowering


class FunctionLowering:
    """Rewrites one function: see the module docstring."""

    def __init__(self, function: FuncOp, target: Target, rules: LoweringRules) -> None:
        self.function = function
        self.target = target
        self.rules = rules
        block = function.body.blocks.first
        assert block is not None
        self.block = block
        try:
            plan, self.index_of = memory.plan_function(function, memory.Homes.of(target), rules)
        except memory.PlacementError as problem:
            raise error(
                str(problem),
                function,
                hint=f"a target with more memory for activations than {target.name}'s "
                f"({', '.join(target.placement.activations)})",
            ) from None
        self.values = plan.values
        self.weights_end = plan.weights_bytes
        self.staged = plan.staged
        """The layers whose weights are staged, and their slots' values."""
        self.previous_start: Operation | None = None
        """The first op emitted for the planned layer (or cascade) lowered last: where
        the next layer's staged weights are copied, so that the copy runs beside it."""
        self.slice_base = self._slice_bases()
        self.value_at = {index: value for value, index in self.index_of.items()}
        self.concat_roots = {record.parent for record in self.values if record.role == "slice"}
        self.storages: dict[SSAValue, Storage] = {}
        self.roots: dict[int, SSAValue] = {}
        self.tensors: dict[SSAValue, SSAValue] = {}
        self.copies: dict[SSAValue, Storage] = {}
        """Values inside another buffer, copied into one of their own (`whole`)."""
        self.lowered: set[Operation] = set()
        self.pending: set[SSAValue] = set()
        self.position: dict[Operation, int] = {}
        self.current = 0
        self.stats = Statistics()
        self.emitter = Emitter()
        self.rolling: dict[SSAValue, tuple[int, ...]] = {}
        """The rolling buffers of cascades: the shape of the value each holds rows of."""
        self.cascade: CascadeEmission | None = None
        """The cascade being lowered: its members' nests are emitted stripe by stripe."""

    # ---- decisions ----------------------------------------------------------------------

    def _slice_bases(self) -> dict[int, tuple[int, int]]:
        """For each concat slice: (axis, first index along it) in its concat."""
        bases: dict[int, tuple[int, int]] = {}
        for op in self.block.ops:
            if not self.rules.is_concat(op):
                continue
            rank = len(tensor_shape(op.results[0]))
            axis = (op.props().int("axis") or 0) % rank
            start = 0
            for operand in op.operands:
                index = self.index_of.get(operand)
                if index is not None and self.values[index].role == "slice":
                    bases[index] = (axis, start)
                start += tensor_shape(operand)[axis]
        return bases

    # ---- storage ------------------------------------------------------------------------

    def _insert(self, op: Operation) -> Operation:
        """Add `op` at the current point (the emitter's outermost list)."""
        return self.emitter.add(op)

    def storage(self, value: SSAValue) -> Storage:
        """Where `value` lives in DDR, its buffer created (and, for a value an op on
        tensors computed, its data written) on first use."""
        if value in self.storages:
            return self.storages[value]
        index = self.index_of.get(value)
        assert index is not None, f"{value.type} has no buffer"
        element = storage_element(value.type)
        assert element is not None, f"no tile buffer holds {value.type}"
        record = self.values[index]
        shape = tensor_shape(value)
        assert record.role != "fused", "an accumulator held in SRAM has no DDR buffer"
        if record.role == "view":
            assert record.parent is not None
            parent = self.whole(self.value_at[record.parent])
            view = self._insert(
                tile.ViewOp.create(
                    operands=[parent.buffer],
                    result_types=[memref(shape, element, space_attr(parent.buffer))],
                )
            )
            storage = Storage(view.results[0], (0,) * len(shape), shape)
        elif record.role in ("slice", "in-place"):
            assert record.parent is not None
            parent = self.storage(self.value_at[record.parent])
            base = list(parent.base)
            if record.role == "slice":
                axis, start = self.slice_base[index]
                base[axis] += start
            storage = Storage(parent.buffer, tuple(base), shape)
        else:
            storage = Storage(self._root(index, value, element), (0,) * len(shape), shape)
        self.storages[value] = storage
        if record.role in ("slice", "in-place") and not self._computed_here(value):
            # A host op's result placed in another value's buffer: copy it there once
            # it exists (now, or right after its op).
            owner = value.owner
            if isinstance(owner, Operation) and self.position.get(owner, -1) >= self.current:
                self.pending.add(value)
            else:
                self._write_tensor(value, storage)
        return storage

    def staged_weights(self, op: Operation, value: SSAValue) -> Storage | None:
        """Layer `op`'s weights `value` (a constant O x KH x KW x I tensor) copied whole
        into their slot in the fastest memory of activations, when its plan stages them
        and the slot has a buffer (else None: the layer reads them where they are): the
        copy goes before the previous planned layer's ops (it runs while that layer
        does), and the layer's tiles load from the slot."""
        index = self.staged.get(op)
        record = self.values[self.index_of[value]]
        if index is None or self.values[index].offset < 0 or record.role != "weight":
            return None
        shape = tensor_shape(value)
        if len(shape) != 4:
            return None  # a 1-D conv's weights, seen as 2-D: read where they are
        slot = self.values[index]
        element = storage_element(value.type)
        assert element is not None
        saved, self.emitter = self.emitter, Emitter()
        try:
            source = self._insert(
                tile.ToBufferOp.create(
                    operands=[value],
                    properties={"offset": IntegerAttr(record.offset, i64)},
                    result_types=[memref(shape, element, StringAttr(record.memory))],
                )
            ).results[0]
            dest = self._insert(
                tile.AllocOp.create(
                    properties={"offset": IntegerAttr(slot.offset, i64)},
                    result_types=[memref(shape, element, StringAttr(slot.memory))],
                )
            ).results[0]
            self.copy_box(source, (0,) * len(shape), dest, (0,) * len(shape), shape)
            emitted = self.emitter.stack[0]
        finally:
            self.emitter = saved
        for copied in emitted:
            for nested in copied.walk():
                nested.location = op.location
        anchor = self.previous_start if self.previous_start is not None else op
        owner = value.owner
        if isinstance(owner, Operation) and not owner.has_trait(ConstantLike):
            anchor = op
        if isinstance(owner, Operation) and not self._before(owner, anchor):
            # A constant defined after the layer before: moved up to the copy.
            owner.detach()
            self.block.insert_op_before(owner, anchor)
        self.block.insert_ops_before(emitted, anchor)
        return Storage(dest, (0,) * len(shape), shape)

    def _before(self, op: Operation, anchor: Operation) -> bool:
        """Whether `op` comes before `anchor` in the function's block."""
        current = anchor.prev_op
        while current is not None:
            if current is op:
                return True
            current = current.prev_op
        return False

    def whole(self, value: SSAValue, spatially: bool = False) -> Storage:
        """A value's storage as a buffer of its own: where it lives if it fills its
        buffer (but for padding channels, when `spatially`), else a copy made once
        (a value inside another buffer, as a slice of a concat's: a box that reaches
        past it, into padding, must not read its neighbours)."""
        storage = self.storage(value)
        if storage.whole or (spatially and storage.spatially_whole):
            return storage
        if value not in self.copies:
            element = storage_element(value.type)
            assert element is not None
            space = space_attr(storage.buffer)
            buffer = self._insert(
                tile.AllocOp.create(result_types=[memref(storage.shape, element, space)])
            ).results[0]
            self.copy_box(
                storage.buffer, storage.base, buffer, (0,) * len(storage.shape), storage.shape
            )
            self.copies[value] = Storage(buffer, (0,) * len(storage.shape), storage.shape)
        return self.copies[value]

    def reshaped(self, storage: Storage, shape: Sequence[int]) -> Storage:
        """A buffer filled by its value, seen with another shape of as many elements
        (a `tile.view`: writing through it writes the buffer)."""
        assert storage.whole, "only a value that fills its buffer can be reshaped"
        buffer_type = storage.buffer.type
        assert isinstance(buffer_type, MemRefType)
        view = self._insert(
            tile.ViewOp.create(
                operands=[storage.buffer],
                result_types=[
                    memref(tuple(shape), buffer_type.element_type, space_attr(storage.buffer))
                ],
            )
        )
        return Storage(view.results[0], (0,) * len(shape), tuple(shape))

    def scratch(self, shape: Sequence[int], element: Attribute) -> Storage:
        """A buffer of the lowering's own (a layer's result before it is copied into
        the box of another buffer where its value lives), in the last activations'
        memory (the largest: the stream places it after that memory's arena)."""
        space = StringAttr(self.target.placement.activations[-1])
        buffer = self._insert(
            tile.AllocOp.create(result_types=[memref(tuple(shape), element, space)])
        ).results[0]
        return Storage(buffer, (0,) * len(shape), tuple(shape))

    def _computed_here(self, value: SSAValue) -> bool:
        """The value is written by a layer this lowering tiles."""
        owner = value.owner
        return isinstance(owner, Operation) and owner in self.lowered

    def _root(self, index: int, value: SSAValue, element: Attribute) -> SSAValue:
        """The buffer of a value that owns one: allocated for a tiled layer's result,
        else a copy of the tensor (an argument, a constant, a host op's result)."""
        if index in self.roots:
            return self.roots[index]
        record = self.values[index]
        shape = tensor_shape(value)
        offset = IntegerAttr(max(record.offset, 0), i64)
        stored = stored_channels(value)
        if stored and self._computed_here(value):  # channel alignment: padded channels
            shape = (*shape[:-1], stored)
        buffer_type = memref(shape, element, StringAttr(record.memory))
        op: Operation
        if self._computed_here(value) or index in self.concat_roots:
            op = tile.AllocOp.create(properties={"offset": offset}, result_types=[buffer_type])
        else:
            op = tile.ToBufferOp.create(
                operands=[value], properties={"offset": offset}, result_types=[buffer_type]
            )
        self.roots[index] = self._insert(op).results[0]
        return self.roots[index]

    def _write_tensor(self, value: SSAValue, storage: Storage) -> None:
        """Copy a host-computed tensor into its place in another value's buffer."""
        element = storage_element(value.type)
        assert element is not None
        staged = self._insert(
            tile.ToBufferOp.create(
                operands=[value],
                result_types=[memref(storage.shape, element, space_attr(storage.buffer))],
            )
        ).results[0]
        self.copy_box(
            staged, (0,) * len(storage.shape), storage.buffer, storage.base, storage.shape
        )

    def copy_box(
        self,
        source: SSAValue,
        source_offsets: Sequence[int | SSAValue],
        dest: SSAValue,
        dest_offsets: Sequence[int | SSAValue],
        sizes: Sequence[int],
        pad: int | float | None = None,
        upsample: Sequence[int] = (),
        broadcast: int = 0,
    ) -> None:
        """`tile.copy` of a box of `sizes` (offsets: constants or index values); the part
        of the source box outside the source is written as `pad`; `upsample` reads the
        source with pad elements inserted; `broadcast` writes an SRAM box into the SRAM
        of that many cores (see `tile.copy`)."""
        em = self.emitter
        properties: dict[str, Attribute] = {
            "sizes": DenseArrayBase.from_list(i64, list(sizes)),
            "operandSegmentSizes": DenseArrayBase.from_list(
                i32, [1, 1, len(source_offsets), len(dest_offsets)]
            ),
        }
        if any(factor != 1 for factor in upsample):
            properties["upsample"] = DenseArrayBase.from_list(i64, list(upsample))
        for side, buffer in (("source", source), ("dest", dest)):
            if buffer in self.rolling:
                properties[f"{side}_rolling"] = DenseArrayBase.from_list(
                    i64, list(self.rolling[buffer])
                )
        if isinstance(pad, float) and pad:
            properties["pad"] = FloatAttr(pad, f32)
        elif pad:
            properties["pad"] = IntegerAttr(int(pad), i64)
        if broadcast and tile.space_of(dest.type) == SCRATCH and dest not in self.rolling:  # type: ignore[arg-type]
            properties["broadcast"] = IntegerAttr(broadcast, i64)
        offsets = [em.const(o) if isinstance(o, int) else o for o in source_offsets]
        offsets += [em.const(o) if isinstance(o, int) else o for o in dest_offsets]
        em.add(tile.CopyOp.create(operands=[source, dest, *offsets], properties=properties))

    def tensor(self, value: SSAValue) -> SSAValue:
        """A tensor of a value a tiled layer wrote (for an op on tensors)."""
        if value in self.tensors:
            return self.tensors[value]
        buffer = self.whole(value).buffer
        result = self._insert(
            tile.ToTensorOp.create(operands=[buffer], result_types=[value.type])
        ).results[0]
        self.tensors[value] = result
        return result

    def constant_buffer(
        self, array: np.ndarray, element: Attribute, replaces: SSAValue | None = None
    ) -> SSAValue:
        """A DDR buffer of constant data the lowering makes (requantization parameters,
        tables, a transposed conv's reordered weights), placed after the function's
        weights; or in the place of the constant `replaces` it is derived from, when
        nothing else reads that one and the sizes agree."""
        constant = self._insert(nn.ConstantOp.from_array(array))
        size = array.size * array.dtype.itemsize
        index = self.index_of.get(replaces) if replaces is not None else None
        if (
            replaces is not None
            and index is not None
            and replaces.has_one_use()
            and replaces not in self.storages
            and self.values[index].role == "weight"
            and self.values[index].size == size
        ):
            offset = self.values[index].offset
        else:
            alignment = self.target.weights_memory.alignment_bytes
            offset = self.weights_end
            self.weights_end += -(-size // alignment) * alignment
        return self._insert(
            tile.ToBufferOp.create(
                operands=[constant.results[0]],
                properties={"offset": IntegerAttr(offset, i64)},
                result_types=[
                    memref(array.shape, element, StringAttr(self.target.placement.weights))
                ],
            )
        ).results[0]

    # ---- the walk -----------------------------------------------------------------------

    def run(self) -> Statistics:
        """Lower the function's layers in program order; see the module docstring."""
        ops = list(self.block.ops)
        self.position = {op: index for index, op in enumerate(ops)}
        cascades = _cascade_groups(ops)
        stages = {self.rules.requantized_with(member) for member in cascades}
        for op in ops:
            self.current = self.position[op]
            if op in self.lowered or op in stages:
                continue  # a fused requantize, tiled with its layer
            group = cascades.get(op)
            if group is not None:
                if op is group[-1]:
                    self._lower_cascade(group)
                continue  # a cascade runs where its last member is
            lowerer = None if isinstance(op, ReturnOp) else self.rules.lowerer(op)
            if lowerer is None:
                self._keep(op)
                continue
            self.emitter = Emitter()
            self.lowered.add(op)
            lowerer(self, op)
            self._insert_layer(op)
        self._erase_dead()
        return self.stats

    def _insert_layer(self, op: Operation) -> None:
        """Put the emitted ops before `op`; they keep its location (what the command
        stream and the simulator's per-layer figures name a layer by)."""
        for emitted in self.emitter.stack[0]:
            for nested in emitted.walk():
                nested.location = op.location
        self.block.insert_ops_before(self.emitter.stack[0], op)
        if PLAN_ATTR in op.attributes and self.emitter.stack[0]:
            self.previous_start = self.emitter.stack[0][0]
        self.stats.layers[op.name] += 1

    def _lower_cascade(self, members: Sequence[Operation]) -> None:
        """A cascade's members as one stripe loop (`CascadeEmission`), where its last
        member is: each intermediate tensor in its rolling SRAM buffer, each member's
        nest emitted for the rows it computes in each stripe."""
        self.emitter = Emitter()
        emission = CascadeEmission(self, members)
        self.cascade = emission
        try:
            for op in members:
                lowerer = self.rules.lowerer(op)
                assert lowerer is not None, f"{op.name} joined a cascade without a lowering"
                self.lowered.add(op)
                emission.current = op
                lowerer(self, op)
        finally:
            self.cascade = None
        emission.emit()
        self.block.insert_ops_before(self.emitter.stack[0], members[-1])
        if self.emitter.stack[0]:
            self.previous_start = self.emitter.stack[0][0]
        for op in members:
            self.stats.layers[op.name] += 1
        self.stats.cascades += 1

    def _keep(self, op: Operation) -> None:
        """An op that stays on tensors: its operands that tiled layers wrote are read
        back as tensors, and its results that the memory plan put in another value's
        buffer are written there once computed."""
        self.emitter = Emitter()
        for index, operand in enumerate(op.operands):
            if self._computed_here(operand):
                op.operands[index] = self.tensor(operand)
        self.block.insert_ops_before(self.emitter.stack[0], op)
        self.emitter = Emitter()
        for result in op.results:
            if result in self.pending:
                self._write_tensor(result, self.storages[result])
        if self.emitter.stack[0]:
            self.block.insert_ops_after(self.emitter.stack[0], op)
        if not (op.has_trait(ConstantLike) or isinstance(op, ReturnOp) or self.rules.is_view(op)):
            self.stats.kept[op.name] += 1

    def _erase_dead(self) -> None:
        """Remove the tiled ops (their results now live in buffers), and the views,
        constants and read-backs that no op on tensors reads any more."""
        for op in reversed(list(self.block.ops)):
            removable = (
                op in self.lowered
                or self.rules.is_view(op)
                or op.has_trait(ConstantLike)
                or isinstance(op, tile.ToTensorOp)
            )
            if not removable:
                continue
            if op in self.lowered:
                for result in op.results:
                    assert not result.uses, f"a tiled result of {op.name} is still read"
            elif any(result.uses for result in op.results):
                continue
            op.detach()
            op.erase()

    # ---- plans --------------------------------------------------------------------------

    def plan(self, op: Operation, layer: Layer) -> Plan:
        """The plan of `op` as `layer`: the tile plan-tiles recorded (`irc.tiling`),
        else planned here, with the tile `irc.tile_sizes` forces if the op has one
        (for the ops plan-tiles does not plan: pads, concats, slices)."""
        recorded = op.attributes.get(PLAN_ATTR)
        if self.cascade is not None and isinstance(recorded, DictionaryAttr):
            return cascade_member_plan(recorded, layer, self.target)
        sizes = recorded.data.get("tile") if isinstance(recorded, DictionaryAttr) else None
        sizes = sizes or op.attributes.get(FORCE_ATTR)
        forced = None
        if isinstance(sizes, DenseArrayBase):
            values = [int(v) for v in sizes.get_values()]
            if len(values) != 4 or min(values) < 1:
                raise error(
                    f"a tile is 4 positive sizes (rows, columns, channels, depth), got {values}",
                    op,
                    hint=f"{FORCE_ATTR} = array<i64: 8, 56, 64, 32>",
                )
            forced = Tile(*values)
        try:
            plan = plan_layer(layer, self.target, forced)
        except TilingError as failure:
            raise error(
                str(failure),
                op,
                hint="choose a target with more SRAM, or keep this layer on the CPU",
            ) from None
        # The loop order and staged weights as plan-tiles decided (the memory plan gave
        # the staged weights a slot): buffers depend on neither.
        if not isinstance(recorded, DictionaryAttr):
            # Not planned by plan-tiles: on one core (splitting is plan-tiles' choice,
            # under its options).
            return replace(plan, staged=False, cores=1, split="")
        order = recorded.data.get("order")
        staged = recorded.data.get("staged") == BoolAttr.from_bool(True)
        if isinstance(order, StringAttr) and order.data in ("weights", "input"):
            plan = replace(plan, order="weights" if order.data == "weights" else "input")
        # The cores plan-tiles split the layer across (one when it recorded none), or
        # the one core it runs on.
        cores = recorded.data.get("cores")
        count = int(cores.value.data) if isinstance(cores, IntegerAttr) else 1
        if count > self.target.cores.count:
            raise error(
                f"the layer's plan splits it across {count} cores; {self.target.name} has "
                f"{self.target.cores.count}",
                op,
                hint="plan the layer for this target (plan-tiles)",
            )
        split = recorded.data.get("split")
        split_name = split.data if isinstance(split, StringAttr) and count > 1 else ""
        if split_name == LOCK_STEP and not self.target.cores.broadcast_loads:
            raise error(
                f"the layer's plan runs its cores in lock step; {self.target.name}'s DMA "
                "cannot broadcast a load to every core (no broadcast_loads)",
                op,
                hint="plan the layer for this target (plan-tiles)",
            )
        return replace(
            plan,
            staged=staged,
            cores=count,
            split=split_name,
            core=_core(recorded, op, self.target),
        )


def _core(recorded: DictionaryAttr, op: Operation, target: Target) -> int:
    """The core a plan on one core runs on (`core` in its `irc.tiling`, or in a
    cascade's `irc.cascade`; 0 when it records none)."""
    core = recorded.data.get("core")
    index = int(core.value.data) if isinstance(core, IntegerAttr) else 0
    if not 0 <= index < target.cores.count:
        raise error(
            f"the plan runs on core {index}; {target.name} has "
            f"{target.cores.count} {'core' if target.cores.count == 1 else 'cores'}",
            op,
            hint="plan the layer for this target (plan-tiles)",
        )
    return index


def lower_function(function: FuncOp, target: Target, rules: LoweringRules) -> Statistics:
    """Lower every NPU layer of `function` to the tile level (see the module docstring)."""
    return FunctionLowering(function, target, rules).run()


# --------------------------------------------------------------------------------------
# Cascades


class StripeNest(Protocol):
    """A member's loop nest as a cascade drives it (irc/tiling/builder.py's
    `LayerBuilder`): the actions that run once, and one stripe's rows."""

    prologue: list[Operation]

    def emit_once(self, dims: Sequence[Dim], row: str, after: bool) -> None:
        """The actions that depend on no dimension the stripes change (weights and
        parameters held for the whole cascade): before the stripes, or after them."""
        ...

    def emit_stripe(self, dims: Sequence[Dim], row: str, bound: Bound) -> None:
        """The nest for the output rows `bound` (the other dimensions looped)."""
        ...


_CASCADE_FIELDS = {
    "group": IntegerAttr,
    "index": IntegerAttr,
    "members": IntegerAttr,
    "stripe": IntegerAttr,
    "window": DenseArrayBase,
    "reads": DenseArrayBase,
}
"""The fields of `irc.cascade` (and `rolling`, a DenseArrayBase, on all but the last)."""


def _cascade_groups(ops: Sequence[Operation]) -> dict[Operation, list[Operation]]:
    """Each cascade member and the members of its cascade, in program order; a
    malformed `irc.cascade` (hand-written IR) is an error naming the op."""
    groups: dict[int, list[Operation]] = {}
    for op in ops:
        attribute = op.attributes.get(CASCADE_ATTR)
        if attribute is None:
            continue
        _check_cascade(op, attribute)
        assert isinstance(attribute, DictionaryAttr)
        groups.setdefault(_int(attribute, "group"), []).append(op)
    for members in groups.values():
        attributes = [op.attributes[CASCADE_ATTR] for op in members]
        count = len(members)
        for index, (op, attribute) in enumerate(zip(members, attributes)):
            assert isinstance(attribute, DictionaryAttr)
            problem = ""
            if (_int(attribute, "index"), _int(attribute, "members")) != (index, count):
                problem = f"is member {index} of {count} in program order"
            elif len(_ints(attribute, "window")) != 6 or _int(attribute, "stripe") < 1:
                problem = "needs a window of 6 sizes and a positive stripe"
            elif ("rolling" in attribute.data) != (index < count - 1):
                problem = "has a rolling buffer exactly when it is not the cascade's last member"
            elif any(not 0 <= source < index for source in _ints(attribute, "reads")):
                problem = "reads only earlier members of its cascade"
            if problem:
                raise error(
                    f"{op.name}: a member of a cascade {problem}",
                    op,
                    hint="plan-tiles{cascades=true} records irc.cascade; do not write it by hand",
                )
    return {op: members for members in groups.values() for op in members}


def _check_cascade(op: Operation, attribute: Attribute) -> None:
    """`irc.cascade` has its fields, of their types."""
    fields = attribute.data if isinstance(attribute, DictionaryAttr) else {}
    missing = [
        name for name, kind in _CASCADE_FIELDS.items() if not isinstance(fields.get(name), kind)
    ]
    if "rolling" in fields and not isinstance(fields["rolling"], DenseArrayBase):
        missing.append("rolling")
    if not isinstance(op.attributes.get(PLAN_ATTR), DictionaryAttr):
        missing.append(f"its plan in the cascade ({PLAN_ATTR})")
    if missing:
        raise error(
            f"{op.name}: '{CASCADE_ATTR}' needs {', '.join(missing)} (group, index, "
            "members, stripe: integers; window, reads, rolling: arrays)",
            op,
            hint="plan-tiles{cascades=true} records irc.cascade; do not write it by hand",
        )


def _int(attribute: DictionaryAttr, key: str) -> int:
    value = attribute.data[key]
    assert isinstance(value, IntegerAttr)
    return int(value.value.data)


def _ints(attribute: DictionaryAttr, key: str) -> list[int]:
    value = attribute.data[key]
    assert isinstance(value, DenseArrayBase)
    return [int(v) for v in value.get_values()]


def cascade_member_plan(recorded: DictionaryAttr, layer: Layer, target: Target) -> Plan:
    """A cascade member's plan as `plan-tiles` recorded it: its tile and buffering, at
    the SRAM offsets the cascade laid out."""
    double = recorded.data["double_buffered"]
    offsets = recorded.data["sram_offsets"]
    assert isinstance(offsets, DictionaryAttr)
    plan = plan_tile(
        layer, target, Tile(*_ints(recorded, "tile")), double == BoolAttr.from_bool(True)
    )
    order = recorded.data["order"]
    assert isinstance(order, StringAttr) and order.data in ("weights", "input")
    return replace(
        plan,
        order="weights" if order.data == "weights" else "input",
        sram_offsets={name: tuple(_ints(offsets, name)) for name in offsets.data},
    )


class CascadeEmission:
    """The stripe loop of one cascade (irc/tiling/cascade.py). Its members' lowerings
    run as usual, but `LayerBuilder.emit` hands each nest here (`register`) instead of
    emitting it; `emit` then places, before the stripes, the rolling buffers, every
    member's SRAM buffers and the loads that do not change from stripe to stripe
    (weights that fit whole), and for each run of alike stripes an `scf.for` (or one
    stripe) computing in turn each member's rows of that stripe."""

    def __init__(self, lowering: FunctionLowering, members: Sequence[Operation]) -> None:
        self.lowering = lowering
        self.members = list(members)
        self.current: Operation | None = None
        self.nests: dict[Operation, tuple[StripeNest, list[Dim]]] = {}
        attributes = [op.attributes[CASCADE_ATTR] for op in members]
        assert all(isinstance(a, DictionaryAttr) for a in attributes)
        self.attributes: list[DictionaryAttr] = attributes  # type: ignore[assignment]
        self.stripe = _int(self.attributes[0], "stripe")
        cores = self.attributes[0].data.get("cores")
        self.cores = int(cores.value.data) if isinstance(cores, IntegerAttr) else 1
        self.core = _core(self.attributes[0], members[-1], lowering.target)
        """The core a cascade on one core runs on."""
        if self.cores > lowering.target.cores.count:
            raise error(
                f"the cascade's plan runs it on {self.cores} cores; {lowering.target.name} "
                f"has {lowering.target.cores.count}",
                members[-1],
                hint="plan the cascade for this target (plan-tiles)",
            )
        self.windows = [Rows(*_ints(a, "window")) for a in self.attributes]
        self.sources = tuple(tuple(_ints(a, "reads")) for a in self.attributes)
        em = lowering.emitter
        for op, attribute in zip(members[:-1], self.attributes[:-1]):
            value = (lowering.rules.requantized_with(op) or op).results[0]
            offset, rows = _ints(attribute, "rolling")
            shape = tensor_shape(value)
            element = storage_element(value.type)
            assert element is not None
            buffer_type = memref((shape[0], rows, *shape[2:]), element, SRAM)
            alloc = em.add(
                tile.AllocOp.create(
                    properties={"offset": IntegerAttr(offset, i64)}, result_types=[buffer_type]
                )
            )
            alloc.location = op.location
            buffer = alloc.results[0]
            lowering.rolling[buffer] = shape
            lowering.storages[value] = Storage(buffer, (0,) * len(shape), shape, rolling=True)

    def register(self, nest: StripeNest, dims: Sequence[Dim]) -> None:
        """The current member's nest, to emit stripe by stripe."""
        assert self.current is not None and self.current not in self.nests
        self.nests[self.current] = (nest, list(dims))

    def emit(self) -> None:
        """The cascade's ops, into the lowering's emitter (see the class docstring). On
        several cores (`cores` in its `irc.cascade`), each core's share of the stripes
        (`core_spans`) in a `tile.on_core`, with its own loads of what stays for the
        whole cascade; the buffers, allocated before, are each core's own (in its
        SRAM)."""
        em = self.lowering.emitter
        mark = len(em.stack[0])
        spans = core_spans(self.windows[-1].out_h, self.stripe, self.cores)
        if self.cores == 1 and not self.core:
            self._emit_stripes(schedule(self.windows, self.stripe, self.sources))
        elif self.cores == 1:
            stripes = schedule(self.windows, self.stripe, self.sources)
            body = em.scoped(functools.partial(self._emit_stripes, stripes))
            em.add(tile.OnCoreOp.build_on(self.core, body))
        for core, span in enumerate(spans if self.cores > 1 else []):
            stripes = schedule(self.windows, self.stripe, self.sources, span)
            body = em.scoped(functools.partial(self._emit_stripes, stripes))
            em.add(tile.OnCoreOp.build_on(core, body))
        # Every member's SRAM buffers before the cascade's first op (after the rolling
        # buffers), in its location.
        allocations: list[Operation] = []
        for op in self.members:
            nest, _ = self.nests[op]
            for alloc in nest.prologue:
                alloc.location = op.location
            allocations += nest.prologue
        em.stack[0][mark:mark] = allocations
        # The loops and their index arithmetic: the last member's location.
        for emitted in em.stack[0]:
            for nested in emitted.walk():
                if isinstance(nested.location, UnknownLoc):
                    nested.location = self.members[-1].location

    def _emit_stripes(self, stripes: Schedule) -> None:
        """The loads that stay for the whole cascade, `stripes` (each run of alike
        stripes a loop), then what runs after them."""
        em = self.lowering.emitter
        for op in self.members:
            nest, dims = self.nests[op]
            self._as(op, nest.emit_once, dims, _row_dim(dims), False)

        def body(run: Run, index: SSAValue | None) -> None:
            for position, op in enumerate(self.members):
                start, count = stripes[run.first][position]
                if not count:
                    continue
                nest, dims = self.nests[op]
                bound = Bound(index, start, run.steps[position], count)
                self._as(op, nest.emit_stripe, dims, _row_dim(dims), bound)

        for run in runs(stripes):
            if run.length > 1:
                em.loop(run.length, functools.partial(body, run))
            else:
                body(run, None)
            self.lowering.stats.loops += 1
        for op in self.members:
            nest, dims = self.nests[op]
            self._as(op, nest.emit_once, dims, _row_dim(dims), True)

    def _as(self, op: Operation, emit: Callable[..., None], *arguments: object) -> None:
        """Run `emit(*arguments)`; the ops it adds to the current block take `op`'s
        location."""
        block = self.lowering.emitter.stack[-1]
        mark = len(block)
        emit(*arguments)
        for emitted in block[mark:]:
            for nested in emitted.walk():
                nested.location = op.location


def _row_dim(dims: Sequence[Dim]) -> str:
    """The dimension of a member's nest that runs over its output rows: a conv's or a
    pool's `h`, an elementwise pass's second axis (of an NHWC map)."""
    names = [dim.name for dim in dims]
    return "h" if "h" in names else "d1"
