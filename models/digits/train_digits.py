"""Train the small digits CNN of issue 6 and write it, its test split and its calibration set.

This script is not part of irc and does not run in irc's environment: it needs torch,
scikit-learn and onnxruntime, which irc does not depend on. It was run once, in a
throwaway virtualenv outside the repository, and its outputs are committed:

    python3 -m venv /tmp/train-venv
    /tmp/train-venv/bin/pip install torch==2.13.0 scikit-learn onnx numpy onnxruntime
    /tmp/train-venv/bin/python models/digits/train_digits.py

The committed files were made with: CPython 3.11.7, torch 2.13.0+cpu, scikit-learn
1.9.1, numpy 2.4.6, onnx 1.23.2, onnxruntime 1.32.0 (x86_64, Linux). The script prints
the versions it runs with. Everything is seeded (`SEED`) and torch runs on one thread
with deterministic algorithms, so the same versions on the same machine give the same
files bit for bit. Another CPU may not: on 2026-12-03 another machine of the same kind
and the same versions trained weights that differ by up to 0.1, with the same test
accuracy (99.56%) and the same data files; the committed model is the first.

What it does:

1. Loads scikit-learn's digits (`sklearn.datasets.load_digits`: 1797 images, 8x8,
   integer pixels 0..16, 10 classes) and splits it with `train_test_split`, stratified
   by label, 25% test (450 images), `random_state=SEED`.
2. Normalises each pixel as `x = pixel / 16`, giving float32 values in [0, 1]
   (`normalize`). The ONNX model takes this normalised image, not raw pixels.
3. Trains `DigitsCNN` (below) with Adam and cross-entropy, mini-batches of 32, a cosine
   learning-rate schedule, for `EPOCHS` epochs, and requires a test accuracy of at
   least `MIN_ACCURACY`.
4. Exports it in eval mode with `torch.onnx.export` (the TorchScript exporter, opset
   `OPSET`), input `image` of the static shape 1x1x8x8 (batch of one: irc runs one
   sample per call), output `logits` of shape 1x10. BatchNormalization is kept as a
   node of its own (`training=PRESERVE` skips the exporter's eval-mode conv+bn fusion),
   so that irc's `fold-batchnorm` has work to do.
5. Checks the ONNX file with `onnx.checker` and runs every test image through
   onnxruntime: its predictions must equal torch's.
6. Writes, beside this script:
   - `digits_cnn.onnx`: the model;
   - `digits_test.npz`: `images` (450x1x8x8 float32, normalised) and `labels` (450 int64);
   - `digits_calibration.npz`: `image` (100x1x8x8 float32, normalised): the first 100
     images of a seeded permutation of the TRAINING split, stacked along axis 0
     (sample i is `image[i:i+1]`, the model's 1x1x8x8 input), named by the ONNX input.
"""

from __future__ import annotations

import platform
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import sklearn
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from torch import nn

SEED = 0
TEST_FRACTION = 0.25
EPOCHS = 40
BATCH_SIZE = 32
LEARNING_RATE = 3e-3
WEIGHT_DECAY = 1e-4
OPSET = 17
MIN_ACCURACY = 0.97
CALIBRATION_SAMPLES = 100
PIXEL_MAX = 16.0
"""load_digits pixels count the set pixels of a 4x4 block: integers 0..16."""

INPUT_NAME = "image"
OUTPUT_NAME = "logits"
HERE = Path(__file__).resolve().parent


class DigitsCNN(nn.Module):
    """Two 3x3 convolutions with batch norm and ReLU, a 2x2 max pool, a third 3x3
    convolution block, and a linear classifier.

        image 1x1x8x8
        -> Conv 3x3 (1 -> 16, pad 1) -> BatchNorm -> ReLU      16x8x8
        -> Conv 3x3 (16 -> 32, pad 1) -> BatchNorm -> ReLU     32x8x8
        -> MaxPool 2x2                                         32x4x4
        -> Conv 3x3 (32 -> 32, pad 1) -> BatchNorm -> ReLU     32x4x4
        -> Flatten -> Gemm (512 -> 10)                         logits 1x10
    """

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1),
            nn.BatchNorm2d(16),
            nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1),
            nn.BatchNorm2d(32),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(32, 32, 3, padding=1),
            nn.BatchNorm2d(32),
            nn.ReLU(),
        )
        self.classifier = nn.Linear(32 * 4 * 4, 10)

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        return self.classifier(torch.flatten(self.features(image), 1))


def normalize(pixels: np.ndarray) -> np.ndarray:
    """Raw load_digits rows (N x 64, values 0..16) -> N x 1 x 8 x 8 float32 in [0, 1]."""
    return (pixels.reshape(-1, 1, 8, 8) / PIXEL_MAX).astype(np.float32)


def versions() -> str:
    return (
        f"python {platform.python_version()}, torch {torch.__version__}, "
        f"scikit-learn {sklearn.__version__}, numpy {np.__version__}, onnx {onnx.__version__}, "
        f"onnxruntime {onnxruntime.__version__}, {platform.machine()} {platform.system()}"
    )


