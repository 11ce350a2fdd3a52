"""`irc-quantize`: post-training int8 quantization of a float model, end to end.

    irc-quantize model.onnx --data calib/ -o model.int8.mlir
    irc-quantize model.mlir --data calib.npz --observer percentile --report errors.txt -o int8.mlir
    irc-quantize model.onnx --data calib/ --auto cosine=0.99 --target npu-demo -o int8.mlir
    irc-quantize model.onnx --stats stats.json --exclude-ops softmax,sigmoid -o int8.mlir

The steps, in order:

1. import the model (ONNX) or parse it (`.mlir`, with its weights);
2. the graph optimisations (`--graph-opt`, default `graph-opt{activations=relu,clip}`:
   batch norms folded into convolutions and relu/clip fused before calibration, so
   that the ranges calibrated are those of the fused ops' results; other activations
   stay separate ops that become lookup tables; `--no-graph-opt` to skip);
3. `prepare_for_calibration`: per-channel mul/add pairs by constants (unfoldable
   batch norms) become depthwise 1x1 convolutions, rounded once instead of twice, and
   ops that share a location get distinct names, so that every tensor gets its own
   statistics;
4. calibration on `--data` with `--observer` (or the statistics of `--stats`, which
   must have been computed on this same module, e.g. saved by `--save-stats`);
5. mixed precision: `--exclude-names`/`--exclude-ops` keep layers float, and
   `--auto cosine=0.99|sqnr=30` keeps the most sensitive layers float (or, with
   `--auto-fallback int16`, gives them int16 activations) until the outputs meet the
   goal (irc/quantize/mixed_precision.py);
6. the `quantize` pass (the QDQ form), then `lower-to-qnn` (integer ops; lookup
   tables only if `--target` has a lookup table, assumed without a target);
7. with `--target`, float layers are marked `irc.device = "cpu"` when the target
   has no fp16;
8. the layer-wise error report (float vs the int8 module, on the first
   `--report-samples` calibration samples), summarised on stderr and written to
   `--report` (JSON if it ends in `.json`, else text);
9. the int8 module is written to `-o` (stdout by default).
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from irc.importers.load import load_module
from irc.tools.common import (
    add_input_shape_argument,
    add_output_argument,
    add_progress_arguments,
    add_weights_arguments,
    check_module_output,
    check_output_file,
    collect_input_shapes,
    comma_list,
    nonempty_path,
    run_interruptibly,
    run_reporting_warnings,
    tool_error,
    weights_mode,
    write_stdout,
)

if TYPE_CHECKING:
    pass

TOOL = "irc-quantize"

OBSERVER_NAMES = ("minmax", "moving-average", "percentile", "entropy", "mse")
"""The observers (irc.quantize.observers.OBSERVERS), listed here to keep --help fast."""

DEFAULT_GRAPH_OPT = "graph-opt{activations=relu,clip}"
"""The graph passes run before calibration unless --graph-opt or --no-graph-opt."""


def build_parser() -> argparse.ArgumentParser:
    """The command line of irc-quantize."""
    parser = argparse.ArgumentParser(
        allow_abbrev=False,
        prog=TOOL,
        description="Quantize a float model to int8: calibrate, quantize, lower to qnn, report.",
    )
    parser.add_argument("model", type=Path, help="an ONNX model (.onnx) or textual IR (.mlir)")
    parser.add_argument(
        "--data",
        type=Path,
        metavar="PATH",
        help="calibration data: a directory of .npy/.npz samples, or one .npz with a sample "
        "per row",
    )
    parser.add_argument(
        "--stats",
        type=Path,
        metavar="STATS.json",
        help="use these calibration statistics instead of calibrating (computed on the same "
        "module after the same graph passes, e.g. by --save-stats)",
    )
    parser.add_argument(
        "--save-stats",
        type=nonempty_path,
        metavar="STATS.json",
        help="write the statistics used here",
    )
    parser.add_argument(
        "--observer",
        choices=OBSERVER_NAMES,
        default="minmax",
        help="how a tensor's range is calibrated (default: minmax)",
    )
    parser.add_argument(
        "--percentile",
        type=float,
        default=99.99,
        metavar="P",
        help="for --observer percentile: the percentile kept (default: 99.99)",
    )
    parser.add_argument(
        "--exclude-names",
        type=comma_list,
        default=[],
        metavar="NAME,...",
        help="ops kept float, by ONNX node name (location name)",
    )
    parser.add_argument(
        "--exclude-ops",
        type=comma_list,
        default=[],
        metavar="OP,...",
        help="op types kept float (conv or nn.conv)",
    )
    parser.add_argument(
        "--auto",
        metavar="cosine=T|sqnr=DB",
        help="keep the most sensitive layers float until the outputs reach this cosine "
        "similarity or SQNR against the float model",
    )
    parser.add_argument(
        "--auto-fallback",
        choices=("float", "int16"),
        default="float",
        help="what --auto gives the sensitive layers: float, or int16 activations (default: float)",
    )
    parser.add_argument(
        "--auto-samples",
        type=int,
        default=4,
        metavar="N",
        help="calibration samples --auto measures on (default: 4)",
    )
    parser.add_argument(
        "--activations",
        choices=("int8", "uint8", "int16"),
        default="int8",
        help="storage type of activations; int16: symmetric, with int8 weights (default: int8)",
    )
    parser.add_argument(
        "--weight-scales",
        choices=("per-channel", "per-tensor"),
        default="per-channel",
        help="weight scales per output channel or per tensor (default: per-channel)",
    )
    parser.add_argument(
        "--no-bias-correction",
        dest="bias_correction",
        action="store_false",
        help="keep conv and gemm biases as they are (default: correct them for the mean "
        "error of the int8 weights, from calibration's channel means)",
    )
    graph = parser.add_mutually_exclusive_group()
    graph.add_argument(
        "--graph-opt",
        default=DEFAULT_GRAPH_OPT,
        metavar="PIPELINE",
        help=f"graph passes run before calibration (default: {DEFAULT_GRAPH_OPT})",
    )
    graph.add_argument(
        "--no-graph-opt",
        dest="graph_opt",
        action="store_const",
        const="",
        help="quantize the model as it is",
    )
    parser.add_argument(
        "--target",
        metavar="NAME|FILE",
        help="the NPU target (preset or .toml): decides lookup tables and marks float "
        "layers for the CPU when it has no fp16",
    )
    parser.add_argument(
        "--report",
        type=nonempty_path,
        metavar="FILE",
        help="write the layer-wise error report (JSON for .json, else text)",
    )
    parser.add_argument(
        "--report-samples",
        type=int,
        default=8,
        metavar="N",
        help="calibration samples the error report runs (default: 8)",
    )
    parser.add_argument(
        "--threshold",
        type=float,
        default=0.99,
        metavar="COSINE",
        help="the report's cosine threshold for 'first layer below' (default: 0.99)",
    )
    add_input_shape_argument(parser)
    add_weights_arguments(parser, "sidecar with -o FILE, else elide")
    parser.add_argument(
        "--mlir-print-debuginfo",
        action="store_true",
        help="print every op's location (its ONNX node name)",
    )
    add_progress_arguments(parser, "progress bars")
    add_output_argument(parser, "OUT.mlir")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run irc-quantize; returns the exit status (0 success, 1 error, 2 bad command line)."""
    args = build_parser().parse_args(argv)

    return run_interruptibly(TOOL, lambda: run_reporting_warnings(lambda: _run(args)))


