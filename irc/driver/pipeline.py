"""The default pipeline, end to end: an ONNX model to a package and what it will do.

`compile_model(path, options)` runs every stage in memory (weights stay numpy
arrays; nothing is printed as text) and returns a `CompileResult`: the command-level
module, the package's files, and what the report needs: each stage's time, the
partition between NPU and CPU, the quantization error of every layer, the tiling
plans with their lower bounds, and the simulator's timing of one inference.

The stages (docs/tools.md, `irc-compile`):

1. `import`: the ONNX model into `nn` IR (irc/importers/onnx.py);
2. `graph-opt`: constant folding, batch-norm folding, relu/clip fusion, NHWC layout
   and transpose cancellation (`graph-opt{activations=relu,clip}`), then
   `prepare_for_calibration`;
3. `calibrate`: the float model on the calibration samples (`--calibration-data`,
   else seeded random normal samples, with a warning);
4. `quantize`: the QDQ form (`--float-layers` stay float), then `lower-to-qnn` and
   `irc.device = "cpu"` on the float ops the target cannot run;
5. `quantization error`: the float and the int8 module on the first samples, every
   quantized tensor compared (irc/quantize/report.py);
6. `plan-tiles`, `plan-ddr`, `lower-to-tile`, `lower-to-npu`: tiles under the SRAM,
   DDR placement, loops of copies and tile compute, the command stream;
7. `codegen`: the package's files (irc/codegen);
8. `simulate`: the stream loaded on the simulator: its cycles, per engine and layer.

With `--quantize none` stages 3 to 5 are skipped: float layers run where the target
can run them (the host, on a target without fp16).

The optimisation levels:

- `-O0`: one SRAM copy of every buffer (no double buffering), no channel padding, no
  bias correction;
- `-O1`: double buffering;
- `-O2` (default): also channels padded to whole DMA bursts where it saves cycles, and
  bias correction of the int8 weights;
- `-O3`: also calibration by the MSE observer (clipping ranges that minimise each
  tensor's quantization error) instead of min/max; slower to compile.
"""

from __future__ import annotations

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

    from irc.quantize.calibration import CalibrationStats
    from irc.quantize.qdq import QuantizeConfig
    from irc.quantize.report import ErrorReport
    from irc.sim.run import Report
    from irc.targets import Target
    from irc.transforms.plan_tiles import TilingReport

GRAPH_OPT = "graph-opt{activations=relu,clip}"
"""The graph passes: relu and clip fused before calibration (see irc-quantize)."""

QUANTIZE_MODES = ("int8", "none")
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
    opt_level: int = 2
    observer: str | None = None
    """The calibration observer; default: minmax (mse at -O3)."""
    report_samples: int = 1
    """Samples the quantization error report runs."""
    input_shapes: Mapping[str, list[int]] = field(default_factory=dict)
    seed: int = 0
    """Seed of the random calibration samples."""

    @property
    def chosen_observer(self) -> str:
        """The observer calibration uses."""
        return self.observer or ("mse" if self.opt_level >= 3 else "minmax")

    def backend_pipeline(self) -> str:
        """The passes after quantization, as an `irc-opt --pass-pipeline`."""
        align = "true" if self.opt_level >= 2 else "false"
        double = "true" if self.opt_level >= 1 else "false"
        return (
            f"builtin.module(plan-tiles{{align-channels={align}}},plan-ddr,lower-to-tile,"
            f"lower-to-npu{{double-buffer={double}}})"
        )

    def to_json(self) -> dict[str, Any]:
        """The options as the manifest records them."""
        return {
            "quantize": self.quantize,
            "calibration_data": str(self.calibration_data) if self.calibration_data else None,
            "calibration_samples": self.calibration_samples,
            "observer": self.chosen_observer if self.quantize == "int8" else None,
            "bias_correction": self.opt_level >= 2,
            "float_layers": list(self.float_layers),
            "opt_level": self.opt_level,
            "input_shapes": {name: list(dims) for name, dims in sorted(self.input_shapes.items())},
        }


@dataclass
class Stage:
    """A stage of the pipeline and how long it took."""

    name: str
    seconds: float


@dataclass
class Partition:
    """Where the model's work runs."""

    npu_layers: list[str]
    """Layers with NPU commands, in program order."""
    npu_macs: int
    cpu_ops: list[tuple[str, str, int]]
    """(layer name, op name, MACs) of every op a host function runs."""

    @property
    def cpu_macs(self) -> int:
        """MACs the host computes."""
        return sum(macs for _, _, macs in self.cpu_ops)


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
    """The stages `compile_model` runs for `options`, in order."""
    quantize = ["calibrate", "quantize", "quantization error"] if options.quantize == "int8" else []
    return [
        "import",
        "graph-opt",
        *quantize,
        "plan-tiles",
        "plan-ddr",
        "lower-to-tile",
        "lower-to-npu",
        "codegen",
        "simulate",
    ]


