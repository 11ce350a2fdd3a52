"""What the op dialects share: property declarations, verifier helpers, the readable
syntax of properties, and `TensorOp`, the base of ops on static-shaped tensors.

`nn` and `qnn` ops derive from `TensorOp` (MLIR's custom-op form with properties in a
dictionary of plain values, result types inferred and checked); `tile` and `npu` ops
use the property declarations, `Props` and the property syntax. Nothing here belongs
to one dialect: the dialects import this module, and it imports none of them but
`quant`, whose types a tensor's element type may be.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import ClassVar, Self, TypeVar

import numpy as np
from xdsl.dialects.builtin import (
    I64,
    AnyFloat,
    ArrayAttr,
    BoolAttr,
    DenseArrayBase,
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
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    AttrConstraint,
    EqAttrConstraint,
    IRDLOperation,
    VerificationContext,
    opt_prop_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from irc.dialects.quant import UniformQuantizedType
from irc.ir import fixed_point

AttributeT = TypeVar("AttributeT", bound=Attribute)

# --------------------------------------------------------------------------------------
# Property declarations


def ints_constraint() -> AttrConstraint[DenseArrayBase[IntegerType]]:
    """The constraint of a required list-of-integers property (`prop_def(...)`)."""
    return DenseArrayBase.constr(I64)


def ints_prop(default: Sequence[int] | None = None) -> DenseArrayBase[IntegerType] | None:
    """An optional list-of-integers property (`[1, 2]`), stored as `array<i64: ...>`."""
    value = None if default is None else DenseArrayBase.from_list(i64, list(default))
    return opt_prop_def(ints_constraint(), default_value=value)


def int_prop(default: int | None = None) -> IntegerAttr | None:
    """An optional integer property, stored as an `i64` integer attribute."""
    value = None if default is None else IntegerAttr(default, i64)
    return opt_prop_def(IntegerAttr.constr(type=I64), default_value=value)


def float_prop(default: float | None = None) -> FloatAttr | None:
    """An optional float property, stored as an `f32` float attribute."""
    value = None if default is None else FloatAttr(default, f32)
    return opt_prop_def(FloatAttr.constr(type=Float32Type), default_value=value)


def floats_prop() -> DenseArrayBase[Float32Type] | None:
    """An optional list-of-floats property (`[1.0, 2.0]`), stored as `array<f32: ...>`."""
    return opt_prop_def(DenseArrayBase.constr(Float32Type))


def bool_prop(default: bool = False) -> IntegerAttr:
    """An optional boolean property (`true`/`false`)."""
    return opt_prop_def(
        IntegerAttr.constr(type=EqAttrConstraint(i1)), default_value=BoolAttr.from_bool(default)
    )


def str_prop(default: str | None = None) -> StringAttr | None:
    """An optional string property (`"nearest"`); allowed values are checked by the op."""
    value = None if default is None else StringAttr(default)
    return opt_prop_def(StringAttr, default_value=value)


def rounding_prop() -> StringAttr | None:
    """The optional `rounding` property of a rescaling op: one of
    `fixed_point.ROUNDINGS`, default irc's "half_even" (TFLite's kernels round
    otherwise; docs/tflite.md)."""
    return str_prop(fixed_point.HALF_EVEN)


# --------------------------------------------------------------------------------------
# Helpers for verifiers and shape inference


def fail(message: str) -> VerifyException:
    """A verification failure; `raise fail(...)` in verifiers and inference."""
    return VerifyException(message)


def check_rounding(props: Props, name: str = "rounding", allowed: Sequence[str] = ()) -> str:
    """The rounding rule a property names, checked to be one of `allowed` (default
    `fixed_point.ROUNDINGS`)."""
    rounding = props.str(name) or fixed_point.HALF_EVEN
    choices = tuple(allowed) or fixed_point.ROUNDINGS
    if rounding not in choices:
        raise fail(f"'{name}' must be one of {', '.join(choices)}; got \"{rounding}\"")
    return rounding


def static_shape(value_type: Attribute, what: str) -> tuple[int, ...]:
    """The shape of a ranked, static tensor type, or a verification error."""
    if not isinstance(value_type, TensorType):
        raise fail(f"{what} must be a ranked tensor, got {value_type}")
    shape = tuple(value_type.get_shape())
    if any(dim < 0 for dim in shape):
        raise fail(f"{what} must have a static shape, got {value_type}")
    return shape


def tensor_type(value: SSAValue) -> TensorType:
    """The type of `value`, which must be a ranked tensor (as every `nn` value is)."""
    if not isinstance(value.type, TensorType):
        raise fail(f"expected a ranked tensor value, got {value.type}")
    return value.type


LAYOUTS = ("nchw", "nhwc")
"""Data layouts of spatial ops: channels first (ONNX's), or channels last (`nhwc`
stands for every rank: N, spatial axes..., C)."""


def channels_last_perm(rank: int) -> list[int]:
    """The permutation that takes a channels-first tensor to channels-last."""
    return [0, *range(2, rank), 1]


def channels_first_perm(rank: int) -> list[int]:
    """The permutation that takes a channels-last tensor to channels-first."""
    return [0, rank - 1, *range(1, rank - 1)]


def to_channels_last(value_type: TensorType) -> TensorType:
    """The channels-last form of a channels-first tensor type."""
    shape = value_type.get_shape()
    return TensorType(
        value_type.get_element_type(), [shape[p] for p in channels_last_perm(len(shape))]
    )


def to_channels_first(value_type: TensorType) -> TensorType:
    """The channels-first form of a channels-last tensor type."""
    shape = value_type.get_shape()
    return TensorType(
        value_type.get_element_type(), [shape[p] for p in channels_first_perm(len(shape))]
    )


def layout_prop():
    """The `layout` property of spatial ops: "nchw" (default) or "nhwc"."""
    return str_prop("nchw")


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """Multidirectional (numpy) broadcasting of shapes, or a verification error."""
    rank = max(len(shape) for shape in shapes)
    result = []
    for axis in range(rank):
        dims = {
            shape[axis - rank + len(shape)] for shape in shapes if axis - rank + len(shape) >= 0
        }
        dims.discard(1)
        if len(dims) > 1:
            raise fail(f"shapes {[list(s) for s in shapes]} are not broadcast-compatible")
        result.append(dims.pop() if dims else 1)
    return tuple(result)


def _is_float(element_type: Attribute) -> bool:
    return isinstance(element_type, AnyFloat)


def format_float(value: float) -> str:
    """A float as properties print it: the shortest float32 digits, positional for
    moderate magnitudes, scientific otherwise."""
    value32 = np.float32(value)
    if not np.isfinite(value32):
        return repr(float(value32))
    if value32 == 0 or 1e-4 <= abs(value32) < 1e7:
        return np.format_float_positional(value32, unique=True, trim="0")
    return np.format_float_scientific(value32, unique=True, trim="0")


@functools.cache
def _property_defaults(op_type: type[IRDLOperation]) -> dict[str, Attribute]:
    """The default values of an op type's properties (read once per type)."""
    defaults: dict[str, Attribute] = {}
    for name, definition in op_type.get_irdl_definition().properties.items():
        value = getattr(definition, "default_value", None)
        if value is not None:
            defaults[name] = value
    return defaults


