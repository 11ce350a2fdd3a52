// `--list-passes` prints every registered pass with its summary, then its options
// with their types, help and defaults, as `mlir-opt --list-passes` does.
// RUN: irc-opt --list-passes | FileCheck %s

// CHECK:      Available Passes:
// CHECK-NEXT:   --apply-rules {{ +}}-   Apply the rewrite rules of rule files greedily until nothing changes.
// CHECK:        --canonicalize {{ +}}-   Simplify IR with each op's canonicalization patterns and folders, and remove dead ops.
// CHECK-NEXT:     --top-down=<bool> {{ +}}- visit ops from first to last (false: from last to first) (default: true)
// CHECK-NEXT:     --enable-patterns=<string,...> {{ +}}- apply only the patterns with these names (rule names; empty: all)
// CHECK-NEXT:     --disable-patterns=<string,...> {{ +}}- do not apply the patterns with these names
// CHECK:        --cse {{ +}}-   Merge identical side-effect-free ops (common subexpression elimination).
// CHECK:        --dce {{ +}}-   Erase side-effect-free ops whose results are unused (dead code elimination).
// CHECK:        --fold-constants {{ +}}-   {{.+}}
