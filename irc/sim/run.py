"""Running a command stream on the simulator, and what the run measured.

`run_function(module, inputs)` runs IR of any level, as `irc.interp.run_function`
does, a command stream on the simulator (irc/sim/machine.py); what runs `npu`-level
IR (irc-run, the runtime, the tests) calls it. `simulate(module, inputs, target)`
runs the entry function's stream and returns its outputs with a `Report` (a `Simulator` loads the stream once and runs
it on many inputs): total cycles and time at the target's clock,
each engine's busy cycles and utilisation, the MAC array's utilisation, DDR bytes
read and written, the SRAM high-water mark, and the same per layer (commands are
attributed to the layer whose location they carry). `chrome_trace` is the run as a
Chrome trace-event timeline, one track per engine, which Perfetto and
chrome://tracing open.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.interpreter import Interpreter
from xdsl.traits import SymbolTable

from irc import interp
from irc.diagnostics import error
from irc.dialects import npu
from irc.interp import check_constants_have_data, find_function, make_interpreter
from irc.sim.machine import Event, NpuFunctions
from irc.targets import Target, using_target


@dataclass
class Figures:
    """Cycles, work and traffic of a run or of one layer."""

    start: int = 0
    end: int = 0
    busy: dict[str, int] = field(default_factory=lambda: dict.fromkeys(npu.QUEUES, 0))
    """Cycles each engine queue was busy, by its name (`npu.engine_name`: `mac`,
    `core1.mac`)."""
    macs: int = 0
    ddr_read: int = 0
    """Bytes read from the system memories (all of them)."""
    ddr_written: int = 0
    """Bytes written to the system memories."""
    traffic: dict[str, list[int]] = field(default_factory=dict)
    """[bytes read, bytes written] per system memory."""
    commands: int = 0
    sram_high: int = 0
    """The highest SRAM byte the commands touch."""
    cores: set[int] = field(default_factory=set)
    """The cores whose commands these are."""

    @property
    def cycles(self) -> int:
        """From the first command's start to the last one's end."""
        return self.end - self.start

    def by_queue(self) -> dict[str, int]:
        """Busy cycles of each kind of queue (`npu.QUEUES`), every core's together."""
        totals = dict.fromkeys(npu.QUEUES, 0)
        for name, cycles in self.busy.items():
            totals[name.rpartition(".")[2]] += cycles
        return totals

    def add(self, event: Event) -> None:
        """Count a command in."""
        if not self.commands:
            self.start, self.end = event.start, event.end
        self.start = min(self.start, event.start)
        self.end = max(self.end, event.end)
        name = npu.engine_name(event.queue)
        self.busy[name] = self.busy.get(name, 0) + event.end - event.start
        self.cores.add(event.queue // len(npu.QUEUES))
        self.macs += event.macs
        self.ddr_read += event.ddr_read
        self.ddr_written += event.ddr_written
        for memory, read, written in event.traffic:
            counts = self.traffic.setdefault(memory, [0, 0])
            counts[0] += read
            counts[1] += written
        self.sram_high = max(self.sram_high, event.sram_high)
        self.commands += 1


@dataclass
class Report:
    """What a simulated run took (see the module docstring)."""

    target: Target
    total: Figures
    layers: dict[str, Figures]
    events: list[Event]

    @property
    def sram_peak(self) -> int:
        """The highest SRAM byte any command touches."""
        return self.total.sram_high

    @property
    def cycles(self) -> int:
        """When the last command ends."""
        return self.total.end

    @property
    def seconds(self) -> float:
        """The run's time at the target's clock."""
        return self.cycles / self.target.mac_array.clock_hz

    @property
    def cores(self) -> int:
        """The NPU cores of the run: the target's, or as many as the program used."""
        used = max((event.queue // len(npu.QUEUES) + 1 for event in self.events), default=1)
        return max(self.target.cores.count, used)

    @property
    def engines(self) -> tuple[int, ...]:
        """The engine queues of the machine (`npu.engine` indices), core after core in
        `npu.QUEUES` order: the weight stream (`dma_weights`) and its staging copies
        (`dma_stage`) only on a target with a weight stream, or when the run used them
        (a program made for one); the host once (the cores share it), on core 0."""
        stream = self.target.mac_array.weight_stream
        optional = ("dma_weights", "dma_stage")
        busy = self.total.busy
        return tuple(
            npu.engine(core, queue)
            for core in range(self.cores)
            for queue in npu.QUEUES
            if (
                queue not in optional
                or stream
                or busy.get(npu.engine_name(npu.engine(core, queue)), 0)
            )
            and (queue != "host" or core == 0)
        )

    @property
    def queues(self) -> tuple[str, ...]:
        """The names of `engines` (`npu.engine_name`)."""
        return tuple(npu.engine_name(index) for index in self.engines)

    def utilisation(self, queue: str) -> float:
        """The share of the run an engine was busy."""
        return self.total.busy.get(queue, 0) / self.cycles if self.cycles else 0.0

    @property
    def mac_utilisation(self) -> float:
        """MACs done against what the arrays of every core could do in the run's
        cycles."""
        capacity = self.cycles * self.target.mac_array.macs_per_cycle * self.cores
        return self.total.macs / capacity if capacity else 0.0

    def summary(self) -> str:
        """The run in a few lines."""
        total = self.total
        lines = [
            f"{self.cycles} cycles, {self.seconds * 1e3:.3f} ms at "
            f"{self.target.mac_array.clock_hz / 1e6:g} MHz on {self.target.name}; "
            f"MAC utilisation {self.mac_utilisation:.1%}",
            "busy: "
            + ", ".join(
                f"{queue} {total.busy.get(queue, 0)} ({self.utilisation(queue):.0%})"
                for queue in self.queues
            ),
            "; ".join(
                f"{memory}: {read} bytes read, {written} written"
                for memory, (read, written) in sorted(total.traffic.items())
            )
            + ("; " if total.traffic else "")
            + f"SRAM peak {self.sram_peak} bytes; {total.commands} commands",
        ]
        return "\n".join(lines)

    def layer_table(self) -> str:
        """One line per layer: its span, its engines' busy cycles, MAC utilisation, DDR
        traffic and the highest SRAM byte it uses."""
        # The weight stream's column, on a target that has one (`dma_weights`).
        stream = "dma_weights" in self.queues
        weights_header = f"{'weights':>9} " if stream else ""

        def weights(busy: dict[str, int]) -> str:
            return f"{busy.get('dma_weights', 0):>9} " if stream else ""

        header = (
            f"{'layer':32} {'start':>10} {'cycles':>10} {'mac':>10} {'vector':>9} "
            f"{'dma_in':>9} {'dma_out':>9} {'host':>9} {weights_header}{'MAC util':>8} "
            f"{'DDR read':>10} "
            f"{'written':>10} {'SRAM':>8}"
        )
        lines = [header]
        capacity = self.target.mac_array.macs_per_cycle
        for name, figures in self.layers.items():
            cores = max(len(figures.cores), 1)  # against the arrays of the cores it used
            utilisation = (
                figures.macs / (figures.cycles * capacity * cores) if figures.cycles else 0.0
            )
            busy = figures.by_queue()
            lines.append(
                f"{name[:32]:32} {figures.start:>10} {figures.cycles:>10} {busy['mac']:>10} "
                f"{busy['vector']:>9} {busy['dma_in']:>9} {busy['dma_out']:>9} "
                f"{busy['host']:>9} {weights(busy)}{utilisation:>8.1%} {figures.ddr_read:>10} "
                f"{figures.ddr_written:>10} {figures.sram_high:>8}"
            )
        return "\n".join(lines)


def event_layer(event: Event) -> str:
    """The layer a command belongs to: the ONNX name its location carries, else
    `file:line` of the stream's text, else the command's name (the tiling plan's
    `layer_name`)."""
    from irc.tiling.planner import layer_name

    return layer_name(event.op)


class Simulator:
    """A module's command stream loaded on a target, to run on any number of inputs.

    Loading checks the stream for hazards and times it (neither depends on the data:
    `report`), and decodes every command once (irc/sim/machine.py), so a run only
    computes, as a runtime session would.
    """

    def __init__(self, module: ModuleOp, target: Target, entry: str = "main") -> None:
        self.module, self.target, self.entry = module, target, entry
        self.functions = NpuFunctions()
        function = SymbolTable.lookup_symbol(module, entry)
        if not isinstance(function, FuncOp):
            raise error(f"the module has no function @{entry}", module)
        with using_target(target):
            program = self.functions.load(make_interpreter(module), function)
        self._report: Report | None = report_of(target, program.events)

    @property
    def report(self) -> Report:
        """The timing of a run (the same on every input)."""
        return self._loaded()

    def run(self, inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray]) -> dict[str, np.ndarray]:
        """The stream's outputs on `inputs` (named, or in argument order)."""
        self._loaded()
        with using_target(self.target):
            return run_function(self.module, inputs, self.entry, self.functions)

    def close(self) -> None:
        """Release the loaded stream: the simulated memories, the decoded commands, the
        report (whose events name the module's ops) and the module. Nothing of it is
        in a reference cycle, so a simulator that is dropped releases the same at once,
        except the module's IR, which the cyclic garbage collector frees. The simulator
        cannot run after."""
        self.functions.program = None
        self._report = None
        self.module = ModuleOp([])

    def _loaded(self) -> Report:
        if self._report is None:
            raise error(
                "the simulator was closed: its program and memories are released",
                hint="load the stream again (a new Simulator, or a new runtime Session)",
            )
        return self._report


def run_function(
    module: ModuleOp,
    inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray],
    entry: str = "main",
    simulator: NpuFunctions | None = None,
) -> dict[str, np.ndarray]:
    """`irc.interp.run_function` for IR of every level: a command stream runs on the
    simulator `simulator` (a fresh one by default, on the active target or the one the
    stream names), any other function on the interpreter."""
    if simulator is None and not npu.is_stream(find_function(module, entry)):
        return interp.run_function(module, inputs, entry)
    machine = simulator or NpuFunctions()

    def call(
        interpreter: Interpreter, function: FuncOp, arguments: Sequence[np.ndarray]
    ) -> list[object]:
        if machine.program is None or machine.program.function is not function:
            check_constants_have_data(module)  # a loaded stream's were checked when loading
        return machine.run_stream(interpreter, function, arguments)

    return interp.run_function(module, inputs, entry, call)


def report_of(target: Target, events: list[Event]) -> Report:
    """The report of a run's timed commands: in total and per layer."""
    total = Figures()
    layers: dict[str, Figures] = {}
    for event in events:
        total.add(event)
        layers.setdefault(event_layer(event), Figures()).add(event)
    return Report(target, total, layers, events)


def simulate(
    module: ModuleOp,
    inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray],
    target: Target,
    entry: str = "main",
) -> tuple[dict[str, np.ndarray], Report]:
    """Run the command stream of `module`'s `entry` on `target`'s simulator."""
    simulator = Simulator(module, target, entry)
    return simulator.run(inputs), simulator.report


