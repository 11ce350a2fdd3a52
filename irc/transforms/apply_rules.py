"""`apply-rules`: apply the rules of rule files (irc's pattern language) to a fixpoint."""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker

from irc.passes import PassOptionError, option


@dataclass(frozen=True)
class ApplyRulesPass(ModulePass):
    """Apply the rewrite rules of rule files greedily until nothing changes.

    `file` names .rules files by path, or shipped ones by name (e.g. `canonicalize`
    for irc/rules/canonicalize.rules). Rules are compiled to xDSL patterns when the file
    is first loaded; higher `benefit` rules are tried first. Dead ops are erased on the
    way. `natives` imports Python modules that register the native constraints and
    helpers the rules call. See docs/rewrite-rules.md.

    Example, with a file `identity.rules` holding
    `rule drop_identity { match nn.identity($x); replace $x; }`:

        // irc-opt -p 'apply-rules{file=identity.rules}'
        %y = nn.identity %x : tensor<4xf32>      // before
        %z = nn.relu %y : tensor<4xf32>
        %z = nn.relu %x : tensor<4xf32>          // after
    """

    name = "apply-rules"

    file: tuple[str, ...] = option((), "rule files (paths, or names of shipped rule files)")
    rules: tuple[str, ...] = option((), "apply only the rules with these names (empty: all)")
    natives: tuple[str, ...] = option((), "Python modules to import first (they register natives)")

    def __post_init__(self) -> None:
        if not self.file:
            raise PassOptionError(
                "give the rule files: file=PATH (a .rules file or a shipped name)"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from irc.diagnostics import Location, error
        from irc.rewrite import load_rules

        for module in self.natives:
            try:
                importlib.import_module(module)
            except ImportError as failure:
                raise error(
                    f"cannot import natives module '{module}': {failure}",
                    Location(file=self.name),
                    hint="natives=MODULE must be importable (on PYTHONPATH)",
                ) from None
        patterns = [pattern for path in self.file for pattern in load_rules(path)]
        if self.rules:
            known = {pattern.rule_name for pattern in patterns}
            unknown = [name for name in self.rules if name not in known]
            if unknown:
                raise error(
                    f"no rule named {', '.join(map(repr, unknown))} in {', '.join(self.file)}",
                    Location(file=self.file[0]),
                    hint=f"the rules: {', '.join(sorted(known))}",
                )
            patterns = [pattern for pattern in patterns if pattern.rule_name in self.rules]
        applier = GreedyRewritePatternApplier([pattern() for pattern in patterns], ctx=ctx)
        PatternRewriteWalker(applier).rewrite_module(op)
