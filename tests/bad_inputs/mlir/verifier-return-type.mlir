// Verifier error: the function returns a type other than the one it declares.
func.func @main(%x: tensor<1x4xf32>) -> tensor<1x8xf32> {
  %r = nn.relu %x : tensor<1x4xf32>
  func.return %r : tensor<1x4xf32>
}
