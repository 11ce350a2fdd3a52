// RUN: irc-opt %s --split-input-file --verify-diagnostics

// One case per rule of the `tile` verifiers (irc/dialects/tile.py).

// ---- buffers ---------------------------------------------------------------------------

func.func @alloc_space() {
  // expected-error @+1 {{result #0 must be in a memory space: "sram" or a system memory's name such as "ddr", got "L2 cache"}}
  %a = tile.alloc : memref<4xi8, "L2 cache">
  func.return
}

// -----

func.func @alloc_no_space() {
  // expected-error @+1 {{result #0 must be in a memory space: "sram" or a system memory's name such as "ddr", got none}}
  %a = tile.alloc : memref<4xi8>
  func.return
}

// -----

func.func @alloc_dynamic() {
  // expected-error @+1 {{result #0 must have a static shape, got memref<?xi8, "sram">}}
  %a = tile.alloc : memref<?xi8, "sram">
  func.return
}

// -----

func.func @alloc_element() {
  // expected-error @+1 {{result #0 must hold i8, ui8, i16, i32, i64 or f32 elements, got f16}}
  %a = tile.alloc : memref<4xf16, "sram">
  func.return
}

// -----

func.func @alloc_offset() {
  // expected-error @+1 {{'offset' must not be negative, got -8}}
  %a = tile.alloc {offset = -8} : memref<4xi8, "sram">
  func.return
}

// -----

func.func @to_buffer_storage(%t: tensor<4x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{the tensor's elements are stored as i8, the buffer holds ui8}}
  %b = tile.to_buffer %t : tensor<4x!quant.uniform<i8:f32, 0.1>> to memref<4xui8, "ddr">
  func.return
}

// -----

func.func @to_buffer_sram(%t: tensor<4xi8>) {
  // expected-error @+1 {{the buffer must be in a system memory (such as "ddr"), got memref<4xi8, "sram">}}
  %b = tile.to_buffer %t : tensor<4xi8> to memref<4xi8, "sram">
  func.return
}

// -----

func.func @to_tensor_shape(%b: memref<4xi8, "ddr">) {
  // expected-error @+1 {{tensor<5xi8> and memref<4xi8, "ddr"> differ in shape}}
  %t = tile.to_tensor %b : memref<4xi8, "ddr"> to tensor<5xi8>
  func.return
}

// -----

func.func @copy_rank(%a: memref<4x4xi8, "ddr">, %b: memref<16xi8, "sram">) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{differ in rank}}
  tile.copy %a[%c0, %c0] to %b[%c0] sizes [4, 4] : memref<4x4xi8, "ddr"> to memref<16xi8, "sram">
  func.return
}

// -----

func.func @copy_element(%a: memref<4xi8, "ddr">, %b: memref<4xi32, "sram">) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{differ in element type}}
  tile.copy %a[%c0] to %b[%c0] sizes [4] : memref<4xi8, "ddr"> to memref<4xi32, "sram">
  func.return
}

// -----

func.func @copy_offsets(%a: memref<4x4xi8, "ddr">, %b: memref<4x4xi8, "sram">) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{the source needs 2 offsets, got 1}}
  tile.copy %a[%c0] to %b[%c0, %c0] sizes [4, 4] : memref<4x4xi8, "ddr"> to memref<4x4xi8, "sram">
  func.return
}

// -----

func.func @copy_sizes(%a: memref<4x4xi8, "ddr">, %b: memref<4x4xi8, "sram">) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'sizes' must be 2 positive integers, got [4, 0]}}
  tile.copy %a[%c0, %c0] to %b[%c0, %c0] sizes [4, 0] : memref<4x4xi8, "ddr"> to memref<4x4xi8, "sram">
  func.return
}

// -----

func.func @copy_too_big(%a: memref<8x8xi8, "ddr">, %b: memref<4x4xi8, "sram">) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{a box of sizes [4, 5] does not fit in the destination}}
  tile.copy %a[%c0, %c0] to %b[%c0, %c0] sizes [4, 5] : memref<8x8xi8, "ddr"> to memref<4x4xi8, "sram">
  func.return
}

// -----

func.func @copy_rolling_ddr(%a: memref<4x8xi8, "ddr">, %b: memref<4x8xi8, "sram">) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{a rolling source is an SRAM buffer, got memref<4x8xi8, "ddr">}}
  tile.copy %a[%c0, %c0] to %b[%c0, %c0] sizes [4, 8] {source_rolling = [16, 8]} : memref<4x8xi8, "ddr"> to memref<4x8xi8, "sram">
  func.return
}

// -----

