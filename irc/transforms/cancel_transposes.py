"""`cancel-transposes`: remove every `nn.transpose` that the computation does not need.

Transposes are moved towards the results of the function through layout-agnostic ops
(sunk), so that inverse pairs meet and cancel; the few that reach a function argument
or result stay there, at the graph boundary. The rewrites:

- composition: `transpose(transpose(x))` is one transpose, or `x` when the
  permutations are inverse; a transpose of a constant folds into a new constant; a
  transpose that only moves size-1 axes is a reshape; equal transposes of one value
  merge.
- sinking (`op(transpose(x)) -> transpose(op'(x))`), the table `SINK_RULES`:
  elementwise ops (every non-constant operand must carry the same transpose;
  constants are brought to full rank and transposed by the inverse permutation),
  softmax and reductions (axes remapped), concat and split, pad, slice, resize,
  tile, expand, and reshapes that only split or merge axes that stay contiguous.
- classifier heads: `gemm(reshape(transpose(x)), W)` with a constant `W` permutes
  the rows of `W` instead (the flattened feature order of NHWC is not NCHW's).
- then, a transpose that only layout-agnostic ops with constant other operands
  separate from a function argument moves up to the argument.

`convert-layout` runs the same rewrites after rewriting spatial ops to a layout.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeGuard, TypeVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntegerAttr,
    LocationAttr,
    ModuleOp,
    TensorType,
    f32,
    i64,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from irc.diagnostics import Diagnostic, Location, Severity, emit
from irc.dialects import nn
from irc.dialects.base import tensor_type
from irc.ir import weights
from irc.ir.constants import constant_array

Perm = list[int]
"""A permutation of axes: axis i of `transpose(x, perm)` is axis perm[i] of x."""

ValueT = TypeVar("ValueT")

# --------------------------------------------------------------------------------------
# Permutations


def inverse_perm(perm: Sequence[int]) -> Perm:
    """The permutation that undoes `perm`."""
    inverse = [0] * len(perm)
    for position, axis in enumerate(perm):
        inverse[axis] = position
    return inverse


def compose_perms(inner: Sequence[int], outer: Sequence[int]) -> Perm:
    """The one permutation of `transpose(transpose(x, inner), outer)`."""
    return [inner[axis] for axis in outer]


def is_identity(perm: Sequence[int]) -> bool:
    """Whether `perm` leaves every axis in place."""
    return list(perm) == list(range(len(perm)))


def moves_only_unit_axes(shape: Sequence[int], perm: Sequence[int]) -> bool:
    """Whether transposing a tensor of `shape` by `perm` keeps its elements in memory
    order: the axes longer than 1 keep their relative order (it is then a reshape)."""
    moved = [axis for axis in perm if shape[axis] != 1]
    return moved == sorted(moved)


def permuted(values: Sequence[ValueT], perm: Sequence[int]) -> list[ValueT]:
    """`values` (one per axis) listed in the order of `transpose(x, perm)`'s axes."""
    return [values[axis] for axis in perm]


def unpermuted(values: Sequence[ValueT], perm: Sequence[int]) -> list[ValueT]:
    """The per-axis `values` of `transpose(x, perm)`, listed for the axes of `x`."""
    return permuted(values, inverse_perm(perm))


def shape_of(value: SSAValue) -> list[int]:
    """The static shape of a tensor value."""
    return list(tensor_type(value).get_shape())


def transpose_perm(value: SSAValue) -> Perm | None:
    """The permutation of the `nn.transpose` that defines `value`, if one does."""
    owner = value.owner
    if isinstance(owner, nn.TransposeOp):
        return owner.props().ints("perm")
    return None


def location_of(value: SSAValue) -> LocationAttr | None:
    """The location of the op that defines `value` (None for a block argument)."""
    owner = value.owner
    return owner.location if isinstance(owner, Operation) else None


def make_transpose(value: SSAValue, perm: Sequence[int], at: Operation) -> nn.TransposeOp:
    """`nn.transpose(value, perm)` at the location of `at`."""
    return nn.TransposeOp.build(
        [value], {"perm": DenseArrayBase.from_list(i64, list(perm))}, location=at.location
    )


def make_reshape(value: SSAValue, shape: Sequence[int], at: Operation) -> nn.ReshapeOp:
    """`nn.reshape(value)` to `shape`, at the location of `at`."""
    element_type = tensor_type(value).get_element_type()
    return nn.ReshapeOp.build(
        [value], {}, [TensorType(element_type, list(shape))], location=at.location
    )


def ints_attr(values: Sequence[int]) -> DenseArrayBase:
    """An integer-list property value."""
    return DenseArrayBase.from_list(i64, list(values))


