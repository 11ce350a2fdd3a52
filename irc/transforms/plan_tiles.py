"""`plan-tiles`: choose every NPU layer's tile under the target's SRAM, and report it.

The planning step of the tile level: each layer the NPU runs gets a tile from the
cost model of `irc.tiling.planner` (SRAM with double buffering, DMA with bursts,
compute on the MAC array or vector unit), recorded on the op as the discardable
attribute `irc.tiling`, and a per-layer report gives the tile, the tile count, the
SRAM used, the DDR bytes moved, the estimated cycles and the layer's lower bound.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass

from irc import backend
from irc.diagnostics import Diagnostic, Location, Severity, emit, error
from irc.fileio import write_report
from irc.passes import option
from irc.targets import Target
from irc.tiling.alignment import AlignmentChoice, choose_alignment
from irc.tiling.cascade import CASCADE_ATTR, CascadePlan, Member, choose, force
from irc.tiling.memory import Homes, PlacementError, plan_function
from irc.tiling.planner import (
    FORCE_ATTR,
    PLAN_ATTR,
    Layer,
    LayerModel,
    NetworkBound,
    Plan,
    Tile,
    TilingError,
    element_bytes,
    layer_name,
    network_bound,
    plan_layer,
    stored_channels,
)


@dataclass(frozen=True)
class FormedCascade:
    """A cascade `plan-tiles` formed: its members' layer names and its plan."""

    names: tuple[str, ...]
    plan: CascadePlan

    @property
    def separate_bound(self) -> int:
        """The members' lower bounds as layers of their own."""
        return sum(member.plan.lower_bound for member in self.plan.members)

    def to_json(self) -> dict[str, object]:
        plan = self.plan
        return {
            "members": list(self.names),
            "stripe": plan.stripe,
            "stripes": len(plan.stripes),
            "cores": plan.cores,
            "rolling_rows": [rows for _, rows in plan.rolling],
            "sram_bytes": plan.sram_bytes,
            "cycles": plan.cycles,
            "separate_cycles": plan.separate_cycles,
            "ddr_bytes": plan.ddr_read + plan.ddr_written,
            "separate_ddr_bytes": plan.separate_bytes,
        }


