"""The interpreter of the `tile` dialect: buffers are numpy arrays, mutated in place.

`tile.alloc` and `tile.to_buffer` create arrays; every other op writes its output
buffer in place and returns nothing. The integer arithmetic is that of the `qnn`
interpreter (irc/interp/qnn.py) and irc/ir/fixed_point.py, so a tiled program gives
the integers of the `qnn` ops it replaces: sums of products are exact (float32 BLAS
in chunks whose sums stay below 2^24, irc/interp/kernels.py), saturated to int32 (48
bits in the wide accumulator of 16-bit activations), and requantized half to even.
The kernels that the simulator also runs decode their op once (`RequantizeTile`,
`AddTile`, `MulTile`).

`index` values are xDSL's runtime scalars (`IntegerAttr`s), as `scf.for` and the
`arith` ops produce them. Errors that only the running program reveals (a copy box
outside its destination, a bad multiplier in a parameter buffer) are `IrcError`s at
the op's location.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType, MemRefType, TensorType
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import Attribute, Operation, SSAValue

from irc.diagnostics import error
from irc.dialects import quant, tile
from irc.interp import nn as nn_interp
from irc.interp import quant as quant_interp
from irc.interp.kernels import IntegerConv, IntegerMatmul, accumulator_bounds
from irc.ir import fixed_point, weights


def _dtype(value_type: Attribute) -> np.dtype:
    assert isinstance(value_type, MemRefType | TensorType)
    return weights.dtype_of(value_type.get_element_type())


def _index(value: object) -> int:
    """The integer of an `index` runtime value."""
    assert isinstance(value, IntegerAttr), "index values are IntegerAttrs at run time"
    return int(value.value.data)


def _number(attribute: Attribute | None) -> int | float:
    if isinstance(attribute, IntegerAttr):
        return int(attribute.value.data)
    assert isinstance(attribute, FloatAttr)
    return float(attribute.value.data)


def _describe_box(offsets: Sequence[int], sizes: Sequence[int]) -> str:
    return "[" + ", ".join(f"{o}:{o + s}" for o, s in zip(offsets, sizes)) + "]"


def _store(target: np.ndarray, values: np.ndarray) -> None:
    """Write `values` into the buffer `target` (the verifier checked the ranges)."""
    target[...] = values.astype(target.dtype)


def _cast_type(op: tile.CastFields, integers: SSAValue) -> quant.UniformQuantizedType:
    """The per-tensor quantized type a `tile.quantize`/`dequantize` converts with, so
    that it computes exactly what `quant.qcast`/`quant.dcast` compute."""
    props = op.props()
    element = tile.element_of(integers)
    assert isinstance(element, IntegerType)
    return quant.UniformQuantizedType.make(
        props.float("scale") or 1.0,
        props.int("zero_point") or 0,
        bits=element.width.data,
        signed=tile.storage_range(element)[0] < 0,
    )


def _is_float(array: np.ndarray) -> bool:
    return array.dtype.kind == "f"


def _channels_first(array: np.ndarray) -> np.ndarray:
    return array.transpose(0, 3, 1, 2)


def resize_axis_reads(
    mode: str,
    coordinate_mode: str,
    nearest_mode: str,
    scale: float,
    in_length: int,
    out_length: int,
    bits: int,
) -> list[np.ndarray]:
    """The input indices each output along one axis of a whole resize reads: its two
    neighbours (low, high) in a linear resize (`fixed_point.resize_coordinates` in
    Q`bits`), its one index in a nearest resize (as `nn.resize`)."""
    if mode == "nearest":
        return [
            nn_interp.nearest_axis_indices(
                out_length, in_length, scale, coordinate_mode, nearest_mode
            )
        ]
    low, high, _ = fixed_point.resize_coordinates(
        coordinate_mode, scale, in_length, out_length, bits
    )
    return [low, high]


def resize_windows(
    op: tile.ResizeFields, origin: Sequence[int]
) -> list[fixed_point.ResizeWindow] | None:
    """The windows of a `tile.resize` (or `npu.resize`) of a window, one per resized
    axis, from its origin operands' values; None for a resize of whole axes."""
    if not origin:
        return None
    props = op.props()
    count = len(props.ints("axes") or [])
    return [
        fixed_point.ResizeWindow(in_length, out_length, origin[i], origin[count + i])
        for i, (in_length, out_length) in enumerate(
            zip(props.ints("input_lengths") or [], props.ints("output_lengths") or [])
        )
    ]


