"""Fixed-point integer arithmetic: the requantization every integer op shares.

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

A **wide** accumulator (the sums of products with a 16-bit operand: int16 activations)
holds 48-bit values in an int64; its requantization keeps the rule above with a
16-bit multiplier M' = round(M / 2^16), so that acc * M' stays below 2^62
(`wide_fixed_point_multiply`, TFLite's and TOSA's int48 rescale).

The dialects' verifiers and the interpreters use this module; it knows no dialect
(bounds are plain integers). The scales and zero points that give the multipliers
are irc/quantize/scheme.py's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

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

ADD_LEFT_SHIFT_16 = 15
"""The left shift of an add with a 16-bit input (TFLite's int16 ADD: 15, so that a
shifted 16-bit value stays within int32)."""


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
    return _shift_half_to_even(product, total_shift)


def _shift_half_to_even(product: np.ndarray, total_shift: np.ndarray) -> np.ndarray:
    """round_half_even(product / 2^total_shift), in place: add half - 1, plus 1 when
    the floor is odd, then floor."""
    odd = np.right_shift(product, total_shift)
    odd &= 1
    product += np.left_shift(np.int64(1), total_shift - 1) - 1
    product += odd
    return np.right_shift(product, total_shift, out=product)


WIDE_MIN, WIDE_MAX = -(1 << 47) + 1, (1 << 47) - 1
"""The range of a wide accumulator: the 48-bit accumulator of 16-bit activations
(times 8-bit weights, or 16-bit ones), stored as i64 (TFLite's int16x8 kernels assume
the same range of their int64 accumulator)."""


def accumulator_bounds(wide: bool) -> tuple[int, int]:
    """The range of an accumulator: int32's, or the 48-bit one of a `wide` accumulator."""
    return (WIDE_MIN, WIDE_MAX) if wide else (INT32_MIN, INT32_MAX)


WIDE_SHIFT_MIN = -14
"""The smallest shift of a wide requantization (its right shift 15 + s is at least 1)."""


def reduced_multiplier(multiplier: int) -> int:
    """The 16-bit multiplier of a wide requantization: round(M / 2^16) in [2^14, 2^15),
    saturating at 2^15 - 1 (TFLite's `MultiplyByQuantizedMultiplier` of an int64)."""
    return (multiplier + (1 << 15)) >> 16 if multiplier < 0x7FFF0000 else 0x7FFF


def check_wide_multiplier(multiplier: int, shift: int) -> str | None:
    """Why (M, s) cannot requantize a wide accumulator, or None if it can."""
    problem = check_multiplier(multiplier, shift)
    if problem is None and shift < WIDE_SHIFT_MIN:
        return f"shift {shift} is below {WIDE_SHIFT_MIN}: a wide accumulator needs a right shift"
    return problem


def wide_fixed_point_multiply(
    accumulator: np.ndarray,
    multiplier: int | Sequence[int] | np.ndarray,
    shift: int | Sequence[int] | np.ndarray,
    axis: int | None = None,
) -> np.ndarray:
    """round_half_even(acc * M' * 2^-(15 + s)) as int64, for a wide accumulator.

    M' = `reduced_multiplier(M)`: with |acc| < 2^47 and M' < 2^15 the product stays
    below 2^62. The multiplier loses its 16 low bits (a relative error below 2^-15,
    as in TFLite's int16x8 kernels); the rounding is the same half to even as
    `fixed_point_multiply`'s.
    """
    accumulator = np.asarray(accumulator)
    if accumulator.size and (accumulator.min() < WIDE_MIN or accumulator.max() > WIDE_MAX):
        raise ValueError("requantization input is outside the 48-bit range")
    reduced = np.vectorize(reduced_multiplier, otypes=[np.int64])(
        np.asarray(multiplier, dtype=np.int64)
    )
    multipliers = _along(reduced, axis, accumulator.ndim)
    total_shift = _along(shift, axis, accumulator.ndim) + 15
    product = np.asarray(np.multiply(accumulator, multipliers, dtype=np.int64))
    return _shift_half_to_even(product, total_shift)


# --------------------------------------------------------------------------------------
# TFLite's roundings

HALF_EVEN = "half_even"
"""irc's rounding: one rounding of the exact product, ties to even (`fixed_point_multiply`)."""

