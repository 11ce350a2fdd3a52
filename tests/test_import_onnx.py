"""The ONNX importer (irc/importers/onnx.py) and irc-import-onnx.

Small hand-built models cover each opset-dependent path, auto_pad, ConvTranspose's
output_shape, the folding of shape subgraphs, static input shapes, error reporting
(every unsupported node at once, external data confined to the model directory,
malformed files) and the command line. Every model of the onnx package's light,
pytorch-converted and pytorch-operator suites must import; the opset-6 ones that
onnxruntime no longer runs are checked against the outputs stored with them, and a
few tricky paths end to end against onnxruntime.
"""

from __future__ import annotations

import glob
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from xdsl.dialects.builtin import NameLoc

from irc.diagnostics import IrcError
from irc.dialects import nn
from irc.importers.onnx import import_model, reshape_target
from irc.interp import run_function
from irc.ir.context import make_context
from irc.ir.io import PrintOptions, module_to_string, parse_module, verify_module
from irc.ir.weights import WeightsMode
from irc.tools.common import parse_input_shape
from irc.tools.import_onnx import main as import_onnx_main

ONNX_DATA = Path(onnx.__file__).parent / "backend" / "test" / "data"
REPO = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------------------
# Helpers


def tensor(name: str, shape, elem_type: int = TensorProto.FLOAT) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem_type, shape)


def const(name: str, array) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(array), name)


def make_model(nodes, inputs, outputs, initializers=(), opset: int = 13) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "test", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8 if opset < 19 else 10  # what onnxruntime reads for these opsets
    if any(not output.type.tensor_type.HasField("shape") for output in model.graph.output):
        # The checker wants every graph output to have a shape: let ONNX infer them.
        model = onnx.shape_inference.infer_shapes(model)
    return model


def single_op_model(
    op_type, x_shape, attrs=None, extra_inputs=(), opset=13, outputs=1, out_shape=None
):
    """A model `y = op_type(x, *extra_inputs)`; the extra inputs, (name, value) pairs,
    are initializers, or absent optional inputs (an empty name) when the value is None."""
    initializers = [const(name, value) for name, value in extra_inputs if value is not None]
    names = ["x"] + [name if value is not None else "" for name, value in extra_inputs]
    output_names = ["y"] + [f"y{i}" for i in range(1, outputs)]
    node = helper.make_node(op_type, names, output_names, name="the_node", **(attrs or {}))
    out = [tensor(name, out_shape) for name in output_names]
    return make_model([node], [tensor("x", x_shape)], out, initializers, opset)


def ops_of(module) -> list:
    function = module.body.block.first_op
    return [op for op in function.body.block.ops if isinstance(op, nn.NNOp)]


def op_names(module) -> list[str]:
    return [op.name for op in ops_of(module)]


def the_op(module, op_class):
    found = [op for op in ops_of(module) if isinstance(op, op_class)]
    assert len(found) == 1, op_names(module)
    return found[0]


