"""`dce`: dead code elimination.

Erases ops whose results are never used and that have no side effects (every `nn`
op), including chains of such ops and unreachable blocks. Functions, terminators and
ops with unknown effects are kept.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.dead_code_elimination import region_dce


@dataclass(frozen=True)
class DCEPass(ModulePass):
    """Erase side-effect-free ops whose results are unused (dead code elimination).

    Liveness is propagated backwards, so a chain of ops that only feed each other and
    no live op is erased as a whole. Terminators, symbols (functions) and ops with
    unknown side effects are always live.

    ```mlir
    %dead = nn.exp %x : tensor<4xf32>
    %also_dead = nn.neg %dead : tensor<4xf32>
    %r = nn.relu %x : tensor<4xf32>
    func.return %r : tensor<4xf32>
    ```

    becomes

    ```mlir
    %r = nn.relu %x : tensor<4xf32>
    func.return %r : tensor<4xf32>
    ```
    """

    name = "dce"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        region_dce(op.body)