def split() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The normalised train and test images and their labels."""
    digits = load_digits()
    train_x, test_x, train_y, test_y = train_test_split(
        digits.data,
        digits.target,
        test_size=TEST_FRACTION,
        stratify=digits.target,
        random_state=SEED,
    )
    return (
        normalize(train_x),
        normalize(test_x),
        train_y.astype(np.int64),
        test_y.astype(np.int64),
    )


def accuracy(model: nn.Module, images: np.ndarray, labels: np.ndarray) -> float:
    return float((predict(model, images) == labels).mean())


def predict(model: nn.Module, images: np.ndarray) -> np.ndarray:
    model.eval()
    with torch.no_grad():
        return model(torch.from_numpy(images)).argmax(1).numpy()


def train(
    train_x: np.ndarray,
    train_y: np.ndarray,
    model: nn.Module | None = None,
    *,
    epochs: int = EPOCHS,
    optimizer_class: type[torch.optim.Optimizer] = torch.optim.Adam,
    learning_rate: float = LEARNING_RATE,
    weight_decay: float = WEIGHT_DECAY,
) -> nn.Module:
    """Train `model` (a new DigitsCNN by default) with cross-entropy, mini-batches of
    BATCH_SIZE in a seeded order and a cosine learning-rate schedule over `epochs`."""
    model = DigitsCNN() if model is None else model
    optimizer = optimizer_class(model.parameters(), lr=learning_rate, weight_decay=weight_decay)
    steps_per_epoch = -(-len(train_x) // BATCH_SIZE)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, epochs * steps_per_epoch)
    loss_function = nn.CrossEntropyLoss()
    images, labels = torch.from_numpy(train_x), torch.from_numpy(train_y)
    shuffler = torch.Generator().manual_seed(SEED)
    for epoch in range(epochs):
        model.train()
        order = torch.randperm(len(images), generator=shuffler)
        total = 0.0
        for start in range(0, len(images), BATCH_SIZE):
            batch = order[start : start + BATCH_SIZE]
            optimizer.zero_grad()
            loss = loss_function(model(images[batch]), labels[batch])
            loss.backward()
            optimizer.step()
            schedule.step()
            total += loss.item() * len(batch)
        if epoch % 10 == 9 or epoch == epochs - 1:
            print(f"epoch {epoch + 1}: loss {total / len(images):.4f}")
    return model.eval()


def export(model: nn.Module, path: Path) -> None:
    model.eval()
    torch.onnx.export(
        model,
        (torch.zeros(1, 1, 8, 8),),
        str(path),
        input_names=[INPUT_NAME],
        output_names=[OUTPUT_NAME],
        opset_version=OPSET,
        dynamo=False,
        # PRESERVE exports the eval-mode model as it is; EVAL (the default) would fold
        # every BatchNormalization into its Conv, leaving fold-batchnorm nothing to fold.
        training=torch.onnx.TrainingMode.PRESERVE,
        # Nothing to fold in this model; folding is also the exporter's advice against
        # with PRESERVE.
        do_constant_folding=False,
    )
    onnx_model = onnx.load(str(path))
    onnx.checker.check_model(onnx_model, full_check=True)
    kinds = [node.op_type for node in onnx_model.graph.node]
    assert kinds.count("BatchNormalization") == 3, kinds
    print("ONNX nodes:", kinds)


def onnxruntime_predictions(path: Path, images: np.ndarray) -> np.ndarray:
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return np.array(
        [
            session.run([OUTPUT_NAME], {INPUT_NAME: images[i : i + 1]})[0].argmax(1)[0]
            for i in range(len(images))
        ]
    )


def main() -> None:
    print(versions())
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    train_x, test_x, train_y, test_y = split()
    print(f"train {len(train_x)} images, test {len(test_x)} images")

    model = train(train_x, train_y)
    train_accuracy = accuracy(model, train_x, train_y)
    test_accuracy = accuracy(model, test_x, test_y)
    print(f"torch: train accuracy {train_accuracy:.4f}, test accuracy {test_accuracy:.4f}")
    if test_accuracy < MIN_ACCURACY:
        sys.exit(f"test accuracy {test_accuracy:.4f} is below {MIN_ACCURACY}")

    model_path = HERE / "digits_cnn.onnx"
    export(model, model_path)
    torch_predictions = predict(model, test_x)
    ort_predictions = onnxruntime_predictions(model_path, test_x)
    ort_accuracy = float((ort_predictions == test_y).mean())
    print(f"onnxruntime: test accuracy {ort_accuracy:.4f}")
    if not np.array_equal(ort_predictions, torch_predictions):
        sys.exit("onnxruntime's predictions differ from torch's")

    np.savez_compressed(HERE / "digits_test.npz", images=test_x, labels=test_y)
    calibration_order = np.random.default_rng(SEED).permutation(len(train_x))
    calibration = train_x[calibration_order[:CALIBRATION_SAMPLES]]
    np.savez_compressed(HERE / "digits_calibration.npz", **{INPUT_NAME: calibration})
    for name in ("digits_cnn.onnx", "digits_test.npz", "digits_calibration.npz"):
        print(f"wrote {name}: {(HERE / name).stat().st_size} bytes")


if __name__ == "__main__":
    main()
