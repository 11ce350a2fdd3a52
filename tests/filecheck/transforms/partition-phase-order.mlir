// RUN: irc-opt %s --target=%S/Inputs/npu-demo-fp16.toml -p 'partition{outline=false}' --verify-each-numerics --numerics-rtol=0 --numerics-atol=0 2>&1 | FileCheck %s

// `partition{outline=false}` puts the ops in the order of their phases: two parallel
// branches, each a conv and then an LRN the NPU does not take, written branch by
// branch, become both convs (one NPU phase), both LRNs (one CPU phase: one host call
// of the command stream, as the estimate counts it) and the add (NPU). In the
// written order the stream would run the LRNs as two host calls, four transitions.

// CHECK:      remark: partition: target npu-demo-fp16, mode support: 3/5 ops on the NPU (60.0%), 100.0% of MACs, 2 NPU subgraphs, 2 transitions, 2 fallback ops
// CHECK:      func.func @main(
// CHECK:        %a = nn.conv {{.*}}irc.device = "npu"
// CHECK-NOT:    nn.lrn
// CHECK:        %b = nn.conv {{.*}}irc.device = "npu"
// CHECK:        %n = nn.lrn {{.*}}irc.device = "cpu"
// CHECK-NOT:    nn.conv
// CHECK:        %m = nn.lrn {{.*}}irc.device = "cpu"
// CHECK-NOT:    nn.conv
// CHECK:        %y = nn.add {{.*}}irc.device = "npu"
// CHECK:        func.return

func.func @main(%x: tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32> {
  %w = nn.constant dense<0.01> : tensor<16x3x3x16xf32>
  %a = nn.conv %x, %w {layout = "nhwc", pads = [1, 1, 1, 1]} : (tensor<1x8x8x16xf32>, tensor<16x3x3x16xf32>) -> tensor<1x8x8x16xf32>
  %n = nn.lrn %a {layout = "nhwc", size = 3} : tensor<1x8x8x16xf32>
  %v = nn.constant dense<0.02> : tensor<16x3x3x16xf32>
  %b = nn.conv %x, %v {layout = "nhwc", pads = [1, 1, 1, 1]} : (tensor<1x8x8x16xf32>, tensor<16x3x3x16xf32>) -> tensor<1x8x8x16xf32>
  %m = nn.lrn %b {layout = "nhwc", size = 5} : tensor<1x8x8x16xf32>
  %y = nn.add %n, %m : tensor<1x8x8x16xf32>
  func.return %y : tensor<1x8x8x16xf32>
}
