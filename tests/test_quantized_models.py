"""Issue 6's acceptance tests against onnxruntime, on the nine light models in int8.

The light models get seeded random weights (`materialize_light_model`); onnxruntime's
`quantize_static` quantizes them (irc/testing/quantized.py: opset 13, its
`quant_pre_process`, QDQ format, per-channel symmetric int8 weights of 7 bits
(`reduce_range`), MinMax calibration on CALIBRATION_SAMPLES seeded random inputs),
once with int8 and once with uint8 activations. The QDQ models are kept in
build/quantized-models/ between runs.

Why 7-bit weights: on x86-64 onnxruntime runs every fused convolution and gemm with
its u8s8 kernels (int8 activations are moved to uint8 by adding 128 first). Without
AVX-VNNI (AVX2, AVX-512 without VNNI) they multiply with VPMADDUBSW, which adds each
pair of products a1*w1 + a2*w2 in int16 with saturation: with 8-bit weights a pair
reaches 2 * 255 * 127 = 64770, and the expected integers would depend on the CPU that
runs the suite (on such a CPU 9 of the uint8 layer comparisons failed, up to 53 steps
off). With |w| <= 64 a pair stays within 2 * 255 * 64 = 32640 < 2^15, so every x86
CPU, with or without VNNI, computes the exact sums. (c) checks that this holds for
every model compared, and how onnxruntime behaves on either side of the bound.

(a) irc's integer results against onnxruntime's. irc imports the QDQ model, lowers it
    with `lower-to-qnn` and runs its integer interpreter; onnxruntime runs it with its
    default graph optimizations, which fuse each DequantizeLinear -> op ->
    QuantizeLinear group into one of its integer kernels. What onnxruntime 1.32 runs
    on x86-64: with uint8 activations, every convolution as QLinearConv, the Gemm as
    QGemm, concat, pooling, add and mul as QLinearConcat, QLinearAveragePool,
    QLinearGlobalAveragePool, QLinearAdd, QLinearMul, the softmax as QLinearSoftmax;
    MaxPool, Reshape and Transpose on the integers; LRN, batch norms that follow a
    concat (DenseNet) and ResNet's and ShuffleNet's Sum in float between dequantize
    and quantize. With int8 activations its s8->u8 rewriting leaves a QDQ group
    unfused wherever the integers of its input and output end up in different types:
    about a third of the convolutions of ResNet-50, ShuffleNet and Inception v1/v2 and
    most of SqueezeNet's then run as float convolutions between dequantize and quantize.

    Both sides are compared as integers: a tensor that a DequantizeLinear computes is
    turned back into the integers it dequantized (round(y / scale) + zero point, exact).

    `test_layers_and_outputs_match_onnxruntime` imports and lowers each QDQ model once
    and checks both:

    - Layer by layer (`assert_layers_match`): every quantized activation of the model,
      computed by irc from onnxruntime's own integers of the layer's inputs (teacher
      forcing: each tensor is compared, then replaced by onnxruntime's), must be
      within one step of onnxruntime's on at least 99.9% of its elements. This is
      where irc's integer ops and onnxruntime's kernels are compared; the differences
      are roundings of near ties (irc rounds the exact fixed-point product, onnxruntime
      a float32 product, both half to even).
    - End to end (`assert_outputs_match`): the model's outputs over EVALUATION_SAMPLES
      inputs, 99.9% within one step. On deep networks with random weights a one-step
      difference in an early layer spreads through every later one, so that two
      correct int8 executions differ by several steps at the output: onnxruntime's
      own two executions of the same QDQ model (its integer kernels, and every node as
      written in float) agree on 44% of DenseNet-121's outputs. Below 99.9%, irc's
      share of outputs more than one step from onnxruntime's kernels may be at most
      SPREAD_FACTOR times that of onnxruntime's float execution plus SPREAD_SLACK: a
      systematic error (a wrong zero point, rounding rule or fused activation) would
      be far above it.

(b) Accuracy (`test_int8_accuracy_is_at_least_onnxruntimes`): irc's own int8 model
    (`quantize_with_irc`: graph-opt, percentile calibration on the same samples,
    quantize with bias correction, lower-to-qnn) must have an output cosine
    similarity with the float model at least as high as onnxruntime's int8 model
    (int8 activations, its min-max calibration), averaged over ACCURACY_SAMPLES
    inputs (docs/quantization.md lists the measured means and their noise). Its
    onnxruntime model has the 7-bit weights of (a), as onnxruntime recommends for CPUs
    without VNNI: its 8-bit model would also run u8s8 kernels, whose results (and so
    the bar irc must clear) would depend on the CPU.

(c) The kernels (a) and (b) compare against are exact on every x86 CPU.

    - `test_onnxruntime_kernels_are_exact_on_every_x86_cpu`: in the graph onnxruntime
      actually runs (after its fusions), every integer matrix kernel
      (`integer_kernels`: QLinearConv, QGemm, QLinearMatMul, ConvInteger,
      MatMulInteger) with uint8 activations and int8 weights has constant weights
      whose largest pair sum 2 * 255 * max |w| fits int16 (PAIR_SUM_LIMIT). Other type
      pairs are exact on every x86 CPU (u8u8 widens to 16 bits before multiplying,
      s8s8 and s8u8 run MLAS's portable kernel or AVX-VNNI-INT8's exact one). It does
      not depend on the CPU: it fails on 8-bit weights on any machine.
    - `test_onnxruntime_u8s8_kernels_saturate_only_pair_sums_beyond_int16`: a QDQ
      convolution whose pairs sum to 2 * 255 * |w| (or, with int8 activations,
      2 * (127 + 128) * |w|) is exact for |w| = 64 on any CPU, and for |w| = 65 and
      127 either exact (VNNI) or off by exactly what saturating each pair gives, which
      is what the static check assumes of onnxruntime.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import ModuleOp

from irc.diagnostics import collect_diagnostics
from irc.importers.onnx import import_model
from irc.interp import run_function
from irc.ir.io import verify_module
from irc.testing.models import light_models
from irc.testing.quantized import (
    PAIR_SUM_LIMIT,
    OrtQuantizedModel,
    OutputQuantization,
    compare_layers,
    cosine_similarity,
    integer_kernels,
    ort_quantized_light_model,
    output_quantization,
    quantize_with_irc,
    quantized_tensors,
    run_plain_onnxruntime,
    run_quantized_onnxruntime,
    with_float_outputs,
)
from irc.testing.reference import random_inputs
from irc.transforms.lower_to_qnn import lower_module

REPO = Path(__file__).resolve().parents[1]
MODEL_DIRECTORY = REPO / "build" / "quantized-models"

MODELS = [path.stem.removeprefix("light_") for path in light_models(heavy=False)]
ACTIVATIONS = ["int8", "uint8"]

MIN_WITHIN_ONE_STEP = 0.999
"""Issue 6: irc's integers within one step of onnxruntime's on 99.9% of elements."""

SPREAD_FACTOR = 3
SPREAD_SLACK = 0.001
"""End to end below MIN_WITHIN_ONE_STEP: irc's share of outputs more than one step
from onnxruntime's kernels may be at most SPREAD_FACTOR times that of onnxruntime's
own float execution, plus SPREAD_SLACK (4 of 4000 outputs)."""

ACCURACY_SAMPLES = 16
"""Inputs the int8 accuracies are compared on (seeds ACCURACY_SEED + i)."""
ACCURACY_SEED = 1000

INTEGER_OPS = ("nn.conv", "nn.gemm", "nn.matmul")
"""Ops that must have become qnn ops for a comparison to be about integer arithmetic."""


def imported_and_lowered(path: Path) -> ModuleOp:
    """The quantized model imported and lowered to qnn."""
    module = import_model(path)
    with collect_diagnostics():  # lower-to-qnn's remarks
        lower_module(module, None)
    verify_module(module)
    left = [op.name for op in module.walk() if op.name in INTEGER_OPS]
    assert not left, f"lower-to-qnn left {left} in float"
    return module


def agreement(
    ours: list[dict[str, np.ndarray]],
    theirs: list[dict[str, np.ndarray]],
    quantizations: dict[str, OutputQuantization],
) -> float:
    """The fraction of the quantized outputs' integers (over all samples) on which
    two runs are within one step."""
    close, total = 0, 0
    for our_outputs, their_outputs in zip(ours, theirs, strict=True):
        for output, quantization in quantizations.items():
            difference = quantization.stored(our_outputs[output]) - quantization.stored(
                their_outputs[output]
            )
            close += int(np.count_nonzero(np.abs(difference) <= 1))
            total += difference.size
    return close / total


# --------------------------------------------------------------------------------------
# (a) irc's integers against onnxruntime's


@pytest.mark.slow
@pytest.mark.parametrize("activations", ACTIVATIONS)
@pytest.mark.parametrize("name", MODELS)
def test_layers_and_outputs_match_onnxruntime(name: str, activations: str) -> None:
    """(a) on one QDQ model, imported and lowered once for both checks: the outputs end
    to end first (teacher forcing then writes onnxruntime's integers into the results
    it compares), then every quantized tensor layer by layer."""
    light = ort_quantized_light_model(name, MODEL_DIRECTORY, activations)  # type: ignore[arg-type]
    model = onnx.load(str(light.quantized_path))
    module = imported_and_lowered(light.quantized_path)
    assert_outputs_match(module, model, light)
    assert_layers_match(module, model, light)


def assert_layers_match(module: ModuleOp, model: onnx.ModelProto, light: OrtQuantizedModel) -> None:
    """Every quantized tensor of `model`, computed by irc (`module`) from onnxruntime's
    integers of its layer's inputs, within one step of onnxruntime's on at least
    MIN_WITHIN_ONE_STEP of its elements, on the first evaluation input."""
    tensors = quantized_tensors(model)
    outputs = {output.name for output in model.graph.output}
    exported = [tensor.dequantized for tensor in tensors if tensor.dequantized not in outputs]
    reference = run_quantized_onnxruntime(with_float_outputs(model, exported), light.inputs[:1])[0]

    agreements = compare_layers(module, tensors, reference, light.inputs[0])
    assert [a.tensor for a in agreements] == [t.name for t in tensors], "a tensor was not compared"
    failing = [a for a in agreements if a.fraction_within_one < MIN_WITHIN_ONE_STEP]
    assert not failing, "\n".join(
        f"{a.tensor}: {a.fraction_within_one:.4%} within one step, max {a.max_difference}"
        for a in failing
    )


def assert_outputs_match(
    module: ModuleOp, model: onnx.ModelProto, light: OrtQuantizedModel
) -> None:
    """The outputs of irc (`module`) and of onnxruntime's kernels on every evaluation
    input: within one step on MIN_WITHIN_ONE_STEP of them, or spread no more than
    onnxruntime's own float execution allows (module docstring)."""
    quantizations = output_quantization(model)
    assert quantizations, "every output of a QDQ model is dequantized"

    kernels = run_quantized_onnxruntime(model, light.inputs)
    ours = [run_function(module, inputs) for inputs in light.inputs]
    fraction = agreement(ours, kernels, quantizations)
    if fraction >= MIN_WITHIN_ONE_STEP:
        return
    # Below the criterion: irc must still agree with onnxruntime's integer kernels about
    # as well as onnxruntime's own float execution of the same model does (both are
    # exact per op; their differences are near ties that later layers amplify).
    own = agreement(run_plain_onnxruntime(model, light.inputs), kernels, quantizations)
    allowed = SPREAD_FACTOR * (1 - own) + SPREAD_SLACK
    assert 1 - fraction <= allowed, (
        f"irc is within one step of onnxruntime on {fraction:.3%} of the outputs, "
        f"onnxruntime's float and integer executions on {own:.3%}"
    )


