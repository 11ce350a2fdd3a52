// RUN: irc-opt %s --split-input-file --target=%S/Inputs/npu-demo-all-ops.toml -p plan-tiles --verify-diagnostics | FileCheck %s
// RUN: irc-opt %s --split-input-file --target=%S/Inputs/npu-demo-all-ops.toml -p 'plan-tiles{tile-sizes=4,56,64,32}' | FileCheck %s --check-prefix=FORCED
// RUN: irc-opt %s --split-input-file --target=%S/Inputs/npu-demo-all-ops.toml -p 'plan-tiles{align-channels=false}' | FileCheck %s --check-prefix=NOALIGN
// RUN: not irc-opt %s --split-input-file --target=%S/Inputs/tiling-small-sram.toml -p plan-tiles 2>&1 | FileCheck %s --check-prefix=SMALL

// `plan-tiles` on npu-demo (16x16 MACs at 500 MHz, 512 KiB SRAM in 64-byte units,
// DDR at 2 bytes per cycle with 100 cycles of latency, 64-byte bursts). Each case
// is checked by hand in docs/tiling.md.

// The worked example (docs/targets.md, "npu-demo"): a 3x3 conv of a 56x56x32 int8 map to 64 channels.
// Three output rows of all 64 channels per tile (18 tiles and a last one of 2 rows),
// from all 32 input channels:
// - compute: 3 x 56 pixels x ceil(64/16) x ceil(32/16) x 9 taps + 32 fill = 12,128
//   cycles per tile, 226,400 in all (the bound: 57.8 M MACs / 256 = 225,792);
// - SRAM, double buffered: input 5x58x32 = 9,280 (3 rows and the halo of 2),
//   output 3x56x64 = 10,752, weights 64x9x32 = 18,432, parameters 64 x (4 + 8) =
//   768 bytes, each twice, and the int32 accumulator 3x56x64x4 = 43,008: 121,472;
// - loads and stores share the DDR and hide under compute. The first tile waits for
//   its input box (4,580 cycles) and only the first 16 output channels' weights
//   (2,404: the stream loads the weights a MAC-array width at a time and splits the
//   first step to match) and their requantization pairs (164, a DMA of their own), then the next tile waits for the first one's
//   requantize on the vector unit (3 x 56 x 64 / 16 lanes = 672); the last tile's
//   store (2 rows, 3,684) comes after everything, and the store before it (5,476)
//   hides under the last tile's 8,096 cycles of compute: 226,400 + 7,820 + 3,684 =
//   237,904 cycles, 94.9% of the bound. Five rows a tile would leave a backlog of
//   stores behind a last tile of one row.
// CHECK-LABEL: func.func @worked_example
// - SRAM layout: each kind of buffer in a bank of its own (4 banks of 128 KiB), the
//   two copies of each one after the other.
// CHECK:         qnn.conv %x, %w {layout = "nhwc", pads = [1, 1, 1, 1], irc.tiling = {tile = array<i64: 3, 56, 64, 32>, tiles = array<i64: 19, 1, 1, 1>, order = "weights", double_buffered = true, sram = 121472 : i64, sram_offsets = {input = array<i64: 0, 9280>, weights = array<i64: 131072, 149504>, output = array<i64: 262144, 272896>, parameters = array<i64: 393216, 393984>, accumulator = array<i64: 394752>}, ddr_read = 187392 : i64, ddr_written = 200704 : i64, cycles = 237904 : i64, lower_bound = 225792 : i64}}
// CHECK-NOT:     irc.tiling
// CHECK:         func.return
// FORCED-LABEL: func.func @worked_example
// FORCED:         irc.tiling = {tile = array<i64: 4, 56, 64, 32>, tiles = array<i64: 14, 1, 1, 1>
// expected-remark @+1 {{plan-tiles: 1 layers for npu-demo-all-ops, 237904 cycles estimated (lower bound 225792), peak SRAM 121472 of 524288 bytes}}
func.func @worked_example(%x: tensor<1x56x56x32x!quant.uniform<i8:f32, 0.1>>, %w: tensor<64x3x3x32x!quant.uniform<i8<-127:127>:f32, 0.01>>) -> tensor<1x56x56x64x!quant.uniform<i8:f32, 0.2>> {
  %acc = qnn.conv %x, %w {layout = "nhwc", pads = [1, 1, 1, 1]} : (tensor<1x56x56x32x!quant.uniform<i8:f32, 0.1>>, tensor<64x3x3x32x!quant.uniform<i8<-127:127>:f32, 0.01>>) -> tensor<1x56x56x64xi32>
  %y = qnn.requantize %acc {multiplier = [1073741824], shift = [0]} : (tensor<1x56x56x64xi32>) -> tensor<1x56x56x64x!quant.uniform<i8:f32, 0.2>>
  func.return %y : tensor<1x56x56x64x!quant.uniform<i8:f32, 0.2>>
}

