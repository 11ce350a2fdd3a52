"""`partition`: place every op on the target's NPU or on the host CPU, and make every
copy between the two memories explicit; outline the NPU parts into functions.

The pass works function by function, in four steps, on float `nn` IR or on the
quantized `qnn` module (where `irc-compile` runs it).

1. **Decide.** Every op that the backend table places on the NPU (`irc.backend.place`:
   the target's support table takes it, the target computes in its data types, and
   irc's lowering takes it) goes to the NPU (`mode=support`); every other op stays
   on the CPU, with its reasons. Constants are data, not computation: they follow
   their users (step 4). The `qnn.requantize` that alone reads a MAC layer's
   accumulator runs with that layer (its output stage): the two always move together.
2. **Refine** (`mode=cost` only). The cost model (below) moves NPU ops to the CPU when
   the transfers and transitions they cause cost more than running them on the NPU
   gains; see `refine_by_cost`.
3. **Group.** The NPU ops are grouped into subgraphs that are convex: no path leaves a
   subgraph through a CPU op and comes back into it, so outlining each as a function
   call cannot create a cycle. The grouping alternates phases over the dataflow graph
   (`schedule`): a phase runs every op of one device that is ready, then the other
   device's phase runs, and so on; an NPU phase is one subgraph. An op on a path
   out of a phase and back would need a CPU op to run inside the phase, so every
   phase is convex; running each op in the earliest phase it can makes the number of
   phases, hence of NPU subgraphs and transitions, the smallest possible for the
   device that runs first, and both first devices are tried. A phase may hold
   several unconnected parts (parallel branches): they run in one call.
4. **Outline** (`outline=true`, the default). Each NPU subgraph becomes `func.func private @<parent>_npu<N>` with the
   attribute `irc.device = "npu"`, called from the parent with `func.call`. A value
   computed on the CPU (or a function argument) that an NPU subgraph reads is copied
   once by `part.transfer {to = "npu"}` before the first call that reads it; a value
   an NPU subgraph computes that the CPU reads (or the function returns) is copied
   once by `part.transfer {to = "cpu"}` after the call; a value passed from one NPU
   subgraph to a later one stays in NPU memory (no transfer). Constants are
   duplicated, never transferred: each NPU function gets its own copy of every
   constant it reads (weights are part of the compiled model for either memory, so a
   run-time copy would only cost), and a constant stays in the parent only if CPU
   code there reads it.

With `outline=false` (what `irc-compile` runs) the ops stay in their function, put in
the order of their phases (so that each CPU phase is one stretch of host ops): each is
marked `irc.device = "npu"` or `"cpu"`, each CPU op also `irc.reason = "..."` (its
reasons, `; `-separated), and every value crossing between the two gets its
`part.transfer` right after its definition, which the readers on the other side read.
The backend passes (plan-tiles, plan-ddr, lower-to-tile, lower-to-npu) obey the marks.

A **transition** is a switch between NPU and CPU execution: each CPU phase runs as
one host call of the command stream, which costs two, one to the host and one back
(the simulator's `npu.host_call`, docs/simulator.md), wherever it is. A model with one
unsupported op in the middle has three phases (NPU, CPU, NPU) and two transitions;
one whose input quantize runs on the host has two for it as well, and a model all on
the host two. The copies of a function's inputs and outputs are input and output
transfers, counted apart.

**The cost model** (times from irc/backend/cost.py and the target's numbers; tensors
are counted as stored: int8 values at one byte, and in a float model, which will be
quantized before it runs, every float at one byte too):

- an op on the NPU, in a quantized module, takes the tile planner's cycles of its
  layer when the backend table has a layer model for it (irc/tiling/planner.py: the
  same model the simulator is checked against); otherwise (and in a float module)
  `max(macs / (macs_per_cycle * clock) + elements / (vector lanes * clock), ddr
  latency + ddr bytes / ddr bandwidth)`: DMA overlaps with compute, and the DDR bytes
  are the op's weights, plus its activations when they do not fit in SRAM together
  (`cost.op_ddr_bytes`); a view, and a MAC layer's output stage, take nothing;
- an op on the CPU takes `macs / host.macs_per_second + elements /
  host.elements_per_second`;
- every transition transfer, and every function argument a host op reads or result
  it computes, takes `bytes / host.bandwidth_bytes_per_second` (what a host call
  copies); input and output transfers take nothing, since the runtime places the
  arguments in DDR and reads the results outside the stream, as the simulator times
  it; every transition takes `host.transition_seconds` (the synchronisation of the
  two devices);
- the estimate of a function is the sum of all of these.

In `mode=cost`, each round evaluates moving to the CPU each NPU subgraph as a whole,
each connected part of one, and each NPU op at a subgraph's boundary (one that reads
a CPU value or feeds the CPU); it then applies the moves from the largest saving
down, each only if it still lowers the estimate after the moves applied before it.
Rounds repeat until no move applies (a fixpoint: the estimate strictly decreases).
Each moved op's fallback reason says what the move weighed: "moved to the CPU by the
cost model: the host computes it X us faster (or slower) than the NPU, the copies and
transitions take Y us less (or more): Z us saved", the two parts adding up to Z. An isolated supported
op between two fallback ops costs two transitions and two copies for the little it
gains, and goes to the CPU.

The pass writes a report (`report=PATH`: JSON for `.json`, text otherwise; see
irc/transforms/partition_report.py) and emits its one-line summary as a remark at the
first function with nn ops, with one note per fallback op, located at the op and
giving its reasons.

`PartitionPass`'s docstring shows the IR before and after.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Literal

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, NameLoc, StringAttr
from xdsl.dialects.func import CallOp, FuncOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import IsTerminator

from irc import backend
from irc.backend import cost
from irc.diagnostics import Diagnostic, Location, Severity, emit, error
from irc.dialects.part import TransferOp
from irc.ir.outline import boundary, outline
from irc.ir.placement import CPU, DEVICE_ATTR, NPU, REASON_ATTR
from irc.passes import option
from irc.transforms.partition_report import (
    FallbackOp,
    PartitionReport,
    SubgraphSummary,
    TransferCount,
)

if TYPE_CHECKING:
    from irc.targets import Target

Mode = Literal["support", "cost"]

MINIMUM_SAVING_SECONDS = 1e-12
"""A cost-model move must lower the estimate by more than this (a picosecond): equal
estimates, up to rounding, never move an op."""


class TransferKind(StrEnum):
    """Why a value is copied between host and NPU memory."""

    INPUT = "input"
    """A function argument copied to the NPU."""
    OUTPUT = "output"
    """A value the NPU computed that the function returns."""
    TRANSITION = "transition"
    """Any other value crossing between CPU and NPU code."""


# --------------------------------------------------------------------------------------
# The dataflow graph of a function


@dataclass
class FunctionGraph:
    """The ops of one function's body as a dataflow graph.

    `nodes` are the body's ops in program order, except constants (which follow their
    users) and the terminator; edges go from the op that defines a value to the ops
    that read it.
    """

    function: FuncOp
    block: Block
    terminator: Operation
    nodes: list[Operation]
    order: dict[Operation, int]
    predecessors: dict[Operation, list[Operation]]
    successors: dict[Operation, list[Operation]]

    @staticmethod
    def of(function: FuncOp) -> FunctionGraph:
        """The graph of `function`, which must have one block ending in a terminator."""
        blocks = list(function.body.blocks)
        if len(blocks) != 1 or blocks[0].last_op is None:
            raise error(
                f"partition handles functions of one block; @{function.sym_name.data} has "
                f"{len(blocks)}",
                function,
            )
        block = blocks[0]
        terminator = block.last_op
        assert terminator is not None
        nodes = [op for op in block.ops if op is not terminator and not _is_constant(op)]
        order = {op: index for index, op in enumerate(nodes)}
        predecessors: dict[Operation, list[Operation]] = {op: [] for op in nodes}
        successors: dict[Operation, list[Operation]] = {op: [] for op in nodes}
        for op in nodes:
            for operand in op.operands:
                producer = operand.owner
                known = isinstance(producer, Operation) and producer in order
                if known and producer not in predecessors[op]:
                    predecessors[op].append(producer)
                    successors[producer].append(op)
        return FunctionGraph(function, block, terminator, nodes, order, predecessors, successors)

    def compute_ops(self) -> list[Operation]:
        """The ops that compute (every op but constants), in program order."""
        return [op for op in self.nodes if _is_compute(op)]

    def defined_values(self) -> Iterator[SSAValue]:
        """The function's arguments, then every result of every node, in order."""
        yield from self.block.args
        for op in self.nodes:
            yield from op.results


