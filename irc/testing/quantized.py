"""int8 versions of the light models: onnxruntime's quantize_static, and irc's own flow.

Issue 6 checks irc's integer results against onnxruntime's on QDQ models that
onnxruntime's `quantize_static` makes, and irc's own int8 accuracy against
onnxruntime's with the same calibration data. This module makes both:

    light = ort_quantized_light_model("resnet50", directory)     # QDQ, int8/int8
    expected = run_quantized_onnxruntime(light.quantized_path, light.inputs)
    module = import_model(light.quantized_path)                  # then lower-to-qnn
    own = quantize_with_irc(light.float_model, light.calibration)

How onnxruntime quantizes (`quantize_with_onnxruntime`), as its documentation
recommends for a CNN:

1. the float model is converted to opset 13 (the light models are opset 9, which has no
   QuantizeLinear; 13 is the first with per-axis scales), then pre-processed by
   `quant_pre_process` (shape inference and onnxruntime's basic graph optimizations:
   batch norms folded into convolutions, constants folded, dropouts removed);
2. `quantize_static` in the QDQ format (or QOperator), weights per channel, symmetric
   int8 of 7 bits (`reduce_range`, [-64, 64]: see below), activations int8 (or uint8),
   its default MinMax calibration over a `CalibrationDataReader` of the calibration
   samples.

Exact kernels. onnxruntime runs a QDQ model on x86-64 with its u8s8 kernels (uint8
activations times int8 weights; int8 activations are first moved to uint8 by adding
128, since its QDQ fusions keep int8 activations only on ARM). Without AVX-VNNI these
kernels (MLAS's AVX2 and AVX-512 ones) multiply with VPMADDUBSW, which adds each pair
of products a1*w1 + a2*w2 in int16 with saturation, so that with 8-bit weights
(2 * 255 * 127 = 64770) their results depend on the CPU; with AVX-VNNI, AMX or in
MLAS's portable kernel the sums are exact. With 7-bit weights no pair sum can exceed
2 * 255 * 64 = 32640 < 2^15, and every x86 CPU computes the same exact integers, as
onnxruntime's quantization documentation recommends for CPUs without VNNI. (Its s8s8
kernels are exact everywhere, but MLAS has a fast one only with AVX-VNNI-INT8: the
portable one makes VGG-19 seven times slower.) `integer_kernels` lists the integer
kernels of the graph onnxruntime runs with the largest pair sum each can form, for
the tests to check.

The calibration samples are `random_inputs(model, seed=CALIBRATION_SEED + i)` for
i < CALIBRATION_SAMPLES, the evaluation inputs `random_inputs(model, seed=EVALUATION_SEED
+ i)` for i < EVALUATION_SAMPLES. irc's flow (`quantize_with_irc`) calibrates on the
same samples.

Quantizing VGG-19 takes many seconds, so `ort_quantized_light_model` keeps the
quantized models in a directory (the test suite uses build/quantized-models/), under
names that carry a fingerprint of everything they depend on: the float model's bytes,
the settings, and the versions of onnx and onnxruntime. A file is written under a
temporary name and renamed, so that concurrent test workers never read half a file.

onnx and onnxruntime are imported only when called.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from irc.importers.onnx import model_data_bytes
from irc.importers.reference import session_source
from irc.testing.models import light_model, materialize_light_model
from irc.testing.reference import random_inputs

if TYPE_CHECKING:
    import onnx
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.interpreter import PythonValues
    from xdsl.ir import Operation

OPSET = 13
"""The opset the float models are converted to before onnxruntime quantizes them."""

MATERIALIZE_SEED = 0
"""The seed of the light models' random weights (as in tests/test_models.py)."""

CALIBRATION_SEED = 100
CALIBRATION_SAMPLES = 4
"""Calibration sample i is `random_inputs(model, seed=CALIBRATION_SEED + i)`."""

EVALUATION_SEED = 0
EVALUATION_SAMPLES = 4
"""Evaluation input i is `random_inputs(model, seed=EVALUATION_SEED + i)`."""

REDUCE_RANGE = True
"""`quantize_static`'s `reduce_range`: 7-bit weights, for which onnxruntime's u8s8
kernels are exact on every x86 CPU (module docstring, "Exact kernels")."""

