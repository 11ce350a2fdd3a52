"""The `quant` dialect: MLIR's uniform quantized types, and casts to and from them.

A quantized type says how integers stand for real numbers:
`real = scale * (stored - zero_point)`. It has MLIR's syntax and meaning:

    !quant.uniform<i8:f32, 0.0235:-3>            per tensor: scale 0.0235, zero point -3
    !quant.uniform<i8<-127:127>:f32, 0.0235>     a narrowed storage range; zero point 0
    !quant.uniform<u8:f32, 0.1:128>              unsigned storage
    !quant.uniform<i8:f32:0, {0.1:1, 0.2:-2}>    per axis 0: one scale and zero point per slice

`quant.qcast` quantizes a float tensor into a tensor of a quantized type (round half to
even, then saturate to the storage range), `quant.dcast` turns it back into floats,
and `quant.scast` reinterprets it as its storage integers (or back). At run time a
tensor of a quantized type holds its storage integers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    FloatData,
    IntAttr,
    IntegerType,
    NoneAttr,
    Signedness,
    TensorType,
    f32,
)
from xdsl.ir import Attribute, Dialect, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    ParametrizedAttribute,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    result_def,
    traits_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

if TYPE_CHECKING:
    from irc.dialects.base import Props

STORAGE_TYPES = {
    "i8": (8, True),
    "u8": (8, False),
    "i16": (16, True),
    "u16": (16, False),
    "i32": (32, True),
    "i64": (64, True),
}
"""Storage types by their name in the syntax: (bits, signed). i64 stores the biases of
16-bit activations (added to the wide 48-bit accumulator)."""


def _format_scale(value: float) -> str:
    text = repr(float(value))
    if "e" in text and "." not in text.split("e")[0]:
        mantissa, exponent = text.split("e")
        text = f"{mantissa}.0e{exponent}"
    return text


@irdl_attr_definition
class UniformQuantizedType(ParametrizedAttribute, TypeAttribute):
    """A uniform quantized element type, per tensor or per axis (MLIR's `quant.uniform`).

    real = scale * (stored - zero_point), stored in [storage_min, storage_max].
    """

    name = "quant.uniform"

    storage_bits: IntAttr
    signed: IntAttr
    storage_min: IntAttr
    storage_max: IntAttr
    expressed_type: Attribute
    axis: IntAttr | NoneAttr
    scales: ArrayAttr[FloatData]
    zero_points: ArrayAttr[IntAttr]

    @staticmethod
    def make(
        scales: float | Sequence[float],
        zero_points: int | Sequence[int] = 0,
        *,
        bits: int = 8,
        signed: bool = True,
        storage_range: tuple[int, int] | None = None,
        expressed_type: Attribute = f32,
        axis: int | None = None,
    ) -> UniformQuantizedType:
        """Build a type; a per-tensor type takes one scale, a per-axis one a list."""
        scale_list = [scales] if isinstance(scales, int | float) else list(scales)
        if isinstance(zero_points, int):
            zero_list = [zero_points] * len(scale_list)
        else:
            zero_list = list(zero_points)
        low, high = storage_range or full_range(bits, signed)
        return UniformQuantizedType(
            IntAttr(bits),
            IntAttr(int(signed)),
            IntAttr(low),
            IntAttr(high),
            expressed_type,
            NoneAttr() if axis is None else IntAttr(axis),
            ArrayAttr([FloatData(float(s)) for s in scale_list]),
            ArrayAttr([IntAttr(int(z)) for z in zero_list]),
        )

    # ---- accessors --------------------------------------------------------------------

    @property
    def is_per_axis(self) -> bool:
        """True for a per-axis type."""
        return isinstance(self.axis, IntAttr)

    @property
    def quantized_axis(self) -> int | None:
        """The axis whose slices have their own scale, or None per tensor."""
        return self.axis.data if isinstance(self.axis, IntAttr) else None

    @property
    def scale_values(self) -> list[float]:
        """The scales (one per tensor, or one per slice)."""
        return [s.data for s in self.scales.data]

    @property
    def zero_point_values(self) -> list[int]:
        """The zero points (one per tensor, or one per slice)."""
        return [z.data for z in self.zero_points.data]

    @property
    def storage_type(self) -> IntegerType:
        """The integer type the values are stored in (signless for signed storage)."""
        if self.signed.data:
            return IntegerType(self.storage_bits.data)
        return IntegerType(self.storage_bits.data, Signedness.UNSIGNED)

    @property
    def storage_range(self) -> tuple[int, int]:
        """The smallest and largest stored value."""
        return self.storage_min.data, self.storage_max.data

    # ---- verification -------------------------------------------------------------------

    def verify(self) -> None:
        bits, signed = self.storage_bits.data, bool(self.signed.data)
        if (bits, signed) not in STORAGE_TYPES.values():
            raise VerifyException(f"unsupported storage type of {bits} bits")
        low, high = full_range(bits, signed)
        if not low <= self.storage_min.data < self.storage_max.data <= high:
            raise VerifyException(
                f"storage range [{self.storage_min.data}, {self.storage_max.data}] is not "
                f"a non-empty part of [{low}, {high}]"
            )
        if not isinstance(self.expressed_type, AnyFloat):
            raise VerifyException(f"expressed type must be a float type, got {self.expressed_type}")
        scales, zero_points = self.scale_values, self.zero_point_values
        if not scales or len(scales) != len(zero_points):
            raise VerifyException("a quantized type needs one zero point per scale")
        if not self.is_per_axis and len(scales) != 1:
            raise VerifyException("a per-tensor type has exactly one scale")
        if self.is_per_axis and (self.quantized_axis or 0) < 0:
            raise VerifyException("the quantized axis must be non-negative")
        for scale in scales:
            if not scale > 0 or scale == float("inf"):
                raise VerifyException(f"scale {scale} must be positive and finite")
        for zero_point in zero_points:
            if not self.storage_min.data <= zero_point <= self.storage_max.data:
                raise VerifyException(
                    f"zero point {zero_point} is outside the storage range "
                    f"[{self.storage_min.data}, {self.storage_max.data}]"
                )

    def with_axis(self, axis: int) -> UniformQuantizedType:
        """The same per-axis parameters on another axis (after a transpose)."""
        return UniformQuantizedType(
            self.storage_bits,
            self.signed,
            self.storage_min,
            self.storage_max,
            self.expressed_type,
            IntAttr(axis),
            self.scales,
            self.zero_points,
        )

    def verify_tensor(self, tensor_type: TensorType) -> None:
        """Checks that need the tensor: the axis exists and has one scale per slice."""
        axis = self.quantized_axis
        if axis is None:
            return
        shape = tensor_type.get_shape()
        if axis >= len(shape):
            raise VerifyException(f"quantized axis {axis} is not below the rank {len(shape)}")
        if shape[axis] != len(self.scale_values):
            raise VerifyException(
                f"axis {axis} has {shape[axis]} slices but the type has "
                f"{len(self.scale_values)} scales"
            )

    # ---- syntax --------------------------------------------------------------------------

    def print_parameters(self, printer: Printer) -> None:
        storage = f"{'i' if self.signed.data else 'u'}{self.storage_bits.data}"
        if self.storage_range != full_range(self.storage_bits.data, bool(self.signed.data)):
            storage += f"<{self.storage_min.data}:{self.storage_max.data}>"
        printer.print_string(f"<{storage}:")
        printer.print_attribute(self.expressed_type)
        entries = [
            f"{_format_scale(s)}" + (f":{z}" if z != 0 else "")
            for s, z in zip(self.scale_values, self.zero_point_values, strict=True)
        ]
        if self.is_per_axis:
            printer.print_string(f":{self.quantized_axis}, {{{', '.join(entries)}}}>")
        else:
            printer.print_string(f", {entries[0]}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<")
        at = parser.pos
        storage = parser.parse_identifier(context_msg=" for the storage type")
        if storage not in STORAGE_TYPES:
            parser.raise_error(
                f"unknown storage type '{storage}'; expected one of {', '.join(STORAGE_TYPES)}", at
            )
        bits, signed = STORAGE_TYPES[storage]
        low, high = full_range(bits, signed)
        if parser.parse_optional_punctuation("<") is not None:
            low = parser.parse_integer(allow_boolean=False)
            parser.parse_punctuation(":")
            high = parser.parse_integer(allow_boolean=False)
            parser.parse_punctuation(">")
        parser.parse_punctuation(":")
        expressed = parser.parse_type()
        axis: int | None = None
        if parser.parse_optional_punctuation(":") is not None:
            axis = parser.parse_integer(allow_boolean=False)
        parser.parse_punctuation(",")

        def parse_entry() -> tuple[float, int]:
            scale = parser.parse_float()
            zero_point = 0
            if parser.parse_optional_punctuation(":") is not None:
                zero_point = parser.parse_integer(allow_boolean=False)
            return scale, zero_point

        if axis is None:
            entries = [parse_entry()]
        else:
            entries = parser.parse_comma_separated_list(parser.Delimiter.BRACES, parse_entry)
        parser.parse_punctuation(">")
        return (
            IntAttr(bits),
            IntAttr(int(signed)),
            IntAttr(low),
            IntAttr(high),
            expressed,
            NoneAttr() if axis is None else IntAttr(axis),
            ArrayAttr([FloatData(float(s)) for s, _ in entries]),
            ArrayAttr([IntAttr(z) for _, z in entries]),
        )


def full_range(bits: int, signed: bool) -> tuple[int, int]:
    """The full range of a storage type."""
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)


def quantized_element(value_type: Attribute) -> UniformQuantizedType | None:
    """The quantized element type of a tensor type, if it has one."""
    if isinstance(value_type, TensorType) and isinstance(
        value_type.get_element_type(), UniformQuantizedType
    ):
        return value_type.get_element_type()
    return None


def _tensor(value_type: Attribute, what: str) -> TensorType:
    if not isinstance(value_type, TensorType):
        raise VerifyException(f"{what} must be a ranked tensor, got {value_type}")
    return value_type


class _CastOp(IRDLOperation):
    traits = traits_def(Pure())
    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    def props(self) -> Props:
        """No properties: the types say everything (the backend asks every op)."""
        from irc.dialects.base import Props

        return Props(type(self), {})

    def _shapes_match(self) -> tuple[TensorType, TensorType]:
        source, target = _tensor(self.input.type, "input"), _tensor(self.result.type, "result")
        if tuple(source.get_shape()) != tuple(target.get_shape()):
            raise VerifyException(f"cannot cast {source} to {target}: the shapes differ")
        for value_type in (source, target):
            element = quantized_element(value_type)
            if element is not None:
                element.verify_tensor(value_type)
        return source, target


@irdl_op_definition
class QuantizeCastOp(_CastOp):
    """Quantize floats: stored = clamp(round_half_even(x / scale) + zero_point).

    +-inf saturates to the ends of the storage range and NaN becomes the zero point
    (the real 0), on every CPU: a lookup table of sqrt or log over negative inputs
    is well defined.

    %q = quant.qcast %x : tensor<4xf32> to tensor<4x!quant.uniform<i8:f32, 0.1>>
    """

    name = "quant.qcast"

    def verify_(self) -> None:
        source, target = self._shapes_match()
        element = quantized_element(target)
        if element is None:
            raise VerifyException("the result of quant.qcast must have a quantized element type")
        if source.get_element_type() != element.expressed_type:
            raise VerifyException(
                f"the input's element type {source.get_element_type()} is not the expressed "
                f"type {element.expressed_type}"
            )


@irdl_op_definition
class DequantizeCastOp(_CastOp):
    """Dequantize: x = scale * (stored - zero_point), in the expressed type.

    %x = quant.dcast %q : tensor<4x!quant.uniform<i8:f32, 0.1>> to tensor<4xf32>
    """

    name = "quant.dcast"

    def verify_(self) -> None:
        source, target = self._shapes_match()
        element = quantized_element(source)
        if element is None:
            raise VerifyException("the input of quant.dcast must have a quantized element type")
        if target.get_element_type() != element.expressed_type:
            raise VerifyException(
                f"the result's element type {target.get_element_type()} is not the expressed "
                f"type {element.expressed_type}"
            )


@irdl_op_definition
class StorageCastOp(_CastOp):
    """Reinterpret a quantized tensor as its storage integers, or integers as quantized.

    %i = quant.scast %q : tensor<4x!quant.uniform<i8:f32, 0.1>> to tensor<4xi8>
    """

    name = "quant.scast"

    def verify_(self) -> None:
        source, target = self._shapes_match()
        quantized = quantized_element(source) or quantized_element(target)
        other = target if quantized_element(source) else source
        if quantized is None or (quantized_element(source) and quantized_element(target)):
            raise VerifyException("quant.scast casts between a quantized type and its storage type")
        if other.get_element_type() != quantized.storage_type:
            raise VerifyException(
                f"{other.get_element_type()} is not the storage type {quantized.storage_type}"
            )


QUANT = Dialect(
    "quant",
    [QuantizeCastOp, DequantizeCastOp, StorageCastOp],
    [UniformQuantizedType],
)
