"""The `qnn` dialect: integer ops on quantized tensors, with explicit requantization.

Activations and weights are tensors of quantized types (`!quant.uniform<i8:f32, s:z>`,
per-axis weights `!quant.uniform<i8<-127:127>:f32:0, {...}>`); at run time they hold
their storage integers, and the zero points are those of the types. Convolutions and
matrix products produce plain `i32` accumulators,

    acc = sum((x - zx) * (w - zw)) + bias

or, when an operand has 16-bit storage (16-bit activations, 8-bit weights: int16x8),
wide `i64` accumulators whose values lie in the 48-bit range (-2^47, 2^47); the
requantization of a wide accumulator uses a 16-bit multiplier (see
irc/ir/fixed_point.py's `wide_fixed_point_multiply`).

and `qnn.requantize` takes them to a quantized type with a fixed-point multiplier
M in [2^30, 2^31) and shift s (m = M * 2^-(31 + s)), rounding half to even,
adding the output zero point and clamping to [clamp_min, clamp_max] (the storage
range, narrowed by a fused relu/relu6/clip). The arithmetic is in
irc/ir/fixed_point.py; the integer reference interpreter (irc/interp/qnn.py) is the
bit-exact specification an NPU must match. Multipliers and shifts are properties, so
every number an op computes with is in the IR.

The syntax is `nn`'s (a property dictionary, then the types). A conv with per-channel
weights (scales 0.01 and 0.02) on an input of scale 0.02, requantized per channel to
scale 0.05 (m = 0.004 and 0.008) with a fused relu (clamp_min = the zero point -7):

    %w = qnn.constant dense<...> : tensor<2x3x3x3xi8>
           to tensor<2x3x3x3x!quant.uniform<i8<-127:127>:f32:0, {0.01, 0.02}>>
    %b = nn.constant dense<[100, -100]> : tensor<2xi32>
    %acc = qnn.conv %x, %w, %b {pads = [1, 1, 1, 1], strides = [2, 2]}
           : (tensor<1x3x8x8x!quant.uniform<i8:f32, 0.02:-5>>,
              tensor<2x3x3x3x!quant.uniform<i8<-127:127>:f32:0, {0.01, 0.02}>>,
              tensor<2xi32>) -> tensor<1x2x4x4xi32>
    %y = qnn.requantize %acc {axis = 1, clamp_min = -7,
                              multiplier = [1099511600, 1099511600], shift = [7, 6]}
           : (tensor<1x2x4x4xi32>) -> tensor<1x2x4x4x!quant.uniform<i8:f32, 0.05:-7>>

Ops that only move or select values (reshape, transpose, slice, flatten, ...) need no
`qnn` op: the `nn` op applies to a quantized tensor as it is, keeping its type.

The op reference is docs/qnn-ops.md; the scheme is explained in docs/quantization.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    Float32Type,
    IntegerAttr,
    StringAttr,
    TensorType,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    base,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import ConstantLike, Pure

from irc.dialects import nn
from irc.dialects.base import (
    Props,
    TensorOp,
    bool_prop,
    broadcast_shapes,
    check_rounding,
    fail,
    int_prop,
    ints_constraint,
    ints_prop,
    layout_prop,
    rounding_prop,
    static_shape,
    str_prop,
    tensor_type,
)
from irc.dialects.quant import UniformQuantizedType, quantized_element
from irc.ir import fixed_point, weights

# --------------------------------------------------------------------------------------
# Checks shared by the ops


def quantized(value_type: Attribute, what: str, *, view: bool = False) -> UniformQuantizedType:
    """The quantized element type of a tensor type, checked against the tensor.

    A `view` (a channels-first view of a channels-last operand, in shape inference) is
    not checked: its per-axis type's axis refers to the operand's own layout.
    """
    element = quantized_element(value_type)
    if element is None:
        raise fail(f"{what} must be a tensor of a quantized type, got {value_type}")
    assert isinstance(value_type, TensorType)
    if not view:
        element.verify_tensor(value_type)
    return element


def per_tensor(value_type: Attribute, what: str) -> UniformQuantizedType:
    """The element type of a tensor quantized per tensor."""
    element = quantized(value_type, what)
    if element.is_per_axis:
        raise fail(f"{what} must be quantized per tensor, got {value_type}")
    return element


def check_symmetric_sixteen(
    op_name: str, input_element: UniformQuantizedType, output: UniformQuantizedType
) -> None:
    """A 16-bit form of `op_name` (a table, a softmax, a layer norm) takes and gives symmetric i16."""
    for element, what in ((input_element, "the input"), (output, "the result")):
        if element.storage_type != i16 or zero_point(element) != 0:
            raise fail(f"a 16-bit {op_name} takes and gives symmetric i16; {what} is {element}")


def eight_bit(element: UniformQuantizedType, what: str) -> UniformQuantizedType:
    """`element`, which must have 8-bit storage (i8 or u8)."""
    if element.storage_bits.data != 8:
        raise fail(f"{what} must have 8-bit storage, got {element.storage_type}")
    return element


def activation_bits(element: UniformQuantizedType, what: str) -> UniformQuantizedType:
    """`element`, which must have 8- or 16-bit storage (an int8 or int16 activation)."""
    if element.storage_bits.data not in (8, 16):
        raise fail(f"{what} must have 8- or 16-bit storage, got {element.storage_type}")
    return element


def is_wide(*elements: UniformQuantizedType) -> bool:
    """Whether a product of these operands accumulates in the wide 48-bit accumulator
    (some operand has 16-bit storage)."""
    return any(element.storage_bits.data > 8 for element in elements)


def accumulator_element(*elements: UniformQuantizedType) -> Attribute:
    """The accumulator of products of these operands: i64 (48-bit values) when one
    has 16-bit storage, else i32."""
    return i64 if is_wide(*elements) else i32


def zero_point(element: UniformQuantizedType) -> int:
    """The zero point of a per-tensor type."""
    return element.zero_point_values[0]


def largest_offset(element: UniformQuantizedType) -> int:
    """The largest |stored - zero_point| a value of `element` can have."""
    low, high = element.storage_range
    return max(max(high - z, z - low) for z in element.zero_point_values)


def check_multipliers(multipliers: Sequence[int], shifts: Sequence[int], what: str) -> None:
    """Every (M, s) pair is a valid fixed-point multiplier, and the lists match."""
    if len(multipliers) != len(shifts):
        raise fail(f"{what}: {len(multipliers)} multipliers but {len(shifts)} shifts")
    for multiplier, shift in zip(multipliers, shifts):
        problem = fixed_point.check_multiplier(multiplier, shift)
        if problem is not None:
            raise fail(f"{what}: {problem}")


def check_clamp(props: Props, element: UniformQuantizedType) -> tuple[int, int]:
    """The clamp bounds (defaulting to the storage range), checked to lie within it."""
    low, high = element.storage_range
    clamp_min, clamp_max = props.int("clamp_min"), props.int("clamp_max")
    clamp_min = low if clamp_min is None else clamp_min
    clamp_max = high if clamp_max is None else clamp_max
    if not low <= clamp_min <= clamp_max <= high:
        raise fail(
            f"clamp bounds [{clamp_min}, {clamp_max}] are not an ordered part of the "
            f"storage range [{low}, {high}]"
        )
    return clamp_min, clamp_max


def clamp_bounds(op: QNNOp) -> tuple[int, int]:
    """An op's clamp bounds, defaulting to the storage range of its result."""
    element = quantized_element(op.results[0].type)
    assert element is not None, "the verifier checked the result type"
    props = op.props()
    low, high = element.storage_range
    clamp_min, clamp_max = props.int("clamp_min"), props.int("clamp_max")
    return (low if clamp_min is None else clamp_min, high if clamp_max is None else clamp_max)


