"""The NPU simulator: the interpreter of the `npu` dialect (docs/simulator.md).

Every memory of the target is a byte array (`Machine`): an `npu.view` is a numpy view
of its memory's bytes at its address, so a command computes in place on the memories, with the
arithmetic of the tile level (irc/interp/tile.py, irc/interp/kernels.py): results
are bit-exact with the `qnn` reference.

A stream is loaded once (`Program`): the checks and the timing below depend only on
the stream, not on the data, so loading does them, and decodes each command into a
step with its arrays and parameters bound; a run only computes.

Commands run in program order, functionally; in time, each queue (DMA in, DMA out,
MAC array, vector unit, host) runs its commands one after another, and a command
starts when its queue is free and the tokens its queue waited for are set
(`Timeline`): queues overlap, ordered only by synchronisation. The cycles of each
command come from the target (irc/sim/timing.py). DMA commands move data through
the ports of the memories they read and write: transfers on one port take turns.

`Scoreboard` (irc/stream/scoreboard.py, with which `lower-to-npu` places the
synchronisation) checks, with a vector clock per queue, that every byte a command
reads was written by a command that happens before it (through a chain of signals
and waits, or on the same queue), and that every byte it writes is no longer read or
written by a command that does not: a race is a `Hazard` naming both commands.
Accesses outside a memory, misaligned buffers, writes to the weights region and
waits for a token nothing sets are hazards too.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp, i16
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.interpreter import Interpreter
from xdsl.ir import Operation, SSAValue
from xdsl.traits import SymbolTable

from irc import backend
from irc.diagnostics import IrcError, Location, error
from irc.dialects import npu, tile
from irc.dialects.tile import element_of
from irc.interp.kernels import IntegerConv, IntegerMatmul
from irc.interp.tile import (
    AddTile,
    MulTile,
    RequantizeTile,
    TileFunctions,
    _number,
    conv_into,
    matmul_into,
)
from irc.sim import timing
from irc.sim.schedule import Item, schedule
from irc.stream.scoreboard import OutOfBounds, Scoreboard, View
from irc.targets import Target, active_target, load_target

QUEUE_INDEX = {name: index for index, name in enumerate(npu.QUEUES)}
COMPUTE_QUEUES = (QUEUE_INDEX["mac"], QUEUE_INDEX["vector"])
"""The compute queues among a core's (an engine index modulo `len(npu.QUEUES)`)."""


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
    """The memories as byte arrays, by name (their IR memory spaces)."""

    def __init__(self, sizes: Mapping[str, int]) -> None:
        self.memories = {name: np.zeros(size, np.uint8) for name, size in sizes.items()}

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

    def __init__(self, machine: Machine, weights: tuple[str, int], engines: int) -> None:
        sizes = {space: memory.size for space, memory in machine.memories.items()}
        self.board = Scoreboard(sizes, weights, engines)
        self.commands: list[list[Operation]] = [[] for _ in range(engines)]

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
                f"hazard: {describe(op)} on {npu.engine_name(queue)} {conflict.kind} "
                f"{describe(other)} on {npu.engine_name(conflict.queue)}, with no "
                "synchronisation between them",
                op,
                hint="a signal after the first command and a wait before the second order them",
            )
        self.board.record(queue, index, reads, writes)


# --------------------------------------------------------------------------------------
# Time


@dataclass
class Event:
    """One command in time."""

    op: Operation
    queue: int
    """Its engine queue, among every core's (`npu.engine`)."""
    start: int
    end: int
    macs: int = 0
    ddr_read: int = 0
    """Bytes read from the system memories (all of them)."""
    ddr_written: int = 0
    """Bytes written to the system memories."""
    sram_high: int = 0
    """The highest SRAM byte the command touches (0: none)."""
    traffic: tuple[tuple[str, int, int], ...] = ()
    """(memory, bytes read, bytes written) per system memory the command touches."""


@dataclass(frozen=True)
class Entry:
    """One item of the stream in program order: its queue and, for a command, the
    buffers it reads and writes (what irc/sim/streaming.py replays)."""

    queue: int
    item: Item
    reads: tuple[View, ...] = ()
    writes: tuple[View, ...] = ()