@dataclass
class TilingReport:
    """Every planned layer of a module, in program order."""

    target: str
    sram_bytes: int
    plans: list[Plan] = field(default_factory=list)
    alignments: list[AlignmentChoice] = field(default_factory=list)
    """Every tensor whose channel stride padding could speed up, and the decision."""
    cascades: list[FormedCascade] = field(default_factory=list)
    """The cascades formed (`cascades=true`), in program order."""
    network: NetworkBound | None = None
    """The network's own bound (irc.tiling.planner.network_bound): what the layers'
    bounds, which count every tensor's trip to memory, do not assume."""

    @property
    def cycles(self) -> int:
        """The layers' estimated cycles, each cascade's in place of its members'."""
        saved = sum(c.plan.separate_cycles - c.plan.cycles for c in self.cascades)
        return sum(plan.cycles for plan in self.plans) - saved

    @property
    def lower_bound(self) -> int:
        """The layers' lower bounds, each as a layer of its own."""
        return sum(plan.lower_bound for plan in self.plans)

    @property
    def schedule_bound(self) -> int:
        """The lower bound of the schedule planned: the layers' bounds, each cascade's
        in place of its members' (which count the tensors it keeps in SRAM)."""
        inside = sum(c.plan.lower_bound - c.separate_bound for c in self.cascades)
        return self.lower_bound + inside

    @property
    def peak_sram(self) -> int:
        """The most SRAM a layer or a cascade uses."""
        sizes = [plan.sram_bytes for plan in self.plans]
        return max([*sizes, *(cascade.plan.sram_bytes for cascade in self.cascades)], default=0)

    def to_json(self) -> str:
        """The report as JSON (keys sorted, one layer per entry)."""
        layers = [
            {
                "name": plan.layer.name,
                "op": plan.layer.op,
                "kind": plan.layer.kind,
                "tile": [plan.tile.rows, plan.tile.columns, plan.tile.channels, plan.tile.depth],
                "tiles": list(plan.counts),
                "order": plan.order,
                "cores": plan.cores,
                "split": plan.split,
                "double_buffered": plan.double_buffered,
                "sram_bytes": plan.sram_bytes,
                "buffers": plan.buffers,
                "sram_offsets": {name: list(v) for name, v in plan.sram_offsets.items()},
                "ddr_read": plan.ddr_read,
                "ddr_written": plan.ddr_written,
                "compute_cycles": plan.compute_cycles,
                "load_cycles": plan.load_cycles,
                "store_cycles": plan.store_cycles,
                "cycles": plan.cycles,
                "lower_bound": plan.lower_bound,
            }
            for plan in self.plans
        ]
        alignments = [
            {
                "tensor": choice.tensor,
                "channels": choice.channels,
                "stored": choice.stored,
                "padded": choice.padded,
                "cycles": choice.cycles,
                "padded_cycles": choice.padded_cycles,
                "extra_bytes": choice.extra_bytes,
                "layers": list(choice.layers),
            }
            for choice in self.alignments
        ]
        data = {
            "alignment": alignments,
            "cascades": [cascade.to_json() for cascade in self.cascades],
            "target": self.target,
            "sram_bytes": self.sram_bytes,
            "cycles": self.cycles,
            "lower_bound": self.lower_bound,
            "schedule_bound": self.schedule_bound,
            "network_bound": self.network.cycles if self.network is not None else None,
            "peak_sram": self.peak_sram,
            "layers": layers,
        }
        return json.dumps(data, indent=2, sort_keys=True) + "\n"

    def to_text(self) -> str:
        """The report as a table, one layer per line."""
        header = (
            f"{'layer':<28} {'op':<22} {'tile HxWxC/K':<16} {'tiles':>6} {'order':<7} "
            f"{'SRAM':>9} {'DDR read':>10} {'DDR write':>10} {'cycles':>10} "
            f"{'bound':>10} {'eff':>5}"
        )
        lines = [
            f"tiling for {self.target} (SRAM {self.sram_bytes} bytes): "
            f"{len(self.plans)} layers, {self.cycles} cycles estimated, "
            f"lower bound {self.schedule_bound}, peak SRAM {self.peak_sram} bytes"
            + (
                f"; the network's bound {self.network.cycles} (ideal compute "
                f"{self.network.compute}, compulsory traffic {self.network.traffic})"
                if self.network is not None
                else ""
            ),
            header,
        ]
        for plan in self.plans:
            buffering = "" if plan.double_buffered else " (single)"
            lines.append(
                f"{plan.layer.name[:28]:<28} {plan.layer.op:<22} {plan.tile!s:<16} "
                f"{plan.tile_count:>6} {plan.order:<7} {plan.sram_bytes:>9} "
                f"{plan.ddr_read:>10} {plan.ddr_written:>10} {plan.cycles:>10} "
                f"{plan.lower_bound:>10} {plan.efficiency:>5.0%}{buffering}"
            )
        if self.alignments:
            lines.append(
                "channel alignment (pad a tensor's channels to whole DMA bursts where it "
                "saves cycles):"
            )
        for choice in self.alignments:
            verdict = "padded" if choice.padded else "kept"
            lines.append(
                f"  {choice.tensor[:28]:<28} {choice.channels} -> {choice.stored} channels: "
                f"{choice.cycles} cycles as is, {choice.padded_cycles} padded "
                f"(+{choice.extra_bytes} DDR bytes): {verdict}"
            )
        if self.cascades:
            lines.append(
                "cascades (layers run stripe by stripe, their intermediate tensors in SRAM "
                "rolling buffers):"
            )
        for cascade in self.cascades:
            formed = cascade.plan
            rolling = ", ".join(str(rows) for _, rows in formed.rolling)
            lines.append(
                f"  {' -> '.join(cascade.names)}: {len(formed.stripes)} stripes of "
                f"{formed.stripe} rows"
                f"{f' on {formed.cores} cores' if formed.cores > 1 else ''}, rolling buffers "
                f"of {rolling} rows, SRAM "
                f"{formed.sram_bytes}; {formed.cycles} cycles against "
                f"{formed.separate_cycles} apart, {formed.ddr_read + formed.ddr_written} "
                f"bytes moved against {formed.separate_bytes}"
            )
        return "\n".join(lines) + "\n"

    def write(self, path: Path | str) -> None:
        """Write the report atomically: JSON for `.json`, else text."""
        write_report(path, self.to_json, self.to_text, "tiling report", "plan-tiles{report=PATH}")


