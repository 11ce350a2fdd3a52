"""The `nn` dialect: ONNX-like ops on static-shaped tensors with value semantics.

Every op takes and returns ranked tensors whose shapes are fully static. Shape-like
ONNX inputs (a Reshape's shape, a Slice's starts, a Pad's pads, ...) are properties,
resolved to constants when the model is imported; an op's result type is either
inferred from its operands and properties (and checked by the verifier) or, for ops
such as `nn.reshape` and `nn.expand`, is itself what defines the result.

All ops share one readable syntax, MLIR's custom-op form:

    %y = nn.conv %x, %w, %b {pads = [1, 1, 1, 1], strides = [2, 2]}
           : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
    %r = nn.relu %y : tensor<1x4x4x4xf32>

Properties are printed in a dictionary with plain values (`[1, 2]`, `3`, `0.5`,
`"nearest"`, `true`, `f32`); properties equal to their default are omitted. When all
operand and result types are the same, the type is written once. The generic MLIR
form (`"nn.relu"(%x) : (...) -> ...`) is accepted and printed with
`--mlir-print-op-generic`.

See docs/nn-dialect.md for the op reference and docs/adding-an-op.md for how to add one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    I64,
    AnyFloat,
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    LocationAttr,
    StringAttr,
    TensorType,
    f32,
    i1,
    i64,
)
from xdsl.ir import Attribute, Dialect, TypeAttribute
from xdsl.irdl import (
    ParametrizedAttribute,
    base,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import ConstantLike, Pure
from xdsl.utils.exceptions import VerifyException

from irc.dialects.base import (
    Props,
    TensorOp,
    bool_prop,
    broadcast_shapes,
    fail,
    float_prop,
    format_float,
    int_prop,
    ints_constraint,
    ints_prop,
    layout_prop,
    static_shape,
    str_prop,
    tensor_type,
)

# irc/rewrite, left to the rules change, reads `nn.coerce_property`: this re-export
# goes once it imports irc.dialects.base.
from irc.dialects.base import coerce_property as coerce_property
from irc.dialects.quant import UniformQuantizedType
from irc.ir import weights

# --------------------------------------------------------------------------------------
# Helpers for verifiers and shape inference


def normalize_axis(axis: int, rank: int, what: str = "axis") -> int:
    """Map a possibly negative axis into [0, rank), or a verification error."""
    if not -rank <= axis < rank:
        raise fail(f"{what} {axis} is out of range for rank {rank}")
    return axis % rank


def check_same_element_type(operand_types: Sequence[TensorType]) -> None:
    """Check that every operand has the first operand's element type."""
    element_type = operand_types[0].get_element_type()
    for index, operand_type in enumerate(operand_types):
        if operand_type.get_element_type() != element_type:
            raise fail(
                f"operand #{index} has element type {operand_type.get_element_type()}, "
                f"expected {element_type}"
            )


# --------------------------------------------------------------------------------------
# The base op: the syntax, verifier and builders of irc.dialects.base.TensorOp


class NNOp(TensorOp):
    """Base class of `nn` ops: `TensorOp`'s syntax, verifier and builders.

    Subclasses declare operands, results and properties as usual in xDSL, and may
    override `infer` (result types from operand types and properties) and
    `check` (further checks on a built op).
    """

    traits = traits_def(Pure())


# --------------------------------------------------------------------------------------
# Fused activations

ACTIVATIONS: dict[str, tuple[str, ...]] = {
    "relu": (),
    "clip": ("min", "max"),
    "leaky_relu": ("alpha",),
    "hard_swish": (),
    "sigmoid": (),
}
"""Activations that can be fused into the op producing their input, with the names of
their parameters (`clip` with min 0 and max 6 is ReLU6)."""


@irdl_attr_definition
class ActivationAttr(ParametrizedAttribute):
    """An activation applied to an op's result, fused into the op.

    #nn.activation<relu>
    #nn.activation<clip min = 0.0, max = 6.0>
    #nn.activation<leaky_relu alpha = 0.1>
    """

    name = "nn.activation"
    kind: StringAttr
    values: ArrayAttr[FloatAttr]

    @staticmethod
    def make(kind: str, **parameters: float) -> ActivationAttr:
        """The activation `kind` with its parameters by name."""
        names = ACTIVATIONS.get(kind, tuple(parameters))
        return ActivationAttr(
            StringAttr(kind), ArrayAttr([FloatAttr(float(parameters[n]), f32) for n in names])
        )

    def named_values(self) -> dict[str, float]:
        """The parameters by name, e.g. {"min": 0.0, "max": 6.0} for a clip."""
        names = ACTIVATIONS[self.kind.data]
        return {name: value.value.data for name, value in zip(names, self.values.data, strict=True)}

    def verify(self) -> None:
        kind = self.kind.data
        if kind not in ACTIVATIONS:
            raise VerifyException(
                f"unknown activation '{kind}'; expected one of {', '.join(ACTIVATIONS)}"
            )
        if len(self.values.data) != len(ACTIVATIONS[kind]):
            raise VerifyException(
                f"activation '{kind}' takes {len(ACTIVATIONS[kind])} parameter(s) "
                f"({', '.join(ACTIVATIONS[kind]) or 'none'}), got {len(self.values.data)}"
            )

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<" + self.kind.data)
        names = ACTIVATIONS.get(self.kind.data, ())
        entries = [
            f"{name} = {format_float(value.value.data)}"
            for name, value in zip(names, self.values.data)
        ]
        if entries:
            printer.print_string(" " + ", ".join(entries))
        printer.print_string(">")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            at = parser.pos
            kind = parser.parse_identifier(context_msg=" for the activation kind")
            if kind not in ACTIVATIONS:
                parser.raise_error(
                    f"unknown activation '{kind}'; expected one of {', '.join(ACTIVATIONS)}", at
                )
            given: dict[str, float] = {}

            def parse_entry() -> None:
                name_at = parser.pos
                name = parser.parse_identifier(context_msg=" for an activation parameter")
                if name not in ACTIVATIONS[kind]:
                    parser.raise_error(f"activation '{kind}' has no parameter '{name}'", name_at)
                parser.parse_punctuation("=")
                given[name] = parser.parse_float()

            if ACTIVATIONS[kind]:
                parser.parse_comma_separated_list(parser.Delimiter.NONE, parse_entry)
            missing = [name for name in ACTIVATIONS[kind] if name not in given]
            if missing:
                parser.raise_error(f"activation '{kind}' needs {', '.join(missing)}")
        return (StringAttr(kind), ArrayAttr([FloatAttr(given[n], f32) for n in ACTIVATIONS[kind]]))


def activation_prop() -> ActivationAttr | None:
    """The optional `activation` property of ops that can absorb an activation."""
    return opt_prop_def(ActivationAttr)


