// RUN: irc-opt %s --split-input-file -p lower-to-qnn --verify-diagnostics | FileCheck %s
// RUN: irc-opt %s --split-input-file --target=%S/Inputs/partition-no-lut.toml -p lower-to-qnn | FileCheck %s --check-prefix=NOLUT

// The input is the QDQ form that `quantize` writes: nn ops reading quant.dcast of
// quantized values, their results read by quant.qcast.

// A conv with per-channel weights, an int32 bias of scale s_in * s_w and a fused
// relu: qnn.conv accumulates in i32, qnn.requantize takes the accumulator to the
// result type with one multiplier and shift per output channel (s_in * s_w / s_out:
// 0.5 * 0.25 / 0.5 = 2^-2 and 0.5 * 0.5 / 0.5 = 2^-1) and clamps at the zero point
// (the relu). The weights and the bias become qnn.constants.

// CHECK-LABEL: func.func @conv_relu(
// CHECK-NEXT:    %x_q = quant.qcast %x
// CHECK-NEXT:    %w_s = qnn.constant dense<{{.*}}> : tensor<2x1x1x1xi8> to tensor<2x1x1x1x!quant.uniform<i8<-127:127>:f32:0, {0.25, 0.5}>>
// CHECK-NEXT:    %b_s = qnn.constant dense<[4, -2]> : tensor<2xi32> to tensor<2x!quant.uniform<i32:f32:0, {0.125, 0.25}>>
// CHECK-NEXT:    %0 = qnn.conv %x_q, %w_s, %b_s : (tensor<1x1x2x2x!quant.uniform<i8:f32, 0.5:-10>>, {{.*}}) -> tensor<1x2x2x2xi32>
// CHECK-NEXT:    %y_q = qnn.requantize %0 {axis = 1, clamp_min = 3, multiplier = [1073741824, 1073741824], shift = [1, 0]} : (tensor<1x2x2x2xi32>) -> tensor<1x2x2x2x!quant.uniform<i8:f32, 0.5:3>>
// CHECK-NEXT:    %y_dq = quant.dcast %y_q
// CHECK-NEXT:    func.return %y_dq
// expected-remark @+1 {{lower-to-qnn: 1 ops lowered, 0 float}}
func.func @conv_relu(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %x_q = quant.qcast %x : tensor<1x1x2x2xf32> to tensor<1x1x2x2x!quant.uniform<i8:f32, 0.5:-10>>
  %x_dq = quant.dcast %x_q : tensor<1x1x2x2x!quant.uniform<i8:f32, 0.5:-10>> to tensor<1x1x2x2xf32>
  %w_i = nn.constant dense<[[[[127]]], [[[-3]]]]> : tensor<2x1x1x1xi8>
  %w_s = quant.scast %w_i : tensor<2x1x1x1xi8> to tensor<2x1x1x1x!quant.uniform<i8<-127:127>:f32:0, {0.25, 0.5}>>
  %w_dq = quant.dcast %w_s : tensor<2x1x1x1x!quant.uniform<i8<-127:127>:f32:0, {0.25, 0.5}>> to tensor<2x1x1x1xf32>
  %b_i = nn.constant dense<[4, -2]> : tensor<2xi32>
  %b_s = quant.scast %b_i : tensor<2xi32> to tensor<2x!quant.uniform<i32:f32:0, {0.125, 0.25}>>
  %b_dq = quant.dcast %b_s : tensor<2x!quant.uniform<i32:f32:0, {0.125, 0.25}>> to tensor<2xf32>
  %y = nn.conv %x_dq, %w_dq, %b_dq {activation = #nn.activation<relu>} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %y_q = quant.qcast %y : tensor<1x2x2x2xf32> to tensor<1x2x2x2x!quant.uniform<i8:f32, 0.5:3>>
  %y_dq = quant.dcast %y_q : tensor<1x2x2x2x!quant.uniform<i8:f32, 0.5:3>> to tensor<1x2x2x2xf32>
  func.return %y_dq : tensor<1x2x2x2xf32>
}

// -----

// Ops that only move values keep their input's type: the max_pool becomes
// qnn.max_pool, the reshape runs on the quantized tensor as it is. A concat whose
// inputs have other types than its result requantizes them (multiplier 1 for the
// input of the result's type: (2^30, -1)); a standalone relu is a clamp at the zero
// point.

// CHECK-LABEL: func.func @moving_values(
// CHECK-NEXT:    %a_q = quant.qcast %a
// CHECK-NEXT:    %b_q = quant.qcast %b
// CHECK-NEXT:    %p_q = qnn.max_pool %a_q {kernel_shape = [2, 2]} : (tensor<1x1x2x2x!quant.uniform<i8:f32, 0.5:-10>>) -> tensor<1x1x1x1x!quant.uniform<i8:f32, 0.5:-10>>
// CHECK-NEXT:    %r_q = nn.reshape %p_q : (tensor<1x1x1x1x!quant.uniform<i8:f32, 0.5:-10>>) -> tensor<1x1x!quant.uniform<i8:f32, 0.5:-10>>
// CHECK-NEXT:    %c_q = qnn.concat %r_q, %b_q {axis = 1, multipliers = [1073741824, 1073741824], shifts = [-1, 0]} : (tensor<1x1x!quant.uniform<i8:f32, 0.5:-10>>, tensor<1x3x!quant.uniform<i8:f32, 0.25:4>>) -> tensor<1x4x!quant.uniform<i8:f32, 0.5:-10>>
// CHECK-NEXT:    %u_q = qnn.clamp %c_q {clamp_min = -10} : tensor<1x4x!quant.uniform<i8:f32, 0.5:-10>>
// CHECK-NEXT:    %u_dq = quant.dcast %u_q
// CHECK-NEXT:    func.return %u_dq
// expected-remark @+1 {{lower-to-qnn: 4 ops lowered, 0 float}}
func.func @moving_values(%a: tensor<1x1x2x2xf32>, %b: tensor<1x3xf32>) -> tensor<1x4xf32> {
  %a_q = quant.qcast %a : tensor<1x1x2x2xf32> to tensor<1x1x2x2x!quant.uniform<i8:f32, 0.5:-10>>
  %a_dq = quant.dcast %a_q : tensor<1x1x2x2x!quant.uniform<i8:f32, 0.5:-10>> to tensor<1x1x2x2xf32>
  %b_q = quant.qcast %b : tensor<1x3xf32> to tensor<1x3x!quant.uniform<i8:f32, 0.25:4>>
  %b_dq = quant.dcast %b_q : tensor<1x3x!quant.uniform<i8:f32, 0.25:4>> to tensor<1x3xf32>
  %p = nn.max_pool %a_dq {kernel_shape = [2, 2]} : (tensor<1x1x2x2xf32>) -> tensor<1x1x1x1xf32>
  %p_q = quant.qcast %p : tensor<1x1x1x1xf32> to tensor<1x1x1x1x!quant.uniform<i8:f32, 0.5:-10>>
  %p_dq = quant.dcast %p_q : tensor<1x1x1x1x!quant.uniform<i8:f32, 0.5:-10>> to tensor<1x1x1x1xf32>
  %r = nn.reshape %p_dq : (tensor<1x1x1x1xf32>) -> tensor<1x1xf32>
  %r_q = quant.qcast %r : tensor<1x1xf32> to tensor<1x1x!quant.uniform<i8:f32, 0.5:-10>>
  %r_dq = quant.dcast %r_q : tensor<1x1x!quant.uniform<i8:f32, 0.5:-10>> to tensor<1x1xf32>
  %c = nn.concat %r_dq, %b_dq {axis = 1} : (tensor<1x1xf32>, tensor<1x3xf32>) -> tensor<1x4xf32>
  %c_q = quant.qcast %c : tensor<1x4xf32> to tensor<1x4x!quant.uniform<i8:f32, 0.5:-10>>
  %c_dq = quant.dcast %c_q : tensor<1x4x!quant.uniform<i8:f32, 0.5:-10>> to tensor<1x4xf32>
  %u = nn.relu %c_dq : tensor<1x4xf32>
  %u_q = quant.qcast %u : tensor<1x4xf32> to tensor<1x4x!quant.uniform<i8:f32, 0.5:-10>>
  %u_dq = quant.dcast %u_q : tensor<1x4x!quant.uniform<i8:f32, 0.5:-10>> to tensor<1x4xf32>
  func.return %u_dq : tensor<1x4xf32>
}

// -----

// An add with a fused relu6 (clip 0..6): both inputs rescaled to twice the larger
// input scale after a left shift of 20 bits, and the sum clamped to the stored
// values of 0 and 6 (zero point 0, scale 0.1: [0, 60]). A mul needs one multiplier,
// s_a * s_b / s_out.

// CHECK-LABEL: func.func @add_mul(
// CHECK:         %s_q = qnn.add %a_q, %b_q {clamp_max = 60, clamp_min = 0, lhs_multiplier = 1073741824, lhs_shift = 1, multiplier = 1342177280, rhs_multiplier = 1073741824, rhs_shift = 0, shift = 17} : (tensor<4x!quant.uniform<i8:f32, 0.125>>, tensor<4x!quant.uniform<i8:f32, 0.25>>) -> tensor<4x!quant.uniform<i8:f32, 0.1>>
// CHECK-NEXT:    %m_q = qnn.mul %s_q, %b_q {multiplier = 1073741824, shift = 0} : (tensor<4x!quant.uniform<i8:f32, 0.1>>, tensor<4x!quant.uniform<i8:f32, 0.25>>) -> tensor<4x!quant.uniform<i8:f32, 0.05>>
// expected-remark @+1 {{lower-to-qnn: 2 ops lowered, 0 float}}
func.func @add_mul(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %a_q = quant.qcast %a : tensor<4xf32> to tensor<4x!quant.uniform<i8:f32, 0.125>>
  %a_dq = quant.dcast %a_q : tensor<4x!quant.uniform<i8:f32, 0.125>> to tensor<4xf32>
  %b_q = quant.qcast %b : tensor<4xf32> to tensor<4x!quant.uniform<i8:f32, 0.25>>
  %b_dq = quant.dcast %b_q : tensor<4x!quant.uniform<i8:f32, 0.25>> to tensor<4xf32>
  %s = nn.add %a_dq, %b_dq {activation = #nn.activation<clip min = 0.0, max = 6.0>} : tensor<4xf32>
  %s_q = quant.qcast %s : tensor<4xf32> to tensor<4x!quant.uniform<i8:f32, 0.1>>
  %s_dq = quant.dcast %s_q : tensor<4x!quant.uniform<i8:f32, 0.1>> to tensor<4xf32>
  %m = nn.mul %s_dq, %b_dq : tensor<4xf32>
  %m_q = quant.qcast %m : tensor<4xf32> to tensor<4x!quant.uniform<i8:f32, 0.05>>
  %m_dq = quant.dcast %m_q : tensor<4x!quant.uniform<i8:f32, 0.05>> to tensor<4xf32>
  func.return %m_dq : tensor<4xf32>
}

// -----

// A sigmoid between int8 values becomes a 256-entry lookup table (the table of
// dcast -> sigmoid -> qcast over every stored input). Without a target lookup tables
// are assumed (the remark says so); on a target without one (NOLUT) the sigmoid
// stays float between its casts.

// CHECK-LABEL: func.func @lookup_table(
// CHECK-NEXT:    %x_q = quant.qcast %x
// CHECK-NEXT:    %s_q = qnn.lut %x_q {function = "sigmoid", table = [-128, -128, {{.*}}, 127]} : (tensor<8x!quant.uniform<i8:f32, 0.0625>>) -> tensor<8x!quant.uniform<i8:f32, 0.00390625:-128>>
// CHECK-NEXT:    %s_dq = quant.dcast %s_q

// NOLUT-LABEL: func.func @lookup_table(
// NOLUT-NEXT:    %x_q = quant.qcast %x
// NOLUT-NEXT:    %x_dq = quant.dcast %x_q
// NOLUT-NEXT:    %s = nn.sigmoid %x_dq
// NOLUT-NEXT:    %s_q = quant.qcast %s
// NOLUT-NEXT:    %s_dq = quant.dcast %s_q
// expected-remark @+1 {{lower-to-qnn: 1 ops lowered, 0 float; no target: 1 lookup tables assumed available}}
func.func @lookup_table(%x: tensor<8xf32>) -> tensor<8xf32> {
  %x_q = quant.qcast %x : tensor<8xf32> to tensor<8x!quant.uniform<i8:f32, 0.0625>>
  %x_dq = quant.dcast %x_q : tensor<8x!quant.uniform<i8:f32, 0.0625>> to tensor<8xf32>
  %s = nn.sigmoid %x_dq : tensor<8xf32>
  %s_q = quant.qcast %s : tensor<8xf32> to tensor<8x!quant.uniform<i8:f32, 0.00390625:-128>>
  %s_dq = quant.dcast %s_q : tensor<8x!quant.uniform<i8:f32, 0.00390625:-128>> to tensor<8xf32>
  func.return %s_dq : tensor<8xf32>
}

// -----

// A softmax over the last axis between int8 values becomes an integer qnn.softmax:
// the exp table of the input's scale 0.1 and the multiplier of 2^-15 / s_out. Over
// another axis it stays float between its casts (the integer softmax normalizes rows).

// CHECK-LABEL: func.func @softmax(
// CHECK-NEXT:    %x_q = quant.qcast %x
// CHECK-NEXT:    %x_dq = quant.dcast %x_q
// CHECK-NEXT:    %p_q = qnn.softmax %x_q {multiplier = 1073741824, shift = 6, table = [32767, 29649, {{.*}}, 0]} : (tensor<2x8x!quant.uniform<i8:f32, 0.1>>) -> tensor<2x8x!quant.uniform<i8:f32, 0.00390625:-128>>
// CHECK-NEXT:    %p_dq = quant.dcast %p_q
// CHECK-NEXT:    %c = nn.softmax %x_dq {axis = 0, irc.float = "the integer softmax normalizes the last axis"}
// CHECK-NEXT:    %c_q = quant.qcast %c

// NOLUT-LABEL: func.func @softmax(
// NOLUT:         qnn.softmax
// expected-remark @+1 {{lower-to-qnn: 1 ops lowered, 1 float}}
func.func @softmax(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %x_q = quant.qcast %x : tensor<2x8xf32> to tensor<2x8x!quant.uniform<i8:f32, 0.1>>
  %x_dq = quant.dcast %x_q : tensor<2x8x!quant.uniform<i8:f32, 0.1>> to tensor<2x8xf32>
  %p = nn.softmax %x_dq {axis = -1} : tensor<2x8xf32>
  %p_q = quant.qcast %p : tensor<2x8xf32> to tensor<2x8x!quant.uniform<i8:f32, 0.00390625:-128>>
  %p_dq = quant.dcast %p_q : tensor<2x8x!quant.uniform<i8:f32, 0.00390625:-128>> to tensor<2x8xf32>
  // expected-note @+1 {{stays float: the integer softmax normalizes the last axis}}
  %c = nn.softmax %x_dq {axis = 0} : tensor<2x8xf32>
  %c_q = quant.qcast %c : tensor<2x8xf32> to tensor<2x8x!quant.uniform<i8:f32, 0.00390625:-128>>
  %c_dq = quant.dcast %c_q : tensor<2x8x!quant.uniform<i8:f32, 0.00390625:-128>> to tensor<2x8xf32>
  func.return %p_dq, %c_dq : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// An LRN becomes an integer qnn.lrn (either layout): the table of its denominator's
// power by octave of the window sum, the wide multiplier of s_x * f(1) / (2^30 * s_out).
// One without a bias over 16-bit values would fall too far for the table's Q30
// entries: it stays float.

// CHECK-LABEL: func.func @lrn(
// CHECK-NEXT:    %x_q = quant.qcast %x
// CHECK-NEXT:    %n_q = qnn.lrn %x_q {layout = "nhwc", multiplier = 1342172247, shift = 27, size = 5, table = [1073741824, {{.*}}]} : (tensor<1x2x2x16x!quant.uniform<i8:f32, 0.5:-128>>) -> tensor<1x2x2x16x!quant.uniform<i8:f32, 0.1:-128>>
// CHECK-NEXT:    %n_dq = quant.dcast %n_q
// CHECK:         %c_q = qnn.lrn %x_q {multiplier = {{.*}}, shift = {{.*}}, size = 3, table = [{{.*}}]} : (tensor<1x2x2x16x!quant.uniform<i8:f32, 0.5:-128>>) -> tensor<1x2x2x16x!quant.uniform<i8:f32, 0.1:-128>>
// CHECK:         nn.lrn %y_dq
// expected-remark @+1 {{lower-to-qnn: 2 ops lowered, 1 float}}
func.func @lrn(%x: tensor<1x2x2x16xf32>, %y: tensor<1x2x2x16xf32>) -> (tensor<1x2x2x16xf32>, tensor<1x2x2x16xf32>, tensor<1x2x2x16xf32>) {
  %x_q = quant.qcast %x : tensor<1x2x2x16xf32> to tensor<1x2x2x16x!quant.uniform<i8:f32, 0.5:-128>>
  %x_dq = quant.dcast %x_q : tensor<1x2x2x16x!quant.uniform<i8:f32, 0.5:-128>> to tensor<1x2x2x16xf32>
  %n = nn.lrn %x_dq {layout = "nhwc", size = 5} : tensor<1x2x2x16xf32>
  %n_q = quant.qcast %n : tensor<1x2x2x16xf32> to tensor<1x2x2x16x!quant.uniform<i8:f32, 0.1:-128>>
  %n_dq = quant.dcast %n_q : tensor<1x2x2x16x!quant.uniform<i8:f32, 0.1:-128>> to tensor<1x2x2x16xf32>
  %c = nn.lrn %x_dq {size = 3, alpha = 0.5 : f32, bias = 2.0 : f32} : tensor<1x2x2x16xf32>
  %c_q = quant.qcast %c : tensor<1x2x2x16xf32> to tensor<1x2x2x16x!quant.uniform<i8:f32, 0.1:-128>>
  %c_dq = quant.dcast %c_q : tensor<1x2x2x16x!quant.uniform<i8:f32, 0.1:-128>> to tensor<1x2x2x16xf32>
  %y_q = quant.qcast %y : tensor<1x2x2x16xf32> to tensor<1x2x2x16x!quant.uniform<i16:f32, 1.0e-3>>
  %y_dq = quant.dcast %y_q : tensor<1x2x2x16x!quant.uniform<i16:f32, 1.0e-3>> to tensor<1x2x2x16xf32>
  // expected-note @+1 {{stays float: its function falls by a factor of}}
  %z = nn.lrn %y_dq {layout = "nhwc", size = 3, alpha = 1.0 : f32, beta = 1.0 : f32, bias = 0.0 : f32} : tensor<1x2x2x16xf32>
  %z_q = quant.qcast %z : tensor<1x2x2x16xf32> to tensor<1x2x2x16x!quant.uniform<i16:f32, 1.0e-3>>
  %z_dq = quant.dcast %z_q : tensor<1x2x2x16x!quant.uniform<i16:f32, 1.0e-3>> to tensor<1x2x2x16xf32>
  func.return %n_dq, %c_dq, %z_dq : tensor<1x2x2x16xf32>, tensor<1x2x2x16xf32>, tensor<1x2x2x16xf32>
}

// -----

// A layer norm over the last axis with constant gamma and beta becomes an integer
// qnn.layer_norm: gamma * 2^Q as weights (Q = 10: |w| < 2^11), beta * 2^(11 + Q) as
// biases, the epsilon term round(n^2 * eps / s_x^2) = round(16 * 1e-5 / 0.0025) = 0;
// the float gamma and beta are folded in and erased.

// CHECK-LABEL: func.func @layer_norm(
// CHECK-NEXT:    %x_q = quant.qcast %x
// CHECK-NEXT:    %n_q = qnn.layer_norm %x_q {biases = [209715, 0, -104858, 0], epsilon_term = 0, multiplier = 2137224968, shift = 15, weights = [1024, 1126, 922, 2047]} : (tensor<2x4x!quant.uniform<i8:f32, 0.05:3>>) -> tensor<2x4x!quant.uniform<i8:f32, 0.0157:-2>>
// CHECK-NEXT:    %n_dq = quant.dcast %n_q

// NOLUT-LABEL: func.func @layer_norm(
// NOLUT:         qnn.layer_norm
// expected-remark @+1 {{lower-to-qnn: 1 ops lowered, 0 float}}
func.func @layer_norm(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %g = nn.constant dense<[1.0, 1.1, 0.9, 1.999]> : tensor<4xf32>
  %b = nn.constant dense<[0.1, 0.0, -0.05, 0.0]> : tensor<4xf32>
  %x_q = quant.qcast %x : tensor<2x4xf32> to tensor<2x4x!quant.uniform<i8:f32, 0.05:3>>
  %x_dq = quant.dcast %x_q : tensor<2x4x!quant.uniform<i8:f32, 0.05:3>> to tensor<2x4xf32>
  %n = nn.layer_norm %x_dq, %g, %b {axis = -1, epsilon = 1.0e-05} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %n_q = quant.qcast %n : tensor<2x4xf32> to tensor<2x4x!quant.uniform<i8:f32, 0.0157:-2>>
  %n_dq = quant.dcast %n_q : tensor<2x4x!quant.uniform<i8:f32, 0.0157:-2>> to tensor<2x4xf32>
  func.return %n_dq : tensor<2x4xf32>
}

// -----

// A gemm with trans_b and weights per output feature (axis 0 of the (N, K) weights)
// requantizes per column of its result (axis 1); its float bias (not quantized by
// the QDQ form) is quantized here with scale s_in * s_w.

// CHECK-LABEL: func.func @gemm_float_bias(
// CHECK-NEXT:    %x_q = quant.qcast %x
// CHECK-NEXT:    %w_s = qnn.constant {{.*}} : tensor<2x3xi8> to tensor<2x3x!quant.uniform<i8<-127:127>:f32:0, {0.5, 0.25}>>
// CHECK-NEXT:    %b = qnn.constant dense<[8, -8]> : tensor<2xi32> to tensor<2x!quant.uniform<i32:f32:0, {0.25, 0.125}>>
// CHECK-NEXT:    %0 = qnn.gemm %x_q, %w_s, %b {trans_b = true}
// CHECK-NEXT:    %y_q = qnn.requantize %0 {axis = 1, multiplier = [1073741824, 1073741824], shift = [-2, -1]}
// expected-remark @+1 {{lower-to-qnn: 1 ops lowered, 0 float}}
func.func @gemm_float_bias(%x: tensor<1x3xf32>) -> tensor<1x2xf32> {
  %x_q = quant.qcast %x : tensor<1x3xf32> to tensor<1x3x!quant.uniform<i8:f32, 0.5>>
  %x_dq = quant.dcast %x_q : tensor<1x3x!quant.uniform<i8:f32, 0.5>> to tensor<1x3xf32>
  %w_i = nn.constant dense<[[1, 2, 3], [-4, 5, 6]]> : tensor<2x3xi8>
  %w_s = quant.scast %w_i : tensor<2x3xi8> to tensor<2x3x!quant.uniform<i8<-127:127>:f32:0, {0.5, 0.25}>>
  %w_dq = quant.dcast %w_s : tensor<2x3x!quant.uniform<i8<-127:127>:f32:0, {0.5, 0.25}>> to tensor<2x3xf32>
  %b = nn.constant dense<[2.0, -1.0]> : tensor<2xf32>
  %y = nn.gemm %x_dq, %w_dq, %b {trans_b = true} : (tensor<1x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  %y_q = quant.qcast %y : tensor<1x2xf32> to tensor<1x2x!quant.uniform<i8:f32, 0.125>>
  %y_dq = quant.dcast %y_q : tensor<1x2x!quant.uniform<i8:f32, 0.125>> to tensor<1x2xf32>
  func.return %y_dq : tensor<1x2xf32>
}

// -----

// Must not fire where the pattern does not match: the log_softmax has no integer form
// and stays a float island between its casts; the exp's result is read as a float
// (no qcast), so the exp stays float too; a pad with a value other than zero has no
// qnn.pad (which pads with the zero point) and stays float. Each records why, as
// `irc.float`, which the partition's reasons quote.

// CHECK-LABEL: func.func @float_islands(
// CHECK-NEXT:    %x_q = quant.qcast %x
// CHECK-NEXT:    %x_dq = quant.dcast %x_q
// CHECK-NEXT:    %s = nn.log_softmax %x_dq {axis = 0, irc.float = "nn.log_softmax has no integer lowering"}
// CHECK-NEXT:    %s_q = quant.qcast %s
// CHECK-NEXT:    %s_dq = quant.dcast %s_q
// CHECK-NEXT:    %e = nn.exp %s_dq {irc.float = "result #0 is read as a float"}
// CHECK-NEXT:    %p = nn.pad %x_dq {pads = [1, 1], value = 1.0, irc.float = "it pads with 1.0, not with zero"}
// CHECK-NEXT:    %p_q = quant.qcast %p
// expected-remark @+1 {{lower-to-qnn: 0 ops lowered, 3 float}}
func.func @float_islands(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<6x!quant.uniform<i8:f32, 0.5>>) {
  %x_q = quant.qcast %x : tensor<4xf32> to tensor<4x!quant.uniform<i8:f32, 0.5>>
  %x_dq = quant.dcast %x_q : tensor<4x!quant.uniform<i8:f32, 0.5>> to tensor<4xf32>
  // expected-note @+1 {{stays float: nn.log_softmax has no integer lowering}}
  %s = nn.log_softmax %x_dq {axis = 0} : tensor<4xf32>
  %s_q = quant.qcast %s : tensor<4xf32> to tensor<4x!quant.uniform<i8:f32, 0.00390625:-128>>
  %s_dq = quant.dcast %s_q : tensor<4x!quant.uniform<i8:f32, 0.00390625:-128>> to tensor<4xf32>
  // expected-note @+1 {{stays float: result #0 is read as a float}}
  %e = nn.exp %s_dq : tensor<4xf32>
  // expected-note @+1 {{stays float: it pads with 1.0, not with zero}}
  %p = nn.pad %x_dq {pads = [1, 1], value = 1.0} : (tensor<4xf32>) -> tensor<6xf32>
  %p_q = quant.qcast %p : tensor<6xf32> to tensor<6x!quant.uniform<i8:f32, 0.5>>
  func.return %e, %p_q : tensor<4xf32>, tensor<6x!quant.uniform<i8:f32, 0.5>>
}

// -----

// A qcast of a dcast to the same type cancels; to another type it is a requantize.

// CHECK-LABEL: func.func @cast_pairs(
// CHECK-NEXT:    %other = qnn.requantize %q {multiplier = [1073741824], shift = [-2]} : (tensor<4x!quant.uniform<i8:f32, 0.5>>) -> tensor<4x!quant.uniform<i8:f32, 0.25:1>>
// CHECK-NEXT:    func.return %q, %other
func.func @cast_pairs(%q: tensor<4x!quant.uniform<i8:f32, 0.5>>) -> (tensor<4x!quant.uniform<i8:f32, 0.5>>, tensor<4x!quant.uniform<i8:f32, 0.25:1>>) {
  %d = quant.dcast %q : tensor<4x!quant.uniform<i8:f32, 0.5>> to tensor<4xf32>
  %same = quant.qcast %d : tensor<4xf32> to tensor<4x!quant.uniform<i8:f32, 0.5>>
  %other = quant.qcast %d : tensor<4xf32> to tensor<4x!quant.uniform<i8:f32, 0.25:1>>
  func.return %same, %other : tensor<4x!quant.uniform<i8:f32, 0.5>>, tensor<4x!quant.uniform<i8:f32, 0.25:1>>
}

// -----

// A masked softmax becomes qnn.softmax with its mask as an i8 constant (1 masks):
// the masked elements are left out of each row's max and sum, and get the output
// zero point (probability 0).

// CHECK-LABEL: func.func @masked_softmax(
// CHECK-NEXT:    %x_q = quant.qcast %x
// CHECK-NEXT:    %m = nn.constant dense<{{\[\[}}0, 1, 1, 1], [0, 0, 1, 1]]> : tensor<2x4xi8>
// CHECK-NEXT:    %p_q = qnn.softmax %x_q, %m {multiplier = 1073741824, shift = 6, table = [32767, 29649, {{.*}}]} : (tensor<2x4x!quant.uniform<i8:f32, 0.1>>, tensor<2x4xi8>) -> tensor<2x4x!quant.uniform<i8:f32, 0.00390625:-128>>
// CHECK-NEXT:    %p_dq = quant.dcast %p_q
// expected-remark @+1 {{lower-to-qnn: 1 ops lowered, 0 float}}
func.func @masked_softmax(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %m = nn.constant dense<[[false, true, true, true], [false, false, true, true]]> : tensor<2x4xi1>
  %x_q = quant.qcast %x : tensor<2x4xf32> to tensor<2x4x!quant.uniform<i8:f32, 0.1>>
  %x_dq = quant.dcast %x_q : tensor<2x4x!quant.uniform<i8:f32, 0.1>> to tensor<2x4xf32>
  %p = nn.masked_softmax %x_dq, %m : (tensor<2x4xf32>, tensor<2x4xi1>) -> tensor<2x4xf32>
  %p_q = quant.qcast %p : tensor<2x4xf32> to tensor<2x4x!quant.uniform<i8:f32, 0.00390625:-128>>
  %p_dq = quant.dcast %p_q : tensor<2x4x!quant.uniform<i8:f32, 0.00390625:-128>> to tensor<2x4xf32>
  func.return %p_dq : tensor<2x4xf32>
}

// -----

// A division by a positive constant scalar (attention's 1/sqrt(d) scaling, as torch
// writes it) is a requantize: x's stored values read with scale s_x / c are x / c,
// so the multiplier is (0.1 / 4) / 0.01 = 2.5 = 0.625 * 2^2. A negative divisor
// stays float (it would flip the order of the stored values).

// CHECK-LABEL: func.func @div(
// CHECK-NEXT:    %x_q = quant.qcast %x
// CHECK-NEXT:    %x_dq = quant.dcast %x_q
// CHECK-NEXT:    %d_q = qnn.requantize %x_q {multiplier = [1342177280], shift = [-2]} : (tensor<8x!quant.uniform<i8:f32, 0.1:3>>) -> tensor<8x!quant.uniform<i8:f32, 0.01:-5>>
// CHECK-NEXT:    %d_dq = quant.dcast %d_q
// CHECK-NEXT:    %n = nn.constant dense<-4.000000e+00>
// CHECK-NEXT:    %e = nn.div %x_dq, %n {irc.float = "it divides by something other than a positive constant scalar"}
// expected-remark @+1 {{lower-to-qnn: 1 ops lowered, 1 float}}
func.func @div(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %c = nn.constant dense<4.0> : tensor<f32>
  %x_q = quant.qcast %x : tensor<8xf32> to tensor<8x!quant.uniform<i8:f32, 0.1:3>>
  %x_dq = quant.dcast %x_q : tensor<8x!quant.uniform<i8:f32, 0.1:3>> to tensor<8xf32>
  %d = nn.div %x_dq, %c : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %d_q = quant.qcast %d : tensor<8xf32> to tensor<8x!quant.uniform<i8:f32, 0.01:-5>>
  %d_dq = quant.dcast %d_q : tensor<8x!quant.uniform<i8:f32, 0.01:-5>> to tensor<8xf32>
  %n = nn.constant dense<-4.0> : tensor<f32>
  // expected-note @+1 {{stays float: it divides by something other than a positive constant scalar}}
  %e = nn.div %x_dq, %n : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %e_q = quant.qcast %e : tensor<8xf32> to tensor<8x!quant.uniform<i8:f32, 0.01:-5>>
  %e_dq = quant.dcast %e_q : tensor<8x!quant.uniform<i8:f32, 0.01:-5>> to tensor<8xf32>
  func.return %d_dq, %e_dq : tensor<8xf32>, tensor<8xf32>
}

// -----

// A reduction over adjacent axes is a pooling window over the input viewed as an NHWC
// image: with nothing before the axes, [1, reduced, 1, inner] and a global pool;
// else [1, outer, reduced, inner] and a 1 x reduced window. A mean rescales by
// s_x / s_y (0.1 / 0.05 = 2 = 2^30 * 2^-29), a sum by count times that
// (16 * 0.1 / 0.5 = 3.2 = 0.8 * 2^2), a max keeps the input's type.

// CHECK-LABEL: func.func @reduce(
// CHECK-NEXT:    %x_q = quant.qcast %x
// CHECK-NEXT:    %x_dq = quant.dcast %x_q
// CHECK-NEXT:    %0 = nn.reshape %x_q : ({{.*}}) -> tensor<1x16x1x8x!quant.uniform<i8:f32, 0.1:3>>
// CHECK-NEXT:    %1 = qnn.global_average_pool %0 {layout = "nhwc", shift = -2} : (tensor<1x16x1x8x!quant.uniform<i8:f32, 0.1:3>>) -> tensor<1x1x1x8x!quant.uniform<i8:f32, 0.05:-2>>
// CHECK-NEXT:    %m_q = nn.reshape %1 : tensor<1x1x1x8x!quant.uniform<i8:f32, 0.05:-2>>
// CHECK-NEXT:    %m_dq = quant.dcast %m_q
// CHECK-NEXT:    %2 = nn.reshape %x_q : ({{.*}}) -> tensor<1x16x1x8x!quant.uniform<i8:f32, 0.1:3>>
// CHECK-NEXT:    %3 = qnn.global_average_pool %2 {layout = "nhwc", multiplier = 1717986918, shift = -2} : ({{.*}}) -> tensor<1x1x1x8x!quant.uniform<i8:f32, 0.5>>
// CHECK-NEXT:    %s_q = nn.reshape %3 : (tensor<1x1x1x8x!quant.uniform<i8:f32, 0.5>>) -> tensor<1x8x!quant.uniform<i8:f32, 0.5>>
// CHECK-NEXT:    %s_dq = quant.dcast %s_q
// CHECK-NEXT:    %4 = nn.reshape %x_q : ({{.*}}) -> tensor<1x16x8x1x!quant.uniform<i8:f32, 0.1:3>>
// CHECK-NEXT:    %5 = qnn.average_pool %4 {kernel_shape = [1, 8], layout = "nhwc", shift = -2} : ({{.*}}) -> tensor<1x16x1x1x!quant.uniform<i8:f32, 0.05:-2>>
// CHECK-NEXT:    %l_q = nn.reshape %5 : ({{.*}}) -> tensor<1x4x4x1x!quant.uniform<i8:f32, 0.05:-2>>
// CHECK-NEXT:    %l_dq = quant.dcast %l_q
// CHECK-NEXT:    %6 = nn.reshape %x_q : ({{.*}}) -> tensor<1x4x1x32x!quant.uniform<i8:f32, 0.1:3>>
// CHECK-NEXT:    %7 = qnn.max_pool %6 {kernel_shape = [4, 1], layout = "nhwc"} : ({{.*}}) -> tensor<1x1x1x32x!quant.uniform<i8:f32, 0.1:3>>
// CHECK-NEXT:    %k_q = nn.reshape %7 : ({{.*}}) -> tensor<1x1x4x8x!quant.uniform<i8:f32, 0.1:3>>
// CHECK-NEXT:    %k_dq = quant.dcast %k_q
// CHECK-NEXT:    %t = nn.reduce_mean %x_dq {axes = [1, 3], irc.float = "it reduces axes [1, 3] that are not adjacent"}

// A target whose support table has no reductions: they stay float (the pools would
// stand in for ops the target does not take).
// NOLUT-LABEL: func.func @reduce(
// NOLUT-NOT:     qnn.
// NOLUT:         %m = nn.reduce_mean %x_dq {axes = [1, 2], irc.float = "nn.reduce_mean: not in target no-lut's support table"}
// NOLUT:         %k = nn.reduce_max %x_dq {axes = [1], irc.float = "nn.reduce_max: not in target no-lut's support table"}
// expected-remark @+1 {{lower-to-qnn: 4 ops lowered, 1 float}}
func.func @reduce(%x: tensor<1x4x4x8xf32>) -> (tensor<1x1x1x8xf32>, tensor<1x8xf32>, tensor<1x4x4x1xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x1xf32>) {
  %x_q = quant.qcast %x : tensor<1x4x4x8xf32> to tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:3>>
  %x_dq = quant.dcast %x_q : tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:3>> to tensor<1x4x4x8xf32>
  %m = nn.reduce_mean %x_dq {axes = [1, 2]} : (tensor<1x4x4x8xf32>) -> tensor<1x1x1x8xf32>
  %m_q = quant.qcast %m : tensor<1x1x1x8xf32> to tensor<1x1x1x8x!quant.uniform<i8:f32, 0.05:-2>>
  %m_dq = quant.dcast %m_q : tensor<1x1x1x8x!quant.uniform<i8:f32, 0.05:-2>> to tensor<1x1x1x8xf32>
  %s = nn.reduce_sum %x_dq {axes = [1, 2], keepdims = false} : (tensor<1x4x4x8xf32>) -> tensor<1x8xf32>
  %s_q = quant.qcast %s : tensor<1x8xf32> to tensor<1x8x!quant.uniform<i8:f32, 0.5:0>>
  %s_dq = quant.dcast %s_q : tensor<1x8x!quant.uniform<i8:f32, 0.5:0>> to tensor<1x8xf32>
  %l = nn.reduce_mean %x_dq {axes = [-1]} : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x1xf32>
  %l_q = quant.qcast %l : tensor<1x4x4x1xf32> to tensor<1x4x4x1x!quant.uniform<i8:f32, 0.05:-2>>
  %l_dq = quant.dcast %l_q : tensor<1x4x4x1x!quant.uniform<i8:f32, 0.05:-2>> to tensor<1x4x4x1xf32>
  %k = nn.reduce_max %x_dq {axes = [1]} : (tensor<1x4x4x8xf32>) -> tensor<1x1x4x8xf32>
  %k_q = quant.qcast %k : tensor<1x1x4x8xf32> to tensor<1x1x4x8x!quant.uniform<i8:f32, 0.1:3>>
  %k_dq = quant.dcast %k_q : tensor<1x1x4x8x!quant.uniform<i8:f32, 0.1:3>> to tensor<1x1x4x8xf32>
  // expected-note @+1 {{stays float: it reduces axes [1, 3] that are not adjacent}}
  %t = nn.reduce_mean %x_dq {axes = [1, 3]} : (tensor<1x4x4x8xf32>) -> tensor<1x1x4x1xf32>
  %t_q = quant.qcast %t : tensor<1x1x4x1xf32> to tensor<1x1x4x1x!quant.uniform<i8:f32, 0.05:-2>>
  %t_dq = quant.dcast %t_q : tensor<1x1x4x1x!quant.uniform<i8:f32, 0.05:-2>> to tensor<1x1x4x1xf32>
  func.return %m_dq, %s_dq, %l_dq, %k_dq, %t_dq : tensor<1x1x1x8xf32>, tensor<1x8xf32>, tensor<1x4x4x1xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x1xf32>
}

// -----

// A linear resize becomes qnn.resize on the quantized input, which keeps its type; a
// result of another type is requantized. Cubic has no integer form.
// CHECK-LABEL: func.func @resize_linear
// CHECK:         %[[R:.*]] = qnn.resize %x_q {coordinate_transformation_mode = "align_corners", scales = [1.0, 2.0, 2.0, 1.0]} : (tensor<1x2x2x4x!quant.uniform<i8:f32, 0.1:3>>) -> tensor<1x4x4x4x!quant.uniform<i8:f32, 0.1:3>>
// CHECK-NEXT:    %{{.*}} = qnn.requantize %[[R]] {{.*}} -> tensor<1x4x4x4x!quant.uniform<i8:f32, 0.2:3>>
// CHECK:         nn.resize %{{.*}} {mode = "cubic"
// expected-remark @+1 {{lower-to-qnn: 1 ops lowered, 1 float}}
func.func @resize_linear(%x: tensor<1x2x2x4xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) {
  %x_q = quant.qcast %x : tensor<1x2x2x4xf32> to tensor<1x2x2x4x!quant.uniform<i8:f32, 0.1:3>>
  %x_dq = quant.dcast %x_q : tensor<1x2x2x4x!quant.uniform<i8:f32, 0.1:3>> to tensor<1x2x2x4xf32>
  %r = nn.resize %x_dq {mode = "linear", coordinate_transformation_mode = "align_corners", scales = array<f32: 1.0, 2.0, 2.0, 1.0>} : (tensor<1x2x2x4xf32>) -> tensor<1x4x4x4xf32>
  %r_q = quant.qcast %r : tensor<1x4x4x4xf32> to tensor<1x4x4x4x!quant.uniform<i8:f32, 0.2:3>>
  %r_dq = quant.dcast %r_q : tensor<1x4x4x4x!quant.uniform<i8:f32, 0.2:3>> to tensor<1x4x4x4xf32>
  // expected-note @+1 {{stays float: resize mode "cubic" computes new values}}
  %c = nn.resize %x_dq {mode = "cubic", scales = array<f32: 1.0, 2.0, 2.0, 1.0>} : (tensor<1x2x2x4xf32>) -> tensor<1x4x4x4xf32>
  %c_q = quant.qcast %c : tensor<1x4x4x4xf32> to tensor<1x4x4x4x!quant.uniform<i8:f32, 0.2:3>>
  %c_dq = quant.dcast %c_q : tensor<1x4x4x4x!quant.uniform<i8:f32, 0.2:3>> to tensor<1x4x4x4xf32>
  func.return %r_dq, %c_dq : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>
}
