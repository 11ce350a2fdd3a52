// RUN: irc-opt %s --split-input-file --verify-diagnostics

// One case per rule of the `npu` verifiers (irc/dialects/npu.py), and a sample of
// the `tile` checks the npu commands inherit. Every function gives the memory
// sizes its views are checked against.

// ---- views -------------------------------------------------------------------------------

func.func @view_element_size() attributes {npu.sram_bytes = 4096} {
  // expected-error @+1 {{address 2 is not a multiple of the element size 4}}
  %v = npu.view sram[2] : memref<4xi32, "sram">
  func.return
}

// -----

func.func @view_outside_sram() attributes {npu.sram_bytes = 4096} {
  // expected-error @+1 {{the view [4032, 4160) is outside the 4096 bytes of sram}}
  %v = npu.view sram[4032] : memref<128xi8, "sram">
  func.return
}

// -----

// A strided view's extent runs from its first element to the end of its last one:
// 512 + 1 * 512 + 7 * 1 + 1 = 1032 bytes.
func.func @view_outside_ddr() attributes {npu.ddr_bytes = 1024} {
  // expected-error @+1 {{the view [512, 1032) is outside the 1024 bytes of ddr}}
  %v = npu.view ddr[512] : memref<2x8xi8, strided<[512, 1]>, "ddr">
  func.return
}

// -----

func.func @view_negative_address() attributes {npu.sram_bytes = 4096} {
  // expected-error @+1 {{'address' must be a non-negative byte address, got -8}}
  %v = npu.view sram[-8] : memref<4xi8, "sram">
  func.return
}

// -----

func.func @view_negative_address_generic() attributes {npu.sram_bytes = 4096} {
  // expected-error @+1 {{'address' must be a non-negative byte address, got -8}}
  %v = "npu.view"() <{address = -8 : i64}> : () -> memref<4xi8, "sram">
  func.return
}

// -----

func.func @view_layout_offset() attributes {npu.sram_bytes = 4096} {
  // expected-error @+1 {{the view's address is the property; its layout offset must be 0}}
  %v = npu.view sram[0] : memref<4xi8, strided<[1], offset: 4>, "sram">
  func.return
}

// -----

func.func @view_layout_affine() attributes {npu.sram_bytes = 4096} {
  // expected-error @+1 {{the view's layout must be strided, got affine_map<(d0) -> (d0)>}}
  %v = npu.view sram[0] : memref<4xi8, affine_map<(d0) -> (d0)>, "sram">
  func.return
}

// -----

func.func @view_dynamic_stride() attributes {npu.sram_bytes = 4096} {
  // expected-error @+1 {{the view's strides must be static and non-negative, got strided<[?]>}}
  %v = npu.view sram[0] : memref<4xi8, strided<[?]>, "sram">
  func.return
}

// -----

func.func @view_negative_stride() attributes {npu.sram_bytes = 4096} {
  // expected-error @+1 {{the view's strides must be static and non-negative, got strided<[-1]>}}
  %v = npu.view sram[0] : memref<4xi8, strided<[-1]>, "sram">
  func.return
}

// -----

func.func @view_space() attributes {npu.sram_bytes = 4096} {
  // expected-error @+1 {{expected a memref in memory space "sram"}}
  %v = npu.view sram[0] : memref<4xi8, "ddr">
  func.return
}

// -----

func.func @view_element_type() attributes {npu.sram_bytes = 4096} {
  // expected-error @+1 {{result #0 must hold i8, ui8, i16, i32, i64 or f32 elements, got f64}}
  %v = npu.view sram[0] : memref<4xf64, "sram">
  func.return
}

// ---- the runtime's boundary ----------------------------------------------------------------

// -----

func.func @place_sram(%t: tensor<4xi8>) attributes {npu.sram_bytes = 4096} {
  %v = npu.view sram[0] : memref<4xi8, "sram">
  // expected-error @+1 {{the buffer must be in a system memory (such as "ddr"), got memref<4xi8, "sram">}}
  npu.place %t into %v : tensor<4xi8>, memref<4xi8, "sram">
  func.return
}

// -----

func.func @place_storage(%t: tensor<4x!quant.uniform<i8:f32, 0.1>>) attributes {npu.ddr_bytes = 4096} {
  %v = npu.view ddr[0] : memref<4xui8, "ddr">
  // expected-error @+1 {{the tensor's elements are stored as i8, the buffer holds ui8}}
  npu.place %t into %v : tensor<4x!quant.uniform<i8:f32, 0.1>>, memref<4xui8, "ddr">
  func.return
}

// -----

func.func @read_shape() -> tensor<5xi8> attributes {npu.ddr_bytes = 4096} {
  %v = npu.view ddr[0] : memref<4xi8, "ddr">
  // expected-error @+1 {{tensor<5xi8> and memref<4xi8, "ddr"> differ in shape}}
  %t = npu.read %v : memref<4xi8, "ddr"> to tensor<5xi8>
  func.return %t : tensor<5xi8>
}

// ---- commands run on views; compute commands on aligned SRAM ----------------------------

// -----

func.func @fill_not_a_view(%m: memref<4xi32, "sram">) attributes {npu.sram_bytes = 4096} {
  // expected-error @+1 {{npu.fill takes views (npu.view) at static addresses}}
  npu.fill %m {value = 0} : memref<4xi32, "sram">
  func.return
}

