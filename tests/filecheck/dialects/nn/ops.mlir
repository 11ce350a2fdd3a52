// RUN: irc-opt %s | irc-opt | FileCheck %s
// RUN: irc-opt %s --mlir-print-op-generic | irc-opt | FileCheck %s

// Round-trip of every `nn` op: properties equal to their default are omitted when
// printed, other properties are printed as plain values, the type is written once
// when every operand and result has it, and the functional form is used otherwise.

// CHECK-LABEL: func.func @constants
func.func @constants() -> (tensor<2x3xf32>, tensor<4xf32>, tensor<3xi1>, tensor<2xi64>, tensor<2xf16>, tensor<2x3xf32>) {
  // CHECK-NEXT: %dense = nn.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
  %dense = nn.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  // CHECK-NEXT: %splat = nn.constant dense<5.000000e-01> : tensor<4xf32>
  %splat = nn.constant dense<0.5> : tensor<4xf32>
  // CHECK-NEXT: %mask = nn.constant dense<[true, false, true]> : tensor<3xi1>
  %mask = nn.constant dense<[true, false, true]> : tensor<3xi1>
  // CHECK-NEXT: %shape = nn.constant dense<[1, -1]> : tensor<2xi64>
  %shape = nn.constant dense<[1, -1]> : tensor<2xi64>
  // CHECK-NEXT: %half = nn.constant dense<[1.500000e+00, -2.000000e+00]> : tensor<2xf16>
  %half = nn.constant dense<[1.5, -2.0]> : tensor<2xf16>
  // CHECK-NEXT: %filled = nn.constant_of_shape {value = dense<7.000000e+00> : tensor<1xf32>} : tensor<2x3xf32>
  %filled = nn.constant_of_shape {value = dense<7.0> : tensor<1xf32>} : tensor<2x3xf32>
  // CHECK-NEXT: func.return %dense, %splat, %mask, %shape, %half, %filled
  func.return %dense, %splat, %mask, %shape, %half, %filled : tensor<2x3xf32>, tensor<4xf32>, tensor<3xi1>, tensor<2xi64>, tensor<2xf16>, tensor<2x3xf32>
}

// Infinities and NaN have no decimal spelling: they are printed as their bit pattern,
// as MLIR does, and a hexadecimal element of a float constant is read as one.
// CHECK-LABEL: func.func @special_floats
func.func @special_floats() -> (tensor<3xf32>, tensor<f32>, tensor<2xf16>) {
  // CHECK-NEXT: %f32 = nn.constant dense<[0xff800000, 0x7f800000, 0x7fc00000]> : tensor<3xf32>
  %f32 = nn.constant dense<[0xFF800000, 0x7F800000, 0x7FC00000]> : tensor<3xf32>
  // CHECK-NEXT: %splat = nn.constant dense<0xff800000> : tensor<f32>
  %splat = nn.constant dense<0xFF800000> : tensor<f32>
  // CHECK-NEXT: %f16 = nn.constant dense<[0xfc00, 1.000000e+00]> : tensor<2xf16>
  %f16 = nn.constant dense<[0xFC00, 0x3C00]> : tensor<2xf16>
  func.return %f32, %splat, %f16 : tensor<3xf32>, tensor<f32>, tensor<2xf16>
}

// CHECK-LABEL: func.func @activations
func.func @activations(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // CHECK-NEXT: %relu = nn.relu %x : tensor<2x8xf32>
  %relu = nn.relu %x : tensor<2x8xf32>
  // A property equal to its default is dropped; a non-default one is printed.
  // CHECK-NEXT: %leaky_default = nn.leaky_relu %relu : tensor<2x8xf32>
  %leaky_default = nn.leaky_relu %relu {alpha = 0.01} : tensor<2x8xf32>
  // CHECK-NEXT: %leaky = nn.leaky_relu %leaky_default {alpha = 0.2} : tensor<2x8xf32>
  %leaky = nn.leaky_relu %leaky_default {alpha = 0.2} : tensor<2x8xf32>
  // CHECK-NEXT: %elu = nn.elu %leaky {alpha = 0.5} : tensor<2x8xf32>
  %elu = nn.elu %leaky {alpha = 0.5} : tensor<2x8xf32>
  // CHECK-NEXT: %celu = nn.celu %elu {alpha = 2.0} : tensor<2x8xf32>
  %celu = nn.celu %elu {alpha = 2.0} : tensor<2x8xf32>
  // CHECK-NEXT: %selu = nn.selu %elu : tensor<2x8xf32>
  %selu = nn.selu %elu : tensor<2x8xf32>
  // CHECK-NEXT: %selu_custom = nn.selu %selu {alpha = 1.5, gamma = 2.0} : tensor<2x8xf32>
  %selu_custom = nn.selu %selu {alpha = 1.5, gamma = 2.0} : tensor<2x8xf32>
  // CHECK-NEXT: %relu6 = nn.clip %selu_custom {max = 6.0, min = 0.0} : tensor<2x8xf32>
  %relu6 = nn.clip %selu_custom {min = 0.0, max = 6.0} : tensor<2x8xf32>
  // CHECK-NEXT: %clip_low = nn.clip %relu6 {min = -1.25} : tensor<2x8xf32>
  %clip_low = nn.clip %relu6 {min = -1.25} : tensor<2x8xf32>
  // CHECK-NEXT: %sigmoid = nn.sigmoid %clip_low : tensor<2x8xf32>
  %sigmoid = nn.sigmoid %clip_low : tensor<2x8xf32>
  // CHECK-NEXT: %hard_sigmoid = nn.hard_sigmoid %sigmoid {alpha = 0.16666667} : tensor<2x8xf32>
  %hard_sigmoid = nn.hard_sigmoid %sigmoid {alpha = 0.16666667, beta = 0.5} : tensor<2x8xf32>
  // CHECK-NEXT: %hard_swish = nn.hard_swish %hard_sigmoid : tensor<2x8xf32>
  %hard_swish = nn.hard_swish %hard_sigmoid : tensor<2x8xf32>
  // CHECK-NEXT: %tanh = nn.tanh %hard_swish : tensor<2x8xf32>
  %tanh = nn.tanh %hard_swish : tensor<2x8xf32>
  // CHECK-NEXT: %softplus = nn.softplus %tanh : tensor<2x8xf32>
  %softplus = nn.softplus %tanh : tensor<2x8xf32>
  // CHECK-NEXT: %softsign = nn.softsign %softplus : tensor<2x8xf32>
  %softsign = nn.softsign %softplus : tensor<2x8xf32>
  // CHECK-NEXT: %gelu = nn.gelu %softsign : tensor<2x8xf32>
  %gelu = nn.gelu %softsign : tensor<2x8xf32>
  // CHECK-NEXT: %gelu_tanh = nn.gelu %gelu {approximate = "tanh"} : tensor<2x8xf32>
  %gelu_tanh = nn.gelu %gelu {approximate = "tanh"} : tensor<2x8xf32>
  // CHECK-NEXT: %mish = nn.mish %gelu_tanh : tensor<2x8xf32>
  %mish = nn.mish %gelu_tanh : tensor<2x8xf32>
  // CHECK-NEXT: func.return %mish
  func.return %mish : tensor<2x8xf32>
}

