"""`fold-batchnorm`: folded and lowered batch norms compute what they replaced.

Every case runs the interpreter before and after the pass on seeded random inputs
(`apply_and_compare`, rtol 1e-4) and checks what became of each batch norm: folded
into its producer (no mul/add left), or lowered to a per-channel mul and add. The
weights are random, the variances positive and far from 1, so that a scale applied
along the wrong axis or to the wrong group shows in the numbers.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from irc.diagnostics import collect_diagnostics
from irc.dialects import nn
from irc.importers.onnx import import_model
from irc.ir.context import make_context
from irc.ir.io import parse_module
from irc.testing.models import light_model, materialize_light_model
from irc.testing.numerics import apply_and_compare
from irc.transforms.fold_batchnorm import (
    scale_conv_transpose_weight,
    scale_gemm_weight,
)

RTOL = 1e-4
RNG_SEED = 3

# --------------------------------------------------------------------------------------
# Building test IR


def tensor(shape: tuple[int, ...]) -> str:
    return f"tensor<{'x'.join(map(str, shape))}{'x' if shape else ''}f32>"


def constant(name: str, array: np.ndarray) -> str:
    """An nn.constant line holding `array` (as float32)."""
    values = json.dumps(np.asarray(array, np.float32).tolist())
    return f"  %{name} = nn.constant dense<{values}> : {tensor(array.shape)}\n"


def batch_norm_constants(channels: int, rng: np.random.Generator) -> str:
    """gamma, beta, mean and var of a batch norm over `channels`, var in [0.1, 4]."""
    return (
        constant("gamma", rng.uniform(0.5, 2.0, channels) * rng.choice([-1, 1], channels))
        + constant("beta", rng.standard_normal(channels))
        + constant("mean", rng.standard_normal(channels))
        + constant("var", rng.uniform(0.1, 4.0, channels))
    )


def batch_norm(value: str, shape: tuple[int, ...], layout: str = "nchw") -> str:
    properties = ' {layout = "nhwc"}' if layout == "nhwc" else ""
    channels = shape[-1] if layout == "nhwc" else shape[1]
    parameter = tensor((channels,))
    return (
        f"  %z = nn.batch_norm %{value}, %gamma, %beta, %mean, %var{properties} : "
        f"({tensor(shape)}, {parameter}, {parameter}, {parameter}, {parameter}) -> {tensor(shape)}\n"
    )


def function(inputs: dict[str, tuple[int, ...]], body: str, result: tuple[int, ...]) -> str:
    arguments = ", ".join(f"%{name}: {tensor(shape)}" for name, shape in inputs.items())
    return (
        f"func.func @main({arguments}) -> {tensor(result)} {{\n{body}"
        f"  func.return %z : {tensor(result)}\n}}\n"
    )


def parse(text: str) -> ModuleOp:
    return parse_module(text, make_context(), "test.mlir")


def op_counts(module: ModuleOp) -> Counter[str]:
    return Counter(op.name for op in module.walk())


@dataclass(frozen=True)
class FoldCase:
    """A producer with a random constant weight (and bias), then a batch norm."""

    producer: str
    x: tuple[int, ...]
    weight: tuple[int, ...]
    properties: str
    result: tuple[int, ...]
    bias: tuple[int, ...] | None = None
    layout: str = "nchw"


def producer_case(case: FoldCase, seed: int = RNG_SEED) -> ModuleOp:
    """The case's producer with random constant weights, then a batch norm of its result."""
    rng = np.random.default_rng(seed)
    body = constant("w", rng.standard_normal(case.weight))
    operands = "%x, %w"
    operand_types = f"{tensor(case.x)}, {tensor(case.weight)}"
    if case.bias is not None:
        body += constant("b", rng.standard_normal(case.bias))
        operands += ", %b"
        operand_types += f", {tensor(case.bias)}"
    channels_last = case.layout == "nhwc" or len(case.result) == 2
    body += batch_norm_constants(case.result[-1] if channels_last else case.result[1], rng)
    body += (
        f"  %y = nn.{case.producer} {operands} {case.properties} : "
        f"({operand_types}) -> {tensor(case.result)}\n"
    )
    body += batch_norm("y", case.result, case.layout)
    return parse(function({"x": case.x}, body, case.result))


# --------------------------------------------------------------------------------------
# Folding into the producer


