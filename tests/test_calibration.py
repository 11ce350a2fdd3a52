"""Calibration: observers on distributions with known answers, exact histogram merging,
the statistics file, calibration sets in every format (and broken ones), a light
model, and the irc-calibrate command."""

from __future__ import annotations

import io
import json
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import (
    ArrayAttr,
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

from irc.diagnostics import IrcError, Severity, collect_diagnostics
from irc.dialects import nn
from irc.importers.onnx import import_model
from irc.interp import function_signature
from irc.ir.context import make_context
from irc.ir.io import PrintOptions, module_to_string, parse_module
from irc.ir.weights import WeightsMode
from irc.quantize import scheme
from irc.quantize.calibration import (
    CalibrationStats,
    calibrate,
    load_samples,
    observed_values,
    value_key,
)
from irc.quantize.observers import (
    Histogram,
    MinMaxObserver,
    MovingAverageObserver,
    ObserverConfig,
    entropy_range,
    mse_range,
    percentile_range,
)
from irc.testing.models import light_model, materialize_light_model
from irc.testing.reference import random_inputs
from irc.tools.calibrate import main as calibrate_main

ROOT = Path(__file__).resolve().parents[1]
RNG = np.random.default_rng(11)


def histogram_of(values: np.ndarray, chunks: int = 5, bins: int = 2048) -> Histogram:
    histogram = Histogram(bins)
    for chunk in np.array_split(values, chunks):
        histogram.add(chunk)
    return histogram


# --------------------------------------------------------------------------------------
# Observers


def test_minmax_is_exact() -> None:
    observer = MinMaxObserver()
    chunks = [RNG.standard_normal((2, 50)).astype(np.float32) for _ in range(4)]
    chunks[2][1, 7] = -9.25
    chunks[3][0, 0] = 7.125
    chunks[1][0, 3] = np.nan  # ignored
    for chunk in chunks:
        observer.observe(chunk)
    assert observer.calibrated_range() == (-9.25, 7.125)
    assert observer.samples == 4


def test_moving_average_follows_its_formula() -> None:
    momentum = 0.8
    observer = MovingAverageObserver(momentum)
    extremes = [(-1.0, 2.0), (-3.0, 1.0), (-0.5, 4.0), (-2.0, 2.5)]
    for low, high in extremes:
        observer.observe(np.array([low, (low + high) / 2, high], np.float32))
    expected_low, expected_high = extremes[0]
    for low, high in extremes[1:]:
        expected_low = momentum * expected_low + (1 - momentum) * low
        expected_high = momentum * expected_high + (1 - momentum) * high
    assert observer.calibrated_range() == pytest.approx((expected_low, expected_high), rel=1e-15)
    # The extremes themselves are kept too.
    assert (observer.low, observer.high) == (-3.0, 4.0)


def test_percentile_of_a_uniform_grid() -> None:
    values = ((np.arange(1_000_000) + 0.5) / 1_000_000).astype(np.float32)
    histogram = histogram_of(RNG.permutation(values), chunks=7)
    low, high = percentile_range(histogram, 99.0)
    assert low == pytest.approx(0.01, abs=histogram.width)
    assert high == pytest.approx(0.99, abs=histogram.width)
    # Linear interpolation inside a bin is exact for evenly spread values.
    assert abs(high - 0.99) < 1e-5 and abs(low - 0.01) < 1e-5


def test_percentile_of_a_normal_distribution() -> None:
    values = RNG.standard_normal(2_000_000).astype(np.float32)
    histogram = histogram_of(values)
    low, high = percentile_range(histogram, 99.9)
    reference_low, reference_high = np.percentile(values, [0.1, 99.9])
    assert low == pytest.approx(reference_low, abs=histogram.width)
    assert high == pytest.approx(reference_high, abs=histogram.width)
    # The 99.9th percentile of N(0, 1) is 3.0902; sampling error is about 0.01.
    assert high == pytest.approx(3.0902, abs=0.03) and low == pytest.approx(-3.0902, abs=0.03)


def test_percentile_keeps_exact_zeros_at_zero() -> None:
    values = np.maximum(RNG.standard_normal(100_000), 0).astype(np.float32)
    low, high = percentile_range(histogram_of(values), 99.0)
    assert low == 0.0
    assert high == pytest.approx(np.percentile(values, 99.0), rel=1e-2)


@pytest.mark.parametrize("choose", [entropy_range, mse_range], ids=["entropy", "mse"])
def test_uniform_data_keeps_the_full_range(choose) -> None:
    values = RNG.uniform(-1.0, 3.0, 1_000_000).astype(np.float32)
    histogram = histogram_of(values)
    low, high = choose(histogram)
    step = (histogram.high - histogram.low) / 255
    assert low == pytest.approx(histogram.low, abs=step)
    assert high == pytest.approx(histogram.high, abs=step)


@pytest.mark.parametrize("choose", [entropy_range, mse_range], ids=["entropy", "mse"])
def test_heavy_tails_are_clipped(choose) -> None:
    values = RNG.standard_t(3, 1_000_000).astype(np.float32)
    histogram = histogram_of(values)
    low, high = choose(histogram)
    assert histogram.low < low < 0 < high < histogram.high
    assert high - low < 0.8 * (histogram.high - histogram.low)
    # Never tighter than the bulk of the data.
    assert high > np.percentile(values, 99) and low < np.percentile(values, 1)


def _quantization_mse(values: np.ndarray, low: float, high: float) -> float:
    from irc.interp.quant import dequantize, quantize

    element = scheme.activation_type(low, high)
    restored = dequantize(quantize(values, element), element).astype(np.float64)
    return float(np.mean((restored - values) ** 2))


def test_mse_range_is_the_best_of_a_brute_force_search() -> None:
    # An asymmetric heavy-tailed tensor; the real int8 error (quantize, dequantize) of
    # the chosen range is compared with a grid of ranges.
    values = np.concatenate([RNG.laplace(0.5, 1.0, 200_000), RNG.exponential(6.0, 2_000)]).astype(
        np.float32
    )
    low, high = mse_range(histogram_of(values))
    chosen = _quantization_mse(values, low, high)
    grid = [
        _quantization_mse(values, values.min() * a, values.max() * b)
        for a in np.linspace(0.2, 1.0, 17)
        for b in np.linspace(0.2, 1.0, 17)
    ]
    assert chosen <= min(grid) * 1.02
    assert chosen < _quantization_mse(values, values.min(), values.max()) * 0.9


@pytest.mark.parametrize("choose", [entropy_range, mse_range], ids=["entropy", "mse"])
def test_one_sided_tail_is_clipped_on_its_side_only(choose) -> None:
    # After a ReLU: half exact zeros and a heavy tail on the positive side.
    values = np.maximum(RNG.standard_t(3, 1_000_000), 0).astype(np.float32)
    histogram = histogram_of(values)
    low, high = choose(histogram)
    assert low == 0.0
    assert np.percentile(values, 99) < high < 0.8 * histogram.high


def test_mse_range_matches_the_analytic_optimum_for_laplace() -> None:
    # For Laplace(0, b) clipped to [-a, a] with 256 levels, the expected error is
    # 2 b^2 exp(-a / b) (clipping) + (2a / 255)^2 / 12 (rounding); its minimum is at
    # a = 9.9 b (the ACIQ result for 8 bits).
    b = 1.0
    candidates = np.linspace(5, 15, 100_001)
    expected = 2 * b**2 * np.exp(-candidates / b) + (2 * candidates / 255) ** 2 / 12
    optimum = candidates[np.argmin(expected)]
    values = RNG.laplace(0, b, 4_000_000).astype(np.float32)
    low, high = mse_range(histogram_of(values))
    assert optimum == pytest.approx(9.9, abs=0.1)
    assert high == pytest.approx(optimum, rel=0.04)
    assert -low == pytest.approx(optimum, rel=0.04)


# --------------------------------------------------------------------------------------
# Histograms


def _same(first: Histogram, second: Histogram) -> bool:
    return (
        first.exponent == second.exponent
        and first.first == second.first
        and np.array_equal(first.counts, second.counts)
        and (first.low, first.high, first.zeros) == (second.low, second.high, second.zeros)
    )


def test_merged_histograms_equal_the_one_shot_histogram() -> None:
    # Ranges that grow by orders of magnitude force the bins to coarsen several times.
    chunks = [
        RNG.standard_normal(1000).astype(np.float32) * scale for scale in (0.001, 1, 0.1, 300, 5)
    ]
    chunks[1][:10] = 0.0
    one_shot = Histogram(2048)
    one_shot.add(np.concatenate(chunks))
    for order in ([0, 1, 2, 3, 4], [3, 0, 4, 2, 1], [4, 3, 2, 1, 0]):
        streamed = Histogram(2048)
        for index in order:
            streamed.add(chunks[index])
        assert _same(streamed, one_shot), order
    # Histograms built apart and merged.
    left, right = Histogram(2048), Histogram(2048)
    for chunk in chunks[:2]:
        left.add(chunk)
    for chunk in chunks[2:]:
        right.add(chunk)
    left.merge(right)
    assert _same(left, one_shot)
    assert one_shot.total == 5000 and one_shot.zeros == 10
    assert one_shot.counts.size <= 2048


def test_histogram_memory_does_not_grow_with_samples() -> None:
    histogram = Histogram(512)
    for index in range(200):
        histogram.add(RNG.standard_normal(4096).astype(np.float32) * (1 + index))
        assert histogram.counts.size <= 512
    assert histogram.total == 200 * 4096


def test_histogram_ignores_non_finite_values() -> None:
    histogram = Histogram(2048)
    histogram.add(np.array([1.0, np.inf, -np.inf, np.nan, -2.0], np.float32))
    assert (histogram.low, histogram.high, histogram.total) == (-2.0, 1.0, 2)


def test_histogram_of_subnormal_float64_values() -> None:
    """float64 data near 1e-310 (the pytorch-operator add cases): bins of 2^-1051 and
    below, whose inverse overflows a float, still count every value exactly."""
    values = np.array([1.4e-322, 2.0798788e-316, 6.9464868025519e-310, 0.0])
    histogram = Histogram(2048)
    histogram.add(values)
    assert (histogram.low, histogram.high, histogram.total) == (0.0, values.max(), 4)
    assert histogram.counts.sum() == 4 and histogram.counts[0] >= 2


def test_constant_tensor_histogram() -> None:
    histogram = histogram_of(np.full(1000, 0.75, np.float32))
    assert histogram.counts.tolist() == [1000]
    assert percentile_range(histogram, 99.99) == (0.75, 0.75)
    assert entropy_range(histogram) == (0.75, 0.75)
    assert mse_range(histogram) == (0.75, 0.75)


# --------------------------------------------------------------------------------------
# Models


def _loc(name: str) -> NameLoc:
    return NameLoc(StringAttr(name), UnknownLoc())


def elementwise_model(inputs: list[str], shape: tuple[int, ...] = (1, 4, 6)) -> ModuleOp:
    """relu(sum of the inputs) * 2, each op located by name (add, relu, scale)."""
    tensor = TensorType(f32, shape)
    block = Block(arg_types=[tensor] * len(inputs))
    value: SSAValue = block.args[0]

    def add(op: Operation) -> SSAValue:
        block.add_op(op)
        return op.results[0]

    for argument in block.args[1:]:
        value = add(nn.AddOp.build([value, argument], location=_loc("add")))
    value = add(nn.ReluOp.build([value], location=_loc("relu")))
    two = add(nn.ConstantOp.from_array(np.array(2.0, np.float32), location=_loc("two")))
    value = add(nn.MulOp.build([value, two], location=_loc("scale")))
    block.add_op(ReturnOp(value))

    def names(items: list[str]) -> ArrayAttr:
        return ArrayAttr([DictionaryAttr({"irc.name": StringAttr(item)}) for item in items])

    function = FuncOp(
        "main",
        ([tensor] * len(inputs), [tensor]),
        Region(block),
        arg_attrs=names(inputs),
        res_attrs=names(["out"]),
    )
    return ModuleOp([function])


def _function(module: ModuleOp) -> FuncOp:
    return next(op for op in module.ops if isinstance(op, FuncOp))


def test_value_keys() -> None:
    module = elementwise_model(["a", "b"])
    keys = sorted(observed_values(_function(module)).values())
    assert keys == ["add#0", "arg:a", "arg:b", "relu#0", "scale#0"]  # no constant
    text = """
func.func @main(%x: tensor<2xf32> {irc.name = "x"}, %y: tensor<2xf32>) -> tensor<2xf32> {
  %r = nn.relu %x : tensor<2xf32>
  %s = nn.relu %r : tensor<2xf32> loc("named")
  func.return %s : tensor<2xf32>
}
"""
    parsed = parse_module(text, make_context(), "model.mlir")
    function = _function(parsed)
    block = function.body.blocks.first
    assert block is not None
    assert [value_key(argument) for argument in block.args] == ["arg:x", "arg:arg1"]
    relu, named = list(block.ops)[:2]
    assert value_key(relu.results[0]) == "model.mlir:3:3#0"
    assert value_key(named.results[0]) == "named#0"


def test_ops_sharing_a_location_are_keyed_by_the_last() -> None:
    module = elementwise_model(["a"])
    function = _function(module)
    for op in function.walk():
        if isinstance(op, nn.ReluOp):
            op.location = _loc("scale")  # relu and mul now share a location
    observed = observed_values(function)
    by_key = {key: value for value, key in observed.items()}
    assert sorted(by_key) == ["arg:a", "scale#0"]
    assert isinstance(by_key["scale#0"].owner, nn.MulOp)


def test_calibrate_records_every_nn_result_and_argument() -> None:
    module = elementwise_model(["a", "b"])
    samples = [
        {
            "a": RNG.standard_normal((1, 4, 6)).astype(np.float32),
            "b": np.ones((1, 4, 6), np.float32),
        }
        for _ in range(3)
    ]
    stats = calibrate(module, samples, "minmax")
    assert stats.samples == 3 and sorted(stats.tensors) == [
        "add#0",
        "arg:a",
        "arg:b",
        "relu#0",
        "scale#0",
    ]
    a = np.stack([sample["a"] for sample in samples])
    assert stats.range("arg:a") == (float(a.min()), float(a.max()))
    assert stats.range("add#0") == (float((a + 1).min()), float((a + 1).max()))
    assert stats.range("scale#0") == (
        float(np.maximum(a + 1, 0).min() * 2),
        float(np.maximum(a + 1, 0).max() * 2),
    )
    entry = stats.tensors["scale#0"]
    assert entry.op == "nn.mul" and entry.shape == (1, 4, 6) and entry.samples == 3


def test_unknown_tensor_is_a_diagnostic() -> None:
    stats = calibrate(elementwise_model(["a"]), [{"a": np.ones((1, 4, 6), np.float32)}])
    with pytest.raises(IrcError, match="no calibration statistics for tensor 'conv9#0'") as failure:
        stats.range("conv9#0")
    assert "calibrate the model" in (failure.value.diagnostics[0].hint or "")


# --------------------------------------------------------------------------------------
# The statistics file


@pytest.mark.parametrize("observer", ["minmax", "moving-average", "percentile", "entropy", "mse"])
def test_statistics_round_trip_and_are_deterministic(observer: str, tmp_path: Path) -> None:
    module = elementwise_model(["a", "b"])
    rng = np.random.default_rng(3)
    samples = [
        {"a": rng.standard_normal((1, 4, 6)), "b": rng.laplace(size=(1, 4, 6))} for _ in range(5)
    ]
    first = calibrate(module, samples, observer)
    second = calibrate(elementwise_model(["a", "b"]), samples, observer)
    assert first.to_json_text() == second.to_json_text()
    path = tmp_path / "stats.json"
    first.save(path)
    loaded = CalibrationStats.load(path)
    assert loaded.to_json_text() == path.read_text()
    data = json.loads(path.read_text())
    assert data["schema"] == "irc-calibration/1" and data["samples"] == 5
    assert data["observer"]["name"] == observer
    assert list(data["tensors"]) == sorted(data["tensors"])
    for key, tensor in first.tensors.items():
        assert loaded.range(key) == tensor.range
        # Quantizing again from the file gives the same types.
        assert scheme.activation_type(*loaded.range(key)) == scheme.activation_type(*tensor.range)
        if first.observer.keeps_histogram:
            histogram, reloaded = first.histogram(key), loaded.histogram(key)
            assert histogram is not None and reloaded is not None and _same(histogram, reloaded)


def test_histogram_statistics_can_be_recomputed_with_another_observer() -> None:
    module = elementwise_model(["a"])
    samples = [{"a": RNG.standard_t(3, (1, 4, 6)).astype(np.float32)} for _ in range(20)]
    from_percentile = calibrate(module, samples, ObserverConfig("percentile", percentile=99.0))
    for name in ("entropy", "mse", "minmax"):
        direct = calibrate(module, samples, name)
        assert from_percentile.with_observer(ObserverConfig(name)).to_json_text() == (
            direct.to_json_text()
        )
    with pytest.raises(IrcError, match="cannot be computed"):
        from_percentile.with_observer(ObserverConfig("moving-average"))
    with pytest.raises(IrcError, match="cannot be computed"):
        calibrate(module, samples, "minmax").with_observer(ObserverConfig("entropy"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"schema": "other/2"}', "not a calibration statistics file"),
        ('{"schema": "irc-calibration/1", "observer": {"name": "minmax"}}', "malformed"),
        (
            '{"schema": "irc-calibration/1", "observer": {"name": "best"}, "samples": 1, '
            '"tensors": {}}',
            "unknown observer",
        ),
    ],
)
def test_bad_statistics_files(text: str, message: str, tmp_path: Path) -> None:
    path = tmp_path / "stats.json"
    path.write_text(text)
    with pytest.raises(IrcError, match=message) as failure:
        CalibrationStats.load(path)
    assert str(path) in str(failure.value)


