"""Diagnostics: errors a user can cause, reported with a location and a hint.

Every error that bad input can cause (malformed IR, an invalid op, an unsupported
ONNX node, a bad pass option, a wrong runtime input) is raised as an `IrcError`
carrying one or more `Diagnostic`s. The command-line tools catch `IrcError`, print
its diagnostics in MLIR's format (`file:line:col: error: message`) and exit with a
non-zero status; any other exception is a bug in irc and keeps its traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum

from xdsl.dialects.builtin import (
    ArrayAttr,
    CallSiteLoc,
    FileLineColLoc,
    FusedLoc,
    NameLoc,
    UnknownLoc,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.lexer import Span


class Severity(StrEnum):
    """How serious a diagnostic is, with MLIR's names."""

    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"
    REMARK = "remark"


@dataclass(frozen=True)
class Location:
    """Where a diagnostic points: a file position, an ONNX node, or nothing known.

    `file`, `line` and `col` are set for positions in textual IR (lines and columns
    count from 1); `name` is set for named locations such as ONNX node names (or
    TFLite tensor names, with `kind` "tensor").
    """

    file: str | None = None
    line: int | None = None
    col: int | None = None
    name: str | None = None
    kind: str = "node"
    """What `name` names in a model file: an ONNX "node", a TFLite "tensor"."""

    def __str__(self) -> str:
        if self.line is not None:
            position = f"{self.file or '<input>'}:{self.line}:{self.col or 1}"
            return f"{position} ({self.name})" if self.name else position
        if self.name is not None:
            return f"{self.file}: {self.kind} '{self.name}'" if self.file else f"'{self.name}'"
        return self.file or "<unknown>"

    @staticmethod
    def of_span(span: Span[str] | Span[bytes]) -> Location:
        """The location of the first character of a span of parsed text."""
        content = span.input.content
        if isinstance(content, bytes):
            # Spans of byte input count bytes; latin-1 keeps one character per byte.
            content = content.decode("latin-1")
        line, col = _line_col(content, span.start)
        return Location(file=span.input.name, line=line, col=col)

    @staticmethod
    def of_attr(loc: Attribute) -> Location:
        """Convert an MLIR location attribute to a `Location`."""
        match loc:
            case FileLineColLoc():
                return Location(file=loc.filename.data, line=loc.line.data, col=loc.column.data)
            case NameLoc():
                inner = Location.of_attr(loc.location)
                return Location(inner.file, inner.line, inner.col, name=loc.desc.data)
            case CallSiteLoc():
                return Location.of_attr(loc.callee)
            case FusedLoc():
                assert isinstance(loc.locations, ArrayAttr)
                for sub in loc.locations:
                    found = Location.of_attr(sub)
                    if found.line is not None or found.name is not None:
                        return found
                return Location()
            case UnknownLoc() | _:
                return Location()

    @staticmethod
    def of(item: Operation | SSAValue | Span | Location | None) -> Location:
        """The location of an op, a value (its defining op or block), or a span."""
        match item:
            case Location():
                return item
            case Span():
                return Location.of_span(item)
            case Operation():
                return Location.of_attr(item.location)
            case SSAValue():
                owner = item.owner
                if isinstance(owner, Operation):
                    return Location.of_attr(owner.location)
                parent = owner.parent_op()
                return Location.of_attr(parent.location) if parent else Location()
            case None:
                return Location()


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col


@dataclass
class Diagnostic:
    """One message for the user: severity, location, message, optional hint and notes."""

    message: str
    location: Location = field(default_factory=Location)
    severity: Severity = Severity.ERROR
    hint: str | None = None
    notes: list[Diagnostic] = field(default_factory=list)

    def format(self) -> str:
        """Render as MLIR does: `loc: severity: message`, then hint and notes."""
        lines = [f"{self.location}: {self.severity}: {self.message}"]
        if self.hint:
            lines.append(f"  hint: {self.hint}")
        lines.extend(note.format() for note in self.notes)
        return "\n".join(lines)


class IrcError(Exception):
    """An error caused by the user's input, reported as diagnostics (no traceback)."""

    def __init__(self, diagnostics: Diagnostic | Iterable[Diagnostic]):
        if isinstance(diagnostics, Diagnostic):
            diagnostics = [diagnostics]
        self.diagnostics = list(diagnostics)
        super().__init__("\n".join(d.format() for d in self.diagnostics))


def error(
    message: str,
    at: Operation | SSAValue | Span | Location | None = None,
    hint: str | None = None,
) -> IrcError:
    """Build an `IrcError` with one error diagnostic; `raise error(...)` at the call site."""
    return IrcError(Diagnostic(message, Location.of(at), Severity.ERROR, hint))


# --------------------------------------------------------------------------------------
# Non-fatal diagnostics (warnings, remarks) from passes

_collectors: list[list[Diagnostic]] = []


def emit(diagnostic: Diagnostic) -> None:
    """Report a diagnostic from a pass without stopping it (a warning or a remark).

    Errors that stop a pass are raised as `IrcError`s instead. Tools collect emitted
    diagnostics with `collect_diagnostics()`: irc-opt prints them, or matches them
    against `expected-warning`/`expected-remark` lines with --verify-diagnostics.
    Outside any collector they are written to stderr.
    """
    if _collectors:
        _collectors[-1].append(diagnostic)
    else:
        print(diagnostic.format(), file=sys.stderr)


@contextmanager
def collect_diagnostics() -> Iterator[list[Diagnostic]]:
    """Collect the diagnostics that `emit` reports inside the `with` block."""
    collected: list[Diagnostic] = []
    _collectors.append(collected)
    try:
        yield collected
    finally:
        _collectors.pop()
