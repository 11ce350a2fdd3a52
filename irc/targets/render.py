"""Targets as text: a one-line summary, a canonical target file, the support table.

`target_toml` writes a target back in the file format, in human units and with the
derived figures as comments; loading its output gives the same `Target` (tests check
this for every preset). `support_table_markdown` is what `irc-target support-table`
prints.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable

from irc.targets.model import OpSupport, Target
from irc.targets.schema import (
    GENERAL_LIMITS,
    LIMIT_BY_KEY,
    LIMITS,
    MEMORIES_TABLE,
    MEMORY_FIELDS,
    MODE_CHOICES,
    OP_LIMITS,
    OPS_TABLE,
    PLACEMENT,
    SECTIONS,
    Field,
    Limit,
    kind_label,
)

_DEFAULTS = {f.name: f.default for f in dataclasses.fields(OpSupport) if f.name != "op"}
"""The value of each limit that does not restrict the op."""


# --------------------------------------------------------------------------------------
# Numbers in human units


def format_number(value: float) -> str:
    """A number as a person writes it: `500`, `0.5`, `3.75`, `1e-05`."""
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.12g}"


def format_hertz(hertz: float) -> str:
    """`500 MHz`, `1 GHz`."""
    if hertz >= 1e9:
        return f"{format_number(hertz / 1e9)} GHz"
    return f"{format_number(hertz / 1e6)} MHz"


def format_bytes(size: int) -> str:
    """`512 KiB`, `2 MiB`, `48 bytes`."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % (scale // 16) == 0:
            return f"{format_number(size / scale)} {unit}"
    return f"{size} bytes"


def format_rate(per_second: float, unit: str) -> str:
    """`1 GB/s`, `0.5 GB/s`, `250 MB/s` (decimal prefixes, as vendors quote rates)."""
    if per_second >= 1e9 or per_second == 0:
        return f"{format_number(per_second / 1e9)} G{unit}/s"
    return f"{format_number(per_second / 1e6)} M{unit}/s"


def format_seconds(seconds: float) -> str:
    """`50 µs`, `1.5 ms`."""
    if seconds >= 1e-3:
        return f"{format_number(seconds * 1e3)} ms"
    return f"{format_number(seconds * 1e6)} µs"


def summary(target: Target) -> str:
    """One line: cores, MACs, clock, peak TOPS, the local SRAM and the system memories."""
    mac, cores = target.mac_array, target.cores.count
    memories = ", ".join(
        f"{memory.name} {format_rate(memory.read_bytes_per_second, 'B')}"
        for memory in target.system_memories
    )
    count, each = (f"{cores} cores x ", " a core") if cores > 1 else ("", "")
    return (
        f"{count}{mac.macs_per_cycle} int8 MACs ({mac.rows}x{mac.columns}) at "
        f"{format_hertz(mac.clock_hz)} = {format_number(round(target.peak_tops, 3))} TOPS, "
        f"{format_bytes(target.scratch.size_bytes)} SRAM{each}, {memories}"
    )


# --------------------------------------------------------------------------------------
# The target file


def _toml_value(value: object) -> str:
    match value:
        case bool():
            return "true" if value else "false"
        case int() | float():
            return format_number(value)
        case str():
            return json.dumps(value, ensure_ascii=False)
        case tuple() | list():
            return "[" + ", ".join(_toml_value(item) for item in value) + "]"
        case _:
            raise TypeError(f"no TOML form for {value!r}")


def _file_value(spec: Field, value: object) -> object:
    """A base-unit value in the file's unit."""
    if spec.kind == "int":
        assert isinstance(value, int)
        return value // int(spec.scale)
    if spec.kind == "number":
        assert isinstance(value, int | float)
        # Round away the binary noise of the unit conversion (1e-05 / 1e-06).
        return float(f"{value / spec.scale:.12g}")
    return value


def _memory_notes(target: Target, name: str) -> list[str]:
    """A memory's derived figures: banks, bytes per NPU cycle, latency in time."""
    memory, clock = target.memories[name], target.mac_array.clock_hz
    notes = []
    if memory.banks > 1:
        notes.append(f"{memory.banks} banks of {format_bytes(memory.bank_bytes)}")
    rate = (
        f"bytes per NPU cycle: {format_number(round(memory.read_bytes_per_cycle(clock), 3))} read"
    )
    if memory.writable:
        rate += f", {format_number(round(memory.write_bytes_per_cycle(clock), 3))} written"
    else:
        rate += " (read-only)"
    bound = memory.read_bytes_per_cycle(clock) < memory.read_bytes_per_second / clock
    if bound:
        rate += f" (bounded by {memory.max_reads} reads in flight)"
    notes.append(rate)
    if memory.read_latency_cycles:
        notes.append(f"read latency {format_seconds(memory.read_latency_cycles / clock)}")
    return notes


