// RUN: irc-opt %s --target=npu-demo -p 'plan-tiles{cascades=true}' --verify-diagnostics | FileCheck %s --check-prefix=PLAN
// RUN: irc-opt %s --target=npu-demo -p 'plan-tiles{cascades=true},lower-to-tile' | FileCheck %s --check-prefix=TILE
// RUN: irc-opt %s --target=npu-demo -p 'plan-tiles{cascades=true},lower-to-tile,lower-to-npu' | FileCheck %s --check-prefix=NPU
// RUN: irc-opt %s --target=npu-demo -p 'plan-tiles,lower-to-tile' | FileCheck %s --check-prefix=APART

// A residual block on npu-demo: two 3x3 convs of a 16x16x16 map and the add of the
// block's input. Apart, each layer writes its result to DDR and the next reads it
// back; as one cascade (plan-tiles{cascades=true}: 16,772 cycles estimated against
// 21,932 apart) they run in 6 stripes of 3 output rows, the two intermediate tensors
// in rolling buffers in SRAM: the first conv's output in 5 rows (the second conv's
// 3-row stripe reads 5 rows of it), the second's in 3 (the add reads its rows as
// they are). Only the input (read by the first conv and the add), the weights and
// the output cross DDR.

// PLAN: qnn.conv {{.*}}irc.cascade = {group = 0 : i64, index = 0 : i64, members = 3 : i64, stripe = 3 : i64, window = array<i64: 16, 16, 3, 1, 1, 1>, reads = array<i64>, rolling = array<i64: 0, 5>}
// PLAN: qnn.conv {{.*}}irc.cascade = {group = 0 : i64, index = 1 : i64, members = 3 : i64, stripe = 3 : i64, window = array<i64: 16, 16, 3, 1, 1, 1>, reads = array<i64: 0>, rolling = array<i64: 1280, 3>}
// PLAN: qnn.add {{.*}}irc.cascade = {group = 0 : i64, index = 2 : i64, members = 3 : i64, stripe = 3 : i64, window = array<i64: 16, 16, 1, 1, 1, 0>, reads = array<i64: 1>}

// The rolling buffers first, then the weights of both convs loaded once (they fit
// whole: one copy each), then the first stripe (the first conv computes 4 rows: the
// second conv's first 3 rows need its rows -1..3), a loop of 4 alike stripes (3 rows
// each, every origin moving by 3), and the last stripe.
// TILE-LABEL: func.func @block
// TILE:         %[[R1:.*]] = tile.alloc {offset = 0} : memref<1x5x16x16xi8, "sram">
// TILE-NEXT:    %[[R2:.*]] = tile.alloc {offset = 1280} : memref<1x3x16x16xi8, "sram">
// TILE:         %[[X:.*]] = tile.to_buffer %x {offset = 0}
// TILE:         %[[Y:.*]] = tile.alloc {offset = 4096} : memref<1x16x16x16xi8, "ddr">
// TILE:         tile.copy %{{.*}} to %[[W1:.*]][{{.*}}] sizes [16, 3, 3, 16] : memref<16x3x3x16xi8, "ddr"> to memref<16x3x3x16xi8, "sram">
// TILE:         tile.copy %{{.*}} to %[[W2:.*]][{{.*}}] sizes [16, 3, 3, 16] : memref<16x3x3x16xi8, "ddr"> to memref<16x3x3x16xi8, "sram">
// TILE:         tile.copy %[[X]][{{.*}}] to %{{.*}} sizes [1, 6, 18, 16] {pad = -3}
// TILE-NEXT:    tile.conv %{{.*}}, %[[W1]], %{{.*}} {input_zero_point = -3} : memref<1x6x18x16xi8, "sram">, memref<16x3x3x16xi8, "sram">, memref<1x4x16x16xi32, "sram">
// TILE-NEXT:    tile.requantize
// TILE-NEXT:    tile.copy %{{.*}} to %[[R1]][{{.*}}] sizes [1, 4, 16, 16] {dest_rolling = [1, 16, 16, 16]} : memref<1x4x16x16xi8, "sram"> to memref<1x5x16x16xi8, "sram">
// TILE-NEXT:    tile.copy %[[R1]][{{.*}}] to %{{.*}} sizes [1, 5, 18, 16] {pad = 5, source_rolling = [1, 16, 16, 16]} : memref<1x5x16x16xi8, "sram"> to memref<1x5x18x16xi8, "sram">
// TILE-NEXT:    tile.conv %{{.*}}, %[[W2]], %{{.*}} {input_zero_point = 5}
// TILE-NEXT:    tile.requantize
// TILE-NEXT:    tile.copy %{{.*}} to %[[R2]][{{.*}}] sizes [1, 3, 16, 16] {dest_rolling = [1, 16, 16, 16]}
// TILE-NEXT:    tile.copy %[[R2]][{{.*}}] to %{{.*}} sizes [1, 3, 16, 16] {source_rolling = [1, 16, 16, 16]}
// TILE-NEXT:    tile.copy %[[X]][{{.*}}] to %{{.*}} sizes [1, 3, 16, 16]
// TILE-NEXT:    tile.add
// TILE-NEXT:    tile.copy %{{.*}} to %[[Y]][{{.*}}] sizes [1, 3, 16, 16] : memref<1x3x16x16xi8, "sram"> to memref<1x16x16x16xi8, "ddr">
// TILE:         scf.for %[[S:.*]] = %{{.*}} to %[[FOUR:.*]] step
// TILE:           tile.copy %[[X]][{{.*}}] to %{{.*}} sizes [1, 5, 18, 16] {pad = -3}
// TILE:           tile.copy %{{.*}} to %[[R1]][{{.*}}] sizes [1, 3, 16, 16] {dest_rolling = [1, 16, 16, 16]}
// TILE:           tile.copy %[[R1]][{{.*}}] to %{{.*}} sizes [1, 5, 18, 16] {pad = 5, source_rolling = [1, 16, 16, 16]}
// TILE:           tile.copy %{{.*}} to %[[Y]][{{.*}}] sizes [1, 3, 16, 16]
// TILE-NEXT:    }
// The last stripe: the first conv is done; the second computes its last row.
// TILE-NEXT:    arith.constant 14 : index
// TILE-NEXT:    tile.copy %[[R1]][{{.*}}] to %{{.*}} sizes [1, 3, 18, 16] {pad = 5, source_rolling = [1, 16, 16, 16]}
// TILE:         tile.copy %{{.*}} to %[[Y]][{{.*}}] sizes [1, 1, 16, 16]
// TILE-NEXT:    tile.to_tensor %[[Y]]
// TILE-NEXT:    func.return