def _pool_counts(op: tile.PoolOp, origin: Sequence[int], out_sizes: Sequence[int]) -> np.ndarray:
    """[OH, OW] tap counts of a tile of an average pool whose output starts at `origin`."""
    props = op.props()
    kernel = props.ints("kernel_shape") or []
    strides = props.ints("strides") or [1, 1]
    dilations = props.ints("dilations") or [1, 1]
    pads = props.ints("pads") or [0, 0, 0, 0]
    sizes = [props.int("input_h"), props.int("input_w")]
    counts = []
    for axis in range(2):
        size = sizes[axis]
        assert size is not None  # the verifier requires it
        # The whole layer's counts up to the tile's end, of which the tile's are the last.
        axis_counts = nn_interp._pool_counts(
            size,
            kernel[axis],
            strides[axis],
            pads[axis],
            pads[2 + axis],
            dilations[axis],
            origin[axis] + out_sizes[axis],
            props.bool("count_include_pad"),
        )
        counts.append(axis_counts[origin[axis] :])
    return np.multiply.outer(counts[0], counts[1]).astype(np.int64)


class _Rescale:
    """The requantization of an add's or mul's int64 sums into its output tile: the
    op's (multiplier, shift), output zero point and clamp, decoded once."""

    def __init__(self, op: tile.AddOp | tile.MulOp) -> None:
        props = op.props()
        self.low, self.high = tile.check_clamp(props, tile.element_of(op.output))
        self.multiplier, self.shift = op.multiplier.value.data, op.shift.value.data
        self.zero_point = props.int("output_zero_point") or 0
        self.rounding = props.str("rounding") or fixed_point.HALF_EVEN

    def into(self, output: np.ndarray, sums: np.ndarray) -> None:
        output[...] = fixed_point.requantize(
            sums,
            self.multiplier,
            self.shift,
            self.zero_point,
            self.low,
            self.high,
            rounding=self.rounding,
        )


class AddTile(_Rescale):
    """`tile.add`'s arithmetic (and an `npu.add`'s), with the op's properties decoded
    once: each input centred, shifted left, rescaled, then the sum requantized."""

    def __init__(self, op: tile.AddOp) -> None:
        super().__init__(op)
        props = op.props()
        self.left_shift = props.int("left_shift") or 0
        self.input_rounding = props.str("input_rounding") or fixed_point.HALF_EVEN
        self.inputs = [
            (
                props.int("lhs_zero_point") or 0,
                op.lhs_multiplier.value.data,
                op.lhs_shift.value.data,
            ),
            (
                props.int("rhs_zero_point") or 0,
                op.rhs_multiplier.value.data,
                op.rhs_shift.value.data,
            ),
        ]

    def __call__(self, lhs: np.ndarray, rhs: np.ndarray, output: np.ndarray) -> None:
        """output = requantize(rescale(lhs) + rescale(rhs))."""
        terms = []
        for array, (zero_point, multiplier, shift) in zip((lhs, rhs), self.inputs):
            centred = np.subtract(array, zero_point, dtype=np.int64)
            centred <<= self.left_shift
            terms.append(
                fixed_point.rounding_multiply(
                    centred, multiplier, shift, rounding=self.input_rounding
                )
            )
        # Not in place: either input may be the one broadcast (a constant lhs).
        self.into(output, terms[0] + terms[1])


