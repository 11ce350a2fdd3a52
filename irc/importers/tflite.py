"""TFLite import: an int8 TFLite flatbuffer straight into `qnn`, with TFLite's arithmetic.

The flatbuffer is read with the `tflite` package (the public schema's generated
Python). Its one subgraph becomes `func.func @main`: each operator becomes a few `qnn`
ops (with `nn` ops that only move values), located at the name of the tensor it
writes; the function's arguments and results carry the subgraph's input and output
tensor names as `{irc.name = "..."}`. Nothing is calibrated: tensors become values of
`!quant.uniform` types with the file's scales and zero points (per-channel weights
per axis), biases are i32 constants, layouts stay NHWC (the `nhwc` layout of irc's
spatial ops; a depthwise kernel 1 x KH x KW x C*M becomes the grouped conv's
C*M x KH x KW x 1), fused activations become clamp bounds.

Every number an op computes with is the one LiteRT's built-in kernels compute with:
the fixed-point multipliers are TFLite's `QuantizeMultiplier` of the same float64 (or
float32) expressions of the scales, and each op carries the rounding LiteRT's x86
kernels use (`fixed_point.ROUNDINGS`; docs/tflite.md explains each op):

| TFLite | irc |
|---|---|
| CONV_2D | `qnn.conv` + `qnn.requantize` "double_up" (ruy's kernels) |
| DEPTHWISE_CONV_2D | `qnn.conv` (group = C) + `qnn.requantize` "double_up" for the channels of whole groups of 8, "double_away" for the rest (TFLite's vector loop and its scalar tail) |
| FULLY_CONNECTED | `qnn.gemm` (trans_b) + `qnn.requantize` "double_up" |
| ADD, SUB | `qnn.add`, `qnn.sub`: inputs "half_up", sum "double_away" (ADD); "double_away" throughout (SUB) |
| MUL | `qnn.mul` "double_away" |
| MEAN over H and W | `qnn.global_average_pool` "double_away" (TFLite's folded integer mean); with keep_dims, its optimized kernel's mean of stored values plus a bias ("double_up", the channels past the last group of 16 "double_away") |
| AVERAGE_POOL_2D | `qnn.average_pool` "half_away" |
| MAX_POOL_2D, PAD, RESHAPE, SQUEEZE, EXPAND_DIMS, CONCATENATION | `qnn.max_pool`, `qnn.pad`, `nn.reshape`, `qnn.concat` |
| SOFTMAX | `qnn.tflite_softmax` (TFLite's float32 table kernel) |
| LOGISTIC, TANH, HARD_SWISH, LEAKY_RELU | `qnn.lut`: TFLite's kernel evaluated on the 256 inputs |
| RELU, RELU6, RELU_N1_TO_1, QUANTIZE (int8 to int8) | `qnn.requantize` with clamp bounds |
| DEQUANTIZE (int8 to float32) | `quant.dcast` |

What the importer refuses, each with one diagnostic naming the tensor or operator
and a hint (all unsupported operators of a file in one error): a file that is not a
TFLite flatbuffer or is malformed, more than one subgraph, a float (or int16, or
uint8) model, dynamic shapes, operators irc has no form for, and quantization
parameters LiteRT itself would refuse.

    module = import_tflite("model.tflite")
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    NameLoc,
    StringAttr,
    TensorType,
    UnknownLoc,
    f32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from irc.diagnostics import Diagnostic, IrcError, Location
from irc.dialects import nn, qnn, quant
from irc.dialects.quant import UniformQuantizedType
from irc.ir import fixed_point

SCHEMA_VERSION = 3
"""The TFLite schema version irc reads."""

TYPE_NAMES = {
    0: "float32",
    1: "float16",
    2: "int32",
    3: "uint8",
    4: "int64",
    5: "string",
    6: "bool",
    7: "int16",
    8: "complex64",
    9: "int8",
    10: "float64",
    17: "int4",
}
DTYPES = {"float32": np.float32, "int32": np.int32, "int64": np.int64, "int8": np.int8}
"""The tensor types whose data irc reads (int8 tensors, int32 biases and shapes, int64
shapes, float32 model inputs and outputs)."""

PADDINGS = {0: "SAME", 1: "VALID"}
ACTIVATIONS = {0: "NONE", 1: "RELU", 2: "RELU_N1_TO_1", 3: "RELU6", 4: "TANH", 5: "SIGN_BIT"}
ACTIVATION_RANGES = {"RELU": (0.0, None), "RELU6": (0.0, 6.0), "RELU_N1_TO_1": (-1.0, 1.0)}
"""The real bounds of the activations TFLite fuses as clamps."""

DEPTHWISE_VECTOR_CHANNELS = 8
"""LiteRT's x86 depthwise conv requantizes channels in groups of 8 with its vector
code (both roundings ties up) and the channels after the last whole group with its
scalar code (the second rounding ties away from zero)."""

ELEMENTWISE_VECTOR = 16
"""LiteRT's x86 int8 QUANTIZE (a requantize) handles 16 elements at a time with its
vector code; the last (size mod 16) elements go through its scalar code."""

DEQUANTIZE_VECTOR = 8
"""LiteRT's x86 int8 DEQUANTIZE handles 8 elements at a time with its vector code."""

OPTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "CONV_2D": (
        "Conv2DOptions",
        (
            "Padding",
            "StrideW",
            "StrideH",
            "FusedActivationFunction",
            "DilationWFactor",
            "DilationHFactor",
        ),
    ),
    "DEPTHWISE_CONV_2D": (
        "DepthwiseConv2DOptions",
        (
            "Padding",
            "StrideW",
            "StrideH",
            "DepthMultiplier",
            "FusedActivationFunction",
            "DilationWFactor",
            "DilationHFactor",
        ),
    ),
    "FULLY_CONNECTED": (
        "FullyConnectedOptions",
        ("FusedActivationFunction", "WeightsFormat", "KeepNumDims"),
    ),
    "ADD": ("AddOptions", ("FusedActivationFunction",)),
    "SUB": ("SubOptions", ("FusedActivationFunction",)),
    "MUL": ("MulOptions", ("FusedActivationFunction",)),
    "AVERAGE_POOL_2D": (
        "Pool2DOptions",
        ("Padding", "StrideW", "StrideH", "FilterWidth", "FilterHeight", "FusedActivationFunction"),
    ),
    "MAX_POOL_2D": (
        "Pool2DOptions",
        ("Padding", "StrideW", "StrideH", "FilterWidth", "FilterHeight", "FusedActivationFunction"),
    ),
    "MEAN": ("ReducerOptions", ("KeepDims",)),
    "SOFTMAX": ("SoftmaxOptions", ("Beta",)),
    "CONCATENATION": ("ConcatenationOptions", ("Axis", "FusedActivationFunction")),
    "LEAKY_RELU": ("LeakyReluOptions", ("Alpha",)),
}
"""The builtin options irc reads, per operator: the options table and its fields."""


# --------------------------------------------------------------------------------------
# Public API


RUY_ROUNDING = "double_up"
"""How ruy (CONV_2D, FULLY_CONNECTED) rounds the second step of a requantization in
its x86 (AVX2, AVX-512) and ARM kernels: ties up. Its portable C++ code, which LiteRT
runs on an x86 CPU without AVX2, rounds them away from zero ("double_away")."""


def import_tflite(
    model: bytes | str | Path, source: str | None = None, *, ruy_rounding: str = RUY_ROUNDING
) -> ModuleOp:
    """Import an int8 TFLite model (a file path, or the flatbuffer's bytes) as a module
    of `qnn` ops. Raises `IrcError` for any problem of the model.

    `ruy_rounding` is the rounding of the conv and fully connected layers' requantize:
    ruy's kernels' (`RUY_ROUNDING`), or "double_away" for LiteRT on an x86 CPU without
    AVX2 (the tests ask LiteRT which one it computes: `irc.testing.litert`)."""
    if isinstance(model, str | Path):
        path = Path(model)
        source = source or str(path)
        data = load_tflite(path)
    else:
        data = bytes(model)
    source = source or "<tflite model>"
    if ruy_rounding not in ("double_up", "double_away"):
        raise ValueError(f"ruy rounds twice (double_up or double_away), not {ruy_rounding}")
    parsed = read_tflite(data, source)
    return _Importer(parsed, source, ruy_rounding=ruy_rounding).run()


def tensor_locations(model: bytes | str | Path) -> dict[int, str]:
    """The location name of the ops that compute each tensor of the model (its name,
    made unique), by tensor index: what a comparison with LiteRT's tensors matches
    values by."""
    data = load_tflite(Path(model)) if isinstance(model, str | Path) else bytes(model)
    importer = _Importer(read_tflite(data, "<tflite model>"), "<tflite model>")
    importer.assign_locations()
    return dict(importer.locations)


