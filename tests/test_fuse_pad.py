"""`fuse-pad`: a pad folded into a conv's or pooling's padding computes the same values.

Every fusion is checked by running the interpreter before and after on seeded random
inputs (`apply_and_compare`, rtol 1e-4). Each condition under which the pass refuses
is shown to be needed: the rewrite it refuses, written by hand, computes something
else.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import ModuleOp

from irc.importers.onnx import import_model
from irc.interp import run_function
from irc.ir.context import make_context
from irc.ir.io import parse_module
from irc.testing.numerics import apply_and_compare, random_function_inputs
from irc.transforms.fuse_pad import every_window_sees_input

RTOL = 1e-4


def tensor(shape: tuple[int, ...]) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def parse(text: str) -> ModuleOp:
    return parse_module(text, make_context(), "test.mlir")


def op_counts(module: ModuleOp) -> Counter[str]:
    return Counter(op.name for op in module.walk())


@dataclass(frozen=True)
class PadCase:
    """x -> [source op] -> nn.pad -> consumer. `consumer` and `source` are an op name
    and its properties; a consumer with a `weight` shape gets a random weight %w."""

    x: tuple[int, ...]
    pads: list[int]
    consumer: str
    result: tuple[int, ...]
    weight: tuple[int, ...] | None = None
    source: str = ""

    def module(self) -> ModuleOp:
        rank = len(self.x)
        padded = tuple(d + self.pads[i] + self.pads[rank + i] for i, d in enumerate(self.x))
        lines = []
        operand = "%x"
        if self.source:
            lines.append(op_line("%s", self.source, "%x", tensor(self.x), tensor(self.x)))
            operand = "%s"
        operands, operand_types = "%p", tensor(padded)
        if self.weight is not None:
            values = np.random.default_rng(1).standard_normal(self.weight).astype(np.float32)
            lines.append(f"  %w = nn.constant dense<{values.tolist()}> : {tensor(self.weight)}")
            operands, operand_types = "%p, %w", f"{operand_types}, {tensor(self.weight)}"
        pad = f"nn.pad {{pads = {self.pads}}}"
        lines.append(op_line("%p", pad, operand, tensor(self.x), tensor(padded)))
        lines.append(op_line("%y", self.consumer, operands, operand_types, tensor(self.result)))
        return function(self.x, "\n".join(lines), self.result)


def op_line(result: str, op: str, operands: str, operand_types: str, result_type: str) -> str:
    """`result = name operands {properties} : (operand types) -> result type`."""
    name, _, properties = op.partition(" ")
    return f"  {result} = {name} {operands} {properties} : ({operand_types}) -> {result_type}"


def function(x: tuple[int, ...], body: str, result: tuple[int, ...]) -> ModuleOp:
    return parse(
        f"func.func @main(%x: {tensor(x)}) -> {tensor(result)} {{\n{body}\n"
        f"  func.return %y : {tensor(result)}\n}}\n"
    )


# --------------------------------------------------------------------------------------
# Fusions

FUSED_CASES = {
    "conv": PadCase(
        (1, 3, 7, 7),
        [0, 0, 1, 2, 0, 0, 2, 1],
        "nn.conv {pads = [1, 0, 0, 1]}",
        (1, 4, 9, 9),
        weight=(4, 3, 3, 3),
    ),
    "conv_strided_dilated_grouped": PadCase(
        (2, 4, 9, 8),
        [0, 0, 2, 1, 0, 0, 1, 3],
        "nn.conv {dilations = [2, 1], group = 2, strides = [2, 3]}",
        (2, 6, 4, 4),
        weight=(6, 2, 3, 3),
    ),
    "conv_channels_last": PadCase(
        (1, 6, 5, 3),
        [0, 1, 2, 0, 0, 1, 0, 0],
        'nn.conv {layout = "nhwc"}',
        (1, 6, 5, 4),
        weight=(4, 3, 3, 3),
    ),
    "conv_1d": PadCase((2, 3, 10), [0, 0, 3, 0, 0, 1], "nn.conv", (2, 5, 12), weight=(5, 3, 3)),
    "conv_3d": PadCase(
        (1, 2, 3, 4, 4),
        [0, 0, 1, 0, 1, 0, 0, 1, 0, 1],
        "nn.conv",
        (1, 3, 4, 3, 5),
        weight=(3, 2, 2, 2, 2),
    ),
    "average_pool_without_pads": PadCase(
        (1, 3, 7, 7),
        [0, 0, 1, 1, 0, 0, 1, 1],
        "nn.average_pool {kernel_shape = [3, 3]}",
        (1, 3, 7, 7),
    ),
    "average_pool_counting_pads": PadCase(
        (1, 3, 7, 6),
        [0, 0, 1, 0, 0, 0, 0, 1],
        "nn.average_pool {count_include_pad = true, kernel_shape = [3, 3], pads = [1, 1, 1, 0],"
        " strides = [2, 2]}",
        (1, 3, 4, 3),
    ),
    "average_pool_ceil_mode": PadCase(
        (1, 2, 6, 6),
        [0, 0, 1, 1, 0, 0, 0, 0],
        "nn.average_pool {ceil_mode = true, kernel_shape = [3, 3], strides = [2, 2]}",
        (1, 2, 3, 3),
    ),
    "average_pool_channels_last": PadCase(
        (1, 6, 6, 3),
        [0, 1, 1, 0, 0, 1, 1, 0],
        'nn.average_pool {kernel_shape = [2, 2], layout = "nhwc", strides = [2, 2]}',
        (1, 4, 4, 3),
    ),
    "max_pool_after_relu": PadCase(
        (1, 3, 8, 8),
        [0, 0, 1, 1, 0, 0, 1, 1],
        "nn.max_pool {kernel_shape = [3, 3], strides = [2, 2]}",
        (1, 3, 4, 4),
        source="nn.relu",
    ),
    "max_pool_after_sigmoid_dilated": PadCase(
        (1, 2, 7, 7),
        [0, 0, 2, 2, 0, 0, 2, 2],
        "nn.max_pool {dilations = [2, 2], kernel_shape = [3, 3]}",
        (1, 2, 7, 7),
        source="nn.sigmoid",
    ),
    "max_pool_after_abs_channels_last": PadCase(
        (1, 5, 5, 2),
        [0, 1, 1, 0, 0, 1, 1, 0],
        'nn.max_pool {kernel_shape = [2, 2], layout = "nhwc"}',
        (1, 6, 6, 2),
        source="nn.abs",
    ),
    "max_pool_after_relu6": PadCase(
        (1, 3, 6, 6),
        [0, 0, 1, 0, 0, 0, 0, 1],
        "nn.max_pool {kernel_shape = [2, 2], pads = [0, 1, 1, 0]}",
        (1, 3, 7, 7),
        source="nn.clip {max = 6.0, min = 0.0}",
    ),
}


@pytest.mark.parametrize("name", FUSED_CASES)
def test_pad_folds_into_its_consumer(name: str) -> None:
    case = FUSED_CASES[name]
    after = apply_and_compare(case.module(), "fuse-pad", rtol=RTOL)
    assert op_counts(after)["nn.pad"] == 0
    consumer = next(op for op in after.walk() if op.name == case.consumer.split()[0])
    assert consumer.operands[0].name_hint == ("s" if case.source else "x")


def test_max_pool_after_a_fused_activation() -> None:
    module = parse(
        """
