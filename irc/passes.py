"""The pass registry: every irc pass by name, and the parser of pass pipelines.

`PASSES` is the one table of passes. `irc-opt --list-passes`, the pipeline parser
and the generated docs/passes.md all read it, so a pass is added by writing its
module and adding one line here. Pass modules are imported lazily: a pipeline loads
only the passes it names.

A pass is an xDSL `ModulePass` dataclass, declared in its own module under
`irc/transforms/`. Its class docstring's first line is its summary; its options are
dataclass fields declared with `option(default, help)`:

    @dataclass(frozen=True)
    class FoldBatchNormPass(ModulePass):
        '''Fold nn.batch_norm into the preceding nn.conv.'''

        name = "fold-batchnorm"
        epsilon: float = option(1e-5, "the epsilon used when none is given")

Pipelines are written as in MLIR, anchored or flat:

    builtin.module(canonicalize{top-down=false}, cse)
    canonicalize{top-down=false},cse

An option is `key=value` (or a bare `key` for a boolean that is true); options are
separated by spaces; a list is written `key=a,b,c`. Every error in a pipeline is an
`IrcError` located in the pipeline text (`<pass-pipeline>:1:COL`) with a hint.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import inspect
import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from irc.diagnostics import IrcError, Location, error

if TYPE_CHECKING:
    from xdsl.passes import ModulePass

PASSES: dict[str, tuple[str, str]] = {
    "apply-rules": ("irc.transforms.apply_rules", "ApplyRulesPass"),
    "cancel-transposes": ("irc.transforms.cancel_transposes", "CancelTransposesPass"),
    "canonicalize": ("irc.transforms.canonicalize", "CanonicalizePass"),
    "convert-layout": ("irc.transforms.convert_layout", "ConvertLayoutPass"),
    "cse": ("irc.transforms.cse", "CSEPass"),
    "dce": ("irc.transforms.dce", "DCEPass"),
    "fold-batchnorm": ("irc.transforms.fold_batchnorm", "FoldBatchNormPass"),
    "fold-constants": ("irc.transforms.fold_constants", "FoldConstantsPass"),
    "fuse-activation": ("irc.transforms.fuse_activation", "FuseActivationPass"),
    "fuse-norms": ("irc.transforms.fuse_norms", "FuseNormsPass"),
    "fuse-pad": ("irc.transforms.fuse_pad", "FusePadPass"),
    "graph-opt": ("irc.transforms.graph_opt", "GraphOptPass"),
    "lower-to-npu": ("irc.transforms.lower_to_npu", "LowerToNpuPass"),
    "lower-to-qnn": ("irc.transforms.lower_to_qnn", "LowerToQNNPass"),
    "lower-to-tile": ("irc.transforms.lower_to_tile", "LowerToTilePass"),
    "partition": ("irc.transforms.partition", "PartitionPass"),
    "plan-ddr": ("irc.transforms.plan_ddr", "PlanDDRPass"),
    "plan-tiles": ("irc.transforms.plan_tiles", "PlanTilesPass"),
    "prepare-quantize": ("irc.transforms.prepare_quantize", "PrepareQuantizePass"),
    "quantize": ("irc.transforms.quantize", "QuantizePass"),
}
"""Every pass: its pipeline name -> (module, class name). Keep it sorted by name."""

PIPELINE_FILE = "<pass-pipeline>"
"""The file name that locations in a pipeline string report."""

MODULE_ANCHOR = "builtin.module"
"""The only op that irc's passes are anchored on: every pass is a module pass."""


# --------------------------------------------------------------------------------------
# Declaring passes


def option(default: Any, help: str) -> Any:
    """Declare a pass option: a dataclass field with a default and its help text.

    The help text is what `irc-opt --list-passes` and docs/passes.md show.
    """
    return dataclasses.field(default=default, metadata={"help": help})


class PassOptionError(ValueError):
    """Raise from a pass's `__post_init__` when its option values do not fit together.

    The pipeline parser reports it as a diagnostic at the pass in the pipeline text.
    """