def check_options(options: CompileOptions) -> None:
    """Reject options that cannot work, before any work is done."""
    where = Location(file="irc-compile")
    if options.quantize not in QUANTIZE_MODES:
        raise error(
            f"--quantize must be one of {', '.join(QUANTIZE_MODES)}, got '{options.quantize}'",
            where,
        )
    if options.opt_level not in OPT_LEVELS:
        raise error(f"the optimisation level must be -O0 to -O3, got {options.opt_level}", where)
    for flag, value in (
        ("--calibration-samples", options.calibration_samples),
        ("--report-samples", options.report_samples),
    ):
        if value < 1:
            raise error(f"{flag} must be at least 1, got {value}", where)
    if options.quantize == "none" and (options.calibration_data or options.float_layers):
        flag = "--calibration-data" if options.calibration_data else "--float-layers"
        raise error(
            f"{flag} has no effect with --quantize none",
            where,
            hint="drop it, or quantize with --quantize int8",
        )


def compile_model(
    path: Path, options: CompileOptions, progress: Progress | None = None
) -> CompileResult:
    """Run the default pipeline on the ONNX model (or float `nn` IR) at `path`."""
    with fewer_collections():
        return _compile(path, options, progress)


def _compile(path: Path, options: CompileOptions, progress: Progress | None) -> CompileResult:
    from irc.importers.load import load_module
    from irc.ir.context import make_context
    from irc.ir.io import verify_module
    from irc.passes import parse_pipeline
    from irc.targets import load_target, using_target

    check_options(options)
    target = load_target(options.target)
    stages = _Stages(stage_names(options), progress)
    warnings: list[str] = []

    module = stages.run(
        "import", lambda: load_module("irc-compile", path, dict(options.input_shapes))
    )

    def graph_opt() -> None:
        from irc.quantize.qdq import prepare_for_calibration

        for module_pass in parse_pipeline(GRAPH_OPT):
            module_pass.apply(make_context(), module)
        if options.quantize == "int8":
            prepare_for_calibration(module)
        verify_module(module)

    stages.run("graph-opt", graph_opt)
    errors = None
    output_metrics: dict[str, tuple[float, float]] = {}
    calibration = "none (float)"
    if options.quantize == "int8":
        samples, calibration = _calibration_samples(module, options, warnings)
        lowered, errors, output_metrics = _quantize(module, samples, options, target, stages)
        # The float module and its weights (4x the int8 ones) are not needed any more.
        del module, samples
        release_memory()
    else:
        from irc.quantize.mixed_precision import mark_cpu_fallbacks

        lowered = module
        mark_cpu_fallbacks(lowered, target)

    tiling = None
    with using_target(target):
        from irc.transforms.plan_tiles import plan_module

        tiling = stages.run(
            "plan-tiles", lambda: plan_module(lowered, target, (), options.opt_level >= 2)
        )
        for module_pass in parse_pipeline(options.backend_pipeline())[1:]:
            stages.run(
                module_pass.name,
                functools.partial(module_pass.apply, make_context(), lowered),
                release=module_pass.name != "lower-to-npu",  # little dies there, much lives
            )
    # The stream is not verified op by op (0.5 s for MobileNetV2's 15,000 ops): the
    # lowerings' tests verify what they build, and loading it into the simulator below
    # checks every command's buffers, bounds, alignment and synchronisation.

    from irc.codegen.package import package_files

    quantization = "quantize int8, lower-to-qnn, " if options.quantize == "int8" else ""
    pipeline = f"{GRAPH_OPT}, {quantization}{options.backend_pipeline()}"
    name = _model_name(path, lowered)
    info = {
        "model": {"name": name, "source": path.name},
        "pipeline": pipeline,
        "options": options.to_json(),
    }
    files = stages.run("codegen", lambda: package_files(lowered, target, info), release=False)

    def simulate() -> Report:
        from irc.sim.run import Simulator

        return Simulator(lowered, target).report

    simulation = stages.run("simulate", simulate, release=False)
    return CompileResult(
        name=name,
        source=path,
        options=options,
        target=target,
        pipeline=pipeline,
        stages=stages.done,
        module=lowered,
        files=files,
        partition=_partition(lowered, simulation),
        simulation=simulation,
        tiling=tiling,
        errors=errors,
        output_metrics=output_metrics,
        calibration=calibration,
        warnings=warnings,
    )


def _model_name(path: Path, module: ModuleOp) -> str:
    from xdsl.dialects.builtin import StringAttr

    name = module.attributes.get("sym_name") or module.properties.get("sym_name")
    return name.data if isinstance(name, StringAttr) else path.stem