def is_accumulator(element_type: Attribute) -> bool:
    """True for an accumulator type: `i32`, or `i64` (a wide one)."""
    return element_type in (i32, i64)


def check_bias(value_type: TensorType, what: str = "bias", wide: bool = False) -> None:
    """A bias is `i32`, or a quantized type with i32 storage (its integers are added);
    for a `wide` accumulator, i64 (or i64 storage) too."""
    element = value_type.get_element_type()
    quantized_bias = quantized_element(value_type)
    allowed = (i32, i64) if wide else (i32,)
    if element in allowed:
        return
    if quantized_bias is not None and quantized_bias.storage_type in allowed:
        quantized_bias.verify_tensor(value_type)
        return
    names = "i32 or i64" if wide else "i32"
    raise fail(f"{what} must be {names} or have {names} storage, got {element}")


Products = tuple[int, UniformQuantizedType, UniformQuantizedType]
"""What a MAC op's output element sums: how many products, of which two inputs."""


def product_bound(products: Products) -> int:
    """The largest |sum| of the products (less their zero points)."""
    terms, lhs, rhs = products
    return terms * largest_offset(lhs) * largest_offset(rhs)


def accumulation_bound(op: Operation) -> int | None:
    """The largest |accumulator| a MAC op (conv, conv_transpose, gemm, matmul) can
    reach before its bias: what a target's accumulator must hold; None for other ops."""
    if isinstance(op, _ConvLikeOp | GemmOp | MatMulOp):
        return product_bound(op.products())
    return None


def product_elements(op: Operation) -> tuple[UniformQuantizedType, ...]:
    """The two multiplied inputs' types of a MAC op; () for other ops."""
    if isinstance(op, _ConvLikeOp | GemmOp | MatMulOp):
        return op.products()[1:]
    return ()


def check_accumulator_bound(
    terms: int, lhs: UniformQuantizedType, rhs: UniformQuantizedType
) -> None:
    """A sum of `terms` products of the two inputs (less their zero points) fits the
    accumulator: int32, or 48 bits for a wide one."""
    bound = product_bound((terms, lhs, rhs))
    wide = is_wide(lhs, rhs)
    if bound > fixed_point.accumulator_bounds(wide)[1]:
        what = "48-bit" if wide else "int32"
        raise fail(
            f"a sum of {terms} products can reach {bound}, which overflows the {what} accumulator"
        )


def with_accumulator(types: list[TensorType], *elements: UniformQuantizedType) -> list[TensorType]:
    """`types` (inferred with i32 elements) with the accumulator of `elements`."""
    return [with_element(t, accumulator_element(*elements)) for t in types]


def with_element(value_type: TensorType, element: Attribute) -> TensorType:
    """`value_type` with another element type."""
    return TensorType(element, value_type.get_shape())


def as_int32(operand_types: Sequence[TensorType]) -> list[TensorType]:
    """The operand types with i32 elements, for reusing `nn`'s shape inference."""
    return [with_element(t, i32) for t in operand_types]


def inferred(types: list[TensorType] | None) -> list[TensorType]:
    """The result types an `nn` op's inference gave (for ops that always infer)."""
    assert types is not None, "the nn op infers its result types"
    return types


def check_result_shape(op: QNNOp, expected: Sequence[int]) -> None:
    """The result's shape is `expected` (for ops whose result type is not inferred)."""
    actual = tuple(tensor_type(op.results[0]).get_shape())
    if actual != tuple(expected):
        raise fail(
            f"result shape {list(actual)} does not match the inferred shape {list(expected)}"
        )


# --------------------------------------------------------------------------------------
# The base op


class QNNOp(TensorOp):
    """Base class of `qnn` ops: `nn`'s syntax, verifier and builders (`TensorOp`), but
    not an `nn` op.

    A `qnn` op is deliberately no `nn.NNOp`, so that passes over float `nn` ops
    (constant folding through the float interpreter, activation fusion, layout
    conversion, quantization itself) never take a `qnn` op for one of theirs.
    """


# --------------------------------------------------------------------------------------
# Constants


@irdl_op_definition
class ConstantOp(QNNOp):
    """A constant of a quantized type, given by its storage integers.

    The value is a dense attribute of the storage type (i8 for int8 weights); the
    result has the quantized type, whose scales and zero points give the values'
    meaning. Every stored value lies in the storage range.

        %w = qnn.constant dense<[[1, -127]]> : tensor<1x2xi8> to tensor<1x2x!quant.uniform<i8<-127:127>:f32:0, {0.02}>>
    """

    name = "qnn.constant"
    value = prop_def(base(DenseIntOrFPElementsAttr) | base(DenseResourceAttr))
    result = result_def(TensorType)
    traits = traits_def(Pure(), ConstantLike())

    @classmethod
    def from_array(cls, stored: np.ndarray, result_type: TensorType) -> ConstantOp:
        """A constant holding the storage integers `stored` as `result_type`."""
        element = quantized_element(result_type)
        if element is None:
            raise ValueError(f"{result_type} is not a quantized tensor type")
        dtype = weights.dtype_of(element.storage_type)
        value = weights.dense_from_numpy(np.asarray(stored).astype(dtype))
        return cls.build([], {"value": value}, [result_type])

    def has_data(self) -> bool:
        """False when the data was elided in the text this op was parsed from."""
        return isinstance(self.value, DenseIntOrFPElementsAttr)

    def array(self) -> np.ndarray:
        """The storage integers, read-only; an `IrcError` if they were elided."""
        return weights.constant_data(self.value, self)

    def verify_(self) -> None:
        static_shape(self.result.type, "result")
        element = quantized(self.result.type, "the result")
        value_type = self.value.type
        assert isinstance(value_type, TensorType)
        if tuple(value_type.get_shape()) != tuple(tensor_type(self.result).get_shape()):
            raise fail(
                f"value type {value_type} and result type {self.result.type} differ in shape"
            )
        if value_type.get_element_type() != element.storage_type:
            raise fail(
                f"the value's element type {value_type.get_element_type()} is not the "
                f"storage type {element.storage_type}"
            )
        if self.has_data():
            data = self.array()
            low, high = element.storage_range
            if data.size and (int(data.min()) < low or int(data.max()) > high):
                bad = int(data.min()) if int(data.min()) < low else int(data.max())
                raise fail(f"stored value {bad} is outside the storage range [{low}, {high}]")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.value)
        printer.print_string(" to ")
        printer.print_attribute(self.result.type)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        at = parser.pos
        value = parser.parse_attribute()
        if not isinstance(value, DenseIntOrFPElementsAttr | DenseResourceAttr):
            parser.raise_error("expected a dense<...> or dense_resource<...> value", at)
        parser.parse_keyword("to")
        result_type = parser.parse_type()
        attributes = parser.parse_optional_attr_dict()
        return cls.create(
            properties={"value": value}, attributes=attributes, result_types=[result_type]
        )


# --------------------------------------------------------------------------------------
# Convolution and matrix products (i32 accumulators)


