// Wrong types: an add of f32 and i32 tensors.
func.func @main(%x: tensor<1x4xf32>, %y: tensor<1x4xi32>) -> tensor<1x4xf32> {
  %s = nn.add %x, %y : (tensor<1x4xf32>, tensor<1x4xi32>) -> tensor<1x4xf32>
  func.return %s : tensor<1x4xf32>
}
