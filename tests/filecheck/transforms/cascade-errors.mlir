// RUN: irc-opt %s --split-input-file --target=npu-demo -p lower-to-tile --verify-diagnostics
// RUN: not irc-opt %s --target=npu-demo -p 'plan-tiles{cascades=true cascade-stripe=-1}' 2>&1 | FileCheck %s --check-prefix=OPTION

// A hand-written irc.cascade that lacks its fields, or whose members disagree with
// the program, is an error naming the op (plan-tiles records it; a cascade is never
// written by hand).

// OPTION: <pass-pipeline>: error: cascade-stripe takes a number of rows (0: chosen by cost), got -1
// OPTION-NEXT: hint: plan-tiles{cascades=true cascade-stripe=4}

func.func @missing(%x: tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>> {
  // expected-error @+1 {{qnn.max_pool: 'irc.cascade' needs members, stripe, window, reads, its plan in the cascade (irc.tiling) (group, index, members, stripe: integers; window, reads, rolling: arrays)}}
  %y = qnn.max_pool %x {kernel_shape = [1, 1], layout = "nhwc", irc.cascade = {group = 0 : i64, index = 0 : i64}} : (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>
  func.return %y : tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>
}

// -----

func.func @alone(%x: tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>> {
  // expected-error @+1 {{qnn.max_pool: a member of a cascade is member 0 of 1 in program order}}
  %y = qnn.max_pool %x {kernel_shape = [1, 1], layout = "nhwc", irc.cascade = {group = 0 : i64, index = 0 : i64, members = 2 : i64, stripe = 1 : i64, window = array<i64: 4, 4, 1, 1, 1, 0>, reads = array<i64>, rolling = array<i64: 0, 1>}, irc.tiling = {tile = array<i64: 1, 4, 8, 1>, tiles = array<i64: 4, 1, 1, 1>, order = "input", double_buffered = true, sram = 1024 : i64, sram_offsets = {input = array<i64: 64, 128>, output = array<i64: 192, 256>}, ddr_read = 0 : i64, ddr_written = 0 : i64, cycles = 0 : i64, lower_bound = 0 : i64}} : (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>
  func.return %y : tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1:-3>>
}