@dataclass
class Timeline:
    """The queues' items in program order, for the schedule (irc/sim/schedule.py), and
    every command's event; `tokens` holds each set token's vector clock, `entries`
    every item in program order across the queues."""

    engines: int = len(npu.QUEUES)
    """The engine queues: `npu.QUEUES` on each core."""
    queues: list[list[Item]] = field(default_factory=list)
    tokens: dict[int, np.ndarray] = field(default_factory=dict)
    signalled: dict[int, int] = field(default_factory=dict)
    """Each token's signalling core."""
    events: list[Event] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.queues:
            self.queues = [[] for _ in range(self.engines)]

    def schedule(self) -> int:
        """Time every command; the run's total cycles."""
        total = schedule(self.queues)
        for event, item in zip(self.events, self.items):
            event.start, event.end = item.start, item.end
        return total


# --------------------------------------------------------------------------------------
# Loading a stream

Step = Callable[[], None]
"""A command's work, with its arrays and parameters bound."""


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


class Program:
    """A command stream loaded into the simulator, to run on any number of inputs.

    Loading walks the stream once. It places every view in the memories, checks each
    command's accesses against the happens-before order of the queues and times the
    command (neither depends on the data), evaluates the constants and places the
    weights, and decodes each command into a `Step`: its kernel with the arrays (views
    of the memories) and parameters bound. `run` then only computes: it clears the
    memories above the weights, and runs the steps in program order.
    """

    def __init__(self, function: FuncOp, target: Target, interpreter: Interpreter) -> None:
        self.function, self.target, self.interpreter = function, target, interpreter
        attributes = function.attributes

        def number(name: str, default: int) -> int:
            value = attributes.get(name)
            return int(value.value.data) if value is not None else default  # type: ignore[attr-defined]

        sizes = npu.memory_sizes(function)
        self.cores = npu.core_count(function)
        if self.cores > target.cores.count:
            raise error(
                f"the program runs on {self.cores} cores; {target.name} has {target.cores.count}",
                function,
                hint="compile the program for this target",
            )
        srams = [npu.core_sram(core) for core in range(self.cores)]
        missing = sorted(
            name for name in sizes if name not in target.memories and name not in srams
        )
        if missing:
            listing = ", ".join(f"'{name}'" for name in missing)
            raise error(
                f"the program uses {'a memory' if len(missing) == 1 else 'memories'} "
                f"{listing} that {target.name} does not have (it has "
                f"{', '.join(target.memories)})",
                function,
                hint="compile the program for this target",
            )
        for name, declared in sizes.items():
            memory = target.scratch if npu.is_sram(name) else target.memories[name]
            if declared > memory.size_bytes:
                label = "SRAM" if name == npu.SRAM else name
                raise error(
                    f"the program needs {declared} bytes of {label}; {target.name} has "
                    f"{memory.size_bytes}",
                    function,
                    hint="compile the program for this target",
                )
        for sram in srams:
            sizes[sram] = target.scratch.size_bytes
        self.weights_memory, self.weights_bytes = npu.weights_region(function)
        sizes.setdefault(self.weights_memory, self.weights_bytes)
        self.machine = Machine(sizes)
        engines = self.cores * len(npu.QUEUES)
        self.races = Races(self.machine, (self.weights_memory, self.weights_bytes), engines)
        self.timeline = Timeline(engines)
        self.views: dict[SSAValue, View] = {}
        self.static: dict[SSAValue, object] = {}
        """Values known when loading: views' arrays, constants."""
        self.live: dict[SSAValue, object] = {}
        """Values of a run: the arguments, what `npu.read` returns."""
        self.steps: list[Step] = []
        self.placed: list[View] = []
        """The views the runtime writes before every run (`npu.place` of an argument,
        or of a constant outside the weights region)."""
        self.results: list[View] = []
        """The views the runtime reads after every run (`npu.read`)."""
        self.tile = TileFunctions()
        self.returned = self._load()
        del self.races  # checked: its shadow of every byte is not needed to run
        self.timeline.schedule()

    @property
    def events(self) -> list[Event]:
        """Every command in time, in program order."""
        return self.timeline.events

    def run(self, arguments: Sequence[object]) -> list[object]:
        """Run the stream on the entry function's arguments; its results."""
        for name, memory in self.machine.memories.items():
            memory[self.weights_bytes if name == self.weights_memory else 0 :] = 0
        block = self.function.body.blocks.first
        assert block is not None
        self.live.clear()  # the steps hold this dict (not the program: no cycle)
        self.live.update(zip(block.args, arguments))
        for step in self.steps:
            step()
        return [self._value(value) for value in self.returned]

    def _value(self, value: SSAValue) -> object:
        return self.static[value] if value in self.static else self.live[value]

    def _getter(self, value: SSAValue) -> Callable[[], object]:
        """What a step calls for `value` in a run: a known value, or the run's.

        Steps never refer to the program itself, only to its dicts and arrays: a
        program dropped (its session closed or gone) frees its memories and decoded
        steps at once, without waiting for the cyclic garbage collector."""
        if value in self.static:
            known = self.static[value]
            return lambda: known
        return functools.partial(self.live.__getitem__, value)

    def _load(self) -> list[SSAValue]:
        """Load every op of the body; the values the function returns."""
        block = self.function.body.blocks.first
        assert block is not None
        loaders: dict[type[Operation], Callable[[Any], None]] = {
            npu.ViewOp: self._load_view,
            npu.PlaceOp: self._load_place,
            npu.ReadOp: self._load_read,
            npu.SignalOp: self._load_signal,
            npu.WaitOp: self._load_wait,
            npu.EndOp: lambda op: None,
            npu.DmaOp: self._load_dma,
            npu.ConvOp: self._load_conv,
            npu.MatmulOp: self._load_matmul,
            npu.HostCallOp: self._load_host_call,
        }
        for op in block.ops:
            if isinstance(op, ReturnOp):
                return list(op.operands)
            loader = loaders.get(type(op))
            if loader is not None:
                loader(op)
            elif isinstance(op, npu.Command):
                self._load_vector(op)
            else:
                self._load_other(op)
        raise error("the function has no func.return", self.function)

    # ---- views, the boundary, other ops ---------------------------------------------------

    def _load_view(self, op: npu.ViewOp) -> None:
        view = View.of(op)
        memory = self.machine.memories[view.space]
        if view.address + view.extent > memory.size:
            raise hazard(
                f"the view at {view.space} address {view.address} ends at "
                f"{view.address + view.extent}, outside the {memory.size} bytes of {view.space}",
                op,
            )
        self.views[op.result] = view
        self.static[op.result] = self.machine.array(view)

    def _load_place(self, op: npu.PlaceOp) -> None:
        source, dest = op.operands
        array = self.static[dest]
        assert isinstance(array, np.ndarray)
        view = self.views[dest]
        if (
            source in self.static
            and view.space == self.weights_memory
            and view.end <= self.weights_bytes
        ):
            # Constant data in the read-only weights region: placed once, for every run.
            array[...] = np.asarray(self.static[source]).astype(array.dtype)
            return

        value = self._getter(source)

        def place() -> None:
            array[...] = np.asarray(value()).astype(array.dtype)

        self.steps.append(place)
        self.placed.append(view)

    def _load_read(self, op: npu.ReadOp) -> None:
        array, result, live = self.static[op.operands[0]], op.results[0], self.live
        self.results.append(self.views[op.operands[0]])

        def read() -> None:
            live[result] = np.array(array, copy=True, order="C")

        self.steps.append(read)

    def _load_other(self, op: Operation) -> None:
        """Constants are evaluated now; any other op runs in the interpreter."""
        if all(value in self.static for value in op.operands):
            outputs = self.interpreter.run_op(op, tuple(self.static[v] for v in op.operands))
            self.static.update(zip(op.results, outputs))
            return

        interpreter, live = self.interpreter, self.live
        operands = [self._getter(value) for value in op.operands]

        def run() -> None:
            outputs = interpreter.run_op(op, tuple(operand() for operand in operands))
            live.update(zip(op.results, outputs))

        self.steps.append(run)

    # ---- synchronisation ------------------------------------------------------------------

    def _load_signal(self, op: npu.SignalOp) -> None:
        queue = op.engine()
        token = op.props().int("token")
        assert token is not None
        timeline = self.timeline
        if token in timeline.tokens:
            raise hazard(f"token {token} is set twice (by {describe(op)})", op)
        timeline.tokens[token] = self.races.board.clocks[queue].copy()
        timeline.signalled[token] = op.core_index()
        item = Item("signal", token=token)
        timeline.queues[queue].append(item)
        timeline.entries.append(Entry(queue, item))

    def _load_wait(self, op: npu.WaitOp) -> None:
        queue = op.engine()
        token = op.props().int("token")
        assert token is not None
        if token not in self.timeline.tokens:
            raise hazard(
                f"{describe(op)} on {npu.engine_name(queue)} waits for token {token}, which "
                "no earlier signal sets: the queue would wait forever",
                op,
            )
        self.races.board.wait(queue, self.timeline.tokens[token])
        # A token from another core reaches this one the target's latency later.
        across = self.timeline.signalled[token] != op.core_index()
        item = Item("wait", self.target.cores.sync_latency_cycles if across else 0, token=token)
        self.timeline.queues[queue].append(item)
        self.timeline.entries.append(Entry(queue, item))

    # ---- commands -------------------------------------------------------------------------

    def _command(
        self,
        op: npu.Command,
        reads: Sequence[View],
        writes: Sequence[View],
        cycles: int,
        queue: str | None = None,
        macs: int = 0,
        transfer: timing.Cost | None = None,
    ) -> None:
        """Check and time a command on `queue` (its own by default); `transfer` is a
        DMA's cost, whose data phase takes its turn on its ports."""
        core = op.core_index()
        index = npu.engine(core, queue or op.queue())
        if index % len(npu.QUEUES) in COMPUTE_QUEUES and not isinstance(op, npu.DmaOp):
            alignment = self.target.scratch.alignment_bytes
            for view in (*reads, *writes):
                if view.space != npu.core_sram(core) or view.address % alignment:
                    raise hazard(
                        f"{describe(op)} on {npu.engine_name(index)} reads or writes "
                        f"{view.space} at address {view.address}: compute commands use "
                        f"SRAM buffers aligned to {alignment} bytes",
                        op,
                    )
        self.races.access(op, index, reads, writes)
        timeline = self.timeline
        item = Item("command", cycles, transfer.ports if transfer is not None else ())
        timeline.queues[index].append(item)
        timeline.items.append(item)
        timeline.entries.append(Entry(index, item, tuple(reads), tuple(writes)))
        sram_high = max(
            (v.address + v.extent for v in (*reads, *writes) if npu.is_sram(v.space)), default=0
        )
        event = Event(op, index, 0, 0, macs, sram_high=sram_high)
        if transfer is not None:
            event.ddr_read, event.ddr_written = transfer.read, transfer.written
            event.traffic = transfer.traffic
        timeline.events.append(event)

    def _arrays(self, op: Operation) -> list[np.ndarray]:
        return [self.static[value] for value in op.operands]  # type: ignore[misc]

    def _load_dma(self, op: npu.DmaOp) -> None:
        has_source, has_dest, has_frame = _segments(op)
        views = [self.views[value] for value in op.operands]
        source = views[0] if has_source else None
        written = views[-1]  # the frame, else the dest
        reads = [source] if source is not None else []
        # A broadcast writes every core's SRAM at once: timed as one write.
        cost = timing.dma(self.target, reads, [written])
        self._command(op, reads, written.broadcast(op), cost.cycles, transfer=cost)
        pad = _pad_value(op)
        arrays = self._arrays(op)
        box = arrays[0] if has_source else None
        dest = arrays[1] if has_dest else None
        frame = arrays[-1] if has_frame else None
        self.steps.append(_dma_step(box, dest, frame, pad))
        for space in [view.space for view in written.broadcast(op)[1:]]:
            # The same box into another core's SRAM.
            dest = self.machine.array(views[1].within(space)) if has_dest else None
            frame = self.machine.array(views[-1].within(space)) if has_frame else None
            self.steps.append(_dma_step(box, dest, frame, pad))

    def _load_conv(self, op: npu.ConvOp) -> None:
        props = op.props()
        strides = props.ints("strides") or [1, 1]
        dilations = props.ints("dilations") or [1, 1]
        group = props.int("group") or 1
        accumulate = props.bool("accumulate")
        source, weight, acc = self._arrays(op)[:3]
        sixteen = source.dtype == np.int16
        cost = timing.conv_cost(self.target, acc.shape, weight.shape, group, sixteen)
        self._load_mac(op, cost, accumulate)
        if acc.dtype.kind == "f":
            kernel: Step = functools.partial(
                conv_into, source, weight, acc, strides, dilations, group, 0, accumulate
            )
        else:
            zero_point = props.int("input_zero_point") or 0
            kernel = IntegerConv(
                source, weight, acc, strides, dilations, group, zero_point, accumulate,
                self._bias(op),
            )  # fmt: skip
        self._with_stage(op, kernel)

    def _load_matmul(self, op: npu.MatmulOp) -> None:
        props = op.props()
        accumulate = props.bool("accumulate")
        trans_b = props.bool("trans_b")
        lhs, rhs, acc = self._arrays(op)[:3]
        rows, depth = lhs.shape
        sixteen = np.int16 in (lhs.dtype, rhs.dtype)
        cost = timing.matmul_cost(self.target, rows, acc.shape[1], depth, sixteen)
        self._load_mac(op, cost, accumulate)
        zero_point = props.int("a_zero_point") or 0
        rhs_zero_point = props.int("b_zero_point") or 0
        kernel: Step = (
            functools.partial(matmul_into, lhs, rhs, acc, zero_point, trans_b, accumulate)
            if acc.dtype.kind == "f"
            else IntegerMatmul(
                lhs, rhs, acc, zero_point, trans_b, accumulate, self._bias(op), rhs_zero_point
            )
        )
        self._with_stage(op, kernel)

    def _load_mac(self, op: npu.ConvOp | npu.MatmulOp, cost: timing.Cost, accumulate: bool) -> None:
        _, _, _, has_bias, has_params, has_output = _segments(op)
        views = [self.views[value] for value in op.operands]
        reads = (
            views[:2] + ([views[2]] if accumulate else []) + views[3 : 3 + has_bias + has_params]
        )
        writes = [views[2]] + ([views[-1]] if has_output else [])
        self._command(op, reads, writes, cost.cycles, queue="mac", macs=cost.macs)

    def _bias(self, op: npu.ConvOp | npu.MatmulOp) -> np.ndarray | None:
        """The bias of the output stage, if it has one."""
        return self._arrays(op)[3] if _segments(op)[3] else None

    def _with_stage(self, op: npu.ConvOp | npu.MatmulOp, kernel: Step) -> None:
        """The MAC command's step: `kernel` (which adds an integer bias itself), then
        the rest of the output stage: a float bias, then requantize into the output
        or a float clamp."""
        _, _, _, has_bias, has_params, has_output = _segments(op)
        arrays = self._arrays(op)
        acc = arrays[2]
        floating = acc.dtype.kind == "f"
        bias = arrays[3] if has_bias and floating else None
        props = op.props()
        low, high = props.attr("clamp_min"), props.attr("clamp_max")
        clamp = floating and (low is not None or high is not None)
        lowest = -np.inf if low is None else float(_number(low))
        highest = np.inf if high is None else float(_number(high))
        requantize = has_params and has_output
        if requantize:
            params, output = arrays[3 + has_bias], arrays[-1]
            into_output = RequantizeTile(op, element_of(op.operands[-1]), 0)

        def step() -> None:
            kernel()
            if bias is not None:
                acc[...] += bias
            if requantize:
                into_output(acc, params, output)
            elif clamp:
                np.clip(acc, lowest, highest, out=acc)

        self.steps.append(step)

    def _load_vector(self, op: npu.Command) -> None:
        """A vector-unit command: the tile interpreter's kernel of the same op."""
        spec = backend.command_spec(op)
        if spec is None or spec.cost is None:
            raise error(f"the simulator does not run {op.name}", op)
        reads, writes, per_element = spec.cost(op)
        output = writes[0]
        # 16-bit activations in or out (not a table: a softmax's i16 exp entries).
        sixteen = i16 in (element_of(reads[0]) if reads else None, element_of(output))
        cycles = timing.vector(self.target, output, per_element, sixteen)
        self._command(
            op, [self.views[v] for v in reads], [self.views[v] for v in writes], cycles, "vector"
        )
        arguments = tuple(self._value(value) for value in op.operands)
        prepared = _PREPARED.get(type(op))
        if prepared is not None:
            self.steps.append(functools.partial(prepared(op), *arguments))
            return
        implementation = getattr(type(self.tile), "__impl_dict")[spec.tile_op]
        self.steps.append(functools.partial(implementation, self.tile, None, op, arguments))

    def _load_host_call(self, op: npu.HostCallOp) -> None:
        module = op.get_toplevel_object()
        assert isinstance(module, ModuleOp)
        callee = SymbolTable.lookup_symbol(module, op.callee)
        if not isinstance(callee, FuncOp):
            raise error(f"the host call's callee {op.callee} is not a function of the module", op)
        arrays = self._arrays(op)
        inputs, outputs = arrays[: len(op.inputs)], arrays[len(op.inputs) :]
        cycles = timing.host(self.target, callee, inputs, outputs)
        self._command(
            op,
            [self.views[v] for v in op.inputs],
            [self.views[v] for v in op.outputs],
            cycles,
            "host",
        )
        interpreter = self.interpreter

        def call() -> None:
            results = interpreter.call_op(callee, tuple(np.array(a) for a in inputs))
            for array, value in zip(outputs, results):
                array[...] = np.asarray(value).astype(array.dtype)

        self.steps.append(call)