def load_tflite(path: Path | str) -> bytes:
    """The bytes of a TFLite file; a missing, empty or unreadable file is an `IrcError`."""
    path = Path(path)
    if not path.is_file():
        raise IrcError(
            Diagnostic(f"cannot open TFLite model '{path}': no such file", Location(str(path)))
        )
    try:
        data = path.read_bytes()
    except OSError as failure:
        raise IrcError(
            Diagnostic(
                f"cannot read TFLite model '{path}': {failure.strerror}", Location(str(path))
            )
        ) from None
    if not data:
        raise IrcError(
            Diagnostic(
                f"cannot read TFLite model '{path}': the file is empty",
                Location(str(path)),
                hint="the conversion or the copy of the model did not finish",
            )
        )
    return data


# --------------------------------------------------------------------------------------
# The flatbuffer, read into plain objects


@dataclass
class TFLiteTensor:
    """A tensor of the subgraph, as read from the flatbuffer."""

    index: int
    name: str
    shape: tuple[int, ...]
    dtype: str
    scales: np.ndarray | None
    """float32 scales; None when the tensor is not quantized."""
    zero_points: np.ndarray | None
    axis: int
    data: np.ndarray | None
    """The constant's values (of `dtype`), or None for a computed tensor."""
    signature: tuple[int, ...]
    """The shape signature (-1 for a dimension known only at run time), or ()."""

    @property
    def dynamic(self) -> bool:
        """The shape (or its signature) has an unknown (-1) dimension."""
        return any(d < 0 for d in (*self.shape, *self.signature))

    @property
    def quantized(self) -> bool:
        """The tensor has quantization parameters."""
        return self.scales is not None and self.scales.size > 0


@dataclass
class TFLiteOperator:
    """An operator of the subgraph: its builtin code's name, its tensors (-1: none)
    and its options."""

    index: int
    opcode: str
    custom_code: str | None
    inputs: list[int]
    outputs: list[int]
    options: dict[str, Any] | None


@dataclass
class TFLiteModel:
    """The parts of a TFLite model that irc reads."""

    tensors: list[TFLiteTensor]
    operators: list[TFLiteOperator]
    inputs: list[int]
    outputs: list[int]
    name: str
    subgraphs: int


def _malformed(source: str, detail: str) -> IrcError:
    return IrcError(
        Diagnostic(
            f"malformed TFLite flatbuffer: {detail}",
            Location(source),
            hint="the file is not a TFLite model, or it is truncated or damaged",
        )
    )


def read_tflite(data: bytes, source: str) -> TFLiteModel:
    """The parts of a TFLite flatbuffer that irc reads (its first subgraph); a damaged
    flatbuffer is one error located at `source`."""
    import tflite

    if len(data) < 8 or not tflite.Model.ModelBufferHasIdentifier(data, 0):
        raise _malformed(source, "no TFLite file identifier 'TFL3' at byte 4")
    try:
        return _read_model(tflite, data)
    except IrcError:
        raise
    except Exception as failure:  # a damaged flatbuffer fails in any accessor, any way
        detail = str(failure).splitlines()[0] if str(failure).strip() else type(failure).__name__
        raise _malformed(source, f"reading it failed ({detail})") from None


def _read_model(tflite: Any, data: bytes) -> TFLiteModel:
    model = tflite.Model.GetRootAsModel(data, 0)
    version = model.Version()
    if version != SCHEMA_VERSION:
        raise ValueError(f"schema version {version}, expected {SCHEMA_VERSION}")
    names = {
        value: key
        for key, value in vars(tflite.BuiltinOperator).items()
        if not key.startswith("_") and isinstance(value, int)
    }
    codes = []
    for index in range(model.OperatorCodesLength()):
        code = model.OperatorCodes(index)
        builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
        custom = code.CustomCode()
        codes.append(
            (names.get(builtin, f"builtin operator {builtin}"), custom.decode() if custom else None)
        )
    subgraphs = model.SubgraphsLength()
    if subgraphs < 1:
        raise ValueError("the model has no subgraph")
    graph = model.Subgraphs(0)
    tensors = [
        _read_tensor(tflite, model, graph.Tensors(i), i) for i in range(graph.TensorsLength())
    ]
    operators = []
    for index in range(graph.OperatorsLength()):
        operator = graph.Operators(index)
        opcode, custom = codes[operator.OpcodeIndex()]
        inputs = [int(i) for i in operator.InputsAsNumpy()] if operator.InputsLength() else []
        outputs = [int(i) for i in operator.OutputsAsNumpy()] if operator.OutputsLength() else []
        for tensor in (*inputs, *outputs):
            if not -1 <= tensor < len(tensors):
                raise ValueError(f"operator #{index} names tensor {tensor} of {len(tensors)}")
        operators.append(
            TFLiteOperator(
                index, opcode, custom, inputs, outputs, _read_options(tflite, operator, opcode)
            )
        )
    inputs = [int(i) for i in graph.InputsAsNumpy()] if graph.InputsLength() else []
    outputs = [int(i) for i in graph.OutputsAsNumpy()] if graph.OutputsLength() else []
    for tensor in (*inputs, *outputs):
        if not 0 <= tensor < len(tensors):
            raise ValueError(f"the subgraph's inputs or outputs name tensor {tensor}")
    name = graph.Name()
    return TFLiteModel(
        tensors, operators, inputs, outputs, name.decode() if name else "main", subgraphs
    )


def _read_tensor(tflite: Any, model: Any, tensor: Any, index: int) -> TFLiteTensor:
    dtype = TYPE_NAMES.get(tensor.Type(), f"type {tensor.Type()}")
    shape = tuple(int(d) for d in tensor.ShapeAsNumpy()) if tensor.ShapeLength() else ()
    signature = (
        tuple(int(d) for d in tensor.ShapeSignatureAsNumpy())
        if tensor.ShapeSignatureLength()
        else ()
    )
    quantization = tensor.Quantization()
    scales = zero_points = None
    axis = 0
    if quantization is not None and quantization.ScaleLength():
        scales = quantization.ScaleAsNumpy().astype(np.float32)
        zero_points = (
            quantization.ZeroPointAsNumpy().astype(np.int64)
            if quantization.ZeroPointLength()
            else np.zeros(scales.size, np.int64)
        )
        axis = quantization.QuantizedDimension()
    data: np.ndarray | None = None
    buffer = model.Buffers(tensor.Buffer()) if tensor.Buffer() < model.BuffersLength() else None
    if buffer is not None and buffer.Offset() > 1:
        raise ValueError(f"tensor '{_name(tensor)}' keeps its data outside the flatbuffer")
    if buffer is not None and buffer.DataLength():
        raw = buffer.DataAsNumpy().tobytes()
        if dtype not in DTYPES:
            data = np.zeros(0)  # a constant of a type irc does not read: refused later
        else:
            count = math.prod(shape)
            itemsize = np.dtype(DTYPES[dtype]).itemsize
            if len(raw) != count * itemsize:
                raise ValueError(
                    f"tensor '{_name(tensor)}' has {len(raw)} bytes of data for shape {list(shape)}"
                )
            data = np.frombuffer(raw, DTYPES[dtype]).reshape(shape).copy()
    return TFLiteTensor(
        index,
        _name(tensor) or f"tensor_{index}",
        shape,
        dtype,
        scales,
        zero_points,
        axis,
        data,
        signature,
    )


def _name(tensor: Any) -> str:
    name = tensor.Name()
    return name.decode("utf-8", errors="replace") if name else ""


def _read_options(tflite: Any, operator: Any, opcode: str) -> dict[str, Any] | None:
    if opcode not in OPTIONS:
        return None
    table_name, fields = OPTIONS[opcode]
    table = operator.BuiltinOptions()
    if table is None:
        return None
    options = getattr(tflite, table_name)()
    options.Init(table.Bytes, table.Pos)
    return {name: getattr(options, name)() for name in fields}


# --------------------------------------------------------------------------------------
# TFLite's own arithmetic of parameters (its Prepare functions)


def tflite_round(value: float) -> int:
    """std::round: to nearest, ties away from zero."""
    return int(math.copysign(math.floor(abs(value) + 0.5), value))


def quantize_real(real: float, scale: float, zero_point: int) -> int:
    """TFLite's `Quantize` of a float: zero_point + round(real / scale), the division in
    float32 (`CalculateActivationRangeQuantized`, `QuantizedReluX`)."""
    return zero_point + tflite_round(float(np.float32(real) / np.float32(scale)))


