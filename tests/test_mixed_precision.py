"""Mixed precision and the irc-quantize driver.

The test network has one deliberately sensitive layer: a conv whose weights include,
in every output channel, one huge weight on an input channel that is always zero. The
huge weight never changes the float result, but it sets the channel's symmetric
int8 scale, so every other weight of the layer rounds to a few levels and the int8
model is far from the float one. Keeping that one layer float repairs it; the
automatic mode must find it, first, and stop there.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from test_quantize import (
    TEST_SEEDS,
    NetBuilder,
    calibrated,
    output_cosine,
    quantized,
    random_weights,
    samples_for,
)
from xdsl.dialects.builtin import ModuleOp, StringAttr

from irc.diagnostics import IrcError
from irc.dialects import nn, qnn
from irc.interp import run_function
from irc.ir.context import make_context
from irc.ir.io import PrintOptions, parse_module, print_module
from irc.ir.placement import DEVICE_ATTR
from irc.ir.weights import WeightsMode
from irc.quantize.mixed_precision import (
    auto_mixed_precision,
    output_metric,
    parse_goal,
    quantizable_layers,
    quantize_keeping_float,
)
from irc.quantize.qdq import QuantizeConfig, layer_name
from irc.targets import load_target
from irc.tools.quantize import main
from irc.transforms.lower_to_qnn import lower_module

OUTLIER = 25.0
"""The huge weight of the sensitive layer (the others are about 0.1 to 0.5)."""


def sensitive_network(seed: int = 0) -> ModuleOp:
    """pre (channel 0 always zero) -> sensitive (huge weights on channel 0) -> post."""
    rng = np.random.default_rng(seed)
    relu = nn.ActivationAttr.make("relu")
    net = NetBuilder(x=(1, 4, 8, 8))
    pre_weights = random_weights(rng, 8, 4, 1, 1)
    pre_weights[0] = 0.0  # output channel 0 of "pre" is exactly zero
    pre_bias = rng.normal(0, 0.1, 8).astype(np.float32)
    pre_bias[0] = 0.0
    pre = net.op(
        nn.ConvOp,
        [net.args["x"], net.const(pre_weights, "pre_w"), net.const(pre_bias, "pre_b")],
        "pre",
        activation=relu,
    )
    weights = random_weights(rng, 8, 8, 3, 3)
    weights[:, 0, 1, 1] = OUTLIER
    sensitive = net.op(
        nn.ConvOp,
        [pre, net.const(weights, "sensitive_w"), net.const(rng.normal(0, 0.1, 8), "sensitive_b")],
        "sensitive",
        pads=[1, 1, 1, 1],
        activation=relu,
    )
    post = net.op(
        nn.ConvOp,
        [sensitive, net.const(random_weights(rng, 4, 8, 1, 1), "post_w")],
        "post",
    )
    return net.module(post)


SAMPLES = 4


def test_the_sensitive_layer_is_what_costs_accuracy() -> None:
    module = sensitive_network()
    stats = calibrated(module)
    assert output_cosine(module, quantized(module, stats), TEST_SEEDS) < 0.98
    config = QuantizeConfig(exclude_names=frozenset({"sensitive"}))
    assert output_cosine(module, quantized(module, stats, config), TEST_SEEDS) > 0.999


@pytest.mark.parametrize(("metric", "threshold"), [("cosine", 0.99), ("sqnr", 25.0)])
def test_auto_keeps_the_sensitive_layer_float(metric: str, threshold: float) -> None:
    module = sensitive_network()
    stats = calibrated(module)
    samples = samples_for(module, range(SAMPLES))
    result = auto_mixed_precision(module, stats, samples, metric, threshold, progress=False)  # type: ignore[arg-type]
    assert [layer.name for layer in result.kept_float] == ["sensitive"]
    assert result.quantized_metric < threshold <= result.final_metric
    assert result.met
    # One evaluation with everything int8, one per layer, one per layer kept float.
    assert result.evaluations == 1 + 3 + 1
    assert result.sensitivities[0].layer.name == "sensitive"
    assert result.sensitivities[0].gain > 0
    assert "kept float: sensitive (nn.conv)" in result.format_text()
    # Deterministic: the same samples give the same choice and the same numbers.
    again = auto_mixed_precision(module, stats, samples, metric, threshold, progress=False)  # type: ignore[arg-type]
    assert again.kept_float == result.kept_float
    assert again.final_metric == result.final_metric
    # The chosen layers, kept float, give the measured metric.
    qdq, summary = quantize_keeping_float(module, stats, QuantizeConfig(), result.kept_float)
    assert [layer_name(op) for op in summary.float_reasons] == ["sensitive"]
    reference = [run_function(module, sample) for sample in samples]
    outputs = [run_function(qdq, sample) for sample in samples]
    assert output_metric(reference, outputs, metric) == result.final_metric  # type: ignore[arg-type]


def test_auto_does_nothing_when_the_goal_is_met() -> None:
    module = sensitive_network()
    stats = calibrated(module)
    samples = samples_for(module, range(SAMPLES))
    result = auto_mixed_precision(module, stats, samples, "cosine", 0.5, progress=False)
    assert result.kept_float == [] and result.evaluations == 1 and result.met


def test_auto_respects_exclusions_and_the_layer_limit() -> None:
    module = sensitive_network()
    stats = calibrated(module)
    samples = samples_for(module, range(SAMPLES))
    config = QuantizeConfig(exclude_names=frozenset({"post"}))
    assert [layer.name for layer in quantizable_layers(module, stats, config)] == [
        "pre",
        "sensitive",
    ]
    # An unreachable goal with at most one layer float: the most sensitive one.
    result = auto_mixed_precision(
        module, stats, samples, "cosine", 1.0, config=config, max_layers=1, progress=False
    )
    assert [layer.name for layer in result.kept_float] == ["sensitive"]
    assert not result.met


def test_goals() -> None:
    assert parse_goal("cosine=0.99") == ("cosine", 0.99)
    assert parse_goal("sqnr=30") == ("sqnr", 30.0)
    for bad in ("cosine", "psnr=3", "cosine=high", "cosine=1.5"):
        with pytest.raises(IrcError):
            parse_goal(bad)


def test_float_layers_go_to_the_cpu_on_a_target_without_fp16() -> None:
    """The backend table places a layer kept float by the target's data types, and
    says why it is float; partition marks it."""
    from irc import backend
    from irc.transforms.partition import PartitionPass

    module = sensitive_network()
    stats = calibrated(module)
    config = QuantizeConfig(exclude_names=frozenset({"sensitive"}))
    integer = quantized(module, stats, config)
    lower_module(integer, None)
    (conv,) = [op for op in integer.walk() if isinstance(op, nn.ConvOp)]
    assert layer_name(conv) == "sensitive"
    # edge-2tops computes in fp16: only the layout keeps this float conv off its NPU.
    assert backend.place(conv, load_target("edge-2tops")).reasons == (
        'nn.conv layout="nchw": irc tiles channels-last (nhwc) convolutions only '
        "(convert-layout makes them)",
    )
    placement = backend.place(conv, load_target("npu-demo"))
    assert placement.device == "cpu"
    assert placement.reasons == (
        "nn.conv computes in float (excluded by name ('sensitive')): target npu-demo "
        "computes in integers only (no fp16)",
        'nn.conv layout="nchw": irc tiles channels-last (nhwc) convolutions only '
        "(convert-layout makes them)",
    )
    PartitionPass(target="npu-demo", outline=False).apply(make_context(), integer)
    assert conv.attributes[DEVICE_ATTR] == StringAttr("cpu")


# --------------------------------------------------------------------------------------
# irc-quantize


def _write_model(module: ModuleOp, path: Path) -> None:
    stream = io.StringIO()
    print_module(module, stream, PrintOptions(weights=WeightsMode.RESOURCE, debuginfo=True))
    path.write_text(stream.getvalue())


def _calibration_data(module: ModuleOp, path: Path, count: int = 8) -> None:
    samples = samples_for(module, range(count))
    np.savez(path, x=np.stack([sample["x"] for sample in samples]))


def test_irc_quantize_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    module = sensitive_network()
    model, data = tmp_path / "model.mlir", tmp_path / "calib.npz"
    _write_model(module, model)
    _calibration_data(module, data)
    output, report, stats = tmp_path / "int8.mlir", tmp_path / "report.txt", tmp_path / "s.json"
    status = main(
        [
            str(model),
            "--data",
            str(data),
            "--auto",
            "cosine=0.99",
            "--target",
            "npu-demo",
            "--report",
            str(report),
            "--save-stats",
            str(stats),
            "--no-progress",
            "--weights",
            "resource",
            "-o",
            str(output),
        ]
    )
    messages = capsys.readouterr().err
    assert status == 0, messages
    assert "kept float: sensitive (nn.conv)" in messages
    assert "1 float (1 x kept float by mixed precision)" in messages
    assert "target npu-demo has no fp16: 1 float ops run on the host" in messages
    assert "output 'output_0': cosine" in messages
    assert report.read_text().startswith("layer-wise error:")
    assert stats.is_file()
    # The int8 module parses, runs, and is close to the float model.
    integer = parse_module(output.read_text(), make_context(), str(output))
    ops = [op.name for op in integer.walk()]
    assert ops.count("qnn.conv") == 2 and ops.count("nn.conv") == 1
    assert output_cosine(module, integer, TEST_SEEDS) > 0.99
    # The statistics saved can be given back instead of calibrating.
    again = tmp_path / "again.mlir"
    assert (
        main([str(model), "--stats", str(stats), "--exclude-names", "sensitive", "-o", str(again)])
        == 0
    )
    assert (
        sum(
            isinstance(op, qnn.ConvOp)
            for op in parse_module(
                again.read_text(), make_context(), str(again), weights_dir=tmp_path
            ).walk()
        )
        == 2
    )


def test_irc_quantize_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    module = sensitive_network()
    model = tmp_path / "model.mlir"
    _write_model(module, model)
    assert main([str(model)]) == 1
    assert "give calibration data (--data PATH) or statistics" in capsys.readouterr().err
    stats = tmp_path / "s.json"
    calibrated(module).save(stats)
    assert main([str(model), "--stats", str(stats), "--auto", "cosine=0.9"]) == 1
    assert "--auto runs the model on samples" in capsys.readouterr().err
    data = tmp_path / "calib.npz"
    _calibration_data(module, data)
    assert main([str(model), "--data", str(data), "--auto", "cosine=2"]) == 1
    assert "a cosine threshold must be in (0, 1]" in capsys.readouterr().err
    assert main([str(tmp_path / "missing.onnx"), "--data", str(data)]) == 1
    assert "no such file" in capsys.readouterr().err
