// RUN: irc-opt %s | irc-opt | FileCheck %s
// RUN: irc-opt %s --mlir-print-op-generic | irc-opt | FileCheck %s

// Every tile op round-trips through its custom syntax and the generic form.

// Buffers: the bufferization boundary, allocation with a planned offset, copies with
// a padded source box, fills.
// CHECK-LABEL: func.func @buffers
func.func @buffers(%t: tensor<1x12x12x8x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x12x12x8x!quant.uniform<i8:f32, 0.1:-3>> {
  %c0 = arith.constant 0 : index
  %cm1 = arith.constant -1 : index
  // CHECK: %x = tile.to_buffer %t : tensor<1x12x12x8x!quant.uniform<i8:f32, 0.1:-3>> to memref<1x12x12x8xi8, "ddr">
  %x = tile.to_buffer %t : tensor<1x12x12x8x!quant.uniform<i8:f32, 0.1:-3>> to memref<1x12x12x8xi8, "ddr">
  // CHECK-NEXT: %box = tile.alloc {offset = 64} : memref<1x6x14x8xi8, "sram">
  %box = tile.alloc {offset = 64} : memref<1x6x14x8xi8, "sram">
  // CHECK-NEXT: %box2 = tile.alloc {alternate = 8192, offset = 64} : memref<1x6x14x8xi8, "sram">
  %box2 = tile.alloc {offset = 64, alternate = 8192} : memref<1x6x14x8xi8, "sram">
  // CHECK-NEXT: %acc = tile.alloc : memref<4x4xf32, "sram">
  %acc = tile.alloc : memref<4x4xf32, "sram">
  // CHECK-NEXT: tile.copy %x[%c0, %cm1, %cm1, %c0] to %box[%c0, %c0, %c0, %c0] sizes [1, 6, 14, 8] {pad = -3} : memref<1x12x12x8xi8, "ddr"> to memref<1x6x14x8xi8, "sram">
  tile.copy %x[%c0, %cm1, %cm1, %c0] to %box[%c0, %c0, %c0, %c0] sizes [1, 6, 14, 8] {pad = -3} : memref<1x12x12x8xi8, "ddr"> to memref<1x6x14x8xi8, "sram">
  // CHECK-NEXT: tile.copy %box[%c0, %c0, %c0, %c0] to %x[%c0, %c0, %c0, %c0] sizes [1, 6, 12, 8] : memref<1x6x14x8xi8, "sram"> to memref<1x12x12x8xi8, "ddr">
  tile.copy %box[%c0, %c0, %c0, %c0] to %x[%c0, %c0, %c0, %c0] sizes [1, 6, 12, 8] {pad = 0} : memref<1x6x14x8xi8, "sram"> to memref<1x12x12x8xi8, "ddr">
  // CHECK-NEXT: tile.copy %x[%c0, %cm1, %cm1, %c0] to %box[%c0, %c0, %c0, %c0] sizes [1, 6, 14, 8] {pad = -3, upsample = [1, 2, 2, 1]} : memref<1x12x12x8xi8, "ddr"> to memref<1x6x14x8xi8, "sram">
  tile.copy %x[%c0, %cm1, %cm1, %c0] to %box[%c0, %c0, %c0, %c0] sizes [1, 6, 14, 8] {pad = -3, upsample = [1, 2, 2, 1]} : memref<1x12x12x8xi8, "ddr"> to memref<1x6x14x8xi8, "sram">
  // A load broadcast into the SRAM of two cores (a layer in lock step).
  // CHECK-NEXT: tile.copy %x[%c0, %cm1, %cm1, %c0] to %box[%c0, %c0, %c0, %c0] sizes [1, 6, 14, 8] {broadcast = 2, pad = -3} : memref<1x12x12x8xi8, "ddr"> to memref<1x6x14x8xi8, "sram">
  tile.copy %x[%c0, %cm1, %cm1, %c0] to %box[%c0, %c0, %c0, %c0] sizes [1, 6, 14, 8] {pad = -3, broadcast = 2} : memref<1x12x12x8xi8, "ddr"> to memref<1x6x14x8xi8, "sram">
  // A rolling buffer of 4 rows of a 12-row tensor: its offsets are the tensor's.
  // CHECK-NEXT: %roll = tile.alloc {offset = 16384} : memref<1x4x12x8xi8, "sram">
  %roll = tile.alloc {offset = 16384} : memref<1x4x12x8xi8, "sram">
  // CHECK-NEXT: tile.copy %box[%c0, %c0, %c0, %c0] to %roll[%c0, %c0, %c0, %c0] sizes [1, 2, 12, 8] {dest_rolling = [1, 12, 12, 8]} : memref<1x6x14x8xi8, "sram"> to memref<1x4x12x8xi8, "sram">
  tile.copy %box[%c0, %c0, %c0, %c0] to %roll[%c0, %c0, %c0, %c0] sizes [1, 2, 12, 8] {dest_rolling = [1, 12, 12, 8]} : memref<1x6x14x8xi8, "sram"> to memref<1x4x12x8xi8, "sram">
  // CHECK-NEXT: tile.copy %roll[%c0, %cm1, %cm1, %c0] to %box[%c0, %c0, %c0, %c0] sizes [1, 4, 14, 8] {pad = -3, source_rolling = [1, 12, 12, 8]} : memref<1x4x12x8xi8, "sram"> to memref<1x6x14x8xi8, "sram">
  tile.copy %roll[%c0, %cm1, %cm1, %c0] to %box[%c0, %c0, %c0, %c0] sizes [1, 4, 14, 8] {pad = -3, source_rolling = [1, 12, 12, 8]} : memref<1x4x12x8xi8, "sram"> to memref<1x6x14x8xi8, "sram">
  // CHECK-NEXT: tile.fill %box {value = -3} : memref<1x6x14x8xi8, "sram">
  tile.fill %box {value = -3} : memref<1x6x14x8xi8, "sram">
  // CHECK-NEXT: tile.fill %acc {value = 0.5} : memref<4x4xf32, "sram">
  tile.fill %acc {value = 0.5} : memref<4x4xf32, "sram">
  // CHECK-NEXT: %y = tile.to_tensor %x : memref<1x12x12x8xi8, "ddr"> to tensor<1x12x12x8x!quant.uniform<i8:f32, 0.1:-3>>
  %y = tile.to_tensor %x : memref<1x12x12x8xi8, "ddr"> to tensor<1x12x12x8x!quant.uniform<i8:f32, 0.1:-3>>
  func.return %y : tensor<1x12x12x8x!quant.uniform<i8:f32, 0.1:-3>>
}

// A K-split conv step, its bias and per-channel requantization.
// CHECK-LABEL: func.func @conv
func.func @conv(%box: memref<1x6x14x4xi8, "sram">, %w: memref<16x3x3x4xi8, "sram">, %acc: memref<1x4x12x16xi32, "sram">, %bias: memref<16xi32, "sram">, %params: memref<16x2xi32, "sram">, %out: memref<1x4x12x16xi8, "sram">, %dw: memref<4x3x3x1xi8, "sram">, %dacc: memref<1x2x2x4xi32, "sram">, %dbox: memref<1x5x5x4xui8, "sram">) {
  // CHECK-NEXT: tile.conv %box, %w, %acc {accumulate = true, input_zero_point = -3} : memref<1x6x14x4xi8, "sram">, memref<16x3x3x4xi8, "sram">, memref<1x4x12x16xi32, "sram">
  tile.conv %box, %w, %acc {accumulate = true, input_zero_point = -3} : memref<1x6x14x4xi8, "sram">, memref<16x3x3x4xi8, "sram">, memref<1x4x12x16xi32, "sram">
  // CHECK-NEXT: tile.conv %dbox, %dw, %dacc {group = 4, input_zero_point = 128, strides = [2, 2]} : memref<1x5x5x4xui8, "sram">, memref<4x3x3x1xi8, "sram">, memref<1x2x2x4xi32, "sram">
  tile.conv %dbox, %dw, %dacc {group = 4, input_zero_point = 128, strides = [2, 2]} : memref<1x5x5x4xui8, "sram">, memref<4x3x3x1xi8, "sram">, memref<1x2x2x4xi32, "sram">
  // CHECK-NEXT: tile.bias_add %acc, %bias : memref<1x4x12x16xi32, "sram">, memref<16xi32, "sram">
  tile.bias_add %acc, %bias : memref<1x4x12x16xi32, "sram">, memref<16xi32, "sram">
  // CHECK-NEXT: tile.requantize %acc, %params, %out {clamp_min = 5, output_zero_point = 5} : memref<1x4x12x16xi32, "sram">, memref<16x2xi32, "sram">, memref<1x4x12x16xi8, "sram">
  tile.requantize %acc, %params, %out {clamp_min = 5, output_zero_point = 5} : memref<1x4x12x16xi32, "sram">, memref<16x2xi32, "sram">, memref<1x4x12x16xi8, "sram">
  // TFLite's rounding (docs/tflite.md): two roundings, ties up.
  // CHECK-NEXT: tile.requantize %acc, %params, %out {rounding = "double_up"} : memref<1x4x12x16xi32, "sram">, memref<16x2xi32, "sram">, memref<1x4x12x16xi8, "sram">
  tile.requantize %acc, %params, %out {rounding = "double_up"} : memref<1x4x12x16xi32, "sram">, memref<16x2xi32, "sram">, memref<1x4x12x16xi8, "sram">
  func.return
}

// Matrix products, pooling and the vector ops.
// CHECK-LABEL: func.func @vector
func.func @vector(%a: memref<8x16xi8, "sram">, %b: memref<32x16xi8, "sram">, %acc: memref<8x32xi32, "sram">, %box: memref<1x6x14x8xi8, "sram">, %pooled: memref<1x4x12x8xi8, "sram">, %t: memref<64xi8, "sram">, %u: memref<64xi8, "sram">, %table: memref<256xi8, "sram">) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  // CHECK: tile.matmul %a, %b, %acc {a_zero_point = 4, accumulate = true, trans_b = true} : memref<8x16xi8, "sram">, memref<32x16xi8, "sram">, memref<8x32xi32, "sram">
  tile.matmul %a, %b, %acc {a_zero_point = 4, accumulate = true, trans_b = true} : memref<8x16xi8, "sram">, memref<32x16xi8, "sram">, memref<8x32xi32, "sram">
  // CHECK-NEXT: tile.pool %box, %pooled {kernel_shape = [3, 3], kind = "max"} : memref<1x6x14x8xi8, "sram">, memref<1x4x12x8xi8, "sram">
  tile.pool %box, %pooled {kind = "max", kernel_shape = [3, 3]} : memref<1x6x14x8xi8, "sram">, memref<1x4x12x8xi8, "sram">
  // CHECK-NEXT: tile.pool %box, %pooled[%c4, %c0] {input_h = 12, input_w = 12, input_zero_point = -3, kernel_shape = [3, 3], kind = "average", multiplier = 1288490189, pads = [1, 1, 1, 1], shift = 0} : memref<1x6x14x8xi8, "sram">, memref<1x4x12x8xi8, "sram">
  tile.pool %box, %pooled[%c4, %c0] {kind = "average", kernel_shape = [3, 3], pads = [1, 1, 1, 1], input_h = 12, input_w = 12, input_zero_point = -3, multiplier = 1288490189, shift = 0} : memref<1x6x14x8xi8, "sram">, memref<1x4x12x8xi8, "sram">
  // CHECK-NEXT: tile.add %t, %u, %t {lhs_multiplier = 1073741824, lhs_shift = -1, lhs_zero_point = 3, multiplier = 1073741824, output_zero_point = -2, rhs_multiplier = 1073741824, rhs_shift = 0, shift = -1} : memref<64xi8, "sram">, memref<64xi8, "sram">, memref<64xi8, "sram">
  tile.add %t, %u, %t {lhs_zero_point = 3, output_zero_point = -2, lhs_multiplier = 1073741824, lhs_shift = -1, rhs_multiplier = 1073741824, rhs_shift = 0, multiplier = 1073741824, shift = -1} : memref<64xi8, "sram">, memref<64xi8, "sram">, memref<64xi8, "sram">
  // CHECK-NEXT: tile.clamp %t, %u {clamp_max = 100, clamp_min = -5} : memref<64xi8, "sram">, memref<64xi8, "sram">
  tile.clamp %t, %u {clamp_min = -5, clamp_max = 100} : memref<64xi8, "sram">, memref<64xi8, "sram">
  // CHECK-NEXT: tile.lut %t, %table, %u : memref<64xi8, "sram">, memref<256xi8, "sram">, memref<64xi8, "sram">
  tile.lut %t, %table, %u : memref<64xi8, "sram">, memref<256xi8, "sram">, memref<64xi8, "sram">
  func.return
}