PAIR_SUM_LIMIT = 2**15 - 1
"""The largest pair sum a1*w1 + a2*w2 that VPMADDUBSW's int16 holds without saturating."""

Activations = Literal["int8", "uint8"]
QuantFormat = Literal["qdq", "qoperator"]


# --------------------------------------------------------------------------------------
# Inputs


def calibration_samples(
    model: onnx.ModelProto, count: int = CALIBRATION_SAMPLES, seed: int = CALIBRATION_SEED
) -> list[dict[str, np.ndarray]]:
    """`count` seeded random samples for calibrating `model` (seeds seed, seed + 1, ...)."""
    return [random_inputs(model, seed=seed + index) for index in range(count)]


def _data_reader(samples: Sequence[Mapping[str, np.ndarray]]) -> object:
    """An onnxruntime `CalibrationDataReader` that yields `samples` once, in order."""
    from onnxruntime.quantization import CalibrationDataReader

    class SampleReader(CalibrationDataReader):
        def __init__(self) -> None:
            self.remaining = iter(samples)

        def get_next(self) -> dict[str, np.ndarray] | None:
            sample = next(self.remaining, None)
            return None if sample is None else dict(sample)

    return SampleReader()


# --------------------------------------------------------------------------------------
# onnxruntime's quantization


def prepare_for_onnxruntime(model: onnx.ModelProto | Path, path: Path) -> Path:
    """Write `model` (a proto, or the path of one, which is then not held while
    onnxruntime pre-processes it) converted to OPSET and pre-processed by
    onnxruntime's `quant_pre_process` to `path` (step 1 of the module docstring)."""
    from onnxruntime.quantization.shape_inference import quant_pre_process

    converted_path = path.with_suffix(".opset.onnx")
    _write_converted(model, converted_path)
    # Symbolic shape inference needs sympy, and the light models' shapes are static.
    quant_pre_process(str(converted_path), str(path), skip_symbolic_shape=True)
    converted_path.unlink()
    return path


def _write_converted(model: onnx.ModelProto | Path, path: Path) -> None:
    """`model` converted to OPSET, written to `path`. The converter works on the model
    without its weights (external data in a file beside it, loaded back after):
    converting the whole proto copied ZFNet-512's 350 MB of weights through C++ several
    times, 2.1 GB in all."""
    import onnx

    from irc.importers.reference import with_external_weights

    if isinstance(model, Path):
        model = onnx.load(str(model))
    weights = path.with_suffix(".weights")
    converted = onnx.version_converter.convert_version(with_external_weights(model, weights), OPSET)
    del model
    onnx.external_data_helper.load_external_data_for_model(converted, str(path.parent))
    weights.unlink()
    onnx.save(converted, str(path))


def quantize_with_onnxruntime(
    float_path: Path,
    samples: Sequence[Mapping[str, np.ndarray]],
    path: Path,
    activations: Activations = "int8",
    quant_format: QuantFormat = "qdq",
    reduce_range: bool = REDUCE_RANGE,
) -> Path:
    """Quantize the float model at `float_path` with onnxruntime's `quantize_static`
    (MinMax calibration on `samples`, int8 per-channel symmetric weights, of 7 bits
    with `reduce_range`) into `path`."""
    from onnxruntime import quantization

    activation_type = (
        quantization.QuantType.QInt8 if activations == "int8" else quantization.QuantType.QUInt8
    )
    fmt = (
        quantization.QuantFormat.QDQ
        if quant_format == "qdq"
        else quantization.QuantFormat.QOperator
    )
    # quantize_static warns that the model was not pre-processed (it was, by
    # prepare_for_onnxruntime: it looks for metadata that only a path through its own
    # command line writes) and logs every tensor it cannot quantize.
    logger = logging.getLogger()
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        quantization.quantize_static(
            str(float_path),
            str(path),
            _data_reader(samples),
            quant_format=fmt,
            per_channel=True,
            activation_type=activation_type,
            weight_type=quantization.QuantType.QInt8,
            reduce_range=reduce_range,
            calibrate_method=quantization.CalibrationMethod.MinMax,
        )
    finally:
        logger.setLevel(level)
    return path