def _is_constant(op: Operation) -> bool:
    return backend.is_data(op)


def _is_compute(op: Operation) -> bool:
    """An op that runs somewhere: not data, not a terminator."""
    return not _is_constant(op) and not op.has_trait(IsTerminator)


# --------------------------------------------------------------------------------------
# Phases, crossings, estimates


@dataclass(frozen=True)
class Phase:
    """Ops that run one after the other on one device, with no switch between them."""

    device: str
    ops: tuple[Operation, ...]
    """In program order."""


@dataclass(frozen=True)
class Crossing:
    """A value copied once between host and NPU memory."""

    value: SSAValue
    to: str
    kind: TransferKind


def schedule(graph: FunctionGraph, device: dict[Operation, str]) -> list[Phase]:
    """The phases that run the graph with the fewest NPU subgraphs, then transitions.

    Each phase takes every op of its device that is ready (all its producers have
    run), and the ops this makes ready, until none is left; then the other device's
    phase runs. Trying both devices first and keeping the better (the CPU first on
    a tie) makes the result deterministic.
    """
    best: list[Phase] | None = None
    for first in (CPU, NPU):
        phases = _phases(graph, device, first)
        if best is None or _schedule_key(phases) < _schedule_key(best):
            best = phases
    assert best is not None
    return best


def _schedule_key(phases: list[Phase]) -> tuple[int, int]:
    return (sum(phase.device == NPU for phase in phases), len(phases))