def _forced_tile(op: Operation, default: tuple[int, ...]) -> Tile | None:
    attribute = op.attributes.get(FORCE_ATTR)
    sizes: tuple[int, ...] = default
    if attribute is not None:
        if not isinstance(attribute, DenseArrayBase):
            raise error(
                f"'{FORCE_ATTR}' must be array<i64: rows, columns, channels, depth>",
                op,
            )
        sizes = tuple(int(v) for v in attribute.get_values())
    if not sizes:
        return None
    if len(sizes) != 4 or min(sizes) < 1:
        raise error(
            f"a tile is 4 positive sizes (rows, columns, channels, depth), got {list(sizes)}",
            op,
            hint=f"plan-tiles{{tile-sizes=8,56,64,32}} or {FORCE_ATTR} = array<i64: 8, 56, 64, 32>",
        )
    return Tile(*sizes)


def _plan_attribute(plan: Plan) -> DictionaryAttr:
    tile = plan.tile
    return DictionaryAttr(
        {
            "tile": DenseArrayBase.from_list(
                i64, [tile.rows, tile.columns, tile.channels, tile.depth]
            ),
            "tiles": DenseArrayBase.from_list(i64, list(plan.counts)),
            "order": StringAttr(plan.order),
            "double_buffered": BoolAttr.from_bool(plan.double_buffered),
            "sram": IntegerAttr(plan.sram_bytes, i64),
            "sram_offsets": DictionaryAttr(
                {
                    name: DenseArrayBase.from_list(i64, list(offsets))
                    for name, offsets in plan.sram_offsets.items()
                }
            ),
            "ddr_read": IntegerAttr(plan.ddr_read, i64),
            "ddr_written": IntegerAttr(plan.ddr_written, i64),
            "cycles": IntegerAttr(plan.cycles, i64),
            "lower_bound": IntegerAttr(plan.lower_bound, i64),
            # The weights copied into the fastest memory of activations (only when so,
            # which keeps other plans' attributes as they were).
            **({"staged": BoolAttr.from_bool(True)} if plan.staged else {}),
            # Split across cores (only on several: one-core plans keep their
            # attributes), with what the split cuts and the one-core estimate.
            **(
                {
                    "cores": IntegerAttr(plan.cores, i64),
                    "split": StringAttr(plan.split),
                    "one_core_cycles": IntegerAttr(plan.one_core_cycles, i64),
                }
                if plan.cores > 1
                else {}
            ),
        }
    )


