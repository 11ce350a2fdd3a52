// RUN: irc-opt %s | irc-opt | FileCheck %s
// RUN: irc-opt %s --mlir-print-op-generic | irc-opt | FileCheck %s
// RUN: irc-opt %s -p canonicalize,fold-constants | FileCheck %s

// Every qnn op round-trips through its custom syntax and the generic form, and the
// float-level canonicalization and constant folding leave qnn ops alone.

// A conv with per-channel weights and an i32 bias, requantized per channel with a
// fused relu (clamp_min = the output zero point).
// CHECK-LABEL: func.func @conv_requantize
func.func @conv_requantize(%x: tensor<1x3x8x8x!quant.uniform<i8:f32, 0.02:-5>>) -> tensor<1x2x4x4x!quant.uniform<i8:f32, 0.05:-7>> {
  // CHECK-NEXT: %w = qnn.constant {{dense.*}} : tensor<2x3x3x3xi8> to tensor<2x3x3x3x!quant.uniform<i8<-127:127>:f32:0, {0.01, 0.02}>>
  %w = qnn.constant dense<[[[[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[1, 2, 3], [4, 5, 6], [7, 8, 9]]], [[[-127, 2, 3], [4, 5, 6], [7, 8, 127]], [[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[1, 2, 3], [4, 5, 6], [7, 8, 9]]]]> : tensor<2x3x3x3xi8> to tensor<2x3x3x3x!quant.uniform<i8<-127:127>:f32:0, {0.01, 0.02}>>
  // CHECK-NEXT: %b = nn.constant dense<[100, -100]> : tensor<2xi32>
  %b = nn.constant dense<[100, -100]> : tensor<2xi32>
  // CHECK-NEXT: %acc = qnn.conv %x, %w, %b {pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x3x8x8x!quant.uniform<i8:f32, 0.02:-5>>, tensor<2x3x3x3x!quant.uniform<i8<-127:127>:f32:0, {0.01, 0.02}>>, tensor<2xi32>) -> tensor<1x2x4x4xi32>
  %acc = qnn.conv %x, %w, %b {pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x3x8x8x!quant.uniform<i8:f32, 0.02:-5>>, tensor<2x3x3x3x!quant.uniform<i8<-127:127>:f32:0, {0.01, 0.02}>>, tensor<2xi32>) -> tensor<1x2x4x4xi32>
  // CHECK-NEXT: %y = qnn.requantize %acc {axis = 1, clamp_min = -7, multiplier = [1099511600, 1099511600], shift = [7, 6]} : (tensor<1x2x4x4xi32>) -> tensor<1x2x4x4x!quant.uniform<i8:f32, 0.05:-7>>
  %y = qnn.requantize %acc {axis = 1, clamp_min = -7, multiplier = [1099511600, 1099511600], shift = [7, 6]} : (tensor<1x2x4x4xi32>) -> tensor<1x2x4x4x!quant.uniform<i8:f32, 0.05:-7>>
  func.return %y : tensor<1x2x4x4x!quant.uniform<i8:f32, 0.05:-7>>
}

// int16 activations (16x8): a 16-bit input accumulates in the wide i64 accumulator
// with an i64 bias, requantized to int16; a matmul of two 16-bit operands too.
// CHECK-LABEL: func.func @sixteen_bit
func.func @sixteen_bit(%x: tensor<1x2x4x4x!quant.uniform<i16:f32, 0.001>>, %w: tensor<3x2x1x1x!quant.uniform<i8<-127:127>:f32:0, {0.01, 0.02, 0.03}>>, %b: tensor<3xi64>, %p: tensor<2x4x!quant.uniform<i16:f32, 0.001>>, %q: tensor<4x2x!quant.uniform<i16:f32, 0.002>>) -> (tensor<1x3x4x4x!quant.uniform<i16:f32, 0.002>>, tensor<2x2xi64>) {
  // CHECK-NEXT: %acc = qnn.conv %x, %w, %b : (tensor<1x2x4x4x!quant.uniform<i16:f32, 0.001>>, tensor<3x2x1x1x!quant.uniform<i8<-127:127>:f32:0, {0.01, 0.02, 0.03}>>, tensor<3xi64>) -> tensor<1x3x4x4xi64>
  %acc = qnn.conv %x, %w, %b : (tensor<1x2x4x4x!quant.uniform<i16:f32, 0.001>>, tensor<3x2x1x1x!quant.uniform<i8<-127:127>:f32:0, {0.01, 0.02, 0.03}>>, tensor<3xi64>) -> tensor<1x3x4x4xi64>
  // CHECK-NEXT: %y = qnn.requantize %acc {axis = 1, multiplier = [1374389535, 1374389535, 2061584302], shift = [7, 6, 6]} : (tensor<1x3x4x4xi64>) -> tensor<1x3x4x4x!quant.uniform<i16:f32, 0.002>>
  %y = qnn.requantize %acc {axis = 1, multiplier = [1374389535, 1374389535, 2061584302], shift = [7, 6, 6]} : (tensor<1x3x4x4xi64>) -> tensor<1x3x4x4x!quant.uniform<i16:f32, 0.002>>
  // CHECK-NEXT: %m = qnn.matmul %p, %q : (tensor<2x4x!quant.uniform<i16:f32, 0.001>>, tensor<4x2x!quant.uniform<i16:f32, 0.002>>) -> tensor<2x2xi64>
  %m = qnn.matmul %p, %q : (tensor<2x4x!quant.uniform<i16:f32, 0.001>>, tensor<4x2x!quant.uniform<i16:f32, 0.002>>) -> tensor<2x2xi64>
  func.return %y, %m : tensor<1x3x4x4x!quant.uniform<i16:f32, 0.002>>, tensor<2x2xi64>
}

// Small constants print inline; a u8 constant has ui8 storage; discardable attributes
// follow the type.
// CHECK-LABEL: func.func @small_constants
func.func @small_constants() -> (tensor<2x!quant.uniform<i8<-127:127>:f32, 0.5>>, tensor<3x!quant.uniform<u8:f32, 0.1:128>>) {
  // CHECK-NEXT: %c = qnn.constant dense<[-127, 127]> : tensor<2xi8> to tensor<2x!quant.uniform<i8<-127:127>:f32, 0.5>>
  %c = qnn.constant dense<[-127, 127]> : tensor<2xi8> to tensor<2x!quant.uniform<i8<-127:127>:f32, 0.5>>
  // CHECK-NEXT: %u = qnn.constant dense<[0, 128, 255]> : tensor<3xui8> to tensor<3x!quant.uniform<u8:f32, 0.1:128>> {irc.ddr = array<i64: 128>}
  %u = qnn.constant dense<[0, 128, 255]> : tensor<3xui8> to tensor<3x!quant.uniform<u8:f32, 0.1:128>> {irc.ddr = array<i64: 128>}
  func.return %c, %u : tensor<2x!quant.uniform<i8<-127:127>:f32, 0.5>>, tensor<3x!quant.uniform<u8:f32, 0.1:128>>
}

// Depthwise and channels-last convolutions, and a transposed convolution whose
// per-axis weight is quantized along its output-channel axis 1.
// CHECK-LABEL: func.func @conv_variants
func.func @conv_variants(%x: tensor<1x4x6x6x!quant.uniform<u8:f32, 0.1:128>>, %dw: tensor<4x1x3x3x!quant.uniform<i8:f32, 0.5>>, %xl: tensor<1x6x6x4x!quant.uniform<i8:f32, 0.1>>, %wl: tensor<2x3x3x4x!quant.uniform<i8<-127:127>:f32:0, {0.1, 0.2}>>, %wt: tensor<4x2x2x2x!quant.uniform<i8<-127:127>:f32:1, {0.1, 0.2}>>) -> (tensor<1x4x4x4xi32>, tensor<1x6x6x2xi32>, tensor<1x2x12x12xi32>) {
  // CHECK-NEXT: %depthwise = qnn.conv %x, %dw {group = 4} : (tensor<1x4x6x6x!quant.uniform<u8:f32, 0.1:128>>, tensor<4x1x3x3x!quant.uniform<i8:f32, 0.5>>) -> tensor<1x4x4x4xi32>
  %depthwise = qnn.conv %x, %dw {group = 4} : (tensor<1x4x6x6x!quant.uniform<u8:f32, 0.1:128>>, tensor<4x1x3x3x!quant.uniform<i8:f32, 0.5>>) -> tensor<1x4x4x4xi32>
  // CHECK-NEXT: %nhwc = qnn.conv %xl, %wl {layout = "nhwc", pads = [1, 1, 1, 1]} : (tensor<1x6x6x4x!quant.uniform<i8:f32, 0.1>>, tensor<2x3x3x4x!quant.uniform<i8<-127:127>:f32:0, {0.1, 0.2}>>) -> tensor<1x6x6x2xi32>
  %nhwc = qnn.conv %xl, %wl {layout = "nhwc", pads = [1, 1, 1, 1]} : (tensor<1x6x6x4x!quant.uniform<i8:f32, 0.1>>, tensor<2x3x3x4x!quant.uniform<i8<-127:127>:f32:0, {0.1, 0.2}>>) -> tensor<1x6x6x2xi32>
  // CHECK-NEXT: %up = qnn.conv_transpose %x, %wt {strides = [2, 2]} : (tensor<1x4x6x6x!quant.uniform<u8:f32, 0.1:128>>, tensor<4x2x2x2x!quant.uniform<i8<-127:127>:f32:1, {0.1, 0.2}>>) -> tensor<1x2x12x12xi32>
  %up = qnn.conv_transpose %x, %wt {strides = [2, 2]} : (tensor<1x4x6x6x!quant.uniform<u8:f32, 0.1:128>>, tensor<4x2x2x2x!quant.uniform<i8<-127:127>:f32:1, {0.1, 0.2}>>) -> tensor<1x2x12x12xi32>
  func.return %depthwise, %nhwc, %up : tensor<1x4x4x4xi32>, tensor<1x6x6x2xi32>, tensor<1x2x12x12xi32>
}

// Channels last, the transposed convolution's weight is (C, k..., M/group), quantized
// along its last axis.
// CHECK-LABEL: func.func @conv_transpose_nhwc
func.func @conv_transpose_nhwc(%x: tensor<1x5x3x4x!quant.uniform<i8:f32, 0.1>>, %w: tensor<4x2x2x3x!quant.uniform<i8:f32:3, {0.1, 0.2, 0.3}>>) -> tensor<1x10x6x3xi32> {
  // CHECK-NEXT: %y = qnn.conv_transpose %x, %w {layout = "nhwc", strides = [2, 2]} : (tensor<1x5x3x4x!quant.uniform<i8:f32, 0.1>>, tensor<4x2x2x3x!quant.uniform<i8:f32:3, {0.1, 0.2, 0.3}>>) -> tensor<1x10x6x3xi32>
  %y = qnn.conv_transpose %x, %w {layout = "nhwc", strides = [2, 2]} : (tensor<1x5x3x4x!quant.uniform<i8:f32, 0.1>>, tensor<4x2x2x3x!quant.uniform<i8:f32:3, {0.1, 0.2, 0.3}>>) -> tensor<1x10x6x3xi32>
  func.return %y : tensor<1x10x6x3xi32>
}

// CHECK-LABEL: func.func @matrix_products
func.func @matrix_products(%a: tensor<2x8x!quant.uniform<i8:f32, 0.1:3>>, %w: tensor<8x4x!quant.uniform<i8<-127:127>:f32:1, {0.1, 0.2, 0.3, 0.4}>>, %wt: tensor<4x8x!quant.uniform<i8:f32, 0.1>>, %b: tensor<4xi32>) -> (tensor<2x4xi32>, tensor<2x4xi32>) {
  // CHECK-NEXT: %mm = qnn.matmul %a, %w : (tensor<2x8x!quant.uniform<i8:f32, 0.1:3>>, tensor<8x4x!quant.uniform<i8<-127:127>:f32:1, {0.1, 0.2, 0.3, 0.4}>>) -> tensor<2x4xi32>
  %mm = qnn.matmul %a, %w : (tensor<2x8x!quant.uniform<i8:f32, 0.1:3>>, tensor<8x4x!quant.uniform<i8<-127:127>:f32:1, {0.1, 0.2, 0.3, 0.4}>>) -> tensor<2x4xi32>
  // CHECK-NEXT: %fc = qnn.gemm %a, %wt, %b {trans_b = true} : (tensor<2x8x!quant.uniform<i8:f32, 0.1:3>>, tensor<4x8x!quant.uniform<i8:f32, 0.1>>, tensor<4xi32>) -> tensor<2x4xi32>
  %fc = qnn.gemm %a, %wt, %b {trans_b = true} : (tensor<2x8x!quant.uniform<i8:f32, 0.1:3>>, tensor<4x8x!quant.uniform<i8:f32, 0.1>>, tensor<4xi32>) -> tensor<2x4xi32>
  func.return %mm, %fc : tensor<2x4xi32>, tensor<2x4xi32>
}

// Requantizing a quantized tensor to another scale (its zero point is subtracted first).
// CHECK-LABEL: func.func @requantize_quantized
func.func @requantize_quantized(%x: tensor<4x!quant.uniform<i8:f32, 0.1:3>>) -> tensor<4x!quant.uniform<u8:f32, 0.2:128>> {
  // CHECK-NEXT: %y = qnn.requantize %x {multiplier = [1073741824], shift = [0]} : (tensor<4x!quant.uniform<i8:f32, 0.1:3>>) -> tensor<4x!quant.uniform<u8:f32, 0.2:128>>
  %y = qnn.requantize %x {multiplier = [1073741824], shift = [0]} : (tensor<4x!quant.uniform<i8:f32, 0.1:3>>) -> tensor<4x!quant.uniform<u8:f32, 0.2:128>>
  func.return %y : tensor<4x!quant.uniform<u8:f32, 0.2:128>>
}

// left_shift = 20 is the default and is not printed.
// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%x: tensor<1x4x2x2x!quant.uniform<i8:f32, 0.1:-3>>, %y: tensor<1x4x1x1x!quant.uniform<i8:f32, 0.02:5>>) -> (tensor<1x4x2x2x!quant.uniform<i8:f32, 0.05:-1>>, tensor<1x4x2x2x!quant.uniform<i8:f32, 0.01>>, tensor<1x4x2x2x!quant.uniform<i8:f32, 0.1:-3>>) {
  // CHECK-NEXT: %sum = qnn.add %x, %y {clamp_min = -1, left_shift = 18, lhs_multiplier = 1073741824, lhs_shift = 0, multiplier = 1717986918, rhs_multiplier = 1717986918, rhs_shift = 2, shift = -16} : (tensor<1x4x2x2x!quant.uniform<i8:f32, 0.1:-3>>, tensor<1x4x1x1x!quant.uniform<i8:f32, 0.02:5>>) -> tensor<1x4x2x2x!quant.uniform<i8:f32, 0.05:-1>>
  %sum = qnn.add %x, %y {clamp_min = -1, left_shift = 18, lhs_multiplier = 1073741824, lhs_shift = 0, multiplier = 1717986918, rhs_multiplier = 1717986918, rhs_shift = 2, shift = -16} : (tensor<1x4x2x2x!quant.uniform<i8:f32, 0.1:-3>>, tensor<1x4x1x1x!quant.uniform<i8:f32, 0.02:5>>) -> tensor<1x4x2x2x!quant.uniform<i8:f32, 0.05:-1>>
  // CHECK-NEXT: %product = qnn.mul %x, %y {multiplier = 1717986918, shift = 0} : (tensor<1x4x2x2x!quant.uniform<i8:f32, 0.1:-3>>, tensor<1x4x1x1x!quant.uniform<i8:f32, 0.02:5>>) -> tensor<1x4x2x2x!quant.uniform<i8:f32, 0.01>>
  %product = qnn.mul %x, %y {multiplier = 1717986918, shift = 0} : (tensor<1x4x2x2x!quant.uniform<i8:f32, 0.1:-3>>, tensor<1x4x1x1x!quant.uniform<i8:f32, 0.02:5>>) -> tensor<1x4x2x2x!quant.uniform<i8:f32, 0.01>>
  // CHECK-NEXT: %relu = qnn.clamp %x {clamp_min = -3} : tensor<1x4x2x2x!quant.uniform<i8:f32, 0.1:-3>>
  %relu = qnn.clamp %x {clamp_min = -3} : tensor<1x4x2x2x!quant.uniform<i8:f32, 0.1:-3>>
  func.return %sum, %product, %relu : tensor<1x4x2x2x!quant.uniform<i8:f32, 0.05:-1>>, tensor<1x4x2x2x!quant.uniform<i8:f32, 0.01>>, tensor<1x4x2x2x!quant.uniform<i8:f32, 0.1:-3>>
}

// CHECK-LABEL: func.func @pooling
func.func @pooling(%x: tensor<1x2x5x5x!quant.uniform<i8:f32, 0.1:-3>>) -> (tensor<1x2x3x3x!quant.uniform<i8:f32, 0.1:-3>>, tensor<1x2x3x3x!quant.uniform<i8:f32, 0.05:10>>, tensor<1x2x1x1x!quant.uniform<i8:f32, 0.1:-3>>) {
  // CHECK-NEXT: %max = qnn.max_pool %x {kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x2x5x5x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x2x3x3x!quant.uniform<i8:f32, 0.1:-3>>
  %max = qnn.max_pool %x {kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x2x5x5x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x2x3x3x!quant.uniform<i8:f32, 0.1:-3>>
  // CHECK-NEXT: %mean = qnn.average_pool %x {count_include_pad = true, kernel_shape = [3, 3], pads = [1, 1, 1, 1], shift = -2, strides = [2, 2]} : (tensor<1x2x5x5x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x2x3x3x!quant.uniform<i8:f32, 0.05:10>>
  %mean = qnn.average_pool %x {count_include_pad = true, kernel_shape = [3, 3], multiplier = 1073741824, pads = [1, 1, 1, 1], shift = -2, strides = [2, 2]} : (tensor<1x2x5x5x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x2x3x3x!quant.uniform<i8:f32, 0.05:10>>
  // CHECK-NEXT: %global = qnn.global_average_pool %x : (tensor<1x2x5x5x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x2x1x1x!quant.uniform<i8:f32, 0.1:-3>>
  %global = qnn.global_average_pool %x {multiplier = 1073741824, shift = -1} : (tensor<1x2x5x5x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x2x1x1x!quant.uniform<i8:f32, 0.1:-3>>
  func.return %max, %mean, %global : tensor<1x2x3x3x!quant.uniform<i8:f32, 0.1:-3>>, tensor<1x2x3x3x!quant.uniform<i8:f32, 0.05:10>>, tensor<1x2x1x1x!quant.uniform<i8:f32, 0.1:-3>>
}

// CHECK-LABEL: func.func @data_movement
func.func @data_movement(%x: tensor<1x2x3x3x!quant.uniform<i8:f32, 0.1:-3>>, %y: tensor<1x1x3x3x!quant.uniform<i8:f32, 0.2:4>>) -> (tensor<1x2x5x5x!quant.uniform<i8:f32, 0.1:-3>>, tensor<1x3x3x3x!quant.uniform<i8:f32, 0.1:-3>>, tensor<1x4x3x3x!quant.uniform<i8:f32, 0.1:-3>>) {
  // CHECK-NEXT: %padded = qnn.pad %x {pads = [0, 0, 1, 1, 0, 0, 1, 1]} : (tensor<1x2x3x3x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x2x5x5x!quant.uniform<i8:f32, 0.1:-3>>
  %padded = qnn.pad %x {pads = [0, 0, 1, 1, 0, 0, 1, 1]} : (tensor<1x2x3x3x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x2x5x5x!quant.uniform<i8:f32, 0.1:-3>>
  // CHECK-NEXT: %joined = qnn.concat %x, %y {axis = 1, multipliers = [1073741824, 1073741824], shifts = [-1, -2]} : (tensor<1x2x3x3x!quant.uniform<i8:f32, 0.1:-3>>, tensor<1x1x3x3x!quant.uniform<i8:f32, 0.2:4>>) -> tensor<1x3x3x3x!quant.uniform<i8:f32, 0.1:-3>>
  %joined = qnn.concat %x, %y {axis = 1, multipliers = [1073741824, 1073741824], shifts = [-1, -2]} : (tensor<1x2x3x3x!quant.uniform<i8:f32, 0.1:-3>>, tensor<1x1x3x3x!quant.uniform<i8:f32, 0.2:4>>) -> tensor<1x3x3x3x!quant.uniform<i8:f32, 0.1:-3>>
  // CHECK-NEXT: %same = qnn.concat %x, %x {axis = 1} : (tensor<1x2x3x3x!quant.uniform<i8:f32, 0.1:-3>>, tensor<1x2x3x3x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x4x3x3x!quant.uniform<i8:f32, 0.1:-3>>
  %same = qnn.concat %x, %x {axis = 1} : (tensor<1x2x3x3x!quant.uniform<i8:f32, 0.1:-3>>, tensor<1x2x3x3x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x4x3x3x!quant.uniform<i8:f32, 0.1:-3>>
  func.return %padded, %joined, %same : tensor<1x2x5x5x!quant.uniform<i8:f32, 0.1:-3>>, tensor<1x3x3x3x!quant.uniform<i8:f32, 0.1:-3>>, tensor<1x4x3x3x!quant.uniform<i8:f32, 0.1:-3>>
}

// The table has 256 entries: here the identity map.
// CHECK-LABEL: func.func @lut
func.func @lut(%x: tensor<8x!quant.uniform<i8:f32, 0.1>>) -> tensor<8x!quant.uniform<i8:f32, 0.1>> {
  // CHECK-NEXT: %y = qnn.lut %x {function = "sigmoid", table = [-128, -127, {{.*}}, 126, 127]} : tensor<8x!quant.uniform<i8:f32, 0.1>>
  %y = qnn.lut %x {function = "sigmoid", table = [-128, -127, -126, -125, -124, -123, -122, -121, -120, -119, -118, -117, -116, -115, -114, -113, -112, -111, -110, -109, -108, -107, -106, -105, -104, -103, -102, -101, -100, -99, -98, -97, -96, -95, -94, -93, -92, -91, -90, -89, -88, -87, -86, -85, -84, -83, -82, -81, -80, -79, -78, -77, -76, -75, -74, -73, -72, -71, -70, -69, -68, -67, -66, -65, -64, -63, -62, -61, -60, -59, -58, -57, -56, -55, -54, -53, -52, -51, -50, -49, -48, -47, -46, -45, -44, -43, -42, -41, -40, -39, -38, -37, -36, -35, -34, -33, -32, -31, -30, -29, -28, -27, -26, -25, -24, -23, -22, -21, -20, -19, -18, -17, -16, -15, -14, -13, -12, -11, -10, -9, -8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127]} : tensor<8x!quant.uniform<i8:f32, 0.1>>
  func.return %y : tensor<8x!quant.uniform<i8:f32, 0.1>>
}

// A 16-bit table has 513 entries, interpolated: here the identity map.
// CHECK-LABEL: func.func @lut16
func.func @lut16(%x: tensor<8x!quant.uniform<i16:f32, 0.001>>) -> tensor<8x!quant.uniform<i16:f32, 0.001>> {
  // CHECK-NEXT: %y = qnn.lut %x {function = "tanh", table = [-32768, -32640, {{.*}}, 32640, 32767]} : tensor<8x!quant.uniform<i16:f32, 0.001>>
  %y = qnn.lut %x {function = "tanh", table = [-32768, -32640, -32512, -32384, -32256, -32128, -32000, -31872, -31744, -31616, -31488, -31360, -31232, -31104, -30976, -30848, -30720, -30592, -30464, -30336, -30208, -30080, -29952, -29824, -29696, -29568, -29440, -29312, -29184, -29056, -28928, -28800, -28672, -28544, -28416, -28288, -28160, -28032, -27904, -27776, -27648, -27520, -27392, -27264, -27136, -27008, -26880, -26752, -26624, -26496, -26368, -26240, -26112, -25984, -25856, -25728, -25600, -25472, -25344, -25216, -25088, -24960, -24832, -24704, -24576, -24448, -24320, -24192, -24064, -23936, -23808, -23680, -23552, -23424, -23296, -23168, -23040, -22912, -22784, -22656, -22528, -22400, -22272, -22144, -22016, -21888, -21760, -21632, -21504, -21376, -21248, -21120, -20992, -20864, -20736, -20608, -20480, -20352, -20224, -20096, -19968, -19840, -19712, -19584, -19456, -19328, -19200, -19072, -18944, -18816, -18688, -18560, -18432, -18304, -18176, -18048, -17920, -17792, -17664, -17536, -17408, -17280, -17152, -17024, -16896, -16768, -16640, -16512, -16384, -16256, -16128, -16000, -15872, -15744, -15616, -15488, -15360, -15232, -15104, -14976, -14848, -14720, -14592, -14464, -14336, -14208, -14080, -13952, -13824, -13696, -13568, -13440, -13312, -13184, -13056, -12928, -12800, -12672, -12544, -12416, -12288, -12160, -12032, -11904, -11776, -11648, -11520, -11392, -11264, -11136, -11008, -10880, -10752, -10624, -10496, -10368, -10240, -10112, -9984, -9856, -9728, -9600, -9472, -9344, -9216, -9088, -8960, -8832, -8704, -8576, -8448, -8320, -8192, -8064, -7936, -7808, -7680, -7552, -7424, -7296, -7168, -7040, -6912, -6784, -6656, -6528, -6400, -6272, -6144, -6016, -5888, -5760, -5632, -5504, -5376, -5248, -5120, -4992, -4864, -4736, -4608, -4480, -4352, -4224, -4096, -3968, -3840, -3712, -3584, -3456, -3328, -3200, -3072, -2944, -2816, -2688, -2560, -2432, -2304, -2176, -2048, -1920, -1792, -1664, -1536, -1408, -1280, -1152, -1024, -896, -768, -640, -512, -384, -256, -128, 0, 128, 256, 384, 512, 640, 768, 896, 1024, 1152, 1280, 1408, 1536, 1664, 1792, 1920, 2048, 2176, 2304, 2432, 2560, 2688, 2816, 2944, 3072, 3200, 3328, 3456, 3584, 3712, 3840, 3968, 4096, 4224, 4352, 4480, 4608, 4736, 4864, 4992, 5120, 5248, 5376, 5504, 5632, 5760, 5888, 6016, 6144, 6272, 6400, 6528, 6656, 6784, 6912, 7040, 7168, 7296, 7424, 7552, 7680, 7808, 7936, 8064, 8192, 8320, 8448, 8576, 8704, 8832, 8960, 9088, 9216, 9344, 9472, 9600, 9728, 9856, 9984, 10112, 10240, 10368, 10496, 10624, 10752, 10880, 11008, 11136, 11264, 11392, 11520, 11648, 11776, 11904, 12032, 12160, 12288, 12416, 12544, 12672, 12800, 12928, 13056, 13184, 13312, 13440, 13568, 13696, 13824, 13952, 14080, 14208, 14336, 14464, 14592, 14720, 14848, 14976, 15104, 15232, 15360, 15488, 15616, 15744, 15872, 16000, 16128, 16256, 16384, 16512, 16640, 16768, 16896, 17024, 17152, 17280, 17408, 17536, 17664, 17792, 17920, 18048, 18176, 18304, 18432, 18560, 18688, 18816, 18944, 19072, 19200, 19328, 19456, 19584, 19712, 19840, 19968, 20096, 20224, 20352, 20480, 20608, 20736, 20864, 20992, 21120, 21248, 21376, 21504, 21632, 21760, 21888, 22016, 22144, 22272, 22400, 22528, 22656, 22784, 22912, 23040, 23168, 23296, 23424, 23552, 23680, 23808, 23936, 24064, 24192, 24320, 24448, 24576, 24704, 24832, 24960, 25088, 25216, 25344, 25472, 25600, 25728, 25856, 25984, 26112, 26240, 26368, 26496, 26624, 26752, 26880, 27008, 27136, 27264, 27392, 27520, 27648, 27776, 27904, 28032, 28160, 28288, 28416, 28544, 28672, 28800, 28928, 29056, 29184, 29312, 29440, 29568, 29696, 29824, 29952, 30080, 30208, 30336, 30464, 30592, 30720, 30848, 30976, 31104, 31232, 31360, 31488, 31616, 31744, 31872, 32000, 32128, 32256, 32384, 32512, 32640, 32767]} : tensor<8x!quant.uniform<i16:f32, 0.001>>
  func.return %y : tensor<8x!quant.uniform<i16:f32, 0.001>>
}

// A softmax over the last axis: the exp table of s_in = 0.1 in Q15 and the
// multiplier of 2^-15 / s_out (2^30 * 2^-37 = 2^-7 for s_out = 1/256).
// CHECK-LABEL: func.func @softmax
func.func @softmax(%x: tensor<2x8x!quant.uniform<i8:f32, 0.1>>) -> tensor<2x8x!quant.uniform<i8:f32, 0.00390625:-128>> {
  // CHECK-NEXT: %p = qnn.softmax %x {multiplier = 1073741824, shift = 6, table = [32767, 29649, {{.*}}, 0, 0]} : (tensor<2x8x!quant.uniform<i8:f32, 0.1>>) -> tensor<2x8x!quant.uniform<i8:f32, 0.00390625:-128>>
  %p = qnn.softmax %x {multiplier = 1073741824, shift = 6, table = [32767, 29649, 26827, 24274, 21964, 19874, 17983, 16272, 14723, 13322, 12054, 10907, 9869, 8930, 8080, 7311, 6616, 5986, 5416, 4901, 4435, 4013, 3631, 3285, 2973, 2690, 2434, 2202, 1993, 1803, 1631, 1476, 1336, 1209, 1094, 989, 895, 810, 733, 663, 600, 543, 491, 445, 402, 364, 329, 298, 270, 244, 221, 200, 181, 164, 148, 134, 121, 110, 99, 90, 81, 73, 66, 60, 54, 49, 45, 40, 36, 33, 30, 27, 24, 22, 20, 18, 16, 15, 13, 12, 11, 10, 9, 8, 7, 7, 6, 5, 5, 4, 4, 4, 3, 3, 3, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]} : (tensor<2x8x!quant.uniform<i8:f32, 0.1>>) -> tensor<2x8x!quant.uniform<i8:f32, 0.00390625:-128>>
  func.return %p : tensor<2x8x!quant.uniform<i8:f32, 0.00390625:-128>>
}

// A masked softmax (a causal or padding mask, from nn.masked_softmax): the i8 mask
// broadcasts to the input, 1 leaves an element out of its row (probability 0, the
// output zero point).
// CHECK-LABEL: func.func @masked_softmax
func.func @masked_softmax(%x: tensor<2x8x!quant.uniform<i8:f32, 0.1>>) -> tensor<2x8x!quant.uniform<i8:f32, 0.00390625:-128>> {
  %m = nn.constant dense<[[0, 0, 0, 0, 1, 1, 1, 1]]> : tensor<1x8xi8>
  // CHECK-NEXT: %m = nn.constant
  // CHECK-NEXT: %p = qnn.softmax %x, %m {multiplier = 1073741824, shift = 6, table = [32767, 29649, {{.*}}, 0, 0]} : (tensor<2x8x!quant.uniform<i8:f32, 0.1>>, tensor<1x8xi8>) -> tensor<2x8x!quant.uniform<i8:f32, 0.00390625:-128>>
  %p = qnn.softmax %x, %m {multiplier = 1073741824, shift = 6, table = [32767, 29649, 26827, 24274, 21964, 19874, 17983, 16272, 14723, 13322, 12054, 10907, 9869, 8930, 8080, 7311, 6616, 5986, 5416, 4901, 4435, 4013, 3631, 3285, 2973, 2690, 2434, 2202, 1993, 1803, 1631, 1476, 1336, 1209, 1094, 989, 895, 810, 733, 663, 600, 543, 491, 445, 402, 364, 329, 298, 270, 244, 221, 200, 181, 164, 148, 134, 121, 110, 99, 90, 81, 73, 66, 60, 54, 49, 45, 40, 36, 33, 30, 27, 24, 22, 20, 18, 16, 15, 13, 12, 11, 10, 9, 8, 7, 7, 6, 5, 5, 4, 4, 4, 3, 3, 3, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]} : (tensor<2x8x!quant.uniform<i8:f32, 0.1>>, tensor<1x8xi8>) -> tensor<2x8x!quant.uniform<i8:f32, 0.00390625:-128>>
  func.return %p : tensor<2x8x!quant.uniform<i8:f32, 0.00390625:-128>>
}

// A layer norm over the last axis (4 channels): gamma * 2^10 as weights, beta *
// 2^21 as biases, the multiplier of 2^-21 / s_out.
// CHECK-LABEL: func.func @layer_norm
func.func @layer_norm(%x: tensor<2x4x!quant.uniform<i8:f32, 0.05:3>>) -> tensor<2x4x!quant.uniform<i8:f32, 0.0157:-2>> {
  // CHECK-NEXT: %y = qnn.layer_norm %x {biases = [209715, 0, -104858, 0], epsilon_term = 64, multiplier = 2137224968, shift = 15, weights = [1024, 1126, 922, 2047]} : (tensor<2x4x!quant.uniform<i8:f32, 0.05:3>>) -> tensor<2x4x!quant.uniform<i8:f32, 0.0157:-2>>
  %y = qnn.layer_norm %x {biases = [209715, 0, -104858, 0], epsilon_term = 64, multiplier = 2137224968, shift = 15, weights = [1024, 1126, 922, 2047]} : (tensor<2x4x!quant.uniform<i8:f32, 0.05:3>>) -> tensor<2x4x!quant.uniform<i8:f32, 0.0157:-2>>
  func.return %y : tensor<2x4x!quant.uniform<i8:f32, 0.0157:-2>>
}

// A 16-bit layer norm (symmetric i16): Q18 values, gamma * 2^18 as weights (below
// 2^20), beta * 2^36 as biases (below 2^44), the wide accumulator's multiplier.
// CHECK-LABEL: func.func @layer_norm_16
func.func @layer_norm_16(%x: tensor<2x4x!quant.uniform<i16:f32, 1.25e-4>>) -> tensor<2x4x!quant.uniform<i16:f32, 2.5e-4>> {
  // CHECK-NEXT: %y = qnn.layer_norm %x {biases = [6871947674, 0, -3435973837, 0], epsilon_term = 10240, multiplier = 2097152000, shift = 24, weights = [262144, 288358, 235930, 524288]} : (tensor<2x4x!quant.uniform<i16:f32, 0.000125>>) -> tensor<2x4x!quant.uniform<i16:f32, 0.00025>>
  %y = qnn.layer_norm %x {biases = [6871947674, 0, -3435973837, 0], epsilon_term = 10240, multiplier = 2097152000, shift = 24, weights = [262144, 288358, 235930, 524288]} : (tensor<2x4x!quant.uniform<i16:f32, 1.25e-4>>) -> tensor<2x4x!quant.uniform<i16:f32, 2.5e-4>>
  func.return %y : tensor<2x4x!quant.uniform<i16:f32, 2.5e-4>>
}

// AlexNet's LRN across 16 channels (channels last): the 225-entry table of
// (1 + 1e-4 / 5 * 0.25 * s)^-0.75 by octave of the window sum s, in Q30 of its value
// at s = 1, and the wide multiplier of s_x * f(1) / (2^30 * s_out).
// CHECK-LABEL: func.func @lrn
func.func @lrn(%x: tensor<1x2x2x16x!quant.uniform<i8:f32, 0.5:-128>>) -> tensor<1x2x2x16x!quant.uniform<i8:f32, 0.1:-128>> {
  // CHECK-NEXT: %y = qnn.lrn %x {layout = "nhwc", multiplier = 1342172247, shift = 27, size = 5, table = [1073741824, {{.*}}]} : (tensor<1x2x2x16x!quant.uniform<i8:f32, 0.5:-128>>) -> tensor<1x2x2x16x!quant.uniform<i8:f32, 0.1:-128>>
  %y = qnn.lrn %x {layout = "nhwc", size = 5, table = [1073741824, 1073741321, 1073740817, 1073740314, 1073739811, 1073739307, 1073738804, 1073738301, 1073737798, 1073736791, 1073735784, 1073734778, 1073733771, 1073732764, 1073731758, 1073730751, 1073729745, 1073727731, 1073725718, 1073723705, 1073721692, 1073719679, 1073717666, 1073715652, 1073713639, 1073709613, 1073705587, 1073701561, 1073697535, 1073693508, 1073689482, 1073685456, 1073681430, 1073673378, 1073665327, 1073657275, 1073649224, 1073641172, 1073633121, 1073625070, 1073617019, 1073600918, 1073584817, 1073568717, 1073552617, 1073536518, 1073520419, 1073504321, 1073488224, 1073456030, 1073423839, 1073391651, 1073359464, 1073327280, 1073295098, 1073262918, 1073230741, 1073166393, 1073102053, 1073037724, 1072973402, 1072909089, 1072844787, 1072780493, 1072716206, 1072587662, 1072459155, 1072330683, 1072202248, 1072073848, 1071945484, 1071817156, 1071688857, 1071432380, 1071176046, 1070919855, 1070663807, 1070407902, 1070152140, 1069896520, 1069641016, 1069130488, 1068620528, 1068111136, 1067602310, 1067094050, 1066586353, 1066079219, 1065572543, 1064561083, 1063551861, 1062544870, 1061540100, 1060537543, 1059537194, 1058539044, 1057542676, 1055557304, 1053580607, 1051612526, 1049653002, 1047701976, 1045759391, 1043825190, 1041897776, 1038070804, 1034276471, 1030514341, 1026783989, 1023084991, 1019416941, 1015779428, 1012166563, 1005040832, 998031067, 991134326, 984347772, 977668665, 971094355, 964622282, 958232219, 945778193, 933695405, 921966756, 910576205, 899508686, 888750031, 878286909, 868058354, 848504087, 829947579, 812311100, 795524948, 779526430, 764258989, 749671467, 735614922, 709454906, 685366984, 663104445, 642458968, 623253355, 605335869, 588575772, 572701168, 544045301, 518524884, 495632644, 474966985, 456205573, 439086510, 423394675, 408772598, 383095065, 360888828, 341469541, 324324491, 309061493, 295375128, 283023786, 271656946, 252094957, 235530403, 221299889, 208925269, 198052681, 188414279, 179803374, 171942101, 158583141, 147417451, 137927907, 129750477, 122621024, 116342959, 110766757, 105699416, 97149722, 90055730, 84062636, 78923923, 74462668, 70548394, 67082640, 63940968, 58660507, 54296090, 50620610, 47477372, 44754553, 42370087, 40262302, 38354077, 35153100, 32512714, 30292733, 28396778, 26756274, 25321017, 24053358, 22906473, 20984547, 19400822, 18070356, 16934859, 15952914, 15094244, 14336161, 13650532, 12502150, 11556334, 10762096, 10084479, 9498666, 8986521, 8534467, 8125685, 7441181, 6877561, 6404367, 6000723, 5651817, 5346823, 5077644, 4839511], multiplier = 1342172247, shift = 27} : (tensor<1x2x2x16x!quant.uniform<i8:f32, 0.5:-128>>) -> tensor<1x2x2x16x!quant.uniform<i8:f32, 0.1:-128>>
  func.return %y : tensor<1x2x2x16x!quant.uniform<i8:f32, 0.1:-128>>
}

// nn ops that only move values apply to quantized tensors as they are.
// CHECK-LABEL: func.func @nn_on_quantized
func.func @nn_on_quantized(%x: tensor<1x2x3x3x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x18x!quant.uniform<i8:f32, 0.1:-3>> {
  // CHECK-NEXT: %flat = nn.reshape %x : (tensor<1x2x3x3x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x18x!quant.uniform<i8:f32, 0.1:-3>>
  %flat = nn.reshape %x : (tensor<1x2x3x3x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x18x!quant.uniform<i8:f32, 0.1:-3>>
  func.return %flat : tensor<1x18x!quant.uniform<i8:f32, 0.1:-3>>
}

// A linear resize keeps its input's type; the integers follow from the scales and
// the coordinate mode (Q10 weights for 8-bit values).
// CHECK-LABEL: func.func @resize
func.func @resize(%x: tensor<1x4x4x8x!quant.uniform<i8:f32, 0.05:3>>) -> tensor<1x8x8x8x!quant.uniform<i8:f32, 0.05:3>> {
  // CHECK-NEXT: %y = qnn.resize %x {coordinate_transformation_mode = "align_corners", scales = [1.0, 2.0, 2.0, 1.0]} : (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.05:3>>) -> tensor<1x8x8x8x!quant.uniform<i8:f32, 0.05:3>>
  %y = qnn.resize %x {scales = array<f32: 1.0, 2.0, 2.0, 1.0>, coordinate_transformation_mode = "align_corners"} : (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.05:3>>) -> tensor<1x8x8x8x!quant.uniform<i8:f32, 0.05:3>>
  func.return %y : tensor<1x8x8x8x!quant.uniform<i8:f32, 0.05:3>>
}

// TFLite's roundings (docs/tflite.md): a conv's requantize as ruy rounds it (twice,
// ties up), an add as TFLite's int8 ADD (inputs once ties up, the sum twice with the
// second rounding away from zero), a sub and a mul, the average pool of stored values
// (ties away from zero) and TFLite's integer mean (the count folded into the multiplier).
// CHECK-LABEL: func.func @tflite_roundings
func.func @tflite_roundings(%acc: tensor<1x4x4x8xi32>, %x: tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>, %y: tensor<1x4x4x8x!quant.uniform<i8:f32, 0.05:4>>) -> (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.2:1>>, tensor<1x4x4x8x!quant.uniform<i8:f32, 0.2:1>>, tensor<1x4x4x8x!quant.uniform<i8:f32, 0.2:1>>, tensor<1x4x4x8x!quant.uniform<i8:f32, 0.2:1>>, tensor<1x2x2x8x!quant.uniform<i8:f32, 0.1:-3>>, tensor<1x1x1x8x!quant.uniform<i8:f32, 0.05:2>>, tensor<1x1x1x8x!quant.uniform<i8:f32, 0.05:2>>) {
  // CHECK-NEXT: %r = qnn.requantize %acc {clamp_min = 1, multiplier = [1518500250], rounding = "double_up", shift = [7]} : (tensor<1x4x4x8xi32>) -> tensor<1x4x4x8x!quant.uniform<i8:f32, 0.2:1>>
  %r = qnn.requantize %acc {multiplier = [1518500250], shift = [7], clamp_min = 1, rounding = "double_up"} : (tensor<1x4x4x8xi32>) -> tensor<1x4x4x8x!quant.uniform<i8:f32, 0.2:1>>
  // CHECK-NEXT: %a = qnn.add %x, %y {input_rounding = "half_up", lhs_multiplier = 1073741824, lhs_shift = 0, multiplier = 1073741824, rhs_multiplier = 1073741824, rhs_shift = 1, rounding = "double_away", shift = 20} : (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>, tensor<1x4x4x8x!quant.uniform<i8:f32, 0.05:4>>) -> tensor<1x4x4x8x!quant.uniform<i8:f32, 0.2:1>>
  %a = qnn.add %x, %y {lhs_multiplier = 1073741824, lhs_shift = 0, rhs_multiplier = 1073741824, rhs_shift = 1, multiplier = 1073741824, shift = 20, input_rounding = "half_up", rounding = "double_away"} : (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>, tensor<1x4x4x8x!quant.uniform<i8:f32, 0.05:4>>) -> tensor<1x4x4x8x!quant.uniform<i8:f32, 0.2:1>>
  // CHECK-NEXT: %s = qnn.sub %x, %y {input_rounding = "double_away", lhs_multiplier = 1073741824, lhs_shift = 0, multiplier = 1073741824, rhs_multiplier = 1073741824, rhs_shift = 1, rounding = "double_away", shift = 20} : (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>, tensor<1x4x4x8x!quant.uniform<i8:f32, 0.05:4>>) -> tensor<1x4x4x8x!quant.uniform<i8:f32, 0.2:1>>
  %s = qnn.sub %x, %y {lhs_multiplier = 1073741824, lhs_shift = 0, rhs_multiplier = 1073741824, rhs_shift = 1, multiplier = 1073741824, shift = 20, input_rounding = "double_away", rounding = "double_away"} : (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>, tensor<1x4x4x8x!quant.uniform<i8:f32, 0.05:4>>) -> tensor<1x4x4x8x!quant.uniform<i8:f32, 0.2:1>>
  // CHECK-NEXT: %m = qnn.mul %x, %y {multiplier = 1073741824, rounding = "double_away", shift = 5} : (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>, tensor<1x4x4x8x!quant.uniform<i8:f32, 0.05:4>>) -> tensor<1x4x4x8x!quant.uniform<i8:f32, 0.2:1>>
  %m = qnn.mul %x, %y {multiplier = 1073741824, shift = 5, rounding = "double_away"} : (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>, tensor<1x4x4x8x!quant.uniform<i8:f32, 0.05:4>>) -> tensor<1x4x4x8x!quant.uniform<i8:f32, 0.2:1>>
  // CHECK-NEXT: %p = qnn.average_pool %x {kernel_shape = [2, 2], layout = "nhwc", rounding = "half_away", strides = [2, 2]} : (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x2x2x8x!quant.uniform<i8:f32, 0.1:-3>>
  %p = qnn.average_pool %x {kernel_shape = [2, 2], strides = [2, 2], layout = "nhwc", rounding = "half_away"} : (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x2x2x8x!quant.uniform<i8:f32, 0.1:-3>>
  // CHECK-NEXT: %mean = qnn.global_average_pool %x {layout = "nhwc", rounding = "double_away", shift = -2} : (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x1x1x8x!quant.uniform<i8:f32, 0.05:2>>
  %mean = qnn.global_average_pool %x {layout = "nhwc", multiplier = 1073741824, shift = -2, rounding = "double_away"} : (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x1x1x8x!quant.uniform<i8:f32, 0.05:2>>
  // TFLite's 4-D mean with keep_dims: the stored values' sum, plus a bias.
  // CHECK-NEXT: %kept = qnn.global_average_pool %x {bias = 8, layout = "nhwc", multiplier = 1342177280, rounding = "double_up", shift = 3} : (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x1x1x8x!quant.uniform<i8:f32, 0.05:2>>
  %kept = qnn.global_average_pool %x {layout = "nhwc", multiplier = 1342177280, shift = 3, rounding = "double_up", bias = 8} : (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x1x1x8x!quant.uniform<i8:f32, 0.05:2>>
  func.return %r, %a, %s, %m, %p, %mean, %kept : tensor<1x4x4x8x!quant.uniform<i8:f32, 0.2:1>>, tensor<1x4x4x8x!quant.uniform<i8:f32, 0.2:1>>, tensor<1x4x4x8x!quant.uniform<i8:f32, 0.2:1>>, tensor<1x4x4x8x!quant.uniform<i8:f32, 0.2:1>>, tensor<1x2x2x8x!quant.uniform<i8:f32, 0.1:-3>>, tensor<1x1x1x8x!quant.uniform<i8:f32, 0.05:2>>, tensor<1x1x1x8x!quant.uniform<i8:f32, 0.05:2>>
}

// TFLite's int8 softmax: its float32 table of exp(-beta * s_in * d), d = 0..255
// (here s_in = 0.05, beta = 1), and float32 arithmetic.
// CHECK-LABEL: func.func @tflite_softmax
func.func @tflite_softmax(%x: tensor<2x10x!quant.uniform<i8:f32, 0.05:3>>) -> tensor<2x10x!quant.uniform<i8:f32, 0.00390625:-128>> {
  // CHECK-NEXT: %p = qnn.tflite_softmax %x {table = [1.0, 0.951229{{[0-9]*}}, {{.*}}]} : (tensor<2x10x!quant.uniform<i8:f32, 0.05:3>>) -> tensor<2x10x!quant.uniform<i8:f32, 0.00390625:-128>>
  %p = qnn.tflite_softmax %x {table = array<f32: 1.0, 0.951229453086853, 0.904837429523468, 0.8607079982757568, 0.8187307715415955, 0.7788007855415344, 0.740818202495575, 0.7046880722045898, 0.6703200340270996, 0.6376281380653381, 0.6065306663513184, 0.5769498348236084, 0.5488116145133972, 0.5220457911491394, 0.49658530950546265, 0.4723665416240692, 0.4493289589881897, 0.4274149239063263, 0.4065696597099304, 0.3867410123348236, 0.3678794503211975, 0.3499377369880676, 0.33287107944488525, 0.3166367709636688, 0.3011942207813263, 0.2865048050880432, 0.27253180742263794, 0.2592402696609497, 0.24659696221351624, 0.23457029461860657, 0.22313016653060913, 0.21224796772003174, 0.2018965184688568, 0.19204990565776825, 0.182683527469635, 0.17377394437789917, 0.16529889404773712, 0.15723717212677002, 0.1495686173439026, 0.14227406680583954, 0.1353352814912796, 0.12873490154743195, 0.12245643138885498, 0.1164841577410698, 0.11080315709114075, 0.1053992211818695, 0.10025884211063385, 0.09536916017532349, 0.09071795642375946, 0.08629358559846878, 0.08208499848842621, 0.07808166742324829, 0.07427357882261276, 0.07065121084451675, 0.067205511033535, 0.06392785906791687, 0.060810063034296036, 0.05784432217478752, 0.05502321943640709, 0.05233970656991005, 0.049787066876888275, 0.0473589226603508, 0.04504920169711113, 0.04285212606191635, 0.04076220467686653, 0.03877420723438263, 0.036883167922496796, 0.035084355622529984, 0.03337327018380165, 0.031745634973049164, 0.03019738383591175, 0.028724638745188713, 0.02732372283935547, 0.025991128757596016, 0.02472352609038353, 0.023517746478319168, 0.022370772436261177, 0.02127973735332489, 0.020241910591721535, 0.01925470121204853, 0.018315639346837997, 0.017422374337911606, 0.016572674736380577, 0.015764417126774788, 0.014995576813817024, 0.014264234341681004, 0.013568558730185032, 0.012906812131404877, 0.012277339585125446, 0.01167856715619564, 0.011108996346592903, 0.010567204095423222, 0.01005183532834053, 0.009561602026224136, 0.009095276705920696, 0.00865169521421194, 0.008229747414588928, 0.007828377187252045, 0.007446582894772291, 0.007083409000188112, 0.0067379469983279705, 0.006409333553165197, 0.006096746772527695, 0.005799404811114073, 0.0055165644735097885, 0.005247518420219421, 0.004991593770682812, 0.004748151171952486, 0.0045165810734033585, 0.0042963046580553055, 0.004086771514266729, 0.0038874573074281216, 0.003697863779962063, 0.003517516888678074, 0.0033459654077887535, 0.003182780696079135, 0.0030275548342615366, 0.0028798992279917, 0.0027394448406994343, 0.002605840563774109, 0.0024787522852420807, 0.0023578619584441185, 0.002242867834866047, 0.0021334816701710224, 0.0020294305868446827, 0.0019304541638121009, 0.001836304785683751, 0.0017467471770942211, 0.001661557238548994, 0.0015805221628397703, 0.0015034391544759274, 0.0014301155460998416, 0.0013603679835796356, 0.0012940220767632127, 0.0012309119338169694, 0.0011708795791491866, 0.001113775186240673, 0.0010594556806609035, 0.0010077854385599494, 0.0009586351807229221, 0.0009118819725699723, 0.0008674089331179857, 0.0008251049439422786, 0.0007848640670999885, 0.0007465858361683786, 0.0007101743831299245, 0.0006755387876182795, 0.0006425923784263432, 0.0006112527335062623, 0.0005814416217617691, 0.0005530843627639115, 0.0005261101177893579, 0.0005004514241591096, 0.0004760441370308399, 0.00045282719656825066, 0.0004307425406295806, 0.00040973498835228384, 0.00038975197821855545, 0.00037074353895150125, 0.00035266217309981585, 0.000335462624207139, 0.0003191019350197166, 0.0003035391273442656, 0.00028873534756712615, 0.0002746535756159574, 0.00026125856675207615, 0.00024851682246662676, 0.00023639651772100478, 0.0002248673263238743, 0.0002139004209311679, 0.00020346837118268013, 0.00019354510004632175, 0.0001841057965066284, 0.00017512684280518442, 0.00016658581444062293, 0.0001584613200975582, 0.0001507330744061619, 0.00014338173787109554, 0.00013638893142342567, 0.00012973716366104782, 0.00012340980174485594, 0.00011739103501895443, 0.00011166580952703953, 0.00010621980618452653, 0.00010103940439876169, 9.611165296519175e-05, 9.14242336875759e-05, 8.696541772224009e-05, 8.272406557807699e-05, 7.868956890888512e-05, 7.4851828685496e-05, 7.120126247173175e-05, 6.772873894078657e-05, 6.442557059926912e-05, 6.12834919593297e-05, 5.8294663176639006e-05, 5.545160092879087e-05, 5.2747192967217416e-05, 5.017468356527388e-05, 4.772763350047171e-05, 4.539993096841499e-05, 4.318574792705476e-05, 4.1079554648604244e-05, 3.907608333975077e-05, 3.717031722771935e-05, 3.535750147420913e-05, 3.363309588166885e-05, 3.199278944521211e-05, 3.0432482162723318e-05, 2.894827412092127e-05, 2.753644912445452e-05, 2.6193480152869597e-05, 2.4916009351727553e-05, 2.3700840756646357e-05, 2.2544938474311493e-05, 2.144540849258192e-05, 2.039950413745828e-05, 1.9404607883188874e-05, 1.8458233171259053e-05, 1.755801531544421e-05, 1.6701700587873347e-05, 1.58871498570079e-05, 1.5112324035726488e-05, 1.437528680980904e-05, 1.3674196452484466e-05, 1.3007297638978343e-05, 1.2372924174997024e-05, 1.1769489901780616e-05, 1.1195485058124177e-05, 1.0649474461388309e-05, 1.0130093869520351e-05, 9.63604270509677e-06, 9.16608769330196e-06, 8.71905194799183e-06, 8.2938195191673e-06, 7.889324479037896e-06, 7.504557743231999e-06, 7.138556156860432e-06, 6.790404768253211e-06, 6.459232736233389e-06, 6.1442124206223525e-06, 5.844555744261015e-06, 5.559513283515116e-06, 5.288372449285816e-06, 5.030455668020295e-06, 4.785117198480293e-06, 4.551744495984167e-06, 4.329753210186027e-06, 4.118588549317792e-06, 3.917722551705083e-06, 3.726653176272521e-06, 3.5449022561806487e-06, 3.3720152714522555e-06, 3.2075602121039992e-06, 3.0511255317833275e-06, 2.9023203751421534e-06>} : (tensor<2x10x!quant.uniform<i8:f32, 0.05:3>>) -> tensor<2x10x!quant.uniform<i8:f32, 0.00390625:-128>>
  func.return %p : tensor<2x10x!quant.uniform<i8:f32, 0.00390625:-128>>
}
