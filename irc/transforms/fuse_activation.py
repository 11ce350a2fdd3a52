"""`fuse-activation`: fold an activation op into the op that produces its operand.

An `nn` producer that can carry an `activation` property (conv, conv_transpose, gemm,
matmul, add) absorbs the activation op that is the only user of its result. The
interpreter applies a fused activation with the same function as the standalone op,
so the rewrite is exact, bit for bit. When the producer already carries an
activation, the new one is absorbed only where the composition is again one
activation, exactly (see `compose`).

The rewrite is the rule of irc/rules/fuse-activation.rules; this module holds what
the rule language cannot say, the natives the rule calls (the fused form of an
activation op, and whether the pass's options allow a fusion and the composition is
exact), and the pass, which gives the rule file its options as parameters.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker

from irc.dialects import nn
from irc.passes import PassOptionError, option
from irc.rewrite.natives import constraint, helper

RULE_FILE = "fuse-activation"
"""The shipped rule file (irc/rules/fuse-activation.rules) that holds the rewrite."""

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


# --------------------------------------------------------------------------------------
# The natives of irc/rules/fuse-activation.rules; `kinds` and `producers` are the
# pass's options, which the rule file receives as its parameters


def _fusion(
    producer: Operation, activation: nn.ActivationAttr, kinds: Collection[str]
) -> nn.ActivationAttr | None:
    existing = producer.properties.get("activation")
    if existing is None:
        return activation
    assert isinstance(existing, nn.ActivationAttr)
    composed = compose(existing, activation)
    return composed if composed is not None and composed.kind.data in kinds else None


@constraint("may_fuse")
def may_fuse(
    producer: Operation,
    activation: nn.ActivationAttr | None,
    kinds: Collection[str],
    producers: Collection[str],
) -> bool:
    """The activation's kind is one of `kinds` and the producer's name one of
    `producers`, and if the producer already has an activation, the two compose
    exactly into one of `kinds`."""
    if activation is None or activation.kind.data not in kinds or producer.name not in producers:
        return False
    return _fusion(producer, activation, kinds) is not None


@helper("fused_activation")
def fused_activation(
    producer: Operation, activation: nn.ActivationAttr, kinds: Collection[str]
) -> nn.ActivationAttr:
    """The producer's activation after fusing `activation` (composed if it had one)."""
    fused = _fusion(producer, activation, kinds)
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
    kind of the result must be listed too) and `producers` (op names). The rewrite is
    the rule of irc/rules/fuse-activation.rules, which receives both options as its
    parameters (see [rewrite-rules.md](rewrite-rules.md#parameters)).

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

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from irc.rewrite import rule_patterns

        patterns = rule_patterns(
            RULE_FILE, activations=frozenset(self.activations), producers=frozenset(self.producers)
        )
        PatternRewriteWalker(GreedyRewritePatternApplier(patterns)).rewrite_module(op)


def _check_names(what: str, given: tuple[str, ...], known: tuple[str, ...]) -> None:
    for name in given:
        if name not in known:
            raise PassOptionError(f"unknown {what} '{name}'; expected one of {', '.join(known)}")
