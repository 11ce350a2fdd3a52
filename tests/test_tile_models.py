"""Issues 7 and 8's acceptance: real models compile to the tile level and to the
command stream, and run bit-exact there and on the simulator.

Every light model (seeded random weights) is quantized by irc's own flow
(`quantize_with_irc`: graph-opt, calibration, quantize, lower-to-qnn), run at the
`qnn` level, then planned (`plan-tiles`), lowered (`lower-to-tile`) and run again on
the same input: the outputs must be identical, bit for bit; then lowered to the
command stream (`lower-to-npu`) and simulated: identical again. Two models are also
lowered for a 32 KiB SRAM, where their layers split into many tiles, K steps and
remainders. The pytorch-converted and pytorch-operator cases of the ONNX test
corpus go through the same flow, calibrated on their own inputs.

Unquantized, the float models (after graph-opt) are lowered the same way and must
match the `nn` level within FLOAT_RTOL: a tiled float layer sums its products in
another order (per tile, then across K steps in float32), so its results differ in
the last bits.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from irc.backend import lower_function
from irc.diagnostics import IrcError, collect_diagnostics
from irc.importers.onnx import import_model
from irc.interp import run_function
from irc.ir.context import make_context
from irc.ir.io import verify_module
from irc.passes import parse_pipeline
from irc.sim.run import simulate
from irc.stream.lowering import StreamLowering
from irc.targets import Target, load_target
from irc.testing.models import pytorch_cases
from irc.testing.quantized import calibration_samples, materialized_light_model, quantize_with_irc
from irc.testing.reference import random_inputs
from irc.testing.targets import every_op_supported
from irc.tiling.lowering import Statistics
from irc.tools.quantize import DEFAULT_GRAPH_OPT
from irc.transforms.plan_tiles import plan_module

LIGHT_MODELS = [
    "bvlc_alexnet",
    "densenet121",
    "inception_v1",
    "inception_v2",
    "resnet50",
    "shufflenet",
    "squeezenet",
    "zfnet512",
]

NPU_DEMO = every_op_supported(load_target("npu-demo"))
"""npu-demo's machine with a support table that takes every op: these tests check what
irc's lowerings can do (grouped convs, 11x11 kernels, float layers); which ops one
target's table takes is tested in tests/test_backend.py and below."""

FLOAT_RTOL = 1e-4
"""Float outputs of the tile level against the nn level, relative to the largest output."""


def small_sram_target(tmp_path: Path, kib: int) -> Target:
    """npu-demo with `kib` KiB of SRAM."""
    preset = Path(__file__).parents[1] / "irc" / "targets" / "presets" / "npu-demo.toml"
    text = preset.read_text().replace("size_kib = 512", f"size_kib = {kib}")
    path = tmp_path / f"npu-demo-{kib}k.toml"
    path.write_text(text.replace('name = "npu-demo"', f'name = "npu-demo-{kib}k"'))
    return every_op_supported(load_target(str(path)))


def lower_and_compare(
    module: ModuleOp,
    inputs: dict[str, np.ndarray],
    target: Target,
    tile_text: list[str] | None = None,
) -> Statistics:
    """Run `module`, plan and lower it for `target`, run it again: the same outputs,
    bit for bit unless a float layer (one quantization left in float) was tiled, then
    within FLOAT_RTOL; then lower it to the command stream and simulate it: the same
    outputs again. `tile_text` receives the tile-level program's text."""
    expected = run_function(module, inputs)
    plan_module(module, target)
    function = next(op for op in module.ops if isinstance(op, FuncOp))
    stats = lower_function(function, target)
    verify_module(module)
    exact = not any(name.startswith("nn.") for name in stats.layers)
    _compare(run_function(module, inputs), expected, exact)
    if tile_text is not None:
        tile_text.append(str(module))
    # On to the command stream and the simulator (issue 8's acceptance).
    StreamLowering(module, function, target, double=True).run()
    verify_module(module)
    outputs, report = simulate(module, inputs, target)
    _compare(outputs, expected, exact)
    assert report.cycles > 0 or not report.events
    return stats


def _compare(actual: dict[str, np.ndarray], expected: dict[str, np.ndarray], exact: bool) -> None:
    assert expected.keys() == actual.keys()
    for name, array in expected.items():
        assert actual[name].dtype == array.dtype
        if exact:
            assert np.array_equal(actual[name], array, equal_nan=True), name
        else:
            scale = float(np.nanmax(np.abs(array))) if array.size else 0.0
            assert np.allclose(actual[name], array, rtol=0, atol=FLOAT_RTOL * scale, equal_nan=True)


