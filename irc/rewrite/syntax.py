"""Rule files as syntax trees: the lark parser and the AST it builds.

`parse_rules(text, filename)` returns a `RuleFile`; every node carries the `Location`
(file:line:col) it was written at, for the compiler's error messages. A syntax error
is an `IrcError` at the offending token, with the tokens that were expected there.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeAlias, cast

from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from irc.diagnostics import Diagnostic, IrcError, Location

GRAMMAR = Path(__file__).with_name("rules.lark")

# --------------------------------------------------------------------------------------
# The syntax tree


@dataclass(frozen=True)
class Literal_:
    """A literal: a number, string, boolean, list, type or dialect attribute (as text)."""

    value: object
    kind: Literal["number", "string", "bool", "list", "type", "attribute"]
    at: Location
    text: str


@dataclass(frozen=True)
class CaptureRef:
    """`$name` used as a value."""

    name: str
    at: Location


@dataclass(frozen=True)
class ParameterRef:
    """A bare `name` used as a value: a parameter of the file."""

    name: str
    at: Location


@dataclass(frozen=True)
class Call:
    """`name(args...)`: a native constraint or helper."""

    name: str
    args: tuple[Expr, ...]
    at: Location


@dataclass(frozen=True)
class Index:
    """`expr[i]`."""

    base: Expr
    index: int
    at: Location


@dataclass(frozen=True)
class SpreadArgument:
    """`$b?` (an optional operand passed on if present) or `$xs...` (all of a variadic)."""

    name: str
    kind: Literal["optional", "variadic"]
    at: Location


@dataclass(frozen=True)
class SetProperty:
    """`name = expr` in a new op's properties."""

    name: str
    value: Expr
    at: Location


@dataclass(frozen=True)
class CopyProperties:
    """`...$op`: every property of a matched op."""

    name: str
    at: Location


@dataclass(frozen=True)
class NewOp:
    """`dialect.op(args) {properties} : result_type` in a replacement."""

    op_name: str
    args: tuple[Expr | SpreadArgument, ...]
    properties: tuple[SetProperty | CopyProperties, ...]
    result_type: Expr | None
    at: Location


@dataclass(frozen=True)
class UpdateOp:
    """`update $op {properties}`: set properties of a matched op in place; its value is
    the op's result."""

    name: str
    properties: tuple[SetProperty | CopyProperties, ...]
    at: Location


Expr: TypeAlias = Literal_ | CaptureRef | ParameterRef | Call | Index | NewOp | UpdateOp


@dataclass(frozen=True)
class ValueCapture:
    """`$x` (one operand), `$x?` (an optional operand, maybe absent) or `$xs...`."""

    name: str
    kind: Literal["single", "optional", "variadic"]
    at: Location


@dataclass(frozen=True)
class Wildcard:
    """`_`: any operand (or none, for an optional one)."""

    at: Location


@dataclass(frozen=True)
class AttrPattern:
    """`name = $capture`, `name = absent` or `name = literal` in an op pattern."""

    name: str
    kind: Literal["capture", "absent", "equals"]
    capture: str | None
    literal: Literal_ | None
    at: Location


@dataclass(frozen=True)
class OpPattern:
    """`$capture = dialect.op(operand patterns) {attribute patterns}`; `op_names` holds
    more than one name for alternatives (`nn.reshape|nn.flatten(...)`)."""

    capture: str | None
    op_names: tuple[str, ...]
    operands: tuple[OperandPattern, ...]
    attributes: tuple[AttrPattern, ...]
    at: Location
    any_operands: bool = False
    """Written `(...)`: the operands are not looked at."""


OperandPattern: TypeAlias = OpPattern | ValueCapture | Wildcard


@dataclass(frozen=True)
class Comparison:
    """`lhs == rhs` (or !=, <, <=, >, >=) in a where clause."""

    lhs: Expr
    operator: str
    rhs: Expr
    at: Location


@dataclass(frozen=True)
class Condition:
    """A constraint call, maybe negated, or a comparison."""

    test: Call | Comparison
    negated: bool
    at: Location


