"""The default pipeline, end to end: an ONNX model to a package and what it will do.

`compile_model(path, options)` imports the model and runs one `builtin.module(...)`
pass pipeline on it (`CompileOptions.pipeline()`, which `irc-compile --print-pipeline`
prints and the manifest records), in memory (weights stay numpy arrays; nothing is
printed as text); then it encodes the package and loads the command stream on the
simulator. It returns a `CompileResult`: the command-level module, the package's
files, and what the report needs: each stage's time, the partition between NPU and
CPU, the quantization error of every layer, the tiling plans with their lower bounds,
and the simulator's timing of one inference.

The pipeline (docs/tools.md, `irc-compile`), every stage a registered pass, so that
`irc-import-onnx` and `irc-opt --pass-pipeline=<it>` reproduce a compile:

1. `graph-opt{activations=relu,clip}`: constant folding, batch-norm folding,
   relu/clip fusion, NHWC layout and transpose cancellation;
2. `prepare-quantize`, `quantize{...}`, `lower-to-qnn{target=...}`: calibration on
   `--calibration-data` (else seeded random normal samples, with a warning), the QDQ
   form (`--float-layers` stay float), integer `qnn` ops;
3. `partition{target=... mode=cost|support outline=false}`: every op on the NPU or the
   host, as the backend table (irc/backend) and the target decide, and by default the
   cost model (never slower on the test suite's models: docs/partitioning.md);
4. `plan-tiles`, `plan-ddr`, `lower-to-tile`, `lower-to-npu`: tiles under the SRAM,
   DDR placement, loops of copies and tile compute, the command stream.

A model that is integer already (a TFLite import, or `qnn` IR: `is_prequantized`)
skips stages 1 and 2: nothing is calibrated or quantized, and its pipeline starts at
`partition` (`CompileOptions.prequantized`).

Around the pipeline, not in it: the quantization error report (the float module as
`quantize` receives it against the int8 one after `lower-to-qnn`, on the first
calibration samples: irc/quantize/report.py), `codegen` (the package's files,
irc/codegen) and `simulate` (the stream on the simulator: its cycles, per engine and
layer). With `--quantize none` stage 2 is skipped: float layers run where the target
can run them (the host, on a target without fp16).

The optimisation levels:

- `-O0`: one SRAM copy of every buffer (no double buffering), no channel padding, no
  bias correction;
- `-O1`: double buffering;
- `-O2` (default): also channels padded to whole DMA bursts where it saves cycles,
  cascades (chains of layers run stripe by stripe, their intermediate tensors in
  SRAM, where that is faster: docs/tiling.md), and bias correction of the int8
  weights;
- `-O3`: also calibration by the MSE observer (clipping ranges that minimise each
  tensor's quantization error) instead of min/max; slower to compile.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from irc.diagnostics import Location, error
from irc.resources import fewer_collections, release_memory

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.passes import ModulePass

    from irc.quantize.calibration import CalibrationStats
    from irc.quantize.qdq import QuantizeConfig
    from irc.quantize.report import ErrorReport
    from irc.sim.run import Report
    from irc.targets import Target
    from irc.transforms.partition_report import PartitionReport
    from irc.transforms.plan_tiles import TilingReport

GRAPH_OPT = "graph-opt{activations=relu,clip}"
"""The graph passes: relu and clip fused before calibration (see irc-quantize)."""

QUANTIZE_MODES = ("int8", "int16", "none")
PARTITION_MODES = ("support", "cost")
OPT_LEVELS = (0, 1, 2, 3)


@dataclass
class CompileOptions:
    """What `irc-compile` was asked to do."""

    target: str = "npu-demo"
    quantize: str = "int8"
    calibration_data: Path | None = None
    calibration_samples: int = 8
    """At most this many samples are calibrated on (random ones without data)."""
    float_layers: tuple[str, ...] = ()
    """Layers kept float, by ONNX node name."""
    int16_layers: tuple[str, ...] = ()
    """Layers whose activations are int16 (with --quantize int8), by ONNX node name."""
    int16_ops: tuple[str, ...] = ()
    """Op types whose activations are int16 (with --quantize int8)."""
    opt_level: int = 2
    observer: str | None = None
    """The calibration observer; default: minmax (mse at -O3)."""
    report_samples: int = 1
    """Samples the quantization error report runs."""
    input_shapes: Mapping[str, list[int]] = field(default_factory=dict)
    seed: int = 0
    """Seed of the random calibration samples."""
    calibration_stats: Path | None = None
    """A statistics file to quantize by, instead of calibrating."""
    partition: str = "cost"
    """The partition's mode: cost (the default: never slower in the simulator than
    support on the test suite's models), or support (docs/partitioning.md)."""
    layer_cores: int = 0
    """The most cores one layer or cascade is split across (0: all the target's; 1:
    every layer on one core, so that streamed frames take turns on the cores)."""
    predict_memories: bool = True
    """Cost each layer's transfers in the memory its tensors are predicted to live in
    (plan-tiles' `predict-memories`), on several memories of activations; off, in the
    slowest of them."""
    keep_inputs: bool = False
    """The inputs keep their buffers to the end of a run (streamed frames place the
    next frame's inputs early)."""
    prequantized: bool = False
    """The model is integer already (`is_prequantized`: a TFLite import): no graph
    passes, no calibration, no quantization; the pipeline starts at `partition`."""

    @property
    def quantized(self) -> bool:
        """Whether the compile quantizes (int8, or int16 activations)."""
        return self.quantize != "none" and not self.prequantized

    @property
    def chosen_observer(self) -> str:
        """The observer calibration uses."""
        return self.observer or ("mse" if self.opt_level >= 3 else "minmax")

    def passes(self) -> list[ModulePass]:
        """The pipeline's passes, with their options (see the module docstring)."""
        from irc.passes import get_pass_class

        def make(name: str, **values: Any) -> ModulePass:
            return get_pass_class(name)(**values)

        target = self.target
        passes = [] if self.prequantized else [make("graph-opt", activations=("relu", "clip"))]
        if self.quantized:
            passes += [
                make("prepare-quantize"),
                make(
                    "quantize",
                    stats=str(self.calibration_stats or ""),
                    calibration_data=str(self.calibration_data or ""),
                    calibration_samples=self.calibration_samples,
                    observer=self.chosen_observer,
                    seed=self.seed,
                    exclude_names=tuple(self.float_layers),
                    activations="int16" if self.quantize == "int16" else "int8",
                    int16_names=tuple(self.int16_layers),
                    int16_ops=tuple(self.int16_ops),
                    bias_correction=self.opt_level >= 2,
                ),
                make("lower-to-qnn", target=target),
            ]
        return [
            *passes,
            make("partition", target=target, mode=self.partition, outline=False),
            make(
                "plan-tiles",
                target=target,
                align_channels=self.opt_level >= 2,
                cascades=self.opt_level >= 2,
                **({"layer_cores": self.layer_cores} if self.layer_cores else {}),
                **({"predict_memories": True} if self.predict_memories else {}),
            ),
            make("plan-ddr", target=target, **({"keep_inputs": True} if self.keep_inputs else {})),
            make("lower-to-tile", target=target),
            make("lower-to-npu", target=target, double_buffer=self.opt_level >= 1),
        ]

    def pipeline(self) -> str:
        """The pipeline as `irc-opt --pass-pipeline` takes it: what `compile_model` runs."""
        from irc.passes import pipeline_text

        return pipeline_text(self.passes())

    def to_json(self) -> dict[str, Any]:
        """The options as the manifest records them."""
        return {
            "quantize": self.quantize,
            "calibration_data": str(self.calibration_data) if self.calibration_data else None,
            "calibration_samples": self.calibration_samples,
            "observer": self.chosen_observer if self.quantized else None,
            "calibration_stats": str(self.calibration_stats) if self.calibration_stats else None,
            "partition": self.partition,
            "layer_cores": self.layer_cores,
            "keep_inputs": self.keep_inputs,
            "predict_memories": self.predict_memories,
            "bias_correction": self.opt_level >= 2,
            "float_layers": list(self.float_layers),
            "int16_layers": list(self.int16_layers),
            "int16_ops": list(self.int16_ops),
            "opt_level": self.opt_level,
            "input_shapes": {name: list(dims) for name, dims in sorted(self.input_shapes.items())},
            "prequantized": self.prequantized,
        }


