"""The `nn` reference interpreter against onnxruntime, op by op.

Each row of `CASES` builds one `nn` op with `XxxOp.build(...)` on seeded random inputs,
runs it with `irc.interp.evaluate_op`, and runs the equivalent single-node ONNX model
(built with `onnx.helper`) in onnxruntime with graph optimizations off. Results must
have exactly the op's result types and match onnxruntime within rtol 1e-4 /
atol 1e-5 (integers and booleans exactly). The last tests cover `run_function`'s
input checking.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import (
    Attribute,
    BoolAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    f16,
    f32,
    i1,
    i32,
    i64,
)
from xdsl.ir import Block, Operation

from irc.diagnostics import IrcError
from irc.dialects import nn
from irc.interp import evaluate_op, function_signature, run_function
from irc.ir import weights
from irc.ir.context import make_context
from irc.ir.io import parse_module

RTOL, ATOL = 1e-4, 1e-5
INT64_MAX = np.iinfo(np.int64).max
_rng = np.random.default_rng(20240611)


def randn(*shape: int) -> np.ndarray:
    """Standard normal float32 data (from the module's seeded generator)."""
    return _rng.standard_normal(shape).astype(np.float32)


def positive(*shape: int) -> np.ndarray:
    """Float32 data in [0.5, 2)."""
    return _rng.uniform(0.5, 2.0, shape).astype(np.float32)


def ints(low: int, high: int, *shape: int, dtype: type = np.int64) -> np.ndarray:
    """Integers in [low, high)."""
    return _rng.integers(low, high, shape).astype(dtype)


def i64s(*values: int) -> np.ndarray:
    """A 1-D int64 array (ONNX's shape-like inputs)."""
    return np.array(values, dtype=np.int64)


@dataclass
class Case:
    """One op: the `nn` form and the equivalent ONNX node."""

    op: type[nn.NNOp]
    inputs: list[np.ndarray]
    props: dict[str, object] = field(default_factory=dict)
    onnx_op: str = ""
    onnx_attrs: dict[str, object] = field(default_factory=dict)
    onnx_extra: list[np.ndarray | None] = field(default_factory=list)
    """Constant ONNX inputs after `inputs` (None leaves an optional input out)."""
    opset: int = 21
    result_shapes: list[tuple[int, ...]] | None = None
    """Result shapes for ops whose result type is not inferred (same element type)."""
    onnx_nodes: Callable[[list[str], list[str]], list[onnx.NodeProto]] | None = None
    """For an op that ONNX has no node of: the nodes that compute it, from the input
    and output names (instead of one `onnx_op` node)."""


def case(name: str, op: type[nn.NNOp], inputs: list[np.ndarray], onnx_op: str, **kwargs):
    """A row of the table."""
    return pytest.param(Case(op, inputs, onnx_op=onnx_op, **kwargs), id=name)


def to_attr(value: object) -> Attribute:
    """A plain Python value as the property attribute that `nn` ops expect."""
    match value:
        case Attribute():
            return value
        case bool():
            return BoolAttr.from_bool(value)
        case int():
            return IntegerAttr(value, i64)
        case float():
            return FloatAttr(value, f32)
        case str():
            return StringAttr(value)
        case list() if all(isinstance(v, int) for v in value):
            return DenseArrayBase.from_list(i64, value)
        case list():
            return DenseArrayBase.from_list(f32, [float(v) for v in value])
    raise TypeError(f"no property attribute for {value!r}")


def build(test: Case) -> Operation:
    """The `nn` op of a case, with block arguments as operands."""
    types = [weights.tensor_type_of(array) for array in test.inputs]
    block = Block(arg_types=types)
    props = {name: to_attr(value) for name, value in test.props.items()}
    result_types = None
    if test.result_shapes is not None:
        element = types[0].get_element_type() if types else f32
        result_types = [TensorType(element, shape) for shape in test.result_shapes]
    op = test.op.build(list(block.args), props, result_types)
    op.verify()
    return op


def run_onnxruntime(test: Case, outputs: int) -> list[np.ndarray]:
    """Run the case's single ONNX node in onnxruntime."""
    names = [f"x{i}" for i in range(len(test.inputs))]
    initializers, extra_names = [], []
    for index, value in enumerate(test.onnx_extra):
        if value is None:
            extra_names.append("")
            continue
        initializers.append(numpy_helper.from_array(value, f"c{index}"))
        extra_names.append(f"c{index}")
    output_names = [f"y{i}" for i in range(outputs)]
    if test.onnx_nodes is not None:
        nodes = test.onnx_nodes(names, output_names)
    else:
        nodes = [
            helper.make_node(test.onnx_op, names + extra_names, output_names, **test.onnx_attrs)
        ]
    graph = helper.make_graph(
        nodes,
        "single_op",
        [
            helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
            for name, a in zip(names, test.inputs)
        ],
        [helper.make_value_info(name, onnx.TypeProto()) for name in output_names],
        initializer=initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", test.opset)])
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    return session.run(None, dict(zip(names, test.inputs)))


def resized(shape: Sequence[int], scales: Sequence[float]) -> tuple[int, ...]:
    """Resize's output shape as onnxruntime computes it: trunc(float32 scale * dim)."""
    return tuple(int(np.float32(s) * np.float32(d)) for d, s in zip(shape, scales))


def resize_case(name: str, x: np.ndarray, scales: list[float], **attrs: object):
    """A Resize row: `nn.resize` with properties `attrs` against ONNX Resize-19."""
    return case(
        name,
        nn.ResizeOp,
        [x],
        "Resize",
        props={"scales": scales, **attrs},
        onnx_attrs=attrs,
        onnx_extra=[None, np.array(scales, np.float32)],
        result_shapes=[resized(x.shape, scales)],
    )


def pool_case(name: str, op: type[nn.NNOp], x: np.ndarray, opset: int = 21, **attrs: object):
    """A MaxPool/AveragePool row; the properties are the ONNX attributes."""
    onnx_op = "MaxPool" if op is nn.MaxPoolOp else "AveragePool"
    props = {
        k: (bool(v) if k in ("ceil_mode", "count_include_pad") else v) for k, v in attrs.items()
    }
    return case(name, op, [x], onnx_op, props=props, onnx_attrs=attrs, opset=opset)


def unary(name: str, op: type[nn.NNOp], onnx_op: str, x: np.ndarray | None = None, **attrs: object):
    """An elementwise unary row whose properties are the ONNX attributes."""
    return case(
        name, op, [randn(2, 3, 4) if x is None else x], onnx_op, props=attrs, onnx_attrs=attrs
    )


def binary(name: str, op: type[nn.NNOp], onnx_op: str, lhs: np.ndarray, rhs: np.ndarray):
    """A broadcasting binary row."""
    return case(name, op, [lhs, rhs], onnx_op)


def masked_softmax_nodes(inputs: list[str], outputs: list[str]) -> list[onnx.NodeProto]:
    """nn.masked_softmax in ONNX: Where(mask, -inf, x), then Softmax."""
    x, mask = inputs
    fill = helper.make_tensor("fill", onnx.TensorProto.FLOAT, [], [-np.inf])
    return [
        helper.make_node("Constant", [], ["fill"], value=fill),
        helper.make_node("Where", [mask, "fill", x], ["masked"]),
        helper.make_node("Softmax", ["masked"], outputs, axis=-1),
    ]


# A float32 tensor with exact zeros and ties, for ops with kinks (relu, floor, ...).
SPECIAL = np.array(
    [[-2.5, -1.5, -0.5, 0.0], [0.5, 1.5, 2.5, 3.7], [-3.7, 1e-3, -1e-3, 7.0]], np.float32
)

CASES = [
    # ---- constants ------------------------------------------------------------------
    case(
        "constant_of_shape",
        nn.ConstantOfShapeOp,
        [],
        "ConstantOfShape",
        props={"value": weights.dense_from_numpy(np.array([2.5], np.float32))},
        onnx_attrs={"value": numpy_helper.from_array(np.array([2.5], np.float32))},
        onnx_extra=[i64s(2, 3, 4)],
        result_shapes=[(2, 3, 4)],
    ),
    # ---- elementwise unary --------------------------------------------------------------
    unary("relu", nn.ReluOp, "Relu", SPECIAL),
    unary("leaky_relu", nn.LeakyReluOp, "LeakyRelu", alpha=0.2),
    unary("leaky_relu_default", nn.LeakyReluOp, "LeakyRelu"),
    unary("elu", nn.EluOp, "Elu", alpha=0.7),
    unary("celu", nn.CeluOp, "Celu", alpha=0.6),
    unary("celu_default", nn.CeluOp, "Celu"),
    unary("selu", nn.SeluOp, "Selu"),
    unary("selu_params", nn.SeluOp, "Selu", alpha=1.5, gamma=0.8),
    case(
        "clip_both",
        nn.ClipOp,
        [randn(3, 5)],
        "Clip",
        props={"min": -0.5, "max": 0.6},
        onnx_extra=[np.array(-0.5, np.float32), np.array(0.6, np.float32)],
    ),
    case(
        "clip_relu6",
        nn.ClipOp,
        [randn(3, 5) * 8],
        "Clip",
        props={"min": 0.0, "max": 6.0},
        onnx_extra=[np.array(0.0, np.float32), np.array(6.0, np.float32)],
    ),
    case(
        "clip_max_only",
        nn.ClipOp,
        [randn(3, 5)],
        "Clip",
        props={"max": 0.1},
        onnx_extra=[None, np.array(0.1, np.float32)],
    ),
    case("clip_unbounded", nn.ClipOp, [randn(3, 5)], "Clip"),
    unary("sigmoid", nn.SigmoidOp, "Sigmoid", randn(4, 5) * 10),
    unary("hard_sigmoid", nn.HardSigmoidOp, "HardSigmoid", randn(4, 5) * 4, alpha=0.3, beta=0.4),
    unary("hard_swish", nn.HardSwishOp, "HardSwish", randn(4, 5) * 4),
    unary("tanh", nn.TanhOp, "Tanh", randn(4, 5) * 3),
    unary("softplus", nn.SoftplusOp, "Softplus", randn(4, 5) * 30),
    unary("softsign", nn.SoftsignOp, "Softsign"),
    case("gelu", nn.GeluOp, [randn(4, 6) * 3], "Gelu"),
    unary("mish", nn.MishOp, "Mish", randn(4, 5) * 10),
    case(
        "gelu_tanh",
        nn.GeluOp,
        [randn(4, 6) * 3],
        "Gelu",
        props={"approximate": "tanh"},
        onnx_attrs={"approximate": "tanh"},
    ),
    unary("exp", nn.ExpOp, "Exp"),
    unary("log", nn.LogOp, "Log", positive(3, 4) * 10),
    unary("sqrt", nn.SqrtOp, "Sqrt", positive(3, 4) * 10),
    unary("erf", nn.ErfOp, "Erf", randn(5, 7) * 2),
    unary("reciprocal", nn.ReciprocalOp, "Reciprocal", positive(3, 4) - 1.2),
    unary("floor", nn.FloorOp, "Floor", SPECIAL),
    unary("ceil", nn.CeilOp, "Ceil", SPECIAL),
    unary("neg", nn.NegOp, "Neg"),
    unary("neg_int64", nn.NegOp, "Neg", ints(-9, 9, 4, 3)),
    unary("abs", nn.AbsOp, "Abs"),
    unary("abs_int32", nn.AbsOp, "Abs", ints(-9, 9, 4, 3, dtype=np.int32)),
    unary("identity", nn.IdentityOp, "Identity"),
    unary("dropout", nn.DropoutOp, "Dropout"),
    case(
        "cast_f32_to_i32_truncates",
        nn.CastOp,
        [SPECIAL * 3],
        "Cast",
        props={"to": i32},
        onnx_attrs={"to": TensorProto.INT32},
    ),
    case(
        "cast_f32_to_i64",
        nn.CastOp,
        [randn(3, 4) * 100],
        "Cast",
        props={"to": i64},
        onnx_attrs={"to": TensorProto.INT64},
    ),
    case(
        "cast_i64_to_f32",
        nn.CastOp,
        [ints(-1000, 1000, 3, 4)],
        "Cast",
        props={"to": f32},
        onnx_attrs={"to": TensorProto.FLOAT},
    ),
    case(
        "cast_f32_to_f16",
        nn.CastOp,
        [randn(3, 4)],
        "Cast",
        props={"to": f16},
        onnx_attrs={"to": TensorProto.FLOAT16},
    ),
    case(
        "cast_f32_to_bool",
        nn.CastOp,
        [SPECIAL],
        "Cast",
        props={"to": i1},
        onnx_attrs={"to": TensorProto.BOOL},
    ),
    case(
        "cast_bool_to_f32",
        nn.CastOp,
        [randn(3, 4) > 0],
        "Cast",
        props={"to": f32},
        onnx_attrs={"to": TensorProto.FLOAT},
    ),
    # ---- elementwise binary and variadic ----------------------------------------------
    binary("add_broadcast", nn.AddOp, "Add", randn(2, 3, 4), randn(3, 1)),
    binary("add_int64", nn.AddOp, "Add", ints(-5, 5, 3), ints(-5, 5, 2, 1)),
    binary("add_f16", nn.AddOp, "Add", randn(3, 4).astype(np.float16), randn(4).astype(np.float16)),
    binary("sub_broadcast", nn.SubOp, "Sub", randn(4), randn(2, 3, 4)),
    binary("mul_broadcast", nn.MulOp, "Mul", randn(2, 1, 4), randn(1, 3, 1)),
    binary("div_float", nn.DivOp, "Div", randn(3, 4), positive(4)),
    binary(
        "div_int_truncates",
        nn.DivOp,
        "Div",
        i64s(7, -7, 7, -7, 6, -6, 0),
        i64s(2, 2, -2, -2, 3, 4, 5),
    ),
    binary(
        "div_int32_broadcast",
        nn.DivOp,
        "Div",
        ints(-50, 50, 3, 4, dtype=np.int32),
        np.array([3, -7, 5, 1], np.int32),
    ),
    binary("pow_float", nn.PowOp, "Pow", positive(3, 4), randn(4)),
    binary("pow_int_exponent", nn.PowOp, "Pow", randn(3, 4), i64s(2)),
    binary(
        "mod_int",  # the divisor's sign, as Python's %
        nn.ModOp,
        "Mod",
        ints(-50, 50, 3, 4, dtype=np.int32),
        np.array([3, -7, 5, 2], np.int32),
    ),
    case(
        "mod_float_fmod",  # the dividend's sign, as C's fmod
        nn.ModOp,
        [randn(3, 4) * 5, positive(4)],
        "Mod",
        props={"fmod": True},
        onnx_attrs={"fmod": 1},
    ),
    case("sum_three", nn.SumOp, [randn(2, 3), randn(3), randn(2, 1)], "Sum"),
    case("sum_one", nn.SumOp, [randn(2, 3)], "Sum"),
    case("max_three", nn.MaxOp, [randn(2, 3), randn(3), randn(2, 1)], "Max"),
    case("min_three", nn.MinOp, [randn(2, 3), randn(3), randn(2, 1)], "Min"),
    binary("equal_int", nn.EqualOp, "Equal", ints(0, 3, 3, 4), ints(0, 3, 4)),
    binary(
        "equal_float", nn.EqualOp, "Equal", SPECIAL, np.array([-2.5, 0.0, 2.5, 7.0], np.float32)
    ),
    binary("less", nn.LessOp, "Less", randn(3, 4), randn(4)),
    binary("less_or_equal", nn.LessOrEqualOp, "LessOrEqual", ints(0, 3, 3, 4), ints(0, 3, 3, 1)),
    binary("greater", nn.GreaterOp, "Greater", randn(3, 4), randn(3, 1)),
    binary(
        "greater_or_equal", nn.GreaterOrEqualOp, "GreaterOrEqual", ints(0, 3, 3, 4), ints(0, 3, 4)
    ),
    case("where", nn.WhereOp, [randn(3, 1) > 0, randn(3, 4), randn(4)], "Where"),
    case("where_int64", nn.WhereOp, [randn(2, 3) > 0, ints(0, 9, 2, 3), ints(0, 9, 1)], "Where"),
    case("prelu_channel", nn.PReluOp, [randn(2, 3, 4, 4), randn(3, 1, 1)], "PRelu"),
    case("prelu_scalar", nn.PReluOp, [randn(2, 5), randn(1)], "PRelu"),
    # ---- convolution --------------------------------------------------------------------
    case(
        "conv_3x3_pad_bias",
        nn.ConvOp,
        [randn(1, 3, 8, 8), randn(4, 3, 3, 3), randn(4)],
        "Conv",
        props={"pads": [1, 1, 1, 1]},
        onnx_attrs={"pads": [1, 1, 1, 1]},
    ),
    case(
        "conv_stride2_asymmetric_pads",
        nn.ConvOp,
        [randn(2, 3, 9, 8), randn(5, 3, 3, 2)],
        "Conv",
        props={"pads": [0, 1, 2, 0], "strides": [2, 3]},
        onnx_attrs={"pads": [0, 1, 2, 0], "strides": [2, 3]},
    ),
    case(
        "conv_dilation",
        nn.ConvOp,
        [randn(1, 2, 10, 11), randn(3, 2, 3, 3), randn(3)],
        "Conv",
        props={"dilations": [2, 3], "pads": [2, 1, 2, 3]},
        onnx_attrs={"dilations": [2, 3], "pads": [2, 1, 2, 3]},
    ),
    case(
        "conv_groups",
        nn.ConvOp,
        [randn(2, 6, 7, 7), randn(4, 3, 3, 3), randn(4)],
        "Conv",
        props={"group": 2, "pads": [1, 1, 1, 1]},
        onnx_attrs={"group": 2, "pads": [1, 1, 1, 1]},
    ),
    case(
        "conv_depthwise",
        nn.ConvOp,
        [randn(1, 8, 9, 9), randn(8, 1, 3, 3), randn(8)],
        "Conv",
        props={"group": 8, "pads": [1, 1, 1, 1], "strides": [2, 2]},
        onnx_attrs={"group": 8, "pads": [1, 1, 1, 1], "strides": [2, 2]},
    ),
    case(
        "conv_depthwise_multiplier",
        nn.ConvOp,
        [randn(2, 3, 6, 7), randn(6, 1, 3, 2)],
        "Conv",
        props={"group": 3, "dilations": [2, 1]},
        onnx_attrs={"group": 3, "dilations": [2, 1]},
    ),
    case(
        "conv_single_input_channel",
        nn.ConvOp,
        [randn(1, 1, 8, 8), randn(4, 1, 5, 5), randn(4)],
        "Conv",
        props={"pads": [2, 2, 2, 2]},
        onnx_attrs={"pads": [2, 2, 2, 2]},
    ),
    case("conv_1x1_batch", nn.ConvOp, [randn(3, 16, 5, 5), randn(8, 16, 1, 1)], "Conv"),
    case(
        "conv_stride_drops_tail",
        nn.ConvOp,
        [randn(1, 2, 8, 8), randn(2, 2, 3, 3)],
        "Conv",
        props={"strides": [3, 3]},
        onnx_attrs={"strides": [3, 3]},
    ),
    case(
        "conv_1d",
        nn.ConvOp,
        [randn(2, 4, 20), randn(6, 4, 5), randn(6)],
        "Conv",
        props={"pads": [2, 1], "strides": [2]},
        onnx_attrs={"pads": [2, 1], "strides": [2]},
    ),
    case(
        "conv_3d",
        nn.ConvOp,
        [randn(1, 2, 5, 6, 7), randn(3, 2, 3, 3, 3), randn(3)],
        "Conv",
        props={"pads": [1, 0, 1, 1, 0, 1]},
        onnx_attrs={"pads": [1, 0, 1, 1, 0, 1]},
    ),
    case(
        "conv_wide_reduction",
        nn.ConvOp,
        [randn(1, 64, 6, 6), randn(16, 64, 3, 3), randn(16)],
        "Conv",
        props={"pads": [1, 1, 1, 1]},
        onnx_attrs={"pads": [1, 1, 1, 1]},
    ),
    case(
        "conv_f16",
        nn.ConvOp,
        [randn(1, 3, 6, 6).astype(np.float16), randn(4, 3, 3, 3).astype(np.float16)],
        "Conv",
    ),
    case(
        "conv_transpose_stride2",
        nn.ConvTransposeOp,
        [randn(1, 4, 5, 5), randn(4, 3, 3, 3), randn(3)],
        "ConvTranspose",
        props={"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]},
        onnx_attrs={"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]},
    ),
    case(
        "conv_transpose_groups_dilation",
        nn.ConvTransposeOp,
        [randn(2, 4, 4, 5), randn(4, 2, 3, 2), randn(4)],
        "ConvTranspose",
        props={"group": 2, "dilations": [2, 1], "strides": [1, 2]},
        onnx_attrs={"group": 2, "dilations": [2, 1], "strides": [1, 2]},
    ),
    case(
        "conv_transpose_asymmetric_pads",
        nn.ConvTransposeOp,
        [randn(1, 3, 4, 4), randn(3, 2, 4, 4)],
        "ConvTranspose",
        props={"strides": [2, 2], "pads": [0, 1, 2, 1]},
        onnx_attrs={"strides": [2, 2], "pads": [0, 1, 2, 1]},
    ),
    case(
        "conv_transpose_1d",
        nn.ConvTransposeOp,
        [randn(1, 2, 7), randn(2, 3, 4), randn(3)],
        "ConvTranspose",
        props={"strides": [3], "output_padding": [2]},
        onnx_attrs={"strides": [3], "output_padding": [2]},
    ),
    case(
        "conv_transpose_3d",
        nn.ConvTransposeOp,
        [randn(1, 2, 3, 3, 3), randn(2, 2, 2, 2, 2)],
        "ConvTranspose",
        props={"strides": [2, 2, 2]},
        onnx_attrs={"strides": [2, 2, 2]},
    ),
    # ---- matrix products --------------------------------------------------------------------
    case("gemm", nn.GemmOp, [randn(3, 5), randn(5, 4), randn(4)], "Gemm"),
    case(
        "gemm_trans_alpha_beta",
        nn.GemmOp,
        [randn(5, 3), randn(4, 5), randn(3, 1)],
        "Gemm",
        props={"trans_a": True, "trans_b": True, "alpha": 0.5, "beta": 2.0},
        onnx_attrs={"transA": 1, "transB": 1, "alpha": 0.5, "beta": 2.0},
    ),
    case(
        "gemm_trans_b_matrix_bias",
        nn.GemmOp,
        [randn(3, 5), randn(4, 5), randn(3, 4)],
        "Gemm",
        props={"trans_b": True},
        onnx_attrs={"transB": 1},
    ),
    case("gemm_no_bias", nn.GemmOp, [randn(2, 7), randn(7, 3)], "Gemm"),
    case("matmul_2d", nn.MatMulOp, [randn(3, 64), randn(64, 5)], "MatMul"),
    case("matmul_batch_broadcast", nn.MatMulOp, [randn(2, 1, 3, 4), randn(5, 4, 6)], "MatMul"),
    case("matmul_vector_matrix", nn.MatMulOp, [randn(4), randn(2, 4, 3)], "MatMul"),
    case("matmul_matrix_vector", nn.MatMulOp, [randn(2, 3, 4), randn(4)], "MatMul"),
    case("matmul_vector_vector", nn.MatMulOp, [randn(6), randn(6)], "MatMul"),
    case("matmul_int64", nn.MatMulOp, [ints(-5, 5, 3, 4), ints(-5, 5, 4, 2)], "MatMul"),
    case("matmul_long_reduction", nn.MatMulOp, [randn(4, 2048), randn(2048, 8)], "MatMul"),
    # ---- normalization ------------------------------------------------------------------------
    case(
        "batch_norm",
        nn.BatchNormOp,
        [randn(2, 3, 4, 5), randn(3), randn(3), randn(3), positive(3)],
        "BatchNormalization",
        props={"epsilon": 1e-3},
        onnx_attrs={"epsilon": 1e-3},
    ),
    case(
        "batch_norm_2d",
        nn.BatchNormOp,
        [randn(4, 3), randn(3), randn(3), randn(3), positive(3)],
        "BatchNormalization",
    ),
    case(
        "instance_norm",
        nn.InstanceNormOp,
        [randn(2, 3, 4, 5) * 3 + 1, randn(3), randn(3)],
        "InstanceNormalization",
        props={"epsilon": 1e-4},
        onnx_attrs={"epsilon": 1e-4},
    ),
    case(
        "layer_norm_last_axis",
        nn.LayerNormOp,
        [randn(2, 5, 8) + 2, randn(8), randn(8)],
        "LayerNormalization",
        opset=17,
    ),
    case(
        "layer_norm_axis1_no_bias",
        nn.LayerNormOp,
        [randn(2, 3, 4), randn(3, 4)],
        "LayerNormalization",
        props={"axis": 1, "epsilon": 1e-3},
        onnx_attrs={"axis": 1, "epsilon": 1e-3},
        opset=17,
    ),
    case(
        "lrn_odd",
        nn.LRNOp,
        [randn(2, 7, 3, 3)],
        "LRN",
        props={"size": 3, "alpha": 0.01, "bias": 2.0},
        onnx_attrs={"size": 3, "alpha": 0.01, "bias": 2.0},
    ),
    # ---- pooling ---------------------------------------------------------------------------------
    pool_case("max_pool_2x2", nn.MaxPoolOp, randn(1, 3, 8, 8), kernel_shape=[2, 2], strides=[2, 2]),
    pool_case(
        "max_pool_3x3_s2_pad1",
        nn.MaxPoolOp,
        randn(2, 3, 9, 10),
        kernel_shape=[3, 3],
        strides=[2, 2],
        pads=[1, 1, 1, 1],
    ),
    pool_case(
        "max_pool_ceil",
        nn.MaxPoolOp,
        randn(1, 2, 7, 8),
        kernel_shape=[3, 2],
        strides=[2, 3],
        ceil_mode=1,
    ),
    pool_case(
        "max_pool_ceil_pads",
        nn.MaxPoolOp,
        randn(1, 2, 6, 6),
        kernel_shape=[3, 3],
        strides=[2, 2],
        pads=[1, 1, 1, 1],
        ceil_mode=1,
    ),
    pool_case(
        "max_pool_dilation",
        nn.MaxPoolOp,
        randn(1, 2, 9, 9),
        kernel_shape=[2, 3],
        dilations=[3, 2],
        pads=[1, 0, 1, 2],
    ),
    pool_case(
        "max_pool_dilation_ceil",
        nn.MaxPoolOp,
        randn(1, 1, 10, 10),
        kernel_shape=[3, 3],
        dilations=[2, 2],
        strides=[3, 3],
        ceil_mode=1,
    ),
    pool_case(
        "max_pool_1d", nn.MaxPoolOp, randn(2, 3, 11), kernel_shape=[3], strides=[2], pads=[1, 1]
    ),
    pool_case(
        "max_pool_3d", nn.MaxPoolOp, randn(1, 2, 5, 6, 7), kernel_shape=[2, 2, 3], strides=[2, 2, 2]
    ),
    pool_case(
        "average_pool_2x2", nn.AveragePoolOp, randn(1, 3, 8, 8), kernel_shape=[2, 2], strides=[2, 2]
    ),
    pool_case(
        "average_pool_pads_excluded",
        nn.AveragePoolOp,
        randn(1, 2, 7, 7),
        kernel_shape=[3, 3],
        pads=[1, 1, 1, 1],
    ),
    pool_case(
        "average_pool_pads_included",
        nn.AveragePoolOp,
        randn(1, 2, 7, 7),
        kernel_shape=[3, 3],
        pads=[1, 2, 1, 0],
        count_include_pad=1,
    ),
    pool_case(
        "average_pool_ceil",
        nn.AveragePoolOp,
        randn(1, 2, 7, 8),
        kernel_shape=[3, 3],
        strides=[2, 2],
        ceil_mode=1,
    ),
    pool_case(
        "average_pool_ceil_include_pad",
        nn.AveragePoolOp,
        randn(1, 2, 6, 6),
        kernel_shape=[3, 3],
        strides=[2, 2],
        pads=[1, 1, 1, 1],
        ceil_mode=1,
        count_include_pad=1,
    ),
    pool_case(
        "average_pool_dilation",
        nn.AveragePoolOp,
        randn(1, 2, 9, 9),
        kernel_shape=[2, 2],
        dilations=[2, 3],
        pads=[1, 1, 1, 1],
        opset=19,
    ),
    pool_case(
        "average_pool_1d",
        nn.AveragePoolOp,
        randn(2, 3, 10),
        kernel_shape=[4],
        strides=[3],
        pads=[2, 1],
    ),
    pool_case(
        "average_pool_3d",
        nn.AveragePoolOp,
        randn(1, 2, 4, 5, 6),
        kernel_shape=[2, 3, 2],
        pads=[1, 1, 0, 0, 1, 1],
    ),
    case("global_average_pool", nn.GlobalAveragePoolOp, [randn(2, 3, 7, 5)], "GlobalAveragePool"),
    case("global_average_pool_1d", nn.GlobalAveragePoolOp, [randn(2, 3, 7)], "GlobalAveragePool"),
    case("global_max_pool", nn.GlobalMaxPoolOp, [randn(2, 3, 7, 5)], "GlobalMaxPool"),
    # ---- reductions and softmax ---------------------------------------------------------------------
    case(
        "reduce_mean_axes",
        nn.ReduceMeanOp,
        [randn(2, 3, 4, 5)],
        "ReduceMean",
        props={"axes": [2, 3]},
        onnx_extra=[i64s(2, 3)],
    ),
    case(
        "reduce_mean_all",
        nn.ReduceMeanOp,
        [randn(2, 3, 4)],
        "ReduceMean",
        props={"keepdims": False},
        onnx_attrs={"keepdims": 0},
    ),
    case(
        "reduce_sum_negative_axis",
        nn.ReduceSumOp,
        [randn(2, 3, 4)],
        "ReduceSum",
        props={"axes": [-1], "keepdims": False},
        onnx_attrs={"keepdims": 0},
        onnx_extra=[i64s(-1)],
    ),
    case(
        "reduce_sum_int64",
        nn.ReduceSumOp,
        [ints(-9, 9, 3, 4)],
        "ReduceSum",
        props={"axes": [0]},
        onnx_extra=[i64s(0)],
    ),
    case(
        "reduce_max",
        nn.ReduceMaxOp,
        [randn(2, 3, 4)],
        "ReduceMax",
        props={"axes": [0, 2], "keepdims": False},
        onnx_attrs={"keepdims": 0},
        onnx_extra=[i64s(0, 2)],
    ),
    case(
        "reduce_min",
        nn.ReduceMinOp,
        [randn(2, 3, 4)],
        "ReduceMin",
        props={"axes": [1]},
        onnx_extra=[i64s(1)],
    ),
    case(
        "cumsum",
        nn.CumSumOp,
        [randn(3, 4)],
        "CumSum",
        props={"axis": 1},
        onnx_extra=[np.array(1, np.int64)],
    ),
    case(
        "cumsum_exclusive_reverse_int",
        nn.CumSumOp,
        [ints(-9, 9, 2, 5, dtype=np.int32)],
        "CumSum",
        props={"axis": -1, "exclusive": True, "reverse": True},
        onnx_attrs={"exclusive": 1, "reverse": 1},
        onnx_extra=[np.array(-1, np.int64)],
    ),
    case(
        "trilu_upper",
        nn.TriluOp,
        [randn(2, 4, 5)],
        "Trilu",
        props={"k": 1},
        onnx_extra=[np.array(1, np.int64)],
    ),
    case(
        "trilu_lower_causal_mask",
        nn.TriluOp,
        [np.ones((6, 6), np.float32)],
        "Trilu",
        props={"upper": False, "k": -1},
        onnx_attrs={"upper": 0},
        onnx_extra=[np.array(-1, np.int64)],
    ),
    case("softmax_last", nn.SoftmaxOp, [randn(3, 10) * 5], "Softmax"),
    case(
        "softmax_axis1_of_3d",
        nn.SoftmaxOp,
        [randn(2, 4, 3) * 5],
        "Softmax",
        props={"axis": 1},
        onnx_attrs={"axis": 1},
    ),
    case(
        "softmax_axis0",
        nn.SoftmaxOp,
        [randn(4, 3)],
        "Softmax",
        props={"axis": 0},
        onnx_attrs={"axis": 0},
    ),
    case(
        "masked_softmax_causal",
        nn.MaskedSoftmaxOp,
        [randn(2, 3, 5, 5) * 4, np.triu(np.ones((5, 5), bool), 1)],
        "",
        onnx_nodes=masked_softmax_nodes,
    ),
    case(
        "masked_softmax_broadcast_rows",
        nn.MaskedSoftmaxOp,
        [randn(4, 6) * 4, np.array([[True, False, False, True, False, False]])],
        "",
        onnx_nodes=masked_softmax_nodes,
    ),
    case("softmax_large_values", nn.SoftmaxOp, [randn(2, 6) * 100], "Softmax"),
    case("softmax_f16", nn.SoftmaxOp, [randn(3, 7).astype(np.float16) * 4], "Softmax"),
    case("log_softmax_last", nn.LogSoftmaxOp, [randn(3, 10) * 5], "LogSoftmax"),
    case(
        "log_softmax_axis1",
        nn.LogSoftmaxOp,
        [randn(2, 4, 3) * 5],
        "LogSoftmax",
        props={"axis": 1},
        onnx_attrs={"axis": 1},
    ),
    # ---- data movement ------------------------------------------------------------------------------
    case(
        "concat_axis1",
        nn.ConcatOp,
        [randn(2, 3, 4), randn(2, 1, 4), randn(2, 2, 4)],
        "Concat",
        props={"axis": 1},
        onnx_attrs={"axis": 1},
    ),
    case(
        "concat_negative_axis_int64",
        nn.ConcatOp,
        [ints(0, 9, 2, 3), ints(0, 9, 2, 2)],
        "Concat",
        props={"axis": -1},
        onnx_attrs={"axis": -1},
    ),
    case(
        "split_uneven",
        nn.SplitOp,
        [randn(2, 7, 3)],
        "Split",
        props={"axis": 1, "sizes": [2, 4, 1]},
        onnx_attrs={"axis": 1},
        onnx_extra=[i64s(2, 4, 1)],
    ),
    case(
        "split_negative_axis",
        nn.SplitOp,
        [randn(4, 6)],
        "Split",
        props={"axis": -1, "sizes": [3, 3]},
        onnx_attrs={"axis": -1},
        onnx_extra=[i64s(3, 3)],
    ),
    case(
        "slice_basic",
        nn.SliceOp,
        [randn(5, 6, 7)],
        "Slice",
        props={"starts": [1, 2], "ends": [4, 6], "axes": [0, 2]},
        onnx_extra=[i64s(1, 2), i64s(4, 6), i64s(0, 2)],
    ),
    case(
        "slice_negative_and_clamped",
        nn.SliceOp,
        [randn(5, 6)],
        "Slice",
        props={"starts": [-3, 1], "ends": [INT64_MAX, 100]},
        onnx_extra=[i64s(-3, 1), i64s(INT64_MAX, 100)],
    ),
    case(
        "slice_negative_steps",
        nn.SliceOp,
        [randn(5, 6)],
        "Slice",
        props={"starts": [-1, 4], "ends": [-INT64_MAX, 0], "axes": [0, -1], "steps": [-2, -1]},
        onnx_extra=[i64s(-1, 4), i64s(-INT64_MAX, 0), i64s(0, -1), i64s(-2, -1)],
    ),
    case(
        "slice_steps_out_of_range_start",
        nn.SliceOp,
        [ints(0, 9, 10)],
        "Slice",
        props={"starts": [20], "ends": [-20], "steps": [-3]},
        onnx_extra=[i64s(20), i64s(-20), i64s(0), i64s(-3)],
    ),
    case(
        "slice_empty",
        nn.SliceOp,
        [randn(4, 3)],
        "Slice",
        props={"starts": [3], "ends": [1]},
        onnx_extra=[i64s(3), i64s(1)],
    ),
    # ONNX clamps a negative step's start into [0, size - 1]; a Python slice would be empty.
    case(
        "slice_negative_step_start_before_first",
        nn.SliceOp,
        [randn(3, 4)],
        "Slice",
        props={"starts": [-5, -9], "ends": [-7, -12], "axes": [0, 1], "steps": [-1, -2]},
        onnx_extra=[i64s(-5, -9), i64s(-7, -12), i64s(0, 1), i64s(-1, -2)],
    ),
    case("gather_axis0_negative", nn.GatherOp, [randn(5, 3), i64s(0, -1, 2, -5)], "Gather"),
    case(
        "gather_axis1_matrix_indices",
        nn.GatherOp,
        [randn(2, 5, 3), ints(-5, 5, 2, 2, dtype=np.int32)],
        "Gather",
        props={"axis": 1},
        onnx_attrs={"axis": 1},
    ),
    case(
        "gather_scalar_index", nn.GatherOp, [i64s(1, 3, 224, 224), np.array(-2, np.int64)], "Gather"
    ),
    case(
        "reshape",
        nn.ReshapeOp,
        [randn(2, 3, 4)],
        "Reshape",
        onnx_extra=[i64s(4, 6)],
        result_shapes=[(4, 6)],
    ),
    case("flatten_default", nn.FlattenOp, [randn(2, 3, 4, 5)], "Flatten"),
    case(
        "flatten_axis0",
        nn.FlattenOp,
        [randn(2, 3, 4)],
        "Flatten",
        props={"axis": 0},
        onnx_attrs={"axis": 0},
    ),
    case(
        "flatten_negative_axis",
        nn.FlattenOp,
        [randn(2, 3, 4)],
        "Flatten",
        props={"axis": -1},
        onnx_attrs={"axis": -1},
    ),
    case(
        "squeeze",
        nn.SqueezeOp,
        [randn(1, 3, 1, 4)],
        "Squeeze",
        props={"axes": [0, -2]},
        onnx_extra=[i64s(0, -2)],
    ),
    case(
        "unsqueeze",
        nn.UnsqueezeOp,
        [randn(3, 4)],
        "Unsqueeze",
        props={"axes": [0, -1]},
        onnx_extra=[i64s(0, -1)],
    ),
    case(
        "transpose",
        nn.TransposeOp,
        [randn(2, 3, 4, 5)],
        "Transpose",
        props={"perm": [0, 2, 3, 1]},
        onnx_attrs={"perm": [0, 2, 3, 1]},
    ),
    case(
        "pad_constant_value",
        nn.PadOp,
        [randn(1, 2, 3, 4)],
        "Pad",
        props={"pads": [0, 0, 1, 2, 0, 1, 2, 0], "value": 1.5},
        onnx_extra=[i64s(0, 0, 1, 2, 0, 1, 2, 0), np.array(1.5, np.float32)],
    ),
    case(
        "pad_reflect",
        nn.PadOp,
        [randn(2, 4, 5)],
        "Pad",
        props={"pads": [0, 2, 1, 0, 3, 4], "mode": "reflect"},
        onnx_attrs={"mode": "reflect"},
        onnx_extra=[i64s(0, 2, 1, 0, 3, 4)],
    ),
    case(
        "pad_edge",
        nn.PadOp,
        [randn(2, 4, 5)],
        "Pad",
        props={"pads": [1, 2, 0, 0, 3, 6], "mode": "edge"},
        onnx_attrs={"mode": "edge"},
        onnx_extra=[i64s(1, 2, 0, 0, 3, 6)],
    ),
    case(
        "pad_wrap",
        nn.PadOp,
        [randn(3, 4, 5)],
        "Pad",
        props={"pads": [0, 2, 1, 0, 3, 4], "mode": "wrap"},
        onnx_attrs={"mode": "wrap"},
        onnx_extra=[i64s(0, 2, 1, 0, 3, 4)],
    ),
    case(
        "pad_negative_crops",
        nn.PadOp,
        [randn(4, 6)],
        "Pad",
        props={"pads": [-1, 2, 1, -3]},
        onnx_extra=[i64s(-1, 2, 1, -3)],
    ),
    case(
        "pad_negative_reflect",
        nn.PadOp,
        [randn(5, 6)],
        "Pad",
        props={"pads": [-1, 2, 2, -2], "mode": "reflect"},
        onnx_attrs={"mode": "reflect"},
        onnx_extra=[i64s(-1, 2, 2, -2)],
    ),
    # A crop larger than the axis: output[i] = input[i - begin] where that exists.
    case(
        "pad_crop_past_the_axis",
        nn.PadOp,
        [randn(2, 4)],
        "Pad",
        props={"pads": [0, -6, 1, 4], "value": 0.5},
        onnx_extra=[i64s(0, -6, 1, 4), np.array(0.5, np.float32)],
    ),
    case(
        "pad_int64_constant",
        nn.PadOp,
        [ints(0, 9, 2, 3)],
        "Pad",
        props={"pads": [1, 0, 0, 2], "value": 7.0},
        onnx_extra=[i64s(1, 0, 0, 2), np.array(7, np.int64)],
    ),
    case(
        "depth_to_space_dcr",
        nn.DepthToSpaceOp,
        [randn(2, 8, 3, 4)],
        "DepthToSpace",
        props={"blocksize": 2},
        onnx_attrs={"blocksize": 2},
    ),
    case(
        "depth_to_space_crd",
        nn.DepthToSpaceOp,
        [randn(1, 18, 2, 3)],
        "DepthToSpace",
        props={"blocksize": 3, "mode": "CRD"},
        onnx_attrs={"blocksize": 3, "mode": "CRD"},
    ),
    case(
        "expand",
        nn.ExpandOp,
        [randn(3, 1)],
        "Expand",
        onnx_extra=[i64s(2, 3, 4)],
        result_shapes=[(2, 3, 4)],
    ),
    case(
        "tile", nn.TileOp, [randn(2, 3)], "Tile", props={"repeats": [2, 3]}, onnx_extra=[i64s(2, 3)]
    ),
    case(
        "tile_int64_zero",
        nn.TileOp,
        [ints(0, 9, 2, 3)],
        "Tile",
        props={"repeats": [1, 0]},
        onnx_extra=[i64s(1, 0)],
    ),
    case("shape", nn.ShapeOp, [randn(2, 3, 4, 5)], "Shape"),
    case(
        "shape_start_end",
        nn.ShapeOp,
        [randn(2, 3, 4, 5)],
        "Shape",
        props={"start": 1, "end": -1},
        onnx_attrs={"start": 1, "end": -1},
    ),
    case(
        "shape_clamped",
        nn.ShapeOp,
        [randn(2, 3, 4)],
        "Shape",
        props={"start": -10, "end": 10},
        onnx_attrs={"start": -10, "end": 10},
    ),
    # ---- resize -------------------------------------------------------------------------------------------
    resize_case(
        "resize_nearest_asymmetric_floor_x2",
        randn(1, 2, 3, 4),
        [1.0, 1.0, 2.0, 2.0],
        coordinate_transformation_mode="asymmetric",
        nearest_mode="floor",
    ),
    resize_case("resize_nearest_half_pixel_x2", randn(1, 2, 3, 4), [1.0, 1.0, 2.0, 2.0]),
    resize_case("resize_nearest_half_pixel_down_ties", randn(1, 1, 8, 8), [1.0, 1.0, 0.5, 0.5]),
    resize_case(
        "resize_nearest_prefer_ceil_down_ties",
        randn(1, 1, 8, 8),
        [1.0, 1.0, 0.5, 0.5],
        nearest_mode="round_prefer_ceil",
    ),
    resize_case(
        "resize_nearest_ceil_fractional",
        randn(1, 2, 5, 7),
        [1.0, 1.0, 1.5, 0.6],
        nearest_mode="ceil",
    ),
    resize_case(
        "resize_nearest_floor_fractional",
        randn(1, 2, 5, 7),
        [1.0, 1.0, 1.7, 0.6],
        nearest_mode="floor",
    ),
    resize_case(
        "resize_nearest_align_corners",
        randn(1, 2, 4, 5),
        [1.0, 1.0, 2.5, 1.6],
        coordinate_transformation_mode="align_corners",
    ),
    resize_case(
        "resize_nearest_pytorch_half_pixel",
        randn(1, 2, 4, 5),
        [1.0, 1.0, 0.25, 1.4],
        coordinate_transformation_mode="pytorch_half_pixel",
    ),
    resize_case(
        "resize_nearest_half_pixel_symmetric",
        randn(1, 2, 5, 7),
        [1.0, 1.0, 1.5, 0.7],
        coordinate_transformation_mode="half_pixel_symmetric",
    ),
    # 0.6 * 5 = 3.0000001 (float32): the sample of output 1 lies a hair below 2.
    resize_case(
        "resize_nearest_half_pixel_symmetric_floor",
        randn(1, 1, 3, 5),
        [1.0, 1.0, 1.5, 0.6],
        coordinate_transformation_mode="half_pixel_symmetric",
        nearest_mode="floor",
    ),
    # The shape does not change: onnxruntime copies the input whatever the scale says.
    resize_case(
        "resize_same_shape_is_identity",
        randn(1, 2, 6, 9),
        [1.0, 1.0, 1.1, 1.1],
        coordinate_transformation_mode="pytorch_half_pixel",
        nearest_mode="floor",
    ),
    resize_case("resize_nearest_channels_3d", randn(2, 3, 5), [1.0, 2.0, 0.6]),
    resize_case(
        "resize_linear_half_pixel_x2", randn(1, 2, 3, 4), [1.0, 1.0, 2.0, 2.0], mode="linear"
    ),
    resize_case("resize_linear_down", randn(1, 2, 8, 9), [1.0, 1.0, 0.5, 0.7], mode="linear"),
    resize_case(
        "resize_linear_align_corners",
        randn(1, 2, 4, 5),
        [1.0, 1.0, 2.0, 1.6],
        mode="linear",
        coordinate_transformation_mode="align_corners",
    ),
    resize_case(
        "resize_linear_asymmetric",
        randn(1, 2, 4, 5),
        [1.0, 1.0, 1.5, 3.0],
        mode="linear",
        coordinate_transformation_mode="asymmetric",
    ),
    resize_case(
        "resize_linear_pytorch_half_pixel_to_one",
        randn(1, 2, 4, 5),
        [1.0, 1.0, 0.25, 2.0],
        mode="linear",
        coordinate_transformation_mode="pytorch_half_pixel",
    ),
    resize_case(
        "resize_linear_half_pixel_symmetric",
        randn(1, 2, 5, 7),
        [1.0, 1.0, 1.5, 0.7],
        mode="linear",
        coordinate_transformation_mode="half_pixel_symmetric",
    ),
    resize_case("resize_linear_5d", randn(1, 2, 3, 4, 5), [1.0, 1.0, 2.0, 1.5, 0.6], mode="linear"),
    resize_case("resize_linear_2d", randn(4, 5), [2.0, 0.6], mode="linear"),
    resize_case("resize_cubic_x2", randn(1, 2, 4, 5), [1.0, 1.0, 2.0, 2.0], mode="cubic"),
    resize_case(
        "resize_cubic_exclude_outside",
        randn(1, 2, 4, 5),
        [1.0, 1.0, 1.5, 2.5],
        mode="cubic",
        exclude_outside=True,
    ),
    resize_case(
        "resize_cubic_coeff_a",
        randn(1, 1, 6, 6),
        [1.0, 1.0, 0.5, 1.5],
        mode="cubic",
        cubic_coeff_a=-0.5,
    ),
    resize_case(
        "resize_cubic_align_corners",
        randn(1, 2, 4, 5),
        [1.0, 1.0, 2.0, 1.6],
        mode="cubic",
        coordinate_transformation_mode="align_corners",
    ),
    resize_case(
        "resize_cubic_asymmetric_down",
        randn(1, 2, 9, 8),
        [1.0, 1.0, 0.4, 0.75],
        mode="cubic",
        coordinate_transformation_mode="asymmetric",
    ),
]


@pytest.mark.parametrize("test", CASES)
def test_op_matches_onnxruntime(test: Case) -> None:
    op = build(test)
    ours = evaluate_op(op, test.inputs)
    theirs = run_onnxruntime(test, len(op.results))
    assert len(ours) == len(op.results)
    for result, mine, reference in zip(op.results, ours, theirs):
        assert isinstance(result.type, TensorType)
        assert mine.dtype == weights.dtype_of(result.type.get_element_type()) == reference.dtype
        assert mine.shape == tuple(result.type.get_shape()) == reference.shape
        if mine.dtype.kind == "f":
            np.testing.assert_allclose(mine, reference, rtol=RTOL, atol=ATOL)
        else:
            np.testing.assert_array_equal(mine, reference)


def test_constant() -> None:
    value = randn(3, 4)
    op = nn.ConstantOp.from_array(value)
    node = helper.make_node("Constant", [], ["y"], value=numpy_helper.from_array(value))
    graph = helper.make_graph(
        [node], "constant", [], [helper.make_value_info("y", onnx.TypeProto())]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (reference,) = session.run(None, {})
    (ours,) = evaluate_op(op, [])
    assert ours.dtype == np.float32
    np.testing.assert_array_equal(ours, reference)


def test_every_nn_op_has_an_implementation_and_a_case() -> None:
    from irc.interp.nn import NNFunctions

    implemented = {op_type for op_type, _ in NNFunctions._impls()}
    tested = {param.values[0].op for param in CASES} | {nn.ConstantOp}
    every_op = set(nn.NN.operations)
    assert every_op - implemented == set()
    assert every_op - tested == set()


def test_lrn_even_size_follows_the_onnx_formula() -> None:
    # onnxruntime only takes odd sizes (and onnx's reference evaluator sums over the
    # wrong axis), so the check is the formula of the ONNX spec, written out:
    # square_sum[n, c] = sum of x[n, i]^2 for max(0, c - floor((size - 1) / 2)) <= i
    # <= min(C - 1, c + ceil((size - 1) / 2)).
    x, size, alpha, beta, bias = randn(2, 6, 3, 2) * 5, 4, 0.02, 0.5, 1.5
    props = {"size": size, "alpha": alpha, "beta": beta, "bias": bias}
    test = Case(nn.LRNOp, [x], props=props)
    (ours,) = evaluate_op(build(test), test.inputs)
    expected = np.empty_like(x, dtype=np.float64)
    channels = x.shape[1]
    for c in range(channels):
        low, high = max(0, c - (size - 1) // 2), min(channels - 1, c + size // 2)
        square_sum = (x[:, low : high + 1].astype(np.float64) ** 2).sum(axis=1)
        expected[:, c] = x[:, c] / (bias + alpha / size * square_sum) ** beta
    np.testing.assert_allclose(ours, expected, rtol=RTOL, atol=ATOL)


def test_erf_and_gelu_of_a_rank_0_tensor() -> None:
    # np.frompyfunc, which erf is built on, returns a Python float for a rank-0 input.
    x = np.array(0.5, np.float32)
    (erf,) = evaluate_op(build(Case(nn.ErfOp, [x])), [x])
    (gelu,) = evaluate_op(build(Case(nn.GeluOp, [x])), [x])
    assert erf.shape == gelu.shape == () and erf.dtype == gelu.dtype == np.float32
    np.testing.assert_allclose(erf, 0.5204998778, rtol=RTOL)  # math.erf(0.5)
    np.testing.assert_allclose(gelu, 0.3457312306, rtol=RTOL)  # 0.5 * x * (1 + erf(x / sqrt 2))


def test_gather_index_out_of_range_is_an_error() -> None:
    test = Case(nn.GatherOp, [randn(4, 3), i64s(1, 4)])
    with pytest.raises(IrcError, match="gather index 4 is out of range for axis 0 of size 4"):
        evaluate_op(build(test), test.inputs)


# --------------------------------------------------------------------------------------
# run_function

MODEL = """
func.func @main(%x: tensor<1x3x4x4xf32> {irc.name = "image"}, %k: tensor<2xi64>)
    -> (tensor<1x3x2x2xf32> {irc.name = "pooled"}, tensor<1x3x4x4xf32>) {
  %p = nn.max_pool %x {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x3x4x4xf32>) -> tensor<1x3x2x2xf32>
  %r = nn.relu %x : tensor<1x3x4x4xf32>
  func.return %p, %r : tensor<1x3x2x2xf32>, tensor<1x3x4x4xf32>
}
"""


@pytest.fixture
def model():
    return parse_module(MODEL, make_context(), "model.mlir")


def test_run_function_by_name_and_position(model) -> None:
    image = randn(1, 3, 4, 4)
    by_name = run_function(model, {"image": image, "arg1": i64s(1, 2)})
    assert list(by_name) == ["pooled", "output_1"]
    expected = image.reshape(1, 3, 2, 2, 2, 2).max(axis=(3, 5))
    np.testing.assert_array_equal(by_name["pooled"], expected)
    np.testing.assert_array_equal(by_name["output_1"], np.maximum(image, 0))
    by_position = run_function(model, [image.astype(np.float64), [1, 2]])
    assert by_position["pooled"].dtype == np.float32
    np.testing.assert_array_equal(by_position["pooled"], expected)


def test_function_signature(model) -> None:
    inputs, outputs = function_signature(model)
    assert [(name, str(t)) for name, t in inputs] == [
        ("image", "tensor<1x3x4x4xf32>"),
        ("arg1", "tensor<2xi64>"),
    ]
    assert [name for name, _ in outputs] == ["pooled", "output_1"]


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        pytest.param(
            {"arg1": i64s(1, 2)}, r"missing input 'image' of type tensor<1x3x4x4xf32>", id="missing"
        ),
        pytest.param(
            {"image": randn(1, 3, 4, 4), "arg1": i64s(1, 2), "mask": randn(1)},
            "unknown input 'mask'",
            id="unknown",
        ),
        pytest.param(
            {"image": randn(1, 3, 4, 5), "arg1": i64s(1, 2)},
            r"input 'image' has shape \[1, 3, 4, 5\], expected \[1, 3, 4, 4\]",
            id="shape",
        ),
        pytest.param(
            {"image": randn(1, 3, 4, 4), "arg1": np.array([1.5, 2.0])},
            "input 'arg1' has element type float64, which cannot be converted to int64",
            id="float_for_int",
        ),
        pytest.param(
            {"image": randn(1, 3, 4, 4), "arg1": np.array([1, 2**63], np.uint64)},
            "input 'arg1' has element type",
            id="int_overflow_is_not_silent",
        ),
        pytest.param([randn(1, 3, 4, 4)], "@main takes 2 inputs, got 1", id="count"),
    ],
)
def test_run_function_rejects_bad_inputs(model, inputs, message) -> None:
    with pytest.raises(IrcError, match=message) as failure:
        run_function(model, inputs)
    assert "model.mlir:2" in str(failure.value)
    assert failure.value.diagnostics[0].hint


def test_run_function_unknown_entry(model) -> None:
    with pytest.raises(IrcError, match="no function @predict"):
        run_function(model, [], entry="predict")


def test_run_function_reports_data_errors_at_the_op() -> None:
    text = """
func.func @main(%x: tensor<3x2xf32>, %i: tensor<2xi64>) -> tensor<2x2xf32> {
  %y = nn.gather %x, %i : (tensor<3x2xf32>, tensor<2xi64>) -> tensor<2x2xf32>
  func.return %y : tensor<2x2xf32>
}
"""
    module = parse_module(text, make_context(), "gather.mlir")
    (y,) = run_function(module, [randn(3, 2), i64s(-3, 2)]).values()
    assert y.shape == (2, 2)
    with pytest.raises(IrcError, match="gather index 3 is out of range") as failure:
        run_function(module, [randn(3, 2), i64s(0, 3)])
    assert "gather.mlir:3:" in str(failure.value)


def test_run_function_with_elided_weights_is_an_error() -> None:
    text = """
func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {
  %w = nn.constant dense_resource<weights_0> : tensor<64xf32>
  %y = nn.add %x, %w : tensor<64xf32>
  func.return %y : tensor<64xf32>
}
"""
    module = parse_module(text, make_context(), "elided.mlir")
    with pytest.raises(IrcError, match="has no data") as failure:
        run_function(module, [randn(64)])
    assert "elided.mlir:3:" in str(failure.value)


def test_masked_softmax_of_a_row_masked_entirely_is_zero() -> None:
    # Where(mask, -inf, x) then Softmax gives NaN there; nn.masked_softmax defines 0,
    # as the integer softmax does (and the rows around it are unaffected).
    x = randn(3, 4)
    mask = np.array([[False, True, False, False], [True] * 4, [False] * 4])
    (ours,) = evaluate_op(build(Case(nn.MaskedSoftmaxOp, [x, mask])), [x, mask])
    np.testing.assert_array_equal(ours[1], np.zeros(4, np.float32))
    assert ours[0, 1] == 0 and np.isclose(ours[0].sum(), 1) and np.isclose(ours[2].sum(), 1)
