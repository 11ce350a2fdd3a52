"""Exact integer convolutions and matrix products through float BLAS.

A sum of 8-bit products is exact in floating point while every partial sum stays an
integer the format represents: up to 2^24 in float32, 2^53 in float64. numpy's
integer `matmul` does not use BLAS and is slow, so `exact_product` multiplies the
8-bit values, less the input's zero point, in float32, in depth chunks short enough
for that bound (514 when the centred inputs reach 255 in magnitude against int8
weights of at most 128), adds the chunks in float64, and so gives the exact integer
sums at BLAS speed.

16-bit activations (int16x8) take float64 throughout: their products reach 2^22, and
their sums, up to the 48 bits of the wide (int64) accumulator, stay exact there.

`IntegerConv` and `IntegerMatmul` are the arithmetic of `tile.conv` and `tile.matmul`
(and of `npu.conv` and `npu.matmul`, with their bias fused), prepared for fixed
arrays: the simulator builds one per command when it loads a stream, whose buffers
are views of its memories at static addresses, and calls it on every run; the tile
interpreter builds one per op it runs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from irc.ir import fixed_point

FLOAT32_EXACT = 2**24
"""Integers up to this magnitude are exact in float32."""

FLOAT64_EXACT = 2**53
"""Integers up to this magnitude are exact in float64."""

SHORTEST_FLOAT32_CHUNK = 64
"""Below this depth per chunk, float64 (in one piece) is faster than float32 chunks."""


def magnitude(dtype: np.dtype) -> int:
    """The largest magnitude of an integer dtype's values (128 for int8)."""
    info = np.iinfo(dtype)
    return max(-int(info.min), int(info.max))


def _centred_magnitude(dtype: np.dtype, zero_point: int) -> int:
    """The largest magnitude of an integer dtype's values less `zero_point`."""
    info = np.iinfo(dtype)
    return max(abs(int(info.min) - zero_point), abs(int(info.max) - zero_point))


def product_plan(largest: int) -> tuple[type[np.floating], int]:
    """The float type and the longest depth chunk whose sums of products of at most
    `largest` in magnitude stay exact."""
    chunk = FLOAT32_EXACT // largest
    if chunk >= SHORTEST_FLOAT32_CHUNK:
        return np.float32, chunk
    chunk = FLOAT64_EXACT // largest
    assert chunk >= 1, "MAC operands are at most 16 bits wide"
    return np.float64, chunk


def exact_product(lhs: np.ndarray, rhs: np.ndarray, chunk: int) -> np.ndarray:
    """lhs (..., M, K) @ rhs (..., K, N) of integer-valued floats, as exact float64
    sums, `chunk` depth at a time (see `product_plan`)."""
    depth = lhs.shape[-1]
    if depth <= chunk:
        return np.asarray(lhs @ rhs, np.float64)
    total = lhs[..., :chunk] @ rhs[..., :chunk, :]
    total = total.astype(np.float64)
    for start in range(chunk, depth, chunk):
        total += lhs[..., start : start + chunk] @ rhs[..., start : start + chunk, :]
    return total


def accumulator_bounds(acc: np.ndarray) -> tuple[int, int]:
    """The range of an integer accumulator buffer: int32's, or the 48 bits of a wide
    (int64) one."""
    return fixed_point.accumulator_bounds(acc.dtype == np.int64)


def _store_sums(
    acc: np.ndarray,
    sums: np.ndarray,
    accumulate: bool,
    bias: np.ndarray | None,
    may_saturate: bool,
) -> None:
    """acc = saturate(saturate((accumulate ? acc : 0) + sums) + bias) in the range of
    the accumulator (int32, or 48 bits for a wide one), for exact sums: float64 holds
    the 48-bit sums and biases exactly. `may_saturate` is False when the sums alone
    cannot leave the range."""
    low, high = accumulator_bounds(acc)
    if accumulate:
        sums = sums + acc.reshape(sums.shape)
    if accumulate or may_saturate:
        np.clip(sums, low, high, out=sums)
    if bias is not None:
        sums = sums + bias  # float64: exact
        np.clip(sums, low, high, out=sums)
    acc[...] = sums.reshape(acc.shape)


