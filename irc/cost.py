"""Work and time estimates of `nn` ops: multiply-accumulates, elements, bytes, seconds.

What an op costs is counted in three target-independent quantities:

- `op_macs(op)`: the multiply-accumulates of the ops that run on a MAC array
  (`nn.conv`, `nn.conv_transpose`, `nn.gemm`, `nn.matmul`); 0 for every other op.
  A 3x3 conv of a 56x56x32 map to 64 channels is 56*56*64 outputs of 32*3*3 MACs
  each: 57,802,752 MACs.
- `op_elements(op)`: the elements an op produces (the sum over its results), the work
  of a vector unit or of the host for elementwise, pooling and data-movement ops,
  and the per-output work (bias, activation) of a MAC-array op. A constant computes
  nothing: 0.
- `tensor_bytes(type)`: the bytes of a tensor, at one byte per element by default:
  on the NPU every tensor is int8 once quantized, and partitioning estimates costs
  for the quantized model, before quantization has run.

From these and a target (irc/targets), the time model of one op:

- on the NPU, compute takes `macs / (macs_per_cycle * clock)` on the MAC array plus
  `elements / (vector lanes * clock)` on the vector unit, and the op's DDR traffic
  (`op_ddr_bytes`: its weights, and its activations when they do not fit in SRAM
  together) takes `latency_cycles / clock + bytes / ddr bandwidth`. DMA overlaps
  with compute (../shared/DESIGN.md, "The simulated NPU"), so the op takes the
  longer of the two;
- on the host, `macs / host.macs_per_second + elements / host.elements_per_second`;
- a copy of `n` bytes between host and NPU memory takes `n / host bandwidth`.

The worked example on `npu-demo` (256 MACs at 500 MHz): 57.8 M MACs take 225,792
cycles, 0.45 ms.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from irc.dialects import nn

if TYPE_CHECKING:
    from irc.targets import Target

NPU_BYTES_PER_ELEMENT = 1
"""Bytes per tensor element on the NPU and in transfers: int8, as quantized."""


def tensor_bytes(value_type: Attribute, bytes_per_element: int = NPU_BYTES_PER_ELEMENT) -> int:
    """The bytes of a statically shaped tensor of `value_type`, at `bytes_per_element`.

    Raises ValueError for a type that is not a statically shaped tensor.
    """
    return _elements(value_type) * bytes_per_element


def _elements(value_type: Attribute) -> int:
    if not isinstance(value_type, TensorType):
        raise ValueError(f"expected a tensor type, got {value_type}")
    shape = value_type.get_shape()
    if any(dim < 0 for dim in shape):
        raise ValueError(f"expected a statically shaped tensor, got {value_type}")
    return math.prod(shape)


def _shape(value: SSAValue) -> Sequence[int]:
    value_type = value.type
    assert isinstance(value_type, TensorType)  # nn values are tensors
    return value_type.get_shape()


def op_macs(op: Operation) -> int:
    """The multiply-accumulates of an op: conv, conv_transpose, gemm, matmul; else 0.

    - conv: every output element sums over (input channels / group) x kernel taps, that
      is, the weight's elements per output channel (in either layout, the weight's
      first axis is the output channels);
    - conv_transpose: every input element scatters into (output channels / group) x
      kernel taps, the weight's elements per input channel (its first axis);
    - gemm and matmul: every output element sums over the inner dimension.
    """
    match op:
        case nn.ConvOp():
            weight = _shape(op.weight)
            return math.prod(_shape(op.result)) * math.prod(weight) // weight[0]
        case nn.ConvTransposeOp():
            weight = _shape(op.weight)
            return math.prod(_shape(op.input)) * math.prod(weight) // weight[0]
        case nn.GemmOp():
            lhs = _shape(op.lhs)
            inner = lhs[0] if op.props().bool("trans_a") else lhs[1]
            return math.prod(_shape(op.result)) * inner
        case nn.MatMulOp():
            inner = _shape(op.lhs)[-1]
            return math.prod(_shape(op.result)) * inner
        case _:
            return 0


def op_elements(op: Operation) -> int:
    """The elements an op produces, summed over its tensor results; 0 for a constant."""
    if isinstance(op, nn.ConstantOp):
        return 0
    return sum(
        _elements(result.type) for result in op.results if isinstance(result.type, TensorType)
    )


def op_ddr_bytes(op: Operation, sram_bytes: int) -> int:
    """The bytes an op moves between DDR and SRAM on the NPU, at one byte per element.

    Weights (operands that `nn.constant`s define) are read from DDR every time the op
    runs. Activations (the other operands and the results) stay in SRAM when all of
    them fit in its `sram_bytes` together, and are otherwise streamed through DDR:
    every one of them read or written once.
    """
    weights = 0
    activations = 0
    for operand in op.operands:
        if not isinstance(operand.type, TensorType):
            continue
        if isinstance(operand.owner, nn.ConstantOp):
            weights += tensor_bytes(operand.type)
        else:
            activations += tensor_bytes(operand.type)
    activations += sum(
        tensor_bytes(result.type) for result in op.results if isinstance(result.type, TensorType)
    )
    return weights + (activations if activations > sram_bytes else 0)


# --------------------------------------------------------------------------------------
# Time


def npu_seconds(op: Operation, target: Target) -> float:
    """The estimated time of `op` on the target's NPU (see the module docstring)."""
    clock = target.mac_array.clock_hz
    compute = op_macs(op) / (target.mac_array.macs_per_cycle * clock)
    compute += op_elements(op) / (target.vector_unit.lanes * clock)
    traffic = op_ddr_bytes(op, target.sram.size_bytes)
    memory = 0.0
    if traffic:
        memory = target.ddr.latency_cycles / clock + traffic / target.ddr.bandwidth_bytes_per_second
    return max(compute, memory)


def host_seconds(op: Operation, target: Target) -> float:
    """The estimated time of `op` on the target's host CPU."""
    host = target.host
    return op_macs(op) / host.macs_per_second + op_elements(op) / host.elements_per_second


def copy_seconds(byte_count: int, target: Target) -> float:
    """The time to copy `byte_count` bytes between host and NPU memory."""
    return byte_count / target.host.bandwidth_bytes_per_second
