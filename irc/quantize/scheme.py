"""The int8 quantization scheme: scales and zero points, and the integer arithmetic.

Everything an integer op computes beyond sums of products goes through one rule, the
**requantization** of an int32 accumulator by a real multiplier `m` (for a conv,
`m = s_in * s_w / s_out`):

    m = M * 2^-(31 + s)    with M an int32 in [2^30, 2^31) and a shift s in [-30, 31]
    requantize(acc) = clamp(round_half_even(acc * M * 2^-(31 + s)) + zero_point, lo, hi)

computed exactly in 64-bit integers: with p = acc * M and k = 31 + s, the floor
f = p >> k (an arithmetic shift) and the remainder r = p - (f << k) give the result
f + 1 when r > 2^(k-1), or when r = 2^(k-1) and f is odd, else f. So the product
`acc * m` is rounded **half to even** (-2.5 -> -2, -1.5 -> -2, 0.5 -> 0, 2.5 -> 2,
3.5 -> 4), the rounding of IEEE arithmetic, numpy and onnxruntime's integer kernels,
and unbiased: ties, frequent when scales are equal (an average pool, a concat, an add),
round up and down equally often. Then the output zero point is added and the result
saturated to [lo, hi]: the storage range, narrowed by a fused relu/relu6/clip. `acc` is
an int32 (|acc| < 2^31), so `acc * M` stays below 2^62. Multipliers of 2^30 and more
cannot be represented; multipliers below 2^-32 round every int32 to 0 and are stored as 2^-32 (M = 2^30,
s = 31), which does the same.

Ranges (per-tensor activations, per-channel weights, int32 bias) are chosen as
onnxruntime's `quantize_static` chooses them, so that irc and onnxruntime agree on the
parameters given the same calibrated ranges:

- activations: asymmetric over [min(lo, 0), max(hi, 0)]: scale = (hi - lo) / 255 and
  zero point = round_half_even(-128 - lo / scale), clamped to the storage range;
- weights: symmetric per output channel over the narrow range [-127, 127]:
  scale = max|w| / 127, zero point 0 (a channel of zeros gets scale 1);
- bias: int32 with scale s_in * s_w (per channel) and zero point 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from irc.dialects.quant import UniformQuantizedType, full_range

MULTIPLIER_MIN = 1 << 30
"""The smallest fixed-point multiplier M (M is normalized into [2^30, 2^31))."""

MULTIPLIER_MAX = (1 << 31) - 1
"""The largest fixed-point multiplier M."""

SHIFT_MIN = -30
"""The smallest shift: m = M * 2^-1 < 2^30 (the right shift 31 + s is at least 1)."""

SHIFT_MAX = 31
"""The largest shift: m = M * 2^-62 >= 2^-32."""

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
"""The accumulator range."""

IDENTITY_MULTIPLIER = (MULTIPLIER_MIN, -1)
"""(M, s) of the multiplier 1: 2^30 * 2^-30."""

ADD_LEFT_SHIFT = 20
"""Bits the inputs of an int8 add are shifted left by before rescaling (TFLite's 20)."""


# --------------------------------------------------------------------------------------
# Fixed-point multipliers


def quantize_multiplier(real: float) -> tuple[int, int]:
    """The (M, s) with M * 2^-(31 + s) closest to `real` (relative error <= 2^-31).

    `real` must be finite, non-negative and below 2^30; values below 2^-32 give
    (2^30, 31), which rounds every int32 accumulator to 0 as `real` itself would.
    """
    if not (math.isfinite(real) and real >= 0):
        raise ValueError(f"a requantization multiplier must be finite and >= 0, got {real}")
    if real < 2.0**-32:
        return MULTIPLIER_MIN, SHIFT_MAX
    fraction, exponent = math.frexp(real)  # real = fraction * 2^exponent, fraction in [0.5, 1)
    multiplier = round(fraction * (1 << 31))  # exact product; ties to even
    if multiplier == 1 << 31:
        multiplier, exponent = MULTIPLIER_MIN, exponent + 1
    shift = -exponent
    if shift < SHIFT_MIN:
        raise ValueError(f"requantization multiplier {real} is too large (the limit is 2^30)")
    return multiplier, shift


def quantize_multipliers(reals: Sequence[float] | np.ndarray) -> tuple[list[int], list[int]]:
    """`quantize_multiplier` of each value: the lists of multipliers and of shifts."""
    pairs = [quantize_multiplier(float(real)) for real in np.ravel(reals)]
    return [m for m, _ in pairs], [s for _, s in pairs]


def multiplier_value(multiplier: int, shift: int) -> float:
    """The real number M * 2^-(31 + s) that (M, s) stands for (exact in float64)."""
    return math.ldexp(multiplier, -(31 + shift))


def check_multiplier(multiplier: int, shift: int) -> str | None:
    """Why (M, s) is not a valid fixed-point multiplier, or None if it is."""
    if not MULTIPLIER_MIN <= multiplier <= MULTIPLIER_MAX:
        return f"multiplier {multiplier} is outside [2^30, 2^31) = [{MULTIPLIER_MIN}, {MULTIPLIER_MAX}]"
    if not SHIFT_MIN <= shift <= SHIFT_MAX:
        return f"shift {shift} is outside [{SHIFT_MIN}, {SHIFT_MAX}]"
    return None


# --------------------------------------------------------------------------------------
# Requantization


def _along(values: int | Sequence[int] | np.ndarray, axis: int | None, ndim: int) -> np.ndarray:
    """Per-tensor or per-channel parameters as an int64 array broadcasting along `axis`."""
    array = np.asarray(values, dtype=np.int64)
    if array.ndim == 0 or (array.size == 1 and axis is None):
        return array.reshape(())
    if axis is None:
        raise ValueError("per-channel parameters need an axis")
    shape = [1] * ndim
    shape[axis] = array.size
    return array.reshape(shape)


def _check_int32(accumulator: np.ndarray) -> None:
    if np.can_cast(accumulator.dtype, np.int32):  # in range by its type
        return
    if accumulator.size and (accumulator.min() < INT32_MIN or accumulator.max() > INT32_MAX):
        raise ValueError("requantization input is outside the int32 range")


def fixed_point_multiply(
    accumulator: np.ndarray,
    multiplier: int | Sequence[int] | np.ndarray,
    shift: int | Sequence[int] | np.ndarray,
    axis: int | None = None,
) -> np.ndarray:
    """round_half_even(acc * M * 2^-(31 + s)) as int64 (see the module docstring).

    `accumulator` holds int32 values (any integer dtype); per-channel multipliers and
    shifts (1-D sequences) apply along `axis`.
    """
    accumulator = np.asarray(accumulator)
    _check_int32(accumulator)
    multipliers = _along(multiplier, axis, accumulator.ndim)
    total_shift = _along(shift, axis, accumulator.ndim) + 31
    # |acc * M| < 2^62 and the shift is at most 62, so nothing below overflows int64.
    product = np.asarray(np.multiply(accumulator, multipliers, dtype=np.int64))
    # Half to even: add half - 1, plus 1 when the floor is odd, then floor.
    odd = np.right_shift(product, total_shift)
    odd &= 1
    product += np.left_shift(np.int64(1), total_shift - 1) - 1
    product += odd
    return np.right_shift(product, total_shift, out=product)


def requantize(
    accumulator: np.ndarray,
    multiplier: int | Sequence[int] | np.ndarray,
    shift: int | Sequence[int] | np.ndarray,
    zero_point: int,
    clamp_min: int,
    clamp_max: int,
    axis: int | None = None,
) -> np.ndarray:
    """clamp(fixed_point_multiply(acc, M, s) + zero_point, clamp_min, clamp_max), int64.

    The rounding rule of every integer op: see the module docstring.
    """
    scaled = fixed_point_multiply(accumulator, multiplier, shift, axis)
    scaled += zero_point
    return np.clip(scaled, clamp_min, clamp_max, out=scaled)


def divide_round(
    accumulator: np.ndarray, multiplier: int, shift: int, counts: np.ndarray | int
) -> np.ndarray:
    """round_half_even(acc * M * 2^-(31 + s) / count), exactly, as int64 (average pooling).

    One rounding of the exact rational p / (count * 2^k), with p = acc * M and
    k = 31 + s, without overflowing int64: p = f * 2^k + r (a flooring shift,
    0 <= r < 2^k) and f = q * count + t (a flooring division, 0 <= t < count), so the
    quotient is q plus the fraction (t + r / 2^k) / count, whose comparison with 1/2
    depends only on d = 2t - count and r: above when d > 0, or d = 0 and r > 0, or
    d = -1 and r > 2^(k-1); a tie when d = 0 and r = 0, or d = -1 and r = 2^(k-1).
    """
    accumulator = np.asarray(accumulator).astype(np.int64, copy=False)
    _check_int32(accumulator)
    counts = np.asarray(counts, dtype=np.int64)
    total_shift = 31 + shift
    product = accumulator * np.int64(multiplier)
    floor = np.right_shift(product, total_shift)
    remainder = product - np.left_shift(floor, total_shift)
    quotient, rest = np.divmod(floor, counts)
    d = 2 * rest - counts
    half = np.int64(1) << np.int64(total_shift - 1)
    above = (d > 0) | ((d == 0) & (remainder > 0)) | ((d == -1) & (remainder > half))
    tie = ((d == 0) & (remainder == 0)) | ((d == -1) & (remainder == half))
    return quotient + (above | (tie & (quotient & 1).astype(bool)))


def saturate(values: np.ndarray, element: UniformQuantizedType) -> np.ndarray:
    """Clamp integer values to the storage range of a quantized type."""
    low, high = element.storage_range
    return np.clip(values, low, high)


# --------------------------------------------------------------------------------------
# Scales and zero points


def activation_parameters(
    low: float, high: float, bits: int = 8, signed: bool = True
) -> tuple[float, int]:
    """Scale and zero point of a per-tensor asymmetric activation over [low, high].

    The range is extended to contain 0; scale = (high - low) / (qmax - qmin) in
    float64, stored as float32, and zero point = round_half_even(qmin - low / scale)
    clamped to the storage range (as onnxruntime's `compute_scale_zp`). An empty range
    gets scale 1 and zero point 0.
    """
    qmin, qmax = full_range(bits, signed)
    low, high = min(float(low), 0.0), max(float(high), 0.0)
    scale = (high - low) / (qmax - qmin)
    if scale < np.finfo(np.float32).tiny:
        return 1.0, 0
    zero_point = int(np.clip(np.round(qmin - low / scale), qmin, qmax))
    return float(np.float32(scale)), zero_point


def activation_type(
    low: float, high: float, bits: int = 8, signed: bool = True
) -> UniformQuantizedType:
    """The per-tensor quantized type of an activation whose values lie in [low, high]."""
    scale, zero_point = activation_parameters(low, high, bits, signed)
    return UniformQuantizedType.make(scale, zero_point, bits=bits, signed=signed)


WEIGHT_RANGE = (-127, 127)
"""The narrow int8 range of symmetric weights (so -w is always representable)."""


def weight_scales(weights: np.ndarray, axis: int = 0) -> np.ndarray:
    """Per-channel symmetric scales: max|w| / 127 over each slice along `axis`, as float32.

    A channel whose weights are all zero gets scale 1.
    """
    weights = np.asarray(weights, dtype=np.float32)
    others = tuple(a for a in range(weights.ndim) if a != axis)
    peaks = np.abs(weights).max(axis=others) if weights.size else np.zeros(weights.shape[axis])
    scales = peaks.astype(np.float64) / WEIGHT_RANGE[1]
    scales = np.where(scales < np.finfo(np.float32).tiny, 1.0, scales)
    return scales.astype(np.float32)


def quantize_weights(weights: np.ndarray, axis: int = 0) -> tuple[np.ndarray, UniformQuantizedType]:
    """Per-channel symmetric int8 weights along `axis`: (int8 data, per-axis type).

    The data is quantize(w) with the type's own rule (float32 division, round half to
    even, saturate to [-127, 127]), so it equals what `quant.qcast` gives.
    """
    from irc.interp.quant import quantize

    weights = np.asarray(weights, dtype=np.float32)
    scales = weight_scales(weights, axis)
    element = UniformQuantizedType.make(
        [float(s) for s in scales], 0, storage_range=WEIGHT_RANGE, axis=axis
    )
    return quantize(weights, element), element


def bias_scales(input_scale: float, weight_scales: Sequence[float] | np.ndarray) -> np.ndarray:
    """The int32 bias scales s_in * s_w per channel, as float32 (as onnxruntime)."""
    return np.float32(input_scale) * np.asarray(weight_scales, dtype=np.float32)


def quantize_bias(
    bias: np.ndarray, input_scale: float, weight_scales: Sequence[float] | np.ndarray
) -> np.ndarray:
    """int32 bias: round_half_even(b / (s_in * s_w)) in float32, saturated to int32."""
    scales = bias_scales(input_scale, weight_scales)
    quotient = np.asarray(bias, dtype=np.float32) / scales
    return np.clip(np.round(quotient.astype(np.float64)), INT32_MIN, INT32_MAX).astype(np.int32)


def clamp_bounds(
    element: UniformQuantizedType, low: float | None = None, high: float | None = None
) -> tuple[int, int]:
    """Storage bounds of a fused clamp to real [low, high] (None: unbounded).

    relu is (0, None), relu6 (0, 6). A bound is quantized with the type's rule and
    intersected with the storage range.
    """
    (scale,), (zero_point,) = element.scale_values, element.zero_point_values
    storage_low, storage_high = element.storage_range

    def stored(value: float) -> int:
        quotient = np.float32(value) / np.float32(scale)
        return int(np.round(np.float64(quotient))) + zero_point

    clamp_low = storage_low if low is None else max(storage_low, min(storage_high, stored(low)))
    clamp_high = storage_high if high is None else min(storage_high, max(storage_low, stored(high)))
    return clamp_low, clamp_high


# --------------------------------------------------------------------------------------
# Parameters of the integer ops


def output_multipliers(
    input_scale: float, weight_scales: Sequence[float] | np.ndarray, output_scale: float
) -> tuple[list[int], list[int]]:
    """(M, s) lists of a conv/matmul requantization: s_in * s_w[c] / s_out per channel.

    The product s_in * s_w is taken in float32 (the bias scale), the division in float64.
    """
    reals = bias_scales(input_scale, weight_scales).astype(np.float64) / float(output_scale)
    return quantize_multipliers(reals)


def rescale_multiplier(input_scale: float, output_scale: float) -> tuple[int, int]:
    """(M, s) that takes values of scale `input_scale` to `output_scale`."""
    return quantize_multiplier(float(input_scale) / float(output_scale))


def add_parameters(
    lhs_scale: float, rhs_scale: float, output_scale: float, left_shift: int = ADD_LEFT_SHIFT
) -> dict[str, int]:
    """The properties of a `qnn.add` (TFLite's int8 ADD).

    Both inputs are shifted left by `left_shift`, scaled to the common scale
    2 * max(s_lhs, s_rhs) (multipliers <= 1/2), added, and the sum scaled by
    2 * max(...) / (2^left_shift * s_out) to the output.
    """
    twice_max = 2.0 * max(float(lhs_scale), float(rhs_scale))
    lhs_multiplier, lhs_shift = quantize_multiplier(float(lhs_scale) / twice_max)
    rhs_multiplier, rhs_shift = quantize_multiplier(float(rhs_scale) / twice_max)
    multiplier, shift = quantize_multiplier(twice_max / ((1 << left_shift) * float(output_scale)))
    return {
        "lhs_multiplier": lhs_multiplier,
        "lhs_shift": lhs_shift,
        "rhs_multiplier": rhs_multiplier,
        "rhs_shift": rhs_shift,
        "multiplier": multiplier,
        "shift": shift,
        "left_shift": left_shift,
    }


def mul_parameters(lhs_scale: float, rhs_scale: float, output_scale: float) -> dict[str, int]:
    """The properties of a `qnn.mul`: one multiplier s_lhs * s_rhs / s_out."""
    multiplier, shift = quantize_multiplier(
        float(lhs_scale) * float(rhs_scale) / float(output_scale)
    )
    return {"multiplier": multiplier, "shift": shift}


def build_lut(
    function: Callable[[np.ndarray], np.ndarray],
    input_element: UniformQuantizedType,
    output_element: UniformQuantizedType,
) -> np.ndarray:
    """The 256-entry table of a `qnn.lut` computing `function` on int8/uint8 values.

    Entry i is for the stored input value storage_min + i of the full 8-bit range:
    the value is dequantized (float32, as `quant.dcast`), `function` is applied to the
    float32 array, and the result quantized to `output_element` (as `quant.qcast`).
    So the table reproduces exactly the QDQ form dcast -> op -> qcast when `function`
    is the float op's reference implementation.
    """
    from irc.interp.quant import dequantize, quantize

    bits = input_element.storage_bits.data
    if bits != 8 or output_element.storage_bits.data != 8:
        raise ValueError("a lookup table maps 8-bit values to 8-bit values")
    low, high = full_range(bits, bool(input_element.signed.data))
    stored = np.arange(low, high + 1, dtype=np.int64).astype(
        np.int8 if input_element.signed.data else np.uint8
    )
    real = dequantize(stored, input_element)
    with np.errstate(all="ignore"):
        values = np.asarray(function(real), dtype=np.float32)
    return quantize(values, output_element).astype(np.int64)
