// RUN: irc-opt %s --split-input-file -p cse | FileCheck %s

// `cse` replaces an op by an earlier identical one: same name, operands,
// properties, attributes and result types. Every `nn` op is side-effect free.

// CHECK-LABEL: func.func @same_op_same_operands
func.func @same_op_same_operands(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK-NEXT: %a = nn.relu %x : tensor<2x3xf32>
  // CHECK-NEXT: %sum = nn.add %a, %a : tensor<2x3xf32>
  // CHECK-NEXT: func.return %sum
  %a = nn.relu %x : tensor<2x3xf32>
  %b = nn.relu %x : tensor<2x3xf32>
  %sum = nn.add %a, %b : tensor<2x3xf32>
  func.return %sum : tensor<2x3xf32>
}

// -----

// Equal constants are merged, which makes their users identical in turn.

// CHECK-LABEL: func.func @constants_and_their_users
func.func @constants_and_their_users(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  // CHECK-NEXT: %c = nn.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  // CHECK-NEXT: %p = nn.mul %x, %c : tensor<2xf32>
  // CHECK-NEXT: func.return %p, %p
  %c = nn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %d = nn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %p = nn.mul %x, %c : tensor<2xf32>
  %q = nn.mul %x, %d : tensor<2xf32>
  func.return %p, %q : tensor<2xf32>, tensor<2xf32>
}

// -----

// Different constants, properties or operand order make different ops.

// CHECK-LABEL: func.func @different_ops_are_kept
func.func @different_ops_are_kept(%x: tensor<2xf32>, %y: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  // CHECK-NEXT: %c = nn.constant dense<[1.000000e+00, 2.000000e+00]>
  // CHECK-NEXT: %d = nn.constant dense<[1.000000e+00, 3.000000e+00]>
  // CHECK-NEXT: %l1 = nn.leaky_relu %x {alpha = 0.1} : tensor<2xf32>
  // CHECK-NEXT: %l2 = nn.leaky_relu %x {alpha = 0.2} : tensor<2xf32>
  // CHECK-NEXT: %s1 = nn.sub %x, %y : tensor<2xf32>
  // CHECK-NEXT: %s2 = nn.sub %y, %x : tensor<2xf32>
  // CHECK-NEXT: func.return %c, %d, %l1, %l2, %s1, %s2
  %c = nn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %d = nn.constant dense<[1.0, 3.0]> : tensor<2xf32>
  %l1 = nn.leaky_relu %x {alpha = 0.1} : tensor<2xf32>
  %l2 = nn.leaky_relu %x {alpha = 0.2} : tensor<2xf32>
  %s1 = nn.sub %x, %y : tensor<2xf32>
  %s2 = nn.sub %y, %x : tensor<2xf32>
  func.return %c, %d, %l1, %l2, %s1, %s2 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// Functions are isolated from each other: identical ops in two functions stay.

// CHECK-LABEL: func.func @first
// CHECK-NEXT:    %c = nn.constant dense<5.000000e-01> : tensor<2xf32>
// CHECK-LABEL: func.func @second
// CHECK-NEXT:    %c = nn.constant dense<5.000000e-01> : tensor<2xf32>
func.func @first() -> tensor<2xf32> {
  %c = nn.constant dense<0.5> : tensor<2xf32>
  func.return %c : tensor<2xf32>
}
func.func @second() -> tensor<2xf32> {
  %c = nn.constant dense<0.5> : tensor<2xf32>
  func.return %c : tensor<2xf32>
}
