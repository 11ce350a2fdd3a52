"""Small int8 TFLite models that the tests write themselves, without TensorFlow.

`TFLiteBuilder` writes a flatbuffer of the public TFLite schema with the generated
builder functions of the `tflite` package: tensors (int8 with per-tensor or per-axis
scales and zero points, int32 biases, float32 model inputs and outputs), their
buffers, and builtin operators with their options. On top of it:

- `SINGLE_OP_MODELS`: one model per supported operator and variant (per-channel conv
  weights, fused activations, SAME/VALID padding, strides, dilations, depthwise
  multipliers, broadcasting adds, ...), with seeded random int8 weights and
  realistic scales; several use power-of-two multipliers, whose products fall on
  exact ties of the requantization, so that each rounding rule shows.
- `NETWORKS`: a MobileNetV2-like inverted residual block with its residual ADD, a
  ResNet-like stem and block with PAD and MAX_POOL_2D, and a classifier head of
  MEAN, FULLY_CONNECTED and SOFTMAX.

Every model is a function of its seed and returns the flatbuffer's bytes; the same
seed gives the same bytes. LiteRT runs them all (tests/test_import_tflite.py compares
irc with it tensor by tensor).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import flatbuffers
import numpy as np
import tflite

TENSOR_TYPES = {"float32": 0, "int32": 2, "uint8": 3, "int64": 4, "int16": 7, "int8": 9}
"""The schema's TensorType of each numpy dtype name the builder writes."""

