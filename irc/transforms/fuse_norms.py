"""`fuse-norms`: turn a layer norm written as its arithmetic back into `nn.layer_norm`,
an attention mask applied before a softmax into `nn.masked_softmax`, and the exact
GELU written with erf into `nn.gelu`: one op each that the quantizer and the NPU take
whole (an integer layer norm, an integer masked softmax, a lookup table).

The rewrites are the rules of irc/rules/fuse-norms.rules; this module holds the
natives the rules call (whether a reduce_mean reduces the last axis with its
dimension kept, whether a constant varies along the last axis only, and the
constants the fused op takes) and the pass.

Before (torch's TorchScript export of `nn.LayerNorm(32)` at opset 14):

    %m = nn.reduce_mean %x {axes = [-1]} : (tensor<1x16x32xf32>) -> tensor<1x16x1xf32>
    %d = nn.sub %x, %m : (tensor<1x16x32xf32>, tensor<1x16x1xf32>) -> tensor<1x16x32xf32>
    %p = nn.pow %d, %two : (tensor<1x16x32xf32>, tensor<f32>) -> tensor<1x16x32xf32>
    %v = nn.reduce_mean %p {axes = [-1]} : (tensor<1x16x32xf32>) -> tensor<1x16x1xf32>
    %e = nn.add %v, %eps : (tensor<1x16x1xf32>, tensor<f32>) -> tensor<1x16x1xf32>
    %s = nn.sqrt %e : tensor<1x16x1xf32>
    %n = nn.div %d, %s : (tensor<1x16x32xf32>, tensor<1x16x1xf32>) -> tensor<1x16x32xf32>
    %g = nn.mul %n, %gamma : (tensor<1x16x32xf32>, tensor<32xf32>) -> tensor<1x16x32xf32>
    %y = nn.add %g, %beta : (tensor<1x16x32xf32>, tensor<32xf32>) -> tensor<1x16x32xf32>

After:

    %y = nn.layer_norm %x, %gamma, %beta {axis = -1, epsilon = 1.0e-05} : (tensor<1x16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x16x32xf32>
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker

from irc.dialects import nn
from irc.rewrite.natives import RuleContext, constant_data, constraint, helper, shape, value_of

RULE_FILE = "fuse-norms"
"""The shipped rule file (irc/rules/fuse-norms.rules) that holds the rewrites."""


@constraint()
def reduces_last_axis(mean: Operation, source: SSAValue | Operation) -> bool:
    """An `nn.reduce_mean` of `source` over its last axis only, the axis kept (size 1),
    so that its result broadcasts against `source` along that axis."""
    if not isinstance(mean, nn.ReduceMeanOp):
        return False
    dims = shape(source)
    axes = mean.props().ints("axes")
    if not dims or axes is None or len(axes) != 1:
        return False
    return nn.normalize_axis(axes[0], len(dims)) == len(dims) - 1 and shape(mean) == [
        *dims[:-1],
        1,
    ]


@constraint()
def is_scalar(binding: SSAValue | Operation) -> bool:
    """A constant with one element."""
    data = constant_data(binding)
    return data is not None and data.size == 1


@helper()
def scalar_of(binding: SSAValue | Operation) -> float:
    """The one element of a constant (`is_scalar`), as a float."""
    data = constant_data(binding)
    assert data is not None and data.size == 1
    return float(data.reshape(-1)[0])


@constraint()
def along_last_axis(binding: SSAValue | Operation, source: SSAValue | Operation) -> bool:
    """A float constant that broadcasts against `source` along its last axis only
    (shape [C], [1, C], ... or a scalar): a per-channel gamma or beta."""
    data = constant_data(binding)
    dims = shape(source)
    if data is None or data.dtype.kind != "f" or not dims or data.ndim > len(dims):
        return False
    leading = data.shape[:-1] if data.ndim else ()
    last = data.shape[-1] if data.ndim else 1
    return all(size == 1 for size in leading) and last in (1, dims[-1])


def _constant(context: RuleContext, data: np.ndarray) -> SSAValue:
    return context.insert(nn.ConstantOp.from_array(data)).results[0]


@helper(builds_ops=True)
def last_axis_vector(
    context: RuleContext, binding: SSAValue | Operation, source: SSAValue | Operation
) -> SSAValue:
    """A constant `along_last_axis` as the [C] vector `nn.layer_norm` takes."""
    data = constant_data(binding)
    assert data is not None
    channels = shape(source)[-1]
    vector = np.broadcast_to(np.asarray(data).reshape(-1), (channels,))
    if data.shape == (channels,):
        return value_of(binding)
    return _constant(context, np.ascontiguousarray(vector, dtype=data.dtype))


@helper(builds_ops=True)
def ones_of_last_axis(context: RuleContext, source: SSAValue | Operation) -> SSAValue:
    """A [C] constant of ones of `source`'s element type: the gamma of a layer norm
    without one."""
    from irc.ir.weights import dtype_of

    value_type = value_of(source).type
    element = value_type.get_element_type()  # type: ignore[attr-defined]
    return _constant(context, np.ones(shape(source)[-1], dtype=dtype_of(element)))


# --------------------------------------------------------------------------------------
# Masked softmax

MASK_FILL_LIMIT = -1.0e4
"""The largest fill (or bias) that masks a softmax's element: exp(-1e4 - m) is 0 in
float32 for any row maximum m above -9,900, so the masked softmax computes what the
softmax of the filled scores computed. Exporters write -inf, -1e4, -1e9 or float32's
lowest."""


@constraint()
def over_last_axis(op: Operation) -> bool:
    """A softmax along its input's last axis."""
    dims = shape(op.operands[0])
    axis = op.props().int("axis")  # type: ignore[attr-defined]
    return (
        bool(dims) and nn.normalize_axis(-1 if axis is None else axis, len(dims)) == len(dims) - 1
    )