# --------------------------------------------------------------------------------------
# Calibration sets


def _samples(count: int, names: list[str], shape=(1, 4, 6)) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(count)
    return [
        {name: rng.standard_normal(shape).astype(np.float32) for name in names}
        for _ in range(count)
    ]


def _write_formats(directory: Path, samples: list[dict[str, np.ndarray]]) -> dict[str, Path]:
    """Every calibration-set layout holding `samples`."""
    names = list(samples[0])
    paths: dict[str, Path] = {}
    named = directory / "named"
    named.mkdir()
    positional = directory / "positional"
    positional.mkdir()
    for index, sample in enumerate(samples):
        # Names that sort wrongly as text: the files must be read in natural order.
        np.savez(named / f"sample{index}.npz", **sample)
        np.savez(positional / f"s{index}.npz", *[sample[name] for name in names])
    paths["npz directory, named"] = named
    paths["npz directory, positional"] = positional
    stacked = {name: np.stack([sample[name] for sample in samples]) for name in names}
    np.savez(directory / "rows.npz", **stacked)
    paths["one npz, a sample per row"] = directory / "rows.npz"
    batched = {name: np.concatenate([sample[name] for sample in samples]) for name in names}
    np.savez_compressed(directory / "batch.npz", **batched)
    paths["one compressed npz, batch rows"] = directory / "batch.npz"
    if len(names) == 1:
        npy = directory / "npy"
        npy.mkdir()
        for index, sample in enumerate(samples):
            np.save(npy / f"{index}.npy", sample[names[0]])
        paths["npy directory"] = npy
        np.savez(directory / "unnamed.npz", stacked[names[0]])
        paths["one npz, unnamed array"] = directory / "unnamed.npz"
    return paths


