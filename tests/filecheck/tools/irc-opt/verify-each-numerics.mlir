// --verify-each-numerics runs the entry function (@main, or a chunk's only function)
// with the interpreter on seeded random inputs before the first pass and after every
// pass, and fails naming the pass and the first value that changed beyond
// --numerics-rtol (default 1e-4) / --numerics-atol (default 1e-5).
// Wrong passes are simulated in tests/test_numerics.py, which registers test passes.

// Correct passes: the output is printed as usual.
// RUN: irc-opt %s --split-input-file --verify-each-numerics -p canonicalize,cse,fold-batchnorm | FileCheck %s
// RUN: irc-opt %s --split-input-file --verify-each-numerics --numerics-seed=3 --numerics-rtol=1e-3 --numerics-atol=1e-4 -p canonicalize,cse,fold-batchnorm | FileCheck %s

// With no tolerance at all, folding a batch norm into a conv is a change: the folded
// weights round differently. The error is at the first value that differs, the conv,
// compared with the batch norm whose value it now computes.
// RUN: irc-opt %s --split-input-file --verify-diagnostics --verify-each-numerics --numerics-rtol=0 --numerics-atol=0 -p canonicalize,cse,fold-batchnorm

// The checks have their own row in the timing report.
// RUN: irc-opt %s --split-input-file --verify-each-numerics -p canonicalize --mlir-timing -o %t.mlir 2>&1 | FileCheck %s --check-prefix=TIMING
// TIMING:      Verifier
// TIMING-NEXT: Numerics verification
// TIMING-NEXT: Canonicalize

// Numerics need the weights: IR printed with elided weights (the default on stdout)
// is refused with an error at the first constant without data...
// RUN: irc-opt %s --split-input-file --weights-inline-limit=2 | not irc-opt --split-input-file --verify-each-numerics -p canonicalize 2>&1 | FileCheck %s --check-prefix=ELIDED
// ELIDED: <stdin>:3:{{[0-9]+}} (cst): error: numerical verification needs the values of the weights, but this constant's were elided when the IR was printed
// ELIDED-NEXT: hint: print the IR with --weights=resource or --weights=sidecar

// ...while weights kept in a resource section are read back and used.
// RUN: irc-opt %s --split-input-file --weights=resource --weights-inline-limit=2 | irc-opt --split-input-file --verify-each-numerics -p canonicalize,cse,fold-batchnorm | FileCheck %s

// CHECK-LABEL: func.func @main
// CHECK:         %c = nn.conv %x, %w
// CHECK-NEXT:    %r = nn.relu %c
// CHECK-NEXT:    %s = nn.add %r, %x
// CHECK-NEXT:    func.return %s

func.func @main(%x: tensor<1x2x3x3xf32> {irc.name = "image"}) -> (tensor<1x2x3x3xf32> {irc.name = "out"}) {
  %w = nn.constant dense<[[[[0.5]], [[-1.0]]], [[[2.0]], [[0.25]]]]> : tensor<2x2x1x1xf32>
  %c = nn.conv %x, %w : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %r = nn.relu %c : tensor<1x2x3x3xf32>
  %i = nn.identity %r : tensor<1x2x3x3xf32>
  %dead = nn.sigmoid %i : tensor<1x2x3x3xf32>
  %s = nn.add %i, %x : tensor<1x2x3x3xf32>
  func.return %s : tensor<1x2x3x3xf32>
}

// -----

// CHECK-LABEL: func.func @conv_bn
// CHECK-NOT:     nn.batch_norm
// CHECK:         nn.conv %x, %{{.+}}, %{{.+}} :

func.func @conv_bn(%x: tensor<1x3x4x4xf32>) -> tensor<1x4x4x4xf32> {
  %w = nn.constant dense<[[[[0.3]], [[-0.7]], [[1.1]]], [[[0.9]], [[0.2]], [[-0.4]]], [[[-1.3]], [[0.6]], [[0.8]]], [[[0.1]], [[1.7]], [[-0.9]]]]> : tensor<4x3x1x1xf32>
  %gamma = nn.constant dense<[1.1, 2.3, 0.7, 1.3]> : tensor<4xf32>
  %beta = nn.constant dense<[0.1, 0.2, 0.3, 0.4]> : tensor<4xf32>
  %mean = nn.constant dense<[0.3, 1.1, -1.7, 0.5]> : tensor<4xf32>
  %var = nn.constant dense<[1.3, 2.1, 0.7, 0.3]> : tensor<4xf32>
  // expected-error-re @+2 {{pass 'fold-batchnorm' changed the numerics: the first value that differs (rtol=0, atol=0) is nn.conv result #0 (compared with nn.batch_norm result #0 at {{.*}}verify-each-numerics.mlir:62:3 before the pass, which it now computes): max abs error {{.+}}; worst at index [{{[0-9, ]+}}]}}
  // expected-note-re @+1 {{output 'output_0' of @conv_bn: max abs error {{.+}}}}
  %c = nn.conv %x, %w : (tensor<1x3x4x4xf32>, tensor<4x3x1x1xf32>) -> tensor<1x4x4x4xf32>
  %n = nn.batch_norm %c, %gamma, %beta, %mean, %var : (tensor<1x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %r = nn.relu %n : tensor<1x4x4x4xf32>
  %s = nn.sigmoid %r : tensor<1x4x4x4xf32>
  func.return %s : tensor<1x4x4x4xf32>
}
