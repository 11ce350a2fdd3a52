// RUN: rm -rf %t && irc-compile %s -o %t --calibration-samples 2 --partition support --no-progress 2>&1 | FileCheck %s
// RUN: rm -rf %t.cost && irc-compile %s -o %t.cost --calibration-samples 2 --no-progress 2>&1 | FileCheck %s --check-prefix=COST
// RUN: FileCheck %s --check-prefix=COST-REPORT --input-file=%t.cost/report.md
// RUN: FileCheck %s --check-prefix=MANIFEST --input-file=%t/manifest.json
// RUN: FileCheck %s --check-prefix=REPORT --input-file=%t/report.md
// RUN: irc-run %t --random-inputs | FileCheck %s --check-prefix=EXEC
// RUN: not irc-compile %s -o %t/manifest.json 2>&1 | FileCheck %s --check-prefix=FILE
// RUN: not irc-run %t --random-inputs --target=npu-demo 2>&1 | FileCheck %s --check-prefix=TARGET

// irc-compile on float nn IR: a 3x3 conv (16 -> 16 channels) and its relu, calibrated
// on 2 random samples (a warning says so), to a package and its reports; with
// --partition support the conv runs on the NPU, and so do the input's quantize and
// the output's dequantize (npu-demo's vector unit lists them).
// CHECK:      warning: quantize: calibrating on 2 random normal samples (seed 0)
// CHECK:      options      -O2, int8 (minmax observer)
// CHECK:      NPU          3 layers, 147,456 MACs (100.0%)
// CHECK-NEXT: CPU          0 ops, 0 MACs (0.0%)
// CHECK:      time         9,028 cycles = 0.018 ms at 500 MHz
// CHECK:      wrote {{.*}}: program.bin, weights.bin, target.toml, manifest.json, report.md, layers.csv, trace.json

// By default (--partition cost) the same: with nothing on the host there is no
// transition to save, so the cost model moves nothing.
// COST:      NPU          3 layers, 147,456 MACs (100.0%)
// COST-NEXT: CPU          0 ops, 0 MACs (0.0%)
// COST:      time         9,028 cycles
// COST-REPORT: ## Partition
// COST-REPORT: Nothing runs on the host CPU.

// MANIFEST:      "format": "irc-package",
// MANIFEST:      "inputs": [
// MANIFEST:          "dtype": "float32",
// MANIFEST-NEXT:     "name": "x",
// MANIFEST-NEXT:     "quantization": null,
// MANIFEST:      "options": {
// MANIFEST:        "opt_level": 2,
// MANIFEST-NEXT:   "partition": "support",
// MANIFEST-NEXT:   "predict_memories": true,
// MANIFEST-NEXT:   "prequantized": false,
// MANIFEST-NEXT:   "quantize": "int8"
// MANIFEST:      "pipeline": "builtin.module(graph-opt{layout=nhwc activations=relu,clip},prepare-quantize,quantize{calibration-samples=2 observer=minmax percentile=99.99 seed=0 activations=int8 weights=per-channel bias-correction=true},lower-to-qnn{target=npu-demo},partition{mode=support target=npu-demo outline=false},plan-tiles{target=npu-demo align-channels=true cascades=true cascade-stripe=0 split-cores=false predict-memories=true layer-cores=0},plan-ddr{target=npu-demo zero-copy=true in-place=true keep-inputs=false},lower-to-tile{target=npu-demo},lower-to-npu{target=npu-demo double-buffer=true})",
// MANIFEST:      "target": {
// MANIFEST-NEXT:   "file": "target.toml",
// MANIFEST-NEXT:   "name": "npu-demo"

// REPORT:      # conv on npu-demo
// REPORT:      ## Layers
// REPORT:      | layer | op | tile | MACs | cycles |

// EXEC:      opened the package in {{[0-9.]+}} ms (checksums, decoding, hazard checks, timing)
// EXEC-NEXT: 9028 cycles, 0.018 ms at 500 MHz on npu-demo
// EXEC:      y: float32[1, 8, 8, 16]

// FILE:   error: -o {{.*}}manifest.json is a file; it must name a directory
// TARGET: error: --target, --entry and --input-shape do not apply to a package

func.func @main(%x: tensor<1x8x8x16xf32> {irc.name = "x"}) -> (tensor<1x8x8x16xf32> {irc.name = "y"}) {
  %w = nn.constant dense<0.05> : tensor<16x3x3x16xf32>
  %b = nn.constant dense<0.1> : tensor<16xf32>
  %c = nn.conv %x, %w, %b {layout = "nhwc", pads = [1, 1, 1, 1]} : (tensor<1x8x8x16xf32>, tensor<16x3x3x16xf32>, tensor<16xf32>) -> tensor<1x8x8x16xf32>
  %r = nn.relu %c : tensor<1x8x8x16xf32>
  func.return %r : tensor<1x8x8x16xf32>
}