// -----

func.func @dma_not_a_view(%m: memref<4xi8, "ddr">) attributes {npu.sram_bytes = 4096} {
  %v = npu.view sram[0] : memref<4xi8, "sram">
  // expected-error @+1 {{npu.dma takes views (npu.view) at static addresses}}
  npu.dma %m to %v : memref<4xi8, "ddr">, memref<4xi8, "sram">
  func.return
}

// -----

func.func @conv_ddr() attributes {npu.ddr_bytes = 4096} {
  %x = npu.view ddr[0] : memref<1x3x3x4xi8, "ddr">
  %w = npu.view ddr[64] : memref<2x3x3x4xi8, "ddr">
  %acc = npu.view ddr[192] : memref<1x1x1x2xi32, "ddr">
  // expected-error @+1 {{npu.conv runs on SRAM only, got memref<1x3x3x4xi8, "ddr">}}
  npu.conv %x, %w, %acc : memref<1x3x3x4xi8, "ddr">, memref<2x3x3x4xi8, "ddr">, memref<1x1x1x2xi32, "ddr">
  func.return
}

// -----

// Only the output is in DDR.
func.func @add_ddr() attributes {npu.ddr_bytes = 4096, npu.sram_bytes = 4096} {
  %a = npu.view sram[0] : memref<8xi8, "sram">
  %out = npu.view ddr[0] : memref<8xi8, "ddr">
  // expected-error @+1 {{npu.add runs on SRAM only, got memref<8xi8, "ddr">}}
  npu.add %a, %a, %out {lhs_multiplier = 1073741824, lhs_shift = -1, rhs_multiplier = 1073741824, rhs_shift = -1, multiplier = 1073741824, shift = -1} : memref<8xi8, "sram">, memref<8xi8, "sram">, memref<8xi8, "ddr">
  func.return
}

// -----

func.func @add_alignment() attributes {npu.sram_bytes = 4096, npu.sram_alignment = 64} {
  %a = npu.view sram[0] : memref<8xi8, "sram">
  %b = npu.view sram[32] : memref<8xi8, "sram">
  // expected-error @+1 {{npu.add: a buffer at SRAM address 32 is not aligned to 64 bytes}}
  npu.add %a, %b, %a {lhs_multiplier = 1073741824, lhs_shift = -1, rhs_multiplier = 1073741824, rhs_shift = -1, multiplier = 1073741824, shift = -1} : memref<8xi8, "sram">, memref<8xi8, "sram">, memref<8xi8, "sram">
  func.return
}

// -----

// The output stage's operands are aligned too.
func.func @matmul_stage_alignment() attributes {npu.sram_bytes = 4096, npu.sram_alignment = 64} {
  %a = npu.view sram[0] : memref<4x8xi8, "sram">
  %b = npu.view sram[64] : memref<8x4xi8, "sram">
  %acc = npu.view sram[128] : memref<4x4xi32, "sram">
  %p = npu.view sram[192] : memref<1x2xi32, "sram">
  %out = npu.view sram[200] : memref<4x4xi8, "sram">
  // expected-error @+1 {{npu.matmul: a buffer at SRAM address 200 is not aligned to 64 bytes}}
  npu.matmul %a, %b, %acc requantize %p into %out : memref<4x8xi8, "sram">, memref<8x4xi8, "sram">, memref<4x4xi32, "sram">, memref<1x2xi32, "sram">, memref<4x4xi8, "sram">
  func.return
}

// ---- npu.dma -------------------------------------------------------------------------------

// -----

func.func @dma_source_without_dest() attributes {npu.ddr_bytes = 4096} {
  %a = npu.view ddr[0] : memref<4xi8, "ddr">
  // expected-error @+1 {{npu.dma copies from a source to a dest: give both or neither}}
  "npu.dma"(%a) <{operandSegmentSizes = array<i32: 1, 0, 0>}> : (memref<4xi8, "ddr">) -> ()
  func.return
}

// -----

func.func @weights_from_sram() attributes {npu.sram_bytes = 4096} {
  %a = npu.view sram[0] : memref<4xi8, "sram">
  %b = npu.view sram[64] : memref<4xi8, "sram">
  // expected-error @+1 {{a load on the weight stream ('weights') copies from the weights region, without a fill}}
  npu.dma %a to %b {weights = true} : memref<4xi8, "sram">, memref<4xi8, "sram">
  func.return
}

// -----

func.func @weights_outside_the_region() attributes {npu.flash_bytes = 4096, npu.system_sram_bytes = 4096, npu.weights_memory = "flash", npu.weights_bytes = 64, npu.sram_bytes = 4096} {
  %a = npu.view system_sram[0] : memref<4xi8, "system_sram">
  %b = npu.view sram[0] : memref<4xi8, "sram">
  // expected-error @+1 {{a load on the weight stream reads system_sram [0, 4), outside the weights region (flash [0, 64))}}
  npu.dma %a to %b {weights = true} : memref<4xi8, "system_sram">, memref<4xi8, "sram">
  func.return
}

// -----

func.func @broadcast_into_ddr() attributes {npu.ddr_bytes = 4096} {
  %a = npu.view ddr[0] : memref<4xi8, "ddr">
  %b = npu.view ddr[64] : memref<4xi8, "ddr">
  // expected-error @+1 {{'broadcast' loads into core 0's SRAM and as many others, 2 or more cores in all, got 2 into memref<4xi8, "ddr">}}
  npu.dma %a to %b {broadcast = 2} : memref<4xi8, "ddr">, memref<4xi8, "ddr">
  func.return
}

