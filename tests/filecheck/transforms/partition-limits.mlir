// RUN: irc-opt %s --split-input-file -p 'partition{target=%S/Inputs/npu-demo-fp16.toml}' --verify-diagnostics | FileCheck %s

// Each kind of limit in a target's support table that sends an op to the CPU
// (irc/targets/support.py, with the npu-demo preset), one case each: the op stays in
// the function, and a note at the op gives the exact reason(s). The ops around it
// that npu-demo runs go to NPU functions.

// CHECK-LABEL: func.func @kernel_size
// CHECK:         nn.conv %x, %w {layout = "nhwc"} : (tensor<1x16x16x8xf32>, tensor<8x9x9x8xf32>) -> tensor<1x8x8x8xf32>
// CHECK-NEXT:    func.return
// CHECK-NOT:   func.func
// expected-remark @+1 {{0/1 ops on the NPU (0.0%), 0.0% of MACs}}
func.func @kernel_size(%x: tensor<1x16x16x8xf32>) -> tensor<1x8x8x8xf32> {
  %w = nn.constant dense<0.1> : tensor<8x9x9x8xf32>
  // expected-note @+1 {{on the CPU: nn.conv kernel 9x9: target npu-demo-fp16 supports kernels up to 7x7}}
  %y = nn.conv %x, %w {layout = "nhwc"} : (tensor<1x16x16x8xf32>, tensor<8x9x9x8xf32>) -> tensor<1x8x8x8xf32>
  func.return %y : tensor<1x8x8x8xf32>
}

// -----

// CHECK-LABEL: func.func @stride
// CHECK:         nn.conv %x, %w {layout = "nhwc", strides = [3, 3]}
// expected-remark @+1 {{0/1 ops on the NPU}}
func.func @stride(%x: tensor<1x16x16x8xf32>) -> tensor<1x5x5x8xf32> {
  %w = nn.constant dense<0.1> : tensor<8x3x3x8xf32>
  // expected-note @+1 {{on the CPU: nn.conv stride 3x3: target npu-demo-fp16 supports strides 1, 2}}
  %y = nn.conv %x, %w {layout = "nhwc", strides = [3, 3]} : (tensor<1x16x16x8xf32>, tensor<8x3x3x8xf32>) -> tensor<1x5x5x8xf32>
  func.return %y : tensor<1x5x5x8xf32>
}

// -----

// CHECK-LABEL: func.func @dilation
// CHECK:         nn.conv %x, %w {dilations = [3, 3], layout = "nhwc"}
// expected-remark @+1 {{0/1 ops on the NPU}}
func.func @dilation(%x: tensor<1x16x16x8xf32>) -> tensor<1x10x10x8xf32> {
  %w = nn.constant dense<0.1> : tensor<8x3x3x8xf32>
  // expected-note @+1 {{on the CPU: nn.conv dilation 3x3: target npu-demo-fp16 supports dilations 1, 2}}
  %y = nn.conv %x, %w {dilations = [3, 3], layout = "nhwc"} : (tensor<1x16x16x8xf32>, tensor<8x3x3x8xf32>) -> tensor<1x10x10x8xf32>
  func.return %y : tensor<1x10x10x8xf32>
}

// -----

// Channels, in the channels-last layout (the target sees the same channels).
// CHECK-LABEL: func.func @channels
// CHECK:         nn.conv %x, %w {layout = "nhwc"} : (tensor<1x4x4x8xf32>, tensor<5000x1x1x8xf32>) -> tensor<1x4x4x5000xf32>
// expected-remark @+1 {{0/1 ops on the NPU}}
func.func @channels(%x: tensor<1x4x4x8xf32>) -> tensor<1x4x4x5000xf32> {
  %w = nn.constant dense<0.1> : tensor<5000x1x1x8xf32>
  // expected-note @+1 {{on the CPU: nn.conv 5000 output channels: target npu-demo-fp16 supports up to 4096}}
  %y = nn.conv %x, %w {layout = "nhwc"} : (tensor<1x4x4x8xf32>, tensor<5000x1x1x8xf32>) -> tensor<1x4x4x5000xf32>
  func.return %y : tensor<1x4x4x5000xf32>
}

