// RUN: irc-opt %s --split-input-file --verify-diagnostics -p cancel-transposes | FileCheck %s

// An inverse pair around an elementwise op cancels.
// CHECK-LABEL: func.func @inverse_pair
// CHECK-NEXT:    %[[R:.*]] = nn.relu %x : tensor<1x3x4x5xf32>
// CHECK-NEXT:    func.return %[[R]]
// expected-remark @+1 {{cancel-transposes: 2 transposes before, 0 after}}
func.func @inverse_pair(%x: tensor<1x3x4x5xf32>) -> tensor<1x3x4x5xf32> {
  %t = nn.transpose %x {perm = [0, 2, 3, 1]} : (tensor<1x3x4x5xf32>) -> tensor<1x4x5x3xf32>
  %r = nn.relu %t : tensor<1x4x5x3xf32>
  %y = nn.transpose %r {perm = [0, 3, 1, 2]} : (tensor<1x4x5x3xf32>) -> tensor<1x3x4x5xf32>
  func.return %y : tensor<1x3x4x5xf32>
}

// -----

// Must not cancel: the two transposes are not inverse; they compose into one.
// CHECK-LABEL: func.func @pair_not_inverse
// CHECK-NEXT:    %[[T:.*]] = nn.transpose %x {perm = [0, 3, 1, 2]} : (tensor<1x3x4x5xf32>) -> tensor<1x5x3x4xf32>
// CHECK-NEXT:    func.return %[[T]]
// expected-remark @+1 {{cancel-transposes: 2 transposes before, 1 after (at inputs/outputs)}}
func.func @pair_not_inverse(%x: tensor<1x3x4x5xf32>) -> tensor<1x5x3x4xf32> {
  %t = nn.transpose %x {perm = [0, 2, 3, 1]} : (tensor<1x3x4x5xf32>) -> tensor<1x4x5x3xf32>
  %y = nn.transpose %t {perm = [0, 2, 3, 1]} : (tensor<1x4x5x3xf32>) -> tensor<1x5x3x4xf32>
  func.return %y : tensor<1x5x3x4xf32>
}

// -----

// A per-channel (C,1,1) bias of an NCHW add on an NHWC map is brought to full rank,
// (1,C,1,1), and transposed to (1,1,1,C); the add then works in NHWC.
// CHECK-LABEL: func.func @bias_broadcast
// CHECK-NEXT:    %[[B:.*]] = nn.constant dense<{{\[\[\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00]]]]> : tensor<1x1x1x3xf32>
// CHECK-NEXT:    %[[A:.*]] = nn.add %x, %[[B]] : (tensor<1x2x2x3xf32>, tensor<1x1x1x3xf32>) -> tensor<1x2x2x3xf32>
// CHECK-NEXT:    func.return %[[A]]
// expected-remark @+1 {{cancel-transposes: 2 transposes before, 0 after}}
func.func @bias_broadcast(%x: tensor<1x2x2x3xf32>) -> tensor<1x2x2x3xf32> {
  %t = nn.transpose %x {perm = [0, 3, 1, 2]} : (tensor<1x2x2x3xf32>) -> tensor<1x3x2x2xf32>
  %b = nn.constant dense<[[[1.0]], [[2.0]], [[3.0]]]> : tensor<3x1x1xf32>
  %a = nn.add %t, %b : (tensor<1x3x2x2xf32>, tensor<3x1x1xf32>) -> tensor<1x3x2x2xf32>
  %y = nn.transpose %a {perm = [0, 2, 3, 1]} : (tensor<1x3x2x2xf32>) -> tensor<1x2x2x3xf32>
  func.return %y : tensor<1x2x2x3xf32>
}

// -----

