// RUN: irc-opt %s --split-input-file --verify-diagnostics

// One case per rule of the `nn` verifiers (irc/dialects/nn.py). Each error is
// reported at the location of the op that breaks the rule.

// ---- Types shared by every op --------------------------------------------------------

func.func @dynamic_shape(%x: tensor<?x3xf32>) {
  // expected-error @+1 {{operand #0 must have a static shape, got tensor<?x3xf32>}}
  %y = nn.relu %x : tensor<?x3xf32>
  func.return
}

// -----

func.func @unranked(%x: tensor<*xf32>) {
  // Rejected by the operand constraint (a ranked tensor) before nn's own checks.
  // expected-error @+1 {{tensor<*xf32> should be of base attribute tensor}}
  %y = nn.relu %x : tensor<*xf32>
  func.return
}

// -----

func.func @dynamic_result(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{result #0 must have a static shape, got tensor<?x3xf32>}}
  %y = nn.reshape %x : (tensor<2x3xf32>) -> tensor<?x3xf32>
  func.return
}

// -----

func.func @result_type_mismatch(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{result type tensor<3x2xf32> does not match the inferred type tensor<2x3xf32>}}
  %y = nn.relu %x : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return
}

// -----

func.func @result_element_type_mismatch(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{result type tensor<2x3xf16> does not match the inferred type tensor<2x3xf32>}}
  %y = nn.add %x, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf16>
  func.return
}

// -----

func.func @float_only(%x: tensor<4xi32>) {
  // expected-error @+1 {{'nn.sigmoid' expects a floating-point input, got i32}}
  %y = nn.sigmoid %x : tensor<4xi32>
  func.return
}

// -----

func.func @float_only_conv(%x: tensor<1x1x4x4xi8>, %w: tensor<1x1x1x1xi8>) {
  // expected-error @+1 {{'nn.conv' expects a floating-point input, got i8}}
  %y = nn.conv %x, %w : (tensor<1x1x4x4xi8>, tensor<1x1x1x1xi8>) -> tensor<1x1x4x4xi8>
  func.return
}

// -----

func.func @property_of_wrong_kind(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x1x1xf32>) {
  // expected-error @+1 {{invalid value "x" for property 'strides' of 'nn.conv'}}
  %y = nn.conv %x, %w {strides = "x"} : (tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x4x4xf32>
  func.return
}

// -----

func.func @float_for_int_property(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{invalid value 1.500000e+00 : f64 for property 'axis' of 'nn.softmax'}}
  %y = nn.softmax %x {axis = 1.5} : tensor<2x3xf32>
  func.return
}

// -----

func.func @missing_required_property(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{kernel_shape}}
  %y = nn.max_pool %x : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  func.return
}

// ---- Constants -------------------------------------------------------------------------

// -----

func.func @constant_type_mismatch() {
  // expected-error @+1 {{value type tensor<2xf32> does not match result type tensor<3xf32>}}
  %c = "nn.constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<3xf32>
  func.return
}

// -----

func.func @constant_of_shape_two_values() {
  // expected-error @+1 {{'value' must hold exactly one element}}
  %c = nn.constant_of_shape {value = dense<[1.0, 2.0]> : tensor<2xf32>} : tensor<2x2xf32>
  func.return
}

// -----

func.func @constant_of_shape_element_type() {
  // expected-error @+1 {{'value' and the result must have the same element type}}
  %c = nn.constant_of_shape {value = dense<1> : tensor<1xi64>} : tensor<2x2xf32>
  func.return
}

// ---- Elementwise -----------------------------------------------------------------------

// -----

func.func @celu_alpha(%x: tensor<4xf32>) {
  // expected-error @+1 {{alpha must not be 0 (celu divides by it)}}
  %y = nn.celu %x {alpha = 0.0} : tensor<4xf32>
  func.return
}

// -----

func.func @gelu_approximate(%x: tensor<4xf32>) {
  // expected-error @+1 {{'approximate' must be "none" or "tanh"}}
  %y = nn.gelu %x {approximate = "fast"} : tensor<4xf32>
  func.return
}

// -----

func.func @cast_unsupported(%x: tensor<4xf32>) {
  // expected-error @+1 {{cannot cast to bf16}}
  %y = nn.cast %x {to = bf16} : (tensor<4xf32>) -> tensor<4xbf16>
  func.return
}

// -----