// Loops over tiles are scf.for over index values.
// CHECK-LABEL: func.func @loop
func.func @loop(%acc: memref<4x4xi32, "sram">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  // CHECK: scf.for %i = %c0 to %c3 step %c1 {
  scf.for %i = %c0 to %c3 step %c1 {
    // CHECK-NEXT: tile.fill %acc {value = 0} : memref<4x4xi32, "sram">
    tile.fill %acc {value = 0} : memref<4x4xi32, "sram">
  }
  func.return
}

// Data movement and float tiles: views of buffers, transposes, broadcasting adds,
// float adds and clamps, requantizing an 8-bit tile, multiplying.
// CHECK-LABEL: func.func @movement
func.func @movement(%a: memref<2x3x4xi8, "sram">, %b: memref<2x4x3xi8, "sram">, %c: memref<1x1x3xi8, "sram">, %f: memref<2x4x3xf32, "sram">, %g: memref<1x1x3xf32, "sram">, %p: memref<3x2xi32, "sram">, %d: memref<24xi8, "ddr">) {
  // CHECK-NEXT: %v = tile.view %d : memref<24xi8, "ddr"> to memref<2x3x4xi8, "ddr">
  %v = tile.view %d : memref<24xi8, "ddr"> to memref<2x3x4xi8, "ddr">
  // CHECK-NEXT: tile.transpose %a, %b {perm = [0, 2, 1]} : memref<2x3x4xi8, "sram">, memref<2x4x3xi8, "sram">
  tile.transpose %a, %b {perm = [0, 2, 1]} : memref<2x3x4xi8, "sram">, memref<2x4x3xi8, "sram">
  // CHECK-NEXT: tile.add %b, %c, %b {{.*}} : memref<2x4x3xi8, "sram">, memref<1x1x3xi8, "sram">, memref<2x4x3xi8, "sram">
  tile.add %b, %c, %b {lhs_multiplier = 1073741824, lhs_shift = -1, rhs_multiplier = 1073741824, rhs_shift = -1, multiplier = 1073741824, shift = -1} : memref<2x4x3xi8, "sram">, memref<1x1x3xi8, "sram">, memref<2x4x3xi8, "sram">
  // CHECK-NEXT: tile.mul %b, %c, %b {multiplier = 1073741824, rhs_zero_point = 3, shift = 2} : memref<2x4x3xi8, "sram">, memref<1x1x3xi8, "sram">, memref<2x4x3xi8, "sram">
  tile.mul %b, %c, %b {multiplier = 1073741824, shift = 2, rhs_zero_point = 3} : memref<2x4x3xi8, "sram">, memref<1x1x3xi8, "sram">, memref<2x4x3xi8, "sram">
  // CHECK-NEXT: tile.addf %f, %g, %f : memref<2x4x3xf32, "sram">, memref<1x1x3xf32, "sram">, memref<2x4x3xf32, "sram">
  tile.addf %f, %g, %f : memref<2x4x3xf32, "sram">, memref<1x1x3xf32, "sram">, memref<2x4x3xf32, "sram">
  // CHECK-NEXT: tile.mulf %f, %g, %f : memref<2x4x3xf32, "sram">, memref<1x1x3xf32, "sram">, memref<2x4x3xf32, "sram">
  tile.mulf %f, %g, %f : memref<2x4x3xf32, "sram">, memref<1x1x3xf32, "sram">, memref<2x4x3xf32, "sram">
  // CHECK-NEXT: tile.clamp %f, %f {clamp_max = 6.0, clamp_min = 0.0} : memref<2x4x3xf32, "sram">, memref<2x4x3xf32, "sram">
  tile.clamp %f, %f {clamp_min = 0.0 : f32, clamp_max = 6.0 : f32} : memref<2x4x3xf32, "sram">, memref<2x4x3xf32, "sram">
  // CHECK-NEXT: tile.requantize %b, %p, %b {input_zero_point = -3, output_zero_point = 5} : memref<2x4x3xi8, "sram">, memref<3x2xi32, "sram">, memref<2x4x3xi8, "sram">
  tile.requantize %b, %p, %b {input_zero_point = -3, output_zero_point = 5} : memref<2x4x3xi8, "sram">, memref<3x2xi32, "sram">, memref<2x4x3xi8, "sram">
  func.return
}

