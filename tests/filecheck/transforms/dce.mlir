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

// -----

// A multi-result op stays while any of its results is used; ops feeding only dead
// ops go with them, ops with a live user stay.

// CHECK-LABEL: func.func @partly_used
// CHECK-NEXT:    %{{.*}}, %[[OTHER:.*]] = nn.split %x {sizes = [2, 2]}
// CHECK-NEXT:    %live = nn.relu %[[OTHER]]
// CHECK-NEXT:    func.return %live
func.func @partly_used(%x: tensor<4xf32>) -> tensor<2xf32> {
  %a, %b = nn.split %x {axis = 0, sizes = [2, 2]} : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  %dead = nn.exp %a : tensor<2xf32>
  %live = nn.relu %b : tensor<2xf32>
  func.return %live : tensor<2xf32>
}