def activation_bounds(activation: str, scale: float, zero_point: int) -> tuple[int, int]:
    """The int8 clamp bounds of a fused activation, as TFLite computes them."""
    low, high = -128, 127
    if activation in ACTIVATION_RANGES:
        real_low, real_high = ACTIVATION_RANGES[activation]
        low = max(low, quantize_real(real_low, scale, zero_point))
        if real_high is not None:
            high = min(high, quantize_real(real_high, scale, zero_point))
    return low, high


# --------------------------------------------------------------------------------------
# The lookup tables of TFLite's int8 elementwise kernels, evaluated on every input


def _float32_function(name: str, x: np.ndarray) -> np.ndarray:
    """libm's float functions (`expf`, `tanhf`) as correctly rounded float32 results:
    computed in float64 and rounded once."""
    values = x.astype(np.float64)
    if name == "exp":
        return np.exp(values).astype(np.float32)
    if name == "tanh":
        return np.tanh(values).astype(np.float32)
    raise ValueError(name)


def float_lut(
    transform: Callable[[np.ndarray], np.ndarray],
    input_scale: float,
    input_zero_point: int,
    output_scale: float,
    output_zero_point: int,
) -> list[int]:
    """TFLite's `LUTPopulateInt8`: for every int8 input, in float32, dequantize, apply
    `transform`, multiply by 1 / output_scale, round half away from zero, add the zero
    point and saturate."""
    stored = np.arange(-128, 128, dtype=np.int32)
    dequantized = np.float32(input_scale) * (stored - np.int32(input_zero_point)).astype(np.float32)
    transformed = transform(dequantized.astype(np.float32)).astype(np.float32)
    inverse = np.float32(1.0) / np.float32(output_scale)
    scaled = (transformed * inverse).astype(np.float64)
    rounded = np.floor(np.abs(scaled) + 0.5) * np.sign(scaled)
    return [int(v) for v in np.clip(rounded + output_zero_point, -128, 127)]


def _logistic(x: np.ndarray) -> np.ndarray:
    one = np.float32(1.0)
    return one / (one + _float32_function("exp", -x))


def _tanh(x: np.ndarray) -> np.ndarray:
    return _float32_function("tanh", x)


def _saturating_rounding_doubling_high_mul_16(a: np.ndarray, b: int) -> np.ndarray:
    """gemmlowp's int16 SaturatingRoundingDoublingHighMul: (a * b + nudge) / 2^15,
    truncated, nudge 2^14 (or 1 - 2^14 for a negative product)."""
    product = a.astype(np.int64) * b
    nudge = np.where(product >= 0, 1 << 14, 1 - (1 << 14))
    total = product + nudge
    quotient = np.abs(total) // (1 << 15) * np.sign(total)
    overflow = (a == -(1 << 15)) & (b == -(1 << 15))
    return np.where(overflow, (1 << 15) - 1, quotient).astype(np.int64)


def _saturating_left_shift_16(values: np.ndarray, amount: int) -> np.ndarray:
    return np.clip(values.astype(np.int64) * (1 << amount), -(1 << 15), (1 << 15) - 1)


def _rounding_divide_by_pot(values: np.ndarray, exponent: int) -> np.ndarray:
    """gemmlowp's RoundingDivideByPOT: to nearest, ties away from zero."""
    if exponent == 0:
        return values
    mask = (1 << exponent) - 1
    remainder = values & mask
    threshold = (mask >> 1) + (values < 0)
    return (values >> exponent) + (remainder > threshold)


def _int16_multiplier(real: float) -> tuple[int, int]:
    """TFLite's QuantizeMultiplier of a float32 value, then `DownScaleInt32ToInt16Multiplier`:
    (M16, exponent)."""
    multiplier, shift = fixed_point.tflite_multiplier(float(np.float32(real)))
    exponent = -shift
    rounded = (multiplier + (1 << 15)) >> 16
    if rounded == 1 << 15:
        rounded -= 1
    return rounded, exponent


def hard_swish_lut(
    input_scale: float, input_zero_point: int, output_scale: float, output_zero_point: int
) -> list[int]:
    """TFLite's int8 HARD_SWISH (`reference_ops::HardSwish`, the fixed-point kernel its
    optimized version reproduces) on every int8 input."""
    hires_input_scale = np.float32(1.0 / 128.0) * np.float32(input_scale)
    reluish_scale = np.float32(3.0) / np.float32(32768.0)
    output_m, output_exponent = _int16_multiplier(
        float(hires_input_scale / np.float32(output_scale))
    )
    reluish_m, reluish_exponent = _int16_multiplier(float(hires_input_scale / reluish_scale))
    stored = np.arange(-128, 128, dtype=np.int64)
    value = stored - input_zero_point
    hires = value * (1 << 7)
    preshift = _saturating_rounding_doubling_high_mul_16(hires, output_m)
    reluish = hires
    if reluish_exponent > 0:
        reluish = _saturating_left_shift_16(reluish, reluish_exponent - 1)
    reluish = _saturating_rounding_doubling_high_mul_16(reluish, reluish_m)
    if reluish_exponent > 0:
        reluish = _saturating_left_shift_16(reluish, 1)
    if reluish_exponent < 0:
        reluish = _rounding_divide_by_pot(reluish, -reluish_exponent)
    reluish = (reluish + (1 << 15)) >> 1
    # SaturatingDoublingHighMul (no rounding): (a * b) / 2^15, truncated.
    product = reluish * preshift
    high = np.abs(product) // (1 << 15) * np.sign(product)
    output = _rounding_divide_by_pot(high, -output_exponent) + output_zero_point
    return [int(v) for v in np.clip(output, -128, 127)]


# --------------------------------------------------------------------------------------
# The importer


def _name_loc(name: str) -> NameLoc:
    return NameLoc(StringAttr(name), UnknownLoc())


def _name_dict(name: str) -> DictionaryAttr:
    return DictionaryAttr({"irc.name": StringAttr(name)})


def _ints(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, [int(v) for v in values])


def _int(value: int | None) -> IntegerAttr | None:
    return None if value is None else IntegerAttr(int(value), i64)


FLOAT_BOUNDARY = {"QUANTIZE", "DEQUANTIZE"}
"""Operators that may read or write float32 tensors (the model's float inputs and outputs)."""