@dataclass(frozen=True)
class Rule:
    """One rule: what to match, the conditions, and the replacement."""

    name: str
    benefit: int
    match: OpPattern
    conditions: tuple[Condition, ...]
    replacement: tuple[Expr, ...]
    at: Location
    replace_at: Location


@dataclass(frozen=True)
class Import:
    """`import "package.module";`: a Python module registering natives."""

    module: str
    at: Location


@dataclass(frozen=True)
class Parameter:
    """`param name;` or `param name = literal;`: a value given when the file's rules
    are instantiated (a pass gives its options), with an optional default."""

    name: str
    default: Literal_ | None
    at: Location


@dataclass
class RuleFile:
    """The imports, parameters and rules of one file, in order."""

    filename: str
    rules: list[Rule] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)
    parameters: list[Parameter] = field(default_factory=list)


# --------------------------------------------------------------------------------------
# Parsing


@functools.cache
def _parser() -> Lark:
    return Lark(
        GRAMMAR.read_text(), parser="lalr", propagate_positions=True, maybe_placeholders=True
    )


class _Builder(Transformer):
    """Turns lark's parse tree into the syntax tree, with locations."""

    def __init__(self, filename: str):
        super().__init__()
        self.filename = filename

    def _at(self, item: Tree | Token) -> Location:
        if isinstance(item, Token):
            return Location(self.filename, item.line, item.column)
        return Location(self.filename, item.meta.line, item.meta.column)

    def _name(self, token: Token) -> str:
        return str(token)[1:] if str(token).startswith("$") else str(token)

    # ---- rules ----

    def start(self, items: list[Rule | Import | Parameter]) -> RuleFile:
        rules = [item for item in items if isinstance(item, Rule)]
        imports = [item for item in items if isinstance(item, Import)]
        parameters = [item for item in items if isinstance(item, Parameter)]
        return RuleFile(self.filename, rules, imports, parameters)

    def import_(self, items: list[Token]) -> Import:
        text = str(items[0])
        return Import(text[1:-1], self._at(items[0]))

    def parameter(self, items: list) -> Parameter:
        name, default = items
        return Parameter(str(name), default, self._at(name))

    @v_args(tree=True)
    def rule(self, tree: Tree) -> Rule:
        name, benefit, match, *rest = tree.children
        *conditions, last = rest
        replacement, replace_at = cast(tuple[tuple[Expr, ...], Location], last)
        flat = tuple(c for group in cast(list[tuple[Condition, ...]], conditions) for c in group)
        return Rule(
            str(name),
            cast(int, benefit or 1),
            cast(OpPattern, match),
            flat,
            replacement,
            self._at(tree),
            replace_at,
        )

    def benefit(self, items: list[Token]) -> int:
        return int(items[0])

    def match(self, items: list[OpPattern]) -> OpPattern:
        return items[0]

    def where(self, conditions: list[Condition | Call | Comparison]) -> tuple[Condition, ...]:
        return tuple(
            c if isinstance(c, Condition) else Condition(c, False, c.at) for c in conditions
        )

    @v_args(tree=True)
    def replace(self, tree: Tree) -> tuple[tuple[Expr, ...], Location]:
        (value,) = tree.children
        values = value if isinstance(value, tuple) else (value,)
        return values, self._at(tree)

    def results(self, items: list[Expr]) -> tuple[Expr, ...]:
        return tuple(items)

    # ---- patterns ----

    @v_args(tree=True)
    def op_pattern(self, tree: Tree) -> OpPattern:
        capture, op_names, operands, attributes = tree.children
        names = cast(tuple[Token, ...], op_names)
        any_operands = operands is _ANY_OPERANDS
        return OpPattern(
            self._name(cast(Token, capture)) if capture is not None else None,
            tuple(str(name) for name in names),
            () if any_operands else cast(tuple[OperandPattern, ...], operands),
            cast(tuple[AttrPattern, ...], attributes or ()),
            self._at(cast(Token, names[0] if capture is None else capture)),
            any_operands,
        )

    def operand_patterns(self, items: list) -> tuple[OperandPattern, ...]:
        return tuple(item for item in items if item is not None)

    def any_operands(self, items: list) -> object:
        return _ANY_OPERANDS

    def op_names(self, names: list[Token]) -> tuple[Token, ...]:
        return tuple(names)

    def value_capture(self, items: list[Token]) -> ValueCapture:
        return ValueCapture(self._name(items[0]), "single", self._at(items[0]))

    def optional_capture(self, items: list[Token]) -> ValueCapture:
        return ValueCapture(self._name(items[0]), "optional", self._at(items[0]))

    def variadic_capture(self, items: list[Token]) -> ValueCapture:
        return ValueCapture(self._name(items[0]), "variadic", self._at(items[0]))

    @v_args(tree=True)
    def wildcard(self, tree: Tree) -> Wildcard:
        return Wildcard(self._at(tree))

    def attr_patterns(self, items: list[AttrPattern]) -> tuple[AttrPattern, ...]:
        return tuple(items)

    def attr_capture(self, items: list[Token]) -> AttrPattern:
        return AttrPattern(str(items[0]), "capture", self._name(items[1]), None, self._at(items[0]))

    def attr_absent(self, items: list[Token]) -> AttrPattern:
        return AttrPattern(str(items[0]), "absent", None, None, self._at(items[0]))

    def attr_equals(self, items: list) -> AttrPattern:
        return AttrPattern(str(items[0]), "equals", None, items[1], self._at(items[0]))

    # ---- conditions ----

    def negated(self, items: list) -> Condition:
        call: Call = items[1]
        return Condition(call, True, self._at(items[0]))

    def comparison(self, items: list) -> Condition:
        lhs, operator, rhs = items
        at = _location_of(lhs)
        return Condition(Comparison(lhs, str(operator), rhs, at), False, at)

    # ---- expressions ----

    def capture(self, items: list[Token]) -> CaptureRef:
        return CaptureRef(self._name(items[0]), self._at(items[0]))

    def parameter_ref(self, items: list[Token]) -> ParameterRef:
        return ParameterRef(str(items[0]), self._at(items[0]))

    def call(self, items: list) -> Call:
        name, *args = items
        return Call(str(name), tuple(a for a in args if a is not None), self._at(name))

    def index(self, items: list) -> Index:
        base, position = items
        return Index(base, int(position), _location_of(base))

    def new_op(self, items: list) -> NewOp:
        op_name, *rest = items
        result_type = rest[-1]
        properties = rest[-2] or ()
        args = tuple(a for a in rest[:-2] if a is not None)
        return NewOp(str(op_name), args, properties, result_type, self._at(op_name))

    def update_op(self, items: list) -> UpdateOp:
        capture, properties = items
        return UpdateOp(self._name(capture), properties, self._at(capture))

    def optional_argument(self, items: list[Token]) -> SpreadArgument:
        return SpreadArgument(self._name(items[0]), "optional", self._at(items[0]))

    def variadic_argument(self, items: list[Token]) -> SpreadArgument:
        return SpreadArgument(self._name(items[0]), "variadic", self._at(items[0]))

    def properties(self, items: list) -> tuple[SetProperty | CopyProperties, ...]:
        return tuple(items)

    def set_property(self, items: list) -> SetProperty:
        return SetProperty(str(items[0]), items[1], self._at(items[0]))

    def copy_properties(self, items: list[Token]) -> CopyProperties:
        return CopyProperties(self._name(items[0]), self._at(items[0]))

    # ---- literals ----

    def number(self, items: list[Token]) -> Literal_:
        text = str(items[0])
        value: int | float = float(text) if any(c in text for c in ".eE") else int(text)
        return Literal_(value, "number", self._at(items[0]), text)

    def string(self, items: list[Token]) -> Literal_:
        text = str(items[0])
        return Literal_(
            text[1:-1].encode().decode("unicode_escape"), "string", self._at(items[0]), text
        )

    def true(self, items: list[Token]) -> Literal_:
        return Literal_(True, "bool", self._at(items[0]), "true")

    def false(self, items: list[Token]) -> Literal_:
        return Literal_(False, "bool", self._at(items[0]), "false")

    @v_args(tree=True)
    def list_literal(self, tree: Tree) -> Literal_:
        elements = [cast(Literal_, item) for item in tree.children if item is not None]
        text = "[" + ", ".join(e.text for e in elements) + "]"
        return Literal_(tuple(elements), "list", self._at(tree), text)

    def dialect_attribute(self, items: list[Token]) -> Literal_:
        return Literal_(str(items[0]), "attribute", self._at(items[0]), str(items[0]))

    def type_literal(self, items: list[Token]) -> Literal_:
        return Literal_(str(items[0]), "type", self._at(items[0]), str(items[0]))


