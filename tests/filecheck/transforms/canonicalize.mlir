// RUN: irc-opt %s --split-input-file -p canonicalize | FileCheck %s
// RUN: irc-opt %s --split-input-file -p 'canonicalize{top-down=false}' | FileCheck %s

// `canonicalize` applies each op's canonicalization patterns and folders until
// nothing changes, erasing dead ops on the way. The patterns of each op are tested
// with the op, in tests/filecheck/dialects/<dialect>/canonicalize.mlir.

// CHECK-LABEL: func.func @dead_ops
func.func @dead_ops(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  // CHECK-NEXT: %live = nn.relu %x : tensor<1x8xf32>
  // CHECK-NEXT: func.return %live
  %dead = nn.exp %x : tensor<1x8xf32>
  %also_dead = nn.neg %dead : tensor<1x8xf32>
  %live = nn.relu %x : tensor<1x8xf32>
  func.return %live : tensor<1x8xf32>
}

// -----

// IR that is already canonical is left as it is.

// CHECK-LABEL: func.func @canonical
// CHECK-NEXT:    %w = nn.constant dense<1.000000e+00> : tensor<4x3x3x3xf32>
// CHECK-NEXT:    %y = nn.conv %x, %w {pads = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT:    %r = nn.relu %y : tensor<1x4x8x8xf32>
// CHECK-NEXT:    func.return %r
func.func @canonical(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = nn.constant dense<1.0> : tensor<4x3x3x3xf32>
  %y = nn.conv %x, %w {pads = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %r = nn.relu %y : tensor<1x4x8x8xf32>
  func.return %r : tensor<1x4x8x8xf32>
}