func.func @main(%x: tensor<1x3x6x6xf32>) -> tensor<1x4x6x6xf32> {
  %w = nn.constant dense<[[[[0.5]], [[-1.0]], [[2.0]]], [[[1.0]], [[1.0]], [[-1.0]]], [[[-0.5]], [[0.25]], [[1.0]]], [[[1.5]], [[-2.0]], [[0.5]]]]> : tensor<4x3x1x1xf32>
  %c = nn.conv %x, %w {activation = #nn.activation<relu>} : (tensor<1x3x6x6xf32>, tensor<4x3x1x1xf32>) -> tensor<1x4x6x6xf32>
  %p = nn.pad %c {pads = [0, 0, 1, 1, 0, 0, 1, 1]} : (tensor<1x4x6x6xf32>) -> tensor<1x4x8x8xf32>
  %y = nn.max_pool %p {kernel_shape = [3, 3]} : (tensor<1x4x8x8xf32>) -> tensor<1x4x6x6xf32>
  func.return %y : tensor<1x4x6x6xf32>
}
"""
    )
    after = apply_and_compare(module, "fuse-pad", rtol=RTOL)
    assert op_counts(after)["nn.pad"] == 0


def test_pad_with_two_users_stays_for_the_one_that_cannot_absorb_it() -> None:
    module = parse(
        """
func.func @main(%x: tensor<1x2x5x5xf32>) -> (tensor<1x2x5x5xf32>, tensor<1x2x5x5xf32>, tensor<1x2x5x5xf32>) {
  %p = nn.pad %x {pads = [0, 0, 1, 1, 0, 0, 1, 1]} : (tensor<1x2x5x5xf32>) -> tensor<1x2x7x7xf32>
  %a = nn.average_pool %p {kernel_shape = [3, 3]} : (tensor<1x2x7x7xf32>) -> tensor<1x2x5x5xf32>
  %m = nn.max_pool %p {kernel_shape = [3, 3]} : (tensor<1x2x7x7xf32>) -> tensor<1x2x5x5xf32>
  %b = nn.average_pool %p {count_include_pad = true, kernel_shape = [3, 3]} : (tensor<1x2x7x7xf32>) -> tensor<1x2x5x5xf32>
  func.return %a, %m, %b : tensor<1x2x5x5xf32>, tensor<1x2x5x5xf32>, tensor<1x2x5x5xf32>
}
"""
    )
    after = apply_and_compare(module, "fuse-pad", rtol=RTOL)
    pad = next(op for op in after.walk() if op.name == "nn.pad")
    assert [use.operation.name for use in pad.results[0].uses] == ["nn.max_pool"]


def test_pads_from_an_onnx_model() -> None:
    """Explicit Pad nodes as TensorFlow exporters write them, before a Conv, a MaxPool
    after Relu and an AveragePool."""
    rng = np.random.default_rng(0)
    weight = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    pads = numpy_helper.from_array(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "pads")
    nodes = [
        helper.make_node("Pad", ["x", "pads"], ["xp"], name="pad_conv"),
        helper.make_node("Conv", ["xp", "w"], ["c"], name="conv", kernel_shape=[3, 3]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("Pad", ["r", "pads"], ["rp"], name="pad_max"),
        helper.make_node("MaxPool", ["rp"], ["m"], name="max", kernel_shape=[3, 3], strides=[2, 2]),
        helper.make_node("Pad", ["m", "pads"], ["mp"], name="pad_avg"),
        helper.make_node("AveragePool", ["mp"], ["y"], name="avg", kernel_shape=[3, 3]),
    ]
    graph = helper.make_graph(
        nodes,
        "pads",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 9, 9])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 5, 5])],
        [weight, pads],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    module = import_model(model)
    assert op_counts(module)["nn.pad"] == 3
    after = apply_and_compare(module, "fuse-pad", rtol=RTOL)
    assert op_counts(after)["nn.pad"] == 0


# --------------------------------------------------------------------------------------
# Refusals, and why each is needed

REFUSED_CASES = {
    # The input may be negative: max pooling's own padding never wins, a zero can.
    "max_pool_of_any_sign": (
        PadCase(
            (2, 8, 5, 5),
            [0, 0, 1, 1, 0, 0, 1, 1],
            "nn.max_pool {kernel_shape = [3, 3]}",
            (2, 8, 5, 5),
        ),
        "nn.max_pool {kernel_shape = [3, 3], pads = [1, 1, 1, 1]}",
    ),
    # Its own padding is left out of the divisor; the padded zeros count.
    "average_pool_excluding_its_pads": (
        PadCase(
            (1, 2, 5, 5),
            [0, 0, 1, 1, 0, 0, 1, 1],
            "nn.average_pool {kernel_shape = [3, 3], pads = [1, 1, 1, 1]}",
            (1, 2, 7, 7),
        ),
        "nn.average_pool {count_include_pad = true, kernel_shape = [3, 3], pads = [2, 2, 2, 2]}",
    ),
    # A dilated window over a 1x1 input sees only padding: the zeros win, -inf does not.
    "max_pool_window_only_on_padding": (
        PadCase(
            (1, 1, 1, 1),
            [0, 0, 2, 2, 0, 0, 2, 2],
            "nn.max_pool {dilations = [3, 3], kernel_shape = [2, 2]}",
            (1, 1, 2, 2),
            source="nn.relu",
        ),
        "nn.max_pool {dilations = [3, 3], kernel_shape = [2, 2], pads = [2, 2, 2, 2]}",
    ),
}


@pytest.mark.parametrize("name", REFUSED_CASES)
def test_refused_fusion_would_change_the_values(name: str) -> None:
    case, would_be = REFUSED_CASES[name]
    module = case.module()
    after = apply_and_compare(module, "fuse-pad", rtol=RTOL)
    assert op_counts(after)["nn.pad"] == 1
    # The rewrite the pass refused, written by hand: x -> [source] -> the consumer.
    lines = []
    operand = "%x"
    if case.source:
        lines.append(op_line("%s", case.source, "%x", tensor(case.x), tensor(case.x)))
        operand = "%s"
    lines.append(op_line("%y", would_be, operand, tensor(case.x), tensor(case.result)))
    fused = function(case.x, "\n".join(lines), case.result)
    inputs = random_function_inputs(module, seed=0)
    (expected,) = run_function(module, inputs).values()
    (actual,) = run_function(fused, inputs).values()
    assert not np.allclose(actual, expected, rtol=RTOL)


def test_ceil_mode_with_end_padding_is_refused() -> None:
    # Pooling 5 (4 + 1 padded) with ceil_mode gives 3 windows; pooling 4 with one
    # pad at the end gives 2, since a window may not start in the padding.
    case = PadCase(
        (1, 1, 4, 4),
        [0, 0, 0, 0, 0, 0, 1, 1],
        "nn.average_pool {ceil_mode = true, kernel_shape = [2, 2], strides = [2, 2]}",
        (1, 1, 3, 3),
    )
    after = apply_and_compare(case.module(), "fuse-pad", rtol=RTOL)
    assert op_counts(after)["nn.pad"] == 1


def test_pooling_pads_stay_smaller_than_the_kernel() -> None:
    case = PadCase(
        (1, 1, 4, 4),
        [0, 0, 2, 0, 0, 0, 0, 0],
        "nn.average_pool {count_include_pad = true, kernel_shape = [2, 2]}",
        (1, 1, 5, 3),
    )
    after = apply_and_compare(case.module(), "fuse-pad", rtol=RTOL)
    assert op_counts(after)["nn.pad"] == 1


def test_every_window_sees_input() -> None:
    # One axis of 1 element, windows of 2 taps 3 apart from -2: taps {-2, 1}, {-1, 2}.
    assert not every_window_sees_input([1], [2], [1], [2, 2], [3], [2])
    assert every_window_sees_input([1], [2], [1], [1, 1], [1], [2])
    assert every_window_sees_input([8, 8], [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], [4, 4])