def plan_module(
    module: ModuleOp,
    target: object,
    tile_sizes: tuple[int, ...] = (),
    align_channels: bool = True,
    cascades: bool = False,
    cascade_stripe: int = 0,
    split_cores: bool = False,
    layer_cores: int = 0,
    predict_memories: bool = False,
) -> TilingReport:
    """Plan every NPU layer of `module` for `target`, decide channel alignment
    (`irc.tiling.alignment`) and, with `cascades`, which chains of layers run as
    cascades (`irc.tiling.cascade`; with `cascade_stripe`, every chain that fits in
    stripes of that height, whatever its cost), annotate the ops, and report. With
    `split_cores`, every layer of several tiles is split across the target's cores,
    whatever its cost (tests); with `layer_cores`, a layer or cascade uses at most that
    many of them (1: every layer on one core, for frames that take turns on the
    cores); with `predict_memories`, each layer's transfers are costed in the memory
    its tensors are predicted to live in (`_predicted_memories`)."""
    assert isinstance(target, Target)
    if 0 < layer_cores < target.cores.count:
        target = replace(target, cores=replace(target.cores, count=layer_cores))
    report = TilingReport(target.name, target.scratch.size_bytes)
    failures: list[Diagnostic] = []
    plans: dict[Operation, Plan] = {}
    names: dict[Operation, str] = {}
    memories = _predicted_memories(module, target) if predict_memories else {}
    for op in module.walk():
        if not backend.on_npu(op, target):
            continue
        location = Location.of(op)
        try:
            names[op] = layer_name(op)
            layer = backend.layer_of(op, names[op])
            if layer is None:
                continue
            if memories:
                layer = replace(
                    layer,
                    in_memory=memories.get(op.operands[0], ""),
                    out_memory=memories.get(backend.output_of(op), ""),
                )
            plans[op] = plan_layer(layer, target, _forced_tile(op, tile_sizes))
        except TilingError as failure:
            failures.append(
                Diagnostic(
                    str(failure),
                    location,
                    hint="choose a target with more SRAM, or keep this layer on the CPU",
                )
            )
    if failures:
        from irc.diagnostics import IrcError

        raise IrcError(failures)
    if align_channels:
        for function in [o for o in module.ops if isinstance(o, FuncOp)]:
            if function.body.blocks.first is not None:
                report.alignments += choose_alignment(
                    function, plans, target, names, backend.TileRules(target), _layer_model
                )
    if split_cores:
        plans = {op: _split_everywhere(plan, target) for op, plan in plans.items()}
    for op, plan in plans.items():
        op.attributes[PLAN_ATTR] = _plan_attribute(plan)
        report.plans.append(plan)
    report.network = _network_bound(module, list(plans.values()), target)
    if cascades and not tile_sizes:
        for function in [o for o in module.ops if isinstance(o, FuncOp)]:
            if function.body.blocks.first is not None:
                report.cascades += _form_cascades(
                    function, plans, names, target, len(report.cascades), cascade_stripe
                )
    changed = {}
    for function in [o for o in module.ops if isinstance(o, FuncOp)]:
        changed.update(_hide_staging(function, plans, target, tile_sizes))
    if target.cores.count > 1 and not split_cores:
        for function in [o for o in module.ops if isinstance(o, FuncOp)]:
            if function.body.blocks.first is not None:
                changed.update(assign_cores(function, plans, report.cascades, target))
    report.plans = [changed.get(plan.layer.name, plan) for plan in report.plans]
    return report


@dataclass
class _Unit:
    """A layer, or a cascade as one, as `assign_cores` schedules it."""

    ops: list[Operation]
    cycles: int
    cores: int
    """The cores it is split across (1: it runs on one, to be chosen)."""
    depends: set[int] = field(default_factory=set)
    """The units it reads the results of (through any ops between)."""


