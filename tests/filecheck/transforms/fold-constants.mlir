// RUN: irc-opt %s --split-input-file -p fold-constants | FileCheck %s
// RUN: irc-opt %s --split-input-file -p canonicalize | FileCheck %s

// `fold-constants` evaluates every nn op whose operands are all constants with the
// reference interpreter; `nn.shape` folds from its input's static type. Canonicalize
// folds the same way.

// The chain that exporters emit to compute a shape folds to one constant.
// CHECK-LABEL: func.func @shape_chain
// CHECK-NEXT:    %[[SHAPE:.*]] = nn.constant dense<[2, 12]> : tensor<2xi64>
// CHECK-NEXT:    func.return %[[SHAPE]] : tensor<2xi64>
func.func @shape_chain(%x: tensor<2x3x4xf32>) -> tensor<2xi64> {
  %shape = nn.shape %x : (tensor<2x3x4xf32>) -> tensor<3xi64>
  %zero = nn.constant dense<0> : tensor<1xi64>
  %batch = nn.gather %shape, %zero : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
  %rows = nn.slice %shape {starts = [1], ends = [2]} : (tensor<3xi64>) -> tensor<1xi64>
  %cols = nn.slice %shape {starts = [-1], ends = [3]} : (tensor<3xi64>) -> tensor<1xi64>
  %inner = nn.mul %rows, %cols : tensor<1xi64>
  %scalar = nn.squeeze %inner {axes = [0]} : (tensor<1xi64>) -> tensor<i64>
  %again = nn.unsqueeze %scalar {axes = [0]} : (tensor<i64>) -> tensor<1xi64>
  %dims = nn.concat %batch, %again {axis = 0} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  func.return %dims : tensor<2xi64>
}

// -----

// Float arithmetic on constants folds; ops that touch a function argument stay.
// CHECK-LABEL: func.func @partial
// CHECK-NEXT:    %[[C:.*]] = nn.constant dense<[2.000000e+00, 4.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[Y:.*]] = nn.add %x, %[[C]] : tensor<2xf32>
// CHECK-NEXT:    func.return %[[Y]]
func.func @partial(%x: tensor<2xf32>) -> tensor<2xf32> {
  %a = nn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = nn.add %a, %a : tensor<2xf32>
  %c = nn.relu %b : tensor<2xf32>
  %y = nn.add %x, %c : tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// -----

// A transposed weight folds into a new constant of the transposed shape.
// CHECK-LABEL: func.func @transpose_weight
// CHECK-NEXT:    %[[W:.*]] = nn.constant dense<{{\[\[}}1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT:    %[[Y:.*]] = nn.matmul %x, %[[W]]
func.func @transpose_weight(%x: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %w = nn.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %t = nn.transpose %w {perm = [1, 0]} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %y = nn.matmul %x, %t : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  func.return %y : tensor<1x2xf32>
}

// -----

// Constants whose weights were elided when the IR was printed have no data: the
// ops using them stay.
// CHECK-LABEL: func.func @elided
// CHECK-NEXT:    %w = nn.constant dense_resource<w> : tensor<32xf32>
// CHECK-NEXT:    %r = nn.relu %w : tensor<32xf32>
func.func @elided() -> tensor<32xf32> {
  %w = nn.constant dense_resource<w> : tensor<32xf32>
  %r = nn.relu %w : tensor<32xf32>
  func.return %r : tensor<32xf32>
}

// -----

// An op with several results folds into one constant per result.
// CHECK-LABEL: func.func @split
// CHECK-NEXT:    %[[A:.*]] = nn.constant dense<[1, 2]> : tensor<2xi64>
// CHECK-NEXT:    %[[B:.*]] = nn.constant dense<3> : tensor<1xi64>
// CHECK-NEXT:    func.return %[[A]], %[[B]]
func.func @split() -> (tensor<2xi64>, tensor<1xi64>) {
  %v = nn.constant dense<[1, 2, 3]> : tensor<3xi64>
  %a, %b = nn.split %v {sizes = [2, 1]} : (tensor<3xi64>) -> (tensor<2xi64>, tensor<1xi64>)
  func.return %a, %b : tensor<2xi64>, tensor<1xi64>
}
