"""Compile rules to xDSL `RewritePattern`s.

Each rule becomes the Python source of one `match_and_rewrite` method: straight-line
class checks, operand and property accesses, condition tests and op builders, with
every literal converted once at compile time. Nothing is interpreted per match, so a
compiled rule costs what the equivalent hand-written pattern costs (see
bench/bench_rules.py). `RulePattern.source` keeps the generated code for inspection.

Semantic errors (an unknown op or property, an operand count the op cannot have, a
capture used but never bound, an unknown or misused native, a literal a property
cannot hold) are collected for the whole file and raised together as one `IrcError`,
each at the file:line:col it concerns, with a hint.
"""

from __future__ import annotations

import difflib
import functools
import importlib
from dataclasses import dataclass, field
from typing import Any, ClassVar

from xdsl.context import Context
from xdsl.ir import Attribute, Operation
from xdsl.irdl import OptOperandDef, VarOperandDef, VarResultDef
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException

from irc.diagnostics import Diagnostic, IrcError, Location
from irc.dialects import nn
from irc.rewrite import runtime
from irc.rewrite.natives import NATIVES, Native
from irc.rewrite.syntax import (
    AttrPattern,
    Call,
    CaptureRef,
    Comparison,
    CopyProperties,
    Expr,
    Index,
    Literal_,
    NewOp,
    OpPattern,
    ParameterRef,
    Rule,
    RuleFile,
    SetProperty,
    SpreadArgument,
    UpdateOp,
    ValueCapture,
    Wildcard,
)


@dataclass(frozen=True)
class RuleParameter:
    """A parameter of a rule file (`param name;` or `param name = default;`)."""

    name: str
    at: Location
    has_default: bool = False
    default: object = None


class RulePattern(RewritePattern):
    """The base of compiled rules; subclasses get a generated `match_and_rewrite`.

    An instance binds the parameters of the rule's file: `Rule(kinds=...)` gives the
    value that the rule's bare name `kinds` stands for (a pass gives its options this
    way); a parameter left out takes its default.
    """

    rule_name: ClassVar[str]
    root_classes: ClassVar[tuple[type[Operation], ...]]
    """The op classes the rule's root pattern matches."""
    benefit: ClassVar[int]
    location: ClassVar[Location]
    source: ClassVar[str]
    """The generated Python code of `match_and_rewrite`."""
    parameters: ClassVar[tuple[RuleParameter, ...]] = ()
    """The parameters of the rule's file, in the order they are declared."""

    arguments: dict[str, object]
    """The value of each parameter, for this instance."""

    def __init__(self, **arguments: object) -> None:
        self.arguments = bind_arguments(self.parameters, arguments)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        raise NotImplementedError  # replaced by the generated method


def bind_arguments(
    parameters: tuple[RuleParameter, ...], arguments: dict[str, object]
) -> dict[str, object]:
    """The value of every parameter: the argument given, else the default.

    A parameter without a default and without an argument is an error at its
    declaration (apply-rules gives no arguments); an argument the file does not declare
    is a bug of the caller.
    """
    declared = [parameter.name for parameter in parameters]
    unknown = [name for name in arguments if name not in declared]
    if unknown:
        raise TypeError(
            f"no parameter {', '.join(map(repr, unknown))} in the rule file "
            f"(its parameters: {', '.join(declared) or 'none'})"
        )
    values: dict[str, object] = {}
    missing: list[Diagnostic] = []
    for parameter in parameters:
        if parameter.name in arguments:
            values[parameter.name] = arguments[parameter.name]
        elif parameter.has_default:
            values[parameter.name] = parameter.default
        else:
            missing.append(
                Diagnostic(
                    f"the rule file's parameter '{parameter.name}' has no value",
                    parameter.at,
                    hint="the pass that applies this file gives it (apply-rules gives "
                    f"none); or declare a default: param {parameter.name} = ...;",
                )
            )
    if missing:
        raise IrcError(missing)
    return values


class _RuleError(Exception):
    """A semantic error in a rule: stops compiling that rule."""

    def __init__(self, message: str, at: Location, hint: str | None = None):
        super().__init__(message)
        self.diagnostic = Diagnostic(message, at, hint=hint)


@dataclass
class _Binding:
    """What a capture stands for in the generated code."""

    kind: str  # "op", "value", "optional", "variadic", "attribute"
    variable: str
    op_classes: tuple[type[Operation], ...] = ()


