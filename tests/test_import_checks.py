"""The importer's checks of models that onnxruntime or ONNX's strict shape inference
refuse but that onnx.checker passes (irc/importers/onnx.py).

Each bad model gives one diagnostic at the node (or naming the tensor) with a hint:
duplicate node names, initializers that contradict their graph-input declaration,
declared output and value_info types that contradict what irc computes, malformed
attributes and shape-like inputs, constant Gather indices out of range, and tensors
without elements that an op would compute on. The valid neighbours of each check
(symbolic declared dimensions, quantized outputs, an empty constant, an empty piece
of a Split that nothing reads) still import.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from irc.diagnostics import IrcError
from irc.importers.onnx import import_model


def tensor(name: str, shape, elem_type: int = TensorProto.FLOAT) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem_type, shape)


def const(name: str, array) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(array), name)


def model_of(nodes, inputs, outputs, initializers=(), opset=17, value_info=()):
    graph = helper.make_graph(
        nodes, "checks", inputs, outputs, list(initializers), value_info=list(value_info)
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def relu_then_sigmoid(**declared) -> onnx.ModelProto:
    """y = sigmoid(relu(x)) of a 1x4 x; `declared` replaces the declaration of 'a'
    (value_info) or 'y' (the output)."""
    return model_of(
        [
            helper.make_node("Relu", ["x"], ["a"], name="relu"),
            helper.make_node("Sigmoid", ["a"], ["y"], name="sigmoid"),
        ],
        [tensor("x", [1, 4])],
        [declared.get("y", tensor("y", [1, 4]))],
        value_info=[declared["a"]] if "a" in declared else [],
    )


def add_weight(declared_w: onnx.ValueInfoProto) -> onnx.ModelProto:
    """y = x + w, w a float32 initializer of shape 4 also listed as a graph input."""
    return model_of(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add")],
        [tensor("x", [1, 4]), declared_w],
        [tensor("y", [1, 4])],
        [const("w", np.ones(4, np.float32))],
    )


def one_node(node, initializers=(), x_shape=(1, 4), opset=17, elem_type=TensorProto.FLOAT):
    """A model of one node on a float x; its outputs are declared with symbolic shapes
    of x's rank."""
    symbols = [f"d{axis}" for axis in range(len(x_shape))]
    outputs = [tensor(name, symbols, elem_type) for name in node.output if name]
    return model_of([node], [tensor("x", list(x_shape))], outputs, initializers, opset)


N = helper.make_node
FLOATS = np.float32