// Whole-row ops: the integer softmax with its i16 exp table, the layer norm with its
// (weight, bias) pairs, the LRN with its i32 table, and the float edges' casts.
// CHECK-LABEL: func.func @rows
func.func @rows(%x: memref<4x16xi8, "sram">, %m: memref<1x16xi8, "sram">, %table: memref<256xi16, "sram">, %p: memref<16x2xi32, "sram">, %y: memref<4x16xi8, "sram">, %f: memref<4x16xf32, "sram">, %lrn_table: memref<225xi32, "sram">) {
  // CHECK-NEXT: tile.softmax %x, %table, %y {multiplier = 2139095040, output_zero_point = -128, shift = 7} : memref<4x16xi8, "sram">, memref<256xi16, "sram">, memref<4x16xi8, "sram">
  tile.softmax %x, %table, %y {multiplier = 2139095040, shift = 7, output_zero_point = -128} : memref<4x16xi8, "sram">, memref<256xi16, "sram">, memref<4x16xi8, "sram">
  // With a mask (1 leaves an element out), one row broadcast to every row.
  // CHECK-NEXT: tile.softmax %x, %m, %table, %y {multiplier = 2139095040, shift = 7} : memref<4x16xi8, "sram">, memref<1x16xi8, "sram">, memref<256xi16, "sram">, memref<4x16xi8, "sram">
  tile.softmax %x, %m, %table, %y {multiplier = 2139095040, shift = 7} : memref<4x16xi8, "sram">, memref<1x16xi8, "sram">, memref<256xi16, "sram">, memref<4x16xi8, "sram">
  // CHECK-NEXT: tile.layer_norm %x, %p, %y {epsilon_term = 4, input_zero_point = 3, multiplier = 2137224968, output_zero_point = -2, shift = 15} : memref<4x16xi8, "sram">, memref<16x2xi32, "sram">, memref<4x16xi8, "sram">
  tile.layer_norm %x, %p, %y {input_zero_point = 3, epsilon_term = 4, multiplier = 2137224968, shift = 15, output_zero_point = -2} : memref<4x16xi8, "sram">, memref<16x2xi32, "sram">, memref<4x16xi8, "sram">
  // The LRN across the 16 channels of each row, its i32 table of 225 entries.
  // CHECK-NEXT: tile.lrn %x, %lrn_table, %y {input_zero_point = -128, multiplier = 1342172247, output_zero_point = -128, shift = 27, size = 5} : memref<4x16xi8, "sram">, memref<225xi32, "sram">, memref<4x16xi8, "sram">
  tile.lrn %x, %lrn_table, %y {input_zero_point = -128, size = 5, multiplier = 1342172247, shift = 27, output_zero_point = -128} : memref<4x16xi8, "sram">, memref<225xi32, "sram">, memref<4x16xi8, "sram">
  // CHECK-NEXT: tile.quantize %f, %y {scale = 0.0078125, zero_point = -128} : memref<4x16xf32, "sram">, memref<4x16xi8, "sram">
  tile.quantize %f, %y {scale = 0.0078125 : f32, zero_point = -128} : memref<4x16xf32, "sram">, memref<4x16xi8, "sram">
  // CHECK-NEXT: tile.dequantize %y, %f {scale = 0.0078125, zero_point = -128} : memref<4x16xi8, "sram">, memref<4x16xf32, "sram">
  tile.dequantize %y, %f {scale = 0.0078125 : f32, zero_point = -128} : memref<4x16xi8, "sram">, memref<4x16xf32, "sram">
  func.return
}

