// RUN: irc-opt %s --split-input-file --target=%S/Inputs/npu-demo-fp16.toml -p 'partition{mode=cost}' --verify-each-numerics --numerics-rtol=0 --numerics-atol=0 | FileCheck %s
// RUN: irc-opt %s --split-input-file --target=%S/Inputs/npu-demo-fp16.toml -p 'partition{mode=cost}' --verify-diagnostics
// RUN: irc-opt %s --split-input-file --target=%S/Inputs/npu-demo-fp16.toml -p partition | FileCheck %s --check-prefix=SUPPORT

// `partition{mode=cost}` starts from the support placement and moves NPU ops to the
// CPU while the transfers and transitions they cause cost more than the NPU gains
// on them (docs/partitioning.md). npu-demo: a transition costs 50 us, copies run at
// 2 GB/s, the host does 0.5 G elements/s and 2 GMAC/s; the NPU has 16 vector lanes
// and 256 MACs at 500 MHz. Tensors count one byte per element.

// An isolated supported op between two fallback ops. On the NPU it costs two
// transitions (100 us) and two copies of 256 bytes (0.256 us), and gains
// 256 / 0.5e9 - 256 / 8e9 = 0.480 us: it goes to the CPU. In support mode it stays.
// CHECK-LABEL: func.func @isolated_op(%x: tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32> {
// CHECK-NEXT:    %n = nn.lrn %x {layout = "nhwc", size = 3}
// CHECK-NEXT:    %r = nn.relu %n
// CHECK-NEXT:    %m = nn.lrn %r {layout = "nhwc", size = 3}
// CHECK-NEXT:    func.return %m
// CHECK-NEXT:  }
// CHECK-NEXT: }
// SUPPORT-LABEL: func.func @isolated_op
// SUPPORT:         %r_npu = func.call @isolated_op_npu0(%n_npu)
// expected-remark @+1 {{partition: target npu-demo-fp16, mode cost: 0/3 ops on the NPU (0.0%), no MACs, 0 NPU subgraphs, 2 transitions, 3 fallback ops}}
func.func @isolated_op(%x: tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32> {
  // expected-note @+1 {{on the CPU: nn.lrn: not in target npu-demo-fp16's support table}}
  %n = nn.lrn %x {layout = "nhwc", size = 3} : tensor<1x8x8x4xf32>
  // expected-note @+1 {{on the CPU: moved to the CPU by the cost model: the host computes it 0.480 us slower than the NPU, the copies and transitions take 100.256 us less: 99.776 us saved}}
  %r = nn.relu %n : tensor<1x8x8x4xf32>
  // expected-note @+1 {{on the CPU: nn.lrn: not in target npu-demo-fp16's support table}}
  %m = nn.lrn %r {layout = "nhwc", size = 3} : tensor<1x8x8x4xf32>
  func.return %m : tensor<1x8x8x4xf32>
}

// -----

// Two small ops between fallbacks move together, as one subgraph: each reports
// the pair's figures.
// CHECK-LABEL: func.func @isolated_pair
// CHECK-NOT:     func.call
// CHECK:         func.return
// expected-remark @+1 {{0/4 ops on the NPU (0.0%), no MACs, 0 NPU subgraphs, 2 transitions, 4 fallback ops}}
func.func @isolated_pair(%x: tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32> {
  // expected-note @+1 {{nn.lrn: not in target npu-demo-fp16's support table}}
  %n = nn.lrn %x {layout = "nhwc", size = 3} : tensor<1x8x8x4xf32>
  // expected-note @+1 {{on the CPU: moved to the CPU by the cost model (with 1 other op): the host computes them 0.960 us slower than the NPU, the copies and transitions take 100.256 us less: 99.296 us saved}}
  %r = nn.relu %n : tensor<1x8x8x4xf32>
  // expected-note @+1 {{on the CPU: moved to the CPU by the cost model (with 1 other op): the host computes them 0.960 us slower than the NPU, the copies and transitions take 100.256 us less: 99.296 us saved}}
  %c = nn.clip %r {min = 0.0, max = 6.0} : tensor<1x8x8x4xf32>
  // expected-note @+1 {{nn.lrn: not in target npu-demo-fp16's support table}}
  %m = nn.lrn %c {layout = "nhwc", size = 3} : tensor<1x8x8x4xf32>
  func.return %m : tensor<1x8x8x4xf32>
}

// -----

// The worked example's conv between two fallback ops: 57.8 M MACs gain about 29 ms
// on the NPU, far more than two transitions cost. It stays in both modes.
// CHECK-LABEL: func.func @heavy_op
// CHECK:         %c_npu = func.call @heavy_op_npu0(%n_npu)
// CHECK:       func.func private @heavy_op_npu0
// CHECK-NEXT:    nn.constant
// CHECK-NEXT:    %c = nn.conv
// expected-remark @+1 {{1/3 ops on the NPU (33.3%), 100.0% of MACs, 1 NPU subgraph, 4 transitions, 2 fallback ops}}
func.func @heavy_op(%x: tensor<1x56x56x32xf32>) -> tensor<1x56x56x64xf32> {
  %w = nn.constant dense<0.01> : tensor<64x3x3x32xf32>
  // expected-note @+1 {{nn.lrn: not in target npu-demo-fp16's support table}}
  %n = nn.lrn %x {layout = "nhwc", size = 3} : tensor<1x56x56x32xf32>
  %c = nn.conv %n, %w {layout = "nhwc", pads = [1, 1, 1, 1]} : (tensor<1x56x56x32xf32>, tensor<64x3x3x32xf32>) -> tensor<1x56x56x64xf32>
  // expected-note @+1 {{nn.lrn: not in target npu-demo-fp16's support table}}
  %m = nn.lrn %c {layout = "nhwc", size = 3} : tensor<1x56x56x64xf32>
  func.return %m : tensor<1x56x56x64xf32>
}

// -----

// A boundary op alone: the 8x8 max pool (stride 2) shrinks 16 KiB to 2,704 bytes, so
// running it on the CPU copies 13,680 bytes less (6.840 us) for a loss of 5.070 us;
// the conv after it stays on the NPU.
// CHECK-LABEL: func.func @shrinking_op_at_the_boundary
// CHECK-NEXT:    %n = nn.lrn %x {layout = "nhwc", size = 3}
// CHECK-NEXT:    %m = nn.max_pool %n {kernel_shape = [8, 8], layout = "nhwc", strides = [2, 2]}
// CHECK-NEXT:    %m_npu = part.transfer %m {to = "npu"} : tensor<1x13x13x16xf32>
// CHECK-NEXT:    %c_npu = func.call @shrinking_op_at_the_boundary_npu0(%m_npu)
// SUPPORT-LABEL: func.func @shrinking_op_at_the_boundary
// SUPPORT-NEXT:    %n = nn.lrn %x {layout = "nhwc", size = 3}
// SUPPORT-NEXT:    %n_npu = part.transfer %n {to = "npu"} : tensor<1x32x32x16xf32>
// expected-remark @+1 {{1/3 ops on the NPU (33.3%), 100.0% of MACs, 1 NPU subgraph, 2 transitions, 2 fallback ops}}
func.func @shrinking_op_at_the_boundary(%x: tensor<1x32x32x16xf32>) -> tensor<1x13x13x64xf32> {
  %w = nn.constant dense<0.01> : tensor<64x3x3x16xf32>
  // expected-note @+1 {{nn.lrn: not in target npu-demo-fp16's support table}}
  %n = nn.lrn %x {layout = "nhwc", size = 3} : tensor<1x32x32x16xf32>
  // expected-note @+1 {{on the CPU: moved to the CPU by the cost model: the host computes it 5.070 us slower than the NPU, the copies and transitions take 6.840 us less: 1.770 us saved}}
  %m = nn.max_pool %n {kernel_shape = [8, 8], layout = "nhwc", strides = [2, 2]} : (tensor<1x32x32x16xf32>) -> tensor<1x13x13x16xf32>
  %c = nn.conv %m, %w {layout = "nhwc", pads = [1, 1, 1, 1]} : (tensor<1x13x13x16xf32>, tensor<64x3x3x16xf32>) -> tensor<1x13x13x64xf32>
  func.return %c : tensor<1x13x13x64xf32>
}

// -----

// A whole model on the NPU stays there: moving it would save only the copies of its
// input and output (0.256 us) and lose 0.480 us. No transition either way.
// CHECK-LABEL: func.func @all_on_the_npu
// CHECK:         func.call @all_on_the_npu_npu0
// expected-remark @+1 {{1/1 ops on the NPU (100.0%), no MACs, 1 NPU subgraph, 0 transitions, 0 fallback ops}}
func.func @all_on_the_npu(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %r = nn.relu %x : tensor<1x4x8x8xf32>
  func.return %r : tensor<1x4x8x8xf32>
}
