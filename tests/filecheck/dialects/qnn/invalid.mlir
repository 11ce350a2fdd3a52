// RUN: irc-opt %s --split-input-file --verify-diagnostics

// One case per rule of the `qnn` verifiers (irc/dialects/qnn.py).

// ---- qnn.constant --------------------------------------------------------------------

func.func @constant_not_quantized() {
  // expected-error @+1 {{the result must be a tensor of a quantized type, got tensor<2xi8>}}
  %c = qnn.constant dense<[1, 2]> : tensor<2xi8> to tensor<2xi8>
  func.return
}

// -----

func.func @constant_not_storage_type() {
  // expected-error @+1 {{the value's element type i32 is not the storage type i8}}
  %c = qnn.constant dense<[1, 2]> : tensor<2xi32> to tensor<2x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

func.func @constant_shape() {
  // expected-error @+1 {{differ in shape}}
  %c = qnn.constant dense<[1, 2]> : tensor<2xi8> to tensor<3x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

func.func @constant_outside_narrow_range() {
  // expected-error @+1 {{stored value -128 is outside the storage range [-127, 127]}}
  %c = qnn.constant dense<[-128, 2]> : tensor<2xi8> to tensor<2x!quant.uniform<i8<-127:127>:f32, 0.1>>
  func.return
}

// -----

func.func @constant_per_axis_scales(%x: tensor<1xf32>) {
  // expected-error @+1 {{axis 0 has 2 slices but the type has 3 scales}}
  %c = qnn.constant dense<[1, 2]> : tensor<2xi8> to tensor<2x!quant.uniform<i8:f32:0, {0.1, 0.2, 0.3}>>
  func.return
}

// -----

// ---- qnn.conv and qnn.conv_transpose ---------------------------------------------------

func.func @conv_float_input(%x: tensor<1x3x4x4xf32>, %w: tensor<2x3x1x1x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{the input must be a tensor of a quantized type, got tensor<1x3x4x4xf32>}}
  %y = qnn.conv %x, %w : (tensor<1x3x4x4xf32>, tensor<2x3x1x1x!quant.uniform<i8:f32, 0.1>>) -> tensor<1x2x4x4xi32>
  func.return
}

// -----

func.func @conv_per_axis_input(%x: tensor<1x2x4x4x!quant.uniform<i8:f32:1, {0.1, 0.2}>>, %w: tensor<2x2x1x1x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{the input must be quantized per tensor}}
  %y = qnn.conv %x, %w : (tensor<1x2x4x4x!quant.uniform<i8:f32:1, {0.1, 0.2}>>, tensor<2x2x1x1x!quant.uniform<i8:f32, 0.1>>) -> tensor<1x2x4x4xi32>
  func.return
}

// -----

// A 16-bit input accumulates in the wide i64 accumulator, not in i32.
func.func @conv_16_bit_input_i32_accumulator(%x: tensor<1x3x4x4x!quant.uniform<i16:f32, 0.1>>, %w: tensor<2x3x1x1x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{result type tensor<1x2x4x4xi32> does not match the inferred type tensor<1x2x4x4xi64>}}
  %y = qnn.conv %x, %w : (tensor<1x3x4x4x!quant.uniform<i16:f32, 0.1>>, tensor<2x3x1x1x!quant.uniform<i8:f32, 0.1>>) -> tensor<1x2x4x4xi32>
  func.return
}

// -----

func.func @conv_32_bit_input(%x: tensor<1x3x4x4x!quant.uniform<i32:f32, 0.1>>, %w: tensor<2x3x1x1x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{the input must have 8- or 16-bit storage, got i32}}
  %y = qnn.conv %x, %w : (tensor<1x3x4x4x!quant.uniform<i32:f32, 0.1>>, tensor<2x3x1x1x!quant.uniform<i8:f32, 0.1>>) -> tensor<1x2x4x4xi64>
  func.return
}

// -----

// An i64 bias belongs to the wide accumulator of a 16-bit input only.
func.func @conv_i64_bias_of_8_bit_input(%x: tensor<1x3x4x4x!quant.uniform<i8:f32, 0.1>>, %w: tensor<2x3x1x1x!quant.uniform<i8:f32, 0.1>>, %b: tensor<2xi64>) {
  // expected-error @+1 {{bias must be i32 or have i32 storage, got i64}}
  %y = qnn.conv %x, %w, %b : (tensor<1x3x4x4x!quant.uniform<i8:f32, 0.1>>, tensor<2x3x1x1x!quant.uniform<i8:f32, 0.1>>, tensor<2xi64>) -> tensor<1x2x4x4xi32>
  func.return
}

// -----

// 16-bit inputs times 16-bit ones over 131073 terms exceed the 48-bit accumulator.
func.func @matmul_wide_accumulator_overflow(%a: tensor<1x131073x!quant.uniform<i16:f32, 0.1>>, %b: tensor<131073x1x!quant.uniform<i16:f32, 0.1>>) {
  // expected-error @+1 {{a sum of 131073 products can reach 140738562097152, which overflows the 48-bit accumulator}}
  %y = qnn.matmul %a, %b : (tensor<1x131073x!quant.uniform<i16:f32, 0.1>>, tensor<131073x1x!quant.uniform<i16:f32, 0.1>>) -> tensor<1x1xi64>
  func.return
}

// -----

// The requantization of a wide accumulator has a 16-bit multiplier: its right shift
// 15 + s must be positive.
func.func @requantize_wide_shift_too_small(%acc: tensor<4xi64>) {
  // expected-error @+1 {{the wide (i64) input's 'multiplier' and 'shift': shift -15 is below -14: a wide accumulator needs a right shift}}
  %y = qnn.requantize %acc {multiplier = [1073741824], shift = [-15]} : (tensor<4xi64>) -> tensor<4x!quant.uniform<i16:f32, 0.1>>
  func.return
}

// -----

func.func @conv_float_weight(%x: tensor<1x3x4x4x!quant.uniform<i8:f32, 0.1>>, %w: tensor<2x3x1x1xf32>) {
  // expected-error @+1 {{the weight must be a tensor of a quantized type, got tensor<2x3x1x1xf32>}}
  %y = qnn.conv %x, %w : (tensor<1x3x4x4x!quant.uniform<i8:f32, 0.1>>, tensor<2x3x1x1xf32>) -> tensor<1x2x4x4xi32>
  func.return
}

// -----

func.func @conv_weight_axis(%x: tensor<1x2x4x4x!quant.uniform<i8:f32, 0.1>>, %w: tensor<2x2x1x1x!quant.uniform<i8:f32:1, {0.1, 0.2}>>) {
  // expected-error @+1 {{the weight must be quantized per tensor or along its output-channel axis 0, not axis 1}}
  %y = qnn.conv %x, %w : (tensor<1x2x4x4x!quant.uniform<i8:f32, 0.1>>, tensor<2x2x1x1x!quant.uniform<i8:f32:1, {0.1, 0.2}>>) -> tensor<1x2x4x4xi32>
  func.return
}

// -----

func.func @conv_float_bias(%x: tensor<1x3x4x4x!quant.uniform<i8:f32, 0.1>>, %w: tensor<2x3x1x1x!quant.uniform<i8:f32, 0.1>>, %b: tensor<2xf32>) {
  // expected-error @+1 {{bias must be i32 or have i32 storage, got f32}}
  %y = qnn.conv %x, %w, %b : (tensor<1x3x4x4x!quant.uniform<i8:f32, 0.1>>, tensor<2x3x1x1x!quant.uniform<i8:f32, 0.1>>, tensor<2xf32>) -> tensor<1x2x4x4xi32>
  func.return
}

// -----

func.func @conv_result_not_i32(%x: tensor<1x3x4x4x!quant.uniform<i8:f32, 0.1>>, %w: tensor<2x3x1x1x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{result type tensor<1x2x4x4x!quant.uniform<i8:f32, 0.1>> does not match the inferred type tensor<1x2x4x4xi32>}}
  %y = qnn.conv %x, %w : (tensor<1x3x4x4x!quant.uniform<i8:f32, 0.1>>, tensor<2x3x1x1x!quant.uniform<i8:f32, 0.1>>) -> tensor<1x2x4x4x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