// -----

func.func @dma_nothing() {
  // expected-error @+1 {{npu.dma needs a source and a dest, a fill frame, or both}}
  "npu.dma"() <{operandSegmentSizes = array<i32: 0, 0, 0>}> : () -> ()
  func.return
}

// -----

func.func @dma_shapes() attributes {npu.ddr_bytes = 4096, npu.sram_bytes = 4096} {
  %a = npu.view ddr[0] : memref<4xi8, "ddr">
  %b = npu.view sram[0] : memref<8xi8, "sram">
  // expected-error @+1 {{source memref<4xi8, "ddr"> and dest memref<8xi8, "sram"> differ in shape or element type}}
  npu.dma %a to %b : memref<4xi8, "ddr">, memref<8xi8, "sram">
  func.return
}

// -----

func.func @dma_elements() attributes {npu.ddr_bytes = 4096, npu.sram_bytes = 4096} {
  %a = npu.view ddr[0] : memref<4xi8, "ddr">
  %b = npu.view sram[0] : memref<4xui8, "sram">
  // expected-error @+1 {{source memref<4xi8, "ddr"> and dest memref<4xui8, "sram"> differ in shape or element type}}
  npu.dma %a to %b : memref<4xi8, "ddr">, memref<4xui8, "sram">
  func.return
}

// -----

func.func @dma_frame_without_pad() attributes {npu.ddr_bytes = 4096, npu.sram_bytes = 4096} {
  %a = npu.view ddr[0] : memref<4xi8, "ddr">
  %b = npu.view sram[1] : memref<4xi8, "sram">
  %frame = npu.view sram[0] : memref<6xi8, "sram">
  // expected-error @+1 {{a fill frame needs 'pad'}}
  npu.dma %a to %b fill %frame : memref<4xi8, "ddr">, memref<4xi8, "sram">, memref<6xi8, "sram">
  func.return
}

// -----

func.func @dma_fill_only_without_pad() attributes {npu.sram_bytes = 4096} {
  %frame = npu.view sram[0] : memref<6xi8, "sram">
  // expected-error @+1 {{a fill frame needs 'pad'}}
  npu.dma fill %frame : memref<6xi8, "sram">
  func.return
}

// -----

func.func @dma_pad_range() attributes {npu.sram_bytes = 4096} {
  %frame = npu.view sram[0] : memref<6xi8, "sram">
  // expected-error @+1 {{'pad' 200 is outside the range [-128, 127] of i8}}
  npu.dma fill %frame {pad = 200} : memref<6xi8, "sram">
  func.return
}

// -----

func.func @dma_pad_float() attributes {npu.sram_bytes = 4096} {
  %frame = npu.view sram[0] : memref<6xi8, "sram">
  // expected-error @+1 {{'pad' of the frame is a float, but the frame holds i8}}
  npu.dma fill %frame {pad = 0.5} : memref<6xi8, "sram">
  func.return
}

// -----

func.func @dma_frame_memory() attributes {npu.ddr_bytes = 4096, npu.sram_bytes = 4096} {
  %a = npu.view ddr[0] : memref<4xi8, "ddr">
  %b = npu.view sram[1] : memref<4xi8, "sram">
  %frame = npu.view ddr[64] : memref<6xi8, "ddr">
  // expected-error @+1 {{the frame memref<6xi8, "ddr"> is not in the dest's memory and type}}
  npu.dma %a to %b fill %frame {pad = 0} : memref<4xi8, "ddr">, memref<4xi8, "sram">, memref<6xi8, "ddr">
  func.return
}

// -----

func.func @dma_frame_type() attributes {npu.ddr_bytes = 4096, npu.sram_bytes = 4096} {
  %a = npu.view ddr[0] : memref<4xi8, "ddr">
  %b = npu.view sram[1] : memref<4xi8, "sram">
  %frame = npu.view sram[0] : memref<6xui8, "sram">
  // expected-error @+1 {{the frame memref<6xui8, "sram"> is not in the dest's memory and type}}
  npu.dma %a to %b fill %frame {pad = 0} : memref<4xi8, "ddr">, memref<4xi8, "sram">, memref<6xui8, "sram">
  func.return
}

// -----

// The dest's bytes are [3, 7), the frame's [0, 6).
func.func @dma_dest_outside_frame() attributes {npu.ddr_bytes = 4096, npu.sram_bytes = 4096} {
  %a = npu.view ddr[0] : memref<4xi8, "ddr">
  %b = npu.view sram[3] : memref<4xi8, "sram">
  %frame = npu.view sram[0] : memref<6xi8, "sram">
  // expected-error @+1 {{the dest view does not lie inside the fill frame}}
  npu.dma %a to %b fill %frame {pad = 0} : memref<4xi8, "ddr">, memref<4xi8, "sram">, memref<6xi8, "sram">
  func.return
}

// -----