func.func @copy_rolling_axes(%a: memref<4x8xi8, "sram">, %b: memref<4x8xi8, "ddr">) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'source_rolling' [16, 16] must equal the buffer's shape [4, 8] but along one axis, where it is longer}}
  tile.copy %a[%c0, %c0] to %b[%c0, %c0] sizes [4, 8] {source_rolling = [16, 16]} : memref<4x8xi8, "sram"> to memref<4x8xi8, "ddr">
  func.return
}

// -----

func.func @copy_rolling_both(%a: memref<4x8xi8, "sram">, %b: memref<4x8xi8, "sram">) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{a copy reads or writes one rolling buffer, not two}}
  tile.copy %a[%c0, %c0] to %b[%c0, %c0] sizes [4, 8] {source_rolling = [16, 8], dest_rolling = [16, 8]} : memref<4x8xi8, "sram"> to memref<4x8xi8, "sram">
  func.return
}

// -----

func.func @copy_pad(%a: memref<4xi8, "ddr">, %b: memref<4xi8, "sram">) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'pad' 200 is outside the range [-128, 127] of i8}}
  tile.copy %a[%c0] to %b[%c0] sizes [4] {pad = 200} : memref<4xi8, "ddr"> to memref<4xi8, "sram">
  func.return
}

// -----

func.func @copy_broadcast_into_ddr(%a: memref<4xi8, "ddr">, %b: memref<4xi8, "ddr">) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'broadcast' copies into an SRAM buffer (not a rolling one) of 2 or more cores, got 2 into memref<4xi8, "ddr">}}
  tile.copy %a[%c0] to %b[%c0] sizes [4] {broadcast = 2} : memref<4xi8, "ddr"> to memref<4xi8, "ddr">
  func.return
}

// -----

func.func @copy_broadcast_to_one(%a: memref<4xi8, "ddr">, %b: memref<4xi8, "sram">) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'broadcast' copies into an SRAM buffer (not a rolling one) of 2 or more cores, got 1 into memref<4xi8, "sram">}}
  tile.copy %a[%c0] to %b[%c0] sizes [4] {broadcast = 1} : memref<4xi8, "ddr"> to memref<4xi8, "sram">
  func.return
}

// -----

func.func @copy_upsample(%a: memref<4x4xi8, "ddr">, %b: memref<8x8xi8, "sram">) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'upsample' must be 2 positive factors, got [2, 0]}}
  tile.copy %a[%c0, %c0] to %b[%c0, %c0] sizes [7, 7] {upsample = [2, 0]} : memref<4x4xi8, "ddr"> to memref<8x8xi8, "sram">
  func.return
}

// -----

func.func @fill_value(%a: memref<4xi8, "sram">) {
  // expected-error @+1 {{'tile.fill' requires property 'value'}}
  tile.fill %a : memref<4xi8, "sram">
  func.return
}

// -----

func.func @fill_float(%a: memref<4xi32, "sram">) {
  // expected-error @+1 {{'value' of the buffer is a float, but the buffer holds i32}}
  tile.fill %a {value = 0.5} : memref<4xi32, "sram">
  func.return
}

// ---- compute -----------------------------------------------------------------------------

// -----

func.func @conv_types(%x: memref<1x3x3x4xi8, "sram">, %w: memref<2x3x3x4xi8, "sram">, %acc: memref<1x1x1x2xf32, "sram">) {
  // expected-error @+1 {{tile.conv of 8-bit operands accumulates in i32, got f32}}
  tile.conv %x, %w, %acc : memref<1x3x3x4xi8, "sram">, memref<2x3x3x4xi8, "sram">, memref<1x1x1x2xf32, "sram">
  func.return
}

// -----

func.func @conv_sixteen_bit_narrow_acc(%x: memref<1x3x3x4xi16, "sram">, %w: memref<2x3x3x4xi8, "sram">, %acc: memref<1x1x1x2xi32, "sram">) {
  // expected-error @+1 {{tile.conv of 16-bit operands accumulates in i64, got i32}}
  tile.conv %x, %w, %acc : memref<1x3x3x4xi16, "sram">, memref<2x3x3x4xi8, "sram">, memref<1x1x1x2xi32, "sram">
  func.return
}

// -----

func.func @conv_eight_bit_wide_acc(%x: memref<1x3x3x4xi8, "sram">, %w: memref<2x3x3x4xi8, "sram">, %acc: memref<1x1x1x2xi64, "sram">) {
  // expected-error @+1 {{tile.conv of 8-bit operands accumulates in i32, got i64}}
  tile.conv %x, %w, %acc : memref<1x3x3x4xi8, "sram">, memref<2x3x3x4xi8, "sram">, memref<1x1x1x2xi64, "sram">
  func.return
}

