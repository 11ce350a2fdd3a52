"""The `part` dialect: the boundaries between host (CPU) and NPU code, made explicit.

The `partition` pass (irc/transforms/partition.py) outlines the ops that a target runs
on its NPU into functions marked `irc.device = "npu"`; every tensor that crosses
between host code and an NPU function is copied between host memory and NPU memory
by a `part.transfer`, so that each copy is visible (and costed) in the IR:

    %x_npu = part.transfer %x {to = "npu"} : tensor<1x56x56x32xf32>
    %y_npu = func.call @main_npu0(%x_npu) : (tensor<1x56x56x32xf32>) -> tensor<1x56x56x64xf32>
    %y = part.transfer %y_npu {to = "cpu"} : tensor<1x56x56x64xf32>

Values have value semantics, as in `nn`: a transfer returns a new tensor equal to its
input, of the same type; the memory it lives in is what `to` says.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import StringAttr, TensorType
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

DEVICES = ("npu", "cpu")
"""The memories a `part.transfer` copies to: NPU memory, or host (CPU) memory."""


@irdl_op_definition
class TransferOp(IRDLOperation):
    """Copy a tensor between host (CPU) memory and NPU memory.

    `to` is the memory the result lives in: "npu" before an NPU function reads the
    value, "cpu" after it, when host code reads a value an NPU function computed.
    The result equals the input and has its type.

        %x_npu = part.transfer %x {to = "npu"} : tensor<1x3x8x8xf32>
    """

    name = "part.transfer"

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    result = result_def(T)
    to = prop_def(StringAttr)

    traits = traits_def(Pure())

    # The syntax is what `assembly_format = "$input attr-dict : type($input)"` would
    # give, written by hand because xDSL's declarative parser checks constraints while
    # parsing and reports a failure past the op, not at it.

    def __init__(self, value: SSAValue, to: str) -> None:
        super().__init__(
            operands=[value], result_types=[value.type], properties={"to": StringAttr(to)}
        )

    @property
    def destination(self) -> str:
        """The memory the result lives in: "npu" or "cpu"."""
        return self.to.data

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.input)
        printer.print_op_attributes({"to": self.to, **self.attributes})
        printer.print_string(" : ")
        printer.print_attribute(self.input.type)

    @classmethod
    def parse(cls, parser: Parser) -> TransferOp:
        unresolved = parser.parse_unresolved_operand()
        entries_at = parser.pos
        entries = parser.parse_optional_attr_dict()
        properties = {name: entries.pop(name) for name in ("to",) if name in entries}
        for name in entries:
            if "." not in name:  # only dialect-prefixed discardable attributes
                parser.raise_error(
                    f"'{cls.name}' has no property '{name}' (its property: to)", entries_at
                )
        parser.parse_punctuation(":")
        value_type = parser.parse_type()
        (value,) = parser.resolve_operands([unresolved], [value_type], parser.pos)
        return cls.create(
            operands=[value],
            result_types=[value_type],
            properties=properties,
            attributes=entries,
        )

    def verify_(self) -> None:
        if self.to.data not in DEVICES:
            raise VerifyException(f'\'to\' must be "npu" or "cpu"; got "{self.to.data}"')
        value_type: Attribute = self.input.type
        assert isinstance(value_type, TensorType)  # the operand constraint
        if any(dim < 0 for dim in value_type.get_shape()):
            raise VerifyException(f"a transfer copies a statically shaped tensor, got {value_type}")


PART = Dialect("part", [TransferOp], [])
"""The `part` dialect object."""