_PREPARED: dict[type[Operation], Callable[[Any], Callable[..., None]]] = {
    npu.AddOp: AddTile,
    npu.MulOp: MulTile,
}
"""The vector commands whose kernels decode their properties once, when loading."""


class NpuFunctions:
    """The simulator as `irc.sim.run.run_function` uses it: it loads a function's
    stream once (`Program`, for the active target) and runs it on each call."""

    def __init__(self) -> None:
        self.program: Program | None = None

    def load(self, interpreter: Interpreter, function: FuncOp) -> Program:
        """The loaded stream of `function` (loaded now unless it already is)."""
        target = _target_for(function)
        program = self.program
        if program is None or program.function is not function or program.target != target:
            program = self.program = Program(function, target, interpreter)
        return program

    def run_stream(
        self, interpreter: Interpreter, function: FuncOp, arguments: Sequence[object]
    ) -> list[object]:
        """Run a function's stream on its arguments; its results."""
        return self.load(interpreter, function).run(arguments)


def _segments(op: Operation) -> tuple[int, ...]:
    """The operand segment sizes of an op with optional operands."""
    return tuple(op.properties[tile.SEGMENTS].get_values())  # type: ignore[attr-defined]


def _dma_step(
    box: np.ndarray | None, dest: np.ndarray | None, frame: np.ndarray | None, pad: int | float
) -> Step:
    """A DMA's data movement: fill the frame with `pad`, then copy the box into `dest`."""

    def step() -> None:
        if frame is not None:
            frame[...] = pad
        if box is not None and dest is not None:
            np.copyto(dest, box, "unsafe")

    return step


def _pad_value(op: npu.DmaOp) -> int | float:
    attribute = op.pad
    return attribute.value.data if attribute is not None else 0