func.func @incompatible_broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{shapes [[2, 3], [4]] are not broadcast-compatible}}
  %y = nn.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @mixed_element_types(%a: tensor<3xf32>, %b: tensor<3xi64>) {
  // expected-error @+1 {{operand #1 has element type i64, expected f32}}
  %y = nn.mul %a, %b : (tensor<3xf32>, tensor<3xi64>) -> tensor<3xf32>
  func.return
}

// -----

func.func @variadic_without_operands() {
  // expected-error @+1 {{'nn.sum' needs at least one operand}}
  %y = "nn.sum"() : () -> tensor<3xf32>
  func.return
}

// -----

func.func @variadic_incompatible(%a: tensor<3xf32>, %b: tensor<3xf32>, %c: tensor<2xf32>) {
  // expected-error @+1 {{shapes [[3], [3], [2]] are not broadcast-compatible}}
  %y = nn.max %a, %b, %c : (tensor<3xf32>, tensor<3xf32>, tensor<2xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @pow_incompatible(%a: tensor<3xf32>, %b: tensor<2xf32>) {
  // expected-error @+1 {{shapes [[3], [2]] are not broadcast-compatible}}
  %y = nn.pow %a, %b : (tensor<3xf32>, tensor<2xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @comparison_result_not_i1(%a: tensor<3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{result type tensor<3xf32> does not match the inferred type tensor<3xi1>}}
  %y = nn.less %a, %b : tensor<3xf32>
  func.return
}

// -----

func.func @where_condition_not_i1(%c: tensor<3xf32>, %a: tensor<3xf32>) {
  // expected-error @+1 {{condition must have element type i1, got f32}}
  %y = nn.where %c, %a, %a : tensor<3xf32>
  func.return
}

// -----

func.func @where_branch_types(%c: tensor<3xi1>, %a: tensor<3xf32>, %b: tensor<3xf16>) {
  // expected-error @+1 {{both branches must have the same element type}}
  %y = nn.where %c, %a, %b : (tensor<3xi1>, tensor<3xf32>, tensor<3xf16>) -> tensor<3xf32>
  func.return
}

// -----

func.func @prelu_slope(%x: tensor<2x3xf32>, %s: tensor<2x1x3xf32>) {
  // expected-error @+1 {{slope tensor<2x1x3xf32> does not broadcast to input tensor<2x3xf32>}}
  %y = nn.prelu %x, %s : (tensor<2x3xf32>, tensor<2x1x3xf32>) -> tensor<2x3xf32>
  func.return
}

// ---- Convolution -----------------------------------------------------------------------

// -----

func.func @conv_rank(%x: tensor<4x8xf32>, %w: tensor<4x8xf32>) {
  // expected-error @+1 {{input rank 2 and weight rank 2 must be equal and >= 3}}
  %y = nn.conv %x, %w : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

func.func @conv_weight_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3xf32>) {
  // expected-error @+1 {{input rank 4 and weight rank 3 must be equal and >= 3}}
  %y = nn.conv %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv_group(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) {
  // expected-error @+1 {{group 3 must divide input channels 4 and output channels 6}}
  %y = nn.conv %x, %w {group = 3} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return
}

// -----

func.func @conv_group_zero(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{group 0 must divide input channels 4 and output channels 8}}
  %y = nn.conv %x, %w {group = 0} : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32>
  func.return
}

// -----

func.func @conv_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<8x3x3x3xf32>) {
  // expected-error @+1 {{weight expects 3 input channels, input has 4}}
  %y = nn.conv %x, %w : (tensor<1x4x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x6x6xf32>
  func.return
}

// -----

func.func @conv_bias_shape(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{bias must have shape [8], got [4]}}
  %y = nn.conv %x, %w, %b : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>, tensor<4xf32>) -> tensor<1x8x6x6xf32>
  func.return
}

// -----

func.func @conv_weight_element_type(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf16>) {
  // expected-error @+1 {{operand #1 has element type f16, expected f32}}
  %y = nn.conv %x, %w : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf16>) -> tensor<1x8x6x6xf32>
  func.return
}

// -----

func.func @conv_pads_length(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{'pads' has 2 values, expected 4}}
  %y = nn.conv %x, %w {pads = [1, 1]} : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x8x8xf32>
  func.return
}

// -----