// -----

func.func @conv_sixteen_bit_weights(%x: memref<1x3x3x4xi16, "sram">, %w: memref<2x3x3x4xi16, "sram">, %acc: memref<1x1x1x2xi64, "sram">) {
  // expected-error @+1 {{tile.conv takes i8, ui8 or i16 inputs with i8 weights}}
  tile.conv %x, %w, %acc : memref<1x3x3x4xi16, "sram">, memref<2x3x3x4xi16, "sram">, memref<1x1x1x2xi64, "sram">
  func.return
}

// -----

func.func @conv_window(%x: memref<1x4x6x4xi8, "sram">, %w: memref<2x3x3x4xi8, "sram">, %acc: memref<1x4x4x2xi32, "sram">) {
  // expected-error @+1 {{4 output rows need (out - 1) * stride + (kernel - 1) * dilation + 1 = 6 input rows, but the input box has 4}}
  tile.conv %x, %w, %acc : memref<1x4x6x4xi8, "sram">, memref<2x3x3x4xi8, "sram">, memref<1x4x4x2xi32, "sram">
  func.return
}

// -----

func.func @conv_group(%x: memref<1x3x3x4xi8, "sram">, %w: memref<4x3x3x2xi8, "sram">, %acc: memref<1x1x1x4xi32, "sram">) {
  // expected-error @+1 {{the weight has 2 channels per group, expected 4 / 4 = 1}}
  tile.conv %x, %w, %acc {group = 4} : memref<1x3x3x4xi8, "sram">, memref<4x3x3x2xi8, "sram">, memref<1x1x1x4xi32, "sram">
  func.return
}

// -----

func.func @conv_accumulator(%x: memref<1x3x3x4xi8, "sram">, %w: memref<2x3x3x4xi8, "sram">, %acc: memref<1x1x1x3xi32, "sram">) {
  // expected-error @+1 {{must have batch 1 and 2 channels}}
  tile.conv %x, %w, %acc : memref<1x3x3x4xi8, "sram">, memref<2x3x3x4xi8, "sram">, memref<1x1x1x3xi32, "sram">
  func.return
}

// -----

func.func @conv_zero_point(%x: memref<1x3x3x4xui8, "sram">, %w: memref<2x3x3x4xi8, "sram">, %acc: memref<1x1x1x2xi32, "sram">) {
  // expected-error @+1 {{'input_zero_point' -1 is outside the range [0, 255] of ui8}}
  tile.conv %x, %w, %acc {input_zero_point = -1} : memref<1x3x3x4xui8, "sram">, memref<2x3x3x4xi8, "sram">, memref<1x1x1x2xi32, "sram">
  func.return
}

// -----

func.func @matmul_depth(%a: memref<4x8xi8, "sram">, %b: memref<6x3xi8, "sram">, %acc: memref<4x3xi32, "sram">) {
  // expected-error @+1 {{a has 8 columns but b has 6 rows (after trans_b)}}
  tile.matmul %a, %b, %acc : memref<4x8xi8, "sram">, memref<6x3xi8, "sram">, memref<4x3xi32, "sram">
  func.return
}

// -----

func.func @matmul_acc(%a: memref<4x8xi8, "sram">, %b: memref<3x8xi8, "sram">, %acc: memref<4x8xi32, "sram">) {
  // expected-error @+1 {{the accumulator must be 4x3}}
  tile.matmul %a, %b, %acc {trans_b = true} : memref<4x8xi8, "sram">, memref<3x8xi8, "sram">, memref<4x8xi32, "sram">
  func.return
}

// -----

func.func @bias_shape(%acc: memref<2x8xi32, "sram">, %bias: memref<2xi32, "sram">) {
  // expected-error @+1 {{the bias must be [8]}}
  tile.bias_add %acc, %bias : memref<2x8xi32, "sram">, memref<2xi32, "sram">
  func.return
}

// -----

func.func @bias_types(%acc: memref<2x8xi32, "sram">, %bias: memref<8xf32, "sram">) {
  // expected-error @+1 {{the accumulator and the bias must both be i32, both i64 or both f32, got i32 and f32}}
  tile.bias_add %acc, %bias : memref<2x8xi32, "sram">, memref<8xf32, "sram">
  func.return
}

// -----