def _section_notes(target: Target) -> dict[str, list[str]]:
    """Derived figures, written as comments after each table."""
    mac, host, cores = target.mac_array, target.host, target.cores
    core_tops = 2 * mac.macs_per_second / 1e12
    a_core = " a core" if cores.count > 1 else ""
    together = (
        f"{cores.count} cores: {format_number(round(target.peak_tops, 3))} TOPS int8 peak "
        "together; a signal reaches another core in "
        f"{format_seconds(cores.sync_latency_cycles / mac.clock_hz)}"
    )
    return {
        "cores": [together] if cores.count > 1 else [],
        "mac_array": [
            f"{mac.macs_per_cycle} MACs per cycle, "
            f"{format_rate(mac.macs_per_second, 'MAC')}, "
            f"{format_number(round(core_tops, 3))} TOPS int8 peak{a_core} "
            "(a MAC is two operations)"
        ],
        "host": [f"one NPU<->CPU transition costs {format_seconds(host.transition_seconds)}"],
    }


def target_toml(target: Target) -> str:
    """The target as a target file (human units, derived figures in comments)."""
    lines = [
        f"# {target.name}: {target.description}",
        f"# source: {target.source}",
        f"# {summary(target)}",
    ]
    notes = _section_notes(target)
    for section in SECTIONS:
        if section is PLACEMENT:
            for name, memory in target.memories.items():
                lines += ["", f"[{MEMORIES_TABLE}.{name}]"]
                lines += _fields_toml(MEMORY_FIELDS, dataclasses.asdict(memory))
                lines += [f"# {note}" for note in _memory_notes(target, name)]
        values: dict[str, object] = (
            {"name": target.name, "description": target.description}
            if section.name == "target"
            else dataclasses.asdict(getattr(target, section.name))
        )
        if not section.required and all(
            values[spec.attribute] == spec.default for spec in section.fields
        ):
            continue  # an optional table that says nothing is left out, as in the files
        lines += ["", f"[{section.name}]"]
        lines += _fields_toml(section.fields, values)
        lines += [f"# {note}" for note in notes.get(section.name, [])]
    lines += ["", *_ops_toml(target)]
    return "\n".join(lines) + "\n"


def _fields_toml(fields: Iterable[Field], values: dict[str, object]) -> list[str]:
    """`key = value  # meaning` for each field set (an optional one only when its
    `required_when` key is true, or when it differs from its default)."""
    lines = []
    for spec in fields:
        value = values[spec.attribute]
        if not spec.required and (
            not values[spec.required_when] if spec.required_when else value == spec.default
        ):
            continue
        # Units the key names already (`burst_bytes`) are not repeated.
        unit = f", in {spec.unit}" if spec.unit and not spec.key.endswith(spec.unit) else ""
        assignment = f"{spec.key} = {_toml_value(_file_value(spec, value))}"
        lines.append(f"{assignment:<40} # {spec.help}{unit}")
    return lines


def _ops_toml(target: Target) -> list[str]:
    lines = [
        "# The support table: the NPU runs the ops listed, within their limits;",
        "# every other op runs on the host.",
        f"[{OPS_TABLE}]",
    ]
    shared: dict[str, object] = {}
    for key in GENERAL_LIMITS:
        values = {getattr(support, key) for support in target.ops.values()}
        if len(values) == 1 and (value := values.pop()) is not None:
            shared[key] = value
            lines.append(f"{key} = {_toml_value(value)}")
    for name, support in target.ops.items():
        lines += ["", f"[{OPS_TABLE}.{name}]"]
        for key, value in _limits_set(support):
            if key not in shared:
                lines.append(f"{key} = {_toml_value(value)}")
    unsupported = unsupported_ops(target)
    if unsupported:
        lines += ["", "# Not supported (run on the host):"]
        lines += [f"#   {row}" for row in _wrap(", ".join(unsupported), 84)]
    return lines


def _limits_set(support: OpSupport) -> Iterable[tuple[str, object]]:
    """The limits of `support` that restrict the op, in the schema's order."""
    for limit in LIMITS:
        value = getattr(support, limit.key)
        if limit.key in OP_LIMITS[support.op] and value != _DEFAULTS[limit.key]:
            yield limit.key, value


def _wrap(text: str, width: int) -> list[str]:
    rows: list[str] = []
    row = ""
    for word in text.split(" "):
        if row and len(row) + 1 + len(word) > width:
            rows.append(row)
            row = word
        else:
            row = f"{row} {word}" if row else word
    return [*rows, row] if row else rows


def unsupported_ops(target: Target) -> list[str]:
    """The nn ops (without `nn.`) that are not in the target's support table, sorted."""
    return sorted(op for op in OP_LIMITS if op not in target.ops)


# --------------------------------------------------------------------------------------
# The support table in Markdown