// CHECK-LABEL: func.func @unary_math
func.func @unary_math(%x: tensor<4xf32>, %i: tensor<3xi32>) -> (tensor<4xf32>, tensor<3xi32>) {
  // CHECK-NEXT: %exp = nn.exp %x : tensor<4xf32>
  %exp = nn.exp %x : tensor<4xf32>
  // CHECK-NEXT: %log = nn.log %exp : tensor<4xf32>
  %log = nn.log %exp : tensor<4xf32>
  // CHECK-NEXT: %sqrt = nn.sqrt %log : tensor<4xf32>
  %sqrt = nn.sqrt %log : tensor<4xf32>
  // CHECK-NEXT: %erf = nn.erf %sqrt : tensor<4xf32>
  %erf = nn.erf %sqrt : tensor<4xf32>
  // CHECK-NEXT: %reciprocal = nn.reciprocal %erf : tensor<4xf32>
  %reciprocal = nn.reciprocal %erf : tensor<4xf32>
  // CHECK-NEXT: %floor = nn.floor %reciprocal : tensor<4xf32>
  %floor = nn.floor %reciprocal : tensor<4xf32>
  // CHECK-NEXT: %ceil = nn.ceil %floor : tensor<4xf32>
  %ceil = nn.ceil %floor : tensor<4xf32>
  // CHECK-NEXT: %neg = nn.neg %ceil : tensor<4xf32>
  %neg = nn.neg %ceil : tensor<4xf32>
  // CHECK-NEXT: %abs = nn.abs %neg : tensor<4xf32>
  %abs = nn.abs %neg : tensor<4xf32>
  // CHECK-NEXT: %identity = nn.identity %abs : tensor<4xf32>
  %identity = nn.identity %abs : tensor<4xf32>
  // CHECK-NEXT: %dropout = nn.dropout %identity : tensor<4xf32>
  %dropout = nn.dropout %identity {ratio = 0.5} : tensor<4xf32>
  // CHECK-NEXT: %dropout_ratio = nn.dropout %dropout {ratio = 0.1} : tensor<4xf32>
  %dropout_ratio = nn.dropout %dropout {ratio = 0.1} : tensor<4xf32>
  // Integer element types are allowed where ONNX allows them.
  // CHECK-NEXT: %neg_int = nn.neg %i : tensor<3xi32>
  %neg_int = nn.neg %i : tensor<3xi32>
  // CHECK-NEXT: %abs_int = nn.abs %neg_int : tensor<3xi32>
  %abs_int = nn.abs %neg_int : tensor<3xi32>
  // CHECK-NEXT: func.return %dropout_ratio, %abs_int
  func.return %dropout_ratio, %abs_int : tensor<4xf32>, tensor<3xi32>
}

// CHECK-LABEL: func.func @cast
func.func @cast(%x: tensor<2x3xf32>) -> (tensor<2x3xi64>, tensor<2x3xf16>, tensor<2x3xi1>) {
  // CHECK-NEXT: %to_int = nn.cast %x {to = i64} : (tensor<2x3xf32>) -> tensor<2x3xi64>
  %to_int = nn.cast %x {to = i64} : (tensor<2x3xf32>) -> tensor<2x3xi64>
  // CHECK-NEXT: %to_half = nn.cast %to_int {to = f16} : (tensor<2x3xi64>) -> tensor<2x3xf16>
  %to_half = nn.cast %to_int {to = f16} : (tensor<2x3xi64>) -> tensor<2x3xf16>
  // CHECK-NEXT: %to_bool = nn.cast %x {to = i1} : (tensor<2x3xf32>) -> tensor<2x3xi1>
  %to_bool = nn.cast %x {to = i1} : (tensor<2x3xf32>) -> tensor<2x3xi1>
  // CHECK-NEXT: func.return %to_int, %to_half, %to_bool
  func.return %to_int, %to_half, %to_bool : tensor<2x3xi64>, tensor<2x3xf16>, tensor<2x3xi1>
}

