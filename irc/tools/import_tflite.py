"""`irc-import-tflite`: import an int8 TFLite model as textual `qnn` IR.

    irc-import-tflite model.tflite -o model.mlir
    irc-import-tflite model.tflite                   # to stdout, weights elided

The module holds `func.func @main` of `qnn` ops, with TFLite's scales, zero points,
multipliers and roundings (docs/tflite.md); its arguments and results carry the
TFLite tensor names, and every op is located at the tensor it computes. Weights go
where `--weights` says: by default into `OUT.weights.npz` beside `-o OUT.mlir`
(sidecar), and nowhere when printing to stdout (elide). Errors in the model are
printed as diagnostics naming the tensor or operator, with exit status 1; nothing is
written then.
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Sequence
from pathlib import Path

from irc.tools.common import (
    add_output_argument,
    add_weights_arguments,
    check_module_output,
    report,
    run_interruptibly,
    weights_mode,
    write_stdout,
)

TOOL = "irc-import-tflite"


def build_parser() -> argparse.ArgumentParser:
    """The command line of irc-import-tflite."""
    parser = argparse.ArgumentParser(
        allow_abbrev=False,
        prog=TOOL,
        description="Import an int8 TFLite model as a module of qnn ops (textual IR).",
    )
    parser.add_argument("model", type=Path, help="the int8 TFLite model (.tflite)")
    add_output_argument(parser, "OUT.mlir")
    add_weights_arguments(parser, "sidecar with -o FILE, else elide")
    parser.add_argument(
        "--mlir-print-debuginfo",
        action="store_true",
        help="print every op's location (the name of the TFLite tensor it computes)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run irc-import-tflite with `argv` (default: the process's arguments); returns the
    exit status (0 success, 1 error in the model, 2 bad command line)."""
    args = build_parser().parse_args(argv)

    from irc.diagnostics import IrcError

    try:
        return run_interruptibly(TOOL, lambda: _run(args))
    except IrcError as failure:
        report(failure.diagnostics)
        return 1


def _run(args: argparse.Namespace) -> int:
    from irc.fileio import StagedOutputs
    from irc.importers.tflite import import_tflite
    from irc.ir.io import PrintOptions, print_module, verify_module, write_module

    to_file = args.output != "-"
    mode = weights_mode(args.weights, TOOL, to_file=to_file)
    if to_file:
        check_module_output(TOOL, args.output, [args.model], mode)
    module = import_tflite(args.model)
    verify_module(module)
    options = PrintOptions(
        debuginfo=args.mlir_print_debuginfo, weights=mode, inline_limit=args.weights_inline_limit
    )
    if to_file:
        with StagedOutputs() as staged:
            write_module(module, Path(args.output), options, staged)
    else:
        text = io.StringIO()
        print_module(module, text, options)
        write_stdout(text.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
