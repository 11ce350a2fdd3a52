"""What a compile made, for people: the summary `irc-compile` prints and the reports
it writes beside the package.

    result = compile_model(path, CompileOptions())
    print(summary_text(result))                    # one screen
    with StagedOutputs() as staged:
        write_reports(result, out_dir, staged)     # report.md, layers.csv, trace.json, PNGs

The reports (docs/tools.md, `irc-compile`):

- `report.md`: the summary, where the cycles go, the partition between NPU and CPU,
  one row per layer (simulated cycles against the planner's estimate and the layer's
  lower bound, MAC utilisation, DDR traffic, SRAM, the quantization error of its
  output), the quantization error of the outputs and of the worst tensors, the memory
  the program needs, the compile's stages (not their times, which vary), and links
  to the other files;
- `layers.csv`: the per-layer table with raw numbers, in program order;
- `trace.json`: the simulated run as Chrome trace events (Perfetto, chrome://tracing);
- `timeline.png` (the engines' activity over the run) and `layers.png` (each layer's
  cycles against its lower bound), when matplotlib is installed (`irc[plots]`).

A layer's *cycles* are its span in the simulated run: from its first command's start
to its last command's end. Spans overlap where the next layer's loads start under
this layer's compute, so a layer's *share* of the run is counted instead as the
cycles by which it moves the end of the run: its end minus the latest end of the
layers before it; the shares add up to the whole run.

The same result always gives byte-identical files: no timestamps, paths only as the
input gave them, and PNGs without the metadata matplotlib would embed.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from irc.dialects import npu
from irc.sim.run import event_layer
from irc.tiling.cascade import splits_by_rows

if TYPE_CHECKING:
    from irc.driver.pipeline import CompileResult
    from irc.fileio import StagedOutputs
    from irc.quantize.report import TensorError
    from irc.sim.run import Report
    from irc.tiling.cascade import CascadePlan

REPORT_MD = "report.md"
LAYERS_CSV = "layers.csv"
TRACE_JSON = "trace.json"
TIMELINE_PNG = "timeline.png"
LAYERS_PNG = "layers.png"

PLOTS_HINT = "pip install 'irc[plots]'"
"""How to get the PNG plots when matplotlib is missing."""

WORST_TENSORS = 10
"""Tensors the quantization section lists, worst cosine first."""

TOP_LAYERS = 5
"""Layers "where the cycles go" names."""

MISSING = "—"
"""A cell with nothing to show (a layer absent from the plan, the run or the error
report)."""


# --------------------------------------------------------------------------------------
# Units


def traffic_text(simulation: Report) -> str:
    """`ddr 8.4 KiB read, 6.0 KiB written`: the traffic of each system memory."""
    parts = [
        f"{memory} {human_bytes(read)} read, {human_bytes(written)} written"
        for memory, (read, written) in sorted(simulation.total.traffic.items())
    ]
    return "; ".join(parts) or "no memory traffic"


def human_bytes(count: float) -> str:
    """A byte count in binary units, as the target files write them: `512 KiB`."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size:
            value = count / size
            return f"{value:.1f} {unit}" if value < 100 else f"{value:,.0f} {unit}"
    return f"{int(count):,} B"


def human_seconds(seconds: float) -> str:
    """A duration with a unit that keeps 3 significant digits readable."""
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} µs"


def _percent(part: float, whole: float) -> str:
    return f"{part / whole:.1%}" if whole else MISSING


def _ratio_text(value: float | None, digits: int = 1) -> str:
    return MISSING if value is None else f"{value:.{digits}%}"


def _cosine_text(value: float | None) -> str:
    return MISSING if value is None else f"{value:.5f}"


def _sqnr_text(value: float | None) -> str:
    if value is None:
        return MISSING
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    return f"{value:.1f}"


def _count_text(value: int | None) -> str:
    return MISSING if value is None else f"{value:,}"


# --------------------------------------------------------------------------------------
# The per-layer rows


@dataclass(frozen=True)
class LayerRow:
    """One layer as the reports show it: the simulator's figures joined with the
    tiling plan and the quantization error of the layer's output, by layer name.

    A field is None when the layer is absent from that side: a host function has no
    plan, a float layer no quantization error.
    """

    name: str
    op: str
    tile: str | None
    macs: int
    """The MACs the layer computes: its NPU commands' and its host ops'."""
    start: int | None
    end: int | None
    cycles: int | None
    """The simulated span (first command's start to last command's end)."""
    added_cycles: int
    """The cycles by which the layer moves the end of the run (see the module docstring)."""
    estimate: int | None
    """The planner's estimate of the layer's cycles."""
    lower_bound: int | None
    mac_utilisation: float | None
    """MACs done against what the array could do in the layer's span (None: no MACs)."""
    ddr_read: int | None
    ddr_written: int | None
    sram_bytes: int | None
    """The SRAM the plan's buffers take (double buffers counted twice)."""
    sram_high: int | None
    """The highest SRAM byte the layer's commands touch."""
    commands: int
    busy: dict[str, int]
    """Busy cycles of each kind of queue in the layer's commands, every core's together."""
    cosine: float | None
    sqnr_db: float | None
    cores: int = 1
    """The cores the layer's commands ran on."""

    @property
    def efficiency(self) -> float | None:
        """The lower bound against the simulated cycles (1.0: the layer runs at its bound)."""
        if self.lower_bound is None or not self.cycles:
            return None
        return self.lower_bound / self.cycles

    @property
    def busiest_engine(self) -> str | None:
        """The engine busy longest in the layer's commands."""
        if not any(self.busy.values()):
            return None
        return max(npu.QUEUES, key=lambda queue: self.busy.get(queue, 0))


def _output_errors(result: CompileResult) -> dict[str, TensorError]:
    """The quantization error of each layer's first output, by layer name."""
    found: dict[str, TensorError] = {}
    if result.errors is None:
        return found
    for tensor in result.errors.tensors:
        if tensor.is_weight:
            continue
        layer, _, index = tensor.key.rpartition("#")
        if layer and index == "0":
            found.setdefault(layer, tensor)
    return found