# --------------------------------------------------------------------------------------
# Constants


@irdl_op_definition
class ConstantOp(NNOp):
    """A constant tensor (weights, shapes, scalars).

    Small values print inline; large ones as `dense_resource<name>` handles whose bytes
    go where the printing policy says (see irc/ir/weights.py).

        %w = nn.constant dense<[1.0, 2.0]> : tensor<2xf32>
    """

    name = "nn.constant"
    value = prop_def(base(DenseIntOrFPElementsAttr) | base(DenseResourceAttr))
    result = result_def(TensorType)
    traits = traits_def(Pure(), ConstantLike())

    @classmethod
    def from_array(cls, array: np.ndarray, location: LocationAttr | None = None) -> ConstantOp:
        """A constant holding a copy of `array`."""
        value = weights.dense_from_numpy(np.asarray(array))
        return cls.build([], {"value": value}, [value.type], location)

    @classmethod
    def from_attr(
        cls, value: DenseIntOrFPElementsAttr, location: LocationAttr | None = None
    ) -> ConstantOp:
        """A constant holding `value`."""
        return cls.build([], {"value": value}, [value.type], location)

    def has_data(self) -> bool:
        """False when the weights were elided in the text this op was parsed from."""
        return isinstance(self.value, DenseIntOrFPElementsAttr)

    def array(self) -> np.ndarray:
        """The value as a read-only numpy array; an `IrcError` if it was elided."""
        return weights.constant_data(self.value, self)

    def verify_(self) -> None:
        static_shape(self.result.type, "result")
        if self.value.type != self.result.type:
            raise fail(
                f"value type {self.value.type} does not match result type {self.result.type}"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.value)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        at = parser.pos
        value = parser.parse_attribute()
        if not isinstance(value, DenseIntOrFPElementsAttr | DenseResourceAttr):
            parser.raise_error("expected a dense<...> or dense_resource<...> value", at)
        attributes = parser.parse_optional_attr_dict()
        return cls.create(
            properties={"value": value}, attributes=attributes, result_types=[value.type]
        )


@irdl_op_definition
class ConstantOfShapeOp(NNOp):
    """A tensor of the result's shape filled with one value (ONNX ConstantOfShape)."""

    name = "nn.constant_of_shape"
    value = prop_def(DenseIntOrFPElementsAttr)
    result = result_def(TensorType)

    def check(self, props: Props) -> None:
        value = self.value
        if len(value) != 1:
            raise fail("'value' must hold exactly one element")
        if value.get_element_type() != self.result.type.get_element_type():
            raise fail("'value' and the result must have the same element type")


# --------------------------------------------------------------------------------------
# Elementwise unary ops


class UnaryOp(NNOp):
    """An elementwise op whose result has its input's type."""

    FLOAT_ONLY: ClassVar[bool] = True
    input = operand_def(TensorType)
    result = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        return [operand_types[0]]


@irdl_op_definition
class ReluOp(UnaryOp):
    """max(x, 0)."""

    name = "nn.relu"


@irdl_op_definition
class LeakyReluOp(UnaryOp):
    """x if x >= 0 else alpha * x."""

    name = "nn.leaky_relu"
    alpha = float_prop(0.01)


@irdl_op_definition
class EluOp(UnaryOp):
    """x if x > 0 else alpha * (exp(x) - 1)."""

    name = "nn.elu"
    alpha = float_prop(1.0)


@irdl_op_definition
class CeluOp(UnaryOp):
    """x if x > 0 else alpha * (exp(x / alpha) - 1): an ELU continuous in alpha."""

    name = "nn.celu"
    alpha = float_prop(1.0)

    def check(self, props: Props) -> None:
        if props.float("alpha") == 0:
            raise fail("alpha must not be 0 (celu divides by it)")


@irdl_op_definition
class SeluOp(UnaryOp):
    """gamma * (x if x > 0 else alpha * (exp(x) - 1))."""

    name = "nn.selu"
    alpha = float_prop(1.67326319217681884765625)
    gamma = float_prop(1.05070102214813232421875)


@irdl_op_definition
class ClipOp(UnaryOp):
    """min(max(x, min), max); an absent bound is unbounded (ReLU6 is min = 0, max = 6)."""

    name = "nn.clip"
    min = float_prop()
    max = float_prop()


@irdl_op_definition
class SigmoidOp(UnaryOp):
    """1 / (1 + exp(-x))."""

    name = "nn.sigmoid"


@irdl_op_definition
class HardSigmoidOp(UnaryOp):
    """max(0, min(1, alpha * x + beta))."""

    name = "nn.hard_sigmoid"
    alpha = float_prop(0.2)
    beta = float_prop(0.5)


@irdl_op_definition
class HardSwishOp(UnaryOp):
    """x * max(0, min(1, x / 6 + 1 / 2))."""

    name = "nn.hard_swish"


@irdl_op_definition
class TanhOp(UnaryOp):
    """tanh(x)."""

    name = "nn.tanh"


@irdl_op_definition
class SoftplusOp(UnaryOp):
    """log(exp(x) + 1)."""

    name = "nn.softplus"


@irdl_op_definition
class SoftsignOp(UnaryOp):
    """x / (1 + |x|)."""

    name = "nn.softsign"


@irdl_op_definition
class MishOp(UnaryOp):
    """x * tanh(softplus(x))."""

    name = "nn.mish"


@irdl_op_definition
class GeluOp(UnaryOp):
    """Gaussian error linear unit; `approximate` is "none" (erf) or "tanh"."""

    name = "nn.gelu"
    approximate = str_prop("none")

    def check(self, props: Props) -> None:
        if props.str("approximate") not in ("none", "tanh"):
            raise fail('\'approximate\' must be "none" or "tanh"')


@irdl_op_definition
class ExpOp(UnaryOp):
    """exp(x)."""

    name = "nn.exp"


@irdl_op_definition
class LogOp(UnaryOp):
    """Natural logarithm."""

    name = "nn.log"


@irdl_op_definition
class SqrtOp(UnaryOp):
    """Square root."""

    name = "nn.sqrt"


@irdl_op_definition
class ErfOp(UnaryOp):
    """The Gauss error function."""

    name = "nn.erf"


@irdl_op_definition
class ReciprocalOp(UnaryOp):
    """1 / x."""

    name = "nn.reciprocal"


@irdl_op_definition
class FloorOp(UnaryOp):
    """Round toward negative infinity."""

    name = "nn.floor"


@irdl_op_definition
class CeilOp(UnaryOp):
    """Round toward positive infinity."""

    name = "nn.ceil"


@irdl_op_definition
class NegOp(UnaryOp):
    """-x."""

    name = "nn.neg"
    FLOAT_ONLY: ClassVar[bool] = False


@irdl_op_definition
class AbsOp(UnaryOp):
    """|x|."""

    name = "nn.abs"
    FLOAT_ONLY: ClassVar[bool] = False


