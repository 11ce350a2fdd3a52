"""The test-model harness: materialized light models, the pytorch backend cases, and
the onnxruntime reference with its comparison (irc/testing)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from irc.diagnostics import IrcError
from irc.importers.reference import run_onnxruntime
from irc.numerics import compare
from irc.testing.models import (
    HEAVY_LIGHT_MODELS,
    Role,
    heavy_in_this_process,
    light_model,
    light_models,
    materialize_light_model,
    parameter_roles,
    pytorch_cases,
    run_heavy_in_own_process,
)
from irc.testing.reference import random_inputs

SAMPLED_STATISTICS = 1 << 20
"""A larger parameter's statistics are those of a strided sample of this many values."""

LIGHT_MODELS = light_models(heavy=heavy_in_this_process())
"""The light models materialized in this process: VGG-19 in a process of its own."""

# Models materialized twice or three times: one of each kind (batch norms and residual
# sums, plain convolutions, a classifier reached through a Reshape) and small enough.
REPEATED_MODELS = ["resnet50", "squeezenet", "inception_v1"]


def test_all_light_models_are_found() -> None:
    names = {path.stem for path in light_models()}
    assert {"light_resnet50", "light_vgg19", "light_densenet121", "light_shufflenet"} <= names
    assert len(names) == 9
    assert {path.stem for path in light_models(heavy=False)} == names - {"light_vgg19"}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(HEAVY_LIGHT_MODELS))
def test_heavy_light_model_in_its_own_process(name: str) -> None:
    run_heavy_in_own_process(__file__, name)


@dataclass
class Materialized:
    """A light model after materialization, and its onnxruntime outputs on two inputs."""

    path: Path
    original: onnx.ModelProto
    model: onnx.ModelProto
    inputs: dict[str, np.ndarray]
    outputs: dict[str, np.ndarray]
    other_outputs: dict[str, np.ndarray]


@pytest.fixture(scope="module", params=LIGHT_MODELS, ids=lambda path: path.stem)
def materialized(request: pytest.FixtureRequest) -> Materialized:
    path: Path = request.param
    model = materialize_light_model(path, seed=0)
    inputs = random_inputs(model, seed=1)
    outputs = run_onnxruntime(model, inputs)
    other_outputs = run_onnxruntime(model, random_inputs(model, seed=2))
    return Materialized(path, onnx.load(str(path)), model, inputs, outputs, other_outputs)


@pytest.mark.slow
def test_light_model_materializes(materialized: Materialized) -> None:
    model, original = materialized.model, materialized.original
    onnx.checker.check_model(model)
    assert model.ir_version >= 4
    assert not [node for node in model.graph.node if node.op_type == "ConstantOfShape"]

    # Only the real inputs remain, with their shapes.
    original_initializers = {tensor.name for tensor in original.graph.initializer}
    expected_inputs = [
        (value.name, value.type.tensor_type)
        for value in original.graph.input
        if value.name not in original_initializers
    ]
    assert [(value.name, value.type.tensor_type) for value in model.graph.input] == expected_inputs
    # One array at a time: VGG-19's weights are 548 MB (a test process holds 2 GB).
    initializers = {tensor.name: tensor for tensor in model.graph.initializer}
    assert not {value.name for value in model.graph.input} & set(initializers)

    # Every parameter is random now: none is the constant the model shipped with.
    roles = parameter_roles(original)
    assert len(roles) >= 16
    for name, parameter in roles.items():
        values = numpy_helper.to_array(initializers[name])
        assert values.shape == parameter.shape, name
        assert np.isfinite(values.min()) and np.isfinite(values.max()), name
        if values.size > 1:
            assert values.min() < values.max(), f"{name} ({parameter.role}) is constant"


