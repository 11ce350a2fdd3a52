"""irc/codegen: the bytecode round-trips every level's IR, packages are deterministic,
the manifest describes the model, and a damaged package is a clear error."""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp

from irc.codegen import bytecode
from irc.codegen.package import (
    MANIFEST,
    PROGRAM,
    TARGET,
    WEIGHTS,
    package_files,
    read_package,
)
from irc.diagnostics import IrcError
from irc.driver.pipeline import CompileOptions, compile_model
from irc.ir.context import make_context
from irc.ir.io import PrintOptions, module_to_string, parse_module
from irc.ir.weights import WeightsMode
from irc.targets import load_target
from irc.targets.render import target_toml
from irc.testing.targets import host_casts

ROOT = Path(__file__).resolve().parent.parent
DIGITS = ROOT / "models" / "digits" / "digits_cnn.onnx"
CALIBRATION = ROOT / "models" / "digits" / "digits_calibration.npz"


@pytest.fixture(scope="module")
def digits():
    """The digits CNN compiled end to end (int8, npu-demo): every layer on the NPU, the
    image's quantize and the logits' dequantize included."""
    return compile_model(DIGITS, CompileOptions(calibration_data=CALIBRATION))


@pytest.fixture(scope="module")
def digits_host_casts(tmp_path_factory: pytest.TempPathFactory):
    """The digits CNN on npu-demo without quantize and dequantize: host calls convert
    the image and the logits."""
    path = tmp_path_factory.mktemp("target") / "npu-demo-host-casts.toml"
    path.write_text(target_toml(host_casts(load_target("npu-demo"))))
    return compile_model(DIGITS, CompileOptions(calibration_data=CALIBRATION, target=str(path)))


