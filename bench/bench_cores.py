"""Benchmark: one core against several, on the shared int8 TFLite models.

    .venv/bin/python bench/bench_cores.py [--models mobilenet_v2_int8,resnet50_int8]
        [--one edge-2tops] [--several edge-2tops-2c] [--compute 0.75]

Each model is compiled (`compile_model`, `--partition support` as irc-compile would,
the package simulated) for a one-core target and for its several-core variant, and
prints the simulated cycles of both and their ratio: over the whole run, and over
the layers the one-core run keeps the MAC array busiest (compute bound: its MAC array
busy at least `--compute` of the layer's span, 75% by default; a cascade's members
share their span, so a cascade counts as one), with the strategy each got on
several cores (bit-exactness: bench/bench_tflite_exact.py --target edge-2tops-2c).
The simulated figures do not depend on the machine. Figures go to
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from irc.driver.pipeline import CompileOptions, CompileResult, compile_model
from irc.driver.report import layer_rows

MODELS = Path(__file__).resolve().parents[2] / "shared" / "models"


def groups(result: CompileResult) -> dict[tuple[str, ...], tuple[int, int]]:
    """Each layer, or each cascade as one, with the cycles it adds to the run (from
    the end of the layers before it in program order to the end of its own commands:
    a layer's loads started early, beside the layer before, are not counted twice)
    and its MAC array's busy cycles."""
    members: dict[str, tuple[str, ...]] = {}
    if result.tiling is not None:
        for cascade in result.tiling.cascades:
            for name in cascade.names:
                members[name] = tuple(cascade.names)
    figures: dict[tuple[str, ...], tuple[int, int]] = {}
    for row in layer_rows(result):
        key = members.get(row.name, (row.name,))
        added, mac = figures.get(key, (0, 0))
        figures[key] = (added + row.added_cycles, mac + row.busy.get("mac", 0))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="mobilenet_v2_int8,resnet50_int8")
    parser.add_argument("--one", default="edge-2tops")
    parser.add_argument("--several", default="edge-2tops-2c")
    parser.add_argument("--compute", type=float, default=0.75)
    args = parser.parse_args()
    print(
        f"| model | {args.one} cycles | {args.several} cycles | speedup | compute-bound "
        f"layers (one core) | their cycles, one core | several | speedup |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    details = []
    for name in args.models.split(","):
        path = MODELS / f"{name}.tflite"
        results = [
            compile_model(path, CompileOptions(target=target, partition="support"))
            for target in (args.one, args.several)
        ]
        one, several = results
        first, second = groups(one), groups(several)
        bound = [
            key
            for key, (added, mac) in first.items()
            if added and mac >= args.compute * added and key in second
        ]
        cycles_one = sum(first[key][0] for key in bound)
        cycles_several = sum(second[key][0] for key in bound)
        total_one, total_several = one.simulation.cycles, several.simulation.cycles
        print(
            f"| {name} | {total_one:,} | {total_several:,} | {total_one / total_several:.2f} "
            f"| {len(bound)} | {cycles_one:,} | {cycles_several:,} | "
            f"{cycles_one / cycles_several if cycles_several else float('nan'):.2f} |"
        )
        rows = {row.name: row for row in layer_rows(several)}
        for key in bound:
            row = rows.get(key[-1])
            details.append(
                f"  {name}: {' -> '.join(k.rsplit('/', 2)[-2] for k in key)[:90]}: "
                f"{first[key][0]:,} -> {second[key][0]:,} "
                f"cycles on {row.cores if row is not None else '?'} cores"
            )
    print("\n".join(["", "compute-bound layers:", *details]))


if __name__ == "__main__":
    main()
