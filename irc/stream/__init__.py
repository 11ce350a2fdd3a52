"""The command stream: lowering the tile level to `npu` commands (irc/stream/lowering.py),
and the happens-before analysis of its accesses that places its synchronisation and
that the simulator checks (irc/stream/scoreboard.py)."""