PADDING = {"SAME": 0, "VALID": 1}
ACTIVATIONS = {"NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3, "TANH": 4}


@dataclass
class _Tensor:
    name: str
    shape: tuple[int, ...]
    dtype: str
    scales: list[float] | None
    zero_points: list[int] | None
    axis: int
    data: np.ndarray | None
    shape_signature: tuple[int, ...] | None = None


@dataclass
class _Operator:
    opcode: int
    inputs: list[int]
    outputs: list[int]
    options: tuple[str, dict[str, Any]] | None
    custom_code: str | None = None


@dataclass
class TFLiteBuilder:
    """Writes one subgraph of tensors and builtin operators as a TFLite flatbuffer.

    `tensor` adds a tensor (with `data`, a constant in a buffer of its own) and returns
    its index; `operator` adds a builtin operator by its schema name ("CONV_2D") with
    its options table and fields ("Conv2DOptions", {"Padding": 0, ...}); `finish`
    writes the model with the given graph inputs and outputs.
    """

    seed: int = 0
    tensors: list[_Tensor] = field(default_factory=list)
    operators: list[_Operator] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)

    def tensor(
        self,
        name: str,
        shape: Sequence[int],
        dtype: str = "int8",
        scale: float | Sequence[float] | None = None,
        zero_point: int | Sequence[int] | None = None,
        axis: int = 0,
        data: np.ndarray | None = None,
    ) -> int:
        """Add a tensor; quantized when `scale` is given (a list: per axis `axis`)."""
        scales = None if scale is None else [float(s) for s in np.ravel(scale)]
        if zero_point is None and scales is not None:
            zero_point = [0] * len(scales)
        zero_points = None if zero_point is None else [int(z) for z in np.ravel(zero_point)]
        array = None if data is None else np.ascontiguousarray(data, dtype=dtype)
        self.tensors.append(
            _Tensor(name, tuple(int(d) for d in shape), dtype, scales, zero_points, axis, array)
        )
        return len(self.tensors) - 1

    def activation(self, name: str, shape: Sequence[int], scale: float, zero_point: int) -> int:
        """An int8 activation tensor quantized per tensor."""
        return self.tensor(name, shape, "int8", scale, zero_point)

    def weights(
        self,
        name: str,
        shape: Sequence[int],
        scales: Sequence[float] | float,
        axis: int = 0,
        low: int = -127,
        high: int = 127,
    ) -> int:
        """Seeded random symmetric int8 weights, per axis when `scales` is a list."""
        data = self.rng.integers(low, high + 1, size=tuple(shape)).astype(np.int8)
        return self.tensor(name, shape, "int8", scales, None, axis, data)

    def bias(self, name: str, scales: Sequence[float], magnitude: int = 2000) -> int:
        """A seeded random int32 bias, one value per scale (s_in * s_w per channel)."""
        data = self.rng.integers(-magnitude, magnitude + 1, size=len(scales)).astype(np.int32)
        return self.tensor(name, (len(scales),), "int32", list(scales), None, 0, data)

    def constant(self, name: str, values: Sequence[int] | np.ndarray, dtype: str = "int32") -> int:
        """A constant integer tensor (a reshape's shape, a pad's paddings, axes)."""
        data = np.asarray(values, dtype=dtype)
        return self.tensor(name, data.shape, dtype, data=data)

    def operator(
        self,
        opcode: str,
        inputs: Sequence[int],
        outputs: Sequence[int],
        options: str | None = None,
        **fields: Any,
    ) -> None:
        """Add a builtin operator ("CONV_2D") with an options table ("Conv2DOptions")."""
        code = getattr(tflite.BuiltinOperator, opcode)
        self.operators.append(
            _Operator(
                code, list(inputs), list(outputs), None if options is None else (options, fields)
            )
        )

    def custom(self, code: str, inputs: Sequence[int], outputs: Sequence[int]) -> None:
        """Add a custom operator (which irc does not import)."""
        self.operators.append(
            _Operator(tflite.BuiltinOperator.CUSTOM, list(inputs), list(outputs), None, code)
        )

    def finish(self, inputs: Sequence[int], outputs: Sequence[int]) -> bytes:
        """The model's flatbuffer (schema version 3, one subgraph)."""
        builder = flatbuffers.Builder(1024)
        # Buffer 0 is the empty buffer of every tensor without data.
        buffer_offsets = [_buffer(builder, None)]
        tensor_buffers = []
        for tensor in self.tensors:
            if tensor.data is None:
                tensor_buffers.append(0)
            else:
                buffer_offsets.append(_buffer(builder, tensor.data.tobytes()))
                tensor_buffers.append(len(buffer_offsets) - 1)
        tensor_offsets = [
            _tensor(builder, tensor, buffer)
            for tensor, buffer in zip(self.tensors, tensor_buffers, strict=True)
        ]
        codes: list[tuple[int, str | None]] = []
        for operator in self.operators:
            key = (operator.opcode, operator.custom_code)
            if key not in codes:
                codes.append(key)
        operator_offsets = [
            _operator(builder, operator, codes.index((operator.opcode, operator.custom_code)))
            for operator in self.operators
        ]
        name = builder.CreateString("main")
        subgraph_tensors = _vector(builder, tflite.SubGraphStartTensorsVector, tensor_offsets)
        subgraph_inputs = _int_vector(builder, tflite.SubGraphStartInputsVector, inputs)
        subgraph_outputs = _int_vector(builder, tflite.SubGraphStartOutputsVector, outputs)
        subgraph_operators = _vector(builder, tflite.SubGraphStartOperatorsVector, operator_offsets)
        tflite.SubGraphStart(builder)
        tflite.SubGraphAddTensors(builder, subgraph_tensors)
        tflite.SubGraphAddInputs(builder, subgraph_inputs)
        tflite.SubGraphAddOutputs(builder, subgraph_outputs)
        tflite.SubGraphAddOperators(builder, subgraph_operators)
        tflite.SubGraphAddName(builder, name)
        subgraph = tflite.SubGraphEnd(builder)
        code_offsets = []
        for opcode, custom_code in codes:
            custom = None if custom_code is None else builder.CreateString(custom_code)
            tflite.OperatorCodeStart(builder)
            tflite.OperatorCodeAddDeprecatedBuiltinCode(builder, min(opcode, 127))
            tflite.OperatorCodeAddBuiltinCode(builder, opcode)
            tflite.OperatorCodeAddVersion(builder, 1)
            if custom is not None:
                tflite.OperatorCodeAddCustomCode(builder, custom)
            code_offsets.append(tflite.OperatorCodeEnd(builder))
        model_codes = _vector(builder, tflite.ModelStartOperatorCodesVector, code_offsets)
        model_subgraphs = _vector(builder, tflite.ModelStartSubgraphsVector, [subgraph])
        model_buffers = _vector(builder, tflite.ModelStartBuffersVector, buffer_offsets)
        description = builder.CreateString("irc.testing.tflite_models")
        tflite.ModelStart(builder)
        tflite.ModelAddVersion(builder, 3)
        tflite.ModelAddOperatorCodes(builder, model_codes)
        tflite.ModelAddSubgraphs(builder, model_subgraphs)
        tflite.ModelAddDescription(builder, description)
        tflite.ModelAddBuffers(builder, model_buffers)
        builder.Finish(tflite.ModelEnd(builder), file_identifier=b"TFL3")
        return bytes(builder.Output())


def _vector(builder: flatbuffers.Builder, start: Callable[..., Any], offsets: Sequence[int]) -> int:
    start(builder, len(offsets))
    for offset in reversed(offsets):
        builder.PrependUOffsetTRelative(offset)
    return int(builder.EndVector())


