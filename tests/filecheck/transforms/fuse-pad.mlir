// RUN: irc-opt %s --split-input-file -p fuse-pad | FileCheck %s

// `fuse-pad` adds the amounts of a zero, spatial-only nn.pad to the `pads` of the
// conv, average_pool or max_pool that reads it, when that computes the same values.

// A conv pads with zeros: the pad's spatial amounts add to the conv's own pads.
// CHECK-LABEL: func.func @conv
// CHECK-NEXT:    %w = nn.constant
// CHECK-NEXT:    %y = nn.conv %x, %w {pads = [2, 1, 1, 2]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x9x9xf32>
// CHECK-NEXT:    func.return %y
func.func @conv(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x9x9xf32> {
  %w = nn.constant dense<1.0> : tensor<4x3x3x3xf32>
  %p = nn.pad %x {pads = [0, 0, 1, 1, 0, 0, 1, 1]} : (tensor<1x3x8x8xf32>) -> tensor<1x3x10x10xf32>
  %y = nn.conv %p, %w {pads = [1, 0, 0, 1]} : (tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x9x9xf32>
  func.return %y : tensor<1x4x9x9xf32>
}

// -----

// Channels last, the spatial axes are 1 and 2.
// CHECK-LABEL: func.func @channels_last_conv
// CHECK-NEXT:    %w = nn.constant
// CHECK-NEXT:    %y = nn.conv %x, %w {layout = "nhwc", pads = [1, 0, 2, 0]} : (tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32>) -> tensor<1x9x6x4xf32>
func.func @channels_last_conv(%x: tensor<1x8x8x3xf32>) -> tensor<1x9x6x4xf32> {
  %w = nn.constant dense<1.0> : tensor<4x3x3x3xf32>
  %p = nn.pad %x {pads = [0, 1, 0, 0, 0, 2, 0, 0]} : (tensor<1x8x8x3xf32>) -> tensor<1x11x8x3xf32>
  %y = nn.conv %p, %w {layout = "nhwc"} : (tensor<1x11x8x3xf32>, tensor<4x3x3x3xf32>) -> tensor<1x9x6x4xf32>
  func.return %y : tensor<1x9x6x4xf32>
}

// -----

// An average pool without pads of its own takes the pad and counts it in the
// divisor, as it counted the padded zeros before.
// CHECK-LABEL: func.func @average_pool
// CHECK-NEXT:    %y = nn.average_pool %x {count_include_pad = true, kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : tensor<1x3x8x8xf32>
// CHECK-NEXT:    func.return %y
func.func @average_pool(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> {
  %p = nn.pad %x {pads = [0, 0, 1, 1, 0, 0, 1, 1]} : (tensor<1x3x8x8xf32>) -> tensor<1x3x10x10xf32>
  %y = nn.average_pool %p {kernel_shape = [3, 3]} : (tensor<1x3x10x10xf32>) -> tensor<1x3x8x8xf32>
  func.return %y : tensor<1x3x8x8xf32>
}

// -----

// An average pool that counts its own padding adds the pad to it.
// CHECK-LABEL: func.func @average_pool_counting_pads
// CHECK-NEXT:    %y = nn.average_pool %x {count_include_pad = true, kernel_shape = [3, 3], pads = [2, 1, 2, 1]} : (tensor<1x3x8x8xf32>) -> tensor<1x3x10x8xf32>
func.func @average_pool_counting_pads(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x10x8xf32> {
  %p = nn.pad %x {pads = [0, 0, 1, 0, 0, 0, 1, 0]} : (tensor<1x3x8x8xf32>) -> tensor<1x3x10x8xf32>
  %y = nn.average_pool %p {count_include_pad = true, kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : (tensor<1x3x10x8xf32>) -> tensor<1x3x10x8xf32>
  func.return %y : tensor<1x3x10x8xf32>
}

// -----

// Max pooling ignores its padding; after a relu no value is below the padded zeros,
// so ignoring them changes nothing.
// CHECK-LABEL: func.func @max_pool_after_relu
// CHECK-NEXT:    %r = nn.relu %x
// CHECK-NEXT:    %y = nn.max_pool %r {kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
func.func @max_pool_after_relu(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %r = nn.relu %x : tensor<1x3x8x8xf32>
  %p = nn.pad %r {pads = [0, 0, 1, 1, 0, 0, 1, 1]} : (tensor<1x3x8x8xf32>) -> tensor<1x3x10x10xf32>
  %y = nn.max_pool %p {kernel_shape = [3, 3], strides = [2, 2]} : (tensor<1x3x10x10xf32>) -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}

// -----

// So does a fused ReLU6 (clip with min 0).
// CHECK-LABEL: func.func @max_pool_after_fused_relu6
// CHECK-NEXT:    %w = nn.constant
// CHECK-NEXT:    %c = nn.conv %x, %w {activation = #nn.activation<clip min = 0.0, max = 6.0>}
// CHECK-NEXT:    %y = nn.max_pool %c {kernel_shape = [2, 2], pads = [1, 1, 0, 0]}
func.func @max_pool_after_fused_relu6(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = nn.constant dense<1.0> : tensor<4x3x1x1xf32>
  %c = nn.conv %x, %w {activation = #nn.activation<clip min = 0.0, max = 6.0>} : (tensor<1x3x8x8xf32>, tensor<4x3x1x1xf32>) -> tensor<1x4x8x8xf32>
  %p = nn.pad %c {pads = [0, 0, 1, 1, 0, 0, 0, 0]} : (tensor<1x4x8x8xf32>) -> tensor<1x4x9x9xf32>
  %y = nn.max_pool %p {kernel_shape = [2, 2]} : (tensor<1x4x9x9xf32>) -> tensor<1x4x8x8xf32>
  func.return %y : tensor<1x4x8x8xf32>
}

// -----

// Each user absorbs the pad on its own; the pad stays for a user that cannot.
// CHECK-LABEL: func.func @pad_with_two_users
// CHECK-NEXT:    %w = nn.constant
// CHECK-NEXT:    %p = nn.pad %x
// CHECK-NEXT:    %y = nn.conv %x, %w {pads = [1, 1, 1, 1]}
// CHECK-NEXT:    %m = nn.max_pool %p {kernel_shape = [3, 3]}
func.func @pad_with_two_users(%x: tensor<1x3x8x8xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x3x8x8xf32>) {
  %w = nn.constant dense<1.0> : tensor<4x3x3x3xf32>
  %p = nn.pad %x {pads = [0, 0, 1, 1, 0, 0, 1, 1]} : (tensor<1x3x8x8xf32>) -> tensor<1x3x10x10xf32>
  %y = nn.conv %p, %w : (tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %m = nn.max_pool %p {kernel_shape = [3, 3]} : (tensor<1x3x10x10xf32>) -> tensor<1x3x8x8xf32>
  func.return %y, %m : tensor<1x4x8x8xf32>, tensor<1x3x8x8xf32>
}

// -----

// Must not fire: the pad value is not zero.
// CHECK-LABEL: func.func @nonzero_value
// CHECK:         %p = nn.pad %x {pads = [0, 0, 1, 1, 0, 0, 1, 1], value = 1.0}
// CHECK-NEXT:    %y = nn.conv %p, %w :
func.func @nonzero_value(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = nn.constant dense<1.0> : tensor<4x3x3x3xf32>
  %p = nn.pad %x {pads = [0, 0, 1, 1, 0, 0, 1, 1], value = 1.0} : (tensor<1x3x8x8xf32>) -> tensor<1x3x10x10xf32>
  %y = nn.conv %p, %w : (tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  func.return %y : tensor<1x4x8x8xf32>
}

// -----

// Must not fire: the pad adds channels, which a conv's pads cannot.
// CHECK-LABEL: func.func @channel_axis
// CHECK:         %p = nn.pad %x {pads = [0, 1, 0, 0, 0, 0, 0, 0]}
// CHECK-NEXT:    %y = nn.conv %p, %w :
func.func @channel_axis(%x: tensor<1x2x8x8xf32>) -> tensor<1x4x6x6xf32> {
  %w = nn.constant dense<1.0> : tensor<4x3x3x3xf32>
  %p = nn.pad %x {pads = [0, 1, 0, 0, 0, 0, 0, 0]} : (tensor<1x2x8x8xf32>) -> tensor<1x3x8x8xf32>
  %y = nn.conv %p, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %y : tensor<1x4x6x6xf32>
}

// -----

// Must not fire: channels last, the last axis holds the channels.
// CHECK-LABEL: func.func @channels_last_channel_axis
// CHECK:         %p = nn.pad %x
// CHECK-NEXT:    %y = nn.average_pool %p
func.func @channels_last_channel_axis(%x: tensor<1x4x4x2xf32>) -> tensor<1x2x2x3xf32> {
  %p = nn.pad %x {pads = [0, 0, 0, 0, 0, 0, 0, 1]} : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32>
  %y = nn.average_pool %p {kernel_shape = [2, 2], layout = "nhwc", strides = [2, 2]} : (tensor<1x4x4x3xf32>) -> tensor<1x2x2x3xf32>
  func.return %y : tensor<1x2x2x3xf32>
}

// -----

// Must not fire: the input may be negative, where a padded zero wins a max but the
// max pool's own padding never does.
// CHECK-LABEL: func.func @max_pool_of_any_sign
// CHECK-NEXT:    %p = nn.pad %x
// CHECK-NEXT:    %y = nn.max_pool %p {kernel_shape = [3, 3]}
func.func @max_pool_of_any_sign(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> {
  %p = nn.pad %x {pads = [0, 0, 1, 1, 0, 0, 1, 1]} : (tensor<1x3x8x8xf32>) -> tensor<1x3x10x10xf32>
  %y = nn.max_pool %p {kernel_shape = [3, 3]} : (tensor<1x3x10x10xf32>) -> tensor<1x3x8x8xf32>
  func.return %y : tensor<1x3x8x8xf32>
}

// -----

// Must not fire: this average pool leaves its own padding out of the divisor but
// counts the padded zeros; one `count_include_pad` cannot say both.
// CHECK-LABEL: func.func @average_pool_excluding_its_pads
// CHECK-NEXT:    %p = nn.pad %x
// CHECK-NEXT:    %y = nn.average_pool %p {kernel_shape = [3, 3], pads = [1, 1, 1, 1]}
func.func @average_pool_excluding_its_pads(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x10x10xf32> {
  %p = nn.pad %x {pads = [0, 0, 1, 1, 0, 0, 1, 1]} : (tensor<1x3x8x8xf32>) -> tensor<1x3x10x10xf32>
  %y = nn.average_pool %p {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : (tensor<1x3x10x10xf32>) -> tensor<1x3x10x10xf32>
  func.return %y : tensor<1x3x10x10xf32>
}

// -----

// Must not fire: pooling pads must stay smaller than the window (2 here).
// CHECK-LABEL: func.func @pool_pads_reach_the_kernel
// CHECK-NEXT:    %p = nn.pad %x
// CHECK-NEXT:    %y = nn.average_pool %p {kernel_shape = [2, 2]}
func.func @pool_pads_reach_the_kernel(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x11x11xf32> {
  %p = nn.pad %x {pads = [0, 0, 2, 2, 0, 0, 2, 2]} : (tensor<1x3x8x8xf32>) -> tensor<1x3x12x12xf32>
  %y = nn.average_pool %p {kernel_shape = [2, 2]} : (tensor<1x3x12x12xf32>) -> tensor<1x3x11x11xf32>
  func.return %y : tensor<1x3x11x11xf32>
}

// -----

// Must not fire: reflect padding is not zeros.
// CHECK-LABEL: func.func @reflect
// CHECK-NEXT:    %w = nn.constant
// CHECK-NEXT:    %p = nn.pad %x {mode = "reflect"
// CHECK-NEXT:    %y = nn.conv %p, %w :
func.func @reflect(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = nn.constant dense<1.0> : tensor<4x3x3x3xf32>
  %p = nn.pad %x {mode = "reflect", pads = [0, 0, 1, 1, 0, 0, 1, 1]} : (tensor<1x3x8x8xf32>) -> tensor<1x3x10x10xf32>
  %y = nn.conv %p, %w : (tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  func.return %y : tensor<1x4x8x8xf32>
}