def _say(text: str) -> None:
    print(f"{TOOL}: {text}", file=sys.stderr)


def _check_arguments(args: argparse.Namespace) -> None:
    if args.data is None and args.stats is None:
        raise tool_error(
            TOOL,
            "give calibration data (--data PATH) or statistics (--stats STATS.json)",
            hint="irc-quantize MODEL --data calib/ -o OUT.mlir",
        )
    if args.data is None and (args.auto or args.report):
        what = "--auto" if args.auto else "--report"
        raise tool_error(TOOL, f"{what} runs the model on samples: give them with --data PATH")
    for option, value in (
        ("--auto-samples", args.auto_samples),
        ("--report-samples", args.report_samples),
    ):
        if value < 1:
            raise tool_error(TOOL, f"{option} must be at least 1, got {value}")
    if not 0 < args.threshold <= 1:
        raise tool_error(TOOL, f"--threshold must be in (0, 1], got {args.threshold}")


def _run(args: argparse.Namespace) -> int:
    from irc.diagnostics import Location
    from irc.interp import function_signature
    from irc.ir.io import verify_module
    from irc.passes import parse_pipeline
    from irc.quantize.calibration import CalibrationStats, calibrate, load_samples
    from irc.quantize.mixed_precision import (
        auto_mixed_precision,
        parse_goal,
        quantize_keeping_float,
    )
    from irc.quantize.observers import ObserverConfig
    from irc.quantize.qdq import (
        QuantizeConfig,
        check_layer_names,
        check_op_types,
        prepare_for_calibration,
    )
    from irc.transforms.lower_to_qnn import lower_module

    _check_arguments(args)
    goal = parse_goal(args.auto) if args.auto else None
    target = None
    if args.target:
        from irc.targets import load_target

        target = load_target(args.target)
    to_file = args.output != "-"
    mode = weights_mode(args.weights, TOOL, to_file=to_file)
    inputs = [args.model, args.data, args.stats]
    if to_file:
        check_module_output(TOOL, args.output, inputs, mode)
    for option, path in (("--save-stats", args.save_stats), ("--report", args.report)):
        if path is not None:
            check_output_file(TOOL, option, path, inputs)

    module = load_module(TOOL, args.model, collect_input_shapes(args.input_shape, TOOL))
    if args.graph_opt:
        from irc.ir.context import make_context

        for module_pass in parse_pipeline(args.graph_opt):
            module_pass.apply(make_context(), module)
        verify_module(module)
    prepare_for_calibration(module)
    check_layer_names(module, args.exclude_names, "--exclude-names", Location(file=TOOL))
    check_op_types(args.exclude_ops, "--exclude-ops", Location(file=TOOL))

    samples = None
    if args.data is not None:
        samples = load_samples(args.data, function_signature(module)[0])
    if args.stats is not None:
        stats = CalibrationStats.load(args.stats)
    else:
        assert samples is not None
        observer = ObserverConfig(args.observer, percentile=args.percentile)
        problem = observer.check()
        if problem is not None:
            raise tool_error(TOOL, problem)
        start = time.perf_counter()
        stats = calibrate(module, samples, observer, progress=args.progress)
        _say(
            f"calibrated {len(stats)} tensors on {stats.samples} samples ({observer.name}) "
            f"in {time.perf_counter() - start:.2f} s"
        )
    if args.save_stats is not None:
        stats.save(args.save_stats)

    config = QuantizeConfig(
        exclude_names=frozenset(args.exclude_names),
        exclude_ops=frozenset(args.exclude_ops),
        activations=args.activations,
        per_channel=args.weight_scales == "per-channel",
        bias_correction=args.bias_correction,
    )
    kept: list = []
    if goal is not None:
        assert samples is not None
        metric, threshold = goal
        chosen = [samples[index] for index in range(min(args.auto_samples, len(samples)))]
        result = auto_mixed_precision(
            module,
            stats,
            chosen,
            metric,
            threshold,
            config=config,
            progress=args.progress,
            fallback=args.auto_fallback,
        )
        kept = result.kept_float
        for line in result.format_text(limit=5).splitlines():
            _say(line)
    qdq, summary = quantize_keeping_float(module, stats, replace(config), kept, args.auto_fallback)
    verify_module(qdq)
    _say(
        f"quantized {len(summary.quantized_ops)} ops, "
        f"{len(summary.float_reasons)} float" + _reasons(summary.float_reasons.values())
    )

    lowered = qdq.clone()
    records = lower_module(lowered, target)
    verify_module(lowered)
    lowered_count = sum(record.lowered for record in records.values())
    islands = [reason for record in records.values() for reason in record.float_reasons.values()]
    lookups = sum(record.lookup_tables for record in records.values())
    note = (
        f"; no target: {lookups} lookup tables assumed available" if lookups and not target else ""
    )
    _say(f"lowered {lowered_count} ops to qnn, {len(islands)} float{_reasons(islands)}{note}")
    if target is not None:
        _say_float_on_host(lowered, target)

    if samples is not None:
        _error_report(args, module, lowered, samples)
    _write(args, lowered, mode)
    return 0


