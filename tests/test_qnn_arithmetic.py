"""The requantization arithmetic (irc/ir/fixed_point.py) and the scheme's parameters
(irc/quantize/scheme.py) against exact Python ints.

The reference for every rounding is the exact rational computed with `fractions`:
round_half_even(q) = round(q), Python's rounding of a Fraction (ties to the even
integer).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from irc.dialects.quant import UniformQuantizedType
from irc.interp.quant import dequantize, quantize
from irc.ir import fixed_point
from irc.quantize import scheme

RNG = np.random.default_rng(2024)


def round_half_even(value: Fraction) -> int:
    """The exact reference rounding: ties to the even integer."""
    return round(value)


def exact_multiply(accumulator: int, multiplier: int, shift: int) -> int:
    return round_half_even(Fraction(accumulator * multiplier, 2 ** (31 + shift)))


# --------------------------------------------------------------------------------------
# quantize_multiplier


def test_powers_of_two_are_exact() -> None:
    assert fixed_point.quantize_multiplier(0.5) == (1 << 30, 0)
    assert fixed_point.quantize_multiplier(1.0) == (1 << 30, -1)
    assert fixed_point.quantize_multiplier(0.25) == (1 << 30, 1)
    assert fixed_point.quantize_multiplier(2.0**-32) == (1 << 30, 31)
    assert fixed_point.quantize_multiplier(2.0**29) == (1 << 30, -30)


def test_multiplier_at_least_one_has_a_negative_shift() -> None:
    multiplier, shift = fixed_point.quantize_multiplier(3.0)
    assert (multiplier, shift) == (3 << 29, -2)
    assert fixed_point.multiplier_value(multiplier, shift) == 3.0
    accumulators = np.array([-5, -1, 0, 7, 100_000])
    assert fixed_point.fixed_point_multiply(accumulators, multiplier, shift).tolist() == [
        -15,
        -3,
        0,
        21,
        300_000,
    ]


def test_rounding_up_to_two_to_the_31_renormalizes() -> None:
    # 1 - 2^-40 rounds to M = 2^31, which is renormalized to 2^30 with one shift less.
    multiplier, shift = fixed_point.quantize_multiplier(1.0 - 2.0**-40)
    assert (multiplier, shift) == (1 << 30, -1)


def test_multiplier_error_is_below_two_to_the_minus_31() -> None:
    reals = np.exp2(RNG.uniform(-32, 30, size=20_000))
    worst = 0.0
    for real in reals:
        multiplier, shift = fixed_point.quantize_multiplier(float(real))
        assert fixed_point.MULTIPLIER_MIN <= multiplier <= fixed_point.MULTIPLIER_MAX
        assert fixed_point.SHIFT_MIN <= shift <= fixed_point.SHIFT_MAX
        error = abs(fixed_point.multiplier_value(multiplier, shift) - real) / real
        worst = max(worst, error)
    assert worst <= 2.0**-31
    assert worst > 2.0**-34  # the bound is nearly reached: the test measures something


def test_tiny_multipliers_give_zero_for_every_int32() -> None:
    multiplier, shift = fixed_point.quantize_multiplier(1e-12)
    assert (multiplier, shift) == (1 << 30, 31)
    extremes = np.array([fixed_point.INT32_MIN, -1, 0, 1, fixed_point.INT32_MAX])
    assert fixed_point.fixed_point_multiply(extremes, multiplier, shift).tolist() == [0] * 5
    assert fixed_point.quantize_multiplier(0.0) == (1 << 30, 31)


@pytest.mark.parametrize("bad", [-0.5, float("nan"), float("inf"), 2.0**30, 1e12])
def test_unrepresentable_multipliers_are_rejected(bad: float) -> None:
    with pytest.raises(ValueError):
        fixed_point.quantize_multiplier(bad)


def test_check_multiplier_names_the_problem() -> None:
    assert fixed_point.check_multiplier(1 << 30, 0) is None
    assert "outside [2^30, 2^31)" in (fixed_point.check_multiplier((1 << 30) - 1, 0) or "")
    assert "outside [2^30, 2^31)" in (fixed_point.check_multiplier(1 << 31, 0) or "")
    assert "shift 32" in (fixed_point.check_multiplier(1 << 30, 32) or "")
    assert "shift -31" in (fixed_point.check_multiplier(1 << 30, -31) or "")


# --------------------------------------------------------------------------------------
# fixed_point_multiply and requantize


def test_ties_round_to_even() -> None:
    half = fixed_point.quantize_multiplier(0.5)
    accumulators = np.array([-7, -5, -3, -1, 1, 3, 5, 7])
    # -3.5 -> -4, -2.5 -> -2, -1.5 -> -2, -0.5 -> 0, 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, 3.5 -> 4
    assert fixed_point.fixed_point_multiply(accumulators, *half).tolist() == [
        -4,
        -2,
        -2,
        0,
        0,
        2,
        2,
        4,
    ]
    quarter = fixed_point.quantize_multiplier(0.25)
    # -1.75 -> -2, -1.25 -> -1, -0.75 -> -1, -0.25 -> 0, 0.25 -> 0, 0.75 -> 1
    assert fixed_point.fixed_point_multiply(
        np.array([-7, -5, -3, -1, 1, 3]), *quarter
    ).tolist() == [
        -2,
        -1,
        -1,
        0,
        0,
        1,
    ]


def test_negative_accumulators_match_exact_rationals() -> None:
    accumulators = RNG.integers(-(1 << 20), 0, size=2000)
    multiplier, shift = fixed_point.quantize_multiplier(0.0123)
    ours = fixed_point.fixed_point_multiply(accumulators, multiplier, shift)
    expected = [exact_multiply(int(a), multiplier, shift) for a in accumulators]
    assert ours.tolist() == expected


def test_int64_arithmetic_is_exact_at_the_extremes() -> None:
    """acc * M + 2^(30 + s) never overflows int64, for every shift and int32 accumulator."""
    accumulators = np.array(
        [
            fixed_point.INT32_MIN,
            fixed_point.INT32_MIN + 1,
            -12345,
            -1,
            0,
            1,
            999_999,
            fixed_point.INT32_MAX,
        ]
    )
    for multiplier in (
        fixed_point.MULTIPLIER_MIN,
        fixed_point.MULTIPLIER_MIN + 12345,
        fixed_point.MULTIPLIER_MAX,
    ):
        for shift in range(fixed_point.SHIFT_MIN, fixed_point.SHIFT_MAX + 1):
            ours = fixed_point.fixed_point_multiply(accumulators, multiplier, shift)
            expected = [exact_multiply(int(a), multiplier, shift) for a in accumulators]
            assert ours.tolist() == expected, (multiplier, shift)


def test_random_parameters_match_exact_rationals() -> None:
    accumulators = RNG.integers(
        fixed_point.INT32_MIN, fixed_point.INT32_MAX, size=3000, endpoint=True
    )
    multipliers = RNG.integers(fixed_point.MULTIPLIER_MIN, fixed_point.MULTIPLIER_MAX, size=3000)
    shifts = RNG.integers(fixed_point.SHIFT_MIN, fixed_point.SHIFT_MAX, size=3000, endpoint=True)
    for a, m, s in zip(accumulators, multipliers, shifts):
        ours = fixed_point.fixed_point_multiply(np.array([a]), int(m), int(s))[0]
        assert ours == exact_multiply(int(a), int(m), int(s))


def test_requantize_adds_the_zero_point_and_saturates_at_both_ends() -> None:
    multiplier, shift = fixed_point.quantize_multiplier(0.125)  # exact, so ties are real ties
    accumulators = np.array([-100_000, -1000, -996, -4, 0, 3, 4, 12, 1000, 1040, 100_000])
    result = fixed_point.requantize(accumulators, multiplier, shift, -3, -128, 127)
    # acc / 8 rounded half to even, then -3, then clamped: -996 -> -124.5 -> -124 -> -127,
    # 4 -> 0.5 -> 0 -> -3, 12 -> 1.5 -> 2 -> -1
    assert result.tolist() == [-128, -128, -127, -3, -3, -3, -3, -1, 122, 127, 127]
    relu = fixed_point.requantize(accumulators, multiplier, shift, -3, -3, 100)
    assert relu.tolist() == [-3, -3, -3, -3, -3, -3, -3, -1, 100, 100, 100]


def test_a_multiplier_below_its_real_value_breaks_no_tie() -> None:
    # 0.1 is stored as M = 1717986918, just below 0.1 * 2^34, so 5 * 0.1 = 0.5 rounds to 0.
    multiplier, shift = fixed_point.quantize_multiplier(0.1)
    assert fixed_point.multiplier_value(multiplier, shift) < 0.1
    assert fixed_point.fixed_point_multiply(np.array([-5, 5, 15]), multiplier, shift).tolist() == [
        0,
        0,
        1,
    ]


def test_per_channel_requantization_along_an_axis() -> None:
    accumulators = RNG.integers(-(1 << 24), 1 << 24, size=(2, 3, 4, 5))
    reals = [0.002, 0.37, 1.7]
    multipliers, shifts = fixed_point.quantize_multipliers(reals)
    result = fixed_point.requantize(accumulators, multipliers, shifts, 5, -128, 127, axis=1)
    for channel in range(3):
        expected = [
            min(127, max(-128, exact_multiply(int(a), multipliers[channel], shifts[channel]) + 5))
            for a in accumulators[:, channel].ravel()
        ]
        assert result[:, channel].ravel().tolist() == expected


def test_requantization_is_within_one_of_the_real_product() -> None:
    """The only error beyond rounding comes from quantize_multiplier's 2^-31."""
    real = 0.000123456789
    multiplier, shift = fixed_point.quantize_multiplier(real)
    accumulators = RNG.integers(-(1 << 30), 1 << 30, size=20_000)
    ours = fixed_point.fixed_point_multiply(accumulators, multiplier, shift)
    exact = np.array([round_half_even(Fraction(int(a)) * Fraction(real)) for a in accumulators])
    differences = np.abs(ours - exact)
    assert differences.max() <= 1
    # |acc| * |m' - m| < 2^30 * 2^-31 * m is far below one unit, so almost all agree.
    assert np.mean(differences == 0) > 0.999


