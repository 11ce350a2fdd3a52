"""`lower-to-qnn`: the integer module against its float reference, the QDQ form.

On every light model, one run checks the QDQ form against the float model (the
logits' cosine similarity, see test_quantize.py) and the integer module against the
QDQ form.

The QDQ form computes the int8 model's numbers in float; the lowered module computes
them with integer ops (irc/interp/qnn.py). They round differently in two places
only: float32 sums versus exact int32 sums, and the rounding of a float32 quotient
versus that of the exact fixed-point product (both round half to even, but a float32
product can land on either side of a near tie). So every integer op, given
the same inputs, must give the QDQ values or miss by one LSB where the exact value is
(nearly) a tie. That is checked op by op (`compare_op_by_op`: each integer result is
compared with the QDQ value of the same op, then replaced by it, so that every op sees
the QDQ inputs), and end to end on small networks, where one-LSB differences have no
room to grow.

On the light models, end-to-end agreement is also measured but not asserted: these
random-weight networks amplify every difference layer after layer (a conv's output
moves by a few LSB when one input element moves by one), so deep ones (ResNet-50,
Inception v2, DenseNet-121) agree only on part of their outputs even though every op
agrees with its reference.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from test_quantize import (
    CALIBRATION_SEEDS,
    DEFAULT_QDQ_COSINE,
    LIGHT_MODELS,
    QDQ_COSINE,
    SLOW_MODELS,
    TEST_SEEDS,
    WEIGHT_CASES,
    NetBuilder,
    calibrated,
    light_model_for_quantization,
    output_cosine,
    quantized,
    samples_for,
    small_cnn,
)
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, StringAttr, TensorType, f32
from xdsl.interpreter import Interpreter, PythonValues
from xdsl.ir import Operation

from irc.diagnostics import collect_diagnostics
from irc.dialects import nn, qnn, quant
from irc.interp import function_signature, run_function
from irc.ir.context import make_context
from irc.ir.io import module_to_string, parse_module, verify_module
from irc.passes import parse_pipeline
from irc.quantize.calibration import entry_function, run_with_listener
from irc.quantize.qdq import QuantizeConfig, layer_name, quantize_module
from irc.targets import load_target, using_target
from irc.transforms.lower_to_qnn import lower_module

NO_LUT_TARGET = (
    Path(__file__).parent / "filecheck" / "transforms" / "Inputs" / "partition-no-lut.toml"
)


def lowered(qdq: ModuleOp, target: str | None = None) -> ModuleOp:
    """A verified, lowered copy of a QDQ module."""
    copy = qdq.clone()
    lower_module(copy, load_target(target) if target else None)
    verify_module(copy)
    return copy


# --------------------------------------------------------------------------------------
# Comparing integer values


@dataclass
class Agreement:
    """How many elements of integer results equal their reference, or miss by 1 LSB."""

    elements: int = 0
    exact: int = 0
    within_one: int = 0
    worst: int = 0

    def add(self, actual: np.ndarray, expected: np.ndarray) -> None:
        """Count the elements of one integer result against its reference."""
        difference = np.abs(actual.astype(np.int64) - expected.astype(np.int64))
        self.elements += difference.size
        self.exact += int(np.count_nonzero(difference == 0))
        self.within_one += int(np.count_nonzero(difference <= 1))
        self.worst = max(self.worst, int(difference.max(initial=0)))

    @property
    def exact_fraction(self) -> float:
        """The fraction of elements equal to the reference."""
        return self.exact / self.elements

    @property
    def within_one_fraction(self) -> float:
        """The fraction of elements at most one LSB from the reference."""
        return self.within_one / self.elements


def _is_compared(op: Operation) -> bool:
    """Ops whose result is an int8 tensor computed at run time."""
    return (
        len(op.results) > 0
        and quant.quantized_element(op.results[0].type) is not None
        and not isinstance(op, qnn.ConstantOp | quant.StorageCastOp)
    )


def _key(op: Operation, index: int) -> tuple[str, str]:
    return layer_name(op), str(op.results[index].type)


class _Record(Interpreter.Listener):
    """Records the int8 values of the QDQ module (its qcast results) by op and type."""

    def __init__(self) -> None:
        self.values: dict[tuple[str, str], deque[np.ndarray]] = defaultdict(deque)

    def did_interpret_op(self, op: Operation, results: PythonValues) -> None:
        if isinstance(op, quant.QuantizeCastOp):
            self.values[_key(op, 0)].append(np.array(results[0]))


class _CompareAndForce(Interpreter.Listener):
    """Compares each int8 result of the lowered module with the QDQ value of the same
    op and type, then overwrites it with that value (teacher forcing)."""

    def __init__(self, reference: dict[tuple[str, str], deque[np.ndarray]]) -> None:
        self.reference = reference
        self.agreement = Agreement()
        self.compared = 0

    def did_interpret_op(self, op: Operation, results: PythonValues) -> None:
        if not _is_compared(op):
            return
        for index, result in enumerate(results):
            queue = self.reference.get(_key(op, index))
            if not queue:
                continue
            expected = queue.popleft()
            self.agreement.add(result, expected)
            self.compared += 1
            if result.flags.writeable:
                result[...] = expected


def compare_op_by_op(
    qdq: ModuleOp, integer: ModuleOp, seeds: Sequence[int]
) -> tuple[Agreement, int]:
    """Every int8 result of `integer` against the QDQ value of its op, each op run on
    the QDQ inputs; the agreement and the number of results compared."""
    agreement, compared = Agreement(), 0
    for sample in samples_for(qdq, seeds):
        arguments = [sample[name] for name, _ in function_signature(qdq)[0]]
        record = _Record()
        run_with_listener(qdq, entry_function(qdq), arguments, record)
        forcing = _CompareAndForce(record.values)
        run_with_listener(integer, entry_function(integer), arguments, forcing)
        for field in ("elements", "exact", "within_one"):
            setattr(agreement, field, getattr(agreement, field) + getattr(forcing.agreement, field))
        agreement.worst = max(agreement.worst, forcing.agreement.worst)
        compared += forcing.compared
    return agreement, compared


def compare_outputs(qdq: ModuleOp, integer: ModuleOp, seeds: Sequence[int]) -> Agreement:
    """The outputs of both modules in LSBs of their int8 type (outputs that are dcasts)."""
    agreement = Agreement()
    return_op = next(op for op in qdq.walk() if op.name == "func.return")
    scales = []
    for operand in return_op.operands:
        assert isinstance(operand.owner, quant.DequantizeCastOp), "an output that is not int8"
        element = quant.quantized_element(operand.owner.input.type)
        assert element is not None
        scales.append(element.scale_values[0])
    for sample in samples_for(qdq, seeds):
        expected, actual = run_function(qdq, sample), run_function(integer, sample)
        for (name, value), scale in zip(expected.items(), scales):
            agreement.add(
                np.rint(actual[name] / scale).astype(np.int64),
                np.rint(value / scale).astype(np.int64),
            )
    return agreement


# --------------------------------------------------------------------------------------
# Light models


LRN_MODELS = {"bvlc_alexnet", "zfnet512", "inception_v1"}
"""The light models with local response normalizations."""


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=[pytest.mark.slow] if name in SLOW_MODELS else [])
        for name in LIGHT_MODELS
    ],
)
def test_light_model_int8(name: str) -> None:
    module = light_model_for_quantization(name)
    stats = calibrated(module, CALIBRATION_SEEDS)
    copy = module.clone()
    summary = quantize_module(copy, stats)
    qdq = copy
    verify_module(qdq)
    # The QDQ form: everything is quantized, and its logits are close to the float
    # model's.
    assert not summary.float_reasons, summary.float_reasons
    similarity = output_cosine(module, qdq, TEST_SEEDS)
    assert similarity >= QDQ_COSINE.get(name, DEFAULT_QDQ_COSINE), similarity
    # The integer module.
    integer = lowered(qdq)
    # Everything runs in integers, the LRNs of AlexNet, ZFNet and Inception v1 too.
    float_ops = {
        op.name
        for op in integer.walk()
        if op.name.startswith("nn.")
        and not isinstance(op, nn.ConstantOp)
        and quant.quantized_element(op.results[0].type) is None
    }
    assert not float_ops, float_ops
    if name in LRN_MODELS:
        assert any(op.name == "qnn.lrn" for op in integer.walk())
    agreement, compared = compare_op_by_op(qdq, integer, TEST_SEEDS[:1])
    assert compared > 10
    assert agreement.within_one_fraction >= 0.999, agreement
    assert agreement.exact_fraction >= 0.99, agreement
    assert agreement.worst <= 2, agreement


# --------------------------------------------------------------------------------------
# Small networks and single ops: end to end


def _assert_matches(
    module: ModuleOp, qdq: ModuleOp, integer: ModuleOp, exact: float = 0.99
) -> None:
    outputs = compare_outputs(qdq, integer, TEST_SEEDS)
    assert outputs.within_one_fraction == 1.0, outputs
    assert outputs.exact_fraction >= exact, outputs
    agreement, _ = compare_op_by_op(qdq, integer, TEST_SEEDS)
    assert agreement.within_one_fraction == 1.0, agreement


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("activations", ["int8", "uint8"])
@pytest.mark.parametrize("per_channel", [True, False])
def test_small_cnn(layout: str, activations: str, per_channel: bool) -> None:
    module = small_cnn(layout=layout)
    config = QuantizeConfig(activations=activations, per_channel=per_channel)  # type: ignore[arg-type]
    qdq = quantized(module, calibrated(module), config)
    integer = lowered(qdq)
    names = [op.name for op in integer.walk()]
    for expected in (
        "qnn.conv",
        "qnn.max_pool",
        "qnn.concat",
        "qnn.global_average_pool",
        "qnn.gemm",
    ):
        assert expected in names
    assert "nn.conv" not in names and "nn.gemm" not in names
    _assert_matches(module, qdq, integer)
    # The integer module prints and parses back, and computes the same.
    reparsed = parse_module(_printed(integer), make_context())
    sample = samples_for(module, TEST_SEEDS[:1])[0]
    np.testing.assert_array_equal(
        run_function(reparsed, sample)["output_0"], run_function(integer, sample)["output_0"]
    )


def _printed(module: ModuleOp) -> str:
    import io

    from irc.ir.io import PrintOptions, print_module
    from irc.ir.weights import WeightsMode

    stream = io.StringIO()
    print_module(module, stream, PrintOptions(weights=WeightsMode.RESOURCE))
    return stream.getvalue()


@pytest.mark.parametrize("case", list(WEIGHT_CASES))
def test_weighted_ops(case: str) -> None:
    op_type, input_shape, weight_shape, channels, props, _ = WEIGHT_CASES[case]
    rng = np.random.default_rng(4)
    net = NetBuilder(x=input_shape)
    operands = [net.args["x"], net.const(rng.standard_normal(weight_shape), "w")]
    if channels:
        operands.append(net.const(rng.normal(0, 0.5, channels), "b"))
    relu = nn.ActivationAttr.make("relu")
    module = net.module(net.op(op_type, operands, "layer", activation=relu, **props))
    qdq = quantized(module, calibrated(module))
    integer = lowered(qdq)
    requantize = next(op for op in integer.walk() if isinstance(op, qnn.RequantizeOp))
    output = quant.quantized_element(requantize.result.type)
    assert output is not None
    # The relu clamps at the zero point (unwritten when that is the storage minimum).
    clamp_min = requantize.props().int("clamp_min")
    assert (
        output.storage_range[0] if clamp_min is None else clamp_min
    ) == output.zero_point_values[0]
    _assert_matches(module, qdq, integer)


LOOKUP_OPS: dict[str, tuple[type[nn.NNOp], dict[str, object]]] = {
    "sigmoid": (nn.SigmoidOp, {}),
    "tanh": (nn.TanhOp, {}),
    "hard_swish": (nn.HardSwishOp, {}),
    "hard_sigmoid": (nn.HardSigmoidOp, {"alpha": 0.2, "beta": 0.5}),
    "leaky_relu": (nn.LeakyReluOp, {"alpha": 0.1}),
    "elu": (nn.EluOp, {"alpha": 1.0}),
    "gelu": (nn.GeluOp, {}),
    "softplus": (nn.SoftplusOp, {}),
    "exp": (nn.ExpOp, {}),
}


@pytest.mark.parametrize("name", list(LOOKUP_OPS))
def test_lookup_tables_reproduce_the_qdq_form_exactly(name: str) -> None:
    op_type, props = LOOKUP_OPS[name]
    net = NetBuilder(x=(4, 64))
    module = net.module(net.op(op_type, [net.args["x"]], "f", **props))
    qdq = quantized(module, calibrated(module))
    integer = lowered(qdq)
    assert [op.name for op in integer.walk() if op.name.startswith("qnn.")] == ["qnn.lut"]
    _assert_matches(module, qdq, integer, exact=1.0)


def test_lookup_tables_need_a_target_with_one() -> None:
    net = NetBuilder(x=(4, 8))
    module = net.module(net.op(nn.SigmoidOp, [net.args["x"]], "f"))
    qdq = quantized(module, calibrated(module))
    # Without a target, tables are assumed, and the remark says so.
    (lower_pass,) = parse_pipeline("lower-to-qnn")
    with collect_diagnostics() as diagnostics:
        lower_pass.apply(make_context(), without := qdq.clone())
    assert "qnn.lut" in module_to_string(without)
    assert diagnostics[0].message.endswith("no target: 1 lookup tables assumed available")
    # A target with a table (the pass option, or the active target).
    assert "qnn.lut" in module_to_string(lowered(qdq, "npu-demo"))
    with using_target(load_target("npu-demo")), collect_diagnostics() as diagnostics:
        lower_pass.apply(make_context(), active := qdq.clone())
    assert "qnn.lut" in module_to_string(active)
    assert diagnostics[0].message == "lower-to-qnn: 1 ops lowered, 0 float"
    # A target without one keeps the sigmoid a float island.
    island = lowered(qdq, str(NO_LUT_TARGET))
    sigmoid = next(op for op in island.walk() if isinstance(op, nn.SigmoidOp))
    assert isinstance(sigmoid.operands[0].owner, quant.DequantizeCastOp)
    assert isinstance(sigmoid.results[0].get_user_of_unique_use(), quant.QuantizeCastOp)
    records = lower_module(qdq.clone(), load_target(str(NO_LUT_TARGET)))
    (reasons,) = [list(record.float_reasons.values()) for record in records.values()]
    assert reasons == ["target no-lut has no lookup table"]
    _assert_matches(module, qdq, island, exact=1.0)


def test_elementwise_pooling_and_data_movement() -> None:
    rng = np.random.default_rng(5)
    net = NetBuilder(x=(1, 4, 6, 6), y=(1, 4, 1, 1))
    x, y = net.args["x"], net.args["y"]
    added = net.op(
        nn.AddOp, [x, y], "add", activation=nn.ActivationAttr.make("clip", min=0.0, max=6.0)
    )
    scaled = net.op(nn.MulOp, [added, net.const(rng.uniform(0.5, 2.0, (1, 4, 1, 1)))], "mul")
    padded = net.op(nn.PadOp, [scaled], "pad", pads=[0, 0, 1, 1, 0, 0, 1, 1])
    averaged = net.op(nn.AveragePoolOp, [padded], "avg", kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    maxed = net.op(nn.GlobalMaxPoolOp, [averaged], "gmax")
    moved = net.op(nn.TransposeOp, [averaged], "transpose", perm=[0, 2, 3, 1])
    sliced = net.op(nn.SliceOp, [moved], "slice", starts=[1], ends=[7], axes=[1], steps=[2])
    clipped = net.op(nn.ClipOp, [sliced], "clip", min=0.5, max=3.0)
    module = net.module(maxed, clipped)
    qdq = quantized(module, calibrated(module))
    integer = lowered(qdq)
    names = {op.name for op in integer.walk()}
    assert {
        "qnn.add",
        "qnn.mul",
        "qnn.pad",
        "qnn.average_pool",
        "qnn.max_pool",
        "qnn.clamp",
    } <= names
    assert {"nn.transpose", "nn.slice"} <= names  # on quantized tensors
    assert not names & {"nn.add", "nn.mul", "nn.pad", "nn.average_pool", "nn.global_max_pool"}
    _assert_matches(module, qdq, integer)


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_a_resize_moves_or_interpolates_int8_values_and_a_cubic_one_stays_float(
    mode: str,
) -> None:
    """A nearest resize only moves values: it runs on the quantized tensor, exactly. A
    linear one interpolates them: `qnn.resize`, of its input's type. A cubic one has no
    integer form: it stays float between its casts, with why."""
    net = NetBuilder(x=(1, 2, 3, 3))
    relu = net.op(nn.ReluOp, [net.args["x"]], "relu")
    scales = DenseArrayBase.from_list(f32, [1.0, 1.0, 2.0, 2.0])
    resized = net.op(
        nn.ResizeOp, [relu], "resize", [TensorType(f32, [1, 2, 6, 6])], scales=scales, mode=mode
    )
    module = net.module(net.op(nn.SigmoidOp, [resized], "gate"))
    qdq = quantized(module, calibrated(module))
    records = lower_module(integer := qdq.clone(), None)
    verify_module(integer)
    (reasons,) = [record.float_reasons for record in records.values()]
    if mode == "linear":
        assert reasons == {}
        (resize,) = [op for op in integer.walk() if isinstance(op, qnn.ResizeOp)]
        assert resize.result.type.get_element_type() == resize.input.type.get_element_type()
        return  # its numbers against the QDQ form: tests/test_resize.py
    (resize,) = [op for op in integer.walk() if isinstance(op, nn.ResizeOp)]
    if mode == "nearest":
        assert reasons == {}
        assert quant.quantized_element(resize.result.type) is not None  # on int8 values
    else:  # the quantizer left it float, and said why
        assert quant.quantized_element(resize.result.type) is None
        why = resize.attributes["irc.float"]
        assert isinstance(why, StringAttr)
        assert why.data == 'resize mode "cubic" has no integer form (nearest and linear do)'
    _assert_matches(module, qdq, integer, exact=1.0)
