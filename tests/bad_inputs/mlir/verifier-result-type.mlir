// Verifier error: relu's result shape differs from its operand's.
func.func @main(%x: tensor<1x4xf32>) -> tensor<4x1xf32> {
  %r = "nn.relu"(%x) : (tensor<1x4xf32>) -> tensor<4x1xf32>
  func.return %r : tensor<4x1xf32>
}
