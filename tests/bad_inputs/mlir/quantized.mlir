// A model already quantized (no float level left): irc-run --compare refuses it.
func.func @main(%x: tensor<1x4xf32> {irc.name = "x"}) -> (tensor<1x4x!quant.uniform<i8:f32, 0.05:-3>> {irc.name = "y"}) {
  %q = quant.qcast %x : tensor<1x4xf32> to tensor<1x4x!quant.uniform<i8:f32, 0.05:-3>>
  func.return %q : tensor<1x4x!quant.uniform<i8:f32, 0.05:-3>>
}