def erase_if_dead(rewriter: PatternRewriter, values: Sequence[SSAValue]) -> None:
    """Erase the transposes, reshapes and constants that defined `values` if a rewrite
    left them unused, and those they used in turn (other dead ops are left alone)."""
    pending = list(values)
    while pending:
        owner = pending.pop().owner
        if (
            isinstance(owner, (nn.TransposeOp, nn.ConstantOp, *RESHAPES))
            and owner.parent is not None
            and not any(result.uses for result in owner.results)
        ):
            pending.extend(owner.operands)
            rewriter.erase(owner)


# --------------------------------------------------------------------------------------
# Counting


@dataclass(frozen=True)
class TransposeCount:
    """The transposes of a function, and how many of them are at its boundary."""

    total: int
    at_boundary: int
    """Those that read a function argument or feed only the function's results."""

    def where(self) -> str:
        """Where the transposes are: " (at inputs/outputs)", " (2 at inputs/outputs,
        1 inside)", " (1 inside)", or nothing when there are none."""
        inside = self.total - self.at_boundary
        if inside == 0:
            return " (at inputs/outputs)" if self.total else ""
        if self.at_boundary == 0:
            return f" ({inside} inside)"
        return f" ({self.at_boundary} at inputs/outputs, {inside} inside)"


def is_at_boundary(op: nn.TransposeOp) -> bool:
    """Whether a transpose reads a function argument or feeds only its results."""
    if isinstance(op.input, BlockArgument):
        return True
    uses = list(op.result.uses)
    return bool(uses) and all(isinstance(use.operation, ReturnOp) for use in uses)


def count_transposes(function: FuncOp) -> TransposeCount:
    """Count the `nn.transpose` ops of a function."""
    transposes = [op for op in function.walk() if isinstance(op, nn.TransposeOp)]
    return TransposeCount(len(transposes), sum(map(is_at_boundary, transposes)))


def functions_of(module: ModuleOp) -> list[FuncOp]:
    """The functions of a module, in order."""
    return [op for op in module.walk() if isinstance(op, FuncOp)]


def report_counts(pass_name: str, function: FuncOp, before: int, after: TransposeCount) -> None:
    """Emit the remark "<pass>: N transposes before, M after (...)" at the function."""
    message = f"{pass_name}: {before} transposes before, {after.total} after{after.where()}"
    emit(Diagnostic(message, Location.of(function), Severity.REMARK))


# --------------------------------------------------------------------------------------
# Composition and folding


@dataclass
class ComposeTransposes(RewritePattern):
    """Compose a transpose of a transpose; drop transposes that change nothing."""

    # transpose(transpose(x, p), q) -> transpose(x, p.q), or x if p.q is the identity
    # transpose(x, identity) -> x
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, nn.TransposeOp):
            return
        perm = op.props().ints("perm") or []
        inner = transpose_perm(op.input)
        if inner is not None:
            assert isinstance(op.input, OpResult)
            source = op.input.owner.operands[0]
            perm = compose_perms(inner, perm)
        elif is_identity(perm):
            source = op.input
        else:
            return
        old_input = op.input
        if is_identity(perm):
            rewriter.replace(op, [], [source])
        else:
            rewriter.replace(op, make_transpose(source, perm, op))
        erase_if_dead(rewriter, [old_input])


@dataclass
class FoldConstantTranspose(RewritePattern):
    """Fold the transpose of a constant into a new constant."""

    # transpose(constant) -> constant'
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, nn.TransposeOp):
            return
        array = constant_array(op.input)
        if array is None:
            return
        constant = nn.ConstantOp.from_array(
            np.transpose(array, op.props().ints("perm")), location=location_of(op.input)
        )
        old_input = op.input
        constant.result.name_hint = old_input.name_hint
        rewriter.replace(op, constant)
        erase_if_dead(rewriter, [old_input])


@dataclass
class UnitAxesTransposeToReshape(RewritePattern):
    """A transpose that only moves size-1 axes is a reshape."""

    # transpose(x : 1x1x1xC, [0, 3, 1, 2]) -> reshape(x) : 1xCx1x1
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, nn.TransposeOp):
            return
        perm = op.props().ints("perm") or []
        if is_identity(perm) or not moves_only_unit_axes(shape_of(op.input), perm):
            return
        rewriter.replace(op, make_reshape(op.input, shape_of(op.result), op))


@dataclass
class MergeReshapes(RewritePattern):
    """Merge a reshape into the reshape after it (the rule above creates them)."""

    # reshape(reshape(x)) -> reshape(x), or x if it has the same type;
    # flatten/squeeze/unsqueeze(reshape(x)) -> reshape(x)
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, RESHAPES) or not isinstance(op.operands[0].owner, nn.ReshapeOp):
            return
        old_input = op.operands[0]
        source = op.operands[0].owner.input
        if source.type == op.results[0].type:
            rewriter.replace(op, [], [source])
        else:
            rewriter.replace(op, make_reshape(source, shape_of(op.results[0]), op))
        erase_if_dead(rewriter, [old_input])


