"""Transformers on the NPU (issue 20): the shipped exports of tests/data/transformers/
compiled by `compile_model` for edge-2tops, whose support table lists the attention's
ops (matmul of two activations, softmax, layer norm, GELU): every MAC and every op on
the NPU with the default partition, the simulated package bit for bit the integer
reference, and the int8 outputs close to the float model's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from test_compile_placement import assert_bit_exact, compiled, integer_reference

from irc.importers.reference import run_onnxruntime
from irc.runtime import Session

MODELS = Path(__file__).parent / "data" / "transformers"
SHAPES = {
    "encoder_layer": {"tokens": [1, 16, 32]},
    "vit": {},
    "causal_attention": {"tokens": [1, 16, 32]},
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_a_transformer_runs_wholly_on_the_npu_bit_exactly(name: str, tmp_path: Path) -> None:
    model = MODELS / f"{name}.onnx"
    result, package = compiled(
        model, "edge-2tops", tmp_path, partition="cost", input_shapes=SHAPES[name]
    )
    partition = result.partition
    assert partition.cpu_ops == [] and partition.cpu_macs == 0 and partition.npu_macs > 0
    commands = {event.op.name for event in result.simulation.events}
    # The attention's integer softmax and the layer norms on the vector unit, the
    # activation products on the MAC array, the float edges converted on the NPU.
    assert {"npu.softmax", "npu.layer_norm", "npu.matmul", "npu.quantize"} <= commands
    assert "npu.host_call" not in commands
    assert_bit_exact(result, model, package, input_shapes=SHAPES[name])

    # The package against the QDQ form (the int8 model in float arithmetic): the
    # integer softmax, layer norm and requantizations add little error of their own.
    # Against the float model (onnxruntime) the error is the quantization's, on a
    # calibration of 8 random samples.
    session = Session(package)
    rng = np.random.default_rng(7)
    to_qdq, to_float = [], []
    for _ in range(4):
        inputs = {
            spec["name"]: rng.standard_normal(spec["shape"]).astype(np.float32)
            for spec in session.package.inputs
        }
        (got,) = session.run(inputs).values()
        (qdq,) = integer_reference(
            model, result.pipeline, inputs, SHAPES[name], "quantize"
        ).values()
        (expected,) = run_onnxruntime(onnx.load(str(model)), inputs).values()
        to_qdq.append(cosine(got, qdq))
        to_float.append(cosine(got, expected))
    assert min(to_qdq) > 0.995, to_qdq
    assert float(np.mean(to_float)) > 0.97, to_float


def cosine(x: np.ndarray, y: np.ndarray) -> float:
    x, y = x.reshape(-1).astype(np.float64), y.reshape(-1).astype(np.float64)
    return float(x @ y / np.linalg.norm(x) / np.linalg.norm(y))


def test_the_causal_blocks_arithmetic_fuses_into_the_ops_the_npu_runs(tmp_path: Path) -> None:
    """The TorchScript export (opset 14) writes its layer norms and GELU as arithmetic
    and its causal mask as a where of -1e4 over the scores: `fuse-norms` makes them
    two `qnn.layer_norm`s, a lookup table and a masked `qnn.softmax`; the scores'
    division by sqrt(d) is a requantization."""
    model = MODELS / "causal_attention.onnx"
    result, _ = compiled(model, "edge-2tops", tmp_path, input_shapes={"tokens": [1, 16, 32]})
    assert result.partition.cpu_ops == []
    assert result.tiling is not None
    on_npu = [plan.layer.op for plan in result.tiling.plans]
    assert on_npu.count("qnn.layer_norm") == 2 and on_npu.count("qnn.softmax") == 1
    assert on_npu.count("qnn.lut") == 1  # the GELU
    softmaxes = [e.op for e in result.simulation.events if e.op.name == "npu.softmax"]
    assert softmaxes and all(op.mask is not None for op in softmaxes)
