// RUN: irc-opt %s --split-input-file --target=%S/Inputs/npu-demo-fp16.toml -p partition --verify-each-numerics --numerics-rtol=0 --numerics-atol=0 | FileCheck %s
// RUN: irc-opt %s --split-input-file --target=%S/Inputs/npu-demo-fp16.toml -p partition --verify-diagnostics

// `partition` (support mode, the default) puts every nn op the target supports on the
// NPU, outlines the NPU ops of each function into convex subgraphs
// `func.func private @<parent>_npu<N> attributes {irc.device = "npu"}` called from the
// parent, and copies every value crossing between host and NPU code with
// `part.transfer`. The outputs stay bit for bit the same (--verify-each-numerics with
// zero tolerance). The summary remark sits at the function, with a note at each
// fallback op.

// Everything supported: one subgraph, no transition; the weights move into the NPU
// function with their users; the input and the output are copied.
// CHECK-LABEL: func.func @all_supported(%x: tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32> {
// CHECK-NEXT:    %x_npu = part.transfer %x {to = "npu"} : tensor<1x8x8x16xf32>
// CHECK-NEXT:    %p_npu = func.call @all_supported_npu0(%x_npu) : (tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
// CHECK-NEXT:    %p = part.transfer %p_npu {to = "cpu"} : tensor<1x8x8x16xf32>
// CHECK-NEXT:    func.return %p : tensor<1x8x8x16xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @all_supported_npu0(%x: tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32> attributes {irc.device = "npu"} {
// CHECK-NEXT:    %w = nn.constant dense<1.000000e-01> : tensor<16x3x3x16xf32>
// CHECK-NEXT:    %b = nn.constant dense<5.000000e-01> : tensor<16xf32>
// CHECK-NEXT:    %c = nn.conv %x, %w, %b {activation = #nn.activation<relu>, layout = "nhwc", pads = [1, 1, 1, 1]}
// CHECK-NEXT:    %p = nn.max_pool %c {kernel_shape = [3, 3], layout = "nhwc", pads = [1, 1, 1, 1]} : tensor<1x8x8x16xf32>
// CHECK-NEXT:    func.return %p : tensor<1x8x8x16xf32>
// CHECK-NEXT:  }
// expected-remark @+1 {{partition: target npu-demo-fp16, mode support: 2/2 ops on the NPU (100.0%), 100.0% of MACs, 1 NPU subgraph, 0 transitions, 0 fallback ops}}
func.func @all_supported(%x: tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32> {
  %w = nn.constant dense<0.1> : tensor<16x3x3x16xf32>
  %b = nn.constant dense<0.5> : tensor<16xf32>
  %c = nn.conv %x, %w, %b {activation = #nn.activation<relu>, layout = "nhwc", pads = [1, 1, 1, 1]} : (tensor<1x8x8x16xf32>, tensor<16x3x3x16xf32>, tensor<16xf32>) -> tensor<1x8x8x16xf32>
  %p = nn.max_pool %c {kernel_shape = [3, 3], layout = "nhwc", pads = [1, 1, 1, 1]} : tensor<1x8x8x16xf32>
  func.return %p : tensor<1x8x8x16xf32>
}

// -----

// One unsupported op in the middle: two NPU subgraphs and exactly two transitions
// around it (NPU -> CPU before nn.lrn, CPU -> NPU after it). A constant read by both
// subgraphs is duplicated into each.
// CHECK-LABEL: func.func @one_unsupported_in_the_middle(%x: tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32> {
// CHECK-NEXT:    %x_npu = part.transfer %x {to = "npu"} : tensor<1x8x8x16xf32>
// CHECK-NEXT:    %a_npu = func.call @one_unsupported_in_the_middle_npu0(%x_npu) : (tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
// CHECK-NEXT:    %a = part.transfer %a_npu {to = "cpu"} : tensor<1x8x8x16xf32>
// CHECK-NEXT:    %n = nn.lrn %a {layout = "nhwc", size = 3} : tensor<1x8x8x16xf32>
// CHECK-NEXT:    %n_npu = part.transfer %n {to = "npu"} : tensor<1x8x8x16xf32>
// CHECK-NEXT:    %b_npu = func.call @one_unsupported_in_the_middle_npu1(%n_npu) : (tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
// CHECK-NEXT:    %b = part.transfer %b_npu {to = "cpu"} : tensor<1x8x8x16xf32>
// CHECK-NEXT:    func.return %b : tensor<1x8x8x16xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @one_unsupported_in_the_middle_npu0(%x: tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32> attributes {irc.device = "npu"} {
// CHECK-NEXT:    %w = nn.constant
// CHECK-NEXT:    %a = nn.conv %x, %w
// CHECK-NEXT:    func.return %a
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @one_unsupported_in_the_middle_npu1(%n: tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32> attributes {irc.device = "npu"} {
// CHECK-NEXT:    %w = nn.constant
// CHECK-NEXT:    %b = nn.conv %n, %w
// CHECK-NEXT:    func.return %b
// CHECK-NEXT:  }
// expected-remark @+1 {{2/3 ops on the NPU (66.7%), 100.0% of MACs, 2 NPU subgraphs, 2 transitions, 1 fallback op}}
func.func @one_unsupported_in_the_middle(%x: tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32> {
  %w = nn.constant dense<0.1> : tensor<16x3x3x16xf32>
  %a = nn.conv %x, %w {layout = "nhwc", pads = [1, 1, 1, 1]} : (tensor<1x8x8x16xf32>, tensor<16x3x3x16xf32>) -> tensor<1x8x8x16xf32>
  // expected-note @+1 {{on the CPU: nn.lrn: not in target npu-demo-fp16's support table}}
  %n = nn.lrn %a {layout = "nhwc", size = 3} : tensor<1x8x8x16xf32>
  %b = nn.conv %n, %w {layout = "nhwc", pads = [1, 1, 1, 1]} : (tensor<1x8x8x16xf32>, tensor<16x3x3x16xf32>) -> tensor<1x8x8x16xf32>
  func.return %b : tensor<1x8x8x16xf32>
}

// -----

// A diamond with a CPU op on one branch: %a, %c and %d cannot form one subgraph
// (the path %a -> %n -> %d would leave it through the CPU and come back, a cycle
// once outlined). %a and %c run first; %d after the nn.lrn. %c goes from one NPU
// function to the next without a transfer: it stays in NPU memory.
// CHECK-LABEL: func.func @diamond(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
// CHECK-NEXT:    %x_npu = part.transfer %x {to = "npu"} : tensor<1x4x8x8xf32>
// CHECK-NEXT:    %a_npu, %c_npu = func.call @diamond_npu0(%x_npu) : (tensor<1x4x8x8xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>)
// CHECK-NEXT:    %a = part.transfer %a_npu {to = "cpu"} : tensor<1x4x8x8xf32>
// CHECK-NEXT:    %n = nn.lrn %a {size = 3} : tensor<1x4x8x8xf32>
// CHECK-NEXT:    %n_npu = part.transfer %n {to = "npu"} : tensor<1x4x8x8xf32>
// CHECK-NEXT:    %d_npu = func.call @diamond_npu1(%n_npu, %c_npu) : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT:    %d = part.transfer %d_npu {to = "cpu"} : tensor<1x4x8x8xf32>
// CHECK-NEXT:    func.return %d : tensor<1x4x8x8xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @diamond_npu0(%x: tensor<1x4x8x8xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) attributes {irc.device = "npu"} {
// CHECK-NEXT:    %a = nn.relu %x : tensor<1x4x8x8xf32>
// CHECK-NEXT:    %c = nn.clip %a {max = 6.0, min = 0.0} : tensor<1x4x8x8xf32>
// CHECK-NEXT:    func.return %a, %c : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @diamond_npu1(%n: tensor<1x4x8x8xf32>, %c: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> attributes {irc.device = "npu"} {
// CHECK-NEXT:    %d = nn.add %n, %c : tensor<1x4x8x8xf32>
// CHECK-NEXT:    func.return %d : tensor<1x4x8x8xf32>
// CHECK-NEXT:  }
// expected-remark @+1 {{3/4 ops on the NPU (75.0%), no MACs, 2 NPU subgraphs, 2 transitions, 1 fallback op}}
func.func @diamond(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %a = nn.relu %x : tensor<1x4x8x8xf32>
  // expected-note @+1 {{on the CPU: nn.lrn: not in target npu-demo-fp16's support table}}
  %n = nn.lrn %a {size = 3} : tensor<1x4x8x8xf32>
  %c = nn.clip %a {min = 0.0, max = 6.0} : tensor<1x4x8x8xf32>
  %d = nn.add %n, %c : tensor<1x4x8x8xf32>
  func.return %d : tensor<1x4x8x8xf32>
}

// -----

// Independent branches that can run in the same phase share one subgraph (one call,
// two results), even though they are not connected.
// CHECK-LABEL: func.func @parallel_branches(%x: tensor<1x4x8x8xf32>, %y: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
// CHECK-NEXT:    %x_npu = part.transfer %x {to = "npu"}
// CHECK-NEXT:    %y_npu = part.transfer %y {to = "npu"}
// CHECK-NEXT:    %a_npu, %b_npu = func.call @parallel_branches_npu0(%x_npu, %y_npu) : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>)
// CHECK-NEXT:    %a = part.transfer %a_npu {to = "cpu"}
// CHECK-NEXT:    %b = part.transfer %b_npu {to = "cpu"}
// CHECK-NEXT:    %n = nn.lrn %a {size = 3}
// CHECK-NEXT:    %m = nn.lrn %b {size = 3}
// CHECK-NEXT:    %d = nn.div %n, %m
// CHECK-NEXT:    func.return %d
// CHECK:       func.func private @parallel_branches_npu0(%x: tensor<1x4x8x8xf32>, %y: tensor<1x4x8x8xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) attributes {irc.device = "npu"} {
// CHECK-NEXT:    %a = nn.relu %x
// CHECK-NEXT:    %b = nn.clip %y {max = 6.0, min = 0.0}
// CHECK-NEXT:    func.return %a, %b
// expected-remark @+1 {{2/5 ops on the NPU (40.0%), no MACs, 1 NPU subgraph, 2 transitions, 3 fallback ops}}
func.func @parallel_branches(%x: tensor<1x4x8x8xf32>, %y: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %a = nn.relu %x : tensor<1x4x8x8xf32>
  // expected-note @+1 {{on the CPU: nn.lrn: not in target npu-demo-fp16's support table}}
  %n = nn.lrn %a {size = 3} : tensor<1x4x8x8xf32>
  %b = nn.clip %y {min = 0.0, max = 6.0} : tensor<1x4x8x8xf32>
  // expected-note @+1 {{on the CPU: nn.lrn: not in target npu-demo-fp16's support table}}
  %m = nn.lrn %b {size = 3} : tensor<1x4x8x8xf32>
  // expected-note @+1 {{on the CPU: nn.div: not in target npu-demo-fp16's support table}}
  %d = nn.div %n, %m : tensor<1x4x8x8xf32>
  func.return %d : tensor<1x4x8x8xf32>
}

// -----

// Fallback ops first and last: the CPU runs first, so the copy to the NPU is a
// transition, not an input transfer. %r is both returned and read by the CPU: one
// copy serves both. Two CPU phases are two host calls: four transitions.
// CHECK-LABEL: func.func @fallbacks_at_the_ends(%x: tensor<1x4x8x8xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) {
// CHECK-NEXT:    %n = nn.lrn %x {size = 3} : tensor<1x4x8x8xf32>
// CHECK-NEXT:    %n_npu = part.transfer %n {to = "npu"} : tensor<1x4x8x8xf32>
// CHECK-NEXT:    %r_npu = func.call @fallbacks_at_the_ends_npu0(%n_npu) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT:    %r = part.transfer %r_npu {to = "cpu"} : tensor<1x4x8x8xf32>
// CHECK-NEXT:    %m = nn.lrn %r {size = 3} : tensor<1x4x8x8xf32>
// CHECK-NEXT:    func.return %r, %m : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @fallbacks_at_the_ends_npu0(%n: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> attributes {irc.device = "npu"} {
// CHECK-NEXT:    %r = nn.relu %n : tensor<1x4x8x8xf32>
// CHECK-NEXT:    func.return %r : tensor<1x4x8x8xf32>
// CHECK-NEXT:  }
// expected-remark @+1 {{1/3 ops on the NPU (33.3%), no MACs, 1 NPU subgraph, 4 transitions, 2 fallback ops}}
func.func @fallbacks_at_the_ends(%x: tensor<1x4x8x8xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) {
  // expected-note @+1 {{on the CPU: nn.lrn}}
  %n = nn.lrn %x {size = 3} : tensor<1x4x8x8xf32>
  %r = nn.relu %n : tensor<1x4x8x8xf32>
  // expected-note @+1 {{on the CPU: nn.lrn}}
  %m = nn.lrn %r {size = 3} : tensor<1x4x8x8xf32>
  func.return %r, %m : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>
}

// -----

// A constant read on both sides is duplicated, never transferred: the NPU function
// has its own copy, and the parent keeps the one the CPU op reads.
// CHECK-LABEL: func.func @constant_on_both_sides(%x: tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> {
// CHECK-NEXT:    %x_npu = part.transfer %x {to = "npu"}
// CHECK-NEXT:    %a_npu = func.call @constant_on_both_sides_npu0(%x_npu)
// CHECK-NEXT:    %a = part.transfer %a_npu {to = "cpu"}
// CHECK-NEXT:    %c = nn.constant dense<2.000000e+00> : tensor<1x4x2x2xf32>
// CHECK-NEXT:    %d = nn.div %a, %c : tensor<1x4x2x2xf32>
// CHECK-NEXT:    func.return %d
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @constant_on_both_sides_npu0(%x: tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> attributes {irc.device = "npu"} {
// CHECK-NEXT:    %c = nn.constant dense<2.000000e+00> : tensor<1x4x2x2xf32>
// CHECK-NEXT:    %a = nn.add %x, %c : tensor<1x4x2x2xf32>
// CHECK-NEXT:    func.return %a
// expected-remark @+1 {{1/2 ops on the NPU (50.0%), no MACs, 1 NPU subgraph, 2 transitions, 1 fallback op}}
func.func @constant_on_both_sides(%x: tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> {
  %c = nn.constant dense<2.0> : tensor<1x4x2x2xf32>
  %a = nn.add %x, %c : tensor<1x4x2x2xf32>
  // expected-note @+1 {{on the CPU: nn.div: not in target npu-demo-fp16's support table}}
  %d = nn.div %a, %c : tensor<1x4x2x2xf32>
  func.return %d : tensor<1x4x2x2xf32>
}

// -----

// Nothing the NPU runs: the function is left as it was.
// CHECK-LABEL: func.func @nothing_supported(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
// CHECK-NEXT:    %c = nn.constant dense<2.000000e+00> : tensor<1x4x8x8xf32>
// CHECK-NEXT:    %n = nn.lrn %x {size = 3} : tensor<1x4x8x8xf32>
// CHECK-NEXT:    %d = nn.div %n, %c : tensor<1x4x8x8xf32>
// CHECK-NEXT:    func.return %d : tensor<1x4x8x8xf32>
// CHECK-NEXT:  }
// CHECK-NEXT: }
// expected-remark @+1 {{0/2 ops on the NPU (0.0%), no MACs, 0 NPU subgraphs, 2 transitions, 2 fallback ops}}
func.func @nothing_supported(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %c = nn.constant dense<2.0> : tensor<1x4x8x8xf32>
  // expected-note @+1 {{on the CPU: nn.lrn}}
  %n = nn.lrn %x {size = 3} : tensor<1x4x8x8xf32>
  // expected-note @+1 {{on the CPU: nn.div}}
  %d = nn.div %n, %c : tensor<1x4x8x8xf32>
  func.return %d : tensor<1x4x8x8xf32>
}

// -----

// Every function is partitioned; names already in the module are skipped
// (@main_npu0 exists, so main's subgraph is @main_npu1). A call to another function
// is host code: it splits @caller's NPU ops into two subgraphs (irc runs no call on
// the NPU). The remark sits at the first function with nn ops.
// CHECK-LABEL: func.func @main_npu0() {
// CHECK-LABEL: func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %x_npu = part.transfer %x {to = "npu"} : tensor<4xf32>
// CHECK-NEXT:    %a_npu = func.call @main_npu1(%x_npu) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:       func.func private @main_npu1(%x: tensor<4xf32>) -> tensor<4xf32> attributes {irc.device = "npu"} {
// CHECK-LABEL: func.func @caller(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %x_npu = part.transfer %x {to = "npu"} : tensor<4xf32>
// CHECK-NEXT:    %a_npu = func.call @caller_npu0(%x_npu) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %a = part.transfer %a_npu {to = "cpu"} : tensor<4xf32>
// CHECK-NEXT:    %b = func.call @main(%a) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %b_npu = part.transfer %b {to = "npu"} : tensor<4xf32>
// CHECK-NEXT:    %c_npu = func.call @caller_npu1(%b_npu) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %c = part.transfer %c_npu {to = "cpu"} : tensor<4xf32>
// CHECK-NEXT:    func.return %c : tensor<4xf32>
// CHECK:       func.func private @caller_npu0(%x: tensor<4xf32>) -> tensor<4xf32> attributes {irc.device = "npu"} {
// CHECK-NEXT:    %a = nn.relu %x
// CHECK:       func.func private @caller_npu1(%b: tensor<4xf32>) -> tensor<4xf32> attributes {irc.device = "npu"} {
// CHECK-NEXT:    %c = nn.relu %b
func.func @main_npu0() {
  func.return
}
// expected-remark @+1 {{3/4 ops on the NPU (75.0%), no MACs, 3 NPU subgraphs, 2 transitions, 1 fallback op}}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = nn.relu %x : tensor<4xf32>
  func.return %a : tensor<4xf32>
}
func.func @caller(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = nn.relu %x : tensor<4xf32>
  // expected-note @+1 {{on the CPU: func.call: irc has no NPU lowering of it}}
  %b = func.call @main(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %c = nn.relu %b : tensor<4xf32>
  func.return %c : tensor<4xf32>
}
