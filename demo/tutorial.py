"""`make tutorial`: the pipeline stage by stage on the bundled ResNet-50, one tool at a time.

1. materialise the bundled light ResNet-50 with seeded random weights (an ONNX file);
2. `irc-import-onnx`: ONNX -> `nn` IR (weights in a sidecar .npz beside the .mlir);
3. `irc-opt`: the graph-level pipeline (`graph-opt`: constant folding, batch-norm
   folding, NHWC layout with transpose cancellation, activation fusion), every pass
   checked numerically (`--verify-each-numerics`);
4. `irc-run`: run the optimised IR with the reference interpreter on random inputs,
   compare with onnxruntime on the same inputs, and write the outputs as .npy;
5. `irc-quantize`: int8 post-training quantization, calibrated on a few seeded
   random inputs (a stand-in for real data), down to the integer `qnn` ops;
6. `irc-opt --target=npu-demo`: tile every layer under the SRAM (`plan-tiles`, with
   its per-layer report), place every tensor in DDR (`plan-ddr`) and lower to loops
   of DMA copies and tile compute (`lower-to-tile`);
7. `irc-run` on the int8 and on the tiled IR: the same outputs, bit for bit;
8. `irc-opt -p lower-to-npu`: the explicit command stream (DMA, MAC, vector commands,
   signals and waits, double buffered), and `irc-run` of it on the NPU simulator:
   the same outputs again, the cycles per engine and per layer, and a timeline
   (`build/demo/trace.json`, for Perfetto or chrome://tracing).

Every command is printed before it runs, so the demo doubles as a tutorial.
"""

from __future__ import annotations

import sys

import numpy as np
import onnx
from steps import BIN, BUILD, ROOT, step

from irc.testing.models import materialize_light_model

CALIBRATION_SAMPLES = 4


def main() -> None:
    BUILD.mkdir(parents=True, exist_ok=True)
    model_path = BUILD / "resnet50.onnx"
    model = materialize_light_model(ROOT / "models" / "resnet50-light.onnx", seed=0)
    onnx.save(model, model_path)
    print(f"materialised ResNet-50 with seeded random weights: {model_path.relative_to(ROOT)}")

    imported = BUILD / "resnet50.mlir"
    optimized = BUILD / "resnet50.opt.mlir"
    step(BIN / "irc-import-onnx", model_path, "-o", imported)
    step(
        BIN / "irc-opt",
        imported,
        "--pass-pipeline=builtin.module(graph-opt)",
        "--verify-each-numerics",
        "--mlir-timing",
        "-o",
        optimized,
    )
    step(
        BIN / "irc-run",
        optimized,
        "--random-inputs",
        "--seed",
        "0",
        "--compare-onnxruntime",
        model_path,
        "--output-dir",
        BUILD / "outputs",
    )

    calibration = BUILD / "calibration.npz"
    rng = np.random.default_rng(100)
    samples = rng.standard_normal((CALIBRATION_SAMPLES, 1, 3, 224, 224)).astype(np.float32)
    np.savez(calibration, **{model.graph.input[0].name: samples})
    int8 = BUILD / "resnet50.int8.mlir"
    tiled = BUILD / "resnet50.tile.mlir"
    report = BUILD / "tiles.txt"
    step(
        BIN / "irc-quantize", model_path, "--data", calibration, "--no-progress",
        "--mlir-print-debuginfo", "-o", int8,  # the ONNX node names stay on the ops
    )  # fmt: skip
    step(
        BIN / "irc-opt",
        int8,
        "--target=npu-demo",
        # The commands run in the repository, so the report path is relative to it.
        f"--pass-pipeline=builtin.module(plan-tiles{{report={report.relative_to(ROOT)}}},"
        "plan-ddr,lower-to-tile)",
        "--mlir-print-debuginfo",  # each layer's ops keep its ONNX name
        "-o",
        tiled,
    )
    print(report.read_text().splitlines()[0])
    for program, outputs in ((int8, "outputs-int8"), (tiled, "outputs-tile")):
        step(BIN / "irc-run", program, "--random-inputs", "--seed", "0",
             "--output-dir", BUILD / outputs)  # fmt: skip
    same = all(
        np.array_equal(np.load(path), np.load(BUILD / "outputs-tile" / path.name))
        for path in sorted((BUILD / "outputs-int8").glob("*.npy"))
    )
    print(f"\nint8 and tile level outputs identical: {same}")
    if not same:
        sys.exit(1)

    stream = BUILD / "resnet50.npu.mlir"
    trace = BUILD / "trace.json"
    step(BIN / "irc-opt", tiled, "--target=npu-demo", "-p", "lower-to-npu",
         "--mlir-print-debuginfo", "-o", stream)  # fmt: skip
    step(BIN / "irc-run", stream, "--random-inputs", "--seed", "0", "--layers",
         "--trace", trace, "--output-dir", BUILD / "outputs-npu")  # fmt: skip
    same = all(
        np.array_equal(np.load(path), np.load(BUILD / "outputs-npu" / path.name))
        for path in sorted((BUILD / "outputs-int8").glob("*.npy"))
    )
    print(f"\nint8 and simulated NPU outputs identical: {same}")
    if not same:
        sys.exit(1)
    print(f"\nIR: {imported.relative_to(ROOT)} (weights in {imported.stem}.weights.npz),")
    print(
        f"    {int8.relative_to(ROOT)}, {tiled.relative_to(ROOT)}, {stream.relative_to(ROOT)};"
        f" tiling report: build/demo/tiles.txt; timeline: {trace.relative_to(ROOT)}"
    )


if __name__ == "__main__":
    main()