def _sizes(value: int, dims: int) -> str:
    return "x".join([str(value)] * dims)


def _numbers(values: Iterable[float]) -> str:
    return ", ".join(format_number(v) for v in values)


def describe_limit(support: OpSupport, key: str, value: object) -> str:
    """A limit in words: `kernels up to 7x7`, `strides 1, 2`, `uses the LUT`."""
    dims = max(support.spatial_dims or (2,))
    match key, value:
        case "max_rank", int():
            return f"rank up to {value}"
        case "max_dimension", int():
            return f"dimensions up to {value}"
        case "layouts", tuple():
            return f"layouts {', '.join(value)}"
        case "spatial_dims", tuple():
            return " and ".join(f"{d}-D" for d in value) + (" only" if len(value) == 1 else "")
        case "max_batch", int():
            return f"batch up to {value}"
        case "max_kernel", int():
            return f"kernels up to {_sizes(value, dims)}"
        case "max_dilated_kernel", int():
            return f"dilated kernels up to {_sizes(value, dims)}"
        case "max_kernel_elements", int():
            return f"kernels spanning up to {value} elements"
        case "max_padded_kernel", int():
            return f"kernels up to {_sizes(value, dims)} when padded"
        case "strides" | "dilations" | "steps" | "blocksizes", tuple():
            noun = {"blocksizes": "block sizes"}.get(key, key)
            return f"{noun} {_numbers(value)}"
        case "max_padding", int():
            return f"padding up to {value} per side"
        case "max_input_channels", int():
            return f"up to {value} input channels"
        case "max_output_channels", int():
            return f"up to {value} output channels"
        case "groups", str():
            return {
                "none": "no grouped convolution",
                "depthwise": "group 1 or depthwise",
                "any": "any grouping",
            }[value]
        case "activations", tuple():
            return f"fused activations: {', '.join(value)}" if value else "no fused activation"
        case "constant_weights", True:
            return "constant weights"
        case "max_m" | "max_k" | "max_n", int():
            return f"{key[-1].upper()} up to {value}"
        case "supports_transposed_lhs", False:
            return "no transposed lhs"
        case "supports_ceil_mode", False:
            return "no ceil_mode"
        case "supports_count_include_pad", False:
            return "no count_include_pad with padding"
        case "supports_broadcast", False:
            return "no broadcasting"
        case "max_inputs", int():
            return f"up to {value} inputs"
        case "needs_lut", True:
            return "uses the LUT"
        case "last_axis_only", True:
            return "last axis only"
        case "max_axis_size", int():
            return f"axis size up to {value}"
        case "max_reduced_elements", int():
            return f"up to {value} elements per reduction"
        case "max_reduced_axes", int():
            return f"up to {value} reduced axes"
        case "max_outputs", int():
            return f"up to {value} outputs"
        case "perms", tuple():
            return "permutations " + ", ".join(str(list(perm)) for perm in value)
        case "modes", tuple():
            return f"modes {', '.join(value)}"
        case "coordinate_transformation_modes", tuple():
            return f"coordinate modes {', '.join(value)}"
        case "nearest_modes", tuple():
            return f"nearest modes {', '.join(value)}"
        case "scales", tuple():
            return f"scales {_numbers(value)}"
        case "min_scale", float():
            return f"scales down to {format_number(value)}"
        case "max_scale", float():
            return f"scales up to {format_number(value)}"
    raise ValueError(f"no description of {key} = {value!r}")  # a limit added to the schema


def support_table_markdown(target: Target) -> str:
    """The support table as Markdown: a row per supported op, then the others."""
    ops = target.ops.values()
    shared = {
        key: next(iter(values))
        for key in GENERAL_LIMITS
        if len(values := {getattr(support, key) for support in ops}) == 1
        and next(iter(values)) is not None
    }
    lines = [
        f"# Support table of {target.name}",
        "",
        f"{target.description[:1].upper()}{target.description[1:]}.",
        "",
        f"{summary(target)}. Source: `{target.source}`.",
        "",
        f"{len(target.ops)} of {len(OP_LIMITS)} kinds of op run on the NPU, within the limits "
        "below; the others run on the host CPU. `nn.constant` is data and always available.",
    ]
    if shared:
        every = "; ".join(describe_limit(_any(ops), key, value) for key, value in shared.items())
        lines += ["", f"Every op: {every}."]
    lines += ["", "| op | limits |", "|---|---|"]
    for name, support in target.ops.items():
        limits = [
            describe_limit(support, key, value)
            for key, value in _limits_set(support)
            if key not in shared
        ]
        if support.needs_lut and not target.lut.supported:
            limits.append("but the target has no LUT, so it runs on the host")
        lines.append(f"| `{kind_label(name)}` | {'; '.join(limits) or 'none'} |")
    unsupported = unsupported_ops(target)
    lines += ["", "## Not supported", ""]
    if unsupported:
        lines.append(", ".join(f"`{kind_label(op)}`" for op in unsupported))
    else:
        lines.append("None: every nn op can run on the NPU.")
    return "\n".join(lines) + "\n"