func.func @conv_negative_pads(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{pads must be non-negative}}
  %y = nn.conv %x, %w {pads = [1, -1, 1, 1]} : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x8x6xf32>
  func.return
}

// -----

func.func @conv_strides_length(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{'strides' has 1 values, expected 2}}
  %y = nn.conv %x, %w {strides = [2]} : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x3x3xf32>
  func.return
}

// -----

func.func @conv_dilations_length(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{'dilations' has 3 values, expected 2}}
  %y = nn.conv %x, %w {dilations = [1, 1, 1]} : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32>
  func.return
}

// -----

func.func @conv_zero_stride(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{strides and dilations must be positive}}
  %y = nn.conv %x, %w {strides = [0, 1]} : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32>
  func.return
}

// -----

func.func @conv_kernel_too_big(%x: tensor<1x4x4x4xf32>, %w: tensor<8x4x5x5xf32>) {
  // expected-error @+1 {{window of 5 (dilation 1) does not fit in 4 + padding}}
  %y = nn.conv %x, %w : (tensor<1x4x4x4xf32>, tensor<8x4x5x5xf32>) -> tensor<1x8x1x1xf32>
  func.return
}

// -----

func.func @conv_dilated_kernel_too_big(%x: tensor<1x4x4x4xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{window of 3 (dilation 2) does not fit in 4 + padding}}
  %y = nn.conv %x, %w {dilations = [2, 2]} : (tensor<1x4x4x4xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x1x1xf32>
  func.return
}

// -----

func.func @conv_transpose_channels(%x: tensor<1x4x4x4xf32>, %w: tensor<8x2x3x3xf32>) {
  // expected-error @+1 {{weight has 8 input channels, input has 4 (group 1)}}
  %y = nn.conv_transpose %x, %w : (tensor<1x4x4x4xf32>, tensor<8x2x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return
}

// -----

func.func @conv_transpose_group(%x: tensor<1x4x4x4xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+1 {{weight has 4 input channels, input has 4 (group 3)}}
  %y = nn.conv_transpose %x, %w {group = 3} : (tensor<1x4x4x4xf32>, tensor<4x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return
}

// -----

func.func @conv_transpose_bias(%x: tensor<1x4x4x4xf32>, %w: tensor<4x2x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{bias must have shape [2]}}
  %y = nn.conv_transpose %x, %w, %b : (tensor<1x4x4x4xf32>, tensor<4x2x3x3xf32>, tensor<4xf32>) -> tensor<1x2x6x6xf32>
  func.return
}

// -----

func.func @conv_transpose_output_padding(%x: tensor<1x4x4x4xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+1 {{'output_padding' has 1 values, expected 2}}
  %y = nn.conv_transpose %x, %w {output_padding = [1]} : (tensor<1x4x4x4xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return
}

// -----

func.func @conv_transpose_empty_output(%x: tensor<1x4x1x1xf32>, %w: tensor<4x2x1x1xf32>) {
  // expected-error @+1 {{output size along spatial axis 0 would be 0}}
  %y = nn.conv_transpose %x, %w {pads = [1, 0, 0, 0]} : (tensor<1x4x1x1xf32>, tensor<4x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  func.return
}

// ---- Matrix products ---------------------------------------------------------------------

// -----

func.func @gemm_rank(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{gemm operands must be 2-D}}
  %y = nn.gemm %a, %b : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  func.return
}

// -----

func.func @gemm_inner(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{inner dimensions differ: 3 and 4}}
  %y = nn.gemm %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  func.return
}

// -----

func.func @gemm_transposed_inner(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) {
  // trans_b makes B 5x3: the inner dimensions no longer match.
  // expected-error @+1 {{inner dimensions differ: 3 and 5}}
  %y = nn.gemm %a, %b {trans_b = true} : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @gemm_bias(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{shapes [[3], [2, 5]] are not broadcast-compatible}}
  %y = nn.gemm %a, %b, %c : (tensor<2x3xf32>, tensor<3x5xf32>, tensor<3xf32>) -> tensor<2x5xf32>
  func.return
}

// -----

func.func @gemm_bias_too_big(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>, %c: tensor<4x5xf32>) {
  // expected-error @+1 {{shapes [[4, 5], [2, 5]] are not broadcast-compatible}}
  %y = nn.gemm %a, %b, %c : (tensor<2x3xf32>, tensor<3x5xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  func.return
}

// -----

func.func @gemm_bias_grows_result(%a: tensor<1x3xf32>, %b: tensor<3x5xf32>, %c: tensor<2x5xf32>) {
  // expected-error @+1 {{bias of shape [2, 5] does not broadcast to [1, 5]}}
  %y = nn.gemm %a, %b, %c : (tensor<1x3xf32>, tensor<3x5xf32>, tensor<2x5xf32>) -> tensor<1x5xf32>
  func.return
}

// -----

func.func @gemm_element_types(%a: tensor<2x3xf32>, %b: tensor<3x5xf16>) {
  // expected-error @+1 {{operand #1 has element type f16, expected f32}}
  %y = nn.gemm %a, %b : (tensor<2x3xf32>, tensor<3x5xf16>) -> tensor<2x5xf32>
  func.return
}

// -----

func.func @matmul_scalar(%a: tensor<f32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{matmul operands must have rank >= 1}}
  %y = nn.matmul %a, %b : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @matmul_element_types(%a: tensor<2x3xf32>, %b: tensor<3x4xi64>) {
  // expected-error @+1 {{matmul operands must have the same element type}}
  %y = nn.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xi64>) -> tensor<2x4xf32>
  func.return
}

// -----

func.func @matmul_inner(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{inner dimensions differ: 3 and 4}}
  %y = nn.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  func.return
}

