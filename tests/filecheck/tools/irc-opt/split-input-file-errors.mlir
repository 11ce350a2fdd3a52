// An error in one chunk does not stop the others: every chunk is reported, the
// chunks that succeed are printed, and irc-opt exits with 1. Line numbers are
// those of the whole file.
// RUN: not irc-opt %s --split-input-file 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=ERR --input-file=%t.err

// With -o, nothing is written when a chunk fails.
// RUN: rm -f %t.out
// RUN: not irc-opt %s --split-input-file -o %t.out
// RUN: not ls %t.out

// CHECK:       func.func @good
// CHECK:       // -----
// CHECK-NEXT:  // -----
// CHECK-NEXT:  builtin.module {
// CHECK-NEXT:    func.func @also_good

// ERR: split-input-file-errors.mlir:[[# @LINE + 10]]:3: error: result type tensor<3xf32> does not match the inferred type tensor<2xf32>
// ERR-NOT: error

func.func @good(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}

// -----

func.func @bad(%x: tensor<2xf32>) {
  %y = nn.relu %x : (tensor<2xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @also_good(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}