@dataclass
class Stage:
    """A stage of the pipeline and how long it took."""

    name: str
    seconds: float


@dataclass(frozen=True)
class HostOp:
    """An op the host runs, and why."""

    layer: str
    op: str
    macs: int
    reason: str
    """The partition's reasons (from the support table, the data types, irc's
    lowering, the quantizer or the cost model), `; `-separated, each without the op's
    name in front."""


@dataclass
class Partition:
    """Where the model's work runs, as the command stream runs it."""

    npu_layers: list[str]
    """Layers with NPU commands, in program order."""
    npu_macs: int
    """The MACs the stream's MAC commands compute."""
    cpu_ops: list[HostOp]
    """Every op the host functions run (but the copies between host and NPU memory)."""

    @property
    def cpu_macs(self) -> int:
        """MACs the host computes."""
        return sum(op.macs for op in self.cpu_ops)


@dataclass
class CompileResult:
    """Everything `compile_model` made and measured."""

    name: str
    source: Path
    options: CompileOptions
    target: Target
    pipeline: str
    stages: list[Stage]
    module: ModuleOp
    files: dict[str, bytes]
    partition: Partition
    simulation: Report
    tiling: TilingReport | None
    placement: PartitionReport
    """What the `partition` pass decided and estimated."""
    errors: ErrorReport | None
    output_metrics: dict[str, tuple[float, float]]
    """Per output: (cosine, SQNR in dB) of int8 against float."""
    calibration: str
    """Where the calibration samples came from, in words."""
    warnings: list[str] = field(default_factory=list)

    @property
    def total_seconds(self) -> float:
        """The whole compile."""
        return sum(stage.seconds for stage in self.stages)