// -----

func.func @matmul_batch(%a: tensor<2x2x3xf32>, %b: tensor<3x3x4xf32>) {
  // expected-error @+1 {{shapes [[2], [3]] are not broadcast-compatible}}
  %y = nn.matmul %a, %b : (tensor<2x2x3xf32>, tensor<3x3x4xf32>) -> tensor<2x2x4xf32>
  func.return
}

// ---- Normalization ---------------------------------------------------------------------

// -----

func.func @batch_norm_rank(%x: tensor<4xf32>, %p: tensor<4xf32>) {
  // expected-error @+1 {{batch_norm input must have rank >= 2}}
  %y = nn.batch_norm %x, %p, %p, %p, %p : tensor<4xf32>
  func.return
}

// -----

func.func @batch_norm_params(%x: tensor<1x4x2x2xf32>, %p: tensor<4xf32>, %v: tensor<3xf32>) {
  // expected-error @+1 {{var must have shape [4], got [3]}}
  %y = nn.batch_norm %x, %p, %p, %p, %v : (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<1x4x2x2xf32>
  func.return
}

// -----

func.func @instance_norm_rank(%x: tensor<2x4xf32>, %p: tensor<4xf32>) {
  // expected-error @+1 {{instance_norm input must have rank >= 3}}
  %y = nn.instance_norm %x, %p, %p : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return
}

// -----

func.func @instance_norm_params(%x: tensor<2x4x3xf32>, %p: tensor<4xf32>, %q: tensor<3xf32>) {
  // expected-error @+1 {{scale and bias must have shape [4]}}
  %y = nn.instance_norm %x, %p, %q : (tensor<2x4x3xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<2x4x3xf32>
  func.return
}

// -----

func.func @layer_norm_axis(%x: tensor<2x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %y = nn.layer_norm %x, %g {axis = 2} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  func.return
}

// -----

func.func @layer_norm_scale(%x: tensor<2x8xf32>, %g: tensor<2xf32>) {
  // expected-error @+1 {{shapes [[2], [8]] are not broadcast-compatible}}
  %y = nn.layer_norm %x, %g : (tensor<2x8xf32>, tensor<2xf32>) -> tensor<2x8xf32>
  func.return
}

// -----

func.func @layer_norm_scale_too_big(%x: tensor<2x8xf32>, %g: tensor<2x8xf32>) {
  // The scale covers only the normalized axes (from `axis` on).
  // expected-error @+1 {{scale and bias must broadcast to [8]}}
  %y = nn.layer_norm %x, %g : tensor<2x8xf32>
  func.return
}

// -----

func.func @lrn_rank(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{lrn input must have rank >= 3}}
  %y = nn.lrn %x {size = 3} : tensor<2x8xf32>
  func.return
}

// -----

func.func @lrn_size(%x: tensor<1x8x2x2xf32>) {
  // expected-error @+1 {{'size' must be positive}}
  %y = nn.lrn %x {size = 0} : tensor<1x8x2x2xf32>
  func.return
}

// ---- Pooling -----------------------------------------------------------------------------

// -----

func.func @pool_rank(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{pooling input must have rank >= 3}}
  %y = nn.max_pool %x {kernel_shape = [2]} : (tensor<2x8xf32>) -> tensor<2x7xf32>
  func.return
}

