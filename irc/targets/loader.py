"""Load and validate target files: TOML in, a `Target` in base units out.

`load_target(spec)` takes a preset name (irc/targets/presets/<name>.toml) or the path
of a TOML file. The text is parsed with the standard library's `tomllib`, then every
table and key is checked against the format declared in irc/targets/schema.py:
required keys are present, no key is unknown (a typo is reported with the closest
known key), every value has the right TOML type and a sensible value, and the support
table names only nn ops and their limits. All the problems of a file are reported
together, each as one diagnostic at the `file:line:col` of the offending key
(irc/targets/positions.py finds keys in the text, since tomllib keeps no positions)
with a hint. A problem that makes other checks meaningless (a missing SRAM size, say)
skips them rather than reporting their consequences.
"""

from __future__ import annotations

import difflib
import math
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from irc.diagnostics import Diagnostic, IrcError, Location, error
from irc.targets import model
from irc.targets.positions import KeyPath, key_positions
from irc.targets.schema import (
    DATA_OPS,
    GENERAL_LIMITS,
    LIMIT_BY_KEY,
    MAX_SCRATCH_KIB,
    MEMORIES_TABLE,
    MEMORY_FIELDS,
    OP_LIMITS,
    OPS_TABLE,
    PLACEMENT,
    SCRATCH,
    SECTION_BY_NAME,
    SECTIONS,
    Field,
    Limit,
    Section,
    limit_choices,
    ops_with_limit,
)

PRESETS = Path(__file__).resolve().parent / "presets"
"""The target files shipped with irc, one per preset (`<name>.toml`)."""

FORMAT_DOC = "docs/targets.md"

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_MEMORY_NAME = re.compile(r"[a-z][a-z0-9_]*")
"""A memory's name: the IR's memory space of its buffers (`memref<..., "flash">`)."""

_MEMORY_SECTION = Section("memories.<name>", "one memory", MEMORY_FIELDS)


def preset_names() -> list[str]:
    """The names of the shipped presets, sorted."""
    return sorted(path.stem for path in PRESETS.glob("*.toml"))


def preset_path(name: str) -> Path:
    """The file of the preset `name` (which must be one of `preset_names()`)."""
    return PRESETS / f"{name}.toml"


def load_target(spec: str | Path, *, origin: str | None = None) -> model.Target:
    """The target named by `spec`: a preset name or the path of a TOML target file.

    Every problem is an `IrcError`: problems in a file are located at its keys; an
    unknown preset name is located at `origin` (what gave the spec, such as the tool's
    name), and its hint lists the presets.
    """
    if isinstance(spec, str) and spec in preset_names():
        return load_target_file(preset_path(spec), source=spec)
    path = Path(spec)
    text = str(spec)
    if isinstance(spec, Path) or path.suffix == ".toml" or "/" in text or path.exists():
        return load_target_file(path)
    raise error(
        f"unknown target '{text}'",
        Location(file=origin) if origin else None,
        hint=_unknown_target_hint(text),
    )


def _unknown_target_hint(name: str) -> str:
    presets = preset_names()
    listing = f"the presets are {', '.join(presets)}; or give the path of a .toml target file"
    close = _closest(name, presets)
    return f"did you mean '{close}'? {listing}" if close else listing


def load_target_file(path: Path, source: str | None = None) -> model.Target:
    """Read and validate the target file at `path`; `source` defaults to the path."""
    where = Location(file=str(path))
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(
            "cannot read the target file: no such file",
            where,
            hint="give the path of a .toml target file, or a preset name "
            f"({', '.join(preset_names())})",
        ) from None
    except UnicodeDecodeError:
        raise error(
            "the target file is not UTF-8 text", where, hint="save it as UTF-8 (TOML is UTF-8)"
        ) from None
    except OSError as failure:
        raise error(
            f"cannot read the target file: {failure.strerror}",
            where,
            hint="give the path of a readable .toml target file",
        ) from None
    return parse_target(text, str(path), source if source is not None else str(path))


def parse_target(text: str, filename: str, source: str | None = None) -> model.Target:
    """Validate the text of a target file; diagnostics are located in `filename`.

    The same text, file and source give the same `Target` object: passes load their
    target once each, and a process that compiles many models must not keep one copy
    per compile in the planners' caches, which are keyed by it (a target is immutable,
    so sharing it is safe)."""
    return _parse_target(text, filename, source if source is not None else filename)


@lru_cache(maxsize=64)
def _parse_target(text: str, filename: str, source: str) -> model.Target:
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as failure:
        raise _syntax_error(failure, text, filename) from None
    checker = _Checker(filename, key_positions(text))
    target = checker.target(document, source)
    if checker.problems or target is None:
        raise IrcError(sorted(checker.problems, key=_position_order))
    return target


def _syntax_error(failure: tomllib.TOMLDecodeError, text: str, filename: str) -> IrcError:
    """tomllib's message, located where it says (`(at line L, column C)`)."""
    message = str(failure)
    found = re.search(r"\s*\(at line (\d+), column (\d+)\)$", message)
    if found:
        where = Location(filename, int(found.group(1)), int(found.group(2)))
        message = message[: found.start()]
    else:
        message = re.sub(r"\s*\(at end of document\)$", " at the end of the file", message)
        lines = text.split("\n")
        where = Location(filename, len(lines), len(lines[-1]) + 1)
    return error(
        f"invalid TOML: {message[:1].lower()}{message[1:]}",
        where,
        hint=f"a target file is TOML (https://toml.io); {FORMAT_DOC} describes its tables",
    )


