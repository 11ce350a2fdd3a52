"""Vector-unit layers of the backend table: pooling and elementwise ops.

Pooling (max, average, global average; `qnn` and float `nn`) is a depthwise window on
the vector unit. Elementwise ops (add and mul, broadcasting; clamp, relu, clip; a
lookup table; a standalone requantize) are one loop nest over the output's leading
axes and its last axis, which `lower_elementwise` builds for all of them; each kind
gives the tile op that computes one tile (`emit_*`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import f32, i16, i32, i64
from xdsl.ir import Attribute, Operation, SSAValue

from irc.backend.mac import channels_last, float_activation, mixed_types
from irc.dialects import nn, qnn, quant, tile
from irc.dialects.quant import full_range, quantized_element
from irc.ir import fixed_point, weights
from irc.tiling.builder import (
    Bounds,
    Elementwise,
    LayerBuilder,
    broadcast_shape,
    buffer_element,
    clamp_bounds,
    clamp_in_place,
    create,
    float_bounds,
    is_floating,
    requant_params,
    storage_as,
    tile_props,
)
from irc.tiling.lowering import Dim, FunctionLowering, Storage, tensor_shape, zero_point_of
from irc.tiling.planner import (
    REQUANT_PAIR_BYTES,
    Layer,
    element_bytes,
    nhwc,
    pads_of,
    pair,
    stored_channels,
)

GLOBAL_POOLS = (qnn.GlobalAveragePoolOp, nn.GlobalAveragePoolOp)
MAX_POOLS = (qnn.MaxPoolOp, nn.MaxPoolOp)

FLOAT32_LOWEST = float(np.finfo(np.float32).min)
"""The padding of a float max pool: never larger than a value in the window."""


# --------------------------------------------------------------------------------------
# Pooling


def pool_layer(op: Operation, name: str) -> Layer:
    """A pooling as a depthwise window on the vector unit (a global pool: one window
    over the whole image)."""
    props = op.props()  # type: ignore[attr-defined]
    channels_last = props.str("layout") == "nhwc"
    n, h, w, c = nhwc(list(tensor_shape(op.operands[0])), channels_last)
    _, oh, ow, oc = nhwc(list(tensor_shape(op.results[0])), channels_last)
    whole = isinstance(op, GLOBAL_POOLS)
    return Layer(
        name,
        op.name,
        "pool",
        "vector",
        n,
        h,
        w,
        c,
        oh,
        ow,
        oc,
        kernel=(h, w) if whole else pair(props.ints("kernel_shape"), 1),
        strides=pair(props.ints("strides"), 1),
        dilations=pair(props.ints("dilations"), 1),
        pads=pads_of(props.ints("pads")),
        groups=c,
        in_bytes=element_bytes(op.operands[0].type),
        out_bytes=element_bytes(op.results[0].type),
        quantized=quantized_element(op.results[0].type) is not None,
        in_c_stored=stored_channels(op.operands[0]),
        out_c_stored=stored_channels(op.results[0]),
        channels_last=channels_last,
    )


def check_pool(op: Operation) -> list[str]:
    """What the pooling lowering takes: NHWC 2-D, the input's storage type kept."""
    reasons = channels_last(op, "pools")
    rank = len(tensor_shape(op.operands[0]))
    if rank != 4:
        reasons.append(f"{op.name} {rank - 2}-D: irc tiles 2-D pooling only")
    reasons += mixed_types(op)
    source, result = op.operands[0].type, op.results[0].type
    if element_bytes(source) != element_bytes(result) or (quantized_element(source) is None) != (
        quantized_element(result) is None
    ):
        reasons.append(f"{op.name} changes the storage type: irc pools within one type")
    return reasons


