"""The TFLite import (irc/importers/tflite.py) against LiteRT, tensor by tensor.

LiteRT's built-in int8 kernels (no XNNPACK) are the reference: on every small model
of `irc.testing.tflite_models` (one per supported operator and variant, and three
small networks), every tensor an operator computes must be bit for bit LiteRT's, at
every level of irc:

- the `qnn` integer reference interpreter, on three seeded inputs;
- the tile level (the module after `lower-to-tile`) on the model's outputs;
- the compiled command stream on the simulator, every layer (the capture of `irc-run
  --compare`), for edge-2tops and npu-demo, and the package run by `irc.runtime.Session`.

The tie models (`conv_ties`, `depthwise_ties_tail`, `add_ties`, ...) have
power-of-two multipliers whose products fall on exact ties: a test checks that each
of TFLite's rounding rules is needed there (rounding by another one fails).

No expected value depends on the CPU. LiteRT's do only through ruy's kernel path: its
portable C++ code (an x86 CPU without AVX2) breaks the ties of a conv's second rounding
away from zero, where its x86 (AVX2, AVX-512) and ARM kernels, which irc follows, round
them up. `litert.ruy_rounding()` asks LiteRT which it does; the `qnn` level is imported
with that rounding, and the compiled levels, which irc always compiles with ruy's
kernels' rounding, are compared with LiteRT where it computes that (and with irc's own
reference otherwise).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import StringAttr

from irc.diagnostics import IrcError
from irc.dialects import qnn
from irc.driver.pipeline import CompileOptions, compile_model, is_prequantized
from irc.importers.tflite import CONVERTERS, import_tflite, tensor_locations
from irc.interp import run_function
from irc.ir.io import verify_module
from irc.testing import litert, tflite_models
from irc.tools.import_tflite import main as irc_import_tflite

MODELS = {**tflite_models.SINGLE_OP_MODELS, **tflite_models.NETWORKS}
VIEWS = {"RESHAPE", "SQUEEZE", "EXPAND_DIMS"}
SEEDS = (0, 1, 2)


@functools.cache
def model_bytes(name: str) -> bytes:
    return MODELS[name](0)


def used_opcodes(model: bytes) -> set[str]:
    return {operator.opcode for operator in litert.model_info(model).operators}


def test_every_supported_operator_has_a_test_model() -> None:
    covered = set().union(*(used_opcodes(model_bytes(name)) for name in MODELS))
    assert set(CONVERTERS) <= covered, f"no test model uses {set(CONVERTERS) - covered}"


def test_models_are_deterministic() -> None:
    for name, build in MODELS.items():
        assert build(0) == model_bytes(name), name
    for name, build in tflite_models.NETWORKS.items():
        assert build(1) != model_bytes(name), f"{name} ignores its seed"


@pytest.mark.parametrize("name", sorted(MODELS))
def test_qnn_matches_litert_on_every_tensor(name: str) -> None:
    model = model_bytes(name)
    module = import_tflite(model, ruy_rounding=litert.ruy_rounding())
    verify_module(module)
    assert is_prequantized(module)
    for seed in SEEDS:
        inputs = litert.random_inputs(model, seed)
        compared, mismatches = litert.compare(
            model, litert.qnn_tensors(module, inputs), litert.litert_tensors(model, inputs)
        )
        computed = {i for op in litert.model_info(model).operators for i in op.outputs}
        assert compared == len(computed), f"{name}: compared {compared} of {len(computed)} tensors"
        assert not mismatches, f"{name}, seed {seed}: " + "; ".join(map(str, mismatches))


# The tie models, each with a rounding whose replacement by another must show.
RUY = "ruy's"
"""In TIES: the rounding LiteRT's conv computes on this CPU (`litert.ruy_rounding`)."""

TIES = [
    ("conv_ties", qnn.RequantizeOp, "rounding", RUY, "half_up"),
    ("conv_ties", qnn.RequantizeOp, "rounding", RUY, "half_even"),
    ("depthwise_ties_tail", qnn.RequantizeOp, "rounding", "double_away", "double_up"),
    ("depthwise_ties_tail", qnn.RequantizeOp, "rounding", "double_up", "double_away"),
    ("add_ties", qnn.AddOp, "rounding", "double_away", "double_up"),
    ("average_pool_valid", qnn.AveragePoolOp, "rounding", "half_away", "half_even"),
    ("mean", qnn.GlobalAveragePoolOp, "rounding", "double_away", "half_even"),
    ("mean_keep_dims_ties_tail", qnn.GlobalAveragePoolOp, "rounding", "double_up", "double_away"),
    ("mean_keep_dims_ties_tail", qnn.GlobalAveragePoolOp, "rounding", "double_away", "double_up"),
    ("quantize_int8", qnn.RequantizeOp, "rounding", "double_up", "double_away"),
    ("quantize_int8_tail", qnn.RequantizeOp, "rounding", "double_away", "double_up"),
]