@irdl_op_definition
class IdentityOp(UnaryOp):
    """x, unchanged."""

    name = "nn.identity"
    FLOAT_ONLY: ClassVar[bool] = False


@irdl_op_definition
class DropoutOp(UnaryOp):
    """Dropout at inference: x, unchanged (removed by canonicalization)."""

    name = "nn.dropout"
    FLOAT_ONLY: ClassVar[bool] = False
    ratio = float_prop(0.5)


@irdl_op_definition
class CastOp(NNOp):
    """Convert elements to the type `to` (float to int truncates toward zero)."""

    name = "nn.cast"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    to = prop_def(TypeAttribute)

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        target = props.required("to")
        try:
            weights.dtype_of(target)
        except ValueError:
            raise fail(f"cannot cast to {target}") from None
        return [TensorType(target, operand_types[0].get_shape())]


# --------------------------------------------------------------------------------------
# Elementwise binary and variadic ops with broadcasting


class BroadcastOp(NNOp):
    """Elementwise over operands broadcast together, all of one element type."""

    RESULT_BOOL: ClassVar[bool] = False

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        if not operand_types:
            raise fail(f"'{cls.name}' needs at least one operand")
        check_same_element_type(operand_types)
        element_type = operand_types[0].get_element_type()
        shape = broadcast_shapes(*(t.get_shape() for t in operand_types))
        return [TensorType(i1 if cls.RESULT_BOOL else element_type, shape)]


class BinaryOp(BroadcastOp):
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)


class VariadicOp(BroadcastOp):
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)


@irdl_op_definition
class AddOp(BinaryOp):
    """lhs + rhs, then an optional fused activation."""

    name = "nn.add"
    activation = activation_prop()


@irdl_op_definition
class SubOp(BinaryOp):
    """lhs - rhs."""

    name = "nn.sub"


@irdl_op_definition
class MulOp(BinaryOp):
    """lhs * rhs."""

    name = "nn.mul"


@irdl_op_definition
class DivOp(BinaryOp):
    """lhs / rhs (integer division truncates toward zero, as in ONNX)."""

    name = "nn.div"


@irdl_op_definition
class ModOp(BinaryOp):
    """The remainder of lhs / rhs: with the sign of rhs (Python's %, integers only), or
    of lhs with `fmod` (C's fmod, required for floats), as ONNX Mod."""

    name = "nn.mod"
    fmod = bool_prop(False)

    def check(self, props: Props) -> None:
        if isinstance(self.lhs.type, TensorType) and not props.bool("fmod"):
            element = self.lhs.type.get_element_type()
            if not isinstance(element, IntegerType):
                raise fail("a float remainder needs fmod = true (ONNX refuses fmod = 0)")


@irdl_op_definition
class PowOp(NNOp):
    """lhs ** rhs; the exponent may have another element type."""

    name = "nn.pow"
    FLOAT_ONLY: ClassVar[bool] = True
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        shape = broadcast_shapes(operand_types[0].get_shape(), operand_types[1].get_shape())
        return [TensorType(operand_types[0].get_element_type(), shape)]


@irdl_op_definition
class SumOp(VariadicOp):
    """The elementwise sum of one or more tensors."""

    name = "nn.sum"


@irdl_op_definition
class MaxOp(VariadicOp):
    """The elementwise maximum of one or more tensors."""

    name = "nn.max"


@irdl_op_definition
class MinOp(VariadicOp):
    """The elementwise minimum of one or more tensors."""

    name = "nn.min"


@irdl_op_definition
class EqualOp(BinaryOp):
    """lhs == rhs, as i1."""

    name = "nn.equal"
    RESULT_BOOL: ClassVar[bool] = True


@irdl_op_definition
class LessOp(BinaryOp):
    """lhs < rhs, as i1."""

    name = "nn.less"
    RESULT_BOOL: ClassVar[bool] = True


@irdl_op_definition
class LessOrEqualOp(BinaryOp):
    """lhs <= rhs, as i1."""

    name = "nn.less_or_equal"
    RESULT_BOOL: ClassVar[bool] = True


@irdl_op_definition
class GreaterOp(BinaryOp):
    """lhs > rhs, as i1."""

    name = "nn.greater"
    RESULT_BOOL: ClassVar[bool] = True


@irdl_op_definition
class GreaterOrEqualOp(BinaryOp):
    """lhs >= rhs, as i1."""

    name = "nn.greater_or_equal"
    RESULT_BOOL: ClassVar[bool] = True


@irdl_op_definition
class WhereOp(NNOp):
    """condition ? lhs : rhs, broadcasting all three."""

    name = "nn.where"
    condition = operand_def(TensorType)
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        condition, lhs, rhs = operand_types
        if condition.get_element_type() != i1:
            raise fail(f"condition must have element type i1, got {condition.get_element_type()}")
        if lhs.get_element_type() != rhs.get_element_type():
            raise fail("both branches must have the same element type")
        shape = broadcast_shapes(condition.get_shape(), lhs.get_shape(), rhs.get_shape())
        return [TensorType(lhs.get_element_type(), shape)]


@irdl_op_definition
class PReluOp(NNOp):
    """x if x >= 0 else slope * x; slope broadcasts to x (unidirectionally)."""

    name = "nn.prelu"
    FLOAT_ONLY: ClassVar[bool] = True
    input = operand_def(TensorType)
    slope = operand_def(TensorType)
    result = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        x, slope = operand_types
        check_same_element_type(operand_types)
        if broadcast_shapes(x.get_shape(), slope.get_shape()) != tuple(x.get_shape()):
            raise fail(f"slope {slope} does not broadcast to input {x}")
        return [x]


# --------------------------------------------------------------------------------------
# Convolution and matrix products


def _spatial_params(
    props: Props, spatial: int, kernel: Sequence[int] | None = None
) -> tuple[list[int], list[int], list[int], list[int]]:
    """Kernel, strides, pads, dilations of a sliding-window op, checked and defaulted."""
    kernel = list(kernel) if kernel is not None else props.ints("kernel_shape")
    if kernel is None:
        raise fail("'kernel_shape' is required")
    strides = props.ints("strides") or [1] * spatial
    pads = props.ints("pads") or [0] * (2 * spatial)
    dilations = props.ints("dilations") or [1] * spatial
    if len(kernel) != spatial:
        raise fail(f"kernel has {len(kernel)} dimensions, expected {spatial}")
    if len(strides) != spatial:
        raise fail(f"'strides' has {len(strides)} values, expected {spatial}")
    if len(dilations) != spatial:
        raise fail(f"'dilations' has {len(dilations)} values, expected {spatial}")
    if len(pads) != 2 * spatial:
        raise fail(f"'pads' has {len(pads)} values, expected {2 * spatial}")
    if any(s < 1 for s in strides) or any(d < 1 for d in dilations):
        raise fail("strides and dilations must be positive")
    if any(p < 0 for p in pads):
        raise fail("pads must be non-negative")
    if any(k < 1 for k in kernel):
        raise fail("kernel dimensions must be positive")
    return kernel, strides, pads, dilations