LRN_COUNTS = {"bvlc_alexnet": 2, "zfnet512": 2, "inception_v1": 2}
"""The local response normalizations of the light models."""


@pytest.mark.parametrize("name", LIGHT_MODELS)
def test_light_models_run_bit_exact_at_the_tile_level(name: str) -> None:
    model = materialized_light_model(name)
    module = quantize_with_irc(model, calibration_samples(model))
    convs = sum(1 for op in module.walk() if op.name == "qnn.conv")
    lrns = sum(1 for op in module.walk() if op.name == "qnn.lrn")
    stats = lower_and_compare(module, random_inputs(model, seed=0), NPU_DEMO)
    # Every convolution is tiled; what stays on tensors is a float island or a cast.
    assert stats.layers["qnn.conv"] == convs > 0
    assert not any(name.startswith("qnn.") for name in stats.kept), stats.kept
    assert set(stats.kept) <= {"quant.qcast", "quant.dcast", "nn.softmax"}
    # The LRNs of AlexNet, ZFNet and Inception v1 too, on the vector unit.
    assert stats.layers["qnn.lrn"] == lrns == LRN_COUNTS.get(name, 0)
    assert stats.layers["nn.transpose"] >= 1  # the input's NCHW to NHWC, on the NPU


def test_on_npu_demo_itself_the_table_keeps_what_it_cannot_take_on_the_host() -> None:
    """AlexNet on npu-demo as its support table says: the 11x11 stride-4 conv, the
    group-2 convs and the K=9216 gemm run on the host, the rest is tiled, and the
    outputs are still bit-exact."""
    from irc import backend

    target = load_target("npu-demo")
    model = materialized_light_model("bvlc_alexnet")
    module = quantize_with_irc(model, calibration_samples(model))
    placed = {
        op: backend.place(op, target) for op in module.walk() if op.name in ("qnn.conv", "qnn.gemm")
    }
    host = [op for op, placement in placed.items() if placement.device == "cpu"]
    assert [op.name for op in host] == ["qnn.conv"] * 4 + ["qnn.gemm"]
    assert "qnn.conv stride 4x4: target npu-demo supports strides 1, 2" in placed[host[0]].reasons
    stats = lower_and_compare(module, random_inputs(model, seed=0), target)
    assert stats.layers["qnn.conv"] == 1 and stats.layers["qnn.gemm"] == 2
    assert stats.kept["qnn.conv"] == 4 and stats.kept["qnn.gemm"] == 1


INT16_TARGET = every_op_supported(load_target("edge-2tops"))
"""edge-2tops (int16 = true) with a support table that takes every op."""


@pytest.mark.parametrize("name", ["squeezenet", "shufflenet"])
def test_light_models_with_int16_activations_run_bit_exact_on_the_npu(name: str) -> None:
    """int16 activations (8-bit weights) on a target with `int16`: every conv, pool,
    concat, add and gemm is tiled with 16-bit buffers and wide i64 accumulators, and
    the tile level and the simulator give the `qnn` reference's integers."""
    model = materialized_light_model(name)
    module = quantize_with_irc(model, calibration_samples(model), activations="int16")
    convs = sum(1 for op in module.walk() if op.name == "qnn.conv")
    texts: list[str] = []
    stats = lower_and_compare(module, random_inputs(model, seed=0), INT16_TARGET, texts)
    assert stats.layers["qnn.conv"] == convs > 0
    assert not any(name.startswith("qnn.") for name in stats.kept), stats.kept
    convs_tiled = [line for line in texts[0].splitlines() if "tile.conv " in line]
    assert convs_tiled and all("xi16" in line and "xi64" in line for line in convs_tiled)


