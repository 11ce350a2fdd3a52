"""The NPU simulator: the interpreter of the `npu` dialect (docs/simulator.md).

DDR and SRAM are byte arrays (`Machine`): an `npu.view` is a numpy view of their
bytes at its address, so a command computes in place on the memories, with the
arithmetic of the tile level (irc/interp/tile.py): results are bit-exact with the
`qnn` reference.

Commands run in program order, functionally; in time, each queue (DMA in, DMA out,
MAC array, vector unit, host) runs its commands one after another, and a command
starts when its queue is free and the tokens its queue waited for are set
(`Timeline`): queues overlap, ordered only by synchronisation. The cycles of each
command come from the target (irc/sim/timing.py). Loads and stores share the DDR:
the data phases of DMA commands take turns on it.

`Scoreboard` checks, with a vector clock per queue, that every byte a command reads
was written by a command that happens before it (through a chain of signals and
waits, or on the same queue), and that every byte it writes is no longer read or
written by a command that does not: a race is a `Hazard` naming both commands.
Accesses outside a memory, misaligned buffers, writes to the weights region and
waits for a token nothing sets are hazards too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import Operation, SSAValue
from xdsl.traits import SymbolTable

from irc.diagnostics import IrcError, Location, error
from irc.dialects import npu, tile
from irc.dialects.nn import Props
from irc.dialects.tile import element_of
from irc.interp.qnn import saturate_int32
from irc.interp.tile import (
    TileFunctions,
    _number,
    conv_into,
    matmul_into,
    requantize_tile,
)
from irc.sim import timing
from irc.sim.schedule import Item, schedule
from irc.sim.scoreboard import OutOfBounds, Scoreboard, View
from irc.targets import Target, active_target, load_target

QUEUE_INDEX = {name: index for index, name in enumerate(npu.QUEUES)}
COMPUTE_QUEUES = (QUEUE_INDEX["mac"], QUEUE_INDEX["vector"])


class Hazard(IrcError):
    """A race, an access outside memory or a broken synchronisation, found running."""


def hazard(message: str, op: Operation, hint: str | None = None) -> Hazard:
    """A `Hazard` located at the command `op`."""
    return Hazard(error(message, op, hint).diagnostics)


def describe(op: Operation) -> str:
    """A command as a hazard names it: its name, and where it is (its layer's ONNX
    name, or its line in the stream's text)."""
    location = Location.of(op)
    if location.name:
        return f"{op.name} of layer {location.name}"
    if location.line is not None:
        return f"{op.name} at line {location.line}"
    return op.name


# --------------------------------------------------------------------------------------
# Memories


class Machine:
    """DDR and SRAM as byte arrays."""

    def __init__(self, ddr_bytes: int, sram_bytes: int) -> None:
        self.memories = {
            "ddr": np.zeros(ddr_bytes, np.uint8),
            "sram": np.zeros(sram_bytes, np.uint8),
        }

    def array(self, view: View) -> np.ndarray:
        """The numpy array of a view, sharing the memory's bytes."""
        memory = self.memories[view.space]
        size = view.dtype.itemsize
        return np.ndarray(
            view.shape,
            view.dtype,
            buffer=memory,
            offset=view.address,
            strides=tuple(stride * size for stride in view.strides),
        )


# --------------------------------------------------------------------------------------
# Happens-before and races


class Races:
    """The scoreboard of a run, with the commands it counts: a conflict is a hazard
    naming both commands."""

    def __init__(self, machine: Machine, weights_bytes: int) -> None:
        sizes = {space: memory.size for space, memory in machine.memories.items()}
        self.board = Scoreboard(sizes, weights_bytes)
        self.commands: list[list[Operation]] = [[] for _ in npu.QUEUES]

    def access(
        self, op: Operation, queue: int, reads: Sequence[View], writes: Sequence[View]
    ) -> None:
        """Count the command, check its accesses and record them."""
        index = self.board.issue(queue)
        self.commands[queue].append(op)
        try:
            conflicts = self.board.conflicts(queue, reads, writes)
        except OutOfBounds as problem:
            raise hazard(f"{describe(op)} accesses memory it may not: {problem}", op) from None
        if conflicts:
            conflict = conflicts[0]
            other = self.commands[conflict.queue][conflict.index - 1]
            raise hazard(
                f"hazard: {describe(op)} on {_queue_of(op)} {conflict.kind} {describe(other)} "
                f"on {npu.QUEUES[conflict.queue]}, with no synchronisation between them",
                op,
                hint="a signal after the first command and a wait before the second order them",
            )
        self.board.record(queue, index, reads, writes)


def _queue_of(op: Operation) -> str:
    return op.queue() if isinstance(op, npu.Command) else "?"


# --------------------------------------------------------------------------------------
# Time


@dataclass
class Event:
    """One command in time."""

    op: Operation
    queue: int
    start: int
    end: int
    macs: int = 0
    ddr_read: int = 0
    ddr_written: int = 0
    sram_high: int = 0
    """The highest SRAM byte the command touches (0: none)."""


@dataclass
class Timeline:
    """The queues' items in program order, for the schedule (irc/sim/schedule.py), and
    every command's event; `tokens` holds each set token's vector clock."""

    queues: list[list[Item]] = field(default_factory=lambda: [[] for _ in npu.QUEUES])
    tokens: dict[int, np.ndarray] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)

    def schedule(self) -> int:
        """Time every command; the run's total cycles."""
        total = schedule(self.queues)
        for event, item in zip(self.events, self.items):
            event.start, event.end = item.start, item.end
        return total