@pytest.mark.parametrize("names", [["a"], ["a", "b"]], ids=["one input", "two inputs"])
def test_every_calibration_set_format(names: list[str], tmp_path: Path) -> None:
    module = elementwise_model(names)
    samples = _samples(12, names)
    expected = calibrate(module, samples, "moving-average").to_json_text()  # order matters
    for layout, path in _write_formats(tmp_path, samples).items():
        loaded = load_samples(path, module)
        assert len(loaded) == 12, layout
        for index in (0, 5, 11, -1):
            for name in names:
                np.testing.assert_array_equal(loaded[index][name], samples[index][name])
        assert calibrate(module, loaded, "moving-average").to_json_text() == expected, layout


def test_batched_input_takes_groups_of_rows(tmp_path: Path) -> None:
    module = elementwise_model(["a"], shape=(2, 3))
    data = np.arange(36, dtype=np.float32).reshape(12, 3)  # 6 samples of 2 rows
    np.savez(tmp_path / "batch.npz", a=data)
    loaded = load_samples(tmp_path / "batch.npz", function_signature(module)[0])
    assert len(loaded) == 6
    np.testing.assert_array_equal(loaded[4]["a"], data[8:10])


def test_integer_data_is_converted_when_exact(tmp_path: Path) -> None:
    module = integer_model()
    np.save(tmp_path / "ids.npy", np.full((1, 4), 200, np.uint8))
    (sample,) = list(load_samples(tmp_path / "ids.npy", module))
    assert sample["ids"].dtype == np.int64 and sample["ids"].max() == 200
    np.save(tmp_path / "too-big.npy", np.full((1, 4), 2**64 - 1, np.uint64))
    with pytest.raises(IrcError, match="uint64 values that int64 cannot represent"):
        list(load_samples(tmp_path / "too-big.npy", module))


