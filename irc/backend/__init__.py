"""The backend table: what irc knows about running each kind of op on an NPU.

For every kind of op that can run on the NPU there is one `Entry` in
`irc/backend/table.py`. It says, for an instance of that kind:

- **placement**: which key of the target's support table decides it (`support_key`;
  the kind's name, as `conv`, or one read off the instance, as a `qnn.lut`'s
  function), and what irc's own lowering cannot do with it (`check`: a weight with
  a zero point, an NCHW layout, ...); with the element types (int8, int16, float
  against the target's `data_types`) these give `place(op, target)`: the NPU, or
  the host with every reason;
- **its layer model** for the tile planner (`layer`: the op in NHWC terms,
  irc/tiling/planner.py), when the planner plans it on its own;
- **its lowering** to the tile level (`lower`: the loop nest of copies and tile
  compute, irc/tiling/lowering.py), or none for a view, which moves nothing
  (`view`: a reshape is its input's buffer);
- **the commands it becomes** (`commands`: which tile ops it emits and the `npu`
  command each one becomes, with that command's engine and its cycles per output
  element on the vector unit), which `lower-to-npu` and the simulator's timing read;
- **its cost**: its MACs (irc/backend/cost.py) and, through its layer model, the
  planner's cycles, which the partitioner's cost model uses.

`partition`, `plan-tiles`, `plan-ddr`, `lower-to-tile`, `lower-to-npu`, the
simulator's cost figures and the compile report all read the table; nothing else
decides where an op runs or how it is lowered. docs/adding-an-op.md walks one new
op through it.

    from irc.backend import place, entry_of

    placement = place(op, target)        # Placement(device="cpu", reasons=(...))
    entry_of(op).lower(lowering, op)     # the op's tiled loop nest

Constants are data: they are never placed (they follow their readers). The
`qnn.requantize` that alone reads a MAC layer's accumulator is part of that layer
(`fused_with`): it runs where the layer runs, tile by tile, as its output stage.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from xdsl.dialects.builtin import AnyFloat, MemRefType, ModuleOp, StringAttr, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue
from xdsl.traits import ConstantLike

from irc.dialects import qnn, quant
from irc.dialects.quant import quantized_element
from irc.ir.placement import CPU, DEVICE_ATTR, FLOAT_REASON_ATTR, NPU, REASON_ATTR

if TYPE_CHECKING:
    from irc.dialects import npu
    from irc.targets import Target
    from irc.tiling.cascade import Member
    from irc.tiling.lowering import FunctionLowering, Statistics
    from irc.tiling.lowering import Lowerer as TileLowerer
    from irc.tiling.memory import MemoryPlan
    from irc.tiling.planner import Layer, Plan

Device = Literal["npu", "cpu"]
Engine = Literal["mac", "vector", "dma"]

Check = Callable[[Operation], list[str]]
"""What irc's lowering cannot do with an op instance: one reason per problem, each
`<op name> <what>: irc <what it does>`; [] when it can lower it."""

LayerModel = Callable[[Operation, str], "Layer"]
"""The planner's view of an op, named by its layer name."""

Lowerer = Callable[["FunctionLowering", Any], None]
"""Emit an op's tiled loop nest into a function lowering."""

VectorCost = Callable[[Any], tuple[Sequence[SSAValue], Sequence[SSAValue], int]]
"""Of a vector command: the buffers it reads, those it writes, and its cycles per
lane-wide group of output elements (per window tap or input)."""


@dataclass(frozen=True)
class CommandSpec:
    """A tile op and the `npu` command it becomes, on the same fields."""

    tile_op: type[Operation]
    command: type[npu.Command]
    engine: Engine
    cost: VectorCost | None = None
    """For a vector-unit command: what it reads and writes, and its cycles per
    output element (MAC commands are timed from their shapes, irc/sim/timing.py)."""


def no_limits(op: Operation) -> list[str]:
    """A check that irc's lowering takes every instance of the kind."""
    return []