@dataclass
class _Importer:
    """Imports the parsed model's subgraph into `func.func @main`."""

    model: TFLiteModel
    source: str
    ruy_rounding: str = RUY_ROUNDING
    """The rounding of the layers ruy computes (CONV_2D, FULLY_CONNECTED)."""
    block: Block = field(default_factory=Block)
    values: dict[int, SSAValue] = field(default_factory=dict)
    locations: dict[int, str] = field(default_factory=dict)
    """The location name of each computed tensor (`tensor_locations`)."""

    def location_of(self, index: int) -> str:
        """The name the ops computing tensor `index` are located at: the tensor's name,
        made unique among computed tensors (TFLite names need not be) by its index."""
        if index not in self.locations:
            name = self.tensors[index].name
            if name in self.locations.values():
                name = f"{name} (tensor {index})"
            self.locations[index] = name
        return self.locations[index]

    @property
    def tensors(self) -> list[TFLiteTensor]:
        return self.model.tensors

    def assign_locations(self) -> None:
        """Name every computed tensor's location, in one order (the inputs, then each
        operator's outputs), wherever the names are asked for."""
        for index in self.model.inputs:
            self.location_of(index)
        for operator in self.model.operators:
            for index in operator.outputs:
                if index >= 0:
                    self.location_of(index)

    def run(self) -> ModuleOp:
        self.assign_locations()
        self._check_model()
        arguments = self._import_inputs()
        self._import_operators()
        results = []
        for index in self.model.outputs:
            if index not in self.values:
                raise self.error(
                    f"output tensor '{self.tensors[index].name}' is not written by any operator",
                    self.tensors[index].name,
                )
            results.append((self.location_of(index), self.values[index]))
        self.block.add_op(func.ReturnOp(*(value for _, value in results)))
        function = func.FuncOp(
            "main",
            ([value.type for _, value in arguments], [value.type for _, value in results]),
            Region(self.block),
            arg_attrs=ArrayAttr([_name_dict(name) for name, _ in arguments]),
            res_attrs=ArrayAttr([_name_dict(name) for name, _ in results]),
        )
        function.location = _name_loc(self.model.name or "main")
        return ModuleOp([function])

    # ---- errors ------------------------------------------------------------------------

    def error(self, message: str, name: str | None = None, hint: str | None = None) -> IrcError:
        return IrcError(
            Diagnostic(message, Location(self.source, name=name, kind="tensor"), hint=hint)
        )

    def operator_error(
        self, operator: TFLiteOperator, message: str, hint: str | None = None
    ) -> IrcError:
        """An error about an operator, located at the tensor it writes."""
        return IrcError(self.operator_diagnostic(operator, message, hint))

    def written(self, operator: TFLiteOperator) -> str:
        """The location name of the tensor an operator writes (its first output)."""
        written = [self.location_of(i) for i in operator.outputs if i >= 0]
        return written[0] if written else f"operator #{operator.index}"

    def operator_diagnostic(
        self, operator: TFLiteOperator, message: str, hint: str | None = None
    ) -> Diagnostic:
        name = self.written(operator)
        return Diagnostic(
            f"operator #{operator.index} {self.describe(operator)}: {message}",
            Location(self.source, name=name, kind="tensor"),
            hint=hint,
        )

    @staticmethod
    def describe(operator: TFLiteOperator) -> str:
        if operator.custom_code is not None:
            return f"{operator.opcode} '{operator.custom_code}'"
        return operator.opcode

    # ---- checks of the whole model -----------------------------------------------------

    def _check_model(self) -> None:
        """Checks that concern the whole model, each one error: one subgraph, static
        shapes, int8 (not float) tensors, and every operator supported (all listed)."""
        model = self.model
        if model.subgraphs > 1:
            raise self.error(
                f"the model has {model.subgraphs} subgraphs; irc imports models of one",
                hint="control flow (WHILE, IF, CALL_ONCE) and signatures of several "
                "subgraphs are not supported",
            )
        for tensor in self.tensors:
            if tensor.dynamic:
                raise self.error(
                    f"tensor '{tensor.name}' has a dynamic shape "
                    f"{list(tensor.signature or tensor.shape)}; irc needs static shapes",
                    tensor.name,
                    hint="convert the model with a fixed input shape (a batch of 1)",
                )
        unsupported = [op for op in model.operators if op.opcode not in CONVERTERS]
        if unsupported:
            # One error that lists them all, located at the first.
            listed = ", ".join(
                f"#{op.index} {self.describe(op)} (writing '{self.written(op)}')"
                for op in unsupported
            )
            what = "an operator" if len(unsupported) == 1 else f"{len(unsupported)} operators"
            raise IrcError(
                Diagnostic(
                    f"the model has {what} irc does not import: {listed}",
                    Location(self.source, name=self.written(unsupported[0]), kind="tensor"),
                    hint="irc imports the operators docs/tflite.md lists; "
                    "docs/adding-an-op.md explains how to add one",
                )
            )
        self._check_float()

    def _check_float(self) -> None:
        """A model that computes in float (float32 tensors read or written by any
        operator but a QUANTIZE of a float input or a DEQUANTIZE of an output) is one
        error; so are int16, uint8 and other activation types."""
        computing = [
            operator
            for operator in self.model.operators
            if operator.opcode not in FLOAT_BOUNDARY
            and any(
                self.tensors[i].dtype not in ("int8", "int32", "int64")
                or (self.tensors[i].dtype != "int8" and self.tensors[i].data is None)
                for i in (*operator.inputs, *operator.outputs)
                if i >= 0
            )
        ]
        if not computing:
            return
        first = computing[0]
        types = sorted(
            {
                self.tensors[i].dtype
                for i in (*first.inputs, *first.outputs)
                if i >= 0 and self.tensors[i].dtype != "int8"
            }
        )
        kinds = ", ".join(types)
        if "float32" in types or "float16" in types:
            message = (
                f"the model computes in float ({len(computing)} of {len(self.model.operators)} "
                f"operators, the first reading or writing {kinds} tensors); irc imports int8 "
                "TFLite models"
            )
            hint = (
                "convert it with full-integer quantization (TFLiteConverter with "
                "optimizations=[tf.lite.Optimize.DEFAULT], a representative dataset and "
                "target_spec.supported_ops=[tf.lite.OpsSet.TFLITE_BUILTINS_INT8])"
            )
        else:
            message = (
                f"the operator reads or writes {kinds} tensors; irc imports int8 models "
                "(int8 activations and weights, int32 biases)"
            )
            hint = "int16 activations (16x8) and uint8 models are not supported; convert to int8"
        raise self.operator_error(first, message, hint)

    # ---- values -------------------------------------------------------------------------

    def element(
        self, tensor: TFLiteTensor, storage_range: tuple[int, int] | None = None
    ) -> UniformQuantizedType:
        """The quantized element type of an int8 tensor (per axis for several scales)."""
        assert tensor.scales is not None and tensor.zero_points is not None
        scales = [float(s) for s in tensor.scales]
        zero_points = [int(z) for z in tensor.zero_points]
        for scale in scales:
            if not (math.isfinite(scale) and scale > 0):
                raise self.error(
                    f"tensor '{tensor.name}' has scale {scale}; scales must be positive and finite",
                    tensor.name,
                )
        for zero_point in zero_points:
            if not -128 <= zero_point <= 127:
                raise self.error(
                    f"tensor '{tensor.name}' has zero point {zero_point}, outside int8's range",
                    tensor.name,
                )
        if len(scales) == 1:
            return UniformQuantizedType.make(scales[0], zero_points[0], storage_range=storage_range)
        if len(zero_points) != len(scales):
            raise self.error(
                f"tensor '{tensor.name}' has {len(scales)} scales but {len(zero_points)} zero points",
                tensor.name,
            )
        return UniformQuantizedType.make(
            scales, zero_points, storage_range=storage_range, axis=tensor.axis
        )

    def activation_type(self, tensor: TFLiteTensor) -> TensorType:
        """The type of an int8 activation tensor (quantized per tensor)."""
        if tensor.dtype != "int8" or not tensor.quantized:
            raise self.error(
                f"tensor '{tensor.name}' is {tensor.dtype}"
                + ("" if tensor.quantized else " without quantization parameters")
                + "; irc expects an int8 activation with a scale and a zero point",
                tensor.name,
            )
        assert tensor.scales is not None
        if tensor.scales.size != 1:
            raise self.error(
                f"activation tensor '{tensor.name}' has {tensor.scales.size} scales; activations "
                "are quantized per tensor",
                tensor.name,
            )
        return TensorType(self.element(tensor), list(tensor.shape))

    def value(self, index: int, operator: TFLiteOperator) -> SSAValue:
        """The value of a tensor an operator reads: computed, or a constant."""
        if index < 0:
            raise self.operator_error(operator, "a required input is missing (-1)")
        if index in self.values:
            return self.values[index]
        tensor = self.tensors[index]
        if tensor.data is None:
            raise self.operator_error(
                operator, f"input tensor '{tensor.name}' is neither computed before nor a constant"
            )
        if tensor.dtype != "int8":
            raise self.operator_error(
                operator, f"constant '{tensor.name}' is {tensor.dtype}, expected int8 values"
            )
        value = self.quantized_constant(tensor.data, self.activation_type(tensor), tensor.name)
        self.values[index] = value
        return value

    def quantized_constant(self, data: np.ndarray, value_type: TensorType, name: str) -> SSAValue:
        """A `qnn.constant` of stored values, located at `name`."""
        op = qnn.ConstantOp.from_array(data, value_type)
        op.location = _name_loc(name)
        self.block.add_op(op)
        return op.result

    def integer_constant(self, array: np.ndarray, name: str) -> SSAValue:
        """An `nn.constant` (a bias, a float32 scalar), located at `name`."""
        op = nn.ConstantOp.from_array(array, location=_name_loc(name))
        self.block.add_op(op)
        return op.result

    def emit(self, op: Operation, name: str) -> SSAValue:
        """Add an op located at `name`; its first result."""
        op.location = _name_loc(name)
        self.block.add_op(op)
        return op.results[0]

    def define(self, index: int, value: SSAValue) -> None:
        """`value` is the tensor `index`; its type must be the tensor's."""
        tensor = self.tensors[index]
        value_type = value.type
        assert isinstance(value_type, TensorType)
        if tuple(value_type.get_shape()) != tensor.shape:
            raise self.error(
                f"tensor '{tensor.name}' is declared {list(tensor.shape)}, but irc computes "
                f"shape {list(value_type.get_shape())} for it",
                tensor.name,
                hint="LiteRT would refuse the model too (its prepare step checks the shapes)",
            )
        self.values[index] = value

    # ---- inputs and operators ------------------------------------------------------------

    def _import_inputs(self) -> list[tuple[str, SSAValue]]:
        arguments: list[tuple[str, SSAValue]] = []
        for index in self.model.inputs:
            tensor = self.tensors[index]
            value_type: TensorType
            if tensor.dtype == "float32":
                value_type = TensorType(f32, list(tensor.shape))
            else:
                value_type = self.activation_type(tensor)
            argument = self.block.insert_arg(value_type, len(self.block.args))
            self.values[index] = argument
            arguments.append((self.location_of(index), argument))
        return arguments

    def _import_operators(self) -> None:
        diagnostics: list[Diagnostic] = []
        poisoned: set[int] = set()
        for operator in self.model.operators:
            if any(i in poisoned for i in operator.inputs):
                poisoned.update(operator.outputs)
                continue
            try:
                if len(operator.outputs) < 1 or operator.outputs[0] < 0:
                    raise self.operator_error(operator, "it writes no tensor")
                CONVERTERS[operator.opcode](_Operator(self, operator))
            except IrcError as failure:
                diagnostics.extend(failure.diagnostics)
                poisoned.update(operator.outputs)
            except VerifyException as failure:
                # An op irc would build from it does not verify (an accumulator that
                # can overflow int32, shapes that do not match): the model's problem.
                diagnostics.append(
                    self.operator_diagnostic(
                        operator,
                        f"irc cannot compute it as given: {failure}",
                        hint="LiteRT may run it, but irc's integer ops bound their operands",
                    )
                )
                poisoned.update(operator.outputs)
        if diagnostics:
            raise IrcError(diagnostics)


