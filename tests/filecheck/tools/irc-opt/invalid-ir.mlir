// Invalid IR is reported at file:line:col, with every verifier failure of a module
// (not just the first); irc-opt exits with 1 and prints no module.
// RUN: not irc-opt %s --split-input-file 2>&1 | FileCheck %s

// CHECK: invalid-ir.mlir:[[# @LINE + 2]]:16: error: operand is used with type tensor<3xf32>, but has been previously used or defined with type tensor<2xf32>
func.func @type_mismatch(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = nn.relu %x : tensor<3xf32>
  func.return %y : tensor<2xf32>
}

// -----

// CHECK: invalid-ir.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: Operation nn.frobnicate is not registered
func.func @unknown_op(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = nn.frobnicate %x : tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// -----

// CHECK:      invalid-ir.mlir:[[# @LINE + 3]]:3: error: result type tensor<3xf32> does not match the inferred type tensor<2xf32>
// CHECK-NEXT: invalid-ir.mlir:[[# @LINE + 3]]:3: error: Expected arguments to have the same types as the function output types
func.func @two_verifier_errors(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = nn.add %x, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// CHECK-NOT: builtin.module