@dataclass(frozen=True)
class Entry:
    """Everything irc knows about one kind of op on the NPU (see the module docstring)."""

    kind: str
    """The kind: the support table's key for it, unless `support_key` says otherwise."""
    ops: tuple[type[Operation], ...]
    """The op classes of this kind (a float `nn` op and its integer `qnn` form)."""
    summary: str
    """What the NPU does for it, in a few words (docs/architecture.md's table)."""
    check: Check = no_limits
    layer: LayerModel | None = None
    """The layer the planner plans on its own (None: the lowering plans its pieces)."""
    lower: Lowerer | None = None
    """None for a view (`view`)."""
    view: bool = False
    """A zero-copy view of its input's buffer: nothing is emitted for it."""
    in_place: bool = False
    """May write its result over an input that dies at it (plan-ddr)."""
    gathers: bool = False
    """Its inputs may be written by their producers straight into their slices of its
    result (a zero-copy concat, plan-ddr)."""
    accumulates: bool = False
    """A MAC layer: the `qnn.requantize` that alone reads its int32 result is its
    output stage, and that accumulator never leaves SRAM."""
    commands: tuple[CommandSpec, ...] = ()
    cascades: bool = False
    """May run as a member of a cascade, stripe by stripe (irc/tiling/cascade.py): its
    lowering is a nest over output rows, columns and channels whose rows read a window
    of input rows (a conv, a pool, an elementwise op)."""
    support_key: Callable[[Operation], str] | None = None
    """The support table key of an instance, when it is not `kind`."""

    def key(self, op: Operation) -> str:
        """The support table key that decides `op`."""
        return self.support_key(op) if self.support_key is not None else self.kind


@dataclass(frozen=True)
class Placement:
    """Where an op runs, and why not on the NPU."""

    device: Device
    reasons: tuple[str, ...] = ()


# --------------------------------------------------------------------------------------
# Looking entries up


@functools.cache
def _by_class() -> dict[type[Operation], Entry]:
    from irc.backend.table import ENTRIES

    index: dict[type[Operation], Entry] = {}
    for entry in ENTRIES:
        for op_class in entry.ops:
            assert op_class not in index, f"{op_class.__name__} has two entries"
            index[op_class] = entry
    return index


@functools.cache
def _commands() -> dict[type[Operation], CommandSpec]:
    from irc.backend.table import COMMANDS

    return {spec.tile_op: spec for spec in COMMANDS}


@functools.cache
def _command_specs() -> dict[type[Operation], CommandSpec]:
    return {spec.command: spec for spec in _commands().values()}


def entry_of(op: Operation) -> Entry | None:
    """The table's entry of `op`'s kind, or None for an op no NPU runs in irc."""
    return _by_class().get(type(op))


def entries() -> list[Entry]:
    """Every entry, in the table's order."""
    from irc.backend.table import ENTRIES

    return list(ENTRIES)


def command_for(tile_op: Operation) -> CommandSpec | None:
    """The command a tile op becomes (None: the tile op is not a command)."""
    return _commands().get(type(tile_op))


def command_spec(command: Operation) -> CommandSpec | None:
    """The table's spec of an `npu` compute command (its engine and cost)."""
    return _command_specs().get(type(command))


def command_specs() -> list[CommandSpec]:
    """Every tile op -> command pair, in the table's order."""
    return list(_commands().values())


# --------------------------------------------------------------------------------------
# Placement


def is_data(op: Operation) -> bool:
    """A constant: data, which follows the ops that read it."""
    return op.has_trait(ConstantLike)


def fused_with(op: Operation) -> Operation | None:
    """The MAC layer whose accumulator `op` alone requantizes (it runs with that
    layer, as its output stage), or None."""
    if not isinstance(op, qnn.RequantizeOp):
        return None
    producer = op.input.owner
    if not isinstance(producer, Operation) or not producer.results:
        return None
    entry = entry_of(producer)
    if entry is None or not entry.accumulates or not producer.results[0].has_one_use():
        return None
    return producer