def test_accumulators_outside_int32_are_rejected() -> None:
    with pytest.raises(ValueError, match="int32"):
        fixed_point.fixed_point_multiply(np.array([1 << 31]), 1 << 30, 0)


# --------------------------------------------------------------------------------------
# Division with one rounding (average pooling)


def test_divide_round_is_one_exact_rounding() -> None:
    accumulators = RNG.integers(-(1 << 22), 1 << 22, size=4000)
    counts = RNG.integers(1, 3137, size=4000)
    cases = [
        (1 << 30, -1),
        fixed_point.quantize_multiplier(0.73),
        (1 << 30, 31),
        (fixed_point.MULTIPLIER_MAX, -30),
    ]
    for multiplier, shift in cases:
        ours = fixed_point.divide_round(accumulators, multiplier, shift, counts)
        expected = [
            round_half_even(Fraction(int(a) * multiplier, int(n) * 2 ** (31 + shift)))
            for a, n in zip(accumulators, counts)
        ]
        assert ours.tolist() == expected


def test_divide_round_ties() -> None:
    identity = fixed_point.IDENTITY_MULTIPLIER
    accumulators = np.array([-9, -3, -1, 1, 3, 9, 10])
    counts = np.array([2, 2, 2, 2, 2, 6, 4])
    # -4.5 -> -4, -1.5 -> -2, -0.5 -> 0, 0.5 -> 0, 1.5 -> 2, 1.5 -> 2, 2.5 -> 2
    assert fixed_point.divide_round(accumulators, *identity, counts).tolist() == [
        -4,
        -2,
        0,
        0,
        2,
        2,
        2,
    ]


# --------------------------------------------------------------------------------------
# Scales and zero points


