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

// -----

// A causal mask applied as where(mask, -inf, scores) before a softmax over the last
// axis: one nn.masked_softmax with the mask as its second operand (masked elements
// get probability 0, as exp(-inf - max) does).
// CHECK-LABEL: func.func @causal_where
// CHECK:         %{{.*}} = nn.masked_softmax %x, %mask : (tensor<2x4x4xf32>, tensor<4x4xi1>) -> tensor<2x4x4xf32>
// CHECK-NOT:     nn.where
// CHECK-NOT:     nn.softmax
func.func @causal_where(%x: tensor<2x4x4xf32>) -> tensor<2x4x4xf32> {
  %mask = nn.constant dense<[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]> : tensor<4x4xi1>
  %fill = nn.constant dense<0xFF800000> : tensor<f32>
  %w = nn.where %mask, %fill, %x : (tensor<4x4xi1>, tensor<f32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %p = nn.softmax %w : tensor<2x4x4xf32>
  func.return %p : tensor<2x4x4xf32>
}

// -----

// where(keep, scores, -1e9): the mask is the inverse of `keep`, a new constant.
// CHECK-LABEL: func.func @kept_where
// CHECK:         %[[M:.*]] = nn.constant dense<{{\[\[}}false, true], [false, false]]> : tensor<2x2xi1>
// CHECK:         nn.masked_softmax %x, %[[M]] : (tensor<2x2xf32>, tensor<2x2xi1>) -> tensor<2x2xf32>
func.func @kept_where(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %keep = nn.constant dense<[[true, false], [true, true]]> : tensor<2x2xi1>
  %fill = nn.constant dense<-1.0e+09> : tensor<f32>
  %w = nn.where %keep, %x, %fill : (tensor<2x2xi1>, tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
  %p = nn.softmax %w : tensor<2x2xf32>
  func.return %p : tensor<2x2xf32>
}

// -----

// An additive mask of 0 and -1e4 (a padding mask as tf2onnx writes it), either
// operand order: masked where the bias is at or below -1e4.
// CHECK-LABEL: func.func @additive
// CHECK:         %[[M:.*]] = nn.constant dense<{{\[\[}}false, false, true]]> : tensor<1x3xi1>
// CHECK-NEXT:    nn.masked_softmax %x, %[[M]] : (tensor<2x3xf32>, tensor<1x3xi1>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[M2:.*]] = nn.constant dense<{{\[\[}}false, false, true]]> : tensor<1x3xi1>
// CHECK-NEXT:    nn.masked_softmax %x, %[[M2]] :
// CHECK-NOT:     nn.add
func.func @additive(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %bias = nn.constant dense<[[0.0, 0.0, -1.0e+04]]> : tensor<1x3xf32>
  %a = nn.add %x, %bias : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  %p = nn.softmax %a : tensor<2x3xf32>
  %b = nn.add %bias, %x : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %q = nn.softmax %b : tensor<2x3xf32>
  func.return %p, %q : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Must not fire: a row masked entirely (the filled softmax is uniform there, the
// masked one 0), a fill above -1e4 (exp(fill - max) is not 0), a bias that is not
// only 0 and fills, and a softmax over another axis than the mask's last.
// CHECK-LABEL: func.func @not_a_mask
// CHECK-NOT:     nn.masked_softmax
func.func @not_a_mask(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %row = nn.constant dense<[[true, true], [false, true]]> : tensor<2x2xi1>
  %causal = nn.constant dense<[[false, true], [false, false]]> : tensor<2x2xi1>
  %inf = nn.constant dense<0xFF800000> : tensor<f32>
  %small = nn.constant dense<-1.0e+02> : tensor<f32>
  %w1 = nn.where %row, %inf, %x : (tensor<2x2xi1>, tensor<f32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %p1 = nn.softmax %w1 : tensor<2x2xf32>
  %w2 = nn.where %causal, %small, %x : (tensor<2x2xi1>, tensor<f32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %p2 = nn.softmax %w2 : tensor<2x2xf32>
  %bias = nn.constant dense<[[0.0, 0.5], [0.0, -1.0e+04]]> : tensor<2x2xf32>
  %a3 = nn.add %x, %bias : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %p3 = nn.softmax %a3 : tensor<2x2xf32>
  %w4 = nn.where %causal, %inf, %x : (tensor<2x2xi1>, tensor<f32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %p4 = nn.softmax %w4 {axis = 0} : tensor<2x2xf32>
  func.return %p1, %p2, %p3, %p4 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}

// -----

// The exact GELU as torch's exporter writes it before opset 20 (div by sqrt 2, erf,
// add 1, mul by x, mul by 0.5), and with x * 0.5 first and 1/sqrt(2) as a mul: one
// nn.gelu each.
// CHECK-LABEL: func.func @erf_gelu
// CHECK-NEXT:    %{{.*}} = nn.gelu %x : tensor<2x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.gelu %x : tensor<2x8xf32>
// CHECK-NEXT:    func.return
func.func @erf_gelu(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %sqrt2 = nn.constant dense<1.41421354> : tensor<f32>
  %rsqrt2 = nn.constant dense<0.707106769> : tensor<f32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %half = nn.constant dense<0.5> : tensor<f32>
  %a = nn.div %x, %sqrt2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = nn.erf %a : tensor<2x8xf32>
  %s = nn.add %e, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %m = nn.mul %x, %s : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %y = nn.mul %m, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %a2 = nn.mul %x, %rsqrt2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e2 = nn.erf %a2 : tensor<2x8xf32>
  %s2 = nn.add %one, %e2 : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %h2 = nn.mul %x, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %y2 = nn.mul %h2, %s2 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return %y, %y2 : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// Must not fire: erf of x / 2 (not sqrt 2), or a sum with 2 instead of 1.
// CHECK-LABEL: func.func @not_a_gelu
// CHECK-NOT:     nn.gelu
func.func @not_a_gelu(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %two = nn.constant dense<2.0> : tensor<f32>
  %sqrt2 = nn.constant dense<1.41421354> : tensor<f32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %half = nn.constant dense<0.5> : tensor<f32>
  %a = nn.div %x, %two : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %e = nn.erf %a : tensor<8xf32>
  %s = nn.add %e, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %m = nn.mul %x, %s : tensor<8xf32>
  %y = nn.mul %m, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %a2 = nn.div %x, %sqrt2 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %e2 = nn.erf %a2 : tensor<8xf32>
  %s2 = nn.add %e2, %two : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %m2 = nn.mul %x, %s2 : tensor<8xf32>
  %y2 = nn.mul %m2, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  func.return %y, %y2 : tensor<8xf32>, tensor<8xf32>
}