class Props:
    """Typed, default-filled read access to an op's properties for inference."""

    def __init__(self, op_type: type[IRDLOperation], properties: dict[str, Attribute]):
        self.op_type = op_type
        self.properties = properties
        self.defaults = _property_defaults(op_type)

    def attr(self, name: str) -> Attribute | None:
        return self.properties.get(name, self.defaults.get(name))

    def required(self, name: str) -> Attribute:
        value = self.attr(name)
        if value is None:
            raise fail(f"'{self.op_type.name}' requires property '{name}'")
        return value

    def _attr_of_kind(self, name: str, kind: type[AttributeT]) -> AttributeT | None:
        """The property (or its default) as the attribute kind its constraint admits."""
        value = self.attr(name)
        if value is None or isinstance(value, kind):
            return value
        raise fail(
            f"property '{name}' of '{self.op_type.name}' must be a {kind.__name__}, got {value}"
        )

    # The typed readers are named after the builtins they return and shadow them in the
    # rest of the class body, so they come last.

    def ints(self, name: str) -> list[int] | None:
        value = self._attr_of_kind(name, DenseArrayBase)
        return None if value is None else [int(v) for v in value.get_values()]

    def floats(self, name: str) -> list[float] | None:
        value = self._attr_of_kind(name, DenseArrayBase)
        return None if value is None else [float(v) for v in value.get_values()]

    def int(self, name: str) -> int | None:
        value = self._attr_of_kind(name, IntegerAttr)
        return None if value is None else value.value.data

    def float(self, name: str) -> float | None:
        value = self._attr_of_kind(name, FloatAttr)
        return None if value is None else value.value.data

    def bool(self, name: str) -> bool:
        value = self._attr_of_kind(name, IntegerAttr)
        return bool(value is not None and value.value.data)

    def str(self, name: str) -> str | None:
        value = self._attr_of_kind(name, StringAttr)
        return None if value is None else value.data


