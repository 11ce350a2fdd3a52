"""Output files that are never half-written.

Every tool writes its outputs through `StagedOutputs`: each file is written to a
temporary path in its destination directory and renamed into place only when all of
them were written, so an error midway leaves the previous files untouched.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import BinaryIO


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _umask()
"""The process's umask, read once at import (reading it means setting it)."""


class StagedOutputs:
    """Stage files, then commit them all by renaming; on error, remove the stages.

    Use as a context manager: files staged inside the `with` block are committed when
    it exits normally and discarded when it raises.
    """

    def __init__(self) -> None:
        self._staged: list[tuple[Path, Path]] = []

    def stage(self, path: Path | str, write: Callable[[BinaryIO], object]) -> None:
        """Write a file with `write(binary_file)` to a temporary path beside `path`."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            # mkstemp makes the file private (0600); the output gets a new file's usual mode.
            os.fchmod(fd, 0o666 & ~_UMASK)
            with os.fdopen(fd, "wb") as file:
                write(file)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        self._staged.append((Path(temporary), path))

    def stage_text(self, path: Path | str, text: str) -> None:
        """Stage a UTF-8 text file."""
        self.stage(path, lambda file: file.write(text.encode()))

    def commit(self) -> None:
        """Rename every staged file into place."""
        for temporary, path in self._staged:
            os.replace(temporary, path)
        self._staged.clear()

    def discard(self) -> None:
        """Remove every staged file."""
        for temporary, _ in self._staged:
            temporary.unlink(missing_ok=True)
        self._staged.clear()

    def __enter__(self) -> StagedOutputs:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.discard()


def write_report(
    path: Path | str, json_text: Callable[[], str], text: Callable[[], str], what: str, option: str
) -> None:
    """Write a pass's report atomically: `json_text()` for a `.json` path, else `text()`.

    A path that cannot be written is an `IrcError` naming it, with a hint about the
    pass `option` that gave it (`partition{report=PATH}`).
    """
    from irc.diagnostics import Location, error

    path = Path(path)
    content = json_text() if path.suffix.lower() == ".json" else text()
    try:
        with StagedOutputs() as staged:
            staged.stage_text(path, content)
    except OSError as failure:
        raise error(
            f"cannot write the {what} '{path}': {failure.strerror or failure}",
            Location(file=str(path)),
            hint=f"give {option} a path in a writable directory",
        ) from None
