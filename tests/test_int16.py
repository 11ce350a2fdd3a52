"""16-bit activations (issue 20): `quantize{activations=int16}`, `int16-names`,
`int16-ops` and `irc-compile --quantize int16 | --int16-layers | --int16-ops`.

int16 activations are symmetric (zero point 0), weights stay int8 per channel, biases
become int64, and convolutions and matrix products accumulate in the wide 48-bit
accumulator, which `qnn.requantize` scales with a 16-bit multiplier (TFLite's and
TOSA's int16x8 rule). Checked here:

- the wide requantization is the exact half-to-even rounding of acc * M' / 2^(15 + s)
  (a `Fraction` reference), and refuses accumulators beyond 48 bits;
- each op with a 16-bit form, alone, computes in integers what its QDQ form computes
  in float, within one int16 step on 99.9% of the elements;
- whole networks are closer to the float model in int16 than in int8;
- a compile with int16 activations for a target with `int16` runs every layer on the
  NPU (16-bit buffers, wide i64 accumulators and biases) bit for bit as the integer
  reference, in the simulator and from its package, and its output is more accurate;
  a target without `int16` keeps the 16-bit ops on the host, with that reason;
- the cycle model charges the target's `int16_cycles` per pass of a 16-bit layer.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from test_compile_placement import assert_bit_exact, compiled
from xdsl.dialects.builtin import ModuleOp, i64

from irc.diagnostics import collect_diagnostics
from irc.dialects import qnn, quant
from irc.importers.onnx import import_model
from irc.importers.reference import run_onnxruntime
from irc.interp import run_function
from irc.ir import fixed_point
from irc.quantize.calibration import calibrate
from irc.quantize.qdq import QuantizeConfig, prepare_for_calibration, quantize_module
from irc.testing.networks import NETWORKS
from irc.testing.reference import random_inputs
from irc.transforms.lower_to_qnn import lower_module

DIGITS = Path(__file__).resolve().parents[1] / "models" / "digits"

# --------------------------------------------------------------------------------------
# The wide requantization


def test_the_reduced_multiplier_rounds_the_high_16_bits_and_saturates() -> None:
    assert fixed_point.reduced_multiplier(1 << 30) == 1 << 14
    assert fixed_point.reduced_multiplier((1 << 30) + (1 << 15) - 1) == 1 << 14
    assert fixed_point.reduced_multiplier((1 << 30) + (1 << 15)) == (1 << 14) + 1
    assert fixed_point.reduced_multiplier(0x7FFEFFFF) == 0x7FFF
    assert fixed_point.reduced_multiplier(0x7FFFFFFF) == 0x7FFF


def _rounded(value: Fraction) -> int:
    """round_half_even of an exact rational."""
    floor = value.numerator // value.denominator
    rest = value - floor
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and floor % 2):
        return floor + 1
    return floor


@pytest.mark.parametrize("seed", range(4))
def test_the_wide_requantization_is_the_exact_rounding_of_the_16_bit_multiplier(
    seed: int,
) -> None:
    rng = np.random.default_rng(seed)
    accumulators = rng.integers(fixed_point.WIDE_MIN, fixed_point.WIDE_MAX, 2000)
    accumulators[:4] = [fixed_point.WIDE_MIN, fixed_point.WIDE_MAX, 0, -1]
    for real in (3e-9, 1.7e-5, 0.37, 5.0):
        multiplier, shift = fixed_point.quantize_multiplier(real)
        got = fixed_point.requantize(accumulators, multiplier, shift, 3, -(2**40), 2**40, wide=True)
        factor = Fraction(fixed_point.reduced_multiplier(multiplier), 2 ** (15 + shift))
        expected = [
            min(max(_rounded(int(acc) * factor) + 3, -(2**40)), 2**40) for acc in accumulators
        ]
        assert got.tolist() == expected, real


def test_the_wide_requantization_refuses_values_beyond_48_bits() -> None:
    multiplier, shift = fixed_point.quantize_multiplier(0.01)
    with pytest.raises(ValueError, match="48-bit"):
        fixed_point.requantize(np.array([1 << 47]), multiplier, shift, 0, -10, 10, wide=True)


# --------------------------------------------------------------------------------------
# Single ops: the integers against the QDQ form

SHAPE = [1, 4, 6, 6]


def _model(
    nodes: list, inputs: list[tuple[str, list[int]]], initializers: dict, opset: int = 17
) -> onnx.ModelProto:
    """A float model of `nodes` with output y, its shape inferred."""
    graph = helper.make_graph(
        nodes,
        "int16",
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape) for name, shape in inputs],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])],
        [numpy_helper.from_array(array, name) for name, array in initializers.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    del model.graph.output[:]
    inferred = onnx.shape_inference.infer_shapes(model)
    [output] = [value for value in inferred.graph.value_info if value.name == "y"]
    model.graph.output.append(output)
    return model


def _weights(*shape: int) -> np.ndarray:
    return np.random.default_rng(5).standard_normal(shape).astype(np.float32) * 0.3


OPS: dict[str, tuple[Callable[[], onnx.ModelProto], str]] = {
    "conv": (
        lambda: _model(
            [helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1])],
            [("x", SHAPE)],
            {"w": _weights(8, 4, 3, 3), "b": _weights(8)},
        ),
        "qnn.conv",
    ),
    "depthwise_conv": (
        lambda: _model(
            [helper.make_node("Conv", ["x", "w"], ["y"], group=4, strides=[2, 2])],
            [("x", SHAPE)],
            {"w": _weights(4, 1, 3, 3)},
        ),
        "qnn.conv",
    ),
    "gemm": (
        lambda: _model(
            [helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1)],
            [("x", [2, 24])],
            {"w": _weights(10, 24), "b": _weights(10)},
        ),
        "qnn.gemm",
    ),
    "matmul_of_activations": (
        lambda: _model(
            [helper.make_node("MatMul", ["x", "z"], ["y"])],
            [("x", [2, 5, 16]), ("z", [2, 16, 7])],
            {},
        ),
        "qnn.matmul",
    ),
    "add": (
        lambda: _model(
            [helper.make_node("Add", ["x", "z"], ["y"])], [("x", SHAPE), ("z", SHAPE)], {}
        ),
        "qnn.add",
    ),
    "mul": (
        lambda: _model(
            [helper.make_node("Mul", ["x", "z"], ["y"])], [("x", SHAPE), ("z", SHAPE)], {}
        ),
        "qnn.mul",
    ),
    "average_pool": (
        lambda: _model(
            [helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
            [("x", SHAPE)],
            {},
        ),
        "qnn.average_pool",
    ),
    "global_average_pool": (
        lambda: _model([helper.make_node("GlobalAveragePool", ["x"], ["y"])], [("x", SHAPE)], {}),
        "qnn.global_average_pool",
    ),
    "concat": (
        lambda: _model(
            [
                helper.make_node("Add", ["x", "z"], ["s"]),
                helper.make_node("Mul", ["x", "z"], ["p"]),
                helper.make_node("Concat", ["s", "p"], ["y"], axis=1),
            ],
            [("x", SHAPE), ("z", SHAPE)],
            {},
        ),
        "qnn.concat",
    ),
    "sigmoid": (
        lambda: _model([helper.make_node("Sigmoid", ["x"], ["y"])], [("x", SHAPE)], {}),
        "qnn.lut",
    ),
    "tanh": (
        lambda: _model([helper.make_node("Tanh", ["x"], ["y"])], [("x", SHAPE)], {}),
        "qnn.lut",
    ),
    "gelu": (
        lambda: _model([helper.make_node("Gelu", ["x"], ["y"])], [("x", SHAPE)], {}, opset=20),
        "qnn.lut",
    ),
    "softmax": (
        lambda: _model([helper.make_node("Softmax", ["x"], ["y"], axis=-1)], [("x", SHAPE)], {}),
        "qnn.softmax",
    ),
    "layer_norm": (
        lambda: _model(
            [
                helper.make_node(
                    "LayerNormalization", ["x", "gamma", "beta"], ["y"], axis=-1, epsilon=1e-5
                )
            ],
            [("x", SHAPE)],
            {"gamma": 1.0 + _weights(6), "beta": _weights(6)},
        ),
        "qnn.layer_norm",
    ),
    "lrn": (
        lambda: _model(
            [helper.make_node("LRN", ["x"], ["y"], size=3, alpha=0.5, beta=0.75, bias=1.0)],
            [("x", SHAPE)],
            {},
        ),
        "qnn.lrn",
    ),
    "max_pool": (
        lambda: _model(
            [
                helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                helper.make_node("MaxPool", ["c"], ["y"], kernel_shape=[2, 2], strides=[2, 2]),
            ],
            [("x", SHAPE)],
            {"w": _weights(4, 4, 3, 3)},
        ),
        "qnn.max_pool",
    ),
}


STEPS = {"softmax": 2}
"""Ops that round twice: the 16-bit softmax's probability is rounded in Q15 and again
to the output's scale (1 / 32767), its exps interpolated: within 2 steps (measured:
99.77% within 1, none beyond 2)."""


def _quantized(model: onnx.ModelProto, config: QuantizeConfig) -> tuple[ModuleOp, ModuleOp]:
    """The QDQ form and the lowered qnn module of `model`, calibrated on 8 samples."""
    module = import_model(model)
    samples = [random_inputs(model, seed=seed) for seed in range(8)]
    with collect_diagnostics():
        prepare_for_calibration(module)
        stats = calibrate(module, samples, "minmax", progress=False)
        quantize_module(module, stats, config)
        qdq = module.clone()
        lower_module(module, None)
    return qdq, module


def _output_scale(module: ModuleOp) -> float:
    [cast] = [op for op in module.walk() if isinstance(op, quant.DequantizeCastOp)][-1:]
    element = quant.quantized_element(cast.input.type)
    assert element is not None and element.storage_bits.data == 16
    return element.scale_values[0]


@pytest.mark.parametrize("name", sorted(OPS))
def test_a_16_bit_op_computes_in_integers_what_its_qdq_form_computes(name: str) -> None:
    build, expected_op = OPS[name]
    model = build()
    qdq, lowered = _quantized(model, QuantizeConfig(activations="int16"))
    ops = [op for op in lowered.walk() if op.name == expected_op]
    assert ops, f"no {expected_op} in the lowered module"
    if isinstance(ops[0], qnn.ConvOp | qnn.GemmOp | qnn.MatMulOp):
        assert ops[0].results[0].type.get_element_type() == i64  # the wide accumulator
    left = [
        op.name
        for op in lowered.walk()
        if op.name.startswith("nn.")
        and op.results
        and quant.quantized_element(op.results[0].type) is None
    ]
    assert not left, f"{left} stayed float"
    scale = _output_scale(lowered)
    differences = []
    for seed in range(3):
        inputs = random_inputs(model, seed=100 + seed)
        (ours,) = run_function(lowered, inputs).values()
        (theirs,) = run_function(qdq, inputs).values()
        differences.append(np.abs(np.rint((ours - theirs) / scale)).reshape(-1))
    difference = np.concatenate(differences)
    steps = STEPS.get(name, 1)
    within = float(np.mean(difference <= steps))
    assert within >= 0.999, f"{within:.4%} within {steps} step(s), max {difference.max()}"


def test_int16_names_makes_one_layer_16_bit_and_its_neighbours_16x8() -> None:
    model = _model(
        [
            helper.make_node("Conv", ["x", "w1"], ["a"], name="first", pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["a"], ["r"], name="relu"),
            helper.make_node("Conv", ["r", "w2"], ["c"], name="second", pads=[1, 1, 1, 1]),
            helper.make_node("Conv", ["c", "w3"], ["y"], name="third"),
        ],
        [("x", SHAPE)],
        {"w1": _weights(4, 4, 3, 3), "w2": _weights(4, 4, 3, 3), "w3": _weights(2, 4, 1, 1)},
    )
    _, lowered = _quantized(model, QuantizeConfig(int16_names=frozenset({"second"})))
    convs = [op for op in lowered.walk() if isinstance(op, qnn.ConvOp)]
    bits = [
        (
            quant.quantized_element(conv.input.type).storage_bits.data,  # type: ignore[union-attr]
            conv.results[0].type.get_element_type(),
        )
        for conv in convs
    ]
    # The first conv writes int16 (16-bit result of an 8-bit input: an i32
    # accumulator); the second reads and writes int16 (i64); the third reads int16.
    from xdsl.dialects.builtin import i32

    assert bits == [(8, i32), (16, i64), (16, i64)]
    requantizes = [op for op in lowered.walk() if isinstance(op, qnn.RequantizeOp)]
    out_bits = [
        quant.quantized_element(op.result.type).storage_bits.data  # type: ignore[union-attr]
        for op in requantizes
    ]
    assert out_bits == [16, 16, 8]


# --------------------------------------------------------------------------------------
# Networks and compiles


def _sqnr(actual: np.ndarray, expected: np.ndarray) -> float:
    error = actual.astype(np.float64) - expected
    return float(10 * np.log10(np.sum(expected.astype(np.float64) ** 2) / np.sum(error**2)))


@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_int16_activations_bring_a_network_closer_to_float(name: str) -> None:
    """The two networks' weights are int8 either way: what int16 removes is the
    activations' share of the error, a few dB of SQNR (int8: 14.6 and 21.3 dB)."""
    model = NETWORKS[name](0)
    inputs = [random_inputs(model, seed=200 + seed) for seed in range(3)]
    expected = [next(iter(run_onnxruntime(model, x).values())) for x in inputs]
    sqnr = {}
    for activations in ("int8", "int16"):
        _, lowered = _quantized(model, QuantizeConfig(activations=activations))  # type: ignore[arg-type]
        outputs = [next(iter(run_function(lowered, x).values())) for x in inputs]
        sqnr[activations] = _sqnr(np.concatenate(outputs), np.concatenate(expected))
    assert sqnr["int16"] > sqnr["int8"] + 1.5, sqnr