def random_input(shape, seed=0, dtype=np.float32) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def run_onnxruntime(model: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def assert_matches_onnxruntime(model, feeds, input_shapes=None, rtol=1e-5, atol=1e-6):
    module = import_model(model, input_shapes)
    verify_module(module)
    ours = list(run_function(module, feeds).values())
    expected = run_onnxruntime(model, feeds)
    assert len(ours) == len(expected)
    for got, want in zip(ours, expected):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    return module


def without_handles(text: str) -> str:
    return re.sub(r"dense_resource<[^>]*>", "dense_resource<...>", text)


def diagnostics_of(failure: pytest.ExceptionInfo[IrcError]) -> list[str]:
    return [diagnostic.format() for diagnostic in failure.value.diagnostics]


# --------------------------------------------------------------------------------------
# Signature, types, locations


def test_signature_names_types_and_initializer_inputs():
    # Old models list weights as graph inputs too: those are constants, not arguments.
    weight = const("w", np.arange(6, dtype=np.float32).reshape(2, 3))
    nodes = [
        helper.make_node("Add", ["a", "w"], ["sum"], name="add"),
        helper.make_node("Cast", ["b"], ["b64"], to=TensorProto.INT64),
    ]
    inputs = [tensor("a", [2, 3]), tensor("w", [2, 3]), tensor("b", [4], TensorProto.INT32)]
    outputs = [tensor("sum", [2, 3]), tensor("b64", [4], TensorProto.INT64)]
    module = import_model(make_model(nodes, inputs, outputs, [weight]))
    text = module_to_string(module)
    assert (
        'func.func @main(%0: tensor<2x3xf32> {irc.name = "a"}, %1: tensor<4xi32> {irc.name = "b"}) '
        '-> (tensor<2x3xf32> {irc.name = "sum"}, tensor<4xi64> {irc.name = "b64"})'
    ) in text
    constant = the_op(module, nn.ConstantOp)
    assert np.array_equal(constant.array(), np.arange(6, dtype=np.float32).reshape(2, 3))
    assert isinstance(constant.location, NameLoc) and constant.location.desc.data == "w"
    # Named nodes keep their names; unnamed ones are OpType_index.
    locations = [
        op.location.desc.data for op in ops_of(module) if not isinstance(op, nn.ConstantOp)
    ]
    assert locations == ["add", "Cast_1"]


@pytest.mark.parametrize(
    ("elem_type", "mlir"),
    [
        (TensorProto.FLOAT, "f32"),
        (TensorProto.DOUBLE, "f64"),
        (TensorProto.FLOAT16, "f16"),
        (TensorProto.INT64, "i64"),
        (TensorProto.INT32, "i32"),
        (TensorProto.INT8, "i8"),
        (TensorProto.UINT8, "ui8"),
        (TensorProto.BOOL, "i1"),
    ],
)
def test_element_types(elem_type, mlir):
    node = helper.make_node("Identity", ["x"], ["y"])
    model = make_model([node], [tensor("x", [2], elem_type)], [tensor("y", [2], elem_type)])
    assert f"tensor<2x{mlir}>" in module_to_string(import_model(model))


def test_unsupported_element_type_is_an_error():
    node = helper.make_node("Identity", ["x"], ["y"])
    model = make_model(
        [node], [tensor("x", [2], TensorProto.STRING)], [tensor("y", [2], TensorProto.STRING)]
    )
    with pytest.raises(IrcError, match="graph input 'x' has ONNX element type STRING"):
        import_model(model)


def test_constant_node_forms():
    nodes = [
        helper.make_node("Constant", [], ["f"], value_float=1.5),
        helper.make_node("Constant", [], ["fs"], value_floats=[1.0, 2.0]),
        helper.make_node("Constant", [], ["i"], value_int=3),
        helper.make_node("Constant", [], ["is"], value_ints=[4, 5]),
        helper.make_node("Constant", [], ["t"], value=const("", np.array([[7, 8]], np.int32))),
    ]
    outputs = [
        tensor("f", []),
        tensor("fs", [2]),
        tensor("i", [], TensorProto.INT64),
        tensor("is", [2], TensorProto.INT64),
        tensor("t", [1, 2], TensorProto.INT32),
    ]
    module = import_model(make_model(nodes, [], outputs))
    arrays = [op.array() for op in ops_of(module)]
    assert [a.dtype for a in arrays] == [np.float32, np.float32, np.int64, np.int64, np.int32]
    assert [a.tolist() for a in arrays] == [1.5, [1.0, 2.0], 3, [4, 5], [[7, 8]]]


def test_determinism():
    model = ONNX_DATA / "light" / "light_inception_v1.onnx"
    options = PrintOptions(weights=WeightsMode.RESOURCE, debuginfo=True)
    assert module_to_string(import_model(model), options) == module_to_string(
        import_model(model), options
    )


@pytest.mark.parametrize("opset", [5, 22])
def test_opset_out_of_range(opset):
    model = single_op_model("Relu", [2], opset=opset, out_shape=[2])
    with pytest.raises(IrcError, match=f"opset {opset}; irc supports opsets 6 to 21"):
        import_model(model)


# --------------------------------------------------------------------------------------
# Static shapes


def dynamic_model() -> onnx.ModelProto:
    node = helper.make_node("Relu", ["image"], ["y"])
    return make_model(
        [node], [tensor("image", ["batch", 3, "h", 8])], [tensor("y", ["batch", 3, "h", 8])]
    )


def test_dynamic_input_needs_a_shape():
    with pytest.raises(IrcError) as failure:
        import_model(dynamic_model())
    (message,) = diagnostics_of(failure)
    assert "graph input 'image' has a dynamic shape (batchx3xhx8)" in message
    assert "--input-shape image=1x3x1x8" in message


def test_dynamic_input_with_input_shapes():
    module = import_model(dynamic_model(), {"image": [2, 3, 5, 8]})
    assert "tensor<2x3x5x8xf32>" in module_to_string(module)


@pytest.mark.parametrize(
    ("shapes", "message"),
    [
        ({"image": [2, 3, 8]}, r"rank 3 \(2x3x8\), but the model declares rank 4"),
        ({"image": [2, 4, 5, 8]}, "dimension 1 = 4, but the model fixes it to 3"),
        ({"image": [1, 3, 5, 8], "nope": [1]}, "names 'nope', which is not a graph input"),
    ],
)
def test_bad_input_shapes(shapes, message):
    with pytest.raises(IrcError, match=message):
        import_model(dynamic_model(), shapes)


def test_parse_input_shape():
    assert parse_input_shape("x=1x3x224x224") == ("x", [1, 3, 224, 224])
    assert parse_input_shape("a=b=7") == ("a=b", [7])
    assert parse_input_shape("s=") == ("s", [])
    for bad in ("x", "=1x2", "x=1x", "x=-1", "x=2,3"):
        with pytest.raises(ValueError):
            parse_input_shape(bad)


# --------------------------------------------------------------------------------------
# Shape-like inputs and their folding


def test_shape_chain_is_folded_and_removed():
    # Shape -> Gather -> Unsqueeze -> Concat -> Reshape, as exporters write a flatten.
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["batch"], axis=0),
        helper.make_node("Unsqueeze", ["batch", "axes0"], ["batch1"]),
        helper.make_node("Concat", ["batch1", "minus1"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"], name="flatten"),
    ]
    initializers = [
        const("zero", np.array(0, np.int64)),
        const("axes0", np.array([0], np.int64)),
        const("minus1", np.array([-1], np.int64)),
    ]
    model = make_model(nodes, [tensor("x", ["n", 3, 4])], [tensor("y", ["n", 12])], initializers)
    x = random_input([2, 3, 4])
    module = assert_matches_onnxruntime(model, {"x": x}, {"x": [2, 3, 4]})
    assert op_names(module) == ["nn.reshape"]
    assert "-> tensor<2x12xf32>" in module_to_string(module)


def test_shape_chain_with_arithmetic_and_cast():
    # target = [n, c * h * w] computed with Mul and a Cast round trip.
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Slice", ["shape", "one", "four"], ["chw"]),
        helper.make_node("Cast", ["chw"], ["chw_f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["chw_f", "ones"], ["size_f"]),
        helper.make_node("Cast", ["size_f"], ["size"], to=TensorProto.INT64),
        helper.make_node("Reshape", ["x", "size"], ["y"]),
    ]
    initializers = [
        const("one", np.array([1], np.int64)),
        const("four", np.array([4], np.int64)),
        const("ones", np.array([1.0, 1.0, 1.0], np.float32)),
    ]
    model = make_model(nodes, [tensor("x", [1, 2, 3, 4])], [tensor("y", [2, 3, 4])], initializers)
    module = assert_matches_onnxruntime(model, {"x": random_input([1, 2, 3, 4])})
    assert op_names(module) == ["nn.reshape"]


def test_runtime_shape_input_is_reported():
    nodes = [helper.make_node("Reshape", ["x", "target"], ["y"], name="bad_reshape")]
    inputs = [tensor("x", [2, 6]), tensor("target", [2], TensorProto.INT64)]
    model = make_model(nodes, inputs, [tensor("y", ["a", "b"])])
    with pytest.raises(IrcError) as failure:
        import_model(model)
    (message,) = diagnostics_of(failure)
    assert "node 'bad_reshape'" in message and "Reshape: the shape (input #1, 'target')" in message
    assert "must be known at import time" in message and "hint:" in message


@pytest.mark.parametrize(
    ("input_shape", "shape", "allowzero", "expected"),
    [
        ([2, 3, 4], [0, -1], False, [2, 12]),
        ([2, 3, 4], [-1], False, [24]),
        ([2, 3, 4], [4, 0, 2], False, [4, 3, 2]),
        ([0, 3], [0, 3], True, [0, 3]),
        ([2, 3, 4], [6, -1, 1], False, [6, 4, 1]),
    ],
)
def test_reshape_target(input_shape, shape, allowzero, expected):
    assert reshape_target(input_shape, shape, allowzero) == expected


@pytest.mark.parametrize(
    ("input_shape", "shape"), [([2, 3], [-1, -1]), ([2, 3], [4, -1]), ([2, 3], [7])]
)
def test_reshape_target_errors(input_shape, shape):
    with pytest.raises(ValueError):
        reshape_target(input_shape, shape, False)


def test_reshape_expand_tile_constant_of_shape():
    nodes = [
        helper.make_node("Reshape", ["x", "shape"], ["r"]),
        helper.make_node("Expand", ["r", "expand_to"], ["e"]),
        helper.make_node("Tile", ["e", "repeats"], ["t"]),  # 3x4x6
        helper.make_node(
            "ConstantOfShape", ["cos_shape"], ["c"], value=const("", np.array([2.5], np.float32))
        ),
        helper.make_node("Add", ["t", "c"], ["y"]),
    ]
    initializers = [
        const("shape", np.array([0, 1, -1], np.int64)),
        const("expand_to", np.array([3, 1, 1], np.int64)),
        const("repeats", np.array([1, 4, 1], np.int64)),
        const("cos_shape", np.array([3, 4, 6], np.int64)),
    ]
    model = make_model(nodes, [tensor("x", [3, 2, 3])], [tensor("y", [3, 4, 6])], initializers)
    module = assert_matches_onnxruntime(model, {"x": random_input([3, 2, 3])})
    assert op_names(module) == [
        "nn.reshape",
        "nn.expand",
        "nn.tile",
        "nn.constant_of_shape",
        "nn.add",
    ]


# --------------------------------------------------------------------------------------
# Every op that maps to one nn op, against onnxruntime

RNG = np.random.default_rng(7)


def randn(*shape) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def positive(*shape) -> np.ndarray:
    return (RNG.random(shape) + 0.5).astype(np.float32)


def small_ints(*shape) -> np.ndarray:
    return RNG.integers(-2, 3, size=shape).astype(np.int32)


ONE_TO_ONE = [
    # (op type, opset, attributes, inputs, the nn op)
    ("Relu", 13, {}, [randn(2, 3)], "nn.relu"),
    ("LeakyRelu", 6, {"alpha": 0.2}, [randn(2, 3)], "nn.leaky_relu"),
    ("Elu", 6, {"alpha": 0.5}, [randn(2, 3)], "nn.elu"),
    ("Selu", 6, {}, [randn(2, 3)], "nn.selu"),
    ("Sigmoid", 13, {}, [randn(2, 3)], "nn.sigmoid"),
    ("HardSigmoid", 6, {"alpha": 0.3, "beta": 0.4}, [randn(2, 3)], "nn.hard_sigmoid"),
    ("HardSwish", 14, {}, [randn(2, 3) * 4], "nn.hard_swish"),
    ("Tanh", 13, {}, [randn(2, 3)], "nn.tanh"),
    ("Softplus", 6, {}, [randn(2, 3)], "nn.softplus"),
    ("Softsign", 6, {}, [randn(2, 3)], "nn.softsign"),
    ("Gelu", 20, {"approximate": "tanh"}, [randn(2, 3)], "nn.gelu"),
    ("Gelu", 20, {}, [randn(2, 3)], "nn.gelu"),
    ("Exp", 13, {}, [randn(2, 3)], "nn.exp"),
    ("Log", 13, {}, [positive(2, 3)], "nn.log"),
    ("Sqrt", 13, {}, [positive(2, 3)], "nn.sqrt"),
    ("Erf", 13, {}, [randn(2, 3)], "nn.erf"),
    ("Reciprocal", 13, {}, [positive(2, 3)], "nn.reciprocal"),
    ("Floor", 13, {}, [randn(2, 3) * 3], "nn.floor"),
    ("Ceil", 13, {}, [randn(2, 3) * 3], "nn.ceil"),
    ("Neg", 13, {}, [small_ints(2, 3)], "nn.neg"),
    ("Abs", 13, {}, [randn(2, 3)], "nn.abs"),
    ("Identity", 13, {}, [small_ints(2, 3)], "nn.identity"),
    ("Add", 14, {}, [randn(2, 3), randn(3)], "nn.add"),
    ("Sub", 14, {}, [randn(2, 1), randn(1, 3)], "nn.sub"),
    ("Mul", 14, {}, [small_ints(2, 3), small_ints(2, 3)], "nn.mul"),
    ("Div", 14, {}, [randn(2, 3), positive(2, 3)], "nn.div"),
    ("Pow", 15, {}, [positive(2, 3), randn(3)], "nn.pow"),
    ("Equal", 13, {}, [small_ints(2, 3), small_ints(3)], "nn.equal"),
    ("Less", 13, {}, [randn(2, 3), randn(2, 3)], "nn.less"),
    ("Greater", 13, {}, [small_ints(2, 3), small_ints(2, 1)], "nn.greater"),
    ("LessOrEqual", 16, {}, [small_ints(2, 3), small_ints(2, 3)], "nn.less_or_equal"),
    ("GreaterOrEqual", 16, {}, [small_ints(2, 3), small_ints(2, 3)], "nn.greater_or_equal"),
    ("Sum", 13, {}, [randn(2, 3), randn(3), randn(1, 3)], "nn.sum"),
    ("Max", 13, {}, [randn(2, 3), randn(2, 1)], "nn.max"),
    ("Min", 13, {}, [randn(2, 3), randn(3)], "nn.min"),
    ("Where", 16, {}, [RNG.random((2, 3)) < 0.5, randn(2, 3), randn(3)], "nn.where"),
    ("MatMul", 13, {}, [randn(2, 3, 4), randn(4, 5)], "nn.matmul"),
    ("MatMul", 13, {}, [randn(4), randn(2, 4, 5)], "nn.matmul"),
    ("Gemm", 13, {"transA": 1, "alpha": 0.5}, [randn(3, 2), randn(3, 4)], "nn.gemm"),
    ("Gemm", 13, {"transB": 1, "beta": 2.0}, [randn(2, 3), randn(4, 3), randn(2, 1)], "nn.gemm"),
    ("PRelu", 16, {}, [randn(2, 3, 4), randn(3, 1)], "nn.prelu"),
    (
        "LRN",
        13,
        {"size": 3, "alpha": 0.01, "beta": 0.5, "bias": 2.0},
        [randn(1, 5, 3, 3)],
        "nn.lrn",
    ),
    (
        "InstanceNormalization",
        6,
        {"epsilon": 0.01},
        [randn(2, 3, 4, 5), randn(3), randn(3)],
        "nn.instance_norm",
    ),
    (
        "LayerNormalization",
        17,
        {"axis": -2},
        [randn(2, 3, 4), randn(3, 4), randn(4)],
        "nn.layer_norm",
    ),
    ("LayerNormalization", 17, {}, [randn(2, 3, 4), randn(4)], "nn.layer_norm"),
    (
        "BatchNormalization",
        15,
        {"epsilon": 0.1},
        [randn(2, 3, 4), randn(3), randn(3), randn(3), positive(3)],
        "nn.batch_norm",
    ),
    ("GlobalAveragePool", 1, {}, [randn(2, 3, 4, 5)], "nn.global_average_pool"),
    ("GlobalMaxPool", 1, {}, [randn(2, 3, 4)], "nn.global_max_pool"),
    (
        "MaxPool",
        12,
        {
            "kernel_shape": [3, 3],
            "pads": [1, 1, 1, 1],
            "strides": [2, 2],
            "ceil_mode": 1,
            "dilations": [1, 2],
        },
        [randn(1, 2, 7, 8)],
        "nn.max_pool",
    ),
    (
        "AveragePool",
        19,
        {"kernel_shape": [3], "pads": [1, 1], "count_include_pad": 1, "dilations": [2]},
        [randn(1, 2, 9)],
        "nn.average_pool",
    ),
    ("Concat", 13, {"axis": -1}, [randn(2, 3), randn(2, 1), randn(2, 2)], "nn.concat"),
    ("Gather", 13, {"axis": 1}, [randn(2, 5), np.array([[4, -1], [0, 2]], np.int64)], "nn.gather"),
    ("Flatten", 13, {"axis": 2}, [randn(2, 3, 4, 5)], "nn.flatten"),
    ("Flatten", 13, {}, [randn(2, 3, 4)], "nn.flatten"),
    ("DepthToSpace", 13, {"blocksize": 2, "mode": "CRD"}, [randn(1, 8, 2, 3)], "nn.depth_to_space"),
    ("DepthToSpace", 13, {"blocksize": 2}, [randn(1, 8, 2, 3)], "nn.depth_to_space"),
    ("Transpose", 13, {}, [randn(2, 3, 4)], "nn.transpose"),
    ("Transpose", 13, {"perm": [1, 2, 0]}, [randn(2, 3, 4)], "nn.transpose"),
    ("Cast", 13, {"to": TensorProto.INT32}, [randn(2, 3) * 5], "nn.cast"),
    ("Cast", 13, {"to": TensorProto.FLOAT}, [small_ints(2, 3)], "nn.cast"),
    ("Shape", 15, {"start": 1, "end": -1}, [randn(2, 3, 4, 5)], "nn.shape"),
    ("Shape", 13, {}, [randn(2, 3)], "nn.shape"),
]


@pytest.mark.parametrize(
    ("op_type", "opset", "attrs", "inputs", "nn_op"),
    ONE_TO_ONE,
    ids=[f"{case[0]}-{index}" for index, case in enumerate(ONE_TO_ONE)],
)
def test_one_to_one_ops(op_type, opset, attrs, inputs, nn_op):
    names = [f"in{index}" for index in range(len(inputs))]
    values = [
        tensor(name, list(array.shape), onnx.helper.np_dtype_to_tensor_dtype(array.dtype))
        for name, array in zip(names, inputs)
    ]
    node = helper.make_node(op_type, names, ["y"], name="node", **attrs)
    model = make_model(
        [node], values, [helper.make_empty_tensor_value_info("y")], opset=max(opset, 7)
    )
    module = assert_matches_onnxruntime(model, dict(zip(names, inputs)), rtol=1e-5, atol=1e-5)
    assert op_names(module) == [nn_op]


# --------------------------------------------------------------------------------------
# Version differences


@pytest.mark.parametrize("op_type", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize(
    ("opset", "axis"), [(6, 1), (6, None), (11, -2), (6, 0), (11, 2), (13, 1), (13, None)]
)
def test_softmax_versions(op_type, opset, axis):
    attrs = {} if axis is None else {"axis": axis}
    model = single_op_model(op_type, [2, 3, 4], attrs, opset=opset, out_shape=[2, 3, 4])
    x = random_input([2, 3, 4])
    module = assert_matches_onnxruntime(model, {"x": x})
    nn_name = "nn.softmax" if op_type == "Softmax" else "nn.log_softmax"
    effective = (1 if opset < 13 else -1) if axis is None else axis
    if opset < 13 and effective % 3 != 2:
        # The old semantics: coerced to 2-D at `axis`, normalized over the second axis.
        assert op_names(module) == ["nn.reshape", nn_name, "nn.reshape"]
        flat = the_op(module, type(ops_of(module)[1]))
        assert flat.props().int("axis") == 1
    else:
        assert op_names(module) == [nn_name]


def test_legacy_broadcast_with_axis():
    # Add-6 (broadcast=1, axis=1): B of shape (3,) lines up with A's axis 1.
    nodes = [helper.make_node("Add", ["x", "b"], ["y"], broadcast=1, axis=1)]
    model = make_model(
        nodes,
        [tensor("x", [2, 3, 4, 5])],
        [tensor("y", [2, 3, 4, 5])],
        [const("b", np.array([1.0, 2.0, 3.0], np.float32))],
        opset=6,
    )
    module = import_model(model)
    assert op_names(module) == ["nn.constant", "nn.reshape", "nn.add"]
    x = random_input([2, 3, 4, 5])
    (y,) = run_function(module, {"x": x}).values()
    np.testing.assert_allclose(y, x + np.array([1.0, 2.0, 3.0], np.float32).reshape(3, 1, 1))


def test_prelu_opset6_slope_per_channel():
    model = single_op_model(
        "PRelu",
        [2, 3, 4],
        extra_inputs=[("slope", np.array([0.1, 0.2, 0.3], np.float32))],
        opset=6,
        out_shape=[2, 3, 4],
    )
    module = import_model(model)
    x = random_input([2, 3, 4])
    (y,) = run_function(module, {"x": x}).values()
    slope = np.array([0.1, 0.2, 0.3], np.float32).reshape(3, 1)
    np.testing.assert_allclose(y, np.where(x >= 0, x, slope * x), rtol=1e-6)


@pytest.mark.parametrize(
    ("opset", "attrs", "extra", "bounds"),
    [
        (6, {"min": -0.5, "max": 0.5}, [], (-0.5, 0.5)),
        (6, {"max": 0.25}, [], (None, 0.25)),
        (11, {}, [("lo", np.float32(-1.0)), ("hi", np.float32(2.0))], (-1.0, 2.0)),
        (13, {}, [("lo", None), ("hi", np.float32(6.0))], (None, 6.0)),
        (13, {}, [], (None, None)),
    ],
)
def test_clip_versions(opset, attrs, extra, bounds):
    model = single_op_model("Clip", [3, 4], attrs, extra, opset=opset, out_shape=[3, 4])
    clip = the_op(import_model(model), nn.ClipOp)
    assert (clip.props().float("min"), clip.props().float("max")) == bounds
    if opset >= 7:
        assert_matches_onnxruntime(model, {"x": random_input([3, 4]) * 3})


@pytest.mark.parametrize(
    ("opset", "attrs", "extra"),
    [
        (9, {"starts": [1, 0], "ends": [3, 100], "axes": [0, 2]}, []),
        (
            11,
            {},
            [
                ("starts", np.array([-1, 4])),
                ("ends", np.array([-1000, 0])),
                ("axes", np.array([0, 2])),
                ("steps", np.array([-1, -2])),
            ],
        ),
        (
            13,
            {},
            [
                ("starts", np.array([0])),
                ("ends", np.array([2**63 - 1])),
                ("axes", np.array([-2])),
                ("steps", np.array([2])),
            ],
        ),
        (10, {}, [("starts", np.array([1, 1])), ("ends", np.array([3, 3]))]),
    ],
)
def test_slice_versions(opset, attrs, extra):
    model = single_op_model(
        "Slice",
        [4, 3, 6],
        attrs,
        [(n, np.asarray(v, np.int64)) for n, v in extra],
        opset=opset,
        out_shape=None,
    )
    module = assert_matches_onnxruntime(model, {"x": random_input([4, 3, 6])})
    assert op_names(module) == ["nn.slice"]


@pytest.mark.parametrize(
    ("opset", "attrs", "extra", "mode"),
    [
        (6, {"pads": [0, 1, 2, 0, 3, 1], "value": 1.5}, [], "constant"),
        (6, {"pads": [0, 1, 1, 0, 1, 2], "mode": "reflect"}, [], "reflect"),
        (11, {"mode": "edge"}, [("pads", np.array([1, 0, 2, 0, 1, 0]))], "edge"),
        (13, {}, [("pads", np.array([0, 0, 1, 0, 0, 2])), ("value", np.float32(-2.0))], "constant"),
        (
            18,
            {},
            [("pads", np.array([2, 1])), ("value", None), ("axes", np.array([-1]))],
            "constant",
        ),
        (19, {"mode": "wrap"}, [("pads", np.array([0, 0, 1, 0, 0, 2]))], "wrap"),
    ],
)
def test_pad_versions(opset, attrs, extra, mode):
    model = single_op_model("Pad", [2, 3, 4], attrs, extra, opset=opset)
    module = import_model(model)
    assert the_op(module, nn.PadOp).props().str("mode") == mode
    if opset >= 11 and mode != "wrap":
        assert_matches_onnxruntime(model, {"x": random_input([2, 3, 4])})
    elif opset < 11:
        x = random_input([2, 3, 4])
        (y,) = run_function(module, {"x": x}).values()
        pads = attrs["pads"]
        width = list(zip(pads[:3], pads[3:]))
        if mode == "constant":
            expected = np.pad(x, width, constant_values=attrs["value"])
        else:
            expected = np.pad(x, width, mode="reflect")
        np.testing.assert_array_equal(y, expected)


@pytest.mark.parametrize(
    ("opset", "attrs", "extra", "outputs", "sizes"),
    [
        (6, {"axis": 1}, [], 2, [3, 3]),
        (6, {"axis": 1, "split": [2, 4]}, [], 2, [2, 4]),
        (13, {"axis": -1}, [("split", np.array([1, 2, 1], np.int64))], 3, [1, 2, 1]),
        (13, {"axis": 1}, [], 3, [2, 2, 2]),
        (18, {"axis": 1, "num_outputs": 4}, [], 4, [2, 2, 2, 0]),
    ],
)
def test_split_versions(opset, attrs, extra, outputs, sizes):
    model = single_op_model("Split", [2, 6, 4], attrs, extra, opset=opset, outputs=outputs)
    module = import_model(model)
    assert the_op(module, nn.SplitOp).props().ints("sizes") == sizes
    if opset >= 13 and 0 not in sizes:
        assert_matches_onnxruntime(model, {"x": random_input([2, 6, 4])})


@pytest.mark.parametrize(
    ("op_type", "opset", "attrs", "extra", "axes"),
    [
        ("Squeeze", 11, {"axes": [1]}, [], [1]),
        ("Squeeze", 11, {}, [], [1, 3]),
        ("Squeeze", 13, {}, [("axes", np.array([-1], np.int64))], [-1]),
        ("Unsqueeze", 6, {"axes": [0, 3]}, [], [0, 3]),
        ("Unsqueeze", 13, {}, [("axes", np.array([-1], np.int64))], [-1]),
    ],
)
def test_squeeze_unsqueeze_versions(op_type, opset, attrs, extra, axes):
    model = single_op_model(op_type, [2, 1, 3, 1], attrs, extra, opset=opset)
    module = assert_matches_onnxruntime(model, {"x": random_input([2, 1, 3, 1])})
    op_class = nn.SqueezeOp if op_type == "Squeeze" else nn.UnsqueezeOp
    assert the_op(module, op_class).props().ints("axes") == axes


@pytest.mark.parametrize(
    ("op_type", "opset", "attrs", "extra", "expected"),
    [
        ("ReduceMean", 13, {"axes": [1], "keepdims": 0}, [], "nn.reduce_mean"),
        ("ReduceMean", 18, {}, [("axes", np.array([0, 2], np.int64))], "nn.reduce_mean"),
        ("ReduceSum", 11, {"axes": [-1]}, [], "nn.reduce_sum"),
        ("ReduceSum", 13, {"keepdims": 0}, [("axes", np.array([1], np.int64))], "nn.reduce_sum"),
        ("ReduceSum", 13, {}, [], "nn.reduce_sum"),
        ("ReduceSum", 13, {"noop_with_empty_axes": 1}, [], "nn.identity"),
        ("ReduceMax", 18, {}, [("axes", np.array([], np.int64))], "nn.reduce_max"),
        ("ReduceMax", 18, {"noop_with_empty_axes": 1}, [], "nn.identity"),
        ("ReduceMin", 12, {"axes": [0, 1]}, [], "nn.reduce_min"),
        (
            "ReduceMin",
            20,
            {"noop_with_empty_axes": 1},
            [("axes", np.array([2], np.int64))],
            "nn.reduce_min",
        ),
    ],
)
def test_reduce_versions(op_type, opset, attrs, extra, expected):
    model = single_op_model(op_type, [2, 3, 4], attrs, extra, opset=opset)
    module = assert_matches_onnxruntime(model, {"x": random_input([2, 3, 4])})
    assert op_names(module) == [expected]


def test_batch_norm_opset6_and_spatial():
    stats = [
        ("scale", np.array([1.0, 2.0], np.float32)),
        ("bias", np.array([0.5, -0.5], np.float32)),
        ("mean", np.array([0.1, 0.2], np.float32)),
        ("var", np.array([1.0, 4.0], np.float32)),
    ]
    model = single_op_model(
        "BatchNormalization", [2, 2, 3], {"is_test": 1, "epsilon": 1e-3}, stats, opset=6
    )
    module = import_model(model)
    x = random_input([2, 2, 3])
    (y,) = run_function(module, {"x": x}).values()
    scale, bias, mean, var = (value.reshape(2, 1) for _, value in stats)
    np.testing.assert_allclose(y, scale * (x - mean) / np.sqrt(var + 1e-3) + bias, rtol=1e-5)
    # opset 9 (no is_test), and opset 7 with spatial=1 stated.
    for opset, attrs in ((9, {}), (7, {"spatial": 1})):
        model = single_op_model("BatchNormalization", [2, 2, 3], attrs, stats, opset=opset)
        assert_matches_onnxruntime(model, {"x": x})


@pytest.mark.parametrize(
    ("opset", "attrs", "outputs", "message"),
    [
        (6, {}, 1, "is_test=0 runs batch normalization in training mode"),
        (15, {"training_mode": 1}, 1, "training_mode=1 is not supported"),
        (9, {}, 5, "the running statistics are used"),
    ],
)
def test_batch_norm_training_is_an_error(opset, attrs, outputs, message):
    stats = [(name, np.ones(2, np.float32)) for name in ("scale", "bias", "mean", "var")]
    model = single_op_model(
        "BatchNormalization", [2, 2, 3], attrs, stats, opset=opset, outputs=outputs, out_shape=[2]
    )
    with pytest.raises(IrcError, match=message):
        import_model(model)


@pytest.mark.parametrize("opset", [6, 7, 10, 12, 13])
def test_dropout_versions(opset):
    attrs = {"is_test": 1} if opset < 7 else {}
    model = single_op_model("Dropout", [2, 3], attrs, opset=opset, outputs=2, out_shape=[2, 3])
    mask_type = TensorProto.BOOL if opset >= 10 else TensorProto.FLOAT
    model.graph.output[1].type.tensor_type.elem_type = mask_type
    module = import_model(model)
    assert op_names(module) == ["nn.dropout", "nn.constant_of_shape"]
    x = random_input([2, 3])
    y, mask = run_function(module, {"x": x}).values()
    np.testing.assert_array_equal(y, x)
    # The spec's reference keeps everything at inference: a mask of ones (onnxruntime
    # returns zeros before opset 12, ones after).
    assert mask.dtype == (np.bool_ if opset >= 10 else np.float32) and mask.all()
    if opset >= 12:
        assert_matches_onnxruntime(model, {"x": x})


def test_dropout_training_mode_is_an_error():
    model = single_op_model(
        "Dropout", [2, 3], {}, [("ratio", np.float32(0.1)), ("training", np.array(True))], opset=13
    )
    with pytest.raises(IrcError, match="training_mode is true"):
        import_model(model)


def test_gemm_opset6_broadcast_bias():
    extra = [("b", random_input([4, 5], 1)), ("c", random_input([5], 2))]
    model = single_op_model(
        "Gemm", [3, 4], {"broadcast": 1, "alpha": 0.5, "beta": 2.0}, extra, opset=6
    )
    module = import_model(model)
    x = random_input([3, 4])
    (y,) = run_function(module, {"x": x}).values()
    np.testing.assert_allclose(y, 0.5 * x @ extra[0][1] + 2.0 * extra[1][1], rtol=1e-5, atol=1e-6)


# --------------------------------------------------------------------------------------
# Resize and Upsample


@pytest.mark.parametrize(
    ("opset", "mode", "scales"),
    [
        (7, "nearest", [1.0, 1.0, 2.0, 3.0]),
        (7, "linear", [1.0, 1.0, 2.0, 1.5]),
        (9, "nearest", [1, 1, 3, 2]),
        (9, "linear", [1, 1, 2, 2]),
    ],
)
def test_upsample(opset, mode, scales):
    if opset < 9:
        out_shape = [int(d * s) for d, s in zip([1, 2, 3, 4], scales)]
        model = single_op_model(
            "Upsample",
            [1, 2, 3, 4],
            {"mode": mode, "scales": scales},
            opset=opset,
            out_shape=out_shape,
        )
    else:
        extra = [("scales", np.array(scales, np.float32))]
        model = single_op_model("Upsample", [1, 2, 3, 4], {"mode": mode}, extra, opset=opset)
    module = assert_matches_onnxruntime(model, {"x": random_input([1, 2, 3, 4])})
    resize = the_op(module, nn.ResizeOp)
    assert resize.props().str("coordinate_transformation_mode") == "asymmetric"


@pytest.mark.parametrize("scales", [[1, 1, 2, 2], [1, 1, 0.6, 0.5]])
def test_resize_opset10(scales):
    extra = [("scales", np.array(scales, np.float32))]
    model = single_op_model("Resize", [1, 2, 5, 4], {"mode": "nearest"}, extra, opset=10)
    assert_matches_onnxruntime(model, {"x": random_input([1, 2, 5, 4])})


@pytest.mark.parametrize(
    ("opset", "attrs", "scales", "sizes", "out"),
    [
        (11, {"mode": "linear"}, [1, 1, 2, 0.5], None, [1, 2, 10, 2]),
        (
            11,
            {"mode": "nearest", "coordinate_transformation_mode": "asymmetric"},
            [],
            [1, 2, 7, 9],
            [1, 2, 7, 9],
        ),
        (13, {"mode": "cubic"}, [1, 1, 1.5, 1.5], None, [1, 2, 7, 6]),
        (
            13,
            {
                "mode": "nearest",
                "nearest_mode": "floor",
                "coordinate_transformation_mode": "align_corners",
            },
            None,
            [1, 2, 3, 8],
            [1, 2, 3, 8],
        ),
        (18, {"mode": "linear", "axes": [2, 3]}, [2.0, 3.0], None, [1, 2, 10, 12]),
        (
            18,
            {"mode": "nearest", "axes": [3, 2], "keep_aspect_ratio_policy": "not_larger"},
            None,
            [8, 7],
            [1, 2, 7, 6],
        ),
        (
            19,
            {"mode": "linear", "coordinate_transformation_mode": "half_pixel_symmetric"},
            [1, 1, 1.6, 0.8],
            None,
            [1, 2, 8, 3],
        ),
    ],
)
def test_resize_versions(opset, attrs, scales, sizes, out):
    extra = [
        ("roi", None if opset >= 13 else np.array([], np.float32)),
        ("scales", None if scales is None else np.array(scales, np.float32)),
        ("sizes", None if sizes is None else np.array(sizes, np.int64)),
    ]
    if sizes is None:
        extra = extra[:2]
    model = single_op_model("Resize", [1, 2, 5, 4], attrs, extra, opset=opset)
    module = assert_matches_onnxruntime(
        model, {"x": random_input([1, 2, 5, 4])}, rtol=1e-4, atol=1e-5
    )
    assert list(the_op(module, nn.ResizeOp).result.type.get_shape()) == out


def test_resize_tf_crop_and_resize_is_an_error():
    extra = [
        ("roi", np.array([0, 0, 0, 0, 1, 1, 1, 1], np.float32)),
        ("scales", np.array([1, 1, 2, 2], np.float32)),
    ]
    attrs = {"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize"}
    model = single_op_model("Resize", [1, 2, 5, 4], attrs, extra, opset=13)
    with pytest.raises(IrcError, match="tf_crop_and_resize is not supported"):
        import_model(model)


# --------------------------------------------------------------------------------------
# Convolution and pooling: auto_pad, ConvTranspose output_shape


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER", "VALID", "NOTSET"])
@pytest.mark.parametrize(
    ("strides", "dilations"), [([1, 1], [1, 1]), ([2, 3], [1, 1]), ([1, 2], [2, 1])]
)
def test_conv_auto_pad(auto_pad, strides, dilations):
    attrs = {"auto_pad": auto_pad, "strides": strides, "dilations": dilations}
    extra = [("w", random_input([4, 3, 3, 2], 1))]
    model = single_op_model("Conv", [1, 3, 7, 8], attrs, extra, opset=11)
    x = random_input([1, 3, 7, 8])
    if auto_pad.startswith("SAME") and dilations != [1, 1]:
        # onnxruntime refuses dilated SAME convolutions: compare with ONNX's reference.
        module = import_model(model)
        (ours,) = run_function(module, {"x": x}).values()
        (expected,) = ReferenceEvaluator(model).run(None, {"x": x})
        np.testing.assert_allclose(ours, expected, rtol=1e-4, atol=1e-5)
    else:
        module = assert_matches_onnxruntime(model, {"x": x}, rtol=1e-4, atol=1e-5)
    conv = the_op(module, nn.ConvOp)
    if auto_pad == "SAME_UPPER" and strides == [2, 3]:
        # out 4x3: pads (4-1)*2+3-7 = 2 -> 1+1, (3-1)*3+2-8 = 0
        assert conv.props().ints("pads") == [1, 0, 1, 0]


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER", "VALID"])
@pytest.mark.parametrize("op_type", ["MaxPool", "AveragePool"])
def test_pool_auto_pad(op_type, auto_pad):
    attrs = {"auto_pad": auto_pad, "kernel_shape": [3, 2], "strides": [2, 2]}
    model = single_op_model(op_type, [1, 2, 7, 6], attrs, opset=11)
    assert_matches_onnxruntime(model, {"x": random_input([1, 2, 7, 6])})


@pytest.mark.parametrize(
    "attrs",
    [
        {"strides": [2, 2], "output_shape": [8, 9]},
        {"strides": [2, 2], "output_shape": [7, 7], "auto_pad": "SAME_UPPER"},
        {"strides": [2, 2], "output_shape": [7, 7], "auto_pad": "SAME_LOWER"},
        {"strides": [2, 3], "auto_pad": "SAME_UPPER"},
        {"strides": [2, 3], "auto_pad": "SAME_LOWER"},
        {"strides": [3, 2], "pads": [1, 0, 1, 2], "output_padding": [1, 1], "dilations": [1, 2]},
    ],
)
def test_conv_transpose_pads(attrs):
    extra = [("w", random_input([3, 4, 3, 3], 1)), ("b", random_input([4], 2))]
    model = single_op_model("ConvTranspose", [1, 3, 4, 4], {"group": 1, **attrs}, extra, opset=11)
    module = assert_matches_onnxruntime(
        model, {"x": random_input([1, 3, 4, 4])}, rtol=1e-4, atol=1e-5
    )
    if "output_shape" in attrs:
        result_shape = list(the_op(module, nn.ConvTransposeOp).result.type.get_shape())
        assert result_shape[2:] == attrs["output_shape"]


# --------------------------------------------------------------------------------------
# Errors: unsupported ops, bad attributes, external data, malformed files


def test_every_unsupported_node_is_reported():
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="fine"),
        helper.make_node("TopK", ["a", "k"], ["values", "indices"], name="topk"),
        helper.make_node("NonZero", ["a"], ["nz"]),
        helper.make_node("FusedConv", ["a"], ["b"], name="fused", domain="com.microsoft"),
    ]
    model = make_model(
        nodes,
        [tensor("x", [4])],
        [tensor("values", [2]), tensor("nz", [1, "n"]), tensor("b", [4])],
        [const("k", np.array([2], np.int64))],
    )
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    with pytest.raises(IrcError) as failure:
        import_model(model)
    messages = diagnostics_of(failure)
    assert len(messages) == 3
    assert "node 'topk': error: unsupported ONNX op 'TopK' (domain 'ai.onnx'" in messages[0]
    assert "node 'NonZero_2': error: unsupported ONNX op 'NonZero' (domain 'ai.onnx'" in messages[1]
    assert (
        "node 'fused': error: unsupported ONNX op 'FusedConv' (domain 'com.microsoft'"
        in messages[2]
    )


def test_every_bad_attribute_is_reported():
    stats = [const(name, np.ones(2, np.float32)) for name in ("s", "b", "m", "v")]
    nodes = [
        helper.make_node(
            "BatchNormalization", ["x", "s", "b", "m", "v"], ["bn"], name="bn", training_mode=1
        ),
        helper.make_node("Relu", ["bn"], ["after_bn"]),  # depends on a failed node: not reported
        helper.make_node(
            "Resize",
            ["x", "roi", "scales"],
            ["rs"],
            name="resize",
            coordinate_transformation_mode="tf_crop_and_resize",
            mode="linear",
        ),
    ]
    initializers = [
        *stats,
        const("roi", np.zeros(8, np.float32)),
        const("scales", np.ones(4, np.float32)),
    ]
    model = make_model(
        nodes,
        [tensor("x", [1, 2, 3, 3])],
        [tensor("after_bn", [1, 2, 3, 3]), tensor("rs", [1, 2, 3, 3])],
        initializers,
        opset=15,
    )
    with pytest.raises(IrcError) as failure:
        import_model(model)
    messages = diagnostics_of(failure)
    assert len(messages) == 2
    assert (
        "node 'bn'" in messages[0] and "training_mode=1" in messages[0] and "hint:" in messages[0]
    )
    assert "node 'resize'" in messages[1] and "tf_crop_and_resize" in messages[1]


def test_unsupported_outputs_and_runtime_bounds_are_reported():
    nodes = [
        helper.make_node("MaxPool", ["x"], ["pooled", "indices"], name="pool", kernel_shape=[2]),
        helper.make_node("Clip", ["x", "low"], ["clipped"], name="clip"),
    ]
    inputs = [tensor("x", [1, 2, 4]), tensor("low", [])]
    outputs = [tensor("indices", [1, 2, 3], TensorProto.INT64), tensor("clipped", [1, 2, 4])]
    with pytest.raises(IrcError) as failure:
        import_model(make_model(nodes, inputs, outputs, opset=13))
    pool, clip = diagnostics_of(failure)
    assert "node 'pool'" in pool and "the Indices output is not supported" in pool
    assert (
        "node 'clip'" in clip
        and "Clip: 'min' (input #1, 'low') must be known at import time" in clip
    )


def test_invalid_op_is_reported_at_its_node():
    model = single_op_model(
        "MatMul", [2, 3], extra_inputs=[("w", random_input([4, 5]))], opset=13, out_shape=[2, 5]
    )
    with pytest.raises(
        IrcError, match=r"node 'the_node': error: MatMul: inner dimensions differ: 3 and 4"
    ):
        import_model(model)


def save_with_external_data(model: onnx.ModelProto, directory: Path) -> Path:
    path = directory / "model.onnx"
    onnx.save_model(
        model, str(path), save_as_external_data=True, location="weights.bin", size_threshold=0
    )
    return path


def external_model() -> onnx.ModelProto:
    weight = np.arange(12, dtype=np.float32).reshape(3, 4)
    return single_op_model("MatMul", [2, 3], extra_inputs=[("w", weight)], opset=13)


def test_external_data_inside_the_model_directory(tmp_path):
    path = save_with_external_data(external_model(), tmp_path)
    module = import_model(path)
    weight = the_op(module, nn.ConstantOp).array()
    np.testing.assert_array_equal(weight, np.arange(12, dtype=np.float32).reshape(3, 4))


@pytest.mark.parametrize("where", ["parent", "absolute", "missing"])
def test_external_data_outside_the_model_directory(tmp_path, where):
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    path = save_with_external_data(external_model(), model_dir)
    outside = tmp_path / "weights.bin"
    (model_dir / "weights.bin").rename(outside)
    model = onnx.load(str(path), load_external_data=False)
    location = {"parent": "../weights.bin", "absolute": str(outside), "missing": "weights.bin"}[
        where
    ]
    for entry in model.graph.initializer[0].external_data:
        if entry.key == "location":
            entry.value = location
    with pytest.raises(IrcError) as failure:
        import_model(model, model_dir=model_dir)
    (message,) = diagnostics_of(failure)
    assert "tensor 'w'" in message
    assert (
        "does not exist" if where == "missing" else "lies outside the model directory"
    ) in message


def test_external_data_of_a_proto_needs_a_directory(tmp_path):
    model = onnx.load(
        str(save_with_external_data(external_model(), tmp_path)), load_external_data=False
    )
    with pytest.raises(IrcError, match="the model's directory is unknown"):
        import_model(model)
    assert the_op(import_model(model, model_dir=tmp_path), nn.ConstantOp).array().shape == (3, 4)


def test_malformed_files(tmp_path):
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x08\x07\x12\xff\xff\xff this is not a model")
    with pytest.raises(IrcError, match="cannot read ONNX model"):
        import_model(garbage)
    with pytest.raises(IrcError, match="no such file"):
        import_model(tmp_path / "absent.onnx")
    # Well-formed protobuf, invalid model: a node reads a value nobody defines.
    broken = make_model(
        [helper.make_node("Relu", ["nobody"], ["y"])], [tensor("x", [2])], [tensor("y", [2])]
    )
    with pytest.raises(IrcError, match="the ONNX model is malformed"):
        import_model(broken)


# --------------------------------------------------------------------------------------
# The command line


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "irc.tools.import_onnx", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
    )