// concat, pad and softmax remap their axes; a reduction without keepdims over the
// spatial axes leaves no transpose at all.
// CHECK-LABEL: func.func @axes_remapped
// CHECK-NEXT:    %[[C:.*]] = nn.concat %x, %z {axis = 3} : (tensor<1x4x4x2xf32>, tensor<1x4x4x3xf32>) -> tensor<1x4x4x5xf32>
// CHECK-NEXT:    %[[P:.*]] = nn.pad %[[C]] {pads = [0, 1, 2, 0, 0, 1, 2, 0]} : (tensor<1x4x4x5xf32>) -> tensor<1x6x8x5xf32>
// CHECK-NEXT:    %[[S:.*]] = nn.softmax %[[P]] {axis = 3} : tensor<1x6x8x5xf32>
// CHECK-NEXT:    %[[M:.*]] = nn.reduce_mean %[[S]] {axes = [1, 2], keepdims = false} : (tensor<1x6x8x5xf32>) -> tensor<1x5xf32>
// CHECK-NEXT:    func.return %[[M]]
// expected-remark @+1 {{cancel-transposes: 2 transposes before, 0 after}}
func.func @axes_remapped(%x: tensor<1x4x4x2xf32>, %z: tensor<1x4x4x3xf32>) -> tensor<1x5xf32> {
  %tx = nn.transpose %x {perm = [0, 3, 1, 2]} : (tensor<1x4x4x2xf32>) -> tensor<1x2x4x4xf32>
  %tz = nn.transpose %z {perm = [0, 3, 1, 2]} : (tensor<1x4x4x3xf32>) -> tensor<1x3x4x4xf32>
  %c = nn.concat %tx, %tz {axis = 1} : (tensor<1x2x4x4xf32>, tensor<1x3x4x4xf32>) -> tensor<1x5x4x4xf32>
  %p = nn.pad %c {pads = [0, 0, 1, 2, 0, 0, 1, 2]} : (tensor<1x5x4x4xf32>) -> tensor<1x5x6x8xf32>
  %s = nn.softmax %p {axis = 1} : tensor<1x5x6x8xf32>
  %m = nn.reduce_mean %s {axes = [2, 3], keepdims = false} : (tensor<1x5x6x8xf32>) -> tensor<1x5xf32>
  func.return %m : tensor<1x5xf32>
}

// -----

// A transpose of a constant folds into a new constant.
// CHECK-LABEL: func.func @constant
// CHECK-NEXT:    %[[C:.*]] = nn.constant dense<{{\[\[}}1.000000e+00, 3.000000e+00, 5.000000e+00], [2.000000e+00, 4.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK-NEXT:    nn.mul %x, %[[C]]
// expected-remark @+1 {{cancel-transposes: 1 transposes before, 0 after}}
func.func @constant(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c = nn.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %t = nn.transpose %c {perm = [1, 0]} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %y = nn.mul %x, %t : tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

// Classifier head: the NCHW flatten of an NHWC map (H = 2, W = 1, C = 3) feeds a
// gemm with constant weights. NCHW orders the features c*2 + h, NHWC h*3 + c: the
// gemm takes the NHWC flatten, and the weight's columns (trans_b) are permuted.
// CHECK-LABEL: func.func @classifier
// CHECK-NEXT:    %[[F:.*]] = nn.reshape %x : (tensor<1x2x1x3xf32>) -> tensor<1x6xf32>
// CHECK-NEXT:    %[[W:.*]] = nn.constant dense<{{\[\[}}0.000000e+00, 2.000000e+00, 4.000000e+00, 1.000000e+00, 3.000000e+00, 5.000000e+00], [6.000000e+00, 8.000000e+00, 1.000000e+01, 7.000000e+00, 9.000000e+00, 1.100000e+01]]> : tensor<2x6xf32>
// CHECK-NEXT:    %[[Y:.*]] = nn.gemm %[[F]], %[[W]] {trans_b = true} : (tensor<1x6xf32>, tensor<2x6xf32>) -> tensor<1x2xf32>
// CHECK-NEXT:    func.return %[[Y]]
// expected-remark @+1 {{cancel-transposes: 1 transposes before, 0 after}}
func.func @classifier(%x: tensor<1x2x1x3xf32>) -> tensor<1x2xf32> {
  %t = nn.transpose %x {perm = [0, 3, 1, 2]} : (tensor<1x2x1x3xf32>) -> tensor<1x3x2x1xf32>
  %f = nn.reshape %t : (tensor<1x3x2x1xf32>) -> tensor<1x6xf32>
  %w = nn.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0, 11.0]]> : tensor<2x6xf32>
  %y = nn.gemm %f, %w {trans_b = true} : (tensor<1x6xf32>, tensor<2x6xf32>) -> tensor<1x2xf32>
  func.return %y : tensor<1x2xf32>
}

