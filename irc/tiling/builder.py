"""Building a layer's loop nest of `tile` ops: what every lowering of the backend table shares.

The backend table (irc/backend) gives each kind of layer its lowering; each follows one
scheme, built here: it lists the loop dimensions in the plan's order, registers each
load, compute and store as an action with the dimensions it depends on
(`LayerBuilder.at`), and lets `LayerBuilder.emit` place every action in the innermost
loop that binds all of them (`enter`), or after the loops inside it (`leave`, for the
stores after a split K). `Elementwise` is the loop nest of a pass over a tensor's
leading axes and its last axis (elementwise ops, pads, copies); the small helpers
build tile ops from Python values.

A lowering is only called for an op that the backend placed on the NPU, after its
entry's check accepted it: what cannot be lowered is said there, never discovered
here.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator, MutableMapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    MemRefType,
    StringAttr,
    f32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue

from irc.dialects import nn, tile
from irc.ir.weights import dtype_of
from irc.tiling.lowering import (
    SRAM,
    Bound,
    Dim,
    Emitter,
    FunctionLowering,
    Storage,
    memref,
    row_boxes,
    space_attr,
    storage_element,
)
from irc.tiling.planner import LOCK_STEP, Layer, Plan

Bounds = dict[str, Bound]
Action = Callable[[Bounds], None]


# --------------------------------------------------------------------------------------
# Building one layer


@dataclass
class _Action:
    depends: frozenset[str]
    run: Action
    after: bool
    """Run after the loops inside its level (a store after the K steps)."""


class CoreState(MutableMapping[str, SSAValue]):
    """What a layer's actions hand each other (the buffer a load filled, for the
    compute that reads it), kept apart for each core of a layer in lock step: an
    action run for core k sees core k's entries, then those of the actions the cores
    share (the input a broadcast load filled)."""

    def __init__(self, builder: LayerBuilder) -> None:
        self.builder = builder
        self.maps: dict[int | None, dict[str, SSAValue]] = {None: {}}

    def _own(self) -> dict[str, SSAValue]:
        return self.maps.setdefault(self.builder.core_key, {})

    def __getitem__(self, key: str) -> SSAValue:
        own = self._own()
        return own[key] if key in own else self.maps[None][key]

    def __setitem__(self, key: str, value: SSAValue) -> None:
        self._own()[key] = value

    def __delitem__(self, key: str) -> None:
        del self._own()[key]

    def __iter__(self) -> Iterator[str]:
        return iter({**self.maps[None], **self._own()})

    def __len__(self) -> int:
        return len({**self.maps[None], **self._own()})


class LayerBuilder:
    """The SRAM buffers and the actions of one layer's loop nest."""

    def __init__(self, lowering: FunctionLowering, plan: Plan) -> None:
        self.lowering = lowering
        self.em = lowering.emitter
        self.plan = plan
        self.offsets = plan.sram_offsets
        self.actions: list[_Action] = []
        self.buffers: dict[tuple[str, tuple[int, ...], Attribute, int | None], SSAValue] = {}
        self.views: dict[tuple[SSAValue, tuple[int, ...]], SSAValue] = {}
        self.prologue: list[Operation] = []
        self.core_key: int | None = None
        """In a layer in lock step, the core whose share an action runs for (None: an
        action the cores share); each core has buffers of its own."""
        self.broadcast = 0
        """While an action the cores of a layer in lock step share runs: the cores
        whose SRAM its loads write."""
        self.state = CoreState(self)
        """What the actions hand each other, per core of a layer in lock step."""

    def sram(
        self, role: str, shape: Sequence[int], element: Attribute, within: int = 0
    ) -> SSAValue:
        """The SRAM buffer of `role` (a buffer kind of the plan) with this shape, `within`
        bytes into that kind's region: one per shape, allocated before the loops at the
        plan's offset."""
        key = (f"{role}@{within}", tuple(shape), element, self.core_key)
        if key not in self.buffers:
            properties: dict[str, Attribute] = {}
            if role in self.offsets:
                copies = self.offsets[role]
                properties["offset"] = IntegerAttr(copies[0] + within, i64)
                if len(copies) > 1:
                    properties["alternate"] = IntegerAttr(copies[1] + within, i64)
            op = tile.AllocOp.create(
                properties=properties, result_types=[memref(shape, element, SRAM)]
            )
            self.prologue.append(op)
            self.buffers[key] = op.results[0]
        return self.buffers[key]

    def input_slot(self, index: int) -> int:
        """Where the `index`-th input of a two-input op starts in the input region."""
        copies = 2 if self.plan.double_buffered else 1
        return index * (self.plan.buffers["input"] // copies // self.plan.layer.inputs)

    def pairs_start(self) -> int:
        """Where a MAC layer's (multiplier, shift) pairs start in its parameter region:
        after the bias of a whole channel tile (as the planner counts it)."""
        alignment = self.lowering.target.scratch.alignment_bytes
        bias = self.plan.tile.channels * self.plan.layer.accumulator_bytes
        return -(-bias // alignment) * alignment

    def view(self, buffer: SSAValue, shape: Sequence[int]) -> SSAValue:
        """A view of a whole SRAM buffer with another shape (made before the loops)."""
        buffer_type = buffer.type
        assert isinstance(buffer_type, MemRefType)
        if tuple(buffer_type.get_shape()) == tuple(shape):
            return buffer
        key = (buffer, tuple(shape))
        if key not in self.views:
            op = tile.ViewOp.create(
                operands=[buffer],
                result_types=[memref(shape, buffer_type.element_type, SRAM)],
            )
            self.prologue.append(op)
            self.views[key] = op.results[0]
        return self.views[key]

    def at(self, depends: Sequence[str], run: Action, after: bool = False) -> None:
        """Run `run` in the innermost loop binding `depends` (after its inner loops)."""
        self.actions.append(_Action(frozenset(depends), run, after))

    def emit(self, dims: Sequence[Dim]) -> None:
        """The loop nest over `dims` with every action in place; SRAM allocations go
        before it. In a cascade, the nest is handed to it instead, to emit stripe by
        stripe (`emit_once`, `emit_stripe`). A plan on several cores splits the
        outermost dimension of more than one tile (`core_shares`): each core's share
        is a nest of its own, with its own SRAM buffers, in a `tile.on_core`; a plan on
        one core other than core 0 (`Plan.core`) is one nest in that core's."""
        if self.lowering.cascade is not None:
            self.lowering.cascade.register(self, dims)
            return
        # In lock step (never over a split K: the planner does not choose it, and the
        # output stage after the K loop would leave its core's last step).
        k_steps = any(dim.name == "k" and dim.extent > dim.tile for dim in dims)
        if self.plan.split == LOCK_STEP and self.plan.cores > 1 and not k_steps:
            self._lock_step(dims)
            return
        shares = core_shares(dims, self.plan.cores)
        if not shares and self.plan.core:
            # On one core, not core 0: the nest in that core's `tile.on_core`.
            body = self.em.scoped(functools.partial(self._nest, dims, {}, self.actions))
            self.em.add(tile.OnCoreOp.build_on(self.plan.core, [*self.prologue, *body]))
            return
        if not shares:
            mark = len(self.em.stack[0])
            self._nest(dims, {}, self.actions)
            # The allocations go before everything of this layer.
            self.em.stack[0][mark:mark] = self.prologue
            return
        for core, share in enumerate(shares):
            self.prologue, self.buffers, self.views = [], {}, {}
            shared = [share if dim.name == share.name else dim for dim in dims]
            body = self.em.scoped(functools.partial(self._nest, shared, {}, self.actions))
            self.em.add(tile.OnCoreOp.build_on(core, [*self.prologue, *body]))

    def _lock_step(self, dims: Sequence[Dim]) -> None:
        """The nest of a layer split over output channels in lock step: the cores walk
        the same tiles, `cores` output-channel tiles at a time, one each. An action
        that does not depend on the output channels (the input's load) runs once, on
        core 0, its loads broadcast into every core's SRAM (`tile.copy`'s
        `broadcast`); every other runs for each core, on its tile of channels, with
        buffers of its own, in a `tile.on_core`; consecutive regions of one core are
        then merged, so that each core's commands of a tile follow each other (a MAC
        command and its output stage)."""
        cores = self.plan.cores
        channels = next(dim for dim in dims if dim.name == "c")
        wide = replace(channels, tile=channels.tile * cores)
        looped = [wide if dim.name == "c" else dim for dim in dims]

        def shared(action: _Action) -> Action:
            def run(bounds: Bounds) -> None:
                self.broadcast = cores
                try:
                    action.run(bounds)
                finally:
                    self.broadcast = 0

            return run

        def each_core(action: _Action) -> Action:
            def run(bounds: Bounds) -> None:
                group = bounds["c"]
                for core in range(cores):
                    size = min(channels.tile, group.size - core * channels.tile)
                    if size <= 0:
                        break
                    own = Bound(group.index, group.start + core * channels.tile, group.step, size)
                    self.core_key = core
                    try:
                        body = self.em.scoped(functools.partial(action.run, {**bounds, "c": own}))
                    finally:
                        self.core_key = None
                    self.em.add(tile.OnCoreOp.build_on(core, body))

            return run

        actions = [
            _Action(a.depends, each_core(a) if "c" in a.depends else shared(a), a.after)
            for a in self.actions
        ]
        mark = len(self.em.stack[0])
        self._nest(looped, {}, actions)
        self.em.stack[0][mark:] = merge_core_regions(self.em.stack[0][mark:])
        # The allocations go before everything of this layer.
        self.em.stack[0][mark:mark] = self.prologue

    def _nest(self, dims: Sequence[Dim], fixed: Bounds, actions: Sequence[_Action]) -> None:
        """Loops over the `dims` not `fixed`, with `actions` in place."""
        looped = [dim for dim in dims if dim.name not in fixed]
        names = [dim.name for dim in looped]
        # A dimension an action does not depend on is one whole tile.
        whole = {dim.name: Bound(None, dim.start, dim.extent, dim.extent) for dim in dims}

        def level_of(action: _Action) -> int:
            return max((names.index(name) for name in action.depends if name in names), default=-1)

        def run(action: _Action, bounds: Bounds) -> None:
            action.run({**whole, **fixed, **bounds})

        outer = [a for a in actions if level_of(a) == -1]
        for action in outer:
            if not action.after:
                run(action, {})

        def enter(level: int, bounds: Bounds) -> None:
            for action in actions:
                if level_of(action) == level and not action.after:
                    run(action, bounds)

        def leave(level: int, bounds: Bounds) -> None:
            for action in actions:
                if level_of(action) == level and action.after:
                    run(action, bounds)

        self.lowering.stats.loops += self.em.nest(looped, enter, leave)
        for action in outer:
            if action.after:
                run(action, {})

    def _once(self, dims: Sequence[Dim], row: str) -> list[_Action]:
        """The actions a cascade runs once: those that depend only on dimensions of
        one whole tile, other than the rows (a conv's weights and parameters when its
        tile holds all of them)."""
        single = {dim.name for dim in dims if dim.tile >= dim.extent and dim.name != row}
        return [action for action in self.actions if action.depends <= single]

    def emit_once(self, dims: Sequence[Dim], row: str, after: bool) -> None:
        """In a cascade: the actions that run once (`_once`), before the stripes, or
        those that run after everything (`after`)."""
        whole = {dim.name: Bound(None, 0, dim.extent, dim.extent) for dim in dims}
        for action in self._once(dims, row):
            if action.after == after:
                action.run(whole)

    def emit_stripe(self, dims: Sequence[Dim], row: str, bound: Bound) -> None:
        """In a cascade: the nest for the output rows `bound` of one stripe (or of a
        loop of alike stripes), without the actions that ran once."""
        once = self._once(dims, row)
        self._nest(dims, {row: bound}, [a for a in self.actions if a not in once])

    # ---- DDR boxes ----------------------------------------------------------------------

    def offsets_of(
        self, storage: Storage, origins: Sequence[SSAValue | int]
    ) -> list[SSAValue | int]:
        """Box offsets in the storage's buffer: its base plus the origins."""
        result: list[SSAValue | int] = []
        for base, origin in zip(storage.base, origins):
            if isinstance(origin, int):
                result.append(base + origin)
            else:
                result.append(self.em.offset(origin, base))
        return result

    def load(
        self,
        storage: Storage,
        origins: Sequence[SSAValue | int],
        buffer: SSAValue,
        pad: int | float | None = None,
        upsample: Sequence[int] = (),
    ) -> None:
        """Copy the box of the buffer's shape at `origins` of a DDR value into `buffer`
        (origins in positions of the value upsampled by `upsample`, see `tile.copy`)."""
        sizes = buffer_shape(buffer)
        self.lowering.copy_box(
            storage.buffer,
            self.offsets_of(storage, origins),
            buffer,
            [0] * len(sizes),
            sizes,
            pad,
            upsample,
            self.broadcast,
        )

    def store(self, buffer: SSAValue, storage: Storage, origins: Sequence[SSAValue | int]) -> None:
        """Copy an SRAM tile into its box of a DDR value."""
        sizes = buffer_shape(buffer)
        self.lowering.copy_box(
            buffer, [0] * len(sizes), storage.buffer, self.offsets_of(storage, origins), sizes
        )


SPLIT_DIMENSIONS = {"c": "output channels", "n": "batch", "h": "rows", "w": "columns"}
"""What splitting a loop dimension across cores splits (a name of none of these: the
rows of an elementwise pass or a matmul's leading axes)."""


def split_dimension(dims: Sequence[Dim], cores: int) -> Dim | None:
    """The dimension a layer on `cores` cores splits: the outermost of more than one
    tile (never a split K, whose steps accumulate into one tile); None on one core or
    when every dimension is one tile."""
    if cores < 2:
        return None
    return next((dim for dim in dims if dim.name != "k" and dim.extent > dim.tile), None)


def core_shares(dims: Sequence[Dim], cores: int) -> list[Dim]:
    """Each core's share of the split dimension (`split_dimension`), as contiguous
    runs of whole tiles, the larger shares first (the last one ends with the partial
    tile, if any); [] when nothing is split."""
    dim = split_dimension(dims, cores)
    if dim is None:
        return []
    tiles = -(-dim.extent // dim.tile)
    used = min(cores, tiles)
    shares, start = [], dim.start
    for core in range(used):
        count = tiles // used + (core < tiles % used)
        extent = min(count * dim.tile, dim.start + dim.extent - start)
        shares.append(replace(dim, start=start, extent=extent))
        start += extent
    return shares


def merge_core_regions(ops: list[Operation]) -> list[Operation]:
    """`ops` with each run of consecutive `tile.on_core` regions merged into one region
    a core (the second region of core 0 appended to its first, and so on), in the
    blocks of loops too: a layer in lock step emits a region a core for each action,
    and a core's regions of one run touch only its own buffers, what the cores share
    read-only, and its own part of the output, so that they may run together."""
    merged: list[Operation] = []
    first: dict[int, tile.OnCoreOp] = {}
    for op in ops:
        if isinstance(op, tile.OnCoreOp):
            core = op.props().int("core") or 0
            if core in first:
                for inner in list(op.body.block.ops):
                    inner.detach()
                    first[core].body.block.add_op(inner)
                continue
            first[core] = op
            merged.append(op)
            continue
        first = {}
        for region in op.regions:
            for block in region.blocks:
                inner_ops = list(block.ops)
                for inner in inner_ops:
                    inner.detach()
                block.add_ops(merge_core_regions(inner_ops))
        merged.append(op)
    return merged


def buffer_shape(buffer: SSAValue) -> list[int]:
    buffer_type = buffer.type
    assert isinstance(buffer_type, MemRefType)
    return list(buffer_type.get_shape())


def tile_props(**values: object) -> dict[str, Attribute]:
    """Tile op properties from Python values (None: left out)."""
    properties: dict[str, Attribute] = {}
    for name, value in values.items():
        if value is None:
            continue
        if isinstance(value, bool):
            properties[name] = BoolAttr.from_bool(value)
        elif isinstance(value, int):
            properties[name] = IntegerAttr(value, i64)
        elif isinstance(value, float):
            properties[name] = FloatAttr(value, f32)
        elif isinstance(value, str):
            properties[name] = StringAttr(value)
        else:
            assert isinstance(value, list | tuple)
            properties[name] = DenseArrayBase.from_list(i64, [int(v) for v in value])
    return properties


def create(cls: type[Operation], operands: Sequence[SSAValue], **values: object) -> Operation:
    return cls.create(operands=list(operands), properties=tile_props(**values))


def buffer_element(value: SSAValue) -> Attribute:
    """The element type of the tile buffer that holds a tensor value."""
    element = storage_element(value.type)
    assert element is not None, f"the backend's check let {value.type} through"
    return element


def requant_params(multipliers: Sequence[int], shifts: Sequence[int]) -> np.ndarray:
    """[C, 2] int32 (multiplier, shift) pairs, as `tile.requantize` reads them."""
    return np.stack([np.asarray(multipliers), np.asarray(shifts)], axis=1).astype(np.int32)


def clamp_bounds(op: Operation) -> tuple[int | None, int | None]:
    """The stored-value clamp bounds of a quantized op."""
    props = op.props()  # type: ignore[attr-defined]
    return props.int("clamp_min"), props.int("clamp_max")


FUSED_FLOAT_ACTIVATIONS = ("relu", "clip")
"""The fused activations of a float layer that the tile level applies (as a clamp)."""


def float_bounds(op: Operation) -> tuple[float | None, float | None] | None:
    """The bounds of a float op's fused activation (relu, clip), None without one."""
    activation = op.properties.get("activation")
    if activation is None:
        return None
    assert isinstance(activation, nn.ActivationAttr)
    kind, values = activation.kind.data, activation.named_values()
    assert kind in FUSED_FLOAT_ACTIVATIONS, f"the backend's check let a fused {kind} through"
    if kind == "relu":
        return (0.0, None)
    return (values["min"], values["max"])


def is_floating(*values: SSAValue) -> bool:
    """All f32 (a float layer); else none is (the backend's check rejects a mix)."""
    return all(storage_element(value.type) == f32 for value in values)


def clamp_in_place(
    em: Emitter, buffer: SSAValue, bounds: tuple[float | None, float | None]
) -> None:
    low, high = bounds
    em.add(create(tile.ClampOp, [buffer, buffer], clamp_min=low, clamp_max=high))


def planar(shape: Sequence[int]) -> tuple[int, int, int, int]:
    """A rank-3 NHWC shape [N, L, C] (or weight [O, K, C]) as [N, L, 1, C]."""
    if len(shape) == 3:
        return (shape[0], shape[1], 1, shape[2])
    assert len(shape) == 4
    return (shape[0], shape[1], shape[2], shape[3])


def planar_pair(values: Sequence[int] | None, default: int) -> list[int]:
    """Strides or dilations of a 1-D or 2-D window as two values."""
    values = list(values or [])
    return [*values, default, default][:2] if len(values) != 1 else [values[0], default]


def planar_pads(values: Sequence[int] | None) -> list[int]:
    """[top, left, bottom, right] from 2-D pads, or [begin, end] of a 1-D window."""
    values = list(values or [])
    if len(values) == 2:
        return [values[0], 0, values[1], 0]
    return values or [0, 0, 0, 0]


# --------------------------------------------------------------------------------------
# Elementwise ops, pads and concats: tiles of the output's leading axes x its last axis


def elementwise_layer(
    name: str,
    op_name: str,
    shape: Sequence[int],
    inputs: int,
    element: Attribute,
    table_bytes: int = 0,
    output_element: Attribute | None = None,
) -> Layer:
    """The planner's view of an elementwise pass over a tensor of `shape` of
    `element`s (a copy, a pad, a rescale with one (multiplier, shift) pair of
    `table_bytes`)."""
    channels = shape[-1] if shape else 1
    rows = math.prod(shape[:-1]) if shape else 1
    return Layer(
        name, op_name, "elementwise", "vector", 1, rows, 1, channels, rows, 1, channels,
        groups=channels, inputs=inputs, table_bytes=table_bytes,
        in_bytes=dtype_of(element).itemsize,
        out_bytes=dtype_of(output_element or element).itemsize,
    )  # fmt: skip


class Elementwise:
    """The loop nest of an elementwise pass: boxes over the output's axes."""

    def __init__(self, lowering: FunctionLowering, plan: Plan, shape: Sequence[int]) -> None:
        self.builder = LayerBuilder(lowering, plan)
        self.shape = list(shape) if shape else [1]
        lead = self.shape[:-1]
        boxes = row_boxes(lead, plan.tile.rows)
        self.names = [f"d{axis}" for axis in range(len(self.shape))]
        self.dims = [Dim(n, extent, box) for n, extent, box in zip(self.names, lead, boxes)]
        self.dims.append(Dim(self.names[-1], self.shape[-1], plan.tile.channels))

    def box(self, bounds: Bounds) -> list[int]:
        return [bounds[name].size for name in self.names]

    def origins(self, bounds: Bounds, shift: Sequence[int] = ()) -> list[SSAValue | int]:
        em = self.builder.em
        shift = list(shift) or [0] * len(self.names)
        return [em.affine([(bounds[name], 1)], s) for name, s in zip(self.names, shift)]

    def run(self, body: Action) -> None:
        self.builder.at(self.names, body)
        self.builder.emit(self.dims)


def storage_as(lowering: FunctionLowering, value: SSAValue, shape: Sequence[int]) -> Storage:
    """A value's storage, seen with `shape` (the same elements; [1] for a scalar); a
    value inside another buffer is first copied into a buffer of its own."""
    storage = lowering.storage(value)
    if list(storage.shape) == list(shape):
        return storage
    storage = lowering.whole(value)
    buffer_type = storage.buffer.type
    assert isinstance(buffer_type, MemRefType)
    view = lowering.emitter.add(
        tile.ViewOp.create(
            operands=[storage.buffer],
            result_types=[memref(shape, buffer_type.element_type, space_attr(storage.buffer))],
        )
    )
    return Storage(view.results[0], (0,) * len(shape), tuple(shape))


def broadcast_shape(shape: Sequence[int], output: Sequence[int]) -> list[int]:
    """`shape` with leading 1s to the output's rank (numpy's broadcasting)."""
    return [1] * (len(output) - len(shape)) + list(shape) if shape else [1] * len(output)