# --------------------------------------------------------------------------------------
# The base op: shared syntax, verification and construction


def _verify_quantized(value_type: Attribute) -> None:
    """A per-axis quantized element type must fit its tensor (one scale per slice)."""
    if isinstance(value_type, TensorType):
        element = value_type.get_element_type()
        if isinstance(element, UniformQuantizedType):
            element.verify_tensor(value_type)


def print_entries(op: Operation, printer: Printer, skip: Sequence[str] = ()) -> None:
    """Print ` {...}`: the op's properties that differ from their defaults, in the
    readable form of `print_value`, then its discardable attributes in MLIR's own
    syntax (so that they read back the same); nothing when there are none. Properties
    named in `skip` are part of the rest of the syntax."""
    definitions = op.get_irdl_definition().properties  # type: ignore[attr-defined]
    entries = []
    for name in sorted(op.properties):
        value = op.properties[name]
        default = getattr(definitions.get(name), "default_value", None)
        if name in skip or (default is not None and value == default):
            continue
        entries.append((name, value, True))
    entries.extend((name, value, False) for name, value in sorted(op.attributes.items()))
    if not entries:
        return
    printer.print_string(" {")
    for index, (name, value, is_property) in enumerate(entries):
        if index:
            printer.print_string(", ")
        printer.print_string(f"{name} = ")
        if is_property:
            print_value(printer, value)
        else:
            printer.print_attribute(value)
    printer.print_string("}")