# --------------------------------------------------------------------------------------
# (b) irc's int8 accuracy against onnxruntime's


@pytest.mark.slow
@pytest.mark.parametrize("name", MODELS)
def test_int8_accuracy_is_at_least_onnxruntimes(name: str) -> None:
    light = ort_quantized_light_model(name, MODEL_DIRECTORY, "int8")
    inputs = [
        random_inputs(light.float_model, seed=ACCURACY_SEED + index)
        for index in range(ACCURACY_SAMPLES)
    ]
    # onnxruntime's runs first, so that their sessions are gone before irc quantizes
    # (both at once took ZFNet-512's test worker to 1.95 GB).
    references = run_plain_onnxruntime(light.float_model, inputs)
    theirs = run_quantized_onnxruntime(light.quantized_path, inputs)
    own = quantize_with_irc(light.float_model, light.calibration)
    left = [op.name for op in own.walk() if op.name in INTEGER_OPS]
    assert not left, f"irc's int8 model keeps {left} in float"
    irc_cosines, ort_cosines = [], []
    for sample, reference, their_outputs in zip(inputs, references, theirs, strict=True):
        ours = run_function(own, sample)
        for output, expected in reference.items():
            irc_cosines.append(cosine_similarity(ours[output], expected))
            ort_cosines.append(cosine_similarity(their_outputs[output], expected))
    irc_cosine, ort_cosine = float(np.mean(irc_cosines)), float(np.mean(ort_cosines))
    assert irc_cosine >= ort_cosine, (
        f"cosine with the float outputs: irc {irc_cosine:.5f} < onnxruntime {ort_cosine:.5f}"
    )


