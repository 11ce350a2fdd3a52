// RUN: irc-opt %s --target=edge-2tops-2c -p 'plan-ddr,lower-to-tile' | FileCheck %s --check-prefix=TILE
// RUN: irc-opt %s --target=edge-2tops-2c -p 'plan-ddr,lower-to-tile,lower-to-npu' | FileCheck %s --check-prefix=NPU
// RUN: not irc-opt %s --target=edge-2tops -p 'plan-ddr,lower-to-tile' 2>&1 | FileCheck %s --check-prefix=ONE
// RUN: irc-opt %s --target=edge-2tops-2c -p 'plan-tiles{tile-sizes=4,8,16,16}' | FileCheck %s --check-prefix=COST
// RUN: irc-opt %s --target=edge-2tops-2c -p 'plan-tiles{tile-sizes=4,8,16,16 split-cores=true}' | FileCheck %s --check-prefix=SPLIT
// RUN: irc-opt %s --target=edge-2tops-2c -p 'plan-tiles{tile-sizes=4,8,16,16 split-cores=true layer-cores=1}' | FileCheck %s --check-prefix=LAYER1
// RUN: not irc-opt %s --target=edge-2tops-2c -p 'plan-tiles{layer-cores=3}' 2>&1 | FileCheck %s --check-prefix=LAYER3
// RUN: irc-opt %s --target=edge-2tops-2c -p 'plan-tiles,lower-to-tile' | FileCheck %s --check-prefix=BESIDE

// plan-tiles on two cores: these small convs are not worth splitting (the planner
// keeps them on one core); with split-cores (for tests) every layer of several tiles
// is split, and its irc.tiling records it.
// COST-LABEL: func.func @split_conv
// COST-NOT:     cores = 2
// SPLIT-LABEL: func.func @split_conv
// SPLIT:        qnn.conv {{.*}}irc.tiling = {{{.*}}cores = 2 : i64, split = "rows", one_core_cycles = {{[0-9]+}} : i64}
// SPLIT:        qnn.conv {{.*}}irc.tiling = {{{.*}}cores = 2 : i64, split = "rows"

// layer-cores=1: no layer uses more than one core, even with split-cores (frames
// that take turns on the cores, docs/simulator.md "Streaming frames"); more cores
// than the target has is an error.
// LAYER1-LABEL: func.func @split_conv
// LAYER1-NOT:     cores = 2
// LAYER3: error: layer-cores takes 0 (all of them) to the 2 cores of edge-2tops-2c, got 3
// LAYER3-NEXT: hint: plan-tiles{layer-cores=1}

// A layer split across two cores (docs/tiling.md, "Cores"): the first conv's plan
// runs it on 2 cores (`cores = 2` in its irc.tiling, as plan-tiles records it where
// that pays); its loop nest is input stationary, rows outermost, two tiles of 4 rows:
// core 0 computes rows 0-3, core 1 rows 4-7, each in a tile.on_core with SRAM
// buffers of its own. The second conv runs on core 0 and reads all 8 rows.

// A target of one core cannot run the plan: one error, at the layer.
// ONE: cores.mlir:{{[0-9]+}}:3: error: the layer's plan splits it across 2 cores; edge-2tops has 1
// ONE-NEXT: hint: plan the layer for this target (plan-tiles)

// TILE-LABEL: func.func @split_conv
// TILE:         tile.on_core 0 {
// TILE:           tile.alloc {{.*}} : memref<1x6x10x16xi8, "sram">
// TILE:           tile.conv
// TILE:         tile.on_core 1 {
// TILE:           tile.alloc {{.*}} : memref<1x6x10x16xi8, "sram">
// TILE:           tile.conv
// TILE-NOT:     tile.on_core

// In the command stream, core 1's commands name it and use its SRAM (`sram1`); the
// second conv's first load, on core 0, waits for the store of core 1 (and core 0).
// NPU-LABEL: func.func @split_conv
// NPU-SAME:     npu.cores = 2 : i64
// NPU:          npu.conv {{.*}} : memref<1x6x10x16xi8, "sram">
// NPU:          npu.dma %{{.*}} to %{{.*}} {core = 1} : memref<{{.*}}, "ddr">, memref<{{.*}}, "sram1">
// NPU:          npu.conv {{.*}}core = 1{{.*}} : memref<1x6x10x16xi8, "sram1">
// NPU:          npu.dma %{{.*}} to %{{.*}} {core = 1} : memref<{{.*}}, "sram1">, memref<{{.*}}, "ddr">
// NPU-NEXT:     npu.signal {core = 1, queue = "dma_out", token = [[T:[0-9]+]]}
// NPU:          npu.wait {queue = "dma_in", token = [[T]]}
// NPU-NEXT:     npu.dma
// NPU:          npu.conv {{.*}} : memref<1x10x10x16xi8, "sram">