def _int_vector(
    builder: flatbuffers.Builder, start: Callable[..., Any], values: Sequence[int]
) -> int:
    start(builder, len(values))
    for value in reversed(values):
        builder.PrependInt32(int(value))
    return int(builder.EndVector())


def _buffer(builder: flatbuffers.Builder, data: bytes | None) -> int:
    vector = None
    if data is not None:
        builder.StartVector(1, len(data), 16)
        builder.head = builder.head - len(data)
        builder.Bytes[builder.head : builder.head + len(data)] = data
        vector = builder.EndVector()
    tflite.BufferStart(builder)
    if vector is not None:
        tflite.BufferAddData(builder, vector)
    return int(tflite.BufferEnd(builder))


def _tensor(builder: flatbuffers.Builder, tensor: _Tensor, buffer: int) -> int:
    name = builder.CreateString(tensor.name)
    shape = _int_vector(builder, tflite.TensorStartShapeVector, tensor.shape)
    signature = None
    if tensor.shape_signature is not None:
        signature = _int_vector(
            builder, tflite.TensorStartShapeSignatureVector, tensor.shape_signature
        )
    quantization = None
    if tensor.scales is not None:
        tflite.QuantizationParametersStartScaleVector(builder, len(tensor.scales))
        for scale in reversed(tensor.scales):
            builder.PrependFloat32(scale)
        scales = builder.EndVector()
        zero_points_list = tensor.zero_points or [0] * len(tensor.scales)
        tflite.QuantizationParametersStartZeroPointVector(builder, len(zero_points_list))
        for zero_point in reversed(zero_points_list):
            builder.PrependInt64(zero_point)
        zero_points = builder.EndVector()
        tflite.QuantizationParametersStart(builder)
        tflite.QuantizationParametersAddScale(builder, scales)
        tflite.QuantizationParametersAddZeroPoint(builder, zero_points)
        tflite.QuantizationParametersAddQuantizedDimension(builder, tensor.axis)
        quantization = tflite.QuantizationParametersEnd(builder)
    tflite.TensorStart(builder)
    tflite.TensorAddShape(builder, shape)
    if signature is not None:
        tflite.TensorAddShapeSignature(builder, signature)
    tflite.TensorAddType(builder, TENSOR_TYPES[tensor.dtype])
    tflite.TensorAddBuffer(builder, buffer)
    tflite.TensorAddName(builder, name)
    if quantization is not None:
        tflite.TensorAddQuantization(builder, quantization)
    return int(tflite.TensorEnd(builder))


def _operator(builder: flatbuffers.Builder, operator: _Operator, code_index: int) -> int:
    options = None
    if operator.options is not None:
        table, fields = operator.options
        getattr(tflite, f"{table}Start")(builder)
        for key, value in fields.items():
            getattr(tflite, f"{table}Add{key}")(builder, value)
        options = getattr(tflite, f"{table}End")(builder)
    inputs = _int_vector(builder, tflite.OperatorStartInputsVector, operator.inputs)
    outputs = _int_vector(builder, tflite.OperatorStartOutputsVector, operator.outputs)
    tflite.OperatorStart(builder)
    tflite.OperatorAddOpcodeIndex(builder, code_index)
    tflite.OperatorAddInputs(builder, inputs)
    tflite.OperatorAddOutputs(builder, outputs)
    if options is not None and operator.options is not None:
        tflite.OperatorAddBuiltinOptionsType(
            builder, getattr(tflite.BuiltinOptions, operator.options[0])
        )
        tflite.OperatorAddBuiltinOptions(builder, options)
    return int(tflite.OperatorEnd(builder))


# --------------------------------------------------------------------------------------
# Layers, with realistic scales


UNIFORM_STD = 74.0
"""The standard deviation of uniform int8 values (what the tests feed), about 256 / sqrt(12)."""