class _ConvLikeOp(QNNOp):
    """Shared checks of `qnn.conv` and `qnn.conv_transpose`."""

    NN_OP: ClassVar[type[nn.NNOp]]
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)
    layout = layout_prop()
    LAYOUT_OPERANDS: ClassVar[tuple[int, ...]] = (0, 1)
    strides = ints_prop()
    pads = ints_prop()
    dilations = ints_prop()
    group = int_prop(1)

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        # The operand types are channels-first views here; `check` sees the real ones.
        source = activation_bits(per_tensor(operand_types[0], "the input"), "the input")
        weight = eight_bit(quantized(operand_types[1], "the weight", view=True), "the weight")
        if len(operand_types) == 3:
            check_bias(operand_types[2], wide=is_wide(source))
        types = inferred(cls.NN_OP.infer(as_int32(operand_types), props))
        return with_accumulator(types, source, weight)

    def output_channel_axis(self) -> int:
        """The weight axis that a per-axis weight type must be quantized along."""
        raise NotImplementedError

    def terms_per_output(self, weight_shape: Sequence[int], group: int) -> int:
        """At most how many products one output element sums."""
        raise NotImplementedError

    def products(self) -> Products:
        """What one output element sums: its kernel taps, of the input and weight."""
        weight_type = tensor_type(self.weight)
        kernel_taps = self.terms_per_output(weight_type.get_shape(), self.props().int("group") or 1)
        input_element = per_tensor(self.input.type, "the input")
        return kernel_taps, input_element, quantized(weight_type, "the weight")

    def check(self, props: Props) -> None:
        weight_element = quantized(self.weight.type, "the weight")
        axis = self.output_channel_axis()
        if weight_element.is_per_axis and weight_element.quantized_axis != axis:
            raise fail(
                f"the weight must be quantized per tensor or along its output-channel axis "
                f"{axis}, not axis {weight_element.quantized_axis}"
            )
        check_accumulator_bound(*self.products())


@irdl_op_definition
class ConvOp(_ConvLikeOp):
    """Integer convolution: acc = sum((x - zx) * (w - zw)) + bias, as i32.

    The input is quantized per tensor, the weight per tensor or per output channel
    (axis 0), both with 8-bit storage; the optional bias is i32 (or has i32 storage)
    and is added as stored. Strides, pads, dilations, group and layout are `nn.conv`'s;
    padding contributes 0 to the sum (it holds the input zero point). The sum is exact
    (the verifier checks that the worst case fits int32); adding the bias saturates
    to the int32 range. A 16-bit input (int16x8) gives a wide i64 accumulator: the
    bias may be i64, the worst case must fit 48 bits, and adding the bias saturates
    to (-2^47, 2^47).
    """

    name = "qnn.conv"
    NN_OP: ClassVar[type[nn.NNOp]] = nn.ConvOp

    def output_channel_axis(self) -> int:
        return 0

    def terms_per_output(self, weight_shape: Sequence[int], group: int) -> int:
        return math.prod(weight_shape) // weight_shape[0]  # C/group * kernel taps


@irdl_op_definition
class ConvTransposeOp(_ConvLikeOp):
    """Integer transposed convolution: each output sums (x - zx) * (w - zw), plus bias.

    The weight (C, M/group, k...) is quantized per tensor or along its output-channel
    axis (1, or the last axis in the nhwc layout, where it is (C, k..., M/group)); the
    slice j of that axis holds the weights of output channels j, M/group + j, ...
    Otherwise as `nn.conv_transpose` and `qnn.conv`.
    """

    name = "qnn.conv_transpose"
    NN_OP: ClassVar[type[nn.NNOp]] = nn.ConvTransposeOp
    output_padding = ints_prop()

    def output_channel_axis(self) -> int:
        rank = len(tensor_type(self.weight).get_shape())
        return rank - 1 if self.props().str("layout") == "nhwc" else 1

    def terms_per_output(self, weight_shape: Sequence[int], group: int) -> int:
        channels, group_outputs = weight_shape[0], weight_shape[self.output_channel_axis()]
        kernel_taps = math.prod(weight_shape) // (channels * group_outputs)
        return channels // group * kernel_taps


@irdl_op_definition
class MatMulOp(QNNOp):
    """Integer matrix product (numpy's rules): acc = sum((a - za) * (b - zb)), as i32.

    `lhs` is quantized per tensor; `rhs` per tensor or along its last axis (its
    columns, the output features); both have 8-bit storage, or one or both 16-bit,
    which gives a wide i64 accumulator (48-bit values).
    """

    name = "qnn.matmul"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        lhs = activation_bits(per_tensor(operand_types[0], "lhs"), "lhs")
        rhs = activation_bits(quantized(operand_types[1], "rhs"), "rhs")
        types = inferred(nn.MatMulOp.infer(as_int32(operand_types), props))
        return with_accumulator(types, lhs, rhs)

    def products(self) -> Products:
        """What one output element sums: the inner dimension, of lhs and rhs."""
        rhs_shape = tensor_type(self.rhs).get_shape()
        inner = rhs_shape[-2] if len(rhs_shape) > 1 else rhs_shape[0]
        return inner, per_tensor(self.lhs.type, "lhs"), quantized(self.rhs.type, "rhs")

    def check(self, props: Props) -> None:
        rhs_shape = tensor_type(self.rhs).get_shape()
        rhs = quantized(self.rhs.type, "rhs")
        if rhs.is_per_axis and rhs.quantized_axis != len(rhs_shape) - 1:
            raise fail(
                f"rhs must be quantized per tensor or along its last axis {len(rhs_shape) - 1}"
            )
        check_accumulator_bound(*self.products())


@irdl_op_definition
class GemmOp(QNNOp):
    """Integer fully connected layer: acc = op(A - za) @ op(B - zb) + bias, as i32.

    `lhs` is quantized per tensor; `rhs` per tensor or per output feature (axis 1, or
    0 with `trans_b`); the optional bias is i32 (or has i32 storage) and broadcasts
    to the result. Alpha and beta are folded into the scales, so there are none. A
    16-bit `lhs` gives a wide i64 accumulator, as `qnn.conv`'s.
    """

    name = "qnn.gemm"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)
    trans_a = bool_prop(False)
    trans_b = bool_prop(False)

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        lhs = activation_bits(per_tensor(operand_types[0], "lhs"), "lhs")
        rhs = eight_bit(quantized(operand_types[1], "rhs"), "rhs")
        if len(operand_types) == 3:
            check_bias(operand_types[2], wide=is_wide(lhs))
        types = inferred(nn.GemmOp.infer(as_int32(operand_types), props))
        return with_accumulator(types, lhs, rhs)

    def products(self) -> Products:
        """What one output element sums: the inner dimension, of lhs and rhs."""
        feature_axis = 0 if self.props().bool("trans_b") else 1
        inner = tensor_type(self.rhs).get_shape()[1 - feature_axis]
        return inner, per_tensor(self.lhs.type, "lhs"), quantized(self.rhs.type, "rhs")

    def check(self, props: Props) -> None:
        rhs = quantized(self.rhs.type, "rhs")
        feature_axis = 0 if props.bool("trans_b") else 1
        if rhs.is_per_axis and rhs.quantized_axis != feature_axis:
            raise fail(
                f"rhs must be quantized per tensor or along its output-feature axis {feature_axis}"
            )
        check_accumulator_bound(*self.products())


# --------------------------------------------------------------------------------------
# Requantization