// -----

func.func @pool_kernel_rank(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{kernel has 1 dimensions, expected 2}}
  %y = nn.max_pool %x {kernel_shape = [2]} : (tensor<1x3x8x8xf32>) -> tensor<1x3x7x7xf32>
  func.return
}

// -----

func.func @pool_kernel_positive(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{kernel dimensions must be positive}}
  %y = nn.average_pool %x {kernel_shape = [0, 2]} : (tensor<1x3x8x8xf32>) -> tensor<1x3x9x7xf32>
  func.return
}

// -----

func.func @pool_pads_too_big(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{pads must be smaller than the (dilated) kernel}}
  %y = nn.max_pool %x {kernel_shape = [2, 2], pads = [2, 2, 2, 2]} : (tensor<1x3x8x8xf32>) -> tensor<1x3x11x11xf32>
  func.return
}

// -----

func.func @pool_kernel_too_big(%x: tensor<1x3x4x4xf32>) {
  // expected-error @+1 {{window of 5 (dilation 1) does not fit in 4 + padding}}
  %y = nn.average_pool %x {kernel_shape = [5, 5]} : (tensor<1x3x4x4xf32>) -> tensor<1x3x1x1xf32>
  func.return
}

// -----

func.func @pool_ceil_mode_result(%x: tensor<1x3x9x9xf32>) {
  // Without ceil_mode the last partial window is dropped.
  // expected-error @+1 {{result type tensor<1x3x5x5xf32> does not match the inferred type tensor<1x3x4x4xf32>}}
  %y = nn.max_pool %x {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x3x9x9xf32>) -> tensor<1x3x5x5xf32>
  func.return
}

// -----

func.func @global_pool_rank(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{global pooling input must have rank >= 3}}
  %y = nn.global_average_pool %x : tensor<2x8xf32>
  func.return
}

// ---- Reductions and softmax ---------------------------------------------------------------

// -----

func.func @reduce_bad_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %y = nn.reduce_sum %x {axes = [2]} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  func.return
}

// -----

func.func @reduce_repeated_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'axes' [1, -1] repeats an axis}}
  %y = nn.reduce_mean %x {axes = [1, -1]} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  func.return
}

// -----

func.func @reduce_keepdims_result(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{result type tensor<2x1xf32> does not match the inferred type tensor<2xf32>}}
  %y = nn.reduce_max %x {axes = [1], keepdims = false} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  func.return
}

// -----

func.func @softmax_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axis -3 is out of range for rank 2}}
  %y = nn.softmax %x {axis = -3} : tensor<2x3xf32>
  func.return
}

// -----

