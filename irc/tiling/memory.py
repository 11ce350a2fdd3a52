"""Memory planning: a buffer for every tensor of a function, placed by live range in
the target's system memories.

Bufferization turns each tensor value into a buffer in a system memory (DDR, DRAM,
system SRAM, flash: the target's `[placement]` says which, irc/targets); this module
decides where the buffers live:

- **Weights** (constants) go to a read-only region at the start of the weights'
  memory, packed in program order.
- **Staged weights** (a plan's `staged`, irc/tiling/planner.py): a slot for the copy
  of a layer's weights in the first memory of activations, live from the planned
  layer before it (the copy runs beside that one) to the layer (`staged_slots`); a
  slot that does not fit there gets no buffer.
- **Accumulators** take no memory: the int32 result of a MAC layer (a `qnn` conv,
  gemm or matmul) that only its `qnn.requantize` reads stays in SRAM, tile by tile.
- **Views** take no memory: the result of a view (a reshape, flatten, squeeze,
  unsqueeze, identity, or a `part.transfer` between host and NPU code, which share
  DDR) is its input's buffer (zero-copy reshape).
- **Zero-copy concat**: each input of a concat that only the concat reads, and that
  an op computes (not a function argument or a constant), is written by its
  producer straight into its slice of the concat's buffer (with strided stores when
  the slice is not contiguous), so the concat moves nothing.
- **In place**: an elementwise op (add, mul, clamp, lookup, a standalone requantize,
  relu, clip) whose result has the shape and element size of an input that dies at
  this op writes its result over that input.
- **Cascades** (irc/tiling/cascade.py): the tensors between the members of a cascade
  (`irc.cascade`) live in rolling buffers in the local SRAM and take no memory here;
  the cascade runs where its last member is, so every tensor its members read from
  memory lives until then, and a member never writes in place over a tensor another
  member of its cascade reads (a later stripe still reads rows of it).

Which ops are views, concats, elementwise or MAC layers is the backend table's to say
(irc/backend): the planner asks an `OpKinds`, which the passes hand it.
- Every other value gets its own buffer, live from the op that defines it (the start,
  for a function argument) to its last reader (the end, for a result of the
  function, and for an argument of a function marked `irc.keep_inputs`: plan-ddr's
  `keep-inputs`, so that streamed frames can place their inputs early).

Buffers that are never live at the same time share memory: groups of values (a
buffer and its views, slices and in-place successors) are placed largest first, each
at the lowest aligned offset where it overlaps no placed group whose live range
overlaps its own (greedy by size, as TFLite's arena planner), in the first of the
activations' memories (in the placement's order of preference) where that offset
leaves it inside the memory: a fast memory holds the largest tensors it has room
for, the next memory the others. Each memory has its own arena (after the weights in
the weights' memory). The report gives each arena's size against the naive sum of
all buffers and the largest number of bytes live at once (a lower bound for any
placement).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

from xdsl.dialects.builtin import BoolAttr, DictionaryAttr, IntegerAttr, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.traits import ConstantLike

from irc.dialects.quant import quantized_element
from irc.tiling.cascade import CASCADE_ATTR
from irc.tiling.planner import PLAN_ATTR, element_bytes, stored_channels

if TYPE_CHECKING:
    from irc.targets import Memory, Target

Role = Literal["own", "view", "slice", "in-place", "weight", "argument", "fused"]


@dataclass
class Value:
    """A tensor the planner places: its size and live range, and how it may share."""

    name: str
    size: int
    defined: int
    """The index of the op that defines it (-1: a function argument)."""
    last_use: int
    """The index of its last reader (len(ops): a result of the function)."""
    role: Role = "own"
    parent: int | None = None
    """For a view, slice or in-place value: the value whose buffer it is in."""
    offset_in_parent: int = 0
    """Bytes from the parent's start to this value's first element."""
    offset: int = -1
    """Its first element's offset: in its memory's arena, or in the weights region."""
    memory: str = ""
    """The memory it lives in ("" for an accumulator held in SRAM)."""
    home: str = ""
    """The only memory it may live in ("": any); where it does not fit there, it gets
    no buffer (offset -1): a staged copy of weights (`staged_slots`)."""


@dataclass(frozen=True)
class Home:
    """A system memory that holds tensors: its name, capacity and alignment."""

    name: str
    capacity: int
    alignment: int


@dataclass(frozen=True)
class Homes:
    """Where a function's tensors may live: the weights' memory, and the activations'
    memories in order of preference."""

    weights: Home
    activations: tuple[Home, ...]

    @classmethod
    def of(cls, target: Target) -> Homes:
        """The homes of the target's placement."""

        def home(memory: Memory) -> Home:
            return Home(memory.name, memory.size_bytes, memory.alignment_bytes)

        return cls(home(target.weights_memory), tuple(map(home, target.activation_memories)))

    @classmethod
    def single(cls, name: str, alignment: int, capacity: int = 1 << 62) -> Homes:
        """Weights and activations in one memory (tests, reports without a target)."""
        home = Home(name, capacity, alignment)
        return cls(home, (home,))


