// Wrong types: relu of an integer, not a tensor.
func.func @main(%x: i32) -> i32 {
  %r = nn.relu %x : i32
  func.return %r : i32
}
