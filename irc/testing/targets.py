"""Targets for tests of the lowerings: a preset's machine with a support table that
takes every op, or with some entries changed.

The lowering tests exercise what irc's tile level can do (grouped convs, large kernels,
float layers), not what one target's support table allows; `every_op_supported`
keeps a preset's MAC array, memories and engines and lifts its support table.
`with_ops` changes a few entries, `host_casts` leaves a float model's input quantize
and output dequantize to the host (as on a target whose NPU has no float input).
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

from irc.targets import OpSupport, Target
from irc.targets.schema import OP_LIMITS


def every_op_supported(target: Target) -> Target:
    """`target` with every kind of op in its support table, without limits, and fp16
    (so that float layers may run on its NPU too)."""
    return dataclasses.replace(
        target,
        source=f"{target.source} (every op supported)",
        data_types=dataclasses.replace(target.data_types, fp16=True),
        ops=MappingProxyType({kind: OpSupport(kind) for kind in OP_LIMITS}),
    )


def with_ops(target: Target, **changes: OpSupport | None) -> Target:
    """`target` with some support-table entries replaced (None: removed)."""
    ops = dict(target.ops)
    for kind, support in changes.items():
        if support is None:
            ops.pop(kind, None)
        else:
            ops[kind] = support
    return dataclasses.replace(target, ops=MappingProxyType(ops))


def host_casts(target: Target) -> Target:
    """`target` without `quantize` and `dequantize` in its support table: the host
    converts a float model's input and output, as on the Ethos-U presets."""
    return dataclasses.replace(
        with_ops(target, quantize=None, dequantize=None),
        source=f"{target.source} (casts on the host)",
    )