Progress = Callable[[str, int, int], None]
"""Called with (stage name, its number, the number of stages) as a stage starts."""


class _Stages:
    def __init__(self, names: Sequence[str], progress: Progress | None) -> None:
        self.names, self.progress = list(names), progress
        self.done: list[Stage] = []

    def run(self, name: str, work: Callable[[], Any], release: bool = True) -> Any:
        """Run a stage, timed; with `release`, return what it freed to the system."""
        if self.progress is not None:
            self.progress(name, self.names.index(name) + 1, len(self.names))
        start = time.perf_counter()
        result = work()
        if release:
            release_memory()
        self.done.append(Stage(name, time.perf_counter() - start))
        return result


def stage_names(options: CompileOptions) -> list[str]:
    """The stages `compile_model` runs for `options`, in order: the import, each pass
    of the pipeline (the error report after `lower-to-qnn`), codegen, the simulation."""
    names = ["import"]
    for module_pass in options.passes():
        names.append(module_pass.name)
        if module_pass.name == "lower-to-qnn":
            names.append(ERROR_STAGE)
    return [*names, "codegen", "simulate"]


ERROR_STAGE = "quantization error"

RELEASING_PASSES = frozenset({"graph-opt", "quantize", "lower-to-qnn"})
"""The passes after which `compile_model` hands freed memory back to the system
(`irc.resources.release_memory`): those that drop large arrays (the float weights
folded or replaced by int8 ones). A collection scans the whole IR (about 80 ms even on
a small model), so after the other passes, where little dies and much lives, it only
costs: on a small CNN, collecting after every stage was 85% of the compile."""


PREQUANTIZED_SUFFIXES = (".tflite",)
"""Model files that import integer (TFLite: straight into `qnn`)."""


def with_model(options: CompileOptions, path: Path) -> CompileOptions:
    """`options` for the model at `path`: prequantized when its format imports
    integer (a `.tflite` file), checked again for what that rules out."""
    if path.suffix in PREQUANTIZED_SUFFIXES and not options.prequantized:
        options = dataclasses.replace(options, prequantized=True)
        check_options(options)
    return options


