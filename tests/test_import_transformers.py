"""Transformers as exporters write them: the shipped exports of
tests/data/transformers/ (made by its make_models.py with torch 2.13) import and
match onnxruntime; the ops their shape arithmetic and attention use (Mod, Range,
CumSum, Trilu, Einsum) match onnxruntime one by one."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from irc.diagnostics import IrcError, collect_diagnostics
from irc.dialects import nn
from irc.importers.onnx import import_model
from irc.importers.reference import run_onnxruntime
from irc.interp import run_function
from irc.ir.context import make_context
from irc.passes import parse_pipeline

MODELS = Path(__file__).parent / "data" / "transformers"

EXPORTS = {
    # name: (input shapes for the symbolic dimensions, the input's shape)
    "encoder_layer": ({"tokens": [1, 16, 32]}, [1, 16, 32]),
    "causal_attention": ({"tokens": [1, 16, 32]}, [1, 16, 32]),
    "vit": (None, [1, 3, 16, 16]),
}


def _ops(module) -> Counter:
    return Counter(op.name for op in module.walk())


@pytest.mark.parametrize("name", sorted(EXPORTS))
def test_an_exported_transformer_matches_onnxruntime(name: str) -> None:
    model = onnx.load(str(MODELS / f"{name}.onnx"))
    shapes, shape = EXPORTS[name]
    module = import_model(model, shapes)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    feeds = {model.graph.input[0].name: x}
    got = list(run_function(module, feeds).values())
    expected = list(run_onnxruntime(model, feeds).values())
    assert len(got) == len(expected) == 1
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-4, atol=1e-5)
    ops = _ops(module)
    # The attention's two products are matmuls of activations, whatever the export
    # wrote them as (MatMul, or the Einsum of causal_attention).
    assert ops["nn.matmul"] >= 2
    assert ops["nn.softmax"] >= 1


def test_the_shape_arithmetic_of_the_causal_export_is_gone_after_graph_opt() -> None:
    # Range (position ids), Mod, CumSum and the Trilu of the mask depend only on the
    # static shape: they are constants once the sequence length is given.
    model = onnx.load(str(MODELS / "causal_attention.onnx"))
    exported = Counter(node.op_type for node in model.graph.node)
    assert {"Range", "Mod", "CumSum", "Trilu", "Einsum"} <= set(exported)
    module = import_model(model, {"tokens": [1, 16, 32]})
    assert _ops(module)["nn.shape"] == 0  # the shape chains are properties already
    x = np.random.default_rng(5).standard_normal((1, 16, 32)).astype(np.float32)
    before = run_function(module, {"tokens": x})["hidden"]
    with collect_diagnostics():
        for module_pass in parse_pipeline("graph-opt"):
            module_pass.apply(make_context(), module)
    ops = _ops(module)
    for folded in ("nn.mod", "nn.cumsum", "nn.trilu", "nn.range", "nn.constant_of_shape"):
        assert ops[folded] == 0, folded
    np.testing.assert_allclose(
        run_function(module, {"tokens": x})["hidden"], before, rtol=1e-4, atol=1e-5
    )


def _single(node: onnx.NodeProto, inputs, outputs, initializers=(), opset: int = 17):
    graph = helper.make_graph([node], "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _value(name: str, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def _check(model: onnx.ModelProto, feeds: dict[str, np.ndarray], op: str | None) -> None:
    module = import_model(model)
    got = list(run_function(module, feeds).values())
    expected = list(run_onnxruntime(model, feeds).values())
    for ours, theirs in zip(got, expected, strict=True):
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    if op is not None:
        assert _ops(module)[op] == 1


@pytest.mark.parametrize(
    ("fmod", "dtype", "elem"),
    [(0, np.int64, TensorProto.INT64), (1, np.int32, TensorProto.INT32),
     (1, np.float32, TensorProto.FLOAT)],
)  # fmt: skip
def test_mod(fmod: int, dtype, elem: int) -> None:
    node = helper.make_node("Mod", ["a", "b"], ["y"], fmod=fmod)
    model = _single(
        node, [_value("a", [3, 4], elem), _value("b", [4], elem)], [_value("y", [3, 4], elem)]
    )
    rng = np.random.default_rng(1)
    a = (rng.standard_normal((3, 4)) * 20).astype(dtype)
    b = (
        np.array([3, -5, 7, -2], dtype=dtype)
        if dtype != np.float32
        else np.array([1.5, -2.5, 3.0, -0.75], dtype)
    )
    _check(model, {"a": a, "b": b}, "nn.mod")


def test_a_float_mod_without_fmod_is_an_error_naming_the_node() -> None:
    node = helper.make_node("Mod", ["a", "b"], ["y"], name="remainder")
    model = _single(node, [_value("a", [4]), _value("b", [4])], [_value("y", [4])])
    with pytest.raises(IrcError, match=r"remainder.*fmod = true"):
        import_model(model)


@pytest.mark.parametrize("exclusive", [0, 1])
@pytest.mark.parametrize("reverse", [0, 1])
@pytest.mark.parametrize("axis", [0, -1])
def test_cumsum(exclusive: int, reverse: int, axis: int) -> None:
    node = helper.make_node("CumSum", ["x", "axis"], ["y"], exclusive=exclusive, reverse=reverse)
    axis_tensor = numpy_helper.from_array(np.array(axis, np.int64), "axis")
    model = _single(node, [_value("x", [3, 5])], [_value("y", [3, 5])], [axis_tensor])
    x = np.random.default_rng(2).standard_normal((3, 5)).astype(np.float32)
    _check(model, {"x": x}, "nn.cumsum")


@pytest.mark.parametrize("upper", [0, 1])
@pytest.mark.parametrize("k", [None, -1, 2])
def test_trilu(upper: int, k: int | None) -> None:
    inputs, initializers = ["x"], []
    if k is not None:
        inputs.append("k")
        initializers.append(numpy_helper.from_array(np.array(k, np.int64), "k"))
    node = helper.make_node("Trilu", inputs, ["y"], upper=upper)
    model = _single(node, [_value("x", [2, 4, 5])], [_value("y", [2, 4, 5])], initializers)
    x = np.random.default_rng(3).standard_normal((2, 4, 5)).astype(np.float32)
    _check(model, {"x": x}, "nn.trilu")


@pytest.mark.parametrize(
    ("start", "limit", "delta", "dtype"),
    [(0, 10, 3, np.int64), (5, -3, -2, np.int32), (0.5, 2.0, 0.25, np.float32)],
)
def test_range_becomes_its_constant(start, limit, delta, dtype) -> None:
    names = ["start", "limit", "delta"]
    initializers = [
        numpy_helper.from_array(np.array(v, dtype), n) for v, n in zip((start, limit, delta), names)
    ]
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    count = int(np.ceil((limit - start) / delta))
    node = helper.make_node("Range", names, ["y"])
    model = _single(node, [], [_value("y", [count], elem)], initializers)
    module = import_model(model)
    (got,) = run_function(module, {}).values()
    np.testing.assert_array_equal(got, np.arange(start, limit, delta, dtype=dtype))
    assert _ops(module)["nn.constant"] >= 1


def test_a_range_of_runtime_values_is_an_error_naming_the_node() -> None:
    node = helper.make_node("Range", ["start", "limit", "delta"], ["y"], name="positions")
    limit = numpy_helper.from_array(np.array(8, np.int64), "limit")
    delta = numpy_helper.from_array(np.array(1, np.int64), "delta")
    model = _single(
        node,
        [_value("start", [], TensorProto.INT64)],
        [_value("y", [8], TensorProto.INT64)],
        [limit, delta],
    )
    with pytest.raises(IrcError, match=r"positions.*must be known at import time"):
        import_model(model)


EINSUMS = [
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),  # attention scores
    ("bhqk,bhkd->bhqd", [(2, 3, 4, 6), (2, 3, 6, 5)]),  # attention times values
    ("ij,jk", [(3, 4), (4, 5)]),  # implicit output
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("bij->bji", [(2, 3, 4)]),
    ("ij->", [(3, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("bnd,dk->bnk", [(2, 3, 4), (4, 6)]),
    ("abc,cd,de->abe", [(2, 3, 4), (4, 5), (5, 2)]),
    ("ij,ij->i", [(3, 4), (3, 4)]),
]


@pytest.mark.parametrize(("equation", "shapes"), EINSUMS)
def test_einsum_becomes_transposes_sums_and_matmuls(equation: str, shapes) -> None:
    names = [f"x{i}" for i in range(len(shapes))]
    rng = np.random.default_rng(4)
    feeds = {n: rng.standard_normal(s).astype(np.float32) for n, s in zip(names, shapes)}
    expected = np.einsum(equation, *feeds.values())
    node = helper.make_node("Einsum", names, ["y"], equation=equation)
    model = _single(
        node,
        [_value(n, list(s)) for n, s in zip(names, shapes)],
        [_value("y", list(expected.shape))],
    )
    _check(model, feeds, None)
    assert not any(
        isinstance(op, nn.NNOp) and "einsum" in op.name for op in import_model(model).walk()
    )


def test_an_einsum_diagonal_is_an_error_with_a_hint() -> None:
    node = helper.make_node("Einsum", ["x"], ["y"], equation="ii->i", name="diag")
    model = _single(node, [_value("x", [3, 3])], [_value("y", [3])])
    with pytest.raises(IrcError, match=r"diag.*repeats a letter") as failure:
        import_model(model)
    assert failure.value.diagnostics[0].hint
