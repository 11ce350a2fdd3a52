"""`lower-to-qnn`: turn the QDQ patterns of the quantized level into integer `qnn` ops.

A QDQ pattern is an `nn` op whose float operands are `quant.dcast`s of quantized
values (or, for a bias, float constants) and whose every result is read by exactly
one `quant.qcast`: the op computes on dequantized integers and its result is
quantized again. `quantize` writes such patterns, and so does the ONNX importer for
QuantizeLinear/DequantizeLinear models. Each pattern becomes integer ops on the
quantized values, with the quantized types of the casts (`LOWERINGS`):

    conv, conv_transpose, gemm, matmul  -> qnn.<op> (i32 accumulator) + qnn.requantize
    add, mul                            -> qnn.add, qnn.mul
    div by a positive constant scalar   -> qnn.requantize (the divisor in its scale)
    softmax, masked_softmax (last axis) -> qnn.softmax (the mask an i8 constant)
    layer_norm (last axis)              -> qnn.layer_norm
    lrn                                 -> qnn.lrn
    average_pool, global_average_pool   -> qnn.average_pool, qnn.global_average_pool
    max_pool, global_max_pool           -> qnn.max_pool
    relu, clip                          -> qnn.clamp
    pad                                 -> qnn.pad (zero padding holds the zero point)
    concat                              -> qnn.concat (inputs of another type rescaled)
    sigmoid, tanh, hard_swish, ...      -> qnn.lut, if the target has a lookup table
    reshape, transpose, slice, ...      -> the same nn op on the quantized tensor

Requantization multipliers and shifts, clamp bounds of fused relu/clip activations,
int32 biases (recomputed when their scale is not s_in * s_w) and lookup tables come
from irc/quantize/scheme.py. A value-moving op whose result type differs from its
input's gets a `qnn.requantize` after it. Weights and biases (`quant.scast` of an
integer constant, or `quant.qcast` of a float constant) become `qnn.constant`s.

An op that does not match stays float between its dcasts and qcasts: a float island,
which the partitioner sends to the CPU (or to an NPU with fp16). Lookup-table ops are
lowered only when the target (the `target` option, else the active target of
`irc-opt --target`) has a lookup table of at least 256 entries; without any target,
lookup tables are assumed to exist, and the remark says so.

Afterwards, casts that cancel (`qcast(dcast(q))` of one type) are folded, and casts
and constants left without users are erased. The pass emits one remark per
function with the number of ops lowered, and a note at each float op with its reason.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    f32,
    i32,
    i64,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import VerifyException

from irc.diagnostics import Diagnostic, Location, Severity, emit
from irc.dialects import nn, qnn, quant
from irc.dialects.base import tensor_type
from irc.dialects.quant import UniformQuantizedType, quantized_element
from irc.ir import fixed_point
from irc.ir.constants import constant_array
from irc.ir.placement import FLOAT_REASON_ATTR
from irc.passes import option
from irc.quantize import scheme
from irc.quantize.qdq import NOT_A_POSITIVE_DIVISOR, ROLES, Role, positive_divisor
from irc.targets.support import unsupported_reasons

if TYPE_CHECKING:
    from irc.targets import Target

LUT_ENTRIES = 256
"""Entries a lookup table of int8 (or uint8) values needs."""


class NotLowerable(Exception):
    """Raised by a lowering when the op must stay float; the message says why."""


# --------------------------------------------------------------------------------------
# Matching the QDQ pattern


@dataclass
class QDQMatch:
    """An op in the QDQ pattern: the quantized value behind each operand (None for a
    float constant operand) and the qcast that reads each result."""

    op: nn.NNOp
    inputs: list[SSAValue | None]
    outputs: list[quant.QuantizeCastOp]

    def input(self, index: int) -> SSAValue:
        """The quantized value behind operand `index` (which must have one)."""
        value = self.inputs[index]
        if value is None:
            raise NotLowerable(f"operand #{index} is a float constant, not a quantized value")
        return value

    def element(self, index: int) -> UniformQuantizedType:
        """The quantized element type of operand `index`."""
        element = quantized_element(self.input(index).type)
        assert element is not None
        return element

    def output_type(self, index: int = 0) -> TensorType:
        """The quantized tensor type of result `index`."""
        result_type = self.outputs[index].result.type
        assert isinstance(result_type, TensorType)
        return result_type

    def output_element(self, index: int = 0) -> UniformQuantizedType:
        """The quantized element type of result `index`."""
        element = quantized_element(self.output_type(index))
        assert element is not None
        return element


def match_qdq(op: nn.NNOp) -> QDQMatch | str:
    """The QDQ pattern around `op`, or why it is not one."""
    inputs: list[SSAValue | None] = []
    for index, operand in enumerate(op.operands):
        owner = operand.owner
        if isinstance(owner, quant.DequantizeCastOp):
            inputs.append(owner.input)
        elif isinstance(owner, nn.ConstantOp) and owner.has_data():
            inputs.append(None)  # a float constant: a bias may be quantized here
        else:
            return f"operand #{index} is not a dequantized value"
    outputs: list[quant.QuantizeCastOp] = []
    for index, result in enumerate(op.results):
        users = [use.operation for use in result.uses]
        if len(users) != 1 or not isinstance(users[0], quant.QuantizeCastOp):
            what = "is not quantized" if not users else "is read as a float"
            return f"result #{index} {what}"
        outputs.append(users[0])
    return QDQMatch(op, inputs, outputs)


def constant_storage(value: SSAValue) -> tuple[np.ndarray, TensorType] | None:
    """The stored integers and quantized type of a constant quantized value: an integer
    `nn.constant` through `quant.scast`, a float one through `quant.qcast`, or a
    `qnn.constant`. None for a value computed at run time."""
    from irc.interp.quant import quantize

    value_type = value.type
    element = quantized_element(value_type)
    if element is None or not isinstance(value_type, TensorType):
        return None
    owner = value.owner
    if isinstance(owner, qnn.ConstantOp) and owner.has_data():
        return np.asarray(owner.array()), value_type
    if isinstance(owner, quant.StorageCastOp | quant.QuantizeCastOp):
        source = owner.input.owner
        if isinstance(source, nn.ConstantOp) and source.has_data():
            data = np.asarray(source.array())
            if isinstance(owner, quant.QuantizeCastOp):
                data = quantize(data, element)
            return data, value_type
    return None


# --------------------------------------------------------------------------------------
# Building the integer ops


@dataclass
class Lowering:
    """What a lowering function gets: the match, and where to put the new ops."""

    match: QDQMatch
    target: Target | None
    new_ops: list[Operation] = field(default_factory=list)

    @property
    def op(self) -> nn.NNOp:
        """The nn op being lowered."""
        return self.match.op

    def add(self, op: Operation, location: Attribute | None = None) -> Operation:
        """Record a new op (inserted before the matched op once all are built), at
        `location` or the matched op's."""
        op.location = location or self.op.location  # type: ignore[assignment]
        self.new_ops.append(op)
        return op

    def constant(self, index: int) -> SSAValue:
        """Operand `index` as a `qnn.constant` if it is a constant, else its value."""
        value = self.match.input(index)
        storage = constant_storage(value)
        if storage is None or isinstance(value.owner, qnn.ConstantOp):
            return value
        data, value_type = storage
        constant = qnn.ConstantOp.from_array(data, value_type)
        constant.result.name_hint = value.name_hint
        return self.add(constant, source_location(value)).results[0]

    def rescale(self, value: SSAValue, target_type: TensorType) -> SSAValue:
        """`value` requantized to `target_type` (itself if the types are equal)."""
        if value.type == target_type:
            return value
        requantize = rescale_op(value, target_type)
        if requantize is None:
            raise NotLowerable("rescaling between per-axis types")
        return self.add(requantize).results[0]


