"""The NPU simulator: its core (irc/sim/machine.py, the interpreter of the `npu` ops:
memories, the loaded stream, hazards), timing (irc/sim/timing.py), the schedule of the
queues (irc/sim/schedule.py), the run and its report (irc/sim/run.py), and streaming
frames (irc/sim/streaming.py)."""
