"""`convert-layout` and `cancel-transposes`: numerics, and the transposes left.

Every rewrite is checked by running the IR before and after it in the interpreter on
the same random inputs (`apply_and_compare`, rtol 1e-4): on hand-written IR for each
rule, on every light model of the onnx package, and on the ResNet-style and
MobileNetV2-style networks of `irc.testing.networks` (also against onnxruntime).
After `canonicalize,convert-layout,cancel-transposes,canonicalize` the only transposes
left must be on the function's arguments and results, except ShuffleNet's channel
shuffles, which are the model's own (see `assert_only_boundary_transposes`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import numpy as np
import onnx
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import ReturnOp
from xdsl.ir import BlockArgument

from irc.diagnostics import Severity, collect_diagnostics
from irc.dialects import nn
from irc.importers.onnx import import_model
from irc.importers.reference import run_onnxruntime
from irc.interp import run_function
from irc.ir.context import make_context
from irc.ir.io import parse_module
from irc.numerics import compare
from irc.testing.models import light_models, materialize_light_model
from irc.testing.networks import mobilenet_v2_style, resnet_style
from irc.testing.numerics import apply_and_compare, random_function_inputs
from irc.transforms.cancel_transposes import (
    is_at_boundary,
    permute_weight_rows,
    reshape_through_transpose,
)

PIPELINE = "canonicalize,convert-layout,cancel-transposes,canonicalize"
"""The pipeline the models are checked with."""

RNG = np.random.default_rng(3)


# --------------------------------------------------------------------------------------
# Helpers


def tensor(shape: tuple[int, ...], element: str = "f32") -> str:
    return f"tensor<{'x'.join(map(str, shape))}{'x' if shape else ''}{element}>"


def dense(array: np.ndarray) -> str:
    """The text of an `nn.constant` holding `array` (float32 or bool)."""

    def render(part: np.ndarray) -> str:
        if part.ndim:
            return "[" + ", ".join(render(item) for item in part) + "]"
        if part.dtype == np.bool_:
            return "true" if part else "false"
        return repr(float(part))

    element = "i1" if array.dtype == np.bool_ else "f32"
    if array.dtype != np.bool_:
        array = array.astype(np.float32)
    return f"nn.constant dense<{render(array)}> : {tensor(array.shape, element)}"


def random(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def parse(text: str) -> ModuleOp:
    return parse_module(text, make_context(), "test.mlir")


def transposes(module: ModuleOp) -> list[nn.TransposeOp]:
    return [op for op in module.walk() if isinstance(op, nn.TransposeOp)]


def spatial_ops(module: ModuleOp) -> list[nn.NNOp]:
    return [op for op in module.walk() if isinstance(op, nn.NNOp) and op.LAYOUT_OPERANDS]


def is_channel_shuffle(op: nn.TransposeOp) -> bool:
    """A ShuffleNet channel shuffle in NHWC: (N,H,W,g,C/g) -> (N,H,W,C/g,g), between
    the reshapes that split and merge the channel axis."""
    return (
        op.props().ints("perm") == [0, 1, 2, 4, 3]
        and isinstance(op.input.owner, nn.ReshapeOp)
        and all(isinstance(use.operation, nn.ReshapeOp) for use in op.result.uses)
    )


def assert_only_boundary_transposes(module: ModuleOp, model_transposes: int = 0) -> None:
    """Every transpose is on a function argument or result, but for channel shuffles,
    of which there must be as many as the model had transposes of its own."""
    inside = [op for op in transposes(module) if not is_at_boundary(op)]
    assert all(is_channel_shuffle(op) for op in inside), [str(op) for op in inside]
    assert len(inside) == model_transposes


# --------------------------------------------------------------------------------------
# The rules on their own


@pytest.mark.parametrize(
    ("perm", "source", "target", "moves"),
    [
        # NHWC (1,H,W,C) seen as NCHW, split into groups: the split moves to C.
        ([0, 3, 1, 2], (1, 4, 5, 6), (1, 2, 3, 4, 5), True),
        # ShuffleNet's merge back: the groups' order is kept by a transpose before.
        ([0, 4, 3, 1, 2], (1, 4, 5, 2, 3), (1, 6, 4, 5), True),
        # Flatten of a global pool: size-1 axes only.
        ([0, 3, 1, 2], (1, 1, 1, 8), (1, 8), True),
        # Merging C with H, which are not adjacent in NHWC: impossible.
        ([0, 3, 1, 2], (1, 4, 5, 6), (1, 24, 5), False),
        # Flatten of an NCHW view of an NHWC map: not a layout-free reshape.
        ([0, 3, 1, 2], (1, 4, 5, 6), (1, 120), False),
        # Splitting and merging in one group, axes adjacent.
        ([1, 0, 2], (6, 4, 5), (2, 2, 6, 5), True),
    ],
)
def test_reshape_through_transpose(
    perm: list[int], source: tuple[int, ...], target: tuple[int, ...], moves: bool
) -> None:
    plan = reshape_through_transpose(perm, source, target)
    assert (plan is not None) == moves
    if plan is None:
        return
    x = random(*source)
    expected = np.transpose(x, perm).reshape(target)
    staged = x if plan.before is None else np.transpose(x, plan.before)
    staged = staged.reshape(plan.shape)
    actual = staged if plan.after is None else np.transpose(staged, plan.after)
    np.testing.assert_array_equal(actual, expected)


@pytest.mark.parametrize("rows_axis", [0, 1])
@pytest.mark.parametrize(("perm", "features"), [([2, 0, 1], (2, 3, 4)), ([1, 0], (5, 3))])
def test_permuted_weight_rows_take_the_untransposed_flatten(
    perm: list[int], features: tuple[int, ...], rows_axis: int
) -> None:
    x = random(2, *features)
    flat_transposed = np.transpose(x, [0, *(1 + axis for axis in perm)]).reshape(2, -1)
    flat = x.reshape(2, -1)
    size = math.prod(features)
    weight = random(size, 7) if rows_axis == 0 else random(7, size)
    inverse_features = [features[axis] for axis in perm]
    new_weight = permute_weight_rows(weight, perm, inverse_features, rows_axis).reshape(
        weight.shape
    )
    product = (lambda a, w: a @ w) if rows_axis == 0 else (lambda a, w: a @ w.T)
    np.testing.assert_allclose(
        product(flat, new_weight), product(flat_transposed, weight), rtol=1e-5, atol=1e-5
    )


# --------------------------------------------------------------------------------------
# cancel-transposes on hand-written IR: an NHWC input seen as NCHW, one op, and back


NHWC = (1, 4, 6, 8)
NCHW = (1, 8, 4, 6)

SINK_CASES: dict[str, tuple[str, tuple[int, ...], int]] = {
    # name: (body computing %y from the NCHW view %t, %y's shape, transposes left)
    "relu": ("%y = nn.relu %t : tensor<1x8x4x6xf32>", NCHW, 0),
    "clip": ("%y = nn.clip %t {max = 0.5, min = -0.5} : tensor<1x8x4x6xf32>", NCHW, 0),
    "bias_c11": (
        f"%b = {dense(random(8, 1, 1))}\n"
        "%y = nn.add %t, %b : (tensor<1x8x4x6xf32>, tensor<8x1x1xf32>) -> tensor<1x8x4x6xf32>",
        NCHW,
        0,
    ),
    "mul_full_shape": (
        f"%b = {dense(random(1, 8, 4, 6))}\n%y = nn.mul %b, %t : tensor<1x8x4x6xf32>",
        NCHW,
        0,
    ),
    "sub_scalar": (
        f"%b = {dense(np.array(0.25))}\n"
        "%y = nn.sub %t, %b : (tensor<1x8x4x6xf32>, tensor<f32>) -> tensor<1x8x4x6xf32>",
        NCHW,
        0,
    ),
    "sum_of_two_paths": (
        "%p = nn.relu %t : tensor<1x8x4x6xf32>\n"
        "%n = nn.neg %t : tensor<1x8x4x6xf32>\n"
        "%y = nn.sum %p, %n, %t : tensor<1x8x4x6xf32>",
        NCHW,
        0,
    ),
    "where": (
        f"%c = {dense(RNG.random((8, 1, 6)) < 0.5)}\n"
        f"%o = {dense(random(1, 1, 4, 6))}\n"
        "%y = nn.where %c, %t, %o : (tensor<8x1x6xi1>, tensor<1x8x4x6xf32>, "
        "tensor<1x1x4x6xf32>) -> tensor<1x8x4x6xf32>",
        NCHW,
        0,
    ),
    "prelu": (
        f"%s = {dense(random(8, 1, 1))}\n"
        "%y = nn.prelu %t, %s : (tensor<1x8x4x6xf32>, tensor<8x1x1xf32>) -> tensor<1x8x4x6xf32>",
        NCHW,
        0,
    ),
    "pow": (
        "%p = nn.abs %t : tensor<1x8x4x6xf32>\n"
        f"%e = {dense(np.array([1.5]))}\n"
        "%y = nn.pow %p, %e : (tensor<1x8x4x6xf32>, tensor<1xf32>) -> tensor<1x8x4x6xf32>",
        NCHW,
        0,
    ),
    "concat": (
        "%p = nn.relu %t : tensor<1x8x4x6xf32>\n"
        "%y = nn.concat %t, %p {axis = 1} : (tensor<1x8x4x6xf32>, tensor<1x8x4x6xf32>) "
        "-> tensor<1x16x4x6xf32>",
        (1, 16, 4, 6),
        0,
    ),
    "split": (
        "%a, %b = nn.split %t {axis = 1, sizes = [3, 5]} : (tensor<1x8x4x6xf32>) "
        "-> (tensor<1x3x4x6xf32>, tensor<1x5x4x6xf32>)\n"
        "%y = nn.concat %b, %a {axis = -3} : (tensor<1x5x4x6xf32>, tensor<1x3x4x6xf32>) "
        "-> tensor<1x8x4x6xf32>",
        NCHW,
        0,
    ),
    "pad": (
        "%y = nn.pad %t {pads = [0, 1, 2, 0, 0, 0, 1, 3]} : (tensor<1x8x4x6xf32>) "
        "-> tensor<1x9x7x9xf32>",
        (1, 9, 7, 9),
        0,
    ),
    "slice": (
        "%y = nn.slice %t {axes = [1, -1], ends = [7, 5], starts = [2, 0], steps = [2, 2]} "
        ": (tensor<1x8x4x6xf32>) -> tensor<1x3x4x3xf32>",
        (1, 3, 4, 3),
        0,
    ),
    "resize": (
        '%y = nn.resize %t {mode = "linear", scales = [1.0, 1.0, 2.0, 1.5]} '
        ": (tensor<1x8x4x6xf32>) -> tensor<1x8x8x9xf32>",
        (1, 8, 8, 9),
        0,
    ),
    "tile": (
        "%y = nn.tile %t {repeats = [1, 2, 1, 2]} : (tensor<1x8x4x6xf32>) -> tensor<1x16x4x12xf32>",
        (1, 16, 4, 12),
        0,
    ),
    "expand": (
        "%y = nn.expand %t : (tensor<1x8x4x6xf32>) -> tensor<2x8x4x6xf32>",
        (2, 8, 4, 6),
        0,
    ),
    "softmax": ("%y = nn.softmax %t {axis = 1} : tensor<1x8x4x6xf32>", NCHW, 0),
    "log_softmax": ("%y = nn.log_softmax %t {axis = -2} : tensor<1x8x4x6xf32>", NCHW, 0),
    "reduce_keepdims": (
        "%y = nn.reduce_mean %t {axes = [2, 3]} : (tensor<1x8x4x6xf32>) -> tensor<1x8x1x1xf32>",
        (1, 8, 1, 1),
        0,
    ),
    "reduce_all": (
        "%y = nn.reduce_max %t : (tensor<1x8x4x6xf32>) -> tensor<1x1x1x1xf32>",
        (1, 1, 1, 1),
        0,
    ),
    "channel_shuffle": (
        "%a = nn.reshape %t : (tensor<1x8x4x6xf32>) -> tensor<1x2x4x4x6xf32>\n"
        "%s = nn.transpose %a {perm = [0, 2, 1, 3, 4]} : (tensor<1x2x4x4x6xf32>) "
        "-> tensor<1x4x2x4x6xf32>\n"
        "%y = nn.reshape %s : (tensor<1x4x2x4x6xf32>) -> tensor<1x8x4x6xf32>",
        NCHW,
        1,
    ),
    "unsqueeze_squeeze": (
        "%u = nn.unsqueeze %t {axes = [2]} : (tensor<1x8x4x6xf32>) -> tensor<1x8x1x4x6xf32>\n"
        "%p = nn.relu %u : tensor<1x8x1x4x6xf32>\n"
        "%y = nn.squeeze %p {axes = [2]} : (tensor<1x8x1x4x6xf32>) -> tensor<1x8x4x6xf32>",
        NCHW,
        0,
    ),
}


def nhwc_round_trip(body: str, result_shape: tuple[int, ...]) -> str:
    """A function that views its NHWC input as NCHW (%t), runs `body`, and returns %y
    back in NHWC (or as it is when it is not 4-D)."""
    lines = [
        f"%t = nn.transpose %x {{perm = [0, 3, 1, 2]}} : ({tensor(NHWC)}) -> {tensor(NCHW)}",
        *body.splitlines(),
    ]
    result = "%y"
    result_type = tensor(result_shape)
    if len(result_shape) == 4:
        result_shape = tuple(result_shape[axis] for axis in (0, 2, 3, 1))
        lines.append(
            f"%r = nn.transpose %y {{perm = [0, 2, 3, 1]}} : ({result_type}) "
            f"-> {tensor(result_shape)}"
        )
        result, result_type = "%r", tensor(result_shape)
    lines.append(f"func.return {result} : {result_type}")
    body_text = "\n".join(f"  {line}" for line in lines)
    return f"func.func @main(%x: {tensor(NHWC)}) -> {result_type} {{\n{body_text}\n}}\n"


@pytest.mark.parametrize("name", SINK_CASES)
def test_cancel_transposes_sinks_through(name: str) -> None:
    body, shape, left = SINK_CASES[name]
    module = parse(nhwc_round_trip(body, shape))
    after = apply_and_compare(module, "cancel-transposes", seed=1)
    assert len(transposes(after)) == left


def test_reduction_without_keepdims_leaves_the_kept_axes_transposed() -> None:
    # reduce over H of an NCHW view of NHWC keeps (N, C, W), which NHWC holds as
    # (N, W, C): one transpose at the result.
    body = "%y = nn.reduce_sum %t {axes = [2], keepdims = false} : (tensor<1x8x4x6xf32>) -> tensor<1x8x6xf32>"
    module = parse(nhwc_round_trip(body, (1, 8, 6)))
    after = apply_and_compare(module, "cancel-transposes", seed=2)
    [transpose] = transposes(after)
    assert transpose.props().ints("perm") == [0, 2, 1]
    assert isinstance(transpose.input.owner, nn.ReduceSumOp)


CLASSIFIER_CASES = {
    "gemm": (
        "%y = nn.gemm %f, %w : (tensor<1x192xf32>, tensor<192x5xf32>) -> tensor<1x5xf32>",
        (192, 5),
    ),
    "gemm_trans_b": (
        "%y = nn.gemm %f, %w {trans_b = true} : (tensor<1x192xf32>, tensor<5x192xf32>) -> tensor<1x5xf32>",
        (5, 192),
    ),
    "matmul": (
        "%y = nn.matmul %f, %w : (tensor<1x192xf32>, tensor<192x5xf32>) -> tensor<1x5xf32>",
        (192, 5),
    ),
}


@pytest.mark.parametrize("flatten", ["reshape", "flatten"])
@pytest.mark.parametrize("name", CLASSIFIER_CASES)
def test_classifier_weight_absorbs_the_transpose(name: str, flatten: str) -> None:
    product, weight_shape = CLASSIFIER_CASES[name]
    flatten_op = (
        "nn.reshape %t : (tensor<1x8x4x6xf32>) -> tensor<1x192xf32>"
        if flatten == "reshape"
        else "nn.flatten %t : (tensor<1x8x4x6xf32>) -> tensor<1x192xf32>"
    )
    text = (
        f"func.func @main(%x: {tensor(NHWC)}) -> tensor<1x5xf32> {{\n"
        f"  %t = nn.transpose %x {{perm = [0, 3, 1, 2]}} : ({tensor(NHWC)}) -> {tensor(NCHW)}\n"
        f"  %f = {flatten_op}\n"
        f"  %w = {dense(random(*weight_shape))}\n"
        f"  {product}\n"
        "  func.return %y : tensor<1x5xf32>\n}\n"
    )
    after = apply_and_compare(parse(text), "cancel-transposes", seed=4)
    assert not transposes(after)


MUST_NOT_FIRE = {
    "matmul_with_varying_weight": (
        "func.func @main(%x: tensor<1x4x6x8xf32>, %m: tensor<6x3xf32>) -> tensor<1x8x4x3xf32> {\n"
        "  %t = nn.transpose %x {perm = [0, 3, 1, 2]} : (tensor<1x4x6x8xf32>) -> tensor<1x8x4x6xf32>\n"
        "  %r = nn.relu %t : tensor<1x8x4x6xf32>\n"
        "  %y = nn.matmul %r, %m : (tensor<1x8x4x6xf32>, tensor<6x3xf32>) -> tensor<1x8x4x3xf32>\n"
        "  func.return %y : tensor<1x8x4x3xf32>\n}\n"
    ),
    "reshape_mixing_axes": (
        "func.func @main(%x: tensor<1x4x6x8xf32>) -> tensor<1x32x6xf32> {\n"
        "  %t = nn.transpose %x {perm = [0, 3, 1, 2]} : (tensor<1x4x6x8xf32>) -> tensor<1x8x4x6xf32>\n"
        "  %y = nn.reshape %t : (tensor<1x8x4x6xf32>) -> tensor<1x32x6xf32>\n"
        "  func.return %y : tensor<1x32x6xf32>\n}\n"
    ),
    "different_transposes": (
        "func.func @main(%x: tensor<2x3x4xf32>, %z: tensor<4x2x3xf32>) -> tensor<3x4x2xf32> {\n"
        "  %a = nn.transpose %x {perm = [1, 2, 0]} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>\n"
        "  %b = nn.transpose %z {perm = [2, 0, 1]} : (tensor<4x2x3xf32>) -> tensor<3x4x2xf32>\n"
        "  %y = nn.add %a, %b : tensor<3x4x2xf32>\n"
        "  func.return %y : tensor<3x4x2xf32>\n}\n"
    ),
}


@pytest.mark.parametrize("name", MUST_NOT_FIRE)
def test_cancel_transposes_keeps_needed_transposes(name: str) -> None:
    module = parse(MUST_NOT_FIRE[name])
    after = apply_and_compare(module, "cancel-transposes", seed=5)
    assert len(transposes(after)) == len(transposes(module))


PREPROCESSING = {
    # name: (body computing %p from the NCHW input %x, %p's shape)
    "normalize": (
        f"%m = {dense(random(3, 1, 1))}\n%s = {dense(np.abs(random(3, 1, 1)) + 0.5)}\n"
        "%c = nn.sub %x, %m : (tensor<1x3x6x6xf32>, tensor<3x1x1xf32>) -> tensor<1x3x6x6xf32>\n"
        "%p = nn.div %c, %s : (tensor<1x3x6x6xf32>, tensor<3x1x1xf32>) -> tensor<1x3x6x6xf32>",
        (1, 3, 6, 6),
    ),
    "reflect_pad": (
        '%p = nn.pad %x {mode = "reflect", pads = [0, 0, 1, 2, 0, 0, 2, 1]} '
        ": (tensor<1x3x6x6xf32>) -> tensor<1x3x9x9xf32>",
        (1, 3, 9, 9),
    ),
    "resize_then_slice": (
        "%r = nn.resize %x {scales = [1.0, 1.0, 2.0, 2.0]} "
        ": (tensor<1x3x6x6xf32>) -> tensor<1x3x12x12xf32>\n"
        "%p = nn.slice %r {axes = [2, 3], ends = [11, 12], starts = [1, 0]} "
        ": (tensor<1x3x12x12xf32>) -> tensor<1x3x10x12xf32>",
        (1, 3, 10, 12),
    ),
}


@pytest.mark.parametrize("name", PREPROCESSING)
def test_input_transpose_moves_up_to_the_argument(name: str) -> None:
    body, shape = PREPROCESSING[name]
    result_shape = (1, 4, shape[2] - 2, shape[3] - 2)
    conv = conv_case("nn.conv", shape, (4, 3, 3, 3), "", result_shape, names=("%p", "%y"))
    module = parse(function(f"{body}\n{conv}", (1, 3, 6, 6), result_shape))
    after = apply_and_compare(module, "convert-layout", seed=10)
    first, last = transposes(after)
    assert isinstance(first.input, BlockArgument)
    assert all(isinstance(use.operation, ReturnOp) for use in last.result.uses)


def test_remarks_count_transposes_before_and_after() -> None:
    module = parse(nhwc_round_trip(SINK_CASES["channel_shuffle"][0], NCHW))
    with collect_diagnostics() as diagnostics:
        apply_and_compare(module, "cancel-transposes")
    [remark] = diagnostics
    assert remark.severity is Severity.REMARK
    assert remark.message == "cancel-transposes: 3 transposes before, 1 after (1 inside)"
    assert remark.location.line == 1


# --------------------------------------------------------------------------------------
# convert-layout on hand-written IR: each spatial op, to NHWC and back


def conv_case(
    op: str,
    x: tuple[int, ...],
    w: tuple[int, ...],
    props: str,
    y: tuple[int, ...],
    names: tuple[str, str] = ("%x", "%y"),
) -> str:
    """`op` (a conv or conv_transpose) of the input and result `names`, with random
    constant weights and bias."""
    weight = random(*w) * 0.5
    bias = random(y[1])
    input_name, result_name = names
    types = f"({tensor(x)}, {tensor(w)}, {tensor((y[1],))}) -> {tensor(y)}"
    return (
        f"%w = {dense(weight)}\n%b = {dense(bias)}\n"
        f"{result_name} = {op} {input_name}, %w, %b {props} : {types}"
    )


def statistics(channels: int) -> str:
    return "\n".join(
        f"%{name} = {dense(values)}"
        for name, values in (
            ("gamma", random(channels)),
            ("beta", random(channels)),
            ("mean", random(channels)),
            ("var", np.abs(random(channels)) + 0.5),
        )
    )


SPATIAL_CASES: dict[str, tuple[str, tuple[int, ...], tuple[int, ...]]] = {
    # name: (body computing %y from %x, x's shape, y's shape)
    "conv": (
        conv_case(
            "nn.conv",
            (1, 3, 9, 8),
            (4, 3, 3, 2),
            "{pads = [1, 0, 1, 1], strides = [2, 1]}",
            (1, 4, 5, 8),
        ),
        (1, 3, 9, 8),
        (1, 4, 5, 8),
    ),
    "conv_grouped_dilated": (
        conv_case(
            "nn.conv", (1, 4, 7, 7), (6, 2, 3, 3), "{dilations = [2, 1], group = 2}", (1, 6, 3, 5)
        ),
        (1, 4, 7, 7),
        (1, 6, 3, 5),
    ),
    "conv_depthwise": (
        conv_case(
            "nn.conv", (1, 4, 6, 6), (4, 1, 3, 3), "{group = 4, pads = [1, 1, 1, 1]}", (1, 4, 6, 6)
        ),
        (1, 4, 6, 6),
        (1, 4, 6, 6),
    ),
    "conv_1d": (
        conv_case("nn.conv", (2, 3, 10), (5, 3, 3), "{strides = [2]}", (2, 5, 4)),
        (2, 3, 10),
        (2, 5, 4),
    ),
    "conv_transpose": (
        conv_case(
            "nn.conv_transpose",
            (1, 3, 5, 4),
            (3, 2, 3, 3),
            "{output_padding = [1, 0], strides = [2, 2]}",
            (1, 2, 12, 9),
        ),
        (1, 3, 5, 4),
        (1, 2, 12, 9),
    ),
    "max_pool": (
        "%y = nn.max_pool %x {ceil_mode = true, kernel_shape = [3, 3], strides = [2, 2]} "
        ": (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>",
        (1, 3, 8, 8),
        (1, 3, 4, 4),
    ),
    "average_pool": (
        "%y = nn.average_pool %x {kernel_shape = [2, 3], pads = [1, 1, 0, 1]} "
        ": (tensor<2x3x6x5xf32>) -> tensor<2x3x6x5xf32>",
        (2, 3, 6, 5),
        (2, 3, 6, 5),
    ),
    "global_max_pool": (
        "%y = nn.global_max_pool %x : (tensor<1x5x4x3xf32>) -> tensor<1x5x1x1xf32>",
        (1, 5, 4, 3),
        (1, 5, 1, 1),
    ),
    "batch_norm": (
        f"{statistics(4)}\n%y = nn.batch_norm %x, %gamma, %beta, %mean, %var "
        ": (tensor<1x4x3x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) "
        "-> tensor<1x4x3x5xf32>",
        (1, 4, 3, 5),
        (1, 4, 3, 5),
    ),
    "instance_norm": (
        f"%s = {dense(random(4))}\n%b = {dense(random(4))}\n"
        "%y = nn.instance_norm %x, %s, %b : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>) "
        "-> tensor<2x4x3x3xf32>",
        (2, 4, 3, 3),
        (2, 4, 3, 3),
    ),
    "lrn": ("%y = nn.lrn %x {size = 3} : tensor<1x6x3x3xf32>", (1, 6, 3, 3), (1, 6, 3, 3)),
    "depth_to_space": (
        '%y = nn.depth_to_space %x {blocksize = 2, mode = "CRD"} : (tensor<1x8x2x3xf32>) '
        "-> tensor<1x2x4x6xf32>",
        (1, 8, 2, 3),
        (1, 2, 4, 6),
    ),
}


def function(body: str, x: tuple[int, ...], y: tuple[int, ...]) -> str:
    lines = [*body.splitlines(), f"func.return %y : {tensor(y)}"]
    body_text = "\n".join(f"  {line}" for line in lines)
    return f"func.func @main(%x: {tensor(x)}) -> {tensor(y)} {{\n{body_text}\n}}\n"


@pytest.mark.parametrize("name", SPATIAL_CASES)
def test_convert_layout_to_nhwc_and_back(name: str) -> None:
    body, x, y = SPATIAL_CASES[name]
    module = parse(function(body, x, y))
    nhwc = apply_and_compare(module, "convert-layout", seed=6)
    [op] = spatial_ops(nhwc)
    assert op.props().str("layout") == "nhwc"
    assert all(is_at_boundary(transpose) for transpose in transposes(nhwc))
    back = apply_and_compare(nhwc, "convert-layout{layout=nchw}", seed=7)
    [op] = spatial_ops(back)
    assert "layout" not in op.properties
    assert not transposes(back)


def test_convert_layout_keeps_the_weight_location() -> None:
    body, x, y = SPATIAL_CASES["conv"]
    module = parse(function(body, x, y))
    weight = next(op for op in module.walk() if isinstance(op, nn.ConstantOp))
    after = apply_and_compare(module, "convert-layout")
    [conv] = spatial_ops(after)
    assert conv.operands[1].owner.location == weight.location
    assert conv.operands[1].name_hint == "w"


def test_convert_layout_without_cancel_keeps_every_transpose() -> None:
    x, y = (1, 3, 6, 6), (1, 4, 4, 4)
    conv = conv_case("nn.conv", x, (4, 3, 3, 3), "", y, names=("%x", "%c"))
    module = parse(function(f"{conv}\n%y = nn.relu %c : {tensor(y)}", x, y))
    raw = apply_and_compare(module, "convert-layout{cancel=false}")
    assert len(transposes(raw)) == 2
    assert isinstance(next(iter(transposes(raw)[1].result.uses)).operation, nn.ReluOp)


# --------------------------------------------------------------------------------------
# Whole networks


@lru_cache(maxsize=1)  # one model at a time (tests/conftest.py empties it after the module)
def light_module(path: Path) -> ModuleOp:
    """A light model with seeded random weights, imported."""
    return import_model(materialize_light_model(path, seed=0))


@pytest.mark.slow
@pytest.mark.parametrize(
    "path", light_models(heavy=False), ids=lambda p: p.stem.removeprefix("light_")
)
def test_light_model_keeps_transposes_only_at_the_boundary(path: Path) -> None:
    module = light_module(path)
    model_transposes = len(transposes(module))
    after = apply_and_compare(module, PIPELINE, seed=0)
    assert all(op.props().str("layout") == "nhwc" for op in spatial_ops(after))
    assert_only_boundary_transposes(after, model_transposes)
    # One transpose at the image input; the outputs are 2-D class scores.
    assert sum(is_at_boundary(op) for op in transposes(after)) == 1


@pytest.mark.parametrize("build", [resnet_style, mobilenet_v2_style])
def test_built_network_keeps_one_transpose_at_the_input(
    build: Callable[[int], onnx.ModelProto],
) -> None:
    model = build(0)
    module = import_model(model)
    after = apply_and_compare(module, PIPELINE, seed=8)
    assert_only_boundary_transposes(after)
    [transpose] = transposes(after)
    assert isinstance(transpose.input, BlockArgument)
    assert transpose.props().ints("perm") == [0, 2, 3, 1]
    assert all(op.props().str("layout") == "nhwc" for op in spatial_ops(after))
    inputs = random_function_inputs(after, seed=9)
    report = compare(run_function(after, inputs), run_onnxruntime(model, inputs), 1e-4, 1e-5)
    assert report.ok, report.format()