def chrome_trace(report: Report) -> dict[str, object]:
    """The run as Chrome trace events: one thread per engine, times in microseconds;
    one process per core on a target of several (named "<target> core N")."""
    clock_mhz = report.target.mac_array.clock_hz / 1e6
    cores = report.cores
    events: list[dict[str, object]] = [
        {
            "name": "process_name",
            "ph": "M",
            "pid": core,
            "args": {"name": report.target.name + (f" core {core}" if cores > 1 else "")},
        }
        for core in range(cores)
    ]
    for index in report.engines:
        core, queue = divmod(index, len(npu.QUEUES))
        events.append(
            {
                "name": "thread_name",
                "ph": "M",
                "pid": core,
                "tid": queue,
                "args": {"name": npu.QUEUES[queue]},
            }
        )
    for event in report.events:
        args: dict[str, object] = {"layer": event_layer(event), "cycles": event.end - event.start}
        if event.macs:
            args["macs"] = event.macs
        for memory, read, written in event.traffic:
            args[f"{memory}_read"] = read
            args[f"{memory}_written"] = written
        events.append(
            {
                "name": event.op.name.removeprefix("npu."),
                "cat": npu.QUEUES[event.queue % len(npu.QUEUES)],
                "ph": "X",
                "pid": event.queue // len(npu.QUEUES),
                "tid": event.queue % len(npu.QUEUES),
                "ts": event.start / clock_mhz,
                "dur": (event.end - event.start) / clock_mhz,
                "args": args,
            }
        )
    return {"traceEvents": events, "displayTimeUnit": "ns"}


def write_trace(report: Report, path: Path) -> None:
    """Write the Chrome trace to `path` (atomically; an unwritable path is an
    `IrcError`)."""
    from irc.fileio import write_report

    text = json.dumps(chrome_trace(report), separators=(",", ":"))
    write_report(path, lambda: text, lambda: text, "trace", "--trace")