@pytest.mark.slow
def test_light_model_weights_have_their_role_statistics(materialized: Materialized) -> None:
    initializers = {tensor.name: tensor for tensor in materialized.model.graph.initializer}
    for name, parameter in parameter_roles(materialized.original).items():
        values = numpy_helper.to_array(initializers[name])
        if values.size > SAMPLED_STATISTICS:  # a strided sample: no float64 copy of it all
            values = values.reshape(-1)[:: values.size // SAMPLED_STATISTICS]
        values = values.astype(np.float64)
        match parameter.role:
            case Role.CONV_WEIGHT if values.size >= 1000 and parameter.shape[0] > 16:
                # He init; a layer feeding a Softmax is rescaled by calibration.
                expected = math.sqrt(2.0 / parameter.fan_in)
                assert values.std() == pytest.approx(expected, rel=0.1), name
            case Role.BN_VAR:
                assert np.all(values > 0), name
            case Role.BN_SCALE | Role.CHANNEL_SCALE:
                assert np.all((values >= 0.8) & (values <= 1.2)), name


@pytest.mark.slow
def test_light_model_runs_with_sensible_outputs(materialized: Materialized) -> None:
    producers = {
        output: node.op_type for node in materialized.model.graph.node for output in node.output
    }
    assert materialized.outputs
    for name, output in materialized.outputs.items():
        other = materialized.other_outputs[name]
        assert np.all(np.isfinite(output)), name
        flat = output.reshape(output.shape[0], -1).astype(np.float64)
        if producers[name] == "Softmax":
            classes = flat.shape[1]
            assert np.allclose(flat.sum(axis=1), 1.0, atol=1e-4)
            entropy = -np.sum(flat * np.log(np.maximum(flat, 1e-30)), axis=1)
            # Neither one-hot (entropy 0) nor uniform (log of the class count).
            assert np.all(entropy > 1.0), f"{name}: entropy {entropy}"
            assert np.all(entropy < 0.9 * math.log(classes)), f"{name}: entropy {entropy}"
            assert flat.max() < 0.9
        else:
            assert 0.05 < flat.std() < 100, f"{name}: std {flat.std()}"
        # The output depends on the input: another input moves it by a fair fraction.
        change = np.abs(other.astype(np.float64) - output).max()
        assert change > 0.05 * np.abs(output).max(), f"{name}: changed by {change}"


@pytest.mark.slow
@pytest.mark.parametrize("name", REPEATED_MODELS)
def test_materialization_is_deterministic_per_seed(name: str) -> None:
    path = light_model(name)
    first = materialize_light_model(path, seed=7)
    second = materialize_light_model(path, seed=7)
    assert first.SerializeToString() == second.SerializeToString()

    other = materialize_light_model(path, seed=8)
    inputs = random_inputs(first, seed=3)
    ours, theirs = run_onnxruntime(first, inputs), run_onnxruntime(other, inputs)
    first_weights = {t.name: numpy_helper.to_array(t) for t in first.graph.initializer}
    other_weights = {t.name: numpy_helper.to_array(t) for t in other.graph.initializer}
    for parameter in parameter_roles(onnx.load(str(path))):
        if first_weights[parameter].size > 1:
            assert not np.array_equal(first_weights[parameter], other_weights[parameter])
    for output, values in ours.items():
        assert not np.allclose(values, theirs[output], rtol=1e-3, atol=1e-4)


def test_parameters_are_found_by_role_not_by_name() -> None:
    # A tiny model in the light models' style: BN parameters with misleading names.
    shapes = {"w": [4, 3, 3, 3], "s": [4], "b": [4], "m": [4], "v": [4]}
    nodes, initializers = [], []
    for name, shape in shapes.items():
        initializers.append(numpy_helper.from_array(np.array(shape, np.int64), f"{name}_shape"))
        fill = helper.make_tensor("value", TensorProto.FLOAT, [1], [0.02])
        nodes.append(helper.make_node("ConstantOfShape", [f"{name}_shape"], [name], value=fill))
    nodes.append(helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]))
    # The "mean" input gets the tensor called "v" and the "variance" the one called "m".
    nodes.append(helper.make_node("BatchNormalization", ["c", "s", "b", "v", "m"], ["y"]))
    graph = helper.make_graph(
        nodes,
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    model.ir_version = 4
    roles = {name: parameter.role for name, parameter in parameter_roles(model).items()}
    assert roles == {
        "w": Role.CONV_WEIGHT,
        "s": Role.BN_SCALE,
        "b": Role.BN_BIAS,
        "v": Role.BN_MEAN,
        "m": Role.BN_VAR,
    }
    assert parameter_roles(model)["w"].fan_in == 27


# --------------------------------------------------------------------------------------
# The pytorch backend cases

PYTORCH_CASES = pytorch_cases()


def test_pytorch_cases_are_found() -> None:
    suites = {case.suite for case in PYTORCH_CASES}
    assert suites == {"pytorch-converted", "pytorch-operator"}
    assert len(PYTORCH_CASES) >= 100
    names = {case.name for case in PYTORCH_CASES}
    assert {"test_Conv2d", "test_BatchNorm2d_eval", "test_operator_add_broadcast"} <= names
    assert len({case.id for case in PYTORCH_CASES}) == len(PYTORCH_CASES)
    for case in PYTORCH_CASES:
        model = onnx.load(str(case.model_path))
        initializers = {tensor.name for tensor in model.graph.initializer}
        graph_inputs = [v.name for v in model.graph.input if v.name not in initializers]
        assert list(case.inputs) == graph_inputs, case.id
        assert list(case.outputs) == [value.name for value in model.graph.output], case.id
        assert all(array.size > 0 for array in case.inputs.values()), case.id


@pytest.mark.parametrize("case", PYTORCH_CASES, ids=lambda case: case.id)
def test_pytorch_case_matches_onnxruntime(case) -> None:
    report = compare(run_onnxruntime(case.model_path, case.inputs), case.outputs, 1e-4, 1e-5)
    assert report.ok, report.format()


# --------------------------------------------------------------------------------------
# The reference helpers


def test_compare_reports_errors_per_output() -> None:
    expected = {"a": np.array([1.0, 2.0, 0.0], np.float32), "b": np.arange(4, dtype=np.int64)}
    close = {"a": np.array([1.00005, 2.0, 5e-6], np.float32), "b": np.arange(4, dtype=np.int64)}
    report = compare(close, expected, rtol=1e-4, atol=1e-5)
    assert report.ok, report.format()
    assert report.outputs[0].max_abs_error == pytest.approx(5e-5, rel=0.05)
    assert report.outputs[0].max_rel_error == pytest.approx(5e-5, rel=0.05)

    far = {"a": np.array([1.0, 2.01, 0.0], np.float32), "b": np.array([0, 1, 2, 4])}
    report = compare(far, expected, rtol=1e-4, atol=1e-5)
    assert not report.ok
    a, b = report.outputs
    assert not a.ok and a.mismatched == 1
    assert a.max_abs_error == pytest.approx(0.01, rel=1e-3)
    assert a.max_rel_error == pytest.approx(0.005, rel=1e-3)
    assert not b.ok and b.max_abs_error == 1.0
    text = report.format()
    assert "FAIL" in text and "max abs 1.000e-02" in text


def test_compare_reports_structural_problems() -> None:
    expected = {"a": np.zeros(3, np.float32), "b": np.zeros(3, np.float32), "c": np.zeros(2)}
    actual = {"a": np.zeros(4, np.float32), "b": np.zeros(3, np.float16)}
    problems = [output.problem for output in compare(actual, expected).outputs]
    assert "shape [4] differs" in problems[0]
    assert "dtype float16 differs" in problems[1]
    assert problems[2] == "missing from the results"


def test_compare_nans_and_infinities() -> None:
    expected = {"a": np.array([np.nan, np.inf, 1.0])}
    assert compare({"a": np.array([np.nan, np.inf, 1.0])}, expected).ok
    assert not compare({"a": np.array([0.0, np.inf, 1.0])}, expected).ok
    assert not compare({"a": np.array([np.nan, 1e30, 1.0])}, expected).ok


def _gather_model(dims: list[int | str]) -> onnx.ModelProto:
    table = numpy_helper.from_array(np.ones((5, 3), np.float32), "table")
    graph = helper.make_graph(
        [
            helper.make_node("Gather", ["table", "ids"], ["rows"]),
            helper.make_node("Add", ["rows", "bias"], ["y"]),
        ],
        "gather",
        [
            helper.make_tensor_value_info("ids", TensorProto.INT64, dims),
            helper.make_tensor_value_info("bias", TensorProto.FLOAT, [3]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [table],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_random_inputs_are_seeded_and_valid() -> None:
    model = _gather_model([400])
    inputs = random_inputs(model, seed=5)
    assert inputs["ids"].dtype == np.int64 and inputs["bias"].dtype == np.float32
    # Indices cover the gathered axis (5 rows), and only it.
    assert set(np.unique(inputs["ids"])) == {0, 1, 2, 3, 4}
    assert abs(float(inputs["bias"].mean())) < 3
    again = random_inputs(model, seed=5)
    assert all(np.array_equal(inputs[name], again[name]) for name in inputs)
    assert not np.array_equal(inputs["bias"], random_inputs(model, seed=6)["bias"])
    # They run: every index is in range.
    assert run_onnxruntime(model, inputs)["y"].shape == (400, 3)


def test_random_inputs_need_static_shapes() -> None:
    model = _gather_model(["n"])
    with pytest.raises(IrcError) as failure:
        random_inputs(model, seed=0)
    diagnostic = failure.value.diagnostics[0]
    assert "input 'ids' has a dynamic shape (n)" in diagnostic.message
    assert diagnostic.hint and "--input-shape ids=" in diagnostic.hint
    assert random_inputs(model, seed=0, shapes={"ids": [7]})["ids"].shape == (7,)


def test_onnxruntime_rejections_are_diagnostics() -> None:
    model = _gather_model([4])
    with pytest.raises(IrcError, match="onnxruntime cannot run the reference model"):
        run_onnxruntime(model, {"ids": np.zeros(4, np.int64)})  # "bias" is missing
