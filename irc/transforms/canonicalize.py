"""`canonicalize`: apply every op's canonicalization patterns and folders to a fixpoint.

Ops declare their canonicalization patterns with xDSL's
`HasCanonicalizationPatternsTrait` and their folders with `HasFolder`; this pass
collects them per op and applies them greedily until nothing changes, erasing dead
ops on the way (as MLIR's greedy rewrite driver does). New canonicalizations belong
on the op's trait, not in this module.
"""

from __future__ import annotations

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
from xdsl.traits import HasCanonicalizationPatternsTrait
from xdsl.transforms.dead_code_elimination import region_dce

from irc.passes import option


@dataclass(frozen=True)
class CanonicalizationPatterns(RewritePattern):
    """Apply the canonicalization patterns that an op's traits declare.

    Patterns are named by their class name; `enabled` (if not empty) keeps only
    those, and `disabled` drops those.
    """

    enabled: frozenset[str] = frozenset()
    disabled: frozenset[str] = frozenset()

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        # Traits are filtered with isinstance, not op.get_traits_of_type: mypy rejects
        # an abstract class as its argument.
        patterns = [
            pattern
            for trait in op.traits
            if isinstance(trait, HasCanonicalizationPatternsTrait)
            for pattern in trait.get_patterns(type(op))
            if self.allows(type(pattern).__name__)
        ]
        if patterns:
            GreedyRewritePatternApplier(patterns).match_and_rewrite(op, rewriter)

    def allows(self, pattern_name: str) -> bool:
        """Whether the pattern filter lets the pattern with this class name run."""
        if self.enabled and pattern_name not in self.enabled:
            return False
        return pattern_name not in self.disabled


@dataclass(frozen=True)
class CanonicalizePass(ModulePass):
    """Simplify IR with each op's canonicalization patterns and folders, and remove dead ops.

    Patterns and folders run greedily until the IR stops changing; ops whose results
    are unused and that have no side effects are erased on the way, and dead code is
    eliminated region by region between sweeps. Use `enable-patterns` and
    `disable-patterns` (pattern class names) to test one canonicalization alone.

    Every `nn` op folds when its operands are constants (`FoldConstantPattern`). The
    other `nn` rules are written in the rule language, in irc/rules/canonicalize.rules
    (see [rewrite-rules.md](rewrite-rules.md)); `rules=false` applies instead the
    hand-written patterns they were ported from (irc/transforms/canonicalize_nn.py),
    which give the same IR. They compute exactly what they replace (but for the sign
    of x + 0.0 when x is -0.0): ops that return an operand unchanged go (identity,
    inference dropout, x * 1, x / 1, x ** 1, x + 0, x - 0 with a constant splat that
    does not broadcast x, pads by zeros, whole slices, one-input sum/max/min/concat,
    casts to the same type, ...); flatten, chains of reshape/squeeze/unsqueeze/flatten
    and transposes that move only size-1 axes become one `nn.reshape`; a transpose of
    a transpose is one transpose; a sum of two inputs is an add; a matmul by a constant
    matrix plus a constant bias is an `nn.gemm` (which adds the bias before rounding:
    within about one float32 ulp). `enable-patterns` and `disable-patterns` take rule
    names (or, with `rules=false`, pattern class names).

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
        (), "apply only the patterns with these class names (empty: all)"
    )
    disable_patterns: tuple[str, ...] = option(
        (), "do not apply the patterns with these class names"
    )
    rules: bool = option(
        True,
        "apply the nn rules of irc/rules/canonicalize.rules (false: the hand-written "
        "patterns they were ported from)",
    )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from irc.transforms.canonicalize_nn import use_rule_file

        patterns = CanonicalizationPatterns(
            frozenset(self.enable_patterns), frozenset(self.disable_patterns)
        )
        applier = GreedyRewritePatternApplier([patterns], ctx=ctx, folding_enabled=True)
        walker = PatternRewriteWalker(
            applier, walk_reverse=not self.top_down, post_walk_func=region_dce
        )
        token = use_rule_file.set(self.rules)
        try:
            walker.rewrite_module(op)
        finally:
            use_rule_file.reset(token)
