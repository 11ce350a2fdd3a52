"""Tiling under SRAM capacity: the cost model and the tile planner, bufferization and
DDR planning, and the machinery of the loop nests that the backend table's lowerings
build (irc/backend).

See `irc.tiling.planner` and docs/tiling.md.
"""

from irc.tiling.planner import (
    Layer,
    Plan,
    Tile,
    TilingError,
    minimum_sram,
    plan_layer,
)

__all__ = ["Layer", "Plan", "Tile", "TilingError", "minimum_sram", "plan_layer"]
