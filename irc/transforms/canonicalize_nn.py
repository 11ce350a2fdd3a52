"""The canonicalization patterns of `nn` ops, by op class.

`NNCanonicalization` (the trait every `nn` op carries) gives `canonicalize` the
constant folder plus the patterns this table lists for the op's class.
"""

from __future__ import annotations

from xdsl.ir import Operation
from xdsl.pattern_rewriter import RewritePattern

PATTERNS: dict[type[Operation], tuple[RewritePattern, ...]] = {}
"""Each op class's canonicalization patterns (beyond constant folding)."""


def patterns_for(op_type: type[Operation]) -> tuple[RewritePattern, ...]:
    """The canonicalization patterns of an op class."""
    return PATTERNS.get(op_type, ())