def window_output_size(
    size: int, kernel: int, stride: int, pad_begin: int, pad_end: int, dilation: int, ceil: bool
) -> int:
    """Output length of a sliding window along one axis (ONNX's formula, ceil_mode too)."""
    span = size + pad_begin + pad_end - ((kernel - 1) * dilation + 1)
    if span < 0:
        raise fail(f"window of {kernel} (dilation {dilation}) does not fit in {size} + padding")
    out = (-(-span // stride) if ceil else span // stride) + 1
    if ceil and (out - 1) * stride >= size + pad_begin:
        out -= 1  # the last window would start in the end padding
    return out


@irdl_op_definition
class ConvOp(NNOp):
    """N-d convolution (ONNX Conv) with groups, dilations, strides and explicit pads.

    input (N, C, D1..Dn), weight (M, C/group, k1..kn), optional bias (M).
    `pads` is [begin_1..begin_n, end_1..end_n].
    """

    name = "nn.conv"
    FLOAT_ONLY: ClassVar[bool] = True
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)
    activation = activation_prop()
    layout = layout_prop()
    LAYOUT_OPERANDS: ClassVar[tuple[int, ...]] = (0, 1)
    strides = ints_prop()
    pads = ints_prop()
    dilations = ints_prop()
    group = int_prop(1)

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        x, w = operand_types[0].get_shape(), operand_types[1].get_shape()
        if len(x) < 3 or len(w) != len(x):
            raise fail(f"input rank {len(x)} and weight rank {len(w)} must be equal and >= 3")
        check_same_element_type(operand_types)
        group = props.int("group")
        assert group is not None  # the property has a default
        if group < 1 or x[1] % group or w[0] % group:
            raise fail(
                f"group {group} must divide input channels {x[1]} and output channels {w[0]}"
            )
        if w[1] * group != x[1]:
            raise fail(f"weight expects {w[1] * group} input channels, input has {x[1]}")
        if len(operand_types) == 3 and tuple(operand_types[2].get_shape()) != (w[0],):
            raise fail(f"bias must have shape [{w[0]}], got {list(operand_types[2].get_shape())}")
        spatial = len(x) - 2
        _, strides, pads, dilations = _spatial_params(props, spatial, w[2:])
        out = [
            window_output_size(
                x[2 + i], w[2 + i], strides[i], pads[i], pads[spatial + i], dilations[i], False
            )
            for i in range(spatial)
        ]
        return [TensorType(operand_types[0].get_element_type(), [x[0], w[0], *out])]


@irdl_op_definition
class ConvTransposeOp(NNOp):
    """N-d transposed convolution (ONNX ConvTranspose) with explicit pads.

    input (N, C, D1..Dn), weight (C, M/group, k1..kn), optional bias (M). Output size
    per axis: stride * (D - 1) + output_padding + (k - 1) * dilation + 1 - pads.
    """

    name = "nn.conv_transpose"
    FLOAT_ONLY: ClassVar[bool] = True
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)
    activation = activation_prop()
    layout = layout_prop()
    LAYOUT_OPERANDS: ClassVar[tuple[int, ...]] = (0, 1)
    strides = ints_prop()
    pads = ints_prop()
    dilations = ints_prop()
    output_padding = ints_prop()
    group = int_prop(1)

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        x, w = operand_types[0].get_shape(), operand_types[1].get_shape()
        if len(x) < 3 or len(w) != len(x):
            raise fail(f"input rank {len(x)} and weight rank {len(w)} must be equal and >= 3")
        check_same_element_type(operand_types)
        group = props.int("group")
        assert group is not None  # the property has a default
        if w[0] != x[1] or group < 1 or x[1] % group:
            raise fail(f"weight has {w[0]} input channels, input has {x[1]} (group {group})")
        channels = w[1] * group
        if len(operand_types) == 3 and tuple(operand_types[2].get_shape()) != (channels,):
            raise fail(f"bias must have shape [{channels}]")
        spatial = len(x) - 2
        _, strides, pads, dilations = _spatial_params(props, spatial, w[2:])
        output_padding = props.ints("output_padding") or [0] * spatial
        if len(output_padding) != spatial:
            raise fail(f"'output_padding' has {len(output_padding)} values, expected {spatial}")
        out = []
        for i in range(spatial):
            size = (
                strides[i] * (x[2 + i] - 1)
                + output_padding[i]
                + (w[2 + i] - 1) * dilations[i]
                + 1
                - pads[i]
                - pads[spatial + i]
            )
            if size < 1:
                raise fail(f"output size along spatial axis {i} would be {size}")
            out.append(size)
        return [TensorType(operand_types[0].get_element_type(), [x[0], channels, *out])]


@irdl_op_definition
class GemmOp(NNOp):
    """alpha * op(A) @ op(B) + beta * C, op transposing when trans_a/trans_b (ONNX Gemm)."""

    name = "nn.gemm"
    FLOAT_ONLY: ClassVar[bool] = True
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)
    activation = activation_prop()
    alpha = float_prop(1.0)
    beta = float_prop(1.0)
    trans_a = bool_prop(False)
    trans_b = bool_prop(False)

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        a, b = operand_types[0].get_shape(), operand_types[1].get_shape()
        if len(a) != 2 or len(b) != 2:
            raise fail("gemm operands must be 2-D")
        check_same_element_type(operand_types)
        m, k = (a[1], a[0]) if props.bool("trans_a") else (a[0], a[1])
        k2, n = (b[1], b[0]) if props.bool("trans_b") else (b[0], b[1])
        if k != k2:
            raise fail(f"inner dimensions differ: {k} and {k2}")
        if len(operand_types) == 3:
            c = operand_types[2].get_shape()
            if broadcast_shapes(c, (m, n)) != (m, n):
                raise fail(f"bias of shape {list(c)} does not broadcast to [{m}, {n}]")
        return [TensorType(operand_types[0].get_element_type(), [m, n])]


