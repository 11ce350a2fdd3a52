"""Small CNNs that the tests build themselves, with `onnx.helper`: NCHW, explicit
BatchNormalization, random but sane weights.

- `mobilenet_v2_style(seed)`: inverted residual blocks (1x1 expand conv, 3x3 depthwise
  conv, 1x1 linear projection, each with a batch norm; ReLU6 as Clip(0, 6); a residual
  Add where shapes match), then a 1x1 conv, global average pooling, flatten, dropout
  and a Gemm classifier. Input 1x3x96x96.
- `resnet_style(seed)`: an explicit zero Pad and a 7x7 stride-2 stem conv, max
  pooling, basic and bottleneck residual blocks with batch norms and ReLU, identity
  and projection (1x1 conv + batch norm) shortcuts, global average pooling, flatten
  and a Gemm. Input 1x3x96x96.
- `attention_block(seed)`: a transformer's pre-norm self-attention block (layer norm,
  Q/K/V projections, Q x K^T, softmax, P x V, output projection, residual), input
  1x16x32, opset 17; not in `NETWORKS`, which are the CNNs.

Weights are He-normal (std = sqrt(2 / fan_in)), biases small, batch-norm scales near
1. Batch-norm statistics are measured, as `irc.testing.models` does for the light
models: the network is first built with each batch norm normalising by the mean and
variance of its actual input (ReduceMean nodes), run once in onnxruntime on a seeded
batch, and then built again with those statistics as its running mean and variance.
Activations then keep a unit scale through every block, as in a trained network. The
same seed gives the same model; every model passes `onnx.checker` and runs in
onnxruntime.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import onnx

OPSET = 13
"""The ONNX opset of the built networks (ReduceMean still takes its axes as an attribute)."""

INPUT_NAME, OUTPUT_NAME = "input", "logits"

CALIBRATION_BATCH = 4
"""Samples in the run that measures the batch-norm statistics."""

VARIANCE_FLOOR = 0.01
"""Measured variances are at least this fraction of their layer's mean variance."""

BN_EPSILON = 1e-5