@irdl_op_definition
class RequantizeOp(QNNOp):
    """Rescale integers to a quantized type: the rounding rule of every integer op.

    out = clamp(round_half_even(acc * M * 2^-(31 + s)) + z_out, clamp_min, clamp_max)

    with acc = the i32 input, or (x - zx) for a quantized input; exactly, in 64-bit
    integers (a flooring shift, then the remainder decides; ties go to the even
    neighbour). `multiplier` and `shift` hold one
    (M, s) per tensor, or one per slice along `axis` (per-channel requantization of a
    conv); M is in [2^30, 2^31) and s in [-30, 31]. The output zero point is the result
    type's; the clamp bounds (storage units, default the storage range) express a
    fused relu/relu6/clip. A wide i64 input (the 48-bit accumulator of 16-bit
    activations) is scaled by the 16-bit multiplier M' = round(M / 2^16):
    round_half_even(acc * M' * 2^-(15 + s)), with s >= -14.

    `rounding` replaces the rounding half to even by one of TFLite's
    (`fixed_point.ROUNDINGS`, i32 inputs only): "half_up" rounds the exact product
    once, ties up; "double_up" and "double_away" round twice as gemmlowp's
    `MultiplyByQuantizedMultiplier` does, h = floor((acc * 2^max(-s, 0) * M + 2^30) /
    2^31), then h / 2^max(s, 0) rounded with ties up (TFLite's vector kernels, ruy) or
    away from zero (its scalar code). TFLite's int8 conv and fully connected layers
    requantize with "double_up":

        %y = qnn.requantize %acc {multiplier = [1518500250], shift = [7], clamp_min = -5}
               : (tensor<1x8xi32>) -> tensor<1x8x!quant.uniform<i8:f32, 0.05:-5>>
        %t = qnn.requantize %acc {multiplier = [1518500250], shift = [7], rounding = "double_up"}
               : (tensor<1x8xi32>) -> tensor<1x8x!quant.uniform<i8:f32, 0.05:-5>>
    """

    name = "qnn.requantize"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    multiplier = prop_def(ints_constraint())
    shift = prop_def(ints_constraint())
    axis = int_prop()
    clamp_min = int_prop()
    clamp_max = int_prop()
    rounding = rounding_prop()

    def check(self, props: Props) -> None:
        rounding = check_rounding(props)
        input_type = tensor_type(self.input)
        if not is_accumulator(input_type.get_element_type()):
            element = per_tensor(input_type, "the input (i32, i64 or quantized)")
            if element.storage_bits.data == 32 and zero_point(element) != 0:
                raise fail("an input with i32 storage must have zero point 0")
        output = per_tensor(self.result.type, "the result")
        shape = tuple(input_type.get_shape())
        check_result_shape(self, shape)
        multipliers, shifts = props.ints("multiplier") or [], props.ints("shift") or []
        check_multipliers(multipliers, shifts, "'multiplier' and 'shift'")
        if input_type.get_element_type() == i64:
            if rounding != fixed_point.HALF_EVEN:
                raise fail("a wide (i64) input is requantized half to even")
            for multiplier, shift in zip(multipliers, shifts, strict=True):
                problem = fixed_point.check_wide_multiplier(multiplier, shift)
                if problem is not None:
                    raise fail(f"the wide (i64) input's 'multiplier' and 'shift': {problem}")
        axis = props.int("axis")
        if axis is None:
            if len(multipliers) != 1:
                raise fail(
                    f"without 'axis' there is one multiplier and shift, got {len(multipliers)}"
                )
        else:
            if not 0 <= axis < len(shape):
                raise fail(f"axis {axis} is not below the rank {len(shape)}")
            if len(multipliers) != shape[axis]:
                raise fail(
                    f"axis {axis} has {shape[axis]} slices but there are "
                    f"{len(multipliers)} multipliers"
                )
        check_clamp(props, output)


# --------------------------------------------------------------------------------------
# Elementwise arithmetic


class _BinaryOp(QNNOp):
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    clamp_min = int_prop()
    clamp_max = int_prop()

    def _check_operands(self, props: Props) -> tuple[UniformQuantizedType, ...]:
        lhs = per_tensor(self.lhs.type, "lhs")
        rhs = per_tensor(self.rhs.type, "rhs")
        output = per_tensor(self.result.type, "the result")
        shapes = [tensor_type(value).get_shape() for value in (self.lhs, self.rhs)]
        check_result_shape(self, broadcast_shapes(*shapes))
        for element, what in ((lhs, "lhs"), (rhs, "rhs"), (output, "the result")):
            if element.storage_bits.data > 16:
                raise fail(f"{what} must have 8- or 16-bit storage")
        check_clamp(props, output)
        return lhs, rhs, output


class _AddLikeOp(_BinaryOp):
    """The properties and checks that `qnn.add` and `qnn.sub` share."""

    lhs_multiplier = prop_def(IntegerAttr.constr(type=I64))
    lhs_shift = prop_def(IntegerAttr.constr(type=I64))
    rhs_multiplier = prop_def(IntegerAttr.constr(type=I64))
    rhs_shift = prop_def(IntegerAttr.constr(type=I64))
    multiplier = prop_def(IntegerAttr.constr(type=I64))
    shift = prop_def(IntegerAttr.constr(type=I64))
    left_shift = int_prop(fixed_point.ADD_LEFT_SHIFT)
    input_rounding = rounding_prop()
    rounding = rounding_prop()

    def check(self, props: Props) -> None:
        lhs, rhs, _ = self._check_operands(props)
        check_rounding(props, "input_rounding")
        check_rounding(props)
        left_shift = props.int("left_shift")
        assert left_shift is not None  # the property has a default
        if not 0 <= left_shift <= 30:
            raise fail(f"left_shift {left_shift} is outside [0, 30]")
        bound = 0
        for element, prefix in ((lhs, "lhs_"), (rhs, "rhs_")):
            multiplier, shift = props.int(prefix + "multiplier"), props.int(prefix + "shift")
            assert multiplier is not None and shift is not None
            check_multipliers([multiplier], [shift], f"'{prefix}multiplier'")
            shifted = largest_offset(element) << left_shift
            if shifted > fixed_point.INT32_MAX:
                raise fail(
                    f"{prefix[:-1]} shifted left by {left_shift} overflows int32; "
                    "use a smaller left_shift"
                )
            bound += math.ceil(shifted * fixed_point.multiplier_value(multiplier, shift))
        multiplier, shift = props.int("multiplier"), props.int("shift")
        assert multiplier is not None and shift is not None
        check_multipliers([multiplier], [shift], "'multiplier'")
        if bound > fixed_point.INT32_MAX:
            raise fail(f"the rescaled sum can reach {bound}, which overflows int32")


@irdl_op_definition
class AddOp(_AddLikeOp):
    """Add quantized tensors with broadcasting (TFLite's int8 ADD).

    Each input, less its zero point, is shifted left by `left_shift` and rescaled to a
    common scale; the int32 sum is requantized to the result:

        a = fixed_point_multiply((x - zx) << left_shift, lhs_multiplier, lhs_shift)
        b = fixed_point_multiply((y - zy) << left_shift, rhs_multiplier, rhs_shift)
        out = clamp(fixed_point_multiply(a + b, multiplier, shift) + z_out, clamp_min, clamp_max)

    every multiply rounding half to even (see `qnn.requantize`), or as
    `input_rounding` (the multiplies of the inputs) and `rounding` (the sum's) say
    (`fixed_point.ROUNDINGS`). TFLite's int8 ADD rescales the inputs with "half_up" (its
    vector path shifts each input left by 20 + lhs_shift bits before one rounding
    multiply) and the sum with "double_away". The verifier checks that the shifted
    inputs and the sum fit int32. `irc.quantize.scheme.add_parameters` computes the
    properties from the scales.
    """

    name = "qnn.add"


@irdl_op_definition
class SubOp(_AddLikeOp):
    """Subtract quantized tensors with broadcasting (TFLite's int8 SUB): `qnn.add`'s
    arithmetic with the difference of the rescaled inputs,

        out = clamp(fixed_point_multiply(a - b, multiplier, shift) + z_out, clamp_min, clamp_max)

    (a and b as in `qnn.add`). TFLite's int8 SUB rounds every multiply "double_away"
    (its reference kernel). Subtracting the rescaled rhs is not adding a rescale of
    -(y - zy): the rounding of a tie depends on its sign.
    """

    name = "qnn.sub"


