"""The reports of a compile (irc/driver/report.py): the summary irc-compile prints and
report.md, layers.csv, trace.json and the PNGs, checked against the compile's numbers."""

from __future__ import annotations

import csv
import dataclasses
import json
import struct
import sys
from pathlib import Path

import pytest

from irc.driver.pipeline import CompileOptions, CompileResult, compile_model
from irc.driver.report import (
    LAYERS_CSV,
    LAYERS_PNG,
    PLOTS_HINT,
    REPORT_MD,
    TIMELINE_PNG,
    TRACE_JSON,
    human_bytes,
    layer_rows,
    report_markdown,
    summary_text,
    write_reports,
)
from irc.fileio import StagedOutputs
from irc.targets import load_target
from irc.targets.render import target_toml
from irc.testing.targets import host_casts

ROOT = Path(__file__).resolve().parent.parent
DIGITS = ROOT / "models" / "digits" / "digits_cnn.onnx"
CALIBRATION = ROOT / "models" / "digits" / "digits_calibration.npz"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def digits() -> CompileResult:
    """The digits CNN with every layer npu-demo takes on its NPU (partition by support),
    the float image's quantize and the logits' dequantize included."""
    return compile_model(DIGITS, CompileOptions(calibration_data=CALIBRATION, partition="support"))


@pytest.fixture(scope="module")
def host_casts_target(tmp_path_factory: pytest.TempPathFactory) -> str:
    """npu-demo as a target file without quantize and dequantize: the host converts the
    float image and the logits, in host calls."""
    path = tmp_path_factory.mktemp("target") / "npu-demo-host-casts.toml"
    path.write_text(target_toml(host_casts(load_target("npu-demo"))))
    return str(path)


@pytest.fixture(scope="module")
def digits_host_casts(host_casts_target: str) -> CompileResult:
    """The digits CNN on `host_casts_target`, every other layer on the NPU."""
    options = CompileOptions(
        calibration_data=CALIBRATION, partition="support", target=host_casts_target
    )
    return compile_model(DIGITS, options)


@pytest.fixture(scope="module")
def digits_float() -> CompileResult:
    return compile_model(DIGITS, CompileOptions(quantize="none"))


def _write(result: CompileResult, directory: Path) -> list[str]:
    with StagedOutputs() as staged:
        return write_reports(result, directory, staged)


def _table_after(markdown: str, heading: str) -> list[list[str]]:
    """The cells of the first table after `heading`, header row first."""
    lines = markdown.splitlines()
    start = lines.index(heading)
    rows: list[list[str]] = []
    for line in lines[start + 1 :]:
        if line.startswith("## "):
            break
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
        elif rows:
            break
    assert rows, f"no table after {heading}"
    return [rows[0], *rows[2:]]  # without the alignment row


def test_human_bytes() -> None:
    assert human_bytes(512) == "512 B"
    assert human_bytes(524288) == "512 KiB"
    assert human_bytes(24704) == "24.1 KiB"
    assert human_bytes(25833664) == "24.6 MiB"


def test_summary_has_the_compiles_numbers(digits: CompileResult) -> None:
    text = summary_text(digits)
    lines = text.splitlines()
    assert len(lines) <= 16
    simulation = digits.simulation
    assert f"{simulation.cycles:,} cycles = {simulation.seconds * 1e3:.3f} ms" in text
    partition = digits.partition
    assert f"NPU          {len(partition.npu_layers)} layers, {partition.npu_macs:,} MACs" in text
    assert f"CPU          {len(partition.cpu_ops)} ops" in text
    assert not partition.cpu_ops  # npu-demo's vector unit converts the image and logits
    cosine, sqnr = digits.output_metrics["logits"]
    assert f"logits: cosine {cosine:.5f}, SQNR {sqnr:.1f} dB" in text
    assert f"MAC array {simulation.mac_utilisation:.1%}" in text
    assert digits.tiling is not None
    assert f"sum of layer lower bounds {digits.tiling.lower_bound:,}" in text
    network = digits.tiling.network
    assert network is not None
    assert f"network bound {network.cycles:,} / {simulation.cycles:,} simulated cycles" in text
    # The network's bound: no schedule beats it, nor the layers' own bounds.
    assert network.cycles == max(network.compute, network.traffic) > 0
    assert network.cycles <= simulation.cycles
    assert network.cycles <= digits.tiling.lower_bound
    assert f"SRAM peak {human_bytes(simulation.sram_peak)} of 512 KiB" in text
    assert f"weights.bin {human_bytes(len(digits.files['weights.bin']))}" in text
    # The labels line up: every value starts in the same column.
    assert {len(line) - len(line[13:].lstrip()) for line in lines} == {13}
    assert not text.startswith("warning")


