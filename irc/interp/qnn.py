"""The integer reference interpreter of the `qnn` dialect: the bit-exact specification.

Every op computes in integers exactly as its docstring in irc/dialects/qnn.py says:
sums of products exactly, then the requantization rule of irc/ir/fixed_point.py
(64-bit products, round half to even, zero point, saturation). An NPU
running a `qnn` program must give the same integers.

Speed without giving up exactness: convolutions and matrix products multiply the
zero-point-corrected integers as float64 with BLAS (through the `nn` interpreter's
im2col). A float64 holds every integer below 2^53 exactly, and each product of two
8-bit values and every partial sum of a K-term dot product is below 2^53 for any
K < 2^37, so BLAS returns the exact integer sum whatever order it adds in. The
verifier bounds the worst-case sum below 2^31 anyway (the int32 accumulator); with
16-bit activations (products below 2^23, or 2^31 for two 16-bit operands) it bounds
it below 2^47, the wide accumulator, still exact in float64.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls

from irc.dialects import qnn
from irc.dialects.base import channels_first_perm, tensor_type
from irc.dialects.quant import UniformQuantizedType, full_range, quantized_element
from irc.interp import nn as nn_interp
from irc.interp.quant import chunk_indices
from irc.ir import fixed_point


def _element(value_type: object) -> UniformQuantizedType:
    element = quantized_element(value_type)  # type: ignore[arg-type]
    assert element is not None, "the verifier guarantees a quantized element type"
    return element


def _result_dtype(op: qnn.QNNOp) -> np.dtype:
    return nn_interp.result_dtype(op.results[0])


def centered(stored: np.ndarray, value_type: object, axis: int | None = None) -> np.ndarray:
    """stored - zero_point as int64; a per-axis type's zero points apply along `axis`.

    `axis` overrides the type's quantized axis (for a weight seen channels-first).
    """
    element = _element(value_type)
    zero_points = np.asarray(element.zero_point_values, dtype=np.int64)
    values = stored.astype(np.int64)
    if not element.is_per_axis:
        return values - zero_points[0]
    axis = element.quantized_axis if axis is None else axis
    assert axis is not None
    shape = [1] * stored.ndim
    shape[axis] = zero_points.size
    return values - zero_points.reshape(shape)


def exact_integers(values: np.ndarray) -> np.ndarray:
    """Integer-valued float64 results (exact BLAS sums) as int64."""
    return np.rint(values).astype(np.int64)


def saturate_int32(values: np.ndarray) -> np.ndarray:
    """Clamp int64 values to the int32 range and store them as int32."""
    return np.clip(values, fixed_point.INT32_MIN, fixed_point.INT32_MAX).astype(np.int32)


def saturate_accumulator(values: np.ndarray, op: qnn.QNNOp) -> np.ndarray:
    """`values` saturated to the range of `op`'s accumulator: int32, or the 48-bit
    range of a wide (i64) one."""
    wide = _result_dtype(op) == np.int64
    low, high = fixed_point.accumulator_bounds(wide)
    return np.clip(values, low, high).astype(np.int64 if wide else np.int32)


def window_params(op: qnn.QNNOp, spatial: int) -> tuple[list[int], list[int], list[int]]:
    """Strides, pads ([begins..., ends...]) and dilations of a windowed op, defaulted."""
    props = op.props()
    strides = props.ints("strides") or [1] * spatial
    pads = props.ints("pads") or [0] * (2 * spatial)
    dilations = props.ints("dilations") or [1] * spatial
    return strides, pads, dilations


def channels_first_result_shape(op: qnn.QNNOp) -> tuple[int, ...]:
    """The shape of the op's result, seen channels-first whatever the op's layout."""
    shape = nn_interp.result_shape(op.results[0])
    if op.props().str("layout") == "nhwc":
        return tuple(shape[p] for p in channels_first_perm(len(shape)))
    return shape


def _bias(args: PythonValues, index: int) -> np.ndarray | None:
    return args[index].astype(np.int64) if len(args) > index else None


@register_impls
class QNNFunctions(InterpreterFunctions):
    """Integer numpy implementations of every `qnn` op, for xDSL's `Interpreter`."""

    # ---- constants ---------------------------------------------------------------------

    @impl(qnn.ConstantOp)
    def run_constant(
        self, interpreter: Interpreter, op: qnn.ConstantOp, args: PythonValues
    ) -> PythonValues:
        return (op.array(),)

    # ---- convolution and matrix products ---------------------------------------------

    @impl(qnn.ConvOp)
    @nn_interp.channels_last_aware
    def run_conv(
        self, interpreter: Interpreter, op: qnn.ConvOp, args: PythonValues
    ) -> PythonValues:
        x = centered(args[0], op.input.type).astype(np.float64)
        weight = centered(args[1], op.weight.type, axis=0).astype(np.float64)
        strides, pads, dilations = window_params(op, weight.ndim - 2)
        group = op.props().int("group") or 1
        out_sizes = channels_first_result_shape(op)[2:]
        sums = nn_interp.conv(x, weight, None, strides, pads, dilations, group, out_sizes)
        return (self._accumulate(op, exact_integers(sums), _bias(args, 2)),)

    @impl(qnn.ConvTransposeOp)
    @nn_interp.channels_last_aware
    def run_conv_transpose(
        self, interpreter: Interpreter, op: qnn.ConvTransposeOp, args: PythonValues
    ) -> PythonValues:
        x = centered(args[0], op.input.type).astype(np.float64)
        # Seen channels-first, the weight (C, M/group, k...) has its output channels on axis 1.
        weight = centered(args[1], op.weight.type, axis=1).astype(np.float64)
        strides, pads, dilations = window_params(op, weight.ndim - 2)
        group = op.props().int("group") or 1
        out_sizes = channels_first_result_shape(op)[2:]
        sums = nn_interp.conv_transpose(x, weight, None, strides, pads, dilations, group, out_sizes)
        return (self._accumulate(op, exact_integers(sums), _bias(args, 2)),)

    @staticmethod
    def _accumulate(op: qnn.QNNOp, sums: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
        """sums + bias along the channel axis (1), saturated to the accumulator."""
        if bias is not None:
            sums = sums + bias.reshape(-1, *([1] * (sums.ndim - 2)))
        return saturate_accumulator(sums, op)

    @impl(qnn.MatMulOp)
    def run_matmul(
        self, interpreter: Interpreter, op: qnn.MatMulOp, args: PythonValues
    ) -> PythonValues:
        lhs = centered(args[0], op.lhs.type).astype(np.float64)
        rhs = centered(args[1], op.rhs.type).astype(np.float64)
        return (saturate_accumulator(exact_integers(np.matmul(lhs, rhs)), op),)

    @impl(qnn.GemmOp)
    def run_gemm(
        self, interpreter: Interpreter, op: qnn.GemmOp, args: PythonValues
    ) -> PythonValues:
        props = op.props()
        lhs = centered(args[0], op.lhs.type).astype(np.float64)
        if props.bool("trans_a"):
            lhs = lhs.T
        # The weight is centered and converted to float64 a slice of K at a time
        # (CHUNK_ELEMENTS): whole, its int64 and float64 copies took 1.2 GB on
        # ZFNet-512's 4096 x 18432 weight. The partial sums are exact integers, so
        # their sum is the exact sum.
        trans_b = props.bool("trans_b")
        sums = np.zeros((lhs.shape[0], args[1].shape[0 if trans_b else 1]), np.int64)
        for index in chunk_indices(args[1].shape, axis=1 if trans_b else 0):
            rhs = centered(args[1][index], op.rhs.type).astype(np.float64)
            columns = index[1] if trans_b else index[0]
            sums += exact_integers(lhs[:, columns] @ (rhs.T if trans_b else rhs))
        bias = _bias(args, 2)
        if bias is not None:
            sums = sums + bias
        return (saturate_accumulator(sums, op),)

    # ---- requantization ----------------------------------------------------------------

    @impl(qnn.RequantizeOp)
    def run_requantize(
        self, interpreter: Interpreter, op: qnn.RequantizeOp, args: PythonValues
    ) -> PythonValues:
        props = op.props()
        if quantized_element(op.input.type) is None:
            accumulator = args[0].astype(np.int64)
        else:
            accumulator = centered(args[0], op.input.type)
        output = _element(op.result.type)
        low, high = qnn.clamp_bounds(op)
        result = fixed_point.requantize(
            accumulator,
            props.ints("multiplier") or [],
            props.ints("shift") or [],
            output.zero_point_values[0],
            low,
            high,
            props.int("axis"),
            wide=nn_interp.result_dtype(op.input) == np.int64,
            rounding=props.str("rounding") or fixed_point.HALF_EVEN,
        )
        return (result.astype(_result_dtype(op)),)

    # ---- elementwise arithmetic ----------------------------------------------------------

    @impl(qnn.AddOp)
    def run_add(self, interpreter: Interpreter, op: qnn.AddOp, args: PythonValues) -> PythonValues:
        return (self._add(op, args, subtract=False),)

    @impl(qnn.SubOp)
    def run_sub(self, interpreter: Interpreter, op: qnn.SubOp, args: PythonValues) -> PythonValues:
        return (self._add(op, args, subtract=True),)

    @staticmethod
    def _add(op: qnn.AddOp | qnn.SubOp, args: PythonValues, subtract: bool) -> np.ndarray:
        """The rescaled inputs' sum (or difference), requantized (`qnn.add`)."""
        props = op.props()
        left_shift = props.int("left_shift") or 0
        lhs = np.left_shift(centered(args[0], op.lhs.type), left_shift)
        rhs = np.left_shift(centered(args[1], op.rhs.type), left_shift)
        input_rounding = props.str("input_rounding") or fixed_point.HALF_EVEN
        lhs = fixed_point.rounding_multiply(
            lhs, op.lhs_multiplier.value.data, op.lhs_shift.value.data, rounding=input_rounding
        )
        rhs = fixed_point.rounding_multiply(
            rhs, op.rhs_multiplier.value.data, op.rhs_shift.value.data, rounding=input_rounding
        )
        output = _element(op.result.type)
        low, high = qnn.clamp_bounds(op)
        result = fixed_point.requantize(
            lhs - rhs if subtract else lhs + rhs,
            op.multiplier.value.data,
            op.shift.value.data,
            output.zero_point_values[0],
            low,
            high,
            rounding=props.str("rounding") or fixed_point.HALF_EVEN,
        )
        return result.astype(_result_dtype(op))

    @impl(qnn.MulOp)
    def run_mul(self, interpreter: Interpreter, op: qnn.MulOp, args: PythonValues) -> PythonValues:
        product = centered(args[0], op.lhs.type) * centered(args[1], op.rhs.type)
        output = _element(op.result.type)
        low, high = qnn.clamp_bounds(op)
        result = fixed_point.requantize(
            product,
            op.multiplier.value.data,
            op.shift.value.data,
            output.zero_point_values[0],
            low,
            high,
            rounding=op.props().str("rounding") or fixed_point.HALF_EVEN,
        )
        return (result.astype(_result_dtype(op)),)

    @impl(qnn.ClampOp)
    def run_clamp(
        self, interpreter: Interpreter, op: qnn.ClampOp, args: PythonValues
    ) -> PythonValues:
        low, high = qnn.clamp_bounds(op)
        return (np.clip(args[0], low, high).astype(args[0].dtype),)

    @impl(qnn.ResizeOp)
    def run_resize(
        self, interpreter: Interpreter, op: qnn.ResizeOp, args: PythonValues
    ) -> PythonValues:
        axes, scales, bits = qnn.resize_plan(op)
        out_shape = tensor_type(op.result).get_shape()
        mode = op.props().str("coordinate_transformation_mode") or "half_pixel"
        resized = fixed_point.resize_linear(
            args[0], axes, scales, mode, [out_shape[axis] for axis in axes], bits
        )
        return (resized.astype(_result_dtype(op)),)

    @impl(qnn.LutOp)
    def run_lut(self, interpreter: Interpreter, op: qnn.LutOp, args: PythonValues) -> PythonValues:
        table = np.asarray(op.props().ints("table"), dtype=np.int64)
        element = _element(op.input.type)
        if element.storage_bits.data == 16:
            looked_up = fixed_point.interpolated_lookup(args[0], table)
            return (looked_up.astype(_result_dtype(op)),)
        # The table covers the full 8-bit range, whatever the type's storage range.
        first, _ = full_range(element.storage_bits.data, bool(element.signed.data))
        return (table[args[0].astype(np.int64) - first].astype(_result_dtype(op)),)

    @impl(qnn.SoftmaxOp)
    def run_softmax(
        self, interpreter: Interpreter, op: qnn.SoftmaxOp, args: PythonValues
    ) -> PythonValues:
        output = _element(op.result.type)
        low, high = output.storage_range
        result = fixed_point.softmax(
            args[0],
            np.asarray(op.props().ints("table"), dtype=np.int64),
            op.multiplier.value.data,
            op.shift.value.data,
            output.zero_point_values[0],
            low,
            high,
            mask=args[1] if len(args) > 1 else None,
        )
        return (result.astype(_result_dtype(op)),)

    @impl(qnn.TFLiteSoftmaxOp)
    def run_tflite_softmax(
        self, interpreter: Interpreter, op: qnn.TFLiteSoftmaxOp, args: PythonValues
    ) -> PythonValues:
        output = _element(op.result.type)
        low, high = output.storage_range
        result = fixed_point.float_table_softmax(
            args[0],
            np.asarray(op.props().floats("table"), dtype=np.float32),
            output.scale_values[0],
            output.zero_point_values[0],
            low,
            high,
        )
        return (result.astype(_result_dtype(op)),)

    @impl(qnn.LayerNormOp)
    def run_layer_norm(
        self, interpreter: Interpreter, op: qnn.LayerNormOp, args: PythonValues
    ) -> PythonValues:
        props = op.props()
        output, input_element = _element(op.result.type), _element(op.input.type)
        low, high = output.storage_range
        result = fixed_point.layer_norm(
            args[0],
            input_element.zero_point_values[0],
            props.int("epsilon_term") or 0,
            np.asarray(props.ints("weights"), dtype=np.int64),
            np.asarray(props.ints("biases"), dtype=np.int64),
            props.int("multiplier") or 0,
            props.int("shift") or 0,
            output.zero_point_values[0],
            low,
            high,
            bits=input_element.storage_bits.data,
        )
        return (result.astype(_result_dtype(op)),)

    @impl(qnn.LRNOp)
    def run_lrn(self, interpreter: Interpreter, op: qnn.LRNOp, args: PythonValues) -> PythonValues:
        props = op.props()
        output, input_element = _element(op.result.type), _element(op.input.type)
        low, high = output.storage_range
        channels_last = props.str("layout") == "nhwc"
        source = args[0] if channels_last else np.moveaxis(args[0], 1, -1)
        result = fixed_point.lrn(
            source,
            input_element.zero_point_values[0],
            props.int("size") or 1,
            np.asarray(props.ints("table"), dtype=np.int64),
            props.int("multiplier") or 0,
            props.int("shift") or 0,
            output.zero_point_values[0],
            low,
            high,
            bits=input_element.storage_bits.data,
        )
        if not channels_last:
            result = np.moveaxis(result, -1, 1)
        return (np.ascontiguousarray(result).astype(_result_dtype(op)),)

    # ---- pooling ---------------------------------------------------------------------------

    @impl(qnn.MaxPoolOp)
    @nn_interp.channels_last_aware
    def run_max_pool(
        self, interpreter: Interpreter, op: qnn.MaxPoolOp, args: PythonValues
    ) -> PythonValues:
        # float64 holds every stored value exactly and pads with -inf, which never wins.
        result = nn_interp.max_pool(args[0].astype(np.float64), op)  # type: ignore[arg-type]
        return (result.astype(args[0].dtype),)

    @impl(qnn.AveragePoolOp)
    @nn_interp.channels_last_aware
    def run_average_pool(
        self, interpreter: Interpreter, op: qnn.AveragePoolOp, args: PythonValues
    ) -> PythonValues:
        props = op.props()
        x = centered(args[0], op.input.type)
        kernel = props.ints("kernel_shape") or []
        strides, pads, dilations = window_params(op, len(kernel))
        out_sizes = channels_first_result_shape(op)[2:]
        padded = nn_interp._pad_for_windows(x, kernel, strides, pads, dilations, out_sizes, 0)
        sums = np.zeros((*x.shape[:2], *out_sizes), np.int64)
        for _, view in nn_interp._window_views(padded, kernel, strides, dilations, out_sizes):
            sums += view
        spatial = len(kernel)
        counts = np.ones((), np.int64)
        for i in range(spatial):
            axis_counts = nn_interp._pool_counts(
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
        return (self._average(op, sums, counts),)

    @impl(qnn.GlobalAveragePoolOp)
    @nn_interp.channels_last_aware
    def run_global_average_pool(
        self, interpreter: Interpreter, op: qnn.GlobalAveragePoolOp, args: PythonValues
    ) -> PythonValues:
        x = centered(args[0], op.input.type)
        axes = tuple(range(2, x.ndim))
        sums = x.sum(axis=axes, keepdims=True)
        count = math.prod(x.shape[2:])
        props = op.props()
        bias = props.int("bias")
        if bias is None:
            return (self._average(op, sums, count),)
        output = _element(op.result.type)
        mean = fixed_point.tflite_raw_mean(
            sums,
            count,
            _element(op.input.type).zero_point_values[0],
            props.int("multiplier") or 0,
            props.int("shift") or 0,
            props.str("rounding") or fixed_point.HALF_EVEN,
            bias,
        )
        result = fixed_point.saturate(mean, output.storage_range)
        return (result.astype(_result_dtype(op)),)

    @staticmethod
    def _average(op: qnn.QNNOp, sums: np.ndarray, counts: np.ndarray | int) -> np.ndarray:
        """round_half_even(sums * m / counts) + z_out, saturated to the result's storage;
        or as the op's `rounding` says (`fixed_point.pool_average`)."""
        props = op.props()
        multiplier, shift = props.int("multiplier"), props.int("shift")
        assert multiplier is not None and shift is not None  # the properties have defaults
        output = _element(op.results[0].type)
        averages = fixed_point.pool_average(
            sums,
            counts,
            multiplier,
            shift,
            props.str("rounding") or fixed_point.HALF_EVEN,
            output.zero_point_values[0],
        )
        result = fixed_point.saturate(averages + output.zero_point_values[0], output.storage_range)
        return result.astype(_result_dtype(op))

    # ---- data movement -------------------------------------------------------------------

    @impl(qnn.PadOp)
    def run_pad(self, interpreter: Interpreter, op: qnn.PadOp, args: PythonValues) -> PythonValues:
        props = op.props()
        zero_point = _element(op.input.type).zero_point_values[0]
        result = nn_interp.pad(
            args[0],
            props.ints("pads") or [],
            props.str("mode") or "constant",
            zero_point,
            op,  # type: ignore[arg-type]
        )
        return (result,)

    @impl(qnn.ConcatOp)
    def run_concat(
        self, interpreter: Interpreter, op: qnn.ConcatOp, args: PythonValues
    ) -> PythonValues:
        props = op.props()
        output = _element(op.result.type)
        dtype = _result_dtype(op)
        multipliers, shifts = props.ints("multipliers"), props.ints("shifts")
        pieces = []
        for index, (value, operand) in enumerate(zip(args, op.inputs)):
            if multipliers is None or shifts is None:
                pieces.append(value.astype(dtype, copy=False))
                continue
            low, high = output.storage_range
            rescaled = fixed_point.requantize(
                centered(value, operand.type),
                multipliers[index],
                shifts[index],
                output.zero_point_values[0],
                low,
                high,
            )
            pieces.append(rescaled.astype(dtype))
        axis = (props.int("axis") or 0) % len(nn_interp.result_shape(op.result))
        return (np.concatenate(pieces, axis=axis),)
