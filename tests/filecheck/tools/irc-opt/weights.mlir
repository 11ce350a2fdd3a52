// Constants with more than --weights-inline-limit elements (default 16) are printed
// as `dense_resource<name>` handles; --weights says where their bytes go.
// See docs/weights.md.

// elide (the default on stdout): nowhere. The IR stays small; the data is lost.
// RUN: irc-opt %s --weights-inline-limit=2 | FileCheck %s --check-prefix=ELIDE
// ELIDE:     %w = nn.constant dense_resource<weight> : tensor<4xf32>
// ELIDE-NOT: dialect_resources

// resource: into the file's resource section, as MLIR writes blobs.
// RUN: irc-opt %s --weights=resource --weights-inline-limit=2 | FileCheck %s --check-prefix=RESOURCE
// RESOURCE:      %w = nn.constant dense_resource<weight> : tensor<4xf32>
// RESOURCE:      {-#
// RESOURCE-NEXT:   dialect_resources: {
// RESOURCE-NEXT:     builtin: {
// RESOURCE-NEXT:       weight: "0x040000000000803F000000400000404000008040"

// inline: into the op, as hex.
// RUN: irc-opt %s --weights=inline --weights-inline-limit=2 | FileCheck %s --check-prefix=INLINE
// INLINE: %w = nn.constant dense<"0x0000803F000000400000404000008040"> : tensor<4xf32>

// sidecar (the default with -o FILE): into FILE.weights.npz, named by the module.
// RUN: rm -rf %t && mkdir -p %t
// RUN: irc-opt %s --weights-inline-limit=2 -o %t/model.mlir
// RUN: FileCheck %s --check-prefix=SIDECAR --input-file=%t/model.mlir
// SIDECAR: builtin.module attributes {irc.weights = "model.weights.npz"}
// SIDECAR: %w = nn.constant dense_resource<weight> : tensor<4xf32>

// resource, sidecar and inline are lossless: printed back inline, the values are intact.
// RUN: irc-opt %s --weights=resource --weights-inline-limit=2 | irc-opt | FileCheck %s --check-prefix=VALUES
// RUN: irc-opt %s --weights=inline --weights-inline-limit=2 | irc-opt | FileCheck %s --check-prefix=VALUES
// RUN: irc-opt %t/model.mlir | FileCheck %s --check-prefix=VALUES
// VALUES: %w = nn.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>

// A sidecar needs an output file.
// RUN: not irc-opt %s --weights=sidecar 2>&1 | FileCheck %s --check-prefix=NO-FILE
// NO-FILE: irc-opt: error: --weights=sidecar needs an output file

func.func @scale(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = nn.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32> loc("weight")
  %y = nn.mul %x, %w : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
