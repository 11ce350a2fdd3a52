"""MAC-array layers of the backend table: convolutions (grouped, depthwise, transposed)
and matrix products (gemm, matmul), in their integer `qnn` forms and their float `nn`
forms.

For each: its layer model for the planner (`conv_layer`, `gemm_layer`), the check of
what irc's lowering takes (`check_conv`, `check_gemm`), and its lowering to the tile
level (`lower_conv`, `lower_gemm`). A `qnn` layer runs with the `qnn.requantize` that
alone reads its int32 accumulator: the planner plans them as one layer with an 8-bit
output, and the lowering emits the requantize as the output stage of every tile.
"""

from __future__ import annotations

import math
from collections.abc import MutableMapping
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import TensorType, f32, i32
from xdsl.ir import Attribute, Operation, SSAValue

from irc.backend import fused_requantize
from irc.dialects import nn, qnn, tile
from irc.dialects.quant import quantized_element
from irc.ir import fixed_point
from irc.tiling.builder import (
    FUSED_FLOAT_ACTIVATIONS,
    Bounds,
    LayerBuilder,
    buffer_element,
    buffer_shape,
    clamp_bounds,
    clamp_in_place,
    create,
    float_bounds,
    is_floating,
    planar,
    planar_pads,
    planar_pair,
    requant_params,
    storage_as,
)
from irc.tiling.lowering import (
    Bound,
    Dim,
    FunctionLowering,
    Storage,
    row_boxes,
    storage_element,
    tensor_shape,
    zero_point_of,
)
from irc.tiling.planner import Layer, element_bytes, nhwc, pads_of, pair, stored_channels

ConvLike = qnn.ConvOp | nn.ConvOp | qnn.ConvTransposeOp | nn.ConvTransposeOp
GemmLike = qnn.GemmOp | qnn.MatMulOp | nn.GemmOp | nn.MatMulOp
TRANSPOSED = (qnn.ConvTransposeOp, nn.ConvTransposeOp)


# --------------------------------------------------------------------------------------
# Layer models


def output_value(op: Operation) -> SSAValue:
    """The tensor a MAC layer writes: its requantized result when the requantize of
    its accumulator runs with it."""
    requantize = fused_requantize(op)
    return requantize.result if requantize is not None else op.results[0]


def _output_bytes(op: Operation) -> int:
    return element_bytes(output_value(op).type)


def _shape(value: SSAValue) -> list[int]:
    return list(tensor_shape(value))


def conv_layer(op: Operation, name: str) -> Layer:
    """A conv or transposed conv in NHWC terms (1-D as 2-D of width 1); a transposed
    conv is the stride-1 conv over its input with zero points inserted (docs/tiling.md)."""
    props = op.props()  # type: ignore[attr-defined]
    weight = _shape(op.operands[1])
    channels_last = props.str("layout") == "nhwc"
    n, h, w, c = nhwc(_shape(op.operands[0]), channels_last)
    _, oh, ow, oc = nhwc(_shape(op.results[0]), channels_last)
    transposed = isinstance(op, TRANSPOSED)
    kernel = pair(weight[1:-1] if channels_last else weight[2 + transposed :], 1)
    groups = props.int("group") or 1
    strides = pair(props.ints("strides"), 1)
    dilations = pair(props.ints("dilations"), 1)
    pads = pads_of(props.ints("pads"))
    upsample = (1, 1)
    if transposed:
        upsample, strides = strides, (1, 1)
        reach = [d * (k - 1) for d, k in zip(dilations, kernel)]
        extra = [*(props.ints("output_padding") or []), 0, 0]
        pads = (
            reach[0] - pads[0],
            reach[1] - pads[1],
            reach[0] - pads[2] + extra[0],
            reach[1] - pads[3] + extra[1],
        )
    quantized = isinstance(op, qnn.ConvOp | qnn.ConvTransposeOp)
    return Layer(
        name,
        op.name,
        "depthwise" if groups == c and groups == oc and groups > 1 else "conv",
        "mac",
        n,
        h,
        w,
        c,
        oh,
        ow,
        oc,
        kernel=kernel,
        strides=strides,
        dilations=dilations,
        pads=pads,
        groups=groups,
        in_bytes=element_bytes(op.operands[0].type),
        out_bytes=_output_bytes(op) if quantized else element_bytes(op.results[0].type),
        weight_bytes=element_bytes(op.operands[1].type),
        has_weights=True,
        has_bias=len(op.operands) > 2,
        quantized=quantized,
        in_c_stored=stored_channels(op.operands[0]),
        out_c_stored=stored_channels(output_value(op)),
        channels_last=channels_last,
        conv_steps=True,
        upsample=upsample,
    )