@pytest.mark.parametrize(("name", "op_class", "prop", "rule", "other"), TIES)
def test_each_rounding_rule_is_needed(
    name: str, op_class: type, prop: str, rule: str, other: str
) -> None:
    """On the tie models LiteRT's tensors pin the rounding: irc with the rule of one
    kernel replaced by another differs from LiteRT somewhere."""
    model = model_bytes(name)
    ruy = litert.ruy_rounding()
    rule = ruy if rule == RUY else rule
    module = import_tflite(model, ruy_rounding=ruy)
    changed = 0
    for op in module.walk():
        if isinstance(op, op_class) and op.props().str(prop) == rule:
            op.properties[prop] = StringAttr(other)
            changed += 1
    assert changed, f"{name} has no {op_class.name} rounding {rule}"
    differing = 0
    for seed in SEEDS:
        inputs = litert.random_inputs(model, seed)
        expected = litert.litert_tensors(model, inputs)
        differing += len(litert.compare(model, litert.qnn_tensors(module, inputs), expected)[1])
    assert differing, f"{name}: rounding {other} instead of {rule} gives LiteRT's tensors too"


def test_the_conv_ties_tell_ruys_two_roundings_apart() -> None:
    """On `conv_ties` ruy's two ways of rounding give other integers (so that
    `litert.ruy_rounding` can tell which LiteRT computes)."""
    model = model_bytes("conv_ties")
    inputs = litert.random_inputs(model, 0)
    up, away = (
        litert.qnn_tensors(import_tflite(model, ruy_rounding=rounding), inputs)
        for rounding in ("double_up", "double_away")
    )
    assert any(not np.array_equal(up[name], away[name]) for name in up)
    assert litert.ruy_rounding() in ("double_up", "double_away")


def expected_for_compiled(model: bytes, inputs: list[np.ndarray]) -> dict[int, np.ndarray]:
    """The tensors a compiled model must compute: LiteRT's, where LiteRT computes ruy's
    kernels' rounding (irc compiles with it); else irc's reference of that rounding,
    whose agreement with LiteRT in everything else the qnn test checks."""
    if litert.ruy_rounding() == "double_up":
        return litert.litert_tensors(model, inputs)
    reference = litert.qnn_tensors(import_tflite(model), inputs)
    locations = tensor_locations(model)
    return {index: reference[name] for index, name in locations.items() if name in reference}


def lowered_to_tile(model: bytes, target: str) -> object:
    """The imported module after the compile's pipeline up to `lower-to-tile`."""
    from irc.ir.context import make_context
    from irc.passes import parse_pipeline

    module = import_tflite(model)
    pipeline = CompileOptions(target=target, prequantized=True).pipeline()
    for module_pass in parse_pipeline(pipeline, require_anchor=True):
        if module_pass.name == "lower-to-npu":
            break
        module_pass.apply(make_context(), module)
    return module