def _say_float_on_host(module, target) -> None:
    """On a target without fp16: how many ops kept float (`irc.float`, the quantizer's
    mark) the backend table puts on the host, where `partition` will mark them."""
    from irc import backend
    from irc.ir.placement import FLOAT_REASON_ATTR

    if target.data_types.fp16:
        return
    floating = [
        op
        for op in module.walk()
        if FLOAT_REASON_ATTR in op.attributes and backend.place(op, target).device == backend.CPU
    ]
    if floating:
        _say(f"target {target.name} has no fp16: {len(floating)} float ops run on the host")


def _reasons(reasons) -> str:
    """` (3: nn.softmax has no ...; ...)`: the distinct reasons, most frequent first."""
    counts: dict[str, int] = {}
    for reason in reasons:
        counts[reason] = counts.get(reason, 0) + 1
    if not counts:
        return ""
    ordered = sorted(counts.items(), key=lambda item: -item[1])
    shown = "; ".join(f"{count} x {reason}" for reason, count in ordered[:3])
    more = "; ..." if len(ordered) > 3 else ""
    return f" ({shown}{more})"


def _error_report(args: argparse.Namespace, float_module, lowered, samples) -> None:
    from irc.quantize.report import error_report

    chosen = [samples[index] for index in range(min(args.report_samples, len(samples)))]
    errors = error_report(float_module, lowered, chosen, args.threshold, progress=args.progress)
    from irc.interp import run_function
    from irc.quantize.mixed_precision import output_metric

    reference = [run_function(float_module, sample) for sample in chosen]
    quantized = [run_function(lowered, sample) for sample in chosen]
    for name in reference[0]:
        cosine = output_metric(
            [{name: r[name]} for r in reference], [{name: q[name]} for q in quantized], "cosine"
        )
        sqnr = output_metric(
            [{name: r[name]} for r in reference], [{name: q[name]} for q in quantized], "sqnr"
        )
        _say(
            f"output '{name}': cosine {cosine:.6f}, SQNR {sqnr:.2f} dB "
            f"(int8 vs float, {len(chosen)} samples)"
        )
    first = errors.first_below()
    if first is not None:
        _say(
            f"first tensor below cosine {args.threshold:g}: {first.key} ({first.op}) "
            f"{first.cosine:.6f}"
        )
    if args.report is not None:
        if args.report.suffix == ".json":
            errors.save(args.report)
        else:
            from irc.fileio import StagedOutputs

            with StagedOutputs() as staged:
                staged.stage_text(args.report, errors.format_text() + "\n")


def _write(args: argparse.Namespace, module, mode) -> None:
    from irc.fileio import StagedOutputs
    from irc.ir.io import PrintOptions, print_module, write_module

    options = PrintOptions(
        debuginfo=args.mlir_print_debuginfo, weights=mode, inline_limit=args.weights_inline_limit
    )
    if args.output != "-":
        with StagedOutputs() as staged:
            write_module(module, Path(args.output), options, staged)
        _say(f"wrote {args.output}")
    else:
        text = io.StringIO()
        print_module(module, text, options)
        write_stdout(text.getvalue())


if __name__ == "__main__":
    sys.exit(main())