def assign_cores(
    function: FuncOp,
    plans: dict[Operation, Plan],
    cascades: Sequence[FormedCascade],
    target: Target,
) -> dict[str, Plan]:
    """Choose the core of every layer (or cascade) that runs on one: in program order,
    each goes to the core where its estimated cycles would end first, given when each
    core's queues are free (the units before it there) and when the units whose
    results it reads end (plus the target's `sync_latency_cycles` from another core);
    a unit split across the cores starts when all are free. Ties keep core 0, so a
    chain of layers stays on one core, and a branch that does not need what core 0 is
    running (an Inception branch, a residual block's projection shortcut) runs beside
    it. Records `core` in the op's `irc.tiling` (a cascade's members: in their
    `irc.cascade`) where it is not 0; returns the standalone plans it moved."""
    block = function.body.blocks.first
    assert block is not None
    units: list[_Unit] = []
    unit_of: dict[Operation, int] = {}
    groups: dict[int, int] = {}
    for op in block.ops:
        if op not in plans:
            continue
        cascade = op.attributes.get(CASCADE_ATTR)
        if isinstance(cascade, DictionaryAttr):
            group = int(cascade.data["group"].value.data)  # type: ignore[attr-defined]
            if group not in groups:
                formed = cascades[group].plan
                groups[group] = len(units)
                units.append(_Unit([], formed.cycles, formed.cores))
            unit_of[op] = groups[group]
            units[groups[group]].ops.append(op)
        else:
            unit_of[op] = len(units)
            units.append(_Unit([op], plans[op].cycles, plans[op].cores))
    # What each value depends on: the units whose results reach it.
    reaches: dict[SSAValue, frozenset[int]] = {}
    for op in block.ops:
        inputs = frozenset().union(*(reaches.get(value, frozenset()) for value in op.operands))
        if op in unit_of:
            index = unit_of[op]
            units[index].depends |= inputs - {index}
            inputs = frozenset({index})
        for result in op.results:
            reaches[result] = inputs
    count, latency = target.cores.count, target.cores.sync_latency_cycles
    free, ends, cores = [0] * count, [0] * len(units), [0] * len(units)
    for index, unit in enumerate(units):
        if unit.cores > 1:
            start = max([*free[: unit.cores], *(ends[d] + latency for d in unit.depends)])
            ends[index] = start + unit.cycles
            free[: unit.cores] = [ends[index]] * unit.cores
            cores[index] = -1  # on every core: a reader on any core waits across cores
            continue

        def finish(core: int, unit: _Unit = unit) -> int:
            ready = [ends[d] + (latency if cores[d] != core else 0) for d in unit.depends]
            return max([free[core], *ready]) + unit.cycles

        cores[index] = min(range(count), key=lambda core: (finish(core), core))
        ends[index] = free[cores[index]] = finish(cores[index])
    moved: dict[str, Plan] = {}
    for index, unit in enumerate(units):
        core = cores[index]
        if core <= 0:
            continue
        for op in unit.ops:
            attribute = CASCADE_ATTR if CASCADE_ATTR in op.attributes else PLAN_ATTR
            recorded = op.attributes[attribute]
            assert isinstance(recorded, DictionaryAttr)
            op.attributes[attribute] = DictionaryAttr(
                {**recorded.data, "core": IntegerAttr(core, i64)}
            )
            mine = plans[op]
            note = f"on core {core}: it does not wait for what runs on core 0 then"
            plans[op] = moved[mine.layer.name] = replace(
                mine,
                core=core,
                cores_note=f"{mine.cores_note}; {note}" if mine.cores_note else note,
            )
    return moved


def _predicted_memories(module: ModuleOp, target: Target) -> dict[SSAValue, str]:
    """Where memory planning (irc/tiling/memory.py, run later by plan-ddr) would put
    each tensor of `module` as it stands, when the target's placement has more than
    one memory of activations: a layer's loads and stores are costed at the memory its
    tensors will live in, not the slowest one (an Ethos-U65's 384 KB SRAM holds most
    of a MobileNetV2's feature maps; its DRAM the rest). Cascades, decided later,
    only free memory. Empty with one memory of activations, or when the tensors do
    not fit (plan-ddr reports that)."""
    if len(target.placement.activations) < 2:
        return {}
    homes = Homes.of(target)
    memories: dict[SSAValue, str] = {}
    for function in [o for o in module.ops if isinstance(o, FuncOp)]:
        if function.body.blocks.first is None:
            continue
        try:
            plan, index_of = plan_function(function, homes, backend.TileRules(target))
        except PlacementError:
            continue
        for value, index in index_of.items():
            if plan.values[index].memory:
                memories[value] = plan.values[index].memory
    return memories


def _split_everywhere(plan: Plan, target: Target) -> Plan:
    """`plan` split across the target's cores, if it has several tiles to share."""
    split, cores = LayerModel(plan.layer, target).split(plan.order, plan.counts)
    if cores < 2:
        return plan
    return replace(
        plan,
        cores=cores,
        split=split,
        cores_note=f"split over {split} on {cores} cores, as asked (split-cores)",
    )