def _phases(graph: FunctionGraph, device: dict[Operation, str], first: str) -> list[Phase]:
    waiting = {op: len(graph.predecessors[op]) for op in graph.nodes}
    ready: dict[str, list[tuple[int, Operation]]] = {CPU: [], NPU: []}
    for op in graph.nodes:
        if not waiting[op]:
            ready[device[op]].append((graph.order[op], op))
    for heap in ready.values():
        heapq.heapify(heap)
    phases: list[Phase] = []
    current, scheduled, idle_rounds = first, 0, 0
    while scheduled < len(graph.nodes):
        heap = ready[current]
        taken: list[Operation] = []
        while heap:
            _, op = heapq.heappop(heap)
            taken.append(op)
            for successor in graph.successors[op]:
                waiting[successor] -= 1
                if not waiting[successor]:
                    heapq.heappush(ready[device[successor]], (graph.order[successor], successor))
        if taken:
            taken.sort(key=graph.order.__getitem__)
            phases.append(Phase(current, tuple(taken)))
            scheduled += len(taken)
            idle_rounds = 0
        else:
            idle_rounds += 1
            assert idle_rounds < 2, "a cycle in SSA dataflow"
        current = NPU if current == CPU else CPU
    return phases


def crossings(graph: FunctionGraph, device: dict[Operation, str]) -> list[Crossing]:
    """Every value that must be copied between host and NPU memory, in program order.

    A value lives where it is computed (function arguments on the host); it is copied
    once to the other memory if any op there reads it. The terminator, and any op
    outside the graph, reads on the host.
    """
    found: list[Crossing] = []
    for value in graph.defined_values():
        producer = value.owner
        home = device[producer] if isinstance(producer, Operation) else CPU
        readers: set[str] = set()
        returned = False
        for use in value.uses:
            reader = use.operation
            if reader is graph.terminator:
                returned = True
                readers.add(CPU)
            elif not _is_constant(reader):
                readers.add(device.get(reader, CPU))
        if home == CPU and NPU in readers:
            kind = (
                TransferKind.INPUT if isinstance(value, BlockArgument) else TransferKind.TRANSITION
            )
            found.append(Crossing(value, NPU, kind))
        elif home == NPU and CPU in readers:
            kind = TransferKind.OUTPUT if returned else TransferKind.TRANSITION
            found.append(Crossing(value, CPU, kind))
    return found


class OpCosts:
    """Per-op time estimates on a target, each computed once.

    In a quantized module tensors count as stored (`cost.tensor_bytes`: float ones at
    4 bytes, they stay float) and an NPU layer takes the tile planner's cycles; in a
    float module, which will be quantized before it runs, every tensor counts one
    byte an element and an op takes the formula of irc/backend/cost.py.
    """

    def __init__(self, target: Target, quantized: bool = False) -> None:
        self.target = target
        self.quantized = quantized
        self.float_bytes = 4 if quantized else cost.NPU_BYTES_PER_ELEMENT
        self._npu: dict[Operation, float] = {}
        self._host: dict[Operation, float] = {}
        self._too_large: dict[Operation, str] = {}

    def npu(self, op: Operation) -> float:
        """Seconds of `op` on the NPU (nothing for a view or a MAC layer's output stage)."""
        if op not in self._npu:
            self._npu[op] = self._npu_seconds(op)
        return self._npu[op]

    def _npu_seconds(self, op: Operation) -> float:
        entry = backend.entry_of(op)
        if backend.fused_with(op) is not None or (entry is not None and entry.view):
            return 0.0
        if self.quantized and entry is not None and entry.layer is not None:
            from irc.tiling.planner import TilingError, plan_layer

            try:
                plan = plan_layer(entry.layer(op, op.name), self.target)
            except TilingError as failure:
                self._too_large[op] = str(failure)  # the cost model keeps it on the host
            else:
                return plan.cycles / self.target.mac_array.clock_hz
        return cost.npu_seconds(op, self.target, self.float_bytes)

    def too_large(self, op: Operation) -> str | None:
        """Why no tile of a quantized NPU layer fits the target's SRAM (the planner's
        `TilingError`), or None when it fits (or is not planned: a float module)."""
        self.npu(op)
        return self._too_large.get(op)

    def host(self, op: Operation) -> float:
        """Seconds of `op` on the host."""
        if op not in self._host:
            self._host[op] = cost.host_seconds(op, self.target)
        return self._host[op]

    def bytes(self, value: SSAValue) -> int:
        """The bytes of a value copied between the memories."""
        return cost.tensor_bytes(value.type, self.float_bytes)


@dataclass(frozen=True)
class Estimate:
    """A placement of a function's ops with its phases, copies and estimated times."""

    device: dict[Operation, str]
    phases: list[Phase]
    crossings: list[Crossing]
    npu_seconds: float
    cpu_seconds: float
    copy_seconds: float
    transition_seconds: float

    @property
    def transitions(self) -> int:
        """Switches between NPU and CPU execution: two per CPU phase (its host call)."""
        return 2 * sum(phase.device == CPU for phase in self.phases)

    @property
    def compute_seconds(self) -> float:
        """Time computing, on either device."""
        return self.npu_seconds + self.cpu_seconds

    @property
    def transfer_seconds(self) -> float:
        """Time copying and synchronising."""
        return self.copy_seconds + self.transitions * self.transition_seconds

    @property
    def total_seconds(self) -> float:
        """The estimate of the whole function."""
        return self.compute_seconds + self.transfer_seconds

    def transfers(self, kind: TransferKind, costs: OpCosts) -> TransferCount:
        """How many copies of one kind, and their bytes."""
        chosen = [c for c in self.crossings if c.kind is kind]
        return TransferCount(len(chosen), sum(costs.bytes(c.value) for c in chosen))


