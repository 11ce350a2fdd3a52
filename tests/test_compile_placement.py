"""Issue 18's acceptance, end to end: the target decides placement inside
`irc-compile`, and the compile is one pass pipeline that `irc-opt` reproduces.

- A stride-3 conv on npu-demo (strides 1 and 2) runs on the host, with the support
  table's reason; on a target file that allows stride 3 it runs on the NPU.
- On a target whose support table is empty the whole model runs on the host, and the
  package still computes what the integer (`qnn`) reference computes, bit for bit.
- The attention block on edge-2tops runs its four projections and both products of
  activations on the NPU; the report's coverage is the MACs counted by hand.
- `irc-import-onnx` + `irc-opt --pass-pipeline=<the manifest's pipeline>` gives the
  package's command stream and weights, byte for byte, on two models.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from irc.codegen import bytecode
from irc.codegen.package import MANIFEST, PROGRAM, WEIGHTS
from irc.diagnostics import collect_diagnostics
from irc.dialects import npu
from irc.driver.pipeline import CompileOptions, CompileResult, compile_model
from irc.driver.report import layers_csv, report_markdown, summary_text
from irc.importers.load import load_module
from irc.interp import run_function
from irc.ir.context import make_context
from irc.ir.io import parse_module
from irc.passes import parse_pipeline
from irc.runtime import Session
from irc.testing.networks import attention_block

ROOT = Path(__file__).resolve().parents[1]
PRESETS = ROOT / "irc" / "targets" / "presets"
DIGITS = ROOT / "models" / "digits" / "digits_cnn.onnx"
DIGITS_CALIBRATION = ROOT / "models" / "digits" / "digits_calibration.npz"

STRIDE_3_REASON = "stride 3x3: target npu-demo supports strides 1, 2"


def stride_3_model(path: Path) -> Path:
    """conv 3x3/1 -> relu -> conv 4x4/3 -> relu -> conv 1x1 on a 1x8x16x16 input."""
    rng = np.random.default_rng(3)

    def weight(name: str, *shape: int) -> onnx.TensorProto:
        fan_in = int(np.prod(shape[1:]))
        values = rng.standard_normal(shape) * np.sqrt(2 / fan_in)
        return numpy_helper.from_array(values.astype(np.float32), name)

    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
            helper.make_node("Conv", ["r1", "w2"], ["c2"], name="strided", strides=[3, 3]),
            helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
            helper.make_node("Conv", ["r2", "w3"], ["y"], name="conv3"),
        ],
        "stride3",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 5, 5])],
        [weight("w1", 8, 8, 3, 3), weight("w2", 8, 8, 4, 4), weight("w3", 8, 8, 1, 1)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return path


def celu_model(path: Path) -> Path:
    """conv 3x3 -> Celu(alpha 0.5) -> conv 1x1 on a 1x4x8x8 input: the op that
    docs/adding-an-op.md adds."""
    rng = np.random.default_rng(4)
    weights = [
        numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), name)
        for name, shape in (("w1", (8, 4, 3, 3)), ("w2", (4, 8, 1, 1)))
    ]
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w1"], ["c"], name="conv1", pads=[1, 1, 1, 1]),
            helper.make_node("Celu", ["c"], ["a"], name="celu", alpha=0.5),
            helper.make_node("Conv", ["a", "w2"], ["y"], name="conv2"),
        ],
        "celu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
        weights,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return path


def target_file(path: Path, preset: str, edit) -> Path:
    """A target file: the preset's text changed by `edit`, under a new name."""
    text = (PRESETS / f"{preset}.toml").read_text()
    text = edit(text).replace(f'name = "{preset}"', f'name = "{path.stem}"')
    path.write_text(text)
    return path


def without_support_table(text: str) -> str:
    """The target text without one [ops.<kind>] table: nothing runs on its NPU."""
    kept, dropping = [], False
    for line in text.splitlines(keepends=True):
        if line.startswith("["):
            dropping = line.startswith("[ops.")
        if not dropping:
            kept.append(line)
    return "".join(kept)


def compiled(model: Path, target: str, tmp_path: Path, **options) -> tuple[CompileResult, Path]:
    """Compile `model` for `target`, write the package, return both. The partition is
    by support unless `partition=` says otherwise: these tests are about what the
    support table decides (the cost model may move more to the host)."""
    options.setdefault("partition", "support")
    from irc.codegen.package import stage_files
    from irc.fileio import StagedOutputs

    result = compile_model(model, CompileOptions(target=target, **options))
    out = tmp_path / f"package-{Path(target).stem}"
    with StagedOutputs() as staged:
        stage_files(result.files, out, staged)
    return result, out


