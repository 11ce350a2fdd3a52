// RUN: irc-opt %s | irc-opt | FileCheck %s
// RUN: irc-opt %s --mlir-print-op-generic | irc-opt | FileCheck %s

// MLIR's uniform quantized types and the quant casts round-trip.

// CHECK-LABEL: func.func @per_tensor
func.func @per_tensor(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: %q = quant.qcast %x : tensor<4xf32> to tensor<4x!quant.uniform<i8:f32, 0.0235:-3>>
  %q = quant.qcast %x : tensor<4xf32> to tensor<4x!quant.uniform<i8:f32, 0.0235:-3>>
  // CHECK-NEXT: %d = quant.dcast %q : tensor<4x!quant.uniform<i8:f32, 0.0235:-3>> to tensor<4xf32>
  %d = quant.dcast %q : tensor<4x!quant.uniform<i8:f32, 0.0235:-3>> to tensor<4xf32>
  // CHECK-NEXT: func.return %d
  func.return %d : tensor<4xf32>
}

// A zero point of 0 is not printed; narrowed storage ranges and unsigned storage are.
// CHECK-LABEL: func.func @storage
func.func @storage(%x: tensor<4xf32>) -> (tensor<4xi8>, tensor<4xui8>) {
  // CHECK-NEXT: %narrow = quant.qcast %x : tensor<4xf32> to tensor<4x!quant.uniform<i8<-127:127>:f32, 0.5>>
  %narrow = quant.qcast %x : tensor<4xf32> to tensor<4x!quant.uniform<i8<-127:127>:f32, 0.5:0>>
  // CHECK-NEXT: %unsigned = quant.qcast %x : tensor<4xf32> to tensor<4x!quant.uniform<u8:f32, 1.0e-05:128>>
  %unsigned = quant.qcast %x : tensor<4xf32> to tensor<4x!quant.uniform<u8:f32, 1.0e-05:128>>
  // CHECK-NEXT: %stored = quant.scast %narrow : tensor<4x!quant.uniform<i8<-127:127>:f32, 0.5>> to tensor<4xi8>
  %stored = quant.scast %narrow : tensor<4x!quant.uniform<i8<-127:127>:f32, 0.5>> to tensor<4xi8>
  // CHECK-NEXT: %bytes = quant.scast %unsigned : tensor<4x!quant.uniform<u8:f32, 1.0e-05:128>> to tensor<4xui8>
  %bytes = quant.scast %unsigned : tensor<4x!quant.uniform<u8:f32, 1.0e-05:128>> to tensor<4xui8>
  // CHECK-NEXT: func.return %stored, %bytes
  func.return %stored, %bytes : tensor<4xi8>, tensor<4xui8>
}

// Per-axis types: one scale and zero point per slice along the quantized axis.
// CHECK-LABEL: func.func @per_axis
func.func @per_axis(%w: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK-NEXT: %q = quant.qcast %w : tensor<2x3xf32> to tensor<2x3x!quant.uniform<i8:f32:0, {0.1:1, 0.2:-2}>>
  %q = quant.qcast %w : tensor<2x3xf32> to tensor<2x3x!quant.uniform<i8:f32:0, {0.1:1, 0.2:-2}>>
  // CHECK-NEXT: %i = quant.scast %q : tensor<2x3x!quant.uniform<i8:f32:0, {0.1:1, 0.2:-2}>> to tensor<2x3xi8>
  %i = quant.scast %q : tensor<2x3x!quant.uniform<i8:f32:0, {0.1:1, 0.2:-2}>> to tensor<2x3xi8>
  // CHECK-NEXT: %back = quant.scast %i : tensor<2x3xi8> to tensor<2x3x!quant.uniform<i8:f32:1, {0.5, 0.25, 0.125}>>
  %back = quant.scast %i : tensor<2x3xi8> to tensor<2x3x!quant.uniform<i8:f32:1, {0.5, 0.25, 0.125}>>
  // CHECK-NEXT: %d = quant.dcast %back : tensor<2x3x!quant.uniform<i8:f32:1, {0.5, 0.25, 0.125}>> to tensor<2x3xf32>
  %d = quant.dcast %back : tensor<2x3x!quant.uniform<i8:f32:1, {0.5, 0.25, 0.125}>> to tensor<2x3xf32>
  func.return %d : tensor<2x3xf32>
}

// A transpose of a per-axis quantized tensor moves the quantized axis with the data.
// CHECK-LABEL: func.func @transpose_moves_the_axis
// CHECK-NEXT:    %t = nn.transpose %x {perm = [1, 0]} : (tensor<2x3x!quant.uniform<i8:f32:1, {0.1, 0.2, 0.3}>>) -> tensor<3x2x!quant.uniform<i8:f32:0, {0.1, 0.2, 0.3}>>
func.func @transpose_moves_the_axis(%x: tensor<2x3x!quant.uniform<i8:f32:1, {0.1, 0.2, 0.3}>>) -> tensor<3x2x!quant.uniform<i8:f32:0, {0.1, 0.2, 0.3}>> {
  %t = nn.transpose %x {perm = [1, 0]} : (tensor<2x3x!quant.uniform<i8:f32:1, {0.1, 0.2, 0.3}>>) -> tensor<3x2x!quant.uniform<i8:f32:0, {0.1, 0.2, 0.3}>>
  func.return %t : tensor<3x2x!quant.uniform<i8:f32:0, {0.1, 0.2, 0.3}>>
}
