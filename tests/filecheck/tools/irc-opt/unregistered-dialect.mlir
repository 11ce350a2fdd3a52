// Ops of dialects that irc does not know are an error, unless
// --allow-unregistered-dialect is given; they are then kept as they are.
// RUN: not irc-opt %s 2>&1 | FileCheck %s --check-prefix=ERROR
// RUN: irc-opt %s --allow-unregistered-dialect -p cse | FileCheck %s

// ERROR: unregistered-dialect.mlir:[[# @LINE + 7]]:{{[0-9]+}}: error: Operation test.custom is not registered

// CHECK:      %y = nn.relu %x : tensor<2xf32>
// CHECK-NEXT: %z = "test.custom"(%y) {flag} : (tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT: func.return %z
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = nn.relu %x : tensor<2xf32>
  %z = "test.custom"(%y) {flag} : (tensor<2xf32>) -> tensor<2xf32>
  %y2 = nn.relu %x : tensor<2xf32>
  func.return %z : tensor<2xf32>
}