def gemm_layer(op: Operation, name: str) -> Layer:
    """A gemm or a matmul as a 1x1 conv over M rows of K channels."""
    lhs, result = _shape(op.operands[0]), _shape(op.results[0])
    props = op.props()  # type: ignore[attr-defined]
    depth = lhs[0] if props.bool("trans_a") else lhs[-1]
    rows = math.prod(result[:-1])
    batch = 1
    if math.prod(_shape(op.operands[1])[:-2]) > 1:  # one right-side matrix per batch index
        batch, rows = rows // result[-2], result[-2]
    quantized = isinstance(op, qnn.GemmOp | qnn.MatMulOp)
    return Layer(
        name,
        op.name,
        "conv",
        "mac",
        batch,
        rows,
        1,
        depth,
        rows,
        1,
        result[-1],
        in_bytes=element_bytes(op.operands[0].type),
        out_bytes=_output_bytes(op) if quantized else element_bytes(op.results[0].type),
        weight_bytes=element_bytes(op.operands[1].type),
        has_weights=True,
        has_bias=isinstance(op, qnn.GemmOp | nn.GemmOp) and op.bias is not None,
        weights_by_depth=not props.bool("trans_b"),
        quantized=quantized,
    )


# --------------------------------------------------------------------------------------
# Checks: what irc's lowering takes


def mixed_types(op: Operation) -> list[str]:
    """A layer computes in float (every value f32) or in integers (none is)."""
    values = [*op.operands, *op.results]
    elements = [storage_element(value.type) for value in values]
    if any(element == f32 for element in elements) and not all(e == f32 for e in elements):
        return [
            f"{op.name} mixes float and integer values: irc tiles all-float or all-integer layers"
        ]
    return []


def float_activation(op: Operation) -> list[str]:
    """A float layer's fused activation must be one the tile level applies."""
    activation = op.properties.get("activation")
    if not isinstance(activation, nn.ActivationAttr):
        return []
    kind = activation.kind.data
    if kind in FUSED_FLOAT_ACTIVATIONS:
        return []
    return [
        f"{op.name} fused activation {kind} in float: irc applies a fused "
        f"{' or '.join(FUSED_FLOAT_ACTIVATIONS)} to float layers only"
    ]


def output_stage(op: Operation) -> list[str]:
    """The requantize that runs with a MAC layer scales per tensor or per output channel."""
    requantize = fused_requantize(op)
    if requantize is None:
        return []
    axis = requantize.props().int("axis")
    rank = len(tensor_shape(requantize.input))
    if axis is not None and axis % rank != rank - 1:
        return [
            f"{op.name} requantized along axis {axis}: irc requantizes per tensor or per "
            "output channel (the last axis)"
        ]
    return []


def _symmetric_weight(op: Operation, value: SSAValue, what: str) -> list[str]:
    element = quantized_element(value.type)
    if element is None or not any(element.zero_point_values):
        return []
    return [
        f"{op.name} {what} has zero point {int(element.zero_point_values[0])}: irc's MAC array "
        f"takes symmetric {what}s (zero point 0)"
    ]


def channels_last(op: Operation, what: str) -> list[str]:
    """Why irc cannot tile `op` (a conv or pool, `what` in the reason) if it is not
    channels-last; [] when it is."""
    layout = op.props().str("layout") or "nchw"  # type: ignore[attr-defined]
    if layout == "nhwc":
        return []
    return [
        f'{op.name} layout="{layout}": irc tiles channels-last (nhwc) {what} only '
        "(convert-layout makes them)"
    ]


def check_conv(op: Operation) -> list[str]:
    """What the conv lowering takes: NHWC 1-D and 2-D, symmetric weights, a transposed
    conv's weights constant, a float layer's activation a relu or clip."""
    assert isinstance(op, ConvLike)
    reasons = channels_last(op, "convolutions")
    spatial = len(tensor_shape(op.input)) - 2
    if spatial not in (1, 2):
        reasons.append(f"{op.name} {spatial}-D: irc tiles 1-D and 2-D convolutions only")
    reasons += mixed_types(op)
    reasons += _symmetric_weight(op, op.weight, "weight")
    reasons += float_activation(op)
    if isinstance(op, TRANSPOSED):
        owner = op.weight.owner
        if not isinstance(owner, qnn.ConstantOp | nn.ConstantOp) or not owner.has_data():
            reasons.append(
                f"{op.name} weights are not a constant with data: irc reorders a transposed "
                "conv's weights at compile time"
            )
    reasons += output_stage(op)
    return reasons