@dataclass
class _Emitter:
    lines: list[str] = field(default_factory=list)
    depth: int = 1

    def line(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    def fail_unless(self, condition: str) -> None:
        self.line(f"if not ({condition}):")
        self.line("    return")


@functools.cache
def _context() -> Context:
    from irc.ir.context import make_context

    return make_context()


def lookup_op(name: str) -> type[Operation] | None:
    """The op class registered under `name` in irc's dialects, if any."""
    return _context().get_optional_op(name)


def _known_ops(dialect: str) -> list[str]:
    context = _context()
    context.get_optional_op(f"{dialect}.")  # loads the dialect if irc has it
    return sorted(op.name for op in context.loaded_ops if op.name.startswith(dialect + "."))


_PROPERTY_KINDS: list[tuple[object, str]] = [
    ([1, 2], "a list of integers, like [1, 2]"),
    ([0.5], "a list of numbers, like [0.5, 2.0]"),
    (True, "true or false"),
    (1, "an integer"),
    (0.5, "a number"),
    ("text", "a string"),
]


def describe_property(constraint: Any) -> str:
    """What values a property holds, in words, for error hints."""
    from irc.rewrite.runtime import _as_attribute

    for sample, words in _PROPERTY_KINDS:
        if nn.coerce_property(_as_attribute(sample), constraint) is not None:
            return words
    return str(constraint)


def literal_value(literal: Literal_) -> object:
    """A literal as Python (numbers, strings, bools, lists) or an xDSL attribute."""
    if literal.kind == "list":
        assert isinstance(literal.value, tuple)
        return [literal_value(item) for item in literal.value]
    if literal.kind in ("type", "attribute"):
        from xdsl.parser import Parser

        try:
            parser = Parser(_context(), str(literal.value), "rule")
            return parser.parse_type() if literal.kind == "type" else parser.parse_attribute()
        except ParseError as failure:
            raise _RuleError(
                f"invalid {literal.kind} {literal.text}: {failure.msg}", literal.at
            ) from None
        except (VerifyException, DiagnosticException) as failure:
            raise _RuleError(
                f"invalid {literal.kind} {literal.text}: {failure}", literal.at
            ) from None
    return literal.value


def _closest(name: str, candidates: list[str]) -> str | None:
    found = difflib.get_close_matches(name, candidates, n=1)
    return found[0] if found else None


class _RuleCompiler:
    """Compiles one rule; `compile()` returns the pattern class or raises `_RuleError`."""

    def __init__(
        self, rule: Rule, natives: dict[str, Native], parameters: tuple[RuleParameter, ...]
    ):
        self.rule = rule
        self.natives = natives
        self.parameters = parameters
        self.emit = _Emitter()
        self.bindings: dict[str, _Binding] = {}
        self.constants: dict[str, object] = {}
        self.counter = 0

    # ---- helpers -------------------------------------------------------------------------

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def constant(self, value: object, prefix: str = "K") -> str:
        name = self.fresh(prefix)
        self.constants[name] = value
        return name

    def op_class(self, name: str, at: Location) -> type[Operation]:
        op_class = lookup_op(name)
        if op_class is None:
            dialect = name.split(".")[0]
            closest = _closest(name, _known_ops(dialect))
            hint = f"did you mean '{closest}'?" if closest else f"irc knows no dialect '{dialect}'"
            raise _RuleError(f"unknown op '{name}'", at, hint)
        return op_class

    def property_definition(self, op_class: type[Operation], name: str, at: Location) -> Any:
        properties = op_class.get_irdl_definition().properties  # type: ignore[attr-defined]
        if name not in properties:
            known = ", ".join(sorted(properties)) or "none"
            closest = _closest(name, list(properties))
            hint = f"did you mean '{closest}'? " if closest else ""
            raise _RuleError(
                f"'{op_class.name}' has no property '{name}'", at, f"{hint}its properties: {known}"
            )
        return properties[name]

    def property_literal(
        self, op_class: type[Operation], name: str, literal: Literal_
    ) -> Attribute:
        definition = self.property_definition(op_class, name, literal.at)
        attribute = runtime.to_property(op_class, name, literal_value(literal))
        if attribute is None:
            raise _RuleError(
                f"invalid value {literal.text} for property '{name}' of '{op_class.name}'",
                literal.at,
                hint=f"'{name}' holds {describe_property(definition.constr)}",
            )
        return attribute

    def bind(self, name: str, binding: _Binding, at: Location) -> None:
        """Bind a capture, or check equality with its earlier binding."""
        earlier = self.bindings.get(name)
        if earlier is None:
            self.bindings[name] = binding
            return
        if (earlier.kind == "attribute") != (binding.kind == "attribute"):
            raise _RuleError(
                f"capture '${name}' is bound both to an attribute and to a value",
                at,
                hint="use a different name for each",
            )
        if (earlier.kind == "op") != (binding.kind == "op"):
            # An op capture used again as an operand: the same value is its result.
            op, value = (earlier, binding) if earlier.kind == "op" else (binding, earlier)
            self.emit.fail_unless(
                f"len({op.variable}.results) == 1 and {value.variable} is {op.variable}.results[0]"
            )
            return
        comparison = "==" if binding.kind == "attribute" else "is"
        self.emit.fail_unless(f"{binding.variable} {comparison} {earlier.variable}")

    def binding(self, name: str, at: Location) -> _Binding:
        if name not in self.bindings:
            bound = ", ".join(f"${n}" for n in self.bindings) or "none"
            raise _RuleError(
                f"capture '${name}' is used but never bound",
                at,
                hint=f"bind it in the match pattern; the bound captures are: {bound}",
            )
        return self.bindings[name]

    # ---- matching ------------------------------------------------------------------------

    def match_op(self, pattern: OpPattern, variable: str) -> None:
        classes = [self.op_class(name, pattern.at) for name in pattern.op_names]
        op_class = classes[0]
        if len(classes) == 1:
            self.emit.fail_unless(f"{variable}.__class__ is {self.constant(op_class, 'C')}")
        else:
            if not pattern.any_operands:
                self.check_alternatives(classes, pattern)
            for attribute in pattern.attributes:
                for alternative in classes[1:]:
                    self.property_definition(alternative, attribute.name, attribute.at)
            self.emit.fail_unless(f"{variable}.__class__ in {self.constant(tuple(classes), 'C')}")
        if pattern.capture is not None:
            self.bind(pattern.capture, _Binding("op", variable, tuple(classes)), pattern.at)
        if not pattern.any_operands:
            self.match_operands(pattern, op_class, variable)
        for attribute in pattern.attributes:
            self.match_attribute(attribute, op_class, variable)

    def check_alternatives(self, classes: list[type[Operation]], pattern: OpPattern) -> None:
        """Alternatives must share their operands and the properties the pattern reads."""
        operands = [
            [name for name, _ in c.get_irdl_definition().operands]  # type: ignore[attr-defined]
            for c in classes
        ]
        for op_class, names in zip(classes[1:], operands[1:], strict=True):
            if names != operands[0]:
                raise _RuleError(
                    f"'{op_class.name}' has operands ({', '.join(names)}), "
                    f"'{classes[0].name}' has ({', '.join(operands[0])})",
                    pattern.at,
                    hint="alternatives in one pattern must have the same operands, "
                    "or match any operands with (...)",
                )

    def match_operands(self, pattern: OpPattern, op_class: type[Operation], variable: str) -> None:
        definitions = op_class.get_irdl_definition().operands  # type: ignore[attr-defined]
        groups = [i for i, (_, d) in enumerate(definitions) if isinstance(d, VarOperandDef)]
        patterns = list(pattern.operands)
        singles = len(definitions) - len(groups)
        name = op_class.name
        if not groups and len(patterns) != singles:
            raise _RuleError(
                f"'{name}' takes {singles} operand{'s' if singles != 1 else ''}, "
                f"the pattern gives {len(patterns)}",
                pattern.at,
                hint=f"its operands: {', '.join(n for n, _ in definitions) or 'none'}",
            )
        if len(groups) > 1:
            raise _RuleError(f"'{name}' has several variadic operand groups", pattern.at)
        if groups and len(patterns) < singles:
            raise _RuleError(
                f"'{name}' takes at least {singles} operands, the pattern gives {len(patterns)}",
                pattern.at,
            )
        group_size = len(patterns) - singles
        position = 0
        for index, (operand_name, definition) in enumerate(definitions):
            access = f"{variable}.{operand_name}"
            if index not in groups:
                self.match_single(patterns[position], access, name, operand_name)
                position += 1
                continue
            assigned = patterns[position : position + group_size]
            position += group_size
            if isinstance(definition, OptOperandDef):
                self.match_optional(assigned, access, pattern, name, operand_name)
            else:
                self.match_variadic(assigned, access, pattern, name)

    def match_single(self, pattern: Any, access: str, op_name: str, operand_name: str) -> None:
        if isinstance(pattern, ValueCapture) and pattern.kind != "single":
            raise _RuleError(
                f"'${pattern.name}{'?' if pattern.kind == 'optional' else '...'}' "
                f"matches an {pattern.kind} operand, but '{operand_name}' of '{op_name}' "
                "is a single operand",
                pattern.at,
                hint=f"write ${pattern.name}",
            )
        self.match_value(pattern, access)

    def match_value(self, pattern: Any, access: str) -> None:
        """Match a pattern against a value that is present."""
        if isinstance(pattern, Wildcard):
            return
        variable = self.fresh("v")
        self.emit.line(f"{variable} = {access}")
        if isinstance(pattern, ValueCapture):
            self.bind(pattern.name, _Binding("value", variable), pattern.at)
            return
        owner = self.fresh("o")
        self.emit.line(f"{owner} = {variable}.owner")
        self.match_op(pattern, owner)

    def match_optional(
        self, patterns: list, access: str, parent: OpPattern, op_name: str, operand_name: str
    ) -> None:
        if len(patterns) > 1:
            raise _RuleError(
                f"'{op_name}' takes at most {len(patterns) - 1} operands here", parent.at
            )
        if not patterns:
            self.emit.fail_unless(f"{access} is None")  # written without it: must be absent
            return
        (pattern,) = patterns
        if isinstance(pattern, Wildcard):
            return
        if isinstance(pattern, ValueCapture) and pattern.kind == "optional":
            variable = self.fresh("v")
            self.emit.line(f"{variable} = {access}")
            self.bind(pattern.name, _Binding("optional", variable), pattern.at)
            return
        if isinstance(pattern, ValueCapture) and pattern.kind == "variadic":
            raise _RuleError(
                f"'{operand_name}' of '{op_name}' is optional: write ${pattern.name}?",
                pattern.at,
            )
        variable = self.fresh("v")
        self.emit.line(f"{variable} = {access}")
        self.emit.fail_unless(f"{variable} is not None")
        self.match_value(pattern, variable)

    def match_variadic(self, patterns: list, access: str, parent: OpPattern, op_name: str) -> None:
        values = self.fresh("vs")
        self.emit.line(f"{values} = {access}")
        rest = patterns[-1] if patterns else None
        if isinstance(rest, ValueCapture) and rest.kind == "variadic":
            fixed = patterns[:-1]
            self.emit.fail_unless(f"len({values}) >= {len(fixed)}")
            variable = self.fresh("v")
            self.emit.line(f"{variable} = tuple({values}[{len(fixed)}:])")
            self.bind(rest.name, _Binding("variadic", variable), rest.at)
        else:
            fixed = patterns
            self.emit.fail_unless(f"len({values}) == {len(fixed)}")
        for index, pattern in enumerate(fixed):
            if isinstance(pattern, ValueCapture) and pattern.kind != "single":
                raise _RuleError(
                    f"only the last operand pattern of '{op_name}' may be ${pattern.name}...",
                    pattern.at,
                )
            self.match_value(pattern, f"{values}[{index}]")

    def match_attribute(
        self, attribute: AttrPattern, op_class: type[Operation], variable: str
    ) -> None:
        self.property_definition(op_class, attribute.name, attribute.at)
        if attribute.kind == "absent":
            self.emit.fail_unless(f"{variable}.properties.get({attribute.name!r}) is None")
            return
        value = self.fresh("a")
        self.emit.line(f"{value} = rt.prop({variable}, {attribute.name!r})")
        if attribute.kind == "capture":
            assert attribute.capture is not None
            self.bind(attribute.capture, _Binding("attribute", value), attribute.at)
            return
        assert attribute.literal is not None
        expected = runtime.to_python(
            self.property_literal(op_class, attribute.name, attribute.literal)
        )
        self.emit.fail_unless(f"{value} == {self.constant(expected)}")

    # ---- conditions and expressions -----------------------------------------------------

    def condition(self, test: Call | Comparison, negated: bool) -> None:
        if isinstance(test, Comparison):
            lhs, rhs = self.expression(test.lhs), self.expression(test.rhs)
            code = f"({lhs}) {test.operator} ({rhs})"
        else:
            native = self.native(test, expect="constraint")
            code = self.call_code(test, native)
        self.emit.fail_unless(f"not ({code})" if negated else code)

    def native(self, call: Call, expect: str) -> Native:
        native = self.natives.get(call.name)
        if native is None:
            closest = _closest(call.name, list(self.natives))
            hint = f"did you mean '{closest}'? " if closest else ""
            raise _RuleError(
                f"unknown function '{call.name}'",
                call.at,
                hint=f"{hint}natives are registered with irc.rewrite.constraint/helper",
            )
        if expect == "constraint" and native.kind != "constraint":
            raise _RuleError(
                f"'{call.name}' is a helper, not a constraint",
                call.at,
                hint=f"compare its result, e.g. {call.name}(...) == ...",
            )
        count = len(call.args)
        if count < native.min_args or (native.max_args is not None and count > native.max_args):
            raise _RuleError(f"'{call.name}' takes {native.arity_text()}, got {count}", call.at)
        if native.builds_ops and expect != "replacement":
            raise _RuleError(
                f"'{call.name}' creates ops: it may only be called in the replacement", call.at
            )
        return native

    def call_code(self, call: Call, native: Native) -> str:
        function = self.constant(native.function, "N")
        arguments = [self.expression(argument) for argument in call.args]
        if native.builds_ops:
            arguments.insert(0, "context")
        return f"{function}({', '.join(arguments)})"

    def expression(self, expr: Expr, expect: str = "expression") -> str:
        match expr:
            case CaptureRef():
                binding = self.binding(expr.name, expr.at)
                if binding.kind in ("optional", "variadic"):
                    raise _RuleError(
                        f"'${expr.name}' is {binding.kind}: pass it on as "
                        f"${expr.name}{'?' if binding.kind == 'optional' else '...'}",
                        expr.at,
                    )
                return binding.variable
            case Literal_():
                return self.constant(literal_value(expr))
            case ParameterRef():
                declared = [parameter.name for parameter in self.parameters]
                if expr.name not in declared:
                    raise _RuleError(
                        f"unknown name '{expr.name}'",
                        expr.at,
                        hint=f"a bare name is a parameter of the file: declare it with "
                        f"`param {expr.name};` (declared: {', '.join(declared) or 'none'}); "
                        f"a capture is written ${expr.name}",
                    )
                return f"self.arguments[{expr.name!r}]"
            case Index():
                return f"({self.expression(expr.base)})[{expr.index}]"
            case Call():
                return self.call_code(expr, self.native(expr, expect))
            case NewOp():
                if expect != "replacement":
                    raise _RuleError("new ops may only be created in the replacement", expr.at)
                return self.new_op(expr)
            case UpdateOp():
                if expect != "replacement":
                    raise _RuleError("ops may only be updated in the replacement", expr.at)
                return self.update_op(expr)
        raise AssertionError(f"unexpected expression {expr!r}")

    # ---- the replacement -----------------------------------------------------------------

    def new_op(self, expr: NewOp) -> str:
        op_class = self.op_class(expr.op_name, expr.at)
        if not issubclass(op_class, nn.NNOp):
            raise _RuleError(f"rules can create only nn ops, not '{expr.op_name}'", expr.at)
        self.check_build_arity(expr, op_class)
        arguments = []
        for argument in expr.args:
            if isinstance(argument, SpreadArgument):
                binding = self.binding(argument.name, argument.at)
                if binding.kind != argument.kind:
                    raise _RuleError(
                        f"'${argument.name}' is not {argument.kind}: write ${argument.name}",
                        argument.at,
                    )
                spread = binding.variable
                if argument.kind == "optional":
                    spread = f"(({binding.variable},) if {binding.variable} is not None else ())"
                arguments.append(f"*{spread}")
            else:
                arguments.append(self.expression(argument, "replacement"))
        properties = self.fresh("p")
        self.emit.line(f"{properties} = {{}}")
        location = "op.location"
        own = set(op_class.get_irdl_definition().properties)
        for item in expr.properties:
            if isinstance(item, CopyProperties):
                binding = self.binding(item.name, item.at)
                if binding.kind != "op":
                    raise _RuleError(f"'...${item.name}' needs a matched op", item.at)
                # The new op stands for the one whose properties it copies: keep its name.
                location = f"{binding.variable}.location"
                names = self.constant(frozenset(own), "S")
                self.emit.line(
                    f"{properties}.update((k, v) for k, v in {binding.variable}.properties.items()"
                    f" if k in {names})"
                )
            else:
                self.set_property(item, op_class, properties)
        result_types = "None"
        if expr.result_type is not None:
            result_types = f"[{self.expression(expr.result_type)}]"
        elif op_class.infer.__func__ is nn.NNOp.infer.__func__:  # type: ignore[attr-defined]
            raise _RuleError(
                f"'{op_class.name}' cannot infer its result type",
                expr.at,
                hint="give it explicitly, e.g. : type($x)",
            )
        op = self.fresh("n")
        info = self.constant(runtime.RuleInfo(self.rule.name, expr.at), "R")
        self.emit.line(
            f"{op} = rt.build({self.constant(op_class, 'C')}, [{', '.join(arguments)}], "
            f"{properties}, {result_types}, {location}, {info})"
        )
        self.emit.line(f"context.new_ops.append({op})")
        results = op_class.get_irdl_definition().results
        if len(results) == 1 and not isinstance(results[0][1], VarResultDef):
            return f"{op}.results[0]"
        return op

    def update_op(self, expr: UpdateOp) -> str:
        binding = self.binding(expr.name, expr.at)
        if binding.kind != "op":
            raise _RuleError(f"'update ${expr.name}' needs a matched op", expr.at)
        classes = binding.op_classes
        updates = self.fresh("p")
        self.emit.line(f"{updates} = {{}}")
        for item in expr.properties:
            if isinstance(item, CopyProperties):
                raise _RuleError("'...' copies properties into new ops only", item.at)
            for op_class in classes:
                self.property_definition(op_class, item.name, item.at)
            self.set_property(
                item, classes[0], updates, runtime_class=f"{binding.variable}.__class__"
            )
        self.emit.line(f"rt.update({binding.variable}, {updates}, rewriter)")
        return binding.variable

    def check_build_arity(self, expr: NewOp, op_class: type[Operation]) -> None:
        definitions = op_class.get_irdl_definition().operands  # type: ignore[attr-defined]
        singles = sum(1 for _, d in definitions if not isinstance(d, VarOperandDef))
        optional = any(isinstance(d, OptOperandDef) for _, d in definitions)
        variadic = any(
            isinstance(d, VarOperandDef) and not isinstance(d, OptOperandDef)
            for _, d in definitions
        )
        most = None if variadic else singles + (1 if optional else 0)
        plain = [a for a in expr.args if not isinstance(a, SpreadArgument)]
        spreads = [a for a in expr.args if isinstance(a, SpreadArgument)]
        given_most = None if any(a.kind == "variadic" for a in spreads) else len(expr.args)
        too_many = most is not None and len(plain) > most
        too_few = given_most is not None and given_most < singles
        if too_many or too_few:
            expected = f"{singles}" + (
                " or more" if variadic else f" or {most}" if optional else ""
            )
            plural = "" if expected == "1" else "s"
            raise _RuleError(
                f"'{op_class.name}' takes {expected} operand{plural}, the replacement gives "
                f"{len(expr.args)}",
                expr.at,
            )

    def set_property(
        self,
        item: SetProperty,
        op_class: type[Operation],
        properties: str,
        runtime_class: str | None = None,
    ) -> None:
        self.property_definition(op_class, item.name, item.at)
        if isinstance(item.value, Literal_):
            attribute = self.property_literal(op_class, item.name, item.value)
            self.emit.line(f"{properties}[{item.name!r}] = {self.constant(attribute)}")
            return
        value = self.expression(item.value)
        converted = self.fresh("a")
        target = runtime_class or self.constant(op_class, "C")
        self.emit.line(f"{converted} = rt.to_property({target}, {item.name!r}, {value})")
        self.emit.line(f"{properties}[{item.name!r}] = {converted}")

    # ---- the whole rule ------------------------------------------------------------------

    def compile(self) -> type[RulePattern]:
        rule = self.rule
        self.match_op(rule.match, "op")
        for condition in rule.conditions:
            self.condition(condition.test, condition.negated)
        self.emit.line("context = RuleContext(op)")
        values = [self.expression(expr, "replacement") for expr in rule.replacement]
        root_class = lookup_op(rule.match.op_names[0])
        root_results = root_class.get_irdl_definition().results  # type: ignore[union-attr]
        fixed = all(not isinstance(d, VarResultDef) for _, d in root_results)
        if fixed and len(values) != len(root_results):
            raise _RuleError(
                f"'{rule.match.op_names[0]}' has {len(root_results)} result(s), "
                f"the replacement gives {len(values)}",
                rule.replace_at,
            )
        info = self.constant(runtime.RuleInfo(rule.name, rule.replace_at), "R")
        replacement = ", ".join(f"rt.value_of({value})" for value in values)
        self.emit.line(f"values = [{replacement}]")
        self.emit.line(f"rt.check_types(op, values, {info})")
        self.emit.line("rewriter.replace(op, context.new_ops, values)")
        source = "def match_and_rewrite(self, op, rewriter):\n" + "\n".join(self.emit.lines) + "\n"
        from irc.rewrite.natives import RuleContext

        namespace: dict[str, object] = {"rt": runtime, "RuleContext": RuleContext, **self.constants}
        code = compile(source, f"<rule {rule.name} at {rule.at}>", "exec")
        exec(code, namespace)
        return type(
            rule.name,
            (RulePattern,),
            {
                "match_and_rewrite": namespace["match_and_rewrite"],
                "rule_name": rule.name,
                "root_classes": tuple(lookup_op(name) for name in rule.match.op_names),
                "benefit": rule.benefit,
                "location": rule.at,
                "source": source,
                "parameters": self.parameters,
                "__doc__": f"Compiled from the rule '{rule.name}' at {rule.at}.",
            },
        )


def _parameters(rule_file: RuleFile, diagnostics: list[Diagnostic]) -> tuple[RuleParameter, ...]:
    """The file's parameters, their defaults converted; errors go to `diagnostics`."""
    parameters: dict[str, RuleParameter] = {}
    for parameter in rule_file.parameters:
        earlier = parameters.get(parameter.name)
        if earlier is not None:
            diagnostics.append(
                Diagnostic(
                    f"a parameter named '{parameter.name}' is already declared at {earlier.at}",
                    parameter.at,
                )
            )
            continue
        if parameter.default is None:
            parameters[parameter.name] = RuleParameter(parameter.name, parameter.at)
            continue
        try:
            default = literal_value(parameter.default)
        except _RuleError as failure:
            diagnostics.append(failure.diagnostic)
            continue
        parameters[parameter.name] = RuleParameter(parameter.name, parameter.at, True, default)
    return tuple(parameters.values())


def compile_rules(
    rule_file: RuleFile, natives: dict[str, Native] | None = None
) -> list[type[RulePattern]]:
    """Compile every rule of a file, highest benefit first (then in file order).

    All semantic errors of the file are raised together as one `IrcError`.
    """
    compiled: list[type[RulePattern]] = []
    diagnostics: list[Diagnostic] = []
    for module in rule_file.imports:
        try:
            importlib.import_module(module.module)
        except ImportError as failure:
            diagnostics.append(
                Diagnostic(
                    f"cannot import '{module.module}': {failure}",
                    module.at,
                    hint="imported modules register natives; they must be importable",
                )
            )
    if diagnostics:
        raise IrcError(diagnostics)
    natives = NATIVES if natives is None else natives
    parameters = _parameters(rule_file, diagnostics)
    seen: dict[str, Location] = {}
    for rule in rule_file.rules:
        if rule.name in seen:
            diagnostics.append(
                Diagnostic(
                    f"a rule named '{rule.name}' is already defined at {seen[rule.name]}",
                    rule.at,
                    hint="give every rule of a file its own name",
                )
            )
            continue
        seen[rule.name] = rule.at
        try:
            compiled.append(_RuleCompiler(rule, natives, parameters).compile())
        except _RuleError as failure:
            diagnostics.append(failure.diagnostic)
    if diagnostics:
        raise IrcError(diagnostics)
    order = {pattern: index for index, pattern in enumerate(compiled)}
    return sorted(compiled, key=lambda pattern: (-pattern.benefit, order[pattern]))
