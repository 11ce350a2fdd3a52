"""Benchmark: import and interpret ResNet-50 (224x224) beside onnxruntime.

    .venv/bin/python bench/bench_resnet50.py [--repeat N] [--threads T]

Prints, for the bundled light ResNet-50 with seeded random weights: ONNX import time,
textual round trip (print with a sidecar, parse back), reference-interpreter time per
inference, and onnxruntime's time per inference on the same input, with the maximum
difference between the two. Figures go to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np
import onnxruntime

from irc.importers.onnx import import_model
from irc.interp import run_function
from irc.ir.context import make_context
from irc.ir.io import PrintOptions, parse_module, print_module
from irc.ir.weights import WeightsMode
from irc.testing.models import materialize_light_model

MODEL = Path(__file__).resolve().parent.parent / "models" / "resnet50-light.onnx"


def timed(function, repeat: int) -> tuple[float, object]:
    """Median wall time in seconds over `repeat` calls, and the last result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (median)")
    parser.add_argument("--threads", type=int, default=2, help="onnxruntime intra-op threads")
    args = parser.parse_args()

    model = materialize_light_model(MODEL, seed=0)
    rng = np.random.default_rng(0)
    data = rng.standard_normal((1, 3, 224, 224)).astype(np.float32)
    input_name = model.graph.input[0].name

    import_seconds, module = timed(lambda: import_model(model), args.repeat)
    ops = sum(1 for _ in module.walk())

    round_trips = {}
    for mode in (WeightsMode.ELIDE, WeightsMode.RESOURCE):

        def print_text(mode: WeightsMode = mode) -> str:
            stream = io.StringIO()
            print_module(module, stream, PrintOptions(weights=mode))
            return stream.getvalue()

        print_seconds, text = timed(print_text, args.repeat)
        parse_seconds, _ = timed(
            lambda text=text: parse_module(text, make_context(), "resnet50.mlir"), args.repeat
        )
        round_trips[mode] = (print_seconds, parse_seconds, len(text))  # type: ignore[arg-type]

    run_function(module, {input_name: data})  # warm-up: first-touch of weights
    interp_seconds, outputs = timed(lambda: run_function(module, {input_name: data}), args.repeat)

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = args.threads
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    session.run(None, {input_name: data})
    ort_seconds, expected = timed(lambda: session.run(None, {input_name: data}), args.repeat)

    actual = next(iter(outputs.values()))  # type: ignore[union-attr]
    difference = float(np.max(np.abs(actual - expected[0])))  # type: ignore[index]
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"numpy {np.__version__}, onnxruntime {onnxruntime.__version__}"
    )
    print(f"model: light ResNet-50, 1x3x224x224, {ops} ops in the imported module")
    rows = [("import (ONNX -> nn)", f"{import_seconds * 1000:8.1f} ms")]
    for mode, (print_seconds, parse_seconds, size) in round_trips.items():
        rows.append(
            (f"print, weights={mode}", f"{print_seconds * 1000:8.1f} ms  ({size / 2**20:.2f} MiB)")
        )
        rows.append((f"parse, weights={mode}", f"{parse_seconds * 1000:8.1f} ms"))
    rows += [
        ("irc interpreter, 1 image", f"{interp_seconds * 1000:8.1f} ms"),
        (f"onnxruntime, {args.threads} threads", f"{ort_seconds * 1000:8.1f} ms"),
        ("interpreter / onnxruntime", f"{interp_seconds / ort_seconds:8.1f} x"),
        ("max |irc - onnxruntime|", f"{difference:8.2g}"),
    ]
    for label, value in rows:
        print(f"{label:<28}{value}")


if __name__ == "__main__":
    main()