// 16-bit activations (int16x8): a conv and a matmul of two 16-bit operands into wide
// i64 accumulators, an i64 bias, the wide requantize into an i16 tile and a 16-bit
// rescale to i8, a 16-bit add, clamp, interpolated lookup, softmax and the casts.
// CHECK-LABEL: func.func @sixteen_bit
func.func @sixteen_bit(%x: memref<1x3x3x4xi16, "sram">, %w: memref<8x3x3x4xi8, "sram">, %acc: memref<1x1x1x8xi64, "sram">, %bias: memref<8xi64, "sram">, %p: memref<8x2xi32, "sram">, %y: memref<1x1x1x8xi16, "sram">, %y8: memref<1x1x1x8xi8, "sram">, %a: memref<4x8xi16, "sram">, %macc: memref<4x4xi64, "sram">, %f: memref<4x8xf32, "sram">, %table16: memref<513xi16, "sram">, %p16: memref<8x2xi64, "sram">) {
  // CHECK-NEXT: tile.conv %x, %w, %acc : memref<1x3x3x4xi16, "sram">, memref<8x3x3x4xi8, "sram">, memref<1x1x1x8xi64, "sram">
  tile.conv %x, %w, %acc : memref<1x3x3x4xi16, "sram">, memref<8x3x3x4xi8, "sram">, memref<1x1x1x8xi64, "sram">
  // CHECK-NEXT: tile.bias_add %acc, %bias : memref<1x1x1x8xi64, "sram">, memref<8xi64, "sram">
  tile.bias_add %acc, %bias : memref<1x1x1x8xi64, "sram">, memref<8xi64, "sram">
  // CHECK-NEXT: tile.requantize %acc, %p, %y {clamp_min = 0} : memref<1x1x1x8xi64, "sram">, memref<8x2xi32, "sram">, memref<1x1x1x8xi16, "sram">
  tile.requantize %acc, %p, %y {clamp_min = 0} : memref<1x1x1x8xi64, "sram">, memref<8x2xi32, "sram">, memref<1x1x1x8xi16, "sram">
  // CHECK-NEXT: tile.requantize %y, %p, %y8 {output_zero_point = -3} : memref<1x1x1x8xi16, "sram">, memref<8x2xi32, "sram">, memref<1x1x1x8xi8, "sram">
  tile.requantize %y, %p, %y8 {output_zero_point = -3} : memref<1x1x1x8xi16, "sram">, memref<8x2xi32, "sram">, memref<1x1x1x8xi8, "sram">
  // CHECK-NEXT: tile.matmul %a, %a, %macc {trans_b = true} : memref<4x8xi16, "sram">, memref<4x8xi16, "sram">, memref<4x4xi64, "sram">
  tile.matmul %a, %a, %macc {trans_b = true} : memref<4x8xi16, "sram">, memref<4x8xi16, "sram">, memref<4x4xi64, "sram">
  // CHECK-NEXT: tile.add %a, %a, %a {left_shift = 15, lhs_multiplier = 1073741824, lhs_shift = -1, multiplier = 1073741824, rhs_multiplier = 1073741824, rhs_shift = -1, shift = 15} : memref<4x8xi16, "sram">, memref<4x8xi16, "sram">, memref<4x8xi16, "sram">
  tile.add %a, %a, %a {left_shift = 15, lhs_multiplier = 1073741824, lhs_shift = -1, rhs_multiplier = 1073741824, rhs_shift = -1, multiplier = 1073741824, shift = 15} : memref<4x8xi16, "sram">, memref<4x8xi16, "sram">, memref<4x8xi16, "sram">
  // CHECK-NEXT: tile.clamp %a, %a {clamp_min = 0} : memref<4x8xi16, "sram">, memref<4x8xi16, "sram">
  tile.clamp %a, %a {clamp_min = 0} : memref<4x8xi16, "sram">, memref<4x8xi16, "sram">
  // CHECK-NEXT: tile.lut %a, %table16, %a : memref<4x8xi16, "sram">, memref<513xi16, "sram">, memref<4x8xi16, "sram">
  tile.lut %a, %table16, %a : memref<4x8xi16, "sram">, memref<513xi16, "sram">, memref<4x8xi16, "sram">
  // CHECK-NEXT: tile.softmax %a, %table16, %a {multiplier = 2147418114, shift = 0} : memref<4x8xi16, "sram">, memref<513xi16, "sram">, memref<4x8xi16, "sram">
  tile.softmax %a, %table16, %a {multiplier = 2147418114, shift = 0} : memref<4x8xi16, "sram">, memref<513xi16, "sram">, memref<4x8xi16, "sram">
  // The 16-bit layer norm's (weight, bias) pairs are i64.
  // CHECK-NEXT: tile.layer_norm %a, %p16, %a {epsilon_term = 10240, multiplier = 2097152000, shift = 24} : memref<4x8xi16, "sram">, memref<8x2xi64, "sram">, memref<4x8xi16, "sram">
  tile.layer_norm %a, %p16, %a {epsilon_term = 10240, multiplier = 2097152000, shift = 24} : memref<4x8xi16, "sram">, memref<8x2xi64, "sram">, memref<4x8xi16, "sram">
  // CHECK-NEXT: tile.quantize %f, %a {scale = 3.0517578e-05} : memref<4x8xf32, "sram">, memref<4x8xi16, "sram">
  tile.quantize %f, %a {scale = 3.0517578125e-05 : f32} : memref<4x8xf32, "sram">, memref<4x8xi16, "sram">
  // CHECK-NEXT: tile.dequantize %a, %f {scale = 3.0517578e-05} : memref<4x8xi16, "sram">, memref<4x8xf32, "sram">
  tile.dequantize %a, %f {scale = 3.0517578125e-05 : f32} : memref<4x8xi16, "sram">, memref<4x8xf32, "sram">
  func.return
}

