// RUN: rm -rf %t && irc-compile %s -o %t --calibration-samples 2 --no-progress 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=MANIFEST --input-file=%t/manifest.json
// RUN: FileCheck %s --check-prefix=REPORT --input-file=%t/report.md
// RUN: irc-run %t --random-inputs | FileCheck %s --check-prefix=EXEC
// RUN: not irc-compile %s -o %t/manifest.json 2>&1 | FileCheck %s --check-prefix=FILE
// RUN: not irc-run %t --random-inputs --target=npu-demo 2>&1 | FileCheck %s --check-prefix=TARGET

// irc-compile on float nn IR: a 3x3 conv (16 -> 16 channels) and its relu, calibrated
// on 2 random samples (a warning says so), to a package and its reports.
// CHECK:      warning: calibrated on 2 random normal samples (seed 0)
// CHECK:      options      -O2, int8 (minmax observer)
// CHECK:      NPU          1 layer, 147,456 MACs (100.0%)
// CHECK-NEXT: CPU          2 ops, 0 MACs (0.0%): quant.qcast, quant.dcast
// CHECK:      time         106,440 cycles = 0.213 ms at 500 MHz
// CHECK:      wrote {{.*}}: program.bin, weights.bin, target.toml, manifest.json, report.md, layers.csv, trace.json

// MANIFEST:      "format": "irc-package",
// MANIFEST:      "inputs": [
// MANIFEST:          "dtype": "float32",
// MANIFEST-NEXT:     "name": "x",
// MANIFEST-NEXT:     "npu_quantization": {
// MANIFEST:          "storage": "i8",
// MANIFEST:      "options": {
// MANIFEST:        "opt_level": 2,
// MANIFEST-NEXT:   "quantize": "int8"
// MANIFEST:      "pipeline": "graph-opt{activations=relu,clip}, quantize int8, lower-to-qnn, builtin.module(plan-tiles{align-channels=true},plan-ddr,lower-to-tile,lower-to-npu{double-buffer=true})",
// MANIFEST:      "target": {
// MANIFEST-NEXT:   "file": "target.toml",
// MANIFEST-NEXT:   "name": "npu-demo"

// REPORT:      # conv on npu-demo
// REPORT:      ## Layers
// REPORT:      | layer | op | tile | MACs | cycles |

// EXEC:      opened the package in {{[0-9.]+}} ms (checksums, decoding, hazard checks, timing)
// EXEC-NEXT: 106440 cycles, 0.213 ms at 500 MHz on npu-demo
// EXEC:      y: float32[1, 8, 8, 16]

// FILE:   error: -o {{.*}}manifest.json is a file; a package is a directory
// TARGET: error: --target, --entry and --input-shape do not apply to a package

func.func @main(%x: tensor<1x8x8x16xf32> {irc.name = "x"}) -> (tensor<1x8x8x16xf32> {irc.name = "y"}) {
  %w = nn.constant dense<0.05> : tensor<16x3x3x16xf32>
  %b = nn.constant dense<0.1> : tensor<16xf32>
  %c = nn.conv %x, %w, %b {layout = "nhwc", pads = [1, 1, 1, 1]} : (tensor<1x8x8x16xf32>, tensor<16x3x3x16xf32>, tensor<16xf32>) -> tensor<1x8x8x16xf32>
  %r = nn.relu %c : tensor<1x8x8x16xf32>
  func.return %r : tensor<1x8x8x16xf32>
}