def is_prequantized(module: ModuleOp) -> bool:
    """Whether a module is integer already, so that quantizing it has nothing to do: it
    holds `qnn` ops (a TFLite import, or IR after `lower-to-qnn`), or a function reads
    quantized tensors (a TFLite model of value-moving operators only)."""
    from xdsl.dialects.func import FuncOp

    from irc.dialects.qnn import QNNOp
    from irc.dialects.quant import quantized_element

    for op in module.walk():
        if isinstance(op, QNNOp):
            return True
        if isinstance(op, FuncOp) and any(
            quantized_element(argument.type) is not None for argument in op.args
        ):
            return True
    return False


def check_options(options: CompileOptions) -> None:
    """Reject options that cannot work, before any work is done."""
    where = Location(file="irc-compile")
    if options.prequantized:
        flags = {
            "--quantize": options.quantize != "int8",
            "--calibration-data": options.calibration_data,
            "--calibration-stats": options.calibration_stats,
            "--float-layers": options.float_layers,
            "--int16-layers": options.int16_layers,
            "--int16-ops": options.int16_ops,
            "--observer": options.observer,
        }
        given = [flag for flag, value in flags.items() if value]
        if given:
            raise error(
                f"{given[0]} has no effect: the model is quantized already (an int8 TFLite "
                "model or qnn IR keeps its own scales)",
                where,
                hint=f"drop {given[0]}",
            )
    if options.quantize not in QUANTIZE_MODES:
        raise error(
            f"--quantize must be one of {', '.join(QUANTIZE_MODES)}, got '{options.quantize}'",
            where,
        )
    if options.opt_level not in OPT_LEVELS:
        raise error(f"the optimisation level must be -O0 to -O3, got {options.opt_level}", where)
    if options.partition not in PARTITION_MODES:
        raise error(
            f"--partition must be one of {', '.join(PARTITION_MODES)}, got '{options.partition}'",
            where,
        )
    if options.calibration_stats and options.calibration_data:
        raise error(
            "--calibration-stats and --calibration-data both say how to calibrate",
            where,
            hint="give one: statistics already calibrated, or the samples to calibrate on",
        )
    for flag, value in (
        ("--calibration-samples", options.calibration_samples),
        ("--report-samples", options.report_samples),
    ):
        if value < 1:
            raise error(f"{flag} must be at least 1, got {value}", where)
    if options.layer_cores < 0:
        raise error(
            f"--layer-cores must be 0 (as many cores as pay) or more, got {options.layer_cores}",
            where,
            hint="--layer-cores 1 keeps every layer on one core",
        )
    flags = {
        "--calibration-data": options.calibration_data,
        "--calibration-stats": options.calibration_stats,
        "--float-layers": options.float_layers,
        "--int16-layers": options.int16_layers,
        "--int16-ops": options.int16_ops,
    }
    given = [flag for flag, value in flags.items() if value]
    if options.quantize == "none" and given:
        raise error(
            f"{given[0]} has no effect with --quantize none",
            where,
            hint="drop it, or quantize with --quantize int8",
        )
    if options.quantize == "int16" and (options.int16_layers or options.int16_ops):
        flag = "--int16-layers" if options.int16_layers else "--int16-ops"
        raise error(
            f"{flag} has no effect with --quantize int16: every activation is int16 already",
            where,
            hint="give it with --quantize int8 to make only those layers int16",
        )


def compile_model(
    path: Path, options: CompileOptions, progress: Progress | None = None
) -> CompileResult:
    """Run the default pipeline on the ONNX model (or float `nn` IR) at `path`."""
    with fewer_collections():
        return _compile(path, options, progress)