@dataclass
class _Operator:
    """One operator being converted: its tensors, options, and how to emit ops."""

    importer: _Importer
    operator: TFLiteOperator

    @property
    def output(self) -> TFLiteTensor:
        return self.importer.tensors[self.operator.outputs[0]]

    @property
    def name(self) -> str:
        """The location of the ops it becomes: the name of the tensor it writes."""
        return self.importer.location_of(self.operator.outputs[0])

    def tensor(self, position: int) -> TFLiteTensor | None:
        """Its input tensor at `position`, or None where it has none."""
        inputs = self.operator.inputs
        if position >= len(inputs) or inputs[position] < 0:
            return None
        return self.importer.tensors[inputs[position]]

    def input_tensor(self, position: int) -> TFLiteTensor:
        tensor = self.tensor(position)
        if tensor is None:
            raise self.error(f"input #{position} is missing")
        return tensor

    def input(self, position: int) -> SSAValue:
        return self.importer.value(
            self.operator.inputs[position] if position < len(self.operator.inputs) else -1,
            self.operator,
        )

    def option(self, name: str) -> Any:
        options = self.operator.options
        if options is None:
            raise self.error("it has no builtin options", hint="the converter always writes them")
        return options[name]

    def error(self, message: str, hint: str | None = None) -> IrcError:
        return self.importer.operator_error(self.operator, message, hint)

    def emit(self, op: Operation) -> SSAValue:
        return self.importer.emit(op, self.name)

    def define(self, value: SSAValue) -> None:
        self.importer.define(self.operator.outputs[0], value)

    def output_type(self) -> TensorType:
        return self.importer.activation_type(self.output)

    def scale(self, tensor: TFLiteTensor) -> float:
        assert tensor.scales is not None
        return float(tensor.scales[0])

    def zero_point(self, tensor: TFLiteTensor) -> int:
        assert tensor.zero_points is not None
        return int(tensor.zero_points[0])

    def activation(self) -> str:
        activation = ACTIVATIONS.get(self.option("FusedActivationFunction"), "unknown")
        if activation not in ("NONE", *ACTIVATION_RANGES):
            raise self.error(
                f"fused activation {activation} is not supported",
                hint="irc fuses RELU, RELU6 and RELU_N1_TO_1 (clamps)",
            )
        return activation

    def clamp(self, activation: str | None = None) -> tuple[int | None, int | None]:
        """The output's clamp bounds for the fused activation (None at the int8 ends)."""
        activation = self.activation() if activation is None else activation
        low, high = activation_bounds(
            activation, self.scale(self.output), self.zero_point(self.output)
        )
        if low > high:
            raise self.error(f"the activation's clamp bounds [{low}, {high}] are empty")
        return (None if low == -128 else low), (None if high == 127 else high)

    def same_quantization(self, tensor: TFLiteTensor, what: str) -> None:
        """TFLite requires the input and output of some operators to share their scale
        and zero point."""
        output = self.output
        if (
            tensor.scales is None
            or output.scales is None
            or (
                float(tensor.scales[0]) != float(output.scales[0])
                or int(tensor.zero_points[0]) != int(output.zero_points[0])  # type: ignore[index]
            )
        ):
            raise self.error(
                f"{what} and the output must have the same scale and zero point (LiteRT "
                "requires it)"
            )


# --------------------------------------------------------------------------------------
# Converters


def _padding(
    node: _Operator, in_size: int, kernel: int, stride: int, dilation: int, out_size: int
) -> tuple[int, int]:
    """TFLite's padding before and after one spatial axis (`ComputePaddingHeightWidth`)."""
    padding = PADDINGS.get(node.option("Padding"))
    if padding is None:
        raise node.error(f"unknown padding {node.option('Padding')}")
    if stride < 1 or dilation < 1:
        raise node.error(f"strides and dilations must be positive, got {stride} and {dilation}")
    effective = (kernel - 1) * dilation + 1
    if padding == "VALID":
        expected = (in_size - effective + stride) // stride
        if expected != out_size:
            raise node.error(f"VALID padding gives {expected} outputs, the output has {out_size}")
        return 0, 0
    expected = (in_size + stride - 1) // stride
    if expected != out_size:
        raise node.error(f"SAME padding gives {expected} outputs, the output has {out_size}")
    total = max((out_size - 1) * stride + effective - in_size, 0)
    return total // 2, total - total // 2


def _requantize(
    node: _Operator,
    accumulator: SSAValue,
    reals: Sequence[float],
    rounding: str,
    clamp: tuple[int | None, int | None],
    result_type: TensorType,
    axis: int | None,
) -> SSAValue:
    """A `qnn.requantize` of the multipliers of `reals` (TFLite's `QuantizeMultiplier`)."""
    pairs = [fixed_point.tflite_multiplier(real) for real in reals]
    op = qnn.RequantizeOp.build(
        [accumulator],
        {
            "multiplier": _ints([m for m, _ in pairs]),
            "shift": _ints([s for _, s in pairs]),
            "axis": _int(axis if len(pairs) > 1 else None),
            "clamp_min": _int(clamp[0]),
            "clamp_max": _int(clamp[1]),
            "rounding": None if rounding == fixed_point.HALF_EVEN else StringAttr(rounding),
        },
        [result_type],
    )
    return node.emit(op)


def _weights(
    node: _Operator, position: int, axis: int, transpose: Sequence[int] | None = None
) -> tuple[SSAValue, list[float]]:
    """The int8 weights of a conv or fully connected layer as a `qnn.constant`, per
    channel along `axis` (after `transpose`), and one scale per output channel."""
    tensor = node.input_tensor(position)
    if tensor.data is None or tensor.dtype != "int8" or not tensor.quantized:
        raise node.error(
            f"the weights '{tensor.name}' must be constant int8 values with quantization "
            "parameters",
            hint="irc imports full-integer models; weights computed at run time are not supported",
        )
    assert tensor.scales is not None and tensor.zero_points is not None
    if np.any(tensor.zero_points != 0):
        raise node.error(f"the weights '{tensor.name}' must be symmetric (zero point 0)")
    data = (
        tensor.data if transpose is None else np.ascontiguousarray(tensor.data.transpose(transpose))
    )
    scales = [float(s) for s in tensor.scales]
    channels = data.shape[axis]
    if len(scales) not in (1, channels):
        raise node.error(
            f"the weights '{tensor.name}' have {len(scales)} scales for {channels} channels"
        )
    low = -127 if data.size == 0 or int(data.min()) >= -127 else -128
    if len(scales) == 1:
        element = UniformQuantizedType.make(scales[0], 0, storage_range=(low, 127))
    else:
        element = UniformQuantizedType.make(scales, 0, storage_range=(low, 127), axis=axis)
    value = node.importer.quantized_constant(
        data, TensorType(element, list(data.shape)), tensor.name
    )
    return value, scales * (channels if len(scales) == 1 else 1)


def _bias(node: _Operator, position: int, channels: int) -> SSAValue | None:
    tensor = node.tensor(position)
    if tensor is None:
        return None
    if tensor.data is None or tensor.dtype != "int32":
        raise node.error(f"the bias '{tensor.name}' must be a constant of int32 values")
    if tensor.data.shape != (channels,):
        raise node.error(
            f"the bias '{tensor.name}' has shape {list(tensor.data.shape)}, expected [{channels}]"
        )
    return node.importer.integer_constant(tensor.data.astype(np.int32), tensor.name)


