"""irc beside Arm's Vela on the same int8 TFLite files and the same Ethos-U machines.

    .venv/bin/python bench/vela_side_by_side.py                      # the shared models
    .venv/bin/python bench/vela_side_by_side.py --single-layers       # one layer at a time
    .venv/bin/python bench/vela_side_by_side.py --configs ethos-u55-256 --models mobilenet_v2_int8

Vela (`ethos-u-vela` from PyPI: `pip install -e '.[peers]'`) compiles each TFLite file
for an accelerator in its default system configuration and memory mode, and reports
its estimate (`--verbose-performance`, the summary and per-layer CSVs); irc compiles
the same file (`irc-compile model.tflite`, no calibration, every op the support table
allows on the NPU, as Vela) for the preset of the same name, which carries Vela's
figures (docs/targets.md), and simulates the package. Both compilers run on this
machine, interleaved, `--repeats` times each; the compile times (irc's without its
simulated run) are medians and their ratio is the figure to quote
(docs/benchmarks.md).

Printed, per model and configuration: cycles, time, MAC utilisation, the bytes read
and written in each memory, the SRAM used (Vela's SRAM: irc's system SRAM plus its
local SRAM peak), compile time; then every layer by its TFLite output tensor's name:
Vela's op cycles beside irc's (the cycles the layer adds to the simulated run) and
their ratio. `--single-layers` compiles one conv, one depthwise conv, one fully
connected layer and one elementwise add, each alone in a network, and prints the two
estimates and why they differ (docs/simulator.md discusses each).

`--no-predict-memories` compiles with irc-compile's `--no-predict-memories` (each
layer's transfers costed in the slowest memory of activations, not where its tensors
are predicted to live).

`--no-transaction-bound` runs irc with memories that sustain their bandwidth whatever
the transactions in flight (Vela's estimate reads no `max_reads`): the difference
between the two runs is what Little's law costs (docs/simulator.md).

Simulated cycles and Vela's estimates are deterministic; only compile times depend on
the machine (hence the ratio).
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT.parent / "shared" / "models"
CONFIGS = ("ethos-u55-256", "ethos-u65-512")
MEMORY_NAMES = {"sram": "system_sram", "dram": "dram", "off_chip_flash": "flash"}
"""Vela's memory areas by the name of irc's memory in the presets."""


@dataclass
class Run:
    """One compiler's figures for one model on one machine."""

    cycles: float = 0.0
    clock_hz: float = 0.0
    macs: float = 0.0
    mac_utilisation: float = 0.0
    traffic: dict[str, tuple[float, float]] = field(default_factory=dict)
    """Bytes (read, written) per memory, by irc's names."""
    sram_used: float = 0.0
    compile_seconds: list[float] = field(default_factory=list)
    layers: dict[str, float] = field(default_factory=dict)
    """Cycles per layer, by TFLite output tensor name."""
    layer_kinds: dict[str, str] = field(default_factory=dict)
    layer_utilisation: dict[str, float] = field(default_factory=dict)
    """MAC utilisation per layer."""
    layer_memory: dict[str, str] = field(default_factory=dict)
    """Per layer: Vela's access cycles of each memory, irc's bytes read and written."""

    @property
    def milliseconds(self) -> float:
        return self.cycles / self.clock_hz * 1e3 if self.clock_hz else 0.0


# --------------------------------------------------------------------------------------
# Vela


def vela_executable() -> str:
    """The `vela` of this environment (the `peers` extra), else one on the PATH."""
    beside = Path(sys.executable).parent / "vela"
    if beside.exists():
        return str(beside)
    found = shutil.which("vela")
    if found is None:
        sys.exit("vela is not installed: pip install -e '.[peers]' (ethos-u-vela)")
    return found