@irdl_op_definition
class MatMulOp(NNOp):
    """Matrix product with numpy's rules (ONNX MatMul).

    Batch dimensions broadcast; a 1-D operand is promoted to a matrix and the added
    dimension is removed from the result.
    """

    name = "nn.matmul"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    activation = activation_prop()

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        a, b = list(operand_types[0].get_shape()), list(operand_types[1].get_shape())
        if not a or not b:
            raise fail("matmul operands must have rank >= 1")
        if operand_types[0].get_element_type() != operand_types[1].get_element_type():
            raise fail("matmul operands must have the same element type")
        a2 = [1, *a] if len(a) == 1 else a
        b2 = [*b, 1] if len(b) == 1 else b
        if a2[-1] != b2[-2]:
            raise fail(f"inner dimensions differ: {a2[-1]} and {b2[-2]}")
        batch = broadcast_shapes(a2[:-2], b2[:-2])
        shape = [*batch, a2[-2], b2[-1]]
        if len(a) == 1:
            del shape[-2]
        if len(b) == 1:
            del shape[-1]
        return [TensorType(operand_types[0].get_element_type(), shape)]


# --------------------------------------------------------------------------------------
# Normalization


@irdl_op_definition
class BatchNormOp(NNOp):
    """Inference batch normalization over channels (axis 1).

    scale * (x - mean) / sqrt(var + epsilon) + bias, each parameter of shape (C).
    """

    name = "nn.batch_norm"
    FLOAT_ONLY: ClassVar[bool] = True
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    mean = operand_def(TensorType)
    var = operand_def(TensorType)
    result = result_def(TensorType)
    layout = layout_prop()
    LAYOUT_OPERANDS: ClassVar[tuple[int, ...]] = (0,)
    epsilon = float_prop(1e-5)

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        x = operand_types[0].get_shape()
        if len(x) < 2:
            raise fail("batch_norm input must have rank >= 2")
        for index, name in enumerate(("scale", "bias", "mean", "var"), start=1):
            if tuple(operand_types[index].get_shape()) != (x[1],):
                raise fail(
                    f"{name} must have shape [{x[1]}], got {list(operand_types[index].get_shape())}"
                )
        return [operand_types[0]]


@irdl_op_definition
class InstanceNormOp(NNOp):
    """Instance normalization over the spatial axes of each (sample, channel)."""

    name = "nn.instance_norm"
    FLOAT_ONLY: ClassVar[bool] = True
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    result = result_def(TensorType)
    layout = layout_prop()
    LAYOUT_OPERANDS: ClassVar[tuple[int, ...]] = (0,)
    epsilon = float_prop(1e-5)

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        x = operand_types[0].get_shape()
        if len(x) < 3:
            raise fail("instance_norm input must have rank >= 3")
        check_same_element_type(operand_types)
        for index in (1, 2):
            if tuple(operand_types[index].get_shape()) != (x[1],):
                raise fail(f"scale and bias must have shape [{x[1]}]")
        return [operand_types[0]]


@irdl_op_definition
class LayerNormOp(NNOp):
    """Layer normalization over the axes from `axis` on, then scale and optional bias."""

    name = "nn.layer_norm"
    FLOAT_ONLY: ClassVar[bool] = True
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)
    axis = int_prop(-1)
    epsilon = float_prop(1e-5)

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        x = tuple(operand_types[0].get_shape())
        axis = normalize_axis(props.int("axis") or 0, len(x))
        normalized = x[axis:]
        check_same_element_type(operand_types)
        for value_type in operand_types[1:]:
            if broadcast_shapes(value_type.get_shape(), normalized) != normalized:
                raise fail(f"scale and bias must broadcast to {list(normalized)}")
        return [operand_types[0]]


@irdl_op_definition
class LRNOp(NNOp):
    """Local response normalization across channels (AlexNet, GoogLeNet)."""

    name = "nn.lrn"
    FLOAT_ONLY: ClassVar[bool] = True
    input = operand_def(TensorType)
    result = result_def(TensorType)
    layout = layout_prop()
    LAYOUT_OPERANDS: ClassVar[tuple[int, ...]] = (0,)
    size = prop_def(IntegerAttr.constr(type=I64))
    alpha = float_prop(1e-4)
    beta = float_prop(0.75)
    bias = float_prop(1.0)

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        if len(operand_types[0].get_shape()) < 3:
            raise fail("lrn input must have rank >= 3")
        if (props.int("size") or 0) < 1:
            raise fail("'size' must be positive")
        return [operand_types[0]]


# --------------------------------------------------------------------------------------
# Pooling


class PoolOp(NNOp):
    FLOAT_ONLY: ClassVar[bool] = True
    input = operand_def(TensorType)
    result = result_def(TensorType)
    layout = layout_prop()
    LAYOUT_OPERANDS: ClassVar[tuple[int, ...]] = (0,)

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        x = operand_types[0].get_shape()
        if len(x) < 3:
            raise fail("pooling input must have rank >= 3")
        spatial = len(x) - 2
        kernel, strides, pads, dilations = _spatial_params(props, spatial)
        ceil = props.bool("ceil_mode")
        out = []
        for i in range(spatial):
            if (
                pads[i] >= (kernel[i] - 1) * dilations[i] + 1
                or pads[spatial + i] >= (kernel[i] - 1) * dilations[i] + 1
            ):
                raise fail("pads must be smaller than the (dilated) kernel")
            out.append(
                window_output_size(
                    x[2 + i], kernel[i], strides[i], pads[i], pads[spatial + i], dilations[i], ceil
                )
            )
        return [TensorType(operand_types[0].get_element_type(), [x[0], x[1], *out])]


@irdl_op_definition
class MaxPoolOp(PoolOp):
    """Max pooling over a window (ONNX MaxPool, no indices output)."""

    name = "nn.max_pool"
    kernel_shape = prop_def(ints_constraint())
    strides = ints_prop()
    pads = ints_prop()
    dilations = ints_prop()
    ceil_mode = bool_prop(False)


@irdl_op_definition
class AveragePoolOp(PoolOp):
    """Average pooling; padding is excluded from the divisor unless count_include_pad."""

    name = "nn.average_pool"
    kernel_shape = prop_def(ints_constraint())
    strides = ints_prop()
    pads = ints_prop()
    dilations = ints_prop()
    ceil_mode = bool_prop(False)
    count_include_pad = bool_prop(False)


class GlobalPoolOp(NNOp):
    FLOAT_ONLY: ClassVar[bool] = True
    input = operand_def(TensorType)
    result = result_def(TensorType)
    layout = layout_prop()
    LAYOUT_OPERANDS: ClassVar[tuple[int, ...]] = (0,)

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        x = operand_types[0].get_shape()
        if len(x) < 3:
            raise fail("global pooling input must have rank >= 3")
        return [TensorType(operand_types[0].get_element_type(), [x[0], x[1]] + [1] * (len(x) - 2))]


@irdl_op_definition
class GlobalAveragePoolOp(GlobalPoolOp):
    """Mean over all spatial axes, keeping them as size 1."""

    name = "nn.global_average_pool"


@irdl_op_definition
class GlobalMaxPoolOp(GlobalPoolOp):
    """Maximum over all spatial axes, keeping them as size 1."""

    name = "nn.global_max_pool"


# --------------------------------------------------------------------------------------
# Reductions and softmax