def lower_pool(lowering: FunctionLowering, op: Operation) -> None:
    """Max, average and global average pooling, NHWC (`qnn`, or float `nn`)."""
    props = op.props()  # type: ignore[attr-defined]
    source, result = op.operands[0], op.results[0]
    batch, in_h, in_w, _ = tensor_shape(source)
    _, out_h, out_w, channels = tensor_shape(result)
    element = buffer_element(source)
    floating = element == f32
    whole = isinstance(op, GLOBAL_POOLS)
    kernel = [in_h, in_w] if whole else list(props.ints("kernel_shape") or [])
    strides = [1, 1] if whole else list(props.ints("strides") or [1, 1])
    dilations = [1, 1] if whole else list(props.ints("dilations") or [1, 1])
    pads = [0, 0, 0, 0] if whole else list(props.ints("pads") or [0, 0, 0, 0])
    average = not isinstance(op, MAX_POOLS)
    zero_point = zero_point_of(source)
    pad: int | float = zero_point if average else tile.storage_range(element)[0] if not (
        floating
    ) else FLOAT32_LOWEST  # fmt: skip

    plan = lowering.plan(op, pool_layer(op, op.name))
    b = LayerBuilder(lowering, plan)
    em = b.em
    # A window reaches past the input's rows and columns into padding: the input
    # must be a buffer of its own, not a slice of another.
    x = lowering.whole(source, spatially=True)
    y = lowering.storage(result)
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
                values.update(
                    multiplier=props.int("multiplier"),
                    shift=props.int("shift"),
                    rounding=rounding_of(op),
                    bias=props.int("bias"),
                )
        pool = tile.PoolOp.create(operands=[box, out, *origin], properties=tile_props(**values))
        em.add(pool)
        b.store(out, y, [n, row, column, channel])

    b.at(["n", "h", "w", "c"], body)
    b.emit(dims)


# --------------------------------------------------------------------------------------
# Elementwise ops


def elementwise_op_layer(
    op: Operation,
    name: str,
    table_bytes: int = 0,
    channel_parameter_bytes: int = 0,
    whole_channels: bool = False,
) -> Layer:
    """An elementwise op as a 1x1 window on the vector unit over its inputs, with the
    constants it keeps in SRAM (`table_bytes` the whole layer shares,
    `channel_parameter_bytes` per channel of the last axis) and whether its tiles hold
    whole rows of the last axis. The ops with constants have their own layer functions
    (`lut_layer`, `softmax_layer`, ...), which their lowerings pass to
    `lower_elementwise`, as the backend table gives them to the planner."""
    result = list(tensor_shape(op.results[0])) or [1]
    channels = result[-1]
    rows = math.prod(result[:-1])
    return Layer(
        name, op.name, "elementwise", "vector", 1, rows, 1, channels, rows, 1, channels,
        groups=channels, inputs=len(op.operands),
        channel_parameter_bytes=channel_parameter_bytes, table_bytes=table_bytes,
        in_bytes=element_bytes(op.operands[0].type),
        out_bytes=element_bytes(op.results[0].type),
        quantized=quantized_element(op.results[0].type) is not None,
        whole_channels=whole_channels,
    )  # fmt: skip


def _table_length(op: Operation) -> int:
    return len(op.props().ints("table") or [])  # type: ignore[attr-defined]


def lut_layer(op: Operation, name: str) -> Layer:
    """A lookup table: its entries (of the output's type) in SRAM."""
    table = _table_length(op) * element_bytes(op.results[0].type)
    return elementwise_op_layer(op, name, table_bytes=table)


def softmax_layer(op: Operation, name: str) -> Layer:
    """A softmax: tiles of whole rows, its i16 exp table in SRAM."""
    return elementwise_op_layer(op, name, table_bytes=2 * _table_length(op), whole_channels=True)


def layer_norm_layer(op: Operation, name: str) -> Layer:
    """A layer norm: tiles of whole rows, a (weight, bias) pair per channel (of i64 for
    16-bit values)."""
    wide = element_bytes(op.operands[0].type) == 2
    pairs = 2 * REQUANT_PAIR_BYTES if wide else REQUANT_PAIR_BYTES
    return elementwise_op_layer(op, name, channel_parameter_bytes=pairs, whole_channels=True)


def lrn_layer(op: Operation, name: str) -> Layer:
    """An LRN: tiles of whole channel rows, its i32 table in SRAM."""
    return elementwise_op_layer(op, name, table_bytes=4 * _table_length(op), whole_channels=True)