# --------------------------------------------------------------------------------------
# The interpreter functions


@dataclass
class Simulation:
    """The state of one run: memories, happens-before, time."""

    target: Target
    machine: Machine
    races: Races
    timeline: Timeline = field(default_factory=Timeline)
    views: dict[SSAValue, View] = field(default_factory=dict)

    @classmethod
    def for_function(cls, function: FuncOp, target: Target) -> Simulation:
        attributes = function.attributes

        def number(name: str, default: int) -> int:
            value = attributes.get(name)
            return int(value.value.data) if value is not None else default  # type: ignore[attr-defined]

        ddr = number(npu.DDR_BYTES_ATTR, 0)
        sram = target.sram.size_bytes
        declared = number(npu.SRAM_BYTES_ATTR, sram)
        if declared > sram:
            raise error(
                f"the program needs {declared} bytes of SRAM; {target.name} has {sram}",
                function,
                hint="compile the program for this target",
            )
        machine = Machine(ddr, sram)
        return cls(target, machine, Races(machine, number(npu.WEIGHTS_BYTES_ATTR, 0)))


def _target_for(function: FuncOp) -> Target:
    target = active_target()
    if target is not None:
        return target
    name = function.attributes.get("npu.target")
    if name is None:
        raise error(
            "an npu program runs on a target: none is active and the function names none",
            function,
            hint="irc-run --target=NAME|FILE, or the npu.target attribute",
        )
    return load_target(name.data)  # type: ignore[attr-defined]


