"""The exact integer kernels (irc/interp/kernels.py) and the fixed-point rounding
(irc/ir/fixed_point.py) against plain int64 and Python-integer references.

The kernels multiply in float32 chunks and add the chunks in float64; these tests
drive them to the edges of that exactness (the largest products, depths of many
chunks, zero points at both ends of the range) and to int32 saturation, where a
float shortcut would show.
"""

from __future__ import annotations

import numpy as np
import pytest

from irc.interp.kernels import IntegerConv, IntegerMatmul, exact_product, product_plan
from irc.ir import fixed_point

INT32 = (fixed_point.INT32_MIN, fixed_point.INT32_MAX)


def reference_conv(
    source: np.ndarray,
    weight: np.ndarray,
    acc: np.ndarray,
    strides: list[int],
    dilations: list[int],
    group: int,
    zero_point: int,
    accumulate: bool,
    bias: np.ndarray | None,
) -> np.ndarray:
    """The conv in int64, tap by tap, saturated as the MAC command defines."""
    out_channels, kernel_h, kernel_w, group_channels = weight.shape
    count, out_h, out_w, _ = acc.shape
    per_group = out_channels // group
    x = source.astype(np.int64) - zero_point
    sums = np.zeros((count, out_h, out_w, out_channels), np.int64)
    for g in range(group):
        channels = slice(g * group_channels, (g + 1) * group_channels)
        outputs = slice(g * per_group, (g + 1) * per_group)
        for ky in range(kernel_h):
            for kx in range(kernel_w):
                rows = slice(
                    ky * dilations[0], ky * dilations[0] + (out_h - 1) * strides[0] + 1, strides[0]
                )
                columns = slice(
                    kx * dilations[1], kx * dilations[1] + (out_w - 1) * strides[1] + 1, strides[1]
                )
                window = x[:, rows, columns, channels]
                taps = weight[outputs, ky, kx, :].astype(np.int64)
                sums[..., outputs] += window @ taps.T
    if accumulate:
        sums = np.clip(sums + acc, *INT32)
    sums = np.clip(sums, *INT32)
    if bias is not None:
        sums = np.clip(sums + bias.astype(np.int64), *INT32)
    return sums.astype(np.int32)


def random_storage(
    rng: np.random.Generator, dtype: type, shape: tuple[int, ...], extreme: bool
) -> np.ndarray:
    info = np.iinfo(dtype)
    if extreme:  # every value at one end: the largest products
        return np.full(shape, info.min if rng.integers(2) else info.max, dtype)
    return rng.integers(info.min, info.max + 1, shape).astype(dtype)


@pytest.mark.parametrize("seed", range(60))
def test_the_integer_conv_is_exact_and_saturates_as_the_mac_command_defines(seed: int) -> None:
    rng = np.random.default_rng(seed)
    dtype = (np.int8, np.uint8)[seed % 2]
    extreme = seed % 3 == 0
    group = int(rng.choice([1, 1, 2, 3, 8]))
    depthwise = seed % 10 == 4
    group_channels = 1 if depthwise else int(rng.integers(1, 40)) if seed % 5 else 300
    per_group = 1 if depthwise else int(rng.integers(1, 5))
    kernel = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    strides = [int(rng.integers(1, 3)), int(rng.integers(1, 3))]
    dilations = [int(rng.integers(1, 3)), int(rng.integers(1, 3))]
    count, out_h, out_w = int(rng.integers(1, 3)), int(rng.integers(1, 6)), int(rng.integers(1, 6))
    height = (out_h - 1) * strides[0] + (kernel[0] - 1) * dilations[0] + 1 + int(rng.integers(0, 2))
    width = (out_w - 1) * strides[1] + (kernel[1] - 1) * dilations[1] + 1
    source = random_storage(rng, dtype, (count, height, width, group * group_channels), extreme)
    weight = random_storage(rng, np.int8, (group * per_group, *kernel, group_channels), extreme)
    info = np.iinfo(dtype)
    zero_point = int((info.min, info.max, rng.integers(info.min, info.max + 1))[seed % 3])
    accumulate = seed % 4 in (1, 2)
    near_limits = seed % 4 == 1  # accumulators that the sums push past int32
    shape = (count, out_h, out_w, group * per_group)
    start = (
        rng.choice(INT32, shape).astype(np.int32)
        if near_limits
        else rng.integers(-1000, 1000, shape).astype(np.int32)
    )
    bias = None
    if seed % 2:
        bias = rng.choice(
            [fixed_point.INT32_MIN, fixed_point.INT32_MAX, 5], group * per_group
        ).astype(np.int32)
    expected = reference_conv(
        source, weight, start, strides, dilations, group, zero_point, accumulate, bias
    )
    acc = start.copy()
    conv = IntegerConv(source, weight, acc, strides, dilations, group, zero_point, accumulate, bias)
    conv()
    assert np.array_equal(acc, expected)
    # Prepared once, it reads the arrays' current contents on every call.
    source[...] = random_storage(rng, dtype, source.shape, False)
    acc[...] = start
    conv()
    expected = reference_conv(
        source, weight, start, strides, dilations, group, zero_point, accumulate, bias
    )
    assert np.array_equal(acc, expected)


