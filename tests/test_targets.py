"""Targets: the loader's diagnostics, the presets, the support checks, the active target.

- every kind of mistake in a target file gives exactly one diagnostic, at the line and
  column of the offending key, with a hint; all problems of a file come at once;
- the presets load, carry the published figures they claim, and round-trip through
  `irc-target show`;
- `unsupported_reasons` implements every limit, in both layouts: an op just within a
  limit is supported, one just beyond it gets the exact reason;
- `using_target` / `require_target`, and `irc-opt --target` making the target active;
- the format (irc/targets/schema.py) agrees with the nn dialect and with docs/targets.md.
"""

from __future__ import annotations

import dataclasses
import math
import random
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    f32,
    i64,
)
from xdsl.dialects.func import ReturnOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass

from irc import passes
from irc.diagnostics import Diagnostic, IrcError, Severity, emit
from irc.dialects import base, nn
from irc.targets import (
    Cores,
    OpSupport,
    Placement,
    Target,
    active_target,
    load_target,
    parse_target,
    preset_names,
    require_target,
    schema,
    using_target,
)
from irc.targets.loader import preset_path
from irc.targets.positions import key_positions
from irc.targets.render import (
    reference_markdown,
    summary,
    support_table_markdown,
    target_toml,
)
from irc.targets.support import unsupported_reasons
from irc.tools.opt import main as irc_opt
from irc.tools.target import main as irc_target

REPOSITORY = Path(__file__).resolve().parent.parent
INPUTS = REPOSITORY / "tests" / "filecheck" / "tools" / "irc-target" / "Inputs"
BASE = (INPUTS / "my-npu.toml").read_text()
"""A small valid target file; the loader tests edit it."""
DESCRIPTION = 'description = "a 64-MAC NPU for keyword spotting"\n'
"""The last line of BASE's [target]: a table added after it comes second, as [cores]."""


# --------------------------------------------------------------------------------------
# The loader: one clear diagnostic per mistake, at the right key


def edited(old: str, new: str, text: str = BASE) -> str:
    assert text.count(old) == 1, f"{old!r} must occur once"
    return text.replace(old, new)


def diagnostics_of(text: str) -> list[Diagnostic]:
    with pytest.raises(IrcError) as failure:
        parse_target(text, "t.toml")
    return failure.value.diagnostics


def line_of(text: str, marker: str) -> int:
    """The line (from 1) that is `marker`, or else the one that starts with it."""
    lines = [n for n, line in enumerate(text.splitlines(), 1) if line == marker]
    lines = lines or [n for n, line in enumerate(text.splitlines(), 1) if line.startswith(marker)]
    assert len(lines) == 1, f"{marker!r} starts {len(lines)} lines"
    return lines[0]


@dataclass(frozen=True)
class Mistake:
    """An edit of the base file and the one diagnostic it must cause."""

    name: str
    old: str
    new: str
    at: str
    """The text that starts the line the diagnostic points at (column 1)."""
    message: str
    hint: str | None
    """Text the hint must contain (None: not checked)."""