// A strided dest starting inside the frame but running past its end: its last
// element is at 64 + 2 * 3 = 70, the frame ends at 70.
func.func @dma_strided_dest_outside_frame() attributes {npu.ddr_bytes = 4096, npu.sram_bytes = 4096} {
  %a = npu.view ddr[0] : memref<4xi8, "ddr">
  %b = npu.view sram[64] : memref<4xi8, strided<[2]>, "sram">
  %frame = npu.view sram[64] : memref<6xi8, "sram">
  // expected-error @+1 {{the dest view does not lie inside the fill frame}}
  npu.dma %a to %b fill %frame {pad = 0} : memref<4xi8, "ddr">, memref<4xi8, strided<[2]>, "sram">, memref<6xi8, "sram">
  func.return
}

// ---- the MAC array's output stage ----------------------------------------------------------

// -----

func.func @conv_bias_shape() attributes {npu.sram_bytes = 4096, npu.sram_alignment = 64} {
  %x = npu.view sram[0] : memref<1x3x3x4xi8, "sram">
  %w = npu.view sram[64] : memref<8x3x3x4xi8, "sram">
  %acc = npu.view sram[384] : memref<1x1x1x8xi32, "sram">
  %b = npu.view sram[448] : memref<4xi32, "sram">
  // expected-error @+1 {{the bias must be [8] of i32}}
  npu.conv %x, %w, %acc bias %b : memref<1x3x3x4xi8, "sram">, memref<8x3x3x4xi8, "sram">, memref<1x1x1x8xi32, "sram">, memref<4xi32, "sram">
  func.return
}

// -----

func.func @conv_bias_type() attributes {npu.sram_bytes = 4096, npu.sram_alignment = 64} {
  %x = npu.view sram[0] : memref<1x3x3x4xi8, "sram">
  %w = npu.view sram[64] : memref<8x3x3x4xi8, "sram">
  %acc = npu.view sram[384] : memref<1x1x1x8xi32, "sram">
  %b = npu.view sram[448] : memref<8xf32, "sram">
  // expected-error @+1 {{the bias must be [8] of i32}}
  npu.conv %x, %w, %acc bias %b : memref<1x3x3x4xi8, "sram">, memref<8x3x3x4xi8, "sram">, memref<1x1x1x8xi32, "sram">, memref<8xf32, "sram">
  func.return
}

// -----

func.func @matmul_params_without_output() attributes {npu.sram_bytes = 4096, npu.sram_alignment = 64} {
  %a = npu.view sram[0] : memref<4x4xi8, "sram">
  %acc = npu.view sram[64] : memref<4x4xi32, "sram">
  %p = npu.view sram[128] : memref<1x2xi32, "sram">
  // expected-error @+1 {{a requantizing stage needs both params and output}}
  "npu.matmul"(%a, %a, %acc, %p) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 0>}> : (memref<4x4xi8, "sram">, memref<4x4xi8, "sram">, memref<4x4xi32, "sram">, memref<1x2xi32, "sram">) -> ()
  func.return
}

// -----

func.func @conv_rounding_without_stage() attributes {npu.sram_bytes = 4096, npu.sram_alignment = 64} {
  %x = npu.view sram[0] : memref<1x3x3x4xi8, "sram">
  %w = npu.view sram[64] : memref<8x3x3x4xi8, "sram">
  %acc = npu.view sram[384] : memref<1x1x1x8xi32, "sram">
  // expected-error @+1 {{'rounding' belongs to the requantizing stage of an i32 accumulator}}
  npu.conv %x, %w, %acc {rounding = "double_up"} : memref<1x3x3x4xi8, "sram">, memref<8x3x3x4xi8, "sram">, memref<1x1x1x8xi32, "sram">
  func.return
}

// -----

func.func @conv_clamp_i32_result() attributes {npu.sram_bytes = 4096, npu.sram_alignment = 64} {
  %x = npu.view sram[0] : memref<1x3x3x4xi8, "sram">
  %w = npu.view sram[64] : memref<8x3x3x4xi8, "sram">
  %acc = npu.view sram[384] : memref<1x1x1x8xi32, "sram">
  // expected-error @+1 {{an int32 result is clamped by its requantize (params, output)}}
  npu.conv %x, %w, %acc {clamp_min = 0} : memref<1x3x3x4xi8, "sram">, memref<8x3x3x4xi8, "sram">, memref<1x1x1x8xi32, "sram">
  func.return
}

// -----

func.func @matmul_float_requantized() attributes {npu.sram_bytes = 4096, npu.sram_alignment = 64} {
  %a = npu.view sram[0] : memref<4x4xf32, "sram">
  %p = npu.view sram[64] : memref<1x2xi32, "sram">
  %out = npu.view sram[128] : memref<4x4xi8, "sram">
  // expected-error @+1 {{a float accumulator is not requantized}}
  npu.matmul %a, %a, %a requantize %p into %out : memref<4x4xf32, "sram">, memref<4x4xf32, "sram">, memref<4x4xf32, "sram">, memref<1x2xi32, "sram">, memref<4x4xi8, "sram">
  func.return
}

// -----

func.func @conv_params_shape() attributes {npu.sram_bytes = 4096, npu.sram_alignment = 64} {
  %x = npu.view sram[0] : memref<1x3x3x4xi8, "sram">
  %w = npu.view sram[64] : memref<8x3x3x4xi8, "sram">
  %acc = npu.view sram[384] : memref<1x1x1x8xi32, "sram">
  %p = npu.view sram[448] : memref<4x2xi32, "sram">
  %out = npu.view sram[512] : memref<1x1x1x8xi8, "sram">
  // expected-error @+1 {{params must be [8, 2] or [1, 2] i32 (multiplier, shift)}}
  npu.conv %x, %w, %acc requantize %p into %out : memref<1x3x3x4xi8, "sram">, memref<8x3x3x4xi8, "sram">, memref<1x1x1x8xi32, "sram">, memref<4x2xi32, "sram">, memref<1x1x1x8xi8, "sram">
  func.return
}

