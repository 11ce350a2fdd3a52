"""Benchmark of the `nn` reference interpreter: single kernels and a whole ResNet-50.

    .venv/bin/python bench/bench_interp_ops.py [--repeat N] [--threads T]

1. Kernels, run through `evaluate_op` on seeded random data: the 3x3 convolution of a
   1x256x56x56 map by 256x256x3x3 weights (with the error against onnxruntime of
   float64 and float32 accumulation), a depthwise convolution, max pooling, resize.
2. ResNet-50 v1 (1x3x224x224, He-initialised weights, valid batch-norm statistics)
   built directly as `nn` ops, run with `run_function`, beside onnxruntime running the
   same network built with `onnx.helper`. This does not depend on the ONNX importer.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import time
from collections.abc import Callable, Iterator

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from xdsl.builder import Builder
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    f32,
    i64,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from irc.dialects import nn
from irc.interp import evaluate_op, run_function
from irc.interp import nn as interp_nn
from irc.interp.nn import conv


def timed(function: Callable[[], object], repeat: int) -> tuple[float, object]:
    """Median wall time in seconds over `repeat` calls (after one warm-up), and a result."""
    result = function()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


@contextlib.contextmanager
def float32_accumulation() -> Iterator[None]:
    """Run conv/gemm/matmul with float32 BLAS instead of the interpreter's float64."""
    saved = interp_nn.ACCUMULATION_DTYPE
    interp_nn.ACCUMULATION_DTYPE = np.float32
    try:
        yield
    finally:
        interp_nn.ACCUMULATION_DTYPE = saved


def ints(values: list[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, values)


def ort_session(nodes, inputs, outputs, initializers, threads: int) -> ort.InferenceSession:
    graph = helper.make_graph(nodes, "bench", inputs, outputs, initializer=initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    return ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )


def bench_kernels(repeat: int, threads: int) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 256, 56, 56), dtype=np.float32)
    w = rng.standard_normal((256, 256, 3, 3), dtype=np.float32) * np.float32(np.sqrt(2 / (256 * 9)))
    block = Block(arg_types=[TensorType(f32, x.shape), TensorType(f32, w.shape)])
    op = nn.ConvOp.build(list(block.args), {"pads": ints([1, 1, 1, 1])})
    seconds, (ours,) = timed(lambda: evaluate_op(op, [x, w]), repeat)  # type: ignore[misc]
    session = ort_session(
        [helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "w")],
        threads,
    )
    ort_seconds, (theirs,) = timed(lambda: session.run(None, {"x": x}), repeat)  # type: ignore[misc]
    with float32_accumulation():
        single_seconds, (single,) = timed(lambda: evaluate_op(op, [x, w]), repeat)  # type: ignore[misc]
    exact = conv(
        x.astype(np.float64), w.astype(np.float64), None, [1, 1], [1, 1, 1, 1], [1, 1], 1, [56, 56]
    )
    print("conv 1x256x56x56 * 256x256x3x3, pad 1 (1.85 GMAC):")
    print(
        f"  irc, float64 accumulation: {seconds * 1000:7.1f} ms, max |irc - ort| {np.abs(ours - theirs).max():.2e}"
    )
    print(
        f"  irc, float32 accumulation: {single_seconds * 1000:7.1f} ms, "
        f"max |irc - ort| {np.abs(single - theirs).max():.2e}"
    )
    print(
        f"  onnxruntime ({threads} threads):   {ort_seconds * 1000:7.1f} ms, "
        f"max |ort - exact| {np.abs(theirs - exact).max():.2e}"
    )

    depthwise = rng.standard_normal((256, 1, 3, 3), dtype=np.float32)
    block = Block(arg_types=[TensorType(f32, x.shape), TensorType(f32, depthwise.shape)])
    op = nn.ConvOp.build(
        list(block.args), {"pads": ints([1, 1, 1, 1]), "group": IntegerAttr(256, i64)}
    )
    seconds, _ = timed(lambda: evaluate_op(op, [x, depthwise]), repeat)
    print(f"depthwise conv 1x256x56x56, 3x3:  {seconds * 1000:7.1f} ms")

    pooled = rng.standard_normal((1, 64, 112, 112), dtype=np.float32)
    block = Block(arg_types=[TensorType(f32, pooled.shape)])
    op = nn.MaxPoolOp.build(
        list(block.args),
        {"kernel_shape": ints([3, 3]), "strides": ints([2, 2]), "pads": ints([1, 1, 1, 1])},
    )
    seconds, _ = timed(lambda: evaluate_op(op, [pooled]), repeat)
    print(f"max_pool 3x3/2 of 1x64x112x112:    {seconds * 1000:7.1f} ms")

    small = rng.standard_normal((1, 64, 56, 56), dtype=np.float32)
    block = Block(arg_types=[TensorType(f32, small.shape)])
    op = nn.ResizeOp.build(
        list(block.args),
        {
            "scales": DenseArrayBase.from_list(f32, [1.0, 1.0, 2.0, 2.0]),
            "mode": StringAttr("linear"),
        },
        [TensorType(f32, [1, 64, 112, 112])],
    )
    seconds, _ = timed(lambda: evaluate_op(op, [small]), repeat)
    print(f"resize linear x2 of 1x64x56x56:    {seconds * 1000:7.1f} ms")