// -----

// A stride-2 depthwise 3x3 conv, the whole layer in one tile, single buffered (each
// tile of 3 rows, double buffered, would read a 7-row box, halos overlapping: 37,728
// cycles estimated). SRAM: the padded input box 29x29x64 = 53,824, output 14x14x64 =
// 12,544, weights 576, parameters 64 x (4 + 8) = 768 and the accumulator 14x14x64x4
// = 50,176: 117,888. Time, one thing after another: the input 28x28x64 (25,188
// cycles), the weights (388) and requantization pairs (356), compute 14 x 14 x 4 +
// 32 = 816, the store (6,372): 33,120 cycles, as the simulator runs it.
// CHECK-LABEL: func.func @depthwise
// CHECK:         irc.tiling = {tile = array<i64: 14, 14, 64, 1>, tiles = array<i64: 1, 1, 1, 1>, order = "weights", double_buffered = false, sram = 117888 : i64, {{.*}}, cycles = 33120 : i64
// expected-remark @+1 {{plan-tiles: 1 layers}}
func.func @depthwise(%x: tensor<1x28x28x64x!quant.uniform<i8:f32, 0.1>>, %w: tensor<64x3x3x1x!quant.uniform<i8<-127:127>:f32, 0.01>>) -> tensor<1x14x14x64x!quant.uniform<i8:f32, 0.2>> {
  %acc = qnn.conv %x, %w {layout = "nhwc", group = 64, pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x28x28x64x!quant.uniform<i8:f32, 0.1>>, tensor<64x3x3x1x!quant.uniform<i8<-127:127>:f32, 0.01>>) -> tensor<1x14x14x64xi32>
  %y = qnn.requantize %acc {multiplier = [1073741824], shift = [0]} : (tensor<1x14x14x64xi32>) -> tensor<1x14x14x64x!quant.uniform<i8:f32, 0.2>>
  func.return %y : tensor<1x14x14x64x!quant.uniform<i8:f32, 0.2>>
}

// -----

// A 2048 -> 1000 gemm (2 MB of weights, K x N): DDR bound, the weights move once. In
// 32 K steps of 64 rows of all 1,000 columns (one run of 64,000 bytes, 32,100 cycles,
// where a tile of a few columns would be a short run in each of 2,048 rows), each
// with its 64 inputs (132), and the requantization pairs once (8,000 bytes, 4,100):
// 1,035,524 cycles of loads, the store 628, and the last step's compute (284) after
// its loads: 1,036,436 cycles, 1.1% over the DDR bound; the simulator runs it in
// 1,036,420.
// CHECK-LABEL: func.func @gemm
// CHECK:         irc.tiling = {tile = array<i64: 1, 1, 1000, 64>, tiles = array<i64: 1, 1, 1, 32>, order = "weights", double_buffered = true, {{.*}}, cycles = 1036436 : i64
// expected-remark @+1 {{plan-tiles: 1 layers}}
func.func @gemm(%a: tensor<1x2048x!quant.uniform<i8:f32, 0.1>>, %b: tensor<2048x1000x!quant.uniform<i8<-127:127>:f32, 0.01>>) -> tensor<1x1000x!quant.uniform<i8:f32, 0.2>> {
  %acc = qnn.gemm %a, %b : (tensor<1x2048x!quant.uniform<i8:f32, 0.1>>, tensor<2048x1000x!quant.uniform<i8<-127:127>:f32, 0.01>>) -> tensor<1x1000xi32>
  %y = qnn.requantize %acc {multiplier = [1073741824], shift = [0]} : (tensor<1x1000xi32>) -> tensor<1x1000x!quant.uniform<i8:f32, 0.2>>
  func.return %y : tensor<1x1000x!quant.uniform<i8:f32, 0.2>>
}