def requantize_layer(op: Operation, name: str) -> Layer:
    """A standalone requantize: a (multiplier, shift) pair per channel of the last axis
    when it has one per channel, else one for the layer."""
    props = op.props()  # type: ignore[attr-defined]
    if props.int("axis") is not None and len(props.ints("multiplier") or []) > 1:
        return elementwise_op_layer(op, name, channel_parameter_bytes=REQUANT_PAIR_BYTES)
    return elementwise_op_layer(op, name, table_bytes=REQUANT_PAIR_BYTES)


def check_float_elementwise(op: Operation) -> list[str]:
    """A float `nn` add, mul, relu or clip: every value f32, a fused relu or clip."""
    reasons = mixed_types(op)
    if not reasons and not is_floating(*op.operands, *op.results):
        reasons.append(
            f"{op.name} on integer values: irc tiles it in float (its int8 form is a qnn op)"
        )
    return reasons + float_activation(op)


def check_requantize(op: Operation) -> list[str]:
    """A standalone requantize scales per tensor or per channel along the last axis."""
    axis = op.props().int("axis")  # type: ignore[attr-defined]
    rank = len(tensor_shape(op.operands[0]))
    if axis is not None and rank and axis % rank != rank - 1:
        return [
            f"{op.name} along axis {axis}: irc requantizes per tensor or per channel "
            "(the last axis)"
        ]
    return []


Emit = Callable[[LayerBuilder, Operation, list[SSAValue], SSAValue, dict[str, SSAValue]], None]
"""Emit the tile op that computes one output tile from the input tiles."""


def lower_elementwise(
    lowering: FunctionLowering,
    op: Operation,
    emit: Emit,
    table: np.ndarray | None = None,
    params: np.ndarray | None = None,
    table_element: Attribute | None = None,
    layer: Callable[[Operation, str], Layer] = elementwise_op_layer,
) -> None:
    """The loop nest of an elementwise op: each output box, its operands' boxes (an
    operand that broadcasts has a size of 1 where its shape does), `emit` computing
    the output tile; a lookup `table` (of the output's element type, or
    `table_element`) or requantization `params` (i32 pairs, or i64 ones from an int64
    array) are loaded once (or per channel tile, for per-channel parameters). `layer`
    is the op's layer function in the backend table (the planner's view of it)."""
    result = op.results[0]
    shape = list(tensor_shape(result)) or [1]
    inputs = list(op.operands)
    operand_shapes = [broadcast_shape(tensor_shape(value), shape) for value in inputs]
    elements = [buffer_element(value) for value in inputs]
    output_element = buffer_element(result)
    plan = lowering.plan(op, layer(op, op.name))
    sources = [
        storage_as(lowering, value, operand) for value, operand in zip(inputs, operand_shapes)
    ]
    target = storage_as(lowering, result, shape)
    table_storage: Storage | None = None
    params_storage: Storage | None = None
    table_type = table_element or output_element
    if table is not None:
        buffer = lowering.constant_buffer(table, table_type)
        table_storage = Storage(buffer, (0,), (table.size,))
    params_type = i64 if params is not None and params.dtype == np.int64 else i32
    if params is not None:
        buffer = lowering.constant_buffer(params, params_type)
        params_storage = Storage(buffer, (0, 0), tuple(params.shape))
    tiled = Elementwise(lowering, plan, shape)
    b, em = tiled.builder, tiled.builder.em
    state: dict[str, SSAValue] = {}

    def load_table(bounds: Bounds) -> None:
        assert table_storage is not None
        buffer = b.sram("parameters", list(table_storage.shape), table_type)
        b.load(table_storage, [0], buffer)
        state["table"] = buffer

    def load_params(bounds: Bounds) -> None:
        assert params_storage is not None
        if params_storage.shape[0] == 1:
            buffer = b.sram("parameters", [1, 2], params_type)
            b.load(params_storage, [0, 0], buffer)
        else:
            channel = bounds[tiled.names[-1]]
            buffer = b.sram("parameters", [channel.size, 2], params_type)
            b.load(params_storage, [em.affine([(channel, 1)]), 0], buffer)
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
        emit(b, op, tiles, out, state)
        b.store(out, target, origins)

    if table_storage is not None:
        b.at([], load_table)
    if params_storage is not None:
        b.at([] if params_storage.shape[0] == 1 else [tiled.names[-1]], load_params)
    tiled.run(body)