MATERIALIZED_CACHE_BYTES = 400 * 2**20
"""How much of the materialized light models `materialized_light_model` keeps: the six
small ones together (220 MB), or one of AlexNet and ZFNet-512 (250 MB each), so that
a test process stays under 2 GB however the tests are ordered (VGG-19, 548 MB, is
not tested here: see HEAVY_LIGHT_MODELS)."""

_materialized: dict[str, onnx.ModelProto] = {}


def materialized_light_model(name: str) -> onnx.ModelProto:
    """The light model `name` with the seeded random weights of MATERIALIZE_SEED
    (cached within MATERIALIZED_CACHE_BYTES, the oldest dropped first: VGG-19 takes
    seconds to make). Callers must not modify it."""
    model = _materialized.pop(name, None)
    if model is None:
        model = materialize_light_model(light_model(name), seed=MATERIALIZE_SEED)
    _materialized[name] = model  # the newest last
    while sum(map(model_data_bytes, _materialized.values())) > MATERIALIZED_CACHE_BYTES:
        if len(_materialized) == 1:
            break
        del _materialized[next(iter(_materialized))]
    return model


@dataclass(frozen=True)
class OrtQuantizedModel:
    """A light model and its onnxruntime-quantized version."""

    name: str
    float_model: onnx.ModelProto
    """The materialized float model (opset 9, as shipped)."""
    quantized_path: Path
    calibration: list[dict[str, np.ndarray]]
    inputs: list[dict[str, np.ndarray]]
    """The evaluation inputs."""


@cache
def _model_digest(name: str) -> str:
    """A digest of the materialized light model `name` (cached: VGG-19 has 548 MB)."""
    return hashlib.sha256(materialized_light_model(name).SerializeToString()).hexdigest()


def _fingerprint(name: str, *settings: object) -> str:
    import onnx
    import onnxruntime

    context = (
        onnx.__version__,
        onnxruntime.__version__,
        OPSET,
        CALIBRATION_SEED,
        CALIBRATION_SAMPLES,
        ("reduce_range", REDUCE_RANGE),
    )
    digest = hashlib.sha256(_model_digest(name).encode())
    digest.update(repr((context, settings)).encode())
    return digest.hexdigest()[:12]


def ort_quantized_light_model(
    name: str,
    directory: Path,
    activations: Activations = "int8",
    quant_format: QuantFormat = "qdq",
) -> OrtQuantizedModel:
    """The light model `name` quantized by onnxruntime, kept in `directory` (see the
    module docstring); older versions of the same file are removed."""
    stem = name.removeprefix("light_")
    float_model = materialized_light_model(stem)
    samples = calibration_samples(float_model)
    kind = f"{stem}.{quant_format}.{activations}"
    quantized_path = directory / f"{kind}.{_fingerprint(stem, kind)}.onnx"
    if not quantized_path.is_file():
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=directory, prefix=".work-") as work:
            written = _quantize_in_own_process(
                float_model, samples, Path(work), activations, quant_format
            )
            os.replace(written, quantized_path)
        for stale in directory.glob(f"{kind}.*.onnx"):
            if stale != quantized_path:
                stale.unlink(missing_ok=True)
    inputs = [
        random_inputs(float_model, seed=EVALUATION_SEED + index)
        for index in range(EVALUATION_SAMPLES)
    ]
    return OrtQuantizedModel(stem, float_model, quantized_path, samples, inputs)


def _quantize_in_own_process(
    float_model: onnx.ModelProto,
    samples: Sequence[Mapping[str, np.ndarray]],
    work: Path,
    activations: Activations,
    quant_format: QuantFormat,
) -> Path:
    """`prepare_for_onnxruntime` and `quantize_with_onnxruntime` of `float_model`, run
    in a new process (`python -m irc.testing.quantized`) that `work` gives the model
    and samples to: onnxruntime's quantizer holds several copies of the weights (1.1
    GB for ZFNet-512), which a test process on top of its own would take past 2 GB.
    Returns the quantized model's path in `work`."""
    import subprocess
    import sys

    import onnx

    onnx.save(float_model, str(work / "materialized.onnx"))
    arrays = {
        f"{index}/{name}": array
        for index, sample in enumerate(samples)
        for name, array in sample.items()
    }
    np.savez(work / "samples.npz", **arrays)  # type: ignore[arg-type]
    command = [sys.executable, "-m", "irc.testing.quantized", str(work), activations, quant_format]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"onnxruntime's quantization failed:\n{result.stderr[-4000:]}")
    return work / "quantized.onnx"