MISTAKES = [
    # missing fields and tables
    Mistake(
        "missing field",
        'port = "axi1"\n',
        "",
        "[memories.flash]",
        "[memories.flash] is missing 'port'",
        "add port = ... (port: the port it sits on",
    ),
    Mistake(
        "missing lut entries",
        "[lut]\nsupported = false\n",
        "[lut]\nsupported = true\n",
        "[lut]",
        "[lut] is missing 'entries' (the table's size)",
        "add entries = 256",
    ),
    Mistake(
        "missing table",
        '[placement]\nweights = "flash"\nactivations = ["system_sram"]\n',
        "",
        "# A small",
        "missing table [placement]",
        "add [placement] with weights, activations",
    ),
    # wrong types
    Mistake(
        "string for a number",
        "clock_mhz = 200\n",
        'clock_mhz = "200"\n',
        "clock_mhz",
        'mac_array.clock_mhz must be a number, got the string "200"',
        "write the number without quotes: 200",
    ),
    Mistake(
        "float for an integer",
        "rows = 8\n",
        "rows = 8.0\n",
        "rows",
        "mac_array.rows must be an integer, got the float 8.0",
        "write 8",
    ),
    Mistake(
        "boolean for an integer",
        "lanes = 4\n",
        "lanes = true\n",
        "lanes",
        "vector_unit.lanes must be an integer, got the boolean true",
        "lanes takes an integer: elementwise int8 operations per cycle",
    ),
    Mistake(
        "string for a boolean",
        "int16 = false\n",
        'int16 = "false"\n',
        "int16",
        'data_types.int16 must be true or false, got the string "false"',
        "write false without quotes",
    ),
    Mistake(
        "number for a string",
        'name = "my-npu"\n',
        "name = 5\n",
        "name",
        "target.name must be a string, got the integer 5",
        "name takes a string: the target's name",
    ),
    Mistake(
        "table written as a key",
        "[vector_unit]\nlanes = 4\n",
        "vector_unit = { lanes = 4 }\n",
        "vector_unit",
        "unknown key 'vector_unit' in [placement]",
        "[vector_unit] is a table of its own: start it with a line [vector_unit]",
    ),
    Mistake(
        "scalar for a list limit",
        "strides = [1, 2]\n",
        "strides = 2\n",
        "strides",
        "ops.conv.strides must be an array of integers, got the integer 2",
        "write it in brackets: strides = [...]",
    ),
    Mistake(
        "float for a count limit",
        "max_kernel = 3\n",
        "max_kernel = 3.5\n",
        "max_kernel = 3.5",
        "ops.conv.max_kernel must be a positive integer, got the float 3.5",
        "max_kernel: largest kernel size along each spatial axis",
    ),
    Mistake(
        "list for a choice limit",
        'groups = "depthwise"\n',
        'groups = ["depthwise"]\n',
        "groups",
        "ops.conv.groups must be one of none, depthwise, any, got an array",
        "groups: grouped convolutions",
    ),
    Mistake(
        "number for a flag limit",
        "constant_weights = true\n",
        "constant_weights = 1\n",
        "constant_weights",
        "ops.conv.constant_weights must be true or false, got the integer 1",
        "constant_weights: true: the weights",
    ),
    # absurd values
    Mistake(
        "zero clock",
        "clock_mhz = 200\n",
        "clock_mhz = 0\n",
        "clock_mhz",
        "mac_array.clock_mhz = 0 must be more than 0",
        "clock_mhz: the NPU clock, in MHz",
    ),
    Mistake(
        "negative clock",
        "clock_mhz = 200\n",
        "clock_mhz = -5\n",
        "clock_mhz",
        "mac_array.clock_mhz = -5 must be more than 0",
        "clock_mhz: the NPU clock, in MHz",
    ),
    Mistake(
        "infinite clock",
        "clock_mhz = 200\n",
        "clock_mhz = inf\n",
        "clock_mhz",
        "mac_array.clock_mhz must be a finite number, got inf",
        None,
    ),
    Mistake(
        "absurd clock",
        "clock_mhz = 200\n",
        "clock_mhz = 200000\n",
        "clock_mhz",
        "mac_array.clock_mhz = 200000 must be at most 10000",
        "clock_mhz: the NPU clock, in MHz",
    ),
    Mistake(
        "zero SRAM",
        "size_kib = 128\n",
        "size_kib = 0\n",
        "size_kib = 0",
        "memories.sram.size_kib = 0 must be at least 1",
        "size_kib: capacity, in KiB",
    ),
    Mistake(
        "zero bandwidth",
        "read_bandwidth_gb_per_s = 0.2\n",
        "read_bandwidth_gb_per_s = 0\n",
        "read_bandwidth_gb_per_s = 0",
        "memories.flash.read_bandwidth_gb_per_s = 0 must be more than 0",
        "read_bandwidth_gb_per_s: sustained read bandwidth",
    ),
    Mistake(
        "negative latency",
        "read_latency_cycles = 50\n",
        "read_latency_cycles = -1\n",
        "read_latency_cycles = -1",
        "memories.flash.read_latency_cycles = -1 must be at least 0",
        "read_latency_cycles: NPU clock cycles",
    ),
    # below or above what real hardware has (issue 19: a 300-digit time, a traceback)
    Mistake(
        "vanishing clock",
        "clock_mhz = 200\n",
        "clock_mhz = 1e-300\n",
        "clock_mhz",
        "mac_array.clock_mhz = 1e-300 must be at least 1",
        "clock_mhz: the NPU clock, in MHz",
    ),
    Mistake(
        "vanishing memory bandwidth",
        "read_bandwidth_gb_per_s = 0.2\n",
        "read_bandwidth_gb_per_s = 1e-9\n",
        "read_bandwidth_gb_per_s = 1e-9",
        "memories.flash.read_bandwidth_gb_per_s = 1e-09 must be at least 0.001",
        "read_bandwidth_gb_per_s: sustained read bandwidth",
    ),
    Mistake(
        "vanishing host rate",
        "gmacs_per_s = 0.2\n",
        "gmacs_per_s = 5e-324\n",
        "gmacs_per_s",
        "host.gmacs_per_s = 5e-324 must be at least 0.001",
        "gmacs_per_s: multiply-accumulates per second",
    ),
    Mistake(
        "vanishing host bandwidth",
        "bandwidth_gb_per_s = 0.4\n",
        "bandwidth_gb_per_s = 0.0001\n",
        "bandwidth_gb_per_s = 0.0001",
        "host.bandwidth_gb_per_s = 0.0001 must be at least 0.001",
        "bandwidth_gb_per_s: copies between host and NPU memory",
    ),
    Mistake(
        "a TiB of SRAM",
        "size_kib = 128\n",
        "size_kib = 1073741824\n",
        "size_kib = 1073741824",
        "memories.sram.size_kib = 1073741824 must be at most 262144",
        "size_kib: capacity, in KiB",
    ),
    Mistake(
        "huge float clock",
        "clock_mhz = 200\n",
        "clock_mhz = 1e300\n",
        "clock_mhz",
        "mac_array.clock_mhz = 1e+300 must be at most 10000",
        "clock_mhz: the NPU clock, in MHz",
    ),
    Mistake(
        "integer too large for a float",
        "read_latency_cycles = 50\n",
        f"read_latency_cycles = {10**400}\n",
        f"read_latency_cycles = {10**400}",
        "memories.flash.read_latency_cycles = 1.000e+400 must be at most 1000000",
        "read_latency_cycles: NPU clock cycles",
    ),
    Mistake(
        "integer too large for a float, for a number",
        "transition_us = 10\n",
        f"transition_us = -{10**400}\n",
        "transition_us",
        "host.transition_us = -1.000e+400 must be at least 0",
        "transition_us: synchronisation cost",
    ),
    Mistake(
        "integer too large for a float, in a limit",
        "max_kernel = 3\n",
        f"max_kernel = {10**400}\n",
        "max_kernel = 1",
        "ops.conv.max_kernel = 1.000e+400 is out of range: it must be between 1 and 65536",
        "max_kernel: largest kernel size",
    ),
    Mistake(
        "integer too large for a float, in a number limit",
        "[ops.add]\n",
        f"[ops.add]\n[ops.resize]\nmax_scale = {10**400}\n",
        "max_scale",
        "ops.resize.max_scale = 1.000e+400 is out of range: it must be more than 0 and at "
        "most 1024",
        "max_scale: largest scale factor",
    ),
    Mistake(
        "integer too large for a float, in a list of numbers",
        "[ops.add]\n",
        f"[ops.add]\n[ops.resize]\nscales = [2, {10**400}]\n",
        "scales",
        "ops.resize.scales holds 1.000e+400, which is out of range: values must be more "
        "than 0 and at most 1024",
        "scales: allowed scale factors",
    ),
    Mistake(
        "alignment not a power of two",
        "size_kib = 128\nbanks = 2\nalignment_bytes = 16\n",
        "size_kib = 128\nbanks = 2\nalignment_bytes = 48\n",
        "alignment_bytes = 48",
        "memories.sram.alignment_bytes = 48 is not a power of two (such as 32 or 64)",
        "alignment_bytes: every buffer starts at a multiple of this",
    ),
    Mistake(
        "burst not a power of two",
        "burst_bytes = 16\n",
        "burst_bytes = 100\n",
        "burst_bytes = 100",
        "memories.sram.burst_bytes = 100 is not a power of two (such as 64 or 128)",
        "burst_bytes: bytes per burst",
    ),
    Mistake(
        "more banks than bytes",
        "size_kib = 128\nbanks = 2\n",
        "size_kib = 1\nbanks = 2048\n",
        "banks",
        "memories.sram.banks = 2048 is more than its 1024 bytes",
        "give the number of banks the memory is divided into",
    ),
    Mistake(
        "SRAM not whole bank rows",
        "size_kib = 128\nbanks = 2\n",
        "size_kib = 100\nbanks = 3\n",
        "size_kib = 100",
        "memories.sram.size_kib = 100 is not a whole number of aligned bank rows: 102400 "
        "bytes is not a multiple of banks x alignment_bytes = 3 x 16 = 48",
        "make size_kib a multiple of 3, or change banks or alignment_bytes",
    ),
    # an array of micro-blocks (Ethos-U, as Vela counts it)
    Mistake(
        "micro-block key without output_block",
        "clock_mhz = 200\n",
        "clock_mhz = 200\ninput_block_depth = 32\n",
        "input_block_depth",
        "mac_array.input_block_depth is set but output_block is not",
        "add output_block = [rows, columns, channels]",
    ),
    Mistake(
        "output_block of two sizes",
        "clock_mhz = 200\n",
        "clock_mhz = 200\noutput_block = [2, 2]\ninput_block_depth = 16\n"
        "weight_bytes_per_cycle = 8\ntaps_per_step = 4\noutput_elements_per_cycle = 4\n",
        "output_block",
        "mac_array.output_block has 2 sizes; it takes 3",
        "output_block = [rows, columns, channels]",
    ),
    Mistake(
        "negative size in output_block",
        "clock_mhz = 200\n",
        "clock_mhz = 200\noutput_block = [2, -2, 8]\ninput_block_depth = 16\n"
        "weight_bytes_per_cycle = 8\ntaps_per_step = 4\noutput_elements_per_cycle = 4\n",
        "output_block",
        "mac_array.output_block = -2 must be at least 1",
        "output_block: an array of micro-blocks",
    ),
    Mistake(
        "micro-block without its weights' rate",
        "clock_mhz = 200\n",
        "clock_mhz = 200\noutput_block = [2, 2, 2]\ninput_block_depth = 8\n"
        "taps_per_step = 4\noutput_elements_per_cycle = 4\n",
        "[mac_array]",
        "[mac_array] is missing 'weight_bytes_per_cycle' (output_block is set)",
        "add weight_bytes_per_cycle = ...",
    ),
    Mistake(
        "micro-block of part of a cycle",
        "clock_mhz = 200\n",
        "clock_mhz = 200\noutput_block = [2, 2, 2]\ninput_block_depth = 4\n"
        "weight_bytes_per_cycle = 8\ntaps_per_step = 4\noutput_elements_per_cycle = 4\n",
        "output_block",
        "a micro-block of 2x2x2 outputs over 4 input channels is 32 MACs, not a whole number "
        "of cycles of the 64-MAC array",
        "its outputs x input depth a multiple of rows x columns",
    ),
    # the memory hierarchy and the placement
    Mistake(
        "memory that is not a table",
        "[memories.system_sram] # the activations\n",
        '[memories]\ndram = "big"\n[memories.system_sram] # the activations\n',
        'dram = "big"',
        'memories.dram must be a table, got the string "big"',
        "write [memories.dram] followed by size_kib",
    ),
    Mistake(
        "memory name that is no memory space",
        "[memories.system_sram] # the activations\n",
        "[memories.System-SRAM] # the activations\n",
        "[memories.System-SRAM]",
        "memory name 'System-SRAM' is not a valid name",
        "use lower-case letters, digits and '_'",
    ),
    Mistake(
        "no local SRAM",
        "[memories.sram]       # the NPU's local SRAM: tiles are computed here\n",
        "[memories.scratch]\n",
        "[memories.scratch]",
        "[memories] has no 'sram': the NPU's local SRAM, where compute commands work",
        "add [memories.sram] with size_kib",
    ),
    Mistake(
        "negative write bandwidth",
        "write_bandwidth_gb_per_s = 1.6\n",
        "write_bandwidth_gb_per_s = -1.6\n",
        "write_bandwidth_gb_per_s = -1.6",
        "memories.system_sram.write_bandwidth_gb_per_s = -1.6 must be at least 0",
        "write_bandwidth_gb_per_s: sustained write bandwidth (0: read-only, as flash)",
    ),
    Mistake(
        "vanishing write bandwidth",
        "write_bandwidth_gb_per_s = 1.6\n",
        "write_bandwidth_gb_per_s = 1e-6\n",
        "write_bandwidth_gb_per_s = 1e-6",
        "memories.system_sram.write_bandwidth_gb_per_s = 1e-06 must be at least 0.001",
        "write_bandwidth_gb_per_s",
    ),
    Mistake(
        "writes in flight for a read-only memory",
        "max_writes = 0\n",
        "max_writes = 2\n",
        "max_writes = 2",
        "memories.flash.max_writes = 2 but write_bandwidth_gb_per_s = 0",
        "a read-only memory has write_bandwidth_gb_per_s = 0 and max_writes = 0",
    ),
    Mistake(
        "zero reads in flight",
        "max_reads = 8\n",
        "max_reads = 0\n",
        "max_reads = 0",
        "memories.sram.max_reads = 0 must be at least 1",
        "max_reads: read bursts in flight at once",
    ),
    Mistake(
        "port that is not a string",
        'port = "axi0"\n',
        "port = 0\n",
        "port = 0",
        "memories.system_sram.port must be a string, got the integer 0",
        "port takes a string",
    ),
    Mistake(
        "read-only local SRAM",
        "write_bandwidth_gb_per_s = 6.4\nread_latency_cycles = 0\nwrite_latency_cycles = 0\n"
        "burst_bytes = 16\nmax_reads = 8\nmax_writes = 8\n",
        "write_bandwidth_gb_per_s = 0\nread_latency_cycles = 0\nwrite_latency_cycles = 0\n"
        "burst_bytes = 16\nmax_reads = 8\nmax_writes = 0\n",
        "write_bandwidth_gb_per_s = 0",
        "memories.sram is read-only: the NPU writes its tiles there",
        "give it a write bandwidth above 0",
    ),
    Mistake(
        "placement of an unknown memory",
        'weights = "flash"\n',
        'weights = "flahs"\n',
        'weights = "flahs"',
        "placement.weights names no memory: 'flahs'",
        "did you mean 'flash'?",
    ),
    Mistake(
        "activations in read-only memory",
        'activations = ["system_sram"]\n',
        'activations = ["flash"]\n',
        'activations = ["flash"]',
        "placement.activations names 'flash', which is read-only",
        "activations are written: name a memory with a write bandwidth",
    ),
    Mistake(
        "weights in the local SRAM",
        'weights = "flash"\n',
        'weights = "sram"\n',
        'weights = "sram"',
        "placement.weights = 'sram': the NPU's local SRAM holds tiles only",
        "name a system memory: flash, system_sram",
    ),
    Mistake(
        "activations as a string",
        'activations = ["system_sram"]\n',
        'activations = "system_sram"\n',
        'activations = "system_sram"',
        'placement.activations must be a list of strings, got the string "system_sram"',
        'write a list: activations = ["system_sram"]',
    ),
    Mistake(
        "no memory of activations",
        'activations = ["system_sram"]\n',
        "activations = []\n",
        "activations = []",
        "placement.activations is empty",
        "activations: the memories that hold the tensors between layers",
    ),
    Mistake(
        "a memory of activations twice",
        'activations = ["system_sram"]\n',
        'activations = ["system_sram", "system_sram"]\n',
        'activations = ["system_sram", "system_sram"]',
        "placement.activations lists 'system_sram' twice",
        "list each memory once, fastest first",
    ),
    Mistake(
        "int8 false",
        "int8 = true\n",
        "int8 = false\n",
        "int8",
        "data_types.int8 = false: every target must support int8",
        "set int8 = true: irc compiles models to int8",
    ),
    Mistake(
        "int16 without its cycles",
        "int16 = false\n",
        "int16 = true\n",
        "[data_types]",
        "[data_types] is missing 'int16_cycles' (int16 = true)",
        "add int16_cycles = 2",
    ),
    Mistake(
        "int16 without its accumulator",
        "int16 = false\n",
        "int16 = true\nint16_cycles = 2\n",
        "[data_types]",
        "[data_types] is missing 'int16_accumulator_bits' (int16 = true)",
        "add int16_accumulator_bits = 48",
    ),
    Mistake(
        "int16 accumulator without int16",
        "int16 = false\n",
        "int16 = false\nint16_accumulator_bits = 48\n",
        "int16_accumulator_bits",
        "data_types.int16_accumulator_bits = 48 but int16 = false",
        "remove int16_accumulator_bits, or set int16 = true",
    ),
    Mistake(
        "int16 cycles without int16",
        "int16 = false\n",
        "int16 = false\nint16_cycles = 2\n",
        "int16_cycles",
        "data_types.int16_cycles = 2 but int16 = false",
        "remove int16_cycles, or set int16 = true",
    ),
    Mistake(
        "lut entries without a lut",
        "[lut]\nsupported = false\n",
        "[lut]\nsupported = false\nentries = 256\n",
        "entries",
        "lut.entries = 256 but lut.supported = false",
        "remove entries, or set supported = true",
    ),
    Mistake(
        "too small a lut",
        "[lut]\nsupported = false\n",
        "[lut]\nsupported = true\nentries = 128\n",
        "entries",
        "lut.entries = 128 must be at least 256",
        "entries: entries of the table",
    ),
    Mistake(
        "empty name",
        'name = "my-npu"\n',
        'name = "  "\n',
        "name",
        "target.name is empty",
        "name: the target's name",
    ),
    Mistake(
        "bad name",
        'name = "my-npu"\n',
        'name = "my npu"\n',
        "name",
        'target.name "my npu" is not a valid name',
        "use letters, digits, '.', '_' and '-'",
    ),
    # the cores
    Mistake(
        "string for the cores' count",
        DESCRIPTION,
        f'{DESCRIPTION}[cores]\ncount = "2"\n',
        "count",
        'cores.count must be an integer, got the string "2"',
        "write the number without quotes: 2",
    ),
    Mistake(
        "no cores",
        DESCRIPTION,
        f"{DESCRIPTION}[cores]\ncount = 0\n",
        "count",
        "cores.count = 0 must be at least 1",
        "count: NPU cores, each with its own MAC array",
    ),
    Mistake(
        "too many cores",
        DESCRIPTION,
        f"{DESCRIPTION}[cores]\ncount = 65\n",
        "count",
        "cores.count = 65 must be at most 64",
        "count: NPU cores",
    ),
    Mistake(
        "SRAM shared by the cores",
        DESCRIPTION,
        f'{DESCRIPTION}[cores]\ncount = 2\nsram = "shared"\n',
        "sram",
        'cores.sram = "shared" is not supported: the only value is "private"',
        "shared SRAM across cores is not supported yet",
    ),
    Mistake(
        "misspelt private SRAM",
        DESCRIPTION,
        f'{DESCRIPTION}[cores]\nsram = "privat"\n',
        "sram",
        'cores.sram = "privat" is not supported: the only value is "private"',
        "did you mean 'private'?",
    ),
    Mistake(
        "negative sync latency",
        DESCRIPTION,
        f"{DESCRIPTION}[cores]\ncount = 2\nsync_latency_cycles = -1\n",
        "sync_latency_cycles",
        "cores.sync_latency_cycles = -1 must be at least 0",
        "sync_latency_cycles: NPU clock cycles from a signal on one core",
    ),
    Mistake(
        "fractional sync latency",
        DESCRIPTION,
        f"{DESCRIPTION}[cores]\nsync_latency_cycles = 2.5\n",
        "sync_latency_cycles",
        "cores.sync_latency_cycles must be an integer, got the float 2.5",
        "sync_latency_cycles takes an integer",
    ),
    Mistake(
        "unknown key in [cores]",
        DESCRIPTION,
        f"{DESCRIPTION}[cores]\nthreads = 2\n",
        "threads = 2",
        "unknown key 'threads' in [cores]",
        "[cores] takes count, sram, sync_latency_cycles",
    ),
    Mistake(
        "misspelt key in [cores]",
        DESCRIPTION,
        f"{DESCRIPTION}[cores]\ncounts = 2\n",
        "counts",
        "unknown key 'counts' in [cores]",
        "did you mean 'count' (count: NPU cores",
    ),
    Mistake(
        "cores as a number",
        "# A small",
        "cores = 2\n# A small",
        "cores = 2",
        "[cores] must be a table, got the integer 2",
        "start it with a line [cores], followed by count, sram, sync_latency_cycles",
    ),
    # unknown keys and tables
    Mistake(
        "misspelt key",
        "banks = 2\n",
        "bankz = 2\n",
        "bankz",
        "unknown key 'bankz' in [memories.sram]",
        "did you mean 'banks' (banks: number of banks (buffers of a layer in separate banks "
        "do not contend))? [memories.sram] takes size_kib, banks, alignment_bytes",
    ),
    Mistake(
        "key in another unit",
        "size_kib = 128\n",
        "size_mib = 128\n",
        "size_mib",
        "unknown key 'size_mib' in [memories.sram]",
        "did you mean 'size_kib' (size_kib: capacity, in KiB)?",
    ),
    Mistake(
        "key in the wrong table",
        'weights = "flash"\n',
        'weights = "flash"\nlanes = 8\n',
        "lanes = 8",
        "unknown key 'lanes' in [placement]",
        "'lanes' belongs in [vector_unit]",
    ),
    Mistake(
        "unknown table",
        "[vector_unit]",
        "[vector_units]\nlanes = 4\n[vector_unit]",
        "[vector_units]",
        "unknown table [vector_units]",
        "did you mean [vector_unit]?",
    ),
    Mistake(
        "key outside any table",
        "# A small",
        'name = "x"\n# A small',
        'name = "x"',
        "key 'name' outside any table",
        "write it under [target]",
    ),
    # the support table
    Mistake(
        "unknown op",
        "[ops.add]",
        "[ops.convolution]",
        "[ops.convolution]",
        "unknown op 'convolution' in the support table",
        "the names are those of nn ops without 'nn.' (docs/nn-ops.md)",
    ),
    Mistake(
        "misspelt op",
        "[ops.add]",
        "[ops.ad]",
        "[ops.ad]",
        "unknown op 'ad' in the support table",
        "did you mean 'add'?",
    ),
    Mistake(
        "ONNX op name",
        "[ops.average_pool]",
        "[ops.AveragePool]",
        "[ops.AveragePool]",
        "unknown op 'AveragePool' in the support table",
        "did you mean 'average_pool'?",
    ),
    Mistake(
        "op with its prefix",
        "[ops.add]",
        '[ops."nn.add"]',
        '[ops."nn.add"]',
        "op names in the support table have no 'nn.' prefix: 'nn.add'",
        "write [ops.add]",
    ),
    Mistake(
        "constants listed",
        "[ops.add]",
        "[ops.constant]\n[ops.add]",
        "[ops.constant]",
        "nn.constant needs no entry: constants are data and always supported",
        "remove [ops.constant]",
    ),
    Mistake(
        "op that is not a table",
        "[ops]                 # limits of every op\nmax_rank = 4\n",
        "[ops]\nmax_rank = 4\nmax_pool = true\n",
        "max_pool = true",
        "ops.max_pool must be a table of limits, got the boolean true",
        "write [ops.max_pool] followed by its limits (an empty table: no limits)",
    ),
    Mistake(
        "limit of another op",
        "[ops.add]\n",
        "[ops.add]\nmax_kernel = 5\n",
        "max_kernel = 5",
        "'max_kernel' is not a limit of nn.add",
        "limits of nn.add: max_rank, max_dimension, activations, supports_broadcast; "
        "'max_kernel' applies to average_pool, conv, conv_transpose, max_pool",
    ),
    Mistake(
        "misspelt limit",
        "max_kernel = 3\n",
        "max_kernal = 3\n",
        "max_kernal",
        "unknown limit 'max_kernal' in [ops.conv]",
        "did you mean 'max_kernel'?",
    ),
    Mistake(
        "misspelt general limit",
        "max_rank = 4",
        "max_rnak = 4",
        "max_rnak",
        "unknown key 'max_rnak' in [ops]",
        "did you mean 'max_rank'?",
    ),
    Mistake(
        "single-op limit in [ops]",
        "max_rank = 4",
        "max_kernel = 4",
        "max_kernel = 4",
        "unknown key 'max_kernel' in [ops]",
        "'max_kernel' is a limit of single ops: write it in their tables",
    ),
    Mistake(
        "general limit out of range",
        "max_rank = 4",
        "max_rank = 0",
        "max_rank",
        "ops.max_rank = 0 is out of range: it must be between 1 and 16",
        "max_rank: largest rank",
    ),
    Mistake(
        "zero kernel",
        "max_kernel = 3\n",
        "max_kernel = 0\n",
        "max_kernel = 0",
        "ops.conv.max_kernel = 0 is out of range: it must be between 1 and 65536",
        "max_kernel: largest kernel size along each spatial axis",
    ),
    Mistake(
        "zero stride",
        "strides = [1, 2]\n",
        "strides = [0, 1]\n",
        "strides",
        "ops.conv.strides holds 0, which is out of range: values must be between 1 and 1024",
        "strides: allowed stride values",
    ),
    Mistake(
        "empty list",
        "strides = [1, 2]\n",
        "strides = []\n",
        "strides",
        "ops.conv.strides is empty: no nn.conv could run",
        "list the allowed values, or remove strides to allow any",
    ),
    Mistake(
        "repeated value",
        "strides = [1, 2]\n",
        "strides = [2, 1, 2]\n",
        "strides",
        "ops.conv.strides lists 2 twice",
        "list each value once",
    ),
    Mistake(
        "non-integer in a list",
        "strides = [1, 2]\n",
        'strides = [1, "2"]\n',
        "strides",
        'ops.conv.strides must hold integers, got the string "2"',
        "strides: allowed stride values",
    ),
    Mistake(
        "unknown choice",
        'groups = "depthwise"\n',
        'groups = "grouped"\n',
        "groups",
        'ops.conv.groups = "grouped" is not one of none, depthwise, any',
        "the values are none, depthwise, any",
    ),
    Mistake(
        "unknown activation",
        'activations = ["relu", "clip"]\n',
        'activations = ["relu", "swish"]\n',
        'activations = ["relu", "swish"]',
        'ops.conv.activations lists "swish", which is not one of relu, clip, leaky_relu, '
        "hard_swish, sigmoid",
        "did you mean 'hard_swish'?",
    ),
    Mistake(
        "unknown mode",
        "[ops.add]\n",
        '[ops.add]\n[ops.resize]\nmodes = ["nearest", "bilinear"]\n',
        "modes",
        'ops.resize.modes lists "bilinear", which is not one of nearest, linear, cubic',
        "did you mean 'linear'? the values are nearest, linear, cubic",
    ),
    Mistake(
        "mode of another op",
        "[ops.add]\n",
        '[ops.add]\n[ops.pad]\nmodes = ["nearest"]\n',
        "modes",
        'ops.pad.modes lists "nearest", which is not one of constant, reflect, edge, wrap',
        "the values are constant, reflect, edge, wrap",
    ),
    Mistake(
        "not a permutation",
        "[ops.add]\n",
        "[ops.add]\n[ops.transpose]\nperms = [[0, 2, 1, 3], [0, 0, 1]]\n",
        "perms",
        "ops.transpose.perms holds [0, 0, 1], which is not a permutation",
        "each permutation lists the axes 0..rank-1 once each",
    ),
    Mistake(
        "zero scale",
        "[ops.add]\n",
        "[ops.add]\n[ops.resize]\nmax_scale = 0\n",
        "max_scale",
        "ops.resize.max_scale = 0 is out of range: it must be more than 0 and at most 1024",
        "max_scale: largest scale factor of a resized axis",
    ),
    Mistake(
        "min scale above max scale",
        "[ops.add]\n",
        "[ops.add]\n[ops.resize]\nmin_scale = 4\nmax_scale = 2\n",
        "min_scale",
        "ops.resize.min_scale = 4 is more than max_scale = 2",
        "the smallest allowed scale must not exceed the largest",
    ),
]


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.name for m in MISTAKES])
def test_each_mistake_gives_one_diagnostic_at_its_key(mistake: Mistake) -> None:
    text = edited(mistake.old, mistake.new)
    diagnostics = diagnostics_of(text)
    assert len(diagnostics) == 1, "\n".join(d.format() for d in diagnostics)
    (diagnostic,) = diagnostics
    assert diagnostic.message == mistake.message
    assert diagnostic.location.file == "t.toml"
    assert (diagnostic.location.line, diagnostic.location.col) == (line_of(text, mistake.at), 1)
    if mistake.hint is not None:
        assert diagnostic.hint is not None and mistake.hint in diagnostic.hint


