"""Writing outputs and packages: all old or all new whatever signal arrives, output paths
refused before any work, and a manifest checked against itself and the program.

The signal tests run the installed tools as real processes and stop them at chosen
points of the write with the test hook of irc/fileio.py (`IRC_TEST_SIGNAL_AT`: the
process sends itself the signal there), so every point is hit exactly, with no sleeps.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from irc import fileio
from irc.diagnostics import IrcError
from irc.fileio import StagedOutputs
from irc.runtime import Session
from irc.tools import calibrate, compile, import_onnx, opt

CORPUS = Path(__file__).resolve().parent / "bad_inputs"
MODEL = CORPUS / "mlir" / "valid.mlir"
ONNX_MODEL = CORPUS / "onnx" / "small.onnx"
BIN = Path(sys.executable).parent


def contents(directory: Path) -> dict[str, bytes]:
    """Every file below `directory`, by relative path."""
    return {
        str(path.relative_to(directory)): path.read_bytes()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


def debris(directory: Path) -> list[str]:
    """Temporaries left anywhere below `directory`."""
    return [str(path) for path in directory.rglob("*.tmp")]


def default_signals() -> None:
    """In the child, before irc-compile starts: the default dispositions of the
    interrupting signals. A suite started in the background (`nohup make test &`)
    passes SIGINT and SIGHUP on ignored, and irc leaves an ignored signal ignored, as
    a tool under nohup must."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


def compile_command(output: Path, *options: str) -> list[str]:
    return [str(BIN / "irc-compile"), str(MODEL), "-o", str(output), "--no-progress", *options]


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """The files of the old package (-O0) and of the new one (-O2) the tests write."""
    root = tmp_path_factory.mktemp("packages")
    for name, level in (("old", "-O0"), ("new", "-O2")):
        subprocess.run(compile_command(root / name, level), check=True, capture_output=True)
    old, new = contents(root / "old"), contents(root / "new")
    assert old["manifest.json"] != new["manifest.json"]
    return old, new


# The points of the write (irc/fileio.py's test hook), with the signal sent there.
# Before `commit` nothing new may be visible; from it on, the new package is complete.
INTERRUPTIONS = [
    ("staging", "SIGINT", "old"),  # the staging directory made, nothing in it
    ("staged:1", "SIGTERM", "old"),  # program.bin written
    ("staged:4", "SIGHUP", "old"),  # the whole package, no report yet
    ("staged:7", "SIGTERM", "old"),  # in the middle of the reports
    ("commit", "SIGTERM", "new"),  # signals held: the swap and the cleanup complete
    ("committed", "SIGINT", "new"),  # after the commit
]


@pytest.mark.parametrize(("point", "signal_name", "expected"), INTERRUPTIONS)
def test_a_signal_leaves_the_old_package_or_the_new_one(
    packages, tmp_path: Path, point: str, signal_name: str, expected: str
) -> None:
    old, new = packages
    directory = tmp_path / "package"
    directory.mkdir()
    for name, content in old.items():
        (directory / name).write_bytes(content)
    environment = {**os.environ, "IRC_TEST_SIGNAL_AT": f"{point}:{signal_name}"}
    result = subprocess.run(
        compile_command(directory, "-O2"),
        env=environment,
        capture_output=True,
        text=True,
        preexec_fn=default_signals,
    )
    number = signal.Signals[signal_name].value
    assert result.returncode == 128 + number, result.stderr
    assert "Traceback" not in result.stderr
    assert f"interrupted by {signal_name}" in result.stderr
    assert contents(directory) == (old if expected == "old" else new)
    said = "nothing was written" if expected == "old" else "written completely"
    assert said in result.stderr
    assert not debris(tmp_path), debris(tmp_path)