def test_summary_puts_warnings_first(digits: CompileResult) -> None:
    warned = dataclasses.replace(digits, warnings=["calibrated on random samples"])
    assert summary_text(warned).splitlines()[0] == "warning: calibrated on random samples"


def test_report_md_has_a_row_per_layer(digits: CompileResult, tmp_path: Path) -> None:
    written = _write(digits, tmp_path)
    assert written[:3] == [REPORT_MD, LAYERS_CSV, TRACE_JSON]
    markdown = (tmp_path / REPORT_MD).read_text()
    table = _table_after(markdown, "## Layers")
    header, rows = table[0], {row[0].strip("`"): row for row in table[1:]}
    column = {name: index for index, name in enumerate(header)}
    assert digits.tiling is not None and digits.errors is not None
    # The image's quantize, three convs, the max pool cascaded with the last, the
    # classifier, the logits' dequantize.
    assert [plan.layer.op for plan in digits.tiling.plans] == [
        "quant.qcast",
        "qnn.conv",
        "qnn.conv",
        "qnn.max_pool",
        "qnn.conv",
        "qnn.gemm",
        "quant.dcast",
    ]
    for plan in digits.tiling.plans:
        row = rows[plan.layer.name]
        figures = digits.simulation.layers[plan.layer.name]
        assert row[column["op"]] == plan.layer.op
        assert row[column["tile"]] == str(plan.tile)
        assert row[column["cycles"]] == f"{figures.cycles:,}"
        assert row[column["estimate"]] == f"{plan.cycles:,}"
        assert row[column["bound"]] == f"{plan.lower_bound:,}"
        assert row[column["efficiency"]] == f"{plan.lower_bound / figures.cycles:.0%}"
        assert row[column["DDR read"]] == f"{figures.ddr_read:,}"
        assert row[column["SRAM"]] == f"{plan.sram_bytes:,}"
        tensor = digits.errors.get(f"{plan.layer.name}#0")
        if plan.layer.op.startswith("quant."):
            # A cast's output is the float input's int8 form, or a float: no error of
            # its own (the input's is in the quantization section).
            assert tensor is None and row[column["cosine"]] == "—"
        else:
            assert tensor is not None
            assert row[column["cosine"]] == f"{tensor.cosine:.5f}"
    # Program order: the stream's.
    assert [name.strip("`") for name, *_ in table[1:]] == list(digits.simulation.layers)
    # The other sections, with numbers from the result.
    assert "## Where the cycles go" in markdown
    assert f"One inference takes **{digits.simulation.cycles:,} cycles**" in markdown
    assert "Nothing runs on the host CPU." in markdown.split("## Partition", 1)[1]
    worst = _table_after(markdown, "## Quantization")
    assert worst[1][0] == "`logits`"
    memory = markdown.split("## Memory", 1)[1].split("## ", 1)[0].replace(",", "").replace("|", " ")
    manifest = json.loads(digits.files["manifest.json"])["memory"]
    assert str(manifest["weights_bytes"]) in memory.split()
    assert str(manifest["ddr_bytes"] - manifest["weights_bytes"]) in memory.split()
    assert f"[{LAYERS_CSV}]({LAYERS_CSV})" in markdown
    assert f"![The engines over the run]({TIMELINE_PNG})" in markdown
    assert str(tmp_path) not in markdown