def test_the_digits_cnn_in_int16_runs_bit_exactly_and_more_accurately(tmp_path: Path) -> None:
    model = DIGITS / "digits_cnn.onnx"
    data = DIGITS / "digits_calibration.npz"
    results = {}
    for quantize in ("int8", "int16"):
        result, package = compiled(
            model, "edge-2tops", tmp_path / quantize, quantize=quantize, calibration_data=data
        )
        assert_bit_exact(result, model, package)
        results[quantize] = result
    # edge-2tops has int16: every 16-bit layer runs on the NPU, and with them the
    # model's input quantize and output dequantize.
    partition = results["int16"].partition
    assert not partition.cpu_ops, [(op.op, op.reason) for op in partition.cpu_ops]
    assert partition.npu_macs == results["int8"].partition.npu_macs > 0
    errors = {name: result.errors for name, result in results.items()}
    int8_output = errors["int8"].outputs()[0]  # type: ignore[union-attr]
    int16_output = errors["int16"].outputs()[0]  # type: ignore[union-attr]
    assert int16_output.sqnr_db > int8_output.sqnr_db + 3


def test_mixed_precision_can_make_the_sensitive_layers_int16_instead_of_float() -> None:
    """`auto_mixed_precision(fallback="int16")` on the MobileNetV2-style network (int8:
    14.6 dB SQNR on these samples, all int16: 16.9 dB) reaches a goal between the two
    with some layers' activations int16 and none float."""
    from irc.quantize.mixed_precision import auto_mixed_precision, quantize_keeping_float

    model = NETWORKS["mobilenet_v2_style"](0)
    module = import_model(model)
    samples = [random_inputs(model, seed=seed) for seed in range(8)]
    with collect_diagnostics():
        from irc.driver.pipeline import GRAPH_OPT
        from irc.ir.context import make_context
        from irc.passes import parse_pipeline

        for module_pass in parse_pipeline(GRAPH_OPT):
            module_pass.apply(make_context(), module)
        prepare_for_calibration(module)
        stats = calibrate(module, samples, "minmax", progress=False)
        result = auto_mixed_precision(
            module, stats, samples[:2], "sqnr", 15.5, progress=False, fallback="int16"
        )
        assert result.met and result.kept_float, result.format_text()
        assert result.final_metric >= 15.5 > result.quantized_metric
        assert "made int16" in result.format_text()
        qdq, summary = quantize_keeping_float(
            module, stats, QuantizeConfig(), result.kept_float, "int16"
        )
    assert not summary.float_reasons  # nothing left float
    bits = {
        element.storage_bits.data
        for op in qdq.walk()
        if isinstance(op, quant.QuantizeCastOp)
        and (element := quant.quantized_element(op.result.type)) is not None
    }
    assert bits == {8, 16}