def _convert_conv(node: _Operator) -> None:
    depthwise = node.operator.opcode == "DEPTHWISE_CONV_2D"
    x_tensor, output = node.input_tensor(0), node.output
    x = node.input(0)
    node.importer.activation_type(x_tensor)  # an int8 activation, or an error
    result_type = node.output_type()
    if len(x_tensor.shape) != 4 or len(output.shape) != 4:
        raise node.error("the input and output must be 4-D (NHWC)")
    weight_tensor = node.input_tensor(1)
    if len(weight_tensor.shape) != 4:
        raise node.error("the filter must be 4-D")
    channels = x_tensor.shape[3]
    out_channels = output.shape[3]
    if depthwise:
        multiplier = node.option("DepthMultiplier") or 1
        if weight_tensor.shape[3] != out_channels or out_channels != channels * multiplier:
            raise node.error(
                f"a depthwise filter {list(weight_tensor.shape)} with multiplier {multiplier} "
                f"does not map {channels} channels to {out_channels}"
            )
        # TFLite's 1 x KH x KW x (C*M) is irc's grouped conv weight (C*M) x KH x KW x 1.
        weight, scales = _weights(node, 1, 0, transpose=(3, 1, 2, 0))
        group = channels
    else:
        if weight_tensor.shape[0] != out_channels or channels % weight_tensor.shape[3]:
            raise node.error(
                f"the filter {list(weight_tensor.shape)} does not map {channels} channels to "
                f"{out_channels}"
            )
        weight, scales = _weights(node, 1, 0)
        group = channels // weight_tensor.shape[3]
    kernel_h, kernel_w = weight_tensor.shape[1], weight_tensor.shape[2]
    strides = [node.option("StrideH"), node.option("StrideW")]
    dilations = [node.option("DilationHFactor"), node.option("DilationWFactor")]
    top, bottom = _padding(
        node, x_tensor.shape[1], kernel_h, strides[0], dilations[0], output.shape[1]
    )
    left, right = _padding(
        node, x_tensor.shape[2], kernel_w, strides[1], dilations[1], output.shape[2]
    )
    bias = _bias(node, 2, out_channels)
    conv = qnn.ConvOp.build(
        [x, weight, *([bias] if bias is not None else [])],
        {
            "layout": StringAttr("nhwc"),
            "strides": _ints(strides) if strides != [1, 1] else None,
            "pads": _ints([top, left, bottom, right]) if any((top, left, bottom, right)) else None,
            "dilations": _ints(dilations) if dilations != [1, 1] else None,
            "group": _int(group) if group != 1 else None,
        },
    )
    accumulator = node.emit(conv)
    input_scale = np.float64(node.scale(x_tensor))
    output_scale = np.float64(node.scale(output))
    reals = [float(input_scale * np.float64(s) / output_scale) for s in scales]
    clamp = node.clamp()
    if not depthwise:
        rounding = node.importer.ruy_rounding
        node.define(_requantize(node, accumulator, reals, rounding, clamp, result_type, 3))
        return
    vector = out_channels - out_channels % DEPTHWISE_VECTOR_CHANNELS
    if vector == out_channels:
        node.define(_requantize(node, accumulator, reals, "double_up", clamp, result_type, 3))
        return
    # LiteRT rounds the channels past the last whole group of 8 in its scalar code.
    pieces = []
    for start, end, rounding in ((0, vector, "double_up"), (vector, out_channels, "double_away")):
        if start == end:
            continue
        shape = [*output.shape[:3], end - start]
        part = node.emit(
            nn.SliceOp.build(
                [accumulator], {"starts": _ints([start]), "ends": _ints([end]), "axes": _ints([3])}
            )
        )
        pieces.append(
            _requantize(
                node,
                part,
                reals[start:end],
                rounding,
                clamp,
                TensorType(result_type.get_element_type(), shape),
                3,
            )
        )
    node.define(node.emit(qnn.ConcatOp.build(pieces, {"axis": _int(3)}, [result_type])))


def _convert_fully_connected(node: _Operator) -> None:
    x_tensor, output = node.input_tensor(0), node.output
    weight_tensor = node.input_tensor(1)
    if len(weight_tensor.shape) != 2:
        raise node.error("the weights must be 2-D (outputs x inputs)")
    if node.option("WeightsFormat") != 0:
        raise node.error("shuffled weights (WeightsFormat SHUFFLED4x16INT8) are not supported")
    features, depth = weight_tensor.shape
    x = node.input(0)
    node.importer.activation_type(x_tensor)
    result_type = node.output_type()
    count = math.prod(x_tensor.shape)
    if depth == 0 or count % depth:
        raise node.error(
            f"the input {list(x_tensor.shape)} is not a whole number of rows of {depth}"
        )
    rows = count // depth
    if len(x_tensor.shape) != 2:
        x_element = node.importer.activation_type(x_tensor).get_element_type()
        x = node.emit(nn.ReshapeOp.build([x], {}, [TensorType(x_element, [rows, depth])]))
    weight, scales = _weights(node, 1, 0)
    bias = _bias(node, 2, features)
    accumulator = node.emit(
        qnn.GemmOp.build(
            [x, weight, *([bias] if bias is not None else [])], {"trans_b": IntegerAttr(1, 1)}
        )
    )
    if math.prod(output.shape) != rows * features:
        raise node.error(
            f"the output {list(output.shape)} does not hold {rows} x {features} values"
        )
    input_scale, output_scale = np.float64(node.scale(x_tensor)), np.float64(node.scale(output))
    reals = [float(input_scale * np.float64(s) / output_scale) for s in scales]
    element = result_type.get_element_type()
    value = _requantize(
        node,
        accumulator,
        reals,
        node.importer.ruy_rounding,
        node.clamp(),
        TensorType(element, [rows, features]),
        1,
    )
    if list(output.shape) != [rows, features]:
        value = node.emit(nn.ReshapeOp.build([value], {}, [result_type]))
    node.define(value)


def _convert_add_sub(node: _Operator) -> None:
    subtract = node.operator.opcode == "SUB"
    lhs_tensor, rhs_tensor = node.input_tensor(0), node.input_tensor(1)
    lhs, rhs = node.input(0), node.input(1)
    result_type = node.output_type()
    scale_1, scale_2 = node.scale(lhs_tensor), node.scale(rhs_tensor)
    twice = 2.0 * max(scale_1, scale_2)  # 2 * a float32: exact
    left_shift = fixed_point.ADD_LEFT_SHIFT
    lhs_m, lhs_s = fixed_point.tflite_multiplier(scale_1 / twice)
    rhs_m, rhs_s = fixed_point.tflite_multiplier(scale_2 / twice)
    out_m, out_s = fixed_point.tflite_multiplier(
        twice / float(np.float32((1 << left_shift) * np.float32(node.scale(node.output))))
    )
    low, high = node.clamp()
    op_class = qnn.SubOp if subtract else qnn.AddOp
    op = op_class.build(
        [lhs, rhs],
        {
            "lhs_multiplier": _int(lhs_m),
            "lhs_shift": _int(lhs_s),
            "rhs_multiplier": _int(rhs_m),
            "rhs_shift": _int(rhs_s),
            "multiplier": _int(out_m),
            "shift": _int(out_s),
            "clamp_min": _int(low),
            "clamp_max": _int(high),
            "input_rounding": StringAttr("double_away" if subtract else "half_up"),
            "rounding": StringAttr("double_away"),
        },
        [result_type],
    )
    node.define(node.emit(op))


def _convert_mul(node: _Operator) -> None:
    lhs_tensor, rhs_tensor = node.input_tensor(0), node.input_tensor(1)
    lhs, rhs = node.input(0), node.input(1)
    result_type = node.output_type()
    # TFLite computes s1 * s2 / s_out in float32.
    real = np.float32(node.scale(lhs_tensor)) * np.float32(node.scale(rhs_tensor))
    real = np.float32(real / np.float32(node.scale(node.output)))
    multiplier, shift = fixed_point.tflite_multiplier(float(real))
    low, high = node.clamp()
    op = qnn.MulOp.build(
        [lhs, rhs],
        {
            "multiplier": _int(multiplier),
            "shift": _int(shift),
            "clamp_min": _int(low),
            "clamp_max": _int(high),
            "rounding": StringAttr("double_away"),
        },
        [result_type],
    )
    node.define(node.emit(op))


def _convert_mean(node: _Operator) -> None:
    x_tensor, output = node.input_tensor(0), node.output
    axes_tensor = node.input_tensor(1)
    if axes_tensor.data is None:
        raise node.error("the reduction axes must be a constant")
    axes = sorted(int(a) % max(len(x_tensor.shape), 1) for a in np.ravel(axes_tensor.data))
    if len(x_tensor.shape) != 4 or axes != [1, 2]:
        raise node.error(
            f"MEAN over axes {axes} of a {len(x_tensor.shape)}-D tensor; irc imports the mean "
            "over H and W of an NHWC tensor"
        )
    if node.option("KeepDims"):
        _mean_keeping_dims(node, x_tensor)
        return
    x = node.input(0)
    result_type = node.output_type()
    real = float(np.float64(node.scale(x_tensor)) / np.float64(node.scale(output)))
    multiplier, shift = fixed_point.tflite_multiplier(real)
    batch, channels = x_tensor.shape[0], x_tensor.shape[3]
    pooled_type = TensorType(result_type.get_element_type(), [batch, 1, 1, channels])
    pooled = node.emit(
        qnn.GlobalAveragePoolOp.build(
            [x],
            {
                "layout": StringAttr("nhwc"),
                "multiplier": _int(multiplier),
                "shift": _int(shift),
                "rounding": StringAttr("double_away"),
            },
            [pooled_type],
        )
    )
    node.define(node.emit(nn.ReshapeOp.build([pooled], {}, [result_type])))


