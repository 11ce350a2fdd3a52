"""irc/backend/cost.py: MACs, elements, bytes and time estimates of nn ops, against hand counts.

Every expected number is computed by hand in the test from the op's shapes (and, for
times, from the npu-demo preset's figures: 256 MACs at 500 MHz, 16 vector lanes, DDR
at 1 GB/s with 100 cycles of latency, 512 KiB of SRAM; host 2 GMAC/s, 0.5 G elements/s,
2 GB/s copies).
"""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import TensorType, f32, i32, i64
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation

from irc.backend import cost
from irc.dialects.quant import UniformQuantizedType
from irc.ir.context import make_context
from irc.ir.io import parse_module, verify_module
from irc.targets import load_target


def ops_of(body: str, signature: str) -> dict[str, Operation]:
    """Parse `func.func @f(<signature>) { <body> func.return }` and return its ops by
    the name of their first result."""
    text = f"func.func @f({signature}) {{\n{body}\n  func.return\n}}"
    module = parse_module(text, make_context(), "cost-test.mlir")
    verify_module(module)
    function = next(op for op in module.ops if isinstance(op, FuncOp))
    return {
        op.results[0].name_hint: op
        for op in function.body.block.ops
        if op.results and op.results[0].name_hint
    }


# The worked example (docs/targets.md, "npu-demo"): a 3x3 conv of a 56x56x32 map to 64 channels.
WORKED_EXAMPLE = """
  %w = nn.constant dense<1.0> : tensor<64x32x3x3xf32>
  %y = nn.conv %x, %w {pads = [1, 1, 1, 1]} : (tensor<1x32x56x56xf32>, tensor<64x32x3x3xf32>) -> tensor<1x64x56x56xf32>
"""
WORKED_EXAMPLE_MACS = 56 * 56 * 64 * 32 * 3 * 3


def test_conv_macs_worked_example() -> None:
    ops = ops_of(WORKED_EXAMPLE, "%x: tensor<1x32x56x56xf32>")
    assert cost.op_macs(ops["y"]) == WORKED_EXAMPLE_MACS == 57_802_752


def test_conv_macs_channels_last_grouped_and_strided() -> None:
    ops = ops_of(
        """
  %w = nn.constant dense<1.0> : tensor<64x3x3x32xf32>
  %y = nn.conv %x, %w {layout = "nhwc", pads = [1, 1, 1, 1]} : (tensor<1x56x56x32xf32>, tensor<64x3x3x32xf32>) -> tensor<1x56x56x64xf32>
  %dw = nn.constant dense<1.0> : tensor<32x1x3x3xf32>
  %d = nn.conv %c, %dw {group = 32, pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<2x32x16x16xf32>, tensor<32x1x3x3xf32>) -> tensor<2x32x8x8xf32>
  %gw = nn.constant dense<1.0> : tensor<8x2x1x1xf32>
  %g = nn.conv %e, %gw {group = 2} : (tensor<1x4x5x5xf32>, tensor<8x2x1x1xf32>) -> tensor<1x8x5x5xf32>
""",
        "%x: tensor<1x56x56x32xf32>, %c: tensor<2x32x16x16xf32>, %e: tensor<1x4x5x5xf32>",
    )
    assert cost.op_macs(ops["y"]) == WORKED_EXAMPLE_MACS
    # Depthwise, stride 2, batch 2: every output sums over one channel's 3x3 taps.
    assert cost.op_macs(ops["d"]) == 2 * 32 * 8 * 8 * 9
    # Two groups of 2 input channels each.
    assert cost.op_macs(ops["g"]) == 8 * 5 * 5 * 2


def test_conv_transpose_macs() -> None:
    ops = ops_of(
        """
  %w = nn.constant dense<1.0> : tensor<4x2x3x3xf32>
  %y = nn.conv_transpose %x, %w {strides = [2, 2]} : (tensor<1x4x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x11x11xf32>
  %gw = nn.constant dense<1.0> : tensor<4x3x2x2xf32>
  %g = nn.conv_transpose %x, %gw {group = 2, strides = [2, 2]} : (tensor<1x4x5x5xf32>, tensor<4x3x2x2xf32>) -> tensor<1x6x10x10xf32>
""",
        "%x: tensor<1x4x5x5xf32>",
    )
    # Every input element is scattered to (output channels / group) x taps outputs.
    assert cost.op_macs(ops["y"]) == 4 * 5 * 5 * 2 * 3 * 3
    assert cost.op_macs(ops["g"]) == 4 * 5 * 5 * 3 * 2 * 2


def test_gemm_and_matmul_macs() -> None:
    ops = ops_of(
        """
  %g = nn.gemm %a, %b {trans_a = true} : (tensor<8x4xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  %h = nn.gemm %c, %b : (tensor<3x8xf32>, tensor<8x6xf32>) -> tensor<3x6xf32>
  %m = nn.matmul %p, %q : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  %v = nn.matmul %r, %q : (tensor<4xf32>, tensor<4x5xf32>) -> tensor<5xf32>
""",
        "%a: tensor<8x4xf32>, %b: tensor<8x6xf32>, %c: tensor<3x8xf32>, "
        "%p: tensor<2x3x4xf32>, %q: tensor<4x5xf32>, %r: tensor<4xf32>",
    )
    assert cost.op_macs(ops["g"]) == 4 * 6 * 8
    assert cost.op_macs(ops["h"]) == 3 * 6 * 8
    assert cost.op_macs(ops["m"]) == 2 * 3 * 5 * 4
    assert cost.op_macs(ops["v"]) == 5 * 4