def _position_order(diagnostic: Diagnostic) -> tuple[int, int]:
    return (diagnostic.location.line or 0, diagnostic.location.col or 0)


# --------------------------------------------------------------------------------------
# Values


def _describe(value: object) -> str:
    """A TOML value as a phrase: `the string "500"`, `the integer 4`, `a table`."""
    match value:
        case bool():
            return f"the boolean {'true' if value else 'false'}"
        case int():
            return f"the integer {value}"
        case float():
            return f"the float {value!r}"
        case str():
            return f'the string "{value}"'
        case list():
            return "an array"
        case dict():
            return "a table"
        case _:
            return f"the date {value}"


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_zero(value: object) -> bool:
    return _is_int(value) and value == 0


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_finite(value: int | float) -> bool:
    """Not NaN nor infinite; TOML integers always are (even those too large for a float)."""
    return isinstance(value, int) or math.isfinite(value)


def _format_number(value: float) -> str:
    """`500`, `0.5`, `1e-300`, `1e+300`: a number as short as its value allows (an
    integer of 400 digits as `1.000e+400`)."""
    if isinstance(value, int):  # maybe too large for a float
        return str(value) if abs(value) < 10**24 else f"{Decimal(value):.3e}"
    return str(int(value)) if abs(value) < 1e15 and value.is_integer() else repr(value)