ROUNDINGS = (HALF_EVEN, "half_up", "double_up", "double_away")
"""The rounding rules of a fixed-point multiply by (M, s), m = M * 2^-(31 + s):

- `half_even`: irc's, round_half_even(acc * m), exactly (the module docstring);
- `half_up`: one rounding of the exact product, ties towards +infinity:
  floor(acc * M * 2^-(31 + s) + 1/2) (TFLite built with TFLITE_SINGLE_ROUNDING; and
  what an ARM `vqrdmulh` of a value shifted left beforehand computes);
- `double_up` and `double_away`: gemmlowp's two roundings, as TFLite's
  `MultiplyByQuantizedMultiplier` computes them: with l = max(-s, 0) and
  r = max(s, 0), first h = SaturatingRoundingDoublingHighMul(acc * 2^l, M) =
  floor((acc * 2^l * M + 2^30) / 2^31) (ties towards +infinity), then a rounding
  right shift of h by r bits: ties towards +infinity for `double_up` (ARM's `vrshl`,
  ruy's x86 and ARM kernels, TFLite's vector paths), away from zero for `double_away`
  (gemmlowp's `RoundingDivideByPOT`, TFLite's scalar code).

Rounding twice can differ from rounding once by one step: 2.4997 may round to 2.5
and then to 3. TFLite's multipliers and shifts are (M, -s): its exponent is irc's
shift negated.
"""

TFLITE_ROUNDINGS = ROUNDINGS[1:]
"""The rounding rules that TFLite's kernels use (irc's own is half_even)."""


def check_rounding(rounding: str) -> str | None:
    """Why `rounding` is not a rounding rule, or None if it is one."""
    if rounding not in ROUNDINGS:
        return f'rounding "{rounding}" is not one of {", ".join(ROUNDINGS)}'
    return None


def rounding_multiply(
    accumulator: np.ndarray,
    multiplier: int | Sequence[int] | np.ndarray,
    shift: int | Sequence[int] | np.ndarray,
    axis: int | None = None,
    rounding: str = HALF_EVEN,
) -> np.ndarray:
    """acc * M * 2^-(31 + s) rounded by `rounding` (one of `ROUNDINGS`), as int64.

    `accumulator` holds int32 values; for the double roundings acc * 2^max(-s, 0) must
    fit int32 too (TFLite wraps it around). Per-channel multipliers and shifts apply
    along `axis`, as in `fixed_point_multiply`.
    """
    if rounding == HALF_EVEN:
        return fixed_point_multiply(accumulator, multiplier, shift, axis)
    accumulator = np.asarray(accumulator)
    _check_int32(accumulator)
    multipliers = _along(multiplier, axis, accumulator.ndim)
    shifts = _along(shift, axis, accumulator.ndim)
    if rounding == "half_up":
        total = shifts + 31
        product = np.asarray(np.multiply(accumulator, multipliers, dtype=np.int64))
        product += np.left_shift(np.int64(1), total - 1)
        return np.right_shift(product, total, out=product)
    if rounding not in ("double_up", "double_away"):
        raise ValueError(check_rounding(rounding))
    left = np.maximum(-shifts, 0)
    right = np.maximum(shifts, 0)
    shifted = np.left_shift(accumulator.astype(np.int64), left)
    if shifted.size and (shifted.min() < INT32_MIN or shifted.max() > INT32_MAX):
        raise ValueError("the requantization input shifted left overflows int32")
    # SaturatingRoundingDoublingHighMul: floor((a * b + 2^30) / 2^31). It saturates only
    # for a = b = -2^31, and M >= 0.
    high = np.multiply(shifted, multipliers, dtype=np.int64)
    high += 1 << 30
    high = np.right_shift(high, 31, out=high)
    half = np.where(right > 0, np.left_shift(np.int64(1), np.maximum(right - 1, 0)), 0)
    if rounding == "double_up":
        return np.right_shift(high + half, right)
    magnitude = np.right_shift(np.abs(high) + half, right)
    return np.where(high < 0, -magnitude, magnitude)


def tflite_multiplier(real: float) -> tuple[int, int]:
    """TFLite's `QuantizeMultiplier` of a float64 multiplier as irc's (M, s): M rounded
    half away from zero from the binary fraction (std::round), a fraction that rounds
    up to 2^31 halved, and a multiplier below 2^-31 (TFLite's 0) as (2^30, 31), which
    rounds every int32 to 0 as TFLite's 0 does, under every rule."""
    if not (math.isfinite(real) and real >= 0):
        raise ValueError(f"a requantization multiplier must be finite and >= 0, got {real}")
    if real == 0:
        return MULTIPLIER_MIN, SHIFT_MAX
    fraction, exponent = math.frexp(real)
    multiplier = math.floor(fraction * (1 << 31) + 0.5)  # exact: fraction has 53 bits
    if multiplier == 1 << 31:
        multiplier, exponent = multiplier // 2, exponent + 1
    if exponent < -31:
        return MULTIPLIER_MIN, SHIFT_MAX
    shift = -exponent
    if shift < SHIFT_MIN:
        raise ValueError(f"requantization multiplier {real} is too large (the limit is 2^30)")
    return multiplier, shift