def located(text: str) -> tuple[str, int | None, int | None]:
    (diagnostic,) = diagnostics_of(text)
    return diagnostic.message, diagnostic.location.line, diagnostic.location.col


def test_an_empty_support_table_is_a_target_whose_npu_runs_nothing() -> None:
    target = parse_target(BASE[: BASE.index("[ops.conv]")], "t.toml")
    assert dict(target.ops) == {}
    # It still renders and loads back the same.
    assert parse_target(target_toml(target), "again.toml").ops == target.ops


def test_keys_are_located_at_their_column() -> None:
    text = edited("clock_mhz = 200\n", '  clock_mhz = "fast"\n')
    message = 'mac_array.clock_mhz must be a number, got the string "fast"'
    assert located(text) == (message, line_of(text, "  clock_mhz"), 3)
    # Keys inside inline tables, and dotted keys.
    text = edited("max_rank = 4", 'max_rank = 4\nresize = { modes = ["cubic", 2] }')
    message = "ops.resize.modes must hold strings, got the integer 2"
    assert located(text) == (message, line_of(text, "resize = {"), 12)
    text = edited("max_rank = 4", "max_rank = 4\npad.max_padding = -1")
    message = "ops.pad.max_padding = -1 is out of range: it must be between 0 and 65536"
    assert located(text) == (message, line_of(text, "pad.max_padding"), 1)


