"""`irc-calibrate`: run a float model on a calibration set and save tensor ranges.

    irc-calibrate model.onnx --data calib/ -o stats.json
    irc-calibrate model.mlir --data calib.npz --observer percentile --percentile 99.9 -o stats.json
    irc-calibrate --from-stats stats.json --observer entropy -o entropy.json

The model is textual IR (`.mlir`, with its weights) or ONNX (imported on the fly; the
quantize pass must then see the same import, so prefer calibrating the `.mlir` that
will be quantized). The calibration set is a directory of `.npy`/`.npz` files or one
`.npz` with a leading axis of samples (see irc/quantize/calibration.py). The
statistics file (`irc-calibration/1` JSON) is what `irc-opt -p 'quantize{stats=...}'`
and `irc-quantize` read. `--from-stats` recomputes the ranges of an existing file
with another observer (`minmax`, or a histogram observer from a file a histogram
observer wrote) without running the model.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from irc.importers.load import load_module
from irc.tools.common import (
    add_input_shape_argument,
    add_output_argument,
    add_progress_arguments,
    check_output_file,
    collect_input_shapes,
    report,
    run_interruptibly,
    tool_error,
)

TOOL = "irc-calibrate"

OBSERVER_NAMES = ("minmax", "moving-average", "percentile", "entropy", "mse")
"""The observers (irc.quantize.observers.OBSERVERS), listed here to keep --help fast."""


def build_parser() -> argparse.ArgumentParser:
    """The command line of irc-calibrate."""
    parser = argparse.ArgumentParser(
        allow_abbrev=False,
        prog=TOOL,
        description="Run a float model on calibration data and save every tensor's range.",
    )
    parser.add_argument(
        "model",
        type=Path,
        nargs="?",
        help="textual IR (.mlir) or an ONNX model (.onnx); not needed with --from-stats",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--data",
        type=Path,
        metavar="PATH",
        help="a directory of .npy/.npz samples, or one .npz with a sample per row",
    )
    source.add_argument(
        "--from-stats",
        type=Path,
        metavar="STATS.json",
        help="recompute the ranges of a statistics file with --observer instead of running "
        "the model",
    )
    parser.add_argument(
        "--observer",
        choices=OBSERVER_NAMES,
        default="minmax",
        help="how a tensor's range is chosen (default: minmax)",
    )
    parser.add_argument(
        "--percentile",
        type=float,
        default=99.99,
        metavar="P",
        help="for --observer percentile: clip (100 - P)%% of the values on each side "
        "(default: 99.99)",
    )
    parser.add_argument(
        "--momentum",
        type=float,
        default=0.9,
        metavar="M",
        help="for --observer moving-average: weight of the past (default: 0.9)",
    )
    parser.add_argument(
        "--bins",
        type=int,
        default=2048,
        metavar="N",
        help="histogram bins of percentile, entropy and mse (default: 2048)",
    )
    parser.add_argument("--entry", default="main", help="the function to run (default: main)")
    add_input_shape_argument(parser)
    add_progress_arguments(parser, "a progress bar")
    add_output_argument(parser, "STATS.json", "the statistics file to write (default: stdout)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run irc-calibrate; returns the exit status (0 success, 1 error, 2 bad command line)."""
    args = build_parser().parse_args(argv)

    from irc.diagnostics import IrcError

    try:
        return run_interruptibly(TOOL, lambda: _run(args))
    except IrcError as failure:
        report(failure.diagnostics)
        return 1


def _run(args: argparse.Namespace) -> int:
    from irc.fileio import StagedOutputs
    from irc.interp import function_signature
    from irc.quantize.calibration import CalibrationStats, calibrate, load_samples
    from irc.quantize.observers import ObserverConfig
    from irc.tools.common import write_stdout

    config = ObserverConfig(args.observer, args.percentile, args.momentum, args.bins)
    problem = config.check()
    if problem is not None:
        raise tool_error(TOOL, problem)
    if args.output != "-":
        check_output_file(TOOL, "-o", args.output, [args.model, args.data, args.from_stats])
    start = time.perf_counter()
    if args.from_stats is not None:
        stats = CalibrationStats.load(args.from_stats).with_observer(config)
        summary = f"recomputed {len(stats)} ranges with {config.name} from {args.from_stats}"
    else:
        if args.model is None:
            raise tool_error(TOOL, "--data needs a model", hint="irc-calibrate MODEL --data PATH")
        module = load_module(TOOL, args.model, collect_input_shapes(args.input_shape, TOOL))
        samples = load_samples(args.data, function_signature(module, args.entry)[0])
        start = time.perf_counter()
        stats = calibrate(module, samples, config, progress=args.progress, entry=args.entry)
        elapsed = time.perf_counter() - start
        summary = (
            f"calibrated {len(stats)} tensors on {stats.samples} samples with {config.name} "
            f"in {elapsed:.2f} s ({elapsed / stats.samples:.3f} s per sample)"
        )
    if args.output == "-":
        write_stdout(stats.to_json_text())
        print(summary, file=sys.stderr)
    else:
        with StagedOutputs() as staged:
            staged.stage_text(args.output, stats.to_json_text())
        print(f"{summary}; wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
