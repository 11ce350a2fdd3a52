"""How each kind of layer becomes a loop nest of `tile` ops (see irc/tiling/lowering.py).

`lowerer_for(op, lowering)` gives a function that emits the tiled code of `op` into
the lowering's emitter, or None for an op that stays on tensors. A lowerer raises
`UnsupportedLayer` for a case the tile level does not run (a weight with a zero
point, a transposed gemm input, a broadcasting add, 16-bit values, ...); the op then
stays on tensors too.

Every lowerer follows one scheme: it lists the loop dimensions in the plan's order,
registers each load, compute and store as an action with the dimensions it depends
on, and lets `LayerBuilder.emit` place every action in the innermost loop that binds
all of them (`enter`), or after the loops inside it (`leave`, for the stores after
a split K).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    MemRefType,
    StringAttr,
    f32,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue

from irc.dialects import nn, qnn, tile
from irc.dialects.quant import quantized_element
from irc.ir import fixed_point
from irc.ir.placement import runs_on_npu
from irc.ir.weights import dtype_of
from irc.tiling.lowering import (
    DDR,
    SRAM,
    Bound,
    Dim,
    Emitter,
    FunctionLowering,
    Storage,
    UnsupportedLayer,
    fused_requantize,
    is_symmetric,
    memref,
    row_boxes,
    storage_element,
    tensor_shape,
    zero_point_of,
)
from irc.tiling.planner import (
    BIAS_BYTES,
    REQUANT_PAIR_BYTES,
    Layer,
    Plan,
    layer_of,
)

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


class LayerBuilder:
    """The SRAM buffers and the actions of one layer's loop nest."""

    def __init__(self, lowering: FunctionLowering, plan: Plan) -> None:
        self.lowering = lowering
        self.em = lowering.emitter
        self.plan = plan
        self.offsets = plan.sram_offsets
        self.actions: list[_Action] = []
        self.buffers: dict[tuple[str, tuple[int, ...], Attribute], SSAValue] = {}
        self.views: dict[tuple[SSAValue, tuple[int, ...]], SSAValue] = {}
        self.prologue: list[Operation] = []

    def sram(
        self, role: str, shape: Sequence[int], element: Attribute, within: int = 0
    ) -> SSAValue:
        """The SRAM buffer of `role` (a buffer kind of the plan) with this shape, `within`
        bytes into that kind's region: one per shape, allocated before the loops at the
        plan's offset."""
        key = (f"{role}@{within}", tuple(shape), element)
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
        alignment = self.lowering.target.sram.alignment_bytes
        return -(-self.plan.tile.channels * BIAS_BYTES // alignment) * alignment

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
        before it."""
        names = [dim.name for dim in dims]
        # A dimension an action does not depend on is one whole tile.
        whole = {dim.name: Bound(None, 0, dim.extent, dim.extent) for dim in dims}

        def level_of(action: _Action) -> int:
            return max((names.index(name) for name in action.depends), default=-1)

        def run(action: _Action, bounds: Bounds) -> None:
            action.run({**whole, **bounds})

        outer = [a for a in self.actions if level_of(a) == -1]
        mark = len(self.em.stack[0])
        for action in outer:
            if not action.after:
                run(action, {})

        def enter(level: int, bounds: Bounds) -> None:
            for action in self.actions:
                if level_of(action) == level and not action.after:
                    run(action, bounds)

        def leave(level: int, bounds: Bounds) -> None:
            for action in self.actions:
                if level_of(action) == level and action.after:
                    run(action, bounds)

        bodies = self.em.nest(dims, enter, leave)
        self.lowering.stats.loops += bodies
        for action in outer:
            if action.after:
                run(action, {})
        # The allocations go before everything of this layer.
        self.em.stack[0][mark:mark] = self.prologue

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
        sizes = _buffer_shape(buffer)
        self.lowering.copy_box(
            storage.buffer,
            self.offsets_of(storage, origins),
            buffer,
            [0] * len(sizes),
            sizes,
            pad,
            upsample,
        )

    def store(self, buffer: SSAValue, storage: Storage, origins: Sequence[SSAValue | int]) -> None:
        """Copy an SRAM tile into its box of a DDR value."""
        sizes = _buffer_shape(buffer)
        self.lowering.copy_box(
            buffer, [0] * len(sizes), storage.buffer, self.offsets_of(storage, origins), sizes
        )


def _buffer_shape(buffer: SSAValue) -> list[int]:
    buffer_type = buffer.type
    assert isinstance(buffer_type, MemRefType)
    return list(buffer_type.get_shape())


def _props(**values: object) -> dict[str, Attribute]:
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


def _create(cls: type[Operation], operands: Sequence[SSAValue], **values: object) -> Operation:
    return cls.create(operands=list(operands), properties=_props(**values))


def _element(value: SSAValue) -> Attribute:
    element = storage_element(value.type)
    if element is None:
        raise UnsupportedLayer(f"no tile buffer holds {value.type}")
    return element


def _requant_params(multipliers: Sequence[int], shifts: Sequence[int]) -> np.ndarray:
    return np.stack([np.asarray(multipliers), np.asarray(shifts)], axis=1).astype(np.int32)


def _clamp(op: Operation) -> tuple[int | None, int | None]:
    props = op.props()  # type: ignore[attr-defined]
    return props.int("clamp_min"), props.int("clamp_max")


def _float_bounds(op: Operation) -> tuple[float | None, float | None] | None:
    """The bounds of a float op's fused activation (relu, clip), None without one."""
    activation = op.properties.get("activation")
    if activation is None:
        return None
    assert isinstance(activation, nn.ActivationAttr)
    kind, values = activation.kind.data, activation.named_values()
    if kind == "relu":
        return (0.0, None)
    if kind == "clip":
        return (values["min"], values["max"])
    raise UnsupportedLayer(f"a fused {kind} activation")


def _floating(*values: SSAValue) -> bool:
    """All f32 (a float layer), or none (an integer one); a mix stays on tensors."""
    elements = [storage_element(value.type) for value in values]
    if all(element == f32 for element in elements):
        return True
    if any(element == f32 for element in elements):
        raise UnsupportedLayer("a layer mixing float and integer values")
    return False


def _clamp_in_place(
    em: Emitter, buffer: SSAValue, bounds: tuple[float | None, float | None]
) -> None:
    low, high = bounds
    em.add(_create(tile.ClampOp, [buffer, buffer], clamp_min=low, clamp_max=high))


# --------------------------------------------------------------------------------------
# What MAC layers share: the per-channel parameters and the output stage


@dataclass
class _OutputStage:
    """A MAC layer's per-channel constants and what happens to its accumulator tile."""

    bias: Storage | None
    params: Storage | None
    """The (multiplier, shift) pairs of the requantize that runs with the layer."""
    requantize: qnn.RequantizeOp | None
    activation: tuple[float | None, float | None] | None
    """A float layer's fused relu or clip."""
    element: Attribute
    """The accumulator's element type (i32, or f32 for a float layer)."""
    output_element: Attribute
    output_zero_point: int

    @classmethod
    def of(
        cls,
        lowering: FunctionLowering,
        bias: Storage | None,
        requantize: qnn.RequantizeOp | None,
        activation: tuple[float | None, float | None] | None,
        element: Attribute,
        channels: int,
        result: SSAValue,
    ) -> _OutputStage:
        """The output stage of a MAC layer of `channels` outputs, accumulating in
        `element`, that writes `result` (its requantize's, when one runs with it)."""
        params = _output_params(lowering, requantize, channels)
        return cls(
            bias, params, requantize, activation, element, _element(result), zero_point_of(result)
        )

    def load(self, b: LayerBuilder, channel: Bound, state: dict[str, SSAValue]) -> None:
        """Copy the channel tile's bias and (multiplier, shift) pairs into SRAM."""
        em = b.em
        if self.bias is not None:
            buffer = b.sram("parameters", [channel.size], self.element)
            b.load(self.bias, [em.affine([(channel, 1)])], buffer)
            state["bias"] = buffer
        if self.params is not None:
            buffer = b.sram("parameters", [channel.size, 2], i32, within=b.pairs_start())
            b.load(self.params, [em.affine([(channel, 1)]), 0], buffer)
            state["params"] = buffer

    def finish(self, b: LayerBuilder, acc: SSAValue, state: dict[str, SSAValue]) -> SSAValue:
        """Add the bias to the accumulator tile, then requantize it (or apply the
        float activation); returns the tile to store."""
        em = b.em
        if "bias" in state:
            em.add(_create(tile.BiasAddOp, [acc, state["bias"]]))
        if self.requantize is None:
            if self.activation is not None:
                _clamp_in_place(em, acc, self.activation)
            return acc
        out = b.sram("output", _buffer_shape(acc), self.output_element)
        low, high = _clamp(self.requantize)
        em.add(
            _create(
                tile.RequantizeOp,
                [acc, state["params"], out],
                output_zero_point=self.output_zero_point or None,
                clamp_min=low,
                clamp_max=high,
            )
        )
        return out


# --------------------------------------------------------------------------------------
# Convolutions


ConvLike = qnn.ConvOp | nn.ConvOp | qnn.ConvTransposeOp | nn.ConvTransposeOp


def lower_conv(lowering: FunctionLowering, op: ConvLike) -> None:
    """A `qnn.conv` (with the requantize of its accumulator, when it has one), or a
    float `nn.conv` (with its fused relu or clip); or their transposed forms, tiled as
    the stride-1 conv with the flipped kernel over the input with zero points inserted
    between its pixels (`tile.copy`'s `upsample`)."""
    props = op.props()
    rank = len(tensor_shape(op.input))
    if props.str("layout") != "nhwc" or rank not in (3, 4):
        raise UnsupportedLayer("only NHWC 1-D and 2-D convolutions are tiled")
    floating = _floating(op.input, op.weight, op.result)
    if floating != isinstance(op, nn.ConvOp | nn.ConvTransposeOp):
        raise UnsupportedLayer(f"an {op.name} on quantized values")
    if not floating and not is_symmetric(op.weight):
        raise UnsupportedLayer("a weight with a zero point")
    activation = _float_bounds(op) if floating else None
    accumulator_element = f32 if floating else i32
    requantize = fused_requantize(op)
    result = requantize.result if requantize is not None else op.result
    batch, _, _, in_c = _planar(tensor_shape(op.input))
    _, out_h, out_w, out_c = _planar(tensor_shape(op.result))
    groups = props.int("group") or 1
    in_per_group, out_per_group = in_c // groups, out_c // groups
    strides = _planar_pair(props.ints("strides"), 1)
    dilations = _planar_pair(props.ints("dilations"), 1)
    pads = _planar_pads(props.ints("pads"))
    upsample = [1, 1]
    _, kernel_h, kernel_w, _ = _planar(tensor_shape(op.weight))
    if isinstance(op, qnn.ConvTransposeOp | nn.ConvTransposeOp):
        layer = layer_of(op)
        assert layer is not None
        upsample, strides, pads = list(strides), [1, 1], list(layer.pads)
    zero_point = zero_point_of(op.input)
    input_element, weight_element = _element(op.input), _element(op.weight)

    plan = lowering.plan(op)
    b = LayerBuilder(lowering, plan)
    em = b.em
    if requantize is not None:
        lowering.lowered.add(requantize)
    # A 1-D conv is a 2-D one of width 1: its buffers are viewed as such.
    x = _storage_as(lowering, op.input, _planar(tensor_shape(op.input)))
    if isinstance(op, qnn.ConvTransposeOp | nn.ConvTransposeOp):
        w = _transposed_conv_weights(lowering, op.weight, groups, weight_element)
    else:
        w = _storage_as(lowering, op.weight, _planar(tensor_shape(op.weight)))
    y = _storage_as(lowering, result, _planar(tensor_shape(result)))
    if not x.spatially_whole:
        raise UnsupportedLayer("a conv input inside another buffer")
    bias = lowering.storage(op.bias) if op.bias is not None else None
    stage = _OutputStage.of(
        lowering, bias, requantize, activation, accumulator_element, out_c, result
    )

    tile_sizes = plan.tile
    split = tile_sizes.depth < in_per_group
    grouped = groups > 1
    dims = {
        "n": Dim("n", batch, 1),
        "h": Dim("h", out_h, tile_sizes.rows),
        "w": Dim("w", out_w, tile_sizes.columns),
        "c": Dim("c", out_c, tile_sizes.channels),
        "k": Dim("k", in_per_group, tile_sizes.depth),
    }
    order = ["c", "n", "h", "w", "k"] if plan.order == "weights" else ["n", "h", "w", "c", "k"]

    def groups_in(size_c: int) -> int:
        return size_c // out_per_group if grouped and size_c % out_per_group == 0 else 1

    state: dict[str, SSAValue] = {}

    def load_input(bounds: Bounds) -> None:
        h, wb, c, k = bounds["h"], bounds["w"], bounds["c"], bounds["k"]
        rows = (h.size - 1) * strides[0] + (kernel_h - 1) * dilations[0] + 1
        columns = (wb.size - 1) * strides[1] + (kernel_w - 1) * dilations[1] + 1
        channels = groups_in(c.size) * k.size if grouped else k.size
        box = b.sram("input", [1, rows, columns, channels], input_element)
        if grouped:
            group = em.floor_div(c, out_per_group)
            scaled = em.add(arith.MuliOp(group, em.const(in_per_group))).results[0]
            first = em.affine([(k, 1)])
            channel: SSAValue | int = em.add(arith.AddiOp(scaled, first)).results[0]
        else:
            channel = em.affine([(k, 1)])
        origins = [
            em.affine([(bounds["n"], 1)]),
            em.affine([(h, strides[0])], -pads[0]),
            em.affine([(wb, strides[1])], -pads[1]),
            channel,
        ]
        b.load(x, origins, box, pad=zero_point, upsample=[1, *upsample, 1])
        state["input"] = box

    def load_weights(bounds: Bounds) -> None:
        c, k = bounds["c"], bounds["k"]
        buffer = b.sram("weights", [c.size, kernel_h, kernel_w, k.size], weight_element)
        b.load(w, [em.affine([(c, 1)]), 0, 0, em.affine([(k, 1)])], buffer)
        state["weights"] = buffer

    def load_parameters(bounds: Bounds) -> None:
        stage.load(b, bounds["c"], state)

    def accumulator(bounds: Bounds) -> SSAValue:
        shape = [1, bounds["h"].size, bounds["w"].size, bounds["c"].size]
        return b.sram("accumulator", shape, accumulator_element)

    def clear(bounds: Bounds) -> None:
        em.add(_create(tile.FillOp, [accumulator(bounds)], value=0.0 if floating else 0))

    def compute(bounds: Bounds) -> None:
        em.add(
            _create(
                tile.ConvOp,
                [state["input"], state["weights"], accumulator(bounds)],
                strides=strides if strides != [1, 1] else None,
                dilations=dilations if dilations != [1, 1] else None,
                group=groups_in(bounds["c"].size) if grouped else None,
                input_zero_point=zero_point or None,
                accumulate=True if split else None,
            )
        )

    def finish(bounds: Bounds) -> None:
        out = stage.finish(b, accumulator(bounds), state)
        origins = [em.affine([(bounds[name], 1)]) for name in ("n", "h", "w", "c")]
        b.store(out, y, origins)

    input_depends = ["n", "h", "w"] + (["c"] if grouped else []) + (["k"] if split else [])
    b.at(input_depends, load_input)
    b.at(["c"] + (["k"] if split else []), load_weights)
    b.at(["c"], load_parameters)
    if split:
        b.at(order[:-1], clear)
    b.at(order, compute)
    b.at(order[:-1], finish, after=True)
    b.emit([dims[name] for name in order])


def _transposed_conv_weights(
    lowering: FunctionLowering, weight: SSAValue, groups: int, element: Attribute
) -> Storage:
    """The weights of a transposed conv as those of the conv it is tiled as: the NHWC
    weight [C, KH, KW, M/g] becomes [M, KH, KW, C/g], the kernel flipped, a new
    constant in the weight's place (compilers reorder weights for the array anyway)."""
    owner = weight.owner
    if not isinstance(owner, qnn.ConstantOp | nn.ConstantOp) or not owner.has_data():
        raise UnsupportedLayer("a transposed conv's weights are not a constant")
    values = owner.array()
    if values.ndim == 3:  # 1-D: [C, K, M/g] as [C, K, 1, M/g]
        values = values[:, :, None, :]
    channels, kernel_h, kernel_w, out_per_group = values.shape
    grouped = values.reshape(groups, channels // groups, kernel_h, kernel_w, out_per_group)
    flipped = grouped[:, :, ::-1, ::-1, :].transpose(0, 4, 2, 3, 1)
    array = np.ascontiguousarray(
        flipped.reshape(groups * out_per_group, kernel_h, kernel_w, channels // groups)
    )
    buffer = lowering.constant_buffer(array, element, replaces=weight)
    return Storage(buffer, (0, 0, 0, 0), tuple(array.shape))


def _planar(shape: Sequence[int]) -> tuple[int, int, int, int]:
    """A rank-3 NHWC shape [N, L, C] (or weight [O, K, C]) as [N, L, 1, C]."""
    if len(shape) == 3:
        return (shape[0], shape[1], 1, shape[2])
    assert len(shape) == 4
    return (shape[0], shape[1], shape[2], shape[3])


def _planar_pair(values: Sequence[int] | None, default: int) -> list[int]:
    """Strides or dilations of a 1-D or 2-D window as two values."""
    values = list(values or [])
    return [*values, default, default][:2] if len(values) != 1 else [values[0], default]


def _planar_pads(values: Sequence[int] | None) -> list[int]:
    """[top, left, bottom, right] from 2-D pads, or [begin, end] of a 1-D window."""
    values = list(values or [])
    if len(values) == 2:
        return [values[0], 0, values[1], 0]
    return values or [0, 0, 0, 0]


def _output_params(
    lowering: FunctionLowering, requantize: qnn.RequantizeOp | None, channels: int
) -> Storage | None:
    """A DDR buffer of [C, 2] (multiplier, shift) pairs of a MAC layer's requantize."""
    if requantize is None:
        return None
    props = requantize.props()
    multipliers, shifts = props.ints("multiplier") or [], props.ints("shift") or []
    rank = len(tensor_shape(requantize.input))
    axis = props.int("axis")
    if axis is not None and axis % rank != rank - 1:
        raise UnsupportedLayer("per-channel requantization along another axis than the last")
    if len(multipliers) == 1:
        multipliers, shifts = multipliers * channels, shifts * channels
    array = _requant_params(multipliers, shifts)
    buffer = lowering.constant_buffer(array, i32)
    return Storage(buffer, (0, 0), tuple(array.shape))


# --------------------------------------------------------------------------------------
# Matrix products


def lower_gemm(
    lowering: FunctionLowering, op: qnn.GemmOp | qnn.MatMulOp | nn.GemmOp | nn.MatMulOp
) -> None:
    """A `qnn.gemm` or a `qnn.matmul` with a 2-D right side (and its requantize), or
    their float `nn` forms (with a fused relu or clip)."""
    props = op.props()
    gemm = isinstance(op, qnn.GemmOp | nn.GemmOp)
    if gemm and props.bool("trans_a"):
        raise UnsupportedLayer("a gemm with a transposed left side")
    trans_b = gemm and props.bool("trans_b")
    lhs_shape, rhs_shape = tensor_shape(op.lhs), tensor_shape(op.rhs)
    if len(rhs_shape) != 2 or len(lhs_shape) < 2:
        raise UnsupportedLayer("a batched matrix product")
    floating = _floating(op.lhs, op.rhs, op.result)
    if floating != isinstance(op, nn.GemmOp | nn.MatMulOp):
        raise UnsupportedLayer("an nn matrix product on quantized values")
    if not floating and not is_symmetric(op.rhs):
        raise UnsupportedLayer("a right side with a zero point")
    if isinstance(op, nn.GemmOp) and (props.float("alpha"), props.float("beta")) != (1.0, 1.0):
        raise UnsupportedLayer("a gemm with alpha or beta")
    activation = _float_bounds(op) if floating else None
    accumulator_element = f32 if floating else i32
    bias_value = op.bias if isinstance(op, qnn.GemmOp | nn.GemmOp) else None
    out_shape = tensor_shape(op.result)
    features = out_shape[-1]
    if bias_value is not None and math.prod(tensor_shape(bias_value)) != features:
        raise UnsupportedLayer("a bias that is not one value per output feature")
    requantize = fused_requantize(op)
    result = requantize.result if requantize is not None else op.result
    depth = lhs_shape[-1]
    lead = list(out_shape[:-1])
    zero_point = zero_point_of(op.lhs)
    lhs_element, rhs_element = _element(op.lhs), _element(op.rhs)

    plan = lowering.plan(op)
    b = LayerBuilder(lowering, plan)
    em = b.em
    if requantize is not None:
        lowering.lowered.add(requantize)
    a, w, y = lowering.storage(op.lhs), lowering.storage(op.rhs), lowering.storage(result)
    bias = None
    if bias_value is not None:
        bias = lowering.storage(bias_value)
        if len(bias.shape) != 1:
            bias = _flat_view(lowering, bias, features)
    stage = _OutputStage.of(
        lowering, bias, requantize, activation, accumulator_element, features, result
    )

    tile_sizes = plan.tile
    split = tile_sizes.depth < depth
    boxes = row_boxes(lead, tile_sizes.rows)
    lead_names = [f"m{axis}" for axis in range(len(lead))]
    dims = {name: Dim(name, extent, box) for name, extent, box in zip(lead_names, lead, boxes)}
    dims["c"] = Dim("c", features, tile_sizes.channels)
    dims["k"] = Dim("k", depth, tile_sizes.depth)
    order = ["c", *lead_names, "k"] if plan.order == "weights" else [*lead_names, "c", "k"]
    state: dict[str, SSAValue] = {}

    def rows(bounds: Bounds) -> int:
        return math.prod(bounds[name].size for name in lead_names)

    def load_lhs(bounds: Bounds) -> None:
        box_shape = [bounds[name].size for name in lead_names] + [bounds["k"].size]
        box = b.sram("input", box_shape, lhs_element)
        origins = [em.affine([(bounds[name], 1)]) for name in lead_names]
        b.load(a, [*origins, em.affine([(bounds["k"], 1)])], box)
        state["lhs"] = b.view(box, [rows(bounds), bounds["k"].size])

    def load_rhs(bounds: Bounds) -> None:
        c, k = bounds["c"], bounds["k"]
        shape = [c.size, k.size] if trans_b else [k.size, c.size]
        buffer = b.sram("weights", shape, rhs_element)
        channel, row = em.affine([(c, 1)]), em.affine([(k, 1)])
        b.load(w, [channel, row] if trans_b else [row, channel], buffer)
        state["rhs"] = buffer

    def load_parameters(bounds: Bounds) -> None:
        stage.load(b, bounds["c"], state)

    def accumulator(bounds: Bounds) -> SSAValue:
        return b.sram("accumulator", [rows(bounds), bounds["c"].size], accumulator_element)

    def clear(bounds: Bounds) -> None:
        em.add(_create(tile.FillOp, [accumulator(bounds)], value=0.0 if floating else 0))

    def compute(bounds: Bounds) -> None:
        em.add(
            _create(
                tile.MatmulOp,
                [state["lhs"], state["rhs"], accumulator(bounds)],
                a_zero_point=zero_point or None,
                trans_b=True if trans_b else None,
                accumulate=True if split else None,
            )
        )

    def finish(bounds: Bounds) -> None:
        out = stage.finish(b, accumulator(bounds), state)
        box_shape = [bounds[name].size for name in lead_names] + [bounds["c"].size]
        origins = [em.affine([(bounds[name], 1)]) for name in [*lead_names, "c"]]
        b.store(b.view(out, box_shape), y, origins)

    b.at([*lead_names] + (["k"] if split else []), load_lhs)
    b.at(["c"] + (["k"] if split else []), load_rhs)
    b.at(["c"], load_parameters)
    if split:
        b.at(order[:-1], clear)
    b.at(order, compute)
    b.at(order[:-1], finish, after=True)
    b.emit([dims[name] for name in order])


def _flat_view(lowering: FunctionLowering, storage: Storage, size: int) -> Storage:
    if not storage.whole:
        raise UnsupportedLayer("a bias inside another buffer")
    buffer_type = storage.buffer.type
    assert isinstance(buffer_type, MemRefType)
    view = lowering.emitter.add(
        tile.ViewOp.create(
            operands=[storage.buffer],
            result_types=[memref([size], buffer_type.element_type, DDR)],
        )
    )
    return Storage(view.results[0], (0,), (size,))


# --------------------------------------------------------------------------------------
# Pooling


POOLS = (
    qnn.MaxPoolOp,
    qnn.AveragePoolOp,
    qnn.GlobalAveragePoolOp,
    nn.MaxPoolOp,
    nn.AveragePoolOp,
    nn.GlobalAveragePoolOp,
)

FLOAT32_LOWEST = float(np.finfo(np.float32).min)
"""The padding of a float max pool: never larger than a value in the window."""


def lower_pool(lowering: FunctionLowering, op: Operation) -> None:
    """Max, average and global average pooling, NHWC (`qnn`, or float `nn`)."""
    props = op.props()  # type: ignore[attr-defined]
    if props.str("layout") != "nhwc" or len(tensor_shape(op.operands[0])) != 4:
        raise UnsupportedLayer("only NHWC 2-D pooling is tiled")
    source, result = op.operands[0], op.results[0]
    batch, in_h, in_w, _ = tensor_shape(source)
    _, out_h, out_w, channels = tensor_shape(result)
    element = _element(source)
    if _element(result) != element:
        raise UnsupportedLayer("a pool that changes the storage type")
    floating = element == f32
    if floating != isinstance(op, nn.NNOp):
        raise UnsupportedLayer("an nn pool on quantized values")
    whole = isinstance(op, qnn.GlobalAveragePoolOp | nn.GlobalAveragePoolOp)
    kernel = [in_h, in_w] if whole else list(props.ints("kernel_shape") or [])
    strides = [1, 1] if whole else list(props.ints("strides") or [1, 1])
    dilations = [1, 1] if whole else list(props.ints("dilations") or [1, 1])
    pads = [0, 0, 0, 0] if whole else list(props.ints("pads") or [0, 0, 0, 0])
    average = not isinstance(op, qnn.MaxPoolOp | nn.MaxPoolOp)
    zero_point = zero_point_of(source)
    pad: int | float = zero_point if average else tile.storage_range(element)[0] if not (
        floating
    ) else FLOAT32_LOWEST  # fmt: skip

    plan = lowering.plan(op)
    b = LayerBuilder(lowering, plan)
    em = b.em
    x, y = lowering.storage(source), lowering.storage(result)
    if not x.spatially_whole:
        raise UnsupportedLayer("a pool input inside another buffer")
    tile_sizes = plan.tile
    dims = [
        Dim("n", batch, 1),
        Dim("h", out_h, tile_sizes.rows),
        Dim("w", out_w, tile_sizes.columns),
        Dim("c", channels, tile_sizes.channels),
    ]

    def body(bounds: Bounds) -> None:
        h, w, c = bounds["h"], bounds["w"], bounds["c"]
        rows = (h.size - 1) * strides[0] + (kernel[0] - 1) * dilations[0] + 1
        columns = (w.size - 1) * strides[1] + (kernel[1] - 1) * dilations[1] + 1
        box = b.sram("input", [1, rows, columns, c.size], element)
        n = em.affine([(bounds["n"], 1)])
        channel = em.affine([(c, 1)])
        b.load(
            x,
            [n, em.affine([(h, strides[0])], -pads[0]), em.affine([(w, strides[1])], -pads[1]),
             channel],
            box,
            pad=pad,
        )  # fmt: skip
        out = b.sram("output", [1, h.size, w.size, c.size], element)
        row, column = em.affine([(h, 1)]), em.affine([(w, 1)])
        values: dict[str, object] = {
            "kind": "average" if average else "max",
            "kernel_shape": kernel,
            "strides": strides if strides != [1, 1] else None,
            "dilations": dilations if dilations != [1, 1] else None,
        }
        origin: list[SSAValue] = []
        if average:
            origin = [row, column]
            values.update(
                pads=pads if any(pads) else None,
                input_h=in_h,
                input_w=in_w,
                count_include_pad=True if props.bool("count_include_pad") else None,
                input_zero_point=zero_point or None,
                output_zero_point=zero_point_of(result) or None,
            )
            if not floating:
                values.update(multiplier=props.int("multiplier"), shift=props.int("shift"))
        pool = tile.PoolOp.create(operands=[box, out, *origin], properties=_props(**values))
        em.add(pool)
        b.store(out, y, [n, row, column, channel])

    b.at(["n", "h", "w", "c"], body)
    b.emit(dims)


# --------------------------------------------------------------------------------------
# Elementwise ops, pads and concats: tiles of the output's leading axes x its last axis


def _elementwise_layer(
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


def _storage_as(lowering: FunctionLowering, value: SSAValue, shape: Sequence[int]) -> Storage:
    """A value's storage, seen with `shape` (the same elements; [1] for a scalar)."""
    storage = lowering.storage(value)
    if list(storage.shape) == list(shape):
        return storage
    if not storage.whole:
        raise UnsupportedLayer("a reshaped value inside another buffer")
    buffer_type = storage.buffer.type
    assert isinstance(buffer_type, MemRefType)
    view = lowering.emitter.add(
        tile.ViewOp.create(
            operands=[storage.buffer],
            result_types=[memref(shape, buffer_type.element_type, DDR)],
        )
    )
    return Storage(view.results[0], (0,) * len(shape), tuple(shape))


def lower_elementwise(lowering: FunctionLowering, op: Operation) -> None:
    """add, mul, clamp, lut and a standalone requantize; an add or mul operand may
    broadcast (a per-channel or per-tensor one: its box has a size of 1 where its
    shape does)."""
    result = op.results[0]
    shape = list(tensor_shape(result)) or [1]
    inputs = list(op.operands)
    # Each operand as the output's rank (leading 1s), and where it broadcasts.
    operand_shapes = [_broadcast_shape(tensor_shape(value), shape) for value in inputs]
    if any(operand != shape for operand in operand_shapes) and not isinstance(op, BROADCASTING):
        raise UnsupportedLayer("operands that broadcast")
    elements = [_element(value) for value in inputs]
    output_element = _element(result)
    if isinstance(op, FLOAT_ELEMENTWISE) != _floating(*inputs, result):
        raise UnsupportedLayer("an nn elementwise op on quantized values")
    props = op.props()  # type: ignore[attr-defined]
    layer = layer_of(op) or _elementwise_layer(
        op.name, op.name, shape, len(inputs), elements[0], output_element=output_element
    )
    plan = lowering.plan(op, layer)
    sources = [
        _storage_as(lowering, value, operand) for value, operand in zip(inputs, operand_shapes)
    ]
    target = _storage_as(lowering, result, shape)
    table: Storage | None = None
    params: Storage | None = None
    if isinstance(op, qnn.LutOp):
        entries = np.asarray(props.ints("table") or [], dtype=np.int64)
        dtype = np.uint8 if tile.storage_range(output_element)[0] == 0 else np.int8
        array = entries.astype(dtype)
        table = Storage(lowering.constant_buffer(array, output_element), (0,), (256,))
    if isinstance(op, qnn.RequantizeOp):
        multipliers, shifts = props.ints("multiplier") or [], props.ints("shift") or []
        axis = props.int("axis")
        if axis is not None and axis % len(shape) != len(shape) - 1:
            raise UnsupportedLayer("per-channel requantization along another axis than the last")
        array = _requant_params(multipliers, shifts)
        params = Storage(lowering.constant_buffer(array, i32), (0, 0), tuple(array.shape))
    tiled = Elementwise(lowering, plan, shape)
    b, em = tiled.builder, tiled.builder.em
    state: dict[str, SSAValue] = {}

    def load_table(bounds: Bounds) -> None:
        assert table is not None
        buffer = b.sram("parameters", [256], output_element)
        b.load(table, [0], buffer)
        state["table"] = buffer

    def load_params(bounds: Bounds) -> None:
        assert params is not None
        if params.shape[0] == 1:
            buffer = b.sram("parameters", [1, 2], i32)
            b.load(params, [0, 0], buffer)
        else:
            channel = bounds[tiled.names[-1]]
            buffer = b.sram("parameters", [channel.size, 2], i32)
            b.load(params, [em.affine([(channel, 1)]), 0], buffer)
        state["params"] = buffer

    def body(bounds: Bounds) -> None:
        box, origins = tiled.box(bounds), tiled.origins(bounds)
        tiles = []
        for slot, (source, element) in enumerate(zip(sources, elements)):
            # A broadcast axis: the operand's one element along it.
            source_box = [1 if n == 1 else size for n, size in zip(source.shape, box)]
            source_origins = [0 if n == 1 else o for n, o in zip(source.shape, origins)]
            buffer = b.sram("input", source_box, element, within=b.input_slot(slot))
            b.load(source, source_origins, buffer)
            tiles.append(buffer)
        out = b.sram("output", box, output_element)
        low, high = _clamp(op) if isinstance(op, QUANTIZED_ELEMENTWISE) else (None, None)
        output_zero_point = zero_point_of(result) or None
        if isinstance(op, qnn.AddOp | qnn.MulOp):
            common = dict(
                lhs_zero_point=zero_point_of(inputs[0]) or None,
                rhs_zero_point=zero_point_of(inputs[1]) or None,
                output_zero_point=output_zero_point,
                multiplier=props.int("multiplier"),
                shift=props.int("shift"),
                clamp_min=low,
                clamp_max=high,
            )
            if isinstance(op, qnn.AddOp):
                common.update(
                    lhs_multiplier=props.int("lhs_multiplier"),
                    lhs_shift=props.int("lhs_shift"),
                    rhs_multiplier=props.int("rhs_multiplier"),
                    rhs_shift=props.int("rhs_shift"),
                    left_shift=props.int("left_shift"),
                )
                em.add(_create(tile.AddOp, [*tiles, out], **common))
            else:
                em.add(_create(tile.MulOp, [*tiles, out], **common))
        elif isinstance(op, nn.AddOp | nn.MulOp):
            em.add(_create(tile.AddFOp if isinstance(op, nn.AddOp) else tile.MulFOp, [*tiles, out]))
            activation = _float_bounds(op)
            if activation is not None:
                _clamp_in_place(em, out, activation)
        elif isinstance(op, nn.ReluOp | nn.ClipOp):
            floor, ceiling = (0.0, None) if isinstance(op, nn.ReluOp) else (
                props.float("min"), props.float("max")
            )  # fmt: skip
            em.add(_create(tile.ClampOp, [tiles[0], out], clamp_min=floor, clamp_max=ceiling))
        elif isinstance(op, qnn.ClampOp):
            em.add(_create(tile.ClampOp, [tiles[0], out], clamp_min=low, clamp_max=high))
        elif isinstance(op, qnn.LutOp):
            em.add(_create(tile.LutOp, [tiles[0], state["table"], out]))
        else:
            assert isinstance(op, qnn.RequantizeOp)
            em.add(
                _create(
                    tile.RequantizeOp,
                    [tiles[0], state["params"], out],
                    input_zero_point=zero_point_of(inputs[0]) or None,
                    output_zero_point=output_zero_point,
                    clamp_min=low,
                    clamp_max=high,
                )
            )
        b.store(out, target, origins)

    if table is not None:
        b.at([], load_table)
    if params is not None:
        b.at([] if params.shape[0] == 1 else [tiled.names[-1]], load_params)
    tiled.run(body)


def _broadcast_shape(shape: Sequence[int], output: Sequence[int]) -> list[int]:
    """`shape` with leading 1s to the output's rank (numpy's broadcasting)."""
    return [1] * (len(output) - len(shape)) + list(shape) if shape else [1] * len(output)


def lower_transpose(lowering: FunctionLowering, op: nn.TransposeOp) -> None:
    """A transpose: each output box is read as the input box it comes from (the same
    origins and sizes, in the input's axis order) and permuted in SRAM."""
    perm = list(op.props().ints("perm") or [])
    shape = list(tensor_shape(op.result))
    element = _element(op.input)
    plan = lowering.plan(op, _elementwise_layer(op.name, op.name, shape, 1, element))
    source, target = lowering.storage(op.input), lowering.storage(op.result)
    tiled = Elementwise(lowering, plan, shape)
    b, em = tiled.builder, tiled.builder.em

    def body(bounds: Bounds) -> None:
        box, origins = tiled.box(bounds), tiled.origins(bounds)
        input_box = [0] * len(perm)
        input_origins: list[SSAValue | int] = [0] * len(perm)
        for axis, input_axis in enumerate(perm):
            input_box[input_axis], input_origins[input_axis] = box[axis], origins[axis]
        buffer = b.sram("input", input_box, element)
        b.load(source, input_origins, buffer)
        out = b.sram("output", box, element)
        em.add(_create(tile.TransposeOp, [buffer, out], perm=perm))
        b.store(out, target, origins)

    tiled.run(body)


def lower_slices(lowering: FunctionLowering, op: nn.SliceOp | nn.SplitOp) -> None:
    """A slice (unit steps) or a split: each result is a box of the input, copied
    tile by tile."""
    props = op.props()
    source_shape = list(tensor_shape(op.operands[0]))
    rank = len(source_shape)
    starts_of: list[list[int]] = []
    if isinstance(op, nn.SplitOp):
        axis = (props.int("axis") or 0) % rank
        start = 0
        for result in op.results:
            first = [0] * rank
            first[axis] = start
            starts_of.append(first)
            start += tensor_shape(result)[axis]
    else:
        starts, ends = props.ints("starts") or [], props.ints("ends") or []
        axes = props.ints("axes") or list(range(len(starts)))
        steps = props.ints("steps") or [1] * len(starts)
        if any(step != 1 for step in steps):
            raise UnsupportedLayer("a slice with steps")
        first = [0] * rank
        for axis, begin, end in zip(axes, starts, ends):
            axis %= rank
            first[axis] = nn.slice_bounds(source_shape[axis], begin, end, 1)[0]
        starts_of.append(first)
    element = _element(op.operands[0])
    source = lowering.storage(op.operands[0])
    for result, first in zip(op.results, starts_of):
        shape = list(tensor_shape(result))
        if not all(shape):
            continue  # an empty piece moves nothing
        plan = lowering.plan(op, _elementwise_layer(op.name, op.name, shape, 1, element))
        target = lowering.storage(result)
        tiled = Elementwise(lowering, plan, shape)
        builder = tiled.builder

        def body(bounds: Bounds, tiled: Elementwise = tiled, first: list[int] = first,
                 target: Storage = target, builder: LayerBuilder = builder) -> None:  # fmt: skip
            buffer = builder.sram("input", tiled.box(bounds), element)
            builder.load(source, tiled.origins(bounds, first), buffer)
            builder.store(buffer, target, tiled.origins(bounds))

        tiled.run(body)


def lower_pad(lowering: FunctionLowering, op: qnn.PadOp) -> None:
    """A constant pad: each output box is a copy of the input box it comes from, the
    part outside the input written with the zero point."""
    props = op.props()
    if props.str("mode") not in (None, "constant") or len(op.operands) != 1:
        raise UnsupportedLayer("a reflect or edge pad")
    shape = list(tensor_shape(op.result))
    rank = len(shape)
    pads = list(props.ints("pads") or [0] * 2 * rank)
    element = _element(op.input)
    layer = _elementwise_layer(op.name, op.name, shape, 1, element)
    plan = lowering.plan(op, layer)
    source, target = lowering.storage(op.input), lowering.storage(op.result)
    if not source.whole:
        raise UnsupportedLayer("a pad input inside another buffer")
    tiled = Elementwise(lowering, plan, shape)
    b = tiled.builder

    def body(bounds: Bounds) -> None:
        buffer = b.sram("input", tiled.box(bounds), element)
        b.load(source, tiled.origins(bounds, [-p for p in pads[:rank]]), buffer,
               pad=zero_point_of(op.input))  # fmt: skip
        b.store(buffer, target, tiled.origins(bounds))

    tiled.run(body)


def lower_concat(lowering: FunctionLowering, op: qnn.ConcatOp | nn.ConcatOp) -> None:
    """Each input not already written into its slice (zero-copy) is copied there,
    rescaled to the result's type when it has another (`qnn`)."""
    props = op.props()
    result = op.results[0]
    shape = list(tensor_shape(result))
    axis = (props.int("axis") or 0) % len(shape)
    output_element = _element(result)
    multipliers, shifts = None, None
    if isinstance(op, qnn.ConcatOp):
        multipliers, shifts = props.ints("multipliers"), props.ints("shifts")
    target = lowering.storage(result)
    start = 0
    for index, value in enumerate(op.operands):
        value_shape = list(tensor_shape(value))
        element = _element(value)
        rescale = multipliers is not None and shifts is not None
        identity = (multipliers[index], shifts[index]) == fixed_point.IDENTITY_MULTIPLIER if (
            rescale and multipliers and shifts
        ) else True  # fmt: skip
        same = value.type == result.type or (
            quantized_element(value.type) == quantized_element(result.type)
        )
        needs_rescale = rescale and not (identity and same)
        if element != output_element and not needs_rescale:
            raise UnsupportedLayer("a concat of different storage types")
        source = lowering.storage(value)
        base = list(target.base)
        base[axis] += start
        slot = Storage(target.buffer, tuple(base), tuple(value_shape))
        start += value_shape[axis]
        in_place = source.buffer == slot.buffer and source.base == slot.base
        if in_place and not needs_rescale:
            continue  # written by its producer into the slice
        pair = (multipliers[index], shifts[index]) if multipliers and shifts else None
        _copy_into(lowering, op, source, slot, value, element, output_element,
                   pair if needs_rescale else None, zero_point_of(result))  # fmt: skip


def _copy_into(
    lowering: FunctionLowering,
    op: Operation,
    source: Storage,
    target: Storage,
    value: SSAValue,
    element: Attribute,
    output_element: Attribute,
    rescale: tuple[int, int] | None,
    output_zero_point: int,
) -> None:
    """Copy (and rescale) a value into a box of another buffer, tile by tile via SRAM."""
    shape = list(target.shape)
    pair_bytes = REQUANT_PAIR_BYTES if rescale is not None else 0
    layer = _elementwise_layer(
        op.name, op.name, shape, 1, element, pair_bytes, output_element=output_element
    )
    plan = lowering.plan(op, layer)
    tiled = Elementwise(lowering, plan, shape)
    b, em = tiled.builder, tiled.builder.em
    params: Storage | None = None
    if rescale is not None:
        array = _requant_params([rescale[0]], [rescale[1]])
        params = Storage(lowering.constant_buffer(array, i32), (0, 0), (1, 2))
    state: dict[str, SSAValue] = {}

    def load_params(bounds: Bounds) -> None:
        assert params is not None
        buffer = b.sram("parameters", [1, 2], i32)
        b.load(params, [0, 0], buffer)
        state["params"] = buffer

    def body(bounds: Bounds) -> None:
        box, origins = tiled.box(bounds), tiled.origins(bounds)
        buffer = b.sram("input", box, element)
        b.load(source, origins, buffer)
        if params is None:
            b.store(buffer, target, origins)
            return
        out = b.sram("output", box, output_element)
        em.add(
            _create(
                tile.RequantizeOp,
                [buffer, state["params"], out],
                input_zero_point=zero_point_of(value) or None,
                output_zero_point=output_zero_point or None,
            )
        )
        b.store(out, target, origins)

    if params is not None:
        b.at([], load_params)
    tiled.run(body)


# --------------------------------------------------------------------------------------
# Dispatch


QUANTIZED_ELEMENTWISE = (qnn.AddOp, qnn.MulOp, qnn.ClampOp, qnn.RequantizeOp)
BROADCASTING = (qnn.AddOp, qnn.MulOp, nn.AddOp, nn.MulOp)
FLOAT_ELEMENTWISE = (nn.AddOp, nn.MulOp, nn.ReluOp, nn.ClipOp)
ELEMENTWISE = (*QUANTIZED_ELEMENTWISE, qnn.LutOp, *FLOAT_ELEMENTWISE)


def lowerer_for(op: Operation, lowering: FunctionLowering) -> Callable[[], None] | None:
    """The function that tiles `op`, or None for an op that stays on tensors."""
    if (
        any(isinstance(value.type, MemRefType) for value in (*op.operands, *op.results))
        or op.regions
    ):
        return None
    if not runs_on_npu(op):
        return None
    if isinstance(op, ConvLike):
        return lambda: lower_conv(lowering, op)
    if isinstance(op, qnn.GemmOp | qnn.MatMulOp | nn.GemmOp | nn.MatMulOp):
        return lambda: lower_gemm(lowering, op)
    if isinstance(op, POOLS):
        return lambda: lower_pool(lowering, op)
    if isinstance(op, ELEMENTWISE):
        return lambda: lower_elementwise(lowering, op)
    if isinstance(op, qnn.PadOp):
        return lambda: lower_pad(lowering, op)
    if isinstance(op, nn.TransposeOp):
        return lambda: lower_transpose(lowering, op)
    if isinstance(op, nn.SliceOp | nn.SplitOp):
        return lambda: lower_slices(lowering, op)
    if isinstance(op, qnn.ConcatOp | nn.ConcatOp):
        return lambda: lower_concat(lowering, op)
    return None