def fused_requantize(op: Operation) -> qnn.RequantizeOp | None:
    """The requantize that alone reads a MAC layer's accumulator (its output stage)."""
    entry = entry_of(op)
    if entry is None or not entry.accumulates or not op.results:
        return None
    result = op.results[0]
    if result.has_one_use():
        user = result.get_user_of_unique_use()
        if isinstance(user, qnn.RequantizeOp):
            return user
    return None


def place(op: Operation, target: Target) -> Placement:
    """Where the table puts `op` on `target` (support mode): the NPU when the target's
    support table takes it, it runs in data types the target computes in, and irc's
    lowering takes it; else the host, with every reason.

    A fused requantize goes where its layer goes; a constant has no placement (it is
    data): asking is a bug.
    """
    assert not is_data(op), "constants are data: they follow their readers"
    layer = fused_with(op)
    if layer is not None:
        placement = place(layer, target)
        prefix = f"{op.name} runs with its {layer.name}, which stays on the host: "
        glued = tuple(prefix + r.removeprefix(f"{layer.name} ") for r in placement.reasons)
        return Placement(placement.device, glued)
    from irc.targets.support import unsupported_reasons

    entry = entry_of(op)
    if entry is None:
        # The target's own reasons first (what a target file could change), then irc's.
        target_reasons = unsupported_reasons(op, target) if hasattr(op, "props") else []
        return Placement(CPU, (*target_reasons, _no_entry_reason(op)))
    reasons = list(_type_reasons(op, target))
    output_stage = fused_requantize(op)
    if output_stage is not None:  # the layer writes what its requantize writes
        own = {reason.removeprefix(op.name) for reason in reasons}
        reasons += [
            f"{op.name}'s output stage: {reason}"
            for reason in _type_reasons(output_stage, target)
            if reason.removeprefix(output_stage.name) not in own  # said of the layer already
        ]
    if not reasons:
        reasons += unsupported_reasons(op, target, entry.key(op))
    reasons += entry.check(op)  # a MAC layer's check covers its output stage
    return Placement(NPU if not reasons else CPU, tuple(reasons))


NO_LOWERING_WHY: dict[type[Operation], str] = {
    qnn.TFLiteSoftmaxOp: "TFLite's int8 softmax computes in float32, its table and its sum",
    qnn.SubOp: "irc's vector unit adds, TFLite's SUB subtracts its rescaled inputs",
}
"""Why some ops have no NPU lowering, said with the reason."""


def _no_entry_reason(op: Operation) -> str:
    why = NO_LOWERING_WHY.get(type(op))
    return f"{op.name}: irc has no NPU lowering of it" + (f" ({why})" if why else "")


def _values(op: Operation) -> list[SSAValue]:
    return [*op.operands, *op.results]


def _type_reasons(op: Operation, target: Target) -> list[str]:
    """Why the NPU cannot hold or compute `op`'s values: float on a target without
    fp16, 16-bit values, or element types no NPU buffer holds."""
    from irc.tiling.lowering import storage_element

    reasons = []
    floating = sixteen = False
    for value in _values(op):
        value_type = value.type
        if not isinstance(value_type, TensorType):
            continue
        quantized = quantized_element(value_type)
        if quantized is not None and quantized.storage_type.width.data == 16:
            sixteen = True
            continue
        element = storage_element(value_type)
        if element is None:
            written = quantized.storage_type if quantized else value_type.get_element_type()
            reasons.append(
                f"{op.name} holds {written} values: irc's NPU buffers hold i8, ui8, i32 and f32"
            )
        elif isinstance(element, AnyFloat):
            floating = True
    # Converting a float input or output is the one float step of an integer NPU.
    converts = isinstance(op, quant.QuantizeCastOp | quant.DequantizeCastOp)
    if floating and not converts and not target.data_types.fp16:
        kept = op.attributes.get(FLOAT_REASON_ATTR)
        why = f" ({kept.data})" if isinstance(kept, StringAttr) else ""
        reasons.append(
            f"{op.name} computes in float{why}: target {target.name} computes in integers "
            "only (no fp16)"
        )
    # Every 16-bit op of the qnn dialect has a 16-bit lowering; the target decides.
    if sixteen and not target.data_types.int16:
        reasons.append(
            f"{op.name} has 16-bit values: target {target.name} computes in 8 bits (no int16)"
        )
    elif sixteen:
        reasons.extend(_accumulator_reasons(op, target))
    return list(dict.fromkeys(reasons))