// -----

// After a global pool, the transpose back to NCHW only moves size-1 axes: it is a
// reshape, and merges with the reshape after it.
// CHECK-LABEL: func.func @unit_axes
// CHECK-NEXT:    %[[F:.*]] = nn.reshape %x : (tensor<1x1x1x8xf32>) -> tensor<1x8xf32>
// CHECK-NEXT:    func.return %[[F]]
// expected-remark @+1 {{cancel-transposes: 1 transposes before, 0 after}}
func.func @unit_axes(%x: tensor<1x1x1x8xf32>) -> tensor<1x8xf32> {
  %t = nn.transpose %x {perm = [0, 3, 1, 2]} : (tensor<1x1x1x8xf32>) -> tensor<1x8x1x1xf32>
  %f = nn.reshape %t : (tensor<1x8x1x1xf32>) -> tensor<1x8xf32>
  func.return %f : tensor<1x8xf32>
}

// -----

// ShuffleNet's channel shuffle (2 groups of 3 channels) between NHWC maps: the layout
// transposes move through the reshapes that split and merge the channel axis; the
// shuffle itself stays, as a transpose of the two channel axes in NHWC.
// CHECK-LABEL: func.func @channel_shuffle
// CHECK-NEXT:    %[[A:.*]] = nn.reshape %x : (tensor<1x2x2x6xf32>) -> tensor<1x2x2x2x3xf32>
// CHECK-NEXT:    %[[S:.*]] = nn.transpose %[[A]] {perm = [0, 1, 2, 4, 3]} : (tensor<1x2x2x2x3xf32>) -> tensor<1x2x2x3x2xf32>
// CHECK-NEXT:    %[[B:.*]] = nn.reshape %[[S]] : (tensor<1x2x2x3x2xf32>) -> tensor<1x2x2x6xf32>
// CHECK-NEXT:    func.return %[[B]]
// expected-remark @+1 {{cancel-transposes: 3 transposes before, 1 after (1 inside)}}
func.func @channel_shuffle(%x: tensor<1x2x2x6xf32>) -> tensor<1x2x2x6xf32> {
  %t = nn.transpose %x {perm = [0, 3, 1, 2]} : (tensor<1x2x2x6xf32>) -> tensor<1x6x2x2xf32>
  %a = nn.reshape %t : (tensor<1x6x2x2xf32>) -> tensor<1x2x3x2x2xf32>
  %s = nn.transpose %a {perm = [0, 2, 1, 3, 4]} : (tensor<1x2x3x2x2xf32>) -> tensor<1x3x2x2x2xf32>
  %b = nn.reshape %s : (tensor<1x3x2x2x2xf32>) -> tensor<1x6x2x2xf32>
  %y = nn.transpose %b {perm = [0, 2, 3, 1]} : (tensor<1x6x2x2xf32>) -> tensor<1x2x2x6xf32>
  func.return %y : tensor<1x2x2x6xf32>
}

// -----