@dataclass(frozen=True)
class OptionInfo:
    """One option of a pass, as the user writes and reads it."""

    name: str
    """The option's name in pipelines, kebab-case (`top-down`)."""
    type_name: str
    """What value it takes (`bool`, `int`, `string`, `string,...`, `a|b`)."""
    default: str | None
    """The default value as it would be written in a pipeline, or None if required."""
    help: str


@dataclass(frozen=True)
class PassInfo:
    """A registered pass: its name, summary, longer description and options."""

    name: str
    summary: str
    description: str
    options: tuple[OptionInfo, ...]
    pass_class: type[ModulePass]


def get_pass_class(name: str) -> type[ModulePass]:
    """The class of the pass registered as `name`, importing its module.

    An unknown name is an `IrcError` whose hint is the closest registered name.
    """
    if name not in PASSES:
        raise error(f"unknown pass '{name}'", hint=_unknown_pass_hint(name))
    module_name, class_name = PASSES[name]
    pass_class = getattr(importlib.import_module(module_name), class_name)
    # A mismatch is a bug in the table, not a user error.
    assert pass_class.name == name, f"{module_name}.{class_name}.name is {pass_class.name!r}"
    return pass_class


def display_name(pass_class: type[ModulePass]) -> str:
    """The name MLIR prints in IR dumps and timings: the class name without `Pass`."""
    class_name = pass_class.__name__
    return class_name.removesuffix("Pass") or class_name


def describe_pass(pass_class: type[ModulePass]) -> PassInfo:
    """Everything the registry knows about a pass class, read from its declaration."""
    # The summary is the docstring's first paragraph, which may span lines.
    doc = inspect.cleandoc(pass_class.__doc__ or "")
    summary, _, rest = doc.partition("\n\n")
    hints = typing.get_type_hints(pass_class)
    options = tuple(
        OptionInfo(
            name=field.name.replace("_", "-"),
            type_name=_type_name(hints[field.name]),
            default=_default_text(field),
            help=field.metadata.get("help", ""),
        )
        for field in dataclasses.fields(pass_class)
        if field.init
    )
    return PassInfo(
        name=pass_class.name,
        summary=" ".join(summary.split()),
        description=rest.strip(),
        options=options,
        pass_class=pass_class,
    )


def list_passes() -> list[PassInfo]:
    """Every registered pass, sorted by name (imports every pass module)."""
    return [describe_pass(get_pass_class(name)) for name in sorted(PASSES)]


def describe_passes() -> str:
    """The text of `irc-opt --list-passes`, laid out as `mlir-opt --list-passes`."""
    lines = ["Available Passes:"]
    for info in list_passes():
        lines.append(f"  --{info.name:<38} -   {info.summary}")
        for opt in info.options:
            flag = f"--{opt.name}=<{opt.type_name}>"
            default = f" (default: {opt.default})" if opt.default else ""
            lines.append(f"    {flag:<38} - {opt.help}{default}")
    return "\n".join(lines) + "\n"


def pass_reference_markdown() -> str:
    """The pass reference page (docs/passes.md), as Markdown."""
    lines = [
        "# Pass reference",
        "",
        "Generated by `python -m irc.docgen` from the pass registry (irc/passes.py);",
        "do not edit by hand. Run a pass with `irc-opt -p NAME{option=value} file.mlir`",
        "or `irc-opt --pass-pipeline='builtin.module(NAME{option=value})' file.mlir`.",
        "",
    ]
    for info in list_passes():
        module_name, class_name = PASSES[info.name]
        lines += [f"## `{info.name}`", "", info.summary, ""]
        if info.description:
            lines += [info.description, ""]
        lines += [f"Implemented by `{class_name}` in `{module_name}`.", ""]
        if info.options:
            lines += ["| option | type | default | description |", "|---|---|---|---|"]
            for opt in info.options:
                default = {None: "(required)", "": "(empty)"}.get(opt.default, f"`{opt.default}`")
                cells = (f"`{opt.name}`", f"`{opt.type_name}`", default, opt.help)
                # A `|` inside a cell (as in `nhwc|nchw`) would split it.
                lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _unknown_pass_hint(name: str) -> str:
    close = difflib.get_close_matches(name, PASSES, n=1)
    listing = "run `irc-opt --list-passes` to see every pass"
    return f"did you mean '{close[0]}'? ({listing})" if close else listing