@constraint()
def is_mask_fill(binding: SSAValue | Operation) -> bool:
    """A float constant scalar at or below MASK_FILL_LIMIT (-inf included)."""
    data = constant_data(binding)
    return (
        data is not None
        and data.size == 1
        and data.dtype.kind == "f"
        and float(data.reshape(-1)[0]) <= MASK_FILL_LIMIT
    )


def _masks_some_but_no_row(mask: np.ndarray, source: SSAValue | Operation) -> bool:
    dims = shape(source)
    if mask.ndim > len(dims):
        return False
    try:
        full = np.broadcast_to(mask, dims)
    except ValueError:
        return False
    return bool(full.any()) and not bool(full.all(axis=-1).any())


@constraint()
def masks_no_row(binding: SSAValue | Operation, source: SSAValue | Operation) -> bool:
    """An i1 constant that broadcasts to `source`, masks some element and leaves every
    row of the last axis at least one element: where a row is masked entirely, the
    filled softmax is uniform but the masked softmax 0."""
    data = constant_data(binding)
    return data is not None and data.dtype == np.bool_ and _masks_some_but_no_row(data, source)


@constraint()
def keeps_some_in_every_row(binding: SSAValue | Operation, source: SSAValue | Operation) -> bool:
    """`masks_no_row` of the logical not of an i1 constant (the elements it keeps)."""
    data = constant_data(binding)
    return data is not None and data.dtype == np.bool_ and _masks_some_but_no_row(~data, source)


@constraint()
def is_mask_bias(binding: SSAValue | Operation, source: SSAValue | Operation) -> bool:
    """A float constant of zeros and values at or below MASK_FILL_LIMIT (an additive
    attention mask) that broadcasts to `source` and masks no row entirely."""
    data = constant_data(binding)
    if data is None or data.dtype.kind != "f":
        return False
    masked = data <= MASK_FILL_LIMIT
    return bool(np.all(masked | (data == 0))) and _masks_some_but_no_row(masked, source)


def _mask_constant(context: RuleContext, mask: np.ndarray, like: SSAValue | Operation) -> SSAValue:
    constant = context.insert(nn.ConstantOp.from_array(np.ascontiguousarray(mask)))
    constant.results[0].name_hint = value_of(like).name_hint
    return constant.results[0]


@helper(builds_ops=True)
def inverted(context: RuleContext, binding: SSAValue | Operation) -> SSAValue:
    """The logical not of an i1 constant: where(c, x, fill) masks where c is false."""
    data = constant_data(binding)
    assert data is not None
    return _mask_constant(context, ~data, binding)


@helper(builds_ops=True)
def mask_of_bias(context: RuleContext, binding: SSAValue | Operation) -> SSAValue:
    """The i1 mask of an additive mask (`is_mask_bias`): true where it masks."""
    data = constant_data(binding)
    assert data is not None
    return _mask_constant(context, data <= MASK_FILL_LIMIT, binding)


# --------------------------------------------------------------------------------------
# GELU

_SQRT2 = float(np.sqrt(2.0))


@constraint()
def scales_by_inverse_sqrt2(binding: SSAValue | Operation, source: SSAValue | Operation) -> bool:
    """`binding` is x / sqrt(2) or x * (1 / sqrt(2)) of `source`, the constant within
    float32 rounding: the argument of the erf of an exact GELU."""
    owner = value_of(binding).owner
    if not isinstance(owner, nn.DivOp | nn.MulOp):
        return False
    operands = list(owner.operands)
    if value_of(source) not in operands:
        return False
    operands.remove(value_of(source))
    if isinstance(owner, nn.DivOp) and owner.operands[0] is not value_of(source):
        return False
    data = constant_data(operands[0])
    if data is None or data.size != 1 or data.dtype.kind != "f":
        return False
    expected = _SQRT2 if isinstance(owner, nn.DivOp) else 1 / _SQRT2
    return abs(float(data.reshape(-1)[0]) - expected) <= 1e-6 * expected


@dataclass(frozen=True)
class FuseNormsPass(ModulePass):
    """Fuse layer norms written as reduce_mean, sub, pow, add, sqrt, div (and a mul
    by gamma and an add of beta) into `nn.layer_norm`, attention masks applied to a
    softmax's input into `nn.masked_softmax`, and the exact GELU written with erf into
    `nn.gelu` (see the module docstring)."""

    name = "fuse-norms"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from irc.rewrite import load_rules

        patterns = [pattern() for pattern in load_rules(RULE_FILE)]
        applier = GreedyRewritePatternApplier(patterns, ctx=ctx)  # type: ignore[arg-type]
        PatternRewriteWalker(applier).rewrite_module(op)