func.func @requantize_params(%acc: memref<2x8xi32, "sram">, %p: memref<4x2xi32, "sram">, %out: memref<2x8xi8, "sram">) {
  // expected-error @+1 {{the parameters must be [8, 2] or [1, 2] (multiplier, shift)}}
  tile.requantize %acc, %p, %out : memref<2x8xi32, "sram">, memref<4x2xi32, "sram">, memref<2x8xi8, "sram">
  func.return
}

// -----

func.func @requantize_output(%acc: memref<2x8xi32, "sram">, %p: memref<1x2xi32, "sram">, %out: memref<2x8xi32, "sram">) {
  // expected-error @+1 {{the output must be i8, ui8 or i16, got i32}}
  tile.requantize %acc, %p, %out : memref<2x8xi32, "sram">, memref<1x2xi32, "sram">, memref<2x8xi32, "sram">
  func.return
}

// -----

func.func @requantize_wide_bias(%acc: memref<2x8xi64, "sram">, %bias: memref<8xi32, "sram">) {
  // expected-error @+1 {{the accumulator and the bias must both be i32, both i64 or both f32, got i64 and i32}}
  tile.bias_add %acc, %bias : memref<2x8xi64, "sram">, memref<8xi32, "sram">
  func.return
}

// -----

func.func @requantize_clamp(%acc: memref<2x8xi32, "sram">, %p: memref<1x2xi32, "sram">, %out: memref<2x8xi8, "sram">) {
  // expected-error @+1 {{clamp bounds [10, 5] are not an ordered part of the range [-128, 127] of i8}}
  tile.requantize %acc, %p, %out {clamp_min = 10, clamp_max = 5} : memref<2x8xi32, "sram">, memref<1x2xi32, "sram">, memref<2x8xi8, "sram">
  func.return
}

// -----

func.func @pool_kind(%x: memref<1x3x3x4xi8, "sram">, %y: memref<1x1x1x4xi8, "sram">) {
  // expected-error @+1 {{'kind' must be "max" or "average", got "min"}}
  tile.pool %x, %y {kind = "min", kernel_shape = [3, 3]} : memref<1x3x3x4xi8, "sram">, memref<1x1x1x4xi8, "sram">
  func.return
}

// -----

func.func @pool_origin(%x: memref<1x3x3x4xi8, "sram">, %y: memref<1x1x1x4xi8, "sram">) {
  // expected-error @+1 {{average pooling needs the tile's output origin [%oy, %ox]}}
  tile.pool %x, %y {kind = "average", kernel_shape = [3, 3], input_h = 3, input_w = 3} : memref<1x3x3x4xi8, "sram">, memref<1x1x1x4xi8, "sram">
  func.return
}

// -----

func.func @pool_extent(%x: memref<1x3x3x4xi8, "sram">, %y: memref<1x1x1x4xi8, "sram">) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{average pooling needs a positive 'input_h' (the unpadded input)}}
  tile.pool %x, %y[%c0, %c0] {kind = "average", kernel_shape = [3, 3]} : memref<1x3x3x4xi8, "sram">, memref<1x1x1x4xi8, "sram">
  func.return
}

// -----

func.func @pool_window(%x: memref<1x3x3x4xi8, "sram">, %y: memref<1x2x1x4xi8, "sram">) {
  // expected-error @+1 {{2 output rows need (out - 1) * stride + (kernel - 1) * dilation + 1 = 4 input rows, but the input box has 3}}
  tile.pool %x, %y {kind = "max", kernel_shape = [3, 3]} : memref<1x3x3x4xi8, "sram">, memref<1x2x1x4xi8, "sram">
  func.return
}

// -----

func.func @pool_types(%x: memref<1x3x3x4xi8, "sram">, %y: memref<1x1x1x4xui8, "sram">) {
  // expected-error @+1 {{input and output must both be i8, ui8, i16 or f32, got i8 and ui8}}
  tile.pool %x, %y {kind = "max", kernel_shape = [3, 3]} : memref<1x3x3x4xi8, "sram">, memref<1x1x1x4xui8, "sram">
  func.return
}

// -----

func.func @pool_multiplier(%x: memref<1x3x3x4xi8, "sram">, %y: memref<1x1x1x4xi8, "sram">) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'multiplier':}}
  tile.pool %x, %y[%c0, %c0] {kind = "average", kernel_shape = [3, 3], input_h = 3, input_w = 3, multiplier = 5} : memref<1x3x3x4xi8, "sram">, memref<1x1x1x4xi8, "sram">
  func.return
}

// -----

