// RUN: irc-opt %s | irc-opt | FileCheck %s
// RUN: irc-opt %s --mlir-print-op-generic | irc-opt | FileCheck %s

// Every npu op round-trips through its custom syntax and the generic form: a
// stream that places its inputs and weights in DDR, pads a conv's input box with a
// DMA fill, runs the MAC array and the vector unit on aligned SRAM views, calls
// the host, and reads its results back after npu.end.

// The host function an npu.host_call runs.
// CHECK-LABEL: func.func @host_0
func.func @host_0(%a: tensor<1x10xf32>) -> tensor<1x10xf32> {
  // CHECK-NEXT: func.return %a : tensor<1x10xf32>
  func.return %a : tensor<1x10xf32>
}

// The memory sizes are attributes of the function; the views below lie inside them
// and every compute operand is at an SRAM address that is a multiple of 64.
// CHECK-LABEL: func.func @main
// CHECK-SAME: attributes {npu.ddr_bytes = 16384 : i64, npu.weights_bytes = 8192 : i64, npu.sram_bytes = 65536 : i64, npu.sram_alignment = 64 : i64}
func.func @main(%arg: tensor<1x8x8x16xi8>, %h: tensor<1x10xf32>) -> (tensor<1x3x8x8xi8>, tensor<1x10xf32>) attributes {npu.ddr_bytes = 16384, npu.weights_bytes = 8192, npu.sram_bytes = 65536, npu.sram_alignment = 64} {
  // CHECK-NEXT: %c0 = arith.constant 0 : index
  %c0 = arith.constant 0 : index
  // CHECK-NEXT: %c4 = arith.constant 4 : index
  %c4 = arith.constant 4 : index
  // CHECK-NEXT: %weights = nn.constant dense<1> : tensor<8x3x3x16xi8>
  %weights = nn.constant dense<1> : tensor<8x3x3x16xi8>
  // CHECK-NEXT: %up = nn.constant dense<2> : tensor<1x3x3x8xi8>
  %up = nn.constant dense<2> : tensor<1x3x3x8xi8>

  // DDR views: the weights region [0, 8192), then the activations; %rows is rows 1-3
  // of %x (a strided box).
  // CHECK-NEXT: %wd = npu.view ddr[0] : memref<8x3x3x16xi8, "ddr">
  %wd = npu.view ddr[0] : memref<8x3x3x16xi8, "ddr">
  // CHECK-NEXT: %ud = npu.view ddr[1152] : memref<1x3x3x8xi8, "ddr">
  %ud = npu.view ddr[1152] : memref<1x3x3x8xi8, "ddr">
  // CHECK-NEXT: %x = npu.view ddr[8192] : memref<1x8x8x16xi8, "ddr">
  %x = npu.view ddr[8192] : memref<1x8x8x16xi8, "ddr">
  // CHECK-NEXT: %rows = npu.view ddr[8320] : memref<1x3x8x16xi8, strided<[1024, 128, 16, 1]>, "ddr">
  %rows = npu.view ddr[8320] : memref<1x3x8x16xi8, strided<[1024, 128, 16, 1]>, "ddr">
  // CHECK-NEXT: %yd = npu.view ddr[9216] : memref<1x3x8x8xi8, "ddr">
  %yd = npu.view ddr[9216] : memref<1x3x8x8xi8, "ddr">
  // CHECK-NEXT: %copy = npu.view ddr[9472] : memref<1x3x3x8xi8, "ddr">
  %copy = npu.view ddr[9472] : memref<1x3x3x8xi8, "ddr">
  // CHECK-NEXT: %ha = npu.view ddr[10240] : memref<1x10xf32, "ddr">
  %ha = npu.view ddr[10240] : memref<1x10xf32, "ddr">
  // CHECK-NEXT: %hb = npu.view ddr[10304] : memref<1x10xf32, "ddr">
  %hb = npu.view ddr[10304] : memref<1x10xf32, "ddr">

  // The runtime's boundary: arguments and constants into DDR.
  // CHECK-NEXT: npu.place %weights into %wd : tensor<8x3x3x16xi8>, memref<8x3x3x16xi8, "ddr">
  npu.place %weights into %wd : tensor<8x3x3x16xi8>, memref<8x3x3x16xi8, "ddr">
  // CHECK-NEXT: npu.place %up into %ud : tensor<1x3x3x8xi8>, memref<1x3x3x8xi8, "ddr">
  npu.place %up into %ud : tensor<1x3x3x8xi8>, memref<1x3x3x8xi8, "ddr">
  // CHECK-NEXT: npu.place %arg into %x : tensor<1x8x8x16xi8>, memref<1x8x8x16xi8, "ddr">
  npu.place %arg into %x : tensor<1x8x8x16xi8>, memref<1x8x8x16xi8, "ddr">
  // CHECK-NEXT: npu.place %h into %ha : tensor<1x10xf32>, memref<1x10xf32, "ddr">
  npu.place %h into %ha : tensor<1x10xf32>, memref<1x10xf32, "ddr">

  // SRAM views: %box is the inside of %frame (its 1-element halo cut off); %upbox
  // takes every other row and column of %upframe (a transposed conv's input); the
  // layout's explicit `offset: 0` prints without it.
  // CHECK-NEXT: %frame = npu.view sram[0] : memref<1x5x10x16xi8, "sram">
  %frame = npu.view sram[0] : memref<1x5x10x16xi8, "sram">
  // CHECK-NEXT: %box = npu.view sram[176] : memref<1x3x8x16xi8, strided<[800, 160, 16, 1]>, "sram">
  %box = npu.view sram[176] : memref<1x3x8x16xi8, strided<[800, 160, 16, 1]>, "sram">
  // CHECK-NEXT: %w = npu.view sram[1024] : memref<8x3x3x16xi8, "sram">
  %w = npu.view sram[1024] : memref<8x3x3x16xi8, "sram">
  // CHECK-NEXT: %acc = npu.view sram[2176] : memref<1x3x8x8xi32, "sram">
  %acc = npu.view sram[2176] : memref<1x3x8x8xi32, "sram">
  // CHECK-NEXT: %bias = npu.view sram[2944] : memref<8xi32, "sram">
  %bias = npu.view sram[2944] : memref<8xi32, "sram">
  // CHECK-NEXT: %params = npu.view sram[3008] : memref<8x2xi32, "sram">
  %params = npu.view sram[3008] : memref<8x2xi32, "sram">
  // CHECK-NEXT: %out = npu.view sram[3072] : memref<1x3x8x8xi8, "sram">
  %out = npu.view sram[3072] : memref<1x3x8x8xi8, "sram">
  // CHECK-NEXT: %upframe = npu.view sram[11264] : memref<1x5x5x8xi8, "sram">
  %upframe = npu.view sram[11264] : memref<1x5x5x8xi8, "sram">
  // CHECK-NEXT: %upbox = npu.view sram[11264] : memref<1x3x3x8xi8, strided<[200, 80, 16, 1]>, "sram">
  %upbox = npu.view sram[11264] : memref<1x3x3x8xi8, strided<[200, 80, 16, 1], offset: 0>, "sram">
  // CHECK-NEXT: %roll = npu.view sram[12288] : memref<1x3x8x8xi8, "sram">
  %roll = npu.view sram[12288] : memref<1x3x8x8xi8, "sram">

  // DMAs: a fill alone, a copy into a padded frame, plain copies in, within DDR and out.
  // CHECK-NEXT: npu.dma fill %frame {pad = 0} : memref<1x5x10x16xi8, "sram">
  npu.dma fill %frame {pad = 0} : memref<1x5x10x16xi8, "sram">
  // CHECK-NEXT: npu.dma %rows to %box fill %frame {pad = -3} : memref<1x3x8x16xi8, strided<[1024, 128, 16, 1]>, "ddr">, memref<1x3x8x16xi8, strided<[800, 160, 16, 1]>, "sram">, memref<1x5x10x16xi8, "sram">
  npu.dma %rows to %box fill %frame {pad = -3} : memref<1x3x8x16xi8, strided<[1024, 128, 16, 1]>, "ddr">, memref<1x3x8x16xi8, strided<[800, 160, 16, 1]>, "sram">, memref<1x5x10x16xi8, "sram">
  // CHECK-NEXT: npu.dma %rows to %box fill %frame {broadcast = 2, pad = -3} : memref<1x3x8x16xi8, strided<[1024, 128, 16, 1]>, "ddr">, memref<1x3x8x16xi8, strided<[800, 160, 16, 1]>, "sram">, memref<1x5x10x16xi8, "sram">
  npu.dma %rows to %box fill %frame {pad = -3, broadcast = 2} : memref<1x3x8x16xi8, strided<[1024, 128, 16, 1]>, "ddr">, memref<1x3x8x16xi8, strided<[800, 160, 16, 1]>, "sram">, memref<1x5x10x16xi8, "sram">
  // CHECK-NEXT: npu.dma %ud to %upbox fill %upframe {pad = 0} : memref<1x3x3x8xi8, "ddr">, memref<1x3x3x8xi8, strided<[200, 80, 16, 1]>, "sram">, memref<1x5x5x8xi8, "sram">
  npu.dma %ud to %upbox fill %upframe {pad = 0} : memref<1x3x3x8xi8, "ddr">, memref<1x3x3x8xi8, strided<[200, 80, 16, 1], offset: 0>, "sram">, memref<1x5x5x8xi8, "sram">
  // CHECK-NEXT: npu.dma %wd to %w : memref<8x3x3x16xi8, "ddr">, memref<8x3x3x16xi8, "sram">
  npu.dma %wd to %w : memref<8x3x3x16xi8, "ddr">, memref<8x3x3x16xi8, "sram">
  // CHECK-NEXT: npu.dma %ud to %copy : memref<1x3x3x8xi8, "ddr">, memref<1x3x3x8xi8, "ddr">
  npu.dma %ud to %copy : memref<1x3x3x8xi8, "ddr">, memref<1x3x3x8xi8, "ddr">
  // Within SRAM (a tile into a cascade's rolling buffer).
  // CHECK-NEXT: npu.dma %out to %roll : memref<1x3x8x8xi8, "sram">, memref<1x3x8x8xi8, "sram">
  npu.dma %out to %roll : memref<1x3x8x8xi8, "sram">, memref<1x3x8x8xi8, "sram">
  // CHECK-NEXT: npu.signal {queue = "dma_in", token = 0}
  npu.signal {queue = "dma_in", token = 0}
  // CHECK-NEXT: npu.wait {queue = "mac", token = 0}
  npu.wait {queue = "mac", token = 0}

  // The MAC array: a conv into its i32 accumulator, one with a bias only, one with
  // the whole output stage (bias, requantize, clamp).
  // CHECK-NEXT: npu.conv %frame, %w, %acc {input_zero_point = -3} : memref<1x5x10x16xi8, "sram">, memref<8x3x3x16xi8, "sram">, memref<1x3x8x8xi32, "sram">
  npu.conv %frame, %w, %acc {input_zero_point = -3} : memref<1x5x10x16xi8, "sram">, memref<8x3x3x16xi8, "sram">, memref<1x3x8x8xi32, "sram">
  // CHECK-NEXT: npu.conv %frame, %w, %acc bias %bias {input_zero_point = -3} : memref<1x5x10x16xi8, "sram">, memref<8x3x3x16xi8, "sram">, memref<1x3x8x8xi32, "sram">, memref<8xi32, "sram">
  npu.conv %frame, %w, %acc bias %bias {input_zero_point = -3} : memref<1x5x10x16xi8, "sram">, memref<8x3x3x16xi8, "sram">, memref<1x3x8x8xi32, "sram">, memref<8xi32, "sram">
  // CHECK-NEXT: npu.conv %frame, %w, %acc bias %bias requantize %params into %out {accumulate = true, clamp_min = 5, input_zero_point = -3, output_zero_point = 5} : memref<1x5x10x16xi8, "sram">, memref<8x3x3x16xi8, "sram">, memref<1x3x8x8xi32, "sram">, memref<8xi32, "sram">, memref<8x2xi32, "sram">, memref<1x3x8x8xi8, "sram">
  npu.conv %frame, %w, %acc bias %bias requantize %params into %out {input_zero_point = -3, accumulate = true, output_zero_point = 5, clamp_min = 5} : memref<1x5x10x16xi8, "sram">, memref<8x3x3x16xi8, "sram">, memref<1x3x8x8xi32, "sram">, memref<8xi32, "sram">, memref<8x2xi32, "sram">, memref<1x3x8x8xi8, "sram">
  // TFLite's rounding in the output stage (docs/tflite.md).
  // CHECK-NEXT: npu.conv %frame, %w, %acc bias %bias requantize %params into %out {input_zero_point = -3, rounding = "double_up"} : memref<1x5x10x16xi8, "sram">, memref<8x3x3x16xi8, "sram">, memref<1x3x8x8xi32, "sram">, memref<8xi32, "sram">, memref<8x2xi32, "sram">, memref<1x3x8x8xi8, "sram">
  npu.conv %frame, %w, %acc bias %bias requantize %params into %out {input_zero_point = -3, rounding = "double_up"} : memref<1x5x10x16xi8, "sram">, memref<8x3x3x16xi8, "sram">, memref<1x3x8x8xi32, "sram">, memref<8xi32, "sram">, memref<8x2xi32, "sram">, memref<1x3x8x8xi8, "sram">
  // CHECK-NEXT: npu.signal {queue = "mac", token = 1}
  npu.signal {queue = "mac", token = 1}
  // CHECK-NEXT: npu.wait {queue = "dma_out", token = 1}
  npu.wait {queue = "dma_out", token = 1}
  // CHECK-NEXT: npu.dma %out to %yd : memref<1x3x8x8xi8, "sram">, memref<1x3x8x8xi8, "ddr">
  npu.dma %out to %yd : memref<1x3x8x8xi8, "sram">, memref<1x3x8x8xi8, "ddr">

  // A matrix product requantized with one (multiplier, shift) pair.
  // CHECK-NEXT: %a = npu.view sram[3264] : memref<8x64xi8, "sram">
  %a = npu.view sram[3264] : memref<8x64xi8, "sram">
  // CHECK-NEXT: %b = npu.view sram[3776] : memref<64x32xi8, "sram">
  %b = npu.view sram[3776] : memref<64x32xi8, "sram">
  // CHECK-NEXT: %macc = npu.view sram[5824] : memref<8x32xi32, "sram">
  %macc = npu.view sram[5824] : memref<8x32xi32, "sram">
  // CHECK-NEXT: %mp = npu.view sram[6848] : memref<1x2xi32, "sram">
  %mp = npu.view sram[6848] : memref<1x2xi32, "sram">
  // CHECK-NEXT: %mout = npu.view sram[6912] : memref<8x32xi8, "sram">
  %mout = npu.view sram[6912] : memref<8x32xi8, "sram">
  // CHECK-NEXT: npu.fill %macc {value = 0} : memref<8x32xi32, "sram">
  npu.fill %macc {value = 0} : memref<8x32xi32, "sram">
  // CHECK-NEXT: npu.matmul %a, %b, %macc requantize %mp into %mout {a_zero_point = 4, accumulate = true} : memref<8x64xi8, "sram">, memref<64x32xi8, "sram">, memref<8x32xi32, "sram">, memref<1x2xi32, "sram">, memref<8x32xi8, "sram">
  npu.matmul %a, %b, %macc requantize %mp into %mout {accumulate = true, a_zero_point = 4} : memref<8x64xi8, "sram">, memref<64x32xi8, "sram">, memref<8x32xi32, "sram">, memref<1x2xi32, "sram">, memref<8x32xi8, "sram">

  // The vector unit.
  // CHECK-NEXT: %pin = npu.view sram[7168] : memref<1x6x14x8xi8, "sram">
  %pin = npu.view sram[7168] : memref<1x6x14x8xi8, "sram">
  // CHECK-NEXT: %pout = npu.view sram[7872] : memref<1x4x12x8xi8, "sram">
  %pout = npu.view sram[7872] : memref<1x4x12x8xi8, "sram">
  // CHECK-NEXT: npu.pool %pin, %pout[%c4, %c0] {input_h = 12, input_w = 12, input_zero_point = -3, kernel_shape = [3, 3], kind = "average", multiplier = 1288490189, pads = [1, 1, 1, 1], shift = 0} : memref<1x6x14x8xi8, "sram">, memref<1x4x12x8xi8, "sram">
  npu.pool %pin, %pout[%c4, %c0] {kind = "average", kernel_shape = [3, 3], pads = [1, 1, 1, 1], input_h = 12, input_w = 12, input_zero_point = -3, multiplier = 1288490189, shift = 0} : memref<1x6x14x8xi8, "sram">, memref<1x4x12x8xi8, "sram">
  // CHECK-NEXT: npu.pool %pin, %pout {kernel_shape = [3, 3], kind = "max"} : memref<1x6x14x8xi8, "sram">, memref<1x4x12x8xi8, "sram">
  npu.pool %pin, %pout {kind = "max", kernel_shape = [3, 3]} : memref<1x6x14x8xi8, "sram">, memref<1x4x12x8xi8, "sram">
  // CHECK-NEXT: %t = npu.view sram[8256] : memref<64xi8, "sram">
  %t = npu.view sram[8256] : memref<64xi8, "sram">
  // CHECK-NEXT: %u = npu.view sram[8320] : memref<64xi8, "sram">
  %u = npu.view sram[8320] : memref<64xi8, "sram">
  // CHECK-NEXT: %table = npu.view sram[8384] : memref<256xi8, "sram">
  %table = npu.view sram[8384] : memref<256xi8, "sram">
  // CHECK-NEXT: npu.requantize %t, %mp, %u {input_zero_point = -3, output_zero_point = 5} : memref<64xi8, "sram">, memref<1x2xi32, "sram">, memref<64xi8, "sram">
  npu.requantize %t, %mp, %u {output_zero_point = 5, input_zero_point = -3} : memref<64xi8, "sram">, memref<1x2xi32, "sram">, memref<64xi8, "sram">
  // CHECK-NEXT: npu.add %t, %u, %t {lhs_multiplier = 1073741824, lhs_shift = -1, lhs_zero_point = 3, multiplier = 1073741824, output_zero_point = -2, rhs_multiplier = 1073741824, rhs_shift = 0, shift = -1} : memref<64xi8, "sram">, memref<64xi8, "sram">, memref<64xi8, "sram">
  npu.add %t, %u, %t {lhs_zero_point = 3, output_zero_point = -2, lhs_multiplier = 1073741824, lhs_shift = -1, rhs_multiplier = 1073741824, rhs_shift = 0, multiplier = 1073741824, shift = -1} : memref<64xi8, "sram">, memref<64xi8, "sram">, memref<64xi8, "sram">
  // CHECK-NEXT: npu.mul %t, %u, %u {multiplier = 1518500250, rhs_zero_point = 3, shift = 7} : memref<64xi8, "sram">, memref<64xi8, "sram">, memref<64xi8, "sram">
  npu.mul %t, %u, %u {multiplier = 1518500250, shift = 7, rhs_zero_point = 3} : memref<64xi8, "sram">, memref<64xi8, "sram">, memref<64xi8, "sram">
  // CHECK-NEXT: npu.clamp %u, %t {clamp_max = 100, clamp_min = -5} : memref<64xi8, "sram">, memref<64xi8, "sram">
  npu.clamp %u, %t {clamp_min = -5, clamp_max = 100} : memref<64xi8, "sram">, memref<64xi8, "sram">
  // CHECK-NEXT: npu.lut %t, %table, %u : memref<64xi8, "sram">, memref<256xi8, "sram">, memref<64xi8, "sram">
  npu.lut %t, %table, %u : memref<64xi8, "sram">, memref<256xi8, "sram">, memref<64xi8, "sram">
  // CHECK-NEXT: %ta = npu.view sram[8960] : memref<2x3x4xi8, "sram">
  %ta = npu.view sram[8960] : memref<2x3x4xi8, "sram">
  // CHECK-NEXT: %tb = npu.view sram[9024] : memref<2x4x3xi8, "sram">
  %tb = npu.view sram[9024] : memref<2x4x3xi8, "sram">
  // CHECK-NEXT: npu.transpose %ta, %tb {perm = [0, 2, 1]} : memref<2x3x4xi8, "sram">, memref<2x4x3xi8, "sram">
  npu.transpose %ta, %tb {perm = [0, 2, 1]} : memref<2x3x4xi8, "sram">, memref<2x4x3xi8, "sram">

  // Float tiles: a broadcasting add and multiply, a float matmul clamped in place.
  // CHECK-NEXT: %f = npu.view sram[8640] : memref<4x16xf32, "sram">
  %f = npu.view sram[8640] : memref<4x16xf32, "sram">
  // CHECK-NEXT: %g = npu.view sram[8896] : memref<1x16xf32, "sram">
  %g = npu.view sram[8896] : memref<1x16xf32, "sram">
  // CHECK-NEXT: %fb = npu.view sram[9088] : memref<16x16xf32, "sram">
  %fb = npu.view sram[9088] : memref<16x16xf32, "sram">
  // CHECK-NEXT: %facc = npu.view sram[10112] : memref<4x16xf32, "sram">
  %facc = npu.view sram[10112] : memref<4x16xf32, "sram">
  // CHECK-NEXT: npu.addf %f, %g, %f : memref<4x16xf32, "sram">, memref<1x16xf32, "sram">, memref<4x16xf32, "sram">
  npu.addf %f, %g, %f : memref<4x16xf32, "sram">, memref<1x16xf32, "sram">, memref<4x16xf32, "sram">
  // CHECK-NEXT: npu.mulf %f, %g, %f : memref<4x16xf32, "sram">, memref<1x16xf32, "sram">, memref<4x16xf32, "sram">
  npu.mulf %f, %g, %f : memref<4x16xf32, "sram">, memref<1x16xf32, "sram">, memref<4x16xf32, "sram">
  // CHECK-NEXT: npu.matmul %f, %fb, %facc {clamp_max = 6.0, clamp_min = 0.0} : memref<4x16xf32, "sram">, memref<16x16xf32, "sram">, memref<4x16xf32, "sram">
  npu.matmul %f, %fb, %facc {clamp_min = 0.0 : f32, clamp_max = 6.0 : f32} : memref<4x16xf32, "sram">, memref<16x16xf32, "sram">, memref<4x16xf32, "sram">
  // CHECK-NEXT: npu.signal {queue = "vector", token = 2}
  npu.signal {queue = "vector", token = 2}

  // The host runs a CPU-fallback function on DDR views; then the stream ends and the
  // runtime reads the results.
  // CHECK-NEXT: npu.wait {queue = "host", token = 2}
  npu.wait {queue = "host", token = 2}
  // CHECK-NEXT: npu.host_call @host_0(%ha) -> (%hb) : (memref<1x10xf32, "ddr">) -> (memref<1x10xf32, "ddr">)
  npu.host_call @host_0(%ha) -> (%hb) : (memref<1x10xf32, "ddr">) -> (memref<1x10xf32, "ddr">)
  // CHECK-NEXT: npu.end
  npu.end
  // CHECK-NEXT: %y = npu.read %yd : memref<1x3x8x8xi8, "ddr"> to tensor<1x3x8x8xi8>
  %y = npu.read %yd : memref<1x3x8x8xi8, "ddr"> to tensor<1x3x8x8xi8>
  // CHECK-NEXT: %hy = npu.read %hb : memref<1x10xf32, "ddr"> to tensor<1x10xf32>
  %hy = npu.read %hb : memref<1x10xf32, "ddr"> to tensor<1x10xf32>
  // CHECK-NEXT: func.return %y, %hy : tensor<1x3x8x8xi8>, tensor<1x10xf32>
  func.return %y, %hy : tensor<1x3x8x8xi8>, tensor<1x10xf32>
}