@irdl_op_definition
class MulOp(_BinaryOp):
    """Multiply quantized tensors with broadcasting (TFLite's int8 MUL).

    out = clamp(fixed_point_multiply((x - zx) * (y - zy), multiplier, shift) + z_out,
                clamp_min, clamp_max), with multiplier/shift for s_x * s_y / s_out,

    rounding half to even, or as `rounding` says (TFLite's int8 MUL: "double_away").
    """

    name = "qnn.mul"
    multiplier = prop_def(IntegerAttr.constr(type=I64))
    shift = prop_def(IntegerAttr.constr(type=I64))
    rounding = rounding_prop()

    def check(self, props: Props) -> None:
        lhs, rhs, _ = self._check_operands(props)
        check_rounding(props)
        multiplier, shift = props.int("multiplier"), props.int("shift")
        assert multiplier is not None and shift is not None
        check_multipliers([multiplier], [shift], "'multiplier'")
        check_accumulator_bound(1, lhs, rhs)


@irdl_op_definition
class ClampOp(QNNOp):
    """Clamp stored values to [clamp_min, clamp_max]: relu, relu6 or clip at one scale.

    %r = qnn.clamp %x {clamp_min = -5} : tensor<8x!quant.uniform<i8:f32, 0.05:-5>>
    """

    name = "qnn.clamp"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    clamp_min = int_prop()
    clamp_max = int_prop()

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        per_tensor(operand_types[0], "the input")
        return [operand_types[0]]

    def check(self, props: Props) -> None:
        check_clamp(props, per_tensor(self.input.type, "the input"))


@irdl_op_definition
class LutOp(QNNOp):
    """Map 8-bit values through a 256-entry table (int8 sigmoid, tanh, hard_swish, ...),
    or int16 values through a 513-entry interpolated one.

    8 bits: out = table[x - storage_min], storage_min being -128 for i8 and 0 for u8
    inputs. 16 bits (i16 input and result, both symmetric): TFLite's int16 lookup,
    an entry every 128 values and linear interpolation between them,
    `fixed_point.interpolated_lookup`:

        i = 256 + (x >> 7), f = x & 127
        out = table[i] + round_half_even((table[i + 1] - table[i]) * f / 128)

    Every entry is a stored value of the result type.
    `irc.quantize.scheme.build_lut` builds the table of a float function; `function`
    names it (the `nn` op's name without its prefix, as `sigmoid`), which is what a
    target's support table is asked about.

        %y = qnn.lut %x {function = "sigmoid", table = [...]} : (tensor<8x!quant.uniform<i8:f32, 0.05>>) -> tensor<8x!quant.uniform<i8:f32, 0.00390625:-128>>
    """

    name = "qnn.lut"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    table = prop_def(ints_constraint())
    function = prop_def(StringAttr)

    def check(self, props: Props) -> None:
        input_element = per_tensor(self.input.type, "the input")
        output = per_tensor(self.result.type, "the result")
        if input_element.storage_bits.data == 16 or output.storage_bits.data == 16:
            check_symmetric_sixteen(self.name, input_element, output)
            size = fixed_point.LUT16_ENTRIES
        else:
            eight_bit(input_element, "the input")
            eight_bit(output, "the result")
            size = 1 << input_element.storage_bits.data
        check_result_shape(self, tensor_type(self.input).get_shape())
        table = props.ints("table") or []
        if len(table) != size:
            raise fail(f"the table has {len(table)} entries, expected {size}")
        low, high = output.storage_range
        for index, entry in enumerate(table):
            if not low <= entry <= high:
                raise fail(
                    f"table entry #{index} is {entry}, outside the result's storage range "
                    f"[{low}, {high}]"
                )


def check_mask(value: SSAValue, shape: Sequence[int]) -> None:
    """A softmax's mask: i8 (0 keeps, 1 masks) and broadcasting to the input's `shape`."""
    mask = tensor_type(value)
    if mask.get_element_type() != i8:
        raise fail(f"the mask must be an i8 tensor (0 keeps, 1 masks), got {mask}")
    mask_shape = tuple(mask.get_shape())
    if len(mask_shape) > len(shape) or broadcast_shapes(mask_shape, shape) != tuple(shape):
        raise fail(f"the mask of shape {list(mask_shape)} must broadcast to {list(shape)}")


def _check_normalize_types(op: QNNOp) -> tuple[int, ...]:
    """The checks `qnn.softmax`, `qnn.layer_norm` and `qnn.lrn` share: 8-bit per-tensor
    input and result (or both symmetric i16) of one shape; the shape."""
    input_element = per_tensor(op.operands[0].type, "the input")
    output = per_tensor(op.results[0].type, "the result")
    if 16 in (input_element.storage_bits.data, output.storage_bits.data):
        check_symmetric_sixteen(op.name, input_element, output)
    else:
        eight_bit(input_element, "the input")
        eight_bit(output, "the result")
    shape = tuple(tensor_type(op.operands[0]).get_shape())
    check_result_shape(op, shape)
    return shape


def _check_rows(op: QNNOp, props: Props, longest: int) -> tuple[int, ...]:
    """The checks `qnn.softmax` and `qnn.layer_norm` share: `_check_normalize_types`,
    a last axis of 1 to `longest` entries, a valid multiplier; the shape."""
    shape = _check_normalize_types(op)
    if not shape or not 1 <= shape[-1] <= longest:
        raise fail(f"the last axis must have 1 to {longest} entries, got shape {list(shape)}")
    multiplier, shift = props.int("multiplier"), props.int("shift")
    assert multiplier is not None and shift is not None
    check_multipliers([multiplier], [shift], "'multiplier'")
    return shape


@irdl_op_definition
class SoftmaxOp(QNNOp):
    """Softmax of 8-bit (or symmetric 16-bit) values over the last axis, in integers
    (TFLite/CMSIS-NN style).

    Per row: d = max(x) - x; e = table[d], exp(-s_in * d) in Q15; the integer sum S;
    the reciprocal R = floor(2^(n + 15) / S) with n = bit_length(S); the probability
    p = (e * R + 2^(n - 1)) >> n in Q15; out = requantize(p, multiplier, shift) with
    the result's zero point (irc/ir/fixed_point.py's `softmax`, which documents the
    ranges). `irc.quantize.scheme.softmax_parameters` computes `table` (256 entries in
    [0, 32767], the first 32767) and the multiplier of 2^-15 / s_out. For 16-bit values
    d spans 0..65535 and e is interpolated in a 513-entry table, an entry every 128
    steps (`fixed_point.interpolated_lookup`).

    An optional `mask` (an i8 tensor of 0 and 1 that broadcasts to the input, from
    `nn.masked_softmax`) leaves the elements where it is 1 out: they take no part in
    the maximum or the sum and get probability 0 (the result's zero point); a row
    masked entirely is all zero point.

        %p = qnn.softmax %x {table = [32767, ...], multiplier = 2139095040, shift = 7}
               : (tensor<1x4x16x16x!quant.uniform<i8:f32, 0.05:3>>)
               -> tensor<1x4x16x16x!quant.uniform<i8:f32, 0.00392156886:-128>>
        %m = qnn.softmax %x, %causal {...}
               : (tensor<1x4x16x16x!quant.uniform<i8:f32, 0.05:3>>, tensor<16x16xi8>)
               -> tensor<1x4x16x16x!quant.uniform<i8:f32, 0.00392156886:-128>>
    """

    name = "qnn.softmax"
    input = operand_def(TensorType)
    mask = opt_operand_def(TensorType)
    result = result_def(TensorType)
    table = prop_def(ints_constraint())
    multiplier = prop_def(IntegerAttr.constr(type=I64))
    shift = prop_def(IntegerAttr.constr(type=I64))

    def check(self, props: Props) -> None:
        shape = _check_rows(self, props, 65536)
        if self.mask is not None:
            check_mask(self.mask, shape)
        table = props.ints("table") or []
        bits = per_tensor(self.input.type, "the input").storage_bits.data
        entries = fixed_point.LUT16_ENTRIES if bits == 16 else 256
        if len(table) != entries:
            raise fail(f"the table has {len(table)} entries, expected {entries}")
        if table[0] != fixed_point.SOFTMAX_ONE:
            raise fail(f"table entry #0 (exp(0)) is {table[0]}, expected {fixed_point.SOFTMAX_ONE}")
        for index, entry in enumerate(table):
            if not 0 <= entry <= fixed_point.SOFTMAX_ONE:
                raise fail(
                    f"table entry #{index} is {entry}, outside [0, {fixed_point.SOFTMAX_ONE}]"
                )


