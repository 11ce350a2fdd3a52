// RUN: irc-opt %s --split-input-file -p canonicalize | FileCheck %s

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
