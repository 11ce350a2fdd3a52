"""Reference semantics of the `part` dialect: a transfer is a copy.

On the interpreter's single memory, host and NPU memory are the same numpy heap, so
`part.transfer` returns a copy of its input: equal values, the same dtype and shape,
and the same memory order (so that the ops that read it compute exactly as they did
on the original array).
"""

from __future__ import annotations

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls

from irc.dialects import part


@register_impls
class PartFunctions(InterpreterFunctions):
    """numpy implementations of the `part` ops."""

    @impl(part.TransferOp)
    def run_transfer(
        self, interpreter: Interpreter, op: part.TransferOp, args: PythonValues
    ) -> PythonValues:
        return (np.array(args[0], copy=True, order="K"),)
