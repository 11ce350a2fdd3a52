"""`prepare-quantize`: make a float module ready to calibrate and quantize.

See `irc.quantize.qdq.affine_to_depthwise` and `unique_locations`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass

from irc.diagnostics import Diagnostic, Location, Severity, emit
from irc.quantize.qdq import prepare_for_calibration


@dataclass(frozen=True)
class PrepareQuantizePass(ModulePass):
    """Prepare a float module for calibration: per-channel affine ops become depthwise convs, ops that share a location get their own.

    A per-channel `x * s + t` by constants (an unfolded batch norm, as after a concat)
    becomes a depthwise 1x1 conv, which quantizes with per-channel weights instead of
    rounding its product to int8 twice; and ops that share a location (fold-batchnorm's
    mul and add, the transposes of convert-layout) are renamed `NAME.OP`, since
    calibration names each tensor by its op's location. Run it before `quantize` (and
    on the module `irc-calibrate` calibrates): `irc-compile` does. A remark gives both
    counts.

    ```mlir
    %m = nn.mul %x, %scale : (tensor<1x8x4x4xf32>, tensor<1x8x1x1xf32>) -> tensor<1x8x4x4xf32>
    %y = nn.add %m, %shift : (tensor<1x8x4x4xf32>, tensor<1x8x1x1xf32>) -> tensor<1x8x4x4xf32>
    // becomes
    %y = nn.conv %x, %w, %b {group = 8} : (tensor<1x8x4x4xf32>, tensor<8x1x1x1xf32>, tensor<8xf32>) -> tensor<1x8x4x4xf32>
    ```
    """

    name = "prepare-quantize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        depthwise, renamed = prepare_for_calibration(op)
        anchor = next(iter(o for o in op.ops if isinstance(o, FuncOp)), op)
        emit(
            Diagnostic(
                f"prepare-quantize: {depthwise} affine ops to depthwise convs, "
                f"{renamed} ops renamed",
                Location.of(anchor),
                Severity.REMARK,
            )
        )
