// RUN: irc-opt %s --split-input-file --verify-diagnostics -p convert-layout | FileCheck %s
// RUN: irc-opt %s --split-input-file -p 'convert-layout{cancel=false}' 2>/dev/null | FileCheck %s --check-prefix=RAW
// RUN: irc-opt %s --split-input-file -p 'convert-layout{layout=nchw}' 2>/dev/null | FileCheck %s --check-prefix=NCHW

// A conv goes NHWC: its constant weight (O,I,kh,kw) becomes a new (O,kh,kw,I)
// constant, its input is transposed, and one transpose after it goes back to NCHW.
// With cancellation (the default), that transpose sinks through the relu to the
// result: the two that remain are at the input and the output.
// CHECK-LABEL: func.func @conv_relu
// CHECK-NEXT:    %[[W:.*]] = nn.constant dense<{{\[\[\[\[}}1.000000e+00, 2.000000e+00]]], {{\[\[\[}}3.000000e+00, 4.000000e+00]]], {{\[\[\[}}5.000000e+00, 6.000000e+00]]]]> : tensor<3x1x1x2xf32>
// CHECK-NEXT:    %[[T:.*]] = nn.transpose %x {perm = [0, 2, 3, 1]} : (tensor<1x2x4x4xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %[[C:.*]] = nn.conv %[[T]], %[[W]] {layout = "nhwc"} : (tensor<1x4x4x2xf32>, tensor<3x1x1x2xf32>) -> tensor<1x4x4x3xf32>
// CHECK-NEXT:    %[[R:.*]] = nn.relu %[[C]] : tensor<1x4x4x3xf32>
// CHECK-NEXT:    %[[Y:.*]] = nn.transpose %[[R]] {perm = [0, 3, 1, 2]} : (tensor<1x4x4x3xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:    func.return %[[Y]]
// RAW-LABEL:   func.func @conv_relu
// RAW:           %[[T:.*]] = nn.transpose %x {perm = [0, 2, 3, 1]}
// RAW-NEXT:      %[[C:.*]] = nn.conv %[[T]], %{{.*}} {layout = "nhwc"}
// RAW-NEXT:      %[[B:.*]] = nn.transpose %[[C]] {perm = [0, 3, 1, 2]}
// RAW-NEXT:      nn.relu %[[B]] : tensor<1x3x4x4xf32>
// expected-remark @+1 {{convert-layout: 0 transposes before, 2 after (at inputs/outputs)}}
func.func @conv_relu(%x: tensor<1x2x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %w = nn.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]], [[[5.0]], [[6.0]]]]> : tensor<3x2x1x1xf32>
  %c = nn.conv %x, %w : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %r = nn.relu %c : tensor<1x3x4x4xf32>
  func.return %r : tensor<1x3x4x4xf32>
}

// -----

