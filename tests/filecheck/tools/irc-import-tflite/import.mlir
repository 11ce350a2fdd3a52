// RUN: python -c "from irc.testing.tflite_models import mobilenet_v2_block as m; open('%t.tflite', 'wb').write(m(0))"
// RUN: irc-import-tflite %t.tflite --mlir-print-debuginfo | FileCheck %s
// RUN: irc-import-tflite %t.tflite -o %t.mlir && irc-opt %t.mlir | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: python -c "from irc.testing.tflite_models import SINGLE_OP_MODELS as m; open('%t.softmax.tflite', 'wb').write(m['softmax'](0))"
// RUN: irc-import-tflite %t.softmax.tflite | FileCheck %s --check-prefix=SOFTMAX
// RUN: python -c "from irc.testing.tflite_models import SINGLE_OP_MODELS as m; open('%t.dw.tflite', 'wb').write(m['depthwise_ties_tail'](0))"
// RUN: irc-import-tflite %t.dw.tflite | FileCheck %s --check-prefix=TAIL
// RUN: python -c "from irc.testing.tflite_models import SINGLE_OP_MODELS as m; open('%t.add.tflite', 'wb').write(m['add_ties'](0))"
// RUN: irc-import-tflite %t.add.tflite | FileCheck %s --check-prefix=ADD

// irc-import-tflite: an int8 TFLite model as qnn IR (docs/tflite.md). A MobileNetV2
// block: the arguments and results keep the TFLite tensor names, every op is located
// at the tensor it computes, the layouts stay NHWC, the weights are per channel,
// fused RELU6s are clamps (6 / 0.1024 + the zero point -128: -69), and every
// requantize rounds as LiteRT's kernels do.

// CHECK:      func.func @main(%0: tensor<1x16x16x16x!quant.uniform<i8:f32, 0.05000000074505806:-3>> {irc.name = "input"}
// CHECK:        qnn.constant {{.*}} to tensor<64x1x1x16x!quant.uniform<i8<-127:127>:f32:0, {
// CHECK:        nn.constant {{.*}} : tensor<64xi32> loc("bias_
// CHECK:        qnn.conv {{.*}} {layout = "nhwc"} {{.*}} -> tensor<1x16x16x64xi32> loc("conv_
// CHECK-NEXT:   qnn.requantize {{.*}} {axis = 3, clamp_max = -69, multiplier = [{{.*}}], rounding = "double_up", shift = [{{.*}}]} {{.*}} loc("conv_
// The depthwise conv: TFLite's 1x3x3x64 filter as the grouped conv's 64x3x3x1.
// CHECK:        qnn.conv {{.*}} {group = 64, layout = "nhwc", pads = [1, 1, 1, 1]} {{.*}}tensor<64x3x3x1x!quant.uniform<i8<-127:127>:f32:0, {{.*}} loc("depthwise_
// CHECK:        qnn.add {{.*}}input_rounding = "half_up"{{.*}}rounding = "double_away"{{.*}} loc("add_
// CHECK:        func.return {{.*}} loc(

// ROUNDTRIP:  qnn.requantize {{.*}}rounding = "double_up"

// The softmax: TFLite's float32 table of exp(-s_in * d).
// SOFTMAX:    %{{.*}} = qnn.tflite_softmax %0 {table = [1.0, 0.904837{{[0-9]*}}, {{.*}}]} : (tensor<2x10x!quant.uniform<i8:f32, 0.10000000149011612:3>>) -> tensor<2x10x!quant.uniform<i8:f32, 0.00390625:-128>>

// A depthwise conv of 12 channels: LiteRT requantizes the first 8 in its vector code
// (ties up) and the last 4 in its scalar code (ties away from zero).
// TAIL:       %[[ACC:.*]] = qnn.conv
// TAIL:       %[[HEAD:.*]] = nn.slice %[[ACC]] {axes = [3], ends = [8], starts = [0]}
// TAIL-NEXT:  %[[Q1:.*]] = qnn.requantize %[[HEAD]] {axis = 3, {{.*}}rounding = "double_up"
// TAIL-NEXT:  %[[TAIL:.*]] = nn.slice %[[ACC]] {axes = [3], ends = [12], starts = [8]}
// TAIL-NEXT:  %[[Q2:.*]] = qnn.requantize %[[TAIL]] {axis = 3, {{.*}}rounding = "double_away"
// TAIL-NEXT:  qnn.concat %[[Q1]], %[[Q2]] {axis = 3}

// An add of scales 0.05 and 0.025 into 0.1: TFLite's left shift of 20 and its
// power-of-two multipliers (1/2, 1/4, 2^-20).
// ADD:        qnn.add %0, %1 {input_rounding = "half_up", lhs_multiplier = 1073741824, lhs_shift = 0, multiplier = 1073741824, rhs_multiplier = 1073741824, rhs_shift = 1, rounding = "double_away", shift = 19}