def _program_order(simulated: Sequence[str], planned: Sequence[str]) -> list[str]:
    """The simulated layers in stream order, with any planned layer the stream lacks
    placed after the planned layer before it."""
    order = list(simulated)
    present = set(order)
    previous: str | None = None
    for name in planned:
        if name not in present:
            position = order.index(previous) + 1 if previous is not None else 0
            order.insert(position, name)
            present.add(name)
        previous = name
    return order


def layer_rows(result: CompileResult) -> list[LayerRow]:
    """Every layer the stream runs or the plan tiles, in program order."""
    simulation = result.simulation
    plans = {plan.layer.name: plan for plan in result.tiling.plans} if result.tiling else {}
    host_ops: dict[str, list[str]] = {}
    host_macs: dict[str, int] = {}
    for host_op in result.partition.cpu_ops:
        host_ops.setdefault(host_op.layer, []).append(host_op.op)
        host_macs[host_op.layer] = host_macs.get(host_op.layer, 0) + host_op.macs
    errors = _output_errors(result)
    commands: dict[str, list[str]] = {}
    for event in simulation.events:
        if event.op.name not in ("npu.dma", "npu.host_call"):
            names = commands.setdefault(event_layer(event), [])
            if event.op.name not in names:
                names.append(event.op.name)
    macs_per_cycle = result.target.mac_array.macs_per_cycle
    rows: list[LayerRow] = []
    frontier = 0
    for name in _program_order(list(simulation.layers), list(plans)):
        figures = simulation.layers.get(name)
        plan = plans.get(name)
        tensor = errors.get(name)
        if plan is not None:
            op = plan.layer.op
        elif name in host_ops:
            op = ", ".join(dict.fromkeys(host_ops[name]))
        elif tensor is not None:
            op = tensor.op  # an unplanned NPU layer, such as a transpose: its float op
        else:
            op = ", ".join(commands.get(name, [])) or MISSING
        added = 0
        utilisation = None
        if figures is not None:
            added = max(0, figures.end - frontier)
            frontier = max(frontier, figures.end)
            if figures.macs and figures.cycles:
                # Against the arrays of the cores the layer ran on.
                cores = max(len(figures.cores), 1)
                utilisation = figures.macs / (figures.cycles * macs_per_cycle * cores)
        rows.append(
            LayerRow(
                name=name,
                op=op,
                tile=str(plan.tile) if plan is not None else None,
                macs=(figures.macs if figures is not None else 0) + host_macs.get(name, 0),
                start=figures.start if figures is not None else None,
                end=figures.end if figures is not None else None,
                cycles=figures.cycles if figures is not None else None,
                added_cycles=added,
                estimate=plan.cycles if plan is not None else None,
                lower_bound=plan.lower_bound if plan is not None else None,
                mac_utilisation=utilisation,
                ddr_read=figures.ddr_read if figures is not None else None,
                ddr_written=figures.ddr_written if figures is not None else None,
                sram_bytes=plan.sram_bytes if plan is not None else None,
                sram_high=figures.sram_high if figures is not None else None,
                commands=figures.commands if figures is not None else 0,
                busy=figures.by_queue() if figures is not None else dict.fromkeys(npu.QUEUES, 0),
                cores=max(len(figures.cores), 1) if figures is not None else 1,
                cosine=tensor.cosine if tensor is not None else None,
                sqnr_db=tensor.sqnr_db if tensor is not None else None,
            )
        )
    return rows


# --------------------------------------------------------------------------------------
# Facts the summary and report.md share


def schedule_efficiency(result: CompileResult) -> float | None:
    """The network's bound (its compute at the ideal rate, or its compulsory off-chip
    traffic: every weight once, the model's inputs and outputs: irc.tiling.planner.
    network_bound) against the simulated cycles."""
    tiling = result.tiling
    if tiling is None or not tiling.plans or tiling.network is None:
        return None
    if not result.simulation.cycles:
        return None
    return tiling.network.cycles / result.simulation.cycles


def _memory(result: CompileResult) -> dict[str, Any]:
    """The manifest's `memory` section (the bytes of each memory the program needs,
    where its weights are)."""
    from irc.codegen.package import MANIFEST

    content = result.files.get(MANIFEST)
    if content is None:
        return {}
    return dict(json.loads(content).get("memory", {}))


def _worst_computed(result: CompileResult) -> TensorError | None:
    """The computed (not weight) tensor with the lowest cosine: weights are left out,
    as a bias that bias correction changed on purpose differs without being an error."""
    if result.errors is None:
        return None
    computed = [tensor for tensor in result.errors.by_cosine() if not tensor.is_weight]
    return computed[0] if computed else None


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _ops_in_brief(names: Iterable[str], limit: int = 6) -> str:
    """`quant.qcast, nn.softmax x2`: op names with their counts, in first-seen order,
    at most `limit` of them."""
    counts = list(Counter(names).items())
    text = ", ".join(name if count == 1 else f"{name} x{count}" for name, count in counts[:limit])
    return text + (f" and {len(counts) - limit} more kinds" if len(counts) > limit else "")


PREQUANTIZED = "int8, quantized already (an int8 TFLite model or qnn IR: no calibration)"
"""What the reports say of a model that is integer when it is imported."""

SUMMARY_OUTPUTS = 3
"""Outputs the summary names; report.md lists them all."""


def _options_text(result: CompileResult) -> str:
    options = result.options
    if options.quantized:
        quantize = f"{options.quantize} ({options.chosen_observer} observer)"
    elif options.prequantized:
        quantize = PREQUANTIZED
    else:
        quantize = "float (--quantize none)"
    floats = f", float layers: {', '.join(options.float_layers)}" if options.float_layers else ""
    if options.int16_layers or options.int16_ops:
        floats += f", int16: {', '.join([*options.int16_layers, *options.int16_ops])}"
    return f"-O{options.opt_level}, {quantize}{floats}"


# --------------------------------------------------------------------------------------
# The one-screen summary


