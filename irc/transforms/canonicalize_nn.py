"""The canonicalization patterns of `nn` ops, by op class.

`NNCanonicalization` (the trait every `nn` op carries) gives `canonicalize` the
constant folder plus the patterns this table lists for the op's class. The rules are
data for four small pattern classes:

- `ForwardOperand`: an op that returns one of its operands unchanged is replaced by
  that operand (identity, dropout, x * 1, x + 0, a pad by zeros, a transpose by the
  identity permutation, a reshape to the input's own type, ...). It never fires when
  the result type differs from the operand's (a splat 1 that broadcasts x to a larger
  shape) or when the op has a fused activation.
- `ToReshape`: an op that only reinterprets the elements of some value in another
  shape becomes one `nn.reshape` of that value (flatten, chains of reshape, squeeze,
  unsqueeze and flatten, a transpose that only moves size-1 axes).
- `ComposeTransposes`: transpose(transpose(x)) is one transpose.
- `MatMulAddToGemm`: a matmul by a constant matrix followed by the addition of a
  constant bias is one `nn.gemm`.
- `SumOfTwoToAdd`: a sum of two inputs is an add (which can absorb an activation).

Every rule computes bit for bit what the ops it replaces computed, with two
exceptions: `MatMulAddToGemm` (gemm adds the bias before rounding the product to
float32, matmul + add after: the results differ by about one float32 rounding), and
`x + 0.0` (or `x - (-0.0)`) -> x on an input -0.0: the add gave +0.0 (the IEEE sum of
zeros of opposite signs), x is -0.0, an equal value with the other sign bit. Every
other input gives the same bits.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import AnyFloat, DenseArrayBase, i64
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from irc.dialects import nn
from irc.transforms.fold_constants import constant_array

OperandFinder = Callable[[Operation], SSAValue | None]
"""Finds the value that a rewrite replaces an op with (or reshapes), or `None`."""


# --------------------------------------------------------------------------------------
# The pattern classes


@dataclass(frozen=True)
class ForwardOperand(RewritePattern):
    """op(..., x, ...) -> x, where `unchanged_operand` finds an x that op returns as is."""

    unchanged_operand: OperandFinder

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if len(op.results) != 1 or op.properties.get("activation") is not None:
            return
        value = self.unchanged_operand(op)
        # The type check is what keeps x * 1 from firing when the 1 broadcasts x to a
        # larger shape or another element type.
        if value is not None and value.type == op.results[0].type:
            rewriter.replace(op, [], [value])


@dataclass(frozen=True)
class ToReshape(RewritePattern):
    """op(...) -> reshape(x), where `reshaped_value` finds an x whose elements op's
    result holds in the same order; -> x itself if x already has the result type."""

    reshaped_value: OperandFinder

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        value = self.reshaped_value(op)
        if value is None:
            return
        result_type = op.results[0].type
        if value.type == result_type:
            rewriter.replace(op, [], [value])
        else:
            reshape = nn.ReshapeOp.build([value], result_types=[result_type], location=op.location)
            rewriter.replace(op, reshape)


@dataclass(frozen=True)
class ComposeTransposes(RewritePattern):
    """transpose(transpose(x, p), q) -> transpose(x, p[q]); -> x if p[q] is the identity."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, nn.TransposeOp):
            return
        inner = op.input.owner
        if not isinstance(inner, nn.TransposeOp):
            return
        inner_perm, outer_perm = inner.props().ints("perm") or [], op.props().ints("perm") or []
        perm = [inner_perm[axis] for axis in outer_perm]
        if perm == list(range(len(perm))):
            rewriter.replace(op, [], [inner.input])
            return
        transpose = nn.TransposeOp.build(
            [inner.input], {"perm": DenseArrayBase.from_list(i64, perm)}, location=op.location
        )
        rewriter.replace(op, transpose)


@dataclass(frozen=True)
class MatMulAddToGemm(RewritePattern):
    """add(matmul(a, w), c) and add(c, matmul(a, w)) -> gemm(a, w, c).

    For a 2-D `a`, a constant 2-D `w` and a constant `c` that broadcasts to the
    product's shape without enlarging it, when nothing else uses the product. The
    add's fused activation moves to the gemm; a matmul with one of its own stays.
    The gemm takes the matmul's location: it is that layer, with its bias.
    """

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, nn.AddOp):
            return
        for product, bias in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            matmul = product.owner
            if isinstance(matmul, nn.MatMulOp) and _is_gemm_with_bias(matmul, bias, op):
                gemm = nn.GemmOp.build(
                    [matmul.lhs, matmul.rhs, bias],
                    {"activation": op.activation},
                    location=matmul.location,
                )
                rewriter.replace(op, gemm)
                rewriter.erase(matmul)
                return


