"""Outlining a run of ops into a function of its own (partitioning's NPU subgraphs,
the command stream's host calls).

`boundary` finds what a run of ops reads from outside it and what it gives to ops
outside it; `outline` moves the ops into a new `func.func` of those inputs and
outputs, each constant they read cloned into it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Operation, Region, SSAValue


def boundary(
    ops: Sequence[Operation], is_constant: Callable[[Operation], bool]
) -> tuple[list[SSAValue], list[SSAValue]]:
    """(inputs, outputs) of a run of ops: the values they read that neither they nor
    a constant define, in first-use order; their results that an op outside reads."""
    members = set(ops)
    inputs: list[SSAValue] = []
    for op in ops:
        for operand in op.operands:
            producer = operand.owner
            inside = isinstance(producer, Operation) and (
                producer in members or is_constant(producer)
            )
            if not inside and operand not in inputs:
                inputs.append(operand)
    outputs: list[SSAValue] = [
        result
        for op in ops
        for result in op.results
        if any(use.operation not in members for use in result.uses)
    ]
    return inputs, outputs


def outline(
    ops: Sequence[Operation],
    name: str,
    inputs: Sequence[SSAValue],
    outputs: Sequence[SSAValue],
    is_constant: Callable[[Operation], bool],
) -> FuncOp:
    """A new `func.func @name(inputs) -> outputs` holding `ops`, moved out of their
    block (their results keep their other uses), with a clone of each constant they
    read; the arguments keep the inputs' names."""
    body = Block(arg_types=[value.type for value in inputs])
    mapping: dict[SSAValue, SSAValue] = {}
    for value, argument in zip(inputs, body.args):
        argument.name_hint = value.name_hint
        mapping[value] = argument
    for op in ops:
        op.detach()
        operands = []
        for operand in op.operands:
            producer = operand.owner
            if isinstance(producer, Operation) and is_constant(producer) and operand not in mapping:
                copy = producer.clone()
                body.add_op(copy)
                mapping[operand] = copy.results[0]
            operands.append(mapping.get(operand, operand))
        op.operands = operands
        body.add_op(op)
    body.add_op(ReturnOp(*outputs))
    return FuncOp(
        name, ([value.type for value in inputs], [value.type for value in outputs]), Region(body)
    )
