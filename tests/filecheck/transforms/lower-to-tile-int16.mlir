// RUN: irc-opt %s --target=%S/Inputs/npu-demo-int16.toml -p plan-tiles,lower-to-tile --verify-diagnostics | FileCheck %s
// RUN: irc-opt %s --target=%S/Inputs/npu-demo-int16.toml -p plan-tiles,lower-to-tile,lower-to-npu | FileCheck %s --check-prefix=NPU
// RUN: irc-opt %s --target=%S/Inputs/npu-demo-all-ops.toml -p partition 2>&1 | FileCheck %s --check-prefix=NO16

// 16-bit activations on a target with `int16` (16-bit activations, 8-bit weights): a
// 3x3 conv of an int16 map into the wide i64 accumulator, its i64 bias, the wide
// requantize to int16 (with the fused relu), a 16-bit max pool whose padding holds the
// int16 minimum, and a standalone 16-bit to 8-bit rescale. Every buffer holds its own
// element type: the input box is i16 (its halo the zero point 0), the accumulator and
// the bias i64, so the planner counts 8 bytes per accumulator element.
// CHECK-LABEL: func.func @conv16
// CHECK:         %[[X:.*]] = tile.to_buffer %x {offset = 2048} : {{.*}} to memref<1x8x8x8xi16, "ddr">
// CHECK:         %[[Y:.*]] = tile.alloc {offset = 0} : memref<1x8x8x16xi16, "ddr">
// CHECK:         %[[B:.*]] = tile.to_buffer %b {offset = 1152} : tensor<16x!quant.uniform<i64:f32, 1.0e-05>> to memref<16xi64, "ddr">
// CHECK:         %[[BS:.*]] = tile.alloc {{.*}} : memref<16xi64, "sram">
// CHECK:         %[[BOX:.*]] = tile.alloc {{.*}} : memref<1x6x10x8xi16, "sram">
// CHECK:         %[[ACC:.*]] = tile.alloc {{.*}} : memref<1x4x8x16xi64, "sram">
// CHECK:         %[[OUT:.*]] = tile.alloc {{.*}} : memref<1x4x8x16xi16, "sram">
// CHECK:         scf.for
// CHECK:           tile.copy %[[X]][{{.*}}] to %[[BOX]][{{.*}}] sizes [1, 6, 10, 8] : memref<1x8x8x8xi16, "ddr"> to memref<1x6x10x8xi16, "sram">
// CHECK-NEXT:      tile.conv %[[BOX]], %{{.*}}, %[[ACC]] : memref<1x6x10x8xi16, "sram">, memref<16x3x3x8xi8, "sram">, memref<1x4x8x16xi64, "sram">
// CHECK-NEXT:      tile.bias_add %[[ACC]], %[[BS]] : memref<1x4x8x16xi64, "sram">, memref<16xi64, "sram">
// CHECK-NEXT:      tile.requantize %[[ACC]], %{{.*}}, %[[OUT]] {clamp_min = 0} : memref<1x4x8x16xi64, "sram">, memref<16x2xi32, "sram">, memref<1x4x8x16xi16, "sram">
// CHECK:         tile.copy %[[Y]][{{.*}}] to %{{.*}} sizes [1, 8, 8, 16] {pad = -32768} : memref<1x8x8x16xi16, "ddr"> to memref<1x8x8x16xi16, "sram">
// CHECK:         tile.pool %{{.*}}, %{{.*}} {kernel_shape = [2, 2], kind = "max", strides = [2, 2]} : memref<1x8x8x16xi16, "sram">, memref<1x4x4x16xi16, "sram">
// CHECK:         tile.requantize %{{.*}}, %{{.*}}, %{{.*}} {output_zero_point = -3} : memref<1x4x4x16xi16, "sram">, memref<1x2xi32, "sram">, memref<1x4x4x16xi8, "sram">

// The commands: the conv with its wide output stage, the 16-bit pool and rescale.
// NPU-LABEL: func.func @conv16
// NPU:         npu.conv %{{.*}}, %{{.*}}, %{{.*}} bias %{{.*}} requantize %{{.*}} into %{{.*}} {clamp_min = 0} : memref<1x6x10x8xi16, "sram">, memref<16x3x3x8xi8, "sram">, memref<1x4x8x16xi64, "sram">, memref<16xi64, "sram">, memref<16x2xi32, "sram">, memref<1x4x8x16xi16, "sram">
// NPU:         npu.pool %{{.*}}, %{{.*}} {kernel_shape = [2, 2], kind = "max", strides = [2, 2]} : memref<1x8x8x16xi16, "sram">, memref<1x4x4x16xi16, "sram">
// NPU:         npu.requantize %{{.*}}, %{{.*}}, %{{.*}} {output_zero_point = -3} : memref<1x4x4x16xi16, "sram">, memref<1x2xi32, "sram">, memref<1x4x4x16xi8, "sram">

// Without `int16` the target keeps every 16-bit op on the host.
// NO16: remark: partition: target npu-demo-all-ops, mode support: 0/4 ops on the NPU
// NO16: note: on the CPU: qnn.conv has 16-bit values: target npu-demo-all-ops computes in 8 bits (no int16)
// NO16: note: on the CPU: qnn.max_pool has 16-bit values: target npu-demo-all-ops computes in 8 bits (no int16)
// expected-remark @+2 {{plan-tiles: 3 layers}}
// expected-remark @+1 {{lower-to-tile: 3 layers tiled (qnn.conv x1, qnn.max_pool x1, qnn.requantize x1), 3 loop bodies}}
func.func @conv16(%x: tensor<1x8x8x8x!quant.uniform<i16:f32, 0.001>>) -> tensor<1x4x4x16x!quant.uniform<i8:f32, 0.05:-3>> {
  %w = qnn.constant dense<1> : tensor<16x3x3x8xi8> to tensor<16x3x3x8x!quant.uniform<i8<-127:127>:f32, 0.01>>
  %b = qnn.constant dense<100000> : tensor<16xi64> to tensor<16x!quant.uniform<i64:f32, 0.00001>>
  %acc = qnn.conv %x, %w, %b {layout = "nhwc", pads = [1, 1, 1, 1]} : (tensor<1x8x8x8x!quant.uniform<i16:f32, 0.001>>, tensor<16x3x3x8x!quant.uniform<i8<-127:127>:f32, 0.01>>, tensor<16x!quant.uniform<i64:f32, 0.00001>>) -> tensor<1x8x8x16xi64>
  %y = qnn.requantize %acc {multiplier = [1431655765], shift = [-2], clamp_min = 0} : (tensor<1x8x8x16xi64>) -> tensor<1x8x8x16x!quant.uniform<i16:f32, 0.0002>>
  %p = qnn.max_pool %y {kernel_shape = [2, 2], strides = [2, 2], layout = "nhwc"} : (tensor<1x8x8x16x!quant.uniform<i16:f32, 0.0002>>) -> tensor<1x4x4x16x!quant.uniform<i16:f32, 0.0002>>
  %z = qnn.requantize %p {multiplier = [1073741824], shift = [-7]} : (tensor<1x4x4x16x!quant.uniform<i16:f32, 0.0002>>) -> tensor<1x4x4x16x!quant.uniform<i8:f32, 0.05:-3>>
  func.return %z : tensor<1x4x4x16x!quant.uniform<i8:f32, 0.05:-3>>
}