_ANY_OPERANDS = object()
"""What `(...)` in an op pattern stands for while the tree is built."""


def _location_of(node: object) -> Location:
    at = getattr(node, "at", None)
    return at if isinstance(at, Location) else Location()


TOKEN_NAMES = {
    "SEMICOLON": "';'",
    "LBRACE": "'{'",
    "RBRACE": "'}'",
    "LPAR": "'('",
    "RPAR": "')'",
    "LSQB": "'['",
    "RSQB": "']'",
    "COMMA": "','",
    "EQUAL": "'='",
    "COLON": "':'",
    "QMARK": "'?'",
    "CAPTURE": "a capture ($name)",
    "OP_NAME": "an op name (dialect.op)",
    "NAME": "a name",
    "INT": "an integer",
    "SIGNED_NUMBER": "a number",
    "ESCAPED_STRING": "a string",
    "TYPE": "a type",
    "DIALECT_ATTRIBUTE": "an attribute (#dialect.name<...>)",
    "COMPARISON": "a comparison (==, !=, <, <=, >, >=)",
    "RULE": "'rule'",
    "IMPORT": "'import'",
    "PARAM": "'param'",
    "MATCH": "'match'",
    "WHERE": "'where'",
    "REPLACE": "'replace'",
    "BENEFIT": "'benefit'",
    "ABSENT": "'absent'",
    "NOT": "'not'",
    "TRUE": "'true'",
    "FALSE": "'false'",
    "__ANON_0": "'...'",
    "UNDERSCORE": "'_'",
    "$END": "the end of the file",
}


