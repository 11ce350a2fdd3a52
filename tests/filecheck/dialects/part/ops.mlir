// RUN: irc-opt %s | irc-opt | FileCheck %s
// RUN: irc-opt %s --mlir-print-op-generic | irc-opt | FileCheck %s
// RUN: irc-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Round-trip of the `part` dialect: `part.transfer` copies a tensor to NPU memory
// (`to = "npu"`) or back to host memory (`to = "cpu"`); the type is written once.

// CHECK-LABEL: func.func @transfers
// CHECK-NEXT:    %x_npu = part.transfer %x {to = "npu"} : tensor<1x3x8x8xf32>
// CHECK-NEXT:    %y = part.transfer %x_npu {to = "cpu"} : tensor<1x3x8x8xf32>
// CHECK-NEXT:    func.return %y : tensor<1x3x8x8xf32>
// GENERIC-LABEL: "func.func"() <{sym_name = "transfers"
// GENERIC:         %x_npu = "part.transfer"(%x) <{to = "npu"}> : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
func.func @transfers(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> {
  %x_npu = part.transfer %x {to = "npu"} : tensor<1x3x8x8xf32>
  %y = part.transfer %x_npu {to = "cpu"} : tensor<1x3x8x8xf32>
  func.return %y : tensor<1x3x8x8xf32>
}

// Any element type and rank, including scalars (rank 0).
// CHECK-LABEL: func.func @element_types
// CHECK-NEXT:    part.transfer %i {to = "npu"} : tensor<4xi64>
// CHECK-NEXT:    part.transfer %b {to = "cpu"} : tensor<2x2xi1>
// CHECK-NEXT:    part.transfer %s {to = "npu"} : tensor<f16>
func.func @element_types(%i: tensor<4xi64>, %b: tensor<2x2xi1>, %s: tensor<f16>) {
  %0 = part.transfer %i {to = "npu"} : tensor<4xi64>
  %1 = part.transfer %b {to = "cpu"} : tensor<2x2xi1>
  %2 = part.transfer %s {to = "npu"} : tensor<f16>
  func.return
}

// A dialect-prefixed discardable attribute is kept beside `to`.
// CHECK-LABEL: func.func @discardable_attribute
// CHECK-NEXT:    part.transfer %x {to = "npu", irc.note = "input"} : tensor<4xf32>
func.func @discardable_attribute(%x: tensor<4xf32>) {
  %0 = part.transfer %x {irc.note = "input", to = "npu"} : tensor<4xf32>
  func.return
}
