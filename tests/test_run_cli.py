"""irc-run: inputs by name or at random, outputs as .npy, comparison with onnxruntime,
and clean diagnostics (never a traceback) for every bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from irc.tools.run import main

IR = """\
func.func @main(%x: tensor<2x3xf32> {irc.name = "x"}, %y: tensor<2x3xf32> {irc.name = "y"})
    -> (tensor<2x3xf32> {irc.name = "sum/0"}) {
  %s = nn.add %x, %y : tensor<2x3xf32>
  %r = nn.relu %s : tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    """Run irc-run in-process; returns (exit status, stdout, stderr)."""
    status = main([str(arg) for arg in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture
def model_ir(tmp_path: Path) -> Path:
    path = tmp_path / "model.mlir"
    path.write_text(IR)
    return path


@pytest.fixture
def onnx_model(tmp_path: Path) -> Path:
    """relu(x @ w + b) as ONNX, with its weights as initializers."""
    rng = np.random.default_rng(1)
    weight = rng.standard_normal((4, 3)).astype(np.float32)
    bias = rng.standard_normal(3).astype(np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w"], ["xw"], name="matmul"),
            helper.make_node("Add", ["xw", "b"], ["pre"], name="add"),
            helper.make_node("Relu", ["pre"], ["out"], name="relu"),
        ],
        "small",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(weight, "w"), numpy_helper.from_array(bias, "b")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "small.onnx"
    onnx.save(model, path)
    return path


def test_inputs_by_name_and_outputs_as_npy(
    model_ir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 3
    y = np.full((2, 3), 0.5, dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    out = tmp_path / "out"
    status, stdout, stderr = run(
        capsys, model_ir, "--input", f"x={tmp_path / 'x.npy'}", "--input", f"y={tmp_path / 'y.npy'}",
        "--output-dir", out,
    )  # fmt: skip
    assert status == 0, stderr
    assert "sum/0: float32[2, 3]" in stdout
    # Names that are not file names ('/') are made safe.
    np.testing.assert_array_equal(np.load(out / "sum_0.npy"), np.maximum(x + y, 0))


def test_random_inputs_are_seeded(
    model_ir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = []
    for seed, directory in ((3, "a"), (3, "b"), (4, "c")):
        status, _, stderr = run(
            capsys,
            model_ir,
            "--random-inputs",
            "--seed",
            seed,
            "--output-dir",
            tmp_path / directory,
        )
        assert status == 0, stderr
        results.append(np.load(tmp_path / directory / "sum_0.npy"))
    np.testing.assert_array_equal(results[0], results[1])
    assert not np.array_equal(results[0], results[2])


def test_compare_with_onnxruntime_passes(
    onnx_model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, stdout, stderr = run(
        capsys, onnx_model, "--random-inputs", "--compare-onnxruntime", onnx_model
    )
    assert status == 0, stderr
    assert "PASS" in stdout
    assert "out" in stdout


def test_compare_with_a_different_model_fails(
    onnx_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = onnx.load(onnx_model)
    model.graph.node[2].op_type = "Sigmoid"  # the reference now computes something else
    other = tmp_path / "other.onnx"
    onnx.save(model, other)
    status, stdout, _ = run(capsys, onnx_model, "--random-inputs", "--compare-onnxruntime", other)
    assert status == 1
    assert "FAIL" in stdout


def test_tolerances_decide(
    onnx_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Perturb one weight by 1e-3 relative: fails at the default tolerance, passes at 1e-2.
    model = onnx.load(onnx_model)
    weight = numpy_helper.to_array(model.graph.initializer[0]).copy()
    weight *= 1.001
    model.graph.initializer[0].CopyFrom(numpy_helper.from_array(weight, "w"))
    other = tmp_path / "perturbed.onnx"
    onnx.save(model, other)
    assert run(capsys, onnx_model, "--random-inputs", "--compare-onnxruntime", other)[0] == 1
    status, _, _ = run(
        capsys, onnx_model, "--random-inputs", "--compare-onnxruntime", other, "--rtol", "1e-2"
    )
    assert status == 0


BAD_RUNS = {
    "missing model": ["nowhere.mlir"],
    "missing input": ["{ir}"],
    "unknown input": ["{ir}", "--random-inputs", "--input", "z={dir}/x.npy"],
    "unreadable input file": ["{ir}", "--input", "x={dir}/none.npy", "--random-inputs"],
    "wrong input shape": ["{ir}", "--input", "x={dir}/wrong.npy", "--random-inputs"],
    "malformed --input": ["{ir}", "--input", "x"],
    "missing reference model": [
        "{ir}",
        "--random-inputs",
        "--compare-onnxruntime",
        "{dir}/no.onnx",
    ],
    "elided weights": ["{elided}", "--random-inputs"],
    "invalid IR": ["{invalid}"],
}


@pytest.mark.parametrize("case", BAD_RUNS, ids=list(BAD_RUNS))
def test_bad_runs_give_diagnostics(
    case: str, model_ir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    np.save(tmp_path / "x.npy", np.zeros((2, 3), np.float32))
    np.save(tmp_path / "wrong.npy", np.zeros((3, 2), np.float32))
    elided = tmp_path / "elided.mlir"
    elided.write_text(
        "func.func @main() -> tensor<64xf32> {\n"
        "  %w = nn.constant dense_resource<w> : tensor<64xf32>\n"
        "  func.return %w : tensor<64xf32>\n}\n"
    )
    invalid = tmp_path / "invalid.mlir"
    invalid.write_text(IR.replace("nn.relu %s : tensor<2x3xf32>", "nn.relu %s : tensor<3x2xf32>"))
    argv = [
        arg.format(ir=model_ir, dir=tmp_path, elided=elided, invalid=invalid)
        for arg in BAD_RUNS[case]
    ]
    status, _, stderr = run(capsys, *argv)
    assert status == 1
    assert "error:" in stderr
    assert "Traceback" not in stderr
