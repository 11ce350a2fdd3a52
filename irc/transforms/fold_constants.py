"""`fold-constants`: evaluate every `nn` op whose operands are all constants.

The op is run by the reference interpreter (`irc.interp.evaluate_op`) and replaced by
`nn.constant` ops that keep its location, so folded weights keep their names.
`nn.shape` folds whenever its input's shape is static, which is always: this is what
collapses the Shape -> Gather -> Unsqueeze -> Concat chains that exporters emit
around reshapes. Constants whose weights were elided in the text have no data and
are left alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from irc.dialects import nn
from irc.dialects.base import tensor_type
from irc.ir.constants import constant_array
from irc.passes import PassOptionError, option


def _shape_result(op: nn.ShapeOp) -> np.ndarray:
    shape = tensor_type(op.input).get_shape()
    props = op.props()
    start, end = nn.shape_op_range(len(shape), props.int("start"), props.int("end"))
    return np.array(shape[start:end], dtype=np.int64)


@dataclass
class FoldConstantPattern(RewritePattern):
    """op(constants...) -> nn.constant; nn.shape(x) -> nn.constant."""

    max_elements: int | None = None
    """Do not fold ops whose results hold more elements than this (None: no limit)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, nn.NNOp) or isinstance(op, nn.ConstantOp):
            return
        if self.max_elements is not None and any(
            math.prod(tensor_type(result).get_shape()) > self.max_elements for result in op.results
        ):
            return
        if isinstance(op, nn.ShapeOp):
            results: tuple[np.ndarray, ...] = (_shape_result(op),)
        else:
            operands = [constant_array(operand) for operand in op.operands]
            arrays = [array for array in operands if array is not None]
            if len(arrays) != len(operands):
                return
            from irc.interp import evaluate_op

            results = evaluate_op(op, arrays)
        constants = [nn.ConstantOp.from_array(array, location=op.location) for array in results]
        rewriter.replace(op, constants, [constant.result for constant in constants])


@dataclass(frozen=True)
class FoldConstantsPass(ModulePass):
    """Evaluate nn ops whose operands are all constants, and static nn.shape ops.

    Each folded op is run by the reference interpreter and replaced by nn.constant
    ops at its location. This collapses the Shape/Gather/Slice/Concat/Unsqueeze
    chains that exporters emit around reshapes, and precomputes weight transforms.
    `canonicalize` folds the same way; this pass folds and does nothing else.

    ```mlir
    %shape = nn.shape %x : (tensor<2x3x4xf32>) -> tensor<3xi64>
    %rows = nn.slice %shape {starts = [1], ends = [2]} : (tensor<3xi64>) -> tensor<1xi64>
    %w = nn.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
    %t = nn.transpose %w {perm = [1, 0]} : (tensor<2x2xf32>) -> tensor<2x2xf32>
    ```

    becomes

    ```mlir
    %rows = nn.constant dense<3> : tensor<1xi64>
    %t = nn.constant dense<[[1.0, 3.0], [2.0, 4.0]]> : tensor<2x2xf32>
    ```
    """

    name = "fold-constants"

    max_elements: int = option(0, "do not fold ops producing more elements than this (0: no limit)")

    def __post_init__(self) -> None:
        if self.max_elements < 0:
            raise PassOptionError(
                f"max-elements must be at least 0 (0: no limit), got {self.max_elements}"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pattern = FoldConstantPattern(self.max_elements or None)
        PatternRewriteWalker(GreedyRewritePatternApplier([pattern])).rewrite_module(op)