func.func @add_shapes(%a: memref<8xi8, "sram">, %b: memref<4xi8, "sram">) {
  // expected-error @+1 {{operand #1 memref<4xi8, "sram"> differs in shape from the output memref<8xi8, "sram"> (a size of 1 broadcasts)}}
  tile.add %a, %b, %a {lhs_multiplier = 1073741824, lhs_shift = -1, rhs_multiplier = 1073741824, rhs_shift = -1, multiplier = 1073741824, shift = -1} : memref<8xi8, "sram">, memref<4xi8, "sram">, memref<8xi8, "sram">
  func.return
}

// -----

func.func @add_multiplier(%a: memref<8xi8, "sram">) {
  // expected-error @+1 {{'rhs_multiplier':}}
  tile.add %a, %a, %a {lhs_multiplier = 1073741824, lhs_shift = -1, rhs_multiplier = 3, rhs_shift = -1, multiplier = 1073741824, shift = -1} : memref<8xi8, "sram">, memref<8xi8, "sram">, memref<8xi8, "sram">
  func.return
}

// -----

func.func @clamp_types(%a: memref<8xi8, "sram">, %b: memref<8xui8, "sram">) {
  // expected-error @+1 {{input and output must have the same element type}}
  tile.clamp %a, %b : memref<8xi8, "sram">, memref<8xui8, "sram">
  func.return
}

// -----

func.func @lut_table(%a: memref<8xi8, "sram">, %t: memref<128xi8, "sram">) {
  // expected-error @+1 {{the table of i8 values must have 256 entries, got memref<128xi8, "sram">}}
  tile.lut %a, %t, %a : memref<8xi8, "sram">, memref<128xi8, "sram">, memref<8xi8, "sram">
  func.return
}

// -----

func.func @lut_16_bit_table(%a: memref<8xi16, "sram">, %t: memref<256xi16, "sram">) {
  // expected-error @+1 {{the table of i16 values must have 513 entries, got memref<256xi16, "sram">}}
  tile.lut %a, %t, %a : memref<8xi16, "sram">, memref<256xi16, "sram">, memref<8xi16, "sram">
  func.return
}

// -----

func.func @lut_16_bit_output(%a: memref<8xi16, "sram">, %t: memref<513xi16, "sram">, %o: memref<8xi8, "sram">) {
  // expected-error @+1 {{the table and the output must hold the same 16-bit type, got i16 and i8}}
  tile.lut %a, %t, %o : memref<8xi16, "sram">, memref<513xi16, "sram">, memref<8xi8, "sram">
  func.return
}

// -----

func.func @lut_output(%a: memref<8xi8, "sram">, %t: memref<256xui8, "sram">) {
  // expected-error @+1 {{the table and the output must hold the same 8-bit type, got ui8 and i8}}
  tile.lut %a, %t, %a : memref<8xi8, "sram">, memref<256xui8, "sram">, memref<8xi8, "sram">
  func.return
}

// -----

func.func @transpose_perm(%a: memref<2x3xi8, "sram">, %b: memref<3x2xi8, "sram">) {
  // expected-error @+1 {{'perm' [0, 0] is not a permutation of the 2 axes}}
  tile.transpose %a, %b {perm = [0, 0]} : memref<2x3xi8, "sram">, memref<3x2xi8, "sram">
  func.return
}

// -----

func.func @transpose_shape(%a: memref<2x3xi8, "sram">, %b: memref<2x3xi8, "sram">) {
  // expected-error @+1 {{the output must be [3, 2] (the input's axes in 'perm' order)}}
  tile.transpose %a, %b {perm = [1, 0]} : memref<2x3xi8, "sram">, memref<2x3xi8, "sram">
  func.return
}

// -----

func.func @view_size(%a: memref<2x3xi8, "ddr">) {
  // expected-error @+1 {{differ in their number of elements}}
  %v = tile.view %a : memref<2x3xi8, "ddr"> to memref<4xi8, "ddr">
  func.return
}

// -----

func.func @clamp_float_order(%f: memref<4xf32, "sram">) {
  // expected-error @+1 {{clamp_min 6.0 is above clamp_max 0.0}}
  tile.clamp %f, %f {clamp_min = 6.0 : f32, clamp_max = 0.0 : f32} : memref<4xf32, "sram">, memref<4xf32, "sram">
  func.return
}

// -----

func.func @mul_multiplier(%a: memref<8xi8, "sram">) {
  // expected-error @+1 {{'multiplier':}}
  tile.mul %a, %a, %a {multiplier = 3, shift = 0} : memref<8xi8, "sram">, memref<8xi8, "sram">, memref<8xi8, "sram">
  func.return
}

// -----

func.func @addf_integers(%a: memref<8xi8, "sram">) {
  // expected-error @+1 {{operand #0 must hold f32, got i8}}
  tile.addf %a, %a, %a : memref<8xi8, "sram">, memref<8xi8, "sram">, memref<8xi8, "sram">
  func.return
}