def rescale_op(value: SSAValue, target_type: TensorType) -> qnn.RequantizeOp | None:
    """qnn.requantize of a per-tensor quantized `value` to another per-tensor type
    (None if either type is per axis)."""
    source = quantized_element(value.type)
    target = quantized_element(target_type)
    assert source is not None and target is not None
    if source.is_per_axis or target.is_per_axis:
        return None
    multiplier, shift = scheme.rescale_multiplier(source.scale_values[0], target.scale_values[0])
    return qnn.RequantizeOp.build(
        [value], {"multiplier": _ints([multiplier]), "shift": _ints([shift])}, [target_type]
    )


def source_location(value: SSAValue) -> Attribute | None:
    """The location of the op a chain of quant casts starts from: weights and biases
    keep the location (the name) of the constant they were."""
    while isinstance(
        value.owner, quant.QuantizeCastOp | quant.DequantizeCastOp | quant.StorageCastOp
    ):
        value = value.owner.input
    return value.owner.location if isinstance(value.owner, Operation) else None


def _ints(values: Sequence[int] | np.ndarray) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, [int(v) for v in values])


def _int(value: int | None) -> IntegerAttr | None:
    return None if value is None else IntegerAttr(int(value), i64)


def _props(op: nn.NNOp, *names: str) -> dict[str, Attribute | None]:
    """The op's properties called `names` (those it has)."""
    return {name: op.properties.get(name) for name in names}


def _with_element(value_type: Attribute, element: Attribute) -> TensorType:
    assert isinstance(value_type, TensorType)
    return TensorType(element, value_type.get_shape())


def _per_tensor(element: UniformQuantizedType, what: str) -> UniformQuantizedType:
    if element.is_per_axis:
        raise NotLowerable(f"{what} is quantized per axis")
    return element


def _narrowed(element: UniformQuantizedType, low: int, high: int) -> tuple[int | None, int | None]:
    """Clamp bounds, None where a bound is the storage range's (it need not be written)."""
    storage_low, storage_high = element.storage_range
    return (low if low != storage_low else None, high if high != storage_high else None)


def _activation_clamp(op: nn.NNOp, element: UniformQuantizedType) -> tuple[int | None, int | None]:
    """Clamp bounds (None where the storage range already bounds) of a fused activation."""
    activation = op.properties.get("activation")
    if activation is None:
        return None, None
    assert isinstance(activation, nn.ActivationAttr)
    kind = activation.kind.data
    if kind == "relu":
        low, high = scheme.clamp_bounds(element, 0.0, None)
    elif kind == "clip":
        values = activation.named_values()
        low, high = scheme.clamp_bounds(element, values["min"], values["max"])
    else:
        raise NotLowerable(f"its fused activation {kind} is not a clamp")
    return _narrowed(element, low, high)