class MulTile(_Rescale):
    """`tile.mul`'s arithmetic (and an `npu.mul`'s): the product of the centred inputs,
    requantized."""

    def __init__(self, op: tile.MulOp) -> None:
        super().__init__(op)
        props = op.props()
        self.zero_points = (
            props.int("lhs_zero_point") or 0,
            props.int("rhs_zero_point") or 0,
        )

    def __call__(self, lhs: np.ndarray, rhs: np.ndarray, output: np.ndarray) -> None:
        """output = requantize((lhs - lhs_zero_point) * (rhs - rhs_zero_point))."""
        # Not in place: either input may be the one broadcast (a constant lhs).
        product = np.subtract(lhs, self.zero_points[0], dtype=np.int64) * np.subtract(
            rhs, self.zero_points[1], dtype=np.int64
        )
        self.into(output, product)


def conv_into(
    source: np.ndarray,
    weight: np.ndarray,
    acc: np.ndarray,
    strides: Sequence[int],
    dilations: Sequence[int],
    group: int,
    input_zero_point: int,
    accumulate: bool,
) -> None:
    """`tile.conv`'s arithmetic: an NHWC box and [O, KH, KW, C/g] weights into the
    accumulator tile, exact and saturated for integers (irc/interp/kernels.py)."""
    if not _is_float(acc):
        IntegerConv(source, weight, acc, strides, dilations, group, input_zero_point, accumulate)()
        return
    x = _channels_first(source.astype(np.float64))
    w = _channels_first(weight.astype(np.float64))
    sums = nn_interp.conv(
        x, w, None, strides, [0, 0, 0, 0], dilations, group, acc.shape[1:3]
    ).transpose(0, 2, 3, 1)
    _accumulate(acc, sums, accumulate)


def matmul_into(
    lhs: np.ndarray,
    rhs: np.ndarray,
    acc: np.ndarray,
    a_zero_point: int,
    trans_b: bool,
    accumulate: bool,
    b_zero_point: int = 0,
) -> None:
    """`tile.matmul`'s arithmetic (irc/interp/kernels.py for integers)."""
    if not _is_float(acc):
        IntegerMatmul(lhs, rhs, acc, a_zero_point, trans_b, accumulate, b_zero_point=b_zero_point)()
        return
    a = lhs.astype(np.float64)
    b = rhs.astype(np.float64)
    _accumulate(acc, a @ (b.T if trans_b else b), accumulate)


def _accumulate(acc: np.ndarray, sums: np.ndarray, accumulate: bool) -> None:
    """acc = (accumulate ? acc : 0) + sums, for a float accumulator."""
    total = sums + acc.astype(np.float64) if accumulate else sums
    _store(acc, total)


class RequantizeTile:
    """output = requantize(acc - input_zero_point) with the [C, 2] (or [1, 2])
    (multiplier, shift) pairs of `params` and `op`'s output zero point and clamp
    (`tile.requantize`, and the output stage of an `npu` MAC command), with the op's
    properties decoded once."""

    def __init__(self, op: Operation, output_element: Attribute, input_zero_point: int) -> None:
        props = op.props()  # type: ignore[attr-defined]
        self.op, self.input_zero_point = op, input_zero_point
        self.low, self.high = tile.check_clamp(props, output_element)
        self.output_zero_point = props.int("output_zero_point") or 0
        self.rounding = props.str("rounding") or fixed_point.HALF_EVEN

    def __call__(self, acc: np.ndarray, params: np.ndarray, output: np.ndarray) -> None:
        """Requantize `acc` into `output` with the pairs of `params`."""
        multipliers, shifts = params[:, 0].astype(np.int64), params[:, 1].astype(np.int64)
        # A wide (int64) accumulator, of 16-bit activations, has its own rescaling.
        wide = acc.dtype == np.int64
        shift_min = fixed_point.WIDE_SHIFT_MIN if wide else fixed_point.SHIFT_MIN
        valid = (
            (multipliers >= fixed_point.MULTIPLIER_MIN)
            & (multipliers <= fixed_point.MULTIPLIER_MAX)
            & (shifts >= shift_min)
            & (shifts <= fixed_point.SHIFT_MAX)
        )
        if not valid.all():
            channel = int(np.argmin(valid))
            check = fixed_point.check_wide_multiplier if wide else fixed_point.check_multiplier
            problem = check(int(multipliers[channel]), int(shifts[channel]))
            raise error(
                f"the requantization parameters of channel {channel}: {problem}",
                self.op,
                hint="params holds (multiplier, shift) pairs from fixed_point.quantize_multiplier",
            )
        axis = None if len(multipliers) == 1 else acc.ndim - 1
        centred = acc.astype(np.int64) - self.input_zero_point if self.input_zero_point else acc
        result = fixed_point.requantize(
            centred,
            multipliers if axis is not None else int(multipliers[0]),
            shifts if axis is not None else int(shifts[0]),
            self.output_zero_point,
            self.low,
            self.high,
            axis,
            wide=wide,
            rounding=self.rounding,
        )
        output[...] = result