@dataclass
class MergeEqualTransposes(RewritePattern):
    """Equal transposes of one value are one transpose."""

    # transpose(x, p) ... transpose(x, p) -> the first one
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, nn.TransposeOp):
            return
        for use in op.input.uses:
            other = use.operation
            if (
                other is not op
                and isinstance(other, nn.TransposeOp)
                and other.parent is op.parent
                and other.is_before_in_block(op)
                and other.perm == op.perm
            ):
                rewriter.replace(op, [], [other.result])
                return


# --------------------------------------------------------------------------------------
# Sinking transposes through layout-agnostic ops


@dataclass
class Sunk:
    """An op rewritten to compute on untransposed operands.

    `ops` are the new ops, in order; `results` gives, for each result of the old op,
    the new value that replaces it once transposed by the permutation given with it
    (None: as it is)."""

    ops: list[Operation]
    results: list[tuple[SSAValue, Perm | None]]


SinkRule = Callable[[nn.NNOp, Perm, list[SSAValue]], Sunk | None]
"""Rewrite `op`, whose data operands all carried the transpose `perm`, on `operands`
(the same operands without that transpose); None if it cannot."""


def _rebuild(
    op: nn.NNOp,
    operands: Sequence[SSAValue],
    changes: Mapping[str, Attribute] | None = None,
    result_types: Sequence[Attribute] | None = None,
) -> nn.NNOp:
    """`op` again with other operands and some properties changed, at its location."""
    new_op = type(op).build(
        operands, {**op.properties, **(changes or {})}, result_types, location=op.location
    )
    new_op.attributes.update(op.attributes)
    return new_op


def _same(op: nn.NNOp, perm: Perm, operands: list[SSAValue]) -> Sunk:
    new_op = _rebuild(op, operands)
    return Sunk([new_op], [(new_op.results[0], perm)])


def sink_elementwise(op: nn.NNOp, perm: Perm, operands: list[SSAValue]) -> Sunk | None:
    # unary(T(x)) -> T(unary(x)); binary(T(x), T(y)) -> T(binary(x, y));
    # binary(T(x), c) -> T(binary(x, c')) with c' = c at full rank, inversely transposed
    return _same(op, perm, operands)


def sink_axis_op(op: nn.NNOp, perm: Perm, operands: list[SSAValue]) -> Sunk | None:
    # softmax(T(x), axis = a) -> T(softmax(x, axis = perm[a]))
    rank = len(perm)
    axis = nn.normalize_axis(op.props().int("axis") or 0, rank)
    new_op = _rebuild(op, operands, {"axis": IntegerAttr(perm[axis], i64)})
    return Sunk([new_op], [(new_op.results[0], perm)])


def sink_reduction(op: nn.NNOp, perm: Perm, operands: list[SSAValue]) -> Sunk | None:
    # reduce(T(x), axes = A) -> T'(reduce(x, axes = perm[A])); without keepdims, T' is
    # the order of the kept axes (often none at all)
    props = op.props()
    rank = len(perm)
    axes = props.ints("axes")
    reduced = (
        list(range(rank)) if axes is None else [perm[nn.normalize_axis(a, rank)] for a in axes]
    )
    changes = {} if axes is None else {"axes": ints_attr(reduced)}
    new_op = _rebuild(op, operands, changes)
    if props.bool("keepdims"):
        return Sunk([new_op], [(new_op.results[0], perm)])
    kept_in_order = [axis for axis in perm if axis not in reduced]
    kept_sorted = sorted(kept_in_order)
    result_perm = [kept_sorted.index(axis) for axis in kept_in_order]
    return Sunk([new_op], [(new_op.results[0], result_perm)])


def sink_concat(op: nn.NNOp, perm: Perm, operands: list[SSAValue]) -> Sunk | None:
    # concat(T(x), T(y), axis = a) -> T(concat(x, y, axis = perm[a]))
    axis = nn.normalize_axis(op.props().int("axis") or 0, len(perm))
    new_op = _rebuild(op, operands, {"axis": IntegerAttr(perm[axis], i64)})
    return Sunk([new_op], [(new_op.results[0], perm)])


def sink_split(op: nn.NNOp, perm: Perm, operands: list[SSAValue]) -> Sunk | None:
    # split(T(x), axis = a) -> T(split(x, axis = perm[a])) for every piece
    axis = nn.normalize_axis(op.props().int("axis") or 0, len(perm))
    new_op = _rebuild(op, operands, {"axis": IntegerAttr(perm[axis], i64)})
    return Sunk([new_op], [(result, perm) for result in new_op.results])