FOLD_CASES = {
    "conv": FoldCase("conv", (1, 3, 7, 7), (5, 3, 3, 3), "{pads = [1, 1, 1, 1]}", (1, 5, 7, 7)),
    "conv_bias_strided": FoldCase(
        "conv", (2, 3, 9, 8), (4, 3, 3, 2), "{strides = [2, 1]}", (2, 4, 4, 7), bias=(4,)
    ),
    "conv_group_2": FoldCase(
        "conv", (1, 4, 5, 5), (6, 2, 3, 3), "{group = 2}", (1, 6, 3, 3), bias=(6,)
    ),
    "conv_depthwise": FoldCase(
        "conv", (1, 4, 5, 5), (8, 1, 3, 3), "{group = 4, pads = [1, 1, 1, 1]}", (1, 8, 5, 5)
    ),
    "conv_1d": FoldCase("conv", (2, 3, 10), (5, 3, 3), "{dilations = [2]}", (2, 5, 6), bias=(5,)),
    "conv_3d": FoldCase("conv", (1, 2, 4, 4, 4), (3, 2, 2, 2, 2), "", (1, 3, 3, 3, 3)),
    "conv_channels_last": FoldCase(
        "conv", (1, 6, 5, 3), (4, 3, 2, 3), '{layout = "nhwc"}', (1, 4, 4, 4), (4,), "nhwc"
    ),
    "conv_channels_last_group_2": FoldCase(
        "conv",
        (1, 5, 5, 4),
        (6, 3, 3, 2),
        '{group = 2, layout = "nhwc"}',
        (1, 3, 3, 6),
        layout="nhwc",
    ),
    "conv_transpose": FoldCase(
        "conv_transpose", (1, 3, 4, 4), (3, 5, 3, 3), "{strides = [2, 2]}", (1, 5, 9, 9), (5,)
    ),
    "conv_transpose_group_2": FoldCase(
        "conv_transpose", (1, 4, 3, 3), (4, 3, 2, 2), "{group = 2}", (1, 6, 4, 4)
    ),
    "conv_transpose_group_3_bias": FoldCase(
        "conv_transpose",
        (2, 6, 3, 3),
        (6, 2, 3, 3),
        "{group = 3, pads = [1, 1, 1, 1]}",
        (2, 6, 3, 3),
        bias=(6,),
    ),
    "conv_transpose_channels_last_group_2": FoldCase(
        "conv_transpose",
        (1, 3, 3, 4),
        (4, 2, 2, 3),
        '{group = 2, layout = "nhwc"}',
        (1, 4, 4, 6),
        (6,),
        "nhwc",
    ),
    "gemm": FoldCase("gemm", (4, 3), (3, 5), "", (4, 5), bias=(5,)),
    "gemm_trans_b": FoldCase("gemm", (4, 3), (5, 3), "{trans_b = true}", (4, 5)),
    "gemm_trans_b_alpha_beta": FoldCase(
        "gemm", (4, 3), (5, 3), "{alpha = 1.5, beta = 0.5, trans_b = true}", (4, 5), bias=(5,)
    ),
    "gemm_trans_a_full_bias": FoldCase(
        "gemm", (3, 4), (3, 5), "{beta = 2.0, trans_a = true}", (4, 5), bias=(4, 5)
    ),
    "gemm_row_bias": FoldCase("gemm", (4, 3), (5, 3), "{trans_b = true}", (4, 5), bias=(4, 1)),
    "gemm_channels_last_batch_norm": FoldCase("gemm", (4, 3), (3, 5), "", (4, 5), layout="nhwc"),
}


@pytest.mark.parametrize("name", FOLD_CASES)
def test_batch_norm_folds_into_its_producer(name: str) -> None:
    case = FOLD_CASES[name]
    module = producer_case(case)
    after = apply_and_compare(module, "fold-batchnorm", rtol=RTOL)
    counts = op_counts(after)
    assert counts["nn.batch_norm"] == 0
    assert counts[f"nn.{case.producer}"] == 1
    assert counts["nn.mul"] == counts["nn.add"] == 0
    # The folded producer has a bias, and only its weight and bias are constants.
    folded = next(op for op in after.walk() if op.name == f"nn.{case.producer}")
    assert len(folded.operands) == 3
    assert counts["nn.constant"] == 2
    assert "beta" not in folded.properties


