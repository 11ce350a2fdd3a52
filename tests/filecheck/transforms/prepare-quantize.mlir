// RUN: irc-opt %s -p prepare-quantize --mlir-print-debuginfo --weights inline --verify-each-numerics 2>&1 | FileCheck %s

// `prepare-quantize`: a per-channel affine x * s + t by constants becomes a depthwise
// 1x1 conv (weights s, bias t), and of ops that share a location all but the last are
// renamed NAME.OP, since calibration names each tensor by its op's location. The
// module computes what it computed (--verify-each-numerics).

// CHECK:      remark: prepare-quantize: 1 affine ops to depthwise convs, 1 ops renamed
// CHECK:      nn.constant dense<{{.*}}> : tensor<8x1x1x1xf32> loc("bn")
// CHECK-NEXT: nn.constant dense<[1.000000e-01, {{.*}}, 8.000000e-01]> : tensor<8xf32> loc("bn")
// CHECK-NEXT: %y = nn.conv %x, %{{.*}}, %{{.*}} {group = 8} : (tensor<1x8x4x4xf32>, tensor<8x1x1x1xf32>, tensor<8xf32>) -> tensor<1x8x4x4xf32> loc("bn")
// CHECK-NEXT: %a = nn.relu %y : tensor<1x8x4x4xf32> loc("act.relu"("act"))
// CHECK-NEXT: %b = nn.sigmoid %a : tensor<1x8x4x4xf32> loc("act")
// CHECK-NOT:  nn.mul
// CHECK-NOT:  nn.add
func.func @main(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %scale = nn.constant dense<[[[[0.5]], [[1.0]], [[1.5]], [[2.0]], [[2.5]], [[3.0]], [[3.5]], [[4.0]]]]> : tensor<1x8x1x1xf32>
  %shift = nn.constant dense<[[[[0.1]], [[0.2]], [[0.3]], [[0.4]], [[0.5]], [[0.6]], [[0.7]], [[0.8]]]]> : tensor<1x8x1x1xf32>
  %m = nn.mul %x, %scale : (tensor<1x8x4x4xf32>, tensor<1x8x1x1xf32>) -> tensor<1x8x4x4xf32> loc("bn")
  %y = nn.add %m, %shift : (tensor<1x8x4x4xf32>, tensor<1x8x1x1xf32>) -> tensor<1x8x4x4xf32> loc("bn")
  %a = nn.relu %y : tensor<1x8x4x4xf32> loc("act")
  %b = nn.sigmoid %a : tensor<1x8x4x4xf32> loc("act")
  func.return %b : tensor<1x8x4x4xf32>
}