def _quantize_main(argv: Sequence[str]) -> None:
    """The child of `_quantize_in_own_process`: argv is (work, activations, format)."""

    work, activations, quant_format = Path(argv[0]), argv[1], argv[2]
    with np.load(work / "samples.npz") as stored:
        samples: list[dict[str, np.ndarray]] = []
        for key in stored.files:
            index, name = key.split("/", 1)
            while len(samples) <= int(index):
                samples.append({})
            samples[int(index)][name] = stored[key]
    prepared = prepare_for_onnxruntime(work / "materialized.onnx", work / "float.onnx")
    quantize_with_onnxruntime(
        prepared,
        samples,
        work / "quantized.onnx",
        activations,  # type: ignore[arg-type]
        quant_format,  # type: ignore[arg-type]
    )


def _onnxruntime_session(
    model: onnx.ModelProto | Path, optimize: bool, optimized_path: Path | None = None
) -> object:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = (
        onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        if optimize
        else onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    )
    options.intra_op_num_threads = 2
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    if optimized_path is not None:
        options.optimized_model_filepath = str(optimized_path)
    # A large proto reaches onnxruntime as a file with its weights as external data:
    # serialized, ZFNet-512's 350 MB were held three times while the session loaded.
    with session_source(model) as source:
        return onnxruntime.InferenceSession(
            source, sess_options=options, providers=["CPUExecutionProvider"]
        )


def _run_session(session: object, samples: Sequence[Mapping[str, np.ndarray]]) -> list[dict]:
    names = [output.name for output in session.get_outputs()]  # type: ignore[attr-defined]
    return [
        dict(zip(names, session.run(names, dict(sample)), strict=True))  # type: ignore[attr-defined]
        for sample in samples
    ]


def run_quantized_onnxruntime(
    model: onnx.ModelProto | Path,
    samples: Sequence[Mapping[str, np.ndarray]],
    optimized_path: Path | None = None,
) -> list[dict[str, np.ndarray]]:
    """Run a quantized model on each sample in onnxruntime with its default graph
    optimizations, which turn QDQ groups into its integer kernels (QLinearConv, QGemm,
    ...); every output by name. `optimized_path` receives the graph it actually runs."""
    return _run_session(_onnxruntime_session(model, True, optimized_path), samples)


def run_plain_onnxruntime(
    model: onnx.ModelProto | Path, samples: Sequence[Mapping[str, np.ndarray]]
) -> list[dict[str, np.ndarray]]:
    """Run a model on each sample in onnxruntime without graph optimizations: every
    node with its own kernel, as `irc.importers.reference.run_onnxruntime` does (a QDQ
    model's ops in float between dequantize and quantize); one session for all."""
    return _run_session(_onnxruntime_session(model, False), samples)


def operator_counts(model: onnx.ModelProto) -> dict[str, int]:
    """How many nodes of each op type a graph has (`domain:op` outside ONNX's domain),
    most frequent first."""
    counts: dict[str, int] = {}
    for node in model.graph.node:
        key = (
            f"{node.domain}:{node.op_type}" if node.domain not in ("", "ai.onnx") else node.op_type
        )
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


INTEGER_KERNEL_OPERANDS = {
    "QLinearConv": (0, 2, 3),
    "QGemm": (0, 2, 3),
    "QLinearMatMul": (0, 2, 3),
    "ConvInteger": (0, 2, 1),
    "MatMulInteger": (0, 2, 1),
}
"""onnxruntime's integer matrix kernels: the positions of the activation, its zero point
and the weight among a node's inputs."""


