"""Reference semantics of the `quant` dialect's casts.

A tensor of a quantized type holds its storage integers at run time. Quantization
divides in the expressed type (float32, as ONNX QuantizeLinear and onnxruntime do),
rounds half to even, adds the zero point and saturates to the storage range;
dequantization subtracts the zero point and multiplies by the scale in the expressed
type.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls

from irc.dialects import quant
from irc.ir import weights


def _parameters(
    element: quant.UniformQuantizedType, rank: int, dtype: np.dtype
) -> tuple[np.ndarray, np.ndarray]:
    """Scales and zero points shaped to broadcast over a tensor of `rank`."""
    scales = np.asarray(element.scale_values, dtype=dtype)
    zero_points = np.asarray(element.zero_point_values, dtype=np.int64)
    axis = element.quantized_axis
    if axis is not None:
        shape = [1] * rank
        shape[axis] = scales.size
        return scales.reshape(shape), zero_points.reshape(shape)
    return scales.reshape(()), zero_points.reshape(())


def quantize(x: np.ndarray, element: quant.UniformQuantizedType) -> np.ndarray:
    """stored = clamp(round_half_even(x / scale) + zero_point, storage range); NaN
    becomes the zero point (the real 0), +-inf the range's ends."""
    scales, zero_points = _parameters(element, x.ndim, x.dtype)
    low, high = element.storage_range
    with np.errstate(over="ignore", invalid="ignore"):  # huge x / scale saturates
        steps = np.rint(x / scales)
    # NaN (a lookup table of sqrt or log over negative inputs) has no integer: cast, it
    # would give whatever the CPU's conversion gives. It is quantized as 0.
    steps = np.where(np.isnan(steps), 0, steps)
    # Clipped before the cast to integers: +-inf (a lookup table of exp over a wide
    # range) saturates to the range's ends; cast first, it would wrap to int64's minimum.
    stored = np.clip(steps + zero_points, low, high)
    return stored.astype(weights.dtype_of(element.storage_type))


def dequantize(stored: np.ndarray, element: quant.UniformQuantizedType) -> np.ndarray:
    """x = (stored - zero_point) * scale, in the expressed type."""
    dtype = weights.dtype_of(element.expressed_type)
    scales, zero_points = _parameters(element, stored.ndim, dtype)
    return ((stored.astype(np.int64) - zero_points).astype(dtype) * scales).astype(dtype)


def _element(value_type: object) -> quant.UniformQuantizedType:
    element = quant.quantized_element(value_type)  # type: ignore[arg-type]
    assert element is not None, "the verifier guarantees a quantized element type"
    return element


@register_impls
class QuantFunctions(InterpreterFunctions):
    """numpy implementations of the `quant` casts."""

    @impl(quant.QuantizeCastOp)
    def run_qcast(
        self, interpreter: Interpreter, op: quant.QuantizeCastOp, args: PythonValues
    ) -> PythonValues:
        return (quantize(args[0], _element(op.result.type)),)

    @impl(quant.DequantizeCastOp)
    def run_dcast(
        self, interpreter: Interpreter, op: quant.DequantizeCastOp, args: PythonValues
    ) -> PythonValues:
        return (dequantize(args[0], _element(op.input.type)),)

    @impl(quant.StorageCastOp)
    def run_scast(
        self, interpreter: Interpreter, op: quant.StorageCastOp, args: PythonValues
    ) -> PythonValues:
        target = op.result.type
        assert isinstance(target, TensorType)
        element = quant.quantized_element(target)
        storage = element.storage_type if element else target.get_element_type()
        return (args[0].astype(weights.dtype_of(storage), copy=False),)