class PlacementError(Exception):
    """The tensors do not fit in the memories the placement gives them."""


@dataclass
class MemoryPlan:
    """Where every value of a function lives."""

    homes: Homes
    values: list[Value] = field(default_factory=list)
    arenas: dict[str, int] = field(default_factory=dict)
    """Bytes of each activation memory's arena (from its base)."""
    weights_bytes: int = 0
    staged: dict[Operation, int] = field(default_factory=dict)
    """Each layer whose weights are staged (`irc.tiling`'s `staged`): its slot's value."""

    @property
    def alignment(self) -> int:
        """The alignment of the first activations' memory (the report's)."""
        return self.homes.activations[0].alignment

    @property
    def arena_bytes(self) -> int:
        """The bytes of every arena together."""
        return sum(self.arenas.values())

    def base(self, memory: str) -> int:
        """Where the arena starts in `memory`: after the weights in theirs."""
        if memory == self.homes.weights.name:
            return _align(self.weights_bytes, self.home(memory).alignment)
        return 0

    def home(self, memory: str) -> Home:
        """The home named `memory`."""
        homes = (*self.homes.activations, self.homes.weights)
        return next(home for home in homes if home.name == memory)

    @property
    def naive_bytes(self) -> int:
        """Every activation value in a buffer of its own, none shared."""
        return sum(
            _align(value.size, self.alignment)
            for value in self.values
            if value.role not in ("weight", "fused")
        )

    @property
    def peak_live_bytes(self) -> int:
        """The most bytes of activation groups live at one op: no placement does better."""
        groups = _groups(self.values)
        events: dict[int, int] = {}
        for root, (first, last) in groups.items():
            size = _align(self.values[root].size, self.alignment)
            for index in range(first, last + 1):
                events[index] = events.get(index, 0) + size
        return max(events.values(), default=0)

    def to_json(self) -> str:
        data = {
            "alignment": self.alignment,
            "arena_bytes": self.arena_bytes,
            "arenas": self.arenas,
            "weights_memory": self.homes.weights.name,
            "naive_bytes": self.naive_bytes,
            "peak_live_bytes": self.peak_live_bytes,
            "weights_bytes": self.weights_bytes,
            "buffers": [
                {
                    "name": value.name,
                    "size": value.size,
                    "offset": value.offset,
                    "memory": value.memory,
                    "role": value.role,
                    "live": [value.defined, value.last_use],
                    **({"in": self.values[value.parent].name} if value.parent is not None else {}),
                }
                for value in self.values
            ],
        }
        return json.dumps(data, indent=2, sort_keys=True) + "\n"

    def to_text(self) -> str:
        arenas = ", ".join(f"{name} {size}" for name, size in self.arenas.items())
        lines = [
            f"arena {self.arena_bytes} bytes ({arenas}; naive {self.naive_bytes}, at least "
            f"{self.peak_live_bytes} live at once), weights {self.weights_bytes} bytes in "
            f"{self.homes.weights.name}, alignment {self.alignment}",
            f"{'value':<32} {'role':<9} {'memory':<12} {'offset':>10} {'size':>10} "
            f"{'live':>12}  in",
        ]
        for value in self.values:
            parent = self.values[value.parent].name if value.parent is not None else ""
            live = f"{value.defined}..{value.last_use}"
            lines.append(
                f"{value.name[:32]:<32} {value.role:<9} {value.memory[:12]:<12} "
                f"{value.offset:>10} {value.size:>10} {live:>12}  {parent}"
            )
        return "\n".join(lines) + "\n"