def _hide_staging(
    function: FuncOp,
    plans: dict[Operation, Plan],
    target: Target,
    tile_sizes: tuple[int, ...] = (),
) -> dict[str, Plan]:
    """Keep a layer's staged weights (`Plan.staged`) only where that is faster counting
    the part of the copy the layer before does not hide: the copy runs beside it, on
    the weights' memory's port, which that layer leaves idle for its cycles less its
    own use of the port (none after a cascade, whose use the plan does not split);
    else the layer's plan apart (its forced tile, if it has one). The plans changed,
    by layer name (re-recorded on their ops)."""
    block = function.body.blocks.first
    if block is None:
        return {}
    changed: dict[str, Plan] = {}
    slack = 0
    for op in block.ops:
        plan = plans.get(op)
        if plan is None:
            continue
        if CASCADE_ATTR in op.attributes:
            slack = 0
            continue
        model = LayerModel(plan.layer, target, stage=plan.staged)
        if plan.staged:
            exposed = max(model.stage_copy()[0] - slack, 0)
            forced = _forced_tile(op, tile_sizes)
            apart = plan_layer(plan.layer, target, forced, stage=False)
            if plan.cycles + exposed >= apart.cycles:
                plan, model = apart, LayerModel(plan.layer, target)
            else:
                plan = replace(plan, cycles=plan.cycles + exposed)
            plans[op] = plan
            changed[plan.layer.name] = plan
            op.attributes[PLAN_ATTR] = _plan_attribute(plan)
        slack = max(plan.cycles - model.weights_port_cycles(plan), 0)
    return changed


def _form_cascades(
    function: FuncOp,
    plans: dict[Operation, Plan],
    names: dict[Operation, str],
    target: Target,
    first_group: int,
    stripe: int = 0,
) -> list[FormedCascade]:
    """Find the layers a cascade may take and which of them read which, choose the
    cascades to form by cost (`irc.tiling.cascade.choose`), and record them:
    `irc.cascade` on each member, its plan in the cascade as its `irc.tiling`."""
    block = function.body.blocks.first
    assert block is not None
    candidates: list[Operation] = []
    members: list[Member] = []
    for op in block.ops:
        if op in plans and FORCE_ATTR not in op.attributes:
            member = backend.cascade_member(op, plans[op].layer, plans[op])
            if member is not None:
                candidates.append(op)
                members.append(member)
    position = {op: index for index, op in enumerate(candidates)}
    reads: list[list[int]] = [[] for _ in candidates]
    closed: list[bool] = []
    for index, op in enumerate(candidates):
        value = backend.output_of(op)
        users = [use.operation for use in value.uses]
        chained = [user for user in users if user in position and _reads_as_chain(user, value)]
        closed.append(bool(users) and len(chained) == len(users) and not stored_channels(value))
        for user in dict.fromkeys(chained):
            reads[position[user]].append(index)
    formed: list[FormedCascade] = []
    chosen = (
        force(members, reads, closed, target, stripe)
        if stripe
        else choose(members, reads, closed, target)
    )
    for start, plan in chosen:
        ops = candidates[start : start + len(plan.members)]
        group = first_group + len(formed)
        for index, (op, member_plan) in enumerate(zip(ops, plan.member_plans(target))):
            op.attributes[PLAN_ATTR] = _plan_attribute(member_plan)
            op.attributes[CASCADE_ATTR] = _cascade_attribute(plan, group, index)
        formed.append(FormedCascade(tuple(names[op] for op in ops), plan))
    return formed


def _network_bound(module: ModuleOp, plans: list[Plan], target: Target) -> NetworkBound:
    """The bound of the module's planned layers, with its functions' arguments and
    results as the model's inputs and outputs."""
    inputs = outputs = 0
    for function in [o for o in module.ops if isinstance(o, FuncOp)]:
        block = function.body.blocks.first
        if block is None:
            continue
        inputs += sum(_tensor_bytes(argument.type) for argument in block.args)
        returned = block.last_op
        if returned is not None:
            outputs += sum(_tensor_bytes(value.type) for value in returned.operands)
    return network_bound([plan.layer for plan in plans], target, inputs, outputs)


def _tensor_bytes(value_type: Attribute) -> int:
    if not isinstance(value_type, TensorType):
        return 0
    return math.prod(value_type.get_shape()) * element_bytes(value_type)


def _reads_as_chain(user: Operation, value: SSAValue) -> bool:
    """`user` reads `value` once, as an input whose rows its window reads (a conv's or
    a pool's first operand; an elementwise op's operand of its output's shape, not one
    it broadcasts)."""
    positions = [index for index, operand in enumerate(user.operands) if operand == value]
    if len(positions) != 1:
        return False
    layer = backend.layer_of(user, "")
    if layer is not None and layer.kind == "elementwise":
        return _shape_of(value) == _shape_of(backend.output_of(user))
    return positions == [0]