// The whole-row commands and the float edges' casts of the vector unit.
// CHECK-LABEL: func.func @rows
func.func @rows() attributes {npu.sram_bytes = 4096} {
  %x = npu.view sram[0] : memref<4x16xi8, "sram">
  %y = npu.view sram[64] : memref<4x16xi8, "sram">
  %table = npu.view sram[128] : memref<256xi16, "sram">
  %p = npu.view sram[640] : memref<16x2xi32, "sram">
  %f = npu.view sram[768] : memref<4x16xf32, "sram">
  %m = npu.view sram[1024] : memref<1x16xi8, "sram">
  %lrn_table = npu.view sram[1088] : memref<225xi32, "sram">
  // CHECK: npu.softmax %x, %table, %y {multiplier = 2139095040, output_zero_point = -128, shift = 7} : memref<4x16xi8, "sram">, memref<256xi16, "sram">, memref<4x16xi8, "sram">
  npu.softmax %x, %table, %y {multiplier = 2139095040, shift = 7, output_zero_point = -128} : memref<4x16xi8, "sram">, memref<256xi16, "sram">, memref<4x16xi8, "sram">
  // CHECK-NEXT: npu.softmax %x, %m, %table, %y {multiplier = 2139095040, shift = 7} : memref<4x16xi8, "sram">, memref<1x16xi8, "sram">, memref<256xi16, "sram">, memref<4x16xi8, "sram">
  npu.softmax %x, %m, %table, %y {multiplier = 2139095040, shift = 7} : memref<4x16xi8, "sram">, memref<1x16xi8, "sram">, memref<256xi16, "sram">, memref<4x16xi8, "sram">
  // CHECK-NEXT: npu.layer_norm %x, %p, %y {epsilon_term = 4, input_zero_point = 3, multiplier = 2137224968, output_zero_point = -2, shift = 15} : memref<4x16xi8, "sram">, memref<16x2xi32, "sram">, memref<4x16xi8, "sram">
  npu.layer_norm %x, %p, %y {input_zero_point = 3, epsilon_term = 4, multiplier = 2137224968, shift = 15, output_zero_point = -2} : memref<4x16xi8, "sram">, memref<16x2xi32, "sram">, memref<4x16xi8, "sram">
  // CHECK-NEXT: npu.lrn %x, %lrn_table, %y {input_zero_point = -128, multiplier = 1342172247, output_zero_point = -128, shift = 27, size = 5} : memref<4x16xi8, "sram">, memref<225xi32, "sram">, memref<4x16xi8, "sram">
  npu.lrn %x, %lrn_table, %y {input_zero_point = -128, size = 5, multiplier = 1342172247, shift = 27, output_zero_point = -128} : memref<4x16xi8, "sram">, memref<225xi32, "sram">, memref<4x16xi8, "sram">
  // CHECK-NEXT: npu.quantize %f, %y {scale = 0.0078125, zero_point = -128} : memref<4x16xf32, "sram">, memref<4x16xi8, "sram">
  npu.quantize %f, %y {scale = 0.0078125 : f32, zero_point = -128} : memref<4x16xf32, "sram">, memref<4x16xi8, "sram">
  // CHECK-NEXT: npu.dequantize %y, %f {scale = 0.0078125, zero_point = -128} : memref<4x16xi8, "sram">, memref<4x16xf32, "sram">
  npu.dequantize %y, %f {scale = 0.0078125 : f32, zero_point = -128} : memref<4x16xi8, "sram">, memref<4x16xf32, "sram">
  func.return
}

