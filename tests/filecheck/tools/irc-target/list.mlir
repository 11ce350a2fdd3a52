// `irc-target list` prints every preset with its description, one line each, sorted.

// RUN: irc-target list | FileCheck %s
// CHECK:      edge-2tops     A 2 TOPS edge NPU: 1024 int8 MACs at 1 GHz, 2 MiB SRAM, DDR at 8 GB/s
// CHECK-NEXT: edge-2tops-2c  Two cores, each as edge-2tops (1024 int8 MACs at 1 GHz, 2 MiB SRAM), sharing DDR at 8 GB/s
// CHECK-NEXT: ethos-u55-128  Ethos-U55-128-like in Vela's Ethos_U55_High_End_Embedded, Shared_Sram: 128 int8 MACs at 500 MHz
// CHECK-NEXT: ethos-u55-256  Ethos-U55-256-like in Vela's Ethos_U55_High_End_Embedded, Shared_Sram: 256 int8 MACs at 500 MHz
// CHECK-NEXT: ethos-u65-256  Ethos-U65-256-like in Vela's Ethos_U65_Client_Server, Dedicated_Sram_384KB: 256 int8 MACs at 1 GHz
// CHECK-NEXT: ethos-u65-512  Ethos-U65-512-like in Vela's Ethos_U65_Client_Server, Dedicated_Sram_384KB: 2 cores of 256 int8 MACs at 1 GHz
// CHECK-NEXT: npu-demo       irc's worked example: 256 int8 MACs at 500 MHz, DDR at 1 GB/s
// CHECK-EMPTY:

// A malformed command line exits with status 2.
// RUN: not irc-target 2>&1 | FileCheck %s --check-prefix=USAGE
// RUN: not irc-target frobnicate 2>&1 | FileCheck %s --check-prefix=USAGE
// USAGE: usage: irc-target
