// RUN: irc-opt %s --target=%S/Inputs/npu-demo-fp16.toml -p 'partition{report=%t.json}' 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: irc-opt %s -p 'partition{target=%S/Inputs/npu-demo-fp16.toml mode=cost report=%t.txt}' 2>&1 >/dev/null | FileCheck %s --check-prefix=COST-REMARK
// RUN: FileCheck %s --check-prefix=TEXT < %t.txt

// The report of `partition`: the remark (the summary at the function, a note at each
// fallback op), the JSON file (`report=*.json`) and the text file (any other name).
// The figures, by hand (npu-demo; one byte per element):
// - MACs: %a 8*8*16*16*9 = 147,456 (NPU), %s 2*2*16*16*9 = 9,216 (CPU: stride 3).
// - copies: %x in (1,024 bytes), %r out (64), %a and %s at the two transitions
//   (1,024 + 64): 2,176 bytes. The runtime places inputs and reads outputs outside
//   the stream, so the estimate charges the transition copies only: 1,088 bytes,
//   0.544 us at 2 GB/s; with 2 x 50 us of transitions, 100.544 us.
// - NPU: %a takes max(147,456 / 256 / 500 MHz + 1,024 / 16 / 500 MHz, 100 cycles +
//   2,304 bytes of weights at 1 GB/s) = max(1.280, 2.504) us; %r 64 / 16 / 500 MHz =
//   0.008 us: 2.512 us.
// - CPU: %n 1,024 / 0.5 G/s = 2.048 us; %s 9,216 / 2 G/s + 64 / 0.5 G/s = 4.736 us.
// In cost mode nothing moves: the final relu on the CPU would join the host call of
// %n and %s, whose two transitions stay, and the host computes it 0.120 us slower.

// REMARK:      partition-report.mlir:[[# @LINE + 98]]:1: remark: partition: target npu-demo-fp16, mode support: 2/4 ops on the NPU (50.0%), 94.1% of MACs, 2 NPU subgraphs, 2 transitions, 2 fallback ops
// REMARK-NEXT: partition-report.mlir:[[# @LINE + 100]]:3: note: on the CPU: nn.lrn: not in target npu-demo-fp16's support table
// REMARK-NEXT: partition-report.mlir:[[# @LINE + 100]]:3: note: on the CPU: nn.conv stride 3x3: target npu-demo-fp16 supports strides 1, 2
// REMARK-NOT:  {{.}}

// COST-REMARK:      remark: partition: target npu-demo-fp16, mode cost: 2/4 ops on the NPU (50.0%), 94.1% of MACs, 2 NPU subgraphs, 2 transitions, 2 fallback ops
// COST-REMARK-NEXT: note: on the CPU: nn.lrn: not in target npu-demo-fp16's support table
// COST-REMARK-NEXT: note: on the CPU: nn.conv stride 3x3: target npu-demo-fp16 supports strides 1, 2
// COST-REMARK-NOT:  moved to the CPU

