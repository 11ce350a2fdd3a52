// RUN: irc-opt %s --split-input-file --verify-each-numerics -p graph-opt | FileCheck %s
// RUN: irc-opt %s --split-input-file --verify-each-numerics -p 'graph-opt{layout=keep activations=relu}' | FileCheck %s --check-prefix=KEEP
// RUN: irc-opt %s --split-input-file -p graph-opt 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// graph-opt runs canonicalize, fold-batchnorm, fuse-pad, canonicalize, convert-layout,
// cancel-transposes, fuse-activation, canonicalize, cse and dce; --verify-each-numerics
// checks every one of them on each case.

// Conv + BN + ReLU: the BN folds into the conv, the conv goes channels-last and takes
// the ReLU; transposes remain only at the input and the output.

// CHECK-LABEL: func.func @conv_bn_relu
// CHECK-NOT:     nn.batch_norm
// CHECK:         %[[W:.+]] = nn.constant {{.*}} : tensor<4x3x3x3xf32>
// CHECK:         %[[B:.+]] = nn.constant dense<[1.000000e-01, -1.214210e+00, 1.00709975, -1.099970e+00]> : tensor<4xf32>
// CHECK:         %[[T:.+]] = nn.transpose %x {perm = [0, 2, 3, 1]} : (tensor<1x3x8x8xf32>) -> tensor<1x8x8x3xf32>
// CHECK-NEXT:    %[[C:.+]] = nn.conv %[[T]], %[[W]], %[[B]] {activation = #nn.activation<relu>, layout = "nhwc", pads = [1, 1, 1, 1]}
// CHECK-NEXT:    %[[Y:.+]] = nn.transpose %[[C]] {perm = [0, 3, 1, 2]} : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT:    func.return %[[Y]]

// With layout=keep, the same without any transpose.
// KEEP-LABEL: func.func @conv_bn_relu
// KEEP-NOT:     nn.transpose
// KEEP:         nn.conv %x, %{{.+}}, %{{.+}} {activation = #nn.activation<relu>, pads = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
// KEEP-NOT:     nn.transpose

