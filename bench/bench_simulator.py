"""Measurement: simulating a model's command stream beside onnxruntime's int8 inference.

    .venv/bin/python bench/bench_simulator.py [--models resnet50,squeezenet] [--runs 3]

For each light model: irc's int8 version (`quantize_with_irc`) is planned, lowered
to the tile level and to the command stream (`lower-to-npu`, timed), then simulated
on npu-demo, functional and timed (the median of `--runs` runs, checked bit-exact
against the `qnn` interpreter); onnxruntime runs its own int8 (QDQ) version of the
same float model with its integer kernels, 2 threads (the median of `--runs` runs
after a warm-up). Prints both times and their ratio (issue 8 asks for at most 20x
on a ResNet-50-class model), the stream's size, and the simulated cycles against
the planner's estimate and the sum of the layers' lower bounds.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
from xdsl.dialects.func import FuncOp

from irc.diagnostics import collect_diagnostics
from irc.interp import run_function
from irc.sim.run import simulate
from irc.stream.lowering import StreamLowering
from irc.targets import Target, load_target
from irc.testing.quantized import (
    _onnxruntime_session,
    calibration_samples,
    materialized_light_model,
    ort_quantized_light_model,
    quantize_with_irc,
)
from irc.testing.reference import random_inputs
from irc.tiling.lowering import lower_function
from irc.transforms.plan_tiles import plan_module

QUANTIZED_MODELS = Path(__file__).resolve().parents[1] / "build" / "quantized-models"
"""Where onnxruntime's quantized models are kept (as for the tests)."""


def _median_seconds(run, runs: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet50,squeezenet")
    parser.add_argument("--target", default="npu-demo")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    target = load_target(args.target)
    print(
        f"{'model':<12} {'lower s':>8} {'commands':>9} {'sim s':>7} {'ort int8 ms':>12} "
        f"{'ratio':>6} {'Mcycles':>8} {'planned':>8} {'bound':>7} {'exact':>5}"
    )
    for name in args.models.split(","):
        print(_measure(name, target, args.runs))


def _measure(name: str, target: Target, runs: int) -> str:
    """One model's line of the table."""
    model = materialized_light_model(name)
    module = quantize_with_irc(model, calibration_samples(model))
    inputs = random_inputs(model, seed=0)
    expected = run_function(module, inputs)
    function = next(op for op in module.ops if isinstance(op, FuncOp))
    with collect_diagnostics():
        report = plan_module(module, target)
        lower_function(function, target)
        start = time.perf_counter()
        stats = StreamLowering(module, function, target, double=True).run()
        lower_seconds = time.perf_counter() - start
    results: list = []
    sim_seconds = _median_seconds(lambda: results.append(simulate(module, inputs, target)), runs)
    outputs, simulated = results[-1]
    exact = all(np.array_equal(outputs[k], expected[k]) for k in expected)

    ort_model = ort_quantized_light_model(name, QUANTIZED_MODELS)
    session = _onnxruntime_session(ort_model.quantized_path, optimize=True)
    names = [output.name for output in session.get_outputs()]  # type: ignore[attr-defined]
    feed = dict(ort_model.inputs[0])
    session.run(names, feed)  # type: ignore[attr-defined]  # warm-up
    ort_seconds = _median_seconds(lambda: session.run(names, feed), max(runs, 10))  # type: ignore[attr-defined]
    return (
        f"{name:<12} {lower_seconds:>8.2f} {sum(stats.commands.values()):>9} "
        f"{sim_seconds:>7.2f} {ort_seconds * 1e3:>12.1f} {sim_seconds / ort_seconds:>5.0f}x "
        f"{simulated.cycles / 1e6:>8.2f} {report.cycles / 1e6:>8.2f} "
        f"{report.lower_bound / 1e6:>7.2f} {'yes' if exact else 'NO':>5}"
    )


if __name__ == "__main__":
    main()