def _is_gemm_with_bias(matmul: nn.MatMulOp, bias: SSAValue, add: nn.AddOp) -> bool:
    product_type = nn.tensor_type(matmul.result)
    return (
        matmul.activation is None
        and matmul.result.has_one_use()
        and isinstance(product_type.get_element_type(), AnyFloat)
        and len(nn.tensor_type(matmul.lhs).get_shape()) == 2
        and len(nn.tensor_type(matmul.rhs).get_shape()) == 2
        and isinstance(matmul.rhs.owner, nn.ConstantOp)
        and isinstance(bias.owner, nn.ConstantOp)
        and len(nn.tensor_type(bias).get_shape()) <= 2
        and add.result.type == product_type
    )


@dataclass(frozen=True)
class SumOfTwoToAdd(RewritePattern):
    """sum(a, b) -> add(a, b): the same sum, in the binary form that can absorb an
    activation (ResNet's residual Sum followed by Relu then fuses)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if isinstance(op, nn.SumOp) and len(op.inputs) == 2:
            rewriter.replace(op, nn.AddOp.build(list(op.inputs), location=op.location))


# --------------------------------------------------------------------------------------
# The rules' data: which operand an op forwards or reshapes


def first_operand(op: Operation) -> SSAValue:
    """The op's first operand (forwarded when it has the result's type)."""
    return op.operands[0]


def sole_operand(op: Operation) -> SSAValue | None:
    """The operand of a variadic op that has only one."""
    return op.operands[0] if len(op.operands) == 1 else None


def is_splat(value: SSAValue, number: float) -> bool:
    """Whether `value` is a constant whose every element equals `number`."""
    array = constant_array(value)
    return array is not None and array.size > 0 and bool(np.all(array == number))


def beside_splat(number: float, *, splat_operands: tuple[int, ...]) -> OperandFinder:
    """For a binary op: the other operand, when the operand at one of the indices
    `splat_operands` is a constant splat of `number` (the 1 of x * 1)."""

    def other_operand(op: Operation) -> SSAValue | None:
        for index in splat_operands:
            if is_splat(op.operands[index], number):
                return op.operands[1 - index]
        return None

    return other_operand


RESHAPE_LIKE = (nn.ReshapeOp, nn.FlattenOp, nn.SqueezeOp, nn.UnsqueezeOp)
"""Ops that keep their input's elements in order and change only the shape."""


def before_reshapes(op: Operation) -> SSAValue | None:
    """The value at the start of the chain of reshape-like ops that feeds op's input,
    if there is such a chain."""
    value = op.operands[0]
    if not isinstance(value.owner, RESHAPE_LIKE):
        return None
    while isinstance(value.owner, RESHAPE_LIKE):
        value = value.owner.operands[0]
    return value


def flatten_source(op: Operation) -> SSAValue:
    """What a flatten reshapes: the start of the reshape chain feeding it, or its input."""
    return before_reshapes(op) or op.operands[0]


def identity_transpose_input(op: Operation) -> SSAValue | None:
    """A transpose's input, if its permutation is the identity."""
    assert isinstance(op, nn.TransposeOp)
    perm = op.props().ints("perm") or []
    return op.input if perm == list(range(len(perm))) else None


def order_keeping_transpose_input(op: Operation) -> SSAValue | None:
    """A transpose's input, if the transpose moves only size-1 axes (the other axes
    keep their order, so the elements do too: it is a reshape)."""
    assert isinstance(op, nn.TransposeOp)
    shape = nn.tensor_type(op.input).get_shape()
    moved = [axis for axis in op.props().ints("perm") or [] if shape[axis] != 1]
    return op.input if moved == sorted(moved) else None


def unpadded_input(op: Operation) -> SSAValue | None:
    """A pad's input, if every pad is zero."""
    assert isinstance(op, nn.PadOp)
    return op.input if not any(op.props().ints("pads") or []) else None


def whole_slice_input(op: Operation) -> SSAValue | None:
    """A slice's input, if the slice selects every element in order."""
    assert isinstance(op, nn.SliceOp)
    props = op.props()
    shape = nn.tensor_type(op.input).get_shape()
    starts, ends = props.ints("starts") or [], props.ints("ends") or []
    axes = props.ints("axes") or list(range(len(starts)))
    steps = props.ints("steps") or [1] * len(starts)
    for axis, start, end, step in zip(axes, starts, ends, steps, strict=True):
        size = shape[nn.normalize_axis(axis, len(shape))]
        # Ranges compare as sequences: a step of 2 over one element selects it all.
        if range(*nn.slice_bounds(size, start, end, step), step) != range(size):
            return None
    return op.input


