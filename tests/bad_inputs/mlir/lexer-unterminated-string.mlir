// Lexer error: a string that never ends.
func.func @main(%x: tensor<1x4xf32> {irc.name = "x) -> tensor<1x4xf32> {
  func.return %x : tensor<1x4xf32>
}