def sink_pad(op: nn.NNOp, perm: Perm, operands: list[SSAValue]) -> Sunk | None:
    # pad(T(x), pads) -> T(pad(x, pads permuted back))
    pads = op.props().ints("pads") or []
    rank = len(perm)
    begins, ends = unpermuted(pads[:rank], perm), unpermuted(pads[rank:], perm)
    new_op = _rebuild(op, operands, {"pads": ints_attr(begins + ends)})
    return Sunk([new_op], [(new_op.results[0], perm)])


def sink_slice(op: nn.NNOp, perm: Perm, operands: list[SSAValue]) -> Sunk | None:
    # slice(T(x), axes = A) -> T(slice(x, axes = perm[A]))
    props = op.props()
    rank = len(perm)
    axes = props.ints("axes") or list(range(len(props.ints("starts") or [])))
    new_axes = [perm[nn.normalize_axis(axis, rank)] for axis in axes]
    new_op = _rebuild(op, operands, {"axes": ints_attr(new_axes)})
    return Sunk([new_op], [(new_op.results[0], perm)])


def sink_resize(op: nn.NNOp, perm: Perm, operands: list[SSAValue]) -> Sunk | None:
    # resize(T(x), scales) -> T(resize(x, scales permuted back)); each axis is resized
    # on its own, so the order of the axes does not matter
    scales = op.props().floats("scales") or []
    new_scales = unpermuted(scales, perm)
    result_type = tensor_type(op.results[0])
    new_type = TensorType(result_type.get_element_type(), unpermuted(shape_of(op.results[0]), perm))
    changes = {"scales": DenseArrayBase.from_list(f32, new_scales)}
    new_op = _rebuild(op, operands, changes, [new_type])
    return Sunk([new_op], [(new_op.results[0], perm)])


def sink_tile(op: nn.NNOp, perm: Perm, operands: list[SSAValue]) -> Sunk | None:
    # tile(T(x), repeats) -> T(tile(x, repeats permuted back))
    repeats = op.props().ints("repeats") or []
    new_op = _rebuild(op, operands, {"repeats": ints_attr(unpermuted(repeats, perm))})
    return Sunk([new_op], [(new_op.results[0], perm)])


def sink_expand(op: nn.NNOp, perm: Perm, operands: list[SSAValue]) -> Sunk | None:
    # expand(T(x)) : S -> T(expand(x) : S permuted back), when the rank stays
    shape = shape_of(op.results[0])
    if len(shape) != len(perm):
        return None
    element_type = tensor_type(op.results[0]).get_element_type()
    new_op = _rebuild(op, operands, None, [TensorType(element_type, unpermuted(shape, perm))])
    return Sunk([new_op], [(new_op.results[0], perm)])


@dataclass(frozen=True)
class ReshapeThroughTranspose:
    """How a reshape of a transposed tensor is computed as a transpose of a reshape.

    `before` (if any) reorders axes within the groups that the reshape merges (it stays
    in front of the reshape: it is part of the computation, not of the layout); the
    reshape then makes `shape`, and `after` (if any) gives the reshape's result."""

    before: Perm | None
    shape: list[int]
    after: Perm | None


def _reshape_groups(
    source: Sequence[int], target: Sequence[int]
) -> list[tuple[list[int], list[int]]] | None:
    """Pair the axes longer than 1 of two shapes into the smallest groups of equal
    size (a reshape splits or merges within each group); None if they do not pair."""
    from_axes = [axis for axis, size in enumerate(source) if size != 1]
    to_axes = [axis for axis, size in enumerate(target) if size != 1]
    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(from_axes) and j < len(to_axes):
        group_from, group_to = [from_axes[i]], [to_axes[j]]
        size_from, size_to = source[from_axes[i]], target[to_axes[j]]
        i, j = i + 1, j + 1
        while size_from != size_to:
            if size_from < size_to and i < len(from_axes):
                group_from.append(from_axes[i])
                size_from *= source[from_axes[i]]
                i += 1
            elif size_to < size_from and j < len(to_axes):
                group_to.append(to_axes[j])
                size_to *= target[to_axes[j]]
                j += 1
            else:
                return None
        groups.append((group_from, group_to))
    if i != len(from_axes) or j != len(to_axes):
        return None
    return groups


