// RUN: irc-opt %s --split-input-file --verify-diagnostics

// --verify-diagnostics succeeds when the diagnostics are exactly those expected by
// `expected-<error|warning|note|remark>` comments. Each form of comment is shown
// once; the failures it reports are in verify-diagnostics-failures.mlir.

// On the same line as the op.
func.func @same_line(%x: tensor<2xf32>) {
  %y = nn.relu %x : (tensor<2xf32>) -> tensor<3xf32> // expected-error {{does not match the inferred type}}
  func.return
}

// -----

// `@+N`: N lines below the comment (the message is a substring of the diagnostic).
func.func @lines_below(%x: tensor<2xf32>) {
  // expected-error @+2 {{result type tensor<3xf32> does not match}}
  // An unrelated comment line.
  %y = nn.relu %x : (tensor<2xf32>) -> tensor<3xf32>
  func.return
}

// -----

// `@-N`: N lines above; MLIR's spelling without a space works too.
func.func @lines_above(%x: tensor<2xf32>) {
  %y = nn.relu %x : (tensor<2xf32>) -> tensor<3xf32>
  // expected-error@-1 {{inferred type tensor<2xf32>}}
  func.return
}

// -----

// `@above` and `@below`: the nearest line that is not itself an expectation.
func.func @above_and_below(%x: tensor<2xf32>) {
  %y = nn.relu %x : (tensor<2xf32>) -> tensor<3xf32>
  // expected-error @above {{does not match}}
  // expected-error @below {{does not match}}
  %z = nn.sigmoid %x : (tensor<2xf32>) -> tensor<4xf32>
  func.return
}

// -----

// `expected-error-re`: the parts in `{{...}}` inside the message are regexes.
func.func @regex(%x: tensor<2xf32>) {
  // expected-error-re @+1 {{result type tensor<{{[0-9]+}}xf32> does not match}}
  %y = nn.relu %x : (tensor<2xf32>) -> tensor<3xf32>
  func.return
}

// -----

// Parse errors are diagnostics too.
func.func @parse_error(%x: tensor<2xf32>) {
  // expected-error @+1 {{not registered}}
  %y = nn.no_such_op %x : tensor<2xf32>
  func.return
}

// -----

// A chunk without expectations must produce no diagnostics.
func.func @valid(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}