func.func @conv_channels(%x: tensor<1x4x4x4x!quant.uniform<i8:f32, 0.1>>, %w: tensor<2x3x1x1x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{weight expects 3 input channels, input has 4}}
  %y = qnn.conv %x, %w : (tensor<1x4x4x4x!quant.uniform<i8:f32, 0.1>>, tensor<2x3x1x1x!quant.uniform<i8:f32, 0.1>>) -> tensor<1x2x4x4xi32>
  func.return
}

// -----

// 66400 * 255 * 128 products (an i8 input with zero point 127, i8 weights) overflow int32.
func.func @conv_accumulator_overflow(%x: tensor<1x66400x1x1x!quant.uniform<i8:f32, 0.1:127>>, %w: tensor<1x66400x1x1x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{a sum of 66400 products can reach 2167296000, which overflows the int32 accumulator}}
  %y = qnn.conv %x, %w : (tensor<1x66400x1x1x!quant.uniform<i8:f32, 0.1:127>>, tensor<1x66400x1x1x!quant.uniform<i8:f32, 0.1>>) -> tensor<1x1x1x1xi32>
  func.return
}

// -----

func.func @conv_transpose_weight_axis(%x: tensor<1x2x4x4x!quant.uniform<i8:f32, 0.1>>, %w: tensor<2x3x2x2x!quant.uniform<i8:f32:0, {0.1, 0.2}>>) {
  // expected-error @+1 {{the weight must be quantized per tensor or along its output-channel axis 1, not axis 0}}
  %y = qnn.conv_transpose %x, %w : (tensor<1x2x4x4x!quant.uniform<i8:f32, 0.1>>, tensor<2x3x2x2x!quant.uniform<i8:f32:0, {0.1, 0.2}>>) -> tensor<1x3x5x5xi32>
  func.return
}

// -----

func.func @conv_transpose_nhwc_weight_axis(%x: tensor<1x5x3x4x!quant.uniform<i8:f32, 0.1>>, %w: tensor<4x3x2x3x!quant.uniform<i8:f32:1, {0.1, 0.2, 0.3}>>) {
  // expected-error @+1 {{the weight must be quantized per tensor or along its output-channel axis 3, not axis 1}}
  %y = qnn.conv_transpose %x, %w {layout = "nhwc", strides = [2, 2]} : (tensor<1x5x3x4x!quant.uniform<i8:f32, 0.1>>, tensor<4x3x2x3x!quant.uniform<i8:f32:1, {0.1, 0.2, 0.3}>>) -> tensor<1x11x6x3xi32>
  func.return
}

// -----

// ---- qnn.matmul and qnn.gemm -----------------------------------------------------------

func.func @matmul_rhs_axis(%a: tensor<2x3x!quant.uniform<i8:f32, 0.1>>, %b: tensor<3x2x!quant.uniform<i8:f32:0, {0.1, 0.2, 0.3}>>) {
  // expected-error @+1 {{rhs must be quantized per tensor or along its last axis 1}}
  %y = qnn.matmul %a, %b : (tensor<2x3x!quant.uniform<i8:f32, 0.1>>, tensor<3x2x!quant.uniform<i8:f32:0, {0.1, 0.2, 0.3}>>) -> tensor<2x2xi32>
  func.return
}

// -----

func.func @matmul_inner(%a: tensor<2x3x!quant.uniform<i8:f32, 0.1>>, %b: tensor<4x2x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{inner dimensions differ: 3 and 4}}
  %y = qnn.matmul %a, %b : (tensor<2x3x!quant.uniform<i8:f32, 0.1>>, tensor<4x2x!quant.uniform<i8:f32, 0.1>>) -> tensor<2x2xi32>
  func.return
}

// -----

func.func @gemm_rhs_axis(%a: tensor<2x3x!quant.uniform<i8:f32, 0.1>>, %b: tensor<4x3x!quant.uniform<i8:f32:1, {0.1, 0.2, 0.3}>>) {
  // expected-error @+1 {{rhs must be quantized per tensor or along its output-feature axis 0}}
  %y = qnn.gemm %a, %b {trans_b = true} : (tensor<2x3x!quant.uniform<i8:f32, 0.1>>, tensor<4x3x!quant.uniform<i8:f32:1, {0.1, 0.2, 0.3}>>) -> tensor<2x4xi32>
  func.return
}

// -----

func.func @gemm_bias(%a: tensor<2x3x!quant.uniform<i8:f32, 0.1>>, %b: tensor<3x4x!quant.uniform<i8:f32, 0.1>>, %c: tensor<4xi8>) {
  // expected-error @+1 {{bias must be i32 or have i32 storage, got i8}}
  %y = qnn.gemm %a, %b, %c : (tensor<2x3x!quant.uniform<i8:f32, 0.1>>, tensor<3x4x!quant.uniform<i8:f32, 0.1>>, tensor<4xi8>) -> tensor<2x4xi32>
  func.return
}

// -----

// ---- qnn.requantize --------------------------------------------------------------------

