// RUN: irc-opt %s --split-input-file --target=%S/Inputs/npu-demo-all-ops.toml -p plan-tiles,lower-to-tile --verify-diagnostics | FileCheck %s
// RUN: not irc-opt %s --split-input-file --target=%S/Inputs/tiling-small-sram.toml -p lower-to-tile 2>&1 | FileCheck %s --check-prefix=SMALL

// `lower-to-tile` after `plan-tiles` on npu-demo (SRAM banks of 128 KiB: input at 0,
// weights at 131072, output at 262144, parameters and accumulator at 393216; each
// double-buffered buffer has its second copy at `alternate`, the accumulator one).

// A 3x3 pad-1 conv of a 12x12x8 map to 16 channels with a forced tile of 5 rows of
// all 12 columns and 16 channels from 4 of the 8 input channels: two tiles of 5
// rows in a loop, the remainder of 2 rows peeled after it; each splits K into two
// steps that accumulate into an int32 tile. The input box has the halo (7 rows, 14
// columns), padded with the input zero point -3; the bias and the requantization
// pairs are loaded once, before the loops (they depend on the channel tile only).
// CHECK-LABEL: func.func @conv
// CHECK:         %[[X:.*]] = tile.to_buffer %x {offset = 2304} : {{.*}} to memref<1x12x12x8xi8, "ddr">
// CHECK:         %[[W:.*]] = tile.to_buffer %w {offset = 0} : {{.*}} to memref<16x3x3x8xi8, "ddr">
// CHECK:         %[[Y:.*]] = tile.alloc {offset = 0} : memref<1x12x12x16xi8, "ddr">
// CHECK:         %[[B:.*]] = tile.to_buffer %b {offset = 1152}
// CHECK:         %[[P:.*]] = tile.to_buffer %{{.*}} {offset = 1216} : tensor<16x2xi32> to memref<16x2xi32, "ddr">
// CHECK:         %[[BS:.*]] = tile.alloc {alternate = 393408, offset = 393216} : memref<16xi32, "sram">
// CHECK:         %[[PS:.*]] = tile.alloc {alternate = 393472, offset = 393280} : memref<16x2xi32, "sram">
// CHECK:         %[[ACC:.*]] = tile.alloc {offset = 393600} : memref<1x5x12x16xi32, "sram">
// CHECK:         %[[BOX:.*]] = tile.alloc {alternate = 448, offset = 0} : memref<1x7x14x4xi8, "sram">
// CHECK:         %[[WS:.*]] = tile.alloc {alternate = 131648, offset = 131072} : memref<16x3x3x4xi8, "sram">
// CHECK:         %[[OUT:.*]] = tile.alloc {alternate = 263104, offset = 262144} : memref<1x5x12x16xi8, "sram">
// CHECK:         tile.copy %[[B]][%{{.*}}] to %[[BS]][%{{.*}}] sizes [16]
// CHECK:         tile.copy %[[P]][%{{.*}}, %{{.*}}] to %[[PS]][%{{.*}}, %{{.*}}] sizes [16, 2]
// CHECK:         scf.for %[[ROWS:[0-9]+]] = %{{.*}} to %[[TWO:[0-9]+]] step
// CHECK-NEXT:      tile.fill %[[ACC]] {value = 0}
// CHECK-NEXT:      scf.for %[[K:[0-9]+]] = %{{.*}} to %[[TWO]] step
// CHECK:             %[[CHANNEL:.*]] = arith.muli %[[K]], %{{.*}} : index
// CHECK:             %[[ROW:.*]] = arith.muli %[[ROWS]], %{{.*}} : index
// CHECK:             %[[TOP:.*]] = arith.addi %[[ROW]], %[[MINUS1:[0-9]+]] : index
// CHECK-NEXT:        tile.copy %[[X]][%{{.*}}, %[[TOP]], %[[MINUS1]], %[[CHANNEL]]] to %[[BOX]][{{.*}}] sizes [1, 7, 14, 4] {pad = -3}
// CHECK-NEXT:        tile.copy %[[W]][%{{.*}}, %{{.*}}, %{{.*}}, %[[CHANNEL]]] to %[[WS]][{{.*}}] sizes [16, 3, 3, 4]
// CHECK-NEXT:        tile.conv %[[BOX]], %[[WS]], %[[ACC]] {accumulate = true, input_zero_point = -3}
// CHECK-NEXT:      }
// CHECK-NEXT:      tile.bias_add %[[ACC]], %[[BS]]
// CHECK:           tile.requantize %[[ACC]], %[[PS]], %[[OUT]] {clamp_min = 5, output_zero_point = 5}
// CHECK:           tile.copy %[[OUT]][{{.*}}] to %[[Y]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] sizes [1, 5, 12, 16]
// CHECK-NEXT:    }
// The remainder: 2 rows from input row 9 (10 - 1), a box of 4 rows.
// CHECK:         tile.fill %{{.*}} {value = 0} : memref<1x2x12x16xi32, "sram">
// CHECK:         scf.for
// CHECK:           tile.copy %[[X]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] to %{{.*}} sizes [1, 4, 14, 4] {pad = -3}
// CHECK:           tile.conv {{.*}} {accumulate = true, input_zero_point = -3} : memref<1x4x14x4xi8, "sram">, memref<16x3x3x4xi8, "sram">, memref<1x2x12x16xi32, "sram">
// CHECK:         tile.copy %{{.*}} to %[[Y]][{{.*}}] sizes [1, 2, 12, 16]
// CHECK-NEXT:    %[[T:.*]] = tile.to_tensor %[[Y]]
// CHECK-NEXT:    func.return %[[T]]
// expected-remark @+2 {{plan-tiles: 1 layers}}
// expected-remark @+1 {{lower-to-tile: 1 layers tiled (qnn.conv x1), 2 loop bodies}}
func.func @conv(%x: tensor<1x12x12x8x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x12x12x16x!quant.uniform<i8:f32, 0.3:5>> {
  %w = qnn.constant dense<1> : tensor<16x3x3x8xi8> to tensor<16x3x3x8x!quant.uniform<i8<-127:127>:f32, 0.01>>
  %b = qnn.constant dense<100> : tensor<16xi32> to tensor<16x!quant.uniform<i32:f32, 0.001>>
  %acc = qnn.conv %x, %w, %b {layout = "nhwc", pads = [1, 1, 1, 1], irc.tile_sizes = array<i64: 5, 12, 16, 4>} : (tensor<1x12x12x8x!quant.uniform<i8:f32, 0.1:-3>>, tensor<16x3x3x8x!quant.uniform<i8<-127:127>:f32, 0.01>>, tensor<16x!quant.uniform<i32:f32, 0.001>>) -> tensor<1x12x12x16xi32>
  %y = qnn.requantize %acc {multiplier = [1431655765], shift = [4], clamp_min = 5} : (tensor<1x12x12x16xi32>) -> tensor<1x12x12x16x!quant.uniform<i8:f32, 0.3:5>>
  func.return %y : tensor<1x12x12x16x!quant.uniform<i8:f32, 0.3:5>>
}

// -----

// A zero-copy concat: the conv's tiles go straight into channels 0..7 of the
// concat's buffer, the max pool's into channels 8..15 (its padding holds the storage
// minimum -128), and the requantize of the pool's result rescales those channels in
// place (plan-ddr put the pool's result where the requantize writes). The concat
// itself moves nothing. The reshape's reader runs on tensors, so the buffer is read
// back with tile.to_tensor.
// CHECK-LABEL: func.func @concat
// CHECK:         %[[X:.*]] = tile.to_buffer %x {offset = 0}
// CHECK:         %[[C:.*]] = tile.alloc {offset = 1024} : memref<1x4x4x16xi8, "ddr">
// CHECK:         tile.conv
// CHECK:         tile.requantize
// CHECK-NEXT:    tile.copy %{{.*}}[{{.*}}] to %[[C]][%[[Z:[0-9]+]], %[[Z]], %[[Z]], %[[Z]]] sizes [1, 4, 4, 8]
// CHECK:         tile.copy %[[X]][{{.*}}] to %{{.*}} sizes [1, 6, 6, 8] {pad = -128}
// CHECK-NEXT:    tile.pool %{{.*}}, %{{.*}} {kernel_shape = [3, 3], kind = "max"}
// CHECK:         tile.copy %{{.*}} to %[[C]][%{{.*}}, %{{.*}}, %{{.*}}, %[[EIGHT:[0-9]+]]] sizes [1, 4, 4, 8]
// CHECK:         tile.copy %[[C]][%{{.*}}, %{{.*}}, %{{.*}}, %[[EIGHT2:[0-9]+]]] to %{{.*}} sizes [1, 4, 4, 8]
// CHECK-NEXT:    tile.requantize %{{.*}} {input_zero_point = -3, output_zero_point = 5}
// CHECK-NEXT:    tile.copy %{{.*}} to %[[C]][%{{.*}}, %{{.*}}, %{{.*}}, %[[EIGHT2]]] sizes [1, 4, 4, 8]
// CHECK-NEXT:    %[[T:.*]] = tile.to_tensor %[[C]]
// CHECK-NEXT:    %r = nn.reshape %[[T]]
// CHECK-NOT:     tile.
// CHECK:         func.return %f
// expected-remark @+2 {{plan-tiles: 3 layers}}
// expected-remark @+1 {{lower-to-tile: 4 layers tiled (qnn.concat x1, qnn.conv x1, qnn.max_pool x1, qnn.requantize x1), 3 loop bodies; on tensors: quant.dcast x1}}
func.func @concat(%x: tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x4x4x1x16xf32> {
  %w = qnn.constant dense<1> : tensor<8x1x1x8xi8> to tensor<8x1x1x8x!quant.uniform<i8<-127:127>:f32, 0.01>>
  %a = qnn.conv %x, %w {layout = "nhwc"} : (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>, tensor<8x1x1x8x!quant.uniform<i8<-127:127>:f32, 0.01>>) -> tensor<1x4x4x8xi32>
  %p = qnn.requantize %a {multiplier = [1431655765], shift = [4]} : (tensor<1x4x4x8xi32>) -> tensor<1x4x4x8x!quant.uniform<i8:f32, 0.3:5>>
  %m = qnn.max_pool %x {kernel_shape = [3, 3], pads = [1, 1, 1, 1], layout = "nhwc"} : (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>
  %q = qnn.requantize %m {multiplier = [1431655765], shift = [0]} : (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x4x4x8x!quant.uniform<i8:f32, 0.3:5>>
  %c = qnn.concat %p, %q {axis = 3} : (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.3:5>>, tensor<1x4x4x8x!quant.uniform<i8:f32, 0.3:5>>) -> tensor<1x4x4x16x!quant.uniform<i8:f32, 0.3:5>>
  %r = nn.reshape %c : (tensor<1x4x4x16x!quant.uniform<i8:f32, 0.3:5>>) -> tensor<1x4x4x1x16x!quant.uniform<i8:f32, 0.3:5>>
  %f = quant.dcast %r : tensor<1x4x4x1x16x!quant.uniform<i8:f32, 0.3:5>> to tensor<1x4x4x1x16xf32>
  func.return %f : tensor<1x4x4x1x16xf32>
}

// -----

// A stride-2 transposed conv with a 2x1 kernel (weight [C, KH, KW, M] = 8x2x1x2) and
// an output padding of one column: the stride-1 conv of the flipped kernel, its
// weights reordered to [M, KH, KW, C] = 2x2x1x8 in the place the original ones had
// (offset 0), over the input upsampled by 2 (pads: top 1 - 0 = 1, left 0, bottom 1,
// right 0 + 1). Each tile of 4 output rows reads 5 upsampled rows from row 4i - 1;
// the inserted pixels and the halo hold the zero point -3.
// CHECK-LABEL: func.func @conv_transpose
// CHECK:         %[[X:.*]] = tile.to_buffer %x {offset = 0}
// CHECK:         %[[W:.*]] = tile.to_buffer %{{.*}} {offset = 0} : tensor<2x2x1x8xi8> to memref<2x2x1x8xi8, "ddr">
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK:           %[[ROW:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK-NEXT:      %[[MINUS1:.*]] = arith.constant -1 : index
// CHECK-NEXT:      %[[TOP:.*]] = arith.addi %[[ROW]], %[[MINUS1]] : index
// CHECK-NEXT:      tile.copy %[[X]][%{{.*}}, %[[TOP]], %{{.*}}, %{{.*}}] to %{{.*}} sizes [1, 5, 8, 8] {pad = -3, upsample = [1, 2, 2, 1]}
// CHECK-NEXT:      tile.conv %{{.*}}, %{{.*}}, %{{.*}} {input_zero_point = -3} : memref<1x5x8x8xi8, "sram">, memref<2x2x1x8xi8, "sram">, memref<1x4x8x2xi32, "sram">
// CHECK-NEXT:      tile.requantize
// expected-remark @+2 {{plan-tiles: 1 layers}}
// expected-remark @+1 {{lower-to-tile: 1 layers tiled (qnn.conv_transpose x1), 1 loop bodies}}
func.func @conv_transpose(%x: tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x8x8x2x!quant.uniform<i8:f32, 0.2>> {
  %w = qnn.constant dense<[[[[1, 2]], [[3, 4]]], [[[5, 6]], [[7, 8]]], [[[9, 10]], [[11, 12]]], [[[13, 14]], [[15, 16]]], [[[17, 18]], [[19, 20]]], [[[21, 22]], [[23, 24]]], [[[25, 26]], [[27, 28]]], [[[29, 30]], [[31, 32]]]]> : tensor<8x2x1x2xi8> to tensor<8x2x1x2x!quant.uniform<i8<-127:127>:f32, 0.01>>
  %acc = qnn.conv_transpose %x, %w {layout = "nhwc", strides = [2, 2], output_padding = [0, 1], irc.tile_sizes = array<i64: 4, 8, 2, 8>} : (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>, tensor<8x2x1x2x!quant.uniform<i8<-127:127>:f32, 0.01>>) -> tensor<1x8x8x2xi32>
  %y = qnn.requantize %acc {multiplier = [1073741824], shift = [0]} : (tensor<1x8x8x2xi32>) -> tensor<1x8x8x2x!quant.uniform<i8:f32, 0.2>>
  func.return %y : tensor<1x8x8x2x!quant.uniform<i8:f32, 0.2>>
}

// -----

// Without a recorded plan the pass plans the layer itself, with the same errors: a
// 56x56 average pool needs its whole window in SRAM for one output.
// SMALL: error: qnn.average_pool needs at least 3200 bytes of SRAM (one output element per tile, single buffered); the target has 2048
// SMALL-NEXT: hint: choose a target with more SRAM, or keep this layer on the CPU
// CHECK-LABEL: func.func @pool
// CHECK:         tile.pool %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] {input_h = 56, input_w = 56, kernel_shape = [56, 56], kind = "average"}
// expected-remark @+2 {{plan-tiles: 1 layers}}
// expected-remark @+1 {{lower-to-tile: 1 layers tiled (qnn.average_pool x1), 1 loop bodies}}
func.func @pool(%x: tensor<1x56x56x8x!quant.uniform<i8:f32, 0.1>>) -> tensor<1x1x1x8x!quant.uniform<i8:f32, 0.1>> {
  %y = qnn.average_pool %x {kernel_shape = [56, 56], layout = "nhwc"} : (tensor<1x56x56x8x!quant.uniform<i8:f32, 0.1>>) -> tensor<1x1x1x8x!quant.uniform<i8:f32, 0.1>>
  func.return %y : tensor<1x1x1x8x!quant.uniform<i8:f32, 0.1>>
}

// -----

// A linear resize in forced tiles of output rows (6 of the 12, every column and
// channel; the planner would take the whole layer in one tile), each
// loading the input window its rows read (rows 3i-1 .. 3i+3: one row of padding
// before the first tile, and a column before the first column, never read), resized
// by one tile.resize of that window and stored.
// CHECK-LABEL: func.func @resize_linear
// CHECK:         %[[X:.*]] = tile.to_buffer %x {{.*}} to memref<1x6x6x32xi8, "ddr">
// CHECK:         %[[Y:.*]] = tile.alloc {offset = 0} : memref<1x12x12x32xi8, "ddr">
// CHECK:         %[[IN:.*]] = tile.alloc {{.*}} : memref<1x5x7x32xi8, "sram">
// CHECK:         %[[OUT:.*]] = tile.alloc {{.*}} : memref<1x6x12x32xi8, "sram">
// CHECK:         scf.for %[[I:.*]] =
// CHECK:           %[[OY:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK:           %[[IY:.*]] = arith.addi %{{.*}}, %[[M1:.*]] : index
// CHECK-NEXT:      tile.copy %[[X]][%{{.*}}, %[[IY]], %[[M1]], %{{.*}}] to %[[IN]][{{.*}}] sizes [1, 5, 7, 32] {pad = -3}
// CHECK-NEXT:      tile.resize %[[IN]], %[[OUT]][%[[OY]], %{{.*}}, %[[IY]], %[[M1]]] {axes = [1, 2], input_lengths = [6, 6], output_lengths = [12, 12], scales = [2.0, 2.0]} : memref<1x5x7x32xi8, "sram">, memref<1x6x12x32xi8, "sram">
// CHECK-NEXT:      tile.copy %[[OUT]][{{.*}}] to %[[Y]][%{{.*}}, %[[OY]], {{.*}}] sizes [1, 6, 12, 32]
// expected-remark @+2 {{plan-tiles: 1 layers for npu-demo-all-ops, 4432 cycles estimated (lower bound 2880), peak SRAM 7808 of 524288 bytes}}
// expected-remark @+1 {{lower-to-tile: 1 layers tiled (qnn.resize x1), 1 loop bodies}}
func.func @resize_linear(%x: tensor<1x6x6x32x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x12x12x32x!quant.uniform<i8:f32, 0.1:-3>> {
  %y = qnn.resize %x {scales = [1.0, 2.0, 2.0, 1.0], irc.tile_sizes = array<i64: 6, 12, 32, 1>} : (tensor<1x6x6x32x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x12x12x32x!quant.uniform<i8:f32, 0.1:-3>>
  func.return %y : tensor<1x12x12x32x!quant.uniform<i8:f32, 0.1:-3>>
}

// -----

// An LRN across 32 channels: (forced) tiles of whole channel rows (the window runs
// along them), its i32 table loaded into SRAM once, each tile normalized by one tile.lrn.
// CHECK-LABEL: func.func @lrn
// CHECK:         %[[TABLE:.*]] = tile.to_buffer %{{.*}} : tensor<225xi32> to memref<225xi32, "ddr">
// CHECK:         %[[T:.*]] = tile.alloc {{.*}} : memref<225xi32, "sram">
// CHECK:         tile.copy %[[TABLE]][{{.*}}] to %[[T]][{{.*}}] sizes [225]
// CHECK-NEXT:    arith.constant
// CHECK-NEXT:    arith.constant
// CHECK-NEXT:    scf.for
// CHECK:           tile.lrn %{{.*}}, %[[T]], %{{.*}} {input_zero_point = -128, multiplier = 1342172247, output_zero_point = -128, shift = 27, size = 5} : memref<1x{{[0-9]+}}x8x32xi8, "sram">, memref<225xi32, "sram">, memref<1x{{[0-9]+}}x8x32xi8, "sram">
// expected-remark @+2 {{plan-tiles: 1 layers}}
// expected-remark @+1 {{lower-to-tile: 1 layers tiled (qnn.lrn x1), 1 loop bodies}}
func.func @lrn(%x: tensor<1x8x8x32x!quant.uniform<i8:f32, 0.5:-128>>) -> tensor<1x8x8x32x!quant.uniform<i8:f32, 0.1:-128>> {
  %y = qnn.lrn %x {layout = "nhwc", size = 5, irc.tile_sizes = array<i64: 32, 1, 32, 1>, table = [1073741824, 1073741321, 1073740817, 1073740314, 1073739811, 1073739307, 1073738804, 1073738301, 1073737798, 1073736791, 1073735784, 1073734778, 1073733771, 1073732764, 1073731758, 1073730751, 1073729745, 1073727731, 1073725718, 1073723705, 1073721692, 1073719679, 1073717666, 1073715652, 1073713639, 1073709613, 1073705587, 1073701561, 1073697535, 1073693508, 1073689482, 1073685456, 1073681430, 1073673378, 1073665327, 1073657275, 1073649224, 1073641172, 1073633121, 1073625070, 1073617019, 1073600918, 1073584817, 1073568717, 1073552617, 1073536518, 1073520419, 1073504321, 1073488224, 1073456030, 1073423839, 1073391651, 1073359464, 1073327280, 1073295098, 1073262918, 1073230741, 1073166393, 1073102053, 1073037724, 1072973402, 1072909089, 1072844787, 1072780493, 1072716206, 1072587662, 1072459155, 1072330683, 1072202248, 1072073848, 1071945484, 1071817156, 1071688857, 1071432380, 1071176046, 1070919855, 1070663807, 1070407902, 1070152140, 1069896520, 1069641016, 1069130488, 1068620528, 1068111136, 1067602310, 1067094050, 1066586353, 1066079219, 1065572543, 1064561083, 1063551861, 1062544870, 1061540100, 1060537543, 1059537194, 1058539044, 1057542676, 1055557304, 1053580607, 1051612526, 1049653002, 1047701976, 1045759391, 1043825190, 1041897776, 1038070804, 1034276471, 1030514341, 1026783989, 1023084991, 1019416941, 1015779428, 1012166563, 1005040832, 998031067, 991134326, 984347772, 977668665, 971094355, 964622282, 958232219, 945778193, 933695405, 921966756, 910576205, 899508686, 888750031, 878286909, 868058354, 848504087, 829947579, 812311100, 795524948, 779526430, 764258989, 749671467, 735614922, 709454906, 685366984, 663104445, 642458968, 623253355, 605335869, 588575772, 572701168, 544045301, 518524884, 495632644, 474966985, 456205573, 439086510, 423394675, 408772598, 383095065, 360888828, 341469541, 324324491, 309061493, 295375128, 283023786, 271656946, 252094957, 235530403, 221299889, 208925269, 198052681, 188414279, 179803374, 171942101, 158583141, 147417451, 137927907, 129750477, 122621024, 116342959, 110766757, 105699416, 97149722, 90055730, 84062636, 78923923, 74462668, 70548394, 67082640, 63940968, 58660507, 54296090, 50620610, 47477372, 44754553, 42370087, 40262302, 38354077, 35153100, 32512714, 30292733, 28396778, 26756274, 25321017, 24053358, 22906473, 20984547, 19400822, 18070356, 16934859, 15952914, 15094244, 14336161, 13650532, 12502150, 11556334, 10762096, 10084479, 9498666, 8986521, 8534467, 8125685, 7441181, 6877561, 6404367, 6000723, 5651817, 5346823, 5077644, 4839511], multiplier = 1342172247, shift = 27} : (tensor<1x8x8x32x!quant.uniform<i8:f32, 0.5:-128>>) -> tensor<1x8x8x32x!quant.uniform<i8:f32, 0.1:-128>>
  func.return %y : tensor<1x8x8x32x!quant.uniform<i8:f32, 0.1:-128>>
}
