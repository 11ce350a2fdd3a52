// `irc-target support-table` prints a target's support table as Markdown: the limits
// shared by every op, one row per supported nn op with its limits in words, then the
// nn ops that are not supported.

// RUN: irc-target support-table npu-demo | FileCheck %s
// CHECK:      # Support table of npu-demo
// CHECK:      47 of 82 kinds of op run on the NPU, within the limits below; the others run on the host CPU.
// CHECK:      Every op: rank up to 4; dimensions up to 65535.
// CHECK:      | op | limits |
// CHECK-NEXT: |---|---|
// CHECK-NEXT: | `nn.abs` | none |
// CHECK-NEXT: | `nn.add` | fused activations: relu, clip |
// CHECK-NEXT: | `nn.average_pool` | 2-D only; batch up to 1; kernels up to 8x8; strides 1, 2; dilations 1; padding up to 3 per side |
// CHECK:      | `nn.conv` | 1-D and 2-D; batch up to 1; kernels up to 7x7; strides 1, 2; dilations 1, 2; padding up to 3 per side; up to 4096 input channels; up to 4096 output channels; group 1 or depthwise; fused activations: relu, clip, leaky_relu; constant weights |
// CHECK:      | `nn.gemm` | fused activations: relu, clip; constant weights; K up to 4096; N up to 4096; no transposed lhs |
// CHECK:      | `nn.resize` | batch up to 1; modes nearest, linear; coordinate modes half_pixel, pytorch_half_pixel, align_corners, asymmetric; scales down to 1; scales up to 8 |
// CHECK:      | `nn.sigmoid` | uses the LUT |
// CHECK:      | `nn.softmax` | uses the LUT; last axis only; axis size up to 4096 |
// CHECK:      ## Not supported
// CHECK-EMPTY:
// CHECK-NEXT: `nn.cast`, `nn.ceil`, `nn.celu`, `nn.constant_of_shape`, `nn.cumsum`, `nn.div`, {{.*}}`nn.lrn`,{{.*}}`nn.where`

// The Ethos-U presets: Vela's kernel, stride and resize constraints.
// RUN: irc-target support-table ethos-u55-256 | FileCheck %s --check-prefix=U55
// U55:      # Support table of ethos-u55-256
// U55:      34 of 82 kinds of op run on the NPU
// U55:      | `nn.average_pool` | 2-D only; batch up to 1; kernels up to 256x256; kernels spanning up to 65536 elements; kernels up to 8x8 when padded; strides 1, 2, 3; dilations 1; no ceil_mode; no count_include_pad with padding |
// U55:      | `nn.conv` | 2-D only; batch up to 1; dilated kernels up to 64x64; kernels spanning up to 4096 elements; strides 1, 2, 3; dilations 1, 2; group 1 or depthwise; fused activations: relu, clip, sigmoid; constant weights |
// U55:      | `nn.conv_transpose` | 2-D only; {{.*}}; strides 2; dilations 1; no grouped convolution;
// U55:      | `nn.resize` | batch up to 1; modes nearest, linear; coordinate modes asymmetric, align_corners, half_pixel; scales 2, 4, 8 |
// U55:      ## Not supported
// U55:      `nn.batch_norm`, {{.*}}`nn.div`, {{.*}}`nn.transpose`

// A target file.
// RUN: irc-target support-table %S/Inputs/my-npu.toml | FileCheck %s --check-prefix=FILE
// FILE:      5 of 82 kinds of op run on the NPU
// FILE:      Every op: rank up to 4.
// FILE:      | `nn.add` | none |
// FILE-NEXT: | `nn.average_pool` | kernels up to 8x8 |
// FILE-NEXT: | `nn.conv` | kernels up to 3x3; strides 1, 2; group 1 or depthwise; fused activations: relu, clip; constant weights |
// FILE-NEXT: | `nn.relu` | none |
// FILE-NEXT: | `nn.sigmoid` | uses the LUT; but the target has no LUT, so it runs on the host |