def estimate(graph: FunctionGraph, device: dict[Operation, str], costs: OpCosts) -> Estimate:
    """Schedule, copies and estimated times of the placement `device`."""
    phases = schedule(graph, device)
    found = crossings(graph, device)
    npu_seconds = sum(costs.npu(op) for op in graph.nodes if device[op] == NPU)
    cpu_seconds = sum(costs.host(op) for op in graph.nodes if device[op] == CPU)
    copied = sum(
        costs.bytes(crossing.value)
        for crossing in found
        if crossing.kind is TransferKind.TRANSITION
    ) + sum(costs.bytes(value) for value in _host_edges(graph, device))
    return Estimate(
        device,
        phases,
        found,
        npu_seconds,
        cpu_seconds,
        cost.copy_seconds(copied, costs.target),
        costs.target.host.transition_seconds,
    )


def _host_edges(graph: FunctionGraph, device: dict[Operation, str]) -> list[SSAValue]:
    """The function's arguments that host ops read and the results host ops compute.

    As the simulator times a package: the runtime places the arguments in DDR and
    reads the results from it outside the stream (input and output transfers cost
    nothing there), while a host call copies its arguments and results at the host's
    bandwidth, function arguments and results included."""
    edges: list[SSAValue] = [
        argument
        for argument in graph.block.args
        if any(device.get(use.operation) == CPU for use in argument.uses)
    ]
    for value in dict.fromkeys(graph.terminator.operands):
        owner = value.owner
        if isinstance(owner, Operation) and device.get(owner) == CPU:
            edges.append(value)
    return edges


# --------------------------------------------------------------------------------------
# Decisions


def support_placement(
    graph: FunctionGraph, target: Target
) -> tuple[dict[Operation, str], dict[Operation, list[str]]]:
    """Every op where the backend table places it; the reasons of every op on the CPU."""
    device: dict[Operation, str] = {}
    reasons: dict[Operation, list[str]] = {}
    for op in graph.nodes:
        placement = backend.place(op, target)
        device[op] = placement.device
        if placement.device == CPU:
            reasons[op] = list(placement.reasons)
    return device, reasons


def glued(ops: Sequence[Operation]) -> tuple[Operation, ...]:
    """`ops` with the ops that must run with them: a MAC layer and the requantize of
    its accumulator (its output stage), in the order given."""
    found: dict[Operation, None] = {}
    for op in ops:
        found[op] = None
        stage = backend.fused_requantize(op)
        if stage is not None:
            found[stage] = None
        layer = backend.fused_with(op)
        if layer is not None:
            found[layer] = None
    return tuple(found)


def _candidates(graph: FunctionGraph, current: Estimate) -> Iterator[tuple[Operation, ...]]:
    """Sets of NPU ops a cost-model round may move to the CPU, in a fixed order."""
    seen: set[frozenset[Operation]] = set()

    def fresh(ops: Sequence[Operation]) -> bool:
        key = frozenset(ops)
        if key in seen:
            return False
        seen.add(key)
        return True

    device = current.device
    for phase in current.phases:
        if phase.device != NPU:
            continue
        if fresh(phase.ops):
            yield phase.ops
        for part in _connected_parts(graph, phase.ops):
            if fresh(part):
                yield part
    for op in graph.nodes:
        if device[op] == NPU and _at_boundary(graph, op, device) and fresh((op,)):
            yield (op,)


def _connected_parts(graph: FunctionGraph, ops: Sequence[Operation]) -> list[tuple[Operation, ...]]:
    """The weakly connected parts of a set of ops, each in program order."""
    members = set(ops)
    part_of: dict[Operation, int] = {}
    parts: list[list[Operation]] = []
    for start in ops:
        if start in part_of:
            continue
        parts.append([])
        stack = [start]
        part_of[start] = len(parts) - 1
        while stack:
            op = stack.pop()
            parts[-1].append(op)
            for neighbour in (*graph.predecessors[op], *graph.successors[op]):
                if neighbour in members and neighbour not in part_of:
                    part_of[neighbour] = len(parts) - 1
                    stack.append(neighbour)
    return [tuple(sorted(part, key=graph.order.__getitem__)) for part in parts]


def _at_boundary(graph: FunctionGraph, op: Operation, device: dict[Operation, str]) -> bool:
    """Whether an NPU op reads a host value or feeds host code."""
    for operand in op.operands:
        producer = operand.owner
        if isinstance(operand, BlockArgument):
            return True
        if isinstance(producer, Operation) and device.get(producer, NPU) == CPU:
            return True
    for result in op.results:
        for use in result.uses:
            if use.operation is graph.terminator or device.get(use.operation, CPU) == CPU:
                return True
    return False


