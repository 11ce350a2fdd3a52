"""Where each key of a TOML document is written, for diagnostics at file:line:col.

The standard library's `tomllib` parses TOML into plain dicts and keeps no positions,
so the loader finds them itself: after `tomllib` has accepted the text (so the text is
known to be valid TOML), `key_positions` walks it once with a small scanner that
understands just enough of TOML's syntax to never mistake the inside of a string, an
array or a comment for a key:

- table headers (`[sram]`, `[ops.conv]`, `[[array.of.tables]]`) set the current table;
- a key/value line records the full dotted path of its key (`ops.conv.strides` for
  `strides = [1, 2]` under `[ops.conv]`, or for `ops.conv.strides = ...` written at the
  top level) at the line and column of the key's first character;
- inline tables (`conv = { max_kernel = 7 }`) record their keys too, nested under the
  key that holds them; arrays, strings (basic, literal and multi-line), numbers,
  booleans and dates are skipped.

A header records the path of its table at the column of its `[`. Every prefix of a
dotted key is recorded at the key as well (unless already known), so that a diagnostic
about a table that was only ever written as part of dotted keys still has a place.
"""

from __future__ import annotations

import bisect
import contextlib
import tomllib

Position = tuple[int, int]
"""A (line, column) pair, both counted from 1."""

KeyPath = tuple[str, ...]

_BARE_KEY_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def key_positions(text: str) -> dict[KeyPath, Position]:
    """The position of every key and table header of a valid TOML document."""
    scanner = _Scanner(text)
    # Failures are only possible for text that tomllib rejects: keep what was found.
    with contextlib.suppress(IndexError, ValueError, tomllib.TOMLDecodeError):
        scanner.document()
    return scanner.positions


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.index = 0
        self.positions: dict[KeyPath, Position] = {}
        self.line_starts = [0] + [i + 1 for i, char in enumerate(text) if char == "\n"]

    # ---- positions -----------------------------------------------------------------------

    def position(self, index: int) -> Position:
        line = bisect.bisect_right(self.line_starts, index)
        return line, index - self.line_starts[line - 1] + 1

    def record(self, path: KeyPath, index: int) -> None:
        where = self.position(index)
        for length in range(1, len(path) + 1):
            self.positions.setdefault(path[:length], where)

    # ---- characters ----------------------------------------------------------------------

    def peek(self, offset: int = 0) -> str:
        at = self.index + offset
        return self.text[at] if at < len(self.text) else ""

    def startswith(self, prefix: str) -> bool:
        return self.text.startswith(prefix, self.index)

    def skip_blanks(self) -> None:
        """Spaces and tabs."""
        while self.peek() in (" ", "\t"):
            self.index += 1

    def skip_comment(self) -> None:
        if self.peek() == "#":
            end = self.text.find("\n", self.index)
            self.index = len(self.text) if end < 0 else end

    def skip_space(self) -> None:
        """Spaces, tabs, newlines and comments (inside arrays and between statements)."""
        while True:
            self.skip_blanks()
            if self.peek() == "#":
                self.skip_comment()
            elif self.peek() in ("\n", "\r") and self.peek():
                self.index += 1
            else:
                return

    # ---- the document ----------------------------------------------------------------------

    def document(self) -> None:
        table: KeyPath = ()
        while True:
            self.skip_space()
            if not self.peek():
                return
            if self.peek() == "[":
                start = self.index
                brackets = 2 if self.startswith("[[") else 1
                self.index += brackets
                self.skip_blanks()
                table = self.key()
                self.skip_blanks()
                self.index += brackets  # the closing bracket(s)
                self.positions.setdefault(table, self.position(start))
                self.record(table, start)
            else:
                start = self.index
                path = table + self.key()
                self.record(path, start)
                self.skip_blanks()
                self.index += 1  # '='
                self.value(path)
            self.skip_blanks()
            self.skip_comment()

    def key(self) -> KeyPath:
        """A dotted key: bare or quoted parts separated by dots."""
        parts: list[str] = []
        while True:
            self.skip_blanks()
            if self.peek() in ('"', "'"):
                start = self.index
                self.string()
                parts.append(tomllib.loads("k = " + self.text[start : self.index])["k"])
            else:
                start = self.index
                while self.peek() and self.peek() in _BARE_KEY_CHARACTERS:
                    self.index += 1
                if self.index == start:
                    raise ValueError("expected a key")
                parts.append(self.text[start : self.index])
            self.skip_blanks()
            if self.peek() != ".":
                return tuple(parts)
            self.index += 1

    def value(self, path: KeyPath) -> None:
        self.skip_blanks()
        char = self.peek()
        if char in ('"', "'"):
            self.string()
        elif char == "[":
            self.array(path)
        elif char == "{":
            self.inline_table(path)
        else:
            # A number, boolean or date: runs to a delimiter (dates may hold a space).
            while self.peek() and self.peek() not in ",]}\n#":
                self.index += 1

    def string(self) -> None:
        quote = self.peek()
        if self.startswith(quote * 3):
            self.index += 3
            while not self.startswith(quote * 3):
                if not self.peek():
                    raise ValueError("unterminated string")
                self.index += 2 if quote == '"' and self.peek() == "\\" else 1
            self.index += 3
            # A multi-line string may end with one or two quotes before its delimiter.
            for _ in range(2):
                if self.peek() == quote:
                    self.index += 1
            return
        self.index += 1
        while self.peek() != quote:
            if not self.peek() or self.peek() == "\n":
                raise ValueError("unterminated string")
            self.index += 2 if quote == '"' and self.peek() == "\\" else 1
        self.index += 1

    def array(self, path: KeyPath) -> None:
        self.index += 1  # '['
        while True:
            self.skip_space()
            if self.peek() == "]":
                self.index += 1
                return
            self.value(path)
            self.skip_space()
            if self.peek() == ",":
                self.index += 1

    def inline_table(self, path: KeyPath) -> None:
        self.index += 1  # '{'
        while True:
            self.skip_blanks()
            if self.peek() == "}":
                self.index += 1
                return
            start = self.index
            inner = path + self.key()
            self.record(inner, start)
            self.skip_blanks()
            self.index += 1  # '='
            self.value(inner)
            self.skip_blanks()
            if self.peek() == ",":
                self.index += 1
