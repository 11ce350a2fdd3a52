// RUN: irc-opt %s --split-input-file -p fuse-activation | FileCheck %s
// RUN: irc-opt %s --split-input-file -p 'fuse-activation{activations=relu producers=nn.conv}' | FileCheck %s --check-prefix=RESTRICTED

// `fuse-activation` turns an activation op whose operand comes from a conv,
// conv_transpose, gemm, matmul or add (and is used by nothing else) into that op's
// `activation` property. The second RUN line fuses only relus, only into convs.

// CHECK-LABEL: func.func @conv_relu
// CHECK-NEXT:    %y = nn.conv %x, %w, %b {activation = #nn.activation<relu>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
// CHECK-NEXT:    func.return %y
// RESTRICTED-LABEL: func.func @conv_relu
// RESTRICTED-NEXT:    %y = nn.conv %x, %w, %b {activation = #nn.activation<relu>}
// RESTRICTED-NEXT:    func.return %y
func.func @conv_relu(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x6x6xf32> {
  %y = nn.conv %x, %w, %b : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %r = nn.relu %y : tensor<1x4x6x6xf32>
  func.return %r : tensor<1x4x6x6xf32>
}

// -----

// ReLU6 is a clip with both bounds; the kind (clip) is not in the restricted list.
// CHECK-LABEL: func.func @conv_relu6
// CHECK-NEXT:    %y = nn.conv %x, %w {activation = #nn.activation<clip min = 0.0, max = 6.0>}
// CHECK-NEXT:    func.return %y
// RESTRICTED-LABEL: func.func @conv_relu6
// RESTRICTED-NEXT:    %y = nn.conv %x, %w :
// RESTRICTED-NEXT:    %r = nn.clip %y {max = 6.0, min = 0.0}
func.func @conv_relu6(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %y = nn.conv %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %r = nn.clip %y {min = 0.0, max = 6.0} : tensor<1x4x6x6xf32>
  func.return %r : tensor<1x4x6x6xf32>
}

// -----

// Every producer takes every kind; nn.gemm is not a producer in the restricted run.
// CHECK-LABEL: func.func @producers
// CHECK-NEXT:    %t = nn.conv_transpose %x, %w {activation = #nn.activation<leaky_relu alpha = 0.1>}
// CHECK-NEXT:    %g = nn.gemm %a, %b {activation = #nn.activation<sigmoid>}
// CHECK-NEXT:    %m = nn.matmul %a, %b {activation = #nn.activation<hard_swish>}
// CHECK-NEXT:    %s = nn.add %g, %m {activation = #nn.activation<clip min = -1.0, max = 1.0>}
// CHECK-NEXT:    func.return %t, %s
// RESTRICTED-LABEL: func.func @producers
// RESTRICTED-NOT:     activation
// RESTRICTED:         func.return
func.func @producers(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3x3xf32>, %a: tensor<3x5xf32>, %b: tensor<5x4xf32>) -> (tensor<1x2x6x6xf32>, tensor<3x4xf32>) {
  %t = nn.conv_transpose %x, %w : (tensor<1x3x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x2x6x6xf32>
  %t_act = nn.leaky_relu %t {alpha = 0.1} : tensor<1x2x6x6xf32>
  %g = nn.gemm %a, %b : (tensor<3x5xf32>, tensor<5x4xf32>) -> tensor<3x4xf32>
  %g_act = nn.sigmoid %g : tensor<3x4xf32>
  %m = nn.matmul %a, %b : (tensor<3x5xf32>, tensor<5x4xf32>) -> tensor<3x4xf32>
  %m_act = nn.hard_swish %m : tensor<3x4xf32>
  %s = nn.add %g_act, %m_act : tensor<3x4xf32>
  %s_act = nn.clip %s {min = -1.0, max = 1.0} : tensor<3x4xf32>
  func.return %t_act, %s_act : tensor<1x2x6x6xf32>, tensor<3x4xf32>
}

// -----

// A clip with only min = 0 is a relu; a clip with any other single bound has no
// fused form (#nn.activation<clip> needs both bounds) and stays.
// CHECK-LABEL: func.func @one_sided_clips
// CHECK-NEXT:    %p = nn.add %x, %x {activation = #nn.activation<relu>}
// CHECK-NEXT:    %q = nn.add %p, %x : tensor<8xf32>
// CHECK-NEXT:    %q_clip = nn.clip %q {max = 6.0}
// CHECK-NEXT:    %r = nn.add %q_clip, %x : tensor<8xf32>
// CHECK-NEXT:    %r_clip = nn.clip %r {min = 1.0}
// CHECK-NEXT:    func.return %r_clip
func.func @one_sided_clips(%x: tensor<8xf32>) -> tensor<8xf32> {
  %p = nn.add %x, %x : tensor<8xf32>
  %p_clip = nn.clip %p {min = 0.0} : tensor<8xf32>
  %q = nn.add %p_clip, %x : tensor<8xf32>
  %q_clip = nn.clip %q {max = 6.0} : tensor<8xf32>
  %r = nn.add %q_clip, %x : tensor<8xf32>
  %r_clip = nn.clip %r {min = 1.0} : tensor<8xf32>
  func.return %r_clip : tensor<8xf32>
}

// -----

// Must not fire: the conv's result has a second user, which needs it unactivated.
// CHECK-LABEL: func.func @two_users
// CHECK-NEXT:    %y = nn.conv %x, %w :
// CHECK-NEXT:    %r = nn.relu %y
// CHECK-NEXT:    %s = nn.add %y, %r
// CHECK-NEXT:    func.return %s
func.func @two_users(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %y = nn.conv %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %r = nn.relu %y : tensor<1x4x6x6xf32>
  %s = nn.add %y, %r : tensor<1x4x6x6xf32>
  func.return %s : tensor<1x4x6x6xf32>
}

// -----

// Must not fire: nn.sub takes no activation, and a function argument has no producer.
// CHECK-LABEL: func.func @no_producer
// CHECK-NEXT:    %d = nn.sub %x, %y : tensor<8xf32>
// CHECK-NEXT:    %r = nn.relu %d
// CHECK-NEXT:    %s = nn.sigmoid %x
// CHECK-NEXT:    func.return %r, %s
func.func @no_producer(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %d = nn.sub %x, %y : tensor<8xf32>
  %r = nn.relu %d : tensor<8xf32>
  %s = nn.sigmoid %x : tensor<8xf32>
  func.return %r, %s : tensor<8xf32>, tensor<8xf32>
}

// -----

// Chains: the first activation fuses, and a second one is absorbed where the pair is
// exactly one activation: relu then relu is relu, relu then clip(a >= 0, b) is the
// clip, and clip(a >= 0, b >= 0) then relu is the clip.
// CHECK-LABEL: func.func @absorbed
// CHECK-NEXT:    %p = nn.add %x, %x {activation = #nn.activation<relu>}
// CHECK-NEXT:    %q = nn.add %p, %x {activation = #nn.activation<clip min = 0.0, max = 6.0>}
// CHECK-NEXT:    %r = nn.add %q, %x {activation = #nn.activation<clip min = 0.5, max = 4.0>}
// CHECK-NEXT:    func.return %r
// RESTRICTED-LABEL: func.func @absorbed
// RESTRICTED-NEXT:    %p = nn.add %x, %x : tensor<8xf32>
// RESTRICTED-NEXT:    %p_relu = nn.relu %p
func.func @absorbed(%x: tensor<8xf32>) -> tensor<8xf32> {
  %p = nn.add %x, %x : tensor<8xf32>
  %p_relu = nn.relu %p : tensor<8xf32>
  %p_again = nn.relu %p_relu : tensor<8xf32>
  %q = nn.add %p_again, %x : tensor<8xf32>
  %q_relu = nn.relu %q : tensor<8xf32>
  %q_relu6 = nn.clip %q_relu {min = 0.0, max = 6.0} : tensor<8xf32>
  %r = nn.add %q_relu6, %x : tensor<8xf32>
  %r_clip = nn.clip %r {min = 0.5, max = 4.0} : tensor<8xf32>
  %r_relu = nn.relu %r_clip : tensor<8xf32>
  func.return %r_relu : tensor<8xf32>
}

// -----

// Must not fire: an existing activation that the next one does not compose with
// exactly (sigmoid then relu, relu then a clip below zero, a clip below zero then
// relu, relu then leaky_relu).
// CHECK-LABEL: func.func @not_absorbed
// CHECK-NEXT:    %p = nn.add %x, %x {activation = #nn.activation<sigmoid>}
// CHECK-NEXT:    %p_relu = nn.relu %p
// CHECK-NEXT:    %q = nn.add %p_relu, %x {activation = #nn.activation<relu>}
// CHECK-NEXT:    %q_clip = nn.clip %q {max = 1.0, min = -1.0}
// CHECK-NEXT:    %r = nn.add %q_clip, %x {activation = #nn.activation<clip min = -1.0, max = 1.0>}
// CHECK-NEXT:    %r_relu = nn.relu %r
// CHECK-NEXT:    %s = nn.add %r_relu, %x {activation = #nn.activation<relu>}
// CHECK-NEXT:    %s_leaky = nn.leaky_relu %s
// CHECK-NEXT:    func.return %s_leaky
func.func @not_absorbed(%x: tensor<8xf32>) -> tensor<8xf32> {
  %p = nn.add %x, %x {activation = #nn.activation<sigmoid>} : tensor<8xf32>
  %p_relu = nn.relu %p : tensor<8xf32>
  %q = nn.add %p_relu, %x {activation = #nn.activation<relu>} : tensor<8xf32>
  %q_clip = nn.clip %q {min = -1.0, max = 1.0} : tensor<8xf32>
  %r = nn.add %q_clip, %x : tensor<8xf32>
  %r_clip = nn.clip %r {min = -1.0, max = 1.0} : tensor<8xf32>
  %r_relu = nn.relu %r_clip : tensor<8xf32>
  %s = nn.add %r_relu, %x {activation = #nn.activation<relu>} : tensor<8xf32>
  %s_leaky = nn.leaky_relu %s {alpha = 0.2} : tensor<8xf32>
  func.return %s_leaky : tensor<8xf32>
}