def _type_name(hint: Any) -> str:
    origin = typing.get_origin(hint)
    arguments = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_name(arg) for arg in arguments if arg is not type(None))
    if origin is Literal:
        return "|".join(str(arg) for arg in arguments)
    if origin is tuple:
        return f"{_type_name(arguments[0])},..."
    return {bool: "bool", int: "int", float: "float", str: "string"}.get(hint, str(hint))


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(_value_text(item) for item in value)
    if value is None:
        return "none"
    return str(value)


def _default_text(field: dataclasses.Field) -> str | None:
    if field.default is not dataclasses.MISSING:
        return _value_text(field.default)
    if field.default_factory is not dataclasses.MISSING:
        return _value_text(field.default_factory())
    return None


# --------------------------------------------------------------------------------------
# Printing pipelines


def pass_text(module_pass: ModulePass) -> str:
    """A pass as a pipeline writes it, every option spelt out (as `mlir-opt
    --dump-pass-pipeline` does) but those left empty, in declaration order:
    `plan-tiles{target=npu-demo align-channels=true}`. Written out, the pipeline means
    the same when a default changes."""
    written = []
    for field in dataclasses.fields(module_pass):
        if not field.init:
            continue
        value = getattr(module_pass, field.name)
        if value in ("", ()):
            continue  # unset: the pass's own choice (a target given otherwise, no file)
        text = _value_text(value)
        if isinstance(value, str) and any(c in text for c in " {},\"'"):
            quote = "'" if '"' in text else '"'
            text = f"{quote}{text}{quote}"
        written.append(f"{field.name.replace('_', '-')}={text}")
    name = type(module_pass).name
    return f"{name}{{{' '.join(written)}}}" if written else name


def pipeline_text(passes: Sequence[ModulePass]) -> str:
    """Passes as an anchored pipeline, `builtin.module(p1,p2{opt=v})`, which
    `parse_pipeline` reads back as the same passes."""
    return f"{MODULE_ANCHOR}({','.join(pass_text(p) for p in passes)})"


# --------------------------------------------------------------------------------------
# Parsing pipelines


def parse_pipeline(text: str, *, require_anchor: bool = False) -> list[ModulePass]:
    """Parse a pass pipeline into pass instances, in the order they run.

    Accepts MLIR's anchored form `builtin.module(p1, p2{opt=v})` (anchors may nest)
    and the flat form `p1,p2{opt=v}`; with `require_anchor` (for --pass-pipeline),
    only the anchored form. Raises an `IrcError` located in `text` on any error.
    """
    return _PipelineParser(text).parse(require_anchor)


@dataclass
class _Option:
    """One `key=value` of a pass in the pipeline text, with where it was written."""

    key: str
    key_at: int
    value: str | None
    value_at: int