def _zero_point_props(op: Operation) -> dict[str, object]:
    """The zero points and output clamp of an integer binary op's tile op."""
    low, high = clamp_bounds(op)
    return {
        "lhs_zero_point": zero_point_of(op.operands[0]) or None,
        "rhs_zero_point": zero_point_of(op.operands[1]) or None,
        "output_zero_point": zero_point_of(op.results[0]) or None,
        "clamp_min": low,
        "clamp_max": high,
    }


def _ints(op: Operation, *names: str) -> dict[str, object]:
    props = op.props()  # type: ignore[attr-defined]
    return {name: props.int(name) for name in names}


def rounding_of(op: Operation, name: str = "rounding") -> str | None:
    """A `qnn` op's rounding rule for its tile op: None for irc's half_even (the
    default, left out)."""
    rounding = op.props().str(name)  # type: ignore[attr-defined]
    return None if rounding in (None, fixed_point.HALF_EVEN) else rounding


def emit_add(
    b: LayerBuilder, op: Operation, tiles: list[SSAValue], out: SSAValue, state: dict
) -> None:
    # qnn.add: both inputs rescaled to a common scale, added, requantized
    values = _zero_point_props(op) | _ints(
        op, "multiplier", "shift", "lhs_multiplier", "lhs_shift", "rhs_multiplier",
        "rhs_shift", "left_shift",
    )  # fmt: skip
    values.update(input_rounding=rounding_of(op, "input_rounding"), rounding=rounding_of(op))
    b.em.add(create(tile.AddOp, [*tiles, out], **values))


def emit_mul(
    b: LayerBuilder, op: Operation, tiles: list[SSAValue], out: SSAValue, state: dict
) -> None:
    # qnn.mul: the product of the centred inputs, requantized
    values = _zero_point_props(op) | _ints(op, "multiplier", "shift")
    values["rounding"] = rounding_of(op)
    b.em.add(create(tile.MulOp, [*tiles, out], **values))


def emit_float_binary(
    b: LayerBuilder, op: Operation, tiles: list[SSAValue], out: SSAValue, state: dict
) -> None:
    # nn.add / nn.mul in float, then the fused relu or clip as a clamp
    kind = tile.AddFOp if isinstance(op, nn.AddOp) else tile.MulFOp
    b.em.add(create(kind, [*tiles, out]))
    activation = float_bounds(op)
    if activation is not None:
        clamp_in_place(b.em, out, activation)


def emit_float_clamp(
    b: LayerBuilder, op: Operation, tiles: list[SSAValue], out: SSAValue, state: dict
) -> None:
    # nn.relu / nn.clip in float: a clamp
    props = op.props()  # type: ignore[attr-defined]
    floor, ceiling = (
        (0.0, None) if isinstance(op, nn.ReluOp) else (props.float("min"), props.float("max"))
    )
    b.em.add(create(tile.ClampOp, [tiles[0], out], clamp_min=floor, clamp_max=ceiling))


def emit_clamp(
    b: LayerBuilder, op: Operation, tiles: list[SSAValue], out: SSAValue, state: dict
) -> None:
    # qnn.clamp: stored values clamped
    low, high = clamp_bounds(op)
    b.em.add(create(tile.ClampOp, [tiles[0], out], clamp_min=low, clamp_max=high))


def emit_lut(
    b: LayerBuilder, op: Operation, tiles: list[SSAValue], out: SSAValue, state: dict
) -> None:
    # qnn.lut: each value through the table
    b.em.add(create(tile.LutOp, [tiles[0], state["table"], out]))


def emit_softmax(
    b: LayerBuilder, op: Operation, tiles: list[SSAValue], out: SSAValue, state: dict
) -> None:
    # qnn.softmax: whole rows through the exp table, summed and normalized
    props = op.props()  # type: ignore[attr-defined]
    b.em.add(
        create(
            tile.SoftmaxOp,
            [*tiles, state["table"], out],  # the input, and the mask of nn.masked_softmax
            multiplier=props.int("multiplier"),
            shift=props.int("shift"),
            output_zero_point=zero_point_of(op.results[0]) or None,
        )
    )