// A linear resize of whole planes, and the 16-bit forms: an interpolated lookup and a
// conv into a wide accumulator with its i64 bias, requantized into int16.
// CHECK-LABEL: func.func @resize_and_sixteen_bit
func.func @resize_and_sixteen_bit() attributes {npu.sram_bytes = 8192, npu.sram_alignment = 64} {
  %x = npu.view sram[0] : memref<1x2x2x8xi8, "sram">
  %y = npu.view sram[64] : memref<1x4x4x8xi8, "sram">
  // CHECK: npu.resize %x, %y {axes = [1, 2], scales = [2.0, 2.0]} : memref<1x2x2x8xi8, "sram">, memref<1x4x4x8xi8, "sram">
  npu.resize %x, %y {axes = [1, 2], scales = [2.0, 2.0]} : memref<1x2x2x8xi8, "sram">, memref<1x4x4x8xi8, "sram">
  // A window: the output tile's origin, then the input window's (constants).
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  // CHECK: npu.resize %x, %y[%c4, %c0, %c1, %c0] {axes = [1, 2], input_lengths = [8, 2], output_lengths = [16, 4], scales = [2.0, 2.0]} : memref<1x2x2x8xi8, "sram">, memref<1x4x4x8xi8, "sram">
  npu.resize %x, %y[%c4, %c0, %c1, %c0] {axes = [1, 2], input_lengths = [8, 2], output_lengths = [16, 4], scales = [2.0, 2.0]} : memref<1x2x2x8xi8, "sram">, memref<1x4x4x8xi8, "sram">
  %a = npu.view sram[256] : memref<64xi16, "sram">
  %table = npu.view sram[384] : memref<513xi16, "sram">
  // CHECK: npu.lut %a, %table, %a : memref<64xi16, "sram">, memref<513xi16, "sram">, memref<64xi16, "sram">
  npu.lut %a, %table, %a : memref<64xi16, "sram">, memref<513xi16, "sram">, memref<64xi16, "sram">
  %in = npu.view sram[1472] : memref<1x3x3x4xi16, "sram">
  %w = npu.view sram[1600] : memref<8x3x3x4xi8, "sram">
  %acc = npu.view sram[1920] : memref<1x1x1x8xi64, "sram">
  %bias = npu.view sram[1984] : memref<8xi64, "sram">
  %params = npu.view sram[2048] : memref<8x2xi32, "sram">
  %out = npu.view sram[2112] : memref<1x1x1x8xi16, "sram">
  // CHECK: npu.conv %in, %w, %acc bias %bias requantize %params into %out {clamp_min = 0} : memref<1x3x3x4xi16, "sram">, memref<8x3x3x4xi8, "sram">, memref<1x1x1x8xi64, "sram">, memref<8xi64, "sram">, memref<8x2xi32, "sram">, memref<1x1x1x8xi16, "sram">
  npu.conv %in, %w, %acc bias %bias requantize %params into %out {clamp_min = 0} : memref<1x3x3x4xi16, "sram">, memref<8x3x3x4xi8, "sram">, memref<1x1x1x8xi64, "sram">, memref<8xi64, "sram">, memref<8x2xi32, "sram">, memref<1x1x1x8xi16, "sram">
  %rows = npu.view sram[2176] : memref<8x8xi16, "sram">
  %pairs = npu.view sram[2304] : memref<8x2xi64, "sram">
  // CHECK: npu.layer_norm %rows, %pairs, %rows {epsilon_term = 10240, multiplier = 2097152000, shift = 24} : memref<8x8xi16, "sram">, memref<8x2xi64, "sram">, memref<8x8xi16, "sram">
  npu.layer_norm %rows, %pairs, %rows {epsilon_term = 10240, multiplier = 2097152000, shift = 24} : memref<8x8xi16, "sram">, memref<8x2xi64, "sram">, memref<8x8xi16, "sram">
  func.return
}