def _rolled(box: list[slice], shape: Sequence[int]) -> Any:
    """Index a box of a (rolling) buffer of `shape`: positions along an axis where the
    box runs past the buffer wrap around it (`tile.copy`'s rolling buffers)."""
    if all(part.stop <= extent for part, extent in zip(box, shape)):
        return tuple(box)
    return np.ix_(*[np.arange(part.start, part.stop) % extent for part, extent in zip(box, shape)])


@register_impls
class TileFunctions(InterpreterFunctions):
    """numpy implementations of every `tile` op, for xDSL's `Interpreter`."""

    # ---- placement ---------------------------------------------------------------------

    @impl(tile.OnCoreOp)
    def run_on_core(
        self, interpreter: Interpreter, op: tile.OnCoreOp, args: PythonValues
    ) -> PythonValues:
        """The body in place: which core runs it changes no value."""
        interpreter.run_ssacfg_region(op.body, (), "on_core")
        return ()

    # ---- buffers -----------------------------------------------------------------------

    @impl(tile.AllocOp)
    def run_alloc(
        self, interpreter: Interpreter, op: tile.AllocOp, args: PythonValues
    ) -> PythonValues:
        buffer_type = op.result.type
        assert isinstance(buffer_type, MemRefType)
        return (np.zeros(tuple(buffer_type.get_shape()), _dtype(buffer_type)),)

    @impl(tile.ToBufferOp)
    def run_to_buffer(
        self, interpreter: Interpreter, op: tile.ToBufferOp, args: PythonValues
    ) -> PythonValues:
        return (np.array(args[0], dtype=_dtype(op.result.type), copy=True, order="C"),)

    @impl(tile.ToTensorOp)
    def run_to_tensor(
        self, interpreter: Interpreter, op: tile.ToTensorOp, args: PythonValues
    ) -> PythonValues:
        return (np.array(args[0], dtype=_dtype(op.result.type), copy=True, order="C"),)

    @impl(tile.ViewOp)
    def run_view(
        self, interpreter: Interpreter, op: tile.ViewOp, args: PythonValues
    ) -> PythonValues:
        buffer_type = op.result.type
        assert isinstance(buffer_type, MemRefType)
        view = args[0].reshape(tuple(buffer_type.get_shape()))
        assert np.shares_memory(view, args[0]) or view.size == 0, "buffers are contiguous"
        return (view,)

    @impl(tile.CopyOp)
    def run_copy(
        self, interpreter: Interpreter, op: tile.CopyOp, args: PythonValues
    ) -> PythonValues:
        source, dest = args[0], args[1]
        rank = source.ndim
        source_offsets = [_index(v) for v in args[2 : 2 + rank]]
        dest_offsets = [_index(v) for v in args[2 + rank :]]
        props = op.props()
        sizes = props.ints("sizes") or []
        source_shape = props.ints("source_rolling") or list(source.shape)
        dest_shape = props.ints("dest_rolling") or list(dest.shape)
        if any(o < 0 or o + s > n for o, s, n in zip(dest_offsets, sizes, dest_shape)):
            raise error(
                f"the copy's destination box {_describe_box(dest_offsets, sizes)} is outside "
                f"the destination buffer of shape {list(dest_shape)}",
                op,
                hint="the destination offsets plus 'sizes' must lie within the destination",
            )
        box = np.full(tuple(sizes), _number(op.props().attr("pad")), dtype=dest.dtype)
        factors = op.props().ints("upsample") or [1] * rank
        # The source elements whose (upsampled) positions lie in the box: place them.
        inside_source: list[slice] = []
        inside_box: list[slice] = []
        for offset, size, extent, factor in zip(source_offsets, sizes, source_shape, factors):
            first = max(-(-offset // factor), 0)
            last = min((offset + size - 1) // factor, extent - 1)
            if first > last:
                inside_source = []
                break
            inside_source.append(slice(first, last + 1))
            start = first * factor - offset
            inside_box.append(slice(start, start + (last - first) * factor + 1, factor))
        if inside_source:
            box[tuple(inside_box)] = source[_rolled(inside_source, source.shape)]
        target = [slice(o, o + s) for o, s in zip(dest_offsets, sizes)]
        dest[_rolled(target, dest.shape)] = box
        return ()

    @impl(tile.FillOp)
    def run_fill(
        self, interpreter: Interpreter, op: tile.FillOp, args: PythonValues
    ) -> PythonValues:
        args[0][...] = _number(op.props().attr("value"))
        return ()

    # ---- compute -----------------------------------------------------------------------

    @impl(tile.ConvOp)
    def run_conv(
        self, interpreter: Interpreter, op: tile.ConvOp, args: PythonValues
    ) -> PythonValues:
        props = op.props()
        source, weight, acc = args
        conv_into(
            source,
            weight,
            acc,
            props.ints("strides") or [1, 1],
            props.ints("dilations") or [1, 1],
            props.int("group") or 1,
            props.int("input_zero_point") or 0,
            props.bool("accumulate"),
        )
        return ()

    @impl(tile.MatmulOp)
    def run_matmul(
        self, interpreter: Interpreter, op: tile.MatmulOp, args: PythonValues
    ) -> PythonValues:
        props = op.props()
        lhs, rhs, acc = args
        matmul_into(
            lhs, rhs, acc, props.int("a_zero_point") or 0, props.bool("trans_b"),
            props.bool("accumulate"), props.int("b_zero_point") or 0,
        )  # fmt: skip
        return ()

    @impl(tile.BiasAddOp)
    def run_bias_add(
        self, interpreter: Interpreter, op: tile.BiasAddOp, args: PythonValues
    ) -> PythonValues:
        acc, bias = args
        if _is_float(acc):
            acc += bias
        else:
            low, high = accumulator_bounds(acc)
            acc[...] = np.clip(acc.astype(np.int64) + bias.astype(np.int64), low, high)
        return ()

    @impl(tile.RequantizeOp)
    def run_requantize(
        self, interpreter: Interpreter, op: tile.RequantizeOp, args: PythonValues
    ) -> PythonValues:
        acc, params, output = args
        props = op.props()
        zero_point = props.int("input_zero_point") or 0
        RequantizeTile(op, tile.element_of(op.output), zero_point)(acc, params, output)
        return ()

    @impl(tile.PoolOp)
    def run_pool(
        self, interpreter: Interpreter, op: tile.PoolOp, args: PythonValues
    ) -> PythonValues:
        source, output = args[0], args[1]
        origin = [_index(v) for v in args[2:]]
        props = op.props()
        kernel = props.ints("kernel_shape") or []
        strides = props.ints("strides") or [1, 1]
        dilations = props.ints("dilations") or [1, 1]
        out_sizes = output.shape[1:3]
        floating = _is_float(output)
        average = props.str("kind") == "average"
        zero_point = 0 if floating or not average else props.int("input_zero_point") or 0
        x = _channels_first(source.astype(np.float64 if floating else np.int64) - zero_point)
        views = [
            view for _, view in nn_interp._window_views(x, kernel, strides, dilations, out_sizes)
        ]
        if not average:
            _store(output, np.maximum.reduce(views).transpose(0, 2, 3, 1))
            return ()
        sums = np.sum(views, axis=0).transpose(0, 2, 3, 1)
        counts = _pool_counts(op, origin, out_sizes)[None, :, :, None]
        if floating:
            _store(output, sums / counts)
            return ()
        multiplier, shift = props.int("multiplier"), props.int("shift")
        assert multiplier is not None and shift is not None  # the properties have defaults
        rounding = props.str("rounding") or fixed_point.HALF_EVEN
        low, high = tile.storage_range(tile.element_of(op.output))
        bias = props.int("bias")
        if bias is not None:
            mean = fixed_point.tflite_raw_mean(
                sums, counts, zero_point, multiplier, shift, rounding, bias
            )
            _store(output, np.clip(mean, low, high))
            return ()
        averages = fixed_point.pool_average(
            sums, counts, multiplier, shift, rounding, props.int("output_zero_point") or 0
        )
        _store(output, np.clip(averages + (props.int("output_zero_point") or 0), low, high))
        return ()

    @impl(tile.AddOp)
    def run_add(self, interpreter: Interpreter, op: tile.AddOp, args: PythonValues) -> PythonValues:
        AddTile(op)(*args)
        return ()

    @impl(tile.MulOp)
    def run_mul(self, interpreter: Interpreter, op: tile.MulOp, args: PythonValues) -> PythonValues:
        MulTile(op)(*args)
        return ()

    @impl(tile.ClampOp)
    def run_clamp(
        self, interpreter: Interpreter, op: tile.ClampOp, args: PythonValues
    ) -> PythonValues:
        source, output = args
        props = op.props()
        if _is_float(output):
            low, high = props.attr("clamp_min"), props.attr("clamp_max")
            _store(
                output,
                np.clip(
                    source,
                    -np.inf if low is None else _number(low),
                    np.inf if high is None else _number(high),
                ),
            )
            return ()
        low_int, high_int = tile.check_clamp(props, tile.element_of(op.output))
        _store(output, np.clip(source, low_int, high_int))
        return ()

    @impl(tile.TransposeOp)
    def run_transpose(
        self, interpreter: Interpreter, op: tile.TransposeOp, args: PythonValues
    ) -> PythonValues:
        source, output = args
        _store(output, np.transpose(source, op.props().ints("perm") or []))
        return ()

    @impl(tile.MulFOp)
    def run_mulf(
        self, interpreter: Interpreter, op: tile.MulFOp, args: PythonValues
    ) -> PythonValues:
        lhs, rhs, output = args
        _store(output, lhs * rhs)
        return ()

    @impl(tile.AddFOp)
    def run_addf(
        self, interpreter: Interpreter, op: tile.AddFOp, args: PythonValues
    ) -> PythonValues:
        lhs, rhs, output = args
        _store(output, lhs + rhs)
        return ()

    @impl(tile.QuantizeOp)
    def run_quantize(
        self, interpreter: Interpreter, op: tile.QuantizeOp, args: PythonValues
    ) -> PythonValues:
        source, output = args
        _store(output, quant_interp.quantize(source, _cast_type(op, op.output)))
        return ()

    @impl(tile.DequantizeOp)
    def run_dequantize(
        self, interpreter: Interpreter, op: tile.DequantizeOp, args: PythonValues
    ) -> PythonValues:
        source, output = args
        _store(output, quant_interp.dequantize(source, _cast_type(op, op.input)))
        return ()

    @impl(tile.SoftmaxOp)
    def run_softmax(
        self, interpreter: Interpreter, op: tile.SoftmaxOp, args: PythonValues
    ) -> PythonValues:
        source, *mask, table, output = args
        props = op.props()
        low, high = tile.storage_range(tile.element_of(op.output))
        result = fixed_point.softmax(
            source,
            np.asarray(table, dtype=np.int64),
            props.int("multiplier") or 0,
            props.int("shift") or 0,
            props.int("output_zero_point") or 0,
            low,
            high,
            mask=mask[0] if mask else None,
        )
        _store(output, result)
        return ()

    @impl(tile.LayerNormOp)
    def run_layer_norm(
        self, interpreter: Interpreter, op: tile.LayerNormOp, args: PythonValues
    ) -> PythonValues:
        source, params, output = args
        props = op.props()
        low, high = tile.storage_range(tile.element_of(op.output))
        pairs = np.asarray(params, dtype=np.int64)
        result = fixed_point.layer_norm(
            source,
            props.int("input_zero_point") or 0,
            props.int("epsilon_term") or 0,
            pairs[:, 0],
            pairs[:, 1],
            props.int("multiplier") or 0,
            props.int("shift") or 0,
            props.int("output_zero_point") or 0,
            low,
            high,
            bits=source.dtype.itemsize * 8,
        )
        _store(output, result)
        return ()

    @impl(tile.LRNOp)
    def run_lrn(self, interpreter: Interpreter, op: tile.LRNOp, args: PythonValues) -> PythonValues:
        source, table, output = args
        props = op.props()
        low, high = tile.storage_range(tile.element_of(op.output))
        result = fixed_point.lrn(
            source,
            props.int("input_zero_point") or 0,
            props.int("size") or 1,
            np.asarray(table, dtype=np.int64),
            props.int("multiplier") or 0,
            props.int("shift") or 0,
            props.int("output_zero_point") or 0,
            low,
            high,
            bits=source.dtype.itemsize * 8,
        )
        _store(output, result)
        return ()

    @impl(tile.ResizeOp)
    def run_resize(
        self, interpreter: Interpreter, op: tile.ResizeOp, args: PythonValues
    ) -> PythonValues:
        source, output = args[0], args[1]
        props = op.props()
        axes = props.ints("axes") or []
        scales = props.floats("scales") or []
        mode = props.str("mode") or "linear"
        coordinates = props.str("coordinate_transformation_mode") or "half_pixel"
        bits = fixed_point.RESIZE_FRACTION_BITS.get(source.dtype.itemsize * 8, 0)
        windows = resize_windows(op, [_index(v) for v in args[2:]])
        if windows is not None:
            for axis, scale, window in zip(axes, scales, windows):
                reads = resize_axis_reads(
                    mode, coordinates, props.str("nearest_mode") or "", scale,
                    window.in_length, window.out_length, bits,
                )  # fmt: skip
                part = window.part(output.shape[axis])
                problem = window.check(
                    [r[part] - window.in_origin for r in reads], source.shape[axis]
                )
                if problem is not None:
                    raise error(f"{op.name} along axis {axis}: {problem}", op)
        if mode == "nearest":
            gathered = source
            for index, (axis, scale) in enumerate(zip(axes, scales)):
                place = None if windows is None else windows[index]
                in_length = source.shape[axis] if place is None else place.in_length
                out_length = output.shape[axis] if place is None else place.out_length
                (indices,) = resize_axis_reads(
                    mode, coordinates, props.str("nearest_mode") or "", scale,
                    in_length, out_length, bits,
                )  # fmt: skip
                if place is not None:
                    indices = indices[place.part(output.shape[axis])] - place.in_origin
                gathered = np.take(gathered, indices, axis=axis)
            output[...] = gathered
            return ()
        resized = fixed_point.resize_linear(
            source,
            axes,
            scales,
            coordinates,
            [output.shape[axis] for axis in axes],
            bits,
            windows,
        )
        _store(output, resized)
        return ()

    @impl(tile.LutOp)
    def run_lut(self, interpreter: Interpreter, op: tile.LutOp, args: PythonValues) -> PythonValues:
        source, table, output = args
        if source.dtype == np.int16:
            _store(output, fixed_point.interpolated_lookup(source, table))
            return ()
        first, _ = tile.storage_range(tile.element_of(op.input))
        _store(output, table[source.astype(np.int64) - first])
        return ()