def test_activation_parameters_match_onnxruntime() -> None:
    from onnxruntime.quantization.quant_utils import compute_scale_zp

    for _ in range(500):
        low, high = sorted(RNG.standard_normal(2).astype(np.float32) * RNG.uniform(0.01, 50))
        if RNG.random() < 0.2:
            low = np.float32(abs(low))  # all positive: the range is extended to 0
            high = np.float32(low + abs(high))
        zero_point, scale = compute_scale_zp(
            np.array(low, np.float32), np.array(high, np.float32), np.int8(-128), np.int8(127)
        )
        assert scheme.activation_parameters(float(low), float(high)) == (
            float(scale),
            int(zero_point),
        )


def test_activation_parameters_of_simple_ranges() -> None:
    assert scheme.activation_parameters(0.0, 2.55) == (np.float32(0.01), -128)
    scale, zero_point = scheme.activation_parameters(-1.0, 1.0)
    assert scale == np.float32(2 / 255) and zero_point == 0  # round(-128 + 127.5) = 0 (even)
    assert scheme.activation_parameters(0.0, 0.0) == (1.0, 0)
    element = scheme.activation_type(-6.0, 6.0)
    assert element.zero_point_values == [0] and not element.is_per_axis


def test_weights_are_symmetric_per_channel() -> None:
    weights = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
    weights[2] = 0.0
    stored, element = scheme.quantize_weights(weights, axis=0)
    assert stored.dtype == np.int8
    assert element.storage_range == (-127, 127) and element.quantized_axis == 0
    assert element.zero_point_values == [0, 0, 0, 0]
    assert element.scale_values[2] == 1.0
    for channel in (0, 1, 3):
        assert np.abs(stored[channel]).max() == 127
        assert element.scale_values[channel] == np.float32(np.abs(weights[channel]).max() / 127)
        error = np.abs(dequantize(stored, element)[channel] - weights[channel]).max()
        assert error <= element.scale_values[channel] / 2 * (1 + 1e-6)


def test_bias_is_int32_at_the_product_scale() -> None:
    bias = np.array([0.5, -0.25, 1e9, -1e9], np.float32)
    weight_scales = np.array([0.01, 0.02, 0.001, 0.001], np.float32)
    stored = scheme.quantize_bias(bias, 0.05, weight_scales)
    assert stored.dtype == np.int32
    assert stored[:2].tolist() == [1000, -250]
    assert stored[2:].tolist() == [fixed_point.INT32_MAX, fixed_point.INT32_MIN]  # saturated


def test_clamp_bounds_of_fused_activations() -> None:
    element = UniformQuantizedType.make(0.05, -10)
    assert scheme.clamp_bounds(element) == (-128, 127)
    assert scheme.clamp_bounds(element, 0.0) == (-10, 127)  # relu
    assert scheme.clamp_bounds(element, 0.0, 6.0) == (-10, 110)  # relu6: 6 / 0.05 - 10
    assert scheme.clamp_bounds(element, -100.0, 100.0) == (-128, 127)


def test_conv_output_multipliers() -> None:
    multipliers, shifts = scheme.output_multipliers(0.02, [0.01, 0.5], 0.1)
    reals = [fixed_point.multiplier_value(m, s) for m, s in zip(multipliers, shifts)]
    np.testing.assert_allclose(reals, [0.002, 0.1], rtol=1e-7)


def test_add_parameters_keep_intermediates_in_int32() -> None:
    params = scheme.add_parameters(0.1, 0.02, 0.05)
    lhs = fixed_point.multiplier_value(params["lhs_multiplier"], params["lhs_shift"])
    rhs = fixed_point.multiplier_value(params["rhs_multiplier"], params["rhs_shift"])
    out = fixed_point.multiplier_value(params["multiplier"], params["shift"])
    assert lhs == 0.5 and rhs == pytest.approx(0.1)
    # The three multipliers compose to the real rescaling of each input.
    assert lhs * out * 2**20 == pytest.approx(0.1 / 0.05)
    assert rhs * out * 2**20 == pytest.approx(0.02 / 0.05)


# --------------------------------------------------------------------------------------
# Lookup tables


def test_lut_reproduces_dequantize_function_quantize() -> None:
    input_element = UniformQuantizedType.make(0.05, 3)
    output_element = UniformQuantizedType.make(1 / 256, -128)

    def sigmoid(x: np.ndarray) -> np.ndarray:
        return (1 / (1 + np.exp(-x))).astype(np.float32)

    table = scheme.build_lut(sigmoid, input_element, output_element)
    assert table.shape == (256,)
    stored = np.arange(-128, 128, dtype=np.int8)
    expected = quantize(sigmoid(dequantize(stored, input_element)), output_element)
    assert table.tolist() == expected.astype(np.int64).tolist()
    assert table[0] == -128 and table[-1] == 127 and np.all(np.diff(table) >= 0)


def test_lut_of_unsigned_input() -> None:
    input_element = UniformQuantizedType.make(0.1, 128, signed=False)
    output_element = UniformQuantizedType.make(0.1, 0)
    table = scheme.build_lut(lambda x: np.maximum(x, 0), input_element, output_element)
    assert table[:129].tolist() == [0] * 129  # stored 0..128 are <= 0
    assert table[129:].tolist() == list(range(1, 128))


# --------------------------------------------------------------------------------------
# The integer softmax


def softmax_reference(row: list[int], table: list[int], multiplier: int, shift: int) -> list[int]:
    """fixed_point.softmax of one row, step by step in Python ints (its docstring)."""
    exps = [table[max(row) - value] for value in row]
    total = sum(exps)
    bits = total.bit_length()
    reciprocal = (1 << (bits + 15)) // total
    probabilities = [(e * reciprocal + (1 << (bits - 1))) >> bits for e in exps]
    return [exact_multiply(p, multiplier, shift) for p in probabilities]


def _softmax_case(signed: bool, input_scale: float, output_scale: float, output_zero: int):
    input_element = UniformQuantizedType.make(input_scale, 0, signed=signed)
    output_element = UniformQuantizedType.make(output_scale, output_zero, signed=True)
    parameters = scheme.softmax_parameters(input_element, output_element)
    return input_element, output_element, parameters


