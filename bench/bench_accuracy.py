"""Measurement: the test accuracy of irc's trained models in float, in int8, and as the
package the NPU runs, with the layers whose quantization loses the most.

    .venv/bin/python bench/bench_accuracy.py [--target edge-2tops]

For the digits CNN and the digits transformer (models/digits/, trained on
scikit-learn's digits; the same 450 test images and 100 calibration images):

1. float: irc's interpreter on the imported model (onnxruntime predicts the same;
   tests/test_digits_model.py, tests/test_digits_transformer.py);
2. int8: `graph-opt`, calibrated (min-max) on the 100 calibration images, `quantize`,
   `lower-to-qnn`: the integer module in irc's interpreter;
3. int16: the same with `quantize{activations=int16}`: 16-bit activations, 8-bit
   weights; the GELU a 16-bit interpolated table, the softmax in 16-bit integers
   (the layer norms, without a 16-bit integer form, stay float between 16-bit casts);
4. package: `compile_model` for `--target` (int8, calibrated on the same images), every
   test image run by `irc.runtime.Session` on the simulator;
5. the compile's layer-wise error report: the three layers of lowest SQNR.

It prints a Markdown table for docs/quantization.md.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

MODELS = {
    "digits CNN": ROOT / "models" / "digits" / "digits_cnn.onnx",
    "digits transformer (ViT)": ROOT / "models" / "digits" / "digits_vit.onnx",
}


def main() -> None:
    from test_digits_model import (
        CALIBRATION_SET,
        INPUT_NAME,
        OUTPUT_NAME,
        TEST_SET,
        accuracy,
        predict,
        run_pipeline,
    )

    from irc.codegen.package import stage_files
    from irc.diagnostics import collect_diagnostics
    from irc.driver.pipeline import CompileOptions, compile_model
    from irc.fileio import StagedOutputs
    from irc.importers.onnx import import_model
    from irc.quantize.calibration import calibrate, load_samples
    from irc.runtime import Session

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="edge-2tops")
    args = parser.parse_args()
    with np.load(TEST_SET) as data:
        images, labels = data["images"], data["labels"]
    rows = []
    for name, path in MODELS.items():
        start = time.perf_counter()
        module = import_model(path)
        float_accuracy = accuracy(predict(module, images), labels)
        run_pipeline(module, "graph-opt")
        stats = calibrate(module, load_samples(CALIBRATION_SET, module))
        with tempfile.TemporaryDirectory() as directory:
            stats_path = Path(directory) / "calibration.json"
            stats.save(stats_path)
            run_pipeline(module, f'quantize{{stats="{stats_path}"}},lower-to-qnn')
            int8_accuracy = accuracy(predict(module, images), labels)
            sixteen = import_model(path)
            run_pipeline(sixteen, "graph-opt")
            run_pipeline(
                sixteen, f'quantize{{stats="{stats_path}" activations=int16}},lower-to-qnn'
            )
            int16_accuracy = accuracy(predict(sixteen, images), labels)
            options = CompileOptions(
                target=args.target, calibration_data=CALIBRATION_SET, calibration_samples=100
            )
            with collect_diagnostics():
                result = compile_model(path, options)
            package = Path(directory) / "package"
            with StagedOutputs() as staged:
                stage_files(result.files, package, staged)
            session = Session(package)
            predictions = np.array(
                [
                    int(session.run({INPUT_NAME: images[i : i + 1]})[OUTPUT_NAME].argmax())
                    for i in range(len(images))
                ]
            )
        package_accuracy = accuracy(predictions, labels)
        assert result.errors is not None
        computed = [tensor for tensor in result.errors.tensors if not tensor.is_weight]
        layers = sorted(computed, key=lambda tensor: tensor.sqnr_db)[:3]
        worst = ", ".join(f"`{t.key}` ({t.op}) {t.sqnr_db:.1f} dB" for t in layers)
        rows.append(
            f"| {name} | {float_accuracy:.2f}% | {int8_accuracy:.2f}% | "
            f"{int16_accuracy:.2f}% | {package_accuracy:.2f}% | {worst} |"
        )
        print(f"{name}: {time.perf_counter() - start:.1f} s", file=sys.stderr)
    print(
        f"| model | float | int8 (qnn) | int16 activations (qnn) | int8 package on "
        f"{args.target} | lowest SQNR (int8) |"
    )
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
