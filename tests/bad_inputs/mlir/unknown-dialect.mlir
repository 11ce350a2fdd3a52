// An op of a dialect irc does not know.
func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %r = "torch.relu"(%x) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %r : tensor<1x4xf32>
}
