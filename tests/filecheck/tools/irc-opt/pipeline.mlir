// The anchored (--pass-pipeline) and flat (-p) syntaxes run the same passes, in order.
// RUN: irc-opt %s --pass-pipeline='builtin.module(cse,dce)' | FileCheck %s
// RUN: irc-opt %s --pass-pipeline='builtin.module(cse, builtin.module(dce))' | FileCheck %s
// RUN: irc-opt %s -p cse,dce | FileCheck %s
// RUN: irc-opt %s -p 'builtin.module(cse),dce' | FileCheck %s
// mlir-opt's single-dash spellings work too.
// RUN: irc-opt %s -pass-pipeline='builtin.module(cse,dce)' | FileCheck %s

// Options are `{name=value ...}`, separated by spaces; a bare boolean option is true.
// RUN: irc-opt %s -p 'canonicalize{top-down=false disable-patterns=A,B},cse' | FileCheck %s
// RUN: irc-opt %s --pass-pipeline='builtin.module(canonicalize{top-down}, cse)' | FileCheck %s

// An empty pipeline only parses, verifies and prints.
// RUN: irc-opt %s -p '' | FileCheck %s --check-prefix=NONE
// RUN: irc-opt %s --pass-pipeline='builtin.module()' | FileCheck %s --check-prefix=NONE
// RUN: irc-opt %s | FileCheck %s --check-prefix=NONE

// CHECK-LABEL: func.func @duplicate_and_dead
// CHECK-NEXT:    %a = nn.relu %x
// CHECK-NEXT:    %sum = nn.add %a, %a
// CHECK-NEXT:    func.return %sum

// NONE-LABEL: func.func @duplicate_and_dead
// NONE-NEXT:    %a = nn.relu %x
// NONE-NEXT:    %b = nn.relu %x
// NONE-NEXT:    %unused = nn.sigmoid %x
// NONE-NEXT:    %sum = nn.add %a, %b
func.func @duplicate_and_dead(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %a = nn.relu %x : tensor<2x2xf32>
  %b = nn.relu %x : tensor<2x2xf32>
  %unused = nn.sigmoid %x : tensor<2x2xf32>
  %sum = nn.add %a, %b : tensor<2x2xf32>
  func.return %sum : tensor<2x2xf32>
}