def _shape_of(value: SSAValue) -> tuple[int, ...]:
    value_type = value.type
    return tuple(value_type.get_shape()) if isinstance(value_type, TensorType) else ()


def _cascade_attribute(plan: CascadePlan, group: int, index: int) -> DictionaryAttr:
    member = plan.members[index]
    rows = member.rows
    entries: dict[str, Attribute] = {
        "group": IntegerAttr(group, i64),
        "index": IntegerAttr(index, i64),
        "members": IntegerAttr(len(plan.members), i64),
        "stripe": IntegerAttr(plan.stripe, i64),
        "window": DenseArrayBase.from_list(
            i64, [rows.out_h, rows.in_h, rows.kernel, rows.stride, rows.dilation, rows.pad_top]
        ),
        "reads": DenseArrayBase.from_list(i64, list(plan.sources[index])),
    }
    if index < len(plan.rolling):
        entries["rolling"] = DenseArrayBase.from_list(i64, list(plan.rolling[index]))
    if plan.cores > 1:
        entries["cores"] = IntegerAttr(plan.cores, i64)
    return DictionaryAttr(entries)


def _layer_model(op: Operation, name: str) -> Layer:
    layer = backend.layer_of(op, name)
    assert layer is not None, "a planned op has a layer"
    return layer


