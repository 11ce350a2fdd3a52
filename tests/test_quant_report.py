"""The layer-wise error report on hand-made QDQ models.

The float model is a small CNN built with the nn op builders, its ops located by layer
name as the ONNX importer locates them by node name.
Its QDQ version is built here, independently of the quantize pass: every activation
(the input and every nn op's float result) gets a quant.qcast + quant.dcast pair with
the scheme's type over its calibrated range, and convolution weights become int8
constants -> quant.scast to their per-channel type -> quant.dcast. One layer can be
given a deliberately bad scale; the report must name it.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    DenseArrayBase,
    DictionaryAttr,
    ModuleOp,
    NameLoc,
    StringAttr,
    TensorType,
    UnknownLoc,
    f32,
    i64,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Operation, Region, SSAValue

from irc.diagnostics import IrcError
from irc.dialects import nn, quant
from irc.interp import run_function
from irc.quantize import scheme
from irc.quantize.calibration import CalibrationStats, calibrate, value_key
from irc.quantize.report import ErrorReport, TensorError, error_report, quantized_tensors

LAYERS = ("conv1", "relu1", "conv2", "relu2", "conv3", "relu3", "pool", "flat", "fc")


def _loc(name: str) -> NameLoc:
    return NameLoc(StringAttr(name), UnknownLoc())


def small_cnn(seed: int = 0) -> ModuleOp:
    """x (1x3x12x12) -> conv-relu x3 -> global average pooling -> flatten -> gemm, with
    He-normal weights; ops are located by layer name, constants by weight name."""
    rng = np.random.default_rng(seed)
    block = Block(arg_types=[TensorType(f32, [1, 3, 12, 12])])

    def add(op: Operation) -> SSAValue:
        block.add_op(op)
        return op.results[0]

    def constant(name: str, data: np.ndarray) -> SSAValue:
        return add(nn.ConstantOp.from_array(data.astype(np.float32), location=_loc(name)))

    def conv(name: str, x: SSAValue, channels_in: int, index: int) -> SSAValue:
        fan_in = channels_in * 9
        w = constant(f"w{index}", rng.standard_normal((8, channels_in, 3, 3)) * (2 / fan_in) ** 0.5)
        b = constant(f"b{index}", rng.standard_normal(8) * 0.1)
        pads = DenseArrayBase.from_list(i64, [1, 1, 1, 1])
        return add(nn.ConvOp.build([x, w, b], {"pads": pads}, location=_loc(name)))

    value: SSAValue = block.args[0]
    for index, channels_in in enumerate((3, 8, 8), start=1):
        value = conv(f"conv{index}", value, channels_in, index)
        value = add(nn.ReluOp.build([value], location=_loc(f"relu{index}")))
    value = add(nn.GlobalAveragePoolOp.build([value], location=_loc("pool")))
    value = add(nn.FlattenOp.build([value], location=_loc("flat")))
    wfc = constant("wfc", rng.standard_normal((10, 8)) * 0.5)
    bfc = constant("bfc", rng.standard_normal(10) * 0.1)
    trans_b = BoolAttr.from_bool(True)
    value = add(nn.GemmOp.build([value, wfc, bfc], {"trans_b": trans_b}, location=_loc("fc")))
    block.add_op(ReturnOp(value))

    def names(name: str) -> ArrayAttr:
        return ArrayAttr([DictionaryAttr({"irc.name": StringAttr(name)})])

    function = FuncOp(
        "main",
        ([block.args[0].type], [value.type]),
        Region(block),
        arg_attrs=names("x"),
        res_attrs=names("y"),
    )
    module = ModuleOp([function])
    module.verify()
    return module


def samples(count: int, seed: int = 1) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [{"x": rng.standard_normal((1, 3, 12, 12)).astype(np.float32)} for _ in range(count)]


def _entry(module: ModuleOp) -> FuncOp:
    return next(op for op in module.ops if isinstance(op, FuncOp))


def _cast(op_class: type[Operation], value: SSAValue, result_type: TensorType) -> Operation:
    return op_class.create(operands=[value], result_types=[result_type], location=UnknownLoc())


def qdq_version(
    float_module: ModuleOp, stats: CalibrationStats, scale_factors: dict[str, float] | None = None
) -> ModuleOp:
    """The QDQ form of `float_module`, built by hand; `scale_factors` multiplies the
    scale of the named tensors' types (a deliberately bad scale)."""
    scale_factors = scale_factors or {}
    module = float_module.clone()
    function = _entry(module)
    block = function.body.blocks.first
    assert isinstance(block, Block)

    def quantize_after(value: SSAValue, anchor: Operation | None) -> None:
        key = value_key(value)
        assert key is not None and key in stats, key
        low, high = stats.range(key)
        element = scheme.activation_type(low, high)
        if key in scale_factors:
            scale = element.scale_values[0] * scale_factors[key]
            element = quant.UniformQuantizedType.make(scale, element.zero_point_values[0])
        value_type = value.type
        assert isinstance(value_type, TensorType)
        qcast = _cast(quant.QuantizeCastOp, value, TensorType(element, value_type.get_shape()))
        dcast = _cast(quant.DequantizeCastOp, qcast.results[0], value_type)
        if anchor is None:
            block.insert_ops_before([qcast, dcast], block.first_op)
        else:
            block.insert_ops_after([qcast, dcast], anchor)
        value.replace_uses_with_if(dcast.results[0], lambda use: use.operation is not qcast)

    for argument in block.args:
        quantize_after(argument, None)
    for op in list(block.ops):
        if isinstance(op, nn.ConvOp):
            weight_op = op.operands[1].owner
            assert isinstance(weight_op, nn.ConstantOp)
            stored, element = scheme.quantize_weights(np.array(weight_op.array()), axis=0)
            constant = nn.ConstantOp.from_array(stored, location=weight_op.location)
            shape = stored.shape
            scast = _cast(quant.StorageCastOp, constant.results[0], TensorType(element, shape))
            dcast = _cast(
                quant.DequantizeCastOp, scast.results[0], TensorType(element.expressed_type, shape)
            )
            block.insert_ops_before([constant, scast, dcast], op)
            op.operands[1] = dcast.results[0]
        if isinstance(op, nn.NNOp) and not isinstance(op, nn.ConstantOp):
            quantize_after(op.results[0], op)
    return module