TFLITE_SOFTMAX_TABLE = 256
"""The entries of `qnn.tflite_softmax`'s table: one per distance from the row's maximum."""


@irdl_op_definition
class TFLiteSoftmaxOp(QNNOp):
    """Softmax of int8 values over the last axis as TFLite's int8 kernel computes it:
    with a table of exp in float32, and float32 arithmetic.

    `table[d]` is exp(-beta * s_in * d) in float32, which TFLite computes once, at
    prepare time (`optimized_ops::PopulateSoftmaxLookupTable`); the result's scale is
    1/256 and its zero point -128 (TFLite's requirement). Per row: the float32 sum S of
    table[max(x) - x_j] in the row's order, r = 1 / (S * s_out), and out_j =
    clamp(round_half_away(table[max(x) - x_j] * r) + z_out), every step a float32
    operation (`fixed_point.float_table_softmax`). It differs from `qnn.softmax`, whose
    every step is an integer one, in structure: a target computes it only with float32
    arithmetic.

        %p = qnn.tflite_softmax %x {table = array<f32: 1.0, 0.97, ...>}
               : (tensor<1x1000x!quant.uniform<i8:f32, 0.05:3>>)
               -> tensor<1x1000x!quant.uniform<i8:f32, 0.00390625:-128>>
    """

    name = "qnn.tflite_softmax"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    table = prop_def(DenseArrayBase.constr(Float32Type))

    def check(self, props: Props) -> None:
        input_element = per_tensor(self.input.type, "the input")
        output = per_tensor(self.result.type, "the result")
        for element, what in ((input_element, "the input"), (output, "the result")):
            if element.storage_type != i8:
                raise fail(f"{what} must have i8 storage, got {element.storage_type}")
        shape = tuple(tensor_type(self.input).get_shape())
        if not shape or shape[-1] < 1:
            raise fail(f"the input must have a last axis, got shape {list(shape)}")
        check_result_shape(self, shape)
        table = props.floats("table") or []
        if len(table) != TFLITE_SOFTMAX_TABLE:
            raise fail(f"the table has {len(table)} entries, expected {TFLITE_SOFTMAX_TABLE}")
        if any(not (math.isfinite(entry) and entry >= 0) for entry in table):
            raise fail("the table's entries must be finite and non-negative")
        if not output.scale_values[0] > 0:
            raise fail("the result's scale must be positive")


@irdl_op_definition
class LayerNormOp(QNNOp):
    """Layer normalization of 8-bit (or symmetric 16-bit) values over the last axis,
    with integer statistics.

    Per row of n values: the centred values c = x - z_x, their integer sum and sum of
    squares, n * (c - mean) and n^2 * var plus `epsilon_term` (round(n^2 * eps /
    s_x^2)), an integer square root, the normalized values in Q11 (Q18 for 16-bit
    values), then per channel j `acc = z * weights[j] + biases[j]` requantized by
    (`multiplier`, `shift`) to the result (irc/ir/fixed_point.py's `layer_norm`, which
    documents every step and bound). `irc.quantize.scheme.layer_norm_parameters`
    computes the properties from gamma, beta and epsilon: weights gamma * 2^Q, biases
    beta * 2^(F + Q); below 2^11 and 2^29 in magnitude for 8-bit values, 2^20 and 2^44
    for 16-bit ones, whose accumulator is wide (48 bits).

        %y = qnn.layer_norm %x {epsilon_term = 4, weights = [1024, ...], biases = [209715, ...], multiplier = 2137224968, shift = 15}
               : (tensor<1x16x32x!quant.uniform<i8:f32, 0.05:3>>) -> tensor<1x16x32x!quant.uniform<i8:f32, 0.0157:-2>>
    """

    name = "qnn.layer_norm"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    epsilon_term = prop_def(IntegerAttr.constr(type=I64))
    weights = prop_def(ints_constraint())
    biases = prop_def(ints_constraint())
    multiplier = prop_def(IntegerAttr.constr(type=I64))
    shift = prop_def(IntegerAttr.constr(type=I64))

    def check(self, props: Props) -> None:
        shape = _check_rows(self, props, fixed_point.LAYER_NORM_MAX_AXIS)
        weights, biases = props.ints("weights") or [], props.ints("biases") or []
        if len(weights) != shape[-1] or len(biases) != shape[-1]:
            raise fail(
                f"there must be one weight and one bias per channel ({shape[-1]}), got "
                f"{len(weights)} and {len(biases)}"
            )
        bits = per_tensor(self.input.type, "the input").storage_bits.data
        weight_bound = 1 << fixed_point.LAYER_NORM_WEIGHT_BITS[bits]
        if any(abs(w) >= weight_bound for w in weights):
            raise fail(
                f"the weights of {bits}-bit values must be below {weight_bound} in magnitude"
            )
        bias_bound = 1 << fixed_point.LAYER_NORM_BIAS_BITS[bits]
        if any(abs(b) >= bias_bound for b in biases):
            raise fail(f"the biases of {bits}-bit values must be below {bias_bound} in magnitude")
        epsilon_term = props.int("epsilon_term")
        if epsilon_term is None or not 0 <= epsilon_term <= 1 << 46:
            raise fail(f"epsilon_term {epsilon_term} is outside [0, 2^46]")


