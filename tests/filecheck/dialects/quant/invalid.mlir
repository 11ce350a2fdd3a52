// RUN: irc-opt %s --split-input-file --verify-diagnostics

func.func @zero_point_out_of_range(%x: tensor<4xf32>) {
  // expected-error @+1 {{zero point 200 is outside the storage range [-128, 127]}}
  %q = quant.qcast %x : tensor<4xf32> to tensor<4x!quant.uniform<i8:f32, 0.1:200>>
  func.return
}

// -----

func.func @narrowed_zero_point(%x: tensor<4xf32>) {
  // expected-error @+1 {{zero point -128 is outside the storage range [-127, 127]}}
  %q = quant.qcast %x : tensor<4xf32> to tensor<4x!quant.uniform<i8<-127:127>:f32, 0.1:-128>>
  func.return
}

// -----

func.func @storage_range_too_wide(%x: tensor<4xf32>) {
  // expected-error @+1 {{storage range [-200, 127] is not a non-empty part of [-128, 127]}}
  %q = quant.qcast %x : tensor<4xf32> to tensor<4x!quant.uniform<i8<-200:127>:f32, 0.1>>
  func.return
}

// -----

func.func @negative_scale(%x: tensor<4xf32>) {
  // expected-error @+1 {{scale -0.1 must be positive and finite}}
  %q = quant.qcast %x : tensor<4xf32> to tensor<4x!quant.uniform<i8:f32, -0.1>>
  func.return
}

// -----

func.func @unknown_storage(%x: tensor<4xf32>) {
  // expected-error @+1 {{unknown storage type 'i4'; expected one of i8, u8, i16, u16, i32}}
  %q = quant.qcast %x : tensor<4xf32> to tensor<4x!quant.uniform<i4:f32, 0.1>>
  func.return
}

// -----

func.func @axis_not_below_rank(%w: tensor<2x3xf32>) {
  // expected-error @+1 {{quantized axis 2 is not below the rank 2}}
  %q = quant.qcast %w : tensor<2x3xf32> to tensor<2x3x!quant.uniform<i8:f32:2, {0.1, 0.2}>>
  func.return
}

// -----

func.func @one_scale_per_slice(%w: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 1 has 3 slices but the type has 2 scales}}
  %q = quant.qcast %w : tensor<2x3xf32> to tensor<2x3x!quant.uniform<i8:f32:1, {0.1, 0.2}>>
  func.return
}

// -----

func.func @qcast_to_float(%x: tensor<4xf32>) {
  // expected-error @+1 {{the result of quant.qcast must have a quantized element type}}
  %q = quant.qcast %x : tensor<4xf32> to tensor<4xf16>
  func.return
}

// -----

func.func @expressed_type_mismatch(%x: tensor<4xf16>) {
  // expected-error @+1 {{the input's element type f16 is not the expressed type f32}}
  %q = quant.qcast %x : tensor<4xf16> to tensor<4x!quant.uniform<i8:f32, 0.1>>
  func.return
}

// -----

func.func @shape_mismatch(%q: tensor<4x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{the shapes differ}}
  %x = quant.dcast %q : tensor<4x!quant.uniform<i8:f32, 0.1>> to tensor<5xf32>
  func.return
}

// -----

func.func @dcast_of_floats(%x: tensor<4xf32>) {
  // expected-error @+1 {{the input of quant.dcast must have a quantized element type}}
  %y = quant.dcast %x : tensor<4xf32> to tensor<4xf32>
  func.return
}

// -----

func.func @scast_wrong_storage(%q: tensor<4x!quant.uniform<i8:f32, 0.1>>) {
  // expected-error @+1 {{ui8 is not the storage type i8}}
  %i = quant.scast %q : tensor<4x!quant.uniform<i8:f32, 0.1>> to tensor<4xui8>
  func.return
}

// -----

// nn ops on quantized tensors check per-axis types against their tensors too: a
// transpose moves the quantized axis with the data.
func.func @transpose_keeps_the_axis(%x: tensor<2x3x!quant.uniform<i8:f32:1, {0.1, 0.2, 0.3}>>) {
  // expected-error @+1 {{axis 1 has 2 slices but the type has 3 scales}}
  %t = nn.transpose %x {perm = [1, 0]} : (tensor<2x3x!quant.uniform<i8:f32:1, {0.1, 0.2, 0.3}>>) -> tensor<3x2x!quant.uniform<i8:f32:1, {0.1, 0.2, 0.3}>>
  func.return
}