class TensorOp(IRDLOperation):
    """Base class of ops on static-shaped tensors (`nn`, `qnn`): the shared syntax,
    verifier and builders.

    Subclasses declare operands, results and properties as usual in xDSL, and may
    override `infer` (result types from operand types and properties) and
    `check` (further checks on a built op).
    """

    traits = traits_def(Pure())

    SORTED_ENTRIES: ClassVar[bool] = True
    """Its properties and attributes print sorted by name (`print_entries`), so the order
    they were added in means nothing; irc bytecode writes them sorted too."""

    FLOAT_ONLY: ClassVar[bool] = False
    """If set, the first operand must have a floating-point element type."""

    LAYOUT_OPERANDS: ClassVar[tuple[int, ...]] = ()
    """For ops with a `layout` property: the operands whose channel axis moves to the
    end in the channels-last layout (the results always move with them)."""

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType] | None:
        """Result types implied by operand types and properties; `None` if the op's
        result types carry information of their own (as for `nn.reshape`)."""
        return None

    def check(self, props: Props) -> None:
        """Op-specific checks beyond `infer`; raise `fail(...)` on error."""

    @classmethod
    def infer_types(
        cls, operand_types: Sequence[TensorType], props: Props
    ) -> list[TensorType] | None:
        """`infer`, seen through the op's layout: for a channels-last (`nhwc`) op the
        layout operands are viewed channels-first, inferred, and the results moved back."""
        if not cls.LAYOUT_OPERANDS or props.str("layout") != "nhwc":
            return cls.infer(operand_types, props)
        channels_first = [
            to_channels_first(t) if index in cls.LAYOUT_OPERANDS else t
            for index, t in enumerate(operand_types)
        ]
        inferred = cls.infer(channels_first, props)
        return None if inferred is None else [to_channels_last(t) for t in inferred]

    # ---- verification ----------------------------------------------------------------

    def props(self) -> Props:
        """The op's properties with defaults filled in."""
        return Props(type(self), dict(self.properties))

    def verify_(self) -> None:
        for index, operand in enumerate(self.operands):
            static_shape(operand.type, f"operand #{index}")
            _verify_quantized(operand.type)
        for index, result in enumerate(self.results):
            static_shape(result.type, f"result #{index}")
            _verify_quantized(result.type)
        if self.FLOAT_ONLY and self.operands:
            element_type = tensor_type(self.operands[0]).get_element_type()
            if not _is_float(element_type):
                raise fail(f"'{self.name}' expects a floating-point input, got {element_type}")
        props = self.props()
        if self.LAYOUT_OPERANDS and props.str("layout") not in LAYOUTS:
            raise fail(f'\'layout\' must be "nchw" or "nhwc"; got "{props.str("layout")}"')
        operand_types = [tensor_type(operand) for operand in self.operands]
        inferred = type(self).infer_types(operand_types, props)
        if inferred is not None:
            actual = [result.type for result in self.results]
            if list(inferred) != actual:
                expected = ", ".join(str(t) for t in inferred)
                got = ", ".join(str(t) for t in actual)
                raise fail(f"result type {got} does not match the inferred type {expected}")
        self.check(props)

    # ---- construction ------------------------------------------------------------------

    # Deliberately not IRDLOperation.build's keyword-only signature: these ops have no
    # regions, successors or attributes to pass, and positional operands read better.
    @classmethod
    def build(  # type: ignore[override]
        cls,
        operands: Sequence[SSAValue | Operation],
        properties: Mapping[str, Attribute | None] | None = None,
        result_types: Sequence[Attribute] | None = None,
        location: LocationAttr | None = None,
    ) -> Self:
        """Build the op; result types are inferred unless given.

        `None` property values are dropped, so callers can pass optional ones freely.
        """
        values = [SSAValue.get(operand) for operand in operands]
        props = {name: value for name, value in (properties or {}).items() if value is not None}
        if result_types is None:
            inferred = cls.infer_types([tensor_type(value) for value in values], Props(cls, props))
            if inferred is None:
                raise ValueError(f"{cls.name} needs explicit result types")
            result_types = inferred
        op = cls.create(operands=values, result_types=list(result_types), properties=props)
        if location is not None:
            op.location = location
        return op

    # ---- syntax --------------------------------------------------------------------------

    def print(self, printer: Printer) -> None:
        if self.operands:
            printer.print_string(" ")
            printer.print_list(self.operands, printer.print_operand)
        self.print_properties(printer)
        printer.print_string(" : ")
        operand_types = [operand.type for operand in self.operands]
        result_types = [result.type for result in self.results]
        every_type = operand_types + result_types
        if result_types and all(t == every_type[0] for t in every_type):
            printer.print_attribute(every_type[0])
            return
        printer.print_string("(")
        printer.print_list(operand_types, printer.print_attribute)
        printer.print_string(") -> ")
        if len(result_types) == 1:
            printer.print_attribute(result_types[0])
        else:
            printer.print_string("(")
            printer.print_list(result_types, printer.print_attribute)
            printer.print_string(")")

    def print_properties(self, printer: Printer) -> None:
        """Print the properties and attributes (` {...}`, see `print_entries`)."""
        print_entries(self, printer)

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        start = parser.pos
        unresolved = (
            parser.parse_optional_undelimited_comma_separated_list(
                parser.parse_optional_unresolved_operand, parser.parse_unresolved_operand
            )
            or []
        )
        entries_at = parser.pos
        entries = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        if parser.parse_optional_punctuation("(") is not None:
            operand_types = []
            if parser.parse_optional_punctuation(")") is None:
                operand_types = parser.parse_comma_separated_list(
                    parser.Delimiter.NONE, parser.parse_type
                )
                parser.parse_punctuation(")")
            parser.parse_punctuation("->")
            if parser.parse_optional_punctuation("(") is not None:
                result_types = parser.parse_comma_separated_list(
                    parser.Delimiter.NONE, parser.parse_type
                )
                parser.parse_punctuation(")")
            else:
                result_types = [parser.parse_type()]
        else:
            single = parser.parse_type()
            operand_types = [single] * len(unresolved)
            result_types = [single] * cls.single_type_result_count()
        operands = parser.resolve_operands(unresolved, operand_types, start)
        properties, attributes = split_entries(cls, parser, entries, entries_at)
        op = cls.create(
            operands=list(operands),
            result_types=list(result_types),
            properties=properties,
            attributes=attributes,
        )
        return op

    @classmethod
    def single_type_result_count(cls) -> int:
        """How many results a type written once (`: tensor<...>`) stands for."""
        return len(cls.get_irdl_definition().results)