def test_cli_writes_ir_and_sidecar(tmp_path):
    output = tmp_path / "out" / "resnet.mlir"
    status = import_onnx_main(
        [str(ONNX_DATA / "pytorch-converted" / "test_Conv2d" / "model.onnx"), "-o", str(output)]
    )
    assert status == 0
    sidecar = output.with_name("resnet.weights.npz")
    assert sidecar.is_file()
    text = output.read_text()
    assert 'irc.weights = "resnet.weights.npz"' in text and "nn.conv" in text
    module = parse_module(text, make_context(), str(output), weights_dir=output.parent)
    weight = next(
        op
        for op in ops_of(module)
        if isinstance(op, nn.ConstantOp) and op.has_data() and op.array().ndim == 4
    )
    model = onnx.load(str(ONNX_DATA / "pytorch-converted" / "test_Conv2d" / "model.onnx"))
    np.testing.assert_array_equal(weight.array(), numpy_helper.to_array(model.graph.initializer[0]))


def test_cli_stdout_elides_weights_and_takes_input_shapes(tmp_path):
    path = tmp_path / "dynamic.onnx"
    onnx.save_model(dynamic_model(), str(path))
    result = run_cli(str(path), "--input-shape", "image=2x3x4x8")
    assert result.returncode == 0, result.stderr
    assert "tensor<2x3x4x8xf32>" in result.stdout
    light = run_cli(str(ONNX_DATA / "light" / "light_squeezenet.onnx"), "-o", "-")
    assert (
        light.returncode == 0
        and "dense_resource<conv1_b_0>" in light.stdout
        and "dialect_resources" not in light.stdout
    )