def _align(size: int, alignment: int) -> int:
    return -(-size // alignment) * alignment


def _root(values: Sequence[Value], index: int) -> tuple[int, int]:
    """The value whose buffer `index` is in, and the byte offset within it."""
    offset = 0
    while values[index].parent is not None:
        offset += values[index].offset_in_parent
        parent = values[index].parent
        assert parent is not None
        index = parent
    return index, offset


def _groups(values: Sequence[Value]) -> dict[int, tuple[int, int]]:
    """The live range of each activation group, by its root value."""
    ranges: dict[int, tuple[int, int]] = {}
    for index, value in enumerate(values):
        if value.role in ("weight", "fused"):
            continue
        root, _ = _root(values, index)
        first, last = ranges.get(root, (value.defined, value.last_use))
        ranges[root] = (min(first, value.defined), max(last, value.last_use))
    return ranges


def place(values: list[Value], homes: Homes) -> MemoryPlan:
    """Place every value (the roles and parents already decided): weights packed in
    program order, activation groups greedily by size, each in the first activations'
    memory with room for it. Returns the plan; a `PlacementError` when the weights or
    an activation do not fit in any memory the placement allows."""
    plan = MemoryPlan(homes, values)
    weights = homes.weights
    cursor = 0
    for value in values:
        if value.role == "weight":
            value.offset, value.memory = cursor, weights.name
            cursor += _align(value.size, weights.alignment)
    plan.weights_bytes = cursor
    if cursor > weights.capacity:
        raise PlacementError(
            f"the weights need {cursor} bytes; {weights.name} holds {weights.capacity}"
        )
    plan.arenas = {home.name: 0 for home in homes.activations}

    groups = _groups(values)
    order = sorted(groups, key=lambda root: (-values[root].size, groups[root][0], root))
    placed: dict[str, list[tuple[int, int, int, int]]] = {}  # offset, end, first, last
    for root in order:
        first, last = groups[root]
        only = values[root].home
        for home in [home for home in homes.activations if home.name == only or not only]:
            size = _align(values[root].size, home.alignment)
            busy = sorted(
                (start, end)
                for start, end, begin, finish in placed.get(home.name, [])
                if begin <= last and first <= finish
            )
            offset = _lowest_gap(busy, size, home.alignment)
            if plan.base(home.name) + offset + size <= home.capacity:
                break
        else:
            if only:
                continue  # a staged copy that does not fit: the layer reads its weights
            raise PlacementError(
                f"{values[root].name} ({values[root].size} bytes) does not fit in "
                + " or ".join(home.name for home in homes.activations)
                + " beside the tensors live with it"
            )
        values[root].offset, values[root].memory = offset, home.name
        placed.setdefault(home.name, []).append((offset, offset + size, first, last))
        plan.arenas[home.name] = max(plan.arenas[home.name], offset + size)
    for index, value in enumerate(values):
        if value.role not in ("weight", "fused") and value.parent is not None:
            root, inside = _root(values, index)
            value.offset = values[root].offset + inside
            value.memory = values[root].memory
    return plan


def _lowest_gap(busy: list[tuple[int, int]], size: int, alignment: int) -> int:
    """The smallest aligned gap between busy intervals that holds `size` (the lowest
    such offset among equal gaps), else the end of the last one."""
    best: tuple[int, int] | None = None
    cursor = 0
    for start, end in busy:
        if start - cursor >= size and (best is None or start - cursor < best[0]):
            best = (start - cursor, cursor)
        cursor = max(cursor, _align(end, alignment))
    return best[1] if best is not None else cursor


def check_plan(plan: MemoryPlan) -> list[str]:
    """What is wrong with a plan (empty when sound): overlapping live groups,
    misaligned groups, values outside their parents."""
    problems = []
    values = plan.values
    groups = _groups(values)
    # A staged copy that did not fit its memory has no buffer.
    roots = [root for root in groups if values[root].offset >= 0 or not values[root].home]
    for root in roots:
        home = plan.home(values[root].memory)
        if values[root].offset % home.alignment:
            problems.append(f"{values[root].name} is not aligned")
        if plan.base(home.name) + values[root].offset + values[root].size > home.capacity:
            problems.append(f"{values[root].name} is outside {home.name}")
    for i, a in enumerate(roots):
        for b in roots[i + 1 :]:
            (fa, la), (fb, lb) = groups[a], groups[b]
            if la < fb or lb < fa or values[a].memory != values[b].memory:
                continue
            sa, sb = values[a].offset, values[b].offset
            if sa < sb + values[b].size and sb < sa + values[a].size:
                problems.append(f"{values[a].name} and {values[b].name} overlap while live")
    for index, value in enumerate(values):
        if value.parent is not None:
            root, inside = _root(values, index)
            if inside < 0 or inside + value.size > values[root].size:
                problems.append(f"{value.name} is outside {values[root].name}")
    return problems


# --------------------------------------------------------------------------------------
# From a function


def _bytes(value_type: Attribute) -> int:
    assert isinstance(value_type, TensorType)
    return math.prod(value_type.get_shape()) * element_bytes(value_type)


def _stored(value_type: Attribute) -> Attribute:
    """The element type a buffer of `value_type` holds (a quantized type's storage)."""
    assert isinstance(value_type, TensorType)
    element = quantized_element(value_type)
    return element.storage_type if element is not None else value_type.get_element_type()


def _shape(value_type: Attribute) -> list[int] | None:
    return list(value_type.get_shape()) if isinstance(value_type, TensorType) else None


class OpKinds(Protocol):
    """What bufferization needs to know of an op's kind (irc.backend.TileRules answers
    from the backend table)."""

    def is_view(self, op: Operation) -> bool:
        """Its result is its input's buffer, seen with another shape."""
        ...

    def is_concat(self, op: Operation) -> bool:
        """Its inputs may be written straight into their slices of its result."""
        ...

    def writes_in_place(self, op: Operation) -> bool:
        """An elementwise op, which may write its result over an input."""
        ...

    def requantized_with(self, op: Operation) -> Operation | None:
        """The requantize that runs with a MAC layer, tile by tile (its int32 result
        stays in SRAM), or None."""
        ...


KEEP_INPUTS_ATTR = "irc.keep_inputs"
"""A function whose arguments keep their buffers to its end (plan-ddr's
`keep-inputs`): no tensor reuses an input's bytes, so that the runtime can place the
next frame's inputs while this frame's later layers run."""


def function_values(
    function: FuncOp, kinds: OpKinds, *, zero_copy: bool = True, in_place: bool = True
) -> tuple[list[Value], dict[SSAValue, int]]:
    """The values of `function`'s body in program order, with their roles decided
    (see the module docstring), and the index of each SSA value."""
    keep_inputs = KEEP_INPUTS_ATTR in function.attributes
    block = function.body.blocks.first
    assert block is not None
    ops = list(block.ops)
    position = {op: index for index, op in enumerate(ops)}
    end = len(ops)
    values: list[Value] = []
    index_of: dict[SSAValue, int] = {}

    def last_use(value: SSAValue) -> int:
        uses = [position[use.operation] for use in value.uses if use.operation in position]
        if any(isinstance(use.operation, ReturnOp) for use in value.uses):
            return end
        return max(uses, default=position.get(value.owner, -1))  # type: ignore[arg-type]

    for argument in block.args:
        if isinstance(argument.type, TensorType):
            index_of[argument] = len(values)
            name = f"arg{argument.index}" if not argument.name_hint else argument.name_hint
            last = end if keep_inputs else last_use(argument)
            values.append(Value(name, _bytes(argument.type), -1, last, "argument"))
    for op_index, op in enumerate(ops):
        for result in op.results:
            if not isinstance(result.type, TensorType):
                continue
            index_of[result] = len(values)
            name = result.name_hint or f"{op.name}#{op_index}"
            role: Role = "own"
            if op.has_trait(ConstantLike):
                role = "weight"
            elif kinds.requantized_with(op) is not None:
                role = "fused"
            size = 0 if role == "fused" else _bytes(result.type)
            stored = stored_channels(result)
            if stored:  # channel alignment pads the channel stride
                size = size // _shape(result.type)[-1] * stored  # type: ignore[index]
            values.append(Value(name, size, op_index, last_use(result), role))
    # A MAC layer and its requantize run as one, tile by tile: the requantized
    # result is written while the layer's inputs are still read.
    for op_index, op in enumerate(ops):
        requantize = kinds.requantized_with(op)
        if requantize is not None:
            values[index_of[requantize.results[0]]].defined = op_index
    shared = _cascades(ops, values, index_of, kinds)
    if zero_copy:
        _views_and_concats(ops, values, index_of, kinds)
    if in_place:
        _in_place(ops, values, index_of, kinds, shared)
    return values, index_of


def _cascades(
    ops: Sequence[Operation], values: list[Value], index_of: dict[SSAValue, int], kinds: OpKinds
) -> dict[int, set[int]]:
    """Give the tensors inside each cascade no buffer and keep the tensors its members
    read alive until it runs (at its last member); returns, for each member, the
    tensors other members of its cascade read (which it may not overwrite)."""
    groups: dict[int, list[int]] = {}
    for op_index, op in enumerate(ops):
        attribute = op.attributes.get(CASCADE_ATTR)
        group = attribute.data.get("group") if isinstance(attribute, DictionaryAttr) else None
        if isinstance(group, IntegerAttr):  # (lower-to-tile reports a malformed one)
            groups.setdefault(group.value.data, []).append(op_index)
    shared: dict[int, set[int]] = {}
    for members in groups.values():
        last = members[-1]
        inside = set()
        for op_index in members[:-1]:
            op = ops[op_index]
            result = (kinds.requantized_with(op) or op).results[0]
            inside.add(index_of[result])
            value = values[index_of[result]]
            value.role, value.size = "fused", 0
        reads = {
            op_index: {
                index_of[operand]
                for operand in ops[op_index].operands
                if operand in index_of and index_of[operand] not in inside
            }
            for op_index in members
        }
        for op_index in members:
            for index in reads[op_index]:
                values[index].last_use = max(values[index].last_use, last)
            shared[op_index] = set().union(*(reads[o] for o in members if o != op_index))
    return shared


def _views_and_concats(
    ops: Sequence[Operation], values: list[Value], index_of: dict[SSAValue, int], kinds: OpKinds
) -> None:
    for op in ops:
        if kinds.is_view(op) and op.operands[0] in index_of:
            source = index_of[op.operands[0]]
            if values[source].role != "weight":
                result = values[index_of[op.results[0]]]
                result.role, result.parent = "view", source
        elif kinds.is_concat(op):
            _concat(op, values, index_of)


def _concat(op: Operation, values: list[Value], index_of: dict[SSAValue, int]) -> None:
    result_type = op.results[0].type
    assert isinstance(result_type, TensorType)
    shape = list(result_type.get_shape())
    axis = op.props().int("axis") or 0  # type: ignore[attr-defined]
    axis %= len(shape)
    element_bytes = _bytes(result_type) // max(1, math.prod(shape))
    inner = math.prod(shape[axis + 1 :]) * element_bytes
    concat = index_of[op.results[0]]
    start = 0
    for operand in op.operands:
        operand_type = operand.type
        assert isinstance(operand_type, TensorType)
        width = operand_type.get_shape()[axis]
        source = index_of.get(operand)
        if (
            source is not None
            and _stored(operand_type) == _stored(result_type)
            and values[source].role == "own"
            and values[source].defined >= 0
            and operand.has_one_use()
        ):
            value = values[source]
            value.role, value.parent, value.offset_in_parent = "slice", concat, start * inner
        start += width


def _in_place(
    ops: Sequence[Operation],
    values: list[Value],
    index_of: dict[SSAValue, int],
    kinds: OpKinds,
    shared: dict[int, set[int]],
) -> None:
    """Share an elementwise op's buffer between its result and an input that dies at
    the op. When the result has its own buffer, the result moves into the input's;
    when the result is already in another buffer (a slice of a concat), the input is
    computed there instead."""
    # A value whose buffer holds views or slices of it lives on through them: writing
    # over it where it dies would clobber them.
    hosts = {value.parent for value in values if value.parent is not None}
    for op_index, op in enumerate(ops):
        if not kinds.writes_in_place(op) or op.results[0] not in index_of:
            continue
        result_index = index_of[op.results[0]]
        result = values[result_index]
        result_shape = _shape(op.results[0].type)
        for operand in op.operands:
            source = index_of.get(operand)
            if source is None or _shape(operand.type) != result_shape:
                continue
            if _stored(operand.type) != _stored(op.results[0].type):
                continue  # an int8 buffer does not hold uint8 results
            candidate = values[source]
            if candidate.last_use != op_index or candidate.size != result.size:
                continue
            if source in hosts or source in shared.get(op_index, ()):
                continue
            if result.role == "own" and candidate.role in ("own", "in-place"):
                result.role, result.parent = "in-place", source
                hosts.add(source)
                break
            if result.role != "own" and candidate.role == "own":
                candidate.role, candidate.parent = "in-place", result_index
                hosts.add(result_index)
                break


def plan_function(
    function: FuncOp,
    homes: Homes,
    kinds: OpKinds,
    *,
    zero_copy: bool = True,
    in_place: bool = True,
) -> tuple[MemoryPlan, dict[SSAValue, int]]:
    """Bufferize and place `function`'s values (see the module docstring)."""
    values, index_of = function_values(function, kinds, zero_copy=zero_copy, in_place=in_place)
    staged = staged_slots(function, values, homes)
    plan = place(values, homes)
    plan.staged = staged
    return plan, index_of


def staged_slots(function: FuncOp, values: list[Value], homes: Homes) -> dict[Operation, int]:
    """A slot for the weights of each layer planned with `staged` weights
    (irc/tiling/planner.py), in the first memory of activations: live from the planned
    layer before it (the copy runs while that layer does) to the layer itself. Appended
    to `values`; by layer."""
    block = function.body.blocks.first
    assert block is not None
    slots: dict[Operation, int] = {}
    previous = -1
    for position, op in enumerate(block.ops):
        plan = op.attributes.get(PLAN_ATTR)
        if not isinstance(plan, DictionaryAttr):
            continue
        weights = getattr(op, "weight", None)
        if plan.data.get("staged") == BoolAttr.from_bool(True) and isinstance(weights, SSAValue):
            slots[op] = len(values)
            name = f"{weights.name_hint or op.name}#staged"
            start = previous if previous >= 0 else position
            fast = homes.activations[0].name
            values.append(Value(name, _bytes(weights.type), start, position, "own", home=fast))
        previous = position
    return slots
