"""Reference semantics of the `nn` dialect: a numpy implementation of every op.

`NNFunctions` registers one `@impl` per op class of the `nn` dialect for xDSL's
`Interpreter`; values are numpy arrays whose dtype and shape are exactly those of the
SSA value's tensor type. Semantics are ONNX's (see each op's docstring in
irc/dialects/nn.py); where ONNX leaves a detail to the runtime, onnxruntime's CPU
provider decides (the tests in tests/test_interp_nn.py compare every op with it).

Precision. Products with long reductions (conv, conv_transpose, gemm, matmul) are
computed in float64 and rounded once to the result type. With float32 BLAS our own
rounding error is about as large as onnxruntime's (it accumulates in float32 too),
so the difference between the two is their sum; with float64 accumulation our result
is the correctly rounded value and the difference is onnxruntime's error alone
(measured on a 256x256x3x3 conv: max |ours - ort| 1.1e-4 with float32 BLAS, 6.1e-5
with float64, 6.8e-5 between ort and the exact value). It costs about 2.4x the float32
GEMM time, still well under a second for ResNet-50. Normalizations, softmax and means
are computed in float64 for the same reason. Elementwise ops run in the tensor's own
dtype, as onnxruntime does.

Speed. Convolution is im2col (a strided view of the padded input, copied once into
the GEMM layout) and one batched matmul over all groups; depthwise convolution sums
over kernel offsets instead, vectorized over channels and pixels. Pooling also loops
over kernel offsets only. No kernel loops over pixels or channels in Python.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Literal, cast

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from xdsl.dialects.builtin import TensorType
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import SSAValue

from irc.diagnostics import error
from irc.dialects import nn
from irc.dialects.base import channels_first_perm, channels_last_perm
from irc.interp.quant import chunk_indices
from irc.ir import weights

ACCUMULATION_DTYPE: type[np.floating] = np.float64
"""The dtype in which conv, conv_transpose, gemm and matmul multiply and accumulate
(see the module docstring for why it is float64; bench/bench_interp_ops.py measures
float32 against it)."""


def wide_matmul(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """`lhs @ rhs` (numpy's matmul broadcasting, both at least 2-D) in
    ACCUMULATION_DTYPE. A large `rhs` (a weight) is converted a slice of K at a time
    (`irc.interp.quant.chunk_indices`), the partial products summed in float64: whole,
    the float64 copy of ZFNet-512's 288 MB gemm weight alone was 576 MB."""
    indices = chunk_indices(rhs.shape, axis=rhs.ndim - 2)
    if len(indices) == 1:
        return np.matmul(lhs.astype(ACCUMULATION_DTYPE), rhs.astype(ACCUMULATION_DTYPE))
    result: np.ndarray | None = None
    for index in indices:
        part = index[-1]
        product = np.matmul(
            lhs[..., part].astype(ACCUMULATION_DTYPE), rhs[..., part, :].astype(ACCUMULATION_DTYPE)
        )
        result = product if result is None else np.add(result, product, out=result)
    assert result is not None
    return result


def result_shape(value: SSAValue) -> tuple[int, ...]:
    """The static shape of a tensor-typed SSA value."""
    value_type = value.type
    assert isinstance(value_type, TensorType)
    return tuple(value_type.get_shape())


def result_dtype(value: SSAValue) -> np.dtype:
    """The numpy dtype of the elements of a tensor-typed SSA value."""
    value_type = value.type
    assert isinstance(value_type, TensorType)
    return weights.dtype_of(value_type.get_element_type())


# --------------------------------------------------------------------------------------
# Elementwise helpers


def _erf(x: np.ndarray) -> np.ndarray:
    # numpy has no erf; math.erf is correctly rounded in double precision, which a
    # polynomial approximation would have to prove. ~0.1 us per element.
    as_double = np.asarray(x, dtype=np.float64)
    # The ufunc returns a Python float, not an array, for a rank-0 input.
    return np.asarray(_ERF_UFUNC(as_double), dtype=np.float64).reshape(as_double.shape)


_ERF_UFUNC = np.frompyfunc(math.erf, 1, 1)


def _divide(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """ONNX Div: true division for floats, truncation toward zero for integers."""
    if lhs.dtype.kind not in "iu":
        return np.divide(lhs, rhs)
    quotient = np.floor_divide(lhs, rhs)
    # floor_divide rounds toward -inf; step back up where the exact quotient is negative.
    inexact = np.remainder(lhs, rhs) != 0
    return quotient + (inexact & ((lhs < 0) != (rhs < 0))).astype(lhs.dtype)


def _gelu(x: np.ndarray, approximate: str) -> np.ndarray:
    wide = x.astype(np.float64)
    if approximate == "tanh":
        inner = math.sqrt(2 / math.pi) * (wide + 0.044715 * wide**3)
        return (0.5 * wide * (1 + np.tanh(inner))).astype(x.dtype)
    return (0.5 * wide * (1 + _erf(wide / math.sqrt(2)))).astype(x.dtype)


def _exp_linear(x: np.ndarray, alpha: float) -> np.ndarray:
    """x if x > 0 else alpha * (exp(x) - 1), without overflowing exp on the unused side."""
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


# --------------------------------------------------------------------------------------
# Sliding windows (convolution, pooling)


def _spatial_params(op: nn.NNOp, kernel: Sequence[int]) -> tuple[list[int], list[int], list[int]]:
    """Strides, pads ([begins..., ends...]) and dilations of a windowed op, defaulted."""
    props = op.props()
    spatial = len(kernel)
    strides = props.ints("strides") or [1] * spatial
    pads = props.ints("pads") or [0] * (2 * spatial)
    dilations = props.ints("dilations") or [1] * spatial
    return strides, pads, dilations


def _pad_for_windows(
    x: np.ndarray,
    kernel: Sequence[int],
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    out_sizes: Sequence[int],
    fill: float,
) -> np.ndarray:
    """Pad the spatial axes of `x` so that exactly the windows of `out_sizes` fit.

    The begin padding is `pads`' own; the end padding is what the last window needs,
    which is more than `pads` says in ceil mode and may be less in floor mode.
    """
    spatial = len(kernel)
    widths = [(0, 0), (0, 0)]
    crops = [slice(None), slice(None)]
    for i in range(spatial):
        extent = (out_sizes[i] - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1
        end = extent - (x.shape[2 + i] + pads[i])
        widths.append((pads[i], max(end, 0)))
        crops.append(slice(0, x.shape[2 + i] + min(end, 0)))
    x = x[tuple(crops)]
    if not any(begin or end for begin, end in widths):
        return x
    return np.pad(x, widths, constant_values=fill)


def _window_views(
    padded: np.ndarray,
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    out_sizes: Sequence[int],
) -> Iterator[tuple[tuple[int, ...], np.ndarray]]:
    """For each kernel offset, the strided view of `padded` that it reads for all outputs."""
    for offset in itertools.product(*(range(k) for k in kernel)):
        index = tuple(
            slice(o * d, o * d + (n - 1) * s + 1, s)
            for o, d, s, n in zip(offset, dilations, strides, out_sizes)
        )
        yield offset, padded[(slice(None), slice(None), *index)]


def conv(
    x: np.ndarray,
    weight: np.ndarray,
    bias: np.ndarray | None,
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    group: int,
    out_sizes: Sequence[int],
) -> np.ndarray:
    """ONNX Conv: x (N, C, D...), weight (M, C/group, k...), bias (M,) -> (N, M, O...)."""
    batch = x.shape[0]
    out_channels, group_channels = weight.shape[:2]
    kernel = weight.shape[2:]
    spatial = len(kernel)
    padded = _pad_for_windows(x, kernel, strides, pads, dilations, out_sizes, 0.0)
    if group > 1 and group_channels == 1:
        result = _depthwise_conv(padded, weight, strides, dilations, out_sizes)
    else:
        dilated = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
        windows = sliding_window_view(padded, dilated, axis=tuple(range(2, 2 + spatial)))
        windows = windows[
            (
                slice(None),
                slice(None),
                *(slice(0, (n - 1) * s + 1, s) for n, s in zip(out_sizes, strides)),
                *(slice(None, None, d) for d in dilations),
            )
        ]
        # (N, C, O..., K...) -> (N, group, C/group * K, O) in one copy, already widened.
        windows = windows.reshape(batch, group, group_channels, *out_sizes, *kernel)
        order = [0, 1, 2, *range(3 + spatial, 3 + 2 * spatial), *range(3, 3 + spatial)]
        columns = windows.transpose(order).astype(ACCUMULATION_DTYPE)
        columns = columns.reshape(batch, group, group_channels * math.prod(kernel), -1)
        matrix = weight.reshape(group, out_channels // group, -1).astype(ACCUMULATION_DTYPE)
        result = np.matmul(matrix, columns).reshape(batch, out_channels, *out_sizes)
    if bias is not None:
        result += bias.astype(ACCUMULATION_DTYPE).reshape(-1, *([1] * spatial))
    return result.astype(x.dtype)


def _depthwise_conv(
    padded: np.ndarray,
    weight: np.ndarray,
    strides: Sequence[int],
    dilations: Sequence[int],
    out_sizes: Sequence[int],
) -> np.ndarray:
    """Conv with one input channel per group (output channel m reads channel m // mult)."""
    out_channels = weight.shape[0]
    multiplier = out_channels // padded.shape[1]
    if multiplier > 1:
        padded = np.repeat(padded, multiplier, axis=1)
    kernel = weight.shape[2:]
    taps = weight.reshape(out_channels, *kernel).astype(ACCUMULATION_DTYPE)
    result = np.zeros((padded.shape[0], out_channels, *out_sizes), ACCUMULATION_DTYPE)
    broadcast = (-1,) + (1,) * len(kernel)
    for offset, view in _window_views(padded, kernel, strides, dilations, out_sizes):
        tap: tuple[slice | int, ...] = (slice(None), *offset)
        result += view * taps[tap].reshape(broadcast)
    return result


def conv_transpose(
    x: np.ndarray,
    weight: np.ndarray,
    bias: np.ndarray | None,
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    group: int,
    out_sizes: Sequence[int],
) -> np.ndarray:
    """ONNX ConvTranspose: x (N, C, D...), weight (C, M/group, k...) -> (N, M, O...).

    Each input pixel scatters weight * value into the output (col2im): one matmul
    gives every contribution, then one strided add per kernel offset places them.
    """
    batch, channels = x.shape[:2]
    group_out = weight.shape[1]
    kernel = weight.shape[2:]
    spatial = len(kernel)
    in_sizes = x.shape[2:]
    inputs = x.reshape(batch, group, channels // group, -1).astype(ACCUMULATION_DTYPE)
    matrix = (
        weight.reshape(group, channels // group, -1).astype(ACCUMULATION_DTYPE).transpose(0, 2, 1)
    )
    contributions = np.matmul(matrix, inputs).reshape(batch, group * group_out, *kernel, *in_sizes)
    # The full (uncropped) output, extended at the end for output_padding.
    full = [
        max(s * (n - 1) + (k - 1) * d + 1, p + o)
        for s, n, k, d, p, o in zip(strides, in_sizes, kernel, dilations, pads, out_sizes)
    ]
    result = np.zeros((batch, group * group_out, *full), ACCUMULATION_DTYPE)
    for offset in itertools.product(*(range(k) for k in kernel)):
        index = tuple(
            slice(o * d, o * d + (n - 1) * s + 1, s)
            for o, d, s, n in zip(offset, dilations, strides, in_sizes)
        )
        result[(slice(None), slice(None), *index)] += contributions[
            (slice(None), slice(None), *offset)
        ]
    result = result[(slice(None), slice(None), *(slice(p, p + o) for p, o in zip(pads, out_sizes)))]
    if bias is not None:
        result = result + bias.astype(ACCUMULATION_DTYPE).reshape(-1, *([1] * spatial))
    return result.astype(x.dtype)


def _pool_counts(
    size: int,
    kernel: int,
    stride: int,
    pad_begin: int,
    pad_end: int,
    dilation: int,
    out: int,
    include_pad: bool,
) -> np.ndarray:
    """How many window taps along one axis an average divides by, per output position.

    Taps in the input count; taps in the explicit padding count only with
    `count_include_pad`; taps past the end padding (ceil mode) never count.
    """
    positions = np.arange(out)[:, None] * stride + np.arange(kernel)[None, :] * dilation - pad_begin
    low, high = (-pad_begin, size + pad_end) if include_pad else (0, size)
    return ((positions >= low) & (positions < high)).sum(axis=1)


def max_pool(x: np.ndarray, op: nn.MaxPoolOp) -> np.ndarray:
    """ONNX MaxPool (no indices) with dilations and ceil_mode; padding never wins."""
    kernel = op.props().ints("kernel_shape") or []
    strides, pads, dilations = _spatial_params(op, kernel)
    out_sizes = channels_first_result_shape(op)[2:]
    padded = _pad_for_windows(x, kernel, strides, pads, dilations, out_sizes, -np.inf)
    result: np.ndarray | None = None
    for _, view in _window_views(padded, kernel, strides, dilations, out_sizes):
        result = view.copy() if result is None else np.maximum(result, view)
    assert result is not None
    return result


def average_pool(x: np.ndarray, op: nn.AveragePoolOp) -> np.ndarray:
    """ONNX AveragePool with dilations, ceil_mode and count_include_pad."""
    props = op.props()
    kernel = props.ints("kernel_shape") or []
    strides, pads, dilations = _spatial_params(op, kernel)
    out_sizes = channels_first_result_shape(op)[2:]
    padded = _pad_for_windows(x, kernel, strides, pads, dilations, out_sizes, 0.0)
    total = np.zeros((*x.shape[:2], *out_sizes), np.float64)
    for _, view in _window_views(padded, kernel, strides, dilations, out_sizes):
        total += view
    spatial = len(kernel)
    counts = np.ones((), np.float64)
    for i in range(spatial):
        axis_counts = _pool_counts(
            x.shape[2 + i],
            kernel[i],
            strides[i],
            pads[i],
            pads[spatial + i],
            dilations[i],
            out_sizes[i],
            props.bool("count_include_pad"),
        )
        counts = np.multiply.outer(counts, axis_counts)
    return (total / counts).astype(x.dtype)


# --------------------------------------------------------------------------------------
# Data movement


def pad(x: np.ndarray, pads: Sequence[int], mode: str, value: float, op: nn.PadOp) -> np.ndarray:
    """ONNX Pad: output[i] = input[i - begin] where that exists; negative pads crop.

    In constant mode every other position holds `value`, even when a crop removes
    more than the axis holds. The other modes crop first and then extend what is
    left, which must not be empty.
    """
    rank = x.ndim
    begins, ends = pads[:rank], pads[rank:]
    out_shape = [size + b + e for size, b, e in zip(x.shape, begins, ends)]
    if mode == "constant":
        result = np.full(out_shape, value, dtype=x.dtype)
        source, target = [], []
        for size, b, length in zip(x.shape, begins, out_shape):
            low, high = max(b, 0), min(b + size, length)
            source.append(slice(low - b, max(high - b, low - b)))
            target.append(slice(low, max(high, low)))
        result[tuple(target)] = x[tuple(source)]
        return result
    x = x[tuple(slice(max(-b, 0), size - max(-e, 0)) for size, b, e in zip(x.shape, begins, ends))]
    widths = [(max(b, 0), max(e, 0)) for b, e in zip(begins, ends)]
    for axis, (size, (b, e)) in enumerate(zip(x.shape, widths)):
        if size <= 0 and (b or e):
            raise error(
                f"pad mode '{mode}' cannot extend axis {axis}: nothing is left of it after cropping",
                op,
                hint="constant mode can pad an empty axis",
            )
    if not any(b or e for b, e in widths):
        return x
    # The verifier admits only nn.PAD_MODES, whose other modes numpy names the same.
    return np.pad(x, widths, mode=cast(Literal["reflect", "edge", "wrap"], mode))


def _source_coordinates(out_length: int, in_length: int, scale: float, mode: str) -> np.ndarray:
    """Where each output position of one axis samples the input (ONNX Resize).

    Computed in float32 with onnxruntime's order of operations, so that a position
    that lands exactly between two pixels rounds as onnxruntime rounds it.
    """
    f32 = np.float32
    position = np.arange(out_length, dtype=f32)
    scale32, half = f32(scale), f32(0.5)
    match mode:
        case "half_pixel":
            return (position + half) / scale32 - half
        case "half_pixel_symmetric":
            output_width = scale32 * f32(in_length)
            adjustment = f32(out_length) / output_width
            offset = f32(in_length) / f32(2) * (f32(1) - adjustment)
            # onnxruntime finishes this mode in double precision. Where the exact value
            # is a tie (x.5) and scale * length is not an integer, its rounding still
            # differs from ours now and then (6 of ~2500 fuzzed samples, round_* modes).
            wide = (
                np.float64(offset) + (position.astype(np.float64) + 0.5) / np.float64(scale32) - 0.5
            )
            return wide.astype(f32)
        case "pytorch_half_pixel":
            if out_length <= 1:
                return np.zeros(out_length, f32)
            return (position + half) / scale32 - half
        case "align_corners":
            if out_length <= 1:
                return np.zeros(out_length, f32)
            return position * f32(in_length - 1) / f32(out_length - 1)
        case "asymmetric":
            return position / scale32
    raise ValueError(f"unknown coordinate_transformation_mode {mode!r}")


def _nearest_indices(coordinates: np.ndarray, mode: str, length: int) -> np.ndarray:
    # float64 so that coordinate +- 0.5 is exact.
    wide = coordinates.astype(np.float64)
    match mode:
        case "round_prefer_floor":
            rounded = np.ceil(wide - 0.5)
        case "round_prefer_ceil":
            rounded = np.floor(wide + 0.5)
        case "floor":
            rounded = np.floor(wide)
        case "ceil":
            rounded = np.ceil(wide)
        case _:
            raise ValueError(f"unknown nearest_mode {mode!r}")
    return np.clip(rounded, 0, length - 1).astype(np.intp)


def _cubic_weights(fraction: np.ndarray, a: float) -> np.ndarray:
    """Keys cubic weights of the taps at -1, 0, +1, +2 from the sample's floor."""
    t = fraction
    return np.stack(
        [
            ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a,
            ((a + 2) * t - (a + 3)) * t * t + 1,
            ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1,
            ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a,
        ],
        axis=1,
    )


def _interpolate_axis(
    x: np.ndarray, axis: int, indices: np.ndarray, tap_weights: np.ndarray
) -> np.ndarray:
    """sum over taps j of tap_weights[o, j] * x[..., indices[o, j], ...] along `axis`."""
    broadcast = [1] * x.ndim
    broadcast[axis] = -1
    result = None
    for tap in range(indices.shape[1]):
        term = np.take(x, indices[:, tap], axis=axis) * tap_weights[:, tap].reshape(broadcast)
        result = term if result is None else result + term
    assert result is not None
    return result


def nearest_axis_indices(
    out_length: int, in_length: int, scale: float, coordinate_mode: str, nearest_mode: str
) -> np.ndarray:
    """The input index each output position of one axis of a nearest resize reads."""
    source = _source_coordinates(out_length, in_length, scale, coordinate_mode)
    return _nearest_indices(source, nearest_mode, in_length)


def nearest_indices(op: nn.ResizeOp) -> list[np.ndarray] | None:
    """The input index each output position of each axis reads, for a nearest resize
    (None for the other modes): what `resize` computes, for backends that move the
    data instead."""
    props = op.props()
    if props.str("mode") != "nearest":
        return None
    in_shape, out_shape = result_shape(op.input), result_shape(op.result)
    if in_shape == out_shape:
        return [np.arange(length) for length in in_shape]
    coordinate_mode = props.str("coordinate_transformation_mode") or "half_pixel"
    indices = []
    for in_length, out_length, scale in zip(in_shape, out_shape, props.floats("scales") or []):
        if in_length == out_length and scale == 1:
            indices.append(np.arange(in_length))
            continue
        nearest_mode = props.str("nearest_mode") or ""
        indices.append(
            nearest_axis_indices(out_length, in_length, scale, coordinate_mode, nearest_mode)
        )
    return indices


def resize(x: np.ndarray, op: nn.ResizeOp) -> np.ndarray:
    """ONNX Resize (opset 19, no antialias, no roi), one axis at a time."""
    props = op.props()
    mode = props.str("mode")
    coordinate_mode = props.str("coordinate_transformation_mode") or "half_pixel"
    scales = props.floats("scales") or []
    out_shape = result_shape(op.result)
    if out_shape == x.shape:
        # onnxruntime returns the input whenever the shape does not change, even for
        # scales such as 1.1 that ONNX's formula would still apply; we agree with it.
        return x
    if mode == "nearest":
        maps = nearest_indices(op)
        assert maps is not None
        for axis, nearest in enumerate(maps):
            if len(nearest) != x.shape[axis] or np.any(nearest != np.arange(len(nearest))):
                x = np.take(x, nearest, axis=axis)
        return x
    result = x.astype(np.float64)
    for axis, (in_length, out_length, scale) in enumerate(zip(x.shape, out_shape, scales)):
        if in_length == out_length and scale == 1:
            continue  # every coordinate mode maps such an axis onto itself
        source = _source_coordinates(out_length, in_length, scale, coordinate_mode)
        if mode == "linear":
            clamped = np.clip(source.astype(np.float64), 0, in_length - 1)
            low = np.floor(clamped).astype(np.intp)
            fraction = clamped - low
            indices = np.stack([low, np.minimum(low + 1, in_length - 1)], axis=1)
            tap_weights = np.stack([1 - fraction, fraction], axis=1)
        else:
            wide = source.astype(np.float64)
            low = np.floor(wide).astype(np.intp)
            taps = low[:, None] + np.arange(-1, 3)[None, :]
            tap_weights = _cubic_weights(wide - low, props.float("cubic_coeff_a") or 0.0)
            if props.bool("exclude_outside"):
                tap_weights = np.where((taps >= 0) & (taps < in_length), tap_weights, 0.0)
                tap_weights /= tap_weights.sum(axis=1, keepdims=True)
            indices = np.clip(taps, 0, in_length - 1)
        result = _interpolate_axis(result, axis, indices, tap_weights)
    return result.astype(x.dtype)


def depth_to_space(x: np.ndarray, block: int, mode: str) -> np.ndarray:
    """ONNX DepthToSpace: DCR reads channels as (by, bx, c), CRD as (c, by, bx)."""
    n, c, h, w = x.shape
    depth = c // (block * block)
    if mode == "DCR":
        blocks = x.reshape(n, block, block, depth, h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        blocks = x.reshape(n, depth, block, block, h, w).transpose(0, 1, 4, 2, 5, 3)
    return blocks.reshape(n, depth, h * block, w * block)


def lrn(x: np.ndarray, size: int, alpha: float, beta: float, bias: float) -> np.ndarray:
    """ONNX LRN: x / (bias + alpha / size * sum of squares over nearby channels) ** beta."""
    squares = x.astype(np.float64) ** 2
    before, after = (size - 1) // 2, size // 2  # floor and ceil of (size - 1) / 2
    widths = [(0, 0)] * x.ndim
    widths[1] = (before, after)
    padded = np.pad(squares, widths)
    channels = x.shape[1]
    window_sum = sum(padded[:, j : j + channels] for j in range(size))
    return (x / (bias + alpha / size * window_sum) ** beta).astype(x.dtype)


def _normalize(
    x: np.ndarray, axes: tuple[int, ...], epsilon: float, scale: np.ndarray, bias: np.ndarray | None
) -> np.ndarray:
    """(x - mean) / sqrt(var + epsilon) * scale + bias, statistics over `axes`, in float64."""
    wide = x.astype(np.float64)
    mean = wide.mean(axis=axes, keepdims=True)
    centered = wide - mean
    variance = (centered * centered).mean(axis=axes, keepdims=True)
    result = centered / np.sqrt(variance + epsilon) * scale.astype(np.float64)
    if bias is not None:
        result += bias.astype(np.float64)
    return result.astype(x.dtype)


def _channel_param(param: np.ndarray, rank: int) -> np.ndarray:
    """A per-channel (axis 1) parameter, shaped to broadcast against a rank-`rank` tensor."""
    return param.astype(np.float64).reshape(-1, *([1] * (rank - 2)))


def _reduce_axes(op: nn.ReduceOp, rank: int) -> tuple[int, ...]:
    axes = op.props().ints("axes")
    return tuple(range(rank)) if axes is None else tuple(a % rank for a in axes)


def _softmax_parts(x: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """(x - max, log(sum(exp(x - max)))) along `axis`, in float64."""
    shifted = x.astype(np.float64)
    shifted = shifted - shifted.max(axis=axis, keepdims=True)
    return shifted, np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


# --------------------------------------------------------------------------------------
# The interpreter functions


# --------------------------------------------------------------------------------------
# Activations: the standalone ops and the ones fused into a producer share these, so a
# fused op computes bit for bit what the unfused pair computed.


def relu(x: np.ndarray) -> np.ndarray:
    """max(x, 0)."""
    return np.maximum(x, 0)


def sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)), computed in float64 and rounded once."""
    return (1 / (1 + np.exp(-x.astype(np.float64)))).astype(x.dtype)


def hard_swish(x: np.ndarray) -> np.ndarray:
    """x * clip(x / 6 + 1/2, 0, 1)."""
    return x * np.clip(x / 6 + 0.5, 0, 1)


def leaky_relu(x: np.ndarray, alpha: float) -> np.ndarray:
    """x if x >= 0 else alpha * x."""
    return np.where(x >= 0, x, x * alpha)


def clip(x: np.ndarray, low: float | None, high: float | None) -> np.ndarray:
    """min(max(x, low), high), either bound optional."""
    if low is not None:
        x = np.maximum(x, low)
    if high is not None:
        x = np.minimum(x, high)
    return x


ACTIVATION_FUNCTIONS: dict[str, Callable[..., np.ndarray]] = {
    "relu": relu,
    "clip": lambda x, min, max: clip(x, min, max),
    "leaky_relu": leaky_relu,
    "hard_swish": hard_swish,
    "sigmoid": sigmoid,
}
"""The function of each `#nn.activation` kind, called with its named parameters."""


def activate(x: np.ndarray, op: nn.NNOp) -> np.ndarray:
    """Apply the op's fused activation (its `activation` property), if it has one."""
    activation = op.properties.get("activation")
    if activation is None:
        return x
    assert isinstance(activation, nn.ActivationAttr)
    return ACTIVATION_FUNCTIONS[activation.kind.data](x, **activation.named_values())


def channels_last_aware(implementation: Callable[..., PythonValues]) -> Callable[..., PythonValues]:
    """Let a channels-first implementation run ops whose `layout` is "nhwc".

    The op's layout operands are moved channels-first, the implementation runs, and its
    results are moved back; the op's properties (spatial strides, pads, ...) mean the
    same in both layouts.
    """

    @functools.wraps(implementation)
    def run(
        self: NNFunctions, interpreter: Interpreter, op: nn.NNOp, args: PythonValues
    ) -> PythonValues:
        if op.props().str("layout") != "nhwc":
            return implementation(self, interpreter, op, args)
        moved = tuple(
            np.transpose(arg, channels_first_perm(arg.ndim)) if index in op.LAYOUT_OPERANDS else arg
            for index, arg in enumerate(args)
        )
        results = implementation(self, interpreter, op, moved)
        return tuple(
            np.ascontiguousarray(np.transpose(r, channels_last_perm(r.ndim))) for r in results
        )

    return run


def channels_first_result_shape(op: nn.NNOp) -> tuple[int, ...]:
    """The shape of the op's result, seen channels-first whatever the op's layout."""
    shape = result_shape(op.results[0])
    if op.props().str("layout") == "nhwc":
        return tuple(shape[p] for p in channels_first_perm(len(shape)))
    return shape


def _elementwise(function: Callable[..., np.ndarray]):
    """An implementation whose single result is `function` of the operands."""

    def run(
        self: NNFunctions, interpreter: Interpreter, op: nn.NNOp, args: PythonValues
    ) -> PythonValues:
        return (function(*args),)

    return run


def _folded(function: Callable[[np.ndarray, np.ndarray], np.ndarray]):
    """An implementation that folds a binary numpy function over all operands."""
    return _elementwise(lambda *args: functools.reduce(function, args))


@register_impls
class NNFunctions(InterpreterFunctions):
    """numpy implementations of every `nn` op, for xDSL's `Interpreter`."""

    # ---- constants -------------------------------------------------------------------

    @impl(nn.ConstantOp)
    def run_constant(
        self, interpreter: Interpreter, op: nn.ConstantOp, args: PythonValues
    ) -> PythonValues:
        return (op.array(),)

    @impl(nn.ConstantOfShapeOp)
    def run_constant_of_shape(
        self, interpreter: Interpreter, op: nn.ConstantOfShapeOp, args: PythonValues
    ) -> PythonValues:
        fill = weights.numpy_from_dense(op.value).reshape(())
        return (np.full(result_shape(op.result), fill, result_dtype(op.result)),)

    # ---- elementwise unary -------------------------------------------------------------

    run_relu = impl(nn.ReluOp)(_elementwise(relu))
    run_sigmoid = impl(nn.SigmoidOp)(_elementwise(sigmoid))
    run_hard_swish = impl(nn.HardSwishOp)(_elementwise(hard_swish))
    run_tanh = impl(nn.TanhOp)(_elementwise(np.tanh))
    run_softplus = impl(nn.SoftplusOp)(_elementwise(lambda x: np.logaddexp(x, 0)))
    run_softsign = impl(nn.SoftsignOp)(_elementwise(lambda x: x / (1 + np.abs(x))))
    run_exp = impl(nn.ExpOp)(_elementwise(np.exp))
    run_log = impl(nn.LogOp)(_elementwise(np.log))
    run_sqrt = impl(nn.SqrtOp)(_elementwise(np.sqrt))
    run_erf = impl(nn.ErfOp)(_elementwise(lambda x: _erf(x).astype(x.dtype)))
    run_reciprocal = impl(nn.ReciprocalOp)(_elementwise(np.reciprocal))
    run_floor = impl(nn.FloorOp)(_elementwise(np.floor))
    run_ceil = impl(nn.CeilOp)(_elementwise(np.ceil))
    run_neg = impl(nn.NegOp)(_elementwise(np.negative))
    run_abs = impl(nn.AbsOp)(_elementwise(np.abs))
    run_identity = impl(nn.IdentityOp)(_elementwise(lambda x: x))
    run_dropout = impl(nn.DropoutOp)(_elementwise(lambda x: x))

    @impl(nn.LeakyReluOp)
    def run_leaky_relu(
        self, interpreter: Interpreter, op: nn.LeakyReluOp, args: PythonValues
    ) -> PythonValues:
        return (leaky_relu(args[0], op.props().float("alpha") or 0.0),)

    @impl(nn.EluOp)
    def run_elu(self, interpreter: Interpreter, op: nn.EluOp, args: PythonValues) -> PythonValues:
        return (_exp_linear(args[0], op.props().float("alpha") or 0.0),)

    @impl(nn.CeluOp)
    def run_celu(self, interpreter: Interpreter, op: nn.CeluOp, args: PythonValues) -> PythonValues:
        alpha = op.props().float("alpha") or 1.0
        x = args[0]
        return ((alpha * _exp_linear(x / alpha, 1.0)).astype(x.dtype),)

    @impl(nn.SeluOp)
    def run_selu(self, interpreter: Interpreter, op: nn.SeluOp, args: PythonValues) -> PythonValues:
        props = op.props()
        gamma = props.float("gamma") or 0.0
        return (gamma * _exp_linear(args[0], props.float("alpha") or 0.0),)

    @impl(nn.ClipOp)
    def run_clip(self, interpreter: Interpreter, op: nn.ClipOp, args: PythonValues) -> PythonValues:
        props = op.props()
        return (clip(args[0], props.float("min"), props.float("max")),)

    @impl(nn.HardSigmoidOp)
    def run_hard_sigmoid(
        self, interpreter: Interpreter, op: nn.HardSigmoidOp, args: PythonValues
    ) -> PythonValues:
        props = op.props()
        return (np.clip(props.float("alpha") * args[0] + props.float("beta"), 0, 1),)

    @impl(nn.MishOp)
    def run_mish(self, interpreter: Interpreter, op: nn.MishOp, args: PythonValues) -> PythonValues:
        x = args[0]
        return ((x * np.tanh(np.logaddexp(0, x))).astype(x.dtype),)

    @impl(nn.GeluOp)
    def run_gelu(self, interpreter: Interpreter, op: nn.GeluOp, args: PythonValues) -> PythonValues:
        return (_gelu(args[0], op.props().str("approximate") or "none"),)

    @impl(nn.CastOp)
    def run_cast(self, interpreter: Interpreter, op: nn.CastOp, args: PythonValues) -> PythonValues:
        # numpy's float -> int conversion truncates toward zero, as ONNX Cast does.
        return (args[0].astype(result_dtype(op.result)),)

    # ---- elementwise binary and variadic ---------------------------------------------

    @impl(nn.AddOp)
    def run_add(self, interpreter: Interpreter, op: nn.AddOp, args: PythonValues) -> PythonValues:
        return (activate(np.add(*args), op),)

    run_sub = impl(nn.SubOp)(_elementwise(np.subtract))
    run_mul = impl(nn.MulOp)(_elementwise(np.multiply))
    run_div = impl(nn.DivOp)(_elementwise(_divide))
    run_sum = impl(nn.SumOp)(_folded(np.add))

    @impl(nn.ModOp)
    def run_mod(self, interpreter: Interpreter, op: nn.ModOp, args: PythonValues) -> PythonValues:
        lhs, rhs = args
        remainder = np.fmod if op.props().bool("fmod") else np.mod
        # A remainder by 0 is undefined in ONNX; numpy gives 0 (integers) or NaN.
        with np.errstate(divide="ignore", invalid="ignore"):
            return (remainder(lhs, rhs).astype(lhs.dtype),)

    run_max = impl(nn.MaxOp)(_folded(np.maximum))
    run_min = impl(nn.MinOp)(_folded(np.minimum))
    run_equal = impl(nn.EqualOp)(_elementwise(np.equal))
    run_less = impl(nn.LessOp)(_elementwise(np.less))
    run_less_or_equal = impl(nn.LessOrEqualOp)(_elementwise(np.less_equal))
    run_greater = impl(nn.GreaterOp)(_elementwise(np.greater))
    run_greater_or_equal = impl(nn.GreaterOrEqualOp)(_elementwise(np.greater_equal))
    run_where = impl(nn.WhereOp)(_elementwise(np.where))

    @impl(nn.PowOp)
    def run_pow(self, interpreter: Interpreter, op: nn.PowOp, args: PythonValues) -> PythonValues:
        base, exponent = args
        power = np.power(base.astype(np.float64), exponent.astype(np.float64))
        return (power.astype(base.dtype),)

    @impl(nn.PReluOp)
    def run_prelu(
        self, interpreter: Interpreter, op: nn.PReluOp, args: PythonValues
    ) -> PythonValues:
        x, slope = args
        return (np.where(x < 0, x * slope, x).astype(x.dtype),)

    # ---- convolution and matrix products ---------------------------------------------

    @impl(nn.ConvOp)
    @channels_last_aware
    def run_conv(self, interpreter: Interpreter, op: nn.ConvOp, args: PythonValues) -> PythonValues:
        x, weight = args[0], args[1]
        strides, pads, dilations = _spatial_params(op, weight.shape[2:])
        bias = args[2] if len(args) > 2 else None
        group = op.props().int("group") or 1
        out_sizes = channels_first_result_shape(op)[2:]
        result = conv(x, weight, bias, strides, pads, dilations, group, out_sizes)
        return (activate(result, op),)

    @impl(nn.ConvTransposeOp)
    @channels_last_aware
    def run_conv_transpose(
        self, interpreter: Interpreter, op: nn.ConvTransposeOp, args: PythonValues
    ) -> PythonValues:
        x, weight = args[0], args[1]
        strides, pads, dilations = _spatial_params(op, weight.shape[2:])
        bias = args[2] if len(args) > 2 else None
        group = op.props().int("group") or 1
        out_sizes = channels_first_result_shape(op)[2:]
        result = conv_transpose(x, weight, bias, strides, pads, dilations, group, out_sizes)
        return (activate(result, op),)

    @impl(nn.GemmOp)
    def run_gemm(self, interpreter: Interpreter, op: nn.GemmOp, args: PythonValues) -> PythonValues:
        props = op.props()
        lhs, rhs = args[0], args[1]
        if props.bool("trans_a"):
            lhs = lhs.T
        if props.bool("trans_b"):
            rhs = rhs.T
        result = props.float("alpha") * wide_matmul(lhs, rhs)
        if len(args) > 2:
            result = result + props.float("beta") * args[2].astype(ACCUMULATION_DTYPE)
        return (activate(result.astype(args[0].dtype), op),)

    @impl(nn.MatMulOp)
    def run_matmul(
        self, interpreter: Interpreter, op: nn.MatMulOp, args: PythonValues
    ) -> PythonValues:
        lhs, rhs = args
        if lhs.dtype.kind != "f":
            return (activate(np.matmul(lhs, rhs), op),)
        if lhs.ndim < 2 or rhs.ndim < 2:
            product = np.matmul(lhs.astype(ACCUMULATION_DTYPE), rhs.astype(ACCUMULATION_DTYPE))
        else:
            product = wide_matmul(lhs, rhs)
        return (activate(product.astype(lhs.dtype), op),)

    # ---- normalization -------------------------------------------------------------------

    @impl(nn.BatchNormOp)
    @channels_last_aware
    def run_batch_norm(
        self, interpreter: Interpreter, op: nn.BatchNormOp, args: PythonValues
    ) -> PythonValues:
        x, scale, bias, mean, variance = args
        rank = x.ndim
        factor = _channel_param(scale, rank) / np.sqrt(
            _channel_param(variance, rank) + op.props().float("epsilon")
        )
        result = (x - _channel_param(mean, rank)) * factor + _channel_param(bias, rank)
        return (result.astype(x.dtype),)

    @impl(nn.InstanceNormOp)
    @channels_last_aware
    def run_instance_norm(
        self, interpreter: Interpreter, op: nn.InstanceNormOp, args: PythonValues
    ) -> PythonValues:
        x, scale, bias = args
        axes = tuple(range(2, x.ndim))
        epsilon = op.props().float("epsilon") or 0.0
        return (
            _normalize(
                x, axes, epsilon, _channel_param(scale, x.ndim), _channel_param(bias, x.ndim)
            ),
        )

    @impl(nn.LayerNormOp)
    def run_layer_norm(
        self, interpreter: Interpreter, op: nn.LayerNormOp, args: PythonValues
    ) -> PythonValues:
        x, scale = args[0], args[1]
        bias = args[2] if len(args) > 2 else None
        props = op.props()
        axis = (props.int("axis") or 0) % x.ndim
        epsilon = props.float("epsilon") or 0.0
        return (_normalize(x, tuple(range(axis, x.ndim)), epsilon, scale, bias),)

    @impl(nn.LRNOp)
    @channels_last_aware
    def run_lrn(self, interpreter: Interpreter, op: nn.LRNOp, args: PythonValues) -> PythonValues:
        props = op.props()
        size = props.int("size") or 1
        alpha, beta = props.float("alpha") or 0.0, props.float("beta") or 0.0
        return (lrn(args[0], size, alpha, beta, props.float("bias") or 0.0),)

    # ---- pooling ---------------------------------------------------------------------------

    @impl(nn.MaxPoolOp)
    @channels_last_aware
    def run_max_pool(
        self, interpreter: Interpreter, op: nn.MaxPoolOp, args: PythonValues
    ) -> PythonValues:
        return (max_pool(args[0], op),)

    @impl(nn.AveragePoolOp)
    @channels_last_aware
    def run_average_pool(
        self, interpreter: Interpreter, op: nn.AveragePoolOp, args: PythonValues
    ) -> PythonValues:
        return (average_pool(args[0], op),)

    @impl(nn.GlobalAveragePoolOp)
    @channels_last_aware
    def run_global_average_pool(
        self, interpreter: Interpreter, op: nn.GlobalAveragePoolOp, args: PythonValues
    ) -> PythonValues:
        x = args[0]
        axes = tuple(range(2, x.ndim))
        return (x.mean(axis=axes, keepdims=True, dtype=np.float64).astype(x.dtype),)

    @impl(nn.GlobalMaxPoolOp)
    @channels_last_aware
    def run_global_max_pool(
        self, interpreter: Interpreter, op: nn.GlobalMaxPoolOp, args: PythonValues
    ) -> PythonValues:
        x = args[0]
        return (x.max(axis=tuple(range(2, x.ndim)), keepdims=True),)

    # ---- reductions and softmax --------------------------------------------------------------

    @impl(nn.ReduceMeanOp)
    def run_reduce_mean(
        self, interpreter: Interpreter, op: nn.ReduceMeanOp, args: PythonValues
    ) -> PythonValues:
        x = args[0]
        keepdims = op.props().bool("keepdims")
        mean = x.mean(axis=_reduce_axes(op, x.ndim), keepdims=keepdims, dtype=np.float64)
        return (np.asarray(mean).astype(x.dtype),)

    @impl(nn.ReduceSumOp)
    def run_reduce_sum(
        self, interpreter: Interpreter, op: nn.ReduceSumOp, args: PythonValues
    ) -> PythonValues:
        x = args[0]
        keepdims = op.props().bool("keepdims")
        if x.dtype.kind == "f":
            total = x.sum(axis=_reduce_axes(op, x.ndim), keepdims=keepdims, dtype=np.float64)
        else:
            total = x.sum(axis=_reduce_axes(op, x.ndim), keepdims=keepdims, dtype=x.dtype)
        return (np.asarray(total).astype(x.dtype),)

    @impl(nn.ReduceMaxOp)
    def run_reduce_max(
        self, interpreter: Interpreter, op: nn.ReduceMaxOp, args: PythonValues
    ) -> PythonValues:
        x = args[0]
        return (
            np.asarray(x.max(axis=_reduce_axes(op, x.ndim), keepdims=op.props().bool("keepdims"))),
        )

    @impl(nn.ReduceMinOp)
    def run_reduce_min(
        self, interpreter: Interpreter, op: nn.ReduceMinOp, args: PythonValues
    ) -> PythonValues:
        x = args[0]
        return (
            np.asarray(x.min(axis=_reduce_axes(op, x.ndim), keepdims=op.props().bool("keepdims"))),
        )

    @impl(nn.SoftmaxOp)
    def run_softmax(
        self, interpreter: Interpreter, op: nn.SoftmaxOp, args: PythonValues
    ) -> PythonValues:
        x = args[0]
        shifted, log_total = _softmax_parts(x, op.props().int("axis") or 0)
        return (np.exp(shifted - log_total).astype(x.dtype),)

    @impl(nn.MaskedSoftmaxOp)
    def run_masked_softmax(
        self, interpreter: Interpreter, op: nn.MaskedSoftmaxOp, args: PythonValues
    ) -> PythonValues:
        x, mask = args[0], np.broadcast_to(np.asarray(args[1], dtype=bool), args[0].shape)
        values = np.where(mask, -np.inf, x.astype(np.float64))
        peak = values.max(axis=-1, keepdims=True)
        exps = np.exp(values - np.where(np.isfinite(peak), peak, 0.0))
        total = exps.sum(axis=-1, keepdims=True)
        return ((exps / np.where(total > 0, total, 1.0)).astype(x.dtype),)

    @impl(nn.CumSumOp)
    def run_cumsum(
        self, interpreter: Interpreter, op: nn.CumSumOp, args: PythonValues
    ) -> PythonValues:
        x = args[0]
        props = op.props()
        axis = nn.normalize_axis(props.int("axis") or 0, x.ndim)
        if props.bool("reverse"):
            x = np.flip(x, axis)
        total = np.cumsum(x, axis=axis, dtype=np.float64 if x.dtype.kind == "f" else x.dtype)
        if props.bool("exclusive"):
            total = total - x
        if props.bool("reverse"):
            total = np.flip(total, axis)
        return (np.ascontiguousarray(total).astype(x.dtype),)

    @impl(nn.TriluOp)
    def run_trilu(
        self, interpreter: Interpreter, op: nn.TriluOp, args: PythonValues
    ) -> PythonValues:
        props = op.props()
        k = props.int("k") or 0
        triangle = np.triu if props.bool("upper") else np.tril
        return (triangle(args[0], k).astype(args[0].dtype),)

    @impl(nn.LogSoftmaxOp)
    def run_log_softmax(
        self, interpreter: Interpreter, op: nn.LogSoftmaxOp, args: PythonValues
    ) -> PythonValues:
        x = args[0]
        shifted, log_total = _softmax_parts(x, op.props().int("axis") or 0)
        return ((shifted - log_total).astype(x.dtype),)

    # ---- data movement ------------------------------------------------------------------------

    @impl(nn.ConcatOp)
    def run_concat(
        self, interpreter: Interpreter, op: nn.ConcatOp, args: PythonValues
    ) -> PythonValues:
        return (np.concatenate(args, axis=op.props().int("axis") or 0),)

    @impl(nn.SplitOp)
    def run_split(
        self, interpreter: Interpreter, op: nn.SplitOp, args: PythonValues
    ) -> PythonValues:
        props = op.props()
        boundaries = np.cumsum(props.ints("sizes") or [])[:-1]
        return tuple(np.split(args[0], boundaries, axis=props.int("axis") or 0))

    @impl(nn.SliceOp)
    def run_slice(
        self, interpreter: Interpreter, op: nn.SliceOp, args: PythonValues
    ) -> PythonValues:
        x = args[0]
        props = op.props()
        starts, ends = props.ints("starts") or [], props.ints("ends") or []
        axes = props.ints("axes") or list(range(len(starts)))
        steps = props.ints("steps") or [1] * len(starts)
        index = [slice(None)] * x.ndim
        for axis, start, end, step in zip(axes, starts, ends, steps):
            axis %= x.ndim
            start, end = nn.slice_bounds(x.shape[axis], start, end, step)
            # An end of -1 (walking down through index 0) is None in a Python slice.
            index[axis] = slice(start, None if end < 0 else end, step)
        return (x[tuple(index)],)

    @impl(nn.GatherOp)
    def run_gather(
        self, interpreter: Interpreter, op: nn.GatherOp, args: PythonValues
    ) -> PythonValues:
        x, indices = args
        axis = (op.props().int("axis") or 0) % x.ndim
        size = x.shape[axis]
        if indices.size and (indices.min() < -size or indices.max() >= size):
            bad = indices[(indices < -size) | (indices >= size)].flat[0]
            raise error(
                f"gather index {bad} is out of range for axis {axis} of size {size}",
                op,
                hint=f"indices along this axis must lie in [{-size}, {size - 1}]",
            )
        return (np.take(x, indices, axis=axis),)

    @impl(nn.ReshapeOp)
    def run_reshape(
        self, interpreter: Interpreter, op: nn.ReshapeOp, args: PythonValues
    ) -> PythonValues:
        return (args[0].reshape(result_shape(op.result)),)

    @impl(nn.FlattenOp)
    def run_flatten(
        self, interpreter: Interpreter, op: nn.FlattenOp, args: PythonValues
    ) -> PythonValues:
        return (args[0].reshape(result_shape(op.result)),)

    @impl(nn.SqueezeOp)
    def run_squeeze(
        self, interpreter: Interpreter, op: nn.SqueezeOp, args: PythonValues
    ) -> PythonValues:
        return (args[0].reshape(result_shape(op.result)),)

    @impl(nn.UnsqueezeOp)
    def run_unsqueeze(
        self, interpreter: Interpreter, op: nn.UnsqueezeOp, args: PythonValues
    ) -> PythonValues:
        return (args[0].reshape(result_shape(op.result)),)

    @impl(nn.TransposeOp)
    def run_transpose(
        self, interpreter: Interpreter, op: nn.TransposeOp, args: PythonValues
    ) -> PythonValues:
        return (np.transpose(args[0], op.props().ints("perm")),)

    @impl(nn.PadOp)
    def run_pad(self, interpreter: Interpreter, op: nn.PadOp, args: PythonValues) -> PythonValues:
        props = op.props()
        return (
            pad(
                args[0],
                props.ints("pads") or [],
                props.str("mode") or "",
                props.float("value") or 0.0,
                op,
            ),
        )

    @impl(nn.ResizeOp)
    def run_resize(
        self, interpreter: Interpreter, op: nn.ResizeOp, args: PythonValues
    ) -> PythonValues:
        return (resize(args[0], op),)

    @impl(nn.DepthToSpaceOp)
    @channels_last_aware
    def run_depth_to_space(
        self, interpreter: Interpreter, op: nn.DepthToSpaceOp, args: PythonValues
    ) -> PythonValues:
        props = op.props()
        return (depth_to_space(args[0], props.int("blocksize") or 1, props.str("mode") or ""),)

    @impl(nn.ExpandOp)
    def run_expand(
        self, interpreter: Interpreter, op: nn.ExpandOp, args: PythonValues
    ) -> PythonValues:
        return (np.broadcast_to(args[0], result_shape(op.result)),)

    @impl(nn.TileOp)
    def run_tile(self, interpreter: Interpreter, op: nn.TileOp, args: PythonValues) -> PythonValues:
        return (np.tile(args[0], op.props().ints("repeats") or []),)

    @impl(nn.ShapeOp)
    def run_shape(
        self, interpreter: Interpreter, op: nn.ShapeOp, args: PythonValues
    ) -> PythonValues:
        x = args[0]
        props = op.props()
        start, end = nn.shape_op_range(x.ndim, props.int("start"), props.int("end"))
        return (np.array(x.shape[start:end], dtype=np.int64),)