def check_gemm(op: Operation) -> list[str]:
    """What the matrix-product lowering takes: a 2-D right side, no transposed left
    side, a bias of one value per output feature, a gemm without alpha or beta."""
    assert isinstance(op, GemmLike)
    props = op.props()
    reasons = []
    gemm = isinstance(op, qnn.GemmOp | nn.GemmOp)
    if gemm and props.bool("trans_a"):
        reasons.append(f"{op.name} trans_a=true: irc tiles gemms without a transposed lhs")
    lhs_shape, rhs_shape = tensor_shape(op.lhs), tensor_shape(op.rhs)
    shapes = f"{'x'.join(map(str, lhs_shape))} by {'x'.join(map(str, rhs_shape))}"
    if len(rhs_shape) < 2 or len(lhs_shape) < 2:
        reasons.append(f"{op.name} of {shapes}: irc tiles matrix products of matrices")
    elif math.prod(rhs_shape[:-2]) > 1 and (gemm or lhs_shape[:-2] != tensor_shape(op.result)[:-2]):
        reasons.append(
            f"{op.name} of {shapes}: irc tiles batched matrix products whose left side has "
            "every batch axis of the result (the right side may broadcast)"
        )
    reasons += mixed_types(op)
    if isinstance(op, nn.GemmOp) and (props.float("alpha"), props.float("beta")) != (1.0, 1.0):
        reasons.append(
            f"{op.name} alpha={props.float('alpha')} beta={props.float('beta')}: irc tiles "
            "float gemms with alpha = beta = 1"
        )
    bias_value = op.bias if isinstance(op, qnn.GemmOp | nn.GemmOp) else None
    features = tensor_shape(op.result)[-1]
    if bias_value is not None and math.prod(tensor_shape(bias_value)) != features:
        reasons.append(
            f"{op.name} bias of shape {'x'.join(map(str, tensor_shape(bias_value)))}: irc adds "
            f"one bias value per output feature ({features})"
        )
    reasons += float_activation(op)
    reasons += output_stage(op)
    return reasons


# --------------------------------------------------------------------------------------
# What MAC layers share: the per-channel parameters and the output stage


@dataclass
class OutputStage:
    """A MAC layer's per-channel constants and what happens to its accumulator tile."""

    bias: Storage | None
    params: Storage | None
    """The (multiplier, shift) pairs of the requantize that runs with the layer."""
    requantize: qnn.RequantizeOp | None
    activation: tuple[float | None, float | None] | None
    """A float layer's fused relu or clip."""
    element: Attribute
    """The accumulator's element type (i32, i64 for 16-bit activations, or f32 for a
    float layer)."""
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
    ) -> OutputStage:
        """The output stage of a MAC layer of `channels` outputs, accumulating in
        `element`, that writes `result` (its requantize's, when one runs with it)."""
        params = _output_params(lowering, requantize, channels)
        return cls(
            bias,
            params,
            requantize,
            activation,
            element,
            buffer_element(result),
            zero_point_of(result),
        )

    def load(self, b: LayerBuilder, channel: Bound, state: MutableMapping[str, SSAValue]) -> None:
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

    def finish(
        self, b: LayerBuilder, acc: SSAValue, state: MutableMapping[str, SSAValue]
    ) -> SSAValue:
        """Add the bias to the accumulator tile, then requantize it (or apply the
        float activation); returns the tile to store."""
        em = b.em
        if "bias" in state:
            em.add(create(tile.BiasAddOp, [acc, state["bias"]]))
        if self.requantize is None:
            if self.activation is not None:
                clamp_in_place(em, acc, self.activation)
            return acc
        out = b.sram("output", buffer_shape(acc), self.output_element)
        low, high = clamp_bounds(self.requantize)
        rounding = self.requantize.props().str("rounding")
        em.add(
            create(
                tile.RequantizeOp,
                [acc, state["params"], out],
                output_zero_point=self.output_zero_point or None,
                clamp_min=low,
                clamp_max=high,
                rounding=None if rounding == fixed_point.HALF_EVEN else rounding,
            )
        )
        return out


