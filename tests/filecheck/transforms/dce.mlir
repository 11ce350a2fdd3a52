// RUN: irc-opt %s --split-input-file -p dce | FileCheck %s

// `dce` erases side-effect-free ops whose results are unused.

// CHECK-LABEL: func.func @unused_op
func.func @unused_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: %used = nn.relu %x : tensor<4xf32>
  // CHECK-NEXT: func.return %used
  %unused = nn.sigmoid %x : tensor<4xf32>
  %used = nn.relu %x : tensor<4xf32>
  func.return %used : tensor<4xf32>
}

// -----

// A chain whose last result is unused is erased as a whole, constants included.

// CHECK-LABEL: func.func @dead_chain
func.func @dead_chain(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: func.return %x
  %c = nn.constant dense<2.0> : tensor<4xf32>
  %a = nn.mul %x, %c : tensor<4xf32>
  %b = nn.tanh %a : tensor<4xf32>
  %d = nn.add %b, %a : tensor<4xf32>
  func.return %x : tensor<4xf32>
}

// -----

// Function arguments and functions themselves are never erased, used or not.

// CHECK-LABEL: func.func @unused_argument(%x: tensor<4xf32>, %unused: tensor<4xf32>)
// CHECK-NEXT:    func.return %x
// CHECK-LABEL: func.func @uncalled
// CHECK-NEXT:    func.return
func.func @unused_argument(%x: tensor<4xf32>, %unused: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}
func.func @uncalled() {
  func.return
}