// -----

// A program on a memory hierarchy (Vela's Shared_Sram): the weights in flash, the
// activations in system SRAM, tiles in the NPU's SRAM. A memory's name is the memory
// space of its views; `npu.<memory>_bytes` gives each one's size.
// CHECK-LABEL: func.func @memory_hierarchy
// CHECK-SAME: npu.flash_bytes = 4096 : i64, npu.system_sram_bytes = 8192 : i64, npu.weights_memory = "flash", npu.weights_bytes = 1024 : i64
func.func @memory_hierarchy(%x: tensor<64xi8>) -> tensor<64xi8> attributes {npu.flash_bytes = 4096, npu.system_sram_bytes = 8192, npu.weights_memory = "flash", npu.weights_bytes = 1024, npu.sram_bytes = 4096, npu.sram_alignment = 64} {
  // CHECK: %w = npu.view flash[0] : memref<64xi8, "flash">
  %w = npu.view flash[0] : memref<64xi8, "flash">
  // CHECK: %a = npu.view system_sram[0] : memref<64xi8, "system_sram">
  %a = npu.view system_sram[0] : memref<64xi8, "system_sram">
  %ws = npu.view sram[0] : memref<64xi8, "sram">
  %as = npu.view sram[64] : memref<64xi8, "sram">
  npu.place %x into %a : tensor<64xi8>, memref<64xi8, "system_sram">
  // CHECK: npu.dma %w to %ws : memref<64xi8, "flash">, memref<64xi8, "sram">
  npu.dma %w to %ws : memref<64xi8, "flash">, memref<64xi8, "sram">
  npu.dma %a to %as : memref<64xi8, "system_sram">, memref<64xi8, "sram">
  // On a target with a weight stream, a load of weights runs on `dma_weights`.
  // CHECK: npu.dma %w to %ws {weights = true} : memref<64xi8, "flash">, memref<64xi8, "sram">
  npu.dma %w to %ws {weights = true} : memref<64xi8, "flash">, memref<64xi8, "sram">
  npu.end
  %y = npu.read %a : memref<64xi8, "system_sram"> to tensor<64xi8>
  func.return %y : tensor<64xi8>
}

