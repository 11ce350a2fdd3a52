// RUN: irc-opt %s --split-input-file -p 'quantize{stats=%S/Inputs/quantize-stats.json exclude-ops=tanh}' | FileCheck %s

// The calibration statistics (Inputs/quantize-stats.json) name tensors by the op's
// location and result index ("conv1#0") and arguments by "@function:arg:NAME".

// A conv with a fused relu and the max_pool after it. The input is quantized per
// tensor over its range [-1, 3] (scale 4/255, zero point -64); the weights per output
// channel over [-127, 127] (scales 0.01, 0.02, 0.03); the bias to int32 with scale
// s_in * s_w; the conv's result over [0, 6] (its range is the relu's: zero point
// -128). The max_pool only moves values: it keeps its input's type.

// CHECK-LABEL: func.func @conv_relu_pool(
// CHECK-NEXT:    %x_q = quant.qcast %x : tensor<1x2x4x4xf32> to tensor<1x2x4x4x!quant.uniform<i8:f32, 0.01568627543747425:-64>>
// CHECK-NEXT:    %x_dq = quant.dcast %x_q : {{.*}} to tensor<1x2x4x4xf32>
// CHECK-NEXT:    %w_i = nn.constant dense<{{\[\[\[\[}}127]], {{\[\[}}-127]]], {{\[\[\[}}64]], {{\[\[}}127]]], {{\[\[\[}}-42]], {{\[\[}}127]]]]> : tensor<3x2x1x1xi8>
// CHECK-NEXT:    %0 = quant.scast %w_i : tensor<3x2x1x1xi8> to tensor<3x2x1x1x!quant.uniform<i8<-127:127>:f32:0, {0.009999999776482582, 0.019999999552965164, 0.029999999329447746}>>
// CHECK-NEXT:    %w_q = quant.dcast %0
// CHECK-NEXT:    %b_i = nn.constant dense<[638, -159, 0]> : tensor<3xi32>
// CHECK-NEXT:    %1 = quant.scast %b_i : tensor<3xi32> to tensor<3x!quant.uniform<i32:f32:0, {0.00015686274{{[0-9]*}}, 0.00031372549{{[0-9]*}}, 0.00047058824{{[0-9]*}}}>>
// CHECK-NEXT:    %b_q = quant.dcast %1
// CHECK-NEXT:    %y = nn.conv %x_dq, %w_q, %b_q {activation = #nn.activation<relu>}
// CHECK-NEXT:    %y_q = quant.qcast %y : tensor<1x3x4x4xf32> to tensor<1x3x4x4x!quant.uniform<i8:f32, 0.0235294122248888:-128>>
// CHECK-NEXT:    %y_dq = quant.dcast %y_q
// CHECK-NEXT:    %p = nn.max_pool %y_dq {kernel_shape = [2, 2]}
// CHECK-NEXT:    %p_q = quant.qcast %p : tensor<1x3x3x3xf32> to tensor<1x3x3x3x!quant.uniform<i8:f32, 0.0235294122248888:-128>>
// CHECK-NEXT:    %p_dq = quant.dcast %p_q
// CHECK-NEXT:    func.return %p_dq
func.func @conv_relu_pool(%x: tensor<1x2x4x4xf32> {irc.name = "x"}) -> tensor<1x3x3x3xf32> {
  %w = nn.constant dense<[[[[1.27]], [[-1.27]]], [[[1.28]], [[2.54]]], [[[-1.26]], [[3.81]]]]> : tensor<3x2x1x1xf32>
  %b = nn.constant dense<[0.1, -0.05, 0.0]> : tensor<3xf32>
  %y = nn.conv %x, %w, %b {activation = #nn.activation<relu>} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32> loc("conv1")
  %p = nn.max_pool %y {kernel_shape = [2, 2]} : (tensor<1x3x4x4xf32>) -> tensor<1x3x3x3xf32> loc("pool1")
  func.return %p : tensor<1x3x3x3xf32>
}

// -----

// A concat's inputs and result share one type over the union of their ranges:
// [-2, 2] and [-1, 4] give [-2, 4] (scale 6/255, zero point -43) for the add, the mul
// and the concat alike, so the integer concat only copies.

// CHECK-LABEL: func.func @concat_union(
// CHECK-NEXT:    %x_q = quant.qcast %x
// CHECK-NEXT:    %x_dq = quant.dcast %x_q
// CHECK-NEXT:    %y_q = quant.qcast %y
// CHECK-NEXT:    %y_dq = quant.dcast %y_q
// CHECK-NEXT:    %s = nn.add %x_dq, %y_dq
// CHECK-NEXT:    %s_q = quant.qcast %s : tensor<1x4xf32> to tensor<1x4x!quant.uniform<i8:f32, 0.0235294122248888:-43>>
// CHECK:         %t = nn.mul %x_dq, %y_dq
// CHECK-NEXT:    %t_q = quant.qcast %t : tensor<1x4xf32> to tensor<1x4x!quant.uniform<i8:f32, 0.0235294122248888:-43>>
// CHECK:         %c = nn.concat %s_dq, %t_dq {axis = 1}
// CHECK-NEXT:    %c_q = quant.qcast %c : tensor<1x8xf32> to tensor<1x8x!quant.uniform<i8:f32, 0.0235294122248888:-43>>
func.func @concat_union(%x: tensor<1x4xf32> {irc.name = "x"}, %y: tensor<1x4xf32> {irc.name = "y"}) -> tensor<1x8xf32> {
  %s = nn.add %x, %y : tensor<1x4xf32> loc("sum")
  %t = nn.mul %x, %y : tensor<1x4xf32> loc("product")
  %c = nn.concat %s, %t {axis = 1} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x8xf32> loc("joined")
  func.return %c : tensor<1x8xf32>
}

// -----

// Must not fire without statistics: nothing is known of "unknown" (the statistics
// have no tensor of that name), so the add stays float; the relu after it has no
// quantized neighbour either and stays float too.

// CHECK-LABEL: func.func @no_statistics(
// CHECK-NEXT:    %s = nn.add %x, %x
// CHECK-NEXT:    %r = nn.relu %s
// CHECK-NEXT:    func.return %r
func.func @no_statistics(%x: tensor<4xf32> {irc.name = "x"}) -> tensor<4xf32> {
  %s = nn.add %x, %x : tensor<4xf32> loc("unknown")
  %r = nn.relu %s : tensor<4xf32> loc("unknown_relu")
  func.return %r : tensor<4xf32>
}

// -----

// A gemm with trans_b: its weights (N, K) get one scale per row (axis 0) and alpha is
// folded into them. The log_softmax has no quantized form: it reads the dequantized
// gemm result and its own result stays float, and so does the reshape that only
// moves the log_softmax's float values to the output.

// CHECK-LABEL: func.func @gemm_softmax(
// CHECK:         %w_i = nn.constant dense<{{\[\[}}127, 0, 0], [0, -127, 64]]> : tensor<2x3xi8>
// CHECK-NEXT:    %{{.*}} = quant.scast %w_i : tensor<2x3xi8> to tensor<2x3x!quant.uniform<i8<-127:127>:f32:0, {0.01574803143739700{{[0-9]*}}, 0.03149606287479400{{[0-9]*}}}>>
// CHECK:         %g = nn.gemm %x_dq, %w_q {trans_b = true}
// CHECK-NEXT:    %g_q = quant.qcast %g
// CHECK-NEXT:    %g_dq = quant.dcast %g_q
// CHECK-NEXT:    %p = nn.log_softmax %g_dq {axis = 1, irc.float = "nn.log_softmax has no quantized form"}
// CHECK-NEXT:    %r = nn.reshape %p
// CHECK-NEXT:    func.return %r
func.func @gemm_softmax(%x: tensor<1x3xf32> {irc.name = "x"}) -> tensor<2xf32> {
  %w = nn.constant dense<[[1.0, 0.0, 0.0], [0.0, -2.0, 1.0]]> : tensor<2x3xf32>
  %g = nn.gemm %x, %w {alpha = 2.0, trans_b = true} : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<1x2xf32> loc("fc")
  %p = nn.log_softmax %g {axis = 1} : tensor<1x2xf32> loc("prob")
  %r = nn.reshape %p : (tensor<1x2xf32>) -> tensor<2xf32> loc("flat")
  func.return %r : tensor<2xf32>
}

// -----

// Must not fire on a fused activation that is not a clamp: the integer conv can only
// clamp its result, so a conv carrying a leaky_relu stays float (keep the activation
// a separate op, which becomes a lookup table).

// CHECK-LABEL: func.func @fused_leaky_relu(
// CHECK-NEXT:    %w = nn.constant
// CHECK-NEXT:    %c = nn.conv %x, %w {activation = #nn.activation<leaky_relu alpha = 0.1>, irc.float = "its fused activation leaky_relu is not a clamp
// CHECK-NEXT:    func.return %c
func.func @fused_leaky_relu(%x: tensor<1x1x2x2xf32> {irc.name = "x"}) -> tensor<1x1x2x2xf32> {
  %w = nn.constant dense<[[[[0.5]]]]> : tensor<1x1x1x1xf32>
  %c = nn.conv %x, %w {activation = #nn.activation<leaky_relu alpha = 0.1>} : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x2x2xf32> loc("leaky")
  func.return %c : tensor<1x1x2x2xf32>
}

// -----

// A constant operand of an elementwise op is quantized per tensor over its own data
// ([0.5, 2], extended to 0: scale 2/255, zero point -128) and stored as integers.

// CHECK-LABEL: func.func @constant_operand(
// CHECK:         %k_i = nn.constant dense<[-64, 127]> : tensor<2xi8>
// CHECK-NEXT:    %0 = quant.scast %k_i : tensor<2xi8> to tensor<2x!quant.uniform<i8:f32, 0.007843137718737125:-128>>
// CHECK-NEXT:    %k_q = quant.dcast %0
// CHECK-NEXT:    %m = nn.mul %x_dq, %k_q
func.func @constant_operand(%x: tensor<2xf32> {irc.name = "x"}) -> tensor<2xf32> {
  %k = nn.constant dense<[0.5, 2.0]> : tensor<2xf32>
  %m = nn.mul %x, %k : tensor<2xf32> loc("scale")
  func.return %m : tensor<2xf32>
}