@dataclass(frozen=True)
class IntegerKernel:
    """An integer matrix kernel of the graph onnxruntime runs (`INTEGER_KERNEL_OPERANDS`)."""

    node: str
    op_type: str
    activations: str
    """The activation's integer type, "uint8" or "int8" ("uint8" when the graph does not
    say: the case to check)."""
    weights: str
    """The weight's integer type, or "variable" when it is not an initializer."""
    largest_pair_sum: int | None
    """For uint8 activations and int8 weights, the largest |a1*w1 + a2*w2| that
    VPMADDUBSW can form, whichever two weights the kernel pairs: 2 * 255 * max |w|
    (None when the weight's values are unknown: not an initializer, or of another
    type); 0 for the other type pairs, whose kernels widen to 16 bits before
    multiplying or sum exactly in 32 bits on every x86 CPU."""

    @property
    def exact_on_every_x86_cpu(self) -> bool:
        """Whether every x86 CPU computes this kernel's sums exactly."""
        return self.largest_pair_sum is not None and self.largest_pair_sum <= PAIR_SUM_LIMIT


def integer_kernels(model: onnx.ModelProto) -> list[IntegerKernel]:
    """The integer matrix kernels of `model` (the graph onnxruntime runs: see
    `run_quantized_onnxruntime`'s `optimized_path`), in graph order."""
    from onnx import TensorProto, numpy_helper

    initializers = {tensor.name: tensor for tensor in model.graph.initializer}
    type_names = {TensorProto.UINT8: "uint8", TensorProto.INT8: "int8"}
    kernels = []
    for node in model.graph.node:
        operands = INTEGER_KERNEL_OPERANDS.get(node.op_type)
        if operands is None:
            continue
        _, zero_point_index, weight_index = operands
        zero_point = node.input[zero_point_index] if len(node.input) > zero_point_index else ""
        activations = (
            type_names.get(initializers[zero_point].data_type, "uint8")
            if zero_point in initializers
            else "uint8"
        )
        weight = initializers.get(node.input[weight_index])
        weights = "variable" if weight is None else type_names.get(weight.data_type, "other")
        largest: int | None = 0
        if activations == "uint8" and weights != "uint8":
            largest = None  # a weight of unknown values
            if weight is not None and weights == "int8":
                # max|w| from the int8 extremes: no int64 copy (604 MB on ZFNet-512)
                data = numpy_helper.to_array(weight)
                peak = max(-int(data.min(initial=0)), int(data.max(initial=0)))
                largest = 2 * 255 * peak
        kernels.append(IntegerKernel(node.name, node.op_type, activations, weights, largest))
    return kernels


# --------------------------------------------------------------------------------------
# Comparing quantized outputs


@dataclass(frozen=True)
class OutputQuantization:
    """The scale and zero point of a graph output computed by a DequantizeLinear."""

    scale: float
    zero_point: int

    def stored(self, values: np.ndarray) -> np.ndarray:
        """The integers a dequantized output holds: round(y / scale) + zero point (exact:
        y is scale * (q - zero point) in float32, for |q - zero point| < 2^16)."""
        steps = np.rint(np.asarray(values, np.float32) / np.float32(self.scale))
        return steps.astype(np.int64) + self.zero_point


def output_quantization(model: onnx.ModelProto) -> dict[str, OutputQuantization]:
    """Each graph output that a per-tensor DequantizeLinear computes, with its
    quantization (scale and zero point initializers)."""
    from onnx import numpy_helper

    constants = {tensor.name: numpy_helper.to_array(tensor) for tensor in model.graph.initializer}
    producers = {output: node for node in model.graph.node for output in node.output}
    found = {}
    for output in model.graph.output:
        node = producers.get(output.name)
        if node is None or node.op_type != "DequantizeLinear" or node.input[1] not in constants:
            continue
        scale = constants[node.input[1]]
        zero_point = constants.get(node.input[2]) if len(node.input) > 2 else None
        if scale.size != 1:
            continue
        found[output.name] = OutputQuantization(
            float(scale.reshape(-1)[0]),
            0 if zero_point is None else int(np.asarray(zero_point).reshape(-1)[0]),
        )
    return found