// -----

func.func @mulf_shapes(%a: memref<8xf32, "sram">, %b: memref<2xf32, "sram">) {
  // expected-error @+1 {{operand #1 memref<2xf32, "sram"> differs in shape from the output memref<8xf32, "sram"> (a size of 1 broadcasts)}}
  tile.mulf %a, %b, %a : memref<8xf32, "sram">, memref<2xf32, "sram">, memref<8xf32, "sram">
  func.return
}

// -----

func.func @requantize_input_zero_point(%a: memref<8xi8, "sram">, %p: memref<1x2xi32, "sram">) {
  // expected-error @+1 {{'input_zero_point' 300 is outside the range [-128, 127] of i8}}
  tile.requantize %a, %p, %a {input_zero_point = 300} : memref<8xi8, "sram">, memref<1x2xi32, "sram">, memref<8xi8, "sram">
  func.return
}

// -----

func.func @alloc_alternate() {
  // expected-error @+1 {{a buffer with an 'alternate' copy needs its 'offset'}}
  %b = tile.alloc {alternate = 64} : memref<4xi8, "sram">
  func.return
}

// -----

func.func @softmax_table(%x: memref<4x16xi8, "sram">, %t: memref<256xi8, "sram">) {
  // expected-error @+1 {{the table of i8 values must be 256 i16 entries, got memref<256xi8, "sram">}}
  tile.softmax %x, %t, %x {multiplier = 2139095040, shift = 7} : memref<4x16xi8, "sram">, memref<256xi8, "sram">, memref<4x16xi8, "sram">
  func.return
}

// -----

func.func @softmax_shapes(%x: memref<4x16xi8, "sram">, %t: memref<256xi16, "sram">, %y: memref<4x8xi8, "sram">) {
  // expected-error @+1 {{the output memref<4x8xi8, "sram"> differs in shape from memref<4x16xi8, "sram">}}
  tile.softmax %x, %t, %y {multiplier = 2139095040, shift = 7} : memref<4x16xi8, "sram">, memref<256xi16, "sram">, memref<4x8xi8, "sram">
  func.return
}

// -----

func.func @softmax_mask(%x: memref<4x16xi8, "sram">, %m: memref<2x16xi8, "sram">, %t: memref<256xi16, "sram">) {
  // expected-error @+1 {{the mask memref<2x16xi8, "sram"> must be i8 that broadcasts to memref<4x16xi8, "sram">}}
  tile.softmax %x, %m, %t, %x {multiplier = 2139095040, shift = 7} : memref<4x16xi8, "sram">, memref<2x16xi8, "sram">, memref<256xi16, "sram">, memref<4x16xi8, "sram">
  func.return
}

// -----

func.func @layer_norm_params(%x: memref<4x16xi8, "sram">, %p: memref<8x2xi32, "sram">) {
  // expected-error @+1 {{the parameters of i8 values must be [16, 2] i32 (weight, bias), got memref<8x2xi32, "sram">}}
  tile.layer_norm %x, %p, %x {multiplier = 2137224968, shift = 15} : memref<4x16xi8, "sram">, memref<8x2xi32, "sram">, memref<4x16xi8, "sram">
  func.return
}

// -----

func.func @layer_norm_16_params(%x: memref<4x16xi16, "sram">, %p: memref<16x2xi32, "sram">) {
  // expected-error @+1 {{the parameters of i16 values must be [16, 2] i64 (weight, bias), got memref<16x2xi32, "sram">}}
  tile.layer_norm %x, %p, %x {multiplier = 2137224968, shift = 15} : memref<4x16xi16, "sram">, memref<16x2xi32, "sram">, memref<4x16xi16, "sram">
  func.return
}

// -----

func.func @layer_norm_16_zero_point(%x: memref<4x16xi16, "sram">, %p: memref<16x2xi64, "sram">) {
  // expected-error @+1 {{the input of an i16 layer norm is symmetric: its zero point must be 0}}
  tile.layer_norm %x, %p, %x {input_zero_point = 4, multiplier = 2137224968, shift = 15} : memref<4x16xi16, "sram">, memref<16x2xi64, "sram">, memref<4x16xi16, "sram">
  func.return
}

// -----

func.func @layer_norm_multiplier(%x: memref<4x16xi8, "sram">, %p: memref<16x2xi32, "sram">) {
  // expected-error @+1 {{'multiplier': }}
  tile.layer_norm %x, %p, %x {multiplier = 5, shift = 15} : memref<4x16xi8, "sram">, memref<16x2xi32, "sram">, memref<4x16xi8, "sram">
  func.return
}

