// RUN: irc-opt %s --target=%S/Inputs/npu-demo-fp16.toml -p 'partition{outline=false}' --verify-each-numerics --numerics-rtol=0 --numerics-atol=0 2>&1 | FileCheck %s

// `partition{outline=false}`, as irc-compile runs it: the ops stay in place, each
// marked irc.device (a host op also irc.reason), and every value that crosses is
// copied by a part.transfer right after its definition, which its readers on the
// other side read; the function's result is copied back to the host. The outputs
// stay bit for bit the same.

// CHECK:      remark: partition: target npu-demo-fp16, mode support: 2/3 ops on the NPU (66.7%), 100.0% of MACs, 2 NPU subgraphs, 2 transitions, 1 fallback op
// CHECK:      func.func @main(%x: tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32> {
// CHECK-NEXT:   %x_npu = part.transfer %x {to = "npu"} : tensor<1x8x8x16xf32>
// CHECK-NEXT:   %w = nn.constant
// CHECK-NEXT:   %a = nn.conv %x_npu, %w {layout = "nhwc", pads = [1, 1, 1, 1], irc.device = "npu"}
// CHECK-NEXT:   %a_cpu = part.transfer %a {to = "cpu"} : tensor<1x8x8x16xf32>
// CHECK-NEXT:   %n = nn.lrn %a_cpu {layout = "nhwc", size = 3, irc.device = "cpu", irc.reason = "nn.lrn: not in target npu-demo-fp16's support table; nn.lrn: irc has no NPU lowering of it"}
// CHECK-NEXT:   %n_npu = part.transfer %n {to = "npu"} : tensor<1x8x8x16xf32>
// CHECK-NEXT:   %b = nn.conv %n_npu, %w {layout = "nhwc", pads = [1, 1, 1, 1], irc.device = "npu"}
// CHECK-NEXT:   %b_cpu = part.transfer %b {to = "cpu"} : tensor<1x8x8x16xf32>
// CHECK-NEXT:   func.return %b_cpu : tensor<1x8x8x16xf32>
// CHECK-NOT:  func.call

func.func @main(%x: tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32> {
  %w = nn.constant dense<0.01> : tensor<16x3x3x16xf32>
  %a = nn.conv %x, %w {layout = "nhwc", pads = [1, 1, 1, 1]} : (tensor<1x8x8x16xf32>, tensor<16x3x3x16xf32>) -> tensor<1x8x8x16xf32>
  %n = nn.lrn %a {layout = "nhwc", size = 3} : tensor<1x8x8x16xf32>
  %b = nn.conv %n, %w {layout = "nhwc", pads = [1, 1, 1, 1]} : (tensor<1x8x8x16xf32>, tensor<16x3x3x16xf32>) -> tensor<1x8x8x16xf32>
  func.return %b : tensor<1x8x8x16xf32>
}
