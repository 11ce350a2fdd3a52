// RUN: irc-opt %s --split-input-file -p fuse-norms --verify-each-numerics --numerics-rtol=1e-5 --numerics-atol=1e-6 | FileCheck %s
// RUN: irc-opt %s --split-input-file -p graph-opt | FileCheck %s --check-prefix=GRAPH

// `fuse-norms` turns a layer norm written as its arithmetic (torch's TorchScript
// export at opset 14: reduce_mean, sub, pow, reduce_mean, add, sqrt, div, then a mul
// by gamma and an add of beta) back into one nn.layer_norm over the last axis. The
// fused op computes the same values within float32 rounding (checked on random
// inputs by --verify-each-numerics).

// CHECK-LABEL: func.func @decomposed
// CHECK-NEXT:    %g = nn.constant
// CHECK-NEXT:    %b = nn.constant
// CHECK-NEXT:    %y = nn.layer_norm %x, %g, %b : (tensor<1x16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x16x32xf32>
// CHECK-NEXT:    func.return %y
// GRAPH-LABEL: func.func @decomposed
// GRAPH-NOT:     nn.reduce_mean
// GRAPH:         nn.layer_norm
// GRAPH-NEXT:    func.return
func.func @decomposed(%x: tensor<1x16x32xf32>) -> tensor<1x16x32xf32> {
  %two = nn.constant dense<2.0> : tensor<f32>
  %eps = nn.constant dense<1.0e-05> : tensor<f32>
  %g = nn.constant dense<1.5> : tensor<32xf32>
  %b = nn.constant dense<0.25> : tensor<32xf32>
  %m = nn.reduce_mean %x {axes = [-1]} : (tensor<1x16x32xf32>) -> tensor<1x16x1xf32>
  %d = nn.sub %x, %m : (tensor<1x16x32xf32>, tensor<1x16x1xf32>) -> tensor<1x16x32xf32>
  %p = nn.pow %d, %two : (tensor<1x16x32xf32>, tensor<f32>) -> tensor<1x16x32xf32>
  %v = nn.reduce_mean %p {axes = [-1]} : (tensor<1x16x32xf32>) -> tensor<1x16x1xf32>
  %e = nn.add %v, %eps : (tensor<1x16x1xf32>, tensor<f32>) -> tensor<1x16x1xf32>
  %s = nn.sqrt %e : tensor<1x16x1xf32>
  %n = nn.div %d, %s : (tensor<1x16x32xf32>, tensor<1x16x1xf32>) -> tensor<1x16x32xf32>
  %h = nn.mul %n, %g : (tensor<1x16x32xf32>, tensor<32xf32>) -> tensor<1x16x32xf32>
  %y = nn.add %h, %b : (tensor<1x16x32xf32>, tensor<32xf32>) -> tensor<1x16x32xf32>
  func.return %y : tensor<1x16x32xf32>
}

// -----

// The square as d * d, another epsilon, no gamma or beta: a layer norm with gamma 1
// (a new constant of ones) and the epsilon of the add.
// CHECK-LABEL: func.func @product_without_affine
// CHECK-NEXT:    %{{.*}} = nn.constant dense<1.000000e+00> : tensor<8xf32>
// CHECK-NEXT:    %{{.*}} = nn.layer_norm %x, %{{.*}} {epsilon = 0.001} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
func.func @product_without_affine(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %eps = nn.constant dense<1.0e-03> : tensor<1xf32>
  %m = nn.reduce_mean %x {axes = [1]} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d = nn.sub %x, %m : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %q = nn.mul %d, %d : tensor<4x8xf32>
  %v = nn.reduce_mean %q {axes = [1]} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %e = nn.add %v, %eps : (tensor<4x1xf32>, tensor<1xf32>) -> tensor<4x1xf32>
  %s = nn.sqrt %e : tensor<4x1xf32>
  %n = nn.div %d, %s : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  func.return %n : tensor<4x8xf32>
}

// -----

// Must not fire: the means are over another axis than the last (an instance norm's
// statistics), or the variance is of another value than the centred input.
// CHECK-LABEL: func.func @not_a_layer_norm
// CHECK-NOT:     nn.layer_norm
func.func @not_a_layer_norm(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %two = nn.constant dense<2.0> : tensor<f32>
  %eps = nn.constant dense<1.0e-05> : tensor<f32>
  %m = nn.reduce_mean %x {axes = [0]} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  %d = nn.sub %x, %m : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %p = nn.pow %d, %two : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %v = nn.reduce_mean %p {axes = [0]} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  %e = nn.add %v, %eps : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %s = nn.sqrt %e : tensor<1x8xf32>
  %n = nn.div %d, %s : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %m2 = nn.reduce_mean %x {axes = [-1]} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d2 = nn.sub %x, %m2 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %p2 = nn.pow %y, %two : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %v2 = nn.reduce_mean %p2 {axes = [-1]} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %e2 = nn.add %v2, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %s2 = nn.sqrt %e2 : tensor<4x1xf32>
  %n2 = nn.div %d2, %s2 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  func.return %n, %n2 : tensor<4x8xf32>, tensor<4x8xf32>
}