def _accumulator_reasons(op: Operation, target: Target) -> list[str]:
    """Why a 16-bit MAC op's sums may not fit the target's int16 accumulator: the
    worst case of its products plus its largest constant bias, against the target's
    `int16_accumulator_bits` (irc's reference holds 48 bits; Ethos-U's 40)."""
    from irc.ir.constants import constant_array

    bound = qnn.accumulation_bound(op)
    if bound is None or not qnn.is_wide(*qnn.product_elements(op)):
        return []
    bias = getattr(op, "bias", None)
    values = constant_array(bias) if bias is not None else None
    if values is not None and values.size:
        bound += int(abs(values.astype(object)).max())
    if target.data_types.holds_wide(bound):
        return []
    bits = target.data_types.int16_accumulator_bits
    return [
        f"{op.name} can accumulate {bound} (a {bound.bit_length() + 1}-bit signed sum): "
        f"target {target.name}'s int16 accumulator holds {bits} bits"
    ]


def device_of(op: Operation, target: Target) -> Device:
    """Where `op` runs: as `partition` marked it (`irc.device` on the op), else as the
    table places it (a module that was never partitioned runs as `partition
    {mode=support}` would place it)."""
    marked = marked_device(op)
    if marked is not None:
        return marked
    return place(op, target).device


def require_unoutlined(module: ModuleOp, pass_name: str) -> None:
    """The backend passes lower whole functions with their host ops in place: a module
    whose NPU subgraphs were outlined into functions (`partition{outline=true}`) is an
    error naming the first such function."""
    from irc.diagnostics import error

    for op in module.ops:
        if isinstance(op, FuncOp) and marked_device(op) == NPU and op.body.blocks.first:
            raise error(
                f"{pass_name}: @{op.sym_name.data} is an outlined NPU function; the backend "
                "passes lower functions with their host ops in place",
                op,
                hint="partition with 'partition{outline=false}', which marks every op instead",
            )


def marked_device(op: Operation) -> Device | None:
    """The device `partition` recorded on `op`, or on the function it is in."""
    current: Operation | None = op
    while current is not None:
        device = current.attributes.get(DEVICE_ATTR)
        if isinstance(device, StringAttr) and device.data in (NPU, CPU):
            return device.data  # type: ignore[return-value]
        if isinstance(current, FuncOp):
            return None
        current = current.parent_op()
    return None


def reasons_of(op: Operation) -> tuple[str, ...]:
    """The reasons `partition` recorded for running `op` on the host."""
    reason = op.attributes.get(REASON_ATTR)
    if not isinstance(reason, StringAttr):
        return ()
    return tuple(reason.data.split("; "))


def on_npu(op: Operation, target: Target) -> bool:
    """`op` runs on the NPU (it is not data, and the partition or the table put it there)."""
    if is_data(op) or op.name == "func.return" or _holds_buffers(op):
        return False
    return device_of(op, target) == NPU


def _holds_buffers(op: Operation) -> bool:
    return any(isinstance(value.type, MemRefType) for value in _values(op)) or bool(op.regions)


