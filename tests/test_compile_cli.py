"""irc-compile: the command line end to end, the optimisation levels, and one clear
diagnostic (no traceback, nothing written) for every bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from irc.runtime import Session
from irc.tools.compile import main

ROOT = Path(__file__).resolve().parent.parent
DIGITS = ROOT / "models" / "digits"


def compile_cli(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    """Run irc-compile in-process; returns (exit status, stdout, stderr)."""
    status = main([str(arg) for arg in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture(scope="module")
def small_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A conv, relu and gemm on a 1x3x8x8 input, random weights."""
    rng = np.random.default_rng(0)
    weight = (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32)
    fc = (rng.standard_normal((8 * 8 * 8, 4)) * 0.05).astype(np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c"], ["r"], name="relu"),
            helper.make_node("Flatten", ["r"], ["f"], name="flatten"),
            helper.make_node("Gemm", ["f", "fc"], ["y"], name="fc"),
        ],
        "small",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        [numpy_helper.from_array(weight, "w"), numpy_helper.from_array(fc, "fc")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path_factory.mktemp("model") / "small.onnx"
    onnx.save(model, path)
    return path


def test_compiles_and_reports(small_model: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "pkg"
    status, stdout, stderr = compile_cli(capsys, small_model, "-o", out, "--no-progress")
    assert status == 0, stderr
    # Calibrated on random data: said once, as a warning.
    assert "random normal samples" in stdout + stderr
    for name in ("manifest.json", "program.bin", "weights.bin", "target.toml", "report.md"):
        assert (out / name).is_file(), name
    session = Session(out)
    cycles = session.report.cycles
    assert f"{cycles:,}" in stdout or str(cycles) in stdout
    x = np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype(np.float32)
    assert session.run({"x": x})["y"].shape == (1, 4)


def test_progress_and_pipeline(small_model: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "pkg"
    status, _, stderr = compile_cli(capsys, small_model, "-o", out, "--progress")
    assert status == 0, stderr
    assert "[1/13] import" in stderr and "[7/13] partition" in stderr
    assert "[13/13] simulate" in stderr
    # --print-pipeline prints the pipeline the manifest records, and writes nothing.
    status, stdout, _ = compile_cli(
        capsys, small_model, "-o", tmp_path / "none", "--print-pipeline"
    )
    assert status == 0 and not (tmp_path / "none").exists()
    manifest = json.loads((out / "manifest.json").read_text())
    assert stdout.strip() == manifest["pipeline"]
    assert stdout.startswith("builtin.module(graph-opt{")
    assert "partition{mode=cost target=npu-demo outline=false}" in stdout
    assert "lower-to-npu{target=npu-demo double-buffer=true}" in stdout


def test_optimisation_levels(small_model: Path, tmp_path: Path, capsys) -> None:
    """-O0 single-buffers (never faster than -O1; this model's layers are planned in
    one tile each, which nothing overlaps, so no slower either) and does not correct
    biases; each level is recorded in the manifest."""
    cycles = {}
    for level in (0, 1, 2, 3):
        out = tmp_path / f"O{level}"
        # By support: the cost model keeps so small a model on the host, where
        # buffering does not matter.
        status, _, stderr = compile_cli(
            capsys, small_model, "-o", out, f"-O{level}", "--partition", "support", "--no-progress"
        )
        assert status == 0, stderr
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["options"]["opt_level"] == level
        assert manifest["options"]["bias_correction"] == (level >= 2)
        assert manifest["options"]["observer"] == ("mse" if level == 3 else "minmax")
        assert ("double-buffer=true" in manifest["pipeline"]) == (level >= 1)
        cycles[level] = Session(out).report.cycles
    assert cycles[0] >= cycles[1]


def test_float_layers_stay_float(small_model: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "pkg"
    status, _, stderr = compile_cli(
        capsys, small_model, "-o", out, "--float-layers", "fc", "--no-progress"
    )
    assert status == 0, stderr
    session = Session(out)
    host_ops = {
        op.name
        for function in session.package.module.ops
        if function.sym_name.data != "main"
        for op in function.walk()
    }
    assert "nn.gemm" in host_ops  # the float gemm runs on the host


def test_quantize_none(small_model: Path, tmp_path: Path, capsys) -> None:
    """Float: npu-demo has no fp16, so every layer runs on the host, exactly as the
    float model."""
    from irc.importers.reference import run_onnxruntime

    out = tmp_path / "pkg"
    status, _, stderr = compile_cli(
        capsys, small_model, "-o", out, "--quantize", "none", "--no-progress"
    )
    assert status == 0, stderr
    x = np.random.default_rng(2).standard_normal((1, 3, 8, 8)).astype(np.float32)
    got = Session(out).run({"x": x})["y"]
    expected = run_onnxruntime(onnx.load(small_model), {"x": x})["y"]
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_calibration_data(small_model: Path, tmp_path: Path, capsys) -> None:
    data = tmp_path / "calib.npz"
    np.savez(data, x=np.random.default_rng(3).standard_normal((4, 1, 3, 8, 8)).astype(np.float32))
    status, stdout, stderr = compile_cli(
        capsys, small_model, "-o", tmp_path / "pkg", "--calibration-data", data, "--no-progress"
    )
    assert status == 0, stderr
    assert "random normal samples" not in stdout + stderr
    manifest = json.loads((tmp_path / "pkg" / "manifest.json").read_text())
    assert manifest["options"]["calibration_data"] == str(data)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["missing.onnx"], "cannot open"),
        (["{model}", "--target", "no-such-npu"], "no-such-npu"),
        (["{model}", "--calibration-samples", "0"], "--calibration-samples must be at least 1"),
        (["{model}", "--layer-cores", "-1"], "--layer-cores must be 0"),
        (
            ["{model}", "--target", "edge-2tops-2c", "--layer-cores", "3"],
            "layer-cores takes 0 (all of them) to the 2 cores of edge-2tops-2c, got 3",
        ),
        (["{model}", "--quantize", "none", "--calibration-data", "{model}"], "no effect"),
        (["{model}", "--calibration-data", "{tmp}/nothing.npz"], "nothing.npz"),
        (["{garbage}"], "garbage.onnx"),
        (
            ["{model}", "--input-shape", "x=1x3x8x8", "--input-shape", "x=1x3x9x9"],
            "two different shapes",
        ),
    ],
)
def test_bad_input_is_one_clear_error(
    small_model: Path, tmp_path: Path, capsys, arguments: list[str], message: str
) -> None:
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x08\x07not a model at all")
    words = [word.format(model=small_model, tmp=tmp_path, garbage=garbage) for word in arguments]
    out = tmp_path / "pkg"
    status, stdout, stderr = compile_cli(capsys, *words, "-o", out, "--no-progress")
    assert status == 1
    assert message in stderr
    assert "Traceback" not in stderr + stdout
    assert stderr.count("error:") == 1
    assert not out.exists() or not any(out.iterdir())


def test_layer_cores_and_keep_inputs_reach_the_pipeline_and_the_manifest(
    small_model: Path, tmp_path: Path, capsys
) -> None:
    """`--layer-cores 1 --keep-inputs` on a target of two cores: the pipeline says
    so, the manifest records it, and every command runs on core 0 (streamed frames
    then take turns on the cores)."""
    out = tmp_path / "pkg"
    status, _, stderr = compile_cli(
        capsys, small_model, "-o", out, "--target", "edge-2tops-2c", "--layer-cores", "1",
        "--keep-inputs", "--no-progress",
    )  # fmt: skip
    assert status == 0, stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["options"]["layer_cores"], manifest["options"]["keep_inputs"]) == (1, True)
    assert "layer-cores=1" in manifest["pipeline"] and "keep-inputs=true" in manifest["pipeline"]
    session = Session(out)
    session.set_input("x", np.zeros((1, 3, 8, 8), np.float32))
    result = session.stream(3, cores=2)
    assert result.timing.turns == 2 and len(result.outputs) == 3


def test_output_is_a_file(small_model: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "file"
    out.write_text("keep me")
    status, _, stderr = compile_cli(capsys, small_model, "-o", out, "--no-progress")
    assert status == 1 and "is a file" in stderr
    assert out.read_text() == "keep me"


def test_bad_command_line_exits_2(small_model: Path, capsys) -> None:
    with pytest.raises(SystemExit) as failure:
        main([str(small_model), "-o", "x", "-O5"])
    assert failure.value.code == 2
    with pytest.raises(SystemExit) as failure:
        main([str(small_model)])  # no -o
    assert failure.value.code == 2


def test_collector_thresholds_are_restored() -> None:
    import gc

    from irc.resources import fewer_collections, release_memory

    before = gc.get_threshold()
    with fewer_collections():
        assert gc.get_threshold()[0] == 50_000
    assert gc.get_threshold() == before
    with pytest.raises(RuntimeError), fewer_collections():
        raise RuntimeError("a failing stage")
    assert gc.get_threshold() == before
    release_memory()  # collects and trims without error, with or without glibc
