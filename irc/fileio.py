"""Output files and directories that are never half-written, whatever signal arrives.

Every tool writes its outputs through `StagedOutputs`:

- a file is written to a temporary path in its destination directory and renamed
  into place only when all of the outputs were written;
- a directory staged with `stage_directory` (irc-compile's package) is written whole
  into a sibling temporary directory, which replaces the old one with a single rename:
  `renameat2(RENAME_EXCHANGE)` on Linux swaps the two atomically. Where the kernel or
  the file system lacks it, the old directory is renamed aside and the new one into
  place; a process killed between those two renames leaves the old one aside, and the
  next write to that path puts it back first (`recover`).

So an error midway leaves the previous outputs untouched, and a signal leaves the old
outputs or the new ones, never a mix. Inside `signals_as_interrupts()` (every tool
runs in it) SIGTERM and SIGHUP raise `Terminated`, a `KeyboardInterrupt`, as SIGINT
does; while files are renamed into place or temporaries removed, the three signals
are held and acted on right after, so a rename sequence always completes. Temporary
names are `.NAME.PID.XXXXXXXX.tmp`: debris left by a process that was killed
(SIGKILL, a power cut) is removed by the next write to the same path.

A test hook: with `IRC_TEST_SIGNAL_AT=POINT[:N][:SIGNAL]` in the environment, the
process sends itself SIGNAL (default SIGINT) the Nth time (default 1) it passes
POINT: `staging` (a temporary created, nothing written yet), `staged` (one file
written), `between-renames` (the two-rename swap, between its renames), `commit`
(inside the commit, the new outputs in place, the old ones not yet removed) or
`committed` (the commit done). tests/test_package_io.py uses it to
interrupt real processes at each point.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import glob
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType, TracebackType
from typing import BinaryIO

from irc.diagnostics import Diagnostic, IrcError, Location, Severity, error


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _umask()
"""The process's umask, read once at import (reading it means setting it)."""

