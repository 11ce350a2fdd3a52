"""The MLIR context of irc: every dialect irc knows, registered lazily.

A dialect's module is imported only when the parser first meets one of its ops or
attributes, so `irc-opt --help` and small inputs start fast.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.context import Context
from xdsl.ir import Dialect


def _builtin() -> Dialect:
    from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
    from xdsl.dialects.builtin import Builtin

    # xDSL's Builtin dialect object holds one resource-blob store for the whole
    # process; a copy with a fresh store keeps the blobs of one parse from leaking
    # into (and renaming the handles of) the next.
    interfaces = [i for i in Builtin._interfaces if not isinstance(i, OpAsmDialectInterface)]
    return Dialect(
        Builtin.name,
        list(Builtin.operations),
        list(Builtin.attributes),
        [*interfaces, OpAsmDialectInterface()],
    )


def _func() -> Dialect:
    from xdsl.dialects.func import Func

    return Func


def _nn() -> Dialect:
    from irc.dialects.nn import NN

    return NN


def _part() -> Dialect:
    from irc.dialects.part import PART

    return PART


def _quant() -> Dialect:
    from irc.dialects.quant import QUANT

    return QUANT


def _qnn() -> Dialect:
    from irc.dialects.qnn import QNN

    return QNN


def _tile() -> Dialect:
    from irc.dialects.tile import TILE

    return TILE


def _npu() -> Dialect:
    from irc.dialects.npu import NPU

    return NPU


def _scf() -> Dialect:
    from xdsl.dialects.scf import Scf

    return Scf


def _arith() -> Dialect:
    from xdsl.dialects.arith import Arith

    return Arith


DIALECTS: dict[str, Callable[[], Dialect]] = {
    "builtin": _builtin,
    "func": _func,
    "nn": _nn,
    "part": _part,
    "quant": _quant,
    "qnn": _qnn,
    "tile": _tile,
    "npu": _npu,
    "scf": _scf,
    "arith": _arith,
}
"""Every dialect irc registers, by name, with the function that loads it."""


def make_context(allow_unregistered_dialect: bool = False) -> Context:
    """A fresh context with every irc dialect registered (and builtin loaded)."""
    ctx = Context(allow_unregistered=allow_unregistered_dialect)
    for name, factory in DIALECTS.items():
        ctx.register_dialect(name, factory)
    ctx.load_registered_dialect("builtin")
    return ctx
