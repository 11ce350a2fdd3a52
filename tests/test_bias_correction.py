"""Bias correction: calibration's channel means, the correction, and what it removes.

Rounding a layer's weights to int8 shifts the mean of each output channel by
E[(W_q - W) x]; `quantize` subtracts that shift from the bias, computed from the mean
of the layer's input per channel that calibration records (`TensorStats.channel_mean`).
"""

from __future__ import annotations

import numpy as np
import pytest
from test_quantize import NetBuilder, quantized, random_weights, small_cnn
from xdsl.dialects.builtin import ModuleOp

from irc.dialects import nn
from irc.interp import run_function
from irc.quantize.calibration import CalibrationStats, ObserverConfig, calibrate
from irc.quantize.qdq import QuantizeConfig, bias_correction
from irc.quantize.scheme import quantize_weights

RNG = np.random.default_rng(7)


def shifted_samples(shape: tuple[int, ...], count: int, seed: int) -> list[dict[str, np.ndarray]]:
    """Inputs with a mean of 1 per element (standard normal ones have mean 0, for
    which there is nothing to correct)."""
    rng = np.random.default_rng(seed)
    return [{"x": rng.normal(1.0, 1.0, shape).astype(np.float32)} for _ in range(count)]


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
def test_calibration_records_the_channel_means_of_conv_and_gemm_inputs(layout: str) -> None:
    module = small_cnn(layout=layout)
    shape = (1, 8, 8, 3) if layout == "nhwc" else (1, 3, 8, 8)
    samples = shifted_samples(shape, 3, seed=1)
    stats = calibrate(module, samples, progress=False)
    stacked = np.stack([sample["x"] for sample in samples]).astype(np.float64)
    axis = 4 if layout == "nhwc" else 2  # the channel axis, after the sample axis
    expected = np.moveaxis(stacked, axis, 0).reshape(3, -1).mean(axis=1)
    x = stats.get("arg:x")
    assert x is not None and x.channel_mean is not None
    np.testing.assert_allclose(x.channel_mean, expected, rtol=1e-12)
    # The gemm's input (the flattened pooled features) has one mean per feature; the
    # conv results that only a concat reads have none.
    flat = stats.get("flat#0")
    assert flat is not None and flat.channel_mean is not None and len(flat.channel_mean) == 10
    joined = stats.get("joined#0")
    assert joined is not None and joined.channel_mean is None
    # Saved and loaded, and with ranges from another observer, the means stay.
    loaded = CalibrationStats.from_json_text(stats.to_json_text())
    assert loaded.get("arg:x").channel_mean == x.channel_mean  # type: ignore[union-attr]
    rebuilt = loaded.with_observer(ObserverConfig("minmax"))
    assert rebuilt.get("arg:x").channel_mean == x.channel_mean  # type: ignore[union-attr]


CORRECTION_CASES = {
    # name: (op, input shape, weight shape, properties)
    "conv": (nn.ConvOp, (1, 4, 5, 5), (6, 4, 3, 3), {}),
    "conv groups": (nn.ConvOp, (1, 4, 5, 5), (6, 2, 3, 3), {"group": 2}),
    "conv nhwc groups": (nn.ConvOp, (1, 5, 5, 4), (6, 3, 3, 2), {"group": 2, "layout": "nhwc"}),
    "depthwise": (nn.ConvOp, (1, 4, 5, 5), (4, 1, 3, 3), {"group": 4}),
    "gemm": (nn.GemmOp, (2, 5), (5, 3), {}),
    "gemm trans_b": (nn.GemmOp, (2, 5), (3, 5), {"trans_b": True}),
}


