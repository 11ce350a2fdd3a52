// RUN: irc-opt %s --split-input-file --verify-diagnostics

// One case per rule of the `part.transfer` verifier (irc/dialects/part.py).

func.func @unknown_destination(%x: tensor<4xf32>) {
  // expected-error @+1 {{'to' must be "npu" or "cpu"; got "gpu"}}
  %y = part.transfer %x {to = "gpu"} : tensor<4xf32>
  func.return
}

// -----

func.func @missing_destination(%x: tensor<4xf32>) {
  // expected-error @+1 {{property 'to' expected in operation 'part.transfer'}}
  %y = part.transfer %x : tensor<4xf32>
  func.return
}

// -----

func.func @destination_not_a_string(%x: tensor<4xf32>) {
  // expected-error @+1 {{1 : i64 should be of base attribute string}}
  %y = part.transfer %x {to = 1 : i64} : tensor<4xf32>
  func.return
}

// -----

func.func @dynamic_shape(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{a transfer copies a statically shaped tensor, got tensor<?x4xf32>}}
  %y = part.transfer %x {to = "npu"} : tensor<?x4xf32>
  func.return
}

// -----

func.func @not_a_tensor(%x: f32) {
  // expected-error @+1 {{f32 should be of base attribute tensor}}
  %y = part.transfer %x {to = "npu"} : f32
  func.return
}

// -----

// The result has the operand's type: a transfer copies, it does not convert.
func.func @type_changes(%x: tensor<4xf32>) {
  // expected-error @+1 {{attribute tensor<4xf32> expected from variable 'T', but got tensor<4xf16>}}
  %y = "part.transfer"(%x) <{to = "npu"}> : (tensor<4xf32>) -> tensor<4xf16>
  func.return
}

// -----

func.func @unknown_property(%x: tensor<4xf32>) {
  // expected-error @+1 {{'part.transfer' has no property 'too' (its property: to)}}
  %y = part.transfer %x {too = "npu"} : tensor<4xf32>
  func.return
}
