"""The quant dialect's casts against ONNX QuantizeLinear/DequantizeLinear (onnxruntime),
and the type's parameters."""

from __future__ import annotations

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from irc.dialects import quant
from irc.interp.quant import dequantize, quantize

RNG = np.random.default_rng(5)


def onnx_quantize(
    x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray, axis: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """QuantizeLinear then DequantizeLinear in onnxruntime."""
    kind = TensorProto.INT8 if zero_point.dtype == np.int8 else TensorProto.UINT8
    attrs = {} if axis is None else {"axis": axis}
    graph = helper.make_graph(
        [
            helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], **attrs),
            helper.make_node("DequantizeLinear", ["q", "s", "z"], ["d"], **attrs),
        ],
        "q",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
        [
            helper.make_tensor_value_info("q", kind, list(x.shape)),
            helper.make_tensor_value_info("d", TensorProto.FLOAT, list(x.shape)),
        ],
        [numpy_helper.from_array(scale, "s"), numpy_helper.from_array(zero_point, "z")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    q, d = session.run(None, {"x": x})
    return q, d


CASES = {
    "int8 per tensor": (np.float32(0.0235), np.int8(-3), None, (4, 17)),
    "uint8 per tensor": (np.float32(0.1), np.uint8(128), None, (3, 5)),
    "int8 per axis 0": (
        np.array([0.1, 0.02, 0.3], np.float32),
        np.array([1, -2, 0], np.int8),
        0,
        (3, 8),
    ),
    "int8 per axis 1": (np.array([0.5, 0.05], np.float32), np.array([0, 4], np.int8), 1, (4, 2, 3)),
}


@pytest.mark.parametrize("case", CASES)
def test_casts_match_onnx(case: str) -> None:
    scale, zero_point, axis, shape = CASES[case]
    x = (RNG.standard_normal(shape) * 8).astype(np.float32)
    # Exact ties of the rounding and values that saturate.
    x.flat[0] = float(np.float32(2.5) * np.atleast_1d(scale)[0])
    x.flat[1] = 1e4
    x.flat[2] = -1e4
    element = quant.UniformQuantizedType.make(
        scale.tolist(),
        zero_point.tolist(),
        signed=zero_point.dtype == np.int8,
        axis=axis,
    )
    expected_q, expected_d = onnx_quantize(x, scale, zero_point, axis)
    q = quantize(x, element)
    assert q.dtype == expected_q.dtype
    np.testing.assert_array_equal(q, expected_q)
    np.testing.assert_array_equal(dequantize(q, element), expected_d)


def test_rounding_is_half_to_even() -> None:
    element = quant.UniformQuantizedType.make(1.0)
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5], np.float32)
    np.testing.assert_array_equal(quantize(x, element), [0, 2, 2, 0, -2, -2])


def test_narrow_storage_range_saturates() -> None:
    element = quant.UniformQuantizedType.make(1.0, storage_range=(-127, 127))
    np.testing.assert_array_equal(
        quantize(np.array([-200.0, 200.0], np.float32), element), [-127, 127]
    )


def test_type_parameters() -> None:
    element = quant.UniformQuantizedType.make([0.5, 0.25], [1, -1], axis=1)
    assert element.is_per_axis
    assert element.quantized_axis == 1
    assert element.scale_values == [0.5, 0.25]
    assert element.zero_point_values == [1, -1]
    assert element.storage_range == (-128, 127)
    assert str(element) == "!quant.uniform<i8:f32:1, {0.5:1, 0.25:-1}>"
