"""`make demo`: two real models compiled end to end and run on the simulated NPU.

1. The trained digits CNN (models/digits): `irc-compile` calibrates it on its
   calibration set, quantizes it to int8, tiles it, plans its memory, lowers it to the
   command stream and writes the package (`build/demo/digits/`) with its reports; the
   runtime (`irc.runtime.Session`) then classifies the 450 held-out test images on the
   simulator, and the accuracy is compared with the float model in onnxruntime.
2. ResNet-50 (the light model of the onnx package, with seeded random weights):
   `irc-compile` to `build/demo/resnet50/`; `irc-run` runs the package on a random
   input, with the cycles of every layer; the runtime streams 8 frames through it
   (frame k+1's input transfers overlapping frame k's compute): throughput and
   latency.

Every command is printed before it runs. The reports are `report.md`, `layers.csv`,
`trace.json` (for Perfetto or chrome://tracing) and the PNG plots in each package
directory.
"""

from __future__ import annotations

import numpy as np
import onnx
from steps import BIN, BUILD, ROOT, step

from irc.testing.models import materialize_light_model

DIGITS = ROOT / "models" / "digits"


def digits() -> None:
    """The digits CNN: compile, then classify the test set on the simulated NPU."""
    from irc.importers.reference import run_onnxruntime
    from irc.runtime import Session

    package = BUILD / "digits"
    step(
        BIN / "irc-compile", DIGITS / "digits_cnn.onnx", "-o", package,
        "--calibration-data", DIGITS / "digits_calibration.npz",
    )  # fmt: skip
    test = np.load(DIGITS / "digits_test.npz")
    images, labels = test["images"], test["labels"]
    session = Session(package)
    model = onnx.load(DIGITS / "digits_cnn.onnx")
    npu_right = float_right = 0
    for image, label in zip(images, labels):
        image = image[np.newaxis]
        npu_right += int(np.argmax(session.run({"image": image})["logits"]) == label)
        reference = run_onnxruntime(model, {"image": image})["logits"]
        float_right += int(np.argmax(reference) == label)
    print(
        f"\ndigits test set ({len(labels)} images) through the package on the simulated NPU: "
        f"int8 accuracy {npu_right / len(labels):.1%} (float in onnxruntime: "
        f"{float_right / len(labels):.1%}); {session.report.cycles:,} cycles per image"
    )


def resnet50() -> None:
    """ResNet-50: compile, run the package with irc-run, stream frames."""
    from irc.runtime import Session

    model_path = BUILD / "resnet50.onnx"
    onnx.save(materialize_light_model(ROOT / "models" / "resnet50-light.onnx", seed=0), model_path)
    print(f"\nmaterialised ResNet-50 with seeded random weights: {model_path.relative_to(ROOT)}")
    package = BUILD / "resnet50"
    step(BIN / "irc-compile", model_path, "-o", package)
    step(BIN / "irc-run", package, "--random-inputs", "--seed", "0", "--output-dir",
         BUILD / "resnet50-outputs")  # fmt: skip
    session = Session(package)
    info = session.inputs[0]
    rng = np.random.default_rng(1)
    frames = [{info.name: rng.standard_normal(info.shape).astype(info.dtype)} for _ in range(8)]
    streamed = session.stream(frames, keep_outputs=False)
    print(f"\nstreaming ResNet-50 on the simulated NPU: {streamed.summary()}")


def main() -> None:
    BUILD.mkdir(parents=True, exist_ok=True)
    digits()
    resnet50()
    print(
        "\npackages and reports: build/demo/digits/ and build/demo/resnet50/ "
        "(report.md, layers.csv, trace.json, timeline.png, layers.png)"
    )


if __name__ == "__main__":
    main()