def integer_model() -> ModuleOp:
    """An identity of an int64 input `ids` (1x4): token ids, not pixels."""
    tensor = TensorType(i64, (1, 4))
    block = Block(arg_types=[tensor])
    block.add_op(ReturnOp(block.args[0]))
    names = ArrayAttr([DictionaryAttr({"irc.name": StringAttr("ids")})])
    return ModuleOp([FuncOp("main", ([tensor], [tensor]), Region(block), arg_attrs=names)])


def _bad_set(case: str, directory: Path) -> Path:
    good = np.zeros((1, 4, 6), np.float32)
    if case == "missing path":
        return directory / "nowhere"
    if case == "empty directory":
        (directory / "notes.txt").write_text("no samples")
        return directory
    if case == "not a calibration file":
        (directory / "data.csv").write_text("1,2")
        return directory / "data.csv"
    if case == "npy for two inputs":
        np.save(directory / "x.npy", good)
        return directory
    if case == "missing input":
        np.savez(directory / "s.npz", a=good, c=good)
        return directory / "s.npz"
    if case == "wrong shape":
        np.savez(directory / "s.npz", a=good, b=np.zeros((1, 4, 5), np.float32))
        return directory / "s.npz"
    if case == "wrong dtype":
        np.savez(directory / "s.npz", a=good, b=np.zeros((1, 4, 6), np.complex64))
        return directory / "s.npz"
    if case == "different sample counts":
        np.savez(directory / "s.npz", a=np.zeros((3, 1, 4, 6)), b=np.zeros((2, 1, 4, 6)))
        return directory / "s.npz"
    if case == "empty set":
        np.savez(directory / "s.npz", a=np.zeros((0, 4, 6)), b=np.zeros((0, 4, 6)))
        return directory / "s.npz"
    if case == "corrupt file":
        (directory / "s.npz").write_bytes(b"PK\x03\x04 this is not a zip")
        return directory / "s.npz"
    rows = np.zeros((3, 1, 4, 6), np.float32)
    if case == "NaN values":
        with_nan = rows.copy()
        with_nan[1, 0, 2, :2] = np.nan
        np.savez(directory / "s.npz", a=rows, b=with_nan)
        return directory / "s.npz"
    if case == "infinite values":
        with_inf = rows.copy()
        with_inf[2, 0, 0, 0] = -np.inf
        np.savez(directory / "s.npz", a=with_inf, b=rows)
        return directory / "s.npz"
    if case == "integers for a float input":
        np.savez(directory / "s.npz", a=rows, b=np.full((3, 1, 4, 6), 128, np.int32))
        return directory / "s.npz"
    if case == "float64 beyond float32":
        np.savez(directory / "s.npz", a=rows, b=np.full((3, 1, 4, 6), 1e300))
        return directory / "s.npz"
    if case == "header claims more than the file":
        # 2**38 samples (24 TiB) claimed, 96 bytes stored: an error before any allocation.
        header = io.BytesIO()
        np.lib.format.write_array_header_1_0(
            header, {"descr": "<f4", "fortran_order": False, "shape": (2**38, 1, 4, 6)}
        )
        with zipfile.ZipFile(directory / "s.npz", "w") as archive:
            archive.writestr("a.npy", header.getvalue() + bytes(96))
            archive.writestr("b.npy", header.getvalue() + bytes(96))
        return directory / "s.npz"
    raise AssertionError(case)