class _Net:
    """Builds a model layer by layer: each method adds an operator reading an int8
    tensor (index, shape, scale, zero point) and returns the tensor it writes, with an
    output scale that covers about three standard deviations of its values."""

    def __init__(self, seed: int) -> None:
        self.b = TFLiteBuilder(seed)
        self.rng = self.b.rng
        self.count = 0

    def name(self, kind: str) -> str:
        self.count += 1
        return f"{kind}_{self.count}"

    def input(self, shape: Sequence[int], scale: float = 0.05, zero_point: int = -3) -> Act:
        return Act(
            self.b.activation("input", shape, scale, zero_point),
            tuple(shape),
            scale,
            zero_point,
            UNIFORM_STD * scale,
        )

    def act(
        self,
        kind: str,
        shape: Sequence[int],
        std: float,
        relu: bool = False,
        scale: float | None = None,
        zero_point: int | None = None,
    ) -> Act:
        """A new activation tensor whose real values have about `std` (after a relu:
        only the positive half)."""
        if scale is None:
            scale = 6.0 * std / 255.0 if not relu else 3.0 * std / 255.0
        if zero_point is None:
            zero_point = -128 if relu else int(self.rng.integers(-10, 11))
        return Act(
            self.b.activation(self.name(kind), shape, scale, zero_point),
            tuple(shape),
            scale,
            zero_point,
            std,
        )

    def conv(
        self,
        x: Act,
        out_channels: int,
        kernel: int = 3,
        stride: int = 1,
        padding: str = "SAME",
        dilation: int = 1,
        activation: str = "NONE",
        scale: float | None = None,
        weight_scales: Sequence[float] | None = None,
        zero_point: int | None = None,
        groups: int = 1,
    ) -> Act:
        """CONV_2D with per-channel weights and a bias (grouped: a filter of
        channels / groups input channels)."""
        _, height, width, channels = x.shape
        out_h = _out_size(height, kernel, stride, dilation, padding)
        out_w = _out_size(width, kernel, stride, dilation, padding)
        scales = (
            list(weight_scales)
            if weight_scales is not None
            else list(self.rng.uniform(0.004, 0.012, out_channels))
        )
        depth = channels // groups
        w = self.b.weights(self.name("filter"), (out_channels, kernel, kernel, depth), scales)
        bias = self.b.bias(self.name("bias"), [x.scale * s for s in scales])
        std = x.std * float(np.mean(scales)) * UNIFORM_STD * np.sqrt(kernel * kernel * depth)
        y = self.act(
            "conv", (1, out_h, out_w, out_channels), std, activation != "NONE", scale, zero_point
        )
        self.b.operator(
            "CONV_2D",
            [x.index, w, bias],
            [y.index],
            "Conv2DOptions",
            Padding=PADDING[padding],
            StrideW=stride,
            StrideH=stride,
            FusedActivationFunction=ACTIVATIONS[activation],
            DilationWFactor=dilation,
            DilationHFactor=dilation,
        )
        return y

    def depthwise(
        self,
        x: Act,
        multiplier: int = 1,
        kernel: int = 3,
        stride: int = 1,
        padding: str = "SAME",
        activation: str = "NONE",
        scale: float | None = None,
        weight_scales: Sequence[float] | None = None,
    ) -> Act:
        """DEPTHWISE_CONV_2D with per-channel weights (1 x K x K x C*M) and a bias."""
        _, height, width, channels = x.shape
        out_channels = channels * multiplier
        out_h = _out_size(height, kernel, stride, 1, padding)
        out_w = _out_size(width, kernel, stride, 1, padding)
        scales = (
            list(weight_scales)
            if weight_scales is not None
            else list(self.rng.uniform(0.004, 0.012, out_channels))
        )
        w = self.b.weights(
            self.name("depthwise"), (1, kernel, kernel, out_channels), scales, axis=3
        )
        bias = self.b.bias(self.name("bias"), [x.scale * s for s in scales])
        std = x.std * float(np.mean(scales)) * UNIFORM_STD * kernel
        y = self.act("depthwise", (1, out_h, out_w, out_channels), std, activation != "NONE", scale)
        self.b.operator(
            "DEPTHWISE_CONV_2D",
            [x.index, w, bias],
            [y.index],
            "DepthwiseConv2DOptions",
            Padding=PADDING[padding],
            StrideW=stride,
            StrideH=stride,
            DepthMultiplier=multiplier,
            FusedActivationFunction=ACTIVATIONS[activation],
            DilationWFactor=1,
            DilationHFactor=1,
        )
        return y

    def fully_connected(
        self, x: Act, features: int, activation: str = "NONE", per_channel: bool = True
    ) -> Act:
        """FULLY_CONNECTED of the rows of x's last axis (rank 2 or more)."""
        depth = x.shape[-1]
        rows = int(np.prod(x.shape)) // depth
        scales = list(self.rng.uniform(0.004, 0.012, features)) if per_channel else [0.008]
        w = self.b.weights(self.name("weights"), (features, depth), scales)
        bias_scales = [x.scale * s for s in (scales if per_channel else scales * features)]
        bias = self.b.bias(self.name("bias"), bias_scales)
        if not per_channel:
            self.b.tensors[bias].scales = [x.scale * scales[0]]
            self.b.tensors[bias].zero_points = [0]
        std = x.std * float(np.mean(scales)) * UNIFORM_STD * np.sqrt(depth)
        y = self.act("fully_connected", (rows, features), std, activation != "NONE")
        self.b.operator(
            "FULLY_CONNECTED",
            [x.index, w, bias],
            [y.index],
            "FullyConnectedOptions",
            FusedActivationFunction=ACTIVATIONS[activation],
        )
        return y

    def binary(
        self, opcode: str, x: Act, y: Act, activation: str = "NONE", scale: float | None = None
    ) -> Act:
        """ADD, SUB or MUL of two activations (broadcasting)."""
        shape = tuple(np.broadcast_shapes(x.shape, y.shape))
        std = x.std * y.std if opcode == "MUL" else float(np.hypot(x.std, y.std))
        out = self.act(opcode.lower(), shape, std, activation != "NONE", scale)
        options = {"ADD": "AddOptions", "SUB": "SubOptions", "MUL": "MulOptions"}[opcode]
        self.b.operator(
            opcode,
            [x.index, y.index],
            [out.index],
            options,
            FusedActivationFunction=ACTIVATIONS[activation],
        )
        return out

    def mean(self, x: Act, keep_dims: bool = False, scale: float | None = None) -> Act:
        """MEAN over H and W: N x C, or N x 1 x 1 x C with `keep_dims`."""
        axes = self.b.constant(self.name("axes"), [1, 2])
        shape = (x.shape[0], 1, 1, x.shape[3]) if keep_dims else (x.shape[0], x.shape[3])
        out = self.act("mean", shape, x.std / 2, scale=scale)
        self.b.operator("MEAN", [x.index, axes], [out.index], "ReducerOptions", KeepDims=keep_dims)
        return out

    def pool(
        self, opcode: str, x: Act, kernel: int, stride: int, padding: str, activation: str = "NONE"
    ) -> Act:
        """AVERAGE_POOL_2D or MAX_POOL_2D; the output keeps x's quantization."""
        _, height, width, channels = x.shape
        shape = (
            1,
            _out_size(height, kernel, stride, 1, padding),
            _out_size(width, kernel, stride, 1, padding),
            channels,
        )
        out = Act(
            self.b.activation(self.name(opcode.lower()), shape, x.scale, x.zero_point),
            shape,
            x.scale,
            x.zero_point,
            x.std,
        )
        self.b.operator(
            opcode,
            [x.index],
            [out.index],
            "Pool2DOptions",
            Padding=PADDING[padding],
            StrideW=stride,
            StrideH=stride,
            FilterWidth=kernel,
            FilterHeight=kernel,
            FusedActivationFunction=ACTIVATIONS[activation],
        )
        return out

    def pad(self, x: Act, paddings: Sequence[tuple[int, int]]) -> Act:
        """PAD with the zero point (constant paddings)."""
        shape = tuple(d + a + b for d, (a, b) in zip(x.shape, paddings))
        amounts = self.b.constant(self.name("paddings"), np.asarray(paddings, dtype=np.int32))
        out = Act(
            self.b.activation(self.name("pad"), shape, x.scale, x.zero_point),
            shape,
            x.scale,
            x.zero_point,
            x.std,
        )
        self.b.operator("PAD", [x.index, amounts], [out.index])
        return out

    def reshape(self, x: Act, shape: Sequence[int], opcode: str = "RESHAPE") -> Act:
        """RESHAPE to `shape` (its shape input); SQUEEZE of every 1 (no options);
        EXPAND_DIMS at the first 1 of `shape` (its axis input)."""
        if opcode == "RESHAPE":
            inputs = [x.index, self.b.constant(self.name("shape"), list(shape))]
        elif opcode == "EXPAND_DIMS":
            inputs = [x.index, self.b.constant(self.name("axis"), [list(shape).index(1, 1)])]
        else:
            inputs = [x.index]
        out = Act(
            self.b.activation(self.name("reshape"), shape, x.scale, x.zero_point),
            tuple(shape),
            x.scale,
            x.zero_point,
            x.std,
        )
        self.b.operator(opcode, inputs, [out.index])
        return out

    def concatenation(self, inputs: Sequence[Act], axis: int) -> Act:
        first = inputs[0]
        shape = list(first.shape)
        shape[axis] = sum(x.shape[axis] for x in inputs)
        out = Act(
            self.b.activation(self.name("concatenation"), shape, first.scale, first.zero_point),
            tuple(shape),
            first.scale,
            first.zero_point,
            first.std,
        )
        self.b.operator(
            "CONCATENATION",
            [x.index for x in inputs],
            [out.index],
            "ConcatenationOptions",
            Axis=axis,
            FusedActivationFunction=0,
        )
        return out

    def unary(
        self,
        opcode: str,
        x: Act,
        scale: float,
        zero_point: int,
        options: str | None = None,
        **fields: Any,
    ) -> Act:
        """An elementwise operator with a given output quantization."""
        out = Act(
            self.b.activation(self.name(opcode.lower()), x.shape, scale, zero_point),
            x.shape,
            scale,
            zero_point,
            x.std,
        )
        self.b.operator(opcode, [x.index], [out.index], options, **fields)
        return out

    def softmax(self, x: Act, beta: float = 1.0) -> Act:
        return self.unary("SOFTMAX", x, 1.0 / 256, -128, "SoftmaxOptions", Beta=beta)

    def finish(self, inputs: Sequence[Act], outputs: Sequence[Act]) -> bytes:
        return self.b.finish([x.index for x in inputs], [y.index for y in outputs])


