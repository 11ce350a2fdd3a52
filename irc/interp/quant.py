"""Reference semantics of the `quant` dialect's casts.

A tensor of a quantized type holds its storage integers at run time. Quantization
divides in the expressed type (float32, as ONNX QuantizeLinear and onnxruntime do),
rounds half to even, adds the zero point and saturates to the storage range;
dequantization subtracts the zero point and multiplies by the scale in the expressed
type.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls

from irc.dialects import quant
from irc.ir import weights

CHUNK_ELEMENTS = 1 << 20
"""The most elements converted at a time by `quantize`, `dequantize` and the weight
quantization (irc/quantize/scheme.py): their arithmetic makes float64 and int64
temporaries of its operand's size, which on a large weight (ZFNet-512's 4096 x 18432
gemm weight, 302 MB of float32) took the test suite's processes past 2 GB. A larger
tensor is converted in slices (`chunk_indices`); the conversions are elementwise, so
the results are the same."""


def chunk_indices(shape: tuple[int, ...], axis: int | None = None) -> list[tuple[slice, ...]]:
    """Indices that cut a tensor of `shape` into slices along `axis` (by default its
    first axis longer than one) of about CHUNK_ELEMENTS elements each, or of one
    index along `axis` where that is more; a single index, the whole tensor, when it
    has at most CHUNK_ELEMENTS elements."""
    size = math.prod(shape)
    if axis is None:
        axis = next((index for index, length in enumerate(shape) if length > 1), None)
    if axis is None or size <= CHUNK_ELEMENTS:
        return [(slice(None),) * len(shape)]
    step = max(1, CHUNK_ELEMENTS // (size // shape[axis]))
    leading = (slice(None),) * axis
    return [(*leading, slice(start, start + step)) for start in range(0, shape[axis], step)]


def _part(parameter: np.ndarray, index: tuple[slice, ...]) -> np.ndarray:
    """The part of a broadcasting scale or zero point (`_parameters`) that applies to
    the slice `index` of the tensor."""
    if parameter.ndim == 0:
        return parameter
    return parameter[
        tuple(part if length > 1 else slice(None) for part, length in zip(index, parameter.shape))
    ]


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
    becomes the zero point (the real 0), +-inf the range's ends. A large `x` is
    quantized a slice at a time (CHUNK_ELEMENTS)."""
    scales, zero_points = _parameters(element, x.ndim, x.dtype)
    dtype = weights.dtype_of(element.storage_type)
    indices = chunk_indices(x.shape)
    if len(indices) == 1:
        return _quantize(x, scales, zero_points, element.storage_range).astype(dtype)
    stored = np.empty_like(x, dtype=dtype)
    for index in indices:
        steps = _quantize(
            x[index], _part(scales, index), _part(zero_points, index), element.storage_range
        )
        stored[index] = steps.astype(dtype)
    return stored


def _quantize(
    x: np.ndarray, scales: np.ndarray, zero_points: np.ndarray, storage_range: tuple[int, int]
) -> np.ndarray:
    """`quantize` before the cast to the storage type."""
    low, high = storage_range
    with np.errstate(over="ignore", invalid="ignore"):  # huge x / scale saturates
        steps = np.rint(x / scales)
    # NaN (a lookup table of sqrt or log over negative inputs) has no integer: cast, it
    # would give whatever the CPU's conversion gives. It is quantized as 0.
    steps = np.where(np.isnan(steps), 0, steps)
    # Clipped before the cast to integers: +-inf (a lookup table of exp over a wide
    # range) saturates to the range's ends; cast first, it would wrap to int64's minimum.
    return np.clip(steps + zero_points, low, high)


def dequantize(stored: np.ndarray, element: quant.UniformQuantizedType) -> np.ndarray:
    """x = (stored - zero_point) * scale, in the expressed type (a large `stored` a
    slice at a time: `dequantized_parts`)."""
    parts = dequantized_parts(stored, element)
    if len(chunk_indices(stored.shape)) == 1:
        return next(parts)[1]
    result = np.empty_like(stored, dtype=weights.dtype_of(element.expressed_type))
    for index, values in parts:
        result[index] = values
    return result


def dequantized_parts(
    stored: np.ndarray, element: quant.UniformQuantizedType
) -> Iterator[tuple[tuple[slice, ...], np.ndarray]]:
    """`dequantize(stored, element)` a slice at a time (`chunk_indices`): (index of the
    slice, its values) pairs, so that its int64 temporaries are a slice's size; one
    pair, the whole tensor, for a small one."""
    dtype = weights.dtype_of(element.expressed_type)
    scales, zero_points = _parameters(element, stored.ndim, dtype)
    for index in chunk_indices(stored.shape):
        part = stored[index] if stored.ndim else stored
        centered = part.astype(np.int64) - _part(zero_points, index)
        yield index, (centered.astype(dtype) * _part(scales, index)).astype(dtype)


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