def refine_by_cost(
    graph: FunctionGraph, device: dict[Operation, str], costs: OpCosts
) -> tuple[Estimate, dict[Operation, str]]:
    """Move NPU ops to the CPU while that lowers the estimate (see the module docstring).

    Each round evaluates every candidate move against the current placement, then
    tries them from the largest saving down, applying each one that still lowers the
    estimate when its turn comes (an earlier move of the round may have changed its
    worth). Rounds repeat until none applies. Returns the final estimate and, for
    every op moved, the reason to report.
    """
    current = estimate(graph, device, costs)
    moved: dict[Operation, str] = {}
    while True:
        ranked: list[tuple[float, int, tuple[Operation, ...]]] = []
        for index, candidate in enumerate(_candidates(graph, current)):
            saving = current.total_seconds - _moved(graph, current, candidate, costs).total_seconds
            if saving > MINIMUM_SAVING_SECONDS:
                ranked.append((-saving, index, candidate))
        applied = False
        for _, _, candidate in sorted(ranked):
            if any(current.device[op] != NPU for op in candidate):
                continue  # an earlier move of this round took some of its ops
            trial = _moved(graph, current, candidate, costs)
            if current.total_seconds - trial.total_seconds <= MINIMUM_SAVING_SECONDS:
                continue
            together = glued(candidate)
            moved.update(dict.fromkeys(together, _move_reason(current, trial, len(together))))
            current, applied = trial, True
        if not applied:
            return current, moved


def _moved(
    graph: FunctionGraph, current: Estimate, ops: tuple[Operation, ...], costs: OpCosts
) -> Estimate:
    """The estimate of the current placement with `ops` (and what runs with them)
    moved to the CPU."""
    device = dict(current.device)
    device.update(dict.fromkeys(glued(ops), CPU))
    return estimate(graph, device, costs)


def _move_reason(before: Estimate, after: Estimate, count: int) -> str:
    """`moved to the CPU by the cost model: the host computes it X us faster, its copies
    and transitions take Y us less: Z us saved` (the two parts add up to the saving)."""
    compute = before.compute_seconds - after.compute_seconds
    transfers = before.transfer_seconds - after.transfer_seconds
    others = count - 1
    company = f" (with {others} other op{'s' if others != 1 else ''})" if others else ""
    subject = "them" if others else "it"
    faster = "faster" if compute >= 0 else "slower"
    less = "less" if transfers >= 0 else "more"
    return (
        f"moved to the CPU by the cost model{company}: the host computes {subject} "
        f"{abs(compute) * 1e6:.3f} us {faster} than the NPU, the copies and transitions "
        f"take {abs(transfers) * 1e6:.3f} us {less}: {(compute + transfers) * 1e6:.3f} us saved"
    )


# --------------------------------------------------------------------------------------
# Outlining


@dataclass
class _Outliner:
    """Rewrites one function for its placement: NPU phases become calls."""

    graph: FunctionGraph
    plan: Estimate
    taken_names: set[str]
    functions: list[FuncOp] = field(default_factory=list)
    summaries: list[SubgraphSummary] = field(default_factory=list)
    on_npu: dict[SSAValue, SSAValue] = field(default_factory=dict)
    """Host value -> its copy in NPU memory (the result of its transfer to the NPU)."""
    on_host: dict[SSAValue, SSAValue] = field(default_factory=dict)
    """Value computed in an NPU function -> its copy in host memory."""
    call_result: dict[SSAValue, SSAValue] = field(default_factory=dict)
    """Value computed in an NPU function -> the call result that returns it."""
    sequence: list[Operation] = field(default_factory=list)
    """The parent's non-constant ops in their new order."""

    def run(self) -> None:
        parent = self.graph.function.sym_name.data
        for phase in self.plan.phases:
            if phase.device == CPU:
                for op in phase.ops:
                    self._read_on_host(op)
                    self.sequence.append(op)
            else:
                self._outline(phase.ops, self._new_name(parent))
        self._read_on_host(self.graph.terminator)
        self._rebuild_parent()

    def _new_name(self, parent: str) -> str:
        number = 0
        while f"{parent}_npu{number}" in self.taken_names:
            number += 1
        name = f"{parent}_npu{number}"
        self.taken_names.add(name)
        return name

    def _read_on_host(self, op: Operation) -> None:
        """Make `op` read host copies of the values NPU functions computed."""
        operands = list(op.operands)
        replaced = [self.on_host.get(operand, operand) for operand in operands]
        if replaced != operands:
            op.operands = replaced

    def _transfer(self, value: SSAValue, to: str, location: NameLoc, name: str | None) -> SSAValue:
        transfer = TransferOp(value, to)
        transfer.location = location
        transfer.result.name_hint = name
        self.sequence.append(transfer)
        return transfer.result

    def _outline(self, ops: tuple[Operation, ...], name: str) -> None:
        location = NameLoc(StringAttr(name), self.graph.function.location)
        inputs, outputs = boundary(ops, _is_constant)

        # The call's arguments: NPU values of earlier calls as they are, host values
        # through their (single) copy to NPU memory.
        arguments: list[SSAValue] = []
        for value in inputs:
            if value in self.call_result:
                arguments.append(self.call_result[value])
                continue
            if value not in self.on_npu:
                hint = f"{value.name_hint}_npu" if value.name_hint else None
                self.on_npu[value] = self._transfer(value, NPU, location, hint)
            arguments.append(self.on_npu[value])
        call = CallOp(name, arguments, [value.type for value in outputs])
        call.location = location
        self.sequence.append(call)
        for value, result in zip(outputs, call.results):
            result.name_hint = f"{value.name_hint}_npu" if value.name_hint else None
            self.call_result[value] = result
            if any(self._reads_on_host(use.operation) for use in value.uses):
                self.on_host[value] = self._transfer(result, CPU, location, value.name_hint)

        # The function: the ops move into it, reading its arguments and own constants.
        function = outline(ops, name, inputs, outputs, _is_constant)
        function.sym_visibility = StringAttr("private")
        function.attributes[DEVICE_ATTR] = StringAttr(NPU)
        function.location = location
        self.functions.append(function)
        self.summaries.append(
            SubgraphSummary(
                name=name,
                function=self.graph.function.sym_name.data,
                ops=sum(_is_compute(op) for op in ops),
                macs=sum(cost.op_macs(op) for op in ops),
            )
        )

    def _reads_on_host(self, op: Operation) -> bool:
        return op is self.graph.terminator or self.plan.device.get(op, CPU) == CPU

    def _rebuild_parent(self) -> None:
        """Lay out the parent's body in the new order, each constant before its first
        reader; constants no host code reads any more are erased."""
        block = self.graph.block
        constants = [op for op in block.ops if _is_constant(op)]
        for op in list(block.ops):
            op.detach()
        placed: set[Operation] = set()
        for op in [*self.sequence, self.graph.terminator]:
            for operand in op.operands:
                producer = operand.owner
                if (
                    isinstance(producer, Operation)
                    and _is_constant(producer)
                    and producer not in placed
                ):
                    placed.add(producer)
                    block.add_op(producer)
            block.add_op(op)
        for constant in constants:
            if constant not in placed:
                assert not constant.results[0].uses, "a constant read outside the function"
                constant.erase()


