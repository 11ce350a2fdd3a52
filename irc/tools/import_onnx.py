"""`irc-import-onnx`: import an ONNX model as textual `nn` IR.

    irc-import-onnx model.onnx -o model.mlir
    irc-import-onnx model.onnx --input-shape input=1x3x224x224 -o model.mlir
    irc-import-onnx model.onnx                      # to stdout, weights elided

The module holds `func.func @main` whose arguments and results carry the ONNX names.
Weights go where `--weights` says: by default into `OUT.weights.npz` beside `-o OUT.mlir`
(sidecar), and nowhere when printing to stdout (elide). Errors in the model are printed
as diagnostics naming the ONNX node, with exit status 1; nothing is written then.
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Sequence
from pathlib import Path

from irc.tools.common import (
    add_input_shape_argument,
    add_output_argument,
    add_weights_arguments,
    check_module_output,
    collect_input_shapes,
    report,
    run_interruptibly,
    weights_mode,
    write_stdout,
)

TOOL = "irc-import-onnx"


def build_parser() -> argparse.ArgumentParser:
    """The command line of irc-import-onnx."""
    parser = argparse.ArgumentParser(
        allow_abbrev=False,
        prog=TOOL,
        description="Import an ONNX model as a module of nn ops (textual IR).",
    )
    parser.add_argument("model", type=Path, help="the ONNX model (.onnx)")
    add_output_argument(parser, "OUT.mlir")
    add_input_shape_argument(parser)
    add_weights_arguments(parser, "sidecar with -o FILE, else elide")
    parser.add_argument(
        "--mlir-print-debuginfo",
        action="store_true",
        help="print every op's location (its ONNX node name)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run irc-import-onnx with `argv` (default: the process's arguments); returns the
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
    from irc.importers.onnx import import_model
    from irc.ir.io import PrintOptions, print_module, write_module

    to_file = args.output != "-"
    mode = weights_mode(args.weights, TOOL, to_file=to_file)
    shapes = collect_input_shapes(args.input_shape, TOOL)
    if to_file:
        check_module_output(TOOL, args.output, [args.model], mode)
    module = import_model(args.model, shapes)
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
