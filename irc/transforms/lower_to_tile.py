"""`lower-to-tile`: every NPU layer becomes a loop nest over its tiles (the tile level).

The pass consumes what `plan-tiles` recorded (`irc.tiling`: each layer's tile and
loop order, and its SRAM layout) and bufferizes as `plan-ddr` plans; layers without
a recorded plan are planned here with the same cost model. See
`irc.tiling.lowering` for the scheme and docs/tiling.md for a worked example.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass

from irc import backend
from irc.diagnostics import Diagnostic, Location, Severity, emit
from irc.passes import option
from irc.tiling.lowering import lower_function


def _listing(counts: Counter[str]) -> str:
    return ", ".join(f"{name} x{count}" for name, count in sorted(counts.items()))


@dataclass(frozen=True)
class LowerToTilePass(ModulePass):
    """Lower each NPU layer to `tile` ops: DDR buffers, `scf.for` loops over tiles,
    copies into SRAM tiles (halos padded with the zero point), compute on tiles.

    Every op on the NPU (as `partition` placed it, `irc.device`; in a module never
    partitioned, as the backend table places it) becomes the loop nest its backend
    table entry builds: a `qnn` conv, gemm or matmul with the requantize of its
    accumulator, a max, average or global average pool, an add or mul
    (broadcasting), clamp, lookup table or standalone requantize, a constant pad, a
    concat, a transpose, slice or split, and their float `nn` forms; in the plan's
    order (`irc.tiling` from plan-tiles, else planned here), whole tiles in a loop
    and the remainder peeled; every tensor they touch becomes a DDR buffer placed as
    plan-ddr places it (`offset` on `tile.alloc` and `tile.to_buffer`), a value inside
    another buffer that a layer must read whole copied into one of its own. Views
    (reshape, transfers) move nothing; ops on the host (float islands such as
    softmax, casts) stay tensor ops between `tile.to_tensor` and `tile.to_buffer`. A remark counts the tiled layers and lists
    the ops left on tensors. The result runs bit-exactly as the `qnn` program did
    (float layers within rounding).

    ```mlir
    %acc = qnn.conv %x, %w, %b {layout = "nhwc", pads = [1, 1, 1, 1]} : ...
    %y = qnn.requantize %acc {axis = 3, multiplier = [...], shift = [...]} : ...
    // becomes
    %y = tile.alloc {offset = 0} : memref<1x12x12x16xi8, "ddr">
    scf.for %i = %c0 to %c3 step %c1 {
      tile.copy %x[...] to %box[...] sizes [1, 6, 14, 8] {pad = -3} : ...
      tile.conv %box, %ws, %acc {input_zero_point = -3} : ...
      tile.bias_add %acc, %bs : ...
      tile.requantize %acc, %ps, %ys {output_zero_point = 5} : ...
      tile.copy %ys[...] to %y[...] sizes [1, 4, 12, 16] : ...
    }
    ```
    """

    name = "lower-to-tile"

    target: str = option("", "the target: a preset name or a TOML file (default: irc-opt --target)")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from irc.targets import require_target

        target = require_target(self.name, self.target or None)
        backend.require_unoutlined(op, self.name)
        for function in [o for o in op.ops if isinstance(o, FuncOp)]:
            if function.body.blocks.first is None:
                continue
            stats = lower_function(function, target, backend.TileRules(target))
            kept = f"; on tensors: {_listing(stats.kept)}" if stats.kept else ""
            emit(
                Diagnostic(
                    f"lower-to-tile: {sum(stats.layers.values())} layers tiled "
                    f"({_listing(stats.layers)}), {stats.loops} loop bodies{kept}",
                    Location.of(function),
                    Severity.REMARK,
                )
            )
