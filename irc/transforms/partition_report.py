"""The partition report: what runs where on a target, and why, as text and JSON.

The `partition` pass (irc/transforms/partition.py) builds a `PartitionReport` for the
module it partitions, emits its one-line `summary()` as a remark, and writes it to the
file its `report=` option names: JSON (`to_json()`) when the path ends in `.json`,
text (`to_text()`) otherwise. Everything in it is listed in a fixed order (functions,
subgraphs and fallback ops in program order) and times are rounded to the nanosecond,
so that the same IR and target always give the same bytes.

The JSON form (`"schema": "irc-partition-report/1"`):

    {
      "schema": "irc-partition-report/1",
      "target": "npu-demo",
      "mode": "support",
      "ops": {"total": 16, "npu": 14, "cpu": 2, "coverage": 0.875},
      "macs": {"total": 724406816, "npu": 724406816, "coverage": 1.0},
      "subgraphs": [{"name": "main_npu0", "function": "main", "ops": 9, "macs": 665784320}],
      "transitions": 2,
      "transfers": {
        "input": {"count": 1, "bytes": 150528},
        "output": {"count": 1, "bytes": 1000},
        "transition": {"count": 2, "bytes": 559872},
        "bytes": 711400
      },
      "estimated_us": {"npu": 1234.5, "cpu": 56.7, "transfers": 89.0, "total": 1380.2},
      "fallbacks": [
        {"function": "main", "op": "nn.lrn", "node": "norm1", "location": null,
         "reasons": ["nn.lrn: not in target npu-demo's support table"]}
      ]
    }

`coverage` is null when the total is 0 (a model without MACs); `node` is the ONNX node
name of an imported op (null for parsed IR) and `location` its `file:line:col` in
parsed IR (null for imported ops).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from irc.diagnostics import Location
from irc.fileio import write_report

SCHEMA = "irc-partition-report/1"
"""The `schema` field of the JSON report; bumped when a field changes meaning."""


def microseconds(seconds: float) -> float:
    """Seconds as microseconds rounded to the nanosecond (what reports print)."""
    return round(seconds * 1e6, 3)


def format_time(seconds: float) -> str:
    """A time for people: `12.345 us` below a millisecond, `1.234 ms` from there."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.3f} us"
    return f"{seconds * 1e3:.3f} ms"


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _counted(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _percent(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "n/a"


@dataclass(frozen=True)
class FallbackOp:
    """An `nn` op that stays on the CPU, where it is, and every reason why."""

    function: str
    """The function the op is in (without `@`)."""
    op: str
    """The op's name (`nn.lrn`)."""
    at: Location
    """The op's location: its ONNX node name, or its position in parsed IR."""
    reasons: tuple[str, ...]

    @property
    def node(self) -> str | None:
        """The ONNX node name of an imported op."""
        return self.at.name

    @property
    def location(self) -> str | None:
        """`file:line:col` of an op parsed from text."""
        if self.at.line is None:
            return None
        return f"{self.at.file or '<input>'}:{self.at.line}:{self.at.col or 1}"

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of this fallback op."""
        return {
            "function": self.function,
            "op": self.op,
            "node": self.node,
            "location": self.location,
            "reasons": list(self.reasons),
        }

    def describe(self) -> str:
        """`nn.lrn 'norm1' in @main`, with the file position instead for parsed IR."""
        where = [f"'{self.node}'"] if self.node else []
        if self.location:
            where.append(f"at {self.location}")
        return " ".join([self.op, *where, f"in @{self.function}"])


@dataclass(frozen=True)
class SubgraphSummary:
    """One NPU subgraph: the function it was outlined into, and what it holds."""

    name: str
    """The NPU function's name (`main_npu0`)."""
    function: str
    """The function it was outlined from (`main`)."""
    ops: int
    """The `nn` compute ops in it (constants excluded)."""
    macs: int


@dataclass(frozen=True)
class TransferCount:
    """Copies between host and NPU memory of one kind: how many, how many bytes."""

    count: int = 0
    bytes: int = 0

    def to_dict(self) -> dict[str, int]:
        """The JSON object of this count."""
        return {"count": self.count, "bytes": self.bytes}


@dataclass(frozen=True)
class PartitionReport:
    """What the `partition` pass decided for a module on a target.

    Counts cover every partitioned function of the module. `ops_*` count `nn` compute
    ops (constants excluded); `transitions` counts switches between NPU and CPU
    execution inside functions; copies of function inputs to the NPU and of returned
    values from it are `input_transfers` and `output_transfers`, all other copies are
    `transition_transfers`. Times are the cost model's estimates in seconds
    (irc/backend/cost.py): `transfer_seconds` includes the synchronisation of every transition.
    """

    target: str
    mode: str
    ops_total: int
    ops_npu: int
    macs_total: int
    macs_npu: int
    subgraphs: tuple[SubgraphSummary, ...]
    transitions: int
    input_transfers: TransferCount
    output_transfers: TransferCount
    transition_transfers: TransferCount
    npu_seconds: float
    cpu_seconds: float
    transfer_seconds: float
    fallbacks: tuple[FallbackOp, ...]

    @property
    def bytes_transferred(self) -> int:
        """Bytes copied between host and NPU memory, all kinds together."""
        kinds = (self.input_transfers, self.output_transfers, self.transition_transfers)
        return sum(kind.bytes for kind in kinds)

    @property
    def total_seconds(self) -> float:
        """The estimated time of the partitioned module: NPU, CPU and transfers."""
        return self.npu_seconds + self.cpu_seconds + self.transfer_seconds

    # ---- renderings --------------------------------------------------------------------

    def summary(self) -> str:
        """The report in one line (the pass's remark)."""

        macs = (
            f"{_percent(self.macs_npu, self.macs_total)} of MACs" if self.macs_total else "no MACs"
        )
        return (
            f"partition: target {self.target}, mode {self.mode}: "
            f"{self.ops_npu}/{self.ops_total} ops on the NPU "
            f"({_percent(self.ops_npu, self.ops_total)}), {macs}, "
            f"{_counted(len(self.subgraphs), 'NPU subgraph')}, "
            f"{_counted(self.transitions, 'transition')}, "
            f"{_counted(len(self.fallbacks), 'fallback op')}"
        )

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data (see the module docstring)."""
        return {
            "schema": SCHEMA,
            "target": self.target,
            "mode": self.mode,
            "ops": {
                "total": self.ops_total,
                "npu": self.ops_npu,
                "cpu": self.ops_total - self.ops_npu,
                "coverage": _ratio(self.ops_npu, self.ops_total),
            },
            "macs": {
                "total": self.macs_total,
                "npu": self.macs_npu,
                "coverage": _ratio(self.macs_npu, self.macs_total),
            },
            "subgraphs": [
                {"name": s.name, "function": s.function, "ops": s.ops, "macs": s.macs}
                for s in self.subgraphs
            ],
            "transitions": self.transitions,
            "transfers": {
                "input": self.input_transfers.to_dict(),
                "output": self.output_transfers.to_dict(),
                "transition": self.transition_transfers.to_dict(),
                "bytes": self.bytes_transferred,
            },
            "estimated_us": {
                "npu": microseconds(self.npu_seconds),
                "cpu": microseconds(self.cpu_seconds),
                "transfers": microseconds(self.transfer_seconds),
                "total": microseconds(self.total_seconds),
            },
            "fallbacks": [fallback.to_dict() for fallback in self.fallbacks],
        }

    def to_json(self) -> str:
        """The JSON report, indented, with a final newline."""
        return json.dumps(self.to_dict(), indent=2) + "\n"

    def to_text(self) -> str:
        """The report for people."""

        def transfers(kind: TransferCount) -> str:
            return f"{kind.count} ({kind.bytes:,} bytes)"

        lines = [
            f"Partition report: target {self.target}, mode {self.mode}",
            f"  NPU coverage: {self.ops_npu} of {self.ops_total} ops "
            f"({_percent(self.ops_npu, self.ops_total)}), {self.macs_npu:,} of "
            f"{self.macs_total:,} MACs ({_percent(self.macs_npu, self.macs_total)})",
            f"  NPU subgraphs: {len(self.subgraphs)}",
            f"  transitions: {self.transitions}",
            f"  transfers: input {transfers(self.input_transfers)}, output "
            f"{transfers(self.output_transfers)}, at transitions "
            f"{transfers(self.transition_transfers)}; {self.bytes_transferred:,} bytes in all",
            f"  estimated time: NPU {format_time(self.npu_seconds)}, CPU "
            f"{format_time(self.cpu_seconds)}, transfers {format_time(self.transfer_seconds)}, "
            f"total {format_time(self.total_seconds)}",
        ]
        for subgraph in self.subgraphs:
            lines.append(
                f"  @{subgraph.name} (from @{subgraph.function}): "
                f"{_counted(subgraph.ops, 'op')}, {subgraph.macs:,} MACs"
            )
        lines.append(f"  fallback ops: {len(self.fallbacks)}")
        for fallback in self.fallbacks:
            lines.append(f"    {fallback.describe()}")
            lines.extend(f"      - {reason}" for reason in fallback.reasons)
        return "\n".join(lines) + "\n"

    def write(self, path: Path | str) -> None:
        """Write the report to `path`, atomically: JSON for `.json`, else text.

        A path that cannot be written is an `IrcError` naming it.
        """
        write_report(path, self.to_json, self.to_text, "partition report", "partition{report=PATH}")
