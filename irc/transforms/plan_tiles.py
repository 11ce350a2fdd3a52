"""`plan-tiles`: choose every NPU layer's tile under the target's SRAM, and report it.

The planning step of the tile level: each layer the NPU runs gets a tile from the
cost model of `irc.tiling.planner` (SRAM with double buffering, DMA with bursts,
compute on the MAC array or vector unit), recorded on the op as the discardable
attribute `irc.tiling`, and a per-layer report gives the tile, the tile count, the
SRAM used, the DDR bytes moved, the estimated cycles and the layer's lower bound.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    i64,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from irc import backend
from irc.diagnostics import Diagnostic, Location, Severity, emit, error
from irc.fileio import write_report
from irc.passes import option
from irc.tiling.alignment import AlignmentChoice, choose_alignment
from irc.tiling.planner import (
    FORCE_ATTR,
    PLAN_ATTR,
    Layer,
    Plan,
    Tile,
    TilingError,
    layer_name,
    plan_layer,
)


@dataclass
class TilingReport:
    """Every planned layer of a module, in program order."""

    target: str
    sram_bytes: int
    plans: list[Plan] = field(default_factory=list)
    alignments: list[AlignmentChoice] = field(default_factory=list)
    """Every tensor whose channel stride padding could speed up, and the decision."""

    @property
    def cycles(self) -> int:
        return sum(plan.cycles for plan in self.plans)

    @property
    def lower_bound(self) -> int:
        return sum(plan.lower_bound for plan in self.plans)

    @property
    def peak_sram(self) -> int:
        return max((plan.sram_bytes for plan in self.plans), default=0)

    def to_json(self) -> str:
        """The report as JSON (keys sorted, one layer per entry)."""
        layers = [
            {
                "name": plan.layer.name,
                "op": plan.layer.op,
                "kind": plan.layer.kind,
                "tile": [plan.tile.rows, plan.tile.columns, plan.tile.channels, plan.tile.depth],
                "tiles": list(plan.counts),
                "order": plan.order,
                "double_buffered": plan.double_buffered,
                "sram_bytes": plan.sram_bytes,
                "buffers": plan.buffers,
                "sram_offsets": {name: list(v) for name, v in plan.sram_offsets.items()},
                "ddr_read": plan.ddr_read,
                "ddr_written": plan.ddr_written,
                "compute_cycles": plan.compute_cycles,
                "load_cycles": plan.load_cycles,
                "store_cycles": plan.store_cycles,
                "cycles": plan.cycles,
                "lower_bound": plan.lower_bound,
            }
            for plan in self.plans
        ]
        alignments = [
            {
                "tensor": choice.tensor,
                "channels": choice.channels,
                "stored": choice.stored,
                "padded": choice.padded,
                "cycles": choice.cycles,
                "padded_cycles": choice.padded_cycles,
                "extra_bytes": choice.extra_bytes,
                "layers": list(choice.layers),
            }
            for choice in self.alignments
        ]
        data = {
            "alignment": alignments,
            "target": self.target,
            "sram_bytes": self.sram_bytes,
            "cycles": self.cycles,
            "lower_bound": self.lower_bound,
            "peak_sram": self.peak_sram,
            "layers": layers,
        }
        return json.dumps(data, indent=2, sort_keys=True) + "\n"

    def to_text(self) -> str:
        """The report as a table, one layer per line."""
        header = (
            f"{'layer':<28} {'op':<22} {'tile HxWxC/K':<16} {'tiles':>6} {'order':<7} "
            f"{'SRAM':>9} {'DDR read':>10} {'DDR write':>10} {'cycles':>10} "
            f"{'bound':>10} {'eff':>5}"
        )
        lines = [
            f"tiling for {self.target} (SRAM {self.sram_bytes} bytes): "
            f"{len(self.plans)} layers, {self.cycles} cycles estimated, "
            f"lower bound {self.lower_bound}, peak SRAM {self.peak_sram} bytes",
            header,
        ]
        for plan in self.plans:
            buffering = "" if plan.double_buffered else " (single)"
            lines.append(
                f"{plan.layer.name[:28]:<28} {plan.layer.op:<22} {plan.tile!s:<16} "
                f"{plan.tile_count:>6} {plan.order:<7} {plan.sram_bytes:>9} "
                f"{plan.ddr_read:>10} {plan.ddr_written:>10} {plan.cycles:>10} "
                f"{plan.lower_bound:>10} {plan.efficiency:>5.0%}{buffering}"
            )
        if self.alignments:
            lines.append(
                "channel alignment (pad a tensor's channels to whole DMA bursts where it "
                "saves cycles):"
            )
        for choice in self.alignments:
            verdict = "padded" if choice.padded else "kept"
            lines.append(
                f"  {choice.tensor[:28]:<28} {choice.channels} -> {choice.stored} channels: "
                f"{choice.cycles} cycles as is, {choice.padded_cycles} padded "
                f"(+{choice.extra_bytes} DDR bytes): {verdict}"
            )
        return "\n".join(lines) + "\n"

    def write(self, path: Path | str) -> None:
        """Write the report atomically: JSON for `.json`, else text."""
        write_report(path, self.to_json, self.to_text, "tiling report", "plan-tiles{report=PATH}")


def _forced_tile(op: Operation, default: tuple[int, ...]) -> Tile | None:
    attribute = op.attributes.get(FORCE_ATTR)
    sizes: tuple[int, ...] = default
    if attribute is not None:
        if not isinstance(attribute, DenseArrayBase):
            raise error(
                f"'{FORCE_ATTR}' must be array<i64: rows, columns, channels, depth>",
                op,
            )
        sizes = tuple(int(v) for v in attribute.get_values())
    if not sizes:
        return None
    if len(sizes) != 4 or min(sizes) < 1:
        raise error(
            f"a tile is 4 positive sizes (rows, columns, channels, depth), got {list(sizes)}",
            op,
            hint=f"plan-tiles{{tile-sizes=8,56,64,32}} or {FORCE_ATTR} = array<i64: 8, 56, 64, 32>",
        )
    return Tile(*sizes)


def _plan_attribute(plan: Plan) -> DictionaryAttr:
    tile = plan.tile
    return DictionaryAttr(
        {
            "tile": DenseArrayBase.from_list(
                i64, [tile.rows, tile.columns, tile.channels, tile.depth]
            ),
            "tiles": DenseArrayBase.from_list(i64, list(plan.counts)),
            "order": StringAttr(plan.order),
            "double_buffered": BoolAttr.from_bool(plan.double_buffered),
            "sram": IntegerAttr(plan.sram_bytes, i64),
            "sram_offsets": DictionaryAttr(
                {
                    name: DenseArrayBase.from_list(i64, list(offsets))
                    for name, offsets in plan.sram_offsets.items()
                }
            ),
            "ddr_read": IntegerAttr(plan.ddr_read, i64),
            "ddr_written": IntegerAttr(plan.ddr_written, i64),
            "cycles": IntegerAttr(plan.cycles, i64),
            "lower_bound": IntegerAttr(plan.lower_bound, i64),
        }
    )


def plan_module(
    module: ModuleOp,
    target: object,
    tile_sizes: tuple[int, ...] = (),
    align_channels: bool = True,
) -> TilingReport:
    """Plan every NPU layer of `module` for `target`, decide channel alignment
    (`irc.tiling.alignment`), annotate the ops, and report."""
    from irc.targets import Target

    assert isinstance(target, Target)
    report = TilingReport(target.name, target.scratch.size_bytes)
    failures: list[Diagnostic] = []
    plans: dict[Operation, Plan] = {}
    names: dict[Operation, str] = {}
    for op in module.walk():
        if not backend.on_npu(op, target):
            continue
        location = Location.of(op)
        try:
            names[op] = layer_name(op)
            layer = backend.layer_of(op, names[op])
            if layer is None:
                continue
            plans[op] = plan_layer(layer, target, _forced_tile(op, tile_sizes))
        except TilingError as failure:
            failures.append(
                Diagnostic(
                    str(failure),
                    location,
                    hint="choose a target with more SRAM, or keep this layer on the CPU",
                )
            )
    if failures:
        from irc.diagnostics import IrcError

        raise IrcError(failures)
    if align_channels:
        for function in [o for o in module.ops if isinstance(o, FuncOp)]:
            if function.body.blocks.first is not None:
                report.alignments += choose_alignment(
                    function, plans, target, names, backend.TileRules(target), _layer_model
                )
    for op, plan in plans.items():
        op.attributes[PLAN_ATTR] = _plan_attribute(plan)
        report.plans.append(plan)
    return report


def _layer_model(op: Operation, name: str) -> Layer:
    layer = backend.layer_of(op, name)
    assert layer is not None, "a planned op has a layer"
    return layer


@dataclass(frozen=True)
class PlanTilesPass(ModulePass):
    """Choose each NPU layer's tile under the target's SRAM and record it as `irc.tiling`.

    Every layer on the NPU (as `partition` placed it, `irc.device`; in a module never
    partitioned, as the backend table places it) whose kind has a layer model in the
    backend table (convs, grouped and depthwise included, gemms, matmuls, pooling and
    elementwise ops, at the `qnn` level, a MAC layer with the `qnn.requantize` of its
    accumulator, or the float `nn` level) gets the fastest tile that fits the SRAM by the cost model of
    docs/tiling.md: output rows x columns x channels from `depth` input channels,
    double buffered when it fits, with the loop order that moves less. The plan is
    recorded on the op as a discardable attribute, and `report=FILE` writes the
    per-layer report (JSON for `.json`, else a table). A tile can be forced for every
    layer with `tile-sizes=rows,columns,channels,depth`, or for one op with the
    attribute `irc.tile_sizes = array<i64: ...>` (sizes above a dimension are clamped
    to it). A layer that cannot fit even with one output element per tile is an error
    giving the SRAM it needs.

    ```mlir
    %acc = qnn.conv %x, %w, %b {layout = "nhwc", pads = [1, 1, 1, 1]} : (tensor<1x56x56x32x!quant.uniform<i8:f32, 0.1>>, ...) -> tensor<1x56x56x64xi32>
    // with --target=npu-demo becomes
    %acc = qnn.conv %x, %w, %b {layout = "nhwc", pads = [1, 1, 1, 1]} {irc.tiling = {tile = array<i64: 2, 56, 32, 32>, tiles = array<i64: 28, 1, 2, 1>, order = "weights", double_buffered = true, sram = 41088 : i64, cycles = 239820 : i64, lower_bound = 225792 : i64, ...}} : ...
    ```
    """

    name = "plan-tiles"

    target: str = option("", "the target: a preset name or a TOML file (default: irc-opt --target)")
    report: str = option(
        "", "write the per-layer tiling report to this file (JSON if it ends in .json)"
    )
    tile_sizes: tuple[int, ...] = option(
        (), "force every layer's tile: rows,columns,channels,depth (for tests)"
    )
    align_channels: bool = option(
        True, "pad a tensor's stored channels to whole DMA bursts where it saves cycles"
    )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.run(op)

    def run(self, op: ModuleOp) -> TilingReport:
        """What `apply` does, returning the report (which irc-compile keeps)."""
        from irc.passes import PIPELINE_FILE
        from irc.targets import require_target

        if self.tile_sizes and (len(self.tile_sizes) != 4 or min(self.tile_sizes) < 1):
            raise error(
                f"tile-sizes takes 4 positive sizes (rows,columns,channels,depth), "
                f"got {list(self.tile_sizes)}",
                Location(file=PIPELINE_FILE),
                hint="plan-tiles{tile-sizes=8,56,64,32}",
            )
        target = require_target(self.name, self.target or None)
        report = plan_module(op, target, tuple(self.tile_sizes), self.align_channels)
        if self.report:
            report.write(self.report)
        anchor = next(iter(o for o in op.walk() if isinstance(o, FuncOp)), op)
        emit(
            Diagnostic(
                f"plan-tiles: {len(report.plans)} layers for {report.target}, "
                f"{report.cycles} cycles estimated (lower bound {report.lower_bound}), "
                f"peak SRAM {report.peak_sram} of {report.sram_bytes} bytes",
                Location.of(anchor),
                Severity.REMARK,
            )
        )
        return report
