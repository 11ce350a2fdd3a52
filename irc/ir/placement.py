"""Where an op runs: on the NPU or on the host CPU.

Partitioning and mixed precision record a placement as the discardable attribute
`irc.device` (`DEVICE_ATTR`): `"npu"` on the functions partitioning outlines for the
NPU, `"cpu"` on float ops the target cannot run and on the host functions the
command stream calls. Every pass that asks where an op runs asks `runs_on_npu`.
"""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation

DEVICE_ATTR = "irc.device"
"""The attribute that places an op or a function (`irc.device = "cpu"`)."""

NPU = "npu"
"""The placement of an outlined NPU function."""

CPU = "cpu"
"""The placement of an op or function that runs on the host CPU."""


def runs_on_npu(op: Operation) -> bool:
    """False for ops that partition or mixed precision put on the CPU: the op, or the
    function around it, is marked `irc.device = "cpu"`."""
    if _placed_on_cpu(op):
        return False
    function = op.parent_op()
    while function is not None and not isinstance(function, FuncOp):
        function = function.parent_op()
    return function is None or not _placed_on_cpu(function)


def _placed_on_cpu(op: Operation) -> bool:
    device = op.attributes.get(DEVICE_ATTR)
    return isinstance(device, StringAttr) and device.data == CPU
