"""What compiled rules call at run time: property access, conversions, op building.

The compiler (irc/rewrite/compiler.py) turns each rule into straight-line Python code;
the few operations that code needs beyond attribute access live here, so that the
generated code stays short and every conversion is written once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    LocationAttr,
    StringAttr,
    f64,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from irc.diagnostics import IrcError, Location, error
from irc.dialects import nn
from irc.rewrite.natives import value_of

__all__ = [
    "RuleInfo",
    "build",
    "check_types",
    "prop",
    "to_property",
    "to_python",
    "update",
    "value_of",
]


@dataclass(frozen=True)
class RuleInfo:
    """A rule's name and where its parts are written, for errors raised while it runs."""

    name: str
    at: Location


def to_python(attr: Attribute | None) -> object:
    """A property value as rules see it: lists, ints, floats, strings and bools as
    Python values; types and dialect attributes as they are."""
    match attr:
        case None:
            return None
        case DenseArrayBase():
            return list(attr.get_values())
        case IntegerAttr() if isinstance(attr.type, IntegerType) and attr.type.width.data == 1:
            return bool(attr.value.data)
        case IntegerAttr():
            return attr.value.data
        case FloatAttr():
            return attr.value.data
        case StringAttr():
            return attr.data
        case _:
            return attr


def prop(op: Operation, name: str) -> object:
    """The value of a property of a matched op (its default if unset), as Python."""
    value = op.properties.get(name)
    if value is None and isinstance(op, nn.NNOp):
        value = op.props().attr(name)
    return to_python(value)


def _as_attribute(value: object) -> Attribute:
    """A Python value as the attribute the MLIR parser would give for it."""
    match value:
        case Attribute():
            return value
        case bool():
            return BoolAttr.from_bool(value)
        case int():
            return IntegerAttr(value, i64)
        case float():
            return FloatAttr(value, f64)
        case str():
            return StringAttr(value)
        case list() | tuple():
            return ArrayAttr([_as_attribute(item) for item in value])
    raise TypeError(f"no attribute for {value!r}")


def to_property(op_class: type[Operation], name: str, value: object) -> Attribute | None:
    """`value` in the form property `name` of `op_class` stores; None if it cannot be."""
    definition = op_class.get_irdl_definition().properties[name]  # type: ignore[attr-defined]
    if value is None:
        return None
    try:
        return nn.coerce_property(_as_attribute(value), definition.constr)
    except TypeError:
        return None


def build(
    op_class: type[nn.NNOp],
    operands: Sequence[SSAValue | Operation],
    properties: dict[str, Attribute | None],
    result_types: Sequence[Attribute] | None,
    location: LocationAttr,
    rule: RuleInfo,
) -> nn.NNOp:
    """Build and verify an op a rule creates; a failure is the rule's fault."""
    values = [value_of(operand) for operand in operands]
    try:
        op = op_class.build(values, properties, result_types, location)
        op.verify_()
    except (VerifyException, DiagnosticException, ValueError, IrcError) as failure:
        text = str(failure).strip().splitlines()[0] if str(failure).strip() else "invalid op"
        raise error(
            f"rule '{rule.name}' built an invalid '{op_class.name}': {text}",
            rule.at,
            hint="check the operands and properties the rule gives this op",
        ) from None
    return op


def update(
    op: Operation, properties: dict[str, Attribute | None], rewriter: PatternRewriter
) -> None:
    """Set (or, for None, remove) properties of a matched op in place."""
    for name, value in properties.items():
        if value is None:
            op.properties.pop(name, None)
        else:
            op.properties[name] = value
    rewriter.notify_op_modified(op)


def check_types(op: Operation, values: Sequence[SSAValue], rule: RuleInfo) -> None:
    """The replacement values must have the types of the results they replace."""
    if len(values) != len(op.results):
        raise error(
            f"rule '{rule.name}' replaces '{op.name}' ({len(op.results)} results) "
            f"by {len(values)} values",
            rule.at,
        )
    for result, value in zip(op.results, values, strict=True):
        if result.type != value.type:
            raise error(
                f"rule '{rule.name}' would replace a {result.type} result of '{op.name}' "
                f"by a {value.type} value",
                rule.at,
                hint="a replacement must have the type of the result it replaces; "
                "add a condition (e.g. type($a) == type($b)) so the rule does not fire here",
            )
