"""`convert-layout`: rewrite spatial ops to one data layout (NHWC or NCHW).

Every op with a `layout` property (conv, conv_transpose, pooling, batch_norm,
instance_norm, lrn, depth_to_space) that is not in the target layout computes the same
thing in the target layout on transposed operands: a transpose goes in front of each
of its layout operands (a constant weight is transposed right away into a new
constant, at the weight's location) and one after each result, back to the original
layout. `cancel-transposes` then removes the transposes that are not needed, which
leaves them at the graph's inputs and outputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.rewriter import InsertPoint

from irc.dialects import nn
from irc.dialects.base import channels_first_perm, channels_last_perm, tensor_type
from irc.ir.constants import constant_array
from irc.passes import option
from irc.transforms.cancel_transposes import (
    cancel_transposes,
    count_transposes,
    erase_if_dead,
    functions_of,
    make_transpose,
    report_counts,
)

Layout = Literal["nhwc", "nchw"]


def layout_perms(target: Layout, rank: int) -> tuple[list[int], list[int]]:
    """(into, back): the permutations that take a tensor of `rank` from the other
    layout into `target`, and back."""
    if target == "nhwc":
        return channels_last_perm(rank), channels_first_perm(rank)
    return channels_first_perm(rank), channels_last_perm(rank)


@dataclass
class ConvertOpLayout(RewritePattern):
    """Rewrite a spatial op to the target layout between transposes."""

    target: Layout
    transposed_constants: dict[tuple[SSAValue, tuple[int, ...]], SSAValue]
    """Constants already transposed, so that a weight shared by several ops is
    transposed once."""

    # conv(x, w) {layout = nchw} -> transpose(conv(transpose(x), w') {layout = nhwc})
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, nn.NNOp) or not op.LAYOUT_OPERANDS:
            return
        if op.props().str("layout") == self.target:
            return
        new_ops: list[Operation] = []
        operands: list[SSAValue] = []
        for index, operand in enumerate(op.operands):
            rank = len(tensor_type(operand).get_shape())
            into, _ = layout_perms(self.target, rank)
            if index not in op.LAYOUT_OPERANDS or into == list(range(rank)):
                operands.append(operand)
            elif (transposed := self.transposed_constant(operand, into, rewriter)) is not None:
                operands.append(transposed)
            else:
                new_ops.append(make_transpose(operand, into, op))
                operands.append(new_ops[-1].results[0])
        properties = dict(op.properties)
        if self.target == "nchw":
            properties.pop("layout", None)  # the default
        else:
            properties["layout"] = StringAttr(self.target)
        converted = type(op).build(operands, properties, location=op.location)
        converted.attributes.update(op.attributes)
        new_ops.append(converted)
        results: list[SSAValue] = []
        for result in converted.results:
            rank = len(tensor_type(result).get_shape())
            _, back = layout_perms(self.target, rank)
            if back == list(range(rank)):
                results.append(result)
            else:
                new_ops.append(make_transpose(result, back, op))
                results.append(new_ops[-1].results[0])
        old_operands = list(op.operands)
        rewriter.replace(op, new_ops, results)
        erase_if_dead(rewriter, old_operands)  # weights replaced by transposed copies

    def transposed_constant(
        self, value: SSAValue, perm: list[int], rewriter: PatternRewriter
    ) -> SSAValue | None:
        """`value` transposed by `perm` as a new constant next to it (at its location),
        if it is a constant; None otherwise."""
        key = (value, tuple(perm))
        if key in self.transposed_constants:
            return self.transposed_constants[key]
        array = constant_array(value)
        owner = value.owner
        if array is None or not isinstance(owner, nn.ConstantOp):
            return None
        constant = nn.ConstantOp.from_array(np.transpose(array, perm), location=owner.location)
        constant.result.name_hint = value.name_hint
        rewriter.insert(constant, InsertPoint.after(owner))
        self.transposed_constants[key] = constant.result
        return constant.result


@dataclass(frozen=True)
class ConvertLayoutPass(ModulePass):
    """Rewrite spatial ops to NHWC (or back to NCHW), leaving transposes only where needed.

    Every op with a `layout` property (`nn.conv`, `nn.conv_transpose`, the pooling
    ops, `nn.batch_norm`, `nn.instance_norm`, `nn.lrn`, `nn.depth_to_space`) that is
    not in the target layout is rewritten to it: a transpose goes in front of each of
    its layout operands (the data, and a conv's weight: a constant weight becomes a new
    transposed constant right away, keeping the weight's location) and one after its
    result, back to the original layout. Then the transposes are cancelled as
    `cancel-transposes` does (sunk through layout-agnostic ops until inverse pairs
    meet), so that, on a network of convs, pooling, elementwise ops, concats and a
    classifier, transposes remain only on the function's arguments and results. A
    remark at each function gives the transpose counts before and after, e.g.
    "convert-layout: 0 transposes before, 2 after (at inputs/outputs)".

    Before:

        func.func @f(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
          %w = nn.constant dense<...> : tensor<4x3x1x1xf32>
          %c = nn.conv %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x1x1xf32>) -> tensor<1x4x8x8xf32>
          %r = nn.relu %c : tensor<1x4x8x8xf32>
          func.return %r : tensor<1x4x8x8xf32>
        }

    After:

        func.func @f(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
          %w = nn.constant dense<...> : tensor<4x1x1x3xf32>
          %t = nn.transpose %x {perm = [0, 2, 3, 1]} : (tensor<1x3x8x8xf32>) -> tensor<1x8x8x3xf32>
          %c = nn.conv %t, %w {layout = "nhwc"} : (tensor<1x8x8x3xf32>, tensor<4x1x1x3xf32>) -> tensor<1x8x8x4xf32>
          %r = nn.relu %c : tensor<1x8x8x4xf32>
          %y = nn.transpose %r {perm = [0, 3, 1, 2]} : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
          func.return %y : tensor<1x4x8x8xf32>
        }
    """

    name = "convert-layout"

    layout: Literal["nhwc", "nchw"] = option(
        "nhwc", "the layout of spatial ops: nhwc (channels last) or nchw"
    )
    cancel: bool = option(
        True, "cancel the transposes afterwards (false: keep every inserted transpose)"
    )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = functions_of(op)
        before = [count_transposes(function).total for function in functions]
        pattern = ConvertOpLayout(self.layout, {})
        applier = GreedyRewritePatternApplier([pattern], dce_enabled=False)
        PatternRewriteWalker(applier, apply_recursively=False).rewrite_module(op)
        if self.cancel:
            cancel_transposes(op)
        for function, count in zip(functions, before):
            report_counts(self.name, function, count, count_transposes(function))