// A ResNet-style block: conv, batch norm, relu, conv, residual add, global pool,
// flatten. The four spatial ops get eight transposes; after cancellation everything
// runs in NHWC, the pooled (1,1,1,C) map needs no transpose to be flattened, and the
// only transpose left is at the input.
// CHECK-LABEL: func.func @residual_block
// CHECK-NEXT:    %[[W:.*]] = nn.constant dense<5.000000e-01> : tensor<2x3x3x2xf32>
// CHECK:         %[[T:.*]] = nn.transpose %x {perm = [0, 2, 3, 1]}
// CHECK-NEXT:    %[[C1:.*]] = nn.conv %[[T]], %[[W]] {layout = "nhwc", pads = [1, 1, 1, 1]}
// CHECK-NEXT:    %[[N:.*]] = nn.batch_norm %[[C1]], {{.*}} {layout = "nhwc"} : (tensor<1x4x4x2xf32>, tensor<2xf32>
// CHECK-NEXT:    %[[R:.*]] = nn.relu %[[N]] : tensor<1x4x4x2xf32>
// CHECK-NEXT:    %[[C2:.*]] = nn.conv %[[R]], %[[W]] {layout = "nhwc", pads = [1, 1, 1, 1]}
// CHECK-NEXT:    %[[S:.*]] = nn.add %[[C2]], %[[R]] : tensor<1x4x4x2xf32>
// CHECK-NEXT:    %[[P:.*]] = nn.global_average_pool %[[S]] {layout = "nhwc"} : (tensor<1x4x4x2xf32>) -> tensor<1x1x1x2xf32>
// CHECK-NEXT:    %[[F:.*]] = nn.reshape %[[P]] : (tensor<1x1x1x2xf32>) -> tensor<1x2xf32>
// CHECK-NEXT:    func.return %[[F]]
// RAW-LABEL:   func.func @residual_block
// RAW-COUNT-8:   nn.transpose
// RAW-NOT:       nn.transpose
// RAW:           func.return
// expected-remark @+1 {{convert-layout: 0 transposes before, 1 after (at inputs/outputs)}}
func.func @residual_block(%x: tensor<1x2x4x4xf32>) -> tensor<1x2xf32> {
  %w = nn.constant dense<0.5> : tensor<2x2x3x3xf32>
  %g = nn.constant dense<1.0> : tensor<2xf32>
  %b = nn.constant dense<0.0> : tensor<2xf32>
  %c1 = nn.conv %x, %w {pads = [1, 1, 1, 1]} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
  %n1 = nn.batch_norm %c1, %g, %b, %b, %g : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %r1 = nn.relu %n1 : tensor<1x2x4x4xf32>
  %c2 = nn.conv %r1, %w {pads = [1, 1, 1, 1]} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
  %s = nn.add %c2, %r1 : tensor<1x2x4x4xf32>
  %p = nn.global_average_pool %s : (tensor<1x2x4x4xf32>) -> tensor<1x2x1x1xf32>
  %f = nn.flatten %p : (tensor<1x2x1x1xf32>) -> tensor<1x2xf32>
  func.return %f : tensor<1x2xf32>
}

// -----

// A VGG-style classifier: the NCHW flatten of the conv's (1,2,2,2) map feeds a
// gemm. The gemm takes the NHWC flatten instead, with its weight permuted
// (feature c*4 + h*2 + w moves to h*4 + w*2 + c).
// CHECK-LABEL: func.func @classifier
// CHECK:         %[[C:.*]] = nn.conv %{{.*}}, %{{.*}} {layout = "nhwc"} : (tensor<1x2x2x2xf32>, tensor<2x1x1x2xf32>) -> tensor<1x2x2x2xf32>
// CHECK-NEXT:    %[[F:.*]] = nn.reshape %[[C]] : (tensor<1x2x2x2xf32>) -> tensor<1x8xf32>
// CHECK-NEXT:    %[[V:.*]] = nn.constant dense<{{\[\[}}0.000000e+00, 4.000000e+00, 1.000000e+00, 5.000000e+00, 2.000000e+00, 6.000000e+00, 3.000000e+00, 7.000000e+00]]> : tensor<1x8xf32>
// CHECK-NEXT:    %[[Y:.*]] = nn.gemm %[[F]], %[[V]] {trans_b = true}
// CHECK-NEXT:    func.return %[[Y]]
// expected-remark @+1 {{convert-layout: 0 transposes before, 1 after (at inputs/outputs)}}
func.func @classifier(%x: tensor<1x2x2x2xf32>) -> tensor<1x1xf32> {
  %w = nn.constant dense<[[[[1.0]], [[0.5]]], [[[-1.0]], [[2.0]]]]> : tensor<2x2x1x1xf32>
  %c = nn.conv %x, %w : (tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %f = nn.reshape %c : (tensor<1x2x2x2xf32>) -> tensor<1x8xf32>
  %v = nn.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]]> : tensor<1x8xf32>
  %y = nn.gemm %f, %v {trans_b = true} : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x1xf32>
  func.return %y : tensor<1x1xf32>
}

// -----

