// RUN: irc-opt %s -p 'fold-constants{max-elements=4}' | FileCheck %s

// With max-elements, ops whose results are larger than the limit are not folded.
// CHECK-LABEL: func.func @limit
// CHECK:         nn.tile
// CHECK-NOT:     nn.neg
// CHECK:         func.return
func.func @limit() -> (tensor<8xf32>, tensor<2xf32>) {
  %a = nn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %big = nn.tile %a {repeats = [4]} : (tensor<2xf32>) -> tensor<8xf32>
  %small = nn.neg %a : tensor<2xf32>
  func.return %big, %small : tensor<8xf32>, tensor<2xf32>
}