class _NetworkBuilder:
    """Builds an NCHW network node by node, drawing parameters from a seeded generator.

    With `statistics` None, batch norms normalise by their input's own statistics and
    report them as extra graph outputs (`calibration_outputs`); otherwise they use the
    given running means and variances, by node name.
    """

    def __init__(
        self, seed: int, statistics: dict[str, tuple[np.ndarray, np.ndarray]] | None
    ) -> None:
        self.rng = np.random.default_rng(seed)
        self.statistics = statistics
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.calibration_outputs: dict[str, tuple[str, str]] = {}
        """Batch-norm name -> (measured mean, measured variance) output names."""

    # ---- helpers -------------------------------------------------------------------------

    def constant(self, name: str, array: np.ndarray) -> str:
        from onnx import numpy_helper

        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def node(self, op_type: str, inputs: list[str], name: str, **attributes: Any) -> str:
        from onnx import helper

        self.nodes.append(helper.make_node(op_type, inputs, [name], name=name, **attributes))
        return name

    def normal(self, shape: tuple[int, ...], std: float) -> np.ndarray:
        return (self.rng.standard_normal(shape) * std).astype(np.float32)

    # ---- layers --------------------------------------------------------------------------

    def conv(
        self,
        x: str,
        name: str,
        in_channels: int,
        out_channels: int,
        kernel: int,
        stride: int = 1,
        group: int = 1,
        pad: int | None = None,
        bias: bool = False,
    ) -> str:
        """A square conv, He-initialised; padding keeps the size (`pad` overrides)."""
        fan_in = in_channels // group * kernel * kernel
        weight = self.normal(
            (out_channels, in_channels // group, kernel, kernel), math.sqrt(2 / fan_in)
        )
        inputs = [x, self.constant(f"{name}.weight", weight)]
        if bias:
            inputs.append(self.constant(f"{name}.bias", self.normal((out_channels,), 0.05)))
        padding = kernel // 2 if pad is None else pad
        return self.node(
            "Conv",
            inputs,
            name,
            kernel_shape=[kernel, kernel],
            strides=[stride, stride],
            pads=[padding] * 4,
            group=group,
        )

    def batch_norm(self, x: str, name: str, channels: int) -> str:
        gamma = (0.8 + 0.4 * self.rng.random(channels)).astype(np.float32)
        beta = self.normal((channels,), 0.05)
        parameters = [
            self.constant(f"{name}.weight", gamma),
            self.constant(f"{name}.bias", beta),
        ]
        if self.statistics is not None:
            running_mean, running_var = self.statistics[name]
            parameters += [
                self.constant(f"{name}.running_mean", running_mean),
                self.constant(f"{name}.running_var", running_var),
            ]
        else:
            # Normalise by the input's own statistics over (N, H, W), and report them.
            axes = [0, 2, 3]
            mean = self.node("ReduceMean", [x], f"{name}.measured_mean", axes=axes, keepdims=0)
            kept = self.node("ReduceMean", [x], f"{name}.kept_mean", axes=axes, keepdims=1)
            centered = self.node("Sub", [x, kept], f"{name}.centered")
            squared = self.node("Mul", [centered, centered], f"{name}.squared")
            var = self.node("ReduceMean", [squared], f"{name}.measured_var", axes=axes, keepdims=0)
            parameters += [mean, var]
            self.calibration_outputs[name] = (mean, var)
        return self.node("BatchNormalization", [x, *parameters], name, epsilon=BN_EPSILON)

    def relu(self, x: str, name: str) -> str:
        return self.node("Relu", [x], name)

    def relu6(self, x: str, name: str) -> str:
        low = self.constant(f"{name}.min", np.array(0.0, np.float32))
        high = self.constant(f"{name}.max", np.array(6.0, np.float32))
        return self.node("Clip", [x, low, high], name)

    def classifier(self, x: str, channels: int, classes: int, dropout: bool) -> str:
        """Global average pooling, flatten, (dropout,) and a Gemm to the logits."""
        pooled = self.node("GlobalAveragePool", [x], "pool")
        flat = self.node("Flatten", [pooled], "flatten", axis=1)
        if dropout:
            ratio = self.constant("dropout.ratio", np.array(0.2, np.float32))
            flat = self.node("Dropout", [flat, ratio], "dropout")
        weight = self.normal((classes, channels), math.sqrt(2 / channels))
        bias = self.normal((classes,), 0.05)
        inputs = [flat, self.constant("fc.weight", weight), self.constant("fc.bias", bias)]
        return self.node("Gemm", inputs, OUTPUT_NAME, transB=1)

    # ---- the model -----------------------------------------------------------------------

    def model(self, output: str, input_shape: tuple[int, ...], name: str) -> onnx.ModelProto:
        from onnx import TensorProto, helper

        outputs = [helper.make_tensor_value_info(output, TensorProto.FLOAT, None)]
        for mean, var in self.calibration_outputs.values():
            outputs += [
                helper.make_tensor_value_info(mean, TensorProto.FLOAT, None),
                helper.make_tensor_value_info(var, TensorProto.FLOAT, None),
            ]
        graph = helper.make_graph(
            self.nodes,
            name,
            [helper.make_tensor_value_info(INPUT_NAME, TensorProto.FLOAT, list(input_shape))],
            outputs,
            self.initializers,
        )
        return helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="irc.testing"
        )


