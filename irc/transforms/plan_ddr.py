"""`plan-ddr`: bufferize every function and place its buffers in DDR.

See `irc.tiling.memory` for the rules (weights in a read-only region, views and
zero-copy concats, in-place elementwise ops, greedy placement by size over live
ranges) and docs/tiling.md for the report.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    UnitAttr,
    i64,
)
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass

from irc import backend
from irc.diagnostics import Diagnostic, Location, Severity, emit, error
from irc.fileio import write_report
from irc.passes import option
from irc.tiling.memory import KEEP_INPUTS_ATTR, Homes, MemoryPlan, PlacementError, plan_function

OFFSETS_ATTR = "irc.ddr"
"""On an op: the offset of each tensor result in its memory's arena (or the weights
region) (-1: no buffer, an SRAM accumulator)."""

MEMORIES_ATTR = "irc.memories"
"""On an op, when the target has more than one memory for activations: the memory of
each tensor result ("" for an SRAM accumulator)."""


def annotate(function: FuncOp, plan: MemoryPlan, index_of: dict) -> None:
    """Record the plan on the function's ops and on the function itself."""
    block = function.body.blocks.first
    assert block is not None
    several = len(plan.homes.activations) > 1
    for op in block.ops:
        offsets = [
            plan.values[index_of[result]].offset if result in index_of else -1
            for result in op.results
        ]
        if offsets and any(result in index_of for result in op.results):
            op.attributes[OFFSETS_ATTR] = DenseArrayBase.from_list(i64, offsets)
            if several:
                op.attributes[MEMORIES_ATTR] = ArrayAttr(
                    [
                        StringAttr(
                            plan.values[index_of[result]].memory if result in index_of else ""
                        )
                        for result in op.results
                    ]
                )
    arguments = [
        plan.values[index_of[argument]].offset if argument in index_of else -1
        for argument in block.args
    ]
    function.attributes["irc.ddr_arguments"] = DenseArrayBase.from_list(i64, arguments)
    function.attributes["irc.ddr_arena"] = IntegerAttr(plan.arena_bytes, i64)
    function.attributes["irc.ddr_weights"] = IntegerAttr(plan.weights_bytes, i64)


@dataclass(frozen=True)
class PlanDDRPass(ModulePass):
    """Bufferize each function and place its tensors in the target's memories by live
    range.

    Weights go to a read-only region of their memory; a reshape, flatten, squeeze, unsqueeze,
    identity or part.transfer is a view of its input's buffer (zero-copy); the inputs of a concat that
    only the concat reads are written into their slices of its buffer (zero-copy
    concat); an elementwise op writes over an input that dies there (in place); the
    int32 accumulator of a qnn conv or gemm that only its requantize reads stays in
    SRAM. Other tensors get buffers, placed largest first at the lowest offset free
    during their live range, aligned to their memory's alignment, in the first of the
    placement's activation memories with room for them. Each op gets `irc.ddr =
    array<i64: offset per result>` (and `irc.memories`, the memory of each, when the
    target has several for activations), each function `irc.ddr_arguments`,
    `irc.ddr_arena` (bytes, all arenas) and `irc.ddr_weights`; a remark gives the arena
    against the naive sum, and `report=FILE` writes every buffer (JSON for `.json`).
    With `keep-inputs=true` the function's inputs keep their buffers to its end (no
    later tensor reuses their bytes), so that streamed frames can place the next
    input while a frame runs; the function is marked `irc.keep_inputs` for
    lower-to-tile, which places the buffers again.

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
    keep_inputs: bool = option(
        False,
        "the inputs keep their buffers to the end, so that the runtime can place the next "
        "frame's inputs while this frame runs (streamed frames)",
    )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from irc.targets import require_target

        target = require_target(self.name, self.target or None)
        homes = Homes.of(target)
        texts, jsons = [], []
        for function in [o for o in op.ops if isinstance(o, FuncOp)]:
            if function.body.blocks.first is None:
                continue
            if self.keep_inputs:
                # Marked on the function: lower-to-tile places its buffers again.
                function.attributes[KEEP_INPUTS_ATTR] = UnitAttr()
            try:
                plan, index_of = plan_function(
                    function,
                    homes,
                    backend.TileRules(target),
                    zero_copy=self.zero_copy,
                    in_place=self.in_place,
                )
            except PlacementError as problem:
                raise error(
                    f"plan-ddr: {problem}",
                    function,
                    hint=f"a target with more memory than {target.name}'s",
                ) from None
            annotate(function, plan, index_of)
            texts.append(f"@{function.sym_name.data}: {plan.to_text()}")
            jsons.append(f'"{function.sym_name.data}": {plan.to_json().rstrip()}')
            arenas = (
                "; " + ", ".join(f"{name} {size}" for name, size in plan.arenas.items())
                if len(plan.arenas) > 1
                else ""
            )
            emit(
                Diagnostic(
                    f"plan-ddr: arena {plan.arena_bytes} bytes (naive {plan.naive_bytes}, "
                    f"at least {plan.peak_live_bytes} live at once), weights "
                    f"{plan.weights_bytes} bytes{arenas}",
                    Location.of(function),
                    Severity.REMARK,
                )
            )
        if self.report:
            write_report(
                self.report,
                lambda: "{\n" + ",\n".join(jsons) + "\n}\n",
                lambda: "".join(texts),
                "memory report",
                "plan-ddr{report=PATH}",
            )
