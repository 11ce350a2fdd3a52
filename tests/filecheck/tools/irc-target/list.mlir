// `irc-target list` prints every preset with its description, one line each, sorted.

// RUN: irc-target list | FileCheck %s
// CHECK:      edge-2tops     A 2 TOPS edge NPU: 1024 int8 MACs at 1 GHz, 2 MiB SRAM, DDR at 8 GB/s
// CHECK-NEXT: ethos-u55-256  Ethos-U55-256-like: 256 int8 MACs at 500 MHz, 384 KiB SRAM, flash at 0.5 GB/s
// CHECK-NEXT: ethos-u65-512  Ethos-U65-512-like: 512 int8 MACs at 1 GHz, 512 KiB SRAM, DRAM at 3.75 GB/s
// CHECK-NEXT: npu-demo       irc's worked example: 256 int8 MACs at 500 MHz, DDR at 1 GB/s
// CHECK-EMPTY:

// A malformed command line exits with status 2.
// RUN: not irc-target 2>&1 | FileCheck %s --check-prefix=USAGE
// RUN: not irc-target frobnicate 2>&1 | FileCheck %s --check-prefix=USAGE
// USAGE: usage: irc-target
