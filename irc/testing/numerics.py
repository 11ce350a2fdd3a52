"""Numerical checks of passes for tests: run the IR before and after, compare.

`apply_and_compare` is what a pass's numerical test calls: it applies a pipeline to a
copy of a module and checks, on seeded random inputs, that the interpreter gives the
same outputs before and after (within tolerance), returning the transformed module for
structural checks. The checking itself is `irc.numerics.NumericsChecker`, which also
serves `irc-opt --verify-each-numerics`.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from irc.ir.context import make_context
from irc.numerics import NumericalDivergence, NumericsChecker, random_function_inputs
from irc.passes import parse_pipeline

__all__ = ["apply_and_compare", "random_function_inputs"]


def apply_and_compare(
    module: ModuleOp,
    pipeline: str,
    *,
    seed: int = 0,
    rtol: float = 1e-4,
    atol: float = 1e-5,
) -> ModuleOp:
    """Apply `pipeline` (flat syntax, e.g. "fold-batchnorm,canonicalize") to a clone of
    `module`, assert that the outputs agree on seeded random inputs, and return the
    transformed clone.

    The outputs are compared once, after the whole pipeline; on a difference the
    assertion message names the first differing value and its location.
    """
    checker = NumericsChecker(module, seed=seed, rtol=rtol, atol=atol)
    after = module.clone()
    ctx = make_context()
    for module_pass in parse_pipeline(pipeline):
        module_pass.apply(ctx, after)
    after.verify()
    try:
        checker.check(after, pipeline)
    except NumericalDivergence as divergence:
        raise AssertionError(str(divergence)) from None
    return after
