// --mlir-print-op-generic prints every op in MLIR's generic form, properties in
// `<{...}>`; irc-opt parses it back to the same IR.
// RUN: irc-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: irc-opt %s --mlir-print-op-generic | irc-opt | FileCheck %s --check-prefix=CUSTOM

// GENERIC:      "builtin.module"() ({
// GENERIC-NEXT:   "func.func"() <{sym_name = "conv_relu", function_type = (tensor<1x3x4x4xf32>, tensor<2x3x1x1xf32>) -> tensor<1x2x4x4xf32>}> ({
// GENERIC-NEXT:   ^bb0(%x: tensor<1x3x4x4xf32>, %w: tensor<2x3x1x1xf32>):
// GENERIC-NEXT:     %y = "nn.conv"(%x, %w) : (tensor<1x3x4x4xf32>, tensor<2x3x1x1xf32>) -> tensor<1x2x4x4xf32>
// GENERIC-NEXT:     %r = "nn.leaky_relu"(%y) <{alpha = 2.000000e-01 : f32}> : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// GENERIC-NEXT:     "func.return"(%r) : (tensor<1x2x4x4xf32>) -> ()
// GENERIC-NEXT:   }) : () -> ()
// GENERIC-NEXT: }) : () -> ()

// CUSTOM:      %y = nn.conv %x, %w : (tensor<1x3x4x4xf32>, tensor<2x3x1x1xf32>) -> tensor<1x2x4x4xf32>
// CUSTOM-NEXT: %r = nn.leaky_relu %y {alpha = 0.2} : tensor<1x2x4x4xf32>

// --mlir-print-debuginfo prints each op's location: where it was parsed (file:line:col)
// unless the input gave it one.
// RUN: irc-opt %s --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC
// LOC:      %y = nn.conv {{.*}} loc("{{.*}}print-format.mlir":[[# @LINE + 5]]:3)
// LOC-NEXT: %r = nn.leaky_relu {{.*}} loc("relu_1")
// LOC-NEXT: func.return {{.*}} loc("{{.*}}print-format.mlir":[[# @LINE + 5]]:3)

func.func @conv_relu(%x: tensor<1x3x4x4xf32>, %w: tensor<2x3x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %y = nn.conv %x, %w : (tensor<1x3x4x4xf32>, tensor<2x3x1x1xf32>) -> tensor<1x2x4x4xf32>
  %r = nn.leaky_relu %y {alpha = 0.2} : tensor<1x2x4x4xf32> loc("relu_1")
  func.return %r : tensor<1x2x4x4xf32>
}
