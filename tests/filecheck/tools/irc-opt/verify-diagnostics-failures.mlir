// --verify-diagnostics fails (exit 1) and reports, at file:line:col, every expected
// diagnostic that was not produced and every diagnostic that was not expected.
// RUN: not irc-opt %s --split-input-file --verify-diagnostics 2>&1 | FileCheck %s

// An expectation on valid IR is not met.
// CHECK: verify-diagnostics-failures.mlir:[[# @LINE + 2]]:6: error: expected error "something" was not produced
func.func @unmet(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{something}}
  func.return %x : tensor<2xf32>
}

// -----

// An error without an expectation is unexpected.
// CHECK: verify-diagnostics-failures.mlir:[[# @LINE + 2]]:3: error: unexpected error: result type tensor<3xf32> does not match the inferred type tensor<2xf32>
func.func @unexpected(%x: tensor<2xf32>) {
  %y = nn.relu %x : (tensor<2xf32>) -> tensor<3xf32>
  func.return
}

// -----

// Wrong message, wrong line or wrong severity: both sides are reported.
// CHECK: verify-diagnostics-failures.mlir:[[# @LINE + 8]]:3: error: unexpected error: result type tensor<3xf32>
// CHECK: verify-diagnostics-failures.mlir:[[# @LINE + 9]]:3: error: unexpected error: result type tensor<4xf32>
// CHECK: verify-diagnostics-failures.mlir:[[# @LINE + 10]]:3: error: unexpected error: result type tensor<5xf32>
// CHECK: verify-diagnostics-failures.mlir:[[# @LINE + 4]]:6: error: expected error "a different message" was not produced
// CHECK: verify-diagnostics-failures.mlir:[[# @LINE + 5]]:6: error: expected error "does not match" was not produced
// CHECK: verify-diagnostics-failures.mlir:[[# @LINE + 6]]:6: error: expected warning "does not match" was not produced
func.func @mismatches(%x: tensor<2xf32>) {
  // expected-error @+1 {{a different message}}
  %a = nn.relu %x : (tensor<2xf32>) -> tensor<3xf32>
  // expected-error @+2 {{does not match}}
  %b = nn.relu %x : (tensor<2xf32>) -> tensor<4xf32>
  // expected-warning @+1 {{does not match}}
  %c = nn.relu %x : (tensor<2xf32>) -> tensor<5xf32>
  func.return
}

// -----

// An expectation that is malformed is an error, not a comment silently ignored.
// CHECK: verify-diagnostics-failures.mlir:[[# @LINE + 2]]:6: error: malformed 'expected-error' comment
func.func @malformed(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error {{no closing braces
  func.return %x : tensor<2xf32>
}
