// RUN: irc-opt %s --target=%S/Inputs/npu-demo-all-ops.toml -p plan-ddr --verify-diagnostics | FileCheck %s
// RUN: irc-opt %s --target=%S/Inputs/npu-demo-all-ops.toml -p 'plan-ddr{zero-copy=false in-place=false}' | FileCheck %s --check-prefix=NAIVE
// RUN: irc-opt %s --target=%S/Inputs/hierarchy.toml -p plan-ddr 2>&1 | FileCheck %s --check-prefix=HIER

// `plan-ddr` on a small int8 function (npu-demo: buffers aligned to its 64-byte DMA
// burst). Two 1x1 convs read %x (1 KiB); both results are written straight into
// their slices of the concat's buffer (channels 0..15 at offset 0, 16..31 at offset
// 16, strided stores), the first one clamped in place there; the reshape is a view
// of the concat. The convs' int32 accumulators never reach DDR (-1). Live at once at
// most: %x (1,024) and the concat's buffer (2,048), so the arena is 3,072 bytes: the
// concat first (the largest), at 0, then %x at 2,048. The weights (256 bytes each)
// are packed in a read-only region of their own.
// CHECK-LABEL: func.func @main
// CHECK-SAME:    irc.ddr_arguments = array<i64: 2048>, irc.ddr_arena = 3072 : i64, irc.ddr_weights = 512 : i64
// CHECK:         %w1 = qnn.constant {{.*}} {irc.ddr = array<i64: 0>}
// CHECK:         %w2 = qnn.constant {{.*}} {irc.ddr = array<i64: 256>}
// CHECK:         %a1 = qnn.conv %x, %w1 {layout = "nhwc", irc.ddr = array<i64: -1>}
// CHECK:         %y1 = qnn.requantize %a1 {{.*}}irc.ddr = array<i64: 0>
// CHECK:         %c1 = qnn.clamp %y1 {{.*}}irc.ddr = array<i64: 0>
// CHECK:         %a2 = qnn.conv %x, %w2 {layout = "nhwc", irc.ddr = array<i64: -1>}
// CHECK:         %y2 = qnn.requantize %a2 {{.*}}irc.ddr = array<i64: 16>
// CHECK:         %cat = qnn.concat %c1, %y2 {axis = 3, irc.ddr = array<i64: 0>}
// CHECK:         %r = nn.reshape %cat {irc.ddr = array<i64: 0>}

// Without sharing, every tensor has a buffer of its own (8,192 bytes in all); at
// their peak %c1, %y2 and the concat (or the concat and the reshape) are live
// together: 4,096 bytes.
// NAIVE-LABEL: func.func @main
// NAIVE-SAME:    irc.ddr_arena = 4096 : i64

// On a memory hierarchy (Inputs/hierarchy.toml: weights in flash, activations in 2 KiB
// of system SRAM, then DRAM), the concat's buffer (the largest) takes the whole system
// SRAM; %x, live with it, goes to DRAM; the weights are in flash. Each op says the
// memory of each result (`irc.memories`; "" for an accumulator held in SRAM).
// HIER:       remark: plan-ddr: arena 3072 bytes (naive 8192, at least 3072 live at once), weights 512 bytes; system_sram 2048, dram 1024
// HIER-LABEL: func.func @main
// HIER:         %w1 = qnn.constant {{.*}} {irc.ddr = array<i64: 0>, irc.memories = ["flash"]}
// HIER:         %a1 = qnn.conv %x, %w1 {layout = "nhwc", irc.ddr = array<i64: -1>, irc.memories = [""]}
// HIER:         %cat = qnn.concat %c1, %y2 {axis = 3, irc.ddr = array<i64: 0>, irc.memories = ["system_sram"]}

// expected-remark @+1 {{plan-ddr: arena 3072 bytes (naive 8192, at least 3072 live at once), weights 512 bytes}}
func.func @main(%x: tensor<1x8x8x16x!quant.uniform<i8:f32, 0.1>>) -> tensor<1x2048x!quant.uniform<i8:f32, 0.1>> {
  %w1 = qnn.constant dense<1> : tensor<16x1x1x16xi8> to tensor<16x1x1x16x!quant.uniform<i8<-127:127>:f32, 0.01>>
  %w2 = qnn.constant dense<2> : tensor<16x1x1x16xi8> to tensor<16x1x1x16x!quant.uniform<i8<-127:127>:f32, 0.01>>
  %a1 = qnn.conv %x, %w1 {layout = "nhwc"} : (tensor<1x8x8x16x!quant.uniform<i8:f32, 0.1>>, tensor<16x1x1x16x!quant.uniform<i8<-127:127>:f32, 0.01>>) -> tensor<1x8x8x16xi32>
  %y1 = qnn.requantize %a1 {multiplier = [1073741824], shift = [0]} : (tensor<1x8x8x16xi32>) -> tensor<1x8x8x16x!quant.uniform<i8:f32, 0.1>>
  %c1 = qnn.clamp %y1 {clamp_min = 0} : tensor<1x8x8x16x!quant.uniform<i8:f32, 0.1>>
  %a2 = qnn.conv %x, %w2 {layout = "nhwc"} : (tensor<1x8x8x16x!quant.uniform<i8:f32, 0.1>>, tensor<16x1x1x16x!quant.uniform<i8<-127:127>:f32, 0.01>>) -> tensor<1x8x8x16xi32>
  %y2 = qnn.requantize %a2 {multiplier = [1073741824], shift = [0]} : (tensor<1x8x8x16xi32>) -> tensor<1x8x8x16x!quant.uniform<i8:f32, 0.1>>
  %cat = qnn.concat %c1, %y2 {axis = 3} : (tensor<1x8x8x16x!quant.uniform<i8:f32, 0.1>>, tensor<1x8x8x16x!quant.uniform<i8:f32, 0.1>>) -> tensor<1x8x8x32x!quant.uniform<i8:f32, 0.1>>
  %r = nn.reshape %cat : (tensor<1x8x8x32x!quant.uniform<i8:f32, 0.1>>) -> tensor<1x2048x!quant.uniform<i8:f32, 0.1>>
  func.return %r : tensor<1x2048x!quant.uniform<i8:f32, 0.1>>
}
