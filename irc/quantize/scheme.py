"""The int8 quantization scheme: scales and zero points, and the parameters of integer ops.

The integer ops' arithmetic, the requantization of an int32 accumulator by a
fixed-point multiplier and shift with its rounding rule, is irc/ir/fixed_point.py's;
this module chooses the scales and zero points, and from them the multipliers.

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

from collections.abc import Callable, Sequence

import numpy as np

from irc.dialects.quant import UniformQuantizedType, full_range
from irc.ir.fixed_point import (
    ADD_LEFT_SHIFT,
    accumulator_bounds,
    check_wide_multiplier,
    quantize_multiplier,
    quantize_multipliers,
)

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


def symmetric_activation_type(low: float, high: float, bits: int = 16) -> UniformQuantizedType:
    """The per-tensor symmetric type of a 16-bit activation over [low, high] (TFLite's
    int16 activations): zero point 0, scale = max(|low|, |high|) / (2^(bits-1) - 1)
    in float64 stored as float32, over the full signed storage range. An empty range
    gets scale 1."""
    qmax = (1 << (bits - 1)) - 1
    peak = max(abs(float(low)), abs(float(high)))
    scale = peak / qmax
    if scale < np.finfo(np.float32).tiny:
        scale = 1.0
    return UniformQuantizedType.make(float(np.float32(scale)), 0, bits=bits, signed=True)


WEIGHT_RANGE = (-127, 127)
"""The narrow int8 range of symmetric weights (so -w is always representable)."""


def weight_scales(weights: np.ndarray, axis: int = 0) -> np.ndarray:
    """Per-channel symmetric scales: max|w| / 127 over each slice along `axis`, as float32.

    A channel whose weights are all zero gets scale 1. A large weight's channels are
    taken a slice at a time (`irc.interp.quant.CHUNK_ELEMENTS`): |w| is a copy.
    """
    from irc.interp.quant import chunk_indices

    weights = np.asarray(weights, dtype=np.float32)
    others = tuple(a for a in range(weights.ndim) if a != axis)
    indices = chunk_indices(weights.shape, axis)
    if len(indices) > 1:
        peaks = np.concatenate([np.abs(weights[index]).max(axis=others) for index in indices])
    else:
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
    bias: np.ndarray,
    input_scale: float,
    weight_scales: Sequence[float] | np.ndarray,
    bits: int = 32,
) -> np.ndarray:
    """int32 bias: round_half_even(b / (s_in * s_w)) in float32, saturated to int32;
    with `bits` 64 (the bias of a 16-bit input), int64 saturated to the 48-bit range
    of the wide accumulator."""
    scales = bias_scales(input_scale, weight_scales)
    quotient = np.asarray(bias, dtype=np.float32) / scales
    low, high = accumulator_bounds(wide=bits == 64)
    stored = np.clip(np.round(quotient.astype(np.float64)), low, high)
    return stored.astype(np.int64 if bits == 64 else np.int32)


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


def build_lut16(
    function: Callable[[np.ndarray], np.ndarray],
    input_element: UniformQuantizedType,
    output_element: UniformQuantizedType,
) -> np.ndarray:
    """The 513-entry table of a 16-bit `qnn.lut` computing `function` on symmetric
    int16 values (`fixed_point.interpolated_lookup` reads it), as TFLite's `gen_lut`
    builds its int16 tables.

    Entry i samples `function` at the stored input x_i = -32768 + 128 i (the last one,
    x_512 = 32768, just past the range, so that every step interpolates between its
    own ends), in float32 as `quant.dcast` gives it. Interpolation errs most at a
    step's midpoint: each entry is lowered by half the error there, round((interp -
    exact) / 2), which splits the error between the sample and the midpoint (TFLite's
    bias). Values are in output steps (x / s_out), rounded half to even; NaN becomes 0
    and infinities saturate, as `quant.qcast` does.
    """
    from irc.ir.fixed_point import LUT16_ENTRIES, LUT16_STEP_BITS

    for element, what in ((input_element, "input"), (output_element, "output")):
        if element.storage_bits.data != 16 or any(element.zero_point_values):
            raise ValueError(f"a 16-bit lookup table maps symmetric int16 values ({what})")
    step = 1 << LUT16_STEP_BITS
    starts = np.arange(LUT16_ENTRIES, dtype=np.float64) * step - (1 << 15)
    points = np.concatenate([starts, starts[:-1] + step / 2])
    real = (points * float(input_element.scale_values[0])).astype(np.float32)
    with np.errstate(all="ignore"):
        values = np.asarray(function(real), dtype=np.float64) / float(
            output_element.scale_values[0]
        )
    values = np.where(np.isnan(values), 0.0, values)
    low, high = output_element.storage_range
    values = np.clip(values, low - 1.0, high + 1.0)  # infinities, before rounding
    samples, midpoints = values[:LUT16_ENTRIES], values[LUT16_ENTRIES:]
    return _midpoint_corrected(samples, midpoints, low, high)


def _midpoint_corrected(
    samples: np.ndarray, midpoints: np.ndarray, low: int, high: int
) -> np.ndarray:
    """The entries of an interpolated table from the function's exact values at the
    steps' starts (`samples`, one more than the steps) and midpoints: each sample
    rounded, less half the interpolation's rounded error at its step's midpoint
    (TFLite's bias), clamped to [low, high]; int64."""
    sampled = np.rint(samples)
    interpolated = np.rint((samples[1:] + sampled[:-1]) / 2)
    bias = np.rint((interpolated - np.rint(midpoints)) / 2)
    table = sampled.copy()
    table[:-1] -= bias
    return np.clip(table, low, high).astype(np.int64)


def softmax_parameters(
    input_element: UniformQuantizedType, output_element: UniformQuantizedType
) -> dict[str, object]:
    """The table and output multiplier of a `qnn.softmax` (irc/ir/fixed_point.py's
    `softmax`): entry d of the table is round(32767 * exp(-s_in * d)), the exp of a
    value d input steps below its row's maximum in Q15, computed with `math.exp` (the
    same on every CPU, unlike numpy's vectorised exp); the multiplier takes a Q15
    probability to the output's scale."""
    import math

    from irc.ir.fixed_point import (
        LUT16_ENTRIES,
        LUT16_STEP_BITS,
        SOFTMAX_FRACTION_BITS,
        SOFTMAX_ONE,
    )

    scale = float(input_element.scale_values[0])
    if input_element.storage_bits.data == 16:
        # 16-bit values: an entry every 128 steps of d, each (but the first, exp(0))
        # less half the error of the interpolation at its step's midpoint (as
        # `build_lut16`).
        step = 1 << LUT16_STEP_BITS
        samples = np.array(
            [SOFTMAX_ONE * math.exp(-scale * step * index) for index in range(LUT16_ENTRIES)]
        )
        midpoints = np.array(
            [
                SOFTMAX_ONE * math.exp(-scale * step * (index + 0.5))
                for index in range(LUT16_ENTRIES - 1)
            ]
        )
        table = [int(entry) for entry in _midpoint_corrected(samples, midpoints, 0, SOFTMAX_ONE)]
        table[0] = SOFTMAX_ONE  # the row's maximum: exp(0), exactly
    else:
        table = [round(SOFTMAX_ONE * math.exp(-scale * distance)) for distance in range(256)]
    real = 2.0**-SOFTMAX_FRACTION_BITS / float(output_element.scale_values[0])
    multiplier, shift = quantize_multiplier(real)
    return {"table": table, "multiplier": multiplier, "shift": shift}


def layer_norm_parameters(
    input_element: UniformQuantizedType,
    output_element: UniformQuantizedType,
    gamma: np.ndarray,
    beta: np.ndarray,
    epsilon: float,
) -> dict[str, object]:
    """The properties of a `qnn.layer_norm` over rows of `len(gamma)` values
    (irc/ir/fixed_point.py's `layer_norm`): the epsilon term round(n^2 * eps / s_x^2),
    the weights gamma * 2^Q and biases beta * 2^(F + Q) with the largest Q that keeps
    every weight below 2^11 and every bias below 2^29 in magnitude (8-bit values, F =
    11), below 2^20 and 2^44 (16-bit, F = 18), and the multiplier of 2^-(F + Q) /
    s_out."""
    from irc.ir.fixed_point import (
        LAYER_NORM_BIAS_BITS,
        LAYER_NORM_FRACTION_BITS,
        LAYER_NORM_WEIGHT_BITS,
    )

    bits = input_element.storage_bits.data
    fraction = LAYER_NORM_FRACTION_BITS[bits]
    gamma = np.asarray(gamma, dtype=np.float64).reshape(-1)
    beta = np.asarray(beta, dtype=np.float64).reshape(-1)
    count = gamma.size
    input_scale = float(input_element.scale_values[0])
    epsilon_term = min(round(count * count * float(epsilon) / input_scale**2), 1 << 46)
    largest_gamma = float(np.max(np.abs(gamma))) if count else 0.0
    largest_beta = float(np.max(np.abs(beta))) if beta.size else 0.0
    q = 30
    if largest_gamma > 0:
        weight_bound = (1 << LAYER_NORM_WEIGHT_BITS[bits]) - 1
        q = min(q, int(np.floor(np.log2(weight_bound / largest_gamma))))
    if largest_beta > 0:
        bias_bound = (1 << LAYER_NORM_BIAS_BITS[bits]) - 1
        q = min(q, int(np.floor(np.log2(bias_bound / largest_beta))) - fraction)
    weights = np.rint(gamma * 2.0**q).astype(np.int64)
    biases = np.rint(beta * 2.0 ** (fraction + q)).astype(np.int64)
    real = 2.0 ** -(fraction + q) / float(output_element.scale_values[0])
    multiplier, shift = quantize_multiplier(real)
    return {
        "epsilon_term": int(epsilon_term),
        "weights": [int(w) for w in weights],
        "biases": [int(b) for b in biases],
        "multiplier": multiplier,
        "shift": shift,
    }


def lrn_parameters(
    input_element: UniformQuantizedType,
    output_element: UniformQuantizedType,
    size: int,
    alpha: float,
    beta: float,
    bias: float,
) -> dict[str, object]:
    """The table and output multiplier of a `qnn.lrn` (irc/ir/fixed_point.py's
    `lrn`): entry i = (o << B) + j holds f(2^o * (1 + j / 2^B)) (B = 3 for 8-bit values,
    6 for 16-bit ones) for f(s) = (bias + alpha / size * s_x^2 * s)^-beta, in Q30 of
    its largest value f(1), each entry less half the
    interpolation's error at its segment's midpoint (as `build_lut16`), computed with
    `math.pow` (the same on every CPU); the multiplier is that of s_x * f(1) / (2^30 *
    s_out). Raises ValueError unless alpha, beta and bias are non-negative and f(1)
    is finite (irc's integer LRN normalizes: it divides by a sum that grows with s),
    when f falls by more than 2^`LRN_RANGE_BITS` over the possible window sums (its
    entries would lose the bits that the output steps need), and when the multiplier
    cannot requantize a wide accumulator."""
    import math

    from irc.ir.fixed_point import LRN_ONE, LRN_RANGE_BITS, LRN_SEGMENT_BITS, lrn_table_entries

    input_scale = float(input_element.scale_values[0])
    k = alpha / size * input_scale * input_scale
    if not (alpha >= 0 and beta >= 0 and bias >= 0 and bias + k > 0):
        raise ValueError(
            f"alpha {alpha}, beta {beta} and bias {bias}: the integer LRN takes non-negative "
            "ones with a positive bias + alpha / size * s_x^2"
        )

    bits = input_element.storage_bits.data
    segments = 1 << LRN_SEGMENT_BITS[bits]
    entries = lrn_table_entries(bits)

    def sum_at(position: int) -> float:
        # The window sum at a place in the table: `segments` an octave.
        octave, segment = divmod(position, segments)
        return math.ldexp(1.0 + segment / segments, octave)

    def function(s: float) -> float:
        return math.pow(bias + k * s, -beta)

    low, high = input_element.storage_range
    zero_point = int(input_element.zero_point_values[0])
    largest_sum = size * max(high - zero_point, zero_point - low) ** 2
    fall = function(1.0) / function(float(largest_sum))
    if fall > 2.0 ** LRN_RANGE_BITS[bits]:
        raise ValueError(
            f"its function falls by a factor of {fall:.3g} over the window sums (bias "
            f"{bias}): more than the 2^{LRN_RANGE_BITS[bits]} the table's Q30 entries resolve"
        )
    scale = LRN_ONE / function(1.0)  # f decreases: its largest value is at s = 1
    samples = np.array([scale * function(sum_at(i)) for i in range(entries)])
    midpoints = np.array(
        [scale * function((sum_at(i) + sum_at(i + 1)) / 2) for i in range(entries - 1)]
    )
    table = _midpoint_corrected(samples, midpoints, 0, LRN_ONE)
    real = input_scale / (scale * float(output_element.scale_values[0]))
    multiplier, shift = quantize_multiplier(real)
    problem = check_wide_multiplier(multiplier, shift)
    if problem is not None:
        raise ValueError(f"its output multiplier {real:.3g}: {problem}")
    return {"table": [int(entry) for entry in table], "multiplier": multiplier, "shift": shift}