def test_elements_and_no_macs_for_other_ops() -> None:
    ops = ops_of(
        """
  %c = nn.constant dense<1.0> : tensor<2x3xf32>
  %r = nn.relu %x : tensor<2x3xf32>
  %a = nn.add %r, %c : tensor<2x3xf32>
  %s, %t = nn.split %x {axis = 1, sizes = [1, 2]} : (tensor<2x3xf32>) -> (tensor<2x1xf32>, tensor<2x2xf32>)
  %p = nn.max_pool %y {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
""",
        "%x: tensor<2x3xf32>, %y: tensor<1x2x4x4xf32>",
    )
    assert [cost.op_macs(ops[name]) for name in "crasp"] == [0, 0, 0, 0, 0]
    assert cost.op_elements(ops["r"]) == 6
    assert cost.op_elements(ops["a"]) == 6
    assert cost.op_elements(ops["s"]) == 2 + 4  # both results
    assert cost.op_elements(ops["p"]) == 8
    assert cost.op_elements(ops["c"]) == 0  # data, not computation


def test_tensor_bytes() -> None:
    # A float model's tensors will be int8 on the NPU; a quantized model's float ones stay.
    assert cost.tensor_bytes(TensorType(f32, [1, 3, 224, 224])) == 150_528
    assert cost.tensor_bytes(TensorType(f32, [2, 3]), float_bytes=4) == 24
    # Integers and quantized tensors count their storage.
    assert cost.tensor_bytes(TensorType(i64, [])) == 8
    assert cost.tensor_bytes(TensorType(i32, [2, 3])) == 24
    int8 = TensorType(UniformQuantizedType.make(0.5, -3), [4, 4])
    assert cost.tensor_bytes(int8) == 16
    with pytest.raises(ValueError, match="statically shaped"):
        cost.tensor_bytes(TensorType(f32, [-1, 3]))
    with pytest.raises(ValueError, match="expected a tensor type"):
        cost.tensor_bytes(f32)


def test_ddr_bytes_weights_always_activations_when_they_spill() -> None:
    ops = ops_of(WORKED_EXAMPLE, "%x: tensor<1x32x56x56xf32>")
    conv = ops["y"]
    weights = 64 * 32 * 3 * 3
    activations = 32 * 56 * 56 + 64 * 56 * 56  # 301,056 bytes: fits in 512 KiB
    assert cost.op_ddr_bytes(conv, sram_bytes=512 * 1024) == weights
    assert cost.op_ddr_bytes(conv, sram_bytes=activations) == weights
    assert cost.op_ddr_bytes(conv, sram_bytes=activations - 1) == weights + activations


def test_npu_time_of_the_worked_example() -> None:
    target = load_target("npu-demo")
    conv = ops_of(WORKED_EXAMPLE, "%x: tensor<1x32x56x56xf32>")["y"]
    mac_seconds = WORKED_EXAMPLE_MACS / (256 * 500e6)
    assert mac_seconds == pytest.approx(0.45e-3, rel=0.01)  # docs/targets.md: 0.45 ms
    vector_seconds = (64 * 56 * 56) / (16 * 500e6)
    # Compute-bound: its 18 KiB of weights take 18.6 us from DDR, overlapped.
    assert cost.npu_seconds(conv, target) == pytest.approx(mac_seconds + vector_seconds)
    host = WORKED_EXAMPLE_MACS / 2e9 + (64 * 56 * 56) / 0.5e9
    assert cost.host_seconds(conv, target) == pytest.approx(host)

    # With a small SRAM the activations stream through DDR too, still under compute.
    small = target.with_memory("sram", size_bytes=4096)
    memory = 100 / 500e6 + (64 * 32 * 9 + 32 * 56 * 56 + 64 * 56 * 56) / 1e9
    assert memory < mac_seconds + vector_seconds
    assert cost.npu_seconds(conv, small) == pytest.approx(mac_seconds + vector_seconds)
    slow = small.with_memory("ddr", read_bytes_per_second=1e8, write_bytes_per_second=1e8)
    slow_memory = 100 / 500e6 + (64 * 32 * 9 + 32 * 56 * 56 + 64 * 56 * 56) / 1e8
    assert cost.npu_seconds(conv, slow) == pytest.approx(slow_memory)


def test_npu_time_of_a_weight_bound_gemm() -> None:
    target = load_target("npu-demo")
    gemm = ops_of(
        """
  %w = nn.constant dense<1.0> : tensor<1280x1000xf32>
  %y = nn.gemm %x, %w : (tensor<1x1280xf32>, tensor<1280x1000xf32>) -> tensor<1x1000xf32>
""",
        "%x: tensor<1x1280xf32>",
    )["y"]
    # 1.28 M MACs take 10 us on the array; the 1.28 MB of weights take 1.28 ms from DDR.
    assert cost.npu_seconds(gemm, target) == pytest.approx(100 / 500e6 + 1_280_000 / 1e9)
    assert cost.host_seconds(gemm, target) == pytest.approx(1_280_000 / 2e9 + 1000 / 0.5e9)


def test_elementwise_and_copy_times() -> None:
    target = load_target("npu-demo")
    relu = ops_of("  %r = nn.relu %x : tensor<1x64x56x56xf32>", "%x: tensor<1x64x56x56xf32>")["r"]
    elements = 64 * 56 * 56
    # Activations in SRAM: no DDR traffic, 16 lanes.
    assert cost.npu_seconds(relu, target) == pytest.approx(elements / (16 * 500e6))
    assert cost.host_seconds(relu, target) == pytest.approx(elements / 0.5e9)
    assert cost.copy_seconds(2_000_000, target) == pytest.approx(1e-3)