func.func @masked_softmax_mask_type(%x: tensor<2x3xf32>, %m: tensor<2x3xf32>) {
  // expected-error @+1 {{mask must have element type i1, got f32}}
  %y = nn.masked_softmax %x, %m : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @masked_softmax_mask_shape(%x: tensor<2x3xf32>, %m: tensor<2x2xi1>) {
  // expected-error @+1 {{shapes [[2, 2], [2, 3]] are not broadcast-compatible}}
  %y = nn.masked_softmax %x, %m : (tensor<2x3xf32>, tensor<2x2xi1>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @masked_softmax_mask_rank(%x: tensor<2x3xf32>, %m: tensor<4x1x3xi1>) {
  // expected-error @+1 {{mask of shape [4, 1, 3] must broadcast to [2, 3]}}
  %y = nn.masked_softmax %x, %m : (tensor<2x3xf32>, tensor<4x1x3xi1>) -> tensor<2x3xf32>
  func.return
}

// ---- Data movement ---------------------------------------------------------------------

// -----

func.func @concat_without_operands() {
  // expected-error @+1 {{concat needs at least one operand}}
  %y = "nn.concat"() <{axis = 0 : i64}> : () -> tensor<3xf32>
  func.return
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %y = nn.concat %a, %a {axis = 2} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  func.return
}

// -----

func.func @concat_shapes(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) {
  // expected-error @+1 {{operand #1 of shape [3, 3] does not match [2, 3] off axis 1}}
  %y = nn.concat %a, %b {axis = 1} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x6xf32>
  func.return
}

// -----

func.func @concat_element_types(%a: tensor<2x3xf32>, %b: tensor<2x3xf16>) {
  // expected-error @+1 {{operand #1 has another element type}}
  %y = nn.concat %a, %b {axis = 1} : (tensor<2x3xf32>, tensor<2x3xf16>) -> tensor<2x6xf32>
  func.return
}

// -----

func.func @split_sizes(%x: tensor<2x9xf32>) {
  // expected-error @+1 {{sizes [4, 4] do not add up to dimension 9}}
  %a, %b = nn.split %x {axis = 1, sizes = [4, 4]} : (tensor<2x9xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
  func.return
}

// -----

func.func @split_negative_size(%x: tensor<2x9xf32>) {
  // expected-error @+1 {{sizes must be non-negative, got [10, -1]}}
  %a, %b = nn.split %x {axis = 1, sizes = [10, -1]} : (tensor<2x9xf32>) -> (tensor<2x10xf32>, tensor<2x0xf32>)
  func.return
}

// -----

func.func @split_result_count(%x: tensor<2x9xf32>) {
  // expected-error @+1 {{does not match the inferred type tensor<2x4xf32>, tensor<2x5xf32>}}
  %a = nn.split %x {axis = 1, sizes = [4, 5]} : (tensor<2x9xf32>) -> tensor<2x4xf32>
  func.return
}

// -----

func.func @slice_step_zero(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{steps must be non-zero}}
  %y = nn.slice %x {starts = [0], ends = [4], steps = [0]} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  func.return
}

// -----

func.func @slice_lengths(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{starts, ends, axes and steps must have the same length}}
  %y = nn.slice %x {starts = [0, 0], ends = [4]} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  func.return
}

// -----

func.func @slice_repeated_axis(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'axes' [1, -1] repeats an axis}}
  %y = nn.slice %x {starts = [0, 0], ends = [2, 2], axes = [1, -1]} : (tensor<4x6xf32>) -> tensor<4x2xf32>
  func.return
}

// -----

func.func @slice_axis(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %y = nn.slice %x {starts = [0], ends = [2], axes = [2]} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  func.return
}

// -----

func.func @gather_float_indices(%x: tensor<4x6xf32>, %i: tensor<2xf32>) {
  // expected-error @+1 {{indices must be integers}}
  %y = nn.gather %x, %i : (tensor<4x6xf32>, tensor<2xf32>) -> tensor<2x6xf32>
  func.return
}

// -----

func.func @gather_axis(%x: tensor<4x6xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %y = nn.gather %x, %i {axis = 2} : (tensor<4x6xf32>, tensor<2xi64>) -> tensor<4x2xf32>
  func.return
}

// -----

func.func @reshape_count(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{cannot reshape tensor<2x3xf32> to tensor<4x2xf32>: element counts differ}}
  %y = nn.reshape %x : (tensor<2x3xf32>) -> tensor<4x2xf32>
  func.return
}

// -----

func.func @reshape_element_type(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{reshape cannot change the element type}}
  %y = nn.reshape %x : (tensor<2x3xf32>) -> tensor<6xi32>
  func.return
}

// -----

func.func @flatten_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 3 is out of range for rank 2}}
  %y = nn.flatten %x {axis = 3} : (tensor<2x3xf32>) -> tensor<6x1xf32>
  func.return
}

// -----

func.func @squeeze_non_unit(%x: tensor<1x3x1xf32>) {
  // expected-error @+1 {{cannot squeeze axis 1 of size 3}}
  %y = nn.squeeze %x {axes = [1]} : (tensor<1x3x1xf32>) -> tensor<1x1xf32>
  func.return
}

// -----

func.func @squeeze_axis(%x: tensor<1x3x1xf32>) {
  // expected-error @+1 {{axis 3 is out of range for rank 3}}
  %y = nn.squeeze %x {axes = [3]} : (tensor<1x3x1xf32>) -> tensor<1x3x1xf32>
  func.return
}

// -----

func.func @unsqueeze_repeated(%x: tensor<3xf32>) {
  // expected-error @+1 {{'axes' [0, -3] repeats an axis}}
  %y = nn.unsqueeze %x {axes = [0, -3]} : (tensor<3xf32>) -> tensor<1x1x3xf32>
  func.return
}

// -----