def test_sigterm_while_writing_a_new_package_leaves_nothing(tmp_path: Path) -> None:
    directory = tmp_path / "deep" / "package"
    environment = {**os.environ, "IRC_TEST_SIGNAL_AT": "staged:2:SIGTERM"}
    result = subprocess.run(
        compile_command(directory),
        env=environment,
        capture_output=True,
        text=True,
        preexec_fn=default_signals,
    )
    assert result.returncode == 128 + signal.SIGTERM, result.stderr
    # The parents made for it are gone too.
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("point", "written"), [("staged:1", False), ("commit", True)])
def test_a_signal_leaves_no_half_written_module(tmp_path: Path, point: str, written: bool) -> None:
    """A single-file output and its sidecar: both or neither, never a temporary."""
    output = tmp_path / "model.mlir"
    environment = {**os.environ, "IRC_TEST_SIGNAL_AT": f"{point}:SIGTERM"}
    result = subprocess.run(
        # Every weight in the sidecar: two files.
        [
            str(BIN / "irc-import-onnx"),
            str(ONNX_MODEL),
            "-o",
            str(output),
            "--weights-inline-limit",
            "0",
        ],
        env=environment,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 128 + signal.SIGTERM, result.stderr
    names = sorted(path.name for path in tmp_path.iterdir())
    assert names == (["model.mlir", "model.weights.npz"] if written else [])


def test_the_two_rename_fallback_replaces_a_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where renameat2 is missing, the old directory is renamed aside, then removed."""
    monkeypatch.setattr(fileio, "_RENAMEAT2", None)
    directory = tmp_path / "package"
    for text in ("old", "new"):
        with StagedOutputs() as staged:
            staged.stage_directory(directory)
            staged.stage_text(directory / "manifest.json", text)
            staged.stage_text(directory / f"{text}.txt", text)
    assert contents(directory) == {"manifest.json": b"new", "new.txt": b"new"}
    assert sorted(path.name for path in tmp_path.iterdir()) == ["package"]


def test_a_writer_killed_between_the_two_renames_is_recovered(tmp_path: Path) -> None:
    """The old directory waits aside; the next write puts it back, then replaces it."""
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], text=True,
                           capture_output=True, check=True)  # fmt: skip
    pid = int(ended.stdout)
    directory = tmp_path / "package"
    aside = tmp_path / f".package.{pid}.abcdefgh.old.tmp"
    staging = tmp_path / f".package.{pid}.ijklmnop.tmp"
    for path, text in ((aside, "old"), (staging, "new")):
        path.mkdir()
        (path / "manifest.json").write_text(text)
    fileio.recover(directory)
    assert contents(directory) == {"manifest.json": b"old"}
    assert sorted(path.name for path in tmp_path.iterdir()) == ["package"]
    # A single file's temporary, left by a killed writer, goes at the next write.
    (tmp_path / f".model.mlir.{pid}.qrstuvwx.tmp").write_text("half")
    with StagedOutputs() as staged:
        staged.stage_text(tmp_path / "model.mlir", "whole")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["model.mlir", "package"]


def test_a_failed_write_leaves_the_old_directory(tmp_path: Path) -> None:
    directory = tmp_path / "package"
    directory.mkdir()
    (directory / "manifest.json").write_text("old")
    with pytest.raises(ValueError), StagedOutputs() as staged:
        staged.stage_directory(directory)
        staged.stage_text(directory / "manifest.json", "new")
        raise ValueError
    assert contents(directory) == {"manifest.json": b"old"}
    assert not debris(tmp_path)


# --------------------------------------------------------------------------------------
# Output paths (the corpus has the cases a command line alone can make)


def test_compile_replaces_a_package_as_a_whole(packages, tmp_path: Path, capsys) -> None:
    old, new = packages
    directory = tmp_path / "package"
    directory.mkdir()
    for name, content in old.items():
        (directory / name).write_bytes(content)
    (directory / "timeline.png").unlink()  # an old package without its plots
    assert compile.main([str(MODEL), "-o", str(directory), "--no-progress", "-O2"]) == 0
    assert contents(directory) == new
    capsys.readouterr()


def test_compile_creates_missing_parents(tmp_path: Path, capsys) -> None:
    directory = tmp_path / "a" / "b" / "package"
    assert compile.main([str(MODEL), "-o", str(directory), "--no-progress"]) == 0
    assert (directory / "manifest.json").is_file()
    capsys.readouterr()


def test_compile_refuses_the_current_directory(
    packages, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    old, _ = packages
    for name, content in old.items():
        (tmp_path / name).write_bytes(content)
    monkeypatch.chdir(tmp_path)
    assert compile.main([str(MODEL), "-o", ".", "--no-progress"]) == 1
    assert "is the current directory" in capsys.readouterr().err
    assert contents(tmp_path) == old


def test_an_output_equal_to_the_input_is_refused(tmp_path: Path, capsys) -> None:
    model = tmp_path / "valid.mlir"
    shutil.copy(MODEL, model)
    onnx_model = tmp_path / "small.onnx"
    shutil.copy(ONNX_MODEL, onnx_model)
    data = tmp_path / "x.npy"
    shutil.copy(CORPUS / "data" / "x.npy", data)
    before = contents(tmp_path)
    runs = [
        (opt.main, [str(model), "-o", str(model)]),
        (import_onnx.main, [str(onnx_model), "-o", str(onnx_model)]),
        (calibrate.main, [str(model), "--data", str(data), "-o", str(data)]),
    ]
    for main, argv in runs:
        assert main(argv) == 1
        errors = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
        assert len(errors) == 1 and "is also an input" in errors[0], errors
    assert contents(tmp_path) == before


# --------------------------------------------------------------------------------------
# The manifest


@pytest.fixture(scope="module")
def package(packages, tmp_path_factory: pytest.TempPathFactory) -> Path:
    _, new = packages
    directory = tmp_path_factory.mktemp("package") / "package"
    directory.mkdir()
    for name, content in new.items():
        (directory / name).write_bytes(content)
    return directory


def _copy_with_manifest(package: Path, tmp_path: Path, edit, reseal: bool) -> Path:
    from irc.codegen.package import manifest_checksum

    directory = tmp_path / "package"
    shutil.copytree(package, directory)
    manifest = json.loads((directory / "manifest.json").read_text())
    edit(manifest)
    if reseal:
        manifest["manifest_sha256"] = manifest_checksum(manifest)
    (directory / "manifest.json").write_text(json.dumps(manifest))
    return directory


def test_the_manifest_checksum_covers_its_own_fields(package: Path) -> None:
    from irc.codegen.package import manifest_checksum

    manifest = json.loads((package / "manifest.json").read_text())
    assert manifest["version"] == 2
    assert manifest["manifest_sha256"] == manifest_checksum(manifest)
    assert manifest_checksum({**manifest, "pipeline": "edited"}) != manifest["manifest_sha256"]


@pytest.mark.parametrize("reseal", [False, True], ids=["edited", "edited and resealed"])
def test_a_session_never_describes_another_model(package: Path, tmp_path: Path, reseal) -> None:
    """An edited output shape: refused by the checksum, or, resealed, by the program."""
    directory = _copy_with_manifest(
        package, tmp_path, lambda m: m["outputs"][0].update(shape=[1, 5]), reseal
    )
    with pytest.raises(IrcError) as failure:
        Session(directory)
    (diagnostic,) = failure.value.diagnostics
    expected = "outputs[0].shape[1] is 5, but the program's is 4" if reseal else "SHA-256"
    assert expected in diagnostic.message
    assert diagnostic.hint