@register_impls
class NpuFunctions(InterpreterFunctions):
    """The simulator's implementation of every `npu` op (see the module docstring)."""

    def __init__(self) -> None:
        self.simulation: Simulation | None = None
        self.tile = TileFunctions()

    def run_stream(
        self, interpreter: Interpreter, function: FuncOp, arguments: Sequence[object]
    ) -> list[object]:
        """Run a function's body op by op: the `npu` ops here, without the generic
        interpreter's per-op machinery (a stream has tens of thousands of ops), every
        other op (constants, host calls' callees) by `interpreter`."""
        block = function.body.blocks.first
        assert block is not None
        implementations = getattr(type(self), "__impl_dict")
        values: dict[SSAValue, object] = dict(zip(block.args, arguments))
        for op in block.ops:
            if isinstance(op, ReturnOp):
                return [values[operand] for operand in op.operands]
            inputs = tuple(values[operand] for operand in op.operands)
            implementation = implementations.get(type(op))
            if implementation is not None:
                outputs = implementation(self, interpreter, op, inputs).values
            else:
                outputs = interpreter.run_op(op, inputs)
            for result, value in zip(op.results, outputs):
                values[result] = value
        raise error("the function has no func.return", function)

    def _state(self, op: Operation) -> Simulation:
        if self.simulation is None:
            function = op.parent_op()
            assert isinstance(function, FuncOp), "npu ops live in a function"
            self.simulation = Simulation.for_function(function, _target_for(function))
        return self.simulation

    # ---- views and the boundary ---------------------------------------------------------

    @impl(npu.ViewOp)
    def run_view(
        self, interpreter: Interpreter, op: npu.ViewOp, args: PythonValues
    ) -> PythonValues:
        state = self._state(op)
        view = View.of(op)
        memory = state.machine.memories[view.space]
        if view.address + view.extent > memory.size:
            raise hazard(
                f"the view at {view.space} address {view.address} ends at "
                f"{view.address + view.extent}, outside the {memory.size} bytes of {view.space}",
                op,
            )
        state.views[op.result] = view
        return (state.machine.array(view),)

    @impl(npu.PlaceOp)
    def run_place(
        self, interpreter: Interpreter, op: npu.PlaceOp, args: PythonValues
    ) -> PythonValues:
        args[1][...] = np.asarray(args[0]).astype(args[1].dtype)
        return ()

    @impl(npu.ReadOp)
    def run_read(
        self, interpreter: Interpreter, op: npu.ReadOp, args: PythonValues
    ) -> PythonValues:
        return (np.array(args[0], copy=True, order="C"),)

    # ---- synchronisation ------------------------------------------------------------------

    @impl(npu.SignalOp)
    def run_signal(
        self, interpreter: Interpreter, op: npu.SignalOp, args: PythonValues
    ) -> PythonValues:
        state = self._state(op)
        queue = QUEUE_INDEX[op.queue()]
        token = op.props().int("token")
        assert token is not None
        timeline = state.timeline
        if token in timeline.tokens:
            raise hazard(f"token {token} is set twice (by {describe(op)})", op)
        timeline.tokens[token] = state.races.board.clocks[queue].copy()
        timeline.queues[queue].append(Item("signal", token=token))
        return ()

    @impl(npu.WaitOp)
    def run_wait(
        self, interpreter: Interpreter, op: npu.WaitOp, args: PythonValues
    ) -> PythonValues:
        state = self._state(op)
        queue = QUEUE_INDEX[op.queue()]
        token = op.props().int("token")
        assert token is not None
        if token not in state.timeline.tokens:
            raise hazard(
                f"{describe(op)} on {op.queue()} waits for token {token}, which no earlier "
                "signal sets: the queue would wait forever",
                op,
            )
        state.races.board.wait(queue, state.timeline.tokens[token])
        state.timeline.queues[queue].append(Item("wait", token=token))
        return ()

    @impl(npu.EndOp)
    def run_end(self, interpreter: Interpreter, op: npu.EndOp, args: PythonValues) -> PythonValues:
        return ()

    # ---- commands -------------------------------------------------------------------------

    def _run(
        self,
        op: npu.Command,
        reads: Sequence[View],
        writes: Sequence[View],
        cycles: int,
        queue: str | None = None,
        macs: int = 0,
        ddr: timing.Cost | None = None,
    ) -> None:
        """Check and time a command on `queue` (its own by default); `ddr` is a DMA's
        cost, whose data phase takes its turn on the DDR."""
        state = self._state(op)
        index = QUEUE_INDEX[queue or op.queue()]
        if index in COMPUTE_QUEUES:
            alignment = state.target.sram.alignment_bytes
            for view in (*reads, *writes):
                if view.space != "sram" or view.address % alignment:
                    raise hazard(
                        f"{describe(op)} on {npu.QUEUES[index]} reads or writes "
                        f"{view.space} at address {view.address}: compute commands use "
                        f"SRAM buffers aligned to {alignment} bytes",
                        op,
                    )
        state.races.access(op, index, reads, writes)
        timeline = state.timeline
        data = ddr.data_cycles if ddr is not None else 0
        item = Item("command", cycles, data)
        timeline.queues[index].append(item)
        timeline.items.append(item)
        read, written = (ddr.read, ddr.written) if ddr is not None else (0, 0)
        sram_high = max(
            (v.address + v.extent for v in (*reads, *writes) if v.space == "sram"), default=0
        )
        timeline.events.append(Event(op, index, 0, 0, macs, read, written, sram_high))

    @impl(npu.DmaOp)
    def run_dma(self, interpreter: Interpreter, op: npu.DmaOp, args: PythonValues) -> PythonValues:
        state = self._state(op)
        # Operands by their segments, decoded once (the accessors decode every time).
        has_source, _, has_frame = _segments(op)
        views = [state.views[value] for value in op.operands]
        source = views[0] if has_source else None
        written = views[-1]  # the frame, else the dest
        reads = [source] if source is not None else []
        cost = timing.dma(state.target, reads, [written])
        queue = (
            "dma_out"
            if written.space == "ddr" and source is not None and source.space == "sram"
            else "dma_in"
        )
        self._run(op, reads, [written], cost.cycles, queue=queue, ddr=cost)
        if has_frame:
            args[-1][...] = _pad_value(op)
        if has_source:
            args[1][...] = args[0]
        return ()

    @impl(npu.ConvOp)
    def run_conv(
        self, interpreter: Interpreter, op: npu.ConvOp, args: PythonValues
    ) -> PythonValues:
        state = self._state(op)
        props = op.props()
        strides = props.ints("strides") or [1, 1]
        dilations = props.ints("dilations") or [1, 1]
        group = props.int("group") or 1
        accumulate = props.bool("accumulate")
        cost = timing.conv_cost(state.target, args[2].shape, args[1].shape, group)
        self._mac(op, args, cost, accumulate)
        conv_into(
            args[0], args[1], args[2], strides, dilations, group,
            props.int("input_zero_point") or 0, accumulate,
        )  # fmt: skip
        self._stage(op, args, props)
        return ()

    @impl(npu.MatmulOp)
    def run_matmul(
        self, interpreter: Interpreter, op: npu.MatmulOp, args: PythonValues
    ) -> PythonValues:
        state = self._state(op)
        props = op.props()
        accumulate = props.bool("accumulate")
        trans_b = props.bool("trans_b")
        rows, depth = args[0].shape
        cost = timing.matmul_cost(state.target, rows, args[2].shape[1], depth)
        self._mac(op, args, cost, accumulate)
        matmul_into(args[0], args[1], args[2], props.int("a_zero_point") or 0, trans_b, accumulate)
        self._stage(op, args, props)
        return ()

    def _mac(
        self,
        op: npu.ConvOp | npu.MatmulOp,
        args: PythonValues,
        cost: timing.Cost,
        accumulate: bool,
    ) -> None:
        state = self._state(op)
        operands = op.operands
        _, _, _, has_bias, has_params, has_output = _segments(op)
        views = [state.views[value] for value in operands]
        reads = (
            views[:2] + ([views[2]] if accumulate else []) + views[3 : 3 + has_bias + has_params]
        )
        writes = [views[2]] + ([views[-1]] if has_output else [])
        self._run(op, reads, writes, cost.cycles, queue="mac", macs=cost.macs)

    def _stage(self, op: npu.ConvOp | npu.MatmulOp, args: PythonValues, props: Props) -> None:
        """The output stage: bias, then requantize into the output (or a float clamp)."""
        _, _, _, has_bias, has_params, has_output = _segments(op)
        acc = args[2]
        if has_bias:
            bias = args[3]
            if acc.dtype.kind == "f":
                acc += bias
            else:
                acc[...] = saturate_int32(acc.astype(np.int64) + bias.astype(np.int64))
        if has_params and has_output:
            output = op.operands[-1]
            requantize_tile(acc, args[3 + has_bias], args[-1], 0, op, element_of(output))
        elif acc.dtype.kind == "f":
            low, high = props.attr("clamp_min"), props.attr("clamp_max")
            if low is not None or high is not None:
                np.clip(
                    acc,
                    -np.inf if low is None else float(_number(low)),
                    np.inf if high is None else float(_number(high)),
                    out=acc,
                )

    def _vector(
        self,
        op: npu.Command,
        args: PythonValues,
        run: object,
        reads: Sequence[SSAValue],
        writes: Sequence[SSAValue],
        cycles: int,
    ) -> PythonValues:
        state = self._state(op)
        self._run(
            op, [state.views[v] for v in reads], [state.views[v] for v in writes], cycles, "vector"
        )
        run(self.tile, None, op, args)  # type: ignore[operator]
        return ()

    @impl(npu.FillOp)
    def run_fill(
        self, interpreter: Interpreter, op: npu.FillOp, args: PythonValues
    ) -> PythonValues:
        cycles = timing.vector(self._state(op).target, op.target, 1)
        return self._vector(op, args, TileFunctions.run_fill, [], [op.target], cycles)

    @impl(npu.PoolOp)
    def run_pool(
        self, interpreter: Interpreter, op: npu.PoolOp, args: PythonValues
    ) -> PythonValues:
        kernel = op.props().ints("kernel_shape") or [1, 1]
        cycles = timing.vector(self._state(op).target, op.output, math.prod(kernel))
        return self._vector(op, args, TileFunctions.run_pool, [op.input], [op.output], cycles)

    @impl(npu.RequantizeOp)
    def run_requantize(
        self, interpreter: Interpreter, op: npu.RequantizeOp, args: PythonValues
    ) -> PythonValues:
        cycles = timing.vector(self._state(op).target, op.output, 1)
        return self._vector(
            op, args, TileFunctions.run_requantize, [op.acc, op.params], [op.output], cycles
        )

    def _binary(self, op: npu.Command, args: PythonValues, run: object) -> PythonValues:
        lhs, rhs, output = op.operands[:3]
        cycles = timing.vector(self._state(op).target, output, 2)
        return self._vector(op, args, run, [lhs, rhs], [output], cycles)

    @impl(npu.AddOp)
    def run_add(self, interpreter: Interpreter, op: npu.AddOp, args: PythonValues) -> PythonValues:
        return self._binary(op, args, TileFunctions.run_add)

    @impl(npu.MulOp)
    def run_mul(self, interpreter: Interpreter, op: npu.MulOp, args: PythonValues) -> PythonValues:
        return self._binary(op, args, TileFunctions.run_mul)

    @impl(npu.AddFOp)
    def run_addf(
        self, interpreter: Interpreter, op: npu.AddFOp, args: PythonValues
    ) -> PythonValues:
        return self._binary(op, args, TileFunctions.run_addf)

    @impl(npu.MulFOp)
    def run_mulf(
        self, interpreter: Interpreter, op: npu.MulFOp, args: PythonValues
    ) -> PythonValues:
        return self._binary(op, args, TileFunctions.run_mulf)

    @impl(npu.ClampOp)
    def run_clamp(
        self, interpreter: Interpreter, op: npu.ClampOp, args: PythonValues
    ) -> PythonValues:
        cycles = timing.vector(self._state(op).target, op.output, 1)
        return self._vector(op, args, TileFunctions.run_clamp, [op.input], [op.output], cycles)

    @impl(npu.TransposeOp)
    def run_transpose(
        self, interpreter: Interpreter, op: npu.TransposeOp, args: PythonValues
    ) -> PythonValues:
        cycles = timing.vector(self._state(op).target, op.output, 1)
        return self._vector(op, args, TileFunctions.run_transpose, [op.input], [op.output], cycles)

    @impl(npu.LutOp)
    def run_lut(self, interpreter: Interpreter, op: npu.LutOp, args: PythonValues) -> PythonValues:
        cycles = timing.vector(self._state(op).target, op.output, 1)
        return self._vector(
            op, args, TileFunctions.run_lut, [op.input, op.table], [op.output], cycles
        )

    @impl(npu.HostCallOp)
    def run_host_call(
        self, interpreter: Interpreter, op: npu.HostCallOp, args: PythonValues
    ) -> PythonValues:
        state = self._state(op)
        module = op.get_toplevel_object()
        assert isinstance(module, ModuleOp)
        callee = SymbolTable.lookup_symbol(module, op.callee)
        if not isinstance(callee, FuncOp):
            raise error(f"the host call's callee {op.callee} is not a function of the module", op)
        inputs, outputs = args[: len(op.inputs)], args[len(op.inputs) :]
        cycles = timing.host(state.target, callee, inputs, outputs)
        self._run(
            op,
            [state.views[v] for v in op.inputs],
            [state.views[v] for v in op.outputs],
            cycles,
            "host",
        )
        results = interpreter.call_op(callee, tuple(np.array(a) for a in inputs))
        for view, value in zip(outputs, results):
            view[...] = np.asarray(value).astype(view.dtype)
        return ()


def _segments(op: Operation) -> tuple[int, ...]:
    """The operand segment sizes of an op with optional operands."""
    return tuple(op.properties[tile.SEGMENTS].get_values())  # type: ignore[attr-defined]


def _pad_value(op: npu.DmaOp) -> int | float:
    attribute = op.props().attr("pad")
    return attribute.value.data if attribute is not None else 0
