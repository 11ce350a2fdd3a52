// RUN: irc-opt %s -p 'partition{target=%S/Inputs/partition-no-lut.toml}' --verify-diagnostics | FileCheck %s
// RUN: irc-opt %s --target=%S/Inputs/partition-no-lut.toml -p partition --verify-diagnostics | FileCheck %s

// Activations that the NPU evaluates with its lookup table fall back on a target
// without one (a target file, given as the pass option or as irc-opt --target).

// CHECK-LABEL: func.func @lookup_tables(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
// CHECK-NEXT:    %x_npu = part.transfer %x {to = "npu"}
// CHECK-NEXT:    %r_npu = func.call @lookup_tables_npu0(%x_npu)
// CHECK-NEXT:    %r = part.transfer %r_npu {to = "cpu"}
// CHECK-NEXT:    %s = nn.sigmoid %r
// CHECK-NEXT:    %t = nn.tanh %s
// CHECK-NEXT:    func.return %t
// CHECK:       func.func private @lookup_tables_npu0(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> attributes {irc.device = "npu"} {
// CHECK-NEXT:    %r = nn.relu %x
// expected-remark @+1 {{partition: target no-lut, mode support: 1/3 ops on the NPU (33.3%), no MACs, 1 NPU subgraph, 2 transitions, 2 fallback ops}}
func.func @lookup_tables(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %r = nn.relu %x : tensor<1x8x4x4xf32>
  // expected-note @+1 {{on the CPU: nn.sigmoid needs a lookup table: target no-lut has none}}
  %s = nn.sigmoid %r : tensor<1x8x4x4xf32>
  // expected-note @+1 {{on the CPU: nn.tanh needs a lookup table: target no-lut has none}}
  %t = nn.tanh %s : tensor<1x8x4x4xf32>
  func.return %t : tensor<1x8x4x4xf32>
}

