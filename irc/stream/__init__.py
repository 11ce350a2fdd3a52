"""The command stream: lowering the tile level to `npu` commands (irc/stream/lowering.py)."""
