// Parser error: a use of a value nothing defines.
func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %r = nn.relu %ghost : tensor<1x4xf32>
  func.return %r : tensor<1x4xf32>
}