def test_16_bit_lookup_tables_run_bit_exact_on_the_npu() -> None:
    """A conv, sigmoid, tanh, sigmoid, conv network in int16: the three functions
    become 513-entry interpolated tables that the NPU's lookup table runs, bit-exact
    at the tile level and in the simulator."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(3)
    weights = [
        numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
        for name, shape in (("w1", (4, 3, 3, 3)), ("w2", (2, 4, 1, 1)))
    ]
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1])]
    for index, function in enumerate(("Sigmoid", "Tanh", "Sigmoid")):
        nodes.append(helper.make_node(function, [chr(97 + index)], [chr(98 + index)]))
    nodes.append(helper.make_node("Conv", ["d", "w2"], ["y"]))
    graph = helper.make_graph(
        nodes,
        "luts",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 8, 8])],
        weights,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    samples = [random_inputs(model, seed=seed) for seed in range(4)]
    module = quantize_with_irc(model, samples, activations="int16")
    texts: list[str] = []
    stats = lower_and_compare(module, samples[0], INT16_TARGET, texts)
    assert stats.layers["qnn.lut"] == 3 and not stats.kept
    assert texts[0].count('memref<513xi16, "sram">, memref<') == 3


def test_a_16_bit_softmax_runs_bit_exact_on_the_npu() -> None:
    """Attention scores of a matmul in int16 normalized by the 16-bit softmax: its exps
    interpolated in a 513-entry table, on the vector unit, bit-exact."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(4)
    weight = numpy_helper.from_array(rng.standard_normal((8, 16)).astype(np.float32), "w")
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w"], ["a"]),
            helper.make_node("Softmax", ["a"], ["y"], axis=-1),
        ],
        "scores",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 12, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 12, 16])],
        [weight],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    samples = [random_inputs(model, seed=seed) for seed in range(3)]
    module = quantize_with_irc(model, samples, activations="int16")
    texts: list[str] = []
    stats = lower_and_compare(module, samples[0], INT16_TARGET, texts)
    assert stats.layers["qnn.softmax"] == 1 and not stats.kept
    assert 'memref<513xi16, "sram">, memref<1x12x16xi16, "sram">' in texts[0]


