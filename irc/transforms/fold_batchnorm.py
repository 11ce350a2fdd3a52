"""`fold-batchnorm`: fold inference batch normalization into the op that feeds it.

An inference `nn.batch_norm` with constant parameters is a per-channel affine map,
y = x * scale + shift with scale = gamma / sqrt(var + epsilon) and
shift = beta - mean * scale. When x is the result of a linear op with constant
weights (`nn.conv`, `nn.conv_transpose`, `nn.gemm`) that nothing else reads, the map
folds into that op's weights and bias; otherwise it becomes an explicit `nn.mul` and
`nn.add` by per-channel constants. Chains of such constant scales and shifts then
combine into one mul and one add, or fold into the linear op before them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import LocationAttr, ModuleOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from irc.diagnostics import Diagnostic, Location, Severity, emit
from irc.dialects import nn
from irc.dialects.base import tensor_type
from irc.ir.constants import constant_array
from irc.ir.weights import dtype_of, is_float_type
from irc.passes import option

FoldableProducer = nn.ConvOp | nn.ConvTransposeOp | nn.GemmOp
"""The ops a batch norm folds into: linear in their input, with a weight and a bias."""


@dataclass(frozen=True)
class ChannelAffine:
    """A batch norm as y = x * scale + shift per channel, in float64."""

    scale: np.ndarray
    shift: np.ndarray

    @staticmethod
    def of(op: nn.BatchNormOp) -> ChannelAffine | None:
        """The affine map of a batch norm whose parameters are constants with data."""
        arrays = [constant_array(value) for value in (op.scale, op.bias, op.mean, op.var)]
        if any(array is None for array in arrays):
            return None
        gamma, beta, mean, variance = (np.asarray(a, dtype=np.float64) for a in arrays)
        epsilon = op.props().float("epsilon")
        assert epsilon is not None  # the property has a default
        scale = gamma / np.sqrt(variance + epsilon)
        return ChannelAffine(scale, beta - mean * scale)


# --------------------------------------------------------------------------------------
# Scaling each producer's weight by output channel


def scale_conv_weight(weight: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Scale a conv weight per output channel: axis 0 in both layouts (O, I, k... and
    O, k..., I), whatever the group count."""
    return weight * scale.reshape(-1, *([1] * (weight.ndim - 1)))