def summary_text(result: CompileResult) -> str:
    """What `irc-compile` prints when it is done: one aligned screen (about 15 lines)
    with the compile, the partition, the quantization error, the simulated run, the
    memory and the package; warnings first."""
    simulation = result.simulation
    target = result.target
    partition = result.partition
    lines: list[str] = [f"warning: {warning}" for warning in result.warnings]

    def line(label: str, text: str) -> None:
        lines.append(f"{label:<13}{text}")

    line("model", f"{result.name} ({result.source}) for {target.name}")
    line("options", _options_text(result))
    if result.options.quantized:
        line("calibration", result.calibration)
    slowest = sorted(result.stages, key=lambda stage: -stage.seconds)[:3]
    line(
        "compile",
        f"{result.total_seconds:.2f} s; slowest: "
        + ", ".join(f"{stage.name} {stage.seconds:.2f} s" for stage in slowest),
    )
    all_macs = partition.npu_macs + partition.cpu_macs
    cpu_ops = [host_op.op for host_op in partition.cpu_ops]
    line(
        "NPU",
        f"{_plural(len(partition.npu_layers), 'layer')}, {partition.npu_macs:,} MACs "
        f"({_percent(partition.npu_macs, all_macs)})",
    )
    line(
        "CPU",
        f"{_plural(len(cpu_ops), 'op')}, {partition.cpu_macs:,} MACs "
        f"({_percent(partition.cpu_macs, all_macs)})"
        + (f": {_ops_in_brief(cpu_ops)}" if cpu_ops else ""),
    )
    if result.options.quantized:
        metrics = list(result.output_metrics.items())
        for name, (cosine, sqnr) in metrics[:SUMMARY_OUTPUTS]:
            line("output", f"{name}: cosine {cosine:.5f}, SQNR {_sqnr_text(sqnr)} dB")
        if len(metrics) > SUMMARY_OUTPUTS:
            line("", f"and {len(metrics) - SUMMARY_OUTPUTS} more outputs: see {REPORT_MD}")
        worst = _worst_computed(result)
        if worst is not None:
            line(
                "worst layer",
                f"{worst.key.removesuffix('#0')} ({worst.op}): cosine {worst.cosine:.5f}, "
                f"SQNR {_sqnr_text(worst.sqnr_db)} dB",
            )
    elif result.options.prequantized:
        line("output", "quantized already: no float model to measure the error against")
    else:
        line("output", "float: no quantization error")
    clock_mhz = target.mac_array.clock_hz / 1e6
    line(
        "time",
        f"{simulation.cycles:,} cycles = {simulation.seconds * 1e3:.3f} ms at {clock_mhz:g} MHz "
        f"({1 / simulation.seconds:,.0f} inferences/s)"
        if simulation.seconds
        else "no commands",
    )
    line(
        "utilisation",
        f"MAC array {simulation.mac_utilisation:.1%}; busy: "
        + ", ".join(f"{queue} {simulation.utilisation(queue):.0%}" for queue in simulation.queues),
    )
    efficiency = schedule_efficiency(result)
    if efficiency is not None and result.tiling is not None and result.tiling.network:
        network = result.tiling.network
        line(
            "schedule",
            f"efficiency {efficiency:.1%} (network bound {network.cycles:,} / "
            f"{simulation.cycles:,} simulated cycles: ideal compute {network.compute:,}, "
            f"compulsory traffic {network.traffic:,}; sum of layer lower bounds "
            f"{result.tiling.lower_bound:,})",
        )
    line(
        "memory",
        f"{traffic_text(simulation)}; SRAM peak {human_bytes(simulation.sram_peak)} of "
        f"{human_bytes(target.scratch.size_bytes)} "
        f"({_percent(simulation.sram_peak, target.scratch.size_bytes)})",
    )
    line(
        "package",
        f"{human_bytes(sum(len(content) for content in result.files.values()))}: "
        + ", ".join(
            f"{name} {human_bytes(len(content))}" for name, content in sorted(result.files.items())
        ),
    )
    return "\n".join(lines)


# --------------------------------------------------------------------------------------
# report.md


def _cell(text: str) -> str:
    """Text safe in a GitHub table cell."""
    return text.replace("|", "\\|")


def _code(text: str) -> str:
    return f"`{text}`" if text and text != MISSING else MISSING


def _table(header: Sequence[str], rows: Iterable[Sequence[str]], right: Sequence[bool]) -> str:
    """A GitHub table; `right[i]` right-aligns column i (numbers)."""
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---:" if align else "---" for align in right) + "|",
    ]
    lines.extend("| " + " | ".join(_cell(cell) for cell in row) + " |" for row in rows)
    return "\n".join(lines)


ENGINE_WORDS = {
    "dma_in": "the DMA loading from DDR (dma_in)",
    "dma_out": "the DMA storing to DDR (dma_out)",
    "mac": "the MAC array",
    "vector": "the vector unit",
    "host": "the host CPU",
    "dma_weights": "the weight stream (dma_weights)",
    "dma_stage": "the DMA staging weights (dma_stage)",
}


def engine_words(name: str) -> str:
    """An engine queue (`npu.engine_name`: `mac`, `core1.mac`) in words."""
    core, _, queue = name.rpartition(".")
    return ENGINE_WORDS[queue] + (f" of {core.replace('core', 'core ')}" if core else "")


def _what_limits(row: LayerRow) -> str:
    """What a layer's span is spent on, in words: its busiest engine, or waiting."""
    engine = row.busiest_engine
    if engine is None or not row.cycles:
        return ""
    busy = row.busy[engine] / (row.cycles * row.cores)
    if busy < 0.5:
        return f"its engines are idle {1 - busy:.0%} of its span, waiting for other layers"
    text = f"{ENGINE_WORDS[engine]} is busy {busy:.0%} of its span"
    if engine == "mac" and row.mac_utilisation is not None:
        filled = row.mac_utilisation / busy
        if filled < 0.6:
            text += f" but fills only {filled:.0%} of its MACs (the layer's shape fits it badly)"
    return text