// A linear resize of whole planes (rows and columns of NHWC tiles).
// CHECK-LABEL: func.func @resize
func.func @resize(%x: memref<1x4x4x8xi8, "sram">, %y: memref<1x8x8x8xi8, "sram">, %x16: memref<1x4x4x8xi16, "sram">, %y16: memref<1x8x4x8xi16, "sram">, %f: memref<1x4x4x8xf32, "sram">, %g: memref<1x6x2x8xf32, "sram">) {
  // CHECK-NEXT: tile.resize %x, %y {axes = [1, 2], scales = [2.0, 2.0]} : memref<1x4x4x8xi8, "sram">, memref<1x8x8x8xi8, "sram">
  tile.resize %x, %y {axes = [1, 2], scales = array<f32: 2.0, 2.0>} : memref<1x4x4x8xi8, "sram">, memref<1x8x8x8xi8, "sram">
  // CHECK-NEXT: tile.resize %x16, %y16 {axes = [1], coordinate_transformation_mode = "align_corners", scales = [2.0]} : memref<1x4x4x8xi16, "sram">, memref<1x8x4x8xi16, "sram">
  tile.resize %x16, %y16 {axes = [1], scales = array<f32: 2.0>, coordinate_transformation_mode = "align_corners"} : memref<1x4x4x8xi16, "sram">, memref<1x8x4x8xi16, "sram">
  // A nearest resize gathers, of any element type.
  // CHECK-NEXT: tile.resize %f, %g {axes = [1, 2], coordinate_transformation_mode = "asymmetric", mode = "nearest", nearest_mode = "floor", scales = [1.5, 0.5]} : memref<1x4x4x8xf32, "sram">, memref<1x6x2x8xf32, "sram">
  tile.resize %f, %g {axes = [1, 2], scales = array<f32: 1.5, 0.5>, mode = "nearest", nearest_mode = "floor", coordinate_transformation_mode = "asymmetric"} : memref<1x4x4x8xf32, "sram">, memref<1x6x2x8xf32, "sram">
  func.return
}