BAD_SETS = {
    "missing path": "no such file or directory",
    "empty directory": "holds no .npy or .npz files",
    "not a calibration file": "is not a calibration set",
    "npy for two inputs": "the model has 2 inputs",
    "missing input": "has no array for input 'b'",
    "wrong shape": "has shape 1x4x5, which does not fit input 'b' of shape 1x4x6",
    "wrong dtype": "element type complex64, but input 'b' takes float32",
    "different sample counts": "different numbers of samples",
    "empty set": "the calibration set is empty",
    "corrupt file": "cannot read 's.npz' as an .npz file",
    "NaN values": "array 'b' in 's.npz' has 2 NaN values (first in sample index 1 of 3)",
    "infinite values": "array 'a' in 's.npz' has 1 infinite value (first in sample index 2 of 3)",
    "integers for a float input": "element type int32, but input 'b' takes float32",
    "float64 beyond float32": "float64 values beyond the range of float32",
    "header claims more than the file": "claims 274877906944x1x4x6 float32 values (24.0 TiB)",
}


@pytest.mark.parametrize("case", BAD_SETS)
def test_bad_calibration_sets(case: str, tmp_path: Path) -> None:
    module = elementwise_model(["a", "b"])
    path = _bad_set(case, tmp_path)
    with pytest.raises(IrcError) as failure:
        calibrate(module, load_samples(path, module))
    (diagnostic,) = failure.value.diagnostics
    assert BAD_SETS[case] in diagnostic.message
    assert diagnostic.hint, case
    assert diagnostic.location.file is not None
    assert path in (Path(diagnostic.location.file), Path(diagnostic.location.file).parent)