class ReduceOp(NNOp):
    input = operand_def(TensorType)
    result = result_def(TensorType)
    axes = ints_prop()
    keepdims = bool_prop(True)

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        x = list(operand_types[0].get_shape())
        axes = props.ints("axes")
        reduced = set(range(len(x))) if axes is None else {normalize_axis(a, len(x)) for a in axes}
        if axes is not None and len(reduced) != len(axes):
            raise fail(f"'axes' {axes} repeats an axis")
        if props.bool("keepdims"):
            shape = [1 if i in reduced else d for i, d in enumerate(x)]
        else:
            shape = [d for i, d in enumerate(x) if i not in reduced]
        return [TensorType(operand_types[0].get_element_type(), shape)]


@irdl_op_definition
class ReduceMeanOp(ReduceOp):
    """Mean over `axes` (all axes if absent)."""

    name = "nn.reduce_mean"
    FLOAT_ONLY: ClassVar[bool] = True


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    """Sum over `axes` (all axes if absent)."""

    name = "nn.reduce_sum"


@irdl_op_definition
class ReduceMaxOp(ReduceOp):
    """Maximum over `axes` (all axes if absent)."""

    name = "nn.reduce_max"


@irdl_op_definition
class ReduceMinOp(ReduceOp):
    """Minimum over `axes` (all axes if absent)."""

    name = "nn.reduce_min"


class AxisUnaryOp(UnaryOp):
    axis = int_prop(-1)

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        normalize_axis(props.int("axis") or 0, len(operand_types[0].get_shape()))
        return [operand_types[0]]


@irdl_op_definition
class SoftmaxOp(AxisUnaryOp):
    """exp(x) / sum(exp(x)) along `axis` (ONNX opset 13 semantics)."""

    name = "nn.softmax"


@irdl_op_definition
class MaskedSoftmaxOp(NNOp):
    """Softmax along the last axis over the elements where `mask` is false: those
    where it is true (an i1 constant that broadcasts to `input`, such as an
    attention's causal mask) get probability 0, as if they were -inf; a row masked
    entirely is all 0.

    `fuse-norms` makes it of `softmax(where(mask, fill, x))` and of
    `softmax(x + bias)` for a constant fill or bias at or below -1e4, which exporters
    write for attention masks.

        %p = nn.masked_softmax %x, %mask : (tensor<1x4x16x16xf32>, tensor<16x16xi1>) -> tensor<1x4x16x16xf32>
    """

    name = "nn.masked_softmax"
    FLOAT_ONLY: ClassVar[bool] = True
    input = operand_def(TensorType)
    mask = operand_def(TensorType)
    result = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        x, mask = operand_types
        if mask.get_element_type() != i1:
            raise fail(f"mask must have element type i1, got {mask.get_element_type()}")
        shape = tuple(x.get_shape())
        if not shape:
            raise fail("the input must have at least one axis")
        if broadcast_shapes(mask.get_shape(), shape) != shape:
            raise fail(f"mask of shape {list(mask.get_shape())} must broadcast to {list(shape)}")
        return [x]


@irdl_op_definition
class LogSoftmaxOp(AxisUnaryOp):
    """log(softmax(x)) along `axis` (ONNX opset 13 semantics)."""

    name = "nn.log_softmax"


@irdl_op_definition
class CumSumOp(AxisUnaryOp):
    """Running sums along `axis`: exclusive (each element left out of its own sum)
    and in reverse order when asked, as ONNX CumSum."""

    name = "nn.cumsum"
    FLOAT_ONLY: ClassVar[bool] = False
    exclusive = bool_prop(False)
    reverse = bool_prop(False)


@irdl_op_definition
class TriluOp(NNOp):
    """The upper (or lower) triangle of the last two axes from diagonal `k` on; the
    other elements become 0 (ONNX Trilu)."""

    name = "nn.trilu"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    upper = bool_prop(True)
    k = int_prop(0)

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        if len(operand_types[0].get_shape()) < 2:
            raise fail("the input must have at least 2 axes")
        return [operand_types[0]]


# --------------------------------------------------------------------------------------
# Data movement


@irdl_op_definition
class ConcatOp(NNOp):
    """Concatenate along `axis`."""

    name = "nn.concat"
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr.constr(type=I64))

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        if not operand_types:
            raise fail("concat needs at least one operand")
        first = list(operand_types[0].get_shape())
        axis = normalize_axis(props.int("axis") or 0, len(first))
        total = 0
        for index, operand_type in enumerate(operand_types):
            shape = list(operand_type.get_shape())
            if operand_type.get_element_type() != operand_types[0].get_element_type():
                raise fail(f"operand #{index} has another element type")
            if len(shape) != len(first) or any(
                d != f for i, (d, f) in enumerate(zip(shape, first)) if i != axis
            ):
                raise fail(
                    f"operand #{index} of shape {shape} does not match {first} off axis {axis}"
                )
            total += shape[axis]
        first[axis] = total
        return [TensorType(operand_types[0].get_element_type(), first)]


@irdl_op_definition
class SplitOp(NNOp):
    """Split along `axis` into pieces of the given `sizes`."""

    name = "nn.split"
    input = operand_def(TensorType)
    outputs = var_result_def(TensorType)
    axis = int_prop(0)
    sizes = prop_def(ints_constraint())

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        shape = list(operand_types[0].get_shape())
        axis = normalize_axis(props.int("axis") or 0, len(shape))
        sizes = props.ints("sizes") or []
        if any(s < 0 for s in sizes):
            raise fail(f"sizes must be non-negative, got {sizes}")
        if sum(sizes) != shape[axis]:
            raise fail(f"sizes {sizes} do not add up to dimension {shape[axis]}")
        element_type = operand_types[0].get_element_type()
        return [TensorType(element_type, [*shape[:axis], s, *shape[axis + 1 :]]) for s in sizes]

    @classmethod
    def single_type_result_count(cls) -> int:
        return 1


def slice_bounds(size: int, start: int, end: int, step: int) -> tuple[int, int]:
    """The clamped [start, end) that ONNX Slice walks by `step` along one axis.

    Negative bounds count from the end; then, for a positive step, both clamp to
    [0, size]; for a negative step, start clamps to [0, size - 1] and end to
    [-1, size - 1] (-1 meaning "through index 0"). This differs from Python's slices,
    which select nothing when a negative step starts before the first element.
    """
    start = start + size if start < 0 else start
    end = end + size if end < 0 else end
    if step > 0:
        return min(max(start, 0), size), min(max(end, 0), size)
    return min(max(start, 0), size - 1), min(max(end, -1), size - 1)


def slice_length(size: int, start: int, end: int, step: int) -> int:
    """Elements selected along one axis by ONNX Slice (see `slice_bounds`)."""
    start, end = slice_bounds(size, start, end, step)
    return len(range(start, end, step))


