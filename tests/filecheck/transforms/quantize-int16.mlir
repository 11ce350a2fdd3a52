// RUN: irc-opt %s -p 'quantize{stats=%S/Inputs/quantize-stats.json activations=int16}' | FileCheck %s --check-prefix=QDQ
// RUN: irc-opt %s -p 'quantize{stats=%S/Inputs/quantize-stats.json activations=int16},lower-to-qnn' | FileCheck %s --check-prefix=QNN
// RUN: irc-opt %s -p 'quantize{stats=%S/Inputs/quantize-stats.json int16-names=sum}' | FileCheck %s --check-prefix=MIXED

// 16-bit activations (`activations=int16`): symmetric over the calibrated range, zero
// point 0, scale max|x| / 32767 (x over [-1, 3]: 3 / 32767; the conv's result over
// [0, 6]: 6 / 32767); the weights stay int8 per channel, the bias becomes int64 of
// scale s_in * s_w (0.1 / (3/32767 * 0.01) = 109223). The integer conv accumulates in
// the wide i64 accumulator, which the requantization scales to int16; the max pool
// moves int16 values.

// QDQ-LABEL: func.func @conv_relu_pool(
// QDQ-NEXT:    %x_q = quant.qcast %x : tensor<1x2x4x4xf32> to tensor<1x2x4x4x!quant.uniform<i16:f32, 9.155552834272385e-05>>
// QDQ:         %b_i = nn.constant dense<[109223, -27306, 0]> : tensor<3xi64>
// QDQ-NEXT:    %1 = quant.scast %b_i : tensor<3xi64> to tensor<3x!quant.uniform<i64:f32:0, {{.*}}>>
// QDQ:         %y_q = quant.qcast %y : tensor<1x3x4x4xf32> to tensor<1x3x4x4x!quant.uniform<i16:f32, 0.0001831110566854477>>
// QDQ:         %p_q = quant.qcast %p : tensor<1x3x3x3xf32> to tensor<1x3x3x3x!quant.uniform<i16:f32, 0.0001831110566854477>>

// QNN-LABEL: func.func @conv_relu_pool(
// QNN:         %2 = qnn.conv %x_q, %0, %1 : (tensor<1x2x4x4x!quant.uniform<i16:f32, 9.155552834272385e-05>>, {{.*}}, tensor<3x!quant.uniform<i64:f32:0, {{.*}}>>) -> tensor<1x3x4x4xi64>
// QNN-NEXT:    %y_q = qnn.requantize %2 {axis = 1, clamp_min = 0, multiplier = [1374389545, 1374389545, 2061584275], shift = [7, 6, 6]} : (tensor<1x3x4x4xi64>) -> tensor<1x3x4x4x!quant.uniform<i16:f32, 0.0001831110566854477>>
// QNN-NEXT:    %p_q = qnn.max_pool %y_q {kernel_shape = [2, 2]} : (tensor<1x3x4x4x!quant.uniform<i16:f32, {{.*}}>>) -> tensor<1x3x3x3x!quant.uniform<i16:f32, {{.*}}>>