def test_folded_constants_keep_the_weight_locations() -> None:
    module = producer_case(FoldCase("conv", (1, 3, 5, 5), (4, 3, 3, 3), "", (1, 4, 3, 3)))
    after = apply_and_compare(module, "fold-batchnorm", rtol=RTOL)
    conv = next(op for op in after.walk() if isinstance(op, nn.ConvOp))
    weight_owner = conv.weight.owner
    assert isinstance(weight_owner, nn.ConstantOp)
    before_weight = next(
        op for op in module.walk() if isinstance(op, nn.ConstantOp) and op.result.name_hint == "w"
    )
    assert weight_owner.location == before_weight.location
    assert conv.weight.name_hint == "w"


def test_conv_transpose_groups_scale_the_right_entries() -> None:
    # (C=4, M/group=2) with 2 groups: input channels 0-1 write output channels 0-1,
    # input channels 2-3 write output channels 2-3.
    weight = np.ones((4, 2, 1, 1))
    scaled = scale_conv_transpose_weight(weight, np.array([1.0, 2.0, 3.0, 4.0]), 2, False)
    np.testing.assert_array_equal(scaled[:, :, 0, 0], [[1, 2], [1, 2], [3, 4], [3, 4]])
    channels_last = scale_conv_transpose_weight(
        np.ones((4, 1, 1, 2)), np.array([1.0, 2.0, 3.0, 4.0]), 2, True
    )
    np.testing.assert_array_equal(channels_last[:, 0, 0, :], [[1, 2], [1, 2], [3, 4], [3, 4]])


def test_gemm_scales_the_columns_of_op_b() -> None:
    scale = np.array([2.0, 3.0])
    np.testing.assert_array_equal(scale_gemm_weight(np.ones((3, 2)), scale, False)[0], [2, 3])
    np.testing.assert_array_equal(scale_gemm_weight(np.ones((2, 3)), scale, True)[:, 0], [2, 3])


def test_chained_batch_norms_fold_one_after_the_other() -> None:
    rng = np.random.default_rng(RNG_SEED)
    shape = (1, 4, 5, 5)
    body = constant("w", rng.standard_normal((4, 3, 1, 1))) + batch_norm_constants(4, rng)
    body += f"  %y = nn.conv %x, %w : ({tensor((1, 3, 5, 5))}, {tensor((4, 3, 1, 1))}) -> {tensor(shape)}\n"
    body += batch_norm("y", shape).replace("%z =", "%first =")
    body += batch_norm("first", shape)
    after = apply_and_compare(parse(function({"x": (1, 3, 5, 5)}, body, shape)), "fold-batchnorm")
    counts = op_counts(after)
    assert counts["nn.batch_norm"] == counts["nn.mul"] == 0
    assert counts["nn.conv"] == 1


# --------------------------------------------------------------------------------------
# Lowering to a per-channel scale and shift


def unfused_case(name: str) -> tuple[ModuleOp, int]:
    """A batch norm that cannot fold, and the number of convs the module keeps."""
    rng = np.random.default_rng(RNG_SEED)
    match name:
        case "after_concat":
            shape = (1, 6, 4, 4)
            body = batch_norm_constants(6, rng)
            body += f"  %c = nn.concat %a, %b {{axis = 1}} : ({tensor((1, 2, 4, 4))}, {tensor((1, 4, 4, 4))}) -> {tensor(shape)}\n"
            body += batch_norm("c", shape)
            return parse(function({"a": (1, 2, 4, 4), "b": (1, 4, 4, 4)}, body, shape)), 0
        case "channels_last":
            shape = (2, 3, 4, 5)
            body = batch_norm_constants(5, rng) + batch_norm("x", shape, "nhwc")
            return parse(function({"x": shape}, body, shape)), 0
        case "rank_2":
            shape = (3, 5)
            body = batch_norm_constants(5, rng) + batch_norm("x", shape)
            return parse(function({"x": shape}, body, shape)), 0
        case "rank_3":
            shape = (2, 5, 7)
            body = batch_norm_constants(5, rng) + batch_norm("x", shape)
            return parse(function({"x": shape}, body, shape)), 0
        case "conv_with_two_users" | "conv_with_activation" | "layout_mismatch":
            x_shape, w_shape, shape = (1, 3, 5, 5), (4, 3, 1, 1), (1, 4, 5, 5)
            properties = "{activation = #nn.activation<relu>}" if "activation" in name else ""
            bn_layout = "nchw"
            if name == "layout_mismatch":
                # A channels-last conv whose result a channels-first batch norm reads:
                # its channel axis (1) is a spatial axis of the conv.
                x_shape, w_shape, shape = (1, 4, 4, 3), (4, 1, 1, 3), (1, 4, 4, 4)
                properties = '{layout = "nhwc"}'
            body = constant("w", rng.standard_normal(w_shape)) + batch_norm_constants(4, rng)
            body += f"  %y = nn.conv %x, %w {properties} : ({tensor(x_shape)}, {tensor(w_shape)}) -> {tensor(shape)}\n"
            body += batch_norm("y", shape, bn_layout)
            if name == "conv_with_two_users":
                body = body.replace("%z = nn.batch_norm", "%n = nn.batch_norm")
                body += f"  %z = nn.add %n, %y : {tensor(shape)}\n"
            return parse(function({"x": x_shape}, body, shape)), 1
    raise AssertionError(name)