@pytest.fixture(scope="module")
def float_module() -> ModuleOp:
    return small_cnn()


@pytest.fixture(scope="module")
def stats(float_module: ModuleOp) -> CalibrationStats:
    return calibrate(float_module, samples(8), "minmax")


def test_quantized_tensors_are_keyed_by_the_float_value(
    float_module: ModuleOp, stats: CalibrationStats
) -> None:
    qdq = qdq_version(float_module, stats)
    tensors = quantized_tensors(_entry(qdq))
    activations = [t.key for t in tensors if not t.is_weight]
    weights = [t.key for t in tensors if t.is_weight]
    assert activations == ["arg:x"] + [f"{layer}#0" for layer in LAYERS]
    assert weights == ["w1#0", "w2#0", "w3#0"]


def test_good_scales_keep_every_tensor_close(
    float_module: ModuleOp, stats: CalibrationStats
) -> None:
    qdq = qdq_version(float_module, stats)
    report = error_report(float_module, qdq, samples(4, seed=7))
    assert report.samples == 4
    assert report.first_below() is None, report.format_text()
    assert len(report.tensors) == 13 and not report.unmatched
    for tensor in report.tensors:
        assert tensor.cosine > 0.999, tensor.key
        assert tensor.sqnr_db > 25, tensor.key
    conv1 = report.get("conv1#0")
    assert conv1 is not None and conv1.op == "nn.conv" and conv1.samples == 4
    # Input quantization error is at most half a step of the input's scale.
    step = scheme.activation_type(*stats.range("arg:x")).scale_values[0]
    x_error = report.get("arg:x")
    assert x_error is not None and x_error.max_abs_error <= step / 2 * (1 + 1e-6)
    weight = report.get("w2#0")
    assert weight is not None and weight.is_weight and weight.samples == 1
    output = report.get("fc#0")
    assert output is not None and output.is_output and report.outputs() == [output]


def test_report_names_the_layer_with_a_bad_scale(
    float_module: ModuleOp, stats: CalibrationStats
) -> None:
    # conv2's output type covers a twentieth of its range: most values saturate.
    qdq = qdq_version(float_module, stats, {"conv2#0": 0.05})
    report = error_report(float_module, qdq, samples(4, seed=7))
    first = report.first_below()
    assert first is not None and first.key == "conv2#0", report.format_text()
    assert first.op == "nn.conv"
    # Everything before it is fine; its error reaches the layers after it.
    before = [t for t in report.tensors if t.order < first.order]
    assert before and all(t.cosine >= 0.99 for t in before)
    assert report.get("relu2#0").cosine < 0.99  # type: ignore[union-attr]
    worst = report.by_cosine()[0]
    assert worst.cosine <= first.cosine and worst.cosine < 0.99
    lines = report.format_text().splitlines()
    assert "first below threshold: conv2#0 (nn.conv)" in lines[1]
    # The sorted table starts with the worst tensor, marked below the threshold.
    header = next(index for index, line in enumerate(lines) if line.split()[0] == "cosine")
    assert lines[header + 1].startswith("*") and f" {worst.key} " in lines[header + 1]