@dataclass(frozen=True)
class Act:
    """An int8 activation tensor of a model being built, and the spread of its values."""

    index: int
    shape: tuple[int, ...]
    scale: float
    zero_point: int
    std: float


def _out_size(size: int, kernel: int, stride: int, dilation: int, padding: str) -> int:
    effective = (kernel - 1) * dilation + 1
    if padding == "SAME":
        return (size + stride - 1) // stride
    return (size - effective + stride) // stride


# --------------------------------------------------------------------------------------
# Single-operator models


TIE_INPUT_SCALE, TIE_WEIGHT_SCALES = 0.5, (0.25, 0.125)
"""Power-of-two scales: a conv's multipliers are exact powers of two (2^-4, 2^-5 with
an output scale of 2), so its products fall on exact ties of the rounding, where the
rounding rules differ."""


def _single(
    build: Callable[[_Net, Act], Act],
    shape: Sequence[int] = (1, 12, 12, 16),
    scale: float = 0.05,
    zero_point: int = -3,
) -> Callable[[int], bytes]:
    def model(seed: int = 0) -> bytes:
        net = _Net(seed)
        x = net.input(shape, scale, zero_point)
        return net.finish([x], [build(net, x)])

    return model


def _two_inputs(
    build: Callable[[_Net, Act, Act], Act],
    lhs: Sequence[int],
    rhs: Sequence[int],
    rhs_scale: float = 0.08,
    rhs_zero_point: int = 7,
) -> Callable[[int], bytes]:
    def model(seed: int = 0) -> bytes:
        net = _Net(seed)
        x = net.input(lhs, 0.05, -3)
        y = Act(
            net.b.activation("input_2", rhs, rhs_scale, rhs_zero_point),
            tuple(rhs),
            rhs_scale,
            rhs_zero_point,
            UNIFORM_STD * rhs_scale,
        )
        return net.finish([x, y], [build(net, x, y)])

    return model


