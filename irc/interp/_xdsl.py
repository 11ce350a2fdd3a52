"""The three xDSL interpreter modules irc uses, without the rest of `xdsl.interpreters`.

Importing any `xdsl.interpreters.X` first runs the package's `__init__`, which imports
the interpreters of every dialect xDSL has (RISC-V, Snitch, linalg, ...): 0.16 s of
every irc tool's start, for code irc never runs. So, unless something imported it
already, the package is registered without running its `__init__`, and runs it the
first time anyone asks it for a name (`from xdsl.interpreters import
register_implementations` still works). Its submodules import as usual.
"""

from __future__ import annotations

import importlib.util
import sys


def _defer_package_init(name: str) -> None:
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        return
    loader = spec.loader
    package = importlib.util.module_from_spec(spec)

    def load_then_get(attribute: str) -> object:
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        del package.__dict__["__getattr__"]
        loader.exec_module(package)
        return getattr(package, attribute)

    package.__getattr__ = load_then_get  # type: ignore[method-assign]
    sys.modules[name] = package


_defer_package_init("xdsl.interpreters")

from xdsl.interpreters.arith import ArithFunctions  # noqa: E402
from xdsl.interpreters.func import FuncFunctions  # noqa: E402
from xdsl.interpreters.scf import ScfFunctions  # noqa: E402

__all__ = ["ArithFunctions", "FuncFunctions", "ScfFunctions"]
