"""`cse`: common subexpression elimination.

Two side-effect-free ops with the same name, operands, properties, attributes and
result types compute the same values; the later one is replaced by the earlier one
when the earlier one dominates it. `nn` ops are pure, so duplicated constants and
duplicated computations on the same inputs are merged.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.common_subexpression_elimination import cse


@dataclass(frozen=True)
class CSEPass(ModulePass):
    """Merge identical side-effect-free ops (common subexpression elimination).

    An op is replaced by an earlier, dominating op with the same name, operands,
    properties, attributes and result types. Ops whose results are unused and that
    have no side effects are erased on the way, as MLIR's CSE does.

    ```mlir
    %a = nn.relu %x : tensor<4xf32>
    %b = nn.relu %x : tensor<4xf32>
    %s = nn.add %a, %b : tensor<4xf32>
    ```

    becomes

    ```mlir
    %a = nn.relu %x : tensor<4xf32>
    %s = nn.add %a, %a : tensor<4xf32>
    ```
    """

    name = "cse"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        cse(op)