// Two cores (npu.cores): core 1's commands and synchronisation name it, and use its
// own SRAM, `sram1`; a token signalled on core 1 and waited for on core 0 orders the
// two cores.
// CHECK-LABEL: func.func @two_cores
// CHECK-SAME: npu.cores = 2 : i64
func.func @two_cores(%x: tensor<64xi8>) -> tensor<64xi8> attributes {npu.cores = 2, npu.ddr_bytes = 256, npu.sram_bytes = 64, npu.sram1_bytes = 64, npu.sram_alignment = 64} {
  %a = npu.view ddr[0] : memref<64xi8, "ddr">
  %b = npu.view ddr[64] : memref<64xi8, "ddr">
  // CHECK: %s1 = npu.view sram1[0] : memref<64xi8, "sram1">
  %s1 = npu.view sram1[0] : memref<64xi8, "sram1">
  %s0 = npu.view sram[0] : memref<64xi8, "sram">
  npu.place %x into %a : tensor<64xi8>, memref<64xi8, "ddr">
  // CHECK: npu.dma %a to %s1 {core = 1} : memref<64xi8, "ddr">, memref<64xi8, "sram1">
  npu.dma %a to %s1 {core = 1 : i64} : memref<64xi8, "ddr">, memref<64xi8, "sram1">
  // CHECK-NEXT: npu.signal {core = 1, queue = "dma_in", token = 0}
  npu.signal {core = 1 : i64, queue = "dma_in", token = 0}
  // CHECK-NEXT: npu.wait {core = 1, queue = "vector", token = 0}
  npu.wait {core = 1 : i64, queue = "vector", token = 0}
  // CHECK-NEXT: npu.clamp %s1, %s1 {clamp_min = 0, core = 1} : memref<64xi8, "sram1">, memref<64xi8, "sram1">
  npu.clamp %s1, %s1 {clamp_min = 0 : i64, core = 1 : i64} : memref<64xi8, "sram1">, memref<64xi8, "sram1">
  npu.dma %s1 to %b {core = 1 : i64} : memref<64xi8, "sram1">, memref<64xi8, "ddr">
  npu.signal {core = 1 : i64, queue = "dma_out", token = 1}
  // Core 0 waits for core 1's store.
  // CHECK: npu.wait {queue = "dma_in", token = 1}
  npu.wait {queue = "dma_in", token = 1}
  npu.dma %b to %s0 : memref<64xi8, "ddr">, memref<64xi8, "sram">
  npu.end
  %y = npu.read %b : memref<64xi8, "ddr"> to tensor<64xi8>
  func.return %y : tensor<64xi8>
}
