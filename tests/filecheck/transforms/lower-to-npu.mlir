// RUN: irc-opt %s --split-input-file --target=%S/Inputs/npu-demo-all-ops.toml -p plan-tiles,lower-to-tile,lower-to-npu --verify-diagnostics | FileCheck %s
// RUN: irc-opt %s --split-input-file --target=%S/Inputs/npu-demo-all-ops.toml -p 'plan-tiles,lower-to-tile,lower-to-npu{double-buffer=false}' | FileCheck %s --check-prefix=SINGLE

// `lower-to-npu` on npu-demo: a 1x1 conv of an 8x8x16 map to 16 channels, in two
// tiles of 4 rows (forced). DDR: the weights region holds the weights (256 bytes at
// 0) and the requantization pairs (128 bytes at 256); the arena starts at 384 (the
// region rounded to 64-byte bursts): the input at arena offset 0, the output at
// 1024 (address 1408). The program uses SRAM up to byte 395,648 (the accumulator
// at 393,600, 2 KiB): a target with that much runs it.
// - The weights and pairs are loaded once (weights stationary); each tile's input
//   box is one strided DMA (4 rows of 8 pixels of 16 channels);
// - the conv waits once for the DMA queue (its last load covers the earlier ones),
//   and the store waits for the conv;
// - double buffered, the second tile's input goes to the input buffer's second copy
//   (SRAM 512) and its output to the output buffer's (262656), so the second load
//   needs no wait for the first conv, and the second conv none for the first store;
//   single buffered, the second load waits for the first conv (token 1, which the
//   store also waited for) to have read its input, and the second conv waits for the
//   load and for the first store to have read its output.
// CHECK-LABEL: func.func @main
// CHECK-SAME:    npu.ddr_bytes = 2432 : i64, npu.weights_memory = "ddr", npu.weights_bytes = 384 : i64, npu.sram_bytes = 395648 : i64, npu.sram_alignment = 64 : i64, npu.target = "{{.*}}npu-demo-all-ops.toml"
// CHECK:         %[[X:.*]] = npu.view ddr[384] : memref<1x8x8x16xi8, "ddr">
// CHECK-NEXT:    npu.place %x into %[[X]]
// CHECK-NEXT:    %[[W:.*]] = npu.view ddr[0] : memref<16x1x1x16xi8, "ddr">
// CHECK:         npu.place %w into %[[W]]
// CHECK-NEXT:    %[[P:.*]] = npu.view ddr[256] : memref<16x2xi32, "ddr">
// CHECK:         %[[Y:.*]] = npu.view ddr[1408] : memref<1x8x8x16xi8, "ddr">
// CHECK-NEXT:    npu.dma %[[W]] to %[[WS:.*]] :
// CHECK-NEXT:    npu.dma %[[P]] to %[[PS:.*]] :
// CHECK-NEXT:    npu.dma %{{.*}} to %[[BOX0:.*]] : memref<1x4x8x16xi8, strided<[1024, 128, 16, 1]>, "ddr">, memref<1x4x8x16xi8, "sram">
// CHECK-NEXT:    npu.signal {queue = "dma_in", token = 0}
// CHECK-NEXT:    npu.wait {queue = "mac", token = 0}
// CHECK-NEXT:    npu.conv %[[BOX0]], %[[WS]], %[[ACC:.*]] requantize %[[PS]] into %[[OUT0:.*]] {input_zero_point = -3, output_zero_point = 2}
// CHECK-NEXT:    npu.signal {queue = "mac", token = 1}
// CHECK-NEXT:    npu.wait {queue = "dma_out", token = 1}
// CHECK-NEXT:    npu.dma %[[OUT0]] to %{{.*}} : memref<1x4x8x16xi8, "sram">, memref<1x4x8x16xi8, strided<[1024, 128, 16, 1]>, "ddr">
// CHECK-NEXT:    npu.dma %{{.*}} to %[[BOX1:.*]] : memref<1x4x8x16xi8, strided<[1024, 128, 16, 1]>, "ddr">, memref<1x4x8x16xi8, "sram">
// CHECK-NEXT:    npu.signal {queue = "dma_in", token = 2}
// CHECK-NEXT:    npu.wait {queue = "mac", token = 2}
// CHECK-NEXT:    npu.conv %[[BOX1]], %[[WS]], %[[ACC]] requantize %[[PS]] into %[[OUT1:.*]] {input_zero_point = -3, output_zero_point = 2}
// CHECK-NEXT:    npu.signal {queue = "mac", token = 3}
// CHECK-NEXT:    npu.wait {queue = "dma_out", token = 3}
// CHECK-NEXT:    npu.dma %[[OUT1]] to %{{.*}}
// CHECK-NEXT:    npu.end
// CHECK-NEXT:    %[[R:.*]] = npu.read %[[Y]] : memref<1x8x8x16xi8, "ddr">
// CHECK-NEXT:    func.return %[[R]]
// SINGLE-LABEL: func.func @main
// SINGLE:         npu.conv %[[BOX:.*]], %{{.*}}, %{{.*}} requantize %{{.*}} into %[[OUT:.*]] {
// SINGLE-NEXT:    npu.signal {queue = "mac", token = 1}
// SINGLE-NEXT:    npu.wait {queue = "dma_out", token = 1}
// SINGLE-NEXT:    npu.dma %[[OUT]] to
// SINGLE-NEXT:    npu.signal {queue = "dma_out", token = 3}
// SINGLE-NEXT:    npu.wait {queue = "dma_in", token = 1}
// SINGLE-NEXT:    npu.dma %{{.*}} to %[[BOX]]
// SINGLE-NEXT:    npu.signal {queue = "dma_in", token = 2}
// SINGLE-NEXT:    npu.wait {queue = "mac", token = 2}
// SINGLE-NEXT:    npu.wait {queue = "mac", token = 3}
// SINGLE-NEXT:    npu.conv %[[BOX]], %{{.*}}, %{{.*}} requantize %{{.*}} into %[[OUT]] {
// expected-remark @+3 {{plan-tiles: 1 layers}}
// expected-remark @+2 {{lower-to-tile: 1 layers tiled (qnn.conv x1), 1 loop bodies}}
// expected-remark @+1 {{lower-to-npu: 8 commands, 4 signals, 4 waits, 0 host calls, 2432 bytes of ddr}}
func.func @main(%x: tensor<1x8x8x16x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x8x8x16x!quant.uniform<i8:f32, 0.2:2>> {
  %w = qnn.constant dense<1> : tensor<16x1x1x16xi8> to tensor<16x1x1x16x!quant.uniform<i8<-127:127>:f32, 0.01>>
  %acc = qnn.conv %x, %w {layout = "nhwc", irc.tile_sizes = array<i64: 4, 8, 16, 16>} : (tensor<1x8x8x16x!quant.uniform<i8:f32, 0.1:-3>>, tensor<16x1x1x16x!quant.uniform<i8<-127:127>:f32, 0.01>>) -> tensor<1x8x8x16xi32>
  %y = qnn.requantize %acc {multiplier = [1073741824], shift = [3]} : (tensor<1x8x8x16xi32>) -> tensor<1x8x8x16x!quant.uniform<i8:f32, 0.2:2>>
  func.return %y : tensor<1x8x8x16x!quant.uniform<i8:f32, 0.2:2>>
}

// -----

// Streamed weights: a 1x1 conv of an 8x8x16 map to 32 channels with a bias, in two
// tiles of 4 rows (forced). The weights arrive a MAC-array width (16 output channels,
// 256 bytes) at a time, so the first step does not wait for all of them:
// - the first chunk, the bias and the input box; then the second chunk and the
//   requantization pairs, which the first commands do not read;
// - the first step is one conv per chunk, each on its slice of the weights, of the
//   int32 accumulator (16 x 4 bytes: 64-byte aligned) and of the bias; each waits
//   only for its own chunk (token 0, then token 1);
// - its requantize runs on the vector unit (an 8-bit output slice of 16 channels
//   would not be aligned), after both convs and the pairs; the second step is one conv
//   with its output stage fused, which waits for its box and for the vector unit to
//   have read the accumulator.
// CHECK-LABEL: func.func @streamed
// CHECK:         %[[W0:.*]] = npu.view sram[131072] : memref<16x1x1x16xi8, "sram">
// CHECK:         %[[W1:.*]] = npu.view sram[131328] : memref<16x1x1x16xi8, "sram">
// CHECK:         %[[WS:.*]] = npu.view sram[131072] : memref<32x1x1x16xi8, "sram">
// CHECK-NEXT:    %[[ACC:.*]] = npu.view sram[393984] : memref<1x4x8x32xi32, "sram">
// CHECK:         %[[ACC0:.*]] = npu.view sram[393984] : memref<1x4x8x16xi32, strided<[1024, 256, 32, 1]>, "sram">
// CHECK-NEXT:    %[[B0:.*]] = npu.view sram[393216] : memref<16xi32, "sram">
// CHECK-NEXT:    %[[ACC1:.*]] = npu.view sram[394048] : memref<1x4x8x16xi32, strided<[1024, 256, 32, 1]>, "sram">
// CHECK-NEXT:    %[[B1:.*]] = npu.view sram[393280] : memref<16xi32, "sram">
// CHECK:         npu.dma %{{.*}} to %[[W0]] :
// CHECK-NEXT:    npu.dma %{{.*}} to %[[B:.*]] : memref<32xi32, "ddr">, memref<32xi32, "sram">
// CHECK-NEXT:    npu.dma %{{.*}} to %[[BOX0:.*]] : memref<1x4x8x16xi8, strided<[1024, 128, 16, 1]>, "ddr">, memref<1x4x8x16xi8, "sram">
// CHECK-NEXT:    npu.signal {queue = "dma_in", token = 0}
// CHECK-NEXT:    npu.dma %{{.*}} to %[[W1]] :
// CHECK-NEXT:    npu.signal {queue = "dma_in", token = 1}
// CHECK-NEXT:    npu.dma %{{.*}} to %[[P:.*]] : memref<32x2xi32, "ddr">, memref<32x2xi32, "sram">
// CHECK-NEXT:    npu.signal {queue = "dma_in", token = 2}
// CHECK-NEXT:    npu.wait {queue = "mac", token = 0}
// CHECK-NEXT:    npu.conv %[[BOX0]], %[[W0]], %[[ACC0]] bias %[[B0]] {input_zero_point = -3}
// CHECK-NEXT:    npu.wait {queue = "mac", token = 1}
// CHECK-NEXT:    npu.conv %[[BOX0]], %[[W1]], %[[ACC1]] bias %[[B1]] {input_zero_point = -3}
// CHECK-NEXT:    npu.signal {queue = "mac", token = 3}
// CHECK-NEXT:    npu.wait {queue = "vector", token = 2}
// CHECK-NEXT:    npu.wait {queue = "vector", token = 3}
// CHECK-NEXT:    npu.requantize %[[ACC]], %[[P]], %[[OUT0:.*]] {output_zero_point = 2} : memref<1x4x8x32xi32, "sram">, memref<32x2xi32, "sram">, memref<1x4x8x32xi8, "sram">
// CHECK-NEXT:    npu.signal {queue = "vector", token = 4}
// CHECK-NEXT:    npu.wait {queue = "dma_out", token = 4}
// CHECK-NEXT:    npu.dma %[[OUT0]] to
// CHECK-NEXT:    npu.dma %{{.*}} to %[[BOX1:.*]] :
// CHECK-NEXT:    npu.signal {queue = "dma_in", token = 5}
// CHECK-NEXT:    npu.wait {queue = "mac", token = 5}
// CHECK-NEXT:    npu.wait {queue = "mac", token = 4}
// CHECK-NEXT:    npu.conv %[[BOX1]], %[[WS]], %[[ACC]] bias %[[B]] requantize %[[P]] into %{{.*}} {input_zero_point = -3, output_zero_point = 2}
// CHECK-NOT:     npu.requantize
// CHECK:         npu.end
// expected-remark @+3 {{plan-tiles: 1 layers}}
// expected-remark @+2 {{lower-to-tile: 1 layers tiled (qnn.conv x1), 1 loop bodies}}
// expected-remark @+1 {{lower-to-npu: 12 commands, 7 signals, 8 waits, 0 host calls, 3968 bytes of ddr}}
func.func @streamed(%x: tensor<1x8x8x16x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x8x8x32x!quant.uniform<i8:f32, 0.2:2>> {
  %w = qnn.constant dense<1> : tensor<32x1x1x16xi8> to tensor<32x1x1x16x!quant.uniform<i8<-127:127>:f32, 0.01>>
  %b = qnn.constant dense<5> : tensor<32xi32> to tensor<32x!quant.uniform<i32:f32, 0.001>>
  %acc = qnn.conv %x, %w, %b {layout = "nhwc", irc.tile_sizes = array<i64: 4, 8, 32, 16>} : (tensor<1x8x8x16x!quant.uniform<i8:f32, 0.1:-3>>, tensor<32x1x1x16x!quant.uniform<i8<-127:127>:f32, 0.01>>, tensor<32x!quant.uniform<i32:f32, 0.001>>) -> tensor<1x8x8x32xi32>
  %y = qnn.requantize %acc {multiplier = [1073741824], shift = [3]} : (tensor<1x8x8x32xi32>) -> tensor<1x8x8x32x!quant.uniform<i8:f32, 0.2:2>>
  func.return %y : tensor<1x8x8x32x!quant.uniform<i8:f32, 0.2:2>>
}