// -----

// Grouped convolution: npu-demo runs group 1 and depthwise only. The depthwise conv
// after it runs on the NPU.
// CHECK-LABEL: func.func @groups
// CHECK:         %g = nn.conv %x, %w {group = 2, layout = "nhwc"}
// CHECK:         func.call @groups_npu0
// CHECK:       func.func private @groups_npu0
// CHECK:         nn.conv %g, %dw {group = 8, layout = "nhwc"
// expected-remark @+1 {{1/2 ops on the NPU (50.0%)}}
func.func @groups(%x: tensor<1x16x16x8xf32>) -> tensor<1x16x16x8xf32> {
  %w = nn.constant dense<0.1> : tensor<8x1x1x4xf32>
  // expected-note @+1 {{on the CPU: nn.conv group 2 (8 input channels, 8 output channels): target npu-demo-fp16 supports group 1 and depthwise convolutions (group = input channels = output channels)}}
  %g = nn.conv %x, %w {group = 2, layout = "nhwc"} : (tensor<1x16x16x8xf32>, tensor<8x1x1x4xf32>) -> tensor<1x16x16x8xf32>
  %dw = nn.constant dense<0.1> : tensor<8x3x3x1xf32>
  %d = nn.conv %g, %dw {group = 8, layout = "nhwc", pads = [1, 1, 1, 1]} : (tensor<1x16x16x8xf32>, tensor<8x3x3x1xf32>) -> tensor<1x16x16x8xf32>
  func.return %d : tensor<1x16x16x8xf32>
}

// -----

// CHECK-LABEL: func.func @padding
// CHECK:         nn.conv %x, %w {layout = "nhwc", pads = [4, 4, 4, 4]}
// expected-remark @+1 {{0/1 ops on the NPU}}
func.func @padding(%x: tensor<1x16x16x8xf32>) -> tensor<1x22x22x8xf32> {
  %w = nn.constant dense<0.1> : tensor<8x3x3x8xf32>
  // expected-note @+1 {{on the CPU: nn.conv padding 4 (pads [4, 4, 4, 4]): target npu-demo-fp16 supports padding up to 3 per side}}
  %y = nn.conv %x, %w {layout = "nhwc", pads = [4, 4, 4, 4]} : (tensor<1x16x16x8xf32>, tensor<8x3x3x8xf32>) -> tensor<1x22x22x8xf32>
  func.return %y : tensor<1x22x22x8xf32>
}

// -----

// A pooling window larger than the target's.
// CHECK-LABEL: func.func @pooling_window
// CHECK:         nn.max_pool %x {kernel_shape = [9, 9], layout = "nhwc"}
// expected-remark @+1 {{0/1 ops on the NPU}}
func.func @pooling_window(%x: tensor<1x16x16x8xf32>) -> tensor<1x8x8x8xf32> {
  // expected-note @+1 {{on the CPU: nn.max_pool kernel 9x9: target npu-demo-fp16 supports kernels up to 8x8}}
  %y = nn.max_pool %x {kernel_shape = [9, 9], layout = "nhwc"} : (tensor<1x16x16x8xf32>) -> tensor<1x8x8x8xf32>
  func.return %y : tensor<1x8x8x8xf32>
}

// -----

// Several limits broken at once: every reason is given (AlexNet's first layer).
// CHECK-LABEL: func.func @several_limits
// expected-remark @+1 {{0/1 ops on the NPU}}
func.func @several_limits(%x: tensor<1x227x227x3xf32>) -> tensor<1x55x55x96xf32> {
  %w = nn.constant dense<0.1> : tensor<96x11x11x3xf32>
  // expected-note @+1 {{on the CPU: nn.conv kernel 11x11: target npu-demo-fp16 supports kernels up to 7x7; nn.conv stride 4x4: target npu-demo-fp16 supports strides 1, 2}}
  %y = nn.conv %x, %w {layout = "nhwc", strides = [4, 4]} : (tensor<1x227x227x3xf32>, tensor<96x11x11x3xf32>) -> tensor<1x55x55x96xf32>
  func.return %y : tensor<1x55x55x96xf32>
}