func.func @unsqueeze_axis(%x: tensor<3xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %y = nn.unsqueeze %x {axes = [2]} : (tensor<3xf32>) -> tensor<3x1xf32>
  func.return
}

// -----

func.func @transpose_perm(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{perm [0, 2, 2] is not a permutation of the 3 axes}}
  %y = nn.transpose %x {perm = [0, 2, 2]} : (tensor<2x3x4xf32>) -> tensor<2x4x4xf32>
  func.return
}

// -----

func.func @transpose_perm_length(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{perm [1, 0] is not a permutation of the 3 axes}}
  %y = nn.transpose %x {perm = [1, 0]} : (tensor<2x3x4xf32>) -> tensor<3x2xf32>
  func.return
}

// -----

func.func @pad_length(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'pads' has 2 values, expected 4}}
  %y = nn.pad %x {pads = [1, 1]} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @pad_crops_too_much(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{pads [0, -2, 0, -2] crop more than the input [2, 3]}}
  %y = nn.pad %x {pads = [0, -2, 0, -2]} : (tensor<2x3xf32>) -> tensor<2x0xf32>
  func.return
}

// -----

func.func @pad_mode(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'mode' must be one of constant, reflect, edge, wrap; got "mirror"}}
  %y = nn.pad %x {pads = [1, 1, 1, 1], mode = "mirror"} : (tensor<2x3xf32>) -> tensor<4x5xf32>
  func.return
}

// -----