def test_every_problem_is_reported_at_once_in_file_order() -> None:
    diagnostics = diagnostics_of((INPUTS / "several-errors.toml").read_text())
    assert [(d.location.line, d.message.split(":")[0]) for d in diagnostics] == [
        (10, 'mac_array.clock_mhz must be a number, got the string "200"'),
        (19, "memories.sram.alignment_bytes = 48 is not a power of two (such as 32 or 64)"),
        (20, "unknown key 'bankz' in [memories.sram]"),
        (70, "unknown op 'MaxPool' in the support table"),
        (75, 'ops.resize.modes lists "bilinear", which is not one of nearest, linear, cubic'),
    ]


def test_a_table_must_be_a_table() -> None:
    text = "vector_unit = 4\n" + edited("[vector_unit]\nlanes = 4\n", "")
    assert located(text) == ("[vector_unit] must be a table, got the integer 4", 1, 1)


def test_an_empty_file_misses_every_table() -> None:
    diagnostics = diagnostics_of("")
    names = [s.name for s in schema.SECTIONS if s.required]  # not [cores]
    names.insert(names.index("placement"), "memories")
    assert [d.message for d in diagnostics] == [
        f"missing table [{name}]" for name in [*names, "ops"]
    ]
    assert {(d.location.line, d.location.col) for d in diagnostics} == {(1, 1)}


@pytest.mark.parametrize(
    ("text", "line", "col", "message"),
    [
        (
            "[target\nname = 1\n",
            1,
            8,
            "invalid TOML: expected ']' at the end of a table declaration",
        ),
        ("[target]\nname = \n", 2, 8, "invalid TOML: invalid value"),
        ("[a]\nx = 1\nx = 2\n", 3, 6, "invalid TOML: cannot overwrite a value"),
        ('[a]\nx = "abc', 2, 9, "invalid TOML: unterminated string at the end of the file"),
    ],
)
def test_toml_syntax_errors_are_located(text: str, line: int, col: int, message: str) -> None:
    (diagnostic,) = diagnostics_of(text)
    assert diagnostic.message == message
    assert (diagnostic.location.line, diagnostic.location.col) == (line, col)
    assert diagnostic.hint is not None and "docs/targets.md" in diagnostic.hint


def test_unreadable_files_and_unknown_names(tmp_path: Path) -> None:
    with pytest.raises(IrcError) as failure:
        load_target(tmp_path / "none.toml")
    (diagnostic,) = failure.value.diagnostics
    assert diagnostic.message == "cannot read the target file: no such file"
    assert diagnostic.location.file == str(tmp_path / "none.toml")
    latin = tmp_path / "latin.toml"
    latin.write_bytes(b"# caf\xe9\n")
    with pytest.raises(IrcError, match="not UTF-8 text"):
        load_target(str(latin))
    with pytest.raises(IrcError) as failure:
        load_target("npu-dmo", origin="irc-test")
    (diagnostic,) = failure.value.diagnostics
    assert diagnostic.format() == (
        "irc-test: error: unknown target 'npu-dmo'\n  hint: did you mean 'npu-demo'? the "
        "presets are edge-2tops, edge-2tops-2c, ethos-u55-128, ethos-u55-256, ethos-u65-256, ethos-u65-512, npu-demo; or give the path "
        "of a .toml target file"
    )


def test_units_are_converted_to_base_units() -> None:
    target = parse_target(BASE, "t.toml")
    assert target.source == "t.toml"
    assert target.mac_array.clock_hz == 200e6
    assert target.mac_array.macs_per_cycle == 64
    assert target.scratch.size_bytes == 128 * 1024
    assert target.scratch.bank_bytes == 64 * 1024
    flash, system_sram = target.memories["flash"], target.memories["system_sram"]
    assert (flash.size_bytes, flash.read_bytes_per_second) == (4 << 20, 0.2e9)
    assert not flash.writable and flash.write_bytes_per_cycle(200e6) == 0
    assert system_sram.banks == 1  # banks may be omitted: one bank
    # 1.6 GB/s at 200 MHz is 8 bytes a cycle; 4 bursts of 32 bytes in flight over a
    # latency of 16 cycles allow 8 too; flash: 1 byte a cycle, 4 x 32 / 50 = 2.56.
    assert system_sram.read_bytes_per_cycle(200e6) == 8.0
    assert flash.read_bytes_per_cycle(200e6) == 1.0
    assert target.placement == Placement("flash", ("system_sram",))
    assert target.weights_memory is flash
    assert target.activation_memories == (system_sram,)
    assert target.host.macs_per_second == 0.2e9
    assert target.host.elements_per_second == 0.1e9
    assert math.isclose(target.host.transition_seconds, 10e-6)
    assert target.host.bandwidth_bytes_per_second == 0.4e9
    assert (target.lut.supported, target.lut.entries) == (False, 0)
    # [ops] limits apply to every op; an op's own value overrides them.
    assert {support.max_rank for support in target.ops.values()} == {4}
    override = parse_target(edited("[ops.relu]", "[ops.relu]\nmax_rank = 2"), "t.toml")
    assert (override.ops["relu"].max_rank, override.ops["add"].max_rank) == (2, 4)
    # Lists are sorted; a list of choices keeps its order; [] means "no fused activation".
    assert target.ops["conv"].strides == (1, 2)
    assert target.ops["conv"].activations == ("relu", "clip")
    none = parse_target(edited('activations = ["relu", "clip"]', "activations = []"), "t.toml")
    assert none.ops["conv"].activations == ()
    assert "max_pool" not in target.ops


def test_key_positions_skip_strings_arrays_and_comments() -> None:
    text = (
        '[target]\nname = "x"  # name = 1\n"quoted.key" = 1\na.b = [\n  1, # c = 2\n  2,\n]\n'
        's = """\nfake = 1\n"""\nt = { inner = 1, deep = { k = "v" } }\n[[arr]]\nz = 1\n'
    )
    positions = key_positions(text)
    assert positions == {
        ("target",): (1, 1),
        ("target", "name"): (2, 1),
        ("target", "quoted.key"): (3, 1),
        ("target", "a"): (4, 1),
        ("target", "a", "b"): (4, 1),
        ("target", "s"): (8, 1),
        ("target", "t"): (11, 1),
        ("target", "t", "inner"): (11, 7),
        ("target", "t", "deep"): (11, 18),
        ("target", "t", "deep", "k"): (11, 27),
        ("arr",): (12, 1),
        ("arr", "z"): (13, 1),
    }


# --------------------------------------------------------------------------------------
# Presets


def test_the_same_target_file_gives_the_same_target_object(tmp_path: Path) -> None:
    """Passes load their target each; the planners' caches are keyed by it, so a
    process that compiles many models must get one object per file text, not one per
    load (tests/test_memory.py measures what that keeps). Another text is another
    target."""
    assert load_target("npu-demo") is load_target("npu-demo")
    path = tmp_path / "demo.toml"
    path.write_text(preset_path("npu-demo").read_text())
    assert load_target(path) is load_target(path)
    assert load_target(path) is not load_target("npu-demo")  # another source
    path.write_text(path.read_text().replace("size_kib = 512", "size_kib = 256", 1))
    assert load_target(path).scratch.size_bytes != load_target("npu-demo").scratch.size_bytes


def test_presets() -> None:
    assert preset_names() == [
        "edge-2tops",
        "edge-2tops-2c",
        "ethos-u55-128",
        "ethos-u55-256",
        "ethos-u65-256",
        "ethos-u65-512",
        "npu-demo",
    ]
    for name in preset_names():
        target = load_target(name)
        assert target.name == name == preset_path(name).stem
        assert target.source == name
        assert target.data_types.int8


def test_npu_demo_is_the_worked_example() -> None:
    target = load_target("npu-demo")
    mac = target.mac_array
    assert (mac.rows, mac.columns, mac.macs_per_cycle, mac.clock_hz) == (16, 16, 256, 500e6)
    ddr = target.memories["ddr"]
    assert ddr.read_bytes_per_second == ddr.write_bytes_per_second == 1e9
    assert target.placement == Placement("ddr", ("ddr",))
    sram = target.scratch
    assert (sram.size_bytes, sram.banks, sram.alignment_bytes) == (512 * 1024, 4, 64)
    # The worked example (docs/targets.md, "npu-demo"): a 3x3 conv of a 56x56x32 int8 map to 64 channels.
    macs = 56 * 56 * 64 * 3 * 3 * 32
    cycles = macs / mac.macs_per_cycle
    assert round(macs / 1e6, 1) == 57.8
    assert round(cycles / 1e3, 1) == 225.8
    assert round(cycles / mac.clock_hz * 1e3, 2) == 0.45
    # Its data through DDR takes less time than the compute, so DMA can hide it.
    data = 3 * 3 * 32 * 64 + 56 * 56 * 32 + 56 * 56 * 64
    assert round(data / ddr.read_bytes_per_second * 1e3, 2) == 0.32
    assert target.lut.supported and target.lut.entries == 256
    assert "lrn" not in target.ops and "div" not in target.ops
    assert target.ops["resize"].modes == ("nearest", "linear")
    assert (target.ops["conv"].max_kernel, target.ops["conv"].strides) == (7, (1, 2))