// -----

func.func @conv_output_shape() attributes {npu.sram_bytes = 4096, npu.sram_alignment = 64} {
  %x = npu.view sram[0] : memref<1x3x3x4xi8, "sram">
  %w = npu.view sram[64] : memref<8x3x3x4xi8, "sram">
  %acc = npu.view sram[384] : memref<1x1x1x8xi32, "sram">
  %p = npu.view sram[448] : memref<8x2xi32, "sram">
  %out = npu.view sram[512] : memref<1x1x1x4xi8, "sram">
  // expected-error @+1 {{the output must be an 8- or 16-bit tile of the accumulator's shape memref<1x1x1x8xi32, "sram">}}
  npu.conv %x, %w, %acc requantize %p into %out : memref<1x3x3x4xi8, "sram">, memref<8x3x3x4xi8, "sram">, memref<1x1x1x8xi32, "sram">, memref<8x2xi32, "sram">, memref<1x1x1x4xi8, "sram">
  func.return
}

// -----

func.func @matmul_output_i32() attributes {npu.sram_bytes = 4096, npu.sram_alignment = 64} {
  %a = npu.view sram[0] : memref<4x4xi8, "sram">
  %acc = npu.view sram[64] : memref<4x4xi32, "sram">
  %p = npu.view sram[128] : memref<1x2xi32, "sram">
  %out = npu.view sram[192] : memref<4x4xi32, "sram">
  // expected-error @+1 {{the output must be an 8- or 16-bit tile of the accumulator's shape memref<4x4xi32, "sram">}}
  npu.matmul %a, %a, %acc requantize %p into %out : memref<4x4xi8, "sram">, memref<4x4xi8, "sram">, memref<4x4xi32, "sram">, memref<1x2xi32, "sram">, memref<4x4xi32, "sram">
  func.return
}

// -----

func.func @matmul_output_zero_point() attributes {npu.sram_bytes = 4096, npu.sram_alignment = 64} {
  %a = npu.view sram[0] : memref<4x4xi8, "sram">
  %acc = npu.view sram[64] : memref<4x4xi32, "sram">
  %p = npu.view sram[128] : memref<1x2xi32, "sram">
  %out = npu.view sram[192] : memref<4x4xui8, "sram">
  // expected-error @+1 {{'output_zero_point' -1 is outside the range [0, 255] of ui8}}
  npu.matmul %a, %a, %acc requantize %p into %out {output_zero_point = -1} : memref<4x4xi8, "sram">, memref<4x4xi8, "sram">, memref<4x4xi32, "sram">, memref<1x2xi32, "sram">, memref<4x4xui8, "sram">
  func.return
}

// -----

func.func @matmul_float_clamp_of_int8() attributes {npu.sram_bytes = 4096, npu.sram_alignment = 64} {
  %a = npu.view sram[0] : memref<4x4xi8, "sram">
  %acc = npu.view sram[64] : memref<4x4xi32, "sram">
  %p = npu.view sram[128] : memref<1x2xi32, "sram">
  %out = npu.view sram[192] : memref<4x4xi8, "sram">
  // expected-error @+1 {{'clamp_max' of an 8-bit output must be an integer}}
  npu.matmul %a, %a, %acc requantize %p into %out {clamp_max = 6.0 : f32} : memref<4x4xi8, "sram">, memref<4x4xi8, "sram">, memref<4x4xi32, "sram">, memref<1x2xi32, "sram">, memref<4x4xi8, "sram">
  func.return
}

// -----

func.func @matmul_clamp_order() attributes {npu.sram_bytes = 4096, npu.sram_alignment = 64} {
  %a = npu.view sram[0] : memref<4x4xi8, "sram">
  %acc = npu.view sram[64] : memref<4x4xi32, "sram">
  %p = npu.view sram[128] : memref<1x2xi32, "sram">
  %out = npu.view sram[192] : memref<4x4xi8, "sram">
  // expected-error @+1 {{clamp bounds [10, 5] are not an ordered part of the range [-128, 127] of i8}}
  npu.matmul %a, %a, %acc requantize %p into %out {clamp_min = 10, clamp_max = 5} : memref<4x4xi8, "sram">, memref<4x4xi8, "sram">, memref<4x4xi32, "sram">, memref<1x2xi32, "sram">, memref<4x4xi8, "sram">
  func.return
}

// ---- the host and synchronisation ----------------------------------------------------------

// -----

func.func @host_0(%a: tensor<4xi8>) -> tensor<4xi8> {
  func.return %a : tensor<4xi8>
}

func.func @host_call_sram() attributes {npu.ddr_bytes = 4096, npu.sram_bytes = 4096} {
  %a = npu.view ddr[0] : memref<4xi8, "ddr">
  %b = npu.view sram[0] : memref<4xi8, "sram">
  // expected-error @+1 {{a host call reads and writes system memories only, got memref<4xi8, "sram">}}
  npu.host_call @host_0(%a) -> (%b) : (memref<4xi8, "ddr">) -> (memref<4xi8, "sram">)
  func.return
}