class IntegerConv:
    """An integer NHWC conv of fixed arrays (see the module docstring): the input box
    (N, H, W, C), the weights (O, KH, KW, C/group) and the int32 accumulator
    (N, OH, OW, O), which it overwrites or adds to. The input holds the padding
    already (the box's frame)."""

    def __init__(
        self,
        source: np.ndarray,
        weight: np.ndarray,
        acc: np.ndarray,
        strides: Sequence[int],
        dilations: Sequence[int],
        group: int,
        input_zero_point: int,
        accumulate: bool,
        bias: np.ndarray | None = None,
    ) -> None:
        self.weight, self.acc, self.bias = weight, acc, bias
        self.accumulate, self.group = accumulate, group
        _, kernel_h, kernel_w, group_channels = weight.shape
        count, out_h, out_w, _ = acc.shape
        # The zero point is subtracted as the windows are gathered.
        info = np.iinfo(source.dtype)
        largest = max(abs(info.min - input_zero_point), abs(info.max - input_zero_point))
        largest *= magnitude(weight.dtype)
        self.float, self.chunk = product_plan(largest)
        self.offset = self.float(input_zero_point)  # subtracted in float: no wrap-around
        # Every output position's window of the box, as one strided view (no copy).
        batch, height, width, channels = source.strides
        self.windows = np.lib.stride_tricks.as_strided(
            source,
            shape=(count, out_h, out_w, kernel_h, kernel_w, group, group_channels),
            strides=(
                batch,
                height * strides[0],
                width * strides[1],
                height * dilations[0],
                width * dilations[1],
                channels * group_channels,
                channels,
            ),
            writeable=False,
        )
        depth = kernel_h * kernel_w * group_channels
        self.may_saturate = depth * largest > accumulator_bounds(acc)[1]
        positions = count * out_h * out_w
        self.positions, self.depth = positions, depth
        self.column_shape = (group, count, out_h, out_w, kernel_h, kernel_w, group_channels)

    def __call__(self) -> None:
        """Compute the conv into the accumulator.

        The windows are gathered into one matrix per group, in the weights' (KH, KW,
        C) order, and the weights copied in their own shape (a strided weight view is
        no copy), into buffers made on each call: a simulator holds one kernel per
        command, and buffers kept per kernel added up to the whole network's weights
        and im2col matrices in float."""
        group, positions, depth = self.group, self.positions, self.depth
        columns = np.empty((group, positions, depth), self.float)
        gathered = columns.reshape(self.column_shape).transpose(1, 2, 3, 4, 5, 0, 6)
        np.subtract(self.windows, self.offset, out=gathered, casting="unsafe")
        matrix = np.empty((group, self.weight.shape[0] // group, depth), self.float)
        np.copyto(matrix.reshape(self.weight.shape), self.weight, casting="unsafe")
        sums = exact_product(columns, matrix.transpose(0, 2, 1), self.chunk)
        if group > 1:  # (group, positions, O/group) -> (positions, O)
            sums = sums.transpose(1, 0, 2)
        sums = sums.reshape(positions, -1)
        _store_sums(self.acc, sums, self.accumulate, self.bias, self.may_saturate)


class IntegerMatmul:
    """An integer matmul of fixed arrays: lhs (M, K) times rhs (K, N), or (N, K) with
    `trans_b`, into the int32 accumulator (M, N); `a_zero_point` is the lhs's,
    `b_zero_point` the rhs's (0 for weights; an activation's own otherwise)."""

    def __init__(
        self,
        lhs: np.ndarray,
        rhs: np.ndarray,
        acc: np.ndarray,
        a_zero_point: int,
        trans_b: bool,
        accumulate: bool,
        bias: np.ndarray | None = None,
        b_zero_point: int = 0,
    ) -> None:
        self.lhs, self.rhs, self.acc, self.bias = lhs, rhs, acc, bias
        self.trans_b, self.accumulate = trans_b, accumulate
        largest = _centred_magnitude(lhs.dtype, a_zero_point)
        largest *= _centred_magnitude(rhs.dtype, b_zero_point)
        self.float, self.chunk = product_plan(largest)
        # Zero points are subtracted in float: no wrap-around.
        self.offset = self.float(a_zero_point)
        self.rhs_offset = self.float(b_zero_point)
        self.may_saturate = lhs.shape[1] * largest > accumulator_bounds(acc)[1]

    def __call__(self) -> None:
        """Compute the product into the accumulator (its float operands made on each
        call, as `IntegerConv`'s)."""
        left = np.subtract(self.lhs, self.offset, dtype=self.float, casting="unsafe")
        right = np.subtract(self.rhs, self.rhs_offset, dtype=self.float, casting="unsafe")
        sums = exact_product(left, right.T if self.trans_b else right, self.chunk)
        _store_sums(self.acc, sums, self.accumulate, self.bias, self.may_saturate)