class _PipelineParser:
    """A recursive-descent parser of pipeline text, tracking columns for errors."""

    NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    # ---- helpers -------------------------------------------------------------------------

    def error(self, message: str, at: int | None = None, hint: str | None = None) -> IrcError:
        column = (self.pos if at is None else at) + 1
        return error(message, Location(file=PIPELINE_FILE, line=1, col=column), hint)

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def describe_next(self) -> str:
        return f"'{self.peek()}'" if self.peek() else "the end of the pipeline"

    def skip_spaces(self) -> None:
        while self.peek().isspace():
            self.pos += 1

    def starts_with_anchor(self) -> bool:
        """Whether the text at the current position is `op-name(`."""
        start = self.pos
        self.read_name()
        self.skip_spaces()
        anchored = self.peek() == "("
        self.pos = start
        return anchored

    def read_name(self) -> str:
        start = self.pos
        while self.peek() and self.peek() in self.NAME_CHARS:
            self.pos += 1
        return self.text[start : self.pos]

    # ---- grammar -------------------------------------------------------------------------

    def parse(self, require_anchor: bool) -> list[ModulePass]:
        self.skip_spaces()
        if not self.peek():
            return []
        if require_anchor and not self.starts_with_anchor():
            raise self.error(
                "a --pass-pipeline must be anchored on the module",
                hint=f"write it as '{MODULE_ANCHOR}({self.text.strip()})', or use -p for a flat list",
            )
        passes = self.parse_list()
        self.skip_spaces()
        if self.peek():
            raise self.error(f"expected ',' between passes, found {self.describe_next()}")
        return passes

    def parse_list(self) -> list[ModulePass]:
        """element (',' element)*"""
        passes = self.parse_element()
        self.skip_spaces()
        while self.peek() == ",":
            self.pos += 1
            passes += self.parse_element()
            self.skip_spaces()
        return passes

    def parse_element(self) -> list[ModulePass]:
        """anchor '(' list? ')' | pass-name options?"""
        self.skip_spaces()
        start = self.pos
        name = self.read_name()
        if not name:
            raise self.error(
                f"expected a pass name, found {self.describe_next()}",
                hint="a pipeline is a comma-separated list such as 'canonicalize,cse'",
            )
        self.skip_spaces()
        if self.peek() == "(":
            return self.parse_anchored(name, start)
        if "." in name:
            raise self.error(
                f"expected '(' after the anchor '{name}'",
                hint=f"write '{MODULE_ANCHOR}(pass1,pass2)'",
            )
        if name not in PASSES:
            raise self.error(f"unknown pass '{name}'", at=start, hint=_unknown_pass_hint(name))
        options = self.parse_options(name) if self.peek() == "{" else []
        return [_instantiate(get_pass_class(name), options, start, self)]

    def parse_anchored(self, anchor: str, start: int) -> list[ModulePass]:
        if anchor != MODULE_ANCHOR:
            raise self.error(
                f"cannot anchor passes on '{anchor}': irc's passes are module passes",
                at=start,
                hint=f"anchor them on the module: '{MODULE_ANCHOR}(...)'",
            )
        self.pos += 1  # '('
        self.skip_spaces()
        passes = [] if self.peek() == ")" else self.parse_list()
        self.skip_spaces()
        if self.peek() != ")":
            raise self.error(
                f"expected ',' or ')' in '{anchor}(...)', found {self.describe_next()}"
            )
        self.pos += 1
        return passes

    def parse_options(self, pass_name: str) -> list[_Option]:
        """'{' (key ('=' value)?)* '}' with options separated by spaces."""
        opening = self.pos
        self.pos += 1
        options: list[_Option] = []
        while True:
            self.skip_spaces()
            if self.peek() == "}":
                self.pos += 1
                return options
            if not self.peek():
                raise self.error(f"missing '}}' to close the options of '{pass_name}'", at=opening)
            key_at = self.pos
            key = self.read_name()
            if not key:
                raise self.error(
                    f"expected an option name, found {self.describe_next()}",
                    hint="options are written as {name=value other=value}",
                )
            value, value_at = None, key_at
            if self.peek() == "=":
                self.pos += 1
                value_at = self.pos
                value = self.read_value(pass_name, opening)
            if self.peek() and not self.peek().isspace() and self.peek() != "}":
                raise self.error(
                    f"expected a space or '}}' after option '{key}', found {self.describe_next()}"
                )
            options.append(_Option(key, key_at, value, value_at))

    def read_value(self, pass_name: str, opening: int) -> str:
        """Text up to a space or the closing '}', keeping quoted and braced parts whole."""
        start = self.pos
        depth = 0
        while self.peek():
            char = self.peek()
            if char in "\"'":
                end = self.text.find(char, self.pos + 1)
                if end < 0:
                    raise self.error("unterminated string in an option value")
                self.pos = end + 1
                continue
            if char == "{":
                depth += 1
            elif char == "}":
                if depth == 0:
                    break
                depth -= 1
            elif char.isspace() and depth == 0:
                break
            self.pos += 1
        if not self.peek():
            raise self.error(f"missing '}}' to close the options of '{pass_name}'", at=opening)
        return self.text[start : self.pos]