@pytest.mark.parametrize("case", list(CORRECTION_CASES))
def test_correction_is_the_layer_applied_to_the_weight_error(case: str) -> None:
    """On an input equal to the channel means everywhere, the layer with weights
    W_q - W computes the correction at every output position."""
    op_type, input_shape, weight_shape, props = CORRECTION_CASES[case]
    weight = RNG.standard_normal(weight_shape).astype(np.float32)
    axis = 1 if op_type is nn.GemmOp and not props.get("trans_b") else 0
    stored, element = quantize_weights(weight, axis)
    scales = np.asarray(element.scale_values, np.float64)
    scale_shape = [1] * weight.ndim
    scale_shape[axis] = -1
    dequantized = (stored * scales.reshape(scale_shape)).astype(np.float32)
    channels_last = props.get("layout") == "nhwc" or op_type is nn.GemmOp
    channels = input_shape[-1] if channels_last else input_shape[1]
    mean = RNG.normal(1.0, 1.0, channels)

    net = NetBuilder(x=input_shape)
    error = (dequantized.astype(np.float64) - weight).astype(np.float32)
    layer = net.op(op_type, [net.args["x"], net.const(error, "w")], "layer", **props)
    module = net.module(layer)
    shape = [1] * len(input_shape)
    shape[-1 if channels_last else 1] = channels
    x = np.broadcast_to(mean.reshape(shape), input_shape).astype(np.float32)
    (output,) = run_function(module, {"x": x}).values()

    correction = bias_correction(module_op(module, op_type), weight, dequantized, mean)
    assert correction is not None
    output_channels = np.moveaxis(output, -1 if channels_last else 1, 0).reshape(
        len(correction), -1
    )
    np.testing.assert_allclose(
        output_channels, np.repeat(correction[:, None], output_channels.shape[1], 1), atol=1e-4
    )


def module_op(module: ModuleOp, op_type: type[nn.NNOp]) -> nn.NNOp:
    return next(op for op in module.walk() if isinstance(op, op_type))


def test_correction_needs_matching_shapes() -> None:
    net = NetBuilder(x=(1, 4, 5, 5))
    weight = RNG.standard_normal((6, 4, 3, 3)).astype(np.float32)
    module = net.module(net.op(nn.ConvOp, [net.args["x"], net.const(weight, "w")], "layer"))
    assert bias_correction(module_op(module, nn.ConvOp), weight, weight, np.ones(3)) is None


def single_conv(seed: int = 0) -> ModuleOp:
    """One 3x3 conv with a bias, 16 -> 8 channels."""
    rng = np.random.default_rng(seed)
    net = NetBuilder(x=(1, 16, 6, 6))
    conv = net.op(
        nn.ConvOp,
        [
            net.args["x"],
            net.const(random_weights(rng, 8, 16, 3, 3), "w"),
            net.const(rng.normal(0, 0.1, 8), "b"),
        ],
        "conv",
        pads=[1, 1, 1, 1],
    )
    return net.module(conv)


def test_bias_correction_removes_the_mean_error_of_the_weights() -> None:
    module = single_conv()
    samples = shifted_samples((1, 16, 6, 6), 8, seed=2)
    stats = calibrate(module, samples, progress=False)
    corrected = quantized(module, stats)
    plain = quantized(module, stats, QuantizeConfig(bias_correction=False))

    def mean_error(candidate: ModuleOp) -> np.ndarray:
        """The mean of (int8 - float) per output channel over the samples, interior
        positions only (the correction treats padded borders like the interior)."""
        errors = []
        for sample in samples:
            (expected,) = run_function(module, sample).values()
            (actual,) = run_function(candidate, sample).values()
            errors.append((actual - expected)[:, :, 1:-1, 1:-1].astype(np.float64))
        return np.moveaxis(np.stack(errors), 2, 0).reshape(8, -1).mean(axis=1)

    before, after = np.abs(mean_error(plain)), np.abs(mean_error(corrected))
    # Measured: the mean error per channel drops from 0.0083 to 0.0012 (what remains
    # comes from rounding the input and the output).
    assert after.mean() < 0.4 * before.mean(), (before, after)


def test_a_corrected_bias_is_not_the_first_layer_below_the_threshold() -> None:
    """The report lists the corrected bias (it differs from the float one on purpose)
    but does not name it as where the model starts to drift."""
    from irc.quantize.report import error_report

    module = single_conv()
    samples = shifted_samples((1, 16, 6, 6), 8, seed=2)
    corrected = quantized(module, calibrate(module, samples, progress=False))
    report = error_report(module, corrected, samples[:2], threshold=0.999)
    bias = report.get("b#0")
    assert bias is not None and bias.is_weight and bias.cosine < 0.999  # measured 0.995
    assert report.below() == [bias]
    assert report.first_below() is None  # every computed tensor is above 0.999
