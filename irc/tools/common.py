"""What the command-line tools share: weights options, input shapes, output paths,
signals, error output.

Imports nothing heavy at module level, so that `--help` stays fast.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
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


def add_output_argument(
    parser: argparse.ArgumentParser, metavar: str, help: str = "output file (default: stdout)"
) -> None:
    """The `-o FILE` of a tool that writes one file ('-', the default: standard output;
    an empty path is a command-line error)."""
    parser.add_argument(
        "-o", dest="output", type=output_path, default="-", metavar=metavar, help=help
    )


def tolerance(text: str) -> float:
    """An argparse type: a finite non-negative number (a NaN tolerance would pass
    every comparison)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a non-negative number, got '{text}'")
    return value


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


# --------------------------------------------------------------------------------------
# Output paths (docs/tools.md#output-paths)


def output_path(text: str) -> str:
    """argparse type of an output path: any but the empty string."""
    if not text:
        raise argparse.ArgumentTypeError("the path is empty")
    return text


def nonempty_path(text: str) -> Path:
    """argparse type of an output path, as a `Path`: any but the empty string (which
    `Path` would read as the current directory)."""
    return Path(output_path(text))


def _same_file(first: Path, second: Path) -> bool:
    try:
        return first.exists() and second.exists() and os.path.samefile(first, second)
    except OSError:
        return False


def _check_location(tool: str, option: str, path: Path, *, itself: bool = False) -> None:
    """The nearest existing directory above `path` (or `path` itself if `itself` and it
    exists) must be a directory this process can write in; the missing ones below it
    are created when the output is written."""
    candidates = [path, *path.parents] if itself else list(path.parents)
    for ancestor in candidates:
        if not os.path.lexists(ancestor):
            continue
        if not ancestor.is_dir():
            raise tool_error(
                tool,
                f"cannot write {option} {path}: '{ancestor}' is a file, not a directory",
                hint="give a path whose directories are directories (missing ones are created)",
            )
        try:
            # An unnamed file where the kernel supports it (O_TMPFILE): nothing to clean up.
            with tempfile.TemporaryFile(dir=ancestor):
                pass
        except OSError as failure:
            raise tool_error(
                tool,
                f"cannot write {option} {path}: cannot create files in '{ancestor}' "
                f"({failure.strerror or failure})",
                hint="give a path in a directory you can write to",
            ) from None
        return


def check_output_file(
    tool: str, option: str, path: str | Path, inputs: Iterable[str | Path | None] = ()
) -> None:
    """Refuse, before any work, an output file that could not be written: a directory,
    one of the `inputs`, a path below a file, or a place this process cannot write.
    Missing directories above it are created when it is written."""
    path = Path(path)
    if path.is_dir():
        raise tool_error(
            tool,
            f"{option} {path} is a directory; it must name a file",
            hint=f"give a file path, like {path / 'out'}",
        )
    for source in inputs:
        if source is not None and str(source) != "-" and _same_file(path, Path(source)):
            raise tool_error(
                tool,
                f"{option} {path} is also an input: writing it would replace what is read",
                hint="write to another file",
            )
    _check_location(tool, option, path)


def check_module_output(
    tool: str, output: str, inputs: Iterable[str | Path | None], mode: WeightsMode
) -> None:
    """`check_output_file` for `-o FILE.mlir`, and for FILE.weights.npz beside it when
    the weights go there (sidecar mode)."""
    from irc.ir.io import sidecar_path_for
    from irc.ir.weights import WeightsMode

    inputs = list(inputs)
    check_output_file(tool, "-o", output, inputs)
    if mode is WeightsMode.SIDECAR:
        check_output_file(tool, "the weights file of -o", sidecar_path_for(Path(output)), inputs)


def check_output_directory(tool: str, option: str, path: Path) -> None:
    """Refuse, before any work, an output directory that could not be written: a file,
    a path below a file, or a place this process cannot write. Missing directories
    are created when it is written."""
    if path.exists() and not path.is_dir():
        raise tool_error(
            tool,
            f"{option} {path} is a file; it must name a directory",
            hint="give a directory path (it is created if needed)",
        )
    _check_location(tool, option, path, itself=True)


# --------------------------------------------------------------------------------------
# Signals


def run_interruptibly(tool: str, work: Callable[[], int]) -> int:
    """Run a tool's `work` with SIGTERM and SIGHUP handled like SIGINT (irc/fileio.py):
    its outputs are then all old or all new. An interrupt prints what was written
    and returns 128 + the signal's number, as a shell reports a signal."""
    from irc.fileio import signals_as_interrupts

    written: list[Path] = []
    try:
        with signals_as_interrupts() as written:
            return work()
    except KeyboardInterrupt as interrupt:
        number = int(getattr(interrupt, "signum", signal.SIGINT))
        what = (
            f"{', '.join(map(str, written))} written completely"
            if written
            else "nothing was written"
        )
        print(f"{tool}: interrupted by {signal.Signals(number).name}; {what}", file=sys.stderr)
        return 128 + number
    except BrokenPipeError:
        # The reader of stdout went away (`irc-run pkg | head`): stop quietly, as a
        # shell tool does, and keep Python from complaining again at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 128 + signal.SIGPIPE