def split_entries(
    op_type: type[IRDLOperation], parser: Parser, entries: dict[str, Attribute], entries_at: int
) -> tuple[dict[str, Attribute], dict[str, Attribute]]:
    """A parsed `{...}` dictionary as (properties of `op_type`, discardable attributes).

    Plain values are coerced to what each property's constraint accepts
    (`coerce_property`); an unknown property or a value that fits none is a parse error
    at `entries_at`.
    """
    definitions = op_type.get_irdl_definition().properties
    properties: dict[str, Attribute] = {}
    attributes: dict[str, Attribute] = {}
    for name, value in entries.items():
        definition = definitions.get(name)
        if definition is None and "." in name:
            attributes[name] = value  # a discardable attribute of some dialect
            continue
        if definition is None:
            known = ", ".join(sorted(definitions)) or "none"
            parser.raise_error(
                f"'{op_type.name}' has no property '{name}' (its properties: {known})",
                entries_at,
            )
        coerced = coerce_property(value, definition.constr)
        if coerced is None:
            parser.raise_error(
                f"invalid value {value} for property '{name}' of '{op_type.name}'", entries_at
            )
        properties[name] = coerced
    return properties, attributes


def print_value(printer: Printer, value: Attribute) -> None:
    """Print a property's value in its plain form: `[1, 2]`, `3`, `0.5`, `true`."""
    match value:
        case DenseArrayBase():
            if isinstance(value.elt_type, IntegerType):
                printer.print_string("[" + ", ".join(str(v) for v in value.get_values()) + "]")
            else:
                printer.print_string(
                    "[" + ", ".join(format_float(v) for v in value.get_values()) + "]"
                )
        case IntegerAttr() if value.type == i1:
            printer.print_string("true" if value.value.data else "false")
        case IntegerAttr() if value.type == i64:
            printer.print_string(str(value.value.data))
        case FloatAttr() if isinstance(value.type, Float32Type):
            printer.print_string(format_float(value.value.data))
        case _:
            printer.print_attribute(value)


def coerce_property(value: Attribute, constraint: AttrConstraint) -> Attribute | None:
    """Convert a parsed plain value to the form a property's constraint accepts."""
    candidates: list[Attribute] = [value]
    match value:
        case ArrayAttr():
            items = list(value.data)
            if all(isinstance(item, IntegerAttr) for item in items):
                numbers = [item.value.data for item in items]
                candidates = [
                    DenseArrayBase.from_list(i64, numbers),
                    DenseArrayBase.from_list(f32, [float(n) for n in numbers]),
                ]
            elif all(isinstance(item, IntegerAttr | FloatAttr) for item in items):
                numbers = [float(item.value.data) for item in items]
                candidates = [DenseArrayBase.from_list(f32, numbers)]
        case IntegerAttr() if value.type != i1:
            number = value.value.data
            candidates = [IntegerAttr(number, i64), FloatAttr(float(number), f32), value]
        case FloatAttr():
            candidates = [FloatAttr(value.value.data, f32), value]
        case _:
            pass
    for candidate in candidates:
        try:
            constraint.verify(candidate, VerificationContext())
        except VerifyException:
            continue
        return candidate
    return None