// -----

func.func @signal_queue() {
  // expected-error @+1 {{'queue' must be one of dma_in, dma_out, mac, vector, host, dma_weights, dma_stage, got dsp}}
  npu.signal {queue = "dsp", token = 0}
  func.return
}

// -----

func.func @signal_token() {
  // expected-error @+1 {{'token' must be a non-negative integer, got -1}}
  npu.signal {queue = "mac", token = -1}
  func.return
}

// -----

func.func @wait_queue() {
  // expected-error @+1 {{'queue' must be one of dma_in, dma_out, mac, vector, host, dma_weights, dma_stage, got MAC}}
  npu.wait {queue = "MAC", token = 0}
  func.return
}

// ---- the tile checks the commands inherit --------------------------------------------------

// -----

func.func @fill_value() attributes {npu.sram_bytes = 4096} {
  %a = npu.view sram[0] : memref<4xi8, "sram">
  // expected-error @+1 {{'npu.fill' requires property 'value'}}
  npu.fill %a : memref<4xi8, "sram">
  func.return
}

// -----

func.func @pool_window() attributes {npu.sram_bytes = 4096, npu.sram_alignment = 64} {
  %x = npu.view sram[0] : memref<1x3x3x4xi8, "sram">
  %y = npu.view sram[64] : memref<1x2x1x4xi8, "sram">
  // expected-error @+1 {{2 output rows need (out - 1) * stride + (kernel - 1) * dilation + 1 = 4 input rows, but the input box has 3}}
  npu.pool %x, %y {kind = "max", kernel_shape = [3, 3]} : memref<1x3x3x4xi8, "sram">, memref<1x2x1x4xi8, "sram">
  func.return
}

// -----

func.func @pool_origin() attributes {npu.sram_bytes = 4096, npu.sram_alignment = 64} {
  %x = npu.view sram[0] : memref<1x3x3x4xi8, "sram">
  %y = npu.view sram[64] : memref<1x1x1x4xi8, "sram">
  // expected-error @+1 {{average pooling needs the tile's output origin [%oy, %ox]}}
  npu.pool %x, %y {kind = "average", kernel_shape = [3, 3], input_h = 3, input_w = 3} : memref<1x3x3x4xi8, "sram">, memref<1x1x1x4xi8, "sram">
  func.return
}

// -----

func.func @conv_types() attributes {npu.sram_bytes = 4096, npu.sram_alignment = 64} {
  %x = npu.view sram[0] : memref<1x3x3x4xi8, "sram">
  %w = npu.view sram[64] : memref<2x3x3x4xi8, "sram">
  %acc = npu.view sram[192] : memref<1x1x1x2xf32, "sram">
  // expected-error @+1 {{npu.conv of 8-bit operands accumulates in i32, got f32}}
  npu.conv %x, %w, %acc : memref<1x3x3x4xi8, "sram">, memref<2x3x3x4xi8, "sram">, memref<1x1x1x2xf32, "sram">
  func.return
}

// -----

func.func @matmul_depth() attributes {npu.sram_bytes = 4096, npu.sram_alignment = 64} {
  %a = npu.view sram[0] : memref<4x8xi8, "sram">
  %b = npu.view sram[64] : memref<6x3xi8, "sram">
  %acc = npu.view sram[128] : memref<4x3xi32, "sram">
  // expected-error @+1 {{a has 8 columns but b has 6 rows (after trans_b)}}
  npu.matmul %a, %b, %acc : memref<4x8xi8, "sram">, memref<6x3xi8, "sram">, memref<4x3xi32, "sram">
  func.return
}

// -----

func.func @requantize_params() attributes {npu.sram_bytes = 4096, npu.sram_alignment = 64} {
  %acc = npu.view sram[0] : memref<2x8xi32, "sram">
  %p = npu.view sram[64] : memref<4x2xi32, "sram">
  %out = npu.view sram[128] : memref<2x8xi8, "sram">
  // expected-error @+1 {{the parameters must be [8, 2] or [1, 2] (multiplier, shift)}}
  npu.requantize %acc, %p, %out : memref<2x8xi32, "sram">, memref<4x2xi32, "sram">, memref<2x8xi8, "sram">
  func.return
}

// -----

func.func @mul_multiplier() attributes {npu.sram_bytes = 4096} {
  %a = npu.view sram[0] : memref<8xi8, "sram">
  // expected-error @+1 {{'multiplier':}}
  npu.mul %a, %a, %a {multiplier = 3, shift = 0} : memref<8xi8, "sram">, memref<8xi8, "sram">, memref<8xi8, "sram">
  func.return
}

// -----

func.func @clamp_types() attributes {npu.sram_bytes = 4096, npu.sram_alignment = 64} {
  %a = npu.view sram[0] : memref<8xi8, "sram">
  %b = npu.view sram[64] : memref<8xui8, "sram">
  // expected-error @+1 {{input and output must have the same element type}}
  npu.clamp %a, %b : memref<8xi8, "sram">, memref<8xui8, "sram">
  func.return
}

// -----

func.func @addf_integers() attributes {npu.sram_bytes = 4096} {
  %a = npu.view sram[0] : memref<8xi8, "sram">
  // expected-error @+1 {{operand #0 must hold f32, got i8}}
  npu.addf %a, %a, %a : memref<8xi8, "sram">, memref<8xi8, "sram">, memref<8xi8, "sram">
  func.return
}

