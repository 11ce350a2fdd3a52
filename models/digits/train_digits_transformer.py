"""Train a small vision transformer on the digits data and write it as ONNX.

Issue 20's accuracy model: a transformer trained on real data, so that irc's int8
accuracy on attention, softmax, layer norms and GELU is measured, not assumed
(`tests/test_digits_transformer.py`, docs/quantization.md's accuracy table).

Like `train_digits.py` (whose split, normalisation and calibration set it reuses: the
same test images, the same calibration images), this script is not part of irc and
does not run in irc's environment: it needs torch, scikit-learn and onnxruntime. It
was run once, in a throwaway virtualenv outside the repository, and its output is
committed:

    python3 -m venv /tmp/train-venv
    /tmp/train-venv/bin/pip install torch==2.13.0 scikit-learn onnx numpy onnxruntime
    /tmp/train-venv/bin/python models/digits/train_digits_transformer.py

Everything is seeded and torch runs on one thread with deterministic algorithms.

The model (`DigitsViT`), input `image` 1x1x8x8, output `logits` 1x10:

    image 1x1x8x8
    -> Conv 2x2 stride 2 (1 -> 32): 16 patches                 1x32x4x4
    -> flatten, transpose: 16 tokens                           1x16x32
    -> + position embedding
    -> 2 x pre-norm encoder layer:
         x + proj(attention(LayerNorm(x)))   4 heads of 8, softmax(Q K^T / sqrt 8) V
         x + down(GELU(up(LayerNorm(x))))    32 -> 64 -> 32, the exact (erf) GELU
    -> LayerNorm -> mean over the tokens                       1x32
    -> Linear (32 -> 10)                                       logits 1x10

Exported by the TorchScript exporter at opset 17: LayerNormalization nodes, the GELU
written with Erf, the heads split by Reshape and Transpose, Q K^T and P V as MatMuls of
two activations, the mean as ReduceMean over the token axis.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import onnx
import torch
from torch import nn
from train_digits import SEED, onnxruntime_predictions, predict, split, train, versions

EPOCHS = 80
LEARNING_RATE = 2e-3
WEIGHT_DECAY = 1e-4
OPSET = 17
MIN_ACCURACY = 0.96
D_MODEL, HEADS, FEEDFORWARD, LAYERS, PATCH = 32, 4, 64, 2, 2
TOKENS = (8 // PATCH) ** 2

INPUT_NAME = "image"
OUTPUT_NAME = "logits"
HERE = Path(__file__).resolve().parent


class EncoderLayer(nn.Module):
    """A pre-norm encoder layer, the attention written out (as GPT-style code does)."""

    def __init__(self) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(D_MODEL)
        self.qkv = nn.Linear(D_MODEL, 3 * D_MODEL)
        self.proj = nn.Linear(D_MODEL, D_MODEL)
        self.norm2 = nn.LayerNorm(D_MODEL)
        self.up = nn.Linear(D_MODEL, FEEDFORWARD)
        self.down = nn.Linear(FEEDFORWARD, D_MODEL)
        self.act = nn.GELU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, _ = x.shape
        head = D_MODEL // HEADS
        qkv = self.qkv(self.norm1(x)).reshape(batch, tokens, 3, HEADS, head)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)  # each batch x heads x tokens x head
        scores = q @ k.transpose(-2, -1) / math.sqrt(head)
        attended = (scores.softmax(-1) @ v).transpose(1, 2).reshape(batch, tokens, D_MODEL)
        x = x + self.proj(attended)
        return x + self.down(self.act(self.up(self.norm2(x))))


class DigitsViT(nn.Module):
    """Patches of 2x2 pixels as 16 tokens, two encoder layers, a mean-pooled head."""

    def __init__(self) -> None:
        super().__init__()
        self.patches = nn.Conv2d(1, D_MODEL, PATCH, stride=PATCH)
        self.position = nn.Parameter(torch.randn(1, TOKENS, D_MODEL) * 0.02)
        self.layers = nn.ModuleList(EncoderLayer() for _ in range(LAYERS))
        self.norm = nn.LayerNorm(D_MODEL)
        self.head = nn.Linear(D_MODEL, 10)

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        x = self.patches(image).flatten(2).transpose(1, 2) + self.position
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x).mean(1))


def export(model: DigitsViT, path: Path) -> None:
    model.eval()
    torch.onnx.export(
        model,
        (torch.zeros(1, 1, 8, 8),),
        str(path),
        input_names=[INPUT_NAME],
        output_names=[OUTPUT_NAME],
        opset_version=OPSET,
        dynamo=False,
    )
    onnx_model = onnx.load(str(path))
    onnx.checker.check_model(onnx_model, full_check=True)
    kinds = [node.op_type for node in onnx_model.graph.node]
    assert kinds.count("LayerNormalization") == 2 * LAYERS + 1, kinds
    assert "Erf" in kinds and "Softmax" in kinds, kinds
    print("ONNX nodes:", sorted(set(kinds)))


def main() -> None:
    print(versions())
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    train_x, test_x, train_y, test_y = split()
    print(f"train {len(train_x)} images, test {len(test_x)} images")

    model = train(
        train_x,
        train_y,
        DigitsViT(),
        epochs=EPOCHS,
        optimizer_class=torch.optim.AdamW,
        learning_rate=LEARNING_RATE,
        weight_decay=WEIGHT_DECAY,
    )
    train_accuracy = float((predict(model, train_x) == train_y).mean())
    test_accuracy = float((predict(model, test_x) == test_y).mean())
    print(f"torch: train accuracy {train_accuracy:.4f}, test accuracy {test_accuracy:.4f}")
    if test_accuracy < MIN_ACCURACY:
        sys.exit(f"test accuracy {test_accuracy:.4f} is below {MIN_ACCURACY}")

    model_path = HERE / "digits_vit.onnx"
    export(model, model_path)
    ort_predictions = onnxruntime_predictions(model_path, test_x)
    print(f"onnxruntime: test accuracy {float((ort_predictions == test_y).mean()):.4f}")
    if not np.array_equal(ort_predictions, predict(model, test_x)):
        sys.exit("onnxruntime's predictions differ from torch's")
    print(f"wrote digits_vit.onnx: {model_path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