def test_ethos_presets_carry_vela_figures() -> None:
    u55, u65 = load_target("ethos-u55-256"), load_target("ethos-u65-512")
    # Vela's defaults (architecture_features.py): Ethos_U55_High_End_Embedded with
    # Shared_Sram, Ethos_U65_Client_Server with Dedicated_Sram_384KB.
    assert (u55.mac_array.clock_hz, u65.mac_array.clock_hz) == (500e6, 1e9)
    # The U65-512: two cores of 256 MACs (accelerator_configs: macs 256, cores 2).
    assert (u55.mac_array.macs_per_cycle, u65.mac_array.macs_per_cycle) == (256, 256)
    assert (u55.cores.count, u65.cores.count, u65.cores.sram) == (1, 2, "private")
    assert u65.peak_tops == pytest.approx(2 * 256 * 2 * 1e9 / 1e12)
    # vela.ini: the AXI port's bytes a cycle (8 on a U55, 16 on a U65) times the clock
    # scale: SRAM 1.0, flash 0.125, Client_Server's DRAM 0.75.
    flash, u55_sram = u55.memories["flash"], u55.memories["system_sram"]
    assert (u55_sram.read_bytes_per_second, flash.read_bytes_per_second) == (4e9, 0.5e9)
    assert not flash.writable and (flash.read_latency_cycles, flash.burst_bytes) == (64, 128)
    assert (u55_sram.read_latency_cycles, u55_sram.burst_bytes, u55_sram.max_reads) == (32, 32, 4)
    dram, u65_sram = u65.memories["dram"], u65.memories["system_sram"]
    assert (u65_sram.read_bytes_per_second, dram.read_bytes_per_second) == (16e9, 12e9)
    assert (dram.read_latency_cycles, dram.write_latency_cycles) == (500, 250)
    assert (dram.max_reads, dram.max_writes) == (24, 12)
    # Little's law: 24 bursts of 128 bytes per 500 cycles is 6.1 bytes a cycle.
    assert dram.read_bytes_per_cycle(1e9) == pytest.approx(24 * 128 / 500)
    # The memory modes: Shared_Sram keeps the weights in flash and the feature maps in
    # the SRAM; Dedicated_Sram_384KB both in DRAM, 384 KB of SRAM first for activations.
    assert u55.placement == Placement("flash", ("system_sram",))
    assert u65.placement == Placement("dram", ("system_sram", "dram"))
    assert u65_sram.size_bytes == 393216
    # The NPU's own buffer (SHRAM): 48 banks of 1 KiB a core.
    assert (u55.scratch.size_bytes, u65.scratch.size_bytes) == (48 * 1024, 48 * 1024)
    # The MAC array as Vela's npu_performance.py counts it: 2x2x8 micro-blocks, 4
    # cycles per 32 input channels, the weight decoder at 8 bytes a cycle (a core).
    mac = u55.mac_array
    assert (mac.output_block, mac.input_block_depth, mac.block_cycles) == ((2, 2, 8), 32, 4)
    assert (mac.weight_bytes_per_cycle, mac.taps_per_step) == (8, 4)
    # Each U65-512 core's output stage and elementwise units: Vela halves the cycles
    # per element of the U65-256 (and U55-256) for the two cores.
    assert (mac.output_elements_per_cycle, u65.mac_array.output_elements_per_cycle) == (4, 4)
    assert (u55.vector_unit.lanes, u65.vector_unit.lanes) == (8, 8)
    # Apart from its cores, each core is a U65-256.
    u65_256 = load_target("ethos-u65-256")
    assert (u65.mac_array, u65.vector_unit, u65.memories) == (
        u65_256.mac_array, u65_256.vector_unit, u65_256.memories,
    )  # fmt: skip
    # Vela's operator constraints: the same for all.
    assert u55.ops == u65.ops == load_target("ethos-u55-128").ops
    conv = u55.ops["conv"]
    assert (conv.strides, conv.dilations, conv.max_dilated_kernel) == ((1, 2, 3), (1, 2), 64)
    assert conv.max_kernel_elements == 4096 and conv.constant_weights
    assert u55.ops["conv_transpose"].strides == (2,)
    assert u55.ops["resize"].scales == (2.0, 4.0, 8.0)
    assert {u55.ops[op].needs_lut for op in ("sigmoid", "tanh", "hard_swish", "softmax")} == {True}
    assert {support.max_rank for support in u55.ops.values()} == {4}


def test_the_four_ethos_presets_are_vela_s_accelerators() -> None:
    u55_128, u65_256 = load_target("ethos-u55-128"), load_target("ethos-u65-256")
    assert u55_128.mac_array.macs_per_cycle == 128
    assert u55_128.mac_array.output_block == (2, 1, 8)  # Vela: Ethos_U55_128's ofm_ublock
    assert u55_128.mac_array.block_cycles == 4
    assert u55_128.scratch.size_bytes == 24 * 1024 and u55_128.vector_unit.lanes == 4
    assert u65_256.mac_array.macs_per_cycle == 256 and u65_256.mac_array.clock_hz == 1e9
    assert u65_256.memories == {
        **load_target("ethos-u65-512").memories,
        "sram": u65_256.scratch,
    }


def test_a_micro_block_array_counts_as_vela_does() -> None:
    mac = load_target("ethos-u55-256").mac_array
    # A 3x3 conv of 32 to 64 channels over 8x8 outputs: 16 micro-blocks of 2x2, each
    # 4 cycles a tap and 32 inputs (above the weights' 32), 9 taps, 8 channel groups.
    assert mac.cycles(1, 8, 8, 64, 32, 9, False) == 16 * 4 * 9 * 8
    # One output pixel: the weights bound each step (32 cycles per 8 x 32 weights).
    assert mac.cycles(1, 1, 1, 64, 32, 9, False) == 32 * 9 * 8
    # Three input channels: part-kernel first packs 4 taps of 8 channels a step, 3
    # steps for the 9 taps instead of 9 (Vela's is_partkernel), still a third of the
    # array's MACs wasted on the 8-channel granule.
    assert mac.cycles(1, 8, 8, 64, 3, 9, False) == 16 * 4 * 3 * 8
    # 64 channels: depth first (9 taps x 2 blocks) beats part-kernel (3 x 8).
    assert mac.cycles(1, 8, 8, 64, 64, 9, False) == 16 * 4 * 18 * 8
    # Depthwise: 4 taps a step.
    assert mac.cycles(1, 8, 8, 64, 1, 9, True) == 16 * 4 * 3 * 8
    # A 1x1 conv of 16 to 16 channels over 16x16: the output stage (4 elements a cycle)
    # bounds it above the array's 64 blocks x 4 cycles x 2 channel groups.
    assert mac.cycles(1, 16, 16, 16, 16, 1, False) == 16 * 16 * 16 // 4
    # 16-bit activations: input blocks half as deep.
    assert mac.cycles(1, 8, 8, 64, 32, 9, False, passes=2) == 2 * 16 * 4 * 9 * 8


def test_edge_2tops() -> None:
    target = load_target("edge-2tops")
    assert target.mac_array.macs_per_cycle == 1024
    assert target.mac_array.clock_hz == 1e9
    assert round(target.peak_tops, 3) == 2.048
    assert target.scratch.size_bytes == 2 * 1024 * 1024
    assert target.memories["ddr"].read_bytes_per_second == 8e9


def test_cores() -> None:
    """[cores] is optional: without it a target has one core; with it, each key has
    its default when omitted."""
    single = parse_target(BASE, "t.toml")
    assert single.cores == Cores() == Cores(count=1, sram="private", sync_latency_cycles=0)
    text = edited(DESCRIPTION, f"{DESCRIPTION}[cores]\ncount = 4\nsync_latency_cycles = 30\n")
    target = parse_target(text, "t.toml")
    assert target.cores == Cores(count=4, sram="private", sync_latency_cycles=30)
    assert target.peak_tops == pytest.approx(4 * single.peak_tops)
    # The other sections do not change: each core has them.
    assert dataclasses.replace(target, cores=Cores()) == single
    empty = parse_target(edited(DESCRIPTION, f"{DESCRIPTION}[cores]\n"), "t.toml")
    assert empty.cores == Cores()
    explicit = edited(DESCRIPTION, f'{DESCRIPTION}[cores]\nsram = "private"\ncount = 1\n')
    assert parse_target(explicit, "t.toml").cores == Cores()
    # `show` writes [cores] only for a target that has more than its defaults, and it
    # loads back the same.
    assert "[cores]" not in target_toml(single)
    shown = target_toml(target)
    assert "[cores]\ncount = 4 " in shown and "sync_latency_cycles = 30 " in shown
    assert "# 4 cores: " in shown and "TOPS int8 peak a core" in shown
    assert parse_target(shown, "t.toml") == target
    assert summary(target).startswith("4 cores x 64 int8 MACs (8x8) at 200 MHz = ")
    assert "128 KiB SRAM a core, " in summary(target)


def test_edge_2tops_2c_is_two_edge_2tops_cores() -> None:
    one, two = load_target("edge-2tops"), load_target("edge-2tops-2c")
    assert two.cores == Cores(count=2, sram="private", sync_latency_cycles=50)
    assert two.mac_array == one.mac_array
    assert two.memories == one.memories
    assert round(two.peak_tops, 3) == 2 * round(one.peak_tops, 3) == 4.096
    # Everything but its name and its cores is edge-2tops's.
    same = dataclasses.replace(
        two, name=one.name, description=one.description, source=one.source, cores=Cores()
    )
    assert same == one
    assert "two cores, each as edge-2tops" in two.description.lower()


@pytest.mark.parametrize("name", preset_names())
def test_presets_round_trip_through_show(name: str) -> None:
    target = load_target(name)
    again = parse_target(target_toml(target), "shown.toml")
    assert again == dataclasses.replace(target, source="shown.toml")
    # And `show` writes the same text again.
    assert target_toml(dataclasses.replace(again, source=name)) == target_toml(target)


def test_files_round_trip_through_show() -> None:
    # A general limit that one op overrides is written per op.
    target = parse_target(edited("[ops.relu]", "[ops.relu]\nmax_rank = 2"), "t.toml")
    text = target_toml(target)
    assert "[ops]\n\n" in text and "[ops.relu]\nmax_rank = 2\n" in text
    assert parse_target(text, "t.toml") == target


def test_no_edit_of_a_target_file_gives_a_traceback() -> None:
    """Random edits of the presets: a target or diagnostics with a line and a hint."""
    rng = random.Random(5)
    presets = [preset_path(name).read_text() for name in preset_names()]
    values = ["0", "-1", "1.5", '"x"', "true", "[]", "[1, 2]", '["a"]', "{ a = 1 }", "nan"]
    values += ["inf", "1e30", "[[0, 1]]", '"nearest"', "[0]", "65536"]
    lines_to_add = ["x = 1", "[ops.foo]", "max_kernel = 3", "[ops]", "[sram]", "entries = 0"]
    lines_to_add += ["strides = [1]", "needs_lut = true", "[ops.conv]", "perms = [[1, 0]]"]
    failures = 0
    for _ in range(600):
        lines = rng.choice(presets).splitlines()
        for _ in range(rng.randint(1, 3)):
            index = rng.randrange(len(lines))
            line, choice = lines[index], rng.random()
            if choice < 0.3:
                del lines[index]
            elif choice < 0.7 and "=" in line and not line.startswith("#"):
                lines[index] = line.split("=")[0] + "= " + rng.choice(values)
            elif choice < 0.85:
                lines.insert(index, rng.choice(lines_to_add))
            elif line:
                cut = rng.randrange(len(line))
                lines[index] = line[:cut] + line[cut + 1 :]
        try:
            parse_target("\n".join(lines), "f.toml")
        except IrcError as failure:
            failures += 1
            for diagnostic in failure.diagnostics:
                assert diagnostic.location.line is not None, diagnostic.format()
                assert diagnostic.hint, diagnostic.format()
    assert failures > 400