@pytest.mark.parametrize("length", [1, 3, 16, 257])
@pytest.mark.parametrize("signed", [True, False])
def test_softmax_is_its_documented_integer_steps(length: int, signed: bool) -> None:
    _, _, parameters = _softmax_case(signed, 0.07, 1 / 255, -128)
    table, multiplier, shift = parameters["table"], parameters["multiplier"], parameters["shift"]
    low, high = (-128, 127) if signed else (0, 255)
    rows = RNG.integers(low, high + 1, (40, length))
    rows[0] = low  # a uniform row
    got = fixed_point.softmax(rows, np.array(table), multiplier, shift, -128, -128, 127)
    for row, values in zip(rows.tolist(), got.tolist()):
        expected = softmax_reference(row, table, multiplier, shift)
        assert values == [min(127, max(-128, value - 128)) for value in expected]


@pytest.mark.parametrize(
    ("signed", "input_scale", "output_scale", "output_zero", "length"),
    [
        (True, 0.05, 1 / 255, -128, 16),  # attention scores over 16 tokens
        (True, 0.2, 1 / 256, -128, 10),  # logits of a classifier (TFLite's output type)
        (True, 0.02, 0.3 / 255, -128, 64),  # a calibrated range below 1
        (False, 0.1, 1 / 255, -128, 1000),  # a long row of uint8
    ],
)
def test_softmax_is_within_one_step_of_the_float_softmax(
    signed: bool, input_scale: float, output_scale: float, output_zero: int, length: int
) -> None:
    """Against softmax of the dequantized input in float64, quantized to the output:
    never more than one step off, and almost always exact."""
    input_element, _, parameters = _softmax_case(signed, input_scale, output_scale, output_zero)
    low, high = (-128, 127) if signed else (0, 255)
    stored = RNG.integers(low, high + 1, (500, length))
    got = fixed_point.softmax(
        stored,
        np.array(parameters["table"]),
        parameters["multiplier"],
        parameters["shift"],
        output_zero,
        -128,
        127,
    )
    real = dequantize(stored.astype(np.int8 if signed else np.uint8), input_element)
    exps = np.exp(real.astype(np.float64) - real.max(axis=-1, keepdims=True))
    probabilities = exps / exps.sum(axis=-1, keepdims=True)
    expected = np.clip(np.rint(probabilities / output_scale) + output_zero, -128, 127)
    difference = np.abs(got - expected)
    assert difference.max() <= 1
    assert np.mean(difference == 0) >= 0.99


@pytest.mark.parametrize("length", [4, 16, 33])
def test_masked_softmax_is_within_one_step_of_the_float_masked_softmax(length: int) -> None:
    """A causal mask (row i keeps elements 0..i, as an attention's): the masked
    elements are the output zero point (probability 0), the others within one step
    of the float softmax over the kept elements alone, which is what a -inf fill gives."""
    input_element, _, parameters = _softmax_case(True, 0.05, 1 / 255, -128)
    mask = np.triu(np.ones((length, length), dtype=np.int8), k=1)
    stored = RNG.integers(-128, 128, (30, length, length))
    got = fixed_point.softmax(
        stored,
        np.array(parameters["table"]),
        parameters["multiplier"],
        parameters["shift"],
        -128,
        -128,
        127,
        mask=mask,
    )
    assert np.all(got[:, mask == 1] == -128)
    real = dequantize(stored.astype(np.int8), input_element).astype(np.float64)
    filled = np.where(mask == 1, -np.inf, real)
    exps = np.exp(filled - filled.max(axis=-1, keepdims=True))
    probabilities = exps / exps.sum(axis=-1, keepdims=True)
    expected = np.clip(np.rint(probabilities * 255) - 128, -128, 127)
    difference = np.abs(got - expected)
    assert difference.max() <= 1
    assert np.mean(difference == 0) >= 0.99
    # The first row keeps one element: it is certain.
    assert np.all(got[:, 0, 0] == 127)


def test_masked_softmax_ignores_the_values_it_masks() -> None:
    """A masked element takes no part in the maximum or the sum: changing it changes
    nothing, even when it is the row's largest; a row masked entirely is all zero
    point (the sum is 0, every probability 0)."""
    _, _, parameters = _softmax_case(True, 0.1, 1 / 256, -128)
    table = np.array(parameters["table"])
    multiplier, shift = parameters["multiplier"], parameters["shift"]
    mask = np.array([[0, 0, 1, 1], [1, 1, 1, 1]], dtype=np.int8)
    low = np.array([[10, -20, -128, -128], [1, 2, 3, 4]])
    high = np.array([[10, -20, 127, 90], [50, 60, 70, 80]])
    first = fixed_point.softmax(low, table, multiplier, shift, -128, -128, 127, mask=mask)
    second = fixed_point.softmax(high, table, multiplier, shift, -128, -128, 127, mask=mask)
    assert first.tolist() == second.tolist()
    unmasked = fixed_point.softmax(low[:1, :2], table, multiplier, shift, -128, -128, 127)
    assert first[0, :2].tolist() == unmasked[0].tolist()
    assert first[0, 2:].tolist() == [-128, -128] and first[1].tolist() == [-128] * 4