def _closest(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate most like `word`: by spelling, else sharing its first word."""
    candidates = list(candidates)
    extending = [c for c in candidates if c.startswith(word)]
    if len(extending) == 1:
        return extending[0]
    close = difflib.get_close_matches(word, extending or candidates, n=1, cutoff=0.6)
    if close:
        return close[0]
    stem = word.split("_", 1)[0]
    same_stem = [c for c in candidates if c.split("_", 1)[0] == stem]
    return same_stem[0] if len(same_stem) == 1 else None


def _snake_case(name: str) -> str:
    """`MaxPool` -> `max_pool`, as ONNX op types map to nn op names."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


# --------------------------------------------------------------------------------------
# The checker


@dataclass
class _Checker:
    """Checks a parsed document, collecting one diagnostic per problem."""

    filename: str
    positions: Mapping[KeyPath, tuple[int, int]]
    problems: list[Diagnostic] = field(default_factory=list)

    def location(self, path: KeyPath) -> Location:
        """Where `path` is written, or its closest enclosing table, or the file's start."""
        for length in range(len(path), 0, -1):
            found = self.positions.get(path[:length])
            if found is not None:
                return Location(self.filename, *found)
        return Location(self.filename, 1, 1)

    def problem(self, path: KeyPath, message: str, hint: str | None = None) -> None:
        self.problems.append(Diagnostic(message, self.location(path), hint=hint))

    # ---- the document ----------------------------------------------------------------------

    def target(self, document: dict[str, Any], source: str) -> model.Target | None:
        known = [section.name for section in SECTIONS] + [MEMORIES_TABLE, OPS_TABLE]
        for key, value in document.items():
            if key not in known:
                self.unknown_table(key, value)
        # A table written as a key of another table is reported there, as unknown.
        misplaced = {key for value in document.values() if isinstance(value, dict) for key in value}
        sections: dict[str, dict[str, Any] | None] = {}
        memories: dict[str, model.Memory] | None = None
        for section in SECTIONS:
            if section is PLACEMENT:  # the memories come first, as in a file
                memories = self.memories(document)
            if section.name not in document and section.name in misplaced:
                sections[section.name] = None
                continue
            if section.name not in document and not section.required:
                sections[section.name] = {spec.attribute: spec.default for spec in section.fields}
                continue
            table = self.table(document, section.name, ", ".join(f.key for f in section.fields))
            sections[section.name] = None if table is None else self.section(section, table)
        placement = sections.get("placement")
        if (
            memories is not None
            and placement is not None
            and not self.placement(placement, memories)
        ):
            sections["placement"] = None
        ops = self.ops(document)
        if ops is None or memories is None or any(v is None for v in sections.values()):
            return None
        built = {name: values for name, values in sections.items() if values is not None}
        target_values = built.pop("target")
        return model.Target(
            name=target_values["name"],
            description=target_values["description"],
            source=source,
            mac_array=model.MacArray(**built["mac_array"]),
            data_types=model.DataTypes(**built["data_types"]),
            memories=MappingProxyType(memories),
            placement=model.Placement(**built["placement"]),
            vector_unit=model.VectorUnit(**built["vector_unit"]),
            lut=model.Lut(**built["lut"]),
            host=model.Host(**built["host"]),
            ops=MappingProxyType(dict(sorted(ops.items()))),
            cores=model.Cores(**built["cores"]),
        )

    def unknown_table(self, key: str, value: object) -> None:
        """Report a top-level key that is not one of the tables."""
        names = [section.name for section in SECTIONS] + [MEMORIES_TABLE, OPS_TABLE]
        listing = f"the tables are {', '.join(f'[{name}]' for name in names)}"
        if not isinstance(value, dict):
            homes = [section.name for section in SECTIONS if section.field(key) is not None]
            hint = f"write it under [{homes[0]}]" if homes else f"keys belong in tables: {listing}"
            self.problem((key,), f"key '{key}' outside any table", hint=hint)
            return
        close = _closest(key, names)
        self.problem(
            (key,),
            f"unknown table [{key}]",
            hint=f"did you mean [{close}]? {listing}" if close else listing,
        )

    def table(self, document: dict[str, Any], name: str, keys: str) -> dict[str, Any] | None:
        """The table `name` of the document, or None after reporting why not."""
        if name not in document:
            self.problem(
                (name,), f"missing table [{name}]", hint=f"add [{name}] with {keys} ({FORMAT_DOC})"
            )
            return None
        table = document[name]
        if not isinstance(table, dict):
            self.problem(
                (name,),
                f"[{name}] must be a table, got {_describe(table)}",
                hint=f"start it with a line [{name}], followed by {keys}",
            )
            return None
        return table

    # ---- hardware tables ---------------------------------------------------------------------

    def section(
        self, section: Section, table: dict[str, Any], at: KeyPath | None = None
    ) -> dict[str, Any] | None:
        """The section's values in base units by attribute, or None if any is wrong.
        `at` is the table's path when it is not `(section.name,)` (a memory's)."""
        at = at or (section.name,)
        name = ".".join(at)
        values: dict[str, Any] = {}
        ok = True
        # A misspelt key is reported once, as unknown, not also as the key it misses.
        suggested = {
            self.unknown_key(section, key, at) for key in table if section.field(key) is None
        }
        ok = not suggested
        for spec in section.fields:
            path = (*at, spec.key)
            if spec.key not in table:
                if spec.required and spec.key not in suggested:
                    self.problem(
                        at,
                        f"[{name}] is missing '{spec.key}'",
                        hint=f"add {spec.key} = ... ({_field_help(spec)})",
                    )
                    ok = False
                elif spec.default is not None:
                    values[spec.attribute] = spec.default
                continue
            if section.name == "lut" and spec.key == "entries" and _is_zero(table[spec.key]):
                values[spec.attribute] = 0  # "no table", checked against `supported` below
                continue
            value = self.field_value(path, spec, table[spec.key])
            if value is None:
                ok = False
            else:
                values[spec.attribute] = value
        if not ok:
            return None
        check = _SECTION_CHECKS.get(section.name)
        if check is not None and not check(self, table, values):
            return None
        return values

    def unknown_key(self, section: Section, key: str, at: KeyPath) -> str | None:
        """Report an unknown key of a hardware table; returns the key suggested for it."""
        keys = [spec.key for spec in section.fields]
        name = ".".join(at)
        listing = f"[{name}] takes {', '.join(keys)}"
        elsewhere = [s.name for s in SECTIONS if s.field(key) is not None and s != section]
        close = None if elsewhere else _closest(key, keys)
        if elsewhere:
            hint = f"'{key}' belongs in [{elsewhere[0]}]"
        elif key in (s.name for s in SECTIONS):
            hint = f"[{key}] is a table of its own: start it with a line [{key}]"
        elif close is not None:
            spec = section.field(close)
            assert spec is not None
            hint = f"did you mean '{close}' ({_field_help(spec)})? {listing}"
        else:
            hint = listing
        self.problem((*at, key), f"unknown key '{key}' in [{name}]", hint=hint)
        return close

    def field_value(self, path: KeyPath, spec: Field, value: object) -> object | None:
        """The value of a hardware key in base units, or None after reporting a problem."""
        name = ".".join(path)
        wanted = {
            "int": ("an integer", _is_int(value)),
            "number": ("a number", _is_number(value)),
            "bool": ("true or false", isinstance(value, bool)),
            "string": ("a string", isinstance(value, str)),
            "ints": (
                "a list of integers",
                isinstance(value, list) and all(_is_int(item) for item in value),
            ),
            "strings": (
                "a list of strings",
                isinstance(value, list) and all(isinstance(item, str) for item in value),
            ),
        }
        expected, fits = wanted[spec.kind]
        if not fits:
            hint = (
                _type_hint(spec.kind, value)
                or f"{spec.key} takes {expected}: {_field_meaning(spec)}"
            )
            if spec.kind == "strings" and isinstance(value, str):
                hint = f'write a list: {spec.key} = ["{value}"]'

            self.problem(path, f"{name} must be {expected}, got {_describe(value)}", hint=hint)
            return None
        if spec.kind == "string":
            assert isinstance(value, str)
            return self.string_value(path, spec, value)
        if spec.kind == "strings":
            assert isinstance(value, list)
            checked = [self.string_value(path, spec, item) for item in value]
            if not checked:
                self.problem(path, f"{name} is empty", hint=_field_help(spec))
                return None
            return None if None in checked else tuple(checked)
        if spec.kind == "bool":
            return value
        if spec.kind == "ints":
            assert isinstance(value, list)
            sizes = [self.field_value(path, replace(spec, kind="int"), item) for item in value]
            return None if None in sizes else tuple(sizes)
        assert isinstance(value, int | float)
        if not _is_finite(value):
            self.problem(
                path, f"{name} must be a finite number, got {value}", hint=_field_help(spec)
            )
            return None
        problem = _range_problem(value, spec.minimum, spec.exclusive_minimum, spec.maximum)
        if spec.zero_allowed and value == 0:
            problem = None
        elif problem is None and spec.floor is not None and value < spec.floor:
            problem = f"must be at least {_format_number(spec.floor)}"
        if problem is None and spec.power_of_two and not _is_power_of_two(int(value)):
            lower = 1 << (int(value).bit_length() - 1)
            problem = f"is not a power of two (such as {lower} or {lower * 2})"
        if problem is not None:
            self.problem(
                path, f"{name} = {_format_number(value)} {problem}", hint=_field_help(spec)
            )
            return None
        if spec.kind == "int":
            return int(value) * int(spec.scale)
        return float(value) * spec.scale

    def string_value(self, path: KeyPath, spec: Field, value: str) -> str | None:
        if not value.strip():
            self.problem(path, f"{'.'.join(path)} is empty", hint=_field_help(spec))
            return None
        if spec.key == "name" and not _NAME.fullmatch(value):
            self.problem(
                path,
                f'target.name "{value}" is not a valid name',
                hint="use letters, digits, '.', '_' and '-' (as in npu-demo)",
            )
            return None
        if spec.choices and value not in spec.choices:
            listing = ", ".join(f'"{choice}"' for choice in spec.choices)
            allowed = (
                f"the only value is {listing}"
                if len(spec.choices) == 1
                else f"the values are {listing}"
            )
            close = _closest(value, spec.choices)
            self.problem(
                path,
                f'{".".join(path)} = "{value}" is not supported: {allowed}',
                hint=(f"did you mean '{close}'? " if close else "") + _field_help(spec),
            )
            return None
        return value

    # ---- the memory hierarchy ------------------------------------------------------------------

    def memories(self, document: dict[str, Any]) -> dict[str, model.Memory] | None:
        """Every `[memories.<name>]` table as a `Memory`, or None after reporting."""
        keys = ", ".join(spec.key for spec in MEMORY_FIELDS)
        table = self.table(
            document, MEMORIES_TABLE, f"one [{MEMORIES_TABLE}.<name>] table per memory"
        )
        if table is None:
            return None
        memories: dict[str, model.Memory] = {}
        ok = True
        for name, fields in table.items():
            at = (MEMORIES_TABLE, name)
            if not isinstance(fields, dict):
                self.problem(
                    at,
                    f"{MEMORIES_TABLE}.{name} must be a table, got {_describe(fields)}",
                    hint=f"write [{MEMORIES_TABLE}.{name}] followed by {keys}",
                )
                ok = False
                continue
            if not _MEMORY_NAME.fullmatch(name):
                self.problem(
                    at,
                    f"memory name '{name}' is not a valid name",
                    hint="use lower-case letters, digits and '_', starting with a letter "
                    '(the name is the IR\'s memory space: memref<..., "flash">)',
                )
                ok = False
                continue
            values = self.section(_MEMORY_SECTION, fields, at)
            if values is None or not _check_memory(self, name, values):
                ok = False
                continue
            memories[name] = model.Memory(name=name, **values)
        if ok and SCRATCH not in memories:
            self.problem(
                (MEMORIES_TABLE,),
                f"[{MEMORIES_TABLE}] has no '{SCRATCH}': the NPU's local SRAM, where compute "
                "commands work",
                hint=f"add [{MEMORIES_TABLE}.{SCRATCH}] with {keys}",
            )
            ok = False
        elif ok and not memories[SCRATCH].writable:
            self.problem(
                (MEMORIES_TABLE, SCRATCH, "write_bandwidth_gb_per_s"),
                f"{MEMORIES_TABLE}.{SCRATCH} is read-only: the NPU writes its tiles there",
                hint="give it a write bandwidth above 0",
            )
            ok = False
        return memories if ok else None

    def placement(self, values: dict[str, Any], memories: Mapping[str, model.Memory]) -> bool:
        """Check that the placement names memories that can hold what it puts there."""
        names = ", ".join(name for name in memories if name != SCRATCH)
        system = [name for name in memories if name != SCRATCH]
        ok = True

        def check(key: str, name: str, writable: bool) -> None:
            nonlocal ok
            path = ("placement", key)
            if name not in memories:
                close = _closest(name, system)
                hint = f"the memories are {names}" + (f"; did you mean '{close}'?" if close else "")
                self.problem(path, f"placement.{key} names no memory: '{name}'", hint=hint)
                ok = False
            elif name == SCRATCH:
                self.problem(
                    path,
                    f"placement.{key} = '{SCRATCH}': the NPU's local SRAM holds tiles only",
                    hint=f"name a system memory: {names}" if names else "add a system memory",
                )
                ok = False
            elif writable and not memories[name].writable:
                self.problem(
                    path,
                    f"placement.{key} names '{name}', which is read-only",
                    hint="activations are written: name a memory with a write bandwidth",
                )
                ok = False

        check("weights", values["weights"], writable=False)
        activations = values["activations"]
        for name in activations:
            check("activations", name, writable=True)
        repeated = _duplicate(list(activations))
        if repeated is not None:
            self.problem(
                ("placement", "activations"),
                f"placement.activations lists '{repeated}' twice",
                hint="list each memory once, fastest first",
            )
            ok = False
        return ok

    # ---- the support table -------------------------------------------------------------------

    def ops(self, document: dict[str, Any]) -> dict[str, model.OpSupport] | None:
        table = self.table(document, OPS_TABLE, "one [ops.<name>] table per op the NPU runs")
        if table is None:
            return None
        general: dict[str, Any] = {}
        entries: dict[str, dict[str, Any]] = {}
        ok = True
        for key, value in table.items():
            if isinstance(value, dict):
                entries[key] = value
            elif key in GENERAL_LIMITS:
                checked = self.limit_value((OPS_TABLE, key), "", LIMIT_BY_KEY[key], value)
                if checked is None:
                    ok = False
                else:
                    general[key] = checked
            else:
                ok = False
                self.not_an_op_table(key, value)
        supported: dict[str, model.OpSupport] = {}
        for name, limits in entries.items():
            support = self.op_support(name, limits, general)
            if support is None:
                ok = False
            else:
                supported[name] = support
        # An [ops] table without op tables is a valid target: its NPU runs nothing.
        return supported if ok else None

    def not_an_op_table(self, key: str, value: object) -> None:
        path = (OPS_TABLE, key)
        if key in OP_LIMITS:
            self.problem(
                path,
                f"ops.{key} must be a table of limits, got {_describe(value)}",
                hint=f"write [ops.{key}] followed by its limits (an empty table: no limits)",
            )
            return
        close = _closest(key, GENERAL_LIMITS)
        listing = (
            f"[{OPS_TABLE}] takes {', '.join(GENERAL_LIMITS)} (limits of every op) and one "
            f"[{OPS_TABLE}.<name>] table per op"
        )
        if key in LIMIT_BY_KEY:
            listing = f"'{key}' is a limit of single ops: write it in their tables; " + listing
        self.problem(
            path,
            f"unknown key '{key}' in [{OPS_TABLE}]",
            hint=f"did you mean '{close}'? {listing}" if close else listing,
        )

    def op_support(
        self, name: str, limits: dict[str, Any], general: Mapping[str, Any]
    ) -> model.OpSupport | None:
        path = (OPS_TABLE, name)
        if name not in OP_LIMITS:
            self.unknown_op(name)
            return None
        allowed = OP_LIMITS[name]
        values: dict[str, Any] = {key: value for key, value in general.items() if key in allowed}
        ok = True
        for key, value in limits.items():
            if key not in allowed:
                self.unknown_limit(name, key)
                ok = False
                continue
            checked = self.limit_value((*path, key), name, LIMIT_BY_KEY[key], value)
            if checked is None:
                ok = False
            else:
                values[key] = checked
        if not ok:
            return None
        low, high = values.get("min_scale"), values.get("max_scale")
        if low is not None and high is not None and low > high:
            self.problem(
                (*path, "min_scale"),
                f"ops.{name}.min_scale = {_format_number(low)} is more than "
                f"max_scale = {_format_number(high)}",
                hint="the smallest allowed scale must not exceed the largest",
            )
            return None
        return model.OpSupport(op=name, **values)

    def unknown_op(self, name: str) -> None:
        path = (OPS_TABLE, name)
        nn_ops = "the names are those of nn ops without 'nn.' (docs/nn-ops.md)"
        if name in DATA_OPS:
            self.problem(
                path,
                f"nn.{name} needs no entry: constants are data and always supported",
                hint=f"remove [ops.{name}]",
            )
            return
        if name == "nn" or name.startswith("nn."):
            bare = name.removeprefix("nn.") if name != "nn" else "<name>"
            self.problem(
                path,
                f"op names in the support table have no 'nn.' prefix: '{name}'",
                hint=f"write [ops.{bare}]",
            )
            return
        snake = _snake_case(name)
        close = snake if snake in OP_LIMITS else _closest(snake, OP_LIMITS)
        self.problem(
            path,
            f"unknown op '{name}' in the support table",
            hint=f"did you mean '{close}'? {nn_ops}" if close else nn_ops,
        )

    def unknown_limit(self, op: str, key: str) -> None:
        allowed = OP_LIMITS[op]
        listing = f"limits of nn.{op}: {', '.join(allowed)}"
        if key in LIMIT_BY_KEY:
            others = ", ".join(ops_with_limit(key))
            message = f"'{key}' is not a limit of nn.{op}"
            hint = f"{listing}; '{key}' applies to {others}"
        else:
            message = f"unknown limit '{key}' in [ops.{op}]"
            close = _closest(key, allowed)
            hint = f"did you mean '{close}'? {listing}" if close else listing
        self.problem((OPS_TABLE, op, key), message, hint=hint)

    def limit_value(self, path: KeyPath, op: str, limit: Limit, value: object) -> object | None:
        """A limit's value (lists as sorted tuples), or None after reporting a problem."""
        name = ".".join(path)
        checker = _LIMIT_CHECKS[limit.kind]
        return checker(self, path, name, op, limit, value)


def _field_meaning(spec: Field) -> str:
    """`the NPU clock, in MHz` (a unit the key names is not repeated)."""
    unit = f", in {spec.unit}" if spec.unit and not spec.key.endswith(spec.unit) else ""
    return f"{spec.help}{unit}"


def _field_help(spec: Field) -> str:
    """`clock_mhz: the NPU clock, in MHz`."""
    return f"{spec.key}: {_field_meaning(spec)}"


def _type_hint(kind: str, value: object) -> str | None:
    if kind in ("int", "number") and isinstance(value, str) and _looks_numeric(value):
        return f"write the number without quotes: {value.strip()}"
    if kind == "bool" and isinstance(value, str) and value.lower() in ("true", "false"):
        return f"write {value.lower()} without quotes"
    if kind == "int" and isinstance(value, float) and value.is_integer():
        return f"write {int(value)}"
    return None


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _is_power_of_two(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


def _range_problem(
    value: float, minimum: float | None, exclusive: bool, maximum: float | None
) -> str | None:
    """Why `value` is out of range, or None."""
    if minimum is not None and (value <= minimum if exclusive else value < minimum):
        bound = _format_number(minimum)
        return f"must be more than {bound}" if exclusive else f"must be at least {bound}"
    if maximum is not None and value > maximum:
        return f"must be at most {_format_number(maximum)}"
    return None


# ---- cross-key checks of hardware tables --------------------------------------------------


def _check_data_types(checker: _Checker, table: dict[str, Any], values: dict[str, Any]) -> bool:
    if not values["int8"]:
        checker.problem(
            ("data_types", "int8"),
            "data_types.int8 = false: every target must support int8",
            hint="set int8 = true: irc compiles models to int8",
        )
        return False
    for key, hint in INT16_FIELDS.items():
        value = values.get(key)
        if values["int16"] and value is None:
            checker.problem(
                ("data_types",), f"[data_types] is missing '{key}' (int16 = true)", hint=hint
            )
            return False
        if not values["int16"] and value is not None:
            checker.problem(
                ("data_types", key),
                f"data_types.{key} = {value} but int16 = false",
                hint=f"remove {key}, or set int16 = true",
            )
            return False
        values.setdefault(key, 0)
    return True


INT16_FIELDS = {
    "int16_cycles": "add int16_cycles = 2 if a pass over 16-bit activations takes twice an "
    "8-bit one's cycles (as on Arm's Ethos-U), or 1 if it takes as long",
    "int16_accumulator_bits": "add int16_accumulator_bits = 48 for TFLite's and TOSA's "
    "int16x8 accumulator (40 on Arm's Ethos-U, 64 for a 64-bit one)",
}
"""The [data_types] keys that `int16 = true` requires and `int16 = false` forbids, with
the hint for a missing one."""


def _check_memory(checker: _Checker, name: str, values: dict[str, Any]) -> bool:
    """A memory's keys against each other: whole bank rows, writes of a read-only one."""
    at = (MEMORIES_TABLE, name)
    size, banks, alignment = values["size_bytes"], values["banks"], values["alignment_bytes"]
    if name == SCRATCH and size > MAX_SCRATCH_KIB * 1024:
        checker.problem(
            (*at, "size_kib"),
            f"{'.'.join(at)}.size_kib = {size // 1024} must be at most {MAX_SCRATCH_KIB}",
            hint="size_kib: capacity, in KiB; the NPU's local SRAM is on chip, and the largest "
            "on-chip memories of inference chips are a few hundred MB",
        )
        return False
    if banks > size:
        checker.problem(
            (*at, "banks"),
            f"{'.'.join(at)}.banks = {banks} is more than its {size} bytes",
            hint="give the number of banks the memory is divided into",
        )
        return False
    granule = banks * alignment
    if size % granule:
        step_kib = math.lcm(granule, 1024) // 1024
        checker.problem(
            (*at, "size_kib"),
            f"{'.'.join(at)}.size_kib = {size // 1024} is not a whole number of aligned bank "
            f"rows: {size} bytes is not a multiple of banks x alignment_bytes = "
            f"{banks} x {alignment} = {granule}",
            hint=f"make size_kib a multiple of {step_kib}, or change banks or alignment_bytes",
        )
        return False
    writable, in_flight = values["write_bytes_per_second"] > 0, values["max_writes"] > 0
    if writable != in_flight:
        checker.problem(
            (*at, "max_writes"),
            f"{'.'.join(at)}.max_writes = {values['max_writes']} but write_bandwidth_gb_per_s "
            f"= {_format_number(values['write_bytes_per_second'] / 1e9)}",
            hint="a read-only memory has write_bandwidth_gb_per_s = 0 and max_writes = 0; a "
            "writable one both above 0",
        )
        return False
    return True


def _check_lut(checker: _Checker, table: dict[str, Any], values: dict[str, Any]) -> bool:
    entries = values.get("entries")
    if values["supported"] and not entries:
        where = ("lut", "entries") if "entries" in table else ("lut",)
        checker.problem(
            where,
            "[lut] is missing 'entries' (the table's size)"
            if entries is None
            else "lut.entries = 0 but lut.supported = true",
            hint="add entries = 256 (at least 256, a power of two)",
        )
        return False
    if not values["supported"] and entries:
        checker.problem(
            ("lut", "entries"),
            f"lut.entries = {entries} but lut.supported = false",
            hint="remove entries, or set supported = true",
        )
        return False
    values.setdefault("entries", 0)
    return True


def _check_mac_array(checker: _Checker, table: dict[str, Any], values: dict[str, Any]) -> bool:
    """The micro-block keys come together: all of them with `output_block`, none without."""
    block = values["output_block"]
    keys = [spec.key for spec in SECTION_BY_NAME["mac_array"].fields if spec.required_when]
    if not block:
        present = [key for key in keys if key in table]
        if present:
            checker.problem(
                ("mac_array", present[0]),
                f"mac_array.{present[0]} is set but output_block is not",
                hint="add output_block = [rows, columns, channels] for an array of "
                "micro-blocks, or remove " + ", ".join(present),
            )
            return False
        values.update(input_block_depth=0, weight_bytes_per_cycle=0.0)
        values.update(taps_per_step=0, output_elements_per_cycle=0.0)
        return True
    if len(block) != 3:
        checker.problem(
            ("mac_array", "output_block"),
            f"mac_array.output_block has {len(block)} sizes; it takes 3",
            hint="output_block = [rows, columns, channels], as Ethos-U's 2x2x8",
        )
        return False
    missing = [key for key in keys if key not in table]
    if missing:
        checker.problem(
            ("mac_array",),
            f"[mac_array] is missing '{missing[0]}' (output_block is set)",
            hint=f"add {missing[0]} = ... ({_field_help(SECTION_BY_NAME['mac_array'].field(missing[0]))})",  # type: ignore[arg-type]
        )
        return False
    macs = math.prod(block) * values["input_block_depth"]
    array = values["rows"] * values["columns"]
    if macs % array:
        checker.problem(
            ("mac_array", "output_block"),
            f"a micro-block of {'x'.join(map(str, block))} outputs over "
            f"{values['input_block_depth']} input channels is {macs} MACs, not a whole "
            f"number of cycles of the {array}-MAC array",
            hint="a micro-block's step must take whole cycles: its outputs x input depth a "
            "multiple of rows x columns",
        )
        return False
    return True


_SECTION_CHECKS = {
    "mac_array": _check_mac_array,
    "data_types": _check_data_types,
    "lut": _check_lut,
}


# ---- limit values ----------------------------------------------------------------------------


def _limit_hint(op: str, limit: Limit) -> str:
    return f"{limit.key}: {limit.help}"


def _check_count(
    checker: _Checker, path: KeyPath, name: str, op: str, limit: Limit, value: object
) -> object | None:
    minimum = 0 if limit.kind == "size" else max(1, int(limit.minimum))
    noun = "a non-negative integer" if limit.kind == "size" else "a positive integer"
    if not _is_int(value):
        hint = _type_hint("int", value) or _limit_hint(op, limit)
        checker.problem(path, f"{name} must be {noun}, got {_describe(value)}", hint=hint)
        return None
    assert isinstance(value, int)
    if not minimum <= value <= limit.maximum:
        checker.problem(
            path,
            f"{name} = {_format_number(value)} is out of range: it must be between {minimum} and "
            f"{_format_number(limit.maximum)}",
            hint=_limit_hint(op, limit),
        )
        return None
    return value


def _check_flag(
    checker: _Checker, path: KeyPath, name: str, op: str, limit: Limit, value: object
) -> object | None:
    if not isinstance(value, bool):
        hint = _type_hint("bool", value) or _limit_hint(op, limit)
        checker.problem(path, f"{name} must be true or false, got {_describe(value)}", hint=hint)
        return None
    return value


def _check_number(
    checker: _Checker, path: KeyPath, name: str, op: str, limit: Limit, value: object
) -> object | None:
    if not _is_number(value) or not _is_finite(value):  # type: ignore[arg-type]
        hint = _type_hint("number", value) or _limit_hint(op, limit)
        checker.problem(
            path, f"{name} must be a positive number, got {_describe(value)}", hint=hint
        )
        return None
    assert isinstance(value, int | float)
    if not limit.minimum < value <= limit.maximum:
        checker.problem(
            path,
            f"{name} = {_format_number(value)} is out of range: it must be more than "
            f"{_format_number(limit.minimum)} and at most {_format_number(limit.maximum)}",
            hint=_limit_hint(op, limit),
        )
        return None
    return float(value)


def _list_of(
    checker: _Checker, path: KeyPath, name: str, op: str, limit: Limit, value: object, noun: str
) -> list[Any] | None:
    """The value as a non-empty (unless allowed) list, or None after reporting."""
    if not isinstance(value, list):
        checker.problem(
            path,
            f"{name} must be an array of {noun}, got {_describe(value)}",
            hint=f"write it in brackets: {limit.key} = [...]; {limit.key}: {limit.help}",
        )
        return None
    if not value and not limit.allow_empty:
        checker.problem(
            path,
            f"{name} is empty: no nn.{op} could run" if op else f"{name} is empty",
            hint=f"list the allowed values, or remove {limit.key} to allow any",
        )
        return None
    return value


def _duplicate(values: list[Any]) -> Any | None:
    seen: list[Any] = []
    for value in values:
        if value in seen:
            return value
        seen.append(value)
    return None


def _check_ints(
    checker: _Checker, path: KeyPath, name: str, op: str, limit: Limit, value: object
) -> object | None:
    items = _list_of(checker, path, name, op, limit, value, "integers")
    if items is None:
        return None
    minimum = int(limit.minimum)
    for item in items:
        if not _is_int(item):
            checker.problem(
                path,
                f"{name} must hold integers, got {_describe(item)}",
                hint=_limit_hint(op, limit),
            )
            return None
        if not minimum <= item <= limit.maximum or (limit.key == "steps" and item == 0):
            zero = " (and not 0)" if limit.key == "steps" else ""
            checker.problem(
                path,
                f"{name} holds {_format_number(item)}, which is out of range: values must be between "
                f"{minimum} and {_format_number(limit.maximum)}{zero}",
                hint=_limit_hint(op, limit),
            )
            return None
    repeated = _duplicate(items)
    if repeated is not None:
        checker.problem(path, f"{name} lists {repeated} twice", hint="list each value once")
        return None
    return tuple(sorted(items))


def _check_numbers(
    checker: _Checker, path: KeyPath, name: str, op: str, limit: Limit, value: object
) -> object | None:
    items = _list_of(checker, path, name, op, limit, value, "numbers")
    if items is None:
        return None
    for item in items:
        if not _is_number(item) or not _is_finite(item):
            checker.problem(
                path,
                f"{name} must hold numbers, got {_describe(item)}",
                hint=_limit_hint(op, limit),
            )
            return None
        if not limit.minimum < item <= limit.maximum:
            checker.problem(
                path,
                f"{name} holds {_format_number(item)}, which is out of range: values must be "
                f"more than {_format_number(limit.minimum)} and at most "
                f"{_format_number(limit.maximum)}",
                hint=_limit_hint(op, limit),
            )
            return None
    numbers = [float(item) for item in items]
    repeated = _duplicate(numbers)
    if repeated is not None:
        checker.problem(
            path, f"{name} lists {_format_number(repeated)} twice", hint="list each value once"
        )
        return None
    return tuple(sorted(numbers))


def _check_choice(
    checker: _Checker, path: KeyPath, name: str, op: str, limit: Limit, value: object
) -> object | None:
    choices = limit_choices(op, limit)
    if not isinstance(value, str):
        checker.problem(
            path,
            f"{name} must be one of {', '.join(choices)}, got {_describe(value)}",
            hint=_limit_hint(op, limit),
        )
        return None
    if value not in choices:
        checker.problem(
            path,
            f'{name} = "{value}" is not one of {", ".join(choices)}',
            hint=_choice_hint(value, choices),
        )
        return None
    return value


def _check_choices(
    checker: _Checker, path: KeyPath, name: str, op: str, limit: Limit, value: object
) -> object | None:
    choices = limit_choices(op, limit)
    items = _list_of(checker, path, name, op, limit, value, "strings")
    if items is None:
        return None
    for item in items:
        if not isinstance(item, str):
            checker.problem(
                path,
                f"{name} must hold strings, got {_describe(item)}",
                hint=f"the values are {', '.join(choices)}",
            )
            return None
        if item not in choices:
            checker.problem(
                path,
                f'{name} lists "{item}", which is not one of {", ".join(choices)}',
                hint=_choice_hint(item, choices),
            )
            return None
    repeated = _duplicate(items)
    if repeated is not None:
        checker.problem(path, f'{name} lists "{repeated}" twice', hint="list each value once")
        return None
    return tuple(items)


def _choice_hint(value: str, choices: tuple[str, ...]) -> str:
    close = _closest(value, choices) or _closest(value.lower(), choices)
    listing = f"the values are {', '.join(choices)}"
    return f"did you mean '{close}'? {listing}" if close else listing


def _check_perms(
    checker: _Checker, path: KeyPath, name: str, op: str, limit: Limit, value: object
) -> object | None:
    items = _list_of(checker, path, name, op, limit, value, "permutations")
    if items is None:
        return None
    perms: list[tuple[int, ...]] = []
    for item in items:
        if (
            not isinstance(item, list)
            or not all(_is_int(axis) for axis in item)
            or sorted(item) != list(range(len(item)))
            or not 1 <= len(item) <= limit.maximum
        ):
            shown = _describe(item) if not isinstance(item, list) else str(item)
            checker.problem(
                path,
                f"{name} holds {shown}, which is not a permutation",
                hint="each permutation lists the axes 0..rank-1 once each, as [0, 2, 3, 1]",
            )
            return None
        perms.append(tuple(item))
    repeated = _duplicate(perms)
    if repeated is not None:
        checker.problem(path, f"{name} lists {list(repeated)} twice", hint="list each value once")
        return None
    return tuple(sorted(perms))


_LIMIT_CHECKS = {
    "count": _check_count,
    "size": _check_count,
    "flag": _check_flag,
    "number": _check_number,
    "ints": _check_ints,
    "numbers": _check_numbers,
    "choice": _check_choice,
    "choices": _check_choices,
    "perms": _check_perms,
}
