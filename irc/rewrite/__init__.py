"""Declarative rewrite rules: a small pattern language, compiled to xDSL patterns.

    rule fuse_conv_relu {
      match nn.relu($conv = nn.conv($x, $w, $b?) {activation = absent});
      where one_use($conv);
      replace nn.conv($x, $w, $b?) {...$conv, activation = #nn.activation<relu>};
    }

`load_rules(path)` parses and compiles a rule file into `RewritePattern` classes, and
`rule_patterns(path, **arguments)` gives their instances with the file's parameters
bound (a pass hands its options to the rules this way); `constraint` and `helper`
register Python functions that rules call by name. The grammar is
irc/rewrite/rules.lark; the reference is docs/rewrite-rules.md.
"""

from __future__ import annotations

import functools
from pathlib import Path

from xdsl.pattern_rewriter import RewritePattern

from irc.diagnostics import Location, error
from irc.rewrite.compiler import RulePattern, compile_rules
from irc.rewrite.natives import RuleContext, constraint, helper
from irc.rewrite.syntax import parse_rules

__all__ = [
    "RuleContext",
    "RulePattern",
    "constraint",
    "helper",
    "load_rules",
    "rule_patterns",
    "rules_from_text",
    "shipped_rule_file",
]

SHIPPED_RULES = Path(__file__).resolve().parent.parent / "rules"
"""The rule files that ship inside the package (irc/rules/*.rules)."""


def rules_from_text(text: str, filename: str = "<rules>") -> list[type[RulePattern]]:
    """Parse and compile rules from text (errors located in `filename`)."""
    return compile_rules(parse_rules(text, filename))


def shipped_rule_file(name: str) -> Path | None:
    """The path of a shipped rule file by name (`canonicalize` -> irc/rules/canonicalize.rules)."""
    path = SHIPPED_RULES / f"{name}.rules"
    return path if path.is_file() else None


def load_rules(path: Path | str) -> list[type[RulePattern]]:
    """Load a rule file by path, or a shipped one by name; compiled once per content."""
    file = Path(path)
    if not file.is_file():
        file = shipped_rule_file(str(path)) or file
    try:
        text = file.read_text()
    except (OSError, UnicodeDecodeError) as failure:
        names = ", ".join(sorted(p.stem for p in SHIPPED_RULES.glob("*.rules"))) or "none"
        raise error(
            "cannot read the rule file: "
            + (failure.strerror or str(failure) if isinstance(failure, OSError) else str(failure)),
            Location(file=str(path)),
            hint=f"give a path to a .rules file, or the name of a shipped one ({names})",
        ) from None
    return _compiled(str(file), text)


def rule_patterns(path: Path | str, **arguments: object) -> list[RewritePattern]:
    """The rules of a file (see `load_rules`) as patterns, in application order, each
    with the file's parameters bound to `arguments` (the defaults for those left out)."""
    return [rule(**arguments) for rule in load_rules(path)]


@functools.lru_cache(maxsize=64)  # bounded: a process may load many rule files
def _compiled(filename: str, text: str) -> list[type[RulePattern]]:
    return rules_from_text(text, filename)
