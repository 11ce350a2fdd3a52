// `irc-target show` prints every field of a target in human units, as a target file
// with the derived figures in comments; its output is itself a valid target file.

// RUN: irc-target show npu-demo | FileCheck %s
// CHECK:      # npu-demo: irc's worked example: 256 int8 MACs at 500 MHz, DDR at 1 GB/s
// CHECK-NEXT: # source: npu-demo
// CHECK-NEXT: # 256 int8 MACs (16x16) at 500 MHz = 0.256 TOPS, 512 KiB SRAM, ddr 1 GB/s
// CHECK-NOT:  [cores]
// CHECK:      [mac_array]
// CHECK-NEXT: rows = 16 {{ +}}# rows of int8 MACs
// CHECK-NEXT: columns = 16
// CHECK-NEXT: clock_mhz = 500 {{ +}}# the NPU clock, in MHz
// CHECK-NEXT: # 256 MACs per cycle, 128 GMAC/s, 0.256 TOPS int8 peak (a MAC is two operations)
// CHECK:      [memories.sram]
// CHECK-NEXT: size_kib = 512
// CHECK-NEXT: banks = 4
// CHECK-NEXT: alignment_bytes = 64
// CHECK-NEXT: read_bandwidth_gb_per_s = 128
// CHECK:      port = "local"
// CHECK-NEXT: # 4 banks of 128 KiB
// CHECK-NEXT: # bytes per NPU cycle: 256 read, 256 written
// CHECK:      [memories.ddr]
// CHECK-NEXT: size_kib = 1048576
// CHECK-NEXT: alignment_bytes = 64
// CHECK-NEXT: read_bandwidth_gb_per_s = 1
// CHECK-NEXT: write_bandwidth_gb_per_s = 1
// CHECK-NEXT: read_latency_cycles = 100
// CHECK-NEXT: write_latency_cycles = 100
// CHECK-NEXT: burst_bytes = 64
// CHECK-NEXT: max_reads = 8
// CHECK-NEXT: max_writes = 8
// CHECK-NEXT: port = "axi"
// CHECK-NEXT: # bytes per NPU cycle: 2 read, 2 written
// CHECK-NEXT: # read latency 0.2 µs
// CHECK:      [placement]
// CHECK-NEXT: weights = "ddr"
// CHECK-NEXT: activations = ["ddr"]
// CHECK:      [host]
// CHECK-NEXT: gmacs_per_s = 2
// CHECK-NEXT: gelements_per_s = 0.5
// CHECK-NEXT: transition_us = 50
// CHECK-NEXT: bandwidth_gb_per_s = 2
// CHECK:      [ops]
// CHECK-NEXT: max_rank = 4
// CHECK-NEXT: max_dimension = 65535
// CHECK:      [ops.conv]
// CHECK-NEXT: spatial_dims = [1, 2]
// CHECK-NEXT: max_batch = 1
// CHECK-NEXT: max_kernel = 7
// CHECK-NEXT: strides = [1, 2]
// CHECK-NEXT: dilations = [1, 2]
// CHECK-NEXT: max_padding = 3
// CHECK-NEXT: max_input_channels = 4096
// CHECK-NEXT: max_output_channels = 4096
// CHECK-NEXT: groups = "depthwise"
// CHECK-NEXT: activations = ["relu", "clip", "leaky_relu"]
// CHECK-NEXT: constant_weights = true
// CHECK:      [ops.resize]
// CHECK-NEXT: max_batch = 1
// CHECK-NEXT: modes = ["nearest", "linear"]
// CHECK-NEXT: coordinate_transformation_modes = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"]
// CHECK-NEXT: min_scale = 1
// CHECK-NEXT: max_scale = 8
// CHECK:      # Not supported (run on the host):
// CHECK-NEXT: #   cast, ceil, celu, constant_of_shape, cumsum, div,

// A target file: `lut.entries` is not written for a target without a lookup table.
// RUN: irc-target show %S/Inputs/my-npu.toml | FileCheck %s --check-prefix=FILE
// FILE:      # my-npu: a 64-MAC NPU for keyword spotting
// FILE-NEXT: # source: {{.*}}Inputs/my-npu.toml
// FILE:      [lut]
// FILE-NEXT: supported = false
// FILE-NEXT: {{^$}}
// FILE:      [ops.conv]
// FILE-NEXT: max_kernel = 3

// A target of several cores: [cores] is written (a single core's is left out), and
// the peak counts every core.
// RUN: irc-target show edge-2tops-2c | FileCheck %s --check-prefix=CORES
// CORES:      # 2 cores x 1024 int8 MACs (32x32) at 1 GHz = 4.096 TOPS, 2 MiB SRAM a core, ddr 8 GB/s
// CORES:      [cores]
// CORES-NEXT: count = 2 {{ +}}# NPU cores, each with its own MAC array
// CORES-NEXT: sync_latency_cycles = 50 {{ +}}# NPU clock cycles from a signal on one core
// CORES-NEXT: # 2 cores: 4.096 TOPS int8 peak together; a signal reaches another core in 0.05 µs
// CORES:      [mac_array]
// CORES:      # 1024 MACs per cycle, 1024 GMAC/s, 2.048 TOPS int8 peak a core

// The output of `show` is a target file that loads, for every preset and for a file.
// RUN: irc-target show npu-demo > %t.npu-demo.toml && irc-target check %t.npu-demo.toml | FileCheck %s --check-prefix=AGAIN
// RUN: irc-target show ethos-u55-256 > %t.u55.toml && irc-target check %t.u55.toml | FileCheck %s --check-prefix=AGAIN
// RUN: irc-target show ethos-u65-512 > %t.u65.toml && irc-target check %t.u65.toml | FileCheck %s --check-prefix=AGAIN
// RUN: irc-target show edge-2tops > %t.edge.toml && irc-target check %t.edge.toml | FileCheck %s --check-prefix=AGAIN
// RUN: irc-target show edge-2tops-2c > %t.edge-2c.toml && irc-target check %t.edge-2c.toml | FileCheck %s --check-prefix=AGAIN
// RUN: irc-target show %S/Inputs/my-npu.toml > %t.my-npu.toml && irc-target check %t.my-npu.toml | FileCheck %s --check-prefix=AGAIN
// AGAIN: .toml: ok:

// An unknown preset is an error naming the closest one.
// RUN: not irc-target show npu-dmo 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN:      irc-target: error: unknown target 'npu-dmo'
// UNKNOWN-NEXT:   hint: did you mean 'npu-demo'? the presets are edge-2tops, edge-2tops-2c, ethos-u55-128, ethos-u55-256, ethos-u65-256, ethos-u65-512, npu-demo; or give the path of a .toml target file