def _instantiate(
    pass_class: type[ModulePass], options: list[_Option], at: int, parser: _PipelineParser
) -> ModulePass:
    """Build a pass from its options, converting each value to its field's type."""
    info = describe_pass(pass_class)
    fields = {field.name: field for field in dataclasses.fields(pass_class) if field.init}
    hints = typing.get_type_hints(pass_class)
    known = ", ".join(opt.name for opt in info.options)
    options_hint = (
        f"options of '{pass_class.name}': {known}"
        if known
        else f"'{pass_class.name}' has no options"
    )
    values: dict[str, Any] = {}
    for opt in options:
        field_name = opt.key.replace("-", "_")
        if field_name not in fields:
            raise parser.error(
                f"'{pass_class.name}' has no option '{opt.key}'", at=opt.key_at, hint=options_hint
            )
        if field_name in values:
            raise parser.error(f"option '{opt.key}' is given twice", at=opt.key_at)
        try:
            values[field_name] = _convert(opt.value, hints[field_name])
        except ValueError as failure:
            raise parser.error(
                f"invalid value for option '{opt.key}' of '{pass_class.name}': {failure}",
                at=opt.value_at,
                hint=f"'{opt.key}' takes a value of type <{_type_name(hints[field_name])}>",
            ) from None
    missing = [
        name.replace("_", "-")
        for name, field in fields.items()
        if name not in values and _default_text(field) is None
    ]
    if missing:
        raise parser.error(
            f"'{pass_class.name}' requires option '{missing[0]}'", at=at, hint=options_hint
        )
    try:
        return pass_class(**values)
    except PassOptionError as failure:
        raise parser.error(f"invalid options for '{pass_class.name}': {failure}", at=at) from None


_TRUE = frozenset({"true", "1", "on", "yes"})
_FALSE = frozenset({"false", "0", "off", "no"})


def _convert(text: str | None, hint: Any) -> Any:
    """Convert option text to a value of the type `hint`; ValueError says what is wrong."""
    origin = typing.get_origin(hint)
    arguments = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if (text is None or text.lower() == "none") and type(None) in arguments:
            return None
        failures = []
        for argument in arguments:
            if argument is type(None):
                continue
            try:
                return _convert(text, argument)
            except ValueError as failure:
                failures.append(str(failure))
        raise ValueError("; ".join(failures))
    if hint is bool:
        if text is None or text.lower() in _TRUE:
            return True
        if text.lower() in _FALSE:
            return False
        raise ValueError(f"expected true or false, got '{text}'")
    if text is None:
        raise ValueError("a value is required (write option=value)")
    if origin is tuple:
        return tuple(_convert(item, arguments[0]) for item in _split_list(text) if item)
    if origin is Literal:
        value = _unquote(text)
        if value not in arguments:
            raise ValueError(f"expected one of {', '.join(map(str, arguments))}, got '{value}'")
        return value
    if hint is int:
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"expected an integer, got '{text}'") from None
    if hint is float:
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"expected a number, got '{text}'") from None
    if hint is str:
        return _unquote(text)
    raise TypeError(f"pass options of type {hint} are not supported")  # a bug in the pass


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


def _split_list(text: str) -> list[str]:
    """Split at commas outside quotes and braces."""
    items, start, depth, quote = [], 0, 0, ""
    for index, char in enumerate(text):
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == "," and depth == 0:
            items.append(text[start:index])
            start = index + 1
    items.append(text[start:])
    return items