def with_float_outputs(model: onnx.ModelProto, names: Sequence[str]) -> onnx.ModelProto:
    """A copy of `model` that also outputs the float32 tensors `names` (their shapes
    left to onnxruntime: inferring them would copy every weight of the model)."""
    from onnx import TensorProto, helper

    extended = type(model)()
    extended.CopyFrom(model)
    extended.graph.output.extend(
        helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in names
    )
    return extended


@dataclass(frozen=True)
class QuantizedTensor:
    """A quantized activation of a QDQ model: a QuantizeLinear's output."""

    name: str
    dequantized: str
    """A DequantizeLinear output of it: what onnxruntime can return without giving up
    fusing the QuantizeLinear into the kernel before it (a QuantizeLinear whose output
    is a graph output stays a separate node)."""
    quantization: OutputQuantization
    layers: tuple[str, ...]
    """The ONNX nodes whose names irc's ops computing the tensor carry: the
    QuantizeLinear, and the node that computes its input."""


def quantized_tensors(model: onnx.ModelProto) -> list[QuantizedTensor]:
    """Every per-tensor quantized activation of a QDQ model that a DequantizeLinear
    reads, in graph order."""
    from onnx import numpy_helper

    constants = {tensor.name: numpy_helper.to_array(tensor) for tensor in model.graph.initializer}
    nodes = list(model.graph.node)
    # Node names as the importer gives them (irc.importers.onnx names unnamed nodes so).
    names = [node.name or f"{node.op_type}_{index}" for index, node in enumerate(nodes)]
    producers = {output: index for index, node in enumerate(nodes) for output in node.output}
    dequantized: dict[str, str] = {}
    for node in nodes:
        if node.op_type == "DequantizeLinear":
            dequantized.setdefault(node.input[0], node.output[0])
    tensors = []
    for index, node in enumerate(nodes):
        if node.op_type != "QuantizeLinear" or node.output[0] not in dequantized:
            continue
        scale = constants.get(node.input[1])
        if scale is None or scale.size != 1:
            continue
        zero_point = constants.get(node.input[2]) if len(node.input) > 2 else None
        layers = [names[index]]
        if node.input[0] in producers:
            layers.append(names[producers[node.input[0]]])
        quantization = OutputQuantization(
            float(scale.reshape(-1)[0]),
            0 if zero_point is None else int(np.asarray(zero_point).reshape(-1)[0]),
        )
        tensors.append(
            QuantizedTensor(
                node.output[0], dequantized[node.output[0]], quantization, tuple(layers)
            )
        )
    return tensors


@dataclass(frozen=True)
class LayerAgreement:
    """How irc's integers of one quantized tensor compare with onnxruntime's."""

    tensor: str
    elements: int
    within_one: int
    exact: int
    max_difference: int

    @property
    def fraction_within_one(self) -> float:
        return self.within_one / self.elements if self.elements else 1.0


def compare_layers(
    module: ModuleOp,
    tensors: Sequence[QuantizedTensor],
    reference: Mapping[str, np.ndarray],
    inputs: Mapping[str, np.ndarray],
    teacher_forcing: bool = True,
) -> list[LayerAgreement]:
    """Run an imported and lowered QDQ model layer by layer against onnxruntime.

    `reference` holds onnxruntime's values of the tensors' `dequantized` outputs. Each
    quantized tensor irc computes is compared with onnxruntime's, then replaced by it
    (teacher forcing): every layer computes on onnxruntime's integers, so that a
    difference shows where it arises instead of spreading through the layers after it.
    Without `teacher_forcing`, irc runs on its own values and the comparison shows how
    the differences spread.
    """
    from xdsl.interpreter import Interpreter

    from irc.diagnostics import Location
    from irc.dialects import quant
    from irc.interp import function_signature
    from irc.quantize.calibration import bind_sample, entry_function, run_with_listener

    expected: dict[str, tuple[QuantizedTensor, np.ndarray]] = {}
    for tensor in tensors:
        stored = tensor.quantization.stored(reference[tensor.dequantized])
        for layer in tensor.layers:
            expected.setdefault(layer, (tensor, stored))
    function = entry_function(module)
    # The last op of a layer whose result is quantized and of the tensor's shape
    # computes the tensor (a conv's requantize, not its accumulator).
    final_ops = {}
    for op in function.walk():
        name = Location.of(op).name
        if name not in expected or len(op.results) != 1:
            continue
        result_type = op.results[0].type
        if quant.quantized_element(result_type) is None:
            continue
        if tuple(result_type.get_shape()) == expected[name][1].shape:  # type: ignore[attr-defined]
            final_ops[name] = op
    agreements: dict[str, LayerAgreement] = {}

    class TeacherForcing(Interpreter.Listener):
        def did_interpret_op(self, op: Operation, results: PythonValues) -> None:
            name = Location.of(op).name
            if name is None or final_ops.get(name) is not op:
                return
            tensor, stored = expected[name]
            ours = results[0]
            difference = np.abs(ours.astype(np.int64) - stored)
            agreements[tensor.name] = LayerAgreement(
                tensor.name,
                int(difference.size),
                int(np.count_nonzero(difference <= 1)),
                int(np.count_nonzero(difference == 0)),
                int(difference.max(initial=0)),
            )
            if teacher_forcing and ours.flags.writeable and ours.base is None:
                np.copyto(ours, stored.astype(ours.dtype))

    arguments = bind_sample(inputs, function_signature(module)[0])
    run_with_listener(module, function, arguments, TeacherForcing())
    return [agreements[tensor.name] for tensor in tensors if tensor.name in agreements]