// In the command stream a copy into or out of a rolling buffer is a DMA within SRAM;
// one whose box wraps around the buffer's end is two (the third stripe writes the
// first conv's rows 7..9 into slots 2..4, the fourth its rows 10..12 into 0..2; the
// second stripe's 3 rows 4..6 go to slots 4, 0, 1: one row, then two).
// NPU:      npu.dma %{{.*}} to %{{.*}} : memref<1x4x16x16xi8, "sram">, memref<1x4x16x16xi8, strided<[1280, 256, 16, 1]>, "sram">
// NPU:      npu.dma %{{.*}} to %{{.*}} : memref<1x1x16x16xi8, strided<[768, 256, 16, 1]>, "sram">, memref<1x1x16x16xi8, strided<[1280, 256, 16, 1]>, "sram">
// NPU-NEXT: npu.dma %{{.*}} to %{{.*}} : memref<1x2x16x16xi8, strided<[768, 256, 16, 1]>, "sram">, memref<1x2x16x16xi8, strided<[1280, 256, 16, 1]>, "sram">

// Apart, the intermediate tensors are DDR buffers (the add writes over the second).
// APART-LABEL: func.func @block
// APART-COUNT-2: tile.alloc {offset = {{[0-9]+}}} : memref<1x16x16x16xi8, "ddr">
// APART-NOT:     rolling

// The estimate is against the cascade's own bound (the input read twice, the weights
// and the output once: 16,896 bytes of DDR at 2 a cycle), not the layers' (which
// count the intermediate tensors' traffic).
// expected-remark @+1 {{plan-tiles: 3 layers for npu-demo, 16772 cycles estimated (lower bound 8448), peak SRAM 28800 of 524288 bytes}}
func.func @block(%x: tensor<1x16x16x16x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x16x16x16x!quant.uniform<i8:f32, 0.2:1>> {
  %w1 = qnn.constant dense<1> : tensor<16x3x3x16xi8> to tensor<16x3x3x16x!quant.uniform<i8<-127:127>:f32, 0.01>>
  %a = qnn.conv %x, %w1 {layout = "nhwc", pads = [1, 1, 1, 1]} : (tensor<1x16x16x16x!quant.uniform<i8:f32, 0.1:-3>>, tensor<16x3x3x16x!quant.uniform<i8<-127:127>:f32, 0.01>>) -> tensor<1x16x16x16xi32>
  %y = qnn.requantize %a {multiplier = [1431655765], shift = [4], clamp_min = 5} : (tensor<1x16x16x16xi32>) -> tensor<1x16x16x16x!quant.uniform<i8:f32, 0.3:5>>
  %w2 = qnn.constant dense<2> : tensor<16x3x3x16xi8> to tensor<16x3x3x16x!quant.uniform<i8<-127:127>:f32, 0.01>>
  %b = qnn.conv %y, %w2 {layout = "nhwc", pads = [1, 1, 1, 1]} : (tensor<1x16x16x16x!quant.uniform<i8:f32, 0.3:5>>, tensor<16x3x3x16x!quant.uniform<i8<-127:127>:f32, 0.01>>) -> tensor<1x16x16x16xi32>
  %z = qnn.requantize %b {multiplier = [1431655765], shift = [4]} : (tensor<1x16x16x16xi32>) -> tensor<1x16x16x16x!quant.uniform<i8:f32, 0.3:-1>>
  %s = qnn.add %z, %x {lhs_multiplier = 1073741824, lhs_shift = -1, rhs_multiplier = 1073741824, rhs_shift = -1, multiplier = 1073741824, shift = 0} : (tensor<1x16x16x16x!quant.uniform<i8:f32, 0.3:-1>>, tensor<1x16x16x16x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x16x16x16x!quant.uniform<i8:f32, 0.2:1>>
  func.return %s : tensor<1x16x16x16x!quant.uniform<i8:f32, 0.2:1>>
}