MEAN_VECTOR_CHANNELS = 16
"""LiteRT's x86 4-D MEAN with keep_dims handles 16 channels at a time with its vector
code (both roundings ties up), the channels after the last whole group with its
scalar code (the second rounding away from zero); with one thread (its split of the
channels among threads moves the groups)."""


def _mean_keeping_dims(node: _Operator, x_tensor: TFLiteTensor) -> None:
    """MEAN over H and W with keep_dims: LiteRT's `optimized_integer_ops::Mean`, the
    sum of the stored values times a multiplier computed in float32, plus a bias."""
    output = node.output
    x = node.input(0)
    result_type = node.output_type()
    batch, height, width, channels = x_tensor.shape
    if tuple(output.shape) != (batch, 1, 1, channels):
        raise node.error(
            f"the output {list(output.shape)} is not the mean's [{batch}, 1, 1, {channels}]"
        )
    input_scale, output_scale = np.float32(node.scale(x_tensor)), np.float32(node.scale(output))
    count = np.float32(height * width)
    real = np.float32(input_scale / np.float32(count * output_scale))
    multiplier, shift = fixed_point.tflite_multiplier(float(real))
    offset = np.float32(np.float32(node.zero_point(x_tensor)) * input_scale) / output_scale
    offset = (
        np.float32(offset + np.float32(0.5)) if offset > 0 else np.float32(offset - np.float32(0.5))
    )
    bias = node.zero_point(output) - int(np.trunc(offset))
    element = result_type.get_element_type()
    x_element = node.importer.activation_type(x_tensor).get_element_type()

    def mean(source: SSAValue, width_c: int, rounding: str) -> SSAValue:
        return node.emit(
            qnn.GlobalAveragePoolOp.build(
                [source],
                {
                    "layout": StringAttr("nhwc"),
                    "multiplier": _int(multiplier),
                    "shift": _int(shift),
                    "rounding": StringAttr(rounding),
                    "bias": _int(bias),
                },
                [TensorType(element, [batch, 1, 1, width_c])],
            )
        )

    vector = channels - channels % MEAN_VECTOR_CHANNELS
    if vector in (0, channels):
        node.define(mean(x, channels, "double_up" if vector else "double_away"))
        return
    pieces = []
    for start, end, rounding in ((0, vector, "double_up"), (vector, channels, "double_away")):
        part = node.emit(
            nn.SliceOp.build(
                [x],
                {"starts": _ints([start]), "ends": _ints([end]), "axes": _ints([3])},
                [TensorType(x_element, [batch, height, width, end - start])],
            )
        )
        pieces.append(mean(part, end - start, rounding))
    node.define(node.emit(qnn.ConcatOp.build(pieces, {"axis": _int(3)}, [result_type])))


def _pool_properties(node: _Operator, x_tensor: TFLiteTensor) -> dict[str, Attribute | None]:
    output = node.output
    if len(x_tensor.shape) != 4 or len(output.shape) != 4:
        raise node.error("the input and output must be 4-D (NHWC)")
    kernel = [node.option("FilterHeight"), node.option("FilterWidth")]
    strides = [node.option("StrideH"), node.option("StrideW")]
    if min(kernel) < 1:
        raise node.error(f"the filter must be positive, got {kernel}")
    top, bottom = _padding(node, x_tensor.shape[1], kernel[0], strides[0], 1, output.shape[1])
    left, right = _padding(node, x_tensor.shape[2], kernel[1], strides[1], 1, output.shape[2])
    return {
        "layout": StringAttr("nhwc"),
        "kernel_shape": _ints(kernel),
        "strides": _ints(strides) if strides != [1, 1] else None,
        "pads": _ints([top, left, bottom, right]) if any((top, left, bottom, right)) else None,
    }


def _clamped(node: _Operator, value: SSAValue) -> SSAValue:
    """`value` clamped to the fused activation's bounds, if it has one."""
    low, high = node.clamp()
    if low is None and high is None:
        return value
    return node.emit(qnn.ClampOp.build([value], {"clamp_min": _int(low), "clamp_max": _int(high)}))


def _convert_pool(node: _Operator) -> None:
    x_tensor = node.input_tensor(0)
    x = node.input(0)
    node.same_quantization(x_tensor, "the input")
    result_type = node.output_type()
    properties = _pool_properties(node, x_tensor)
    if node.operator.opcode == "MAX_POOL_2D":
        pooled = node.emit(qnn.MaxPoolOp.build([x], properties, [result_type]))
    else:
        properties["rounding"] = StringAttr("half_away")
        pooled = node.emit(qnn.AveragePoolOp.build([x], properties, [result_type]))
    node.define(_clamped(node, pooled))


def _convert_pad(node: _Operator) -> None:
    x_tensor = node.input_tensor(0)
    paddings = node.input_tensor(1)
    if paddings.data is None:
        raise node.error("the paddings must be a constant")
    pads = np.asarray(paddings.data, dtype=np.int64)
    if pads.shape != (len(x_tensor.shape), 2) or np.any(pads < 0):
        raise node.error(
            f"the paddings must be {len(x_tensor.shape)} x 2 non-negative values, got "
            f"{pads.tolist()}"
        )
    node.same_quantization(x_tensor, "the input")
    x = node.input(0)
    result_type = node.output_type()
    op = qnn.PadOp.build([x], {"pads": _ints([*pads[:, 0], *pads[:, 1]])}, [result_type])
    node.define(node.emit(op))


def _convert_reshape(node: _Operator) -> None:
    """RESHAPE, SQUEEZE, EXPAND_DIMS: the output tensor's (static) shape."""
    x_tensor = node.input_tensor(0)
    node.same_quantization(x_tensor, "the input")
    x = node.input(0)
    result_type = node.output_type()
    if math.prod(x_tensor.shape) != math.prod(node.output.shape):
        raise node.error(f"cannot reshape {list(x_tensor.shape)} to {list(node.output.shape)}")
    node.define(node.emit(nn.ReshapeOp.build([x], {}, [result_type])))


def _convert_concatenation(node: _Operator) -> None:
    output = node.output
    values = []
    for position in range(len(node.operator.inputs)):
        tensor = node.input_tensor(position)
        node.same_quantization(tensor, f"input '{tensor.name}'")
        values.append(node.input(position))
    result_type = node.output_type()
    axis = int(node.option("Axis")) % max(len(output.shape), 1)
    value = node.emit(qnn.ConcatOp.build(values, {"axis": _int(axis)}, [result_type]))
    node.define(_clamped(node, value))


def _convert_softmax(node: _Operator) -> None:
    x_tensor = node.input_tensor(0)
    x = node.input(0)
    result_type = node.output_type()
    beta = np.float32(node.option("Beta"))
    if (
        abs(float(node.scale(node.output)) - 1.0 / 256) > 0.001 / 256
        or node.zero_point(node.output) != -128
    ):
        raise node.error(
            "the output must have scale 1/256 and zero point -128 (LiteRT requires it)"
        )
    # PopulateSoftmaxLookupTable: exp(-input_scale * beta * d), all in float32.
    scale = np.float32(-np.float32(node.scale(x_tensor)) * beta)
    distances = np.arange(256, dtype=np.float32)
    table = _float32_function("exp", (scale * distances).astype(np.float32))
    op = qnn.TFLiteSoftmaxOp.build(
        [x], {"table": DenseArrayBase.from_list(f32, [float(v) for v in table])}, [result_type]
    )
    node.define(node.emit(op))


def _lookup(node: _Operator, function: str, table: list[int]) -> None:
    x = node.input(0)
    result_type = node.output_type()
    op = qnn.LutOp.build(
        [x], {"table": _ints(table), "function": StringAttr(function)}, [result_type]
    )
    node.define(node.emit(op))


def _lut_parameters(node: _Operator) -> tuple[float, int, float, int]:
    x_tensor = node.input_tensor(0)
    node.importer.activation_type(x_tensor)
    node.output_type()
    return (
        node.scale(x_tensor),
        node.zero_point(x_tensor),
        node.scale(node.output),
        node.zero_point(node.output),
    )