def test_bad_samples_given_directly() -> None:
    module = elementwise_model(["a", "b"])
    with pytest.raises(IrcError, match="no input 'b'"):
        calibrate(module, [{"a": np.zeros((1, 4, 6), np.float32)}])
    with pytest.raises(IrcError, match="has shape 4x6, expected 1x4x6"):
        calibrate(module, [[np.zeros((1, 4, 6)), np.zeros((4, 6))]])
    with pytest.raises(IrcError, match="at least one sample"):
        calibrate(module, iter([]))
    with pytest.raises(IrcError, match="unknown observer 'best'"):
        calibrate(module, [], "best")


def test_progress_bar(capsys: pytest.CaptureFixture[str]) -> None:
    module = elementwise_model(["a"])
    calibrate(module, _samples(3, ["a"]), progress=True)
    err = capsys.readouterr().err
    assert "calibrating [" in err and "3/3" in err and "/s" in err
    calibrate(module, _samples(3, ["a"]))  # stderr is not a terminal here
    assert capsys.readouterr().err == ""


# --------------------------------------------------------------------------------------
# A light model


@pytest.fixture(scope="module")
def squeezenet() -> tuple[ModuleOp, list[dict[str, np.ndarray]]]:
    model = materialize_light_model(light_model("squeezenet"), seed=0)
    return import_model(model), [random_inputs(model, seed) for seed in range(3)]


def test_squeezenet_calibration(squeezenet, tmp_path: Path) -> None:
    module, samples = squeezenet
    ((name, _),) = function_signature(module)[0]
    stats = calibrate(module, samples, ObserverConfig("percentile", percentile=99.9))
    function = _function(module)
    computed = {
        value_key(result)
        for op in function.walk()
        if isinstance(op, nn.NNOp) and not isinstance(op, nn.ConstantOp)
        for result in op.results
    }
    assert set(stats.tensors) == computed | {f"arg:{name}"}
    for key, tensor in stats.tensors.items():
        assert tensor.samples == 3, key
        assert tensor.low <= tensor.range[0] <= tensor.range[1] <= tensor.high, key
    # The same statistics from the three samples as one .npz with a batch axis.
    np.savez(tmp_path / "calib.npz", **{name: np.concatenate([s[name] for s in samples])})
    from_file = calibrate(module, load_samples(tmp_path / "calib.npz", module), "percentile")
    assert from_file.with_observer(
        ObserverConfig("percentile", percentile=99.9)
    ).to_json_text() == (stats.to_json_text())


# --------------------------------------------------------------------------------------
# irc-calibrate


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "model.mlir"
    text = module_to_string(elementwise_model(["a", "b"]), PrintOptions(weights=WeightsMode.INLINE))
    path.write_text(text)
    return path


def test_cli_writes_the_statistics(model_file: Path, tmp_path: Path, capsys) -> None:
    samples = _samples(4, ["a", "b"])
    for index, sample in enumerate(samples):
        np.savez(tmp_path / f"{index}.npz", **sample)
    output = tmp_path / "out" / "stats.json"
    status = calibrate_main(
        [str(model_file), "--data", str(tmp_path), "--observer", "percentile", "--percentile",
         "99.5", "-o", str(output)]
    )  # fmt: skip
    assert status == 0
    assert "calibrated 5 tensors on 4 samples with percentile" in capsys.readouterr().out
    module = parse_module(model_file.read_text(), make_context(), str(model_file))
    expected = calibrate(module, samples, ObserverConfig("percentile", percentile=99.5))
    assert output.read_text() == expected.to_json_text()
    # Recomputed with another observer, without the model.
    status = calibrate_main(
        ["--from-stats", str(output), "--observer", "mse", "-o", str(tmp_path / "mse.json")]
    )
    assert status == 0
    mse = CalibrationStats.load(tmp_path / "mse.json")
    assert mse.to_json_text() == calibrate(module, samples, "mse").to_json_text()