def _where_the_cycles_go(result: CompileResult, rows: Sequence[LayerRow]) -> list[str]:
    simulation = result.simulation
    cycles = simulation.cycles
    lines = ["## Where the cycles go", ""]
    if not cycles:
        return [*lines, "The stream has no timed commands.", ""]
    busiest = max(simulation.queues, key=simulation.utilisation)
    engines = ", ".join(
        f"{queue} {simulation.utilisation(queue):.0%}"
        for queue in sorted(
            simulation.queues, key=lambda queue: -simulation.total.busy.get(queue, 0)
        )
    )
    lines.append(
        f"One inference takes **{cycles:,} cycles** ({human_seconds(simulation.seconds)}). "
        f"The busiest engine is {engine_words(busiest)}, busy "
        f"{simulation.utilisation(busiest):.0%} of the run (all engines: {engines}); the MAC "
        f"array does {simulation.mac_utilisation:.1%} of the multiply-accumulates it could."
    )
    lines.append("")
    top = sorted(rows, key=lambda row: -row.added_cycles)[:TOP_LAYERS]
    share = sum(row.added_cycles for row in top) / cycles
    which = "The layer that adds" if len(top) == 1 else f"The {len(top)} layers that add"
    lines.append(
        f"{which} most to the run take{'s' if len(top) == 1 else ''} {share:.0%} of it (a "
        "layer's share is the cycles by which it moves the end of the run; layers overlap, "
        "so its span can be longer):"
    )
    lines.append("")
    for number, row in enumerate(top, 1):
        parts = [
            f"{number}. {_code(row.name)} ({row.op}): {row.added_cycles:,} cycles, "
            f"{row.added_cycles / cycles:.1%} of the run"
        ]
        limits = _what_limits(row)
        if limits:
            parts.append(f"; {limits}")
        if row.lower_bound and row.cycles:
            parts.append(
                f"; its span is {row.cycles / row.lower_bound:.1f}x its lower bound of "
                f"{row.lower_bound:,}"
            )
        lines.append("".join(parts) + ".")
    lines.append("")
    efficiency = schedule_efficiency(result)
    if efficiency is not None and result.tiling is not None and result.tiling.network:
        network = result.tiling.network
        lines.append(
            f"Schedule efficiency: the network's bound, its compute at the ideal rate "
            f"({network.compute:,} cycles) or its compulsory off-chip traffic (every weight "
            f"once, the model's inputs and outputs: {network.traffic:,}), whichever is "
            f"longer, is {network.cycles:,} cycles, {efficiency:.1%} of the simulated run. "
            f"The layers' own lower bounds (each layer's ideal compute or its compulsory "
            f"traffic, every tensor it reads and writes crossing memory once; a cascade's "
            f"in place of its layers') add up to {result.tiling.lower_bound:,}."
        )
        host = simulation.total.busy["host"]
        if host:
            lines.append(
                f"The host CPU's {host:,} cycles ({host / cycles:.0%} of the run) have no "
                "lower bound: they are the host functions and their NPU<->CPU transitions."
            )
        lines.append("")
    return lines


def _summary_table(result: CompileResult) -> list[str]:
    simulation = result.simulation
    partition = result.partition
    target = result.target
    all_macs = partition.npu_macs + partition.cpu_macs
    rows: list[tuple[str, str]] = []
    if simulation.seconds:
        rows.append(
            (
                "Time per inference",
                f"{human_seconds(simulation.seconds)} ({simulation.cycles:,} cycles at "
                f"{target.mac_array.clock_hz / 1e6:g} MHz), {1 / simulation.seconds:,.0f} "
                "inferences/s one at a time",
            )
        )
    rows.append(("MAC utilisation", f"{simulation.mac_utilisation:.1%}"))
    efficiency = schedule_efficiency(result)
    if efficiency is not None:
        rows.append(("Schedule efficiency", f"{efficiency:.1%} (network bound / simulated cycles)"))
    rows.append(
        (
            "On the NPU",
            f"{_plural(len(partition.npu_layers), 'layer')}, {partition.npu_macs:,} MACs "
            f"({_percent(partition.npu_macs, all_macs)})",
        )
    )
    rows.append(
        (
            "On the CPU",
            f"{_plural(len(partition.cpu_ops), 'op')}, {partition.cpu_macs:,} MACs "
            f"({_percent(partition.cpu_macs, all_macs)})",
        )
    )
    for name, (cosine, sqnr) in result.output_metrics.items():
        rows.append((f"Output {_code(name)}", f"cosine {cosine:.5f}, SQNR {_sqnr_text(sqnr)} dB"))
    rows.append(("Memory traffic", traffic_text(simulation)))
    rows.append(
        (
            "SRAM peak",
            f"{human_bytes(simulation.sram_peak)} of {human_bytes(target.scratch.size_bytes)} "
            f"({_percent(simulation.sram_peak, target.scratch.size_bytes)})",
        )
    )
    package = sum(len(content) for content in result.files.values())
    rows.append(("Package", f"{human_bytes(package)} in {_plural(len(result.files), 'file')}"))
    return [_table(("measure", "value"), rows, (False, False)), ""]


def _stages_section(result: CompileResult) -> list[str]:
    # Not their times: those change from one compile to the next, and the reports stay
    # byte-identical for the same input (irc-compile prints the times).
    return [
        "## Compile stages",
        "",
        ", ".join(f"`{stage.name}`" for stage in result.stages)
        + ". The time of each is in the summary `irc-compile` prints.",
        "",
    ]


def _partition_section(result: CompileResult) -> list[str]:
    partition = result.partition
    all_macs = partition.npu_macs + partition.cpu_macs
    lines = [
        "## Partition",
        "",
        f"The NPU runs **{_plural(len(partition.npu_layers), 'layer')}** with "
        f"{partition.npu_macs:,} "
        f"MACs ({_percent(partition.npu_macs, all_macs)} of the model's).",
        "",
    ]
    if not partition.cpu_ops:
        return [*lines, "Nothing runs on the host CPU.", ""]
    lines.append(
        f"The host CPU runs {_plural(len(partition.cpu_ops), 'op')} with {partition.cpu_macs:,} "
        "MACs "
        f"({_percent(partition.cpu_macs, all_macs)}):"
    )
    lines.append("")
    rows = [
        (_code(host_op.layer), host_op.op, f"{host_op.macs:,}", host_op.reason)
        for host_op in partition.cpu_ops
    ]
    lines.extend(
        [_table(("layer", "op", "MACs", "why on the CPU"), rows, (False, False, True, False)), ""]
    )
    return lines