def run_vela(model: Path, config: str, directory: Path) -> tuple[Run, float]:
    """Compile `model` with Vela for `config`; its figures and the compile's seconds."""
    out = directory / f"vela-{config}"
    shutil.rmtree(out, ignore_errors=True)
    command = [
        vela_executable(),
        str(model),
        "--accelerator-config",
        config,
        "--output-dir",
        str(out),
        "--verbose-performance",
    ]
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    (summary_path,) = out.glob(f"{model.stem}_summary_*.csv")
    with summary_path.open() as file:
        summary = next(csv.DictReader(file))
    run = Run(
        cycles=float(summary["cycles_total"]),
        clock_hz=float(summary["core_clock"]),
        macs=float(summary["nn_macs"]),
    )
    peak = run.cycles * int(config.rsplit("-", 1)[1])
    run.mac_utilisation = run.macs / peak if peak else 0.0
    for area, name in MEMORY_NAMES.items():
        read = sum(
            float(summary[f"{area}_{kind}_read_bytes"]) for kind in ("feature_map", "weight")
        )
        written = sum(
            float(summary[f"{area}_{kind}_write_bytes"]) for kind in ("feature_map", "weight")
        )
        if read or written:
            run.traffic[name] = (read, written)
    run.sram_used = float(summary["sram_memory_used"]) * 1024
    with (out / f"{model.stem}_per-layer.csv").open() as file:
        for row in csv.DictReader(file):
            name = row["Name"].strip()
            if name in run.layers and not float(row["Op Cycles"]):
                continue  # a fused activation's row
            run.layers[name] = run.layers.get(name, 0.0) + float(row["Op Cycles"])
            run.layer_kinds.setdefault(name, row["Original Operator"])
            run.layer_utilisation[name] = float(row["Util% (MAC)"]) / 100
            access = {"SRAM": row["SRAM AC"], "DRAM": row["DRAM AC"], "flash": row["OffFlash AC"]}
            run.layer_memory[name] = ", ".join(
                f"{memory} {float(cycles):,.0f}"
                for memory, cycles in access.items()
                if float(cycles)
            )
    return run, seconds


# --------------------------------------------------------------------------------------
# irc


def unbounded_target(config: str, directory: Path) -> str:
    """The preset `config` as a target file whose memories allow as many transactions
    in flight as their bandwidth needs (Little's law bounds no rate), as Vela's
    estimate assumes: `--no-transaction-bound`."""
    from irc.targets import load_target
    from irc.targets.render import target_toml

    target = load_target(config)
    for memory in target.memories.values():
        in_flight = {"max_reads": 4096, "max_writes": 4096 if memory.writable else 0}
        target = target.with_memory(memory.name, **in_flight)
    path = directory / f"{config}-unbounded.toml"
    path.write_text(
        target_toml(target).replace(f'name = "{config}"', f'name = "{config}-unbounded"')
    )
    return str(path)


def run_irc(model: Path, config: str, predict: bool = True) -> tuple[Run, float]:
    """Compile `model` with irc for the target `config` (a preset or a file) and
    simulate it (without `predict`: `--no-predict-memories`)."""
    from irc.driver.pipeline import CompileOptions, compile_model
    from irc.driver.report import layer_rows

    options = CompileOptions(target=config, partition="support", predict_memories=predict)
    result = compile_model(model, options)
    # The compile without its simulated run (Vela estimates, it does not simulate).
    seconds = sum(stage.seconds for stage in result.stages if stage.name != "simulate")
    simulation = result.simulation
    target = result.target
    run = Run(cycles=simulation.cycles, clock_hz=target.mac_array.clock_hz)
    run.macs = simulation.total.macs
    run.mac_utilisation = simulation.mac_utilisation
    run.traffic = {
        name: (float(read), float(written))
        for name, (read, written) in simulation.total.traffic.items()
    }
    memory = json.loads(result.files["manifest.json"])["memory"]
    run.sram_used = memory.get("system_sram_bytes", 0) + simulation.sram_peak
    for row in layer_rows(result):
        run.layers[row.name] = float(row.added_cycles)
        run.layer_kinds[row.name] = row.op
        run.layer_utilisation[row.name] = row.mac_utilisation or 0.0
        run.layer_memory[row.name] = (
            f"{_bytes(row.ddr_read or 0)} r, {_bytes(row.ddr_written or 0)} w"
        )
    return run, seconds


# --------------------------------------------------------------------------------------
# Printing


def _mega(value: float) -> str:
    return f"{value / 1e6:.2f} M"


def _bytes(value: float) -> str:
    return f"{value / 1e6:.2f} MB" if value >= 1e5 else f"{value / 1e3:.1f} KB"


def _traffic(run: Run) -> str:
    return "; ".join(
        f"{name} {_bytes(read)} r, {_bytes(written)} w"
        for name, (read, written) in sorted(run.traffic.items())
    )


def print_comparison(model: str, config: str, vela: Run, irc: Run) -> None:
    vela_seconds = statistics.median(vela.compile_seconds)
    irc_seconds = statistics.median(irc.compile_seconds)
    print(f"\n## {model} on {config}\n")
    print("| | Vela 5.2 | irc | irc / Vela |")
    print("|---|---|---|---|")
    print(
        f"| cycles | {_mega(vela.cycles)} | {_mega(irc.cycles)} | {irc.cycles / vela.cycles:.2f} |"
    )
    print(f"| time | {vela.milliseconds:.2f} ms | {irc.milliseconds:.2f} ms | |")
    print(f"| MAC utilisation | {vela.mac_utilisation:.1%} | {irc.mac_utilisation:.1%} | |")
    for name in sorted(set(vela.traffic) | set(irc.traffic)):
        v, i = vela.traffic.get(name, (0.0, 0.0)), irc.traffic.get(name, (0.0, 0.0))
        print(f"| {name} read | {_bytes(v[0])} | {_bytes(i[0])} | |")
        print(f"| {name} written | {_bytes(v[1])} | {_bytes(i[1])} | |")
    print(f"| SRAM used | {_bytes(vela.sram_used)} | {_bytes(irc.sram_used)} | |")
    print(
        f"| compile (median) | {vela_seconds:.2f} s | {irc_seconds:.2f} s | "
        f"{irc_seconds / vela_seconds:.2f} |"
    )