BAD: dict[str, tuple[Callable[[], onnx.ModelProto], str, str | None]] = {
    # name: (model, message, node named by the location or None for the model)
    "duplicate node names": (
        lambda: model_of(
            [N("Relu", ["x"], ["a"], name="n"), N("Sigmoid", ["a"], ["y"], name="n")],
            [tensor("x", [1, 4])],
            [tensor("y", [1, 4])],
        ),
        "two nodes are named 'n' (#0 Relu and #1 Sigmoid)",
        "n",
    ),
    "initializer shape vs input": (
        lambda: add_weight(tensor("w", [3])),
        "initializer 'w' is float32 4, but the graph input it initializes is declared as float32 3",
        None,
    ),
    "initializer type vs input": (
        lambda: add_weight(tensor("w", [4], TensorProto.INT64)),
        "declared as int64 4",
        None,
    ),
    "output element type": (
        lambda: relu_then_sigmoid(y=tensor("y", [1, 4], TensorProto.DOUBLE)),
        "output 'y' is declared as float64 1x4, but Sigmoid computes float32 1x4",
        "sigmoid",
    ),
    "output rank": (
        lambda: relu_then_sigmoid(y=tensor("y", [4])),
        "output 'y' is declared as float32 4",
        "sigmoid",
    ),
    "value_info shape": (
        lambda: relu_then_sigmoid(a=tensor("a", [2, "n"])),
        "output 'a' is declared as float32 2xn, but Relu computes float32 1x4",
        "relu",
    ),
    "value_info element type": (
        lambda: relu_then_sigmoid(a=tensor("a", [1, 4], TensorProto.INT8)),
        "output 'a' is declared as int8 1x4",
        "relu",
    ),
    "graph output that is an initializer": (
        lambda: model_of(
            [N("Relu", ["x"], ["y"], name="relu")],
            [tensor("x", [1, 4])],
            [tensor("y", [1, 4]), tensor("w", [2, 2])],
            [const("w", np.ones(4, FLOATS))],
        ),
        "graph output 'w' is declared as float32 2x2, but it is float32 4",
        None,
    ),
    "constant with two values": (
        lambda: model_of(
            [
                N("Constant", [], ["c"], name="k", value_float=1.0, value_int=2),
                N("Add", ["x", "c"], ["y"], name="add"),
            ],
            [tensor("x", [1, 4])],
            [tensor("y", [1, 4])],
        ),
        "it has 2 values (value_float, value_int)",
        "k",
    ),
    "constant of shape with an empty value": (
        lambda: model_of(
            [N("ConstantOfShape", ["s"], ["y"], name="k", value=const("v", np.zeros(0, FLOATS)))],
            [],
            [tensor("y", [2, 2])],
            [const("s", np.array([2, 2], np.int64))],
        ),
        "'value' must hold one element, but it is float32 0",
        "k",
    ),
    "split num_outputs 0": (
        lambda: one_node(N("Split", ["x"], ["y"], name="sp", axis=1, num_outputs=0), opset=18),
        "num_outputs is 0, but the node has 1 output",
        "sp",
    ),
    "split num_outputs differs": (
        lambda: one_node(N("Split", ["x"], ["y", "z"], name="sp", axis=1, num_outputs=3), opset=18),
        "num_outputs is 3, but the node has 2 outputs",
        "sp",
    ),
    "resize with scales and sizes": (
        lambda: one_node(
            N("Resize", ["x", "", "sc", "sz"], ["y"], name="r"),
            [const("sc", np.array([1, 1, 2, 2], FLOATS)), const("sz", np.array([1, 1, 4, 4]))],
            x_shape=(1, 1, 2, 2),
        ),
        "it has both 'scales' and 'sizes'",
        "r",
    ),
    "float shape": (
        lambda: one_node(
            N("Reshape", ["x", "s"], ["y"], name="r"), [const("s", np.array([2.0, 2.0], FLOATS))]
        ),
        "the shape (input #1, 's') must be a 1-D integer tensor, but it is float32 2",
        "r",
    ),
    "2-D axes": (
        lambda: one_node(
            N("Unsqueeze", ["x", "a"], ["y"], name="u"), [const("a", np.array([[0]], np.int64))]
        ),
        "'axes' (input #1, 'a') must be a 1-D integer tensor, but it is int64 1x1",
        "u",
    ),
    "gather index out of range": (
        lambda: one_node(
            N("Gather", ["x", "i"], ["y"], name="g", axis=-1), [const("i", np.array([[1, -5]]))]
        ),
        "index -5 of 'i' is out of range for axis -1 of size 4",
        "g",
    ),
    "dropout ratio 1": (
        lambda: one_node(N("Dropout", ["x"], ["y"], name="d", ratio=1.0), opset=10),
        "ratio 1.0 is not in [0, 1)",
        "d",
    ),
    "conv transpose output padding": (
        lambda: one_node(
            N("ConvTranspose", ["x", "w"], ["y"], name="ct", strides=[2, 2], output_padding=[2, 1]),
            [const("w", np.ones((2, 3, 3, 3), FLOATS))],
            x_shape=(1, 2, 4, 4),
        ),
        "output_padding [2, 1] must have 2 values, each at least 0 and smaller than the "
        "stride [2, 2] or the dilation [1, 1]",
        "ct",
    ),
    "empty graph input": (
        lambda: one_node(
            N("Conv", ["x", "w"], ["y"], name="c"),
            [const("w", np.ones((3, 0, 3, 3), FLOATS))],
            x_shape=(1, 0, 4, 4),
        ),
        "graph input 'x' has shape 1x0x4x4: no elements",
        None,
    ),
    "empty intermediate": (
        lambda: model_of(
            [
                N("Slice", ["x", "b", "e", "ax"], ["s"], name="slice"),
                N("Softmax", ["s"], ["y"], name="softmax"),
            ],
            [tensor("x", [2, 4])],
            [tensor("y", [2, 0])],
            [const(n, np.array([v])) for n, v in (("b", 3), ("e", 1), ("ax", 1))],
        ),
        "output 's' would have shape 2x0: no elements",
        "slice",
    ),
}


@pytest.mark.parametrize("name", BAD, ids=list(BAD))
def test_bad_model_gives_one_diagnostic_at_its_node(name: str) -> None:
    build, message, node = BAD[name]
    with pytest.raises(IrcError) as failure:
        import_model(build())
    (diagnostic,) = failure.value.diagnostics
    assert message in diagnostic.message
    assert diagnostic.location.name == node
    assert diagnostic.hint


GOOD: dict[str, Callable[[], onnx.ModelProto]] = {
    "symbolic and absent declared dimensions": lambda: relu_then_sigmoid(
        a=tensor("a", None), y=tensor("y", ["batch", None])
    ),
    "initializer of a symbolic input": lambda: add_weight(tensor("w", ["n"])),
    "unnamed nodes": lambda: model_of(
        [N("Relu", ["x"], ["a"]), N("Relu", ["a"], ["y"])],
        [tensor("x", [1, 4])],
        [tensor("y", [1, 4])],
    ),
    "quantized output declared by its storage": lambda: one_node(
        N("QuantizeLinear", ["x", "s", "z"], ["y"], name="q"),
        [const("s", np.array(0.1, FLOATS)), const("z", np.array(3, np.uint8))],
        elem_type=TensorProto.UINT8,
    ),
    "empty constant (Resize roi) and in-range negative indices": lambda: model_of(
        [
            N("Resize", ["x", "roi", "sc"], ["r"], name="r"),
            N("Gather", ["r", "i"], ["y"], name="g", axis=3),
        ],
        [tensor("x", [1, 1, 2, 2])],
        [tensor("y", [1, 1, 4, 2])],
        [
            const("roi", np.zeros(0, FLOATS)),
            const("sc", np.array([1, 1, 2, 2], FLOATS)),
            const("i", np.array([-4, 3])),
        ],
    ),
    "an empty Split piece that nothing reads": lambda: one_node(
        N("Split", ["x"], ["a", "b", "c", "d"], name="sp", axis=1, num_outputs=4),
        x_shape=(2, 6),
        opset=18,
    ),
}


@pytest.mark.parametrize("name", GOOD, ids=list(GOOD))
def test_valid_neighbours_import(name: str) -> None:
    model = GOOD[name]()
    onnx.checker.check_model(model, full_check=True)
    import_model(model)
