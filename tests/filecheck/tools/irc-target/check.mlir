// `irc-target check FILE` validates a target file: `FILE: ok: ...` and status 0, or one
// diagnostic per problem, at the line and column of the offending key, with a hint,
// and status 1. Each Inputs/ file is Inputs/my-npu.toml with the mistake its first
// line describes.

// RUN: irc-target check %S/Inputs/my-npu.toml | FileCheck %s --check-prefix=OK
// OK: Inputs/my-npu.toml: ok: my-npu, 64 int8 MACs (8x8) at 200 MHz = 0.026 TOPS, 128 KiB SRAM, flash 200 MB/s, system_sram 1.6 GB/s

// A missing key is reported at its table's header.
// RUN: not irc-target check %S/Inputs/missing-field.toml 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING:      missing-field.toml:17:1: error: [memories.sram] is missing 'port'
// MISSING-NEXT:   hint: add port = ... (port: the port it sits on: memories on one port share its bandwidth)
// MISSING-NOT:  error:

// RUN: not irc-target check %S/Inputs/wrong-type.toml 2>&1 | FileCheck %s --check-prefix=TYPE
// TYPE:      wrong-type.toml:14:1: error: data_types.int16 must be true or false, got the string "no"
// TYPE-NEXT:   hint: int16 takes true or false: int16 tensors
// TYPE-NOT:  error:

// RUN: not irc-target check %S/Inputs/absurd-value.toml 2>&1 | FileCheck %s --check-prefix=ABSURD
// ABSURD:      absurd-value.toml:10:1: error: mac_array.clock_mhz = 0 must be more than 0
// ABSURD-NEXT:   hint: clock_mhz: the NPU clock, in MHz
// ABSURD-NOT:  error:

// RUN: not irc-target check %S/Inputs/int8-false.toml 2>&1 | FileCheck %s --check-prefix=INT8
// INT8:      int8-false.toml:13:1: error: data_types.int8 = false: every target must support int8
// INT8-NEXT:   hint: set int8 = true: irc compiles models to int8
// INT8-NOT:  error:

// RUN: not irc-target check %S/Inputs/sram-rows.toml 2>&1 | FileCheck %s --check-prefix=ROWS
// ROWS:      sram-rows.toml:18:1: error: memories.sram.size_kib = 100 is not a whole number of aligned bank rows: 102400 bytes is not a multiple of banks x alignment_bytes = 3 x 16 = 48
// ROWS-NEXT:   hint: make size_kib a multiple of 3, or change banks or alignment_bytes
// ROWS-NOT:  error:

// A misspelt key is reported once, as unknown, with the key it resembles.
// RUN: not irc-target check %S/Inputs/unknown-key.toml 2>&1 | FileCheck %s --check-prefix=KEY
// KEY:      unknown-key.toml:10:1: error: unknown key 'clock_hz' in [mac_array]
// KEY-NEXT:   hint: did you mean 'clock_mhz' (clock_mhz: the NPU clock, in MHz)? [mac_array] takes rows, columns, clock_mhz
// KEY-NOT:  error:

// RUN: not irc-target check %S/Inputs/unknown-op.toml 2>&1 | FileCheck %s --check-prefix=OP
// OP:      unknown-op.toml:70:1: error: unknown op 'AveragePool' in the support table
// OP-NEXT:   hint: did you mean 'average_pool'? the names are those of nn ops without 'nn.' (docs/nn-ops.md)
// OP-NOT:  error:

// RUN: not irc-target check %S/Inputs/bad-limit.toml 2>&1 | FileCheck %s --check-prefix=LIMIT
// LIMIT:      bad-limit.toml:69:1: error: 'max_kernel' is not a limit of nn.relu
// LIMIT-NEXT:   hint: limits of nn.relu: max_rank, max_dimension, needs_lut; 'max_kernel' applies to average_pool, conv, conv_transpose, max_pool
// LIMIT-NOT:  error:

// RUN: not irc-target check %S/Inputs/bad-limit-value.toml 2>&1 | FileCheck %s --check-prefix=VALUE
// VALUE:      bad-limit-value.toml:63:1: error: ops.conv.strides holds 0, which is out of range: values must be between 1 and 1024
// VALUE-NEXT:   hint: strides: allowed stride values (each spatial axis)
// VALUE-NOT:  error:

// Syntax errors are located where tomllib finds them.
// RUN: not irc-target check %S/Inputs/syntax-error.toml 2>&1 | FileCheck %s --check-prefix=SYNTAX
// SYNTAX:      syntax-error.toml:42:11: error: invalid TOML: expected ']' at the end of a table declaration
// SYNTAX-NEXT:   hint: a target file is TOML (https://toml.io); docs/targets.md describes its tables

// Every problem of a file is reported at once, in the order of the file.
// RUN: not irc-target check %S/Inputs/several-errors.toml 2>&1 | FileCheck %s --check-prefix=SEVERAL
// SEVERAL:      several-errors.toml:10:1: error: mac_array.clock_mhz must be a number, got the string "200"
// SEVERAL-NEXT:   hint: write the number without quotes: 200
// SEVERAL-NEXT: several-errors.toml:19:1: error: memories.sram.alignment_bytes = 48 is not a power of two (such as 32 or 64)
// SEVERAL-NEXT:   hint: alignment_bytes: every buffer starts at a multiple of this
// SEVERAL-NEXT: several-errors.toml:20:1: error: unknown key 'bankz' in [memories.sram]
// SEVERAL-NEXT:   hint: did you mean 'banks' (banks: number of banks (buffers of a layer in separate banks do not contend))? [memories.sram] takes size_kib, banks, alignment_bytes, read_bandwidth_gb_per_s, write_bandwidth_gb_per_s, read_latency_cycles, write_latency_cycles, burst_bytes, max_reads, max_writes, port
// SEVERAL-NEXT: several-errors.toml:70:1: error: unknown op 'MaxPool' in the support table
// SEVERAL-NEXT:   hint: did you mean 'max_pool'? the names are those of nn ops without 'nn.' (docs/nn-ops.md)
// SEVERAL-NEXT: several-errors.toml:75:1: error: ops.resize.modes lists "bilinear", which is not one of nearest, linear, cubic
// SEVERAL-NEXT:   hint: did you mean 'linear'? the values are nearest, linear, cubic
// SEVERAL-NOT:  error:

// RUN: not irc-target check %S/Inputs/no-such-file.toml 2>&1 | FileCheck %s --check-prefix=NOFILE
// NOFILE:      no-such-file.toml: error: cannot read the target file: no such file
// NOFILE-NEXT:   hint: give the path of a .toml target file, or a preset name (edge-2tops, edge-2tops-2c, ethos-u55-128, ethos-u55-256, ethos-u65-256, ethos-u65-512, npu-demo)

// Presets can be checked by name too.
// RUN: irc-target check ethos-u65-512 | FileCheck %s --check-prefix=PRESET
// PRESET: ethos-u65-512: ok: ethos-u65-512, 2 cores x 256 int8 MACs (8x32) at 1 GHz = 1.024 TOPS, 48 KiB SRAM a core, system_sram 16 GB/s, dram 12 GB/s
