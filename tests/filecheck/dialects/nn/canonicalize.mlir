// RUN: irc-opt %s --split-input-file -p canonicalize | FileCheck %s
// RUN: irc-opt %s --split-input-file -p 'canonicalize{enable-patterns=compose_transposes,cancel_transposes}' | FileCheck %s --check-prefix=COMPOSE
// RUN: irc-opt %s --split-input-file -p canonicalize --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// Canonicalization of nn ops, family by family. Every nn op folds when all its
// operands are constants (the reference interpreter computes the value); the values
// below are worked out by hand from the ONNX definitions.

// CHECK-LABEL: func.func @unary
// CHECK-DAG: dense<[0.000000e+00, 2.000000e+00, 0.000000e+00]> : tensor<3xf32>
// CHECK-DAG: dense<[1.000000e+00, -2.000000e+00, 5.000000e-01]> : tensor<3xf32>
// CHECK-DAG: dense<[0.000000e+00, 1.000000e+00, 0.000000e+00]> : tensor<3xf32>
// CHECK-DAG: dense<[1, -1]> : tensor<2xi64>
// CHECK-NOT: nn.relu
// CHECK-NOT: nn.neg
// CHECK-NOT: nn.clip
// CHECK-NOT: nn.cast
func.func @unary() -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2xi64>) {
  %x = nn.constant dense<[-1.0, 2.0, -0.5]> : tensor<3xf32>
  %relu = nn.relu %x : tensor<3xf32>
  %neg = nn.neg %x : tensor<3xf32>
  %clip = nn.clip %x {min = 0.0, max = 1.0} : tensor<3xf32>
  %f = nn.constant dense<[1.7, -1.7]> : tensor<2xf32>
  // Float to integer truncates toward zero.
  %cast = nn.cast %f {to = i64} : (tensor<2xf32>) -> tensor<2xi64>
  func.return %relu, %neg, %clip, %cast : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2xi64>
}

// -----