def reshape_through_transpose(
    perm: Sequence[int], source_shape: Sequence[int], target_shape: Sequence[int]
) -> ReshapeThroughTranspose | None:
    """Write `reshape(transpose(x, perm))` (x of `source_shape`, the reshape giving
    `target_shape`) as `transpose(reshape(transpose(x, before)), after)` where `before`
    only reorders axes that the reshape merges; None if some merged axes are not
    adjacent in `x`, or if nothing would move past the reshape."""
    rank = len(perm)
    transposed_shape = permuted(source_shape, perm)
    groups = _reshape_groups(transposed_shape, target_shape)
    if groups is None:
        return None
    # Each group's axes must be adjacent in x (size-1 axes aside) to be reshaped there.
    long_axes = [axis for axis in range(rank) if source_shape[axis] != 1]
    position = {axis: index for index, axis in enumerate(long_axes)}
    group_of: dict[int, int] = {}
    for index, (group_from, _) in enumerate(groups):
        places = sorted(position[perm[axis]] for axis in group_from)
        if places != list(range(places[0], places[0] + len(places))):
            return None
        for axis in group_from:
            group_of[perm[axis]] = index
    # `before` lists each group's axes in the order the reshape reads them.
    before: Perm = []
    for axis in range(rank):
        if source_shape[axis] == 1:
            before.append(axis)
        elif axis not in before:
            group_from = groups[group_of[axis]][0]
            before.extend(perm[member] for member in group_from)
    # transpose(x, perm) = transpose(transpose(x, before), moved)
    moved = [inverse_perm(before)[axis] for axis in perm]
    if is_identity(moved):
        return None
    # The reshape emits each group's target axes where its block is in x (size-1
    # target axes follow the long axis before them, or lead).
    arranged_shape = permuted(source_shape, before)
    target_units_after: dict[int, list[int]] = {}
    leading_units: list[int] = []
    last_long = -1
    for axis, size in enumerate(target_shape):
        if size != 1:
            last_long = axis
        elif last_long < 0:
            leading_units.append(axis)
        else:
            target_units_after.setdefault(last_long, []).append(axis)
    order = list(leading_units)
    emitted: set[int] = set()
    for axis in range(rank):
        if arranged_shape[axis] == 1:
            continue
        index = group_of[before[axis]]
        if index in emitted:
            continue
        emitted.add(index)
        for target_axis in groups[index][1]:
            order.append(target_axis)
            order.extend(target_units_after.get(target_axis, []))
    after = [order.index(axis) for axis in range(len(target_shape))]
    return ReshapeThroughTranspose(
        before=None if is_identity(before) else before,
        shape=[target_shape[axis] for axis in order],
        after=None if is_identity(after) else after,
    )


def sink_reshape(op: nn.NNOp, perm: Perm, operands: list[SSAValue]) -> Sunk | None:
    # reshape(T(x)) -> T'(reshape'(x)) when the reshape splits or merges axes that are
    # adjacent in x: NCHW (1,C,H,W) -> (1,g,C/g,H,W) is NHWC (1,H,W,C) -> (1,H,W,g,C/g)
    (source,) = operands
    plan = reshape_through_transpose(perm, shape_of(source), shape_of(op.results[0]))
    if plan is None:
        return None
    ops: list[Operation] = []
    transposer = op.operands[0].owner
    assert isinstance(transposer, Operation)
    if plan.before is not None:
        ops.append(make_transpose(source, plan.before, transposer))
        source = ops[-1].results[0]
    ops.append(make_reshape(source, plan.shape, op))
    return Sunk(ops, [(ops[-1].results[0], plan.after)])


ELEMENTWISE = (nn.UnaryOp, nn.CastOp, nn.BroadcastOp, nn.PowOp, nn.WhereOp, nn.PReluOp)
"""Ops that compute each element from the elements at the same (broadcast) index, but
for softmax and log_softmax among the unary ops, which `SINK_RULES` matches first."""


RESHAPES = (nn.ReshapeOp, nn.FlattenOp, nn.SqueezeOp, nn.UnsqueezeOp)
"""Ops that only reinterpret the shape of their input."""

SINK_RULES: tuple[tuple[tuple[type[Operation], ...], SinkRule], ...] = (
    ((nn.SoftmaxOp, nn.LogSoftmaxOp), sink_axis_op),
    (ELEMENTWISE, sink_elementwise),
    ((nn.ReduceOp,), sink_reduction),
    ((nn.ConcatOp,), sink_concat),
    ((nn.SplitOp,), sink_split),
    ((nn.PadOp,), sink_pad),
    ((nn.SliceOp,), sink_slice),
    ((nn.ResizeOp,), sink_resize),
    ((nn.TileOp,), sink_tile),
    ((nn.ExpandOp,), sink_expand),
    (RESHAPES, sink_reshape),
)
"""The ops a transpose sinks through, and how: the first entry whose classes match."""


def sink_rule_for(op: Operation) -> SinkRule | None:
    """The rule that sinks a transpose through `op`, if there is one."""
    for classes, rule in SINK_RULES:
        if isinstance(op, classes):
            return rule
    return None


def _full_rank(array: np.ndarray, rank: int) -> np.ndarray:
    """`array` with leading size-1 axes up to `rank` (how broadcasting aligns it)."""
    return array.reshape((1,) * (rank - array.ndim) + array.shape)