def _any(ops: Iterable[OpSupport]) -> OpSupport:
    return next(iter(ops))


def limit_help(key: str) -> str:
    """The documentation of a limit (for `irc-target` and docs)."""
    return LIMIT_BY_KEY[key].help


# --------------------------------------------------------------------------------------
# The reference tables of docs/targets.md


_KIND_NAMES = {
    "int": "integer",
    "ints": "list of integers",
    "number": "number",
    "bool": "boolean",
    "string": "string",
    "strings": "list of strings",
}


def _field_constraints(spec: Field) -> str:
    parts = []
    if spec.floor is not None:
        parts.append(f">= {format_number(spec.floor)}")
    elif spec.minimum is not None:
        relation = ">" if spec.exclusive_minimum else ">="
        parts.append(f"{relation} {format_number(spec.minimum)}")
    if spec.maximum is not None:
        parts.append(f"<= {format_number(spec.maximum)}")
    if spec.power_of_two:
        parts.append("a power of two")
    if spec.key == "int8":
        parts.append("must be true")
    if spec.key == "name":
        parts.append("letters, digits, `.`, `_`, `-`")
    if spec.zero_allowed:
        parts.append("or 0")
    if spec.choices:
        listing = ", ".join(f'`"{choice}"`' for choice in spec.choices)
        parts.append(f"only {listing}" if len(spec.choices) == 1 else f"one of {listing}")
    if not spec.required and spec.required_when == "output_block":
        parts.append("required with `output_block`; omit otherwise")
    elif not spec.required and spec.required_when:
        parts.append(f"required when `{spec.required_when} = true`; omit otherwise")
    elif not spec.required and spec.default == ():
        parts.append("optional")
    elif not spec.required and isinstance(spec.default, bool):
        parts.append(f"optional (default {str(spec.default).lower()})")
    elif not spec.required and isinstance(spec.default, str):
        parts.append(f'optional (default `"{spec.default}"`)')
    elif not spec.required:
        parts.append(f"optional (default {format_number(spec.default)})")  # type: ignore[arg-type]
    return ", ".join(parts) or "required"


def _limit_value(limit: Limit) -> str:
    def bounds() -> str:
        return f"{format_number(limit.minimum)} to {format_number(limit.maximum)}"

    if limit.key == "modes":
        listing = "; ".join(f"{op}: {', '.join(modes)}" for op, modes in MODE_CHOICES.items())
        return f"list of the op's `mode` values ({listing})"
    return {
        "count": f"integer, {bounds()}",
        "size": f"integer, {bounds()}",
        "ints": f"list of integers, {bounds()}",
        "choice": "one of " + ", ".join(f"`{c}`" for c in limit.choices),
        "choices": "list of " + ", ".join(f"`{c}`" for c in limit.choices),
        "flag": "boolean",
        "number": f"number, > {format_number(limit.minimum)}, <= {format_number(limit.maximum)}",
        "numbers": f"list of numbers, > {format_number(limit.minimum)}, "
        f"<= {format_number(limit.maximum)}",
        "perms": "list of permutations (lists of axes)",
    }[limit.kind]


def reference_markdown() -> str:
    """The tables of docs/targets.md that describe every key and limit (generated
    from irc/targets/schema.py; tests/test_targets.py checks that the page has them)."""
    lines: list[str] = []
    memories = (f"{MEMORIES_TABLE}.<name>", "one memory of the hierarchy", MEMORY_FIELDS)
    tables = [(section.name, section.help, section.fields) for section in SECTIONS]
    tables.insert(tables.index((PLACEMENT.name, PLACEMENT.help, PLACEMENT.fields)), memories)
    for name, help_text, fields in tables:
        lines += [
            f"### `[{name}]`: {help_text}",
            "",
            "| key | type | unit | meaning | constraints |",
            "|---|---|---|---|---|",
        ]
        for spec in fields:
            cells = (
                f"`{spec.key}`",
                _KIND_NAMES[spec.kind],
                spec.unit or "-",
                spec.help,
                _field_constraints(spec),
            )
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    lines += [
        "### Limits of `[ops.<name>]`",
        "",
        "| limit | value | meaning | ops |",
        "|---|---|---|---|",
    ]
    every_op = set(OP_LIMITS)
    for limit in LIMITS:
        ops = {op for op, keys in OP_LIMITS.items() if limit.key in keys}
        applies = "every op" if ops == every_op else ", ".join(f"`{op}`" for op in sorted(ops))
        row = (f"`{limit.key}`", _limit_value(limit), limit.help, applies)
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |")
    return "\n".join(lines) + "\n"