// REMARK: graph-opt.mlir:[[# @LINE + 1]]:1: remark: convert-layout: 0 transposes before, 2 after (1 at inputs/outputs, 1 inside)
func.func @conv_bn_relu(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = nn.constant dense<0.5> : tensor<4x3x3x3xf32>
  %gamma = nn.constant dense<[1.0, 2.0, 0.5, 1.5]> : tensor<4xf32>
  %beta = nn.constant dense<[0.1, 0.2, 0.3, 0.4]> : tensor<4xf32>
  %mean = nn.constant dense<[0.0, 1.0, -1.0, 0.5]> : tensor<4xf32>
  %var = nn.constant dense<[1.0, 2.0, 0.5, 0.25]> : tensor<4xf32>
  %c = nn.conv %x, %w {pads = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %n = nn.batch_norm %c, %gamma, %beta, %mean, %var : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %r = nn.relu %n : tensor<1x4x8x8xf32>
  func.return %r : tensor<1x4x8x8xf32>
}

// -----

// A residual block: both BNs fold, the first ReLU and the one after the add fuse, and
// the whole block stays channels-last: no transpose between the stem and the output.

// CHECK-LABEL: func.func @residual
// CHECK-NOT:     nn.batch_norm
// CHECK-NOT:     nn.relu
// CHECK:         nn.transpose %x {perm = [0, 2, 3, 1]}
// CHECK-NEXT:    %[[STEM:.+]] = nn.conv {{.*}} {activation = #nn.activation<relu>, layout = "nhwc"}
// CHECK-NOT:     nn.transpose
// CHECK:         %[[C1:.+]] = nn.conv %[[STEM]], {{.*}} {activation = #nn.activation<relu>, layout = "nhwc", pads = [1, 1, 1, 1]}
// CHECK-NOT:     nn.transpose
// CHECK:         %[[C2:.+]] = nn.conv %[[C1]], {{.*}} {layout = "nhwc", pads = [1, 1, 1, 1]}
// CHECK-NEXT:    %[[SUM:.+]] = nn.add %[[C2]], %[[STEM]] {activation = #nn.activation<relu>} : tensor<1x8x8x4xf32>
// CHECK-NEXT:    %[[Y:.+]] = nn.transpose %[[SUM]] {perm = [0, 3, 1, 2]}
// CHECK-NEXT:    func.return %[[Y]]

// KEEP-LABEL: func.func @residual
// KEEP:         nn.add %{{.+}}, %{{.+}} {activation = #nn.activation<relu>} : tensor<1x4x8x8xf32>

// REMARK: graph-opt.mlir:[[# @LINE + 2]]:1: remark: convert-layout: 0 transposes before, 6 after (1 at inputs/outputs, 5 inside)
// REMARK: graph-opt.mlir:[[# @LINE + 1]]:1: remark: cancel-transposes: 6 transposes before, 2 after (at inputs/outputs)
func.func @residual(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w0 = nn.constant dense<0.2> : tensor<4x3x1x1xf32>
  %w1 = nn.constant dense<0.1> : tensor<4x4x3x3xf32>
  %w2 = nn.constant dense<-0.1> : tensor<4x4x3x3xf32>
  %gamma = nn.constant dense<[1.0, 2.0, 0.5, 1.5]> : tensor<4xf32>
  %beta = nn.constant dense<[0.1, 0.2, 0.3, 0.4]> : tensor<4xf32>
  %mean = nn.constant dense<[0.0, 1.0, -1.0, 0.5]> : tensor<4xf32>
  %var = nn.constant dense<[1.0, 2.0, 0.5, 0.25]> : tensor<4xf32>
  %c0 = nn.conv %x, %w0 : (tensor<1x3x8x8xf32>, tensor<4x3x1x1xf32>) -> tensor<1x4x8x8xf32>
  %r0 = nn.relu %c0 : tensor<1x4x8x8xf32>
  %c1 = nn.conv %r0, %w1 {pads = [1, 1, 1, 1]} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  %n1 = nn.batch_norm %c1, %gamma, %beta, %mean, %var : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %r1 = nn.relu %n1 : tensor<1x4x8x8xf32>
  %c2 = nn.conv %r1, %w2 {pads = [1, 1, 1, 1]} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  %n2 = nn.batch_norm %c2, %gamma, %beta, %mean, %var : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %sum = nn.add %n2, %r0 : tensor<1x4x8x8xf32>
  %r2 = nn.relu %sum : tensor<1x4x8x8xf32>
  func.return %r2 : tensor<1x4x8x8xf32>
}

// -----

// A classifier: the zero pad folds into the conv, ReLU6 fuses, the dropout goes,
// flatten becomes a reshape, and the pooled NHWC features reach the gemm without a
// transpose (1x1 spatial: the feature order is the same).

// CHECK-LABEL: func.func @classifier
// CHECK-NOT:     nn.pad
// CHECK:         %[[T:.+]] = nn.transpose %x {perm = [0, 2, 3, 1]}
// CHECK-NEXT:    %[[C:.+]] = nn.conv %[[T]], %{{.+}} {activation = #nn.activation<clip min = 0.0, max = 6.0>, layout = "nhwc", pads = [1, 1, 1, 1]} : (tensor<1x8x8x3xf32>, tensor<16x3x3x3xf32>) -> tensor<1x8x8x16xf32>
// CHECK-NEXT:    %[[G:.+]] = nn.global_average_pool %[[C]] {layout = "nhwc"} : (tensor<1x8x8x16xf32>) -> tensor<1x1x1x16xf32>
// CHECK-NEXT:    %[[F:.+]] = nn.reshape %[[G]] : (tensor<1x1x1x16xf32>) -> tensor<1x16xf32>
// CHECK-NOT:     nn.dropout
// CHECK-NOT:     nn.transpose
// CHECK:         %[[Y:.+]] = nn.gemm %[[F]], {{.*}} {trans_b = true}
// CHECK-NEXT:    func.return %[[Y]]

// With activations=relu, ReLU6 (a clip) stays a separate op.
// KEEP-LABEL: func.func @classifier
// KEEP:         %[[C:.+]] = nn.conv %x, %{{.+}} {pads = [1, 1, 1, 1]}
// KEEP-NEXT:    nn.clip %[[C]] {max = 6.0, min = 0.0}

func.func @classifier(%x: tensor<1x3x8x8xf32>) -> tensor<1x10xf32> {
  %p = nn.pad %x {pads = [0, 0, 1, 1, 0, 0, 1, 1]} : (tensor<1x3x8x8xf32>) -> tensor<1x3x10x10xf32>
  %w = nn.constant dense<0.1> : tensor<16x3x3x3xf32>
  %c = nn.conv %p, %w : (tensor<1x3x10x10xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x8x8xf32>
  %r = nn.clip %c {min = 0.0, max = 6.0} : tensor<1x16x8x8xf32>
  %g = nn.global_average_pool %r : (tensor<1x16x8x8xf32>) -> tensor<1x16x1x1xf32>
  %f = nn.flatten %g : (tensor<1x16x1x1xf32>) -> tensor<1x16xf32>
  %d = nn.dropout %f : tensor<1x16xf32>
  %fw = nn.constant dense<0.2> : tensor<10x16xf32>
  %fb = nn.constant dense<0.5> : tensor<10xf32>
  %y = nn.gemm %d, %fw, %fb {trans_b = true} : (tensor<1x16xf32>, tensor<10x16xf32>, tensor<10xf32>) -> tensor<1x10xf32>
  func.return %y : tensor<1x10xf32>
}

// -----

// Not fused: the conv's result is also returned, so the relu must stay.

// CHECK-LABEL: func.func @two_users
// CHECK:         %[[C:.+]] = nn.conv %{{.+}}, %{{.+}} {layout = "nhwc"}
// CHECK:         nn.relu %[[C]] : tensor<1x8x8x4xf32>

func.func @two_users(%x: tensor<1x3x8x8xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) {
  %w = nn.constant dense<0.1> : tensor<4x3x1x1xf32>
  %c = nn.conv %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x1x1xf32>) -> tensor<1x4x8x8xf32>
  %r = nn.relu %c : tensor<1x4x8x8xf32>
  func.return %c, %r : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>
}

// -----

// Not folded: a batch norm whose scale is a function argument stays (with a remark),
// and so does the relu after it; the layout is still converted.

// CHECK-LABEL: func.func @bn_of_arguments
// CHECK:         %[[C:.+]] = nn.conv %{{.+}}, %{{.+}} {layout = "nhwc"}
// CHECK-NEXT:    %[[N:.+]] = nn.batch_norm %[[C]], %gamma, %beta, %mean, %var {layout = "nhwc"}
// CHECK-NEXT:    nn.relu %[[N]] : tensor<1x8x8x4xf32>

// REMARK: graph-opt.mlir:[[# @LINE + 7]]:3: remark: nn.batch_norm not folded: its parameters are not constants with data
func.func @bn_of_arguments(%x: tensor<1x4x8x8xf32>, %gamma: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  %w = nn.constant dense<0.1> : tensor<4x4x1x1xf32>
  %beta = nn.constant dense<[0.1, 0.2, 0.3, 0.4]> : tensor<4xf32>
  %mean = nn.constant dense<[0.0, 1.0, -1.0, 0.5]> : tensor<4xf32>
  %var = nn.constant dense<[1.0, 2.0, 0.5, 0.25]> : tensor<4xf32>
  %c = nn.conv %x, %w : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %n = nn.batch_norm %c, %gamma, %beta, %mean, %var : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %r = nn.relu %n : tensor<1x4x8x8xf32>
  func.return %r : tensor<1x4x8x8xf32>
}

// -----

// A transpose of the model's own (swapping H and W) that is not the inverse of the
// layout's: it composes with the output transpose into one, at the output.

// CHECK-LABEL: func.func @swap_hw
// CHECK:         nn.transpose %x {perm = [0, 2, 3, 1]}
// CHECK-NEXT:    %[[C:.+]] = nn.conv {{.*}} {activation = #nn.activation<relu>, layout = "nhwc"}
// CHECK-NEXT:    %[[Y:.+]] = nn.transpose %[[C]] {perm = [0, 3, 2, 1]} : (tensor<1x8x6x4xf32>) -> tensor<1x4x6x8xf32>
// CHECK-NEXT:    func.return %[[Y]]

// KEEP-LABEL: func.func @swap_hw
// KEEP:         nn.transpose %{{.+}} {perm = [0, 1, 3, 2]}

func.func @swap_hw(%x: tensor<1x3x8x6xf32>) -> tensor<1x4x6x8xf32> {
  %w = nn.constant dense<0.1> : tensor<4x3x1x1xf32>
  %c = nn.conv %x, %w : (tensor<1x3x8x6xf32>, tensor<4x3x1x1xf32>) -> tensor<1x4x8x6xf32>
  %t = nn.transpose %c {perm = [0, 1, 3, 2]} : (tensor<1x4x8x6xf32>) -> tensor<1x4x6x8xf32>
  %r = nn.relu %t : tensor<1x4x6x8xf32>
  func.return %r : tensor<1x4x6x8xf32>
}

// -----

// Already channels-last: nothing to convert, no transpose; the relu fuses.

// CHECK-LABEL: func.func @channels_last
// CHECK-NOT:     nn.transpose
// CHECK:         %[[C:.+]] = nn.conv %x, %w {activation = #nn.activation<relu>, layout = "nhwc"}
// CHECK-NEXT:    func.return %[[C]]

func.func @channels_last(%x: tensor<1x8x8x3xf32>) -> tensor<1x8x8x4xf32> {
  %w = nn.constant dense<0.1> : tensor<4x1x1x3xf32>
  %c = nn.conv %x, %w {layout = "nhwc"} : (tensor<1x8x8x3xf32>, tensor<4x1x1x3xf32>) -> tensor<1x8x8x4xf32>
  %r = nn.relu %c : tensor<1x8x8x4xf32>
  func.return %r : tensor<1x8x8x4xf32>
}
