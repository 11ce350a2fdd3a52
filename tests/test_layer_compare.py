"""The three-way layer diff (irc/driver/compare.py, `irc-run --compare`): the float
model, the integer reference and the simulator, layer by layer, on the digits CNN."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from irc.diagnostics import Location
from irc.driver.compare import CompiledLevels, compare_layers, compile_levels
from irc.driver.pipeline import CompileOptions
from irc.interp.tile import RequantizeTile
from irc.targets import load_target
from irc.targets.render import target_toml
from irc.testing.targets import host_casts
from irc.tools.run import main

ROOT = Path(__file__).resolve().parent.parent
DIGITS = ROOT / "models" / "digits" / "digits_cnn.onnx"
CALIBRATION = ROOT / "models" / "digits" / "digits_calibration.npz"
TEST_IMAGES = ROOT / "models" / "digits" / "digits_test.npz"
FAULTY_LAYER = "/features/features.7/Conv"
"""The digits CNN's third conv, after two convs and a pool that stay exact."""


@pytest.fixture(scope="module")
def digits() -> CompiledLevels:
    """At -O1: every layer's output is in memory (at -O2 a cascade keeps its
    intermediate tensors in SRAM: `test_layers_inside_a_cascade_are_listed`)."""
    return compile_levels(DIGITS, CompileOptions(calibration_data=CALIBRATION, opt_level=1))


@pytest.fixture(scope="module")
def image() -> dict[str, np.ndarray]:
    return {"image": np.load(TEST_IMAGES)["images"][:1].astype(np.float32)}


@pytest.fixture
def off_by_one(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The simulator's requantization (the MAC commands' output stage and the vector
    unit's `npu.requantize`) one step high in FAULTY_LAYER only."""
    original = RequantizeTile.__call__

    def faulty(
        self: RequantizeTile, acc: np.ndarray, params: np.ndarray, output: np.ndarray
    ) -> None:
        original(self, acc, params, output)
        if Location.of(self.op).name == FAULTY_LAYER:
            output[...] = np.minimum(output.astype(np.int64) + 1, np.iinfo(output.dtype).max)

    monkeypatch.setattr(RequantizeTile, "__call__", faulty)
    yield


def test_every_layer_of_the_digits_cnn_matches(
    digits: CompiledLevels, image: dict[str, np.ndarray]
) -> None:
    comparison = compare_layers(digits, image)
    names = [layer.name for layer in comparison.layers]
    assert names == [
        "arg:image",
        "/features/features.0/Conv",
        "/features/features.3/Conv",
        "/features/features.6/MaxPool",
        FAULTY_LAYER,
        "/classifier/Gemm",
    ]
    assert comparison.matches and comparison.first_difference() is None
    for layer in comparison.layers:
        assert layer.exact == 1.0 and layer.max_difference == 0, layer.name
        assert layer.cosine is not None and layer.cosine > 0.999, layer.name
        assert layer.max_steps is not None and layer.max_steps < 4, layer.name
        assert set(layer.arrays) == {"float", "int8", "npu"}
    # npu-demo quantizes the image on its vector unit: the first layer is the NPU's too
    # (a host layer: test_a_layer_the_host_computes_is_compared_too).
    assert {layer.device for layer in comparison.layers} == {"npu"}
    assert comparison.widest_gap() is not None
    assert "bit-exactly on all 6 layers it keeps in memory" in comparison.format_text()


def test_layers_inside_a_cascade_are_listed(image: dict[str, np.ndarray]) -> None:
    """At -O2 the digits CNN's convs and pools run as cascades: the layers inside one
    are listed, float against int8, but not compared on the simulator (their outputs
    are a few rows at a time in SRAM); every layer it keeps in memory matches."""
    levels = compile_levels(DIGITS, CompileOptions(calibration_data=CALIBRATION))
    comparison = compare_layers(levels, image)
    assert len(comparison.layers) == 6
    assert comparison.not_compared, "no layer is inside a cascade"
    for layer in comparison.layers:
        assert layer.cosine is not None and layer.cosine > 0.999, layer.name
        assert (layer.exact is None) == (layer.name in comparison.not_compared)
    assert comparison.matches
    kept = len(comparison.layers) - len(comparison.not_compared)
    text = comparison.format_text()
    assert f"bit-exactly on all {kept} layers it keeps in memory (6 in all)" in text
    assert "in a cascade's rolling buffer in SRAM" in text


def test_a_layer_the_host_computes_is_compared_too(
    tmp_path_factory: pytest.TempPathFactory, image: dict[str, np.ndarray]
) -> None:
    """On npu-demo without quantize on its vector unit the host quantizes the image: the
    host call's result is the first layer, compared like the NPU's."""
    target = tmp_path_factory.mktemp("target") / "host-casts.toml"
    target.write_text(target_toml(host_casts(load_target("npu-demo"))))
    options = CompileOptions(calibration_data=CALIBRATION, target=str(target), opt_level=1)
    comparison = compare_layers(compile_levels(DIGITS, options), image)
    first = comparison.layers[0]
    assert (first.name, first.op, first.device) == ("arg:image", "quant.qcast", "host")
    # (the cost model keeps the classifier on the host with the logits' dequantize.)
    assert [layer.device for layer in comparison.layers][1:] == ["npu"] * 4 + ["host"]
    assert comparison.matches and all(layer.exact == 1.0 for layer in comparison.layers)


def test_a_fault_in_one_layer_is_named_first(
    digits: CompiledLevels, image: dict[str, np.ndarray], off_by_one: None
) -> None:
    comparison = compare_layers(digits, image)
    first = comparison.first_difference()
    assert first is not None and first.name == FAULTY_LAYER
    assert first.max_difference == 1 and first.exact is not None and first.exact < 0.5
    before = comparison.layers[: comparison.layers.index(first)]
    assert before and all(layer.matches for layer in before)
    assert not comparison.matches
    assert f"simulator differs from the integer reference: {FAULTY_LAYER}" in (
        comparison.format_text()
    )


def test_compare_a_package_with_its_float_model(
    digits: CompiledLevels, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    package = tmp_path / "digits"
    package.mkdir()
    for name, content in digits.files.items():
        (package / name).write_bytes(content)
    out = tmp_path / "dumps"
    argv = [str(package), "--compare", "--float-model", str(DIGITS), "--random-inputs"]
    status = main([*argv, "--output-dir", str(out)])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert captured.err == ""
    assert "matches the integer reference bit-exactly on all 6 layers" in captured.out
    dumps = sorted(path.name for path in (out / "layers").iterdir())
    assert len(dumps) == 18
    assert dumps[:3] == [
        "000_arg_image.float.npy",
        "000_arg_image.int8.npy",
        "000_arg_image.npu.npy",
    ]
    simulated = np.load(out / "layers" / "004__features_features.7_Conv.npu.npy")
    assert simulated.shape == (1, 4, 4, 32) and simulated.dtype == np.int8


def test_compare_exits_1_naming_the_faulty_layer(
    off_by_one: None, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main([str(DIGITS), "--compare", "--random-inputs"])
    captured = capsys.readouterr()
    assert status == 1
    assert "error:" not in captured.err
    lines = [line for line in captured.out.splitlines() if "differs from the integer" in line]
    assert len(lines) == 1 and f"reference: {FAULTY_LAYER} (qnn.requantize on the npu)" in lines[0]
