// Parser error: an op without its type.
func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %r = nn.relu %x
  func.return %r : tensor<1x4xf32>
}