// -----

func.func @mulf_shapes() attributes {npu.sram_bytes = 4096, npu.sram_alignment = 64} {
  %a = npu.view sram[0] : memref<8xf32, "sram">
  %b = npu.view sram[64] : memref<2xf32, "sram">
  // expected-error @+1 {{operand #1 memref<2xf32, "sram"> differs in shape from the output memref<8xf32, "sram"> (a size of 1 broadcasts)}}
  npu.mulf %a, %b, %a : memref<8xf32, "sram">, memref<2xf32, "sram">, memref<8xf32, "sram">
  func.return
}

// -----

func.func @transpose_perm() attributes {npu.sram_bytes = 4096, npu.sram_alignment = 64} {
  %a = npu.view sram[0] : memref<2x3xi8, "sram">
  %b = npu.view sram[64] : memref<3x2xi8, "sram">
  // expected-error @+1 {{'perm' [0, 0] is not a permutation of the 2 axes}}
  npu.transpose %a, %b {perm = [0, 0]} : memref<2x3xi8, "sram">, memref<3x2xi8, "sram">
  func.return
}

// -----

func.func @lut_table() attributes {npu.sram_bytes = 4096, npu.sram_alignment = 64} {
  %a = npu.view sram[0] : memref<8xi8, "sram">
  %t = npu.view sram[64] : memref<128xi8, "sram">
  // expected-error @+1 {{the table of i8 values must have 256 entries, got memref<128xi8, "sram">}}
  npu.lut %a, %t, %a : memref<8xi8, "sram">, memref<128xi8, "sram">, memref<8xi8, "sram">
  func.return
}

// -----

func.func @host_call_unknown_callee(%a: tensor<4xi8>) attributes {npu.ddr_bytes = 64} {
  %v = npu.view ddr[0] : memref<4xi8, "ddr">
  // expected-error @+1 {{the callee @nope is not a function of the module}}
  npu.host_call @nope(%v) -> () : (memref<4xi8, "ddr">) -> ()
  func.return
}

// -----

func.func @host_call_wrong_arity(%a: tensor<4xi8>) attributes {npu.ddr_bytes = 64} {
  %v = npu.view ddr[0] : memref<4xi8, "ddr">
  // expected-error @+1 {{@host_f takes 1 and returns 1 tensors; the call has 1 inputs and 0 outputs}}
  npu.host_call @host_f(%v) -> () : (memref<4xi8, "ddr">) -> ()
  func.return
}

func.func @host_f(%a: tensor<4xi8>) -> tensor<4xi8> {
  func.return %a : tensor<4xi8>
}

// -----

func.func @place_not_a_view(%a: tensor<4xi8>, %m: memref<4xi8, "ddr">) {
  // expected-error @+1 {{npu.place takes views (npu.view) at static addresses}}
  npu.place %a into %m : tensor<4xi8>, memref<4xi8, "ddr">
  func.return
}

// -----

func.func @read_not_a_view(%m: memref<4xi8, "ddr">) {
  // expected-error @+1 {{npu.read takes views (npu.view) at static addresses}}
  %t = npu.read %m : memref<4xi8, "ddr"> to tensor<4xi8>
  func.return
}

// -----

func.func @pool_origin_not_constant(%i: index) attributes {npu.sram_bytes = 4096, npu.sram_alignment = 64} {
  %a = npu.view sram[0] : memref<1x4x4x8xi8, "sram">
  %b = npu.view sram[256] : memref<1x2x2x8xi8, "sram">
  // expected-error @+1 {{the output origin of npu.pool is arith.constant indices}}
  npu.pool %a, %b[%i, %i] {kind = "average", kernel_shape = [2, 2], strides = [2, 2], input_h = 4, input_w = 4} : memref<1x4x4x8xi8, "sram">, memref<1x2x2x8xi8, "sram">
  func.return
}

// -----

func.func @float_stage_clamp_order() attributes {npu.sram_bytes = 4096, npu.sram_alignment = 64} {
  %a = npu.view sram[0] : memref<2x4xf32, "sram">
  %b = npu.view sram[64] : memref<4x4xf32, "sram">
  %c = npu.view sram[128] : memref<2x4xf32, "sram">
  // expected-error @+1 {{clamp_min 6.0 is above clamp_max 0.0}}
  npu.matmul %a, %b, %c {clamp_min = 6.0 : f32, clamp_max = 0.0 : f32} : memref<2x4xf32, "sram">, memref<4x4xf32, "sram">, memref<2x4xf32, "sram">
  func.return
}

// -----

func.func @stage_zero_point_without_requantize() attributes {npu.sram_bytes = 4096, npu.sram_alignment = 64} {
  %a = npu.view sram[0] : memref<2x4xi8, "sram">
  %b = npu.view sram[64] : memref<4x4xi8, "sram">
  %c = npu.view sram[128] : memref<2x4xi32, "sram">
  // expected-error @+1 {{'output_zero_point' belongs to a requantizing stage}}
  npu.matmul %a, %b, %c {output_zero_point = 5} : memref<2x4xi8, "sram">, memref<4x4xi8, "sram">, memref<2x4xi32, "sram">
  func.return
}

// -----