func.func @multiplier_too_small(%x: tensor<4xi32>) {
  // expected-error @+1 {{multiplier 1073741823 is outside [2^30, 2^31) = [1073741824, 2147483647]}}
  %y = qnn.requantize %x {multiplier = [1073741823], shift = [0]} : (tensor<4xi32>) -> tensor<4x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

func.func @shift_too_large(%x: tensor<4xi32>) {
  // expected-error @+1 {{shift 32 is outside [-30, 31]}}
  %y = qnn.requantize %x {multiplier = [1073741824], shift = [32]} : (tensor<4xi32>) -> tensor<4x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

func.func @shift_too_small(%x: tensor<4xi32>) {
  // expected-error @+1 {{shift -31 is outside [-30, 31]}}
  %y = qnn.requantize %x {multiplier = [1073741824], shift = [-31]} : (tensor<4xi32>) -> tensor<4x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

func.func @lists_differ(%x: tensor<2x4xi32>) {
  // expected-error @+1 {{2 multipliers but 1 shifts}}
  %y = qnn.requantize %x {axis = 0, multiplier = [1073741824, 1073741824], shift = [0]} : (tensor<2x4xi32>) -> tensor<2x4x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

func.func @per_tensor_takes_one(%x: tensor<2x4xi32>) {
  // expected-error @+1 {{without 'axis' there is one multiplier and shift, got 2}}
  %y = qnn.requantize %x {multiplier = [1073741824, 1073741824], shift = [0, 0]} : (tensor<2x4xi32>) -> tensor<2x4x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

func.func @axis_out_of_range(%x: tensor<2x4xi32>) {
  // expected-error @+1 {{axis 2 is not below the rank 2}}
  %y = qnn.requantize %x {axis = 2, multiplier = [1073741824], shift = [0]} : (tensor<2x4xi32>) -> tensor<2x4x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

func.func @one_multiplier_per_slice(%x: tensor<2x4xi32>) {
  // expected-error @+1 {{axis 1 has 4 slices but there are 2 multipliers}}
  %y = qnn.requantize %x {axis = 1, multiplier = [1073741824, 1073741824], shift = [0, 0]} : (tensor<2x4xi32>) -> tensor<2x4x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

func.func @clamp_outside_storage(%x: tensor<4xi32>) {
  // expected-error @+1 {{clamp bounds [-128, 127] are not an ordered part of the storage range [-127, 127]}}
  %y = qnn.requantize %x {clamp_min = -128, multiplier = [1073741824], shift = [0]} : (tensor<4xi32>) -> tensor<4x!quant.uniform<i8<-127:127>:f32, 0.1>>
  func.return
}

// -----

func.func @clamp_unordered(%x: tensor<4xi32>) {
  // expected-error @+1 {{clamp bounds [10, 5] are not an ordered part of the storage range [-128, 127]}}
  %y = qnn.requantize %x {clamp_min = 10, clamp_max = 5, multiplier = [1073741824], shift = [0]} : (tensor<4xi32>) -> tensor<4x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

func.func @requantize_to_integers(%x: tensor<4xi32>) {
  // expected-error @+1 {{the result must be a tensor of a quantized type, got tensor<4xi8>}}
  %y = qnn.requantize %x {multiplier = [1073741824], shift = [0]} : (tensor<4xi32>) -> tensor<4xi8>
  func.return
}

// -----

func.func @requantize_to_per_axis(%x: tensor<2xi32>) {
  // expected-error @+1 {{the result must be quantized per tensor}}
  %y = qnn.requantize %x {multiplier = [1073741824], shift = [0]} : (tensor<2xi32>) -> tensor<2x!quant.uniform<i8:f32:0, {0.1, 0.2}>>
  func.return
}

// -----

func.func @requantize_shape(%x: tensor<4xi32>) {
  // expected-error @+1 {{result shape [5] does not match the inferred shape [4]}}
  %y = qnn.requantize %x {multiplier = [1073741824], shift = [0]} : (tensor<4xi32>) -> tensor<5x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

func.func @requantize_float(%x: tensor<4xf32>) {
  // expected-error @+1 {{the input (i32, i64 or quantized) must be a tensor of a quantized type, got tensor<4xf32>}}
  %y = qnn.requantize %x {multiplier = [1073741824], shift = [0]} : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

func.func @requantize_i32_storage_zero_point(%x: tensor<4x!quant.uniform<i32:f32, 0.1:5>>) {
  // expected-error @+1 {{an input with i32 storage must have zero point 0}}
  %y = qnn.requantize %x {multiplier = [1073741824], shift = [0]} : (tensor<4x!quant.uniform<i32:f32, 0.1:5>>) -> tensor<4x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

// ---- qnn.add, qnn.mul, qnn.clamp --------------------------------------------------------

func.func @add_left_shift_overflows(%x: tensor<4x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{lhs shifted left by 24 overflows int32; use a smaller left_shift}}
  %y = qnn.add %x, %x {left_shift = 24, lhs_multiplier = 1073741824, lhs_shift = 0, rhs_multiplier = 1073741824, rhs_shift = 0, multiplier = 1073741824, shift = 0} : (tensor<4x!quant.uniform<i8:f32, 0.1>>, tensor<4x!quant.uniform<i8:f32, 0.1>>) -> tensor<4x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

func.func @add_left_shift_range(%x: tensor<4x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{left_shift 31 is outside [0, 30]}}
  %y = qnn.add %x, %x {left_shift = 31, lhs_multiplier = 1073741824, lhs_shift = 0, rhs_multiplier = 1073741824, rhs_shift = 0, multiplier = 1073741824, shift = 0} : (tensor<4x!quant.uniform<i8:f32, 0.1>>, tensor<4x!quant.uniform<i8:f32, 0.1>>) -> tensor<4x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

func.func @add_sum_overflows(%x: tensor<4x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{the rescaled sum can reach 2147483648, which overflows int32}}
  %y = qnn.add %x, %x {lhs_multiplier = 1073741824, lhs_shift = -4, rhs_multiplier = 1073741824, rhs_shift = -4, multiplier = 1073741824, shift = 0} : (tensor<4x!quant.uniform<i8:f32, 0.1>>, tensor<4x!quant.uniform<i8:f32, 0.1>>) -> tensor<4x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

func.func @add_bad_multiplier(%x: tensor<4x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{'rhs_multiplier': multiplier 5 is outside [2^30, 2^31)}}
  %y = qnn.add %x, %x {lhs_multiplier = 1073741824, lhs_shift = 0, rhs_multiplier = 5, rhs_shift = 0, multiplier = 1073741824, shift = 0} : (tensor<4x!quant.uniform<i8:f32, 0.1>>, tensor<4x!quant.uniform<i8:f32, 0.1>>) -> tensor<4x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

func.func @add_broadcast(%x: tensor<4x!quant.uniform<i8:f32, 0.1>>, %z: tensor<3x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{shapes [[4], [3]] are not broadcast-compatible}}
  %y = qnn.add %x, %z {lhs_multiplier = 1073741824, lhs_shift = 0, rhs_multiplier = 1073741824, rhs_shift = 0, multiplier = 1073741824, shift = 0} : (tensor<4x!quant.uniform<i8:f32, 0.1>>, tensor<3x!quant.uniform<i8:f32, 0.1>>) -> tensor<4x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

func.func @add_missing_property(%x: tensor<4x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{property 'rhs_shift' expected in operation 'qnn.add'}}
  %y = qnn.add %x, %x {lhs_multiplier = 1073741824, lhs_shift = 0, rhs_multiplier = 1073741824, multiplier = 1073741824, shift = 0} : (tensor<4x!quant.uniform<i8:f32, 0.1>>, tensor<4x!quant.uniform<i8:f32, 0.1>>) -> tensor<4x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

func.func @add_i32_storage(%x: tensor<4x!quant.uniform<i32:f32, 0.1>>) {
  // expected-error @+1 {{lhs must have 8- or 16-bit storage}}
  %y = qnn.add %x, %x {lhs_multiplier = 1073741824, lhs_shift = 0, rhs_multiplier = 1073741824, rhs_shift = 0, multiplier = 1073741824, shift = 0} : (tensor<4x!quant.uniform<i32:f32, 0.1>>, tensor<4x!quant.uniform<i32:f32, 0.1>>) -> tensor<4x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

func.func @mul_bad_shift(%x: tensor<4x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{'multiplier': shift 40 is outside [-30, 31]}}
  %y = qnn.mul %x, %x {multiplier = 1073741824, shift = 40} : (tensor<4x!quant.uniform<i8:f32, 0.1>>, tensor<4x!quant.uniform<i8:f32, 0.1>>) -> tensor<4x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

func.func @mul_result_float(%x: tensor<4x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{the result must be a tensor of a quantized type, got tensor<4xf32>}}
  %y = qnn.mul %x, %x {multiplier = 1073741824, shift = 0} : (tensor<4x!quant.uniform<i8:f32, 0.1>>, tensor<4x!quant.uniform<i8:f32, 0.1>>) -> tensor<4xf32>
  func.return
}

// -----

func.func @clamp_bounds(%x: tensor<4x!quant.uniform<u8:f32, 0.1:128>>) {
  // expected-error @+1 {{clamp bounds [-1, 255] are not an ordered part of the storage range [0, 255]}}
  %y = qnn.clamp %x {clamp_min = -1} : tensor<4x!quant.uniform<u8:f32, 0.1:128>>
  func.return
}

// -----

// ---- qnn.lut ---------------------------------------------------------------------------

func.func @lut_short_table(%x: tensor<4x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{the table has 3 entries, expected 256}}
  %y = qnn.lut %x {function = "sigmoid", table = [1, 2, 3]} : tensor<4x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

func.func @lut_16_bit_short_table(%x: tensor<4x!quant.uniform<i16:f32, 0.1>>) {
  // expected-error @+1 {{the table has 3 entries, expected 513}}
  %y = qnn.lut %x {function = "sigmoid", table = [1, 2, 3]} : tensor<4x!quant.uniform<i16:f32, 0.1>>
  func.return
}

// -----

func.func @lut_16_bit_asymmetric(%x: tensor<4x!quant.uniform<i16:f32, 0.1:5>>) {
  // expected-error @+1 {{a 16-bit qnn.lut takes and gives symmetric i16; the input is}}
  %y = qnn.lut %x {function = "sigmoid", table = [1, 2, 3]} : tensor<4x!quant.uniform<i16:f32, 0.1:5>>
  func.return
}

// -----

func.func @lut_8_to_16_bit(%x: tensor<4x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{a 16-bit qnn.lut takes and gives symmetric i16; the input is}}
  %y = qnn.lut %x {function = "sigmoid", table = [1, 2, 3]} : (tensor<4x!quant.uniform<i8:f32, 0.1>>) -> tensor<4x!quant.uniform<i16:f32, 0.1>>
  func.return
}

// -----

func.func @lut_entry_range(%x: tensor<4x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{table entry #0 is 200, outside the result's storage range [-128, 127]}}
  %y = qnn.lut %x {function = "sigmoid", table = [200, -127, -126, -125, -124, -123, -122, -121, -120, -119, -118, -117, -116, -115, -114, -113, -112, -111, -110, -109, -108, -107, -106, -105, -104, -103, -102, -101, -100, -99, -98, -97, -96, -95, -94, -93, -92, -91, -90, -89, -88, -87, -86, -85, -84, -83, -82, -81, -80, -79, -78, -77, -76, -75, -74, -73, -72, -71, -70, -69, -68, -67, -66, -65, -64, -63, -62, -61, -60, -59, -58, -57, -56, -55, -54, -53, -52, -51, -50, -49, -48, -47, -46, -45, -44, -43, -42, -41, -40, -39, -38, -37, -36, -35, -34, -33, -32, -31, -30, -29, -28, -27, -26, -25, -24, -23, -22, -21, -20, -19, -18, -17, -16, -15, -14, -13, -12, -11, -10, -9, -8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127]} : tensor<4x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

// ---- qnn.softmax -----------------------------------------------------------------------

func.func @softmax_short_table(%x: tensor<2x8x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{the table has 3 entries, expected 256}}
  %p = qnn.softmax %x {multiplier = 1073741824, shift = 6, table = [32767, 2, 3]} : (tensor<2x8x!quant.uniform<i8:f32, 0.1>>) -> tensor<2x8x!quant.uniform<i8:f32, 0.00390625:-128>>
  func.return
}

// -----

func.func @softmax_first_entry(%x: tensor<2x8x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{table entry #0 (exp(0)) is 32000, expected 32767}}
  %p = qnn.softmax %x {multiplier = 1073741824, shift = 6, table = [32000, 29649, 26827, 24274, 21964, 19874, 17983, 16272, 14723, 13322, 12054, 10907, 9869, 8930, 8080, 7311, 6616, 5986, 5416, 4901, 4435, 4013, 3631, 3285, 2973, 2690, 2434, 2202, 1993, 1803, 1631, 1476, 1336, 1209, 1094, 989, 895, 810, 733, 663, 600, 543, 491, 445, 402, 364, 329, 298, 270, 244, 221, 200, 181, 164, 148, 134, 121, 110, 99, 90, 81, 73, 66, 60, 54, 49, 45, 40, 36, 33, 30, 27, 24, 22, 20, 18, 16, 15, 13, 12, 11, 10, 9, 8, 7, 7, 6, 5, 5, 4, 4, 4, 3, 3, 3, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]} : (tensor<2x8x!quant.uniform<i8:f32, 0.1>>) -> tensor<2x8x!quant.uniform<i8:f32, 0.00390625:-128>>
  func.return
}

// -----

func.func @softmax_entry_range(%x: tensor<2x8x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{table entry #1 is 40000, outside [0, 32767]}}
  %p = qnn.softmax %x {multiplier = 1073741824, shift = 6, table = [32767, 40000, 26827, 24274, 21964, 19874, 17983, 16272, 14723, 13322, 12054, 10907, 9869, 8930, 8080, 7311, 6616, 5986, 5416, 4901, 4435, 4013, 3631, 3285, 2973, 2690, 2434, 2202, 1993, 1803, 1631, 1476, 1336, 1209, 1094, 989, 895, 810, 733, 663, 600, 543, 491, 445, 402, 364, 329, 298, 270, 244, 221, 200, 181, 164, 148, 134, 121, 110, 99, 90, 81, 73, 66, 60, 54, 49, 45, 40, 36, 33, 30, 27, 24, 22, 20, 18, 16, 15, 13, 12, 11, 10, 9, 8, 7, 7, 6, 5, 5, 4, 4, 4, 3, 3, 3, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]} : (tensor<2x8x!quant.uniform<i8:f32, 0.1>>) -> tensor<2x8x!quant.uniform<i8:f32, 0.00390625:-128>>
  func.return
}

// -----

func.func @softmax_16_to_8_bit(%x: tensor<2x8x!quant.uniform<i16:f32, 0.1>>) {
  // expected-error @+1 {{a 16-bit qnn.softmax takes and gives symmetric i16; the result is !quant.uniform<i8:f32, 0.00390625:-128>}}
  %p = qnn.softmax %x {multiplier = 1073741824, shift = 6, table = [32767, 29649, 26827, 24274, 21964, 19874, 17983, 16272, 14723, 13322, 12054, 10907, 9869, 8930, 8080, 7311, 6616, 5986, 5416, 4901, 4435, 4013, 3631, 3285, 2973, 2690, 2434, 2202, 1993, 1803, 1631, 1476, 1336, 1209, 1094, 989, 895, 810, 733, 663, 600, 543, 491, 445, 402, 364, 329, 298, 270, 244, 221, 200, 181, 164, 148, 134, 121, 110, 99, 90, 81, 73, 66, 60, 54, 49, 45, 40, 36, 33, 30, 27, 24, 22, 20, 18, 16, 15, 13, 12, 11, 10, 9, 8, 7, 7, 6, 5, 5, 4, 4, 4, 3, 3, 3, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]} : (tensor<2x8x!quant.uniform<i16:f32, 0.1>>) -> tensor<2x8x!quant.uniform<i8:f32, 0.00390625:-128>>
  func.return
}

// -----

func.func @softmax_multiplier(%x: tensor<2x8x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{'multiplier': }}
  %p = qnn.softmax %x {multiplier = 5, shift = 6, table = [32767, 29649, 26827, 24274, 21964, 19874, 17983, 16272, 14723, 13322, 12054, 10907, 9869, 8930, 8080, 7311, 6616, 5986, 5416, 4901, 4435, 4013, 3631, 3285, 2973, 2690, 2434, 2202, 1993, 1803, 1631, 1476, 1336, 1209, 1094, 989, 895, 810, 733, 663, 600, 543, 491, 445, 402, 364, 329, 298, 270, 244, 221, 200, 181, 164, 148, 134, 121, 110, 99, 90, 81, 73, 66, 60, 54, 49, 45, 40, 36, 33, 30, 27, 24, 22, 20, 18, 16, 15, 13, 12, 11, 10, 9, 8, 7, 7, 6, 5, 5, 4, 4, 4, 3, 3, 3, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]} : (tensor<2x8x!quant.uniform<i8:f32, 0.1>>) -> tensor<2x8x!quant.uniform<i8:f32, 0.00390625:-128>>
  func.return
}

// -----

func.func @softmax_mask_type(%x: tensor<2x8x!quant.uniform<i8:f32, 0.1>>, %m: tensor<2x8xi1>) {
  // expected-error @+1 {{the mask must be an i8 tensor (0 keeps, 1 masks), got tensor<2x8xi1>}}
  %p = qnn.softmax %x, %m {multiplier = 1073741824, shift = 6, table = [32767, 29649, 26827, 24274, 21964, 19874, 17983, 16272, 14723, 13322, 12054, 10907, 9869, 8930, 8080, 7311, 6616, 5986, 5416, 4901, 4435, 4013, 3631, 3285, 2973, 2690, 2434, 2202, 1993, 1803, 1631, 1476, 1336, 1209, 1094, 989, 895, 810, 733, 663, 600, 543, 491, 445, 402, 364, 329, 298, 270, 244, 221, 200, 181, 164, 148, 134, 121, 110, 99, 90, 81, 73, 66, 60, 54, 49, 45, 40, 36, 33, 30, 27, 24, 22, 20, 18, 16, 15, 13, 12, 11, 10, 9, 8, 7, 7, 6, 5, 5, 4, 4, 4, 3, 3, 3, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]} : (tensor<2x8x!quant.uniform<i8:f32, 0.1>>, tensor<2x8xi1>) -> tensor<2x8x!quant.uniform<i8:f32, 0.00390625:-128>>
  func.return
}

// -----

func.func @softmax_mask_shape(%x: tensor<2x8x!quant.uniform<i8:f32, 0.1>>, %m: tensor<3x1x8xi8>) {
  // expected-error @+1 {{the mask of shape [3, 1, 8] must broadcast to [2, 8]}}
  %p = qnn.softmax %x, %m {multiplier = 1073741824, shift = 6, table = [32767, 29649, 26827, 24274, 21964, 19874, 17983, 16272, 14723, 13322, 12054, 10907, 9869, 8930, 8080, 7311, 6616, 5986, 5416, 4901, 4435, 4013, 3631, 3285, 2973, 2690, 2434, 2202, 1993, 1803, 1631, 1476, 1336, 1209, 1094, 989, 895, 810, 733, 663, 600, 543, 491, 445, 402, 364, 329, 298, 270, 244, 221, 200, 181, 164, 148, 134, 121, 110, 99, 90, 81, 73, 66, 60, 54, 49, 45, 40, 36, 33, 30, 27, 24, 22, 20, 18, 16, 15, 13, 12, 11, 10, 9, 8, 7, 7, 6, 5, 5, 4, 4, 4, 3, 3, 3, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]} : (tensor<2x8x!quant.uniform<i8:f32, 0.1>>, tensor<3x1x8xi8>) -> tensor<2x8x!quant.uniform<i8:f32, 0.00390625:-128>>
  func.return
}

// -----

// ---- qnn.lrn ----------------------------------------------------------------------------

func.func @lrn_size(%x: tensor<1x2x2x16x!quant.uniform<i8:f32, 0.5:-128>>) {
  // expected-error @+1 {{'size' must be 1 to 4096, got 0}}
  %y = qnn.lrn %x {layout = "nhwc", size = 0, table = [1073741824, 1073741321, 1073740817, 1073740314, 1073739811, 1073739307, 1073738804, 1073738301, 1073737798, 1073736791, 1073735784, 1073734778, 1073733771, 1073732764, 1073731758, 1073730751, 1073729745, 1073727731, 1073725718, 1073723705, 1073721692, 1073719679, 1073717666, 1073715652, 1073713639, 1073709613, 1073705587, 1073701561, 1073697535, 1073693508, 1073689482, 1073685456, 1073681430, 1073673378, 1073665327, 1073657275, 1073649224, 1073641172, 1073633121, 1073625070, 1073617019, 1073600918, 1073584817, 1073568717, 1073552617, 1073536518, 1073520419, 1073504321, 1073488224, 1073456030, 1073423839, 1073391651, 1073359464, 1073327280, 1073295098, 1073262918, 1073230741, 1073166393, 1073102053, 1073037724, 1072973402, 1072909089, 1072844787, 1072780493, 1072716206, 1072587662, 1072459155, 1072330683, 1072202248, 1072073848, 1071945484, 1071817156, 1071688857, 1071432380, 1071176046, 1070919855, 1070663807, 1070407902, 1070152140, 1069896520, 1069641016, 1069130488, 1068620528, 1068111136, 1067602310, 1067094050, 1066586353, 1066079219, 1065572543, 1064561083, 1063551861, 1062544870, 1061540100, 1060537543, 1059537194, 1058539044, 1057542676, 1055557304, 1053580607, 1051612526, 1049653002, 1047701976, 1045759391, 1043825190, 1041897776, 1038070804, 1034276471, 1030514341, 1026783989, 1023084991, 1019416941, 1015779428, 1012166563, 1005040832, 998031067, 991134326, 984347772, 977668665, 971094355, 964622282, 958232219, 945778193, 933695405, 921966756, 910576205, 899508686, 888750031, 878286909, 868058354, 848504087, 829947579, 812311100, 795524948, 779526430, 764258989, 749671467, 735614922, 709454906, 685366984, 663104445, 642458968, 623253355, 605335869, 588575772, 572701168, 544045301, 518524884, 495632644, 474966985, 456205573, 439086510, 423394675, 408772598, 383095065, 360888828, 341469541, 324324491, 309061493, 295375128, 283023786, 271656946, 252094957, 235530403, 221299889, 208925269, 198052681, 188414279, 179803374, 171942101, 158583141, 147417451, 137927907, 129750477, 122621024, 116342959, 110766757, 105699416, 97149722, 90055730, 84062636, 78923923, 74462668, 70548394, 67082640, 63940968, 58660507, 54296090, 50620610, 47477372, 44754553, 42370087, 40262302, 38354077, 35153100, 32512714, 30292733, 28396778, 26756274, 25321017, 24053358, 22906473, 20984547, 19400822, 18070356, 16934859, 15952914, 15094244, 14336161, 13650532, 12502150, 11556334, 10762096, 10084479, 9498666, 8986521, 8534467, 8125685, 7441181, 6877561, 6404367, 6000723, 5651817, 5346823, 5077644, 4839511], multiplier = 1342172247, shift = 27} : (tensor<1x2x2x16x!quant.uniform<i8:f32, 0.5:-128>>) -> tensor<1x2x2x16x!quant.uniform<i8:f32, 0.1:-128>>
  func.return
}

// -----

func.func @lrn_table_entries(%x: tensor<1x2x2x16x!quant.uniform<i8:f32, 0.5:-128>>) {
  // expected-error @+1 {{the table of 8-bit values has 3 entries, expected 225}}
  %y = qnn.lrn %x {layout = "nhwc", size = 5, table = [1, 2, 3], multiplier = 1342172247, shift = 27} : (tensor<1x2x2x16x!quant.uniform<i8:f32, 0.5:-128>>) -> tensor<1x2x2x16x!quant.uniform<i8:f32, 0.1:-128>>
  func.return
}

// -----

func.func @lrn_table_entry(%x: tensor<1x2x2x16x!quant.uniform<i8:f32, 0.5:-128>>) {
  // expected-error @+1 {{table entry #0 is 1073741825, outside [0, 2^30]}}
  %y = qnn.lrn %x {layout = "nhwc", size = 5, table = [1073741825, 1073741321, 1073740817, 1073740314, 1073739811, 1073739307, 1073738804, 1073738301, 1073737798, 1073736791, 1073735784, 1073734778, 1073733771, 1073732764, 1073731758, 1073730751, 1073729745, 1073727731, 1073725718, 1073723705, 1073721692, 1073719679, 1073717666, 1073715652, 1073713639, 1073709613, 1073705587, 1073701561, 1073697535, 1073693508, 1073689482, 1073685456, 1073681430, 1073673378, 1073665327, 1073657275, 1073649224, 1073641172, 1073633121, 1073625070, 1073617019, 1073600918, 1073584817, 1073568717, 1073552617, 1073536518, 1073520419, 1073504321, 1073488224, 1073456030, 1073423839, 1073391651, 1073359464, 1073327280, 1073295098, 1073262918, 1073230741, 1073166393, 1073102053, 1073037724, 1072973402, 1072909089, 1072844787, 1072780493, 1072716206, 1072587662, 1072459155, 1072330683, 1072202248, 1072073848, 1071945484, 1071817156, 1071688857, 1071432380, 1071176046, 1070919855, 1070663807, 1070407902, 1070152140, 1069896520, 1069641016, 1069130488, 1068620528, 1068111136, 1067602310, 1067094050, 1066586353, 1066079219, 1065572543, 1064561083, 1063551861, 1062544870, 1061540100, 1060537543, 1059537194, 1058539044, 1057542676, 1055557304, 1053580607, 1051612526, 1049653002, 1047701976, 1045759391, 1043825190, 1041897776, 1038070804, 1034276471, 1030514341, 1026783989, 1023084991, 1019416941, 1015779428, 1012166563, 1005040832, 998031067, 991134326, 984347772, 977668665, 971094355, 964622282, 958232219, 945778193, 933695405, 921966756, 910576205, 899508686, 888750031, 878286909, 868058354, 848504087, 829947579, 812311100, 795524948, 779526430, 764258989, 749671467, 735614922, 709454906, 685366984, 663104445, 642458968, 623253355, 605335869, 588575772, 572701168, 544045301, 518524884, 495632644, 474966985, 456205573, 439086510, 423394675, 408772598, 383095065, 360888828, 341469541, 324324491, 309061493, 295375128, 283023786, 271656946, 252094957, 235530403, 221299889, 208925269, 198052681, 188414279, 179803374, 171942101, 158583141, 147417451, 137927907, 129750477, 122621024, 116342959, 110766757, 105699416, 97149722, 90055730, 84062636, 78923923, 74462668, 70548394, 67082640, 63940968, 58660507, 54296090, 50620610, 47477372, 44754553, 42370087, 40262302, 38354077, 35153100, 32512714, 30292733, 28396778, 26756274, 25321017, 24053358, 22906473, 20984547, 19400822, 18070356, 16934859, 15952914, 15094244, 14336161, 13650532, 12502150, 11556334, 10762096, 10084479, 9498666, 8986521, 8534467, 8125685, 7441181, 6877561, 6404367, 6000723, 5651817, 5346823, 5077644, 4839511], multiplier = 1342172247, shift = 27} : (tensor<1x2x2x16x!quant.uniform<i8:f32, 0.5:-128>>) -> tensor<1x2x2x16x!quant.uniform<i8:f32, 0.1:-128>>
  func.return
}

// -----

func.func @lrn_wide_multiplier(%x: tensor<1x2x2x16x!quant.uniform<i8:f32, 0.5:-128>>) {
  // expected-error @+1 {{'multiplier': shift -20 is below -14: a wide accumulator needs a right shift}}
  %y = qnn.lrn %x {layout = "nhwc", size = 5, table = [1073741824, 1073741321, 1073740817, 1073740314, 1073739811, 1073739307, 1073738804, 1073738301, 1073737798, 1073736791, 1073735784, 1073734778, 1073733771, 1073732764, 1073731758, 1073730751, 1073729745, 1073727731, 1073725718, 1073723705, 1073721692, 1073719679, 1073717666, 1073715652, 1073713639, 1073709613, 1073705587, 1073701561, 1073697535, 1073693508, 1073689482, 1073685456, 1073681430, 1073673378, 1073665327, 1073657275, 1073649224, 1073641172, 1073633121, 1073625070, 1073617019, 1073600918, 1073584817, 1073568717, 1073552617, 1073536518, 1073520419, 1073504321, 1073488224, 1073456030, 1073423839, 1073391651, 1073359464, 1073327280, 1073295098, 1073262918, 1073230741, 1073166393, 1073102053, 1073037724, 1072973402, 1072909089, 1072844787, 1072780493, 1072716206, 1072587662, 1072459155, 1072330683, 1072202248, 1072073848, 1071945484, 1071817156, 1071688857, 1071432380, 1071176046, 1070919855, 1070663807, 1070407902, 1070152140, 1069896520, 1069641016, 1069130488, 1068620528, 1068111136, 1067602310, 1067094050, 1066586353, 1066079219, 1065572543, 1064561083, 1063551861, 1062544870, 1061540100, 1060537543, 1059537194, 1058539044, 1057542676, 1055557304, 1053580607, 1051612526, 1049653002, 1047701976, 1045759391, 1043825190, 1041897776, 1038070804, 1034276471, 1030514341, 1026783989, 1023084991, 1019416941, 1015779428, 1012166563, 1005040832, 998031067, 991134326, 984347772, 977668665, 971094355, 964622282, 958232219, 945778193, 933695405, 921966756, 910576205, 899508686, 888750031, 878286909, 868058354, 848504087, 829947579, 812311100, 795524948, 779526430, 764258989, 749671467, 735614922, 709454906, 685366984, 663104445, 642458968, 623253355, 605335869, 588575772, 572701168, 544045301, 518524884, 495632644, 474966985, 456205573, 439086510, 423394675, 408772598, 383095065, 360888828, 341469541, 324324491, 309061493, 295375128, 283023786, 271656946, 252094957, 235530403, 221299889, 208925269, 198052681, 188414279, 179803374, 171942101, 158583141, 147417451, 137927907, 129750477, 122621024, 116342959, 110766757, 105699416, 97149722, 90055730, 84062636, 78923923, 74462668, 70548394, 67082640, 63940968, 58660507, 54296090, 50620610, 47477372, 44754553, 42370087, 40262302, 38354077, 35153100, 32512714, 30292733, 28396778, 26756274, 25321017, 24053358, 22906473, 20984547, 19400822, 18070356, 16934859, 15952914, 15094244, 14336161, 13650532, 12502150, 11556334, 10762096, 10084479, 9498666, 8986521, 8534467, 8125685, 7441181, 6877561, 6404367, 6000723, 5651817, 5346823, 5077644, 4839511], multiplier = 1342172247, shift = -20} : (tensor<1x2x2x16x!quant.uniform<i8:f32, 0.5:-128>>) -> tensor<1x2x2x16x!quant.uniform<i8:f32, 0.1:-128>>
  func.return
}

// -----

func.func @lrn_16_asymmetric(%x: tensor<1x2x2x16x!quant.uniform<i16:f32, 1.0e-3:4>>) {
  // expected-error @+1 {{a 16-bit qnn.lrn takes and gives symmetric i16; the input is}}
  %y = qnn.lrn %x {layout = "nhwc", size = 5, table = [1073741824, 1073741321, 1073740817, 1073740314, 1073739811, 1073739307, 1073738804, 1073738301, 1073737798, 1073736791, 1073735784, 1073734778, 1073733771, 1073732764, 1073731758, 1073730751, 1073729745, 1073727731, 1073725718, 1073723705, 1073721692, 1073719679, 1073717666, 1073715652, 1073713639, 1073709613, 1073705587, 1073701561, 1073697535, 1073693508, 1073689482, 1073685456, 1073681430, 1073673378, 1073665327, 1073657275, 1073649224, 1073641172, 1073633121, 1073625070, 1073617019, 1073600918, 1073584817, 1073568717, 1073552617, 1073536518, 1073520419, 1073504321, 1073488224, 1073456030, 1073423839, 1073391651, 1073359464, 1073327280, 1073295098, 1073262918, 1073230741, 1073166393, 1073102053, 1073037724, 1072973402, 1072909089, 1072844787, 1072780493, 1072716206, 1072587662, 1072459155, 1072330683, 1072202248, 1072073848, 1071945484, 1071817156, 1071688857, 1071432380, 1071176046, 1070919855, 1070663807, 1070407902, 1070152140, 1069896520, 1069641016, 1069130488, 1068620528, 1068111136, 1067602310, 1067094050, 1066586353, 1066079219, 1065572543, 1064561083, 1063551861, 1062544870, 1061540100, 1060537543, 1059537194, 1058539044, 1057542676, 1055557304, 1053580607, 1051612526, 1049653002, 1047701976, 1045759391, 1043825190, 1041897776, 1038070804, 1034276471, 1030514341, 1026783989, 1023084991, 1019416941, 1015779428, 1012166563, 1005040832, 998031067, 991134326, 984347772, 977668665, 971094355, 964622282, 958232219, 945778193, 933695405, 921966756, 910576205, 899508686, 888750031, 878286909, 868058354, 848504087, 829947579, 812311100, 795524948, 779526430, 764258989, 749671467, 735614922, 709454906, 685366984, 663104445, 642458968, 623253355, 605335869, 588575772, 572701168, 544045301, 518524884, 495632644, 474966985, 456205573, 439086510, 423394675, 408772598, 383095065, 360888828, 341469541, 324324491, 309061493, 295375128, 283023786, 271656946, 252094957, 235530403, 221299889, 208925269, 198052681, 188414279, 179803374, 171942101, 158583141, 147417451, 137927907, 129750477, 122621024, 116342959, 110766757, 105699416, 97149722, 90055730, 84062636, 78923923, 74462668, 70548394, 67082640, 63940968, 58660507, 54296090, 50620610, 47477372, 44754553, 42370087, 40262302, 38354077, 35153100, 32512714, 30292733, 28396778, 26756274, 25321017, 24053358, 22906473, 20984547, 19400822, 18070356, 16934859, 15952914, 15094244, 14336161, 13650532, 12502150, 11556334, 10762096, 10084479, 9498666, 8986521, 8534467, 8125685, 7441181, 6877561, 6404367, 6000723, 5651817, 5346823, 5077644, 4839511], multiplier = 1342172247, shift = 27} : (tensor<1x2x2x16x!quant.uniform<i16:f32, 1.0e-3:4>>) -> tensor<1x2x2x16x!quant.uniform<i16:f32, 1.0e-3>>
  func.return
}

// -----

func.func @lrn_rank(%x: tensor<2x16x!quant.uniform<i8:f32, 0.5:-128>>) {
  // expected-error @+1 {{lrn input must have rank >= 3, got shape [2, 16]}}
  %y = qnn.lrn %x {layout = "nhwc", size = 5, table = [1073741824, 1073741321, 1073740817, 1073740314, 1073739811, 1073739307, 1073738804, 1073738301, 1073737798, 1073736791, 1073735784, 1073734778, 1073733771, 1073732764, 1073731758, 1073730751, 1073729745, 1073727731, 1073725718, 1073723705, 1073721692, 1073719679, 1073717666, 1073715652, 1073713639, 1073709613, 1073705587, 1073701561, 1073697535, 1073693508, 1073689482, 1073685456, 1073681430, 1073673378, 1073665327, 1073657275, 1073649224, 1073641172, 1073633121, 1073625070, 1073617019, 1073600918, 1073584817, 1073568717, 1073552617, 1073536518, 1073520419, 1073504321, 1073488224, 1073456030, 1073423839, 1073391651, 1073359464, 1073327280, 1073295098, 1073262918, 1073230741, 1073166393, 1073102053, 1073037724, 1072973402, 1072909089, 1072844787, 1072780493, 1072716206, 1072587662, 1072459155, 1072330683, 1072202248, 1072073848, 1071945484, 1071817156, 1071688857, 1071432380, 1071176046, 1070919855, 1070663807, 1070407902, 1070152140, 1069896520, 1069641016, 1069130488, 1068620528, 1068111136, 1067602310, 1067094050, 1066586353, 1066079219, 1065572543, 1064561083, 1063551861, 1062544870, 1061540100, 1060537543, 1059537194, 1058539044, 1057542676, 1055557304, 1053580607, 1051612526, 1049653002, 1047701976, 1045759391, 1043825190, 1041897776, 1038070804, 1034276471, 1030514341, 1026783989, 1023084991, 1019416941, 1015779428, 1012166563, 1005040832, 998031067, 991134326, 984347772, 977668665, 971094355, 964622282, 958232219, 945778193, 933695405, 921966756, 910576205, 899508686, 888750031, 878286909, 868058354, 848504087, 829947579, 812311100, 795524948, 779526430, 764258989, 749671467, 735614922, 709454906, 685366984, 663104445, 642458968, 623253355, 605335869, 588575772, 572701168, 544045301, 518524884, 495632644, 474966985, 456205573, 439086510, 423394675, 408772598, 383095065, 360888828, 341469541, 324324491, 309061493, 295375128, 283023786, 271656946, 252094957, 235530403, 221299889, 208925269, 198052681, 188414279, 179803374, 171942101, 158583141, 147417451, 137927907, 129750477, 122621024, 116342959, 110766757, 105699416, 97149722, 90055730, 84062636, 78923923, 74462668, 70548394, 67082640, 63940968, 58660507, 54296090, 50620610, 47477372, 44754553, 42370087, 40262302, 38354077, 35153100, 32512714, 30292733, 28396778, 26756274, 25321017, 24053358, 22906473, 20984547, 19400822, 18070356, 16934859, 15952914, 15094244, 14336161, 13650532, 12502150, 11556334, 10762096, 10084479, 9498666, 8986521, 8534467, 8125685, 7441181, 6877561, 6404367, 6000723, 5651817, 5346823, 5077644, 4839511], multiplier = 1342172247, shift = 27} : (tensor<2x16x!quant.uniform<i8:f32, 0.5:-128>>) -> tensor<2x16x!quant.uniform<i8:f32, 0.1:-128>>
  func.return
}

// -----

// ---- qnn.layer_norm --------------------------------------------------------------------

func.func @layer_norm_weights(%x: tensor<2x4x!quant.uniform<i8:f32, 0.05:3>>) {
  // expected-error @+1 {{there must be one weight and one bias per channel (4), got 3 and 4}}
  %y = qnn.layer_norm %x {biases = [0, 0, 0, 0], epsilon_term = 64, multiplier = 2137224968, shift = 15, weights = [1, 2, 3]} : (tensor<2x4x!quant.uniform<i8:f32, 0.05:3>>) -> tensor<2x4x!quant.uniform<i8:f32, 0.0157:-2>>
  func.return
}

// -----

func.func @layer_norm_weight_bound(%x: tensor<2x4x!quant.uniform<i8:f32, 0.05:3>>) {
  // expected-error @+1 {{the weights of 8-bit values must be below 2048 in magnitude}}
  %y = qnn.layer_norm %x {biases = [0, 0, 0, 0], epsilon_term = 64, multiplier = 2137224968, shift = 15, weights = [1, 2, 3, 4096]} : (tensor<2x4x!quant.uniform<i8:f32, 0.05:3>>) -> tensor<2x4x!quant.uniform<i8:f32, 0.0157:-2>>
  func.return
}

// -----

func.func @layer_norm_16_bias_bound(%x: tensor<2x4x!quant.uniform<i16:f32, 1.25e-4>>) {
  // expected-error @+1 {{the biases of 16-bit values must be below 17592186044416 in magnitude}}
  %y = qnn.layer_norm %x {biases = [0, 0, 0, 17592186044416], epsilon_term = 64, multiplier = 2137224968, shift = 15, weights = [1, 2, 3, 4]} : (tensor<2x4x!quant.uniform<i16:f32, 1.25e-4>>) -> tensor<2x4x!quant.uniform<i16:f32, 2.5e-4>>
  func.return
}

// -----

func.func @layer_norm_16_asymmetric(%x: tensor<2x4x!quant.uniform<i16:f32, 1.25e-4:5>>) {
  // expected-error @+1 {{a 16-bit qnn.layer_norm takes and gives symmetric i16; the input is}}
  %y = qnn.layer_norm %x {biases = [0, 0, 0, 0], epsilon_term = 64, multiplier = 2137224968, shift = 15, weights = [1, 2, 3, 4]} : (tensor<2x4x!quant.uniform<i16:f32, 1.25e-4:5>>) -> tensor<2x4x!quant.uniform<i16:f32, 2.5e-4>>
  func.return
}

// -----

func.func @layer_norm_epsilon(%x: tensor<2x4x!quant.uniform<i8:f32, 0.05:3>>) {
  // expected-error @+1 {{epsilon_term -1 is outside [0, 2^46]}}
  %y = qnn.layer_norm %x {biases = [0, 0, 0, 0], epsilon_term = -1, multiplier = 2137224968, shift = 15, weights = [1, 2, 3, 4]} : (tensor<2x4x!quant.uniform<i8:f32, 0.05:3>>) -> tensor<2x4x!quant.uniform<i8:f32, 0.0157:-2>>
  func.return
}

// -----

// ---- pooling ---------------------------------------------------------------------------

func.func @max_pool_rescales(%x: tensor<1x1x4x4x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{does not match the inferred type tensor<1x1x2x2x!quant.uniform<i8:f32, 0.1>>}}
  %y = qnn.max_pool %x {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x1x4x4x!quant.uniform<i8:f32, 0.1>>) -> tensor<1x1x2x2x!quant.uniform<i8:f32, 0.2>>
  func.return
}

// -----

func.func @average_pool_shape(%x: tensor<1x1x4x4x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{result shape [1, 1, 3, 3] does not match the inferred shape [1, 1, 2, 2]}}
  %y = qnn.average_pool %x {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x1x4x4x!quant.uniform<i8:f32, 0.1>>) -> tensor<1x1x3x3x!quant.uniform<i8:f32, 0.2>>
  func.return
}

// -----

func.func @average_pool_multiplier(%x: tensor<1x1x4x4x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{'multiplier': multiplier -1 is outside [2^30, 2^31)}}
  %y = qnn.average_pool %x {kernel_shape = [2, 2], strides = [2, 2], multiplier = -1} : (tensor<1x1x4x4x!quant.uniform<i8:f32, 0.1>>) -> tensor<1x1x2x2x!quant.uniform<i8:f32, 0.2>>
  func.return
}

// -----

func.func @global_average_pool_shape(%x: tensor<1x2x4x4x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{result shape [1, 2] does not match the inferred shape [1, 2, 1, 1]}}
  %y = qnn.global_average_pool %x : (tensor<1x2x4x4x!quant.uniform<i8:f32, 0.1>>) -> tensor<1x2x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

// ---- qnn.pad and qnn.concat ------------------------------------------------------------

func.func @pad_wrap(%x: tensor<4x!quant.uniform<i8:f32, 0.1:3>>) {
  // expected-error @+1 {{'mode' must be "constant", "reflect" or "edge"; got "wrap"}}
  %y = qnn.pad %x {pads = [1, 1], mode = "wrap"} : (tensor<4x!quant.uniform<i8:f32, 0.1:3>>) -> tensor<6x!quant.uniform<i8:f32, 0.1:3>>
  func.return
}

// -----

func.func @pad_rescales(%x: tensor<4x!quant.uniform<i8:f32, 0.1:3>>) {
  // expected-error @+1 {{does not match the inferred type tensor<6x!quant.uniform<i8:f32, 0.1:3>>}}
  %y = qnn.pad %x {pads = [1, 1]} : (tensor<4x!quant.uniform<i8:f32, 0.1:3>>) -> tensor<6x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

func.func @concat_needs_rescale(%x: tensor<2x!quant.uniform<i8:f32, 0.1>>, %y: tensor<2x!quant.uniform<i8:f32, 0.2>>) {
  // expected-error @+1 {{operand #1 has type !quant.uniform<i8:f32, 0.2>, not the result's !quant.uniform<i8:f32, 0.1>; give 'multipliers' and 'shifts' to requantize it}}
  %z = qnn.concat %x, %y {axis = 0} : (tensor<2x!quant.uniform<i8:f32, 0.1>>, tensor<2x!quant.uniform<i8:f32, 0.2>>) -> tensor<4x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

func.func @concat_one_multiplier_per_operand(%x: tensor<2x!quant.uniform<i8:f32, 0.1>>, %y: tensor<2x!quant.uniform<i8:f32, 0.2>>) {
  // expected-error @+1 {{'multipliers' and 'shifts' need one entry per operand (2)}}
  %z = qnn.concat %x, %y {axis = 0, multipliers = [1073741824], shifts = [-2]} : (tensor<2x!quant.uniform<i8:f32, 0.1>>, tensor<2x!quant.uniform<i8:f32, 0.2>>) -> tensor<4x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

func.func @concat_shape(%x: tensor<2x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{result shape [5] does not match the inferred shape [4]}}
  %z = qnn.concat %x, %x {axis = 0} : (tensor<2x!quant.uniform<i8:f32, 0.1>>, tensor<2x!quant.uniform<i8:f32, 0.1>>) -> tensor<5x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

func.func @resize_type(%x: tensor<1x2x2x1x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{a resize keeps its input's type (requantize its result to change it)}}
  %y = qnn.resize %x {scales = array<f32: 1.0, 2.0, 2.0, 1.0>} : (tensor<1x2x2x1x!quant.uniform<i8:f32, 0.1>>) -> tensor<1x4x4x1x!quant.uniform<i8:f32, 0.2>>
  func.return
}

// -----

func.func @resize_mode(%x: tensor<1x2x2x1x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{'coordinate_transformation_mode' must be one of half_pixel, pytorch_half_pixel, asymmetric, align_corners; got "tf_half_pixel_for_nn"}}
  %y = qnn.resize %x {scales = array<f32: 1.0, 2.0, 2.0, 1.0>, coordinate_transformation_mode = "tf_half_pixel_for_nn"} : (tensor<1x2x2x1x!quant.uniform<i8:f32, 0.1>>) -> tensor<1x4x4x1x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

func.func @resize_nearest(%x: tensor<1x2x2x1x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{'mode' must be "linear" (a nearest resize is nn.resize), got "nearest"}}
  %y = qnn.resize %x {scales = array<f32: 1.0, 2.0, 2.0, 1.0>, mode = "nearest"} : (tensor<1x2x2x1x!quant.uniform<i8:f32, 0.1>>) -> tensor<1x4x4x1x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

func.func @resize_unscaled_axis(%x: tensor<1x2x2x1x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{axis 3 has scale 1 but 1 -> 2 elements}}
  %y = qnn.resize %x {scales = array<f32: 1.0, 2.0, 2.0, 1.0>} : (tensor<1x2x2x1x!quant.uniform<i8:f32, 0.1>>) -> tensor<1x4x4x2x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// ---- TFLite's roundings and softmax (docs/tflite.md) ---------------------------------

// -----

func.func @requantize_rounding_unknown(%acc: tensor<4xi32>) {
  // expected-error @+1 {{'rounding' must be one of half_even, half_up, double_up, double_away; got "half_down"}}
  %y = qnn.requantize %acc {multiplier = [1073741824], shift = [0], rounding = "half_down"} : (tensor<4xi32>) -> tensor<4x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

func.func @requantize_wide_rounding(%acc: tensor<4xi64>) {
  // expected-error @+1 {{a wide (i64) input is requantized half to even}}
  %y = qnn.requantize %acc {multiplier = [1073741824], shift = [0], rounding = "double_up"} : (tensor<4xi64>) -> tensor<4x!quant.uniform<i16:f32, 0.1>>
  func.return
}

// -----

func.func @add_input_rounding(%x: tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>) {
  // expected-error @+1 {{'input_rounding' must be one of half_even, half_up, double_up, double_away; got "up"}}
  %y = qnn.add %x, %x {lhs_multiplier = 1073741824, lhs_shift = 0, rhs_multiplier = 1073741824, rhs_shift = 0, multiplier = 1073741824, shift = 20, input_rounding = "up"} : (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>, tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>
  func.return
}

// -----

func.func @sub_rounding(%x: tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>) {
  // expected-error @+1 {{'rounding' must be one of half_even, half_up, double_up, double_away; got "half_away"}}
  %y = qnn.sub %x, %x {lhs_multiplier = 1073741824, lhs_shift = 0, rhs_multiplier = 1073741824, rhs_shift = 0, multiplier = 1073741824, shift = 20, rounding = "half_away"} : (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>, tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>
  func.return
}

// -----

func.func @mul_rounding(%x: tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>) {
  // expected-error @+1 {{'rounding' must be one of}}
  %y = qnn.mul %x, %x {multiplier = 1073741824, shift = 0, rounding = "away"} : (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>, tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>
  func.return
}

// -----

func.func @average_pool_rounding(%x: tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>) {
  // expected-error @+1 {{'rounding' must be one of half_even, half_away; got "double_up"}}
  %y = qnn.average_pool %x {kernel_shape = [2, 2], layout = "nhwc", rounding = "double_up"} : (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x3x3x8x!quant.uniform<i8:f32, 0.1:-3>>
  func.return
}

// -----

func.func @average_pool_half_away_multiplier(%x: tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>) {
  // expected-error @+1 {{rounding "half_away" averages stored values: the multiplier is 1}}
  %y = qnn.average_pool %x {kernel_shape = [2, 2], layout = "nhwc", rounding = "half_away", shift = -2} : (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x3x3x8x!quant.uniform<i8:f32, 0.1:-3>>
  func.return
}

// -----

func.func @average_pool_half_away_type(%x: tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>) {
  // expected-error @+1 {{rounding "half_away" averages stored values: the result has the input's type}}
  %y = qnn.average_pool %x {kernel_shape = [2, 2], layout = "nhwc", rounding = "half_away"} : (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x3x3x8x!quant.uniform<i8:f32, 0.1:-2>>
  func.return
}

// -----

func.func @global_average_pool_rounding(%x: tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>) {
  // expected-error @+1 {{'rounding' must be one of half_even, half_up, double_up, double_away; got "half_away"}}
  %y = qnn.global_average_pool %x {layout = "nhwc", rounding = "half_away"} : (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x1x1x8x!quant.uniform<i8:f32, 0.1:-3>>
  func.return
}

// -----

func.func @tflite_softmax_table(%x: tensor<2x10x!quant.uniform<i8:f32, 0.05:3>>) {
  // expected-error @+1 {{the table has 2 entries, expected 256}}
  %y = qnn.tflite_softmax %x {table = array<f32: 1.0, 0.5>} : (tensor<2x10x!quant.uniform<i8:f32, 0.05:3>>) -> tensor<2x10x!quant.uniform<i8:f32, 0.00390625:-128>>
  func.return
}

// -----

func.func @tflite_softmax_negative_entry(%x: tensor<2x10x!quant.uniform<i8:f32, 0.05:3>>) {
  // expected-error @+1 {{the table's entries must be finite and non-negative}}
  %y = qnn.tflite_softmax %x {table = array<f32: 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, -1.0>} : (tensor<2x10x!quant.uniform<i8:f32, 0.05:3>>) -> tensor<2x10x!quant.uniform<i8:f32, 0.00390625:-128>>
  func.return
}

// -----

func.func @tflite_softmax_storage(%x: tensor<2x10x!quant.uniform<i16:f32, 0.05>>) {
  // expected-error @+1 {{the input must have i8 storage, got i16}}
  %y = qnn.tflite_softmax %x {table = array<f32: 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0>} : (tensor<2x10x!quant.uniform<i16:f32, 0.05>>) -> tensor<2x10x!quant.uniform<i8:f32, 0.00390625:-128>>
  func.return
}

// -----

func.func @global_average_pool_bias_half_even(%x: tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>) {
  // expected-error @+1 {{a 'bias' takes one of TFLite's roundings (the mean of stored values)}}
  %y = qnn.global_average_pool %x {layout = "nhwc", bias = 3} : (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x1x1x8x!quant.uniform<i8:f32, 0.1:-3>>
  func.return
}