// -----

// A stride-2 4x4 transposed conv of an 8x8x16 map to 16 channels (pads 1: 16x16
// out), planned as the stride-1 conv with the flipped kernel over the input with a
// zero point between pixels (15x15) and pads of 3 - 1 = 2:
// - the bound counts only the products of stored pixels: per axis 30 (output row,
//   tap) pairs land on one, 30 x 30 x 16 x 16 = 230,400 MACs = 900 cycles; the
//   compulsory DDR traffic (input 1,024, weights 4,096, output 4,096 bytes) takes
//   4,608 cycles, the bound;
// - tiles of 3 rows (5 of them and one of 1): the array runs the zero-inserted conv,
//   3 x 16 pixels x 16 taps + 32 = 800 cycles a tile, 4,288 in all;
// - SRAM: an input box of 6 x 19 upsampled pixels x 16 = 1,824 bytes (1,856 aligned,
//   the second copy's offset); in DDR it is 3 stored rows of 8 pixels (384 bytes; the
//   last tile's, 2 rows); 16,896 bytes in all;
// - DDR: input 5 x 384 + 256, weights (4,096) and requantization pairs (16 x 8) once:
//   6,400 bytes read; 4,096 written;
// - DMA bound: loads 4,000 and stores 2,648 cycles (6,648) exceed compute; after the
//   transfers comes the last tile's compute (288): 6,936; but compute cannot start
//   before the first tile's loads (2,604) nor end before the last store (228): 4,288
//   + 2,604 + 228 = 7,120 cycles, 65% of the bound (the simulator: 7,252).
// (The weights are a constant: irc reorders a transposed conv's weights when it lowers it.)
// CHECK-LABEL: func.func @conv_transpose
// CHECK:         irc.tiling = {tile = array<i64: 3, 16, 16, 16>, tiles = array<i64: 6, 1, 1, 1>, order = "weights", double_buffered = true, sram = 16896 : i64, sram_offsets = {input = array<i64: 0, 1856>, {{.*}}}, ddr_read = 6400 : i64, ddr_written = 4096 : i64, cycles = 7120 : i64, lower_bound = 4608 : i64}
// expected-remark @+1 {{plan-tiles: 1 layers}}
func.func @conv_transpose(%x: tensor<1x8x8x16x!quant.uniform<i8:f32, 0.1>>) -> tensor<1x16x16x16x!quant.uniform<i8:f32, 0.2>> {
  %w = qnn.constant dense<1> : tensor<16x4x4x16xi8> to tensor<16x4x4x16x!quant.uniform<i8<-127:127>:f32, 0.01>>
  %acc = qnn.conv_transpose %x, %w {layout = "nhwc", pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x8x8x16x!quant.uniform<i8:f32, 0.1>>, tensor<16x4x4x16x!quant.uniform<i8<-127:127>:f32, 0.01>>) -> tensor<1x16x16x16xi32>
  %y = qnn.requantize %acc {multiplier = [1073741824], shift = [0]} : (tensor<1x16x16x16xi32>) -> tensor<1x16x16x16x!quant.uniform<i8:f32, 0.2>>
  func.return %y : tensor<1x16x16x16x!quant.uniform<i8:f32, 0.2>>
}

// -----

// A 56x56 average pool needs its whole 56x56 window in SRAM for one output element:
// 3,136 bytes of input and a 64-byte output buffer, more than the 2 KiB target has.
// SMALL: error: qnn.average_pool needs at least 3200 bytes of SRAM (one output element per tile, single buffered); the target has 2048
// SMALL-NEXT: hint: choose a target with more SRAM, or keep this layer on the CPU
// expected-remark @+1 {{plan-tiles: 1 layers}}
func.func @pool(%x: tensor<1x56x56x8x!quant.uniform<i8:f32, 0.1>>) -> tensor<1x1x1x8x!quant.uniform<i8:f32, 0.1>> {
  %y = qnn.average_pool %x {kernel_shape = [56, 56], layout = "nhwc"} : (tensor<1x56x56x8x!quant.uniform<i8:f32, 0.1>>) -> tensor<1x1x1x8x!quant.uniform<i8:f32, 0.1>>
  func.return %y : tensor<1x1x1x8x!quant.uniform<i8:f32, 0.1>>
}