def _compile(path: Path, options: CompileOptions, progress: Progress | None) -> CompileResult:
    from irc.codegen.package import package_files
    from irc.diagnostics import Severity, collect_diagnostics
    from irc.importers.load import load_module
    from irc.ir.context import make_context
    from irc.passes import parse_pipeline
    from irc.quantize.qdq import check_layer_names
    from irc.targets import load_target

    check_options(options)
    target = load_target(options.target)
    options = with_model(options, path)
    stages = _Stages(stage_names(options), progress)
    module = stages.run(
        "import", lambda: load_module("irc-compile", path, dict(options.input_shapes))
    )
    if is_prequantized(module) and not options.prequantized:
        # Integer IR given as text: its pipeline is the prequantized one.
        options = dataclasses.replace(options, prequantized=True)
        check_options(options)
        stages.names = stage_names(options)
    pipeline = options.pipeline()
    measuring = _ErrorMeasurement(options)
    reports: dict[str, Any] = {}
    # The pipeline runs as written: the parsed text, not the passes it was made from.
    with collect_diagnostics() as diagnostics:
        for module_pass in parse_pipeline(pipeline, require_anchor=True):
            name = module_pass.name
            if name == "quantize":
                where = Location(file="irc-compile")
                check_layer_names(module, options.float_layers, "--float-layers", where)
                measuring.before_quantize(module, module_pass)
            run = getattr(module_pass, "run", None)
            work = (
                functools.partial(run, module)
                if run is not None
                else functools.partial(module_pass.apply, make_context(), module)
            )
            reports[name] = stages.run(name, work, release=name in RELEASING_PASSES)
            if name == "lower-to-qnn":
                stages.run(ERROR_STAGE, lambda: measuring.after_lowering(module))
    # The passes' remarks are what the reports say in full; their warnings are kept.
    # Once each: the error measurement reads the calibration set that quantize reads.
    warnings = list(dict.fromkeys(d.message for d in diagnostics if d.severity == Severity.WARNING))
    # The stream is not verified op by op (0.5 s for MobileNetV2's 15,000 ops): the
    # lowerings' tests verify what they build, and loading it into the simulator below
    # checks every command's buffers, bounds, alignment and synchronisation.

    name = _model_name(path, module)
    info = package_info(path, module, options)
    files = stages.run("codegen", lambda: package_files(module, target, info), release=False)

    def simulate() -> Report:
        from irc.sim.run import Simulator

        return Simulator(module, target).report

    simulation = stages.run("simulate", simulate, release=False)
    return CompileResult(
        name=name,
        source=path,
        options=options,
        target=target,
        pipeline=pipeline,
        stages=stages.done,
        module=module,
        files=files,
        partition=_partition(module, simulation),
        simulation=simulation,
        tiling=reports.get("plan-tiles"),
        placement=reports["partition"],
        errors=measuring.errors,
        output_metrics=measuring.metrics,
        calibration=measuring.calibration,
        warnings=warnings,
    )


class _ErrorMeasurement:
    """The quantization error report, taken around the pipeline's quantization: the
    float module as `quantize` receives it, and the int8 module after `lower-to-qnn`,
    on the first samples `quantize` calibrates on."""

    def __init__(self, options: CompileOptions) -> None:
        self.options = options
        self.float_module: ModuleOp | None = None
        self.samples: list[dict[str, np.ndarray]] = []
        self.errors: ErrorReport | None = None
        self.metrics: dict[str, tuple[float, float]] = {}
        self.calibration = "none (float)"

    def before_quantize(self, module: ModuleOp, quantize: ModulePass) -> None:
        from irc.quantize.calibration import choose_samples
        from irc.transforms.quantize import QuantizePass

        assert isinstance(quantize, QuantizePass)
        self.float_module = module.clone()
        if quantize.stats:
            # Calibrated elsewhere: the error is measured on the data, or seeded noise.
            data = quantize.calibration_data or None
            chosen = choose_samples(module, data, self.options.report_samples, quantize.seed)
            self.calibration = f"statistics of {quantize.stats}"
        else:
            chosen = quantize.samples(module)
            self.calibration = chosen.description
        self.samples = chosen.samples[: self.options.report_samples]

    def after_lowering(self, module: ModuleOp) -> None:
        from irc.interp import function_signature
        from irc.quantize.mixed_precision import output_metric
        from irc.quantize.report import error_report

        float_module = self.float_module
        assert float_module is not None, "lower-to-qnn runs after quantize"
        outputs: list[tuple[list[np.ndarray], list[np.ndarray]]] = []
        self.errors = error_report(
            float_module, module, self.samples, progress=False, model_outputs=outputs
        )
        for index, (name, _) in enumerate(function_signature(float_module)[1]):
            reference = [{name: np.asarray(pair[0][index])} for pair in outputs]
            got = [{name: np.asarray(pair[1][index])} for pair in outputs]
            self.metrics[name] = (
                output_metric(reference, got, "cosine"),
                output_metric(reference, got, "sqnr"),
            )
        # The float module and its weights (4x the int8 ones) are not needed any more.
        self.float_module = None
        self.samples = []
        release_memory()