def transform_constant(
    value: SSAValue, array: np.ndarray, perm: Sequence[int], rank: int
) -> nn.ConstantOp | None:
    """`value`'s constant `array` (of rank <= `rank`) brought to `rank` and transposed
    by `perm`, at its location; None when that changes nothing (a broadcast scalar)."""
    assert array.ndim <= rank
    if array.size == 1 and array.ndim < rank:
        return None
    constant = nn.ConstantOp.from_array(
        np.transpose(_full_rank(array, rank), perm), location=location_of(value)
    )
    constant.result.name_hint = value.name_hint
    return constant


@dataclass(frozen=True)
class Untransposed:
    """An op's operands seen without the transpose they share."""

    perm: Perm
    operands: list[SSAValue]
    new_constants: list[nn.ConstantOp]


def untranspose_operands(op: Operation, rank: int) -> Untransposed | None:
    """The operands of `op` without their common transpose of rank `rank`: each must be
    transposed by the same permutation, or be a constant (transposed back here)."""
    perms = [transpose_perm(operand) for operand in op.operands]
    candidates = [perm for perm in perms if perm is not None and len(perm) == rank]
    if not candidates or any(perm != candidates[0] for perm in candidates):
        return None
    perm = candidates[0]
    inverse = inverse_perm(perm)
    operands: list[SSAValue] = []
    new_constants: list[nn.ConstantOp] = []
    for operand, operand_perm in zip(op.operands, perms):
        if operand_perm == perm:
            assert isinstance(operand, OpResult)
            operands.append(operand.owner.operands[0])
            continue
        array = constant_array(operand)
        if array is None or array.ndim > rank:
            return None
        constant = transform_constant(operand, array, inverse, rank)
        if constant is None:
            operands.append(operand)
        else:
            new_constants.append(constant)
            operands.append(constant.result)
    return Untransposed(perm, operands, new_constants)


@dataclass
class SinkTranspose(RewritePattern):
    """Move a transpose below a layout-agnostic op (the rules of `SINK_RULES`)."""

    # op(transpose(x, p), ...) -> transpose(op'(x, ...), p')
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        rule = sink_rule_for(op)
        if rule is None or not op.operands:
            return
        assert isinstance(op, nn.NNOp)
        # Reshapes and reductions change the rank; every other op with a rule has
        # results of the rank of its (broadcast) operands.
        reference = op.operands[0] if isinstance(op, (*RESHAPES, nn.ReduceOp)) else op.results[0]
        untransposed = untranspose_operands(op, len(shape_of(reference)))
        if untransposed is None:
            return
        sunk = rule(op, untransposed.perm, untransposed.operands)
        if sunk is None:
            return
        transposer = next(
            operand.owner
            for operand in op.operands
            if isinstance(operand.owner, nn.TransposeOp)
            and transpose_perm(operand) == untransposed.perm
        )
        new_ops: list[Operation] = [*untransposed.new_constants, *sunk.ops]
        results: list[SSAValue] = []
        for value, perm in sunk.results:
            if perm is not None and not is_identity(perm):
                new_ops.append(make_transpose(value, perm, transposer))
                value = new_ops[-1].results[0]
            results.append(value)
        old_operands = list(op.operands)
        rewriter.replace(op, new_ops, results)
        erase_if_dead(rewriter, old_operands)


# --------------------------------------------------------------------------------------
# Classifier heads


def flatten_split(perm: Sequence[int], shape: Sequence[int], rows: int) -> int | None:
    """The number k of leading axes of `shape` that a reshape to 2-D makes its rows,
    such that `perm` keeps those axes in place; None if there is none."""
    for leading in range(len(shape) + 1):
        if math.prod(shape[:leading]) == rows and is_identity(perm[:leading]):
            return leading
    return None


def permute_weight_rows(
    weight: np.ndarray, perm: Sequence[int], feature_shape: Sequence[int], rows_axis: int
) -> np.ndarray:
    """Reorder the rows (along `rows_axis`) of a weight that multiplies the flattened
    `transpose(x, perm)`, whose features have `feature_shape`, so that it multiplies
    the flattened `x` instead: a strided view of `weight` (of more axes), to be
    reshaped to `weight.shape` as its bytes are copied (`dense_from_numpy`)."""
    shape = list(weight.shape)
    view = weight.reshape(shape[:rows_axis] + list(feature_shape) + shape[rows_axis + 1 :])
    features_at = range(rows_axis, rows_axis + len(feature_shape))
    order = [
        *range(rows_axis),
        *(features_at[axis] for axis in inverse_perm(perm)),
        *range(features_at.stop, view.ndim),
    ]
    return np.transpose(view, order)


