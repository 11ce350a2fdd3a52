// The sidecar named by the module lies outside the IR file's directory.
builtin.module attributes {irc.weights = "../../outside.weights.npz"} {
  func.func @main(%x: tensor<1x4xf32> {irc.name = "x"}) -> (tensor<1x4xf32> {irc.name = "y"}) {
    %w = nn.constant dense_resource<w> : tensor<4xf32>
    %y = nn.add %x, %w : (tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
    func.return %y : tensor<1x4xf32>
  }
}