LAYER_HEADER = (
    "layer",
    "op",
    "tile",
    "MACs",
    "cycles",
    "share",
    "estimate",
    "bound",
    "efficiency",
    "MAC util",
    "DDR read",
    "DDR written",
    "SRAM",
    "cosine",
    "SQNR dB",
)


def _layers_section(result: CompileResult, rows: Sequence[LayerRow]) -> list[str]:
    cycles = result.simulation.cycles
    table_rows = [
        (
            _code(row.name),
            row.op,
            row.tile or MISSING,
            f"{row.macs:,}",
            _count_text(row.cycles),
            _percent(row.added_cycles, cycles),
            _count_text(row.estimate),
            _count_text(row.lower_bound),
            _ratio_text(row.efficiency, 0),
            _ratio_text(row.mac_utilisation),
            _count_text(row.ddr_read),
            _count_text(row.ddr_written),
            _count_text(row.sram_bytes),
            _cosine_text(row.cosine),
            _sqnr_text(row.sqnr_db),
        )
        for row in rows
    ]
    right = (False, False, False, *([True] * (len(LAYER_HEADER) - 3)))
    return [
        "## Layers",
        "",
        "In program order. *tile*: the output part one step computes, rows x columns x "
        "channels / input depth; *cycles*: the layer's span in the simulated run; *share*: "
        "the cycles it adds to the run; *estimate*: the tiling planner's cycles; *bound*: "
        "the layer's lower bound, max(ideal MAC or vector cycles, compulsory DDR bytes / "
        "bandwidth); *efficiency*: bound / cycles; *MAC util*: MACs done / what the array "
        "could do in the span; DDR bytes as simulated; *SRAM*: the bytes of the plan's "
        "buffers; *cosine*, *SQNR*: the quantized model against float at the layer's output. "
        f"{MISSING}: not applicable (no plan, no MACs, or no quantized output).",
        "",
        _table(LAYER_HEADER, table_rows, right),
        "",
    ]


def _cascade_on_one(cascade: CascadePlan) -> str:
    """Why a cascade on a target of several cores runs on one."""
    if len(cascade.stripes) < 2:
        return "one stripe, nothing to share"
    if not splits_by_rows(cascade.members):
        return "a member reduces all its rows into one"
    return "estimated faster than shared by stripes"


def _cores_section(result: CompileResult, rows: Sequence[LayerRow]) -> list[str]:
    """On a target of several cores: which cores each planned layer ran on, what its
    split cuts, and why (the planner's estimates), beside the simulated cycles."""
    cores = result.target.cores.count
    if cores < 2 or result.tiling is None:
        return []
    cascaded = {name: cascade.plan for cascade in result.tiling.cascades for name in cascade.names}
    simulated = {row.name: row for row in rows}
    table_rows = []
    split = 0
    for plan in result.tiling.plans:
        name = plan.layer.name
        row = simulated.get(name)
        cascade = cascaded.get(name)
        if cascade is not None and cascade.cores > 1:
            why = (
                f"in a cascade on {cascade.cores} cores, each its share of the "
                f"{len(cascade.stripes)} stripes of {cascade.stripe} rows"
            )
            parts = "stripes"
        elif cascade is not None:
            why, parts = f"in a cascade on one core: {_cascade_on_one(cascade)}", MISSING
            if plan.core:
                why += f"; on core {plan.core}: it does not wait for what runs on core 0 then"
        else:
            why, parts = plan.cores_note or "one core", plan.split if plan.cores > 1 else MISSING
        split += (cascade.cores if cascade is not None else plan.cores) > 1
        table_rows.append(
            (
                _code(name),
                plan.layer.op,
                str(row.cores if row is not None else 1),
                parts,
                _count_text(plan.one_core_cycles or plan.cycles),
                _count_text(plan.cycles),
                _count_text(row.cycles if row is not None else None),
                why,
            )
        )
    header = ("layer", "op", "cores", "split", "one core", "estimate", "cycles", "why")
    right = (False, False, True, False, True, True, True, False)
    return [
        "## Cores",
        "",
        f"{result.target.name} has {cores} cores. {split} of {len(result.tiling.plans)} "
        "planned layers are split across cores: a layer's outermost loop of several tiles "
        "is cut into one share a core (the output channels: each core its share of the "
        "weights, all of the input; or the batch, rows or columns: all of the weights, its "
        "share of the input), a cascade's stripes into runs of stripes (each core "
        "recomputes the rows its first stripe reads), each share on its core's queues and "
        "in its own SRAM, when the planner estimates it faster than one core (the cores "
        "share the memory ports). A layer on one core runs on core 1 (or another) beside "
        "core 0 when it does not wait for what core 0 runs then (*why* says so). "
        "*one core*, *estimate*: the planner's cycles on one core and as planned; "
        "*cycles*: the layer's span in the simulated run.",
        "",
        _table(header, table_rows, right),
        "",
    ]