// CHECK-LABEL: func.func @broadcasting
// CHECK-DAG: dense<{{\[\[}}1.100000e+01, 2.200000e+01], [1.300000e+01, 2.400000e+01]]> : tensor<2x2xf32>
// CHECK-DAG: dense<[3, -3]> : tensor<2xi64>
// CHECK-DAG: dense<[5.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-DAG: dense<[false, true]> : tensor<2xi1>
// CHECK-DAG: dense<[9.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NOT: nn.add
// CHECK-NOT: nn.div
// CHECK-NOT: nn.max
// CHECK-NOT: nn.less
// CHECK-NOT: nn.where
func.func @broadcasting() -> (tensor<2x2xf32>, tensor<2xi64>, tensor<2xf32>, tensor<2xi1>, tensor<2xf32>) {
  %m = nn.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %row = nn.constant dense<[10.0, 20.0]> : tensor<2xf32>
  %add = nn.add %m, %row : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  // Integer division truncates toward zero.
  %n = nn.constant dense<[7, -7]> : tensor<2xi64>
  %two = nn.constant dense<2> : tensor<i64>
  %div = nn.div %n, %two : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  %a = nn.constant dense<[5.0, 1.0]> : tensor<2xf32>
  %b = nn.constant dense<[2.0, 2.0]> : tensor<2xf32>
  %max = nn.max %a, %b : tensor<2xf32>
  %less = nn.less %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  %nine = nn.constant dense<9.0> : tensor<f32>
  %where = nn.where %less, %b, %nine : (tensor<2xi1>, tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  // where(less, b, 9): [9, 2]
  func.return %add, %div, %max, %less, %where : tensor<2x2xf32>, tensor<2xi64>, tensor<2xf32>, tensor<2xi1>, tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @products
// CHECK-DAG: dense<1.100000e+01> : tensor<1x1xf32>
// CHECK-DAG: dense<{{\[\[}}2.200000e+01, 3.000000e+01]]> : tensor<1x2xf32>
// CHECK-NOT: nn.matmul
// CHECK-NOT: nn.gemm
func.func @products() -> (tensor<1x1xf32>, tensor<1x2xf32>) {
  %a = nn.constant dense<[[1.0, 2.0]]> : tensor<1x2xf32>
  %b = nn.constant dense<[[3.0], [4.0]]> : tensor<2x1xf32>
  %mm = nn.matmul %a, %b : (tensor<1x2xf32>, tensor<2x1xf32>) -> tensor<1x1xf32>
  // 2 * [1, 2] @ [[3, 5], [4, 6]]^T^T + 1 * [0, 2] = 2 * [11, 17] + [0, -4] = [22, 30]
  %w = nn.constant dense<[[3.0, 4.0], [5.0, 6.0]]> : tensor<2x2xf32>
  %c = nn.constant dense<[0.0, -4.0]> : tensor<2xf32>
  %gemm = nn.gemm %a, %w, %c {alpha = 2.0, trans_b = true} : (tensor<1x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  func.return %mm, %gemm : tensor<1x1xf32>, tensor<1x2xf32>
}

// -----

// CHECK-LABEL: func.func @reductions
// CHECK-DAG: dense<[3.000000e+00, 7.000000e+00]> : tensor<2xf32>
// CHECK-DAG: dense<4.000000e+00> : tensor<1x1xf32>
// CHECK-DAG: dense<5.000000e-01> : tensor<2x2xf32>
// CHECK-NOT: nn.reduce
// CHECK-NOT: nn.softmax
func.func @reductions() -> (tensor<2xf32>, tensor<1x1xf32>, tensor<2x2xf32>) {
  %m = nn.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %sum = nn.reduce_sum %m {axes = [1], keepdims = false} : (tensor<2x2xf32>) -> tensor<2xf32>
  %max = nn.reduce_max %m : (tensor<2x2xf32>) -> tensor<1x1xf32>
  %same = nn.constant dense<3.0> : tensor<2x2xf32>
  %softmax = nn.softmax %same : tensor<2x2xf32>
  func.return %sum, %max, %softmax : tensor<2xf32>, tensor<1x1xf32>, tensor<2x2xf32>
}

// -----

// CHECK-LABEL: func.func @data_movement
// CHECK-DAG: dense<{{\[\[}}1, 3], [2, 4]]> : tensor<2x2xi64>
// CHECK-DAG: dense<[4, 3, 2, 1]> : tensor<4xi64>
// CHECK-DAG: dense<[3, 1]> : tensor<2xi64>
// CHECK-DAG: dense<[0, 1, 2, 3, 0, 0]> : tensor<6xi64>
// CHECK-DAG: dense<[1, 2, 1, 2]> : tensor<4xi64>
// CHECK-DAG: dense<[1, 2, 3, 4, 1, 2]> : tensor<6xi64>
// CHECK-NOT: nn.transpose
// CHECK-NOT: nn.slice
// CHECK-NOT: nn.gather
// CHECK-NOT: nn.pad
// CHECK-NOT: nn.tile
// CHECK-NOT: nn.concat
// CHECK-NOT: nn.reshape
func.func @data_movement() -> (tensor<2x2xi64>, tensor<4xi64>, tensor<2xi64>, tensor<6xi64>, tensor<4xi64>, tensor<6xi64>) {
  %v = nn.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
  %m = nn.reshape %v : (tensor<4xi64>) -> tensor<2x2xi64>
  %t = nn.transpose %m {perm = [1, 0]} : (tensor<2x2xi64>) -> tensor<2x2xi64>
  // A negative step from the last element past the first reverses.
  %rev = nn.slice %v {starts = [-1], ends = [-10], steps = [-1]} : (tensor<4xi64>) -> tensor<4xi64>
  // Negative indices count from the end.
  %idx = nn.constant dense<[-2, 0]> : tensor<2xi64>
  %g = nn.gather %v, %idx : (tensor<4xi64>, tensor<2xi64>) -> tensor<2xi64>
  %z = nn.constant dense<[1, 2, 3]> : tensor<3xi64>
  %p = nn.pad %z {pads = [1, 2], value = 0.0} : (tensor<3xi64>) -> tensor<6xi64>
  %first_two = nn.slice %v {starts = [0], ends = [2]} : (tensor<4xi64>) -> tensor<2xi64>
  %tiled = nn.tile %first_two {repeats = [2]} : (tensor<2xi64>) -> tensor<4xi64>
  %cat = nn.concat %v, %first_two {axis = 0} : (tensor<4xi64>, tensor<2xi64>) -> tensor<6xi64>
  func.return %t, %rev, %g, %p, %tiled, %cat : tensor<2x2xi64>, tensor<4xi64>, tensor<2xi64>, tensor<6xi64>, tensor<4xi64>, tensor<6xi64>
}

// -----

// The shape of a value is known from its type even when the value is not.
// CHECK-LABEL: func.func @shape_of_argument
// CHECK-NEXT: %[[S:.*]] = nn.constant dense<[2, 3]> : tensor<2xi64>
// CHECK-NEXT: func.return %[[S]]
func.func @shape_of_argument(%x: tensor<2x3xf32>) -> tensor<2xi64> {
  %s = nn.shape %x : (tensor<2x3xf32>) -> tensor<2xi64>
  func.return %s : tensor<2xi64>
}

// -----

// A constant whose weights were elided when printed has no data: nothing folds.
// CHECK-LABEL: func.func @elided
// CHECK-NEXT: %[[W:.*]] = nn.constant dense_resource<w> : tensor<32xf32>
// CHECK-NEXT: %[[R:.*]] = nn.relu %[[W]]
func.func @elided() -> tensor<32xf32> {
  %w = nn.constant dense_resource<w> : tensor<32xf32>
  %r = nn.relu %w : tensor<32xf32>
  func.return %r : tensor<32xf32>
}

// -----

// The rewrites below are the `nn` canonicalization rules of
// irc/rules/canonicalize.rules; each computes exactly what it replaces (except
// matmul + add -> gemm, which rounds once instead of twice).

// Identity and inference dropout return their input.
// CHECK-LABEL: func.func @identity_and_dropout
// CHECK-NEXT:    %r = nn.relu %x : tensor<2x3xf32>
// CHECK-NEXT:    func.return %r
func.func @identity_and_dropout(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %i = nn.identity %x : tensor<2x3xf32>
  %d = nn.dropout %i {ratio = 0.3} : tensor<2x3xf32>
  %r = nn.relu %d : tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// -----

// A reshape of a reshape is one reshape; a reshape back to the input's type is no
// reshape at all; a flatten is a reshape.
// CHECK-LABEL: func.func @reshape_chains
// CHECK-NEXT:    %b = nn.reshape %x : (tensor<2x3x4xf32>) -> tensor<4x6xf32>
// CHECK-NEXT:    %f = nn.reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
// CHECK-NEXT:    func.return %b, %x, %f
func.func @reshape_chains(%x: tensor<2x3x4xf32>) -> (tensor<4x6xf32>, tensor<2x3x4xf32>, tensor<6x4xf32>) {
  %a = nn.reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %b = nn.reshape %a : (tensor<6x4xf32>) -> tensor<4x6xf32>
  %back = nn.reshape %a : (tensor<6x4xf32>) -> tensor<2x3x4xf32>
  %f = nn.flatten %x {axis = 2} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  func.return %b, %back, %f : tensor<4x6xf32>, tensor<2x3x4xf32>, tensor<6x4xf32>
}

// -----

// A reshape or flatten to its input's own type is no reshape at all.
// CHECK-LABEL: func.func @same_type_reshapes
// CHECK-NEXT:    func.return %x, %x
func.func @same_type_reshapes(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %r = nn.reshape %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %f = nn.flatten %x {axis = 1} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %r, %f : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Squeeze and unsqueeze of the same axes cancel, whichever comes first.
// CHECK-LABEL: func.func @squeeze_unsqueeze_pairs
// CHECK-NEXT:    func.return %x, %y
func.func @squeeze_unsqueeze_pairs(%x: tensor<3x4xf32>, %y: tensor<3x1x4xf32>) -> (tensor<3x4xf32>, tensor<3x1x4xf32>) {
  %u = nn.unsqueeze %x {axes = [0, 2]} : (tensor<3x4xf32>) -> tensor<1x3x1x4xf32>
  %s = nn.squeeze %u {axes = [0, 2]} : (tensor<1x3x1x4xf32>) -> tensor<3x4xf32>
  %t = nn.squeeze %y {axes = [1]} : (tensor<3x1x4xf32>) -> tensor<3x4xf32>
  %v = nn.unsqueeze %t {axes = [-2]} : (tensor<3x4xf32>) -> tensor<3x1x4xf32>
  func.return %s, %v : tensor<3x4xf32>, tensor<3x1x4xf32>
}

// -----

// A squeeze and an unsqueeze of different axes do not cancel: together they are
// one reshape. A lone squeeze or unsqueeze stays as it is.
// CHECK-LABEL: func.func @squeeze_unsqueeze_other_axes
// CHECK-NEXT:    %s = nn.reshape %x : (tensor<1x3xf32>) -> tensor<3x1xf32>
// CHECK-NEXT:    %alone = nn.unsqueeze %x {axes = [0]} : (tensor<1x3xf32>) -> tensor<1x1x3xf32>
// CHECK-NEXT:    func.return %s, %alone
func.func @squeeze_unsqueeze_other_axes(%x: tensor<1x3xf32>) -> (tensor<3x1xf32>, tensor<1x1x3xf32>) {
  %u = nn.unsqueeze %x {axes = [2]} : (tensor<1x3xf32>) -> tensor<1x3x1xf32>
  %s = nn.squeeze %u {axes = [0]} : (tensor<1x3x1xf32>) -> tensor<3x1xf32>
  %alone = nn.unsqueeze %x {axes = [0]} : (tensor<1x3xf32>) -> tensor<1x1x3xf32>
  func.return %s, %alone : tensor<3x1xf32>, tensor<1x1x3xf32>
}

// -----

// A chain of reshape, unsqueeze, flatten and squeeze is one reshape of its start.
// CHECK-LABEL: func.func @reshape_like_chain
// CHECK-NEXT:    %d = nn.reshape %x : (tensor<1x8x1x1xf32>) -> tensor<8xf32>
// CHECK-NEXT:    func.return %d
func.func @reshape_like_chain(%x: tensor<1x8x1x1xf32>) -> tensor<8xf32> {
  %a = nn.reshape %x : (tensor<1x8x1x1xf32>) -> tensor<2x4xf32>
  %b = nn.unsqueeze %a {axes = [0]} : (tensor<2x4xf32>) -> tensor<1x2x4xf32>
  %c = nn.flatten %b {axis = 0} : (tensor<1x2x4xf32>) -> tensor<1x8xf32>
  %d = nn.squeeze %c {axes = [0]} : (tensor<1x8xf32>) -> tensor<8xf32>
  func.return %d : tensor<8xf32>
}

// -----

// Inverse transposes vanish; other pairs compose into one transpose; the identity
// permutation is no transpose.
// CHECK-LABEL: func.func @transpose_pairs
// With only ComposeTransposes, the identity transpose stays (another pattern removes it).
// COMPOSE-LABEL: func.func @transpose_pairs
// COMPOSE-NEXT:    %c = nn.transpose %x {perm = [2, 0, 1]} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// COMPOSE-NEXT:    %same = nn.transpose %x {perm = [0, 1, 2]} : tensor<2x3x4xf32>
// COMPOSE-NEXT:    func.return %x, %c, %same
// CHECK-NEXT:    %c = nn.transpose %x {perm = [2, 0, 1]} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK-NEXT:    func.return %x, %c, %x
func.func @transpose_pairs(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<4x2x3xf32>, tensor<2x3x4xf32>) {
  %a = nn.transpose %x {perm = [1, 0, 2]} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %inverse = nn.transpose %a {perm = [1, 0, 2]} : (tensor<3x2x4xf32>) -> tensor<2x3x4xf32>
  %c = nn.transpose %a {perm = [2, 1, 0]} : (tensor<3x2x4xf32>) -> tensor<4x2x3xf32>
  %same = nn.transpose %x {perm = [0, 1, 2]} : tensor<2x3x4xf32>
  func.return %inverse, %c, %same : tensor<2x3x4xf32>, tensor<4x2x3xf32>, tensor<2x3x4xf32>
}

// -----

// A transpose that moves only size-1 axes keeps the elements in order: it is a
// reshape (e.g. a global pool's result taken from channels-last back to
// channels-first). One that moves a non-unit axis past another stays a transpose.
// CHECK-LABEL: func.func @transpose_of_unit_axes
// CHECK-NEXT:    %pooled = nn.reshape %x : (tensor<1x1x1x8xf32>) -> tensor<1x8x1x1xf32>
// CHECK-NEXT:    %kept = nn.reshape %y : (tensor<1x3x1x8xf32>) -> tensor<1x1x3x8xf32>
// CHECK-NEXT:    %swapped = nn.transpose %y {perm = [0, 3, 2, 1]} : (tensor<1x3x1x8xf32>) -> tensor<1x8x1x3xf32>
// CHECK-NEXT:    func.return %pooled, %kept, %swapped
func.func @transpose_of_unit_axes(%x: tensor<1x1x1x8xf32>, %y: tensor<1x3x1x8xf32>) -> (tensor<1x8x1x1xf32>, tensor<1x1x3x8xf32>, tensor<1x8x1x3xf32>) {
  %pooled = nn.transpose %x {perm = [0, 3, 1, 2]} : (tensor<1x1x1x8xf32>) -> tensor<1x8x1x1xf32>
  // The size-1 axis 2 moves in front of axis 1; the 3 and the 8 keep their order.
  %kept = nn.transpose %y {perm = [0, 2, 1, 3]} : (tensor<1x3x1x8xf32>) -> tensor<1x1x3x8xf32>
  // The 3 and the 8 trade places.
  %swapped = nn.transpose %y {perm = [0, 3, 2, 1]} : (tensor<1x3x1x8xf32>) -> tensor<1x8x1x3xf32>
  func.return %pooled, %kept, %swapped : tensor<1x8x1x1xf32>, tensor<1x1x3x8xf32>, tensor<1x8x1x3xf32>
}

// -----

// A gather at one constant index (a scalar, or one entry) selects a slice: a slice of
// that entry and a reshape that drops the axis (torch's q, k, v = qkv[0], qkv[1],
// qkv[2]); an index of two entries stays a gather.
// CHECK-LABEL: func.func @gather_one_index
// CHECK-NEXT: %[[K:.*]] = nn.constant dense<[0, 1]> : tensor<2xi64>
// CHECK-NEXT: %[[A:.*]] = nn.slice %x {axes = [0], ends = [3], starts = [2], steps = [1]} : (tensor<3x2x4xf32>) -> tensor<1x2x4xf32>
// CHECK-NEXT: %{{.*}} = nn.reshape %[[A]] : (tensor<1x2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %[[B:.*]] = nn.slice %x {axes = [1], ends = [2], starts = [1], steps = [1]} : (tensor<3x2x4xf32>) -> tensor<3x1x4xf32>
// CHECK-NEXT: %{{.*}} = nn.gather %x, %[[K]] {axis = 1}
func.func @gather_one_index(%x: tensor<3x2x4xf32>) -> (tensor<2x4xf32>, tensor<3x1x4xf32>, tensor<3x2x4xf32>) {
  %i = nn.constant dense<2> : tensor<i64>
  %j = nn.constant dense<-1> : tensor<1xi64>
  %k = nn.constant dense<[0, 1]> : tensor<2xi64>
  %a = nn.gather %x, %i : (tensor<3x2x4xf32>, tensor<i64>) -> tensor<2x4xf32>
  %b = nn.gather %x, %j {axis = 1} : (tensor<3x2x4xf32>, tensor<1xi64>) -> tensor<3x1x4xf32>
  %c = nn.gather %x, %k {axis = 1} : (tensor<3x2x4xf32>, tensor<2xi64>) -> tensor<3x2x4xf32>
  func.return %a, %b, %c : tensor<2x4xf32>, tensor<3x1x4xf32>, tensor<3x2x4xf32>
}

// -----

// Multiplying by 1, dividing by 1, raising to the power 1, adding or subtracting 0
// (constant splats) return the other operand, on either side where the op commutes.
// CHECK-LABEL: func.func @neutral_elements
// CHECK-NOT:     nn.mul
// CHECK-NOT:     nn.div
// CHECK-NOT:     nn.pow
// CHECK-NOT:     nn.add
// CHECK-NOT:     nn.sub
// CHECK:         func.return %x, %x, %x, %x, %x, %x, %x, %n
func.func @neutral_elements(%x: tensor<2x3xf32>, %n: tensor<4xi64>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi64>) {
  %one = nn.constant dense<1.0> : tensor<1x3xf32>
  %scalar_one = nn.constant dense<1.0> : tensor<f32>
  %zero = nn.constant dense<0.0> : tensor<3xf32>
  %int_one = nn.constant dense<1> : tensor<i64>
  %times_one = nn.mul %x, %one : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  %one_times = nn.mul %scalar_one, %x : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %over_one = nn.div %x, %one : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  %to_one = nn.pow %x, %int_one : (tensor<2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
  %plus_zero = nn.add %x, %zero : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %zero_plus = nn.add %zero, %x : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %minus_zero = nn.sub %x, %zero : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %int_times_one = nn.mul %n, %int_one : (tensor<4xi64>, tensor<i64>) -> tensor<4xi64>
  func.return %times_one, %one_times, %over_one, %to_one, %plus_zero, %zero_plus, %minus_zero, %int_times_one : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi64>
}

// -----

// Not neutral: a 1 that broadcasts x to a larger shape, a 0 that is not a splat,
// 0 - x, and an add whose fused activation still has work to do.
// CHECK-LABEL: func.func @not_neutral
// CHECK-NEXT:    %one = nn.constant dense<1.000000e+00> : tensor<2x3xf32>
// CHECK-NEXT:    %not_zero = nn.constant dense<[0.000000e+00, 1.000000e+00, 0.000000e+00]> : tensor<3xf32>
// CHECK-NEXT:    %zero = nn.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK-NEXT:    %broadcast = nn.mul %x, %one : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %plus = nn.add %x, %not_zero : tensor<3xf32>
// CHECK-NEXT:    %negated = nn.sub %zero, %x : tensor<3xf32>
// CHECK-NEXT:    %relu = nn.add %x, %zero {activation = #nn.activation<relu>} : tensor<3xf32>
// CHECK-NEXT:    func.return %broadcast, %plus, %negated, %relu
func.func @not_neutral(%x: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %one = nn.constant dense<1.0> : tensor<2x3xf32>
  %not_zero = nn.constant dense<[0.0, 1.0, 0.0]> : tensor<3xf32>
  %zero = nn.constant dense<0.0> : tensor<3xf32>
  %broadcast = nn.mul %x, %one : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %plus = nn.add %x, %not_zero : tensor<3xf32>
  %negated = nn.sub %zero, %x : tensor<3xf32>
  %relu = nn.add %x, %zero {activation = #nn.activation<relu>} : tensor<3xf32>
  func.return %broadcast, %plus, %negated, %relu : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Ops that change nothing: a pad by zeros, a slice of everything, an expand or tile
// to the same shape, a cast to the same type, a sum, max, min or concat of one input,
// a split into one piece.
// CHECK-LABEL: func.func @no_ops
// CHECK-NEXT:    func.return %x, %x, %x, %x, %x, %x, %x, %x, %x, %x
func.func @no_ops(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %pad = nn.pad %x {pads = [0, 0, 0, 0], mode = "reflect"} : tensor<2x3xf32>
  %slice = nn.slice %x {starts = [0, -100], ends = [2, 100], axes = [0, -1]} : tensor<2x3xf32>
  %expand = nn.expand %x : tensor<2x3xf32>
  %tile = nn.tile %x {repeats = [1, 1]} : tensor<2x3xf32>
  %cast = nn.cast %x {to = f32} : tensor<2x3xf32>
  %sum = nn.sum %x : tensor<2x3xf32>
  %max = nn.max %x : tensor<2x3xf32>
  %min = nn.min %x : tensor<2x3xf32>
  %concat = nn.concat %x {axis = 1} : tensor<2x3xf32>
  %split = nn.split %x {axis = 1, sizes = [3]} : tensor<2x3xf32>
  func.return %pad, %slice, %expand, %tile, %cast, %sum, %max, %min, %concat, %split : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Ops that keep the type but move data stay: a pad that crops one end and pads the
// other, a reversing slice, a sum of three inputs.
// CHECK-LABEL: func.func @same_type_but_not_no_ops
// CHECK-NEXT:    %shift = nn.pad %x {pads = [0, 1, 0, -1]} : tensor<2x3xf32>
// CHECK-NEXT:    %reverse = nn.slice %x {ends = [-100], starts = [-1], steps = [-1]} : tensor<2x3xf32>
// CHECK-NEXT:    %sum = nn.sum %x, %x, %x : tensor<2x3xf32>
// CHECK-NEXT:    func.return %shift, %reverse, %sum
func.func @same_type_but_not_no_ops(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %shift = nn.pad %x {pads = [0, 1, 0, -1]} : tensor<2x3xf32>
  %reverse = nn.slice %x {starts = [-1], ends = [-100], steps = [-1]} : tensor<2x3xf32>
  %sum = nn.sum %x, %x, %x : tensor<2x3xf32>
  func.return %shift, %reverse, %sum : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// A sum of two inputs is an add, the binary form that can absorb an activation.
// CHECK-LABEL: func.func @sum_of_two
// CHECK-NEXT:    %sum = nn.add %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %sum
func.func @sum_of_two(%x: tensor<2x3xf32>, %y: tensor<3xf32>) -> tensor<2x3xf32> {
  %sum = nn.sum %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %sum : tensor<2x3xf32>
}

// -----

// A matmul by a constant matrix followed by the addition of a constant bias is a
// gemm, the bias on either side; the add's activation moves to the gemm.
// CHECK-LABEL: func.func @matmul_add_to_gemm
// CHECK-NEXT:    %w = nn.constant dense<5.000000e-01> : tensor<3x4xf32>
// CHECK-NEXT:    %row = nn.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]]> : tensor<1x4xf32>
// CHECK-NEXT:    %vector = nn.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK-NEXT:    %y = nn.gemm %a, %w, %row : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %z = nn.gemm %a, %w, %vector {activation = #nn.activation<clip min = 0.0, max = 6.0>} : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    func.return %y, %z
func.func @matmul_add_to_gemm(%a: tensor<2x3xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %w = nn.constant dense<0.5> : tensor<3x4xf32>
  %row = nn.constant dense<[[1.0, 2.0, 3.0, 4.0]]> : tensor<1x4xf32>
  %vector = nn.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %m = nn.matmul %a, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %y = nn.add %m, %row : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  %n = nn.matmul %a, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %z = nn.add %vector, %n {activation = #nn.activation<clip min = 0.0, max = 6.0>} : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %y, %z : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// No gemm: the product has a second user; the matmul has its own activation; the
// matrix is not a constant; the bias broadcasts the product to a larger shape.
// CHECK-LABEL: func.func @matmul_add_stays
// CHECK-NEXT:    %w = nn.constant
// CHECK-NEXT:    %c = nn.constant
// CHECK-NEXT:    %wide = nn.constant
// CHECK-NEXT:    %shared = nn.matmul %a, %w
// CHECK-NEXT:    %y = nn.add %shared, %c
// CHECK-NEXT:    %activated = nn.matmul %a, %w {activation = #nn.activation<relu>}
// CHECK-NEXT:    %z = nn.add %activated, %c
// CHECK-NEXT:    %variable = nn.matmul %a, %v
// CHECK-NEXT:    %u = nn.add %variable, %c
// CHECK-NEXT:    %product = nn.matmul %a, %w
// CHECK-NEXT:    %t = nn.add %product, %wide
// CHECK-NEXT:    func.return %y, %shared, %z, %u, %t
func.func @matmul_add_stays(%a: tensor<2x3xf32>, %v: tensor<3x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<5x2x4xf32>) {
  %w = nn.constant dense<0.5> : tensor<3x4xf32>
  %c = nn.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %wide = nn.constant dense<1.0> : tensor<5x1x4xf32>
  %shared = nn.matmul %a, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %y = nn.add %shared, %c : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %activated = nn.matmul %a, %w {activation = #nn.activation<relu>} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %z = nn.add %activated, %c : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %variable = nn.matmul %a, %v : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %u = nn.add %variable, %c : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %product = nn.matmul %a, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %t = nn.add %product, %wide : (tensor<2x4xf32>, tensor<5x1x4xf32>) -> tensor<5x2x4xf32>
  func.return %y, %shared, %z, %u, %t : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<5x2x4xf32>
}

// -----

// An op that a rule builds takes the location of the op it stands for, so layers
// keep their names: a gemm is its matmul's layer (with the bias), a merged reshape or
// transpose takes the outer op's location, the add the sum's, the reshape the flatten's
// or transpose's; a folded constant takes the location of the op it folds.
// LOC-LABEL: func.func @locations
// LOC-NEXT:    %w = nn.constant {{.*}} loc("w")
// LOC-NEXT:    %c = nn.constant {{.*}} loc("c")
// LOC-NEXT:    %y = nn.gemm %a, %w, %c {{.*}} loc("dense")
// LOC-NEXT:    %z = nn.gemm %a, %w, %c {{.*}} loc("dense2")
// LOC-NEXT:    %s = nn.add %y, %z {{.*}} loc("residual")
// LOC-NEXT:    %r2 = nn.reshape %x {{.*}} loc("outer_reshape")
// LOC-NEXT:    %f = nn.reshape %x {{.*}} loc("flatten")
// LOC-NEXT:    %t2 = nn.transpose %x {perm = [2, 0, 1]} {{.*}} loc("outer_transpose")
// LOC-NEXT:    %p = nn.reshape %u {{.*}} loc("unit_transpose")
// LOC-NEXT:    %folded = nn.constant dense<[0.000000e+00, 2.000000e+00, 0.000000e+00]> {{.*}} loc("folded")
func.func @locations(%a: tensor<2x3xf32>, %x: tensor<2x3x4xf32>, %u: tensor<1x8x1x1xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<4x6xf32>, tensor<2x12xf32>, tensor<4x2x3xf32>, tensor<1x1x1x8xf32>, tensor<3xf32>) {
  %w = nn.constant dense<0.5> : tensor<3x4xf32> loc("w")
  %c = nn.constant dense<1.0> : tensor<4xf32> loc("c")
  %m = nn.matmul %a, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32> loc("dense")
  %y = nn.add %m, %c : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32> loc("dense_bias")
  %n = nn.matmul %a, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32> loc("dense2")
  %z = nn.add %c, %n : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32> loc("dense2_bias")
  %s = nn.sum %y, %z : tensor<2x4xf32> loc("residual")
  %r1 = nn.reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32> loc("inner_reshape")
  %r2 = nn.reshape %r1 : (tensor<6x4xf32>) -> tensor<4x6xf32> loc("outer_reshape")
  %f = nn.flatten %x : (tensor<2x3x4xf32>) -> tensor<2x12xf32> loc("flatten")
  %t1 = nn.transpose %x {perm = [1, 0, 2]} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32> loc("inner_transpose")
  %t2 = nn.transpose %t1 {perm = [2, 1, 0]} : (tensor<3x2x4xf32>) -> tensor<4x2x3xf32> loc("outer_transpose")
  %p = nn.transpose %u {perm = [0, 2, 3, 1]} : (tensor<1x8x1x1xf32>) -> tensor<1x1x1x8xf32> loc("unit_transpose")
  %k = nn.constant dense<[-1.0, 2.0, -3.0]> : tensor<3xf32> loc("k")
  %folded = nn.relu %k : tensor<3xf32> loc("folded")
  func.return %y, %z, %s, %r2, %f, %t2, %p, %folded : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<4x6xf32>, tensor<2x12xf32>, tensor<4x2x3xf32>, tensor<1x1x1x8xf32>, tensor<3xf32>
}
