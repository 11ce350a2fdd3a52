// RUN: irc-run %s --random-inputs --target=npu-demo --layers --trace %t.json | FileCheck %s
// RUN: FileCheck %s --check-prefix=TRACE --input-file=%t.json
// RUN: not irc-run %s --random-inputs 2>&1 | FileCheck %s --check-prefix=NOTARGET
// RUN: not irc-run %s --random-inputs --target=%S/../../transforms/Inputs/tiling-small-sram.toml 2>&1 | FileCheck %s --check-prefix=SMALL
// RUN: not irc-run %s --random-inputs --target=npu-demo --trace %t.json --entry=nope 2>&1 | FileCheck %s --check-prefix=ENTRY

// irc-run on a command stream: a 3x3 conv of a 4x4x8 map, its loads, the conv and
// the store on npu-demo (the spans are counted by hand in tests/test_simulator.py).
// CHECK:      loaded the command stream in {{[0-9.]+}} ms (hazard checks, timing)
// CHECK-NEXT: 1024 cycles, 0.002 ms at 500 MHz on npu-demo; MAC utilisation 3.5%
// CHECK-NEXT: busy: dma_in 684 (67%), dma_out 164 (16%), mac 176 (17%), vector 0 (0%), host 0 (0%)
// CHECK-NEXT: ddr: 768 bytes read, 128 written; SRAM peak 1728 bytes; 5 commands
// CHECK-NEXT: layer start cycles mac vector dma_in dma_out host MAC util DDR read written SRAM
// The commands are named by their lines in this file (no ONNX names here).
// CHECK-NEXT: command-stream.mlir:{{[0-9]+}} 0 164 0 0 164
// CHECK:      wrote the trace to
// CHECK:      output_0: int8[1, 4, 4, 8]

// One thread per engine, a complete event per command, times in microseconds.
// TRACE: "traceEvents":[{"name":"process_name","ph":"M","pid":0,"args":{"name":"npu-demo"}},{"name":"thread_name","ph":"M","pid":0,"tid":0,"args":{"name":"dma_in"}}
// TRACE-SAME: {"name":"conv","cat":"mac","ph":"X","pid":0,"tid":2,"ts":1.368,"dur":0.352

// NOTARGET: error: the command stream names no target
// NOTARGET-NEXT: hint: give --target NAME|FILE
// SMALL: error: the program needs 524288 bytes of SRAM; small-sram has 2048
// ENTRY: error: the module has no function @nope

func.func @main(%x: tensor<1x4x4x8xi8>) -> tensor<1x4x4x8xi8> attributes {npu.ddr_bytes = 1024 : i64, npu.weights_bytes = 576 : i64, npu.sram_bytes = 524288 : i64, npu.sram_alignment = 64 : i64} {
  %w = nn.constant dense<1> : tensor<8x3x3x8xi8>
  %wd = npu.view ddr[0] : memref<8x3x3x8xi8, "ddr">
  npu.place %w into %wd : tensor<8x3x3x8xi8>, memref<8x3x3x8xi8, "ddr">
  %xd = npu.view ddr[576] : memref<1x4x4x8xi8, "ddr">
  npu.place %x into %xd : tensor<1x4x4x8xi8>, memref<1x4x4x8xi8, "ddr">
  %yd = npu.view ddr[704] : memref<1x4x4x8xi8, "ddr">
  %frame = npu.view sram[0] : memref<1x6x6x8xi8, "sram">
  %inner = npu.view sram[56] : memref<1x4x4x8xi8, strided<[288, 48, 8, 1]>, "sram">
  %ws = npu.view sram[320] : memref<8x3x3x8xi8, "sram">
  %acc = npu.view sram[1024] : memref<1x4x4x8xi32, "sram">
  %p = nn.constant dense<[[1073741824, 3]]> : tensor<1x2xi32>
  %pd = npu.view ddr[960] : memref<1x2xi32, "ddr">
  npu.place %p into %pd : tensor<1x2xi32>, memref<1x2xi32, "ddr">
  %ps = npu.view sram[1536] : memref<1x2xi32, "sram">
  %out = npu.view sram[1600] : memref<1x4x4x8xi8, "sram">
  npu.dma %xd to %inner fill %frame {pad = -3} : memref<1x4x4x8xi8, "ddr">, memref<1x4x4x8xi8, strided<[288, 48, 8, 1]>, "sram">, memref<1x6x6x8xi8, "sram">
  npu.dma %wd to %ws : memref<8x3x3x8xi8, "ddr">, memref<8x3x3x8xi8, "sram">
  npu.dma %pd to %ps : memref<1x2xi32, "ddr">, memref<1x2xi32, "sram">
  npu.signal {queue = "dma_in", token = 0}
  npu.wait {queue = "mac", token = 0}
  npu.conv %frame, %ws, %acc requantize %ps into %out {input_zero_point = -3, output_zero_point = 1} : memref<1x6x6x8xi8, "sram">, memref<8x3x3x8xi8, "sram">, memref<1x4x4x8xi32, "sram">, memref<1x2xi32, "sram">, memref<1x4x4x8xi8, "sram">
  npu.signal {queue = "mac", token = 1}
  npu.wait {queue = "dma_out", token = 1}
  npu.dma %out to %yd : memref<1x4x4x8xi8, "sram">, memref<1x4x4x8xi8, "ddr">
  npu.end
  %y = npu.read %yd : memref<1x4x4x8xi8, "ddr"> to tensor<1x4x4x8xi8>
  func.return %y : tensor<1x4x4x8xi8>
}