def _quantization_section(result: CompileResult) -> list[str]:
    lines = ["## Quantization", ""]
    errors = result.errors
    if result.options.prequantized:
        return [
            *lines,
            f"The model is {PREQUANTIZED}: there is no float model to compare with.",
            "",
        ]
    if not result.options.quantized or errors is None:
        return [*lines, "The model runs in float (`--quantize none`): no quantization error.", ""]
    lines.append(
        f"Calibrated on {result.calibration}; the error is measured on {errors.samples} "
        f"sample{'s' if errors.samples != 1 else ''}, the quantized model against the float "
        "model."
    )
    lines.append("")
    outputs = [
        (_code(name), f"{cosine:.5f}", _sqnr_text(sqnr))
        for name, (cosine, sqnr) in result.output_metrics.items()
    ]
    if outputs:
        lines.extend([_table(("output", "cosine", "SQNR dB"), outputs, (False, True, True)), ""])
    first = errors.first_below()
    if first is None:
        lines.append(f"Every computed tensor has cosine >= {errors.threshold:g}.")
    else:
        count = len([tensor for tensor in errors.below() if not tensor.is_weight])
        lines.append(
            f"The first computed tensor below cosine {errors.threshold:g}, where the int8 "
            f"model starts to drift, is {_code(first.key)} ({first.op}, cosine "
            f"{first.cosine:.5f}); {count} computed tensor{'s are' if count != 1 else ' is'} "
            "below. Keeping a layer float (`--float-layers`), calibrating on real data or "
            "`-O3` (MSE calibration) can help."
        )
    lines.append("")
    worst = errors.by_cosine()[:WORST_TENSORS]
    lines.append(f"The {len(worst)} worst of {len(errors.tensors)} quantized tensors:")
    lines.append("")
    rows = [
        (
            _code(tensor.key),
            tensor.op,
            "weight" if tensor.is_weight else ("output" if tensor.is_output else "activation"),
            f"{tensor.cosine:.5f}",
            f"{tensor.worst_cosine:.5f}",
            _sqnr_text(tensor.sqnr_db),
        )
        for tensor in worst
    ]
    lines.append(
        _table(
            ("tensor", "op", "kind", "cosine", "worst sample", "SQNR dB"),
            rows,
            (False, False, False, True, True, True),
        )
    )
    lines.append("")
    if any(tensor.is_weight for tensor in worst):
        lines.append(
            "A bias can differ from the float one on purpose: bias correction (-O2 and up) "
            "shifts it to cancel the mean error the int8 weights cause."
        )
        lines.append("")
    return lines


def _memory_section(result: CompileResult) -> list[str]:
    simulation = result.simulation
    target = result.target
    memory = _memory(result)
    rows: list[tuple[str, str, str]] = [
        (
            "SRAM peak (highest byte the commands touch)",
            f"{simulation.sram_peak:,}",
            f"{_percent(simulation.sram_peak, target.scratch.size_bytes)} of "
            f"{human_bytes(target.scratch.size_bytes)}",
        )
    ]
    if result.tiling is not None and result.tiling.plans:
        rows.append(
            (
                "largest layer's buffers (planned)",
                f"{result.tiling.peak_sram:,}",
                _percent(result.tiling.peak_sram, target.scratch.size_bytes),
            )
        )
    total = simulation.total
    for system in target.system_memories:
        name = system.name
        size = memory.get(f"{name}_bytes", 0) if memory else 0
        traffic = total.traffic.get(name, [0, 0])
        if not size and not any(traffic):
            continue
        if size:
            rows.append((f"{name} the program needs", f"{size:,}", human_bytes(size)))
        if memory and memory.get("weights_memory") == name:
            weights_bytes = memory.get("weights_bytes", 0)
            rows.append(("of which weights", f"{weights_bytes:,}", human_bytes(weights_bytes)))
            rows.append(
                (
                    "of which activations and scratch",
                    f"{size - weights_bytes:,}",
                    human_bytes(size - weights_bytes),
                )
            )
        read, written = traffic
        rows.append((f"{name} read per inference", f"{read:,}", human_bytes(read)))
        rows.append((f"{name} written per inference", f"{written:,}", human_bytes(written)))
        if simulation.seconds:
            bandwidth = (read + written) / simulation.seconds
            available = system.read_bytes_per_second
            rows.append(
                (
                    f"{name} bandwidth used (bytes per second)",
                    f"{bandwidth:,.0f}",
                    f"{bandwidth / 1e6:,.0f} MB/s, {_percent(bandwidth, available)} of "
                    f"{available / 1e9:g} GB/s",
                )
            )
    return [
        "## Memory",
        "",
        _table(("memory", "bytes", ""), rows, (False, True, True)),
        "",
    ]


def _files_section(result: CompileResult, plots: bool) -> list[str]:
    lines = [
        "## Files",
        "",
        f"- [{LAYERS_CSV}]({LAYERS_CSV}): the per-layer table with raw numbers.",
        f"- [{TRACE_JSON}]({TRACE_JSON}): the simulated run, one track per engine; open it "
        "in https://ui.perfetto.dev or chrome://tracing.",
    ]
    if plots:
        lines.extend(
            [
                f"- [{TIMELINE_PNG}]({TIMELINE_PNG}): the engines over the run; "
                f"[{LAYERS_PNG}]({LAYERS_PNG}): each layer's cycles against its lower bound.",
                "",
                f"![The engines over the run]({TIMELINE_PNG})",
                "",
                f"![Each layer's cycles against its lower bound]({LAYERS_PNG})",
            ]
        )
    else:
        lines.append(
            f"- The plots ({TIMELINE_PNG}, {LAYERS_PNG}) need matplotlib: `{PLOTS_HINT}`, "
            "then compile again."
        )
    lines.extend(["", "The package:", ""])
    rows = [
        (_code(name), f"{len(content):,}", human_bytes(len(content)))
        for name, content in sorted(result.files.items())
    ]
    lines.extend([_table(("file", "bytes", ""), rows, (False, True, True)), ""])
    return lines


def report_markdown(result: CompileResult, plots: bool) -> str:
    """`report.md`: everything a deployment engineer wants to know about the compile
    (`plots`: whether the PNGs are written beside it)."""
    from irc import __version__

    rows = layer_rows(result)
    lines = [
        f"# {result.name} on {result.target.name}",
        "",
        f"- Model: `{result.source}`",
        f"- Target: {result.target.name} — {result.target.description}",
        f"- Options: {_options_text(result)}",
    ]
    if result.options.quantized:
        lines.append(f"- Calibration: {result.calibration}")
    lines.extend([f"- Compiler: irc {__version__}", ""])
    for warning in result.warnings:
        lines.extend([f"> **Warning:** {warning}", ""])
    lines.extend(["## Summary", "", *_summary_table(result)])
    lines.extend(_where_the_cycles_go(result, rows))
    lines.extend(_partition_section(result))
    lines.extend(_layers_section(result, rows))
    lines.extend(_cores_section(result, rows))
    lines.extend(_quantization_section(result))
    lines.extend(_memory_section(result))
    lines.extend(_stages_section(result))
    lines.extend(
        [
            f"Pipeline: `{result.pipeline}`",
            "",
        ]
    )
    lines.extend(_files_section(result, plots))
    return "\n".join(lines).rstrip("\n") + "\n"