def _quantize_float_input(seed: int = 0) -> bytes:
    """QUANTIZE of a float32 input into int8, a conv, and DEQUANTIZE to a float32 output."""
    net = _Net(seed)
    source = net.b.tensor("float_input", (1, 8, 8, 16), "float32")
    x = Act(
        net.b.activation("quantized_input", (1, 8, 8, 16), 0.02, 5), (1, 8, 8, 16), 0.02, 5, 1.0
    )
    net.b.operator("QUANTIZE", [source], [x.index])
    y = net.conv(x, 16, activation="RELU")
    result = net.b.tensor("float_output", y.shape, "float32")
    net.b.operator("DEQUANTIZE", [y.index], [result])
    return net.b.finish([source], [result])


SINGLE_OP_MODELS: dict[str, Callable[[int], bytes]] = {
    "conv_same_relu6": _single(lambda n, x: n.conv(x, 16, activation="RELU6")),
    "conv_valid_stride2": _single(
        lambda n, x: n.conv(x, 8, stride=2, padding="VALID"), (1, 13, 13, 8)
    ),
    "conv_dilated_relu": _single(lambda n, x: n.conv(x, 16, dilation=2, activation="RELU")),
    "conv_grouped": _single(lambda n, x: n.conv(x, 16, groups=4, activation="RELU")),
    "conv_1x1": _single(lambda n, x: n.conv(x, 32, kernel=1)),
    "conv_ties": _single(
        lambda n, x: n.conv(x, 16, scale=2.0, zero_point=-5, weight_scales=TIE_WEIGHT_SCALES * 8),
        (1, 9, 9, 8),
        TIE_INPUT_SCALE,
        3,
    ),
    "depthwise_relu6": _single(lambda n, x: n.depthwise(x, activation="RELU6")),
    "depthwise_multiplier2_stride2": _single(
        lambda n, x: n.depthwise(x, multiplier=2, stride=2, padding="VALID"), (1, 11, 11, 8)
    ),
    "depthwise_ties_tail": _single(
        lambda n, x: n.depthwise(x, scale=1.0, weight_scales=TIE_WEIGHT_SCALES * 6),
        (1, 9, 9, 12),
        TIE_INPUT_SCALE,
        3,
    ),
    "fully_connected": _single(lambda n, x: n.fully_connected(x, 24, "RELU"), (2, 64)),
    "fully_connected_per_tensor": _single(
        lambda n, x: n.fully_connected(x, 10, per_channel=False), (1, 48)
    ),
    "fully_connected_rank4": _single(lambda n, x: n.fully_connected(x, 12), (1, 2, 2, 16)),
    "add": _two_inputs(lambda n, x, y: n.binary("ADD", x, y), (1, 8, 8, 16), (1, 8, 8, 16)),
    "add_ties": _two_inputs(
        lambda n, x, y: n.binary("ADD", x, y, scale=0.1), (1, 8, 8, 16), (1, 8, 8, 16), 0.025, -4
    ),
    "add_relu": _two_inputs(
        lambda n, x, y: n.binary("ADD", x, y, "RELU"), (1, 8, 8, 16), (1, 8, 8, 16)
    ),
    "add_broadcast": _two_inputs(
        lambda n, x, y: n.binary("ADD", x, y), (1, 8, 8, 16), (1, 1, 1, 16)
    ),
    "sub": _two_inputs(lambda n, x, y: n.binary("SUB", x, y), (1, 8, 8, 16), (1, 8, 8, 16)),
    "mul": _two_inputs(lambda n, x, y: n.binary("MUL", x, y), (1, 8, 8, 16), (1, 8, 8, 16)),
    "mul_broadcast": _two_inputs(
        lambda n, x, y: n.binary("MUL", x, y, "RELU6"), (1, 8, 8, 16), (1, 1, 1, 16)
    ),
    "mean": _single(lambda n, x: n.mean(x), (1, 7, 7, 32)),
    "mean_keep_dims": _single(lambda n, x: n.mean(x, keep_dims=True), (1, 5, 5, 32)),
    "mean_keep_dims_ties_tail": _single(
        lambda n, x: n.mean(x, keep_dims=True, scale=0.125), (1, 4, 4, 24), 0.5, 3
    ),
    "average_pool_valid": _single(lambda n, x: n.pool("AVERAGE_POOL_2D", x, 2, 2, "VALID")),
    "average_pool_same": _single(lambda n, x: n.pool("AVERAGE_POOL_2D", x, 3, 1, "SAME")),
    "max_pool_same_relu": _single(lambda n, x: n.pool("MAX_POOL_2D", x, 3, 2, "SAME", "RELU")),
    "pad": _single(lambda n, x: n.pad(x, [(0, 0), (1, 2), (2, 1), (0, 0)])),
    "reshape": _single(lambda n, x: n.reshape(x, (1, 144, 16))),
    "squeeze": _single(lambda n, x: n.reshape(x, (4, 16), "SQUEEZE"), (1, 4, 1, 16)),
    "expand_dims": _single(lambda n, x: n.reshape(x, (1, 4, 1, 16), "EXPAND_DIMS"), (1, 4, 16)),
    "concatenation": _single(
        lambda n, x: n.concatenation([x, n.pool("MAX_POOL_2D", x, 3, 1, "SAME")], 3)
    ),
    "softmax": _single(lambda n, x: n.softmax(x), (2, 10), 0.1, 3),
    "softmax_beta": _single(lambda n, x: n.softmax(x, 0.5), (1, 4, 100), 0.2, -20),
    "logistic": _single(lambda n, x: n.unary("LOGISTIC", x, 1.0 / 256, -128), (1, 256), 0.05, 0),
    "tanh": _single(lambda n, x: n.unary("TANH", x, 1.0 / 128, 0), (1, 256), 0.03, 10),
    "hard_swish": _single(lambda n, x: n.unary("HARD_SWISH", x, 0.03, -30), (1, 256), 0.05, 0),
    "leaky_relu": _single(
        lambda n, x: n.unary("LEAKY_RELU", x, 0.04, -20, "LeakyReluOptions", Alpha=0.2),
        (1, 256),
        0.05,
        0,
    ),
    "relu": _single(lambda n, x: n.unary("RELU", x, 0.03, -128), (1, 256), 0.05, 2),
    "relu6": _single(lambda n, x: n.unary("RELU6", x, 0.025, -128), (1, 256), 0.05, 2),
    "relu_n1_to_1": _single(lambda n, x: n.unary("RELU_N1_TO_1", x, 0.01, 0), (1, 256), 0.02, 2),
    "quantize_int8": _single(lambda n, x: n.unary("QUANTIZE", x, 0.2, 5), (1, 8, 8, 16), 0.05, -3),
    "quantize_int8_tail": _single(
        lambda n, x: n.unary("QUANTIZE", x, 0.2, 5), (1, 5, 5, 3), 0.05, -3
    ),
    "quantize_dequantize_float": _quantize_float_input,
}
"""One small model per operator and variant irc imports, by name."""


