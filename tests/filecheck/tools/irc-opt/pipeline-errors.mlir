// Errors in a pipeline are reported at their column in the pipeline text, with a
// hint, before the input is read; irc-opt exits with 1.

// RUN: not irc-opt %s -p canonicalise 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN:      <pass-pipeline>:1:1: error: unknown pass 'canonicalise'
// UNKNOWN-NEXT:   hint: did you mean 'canonicalize'?

// RUN: not irc-opt %s -p 'cse,no-such-pass' 2>&1 | FileCheck %s --check-prefix=COLUMN
// COLUMN:      <pass-pipeline>:1:5: error: unknown pass 'no-such-pass'
// COLUMN-NEXT:   hint: run `irc-opt --list-passes` to see every pass

// RUN: not irc-opt %s -p 'canonicalize{top-dawn=false}' 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION:      <pass-pipeline>:1:14: error: 'canonicalize' has no option 'top-dawn'
// OPTION-NEXT:   hint: options of 'canonicalize': top-down, enable-patterns, disable-patterns

// RUN: not irc-opt %s -p 'cse{top-down=false}' 2>&1 | FileCheck %s --check-prefix=NO-OPTIONS
// NO-OPTIONS:      <pass-pipeline>:1:5: error: 'cse' has no option 'top-down'
// NO-OPTIONS-NEXT:   hint: 'cse' has no options

// RUN: not irc-opt %s -p 'canonicalize{top-down=maybe}' 2>&1 | FileCheck %s --check-prefix=VALUE
// VALUE:      <pass-pipeline>:1:23: error: invalid value for option 'top-down' of 'canonicalize': expected true or false, got 'maybe'
// VALUE-NEXT:   hint: 'top-down' takes a value of type <bool>

// RUN: not irc-opt %s -p 'cse,,dce' 2>&1 | FileCheck %s --check-prefix=SYNTAX
// SYNTAX: <pass-pipeline>:1:5: error: expected a pass name, found ','

// RUN: not irc-opt %s -p 'canonicalize{top-down=true' 2>&1 | FileCheck %s --check-prefix=BRACE
// BRACE: <pass-pipeline>:1:13: error: missing '}' to close the options of 'canonicalize'

// RUN: not irc-opt %s --pass-pipeline='builtin.module(cse' 2>&1 | FileCheck %s --check-prefix=PAREN
// PAREN: <pass-pipeline>:1:19: error: expected ',' or ')' in 'builtin.module(...)', found the end of the pipeline

// irc's passes are module passes: other anchors are an error.
// RUN: not irc-opt %s --pass-pipeline='builtin.module(func.func(cse))' 2>&1 | FileCheck %s --check-prefix=ANCHOR
// ANCHOR:      <pass-pipeline>:1:16: error: cannot anchor passes on 'func.func': irc's passes are module passes
// ANCHOR-NEXT:   hint: anchor them on the module: 'builtin.module(...)'

// --pass-pipeline must be anchored, as in mlir-opt; -p takes the flat form.
// RUN: not irc-opt %s --pass-pipeline='cse,dce' 2>&1 | FileCheck %s --check-prefix=UNANCHORED
// UNANCHORED:      <pass-pipeline>:1:1: error: a --pass-pipeline must be anchored on the module
// UNANCHORED-NEXT:   hint: write it as 'builtin.module(cse,dce)', or use -p for a flat list

// RUN: not irc-opt %s -p cse --pass-pipeline='builtin.module(dce)' 2>&1 | FileCheck %s --check-prefix=BOTH
// BOTH: irc-opt: error: --pass-pipeline and -p cannot be used together

func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}
