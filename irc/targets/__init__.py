"""NPU target descriptions: the TOML format, its loader, presets and the active target.

    from irc.targets import load_target, using_target, require_target

    target = load_target("npu-demo")          # a preset, or the path of a .toml file
    target.mac_array.macs_per_cycle           # 256
    with using_target(target):                # what `irc-opt --target=npu-demo` does
        ...                                   # passes call require_target("partition")

A target is a data file (no code): see docs/targets.md for the format and the presets
(irc/targets/presets/*.toml). `irc.targets.support.unsupported_reasons(op, target)`
says why the NPU cannot run an op; it lives in its own module because it imports the
nn dialect, while loading a target does not.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from irc.diagnostics import Location, error
from irc.targets.loader import load_target, load_target_file, parse_target, preset_names
from irc.targets.model import (
    SCRATCH,
    Cores,
    DataTypes,
    Host,
    Lut,
    MacArray,
    Memory,
    OpSupport,
    Placement,
    Target,
    VectorUnit,
)

__all__ = [
    "SCRATCH",
    "Cores",
    "DataTypes",
    "Host",
    "Lut",
    "MacArray",
    "Memory",
    "OpSupport",
    "Placement",
    "Target",
    "VectorUnit",
    "active_target",
    "load_target",
    "load_target_file",
    "parse_target",
    "preset_names",
    "require_target",
    "using_target",
]

_active: ContextVar[Target | None] = ContextVar("irc_active_target", default=None)


def active_target() -> Target | None:
    """The target that passes run for (set by `using_target`), or None."""
    return _active.get()


@contextmanager
def using_target(target: Target | None) -> Iterator[Target | None]:
    """Make `target` the active target inside the `with` block (None: no target).

    `irc-opt --target=NAME|FILE` runs its passes inside this block.
    """
    token = _active.set(target)
    try:
        yield target
    finally:
        _active.reset(token)


def require_target(pass_name: str, option_value: str | None = None) -> Target:
    """The target a pass runs for: its `target=` option if given, else the active one.

    Without either, an `IrcError` says that the pass needs a target and how to give one.
    """
    from irc.passes import PIPELINE_FILE

    if option_value:
        return load_target(option_value, origin=PIPELINE_FILE)
    target = active_target()
    if target is None:
        raise error(
            f"pass '{pass_name}' needs a target",
            Location(file=PIPELINE_FILE),
            hint=f"irc-opt --target=NAME|FILE (presets: {', '.join(preset_names())}), "
            f"or the pass option {pass_name}{{target=NAME|FILE}}",
        )
    return target