# --------------------------------------------------------------------------------------
# Networks


def mobilenet_v2_block(seed: int = 0) -> bytes:
    """A MobileNetV2 inverted residual block: a 1x1 expand conv (RELU6), a 3x3
    depthwise conv (RELU6), a 1x1 linear projection and the residual ADD."""
    net = _Net(seed)
    x = net.input((1, 16, 16, 16), 0.05, -3)
    expanded = net.conv(x, 64, kernel=1, activation="RELU6")
    depthwise = net.depthwise(expanded, activation="RELU6")
    projected = net.conv(depthwise, 16, kernel=1)
    return net.finish([x], [net.binary("ADD", projected, x)])


def resnet_block(seed: int = 0) -> bytes:
    """A ResNet stem and bottleneck: PAD, a 7x7 stride-2 conv (RELU), PAD, a 3x3
    stride-2 MAX_POOL_2D, then 1x1, 3x3, 1x1 convs and the residual ADD (RELU)."""
    net = _Net(seed)
    x = net.input((1, 32, 32, 3), 0.02, -1)
    padded = net.pad(x, [(0, 0), (3, 3), (3, 3), (0, 0)])
    stem = net.conv(padded, 32, kernel=7, stride=2, padding="VALID", activation="RELU")
    pooled = net.pool("MAX_POOL_2D", net.pad(stem, [(0, 0), (1, 1), (1, 1), (0, 0)]), 3, 2, "VALID")
    branch = net.conv(pooled, 16, kernel=1, activation="RELU")
    branch = net.conv(branch, 16, kernel=3, activation="RELU")
    branch = net.conv(branch, 32, kernel=1)
    return net.finish([x], [net.binary("ADD", branch, pooled, "RELU")])