UNFUSED_CASES = [
    "after_concat",
    "channels_last",
    "rank_2",
    "rank_3",
    "conv_with_two_users",
    "conv_with_activation",
    "layout_mismatch",
]


@pytest.mark.parametrize("name", UNFUSED_CASES)
def test_unfoldable_batch_norm_becomes_scale_and_shift(name: str) -> None:
    module, convs = unfused_case(name)
    adds_before = op_counts(module)["nn.add"]
    after = apply_and_compare(module, "fold-batchnorm", rtol=RTOL)
    counts = op_counts(after)
    assert counts["nn.batch_norm"] == 0
    assert counts["nn.mul"] == 1
    assert counts["nn.add"] == adds_before + 1
    assert counts["nn.conv"] == convs
    # Only the scale and shift (and a conv's weight) remain as constants.
    assert counts["nn.constant"] == 2 + convs


@pytest.mark.parametrize("name", ["after_concat", "conv_with_activation"])
def test_lower_unfused_false_keeps_unfoldable_batch_norms(name: str) -> None:
    module, _ = unfused_case(name)
    after = apply_and_compare(module, "fold-batchnorm{lower-unfused=false}", rtol=RTOL)
    assert op_counts(after)["nn.batch_norm"] == 1
    assert op_counts(after)["nn.mul"] == 0


def test_non_constant_parameters_are_left_with_a_remark() -> None:
    shape = (1, 4, 5, 5)
    body = batch_norm("x", shape)
    text = function(
        {"x": shape, "gamma": (4,), "beta": (4,), "mean": (4,), "var": (4,)}, body, shape
    )
    module = parse(text)
    with collect_diagnostics() as diagnostics:
        after = apply_and_compare(module, "fold-batchnorm", rtol=RTOL)
    assert op_counts(after)["nn.batch_norm"] == 1
    assert [d.severity.value for d in diagnostics] == ["remark"]
    assert "not constants" in diagnostics[0].message
    assert diagnostics[0].location.line == 2  # the batch norm's line


# --------------------------------------------------------------------------------------
# The light models with batch norms

LIGHT_MODELS_WITH_BATCH_NORM = {
    # model: (batch norms folded into a conv, batch norms lowered to mul and add)
    "resnet50": (53, 0),
    "shufflenet": (49, 0),
    # Last, and in the order of LIGHT_MODELS_WITH_AFFINE_CHAINS: `imported` keeps them
    # for its tests.
    "densenet121": (59, 62),  # after concat and pooling, which nothing folds into
    "inception_v2": (69, 0),
}


# Two models (77 MB of float weights): DenseNet-121 and Inception v2, which both light
# model tests import, are imported once (tests/conftest.py empties it after the module).
@lru_cache(maxsize=2)
def imported(name: str) -> ModuleOp:
    """The light model `name` with seeded random weights, imported (tests must not
    change it: `apply_and_compare` works on a copy)."""
    path: Path = light_model(name)
    return import_model(materialize_light_model(path, seed=0))


@pytest.mark.slow
@pytest.mark.parametrize("name", LIGHT_MODELS_WITH_BATCH_NORM)
def test_light_model_keeps_no_batch_norm(name: str) -> None:
    module = imported(name)
    before = op_counts(module)
    after = apply_and_compare(module, "fold-batchnorm{chains=false}", rtol=RTOL)
    counts = op_counts(after)
    folded, lowered = LIGHT_MODELS_WITH_BATCH_NORM[name]
    assert before["nn.batch_norm"] == folded + lowered
    assert counts["nn.batch_norm"] == 0
    assert counts["nn.mul"] - before["nn.mul"] == lowered
    assert counts["nn.conv"] == before["nn.conv"]


