"""`lower-to-npu`: the tile level becomes the `npu` command stream.

See irc/stream/lowering.py for the scheme and docs/simulator.md for the commands'
timing.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass

from irc import backend
from irc.diagnostics import Diagnostic, Location, Severity, emit
from irc.passes import option


@dataclass(frozen=True)
class LowerToNpuPass(ModulePass):
    """Lower each tile-level function to a command stream: loops unrolled, buffers at
    static DDR and SRAM addresses (`npu.view`), each copy one `npu.dma` (padding as a
    fill of the destination box), each conv or matmul with the bias and requantize of
    its accumulator one MAC command, vector ops one to one, the tensor ops between
    tiled layers `npu.host_call`s of new functions, and the signals and waits that
    order what races, no more. Double-buffered SRAM buffers alternate between their
    two copies tile by tile (`double-buffer=false`: always the first copy).

    ```mlir
    tile.copy %x[%c0, %r, %cm1, %c0] to %box[...] sizes [1, 7, 14, 4] {pad = -3} : ...
    tile.conv %box, %ws, %acc {input_zero_point = -3} : ...
    tile.requantize %acc, %ps, %out : ...
    // becomes, per tile
    npu.dma %x_rows to %box_inner fill %box {pad = -3} : ...
    npu.signal {queue = "dma_in", token = 4}
    npu.wait {queue = "mac", token = 4}
    npu.conv %box, %ws, %acc requantize %ps into %out {input_zero_point = -3} : ...
    ```
    """

    name = "lower-to-npu"

    target: str = option("", "the target: a preset name or a TOML file (default: irc-opt --target)")
    double_buffer: bool = option(True, "alternate double-buffered SRAM buffers tile by tile")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from irc.stream.lowering import StreamLowering
        from irc.targets import require_target

        target = require_target(self.name, self.target or None)
        backend.require_unoutlined(op, self.name)
        for function in [o for o in op.ops if isinstance(o, FuncOp)]:
            if function.body.blocks.first is None or backend.marked_device(function) == "cpu":
                continue  # a host function (one lower-to-npu outlined, or the CPU's part)
            stats = StreamLowering(op, function, target, self.double_buffer).run()
            commands = sum(stats.commands.values())
            emit(
                Diagnostic(
                    f"lower-to-npu: {commands} commands, {stats.signals} signals, "
                    f"{stats.waits} waits, {stats.host_calls} host calls, "
                    + ", ".join(
                        f"{size} bytes of {memory}" for memory, size in stats.memory_bytes.items()
                    ),
                    Location.of(function),
                    Severity.REMARK,
                )
            )