@dataclass(frozen=True)
class PlanTilesPass(ModulePass):
    """Choose each NPU layer's tile under the target's SRAM and record it as `irc.tiling`.

    Every layer on the NPU (as `partition` placed it, `irc.device`; in a module never
    partitioned, as the backend table places it) whose kind has a layer model in the
    backend table (convs, grouped and depthwise included, gemms, matmuls, pooling and
    elementwise ops, at the `qnn` level, a MAC layer with the `qnn.requantize` of its
    accumulator, or the float `nn` level) gets the fastest tile that fits the SRAM by the cost model of
    docs/tiling.md: output rows x columns x channels from `depth` input channels,
    double buffered when it fits (or the whole layer in one tile, single buffered,
    when that is faster), with the loop order that moves less. The plan is
    recorded on the op as a discardable attribute, and `report=FILE` writes the
    per-layer report (JSON for `.json`, else a table). A tile can be forced for every
    layer with `tile-sizes=rows,columns,channels,depth`, or for one op with the
    attribute `irc.tile_sizes = array<i64: ...>` (sizes above a dimension are clamped
    to it). A layer that cannot fit even with one output element per tile is an error
    giving the SRAM it needs.

    With `cascades=true` (irc-compile's -O2), chains of layers (convs, pools,
    elementwise ops, each reading earlier ones that nothing else reads) run as
    cascades where the cost model finds that faster than the layers apart: stripe by
    stripe, their intermediate tensors in rolling SRAM buffers (irc/tiling/cascade.py,
    docs/tiling.md "Cascades"). Each member gets `irc.cascade` (its group, place,
    stripe height, row window, the members it reads, its rolling buffer) and its plan
    in the cascade as `irc.tiling`; the report lists the cascades. `cascade-stripe=N`
    forms every cascade that fits in stripes of N rows, whatever its cost (tests).

    On a placement of several memories of activations (a system SRAM, then DRAM),
    each layer's loads and stores are costed in the slowest of them (a tensor may end
    up there); with `predict-memories=true`, in the memory where memory planning (run
    first on the function as it stands) puts its input and output.

    On a target of several cores (`[cores]`), each layer's plan is costed on one core
    and split across the cores (by output channels, batch, rows or columns; a
    cascade by runs of stripes), and the split is kept where it is faster (`cores`
    and `split` in its `irc.tiling`; docs/tiling.md, "Cores"). `layer-cores=N` splits
    a layer across N cores at most: with 1, every layer runs on one core, and
    streamed frames take turns on the cores (docs/simulator.md). `split-cores=true`
    splits every layer of several tiles, whatever its cost (tests).

    On a target whose weights live in a memory slower than the first memory of
    activations (flash or DRAM beside a system SRAM), a conv's plan may stage its
    weights (`staged = true` in its `irc.tiling`): copied whole into the system SRAM
    while the planned layer before runs, where that stays faster with the part of the
    copy that layer cannot hide (docs/tiling.md, "Staged weights").

    ```mlir
    %acc = qnn.conv %x, %w, %b {layout = "nhwc", pads = [1, 1, 1, 1]} : (tensor<1x56x56x32x!quant.uniform<i8:f32, 0.1>>, ...) -> tensor<1x56x56x64xi32>
    // with --target=npu-demo becomes
    %acc = qnn.conv %x, %w, %b {layout = "nhwc", pads = [1, 1, 1, 1]} {irc.tiling = {tile = array<i64: 2, 56, 32, 32>, tiles = array<i64: 28, 1, 2, 1>, order = "weights", double_buffered = true, sram = 41088 : i64, cycles = 239820 : i64, lower_bound = 225792 : i64, ...}} : ...
    ```
    """

    name = "plan-tiles"

    target: str = option("", "the target: a preset name or a TOML file (default: irc-opt --target)")
    report: str = option(
        "", "write the per-layer tiling report to this file (JSON if it ends in .json)"
    )
    tile_sizes: tuple[int, ...] = option(
        (), "force every layer's tile: rows,columns,channels,depth (for tests)"
    )
    align_channels: bool = option(
        True, "pad a tensor's stored channels to whole DMA bursts where it saves cycles"
    )
    cascades: bool = option(
        False,
        "run chains of layers as cascades, stripe by stripe with their intermediate "
        "tensors in SRAM, where that is faster",
    )
    cascade_stripe: int = option(
        0,
        "with cascades: form every cascade that fits in stripes of this many rows, "
        "whatever its cost (for tests)",
    )
    split_cores: bool = option(
        False,
        "on a target of several cores, split every layer of several tiles across them, "
        "whatever its cost (for tests)",
    )
    predict_memories: bool = option(
        False,
        "on several memories of activations, cost each layer's transfers in the memory "
        "memory planning predicts for its tensors, not the slowest",
    )
    layer_cores: int = option(
        0,
        "the most cores one layer or cascade is split across (0: all the target's; 1: "
        "every layer on one core, so that streamed frames take turns on the cores)",
    )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.run(op)

    def run(self, op: ModuleOp) -> TilingReport:
        """What `apply` does, returning the report (which irc-compile keeps)."""
        from irc.passes import PIPELINE_FILE
        from irc.targets import require_target

        if self.tile_sizes and (len(self.tile_sizes) != 4 or min(self.tile_sizes) < 1):
            raise error(
                f"tile-sizes takes 4 positive sizes (rows,columns,channels,depth), "
                f"got {list(self.tile_sizes)}",
                Location(file=PIPELINE_FILE),
                hint="plan-tiles{tile-sizes=8,56,64,32}",
            )
        target = require_target(self.name, self.target or None)
        if self.cascade_stripe < 0:
            raise error(
                f"cascade-stripe takes a number of rows (0: chosen by cost), got "
                f"{self.cascade_stripe}",
                Location(file=PIPELINE_FILE),
                hint="plan-tiles{cascades=true cascade-stripe=4}",
            )
        if not 0 <= self.layer_cores <= target.cores.count:
            raise error(
                f"layer-cores takes 0 (all of them) to the {target.cores.count} "
                f"{'core' if target.cores.count == 1 else 'cores'} of {target.name}, got "
                f"{self.layer_cores}",
                Location(file=PIPELINE_FILE),
                hint="plan-tiles{layer-cores=1}",
            )
        report = plan_module(
            op,
            target,
            tuple(self.tile_sizes),
            self.align_channels,
            self.cascades,
            self.cascade_stripe,
            self.split_cores,
            self.layer_cores,
            self.predict_memories,
        )
        if self.report:
            report.write(self.report)
        anchor = next(iter(o for o in op.walk() if isinstance(o, FuncOp)), op)
        emit(
            Diagnostic(
                f"plan-tiles: {len(report.plans)} layers for {report.target}, "
                f"{report.cycles} cycles estimated (lower bound {report.schedule_bound}), "
                f"peak SRAM {report.peak_sram} of {report.sram_bytes} bytes",
                Location.of(anchor),
                Severity.REMARK,
            )
        )
        return report