// MIXED-LABEL: func.func @conv_relu_pool(
// MIXED:         quant.qcast %x : tensor<1x2x4x4xf32> to tensor<1x2x4x4x!quant.uniform<i8:f32,
func.func @conv_relu_pool(%x: tensor<1x2x4x4xf32> {irc.name = "x"}) -> tensor<1x3x3x3xf32> {
  %w = nn.constant dense<[[[[1.27]], [[-1.27]]], [[[1.28]], [[2.54]]], [[[-1.26]], [[3.81]]]]> : tensor<3x2x1x1xf32>
  %b = nn.constant dense<[0.1, -0.05, 0.0]> : tensor<3xf32>
  %y = nn.conv %x, %w, %b {activation = #nn.activation<relu>} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32> loc("conv1")
  %p = nn.max_pool %y {kernel_shape = [2, 2]} : (tensor<1x3x4x4xf32>) -> tensor<1x3x3x3xf32> loc("pool1")
  func.return %p : tensor<1x3x3x3xf32>
}


// `int16-names=sum`: the add's inputs and result are int16, so the concat that reads
// the sum, and with it the mul that shares the concat's type, are int16 too (one
// type per group of shared values); the function's inputs feed the add, so they are
// int16. A 16-bit add shifts its inputs left by 15, not 20.

// QDQ-LABEL: func.func @concat_union(
// QDQ:         %s_q = quant.qcast %s : tensor<1x4xf32> to tensor<1x4x!quant.uniform<i16:f32, {{.*}}>>

// QNN-LABEL: func.func @concat_union(
// QNN:         qnn.add {{.*}}left_shift = 15

// MIXED-LABEL: func.func @concat_union(
// MIXED-NEXT:    %x_q = quant.qcast %x : tensor<1x4xf32> to tensor<1x4x!quant.uniform<i16:f32,
// MIXED:         %s_q = quant.qcast %s : tensor<1x4xf32> to tensor<1x4x!quant.uniform<i16:f32,
// MIXED:         %t_q = quant.qcast %t : tensor<1x4xf32> to tensor<1x4x!quant.uniform<i16:f32,
// MIXED:         %c_q = quant.qcast %c : tensor<1x8xf32> to tensor<1x8x!quant.uniform<i16:f32,
func.func @concat_union(%x: tensor<1x4xf32> {irc.name = "x"}, %y: tensor<1x4xf32> {irc.name = "y"}) -> tensor<1x8xf32> {
  %s = nn.add %x, %y : tensor<1x4xf32> loc("sum")
  %t = nn.mul %x, %y : tensor<1x4xf32> loc("product")
  %c = nn.concat %s, %t {axis = 1} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x8xf32> loc("joined")
  func.return %c : tensor<1x8xf32>
}


// A sigmoid in int16 becomes a 16-bit lookup between symmetric int16 types: a table of
// 513 entries, one every 128 input values and one past the end, interpolated
// (`fixed_point.interpolated_lookup`; tests/test_int16.py checks its entries).

// QNN-LABEL: func.func @sigmoid16(
// QNN:         %g_q = qnn.lut %x_q {function = "sigmoid", table = [{{.*}}]} : (tensor<1x8x!quant.uniform<i16:f32, 0.00012207403779029846>>) -> tensor<1x8x!quant.uniform<i16:f32, 3.0518509447574615e-05>>
func.func @sigmoid16(%x: tensor<1x8xf32> {irc.name = "x"}) -> tensor<1x8xf32> {
  %g = nn.sigmoid %x : tensor<1x8xf32> loc("gate16")
  func.return %g : tensor<1x8xf32>
}


// A layer norm in int16 becomes the 16-bit integer layer norm between symmetric int16
// types: its values in Q18, weights gamma * 2^Q below 2^20 and biases beta * 2^(18 + Q)
// (Q = 18: a gamma of 2 keeps the weights below 2^20; the biases beta * 2^36), the
// epsilon term round(n^2 * eps / s_x^2) = 16 * 1e-5 / (4 / 32767)^2, and the
// multiplier of 2^-36 / s_out, requantizing the wide accumulator.

// QNN-LABEL: func.func @layer_norm16(
// QNN:         %n_q = qnn.layer_norm %x_q {biases = [6871947776, 0, -3435973888, 0], epsilon_term = 10737, multiplier = 2147418114, shift = 24, weights = [262144, 288358, 235930, 524288]} : (tensor<2x4x!quant.uniform<i16:f32, 0.00012207403779029846>>) -> tensor<2x4x!quant.uniform<i16:f32, 0.0002441480755805969>>
func.func @layer_norm16(%x: tensor<2x4xf32> {irc.name = "x"}) -> tensor<2x4xf32> {
  %gamma = nn.constant dense<[1.0, 1.1, 0.9, 2.0]> : tensor<4xf32>
  %beta = nn.constant dense<[0.1, 0.0, -0.05, 0.0]> : tensor<4xf32>
  %n = nn.layer_norm %x, %gamma, %beta {axis = -1, epsilon = 1.0e-05} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32> loc("norm16")
  func.return %n : tensor<2x4xf32>
}
