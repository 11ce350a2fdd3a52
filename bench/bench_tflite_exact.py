"""Measurement: irc's compiled package against LiteRT's built-in int8 kernels, tensor by
tensor, on the shared int8 TFLite models (Keras MobileNetV2 and ResNet50 with random
weights, full-int8).

    .venv/bin/python bench/bench_tflite_exact.py [--target edge-2tops] [--seeds 2]
        [--models /work/shared/models/mobilenet_v2_int8.tflite ...]

For each model and seed: the same seeded random int8 input goes to LiteRT (its
built-in kernels, no XNNPACK, every tensor kept: irc.testing.litert) and to irc, which
imports the model (irc/importers/tflite.py), compiles it as `irc-compile` does for
`--target` and runs the command stream on the simulator, capturing every layer (the
capture of `irc-run --compare`); the `qnn` reference interpreter is run too. It prints,
per model, how many of the tensors the operators compute are compared and bit-exact
at each level, where each layer ran, the largest difference of any tensor that is
not bit-exact, and the time each step took; a table for docs/benchmarks.md at the end.
Not part of the test suite (the models take seconds to minutes each).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SHARED = Path("/work/shared/models")
DEFAULT_MODELS = [SHARED / "mobilenet_v2_int8.tflite", SHARED / "resnet50_int8.tflite"]


def main() -> None:
    from irc.driver.pipeline import CompileOptions
    from irc.importers.tflite import import_tflite
    from irc.testing import litert

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="edge-2tops")
    parser.add_argument("--seeds", type=int, default=2, help="inputs per model (seeds 0, 1, ...)")
    parser.add_argument("--models", type=Path, nargs="*", default=DEFAULT_MODELS)
    args = parser.parse_args()

    rows = []
    for path in args.models:
        model = path.read_bytes()
        info = litert.model_info(model)
        computed = {i for op in info.operators for i in op.outputs if i >= 0}
        module = import_tflite(model, str(path))
        for seed in range(args.seeds):
            inputs = litert.random_inputs(model, seed)
            start = time.perf_counter()
            expected = litert.litert_tensors(model, inputs)
            litert_seconds = time.perf_counter() - start
            start = time.perf_counter()
            reference = litert.qnn_tensors(module, inputs)
            qnn_seconds = time.perf_counter() - start
            qnn_compared, qnn_bad = litert.compare(model, reference, expected)
            start = time.perf_counter()
            simulated = litert.simulated_tensors(path, CompileOptions(target=args.target), inputs)
            sim_seconds = time.perf_counter() - start
            npu_compared, npu_bad = litert.compare(model, simulated.tensors, expected)
            outputs_exact = all(
                np.array_equal(
                    simulated.outputs[name].reshape(expected[index].shape), expected[index]
                )
                for index, name in zip(info.outputs, _output_names(model, info))
            )
            worst = max((m.largest for m in [*qnn_bad, *npu_bad]), default=0)
            print(
                f"{path.name} seed {seed}: {len(computed)} tensors computed by "
                f"{len(info.operators)} operators; qnn reference {qnn_compared - len(qnn_bad)}"
                f"/{qnn_compared} bit-exact; simulator ({args.target}) "
                f"{npu_compared - len(npu_bad)}/{npu_compared} layers bit-exact "
                f"({len(simulated.on_npu)} on the NPU, "
                f"{npu_compared - len(simulated.on_npu & set(simulated.tensors))} on the host), "
                f"outputs {'bit-exact' if outputs_exact else 'DIFFER'}; largest difference "
                f"{worst:g}; LiteRT {litert_seconds:.2f} s, qnn {qnn_seconds:.1f} s, compile and "
                f"simulate {sim_seconds:.1f} s"
            )
            for mismatch in [*qnn_bad, *npu_bad]:
                print(f"  differs: {mismatch}")
            rows.append(
                (
                    path.name,
                    seed,
                    len(computed),
                    f"{qnn_compared - len(qnn_bad)}/{qnn_compared}",
                    f"{npu_compared - len(npu_bad)}/{npu_compared}",
                    len(simulated.on_npu),
                    "yes" if outputs_exact else "no",
                    worst,
                )
            )
    print()
    print(
        f"| model | seed | tensors | qnn bit-exact | simulator ({args.target}) bit-exact "
        "| layers on the NPU | outputs bit-exact | largest difference |"
    )
    print("|---|---:|---:|---:|---:|---:|---|---:|")
    for row in rows:
        print("| " + " | ".join(str(cell) for cell in row) + " |")


def _output_names(model: bytes, info: object) -> list[str]:
    from irc.importers.tflite import tensor_locations

    locations = tensor_locations(model)
    return [locations[index] for index in info.outputs]  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
