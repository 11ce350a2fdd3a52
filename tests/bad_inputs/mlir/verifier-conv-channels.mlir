// Verifier error: the conv's weight has 4 input channels, the input 3.
func.func @main(%x: tensor<1x3x8x8xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32> {
  %y = nn.conv %x, %w : (tensor<1x3x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32>
  func.return %y : tensor<1x8x6x6xf32>
}
