// Parser error: the function's region never closes.
func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %r = nn.relu %x : tensor<1x4xf32>
  func.return %r : tensor<1x4xf32>
