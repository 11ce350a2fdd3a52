"""The NPU simulator: timing (irc/sim/timing.py), the run and its report
(irc/sim/run.py); the interpreter of the `npu` ops is irc/interp/npu.py."""