// A weight shared by two convs is transposed once.
// CHECK-LABEL: func.func @shared_weight
// CHECK-NEXT:    %[[W:.*]] = nn.constant {{.*}} : tensor<2x1x1x2xf32>
// CHECK-NOT:     nn.constant
// CHECK:         nn.conv %{{.*}}, %[[W]] {layout = "nhwc"}
// CHECK-NEXT:    nn.conv %{{.*}}, %[[W]] {layout = "nhwc"}
// expected-remark @+1 {{convert-layout: 0 transposes before, 2 after (at inputs/outputs)}}
func.func @shared_weight(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = nn.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>
  %a = nn.conv %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %b = nn.conv %a, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  func.return %b : tensor<1x2x4x4xf32>
}

// -----

// Must not fire: the ops are already NHWC. With layout=nchw they go back to NCHW
// (the weight to (O,I,kh,kw)), between transposes at the input and the output.
// CHECK-LABEL: func.func @already_nhwc
// CHECK-NEXT:    nn.constant
// CHECK-NEXT:    nn.conv %x, %w {layout = "nhwc"}
// CHECK-NEXT:    nn.max_pool %{{.*}} {kernel_shape = [2, 2], layout = "nhwc", strides = [2, 2]}
// CHECK-NEXT:    func.return
// NCHW-LABEL:  func.func @already_nhwc
// NCHW-NEXT:     %[[W:.*]] = nn.constant dense<{{\[\[\[\[}}1.000000e+00]], {{\[\[}}2.000000e+00]]], {{\[\[\[}}3.000000e+00]], {{\[\[}}4.000000e+00]]]]> : tensor<2x2x1x1xf32>
// NCHW-NEXT:     %[[T:.*]] = nn.transpose %x {perm = [0, 3, 1, 2]} : (tensor<1x4x4x2xf32>) -> tensor<1x2x4x4xf32>
// NCHW-NEXT:     %[[C:.*]] = nn.conv %[[T]], %[[W]] : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
// NCHW-NEXT:     %[[P:.*]] = nn.max_pool %[[C]] {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
// NCHW-NEXT:     %[[Y:.*]] = nn.transpose %[[P]] {perm = [0, 2, 3, 1]}
// NCHW-NEXT:     func.return %[[Y]]
// expected-remark @+1 {{convert-layout: 0 transposes before, 0 after}}
func.func @already_nhwc(%x: tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = nn.constant dense<[[[[1.0, 2.0]]], [[[3.0, 4.0]]]]> : tensor<2x1x1x2xf32>
  %c = nn.conv %x, %w {layout = "nhwc"} : (tensor<1x4x4x2xf32>, tensor<2x1x1x2xf32>) -> tensor<1x4x4x2xf32>
  %p = nn.max_pool %c {kernel_shape = [2, 2], layout = "nhwc", strides = [2, 2]} : (tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32>
  func.return %p : tensor<1x2x2x2xf32>
}

// -----

// Must not fire: a matmul with a non-constant operand depends on the order of the
// axes, so the transpose back to NCHW stays in front of it, inside the function.
// CHECK-LABEL: func.func @matmul_after_pool
// CHECK:         %[[P:.*]] = nn.max_pool %{{.*}} {kernel_shape = [1, 2], layout = "nhwc"}
// CHECK-NEXT:    %[[B:.*]] = nn.transpose %[[P]] {perm = [0, 3, 1, 2]} : (tensor<1x4x3x2xf32>) -> tensor<1x2x4x3xf32>
// CHECK-NEXT:    nn.matmul %[[B]], %m
// expected-remark @+1 {{convert-layout: 0 transposes before, 2 after (1 at inputs/outputs, 1 inside)}}
func.func @matmul_after_pool(%x: tensor<1x2x4x4xf32>, %m: tensor<3x5xf32>) -> tensor<1x2x4x5xf32> {
  %p = nn.max_pool %x {kernel_shape = [1, 2]} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x3xf32>
  %y = nn.matmul %p, %m : (tensor<1x2x4x3xf32>, tensor<3x5xf32>) -> tensor<1x2x4x5xf32>
  func.return %y : tensor<1x2x4x5xf32>
}
