"""The MLIR context of irc: every dialect irc knows, registered lazily.

A dialect's module is imported only when the parser first meets one of its ops or
attributes, so `irc-opt --help` and small inputs start fast.
"""

from __future__ import annotations

import functools
import importlib

from xdsl.context import Context
from xdsl.ir import Dialect

DIALECTS: dict[str, tuple[str, str]] = {
    "builtin": ("xdsl.dialects.builtin", "Builtin"),
    "func": ("xdsl.dialects.func", "Func"),
    "nn": ("irc.dialects.nn", "NN"),
    "part": ("irc.dialects.part", "PART"),
    "quant": ("irc.dialects.quant", "QUANT"),
    "qnn": ("irc.dialects.qnn", "QNN"),
    "tile": ("irc.dialects.tile", "TILE"),
    "npu": ("irc.dialects.npu", "NPU"),
    "scf": ("xdsl.dialects.scf", "Scf"),
    "arith": ("xdsl.dialects.arith", "Arith"),
}
"""Every dialect irc registers: its name -> (module, name of the `Dialect` object).

Named by strings, as passes are in irc/passes.py, so that the IR core imports no
dialect: a dialect's module is imported when a context first needs it."""


def load_dialect(name: str) -> Dialect:
    """The dialect registered as `name`, importing its module."""
    module_name, attribute = DIALECTS[name]
    dialect = getattr(importlib.import_module(module_name), attribute)
    return _with_own_resources(dialect) if name == "builtin" else dialect


def _with_own_resources(builtin: Dialect) -> Dialect:
    from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface

    # xDSL's Builtin dialect object holds one resource-blob store for the whole
    # process; a copy with a fresh store keeps the blobs of one parse from leaking
    # into (and renaming the handles of) the next.
    interfaces = [i for i in builtin._interfaces if not isinstance(i, OpAsmDialectInterface)]
    return Dialect(
        builtin.name,
        list(builtin.operations),
        list(builtin.attributes),
        [*interfaces, OpAsmDialectInterface()],
    )


def make_context(allow_unregistered_dialect: bool = False) -> Context:
    """A fresh context with every irc dialect registered (and builtin loaded)."""
    ctx = Context(allow_unregistered=allow_unregistered_dialect)
    for name in DIALECTS:
        ctx.register_dialect(name, functools.partial(load_dialect, name))
    ctx.load_registered_dialect("builtin")
    return ctx
