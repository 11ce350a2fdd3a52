"""`irc-compile`: an ONNX model to a package for the NPU, with reports beside it.

    irc-compile model.onnx -o build/model --target npu-demo
    irc-compile model.onnx -o out --calibration-data calib/ --float-layers /head/Gemm -O3
    irc-compile model.onnx --target edge-2tops --partition cost --print-pipeline

Imports the model and runs one pass pipeline on it (irc/driver/pipeline.py: graph
optimisations, calibration and int8 quantization, partitioning, tiling, memory
planning, the command stream), then writes the package and times it on the simulator;
shows its progress on a terminal, prints a one-screen summary, and writes into the
`-o` directory:

- the package (docs/package.md): `manifest.json`, `program.bin`, `weights.bin`,
  `target.toml`, which `irc.runtime.Session` loads;
- the reports (irc/driver/report.py): `report.md`, `layers.csv`, `trace.json`, and
  `timeline.png` and `layers.png` when matplotlib is installed (`irc[plots]`).

The directory is written whole into a sibling temporary directory and swapped in with
one rename (irc/fileio.py): an error or a signal (SIGINT, SIGTERM, SIGHUP) leaves the
old directory as it was, or the new one complete. `-o` must be a new or empty
directory, or a package directory irc-compile wrote, holding nothing else: it is
replaced as a whole. `--print-pipeline` prints the `builtin.module(...)`
pipeline it would run and stops: `irc-import-onnx` and `irc-opt --pass-pipeline` with
it make the same command stream.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from irc.tools.common import (
    add_input_shape_argument,
    add_progress_arguments,
    check_output_directory,
    collect_input_shapes,
    comma_list,
    nonempty_path,
    run_interruptibly,
    run_reporting_warnings,
    tool_error,
)

TOOL = "irc-compile"


def build_parser() -> argparse.ArgumentParser:
    """The command line of irc-compile."""
    parser = argparse.ArgumentParser(
        allow_abbrev=False,
        prog=TOOL,
        description="Compile an ONNX model for the NPU: a package, a summary and reports.",
    )
    parser.add_argument("model", type=Path, help="the model: ONNX (.onnx) or float nn IR (.mlir)")
    parser.add_argument(
        "-o",
        dest="output",
        type=nonempty_path,
        metavar="DIR",
        help="the package directory (required, but with --print-pipeline)",
    )
    parser.add_argument(
        "--target",
        default="npu-demo",
        metavar="NAME|FILE",
        help="the NPU target: a preset name or a target .toml file (default: npu-demo)",
    )
    parser.add_argument(
        "--quantize",
        choices=("int8", "int16", "none"),
        default="int8",
        help="int8 post-training quantization; int16 (16-bit activations, 8-bit weights); "
        "or none (float layers run where the target can run them) (default: int8)",
    )
    parser.add_argument(
        "--calibration-data",
        type=Path,
        metavar="PATH",
        help="calibration samples: a directory of .npy/.npz files, or one .npz with a sample "
        "per row (default: seeded random normal samples, with a warning)",
    )
    parser.add_argument(
        "--calibration-samples",
        type=int,
        default=8,
        metavar="N",
        help="calibrate on at most N samples (default: 8)",
    )
    parser.add_argument(
        "--calibration-stats",
        type=Path,
        metavar="STATS.json",
        help="quantize by these calibration statistics (irc-calibrate, irc-quantize "
        "--save-stats) instead of calibrating",
    )
    parser.add_argument(
        "--partition",
        choices=("support", "cost"),
        default="cost",
        help="support: every op the target takes on the NPU; cost: also move ops to the "
        "host where transfers cost more than they gain (default: cost, never slower on "
        "the test suite's models: docs/partitioning.md)",
    )
    parser.add_argument(
        "--layer-cores",
        type=int,
        default=0,
        metavar="N",
        help="on a target of several cores, split a layer across at most N of them (default "
        "0: as many as pay); 1 keeps every layer on one core, and streamed frames take "
        'turns on the cores (docs/simulator.md, "Streaming frames")',
    )
    parser.add_argument(
        "--predict-memories",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="on several memories of activations (a system SRAM, then DRAM), cost each "
        "layer's transfers in the memory its tensors are predicted to live in (the "
        "default; plan-tiles{predict-memories=true}), or with --no-predict-memories in "
        "the slowest",
    )
    parser.add_argument(
        "--keep-inputs",
        action="store_true",
        help="the inputs keep their buffers to the end of a run (no tensor reuses them), so "
        "that streamed frames place the next frame's inputs while this one runs",
    )
    parser.add_argument(
        "--float-layers",
        type=comma_list,
        default=[],
        metavar="NAME,...",
        help="layers kept float, by ONNX node name",
    )
    parser.add_argument(
        "--int16-layers",
        type=comma_list,
        default=[],
        metavar="NAME,...",
        help="layers whose activations are int16 (16x8) in an int8 compile, by ONNX node name",
    )
    parser.add_argument(
        "--int16-ops",
        type=comma_list,
        default=[],
        metavar="OP,...",
        help="op types whose activations are int16 in an int8 compile (conv or nn.conv)",
    )
    parser.add_argument(
        "--observer",
        choices=("minmax", "moving-average", "percentile", "entropy", "mse"),
        help="how tensor ranges are calibrated (default: minmax; mse at -O3)",
    )
    parser.add_argument(
        "--report-samples",
        type=int,
        default=1,
        metavar="N",
        help="samples the quantization error report runs (default: 1)",
    )
    parser.add_argument(
        "-O",
        dest="opt_level",
        type=int,
        choices=(0, 1, 2, 3),
        default=2,
        metavar="LEVEL",
        help="-O0: no double buffering, channel padding or bias correction; -O1: double "
        "buffering; -O2 (default): also channel padding and bias correction; -O3: also "
        "MSE calibration",
    )
    parser.add_argument(
        "--print-pipeline",
        action="store_true",
        help="print the pass pipeline (builtin.module(...)) it runs, and stop",
    )
    add_input_shape_argument(parser)
    add_progress_arguments(parser, "each stage as it starts")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run irc-compile; returns the exit status (0 success, 1 error, 2 bad command line)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.output is None and not args.print_pipeline:
        parser.error("the package directory is missing: give -o DIR (or --print-pipeline)")
    return run_interruptibly(TOOL, lambda: run_reporting_warnings(lambda: _run(args)))


def check_package_directory(path: Path) -> None:
    """Refuse, before compiling, a `-o` that irc-compile must not replace: a file, a
    directory holding anything but a package and its reports, the current directory
    (or one above it), or a place this process cannot write."""
    from irc.codegen.package import MANIFEST, PROGRAM, TARGET, WEIGHTS, is_package
    from irc.driver import report

    check_output_directory(TOOL, "-o", path)
    if path.is_dir() and Path.cwd().resolve().is_relative_to(path.resolve()):
        raise tool_error(
            TOOL,
            f"-o {path} is the current directory or holds it; irc-compile replaces it as a whole",
            hint="give a directory below this one, or run irc-compile from elsewhere",
        )
    entries = sorted(entry.name for entry in path.iterdir()) if path.is_dir() else []
    if entries and not is_package(path):
        raise tool_error(
            TOOL,
            f"-o {path} is a directory that holds files but is not an irc package",
            hint="give a new or empty directory, or a package to replace",
        )
    ours = {MANIFEST, PROGRAM, WEIGHTS, TARGET, report.REPORT_MD, report.LAYERS_CSV}
    ours |= {report.TRACE_JSON, report.TIMELINE_PNG, report.LAYERS_PNG}
    others = [name for name in entries if name not in ours]
    if others:
        raise tool_error(
            TOOL,
            f"-o {path} is a package, but also holds {', '.join(others)}, which irc-compile "
            "did not write",
            hint="move them out of the package, or give another directory: irc-compile "
            "replaces the whole directory",
        )


def _run(args: argparse.Namespace) -> int:
    from irc.codegen.package import stage_files
    from irc.driver.pipeline import CompileOptions, check_options, compile_model
    from irc.driver.report import summary_text, write_reports
    from irc.fileio import StagedOutputs

    if not args.print_pipeline:
        check_package_directory(args.output)
    options = CompileOptions(
        target=args.target,
        quantize=args.quantize,
        calibration_data=args.calibration_data,
        calibration_samples=args.calibration_samples,
        calibration_stats=args.calibration_stats,
        partition=args.partition,
        layer_cores=args.layer_cores,
        keep_inputs=args.keep_inputs,
        predict_memories=args.predict_memories,
        float_layers=tuple(args.float_layers),
        int16_layers=tuple(args.int16_layers),
        int16_ops=tuple(args.int16_ops),
        opt_level=args.opt_level,
        observer=args.observer,
        report_samples=args.report_samples,
        input_shapes=collect_input_shapes(args.input_shape, TOOL),
    )
    if args.print_pipeline:
        from irc.targets import load_target

        check_options(options)
        load_target(options.target)  # a bad target is an error here too
        print(options.pipeline())
        return 0
    show = args.progress if args.progress is not None else sys.stderr.isatty()
    started = time.perf_counter()

    def progress(name: str, number: int, count: int) -> None:
        elapsed = time.perf_counter() - started
        print(f"[{number}/{count}] {name} ({elapsed:.1f} s)", file=sys.stderr, flush=True)

    result = compile_model(args.model, options, progress if show else None)
    with StagedOutputs() as staged:
        staged.stage_directory(args.output)
        stage_files(result.files, args.output, staged)
        written = write_reports(result, args.output, staged)
    print(summary_text(result))
    files = ", ".join([*result.files, *written])
    print(f"wrote {args.output}/: {files}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