def emit_layer_norm(
    b: LayerBuilder, op: Operation, tiles: list[SSAValue], out: SSAValue, state: dict
) -> None:
    # qnn.layer_norm: whole rows normalized with integer statistics
    props = op.props()  # type: ignore[attr-defined]
    b.em.add(
        create(
            tile.LayerNormOp,
            [tiles[0], state["params"], out],
            input_zero_point=zero_point_of(op.operands[0]) or None,
            epsilon_term=props.int("epsilon_term") or None,
            multiplier=props.int("multiplier"),
            shift=props.int("shift"),
            output_zero_point=zero_point_of(op.results[0]) or None,
        )
    )


def emit_lrn(
    b: LayerBuilder, op: Operation, tiles: list[SSAValue], out: SSAValue, state: dict
) -> None:
    # qnn.lrn: whole channel rows normalized by their window sums of squares
    props = op.props()  # type: ignore[attr-defined]
    b.em.add(
        create(
            tile.LRNOp,
            [tiles[0], state["table"], out],
            input_zero_point=zero_point_of(op.operands[0]) or None,
            size=props.int("size"),
            multiplier=props.int("multiplier"),
            shift=props.int("shift"),
            output_zero_point=zero_point_of(op.results[0]) or None,
        )
    )


def emit_requantize(
    b: LayerBuilder, op: Operation, tiles: list[SSAValue], out: SSAValue, state: dict
) -> None:
    # qnn.requantize: rescaled to the result's type
    low, high = clamp_bounds(op)
    b.em.add(
        create(
            tile.RequantizeOp,
            [tiles[0], state["params"], out],
            input_zero_point=zero_point_of(op.operands[0]) or None,
            output_zero_point=zero_point_of(op.results[0]) or None,
            clamp_min=low,
            clamp_max=high,
            rounding=rounding_of(op),
        )
    )


def check_cast(op: Operation) -> list[str]:
    """A `quant.qcast` or `quant.dcast` between f32 and a per-tensor 8- or 16-bit type of
    the full storage range (an activation's, not a narrowed weight's)."""
    element = quantized_element(op.results[0].type) or quantized_element(op.operands[0].type)
    assert element is not None, "the verifier guarantees a quantized side"
    reasons = []
    floats = op.operands[0] if isinstance(op, quant.QuantizeCastOp) else op.results[0]
    if not is_floating(floats):
        reasons.append(f"{op.name} of {floats.type}: irc converts between f32 and integers")
    if element.is_per_axis:
        reasons.append(f"{op.name} per axis: irc converts per-tensor quantized values")
    bits = element.storage_type.width.data
    if bits not in (8, 16) or element.storage_range != full_range(
        bits, element.storage_range[0] < 0
    ):
        reasons.append(
            f"{op.name} to {element}: irc converts to 8- or 16-bit values of the whole "
            "storage range"
        )
    return reasons


def emit_cast(
    b: LayerBuilder, op: Operation, tiles: list[SSAValue], out: SSAValue, state: dict
) -> None:
    # quant.qcast / quant.dcast: f32 <-> 8 or 16 bits with the type's scale and zero point
    quantizing = isinstance(op, quant.QuantizeCastOp)
    element = quantized_element((op.results[0] if quantizing else op.operands[0]).type)
    assert element is not None
    kind = tile.QuantizeOp if quantizing else tile.DequantizeOp
    zero_point = int(element.zero_point_values[0])
    values = {"scale": float(element.scale_values[0]), "zero_point": zero_point or None}
    b.em.add(create(kind, [tiles[0], out], **values))


def lower_with(emit: Emit) -> Callable[[FunctionLowering, Operation], None]:
    """The lowering of an elementwise kind that needs no constants."""

    def lower(lowering: FunctionLowering, op: Operation) -> None:
        lower_elementwise(lowering, op, emit)

    lower.__doc__ = f"The elementwise loop nest of the op, each tile by `{emit.__name__}`."
    return lower


