"""The integer linear resize (issue 20): `qnn.resize`, `tile.resize`, `npu.resize`.

A linear `nn.resize` of quantized values becomes `qnn.resize`: Q10 source coordinates
(TFLite's integer bilinear), the weighted sum of the 2 or 4 neighbours rounded half
to even. Checked here:

- `fixed_point.resize_linear` on hand-computed cases (the 2x half-pixel weights 1/4
  and 3/4, the clamped edges, align_corners);
- against its QDQ form (dequantize, float resize, quantize) within one step on
  99.9% of the elements, for every coordinate mode, up- and down-scales, int8 and
  int16;
- on the NPU: tiles of rows, columns and channels, each reading the input window
  its outputs need (`ResizeReach`, whatever the tiling), or whole planes when they
  fit; bit-exact at the tile level and in the simulator, for resizes far larger than
  SRAM too; the target's support table decides (Ethos-U: scales 2, 4, 8, not
  pytorch_half_pixel).
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from test_tile_models import INT16_TARGET, NPU_DEMO, lower_and_compare

from irc import backend
from irc.backend.movement import ResizeReach
from irc.diagnostics import collect_diagnostics
from irc.dialects import qnn
from irc.importers.onnx import import_model
from irc.interp import run_function
from irc.interp.tile import resize_axis_reads
from irc.ir import fixed_point
from irc.quantize.calibration import calibrate
from irc.quantize.qdq import QuantizeConfig, prepare_for_calibration, quantize_module
from irc.targets import load_target
from irc.testing.quantized import quantize_with_irc
from irc.testing.reference import random_inputs
from irc.transforms.lower_to_qnn import lower_module


def test_a_2x_half_pixel_resize_weighs_its_neighbours_a_quarter_and_three_quarters() -> None:
    low, high, weight = fixed_point.resize_coordinates("half_pixel", 2.0, 4, 8, 10)
    # Sources -0.25 (the edge), 0.25, 0.75, 1.25, ..., 3.25 (the edge).
    np.testing.assert_array_equal(low, [0, 0, 0, 1, 1, 2, 2, 3])
    np.testing.assert_array_equal(high, [0, 1, 1, 2, 2, 3, 3, 3])
    np.testing.assert_array_equal(weight, [768, 256, 768, 256, 768, 256, 768, 256])
    x = np.array([[0, 100, -50, 20]])
    # 62.5, -12.5, -32.5 and 2.5 round half to even.
    expected = [[0, 25, 75, 62, -12, -32, 2, 20]]
    resized = fixed_point.resize_linear(x, [1], [2.0], "half_pixel", [8], 10)
    np.testing.assert_array_equal(resized, expected)


def test_align_corners_keeps_the_corners_and_two_axes_multiply_their_weights() -> None:
    x = np.array([[10, 20, 40], [50, 60, 80], [90, 100, 120]])
    y = fixed_point.resize_linear(x, [0, 1], [5 / 3, 5 / 3], "align_corners", [5, 5], 10)
    assert y[0, 0] == 10 and y[0, -1] == 40 and y[-1, 0] == 90 and y[-1, -1] == 120
    assert y[1, 1] == 35  # (10 + 20 + 50 + 60) / 4: (3 - 1) / (5 - 1) input steps a step
    assert y[2, 2] == 60


def test_a_weight_that_rounds_to_one_reads_the_next_index() -> None:
    """v = 0.9999 in Q10 rounds to 1024/1024: index 1 with weight 0, not index 0 with
    a weight of one that would read past it."""
    low, high, weight = fixed_point.resize_coordinates("asymmetric", 1 / 0.9999, 3, 2, 10)
    assert (low[1], high[1], weight[1]) == (1, 2, 0)


# --------------------------------------------------------------------------------------
# Against the QDQ form

SHAPE = [1, 3, 6, 8]


def resize_model(
    mode: str, scales: tuple[float, float], shape: list[int] = SHAPE, kind: str = "linear"
) -> onnx.ModelProto:
    """x -> conv 3x3 (so that the resize reads a computed value) -> Resize(`kind`) -> y."""
    n, c, h, w = shape
    out = [n, 4, int(h * scales[0]), int(w * scales[1])]
    weight = np.random.default_rng(0).standard_normal((4, c, 3, 3)).astype(np.float32) * 0.3
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node(
            "Resize",
            ["c", "", "scales"],
            ["y"],
            mode=kind,
            coordinate_transformation_mode=mode,
        ),
    ]
    graph = helper.make_graph(
        nodes,
        "resize",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out)],
        [
            numpy_helper.from_array(weight, "w"),
            numpy_helper.from_array(np.array([1, 1, *scales], np.float32), "scales"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


MODES = ["half_pixel", "pytorch_half_pixel", "asymmetric", "align_corners"]
SCALES = [(2.0, 2.0), (3.0, 1.0), (0.5, 0.5), (1.5, 2.5)]


@pytest.mark.parametrize("activations", ["int8", "int16"])
@pytest.mark.parametrize("scales", SCALES, ids=[f"{h}x{w}" for h, w in SCALES])
@pytest.mark.parametrize("mode", MODES)
def test_the_integer_resize_computes_what_its_qdq_form_computes(
    mode: str, scales: tuple[float, float], activations: str
) -> None:
    model = resize_model(mode, scales)
    module = import_model(model)
    samples = [random_inputs(model, seed=seed) for seed in range(4)]
    with collect_diagnostics():
        prepare_for_calibration(module)
        stats = calibrate(module, samples, "minmax", progress=False)
        quantize_module(module, stats, QuantizeConfig(activations=activations))  # type: ignore[arg-type]
        qdq = module.clone()
        lower_module(module, None)
    [resize] = [op for op in module.walk() if isinstance(op, qnn.ResizeOp)]
    element = resize.result.type.get_element_type()
    scale = element.scale_values[0]  # type: ignore[attr-defined]
    steps = []
    for seed in range(3):
        inputs = random_inputs(model, seed=50 + seed)
        (ours,) = run_function(module, inputs).values()
        (theirs,) = run_function(qdq, inputs).values()
        steps.append(np.abs(np.rint((ours - theirs) / scale)).reshape(-1))
    difference = np.concatenate(steps)
    within = float(np.mean(difference <= 1))
    assert within >= 0.999, f"{within:.4%} within one step, max {difference.max()}"


# --------------------------------------------------------------------------------------
# On the NPU


@pytest.mark.parametrize(
    ("mode", "scales", "target"),
    [
        ("half_pixel", (2.0, 2.0), NPU_DEMO),
        ("align_corners", (3.0, 1.0), NPU_DEMO),
        ("asymmetric", (0.5, 0.5), NPU_DEMO),
        ("half_pixel", (2.0, 2.0), INT16_TARGET),
    ],
    ids=["half_pixel-2x", "align_corners-3x1", "asymmetric-half", "int16"],
)
def test_a_linear_resize_runs_bit_exact_on_the_npu(
    mode: str, scales: tuple[float, float], target
) -> None:
    model = resize_model(mode, scales, [1, 3, 12, 16])
    samples = [random_inputs(model, seed=seed) for seed in range(4)]
    activations = "int16" if target is INT16_TARGET else "int8"
    module = quantize_with_irc(model, samples, activations=activations)  # type: ignore[arg-type]
    texts: list[str] = []
    stats = lower_and_compare(module, samples[0], target, texts)
    assert stats.layers["qnn.resize"] == 1 and not stats.kept
    # NHWC: the rows and columns resized, whole planes a tile (of some channels).
    axes = "axes = [1, 2]" if scales[1] != 1.0 else "axes = [1]"
    lines = [line for line in texts[0].splitlines() if "tile.resize" in line]
    assert lines and all(axes in line for line in lines), lines


@pytest.mark.parametrize("scales", [(1.5, 0.5), (3.0, 3.0)], ids=["1.5x0.5", "3x"])
def test_a_nearest_resize_of_another_pattern_is_a_gather_on_the_npu(
    scales: tuple[float, float],
) -> None:
    """A nearest resize that does not repeat whole elements (asymmetric coordinates,
    rounded: rows 0, 1, 1, 2, 3, 3, ... for 1.5x) gathers whole planes on the vector
    unit: tile.resize in nearest mode, bit-exact."""
    model = resize_model("asymmetric", scales, [1, 3, 12, 16], kind="nearest")
    samples = [random_inputs(model, seed=seed) for seed in range(2)]
    module = quantize_with_irc(model, samples)
    texts: list[str] = []
    stats = lower_and_compare(module, samples[0], NPU_DEMO, texts)
    assert stats.layers["nn.resize"] == 1 and not stats.kept
    assert 'mode = "nearest"' in texts[0]


def test_the_target_decides_which_linear_resizes_the_npu_runs() -> None:
    """Ethos-U (Vela's constraints): scales 2, 4 and 8 and three coordinate modes."""
    ethos = load_target("ethos-u55-256")
    placements = {}
    for mode, scales in (("half_pixel", (2.0, 2.0)), ("pytorch_half_pixel", (2.0, 2.0))):
        model = resize_model(mode, scales)
        module = quantize_with_irc(model, [random_inputs(model, seed=0)])
        [resize] = [op for op in module.walk() if isinstance(op, qnn.ResizeOp)]
        placements[mode] = backend.place(resize, ethos)
    model = resize_model("half_pixel", (3.0, 3.0))
    module = quantize_with_irc(model, [random_inputs(model, seed=0)])
    [resize] = [op for op in module.walk() if isinstance(op, qnn.ResizeOp)]
    placements["3x"] = backend.place(resize, ethos)
    assert placements["half_pixel"].device == "npu"
    assert placements["pytorch_half_pixel"].reasons == (
        'qnn.resize coordinate_transformation_mode="pytorch_half_pixel": target '
        "ethos-u55-256 supports asymmetric, align_corners, half_pixel",
    )
    assert placements["3x"].device == "cpu"
    assert "supports scales 2, 4, 8" in placements["3x"].reasons[0]


WINDOWS = [
    ("half_pixel", (2.0, 2.0), "linear", "int8"),
    ("align_corners", (3.0, 1.0), "linear", "int8"),
    ("asymmetric", (0.5, 0.5), "linear", "int8"),
    ("pytorch_half_pixel", (0.75, 1.25), "linear", "int8"),
    ("half_pixel", (1.5, 2.5), "linear", "int16"),
    ("asymmetric", (1.5, 0.5), "nearest", "int8"),
]


@pytest.mark.parametrize(
    ("mode", "scales", "kind", "activations"),
    WINDOWS,
    ids=[f"{kind}-{mode}-{h}x{w}-{a}" for mode, (h, w), kind, a in WINDOWS],
)
def test_a_resize_larger_than_sram_runs_in_windows_bit_exact(
    mode: str, scales: tuple[float, float], kind: str, activations: str
) -> None:
    """With 4 KiB of SRAM not even one channel's plane of a 40x48 map fits: the resize
    tiles its output rows, columns and channels, each tile loading the input window
    its outputs read (`tile.resize` of a window: the origins and the whole lengths),
    bit-exact at the tile level and in the simulator."""
    model = resize_model(mode, scales, [1, 3, 40, 48], kind=kind)
    samples = [random_inputs(model, seed=seed) for seed in range(2)]
    module = quantize_with_irc(model, samples, activations=activations)  # type: ignore[arg-type]
    base = INT16_TARGET if activations == "int16" else NPU_DEMO
    small = base.with_memory("sram", size_bytes=4096)
    texts: list[str] = []
    stats = lower_and_compare(module, samples[0], small, texts)
    assert not stats.kept
    lines = [line for line in texts[0].splitlines() if "tile.resize" in line]
    assert lines and all("input_lengths = [40" in line for line in lines), lines


@pytest.mark.parametrize("kind", ["linear", "nearest"])
def test_every_tiling_of_a_resize_reads_inside_its_window(kind: str) -> None:
    """For lengths and scales up and down, every coordinate mode and every tile size:
    each tile's window (`ResizeReach.origin`, `extent`) holds every input its outputs
    read, never starts more than `before` inputs before the input, and is at most
    what the planner counts: `(n - 1) * stride + kernel` inputs, and the input with
    its padding before (a window that reaches past the input's end, because a tile
    of the same size elsewhere needs that many, reads padding there)."""
    rng = np.random.default_rng(7)
    modes = MODES if kind == "linear" else ["half_pixel", "asymmetric", "align_corners"]
    for _ in range(40):
        in_length = int(rng.integers(1, 40))
        scale = float(np.float32(rng.choice([0.25, 0.5, 0.75, 1.5, 2.0, 3.0, 8.0])))
        out_length = max(1, int(in_length * scale))
        for coordinates in modes:
            reads = resize_axis_reads(
                kind, coordinates, "round_prefer_floor", scale, in_length, out_length, 10
            )
            reach = ResizeReach.of_reads(
                in_length, out_length, reads, coordinates == "align_corners"
            )
            low, high = np.minimum.reduce(reads), np.maximum.reduce(reads)
            tiles = {1, 2, 3, 4, 5, 7, 8, 13, out_length // 3, out_length - 1, out_length}
            for tile in sorted(t for t in tiles if 1 <= t <= out_length):
                extents = {
                    size: reach.extent(tile, size) for size in {tile, out_length % tile or tile}
                }
                for start in range(0, out_length, tile):
                    size = min(tile, out_length - start)
                    origin, extent = reach.origin(start), extents[size]
                    case = (kind, coordinates, in_length, out_length, tile, start)
                    assert -reach.before <= origin <= low[start : start + size].min(), case
                    assert high[start : start + size].max() < origin + extent, case
                    assert extent <= in_length + reach.before, case
                    assert extent <= (size - 1) * reach.stride + reach.kernel, case
