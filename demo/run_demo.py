"""`make demo`: the main job on the bundled ResNet-50, with irc's command-line tools.

1. materialise the bundled light ResNet-50 with seeded random weights (an ONNX file);
2. `irc-import-onnx`: ONNX -> `nn` IR (weights in a sidecar .npz beside the .mlir);
3. `irc-opt`: the graph-level pipeline (`graph-opt`: constant folding, batch-norm
   folding, NHWC layout with transpose cancellation, activation fusion), every pass
   checked numerically (`--verify-each-numerics`);
4. `irc-run`: run the optimised IR with the reference interpreter on random inputs,
   compare with onnxruntime on the same inputs, and write the outputs as .npy.

Every command is printed before it runs, so the demo doubles as a tutorial.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import onnx

from irc.testing.models import materialize_light_model

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build" / "demo"
BIN = Path(sys.executable).parent


def step(*command: str | Path) -> None:
    """Print a command as a user would type it, run it, stop the demo if it fails."""
    words = [str(word) for word in command]
    shown = [
        Path(words[0]).name,
        *(str(Path(w).relative_to(ROOT)) if w.startswith(str(ROOT)) else w for w in words[1:]),
    ]
    print(f"\n$ {shlex.join(shown)}", flush=True)
    completed = subprocess.run(words, cwd=ROOT, check=False)
    if completed.returncode != 0:
        sys.exit(completed.returncode)


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
    print(f"\nIR: {imported.relative_to(ROOT)} (weights in {imported.stem}.weights.npz)")


if __name__ == "__main__":
    main()