def _output_params(
    lowering: FunctionLowering, requantize: qnn.RequantizeOp | None, channels: int
) -> Storage | None:
    """A DDR buffer of [C, 2] (multiplier, shift) pairs of a MAC layer's requantize."""
    if requantize is None:
        return None
    props = requantize.props()
    multipliers, shifts = props.ints("multiplier") or [], props.ints("shift") or []
    if len(multipliers) == 1:
        multipliers, shifts = multipliers * channels, shifts * channels
    array = requant_params(multipliers, shifts)
    buffer = lowering.constant_buffer(array, i32)
    return Storage(buffer, (0, 0), tuple(array.shape))


# --------------------------------------------------------------------------------------
# Convolutions


def _accumulator_element(op: Operation) -> Attribute:
    """The integer accumulator of a MAC layer: its qnn op's result type, i32, or i64
    (wide) over 16-bit activations."""
    result_type = op.results[0].type
    assert isinstance(result_type, TensorType)
    return result_type.get_element_type()


def lower_conv(lowering: FunctionLowering, op: ConvLike) -> None:
    """A `qnn.conv` (with the requantize of its accumulator, when it has one), or a
    float `nn.conv` (with its fused relu or clip); or their transposed forms, tiled as
    the stride-1 conv with the flipped kernel over the input with zero points inserted
    between its pixels (`tile.copy`'s `upsample`)."""
    props = op.props()
    floating = is_floating(op.input, op.weight, op.result)
    activation = float_bounds(op) if floating else None
    accumulator_element = f32 if floating else _accumulator_element(op)
    requantize = fused_requantize(op)
    result = requantize.result if requantize is not None else op.result
    batch, _, _, in_c = planar(tensor_shape(op.input))
    _, out_h, out_w, out_c = planar(tensor_shape(op.result))
    groups = props.int("group") or 1
    in_per_group, out_per_group = in_c // groups, out_c // groups
    strides = planar_pair(props.ints("strides"), 1)
    dilations = planar_pair(props.ints("dilations"), 1)
    pads = planar_pads(props.ints("pads"))
    upsample = [1, 1]
    _, kernel_h, kernel_w, _ = planar(tensor_shape(op.weight))
    layer = conv_layer(op, op.name)
    if isinstance(op, TRANSPOSED):
        upsample, strides, pads = list(strides), [1, 1], list(layer.pads)
    zero_point = zero_point_of(op.input)
    input_element, weight_element = buffer_element(op.input), buffer_element(op.weight)

    plan = lowering.plan(op, layer)
    b = LayerBuilder(lowering, plan)
    em = b.em
    if requantize is not None:
        lowering.lowered.add(requantize)
    # The input's box reaches past its rows and columns into padding: it must not be
    # inside another buffer (a slice of a concat), where it would read a neighbour.
    lowering.whole(op.input, spatially=True)
    # A 1-D conv is a 2-D one of width 1: its buffers are viewed as such.
    x = storage_as(lowering, op.input, planar(tensor_shape(op.input)))
    if isinstance(op, TRANSPOSED):
        w = _transposed_conv_weights(lowering, op.weight, groups, weight_element)
    else:
        staged = lowering.staged_weights(op, op.weight) if plan.staged else None
        w = staged or storage_as(lowering, op.weight, planar(tensor_shape(op.weight)))
    y = storage_as(lowering, result, planar(tensor_shape(result)))
    bias = lowering.storage(op.bias) if op.bias is not None else None
    stage = OutputStage.of(
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

    state = b.state

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
        em.add(create(tile.FillOp, [accumulator(bounds)], value=0.0 if floating else 0))

    def compute(bounds: Bounds) -> None:
        em.add(
            create(
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
    assert isinstance(owner, qnn.ConstantOp | nn.ConstantOp), "check_conv requires a constant"
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


# --------------------------------------------------------------------------------------
# Matrix products


def lower_gemm(lowering: FunctionLowering, op: GemmLike) -> None:
    """A `qnn.gemm` or a `qnn.matmul` with one right-side matrix (and its requantize), or
    their float `nn` forms (with a fused relu or clip). The right side is constant
    weights or another layer's activations; either may have a zero point."""
    props = op.props()
    gemm = isinstance(op, qnn.GemmOp | nn.GemmOp)
    trans_b = gemm and props.bool("trans_b")
    lhs_shape = tensor_shape(op.lhs)
    floating = is_floating(op.lhs, op.rhs, op.result)
    activation = float_bounds(op) if floating else None
    accumulator_element = f32 if floating else _accumulator_element(op)
    bias_value = op.bias if isinstance(op, qnn.GemmOp | nn.GemmOp) else None
    out_shape = tensor_shape(op.result)
    features = out_shape[-1]
    requantize = fused_requantize(op)
    result = requantize.result if requantize is not None else op.result
    depth = lhs_shape[-1]
    lead = list(out_shape[:-1])
    zero_point = zero_point_of(op.lhs)
    rhs_zero_point = zero_point_of(op.rhs)
    lhs_element, rhs_element = buffer_element(op.lhs), buffer_element(op.rhs)

    plan = lowering.plan(op, gemm_layer(op, op.name))
    b = LayerBuilder(lowering, plan)
    em = b.em
    if requantize is not None:
        lowering.lowered.add(requantize)
    # A right side with leading dimensions of 1 ([1, K, N]) is its matrix; a batched
    # one ([B..., K, N], broadcasting over the result's batch axes) gives one matrix
    # per batch index, and the rows of a tile then lie within one batch index.
    rhs_shape = tensor_shape(op.rhs)
    batched = math.prod(rhs_shape[:-2]) > 1
    rhs = lowering.storage(op.rhs) if batched else storage_as(lowering, op.rhs, rhs_shape[-2:])
    a, w, y = lowering.storage(op.lhs), rhs, lowering.storage(result)
    bias = None
    if bias_value is not None:
        bias = lowering.storage(bias_value)
        if len(bias.shape) != 1:
            bias = storage_as(lowering, bias_value, [features])
    stage = OutputStage.of(
        lowering, bias, requantize, activation, accumulator_element, features, result
    )

    tile_sizes = plan.tile
    split = tile_sizes.depth < depth
    boxes = row_boxes(lead, tile_sizes.rows)
    if batched:
        boxes = [1] * (len(lead) - 1) + [min(lead[-1], tile_sizes.rows)]
    lead_names = [f"m{axis}" for axis in range(len(lead))]
    # The result's batch axis of each of the right side's leading axes (numpy's
    # right-aligned broadcasting); a size-1 axis is read at 0.
    rhs_batch = [
        lead_names[len(lead) - 1 - len(rhs_shape[:-2]) + axis] if size > 1 else None
        for axis, size in enumerate(rhs_shape[:-2])
    ]
    dims = {name: Dim(name, extent, box) for name, extent, box in zip(lead_names, lead, boxes)}
    dims["c"] = Dim("c", features, tile_sizes.channels)
    dims["k"] = Dim("k", depth, tile_sizes.depth)
    order = ["c", *lead_names, "k"] if plan.order == "weights" else [*lead_names, "c", "k"]
    state = b.state

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
        origin = [channel, row] if trans_b else [row, channel]
        if batched:
            batch = [em.affine([(bounds[name], 1)]) if name else 0 for name in rhs_batch]
            b.load(w, [*batch, *origin], b.view(buffer, [1] * len(batch) + shape))
        else:
            b.load(w, origin, buffer)
        state["rhs"] = buffer

    def load_parameters(bounds: Bounds) -> None:
        stage.load(b, bounds["c"], state)

    def accumulator(bounds: Bounds) -> SSAValue:
        return b.sram("accumulator", [rows(bounds), bounds["c"].size], accumulator_element)

    def clear(bounds: Bounds) -> None:
        em.add(create(tile.FillOp, [accumulator(bounds)], value=0.0 if floating else 0))

    def compute(bounds: Bounds) -> None:
        em.add(
            create(
                tile.MatmulOp,
                [state["lhs"], state["rhs"], accumulator(bounds)],
                a_zero_point=zero_point or None,
                b_zero_point=rhs_zero_point or None,
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
    b.at(["c", *(name for name in rhs_batch if name)] + (["k"] if split else []), load_rhs)
    b.at(["c"], load_parameters)
    if split:
        b.at(order[:-1], clear)
    b.at(order, compute)
    b.at(order[:-1], finish, after=True)
    b.emit([dims[name] for name in order])