def test_cli_to_stdout_and_errors(model_file: Path, tmp_path: Path, capsys) -> None:
    np.savez(tmp_path / "rows.npz", a=np.ones((2, 1, 4, 6)), b=np.ones((2, 1, 4, 6)))
    assert calibrate_main([str(model_file), "--data", str(tmp_path / "rows.npz")]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["samples"] == 2
    assert "calibrated 5 tensors on 2 samples" in captured.err
    assert calibrate_main([str(model_file), "--data", str(tmp_path / "missing")]) == 1
    err = capsys.readouterr().err
    assert "error: cannot open calibration data" in err and "hint:" in err
    assert calibrate_main([str(model_file), "--data", str(tmp_path), "--percentile", "20"]) == 1
    assert "the percentile must be in (50, 100]" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        calibrate_main([str(model_file)])  # neither --data nor --from-stats
    assert exit_.value.code == 2


def test_cli_script_from_a_checkout(model_file: Path, tmp_path: Path) -> None:
    np.savez(tmp_path / "rows.npz", a=np.ones((2, 1, 4, 6)), b=np.zeros((2, 1, 4, 6)))
    output = tmp_path / "stats.json"
    result = subprocess.run(
        [str(ROOT / "tools" / "irc-calibrate"), str(model_file), "--data",
         str(tmp_path / "rows.npz"), "-o", str(output)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    stats = CalibrationStats.load(output)
    assert stats.range("arg:a") == (1.0, 1.0) and stats.range("arg:b") == (0.0, 0.0)
    # Ops of parsed IR are keyed by file:line:col; relu(1 + 0) * 2 = 2.
    assert sorted(stats.tensors[key].range for key in stats.tensors) == [
        (0.0, 0.0),
        (1.0, 1.0),
        (1.0, 1.0),
        (1.0, 1.0),
        (2.0, 2.0),
    ]


def test_tensors_without_finite_values() -> None:
    """Finite inputs whose sum overflows: the model computes the infinities."""
    module = elementwise_model(["a", "b"])
    big = {name: np.full((1, 4, 6), 3e38, np.float32) for name in ("a", "b")}
    with collect_diagnostics() as diagnostics:
        stats = calibrate(module, [big, big], "percentile")
    (warning,) = [d for d in diagnostics if "no finite value" in d.message]
    assert "3 tensors had no finite value" in warning.message
    assert warning.hint is not None and "the model computes" in warning.hint
    assert all(stats.range(key) == (0.0, 0.0) for key in ("add#0", "relu#0", "scale#0"))
    reloaded = CalibrationStats.from_json_text(stats.to_json_text())
    assert reloaded.with_observer(ObserverConfig("entropy")).range("relu#0") == (0.0, 0.0)


def test_zero_size_tensors_are_not_blamed_on_nans() -> None:
    module = elementwise_model(["a"], shape=(0, 4))
    with collect_diagnostics() as diagnostics:
        stats = calibrate(module, [{"a": np.zeros((0, 4), np.float32)}] * 2)
    assert diagnostics == []
    assert stats.range("relu#0") == (0.0, 0.0)


def test_non_finite_samples_given_directly_are_errors() -> None:
    module = elementwise_model(["a"])
    good = {"a": np.ones((1, 4, 6), np.float32)}
    nan = {"a": np.full((1, 4, 6), np.nan, np.float32)}
    with pytest.raises(IrcError, match="input 'a' of sample 1 has 24 NaN values") as failure:
        calibrate(module, [good, nan])
    assert failure.value.diagnostics[0].hint


def test_constant_samples_warn_that_the_ranges_are_degenerate(tmp_path: Path) -> None:
    module = elementwise_model(["a", "b"])
    varying = np.stack([sample["b"] for sample in _samples(4, ["b"])])
    np.savez(tmp_path / "zeros.npz", a=np.zeros((4, 1, 4, 6), np.float32), b=varying)
    with collect_diagnostics() as diagnostics:
        calibrate(module, load_samples(tmp_path / "zeros.npz", module))
    (warning,) = diagnostics
    assert warning.severity == Severity.WARNING
    assert "input 'a' (always 0) is the same constant in every element of all 4 calibration" in (
        warning.message
    )
    assert "degenerate" in warning.message and "means nothing" in warning.message
    assert warning.location.file == str(tmp_path / "zeros.npz") and warning.hint
    with collect_diagnostics() as diagnostics:
        calibrate(module, _samples(4, ["a", "b"]))
    assert diagnostics == []


def test_directory_entries_that_are_not_samples_are_named(tmp_path: Path) -> None:
    module = elementwise_model(["a"])
    for index, sample in enumerate(_samples(3, ["a"])):
        np.save(tmp_path / f"{index}.npy", sample["a"])
    (tmp_path / "README.txt").write_text("how the samples were made")
    (tmp_path / "labels.csv").write_text("1,2,3")
    (tmp_path / "old").mkdir()
    (tmp_path / ".DS_Store").write_bytes(b"")  # hidden, as for ls: not mentioned
    with collect_diagnostics() as diagnostics:
        loaded = load_samples(tmp_path, module)
    assert len(loaded) == 3
    (warning,) = diagnostics
    assert warning.severity == Severity.WARNING
    assert "skipped 3 of the 6 entries" in warning.message
    assert "'README.txt', 'labels.csv', 'old/'" in warning.message
    assert ".DS_Store" not in warning.message


def test_arrays_no_input_is_named_after(tmp_path: Path) -> None:
    module = elementwise_model(["a"])
    for index, sample in enumerate(_samples(3, ["a"])):
        np.savez(tmp_path / f"{index}.npz", a=sample["a"], label=np.array(index))
    with collect_diagnostics() as diagnostics:
        assert len(load_samples(tmp_path, module)) == 3
    (warning,) = diagnostics
    assert "ignored 1 array" in warning.message
    assert "'label' (3 files, first '0.npz')" in warning.message
    assert warning.hint == "the model's inputs are 'a'"
    # Under another name only, the array feeds nothing: an error listing the inputs.
    np.savez(tmp_path / "other.npz", images=np.zeros((1, 4, 6), np.float32))
    with pytest.raises(IrcError) as failure:
        load_samples(tmp_path / "other.npz", module)
    (diagnostic,) = failure.value.diagnostics
    assert "'other.npz' has no array for input 'a'" in diagnostic.message
    assert diagnostic.hint is not None and "its arrays are 'images'" in diagnostic.hint


def test_error_report_refuses_non_finite_outputs() -> None:
    from irc.quantize.qdq import quantize_module
    from irc.quantize.report import error_report

    module = elementwise_model(["a", "b"])
    quantized = module.clone()
    quantize_module(quantized, calibrate(module, _samples(4, ["a", "b"])))
    big = {name: np.full((1, 4, 6), 3e38, np.float32) for name in ("a", "b")}
    error_report(module, quantized, _samples(2, ["a", "b"]))  # finite: measured
    with pytest.raises(IrcError) as failure:
        error_report(module, quantized, [*_samples(1, ["a", "b"]), big])
    (diagnostic,) = failure.value.diagnostics
    assert diagnostic.message == (
        "the float model's output 'out' has 24 infinite values on sample 1: the quantization "
        "error cannot be measured"
    )
    assert diagnostic.location.name == "scale" and diagnostic.hint


def test_histogram_observers_skip_non_finite_values() -> None:
    values = RNG.standard_normal(1000).astype(np.float32)
    with_nan = values.copy()
    with_nan[[3, 500]] = [np.nan, np.inf]
    clean = ObserverConfig("percentile").create()
    dirty = ObserverConfig("percentile").create()
    clean.observe(np.delete(values, [3, 500]))
    dirty.observe(with_nan)
    assert dirty.calibrated_range() == clean.calibrated_range()
    assert dirty.state() == clean.state()


def test_histogram_bins_of_tiny_and_huge_values() -> None:
    # float32 and float64 scaling must agree: exponents outside (-127, 0] use float64.
    for scale in (1e-30, 1e-3, 1.0, 1e5, 1e30):
        values = (RNG.standard_normal(5000) * scale).astype(np.float32)
        histogram = histogram_of(values, chunks=1)
        edges = histogram.edges()
        expected = np.histogram(values.astype(np.float64), bins=edges)[0]
        # np.histogram closes the last bin on the right; ours are all half-open.
        assert np.array_equal(histogram.counts[:-1], expected[:-1]), scale
        assert histogram.total == 5000


def test_quantize_and_compile_warn_once_about_degenerate_data(
    model_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The warnings reach the user once, although irc-compile reads the set twice
    (to calibrate, and to measure the error)."""
    from irc.tools.compile import main as compile_main
    from irc.tools.quantize import main as quantize_main

    zeros = np.zeros((3, 1, 4, 6), np.float32)
    np.savez(tmp_path / "zeros.npz", a=zeros, b=zeros, label=np.arange(3))
    data = str(tmp_path / "zeros.npz")
    status = quantize_main([str(model_file), "--data", data, "-o", str(tmp_path / "q.mlir")])
    err = capsys.readouterr().err
    assert status == 0
    assert err.count("inputs 'a' (always 0), 'b' (always 0) are the same constant") == 1, err
    assert err.count("ignored 1 array") == 1, err
    out = str(tmp_path / "pkg")
    status = compile_main([str(model_file), "--calibration-data", data, "-o", out, "--no-progress"])
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert status == 0, text
    assert text.count("are the same constant") == 1, text
    assert text.count("ignored 1 array") == 1, text