def _build(
    body: Callable[[_NetworkBuilder], str], seed: int, name: str, input_shape: tuple[int, ...]
) -> onnx.ModelProto:
    """Build, measure the batch-norm statistics in onnxruntime, build again with them."""
    import onnx

    from irc.importers.reference import run_onnxruntime

    calibrating = _NetworkBuilder(seed, statistics=None)
    output = body(calibrating)
    batch_shape = (CALIBRATION_BATCH, *input_shape[1:])
    calibration = calibrating.model(output, batch_shape, name)
    batch = np.random.default_rng(seed + 1).standard_normal(batch_shape).astype(np.float32)
    measured = run_onnxruntime(calibration, {INPUT_NAME: batch})
    statistics = {}
    for bn_name, (mean, var) in calibrating.calibration_outputs.items():
        variance = measured[var].astype(np.float64)
        floor = VARIANCE_FLOOR * float(variance.mean()) + 1e-6
        statistics[bn_name] = (
            measured[mean].astype(np.float32),
            np.maximum(variance, floor).astype(np.float32),
        )
    final = _NetworkBuilder(seed, statistics)
    model = final.model(body(final), input_shape, name)
    model = onnx.shape_inference.infer_shapes(model)
    onnx.checker.check_model(model, full_check=True)
    return model


# --------------------------------------------------------------------------------------
# MobileNetV2-style

MOBILENET_BLOCKS = (
    (1, 16, 1, 1),
    (6, 24, 2, 2),
    (6, 32, 2, 2),
    (6, 64, 1, 2),
    (6, 96, 2, 1),
    (6, 160, 1, 2),
    (6, 320, 1, 1),
)
"""(expansion t, output channels c, repeats n, first stride s) per stage: the
MobileNetV2 paper's table (width 1.0) with 10 blocks instead of 17. Depth is what
limits a float32 network's precision: at 17 blocks onnxruntime's own rounding error
reaches 3e-5 of the logits' scale, too close to the atol of 1e-5 that irc is
compared with it at; at 10 it stays near 1e-5 at worst, mostly below."""

MOBILENET_HEAD_CHANNELS = 1280

CLASSES = 1000


def _inverted_residual(
    net: _NetworkBuilder,
    x: str,
    name: str,
    in_channels: int,
    out_channels: int,
    expansion: int,
    stride: int,
) -> str:
    hidden = in_channels * expansion
    y = x
    if expansion != 1:
        y = net.conv(y, f"{name}.expand", in_channels, hidden, 1)
        y = net.relu6(net.batch_norm(y, f"{name}.expand_bn", hidden), f"{name}.expand_relu6")
    y = net.conv(y, f"{name}.depthwise", hidden, hidden, 3, stride=stride, group=hidden)
    y = net.relu6(net.batch_norm(y, f"{name}.depthwise_bn", hidden), f"{name}.depthwise_relu6")
    y = net.conv(y, f"{name}.project", hidden, out_channels, 1)
    y = net.batch_norm(y, f"{name}.project_bn", out_channels)
    if stride == 1 and in_channels == out_channels:
        y = net.node("Add", [x, y], f"{name}.residual")
    return y


MOBILENET_V2_BLOCKS = (
    (1, 16, 1, 1),
    (6, 24, 2, 2),
    (6, 32, 3, 2),
    (6, 64, 4, 2),
    (6, 96, 3, 1),
    (6, 160, 3, 2),
    (6, 320, 1, 1),
)
"""The MobileNetV2 paper's table (width 1.0): 17 inverted residual blocks."""


def _mobilenet_body(
    net: _NetworkBuilder, blocks: tuple[tuple[int, int, int, int], ...] = MOBILENET_BLOCKS
) -> str:
    y = net.conv(INPUT_NAME, "stem", 3, 32, 3, stride=2, bias=True)
    y = net.relu6(net.batch_norm(y, "stem_bn", 32), "stem_relu6")
    channels = 32
    for stage, (expansion, out_channels, repeats, first_stride) in enumerate(blocks):
        for index in range(repeats):
            stride = first_stride if index == 0 else 1
            name = f"stage{stage}.block{index}"
            y = _inverted_residual(net, y, name, channels, out_channels, expansion, stride)
            channels = out_channels
    y = net.conv(y, "head", channels, MOBILENET_HEAD_CHANNELS, 1)
    y = net.relu6(net.batch_norm(y, "head_bn", MOBILENET_HEAD_CHANNELS), "head_relu6")
    return net.classifier(y, MOBILENET_HEAD_CHANNELS, CLASSES, dropout=True)