def scale_conv_transpose_weight(
    weight: np.ndarray, scale: np.ndarray, group: int, channels_last: bool
) -> np.ndarray:
    """Scale a conv_transpose weight per output channel.

    The weight is (C, M/group, k...) channels-first or (C, k..., M/group) channels-last.
    Input channel c belongs to group g = c // (C/group), and its entry j along the
    M/group axis writes output channel g * M/group + j.
    """
    in_channels = weight.shape[0]
    out_per_group = weight.shape[-1] if channels_last else weight.shape[1]
    spatial = weight.ndim - 2
    by_group = scale.reshape(group, 1, out_per_group)
    per_entry = np.broadcast_to(by_group, (group, in_channels // group, out_per_group))
    per_entry = per_entry.reshape(in_channels, out_per_group)
    if channels_last:
        return weight * per_entry.reshape(in_channels, *([1] * spatial), out_per_group)
    return weight * per_entry.reshape(in_channels, out_per_group, *([1] * spatial))


def scale_gemm_weight(weight: np.ndarray, scale: np.ndarray, trans_b: bool) -> np.ndarray:
    """Scale a gemm's B per output feature: the columns of op(B), i.e. the rows of B
    when `trans_b` (B is N x K) and its columns otherwise (B is K x N)."""
    return weight * (scale[:, None] if trans_b else scale[None, :])


def _producer_to_fold_into(op: nn.BatchNormOp) -> FoldableProducer | None:
    """The op a batch norm can fold into, if its input comes from one that allows it."""
    producer = op.input.owner
    if not isinstance(producer, FoldableProducer):
        return None
    if not producer.result.has_one_use():
        return None  # its other users need the result before normalization
    if "activation" in producer.properties:
        return None  # batch norm after an activation is not linear in the op's result
    if constant_array(producer.operands[1]) is None:
        return None
    if len(producer.operands) > 2 and constant_array(producer.operands[2]) is None:
        return None
    if not isinstance(producer, nn.GemmOp) and (
        producer.props().str("layout") != op.props().str("layout")
    ):
        return None  # the batch norm's channel axis is not the producer's
    # A gemm result is 2-D, and a rank-2 batch norm acts on axis 1 in either layout.
    return producer


def _folded_constants(
    producer: FoldableProducer, affine: ChannelAffine
) -> tuple[np.ndarray, np.ndarray]:
    """The producer's new weight and bias (in float64)."""
    weight = np.asarray(constant_array(producer.operands[1]), dtype=np.float64)
    bias_array = constant_array(producer.operands[2]) if len(producer.operands) > 2 else None
    bias = np.zeros(1) if bias_array is None else np.asarray(bias_array, dtype=np.float64)
    props = producer.props()
    match producer:
        case nn.ConvOp():
            new_weight = scale_conv_weight(weight, affine.scale)
        case nn.ConvTransposeOp():
            channels_last = props.str("layout") == "nhwc"
            group = props.int("group") or 1
            new_weight = scale_conv_transpose_weight(weight, affine.scale, group, channels_last)
        case nn.GemmOp():
            new_weight = scale_gemm_weight(weight, affine.scale, props.bool("trans_b"))
            # The gemm's beta multiplies C; it is folded in, so the new gemm has beta 1.
            # C may be any shape that broadcasts to (M, N); scaling by feature keeps that.
            gemm_beta = props.float("beta")
            assert gemm_beta is not None  # the property has a default
            bias = bias * gemm_beta
    return new_weight, bias * affine.scale + affine.shift


def fold_into(
    producer: FoldableProducer,
    affine: ChannelAffine,
    op: Operation,
    shift_source: SSAValue,
    rewriter: PatternRewriter,
    activation: Attribute | None = None,
) -> None:
    """Replace `op`, a per-channel affine map of `producer`'s result, by a copy of
    `producer` with the map folded into its weight and bias. Without a bias of its
    own, the producer's new bias is named and located as `shift_source`; a fused
    `activation` of `op` moves to the new producer."""
    new_weight, new_bias = _folded_constants(producer, affine)
    old_weight = producer.operands[1]
    old_bias = producer.operands[2] if len(producer.operands) > 2 else None
    weight = _constant_like(new_weight, old_weight, old_weight)
    bias = _constant_like(new_bias, old_weight, shift_source if old_bias is None else old_bias)
    properties = dict(producer.properties)
    if isinstance(producer, nn.GemmOp):
        properties.pop("beta", None)
    if activation is not None:
        properties["activation"] = activation
    folded = type(producer).build(
        [producer.operands[0], weight, bias],
        properties,
        [producer.result.type],
        location=producer.location,
    )
    folded.attributes.update(producer.attributes)
    folded.results[0].name_hint = op.results[0].name_hint or producer.result.name_hint
    replaced = list(producer.operands[1:])
    rewriter.replace(op, [weight, bias, folded], [folded.results[0]])
    rewriter.erase(producer)
    _erase_if_unused(rewriter, replaced)


def _constant_like(array: np.ndarray, like: SSAValue, location_of: SSAValue) -> nn.ConstantOp:
    """A constant of `array` in `like`'s element type, named and located as the op
    that defines `location_of`, so folded weights keep their names."""
    dtype = dtype_of(tensor_type(like).get_element_type())
    constant = nn.ConstantOp.from_array(array.astype(dtype), location=_location(location_of))
    constant.result.name_hint = location_of.name_hint
    return constant


def _location(value: SSAValue) -> LocationAttr | None:
    owner = value.owner
    return owner.location if isinstance(owner, Operation) else None


def _erase_if_unused(rewriter: PatternRewriter, values: list[SSAValue]) -> None:
    """Erase the constants among `values` that nothing reads any more."""
    for value in values:
        owner = value.owner
        if isinstance(owner, nn.ConstantOp) and not owner.result.uses:
            rewriter.erase(owner)


@dataclass
class FoldBatchNormPattern(RewritePattern):
    """Fold a constant batch norm into its producer, or lower it to a scale and shift."""

    lower_unfused: bool = True
    """Rewrite batch norms that cannot be folded as nn.mul and nn.add by constants."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.BatchNormOp, rewriter: PatternRewriter) -> None:
        affine = ChannelAffine.of(op)
        if affine is None:
            return
        producer = _producer_to_fold_into(op)
        if producer is not None:
            self.fold(op, producer, affine, rewriter)
        elif self.lower_unfused:
            self.lower(op, affine, rewriter)

    # batch_norm(conv(x, w, b)) -> conv(x, w * scale, b * scale + shift)
    # batch_norm(conv_transpose(x, w, b)) -> conv_transpose(x, w * scale, b * scale + shift)
    # batch_norm(gemm(a, w, c)) -> gemm(a, w * scale, beta * c * scale + shift) {beta = 1}
    def fold(
        self,
        op: nn.BatchNormOp,
        producer: FoldableProducer,
        affine: ChannelAffine,
        rewriter: PatternRewriter,
    ) -> None:
        parameters = list(op.operands[1:])
        fold_into(producer, affine, op, op.bias, rewriter)
        _erase_if_unused(rewriter, parameters)

    # batch_norm(x) -> add(mul(x, scale), shift), per channel
    def lower(self, op: nn.BatchNormOp, affine: ChannelAffine, rewriter: PatternRewriter) -> None:
        rank = len(tensor_type(op.input).get_shape())
        channels_last = op.props().str("layout") == "nhwc" or rank == 2
        # Shaped to broadcast over the channel axis: (C,) when it is the last axis,
        # else (C, 1, ..., 1).
        shape = (-1,) if channels_last else (-1, *([1] * (rank - 2)))
        scale = _constant_like(affine.scale.reshape(shape), op.input, op.scale)
        shift = _constant_like(affine.shift.reshape(shape), op.input, op.bias)
        scaled = nn.MulOp.build([op.input, scale], location=op.location)
        shifted = nn.AddOp.build([scaled, shift], location=op.location)
        if name := op.result.name_hint:
            scale.result.name_hint = f"{name}_scale"
            shift.result.name_hint = f"{name}_shift"
            scaled.result.name_hint = f"{name}_scaled"
            shifted.result.name_hint = name
        parameters = list(op.operands[1:])
        rewriter.replace(op, [scale, scaled, shift, shifted], [shifted.result])
        _erase_if_unused(rewriter, parameters)


# --------------------------------------------------------------------------------------
# Chains of constant scales and shifts


@dataclass(frozen=True)
class _ConstantOperand:
    """A binary op's operands as a value x and a constant c with data (in float64)."""

    x: SSAValue
    c: SSAValue
    array: np.ndarray

    @staticmethod
    def of(op: Operation) -> _ConstantOperand | None:
        """The split of `op`'s operands, in either order, when the result has x's type
        (c does not broadcast x to a larger shape)."""
        lhs, rhs = op.operands
        for x, c in ((lhs, rhs), (rhs, lhs)):
            array = constant_array(c)
            if array is not None and constant_array(x) is None and x.type == op.results[0].type:
                return _ConstantOperand(x, c, np.asarray(array, dtype=np.float64))
        return None


def _broadcasts_into(array: np.ndarray, value: SSAValue) -> bool:
    """Whether `array` broadcasts to `value`'s shape without enlarging it."""
    shape = tuple(tensor_type(value).get_shape())
    try:
        return np.broadcast_shapes(shape, array.shape) == shape
    except ValueError:
        return False


def _channel_vector(array: np.ndarray, producer: FoldableProducer) -> np.ndarray | None:
    """`array` as one value per output channel of `producer`, if it broadcasts to the
    producer's result along the channel axis only (or is a scalar)."""
    if not _broadcasts_into(array, producer.result):
        return None
    shape = tensor_type(producer.result).get_shape()
    rank = len(shape)
    channels_last = producer.props().str("layout") == "nhwc" or isinstance(producer, nn.GemmOp)
    axis = rank - 1 if channels_last else 1
    padded = array.reshape((1,) * (rank - array.ndim) + array.shape)
    if any(size != 1 for position, size in enumerate(padded.shape) if position != axis):
        return None
    return np.broadcast_to(padded.reshape(-1), (shape[axis],)).copy()


def _foldable_producer(value: SSAValue) -> FoldableProducer | None:
    """The linear op with constant weights that defines `value` alone, if any."""
    producer = value.owner
    if not isinstance(producer, FoldableProducer) or not producer.result.has_one_use():
        return None
    if "activation" in producer.properties or constant_array(producer.operands[1]) is None:
        return None
    if len(producer.operands) > 2 and constant_array(producer.operands[2]) is None:
        return None
    return producer


def _is_float(value: SSAValue) -> bool:
    return is_float_type(tensor_type(value).get_element_type())


@dataclass
class FoldAffineChainPattern(RewritePattern):
    """Combine constant scales and shifts that follow each other, and fold them into
    the conv, conv_transpose or gemm before them.

    A batch norm after a concat becomes a scale and a shift; networks converted from
    Caffe follow it with a scale layer (another mul and add). Each op is one more
    rounding in int8, so the chain becomes one `nn.mul` and one `nn.add`, or nothing
    when a linear op before it can absorb it. Arithmetic is in float64, rounded once.
    """

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, nn.MulOp | nn.AddOp) or not _is_float(op.results[0]):
            return
        outer = _ConstantOperand.of(op)
        if outer is None or not outer.x.has_one_use():
            return
        inner = outer.x.owner
        if producer := _foldable_producer(outer.x):
            self.fold(op, outer, producer, rewriter)
        elif isinstance(inner, nn.MulOp | nn.AddOp) and "activation" not in inner.properties:
            chained = _ConstantOperand.of(inner)
            if chained is not None:
                self.combine(op, outer, inner, chained, rewriter)

    # mul(conv(x, w, b), c) -> conv(x, w * c, b * c); add(conv(x, w, b), d) -> conv(x, w, b + d)
    def fold(
        self,
        op: Operation,
        outer: _ConstantOperand,
        producer: FoldableProducer,
        rewriter: PatternRewriter,
    ) -> None:
        vector = _channel_vector(outer.array, producer)
        if vector is None:
            return
        if isinstance(op, nn.MulOp):
            affine = ChannelAffine(vector, np.zeros_like(vector))
        else:
            affine = ChannelAffine(np.ones_like(vector), vector)
        activation = op.properties.get("activation")
        fold_into(producer, affine, op, outer.c, rewriter, activation)
        _erase_if_unused(rewriter, [outer.c])

    # mul(mul(x, a), c) -> mul(x, a * c)
    # add(add(x, b), d) -> add(x, b + d)
    # mul(add(x, b), c) -> add(mul(x, c), b * c)
    def combine(
        self,
        op: Operation,
        outer: _ConstantOperand,
        inner: Operation,
        chained: _ConstantOperand,
        rewriter: PatternRewriter,
    ) -> None:
        x, a, c = chained.x, chained.array, outer.array
        outer_constant, inner_constant = outer.c, chained.c
        if type(op) is type(inner):
            assert isinstance(op, nn.MulOp | nn.AddOp)
            combined = a * c if isinstance(op, nn.MulOp) else a + c
            if not _broadcasts_into(combined, op.results[0]):
                return
            constant = _constant_like(combined, op.results[0], inner_constant)
            new = type(op).build([x, constant], dict(op.properties), [op.results[0].type])
            new.location = op.location
            new.results[0].name_hint = op.results[0].name_hint
            rewriter.replace(op, [constant, new], [new.results[0]])
        elif isinstance(op, nn.MulOp):
            shift = a * c
            if not _broadcasts_into(shift, op.results[0]):
                return
            scale = _constant_like(c, op.results[0], outer_constant)
            scaled = nn.MulOp.build([x, scale], location=op.location)
            scaled.result.name_hint = inner.results[0].name_hint
            shift_constant = _constant_like(shift, op.results[0], inner_constant)
            shifted = nn.AddOp.build([scaled, shift_constant], location=inner.location)
            shifted.result.name_hint = op.results[0].name_hint
            rewriter.replace(op, [scale, scaled, shift_constant, shifted], [shifted.result])
        else:
            return  # add(mul(x, a), d) is already the normal form
        rewriter.erase(inner)
        _erase_if_unused(rewriter, [outer_constant, inner_constant])


@dataclass(frozen=True)
class FoldBatchNormPass(ModulePass):
    """Fold nn.batch_norm into the conv, conv_transpose or gemm before it.

    A batch norm with constant parameters is y = x * scale + shift per channel, with
    scale = gamma / sqrt(var + epsilon) and shift = beta - mean * scale. When x is
    the result of an `nn.conv`, `nn.conv_transpose` or `nn.gemm` with a constant
    weight (and a constant bias or none), with no fused activation and no other
    user, the weight is scaled per output channel (W' = W * scale) and the bias
    becomes b' = b * scale + shift (b = 0 if absent). The output channels are axis 0
    of a conv weight (O, I, k... or O, k..., I), the M/group axis of a
    conv_transpose weight, grouped, and the columns of op(B) of a gemm (the rows of
    B when `trans_b`); a gemm's `beta` is folded into the new bias. The producer and
    the batch norm must have the same `layout`. Arithmetic is in float64, rounded
    once to the weight's type, and the new constants keep the old ones' locations.

    Any other batch norm with constant parameters (after a concat, a pooling, an op
    with other users or a fused activation) becomes `nn.mul` and `nn.add` by
    per-channel constants shaped to broadcast over its channel axis: (C, 1, 1) for a
    channels-first rank-4 input, (C) for channels-last; unless `lower-unfused=false`.
    A batch norm whose parameters are not constants is left, with a remark.

    Then (unless `chains=false`) constant scales and shifts that follow each other
    combine, so that each chain costs at most one rounding per op in int8: a batch
    norm after a concat, followed by the scale layer of a network converted from
    Caffe, is two muls and two adds, which become one of each. With constants a, b,
    c, d that do not broadcast x to a larger shape, and an inner op with one user and
    no fused activation:

        mul(mul(x, a), c) -> mul(x, a * c)
        add(add(x, b), d) -> add(x, b + d)          (the outer add's activation stays)
        mul(add(x, b), c) -> add(mul(x, c), b * c)

    and a per-channel mul or add of a foldable conv, conv_transpose or gemm result
    (as above) folds into its weight and bias like a batch norm, the add's fused
    activation moving to the op. These reassociate float arithmetic, in float64 and
    rounded once, as the batch-norm fold does.

    ```mlir
    %y = nn.conv %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
    %z = nn.batch_norm %y, %gamma, %beta, %mean, %var : (tensor<1x4x6x6xf32>, ...) -> ...
    // becomes
    %w = nn.constant dense<...> : tensor<4x3x3x3xf32>       // w * scale
    %beta = nn.constant dense<...> : tensor<4xf32>          // beta - mean * scale
    %z = nn.conv %x, %w, %beta : (...) -> tensor<1x4x6x6xf32>

    %c = nn.concat %a, %b {axis = 1} : (...) -> tensor<1x8x6x6xf32>
    %n = nn.batch_norm %c, %gamma, %beta, %mean, %var : (...) -> tensor<1x8x6x6xf32>
    // becomes
    %n_scale = nn.constant dense<...> : tensor<8x1x1xf32>
    %n_scaled = nn.mul %c, %n_scale : (tensor<1x8x6x6xf32>, tensor<8x1x1xf32>) -> ...
    %n_shift = nn.constant dense<...> : tensor<8x1x1xf32>
    %n = nn.add %n_scaled, %n_shift : (tensor<1x8x6x6xf32>, tensor<8x1x1xf32>) -> ...
    ```
    """

    name = "fold-batchnorm"

    lower_unfused: bool = option(
        True, "rewrite batch norms that cannot be folded as a per-channel mul and add"
    )
    chains: bool = option(
        True, "combine chains of constant scales and shifts, and fold them into convs"
    )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns: list[RewritePattern] = [FoldBatchNormPattern(self.lower_unfused)]
        if self.chains:
            patterns.append(FoldAffineChainPattern())
        # No DCE on the way: the pass erases what it replaces and leaves other code alone.
        applier = GreedyRewritePatternApplier(patterns, dce_enabled=False)
        PatternRewriteWalker(applier).rewrite_module(op)
        for batch_norm in op.walk():
            if isinstance(batch_norm, nn.BatchNormOp) and ChannelAffine.of(batch_norm) is None:
                emit(
                    Diagnostic(
                        "nn.batch_norm not folded: its parameters are not constants with data",
                        Location.of(batch_norm),
                        Severity.REMARK,
                    )
                )
