// RUN: irc-opt %s --split-input-file --verify-diagnostics -p fold-batchnorm | FileCheck %s
// RUN: irc-opt %s --split-input-file --verify-diagnostics -p 'fold-batchnorm{lower-unfused=false}' | FileCheck %s --check-prefix=KEEP

// `fold-batchnorm` folds a batch norm with constant parameters into the conv,
// conv_transpose or gemm before it: with scale = gamma / sqrt(var + epsilon) and
// shift = beta - mean * scale, W' = W * scale per output channel and
// b' = b * scale + shift. A batch norm it cannot fold becomes a per-channel mul and
// add (unless lower-unfused=false). Most cases use gamma = [2, 1], beta = [1, 0],
// mean = [1, 2], var = [4, 0.25] and epsilon = 0: scale = [1, 2], shift = [0, -4].

// A conv without bias: its weight is scaled per output channel (axis 0) and the
// shift becomes its bias. The new constants keep the old ones' names.
// CHECK-LABEL: func.func @conv
// CHECK-NEXT:    %w = nn.constant dense<{{\[\[\[\[}}1.000000e+00]], {{\[\[}}2.000000e+00]]], {{\[\[\[}}6.000000e+00]], {{\[\[}}8.000000e+00]]]]> : tensor<2x2x1x1xf32>
// CHECK-NEXT:    %beta = nn.constant dense<[0.000000e+00, -4.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %z = nn.conv %x, %w, %beta : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    func.return %z
// KEEP-LABEL: func.func @conv
// KEEP-NOT:     nn.batch_norm
// KEEP:         func.return
func.func @conv(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = nn.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>
  %gamma = nn.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %beta = nn.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %mean = nn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %var = nn.constant dense<[4.0, 0.25]> : tensor<2xf32>
  %y = nn.conv %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %z = nn.batch_norm %y, %gamma, %beta, %mean, %var {epsilon = 0.0} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  func.return %z : tensor<1x2x4x4xf32>
}

// -----