# --------------------------------------------------------------------------------------
# Chains of constant scales and shifts


LIGHT_MODELS_WITH_AFFINE_CHAINS = {
    # model: (muls (and adds) by constants after fold-batchnorm without chains, with)
    # DenseNet-121: a Caffe scale layer (mul, add) after each of its 121 batch norms;
    # the 62 after a concat or pooling stay, as one mul and one add each, the 59 after
    # a conv fold into it. Inception v2: every scale layer follows a conv.
    "densenet121": (183, 62),
    "inception_v2": (69, 0),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", LIGHT_MODELS_WITH_AFFINE_CHAINS)
def test_light_model_affine_chains_combine(name: str) -> None:
    module = imported(name)
    # canonicalize first, as graph-opt does: it folds the unsqueezes of the constants.
    unchained_module = apply_and_compare(
        module, "canonicalize,fold-batchnorm{chains=false}", rtol=RTOL
    )
    unchained = op_counts(unchained_module)
    after = apply_and_compare(module, "canonicalize,fold-batchnorm", rtol=RTOL)
    counts = op_counts(after)
    expected_before, expected_after = LIGHT_MODELS_WITH_AFFINE_CHAINS[name]
    assert (unchained["nn.mul"], counts["nn.mul"]) == (expected_before, expected_after)
    assert unchained["nn.add"] - counts["nn.add"] == expected_before - expected_after
    assert counts["nn.conv"] == unchained["nn.conv"]


def chain_case(layout: str, seed: int = RNG_SEED) -> ModuleOp:
    """conv -> batch norm -> relu -> scale -> shift -> scale (x2) -> shift, with random
    per-channel constants in the layout's channel axis and a scalar."""
    rng = np.random.default_rng(seed)
    channels = 4
    x_shape = (1, 3, 5, 5) if layout == "nchw" else (1, 5, 5, 3)
    y_shape = (1, channels, 5, 5) if layout == "nchw" else (1, 5, 5, channels)
    weight_shape = (channels, 3, 3, 3)
    per_channel = (channels, 1, 1) if layout == "nchw" else (channels,)
    properties = ', layout = "nhwc"' if layout == "nhwc" else ""
    y, p = tensor(y_shape), tensor(per_channel)
    body = (
        constant("w", rng.standard_normal(weight_shape))
        + constant("b", rng.standard_normal(channels))
        + batch_norm_constants(channels, rng)
        + constant("s1", rng.uniform(0.5, 2, per_channel))
        + constant("t1", rng.standard_normal(per_channel))
        + constant("s2", rng.uniform(-2, 2, per_channel))
        + constant("k", np.array(1.5))
        + constant("t2", rng.standard_normal(per_channel))
        + f"  %y = nn.conv %x, %w, %b {{pads = [1, 1, 1, 1]{properties}}} : "
        f"({tensor(x_shape)}, {tensor(weight_shape)}, {tensor((channels,))}) -> {y}\n"
        + batch_norm("y", y_shape, layout).replace("%z =", "%n =")
        + f"  %r = nn.relu %n : {y}\n"
        f"  %m1 = nn.mul %r, %s1 : ({y}, {p}) -> {y}\n"
        f"  %a1 = nn.add %m1, %t1 : ({y}, {p}) -> {y}\n"
        f"  %m2 = nn.mul %s2, %a1 : ({p}, {y}) -> {y}\n"
        f"  %m3 = nn.mul %m2, %k : ({y}, tensor<f32>) -> {y}\n"
        f"  %z = nn.add %m3, %t2 {{activation = #nn.activation<relu>}} : ({y}, {p}) -> {y}\n"
    )
    return parse(function({"x": x_shape}, body, y_shape))


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
def test_affine_chains_compute_what_they_replace(layout: str) -> None:
    after = apply_and_compare(chain_case(layout), "fold-batchnorm", rtol=RTOL)
    counts = op_counts(after)
    # The batch norm folds into the conv; after the relu, the three scales and two
    # shifts become one mul and one add (with the relu).
    assert (counts["nn.conv"], counts["nn.batch_norm"]) == (1, 0)
    assert (counts["nn.mul"], counts["nn.add"], counts["nn.relu"]) == (1, 1, 1)