# --------------------------------------------------------------------------------------
# On the NPU: the target's int16 flag decides, and 16-bit passes cost int16_cycles


def test_a_target_without_int16_keeps_the_16_bit_layers_on_the_host(tmp_path: Path) -> None:
    """npu-demo has no int16: the digits CNN's 16-bit layers stay on the host with that
    reason, and still run bit for bit as the integer reference."""
    model = DIGITS / "digits_cnn.onnx"
    data = DIGITS / "digits_calibration.npz"
    result, package = compiled(model, "npu-demo", tmp_path, quantize="int16", calibration_data=data)
    assert_bit_exact(result, model, package)
    reasons = {(op.layer, op.op): op.reason for op in result.partition.cpu_ops}
    assert not result.partition.npu_layers
    assert reasons[("/features/features.0/Conv", "qnn.conv")] == (
        "has 16-bit values: target npu-demo computes in 8 bits (no int16)"
    )


@pytest.mark.parametrize(("inner", "target_name", "on_npu"), [
    (600, "ethos-u55-256", False),
    (500, "ethos-u55-256", True),
    (600, "edge-2tops", True),
])  # fmt: skip
def test_the_targets_int16_accumulator_decides_whether_a_16_bit_product_runs_there(
    inner: int, target_name: str, on_npu: bool
) -> None:
    """A matmul of two int16 activations sums up to inner * 32768^2: over 600 terms
    that needs 41 bits, more than Ethos-U's 40-bit accumulator (Vela's Acc40) holds,
    so it stays on the host with that reason; 500 terms (40 bits) fit, and
    edge-2tops's 48-bit accumulator holds either."""
    from irc.backend import place
    from irc.targets import load_target
    from irc.testing.targets import every_op_supported

    model = _model(
        [helper.make_node("MatMul", ["x", "z"], ["y"])],
        [("x", [1, 4, inner]), ("z", [1, inner, 4])],
        {},
    )
    _, lowered = _quantized(model, QuantizeConfig(activations="int16"))
    [matmul] = [op for op in lowered.walk() if isinstance(op, qnn.MatMulOp)]
    assert qnn.accumulation_bound(matmul) == inner * 32768 * 32768
    target = every_op_supported(load_target(target_name))
    placement = place(matmul, target)
    if on_npu:
        assert placement.device == "npu", placement.reasons
    else:
        assert placement.device == "cpu"
        assert placement.reasons == (
            f"qnn.matmul can accumulate {inner * 2**30} (a 41-bit signed sum): target "
            f"{target_name}'s int16 accumulator holds 40 bits",
        )