// -----

func.func @resize_other_axis(%x: memref<1x4x4x8xi8, "sram">, %y: memref<1x8x8x4xi8, "sram">) {
  // expected-error @+1 {{axis 3 is not resized but the output memref<1x8x8x4xi8, "sram"> differs there from the input memref<1x4x4x8xi8, "sram">}}
  tile.resize %x, %y {axes = [1, 2], scales = array<f32: 2.0, 2.0>} : memref<1x4x4x8xi8, "sram">, memref<1x8x8x4xi8, "sram">
  func.return
}

// -----

func.func @resize_scales(%x: memref<1x4x4x8xi8, "sram">, %y: memref<1x8x8x8xi8, "sram">) {
  // expected-error @+1 {{'scales' needs one positive scale per axis, got [2.0]}}
  tile.resize %x, %y {axes = [1, 2], scales = array<f32: 2.0>} : memref<1x4x4x8xi8, "sram">, memref<1x8x8x8xi8, "sram">
  func.return
}

// -----

func.func @resize_types(%x: memref<1x4x4x8xi8, "sram">, %y: memref<1x8x8x8xi16, "sram">) {
  // expected-error @+1 {{input and output must hold the same i8, ui8 or i16 type, got i8 and i16}}
  tile.resize %x, %y {axes = [1, 2], scales = array<f32: 2.0, 2.0>} : memref<1x4x4x8xi8, "sram">, memref<1x8x8x8xi16, "sram">
  func.return
}

// -----

func.func @resize_linear_floats(%x: memref<1x4x4x8xf32, "sram">, %y: memref<1x8x8x8xf32, "sram">) {
  // expected-error @+1 {{input and output must hold the same i8, ui8 or i16 type, got f32 and f32}}
  tile.resize %x, %y {axes = [1, 2], scales = array<f32: 2.0, 2.0>} : memref<1x4x4x8xf32, "sram">, memref<1x8x8x8xf32, "sram">
  func.return
}

// -----

func.func @resize_nearest_mode(%x: memref<1x4x4x8xi8, "sram">, %y: memref<1x8x8x8xi8, "sram">) {
  // expected-error @+1 {{'nearest_mode' must be one of}}
  tile.resize %x, %y {axes = [1, 2], scales = array<f32: 2.0, 2.0>, mode = "nearest", nearest_mode = "closest"} : memref<1x4x4x8xi8, "sram">, memref<1x8x8x8xi8, "sram">
  func.return
}

// -----

func.func @resize_window_origin(%x: memref<1x4x4x8xi8, "sram">, %y: memref<1x8x8x8xi8, "sram">, %o: index) {
  // expected-error @+1 {{a window of 2 resized axes needs 'input_lengths', 'output_lengths' and 4 origin indices (the output tile's, then the input window's), got 2}}
  tile.resize %x, %y[%o, %o] {axes = [1, 2], scales = array<f32: 2.0, 2.0>, input_lengths = [16, 16], output_lengths = [32, 32]} : memref<1x4x4x8xi8, "sram">, memref<1x8x8x8xi8, "sram">
  func.return
}

// -----

func.func @resize_window_lengths(%x: memref<1x4x4x8xi8, "sram">, %y: memref<1x8x8x8xi8, "sram">, %o: index) {
  // expected-error @+1 {{the output memref<1x8x8x8xi8, "sram"> is larger than 'output_lengths' [32, 4] along the resized axes}}
  tile.resize %x, %y[%o, %o, %o, %o] {axes = [1, 2], scales = array<f32: 2.0, 2.0>, input_lengths = [16, 2], output_lengths = [32, 4]} : memref<1x4x4x8xi8, "sram">, memref<1x8x8x8xi8, "sram">
  func.return
}

// -----

func.func @softmax_16_bit_table(%a: memref<4x8xi16, "sram">, %t: memref<256xi16, "sram">) {
  // expected-error @+1 {{the table of i16 values must be 513 i16 entries, got memref<256xi16, "sram">}}
  tile.softmax %a, %t, %a {multiplier = 2147418114, shift = 0} : memref<4x8xi16, "sram">, memref<256xi16, "sram">, memref<4x8xi16, "sram">
  func.return
}

// -----

func.func @lrn_table(%x: memref<4x16xi8, "sram">, %t: memref<225xi16, "sram">) {
  // expected-error @+1 {{the table of i8 values must be 225 i32 entries, got memref<225xi16, "sram">}}
  tile.lrn %x, %t, %x {size = 5, multiplier = 1342172247, shift = 27} : memref<4x16xi8, "sram">, memref<225xi16, "sram">, memref<4x16xi8, "sram">
  func.return
}

