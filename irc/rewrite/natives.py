"""Native constraints and helpers: Python functions that rules call by name.

A rule's `where` clause calls constraints (functions returning a bool); its
expressions call helpers (functions returning a value, an attribute value or a type).
Both are registered by name with the decorators below, before the rule file that uses
them is loaded:

    from irc.rewrite import constraint, helper

    @constraint("is_power_of_two")
    def is_power_of_two(number: int) -> bool:
        return number > 0 and number & (number - 1) == 0

A helper that creates ops (for arithmetic a rule cannot express, like folding a
batch norm into a weight) is declared with `builds_ops=True` and receives a
`RuleContext` first, whose `insert(op)` places an op before the matched root.

Arguments arrive as the rule bound them: SSA values for operand captures, ops for op
captures (a one-result op stands for its result where a value is expected), and plain
Python values for property captures (lists, ints, floats, strings, bools; dialect
attributes and types as xDSL attributes).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation, SSAValue


@dataclass
class RuleContext:
    """What a helper with `builds_ops=True` receives: the matched root and the ops
    created so far, which are inserted before the root when the rule fires."""

    root: Operation
    new_ops: list[Operation] = field(default_factory=list)

    def insert(self, op: Operation) -> Operation:
        """Create `op` before the root (at the root's location unless it has one)."""
        from xdsl.dialects.builtin import UnknownLoc

        if isinstance(op.location, UnknownLoc):
            op.location = self.root.location
        self.new_ops.append(op)
        return op


@dataclass(frozen=True)
class Native:
    """A registered native function and what the compiler checks calls against."""

    name: str
    function: Callable[..., Any]
    kind: Literal["constraint", "helper"]
    builds_ops: bool
    min_args: int
    max_args: int | None

    def arity_text(self) -> str:
        if self.max_args == self.min_args:
            return f"{self.min_args} argument{'s' if self.min_args != 1 else ''}"
        if self.max_args is None:
            return f"at least {self.min_args} arguments"
        return f"{self.min_args} to {self.max_args} arguments"


NATIVES: dict[str, Native] = {}
"""Every native constraint and helper, by the name rules call it with."""


def _register(
    name: str | None, kind: Literal["constraint", "helper"], builds_ops: bool
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def register(function: Callable[..., Any]) -> Callable[..., Any]:
        parameters = list(inspect.signature(function).parameters.values())
        if builds_ops:
            parameters = parameters[1:]
        positional = [
            p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        required = sum(1 for p in positional if p.default is p.empty)
        variadic = any(p.kind is p.VAR_POSITIONAL for p in parameters)
        native_name = name or function.__name__
        NATIVES[native_name] = Native(
            native_name,
            function,
            kind,
            builds_ops,
            required,
            None if variadic else len(positional),
        )
        return function

    return register


def constraint(name: str | None = None) -> Callable[[Callable[..., bool]], Callable[..., bool]]:
    """Register a function as a constraint that rules call in `where` clauses."""
    return _register(name, "constraint", False)


def helper(
    name: str | None = None, *, builds_ops: bool = False
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a function as a helper that rules call in expressions."""
    return _register(name, "helper", builds_ops)


# --------------------------------------------------------------------------------------
# Built-in natives


def value_of(binding: SSAValue | Operation) -> SSAValue:
    """The SSA value a binding stands for: a value, or a one-result op's result."""
    if isinstance(binding, Operation):
        if len(binding.results) != 1:
            raise ValueError(f"'{binding.name}' has {len(binding.results)} results, not one")
        return binding.results[0]
    return binding


def _tensor_type(binding: SSAValue | Operation) -> TensorType:
    value_type = value_of(binding).type
    if not isinstance(value_type, TensorType):
        raise ValueError(f"expected a tensor, got {value_type}")
    return value_type


@constraint()
def one_use(binding: SSAValue | Operation) -> bool:
    """The value (or the op's single result) has exactly one use."""
    return value_of(binding).has_one_use()


@constraint()
def is_constant(binding: SSAValue | Operation) -> bool:
    """The value is defined by a constant op (with or without its data)."""
    from xdsl.traits import ConstantLike

    owner = value_of(binding).owner
    return isinstance(owner, Operation) and owner.has_trait(ConstantLike)


def constant_data(binding: SSAValue | Operation) -> np.ndarray | None:
    """The numpy data of a value defined by an `nn.constant` with data, else None."""
    from irc.ir.constants import constant_array

    return constant_array(value_of(binding))


@constraint()
def is_splat(binding: SSAValue | Operation, number: float) -> bool:
    """The value is a constant whose every element equals `number`."""
    data = constant_data(binding)
    return data is not None and data.size > 0 and bool(np.all(data == number))


@constraint()
def is_non_negative(binding: SSAValue | Operation) -> bool:
    """The value is a constant with no negative element."""
    data = constant_data(binding)
    return data is not None and bool(np.all(data >= 0))


@constraint()
def present(value: object) -> bool:
    """A captured property is set (or has a default)."""
    return value is not None


@helper("type")
def type_of(binding: SSAValue | Operation) -> Attribute:
    """The value's type."""
    return value_of(binding).type


@helper()
def element_type(binding: SSAValue | Operation) -> Attribute:
    """The value's element type."""
    return _tensor_type(binding).get_element_type()


@helper()
def shape(binding: SSAValue | Operation) -> list[int]:
    """The value's shape, as a list of integers."""
    return list(_tensor_type(binding).get_shape())


@helper()
def rank(binding: SSAValue | Operation) -> int:
    """The value's rank."""
    return len(_tensor_type(binding).get_shape())


@helper()
def num_results(op: Operation) -> int:
    """How many results the op has."""
    return len(op.results)


@helper()
def num_uses(binding: SSAValue | Operation) -> int:
    """How many times the value is used."""
    return sum(1 for _ in value_of(binding).uses)


@helper()
def compose_perms(first: list[int], second: list[int]) -> list[int]:
    """The permutation of transposing by `first`, then by `second`."""
    return [first[axis] for axis in second]


@constraint()
def is_identity_perm(perm: list[int]) -> bool:
    """The permutation leaves every axis in place."""
    return list(perm) == list(range(len(perm)))


@constraint()
def is_float(binding: SSAValue | Operation) -> bool:
    """The value's element type is a floating-point type."""
    from xdsl.dialects.builtin import AnyFloat

    return isinstance(_tensor_type(binding).get_element_type(), AnyFloat)


@constraint()
def all_zero(values: list[int]) -> bool:
    """Every number of the list is zero (an empty list too)."""
    return not any(values)


@constraint()
def moves_only_unit_axes(binding: SSAValue | Operation, perm: list[int]) -> bool:
    """Transposing the value by `perm` moves only its size-1 axes: the other axes keep
    their order, so the elements keep theirs (the transpose is a reshape)."""
    dims = shape(binding)
    moved = [axis for axis in perm if dims[axis] != 1]
    return moved == sorted(moved)


@constraint()
def selects_all(
    binding: SSAValue | Operation,
    starts: list[int],
    ends: list[int],
    axes: list[int] | None,
    steps: list[int] | None,
) -> bool:
    """An `nn.slice` with these starts, ends, axes and steps selects every element of
    the value, in order."""
    from irc.dialects.nn import normalize_axis, slice_bounds

    dims = shape(binding)
    axes = list(range(len(starts))) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    for axis, start, end, step in zip(axes, starts, ends, steps, strict=True):
        size = dims[normalize_axis(axis, len(dims))]
        # Ranges compare as sequences: a step of 2 over one element selects it all.
        if range(*slice_bounds(size, start, end, step), step) != range(size):
            return False
    return True


def _gathered_index(op: Operation) -> tuple[int, int] | None:
    """(axis, index) of an `nn.gather` at one constant, in-range index, both
    normalized; else None."""
    from irc.dialects.nn import normalize_axis

    data = constant_data(op.operands[1])
    if data is None or data.size != 1 or data.dtype.kind not in "iu":
        return None
    dims = shape(op.operands[0])
    axis = normalize_axis(op.props().int("axis") or 0, len(dims))  # type: ignore[attr-defined]
    index = int(data.reshape(-1)[0])
    if not -dims[axis] <= index < dims[axis]:
        return None
    return axis, index % dims[axis]


@constraint()
def gathers_one_index(op: Operation) -> bool:
    """An `nn.gather` at one constant index inside its axis: it selects one slice
    (the query, key or value of a packed attention projection)."""
    return _gathered_index(op) is not None


@helper()
def gather_slice(op: Operation, part: str) -> list[int]:
    """The `starts`, `ends` or `axes` (`part`) of the `nn.slice` that takes the entry
    an `nn.gather` at one constant index selects."""
    found = _gathered_index(op)
    assert found is not None, "gathers_one_index holds"
    axis, index = found
    return {"starts": [index], "ends": [index + 1], "axes": [axis]}[part]