# --------------------------------------------------------------------------------------
# (c) The kernels compared against compute the same integers on every x86 CPU


@pytest.mark.slow
@pytest.mark.parametrize("activations", ACTIVATIONS)
@pytest.mark.parametrize("name", MODELS)
def test_onnxruntime_kernels_are_exact_on_every_x86_cpu(
    name: str, activations: str, tmp_path: Path
) -> None:
    light = ort_quantized_light_model(name, MODEL_DIRECTORY, activations)  # type: ignore[arg-type]
    optimized = tmp_path / "optimized.onnx"
    run_quantized_onnxruntime(light.quantized_path, [], optimized)  # the graph it runs
    kernels = integer_kernels(onnx.load(str(optimized)))
    assert kernels, "onnxruntime runs no integer kernel: (a) compares nothing of them"
    inexact = [kernel for kernel in kernels if not kernel.exact_on_every_x86_cpu]
    assert not inexact, "\n".join(
        f"{kernel.op_type} {kernel.node} ({kernel.activations} x {kernel.weights}): "
        f"pair sums up to {kernel.largest_pair_sum} saturate int16 on CPUs without VNNI"
        for kernel in inexact
    )


CHANNELS = 16
"""Input channels of the probe conv: eight pairs of products per output."""


def conv_errors(storage: type[np.integer], activation: int, weight: int) -> np.ndarray:
    """How far onnxruntime's accumulators of a QDQ 1x1 conv are from the exact ones.

    CHANNELS inputs all `activation` (scale 1, zero point 0, of `storage`), two output
    channels with weights all `weight` and all `-weight` (scale 1) and the negated
    exact sums as biases, so that an exact kernel outputs 0 and each output is the
    error, clamped to [-128, 127] (scale 1, zero point 0 for int8 and 128 for uint8)."""
    import onnxruntime

    exact = CHANNELS * activation * weight
    output_zero = np.array(0 if storage is np.int8 else 128, storage)
    initializers = [
        numpy_helper.from_array(np.array(1, np.float32), "one"),
        numpy_helper.from_array(np.array(0, storage), "zero"),
        numpy_helper.from_array(output_zero, "output_zero"),
        numpy_helper.from_array(
            np.array([weight, -weight], np.int8)[:, None, None, None].repeat(CHANNELS, 1), "w"
        ),
        numpy_helper.from_array(np.ones(2, np.float32), "ones"),
        numpy_helper.from_array(np.zeros(2, np.int8), "w_zero"),
        numpy_helper.from_array(np.array([-exact, exact], np.int32), "b"),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "one", "zero"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "one", "zero"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w", "ones", "w_zero"], ["wd"], axis=0),
        helper.make_node("DequantizeLinear", ["b", "ones"], ["bd"], axis=0),
        helper.make_node("Conv", ["xd", "wd", "bd"], ["conv"]),
        helper.make_node("QuantizeLinear", ["conv", "one", "output_zero"], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "one", "output_zero"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "probe",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, CHANNELS, 2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 2, 2])],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    (y,) = session.run(None, {"x": np.full((1, CHANNELS, 2, 2), activation, np.float32)})
    return y[0, :, 0, 0].astype(np.int64)