def lower_lut(lowering: FunctionLowering, op: Operation) -> None:
    """A lookup table: its entries (256 of 8 bits, or 513 of 16) loaded into SRAM once,
    then every tile mapped."""
    entries = np.asarray(op.props().ints("table") or [], dtype=np.int64)  # type: ignore[attr-defined]
    element = buffer_element(op.results[0])
    dtype = weights.dtype_of(element)
    lower_elementwise(lowering, op, emit_lut, table=entries.astype(dtype), layer=lut_layer)


def lower_softmax(lowering: FunctionLowering, op: Operation) -> None:
    """A softmax: its i16 exp table loaded into SRAM once, then every tile of whole
    rows normalized."""
    entries = np.asarray(op.props().ints("table") or [], dtype=np.int16)  # type: ignore[attr-defined]
    lower_elementwise(
        lowering, op, emit_softmax, table=entries, table_element=i16, layer=softmax_layer
    )


def lower_layer_norm(lowering: FunctionLowering, op: Operation) -> None:
    """A layer norm: its (weight, bias) pairs loaded into SRAM (i32, or i64 for 16-bit
    values), then every tile of whole rows normalized."""
    props = op.props()  # type: ignore[attr-defined]
    wide = buffer_element(op.operands[0]) == i16
    dtype = np.int64 if wide else np.int32
    params = np.stack(
        [np.asarray(props.ints("weights"), dtype), np.asarray(props.ints("biases"), dtype)],
        axis=1,
    )
    lower_elementwise(lowering, op, emit_layer_norm, params=params, layer=layer_norm_layer)


def check_lrn(op: Operation) -> list[str]:
    """An LRN across the last axis: NHWC (its channels are the rows the vector unit
    holds whole)."""
    return channels_last(op, "local response normalizations")


def lower_lrn(lowering: FunctionLowering, op: Operation) -> None:
    """An LRN: its i32 table loaded into SRAM once, then every tile of whole channel
    rows normalized."""
    entries = np.asarray(op.props().ints("table") or [], dtype=np.int32)  # type: ignore[attr-defined]
    lower_elementwise(lowering, op, emit_lrn, table=entries, table_element=i32, layer=lrn_layer)


def lower_requantize(lowering: FunctionLowering, op: Operation) -> None:
    """A standalone requantize: its (multiplier, shift) pairs loaded into SRAM (per
    channel tile when there is one per channel)."""
    props = op.props()  # type: ignore[attr-defined]
    params = requant_params(props.ints("multiplier") or [], props.ints("shift") or [])
    lower_elementwise(lowering, op, emit_requantize, params=params, layer=requantize_layer)


# --------------------------------------------------------------------------------------
# Support keys


def clamp_key(op: Operation) -> str:
    """A `qnn.clamp` is a relu when it only cuts below the zero point, else a clip."""
    props = op.props()  # type: ignore[attr-defined]
    element = quantized_element(op.results[0].type)
    zero = int(element.zero_point_values[0]) if element is not None else 0
    low, high = props.int("clamp_min"), props.int("clamp_max")
    storage_max = element.storage_range[1] if element is not None else None
    if low == zero and (high is None or high == storage_max):
        return "relu"
    return "clip"


def max_pool_key(op: Operation) -> str:
    """A max pool of one window over the whole image is a global_max_pool.

    lower-to-qnn makes a global max pool (and a reduce_max) a `qnn.max_pool` of one
    window: the target's global_max_pool limits judge it, not a max pool's window."""
    props = op.props()  # type: ignore[attr-defined]
    shape = tensor_shape(op.operands[0])
    spatial = shape[1:-1] if props.str("layout") == "nhwc" else shape[2:]
    kernel = props.ints("kernel_shape") or []
    if list(kernel) == list(spatial) and not any(props.ints("pads") or []):
        return "global_max_pool"
    return "max_pool"


def lut_key(op: Operation) -> str:
    """A `qnn.lut` is the function it tabulates (its `function`)."""
    assert isinstance(op, qnn.LutOp)
    return op.function.data
