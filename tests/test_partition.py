"""`partition` on real networks: numerics, reports against golden files, IR invariants.

For every light model of the onnx package (weights materialised from a fixed seed) and
every network the suite builds (`irc.testing.networks`), quantized as irc-compile
quantizes it (import, `graph-opt`, `prepare-quantize`, `quantize` on one random sample,
`lower-to-qnn`): the int8 module that `irc-compile` partitions,

- partitioning for npu-demo, in both modes, leaves outputs identical to the last bit
  (`apply_and_compare` with rtol = atol = 0): transfers copy, calls run the same ops;
- the partitioned IR is consistent with its report: host code never reads an NPU value
  without a transfer to the CPU, NPU functions hold only ops the backend table runs on
  an NPU, and the transitions, transfers, op counts and MACs counted in the IR are those
  the report gives;
- each report passes the JSON schema checks, and the light models' reports equal the
  golden files `tests/data/partition/<model>.<mode>.json` byte for byte.

The golden files record what npu-demo runs of each light model and why. After a
deliberate change to the pass, the cost model (irc/backend/cost.py), the support checks or the
npu-demo preset, regenerate them and review the diff:

    IRC_REGENERATE_GOLDEN=1 .venv/bin/pytest tests/test_partition.py -k golden
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import onnx
import pytest
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import BlockArgument, Operation, SSAValue

from irc import backend
from irc.backend.cost import op_macs, tensor_bytes
from irc.diagnostics import IrcError, Severity, collect_diagnostics
from irc.dialects.part import TransferOp
from irc.dialects.quant import quantized_element
from irc.importers.onnx import import_model
from irc.interp import run_function
from irc.ir.context import make_context
from irc.ir.io import module_to_string, verify_module
from irc.ir.placement import DEVICE_ATTR
from irc.numerics import random_function_inputs
from irc.passes import parse_pipeline
from irc.targets import load_target
from irc.testing.models import light_models, materialize_light_model
from irc.testing.networks import NETWORKS
from irc.testing.numerics import apply_and_compare
from irc.transforms.partition import PartitionPass, partition_module
from irc.transforms.partition_report import SCHEMA, PartitionReport

SEED = 0
TARGET = "npu-demo"
FLOAT_TARGET = str(
    Path(__file__).parent / "filecheck" / "transforms" / "Inputs" / "npu-demo-fp16.toml"
)
"""npu-demo computing in fp16 too: the small float cases below run on its NPU."""
QUANTIZE = (
    "builtin.module(graph-opt{activations=relu,clip},prepare-quantize,"
    "quantize{calibration-samples=1},lower-to-qnn{target=npu-demo})"
)
MODES = ("support", "cost")
GOLDEN_DIR = Path(__file__).parent / "data" / "partition"
REGENERATE = os.environ.get("IRC_REGENERATE_GOLDEN") == "1"

LIGHT_MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    path.stem.removeprefix("light_"): (
        lambda path=path: materialize_light_model(path, seed=SEED)  # type: ignore[misc]
    )
    for path in light_models(heavy=False)
}
MODEL_BUILDERS: dict[str, Callable[[], onnx.ModelProto]] = {
    **LIGHT_MODELS,
    **{name: (lambda build=build: build(SEED)) for name, build in NETWORKS.items()},
}
SLOW_MODELS = {"bvlc_alexnet", "zfnet512"}
"""The models with the largest weights (seconds to materialise, import and run)."""


def quantized(name: str) -> ModuleOp:
    """The model quantized as irc-compile quantizes it: what `partition` sees there."""
    module = import_model(MODEL_BUILDERS[name]())
    with collect_diagnostics():  # the passes' remarks, the random calibration's warning
        for module_pass in parse_pipeline(QUANTIZE):
            module_pass.apply(make_context(), module)
    verify_module(module)
    return module


def partitioned(module: ModuleOp, mode: str) -> tuple[ModuleOp, PartitionReport]:
    """A partitioned clone of `module` and its report (numerics not checked)."""
    after = module.clone()
    report = partition_module(after, load_target(TARGET), mode)  # type: ignore[arg-type]
    verify_module(after)
    return after, report


def assert_same_outputs(module: ModuleOp, mode: str, target: str = TARGET) -> ModuleOp:
    """Partition a clone through the pass pipeline; the outputs must not change at all."""
    pipeline = f"partition{{target={target} mode={mode}}}"
    with collect_diagnostics():  # the pass's remark
        return apply_and_compare(module, pipeline, rtol=0, atol=0)


# --------------------------------------------------------------------------------------
# The IR agrees with the report


def _is_npu_function(op: Operation) -> bool:
    return isinstance(op, FuncOp) and op.attributes.get(DEVICE_ATTR) == StringAttr("npu")


def _npu_call(value: SSAValue, npu_names: set[str]) -> bool:
    owner = value.owner
    return isinstance(owner, CallOp) and owner.callee.root_reference.data in npu_names


def _is_compute(op: Operation) -> bool:
    return not backend.is_data(op) and not isinstance(op, ReturnOp)


def ir_problems(module: ModuleOp, report: PartitionReport) -> list[str]:
    """Every way in which the partitioned IR breaks the IR form or disagrees with the report."""
    problems: list[str] = []
    # A quantized module's float tensors stay float (4 bytes); a float module's will be int8.
    quantized_module = any(
        quantized_element(result.type) is not None for op in module.walk() for result in op.results
    )
    float_bytes = 4 if quantized_module else 1
    functions = [op for op in module.ops if isinstance(op, FuncOp)]
    npu_functions = [f for f in functions if _is_npu_function(f)]
    npu_names = {f.sym_name.data for f in npu_functions}
    if len(npu_functions) != len(report.subgraphs):
        problems.append(f"{len(npu_functions)} NPU functions, report: {len(report.subgraphs)}")

    npu_ops = 0
    npu_macs = 0
    for function in npu_functions:
        if function.sym_visibility != StringAttr("private"):
            problems.append(f"@{function.sym_name.data} is not private")
        for op in function.body.block.ops:
            runs_there = backend.entry_of(op) is not None or backend.is_data(op)
            if not runs_there and not isinstance(op, ReturnOp):
                problems.append(f"@{function.sym_name.data} holds '{op.name}'")
            if _is_compute(op):
                npu_ops += 1
                npu_macs += op_macs(op)
    if (npu_ops, npu_macs) != (report.ops_npu, report.macs_npu):
        problems.append(
            f"NPU functions hold {npu_ops} ops and {npu_macs} MACs, report: "
            f"{report.ops_npu} and {report.macs_npu}"
        )

    cpu_ops = 0
    devices: list[str] = []
    transfers = {"input": [0, 0], "output": [0, 0], "transition": [0, 0]}
    for function in functions:
        if function in npu_functions:
            continue
        devices.clear()
        for op in function.body.block.ops:
            if isinstance(op, CallOp) and op.callee.root_reference.data in npu_names:
                devices.append("npu")
                for operand in op.operands:
                    owner = operand.owner
                    copied = isinstance(owner, TransferOp) and owner.destination == "npu"
                    if not copied and not _npu_call(operand, npu_names):
                        problems.append(f"an NPU call reads a host value: {op}")
            elif isinstance(op, TransferOp):
                from_npu = _npu_call(op.input, npu_names)
                if from_npu != (op.destination == "cpu"):
                    problems.append(f"a transfer to the {op.destination} copies from there")
                if op.destination == "npu":
                    kind = "input" if isinstance(op.input, BlockArgument) else "transition"
                else:
                    returned = any(isinstance(use.operation, ReturnOp) for use in op.result.uses)
                    kind = "output" if returned else "transition"
                transfers[kind][0] += 1
                transfers[kind][1] += tensor_bytes(op.input.type, float_bytes)
            else:
                if _is_compute(op):
                    devices.append("cpu")
                    cpu_ops += 1
                reads_npu = [v for v in op.operands if _npu_call(v, npu_names)]
                if reads_npu:
                    problems.append(f"host op '{op.name}' reads an NPU value directly")
        # Each run of host ops is one host call: a transition to the host and one back.
        host_runs = sum(
            device == "cpu" and (index == 0 or devices[index - 1] != "cpu")
            for index, device in enumerate(devices)
        )
        if function.sym_name.data == "main" and 2 * host_runs != report.transitions:
            problems.append(
                f"@main has {host_runs} runs of host ops (two transitions each), "
                f"report: {report.transitions} transitions"
            )
    if cpu_ops != report.ops_total - report.ops_npu:
        problems.append(f"{cpu_ops} ops on the host, report: {report.ops_total - report.ops_npu}")
    expected = {
        "input": report.input_transfers,
        "output": report.output_transfers,
        "transition": report.transition_transfers,
    }
    for kind, (count, byte_count) in transfers.items():
        if (count, byte_count) != (expected[kind].count, expected[kind].bytes):
            problems.append(
                f"{count} {kind} transfers of {byte_count} bytes in the IR, report: "
                f"{expected[kind].count} of {expected[kind].bytes}"
            )
    return problems


# --------------------------------------------------------------------------------------
# The JSON schema


def schema_problems(data: dict[str, Any]) -> list[str]:
    """Every way in which a JSON report breaks its schema or its own arithmetic."""
    problems: list[str] = []

    def expect(condition: bool, what: str) -> None:
        if not condition:
            problems.append(what)

    top = {
        "schema": str,
        "target": str,
        "mode": str,
        "ops": dict,
        "macs": dict,
        "subgraphs": list,
        "transitions": int,
        "transfers": dict,
        "estimated_us": dict,
        "fallbacks": list,
    }
    expect(list(data) == list(top), f"top-level keys {list(data)}")
    for key, kind in top.items():
        expect(isinstance(data.get(key), kind), f"'{key}' is not a {kind.__name__}")
    if problems:
        return problems
    expect(data["schema"] == SCHEMA, f"schema {data['schema']}")
    expect(data["mode"] in MODES, f"mode {data['mode']}")
    for section in ("ops", "macs"):
        counts = data[section]
        expect(0 <= counts["npu"] <= counts["total"], f"{section}: npu outside [0, total]")
        coverage = counts["coverage"]
        if counts["total"]:
            expect(coverage == round(counts["npu"] / counts["total"], 4), f"{section} coverage")
        else:
            expect(coverage is None, f"{section} coverage of nothing is not null")
    expect(data["ops"]["npu"] + data["ops"]["cpu"] == data["ops"]["total"], "ops don't add up")
    subgraphs = data["subgraphs"]
    for subgraph in subgraphs:
        expect(list(subgraph) == ["name", "function", "ops", "macs"], f"subgraph {subgraph}")
        expect(subgraph["ops"] >= 1, f"empty subgraph {subgraph['name']}")
    expect(sum(s["ops"] for s in subgraphs) == data["ops"]["npu"], "subgraph ops")
    expect(sum(s["macs"] for s in subgraphs) == data["macs"]["npu"], "subgraph MACs")
    expect(len({s["name"] for s in subgraphs}) == len(subgraphs), "duplicate subgraph names")
    transfers = data["transfers"]
    kinds = ("input", "output", "transition")
    expect(list(transfers) == [*kinds, "bytes"], f"transfer keys {list(transfers)}")
    for kind in kinds:
        expect(list(transfers[kind]) == ["count", "bytes"], f"{kind} transfer keys")
    expect(sum(transfers[k]["bytes"] for k in kinds) == transfers["bytes"], "transfer bytes")
    expect(data["transitions"] >= 0, "negative transitions")
    # Every transition but the switches into the first NPU subgraph and out of the last
    # copies something; with no subgraph there is neither transition nor transfer.
    if not subgraphs:
        expect(data["transitions"] == 0 and transfers["bytes"] == 0, "transfers without NPU")
    times = data["estimated_us"]
    expect(list(times) == ["npu", "cpu", "transfers", "total"], f"time keys {list(times)}")
    expect(all(isinstance(t, float | int) and t >= 0 for t in times.values()), "times")
    parts = times["npu"] + times["cpu"] + times["transfers"]
    expect(abs(parts - times["total"]) <= 0.0015, "times don't add up")
    fallbacks = data["fallbacks"]
    expect(len(fallbacks) == data["ops"]["cpu"], "one fallback entry per host op")
    for fallback in fallbacks:
        expect(
            list(fallback) == ["function", "op", "node", "location", "reasons"],
            f"fallback keys {list(fallback)}",
        )
        expect("." in fallback["op"], f"fallback op {fallback['op']}")
        expect(fallback["node"] is not None or fallback["location"] is not None, "no location")
        expect(
            bool(fallback["reasons"])
            and all(isinstance(r, str) and r for r in fallback["reasons"]),
            f"fallback {fallback['op']} without reasons",
        )
    return problems


# --------------------------------------------------------------------------------------
# Every model


def check_model(name: str) -> dict[str, PartitionReport]:
    """Partition the model in both modes; assert numerics, IR and schema; the reports.

    The numerics of cost mode are checked only when it placed some op differently:
    otherwise it produced the same IR as support mode (checked structurally), whose
    numerics were checked already.
    """
    module = quantized(name)
    reports: dict[str, PartitionReport] = {}
    results: dict[str, ModuleOp] = {}
    for mode in MODES:
        after, report = partitioned(module, mode)
        problems = ir_problems(after, report)
        problems += schema_problems(json.loads(report.to_json()))
        assert not problems, f"{name}, mode {mode}:\n- " + "\n- ".join(problems)
        if mode == "support" or report.fallbacks != reports["support"].fallbacks:
            checked = assert_same_outputs(module, mode)
            assert checked.is_structurally_equivalent(after), "the pass and partition_module differ"
        else:
            assert after.is_structurally_equivalent(results["support"])
        reports[mode], results[mode] = report, after
    # The cost model only ever moves ops to the CPU, and only to lower the estimate.
    support, cost = reports["support"], reports["cost"]
    assert cost.ops_npu <= support.ops_npu
    assert cost.total_seconds <= support.total_seconds + 1e-12
    return reports


def _params(names: list[str]) -> list[Any]:
    return [pytest.param(n, marks=[pytest.mark.slow] if n in SLOW_MODELS else []) for n in names]


@pytest.mark.parametrize("name", _params(sorted(LIGHT_MODELS)))
def test_light_model_partition_matches_golden_report(name: str) -> None:
    reports = check_model(name)
    for mode, report in reports.items():
        golden = GOLDEN_DIR / f"{name}.{mode}.json"
        if REGENERATE:
            golden.parent.mkdir(parents=True, exist_ok=True)
            golden.write_text(report.to_json())
        assert golden.is_file(), f"no golden report {golden}; see this module's docstring"
        assert report.to_json() == golden.read_text(), (
            f"the {mode} report of {name} differs from {golden}; if the change is deliberate, "
            "regenerate the golden files (see this module's docstring)"
        )


@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_network_partition(name: str) -> None:
    reports = check_model(name)
    # Both networks use only ops npu-demo runs (depthwise convs, ReLU6 as clip, Gemm),
    # and its vector unit quantizes the input and dequantizes the output: everything
    # runs on the NPU, with no transition to the host.
    support = reports["support"]
    assert not support.fallbacks
    assert support.ops_npu == support.ops_total
    assert support.macs_npu == support.macs_total
    assert support.transitions == 0


def test_golden_files_are_exactly_the_light_models(heavy=False) -> None:
    expected = {f"{name}.{mode}.json" for name in LIGHT_MODELS for mode in MODES}
    assert {path.name for path in GOLDEN_DIR.glob("*.json")} == expected


# --------------------------------------------------------------------------------------
# The pass and its report on small IR


SMALL = """
func.func @main(%x: tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32> {
  %w = nn.constant dense<0.1> : tensor<16x3x3x16xf32>
  %a = nn.conv %x, %w {layout = "nhwc", pads = [1, 1, 1, 1]} : (tensor<1x8x8x16xf32>, tensor<16x3x3x16xf32>) -> tensor<1x8x8x16xf32>
  %n = nn.lrn %a {layout = "nhwc", size = 3} : tensor<1x8x8x16xf32>
  %b = nn.conv %n, %w {layout = "nhwc", pads = [1, 1, 1, 1]} : (tensor<1x8x8x16xf32>, tensor<16x3x3x16xf32>) -> tensor<1x8x8x16xf32>
  func.return %b : tensor<1x8x8x16xf32>
}
"""
"""Float IR for `FLOAT_TARGET`: two convs around an LRN, which it does not run."""


def small_module() -> ModuleOp:
    from irc.ir.io import parse_module

    return parse_module(SMALL, make_context(), "small.mlir")


def test_one_unsupported_op_gives_two_transitions_and_same_outputs() -> None:
    module = small_module()
    after = assert_same_outputs(module, "support", FLOAT_TARGET)
    report = partition_module(module.clone(), load_target(FLOAT_TARGET))
    assert report.transitions == 2
    assert len(report.subgraphs) == 2
    assert report.input_transfers.count == report.output_transfers.count == 1
    assert report.transition_transfers.count == 2
    assert [f.op for f in report.fallbacks] == ["nn.lrn"]
    assert report.fallbacks[0].location == "small.mlir:5:3"
    assert not ir_problems(after, report)


def test_report_renderings_agree() -> None:
    report = partition_module(small_module(), load_target(FLOAT_TARGET))
    data = report.to_dict()
    assert report.to_json() == json.dumps(data, indent=2) + "\n"
    assert not schema_problems(json.loads(report.to_json()))
    text = report.to_text()
    assert text.startswith("Partition report: target npu-demo-fp16, mode support\n")
    assert "  NPU coverage: 2 of 3 ops (66.7%), 294,912 of 294,912 MACs (100.0%)\n" in text
    assert "      - nn.lrn: not in target npu-demo-fp16's support table\n" in text
    assert "      - nn.lrn: irc has no NPU lowering of it\n" in text
    assert report.summary() == (
        "partition: target npu-demo-fp16, mode support: 2/3 ops on the NPU (66.7%), 100.0% "
        "of MACs, 2 NPU subgraphs, 2 transitions, 1 fallback op"
    )


def test_pass_writes_the_report_and_emits_one_remark(tmp_path: Path) -> None:
    module = small_module()
    json_path = tmp_path / "reports" / "small.json"
    (pass_,) = parse_pipeline(f"partition{{target={FLOAT_TARGET} report={json_path}}}")
    assert isinstance(pass_, PartitionPass)
    with collect_diagnostics() as diagnostics:
        pass_.apply(make_context(), module)
    assert len(diagnostics) == 1
    (remark,) = diagnostics
    assert remark.severity is Severity.REMARK
    assert remark.location.line == 2  # the function
    assert [(note.severity, note.location.line) for note in remark.notes] == [(Severity.NOTE, 5)]
    assert json.loads(json_path.read_text())["transitions"] == 2
    assert [p.name for p in json_path.parent.iterdir()] == ["small.json"]  # no leftovers

    text_path = tmp_path / "small.txt"
    (text_pass,) = parse_pipeline(
        f"partition{{target={FLOAT_TARGET} mode=cost report={text_path}}}"
    )
    with collect_diagnostics():
        text_pass.apply(make_context(), small_module())
    assert text_path.read_text().startswith("Partition report: target npu-demo-fp16, mode cost\n")


def test_unwritable_report_is_an_error_and_leaves_nothing(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    report = partition_module(small_module(), load_target(TARGET))
    with pytest.raises(IrcError, match="cannot write the partition report"):
        report.write(blocker / "report.json")
    assert [p.name for p in tmp_path.iterdir()] == ["file"]


def test_partitioning_is_deterministic() -> None:
    texts = set()
    reports = set()
    for _ in range(2):
        module = quantized("mobilenet_v2_style")
        report = partition_module(module, load_target(TARGET), "cost")
        texts.add(module_to_string(module))
        reports.add(report.to_json())
    assert len(texts) == len(reports) == 1


def test_irc_opt_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """irc-opt --target on an imported network: graph-opt, partition, report, and the
    output runs as the input did."""
    from irc.fileio import StagedOutputs
    from irc.ir.io import PrintOptions, parse_module, write_module
    from irc.ir.weights import WeightsMode
    from irc.tools.opt import main

    source = tmp_path / "net.mlir"
    network = import_model(MODEL_BUILDERS["resnet_style"]())
    with StagedOutputs() as staged:
        write_module(network, source, PrintOptions(weights=WeightsMode.SIDECAR), staged)
    output, report = tmp_path / "out.mlir", tmp_path / "net.partition.json"
    status = main(
        [
            str(source),
            f"--target={FLOAT_TARGET}",
            "-p",
            f"graph-opt,partition{{report={report}}}",
            "-o",
            str(output),
        ]
    )
    err = capsys.readouterr().err
    assert status == 0, err
    assert "remark: partition: target npu-demo-fp16, mode support: 33/33 ops on the NPU" in err
    data = json.loads(report.read_text())
    assert data["ops"] == {"total": 33, "npu": 33, "cpu": 0, "coverage": 1.0}
    result = parse_module(output.read_text(), make_context(), str(output), weights_dir=tmp_path)
    inputs = random_function_inputs(network, SEED)
    expected = run_function(network, inputs)
    actual = run_function(result, inputs)
    for name, value in expected.items():
        assert abs(actual[name] - value).max() < 1e-4


@pytest.mark.parametrize("mode", MODES)
def test_same_output_whatever_the_hash_seed(mode: str, tmp_path: Path) -> None:
    """The IR and the report do not depend on set or dict order (two processes)."""
    import subprocess
    import sys

    source = Path(__file__).parent / "filecheck" / "transforms" / "partition.mlir"
    irc_opt = Path(sys.executable).parent / "irc-opt"
    outputs = []
    for seed in ("1", "2"):
        report = tmp_path / f"report{seed}.json"
        completed = subprocess.run(
            [
                str(irc_opt),
                str(source),
                "--split-input-file",
                "-p",
                f"partition{{target={FLOAT_TARGET} mode={mode} report={report}}}",
            ],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=False,
        )
        assert completed.returncode == 0, completed.stderr
        outputs.append((completed.stdout, completed.stderr, report.read_text()))
    assert outputs[0] == outputs[1]


def test_the_cost_model_keeps_a_layer_with_no_tile_that_fits_on_the_host() -> None:
    """A softmax tiles in whole rows: with 16 KiB of SRAM a row of 16384 values (its
    input and output, 33 KiB) fits no tile, so the cost model places it on the host
    with the planner's reason (support mode leaves it to plan-tiles, which fails with
    it)."""

    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    bias = np.random.default_rng(0).standard_normal(16384).astype(np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("Add", ["x", "b"], ["a"]),
            helper.make_node("Softmax", ["a"], ["y"], axis=-1),
        ],
        "softmax",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16384])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 16384])],
        [numpy_helper.from_array(bias, "b")],
    )
    module = import_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    with collect_diagnostics():
        for module_pass in parse_pipeline(QUANTIZE):
            module_pass.apply(make_context(), module)
    target = load_target("edge-2tops")
    small = target.with_memory("sram", size_bytes=16384)
    with collect_diagnostics() as diagnostics:
        partition_module(module, small, "cost", outline_npu=False)
    # One warning says so: the layer's planner message, and how to make it an error.
    (warning,) = [d for d in diagnostics if d.severity == "warning"]
    assert warning.message.startswith(
        "qnn.softmax 'Softmax_1' does not fit target edge-2tops's NPU"
    )
    assert warning.hint is not None and "--partition support" in warning.hint
    placed = {op.name: op for op in module.walk() if DEVICE_ATTR in op.attributes}
    softmax = placed["qnn.softmax"]
    assert softmax.attributes[DEVICE_ATTR] == StringAttr("cpu")
    reason = softmax.attributes["irc.reason"]
    assert isinstance(reason, StringAttr)
    assert reason.data.startswith("does not fit the NPU: qnn.softmax needs at least 33280 bytes")