def test_host_calls_have_rows_with_dashes(digits_host_casts: CompileResult, tmp_path: Path) -> None:
    """On a target without quantize and dequantize the host converts the image and the
    logits: their host calls are rows without a plan or an error, and the partition
    section lists them."""
    result = digits_host_casts
    assert [op.op for op in result.partition.cpu_ops] == ["quant.qcast", "quant.dcast"]
    assert "CPU          2 ops, 0 MACs (0.0%): quant.qcast, quant.dcast" in summary_text(result)
    _write(result, tmp_path)
    markdown = (tmp_path / REPORT_MD).read_text()
    table = _table_after(markdown, "## Layers")
    header, rows = table[0], {row[0].strip("`"): row for row in table[1:]}
    column = {name: index for index, name in enumerate(header)}
    host = rows["arg:image/quantize"]
    assert host[column["op"]] == "quant.qcast"
    assert host[column["bound"]] == host[column["cosine"]] == "—"
    figures = result.simulation.layers["arg:image/quantize"]
    assert host[column["cycles"]] == f"{figures.cycles:,}" and figures.busy["host"] > 0
    partition = _table_after(markdown, "## Partition")
    assert [row[1] for row in partition[1:]] == ["quant.qcast", "quant.dcast"]


def test_layers_csv_adds_up_to_the_run(digits: CompileResult, tmp_path: Path) -> None:
    _write(digits, tmp_path)
    with (tmp_path / LAYERS_CSV).open(newline="") as file:
        rows = list(csv.DictReader(file))
    simulation = digits.simulation
    assert [row["layer"] for row in rows] == list(simulation.layers)
    total = simulation.total
    # A layer's MACs are its NPU commands' and its host ops': every MAC of the model.
    assert sum(int(row["macs"]) for row in rows) == total.macs + digits.partition.cpu_macs
    assert total.macs + digits.partition.cpu_macs == 456_704
    assert sum(int(row["ddr_read_bytes"]) for row in rows) == total.ddr_read
    assert sum(int(row["ddr_written_bytes"]) for row in rows) == total.ddr_written
    assert sum(int(row["commands"]) for row in rows) == total.commands
    for queue in ("dma_in", "dma_out", "mac", "vector", "host"):
        assert sum(int(row[f"busy_{queue}"]) for row in rows) == total.busy[queue]
    # The layers' shares of the run add up to the whole run.
    assert sum(int(row["added_cycles"]) for row in rows) == simulation.cycles
    assert digits.tiling is not None
    plans = {plan.layer.name: plan for plan in digits.tiling.plans}
    for row in rows:
        figures = simulation.layers[row["layer"]]
        assert int(row["cycles"]) == figures.cycles
        assert int(row["end_cycle"]) - int(row["start_cycle"]) == figures.cycles
        plan = plans.get(row["layer"])
        if plan is None:
            assert row["lower_bound_cycles"] == row["tile"] == ""
            continue
        assert int(row["lower_bound_cycles"]) == plan.lower_bound
        assert int(row["estimate_cycles"]) == plan.cycles
        assert float(row["efficiency"]) == pytest.approx(plan.lower_bound / figures.cycles)
    assert sum(int(row["lower_bound_cycles"] or 0) for row in rows) == digits.tiling.lower_bound


def test_trace_json_loads(digits: CompileResult, tmp_path: Path) -> None:
    _write(digits, tmp_path)
    trace = json.loads((tmp_path / TRACE_JSON).read_text())
    events = [event for event in trace["traceEvents"] if event["ph"] == "X"]
    assert len(events) == len(digits.simulation.events) == digits.simulation.total.commands
    threads = {e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "thread_name"}
    assert threads == {"dma_in", "dma_out", "mac", "vector", "host"}
    assert {event["args"]["layer"] for event in events} == set(digits.simulation.layers)


def _png_size(content: bytes) -> tuple[int, int]:
    assert content[:8] == PNG_SIGNATURE
    assert content[12:16] == b"IHDR"
    width, height = struct.unpack(">II", content[16:24])
    return width, height


def test_pngs_are_written_and_deterministic(digits: CompileResult, tmp_path: Path) -> None:
    first = _write(digits, tmp_path / "first")
    second = _write(digits, tmp_path / "second")
    assert first == second == [REPORT_MD, LAYERS_CSV, TRACE_JSON, TIMELINE_PNG, LAYERS_PNG]
    for name in first:
        assert (tmp_path / "first" / name).read_bytes() == (tmp_path / "second" / name).read_bytes()
    timeline = (tmp_path / "first" / TIMELINE_PNG).read_bytes()
    layers = (tmp_path / "first" / LAYERS_PNG).read_bytes()
    assert _png_size(timeline) == (1210, 484)
    width, height = _png_size(layers)
    assert width == 968 and height >= 370
    # No metadata chunk: matplotlib's version would make files differ across installs.
    assert b"tEXt" not in timeline and b"Software" not in layers