def cosine_similarity(a: np.ndarray, b: np.ndarray) -> float:
    """cos(a, b) of the flattened arrays, in float64 (1.0 for two zero arrays)."""
    x = np.asarray(a, np.float64).reshape(-1)
    y = np.asarray(b, np.float64).reshape(-1)
    norms = float(np.linalg.norm(x) * np.linalg.norm(y))
    if norms == 0.0:
        return 1.0 if not x.any() and not y.any() else 0.0
    return float(np.dot(x, y) / norms)


# --------------------------------------------------------------------------------------
# irc's own int8 flow


IRC_OBSERVER = "percentile"
"""The observer of irc's flow in the comparisons with onnxruntime: `irc-quantize
--observer percentile` (99.99%). On the nine light models it beats onnxruntime's
min-max on all nine, where irc's own min-max is behind on ResNet-50 (see
docs/quantization.md, "Against onnxruntime")."""


def quantize_with_irc(
    float_model: onnx.ModelProto,
    samples: Sequence[Mapping[str, np.ndarray]],
    activations: Activations = "int8",
    observer: str = IRC_OBSERVER,
) -> ModuleOp:
    """irc's int8 version of a float model, as `irc-quantize --observer OBSERVER` makes
    it: import, the graph optimizations, `prepare_for_calibration`, calibration on
    `samples`, `quantize` (with bias correction), `lower-to-qnn`.

    As `irc-compile` does (`RELEASING_PASSES`), memory is released after the stages
    that replace weights: the ops they erase hold the old weights in reference cycles
    (an op and its results) that only a full collection frees: until one ran, the
    302 MB gemm weight of ZFNet-512 that graph-opt permutes stayed through calibration
    and quantization, and the float weights that quantize replaces through lowering."""
    from irc.diagnostics import collect_diagnostics
    from irc.driver.pipeline import GRAPH_OPT
    from irc.importers.onnx import import_model
    from irc.ir.context import make_context
    from irc.ir.io import verify_module
    from irc.passes import parse_pipeline
    from irc.quantize.calibration import calibrate
    from irc.quantize.qdq import QuantizeConfig, prepare_for_calibration, quantize_module
    from irc.resources import release_memory
    from irc.transforms.lower_to_qnn import lower_module

    module = import_model(float_model)
    with collect_diagnostics():  # the passes' remarks
        for module_pass in parse_pipeline(GRAPH_OPT):
            module_pass.apply(make_context(), module)
        release_memory()
        prepare_for_calibration(module)
        stats = calibrate(module, samples, observer, progress=False)
        quantize_module(module, stats, QuantizeConfig(activations=activations))
        release_memory()
        lower_module(module, None)
        release_memory()
    verify_module(module)
    return module


if __name__ == "__main__":
    import sys

    _quantize_main(sys.argv[1:])
