"""Tiling under SRAM capacity: layer geometry, the cost model, and the tile planner.

See `irc.tiling.planner` and docs/tiling.md.
"""

from irc.tiling.planner import (
    Layer,
    Plan,
    Tile,
    TilingError,
    layer_of,
    minimum_sram,
    plan_layer,
)

__all__ = ["Layer", "Plan", "Tile", "TilingError", "layer_of", "minimum_sram", "plan_layer"]