def test_without_matplotlib_no_png_and_a_hint(
    digits: CompileResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` fails
    written = _write(digits, tmp_path)
    assert written == [REPORT_MD, LAYERS_CSV, TRACE_JSON]
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(written)
    markdown = (tmp_path / REPORT_MD).read_text()
    assert PLOTS_HINT in markdown
    assert TIMELINE_PNG in markdown and f"]({TIMELINE_PNG})" not in markdown


def test_a_failed_write_leaves_no_report(digits: CompileResult, tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), StagedOutputs() as staged:
        write_reports(digits, tmp_path, staged)
        raise RuntimeError("a later stage fails")
    assert list(tmp_path.iterdir()) == []


def test_cost_mode_reports_its_moves(
    digits_host_casts: CompileResult, host_casts_target: str
) -> None:
    """irc-compile's default: where the host converts the logits anyway, the cost model
    keeps the classifier's small gemm, whose weights would stream from npu-demo's
    1 GB/s DDR, on the host with them; it says what that saves, and the package is
    faster for it."""
    digits = digits_host_casts
    options = CompileOptions(calibration_data=CALIBRATION, target=host_casts_target)
    cost = compile_model(DIGITS, options)
    assert cost.options.partition == "cost"
    moved = [op for op in cost.partition.cpu_ops if "cost model" in op.reason]
    assert [(op.layer, op.op) for op in moved] == [
        ("/classifier/Gemm", "qnn.gemm"),
        ("/classifier/Gemm", "qnn.requantize"),
    ]
    reason = moved[0].reason
    assert reason.startswith("moved to the CPU by the cost model (with 1 other op): the host ")
    assert reason.endswith(" us saved")
    assert cost.simulation.cycles < digits.simulation.cycles
    # Every MAC is counted once, wherever it runs.
    total = cost.partition.npu_macs + cost.partition.cpu_macs
    assert total == digits.partition.npu_macs + digits.partition.cpu_macs == 456_704


def test_float_model_reports_the_host(digits_float: CompileResult, tmp_path: Path) -> None:
    text = summary_text(digits_float)
    assert "output       float: no quantization error" in text
    assert "NPU          0 layers, 0 MACs" in text
    assert f"CPU          5 ops, {digits_float.partition.cpu_macs:,} MACs (100.0%)" in text
    assert "schedule" not in text  # nothing planned: no lower bound to compare
    _write(digits_float, tmp_path)
    markdown = (tmp_path / REPORT_MD).read_text()
    assert "no quantization error" in markdown
    partition = _table_after(markdown, "## Partition")
    assert len(partition) - 1 == 5
    assert all(
        row[3] == "computes in float: target npu-demo computes in integers only (no fp16)"
        for row in partition[1:]
    )
    rows = layer_rows(digits_float)
    assert sum(row.added_cycles for row in rows) == digits_float.simulation.cycles
    assert all(row.cosine is None and row.lower_bound is None for row in rows)


def test_report_md_says_which_cores_each_layer_ran_on_and_why(digits: CompileResult) -> None:
    """On a target of two cores report.md has a "Cores" section: a row per planned
    layer with its cores, its split and why (the planner's estimates beside the
    simulated cycles); a one-core target has none."""
    assert "## Cores" not in report_markdown(digits, plots=False)
    options = CompileOptions(
        calibration_data=CALIBRATION, partition="support", target="edge-2tops-2c"
    )
    two = compile_model(DIGITS, options)
    markdown = report_markdown(two, plots=False)
    table = _table_after(markdown, "## Cores")
    assert table[0] == ["layer", "op", "cores", "split", "one core", "estimate", "cycles", "why"]
    assert len(table) - 1 == len(two.tiling.plans)  # type: ignore[union-attr]
    for row in table[1:]:
        assert row[2] in ("1", "2")
        assert row[7].startswith(("split over", "one core", "in a cascade")), row[7]
        assert row[7] != "in a cascade on one core", "the reason is given"
        if row[2] == "1" and row[7].startswith("one core: split over"):
            # The planner's estimate of the split is no better than one core's.
            assert "estimated cycles against" in row[7]
