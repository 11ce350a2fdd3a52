// An op the nn dialect does not have.
func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %r = nn.frobnicate %x : tensor<1x4xf32>
  func.return %r : tensor<1x4xf32>
}