@pytest.mark.parametrize(("storage", "activation"), [(np.uint8, 255), (np.int8, 127)])
@pytest.mark.parametrize("weight", [64, 65, 127])
def test_onnxruntime_u8s8_kernels_saturate_only_pair_sums_beyond_int16(
    storage: type[np.integer], activation: int, weight: int
) -> None:
    # What integer_kernels assumes of onnxruntime's QDQ convolutions: they run a u8s8
    # kernel (int8 activations moved to uint8 by adding 128, the zero point's
    # correction 128 * sum(w) subtracted after), which either sums exactly or
    # saturates each pair of products to int16 (VPMADDUBSW, on CPUs without VNNI);
    # with 7-bit weights (|w| <= 64) no pair saturates, on any CPU.
    ours = conv_errors(storage, activation, weight)
    shift = 128 if storage is np.int8 else 0
    pair = 2 * (activation + shift) * weight
    exact = CHANNELS * activation * weight
    correction = shift * CHANNELS * weight
    saturated_error = [
        CHANNELS // 2 * min(pair, PAIR_SUM_LIMIT) - correction - exact,
        CHANNELS // 2 * max(-pair, -PAIR_SUM_LIMIT - 1) + correction + exact,
    ]
    saturated = np.clip(saturated_error, -128, 127)
    if pair <= PAIR_SUM_LIMIT:
        np.testing.assert_array_equal(ours, [0, 0])
    else:
        assert saturated.all(), "the probe shows a saturated pair as an error"
        assert not ours.any() or np.array_equal(ours, saturated), ours
