"""The rule files shipped in irc/rules/, as their passes apply them.

Each rule of irc/rules/canonicalize.rules and irc/rules/fuse-activation.rules is
checked by its pass's lit cases (FileCheck checks the rewritten IR, and in the LOC
cases of tests/filecheck/dialects/nn/canonicalize.mlir the location of every op a
rule builds), by numerics before and after the pass on those cases, the light models
and the pytorch cases (tests/test_canonicalize_nn.py, tests/test_fuse_activation.py),
and here: every rule must fire on its pass's lit cases, since a rule that none of them
makes fire is checked by none of them; and the rewritten IR keeps every op at a
location of the input (weights and layers keep their names).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.pattern_rewriter import PatternRewriter

from irc.ir.context import make_context
from irc.ir.io import parse_module, split_input
from irc.passes import parse_pipeline
from irc.rewrite import RulePattern, load_rules

FILECHECK = Path(__file__).resolve().parent / "filecheck"

LIT_CASES = {
    # rule file (and the pass that applies it): the lit files that check its rewrites
    "canonicalize": ("dialects/nn/canonicalize.mlir", "transforms/canonicalize.mlir"),
    "fuse-activation": ("transforms/fuse-activation.mlir",),
}


def count_firings(rule: type[RulePattern], fired: Counter[str], monkeypatch) -> None:
    """Make every instance of the compiled rule count in `fired` each time it rewrites."""
    match_and_rewrite = rule.match_and_rewrite

    def counting(self: RulePattern, op, rewriter: PatternRewriter) -> None:
        # The applier stops at the first pattern that acts: nothing has acted yet here.
        match_and_rewrite(self, op, rewriter)
        if rewriter.has_done_action:
            fired[self.rule_name] += 1

    monkeypatch.setattr(rule, "match_and_rewrite", counting)


def locations(module: ModuleOp) -> set[str]:
    return {str(op.location) for op in module.walk()}


@pytest.mark.parametrize("rule_file", LIT_CASES)
def test_every_rule_fires_on_its_lit_cases(rule_file: str, monkeypatch) -> None:
    rules = load_rules(rule_file)
    fired: Counter[str] = Counter()
    for rule in rules:
        count_firings(rule, fired, monkeypatch)
    for lit_file in LIT_CASES[rule_file]:
        path = FILECHECK / lit_file
        for index, chunk in enumerate(split_input(path.read_text())):
            module = parse_module(chunk, make_context(), str(path))
            before = locations(module)
            for module_pass in parse_pipeline(rule_file):
                module_pass.apply(make_context(), module)
            module.verify()
            assert locations(module) <= before, f"{lit_file}#{index}: an op has a new location"
    never = [rule.rule_name for rule in rules if not fired[rule.rule_name]]
    assert not never, f"no lit case of {', '.join(LIT_CASES[rule_file])} fires {never}"