@irdl_op_definition
class LRNOp(QNNOp):
    """Local response normalization of 8-bit (or symmetric 16-bit) values across the
    channels, in integers: ONNX's x / (bias + alpha / size * sum of x^2 over a window
    of `size` channels)^beta.

    Each value at channel j (irc/ir/fixed_point.py's `lrn`, which documents the
    bounds):

        c = x - z_x                                the centred value
        s = sum of c_i^2 over the window           i in [j - (size-1)//2, j + size//2]
        u = max(s, 1), o = bit_length(u) - 1       s's octave
        m = ((u << 18) >> o) - 2^18                its place in the octave, Q18
        i = (o << B) + (m >> (18 - B))             B = 3 (8 segments an octave) for
        p = m & (2^(18 - B) - 1)                   8-bit values, 6 (64) for 16-bit
        f = table[i] + round_half_even((table[i+1] - table[i]) * p / 2^(18 - B))
        out = requantize(c * f, multiplier, shift) the wide (48-bit) requantization

    `table` entry (o << B) + j holds (bias + alpha / size * s_x^2 * s)^-beta at
    s = 2^o * (1 + j / 2^B) in Q30 of its value at s = 1: 225 entries in [0, 2^30] for 8-bit
    values, 2753 for 16-bit ones (`irc.quantize.scheme.lrn_parameters`, which also
    gives the multiplier of s_x * f(1) / (2^30 * s_out)). Interpolating by octave
    keeps every output within one step of ONNX's LRN in float64, however steep bias
    and alpha make the function near s = 0. The channels are the last axis for
    `layout = "nhwc"`, else axis 1.

        %y = qnn.lrn %x {layout = "nhwc", size = 5, table = [1073741824, ...], multiplier = 1342172247, shift = 27}
               : (tensor<1x8x8x16x!quant.uniform<i8:f32, 0.5:-128>>) -> tensor<1x8x8x16x!quant.uniform<i8:f32, 0.1:-128>>
    """

    name = "qnn.lrn"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    layout = layout_prop()
    LAYOUT_OPERANDS: ClassVar[tuple[int, ...]] = (0,)
    size = prop_def(IntegerAttr.constr(type=I64))
    table = prop_def(ints_constraint())
    multiplier = prop_def(IntegerAttr.constr(type=I64))
    shift = prop_def(IntegerAttr.constr(type=I64))

    def check(self, props: Props) -> None:
        shape = _check_normalize_types(self)
        if len(shape) < 3:
            raise fail(f"lrn input must have rank >= 3, got shape {list(shape)}")
        size = props.int("size") or 0
        if not 1 <= size <= fixed_point.LRN_MAX_SIZE:
            raise fail(f"'size' must be 1 to {fixed_point.LRN_MAX_SIZE}, got {size}")
        bits = per_tensor(self.input.type, "the input").storage_bits.data
        table = props.ints("table") or []
        entries = fixed_point.lrn_table_entries(bits)
        if len(table) != entries:
            raise fail(
                f"the table of {bits}-bit values has {len(table)} entries, expected {entries}"
            )
        for index, entry in enumerate(table):
            if not 0 <= entry <= fixed_point.LRN_ONE:
                raise fail(f"table entry #{index} is {entry}, outside [0, 2^30]")
        multiplier, shift = props.int("multiplier"), props.int("shift")
        assert multiplier is not None and shift is not None
        problem = fixed_point.check_wide_multiplier(multiplier, shift)
        if problem is not None:
            raise fail(f"'multiplier': {problem}")


# --------------------------------------------------------------------------------------
# Pooling


class _PoolOp(QNNOp):
    input = operand_def(TensorType)
    result = result_def(TensorType)
    layout = layout_prop()
    LAYOUT_OPERANDS: ClassVar[tuple[int, ...]] = (0,)


@irdl_op_definition
class MaxPoolOp(_PoolOp):
    """Max pooling of stored values (`nn.max_pool`'s windows); the result has the input's type.

    Padding never wins. Comparing stored values is comparing real values, since the
    scale is positive and input and result share it.
    """

    name = "qnn.max_pool"
    kernel_shape = prop_def(ints_constraint())
    strides = ints_prop()
    pads = ints_prop()
    dilations = ints_prop()
    ceil_mode = bool_prop(False)

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        per_tensor(operand_types[0], "the input")
        return nn.MaxPoolOp.infer(operand_types, props)


def _check_rescale(props: Props) -> None:
    multiplier, shift = props.int("multiplier"), props.int("shift")
    assert multiplier is not None and shift is not None  # the properties have defaults
    check_multipliers([multiplier], [shift], "'multiplier'")


POOL_ROUNDINGS = (fixed_point.HALF_EVEN, "half_away")
"""The rounding rules of `qnn.average_pool` (and `tile.pool`'s average): irc's exact
rational rounded half to even, or TFLite's rounded division of the stored values."""


@irdl_op_definition
class AveragePoolOp(_PoolOp):
    """Average pooling with one exact rounding, rescaled to the result type.

    acc = sum(x - zx) over the window's counted taps (padding taps add 0), and

        out = clamp(round_half_even(acc * M * 2^-(31 + s) / count) + z_out, storage range)

    the division and the rescale being one rounding of the exact rational (half to
    even). count is the number of taps inside the input, plus those in the
    explicit padding with `count_include_pad` (taps past the end padding in ceil mode
    never count), as in `nn.average_pool`. (M, s) stand for s_in / s_out; the default
    (2^30, -1) is 1.

    With `rounding = "half_away"` (TFLite's int8 AVERAGE_POOL_2D, whose input and
    result share one type) the stored values, zero point included, are averaged and
    rounded to nearest with ties away from zero: out = round_half_away(sum(x) /
    count) (`fixed_point.divide_round_away`); the result has the input's type and the
    multiplier is 1.
    """

    name = "qnn.average_pool"
    kernel_shape = prop_def(ints_constraint())
    strides = ints_prop()
    pads = ints_prop()
    dilations = ints_prop()
    ceil_mode = bool_prop(False)
    count_include_pad = bool_prop(False)
    multiplier = int_prop(fixed_point.IDENTITY_MULTIPLIER[0])
    shift = int_prop(fixed_point.IDENTITY_MULTIPLIER[1])
    rounding = str_prop(fixed_point.HALF_EVEN)

    def check(self, props: Props) -> None:
        input_type = tensor_type(self.input)
        input_element = per_tensor(input_type, "the input")
        per_tensor(self.result.type, "the result")
        (expected,) = inferred(nn.AveragePoolOp.infer_types([input_type], props))
        check_result_shape(self, expected.get_shape())
        _check_rescale(props)
        if check_rounding(props, allowed=POOL_ROUNDINGS) == "half_away":
            if (props.int("multiplier"), props.int("shift")) != fixed_point.IDENTITY_MULTIPLIER:
                raise fail('rounding "half_away" averages stored values: the multiplier is 1')
            if self.result.type.get_element_type() != input_element:
                raise fail('rounding "half_away" averages stored values: the result has the '
                           "input's type")  # fmt: skip
        taps = math.prod(props.ints("kernel_shape") or [])
        if taps * largest_offset(input_element) > fixed_point.INT32_MAX:
            raise fail("the window sum can overflow int32")


@irdl_op_definition
class GlobalAveragePoolOp(_PoolOp):
    """Mean over all spatial axes, rescaled: `qnn.average_pool` with one window.

    out = clamp(round_half_even(sum(x - zx) * M * 2^-(31 + s) / count) + z_out, storage range)

    With another `rounding` (`fixed_point.ROUNDINGS`), TFLite's integer mean
    (`reference_ops::QuantizedMeanOrSum`, its MEAN over H and W without keep_dims):
    the count is folded into the multiplier, M' = floor(M * 2^k / count) with shift
    s + k, k = min(floor(log2(count)), 32, 31 - s) (`fixed_point.tflite_mean_multiplier`),
    and out = clamp(multiply(sum(x - zx), M', s + k) + z_out), the multiply rounding by
    that rule; TFLite's is "double_away".

    With `bias` (TFLite's optimized 4-D MEAN over H and W with keep_dims), the stored
    values are summed (their zero point included), (M, s) stand for s_in / (count *
    s_out) (no count is folded) and `bias` takes the place of the output zero point:
    out = clamp(multiply(sum(x), M, s) + bias), with one of TFLite's rules
    (`fixed_point.tflite_raw_mean`).
    """

    name = "qnn.global_average_pool"
    multiplier = int_prop(fixed_point.IDENTITY_MULTIPLIER[0])
    shift = int_prop(fixed_point.IDENTITY_MULTIPLIER[1])
    rounding = rounding_prop()
    bias = int_prop()

    def check(self, props: Props) -> None:
        if check_rounding(props) == fixed_point.HALF_EVEN and props.int("bias") is not None:
            raise fail("a 'bias' takes one of TFLite's roundings (the mean of stored values)")
        input_type = tensor_type(self.input)
        input_element = per_tensor(input_type, "the input")
        per_tensor(self.result.type, "the result")
        (expected,) = inferred(nn.GlobalAveragePoolOp.infer_types([input_type], props))
        check_result_shape(self, expected.get_shape())
        _check_rescale(props)
        shape = input_type.get_shape()
        spatial = shape[1:-1] if props.str("layout") == "nhwc" else shape[2:]
        taps = math.prod(spatial)
        if taps * largest_offset(input_element) > fixed_point.INT32_MAX:
            raise fail("the sum over the spatial axes can overflow int32")