# --------------------------------------------------------------------------------------
# layers.csv and trace.json


CSV_HEADER = (
    "layer",
    "op",
    "tile",
    "macs",
    "start_cycle",
    "end_cycle",
    "cycles",
    "added_cycles",
    "estimate_cycles",
    "lower_bound_cycles",
    "efficiency",
    "mac_utilisation",
    "ddr_read_bytes",
    "ddr_written_bytes",
    "sram_bytes",
    "sram_high",
    "commands",
    *(f"busy_{queue}" for queue in npu.QUEUES),
    "cosine",
    "sqnr_db",
)


def _raw(value: int | float | str | None) -> str:
    """A CSV cell: empty for nothing, a float in full (repr: the same on every run)."""
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ("inf" if value > 0 else "-inf")
    return str(value)


def layers_csv(result: CompileResult) -> str:
    """`layers.csv`: one row per layer in program order, raw numbers (empty: absent)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    for row in layer_rows(result):
        cells = [
            row.name,
            row.op if row.op != MISSING else "",
            row.tile,
            row.macs,
            row.start,
            row.end,
            row.cycles,
            row.added_cycles,
            row.estimate,
            row.lower_bound,
            row.efficiency,
            row.mac_utilisation,
            row.ddr_read,
            row.ddr_written,
            row.sram_bytes,
            row.sram_high,
            row.commands,
            *(row.busy.get(queue, 0) for queue in npu.QUEUES),
            row.cosine,
            row.sqnr_db,
        ]
        writer.writerow([_raw(cell) for cell in cells])
    return buffer.getvalue()


def trace_json(result: CompileResult) -> str:
    """`trace.json`: the simulated run as Chrome trace events, compact."""
    from irc.sim.run import chrome_trace

    return json.dumps(chrome_trace(result.simulation), separators=(",", ":"))


# --------------------------------------------------------------------------------------
# Plots


def plots_available() -> bool:
    """Whether matplotlib can be imported (the optional extra `irc[plots]`)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


ENGINE_COLOURS = {
    "dma_in": "#4c72b0",
    "dma_out": "#8172b3",
    "mac": "#dd8452",
    "vector": "#55a868",
    "host": "#7f7f7f",
    "dma_weights": "#937860",
    "dma_stage": "#da8bc3",
}

OP_KINDS = {
    "conv": ("conv", "conv_transpose", "depthwise_conv"),
    "matmul": ("gemm", "matmul", "fully_connected"),
    "pool": ("max_pool", "average_pool", "global_average_pool", "global_max_pool"),
    "elementwise": (
        "add", "sub", "mul", "relu", "clip", "leaky_relu", "requantize", "sigmoid", "tanh",
        "softmax", "prelu", "abs", "elu",
    ),
    "data movement": (
        "transpose", "reshape", "concat", "pad", "slice", "split", "resize", "squeeze",
        "unsqueeze", "depth_to_space", "space_to_depth", "flatten",
    ),
}  # fmt: skip
"""Kinds of layers that layers.png colours alike, by op name without its dialect."""

KIND_COLOURS = {
    "conv": "#dd8452",
    "matmul": "#c44e52",
    "pool": "#55a868",
    "elementwise": "#4c72b0",
    "data movement": "#8172b3",
    "host": "#7f7f7f",
    "other": "#937860",
}

PLOT_DPI = 110
PLOT_WIDTH = 11.0
"""Inches; with PLOT_DPI, 1210 pixels: a laptop screen's width."""


def _op_kind(op: str) -> str:
    if op.startswith("quant.") or op == MISSING:
        return "host"
    name = op.split(",")[0].split(".", 1)[-1].strip()
    return next((kind for kind, names in OP_KINDS.items() if name in names), "other")