// CHECK-LABEL: func.func @broadcasting
func.func @broadcasting(%a: tensor<2x3x4xf32>, %b: tensor<4xf32>, %c: tensor<3x1xf32>, %n: tensor<2x3xi64>) -> tensor<2x3x4xf32> {
  // CHECK-NEXT: %add = nn.add %a, %b : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  %add = nn.add %a, %b : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: %sub = nn.sub %add, %c : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %sub = nn.sub %add, %c : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
  // Operands and result of one type: the type is written once.
  // CHECK-NEXT: %mul = nn.mul %sub, %a : tensor<2x3x4xf32>
  %mul = nn.mul %sub, %a : tensor<2x3x4xf32>
  // CHECK-NEXT: %div = nn.div %mul, %b : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  %div = nn.div %mul, %b : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  // The exponent of nn.pow may have another element type.
  // CHECK-NEXT: %exponent = nn.constant dense<2> : tensor<i64>
  %exponent = nn.constant dense<2> : tensor<i64>
  // CHECK-NEXT: %pow = nn.pow %div, %exponent : (tensor<2x3x4xf32>, tensor<i64>) -> tensor<2x3x4xf32>
  %pow = nn.pow %div, %exponent : (tensor<2x3x4xf32>, tensor<i64>) -> tensor<2x3x4xf32>
  // Variadic ops take one or more operands.
  // CHECK-NEXT: %sum = nn.sum %pow, %b, %c : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %sum = nn.sum %pow, %b, %c : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: %sum_one = nn.sum %sum : tensor<2x3x4xf32>
  %sum_one = nn.sum %sum : tensor<2x3x4xf32>
  // CHECK-NEXT: %max = nn.max %sum_one, %b : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  %max = nn.max %sum_one, %b : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: %min = nn.min %max, %a, %c : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %min = nn.min %max, %a, %c : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: %int_sum = nn.add %n, %n : tensor<2x3xi64>
  %int_sum = nn.add %n, %n : tensor<2x3xi64>
  // CHECK-NEXT: func.return %min
  func.return %min : tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @comparisons
func.func @comparisons(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  // CHECK-NEXT: %eq = nn.equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %eq = nn.equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK-NEXT: %lt = nn.less %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %lt = nn.less %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK-NEXT: %le = nn.less_or_equal %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %le = nn.less_or_equal %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  // CHECK-NEXT: %gt = nn.greater %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %gt = nn.greater %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK-NEXT: %ge = nn.greater_or_equal %b, %a : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %ge = nn.greater_or_equal %b, %a : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  // CHECK-NEXT: %picked = nn.where %lt, %a, %b : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %picked = nn.where %lt, %a, %b : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %slope = nn.constant dense<[1.000000e-01, 2.000000e-01, 3.000000e-01]> : tensor<3xf32>
  %slope = nn.constant dense<[0.1, 0.2, 0.3]> : tensor<3xf32>
  // CHECK-NEXT: %prelu = nn.prelu %picked, %slope : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %prelu = nn.prelu %picked, %slope : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: func.return %prelu
  func.return %prelu : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @convolutions
func.func @convolutions(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<8xf32>, %dw: tensor<8x1x3x3xf32>, %x1: tensor<1x4x10xf32>, %w1: tensor<6x4x3xf32>) -> (tensor<1x8x4x4xf32>, tensor<1x8x8x8xf32>, tensor<1x6x8xf32>) {
  // CHECK-NEXT: %conv = nn.conv %x, %w, %b {pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<1x8x4x4xf32>
  %conv = nn.conv %x, %w, %b {pads = [1, 1, 1, 1], strides = [2, 2], group = 1} : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<1x8x4x4xf32>
  // Without bias, with dilation.
  // CHECK-NEXT: %dilated = nn.conv %x, %w {dilations = [2, 2], pads = [2, 2, 2, 2]} : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x8x8xf32>
  %dilated = nn.conv %x, %w {dilations = [2, 2], pads = [2, 2, 2, 2]} : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x8x8xf32>
  // Depthwise: one group per input channel, two output channels each.
  // CHECK-NEXT: %depthwise = nn.conv %x, %dw, %b {group = 4, pads = [1, 1, 1, 1]} : (tensor<1x4x8x8xf32>, tensor<8x1x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  %depthwise = nn.conv %x, %dw, %b {group = 4, pads = [1, 1, 1, 1]} : (tensor<1x4x8x8xf32>, tensor<8x1x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  // Asymmetric pads on a 1-D convolution: [begin, end].
  // CHECK-NEXT: %conv1d = nn.conv %x1, %w1 {pads = [0, 1]} : (tensor<1x4x10xf32>, tensor<6x4x3xf32>) -> tensor<1x6x9xf32>
  %conv1d = nn.conv %x1, %w1 {pads = [0, 1]} : (tensor<1x4x10xf32>, tensor<6x4x3xf32>) -> tensor<1x6x9xf32>
  // CHECK-NEXT: %strided1d = nn.conv %x1, %w1 {strides = [1]} : (tensor<1x4x10xf32>, tensor<6x4x3xf32>) -> tensor<1x6x8xf32>
  %strided1d = nn.conv %x1, %w1 {strides = [1]} : (tensor<1x4x10xf32>, tensor<6x4x3xf32>) -> tensor<1x6x8xf32>
  // CHECK-NEXT: func.return %conv, %depthwise, %strided1d
  func.return %conv, %depthwise, %strided1d : tensor<1x8x4x4xf32>, tensor<1x8x8x8xf32>, tensor<1x6x8xf32>
}

// CHECK-LABEL: func.func @conv_transpose
func.func @conv_transpose(%x: tensor<1x8x8x8xf32>, %w: tensor<8x2x2x2xf32>, %w3: tensor<8x2x3x3xf32>) -> (tensor<1x4x16x16xf32>, tensor<1x2x16x16xf32>) {
  // Grouped, no bias: channels out = 2 per group * 2 groups.
  // CHECK-NEXT: %up = nn.conv_transpose %x, %w {group = 2, strides = [2, 2]} : (tensor<1x8x8x8xf32>, tensor<8x2x2x2xf32>) -> tensor<1x4x16x16xf32>
  %up = nn.conv_transpose %x, %w {group = 2, strides = [2, 2]} : (tensor<1x8x8x8xf32>, tensor<8x2x2x2xf32>) -> tensor<1x4x16x16xf32>
  // CHECK-NEXT: %bias = nn.constant dense<[5.000000e-01, -5.000000e-01]> : tensor<2xf32>
  %bias = nn.constant dense<[0.5, -0.5]> : tensor<2xf32>
  // CHECK-NEXT: %padded = nn.conv_transpose %x, %w3, %bias {dilations = [1, 1], output_padding = [1, 1], pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x8x8x8xf32>, tensor<8x2x3x3xf32>, tensor<2xf32>) -> tensor<1x2x16x16xf32>
  %padded = nn.conv_transpose %x, %w3, %bias {output_padding = [1, 1], pads = [1, 1, 1, 1], strides = [2, 2], dilations = [1, 1]} : (tensor<1x8x8x8xf32>, tensor<8x2x3x3xf32>, tensor<2xf32>) -> tensor<1x2x16x16xf32>
  // CHECK-NEXT: func.return %up, %padded
  func.return %up, %padded : tensor<1x4x16x16xf32>, tensor<1x2x16x16xf32>
}

// CHECK-LABEL: func.func @matrix_products
func.func @matrix_products(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %bt: tensor<4x3xf32>, %c: tensor<4xf32>, %batch: tensor<5x2x3xf32>, %v: tensor<3xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<3x4xf32>, tensor<5x2x4xf32>, tensor<5x2xf32>, tensor<f32>) {
  // CHECK-NEXT: %gemm = nn.gemm %a, %b, %c : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %gemm = nn.gemm %a, %b, %c {alpha = 1.0, beta = 1.0, trans_a = false, trans_b = false} : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  // Without bias, B transposed, scaled.
  // CHECK-NEXT: %gemm_t = nn.gemm %a, %bt {alpha = 0.5, trans_b = true} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  %gemm_t = nn.gemm %a, %bt {alpha = 0.5, trans_b = true} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  // CHECK-NEXT: %gemm_ta = nn.gemm %a, %gemm_t, %c {beta = 2.0, trans_a = true} : (tensor<2x3xf32>, tensor<2x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %gemm_ta = nn.gemm %a, %gemm_t, %c {beta = 2.0, trans_a = true} : (tensor<2x3xf32>, tensor<2x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  // Batch dimensions broadcast; 1-D operands lose their added dimension.
  // CHECK-NEXT: %batched = nn.matmul %batch, %b : (tensor<5x2x3xf32>, tensor<3x4xf32>) -> tensor<5x2x4xf32>
  %batched = nn.matmul %batch, %b : (tensor<5x2x3xf32>, tensor<3x4xf32>) -> tensor<5x2x4xf32>
  // CHECK-NEXT: %matvec = nn.matmul %batch, %v : (tensor<5x2x3xf32>, tensor<3xf32>) -> tensor<5x2xf32>
  %matvec = nn.matmul %batch, %v : (tensor<5x2x3xf32>, tensor<3xf32>) -> tensor<5x2xf32>
  // CHECK-NEXT: %dot = nn.matmul %v, %v : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
  %dot = nn.matmul %v, %v : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
  // CHECK-NEXT: func.return %gemm, %gemm_t, %gemm_ta, %batched, %matvec, %dot
  func.return %gemm, %gemm_t, %gemm_ta, %batched, %matvec, %dot : tensor<2x4xf32>, tensor<2x4xf32>, tensor<3x4xf32>, tensor<5x2x4xf32>, tensor<5x2xf32>, tensor<f32>
}

// CHECK-LABEL: func.func @normalization
func.func @normalization(%x: tensor<2x4x5x5xf32>, %p: tensor<4xf32>, %seq: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>) -> (tensor<2x4x5x5xf32>, tensor<2x7x16xf32>) {
  // CHECK-NEXT: %bn = nn.batch_norm %x, %p, %p, %p, %p : (tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x5x5xf32>
  %bn = nn.batch_norm %x, %p, %p, %p, %p {epsilon = 1.0e-05} : (tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x5x5xf32>
  // CHECK-NEXT: %bn_eps = nn.batch_norm %bn, %p, %p, %p, %p {epsilon = 0.001} : (tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x5x5xf32>
  %bn_eps = nn.batch_norm %bn, %p, %p, %p, %p {epsilon = 0.001} : (tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x5x5xf32>
  // CHECK-NEXT: %in = nn.instance_norm %bn_eps, %p, %p {epsilon = 1.0e-06} : (tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x5x5xf32>
  %in = nn.instance_norm %bn_eps, %p, %p {epsilon = 1.0e-06} : (tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x5x5xf32>
  // CHECK-NEXT: %lrn = nn.lrn %in {size = 3} : tensor<2x4x5x5xf32>
  %lrn = nn.lrn %in {size = 3, alpha = 1.0e-04, beta = 0.75, bias = 1.0} : tensor<2x4x5x5xf32>
  // CHECK-NEXT: %lrn_custom = nn.lrn %lrn {alpha = 2.0e-05, beta = 0.5, bias = 2.0, size = 5} : tensor<2x4x5x5xf32>
  %lrn_custom = nn.lrn %lrn {size = 5, alpha = 2.0e-05, beta = 0.5, bias = 2.0} : tensor<2x4x5x5xf32>
  // CHECK-NEXT: %ln = nn.layer_norm %seq, %gamma, %beta : (tensor<2x7x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x7x16xf32>
  %ln = nn.layer_norm %seq, %gamma, %beta : (tensor<2x7x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x7x16xf32>
  // Without bias, normalizing the last two axes.
  // CHECK-NEXT: %ln_nobias = nn.layer_norm %ln, %gamma {axis = -2, epsilon = 1.0e-06} : (tensor<2x7x16xf32>, tensor<16xf32>) -> tensor<2x7x16xf32>
  %ln_nobias = nn.layer_norm %ln, %gamma {axis = -2, epsilon = 1.0e-06} : (tensor<2x7x16xf32>, tensor<16xf32>) -> tensor<2x7x16xf32>
  // CHECK-NEXT: func.return %lrn_custom, %ln_nobias
  func.return %lrn_custom, %ln_nobias : tensor<2x4x5x5xf32>, tensor<2x7x16xf32>
}

// CHECK-LABEL: func.func @pooling
func.func @pooling(%x: tensor<1x3x9x9xf32>) -> (tensor<1x3x5x5xf32>, tensor<1x3x4x4xf32>, tensor<1x3x3x3xf32>, tensor<1x3x1x1xf32>, tensor<1x3x1x1xf32>) {
  // CHECK-NEXT: %max = nn.max_pool %x {kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x3x9x9xf32>) -> tensor<1x3x5x5xf32>
  %max = nn.max_pool %x {kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2], ceil_mode = false} : (tensor<1x3x9x9xf32>) -> tensor<1x3x5x5xf32>
  // ceil_mode adds the partial last window.
  // CHECK-NEXT: %max_ceil = nn.max_pool %x {ceil_mode = true, kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x3x9x9xf32>) -> tensor<1x3x5x5xf32>
  %max_ceil = nn.max_pool %x {ceil_mode = true, kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x3x9x9xf32>) -> tensor<1x3x5x5xf32>
  // CHECK-NEXT: %max_dilated = nn.max_pool %x {dilations = [2, 2], kernel_shape = [3, 3], strides = [1, 1]} : (tensor<1x3x9x9xf32>) -> tensor<1x3x5x5xf32>
  %max_dilated = nn.max_pool %x {dilations = [2, 2], kernel_shape = [3, 3], strides = [1, 1]} : (tensor<1x3x9x9xf32>) -> tensor<1x3x5x5xf32>
  // CHECK-NEXT: %avg = nn.average_pool %x {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x3x9x9xf32>) -> tensor<1x3x4x4xf32>
  %avg = nn.average_pool %x {kernel_shape = [2, 2], strides = [2, 2], count_include_pad = false} : (tensor<1x3x9x9xf32>) -> tensor<1x3x4x4xf32>
  // CHECK-NEXT: %avg_pad = nn.average_pool %x {count_include_pad = true, kernel_shape = [3, 3], pads = [0, 0, 1, 1], strides = [3, 3]} : (tensor<1x3x9x9xf32>) -> tensor<1x3x3x3xf32>
  %avg_pad = nn.average_pool %x {count_include_pad = true, kernel_shape = [3, 3], pads = [0, 0, 1, 1], strides = [3, 3]} : (tensor<1x3x9x9xf32>) -> tensor<1x3x3x3xf32>
  // CHECK-NEXT: %gap = nn.global_average_pool %x : (tensor<1x3x9x9xf32>) -> tensor<1x3x1x1xf32>
  %gap = nn.global_average_pool %x : (tensor<1x3x9x9xf32>) -> tensor<1x3x1x1xf32>
  // CHECK-NEXT: %gmp = nn.global_max_pool %x : (tensor<1x3x9x9xf32>) -> tensor<1x3x1x1xf32>
  %gmp = nn.global_max_pool %x : (tensor<1x3x9x9xf32>) -> tensor<1x3x1x1xf32>
  // CHECK-NEXT: func.return %max, %avg, %avg_pad, %gap, %gmp
  func.return %max, %avg, %avg_pad, %gap, %gmp : tensor<1x3x5x5xf32>, tensor<1x3x4x4xf32>, tensor<1x3x3x3xf32>, tensor<1x3x1x1xf32>, tensor<1x3x1x1xf32>
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<2x3x4xf32>, %i: tensor<2x3xi64>) -> (tensor<2x1x1xf32>, tensor<3xf32>, tensor<1x1x1xf32>, tensor<2x3x1xf32>, tensor<2xi64>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  // CHECK-NEXT: %mean = nn.reduce_mean %x {axes = [1, 2]} : (tensor<2x3x4xf32>) -> tensor<2x1x1xf32>
  %mean = nn.reduce_mean %x {axes = [1, 2], keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x1x1xf32>
  // CHECK-NEXT: %sum = nn.reduce_sum %x {axes = [0, -1], keepdims = false} : (tensor<2x3x4xf32>) -> tensor<3xf32>
  %sum = nn.reduce_sum %x {axes = [0, -1], keepdims = false} : (tensor<2x3x4xf32>) -> tensor<3xf32>
  // No axes: reduce over all of them.
  // CHECK-NEXT: %max = nn.reduce_max %x : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32>
  %max = nn.reduce_max %x : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32>
  // CHECK-NEXT: %min = nn.reduce_min %x {axes = [2]} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  %min = nn.reduce_min %x {axes = [2]} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  // CHECK-NEXT: %int_sum = nn.reduce_sum %i {axes = [1], keepdims = false} : (tensor<2x3xi64>) -> tensor<2xi64>
  %int_sum = nn.reduce_sum %i {axes = [1], keepdims = false} : (tensor<2x3xi64>) -> tensor<2xi64>
  // CHECK-NEXT: %softmax = nn.softmax %x : tensor<2x3x4xf32>
  %softmax = nn.softmax %x {axis = -1} : tensor<2x3x4xf32>
  // CHECK-NEXT: %log_softmax = nn.log_softmax %softmax {axis = 1} : tensor<2x3x4xf32>
  %log_softmax = nn.log_softmax %softmax {axis = 1} : tensor<2x3x4xf32>
  // The mask broadcasts to the input; masked elements get probability 0.
  // CHECK-NEXT: %causal = nn.constant
  // CHECK-NEXT: %masked = nn.masked_softmax %x, %causal : (tensor<2x3x4xf32>, tensor<3x4xi1>) -> tensor<2x3x4xf32>
  %causal = nn.constant dense<[[false, true, true, true], [false, false, true, true], [false, false, false, true]]> : tensor<3x4xi1>
  %masked = nn.masked_softmax %x, %causal : (tensor<2x3x4xf32>, tensor<3x4xi1>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: func.return %mean, %sum, %max, %min, %int_sum, %softmax, %log_softmax
  func.return %mean, %sum, %max, %min, %int_sum, %softmax, %log_softmax : tensor<2x1x1xf32>, tensor<3xf32>, tensor<1x1x1xf32>, tensor<2x3x1xf32>, tensor<2xi64>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @concat_split
func.func @concat_split(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>, %c: tensor<2x1xf32>) -> (tensor<2x9xf32>, tensor<2x4xf32>, tensor<2x2xf32>, tensor<2x3xf32>, tensor<1x3xf32>) {
  // CHECK-NEXT: %cat = nn.concat %a, %b, %c {axis = 1} : (tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x1xf32>) -> tensor<2x9xf32>
  %cat = nn.concat %a, %b, %c {axis = 1} : (tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x1xf32>) -> tensor<2x9xf32>
  // CHECK-NEXT: %rows = nn.concat %a, %a {axis = -2} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %rows = nn.concat %a, %a {axis = -2} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  // A split with several results lists them all.
  // CHECK-NEXT: [[P0:%[^ ,]+]], [[P1:%[^ ,]+]], [[P2:%[^ ,]+]] = nn.split %cat {axis = 1, sizes = [4, 2, 3]} : (tensor<2x9xf32>) -> (tensor<2x4xf32>, tensor<2x2xf32>, tensor<2x3xf32>)
  %parts:3 = nn.split %cat {axis = 1, sizes = [4, 2, 3]} : (tensor<2x9xf32>) -> (tensor<2x4xf32>, tensor<2x2xf32>, tensor<2x3xf32>)
  // CHECK-NEXT: [[H0:%[^ ,]+]], [[H1:%[^ ,]+]] = nn.split %rows {sizes = [1, 3]} : (tensor<4x3xf32>) -> (tensor<1x3xf32>, tensor<3x3xf32>)
  %halves:2 = nn.split %rows {axis = 0, sizes = [1, 3]} : (tensor<4x3xf32>) -> (tensor<1x3xf32>, tensor<3x3xf32>)
  // A one-piece split has the input's type.
  // CHECK-NEXT: %whole = nn.split %a {sizes = [2]} : tensor<2x3xf32>
  %whole = nn.split %a {sizes = [2]} : tensor<2x3xf32>
  // CHECK-NEXT: func.return %cat, [[P0]], [[P1]], [[P2]], [[H0]] :
  func.return %cat, %parts#0, %parts#1, %parts#2, %halves#0 : tensor<2x9xf32>, tensor<2x4xf32>, tensor<2x2xf32>, tensor<2x3xf32>, tensor<1x3xf32>
}

// CHECK-LABEL: func.func @indexing
func.func @indexing(%x: tensor<4x6x8xf32>, %idx: tensor<2x3xi64>, %idx32: tensor<5xi32>) -> (tensor<2x3x4xf32>, tensor<4x2x8xf32>, tensor<2x3x6x8xf32>, tensor<4x5x8xf32>) {
  // CHECK-NEXT: %slice = nn.slice %x {axes = [1, 2], ends = [6, 8], starts = [1, 0], steps = [2, 2]} : (tensor<4x6x8xf32>) -> tensor<4x3x4xf32>
  %slice = nn.slice %x {starts = [1, 0], ends = [6, 8], axes = [1, 2], steps = [2, 2]} : (tensor<4x6x8xf32>) -> tensor<4x3x4xf32>
  // Negative starts and steps, and ends past the dimension, as ONNX allows.
  // CHECK-NEXT: %reversed = nn.slice %slice {axes = [0], ends = [-9223372036854775807], starts = [-1], steps = [-2]} : (tensor<4x3x4xf32>) -> tensor<2x3x4xf32>
  %reversed = nn.slice %slice {starts = [-1], ends = [-9223372036854775807], axes = [0], steps = [-2]} : (tensor<4x3x4xf32>) -> tensor<2x3x4xf32>
  // Without axes and steps: the first axes, step 1.
  // CHECK-NEXT: %prefix = nn.slice %x {ends = [100, 2], starts = [0, 0]} : (tensor<4x6x8xf32>) -> tensor<4x2x8xf32>
  %prefix = nn.slice %x {starts = [0, 0], ends = [100, 2]} : (tensor<4x6x8xf32>) -> tensor<4x2x8xf32>
  // CHECK-NEXT: %rows = nn.gather %x, %idx : (tensor<4x6x8xf32>, tensor<2x3xi64>) -> tensor<2x3x6x8xf32>
  %rows = nn.gather %x, %idx {axis = 0} : (tensor<4x6x8xf32>, tensor<2x3xi64>) -> tensor<2x3x6x8xf32>
  // CHECK-NEXT: %columns = nn.gather %x, %idx32 {axis = -2} : (tensor<4x6x8xf32>, tensor<5xi32>) -> tensor<4x5x8xf32>
  %columns = nn.gather %x, %idx32 {axis = -2} : (tensor<4x6x8xf32>, tensor<5xi32>) -> tensor<4x5x8xf32>
  // CHECK-NEXT: func.return %reversed, %prefix, %rows, %columns
  func.return %reversed, %prefix, %rows, %columns : tensor<2x3x4xf32>, tensor<4x2x8xf32>, tensor<2x3x6x8xf32>, tensor<4x5x8xf32>
}

// CHECK-LABEL: func.func @reshaping
func.func @reshaping(%x: tensor<2x3x4xf32>, %one: tensor<1x3x1xf32>) -> (tensor<6x4xf32>, tensor<2x12xf32>, tensor<24x1xf32>, tensor<3xf32>, tensor<1x3x1x1xf32>, tensor<4x2x3xf32>) {
  // CHECK-NEXT: %reshaped = nn.reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %reshaped = nn.reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  // CHECK-NEXT: %flat = nn.flatten %x : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  %flat = nn.flatten %x {axis = 1} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  // CHECK-NEXT: %column = nn.flatten %x {axis = 3} : (tensor<2x3x4xf32>) -> tensor<24x1xf32>
  %column = nn.flatten %x {axis = 3} : (tensor<2x3x4xf32>) -> tensor<24x1xf32>
  // CHECK-NEXT: %squeezed = nn.squeeze %one {axes = [0, -1]} : (tensor<1x3x1xf32>) -> tensor<3xf32>
  %squeezed = nn.squeeze %one {axes = [0, -1]} : (tensor<1x3x1xf32>) -> tensor<3xf32>
  // CHECK-NEXT: %unsqueezed = nn.unsqueeze %squeezed {axes = [0, 2, 3]} : (tensor<3xf32>) -> tensor<1x3x1x1xf32>
  %unsqueezed = nn.unsqueeze %squeezed {axes = [0, 2, 3]} : (tensor<3xf32>) -> tensor<1x3x1x1xf32>
  // CHECK-NEXT: %transposed = nn.transpose %x {perm = [2, 0, 1]} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %transposed = nn.transpose %x {perm = [2, 0, 1]} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  // CHECK-NEXT: func.return %reshaped, %flat, %column, %squeezed, %unsqueezed, %transposed
  func.return %reshaped, %flat, %column, %squeezed, %unsqueezed, %transposed : tensor<6x4xf32>, tensor<2x12xf32>, tensor<24x1xf32>, tensor<3xf32>, tensor<1x3x1x1xf32>, tensor<4x2x3xf32>
}

// CHECK-LABEL: func.func @padding
func.func @padding(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x6x7xf32>, tensor<1x2x6x6xf32>, tensor<1x2x5x5xf32>, tensor<1x2x2x4xf32>) {
  // CHECK-NEXT: %constant = nn.pad %x {pads = [0, 0, 1, 2, 0, 0, 1, 1], value = -1.0} : (tensor<1x2x4x4xf32>) -> tensor<1x2x6x7xf32>
  %constant = nn.pad %x {pads = [0, 0, 1, 2, 0, 0, 1, 1], mode = "constant", value = -1.0} : (tensor<1x2x4x4xf32>) -> tensor<1x2x6x7xf32>
  // CHECK-NEXT: %reflect = nn.pad %x {mode = "reflect", pads = [0, 0, 1, 1, 0, 0, 1, 1]} : (tensor<1x2x4x4xf32>) -> tensor<1x2x6x6xf32>
  %reflect = nn.pad %x {mode = "reflect", pads = [0, 0, 1, 1, 0, 0, 1, 1]} : (tensor<1x2x4x4xf32>) -> tensor<1x2x6x6xf32>
  // CHECK-NEXT: %edge = nn.pad %x {mode = "edge", pads = [0, 0, 0, 0, 0, 0, 1, 1]} : (tensor<1x2x4x4xf32>) -> tensor<1x2x5x5xf32>
  %edge = nn.pad %x {mode = "edge", pads = [0, 0, 0, 0, 0, 0, 1, 1]} : (tensor<1x2x4x4xf32>) -> tensor<1x2x5x5xf32>
  // Negative pads crop.
  // CHECK-NEXT: %cropped = nn.pad %x {pads = [0, 0, -1, 0, 0, 0, -1, 0]} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x4xf32>
  %cropped = nn.pad %x {pads = [0, 0, -1, 0, 0, 0, -1, 0]} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x4xf32>
  // CHECK-NEXT: func.return %constant, %reflect, %edge, %cropped
  func.return %constant, %reflect, %edge, %cropped : tensor<1x2x6x7xf32>, tensor<1x2x6x6xf32>, tensor<1x2x5x5xf32>, tensor<1x2x2x4xf32>
}

// CHECK-LABEL: func.func @resizing
func.func @resizing(%x: tensor<1x8x3x3xf32>) -> (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x2x6x6xf32>, tensor<1x2x6x6xf32>, tensor<2x8x3x3xf32>, tensor<3x24x3x3xf32>) {
  // CHECK-NEXT: %nearest = nn.resize %x {scales = [1.0, 1.0, 2.0, 2.0]} : (tensor<1x8x3x3xf32>) -> tensor<1x8x6x6xf32>
  %nearest = nn.resize %x {scales = [1.0, 1.0, 2.0, 2.0], mode = "nearest"} : (tensor<1x8x3x3xf32>) -> tensor<1x8x6x6xf32>
  // CHECK-NEXT: %linear = nn.resize %x {coordinate_transformation_mode = "align_corners", mode = "linear", scales = [1.0, 1.0, 2.0, 2.0]} : (tensor<1x8x3x3xf32>) -> tensor<1x8x6x6xf32>
  %linear = nn.resize %x {coordinate_transformation_mode = "align_corners", mode = "linear", scales = [1, 1, 2, 2]} : (tensor<1x8x3x3xf32>) -> tensor<1x8x6x6xf32>
  // CHECK-NEXT: %nearest_floor = nn.resize %x {coordinate_transformation_mode = "asymmetric", nearest_mode = "floor", scales = [1.0, 1.0, 1.5, 1.5]} : (tensor<1x8x3x3xf32>) -> tensor<1x8x4x4xf32>
  %nearest_floor = nn.resize %x {coordinate_transformation_mode = "asymmetric", nearest_mode = "floor", scales = [1.0, 1.0, 1.5, 1.5]} : (tensor<1x8x3x3xf32>) -> tensor<1x8x4x4xf32>
  // CHECK-NEXT: %dcr = nn.depth_to_space %x {blocksize = 2} : (tensor<1x8x3x3xf32>) -> tensor<1x2x6x6xf32>
  %dcr = nn.depth_to_space %x {blocksize = 2, mode = "DCR"} : (tensor<1x8x3x3xf32>) -> tensor<1x2x6x6xf32>
  // CHECK-NEXT: %crd = nn.depth_to_space %x {blocksize = 2, mode = "CRD"} : (tensor<1x8x3x3xf32>) -> tensor<1x2x6x6xf32>
  %crd = nn.depth_to_space %x {blocksize = 2, mode = "CRD"} : (tensor<1x8x3x3xf32>) -> tensor<1x2x6x6xf32>
  // CHECK-NEXT: %expanded = nn.expand %x : (tensor<1x8x3x3xf32>) -> tensor<2x8x3x3xf32>
  %expanded = nn.expand %x : (tensor<1x8x3x3xf32>) -> tensor<2x8x3x3xf32>
  // CHECK-NEXT: %tiled = nn.tile %x {repeats = [3, 3, 1, 1]} : (tensor<1x8x3x3xf32>) -> tensor<3x24x3x3xf32>
  %tiled = nn.tile %x {repeats = [3, 3, 1, 1]} : (tensor<1x8x3x3xf32>) -> tensor<3x24x3x3xf32>
  // CHECK-NEXT: func.return %nearest, %linear, %dcr, %crd, %expanded, %tiled
  func.return %nearest, %linear, %dcr, %crd, %expanded, %tiled : tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x2x6x6xf32>, tensor<1x2x6x6xf32>, tensor<2x8x3x3xf32>, tensor<3x24x3x3xf32>
}

// CHECK-LABEL: func.func @shapes
func.func @shapes(%x: tensor<2x3x4x5xf32>) -> (tensor<4xi64>, tensor<2xi64>, tensor<1xi64>) {
  // CHECK-NEXT: %all = nn.shape %x : (tensor<2x3x4x5xf32>) -> tensor<4xi64>
  %all = nn.shape %x {start = 0} : (tensor<2x3x4x5xf32>) -> tensor<4xi64>
  // CHECK-NEXT: %middle = nn.shape %x {end = 3, start = 1} : (tensor<2x3x4x5xf32>) -> tensor<2xi64>
  %middle = nn.shape %x {start = 1, end = 3} : (tensor<2x3x4x5xf32>) -> tensor<2xi64>
  // CHECK-NEXT: %last = nn.shape %x {start = -1} : (tensor<2x3x4x5xf32>) -> tensor<1xi64>
  %last = nn.shape %x {start = -1} : (tensor<2x3x4x5xf32>) -> tensor<1xi64>
  // CHECK-NEXT: func.return %all, %middle, %last
  func.return %all, %middle, %last : tensor<4xi64>, tensor<2xi64>, tensor<1xi64>
}

// The generic MLIR form is accepted and printed back in the custom form.
// CHECK-LABEL: func.func @generic_form
func.func @generic_form(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x2x2xf32>) {
  // CHECK-NEXT: %conv = nn.conv %x, %w {strides = [1, 1]} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %conv = "nn.conv"(%x, %w) <{strides = array<i64: 1, 1>, group = 1 : i64}> : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  // CHECK-NEXT: %leaky = nn.leaky_relu %conv {alpha = 0.1} : tensor<1x2x4x4xf32>
  %leaky = "nn.leaky_relu"(%conv) <{alpha = 0.1 : f32}> : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  // CHECK-NEXT: %pool = nn.max_pool %leaky {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  %pool = "nn.max_pool"(%leaky) <{kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode = false}> : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  // CHECK-NEXT: {{%[^ ,]+}}, {{%[^ ,]+}} = nn.split %leaky {axis = 1, sizes = [1, 1]} : (tensor<1x2x4x4xf32>) -> (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>)
  %parts:2 = "nn.split"(%leaky) <{axis = 1 : i64, sizes = array<i64: 1, 1>}> : (tensor<1x2x4x4xf32>) -> (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>)
  // CHECK-NEXT: %cast = nn.cast %pool {to = f16} : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf16>
  %cast = "nn.cast"(%pool) <{to = f16}> : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf16>
  // CHECK-NEXT: %zero = nn.constant dense<0.000000e+00> : tensor<2xf32>
  %zero = "nn.constant"() <{value = dense<0.0> : tensor<2xf32>}> : () -> tensor<2xf32>
  // CHECK-NEXT: func.return %leaky, %pool
  "func.return"(%leaky, %pool) : (tensor<1x2x4x4xf32>, tensor<1x2x2x2xf32>) -> ()
}

// Channels-last ops (`layout = "nhwc"`: N, spatial axes..., C; conv weights O, k..., I)
// and activations fused into their producer.
// CHECK-LABEL: func.func @layouts_and_activations
func.func @layouts_and_activations(%x: tensor<1x8x8x3xf32>, %w: tensor<4x3x3x3xf32>, %m: tensor<2x3xf32>, %n: tensor<3x2xf32>) -> (tensor<1x4x4x4xf32>, tensor<2x2xf32>) {
  // CHECK-NEXT: %conv = nn.conv %x, %w {activation = #nn.activation<clip min = 0.0, max = 6.0>, layout = "nhwc", pads = [1, 1, 1, 1]} : (tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32>) -> tensor<1x8x8x4xf32>
  %conv = nn.conv %x, %w {layout = "nhwc", pads = [1, 1, 1, 1], activation = #nn.activation<clip min = 0.0, max = 6.0>} : (tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32>) -> tensor<1x8x8x4xf32>
  // CHECK-NEXT: %pool = nn.max_pool %conv {kernel_shape = [2, 2], layout = "nhwc", strides = [2, 2]} : (tensor<1x8x8x4xf32>) -> tensor<1x4x4x4xf32>
  %pool = nn.max_pool %conv {kernel_shape = [2, 2], strides = [2, 2], layout = "nhwc"} : (tensor<1x8x8x4xf32>) -> tensor<1x4x4x4xf32>
  // CHECK-NEXT: %nchw = nn.global_average_pool %pool : (tensor<1x4x4x4xf32>) -> tensor<1x4x1x1xf32>
  %nchw = nn.global_average_pool %pool {layout = "nchw"} : (tensor<1x4x4x4xf32>) -> tensor<1x4x1x1xf32>
  // CHECK-NEXT: %mm = nn.matmul %m, %n {activation = #nn.activation<leaky_relu alpha = 0.1>} : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  %mm = nn.matmul %m, %n {activation = #nn.activation<leaky_relu alpha = 0.1>} : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  // CHECK-NEXT: %gemm = nn.gemm %m, %n {activation = #nn.activation<sigmoid>} : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  %gemm = nn.gemm %m, %n {activation = #nn.activation<sigmoid>} : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  // CHECK-NEXT: %sum = nn.add %mm, %gemm {activation = #nn.activation<relu>} : tensor<2x2xf32>
  %sum = nn.add %mm, %gemm {activation = #nn.activation<relu>} : tensor<2x2xf32>
  // CHECK-NEXT: %hs = nn.add %sum, %sum {activation = #nn.activation<hard_swish>} : tensor<2x2xf32>
  %hs = nn.add %sum, %sum {activation = #nn.activation<hard_swish>} : tensor<2x2xf32>
  // CHECK-NEXT: func.return %pool, %hs
  func.return %pool, %hs : tensor<1x4x4x4xf32>, tensor<2x2xf32>
}

// Discardable attributes of other dialects (pass annotations such as irc.ddr) print in
// MLIR's own syntax, on constants too, and read back the same.
// CHECK-LABEL: func.func @discardable_attributes
func.func @discardable_attributes(%x: tensor<2xf32>) -> tensor<2xf32> {
  // CHECK-NEXT: %c = nn.constant dense<1.000000e+00> : tensor<2xf32> {irc.ddr = array<i64: 64>}
  %c = nn.constant dense<1.0> : tensor<2xf32> {irc.ddr = array<i64: 64>}
  // CHECK-NEXT: %y = nn.add %x, %c {irc.ddr = array<i64: 0>, irc.note = "in place"} : tensor<2xf32>
  %y = nn.add %x, %c {irc.ddr = array<i64: 0>, irc.note = "in place"} : tensor<2xf32>
  func.return %y : tensor<2xf32>
}