def test_a_threshold_picks_the_first_layer_below_it(
    float_module: ModuleOp, stats: CalibrationStats
) -> None:
    qdq = qdq_version(float_module, stats, {"conv3#0": 0.3})
    report = error_report(float_module, qdq, samples(2), threshold=0.9999)
    strict = report.first_below()
    assert strict is not None
    # A looser threshold finds the bad layer, and nothing before it.
    loose = report.first_below(0.99)
    assert loose is not None and loose.key == "conv3#0"
    assert strict.order <= loose.order


def test_errors_are_computed_as_documented() -> None:
    error = TensorError("t#0", "nn.relu", "i8", (4,), 0)
    reference = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    error.add(reference, np.array([1.0, 2.0, 3.0, 3.0], np.float32))
    error.add(reference, reference)
    cosine = (1 + 4 + 9 + 12) / (math.sqrt(30) * math.sqrt(1 + 4 + 9 + 9))
    assert error.cosine == pytest.approx((cosine + 1) / 2, rel=1e-12)
    assert error.worst_cosine == pytest.approx(cosine, rel=1e-12)
    assert error.mse == pytest.approx(1 / 8)
    assert error.max_abs_error == 1.0
    assert error.sqnr_db == pytest.approx(10 * math.log10(60 / 1))
    exact = TensorError("e#0", "nn.relu", "i8", (2,), 1)
    exact.add(np.zeros(2, np.float32), np.zeros(2, np.float32))
    assert exact.cosine == 1.0 and exact.sqnr_db == math.inf
    assert exact.to_json()["sqnr_db"] is None


def test_json_report(float_module: ModuleOp, stats: CalibrationStats, tmp_path) -> None:
    qdq = qdq_version(float_module, stats, {"conv2#0": 0.05})
    report = error_report(float_module, qdq, samples(2))
    path = tmp_path / "report.json"
    report.save(path)
    data = json.loads(path.read_text())
    assert data["schema"] == "irc-error-report/1"
    assert data["first_below_threshold"] == "conv2#0"
    assert data["threshold"] == 0.99 and data["samples"] == 2
    keys = [entry["key"] for entry in data["tensors"]]
    assert keys == [t.key for t in report.tensors]
    assert [entry["order"] for entry in data["tensors"]] == sorted(
        entry["order"] for entry in data["tensors"]
    )
    conv2 = next(entry for entry in data["tensors"] if entry["key"] == "conv2#0")
    assert conv2["cosine"] == report.get("conv2#0").cosine  # type: ignore[union-attr]
    assert conv2["type"].startswith("!quant.uniform<i8:f32")
    assert report.to_json_text() == path.read_text()


def test_report_on_parsed_qdq_text() -> None:
    """A QDQ module written as text: quantized tensors keyed by file:line:col."""
    from irc.ir.context import make_context
    from irc.ir.io import parse_module

    text = """
func.func @main(%x: tensor<1x4xf32> {irc.name = "x"}) -> (tensor<1x4xf32> {irc.name = "y"}) {
  %r = nn.relu %x : tensor<1x4xf32> loc("relu")
  %q = quant.qcast %r : tensor<1x4xf32> to tensor<1x4x!quant.uniform<i8:f32, 0.5:-128>>
  %d = quant.dcast %q : tensor<1x4x!quant.uniform<i8:f32, 0.5:-128>> to tensor<1x4xf32>
  func.return %d : tensor<1x4xf32>
}
"""
    float_text = """
func.func @main(%x: tensor<1x4xf32> {irc.name = "x"}) -> (tensor<1x4xf32> {irc.name = "y"}) {
  %r = nn.relu %x : tensor<1x4xf32> loc("relu")
  func.return %r : tensor<1x4xf32>
}
"""
    context = make_context()
    qdq = parse_module(text, context, "qdq.mlir")
    float_module = parse_module(float_text, context, "float.mlir")
    x = np.array([[-1.0, 0.3, 1.0, 200.0]], np.float32)
    report = error_report(float_module, qdq, [{"x": x}])
    (relu,) = report.tensors
    expected = np.array([0.0, 0.5, 1.0, 127.5])  # 0.3 rounds to 0.5; 200 saturates
    reference = np.maximum(x, 0).reshape(-1).astype(np.float64)
    assert relu.key == "relu#0" and relu.is_output
    assert relu.max_abs_error == pytest.approx(200 - 127.5)
    assert relu.mse == pytest.approx(np.mean((reference - expected) ** 2))
    np.testing.assert_allclose(
        run_function(qdq, {"x": x})["y"].reshape(-1), expected.astype(np.float32)
    )


