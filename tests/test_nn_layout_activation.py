"""Channels-last (`layout = "nhwc"`) ops and fused activations (`#nn.activation<...>`).

A channels-last op must compute exactly the channels-first op on transposed data, and
an op with a fused activation exactly the op followed by the activation op: these are
the identities that `convert-layout` and `fuse-activation` rely on.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import StringAttr, TensorType, f32
from xdsl.utils.exceptions import VerifyException

from irc.dialects import nn
from irc.dialects.base import channels_last_perm
from irc.interp import evaluate_op
from irc.ir.context import make_context
from irc.ir.io import parse_module, verify_module
from irc.ir.weights import dense_from_numpy
from irc.tools.opt import main as irc_opt

RNG = np.random.default_rng(7)


def constant(array: np.ndarray) -> nn.ConstantOp:
    return nn.ConstantOp.from_array(array.astype(np.float32))


def ints(values: list[int]):
    from xdsl.dialects.builtin import DenseArrayBase, i64

    return DenseArrayBase.from_list(i64, values)


def to_last(array: np.ndarray) -> np.ndarray:
    return np.transpose(array, channels_last_perm(array.ndim))


LAYOUT_CASES = {
    "conv": (
        nn.ConvOp,
        [(1, 3, 9, 8), (4, 3, 3, 2), (4,)],
        {"pads": ints([1, 0, 1, 1]), "strides": ints([2, 1])},
    ),
    "conv_grouped": (nn.ConvOp, [(1, 4, 6, 6), (6, 2, 3, 3)], {"group": None}),
    "conv_1d": (nn.ConvOp, [(2, 3, 10), (5, 3, 3)], {"dilations": ints([2])}),
    "conv_transpose": (
        nn.ConvTransposeOp,
        [(1, 3, 5, 4), (3, 2, 3, 3), (2,)],
        {"strides": ints([2, 2])},
    ),
    "max_pool": (
        nn.MaxPoolOp,
        [(1, 3, 7, 7)],
        {"kernel_shape": ints([3, 3]), "strides": ints([2, 2])},
    ),
    "average_pool": (
        nn.AveragePoolOp,
        [(2, 3, 6, 5)],
        {"kernel_shape": ints([2, 3]), "pads": ints([1, 1, 0, 1])},
    ),
    "global_average_pool": (nn.GlobalAveragePoolOp, [(1, 5, 4, 3)], {}),
    "global_max_pool": (nn.GlobalMaxPoolOp, [(1, 5, 4, 3)], {}),
    "batch_norm": (nn.BatchNormOp, [(1, 4, 3, 3), (4,), (4,), (4,), (4,)], {}),
    "instance_norm": (nn.InstanceNormOp, [(2, 4, 3, 3), (4,), (4,)], {}),
    "lrn": (nn.LRNOp, [(1, 6, 3, 3)], {"size": None}),
    "depth_to_space": (nn.DepthToSpaceOp, [(1, 8, 2, 3)], {"blocksize": None}),
}


@pytest.mark.parametrize("name", LAYOUT_CASES)
def test_channels_last_op_is_the_channels_first_op_on_transposed_data(name: str) -> None:
    from xdsl.dialects.builtin import IntegerAttr, i64

    op_class, shapes, props = LAYOUT_CASES[name]
    props = dict(props)
    if name == "conv_grouped":
        props["group"] = IntegerAttr(2, i64)
    if name == "lrn":
        props["size"] = IntegerAttr(3, i64)
    if name == "depth_to_space":
        props["blocksize"] = IntegerAttr(2, i64)
    arrays = [RNG.standard_normal(shape).astype(np.float32) for shape in shapes]
    if name == "batch_norm":
        arrays[4] = np.abs(arrays[4]) + 0.5
    first = op_class.build([constant(a) for a in arrays], props)
    expected = evaluate_op(first, arrays)[0]

    moved = [to_last(a) if i in op_class.LAYOUT_OPERANDS else a for i, a in enumerate(arrays)]
    last = op_class.build([constant(a) for a in moved], {**props, "layout": StringAttr("nhwc")})
    last.verify()
    assert last.results[0].type == TensorType(f32, to_last(expected).shape)
    np.testing.assert_array_equal(evaluate_op(last, moved)[0], to_last(expected))


def test_unknown_layout_is_rejected() -> None:
    x = constant(RNG.standard_normal((1, 3, 4, 4)))
    op = nn.MaxPoolOp.build(
        [x],
        {"kernel_shape": ints([2, 2]), "layout": StringAttr("nwhc")},
        [TensorType(f32, [1, 3, 3, 3])],
    )
    with pytest.raises(VerifyException, match="'layout' must be"):
        op.verify_()


ACTIVATIONS = {
    "relu": (nn.ActivationAttr.make("relu"), nn.ReluOp, {}),
    "relu6": (
        nn.ActivationAttr.make("clip", min=0.0, max=6.0),
        nn.ClipOp,
        {"min": 0.0, "max": 6.0},
    ),
    "leaky_relu": (nn.ActivationAttr.make("leaky_relu", alpha=0.1), nn.LeakyReluOp, {"alpha": 0.1}),
    "hard_swish": (nn.ActivationAttr.make("hard_swish"), nn.HardSwishOp, {}),
    "sigmoid": (nn.ActivationAttr.make("sigmoid"), nn.SigmoidOp, {}),
}

PRODUCERS = {
    "conv": (nn.ConvOp, [(1, 3, 6, 6), (4, 3, 3, 3), (4,)]),
    "conv_transpose": (nn.ConvTransposeOp, [(1, 3, 4, 4), (3, 2, 3, 3)]),
    "gemm": (nn.GemmOp, [(3, 5), (5, 4), (4,)]),
    "matmul": (nn.MatMulOp, [(2, 3, 5), (5, 4)]),
    "add": (nn.AddOp, [(2, 3, 4), (4,)]),
}


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("producer", PRODUCERS)
def test_fused_activation_equals_the_unfused_pair(producer: str, activation: str) -> None:
    from xdsl.dialects.builtin import FloatAttr

    op_class, shapes = PRODUCERS[producer]
    attr, activation_class, activation_props = ACTIVATIONS[activation]
    arrays = [(RNG.standard_normal(shape) * 4).astype(np.float32) for shape in shapes]
    plain = op_class.build([constant(a) for a in arrays])
    intermediate = evaluate_op(plain, arrays)[0]
    after = activation_class.build(
        [plain], {k: FloatAttr(v, f32) for k, v in activation_props.items()}
    )
    expected = evaluate_op(after, [intermediate])[0]
    fused = op_class.build([constant(a) for a in arrays], {"activation": attr})
    fused.verify()
    np.testing.assert_array_equal(evaluate_op(fused, arrays)[0], expected)


def test_activation_syntax_round_trips(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    text = """\
func.func @f(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %b = nn.add %a, %a {activation = #nn.activation<clip min = 0.0, max = 6.0>} : tensor<2x2xf32>
  %c = nn.matmul %b, %b {activation = #nn.activation<leaky_relu alpha = 0.25>} : tensor<2x2xf32>
  func.return %c : tensor<2x2xf32>
}
"""
    module = parse_module(text, make_context(), "f.mlir")
    verify_module(module)
    path = tmp_path / "f.mlir"
    path.write_text(text)
    assert irc_opt([str(path)]) == 0
    printed = capsys.readouterr().out
    assert "#nn.activation<clip min = 0.0, max = 6.0>" in printed
    assert "#nn.activation<leaky_relu alpha = 0.25>" in printed


@pytest.mark.parametrize(
    "attribute, message",
    [
        ("#nn.activation<tanh>", "unknown activation 'tanh'"),
        ("#nn.activation<clip min = 0.0>", "activation 'clip' needs max"),
        ("#nn.activation<relu alpha = 1.0>", "'>' expected"),
        ("#nn.activation<leaky_relu beta = 1.0>", "has no parameter 'beta'"),
    ],
)
def test_bad_activations_are_parse_errors(
    attribute: str, message: str, tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.mlir"
    path.write_text(
        "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
        f"  %b = nn.add %a, %a {{activation = {attribute}}} : tensor<2xf32>\n"
        "  func.return %b : tensor<2xf32>\n}\n"
    )
    assert irc_opt([str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{path}:2:" in err
    assert message in err
    assert "Traceback" not in err


def test_weights_helper_is_exact() -> None:
    # dense_from_numpy keeps float32 bits (the activation values are stored as f32).
    array = np.array([0.1, -6.0], np.float32)
    assert dense_from_numpy(array).data.data == array.tobytes()
