"""What the command-line tools share: weights options, input shapes, error output.

Imports nothing heavy at module level, so that `--help` stays fast.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from irc.diagnostics import Diagnostic, IrcError
    from irc.ir.weights import WeightsMode

WEIGHTS_MODES = ("elide", "resource", "sidecar", "inline")
"""The values of --weights (irc.ir.weights.WeightsMode)."""


def non_negative(text: str) -> int:
    """argparse type: a non-negative integer."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got '{text}'")
    return value


def add_weights_arguments(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, default: str
) -> None:
    """Add --weights and --weights-inline-limit; `default` describes the default mode."""
    parser.add_argument(
        "--weights",
        choices=WEIGHTS_MODES,
        default=None,
        help="where the bytes of large constants go: nowhere (elide), the resource section "
        "(resource), FILE.weights.npz beside the output (sidecar), or the op (inline). "
        f"Default: {default}",
    )
    parser.add_argument(
        "--weights-inline-limit",
        type=non_negative,
        default=16,
        metavar="N",
        help="constants with at most N elements are always printed inline (default: 16)",
    )


def weights_mode(
    choice: str | None, tool: str, *, to_file: bool, split: bool = False
) -> WeightsMode:
    """The weights mode from --weights, or the default for where the output goes."""
    from irc.ir.weights import WeightsMode

    if choice is not None:
        mode = WeightsMode(choice)
    elif to_file:
        mode = WeightsMode.RESOURCE if split else WeightsMode.SIDECAR
    else:
        mode = WeightsMode.ELIDE
    if mode is WeightsMode.SIDECAR and not to_file:
        raise tool_error(
            tool,
            "--weights=sidecar needs an output file",
            hint="write with -o FILE.mlir (the weights go to FILE.weights.npz), "
            "or use --weights=resource to keep them in the text",
        )
    if mode is WeightsMode.SIDECAR and split:
        raise tool_error(
            tool,
            "--weights=sidecar cannot be used with --split-input-file",
            hint="use --weights=resource: each chunk keeps its weights in its own resource section",
        )
    return mode


def comma_list(text: str) -> list[str]:
    """argparse type: `a, b,c` as ["a", "b", "c"] (empty items dropped)."""
    return [item.strip() for item in text.split(",") if item.strip()]


def parse_input_shape(text: str) -> tuple[str, list[int]]:
    """Parse `NAME=1x3x224x224` (an empty shape, `NAME=`, is a scalar); `ValueError` if
    malformed. The name may itself contain `=`: the last one separates the shape."""
    name, separator, dims = text.rpartition("=")
    if not separator or not name:
        raise ValueError(f"expected NAME=DIMS (like x=1x3x224x224), got '{text}'")
    if dims == "":
        return name, []
    if not re.fullmatch(r"\d+(x\d+)*", dims):
        raise ValueError(f"dimensions must be non-negative integers joined by 'x', got '{dims}'")
    return name, [int(d) for d in dims.split("x")]


def input_shape_argument(text: str) -> tuple[str, list[int]]:
    """argparse type for --input-shape NAME=1x3x224x224."""
    try:
        return parse_input_shape(text)
    except ValueError as failure:
        raise argparse.ArgumentTypeError(str(failure)) from None


def add_input_shape_argument(parser: argparse.ArgumentParser) -> None:
    """Add the repeatable --input-shape NAME=1x3x224x224 option."""
    parser.add_argument(
        "--input-shape",
        type=input_shape_argument,
        action="append",
        default=[],
        metavar="NAME=1x3x224x224",
        help="a static shape for an ONNX graph input with symbolic dimensions (repeatable)",
    )


def collect_input_shapes(pairs: Iterable[tuple[str, list[int]]], tool: str) -> dict[str, list[int]]:
    """--input-shape values as a dict; one name with two different shapes is an error."""
    shapes: dict[str, list[int]] = {}
    for name, dims in pairs:
        if name in shapes and shapes[name] != dims:
            raise tool_error(tool, f"--input-shape gives '{name}' two different shapes")
        shapes[name] = dims
    return shapes


def add_progress_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    """Add --progress / --no-progress (default: show `what` when stderr is a terminal)."""
    progress = parser.add_mutually_exclusive_group()
    progress.add_argument(
        "--progress",
        dest="progress",
        action="store_const",
        const=True,
        default=None,
        help=f"show {what} on stderr (default: when stderr is a terminal)",
    )
    progress.add_argument(
        "--no-progress", dest="progress", action="store_const", const=False, help="never"
    )


def run_reporting_warnings(run: Callable[[], int]) -> int:
    """Run a tool's work: the warnings it emits are printed, an `IrcError` is printed
    as diagnostics with status 1 (remarks are not printed: the tools summarise)."""
    from irc.diagnostics import IrcError, collect_diagnostics

    try:
        with collect_diagnostics() as diagnostics:
            status = run()
        report(d for d in diagnostics if d.severity == "warning")
        return status
    except IrcError as failure:
        report(failure.diagnostics)
        return 1


def tool_error(tool: str, message: str, hint: str | None = None) -> IrcError:
    """An error about the command line, reported as `TOOL: error: ...`."""
    from irc.diagnostics import Location, error

    return error(message, Location(file=tool), hint)


def report(diagnostics: Iterable[Diagnostic]) -> None:
    """Print diagnostics to stderr in MLIR's format."""
    for diagnostic in diagnostics:
        print(diagnostic.format(), file=sys.stderr)


def write_stdout(text: str) -> None:
    """Write to stdout; a reader that stops early (`| head`) is not an error."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        # Silence the interpreter's own flush at exit as well.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