// -----

// A tile forced on one op with irc.tile_sizes (rows, columns, channels, depth):
// 8 rows and a K split into two steps of 16 input channels, with an int32 accumulator.
// CHECK-LABEL: func.func @forced
// CHECK:         irc.tiling = {tile = array<i64: 8, 56, 64, 16>, tiles = array<i64: 7, 1, 1, 2>
// expected-remark @+1 {{plan-tiles: 1 layers}}
func.func @forced(%x: tensor<1x56x56x32x!quant.uniform<i8:f32, 0.1>>, %w: tensor<64x3x3x32x!quant.uniform<i8<-127:127>:f32, 0.01>>) -> tensor<1x56x56x64x!quant.uniform<i8:f32, 0.2>> {
  %acc = qnn.conv %x, %w {layout = "nhwc", pads = [1, 1, 1, 1], irc.tile_sizes = array<i64: 8, 56, 64, 16>} : (tensor<1x56x56x32x!quant.uniform<i8:f32, 0.1>>, tensor<64x3x3x32x!quant.uniform<i8<-127:127>:f32, 0.01>>) -> tensor<1x56x56x64xi32>
  %y = qnn.requantize %acc {multiplier = [1073741824], shift = [0]} : (tensor<1x56x56x64xi32>) -> tensor<1x56x56x64x!quant.uniform<i8:f32, 0.2>>
  func.return %y : tensor<1x56x56x64x!quant.uniform<i8:f32, 0.2>>
}

// -----

// Channel alignment: 80 int8 channels are 80 bytes a pixel, so a tile of 64 channels
// moves 64-byte runs that start at multiples of 16 bytes and mostly straddle two
// bursts. Both layers cut the channels (forced tiles of 64), so storing the tensor
// with 128 channels a pixel (every run on a burst) saves cycles: the requantize that
// defines it is marked, and both layers are costed with it.
// CHECK-LABEL: func.func @aligned
// CHECK:         qnn.requantize %a {multiplier = [1431655765], shift = [4], irc.stored_channels = 128 : i64}
// NOALIGN-LABEL: func.func @aligned
// NOALIGN-NOT:     irc.stored_channels
// expected-remark @+1 {{plan-tiles: 2 layers for npu-demo-all-ops, 64028 cycles estimated}}
func.func @aligned(%x: tensor<1x16x16x32x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x16x16x80x!quant.uniform<i8:f32, 0.2:1>> {
  %w = qnn.constant dense<1> : tensor<80x1x1x32xi8> to tensor<80x1x1x32x!quant.uniform<i8<-127:127>:f32, 0.01>>
  %a = qnn.conv %x, %w {layout = "nhwc", irc.tile_sizes = array<i64: 16, 16, 64, 32>} : (tensor<1x16x16x32x!quant.uniform<i8:f32, 0.1:-3>>, tensor<80x1x1x32x!quant.uniform<i8<-127:127>:f32, 0.01>>) -> tensor<1x16x16x80xi32>
  %p = qnn.requantize %a {multiplier = [1431655765], shift = [4]} : (tensor<1x16x16x80xi32>) -> tensor<1x16x16x80x!quant.uniform<i8:f32, 0.3:5>>
  %d = qnn.constant dense<1> : tensor<80x3x3x1xi8> to tensor<80x3x3x1x!quant.uniform<i8<-127:127>:f32, 0.01>>
  %b = qnn.conv %p, %d {layout = "nhwc", group = 80, pads = [1, 1, 1, 1], irc.tile_sizes = array<i64: 16, 16, 64, 1>} : (tensor<1x16x16x80x!quant.uniform<i8:f32, 0.3:5>>, tensor<80x3x3x1x!quant.uniform<i8<-127:127>:f32, 0.01>>) -> tensor<1x16x16x80xi32>
  %y = qnn.requantize %b {multiplier = [1431655765], shift = [4]} : (tensor<1x16x16x80xi32>) -> tensor<1x16x16x80x!quant.uniform<i8:f32, 0.2:1>>
  func.return %y : tensor<1x16x16x80x!quant.uniform<i8:f32, 0.2:1>>
}
