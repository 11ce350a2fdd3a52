// RUN: irc-opt %s --split-input-file --verify-diagnostics -p fold-batchnorm | FileCheck %s
// RUN: irc-opt %s --split-input-file --verify-diagnostics -p 'fold-batchnorm{chains=false}' | FileCheck %s --check-prefix=OFF

// After folding batch norms, `fold-batchnorm` combines chains of constant scales and
// shifts (each op would be one more rounding in int8): mul(mul(x, a), c) ->
// mul(x, a * c), add(add(x, b), d) -> add(x, b + d), mul(add(x, b), c) ->
// add(mul(x, c), b * c); and a per-channel mul or add of a conv, conv_transpose or
// gemm with constant weights folds into its weight and bias. `chains=false` keeps them.

// A batch norm after a concat (scale [1, 2], shift [0, -4]) followed by a Caffe scale
// layer (* [3, 0.5] + [1, 2]): one mul by [3, 1] and one add of [1, 0], with the relu.
// CHECK-LABEL: func.func @bn_scale_after_concat
// CHECK-NEXT:    %c = nn.concat %a, %b {axis = 1}
// CHECK-NEXT:    %n_scale = nn.constant dense<{{\[\[\[}}3.000000e+00]], {{\[\[}}1.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK-NEXT:    %n = nn.mul %c, %n_scale
// CHECK-NEXT:    %n_shift = nn.constant dense<{{\[\[\[}}1.000000e+00]], {{\[\[}}0.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK-NEXT:    %y = nn.add %n, %n_shift {activation = #nn.activation<relu>}
// CHECK-NEXT:    func.return %y
// OFF-LABEL: func.func @bn_scale_after_concat
// OFF-COUNT-2: nn.mul
// OFF-NOT:     nn.mul
func.func @bn_scale_after_concat(%a: tensor<1x1x2x2xf32>, %b: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %gamma = nn.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %beta = nn.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %mean = nn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %var = nn.constant dense<[4.0, 0.25]> : tensor<2xf32>
  %s = nn.constant dense<[[[3.0]], [[0.5]]]> : tensor<2x1x1xf32>
  %t = nn.constant dense<[[[1.0]], [[2.0]]]> : tensor<2x1x1xf32>
  %c = nn.concat %a, %b {axis = 1} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32>
  %n = nn.batch_norm %c, %gamma, %beta, %mean, %var {epsilon = 0.0} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %m = nn.mul %n, %s : (tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %y = nn.add %m, %t {activation = #nn.activation<relu>} : (tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) -> tensor<1x2x2x2xf32>
  func.return %y : tensor<1x2x2x2xf32>
}

// -----

// conv(x, W, b) * [2, 0.5] + [1, 3] (the constant first in the mul): W scaled per
// output channel, b' = b * s + t = [1 * 2 + 1, -1 * 0.5 + 3]; the add's relu moves to
// the conv.
// CHECK-LABEL: func.func @conv_scale_shift
// CHECK-NEXT:    %w = nn.constant dense<{{\[\[\[\[}}2.000000e+00]], {{\[\[}}4.000000e+00]]], {{\[\[\[}}1.500000e+00]], {{\[\[}}2.000000e+00]]]]> : tensor<2x2x1x1xf32>
// CHECK-NEXT:    %b = nn.constant dense<[3.000000e+00, 2.500000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %z = nn.conv %x, %w, %b {activation = #nn.activation<relu>}
// CHECK-NEXT:    func.return %z
// OFF-LABEL: func.func @conv_scale_shift
// OFF:         nn.mul
// OFF:         nn.add
func.func @conv_scale_shift(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = nn.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>
  %b = nn.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %s = nn.constant dense<[[[2.0]], [[0.5]]]> : tensor<2x1x1xf32>
  %t = nn.constant dense<[[[1.0]], [[3.0]]]> : tensor<2x1x1xf32>
  %y = nn.conv %x, %w, %b : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %m = nn.mul %s, %y : (tensor<2x1x1xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %z = nn.add %m, %t {activation = #nn.activation<relu>} : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  func.return %z : tensor<1x2x4x4xf32>
}

// -----

// Left alone: a constant that is not per channel (it does not fold into the conv),
// a conv whose weight is not a constant, and an inner op with a fused activation.
// CHECK-LABEL: func.func @not_folded
// CHECK:         %cm = nn.mul %c, %full
// CHECK:         %dm = nn.mul %d, %s
// CHECK:         %r = nn.add %x, %s {activation = #nn.activation<relu>}
// CHECK-NEXT:    %rm = nn.add %r, %s
func.func @not_folded(%x: tensor<1x2x2x2xf32>, %w: tensor<2x2x1x1xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %k = nn.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>
  %full = nn.constant dense<2.0> : tensor<1x2x2x2xf32>
  %s = nn.constant dense<[[[2.0]], [[0.5]]]> : tensor<2x1x1xf32>
  %c = nn.conv %x, %k : (tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %cm = nn.mul %c, %full : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %d = nn.conv %x, %w : (tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %dm = nn.mul %d, %s : (tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %r = nn.add %x, %s {activation = #nn.activation<relu>} : (tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %rm = nn.add %r, %s : (tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) -> tensor<1x2x2x2xf32>
  func.return %cm, %dm, %rm : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}

// -----

// An inner op with another user stays.
// CHECK-LABEL: func.func @shared_inner
// CHECK-NEXT:    %s = nn.constant
// CHECK-NEXT:    %m = nn.mul %x, %s
// CHECK-NEXT:    %mm = nn.mul %m, %s
func.func @shared_inner(%x: tensor<1x2x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %s = nn.constant dense<[[[2.0]], [[0.5]]]> : tensor<2x1x1xf32>
  %m = nn.mul %x, %s : (tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %mm = nn.mul %m, %s : (tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) -> tensor<1x2x2x2xf32>
  func.return %m, %mm : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}

// -----

// A scalar and per-channel constants of different ranks combine by broadcasting:
// x * 2 * [2, 0.5] -> x * [4, 1]; + c + c -> + 2c, the outer add's relu kept.
// CHECK-LABEL: func.func @scalar_chain
// CHECK-NEXT:    %a = nn.constant dense<{{\[\[\[}}4.000000e+00]], {{\[\[}}1.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK-NEXT:    %n = nn.mul %x, %a
// CHECK-NEXT:    %c = nn.constant dense<[2.000000e+00, -2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %q = nn.add %n, %c {activation = #nn.activation<relu>}
// CHECK-NEXT:    func.return %q
func.func @scalar_chain(%x: tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %a = nn.constant dense<2.0> : tensor<f32>
  %b = nn.constant dense<[[[2.0]], [[0.5]]]> : tensor<2x1x1xf32>
  %c = nn.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %m = nn.mul %x, %a : (tensor<1x2x2x2xf32>, tensor<f32>) -> tensor<1x2x2x2xf32>
  %n = nn.mul %m, %b : (tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %p = nn.add %n, %c : (tensor<1x2x2x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %q = nn.add %p, %c {activation = #nn.activation<relu>} : (tensor<1x2x2x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  func.return %q : tensor<1x2x2x2xf32>
}
