// RUN: not irc-opt %s --split-input-file -p partition 2>&1 | FileCheck %s --check-prefix=NO-TARGET
// RUN: not irc-opt %s --split-input-file -p 'partition{target=npu-dem}' 2>&1 | FileCheck %s --check-prefix=UNKNOWN-TARGET
// RUN: not irc-opt %s --split-input-file -p 'partition{target=%s}' 2>&1 | FileCheck %s --check-prefix=NOT-A-TARGET
// RUN: not irc-opt %s --split-input-file -p 'partition{target=npu-demo mode=fast}' 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: not irc-opt %s --split-input-file -p 'partition{targets=npu-demo}' 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not irc-opt %s --split-input-file -p 'partition{target=npu-demo report=%s/report.json}' 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: irc-opt %s --split-input-file -p 'partition{target=%S/Inputs/npu-demo-fp16.toml}' --verify-diagnostics

// Errors of `partition`: options, targets and report paths are reported as
// diagnostics (exit status 1, no traceback); IR that was partitioned before is
// refused at the op that shows it.

// NO-TARGET:      <pass-pipeline>: error: pass 'partition' needs a target
// NO-TARGET-NEXT:   hint: irc-opt --target=NAME|FILE (presets: {{.*}}npu-demo{{.*}}), or the pass option partition{target=NAME|FILE}

// UNKNOWN-TARGET:      error: unknown target 'npu-dem'
// UNKNOWN-TARGET-NEXT:   hint: did you mean 'npu-demo'?

// A file that is not a target (this one) is reported in the file.
// NOT-A-TARGET: partition-errors.mlir:{{[0-9]+}}:{{[0-9]+}}: error: invalid TOML

// MODE:      <pass-pipeline>:1:32: error: invalid value for option 'mode' of 'partition': expected one of support, cost, got 'fast'
// MODE-NEXT:   hint: 'mode' takes a value of type <support|cost>

// OPTION:      <pass-pipeline>:1:11: error: 'partition' has no option 'targets'
// OPTION-NEXT:   hint: options of 'partition': mode, target, report

// REPORT:      partition-errors.mlir/report.json: error: cannot write the partition report '{{.*}}partition-errors.mlir/report.json':
// REPORT-NEXT:   hint: give partition{report=PATH} a path in a writable directory

// expected-remark @+1 {{partition: target npu-demo-fp16, mode support: 1/1 ops on the NPU}}
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = nn.relu %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

func.func @already_partitioned(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{@already_partitioned is already partitioned (it has 'part.transfer' ops)}}
  %x_npu = part.transfer %x {to = "npu"} : tensor<4xf32>
  %r_npu = func.call @already_partitioned_npu0(%x_npu) : (tensor<4xf32>) -> tensor<4xf32>
  %r = part.transfer %r_npu {to = "cpu"} : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func private @already_partitioned_npu0(%x: tensor<4xf32>) -> tensor<4xf32> attributes {irc.device = "npu"} {
  %r = nn.relu %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// A call to an NPU function is enough to tell.
func.func @calls_an_npu_function(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{@calls_an_npu_function is already partitioned (it has 'func.call' ops)}}
  %r = func.call @npu(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func private @npu(%x: tensor<4xf32>) -> tensor<4xf32> attributes {irc.device = "npu"} {
  %r = nn.relu %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
