"""irc's int8 ops against onnxruntime's own integer kernels, op by op.

Each case is a small QDQ model (QuantizeLinear -> DequantizeLinear -> op ->
QuantizeLinear -> DequantizeLinear, int8) that onnxruntime runs with its graph
optimizations on: its QDQ fusions make the op one of its integer kernels, which the
test checks in the graph it actually runs. irc imports the same model, lowers it with
`lower-to-qnn` (no target: lookup tables assumed) and runs the integer module in the
interpreter; the test checks that the op did become the integer op meant (no float
`nn` op left). The two outputs are compared as the integers they hold,
round(y / scale) + zero point: at least 99.9% of them within one LSB (of the few
hundred integers of a case, all).

    ONNX op            onnxruntime's kernel                     irc's op
    Softmax            com.microsoft.QLinearSoftmax             qnn.softmax
    GlobalAveragePool  com.microsoft.QLinearGlobalAveragePool   qnn.global_average_pool
    AveragePool        com.microsoft.QLinearAveragePool         qnn.average_pool
    MaxPool            MaxPool on int8 (the QDQ pairs dropped)  qnn.max_pool
    Resize (nearest)   Resize on int8 (the same)                nn.resize on int8
    DepthToSpace       DepthToSpace on int8 (the same)          nn.depth_to_space on int8
    Concat             com.microsoft.QLinearConcat              qnn.concat
    LeakyRelu          com.microsoft.QLinearLeakyRelu           qnn.lut
    Sigmoid            com.microsoft.QLinearSigmoid             qnn.lut
    MatMul of two      QLinearMatMul (uint8 x uint8)            qnn.matmul, qnn.requantize
    activations

onnxruntime drops the QDQ pairs around MaxPool, Resize and DepthToSpace only when
input and output share one scale and zero point (as quantize_static writes them), so
those cases do; the others have an output quantization of their own.

Left out, for want of an integer kernel in onnxruntime:
- ReduceMean: a QDQ ReduceMean stays float between its DequantizeLinear and
  QuantizeLinear (no fusion), and the CPU provider has no kernel for com.microsoft
  QLinearReduceMean.
- LRN: onnxruntime has no integer LRN; a QDQ LRN runs in float between its casts.
  irc's `qnn.lrn` is checked against ONNX's LRN in float64 instead
  (tests/test_qnn_arithmetic.py: within one output step everywhere).

The inputs are random integers times the input scale, so that the first
QuantizeLinear gives the same integers on both sides (no value lies near a tie where
x / scale and x * (1 / scale) could round apart).

The expected values must not depend on the CPU. The only integer matrix kernel here is
QLinearMatMul: onnxruntime moves int8 activations to uint8 on x86 (QDQIsInt8Allowed
is false there at compile time), so the product of two int8 activations runs as
uint8 x uint8, which MLAS widens to 16 bits before multiplying: exact on every x86 CPU,
unlike its u8s8 kernels, whose VPMADDUBSW saturates pair sums in int16 without VNNI
(docs/testing.md, "The machine"). On ARM int8 stays int8, and MLAS's s8s8 kernels are
exact too; the test fails on a kernel of mixed operand types.

The other kernels compute in float32 where irc computes with integers and fixed-point
multipliers (QLinearSoftmax with its own table of exps as uint32 and a float
reciprocal, qnn.softmax with a Q15 table), so a value within a hair of a tie between
two integers may round to either: one LSB apart. Such are the differences seen: ties
of AveragePool's means over windows cut by the padding, softmax probabilities a few
thousandths of an LSB from a tie.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import ModuleOp

from irc.diagnostics import collect_diagnostics
from irc.dialects import quant
from irc.importers.onnx import import_model
from irc.interp import run_function
from irc.ir.io import verify_module
from irc.testing.quantized import OutputQuantization, operator_counts, run_quantized_onnxruntime
from irc.transforms.lower_to_qnn import lower_module

SEEDS = (0, 1, 2)
OPSET = 17
WITHIN_ONE_LSB = 0.999
"""The share of output integers that must be within one LSB of onnxruntime's."""

Quantization = OutputQuantization
"""A per-tensor int8 scale and zero point, with `stored` (irc.testing.quantized's)."""

