// RUN: irc-opt %s --target=ethos-u55-256 -p 'plan-ddr,lower-to-tile' | FileCheck %s --check-prefix=TILE
// RUN: irc-opt %s --target=ethos-u55-256 -p 'plan-ddr,lower-to-tile,lower-to-npu' | FileCheck %s --check-prefix=NPU

// Staged weights (docs/tiling.md, "Staged weights"): the second conv's plan stages
// its weights (`staged = true` in its irc.tiling, as plan-tiles records it where that
// pays). On ethos-u55-256 the weights live in flash and the feature maps in the system
// SRAM: plan-ddr gives the copy a slot in the system SRAM, live from the first conv
// on; lower-to-tile copies the weights there before the first conv's ops (the copy
// runs beside it), and the second conv's tiles load from the slot, not from flash.

// TILE-LABEL: func.func @two_convs
// TILE:         %[[W2:.*]] = tile.to_buffer %w2 {offset = {{[0-9]+}}} : {{.*}} to memref<16x3x3x16xi8, "flash">
// TILE-NEXT:    %[[SLOT:.*]] = tile.alloc {offset = {{[0-9]+}}} : memref<16x3x3x16xi8, "system_sram">
// TILE:         tile.copy %[[W2]][{{.*}}] to %[[SLOT]][{{.*}}] sizes [16, 3, 3, 16] : memref<16x3x3x16xi8, "flash"> to memref<16x3x3x16xi8, "system_sram">
// The first conv: its weights from flash.
// TILE:         tile.copy %{{.*}} sizes [16, 3, 3, 16] : memref<16x3x3x16xi8, "flash"> to memref<16x3x3x16xi8, "sram">
// TILE:         tile.conv
// The second conv: its weights from the slot.
// TILE:         tile.copy %[[SLOT]][{{.*}}] to %{{.*}} sizes [16, 3, 3, 16] : memref<16x3x3x16xi8, "system_sram"> to memref<16x3x3x16xi8, "sram">
// TILE:         tile.conv

// In the command stream the copy runs on the DMA's queue (dma_stage): the first
// command of the stream, before the first conv's loads.
// NPU-LABEL: func.func @two_convs
// NPU-NOT:     npu.conv
// NPU:         npu.dma %{{.*}} to %{{.*}} {weights = true} : memref<16x3x3x16xi8, "flash">, memref<16x3x3x16xi8, "system_sram">
// NPU:         npu.conv
// NPU:         npu.conv

func.func @two_convs(%x: tensor<1x8x8x16x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x8x8x16x!quant.uniform<i8:f32, 0.3:-1>> {
  %w1 = qnn.constant dense<1> : tensor<16x3x3x16xi8> to tensor<16x3x3x16x!quant.uniform<i8<-127:127>:f32, 0.01>>
  %w2 = qnn.constant dense<2> : tensor<16x3x3x16xi8> to tensor<16x3x3x16x!quant.uniform<i8<-127:127>:f32, 0.01>>
  %a = qnn.conv %x, %w1 {layout = "nhwc", pads = [1, 1, 1, 1], irc.tiling = {tile = array<i64: 4, 8, 16, 16>, order = "weights"}} : (tensor<1x8x8x16x!quant.uniform<i8:f32, 0.1:-3>>, tensor<16x3x3x16x!quant.uniform<i8<-127:127>:f32, 0.01>>) -> tensor<1x8x8x16xi32>
  %y = qnn.requantize %a {multiplier = [1431655765], shift = [4], clamp_min = 5} : (tensor<1x8x8x16xi32>) -> tensor<1x8x8x16x!quant.uniform<i8:f32, 0.3:5>>
  %b = qnn.conv %y, %w2 {layout = "nhwc", pads = [1, 1, 1, 1], irc.tiling = {tile = array<i64: 4, 8, 16, 16>, order = "weights", staged = true}} : (tensor<1x8x8x16x!quant.uniform<i8:f32, 0.3:5>>, tensor<16x3x3x16x!quant.uniform<i8<-127:127>:f32, 0.01>>) -> tensor<1x8x8x16xi32>
  %z = qnn.requantize %b {multiplier = [1431655765], shift = [4]} : (tensor<1x8x8x16xi32>) -> tensor<1x8x8x16x!quant.uniform<i8:f32, 0.3:-1>>
  func.return %z : tensor<1x8x8x16x!quant.uniform<i8:f32, 0.3:-1>>
}