def package_info(path: Path, module: ModuleOp, options: CompileOptions) -> dict[str, Any]:
    """What a package's manifest records of its compile: the model, the pipeline, the
    options (`package_files`' `info`)."""
    return {
        "model": {"name": _model_name(path, module), "source": path.name},
        "pipeline": options.pipeline(),
        "options": options.to_json(),
    }


def _model_name(path: Path, module: ModuleOp) -> str:
    from xdsl.dialects.builtin import StringAttr

    name = module.attributes.get("sym_name") or module.properties.get("sym_name")
    return name.data if isinstance(name, StringAttr) else path.stem


def int8_module(
    module: ModuleOp, stats: CalibrationStats, config: QuantizeConfig, target: Target
) -> ModuleOp:
    """The int8 module of a float module calibrated as `stats`: its QDQ form lowered to
    integer `qnn` ops, verified (what `quantize` and `lower-to-qnn` do in the
    pipeline; the fuzzer quantizes this way: irc/testing/fuzz.py)."""
    from irc.ir.io import verify_module
    from irc.quantize.mixed_precision import quantize_keeping_float
    from irc.transforms.lower_to_qnn import lower_module

    qdq, _ = quantize_keeping_float(module, stats, config, [])
    lower_module(qdq, target)
    verify_module(qdq)
    return qdq


def _partition(module: ModuleOp, simulation: Report) -> Partition:
    from xdsl.dialects.func import FuncOp, ReturnOp
    from xdsl.traits import SymbolTable

    from irc import backend
    from irc.backend.cost import op_macs
    from irc.codegen.package import entry_function
    from irc.dialects import npu
    from irc.tiling.planner import layer_name

    entry = entry_function(module)
    cpu_ops: list[HostOp] = []
    npu_layers: list[str] = []
    for op in entry.body.block.ops:
        if isinstance(op, npu.HostCallOp):
            callee = SymbolTable.lookup_symbol(module, op.callee)
            assert isinstance(callee, FuncOp)
            for inner in callee.body.block.ops:
                if backend.is_data(inner) or isinstance(inner, ReturnOp):
                    continue
                kind = backend.entry_of(inner)
                if kind is not None and kind.view:
                    continue  # a view (a reshape, a part.transfer) runs nowhere
                reasons = backend.reasons_of(inner)
                assert reasons, f"partition gave {inner.name} on the host no reason"
                reason = "; ".join(_without_name(text, inner.name) for text in reasons)
                cpu_ops.append(HostOp(layer_name(inner), inner.name, op_macs(inner), reason))
    for name, figures in simulation.layers.items():
        busy = figures.busy
        if any(cycles for queue, cycles in busy.items() if queue != "host"):
            npu_layers.append(name)
    return Partition(npu_layers, simulation.total.macs, cpu_ops)


def _without_name(reason: str, op_name: str) -> str:
    """A reason as the report's column shows it: without the op's name in front (an
    integer op asked about as a kind, `qnn.lut (celu): ...`, keeps the kind: `celu: ...`)."""
    rest = reason.removeprefix(f"{op_name}: ").removeprefix(f"{op_name} ")
    kind, separator, why = rest.partition("): ")
    if rest.startswith("(") and separator and " " not in kind:
        return f"{kind[1:]}: {why}"
    return rest