def tflite_mean_multiplier(multiplier: int, shift: int, count: int) -> tuple[int, int]:
    """TFLite's integer mean of `count` values folds 1 / count into the multiplier of
    s_in / s_out, (M, s): with k = min(floor(log2(count)), 32, 31 - s), the mean's
    multiplier is M' = floor(M * 2^k / count) with shift s + k (M' lies in
    (M / 2, M], so it can be below 2^30). `reference_ops::QuantizedMeanOrSum`."""
    k = min(count.bit_length() - 1, 32, 31 - shift)
    return (multiplier << k) // count, shift + k


def divide_round_away(sums: np.ndarray, counts: np.ndarray | int) -> np.ndarray:
    """sums / counts rounded to the nearest integer, ties away from zero (C's
    (s + c/2) / c for s > 0, (s - c/2) / c otherwise, both truncating), as int64:
    TFLite's int8 average pooling."""
    sums = np.asarray(sums).astype(np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    half = counts // 2
    quotient = (np.abs(sums) + half) // counts
    return np.where(sums > 0, quotient, -((np.abs(sums) + half) // counts))


def pool_average(
    sums: np.ndarray,
    counts: np.ndarray | int,
    multiplier: int,
    shift: int,
    rounding: str,
    zero_point: int,
) -> np.ndarray:
    """The average of pooled centred values less the output zero point, by `rounding`:
    irc's half_even (`divide_round`), TFLite's pooling ("half_away": the
    stored values, whose zero point is also the output's, divided with ties away from
    zero) or TFLite's integer mean (the count folded into the multiplier,
    `tflite_mean_multiplier`, then one rounding multiply by `rounding`), as
    `qnn.average_pool`, `qnn.global_average_pool` and `tile.pool` say."""
    if rounding == HALF_EVEN:
        return divide_round(sums, multiplier, shift, counts)
    if rounding == "half_away":
        counts = np.asarray(counts, dtype=np.int64)
        return divide_round_away(sums + zero_point * counts, counts) - zero_point
    sums = np.asarray(sums).astype(np.int64)
    counts = np.broadcast_to(np.asarray(counts, dtype=np.int64), sums.shape)
    result = np.empty(sums.shape, np.int64)
    for count in np.unique(counts):  # a global pool: one count
        where = counts == count
        folded, folded_shift = tflite_mean_multiplier(multiplier, shift, int(count))
        result[where] = rounding_multiply(sums[where], folded, folded_shift, rounding=rounding)
    return result


def tflite_raw_mean(
    centred_sums: np.ndarray,
    counts: np.ndarray | int,
    input_zero_point: int,
    multiplier: int,
    shift: int,
    rounding: str,
    bias: int,
) -> np.ndarray:
    """TFLite's optimized 4-D mean (`optimized_integer_ops::Mean`), int64: the sums of
    the stored values (the centred sums plus count * the input zero point), multiplied
    by (M, s) for s_in / (count * s_out) with `rounding`, plus `bias` (TFLite's
    z_out - round(z_in * s_in / s_out), in place of the output zero point)."""
    sums = np.asarray(centred_sums).astype(np.int64) + input_zero_point * np.asarray(
        counts, dtype=np.int64
    )
    return rounding_multiply(sums, multiplier, shift, rounding=rounding) + bias


def requantize(
    accumulator: np.ndarray,
    multiplier: int | Sequence[int] | np.ndarray,
    shift: int | Sequence[int] | np.ndarray,
    zero_point: int,
    clamp_min: int,
    clamp_max: int,
    axis: int | None = None,
    wide: bool = False,
    rounding: str = HALF_EVEN,
) -> np.ndarray:
    """clamp(fixed_point_multiply(acc, M, s) + zero_point, clamp_min, clamp_max), int64.

    The rounding rule of every integer op: see the module docstring; `rounding` picks
    one of TFLite's instead (`ROUNDINGS`). A `wide` accumulator (48 bits, of 16-bit
    activations) is scaled by `wide_fixed_point_multiply` instead.
    """
    if wide:
        scaled = wide_fixed_point_multiply(accumulator, multiplier, shift, axis)
    else:
        scaled = rounding_multiply(accumulator, multiplier, shift, axis, rounding)
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


def saturate(values: np.ndarray, bounds: tuple[int, int]) -> np.ndarray:
    """Clamp integer values to `bounds` (low, high): a quantized type's storage range."""
    low, high = bounds
    return np.clip(values, low, high)


# --------------------------------------------------------------------------------------
# 16-bit lookup tables

LUT16_STEP_BITS = 7
"""A 16-bit table has an entry every 2^7 = 128 input values."""

LUT16_ENTRIES = (1 << (16 - LUT16_STEP_BITS)) + 1
"""513: an entry at each of the 512 steps' starts, and one at the end of the range
(TFLite's int16 tables)."""


def interpolated_lookup(values: np.ndarray, table: np.ndarray) -> np.ndarray:
    """A 16-bit lookup with linear interpolation (TFLite's int16 LUT), int64: for an
    int16 x, the step i = 256 + (x >> 7) and the offset f = x & 127 in it give

        table[i] + round_half_even((table[i + 1] - table[i]) * f / 128)

    `table` has LUT16_ENTRIES entries; the result lies between the two it reads."""
    x = np.asarray(values).astype(np.int64)
    index = np.right_shift(x, LUT16_STEP_BITS) + (1 << (15 - LUT16_STEP_BITS))
    offset = np.bitwise_and(x, (1 << LUT16_STEP_BITS) - 1)
    entries = np.asarray(table, dtype=np.int64)
    base = entries[index]
    delta = (entries[index + 1] - base) * offset
    return base + _shift_half_to_even(delta, np.asarray(LUT16_STEP_BITS, dtype=np.int64))


# --------------------------------------------------------------------------------------
# Linear resize

RESIZE_FRACTION_BITS = {8: 10, 16: 15}
"""The fraction bits of a linear resize's weights, by the values' storage bits: Q10
for 8-bit values (TFLite's integer bilinear), Q15 for 16-bit ones (their weights'
rounding stays below half a step of a 16-bit value)."""

LINEAR_RESIZE_MODES = ("half_pixel", "pytorch_half_pixel", "asymmetric", "align_corners")
"""The coordinate modes (ONNX's) of the integer linear resize."""


def resize_coordinates(
    mode: str, scale: float, in_size: int, out_size: int, bits: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per output index y along one axis: the two input indices (y0, y1) it reads and
    the weight w of y1 in Q`bits` (y0's is 2^bits - w).

    The source coordinate v is ONNX's transform of y in `mode` (half_pixel:
    (y + 1/2) / scale - 1/2; asymmetric: y / scale; align_corners: y (in - 1) /
    (out - 1)), in float64 from the float32 scale: +, -, * and / only, correctly
    rounded on every CPU. y0 = floor(v), w = round_half_even((v - y0) 2^bits) (a
    whole 2^bits moves to the next index), y1 = y0 + 1, both clamped to the input, so
    that beyond its edges the edge value is read."""
    y = np.arange(out_size, dtype=np.float64)
    if mode == "align_corners":
        v = y * ((in_size - 1) / (out_size - 1)) if out_size > 1 else np.zeros_like(y)
    elif mode == "asymmetric":
        v = y / scale
    elif mode == "pytorch_half_pixel" and out_size == 1:
        v = np.zeros_like(y)
    else:
        v = (y + 0.5) / scale - 0.5
    low = np.floor(v)
    weight = np.rint((v - low) * (1 << bits)).astype(np.int64)
    low = low.astype(np.int64) + (weight >> bits)  # a weight of 2^bits: the next index
    weight &= (1 << bits) - 1
    return np.clip(low, 0, in_size - 1), np.clip(low + 1, 0, in_size - 1), weight


@dataclass(frozen=True)
class ResizeWindow:
    """Where a tile of a resize lies along one resized axis: the output tile from
    `out_origin` of an output `out_length` long, the input window from `in_origin`
    (possibly before 0) of an input `in_length` long."""

    in_length: int
    out_length: int
    out_origin: int
    in_origin: int

    def part(self, size: int) -> slice:
        """The tile's `size` outputs along the whole axis."""
        return slice(self.out_origin, self.out_origin + size)

    def check(self, indices: Sequence[np.ndarray], window: int) -> str | None:
        """Why a window of `window` inputs does not hold the tile's `indices` (its
        reads made the window's), or None."""
        lowest = min((int(i.min()) for i in indices if i.size), default=0)
        highest = max((int(i.max()) for i in indices if i.size), default=0)
        if lowest >= 0 and highest < window:
            return None
        return (
            f"the tile from output {self.out_origin} reads inputs {self.in_origin + lowest}.."
            f"{self.in_origin + highest}, outside its window {self.in_origin}.."
            f"{self.in_origin + window - 1}"
        )


def resize_linear(
    values: np.ndarray,
    axes: Sequence[int],
    scales: Sequence[float],
    mode: str,
    out_sizes: Sequence[int],
    bits: int,
    windows: Sequence[ResizeWindow] | None = None,
) -> np.ndarray:
    """Linear resize of integers along `axes` by `scales` (float32 values) in
    coordinate `mode`: each output is the sum of its 2^k neighbours' stored values
    times the products of their weights (`resize_coordinates`, in Q`bits`, summing to
    2^bits per axis), rounded half to even by `bits` per axis at the end; int64. The
    weights summing to one, a zero point passes through: values are taken as stored.

    With `windows` (one per axis), `values` is a window of a larger input and the
    result a tile of the larger output: each output reads what it reads in the whole
    resize, at its place in the window (the caller checks that the window holds it,
    `ResizeWindow.check`)."""
    result = np.asarray(values).astype(np.int64)
    one = 1 << bits
    for index, (axis, scale, size) in enumerate(zip(axes, scales, out_sizes, strict=True)):
        if windows is None:
            low, high, weight = resize_coordinates(mode, scale, result.shape[axis], size, bits)
        else:
            window = windows[index]
            low, high, weight = resize_coordinates(
                mode, scale, window.in_length, window.out_length, bits
            )
            part = window.part(size)
            low, high = low[part] - window.in_origin, high[part] - window.in_origin
            weight = weight[part]
        shape = [1] * result.ndim
        shape[axis] = size
        result = np.take(result, low, axis=axis) * (one - weight).reshape(shape) + np.take(
            result, high, axis=axis
        ) * weight.reshape(shape)
    if not axes:
        return result
    return _shift_half_to_even(result, np.asarray(bits * len(axes), dtype=np.int64))


# --------------------------------------------------------------------------------------
# Softmax

SOFTMAX_ONE = (1 << 15) - 1
"""The exp table's entry for the row's maximum: exp(0) in Q15 (an int16's largest)."""

SOFTMAX_FRACTION_BITS = 15
"""The fraction bits of the exp values and of the probabilities before the output
requantization (both int16 values: the int16 stage)."""


def softmax(
    stored: np.ndarray,
    table: np.ndarray,
    multiplier: int,
    shift: int,
    zero_point: int,
    clamp_min: int,
    clamp_max: int,
    mask: np.ndarray | None = None,
) -> np.ndarray:
    """The integer softmax of 8- or 16-bit values over the last axis, as int64.

    In the style of TFLite's and CMSIS-NN's int8 softmax (exp through a table, an
    integer sum and reciprocal), each row of the last axis:

        d = max(x) - x                      the distance from the row's maximum, 0..255
        e = table[d]                        exp(-s_in * d) in Q15, 0..32767 (int16)
                                            (16-bit values: d in 0..65535, e interpolated
                                            in a 513-entry table, `interpolated_lookup`
                                            of d - 2^15)
        S = sum(e)                          int32 (at most 65536 entries a row)
        n = bit_length(S)                   S in [2^(n-1), 2^n)
        R = floor(2^(n + 15) / S)           the reciprocal, R in (2^15, 2^16]
        p = (e * R + 2^(n - 1)) >> n        the probability e / S in Q15 (int16)
        out = requantize(p, multiplier, shift, zero_point, clamp_min, clamp_max)

    with `requantize` the rounding rule of every integer op, its multiplier that of
    2^-15 / s_out. `e * R` stays below 2^31, so every product fits int32 but the
    output stage's 64-bit one.

    With a `mask` (nonzero where an element is left out, broadcasting to `stored`), the
    maximum and the sum run over the other elements and a masked element's e is 0:
    its probability is 0, its output the zero point. A row masked entirely has S = 0
    and every p = 0.
    """
    values = np.asarray(stored).astype(np.int64)
    if values.size == 0:
        return values
    entries = np.asarray(table, dtype=np.int64)
    masked = None if mask is None else np.broadcast_to(np.asarray(mask) != 0, values.shape)
    kept = values if masked is None else np.where(masked, np.iinfo(np.int64).min, values)
    peak = kept.max(axis=-1, keepdims=True)
    if masked is not None:
        peak = np.where(
            masked.all(axis=-1, keepdims=True), values.max(axis=-1, keepdims=True), peak
        )
    if entries.size == LUT16_ENTRIES:  # 16-bit values: e interpolated, every 128 steps
        distance = np.clip(peak - values, 0, (1 << 16) - 1)
        exps = interpolated_lookup(distance - (1 << 15), entries)
    else:
        exps = entries[np.clip(peak - values, 0, entries.size - 1)]
    if masked is not None:
        exps = np.where(masked, 0, exps)
    total = exps.sum(axis=-1, keepdims=True)
    total = np.maximum(total, 1)  # a row masked entirely: every e is 0, and so every p
    # bit_length of each sum, exactly: frexp of a float64 holding an integer below 2^53.
    bits = np.frexp(total.astype(np.float64))[1].astype(np.int64)
    reciprocal = np.left_shift(np.int64(1), bits + SOFTMAX_FRACTION_BITS) // total
    probability = np.right_shift(exps * reciprocal + np.left_shift(np.int64(1), bits - 1), bits)
    return requantize(probability, multiplier, shift, zero_point, clamp_min, clamp_max)


def float_table_softmax(
    stored: np.ndarray,
    table: np.ndarray,
    scale: float,
    zero_point: int,
    clamp_min: int,
    clamp_max: int,
) -> np.ndarray:
    """TFLite's int8 softmax as its x86 and non-clang ARM builds compute it, in float32,
    over the last axis, as int64.

    `table` holds 256 float32 values, table[d] = exp(-beta * s_in * d), which TFLite
    computes at prepare time (`PopulateSoftmaxLookupTable`). Each row of stored values:

        d_j = max(x) - x_j                   0..255
        S = ((e_0 + e_1) + e_2) + ...        e_j = table[d_j], float32, summed in order
        r = 1 / (S * scale)                  float32 (scale: the output's, 1/256)
        out_j = clamp(round_half_away(e_j * r) + zero_point)

    every operation a float32 one, rounded to nearest even (IEEE), and the sum in the
    row's order: `optimized_ops::Softmax`, whose loops no compiler may reorder without
    -ffast-math.
    """
    values = np.asarray(stored).astype(np.int64)
    if values.size == 0:
        return values
    entries = np.asarray(table, dtype=np.float32)
    distance = np.clip(values.max(axis=-1, keepdims=True) - values, 0, entries.size - 1)
    exps = entries[distance]
    # np.cumsum adds in order, in float32 (np.sum would add pairwise).
    total = np.cumsum(exps, axis=-1, dtype=np.float32)[..., -1:]
    reciprocal = np.float32(1.0) / (total * np.float32(scale))
    probability = (exps * reciprocal).astype(np.float64)  # float32 products, exact in float64
    rounded = np.floor(np.abs(probability) + 0.5) * np.sign(probability)  # std::round
    return np.clip(rounded.astype(np.int64) + zero_point, clamp_min, clamp_max)


# --------------------------------------------------------------------------------------
# Layer normalization

LAYER_NORM_FRACTION_BITS = {8: 11, 16: 18}
"""F, by the values' bits: the normalized values z = (x - mean) / std are computed in
Q11 for 8-bit values, Q18 for 16-bit ones (a 64th of a 16-bit output step when the
output spans +-8)."""

LAYER_NORM_SQRT_BITS = 8
"""G: the square root is taken of t * 2^(2G), so that it keeps G fraction bits (fewer
when t is so large that t * 2^(2G) would reach 2^62; such a root has 23 bits or more)."""

LAYER_NORM_WEIGHT_BITS = {8: 11, 16: 20}
"""The per-channel weights gamma * 2^Q stay below 2^11 in magnitude for 8-bit values
(z * w fits 30 bits, the accumulator int32), below 2^20 for 16-bit ones (z * w fits 46
bits of the wide accumulator; gamma keeps 20 bits, so that its rounding stays below an
output step)."""

LAYER_NORM_BIAS_BITS = {8: 29, 16: 44}
"""The per-channel biases beta * 2^(F + Q) stay below 2^29 in magnitude for 8-bit
values (the accumulator int32), below 2^44 for 16-bit ones (within 48 bits)."""

LAYER_NORM_MAX_AXIS = 1 << 15
"""The longest row: its sums of squares of centred 16-bit values times the row's length
stay below 2^61."""


def integer_sqrt(values: np.ndarray) -> np.ndarray:
    """floor(sqrt(v)) of non-negative int64 values below 2^62, exactly: the float64
    square root (correctly rounded, but of v rounded to 53 bits) corrected by one step
    either way."""
    values = np.asarray(values, dtype=np.int64)
    root = np.floor(np.sqrt(values.astype(np.float64))).astype(np.int64)
    for _ in range(2):
        root -= root * root > values
        root += (root + 1) * (root + 1) <= values
    return root


def layer_norm(
    stored: np.ndarray,
    input_zero_point: int,
    epsilon_term: int,
    weights: np.ndarray,
    biases: np.ndarray,
    multiplier: int,
    shift: int,
    zero_point: int,
    clamp_min: int,
    clamp_max: int,
    bits: int = 8,
) -> np.ndarray:
    """The integer layer normalization of 8- or 16-bit values over the last axis, as
    int64.

    Each row of n values, with integer statistics (F = 11 for 8-bit values, 18 for
    16-bit ones: `LAYER_NORM_FRACTION_BITS`; G = 8):

        c = x - z_x                              centred, |c| <= 255 (2^15: 16-bit
                                                 values are symmetric)
        S1 = sum(c), S2 = sum(c^2)               int32 (int64 for 16-bit), n <= 32768
        d = n * c - S1                           n * (c - mean)
        t = n * S2 - S1^2 + epsilon_term         n^2 * (var + eps / s_x^2), int64
        g = min(G, (62 - bit_length(t)) // 2)    G, but for a t of more than 46 bits
        r = isqrt(t * 2^(2g))                    floor(2^g * sqrt(t)), t * 2^(2g) < 2^62
        z = round(d * 2^(F + g) / r)             (x - mean) / std in QF, ties away from 0
        acc = z * weights[j] + biases[j]         int32 (48 bits for 16-bit), per channel j
        out = requantize(acc, multiplier, shift, zero_point, clamp_min, clamp_max)

    `weights` are gamma * 2^Q and `biases` beta * 2^(F + Q), so that acc is
    (z * gamma + beta) * 2^(F + Q) and the multiplier that of 2^-(F + Q) / s_out
    (irc/quantize/scheme.py's `layer_norm_parameters`). A row of equal values with no
    epsilon term (t = 0) normalizes to z = 0. The bounds: |z| < sqrt(n) * 2^F, so with
    |weights| < 2^11 and |biases| < 2^29 (8-bit) acc fits int32, with 2^20 and 2^44
    (16-bit) 47 bits, requantized as a wide accumulator; |d| * 2^(F + G) < 2^58.
    """
    fraction = LAYER_NORM_FRACTION_BITS[bits]
    values = np.asarray(stored).astype(np.int64) - int(input_zero_point)
    if values.size == 0:
        return values
    count = values.shape[-1]
    first = values.sum(axis=-1, keepdims=True)
    second = (values * values).sum(axis=-1, keepdims=True)
    centred = count * values - first
    spread = count * second - first * first + int(epsilon_term)
    # bit_length(t), exactly: frexp of t's float64, one less where t rounded up to 2^k.
    length = np.frexp(spread.astype(np.float64))[1].astype(np.int64)
    length -= (length > 0) & (spread < np.left_shift(np.int64(1), np.maximum(length - 1, 0)))
    root_bits = np.minimum(LAYER_NORM_SQRT_BITS, (62 - length) // 2)
    root = integer_sqrt(np.left_shift(spread, 2 * root_bits))
    numerator = np.left_shift(np.abs(centred), fraction + root_bits)
    safe = np.maximum(root, 1)
    normalized = np.where(root > 0, np.sign(centred) * ((2 * numerator + safe) // (2 * safe)), 0)
    accumulator = normalized * np.asarray(weights, dtype=np.int64) + np.asarray(
        biases, dtype=np.int64
    )
    return requantize(
        accumulator, multiplier, shift, zero_point, clamp_min, clamp_max, wide=bits == 16
    )


# --------------------------------------------------------------------------------------
# Local response normalization

LRN_SEGMENT_BITS = {8: 3, 16: 6}
"""An LRN's table has 2^3 = 8 entries per octave of the window sum of squares for
8-bit values, 2^6 = 64 for 16-bit ones (whose outputs have 256 times finer steps)."""

LRN_OCTAVES = {8: 28, 16: 43}
"""The octaves of window sums an LRN's table spans, s in [1, 2^28) for 8-bit values
and [1, 2^43) for 16-bit ones: windows of up to `LRN_MAX_SIZE` squares of at most
255^2 and 2^30."""

LRN_FRACTION_BITS = 30
"""The table's entries are (bias + k * s)^-beta in Q30 of its largest value."""

LRN_ONE = 1 << LRN_FRACTION_BITS
"""The largest entry of an LRN's table."""

LRN_MAX_SIZE = 1 << 12
"""The widest channel window."""

LRN_RANGE_BITS = {8: 22, 16: 14}
"""How many octaves the function may fall over the window sums an LRN can have: its
smallest entry keeps at least 8 bits (16 for 16-bit values) of the Q30 scale. A
steeper one (a bias near 0) is left in float by the lowering."""

LRN_MANTISSA_BITS = 18
"""The fraction bits of a window sum within its octave (u * 2^18 < 2^61)."""


def lrn_table_entries(bits: int) -> int:
    """The entries of the table of an LRN of `bits`-bit values: one at each segment's
    start, and one at the end of the last octave (225 for 8-bit values, 2753 for
    16-bit ones)."""
    return (LRN_OCTAVES[bits] << LRN_SEGMENT_BITS[bits]) + 1


def lrn(
    stored: np.ndarray,
    input_zero_point: int,
    size: int,
    table: np.ndarray,
    multiplier: int,
    shift: int,
    zero_point: int,
    clamp_min: int,
    clamp_max: int,
    bits: int = 8,
) -> np.ndarray:
    """The integer local response normalization of 8- or 16-bit values across the
    last axis (the channels), as int64.

    ONNX's LRN is x / (bias + alpha / size * sum of x^2 over a window of `size`
    channels)^beta; in integers, each value at channel j:

        c = x - z_x                             centred, |c| <= 255 (2^15 for
                                                symmetric 16-bit values)
        s = sum(c_i^2),                         the window's sum of squares, int64,
            i in [j - (size-1)//2, j + size//2] s < 2^28 (2^43 for 16-bit values;
            within the channels                 size <= 4096)
        u = max(s, 1), o = bit_length(u) - 1    u's octave: u in [2^o, 2^(o+1))
        m = ((u << 18) >> o) - 2^18             u's place in its octave, Q18
        i = (o << B) + (m >> P), p = m & (2^P - 1)
                                                the segment (2^B an octave, B = 3 for
                                                8-bit values, 6 for 16-bit ones; P =
                                                18 - B) and the place in it, QP
        f = table[i] + round_half_even((table[i+1] - table[i]) * p / 2^P)
                                                (bias + k * s)^-beta in Q30 of the
                                                table's largest value
        acc = c * f                             a wide accumulator, |acc| < 2^46
        out = requantize(acc, multiplier, shift, zero_point, clamp_min, clamp_max, wide)

    with k = alpha / size * s_x^2. Table entry i = (o << B) + j holds the function at
    s = 2^o * (1 + j / 2^B), so the interpolation is linear in s within each segment of
    an octave, whatever bias and alpha make of the function's steepness (a sum of 0
    has c = 0: its output is the zero point). irc/quantize/scheme.py's
    `lrn_parameters` makes the table and the multiplier of s_x * f(1) / (2^30 *
    s_out).
    """
    values = np.asarray(stored).astype(np.int64) - int(input_zero_point)
    if values.size == 0:
        return values
    before, after = (size - 1) // 2, size // 2
    widths = [(0, 0)] * (values.ndim - 1) + [(before + 1, after)]
    # Window sums by a running sum: the sum up to the window's end less the sum
    # before its start (exact in int64).
    running = np.cumsum(np.pad(values * values, widths), axis=-1)
    channels = values.shape[-1]
    sums = np.maximum(running[..., size : size + channels] - running[..., :channels], 1)
    # bit_length - 1, exactly: frexp of a float64 holding an integer below 2^53.
    octave = np.frexp(sums.astype(np.float64))[1].astype(np.int64) - 1
    mantissa = np.right_shift(np.left_shift(sums, LRN_MANTISSA_BITS), octave)
    mantissa -= 1 << LRN_MANTISSA_BITS
    segment_bits = LRN_SEGMENT_BITS[bits]
    place_bits = LRN_MANTISSA_BITS - segment_bits
    index = np.left_shift(octave, segment_bits) + np.right_shift(mantissa, place_bits)
    place = np.bitwise_and(mantissa, (1 << place_bits) - 1)
    entries = np.asarray(table, dtype=np.int64)
    base = entries[index]
    factor = base + _shift_half_to_even(
        (entries[index + 1] - base) * place, np.asarray(place_bits, dtype=np.int64)
    )
    return requantize(
        values * factor, multiplier, shift, zero_point, clamp_min, clamp_max, wide=True
    )
