"""The same input and options give byte-identical files, whatever the process.

Python randomises the hashing of strings per process, so anything that iterates over
a set or a dict keyed by hash could change the order of what irc prints. Each tool runs
here in two processes with different hash seeds, and the files must be equal.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

from irc.testing.models import light_model, materialize_light_model

BIN = Path(sys.executable).parent


def run_twice(tmp_path: Path, make_command) -> list[dict[str, bytes]]:
    """Run a command in two processes with different hash seeds; the files each wrote."""
    outputs = []
    for seed in ("1", "2"):
        directory = tmp_path / f"run{seed}"
        directory.mkdir()
        environment = {**os.environ, "PYTHONHASHSEED": seed}
        completed = subprocess.run(
            make_command(directory), env=environment, capture_output=True, text=True, check=False
        )
        assert completed.returncode == 0, completed.stderr
        outputs.append({path.name: path.read_bytes() for path in sorted(directory.iterdir())})
    return outputs


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("model") / "inception_v2.onnx"
    onnx.save(materialize_light_model(light_model("inception_v2"), seed=0), path)
    return path


def test_import_is_deterministic(model: Path, tmp_path: Path) -> None:
    first, second = run_twice(
        tmp_path, lambda out: [BIN / "irc-import-onnx", model, "-o", out / "model.mlir"]
    )
    assert first.keys() == {"model.mlir", "model.weights.npz"}
    assert first == second


def test_graph_opt_is_deterministic(model: Path, tmp_path: Path) -> None:
    imported = tmp_path / "imported.mlir"
    subprocess.run(
        [BIN / "irc-import-onnx", model, "-o", imported], check=True, capture_output=True
    )
    first, second = run_twice(
        tmp_path,
        lambda out: [
            BIN / "irc-opt",
            imported,
            "-p",
            "graph-opt",
            "--mlir-print-debuginfo",
            "-o",
            out / "opt.mlir",
        ],
    )
    assert first.keys() == {"opt.mlir", "opt.weights.npz"}
    assert first == second
