// RUN: irc-opt %s -p 'partition{target=%S/Inputs/partition-no-lut.toml}' --verify-diagnostics | FileCheck %s

// A sigmoid fused into a conv needs the lookup table as much as a standalone one: on
// a target without one, the conv falls back, while a conv fusing a relu does not.

// CHECK-LABEL: func.func @fused_sigmoid
// CHECK:         func.call @fused_sigmoid_npu0
// CHECK:         nn.conv %{{.*}}, %{{.*}} {activation = #nn.activation<sigmoid>, layout = "nhwc"}
// expected-remark @+1 {{partition: target no-lut, mode support: 1/2 ops on the NPU (50.0%), 50.0% of MACs, 1 NPU subgraph, 2 transitions, 1 fallback op}}
func.func @fused_sigmoid(%x: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %w = nn.constant dense<0.5> : tensor<8x1x1x8xf32>
  %r = nn.conv %x, %w {layout = "nhwc", activation = #nn.activation<relu>} : (tensor<1x4x4x8xf32>, tensor<8x1x1x8xf32>) -> tensor<1x4x4x8xf32>
  // expected-note @+1 {{on the CPU: nn.conv fused activation sigmoid needs a lookup table: target no-lut has none}}
  %s = nn.conv %r, %w {layout = "nhwc", activation = #nn.activation<sigmoid>} : (tensor<1x4x4x8xf32>, tensor<8x1x1x8xf32>) -> tensor<1x4x4x8xf32>
  func.return %s : tensor<1x4x4x8xf32>
}