def test_a_16_bit_layer_norm_runs_bit_exact_on_the_npu() -> None:
    """A projection in int16 normalized by the 16-bit layer norm (integer statistics,
    Q18 values, i64 weight and bias pairs) on the vector unit, then projected again:
    bit-exact at the tile level and in the simulator."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(5)
    arrays = {
        "w1": rng.standard_normal((8, 24)),
        "gamma": 1.0 + 0.3 * rng.standard_normal(24),
        "beta": 0.2 * rng.standard_normal(24),
        "w2": rng.standard_normal((24, 8)),
    }
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w1"], ["a"]),
            helper.make_node("LayerNormalization", ["a", "gamma", "beta"], ["n"], axis=-1),
            helper.make_node("MatMul", ["n", "w2"], ["y"]),
        ],
        "norm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 12, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 12, 8])],
        [numpy_helper.from_array(a.astype(np.float32), name) for name, a in arrays.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    samples = [random_inputs(model, seed=seed) for seed in range(3)]
    module = quantize_with_irc(model, samples, activations="int16")
    texts: list[str] = []
    stats = lower_and_compare(module, samples[0], INT16_TARGET, texts)
    assert stats.layers["qnn.layer_norm"] == 1 and not stats.kept
    assert 'memref<1x12x24xi16, "sram">, memref<24x2xi64, "sram">' in texts[0]


@pytest.mark.parametrize("activations", ["int8", "int16"])
def test_an_lrn_runs_bit_exact_on_the_npu(activations: str) -> None:
    """A conv, a relu and AlexNet's LRN across its 24 channels (the window sums'
    function in an i32 table on the vector unit), then a 1x1 conv: bit-exact at the
    tile level and in the simulator, in int8 and in int16."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(6)
    arrays = {"w1": rng.standard_normal((24, 3, 3, 3)), "w2": rng.standard_normal((8, 24, 1, 1))}
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["a"], ["r"]),
            helper.make_node("LRN", ["r"], ["n"], size=5, alpha=1e-2, beta=0.75, bias=2.0),
            helper.make_node("Conv", ["n", "w2"], ["y"]),
        ],
        "lrn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 10, 10])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 10, 10])],
        [numpy_helper.from_array(a.astype(np.float32), name) for name, a in arrays.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    samples = [random_inputs(model, seed=seed) for seed in range(3)]
    module = quantize_with_irc(model, samples, activations=activations)
    texts: list[str] = []
    target = INT16_TARGET if activations == "int16" else NPU_DEMO
    stats = lower_and_compare(module, samples[0], target, texts)
    assert stats.layers["qnn.lrn"] == 1 and not stats.kept
    element, entries = ("i16", 2753) if activations == "int16" else ("i8", 225)
    # Tiles of whole channel rows, the table loaded once.
    tile_type = rf'memref<1x\d+x10x24x{element}, "sram">'
    assert re.search(rf'tile\.lrn .* : {tile_type}, memref<{entries}xi32, "sram">', texts[0])


@pytest.mark.parametrize(("name", "k_split"), [("squeezenet", True), ("shufflenet", False)])
def test_light_models_with_a_small_sram_split_into_many_tiles(
    name: str, k_split: bool, tmp_path: Path
) -> None:
    model = materialized_light_model(name)
    module = quantize_with_irc(model, calibration_samples(model))
    target = small_sram_target(tmp_path, 32)
    texts: list[str] = []
    stats = lower_and_compare(module, random_inputs(model, seed=1), target, texts)
    text = texts[0]
    assert ("accumulate = true" in text) == k_split
    assert text.count("scf.for") > 50
    assert sum(stats.layers.values()) > 30


CASES = pytorch_cases()
TOO_BIG = {
    # A 60x80 max pool dilated by 10 reads a 591x791 float window for one output.
    "pytorch-converted/test_MaxPool2d_stride_padding_dilation": "needs at least 1870016 bytes",
}


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_pytorch_cases_run_bit_exact_at_the_tile_level(case) -> None:
    module = quantize_with_irc(onnx.load(case.model_path), [case.inputs])
    if case.id in TOO_BIG:
        with pytest.raises(IrcError, match=TOO_BIG[case.id]):
            lower_and_compare(module, case.inputs, NPU_DEMO)
        return
    lower_and_compare(module, case.inputs, NPU_DEMO)


# The ONNX ops that become each kind of tiled int8 layer.
TILED_KINDS = {
    "qnn.conv": {"Conv"},
    "qnn.conv_transpose": {"ConvTranspose"},
    "qnn.gemm": {"Gemm"},
    "qnn.matmul": {"MatMul"},
    "qnn.average_pool": {"AveragePool", "GlobalAveragePool"},
    "qnn.add": {"Add"},
    "qnn.mul": {"Mul"},
    "qnn.lut": {"Sigmoid", "Tanh", "Elu", "Selu", "Softplus", "HardSigmoid", "Exp", "Log"},
}


def test_the_corpus_exercises_every_kind_of_tiled_layer() -> None:
    """Every kind of tiled int8 layer the lowering handles is lowered from some case
    of the corpus: the cases whose ONNX ops could give a kind not yet seen are
    quantized, planned and lowered (in corpus order) until every kind has been."""
    seen: set[str] = set()
    for case in CASES:
        wanted = {kind for kind in TILED_KINDS if kind not in seen}
        if not wanted:
            break
        ops = {node.op_type for node in onnx.load(case.model_path).graph.node}
        if case.id in TOO_BIG or not any(ops & TILED_KINDS[kind] for kind in wanted):
            continue
        module = quantize_with_irc(onnx.load(case.model_path), [case.inputs])
        plan_module(module, NPU_DEMO)
        function = next(op for op in module.ops if isinstance(op, FuncOp))
        seen |= set(lower_function(function, NPU_DEMO).layers)
    assert seen >= set(TILED_KINDS)


@pytest.mark.parametrize(
    ("name", "kib"),
    # DenseNet-121 (its convs, pools and concats are ResNet-50's and Inception's kinds)
    # is left out: at 70 s it was the suite's slowest test.
    [("squeezenet", 512), ("resnet50", 512), ("shufflenet", 32)],
)
def test_float_models_match_the_nn_level_at_the_tile_level(
    name: str, kib: int, tmp_path: Path
) -> None:
    model = materialized_light_model(name)
    module = import_model(model)
    with collect_diagnostics():
        for module_pass in parse_pipeline(DEFAULT_GRAPH_OPT):
            module_pass.apply(make_context(), module)
    inputs = random_inputs(model, seed=2)
    expected = run_function(module, inputs)
    convs = sum(1 for op in module.walk() if op.name == "nn.conv")
    target = NPU_DEMO if kib == 512 else small_sram_target(tmp_path, kib)
    plan_module(module, target)
    function = next(op for op in module.ops if isinstance(op, FuncOp))
    stats = lower_function(function, target)
    verify_module(module)
    actual = run_function(module, inputs)
    assert stats.layers["nn.conv"] == convs > 0  # every conv is tiled
    assert set(stats.kept) <= {"nn.softmax"}, stats.kept
    for output, array in expected.items():
        scale = float(np.abs(array).max())
        assert np.abs(actual[output] - array).max() <= FLOAT_RTOL * scale, output
    StreamLowering(module, function, target, double=True).run()
    simulated, _ = simulate(module, inputs, target)
    _compare(simulated, actual, exact=True)  # the same float arithmetic, tile by tile
