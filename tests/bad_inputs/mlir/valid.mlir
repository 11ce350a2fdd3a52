// The valid model the pass and runtime cases run on: y = relu(x + x), x: 1x4.
func.func @main(%x: tensor<1x4xf32> {irc.name = "x"}) -> (tensor<1x4xf32> {irc.name = "y"}) {
  %s = nn.add %x, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %r = nn.relu %s : tensor<1x4xf32>
  func.return %r : tensor<1x4xf32>
}
