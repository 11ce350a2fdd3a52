"""Benchmark: streamed frames on one core and on several, on the shared int8 TFLite models.

    .venv/bin/python bench/bench_stream_cores.py [--models mobilenet_v2_int8,resnet50_int8]
        [--one edge-2tops] [--several edge-2tops-2c] [--frames 8]

Each model is compiled (`compile_model`, `--partition support`, `--keep-inputs`: the
input keeps its buffer, so that the next frame's input can be placed while a frame
runs) three ways: for the one-core target; for its several-core variant with layers
split across the cores where the planner finds that faster (the default); and for
the several-core variant with every layer on one core (`--layer-cores 1`), whose
frames then take turns on the cores. Each program's `--frames` frames are timed by
the stream model (irc/sim/streaming.py, `stream_timing`), and the bench prints one
frame's cycles, the stream's frames per second and its latency percentiles, and the
throughput against one core. The figures are simulated: they do not depend on the
machine. Figures go to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from irc.driver.pipeline import CompileOptions, compile_model
from irc.sim.run import Simulator
from irc.sim.streaming import stream_timing

MODELS = Path(__file__).resolve().parents[2] / "shared" / "models"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="mobilenet_v2_int8,resnet50_int8")
    parser.add_argument("--one", default="edge-2tops")
    parser.add_argument("--several", default="edge-2tops-2c")
    parser.add_argument("--frames", type=int, default=8)
    args = parser.parse_args()
    print(
        f"| model | compiled for | one frame (cycles) | {args.frames} frames: FPS | "
        f"latency p50 / p99 (ms) | FPS against one core |"
    )
    print("|---|---|---:|---:|---|---:|")
    ways = [
        (args.one, 0, f"{args.one}"),
        (args.several, 0, f"{args.several}, layers split where faster"),
        (args.several, 1, f"{args.several}, a layer on one core, frames taking turns on cores"),
    ]
    for name in args.models.split(","):
        baseline = 0.0
        for target, layer_cores, label in ways:
            options = CompileOptions(
                target=target, partition="support", layer_cores=layer_cores, keep_inputs=True
            )
            result = compile_model(MODELS / f"{name}.tflite", options)
            program = Simulator(result.module, result.target).functions.program
            assert program is not None
            timing = stream_timing(program, args.frames)
            latency = timing.latency_percentiles((50, 99))
            baseline = baseline or timing.fps
            if timing.turns > 1:
                label += f" ({timing.turns})"
            print(
                f"| {name} | {label} | {timing.single_frame_cycles:,} | {timing.fps:.1f} | "
                f"{latency[50] * 1e3:.3f} / {latency[99] * 1e3:.3f} | "
                f"{timing.fps / baseline:.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
