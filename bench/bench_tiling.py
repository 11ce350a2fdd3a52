"""Measurement: planning and lowering the light models to the tile level, and running it.

    .venv/bin/python bench/bench_tiling.py [--models a,b] [--target npu-demo]

For each light model in int8 (irc's own flow, `quantize_with_irc`), prints:
the time `plan-tiles`, `plan-ddr` and `lower-to-tile` take; the tile-level program's
size (ops, loop bodies) and the layers left on tensors; the planned cycles against
the sum of the layers' lower bounds, the peak SRAM, the DDR arena against the naive
sum, the tensors channel alignment padded; and the interpreter's time for the `qnn`
program and for the tiled one on the same input, checking they agree bit for bit.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from xdsl.dialects.func import FuncOp

from irc.backend import lower_function, plan_memory
from irc.diagnostics import collect_diagnostics
from irc.interp import run_function
from irc.targets import load_target
from irc.testing.quantized import calibration_samples, materialized_light_model, quantize_with_irc
from irc.testing.reference import random_inputs
from irc.transforms.plan_tiles import plan_module

MODELS = (
    "bvlc_alexnet,densenet121,inception_v1,inception_v2,resnet50,shufflenet,squeezenet,"
    "vgg19,zfnet512"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=MODELS)
    parser.add_argument("--target", default="npu-demo")
    args = parser.parse_args()
    target = load_target(args.target)
    print(
        f"{'model':<14} {'plan s':>7} {'ddr s':>6} {'lower s':>8} {'ops':>7} {'bodies':>7} "
        f"{'Mcycles':>8} {'bound':>6} {'SRAM KiB':>9} {'arena MB':>9} {'naive MB':>9} "
        f"{'padded':>6} {'qnn s':>6} {'tile s':>7} {'exact':>5}  on tensors"
    )
    for name in args.models.split(","):
        model = materialized_light_model(name)
        module = quantize_with_irc(model, calibration_samples(model))
        inputs = random_inputs(model, seed=0)
        start = time.perf_counter()
        expected = run_function(module, inputs)
        qnn_seconds = time.perf_counter() - start
        function = next(op for op in module.ops if isinstance(op, FuncOp))
        with collect_diagnostics():
            start = time.perf_counter()
            report = plan_module(module, target)
            plan_seconds = time.perf_counter() - start
            start = time.perf_counter()
            memory, _ = plan_memory(function, target)
            ddr_seconds = time.perf_counter() - start
            start = time.perf_counter()
            stats = lower_function(function, target)
            lower_seconds = time.perf_counter() - start
        ops = sum(1 for _ in module.walk())
        start = time.perf_counter()
        actual = run_function(module, inputs)
        tile_seconds = time.perf_counter() - start
        exact = all(np.array_equal(actual[key], value) for key, value in expected.items())
        kept = ", ".join(f"{op} x{count}" for op, count in sorted(stats.kept.items()))
        print(
            f"{name:<14} {plan_seconds:>7.2f} {ddr_seconds:>6.2f} {lower_seconds:>8.2f} "
            f"{ops:>7} {stats.loops:>7} {report.cycles / 1e6:>8.2f} "
            f"{report.lower_bound / report.cycles:>6.0%} {report.peak_sram / 1024:>9.0f} "
            f"{memory.arena_bytes / 1e6:>9.1f} {memory.naive_bytes / 1e6:>9.1f} "
            f"{sum(choice.padded for choice in report.alignments):>6} "
            f"{qnn_seconds:>6.2f} {tile_seconds:>7.2f} {'yes' if exact else 'NO':>5}  {kept}",
            flush=True,
        )


if __name__ == "__main__":
    main()
