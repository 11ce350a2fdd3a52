"""Channel alignment: pad a tensor's stored channels only where it pays.

An NHWC tensor of C channels of e bytes has a pixel stride of C * e bytes. When a
layer's tiles cut the channels (a channel tile narrower than C), every pixel of the
box is a DMA run of its own, and a run that starts inside a burst and ends in the
next moves a burst more (`planner.mean_bursts`). Storing the tensor with its channel
stride rounded up to whole bursts (C' = align(C * e, burst) / e channels, the extra
ones never read) makes those runs start on burst boundaries; but it also cuts the
rows of the layers that read or write all C channels at once into one run per pixel,
and it makes the buffer C' / C larger.

So the choice is made per tensor, by the cost model: for a tensor that a tiled conv
or pool writes and only tiled convs and pools read (and that shares its buffer with
nothing, see `irc.tiling.memory`), the producer and every consumer are re-costed with
their tiles unchanged and the channels stored padded; the tensor is padded when the
cycles they take together go down. Padding the SRAM tiles to the MAC array's width
never pays in this model (a ragged pass of the array costs the same as a padded one),
so SRAM tiles are never padded. Every candidate is in the report with its cycles
either way and the bytes padding adds.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import IntegerAttr, TensorType, i64
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue

from irc.tiling import memory
from irc.tiling.planner import STORED_CHANNELS_ATTR, Layer, Plan, element_bytes, plan_layer

if TYPE_CHECKING:
    from irc.targets import Target


@dataclass(frozen=True)
class AlignmentChoice:
    """One tensor whose channel stride could be padded, and what the model says."""

    tensor: str
    channels: int
    stored: int
    """The channels it would be stored with (a whole number of bursts per pixel)."""
    padded: bool
    cycles: int
    """Its producer's and consumers' cycles as stored unpadded."""
    padded_cycles: int
    """The same layers' cycles with the channels padded (tiles unchanged)."""
    extra_bytes: int
    """The DDR bytes padding adds to the tensor's buffer."""
    layers: tuple[str, ...]


LayerModel = Callable[[Operation, str], Layer]
"""The planner's view of an op (the backend table's layer model)."""


def _nhwc_layer(op: Operation, plans: dict[Operation, Plan]) -> bool:
    """A planned conv (not transposed) or pool on a rank-4 NHWC tensor, whose boxes
    the lowering copies."""
    plan = plans.get(op)
    if plan is None:
        return False
    layer = plan.layer
    windowed = layer.kind == "pool" or (layer.conv_steps and layer.upsample == (1, 1))
    value_type = op.operands[0].type
    return (
        windowed
        and layer.channels_last
        and isinstance(value_type, TensorType)
        and len(value_type.get_shape()) == 4
    )


def _written_by(value: SSAValue, kinds: memory.OpKinds) -> Operation | None:
    """The layer that writes `value`: its defining op, or the MAC layer whose
    requantize defines it (they run as one layer)."""
    owner = value.owner
    if not isinstance(owner, Operation):
        return None
    if owner.operands:
        producer = owner.operands[0].owner
        if isinstance(producer, Operation) and kinds.requantized_with(producer) is owner:
            return producer
    return owner


def choose_alignment(
    function: FuncOp,
    plans: dict[Operation, Plan],
    target: Target,
    names: dict[Operation, str],
    kinds: memory.OpKinds,
    layer_model: LayerModel,
) -> list[AlignmentChoice]:
    """Decide which tensors of `function` to store with padded channels; update the
    plans of the layers involved and mark each padded tensor's defining op with
    `irc.stored_channels`. Returns every candidate, padded or not. `kinds` and
    `layer_model` are the backend table's."""
    burst = target.activation_memories[-1].burst_bytes  # the slowest, where it counts
    values, index_of = memory.function_values(function, kinds)
    hosts: set[int] = {value.parent for value in values if value.parent is not None}
    block = function.body.blocks.first
    assert block is not None
    choices: list[AlignmentChoice] = []
    for op in list(block.ops):
        for value in op.results:
            choice = _consider(
                value, plans, target, names, burst, values, index_of, hosts, kinds, layer_model
            )
            if choice is not None:
                choices.append(choice)
    return choices


def _consider(
    value: SSAValue,
    plans: dict[Operation, Plan],
    target: Target,
    names: dict[Operation, str],
    burst: int,
    values: list[memory.Value],
    index_of: dict[SSAValue, int],
    hosts: set[int],
    kinds: memory.OpKinds,
    layer_model: LayerModel,
) -> AlignmentChoice | None:
    value_type = value.type
    if not isinstance(value_type, TensorType) or len(value_type.get_shape()) != 4:
        return None
    producer = _written_by(value, kinds)
    if producer is None or not _nhwc_layer(producer, plans):
        return None
    index = index_of.get(value)
    if index is None or values[index].role != "own" or index in hosts:
        return None
    uses = list(value.uses)
    if not uses or any(not _nhwc_layer(use.operation, plans) or use.index != 0 for use in uses):
        return None
    consumers = [use.operation for use in uses]
    size = element_bytes(value_type)
    n, h, w, channels = value_type.get_shape()
    if (channels * size) % burst == 0 or burst % size:
        return None
    stored = -(-channels * size // burst) * burst // size
    layers = [producer, *dict.fromkeys(consumers)]
    before = sum(plans[layer].cycles for layer in layers)
    owner = value.owner
    assert isinstance(owner, Operation)
    owner.attributes[STORED_CHANNELS_ATTR] = IntegerAttr(stored, i64)
    replanned = {
        layer: _replan(layer, plans[layer], target, names, layer_model) for layer in layers
    }
    after = sum(plan.cycles for plan in replanned.values())
    padded = after < before
    if padded:
        plans.update(replanned)
    else:
        del owner.attributes[STORED_CHANNELS_ATTR]
    return AlignmentChoice(
        tensor=value.name_hint or names.get(producer, producer.name),
        channels=channels,
        stored=stored,
        padded=padded,
        cycles=before,
        padded_cycles=after,
        extra_bytes=math.prod((n, h, w, stored - channels)) * size,
        layers=tuple(names.get(layer, layer.name) for layer in layers),
    )


def _replan(
    op: Operation,
    plan: Plan,
    target: Target,
    names: dict[Operation, str],
    layer_model: LayerModel,
) -> Plan:
    """The plan of `op` with its tile kept, re-costed with the tensors as now stored."""
    layer = layer_model(op, names.get(op, op.name))
    replanned = plan_layer(layer, target, plan.tile)
    return replace(replanned, layer=replace(replanned.layer, name=plan.layer.name))