class ResNetBuilder:
    """Builds ResNet-50 v1 twice from the same weights: as `nn` ops and as ONNX nodes."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.block = Block(arg_types=[TensorType(f32, [1, 3, 224, 224])])
        self.builder = Builder(InsertPoint.at_end(self.block))
        self.nodes: list = []
        self.initializers: list = []
        self.count = 0

    def _name(self, kind: str) -> str:
        self.count += 1
        return f"{kind}{self.count}"

    def _constant(self, array: np.ndarray) -> tuple[SSAValue, str]:
        name = self._name("w")
        self.initializers.append(numpy_helper.from_array(array, name))
        return self.builder.insert(nn.ConstantOp.from_array(array)).result, name

    def conv_bn(self, value, name, channels, kernel, stride=1, relu=True, gamma=1.0):
        in_channels = value.type.get_shape()[1]
        fan_in = in_channels * kernel * kernel
        weight = self.rng.normal(
            0, np.sqrt(2 / fan_in), (channels, in_channels, kernel, kernel)
        ).astype(np.float32)
        pad = kernel // 2
        w, w_name = self._constant(weight)
        props = {"pads": ints([pad] * 4), "strides": ints([stride, stride])}
        value = self.builder.insert(nn.ConvOp.build([value, w], props)).result
        conv_name = self._name("conv")
        self.nodes.append(
            helper.make_node(
                "Conv", [name, w_name], [conv_name], pads=[pad] * 4, strides=[stride, stride]
            )
        )
        params = [
            gamma * self.rng.uniform(0.5, 1.5, channels),
            self.rng.normal(0, 0.1, channels),
            self.rng.normal(0, 0.1, channels),
            self.rng.uniform(0.5, 1.5, channels),
        ]
        operands, names = [value], [conv_name]
        for param in params:
            constant, param_name = self._constant(param.astype(np.float32))
            operands.append(constant)
            names.append(param_name)
        value = self.builder.insert(nn.BatchNormOp.build(operands)).result
        name = self._name("bn")
        self.nodes.append(helper.make_node("BatchNormalization", names, [name]))
        if relu:
            value, name = self.unary(nn.ReluOp, "Relu", value, name)
        return value, name

    def unary(self, op_class, onnx_op, value, name, **props):
        value = self.builder.insert(op_class.build([value], props)).result
        out = self._name(onnx_op)
        self.nodes.append(helper.make_node(onnx_op, [name], [out]))
        return value, out

    def bottleneck(self, value, name, width, stride, project):
        shortcut, shortcut_name = value, name
        if project:
            shortcut, shortcut_name = self.conv_bn(value, name, width * 4, 1, stride, relu=False)
        value, name = self.conv_bn(value, name, width, 1, stride)
        value, name = self.conv_bn(value, name, width, 3)
        # A small last scale keeps the residual sum's variance in check, as in training.
        value, name = self.conv_bn(value, name, width * 4, 1, relu=False, gamma=0.2)
        value = self.builder.insert(nn.AddOp.build([value, shortcut])).result
        added = self._name("add")
        self.nodes.append(helper.make_node("Add", [name, shortcut_name], [added]))
        return self.unary(nn.ReluOp, "Relu", value, added)

    def build(self) -> ModuleOp:
        value, name = self.conv_bn(self.block.args[0], "data", 64, 7, 2)
        pool = {"kernel_shape": ints([3, 3]), "strides": ints([2, 2]), "pads": ints([1, 1, 1, 1])}
        value = self.builder.insert(nn.MaxPoolOp.build([value], pool)).result
        self.nodes.append(
            helper.make_node(
                "MaxPool", [name], ["pool"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]
            )
        )
        name = "pool"
        for stage, (width, blocks) in enumerate([(64, 3), (128, 4), (256, 6), (512, 3)]):
            for index in range(blocks):
                stride = 2 if stage > 0 and index == 0 else 1
                value, name = self.bottleneck(value, name, width, stride, project=index == 0)
        value, name = self.unary(nn.GlobalAveragePoolOp, "GlobalAveragePool", value, name)
        value, name = self.unary(nn.FlattenOp, "Flatten", value, name)
        weight, weight_name = self._constant(
            self.rng.normal(0, 0.02, (1000, 2048)).astype(np.float32)
        )
        bias, bias_name = self._constant(np.zeros(1000, np.float32))
        value = self.builder.insert(
            nn.GemmOp.build([value, weight, bias], {"trans_b": IntegerAttr(1, 1)})
        ).result
        self.nodes.append(
            helper.make_node("Gemm", [name, weight_name, bias_name], ["logits"], transB=1)
        )
        self.builder.insert(ReturnOp(value))
        function = FuncOp.from_region(
            "main",
            [self.block.args[0].type],
            [value.type],
            Region(self.block),
        )
        function.arg_attrs = ArrayAttr([DictionaryAttr({"irc.name": StringAttr("data")})])
        function.res_attrs = ArrayAttr([DictionaryAttr({"irc.name": StringAttr("logits")})])
        module = ModuleOp([function])
        module.verify()
        return module


def bench_resnet50(repeat: int, threads: int) -> None:
    builder = ResNetBuilder(seed=0)
    module = builder.build()
    session = ort_session(
        builder.nodes,
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, [1, 3, 224, 224])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, None)],
        builder.initializers,
        threads,
    )
    data = np.random.default_rng(1).standard_normal((1, 3, 224, 224)).astype(np.float32)
    ort_seconds, (expected,) = timed(lambda: session.run(None, {"data": data}), repeat)  # type: ignore[misc]
    print(
        f"ResNet-50 v1, 1x3x224x224, {sum(1 for _ in module.walk())} ops "
        f"(logits up to {np.abs(expected).max():.2f}):"
    )
    print(f"  onnxruntime ({threads} threads):       {ort_seconds * 1000:7.1f} ms")
    for label, context in (
        ("float64", contextlib.nullcontext()),
        ("float32", float32_accumulation()),
    ):
        with context:
            seconds, outputs = timed(lambda: run_function(module, {"data": data}), repeat)
        difference = np.abs(outputs["logits"] - expected)  # type: ignore[index]
        excess = (difference - (1e-5 + 1e-4 * np.abs(expected))).max()
        print(
            f"  irc, {label} accumulation:  {seconds * 1000:7.1f} ms, max |irc - ort| "
            f"{difference.max():.2e}, within rtol 1e-4/atol 1e-5: {bool(excess <= 0)}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per figure (median)")
    parser.add_argument("--threads", type=int, default=2, help="onnxruntime intra-op threads")
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores, numpy {np.__version__}, onnxruntime {ort.__version__}")
    bench_kernels(args.repeat, args.threads)
    bench_resnet50(args.repeat, args.threads)


if __name__ == "__main__":
    main()