def _describe(expected: set[str]) -> str:
    names = sorted({TOKEN_NAMES.get(name, name.lower()) for name in expected})
    if len(names) > 8:
        names = [*names[:8], "..."]
    return ", ".join(names)


def parse_rules(text: str, filename: str) -> RuleFile:
    """Parse a rule file; a syntax error is an `IrcError` at the offending token."""
    try:
        tree = _parser().parse(text)
    except UnexpectedInput as failure:
        raise _syntax_error(failure, text, filename) from None
    result = _Builder(filename).transform(tree)
    assert isinstance(result, RuleFile)
    return result


def _syntax_error(failure: UnexpectedInput, text: str, filename: str) -> IrcError:
    line, column = failure.line or 1, failure.column or 1
    hint: str | None
    if isinstance(failure, UnexpectedToken):
        token = failure.token
        found = "the end of the file" if token.type == "$END" else f"'{token}'"
        message = f"unexpected {found}"
        hint = f"expected {_describe(set(failure.expected))}"
        if token.type == "$END":
            line = text.count("\n") + 1
            column = len(text) - text.rfind("\n")
    elif isinstance(failure, UnexpectedCharacters):
        position = failure.pos_in_stream or 0
        character = text[position] if position < len(text) else ""
        message = f"unexpected character '{character}'"
        allowed = set(failure.allowed or ())
        hint = f"expected {_describe(allowed)}" if allowed else None
    elif isinstance(failure, UnexpectedEOF):
        message = "unexpected end of the file"
        hint = f"expected {_describe(set(failure.expected))}"
    else:  # pragma: no cover - lark's three kinds above are exhaustive
        message, hint = str(failure), None
    assert isinstance(line, int) and isinstance(column, int)
    location = Location(filename, max(line, 1), max(column, 1))
    return IrcError(Diagnostic(message, location, hint=hint))