def _requantize(
    lowering: Lowering,
    accumulator: SSAValue,
    input_scale: float,
    weight: UniformQuantizedType,
    channel_axis: int | None,
    alpha: float = 1.0,
) -> SSAValue:
    """qnn.requantize of an i32 (or wide i64) accumulator of input x weight products to
    the result type, per output channel along `channel_axis` when the weight is per
    axis."""
    output = lowering.match.output_element()
    output_type = lowering.match.output_type()
    weight_scales = np.asarray(weight.scale_values, dtype=np.float64) * alpha
    if weight.is_per_axis and channel_axis is not None:
        channels = output_type.get_shape()[channel_axis]
        if channels % weight_scales.size:
            raise NotLowerable("the weight's scales do not divide the output channels")
        # A grouped conv_transpose has M/group weight scales, shared by the groups.
        weight_scales = np.tile(weight_scales, channels // weight_scales.size)
        axis: int | None = channel_axis
    else:
        weight_scales, axis = weight_scales[:1], None
    multipliers, shifts = scheme.output_multipliers(
        input_scale, weight_scales, output.scale_values[0]
    )
    if (
        tensor_type(accumulator).get_element_type() == i64
        and min(shifts) < fixed_point.WIDE_SHIFT_MIN
    ):
        raise NotLowerable(
            "the rescale of its wide (16-bit) accumulator is above 2^14, beyond the "
            "16-bit multiplier"
        )
    low, high = _activation_clamp(lowering.op, output)
    requantize = qnn.RequantizeOp.build(
        [accumulator],
        {
            "multiplier": _ints(multipliers),
            "shift": _ints(shifts),
            "axis": _int(axis),
            "clamp_min": _int(low),
            "clamp_max": _int(high),
        },
        [output_type],
    )
    return lowering.add(requantize).results[0]


def _bias(
    lowering: Lowering,
    index: int,
    input_scale: float,
    weight: UniformQuantizedType,
    channels: int,
    alpha: float = 1.0,
    beta: float = 1.0,
    wide: bool = False,
) -> SSAValue | None:
    """Operand `index` as a 1-D int32 `qnn.constant` of scale s_in * s_w per channel
    (int64 within 48 bits for the `wide` accumulator of a 16-bit input).

    A quantized bias keeps its integers when it has exactly these scales; any other
    bias (another scale, a float constant, a gemm's beta) is quantized again from its
    real values in float64, with one rounding.
    """
    op = lowering.op
    if index >= len(op.operands):
        return None
    weight_scales = np.asarray(weight.scale_values, dtype=np.float32)
    if weight_scales.size > 1:  # a grouped conv_transpose has M/group scales
        weight_scales = np.tile(weight_scales, channels // weight_scales.size)
    expected = np.broadcast_to(
        scheme.bias_scales(input_scale, weight_scales * np.float32(alpha)), (channels,)
    )
    quantized_bias = lowering.match.inputs[index]
    name = (quantized_bias or op.operands[index]).name_hint
    location = source_location(op.operands[index])
    if quantized_bias is None:
        constant = op.operands[index].owner
        assert isinstance(constant, nn.ConstantOp)
        real = np.asarray(constant.array(), dtype=np.float64)
    else:
        storage = constant_storage(quantized_bias)
        if storage is None:
            raise NotLowerable("the bias is not a constant")
        stored, bias_type = storage
        element = quantized_element(bias_type)
        assert element is not None
        scales = np.asarray(element.scale_values, dtype=np.float32)
        zero_points = np.asarray(element.zero_point_values, dtype=np.int64)
        if (
            beta == 1.0
            and stored.shape == (channels,)
            and element.storage_type == (i64 if wide else i32)
            and not zero_points.any()
            and np.array_equal(np.broadcast_to(scales, (channels,)), expected)
        ):
            return _bias_constant(lowering, stored.astype(np.int64), expected, name, location, wide)
        shape = [1] * stored.ndim
        if element.quantized_axis is not None:
            shape[element.quantized_axis] = scales.size
        centered = stored.astype(np.int64) - zero_points.reshape(shape)
        real = centered * scales.astype(np.float64).reshape(shape)
    # Any bias shape that broadcasts to the result: one value per channel is needed.
    rows = np.atleast_1d(real * beta)
    rows = np.broadcast_to(
        rows.reshape(-1, rows.shape[-1]), (rows.size // rows.shape[-1], channels)
    )
    if not np.all(rows == rows[:1]):
        raise NotLowerable("the bias varies along more than the channel axis")
    quotient = np.round(rows[0] / expected.astype(np.float64))
    data = np.clip(quotient, *fixed_point.accumulator_bounds(wide)).astype(np.int64)
    return _bias_constant(lowering, data, expected, name, location, wide)


def _bias_constant(
    lowering: Lowering,
    data: np.ndarray,
    scales: np.ndarray,
    name: str | None,
    location: Attribute | None,
    wide: bool = False,
) -> SSAValue:
    bits = 64 if wide else 32
    if scales.size > 1:
        element = UniformQuantizedType.make([float(s) for s in scales], 0, bits=bits, axis=0)
    else:
        element = UniformQuantizedType.make(float(scales.reshape(-1)[0]), 0, bits=bits)
    bias_type = TensorType(element, [data.size])
    dtype = np.int64 if wide else np.int32
    constant = qnn.ConstantOp.from_array(np.asarray(data, dtype=dtype), bias_type)
    constant.result.name_hint = name
    return lowering.add(constant, location).results[0]


def _accumulator_type(op: nn.NNOp, *elements: UniformQuantizedType) -> TensorType:
    """The accumulator of `op`'s products of `elements`: i32, or i64 when one of them
    has 16-bit storage (the wide 48-bit accumulator)."""
    return _with_element(op.results[0].type, qnn.accumulator_element(*elements))


# --------------------------------------------------------------------------------------
# The lowerings, one per op family


def lower_conv(lowering: Lowering) -> list[SSAValue]:
    # dcast(x) -> nn.conv(_transpose) -> qcast  =>  qnn.conv(_transpose) -> qnn.requantize
    op, match = lowering.op, lowering.match
    input_element = _per_tensor(match.element(0), "the input")
    weight = lowering.constant(1)
    weight_element = quantized_element(weight.type)
    assert weight_element is not None
    layout = op.props().str("layout")
    rank = len(tensor_type(op.results[0]).get_shape())
    channel_axis = rank - 1 if layout == "nhwc" else 1
    channels = tensor_type(op.results[0]).get_shape()[channel_axis]
    wide = qnn.is_wide(input_element, weight_element)
    bias = _bias(lowering, 2, input_element.scale_values[0], weight_element, channels, wide=wide)
    qnn_type = qnn.ConvOp if isinstance(op, nn.ConvOp) else qnn.ConvTransposeOp
    names = ("layout", "strides", "pads", "dilations", "group", "output_padding")
    props = {
        k: v
        for k, v in _props(op, *names).items()
        if k in qnn_type.get_irdl_definition().properties
    }
    operands = [match.input(0), weight, *([bias] if bias is not None else [])]
    accumulator_type = _accumulator_type(op, input_element, weight_element)
    accumulator = lowering.add(qnn_type.build(operands, props, [accumulator_type]))
    return [
        _requantize(
            lowering,
            accumulator.results[0],
            input_element.scale_values[0],
            weight_element,
            channel_axis,
        )
    ]


def lower_gemm(lowering: Lowering) -> list[SSAValue]:
    # dcast(a) -> nn.gemm -> qcast  =>  qnn.gemm -> qnn.requantize (alpha, beta in the scales)
    op, match = lowering.op, lowering.match
    props = op.props()
    alpha, beta = props.float("alpha") or 0.0, props.float("beta") or 0.0
    if alpha <= 0:
        raise NotLowerable(f"alpha {alpha} is not positive")
    lhs_element = _per_tensor(match.element(0), "the left operand")
    rhs = lowering.constant(1)
    rhs_element = quantized_element(rhs.type)
    assert rhs_element is not None
    channels = tensor_type(op.results[0]).get_shape()[1]
    scale = lhs_element.scale_values[0]
    wide = qnn.is_wide(lhs_element, rhs_element)
    bias = _bias(lowering, 2, scale, rhs_element, channels, alpha, beta, wide)
    operands = [match.input(0), rhs, *([bias] if bias is not None else [])]
    accumulator_type = _accumulator_type(op, lhs_element, rhs_element)
    gemm = qnn.GemmOp.build(operands, _props(op, "trans_a", "trans_b"), [accumulator_type])
    accumulator = lowering.add(gemm).results[0]
    return [_requantize(lowering, accumulator, scale, rhs_element, 1, alpha)]


def lower_matmul(lowering: Lowering) -> list[SSAValue]:
    # dcast(a) x dcast(b) -> nn.matmul -> qcast  =>  qnn.matmul -> qnn.requantize
    op, match = lowering.op, lowering.match
    lhs_element = _per_tensor(match.element(0), "the left operand")
    rhs = lowering.constant(1)
    rhs_element = quantized_element(rhs.type)
    assert rhs_element is not None
    rank = len(tensor_type(op.results[0]).get_shape())
    rhs_rank = len(tensor_type(rhs).get_shape())
    channel_axis = rank - 1 if rhs_rank >= 2 else None
    accumulator_type = _accumulator_type(op, lhs_element, rhs_element)
    matmul = qnn.MatMulOp.build([match.input(0), rhs], {}, [accumulator_type])
    accumulator = lowering.add(matmul).results[0]
    return [
        _requantize(lowering, accumulator, lhs_element.scale_values[0], rhs_element, channel_axis)
    ]


def lower_add(lowering: Lowering) -> list[SSAValue]:
    # dcast(a) + dcast(b) -> qcast  =>  qnn.add (both rescaled to a common scale)
    match = lowering.match
    lhs, rhs = lowering.constant(0), lowering.constant(1)
    lhs_element = _per_tensor(match.element(0), "the left operand")
    rhs_element = _per_tensor(match.element(1), "the right operand")
    output = _per_tensor(match.output_element(), "the result")
    left_shift = (
        fixed_point.ADD_LEFT_SHIFT_16
        if qnn.is_wide(lhs_element, rhs_element)
        else fixed_point.ADD_LEFT_SHIFT
    )
    parameters = scheme.add_parameters(
        lhs_element.scale_values[0],
        rhs_element.scale_values[0],
        output.scale_values[0],
        left_shift,
    )
    low, high = _activation_clamp(lowering.op, output)
    props: dict[str, Attribute | None] = {k: _int(v) for k, v in parameters.items()}
    props |= {"clamp_min": _int(low), "clamp_max": _int(high)}
    return [lowering.add(qnn.AddOp.build([lhs, rhs], props, [match.output_type()])).results[0]]


def lower_mul(lowering: Lowering) -> list[SSAValue]:
    # dcast(a) * dcast(b) -> qcast  =>  qnn.mul
    match = lowering.match
    lhs, rhs = lowering.constant(0), lowering.constant(1)
    lhs_element = _per_tensor(match.element(0), "the left operand")
    rhs_element = _per_tensor(match.element(1), "the right operand")
    output = _per_tensor(match.output_element(), "the result")
    parameters = scheme.mul_parameters(
        lhs_element.scale_values[0], rhs_element.scale_values[0], output.scale_values[0]
    )
    props = {k: _int(v) for k, v in parameters.items()}
    return [lowering.add(qnn.MulOp.build([lhs, rhs], props, [match.output_type()])).results[0]]


def lower_div(lowering: Lowering) -> list[SSAValue]:
    # dcast(x) / c -> qcast, c a positive constant scalar  =>  qnn.requantize: the
    # stored values of x read with scale s_x / c are x / c, rescaled to the result
    op, match = lowering.op, lowering.match
    assert isinstance(op, nn.DivOp)
    divisor = positive_divisor(op)
    if divisor is None:
        raise NotLowerable(NOT_A_POSITIVE_DIVISOR)
    source = match.input(0)
    input_element = _per_tensor(match.element(0), "the dividend")
    output = _per_tensor(match.output_element(), "the result")
    if tensor_type(source).get_shape() != match.output_type().get_shape():
        raise NotLowerable("the division broadcasts its dividend")
    scale = input_element.scale_values[0] / divisor
    multiplier, shift = scheme.rescale_multiplier(scale, output.scale_values[0])
    requantize = qnn.RequantizeOp.build(
        [source],
        {"multiplier": _ints([multiplier]), "shift": _ints([shift])},
        [match.output_type()],
    )
    return [lowering.add(requantize).results[0]]


def lower_average_pool(lowering: Lowering) -> list[SSAValue]:
    # dcast(x) -> nn.(global_)average_pool -> qcast  =>  qnn.(global_)average_pool
    op, match = lowering.op, lowering.match
    input_element = _per_tensor(match.element(0), "the input")
    output = _per_tensor(match.output_element(), "the result")
    multiplier, shift = scheme.rescale_multiplier(
        input_element.scale_values[0], output.scale_values[0]
    )
    props: dict[str, Attribute | None] = {"multiplier": _int(multiplier), "shift": _int(shift)}
    if isinstance(op, nn.AveragePoolOp):
        names = ("layout", "kernel_shape", "strides", "pads", "dilations", "ceil_mode")
        props |= _props(op, *names, "count_include_pad")
        pool: Operation = qnn.AveragePoolOp.build([match.input(0)], props, [match.output_type()])
    else:
        props |= _props(op, "layout")
        pool = qnn.GlobalAveragePoolOp.build([match.input(0)], props, [match.output_type()])
    return [lowering.add(pool).results[0]]


def lower_max_pool(lowering: Lowering) -> list[SSAValue]:
    # dcast(x) -> nn.(global_)max_pool -> qcast  =>  qnn.max_pool (then a rescale if needed)
    op, match = lowering.op, lowering.match
    _per_tensor(match.element(0), "the input")
    if isinstance(op, nn.MaxPoolOp):
        names = ("layout", "kernel_shape", "strides", "pads", "dilations", "ceil_mode")
        props = _props(op, *names)
    else:  # global: one window over every spatial axis
        shape = tensor_type(op.operands[0]).get_shape()
        channels_last = op.props().str("layout") == "nhwc"
        spatial = shape[1:-1] if channels_last else shape[2:]
        props = _props(op, "layout") | {"kernel_shape": _ints(spatial)}
    pool = lowering.add(qnn.MaxPoolOp.build([match.input(0)], props))
    return [lowering.rescale(pool.results[0], match.output_type())]


def lower_reduce(lowering: Lowering) -> list[SSAValue]:
    # dcast(x) -> nn.reduce_mean / reduce_sum / reduce_max over adjacent axes -> qcast
    #   =>  x viewed as an NHWC image, one pooling window over the reduced axes, viewed
    #   back as the result: [1, reduced, 1, inner] and a global pool when nothing comes
    #   before them (a batch of 1), else [1, outer, reduced, inner] and a 1 x reduced
    #   window. qnn.(global_)average_pool for a mean, with count times its multiplier
    #   for a sum; qnn.max_pool for a max. With a target, only a reduction its support
    #   table takes (the pool is then judged by the pool's limits as well).
    op, match = lowering.op, lowering.match
    if lowering.target is not None:
        # The pool stands in for the reduction: the target's own limits for it decide.
        reasons = unsupported_reasons(op, lowering.target)
        if reasons:
            raise NotLowerable("; ".join(reasons))
    input_element = _per_tensor(match.element(0), "the input")
    output = _per_tensor(match.output_element(), "the result")
    shape = list(tensor_type(op.operands[0]).get_shape())
    rank = len(shape)
    listed = op.props().ints("axes")
    axes = sorted(nn.normalize_axis(a, rank) for a in listed) if listed else list(range(rank))
    if not axes or axes != list(range(axes[0], axes[-1] + 1)):
        raise NotLowerable(f"it reduces axes {axes} that are not adjacent")
    outer = int(np.prod(shape[: axes[0]]))
    reduced = int(np.prod(shape[axes[0] : axes[-1] + 1]))
    inner = int(np.prod(shape[axes[-1] + 1 :]))
    image = [1, reduced, 1, inner] if outer == 1 else [1, outer, reduced, inner]
    kernel = [reduced, 1] if outer == 1 else [1, reduced]
    source = match.input(0)
    view = _with_element(TensorType(f32, image), match.element(0))
    reshaped = lowering.add(nn.ReshapeOp.build([source], {}, [view])).results[0]
    window: dict[str, Attribute | None] = {
        "layout": StringAttr("nhwc"),
        "kernel_shape": _ints(kernel),
    }
    if isinstance(op, nn.ReduceMaxOp):
        pooled = lowering.add(qnn.MaxPoolOp.build([reshaped], window)).results[0]
        back = _with_element(match.output_type(), match.element(0))
        result = lowering.add(nn.ReshapeOp.build([pooled], {}, [back])).results[0]
        return [lowering.rescale(result, match.output_type())]
    scale = input_element.scale_values[0] * (reduced if isinstance(op, nn.ReduceSumOp) else 1)
    multiplier, shift = scheme.rescale_multiplier(scale, output.scale_values[0])
    rescale: dict[str, Attribute | None] = {"multiplier": _int(multiplier), "shift": _int(shift)}
    pooled_type = _with_element(TensorType(f32, [1, 1 if outer == 1 else outer, 1, inner]), output)
    pool: Operation
    if outer == 1:
        props = {"layout": window["layout"], **rescale}
        pool = qnn.GlobalAveragePoolOp.build([reshaped], props, [pooled_type])
    else:
        pool = qnn.AveragePoolOp.build([reshaped], window | rescale, [pooled_type])
    pooled = lowering.add(pool).results[0]
    return [lowering.add(nn.ReshapeOp.build([pooled], {}, [match.output_type()])).results[0]]


def lower_clamp(lowering: Lowering) -> list[SSAValue]:
    # dcast(x) -> nn.relu / nn.clip -> qcast  =>  qnn.clamp (qnn.requantize across types)
    op, match = lowering.op, lowering.match
    input_type = match.input(0).type
    input_element = _per_tensor(match.element(0), "the input")
    output = _per_tensor(match.output_element(), "the result")
    props = op.props()
    low, high = (
        (0.0, None) if isinstance(op, nn.ReluOp) else (props.float("min"), props.float("max"))
    )
    if input_type == match.output_type():
        clamp_min, clamp_max = _narrowed(
            input_element, *scheme.clamp_bounds(input_element, low, high)
        )
        bounds = {"clamp_min": _int(clamp_min), "clamp_max": _int(clamp_max)}
        return [lowering.add(qnn.ClampOp.build([match.input(0)], bounds)).results[0]]
    clamp_min, clamp_max = _narrowed(output, *scheme.clamp_bounds(output, low, high))
    multiplier, shift = scheme.rescale_multiplier(
        input_element.scale_values[0], output.scale_values[0]
    )
    requantize = qnn.RequantizeOp.build(
        [match.input(0)],
        {
            "multiplier": _ints([multiplier]),
            "shift": _ints([shift]),
            "clamp_min": _int(clamp_min),
            "clamp_max": _int(clamp_max),
        },
        [match.output_type()],
    )
    return [lowering.add(requantize).results[0]]


def lower_pad(lowering: Lowering) -> list[SSAValue]:
    # dcast(x) -> nn.pad -> qcast  =>  qnn.pad (constant padding holds the zero point)
    op, match = lowering.op, lowering.match
    props = op.props()
    if props.str("mode") == "constant" and props.float("value") != 0.0:
        raise NotLowerable(f"it pads with {props.float('value')}, not with zero")
    pad = lowering.add(qnn.PadOp.build([match.input(0)], _props(op, "pads", "mode")))
    return [lowering.rescale(pad.results[0], match.output_type())]


def lower_concat(lowering: Lowering) -> list[SSAValue]:
    # concat(dcast(a), dcast(b), ...) -> qcast  =>  qnn.concat (other types rescaled)
    op, match = lowering.op, lowering.match
    output_type = match.output_type()
    output = _per_tensor(match.output_element(), "the result")
    inputs = [lowering.constant(index) for index in range(len(op.operands))]
    props: dict[str, Attribute | None] = _props(op, "axis")
    if any(_with_element(value.type, output) != value.type for value in inputs):
        pairs = []
        for index in range(len(inputs)):
            element = _per_tensor(match.element(index), f"operand #{index}")
            if element == output:
                pairs.append(fixed_point.IDENTITY_MULTIPLIER)
            else:
                pairs.append(
                    scheme.rescale_multiplier(element.scale_values[0], output.scale_values[0])
                )
        props |= {
            "multipliers": _ints([m for m, _ in pairs]),
            "shifts": _ints([s for _, s in pairs]),
        }
    return [lowering.add(qnn.ConcatOp.build(inputs, props, [output_type])).results[0]]


def lower_lookup(lowering: Lowering) -> list[SSAValue]:
    # dcast(x) -> nn.sigmoid (tanh, hard_swish, ...) -> qcast  =>  qnn.lut
    op, match = lowering.op, lowering.match
    target = lowering.target
    if target is not None and not target.lut.supported:
        raise NotLowerable(f"target {target.name} has no lookup table")
    if target is not None and target.lut.entries < LUT_ENTRIES:
        raise NotLowerable(
            f"target {target.name}'s lookup table has {target.lut.entries} entries, "
            f"fewer than {LUT_ENTRIES}"
        )
    input_element = _per_tensor(match.element(0), "the input")
    output = _per_tensor(match.output_element(), "the result")
    bits = {input_element.storage_bits.data, output.storage_bits.data}
    if bits == {16}:
        if input_element.zero_point_values[0] or output.zero_point_values[0]:
            raise NotLowerable("a 16-bit lookup table maps symmetric int16 values")
        steps = fixed_point.LUT16_ENTRIES - 1
        if target is not None and target.lut.entries < steps:
            raise NotLowerable(
                f"target {target.name}'s lookup table has {target.lut.entries} entries, "
                f"fewer than the {steps} of an interpolated 16-bit table"
            )
        table = scheme.build_lut16(_float_function(op), input_element, output)
    elif bits == {8}:
        table = scheme.build_lut(_float_function(op), input_element, output)
    else:
        raise NotLowerable("a lookup table maps 8-bit values to 8-bit ones, or 16 to 16")
    properties = {"table": _ints(table), "function": StringAttr(op.name.removeprefix("nn."))}
    lut = qnn.LutOp.build([match.input(0)], properties, [match.output_type()])
    return [lowering.add(lut).results[0]]


def _row_op_elements(
    match: QDQMatch, what: str
) -> tuple[UniformQuantizedType, UniformQuantizedType]:
    """The per-tensor input and result types of an integer softmax, layer norm or LRN
    (`what`): both 8-bit, or both symmetric int16."""
    input_element = _per_tensor(match.element(0), "the input")
    output = _per_tensor(match.output_element(), "the result")
    bits = {input_element.storage_bits.data, output.storage_bits.data}
    if bits not in ({8}, {16}):
        raise NotLowerable(f"the integer {what} maps 8-bit values to 8-bit ones, or 16 to 16")
    if bits == {16} and (input_element.zero_point_values[0] or output.zero_point_values[0]):
        raise NotLowerable(f"the 16-bit integer {what} maps symmetric int16 values")
    return input_element, output


def lower_softmax(lowering: Lowering) -> list[SSAValue]:
    # dcast(x) -> nn.softmax (last axis) -> qcast  =>  qnn.softmax
    # dcast(x) -> nn.masked_softmax(x, mask) -> qcast  =>  qnn.softmax(x, mask as i8)
    op, match = lowering.op, lowering.match
    operands = [match.input(0)]
    if isinstance(op, nn.MaskedSoftmaxOp):
        mask = constant_array(op.operands[1])
        if mask is None:
            raise NotLowerable("its mask is not a constant with data")
        stored = nn.ConstantOp.from_array(np.asarray(mask, dtype=np.int8))
        stored.result.name_hint = op.operands[1].name_hint
        operands.append(lowering.add(stored, source_location(op.operands[1])).results[0])
    rank = len(tensor_type(op.operands[0]).get_shape())
    axis = op.props().int("axis")
    if rank == 0 or nn.normalize_axis(-1 if axis is None else axis, rank) != rank - 1:
        raise NotLowerable("the integer softmax normalizes the last axis")
    input_element, output = _row_op_elements(match, "softmax")
    properties = scheme.softmax_parameters(input_element, output)
    softmax = qnn.SoftmaxOp.build(
        operands,
        {
            "table": _ints(properties["table"]),  # type: ignore[arg-type]
            "multiplier": _int(properties["multiplier"]),  # type: ignore[arg-type]
            "shift": _int(properties["shift"]),  # type: ignore[arg-type]
        },
        [match.output_type()],
    )
    return [lowering.add(softmax).results[0]]


def lower_layer_norm(lowering: Lowering) -> list[SSAValue]:
    # dcast(x) -> nn.layer_norm (last axis; constant gamma, beta) -> qcast  =>  qnn.layer_norm
    op, match = lowering.op, lowering.match
    shape = tensor_type(op.operands[0]).get_shape()
    axis = op.props().int("axis")
    if not shape or nn.normalize_axis(-1 if axis is None else axis, len(shape)) != len(shape) - 1:
        raise NotLowerable("the integer layer norm normalizes the last axis")
    if shape[-1] > fixed_point.LAYER_NORM_MAX_AXIS:
        raise NotLowerable(f"rows of more than {fixed_point.LAYER_NORM_MAX_AXIS} values")
    channels = shape[-1]
    affine = []
    for index, default in ((1, 1.0), (2, 0.0)):
        if index >= len(op.operands):
            affine.append(np.full(channels, default))
            continue
        data = constant_array(op.operands[index])
        if data is None:
            raise NotLowerable("its scale and bias are not constants with data")
        affine.append(np.broadcast_to(np.asarray(data, np.float64).reshape(-1), (channels,)))
    input_element, output = _row_op_elements(match, "layer norm")
    epsilon = op.props().float("epsilon")
    params = scheme.layer_norm_parameters(
        input_element, output, affine[0], affine[1], 1e-5 if epsilon is None else epsilon
    )
    norm = qnn.LayerNormOp.build(
        [match.input(0)],
        {
            "epsilon_term": _int(params["epsilon_term"]),  # type: ignore[arg-type]
            "weights": _ints(params["weights"]),  # type: ignore[arg-type]
            "biases": _ints(params["biases"]),  # type: ignore[arg-type]
            "multiplier": _int(params["multiplier"]),  # type: ignore[arg-type]
            "shift": _int(params["shift"]),  # type: ignore[arg-type]
        },
        [match.output_type()],
    )
    return [lowering.add(norm).results[0]]


def lower_lrn(lowering: Lowering) -> list[SSAValue]:
    # dcast(x) -> nn.lrn -> qcast  =>  qnn.lrn (the window sums' function in a table)
    op, match = lowering.op, lowering.match
    props = op.props()
    size = props.int("size") or 1
    if size > fixed_point.LRN_MAX_SIZE:
        raise NotLowerable(f"a window of more than {fixed_point.LRN_MAX_SIZE} channels")
    input_element, output = _row_op_elements(match, "LRN")
    alpha, beta, bias = (props.float(name) for name in ("alpha", "beta", "bias"))
    try:
        params = scheme.lrn_parameters(
            input_element,
            output,
            size,
            1e-4 if alpha is None else alpha,
            0.75 if beta is None else beta,
            1.0 if bias is None else bias,
        )
    except ValueError as error:
        raise NotLowerable(str(error)) from None
    properties: dict[str, Attribute | None] = {
        "size": _int(size),
        "table": _ints(params["table"]),  # type: ignore[arg-type]
        "multiplier": _int(params["multiplier"]),  # type: ignore[arg-type]
        "shift": _int(params["shift"]),  # type: ignore[arg-type]
    }
    if "layout" in op.properties:
        properties["layout"] = op.properties["layout"]
    lrn = qnn.LRNOp.build([match.input(0)], properties, [match.output_type()])
    return [lowering.add(lrn).results[0]]


def _float_function(op: nn.NNOp) -> Callable[[np.ndarray], np.ndarray]:
    """The float reference function of an elementwise unary op (with its properties),
    evaluated by the interpreter on a 1-D array."""
    from irc.interp import evaluate_op

    def function(values: np.ndarray) -> np.ndarray:
        probe_input = nn.ConstantOp.from_array(np.zeros(values.shape, np.float32))
        probe = type(op).build([probe_input.result], dict(op.properties))
        try:
            return evaluate_op(probe, [values.astype(np.float32)])[0]
        finally:
            probe.drop_all_references()

    return function


def lower_data_movement(lowering: Lowering) -> list[SSAValue]:
    # dcast(x) -> nn.reshape (transpose, slice, ...) -> qcast  =>  nn.reshape on the quantized x
    op, match = lowering.op, lowering.match
    if op.FLOAT_ONLY:
        raise NotLowerable(f"{op.name} computes on floats only")
    if isinstance(op, nn.ResizeOp) and op.props().str("mode") == "linear":
        return lower_linear_resize(lowering)
    if isinstance(op, nn.ResizeOp) and op.props().str("mode") != "nearest":
        raise NotLowerable(f'resize mode "{op.props().str("mode")}" computes new values')
    source = match.input(0)
    element = match.element(0)
    result_types = [_with_element(result.type, element) for result in op.results]
    moved = type(op).build([source, *op.operands[1:]], dict(op.properties), result_types)
    moved.attributes.update(op.attributes)
    lowering.add(moved)
    return [
        lowering.rescale(result, match.output_type(index))
        for index, result in enumerate(moved.results)
    ]


def lower_linear_resize(lowering: Lowering) -> list[SSAValue]:
    # dcast(x) -> nn.resize {mode = "linear"} -> qcast  =>  qnn.resize (+ requantize)
    op, match = lowering.op, lowering.match
    assert isinstance(op, nn.ResizeOp)
    props = op.props()
    mode = props.str("coordinate_transformation_mode") or "half_pixel"
    if mode not in fixed_point.LINEAR_RESIZE_MODES:
        raise NotLowerable(f'the integer linear resize has no coordinate mode "{mode}"')
    scales = props.floats("scales") or []
    resized_axes = sum(1 for scale in scales if scale != 1.0)
    if not resized_axes or tensor_type(op.input).get_shape() == tensor_type(op.result).get_shape():
        # As nn.resize (and onnxruntime): an unchanged shape returns the input.
        return [lowering.rescale(match.input(0), match.output_type())]
    if resized_axes > qnn.RESIZE_MAX_AXES:
        raise NotLowerable(f"it resizes {resized_axes} axes: qnn.resize takes up to 3")
    element = _per_tensor(match.element(0), "the input")
    resize = qnn.ResizeOp.build(
        [match.input(0)],
        {
            "scales": op.scales,
            "mode": StringAttr("linear"),
            "coordinate_transformation_mode": StringAttr(mode),
        },
        [_with_element(op.result.type, element)],
    )
    resized = lowering.add(resize).results[0]
    return [lowering.rescale(resized, match.output_type())]


def lower_identity(lowering: Lowering) -> list[SSAValue]:
    # dcast(x) -> nn.identity -> qcast  =>  x
    return [lowering.rescale(lowering.match.input(0), lowering.match.output_type())]


LOWERINGS: dict[type[nn.NNOp], Callable[[Lowering], list[SSAValue]]] = {
    nn.ConvOp: lower_conv,
    nn.ConvTransposeOp: lower_conv,
    nn.GemmOp: lower_gemm,
    nn.MatMulOp: lower_matmul,
    nn.AddOp: lower_add,
    nn.MulOp: lower_mul,
    nn.AveragePoolOp: lower_average_pool,
    nn.GlobalAveragePoolOp: lower_average_pool,
    nn.MaxPoolOp: lower_max_pool,
    nn.GlobalMaxPoolOp: lower_max_pool,
    nn.ReduceMeanOp: lower_reduce,
    nn.ReduceSumOp: lower_reduce,
    nn.ReduceMaxOp: lower_reduce,
    nn.ReluOp: lower_clamp,
    nn.ClipOp: lower_clamp,
    nn.PadOp: lower_pad,
    nn.ConcatOp: lower_concat,
    nn.SoftmaxOp: lower_softmax,
    nn.MaskedSoftmaxOp: lower_softmax,
    nn.DivOp: lower_div,
    nn.LayerNormOp: lower_layer_norm,
    nn.LRNOp: lower_lrn,
    # Every op the quantizer tabulates (Role.LOOKUP) becomes a qnn.lut.
    **{
        op_type: lower_lookup
        for op_type, role in ROLES.items()
        if role is Role.LOOKUP and issubclass(op_type, nn.NNOp)
    },
    **{
        op_type: lower_data_movement
        for op_type in (
            nn.ReshapeOp,
            nn.FlattenOp,
            nn.SqueezeOp,
            nn.UnsqueezeOp,
            nn.TransposeOp,
            nn.SliceOp,
            nn.SplitOp,
            nn.DepthToSpaceOp,
            nn.ResizeOp,
        )
    },
    nn.IdentityOp: lower_identity,
    nn.DropoutOp: lower_identity,
}
"""How each nn op in a QDQ pattern is lowered (the table in the module docstring)."""


# --------------------------------------------------------------------------------------
# The patterns


@dataclass
class LoweringRecord:
    """What the lowering did: float ops with their reasons, and the counts."""

    target: Target | None
    lowered: int = 0
    lookup_tables: int = 0
    float_reasons: dict[Operation, str] = field(default_factory=dict)


@dataclass
class LowerQDQPattern(RewritePattern):
    """dcast(q...) -> nn op -> qcast  =>  qnn ops on q (by `LOWERINGS`)."""

    record: LoweringRecord

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not op.name.startswith("nn.") or isinstance(op, nn.ConstantOp):
            return
        if any(quantized_element(value.type) for value in (*op.operands, *op.results)):
            return  # a value-moving op already on quantized tensors
        assert isinstance(op, nn.NNOp)
        lower = LOWERINGS.get(type(op))
        if lower is None:
            self.record.float_reasons[op] = f"{op.name} has no integer lowering"
            return
        match = match_qdq(op)
        if isinstance(match, str):
            self.record.float_reasons[op] = match
            return
        lowering = Lowering(match, self.record.target)
        try:
            results = lower(lowering)
            for new_op in lowering.new_ops:
                new_op.verify()
        except (NotLowerable, VerifyException) as failure:
            for new_op in lowering.new_ops:
                new_op.drop_all_references()
            self.record.float_reasons[op] = str(failure)
            return
        rewriter.insert(lowering.new_ops, InsertPoint.before(op))
        for qcast, result in zip(match.outputs, results, strict=True):
            rewriter.replace_all_uses_with(qcast.result, result)
            rewriter.erase(qcast)
        rewriter.erase(op)
        self.record.float_reasons.pop(op, None)
        self.record.lowered += 1
        if lower is lower_lookup:
            self.record.lookup_tables += 1


class FoldCastPairPattern(RewritePattern):
    """qcast(dcast(q)) -> q of the same type, or qnn.requantize(q) to another type."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, quant.QuantizeCastOp):
            return
        dcast = op.input.owner
        if not isinstance(dcast, quant.DequantizeCastOp):
            return
        source, target_type = dcast.input, op.result.type
        assert isinstance(target_type, TensorType)
        if source.type == target_type:
            rewriter.replace_matched_op([], [source])
            return
        requantize = rescale_op(source, target_type)
        if requantize is not None:
            requantize.location = op.location
            rewriter.replace_matched_op([requantize], [requantize.result])


DEAD_WHEN_UNUSED = (
    quant.DequantizeCastOp,
    quant.QuantizeCastOp,
    quant.StorageCastOp,
    nn.ConstantOp,
    qnn.ConstantOp,
)
"""Ops the pass erases when lowering left them without users."""


def _erase_dead_casts(function: FuncOp) -> None:
    changed = True
    while changed:
        changed = False
        for op in reversed(list(function.walk())):
            if isinstance(op, DEAD_WHEN_UNUSED) and not any(r.uses for r in op.results):
                op.detach()
                op.erase()
                changed = True


def lower_module(module: ModuleOp, target: Target | None) -> dict[FuncOp, LoweringRecord]:
    """Lower every function of `module`; what was done, by function."""
    records: dict[FuncOp, LoweringRecord] = {}
    for function in [op for op in module.ops if isinstance(op, FuncOp)]:
        record = LoweringRecord(target)
        walker = PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [LowerQDQPattern(record), FoldCastPairPattern()], dce_enabled=False
            )
        )
        walker.rewrite_region(function.body)
        _erase_dead_casts(function)
        record.float_reasons = {
            op: reason for op, reason in record.float_reasons.items() if op.parent is not None
        }
        for op, reason in record.float_reasons.items():
            # Why it stays float, for the partition's reasons (the quantizer's own, if
            # it gave one, stands).
            op.attributes.setdefault(FLOAT_REASON_ATTR, StringAttr(reason))
        records[function] = record
    return records


def summary_remark(function: FuncOp, record: LoweringRecord) -> Diagnostic:
    """The remark of one function: the counts, and a note per float op."""
    message = f"lower-to-qnn: {record.lowered} ops lowered, {len(record.float_reasons)} float"
    if record.lookup_tables and record.target is None:
        message += f"; no target: {record.lookup_tables} lookup tables assumed available"
    notes = [
        Diagnostic(f"stays float: {reason}", Location.of(op), Severity.NOTE)
        for op, reason in record.float_reasons.items()
    ]
    return Diagnostic(message, Location.of(function), Severity.REMARK, notes=notes)


@dataclass(frozen=True)
class LowerToQNNPass(ModulePass):
    """Lower QDQ patterns (dcast -> nn op -> qcast) to integer qnn ops with explicit requantization.

    Convolutions and matrix products become `qnn` ops with i32 accumulators followed
    by `qnn.requantize` (fixed-point multiplier and shift per output channel, clamp
    bounds for a fused relu or clip); add, mul, pooling, concat and pad their `qnn`
    ops; sigmoid, tanh, hard_swish and other elementwise functions a `qnn.lut` when
    the target has a lookup table (assumed without a target); ops that only move
    values run on the quantized tensors. Anything else stays float between its casts
    (a float island); a remark counts the lowered ops and a note gives each float
    op's reason.

        %x_dq = quant.dcast %x_q : tensor<1x4x!quant.uniform<i8:f32, 0.05:-3>> to tensor<1x4xf32>
        %w_i = nn.constant dense<[[10, -127], [5, 127], [0, 3], [64, -1]]> : tensor<4x2xi8>
        %w_s = quant.scast %w_i : tensor<4x2xi8> to tensor<4x2x!quant.uniform<i8<-127:127>:f32:1, {0.01, 0.02}>>
        %w_q = quant.dcast %w_s : tensor<4x2x!quant.uniform<i8<-127:127>:f32:1, {0.01, 0.02}>> to tensor<4x2xf32>
        %y = nn.gemm %x_dq, %w_q {activation = #nn.activation<relu>} : (tensor<1x4xf32>, tensor<4x2xf32>) -> tensor<1x2xf32>
        %y_q = quant.qcast %y : tensor<1x2xf32> to tensor<1x2x!quant.uniform<i8:f32, 0.1:-128>>

    becomes (the multipliers are 0.05 * 0.01 / 0.1 and 0.05 * 0.02 / 0.1; the relu
    clamps at the zero point -128, the storage minimum, so it needs no bound)

        %w_s = qnn.constant dense<[[10, -127], [5, 127], [0, 3], [64, -1]]> : tensor<4x2xi8> to tensor<4x2x!quant.uniform<i8<-127:127>:f32:1, {0.01, 0.02}>>
        %0 = qnn.gemm %x_q, %w_s : (tensor<1x4x!quant.uniform<i8:f32, 0.05:-3>>, tensor<4x2x!quant.uniform<i8<-127:127>:f32:1, {0.01, 0.02}>>) -> tensor<1x2xi32>
        %y_q = qnn.requantize %0 {axis = 1, multiplier = [1374389600, 1374389600], shift = [7, 6]} : (tensor<1x2xi32>) -> tensor<1x2x!quant.uniform<i8:f32, 0.1:-128>>
    """

    name = "lower-to-qnn"

    target: str = option(
        "",
        "the target (preset or .toml file) whose lookup table decides qnn.lut; default: the active target",
    )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from irc.passes import PIPELINE_FILE
        from irc.targets import active_target, load_target

        target = load_target(self.target, origin=PIPELINE_FILE) if self.target else active_target()
        for function, record in lower_module(op, target).items():
            if record.lowered or record.float_reasons:
                emit(summary_remark(function, record))