def write(files: dict[str, bytes], directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (directory / name).write_bytes(content)
    return directory


def round_trip(module: ModuleOp) -> ModuleOp:
    program, blob = bytecode.encode(module)
    decoded = bytecode.decode(program, blob, make_context())
    assert decoded.is_structurally_equivalent(module)
    # Printed with locations and every weight inline, the text is the same too.
    options = PrintOptions(debuginfo=True, weights=WeightsMode.INLINE, inline_limit=0)
    assert module_to_string(decoded, options) == module_to_string(module, options)
    assert bytecode.encode(decoded) == (program, blob)
    return decoded


# --------------------------------------------------------------------------------------
# The bytecode


def test_command_stream_round_trips(digits, digits_host_casts) -> None:
    decoded = round_trip(digits.module)
    names = {op.name for op in decoded.walk()}
    assert {"npu.dma", "npu.conv", "npu.signal", "npu.wait", "npu.quantize"} <= names
    assert "npu.host_call" not in names
    decoded = round_trip(digits_host_casts.module)
    assert "npu.host_call" in {op.name for op in decoded.walk()}


def test_every_level_round_trips(tmp_path: Path) -> None:
    """The encoding is generic: float nn IR, quantized qnn IR with per-axis quant
    types, and the tile level's nested scf loops all come back identical."""
    import onnx

    from irc.importers.onnx import import_model
    from irc.testing.networks import NETWORKS

    path = tmp_path / "net.onnx"
    onnx.save(NETWORKS["mobilenet_v2_style"](0), path)
    module = import_model(path, {})
    round_trip(module)
    options = CompileOptions(calibration_samples=2, report_samples=1)
    result = compile_model(path, options)
    round_trip(result.module)
    # The tile level: loops with regions and block arguments.
    tiled = _tile_level(DIGITS)
    assert any(op.name == "scf.for" for op in tiled.walk())
    round_trip(tiled)


def _tile_level(model: Path) -> ModuleOp:
    from irc.driver.pipeline import GRAPH_OPT
    from irc.importers.load import load_module
    from irc.passes import parse_pipeline
    from irc.quantize.calibration import calibrate, load_samples
    from irc.quantize.mixed_precision import quantize_keeping_float
    from irc.quantize.qdq import QuantizeConfig, prepare_for_calibration
    from irc.targets import load_target, using_target
    from irc.transforms.lower_to_qnn import lower_module

    module = load_module("test", model, {})
    for module_pass in parse_pipeline(GRAPH_OPT):
        module_pass.apply(make_context(), module)
    prepare_for_calibration(module)
    samples = load_samples(CALIBRATION, module)
    stats = calibrate(module, [samples[i] for i in range(4)], "minmax", progress=False)
    qnn, _ = quantize_keeping_float(module, stats, QuantizeConfig(), [])
    target = load_target("npu-demo")
    lower_module(qnn, target)
    with using_target(target):
        for module_pass in parse_pipeline("plan-tiles,plan-ddr,lower-to-tile"):
            module_pass.apply(make_context(), qnn)
    return qnn


def test_weights_are_in_the_blob_aligned(digits) -> None:
    from irc.ir.weights import numpy_from_dense

    program, blob = bytecode.encode(digits.module)
    dense = [
        value
        for op in digits.module.walk()
        for value in (*op.properties.values(), *op.attributes.values())
        if isinstance(value, DenseIntOrFPElementsAttr)
    ]
    assert sum(len(value.data.data) for value in dense) <= len(blob)
    # The bytecode holds no weight bytes: it is smaller than the blob's data here.
    largest = max(dense, key=lambda value: len(value.data.data))
    assert largest.data.data not in program
    offset = blob.find(largest.data.data)
    assert offset >= 0 and offset % bytecode.BLOB_ALIGNMENT == 0
    assert numpy_from_dense(largest).nbytes == len(largest.data.data)


@pytest.mark.parametrize("cut", [0, 3, 8, 20, 200, -1])
def test_truncated_bytecode_is_an_error(digits, cut: int) -> None:
    program, blob = bytecode.encode(digits.module)
    with pytest.raises(bytecode.BytecodeError, match="compile it again"):
        bytecode.decode(program[:cut], blob, make_context())


def test_garbage_bytecode_is_an_error(digits) -> None:
    program, blob = bytecode.encode(digits.module)
    rng = np.random.default_rng(0)
    for _ in range(50):
        damaged = bytearray(program)
        for position in rng.integers(8, len(program), size=4):
            damaged[position] = int(rng.integers(0, 256))
        try:
            decoded = bytecode.decode(bytes(damaged), blob, make_context())
        except IrcError:
            continue
        # A change that still decodes is a valid module of the same shape.
        assert isinstance(decoded, ModuleOp)
    with pytest.raises(bytecode.BytecodeError, match="no IRCB magic"):
        bytecode.decode(b"PK\x03\x04" + program[4:], blob, make_context())
    with pytest.raises(bytecode.BytecodeError, match="version 9"):
        bytecode.decode(program[:4] + (9).to_bytes(4, "little") + program[8:], blob, make_context())
    with pytest.raises(bytecode.BytecodeError, match="weights blob"):
        bytecode.decode(program, blob[: len(blob) // 2], make_context())


# --------------------------------------------------------------------------------------
# The package


def test_same_input_gives_byte_identical_packages(digits) -> None:
    again = compile_model(DIGITS, CompileOptions(calibration_data=CALIBRATION))
    assert set(again.files) == {MANIFEST, PROGRAM, WEIGHTS, TARGET}
    for name, content in digits.files.items():
        assert again.files[name] == content, name


def test_manifest_describes_the_model(digits, digits_host_casts) -> None:
    # npu-demo's NPU takes the float image and gives float logits itself.
    npu_manifest = json.loads(digits.files[MANIFEST])
    assert all("npu_quantization" not in entry for entry in npu_manifest["inputs"])
    assert npu_manifest["stream"]["host_calls"] == 0
    digits = digits_host_casts
    manifest = json.loads(digits.files[MANIFEST])
    assert manifest["format"] == "irc-package" and manifest["version"] == 2
    assert manifest["compiler"]["name"] == "irc"
    assert manifest["target"]["name"] == "npu-demo" and manifest["target"]["file"] == TARGET
    assert manifest["options"]["quantize"] == "int8"
    assert manifest["options"]["opt_level"] == 2
    assert "lower-to-npu" in manifest["pipeline"]
    (image,) = manifest["inputs"]
    (logits,) = manifest["outputs"]
    assert (image["name"], image["shape"], image["dtype"]) == ("image", [1, 1, 8, 8], "float32")
    assert (logits["name"], logits["shape"], logits["dtype"]) == ("logits", [1, 10], "float32")
    assert image["quantization"] is None and logits["quantization"] is None
    # The NPU's int8 view of them: the parameters of the host's qcast and dcast.
    host = {op.sym_name.data: op for op in digits.module.ops if op.sym_name.data != "main"}
    from irc.dialects.quant import UniformQuantizedType

    def parameters(value_type) -> tuple[float, int]:
        element = value_type.get_element_type()
        assert isinstance(element, UniformQuantizedType)
        return element.scales.data[0].data, element.zero_points.data[0].data

    quantize_input = next(
        f for f in host.values() if f.function_type.inputs.data[0].get_shape() == (1, 1, 8, 8)
    )
    scale, zero_point = parameters(quantize_input.function_type.outputs.data[0])
    assert image["npu_quantization"] == {
        "storage": "i8",
        "scale": scale,
        "zero_point": zero_point,
        "axis": None,
    }
    assert logits["npu_quantization"]["storage"] == "i8"
    function = next(op for op in digits.module.ops if op.sym_name.data == "main")
    assert manifest["memory"]["ddr_bytes"] == function.attributes["npu.ddr_bytes"].value.data
    assert manifest["stream"]["host_calls"] == 2
    for name in (PROGRAM, WEIGHTS, TARGET):
        record = manifest["files"][name]
        assert record["bytes"] == len(digits.files[name])
        assert record["sha256"] == hashlib.sha256(digits.files[name]).hexdigest()


def test_package_reads_back(digits, tmp_path: Path) -> None:
    package = read_package(write(digits.files, tmp_path / "pkg"))
    assert package.module.is_structurally_equivalent(digits.module)
    # The same target, read from the package's own file.
    assert package.target.source.endswith("pkg/target.toml")
    assert replace(package.target, source=digits.target.source) == digits.target
    assert [entry["name"] for entry in package.inputs] == ["image"]


def test_a_package_needs_a_command_stream(tmp_path: Path) -> None:
    module = parse_module(
        "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %y = nn.relu %x : tensor<2xf32>\n  func.return %y : tensor<2xf32>\n}\n",
        make_context(),
    )
    from irc.targets import load_target

    with pytest.raises(IrcError, match="not a command stream"):
        package_files(module, load_target("npu-demo"), {})


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda d: (d / WEIGHTS).write_bytes(b"\0" + (d / WEIGHTS).read_bytes()[1:]), "SHA-256"),
        (
            lambda d: (d / PROGRAM).write_bytes((d / PROGRAM).read_bytes()[:-10]),
            "bytes; the manifest",
        ),
        (lambda d: (d / TARGET).unlink(), "cannot read target.toml"),
        (lambda d: (d / MANIFEST).write_text("{"), "cannot read the manifest"),
        (lambda d: (d / MANIFEST).unlink(), "not an irc package"),
        (
            lambda d: (d / MANIFEST).write_text(
                json.dumps({**json.loads((d / MANIFEST).read_text()), "version": 7})
            ),
            "format version 7",
        ),
        (lambda d: shutil.rmtree(d) or d.write_text("x"), "not a package directory"),
    ],
)
def test_damaged_packages_are_clear_errors(digits, tmp_path: Path, damage, message: str) -> None:
    directory = write(digits.files, tmp_path / "pkg")
    damage(directory)
    with pytest.raises(IrcError, match=message) as failure:
        read_package(directory)
    text = failure.value.diagnostics[0].format()
    assert "error:" in text and "hint:" in text