func.func @split_conv(%x: tensor<1x8x8x16x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x8x8x16x!quant.uniform<i8:f32, 0.3:-1>> {
  %w1 = qnn.constant dense<1> : tensor<16x3x3x16xi8> to tensor<16x3x3x16x!quant.uniform<i8<-127:127>:f32, 0.01>>
  %w2 = qnn.constant dense<2> : tensor<16x3x3x16xi8> to tensor<16x3x3x16x!quant.uniform<i8<-127:127>:f32, 0.01>>
  %a = qnn.conv %x, %w1 {layout = "nhwc", pads = [1, 1, 1, 1], irc.tiling = {tile = array<i64: 4, 8, 16, 16>, order = "input", cores = 2 : i64}} : (tensor<1x8x8x16x!quant.uniform<i8:f32, 0.1:-3>>, tensor<16x3x3x16x!quant.uniform<i8<-127:127>:f32, 0.01>>) -> tensor<1x8x8x16xi32>
  %y = qnn.requantize %a {multiplier = [1431655765], shift = [4], clamp_min = 5} : (tensor<1x8x8x16xi32>) -> tensor<1x8x8x16x!quant.uniform<i8:f32, 0.3:5>>
  %b = qnn.conv %y, %w2 {layout = "nhwc", pads = [1, 1, 1, 1], irc.tiling = {tile = array<i64: 8, 8, 16, 16>, order = "input"}} : (tensor<1x8x8x16x!quant.uniform<i8:f32, 0.3:5>>, tensor<16x3x3x16x!quant.uniform<i8<-127:127>:f32, 0.01>>) -> tensor<1x8x8x16xi32>
  %z = qnn.requantize %b {multiplier = [1431655765], shift = [4]} : (tensor<1x8x8x16xi32>) -> tensor<1x8x8x16x!quant.uniform<i8:f32, 0.3:-1>>
  func.return %z : tensor<1x8x8x16x!quant.uniform<i8:f32, 0.3:-1>>
}

// Layers beside each other (docs/tiling.md, "Cores"): both convs read %x, neither is
// worth splitting, so plan-tiles puts the second on core 1 (`core = 1` in its
// irc.tiling) to run while core 0 computes the first; lower-to-tile emits it in
// core 1's tile.on_core.
// BESIDE-LABEL: func.func @branches
// BESIDE:         tile.conv
// BESIDE:         tile.on_core 1 {
// BESIDE:           tile.conv
// BESIDE:         }
// BESIDE:         func.return
func.func @branches(%x: tensor<1x8x8x16x!quant.uniform<i8:f32, 0.1:-3>>) -> (tensor<1x8x8x16x!quant.uniform<i8:f32, 0.3:5>>, tensor<1x8x8x16x!quant.uniform<i8:f32, 0.3:-1>>) {
  %w1 = qnn.constant dense<1> : tensor<16x3x3x16xi8> to tensor<16x3x3x16x!quant.uniform<i8<-127:127>:f32, 0.01>>
  %w2 = qnn.constant dense<2> : tensor<16x3x3x16xi8> to tensor<16x3x3x16x!quant.uniform<i8<-127:127>:f32, 0.01>>
  %a = qnn.conv %x, %w1 {layout = "nhwc", pads = [1, 1, 1, 1]} : (tensor<1x8x8x16x!quant.uniform<i8:f32, 0.1:-3>>, tensor<16x3x3x16x!quant.uniform<i8<-127:127>:f32, 0.01>>) -> tensor<1x8x8x16xi32>
  %y = qnn.requantize %a {multiplier = [1431655765], shift = [4], clamp_min = 5} : (tensor<1x8x8x16xi32>) -> tensor<1x8x8x16x!quant.uniform<i8:f32, 0.3:5>>
  %b = qnn.conv %x, %w2 {layout = "nhwc", pads = [1, 1, 1, 1]} : (tensor<1x8x8x16x!quant.uniform<i8:f32, 0.1:-3>>, tensor<16x3x3x16x!quant.uniform<i8<-127:127>:f32, 0.01>>) -> tensor<1x8x8x16xi32>
  %z = qnn.requantize %b {multiplier = [1431655765], shift = [4]} : (tensor<1x8x8x16xi32>) -> tensor<1x8x8x16x!quant.uniform<i8:f32, 0.3:-1>>
  func.return %y, %z : tensor<1x8x8x16x!quant.uniform<i8:f32, 0.3:5>>, tensor<1x8x8x16x!quant.uniform<i8:f32, 0.3:-1>>
}