// Must not fire: a matmul with a non-constant weight needs the transposed operand.
// The transpose's second user, its inverse, still cancels.
// CHECK-LABEL: func.func @second_user
// CHECK-NEXT:    %[[X:.*]] = nn.matmul %a, %b
// CHECK-NEXT:    %[[T:.*]] = nn.transpose %[[X]] {perm = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    %[[M:.*]] = nn.matmul %[[T]], %w
// CHECK-NEXT:    func.return %[[M]], %[[X]]
// expected-remark @+1 {{cancel-transposes: 2 transposes before, 1 after (1 inside)}}
func.func @second_user(%a: tensor<2x2xf32>, %b: tensor<2x3xf32>, %w: tensor<2x4xf32>) -> (tensor<3x4xf32>, tensor<2x3xf32>) {
  %x = nn.matmul %a, %b : (tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %t = nn.transpose %x {perm = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %m = nn.matmul %t, %w : (tensor<3x2xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  %u = nn.transpose %t {perm = [1, 0]} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  func.return %m, %u : tensor<3x4xf32>, tensor<2x3xf32>
}

// -----

// Must not fire: the reshape merges C and H, which are not adjacent in NHWC.
// CHECK-LABEL: func.func @reshape_mixing_axes
// CHECK-NEXT:    %[[T:.*]] = nn.transpose %x {perm = [0, 3, 1, 2]}
// CHECK-NEXT:    %[[F:.*]] = nn.reshape %[[T]] : (tensor<1x4x2x3xf32>) -> tensor<1x8x3xf32>
// CHECK-NEXT:    func.return %[[F]]
// expected-remark @+1 {{cancel-transposes: 1 transposes before, 1 after (at inputs/outputs)}}
func.func @reshape_mixing_axes(%x: tensor<1x2x3x4xf32>) -> tensor<1x8x3xf32> {
  %t = nn.transpose %x {perm = [0, 3, 1, 2]} : (tensor<1x2x3x4xf32>) -> tensor<1x4x2x3xf32>
  %f = nn.reshape %t : (tensor<1x4x2x3xf32>) -> tensor<1x8x3xf32>
  func.return %f : tensor<1x8x3xf32>
}

// -----

// Must not fire: the add's other operand is not a constant and not transposed.
// CHECK-LABEL: func.func @untransposed_operand
// CHECK-NEXT:    %[[T:.*]] = nn.transpose %x {perm = [0, 3, 1, 2]}
// CHECK-NEXT:    %[[A:.*]] = nn.add %[[T]], %z
// expected-remark @+1 {{cancel-transposes: 1 transposes before, 1 after (at inputs/outputs)}}
func.func @untransposed_operand(%x: tensor<1x2x2x3xf32>, %z: tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32> {
  %t = nn.transpose %x {perm = [0, 3, 1, 2]} : (tensor<1x2x2x3xf32>) -> tensor<1x3x2x2xf32>
  %a = nn.add %t, %z : tensor<1x3x2x2xf32>
  func.return %a : tensor<1x3x2x2xf32>
}

// -----

// A transpose that elementwise ops (with constant operands) separate from an
// argument moves up to the argument; the constant is transposed with it.
// CHECK-LABEL: func.func @hoisted_to_argument
// CHECK-NEXT:    %[[T:.*]] = nn.transpose %x {perm = [0, 2, 3, 1]} : (tensor<1x3x2x2xf32>) -> tensor<1x2x2x3xf32>
// CHECK-NEXT:    %[[S:.*]] = nn.constant dense<{{\[\[\[\[}}5.000000e-01, 2.500000e-01, 2.000000e+00]]]]> : tensor<1x1x1x3xf32>
// CHECK-NEXT:    %[[M:.*]] = nn.mul %[[T]], %[[S]] : (tensor<1x2x2x3xf32>, tensor<1x1x1x3xf32>) -> tensor<1x2x2x3xf32>
// CHECK-NEXT:    nn.max_pool %[[M]]
// expected-remark @+1 {{cancel-transposes: 1 transposes before, 1 after (at inputs/outputs)}}
func.func @hoisted_to_argument(%x: tensor<1x3x2x2xf32>) -> tensor<1x1x1x3xf32> {
  %s = nn.constant dense<[[[0.5]], [[0.25]], [[2.0]]]> : tensor<3x1x1xf32>
  %m = nn.mul %x, %s : (tensor<1x3x2x2xf32>, tensor<3x1x1xf32>) -> tensor<1x3x2x2xf32>
  %t = nn.transpose %m {perm = [0, 2, 3, 1]} : (tensor<1x3x2x2xf32>) -> tensor<1x2x2x3xf32>
  %p = nn.max_pool %t {kernel_shape = [2, 2], layout = "nhwc"} : (tensor<1x2x2x3xf32>) -> tensor<1x1x1x3xf32>
  func.return %p : tensor<1x1x1x3xf32>
}