def integer_reference(
    model: Path,
    pipeline: str,
    inputs: dict[str, np.ndarray],
    input_shapes: dict[str, list[int]] | None = None,
    last: str = "lower-to-qnn",
) -> dict:
    """The outputs of the compile's own pipeline run up to `last` (by default
    `lower-to-qnn`: the int8 `qnn` module; `quantize`: the QDQ form), in the
    interpreter."""
    module = load_module("test", model, input_shapes or {})
    with collect_diagnostics():
        for module_pass in parse_pipeline(pipeline, require_anchor=True):
            module_pass.apply(make_context(), module)
            if module_pass.name == last:
                break
    return run_function(module, inputs)


def assert_bit_exact(
    result: CompileResult,
    model: Path,
    package: Path,
    seed: int = 0,
    input_shapes: dict[str, list[int]] | None = None,
) -> None:
    session = Session(package)
    rng = np.random.default_rng(seed)
    inputs = {
        spec["name"]: rng.standard_normal(spec["shape"]).astype(np.float32)
        for spec in session.package.inputs
    }
    expected = integer_reference(model, result.pipeline, inputs, input_shapes)
    got = session.run(inputs)
    assert got.keys() == expected.keys()
    for name, array in expected.items():
        np.testing.assert_array_equal(got[name], array, err_msg=name)


def host_reasons(result: CompileResult) -> dict[tuple[str, str], str]:
    """The report's reason of every host op, by (layer, op)."""
    return {(op.layer, op.op): op.reason for op in result.partition.cpu_ops}


# --------------------------------------------------------------------------------------
# The target decides


def test_a_stride_npu_demo_does_not_take_runs_on_the_host(tmp_path: Path) -> None:
    model = stride_3_model(tmp_path / "stride3.onnx")
    result, package = compiled(model, "npu-demo", tmp_path)
    reasons = host_reasons(result)
    assert reasons["strided", "qnn.conv"] == STRIDE_3_REASON
    assert reasons["strided", "qnn.requantize"] == (
        f"runs with its qnn.conv, which stays on the host: {STRIDE_3_REASON}"
    )
    assert "strided" not in result.partition.npu_layers
    assert {"conv1", "conv3"} <= set(result.partition.npu_layers)
    # The stride-3 conv's 8x8x4x4 window over a 5x5 output: its MACs are the host's.
    assert result.partition.cpu_macs == 5 * 5 * 8 * 8 * 4 * 4
    # The report's partition table and layers.csv say the same.
    assert f"| `strided` | qnn.conv | 25,600 | {STRIDE_3_REASON} |" in report_markdown(
        result, False
    )
    rows = {row["layer"]: row for row in csv.DictReader(io.StringIO(layers_csv(result)))}
    assert rows["strided"]["busy_host"] != "0" and rows["strided"]["busy_mac"] == "0"
    assert rows["conv1"]["busy_mac"] != "0"
    assert_bit_exact(result, model, package)


def test_a_target_file_that_allows_stride_3_runs_it_on_the_npu(tmp_path: Path) -> None:
    model = stride_3_model(tmp_path / "stride3.onnx")
    target = target_file(
        tmp_path / "npu-demo-stride3.toml",
        "npu-demo",
        lambda text: text.replace("strides = [1, 2]\n", "strides = [1, 2, 3]\n", 1),
    )
    result, package = compiled(model, str(target), tmp_path)
    assert "strided" in result.partition.npu_layers
    assert all(op.op.startswith("quant.") for op in result.partition.cpu_ops)
    assert result.partition.cpu_macs == 0
    assert_bit_exact(result, model, package)


def test_a_new_lookup_op_runs_where_the_support_table_lists_it(tmp_path: Path) -> None:
    """Celu, added as docs/adding-an-op.md walks it: int8 through a lookup table, on
    the host of npu-demo (its table has no celu), on the NPU of a target that lists it."""
    model = celu_model(tmp_path / "celu.onnx")
    result, package = compiled(model, "npu-demo", tmp_path)
    assert host_reasons(result)["celu", "qnn.lut"] == "celu: not in target npu-demo's support table"
    assert_bit_exact(result, model, package)
    target = target_file(
        tmp_path / "npu-demo-celu.toml",
        "npu-demo",
        lambda text: text + "\n[ops.celu]\nneeds_lut = true\n",
    )
    result, package = compiled(model, str(target), tmp_path)
    assert "celu" in result.partition.npu_layers
    assert result.partition.cpu_macs == 0
    assert_bit_exact(result, model, package)


