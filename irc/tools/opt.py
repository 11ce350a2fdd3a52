"""`irc-opt`: parse IR, run a pass pipeline, print the result, as `mlir-opt` does.

    irc-opt model.mlir --pass-pipeline='builtin.module(canonicalize,cse)' -o out.mlir
    irc-opt model.mlir -p canonicalize,cse
    irc-opt --list-passes
    irc-opt tests.mlir --split-input-file --verify-diagnostics
    irc-opt model.mlir -p graph-opt --verify-each-numerics --numerics-seed 1
    irc-opt model.mlir -p partition --target=npu-demo

The flags have mlir-opt's names and behaviour (single-dash spellings such as
`-split-input-file` are accepted too). Errors in the input or the pipeline are
printed as `file:line:col: error: message` with exit status 1; a traceback means a
bug in irc. Output files are written only when everything succeeded.

`--target=NAME|FILE` loads a target description (a preset or a TOML file, see
docs/targets.md) once, before the input is read, and runs every pass with it as the
active target (`irc.targets.using_target`); a bad target is an error with exit status 1.

`--verify-each-numerics` checks with `irc.numerics.NumericsChecker` that every pass
keeps the outputs of `@main` on seeded random inputs, within `--numerics-atol` plus
`--numerics-rtol` times each tensor's largest |value| (the rule of
`irc.numerics.compare_arrays`), and fails naming the pass and the first value that
changed. A pass that is a named pipeline (it has a `pipeline()`
method, as `graph-opt` has) is run pass by pass, so that printing, timing and both
kinds of verification see each of its passes.

Start-up is kept fast: nothing beyond argparse is imported until a flag needs it,
and a pipeline imports only the passes it names.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.passes import ModulePass

    from irc.diagnostics import Diagnostic, IrcError, Location
    from irc.ir.io import PrintOptions
    from irc.numerics import NumericsChecker
    from irc.targets import Target

from irc.tools.common import (
    add_output_argument,
    add_weights_arguments,
    check_module_output,
    non_negative,
    report,
    run_interruptibly,
    tolerance,
    tool_error,
    weights_mode,
    write_stdout,
)

SPLIT_MARKER = "// -----"
"""The line that separates chunks with --split-input-file, in the input and the output."""

TOOL = "irc-opt"


# --------------------------------------------------------------------------------------
# Command line


class _UsageError(Exception):
    """A malformed command line (argparse's errors, raised instead of exiting)."""


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _UsageError(message)


def _parse_bool(text: str) -> bool:
    if text.lower() in ("true", "1", "on", "yes"):
        return True
    if text.lower() in ("false", "0", "off", "no"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got '{text}'")


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser of irc-opt."""
    parser = _ArgumentParser(
        allow_abbrev=False,
        prog=TOOL,
        description="Parse IR, run a pass pipeline on it and print the result (like mlir-opt).",
        epilog="Run `irc-opt --list-passes` for the passes and their options.",
    )
    parser.add_argument(
        "input",
        nargs="?",
        default="-",
        metavar="INPUT",
        help="the IR file to read ('-' or absent: standard input)",
    )
    add_output_argument(
        parser, "FILE", "write the result to FILE ('-', the default: standard output)"
    )

    passes = parser.add_argument_group("passes")
    passes.add_argument(
        "--pass-pipeline",
        metavar="PIPELINE",
        help="the pipeline to run, anchored: 'builtin.module(canonicalize,cse{...})'",
    )
    passes.add_argument(
        "-p",
        "--passes",
        metavar="PIPELINE",
        help="the pipeline to run, flat: 'canonicalize,cse'",
    )
    passes.add_argument(
        "--list-passes",
        action="store_true",
        help="list every pass with its summary and options, and exit",
    )
    passes.add_argument(
        "--target",
        metavar="NAME|FILE",
        help="the NPU target that passes compile for: a preset (`irc-target list`) or a "
        ".toml target file (docs/targets.md)",
    )
    passes.add_argument(
        "--verify-each",
        type=_parse_bool,
        default=True,
        metavar="BOOL",
        help="verify the IR after each pass (default: true; --verify-each=false to skip)",
    )

    numerics = parser.add_argument_group(
        "numerics",
        "run the interpreter on seeded random inputs before the first pass and after every "
        "pass, and fail naming the pass and the first value that differs",
    )
    numerics.add_argument(
        "--verify-each-numerics",
        action="store_true",
        help="check that every pass keeps the outputs of the entry function (@main, or the "
        "only function) within tolerance (needs the weights: not with elided constants)",
    )
    numerics.add_argument(
        "--numerics-seed",
        type=non_negative,
        default=0,
        metavar="N",
        help="seed of the random inputs (default: 0)",
    )
    numerics.add_argument(
        "--numerics-rtol",
        type=tolerance,
        default=1e-4,
        metavar="X",
        help="relative tolerance, of each tensor's largest |value|: values may differ by "
        "atol + rtol x max |value| (default: 1e-4)",
    )
    numerics.add_argument(
        "--numerics-atol",
        type=tolerance,
        default=1e-5,
        metavar="X",
        help="absolute tolerance (default: 1e-5)",
    )

    testing = parser.add_argument_group("testing")
    testing.add_argument(
        "--split-input-file",
        action="store_true",
        help=f"process each chunk between lines '{SPLIT_MARKER}' on its own, "
        f"and join the outputs with '{SPLIT_MARKER}'",
    )
    testing.add_argument(
        "--verify-diagnostics",
        action="store_true",
        help="check that the diagnostics are exactly those that the "
        "'// expected-error {{...}}' (and -warning, -note, -remark) comments expect",
    )
    testing.add_argument(
        "--allow-unregistered-dialect",
        action="store_true",
        help="accept ops of dialects that irc does not know",
    )

    printing = parser.add_argument_group("printing")
    printing.add_argument(
        "--mlir-print-ir-before-all",
        action="store_true",
        help="print the IR to stderr before every pass",
    )
    printing.add_argument(
        "--mlir-print-ir-after-all",
        action="store_true",
        help="print the IR to stderr after every pass",
    )
    printing.add_argument(
        "--mlir-print-ir-after-change",
        action="store_true",
        help="print the IR to stderr after every pass that changed it",
    )
    printing.add_argument(
        "--mlir-print-ir-after-failure",
        action="store_true",
        help="print the IR to stderr after a pass that failed or broke the IR",
    )
    printing.add_argument(
        "--mlir-timing",
        action="store_true",
        help="print the wall time of parsing, each pass, verification and output to stderr",
    )
    printing.add_argument(
        "--mlir-print-op-generic",
        action="store_true",
        help="print ops in the generic form",
    )
    printing.add_argument(
        "--mlir-print-debuginfo",
        action="store_true",
        help="print the location of every op",
    )
    add_weights_arguments(
        printing, "sidecar with -o FILE (resource with --split-input-file), else elide"
    )
    return parser


def _long_options(parser: argparse.ArgumentParser) -> set[str]:
    return {
        option
        for action in parser._actions
        for option in action.option_strings
        if option.startswith("--")
    }


def _normalize_argv(argv: list[str], long_options: set[str]) -> list[str]:
    """Accept mlir-opt's spellings: `-split-input-file` for `--split-input-file`,
    and a bare `--verify-each` (its value is only ever given with `=`)."""
    normalized: list[str] = []
    for index, argument in enumerate(argv):
        if argument == "--":
            return normalized + argv[index:]
        name = argument.split("=", 1)[0]
        if not name.startswith("--") and "-" + name in long_options:
            argument = "-" + argument
        if argument == "--verify-each":
            argument = "--verify-each=true"
        normalized.append(argument)
    return normalized


def main(argv: list[str] | None = None) -> int:
    """Run irc-opt with `argv` (default: the process's arguments); returns the exit status."""
    started = time.perf_counter()
    parser = build_parser()
    arguments = sys.argv[1:] if argv is None else list(argv)
    try:
        args = parser.parse_args(_normalize_argv(arguments, _long_options(parser)))
    except _UsageError as failure:
        parser.print_usage(sys.stderr)
        print(f"{TOOL}: error: {failure}", file=sys.stderr)
        return 2
    except SystemExit as exit_request:  # --help
        return exit_request.code if isinstance(exit_request.code, int) else 0

    from irc.diagnostics import IrcError

    try:
        if args.list_passes:
            from irc.passes import describe_passes

            sys.stdout.write(describe_passes())
            return 0
        return run_interruptibly(TOOL, _Driver(args, started).run)
    except IrcError as failure:
        report(failure.diagnostics)
        return 1


def _tool_error(message: str, hint: str | None = None) -> IrcError:
    """An error about the command line, reported as `irc-opt: error: ...`."""
    return tool_error(TOOL, message, hint)


# --------------------------------------------------------------------------------------
# Timing


class _Timings:
    """Wall time per step, reported like `mlir-opt --mlir-timing`."""

    def __init__(self, started: float) -> None:
        self.started = started
        self.rows: dict[object, tuple[str, float]] = {}

    @contextmanager
    def measure(self, name: str, key: object = None) -> Iterator[None]:
        """Add the time spent in the `with` block to the row `key` (default: `name`)."""
        key = name if key is None else key
        start = time.perf_counter()
        try:
            yield
        finally:
            _, seconds = self.rows.get(key, (name, 0.0))
            self.rows[key] = (name, seconds + time.perf_counter() - start)

    def report(self) -> str:
        """The execution time report: one row per step, then Rest and Total."""
        total = time.perf_counter() - self.started
        rows = list(self.rows.values())
        rows.append(("Rest", max(total - sum(seconds for _, seconds in rows), 0.0)))
        rows.append(("Total", total))
        rule = "===" + "-" * 73 + "==="
        lines = [
            rule,
            " " * 25 + "... Execution time report ...",
            rule,
            f"  Total Execution Time: {total:.4f} seconds",
            "",
            "  ----Wall Time----  ----Name----",
        ]
        for name, seconds in rows:
            share = 100.0 * seconds / total if total > 0 else 0.0
            lines.append(f"  {seconds:8.4f} ({share:5.1f}%)  {name}")
        return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------
# The driver


@dataclass(frozen=True)
class _Step:
    """One pass that the driver runs, with the named pipeline it belongs to, if any.

    A pass that is a named pipeline (it has a `pipeline()` method returning its
    passes, as `graph-opt` does) is run pass by pass, as mlir-opt runs a registered
    pass pipeline: printing, timing and verification (--verify-each,
    --verify-each-numerics) then apply to each of its passes, and a failure names
    the pass inside the pipeline.
    """

    pass_: ModulePass
    within: str | None = None
    """The name of the named pipeline this pass was expanded from."""

    def describe(self) -> str:
        """`'name'`, or `'name' (in 'pipeline')` for a pass of a named pipeline."""
        inside = f" (in '{self.within}')" if self.within else ""
        return f"'{self.pass_.name}'{inside}"


def _expand(pass_: ModulePass, within: str | None = None) -> list[_Step]:
    """The steps that run `pass_`: itself, or the passes of a named pipeline."""
    sub_passes = getattr(pass_, "pipeline", None)
    if not callable(sub_passes):
        return [_Step(pass_, within)]
    return [step for sub_pass in sub_passes() for step in _expand(sub_pass, pass_.name)]


@dataclass
class _ChunkResult:
    """What processing one chunk of the input produced."""

    module: ModuleOp | None
    """The transformed module, or None if the chunk failed."""
    ok: bool
    """False if the chunk makes irc-opt fail (an error, or a failed diagnostic check)."""


class _Driver:
    """One run of irc-opt: read, split, parse, verify, transform, print."""

    def __init__(self, args: argparse.Namespace, started: float) -> None:
        from irc.ir.context import make_context
        from irc.ir.io import PrintOptions
        from irc.ir.weights import WeightsMode

        self.args = args
        self.timings = _Timings(started)
        self.filename = "<stdin>" if args.input == "-" else args.input
        self.pipeline = self._parse_pipeline()
        self.target = self._load_target()
        self.print_options = self._output_print_options()
        self.dump_options = PrintOptions(
            generic=args.mlir_print_op_generic,
            debuginfo=args.mlir_print_debuginfo,
            weights=WeightsMode.ELIDE,
            inline_limit=args.weights_inline_limit,
        )
        self.ctx = make_context(allow_unregistered_dialect=args.allow_unregistered_dialect)

    def _parse_pipeline(self) -> list[_Step]:
        if self.args.pass_pipeline is not None and self.args.passes is not None:
            raise _tool_error(
                "--pass-pipeline and -p cannot be used together",
                hint="write the whole pipeline in one of them",
            )
        if self.args.pass_pipeline is None and self.args.passes is None:
            return []
        from irc.passes import parse_pipeline

        with self.timings.measure("Pipeline parsing"):
            if self.args.pass_pipeline is not None:
                passes = parse_pipeline(self.args.pass_pipeline, require_anchor=True)
            else:
                passes = parse_pipeline(self.args.passes)
            return [step for pass_ in passes for step in _expand(pass_)]

    def _load_target(self) -> Target | None:
        """The target of --target, loaded once for every chunk and pass."""
        if self.args.target is None:
            return None
        from irc.targets import load_target

        with self.timings.measure("Target loading"):
            return load_target(self.args.target, origin=TOOL)

    def _output_print_options(self) -> PrintOptions:
        from irc.ir.io import PrintOptions

        mode = weights_mode(
            self.args.weights,
            TOOL,
            to_file=self.args.output != "-",
            split=self.args.split_input_file,
        )
        return PrintOptions(
            generic=self.args.mlir_print_op_generic,
            debuginfo=self.args.mlir_print_debuginfo,
            weights=mode,
            inline_limit=self.args.weights_inline_limit,
        )

    # ---- the run ---------------------------------------------------------------------------

    def run(self) -> int:
        from irc.ir.io import split_input

        if self.args.output != "-":
            check_module_output(
                TOOL, self.args.output, [self.args.input], self.print_options.weights
            )
        text = self._read_input()
        chunks = split_input(text) if self.args.split_input_file else [text]
        with self._using_target():
            results = [self._process_chunk(chunk) for chunk in chunks]
        ok = all(result.ok for result in results)
        with self.timings.measure("Output"):
            self._write_output(results, ok)
        if self.args.mlir_timing:
            sys.stderr.write(self.timings.report())
        return 0 if ok else 1

    def _using_target(self) -> AbstractContextManager[object]:
        """Make --target the active target of the passes (irc.targets.active_target)."""
        if self.target is None:
            return nullcontext()
        from irc.targets import using_target

        return using_target(self.target)

    def _read_input(self) -> str:
        if self.args.input == "-":
            return sys.stdin.read()
        from irc.diagnostics import Location, error

        path = Path(self.args.input)
        where = Location(file=str(path))
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise error(f"cannot open input file '{path}': no such file", where) from None
        except UnicodeDecodeError:
            raise error(f"input file '{path}' is not UTF-8 text", where) from None
        except OSError as failure:
            raise error(f"cannot read input file '{path}': {failure.strerror}", where) from None

    def _process_chunk(self, text: str) -> _ChunkResult:
        """Parse, verify and transform one chunk; report or check its diagnostics."""
        from irc.diagnostics import IrcError, Severity, collect_diagnostics

        module: ModuleOp | None = None
        with collect_diagnostics() as diagnostics:
            try:
                module = self._parse(text)
                self._verify(module, after=None)
                numerics = self._start_numerics(module)
                for position, step in enumerate(self.pipeline):
                    self._run_pass(position, step, module, numerics)
            except IrcError as failure:
                diagnostics.extend(failure.diagnostics)
                module = None
        failed = any(diagnostic.severity is Severity.ERROR for diagnostic in diagnostics)
        if failed:
            module = None
        if self.args.verify_diagnostics:
            problems = DiagnosticVerifier(text, self.filename).check(diagnostics)
            report(problems)
            return _ChunkResult(module, ok=not problems)
        report(diagnostics)
        return _ChunkResult(module, ok=not failed)

    def _parse(self, text: str) -> ModuleOp:
        from irc.ir.io import parse_module

        weights_dir = None if self.args.input == "-" else Path(self.args.input).parent
        with self.timings.measure("Parser"):
            return parse_module(text, self.ctx, self.filename, weights_dir=weights_dir)

    def _start_numerics(self, module: ModuleOp) -> NumericsChecker | None:
        """With --verify-each-numerics: run the input IR as the reference of the checks."""
        if not self.args.verify_each_numerics:
            return None
        from irc.numerics import NumericsChecker

        with self.timings.measure("Numerics verification"):
            return NumericsChecker(
                module,
                seed=self.args.numerics_seed,
                rtol=self.args.numerics_rtol,
                atol=self.args.numerics_atol,
            )

    def _verify(self, module: ModuleOp, after: _Step | None) -> None:
        from irc.diagnostics import IrcError
        from irc.ir.io import verify_diagnostics

        with self.timings.measure("Verifier"):
            diagnostics = list(verify_diagnostics(module))
        if not diagnostics:
            return
        if after is not None:
            blame = f"the IR verified before pass {after.describe()}, which broke it"
            first = diagnostics[0]
            first.hint = f"{first.hint}; {blame}" if first.hint else blame
        raise IrcError(diagnostics)

    def _run_pass(
        self, position: int, step: _Step, module: ModuleOp, numerics: NumericsChecker | None
    ) -> None:
        from irc.diagnostics import IrcError
        from irc.passes import display_name

        args = self.args
        pass_ = step.pass_
        title = display_name(type(pass_))
        if args.mlir_print_ir_before_all:
            self._dump(f"IR Dump Before {title} ({pass_.name})", module)
        before = module.clone() if args.mlir_print_ir_after_change else None
        try:
            with self.timings.measure(title, key=("pass", position)):
                self._apply(step, module)
            if args.verify_each:
                self._verify(module, after=step)
            if numerics is not None:
                self._check_numerics(step, module, numerics)
        except IrcError:
            if args.mlir_print_ir_after_failure:
                self._dump(f"IR Dump After {title} Failed ({pass_.name})", module)
            raise
        changed = before is None or not before.is_structurally_equivalent(module)
        if (args.mlir_print_ir_after_all or args.mlir_print_ir_after_change) and changed:
            self._dump(f"IR Dump After {title} ({pass_.name})", module)

    def _check_numerics(self, step: _Step, module: ModuleOp, numerics: NumericsChecker) -> None:
        """--verify-each-numerics after one pass: an IrcError naming it if it diverged."""
        from irc.diagnostics import Diagnostic, IrcError, Severity

        try:
            with self.timings.measure("Numerics verification"):
                numerics.check(module, step.pass_.name)
        except IrcError as failure:
            if step.within is not None:
                failure.diagnostics[0].notes.append(
                    Diagnostic(
                        f"pass '{step.pass_.name}' ran as part of the pipeline '{step.within}'",
                        severity=Severity.NOTE,
                    )
                )
            raise

    def _apply(self, step: _Step, module: ModuleOp) -> None:
        """Run a pass; xDSL's diagnostic exceptions become diagnostics naming it."""
        from xdsl.utils.exceptions import DiagnosticException

        from irc.diagnostics import Diagnostic, IrcError, Location

        pass_ = step.pass_
        try:
            pass_.apply(self.ctx, module)
        except DiagnosticException as failure:  # also PassFailedException, VerifyException
            message = str(failure).strip() or type(failure).__name__
            where = Location.of(module)
            if where.line is None:
                where = Location(file=self.filename)
            raise IrcError(Diagnostic(f"pass {step.describe()} failed: {message}", where)) from None

    def _dump(self, title: str, module: ModuleOp) -> None:
        from irc.ir.io import module_to_string

        sys.stderr.write(f"// -----// {title} //----- //\n")
        sys.stderr.write(module_to_string(module, self.dump_options))
        sys.stderr.write("\n")
        sys.stderr.flush()

    # ---- output ----------------------------------------------------------------------------

    def _write_output(self, results: list[_ChunkResult], ok: bool) -> None:
        from irc.fileio import StagedOutputs
        from irc.ir.io import write_module

        if self.args.output == "-":
            write_stdout(self._render(results))
            return
        if not ok:
            return  # never leave a file that looks like a successful result
        with StagedOutputs() as staged:
            only = results[0].module if len(results) == 1 else None
            if only is not None and not self.args.split_input_file:
                write_module(only, Path(self.args.output), self.print_options, staged)
            else:
                staged.stage_text(self.args.output, self._render(results))

    def _render(self, results: list[_ChunkResult]) -> str:
        """Every chunk's module printed, joined by split markers as mlir-opt does."""
        from irc.ir.io import module_to_string

        texts = [
            module_to_string(result.module, self.print_options) if result.module is not None else ""
            for result in results
        ]
        return f"{SPLIT_MARKER}\n".join(texts)


# --------------------------------------------------------------------------------------
# --verify-diagnostics

_DESIGNATOR = re.compile(
    r"expected-(?P<severity>error|warning|note|remark)(?P<regex>-re)?"
    r"\s*(?:@(?P<offset>[+-]\d+|above|below|unknown))?\s*\{\{(?P<message>.*)\}\}\s*$"
)
_ATTEMPT = re.compile(r"expected-(error|warning|note|remark)(-re)?\s*(@\S*)?\s*\{\{")
"""The start of an expectation: if the whole line does not match `_DESIGNATOR`, it is
malformed (reported, rather than silently ignored as a test that cannot fail)."""


@dataclass
class Expectation:
    """One `expected-<severity> {{message}}` comment of the input."""

    severity: str
    line: int | None
    """The line the diagnostic must point at; None for `@unknown` (no location)."""
    text: str
    matches: Callable[[str], bool]
    written_at: Location
    met: bool = False


class DiagnosticVerifier:
    """Checks diagnostics against the `expected-*` comments of one chunk, as MLIR does.

    Comments are `// expected-error {{message}}` (same line), `@+N`/`@-N` (N lines
    below/above), `@above`/`@below` (the nearest line that is not itself an
    expectation), `@unknown` (a diagnostic without location), with `error`,
    `warning`, `note` or `remark`. The message matches if it contains the text;
    with `expected-error-re`, parts in `{{...}}` inside the text are regexes.
    """

    def __init__(self, text: str, filename: str) -> None:
        from irc.diagnostics import Diagnostic, Location

        self.filename = filename
        self.expectations: list[Expectation] = []
        self.problems: list[Diagnostic] = []
        below: list[Expectation] = []
        last_plain_line = 0
        for number, line in enumerate(text.splitlines(), start=1):
            found = _DESIGNATOR.search(line)
            if found is None:
                if mention := _ATTEMPT.search(line):
                    where = Location(filename, number, mention.start() + 1)
                    self.problems.append(
                        Diagnostic(
                            f"malformed 'expected-{mention.group(1)}' comment",
                            where,
                            hint="write it as 'expected-error {{message}}', optionally with "
                            "@+N, @-N, @above, @below or @unknown before the braces",
                        )
                    )
                    continue
                for expectation in below:
                    expectation.line = number
                below.clear()
                last_plain_line = number
                continue
            where = Location(filename, number, found.start() + 1)
            matcher = self._matcher(found.group("message"), bool(found.group("regex")), where)
            if matcher is None:
                continue
            offset = found.group("offset")
            expectation = Expectation(
                found.group("severity"), number, found.group("message"), matcher, where
            )
            if offset == "unknown":
                expectation.line = None
            elif offset == "above":
                expectation.line = last_plain_line
            elif offset == "below":
                below.append(expectation)
            elif offset is not None:
                expectation.line = number + int(offset)
            self.expectations.append(expectation)
        for expectation in below:
            self.problems.append(
                Diagnostic("'@below' has no line below it", expectation.written_at)
            )
            self.expectations.remove(expectation)

    def _matcher(self, text: str, is_regex: bool, where: Location) -> Callable[[str], bool] | None:
        from irc.diagnostics import Diagnostic

        if not is_regex:
            return lambda message: text in message
        # Literal text with `{{regex}}` parts, as in MLIR's expected-error-re.
        pieces = re.split(r"\{\{(.*?)\}\}", text)
        pattern = "".join(
            piece if index % 2 else re.escape(piece) for index, piece in enumerate(pieces)
        )
        try:
            compiled = re.compile(pattern)
        except re.error as failure:
            self.problems.append(Diagnostic(f"invalid regex in expectation: {failure}", where))
            return None
        return lambda message: compiled.search(message) is not None

    def check(self, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
        """The problems: malformed comments, unexpected diagnostics, unmet expectations."""
        from irc.diagnostics import Diagnostic, Location

        problems = list(self.problems)
        for diagnostic in self._flatten(diagnostics):
            if not self._match(diagnostic):
                where = diagnostic.location
                if where.line is None:
                    where = Location(file=self.filename)
                problems.append(
                    Diagnostic(f"unexpected {diagnostic.severity}: {diagnostic.message}", where)
                )
        for expectation in self.expectations:
            if not expectation.met:
                problems.append(
                    Diagnostic(
                        f'expected {expectation.severity} "{expectation.text}" was not produced',
                        expectation.written_at,
                    )
                )
        return problems

    def _flatten(self, diagnostics: list[Diagnostic]) -> Iterator[Diagnostic]:
        """Each diagnostic, then its notes (located at the diagnostic if they have no line)."""
        from irc.diagnostics import Diagnostic

        for diagnostic in diagnostics:
            yield diagnostic
            for note in self._flatten(diagnostic.notes):
                where = note.location if note.location.line is not None else diagnostic.location
                yield Diagnostic(note.message, where, note.severity)

    def _match(self, diagnostic: Diagnostic) -> bool:
        where = diagnostic.location
        if where.line is not None and where.file not in (None, self.filename):
            return False
        for expectation in self.expectations:
            if (
                not expectation.met
                and expectation.severity == diagnostic.severity
                and expectation.line == where.line
                and expectation.matches(diagnostic.message)
            ):
                expectation.met = True
                return True
        return False


if __name__ == "__main__":
    sys.exit(main())
