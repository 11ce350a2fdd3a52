// With --split-input-file each chunk between `// -----` lines is parsed, transformed
// and printed on its own; the outputs are joined by `// -----` lines.
// RUN: irc-opt %s --split-input-file -p cse | FileCheck %s
// Without it, the markers are plain comments and the file is one module.
// RUN: irc-opt %s -p cse | FileCheck %s --check-prefix=WHOLE

// CHECK:       builtin.module {
// CHECK-NEXT:    func.func @first
// CHECK-NEXT:      func.return
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-NEXT:  // -----
// CHECK-NEXT:  builtin.module {
// CHECK-NEXT:    func.func @second
// CHECK-NOT:   // -----

// WHOLE:       builtin.module {
// WHOLE-NEXT:    func.func @first
// WHOLE:         func.func @second
// WHOLE-NOT:   // -----

func.func @first(%x: tensor<3xf32>) -> tensor<3xf32> {
  func.return %x : tensor<3xf32>
}

// -----

func.func @second(%x: tensor<3xf32>) -> tensor<3xf32> {
  func.return %x : tensor<3xf32>
}
