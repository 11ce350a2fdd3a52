"""The compiler driver: the default pipeline end to end (`pipeline.py`) and the reports
a compile writes beside its package (`report.py`). `irc-compile` is its command line."""
