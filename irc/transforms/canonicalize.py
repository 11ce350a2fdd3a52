"""`canonicalize`: apply every op's canonicalization patterns and folders to a fixpoint.

`nn` ops are canonicalized by constant folding (`FoldConstantPattern`, the pattern of
`fold-constants`), then by the rules of irc/rules/canonicalize.rules that match them;
ops of other dialects by the patterns their `HasCanonicalizationPatternsTrait`
declares and by their folders (`HasFolder`). This pass collects them per op class
and applies them greedily until nothing changes, erasing dead ops on the way (as
MLIR's greedy rewrite driver does). The `nn` dialect does not name its patterns: they
belong to this pass, so that `irc.dialects` depends on no pass. A new `nn`
canonicalization is a rule in irc/rules/canonicalize.rules.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

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
from xdsl.traits import HasCanonicalizationPatternsTrait
from xdsl.transforms.dead_code_elimination import region_dce

from irc.dialects import nn
from irc.passes import option
from irc.transforms.fold_constants import FoldConstantPattern

RULE_FILE = "canonicalize"
"""The shipped rule file (irc/rules/canonicalize.rules) of the `nn` canonicalizations."""


@functools.cache
def nn_rules() -> dict[type[Operation], tuple[RewritePattern, ...]]:
    """The rules of irc/rules/canonicalize.rules by the op class they match, each
    class's in the order they are tried (compiled once per process)."""
    from irc.rewrite import load_rules

    by_root: dict[type[Operation], list[RewritePattern]] = {}
    for rule in load_rules(RULE_FILE):
        for root in rule.root_classes:
            by_root.setdefault(root, []).append(rule())
    return {root: tuple(patterns) for root, patterns in by_root.items()}


def patterns_of(op_class: type[Operation]) -> tuple[RewritePattern, ...]:
    """The canonicalization patterns of an op class, in the order they are tried: for
    an `nn` op, constant folding then its rules; then those its traits declare."""
    own: tuple[RewritePattern, ...] = ()
    if issubclass(op_class, nn.NNOp):
        own = (FoldConstantPattern(), *nn_rules().get(op_class, ()))
    # Traits are filtered with isinstance, not get_traits_of_type: mypy rejects an
    # abstract class as its argument.
    declared = tuple(
        pattern
        for trait in op_class.traits
        if isinstance(trait, HasCanonicalizationPatternsTrait)
        for pattern in trait.get_patterns(op_class)
    )
    return own + declared


@dataclass(frozen=True)
class CanonicalizationPatterns(RewritePattern):
    """Apply the canonicalization patterns of each op (see `patterns_of`).

    Patterns are named by their class name, which for a rule is the rule's name;
    `enabled` (if not empty) keeps only those, and `disabled` drops those.
    """

    enabled: frozenset[str] = frozenset()
    disabled: frozenset[str] = frozenset()
    _appliers: dict[type[Operation], GreedyRewritePatternApplier | None] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    """The allowed patterns of each op class met so far (None: there are none)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        op_class = type(op)
        if op_class not in self._appliers:
            patterns = [p for p in patterns_of(op_class) if self.allows(type(p).__name__)]
            self._appliers[op_class] = GreedyRewritePatternApplier(patterns) if patterns else None
        applier = self._appliers[op_class]
        if applier is not None:
            applier.match_and_rewrite(op, rewriter)

    def allows(self, pattern_name: str) -> bool:
        """Whether the pattern filter lets the pattern with this name run."""
        if self.enabled and pattern_name not in self.enabled:
            return False
        return pattern_name not in self.disabled


@dataclass(frozen=True)
class CanonicalizePass(ModulePass):
    """Simplify IR with each op's canonicalization patterns and folders, and remove dead ops.

    Patterns and folders run greedily until the IR stops changing; ops whose results
    are unused and that have no side effects are erased on the way, and dead code is
    eliminated region by region between sweeps. Use `enable-patterns` and
    `disable-patterns` (rule names) to test one canonicalization alone.

    Every `nn` op folds when its operands are constants (`FoldConstantPattern`). The
    other `nn` canonicalizations are the rules of irc/rules/canonicalize.rules (see
    [rewrite-rules.md](rewrite-rules.md)). They compute exactly what they replace (but
    for the sign of x + 0.0 when x is -0.0): ops that return an operand unchanged go
    (identity, inference dropout, x * 1, x / 1, x ** 1, x + 0, x - 0 with a constant
    splat that does not broadcast x, pads by zeros, whole slices, one-input
    sum/max/min/concat, casts to the same type, ...); flatten, chains of
    reshape/squeeze/unsqueeze/flatten and transposes that move only size-1 axes become
    one `nn.reshape`; a transpose of a transpose is one transpose; a sum of two inputs
    is an add; a matmul by a constant matrix plus a constant bias is an `nn.gemm`
    (which adds the bias before rounding: within about one float32 ulp). An op that a
    rule builds takes the location of the op it stands for. `enable-patterns` and
    `disable-patterns` take rule names, `FoldConstantPattern` for constant folding,
    and the class names of other dialects' patterns.

    ```mlir
    %d = nn.dropout %x : tensor<1x8xf32>
    %r = nn.reshape %d : (tensor<1x8xf32>) -> tensor<8xf32>
    %s = nn.unsqueeze %r {axes = [0]} : (tensor<8xf32>) -> tensor<1x8xf32>
    %y = nn.matmul %s, %w : (tensor<1x8xf32>, tensor<8x4xf32>) -> tensor<1x4xf32>
    %z = nn.add %y, %b : (tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
    // becomes
    %z = nn.gemm %x, %w, %b : (tensor<1x8xf32>, tensor<8x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
    ```
    """

    name = "canonicalize"

    top_down: bool = option(True, "visit ops from first to last (false: from last to first)")
    enable_patterns: tuple[str, ...] = option(
        (), "apply only the patterns with these names (rule names; empty: all)"
    )
    disable_patterns: tuple[str, ...] = option((), "do not apply the patterns with these names")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = CanonicalizationPatterns(
            frozenset(self.enable_patterns), frozenset(self.disable_patterns)
        )
        applier = GreedyRewritePatternApplier([patterns], ctx=ctx, folding_enabled=True)
        walker = PatternRewriteWalker(
            applier, walk_reverse=not self.top_down, post_walk_func=region_dce
        )
        walker.rewrite_module(op)