// -----

// A fused activation the MAC array cannot apply.
// CHECK-LABEL: func.func @fused_activation
// expected-remark @+1 {{0/1 ops on the NPU}}
func.func @fused_activation(%x: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %w = nn.constant dense<0.1> : tensor<8x1x1x8xf32>
  // expected-note @+1 {{on the CPU: nn.conv activation sigmoid: target npu-demo-fp16 fuses relu, clip, leaky_relu}}
  %y = nn.conv %x, %w {activation = #nn.activation<sigmoid>, layout = "nhwc"} : (tensor<1x4x4x8xf32>, tensor<8x1x1x8xf32>) -> tensor<1x4x4x8xf32>
  func.return %y : tensor<1x4x4x8xf32>
}

// -----

// A matrix too large: Gemm's K.
// CHECK-LABEL: func.func @gemm_k
// expected-remark @+1 {{0/1 ops on the NPU}}
func.func @gemm_k(%x: tensor<1x9216xf32>) -> tensor<1x16xf32> {
  %w = nn.constant dense<0.1> : tensor<9216x16xf32>
  // expected-note @+1 {{on the CPU: nn.gemm K=9216: target npu-demo-fp16 supports K up to 4096}}
  %y = nn.gemm %x, %w : (tensor<1x9216xf32>, tensor<9216x16xf32>) -> tensor<1x16xf32>
  func.return %y : tensor<1x16xf32>
}

// -----

// Resize: a mode the target does not implement; the relu after it runs on the NPU.
// CHECK-LABEL: func.func @resize_mode
// CHECK:         %y = nn.resize %x {mode = "cubic"
// CHECK-NEXT:    %y_npu = part.transfer %y {to = "npu"}
// CHECK-NEXT:    func.call @resize_mode_npu0(%y_npu)
// expected-remark @+1 {{1/2 ops on the NPU (50.0%), no MACs, 1 NPU subgraph, 2 transitions, 1 fallback op}}
func.func @resize_mode(%x: tensor<1x8x16x16xf32>) -> tensor<1x8x32x32xf32> {
  // expected-note @+1 {{on the CPU: nn.resize mode="cubic": target npu-demo-fp16 supports nearest, linear}}
  %y = nn.resize %x {mode = "cubic", scales = [1.0, 1.0, 2.0, 2.0]} : (tensor<1x8x16x16xf32>) -> tensor<1x8x32x32xf32>
  %r = nn.relu %y : tensor<1x8x32x32xf32>
  func.return %r : tensor<1x8x32x32xf32>
}

// -----

// Ops missing from the support table, and a tensor of too high a rank.
// CHECK-LABEL: func.func @unsupported_ops
// CHECK:         nn.lrn
// CHECK:         nn.div
// CHECK:         nn.reshape
// expected-remark @+1 {{0/3 ops on the NPU (0.0%), no MACs, 0 NPU subgraphs, 2 transitions, 3 fallback ops}}
func.func @unsupported_ops(%x: tensor<1x8x8x4xf32>) -> tensor<1x2x2x8x8xf32> {
  // expected-note @+1 {{on the CPU: nn.lrn: not in target npu-demo-fp16's support table}}
  %n = nn.lrn %x {layout = "nhwc", size = 3} : tensor<1x8x8x4xf32>
  // expected-note @+1 {{on the CPU: nn.div: not in target npu-demo-fp16's support table}}
  %d = nn.div %n, %x : tensor<1x8x8x4xf32>
  // expected-note @+1 {{on the CPU: nn.reshape rank 5: target npu-demo-fp16 supports tensors up to rank 4}}
  %r = nn.reshape %d : (tensor<1x8x8x4xf32>) -> tensor<1x2x2x8x8xf32>
  func.return %r : tensor<1x2x2x8x8xf32>
}
