// --mlir-timing prints the wall time of each step to stderr, as mlir-opt does.
// RUN: irc-opt %s -p canonicalize,cse --mlir-timing -o %t 2>&1 | FileCheck %s

// CHECK:      ... Execution time report ...
// CHECK:        Total Execution Time: {{[0-9]+\.[0-9]+}} seconds
// CHECK:        ----Wall Time----  ----Name----
// CHECK-NEXT:   {{ *[0-9]+\.[0-9]+ \( *[0-9]+\.[0-9]%\)}}  Pipeline parsing
// CHECK-NEXT:   {{ *[0-9]+\.[0-9]+ \( *[0-9]+\.[0-9]%\)}}  Parser
// CHECK-NEXT:   {{ *[0-9]+\.[0-9]+ \( *[0-9]+\.[0-9]%\)}}  Verifier
// CHECK-NEXT:   {{ *[0-9]+\.[0-9]+ \( *[0-9]+\.[0-9]%\)}}  Canonicalize
// CHECK-NEXT:   {{ *[0-9]+\.[0-9]+ \( *[0-9]+\.[0-9]%\)}}  CSE
// CHECK-NEXT:   {{ *[0-9]+\.[0-9]+ \( *[0-9]+\.[0-9]%\)}}  Output
// CHECK-NEXT:   {{ *[0-9]+\.[0-9]+ \( *[0-9]+\.[0-9]%\)}}  Rest
// CHECK-NEXT:   {{ *[0-9]+\.[0-9]+ \(100\.0%\)}}  Total

func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = nn.relu %x : tensor<2xf32>
  func.return %y : tensor<2xf32>
}
