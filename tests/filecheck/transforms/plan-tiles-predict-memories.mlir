// RUN: irc-opt %s --target=ethos-u65-256 -p plan-tiles 2>&1 | FileCheck %s --check-prefix=SLOWEST
// RUN: irc-opt %s --target=ethos-u65-256 -p 'plan-tiles{predict-memories=true}' 2>&1 | FileCheck %s --check-prefix=PREDICT

// plan-tiles on a placement of two memories of activations (ethos-u65-256: the 384 KB
// system SRAM, then DRAM). By default a layer's transfers are costed in DRAM, the
// slowest memory its tensors may end up in; with predict-memories, where memory
// planning puts them: this 1x1 conv's 25 KB maps fit the system SRAM, so its stores
// and loads cost less and the estimate nearly halves (docs/tiling.md).
// SLOWEST: remark: plan-tiles: 1 layers for ethos-u65-256, 14023 cycles estimated
// PREDICT: remark: plan-tiles: 1 layers for ethos-u65-256, 7545 cycles estimated

func.func @small(%x: tensor<1x28x28x32x!quant.uniform<i8:f32, 0.1:-3>>) -> tensor<1x28x28x32x!quant.uniform<i8:f32, 0.3:-1>> {
  %w = qnn.constant dense<1> : tensor<32x1x1x32xi8> to tensor<32x1x1x32x!quant.uniform<i8<-127:127>:f32, 0.01>>
  %a = qnn.conv %x, %w {layout = "nhwc"} : (tensor<1x28x28x32x!quant.uniform<i8:f32, 0.1:-3>>, tensor<32x1x1x32x!quant.uniform<i8<-127:127>:f32, 0.01>>) -> tensor<1x28x28x32xi32>
  %y = qnn.requantize %a {multiplier = [1431655765], shift = [4]} : (tensor<1x28x28x32xi32>) -> tensor<1x28x28x32x!quant.uniform<i8:f32, 0.3:-1>>
  func.return %y : tensor<1x28x28x32x!quant.uniform<i8:f32, 0.3:-1>>
}