def classifier_head(seed: int = 0) -> bytes:
    """A classifier head: MEAN over H and W, FULLY_CONNECTED and SOFTMAX."""
    net = _Net(seed)
    x = net.input((1, 7, 7, 64), 0.04, -128)
    pooled = net.mean(x)
    logits = net.fully_connected(pooled, 100)
    return net.finish([x], [net.softmax(logits)])


NETWORKS: dict[str, Callable[[int], bytes]] = {
    "mobilenet_v2_block": mobilenet_v2_block,
    "resnet_block": resnet_block,
    "classifier_head": classifier_head,
}
"""The small networks, by name."""


# --------------------------------------------------------------------------------------
# Single layers of the shared Keras models' shapes (bench/vela_side_by_side.py)


SINGLE_LAYERS: dict[str, Callable[[int], bytes]] = {
    "conv_3x3": _single(lambda n, x: n.conv(x, 64, activation="RELU"), (1, 28, 28, 64), 0.05, -128),
    "conv_1x1_expand": _single(
        lambda n, x: n.conv(x, 144, kernel=1, activation="RELU6"), (1, 56, 56, 24), 0.05, -3
    ),
    "depthwise_3x3": _single(
        lambda n, x: n.depthwise(x, activation="RELU6"), (1, 56, 56, 144), 0.05, -128
    ),
    "fully_connected": _single(lambda n, x: n.fully_connected(x, 1000), (1, 1280), 0.05, -128),
    "add": _two_inputs(lambda n, x, y: n.binary("ADD", x, y), (1, 28, 28, 32), (1, 28, 28, 32)),
}
"""One layer alone in a network, of the shapes of the shared Keras models' layers: a
3x3 conv of ResNet-50's, MobileNetV2's 1x1 expansion and 3x3 depthwise conv of
block 2, its classifier, its residual add of block 4 (`bench/vela_side_by_side.py
--single-layers` compiles them with Vela and irc)."""