def print_layers(vela: Run, irc: Run) -> None:
    print(
        "\n| layer (TFLite output) | op | Vela cycles | irc cycles | irc / Vela | MAC util "
        "Vela / irc | Vela's access cycles | irc's memory bytes |"
    )
    print("|---|---|---:|---:|---:|---|---|---|")
    for name, cycles in vela.layers.items():
        if not cycles:
            continue
        ours = irc.layers.get(name)
        ratio = f"{ours / cycles:.2f}" if ours is not None and cycles else "—"
        shown = name if len(name) <= 60 else "…" + name[-59:]
        utilisation = (
            f"{vela.layer_utilisation.get(name, 0.0):.0%} / "
            f"{irc.layer_utilisation.get(name, 0.0):.0%}"
        )
        print(
            f"| `{shown}` | {vela.layer_kinds.get(name, '')} | {cycles:,.0f} | "
            f"{'—' if ours is None else f'{ours:,.0f}'} | {ratio} | {utilisation} | "
            f"{vela.layer_memory.get(name, '')} | {irc.layer_memory.get(name, '—')} |"
        )
    unmatched = [name for name in irc.layers if name not in vela.layers and irc.layers[name]]
    if unmatched:
        print(f"\nirc layers without a Vela layer of that name: {', '.join(unmatched[:10])}")


def compare(
    model: Path,
    config: str,
    repeats: int,
    directory: Path,
    bounded: bool = True,
    predict: bool = True,
) -> tuple[Run, Run]:
    """Both compilers on one model and machine, interleaved `repeats` times."""
    vela = irc = None
    vela_times: list[float] = []
    irc_times: list[float] = []
    target = config if bounded else unbounded_target(config, directory)
    for _ in range(repeats):
        vela, seconds = run_vela(model, config, directory)
        vela_times.append(seconds)
        irc, seconds = run_irc(model, target, predict)
        irc_times.append(seconds)
    assert vela is not None and irc is not None
    vela.compile_seconds, irc.compile_seconds = vela_times, irc_times
    return vela, irc


# --------------------------------------------------------------------------------------
# Single layers


def single_layer_models(directory: Path) -> dict[str, Path]:
    """A conv, a depthwise conv, a fully connected layer and an elementwise add, each
    alone in an int8 TFLite network (irc.testing.tflite_models.SINGLE_LAYERS)."""
    from irc.testing import tflite_models

    models = {}
    for name, build in tflite_models.SINGLE_LAYERS.items():
        path = directory / f"{name}.tflite"
        path.write_bytes(build(0))
        models[name] = path
    return models


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="mobilenet_v2_int8,resnet50_int8")
    parser.add_argument("--configs", default=",".join(CONFIGS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--single-layers", action="store_true")
    parser.add_argument("--no-layers", action="store_true", help="totals only")
    parser.add_argument(
        "--no-transaction-bound",
        action="store_true",
        help="irc's memories sustain their bandwidth whatever the transactions in flight, "
        "as Vela's estimate assumes (Little's law off)",
    )
    parser.add_argument(
        "--no-predict-memories",
        action="store_true",
        help="irc-compile --no-predict-memories: each layer's transfers costed in the "
        "slowest memory of activations",
    )
    parser.add_argument("--json", type=Path, help="write every figure here")
    arguments = parser.parse_args()

    figures: dict[str, dict[str, dict[str, object]]] = defaultdict(dict)
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        if arguments.single_layers:
            models = single_layer_models(directory)
        else:
            models = {name: MODELS / f"{name}.tflite" for name in arguments.models.split(",")}
        for config in arguments.configs.split(","):
            for name, path in models.items():
                bounded = not arguments.no_transaction_bound
                vela, irc = compare(
                    path,
                    config,
                    arguments.repeats,
                    directory,
                    bounded,
                    not arguments.no_predict_memories,
                )
                print_comparison(name, config, vela, irc)
                if not arguments.no_layers and not arguments.single_layers:
                    print_layers(vela, irc)
                figures[name][config] = {"vela": vela.__dict__, "irc": irc.__dict__}
    if arguments.json:
        arguments.json.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
