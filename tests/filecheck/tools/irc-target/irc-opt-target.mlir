// `irc-opt --target=NAME|FILE` loads the target once, before reading the input, and
// runs every pass with it as the active target. A bad target is an error (status 1)
// and no output is written.

// A preset, or a file: the passes run as usual.
// RUN: irc-opt %s --target=npu-demo -p cse | FileCheck %s
// RUN: irc-opt %s -target=%S/Inputs/my-npu.toml -p cse | FileCheck %s
// CHECK: func.func @f

// An unknown preset name: the closest preset as a hint.
// RUN: not irc-opt %s --target=ethos-u55 -p cse 2>&1 | FileCheck %s --check-prefix=NAME
// NAME:      irc-opt: error: unknown target 'ethos-u55'
// NAME-NEXT:   hint: did you mean 'ethos-u55-256'? the presets are edge-2tops, edge-2tops-2c, ethos-u55-128, ethos-u55-256, ethos-u65-256, ethos-u65-512, npu-demo; or give the path of a .toml target file
// NAME-NOT:  func.func

// A malformed target file: its diagnostics, located in the file.
// RUN: not irc-opt %s --target=%S/Inputs/absurd-value.toml 2>&1 | FileCheck %s --check-prefix=FILE
// FILE:      absurd-value.toml:10:1: error: mac_array.clock_mhz = 0 must be more than 0
// FILE-NEXT:   hint: clock_mhz: the NPU clock, in MHz
// FILE-NOT:  func.func

// RUN: not irc-opt %s --target=%S/Inputs/syntax-error.toml 2>&1 | FileCheck %s --check-prefix=SYNTAX
// SYNTAX: syntax-error.toml:42:11: error: invalid TOML: expected ']' at the end of a table declaration

// RUN: not irc-opt %s --target=%S/Inputs/no-such-file.toml 2>&1 | FileCheck %s --check-prefix=NOFILE
// NOFILE: no-such-file.toml: error: cannot read the target file: no such file

func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}