class TileRules:
    """The backend table as the tile level asks it, for one target: bufferization's
    `irc.tiling.memory.OpKinds` and the lowering's `irc.tiling.lowering.LoweringRules`."""

    def __init__(self, target: Target) -> None:
        self.target = target

    def is_view(self, op: Operation) -> bool:
        """A view of its input's buffer (a reshape, a transfer between host and NPU)."""
        entry = entry_of(op)
        return entry is not None and entry.view

    def is_concat(self, op: Operation) -> bool:
        """Its inputs may be written straight into their slices of its result."""
        entry = entry_of(op)
        return entry is not None and entry.gathers

    def writes_in_place(self, op: Operation) -> bool:
        """An elementwise op, which may write over an input that dies at it."""
        entry = entry_of(op)
        return entry is not None and entry.in_place

    def requantized_with(self, op: Operation) -> Operation | None:
        """The requantize that runs with an NPU MAC layer as its output stage."""
        if not op.results or not on_npu(op, self.target):
            return None
        return fused_requantize(op)

    def lowerer(self, op: Operation) -> TileLowerer | None:
        """The lowering of an op on the NPU (None: it stays on tensors)."""
        entry = entry_of(op)
        if entry is None or entry.lower is None or not on_npu(op, self.target):
            return None
        return entry.lower


def lower_function(function: FuncOp, target: Target) -> Statistics:
    """Lower a function's NPU layers to the tile level, each by its entry (what
    `lower-to-tile` does to every function)."""
    from irc.tiling.lowering import lower_function as lower

    return lower(function, target, TileRules(target))


def plan_memory(
    function: FuncOp, target: Target, *, zero_copy: bool = True, in_place: bool = True
) -> tuple[MemoryPlan, dict[SSAValue, int]]:
    """Bufferize a function and place its values in DDR (what `plan-ddr` does)."""
    from irc.tiling.memory import Homes, plan_function

    return plan_function(
        function,
        Homes.of(target),
        TileRules(target),
        zero_copy=zero_copy,
        in_place=in_place,
    )


def layer_of(op: Operation, name: str) -> Layer | None:
    """The layer the planner plans for an NPU op on its own (None: the op has no layer
    model of its own, or runs as another's output stage)."""
    entry = entry_of(op)
    if entry is None or entry.layer is None or fused_with(op) is not None:
        return None
    return entry.layer(op, name)


def cascade_member(op: Operation, layer: Layer, plan: Plan) -> Member | None:
    """The op as a member a cascade may take (irc/tiling/cascade.py), or None: a kind
    whose entry `cascades`, over NHWC maps of one image (a 2-D window, not a
    transposed conv, or an elementwise op over a 4-D map), with its layer and plan."""
    from irc.tiling.cascade import Member, Rows
    from irc.tiling.lowering import tensor_shape

    entry = entry_of(op)
    if entry is None or not entry.cascades or layer.batch != 1 or layer.upsample != (1, 1):
        return None
    output = fused_requantize(op)
    shape = tensor_shape((output or op).results[0])
    if len(shape) != 4 or shape[0] != 1:
        return None
    _, height, width, channels = shape
    if layer.kind == "elementwise":
        if any(len(tensor_shape(value)) != 4 for value in op.operands):
            return None
        rows = Rows(height, height)
    else:
        if len(tensor_shape(op.operands[0])) != 4:
            return None
        rows = Rows(
            height, layer.in_h, layer.kernel[0], layer.strides[0], layer.dilations[0],
            layer.pads[0],
        )  # fmt: skip
    return Member(layer, rows, width, channels, plan)


def output_of(op: Operation) -> SSAValue:
    """The tensor an NPU layer writes: its requantize's result for a MAC layer that runs
    with one."""
    requantize = fused_requantize(op)
    return (requantize or op).results[0]


__all__ = [
    "CPU",
    "NPU",
    "CommandSpec",
    "Device",
    "Entry",
    "Placement",
    "TileRules",
    "command_for",
    "command_spec",
    "command_specs",
    "device_of",
    "entries",
    "entry_of",
    "fused_requantize",
    "fused_with",
    "is_data",
    "layer_of",
    "lower_function",
    "marked_device",
    "on_npu",
    "place",
    "plan_memory",
    "reasons_of",
]