@dataclass
class PermuteClassifierWeights(RewritePattern):
    """Absorb a transpose before a flatten into a matrix product's constant weights."""

    # gemm(reshape(transpose(x, p)) : MxK, W) -> gemm(reshape(x) : MxK, W with rows permuted)
    # matmul(reshape(transpose(x, p)) : MxK, W) -> matmul(reshape(x), W with rows permuted)
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, nn.GemmOp):
            if op.props().bool("trans_a"):
                return
            rows_axis = 1 if op.props().bool("trans_b") else 0
        elif isinstance(op, nn.MatMulOp):
            rows_axis = 0
        else:
            return
        flatten = op.operands[0].owner
        if not isinstance(flatten, nn.ReshapeOp | nn.FlattenOp):
            return
        perm = transpose_perm(flatten.input)
        weight = constant_array(op.operands[1])
        lhs_shape = shape_of(op.operands[0])
        if perm is None or weight is None or len(lhs_shape) != 2:
            return
        if isinstance(op, nn.MatMulOp) and weight.ndim not in (1, 2):
            return
        transposed_shape = shape_of(flatten.input)
        leading = flatten_split(perm, transposed_shape, lhs_shape[0])
        if leading is None:
            return
        trailing_perm = [axis - leading for axis in perm[leading:]]
        new_weight = permute_weight_rows(
            weight, trailing_perm, transposed_shape[leading:], rows_axis
        )
        transposer = flatten.input.owner
        assert isinstance(transposer, nn.TransposeOp)
        reshape = make_reshape(transposer.input, lhs_shape, flatten)
        constant = nn.ConstantOp.from_attr(
            weights.dense_from_numpy(new_weight, weight.shape), location_of(op.operands[1])
        )
        constant.result.name_hint = op.operands[1].name_hint
        new_op = _rebuild(op, [reshape.result, constant.result, *op.operands[2:]])
        old_operands = list(op.operands)
        rewriter.replace(op, [reshape, constant, new_op])
        erase_if_dead(rewriter, old_operands)


# --------------------------------------------------------------------------------------
# Hoisting to function arguments


def _single_varying_operand(op: Operation) -> SSAValue | None:
    """The one operand of `op` that is not a constant, if there is exactly one."""
    varying = [operand for operand in op.operands if constant_array(operand) is None]
    return varying[0] if len(varying) == 1 else None


def is_hoistable(op: Operation | Block) -> TypeGuard[nn.NNOp]:
    """Whether a transpose after `op` can move in front of it: `op` has a sink rule
    that keeps the rank of its one result (not a reshape, reduction or split)."""
    return (
        isinstance(op, nn.NNOp)
        and sink_rule_for(op) is not None
        and not isinstance(op, (*RESHAPES, nn.ReduceOp, nn.SplitOp))
    )


def reaches_argument(value: SSAValue) -> bool:
    """Whether `value` is a function argument seen through a chain of single-use
    hoistable ops whose other operands are constants."""
    while not isinstance(value, BlockArgument):
        owner = value.owner
        if not is_hoistable(owner) or not value.has_one_use():
            return False
        operand = _single_varying_operand(owner)
        if operand is None:
            return False
        value = operand
    return True


@dataclass
class HoistTransposeToArgument(RewritePattern):
    """Move a transpose above the ops that separate it from a function argument.

    `transpose(op(x), p)` is `transpose(op(transpose(x', inverse(p))), p)` with
    `x' = transpose(x, p)`; the sink rule of `op` then moves the inner transpose
    out, where it cancels with the outer one.
    """

    # transpose(op(arg, c), p) -> op'(transpose(arg, p), c') when nothing else uses op
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, nn.TransposeOp):
            return
        producer = op.input.owner
        if not is_hoistable(producer) or not op.input.has_one_use():
            return
        varying = _single_varying_operand(producer)
        perm = op.props().ints("perm") or []
        rank = len(perm)
        if varying is None or len(shape_of(varying)) != rank or not reaches_argument(varying):
            return
        if any(len(shape_of(result)) != rank for result in producer.results):
            return
        transpose = make_transpose(varying, perm, op)
        new_ops: list[Operation] = [transpose]
        operands: list[SSAValue] = []
        for operand in producer.operands:
            array = constant_array(operand)
            constant = None if array is None else transform_constant(operand, array, perm, rank)
            if operand is varying:
                operands.append(transpose.result)
            elif constant is None:
                operands.append(operand)
            else:
                new_ops.append(constant)
                operands.append(constant.result)
        rule = sink_rule_for(producer)
        assert rule is not None
        sunk = rule(producer, inverse_perm(perm), operands)
        if sunk is None or [perm_after for _, perm_after in sunk.results] != [inverse_perm(perm)]:
            for unused in reversed([*new_ops, *(sunk.ops if sunk else [])]):
                unused.erase(safe_erase=False)  # drop their uses of `varying`
            return
        old_operands = list(producer.operands)
        rewriter.replace(op, [*new_ops, *sunk.ops], [sunk.results[0][0]])
        rewriter.erase(producer)
        erase_if_dead(rewriter, old_operands)