@pytest.mark.parametrize("target", ["edge-2tops", "npu-demo"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_tile_level_and_simulator_match_litert(name: str, target: str, tmp_path: Path) -> None:
    model = model_bytes(name)
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(model)
    inputs = litert.random_inputs(model, 0)
    expected = expected_for_compiled(model, inputs)
    info = litert.model_info(model)
    locations = tensor_locations(model)
    # The tile level: the model's outputs.
    tile_outputs = run_function(lowered_to_tile(model, target), inputs)  # type: ignore[arg-type]
    for index in info.outputs:
        np.testing.assert_array_equal(tile_outputs[locations[index]], expected[index])
    # The command stream on the simulator: every layer, and the outputs.
    simulated = litert.simulated_tensors(path, CompileOptions(target=target), inputs)
    compared, mismatches = litert.compare(model, simulated.tensors, expected)
    # Views (a reshape's output is its input's buffer) are no layers of their own.
    assert compared or used_opcodes(model) <= VIEWS, f"{name}: no layer compared"
    assert not mismatches, f"{name} on {target}: " + "; ".join(map(str, mismatches))
    for index in info.outputs:
        np.testing.assert_array_equal(simulated.outputs[locations[index]], expected[index])


# Models whose every layer runs on the NPU of edge-2tops (the default cost partition).
ON_THE_NPU = [
    "conv_same_relu6", "depthwise_relu6", "depthwise_ties_tail", "fully_connected", "add",
    "add_broadcast", "mul", "average_pool_same", "max_pool_same_relu", "pad", "hard_swish",
    "quantize_int8", "mobilenet_v2_block", "resnet_block",
]  # fmt: skip


@pytest.mark.parametrize("name", ON_THE_NPU)
def test_layers_run_on_the_npu(name: str, tmp_path: Path) -> None:
    model = model_bytes(name)
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(model)
    simulated = litert.simulated_tensors(
        path, CompileOptions(target="edge-2tops", partition="support"), litert.random_inputs(model)
    )
    assert simulated.on_npu, f"{name}: nothing on the NPU"
    assert set(simulated.tensors) == simulated.on_npu, f"{name}: some layers on the host"


@pytest.mark.parametrize("name", sorted(tflite_models.NETWORKS))
def test_package_session_matches_litert(name: str, tmp_path: Path) -> None:
    from irc.codegen.package import stage_files
    from irc.fileio import StagedOutputs
    from irc.runtime import Session

    model = model_bytes(name)
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(model)
    result = compile_model(path, CompileOptions(target="edge-2tops"))
    assert result.options.prequantized
    assert "quantize" not in result.pipeline and result.errors is None
    package = tmp_path / "package"
    with StagedOutputs() as staged:
        stage_files(result.files, package, staged)
    manifest = json.loads((package / "manifest.json").read_text())
    assert manifest["options"]["prequantized"] is True
    info = litert.model_info(model)
    locations = tensor_locations(model)
    with Session(package) as session:
        for seed in SEEDS:
            inputs = litert.random_inputs(model, seed)
            expected = expected_for_compiled(model, inputs)
            feeds = {locations[index]: value for index, value in zip(info.inputs, inputs)}
            outputs = session.run(feeds)
            for index in info.outputs:
                np.testing.assert_array_equal(outputs[locations[index]], expected[index])


# --------------------------------------------------------------------------------------
# The importer's output and errors


def test_import_keeps_names_and_types(tmp_path: Path) -> None:
    model = model_bytes("mobilenet_v2_block")
    module = import_tflite(model)
    text = str(module)
    assert '{irc.name = "input"}' in text
    assert "!quant.uniform<i8:f32, 0.05000000074505806:-3>" in text  # the float32 scale
    assert 'rounding = "double_up"' in text and 'layout = "nhwc"' in text
    path = tmp_path / "block.tflite"
    path.write_bytes(model)
    out = tmp_path / "block.mlir"
    assert irc_import_tflite([str(path), "-o", str(out)]) == 0
    assert out.read_text().count("qnn.conv") == 3
    assert (tmp_path / "block.weights.npz").is_file()


def test_duplicate_tensor_names_get_unique_locations() -> None:
    builder = tflite_models.TFLiteBuilder(0)
    x = builder.activation("x", (1, 4), 0.1, 0)
    first = builder.activation("same", (1, 4), 0.05, 0)
    second = builder.activation("same", (1, 4), 0.025, 0)
    builder.operator("RELU", [x], [first])
    builder.operator("RELU", [first], [second])
    model = builder.finish([x], [second])
    assert list(tensor_locations(model).values()) == ["x", "same", "same (tensor 2)"]
    inputs = litert.random_inputs(model)
    module = import_tflite(model)
    compared, mismatches = litert.compare(
        model, litert.qnn_tensors(module, inputs), litert.litert_tensors(model, inputs)
    )
    assert compared == 2 and not mismatches


def test_float_model_is_one_error() -> None:
    builder = tflite_models.TFLiteBuilder(0)
    x = builder.tensor("x", (1, 4, 4, 2), "float32")
    w = builder.tensor("w", (2, 1, 1, 2), "float32", data=np.ones((2, 1, 1, 2), np.float32))
    y = builder.tensor("y", (1, 4, 4, 2), "float32")
    builder.operator("CONV_2D", [x, w, -1], [y], "Conv2DOptions", Padding=0, StrideW=1, StrideH=1)
    with pytest.raises(IrcError) as failure:
        import_tflite(builder.finish([x], [y]))
    (diagnostic,) = failure.value.diagnostics
    assert "computes in float" in diagnostic.message
    assert "full-integer quantization" in (diagnostic.hint or "")


def test_unsupported_operators_are_listed_in_one_error() -> None:
    builder = tflite_models.TFLiteBuilder(0)
    x = builder.activation("x", (1, 4), 0.1, 0)
    y = builder.activation("y", (1, 4), 0.1, 0)
    z = builder.activation("z", (1, 4), 0.1, 0)
    builder.custom("Frobnicate", [x], [y])
    builder.operator("GATHER", [y], [z])
    with pytest.raises(IrcError) as failure:
        import_tflite(builder.finish([x], [z]), source="m.tflite")
    (diagnostic,) = failure.value.diagnostics
    assert "2 operators irc does not import" in diagnostic.message
    assert "#0 CUSTOM 'Frobnicate' (writing 'y')" in diagnostic.message
    assert "#1 GATHER (writing 'z')" in diagnostic.message
    assert str(diagnostic.location) == "m.tflite: tensor 'y'"