# --------------------------------------------------------------------------------------
# Data movement that needs the zero point or a rescale


@irdl_op_definition
class PadOp(QNNOp):
    """Pad a quantized tensor (`nn.pad`); constant padding holds the zero point (real 0).

    Modes "constant", "reflect" and "edge"; negative pads crop. The result has the
    input's type.
    """

    name = "qnn.pad"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    pads = prop_def(ints_constraint())
    mode = str_prop("constant")

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        per_tensor(operand_types[0], "the input")
        return nn.PadOp.infer(operand_types, props)

    def check(self, props: Props) -> None:
        if props.str("mode") not in ("constant", "reflect", "edge"):
            raise fail(
                f'\'mode\' must be "constant", "reflect" or "edge"; got "{props.str("mode")}"'
            )
        nn.PadOp.check(self, props)  # type: ignore[arg-type]  # same properties and operand


RESIZE_MAX_AXES = 3
"""A linear resize interpolates along at most three axes (its weights multiply to 2^30
in Q10 for 8-bit values, 2^45 in Q15 for 16-bit ones: the sums stay within int64)."""


def resize_plan(op: ResizeOp) -> tuple[list[int], list[float], int]:
    """The axes a `qnn.resize` interpolates (scale not 1), their scales, and the
    fraction bits of its weights (`fixed_point.RESIZE_FRACTION_BITS`)."""
    scales = op.props().floats("scales") or []
    axes = [axis for axis, scale in enumerate(scales) if scale != 1.0]
    element = per_tensor(op.input.type, "the input")
    return (
        axes,
        [scales[axis] for axis in axes],
        fixed_point.RESIZE_FRACTION_BITS[element.storage_bits.data],
    )


@irdl_op_definition
class ResizeOp(QNNOp):
    """Linear resize of a quantized tensor (`nn.resize` mode "linear"), in integers as
    TFLite's integer bilinear resize.

    Along each axis whose `scales` entry is not 1 (up to three), output index y reads
    ONNX's source coordinate v of `coordinate_transformation_mode` (half_pixel,
    pytorch_half_pixel, asymmetric, align_corners), computed in float64: the input
    indices y0 = floor(v) and y0 + 1, clamped to the input, weigh 2^F - w and
    w = round_half_even((v - y0) 2^F), F = 10 for 8-bit values (TFLite's Q10), 15 for
    16-bit ones (`fixed_point.resize_coordinates`). The output is the sum of the 2^k
    neighbours' stored values times the products of their weights, rounded half to
    even by F k bits (`fixed_point.resize_linear`). The weights summing to one, the
    zero point passes through: the result has the input's type.

        %y = qnn.resize %x {scales = [1.0, 2.0, 2.0, 1.0]}
               : (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.05:3>>)
               -> tensor<1x8x8x8x!quant.uniform<i8:f32, 0.05:3>>
    """

    name = "qnn.resize"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    scales = prop_def(DenseArrayBase.constr(Float32Type))
    mode = str_prop("linear")
    coordinate_transformation_mode = str_prop("half_pixel")

    def check(self, props: Props) -> None:
        element = per_tensor(self.input.type, "the input")
        if element.storage_bits.data > 16:
            raise fail("the input must have 8- or 16-bit storage")
        if self.result.type.get_element_type() != element:
            raise fail("a resize keeps its input's type (requantize its result to change it)")
        if props.str("mode") != "linear":
            raise fail(f'\'mode\' must be "linear" (a nearest resize is nn.resize), got '
                       f'"{props.str("mode")}"')  # fmt: skip
        coordinates = props.str("coordinate_transformation_mode")
        if coordinates not in fixed_point.LINEAR_RESIZE_MODES:
            raise fail(
                f"'coordinate_transformation_mode' must be one of "
                f'{", ".join(fixed_point.LINEAR_RESIZE_MODES)}; got "{coordinates}"'
            )
        shape = tuple(tensor_type(self.input).get_shape())
        result = tuple(tensor_type(self.result).get_shape())
        scales = props.floats("scales") or []
        if len(result) != len(shape) or len(scales) != len(shape):
            raise fail(f"a resize keeps the rank {len(shape)}, with one scale per axis")
        if any(not scale > 0 for scale in scales):
            raise fail(f"'scales' must be positive, got {scales}")
        resized = [axis for axis, scale in enumerate(scales) if scale != 1.0]
        if not 1 <= len(resized) <= RESIZE_MAX_AXES:
            raise fail(f"a linear resize scales 1 to {RESIZE_MAX_AXES} axes, got {len(resized)}")
        for axis, (size, out) in enumerate(zip(shape, result)):
            if axis not in resized and size != out:
                raise fail(f"axis {axis} has scale 1 but {size} -> {out} elements")


@irdl_op_definition
class ConcatOp(QNNOp):
    """Concatenate along `axis`, requantizing inputs of another type to the result's.

    Input i is taken as is when its type is the result's; otherwise `multipliers[i]`
    and `shifts[i]` (for s_i / s_out) rescale it:
    clamp(fixed_point_multiply(x - z_i, M_i, s_i) + z_out, storage range). Inputs that
    keep their values have (2^30, -1), the multiplier 1. Without the lists every input
    must have the result's type.
    """

    name = "qnn.concat"
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr.constr(type=I64))
    multipliers = ints_prop()
    shifts = ints_prop()

    def check(self, props: Props) -> None:
        output = per_tensor(self.result.type, "the result")
        operand_types = [tensor_type(value) for value in self.inputs]
        for index, operand_type in enumerate(operand_types):
            element = per_tensor(operand_type, f"operand #{index}")
            if element.storage_bits.data > 16:
                raise fail(f"operand #{index} must have 8- or 16-bit storage")
        (expected,) = nn.ConcatOp.infer(as_int32(operand_types), props)
        check_result_shape(self, expected.get_shape())
        multipliers, shifts = props.ints("multipliers"), props.ints("shifts")
        if multipliers is None and shifts is None:
            for index, operand_type in enumerate(operand_types):
                if operand_type.get_element_type() != output:
                    raise fail(
                        f"operand #{index} has type {operand_type.get_element_type()}, not the "
                        f"result's {output}; give 'multipliers' and 'shifts' to requantize it"
                    )
            return
        multipliers, shifts = multipliers or [], shifts or []
        if len(multipliers) != len(operand_types) or len(shifts) != len(operand_types):
            raise fail(
                f"'multipliers' and 'shifts' need one entry per operand ({len(operand_types)})"
            )
        check_multipliers(multipliers, shifts, "'multipliers' and 'shifts'")


QNN = Dialect(
    "qnn",
    [
        ConstantOp,
        ConvOp,
        ConvTransposeOp,
        MatMulOp,
        GemmOp,
        RequantizeOp,
        AddOp,
        SubOp,
        MulOp,
        ClampOp,
        LutOp,
        SoftmaxOp,
        TFLiteSoftmaxOp,
        LayerNormOp,
        LRNOp,
        MaxPoolOp,
        AveragePoolOp,
        GlobalAveragePoolOp,
        PadOp,
        ResizeOp,
        ConcatOp,
    ],
    [],
)
"""The `qnn` dialect."""