# --------------------------------------------------------------------------------------
# Marking (outline=false)


def mark(graph: FunctionGraph, plan: Estimate, reasons: dict[Operation, list[str]]) -> None:
    """Record the placement on the ops (`irc.device`, and `irc.reason` on CPU ops) and
    copy every crossing value with a `part.transfer` right after its definition, which
    its readers on the other side read (the function's result, on the host).

    The ops are first put in the order of their phases (each phase's ops in their
    order): the command stream runs ops in block order, so each CPU phase becomes
    the one host call that the estimate counted, not one per stretch of host ops
    that NPU ops of a parallel branch happen to interrupt."""
    for phase in plan.phases:
        for op in phase.ops:
            op.detach()
            graph.block.insert_op_before(op, graph.terminator)
    for op in graph.nodes:
        device = plan.device[op]
        op.attributes[DEVICE_ATTR] = StringAttr(device)
        if device == CPU:
            op.attributes[REASON_ATTR] = StringAttr("; ".join(reasons.get(op, ())))
    for crossing in plan.crossings:
        value = crossing.value
        transfer = TransferOp(value, crossing.to)
        owner = value.owner
        transfer.location = (
            owner.location if isinstance(owner, Operation) else graph.function.location
        )
        transfer.result.name_hint = f"{value.name_hint}_{crossing.to}" if value.name_hint else None
        if isinstance(owner, Operation):
            graph.block.insert_op_after(transfer, owner)
        else:
            first = graph.block.first_op
            assert first is not None
            graph.block.insert_op_before(transfer, first)
        for use in list(value.uses):
            reader = use.operation
            if reader is transfer or _is_constant(reader):
                continue
            side = CPU if reader is graph.terminator else plan.device.get(reader, CPU)
            if side == crossing.to:
                reader.operands[use.index] = transfer.result


def _npu_phases(graph: FunctionGraph, plan: Estimate, taken: set[str]) -> list[SubgraphSummary]:
    """The NPU phases of a marked function, named as outlining would name them."""
    parent = graph.function.sym_name.data
    summaries = []
    for phase in plan.phases:
        if phase.device != NPU:
            continue
        number = 0
        while f"{parent}_npu{number}" in taken:
            number += 1
        name = f"{parent}_npu{number}"
        taken.add(name)
        summaries.append(
            SubgraphSummary(
                name=name,
                function=parent,
                ops=sum(_is_compute(op) for op in phase.ops),
                macs=sum(cost.op_macs(op) for op in phase.ops),
            )
        )
    return summaries


# --------------------------------------------------------------------------------------
# The module


@dataclass
class _FunctionOutcome:
    graph: FunctionGraph
    plan: Estimate
    reasons: dict[Operation, list[str]]
    summaries: list[SubgraphSummary]


def _already_partitioned(function: FuncOp, npu_functions: set[str]) -> Operation | None:
    for op in function.walk():
        if isinstance(op, TransferOp) or DEVICE_ATTR in op.attributes:
            return op
        if isinstance(op, CallOp) and op.callee.root_reference.data in npu_functions:
            return op
    return None