// JSON:      {
// JSON-NEXT:   "schema": "irc-partition-report/1",
// JSON-NEXT:   "target": "npu-demo-fp16",
// JSON-NEXT:   "mode": "support",
// JSON-NEXT:   "ops": {
// JSON-NEXT:     "total": 4,
// JSON-NEXT:     "npu": 2,
// JSON-NEXT:     "cpu": 2,
// JSON-NEXT:     "coverage": 0.5
// JSON-NEXT:   },
// JSON-NEXT:   "macs": {
// JSON-NEXT:     "total": 156672,
// JSON-NEXT:     "npu": 147456,
// JSON-NEXT:     "coverage": 0.9412
// JSON-NEXT:   },
// JSON-NEXT:   "subgraphs": [
// JSON-NEXT:     {
// JSON-NEXT:       "name": "main_npu0",
// JSON-NEXT:       "function": "main",
// JSON-NEXT:       "ops": 1,
// JSON-NEXT:       "macs": 147456
// JSON-NEXT:     },
// JSON-NEXT:     {
// JSON-NEXT:       "name": "main_npu1",
// JSON-NEXT:       "function": "main",
// JSON-NEXT:       "ops": 1,
// JSON-NEXT:       "macs": 0
// JSON-NEXT:     }
// JSON-NEXT:   ],
// JSON-NEXT:   "transitions": 2,
// JSON-NEXT:   "transfers": {
// JSON-NEXT:     "input": {
// JSON-NEXT:       "count": 1,
// JSON-NEXT:       "bytes": 1024
// JSON-NEXT:     },
// JSON-NEXT:     "output": {
// JSON-NEXT:       "count": 1,
// JSON-NEXT:       "bytes": 64
// JSON-NEXT:     },
// JSON-NEXT:     "transition": {
// JSON-NEXT:       "count": 2,
// JSON-NEXT:       "bytes": 1088
// JSON-NEXT:     },
// JSON-NEXT:     "bytes": 2176
// JSON-NEXT:   },
// JSON-NEXT:   "estimated_us": {
// JSON-NEXT:     "npu": 2.512,
// JSON-NEXT:     "cpu": 6.784,
// JSON-NEXT:     "transfers": 100.544,
// JSON-NEXT:     "total": 109.84
// JSON-NEXT:   },
// JSON-NEXT:   "fallbacks": [
// JSON-NEXT:     {
// JSON-NEXT:       "function": "main",
// JSON-NEXT:       "op": "nn.lrn",
// JSON-NEXT:       "node": null,
// JSON-NEXT:       "location": "{{.*}}partition-report.mlir:[[# @LINE + 35]]:3",
// JSON-NEXT:       "reasons": [
// JSON-NEXT:         "nn.lrn: not in target npu-demo-fp16's support table",
// JSON-NEXT:         "nn.lrn: irc has no NPU lowering of it"
// JSON-NEXT:       ]
// JSON-NEXT:     },
// JSON-NEXT:     {
// JSON-NEXT:       "function": "main",
// JSON-NEXT:       "op": "nn.conv",
// JSON-NEXT:       "node": null,
// JSON-NEXT:       "location": "{{.*}}partition-report.mlir:[[# @LINE + 26]]:3",
// JSON-NEXT:       "reasons": [
// JSON-NEXT:         "nn.conv stride 3x3: target npu-demo-fp16 supports strides 1, 2"
// JSON-NEXT:       ]
// JSON-NEXT:     }
// JSON-NEXT:   ]
// JSON-NEXT: }

// TEXT:      Partition report: target npu-demo-fp16, mode cost
// TEXT-NEXT:   NPU coverage: 2 of 4 ops (50.0%), 147,456 of 156,672 MACs (94.1%)
// TEXT-NEXT:   NPU subgraphs: 2
// TEXT-NEXT:   transitions: 2
// TEXT-NEXT:   transfers: input 1 (1,024 bytes), output 1 (64 bytes), at transitions 2 (1,088 bytes); 2,176 bytes in all
// TEXT-NEXT:   estimated time: NPU 2.512 us, CPU 6.784 us, transfers 100.544 us, total 109.840 us
// TEXT-NEXT:   @main_npu0 (from @main): 1 op, 147,456 MACs
// TEXT-NEXT:   @main_npu1 (from @main): 1 op, 0 MACs
// TEXT-NEXT:   fallback ops: 2
// TEXT-NEXT:     nn.lrn at {{.*}}partition-report.mlir:[[# @LINE + 8]]:3 in @main
// TEXT-NEXT:       - nn.lrn: not in target npu-demo-fp16's support table
// TEXT-NEXT:       - nn.lrn: irc has no NPU lowering of it
// TEXT-NEXT:     nn.conv at {{.*}}partition-report.mlir:[[# @LINE + 6]]:3 in @main
// TEXT-NEXT:       - nn.conv stride 3x3: target npu-demo-fp16 supports strides 1, 2
func.func @main(%x: tensor<1x8x8x16xf32>) -> tensor<1x2x2x16xf32> {
  %w = nn.constant dense<0.1> : tensor<16x3x3x16xf32>
  %a = nn.conv %x, %w {layout = "nhwc", pads = [1, 1, 1, 1]} : (tensor<1x8x8x16xf32>, tensor<16x3x3x16xf32>) -> tensor<1x8x8x16xf32>
  %n = nn.lrn %a {layout = "nhwc", size = 3} : tensor<1x8x8x16xf32>
  %s = nn.conv %n, %w {layout = "nhwc", strides = [3, 3]} : (tensor<1x8x8x16xf32>, tensor<16x3x3x16xf32>) -> tensor<1x2x2x16xf32>
  %r = nn.relu %s : tensor<1x2x2x16xf32>
  func.return %r : tensor<1x2x2x16xf32>
}