func.func @pad_reflect_too_large(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{reflect padding must be smaller than the padded dimension}}
  %y = nn.pad %x {pads = [2, 0, 0, 0], mode = "reflect"} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @resize_scales_count(%x: tensor<1x1x2x2xf32>) {
  // expected-error @+1 {{'scales' must hold 4 positive values}}
  %y = nn.resize %x {scales = [2.0, 2.0]} : (tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
  func.return
}

// -----

func.func @resize_scales_positive(%x: tensor<1x1x2x2xf32>) {
  // expected-error @+1 {{'scales' must hold 4 positive values}}
  %y = nn.resize %x {scales = [1.0, 1.0, 0.0, 2.0]} : (tensor<1x1x2x2xf32>) -> tensor<1x1x1x4xf32>
  func.return
}

// -----

func.func @resize_mode(%x: tensor<1x1x2x2xf32>) {
  // expected-error @+1 {{'mode' must be one of nearest, linear, cubic; got "bilinear"}}
  %y = nn.resize %x {scales = [1.0, 1.0, 2.0, 2.0], mode = "bilinear"} : (tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
  func.return
}

// -----

func.func @resize_coordinate_mode(%x: tensor<1x1x2x2xf32>) {
  // expected-error @+1 {{'coordinate_transformation_mode' must be one of half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners, asymmetric, tf_crop_and_resize; got "corners"}}
  %y = nn.resize %x {scales = [1.0, 1.0, 2.0, 2.0], coordinate_transformation_mode = "corners"} : (tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
  func.return
}

// -----

func.func @resize_nearest_mode(%x: tensor<1x1x2x2xf32>) {
  // expected-error @+1 {{'nearest_mode' must be one of round_prefer_floor, round_prefer_ceil, floor, ceil; got "round"}}
  %y = nn.resize %x {scales = [1.0, 1.0, 2.0, 2.0], nearest_mode = "round"} : (tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
  func.return
}

// -----

func.func @resize_crop_and_resize(%x: tensor<1x1x2x2xf32>) {
  // expected-error @+1 {{tf_crop_and_resize needs regions of interest, which nn.resize does not take}}
  %y = nn.resize %x {scales = [1.0, 1.0, 2.0, 2.0], coordinate_transformation_mode = "tf_crop_and_resize"} : (tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
  func.return
}

// -----

func.func @resize_element_type(%x: tensor<1x1x2x2xf32>) {
  // expected-error @+1 {{resize cannot change the element type}}
  %y = nn.resize %x {scales = [1.0, 1.0, 2.0, 2.0]} : (tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf16>
  func.return
}

// -----

func.func @resize_rank(%x: tensor<1x1x2x2xf32>) {
  // expected-error @+1 {{resize cannot change the rank}}
  %y = nn.resize %x {scales = [1.0, 1.0, 2.0, 2.0]} : (tensor<1x1x2x2xf32>) -> tensor<1x4x4xf32>
  func.return
}

// -----

func.func @depth_to_space_rank(%x: tensor<1x8x2xf32>) {
  // expected-error @+1 {{depth_to_space input must be 4-D}}
  %y = nn.depth_to_space %x {blocksize = 2} : (tensor<1x8x2xf32>) -> tensor<1x2x4xf32>
  func.return
}

// -----

func.func @depth_to_space_indivisible(%x: tensor<1x6x2x2xf32>) {
  // expected-error @+1 {{channels 6 are not divisible by blocksize^2 = 4}}
  %y = nn.depth_to_space %x {blocksize = 2} : (tensor<1x6x2x2xf32>) -> tensor<1x1x4x4xf32>
  func.return
}

// -----

func.func @depth_to_space_blocksize(%x: tensor<1x8x2x2xf32>) {
  // expected-error @+1 {{'blocksize' must be positive, got 0}}
  %y = nn.depth_to_space %x {blocksize = 0} : (tensor<1x8x2x2xf32>) -> tensor<1x8x2x2xf32>
  func.return
}

// -----

func.func @depth_to_space_mode(%x: tensor<1x8x2x2xf32>) {
  // expected-error @+1 {{'mode' must be "DCR" or "CRD"}}
  %y = nn.depth_to_space %x {blocksize = 2, mode = "RDC"} : (tensor<1x8x2x2xf32>) -> tensor<1x2x4x4xf32>
  func.return
}

// -----

func.func @expand_not_broadcastable(%x: tensor<3x2xf32>) {
  // expected-error @+1 {{shapes [[3, 2], [3, 4]] are not broadcast-compatible}}
  %y = nn.expand %x : (tensor<3x2xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

func.func @expand_shrinks(%x: tensor<3x2xf32>) {
  // expected-error @+1 {{tensor<3x2xf32> does not broadcast to tensor<1x2xf32>}}
  %y = nn.expand %x : (tensor<3x2xf32>) -> tensor<1x2xf32>
  func.return
}

// -----

func.func @expand_element_type(%x: tensor<3x1xf32>) {
  // expected-error @+1 {{expand cannot change the element type}}
  %y = nn.expand %x : (tensor<3x1xf32>) -> tensor<3x4xf16>
  func.return
}

// -----

func.func @tile_repeats(%x: tensor<3x2xf32>) {
  // expected-error @+1 {{'repeats' must hold 2 non-negative values}}
  %y = nn.tile %x {repeats = [2]} : (tensor<3x2xf32>) -> tensor<6x2xf32>
  func.return
}

// -----

func.func @shape_result(%x: tensor<3x2xf32>) {
  // expected-error @+1 {{result type tensor<2xi32> does not match the inferred type tensor<2xi64>}}
  %y = nn.shape %x : (tensor<3x2xf32>) -> tensor<2xi32>
  func.return
}

// -----

func.func @unknown_layout(%x: tensor<1x3x4x4xf32>) {
  // expected-error @+1 {{'layout' must be "nchw" or "nhwc"; got "nwhc"}}
  %y = nn.max_pool %x {kernel_shape = [2, 2], layout = "nwhc"} : (tensor<1x3x4x4xf32>) -> tensor<1x3x3x3xf32>
  func.return
}

// -----

func.func @channels_last_shapes(%x: tensor<1x8x8x3xf32>, %w: tensor<4x3x3x3xf32>) {
  // The result of a channels-last conv is channels-last too.
  // expected-error @+1 {{result type tensor<1x4x6x6xf32> does not match the inferred type tensor<1x6x6x4xf32>}}
  %y = nn.conv %x, %w {layout = "nhwc"} : (tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @activation_on_an_op_without_it(%x: tensor<2xf32>) {
  // expected-error @+1 {{'nn.sub' has no property 'activation' (its properties: none)}}
  %y = nn.sub %x, %x {activation = #nn.activation<relu>} : tensor<2xf32>
  func.return
}

// -----

func.func @misspelt_property(%x: tensor<1x3x4x4xf32>) {
  // expected-error @+1 {{'nn.max_pool' has no property 'stride' (its properties: ceil_mode, dilations, kernel_shape, layout, pads, strides)}}
  %y = nn.max_pool %x {kernel_shape = [2, 2], stride = [1, 1]} : (tensor<1x3x4x4xf32>) -> tensor<1x3x3x3xf32>
  func.return
}