# --------------------------------------------------------------------------------------
# The table

FORWARD_INPUT = ForwardOperand(first_operand)
FORWARD_SOLE_INPUT = ForwardOperand(sole_operand)
CHAIN_TO_RESHAPE = ToReshape(before_reshapes)

PATTERNS: dict[type[Operation], tuple[RewritePattern, ...]] = {
    # identity(x) -> x
    nn.IdentityOp: (FORWARD_INPUT,),
    # dropout(x) -> x (inference)
    nn.DropoutOp: (FORWARD_INPUT,),
    # cast(x : T) to T -> x
    nn.CastOp: (FORWARD_INPUT,),
    # expand(x) to x's own shape -> x
    nn.ExpandOp: (FORWARD_INPUT,),
    # tile(x) that repeats nothing -> x
    nn.TileOp: (FORWARD_INPUT,),
    # pad(x) by zeros -> x
    nn.PadOp: (ForwardOperand(unpadded_input),),
    # slice(x) of every element -> x
    nn.SliceOp: (ForwardOperand(whole_slice_input),),
    # sum(x), max(x), min(x), concat(x) of one input -> x; split(x) into one piece -> x
    # sum(a, b) -> add(a, b)
    nn.SumOp: (FORWARD_SOLE_INPUT, SumOfTwoToAdd()),
    nn.MaxOp: (FORWARD_SOLE_INPUT,),
    nn.MinOp: (FORWARD_SOLE_INPUT,),
    nn.ConcatOp: (FORWARD_SOLE_INPUT,),
    nn.SplitOp: (FORWARD_INPUT,),
    # x * 1 -> x, 1 * x -> x
    nn.MulOp: (ForwardOperand(beside_splat(1, splat_operands=(1, 0))),),
    # x / 1 -> x
    nn.DivOp: (ForwardOperand(beside_splat(1, splat_operands=(1,))),),
    # x ** 1 -> x
    nn.PowOp: (ForwardOperand(beside_splat(1, splat_operands=(1,))),),
    # x - 0 -> x
    nn.SubOp: (ForwardOperand(beside_splat(0, splat_operands=(1,))),),
    nn.AddOp: (
        # x + 0 -> x, 0 + x -> x
        ForwardOperand(beside_splat(0, splat_operands=(1, 0))),
        # add(matmul(a, w), c) -> gemm(a, w, c)
        MatMulAddToGemm(),
    ),
    # reshape(x) to x's type -> x; reshape(reshape-like(x)) -> reshape(x)
    nn.ReshapeOp: (FORWARD_INPUT, CHAIN_TO_RESHAPE),
    # squeeze/unsqueeze(x) to x's type -> x; squeeze/unsqueeze(reshape-like(x)) -> reshape(x)
    nn.SqueezeOp: (FORWARD_INPUT, CHAIN_TO_RESHAPE),
    nn.UnsqueezeOp: (FORWARD_INPUT, CHAIN_TO_RESHAPE),
    # flatten(x) -> reshape(x); flatten(reshape-like(x)) -> reshape(x)
    nn.FlattenOp: (FORWARD_INPUT, ToReshape(flatten_source)),
    nn.TransposeOp: (
        # transpose(x) by the identity permutation -> x
        ForwardOperand(identity_transpose_input),
        # transpose(transpose(x, p), q) -> transpose(x, p[q])
        ComposeTransposes(),
        # transpose(x) that moves only size-1 axes -> reshape(x)
        ToReshape(order_keeping_transpose_input),
    ),
}
"""Each op class's canonicalization patterns (beyond constant folding), in the order
they are tried."""


RULE_FILE = "canonicalize"
"""The shipped rule file (irc/rules/canonicalize.rules) that ports `PATTERNS`."""

use_rule_file: ContextVar[bool] = ContextVar("irc_canonicalize_use_rule_file", default=True)
"""Whether `canonicalize` applies the rule file (the default) or the hand-written
`PATTERNS` it was ported from; `canonicalize{rules=false}` sets it."""


def patterns_for(op_type: type[Operation]) -> tuple[RewritePattern, ...]:
    """The canonicalization patterns of an op class."""
    if use_rule_file.get():
        return _rule_patterns().get(op_type, ())
    return PATTERNS.get(op_type, ())


@functools.cache
def _rule_patterns() -> dict[type[Operation], tuple[RewritePattern, ...]]:
    from irc.rewrite import load_rules

    by_root: dict[type[Operation], list[RewritePattern]] = {}
    for rule in load_rules(RULE_FILE):
        for root in rule.root_classes:
            by_root.setdefault(root, []).append(rule())
    return {root: tuple(patterns) for root, patterns in by_root.items()}
