"""Benchmark: cascades on npu-demo, layers apart (-O1) against cascades (-O2).

    .venv/bin/python bench/bench_cascades.py [--models resnet50,squeezenet] [--target npu-demo] [--check]

For each light model, irc's own int8 version (`quantize_with_irc`, as
bench/bench_simulator.py) is planned without and with cascades (`plan-tiles
{cascades=...}`), lowered to the command stream and simulated: the simulated cycles,
the bytes read from and written to the system memories, the planner's estimate, the
sum of the layers' lower bounds and the network's bound (irc.tiling.planner.
network_bound), the cascades formed and the compile time of the back end (plan-tiles
to the simulator's load). With `--check` each stream is also run on seeded inputs
against the `qnn` interpreter (bit-exact). The simulated figures do not depend on the
machine; the times do. Figures go to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from xdsl.dialects.func import FuncOp

from irc.backend import lower_function
from irc.diagnostics import collect_diagnostics
from irc.interp import run_function
from irc.sim.run import Simulator
from irc.stream.lowering import StreamLowering
from irc.targets import load_target
from irc.testing.quantized import calibration_samples, materialized_light_model, quantize_with_irc
from irc.testing.reference import random_inputs
from irc.transforms.plan_tiles import plan_module

MIB = 1 << 20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet50")
    parser.add_argument("--target", default="npu-demo")
    parser.add_argument("--check", action="store_true", help="run each stream bit-exactly")
    args = parser.parse_args()
    target = load_target(args.target)
    print(
        f"{'model':<12} {'mode':<9} {'Mcycles':>8} {'read MiB':>9} {'written MiB':>11} "
        f"{'planned':>8} {'layers bound':>12} {'network bound':>13} {'cascades':>8} "
        f"{'back end s':>10} {'exact':>5}"
    )
    for name in args.models.split(","):
        model = materialized_light_model(name)
        quantized = quantize_with_irc(model, calibration_samples(model))
        inputs = random_inputs(model, seed=0)
        expected = run_function(quantized, inputs) if args.check else None
        rows = {}
        for cascades in (False, True):
            module = quantized.clone()
            function = next(op for op in module.ops if isinstance(op, FuncOp))
            start = time.perf_counter()
            with collect_diagnostics():
                report = plan_module(module, target, cascades=cascades)
                lower_function(function, target)
                StreamLowering(module, function, target, double=True).run()
            simulator = Simulator(module, target)
            seconds = time.perf_counter() - start
            exact = "-"
            if expected is not None:
                outputs = simulator.run(inputs)
                exact = (
                    "yes"
                    if all(np.array_equal(outputs[k], expected[k]) for k in expected)
                    else "NO"
                )
            total = simulator.report.total
            network = report.network.cycles if report.network is not None else 0
            rows[cascades] = (simulator.report.cycles, total.ddr_read + total.ddr_written)
            print(
                f"{name:<12} {'cascades' if cascades else 'apart':<9} "
                f"{simulator.report.cycles / 1e6:>8.2f} {total.ddr_read / MIB:>9.2f} "
                f"{total.ddr_written / MIB:>11.2f} {report.cycles / 1e6:>8.2f} "
                f"{report.lower_bound / 1e6:>12.2f} {network / 1e6:>13.2f} "
                f"{len(report.cascades):>8} {seconds:>10.1f} {exact:>5}"
            )
        (cycles_apart, bytes_apart), (cycles, moved) = rows[False], rows[True]
        print(
            f"{name:<12} cascades/apart: cycles {cycles / cycles_apart:.3f}, "
            f"system-memory bytes {moved / bytes_apart:.3f}"
        )


if __name__ == "__main__":
    main()
