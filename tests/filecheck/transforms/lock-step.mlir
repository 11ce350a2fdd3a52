// RUN: irc-opt %s --target=ethos-u65-512 -p 'plan-ddr,lower-to-tile' | FileCheck %s --check-prefix=TILE
// RUN: irc-opt %s --target=ethos-u65-512 -p 'plan-ddr,lower-to-tile,lower-to-npu' | FileCheck %s --check-prefix=NPU
// RUN: not irc-opt %s --target=edge-2tops-2c -p 'plan-ddr,lower-to-tile' 2>&1 | FileCheck %s --check-prefix=NOCAST

// A conv split over output channels in lock step (docs/tiling.md, "Cores"), as
// plan-tiles records it on a target whose DMA broadcasts loads (ethos-u65-512,
// `broadcast_loads`): tiles of 4 rows and 16 of the 32 output channels, weights
// stationary. The cores walk the same nest, two channel tiles at a time: each loads
// its own weights, bias and pairs (core 1 at channel 16) into buffers of its own;
// for each 4-row tile, core 0 loads the input box once, broadcast into both SRAMs,
// then each core computes, requantizes and stores its 16 channels in one region.
// TILE-LABEL: func.func @lock_step
// TILE:         tile.on_core 0 {
// TILE:           tile.copy %{{.*}} to %[[W0:.*]][{{.*}}] sizes [16, 3, 3, 16]
// TILE:         tile.on_core 1 {
// TILE:           %[[C16:.*]] = arith.constant 16 : index
// TILE:           tile.copy %{{.*}}[%[[C16]], {{.*}}] to %[[W1:.*]][{{.*}}] sizes [16, 3, 3, 16]
// TILE:         scf.for
// TILE:           tile.copy %{{.*}} to %[[BOX:.*]][{{.*}}] sizes [1, 6, 18, 16] {broadcast = 2, pad = -3}
// TILE-NEXT:      tile.on_core 0 {
// TILE:             tile.conv %[[BOX]], %[[W0]], {{.*}}
// TILE:             tile.copy
// TILE-NEXT:      }
// TILE-NEXT:      tile.on_core 1 {
// TILE:             tile.conv %[[BOX]], %[[W1]], {{.*}}
// TILE:             tile.copy
// TILE-NEXT:      }
// TILE-NEXT:    }

// In the command stream the broadcast is one DMA on core 0 that writes both SRAMs;
// core 1's conv (in its own SRAM, `sram1`) waits for it as core 0's does.
// NPU-LABEL: func.func @lock_step
// NPU:         npu.dma %{{.*}} to %{{.*}} fill %{{.*}} {broadcast = 2, pad = -3} : {{.*}}, memref<1x6x18x16xi8, "sram">
// NPU-NEXT:    npu.signal {queue = "dma_in", token = [[T:[0-9]+]]}
// NPU-NEXT:    npu.wait {queue = "mac", token = [[T]]}
// NPU:         npu.wait {core = 1, queue = "mac", token = [[T]]}
// NPU:         npu.conv {{.*}}core = 1{{.*}} : memref<1x6x18x16xi8, "sram1">

// Cores whose DMA cannot broadcast (edge-2tops-2c) cannot run the plan: one error,
// at the layer.
// NOCAST: lock-step.mlir:{{[0-9]+}}:3: error: the layer's plan runs its cores in lock step; edge-2tops-2c's DMA cannot broadcast a load to every core (no broadcast_loads)

func.func @lock_step(%x: tensor<1x16x16x16x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x16x16x32x!quant.uniform<i8:f32, 0.3:-1>> {
  %w = qnn.constant dense<1> : tensor<32x3x3x16xi8> to tensor<32x3x3x16x!quant.uniform<i8<-127:127>:f32, 0.01>>
  %a = qnn.conv %x, %w {layout = "nhwc", pads = [1, 1, 1, 1], irc.tiling = {tile = array<i64: 4, 16, 16, 16>, order = "weights", cores = 2 : i64, split = "output channels in lock step"}} : (tensor<1x16x16x16x!quant.uniform<i8:f32, 0.1:-3>>, tensor<32x3x3x16x!quant.uniform<i8<-127:127>:f32, 0.01>>) -> tensor<1x16x16x32xi32>
  %y = qnn.requantize %a {multiplier = [1431655765], shift = [4]} : (tensor<1x16x16x32xi32>) -> tensor<1x16x16x32x!quant.uniform<i8:f32, 0.3:-1>>
  func.return %y : tensor<1x16x16x32x!quant.uniform<i8:f32, 0.3:-1>>
}
