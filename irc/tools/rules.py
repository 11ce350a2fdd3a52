"""`irc-rules`: check rule files and show what they compile to.

    irc-rules my.rules                  # parse and compile; list parameters and rules
    irc-rules my.rules --print-python   # and print each rule's generated code
    irc-rules canonicalize              # a rule file shipped with irc, by name

Errors are printed as `file:line:col: error: message` with a hint, exit status 1.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from irc.tools.common import report, tool_error

TOOL = "irc-rules"


def build_parser() -> argparse.ArgumentParser:
    """The command line of irc-rules."""
    parser = argparse.ArgumentParser(
        allow_abbrev=False, prog=TOOL, description="Check and compile rewrite-rule files."
    )
    parser.add_argument(
        "files", nargs="+", metavar="FILE", help="rule files, or shipped rule names"
    )
    parser.add_argument(
        "--print-python", action="store_true", help="print the Python each rule compiles to"
    )
    parser.add_argument(
        "--natives",
        action="append",
        default=[],
        metavar="MODULE",
        help="import a Python module that registers natives first (repeatable)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run irc-rules; returns the exit status."""
    args = build_parser().parse_args(argv)
    from irc.diagnostics import IrcError
    from irc.rewrite import load_rules

    try:
        for module in args.natives:
            try:
                importlib.import_module(module)
            except ImportError as failure:
                raise tool_error(
                    TOOL, f"cannot import natives module '{module}': {failure}"
                ) from None
        for file in args.files:
            patterns = load_rules(file)
            print(f"{file}: {len(patterns)} rule{'s' if len(patterns) != 1 else ''}")
            for parameter in patterns[0].parameters if patterns else ():
                default = f" = {parameter.default!r}" if parameter.has_default else ""
                print(f"  param {parameter.name}{default} at {parameter.at}")
            for pattern in patterns:
                print(f"  {pattern.rule_name} (benefit {pattern.benefit}) at {pattern.location}")
                if args.print_python:
                    print("    " + pattern.source.replace("\n", "\n    ").rstrip())
    except IrcError as failure:
        report(failure.diagnostics)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
