"""`plan-ddr`: bufferize every function and place its buffers in DDR.

See `irc.tiling.memory` for the rules (weights in a read-only region, views and
zero-copy concats, in-place elementwise ops, greedy placement by size over live
ranges) and docs/tiling.md for the report.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, ModuleOp, i64
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass

from irc import backend
from irc.diagnostics import Diagnostic, Location, Severity, emit
from irc.fileio import write_report
from irc.passes import option
from irc.tiling.memory import MemoryPlan, plan_function

OFFSETS_ATTR = "irc.ddr"
"""On an op: the DDR offset of each tensor result (-1: no buffer, an SRAM accumulator)."""


def annotate(function: FuncOp, plan: MemoryPlan, index_of: dict) -> None:
    """Record the plan on the function's ops and on the function itself."""
    block = function.body.blocks.first
    assert block is not None
    for op in block.ops:
        offsets = [
            plan.values[index_of[result]].offset if result in index_of else -1
            for result in op.results
        ]
        if offsets and any(result in index_of for result in op.results):
            op.attributes[OFFSETS_ATTR] = DenseArrayBase.from_list(i64, offsets)
    arguments = [
        plan.values[index_of[argument]].offset if argument in index_of else -1
        for argument in block.args
    ]
    function.attributes["irc.ddr_arguments"] = DenseArrayBase.from_list(i64, arguments)
    function.attributes["irc.ddr_arena"] = IntegerAttr(plan.arena_bytes, i64)
    function.attributes["irc.ddr_weights"] = IntegerAttr(plan.weights_bytes, i64)


@dataclass(frozen=True)
class PlanDDRPass(ModulePass):
    """Bufferize each function and place its tensors in DDR by live range.

    Weights go to a read-only region; a reshape, flatten, squeeze, unsqueeze,
    identity or part.transfer is a view of its input's buffer (zero-copy); the inputs of a concat that
    only the concat reads are written into their slices of its buffer (zero-copy
    concat); an elementwise op writes over an input that dies there (in place); the
    int32 accumulator of a qnn conv or gemm that only its requantize reads stays in
    SRAM. Other tensors get buffers, placed largest first at the lowest offset free
    during their live range, aligned to the target's DMA burst. Each op gets
    `irc.ddr = array<i64: offset per result>`, each function `irc.ddr_arguments`,
    `irc.ddr_arena` (bytes) and `irc.ddr_weights`; a remark gives the arena against
    the naive sum, and `report=FILE` writes every buffer (JSON for `.json`).

    ```mlir
    %r = nn.relu %y : tensor<1x8x8x16xi8>     // in place of %y, which dies here
    %c = nn.concat %r, %s {axis = 3} : ...     // %r and %s were written into %c
    // become
    %r = nn.relu %y {irc.ddr = array<i64: 0>} : ...
    %c = nn.concat %r, %s {axis = 3, irc.ddr = array<i64: 0>} : ...
    ```
    """

    name = "plan-ddr"

    target: str = option("", "the target: a preset name or a TOML file (default: irc-opt --target)")
    report: str = option("", "write every buffer's placement to this file (JSON for .json)")
    zero_copy: bool = option(True, "views and concats share their inputs' buffers")
    in_place: bool = option(True, "elementwise ops write over an input that dies there")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from irc.targets import require_target

        target = require_target(self.name, self.target or None)
        alignment = target.dma.burst_bytes
        texts, jsons = [], []
        for function in [o for o in op.ops if isinstance(o, FuncOp)]:
            if function.body.blocks.first is None:
                continue
            plan, index_of = plan_function(
                function,
                alignment,
                backend.TileRules(target),
                zero_copy=self.zero_copy,
                in_place=self.in_place,
            )
            annotate(function, plan, index_of)
            texts.append(f"@{function.sym_name.data}: {plan.to_text()}")
            jsons.append(f'"{function.sym_name.data}": {plan.to_json().rstrip()}')
            emit(
                Diagnostic(
                    f"plan-ddr: arena {plan.arena_bytes} bytes (naive {plan.naive_bytes}, "
                    f"at least {plan.peak_live_bytes} live at once), weights "
                    f"{plan.weights_bytes} bytes",
                    Location.of(function),
                    Severity.REMARK,
                )
            )
        if self.report:
            write_report(
                self.report,
                lambda: "{\n" + ",\n".join(jsons) + "\n}\n",
                lambda: "".join(texts),
                "DDR report",
                "plan-ddr{report=PATH}",
            )