@irdl_op_definition
class SliceOp(NNOp):
    """Take start:end:step along each of `axes` (ONNX Slice; out-of-range ends clamp)."""

    name = "nn.slice"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    starts = prop_def(ints_constraint())
    ends = prop_def(ints_constraint())
    axes = ints_prop()
    steps = ints_prop()

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        shape = list(operand_types[0].get_shape())
        starts, ends = props.ints("starts") or [], props.ints("ends") or []
        axes = props.ints("axes") or list(range(len(starts)))
        steps = props.ints("steps") or [1] * len(starts)
        if not len(starts) == len(ends) == len(axes) == len(steps):
            raise fail("starts, ends, axes and steps must have the same length")
        normalized = [normalize_axis(a, len(shape)) for a in axes]
        if len(set(normalized)) != len(normalized):
            raise fail(f"'axes' {axes} repeats an axis")
        for axis, start, end, step in zip(normalized, starts, ends, steps):
            if step == 0:
                raise fail("steps must be non-zero")
            shape[axis] = slice_length(shape[axis], start, end, step)
        return [TensorType(operand_types[0].get_element_type(), shape)]


@irdl_op_definition
class GatherOp(NNOp):
    """Pick entries of `input` along `axis` at `indices` (negative indices count back)."""

    name = "nn.gather"
    input = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    axis = int_prop(0)

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        data, indices = list(operand_types[0].get_shape()), list(operand_types[1].get_shape())
        if (
            not isinstance(operand_types[1].get_element_type(), IntegerType)
            or operand_types[1].get_element_type() == i1
        ):
            raise fail("indices must be integers")
        axis = normalize_axis(props.int("axis") or 0, len(data))
        return [
            TensorType(
                operand_types[0].get_element_type(), data[:axis] + indices + data[axis + 1 :]
            )
        ]


@irdl_op_definition
class ReshapeOp(NNOp):
    """Reinterpret the elements in the (static) result shape."""

    name = "nn.reshape"
    input = operand_def(TensorType)
    result = result_def(TensorType)

    def check(self, props: Props) -> None:
        source, target = tensor_type(self.input), self.result.type
        if source.get_element_type() != target.get_element_type():
            raise fail("reshape cannot change the element type")
        if math.prod(source.get_shape()) != math.prod(target.get_shape()):
            raise fail(f"cannot reshape {source} to {target}: element counts differ")


@irdl_op_definition
class FlattenOp(NNOp):
    """Reshape to 2-D: the axes before `axis`, and the rest."""

    name = "nn.flatten"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    axis = int_prop(1)

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        shape = list(operand_types[0].get_shape())
        axis = props.int("axis")
        axis = 1 if axis is None else axis
        if not -len(shape) <= axis <= len(shape):
            raise fail(f"axis {axis} is out of range for rank {len(shape)}")
        if axis < 0:
            axis += len(shape)
        return [
            TensorType(
                operand_types[0].get_element_type(),
                [math.prod(shape[:axis]), math.prod(shape[axis:])],
            )
        ]


@irdl_op_definition
class SqueezeOp(NNOp):
    """Remove the size-1 axes listed in `axes`."""

    name = "nn.squeeze"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    axes = prop_def(ints_constraint())

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        shape = list(operand_types[0].get_shape())
        axes = {normalize_axis(a, len(shape)) for a in props.ints("axes") or []}
        for axis in axes:
            if shape[axis] != 1:
                raise fail(f"cannot squeeze axis {axis} of size {shape[axis]}")
        return [
            TensorType(
                operand_types[0].get_element_type(),
                [d for i, d in enumerate(shape) if i not in axes],
            )
        ]


@irdl_op_definition
class UnsqueezeOp(NNOp):
    """Insert size-1 axes at the positions `axes` of the result."""

    name = "nn.unsqueeze"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    axes = prop_def(ints_constraint())

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        shape = list(operand_types[0].get_shape())
        given = props.ints("axes") or []
        rank = len(shape) + len(given)
        axes = sorted(normalize_axis(a, rank) for a in given)
        if len(set(axes)) != len(axes):
            raise fail(f"'axes' {given} repeats an axis")
        for axis in axes:
            shape.insert(axis, 1)
        return [TensorType(operand_types[0].get_element_type(), shape)]


@irdl_op_definition
class TransposeOp(NNOp):
    """Permute axes: result axis i is input axis perm[i]."""

    name = "nn.transpose"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    perm = prop_def(ints_constraint())

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        shape = list(operand_types[0].get_shape())
        perm = props.ints("perm") or []
        if sorted(perm) != list(range(len(shape))):
            raise fail(f"perm {perm} is not a permutation of the {len(shape)} axes")
        element = operand_types[0].get_element_type()
        if isinstance(element, UniformQuantizedType) and element.quantized_axis is not None:
            element = element.with_axis(perm.index(element.quantized_axis))  # it moves too
        return [TensorType(element, [shape[p] for p in perm])]


PAD_MODES = ("constant", "reflect", "edge", "wrap")


@irdl_op_definition
class PadOp(NNOp):
    """Pad by `pads` = [begin_0..begin_n-1, end_0..end_n-1] (negative values crop)."""

    name = "nn.pad"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    pads = prop_def(ints_constraint())
    mode = str_prop("constant")
    value = float_prop(0.0)

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        shape = list(operand_types[0].get_shape())
        pads = props.ints("pads") or []
        if len(pads) != 2 * len(shape):
            raise fail(f"'pads' has {len(pads)} values, expected {2 * len(shape)}")
        out = [d + pads[i] + pads[len(shape) + i] for i, d in enumerate(shape)]
        if any(d < 0 for d in out):
            raise fail(f"pads {pads} crop more than the input {shape}")
        return [TensorType(operand_types[0].get_element_type(), out)]

    def check(self, props: Props) -> None:
        mode = props.str("mode")
        if mode not in PAD_MODES:
            raise fail(f"'mode' must be one of {', '.join(PAD_MODES)}; got \"{mode}\"")
        shape = tensor_type(self.input).get_shape()
        pads = props.ints("pads") or []
        if mode == "reflect" and any(
            max(pads[i], pads[len(shape) + i]) >= shape[i] for i in range(len(shape))
        ):
            raise fail("reflect padding must be smaller than the padded dimension")


RESIZE_MODES = ("nearest", "linear", "cubic")
RESIZE_COORDINATE_MODES = (
    "half_pixel",
    "half_pixel_symmetric",
    "pytorch_half_pixel",
    "align_corners",
    "asymmetric",
    "tf_crop_and_resize",
)
RESIZE_NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