def functions_to_partition(module: ModuleOp) -> list[FuncOp]:
    """The functions with a body that are not NPU functions, in order.

    A function that already transfers values or calls an NPU function was partitioned
    before: an error, since a second partition would mix two placements.
    """
    functions = [op for op in module.ops if isinstance(op, FuncOp)]
    npu_functions = {f.sym_name.data for f in functions if DEVICE_ATTR in f.attributes}
    chosen = []
    for function in functions:
        if function.sym_name.data in npu_functions or not function.body.blocks:
            continue
        found = _already_partitioned(function, npu_functions)
        if found is not None:
            what = (
                f"an op marked '{DEVICE_ATTR}'"
                if DEVICE_ATTR in found.attributes
                else f"'{found.name}' ops"
            )
            raise error(
                f"@{function.sym_name.data} is already partitioned (it has {what})",
                found,
                hint="run 'partition' once, on IR that has not been partitioned",
            )
        chosen.append(function)
    return chosen


def partition_module(
    module: ModuleOp, target: Target, mode: Mode = "support", outline_npu: bool = True
) -> PartitionReport:
    """Partition every function of `module` for `target` (see the module docstring),
    outlining the NPU subgraphs (`outline_npu`) or marking every op, and return the
    report."""
    costs = OpCosts(target, quantized=_is_quantized(module))
    taken = {op.sym_name.data for op in module.ops if isinstance(op, FuncOp)}
    outcomes: list[_FunctionOutcome] = []
    # Every function is checked before any is changed.
    graphs = [FunctionGraph.of(function) for function in functions_to_partition(module)]
    for graph in graphs:
        function = graph.function
        device, reasons = support_placement(graph, target)
        if mode == "cost":
            # A layer with no tile that fits runs where it can: on the host.
            for op in [op for op, placed in device.items() if placed == NPU]:
                why = costs.too_large(op)
                if why is not None:
                    where = Location.of(op)
                    layer = f"{op.name} '{where.name}'" if where.name else op.name
                    emit(
                        Diagnostic(
                            f"{layer} does not fit target {target.name}'s NPU and runs on "
                            f"the host: {why}",
                            where,
                            Severity.WARNING,
                            hint="a target with more SRAM, or --partition support to stop here",
                        )
                    )
                    for member in glued((op,)):
                        device[member] = CPU
                        reasons[member] = [f"does not fit the NPU: {why}"]
            plan, moved = refine_by_cost(graph, device, costs)
            for op, reason in moved.items():
                reasons[op] = [reason]
        else:
            plan = estimate(graph, device, costs)
        if not outline_npu:
            mark(graph, plan, reasons)
            outcomes.append(_FunctionOutcome(graph, plan, reasons, _npu_phases(graph, plan, taken)))
            continue
        outliner = _Outliner(graph, plan, taken)
        if NPU in plan.device.values():  # a function left on the CPU keeps its order
            outliner.run()
        anchor: Operation = function
        for npu_function in outliner.functions:
            module.body.block.insert_op_after(npu_function, anchor)
            anchor = npu_function
        outcomes.append(_FunctionOutcome(graph, plan, reasons, outliner.summaries))
    return _report(outcomes, target, mode, costs)


def _is_quantized(module: ModuleOp) -> bool:
    """The module holds quantized values (its float tensors stay float)."""
    from xdsl.dialects.builtin import TensorType

    from irc.dialects.quant import quantized_element

    return any(
        isinstance(result.type, TensorType) and quantized_element(result.type) is not None
        for op in module.walk()
        for result in op.results
    )


def _report(
    outcomes: list[_FunctionOutcome], target: Target, mode: Mode, costs: OpCosts
) -> PartitionReport:
    compute = [(o, op) for o in outcomes for op in o.graph.compute_ops()]
    on_npu = [op for o, op in compute if o.plan.device[op] == NPU]
    fallbacks = []
    for outcome, op in compute:
        if outcome.plan.device[op] != CPU:
            continue
        fallbacks.append(
            FallbackOp(
                function=outcome.graph.function.sym_name.data,
                op=op.name,
                at=Location.of(op),
                reasons=tuple(outcome.reasons.get(op, ())),
            )
        )

    def transfers(kind: TransferKind) -> TransferCount:
        counts = [o.plan.transfers(kind, costs) for o in outcomes]
        return TransferCount(sum(c.count for c in counts), sum(c.bytes for c in counts))

    return PartitionReport(
        target=target.name,
        mode=mode,
        ops_total=len(compute),
        ops_npu=len(on_npu),
        macs_total=sum(cost.op_macs(op) for _, op in compute),
        macs_npu=sum(cost.op_macs(op) for op in on_npu),
        subgraphs=tuple(s for o in outcomes for s in o.summaries),
        transitions=sum(o.plan.transitions for o in outcomes),
        input_transfers=transfers(TransferKind.INPUT),
        output_transfers=transfers(TransferKind.OUTPUT),
        transition_transfers=transfers(TransferKind.TRANSITION),
        npu_seconds=sum(o.plan.npu_seconds for o in outcomes),
        cpu_seconds=sum(o.plan.cpu_seconds for o in outcomes),
        transfer_seconds=sum(o.plan.transfer_seconds for o in outcomes),
        fallbacks=tuple(fallbacks),
    )


def summary_remark(report: PartitionReport, at: Operation) -> Diagnostic:
    """The pass's remark: the report's summary at `at`, with a note at each fallback op."""
    notes = [
        Diagnostic(f"on the CPU: {'; '.join(fallback.reasons)}", fallback.at, Severity.NOTE)
        for fallback in report.fallbacks
    ]
    return Diagnostic(report.summary(), Location.of(at), Severity.REMARK, notes=notes)