def test_a_16_bit_pass_takes_the_targets_int16_cycles() -> None:
    """The cycle model of the simulator and of the planner: a 16-bit conv takes
    `int16_cycles` (2 on edge-2tops, Vela's factor for Ethos-U) times the passes of the
    same 8-bit conv; the MACs are the same."""
    from irc.sim import timing
    from irc.targets import load_target

    target = load_target("edge-2tops")
    array = target.mac_array
    assert target.data_types.int16_cycles == 2
    eight = timing.conv_cost(target, (1, 8, 8, 64), (64, 3, 3, 64), 1)
    sixteen = timing.conv_cost(target, (1, 8, 8, 64), (64, 3, 3, 64), 1, sixteen=True)
    fill = array.rows + array.columns
    assert sixteen.macs == eight.macs
    assert sixteen.cycles - fill == 2 * (eight.cycles - fill)
    assert timing.vector_cycles(target, 16, 64, 4, sixteen=True) == 2 * timing.vector_cycles(
        target, 16, 64, 4
    )


def test_the_planner_holds_a_wide_accumulator_and_bias_in_8_bytes() -> None:
    """A 16x8 conv's plan: i64 accumulator and bias (8 bytes per element), and twice
    the compute cycles of the same conv in 8 bits."""
    from dataclasses import replace

    from irc.targets import load_target
    from irc.tiling.planner import Layer, Tile, plan_layer

    target = load_target("edge-2tops")
    eight = Layer(
        "conv", "qnn.conv", "conv", "mac", 1, 16, 16, 32, 16, 16, 32, kernel=(3, 3),
        pads=(1, 1, 1, 1),
        has_weights=True,
    )  # fmt: skip
    sixteen = replace(eight, in_bytes=2, out_bytes=2)
    assert not eight.wide and sixteen.wide and sixteen.accumulator_bytes == 8
    tile = Tile(16, 16, 32, 32)
    plans = {layer.in_bytes: plan_layer(layer, target, forced=tile) for layer in (eight, sixteen)}
    assert plans[2].buffers["accumulator"] == 2 * plans[1].buffers["accumulator"]
    assert plans[2].compute_cycles > 1.9 * plans[1].compute_cycles