def test_cli_errors(tmp_path):
    path = tmp_path / "dynamic.onnx"
    onnx.save_model(dynamic_model(), str(path))
    output = tmp_path / "never.mlir"
    result = run_cli(str(path), "-o", str(output))
    assert result.returncode == 1
    assert (
        "graph input 'image' has a dynamic shape" in result.stderr
        and "Traceback" not in result.stderr
    )
    assert not output.exists()
    result = run_cli(str(tmp_path / "absent.onnx"))
    assert (
        result.returncode == 1
        and "no such file" in result.stderr
        and "Traceback" not in result.stderr
    )
    result = run_cli(str(path), "--input-shape", "image=1x3x?")
    assert (
        result.returncode == 2
        and "--input-shape" in result.stderr
        and "Traceback" not in result.stderr
    )
    result = run_cli(str(path), "--input-shape", "image=1x3x4x8", "--weights", "sidecar")
    assert result.returncode == 1 and "--weights=sidecar needs an output file" in result.stderr


def test_cli_resource_mode_round_trips(tmp_path):
    # As a user would: import to a file with a resource section, then irc-opt reads it
    # in a fresh process and prints the weights inline.
    output = tmp_path / "conv.mlir"
    model_path = ONNX_DATA / "pytorch-converted" / "test_ConvTranspose2d" / "model.onnx"
    assert import_onnx_main([str(model_path), "-o", str(output), "--weights", "resource"]) == 0
    assert not output.with_name("conv.weights.npz").exists()
    reread = subprocess.run(
        [sys.executable, "-m", "irc.tools.opt", str(output), "--weights", "inline"],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert reread.returncode == 0, reread.stderr
    expected = module_to_string(import_model(model_path), PrintOptions(weights=WeightsMode.INLINE))
    assert reread.stdout.strip() == expected.strip()


def test_thin_executable():
    result = subprocess.run(
        [str(REPO / "tools" / "irc-import-onnx"), "--help"], capture_output=True, text=True
    )
    assert result.returncode == 0 and "--input-shape" in result.stdout


# --------------------------------------------------------------------------------------
# The onnx package's test models


def suite_models() -> list[Path]:
    light = sorted(glob.glob(str(ONNX_DATA / "light" / "*.onnx")))
    torch = sorted(glob.glob(str(ONNX_DATA / "pytorch-converted" / "*" / "model.onnx")))
    torch += sorted(glob.glob(str(ONNX_DATA / "pytorch-operator" / "*" / "model.onnx")))
    return [Path(p) for p in light + torch]


def model_id(path: Path) -> str:
    return path.stem if path.parent.name == "light" else path.parent.name


@pytest.mark.parametrize("path", suite_models(), ids=model_id)
def test_suite_model_imports(path):
    try:
        module = import_model(path)
    except IrcError as failure:
        # Acceptable only as a clean list of unsupported ops.
        print(f"{model_id(path)} does not import:\n{failure}")
        assert all("unsupported ONNX op" in d.message for d in failure.diagnostics), str(failure)
        return
    verify_module(module)
    # Prints and parses back to the same text (the parser may rename resource handles
    # that an earlier parse in this process used).
    text = module_to_string(module)
    reparsed = module_to_string(parse_module(text, make_context()))
    assert without_handles(reparsed) == without_handles(text)


def test_suite_models_all_import():
    failing = []
    for path in suite_models():
        try:
            import_model(path)
        except IrcError:
            failing.append(model_id(path))
    print(
        f"{len(suite_models()) - len(failing)} of {len(suite_models())} import; failing: {failing}"
    )
    assert len(suite_models()) == 126
    assert failing == []


def stored_test_data(path: Path) -> tuple[list[np.ndarray], list[np.ndarray]]:
    directory = path.parent / "test_data_set_0"
    load = lambda pattern: [  # noqa: E731
        numpy_helper.to_array(onnx.load_tensor(str(p))) for p in sorted(directory.glob(pattern))
    ]
    return load("input_*.pb"), load("output_*.pb")


def runs_in_onnxruntime(path: Path) -> bool:
    try:
        ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    except Exception:
        return False
    return True


OPSET6_ONLY = [
    path
    for path in suite_models()
    if path.parent.name.startswith("test_") and not runs_in_onnxruntime(path)
]


@pytest.mark.parametrize("path", OPSET6_ONLY, ids=model_id)
def test_opset6_models_match_their_stored_outputs(path):
    # onnxruntime dropped these op versions (Add-6 broadcast, PRelu-6, BatchNorm-6,
    # Gemm-6, AveragePool-1, Pow-1, ...); the outputs stored beside them are the reference.
    inputs, outputs = stored_test_data(path)
    module = import_model(path)
    got = list(run_function(module, inputs[: len(module.body.block.first_op.args)]).values())
    assert len(got) == len(outputs)
    for ours, expected in zip(got, outputs):
        np.testing.assert_allclose(ours, expected, rtol=1e-4, atol=1e-5)


def test_opset6_coverage():
    # The paths above really are exercised: these ops only run here through irc.
    names = {model_id(path) for path in OPSET6_ONLY}
    assert {
        "test_PReLU_2d_multiparam",
        "test_operator_add_broadcast",
        "test_BatchNorm2d_eval",
        "test_Linear",
        "test_operator_pow",
    } <= names


@pytest.mark.parametrize(
    "name",
    [
        "pytorch-converted/test_Softmax",
        "pytorch-converted/test_softmax_functional_dim3",
        "pytorch-converted/test_log_softmax_dim3",
        "pytorch-converted/test_LogSoftmax",
        "pytorch-converted/test_Embedding",
        "pytorch-converted/test_PixelShuffle",
        "pytorch-operator/test_operator_symbolic_override",
        "pytorch-operator/test_operator_repeat_dim_overflow",
        "pytorch-operator/test_operator_index",
    ],
)
def test_suite_models_against_onnxruntime(name):
    path = ONNX_DATA / name / "model.onnx"
    inputs, _ = stored_test_data(path)
    model = onnx.load(str(path))
    feeds = {value.name: array for value, array in zip(model.graph.input, inputs)}
    assert_matches_onnxruntime(model, feeds, rtol=1e-4, atol=1e-5)