def test_unmatched_tensors_are_listed(float_module: ModuleOp, stats: CalibrationStats) -> None:
    qdq = qdq_version(float_module, stats)
    # Rename one op of the quantized model: its tensor has no float counterpart.
    for op in _entry(qdq).walk():
        if isinstance(op, nn.ReluOp) and value_key(op.results[0]) == "relu2#0":
            op.location = NameLoc(StringAttr("renamed"), UnknownLoc())
    report = error_report(float_module, qdq, samples(1))
    (unmatched,) = report.unmatched
    assert (unmatched.key, unmatched.op) == ("renamed#0", "quant.qcast")
    assert unmatched.reason == "no float value has this key"
    assert report.get("relu2#0") is None
    assert "1 quantized tensors have no float counterpart (first: renamed#0" in (
        report.format_text()
    )


def test_bad_inputs_are_diagnosed(float_module: ModuleOp, stats: CalibrationStats) -> None:
    qdq = qdq_version(float_module, stats)
    with pytest.raises(IrcError, match="no input 'x'") as failure:
        error_report(float_module, qdq, [{"y": np.zeros((1, 3, 12, 12), np.float32)}])
    assert failure.value.diagnostics[0].hint
    with pytest.raises(IrcError, match="at least one sample"):
        error_report(float_module, qdq, [])
    with pytest.raises(IrcError, match="threshold"):
        error_report(float_module, qdq, samples(1), threshold=1.5)


def test_report_object_orders(float_module: ModuleOp, stats: CalibrationStats) -> None:
    qdq = qdq_version(float_module, stats, {"conv1#0": 0.2})
    report = error_report(float_module, qdq, samples(2))
    assert isinstance(report, ErrorReport)
    cosines = [t.cosine for t in report.by_cosine()]
    assert cosines == sorted(cosines)
    orders = [t.order for t in report.tensors]
    assert orders == sorted(orders)
    program = report.format_text(order="program", limit=3)
    assert "... 10 more" in program


def test_report_on_the_qnn_form() -> None:
    """qnn ops produce values of quantized types (storage integers at run time), keyed
    by their own location; plain i32 values are not reported."""
    from irc.ir.context import make_context
    from irc.ir.io import parse_module

    qtype = "tensor<1x4x!quant.uniform<i8:f32, 0.5:-10>>"
    text = f"""
func.func @main(%x: tensor<1x4xf32> {{irc.name = "x"}}) -> (tensor<1x4xf32>, tensor<1x4xi32>) {{
  %q = quant.qcast %x : tensor<1x4xf32> to {qtype}
  %r = qnn.clamp %q {{clamp_max = 127, clamp_min = -10}} : {qtype} loc("relu")
  %i = quant.scast %r : {qtype} to tensor<1x4xi8> loc("relu")
  %w = nn.cast %i {{to = i32}} : (tensor<1x4xi8>) -> tensor<1x4xi32> loc("widen")
  %d = quant.dcast %r : {qtype} to tensor<1x4xf32>
  func.return %d, %w : tensor<1x4xf32>, tensor<1x4xi32>
}}
"""
    float_text = """
func.func @main(%x: tensor<1x4xf32> {irc.name = "x"}) -> (tensor<1x4xf32>, tensor<1x4xi32>) {
  %r = nn.relu %x : tensor<1x4xf32> loc("relu")
  %w = nn.constant dense<0> : tensor<1x4xi32> loc("widen")
  func.return %r, %w : tensor<1x4xf32>, tensor<1x4xi32>
}
"""
    context = make_context()
    qnn_module = parse_module(text, context, "qnn.mlir")
    float_module = parse_module(float_text, context, "float.mlir")
    x = np.array([[-3.0, 0.7, 2.0, 100.0]], np.float32)
    report = error_report(float_module, qnn_module, [{"x": x}])
    assert [t.key for t in report.tensors] == ["arg:x", "relu#0"]
    relu = report.get("relu#0")
    assert relu is not None and relu.op == "nn.relu"
    # stored = clamp(round(x / 0.5) - 10, -10, 127): 0.7 -> 0.5, 100 -> 68.5.
    expected = np.array([0.0, 0.5, 2.0, 68.5])
    assert relu.max_abs_error == pytest.approx(100 - 68.5)
    assert relu.mse == pytest.approx(np.mean((np.maximum(x[0], 0) - expected) ** 2), rel=1e-6)