INTERRUPTS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""The signals that stop a tool cleanly (SIGINT as KeyboardInterrupt, the others as
`Terminated`)."""

TEST_HOOK = "IRC_TEST_SIGNAL_AT"
"""The environment variable of the test hook (module docstring)."""


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised like SIGINT's KeyboardInterrupt."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated(signum)


_commit_logs: list[list[Path]] = []
"""The lists `signals_as_interrupts` yields, innermost last."""


@contextlib.contextmanager
def signals_as_interrupts() -> Iterator[list[Path]]:
    """Within: SIGTERM and SIGHUP raise `Terminated` (unless they are ignored, as under
    `nohup`), so that staged outputs are cleaned up as on Ctrl-C. Yields the list of
    the outputs committed within, so that an interrupt can say what was written. Only
    the main thread can install handlers: elsewhere, it only lists."""
    written: list[Path] = []
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(signum) is not signal.SIG_IGN:
                previous[signum] = signal.signal(signum, _raise_terminated)
    _commit_logs.append(written)
    try:
        yield written
    finally:
        _commit_logs.remove(written)
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Within: SIGINT, SIGTERM and SIGHUP are recorded, not acted on; on leaving, the
    first one recorded goes to the handler that was in place.

    Python runs signal handlers in the main thread only, and a handler replaced here
    is replaced for every thread, so this holds them whatever threads the process has
    (blocking them with sigmask would hold them for one thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived: list[int] = []
    previous = {}
    for signum in INTERRUPTS:
        handler = signal.getsignal(signum)
        if handler is not signal.SIG_IGN:
            previous[signum] = signal.signal(signum, lambda number, _: arrived.append(number))
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if arrived:
            signal.raise_signal(arrived[0])


_passes: dict[str, int] = {}


def _checkpoint(point: str) -> None:
    """The test hook: send the signal `IRC_TEST_SIGNAL_AT` asks for at this point."""
    request = os.environ.get(TEST_HOOK)
    if not request:
        return
    name, *rest = request.split(":")
    if name != point:
        return
    count = next((int(part) for part in rest if part.isdigit()), 1)
    signal_name = next((part for part in rest if not part.isdigit()), "SIGINT")
    _passes[point] = _passes.get(point, 0) + 1
    if _passes[point] == count:
        os.kill(os.getpid(), signal.Signals[signal_name])


# --------------------------------------------------------------------------------------
# Swapping a directory in


def _load_renameat2() -> Callable[..., int] | None:
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p]
    function.argtypes += [ctypes.c_uint]
    function.restype = ctypes.c_int
    return function


_RENAMEAT2 = _load_renameat2()
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def exchange(first: Path, second: Path) -> bool:
    """Swap two directories atomically (Linux's renameat2); False where the kernel,
    the C library or the file system cannot, and an `OSError` if it fails otherwise."""
    if _RENAMEAT2 is None:
        return False
    status = _RENAMEAT2(
        _AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE
    )
    if status == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(second))


def _temporary_prefix(path: Path) -> str:
    return f".{path.name}.{os.getpid()}."


def _owner_is_gone(temporary: Path) -> bool:
    """Whether the process named in a temporary's name (`.NAME.PID.XXXX[.old].tmp`)
    has ended."""
    stem = temporary.name.removesuffix(".tmp").removesuffix(".old")
    parts = stem.rsplit(".", 2)
    if len(parts) != 3 or not parts[1].isdigit():
        return False
    pid = int(parts[1])
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # alive, someone else's
    return False


def recover(path: Path) -> None:
    """Undo what a killed writer of `path` left: an old directory renamed aside
    (`.NAME.PID.XXXX.old.tmp`, the two-rename swap cut between its renames) goes back
    to `path` if nothing is there, and the temporaries of processes that have ended
    are removed."""
    if not path.parent.is_dir():
        return
    pattern = f".{glob.escape(path.name)}.*.tmp"
    for temporary in sorted(path.parent.glob(pattern)):
        if not _owner_is_gone(temporary):
            continue
        if temporary.name.endswith(".old.tmp") and not path.exists():
            os.rename(temporary, path)
        elif temporary.is_dir() and not temporary.is_symlink():
            shutil.rmtree(temporary, ignore_errors=True)
        else:
            temporary.unlink(missing_ok=True)


def _swap_in(staging: Path, path: Path) -> Path | None:
    """Put the directory `staging` at `path` in one step; the old directory's new
    place (to remove), or None if there was none."""
    try:
        os.rename(staging, path)  # nothing there, or an empty directory
        return None
    except OSError as failure:
        if failure.errno not in (errno.EEXIST, errno.ENOTEMPTY):
            raise
    if exchange(staging, path):
        return staging
    # Two renames: killed between them, the old directory waits aside for
    # recover.
    aside = staging.with_name(staging.name.removesuffix(".tmp") + ".old.tmp")
    os.rename(path, aside)
    _checkpoint("between-renames")
    os.rename(staging, path)
    return aside


# --------------------------------------------------------------------------------------
# Staging


class OutputError(IrcError):
    """An output that cannot be written: the diagnostic names `path`."""

    def __init__(self, path: Path, failure: OSError) -> None:
        self.path = path
        self.reason = failure.strerror or str(failure)
        super().__init__(
            Diagnostic(
                f"cannot write '{path}': {self.reason}",
                Location(file=str(path)),
                Severity.ERROR,
                "give an output path in a directory you can write to",
            )
        )


@contextlib.contextmanager
def _writing(path: Path) -> Iterator[None]:
    """Within: an `OSError` is an `OutputError` about `path`."""
    try:
        yield
    except OSError as failure:
        raise OutputError(path, failure) from None


class StagedOutputs:
    """Stage files and directories, then commit them all by renaming; on error or
    interruption, remove the stages.

    Use as a context manager: what is staged inside the `with` block is committed when
    it exits normally and discarded when it raises. Missing parent directories are
    created (and removed again on discard). A file system error is an `OutputError`.
    `committed` lists the paths put in place.
    """

    def __init__(self) -> None:
        self._files: list[tuple[Path, Path]] = []  # (temporary, destination)
        self._directories: dict[Path, Path] = {}  # destination -> its staging directory
        self._created: list[Path] = []  # parent directories made for the outputs
        self.committed: list[Path] = []

    def stage_directory(self, path: Path | str) -> None:
        """Write the directory `path` as a whole: the files then staged below it go
        into a sibling temporary directory, which replaces `path` (and all it holds)
        at commit."""
        path = Path(path)
        with _writing(path):
            self._make_parents(path)
            recover(path)
            with _signals_held():
                staging = tempfile.mkdtemp(
                    prefix=_temporary_prefix(path), suffix=".tmp", dir=path.parent
                )
                self._directories[path] = Path(staging)
            os.chmod(staging, 0o777 & ~_UMASK)
        _checkpoint("staging")

    def stage(self, path: Path | str, write: Callable[[BinaryIO], object]) -> None:
        """Write a file with `write(binary_file)`: into the staging directory of a
        staged directory that holds `path`, else to a temporary path beside `path`."""
        path = Path(path)
        with _writing(path):
            inside = self._staging_path(path)
            if inside is not None:
                inside.parent.mkdir(parents=True, exist_ok=True)
                with open(inside, "wb") as file:
                    write(file)
            else:
                self._make_parents(path)
                recover(path)
                with _signals_held():
                    fd, name = tempfile.mkstemp(
                        prefix=_temporary_prefix(path), suffix=".tmp", dir=path.parent
                    )
                    self._files.append((Path(name), path))
                _checkpoint("staging")
                # mkstemp makes the file private (0600); outputs get a new file's mode.
                os.fchmod(fd, 0o666 & ~_UMASK)
                with os.fdopen(fd, "wb") as file:
                    write(file)
        _checkpoint("staged")

    def stage_text(self, path: Path | str, text: str) -> None:
        """Stage a UTF-8 text file."""
        self.stage(path, lambda file: file.write(text.encode()))

    def _staging_path(self, path: Path) -> Path | None:
        for directory, staging in self._directories.items():
            if path.is_relative_to(directory):
                return staging / path.relative_to(directory)
        return None

    def _make_parents(self, path: Path) -> None:
        """Create the missing directories above `path`, remembered for `discard`."""
        missing = [parent for parent in path.parents if not parent.exists()]
        for parent in reversed(missing):
            with _signals_held():
                parent.mkdir(exist_ok=True)
                self._created.append(parent)

    def commit(self) -> None:
        """Put every staged directory and file in place."""
        old: list[Path] = []
        with _signals_held():
            try:
                for path, staging in list(self._directories.items()):
                    with _writing(path):
                        aside = _swap_in(staging, path)
                    del self._directories[path]
                    if aside is not None:
                        old.append(aside)
                    self._committed(path)
                for temporary, path in list(self._files):
                    with _writing(path):
                        os.replace(temporary, path)
                    self._files.remove((temporary, path))
                    self._committed(path)
                self._created.clear()
                _checkpoint("commit")
            finally:
                for directory in old:
                    shutil.rmtree(directory, ignore_errors=True)
        _checkpoint("committed")

    def _committed(self, path: Path) -> None:
        self.committed.append(path)
        for log in _commit_logs:
            log.append(path)

    def discard(self) -> None:
        """Remove every staged file and directory, and the directories made for them."""
        with _signals_held():
            for staging in self._directories.values():
                shutil.rmtree(staging, ignore_errors=True)
            for temporary, _ in self._files:
                temporary.unlink(missing_ok=True)
            for directory in reversed(self._created):
                with contextlib.suppress(OSError):
                    directory.rmdir()  # only if empty: another process may use it
            self._directories.clear()
            self._files.clear()
            self._created.clear()

    def __enter__(self) -> StagedOutputs:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if exc_type is None:
            try:
                self.commit()
            except BaseException:
                self.discard()
                raise
        else:
            self.discard()


def write_report(
    path: Path | str, json_text: Callable[[], str], text: Callable[[], str], what: str, option: str
) -> None:
    """Write a pass's report atomically: `json_text()` for a `.json` path, else `text()`.

    A path that cannot be written is an `IrcError` naming it, with a hint about the
    pass `option` that gave it (`partition{report=PATH}`).
    """
    path = Path(path)
    content = json_text() if path.suffix.lower() == ".json" else text()
    try:
        with StagedOutputs() as staged:
            staged.stage_text(path, content)
    except OutputError as failure:
        raise error(
            f"cannot write the {what} '{path}': {failure.reason}",
            Location(file=str(path)),
            hint=f"give {option} a path in a writable directory",
        ) from None
