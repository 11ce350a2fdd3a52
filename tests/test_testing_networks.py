"""The networks the suite builds itself (`irc.testing.networks`) are what they claim:
valid ONNX, the intended architecture, deterministic, with sane activations, and
imported and run by irc as onnxruntime runs them."""

from __future__ import annotations

from collections import Counter
from functools import cache

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from irc.importers.onnx import import_model
from irc.importers.reference import run_onnxruntime
from irc.interp import run_function
from irc.numerics import compare
from irc.testing.networks import NETWORKS, mobilenet_v2_style
from irc.testing.reference import random_inputs


@cache
def network(name: str, seed: int = 0) -> onnx.ModelProto:
    return NETWORKS[name](seed)


def op_counts(model: onnx.ModelProto) -> Counter[str]:
    return Counter(node.op_type for node in model.graph.node)


def test_mobilenet_v2_style_architecture() -> None:
    model = network("mobilenet_v2_style")
    counts = op_counts(model)
    # The stem, 10 blocks (depthwise and project convs; an expand conv in all but the
    # first), the head.
    assert counts["Conv"] == 1 + 10 * 2 + 9 + 1
    assert counts["BatchNormalization"] == counts["Conv"]
    assert counts["Clip"] == 1 + 10 + 9 + 1  # ReLU6 after all but the project convs
    assert counts["Add"] == 3  # the second block of each stage of two
    assert counts["Dropout"] == 1 and counts["Gemm"] == 1
    depthwise = [
        node
        for node in model.graph.node
        if node.op_type == "Conv" and any(a.name == "group" and a.i > 1 for a in node.attribute)
    ]
    assert len(depthwise) == 10
    assert [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim] == [1, 3, 96, 96]


def test_resnet_style_architecture() -> None:
    model = network("resnet_style")
    counts = op_counts(model)
    assert counts["Pad"] == 1 and counts["MaxPool"] == 1
    # stem, 4 basic blocks x 2, 3 bottlenecks x 3, 3 projection shortcuts.
    assert counts["Conv"] == 1 + 4 * 2 + 3 * 3 + 3
    assert counts["BatchNormalization"] == counts["Conv"]
    assert counts["Add"] == 7
    shortcuts = [node.name for node in model.graph.node if node.name.endswith(".shortcut")]
    assert shortcuts == ["layer2.0.shortcut", "layer3.0.shortcut", "layer4.0.shortcut"]


@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_network_is_valid_deterministic_and_sane(name: str) -> None:
    model = network(name)
    onnx.checker.check_model(model, full_check=True)
    again = NETWORKS[name](0)
    assert again.SerializeToString() == model.SerializeToString()
    other = NETWORKS[name](1)
    assert other.SerializeToString() != model.SerializeToString()
    initializers = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    variances = [array for key, array in initializers.items() if key.endswith(".running_var")]
    assert variances and all(np.all(v > 0) for v in variances)
    # Logits of unit scale that depend on the input: the network is neither dead nor
    # exploding.
    first = run_onnxruntime(model, random_inputs(model, seed=0))["logits"]
    second = run_onnxruntime(model, random_inputs(model, seed=1))["logits"]
    assert 0.3 < float(first.std()) < 3.0
    assert float(np.abs(first - second).mean()) > 0.1 * float(first.std())


@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_network_runs_in_irc_as_in_onnxruntime(name: str) -> None:
    model = network(name)
    inputs = random_inputs(model, seed=0)
    report = compare(
        run_function(import_model(model), inputs), run_onnxruntime(model, inputs), 1e-4, 1e-5
    )
    assert report.ok, report.format()


def test_batch_norm_statistics_are_measured() -> None:
    """Each batch norm normalises its input: the running statistics are those of the
    activations on random inputs, so the normalised values have mean ~0, variance ~1."""
    model = mobilenet_v2_style(0)
    from onnx import TensorProto, helper

    bn_inputs = {
        node.name: node.input[0]
        for node in model.graph.node
        if node.op_type == "BatchNormalization"
    }
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    for tensor in bn_inputs.values():
        probe.graph.output.append(helper.make_tensor_value_info(tensor, TensorProto.FLOAT, None))
    values = run_onnxruntime(probe, random_inputs(model, seed=5))
    initializers = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    for name, tensor in bn_inputs.items():
        mean = initializers[f"{name}.running_mean"]
        var = initializers[f"{name}.running_var"]
        normalised = (values[tensor] - mean[:, None, None]) / np.sqrt(var[:, None, None])
        assert abs(float(normalised.mean())) < 0.5, name
        assert 0.2 < float(normalised.var()) < 3.0, name