// A window of a resize too large for SRAM: the output tile's origin [%oy, %ox] in
// the whole output, then the input window's [%iy, %ix] in the whole input (here one
// row before it: padding, never read).
// CHECK-LABEL: func.func @resize_window
func.func @resize_window(%x: memref<1x6x66x8xi8, "sram">, %y: memref<1x8x128x8xi8, "sram">, %oy: index, %ox: index, %iy: index, %ix: index) {
  // CHECK-NEXT: tile.resize %x, %y[%oy, %ox, %iy, %ix] {axes = [1, 2], input_lengths = [64, 64], output_lengths = [128, 128], scales = [2.0, 2.0]} : memref<1x6x66x8xi8, "sram">, memref<1x8x128x8xi8, "sram">
  tile.resize %x, %y[%oy, %ox, %iy, %ix] {axes = [1, 2], scales = array<f32: 2.0, 2.0>, input_lengths = [64, 64], output_lengths = [128, 128]} : memref<1x6x66x8xi8, "sram">, memref<1x8x128x8xi8, "sram">
  func.return
}

// A part of a layer on core 1 (a layer split across cores): its buffers and commands
// are that core's.
// CHECK-LABEL: func.func @on_core
func.func @on_core(%x: memref<1x4x8x16xi8, "ddr">) {
  %c0 = arith.constant 0 : index
  // CHECK:      tile.on_core 1 {
  // CHECK-NEXT:   %b = tile.alloc {offset = 0} : memref<1x2x8x16xi8, "sram">
  // CHECK-NEXT:   tile.copy %x[%c0, %c2, %c0, %c0] to %b[%c0, %c0, %c0, %c0] sizes [1, 2, 8, 16] : memref<1x4x8x16xi8, "ddr"> to memref<1x2x8x16xi8, "sram">
  // CHECK-NEXT: }
  %c2 = arith.constant 2 : index
  tile.on_core 1 {
    %b = tile.alloc {offset = 0} : memref<1x2x8x16xi8, "sram">
    tile.copy %x[%c0, %c2, %c0, %c0] to %b[%c0, %c0, %c0, %c0] sizes [1, 2, 8, 16] : memref<1x4x8x16xi8, "ddr"> to memref<1x2x8x16xi8, "sram">
  }
  func.return
}