def _calibration_samples(
    module: ModuleOp, options: CompileOptions, warnings: list[str]
) -> tuple[list[dict[str, np.ndarray]], str]:
    from irc.interp import function_signature
    from irc.ir.weights import dtype_of

    signature = function_signature(module)[0]
    count = options.calibration_samples
    if options.calibration_data is not None:
        from irc.quantize.calibration import load_samples

        loaded = load_samples(options.calibration_data, signature)
        chosen = [dict(loaded[index]) for index in range(min(count, len(loaded)))]
        return chosen, f"{len(chosen)} samples of {options.calibration_data}"
    rng = np.random.default_rng(options.seed)
    samples = [
        {
            name: rng.standard_normal(value_type.get_shape()).astype(
                dtype_of(value_type.get_element_type())
            )
            for name, value_type in signature
        }
        for _ in range(count)
    ]
    warnings.append(
        f"calibrated on {count} random normal samples (seed {options.seed}): give "
        "--calibration-data for ranges, and errors, that mean something for real inputs"
    )
    return samples, f"{count} random normal samples (seed {options.seed})"


def int8_module(
    module: ModuleOp, stats: CalibrationStats, config: QuantizeConfig, target: Target
) -> ModuleOp:
    """The int8 module of a float module calibrated as `stats`: its QDQ form lowered to
    integer `qnn` ops, the float ops `target` cannot run marked for the CPU, verified
    (the fuzzer quantizes the same way: irc/testing/fuzz.py)."""
    from irc.ir.io import verify_module
    from irc.quantize.mixed_precision import mark_cpu_fallbacks, quantize_keeping_float
    from irc.transforms.lower_to_qnn import lower_module

    qdq, _ = quantize_keeping_float(module, stats, config, [])
    lower_module(qdq, target)
    mark_cpu_fallbacks(qdq, target)
    verify_module(qdq)
    return qdq


def _quantize(
    module: ModuleOp,
    samples: list[dict[str, np.ndarray]],
    options: CompileOptions,
    target: Target,
    stages: _Stages,
) -> tuple[ModuleOp, ErrorReport, dict[str, tuple[float, float]]]:
    from irc.quantize.calibration import calibrate
    from irc.quantize.observers import ObserverConfig
    from irc.quantize.qdq import QuantizeConfig

    observer = ObserverConfig(options.chosen_observer)
    stats = stages.run("calibrate", lambda: calibrate(module, samples, observer, progress=False))
    config = QuantizeConfig(
        exclude_names=frozenset(options.float_layers), bias_correction=options.opt_level >= 2
    )

    lowered = stages.run("quantize", lambda: int8_module(module, stats, config, target))

    def measure() -> tuple[ErrorReport, dict[str, tuple[float, float]]]:
        from irc.interp import function_signature
        from irc.quantize.mixed_precision import output_metric
        from irc.quantize.report import error_report

        outputs: list[tuple[list[np.ndarray], list[np.ndarray]]] = []
        chosen = samples[: options.report_samples]
        report = error_report(module, lowered, chosen, progress=False, model_outputs=outputs)
        metrics = {}
        for index, (name, _) in enumerate(function_signature(module)[1]):
            reference = [{name: np.asarray(pair[0][index])} for pair in outputs]
            got = [{name: np.asarray(pair[1][index])} for pair in outputs]
            metrics[name] = (
                output_metric(reference, got, "cosine"),
                output_metric(reference, got, "sqnr"),
            )
        return report, metrics

    errors, metrics = stages.run("quantization error", measure)
    return lowered, errors, metrics


def _partition(module: ModuleOp, simulation: Report) -> Partition:
    from xdsl.dialects.func import FuncOp
    from xdsl.traits import SymbolTable

    from irc.codegen.package import entry_function
    from irc.cost import op_macs
    from irc.dialects import npu
    from irc.tiling.planner import layer_name

    entry = entry_function(module)
    cpu_ops: list[tuple[str, str, int]] = []
    npu_layers: list[str] = []
    for op in entry.body.block.ops:
        if isinstance(op, npu.HostCallOp):
            callee = SymbolTable.lookup_symbol(module, op.callee)
            assert isinstance(callee, FuncOp)
            for inner in callee.body.block.ops:
                if inner.name in ("func.return", "nn.constant", "qnn.constant"):
                    continue
                cpu_ops.append((layer_name(inner), inner.name, op_macs(inner)))
    for name, figures in simulation.layers.items():
        busy = figures.busy
        if busy["mac"] or busy["vector"] or busy["dma_in"] or busy["dma_out"]:
            npu_layers.append(name)
    return Partition(npu_layers, simulation.total.macs, cpu_ops)