# --------------------------------------------------------------------------------------
# 16-bit lookup tables


def test_a_16_bit_table_interpolates_the_function_within_a_few_steps() -> None:
    """sigmoid and tanh through 513-entry tables (inputs over [-8, 8], outputs over
    [-1, 1] in int16): over every int16 input the interpolated result is within 1.5
    (sigmoid) and 3 (tanh, steeper) output steps of the exact value, 0.55 steps rms;
    measured 1.28 / 2.71 and 0.39 / 0.50. At x = 0 (entry 256) both are exact."""
    from irc.quantize.scheme import build_lut16

    input_type = quant.UniformQuantizedType.make(8 / 32767, 0, bits=16)
    output_type = quant.UniformQuantizedType.make(1 / 32767, 0, bits=16)
    functions = {
        "sigmoid": (lambda x: 1 / (1 + np.exp(-x.astype(np.float64))), 1.5),
        "tanh": (lambda x: np.tanh(x.astype(np.float64)), 3.0),
    }
    stored = np.arange(-32768, 32768)
    for name, (function, largest) in functions.items():
        table = build_lut16(function, input_type, output_type)
        assert table.shape == (fixed_point.LUT16_ENTRIES,) == (513,)
        assert table.min() >= -32768 and table.max() <= 32767
        looked_up = fixed_point.interpolated_lookup(stored, table)
        exact = function(stored * (8 / 32767)) * 32767
        error = looked_up - exact
        assert np.abs(error).max() < largest, name
        assert np.sqrt(np.mean(error**2)) < 0.55, name
        assert looked_up[32768] == round(float(exact[32768]))  # x = 0


def test_a_16_bit_table_needs_an_interpolating_lookup_table_on_the_target() -> None:
    """A 16-bit sigmoid runs on edge-2tops (512 LUT entries, interpolated) and stays
    on the host of ethos-u55-256, whose 256-entry table holds 8-bit functions."""
    from irc import backend
    from irc.targets import load_target

    _, lowered = _quantized(OPS["sigmoid"][0](), QuantizeConfig(activations="int16"))
    [lut] = [op for op in lowered.walk() if isinstance(op, qnn.LutOp)]
    assert backend.place(lut, load_target("edge-2tops")).device == "npu"
    placement = backend.place(lut, load_target("ethos-u55-256"))
    assert placement.device == "cpu"
    assert placement.reasons == (
        "qnn.lut (sigmoid) has an interpolated 16-bit table of 512 steps: target "
        "ethos-u55-256's lookup table has 256 entries",
    )
