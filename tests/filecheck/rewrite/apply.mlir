// RUN: irc-opt %s --split-input-file -p 'apply-rules{file=%S/Inputs/example.rules rules=drop_identity,compose_transposes,fuse_conv_relu,mul_by_one,square_of_difference}' | FileCheck %s
// RUN: not irc-opt %s --split-input-file -p 'apply-rules{file=%S/Inputs/example.rules rules=wrong_type}' 2>&1 | FileCheck %s --check-prefix=WRONG
// RUN: not irc-opt %s -p 'apply-rules{file=%S/Inputs/example.rules rules=no_such_rule}' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not irc-opt %s -p 'apply-rules' 2>&1 | FileCheck %s --check-prefix=NOFILE
// RUN: not irc-opt %s -p 'apply-rules{file=fuse-activation}' 2>&1 | FileCheck %s --check-prefix=NOVALUE

// `apply-rules` compiles the rules of a file and applies them to a fixpoint.

// CHECK-LABEL: func.func @identity
// CHECK-NEXT:    %r = nn.relu %x
// CHECK-NEXT:    func.return %r
func.func @identity(%x: tensor<4xf32>) -> tensor<4xf32> {
  %i = nn.identity %x : tensor<4xf32>
  %r = nn.relu %i : tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// Two transposes become one with the composed permutation.
// CHECK-LABEL: func.func @transposes
// CHECK-NEXT:    %{{.*}} = nn.transpose %x {perm = [2, 0, 1]} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK-NEXT:    func.return
func.func @transposes(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %a = nn.transpose %x {perm = [1, 2, 0]} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %b = nn.transpose %a {perm = [1, 2, 0]} : (tensor<3x4x2xf32>) -> tensor<4x2x3xf32>
  func.return %b : tensor<4x2x3xf32>
}

// -----

// The first transpose has another user: the pair must not be merged.
// CHECK-LABEL: func.func @transposes_shared
// CHECK-NEXT:    %a = nn.transpose %x
// CHECK-NEXT:    %b = nn.transpose %a
// CHECK-NEXT:    func.return %a, %b
func.func @transposes_shared(%x: tensor<2x3xf32>) -> (tensor<3x2xf32>, tensor<2x3xf32>) {
  %a = nn.transpose %x {perm = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %b = nn.transpose %a {perm = [1, 0]} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  func.return %a, %b : tensor<3x2xf32>, tensor<2x3xf32>
}

// -----

// The conv keeps its bias and properties and gains the activation.
// CHECK-LABEL: func.func @fuse
// CHECK-NEXT:    %{{.*}} = nn.conv %x, %w, %b {activation = #nn.activation<relu>, pads = [1, 1, 1, 1]}
// CHECK-NOT:     nn.relu
func.func @fuse(%x: tensor<1x3x4x4xf32>, %w: tensor<2x3x3x3xf32>, %b: tensor<2xf32>) -> tensor<1x2x4x4xf32> {
  %c = nn.conv %x, %w, %b {pads = [1, 1, 1, 1]} : (tensor<1x3x4x4xf32>, tensor<2x3x3x3xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %r = nn.relu %c : tensor<1x2x4x4xf32>
  func.return %r : tensor<1x2x4x4xf32>
}

// -----

// x * 1 goes, unless the 1 broadcasts x to a larger shape.
// An op capture used twice: the product of a sub with itself matches; with another
// sub of the same operands it does not (the same value, not an equal one).
// CHECK-LABEL: func.func @reused_capture
// CHECK-NEXT:    %d = nn.sub %x, %y
// CHECK-NEXT:    %{{.*}} = nn.pow %d, %x
// CHECK-NEXT:    %e = nn.sub %x, %y
// CHECK-NEXT:    %q = nn.mul %d, %e
func.func @reused_capture(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %d = nn.sub %x, %y : tensor<4xf32>
  %p = nn.mul %d, %d : tensor<4xf32>
  %e = nn.sub %x, %y : tensor<4xf32>
  %q = nn.mul %d, %e : tensor<4xf32>
  func.return %p, %q : tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @mul_by_one
// CHECK:         %wide = nn.mul %x, %ones
// CHECK-NEXT:    func.return %x, %wide
func.func @mul_by_one(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<2x4xf32>) {
  %one = nn.constant dense<1.0> : tensor<4xf32>
  %same = nn.mul %x, %one : tensor<4xf32>
  %ones = nn.constant dense<1.0> : tensor<2x4xf32>
  %wide = nn.mul %x, %ones : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %same, %wide : tensor<4xf32>, tensor<2x4xf32>
}

// -----

// WRONG: example.rules:29:3: error: rule 'wrong_type' would replace a tensor<6xf32> result of 'nn.sigmoid' by a tensor<2x3xf32> value
// WRONG-NEXT: hint: a replacement must have the type of the result it replaces
func.func @wrong(%x: tensor<2x3xf32>) -> tensor<6xf32> {
  %r = nn.reshape %x : (tensor<2x3xf32>) -> tensor<6xf32>
  %s = nn.sigmoid %r : tensor<6xf32>
  func.return %s : tensor<6xf32>
}

// UNKNOWN: example.rules: error: no rule named 'no_such_rule' in {{.*}}example.rules
// UNKNOWN-NEXT: hint: the rules: compose_transposes, drop_identity, fuse_conv_relu, mul_by_one, square_of_difference, wrong_type

// NOFILE: <pass-pipeline>:1:1: error: invalid options for 'apply-rules': give the rule files: file=PATH (a .rules file or a shipped name)

// apply-rules gives a rule file's parameters no values: a file whose parameters have
// no default is applied by its pass (fuse-activation gives its options).
// NOVALUE: fuse-activation.rules:{{[0-9]+}}:7: error: the rule file's parameter 'activations' has no value
// NOVALUE-NEXT: hint: the pass that applies this file gives it (apply-rules gives none); or declare a default: param activations = ...;
// NOVALUE-NEXT: fuse-activation.rules:{{[0-9]+}}:7: error: the rule file's parameter 'producers' has no value