def mobilenet_v2_style(seed: int = 0) -> onnx.ModelProto:
    """A MobileNetV2-style network on 1x3x96x96 inputs (see the module docstring)."""
    return _build(_mobilenet_body, seed, "mobilenet_v2_style", (1, 3, 96, 96))


def mobilenet_v2(seed: int = 0) -> onnx.ModelProto:
    """MobileNetV2 itself (17 blocks, width 1.0, 3.5 M weights, 300 M MACs) on
    1x3x224x224 inputs: the MobileNetV2-class model of the compile benchmarks. Not in
    `NETWORKS`: at this depth float32 rounding is too close to the tests' tolerances
    (see `MOBILENET_BLOCKS`)."""
    return _build(
        lambda net: _mobilenet_body(net, MOBILENET_V2_BLOCKS),
        seed,
        "mobilenet_v2",
        (1, 3, 224, 224),
    )


# --------------------------------------------------------------------------------------
# ResNet-style


def _projection(
    net: _NetworkBuilder, x: str, name: str, in_channels: int, out_channels: int, stride: int
) -> str:
    """The shortcut: identity, or a strided 1x1 conv + batch norm when shapes change."""
    if stride == 1 and in_channels == out_channels:
        return x
    y = net.conv(x, f"{name}.shortcut", in_channels, out_channels, 1, stride=stride)
    return net.batch_norm(y, f"{name}.shortcut_bn", out_channels)


def _basic_block(
    net: _NetworkBuilder, x: str, name: str, in_channels: int, out_channels: int, stride: int
) -> str:
    y = net.conv(x, f"{name}.conv1", in_channels, out_channels, 3, stride=stride)
    y = net.relu(net.batch_norm(y, f"{name}.bn1", out_channels), f"{name}.relu1")
    y = net.conv(y, f"{name}.conv2", out_channels, out_channels, 3)
    y = net.batch_norm(y, f"{name}.bn2", out_channels)
    shortcut = _projection(net, x, name, in_channels, out_channels, stride)
    return net.relu(net.node("Add", [y, shortcut], f"{name}.add"), f"{name}.relu2")


def _bottleneck_block(
    net: _NetworkBuilder, x: str, name: str, in_channels: int, out_channels: int, stride: int
) -> str:
    mid = out_channels // 4
    y = net.conv(x, f"{name}.conv1", in_channels, mid, 1)
    y = net.relu(net.batch_norm(y, f"{name}.bn1", mid), f"{name}.relu1")
    y = net.conv(y, f"{name}.conv2", mid, mid, 3, stride=stride)
    y = net.relu(net.batch_norm(y, f"{name}.bn2", mid), f"{name}.relu2")
    y = net.conv(y, f"{name}.conv3", mid, out_channels, 1)
    y = net.batch_norm(y, f"{name}.bn3", out_channels)
    shortcut = _projection(net, x, name, in_channels, out_channels, stride)
    return net.relu(net.node("Add", [y, shortcut], f"{name}.add"), f"{name}.relu3")


def _resnet_body(net: _NetworkBuilder) -> str:
    # TensorFlow-style stem: the padding is a separate Pad node.
    pads = net.constant("stem_pad.pads", np.array([0, 0, 3, 3, 0, 0, 3, 3], np.int64))
    y = net.node("Pad", [INPUT_NAME, pads], "stem_pad", mode="constant")
    y = net.conv(y, "stem", 3, 64, 7, stride=2, pad=0)
    y = net.relu(net.batch_norm(y, "stem_bn", 64), "stem_relu")
    y = net.node(
        "MaxPool", [y], "stem_pool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]
    )
    channels = 64
    for layer, (block, out_channels, repeats, first_stride) in enumerate(RESNET_LAYERS, 1):
        for index in range(repeats):
            stride = first_stride if index == 0 else 1
            y = block(net, y, f"layer{layer}.{index}", channels, out_channels, stride)
            channels = out_channels
    return net.classifier(y, channels, CLASSES, dropout=False)