// -----

func.func @lrn_16_table(%x: memref<4x16xi16, "sram">, %t: memref<225xi32, "sram">) {
  // expected-error @+1 {{the table of i16 values must be 2753 i32 entries, got memref<225xi32, "sram">}}
  tile.lrn %x, %t, %x {size = 5, multiplier = 1342172247, shift = 27} : memref<4x16xi16, "sram">, memref<225xi32, "sram">, memref<4x16xi16, "sram">
  func.return
}

// -----

func.func @lrn_size(%x: memref<4x16xi8, "sram">, %t: memref<225xi32, "sram">) {
  // expected-error @+1 {{'size' must be 1 to 4096, got 5000}}
  tile.lrn %x, %t, %x {size = 5000, multiplier = 1342172247, shift = 27} : memref<4x16xi8, "sram">, memref<225xi32, "sram">, memref<4x16xi8, "sram">
  func.return
}

// -----

func.func @lrn_wide_multiplier(%x: memref<4x16xi8, "sram">, %t: memref<225xi32, "sram">) {
  // expected-error @+1 {{'multiplier': shift -15 is below -14: a wide accumulator needs a right shift}}
  tile.lrn %x, %t, %x {size = 5, multiplier = 1342172247, shift = -15} : memref<4x16xi8, "sram">, memref<225xi32, "sram">, memref<4x16xi8, "sram">
  func.return
}

// -----

func.func @lrn_16_zero_point(%x: memref<4x16xi16, "sram">, %t: memref<2753xi32, "sram">) {
  // expected-error @+1 {{the input of an i16 lrn is symmetric: its zero point must be 0}}
  tile.lrn %x, %t, %x {input_zero_point = 2, size = 5, multiplier = 1342172247, shift = 27} : memref<4x16xi16, "sram">, memref<2753xi32, "sram">, memref<4x16xi16, "sram">
  func.return
}

// -----

func.func @requantize_rounding(%acc: memref<2x8xi32, "sram">, %p: memref<1x2xi32, "sram">, %out: memref<2x8xi8, "sram">) {
  // expected-error @+1 {{'rounding' must be one of half_even, half_up, double_up, double_away; got "down"}}
  tile.requantize %acc, %p, %out {rounding = "down"} : memref<2x8xi32, "sram">, memref<1x2xi32, "sram">, memref<2x8xi8, "sram">
  func.return
}

// -----

func.func @requantize_wide_rounding(%acc: memref<2x8xi64, "sram">, %p: memref<1x2xi32, "sram">, %out: memref<2x8xi16, "sram">) {
  // expected-error @+1 {{a wide (i64) accumulator is requantized half to even}}
  tile.requantize %acc, %p, %out {rounding = "double_up"} : memref<2x8xi64, "sram">, memref<1x2xi32, "sram">, memref<2x8xi16, "sram">
  func.return
}

// -----

func.func @pool_rounding(%in: memref<1x4x4x8xi8, "sram">, %out: memref<1x2x2x8xi8, "sram">, %i: index) {
  // expected-error @+1 {{'rounding' must be one of half_even, half_up, double_up, double_away, half_away; got "nearest"}}
  tile.pool %in, %out[%i, %i] {kind = "average", kernel_shape = [2, 2], strides = [2, 2], input_h = 4, input_w = 4, rounding = "nearest"} : memref<1x4x4x8xi8, "sram">, memref<1x2x2x8xi8, "sram">
  func.return
}

// -----

func.func @pool_bias_half_even(%in: memref<1x4x4x8xi8, "sram">, %out: memref<1x1x1x8xi8, "sram">, %i: index) {
  // expected-error @+1 {{a 'bias' (TFLite's mean of stored values) takes one of its roundings}}
  tile.pool %in, %out[%i, %i] {kind = "average", kernel_shape = [4, 4], input_h = 4, input_w = 4, bias = 3} : memref<1x4x4x8xi8, "sram">, memref<1x1x1x8xi8, "sram">
  func.return
}

// -----

// ---- cores -------------------------------------------------------------------------------

func.func @on_core_negative() {
  // expected-error @+1 {{tile.on_core needs 'core', a non-negative integer, got -1}}
  tile.on_core -1 {
  }
  func.return
}

// -----

func.func @on_core_nested() {
  // expected-error @+1 {{a tile.on_core holds no other tile.on_core}}
  tile.on_core 1 {
    tile.on_core 0 {
    }
  }
  func.return
}
