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
import os
import sys
from collections.abc import Sequence
from pathlib import Path

TOOL = "irc-import-onnx"
WEIGHTS_MODES = ("elide", "resource", "sidecar", "inline")


def _input_shape(text: str) -> tuple[str, list[int]]:
    from irc.importers.onnx import parse_input_shape

    try:
        return parse_input_shape(text)
    except ValueError as failure:
        raise argparse.ArgumentTypeError(str(failure)) from None


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got '{text}'")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The command line of irc-import-onnx."""
    parser = argparse.ArgumentParser(
        prog=TOOL, description="Import an ONNX model as a module of nn ops (textual IR)."
    )
    parser.add_argument("model", type=Path, help="the ONNX model (.onnx)")
    parser.add_argument(
        "-o", dest="output", default="-", metavar="OUT.mlir", help="output file (default: stdout)"
    )
    parser.add_argument(
        "--input-shape",
        type=_input_shape,
        action="append",
        default=[],
        metavar="NAME=1x3x224x224",
        help="a static shape for a graph input with symbolic dimensions (repeatable)",
    )
    parser.add_argument(
        "--weights",
        choices=WEIGHTS_MODES,
        default=None,
        help="where the bytes of large constants go: nowhere (elide), the resource section "
        "(resource), OUT.weights.npz beside the output (sidecar), or the op (inline). "
        "Default: sidecar with -o FILE, else elide",
    )
    parser.add_argument(
        "--weights-inline-limit",
        type=_non_negative,
        default=16,
        metavar="N",
        help="constants with at most N elements are always printed inline (default: 16)",
    )
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
        return _run(args)
    except IrcError as failure:
        for diagnostic in failure.diagnostics:
            print(diagnostic.format(), file=sys.stderr)
        return 1


def _run(args: argparse.Namespace) -> int:
    from irc.diagnostics import Location, error
    from irc.fileio import StagedOutputs
    from irc.importers.onnx import import_model
    from irc.ir.io import PrintOptions, print_module, write_module
    from irc.ir.weights import WeightsMode

    to_file = args.output != "-"
    mode = (
        WeightsMode(args.weights)
        if args.weights
        else (WeightsMode.SIDECAR if to_file else WeightsMode.ELIDE)
    )
    if mode is WeightsMode.SIDECAR and not to_file:
        raise error(
            "--weights=sidecar needs an output file",
            Location(file=TOOL),
            hint="write with -o FILE.mlir (the weights go to FILE.weights.npz), "
            "or use --weights=resource to keep them in the text",
        )
    shapes: dict[str, list[int]] = {}
    for name, dims in args.input_shape:
        if name in shapes and shapes[name] != dims:
            raise error(f"--input-shape gives '{name}' two different shapes", Location(file=TOOL))
        shapes[name] = dims

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
        _write_stdout(text.getvalue())
    return 0


def _write_stdout(text: str) -> None:
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader stopped early (`| head`), which is not an error; silence the
        # interpreter's own flush at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


if __name__ == "__main__":
    sys.exit(main())