@pytest.mark.parametrize("which", ["digits", "attention"])
def test_an_empty_support_table_puts_the_whole_model_on_the_host(
    which: str, tmp_path: Path
) -> None:
    if which == "digits":
        model, options = DIGITS, {"calibration_data": DIGITS_CALIBRATION}
    else:
        model, options = tmp_path / "attention.onnx", {}
        onnx.save(attention_block(), model)
    target = target_file(tmp_path / "no-ops.toml", "npu-demo", without_support_table)
    result, package = compiled(model, str(target), tmp_path, **options)
    assert result.partition.npu_layers == []
    assert result.partition.npu_macs == 0 and result.partition.cpu_macs > 0
    for op in result.partition.cpu_ops:
        if not op.op.startswith("quant."):
            assert "not in target no-ops's support table" in op.reason, op
    assert_bit_exact(result, model, package)


def test_the_attention_block_runs_its_matmuls_on_the_edge_2tops_npu(tmp_path: Path) -> None:
    model = tmp_path / "attention.onnx"
    onnx.save(attention_block(), model)
    result, package = compiled(model, "edge-2tops", tmp_path)
    # The four projections and Q x K^T and P x V, counted by hand (attention_block).
    assert result.partition.npu_macs == 4 * 16 * 32 * 32 + 2 * 16 * 16 * 32 == 81_920
    assert result.partition.cpu_macs == 0
    assert "NPU          " in (summary := summary_text(result)) and "(100.0%)" in summary
    # What stays on the host is what irc cannot lower yet, each with its reason.
    for op in result.partition.cpu_ops:
        assert op.reason, op
        assert op.op not in ("qnn.matmul", "qnn.gemm", "qnn.requantize"), op
    assert_bit_exact(result, model, package)


# --------------------------------------------------------------------------------------
# One pipeline: irc-opt reproduces irc-compile


@pytest.mark.parametrize("which", ["digits", "stride3"])
def test_irc_opt_runs_the_compile_s_pipeline_to_the_same_command_stream(
    which: str, tmp_path: Path
) -> None:
    from irc.tools.compile import main as irc_compile
    from irc.tools.import_onnx import main as irc_import_onnx
    from irc.tools.opt import main as irc_opt

    if which == "digits":
        model = DIGITS
        flags = ["--calibration-data", str(DIGITS_CALIBRATION)]
    else:
        model, flags = stride_3_model(tmp_path / "stride3.onnx"), []
    package = tmp_path / "package"
    assert irc_compile([str(model), "-o", str(package), "--no-progress", *flags]) == 0
    manifest = json.loads((package / MANIFEST).read_text())
    pipeline = manifest["pipeline"]
    imported, lowered = tmp_path / "model.mlir", tmp_path / "stream.mlir"
    assert irc_import_onnx([str(model), "--mlir-print-debuginfo", "-o", str(imported)]) == 0
    # Names travel as locations: both steps print them, as with mlir-opt.
    status = irc_opt(
        [
            str(imported),
            f"--pass-pipeline={pipeline}",
            "--mlir-print-debuginfo",
            "--weights",
            "resource",
            "-o",
            str(lowered),
        ]
    )
    assert status == 0
    module = parse_module(lowered.read_text(), make_context(), str(lowered))
    program, blob = bytecode.encode(module)
    assert program == (package / PROGRAM).read_bytes()
    assert blob == (package / WEIGHTS).read_bytes()


def test_a_float_models_input_and_output_convert_on_the_vector_unit(tmp_path: Path) -> None:
    """npu-demo lists quantize and dequantize: the digits CNN's float image is quantized
    and its logits dequantized by `npu.quantize`/`npu.dequantize`: nothing runs on the
    host, the host is not the busiest engine, the package is more than twice as fast as
    with host casts, and the results are the integer reference's, bit for bit."""
    options = {"calibration_data": DIGITS_CALIBRATION, "partition": "cost"}
    target = target_file(
        tmp_path / "npu-demo-host-casts.toml",
        "npu-demo",
        lambda text: text.replace("[ops.quantize]\n", "").replace("[ops.dequantize]\n", ""),
    )
    host_result, _ = compiled(DIGITS, str(target), tmp_path / "host", **options)
    assert {op.op for op in host_result.partition.cpu_ops} >= {"quant.qcast", "quant.dcast"}
    result, package = compiled(DIGITS, "npu-demo", tmp_path / "npu", **options)
    assert result.partition.cpu_ops == [] and result.partition.cpu_macs == 0
    simulation = result.simulation
    assert simulation.utilisation("host") == 0
    assert max(npu.QUEUES, key=simulation.utilisation) != "host"
    assert simulation.cycles < host_result.simulation.cycles / 2
    assert Session(package).inputs[0].npu_quantization is None  # the NPU takes floats
    assert_bit_exact(result, DIGITS, package)
