"""`fold-batchnorm`: fold inference batch normalization into the op that feeds it.

An inference `nn.batch_norm` with constant parameters is a per-channel affine map,
y = x * scale + shift with scale = gamma / sqrt(var + epsilon) and
shift = beta - mean * scale. When x is the result of a linear op with constant
weights (`nn.conv`, `nn.conv_transpose`, `nn.gemm`) that nothing else reads, the map
folds into that op's weights and bias; otherwise it becomes an explicit `nn.mul` and
`nn.add` by per-channel constants, which later passes fuse or fold further.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import LocationAttr, ModuleOp
from xdsl.ir import Operation, SSAValue
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
from irc.ir.weights import dtype_of
from irc.passes import option
from irc.transforms.fold_constants import constant_array

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


def _constant_like(array: np.ndarray, like: SSAValue, location_of: SSAValue) -> nn.ConstantOp:
    """A constant of `array` in `like`'s element type, named and located as the op
    that defines `location_of`, so folded weights keep their names."""
    dtype = dtype_of(nn.tensor_type(like).get_element_type())
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
        new_weight, new_bias = _folded_constants(producer, affine)
        old_weight = producer.operands[1]
        old_bias = producer.operands[2] if len(producer.operands) > 2 else None
        weight = _constant_like(new_weight, old_weight, old_weight)
        # Without a bias of its own, the producer gets the batch norm's shift as its bias.
        bias = _constant_like(new_bias, old_weight, op.bias if old_bias is None else old_bias)
        properties = dict(producer.properties)
        if isinstance(producer, nn.GemmOp):
            properties.pop("beta", None)
        folded = type(producer).build(
            [producer.operands[0], weight, bias],
            properties,
            [producer.result.type],
            location=producer.location,
        )
        folded.attributes.update(producer.attributes)
        folded.result.name_hint = op.result.name_hint or producer.result.name_hint
        replaced = [*producer.operands[1:], *op.operands[1:]]
        rewriter.replace(op, [weight, bias, folded], [folded.result])
        rewriter.erase(producer)
        _erase_if_unused(rewriter, replaced)

    # batch_norm(x) -> add(mul(x, scale), shift), per channel
    def lower(self, op: nn.BatchNormOp, affine: ChannelAffine, rewriter: PatternRewriter) -> None:
        rank = len(nn.tensor_type(op.input).get_shape())
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

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pattern = FoldBatchNormPattern(self.lower_unfused)
        # No DCE on the way: the pass erases what it replaces and leaves other code alone.
        applier = GreedyRewritePatternApplier([pattern], dce_enabled=False)
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