def test_irc_target_commands(capsys: pytest.CaptureFixture[str]) -> None:
    assert irc_target(["list"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("edge-2tops     A 2 TOPS")
    assert irc_target(["show", "npu-demo"]) == 0
    assert capsys.readouterr().out == target_toml(load_target("npu-demo"))
    assert irc_target(["support-table", "ethos-u55-256"]) == 0
    assert capsys.readouterr().out == support_table_markdown(load_target("ethos-u55-256"))
    assert irc_target(["check", str(INPUTS / "wrong-type.toml")]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("error:") == 1
    assert irc_target(["show"]) == 2


def test_support_table_lists_every_op_once() -> None:
    target = load_target("npu-demo")
    text = support_table_markdown(target)
    kinds = {label: kind for kind, label in schema.CAST_KINDS.items()}

    def kind(label: str) -> str:
        return kinds.get(label, label.partition(".")[2])

    rows = [
        kind(label) for label in re.findall(r"^\| `((?:q?nn|quant)\.\w+)` \|", text, re.MULTILINE)
    ]
    assert sorted(rows) == sorted(target.ops)
    tail = text.split("## Not supported")[1]
    unsupported = [kind(label) for label in re.findall(r"`((?:q?nn|quant)\.\w+)`", tail)]
    assert sorted(rows + unsupported) == sorted(schema.OP_LIMITS)


# --------------------------------------------------------------------------------------
# unsupported_reasons: every limit, supported and not, in both layouts


def tensor(*shape: int) -> SSAValue:
    return Block(arg_types=[TensorType(f32, list(shape))]).args[0]


def const(*shape: int) -> SSAValue:
    return nn.ConstantOp.from_array(np.zeros(shape, np.float32)).result


def ints(*values: int) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


def floats(*values: float) -> DenseArrayBase:
    return DenseArrayBase.from_list(f32, list(values))


def target_with(op: str, **limits: Any) -> Target:
    """npu-demo with one support-table entry: `op` with exactly `limits`."""
    base = load_target("npu-demo")
    return dataclasses.replace(
        base, name="t", ops=MappingProxyType({op: OpSupport(op=op, **limits)})
    )


def reasons(op: Operation, **limits: Any) -> list[str]:
    return unsupported_reasons(op, target_with(op.name.removeprefix("nn."), **limits))


def conv(
    layout: str,
    channels: int = 8,
    outputs: int = 8,
    kernel: Sequence[int] = (3, 3),
    size: int = 16,
    batch: int = 1,
    **props: Attribute,
) -> nn.ConvOp:
    """A 2-D convolution (or 1-D/3-D for other kernel ranks) in `layout`."""
    group = props["group"].value.data if "group" in props else 1  # type: ignore[attr-defined]
    spatial = [size] * len(kernel)
    if layout == "nhwc":
        x = tensor(batch, *spatial, channels)
        w = const(outputs, *kernel, channels // group)
        props["layout"] = StringAttr("nhwc")
    else:
        x = tensor(batch, channels, *spatial)
        w = const(outputs, channels // group, *kernel)
    return nn.ConvOp.build([x, w], props)


def conv_transpose(layout: str, kernel: int = 2, stride: int = 2) -> nn.ConvTransposeOp:
    props: dict[str, Attribute] = {"strides": ints(stride, stride)}
    if layout == "nhwc":
        props["layout"] = StringAttr("nhwc")
        return nn.ConvTransposeOp.build([tensor(1, 8, 8, 4), const(4, kernel, kernel, 6)], props)
    return nn.ConvTransposeOp.build([tensor(1, 4, 8, 8), const(4, 6, kernel, kernel)], props)


def pool(
    kind: type[nn.MaxPoolOp] | type[nn.AveragePoolOp], layout: str, kernel: int, **props: Any
) -> Operation:
    x = tensor(1, 32, 32, 4) if layout == "nhwc" else tensor(1, 4, 32, 32)
    attrs: dict[str, Attribute] = {"kernel_shape": ints(kernel, kernel), **props}
    if layout == "nhwc":
        attrs["layout"] = StringAttr("nhwc")
    return kind.build([x], attrs)


LAYOUTS = ["nchw", "nhwc"]


def test_constants_other_dialects_and_missing_ops() -> None:
    target = load_target("npu-demo")
    assert unsupported_reasons(nn.ConstantOp.from_array(np.zeros(3, np.float32)), target) == []
    assert unsupported_reasons(ReturnOp(), target) == [
        "func.return: not an nn op: target npu-demo runs nn ops only"
    ]
    lrn = nn.LRNOp.build([tensor(1, 4, 8, 8)], {"size": IntegerAttr(3, i64)})
    assert unsupported_reasons(lrn, target) == ["nn.lrn: not in target npu-demo's support table"]
    # An op listed without limits is supported whatever its properties.
    assert unsupported_reasons(conv("nchw", kernel=(11, 11)), target_with("conv")) == []


def test_every_reason_is_reported() -> None:
    op = conv("nchw", kernel=(11, 11), strides=ints(3, 3), pads=ints(5, 5, 5, 5))
    assert unsupported_reasons(op, load_target("npu-demo")) == [
        "nn.conv kernel 11x11: target npu-demo supports kernels up to 7x7",
        "nn.conv stride 3x3: target npu-demo supports strides 1, 2",
        "nn.conv padding 5 (pads [5, 5, 5, 5]): target npu-demo supports padding up to 3 per side",
    ]


def test_reasons_of_the_spec() -> None:
    target = load_target("npu-demo")
    resize = nn.ResizeOp.build(
        [tensor(1, 3, 8, 8)],
        {"scales": floats(1, 1, 2, 2), "mode": StringAttr("cubic")},
        result_types=[TensorType(f32, [1, 3, 16, 16])],
    )
    assert unsupported_reasons(resize, target) == [
        'nn.resize mode="cubic": target npu-demo supports nearest, linear'
    ]
    assert unsupported_reasons(conv("nhwc", kernel=(11, 11), size=32), target) == [
        "nn.conv kernel 11x11: target npu-demo supports kernels up to 7x7"
    ]
    no_lut = dataclasses.replace(target, lut=dataclasses.replace(target.lut, supported=False))
    assert unsupported_reasons(nn.SigmoidOp.build([tensor(4)]), no_lut) == [
        "nn.sigmoid needs a lookup table: target npu-demo has none"
    ]
    assert unsupported_reasons(nn.SigmoidOp.build([tensor(4)]), target) == []


# Each case: (the limit, the limits of the entry, an op within them, an op beyond them,
# the reason for the latter). Spatial ops are given in both layouts.

CASES: list[tuple[str, dict[str, Any], Any, Any, str]] = []


def case(limit: str, limits: dict[str, Any], good: Any, bad: Any, reason: str) -> None:
    CASES.append((limit, limits, good, bad, reason))


def add(a: Sequence[int], b: Sequence[int], **props: Attribute) -> Operation:
    return nn.AddOp.build([tensor(*a), tensor(*b)], props)


case(
    "max_rank",
    {"max_rank": 4},
    lambda: add((1, 2, 3, 4), (1, 2, 3, 4)),
    lambda: add((1, 1, 2, 3, 4), (1, 1, 2, 3, 4)),
    "nn.add rank 5: target t supports tensors up to rank 4",
)
case(
    "max_dimension",
    {"max_dimension": 100},
    lambda: add((100,), (100,)),
    lambda: add((101,), (101,)),
    "nn.add dimension 101: target t supports dimensions up to 100",
)
for _layout in LAYOUTS:
    _other = "nchw" if _layout == "nhwc" else "nhwc"
    case(
        "layouts",
        {"layouts": (_layout,)},
        lambda lay=_layout: conv(lay),
        lambda lay=_other: conv(lay),
        f'nn.conv layout="{_other}": target t supports {_layout}',
    )
    case(
        "spatial_dims",
        {"spatial_dims": (2,)},
        lambda lay=_layout: conv(lay),
        lambda lay=_layout: conv(lay, kernel=(3,)),
        "nn.conv 1-D: target t supports 2-D",
    )
    case(
        "max_batch",
        {"max_batch": 1},
        lambda lay=_layout: conv(lay),
        lambda lay=_layout: conv(lay, batch=2),
        "nn.conv batch 2: target t supports batch up to 1",
    )
    case(
        "max_kernel",
        {"max_kernel": 5},
        lambda lay=_layout: conv(lay, kernel=(5, 5)),
        lambda lay=_layout: conv(lay, kernel=(5, 7)),
        "nn.conv kernel 5x7: target t supports kernels up to 5x5",
    )
    case(
        "max_kernel",
        {"max_kernel": 2},
        lambda lay=_layout: conv_transpose(lay, kernel=2),
        lambda lay=_layout: conv_transpose(lay, kernel=3),
        "nn.conv_transpose kernel 3x3: target t supports kernels up to 2x2",
    )
    case(
        "max_kernel",
        {"max_kernel": 3},
        lambda lay=_layout: pool(nn.MaxPoolOp, lay, 3),
        lambda lay=_layout: pool(nn.MaxPoolOp, lay, 4),
        "nn.max_pool kernel 4x4: target t supports kernels up to 3x3",
    )
    case(
        "max_dilated_kernel",
        {"max_dilated_kernel": 7},
        lambda lay=_layout: conv(lay, dilations=ints(3, 3)),
        lambda lay=_layout: conv(lay, dilations=ints(4, 1)),
        "nn.conv dilated kernel 9x3 (kernel 3x3, dilation 4x1): target t supports dilated "
        "kernels up to 7x7",
    )
    case(
        "max_kernel_elements",
        {"max_kernel_elements": 64},
        lambda lay=_layout: pool(nn.MaxPoolOp, lay, 8),
        lambda lay=_layout: pool(nn.MaxPoolOp, lay, 9),
        "nn.max_pool kernel 9x9 spans 81 elements: target t supports kernels spanning up to "
        "64 elements",
    )
    case(
        "max_kernel_elements",
        {"max_kernel_elements": 25},
        lambda lay=_layout: conv(lay, dilations=ints(2, 2)),
        lambda lay=_layout: conv(lay, dilations=ints(3, 2)),
        "nn.conv kernel 3x3 with dilation 3x2 spans 35 elements: target t supports kernels "
        "spanning up to 25 elements",
    )
    case(
        "max_padded_kernel",
        {"max_padded_kernel": 8},
        lambda lay=_layout: pool(nn.AveragePoolOp, lay, 9),
        lambda lay=_layout: pool(nn.AveragePoolOp, lay, 9, pads=ints(1, 1, 1, 1)),
        "nn.average_pool kernel 9x9 with pads [1, 1, 1, 1]: target t supports kernels up to "
        "8x8 when padding",
    )
    case(
        "strides",
        {"strides": (1, 2)},
        lambda lay=_layout: conv(lay, strides=ints(2, 1)),
        lambda lay=_layout: conv(lay, strides=ints(1, 3)),
        "nn.conv stride 1x3: target t supports strides 1, 2",
    )
    case(
        "strides",
        {"strides": (2,)},
        lambda lay=_layout: conv_transpose(lay, stride=2),
        lambda lay=_layout: conv_transpose(lay, stride=1),
        "nn.conv_transpose stride 1x1: target t supports strides 2",
    )
    case(
        "dilations",
        {"dilations": (1,)},
        lambda lay=_layout: pool(nn.MaxPoolOp, lay, 2),
        lambda lay=_layout: pool(nn.MaxPoolOp, lay, 2, dilations=ints(2, 2)),
        "nn.max_pool dilation 2x2: target t supports dilations 1",
    )
    case(
        "max_padding",
        {"max_padding": 1},
        lambda lay=_layout: conv(lay, pads=ints(1, 1, 1, 1)),
        lambda lay=_layout: conv(lay, pads=ints(0, 2, 0, 1)),
        "nn.conv padding 2 (pads [0, 2, 0, 1]): target t supports padding up to 1 per side",
    )
    # In nhwc the channels are the last axis: 16 here, not the spatial 8 or 16.
    case(
        "max_input_channels",
        {"max_input_channels": 16},
        lambda lay=_layout: conv(lay, channels=16, size=8),
        lambda lay=_layout: conv(lay, channels=17, size=8),
        "nn.conv 17 input channels: target t supports up to 16",
    )
    case(
        "max_output_channels",
        {"max_output_channels": 16},
        lambda lay=_layout: conv(lay, outputs=16, size=20),
        lambda lay=_layout: conv(lay, outputs=17, size=20),
        "nn.conv 17 output channels: target t supports up to 16",
    )
    case(
        "groups",
        {"groups": "none"},
        lambda lay=_layout: conv(lay),
        lambda lay=_layout: conv(lay, group=IntegerAttr(2, i64)),
        "nn.conv group 2: target t supports group 1 only",
    )
    case(
        "groups",
        {"groups": "depthwise"},
        lambda lay=_layout: conv(lay, group=IntegerAttr(8, i64)),
        lambda lay=_layout: conv(lay, outputs=16, group=IntegerAttr(8, i64)),
        "nn.conv group 8 (8 input channels, 16 output channels): target t supports group 1 "
        "and depthwise convolutions (group = input channels = output channels)",
    )
    case(
        "groups",
        {"groups": "depthwise"},
        lambda lay=_layout: conv(lay),
        lambda lay=_layout: conv(lay, group=IntegerAttr(2, i64)),
        "nn.conv group 2 (8 input channels, 8 output channels): target t supports group 1 "
        "and depthwise convolutions (group = input channels = output channels)",
    )
    case(
        "supports_ceil_mode",
        {"supports_ceil_mode": False},
        lambda lay=_layout: pool(nn.MaxPoolOp, lay, 3),
        lambda lay=_layout: pool(nn.MaxPoolOp, lay, 3, ceil_mode=BoolAttr.from_bool(True)),
        "nn.max_pool ceil_mode=true: target t does not support ceil_mode",
    )
    case(
        "supports_count_include_pad",
        {"supports_count_include_pad": False},
        lambda lay=_layout: pool(
            nn.AveragePoolOp, lay, 3, count_include_pad=BoolAttr.from_bool(True)
        ),
        lambda lay=_layout: pool(
            nn.AveragePoolOp,
            lay,
            3,
            pads=ints(1, 1, 1, 1),
            count_include_pad=BoolAttr.from_bool(True),
        ),
        "nn.average_pool count_include_pad=true with pads [1, 1, 1, 1]: target t does not "
        "count padding in averages",
    )
    case(
        "max_reduced_elements",
        {"max_reduced_elements": 1024},
        lambda lay=_layout: nn.GlobalAveragePoolOp.build(
            [tensor(1, 32, 32, 4) if lay == "nhwc" else tensor(1, 4, 32, 32)],
            {"layout": StringAttr(lay)},
        ),
        lambda lay=_layout: nn.GlobalAveragePoolOp.build(
            [tensor(1, 32, 33, 4) if lay == "nhwc" else tensor(1, 4, 32, 33)],
            {"layout": StringAttr(lay)},
        ),
        "nn.global_average_pool reduces 1056 elements (32x33) into each output: target t "
        "supports up to 1024",
    )
case(
    "activations",
    {"activations": ("relu", "clip")},
    lambda: conv("nchw", activation=nn.ActivationAttr.make("clip", min=0.0, max=6.0)),
    lambda: conv("nhwc", activation=nn.ActivationAttr.make("sigmoid")),
    "nn.conv activation sigmoid: target t fuses relu, clip",
)
case(
    "activations",
    {"activations": ()},
    lambda: add((4,), (4,)),
    lambda: add((4,), (4,), activation=nn.ActivationAttr.make("relu")),
    "nn.add activation relu: target t fuses no activation",
)
case(
    "constant_weights",
    {"constant_weights": True},
    lambda: nn.MatMulOp.build([tensor(4, 8), const(8, 2)]),
    lambda: nn.MatMulOp.build([tensor(4, 8), tensor(8, 2)]),
    "nn.matmul weights (operand #1) are not a constant: target t needs constant weights",
)
case(
    "max_m",
    {"max_m": 4},
    lambda: nn.GemmOp.build([tensor(4, 8), const(8, 2)]),
    lambda: nn.GemmOp.build([tensor(8, 5), const(8, 2)], {"trans_a": BoolAttr.from_bool(True)}),
    "nn.gemm M=5: target t supports M up to 4",
)
case(
    "max_k",
    {"max_k": 8},
    lambda: nn.GemmOp.build([tensor(4, 8), const(2, 8)], {"trans_b": BoolAttr.from_bool(True)}),
    lambda: nn.MatMulOp.build([tensor(3, 4, 9), const(9, 2)]),
    "nn.matmul K=9: target t supports K up to 8",
)
case(
    "max_n",
    {"max_n": 2},
    lambda: nn.MatMulOp.build([tensor(8), const(8, 2)]),
    lambda: nn.GemmOp.build([tensor(4, 8), const(3, 8)], {"trans_b": BoolAttr.from_bool(True)}),
    "nn.gemm N=3: target t supports N up to 2",
)
case(
    "max_batch",
    {"max_batch": 3},
    lambda: nn.MatMulOp.build([tensor(3, 4, 8), const(8, 2)]),
    lambda: nn.MatMulOp.build([tensor(2, 1, 4, 8), tensor(3, 8, 2)]),
    "nn.matmul batch 6 (batch dimensions 2x3): target t supports batch up to 3",
)
case(
    "supports_transposed_lhs",
    {"supports_transposed_lhs": False},
    lambda: nn.GemmOp.build([tensor(4, 8), const(8, 2)]),
    lambda: nn.GemmOp.build([tensor(8, 4), const(8, 2)], {"trans_a": BoolAttr.from_bool(True)}),
    "nn.gemm trans_a=true: target t does not support a transposed lhs",
)
case(
    "supports_broadcast",
    {"supports_broadcast": False},
    lambda: add((1, 8, 4, 4), (1, 8, 4, 4)),
    lambda: add((1, 8, 4, 4), (1, 8, 1, 1)),
    "nn.add broadcasts 1x8x4x4 and 1x8x1x1: target t needs operands of one shape",
)
case(
    "supports_broadcast",
    {"supports_broadcast": False},
    lambda: nn.PReluOp.build([tensor(2, 3), tensor(2, 3)]),
    lambda: nn.PReluOp.build([tensor(2, 3), tensor(3)]),
    "nn.prelu broadcasts 2x3 and 3: target t needs operands of one shape",
)
case(
    "max_inputs",
    {"max_inputs": 2},
    lambda: nn.MaxOp.build([tensor(4), tensor(4)]),
    lambda: nn.MaxOp.build([tensor(4), tensor(4), tensor(4)]),
    "nn.max 3 inputs: target t supports up to 2",
)
case(
    "max_inputs",
    {"max_inputs": 2},
    lambda: nn.ConcatOp.build([tensor(4), tensor(4)], {"axis": IntegerAttr(0, i64)}),
    lambda: nn.ConcatOp.build([tensor(4)] * 3, {"axis": IntegerAttr(0, i64)}),
    "nn.concat 3 inputs: target t supports up to 2",
)
case(
    "last_axis_only",
    {"last_axis_only": True},
    lambda: nn.SoftmaxOp.build([tensor(1, 4, 8, 8)], {"axis": IntegerAttr(3, i64)}),
    lambda: nn.SoftmaxOp.build([tensor(1, 4, 8, 8)], {"axis": IntegerAttr(1, i64)}),
    "nn.softmax axis 1 of a rank-4 tensor: target t supports the last axis only",
)
case(
    "max_axis_size",
    {"max_axis_size": 10},
    lambda: nn.SoftmaxOp.build([tensor(100, 10)]),
    lambda: nn.LogSoftmaxOp.build([tensor(10, 11)]),
    "nn.log_softmax axis size 11: target t supports up to 10",
)
case(
    "max_reduced_elements",
    {"max_reduced_elements": 64},
    lambda: nn.ReduceMeanOp.build([tensor(1, 8, 8, 100)], {"axes": ints(1, 2)}),
    lambda: nn.ReduceMeanOp.build([tensor(1, 8, 9, 100)], {"axes": ints(-3, -2)}),
    "nn.reduce_mean reduces 72 elements (8x9) into each output: target t supports up to 64",
)
case(
    "max_reduced_axes",
    {"max_reduced_axes": 2},
    lambda: nn.ReduceSumOp.build([tensor(2, 3, 4)], {"axes": ints(0, 2)}),
    lambda: nn.ReduceSumOp.build([tensor(2, 3, 4)]),
    "nn.reduce_sum reduces 3 axes [0, 1, 2]: target t supports up to 2",
)
case(
    "max_outputs",
    {"max_outputs": 2},
    lambda: nn.SplitOp.build([tensor(6)], {"sizes": ints(3, 3)}),
    lambda: nn.SplitOp.build([tensor(6)], {"sizes": ints(2, 2, 2)}),
    "nn.split 3 outputs: target t supports up to 2",
)
case(
    "steps",
    {"steps": (1,)},
    lambda: nn.SliceOp.build([tensor(8)], {"starts": ints(1), "ends": ints(5)}),
    lambda: nn.SliceOp.build([tensor(8)], {"starts": ints(0), "ends": ints(8), "steps": ints(2)}),
    "nn.slice steps [2]: target t supports steps 1",
)
case(
    "perms",
    {"perms": ((0, 2, 3, 1), (0, 3, 1, 2))},
    lambda: nn.TransposeOp.build([tensor(1, 2, 3, 4)], {"perm": ints(0, 3, 1, 2)}),
    lambda: nn.TransposeOp.build([tensor(1, 2, 3, 4)], {"perm": ints(0, 1, 3, 2)}),
    "nn.transpose perm [0, 1, 3, 2]: target t supports [0, 2, 3, 1], [0, 3, 1, 2]",
)
case(
    "modes",
    {"modes": ("constant",)},
    lambda: nn.PadOp.build([tensor(4, 4)], {"pads": ints(1, 1, 1, 1)}),
    lambda: nn.PadOp.build(
        [tensor(4, 4)], {"pads": ints(1, 1, 1, 1), "mode": StringAttr("reflect")}
    ),
    'nn.pad mode="reflect": target t supports constant',
)
case(
    "max_padding",
    {"max_padding": 2},
    lambda: nn.PadOp.build([tensor(4, 4)], {"pads": ints(2, -1, 0, 2)}),
    lambda: nn.PadOp.build([tensor(4, 4)], {"pads": ints(0, 3, 0, 0)}),
    "nn.pad padding 3 (pads [0, 3, 0, 0]): target t supports padding up to 2 per side",
)
case(
    "modes",
    {"modes": ("DCR",)},
    lambda: nn.DepthToSpaceOp.build([tensor(1, 8, 2, 2)], {"blocksize": IntegerAttr(2, i64)}),
    lambda: nn.DepthToSpaceOp.build(
        [tensor(1, 8, 2, 2)], {"blocksize": IntegerAttr(2, i64), "mode": StringAttr("CRD")}
    ),
    'nn.depth_to_space mode="CRD": target t supports DCR',
)
case(
    "blocksizes",
    {"blocksizes": (2,)},
    lambda: nn.DepthToSpaceOp.build(
        [tensor(1, 2, 2, 8)], {"blocksize": IntegerAttr(2, i64), "layout": StringAttr("nhwc")}
    ),
    lambda: nn.DepthToSpaceOp.build(
        [tensor(1, 2, 2, 16)], {"blocksize": IntegerAttr(4, i64), "layout": StringAttr("nhwc")}
    ),
    "nn.depth_to_space blocksize 4: target t supports block sizes 2",
)


def resize(scales: Sequence[float], out: Sequence[int], **props: str) -> Operation:
    attrs: dict[str, Attribute] = {"scales": floats(*scales)}
    attrs.update({name: StringAttr(value) for name, value in props.items()})
    return nn.ResizeOp.build([tensor(1, 3, 8, 8)], attrs, result_types=[TensorType(f32, out)])


case(
    "modes",
    {"modes": ("nearest", "linear")},
    lambda: resize((1, 1, 2, 2), (1, 3, 16, 16), mode="linear"),
    lambda: resize((1, 1, 2, 2), (1, 3, 16, 16), mode="cubic"),
    'nn.resize mode="cubic": target t supports nearest, linear',
)
case(
    "coordinate_transformation_modes",
    {"coordinate_transformation_modes": ("asymmetric",)},
    lambda: resize((1, 1, 2, 2), (1, 3, 16, 16), coordinate_transformation_mode="asymmetric"),
    lambda: resize((1, 1, 2, 2), (1, 3, 16, 16)),
    'nn.resize coordinate_transformation_mode="half_pixel": target t supports asymmetric',
)
case(
    "nearest_modes",
    {"nearest_modes": ("floor",)},
    lambda: resize((1, 1, 2, 2), (1, 3, 16, 16), mode="linear"),
    lambda: resize((1, 1, 2, 2), (1, 3, 16, 16)),
    'nn.resize nearest_mode="round_prefer_floor": target t supports floor',
)
case(
    "scales",
    {"scales": (2.0, 4.0)},
    lambda: resize((1, 1, 2, 4), (1, 3, 16, 32)),
    lambda: resize((1, 1, 3, 2), (1, 3, 24, 16)),
    "nn.resize scale 3 on axis 2: target t supports scales 2, 4",
)
case(
    "min_scale",
    {"min_scale": 1.0},
    lambda: resize((1, 1, 1, 3), (1, 3, 8, 24)),
    lambda: resize((1, 1, 0.5, 0.25), (1, 3, 4, 2)),
    "nn.resize scales 0.5, 0.25 on axes 2, 3: target t supports scales down to 1",
)
case(
    "max_scale",
    {"max_scale": 4.0},
    lambda: resize((1, 1, 4, 0.3), (1, 3, 32, 2)),
    lambda: resize((1, 1, 4.5, 1), (1, 3, 36, 8)),
    "nn.resize scale 4.5 on axis 2: target t supports scales up to 4",
)
case(
    "max_batch",
    {"max_batch": 1},
    lambda: resize((1, 1, 2, 2), (1, 3, 16, 16)),
    lambda: nn.ResizeOp.build(
        [tensor(2, 3, 8, 8)],
        {"scales": floats(1, 1, 2, 2)},
        result_types=[TensorType(f32, [2, 3, 16, 16])],
    ),
    "nn.resize batch 2: target t supports batch up to 1",
)


@pytest.mark.parametrize(
    ("limit", "limits", "good", "bad", "reason"),
    CASES,
    ids=[f"{limit}-{index}" for index, (limit, *_) in enumerate(CASES)],
)
def test_limit(limit: str, limits: dict[str, Any], good: Any, bad: Any, reason: str) -> None:
    within, beyond = good(), bad()
    assert reasons(within, **limits) == []
    assert reasons(beyond, **limits) == [reason]
    # Without the limit, the op is supported.
    assert reasons(beyond) == []


def _strictest(op: str) -> OpSupport:
    """An entry for `op` that sets every limit it has, to a restrictive value."""
    values: dict[str, Any] = {}
    for key in schema.OP_LIMITS[op]:
        limit = schema.LIMIT_BY_KEY[key]
        choices = schema.limit_choices(op, limit) if "choice" in limit.kind else ()
        default = OpSupport.__dataclass_fields__[key].default
        values[key] = {
            "count": 1,
            "size": 0,
            "ints": (1,),
            "choice": choices[0] if choices else None,
            "choices": choices[:1],
            "flag": not default,
            "number": 1.5,
            "numbers": (3.0,),
            "perms": ((1, 0),),
        }[limit.kind]
    return OpSupport(op=op, **values)


def test_every_op_of_the_dialect_tests_can_be_checked() -> None:
    """Every op in the nn round-trip tests, against the presets and against a target
    that sets every limit: reasons are sentences about the op, never a crash."""
    from irc.ir.context import make_context
    from irc.ir.io import parse_module

    text = (REPOSITORY / "tests" / "filecheck" / "dialects" / "nn" / "ops.mlir").read_text()
    module = parse_module(text, make_context(), "ops.mlir")
    strictest = dataclasses.replace(
        load_target("npu-demo"),
        name="strict",
        ops=MappingProxyType({op: _strictest(op) for op in schema.OP_LIMITS}),
    )
    targets = [load_target(name) for name in preset_names()] + [strictest]
    checked = set()
    for op in module.walk():
        if not isinstance(op, nn.NNOp):
            continue
        checked.add(op.name)
        for target in targets:
            for reason in unsupported_reasons(op, target):
                assert reason.startswith(f"{op.name} ") or reason.startswith(f"{op.name}:")
                assert f"target {target.name}" in reason
    assert len(checked) > 60


def test_needs_lut() -> None:
    target = target_with("tanh", needs_lut=True)
    tanh = nn.TanhOp.build([tensor(4)])
    assert unsupported_reasons(tanh, target) == []
    without = dataclasses.replace(target, lut=dataclasses.replace(target.lut, supported=False))
    assert unsupported_reasons(tanh, without) == ["nn.tanh needs a lookup table: target t has none"]
    # An op that does not use the LUT does not need one.
    assert (
        unsupported_reasons(tanh, dataclasses.replace(without, ops=target_with("tanh").ops)) == []
    )


def test_every_limit_is_checked() -> None:
    checked = {limit for limit, *_ in CASES} | {"needs_lut"}
    assert checked == set(schema.LIMIT_BY_KEY)


def test_every_spatial_op_is_read_in_both_layouts() -> None:
    # Each spatial-op case above runs in both layouts; the layouts limit says which
    # ops have a layout property.
    for op in nn.NN.operations:
        name = op.name.removeprefix("nn.")
        has_layout = bool(getattr(op, "LAYOUT_OPERANDS", ()))
        assert ("layouts" in schema.OP_LIMITS.get(name, ())) == has_layout, name


# --------------------------------------------------------------------------------------
# The active target


def test_using_target_nests_and_restores() -> None:
    demo, u55 = load_target("npu-demo"), load_target("ethos-u55-256")
    assert active_target() is None
    with using_target(demo):
        assert active_target() is demo
        with using_target(u55):
            assert active_target() is u55
        with using_target(None):
            assert active_target() is None
        assert active_target() is demo
    assert active_target() is None
    with pytest.raises(RuntimeError), using_target(demo):
        raise RuntimeError("a pass failed")
    assert active_target() is None


def test_require_target() -> None:
    with pytest.raises(IrcError) as failure:
        require_target("partition")
    (diagnostic,) = failure.value.diagnostics
    assert diagnostic.message == "pass 'partition' needs a target"
    assert diagnostic.location.file == "<pass-pipeline>"
    assert diagnostic.hint is not None
    assert diagnostic.hint.startswith(
        "irc-opt --target=NAME|FILE (presets: edge-2tops, edge-2tops-2c, ethos-u55-128, ethos-u55-256, ethos-u65-256, ethos-u65-512, npu-demo)"
    )
    demo = load_target("npu-demo")
    with using_target(demo):
        assert require_target("partition") is demo
        # The pass's own option wins.
        assert require_target("partition", "edge-2tops").name == "edge-2tops"
        assert require_target("partition", str(INPUTS / "my-npu.toml")).name == "my-npu"
        with pytest.raises(IrcError, match="unknown target 'edge'"):
            require_target("partition", "edge")


@dataclass(frozen=True)
class RecordTargetPass(ModulePass):
    """Report the active target as a remark."""

    name = "test-record-target"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = active_target()
        emit(Diagnostic(f"target: {target.name if target else None}", severity=Severity.REMARK))


def test_irc_opt_runs_passes_with_the_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(passes.PASSES, "test-record-target", (__name__, "RecordTargetPass"))
    source = tmp_path / "f.mlir"
    source.write_text(
        "func.func @f() {\n  func.return\n}\n// -----\nfunc.func @g() {\n  func.return\n}\n"
    )
    argv = [str(source), "--split-input-file", "-p", "test-record-target,test-record-target"]
    assert irc_opt([*argv, "--target=ethos-u65-512"]) == 0
    assert capsys.readouterr().err.count("remark: target: ethos-u65-512") == 4
    assert irc_opt(argv) == 0
    assert capsys.readouterr().err.count("remark: target: None") == 4
    assert active_target() is None
    # A bad target stops irc-opt before any pass runs.
    assert irc_opt([*argv, "--target", str(INPUTS / "wrong-type.toml")]) == 1
    err = capsys.readouterr().err
    assert "wrong-type.toml:14:1: error:" in err and "remark" not in err


def test_irc_target_script_runs() -> None:
    result = subprocess.run(
        [str(REPOSITORY / "tools" / "irc-target"), "check", "npu-demo"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("npu-demo: ok: npu-demo, 256 int8 MACs (16x16) at 500 MHz")


# --------------------------------------------------------------------------------------
# The format agrees with the nn dialect and the docs


def test_schema_names_every_nn_op() -> None:
    names = {op.name.removeprefix("nn.") for op in nn.NN.operations}
    kinds = names | set(schema.INTEGER_KINDS) | set(schema.CAST_KINDS)
    assert set(schema.OP_LIMITS) | set(schema.DATA_OPS) == kinds
    assert not set(schema.INTEGER_KINDS) & names
    assert not set(schema.OP_LIMITS) & set(schema.DATA_OPS)
    assert tuple(nn.ACTIVATIONS) == schema.ACTIVATION_KINDS
    assert schema.LAYOUTS == base.LAYOUTS
    assert schema.PAD_MODES == nn.PAD_MODES
    assert schema.RESIZE_MODES == nn.RESIZE_MODES
    assert (
        tuple(m for m in nn.RESIZE_COORDINATE_MODES if m != "tf_crop_and_resize")
        == schema.RESIZE_COORDINATE_MODES
    )
    assert schema.RESIZE_NEAREST_MODES == nn.RESIZE_NEAREST_MODES
    assert set(schema.UNARY_OPS) == {
        op.name.removeprefix("nn.")
        for op in nn.NN.operations
        if issubclass(op, nn.UnaryOp) and not issubclass(op, nn.AxisUnaryOp)
    } - {"identity", "dropout"}


def test_every_limit_is_an_op_support_field_used_by_some_op() -> None:
    fields = {f.name for f in dataclasses.fields(OpSupport)} - {"op"}
    assert fields == set(schema.LIMIT_BY_KEY)
    used = {key for keys in schema.OP_LIMITS.values() for key in keys}
    assert used == set(schema.LIMIT_BY_KEY)
    for keys in schema.OP_LIMITS.values():
        assert set(schema.GENERAL_LIMITS) <= set(keys)


def test_docs_describe_every_field_limit_and_preset() -> None:
    docs = (REPOSITORY / "docs" / "targets.md").read_text()
    begin, end = "<!-- reference: begin -->\n", "<!-- reference: end -->"
    generated = docs[docs.index(begin) + len(begin) : docs.index(end)].strip("\n")
    assert generated == reference_markdown().strip("\n"), (
        "regenerate the reference tables of docs/targets.md with "
        "irc.targets.render.reference_markdown()"
    )
    for name in preset_names():
        assert f"### `{name}`" in docs or f"`{name}`" in docs.split("## Presets")[1]
    for section in schema.SECTIONS:
        for spec in section.fields:
            assert f"| `{spec.key}` |" in docs
    tools = (REPOSITORY / "docs" / "tools.md").read_text()
    assert "## `irc-target`" in tools and "--target" in tools
    assert "docs/targets.md" in (REPOSITORY / "README.md").read_text()


def test_target_loading_does_not_import_the_dialect() -> None:
    code = (
        "import sys; from irc.targets import load_target; load_target('npu-demo'); "
        "from irc.targets.render import support_table_markdown; "
        "assert 'irc.dialects.nn' not in sys.modules, 'the nn dialect was imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPOSITORY)