RESNET_LAYERS = (
    (_basic_block, 64, 2, 1),
    (_basic_block, 128, 2, 2),
    (_bottleneck_block, 256, 2, 2),
    (_bottleneck_block, 512, 1, 2),
)
"""(block, output channels, repeats, first stride) per layer: ResNet-18's first two
layers, then bottleneck layers as in ResNet-50 (narrower, fewer)."""


def resnet_style(seed: int = 0) -> onnx.ModelProto:
    """A ResNet-style network on 1x3x96x96 inputs (see the module docstring)."""
    return _build(_resnet_body, seed, "resnet_style", (1, 3, 96, 96))


# --------------------------------------------------------------------------------------
# A transformer's attention block

ATTENTION_OPSET = 17
"""LayerNormalization is an ONNX op from opset 17."""

ATTENTION_SHAPE = (1, 16, 32)
"""Batch, sequence length, model width of `attention_block`."""


def attention_block(seed: int = 0) -> onnx.ModelProto:
    """A pre-norm single-head self-attention block on 1x16x32 inputs, as exporters write
    it: LayerNormalization; Q, K and V projections (MatMul and a bias Add); K
    transposed; Q x K^T scaled by 1/sqrt(32); Softmax over the last axis; P x V; the
    output projection and the residual Add.

    Its MACs by hand: four 16x32 by 32x32 projections (4 x 16,384) and the two products
    of activations, 16x32 by 32x16 and 16x16 by 16x32 (8,192 each): 81,920.
    """
    import onnx
    from onnx import TensorProto, helper

    net = _NetworkBuilder(seed, statistics=None)
    _, length, width = ATTENTION_SHAPE
    scale = 1 / math.sqrt(width)
    gamma = net.constant("ln.scale", (0.8 + 0.4 * net.rng.random(width)).astype(np.float32))
    beta = net.constant("ln.bias", net.normal((width,), 0.05))
    normed = net.node("LayerNormalization", [INPUT_NAME, gamma, beta], "ln", axis=-1)

    def projection(x: str, name: str) -> str:
        weight = net.constant(f"{name}.weight", net.normal((width, width), math.sqrt(1 / width)))
        bias = net.constant(f"{name}.bias", net.normal((width,), 0.05))
        product = net.node("MatMul", [x, weight], f"{name}.matmul")
        return net.node("Add", [product, bias], name)

    query, key, value = (projection(normed, name) for name in ("q", "k", "v"))
    key_t = net.node("Transpose", [key], "k_t", perm=[0, 2, 1])
    scores = net.node("MatMul", [query, key_t], "scores")
    factor = net.constant("scale", np.array(scale, np.float32))
    scaled = net.node("Mul", [scores, factor], "scaled")
    weights = net.node("Softmax", [scaled], "softmax", axis=-1)
    attended = net.node("MatMul", [weights, value], "attended")
    projected = projection(attended, "out")
    net.node("Add", [projected, INPUT_NAME], OUTPUT_NAME)
    graph = helper.make_graph(
        net.nodes,
        "attention_block",
        [helper.make_tensor_value_info(INPUT_NAME, TensorProto.FLOAT, list(ATTENTION_SHAPE))],
        [helper.make_tensor_value_info(OUTPUT_NAME, TensorProto.FLOAT, [1, length, width])],
        net.initializers,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", ATTENTION_OPSET)],
        producer_name="irc.testing",
    )
    onnx.checker.check_model(model, full_check=True)
    return model


NETWORKS: dict[str, Callable[[int], onnx.ModelProto]] = {
    "mobilenet_v2_style": mobilenet_v2_style,
    "resnet_style": resnet_style,
}
"""Every network this module builds, by name."""