func.func @dma_into_weights() attributes {npu.ddr_bytes = 4096, npu.weights_bytes = 1024, npu.sram_bytes = 4096} {
  %a = npu.view sram[0] : memref<64xi8, "sram">
  %b = npu.view ddr[512] : memref<64xi8, "ddr">
  // expected-error @+1 {{npu.dma writes ddr address 512, inside the read-only weights region [0, 1024)}}
  npu.dma %a to %b : memref<64xi8, "sram">, memref<64xi8, "ddr">
  func.return
}

// -----

// The weights region is in the memory `npu.weights_memory` names: here flash, so a
// store into flash below its end is a write into the weights.
func.func @dma_into_weights_in_flash() attributes {npu.flash_bytes = 4096, npu.weights_memory = "flash", npu.weights_bytes = 1024, npu.sram_bytes = 4096} {
  %a = npu.view sram[0] : memref<64xi8, "sram">
  %b = npu.view flash[256] : memref<64xi8, "flash">
  // expected-error @+1 {{npu.dma writes flash address 256, inside the read-only weights region [0, 1024)}}
  npu.dma %a to %b : memref<64xi8, "sram">, memref<64xi8, "flash">
  func.return
}

// -----

func.func @view_outside_a_system_memory() attributes {npu.dram_bytes = 1024} {
  // expected-error @+1 {{the view [1000, 1064) is outside the 1024 bytes of dram}}
  %v = npu.view dram[1000] : memref<64xi8, "dram">
  func.return
}

// -----

func.func @signal_without_token() {
  // expected-error @+1 {{npu.signal needs 'token'}}
  npu.signal {queue = "mac"}
  func.return
}

// -----

func.func @softmax_table() attributes {npu.sram_bytes = 4096} {
  %x = npu.view sram[0] : memref<4x16xi8, "sram">
  %t = npu.view sram[64] : memref<128xi16, "sram">
  // expected-error @+1 {{the table of i8 values must be 256 i16 entries, got memref<128xi16, "sram">}}
  npu.softmax %x, %t, %x {multiplier = 2139095040, shift = 7} : memref<4x16xi8, "sram">, memref<128xi16, "sram">, memref<4x16xi8, "sram">
  func.return
}

// -----

func.func @resize_axes() attributes {npu.sram_bytes = 4096} {
  %x = npu.view sram[0] : memref<1x2x2x8xi8, "sram">
  %y = npu.view sram[64] : memref<1x4x4x8xi8, "sram">
  // expected-error @+1 {{'axes' must name distinct axes below the rank 4, got [1, 1]}}
  npu.resize %x, %y {axes = [1, 1], scales = [2.0, 2.0]} : memref<1x2x2x8xi8, "sram">, memref<1x4x4x8xi8, "sram">
  func.return
}

// -----

func.func @resize_window_origin(%o: index) attributes {npu.sram_bytes = 4096} {
  %x = npu.view sram[0] : memref<1x2x2x8xi8, "sram">
  %y = npu.view sram[64] : memref<1x4x4x8xi8, "sram">
  // expected-error @+1 {{the window origin of npu.resize is arith.constant indices}}
  npu.resize %x, %y[%o, %o, %o, %o] {axes = [1, 2], input_lengths = [8, 2], output_lengths = [16, 4], scales = [2.0, 2.0]} : memref<1x2x2x8xi8, "sram">, memref<1x4x4x8xi8, "sram">
  func.return
}

// -----

func.func @lrn_table() attributes {npu.sram_bytes = 4096} {
  %x = npu.view sram[0] : memref<4x16xi8, "sram">
  %t = npu.view sram[64] : memref<224xi32, "sram">
  // expected-error @+1 {{the table of i8 values must be 225 i32 entries, got memref<224xi32, "sram">}}
  npu.lrn %x, %t, %x {size = 5, multiplier = 1342172247, shift = 27} : memref<4x16xi8, "sram">, memref<224xi32, "sram">, memref<4x16xi8, "sram">
  func.return
}

// -----

// ---- cores -------------------------------------------------------------------------------

func.func @other_cores_sram() attributes {npu.cores = 2, npu.ddr_bytes = 64, npu.sram_bytes = 64} {
  %d = npu.view ddr[0] : memref<16xi8, "ddr">
  %s = npu.view sram1[0] : memref<16xi8, "sram1">
  // expected-error @+1 {{npu.dma on core 0 uses sram1, another core's SRAM: a core reaches its own SRAM (sram) and the system memories}}
  npu.dma %d to %s : memref<16xi8, "ddr">, memref<16xi8, "sram1">
  func.return
}

// -----

func.func @core_beyond_the_program() attributes {npu.cores = 2} {
  // expected-error @+1 {{npu.signal runs on core 2; the program has 2 cores (npu.cores)}}
  npu.signal {core = 2 : i64, queue = "mac", token = 0}
  func.return
}

// -----

func.func @host_0(%a: tensor<4xi8>) -> tensor<4xi8> {
  func.return %a : tensor<4xi8>
}

func.func @host_call_on_core_1() attributes {npu.cores = 2, npu.ddr_bytes = 64} {
  %a = npu.view ddr[0] : memref<4xi8, "ddr">
  %b = npu.view ddr[4] : memref<4xi8, "ddr">
  // expected-error @+1 {{a host call runs on the host, which the cores share: core 0}}
  npu.host_call @host_0(%a) -> (%b) {core = 1 : i64} : (memref<4xi8, "ddr">) -> (memref<4xi8, "ddr">)
  func.return
}