# --------------------------------------------------------------------------------------
# The pass


SINKING_PATTERNS: tuple[RewritePattern, ...] = (
    ComposeTransposes(),
    FoldConstantTranspose(),
    UnitAxesTransposeToReshape(),
    MergeReshapes(),
    MergeEqualTransposes(),
    PermuteClassifierWeights(),
    SinkTranspose(),
)
"""Phase 1: transposes move towards the results and cancel on the way."""

HOISTING_PATTERNS: tuple[RewritePattern, ...] = (
    ComposeTransposes(),
    MergeEqualTransposes(),
    HoistTransposeToArgument(),
)
"""Phase 2: the transposes that layout-agnostic ops separate from an argument move up."""


def cancel_transposes(module: ModuleOp) -> None:
    """Remove the transposes of `module` that are not needed (both phases)."""
    for patterns in (SINKING_PATTERNS, HOISTING_PATTERNS):
        applier = GreedyRewritePatternApplier(list(patterns), dce_enabled=False)
        PatternRewriteWalker(applier).rewrite_module(module)


@dataclass(frozen=True)
class CancelTransposesPass(ModulePass):
    """Remove unneeded transposes: sink them through layout-agnostic ops until inverse pairs cancel.

    Each transpose is moved towards the function's results through ops that do not
    care about the order of axes, and cancels with the inverse transpose it meets:

    - `transpose(transpose(x))` composes (to `x` when inverse); a transpose of a
      constant folds into a new constant; one that only moves size-1 axes becomes a
      `nn.reshape`; equal transposes of one value merge.
    - It sinks through elementwise unary ops and activations, broadcasting binary and
      variadic ops (`add`, `sum`, `where`, `prelu`, ...: every non-constant operand
      must carry the same transpose; constants are brought to full rank, a `(C,1,1)`
      bias becoming `(1,C,1,1)`, and transposed back), softmax and reductions (axes
      remapped), `concat` and `split`, `pad`, `slice`, `resize`, `tile`, `expand`,
      and reshapes that only split or merge axes adjacent in the untransposed tensor
      (ShuffleNet's channel split `(N,C,H,W) -> (N,g,C/g,H,W)`).
    - `gemm`/`matmul` of a 2-D flatten of `transpose(x)` with a constant weight takes
      the flatten of `x` with the weight's rows permuted (NHWC flattens features in
      the order h, w, c; NCHW in the order c, h, w).
    - Last, a transpose that only such ops (with constant other operands) separate
      from a function argument moves up to the argument: `transpose(pad(sub(x, mean)))`
      becomes `pad(sub(transpose(x), mean'))`.

    What remains, and why:

    - transposes on function arguments and results: the function's signature is
      the model's (NCHW) and does not change, so one transpose per argument or
      result whose data is kept in another layout inside;
    - the model's own transposes, which permute data rather than change its layout.
      ShuffleNet's channel shuffle, `reshape (N,C,H,W) -> (N,g,C/g,H,W)`,
      `transpose [0,2,1,3,4]`, `reshape` back, stays in NHWC as `reshape (N,H,W,C)
      -> (N,H,W,g,C/g)`, `transpose [0,1,2,4,3]`, `reshape` back: it reorders
      channels across the groups of the grouped convolutions around it, which no
      choice of layout or weights can absorb;
    - transposes in front of an op that depends on the order of axes and has no rule
      (`matmul` with a non-constant weight, a reshape merging axes that are not
      adjacent in the untransposed tensor, `gather`, `layer_norm`), or of an op with a
      non-constant operand that does not carry the same transpose.

    A remark at each function gives the counts before and after.

    Before:

        %t = nn.transpose %x {perm = [0, 2, 3, 1]} : (tensor<1x3x4x4xf32>) -> tensor<1x4x4x3xf32>
        %r = nn.relu %t : tensor<1x4x4x3xf32>
        %y = nn.transpose %r {perm = [0, 3, 1, 2]} : (tensor<1x4x4x3xf32>) -> tensor<1x3x4x4xf32>
        func.return %y : tensor<1x3x4x4xf32>

    After:

        %r = nn.relu %x : tensor<1x3x4x4xf32>
        func.return %r : tensor<1x3x4x4xf32>
    """

    name = "cancel-transposes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = functions_of(op)
        before = [count_transposes(function).total for function in functions]
        cancel_transposes(op)
        for function, count in zip(functions, before):
            report_counts(self.name, function, count, count_transposes(function))