def test_the_integer_conv_reads_strided_views_at_every_call() -> None:
    # In the simulator every operand is a view of a memory, and need not be contiguous.
    rng = np.random.default_rng(7)
    memory = rng.integers(-128, 128, (2, 6, 6, 16)).astype(np.int8)
    source = memory[0, :, :, ::2][None]  # (1, 6, 6, 8), channel stride 2
    weights_memory = rng.integers(-128, 128, (4, 3, 3, 16)).astype(np.int8)
    weight = weights_memory[:, :, :, 8:]  # (4, 3, 3, 8), not contiguous
    acc_memory = np.zeros((1, 4, 4, 8), np.int32)
    acc = acc_memory[..., ::2]
    conv = IntegerConv(source, weight, acc, [1, 1], [1, 1], 1, 5, False)
    for _ in range(2):
        conv()
        expected = reference_conv(source, weight, acc, [1, 1], [1, 1], 1, 5, False, None)
        assert np.array_equal(acc, expected)
        weights_memory[...] = rng.integers(-128, 128, weights_memory.shape)
        memory[...] = rng.integers(-128, 128, memory.shape)
    assert not acc_memory[..., 1::2].any()  # only the view is written


@pytest.mark.parametrize("seed", range(30))
def test_the_integer_matmul_is_exact_over_many_chunks(seed: int) -> None:
    rng = np.random.default_rng(seed)
    dtype = (np.int8, np.uint8)[seed % 2]
    rows, depth, columns = (
        int(rng.integers(1, 20)),
        int(rng.integers(1, 5000)),
        int(rng.integers(1, 20)),
    )
    trans_b = bool(seed % 2)
    lhs = random_storage(rng, dtype, (rows, depth), seed % 3 == 0)
    rhs = random_storage(
        rng, np.int8, (columns, depth) if trans_b else (depth, columns), seed % 3 == 0
    )
    info = np.iinfo(dtype)
    zero_point = int((info.min, info.max, 0)[seed % 3])
    bias = rng.integers(-(2**31), 2**31, columns).astype(np.int32) if seed % 4 == 0 else None
    acc = np.zeros((rows, columns), np.int32)
    IntegerMatmul(lhs, rhs, acc, zero_point, trans_b, False, bias)()
    sums = (lhs.astype(np.int64) - zero_point) @ (rhs.T if trans_b else rhs).astype(np.int64)
    if bias is not None:
        sums = np.clip(np.clip(sums, *INT32) + bias, *INT32)
    assert np.array_equal(acc, np.clip(sums, *INT32))


def test_the_chunk_keeps_every_partial_sum_exact_in_float32() -> None:
    # int8 inputs centred by a zero point at the other end reach 255; times 128.
    assert product_plan(255 * 128) == (np.float32, 514)
    assert product_plan(128 * 128) == (np.float32, 1024)
    assert product_plan(2**24)[0] is np.float64
    # At the bound, float32 in one piece would round; the chunks do not.
    depth = 4096
    lhs = np.full((1, depth), 255, np.float32)
    rhs = np.full((depth, 1), 127, np.float32)
    rhs[::2] = 128
    exact = int(np.int64(255) * (127 + 128) * depth // 2)
    assert exact_product(lhs, rhs, 514)[0, 0] == exact


def rounding_reference(accumulator: int, multiplier: int, shift: int) -> int:
    """round_half_even(acc * M / 2^(31 + s)) with Python's exact integers."""
    numerator, denominator = accumulator * multiplier, 1 << (31 + shift)
    quotient, remainder = divmod(numerator, denominator)
    if 2 * remainder > denominator or (2 * remainder == denominator and quotient % 2):
        quotient += 1
    return quotient


@pytest.mark.parametrize("shift", [fixed_point.SHIFT_MIN, -7, -1, 0, 1, 9, fixed_point.SHIFT_MAX])
def test_fixed_point_multiply_rounds_half_to_even_exactly(shift: int) -> None:
    rng = np.random.default_rng(shift + 100)
    multipliers = [
        fixed_point.MULTIPLIER_MIN,
        fixed_point.MULTIPLIER_MAX,
        int(rng.integers(2**30, 2**31)),
    ]
    edges = [fixed_point.INT32_MIN, fixed_point.INT32_MAX, 0, -1, 1]
    for multiplier in multipliers:
        # Exact ties, their neighbours, the int32 edges and random values.
        step = max((1 << (31 + shift - 1)) // multiplier, 1)
        ties = [k * step + d for k in range(-6, 7) for d in (-1, 0, 1)]
        values = (
            edges + ties + rng.integers(fixed_point.INT32_MIN, fixed_point.INT32_MAX, 200).tolist()
        )
        values = [v for v in values if fixed_point.INT32_MIN <= v <= fixed_point.INT32_MAX]
        for dtype in (np.int64, np.int32):
            got = fixed_point.fixed_point_multiply(np.array(values, dtype), multiplier, shift)
            expected = [rounding_reference(v, multiplier, shift) for v in values]
            assert got.tolist() == expected


def test_fixed_point_multiply_refuses_values_outside_int32_of_any_dtype() -> None:
    # int32 inputs skip the range check by their type; uint32 and int64 ones do not.
    for values in (np.array([2**32 - 1], np.uint32), np.array([2**31], np.int64)):
        with pytest.raises(ValueError, match="outside the int32 range"):
            fixed_point.fixed_point_multiply(values, fixed_point.MULTIPLIER_MIN, 0)
