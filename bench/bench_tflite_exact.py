"""Measurement: irc's compiled package against LiteRT's built-in int8 kernels, tensor by
tensor, on the shared int8 TFLite models (Keras MobileNetV2 and ResNet50 with random
weights, full-int8).

    .venv/bin/python bench/bench_tflite_exact.py [--target edge-2tops] [--seeds 2]
        [--models /work/shared/models/mobilenet_v2_int8.tflite ...]
    .venv/bin/python bench/bench_tflite_exact.py --rules

For each model and seed: the same seeded random int8 input goes to LiteRT (its
built-in kernels, no XNNPACK, every tensor kept: irc.testing.litert) and to irc, which
imports the model (irc/importers/tflite.py), compiles it as `irc-compile` does for
`--target` and runs the command stream on the simulator, capturing every layer (the
capture of `irc-run --compare`); the `qnn` reference interpreter is run too. It prints,
per model, how many of the tensors the operators compute are compared and bit-exact
at each level, where each layer ran, the largest difference of any tensor that is
not bit-exact, and the time each step took; a table for docs/benchmarks.md at the end.
Not part of the test suite (the models take seconds to minutes each).

With `--rules`, the evidence for each rounding rule instead: on the tie models of
irc/testing/tflite_models.py, the imported model with the rule of one kernel replaced
by each of the four rules, and how many elements then differ from LiteRT (three seeds).
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
    parser.add_argument("--rules", action="store_true", help="the evidence for each rounding")
    args = parser.parse_args()
    if args.rules:
        rules()
        return

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


def rules() -> None:
    """Per tie model and kernel: the elements that differ from LiteRT under each rule."""
    from xdsl.dialects.builtin import StringAttr

    from irc.dialects import qnn
    from irc.importers.tflite import import_tflite
    from irc.ir.fixed_point import ROUNDINGS
    from irc.testing import litert, tflite_models

    cases = [
        ("conv_ties", "CONV_2D (ruy)", qnn.RequantizeOp, None),
        (
            "depthwise_ties_tail",
            "DEPTHWISE_CONV_2D, vector channels",
            qnn.RequantizeOp,
            "double_up",
        ),
        (
            "depthwise_ties_tail",
            "DEPTHWISE_CONV_2D, tail channels",
            qnn.RequantizeOp,
            "double_away",
        ),
        ("add_ties", "ADD (the sum's rescale)", qnn.AddOp, None),
        ("mul", "MUL", qnn.MulOp, None),
        ("mean", "MEAN", qnn.GlobalAveragePoolOp, None),
        (
            "mean_keep_dims_ties_tail",
            "MEAN keep_dims, vector channels",
            qnn.GlobalAveragePoolOp,
            "double_up",
        ),
        (
            "mean_keep_dims_ties_tail",
            "MEAN keep_dims, tail channels",
            qnn.GlobalAveragePoolOp,
            "double_away",
        ),
        ("quantize_int8", "QUANTIZE (int8)", qnn.RequantizeOp, None),
    ]
    print(f"| model | kernel | elements | {' | '.join(ROUNDINGS)} |")
    print("|---|---|---:|" + "---:|" * len(ROUNDINGS))
    for name, kernel, op_class, which in cases:
        model = tflite_models.SINGLE_OP_MODELS[name](0)
        computed = {i for op in litert.model_info(model).operators for i in op.outputs}
        runs = [litert.random_inputs(model, seed) for seed in range(3)]
        expected = [litert.litert_tensors(model, inputs) for inputs in runs]
        counts = []
        for rule in ROUNDINGS:
            module = import_tflite(model)
            for op in module.walk():
                if isinstance(op, op_class) and which in (None, op.props().str("rounding")):
                    op.properties["rounding"] = StringAttr(rule)
            differing = 0
            for inputs, tensors in zip(runs, expected):
                mismatches = litert.compare(model, litert.qnn_tensors(module, inputs), tensors)[1]
                differing += sum(m.elements for m in mismatches)
            counts.append(str(differing))
        elements = sum(np.asarray(tensors[i]).size for tensors in expected for i in computed)
        print(f"| `{name}` | {kernel} | {elements} | {' | '.join(counts)} |")


def _output_names(model: bytes, info: object) -> list[str]:
    from irc.importers.tflite import tensor_locations

    locations = tensor_locations(model)
    return [locations[index] for index in info.outputs]  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
