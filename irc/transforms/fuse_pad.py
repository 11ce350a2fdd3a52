"""`fuse-pad`: fold a zero `nn.pad` into the padding of the conv or pooling after it.

Exporters (TensorFlow's SAME padding, explicit `ZeroPad2d` layers) write spatial
padding as a separate Pad node; a separate pad costs a full copy of the feature map,
while the consumer's own `pads` cost nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import BoolAttr, DenseArrayBase, ModuleOp, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.utils.exceptions import VerifyException

from irc.dialects import nn
from irc.dialects.base import Props, tensor_type

PadConsumer = nn.ConvOp | nn.AveragePoolOp | nn.MaxPoolOp
"""The ops whose input padding a pad folds into."""


def spatial_zero_pads(pad: nn.PadOp, channels_last: bool) -> list[int] | None:
    """A pad's amounts on the spatial axes, in a conv's `pads` order
    ([begin..., end...]), if it pads with zeros only and only spatially; else None.

    The spatial axes are 2.. (channels first) or 1..rank-2 (channels last).
    """
    props = pad.props()
    if props.str("mode") != "constant" or props.float("value") != 0.0:
        return None
    amounts = props.ints("pads") or []
    rank = len(amounts) // 2
    begins, ends = amounts[:rank], amounts[rank:]
    if any(amount < 0 for amount in amounts):
        return None  # a negative pad crops, which a consumer's pads cannot express
    spatial = range(1, rank - 1) if channels_last else range(2, rank)
    batch_and_channels = [axis for axis in range(rank) if axis not in spatial]
    if any(begins[axis] or ends[axis] for axis in batch_and_channels):
        return None
    return [begins[axis] for axis in spatial] + [ends[axis] for axis in spatial]


def is_non_negative(value: SSAValue) -> bool:
    """Whether `value` is non-negative by construction (the op that makes it clamps)."""
    owner = value.owner
    if isinstance(owner, nn.ReluOp | nn.SigmoidOp | nn.AbsOp):
        return True
    if isinstance(owner, nn.ClipOp):
        low = owner.props().float("min")
        return low is not None and low >= 0.0
    activation = owner.properties.get("activation") if isinstance(owner, nn.NNOp) else None
    if isinstance(activation, nn.ActivationAttr):
        if activation.kind.data == "clip":
            return activation.named_values()["min"] >= 0.0
        return activation.kind.data in ("relu", "sigmoid")
    return False


def every_window_sees_input(
    sizes: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    out_sizes: Sequence[int],
) -> bool:
    """Whether every pooling window has a tap on the input, not only on padding.

    Max pooling ignores its padding, so it equals pooling over zero-padded data only
    where a window also holds some (non-negative) input; dilated windows can skip
    over a small input entirely. Windows are products of per-axis tap sets, so it
    suffices that each axis has an input tap in every output position.
    """
    spatial = len(sizes)
    for axis in range(spatial):
        for position in range(out_sizes[axis]):
            start = position * strides[axis] - pads[axis]
            taps = (start + tap * dilations[axis] for tap in range(kernel[axis]))
            if not any(0 <= tap < sizes[axis] for tap in taps):
                return False
    return True


# Each rule says whether a consumer can absorb zero padding of its input, and with
# which property changes: None refuses, a dict (possibly empty) accepts.
AbsorbRule = Callable[[PadConsumer, nn.PadOp, list[int]], dict[str, Attribute] | None]


def _conv_absorbs(op: PadConsumer, pad: nn.PadOp, pads: list[int]) -> dict[str, Attribute] | None:
    # A conv's padding is zeros: always the same.
    return {}


def _average_pool_absorbs(
    op: PadConsumer, pad: nn.PadOp, pads: list[int]
) -> dict[str, Attribute] | None:
    # The padded zeros count in the divisor; so must the pool's own padding then.
    props = op.props()
    if props.bool("count_include_pad"):
        return {}
    if any(props.ints("pads") or []):
        return None  # its own padding is excluded from the divisor, the pad's is not
    return {"count_include_pad": BoolAttr.from_bool(True)}


def _max_pool_absorbs(
    op: PadConsumer, pad: nn.PadOp, pads: list[int]
) -> dict[str, Attribute] | None:
    # Max pooling skips its padding; skipping a zero changes nothing only when every
    # window has a non-negative input value.
    if not is_non_negative(pad.input):
        return None
    props = op.props()
    shape = list(tensor_type(pad.input).get_shape())
    result_shape = list(tensor_type(op.result).get_shape())
    channels_last = props.str("layout") == "nhwc"
    spatial = slice(1, -1) if channels_last else slice(2, None)
    kernel = props.ints("kernel_shape") or []
    rank = len(kernel)
    if not every_window_sees_input(
        shape[spatial],
        kernel,
        props.ints("strides") or [1] * rank,
        pads,
        props.ints("dilations") or [1] * rank,
        result_shape[spatial],
    ):
        return None
    return {}


ABSORB_RULES: dict[type[PadConsumer], AbsorbRule] = {
    nn.ConvOp: _conv_absorbs,
    nn.AveragePoolOp: _average_pool_absorbs,
    nn.MaxPoolOp: _max_pool_absorbs,
}
"""Which consumers absorb a zero pad, and on what condition."""


@dataclass
class FusePadPattern(RewritePattern):
    """Fold a zero spatial pad into the `pads` of the conv or pooling that reads it."""

    # conv(pad(x, p)) -> conv(x) {pads = pads + p}
    # average_pool(pad(x, p)) -> average_pool(x) {pads = pads + p, count_include_pad}
    # max_pool(pad(x >= 0, p)) -> max_pool(x) {pads = pads + p}
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, PadConsumer):
            return
        rule = ABSORB_RULES[type(op)]
        pad = op.input.owner
        if not isinstance(pad, nn.PadOp):
            return
        props = op.props()
        pad_amounts = spatial_zero_pads(pad, props.str("layout") == "nhwc")
        if pad_amounts is None:
            return
        own_pads = props.ints("pads") or [0] * len(pad_amounts)
        pads = [own + extra for own, extra in zip(own_pads, pad_amounts, strict=True)]
        changes = rule(op, pad, pads)
        if changes is None:
            return
        properties = {**op.properties, **changes, "pads": DenseArrayBase.from_list(i64, pads)}
        operands = [pad.input, *op.operands[1:]]
        try:
            # Pooling pads must stay smaller than the window, and with ceil_mode the
            # output size depends on where the padding is: both are checked here.
            inferred = type(op).infer_types(
                [tensor_type(value) for value in operands], Props(type(op), properties)
            )
        except VerifyException:
            return
        if inferred != [op.result.type]:
            return
        fused = type(op).build(operands, properties, inferred, location=op.location)
        fused.attributes.update(op.attributes)
        rewriter.replace(op, fused)
        if not pad.result.uses:
            rewriter.erase(pad)


@dataclass(frozen=True)
class FusePadPass(ModulePass):
    """Fold a zero nn.pad into the padding of the conv or pooling that reads it.

    An `nn.pad` in constant mode with value 0, no negative amounts and nothing on
    the batch and channel axes (axes 0 and 1, or 0 and the last for a consumer
    with `layout = "nhwc"`) adds its amounts to the `pads` of an `nn.conv`,
    `nn.average_pool` or `nn.max_pool` that reads it as its input:

    - conv: always (a conv pads with zeros);
    - average_pool: if it has `count_include_pad = true`, or has no padding of its
      own (it then gets `count_include_pad = true`, so the zeros still count);
    - max_pool: if the padded value is non-negative by construction (made by
      relu, sigmoid, abs, clip with min >= 0, or an op with such a fused
      activation) and every window still covers some input, since max pooling
      ignores its padding where the pad's zeros could win.

    Pooling pads must stay smaller than the window and the result shape must not
    change (ceil_mode); otherwise the pad stays. Each consumer absorbs the pad on
    its own: a pad read by several ops is erased once none of them needs it.

    ```mlir
    %p = nn.pad %x {pads = [0, 0, 1, 1, 0, 0, 1, 1]} : (tensor<1x3x8x8xf32>) -> tensor<1x3x10x10xf32>
    %y = nn.conv %p, %w : (tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
    // becomes
    %y = nn.conv %x, %w {pads = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
    ```
    """

    name = "fuse-pad"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # No DCE on the way: the pass erases the pads it empties and leaves other code.
        applier = GreedyRewritePatternApplier([FusePadPattern()], dce_enabled=False)
        PatternRewriteWalker(applier).rewrite_module(op)