# --------------------------------------------------------------------------------------
# The pass


@dataclass(frozen=True)
class PartitionPass(ModulePass):
    """Place every op on the target's NPU or the CPU, with explicit transfers; outline NPU subgraphs or mark every op.

    `mode=support` puts every op on the NPU that the backend table places there (the
    target's support table takes it, the target computes in its data types, irc can
    lower it: `irc.backend.place`); `mode=cost` then moves
    NPU ops to the CPU when the transfers and transitions they cause cost more than
    they gain (an isolated supported op between two fallback ops, for example). NPU
    ops are grouped into maximal convex subgraphs, each outlined as
    `func.func private @<parent>_npu<N>` with `irc.device = "npu"` and called from
    the parent; every value crossing between CPU code and an NPU function goes through
    a `part.transfer` (to "npu" before the call, to "cpu" after it). Constants are
    duplicated into each NPU function that reads them, never transferred. With
    `outline=false` (as `irc-compile` runs it, for the backend passes that follow)
    the ops stay in place, each marked `irc.device = "npu"` or `"cpu"` (a CPU op also
    `irc.reason`), and each crossing value is transferred right after its definition.

    The target is `target=NAME|FILE`, else the one `irc-opt --target` gives. The pass
    emits a remark summarising the partition (NPU coverage in ops and MACs, NPU
    subgraphs, transitions, fallback ops) at the first function with ops, with a
    note at each fallback op giving its reasons, and with `report=PATH` writes the
    full report (JSON if PATH ends in `.json`, text otherwise). See
    docs/partitioning.md for the algorithm, the cost model and the report's fields.

    Before (`partition{target=npu-demo}`; npu-demo has no `nn.lrn`):

        func.func @main(%x: tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32> {
          %w = nn.constant dense<...> : tensor<16x3x3x16xf32>
          %a = nn.conv %x, %w {layout = "nhwc", pads = [1, 1, 1, 1]} : (...) -> tensor<1x8x8x16xf32>
          %n = nn.lrn %a {layout = "nhwc", size = 3} : tensor<1x8x8x16xf32>
          %b = nn.conv %n, %w {layout = "nhwc", pads = [1, 1, 1, 1]} : (...) -> tensor<1x8x8x16xf32>
          func.return %b : tensor<1x8x8x16xf32>
        }

    After (two NPU subgraphs, two transitions around the nn.lrn):

        func.func @main(%x: tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32> {
          %x_npu = part.transfer %x {to = "npu"} : tensor<1x8x8x16xf32>
          %a_npu = func.call @main_npu0(%x_npu) : (tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
          %a = part.transfer %a_npu {to = "cpu"} : tensor<1x8x8x16xf32>
          %n = nn.lrn %a {layout = "nhwc", size = 3} : tensor<1x8x8x16xf32>
          %n_npu = part.transfer %n {to = "npu"} : tensor<1x8x8x16xf32>
          %b_npu = func.call @main_npu1(%n_npu) : (tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
          %b = part.transfer %b_npu {to = "cpu"} : tensor<1x8x8x16xf32>
          func.return %b : tensor<1x8x8x16xf32>
        }
        func.func private @main_npu0(%x: tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32> attributes {irc.device = "npu"} {
          %w = nn.constant dense<...> : tensor<16x3x3x16xf32>
          %a = nn.conv %x, %w {layout = "nhwc", pads = [1, 1, 1, 1]} : (...) -> tensor<1x8x8x16xf32>
          func.return %a : tensor<1x8x8x16xf32>
        }
        func.func private @main_npu1(%n: tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32> attributes {irc.device = "npu"} {
          %w = nn.constant dense<...> : tensor<16x3x3x16xf32>
          %b = nn.conv %n, %w {layout = "nhwc", pads = [1, 1, 1, 1]} : (...) -> tensor<1x8x8x16xf32>
          func.return %b : tensor<1x8x8x16xf32>
        }
    """

    name = "partition"

    mode: Literal["support", "cost"] = option(
        "support",
        "support: every supported op on the NPU; cost: also move NPU ops to the CPU "
        "when their transfers cost more than they gain",
    )
    target: str = option("", "the target: a preset name or a TOML file (default: irc-opt --target)")
    report: str = option(
        "", "write the partition report to this file (JSON if it ends in .json, else text)"
    )
    outline: bool = option(
        True,
        "outline each NPU subgraph into a function (false: mark every op with irc.device, "
        "as the backend passes read it)",
    )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.run(op)

    def run(self, op: ModuleOp) -> PartitionReport:
        """What `apply` does, returning the report (which irc-compile keeps)."""
        from irc.targets import require_target

        target = require_target(self.name, self.target or None)
        # The remark goes to the first function with ops (before they move out).
        functions = functions_to_partition(op)
        with_ops = [f for f in functions if any(_is_compute(o) for o in f.body.walk())]
        anchor: Operation = next(iter(with_ops or functions), op)
        report = partition_module(op, target, self.mode, self.outline)
        if self.report:
            report.write(self.report)
        emit(summary_remark(report, anchor))
        return report
