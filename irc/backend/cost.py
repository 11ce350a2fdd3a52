"""Work and time estimates of ops at every level: multiply-accumulates, elements, bytes.

What an op costs is counted in three target-independent quantities:

- `op_macs(op)`: the multiply-accumulates of an op that runs on a MAC array, at any
  level: `nn.conv`, `nn.conv_transpose`, `nn.gemm`, `nn.matmul`, their `qnn` forms
  (the same shapes), and the tile ops and commands of one step (`tile.conv`,
  `tile.matmul`, `npu.conv`, `npu.matmul`, from their buffers' shapes); 0 for every
  other op. A 3x3 conv of a 56x56x32 map to 64 channels is 56*56*64 outputs of
  32*3*3 MACs each: 57,802,752 MACs, as `nn.conv` and as `qnn.conv`.
- `op_elements(op)`: the elements an op produces (the sum over its tensor results),
  the work of a vector unit or of the host for elementwise, pooling and
  data-movement ops, and the per-output work (bias, activation) of a MAC-array op. A
  constant computes nothing: 0.
- `tensor_bytes(type)`: the bytes of a tensor. A quantized tensor counts its storage
  integers, an integer tensor its integers; a float tensor counts
  `float_bytes` per element: 1 (the default) for partitioning a float model that
  will be quantized to int8 before it runs, 4 for float tensors of a quantized
  model, which stay float.

From these and a target (irc/targets), the time model of one op:

- on the NPU, compute takes `macs / (macs_per_cycle * clock)` on the MAC array plus
  `elements / (vector lanes * clock)` on the vector unit (both times the target's
  `int16_cycles` for an op with 16-bit activations), and the op's DDR traffic
  (`op_ddr_bytes`: its weights, and its activations when they do not fit in SRAM
  together) takes `latency_cycles / clock + bytes / ddr bandwidth`. DMA overlaps
  with compute (docs/simulator.md, "Timing"), so the op takes the
  longer of the two (partitioning uses the tile planner's estimate instead where the
  backend table has a layer model of the op: irc/transforms/partition.py);
- on the host, `macs / host.macs_per_second + elements / host.elements_per_second`
  (a view: nothing);
- a copy of `n` bytes between host and NPU memory takes `n / host bandwidth`.

The worked example on `npu-demo` (256 MACs at 500 MHz): 57.8 M MACs take 225,792
cycles, 0.45 ms.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import IntegerType, MemRefType, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.traits import ConstantLike

from irc.dialects import nn, npu, qnn, tile
from irc.dialects.quant import quantized_element

if TYPE_CHECKING:
    from irc.targets import Target

NPU_BYTES_PER_ELEMENT = 1
"""Bytes per float tensor element when a float model is partitioned before it is
quantized: on the NPU every tensor will be int8."""


def tensor_bytes(value_type: Attribute, float_bytes: int = NPU_BYTES_PER_ELEMENT) -> int:
    """The bytes of a statically shaped tensor of `value_type` (see the module docstring).

    Raises ValueError for a type that is not a statically shaped tensor.
    """
    return _elements(value_type) * element_bytes(value_type, float_bytes)


def element_bytes(value_type: Attribute, float_bytes: int = NPU_BYTES_PER_ELEMENT) -> int:
    """Bytes per element of a tensor type: a quantized type's storage integers, an
    integer's width, `float_bytes` for a float."""
    if not isinstance(value_type, TensorType):
        raise ValueError(f"expected a tensor type, got {value_type}")
    quantized = quantized_element(value_type)
    if quantized is not None:
        return max(1, quantized.storage_type.width.data // 8)
    element = value_type.get_element_type()
    if isinstance(element, IntegerType):
        return max(1, element.width.data // 8)
    return float_bytes


def _elements(value_type: Attribute) -> int:
    if not isinstance(value_type, TensorType):
        raise ValueError(f"expected a tensor type, got {value_type}")
    shape = value_type.get_shape()
    if any(dim < 0 for dim in shape):
        raise ValueError(f"expected a statically shaped tensor, got {value_type}")
    return math.prod(shape)


def _shape(value: SSAValue) -> Sequence[int]:
    value_type = value.type
    assert isinstance(value_type, TensorType | MemRefType)
    return value_type.get_shape()


# --------------------------------------------------------------------------------------
# Multiply-accumulates


def _conv_macs(op: Operation) -> int:
    # Every output element sums over the weight's elements per output channel (its
    # first axis, in either layout): (input channels / group) x kernel taps.
    weight = _shape(op.operands[1])
    return math.prod(_shape(op.results[0])) * math.prod(weight) // weight[0]


def _conv_transpose_macs(op: Operation) -> int:
    # Every input element scatters into (output channels / group) x kernel taps
    # outputs: the weight's elements per input channel (its first axis).
    weight = _shape(op.operands[1])
    return math.prod(_shape(op.operands[0])) * math.prod(weight) // weight[0]


def _gemm_macs(op: Operation) -> int:
    lhs = _shape(op.operands[0])
    inner = lhs[0] if op.props().bool("trans_a") else lhs[1]  # type: ignore[attr-defined]
    return math.prod(_shape(op.results[0])) * inner


def _matmul_macs(op: Operation) -> int:
    return math.prod(_shape(op.results[0])) * _shape(op.operands[0])[-1]


def _tile_conv_macs(op: Operation) -> int:
    # acc [N, OH, OW, O] from weight [O, KH, KW, C / group]
    weight = _shape(op.operands[1])
    return math.prod(_shape(op.operands[2])) * math.prod(weight[1:])


def _tile_matmul_macs(op: Operation) -> int:
    # acc [M, N] from a [M, K]
    return math.prod(_shape(op.operands[2])) * _shape(op.operands[0])[-1]


MACS: dict[type[Operation], Callable[[Operation], int]] = {
    nn.ConvOp: _conv_macs,
    qnn.ConvOp: _conv_macs,
    nn.ConvTransposeOp: _conv_transpose_macs,
    qnn.ConvTransposeOp: _conv_transpose_macs,
    nn.GemmOp: _gemm_macs,
    qnn.GemmOp: _gemm_macs,
    nn.MatMulOp: _matmul_macs,
    qnn.MatMulOp: _matmul_macs,
    tile.ConvOp: _tile_conv_macs,
    npu.ConvOp: _tile_conv_macs,
    tile.MatmulOp: _tile_matmul_macs,
    npu.MatmulOp: _tile_matmul_macs,
}
"""How the MACs of each MAC-array op are counted, at every level."""


def op_macs(op: Operation) -> int:
    """The multiply-accumulates of an op (see the module docstring); 0 for an op that
    does not run on a MAC array."""
    count = MACS.get(type(op))
    return count(op) if count is not None else 0


def op_elements(op: Operation) -> int:
    """The elements an op produces, summed over its tensor results; 0 for a constant."""
    if op.has_trait(ConstantLike):
        return 0
    return sum(
        _elements(result.type) for result in op.results if isinstance(result.type, TensorType)
    )


def op_ddr_bytes(op: Operation, sram_bytes: int, float_bytes: int = NPU_BYTES_PER_ELEMENT) -> int:
    """The bytes an op moves between the system memories and SRAM on the NPU (the sum
    of `op_traffic`)."""
    return sum(op_traffic(op, sram_bytes, float_bytes))


def op_traffic(
    op: Operation, sram_bytes: int, float_bytes: int = NPU_BYTES_PER_ELEMENT
) -> tuple[int, int]:
    """(weights, activations): the bytes an op moves between the weights' memory and
    SRAM, and between the activations' memories and SRAM.

    Weights (operands that constants define) are read every time the op runs.
    Activations (the other operands and the results) stay in SRAM when all of them
    fit in its `sram_bytes` together, and are otherwise streamed through their
    memory: every one of them read or written once.
    """
    weights = 0
    activations = 0
    for operand in op.operands:
        if not isinstance(operand.type, TensorType):
            continue
        owner = operand.owner
        if isinstance(owner, Operation) and owner.has_trait(ConstantLike):
            weights += tensor_bytes(operand.type, float_bytes)
        else:
            activations += tensor_bytes(operand.type, float_bytes)
    activations += sum(
        tensor_bytes(result.type, float_bytes)
        for result in op.results
        if isinstance(result.type, TensorType)
    )
    return weights, (activations if activations > sram_bytes else 0)


# --------------------------------------------------------------------------------------
# Time


def has_sixteen_bit_values(op: Operation) -> bool:
    """Whether an operand or result of `op` holds 16-bit quantized values."""
    for value in (*op.operands, *op.results):
        element = quantized_element(value.type) if isinstance(value.type, TensorType) else None
        if element is not None and element.storage_type.width.data == 16:
            return True
    return False


def npu_seconds(op: Operation, target: Target, float_bytes: int = NPU_BYTES_PER_ELEMENT) -> float:
    """The estimated time of `op` on the target's NPU (see the module docstring)."""
    clock = target.mac_array.clock_hz
    compute = op_macs(op) / (target.mac_array.macs_per_cycle * clock)
    compute += op_elements(op) / (target.vector_unit.lanes * clock)
    compute *= target.data_types.activation_cycles(has_sixteen_bit_values(op))
    weights, activations = op_traffic(op, target.scratch.size_bytes, float_bytes)
    # Each port carries its memories' bytes; transfers on different ports overlap.
    ports: dict[str, float] = {}
    latency = 0
    for memory, size in (
        (target.weights_memory, weights),
        (target.activation_memories[-1], activations),
    ):
        if size:
            rate = memory.read_bytes_per_cycle(clock)
            ports[memory.port] = ports.get(memory.port, 0.0) + size / rate
            latency = max(latency, memory.read_latency_cycles)
    if not ports:
        return compute
    return max(compute, (latency + max(ports.values())) / clock)


def host_seconds(op: Operation, target: Target) -> float:
    """The estimated time of `op` on the target's host CPU; nothing for a view (a
    reshape, a transfer between host and NPU memory: the same buffer, whose copies a
    host call's timing counts)."""
    from irc.backend import entry_of

    entry = entry_of(op)
    if entry is not None and entry.view:
        return 0.0
    host = target.host
    return op_macs(op) / host.macs_per_second + op_elements(op) / host.elements_per_second


def copy_seconds(byte_count: int, target: Target) -> float:
    """The time to copy `byte_count` bytes between host and NPU memory."""
    return byte_count / target.host.bandwidth_bytes_per_second
