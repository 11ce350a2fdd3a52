"""`fuse-activation`: fold an activation op into the op that produces its operand.

An `nn` producer that can carry an `activation` property (conv, conv_transpose, gemm,
matmul, add) absorbs the activation op that is the only user of its result. The
interpreter applies a fused activation with the same function as the standalone op,
so the rewrite is exact, bit for bit. When the producer already carries an
activation, the new one is absorbed only where the composition is again one
activation, exactly (see `compose`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from irc.dialects import nn
from irc.passes import PassOptionError, option
from irc.rewrite.natives import constraint, helper

RULE_FILE = "fuse-activation"
"""The shipped rule file (irc/rules/fuse-activation.rules) that ports the pattern."""

PRODUCERS: tuple[type[nn.NNOp], ...] = (
    nn.ConvOp,
    nn.ConvTransposeOp,
    nn.GemmOp,
    nn.MatMulOp,
    nn.AddOp,
)
"""The ops with an `activation` property: the ones an activation can be fused into."""


def is_non_negative(bound: float | None) -> bool:
    """Whether a clip bound is >= 0 and not -0.0.

    -0.0 is excluded because max(+0.0, -0.0) may give -0.0, which a relu would turn
    back into +0.0: the compositions in `compose` are exact only for bounds >= +0.0.
    """
    return bound is not None and bound >= 0 and math.copysign(1.0, bound) > 0


def _clip_activation(op: nn.NNOp) -> nn.ActivationAttr | None:
    props = op.props()
    low, high = props.float("min"), props.float("max")
    if low is not None and high is not None:
        return nn.ActivationAttr.make("clip", min=low, max=high)
    # max(x, -0.0) keeps -0.0 where a relu gives +0.0: only min = +0.0 is a relu.
    if high is None and low == 0 and is_non_negative(low):
        return nn.ActivationAttr.make("relu")
    # One bound other than min = +0.0 has no fused form: #nn.activation<clip> needs
    # both bounds, and infinite ones do not survive a textual round trip.
    return None


ACTIVATION_OPS: dict[type[nn.NNOp], Callable[[nn.NNOp], nn.ActivationAttr | None]] = {
    # nn.relu -> #nn.activation<relu>
    nn.ReluOp: lambda op: nn.ActivationAttr.make("relu"),
    # nn.clip {min = a, max = b} -> clip min = a, max = b; nn.clip {min = 0.0} -> relu
    nn.ClipOp: _clip_activation,
    # nn.leaky_relu {alpha = a} -> leaky_relu alpha = a
    nn.LeakyReluOp: lambda op: nn.ActivationAttr.make(
        "leaky_relu", alpha=op.props().float("alpha") or 0.0
    ),
    # nn.hard_swish -> hard_swish
    nn.HardSwishOp: lambda op: nn.ActivationAttr.make("hard_swish"),
    # nn.sigmoid -> sigmoid
    nn.SigmoidOp: lambda op: nn.ActivationAttr.make("sigmoid"),
}
"""Each activation op, and the fused activation that computes what it computes (None
when this op instance has none)."""


def compose(first: nn.ActivationAttr, then: nn.ActivationAttr) -> nn.ActivationAttr | None:
    """The one activation computing `then(first(x))` bit for bit, or None if there is none
    (or it is not one of the few exact cases below)."""
    first_bounds, then_bounds = first.named_values(), then.named_values()
    match first.kind.data, then.kind.data:
        # relu then relu = relu (max(max(x, 0), 0) = max(x, 0))
        case "relu", "relu":
            return first
        # relu then clip(a, b) = clip(a, b) for a >= 0 (max(max(x, 0), a) = max(x, a))
        case "relu", "clip" if is_non_negative(then_bounds["min"]):
            return then
        # clip(a, b) then relu = clip(a, b) for a, b >= 0 (the clip's result is >= 0)
        case "clip", "relu" if is_non_negative(first_bounds["min"]) and is_non_negative(
            first_bounds["max"]
        ):
            return first
    return None


@dataclass(frozen=True)
class FuseActivationPattern(RewritePattern):
    """act(producer(...)) -> producer(...) {activation = act}, when the producer's result
    has no other user; an existing activation is composed with act when that is exact."""

    kinds: frozenset[str]
    """The activation kinds that may be fused (#nn.activation kinds)."""
    producers: frozenset[str]
    """The names of the ops that may absorb an activation."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, nn.NNOp) or type(op) not in ACTIVATION_OPS:
            return
        to_activation = ACTIVATION_OPS[type(op)]
        activation = to_activation(op)
        if activation is None or activation.kind.data not in self.kinds:
            return
        value = op.operands[0]
        producer = value.owner
        if not isinstance(producer, nn.NNOp) or producer.name not in self.producers:
            return
        if not value.has_one_use() or op.results[0].type != value.type:
            return
        existing = producer.properties.get("activation")
        if existing is not None:
            assert isinstance(existing, nn.ActivationAttr)
            composed = compose(existing, activation)
            if composed is None or composed.kind.data not in self.kinds:
                return
            activation = composed
        producer.properties["activation"] = activation
        rewriter.notify_op_modified(producer)
        rewriter.replace(op, [], [value])


# --------------------------------------------------------------------------------------
# The natives of irc/rules/fuse-activation.rules, which ports `FuseActivationPattern`


@dataclass(frozen=True)
class FusionOptions:
    """What may be fused: the pass's options, read by the rules' natives."""

    kinds: frozenset[str] = frozenset(nn.ACTIVATIONS)
    producers: frozenset[str] = frozenset(op.name for op in PRODUCERS)


fusion_options: ContextVar[FusionOptions | None] = ContextVar("irc_fusion_options", default=None)
"""The options of the running `fuse-activation` (None: all kinds and producers)."""


def _fusion(producer: Operation, activation: nn.ActivationAttr) -> nn.ActivationAttr | None:
    options = fusion_options.get() or FusionOptions()
    if activation.kind.data not in options.kinds or producer.name not in options.producers:
        return None
    existing = producer.properties.get("activation")
    if existing is None:
        return activation
    assert isinstance(existing, nn.ActivationAttr)
    composed = compose(existing, activation)
    return composed if composed is not None and composed.kind.data in options.kinds else None


@constraint("may_fuse")
def may_fuse(producer: Operation, activation: nn.ActivationAttr | None) -> bool:
    """The options allow fusing the activation into the producer, and if the producer
    already has one, the two compose exactly."""
    return activation is not None and _fusion(producer, activation) is not None


@helper("fused_activation")
def fused_activation(producer: Operation, activation: nn.ActivationAttr) -> nn.ActivationAttr:
    """The producer's activation after fusing `activation` (composed if it had one)."""
    fused = _fusion(producer, activation)
    assert fused is not None, "may_fuse must hold before fused_activation is called"
    return fused


@helper("activation_of")
def activation_of(op: Operation) -> nn.ActivationAttr | None:
    """The fused form of an activation op (None if this op has none, as for a clip with
    a single bound other than min = +0.0)."""
    assert isinstance(op, nn.NNOp)
    return ACTIVATION_OPS[type(op)](op)


@dataclass(frozen=True)
class FuseActivationPass(ModulePass):
    """Fuse activation ops into the conv, gemm, matmul or add op that produces their operand.

    An `nn.relu`, `nn.clip`, `nn.leaky_relu`, `nn.hard_swish` or `nn.sigmoid` whose
    operand is the result of one of those ops becomes that op's `activation` property
    (see [Fused activations](nn-dialect.md#fused-activations)), if:

    - the producer's result has no other user (otherwise the unactivated value is
      still needed);
    - the activation's result type is the producer's (same element type);
    - the producer has no activation yet, or the two compose exactly into one:
      relu then relu is relu, relu then clip(a, b) with a >= 0 is clip(a, b), and
      clip(a, b) then relu with a, b >= 0 is clip(a, b) (a bound of -0.0 does not
      count as >= 0: relu turns -0.0 into +0.0); any other pair is left alone.

    A clip with both bounds fuses as `clip` (ReLU6 is `clip min = 0.0, max = 6.0`), a
    clip with only `min = 0.0` as `relu`; a clip with any other single bound is not
    fused, since the fused clip needs both bounds. The fused op keeps the producer's
    place and location. Fusion is exact: the interpreter gives bit-identical results.
    Restrict what is fused with `activations` (fused kinds: relu, clip, leaky_relu,
    hard_swish, sigmoid; when an activation is composed with an existing one, the
    kind of the result must be listed too) and `producers` (op names).

    ```mlir
    %y = nn.conv %x, %w, %b : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
    %r = nn.clip %y {max = 6.0, min = 0.0} : tensor<1x4x6x6xf32>
    ```

    becomes

    ```mlir
    %y = nn.conv %x, %w, %b {activation = #nn.activation<clip min = 0.0, max = 6.0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
    ```
    """

    name = "fuse-activation"

    activations: tuple[str, ...] = option(
        tuple(nn.ACTIVATIONS), "the activation kinds to fuse (a clip with only min = 0 is a relu)"
    )
    producers: tuple[str, ...] = option(
        tuple(op.name for op in PRODUCERS), "the ops that activations are fused into"
    )

    def __post_init__(self) -> None:
        _check_names("activation kind", self.activations, tuple(nn.ACTIVATIONS))
        _check_names("producer", self.producers, tuple(op.name for op in PRODUCERS))

    rules: bool = option(
        True,
        "apply irc/rules/fuse-activation.rules (false: the hand-written pattern it was "
        "ported from)",
    )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        options = FusionOptions(frozenset(self.activations), frozenset(self.producers))
        if self.rules:
            from irc.rewrite import load_rules

            patterns: list[RewritePattern] = [rule() for rule in load_rules(RULE_FILE)]
        else:
            patterns = [FuseActivationPattern(options.kinds, options.producers)]
        token = fusion_options.set(options)
        try:
            PatternRewriteWalker(GreedyRewritePatternApplier(patterns)).rewrite_module(op)
        finally:
            fusion_options.reset(token)


def _check_names(what: str, given: tuple[str, ...], known: tuple[str, ...]) -> None:
    for name in given:
        if name not in known:
            raise PassOptionError(f"unknown {what} '{name}'; expected one of {', '.join(known)}")