OUTPUT = "r_dq"
"""The model's output: the op's result, quantized and dequantized (`qdq_model`)."""


# --------------------------------------------------------------------------------------
# Cases


@dataclass(frozen=True)
class KernelCase:
    """One op in a QDQ model, the kernel onnxruntime must run it with and the op irc
    must lower it to."""

    op_type: str
    attributes: dict[str, object]
    input_shapes: Sequence[Sequence[int]]
    """The shapes of the quantized activations the op reads, in order."""
    input_quantizations: Sequence[Quantization]
    output_quantization: Quantization
    ort_kernel: str
    """An op type of the graph onnxruntime runs (`domain:op` outside ONNX's domain)."""
    irc_op: str
    """An op of the lowered module that reads a quantized tensor."""
    constants: dict[str, np.ndarray | None] = field(default_factory=dict)
    """Further inputs of the op (float, not quantized), after the activations; None
    for an input left out."""


SOFTMAX_OUTPUT = Quantization(1 / 256, -128)
"""Probabilities in [0, 1): the quantization quantize_static gives a softmax."""
SHARED = Quantization(0.05, 3)
"""One quantization for the input and output of an op that only moves values."""

CASES = {
    "softmax": KernelCase(
        "Softmax",
        {"axis": -1},
        [[2, 4, 16]],
        [Quantization(0.05, 3)],
        SOFTMAX_OUTPUT,
        "com.microsoft:QLinearSoftmax",
        "qnn.softmax",
    ),
    "softmax, peaked rows": KernelCase(
        "Softmax",
        {"axis": 2},
        [[2, 3, 40]],
        [Quantization(0.2, -7)],
        SOFTMAX_OUTPUT,
        "com.microsoft:QLinearSoftmax",
        "qnn.softmax",
    ),
    "global average pool": KernelCase(
        "GlobalAveragePool",
        {},
        [[2, 16, 6, 6]],
        [Quantization(0.05, 3)],
        Quantization(0.02, -4),
        "com.microsoft:QLinearGlobalAveragePool",
        "qnn.global_average_pool",
    ),
    "average pool 3x3, pads counted": KernelCase(
        "AveragePool",
        {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1},
        [[1, 8, 6, 6]],
        [Quantization(0.05, 3)],
        Quantization(0.03, -2),
        "com.microsoft:QLinearAveragePool",
        "qnn.average_pool",
    ),
    "average pool 3x3 stride 2, pads not counted": KernelCase(
        "AveragePool",
        {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
        [[1, 8, 7, 7]],
        [Quantization(0.05, 3)],
        Quantization(0.04, 1),
        "com.microsoft:QLinearAveragePool",
        "qnn.average_pool",
    ),
    "max pool": KernelCase(
        "MaxPool",
        {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
        [[1, 8, 6, 6]],
        [SHARED],
        SHARED,
        "MaxPool",
        "qnn.max_pool",
    ),
    "resize nearest x2, asymmetric": KernelCase(
        "Resize",
        {
            "mode": "nearest",
            "coordinate_transformation_mode": "asymmetric",
            "nearest_mode": "floor",
        },
        [[1, 8, 6, 6]],
        [SHARED],
        SHARED,
        "Resize",
        "nn.resize",
        constants={"roi": None, "scales": np.array([1, 1, 2, 2], np.float32)},
    ),
    "resize nearest 6x6 -> 9x4, half pixel": KernelCase(
        "Resize",
        {"mode": "nearest"},
        [[1, 8, 6, 6]],
        [SHARED],
        SHARED,
        "Resize",
        "nn.resize",
        constants={"roi": None, "scales": None, "sizes": np.array([1, 8, 9, 4], np.int64)},
    ),
    "depth to space DCR": KernelCase(
        "DepthToSpace",
        {"blocksize": 2, "mode": "DCR"},
        [[1, 8, 6, 6]],
        [SHARED],
        SHARED,
        "DepthToSpace",
        "nn.depth_to_space",
    ),
    "depth to space CRD": KernelCase(
        "DepthToSpace",
        {"blocksize": 2, "mode": "CRD"},
        [[1, 8, 6, 6]],
        [SHARED],
        SHARED,
        "DepthToSpace",
        "nn.depth_to_space",
    ),
    "concat of three quantizations": KernelCase(
        "Concat",
        {"axis": 1},
        [[1, 2, 4, 4], [1, 3, 4, 4], [1, 4, 4, 4]],
        [Quantization(0.05, 3), Quantization(0.1, 0), Quantization(0.02, -9)],
        Quantization(0.05, 3),
        "com.microsoft:QLinearConcat",
        "qnn.concat",
    ),
    "leaky relu": KernelCase(
        "LeakyRelu",
        {"alpha": 0.1},
        [[2, 4, 16]],
        [Quantization(0.05, 3)],
        Quantization(0.04, -20),
        "com.microsoft:QLinearLeakyRelu",
        "qnn.lut",
    ),
    "sigmoid": KernelCase(
        "Sigmoid",
        {},
        [[2, 4, 16]],
        [Quantization(0.05, 3)],
        SOFTMAX_OUTPUT,
        "com.microsoft:QLinearSigmoid",
        "qnn.lut",
    ),
    # onnxruntime runs it as uint8 x uint8 on x86, exact on every CPU (module docstring);
    # `onnxruntime_stored` checks the operand types of the kernel it runs.
    "matmul of two activations": KernelCase(
        "MatMul",
        {},
        [[2, 4, 16], [2, 16, 8]],
        [Quantization(0.05, 3), Quantization(0.04, -1)],
        Quantization(0.8, 2),
        "QLinearMatMul",
        "qnn.matmul",
    ),
}


# --------------------------------------------------------------------------------------
# Helpers


def quantize_dequantize(
    value: str, quantization: Quantization, initializers: dict[str, np.ndarray]
) -> list[onnx.NodeProto]:
    """QuantizeLinear and DequantizeLinear of the float tensor `value` (int8) into
    `{value}_dq`; their scale and zero point added to `initializers`."""
    scale, zero = f"{value}_scale", f"{value}_zero"
    initializers[scale] = np.array(quantization.scale, np.float32)
    initializers[zero] = np.array(quantization.zero_point, np.int8)
    return [
        helper.make_node("QuantizeLinear", [value, scale, zero], [f"{value}_q"]),
        helper.make_node("DequantizeLinear", [f"{value}_q", scale, zero], [f"{value}_dq"]),
    ]


def qdq_model(case: KernelCase) -> onnx.ModelProto:
    """The case's op between QuantizeLinear/DequantizeLinear pairs: each float input
    x{i} quantized and dequantized, the op's result r quantized and dequantized into
    the output `r_dq`."""
    initializers = {name: value for name, value in case.constants.items() if value is not None}
    nodes = []
    for index, quantization in enumerate(case.input_quantizations):
        nodes += quantize_dequantize(f"x{index}", quantization, initializers)
    operands = [f"x{index}_dq" for index in range(len(case.input_quantizations))]
    operands += [name if value is not None else "" for name, value in case.constants.items()]
    attributes: dict[str, Any] = dict(case.attributes)
    nodes.append(helper.make_node(case.op_type, operands, ["r"], name="op", **attributes))
    nodes += quantize_dequantize("r", case.output_quantization, initializers)
    graph = helper.make_graph(
        nodes,
        case.op_type,
        [
            helper.make_tensor_value_info(f"x{index}", TensorProto.FLOAT, list(shape))
            for index, shape in enumerate(case.input_shapes)
        ],
        [helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, None)],
        [numpy_helper.from_array(value, name) for name, value in initializers.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    # The result's shape, which the importer needs, from onnx's shape inference.
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    onnx.checker.check_model(model, full_check=True)
    return model


def exact_inputs(case: KernelCase, seed: int) -> dict[str, np.ndarray]:
    """Seeded random inputs that are whole steps of their scales, so that quantizing
    them is exact (module docstring)."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for index, (shape, quantization) in enumerate(
        zip(case.input_shapes, case.input_quantizations, strict=True)
    ):
        stored = rng.integers(-128, 127, size=shape, endpoint=True)
        steps = (stored - quantization.zero_point).astype(np.float32)
        feeds[f"x{index}"] = steps * np.float32(quantization.scale)
    return feeds


def mixed_matmul_operands(graph: onnx.ModelProto) -> list[str]:
    """The QLinearMatMuls of `graph` that do not multiply two operands of one type
    (uint8 x uint8 or int8 x int8, by their zero points, inputs 2 and 5): the kernels
    whose sums may depend on the CPU (module docstring)."""
    initializers = {tensor.name: tensor for tensor in graph.graph.initializer}
    mixed = []
    for node in graph.graph.node:
        if node.op_type != "QLinearMatMul":
            continue
        types = {
            initializers[zero_point].data_type if zero_point in initializers else None
            for zero_point in (node.input[2], node.input[5])
        }
        if types not in ({TensorProto.UINT8}, {TensorProto.INT8}):
            mixed.append(node.name)
    return mixed


def onnxruntime_stored(
    case: KernelCase, model: onnx.ModelProto, feeds: dict[str, np.ndarray]
) -> np.ndarray:
    """onnxruntime's output integers, from the graph its optimizations make, which must
    run the case's kernel with the QDQ pairs around it fused away (one QuantizeLinear
    per input and one DequantizeLinear left)."""
    with tempfile.TemporaryDirectory() as directory:
        optimized_path = Path(directory) / "optimized.onnx"
        (outputs,) = run_quantized_onnxruntime(model, [feeds], optimized_path)
        optimized = onnx.load(str(optimized_path))
    counts = operator_counts(optimized)
    inputs = len(case.input_shapes)
    fused = {case.ort_kernel: 1, "QuantizeLinear": inputs, "DequantizeLinear": 1}
    assert counts == fused, f"onnxruntime did not fuse into {case.ort_kernel}: {counts}"
    mixed = mixed_matmul_operands(optimized)
    assert not mixed, f"the expected values of {mixed} depend on the CPU"
    return case.output_quantization.stored(outputs[OUTPUT])


def integer_ops(module: ModuleOp) -> list[str]:
    """The ops of the module's function that compute on quantized tensors; fails if an
    `nn` op computes on floats (a float island left by `lower-to-qnn`)."""
    function = module.body.block.first_op
    assert function is not None
    names = []
    for op in function.walk():
        if op.name.startswith(("func.", "quant.")) or op.name in ("nn.constant", "qnn.constant"):
            continue
        types = [value.type for value in (*op.operands, *op.results)]
        assert any(quant.quantized_element(value_type) for value_type in types), (
            f"{op.name} computes on floats: {types}"
        )
        names.append(op.name)
    return names


def irc_stored(
    case: KernelCase, model: onnx.ModelProto, feeds: dict[str, np.ndarray]
) -> np.ndarray:
    """irc's output integers: the model imported, lowered by `lower-to-qnn` and run in
    the interpreter; the lowered module must hold the case's integer op."""
    module = import_model(model)
    with collect_diagnostics():  # the pass's remarks
        lower_module(module, None)
    verify_module(module)
    ops = integer_ops(module)
    assert case.irc_op in ops, f"no {case.irc_op} in the lowered module: {ops}"
    return case.output_quantization.stored(run_function(module, feeds)[OUTPUT])


def assert_within_one_lsb(ours: np.ndarray, theirs: np.ndarray) -> None:
    """At least WITHIN_ONE_LSB of the integers at most one apart."""
    assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
    difference = np.abs(ours.astype(np.int64) - theirs.astype(np.int64))
    within = float(np.mean(difference <= 1))
    exact = float(np.mean(difference == 0))
    assert within >= WITHIN_ONE_LSB, (
        f"{within:.4%} within one LSB ({exact:.4%} exact) of {difference.size}, "
        f"max |difference| {int(difference.max(initial=0))}"
    )


# --------------------------------------------------------------------------------------
# Tests


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", CASES)
def test_integer_op_matches_onnxruntime_kernel(name: str, seed: int) -> None:
    case = CASES[name]
    model = qdq_model(case)
    feeds = exact_inputs(case, seed)
    expected = onnxruntime_stored(case, model, feeds)
    assert_within_one_lsb(irc_stored(case, model, feeds), expected)
