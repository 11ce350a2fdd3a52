// RUN: irc-opt %s -p 'quantize{stats=%S/Inputs/quantize-stats.json exclude-names=skipped exclude-ops=tanh}' | FileCheck %s
// RUN: not irc-opt %s -p 'quantize{stats=%S/Inputs/quantize-stats.json exclude-names=skiped}' 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// The options that keep ops float, on their own: exclude-names must name a layer of
// the module (in its own file, as the other cases of quantize.mlir have no such layer).

// Must not fire on excluded ops: the conv named "skipped" (exclude-names) and every
// nn.tanh (exclude-ops=tanh) stay float. The conv keeps its float input and weights
// (no quantized op reads its input) and its result is quantized for the sigmoid,
// which is quantized (a lookup table once lowered); the tanh reads the dequantized
// sigmoid and its result stays float.

// CHECK-LABEL: func.func @excluded(
// CHECK-NEXT:    %w = nn.constant dense<{{.*}}> : tensor<2x2x1x1xf32>
// CHECK-NEXT:    %c = nn.conv %x, %w {irc.float = "excluded by name ('skipped')"} : (tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x2x2xf32>
// CHECK-NEXT:    %c_q = quant.qcast %c
// CHECK-NEXT:    %c_dq = quant.dcast %c_q
// CHECK-NEXT:    %s = nn.sigmoid %c_dq
// CHECK-NEXT:    %s_q = quant.qcast %s : tensor<1x2x2x2xf32> to tensor<1x2x2x2x!quant.uniform<i8:f32, 0.003921568859368563:-128>>
// CHECK-NEXT:    %s_dq = quant.dcast %s_q
// CHECK-NEXT:    %t = nn.tanh %s_dq
// CHECK-NEXT:    func.return %t
func.func @excluded(%x: tensor<1x2x2x2xf32> {irc.name = "x"}) -> tensor<1x2x2x2xf32> {
  %w = nn.constant dense<[[[[1.0]], [[0.5]]], [[[-1.0]], [[2.0]]]]> : tensor<2x2x1x1xf32>
  %c = nn.conv %x, %w : (tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x2x2xf32> loc("skipped")
  %s = nn.sigmoid %c : tensor<1x2x2x2xf32> loc("gate")
  %t = nn.tanh %s : tensor<1x2x2x2xf32> loc("squash")
  func.return %t : tensor<1x2x2x2xf32>
}

// UNKNOWN: <pass-pipeline>: error: exclude-names names no layer of the model: 'skiped'
// UNKNOWN: hint: close matches: 'skipped'