def test_softmax_of_one_element_or_equal_elements() -> None:
    """One element is certain (1.0, saturated to the type's largest value); n equal
    elements share it evenly."""
    _, _, parameters = _softmax_case(True, 0.1, 1 / 256, -128)
    table = np.array(parameters["table"])
    multiplier, shift = parameters["multiplier"], parameters["shift"]
    one = fixed_point.softmax(np.array([[5]]), table, multiplier, shift, -128, -128, 127)
    assert one.tolist() == [[127]]
    even = fixed_point.softmax(np.full((1, 8), -3), table, multiplier, shift, -128, -128, 127)
    assert even.tolist() == [[256 // 8 - 128] * 8]  # 1/8 = 32 steps of 1/256


def test_softmax_table_is_the_same_on_every_cpu() -> None:
    """The table comes from math.exp (libm), not numpy's vectorised exp, whose last
    bit depends on the CPU's SIMD path: its entries are fixed integers."""
    _, _, parameters = _softmax_case(True, 0.1, 1 / 256, -128)
    assert parameters["table"][:6] == [32767, 29649, 26827, 24274, 21964, 19874]
    assert parameters["table"][-1] == 0 and len(parameters["table"]) == 256


# --------------------------------------------------------------------------------------
# The integer layer normalization


def layer_norm_reference(
    row: list[int], zero_point: int, parameters: dict, bits: int = 8
) -> list[int]:
    """fixed_point.layer_norm of one row, step by step in Python ints (its docstring)."""
    from math import isqrt

    fraction = fixed_point.LAYER_NORM_FRACTION_BITS[bits]
    centred = [value - zero_point for value in row]
    count, first = len(row), sum(centred)
    second = sum(c * c for c in centred)
    spread = count * second - first * first + parameters["epsilon_term"]
    root_bits = min(8, (62 - spread.bit_length()) // 2)
    root = isqrt(spread << (2 * root_bits))
    assert spread << (2 * root_bits) < 1 << 62
    out = []
    for c, weight, bias in zip(centred, parameters["weights"], parameters["biases"]):
        d = count * c - first
        if root == 0:
            z = 0
        else:
            magnitude = (2 * (abs(d) << (fraction + root_bits)) + root) // (2 * root)
            z = magnitude if d >= 0 else -magnitude
        if bits == 8:
            out.append(
                exact_multiply(z * weight + bias, parameters["multiplier"], parameters["shift"])
            )
        else:  # the wide accumulator: the 16-bit multiplier, half to even
            assert abs(z * weight + bias) < 1 << 47
            reduced = fixed_point.reduced_multiplier(parameters["multiplier"])
            value = Fraction((z * weight + bias) * reduced, 2 ** (15 + parameters["shift"]))
            out.append(round(value))  # Fraction rounds half to even
    return out


def _layer_norm_case(length: int, input_scale: float, output_scale: float, epsilon: float = 1e-5):
    rng = np.random.default_rng(length)
    input_element = UniformQuantizedType.make(input_scale, 3, signed=True)
    output_element = UniformQuantizedType.make(output_scale, -2, signed=True)
    gamma, beta = rng.uniform(0.3, 2.5, length), rng.uniform(-0.5, 0.5, length)
    parameters = scheme.layer_norm_parameters(input_element, output_element, gamma, beta, epsilon)
    return input_element, gamma, beta, parameters


def _run_layer_norm(stored: np.ndarray, parameters: dict, bits: int = 8) -> np.ndarray:
    """fixed_point.layer_norm with the cases' zero points: 3 and -2 for 8-bit values, 0
    for 16-bit ones (symmetric)."""
    zero_points, (low, high) = ((3, -2), (-128, 127)) if bits == 8 else ((0, 0), (-32768, 32767))
    return fixed_point.layer_norm(
        stored,
        zero_points[0],
        parameters["epsilon_term"],
        np.array(parameters["weights"]),
        np.array(parameters["biases"]),
        parameters["multiplier"],
        parameters["shift"],
        zero_points[1],
        low,
        high,
        bits=bits,
    )


@pytest.mark.parametrize("length", [1, 5, 32, 300])
def test_layer_norm_is_its_documented_integer_steps(length: int) -> None:
    _, _, _, parameters = _layer_norm_case(length, 0.05, 4 / 255)
    rows = RNG.integers(-128, 128, (30, length))
    rows[0] = 7  # a constant row: only epsilon keeps the spread above 0
    got = _run_layer_norm(rows, parameters)
    for row, values in zip(rows.tolist(), got.tolist()):
        expected = layer_norm_reference(row, 3, parameters)
        assert values == [min(127, max(-128, value - 2)) for value in expected]
    # Without epsilon a constant row normalizes to 0: the output is beta alone.
    no_epsilon = dict(parameters, epsilon_term=0)
    flat = _run_layer_norm(np.full((1, length), 7), no_epsilon)
    assert flat.tolist() == [
        [min(127, max(-128, b - 2)) for b in layer_norm_reference([7] * length, 3, no_epsilon)]
    ]


@pytest.mark.parametrize(
    ("length", "input_scale", "output_scale"),
    [(32, 0.05, 4 / 255), (768, 0.02, 6 / 255), (16, 0.1, 3 / 255)],
)
def test_layer_norm_is_within_one_step_of_the_float_layer_norm(
    length: int, input_scale: float, output_scale: float
) -> None:
    """Against layer norm of the dequantized input in float64 (ONNX's definition),
    quantized to the output: never more than one step off, and mostly exact."""
    input_element, gamma, beta, parameters = _layer_norm_case(length, input_scale, output_scale)
    stored = RNG.integers(-128, 128, (300, length))
    got = _run_layer_norm(stored, parameters)
    real = dequantize(stored.astype(np.int8), input_element).astype(np.float64)
    mean = real.mean(axis=-1, keepdims=True)
    normalized = (real - mean) / np.sqrt(real.var(axis=-1, keepdims=True) + 1e-5)
    expected = np.clip(np.rint((normalized * gamma + beta) / output_scale) - 2, -128, 127)
    difference = np.abs(got - expected)
    assert difference.max() <= 1
    assert np.mean(difference == 0) >= 0.97


def _layer_norm16_case(length: int, output_scale: float) -> tuple[UniformQuantizedType, dict]:
    rng = np.random.default_rng(length)
    input_element = UniformQuantizedType.make(1 / 32767, bits=16)
    output_element = UniformQuantizedType.make(output_scale, bits=16)
    gamma, beta = rng.uniform(0.3, 2.5, length), rng.uniform(-0.5, 0.5, length)
    parameters = scheme.layer_norm_parameters(input_element, output_element, gamma, beta, 1e-5)
    return input_element, parameters


@pytest.mark.parametrize("length", [1, 7, 300, fixed_point.LAYER_NORM_MAX_AXIS])
def test_a_16_bit_layer_norm_is_its_documented_integer_steps(length: int) -> None:
    """16-bit values (Q18, the wide accumulator) against Python ints, with the rows
    whose spread needs fewer root bits: the longest row of the two extremes, whose
    t is near 2^60."""
    _, parameters = _layer_norm16_case(length, 6 / 32767)
    assert max(abs(w) for w in parameters["weights"]) < 1 << 20
    rows = RNG.integers(-32768, 32768, (3, length))
    rows[0] = 9  # only epsilon keeps the spread above 0
    rows[1, ::2], rows[1, 1::2] = -32768, 32767
    got = _run_layer_norm(rows, parameters, bits=16)
    for row, values in zip(rows.tolist(), got.tolist()):
        expected = layer_norm_reference(row, 0, parameters, bits=16)
        assert values == [min(32767, max(-32768, value)) for value in expected]


@pytest.mark.parametrize(("length", "output_scale"), [(6, 4 / 32767), (768, 5 / 32767)])
def test_a_16_bit_layer_norm_is_within_one_step_of_the_float_layer_norm(
    length: int, output_scale: float
) -> None:
    input_element, parameters = _layer_norm16_case(length, output_scale)
    rng = np.random.default_rng(7)
    stored = rng.integers(-32768, 32768, (2000 // length + 2, length))
    stored[0] //= 1000  # a row of small spread: the square root's fraction bits matter
    got = _run_layer_norm(stored, parameters, bits=16)
    real = stored * float(input_element.scale_values[0])
    normalized = (real - real.mean(axis=-1, keepdims=True)) / np.sqrt(
        real.var(axis=-1, keepdims=True) + 1e-5
    )
    rng = np.random.default_rng(length)
    gamma, beta = rng.uniform(0.3, 2.5, length), rng.uniform(-0.5, 0.5, length)
    expected = np.clip(np.rint((normalized * gamma + beta) / output_scale), -32768, 32767)
    difference = np.abs(got - expected)
    assert difference.max() <= 1
    assert np.mean(difference == 0) >= 0.85


def test_integer_sqrt_is_exact_where_float64_rounds() -> None:
    values = np.array([0, 1, 2, 3, 4, (1 << 52) + 1, (1 << 62) - 1, (3037000499**2) - 1])
    from math import isqrt

    assert fixed_point.integer_sqrt(values).tolist() == [isqrt(int(v)) for v in values]


def test_quantize_maps_nan_to_the_zero_point_and_infinities_to_the_ends() -> None:
    element = UniformQuantizedType.make(0.1, -7, signed=True)
    stored = quantize(np.array([np.nan, np.inf, -np.inf, -np.nan, 0.3], np.float32), element)
    assert stored.tolist() == [-7, 127, -128, -7, -4]
    # A lookup table of sqrt: the negative half of the input range is NaN.
    table = scheme.build_lut(np.sqrt, element, UniformQuantizedType.make(0.05, -128))
    assert table[:121].tolist() == [-128] * 121  # sqrt(x < 0) -> NaN -> 0.0 -> -128
    assert table[-1] == np.clip(round(np.sqrt(13.4) / 0.05) - 128, -128, 127)


# --------------------------------------------------------------------------------------
# Local response normalization

LRN_CASES = {
    # name: (input scale and zero point, output scale and zero point, size, alpha,
    # beta, bias)
    "alexnet": ((0.5, -128), (0.1, -128), 5, 1e-4, 0.75, 1.0),
    "small values": ((0.05, 0), (0.05, 0), 5, 1e-4, 0.75, 1.0),
    "strong": ((0.05, 3), (0.01, -2), 5, 1.0, 0.75, 1.0),
    "steep near 0": ((0.2, 3), (0.02, -2), 3, 2.0, 0.5, 0.1),
    "even window": ((0.2, 3), (0.02, -2), 4, 2.0, 0.5, 2.0),
    "no bias": ((0.1, 0), (0.05, 0), 3, 1.0, 1.0, 0.0),
}
"""8-bit cases (i8); their 16-bit forms (symmetric i16) have the same real ranges."""


def _lrn_case(name: str, bits: int) -> tuple[UniformQuantizedType, UniformQuantizedType, dict]:
    (s_in, z_in), (s_out, z_out), size, alpha, beta, bias = LRN_CASES[name]
    if bits == 16:  # the same real ranges in symmetric int16 (about 256 times finer)
        input_element = UniformQuantizedType.make(s_in * 128 / 32767, bits=16)
        output_element = UniformQuantizedType.make(s_out * 128 / 32767, bits=16)
    else:
        input_element = UniformQuantizedType.make(s_in, z_in, signed=True)
        output_element = UniformQuantizedType.make(s_out, z_out, signed=True)
    parameters = scheme.lrn_parameters(input_element, output_element, size, alpha, beta, bias)
    return input_element, output_element, parameters


def _run_lrn(stored: np.ndarray, name: str, bits: int) -> np.ndarray:
    input_element, output_element, parameters = _lrn_case(name, bits)
    low, high = output_element.storage_range
    return fixed_point.lrn(
        stored,
        input_element.zero_point_values[0],
        LRN_CASES[name][2],
        np.array(parameters["table"]),
        parameters["multiplier"],
        parameters["shift"],
        output_element.zero_point_values[0],
        low,
        high,
        bits=bits,
    )


def lrn_reference(row: list[int], zero_point: int, size: int, parameters: dict, bits: int):
    """fixed_point.lrn of one row of channels, step by step in Python ints (its
    docstring)."""
    segment_bits = fixed_point.LRN_SEGMENT_BITS[bits]
    place_bits = fixed_point.LRN_MANTISSA_BITS - segment_bits
    table = parameters["table"]
    centred = [value - zero_point for value in row]
    out = []
    for j, c in enumerate(centred):
        window = centred[max(0, j - (size - 1) // 2) : j + size // 2 + 1]
        u = max(sum(v * v for v in window), 1)
        octave = u.bit_length() - 1
        m = ((u << 18) >> octave) - (1 << 18)
        i, p = (octave << segment_bits) + (m >> place_bits), m & ((1 << place_bits) - 1)
        f = table[i] + round(Fraction((table[i + 1] - table[i]) * p, 1 << place_bits))
        acc = c * f
        assert abs(acc) < 1 << 46
        reduced = fixed_point.reduced_multiplier(parameters["multiplier"])
        out.append(round(Fraction(acc * reduced, 2 ** (15 + parameters["shift"]))))
    return out


@pytest.mark.parametrize("bits", [8, 16])
@pytest.mark.parametrize("name", ["alexnet", "steep near 0", "even window"])
def test_lrn_is_its_documented_integer_steps(name: str, bits: int) -> None:
    input_element, output_element, parameters = _lrn_case(name, bits)
    low, high = input_element.storage_range
    size = LRN_CASES[name][2]
    rows = RNG.integers(low, high + 1, (6, 37))
    rows[0] = input_element.zero_point_values[0]  # every window sum 0
    rows[1, ::2], rows[1, 1::2] = low, high  # the largest sums
    rows[2, 5] = low  # one value alone in zeros
    rows[2, :5] = rows[2, 6:] = input_element.zero_point_values[0]
    got = _run_lrn(rows, name, bits)
    z_out = output_element.zero_point_values[0]
    for row, values in zip(rows.tolist(), got.tolist()):
        expected = lrn_reference(row, input_element.zero_point_values[0], size, parameters, bits)
        assert values == [min(high, max(low, value + z_out)) for value in expected]


@pytest.mark.parametrize(
    ("name", "bits"),
    [
        (name, bits)
        for name in sorted(LRN_CASES)
        for bits in (8, 16)
        if (name, bits) != ("no bias", 16)
    ],
)
def test_lrn_is_within_one_step_of_the_float_lrn(name: str, bits: int) -> None:
    """Against ONNX's LRN in float64 on every value of a random image: never more than
    one output step, whatever bias and alpha make of the function's steepness (the
    table interpolates by octave), and mostly exact (16-bit steps are 256 times
    finer)."""
    from irc.interp.nn import lrn

    input_element, output_element, _ = _lrn_case(name, bits)
    low, high = input_element.storage_range
    size, alpha, beta, bias = LRN_CASES[name][2:]
    stored = np.random.default_rng(bits).integers(low, high + 1, (2, 6, 6, 48))
    stored[1] = np.rint(stored[1] / 16)  # small values: small window sums
    got = _run_lrn(stored, name, bits)
    real = dequantize(stored, input_element).astype(np.float64)
    channels_first = np.moveaxis(real, -1, 1)
    with np.errstate(invalid="ignore"):  # no bias: 0 / 0 in a window of zeros, NaN
        expected_real = np.moveaxis(lrn(channels_first, size, alpha, beta, bias), 1, -1)
    expected = quantize(expected_real, output_element).astype(np.int64)
    difference = np.abs(got - expected)
    assert difference.max() <= 1, name
    assert np.mean(difference == 0) >= (0.95 if bits == 8 else 0.85), name


def test_lrn_parameters_refuse_a_denominator_that_does_not_normalize() -> None:
    # Without a bias, 1 / (k * s) falls by 2^31.6 over 16-bit window sums: more than
    # the table resolves; over 8-bit ones by 2^17.6, which it does.
    with pytest.raises(ValueError, match=r"falls by a factor of 3\.22e"):
        _lrn_case("no bias", 16)
    assert _lrn_case("no bias", 8)[2]["table"][-1] > 0
    element = UniformQuantizedType.make(0.1, 0, signed=True)
    # An output scale 2^50 times finer than the input's: s_x * f(1) / (2^30 * s_out)
    # is above 2^15, which no wide requantization takes.
    fine = UniformQuantizedType.make(1e-16, 0)
    with pytest.raises(ValueError, match="needs a right shift"):
        scheme.lrn_parameters(element, fine, 5, 1e-4, 0.75, 1.0)
    with pytest.raises(ValueError, match="non-negative"):
        scheme.lrn_parameters(element, element, 5, -1e-4, 0.75, 1.0)
    with pytest.raises(ValueError, match="non-negative"):
        scheme.lrn_parameters(element, element, 5, 0.0, 0.75, 0.0)


# --------------------------------------------------------------------------------------
# TFLite's rounding rules (docs/tflite.md), against exact rationals and against
# gemmlowp's C code transcribed with Python ints (C's division truncates towards zero)


def c_divide(numerator: int, denominator: int) -> int:
    """C's integer division: the quotient truncated towards zero."""
    quotient = abs(numerator) // abs(denominator)
    return quotient if (numerator >= 0) == (denominator > 0) else -quotient


def saturating_rounding_doubling_high_mul(a: int, b: int) -> int:
    """gemmlowp's SaturatingRoundingDoublingHighMul, as written in C."""
    if a == b == -(2**31):
        return 2**31 - 1
    product = a * b
    nudge = (1 << 30) if product >= 0 else (1 - (1 << 30))
    return c_divide(product + nudge, 1 << 31)


def rounding_divide_by_pot(x: int, exponent: int) -> int:
    """gemmlowp's RoundingDivideByPOT, as written in C: ties away from zero."""
    mask = (1 << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> exponent) + (1 if remainder > threshold else 0)


def gemmlowp_multiply(x: int, multiplier: int, shift: int) -> int:
    """TFLite's double-rounding MultiplyByQuantizedMultiplier, its exponent -shift."""
    exponent = -shift
    left, right = max(exponent, 0), max(-exponent, 0)
    return rounding_divide_by_pot(
        saturating_rounding_doubling_high_mul(x * (1 << left), multiplier), right
    )


def vector_multiply(x: int, multiplier: int, shift: int) -> int:
    """The NEON form: vqrdmulh (a rounding doubling high multiply, ties up) and vrshl (a
    rounding shift right, ties up)."""
    exponent = -shift
    left, right = max(exponent, 0), max(-exponent, 0)
    high = (x * (1 << left) * multiplier + (1 << 30)) >> 31
    return (high + (1 << (right - 1))) >> right if right else high


TIE_HEAVY = [(1 << 30, 1), (1 << 30, 3), (1 << 30, -2), (1518500250, 7), (2147483647, 0)]


@pytest.mark.parametrize(("multiplier", "shift"), TIE_HEAVY)
def test_double_roundings_are_gemmlowps_and_the_vector_codes(multiplier: int, shift: int) -> None:
    values = [*range(-300, 301), *RNG.integers(-(2**20), 2**20, 2000).tolist()]
    array = np.asarray(values, dtype=np.int64)
    away = fixed_point.rounding_multiply(array, multiplier, shift, rounding="double_away")
    up = fixed_point.rounding_multiply(array, multiplier, shift, rounding="double_up")
    assert away.tolist() == [gemmlowp_multiply(v, multiplier, shift) for v in values]
    assert up.tolist() == [vector_multiply(v, multiplier, shift) for v in values]


def test_saturating_rounding_doubling_high_mul_rounds_ties_up() -> None:
    """gemmlowp's nudge of 1 - 2^30 for a negative product makes its truncating division
    a floor of the product plus a half: ties go up (towards +infinity) for both signs,
    which is what irc's double roundings compute as their first step."""
    pairs = [(a, 1 << 30) for a in range(-9, 10)]  # a / 2: ties at every odd a
    pairs += list(
        zip(RNG.integers(-(2**31), 2**31, 500).tolist(), RNG.integers(0, 2**31, 500).tolist())
    )
    for a, b in pairs:
        assert saturating_rounding_doubling_high_mul(a, b) == (a * b + (1 << 30)) >> 31


def test_half_up_is_one_rounding_with_ties_up() -> None:
    values = np.arange(-2000, 2001, dtype=np.int64)
    for multiplier, shift in TIE_HEAVY:
        got = fixed_point.rounding_multiply(values, multiplier, shift, rounding="half_up")
        expected = [
            math.floor(Fraction(v * multiplier, 2 ** (31 + shift)) + Fraction(1, 2))
            for v in values.tolist()
        ]
        assert got.tolist() == expected


def test_the_rules_differ_on_ties_of_both_signs() -> None:
    # 2^30 with shift 1: m = 1/4, the values -1.75, -1.5, -1.25, -0.5, 0.5, 1.25, 1.5, 1.75.
    values = np.asarray([-7, -6, -5, -2, 2, 5, 6, 7], dtype=np.int64)
    results = {
        rule: fixed_point.rounding_multiply(values, 1 << 30, 1, rounding=rule).tolist()
        for rule in fixed_point.ROUNDINGS
    }
    assert results["half_even"] == [-2, -2, -1, 0, 0, 1, 2, 2]
    assert results["half_up"] == [-2, -1, -1, 0, 1, 1, 2, 2]
    # Twice: h = floor((x + 1) / 2) = -3, -3, -2, -1, 1, 3, 3, 4, then h / 2 rounded.
    assert results["double_up"] == [-1, -1, -1, 0, 1, 2, 2, 2]
    assert results["double_away"] == [-2, -2, -1, -1, 1, 2, 2, 2]


def test_per_channel_roundings_apply_along_the_axis() -> None:
    values = np.tile(np.arange(-50, 50, dtype=np.int64), (3, 1))
    multipliers, shifts = [1 << 30, 1518500250, 2147483647], [1, 5, 0]
    got = fixed_point.rounding_multiply(values, multipliers, shifts, axis=0, rounding="double_away")
    for row, (multiplier, shift) in enumerate(zip(multipliers, shifts)):
        assert got[row].tolist() == [gemmlowp_multiply(v, multiplier, shift) for v in values[row]]


@pytest.mark.parametrize(
    "real", [0.5, 0.25, 1e-3, 0.1234567, 0.9999999999, 2.0**-31, 2.0**-33, 3.0, 0.0]
)
def test_tflite_multiplier_is_quantize_multiplier(real: float) -> None:
    """TFLite's QuantizeMultiplier: frexp, then std::round of the fraction times 2^31."""
    multiplier, shift = fixed_point.tflite_multiplier(real)
    if real < 2.0**-31 or real == 0.0:  # TFLite flushes to 0: every int32 times it is 0
        assert (multiplier, shift) == (1 << 30, 31)
        return
    fraction, exponent = math.frexp(real)
    expected = int(Fraction(fraction) * (1 << 31) + Fraction(1, 2))
    if expected == 1 << 31:
        expected, exponent = expected // 2, exponent + 1
    assert (multiplier, shift) == (expected, -exponent)


def test_tflite_multiplier_rounds_ties_away() -> None:
    # A fraction whose 31-bit product ends in exactly one half: half to even would keep
    # the even neighbour, std::round takes the one away from zero.
    real = (2**30 + 0.5) / 2**31
    assert fixed_point.tflite_multiplier(real)[0] == 2**30 + 1
    assert fixed_point.quantize_multiplier(real)[0] == 2**30


def test_tflite_mean_multiplier_folds_the_count() -> None:
    for count in (1, 2, 3, 4, 7, 49, 64, 100, 3136):
        for multiplier, shift in TIE_HEAVY:
            folded, folded_shift = fixed_point.tflite_mean_multiplier(multiplier, shift, count)
            k = min(count.bit_length() - 1, 32, 31 - shift)
            assert folded == (multiplier << k) // count and folded_shift == shift + k


def test_divide_round_away_is_c_rounded_division() -> None:
    sums = np.arange(-100, 101, dtype=np.int64)
    for count in (1, 2, 3, 4, 9):
        expected = [
            c_divide(s + count // 2, count) if s > 0 else c_divide(s - count // 2, count)
            for s in sums.tolist()
        ]
        assert fixed_point.divide_round_away(sums, count).tolist() == expected


def test_float_table_softmax_sums_in_float32_in_order() -> None:
    """The row's sum is float32, added left to right, and the probabilities are rounded
    half away from zero: a row of a thousand equal small entries shows float32's drift."""
    table = np.full(256, np.float32(1e-3), dtype=np.float32)
    table[0] = np.float32(1.0)
    row = np.zeros((1, 1000), dtype=np.int64)
    row[0, 0] = 100  # the maximum: table[0]; the others table[100]
    got = fixed_point.float_table_softmax(row, table, 1 / 256, -128, -128, 127)
    total = np.float32(1.0)
    for _ in range(999):
        total = np.float32(total + np.float32(1e-3))
    reciprocal = np.float32(1.0) / (total * np.float32(1 / 256))
    small = float(np.float32(np.float32(1e-3) * reciprocal))
    large = float(np.float32(np.float32(1.0) * reciprocal))
    assert got[0, 0] == math.floor(large + 0.5) - 128
    assert got[0, 1] == math.floor(small + 0.5) - 128