def _png(figure: Any) -> bytes:
    """The figure as PNG bytes without metadata (no matplotlib version): deterministic."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=PLOT_DPI, metadata={"Software": None})
    return buffer.getvalue()


def _plot_style() -> Any:
    import matplotlib

    # matplotlib's defaults, not the user's matplotlibrc: one result, one image.
    style: Any = {
        key: value for key, value in matplotlib.rcParamsDefault.items() if key != "backend"
    }
    style.update(
        {
            "font.size": 9,
            "axes.titlesize": 10.5,
            "axes.titlelocation": "left",
            "axes.spines.top": False,
            "axes.spines.right": False,
        }
    )
    return matplotlib.rc_context(style)


def _shorten(name: str, limit: int) -> str:
    """A layer name cut to `limit` characters, keeping its end (the distinctive part)."""
    return name if len(name) <= limit else "…" + name[-(limit - 1) :]


def timeline_png(result: CompileResult) -> bytes:
    """`timeline.png`: one lane per engine with a bar per command, and a lane of the
    layers (each owns the cycles it adds to the run; names where they fit)."""
    from matplotlib.figure import Figure

    simulation = result.simulation
    clock_hz = result.target.mac_array.clock_hz
    to_ms = 1e3 / clock_hz
    total_ms = simulation.cycles * to_ms or 1.0
    engines = len(simulation.queues)
    with _plot_style():
        figure = Figure(figsize=(PLOT_WIDTH, 4.4), layout="constrained")
        axes = figure.add_subplot()
        lanes: dict[int, list[tuple[float, float]]] = {index: [] for index in simulation.engines}
        for event in simulation.events:
            if event.end > event.start and event.queue in lanes:
                lanes[event.queue].append((event.start * to_ms, (event.end - event.start) * to_ms))
        for index, queue in enumerate(simulation.queues):
            colour = ENGINE_COLOURS[queue.rpartition(".")[2]]
            # Edges in the bar's colour keep commands shorter than a pixel visible.
            axes.broken_barh(
                lanes[simulation.engines[index]],
                (engines - index - 0.38, 0.76),
                facecolors=colour,
                edgecolors=colour,
                linewidth=0.3,
            )
        bands: list[tuple[float, float]] = []
        names: list[str] = []
        frontier = 0
        for row in layer_rows(result):
            if row.end is None or row.end <= frontier:
                continue
            bands.append((frontier * to_ms, (row.end - frontier) * to_ms))
            names.append(row.name)
            frontier = row.end
        shades = ["#d9d9d9", "#bdbdbd"]
        axes.broken_barh(bands, (-0.35, 0.7), facecolors=[shades[i % 2] for i in range(len(bands))])
        for number, (begin, width) in enumerate(bands):
            axes.axvspan(begin, begin + width, color="#f4f4f4" if number % 2 else "white", zorder=0)
        # A label fits when its characters (about 6 pixels each at 7 points) fit the band.
        axes_pixels = PLOT_WIDTH * PLOT_DPI * 0.86
        for (begin, width), name in zip(bands, names):
            room = int(width / total_ms * axes_pixels / 6) - 1
            if room >= min(len(name), 7):  # "…3/Conv" still tells layers apart
                axes.text(
                    begin + width / 2, 0, _shorten(name, room), ha="center", va="center", fontsize=7
                )
        # Bottom-up: the layers at 0, host at 1, ..., dma_in on top.
        axes.set_yticks(
            range(engines + 1),
            ["layers"]
            + [
                f"{queue}\n{simulation.utilisation(queue):.0%} busy"
                for queue in reversed(simulation.queues)
            ],
        )
        axes.set_ylim(-0.6, engines + 0.6)
        axes.set_xlim(0, total_ms)
        axes.set_xlabel(f"time (ms) at {clock_hz / 1e6:g} MHz")
        axes.set_title(
            f"{result.name} on {result.target.name}: {len(simulation.events):,} commands in "
            f"{simulation.cycles:,} cycles ({human_seconds(simulation.seconds)}), "
            "one lane per engine"
        )
        axes.grid(axis="x", color="#dddddd", linewidth=0.6)
        axes.set_axisbelow(True)
        return _png(figure)


MAX_LAYER_LABELS = 90
"""Layer names on the y axis of layers.png; with more layers every k-th is named."""


def _cycle_axis_unit(cycles: int) -> tuple[float, str]:
    """A divisor and a unit that keep cycle ticks short."""
    if cycles >= 10_000_000:
        return 1e6, "millions of cycles"
    if cycles >= 10_000:
        return 1e3, "thousands of cycles"
    return 1.0, "cycles"


def layers_png(result: CompileResult) -> bytes:
    """`layers.png`: each layer's simulated span as a horizontal bar in program order,
    the part it adds to the run in full colour, and its lower bound as a black tick."""
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.ticker import FuncFormatter

    rows = [row for row in layer_rows(result) if row.cycles is not None]
    count = max(1, len(rows))
    height = min(24.0, max(3.4, 1.6 + 0.17 * count))
    largest = max((max(row.cycles or 0, row.lower_bound or 0) for row in rows), default=1)
    divisor, unit = _cycle_axis_unit(largest)
    with _plot_style():
        figure = Figure(figsize=(PLOT_WIDTH * 0.8, height), layout="constrained")
        axes = figure.add_subplot()
        positions = list(range(len(rows)))
        colours = [KIND_COLOURS[_op_kind(row.op)] for row in rows]
        spans = [(row.cycles or 0) / divisor for row in rows]
        added = [min(row.added_cycles, row.cycles or 0) / divisor for row in rows]
        axes.barh(positions, spans, height=0.72, color=colours, alpha=0.35, linewidth=0)
        axes.barh(positions, added, height=0.72, color=colours, linewidth=0)
        bounded = [(index, row) for index, row in enumerate(rows) if row.lower_bound is not None]
        axes.scatter(
            [(row.lower_bound or 0) / divisor for _, row in bounded],
            [index for index, _ in bounded],
            marker="|",
            s=80,
            linewidths=1.6,
            color="black",
            zorder=3,
        )
        step = max(1, math.ceil(len(rows) / MAX_LAYER_LABELS))
        names = [_shorten(row.name, 28) for row in rows]
        axes.set_yticks(positions[::step], names[::step], fontsize=7 if count > 30 else 8)
        # Program order, top to bottom; a model with no layers keeps one empty row.
        axes.set_ylim(count - 0.5, -0.5)
        axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}"))
        axes.set_xlabel(f"simulated cycles ({unit})")
        axes.grid(axis="x", color="#dddddd", linewidth=0.6)
        axes.set_axisbelow(True)
        kinds = list(dict.fromkeys(_op_kind(row.op) for row in rows))
        handles: list[Any] = [Patch(color=KIND_COLOURS[kind], label=kind) for kind in kinds]
        handles.append(Patch(color="#999999", alpha=0.35, label="overlapped by\nother layers"))
        handles.append(
            Line2D(
                [], [], color="black", marker="|", linestyle="", markersize=9, label="lower bound"
            )
        )
        axes.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
        totals = f"{result.simulation.cycles:,} cycles simulated"
        efficiency = schedule_efficiency(result)
        if result.tiling is not None and efficiency is not None:
            totals += (
                f"; the layers' lower bounds add up to {result.tiling.lower_bound:,} "
                f"(schedule efficiency {efficiency:.0%})"
            )
        axes.set_title(f"{result.name} on {result.target.name}: cycles per layer\n{totals}")
        return _png(figure)


# --------------------------------------------------------------------------------------
# Writing


def write_reports(result: CompileResult, directory: Path, staged: StagedOutputs) -> list[str]:
    """Stage the reports into `directory` (beside the package); the names written."""
    plots = plots_available()
    contents: dict[str, bytes] = {
        REPORT_MD: report_markdown(result, plots).encode(),
        LAYERS_CSV: layers_csv(result).encode(),
        TRACE_JSON: trace_json(result).encode(),
    }
    if plots:
        contents[TIMELINE_PNG] = timeline_png(result)
        contents[LAYERS_PNG] = layers_png(result)
    for name, content in contents.items():
        staged.stage(directory / name, _writer(content))
    return list(contents)


def _writer(content: bytes) -> Callable[[BinaryIO], object]:
    return lambda file: file.write(content)
