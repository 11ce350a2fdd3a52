"""`irc-target`: list, show, check and tabulate NPU target descriptions.

    irc-target list                         # the presets, one line each
    irc-target show npu-demo                # every field, in human units (a target file)
    irc-target check my-npu.toml            # validate a target file
    irc-target support-table npu-demo       # the support table as Markdown

A target is a preset name or the path of a TOML target file (docs/targets.md). Errors
are printed as `file:line:col: error: message` with a hint; the exit status is 1 (2 for
a malformed command line).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from irc.tools.common import report, write_stdout

TOOL = "irc-target"


def build_parser() -> argparse.ArgumentParser:
    """The command line of irc-target."""
    parser = argparse.ArgumentParser(
        allow_abbrev=False,
        prog=TOOL,
        description="List, show, check and tabulate NPU target descriptions (docs/targets.md).",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands.add_parser("list", help="list the presets, one line each", allow_abbrev=False)
    for name, help_text in (
        ("show", "print every field of a target, in human units, as a target file"),
        ("check", "validate a target file; exit 1 with its diagnostics if it is invalid"),
        ("support-table", "print the target's support table as Markdown"),
    ):
        command = commands.add_parser(name, help=help_text, allow_abbrev=False)
        command.add_argument("target", metavar="NAME|FILE", help="a preset name or a .toml file")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run irc-target; returns the exit status."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exit_request:  # --help, or a malformed command line
        return exit_request.code if isinstance(exit_request.code, int) else 0

    from irc.diagnostics import IrcError
    from irc.targets import load_target, preset_names
    from irc.targets.render import summary, support_table_markdown, target_toml

    try:
        if args.command == "list":
            presets = [load_target(name, origin=TOOL) for name in preset_names()]
            width = max(len(target.name) for target in presets)
            write_stdout(
                "".join(f"{target.name:<{width}}  {target.description}\n" for target in presets)
            )
            return 0
        target = load_target(args.target, origin=TOOL)
        if args.command == "show":
            write_stdout(target_toml(target))
        elif args.command == "check":
            write_stdout(f"{args.target}: ok: {target.name}, {summary(target)}\n")
        else:
            write_stdout(support_table_markdown(target))
    except IrcError as failure:
        report(failure.diagnostics)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