def _convert_logistic(node: _Operator) -> None:
    _lookup(node, "sigmoid", float_lut(_logistic, *_lut_parameters(node)))


def _convert_tanh(node: _Operator) -> None:
    _lookup(node, "tanh", float_lut(_tanh, *_lut_parameters(node)))


def _convert_hard_swish(node: _Operator) -> None:
    _lookup(node, "hard_swish", hard_swish_lut(*_lut_parameters(node)))


def _convert_leaky_relu(node: _Operator) -> None:
    input_scale, input_zero, output_scale, output_zero = _lut_parameters(node)
    alpha = float(node.option("Alpha"))
    identity = fixed_point.tflite_multiplier(
        float(np.float64(input_scale) / np.float64(output_scale))
    )
    negative = fixed_point.tflite_multiplier(
        float(np.float64(input_scale) * np.float64(np.float32(alpha)) / np.float64(output_scale))
    )
    stored = np.arange(-128, 128, dtype=np.int64)
    centred = stored - input_zero
    positive = fixed_point.rounding_multiply(centred, *identity, rounding="double_away")
    negative_part = fixed_point.rounding_multiply(centred, *negative, rounding="double_away")
    values = np.where(centred >= 0, positive, negative_part) + output_zero
    _lookup(node, "leaky_relu", [int(v) for v in np.clip(values, -128, 127)])


def _convert_relu(node: _Operator) -> None:
    """RELU, RELU6, RELU_N1_TO_1 (`QuantizedReluX`): a requantize by s_in / s_out
    (divided in float32), clamped, with TFLite's scalar rounding."""
    x_tensor = node.input_tensor(0)
    x = node.input(0)
    result_type = node.output_type()
    activation = {"RELU": "RELU", "RELU6": "RELU6", "RELU_N1_TO_1": "RELU_N1_TO_1"}[
        node.operator.opcode
    ]
    real = float(np.float32(node.scale(x_tensor)) / np.float32(node.scale(node.output)))
    node.define(
        _requantize(node, x, [real], "double_away", node.clamp(activation), result_type, None)
    )


def _split_flat(
    node: _Operator,
    x: SSAValue,
    vector: int,
    result_type: TensorType,
    head: Callable[[SSAValue, TensorType], SSAValue],
    tail: Callable[[SSAValue, TensorType], SSAValue],
) -> SSAValue:
    """The elementwise result of `head` on the first `vector` elements of x (in
    row-major order) and of `tail` on the rest: LiteRT's kernels compute the last
    (size mod their vector width) elements with their scalar code, which may round
    otherwise. Without a tail, `head` of the whole tensor."""
    count = math.prod(result_type.get_shape())
    if vector == count:
        return head(x, result_type)
    if vector == 0:
        return tail(x, result_type)
    x_type = x.type
    assert isinstance(x_type, TensorType)
    flat = node.emit(nn.ReshapeOp.build([x], {}, [TensorType(x_type.get_element_type(), [count])]))
    element = result_type.get_element_type()
    pieces = []
    for start, end, convert in ((0, vector, head), (vector, count, tail)):
        part = node.emit(nn.SliceOp.build([flat], {"starts": _ints([start]), "ends": _ints([end])}))
        pieces.append(convert(part, TensorType(element, [end - start])))
    joined_type = TensorType(element, [count])
    if isinstance(element, UniformQuantizedType):
        joined = node.emit(qnn.ConcatOp.build(pieces, {"axis": _int(0)}, [joined_type]))
    else:
        joined = node.emit(nn.ConcatOp.build(pieces, {"axis": _int(0)}, [joined_type]))
    return node.emit(nn.ReshapeOp.build([joined], {}, [result_type]))


def _float_scalar(node: _Operator, value: np.float32, what: str) -> SSAValue:
    """A float32 scalar constant, located at the operator."""
    return node.importer.integer_constant(
        np.asarray(value, dtype=np.float32), f"{node.name}/{what}"
    )


def _convert_quantize(node: _Operator) -> None:
    x_tensor = node.input_tensor(0)
    x = node.input(0)
    result_type = node.output_type()
    element = result_type.get_element_type()
    assert isinstance(element, UniformQuantizedType)
    if x_tensor.dtype == "float32":
        # LiteRT's vector code: x * (1 / scale) in float32, rounded to nearest even
        # (vcvtnq), plus the zero point, saturated. A qcast to scale 1 rounds exactly
        # so; the storage cast gives the integers the tensor's type.
        reciprocal = np.float32(1.0) / np.float32(node.scale(node.output))
        scaled = node.emit(nn.MulOp.build([x, _float_scalar(node, reciprocal, "reciprocal")]))
        shape = list(result_type.get_shape())
        unit = UniformQuantizedType.make(1.0, node.zero_point(node.output))
        quantized = node.emit(
            quant.QuantizeCastOp.create(operands=[scaled], result_types=[TensorType(unit, shape)])
        )
        stored = node.emit(
            quant.StorageCastOp.create(
                operands=[quantized], result_types=[TensorType(element.storage_type, shape)]
            )
        )
        node.define(
            node.emit(quant.StorageCastOp.create(operands=[stored], result_types=[result_type]))
        )
        return
    real = float(np.float64(node.scale(x_tensor)) / np.float64(node.scale(node.output)))
    count = math.prod(x_tensor.shape)

    def requantize(rounding: str) -> Callable[[SSAValue, TensorType], SSAValue]:
        return lambda part, part_type: _requantize(
            node, part, [real], rounding, (None, None), part_type, None
        )

    # LiteRT's vector code rounds ties up; its scalar tail away from zero.
    vector = count - count % ELEMENTWISE_VECTOR
    node.define(
        _split_flat(
            node, x, vector, result_type, requantize("double_up"), requantize("double_away")
        )
    )


def _convert_dequantize(node: _Operator) -> None:
    x_tensor = node.input_tensor(0)
    x = node.input(0)
    output = node.output
    if output.dtype != "float32":
        raise node.error(f"DEQUANTIZE to {output.dtype}; irc dequantizes to float32")
    element = node.importer.activation_type(x_tensor).get_element_type()
    assert isinstance(element, UniformQuantizedType)
    scale, zero_point = node.scale(x_tensor), node.zero_point(x_tensor)

    def vector(part: SSAValue, part_type: TensorType) -> SSAValue:
        # LiteRT's vector code: float(x) * scale + float(-zero_point * scale), two
        # float32 roundings.
        shape = list(part_type.get_shape())
        stored = node.emit(
            quant.StorageCastOp.create(
                operands=[part], result_types=[TensorType(element.storage_type, shape)]
            )
        )
        floats = node.emit(nn.CastOp.build([stored], {"to": f32}))
        scaled = node.emit(
            nn.MulOp.build([floats, _float_scalar(node, np.float32(scale), "scale")])
        )
        offset = np.float32(-zero_point * np.float64(scale))
        return node.emit(nn.AddOp.build([scaled, _float_scalar(node, offset, "offset")]))

    def scalar(part: SSAValue, part_type: TensorType) -> SSAValue:
        # Its scalar tail: float(double(scale) * (x - zero_point)), one rounding.
        return node.emit(quant.DequantizeCastOp.create(operands=[part], result_types=[part_type]))

    count = math.prod(x_tensor.shape)
    result_type = TensorType(f32, list(output.shape))
    node.define(
        _split_flat(node, x, count - count % DEQUANTIZE_VECTOR, result_type, vector, scalar)
    )


CONVERTERS: dict[str, Callable[[_Operator], None]] = {
    "CONV_2D": _convert_conv,
    "DEPTHWISE_CONV_2D": _convert_conv,
    "FULLY_CONNECTED": _convert_fully_connected,
    "ADD": _convert_add_sub,
    "SUB": _convert_add_sub,
    "MUL": _convert_mul,
    "MEAN": _convert_mean,
    "AVERAGE_POOL_2D": _convert_pool,
    "MAX_POOL_2D": _convert_pool,
    "PAD": _convert_pad,
    "RESHAPE": _convert_reshape,
    "SQUEEZE": _convert_reshape,
    "EXPAND_DIMS": _convert_reshape,
    "CONCATENATION": _convert_concatenation,
    "SOFTMAX": _convert_softmax,
    "LOGISTIC": _convert_logistic,
    "TANH": _convert_tanh,
    "HARD_SWISH": _convert_hard_swish,
    "LEAKY_RELU": _convert_leaky_relu,
    "RELU": _convert_relu,
    "RELU6": _convert_relu,
    "RELU_N1_TO_1": _convert_relu,
    "QUANTIZE": _convert_quantize,
    "DEQUANTIZE": _convert_dequantize,
}
"""The operators irc imports, by their schema name."""
