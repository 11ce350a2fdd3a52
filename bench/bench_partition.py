"""Measurement: `partition{mode=support}` against `partition{mode=cost}` in the simulator.

    .venv/bin/python bench/bench_partition.py [--targets npu-demo,edge-2tops] [--models ...]

Each model of the test suite (the light models with seeded weights, the bundled digits
CNN, the attention block, a MobileNetV2-style network) is compiled by
`irc.driver.pipeline.compile_model` twice per target, with `--partition support` and
`--partition cost`, and the package's simulated cycles are printed side by side with
the number of host ops of each. Simulated cycles are deterministic: the figures do not
depend on the machine. `cost` is the default of `irc-compile` while it is never
slower than `support` by more than its estimates' error (docs/partitioning.md and
docs/benchmarks.md record the run and the exceptions).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

OTHERS = ["digits", "attention", "mobilenet_v2_style"]


def light_names() -> list[str]:
    """The light models shipped with onnx, by name (resnet50, ...)."""
    from irc.testing.models import light_models

    return [path.stem.removeprefix("light_") for path in light_models()]


def model_path(name: str, directory: Path) -> tuple[Path, Path | None]:
    """The float ONNX model `name` and its calibration data (None: random samples)."""
    import onnx

    if name == "digits":
        digits = ROOT / "models" / "digits"
        return digits / "digits_cnn.onnx", digits / "digits_calibration.npz"
    if name == "attention":
        from irc.testing.networks import attention_block

        model = attention_block()
    elif name == "mobilenet_v2_style":
        from irc.testing.networks import mobilenet_v2_style

        model = mobilenet_v2_style()
    else:
        from irc.testing.quantized import materialized_light_model

        model = materialized_light_model(name)
    path = directory / f"{name}.onnx"
    onnx.save(model, path)
    return path, None


def main() -> None:
    from irc.diagnostics import collect_diagnostics
    from irc.driver.pipeline import CompileOptions, compile_model

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="npu-demo,edge-2tops")
    parser.add_argument("--models", default=",".join(OTHERS + light_names()))
    args = parser.parse_args()
    slower = []
    print(f"{'model':<20} {'target':<12} {'support':>14} {'cost':>14} {'cost/support':>13}")
    with tempfile.TemporaryDirectory(prefix="irc-bench-") as work:
        for name in args.models.split(","):
            path, data = model_path(name, Path(work))
            for target in args.targets.split(","):
                figures = {}
                for mode in ("support", "cost"):
                    options = CompileOptions(target=target, partition=mode, calibration_data=data)
                    with collect_diagnostics():
                        result = compile_model(path, options)
                    host = len(result.partition.cpu_ops)
                    figures[mode] = (result.simulation.cycles, host)
                (support, support_host), (cost, cost_host) = figures["support"], figures["cost"]
                print(
                    f"{name:<20} {target:<12} {support:>10,} ({support_host:>2}) "
                    f"{cost:>10,} ({cost_host:>2}) {cost / support:>12.3f}",
                    flush=True,
                )
                if cost > support:
                    slower.append((name, target))
    print("\n(n): ops on the host")
    if slower:
        print("cost is slower than support on: " + ", ".join(f"{m} ({t})" for m, t in slower))
    else:
        print("cost is never slower than support on these models")


if __name__ == "__main__":
    main()
