// RUN: irc-opt %s --target=npu-demo -p plan-ddr | FileCheck %s --check-prefix=REUSE
// RUN: irc-opt %s --target=npu-demo -p 'plan-ddr{keep-inputs=true}' | FileCheck %s --check-prefix=KEEP

// `keep-inputs`: the function's inputs keep their buffers to its end, so that a
// streamed run can place the next frame's input while this frame's later layers run
// (docs/simulator.md, "Streaming frames"). Three maps of 4 KiB: %x dies at the first
// pool, so by default %b reuses its bytes and the arena is two maps (8 KiB); kept,
// %x lives on beside %a and %b (12 KiB), and the function says so for lower-to-tile,
// which places the buffers again.
// REUSE-LABEL: func.func @main
// REUSE-SAME:    attributes {irc.ddr_arguments = array<i64: 0>, irc.ddr_arena = 8192 : i64
// REUSE:         nn.max_pool %x {{.*}}irc.ddr = array<i64: 4096>
// REUSE:         nn.max_pool %a {{.*}}irc.ddr = array<i64: 0>
// KEEP-LABEL: func.func @main
// KEEP-SAME:     attributes {irc.keep_inputs, irc.ddr_arguments = array<i64: 0>, irc.ddr_arena = 12288 : i64
// KEEP:          nn.max_pool %x {{.*}}irc.ddr = array<i64: 4096>
// KEEP:          nn.max_pool %a {{.*}}irc.ddr = array<i64: 8192>
func.func @main(%x: tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32> {
  %a = nn.max_pool %x {kernel_shape = [1, 1], layout = "nhwc"} : (tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  %b = nn.max_pool %a {kernel_shape = [1, 1], layout = "nhwc"} : (tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  func.return %b : tensor<1x8x8x16xf32>
}