// A grouped conv with a bias: b' = b * scale + shift, here scale = [1, 2, 3, 4],
// shift = [0.5, ...], b = 1.
// CHECK-LABEL: func.func @grouped_conv_with_bias
// CHECK-NEXT:    %w = nn.constant dense<{{\[\[\[\[}}1.000000e+00]]], {{\[\[\[}}2.000000e+00]]], {{\[\[\[}}3.000000e+00]]], {{\[\[\[}}4.000000e+00]]]]> : tensor<4x1x1x1xf32>
// CHECK-NEXT:    %b = nn.constant dense<[1.500000e+00, 2.500000e+00, 3.500000e+00, 4.500000e+00]> : tensor<4xf32>
// CHECK-NEXT:    %z = nn.conv %x, %w, %b {group = 2}
// CHECK-NEXT:    func.return %z
func.func @grouped_conv_with_bias(%x: tensor<1x2x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %w = nn.constant dense<1.0> : tensor<4x1x1x1xf32>
  %b = nn.constant dense<1.0> : tensor<4xf32>
  %gamma = nn.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %beta = nn.constant dense<0.5> : tensor<4xf32>
  %mean = nn.constant dense<0.0> : tensor<4xf32>
  %var = nn.constant dense<1.0> : tensor<4xf32>
  %y = nn.conv %x, %w, %b {group = 2} : (tensor<1x2x3x3xf32>, tensor<4x1x1x1xf32>, tensor<4xf32>) -> tensor<1x4x3x3xf32>
  %z = nn.batch_norm %y, %gamma, %beta, %mean, %var {epsilon = 0.0} : (tensor<1x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x3x3xf32>
  func.return %z : tensor<1x4x3x3xf32>
}

// -----

// A conv_transpose's weight is (C, M/group, k...): with 2 groups, input channels 0-1
// write output channel 0 (scale 2) and input channels 2-3 output channel 1 (scale 3).
// CHECK-LABEL: func.func @grouped_conv_transpose
// CHECK-NEXT:    %w = nn.constant dense<{{\[\[\[\[}}2.000000e+00]]], {{\[\[\[}}2.000000e+00]]], {{\[\[\[}}3.000000e+00]]], {{\[\[\[}}3.000000e+00]]]]> : tensor<4x1x1x1xf32>
// CHECK-NEXT:    %beta = nn.constant dense<[0.000000e+00, 1.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %z = nn.conv_transpose %x, %w, %beta {group = 2}
// CHECK-NEXT:    func.return %z
func.func @grouped_conv_transpose(%x: tensor<1x4x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = nn.constant dense<1.0> : tensor<4x1x1x1xf32>
  %gamma = nn.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %beta = nn.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %mean = nn.constant dense<0.0> : tensor<2xf32>
  %var = nn.constant dense<1.0> : tensor<2xf32>
  %y = nn.conv_transpose %x, %w {group = 2} : (tensor<1x4x2x2xf32>, tensor<4x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %z = nn.batch_norm %y, %gamma, %beta, %mean, %var {epsilon = 0.0} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  func.return %z : tensor<1x2x2x2xf32>
}

// -----

// A gemm with trans_b: B is (N, K), so its rows are the output features
// (scale = [2, 3]). Its beta (0.5) is folded into the new C, and dropped:
// C' = (0.5 * C - mean) * scale + beta = [(0.5 - 1) * 2 + 0, 0.5 * 3 + 1].
// CHECK-LABEL: func.func @gemm_trans_b
// CHECK-NEXT:    %b = nn.constant dense<{{\[\[}}2.000000e+00, 2.000000e+00, 2.000000e+00], [3.000000e+00, 3.000000e+00, 3.000000e+00]]> : tensor<2x3xf32>
// CHECK-NEXT:    %c = nn.constant dense<[-1.000000e+00, 2.500000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %z = nn.gemm %a, %b, %c {trans_b = true} : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT:    func.return %z
func.func @gemm_trans_b(%a: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %b = nn.constant dense<1.0> : tensor<2x3xf32>
  %c = nn.constant dense<1.0> : tensor<2xf32>
  %gamma = nn.constant dense<[2.0, 6.0]> : tensor<2xf32>
  %beta = nn.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %mean = nn.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %var = nn.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %y = nn.gemm %a, %b, %c {beta = 0.5, trans_b = true} : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %z = nn.batch_norm %y, %gamma, %beta, %mean, %var {epsilon = 0.0} : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  func.return %z : tensor<4x2xf32>
}

// -----

// Channels-last conv weights are (O, k..., I): still scaled along axis 0.
// CHECK-LABEL: func.func @channels_last_conv
// CHECK-NEXT:    %w = nn.constant dense<{{\[\[\[\[}}1.000000e+00, 2.000000e+00]]], {{\[\[\[}}6.000000e+00, 8.000000e+00]]]]> : tensor<2x1x1x2xf32>
// CHECK-NEXT:    %beta = nn.constant dense<[0.000000e+00, -4.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %z = nn.conv %x, %w, %beta {layout = "nhwc"}
// CHECK-NEXT:    func.return %z
func.func @channels_last_conv(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %w = nn.constant dense<[[[[1.0, 2.0]]], [[[3.0, 4.0]]]]> : tensor<2x1x1x2xf32>
  %gamma = nn.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %beta = nn.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %mean = nn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %var = nn.constant dense<[4.0, 0.25]> : tensor<2xf32>
  %y = nn.conv %x, %w {layout = "nhwc"} : (tensor<1x4x4x2xf32>, tensor<2x1x1x2xf32>) -> tensor<1x4x4x2xf32>
  %z = nn.batch_norm %y, %gamma, %beta, %mean, %var {epsilon = 0.0, layout = "nhwc"} : (tensor<1x4x4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  func.return %z : tensor<1x4x4x2xf32>
}

// -----

// With nothing to fold into (here a concat), the batch norm becomes a mul and an add
// by constants shaped (C, 1, 1) to broadcast over a channels-first rank-4 tensor.
// CHECK-LABEL: func.func @after_concat
// CHECK-NEXT:    %c = nn.concat %a, %b {axis = 1}
// CHECK-NEXT:    %z_scale = nn.constant dense<{{\[\[\[}}1.000000e+00]], {{\[\[}}2.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK-NEXT:    %z_scaled = nn.mul %c, %z_scale : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    %z_shift = nn.constant dense<{{\[\[\[}}0.000000e+00]], {{\[\[}}-4.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK-NEXT:    %z = nn.add %z_scaled, %z_shift : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    func.return %z
// With lower-unfused=false it stays.
// KEEP-LABEL: func.func @after_concat
// KEEP:         nn.batch_norm
func.func @after_concat(%a: tensor<1x1x4x4xf32>, %b: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %gamma = nn.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %beta = nn.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %mean = nn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %var = nn.constant dense<[4.0, 0.25]> : tensor<2xf32>
  %c = nn.concat %a, %b {axis = 1} : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
  %z = nn.batch_norm %c, %gamma, %beta, %mean, %var {epsilon = 0.0} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  func.return %z : tensor<1x2x4x4xf32>
}

// -----

// Channels last, the channel axis is the last one: the constants are (C).
// CHECK-LABEL: func.func @channels_last_unfused
// CHECK:         %z_scaled = nn.mul %x, %z_scale : (tensor<1x4x4x2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
// CHECK:         %z = nn.add %z_scaled, %z_shift : (tensor<1x4x4x2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
func.func @channels_last_unfused(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %gamma = nn.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %beta = nn.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %mean = nn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %var = nn.constant dense<[4.0, 0.25]> : tensor<2xf32>
  %z = nn.batch_norm %x, %gamma, %beta, %mean, %var {epsilon = 0.0, layout = "nhwc"} : (tensor<1x4x4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  func.return %z : tensor<1x4x4x2xf32>
}

// -----

// Must not fire: the parameters are not constants (the pass says so).
// CHECK-LABEL: func.func @non_constant_parameters
// CHECK-NEXT:    %w = nn.constant
// CHECK-NEXT:    %stats = nn.constant
// CHECK-NEXT:    %y = nn.conv %x, %w :
// CHECK-NEXT:    %z = nn.batch_norm %y, %gamma, %stats, %stats, %stats
func.func @non_constant_parameters(%x: tensor<1x2x4x4xf32>, %gamma: tensor<2xf32>) -> tensor<1x2x4x4xf32> {
  %w = nn.constant dense<1.0> : tensor<2x2x1x1xf32>
  %stats = nn.constant dense<1.0> : tensor<2xf32>
  %y = nn.conv %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  // expected-remark @+1 {{nn.batch_norm not folded: its parameters are not constants with data}}
  %z = nn.batch_norm %y, %gamma, %stats, %stats, %stats : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  func.return %z : tensor<1x2x4x4xf32>
}

// -----

// Must not fold: the conv's result has another user, which needs it unnormalized.
// The conv stays as it is and the batch norm becomes a scale and shift.
// CHECK-LABEL: func.func @producer_with_two_users
// CHECK:         %y = nn.conv %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
// CHECK:         nn.mul %y,
// CHECK:         %z = nn.add
// CHECK:         func.return %z, %y
func.func @producer_with_two_users(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = nn.constant dense<1.0> : tensor<2x2x1x1xf32>
  %gamma = nn.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %beta = nn.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %mean = nn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %var = nn.constant dense<[4.0, 0.25]> : tensor<2xf32>
  %y = nn.conv %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %z = nn.batch_norm %y, %gamma, %beta, %mean, %var {epsilon = 0.0} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  func.return %z, %y : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// Must not fold: the conv has a fused relu, and relu then batch norm is not linear
// in the conv's output.
// CHECK-LABEL: func.func @fused_activation
// CHECK:         %y = nn.conv %x, %w {activation = #nn.activation<relu>}
// CHECK:         nn.mul %y,
// CHECK:         %z = nn.add
// KEEP-LABEL: func.func @fused_activation
// KEEP:         %y = nn.conv %x, %w {activation = #nn.activation<relu>}
// KEEP-NEXT:    %z = nn.batch_norm %y
func.func @fused_activation(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = nn.constant dense<1.0> : tensor<2x2x1x1xf32>
  %gamma = nn.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %beta = nn.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %mean = nn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %var = nn.constant dense<[4.0, 0.25]> : tensor<2xf32>
  %y = nn.conv %x, %w {activation = #nn.activation<relu>} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %z = nn.batch_norm %y, %gamma, %beta, %mean, %var {epsilon = 0.0} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  func.return %z : tensor<1x2x4x4xf32>
}

// -----

// Must not fold: the conv's weight is not a constant.
// CHECK-LABEL: func.func @weight_not_constant
// CHECK:         %y = nn.conv %x, %w :
// CHECK:         nn.mul %y,
func.func @weight_not_constant(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %gamma = nn.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %beta = nn.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %mean = nn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %var = nn.constant dense<[4.0, 0.25]> : tensor<2xf32>
  %y = nn.conv %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %z = nn.batch_norm %y, %gamma, %beta, %mean, %var {epsilon = 0.0} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  func.return %z : tensor<1x2x4x4xf32>
}