@irdl_op_definition
class ResizeOp(NNOp):
    """Resize with ONNX Resize semantics (nearest, linear, cubic).

    `scales` (one per axis) drive the coordinate transform; the result type gives the
    output size. A nearest resize only moves values, so it takes any element type
    (quantized ones included); linear and cubic compute new values from floats.
    """

    name = "nn.resize"
    FLOAT_ONLY: ClassVar[bool] = False
    input = operand_def(TensorType)
    result = result_def(TensorType)
    scales = prop_def(DenseArrayBase.constr(Float32Type))
    mode = str_prop("nearest")
    coordinate_transformation_mode = str_prop("half_pixel")
    nearest_mode = str_prop("round_prefer_floor")
    cubic_coeff_a = float_prop(-0.75)
    exclude_outside = bool_prop(False)

    def check(self, props: Props) -> None:
        rank = len(tensor_type(self.input).get_shape())
        scales = props.floats("scales") or []
        if len(scales) != rank or any(s <= 0 for s in scales):
            raise fail(f"'scales' must hold {rank} positive values")
        for name, allowed in (
            ("mode", RESIZE_MODES),
            ("coordinate_transformation_mode", RESIZE_COORDINATE_MODES),
            ("nearest_mode", RESIZE_NEAREST_MODES),
        ):
            if props.str(name) not in allowed:
                raise fail(
                    f"'{name}' must be one of {', '.join(allowed)}; got \"{props.str(name)}\""
                )
        if props.str("coordinate_transformation_mode") == "tf_crop_and_resize":
            raise fail(
                "tf_crop_and_resize needs regions of interest, which nn.resize does not take"
            )
        element = tensor_type(self.input).get_element_type()
        if props.str("mode") != "nearest" and not isinstance(element, AnyFloat):
            raise fail(
                f"a {props.str('mode')} resize computes new values: it expects a "
                f"floating-point input, got {element}"
            )
        if self.result.type.get_element_type() != element:
            raise fail("resize cannot change the element type")
        if len(self.result.type.get_shape()) != rank:
            raise fail("resize cannot change the rank")


@irdl_op_definition
class DepthToSpaceOp(NNOp):
    """Move blocks of channels into spatial blocks (`mode` "DCR" or "CRD")."""

    name = "nn.depth_to_space"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    layout = layout_prop()
    LAYOUT_OPERANDS: ClassVar[tuple[int, ...]] = (0,)
    blocksize = prop_def(IntegerAttr.constr(type=I64))
    mode = str_prop("DCR")

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        shape = list(operand_types[0].get_shape())
        block = props.int("blocksize") or 0
        if len(shape) != 4:
            raise fail("depth_to_space input must be 4-D")
        if block < 1:
            raise fail(f"'blocksize' must be positive, got {block}")
        if shape[1] % (block * block):
            raise fail(f"channels {shape[1]} are not divisible by blocksize^2 = {block * block}")
        if props.str("mode") not in ("DCR", "CRD"):
            raise fail('\'mode\' must be "DCR" or "CRD"')
        n, c, h, w = shape
        return [
            TensorType(
                operand_types[0].get_element_type(), [n, c // (block * block), h * block, w * block]
            )
        ]


@irdl_op_definition
class ExpandOp(NNOp):
    """Broadcast the input to the (static) result shape."""

    name = "nn.expand"
    input = operand_def(TensorType)
    result = result_def(TensorType)

    def check(self, props: Props) -> None:
        source, target = tensor_type(self.input), self.result.type
        if source.get_element_type() != target.get_element_type():
            raise fail("expand cannot change the element type")
        if broadcast_shapes(source.get_shape(), target.get_shape()) != tuple(target.get_shape()):
            raise fail(f"{source} does not broadcast to {target}")


@irdl_op_definition
class TileOp(NNOp):
    """Repeat the input `repeats[i]` times along each axis i."""

    name = "nn.tile"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    repeats = prop_def(ints_constraint())

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        shape = list(operand_types[0].get_shape())
        repeats = props.ints("repeats") or []
        if len(repeats) != len(shape) or any(r < 0 for r in repeats):
            raise fail(f"'repeats' must hold {len(shape)} non-negative values")
        return [
            TensorType(operand_types[0].get_element_type(), [d * r for d, r in zip(shape, repeats)])
        ]


@irdl_op_definition
class ShapeOp(NNOp):
    """The input's shape (dimensions start:end) as a 1-D i64 tensor."""

    name = "nn.shape"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    start = int_prop(0)
    end = int_prop()

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        rank = len(operand_types[0].get_shape())
        start, end = shape_op_range(rank, props.int("start"), props.int("end"))
        return [TensorType(i64, [max(0, end - start)])]


def shape_op_range(rank: int, start: int | None, end: int | None) -> tuple[int, int]:
    """The clamped [start, end) of dimensions that `nn.shape` returns."""
    start = 0 if start is None else start
    end = rank if end is None else end
    start = min(max(start + rank if start < 0 else start, 0), rank)
    end = min(max(end + rank if end < 0 else end, 0), rank)
    return start, end


NN = Dialect(
    "nn",
    [
        ConstantOp,
        ConstantOfShapeOp,
        ModOp,
        CumSumOp,
        TriluOp,
        ReluOp,
        LeakyReluOp,
        EluOp,
        CeluOp,
        SeluOp,
        ClipOp,
        SigmoidOp,
        HardSigmoidOp,
        HardSwishOp,
        TanhOp,
        SoftplusOp,
        SoftsignOp,
        MishOp,
        GeluOp,
        ExpOp,
        LogOp,
        SqrtOp,
        ErfOp,
        ReciprocalOp,
        FloorOp,
        CeilOp,
        NegOp,
        AbsOp,
        IdentityOp,
        DropoutOp,
        CastOp,
        AddOp,
        SubOp,
        MulOp,
        DivOp,
        PowOp,
        SumOp,
        MaxOp,
        MinOp,
        EqualOp,
        LessOp,
        LessOrEqualOp,
        GreaterOp,
        GreaterOrEqualOp,
        WhereOp,
        PReluOp,
        ConvOp,
        ConvTransposeOp,
        GemmOp,
        MatMulOp,
        BatchNormOp,
        InstanceNormOp,
        LayerNormOp,
        LRNOp,
        MaxPoolOp,
        AveragePoolOp,
        GlobalAveragePoolOp,
        GlobalMaxPoolOp,
        ReduceMeanOp,
        ReduceSumOp,
        ReduceMaxOp,
        ReduceMinOp,
        SoftmaxOp,
        MaskedSoftmaxOp,
        LogSoftmaxOp,
        ConcatOp,
        SplitOp,
        SliceOp,
        GatherOp,
        ReshapeOp,
        FlattenOp,
        SqueezeOp,
        UnsqueezeOp,
        TransposeOp,
        PadOp,
        ResizeOp,
        DepthToSpaceOp,
        ExpandOp,
        TileOp,
        ShapeOp,
    ],
    [ActivationAttr],
)
