"""Data movement in the backend table: pads, transposes and depth_to_space, nearest
resizes by whole factors, slices and splits, concats.

Each is a loop nest of copies through SRAM (a transpose permutes each tile on the
vector unit; a concat input of another scale is requantized on its way): boxes of the
output's leading axes by its last axis (`Elementwise`). Views (reshape, flatten,
squeeze, unsqueeze, identity) move nothing: their entries have no lowering, and
plan-ddr makes them their input's buffer.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np
from xdsl.dialects.builtin import DenseArrayBase, f32, i32
from xdsl.ir import Attribute, Operation, SSAValue

from irc.dialects import nn, qnn, tile
from irc.dialects.quant import quantized_element
from irc.interp.nn import nearest_indices
from irc.interp.tile import resize_axis_reads
from irc.ir.fixed_point import IDENTITY_MULTIPLIER, RESIZE_FRACTION_BITS
from irc.tiling.builder import (
    Bounds,
    Elementwise,
    LayerBuilder,
    buffer_element,
    create,
    elementwise_layer,
    requant_params,
)
from irc.tiling.lowering import (
    Bound,
    Dim,
    FunctionLowering,
    Storage,
    storage_element,
    tensor_shape,
    zero_point_of,
)
from irc.tiling.planner import (
    REQUANT_PAIR_BYTES,
    Layer,
    element_bytes,
    stored_channels,
)

# --------------------------------------------------------------------------------------
# Checks


def check_slice(op: Operation) -> list[str]:
    """A slice with unit steps."""
    props = op.props()  # type: ignore[attr-defined]
    starts = props.ints("starts") or []
    steps = props.ints("steps") or [1] * len(starts)
    if any(step != 1 for step in steps):
        return [f"{op.name} steps {list(steps)}: irc copies slices with unit steps only"]
    return []


def check_pad(op: Operation) -> list[str]:
    """A constant pad by its properties (no pads computed at run time)."""
    mode = op.props().str("mode")  # type: ignore[attr-defined]
    reasons = []
    if mode not in (None, "constant"):
        reasons.append(f'{op.name} mode="{mode}": irc pads with a constant only')
    if len(op.operands) != 1:
        reasons.append(f"{op.name} with pads computed at run time: irc pads by its properties")
    return reasons


def check_concat(op: Operation) -> list[str]:
    """The inputs of a concat share the result's storage type, or a `qnn.concat`
    rescales them to it."""
    output = storage_element(op.results[0].type)
    rescales = isinstance(op, qnn.ConcatOp) and op.props().ints("multipliers") is not None
    for value in op.operands:
        if storage_element(value.type) != output and not rescales:
            return [
                f"{op.name} of {storage_element(value.type)} into {output}: irc concatenates "
                "values of one storage type"
            ]
    return []


def repeats_of(op: nn.ResizeOp) -> list[int] | None:
    """The whole factor each axis of a nearest resize repeats its input by (1 for an
    axis it leaves as is), or None if some axis reads another pattern of indices."""
    maps = nearest_indices(op)
    if maps is None:
        return None
    factors = []
    for length, indices in zip(tensor_shape(op.input), maps):
        factor = len(indices) // length
        if len(indices) != factor * length or not np.array_equal(
            indices, np.arange(len(indices)) // factor
        ):
            return None
        factors.append(factor)
    return factors


def check_resize(op: Operation) -> list[str]:
    """A nearest resize (of any pattern: one that repeats each element a whole number
    of times per axis is DMA only, another a gather of whole planes); the linear ones
    of quantized values are `qnn.resize`."""
    assert isinstance(op, nn.ResizeOp)
    mode = op.props().str("mode")
    if mode != "nearest":
        return [
            f'{op.name} mode="{mode}": irc resizes quantized values linearly (qnn.resize) '
            "and any values nearest"
        ]
    if op.props().str("coordinate_transformation_mode") == "tf_crop_and_resize":
        return [f"{op.name} tf_crop_and_resize: irc resizes without regions of interest"]
    return []


def check_transpose(op: Operation) -> list[str]:
    """Any permutation (the vector unit permutes each tile)."""
    return []


# --------------------------------------------------------------------------------------
# Lowerings


def transpose_layer(op: Operation, name: str) -> Layer:
    """The tile planner's view of a transpose, as `_permute` tiles it: an elementwise
    pass over the side whose last axis is the shorter."""
    source, target = list(tensor_shape(op.operands[0])), list(tensor_shape(op.results[0]))
    shape = source if source and source[-1] < target[-1] else target
    return elementwise_layer(name, op.name, shape, 1, buffer_element(op.operands[0]))


def lower_transpose(lowering: FunctionLowering, op: nn.TransposeOp) -> None:
    """A transpose: each output box is read as the input box it comes from (the same
    origins and sizes, in the input's axis order) and permuted in SRAM."""
    perm = list(op.props().ints("perm") or [])
    source, target = lowering.storage(op.input), lowering.storage(op.result)
    _permute(lowering, op, source, target, perm)


def depth_to_space_views(op: nn.DepthToSpaceOp) -> tuple[list[int], list[int]]:
    """The 6-D shape of a depth_to_space's input with its channels split into blocks
    and depth, and the permutation that makes it the output split into (rows, row
    block, columns, column block): ONNX's definition of the op as reshape, transpose,
    reshape. NHWC keeps the depth innermost, so its boxes are runs of channels."""
    props = op.props()
    block = props.int("blocksize") or 1
    dcr = (props.str("mode") or "DCR") == "DCR"
    if props.str("layout") == "nhwc":
        n, h, w, c = tensor_shape(op.input)
        depth = c // (block * block)
        if dcr:  # channels as (by, bx, c)
            return [n, h, w, block, block, depth], [0, 1, 3, 2, 4, 5]
        return [n, h, w, depth, block, block], [0, 1, 4, 2, 5, 3]
    n, c, h, w = tensor_shape(op.input)
    depth = c // (block * block)
    if dcr:
        return [n, block, block, depth, h, w], [0, 3, 4, 1, 5, 2]
    return [n, depth, block, block, h, w], [0, 1, 4, 2, 5, 3]


def lower_depth_to_space(lowering: FunctionLowering, op: nn.DepthToSpaceOp) -> None:
    """A depth_to_space: the transpose of the input's 6-D view into the output's, both
    views of whole buffers (a result that lives in a box of another buffer, such as
    a concat's slice, is permuted into a buffer of its own, then copied there)."""
    view, perm = depth_to_space_views(op)
    source = lowering.reshaped(lowering.whole(op.input), view)
    target = lowering.storage(op.result)
    element = buffer_element(op.input)
    permuted = [view[axis] for axis in perm]
    own = target if target.whole else lowering.scratch(target.shape, element)
    _permute(lowering, op, source, lowering.reshaped(own, permuted), perm)
    if own is not target:
        lowering.copy_box(own.buffer, own.base, target.buffer, target.base, target.shape)


def resize_layer(op: Operation, name: str) -> Layer:
    """The tile planner's view of a resize, as its lowering tiles it: a nearest resize
    by whole factors over the input with a unit axis after each repeated one, each
    input element `prod(factors)` output elements in SRAM; another resize of the rows
    and columns of an NHWC tensor as a window on the vector unit (`ResizeReach`: tiles of
    rows, columns and channels, each reading the input window its outputs need);
    another resize (of other axes) in tiles of whole planes, an element being a plane
    of the input and one of the output."""
    factors = repeats_of(op) if isinstance(op, nn.ResizeOp) else None
    element = buffer_element(op.operands[0])
    if factors is not None:
        view, _ = _repeat_view(op, factors)
        layer = elementwise_layer(name, op.name, view, 1, element)
        return dataclasses.replace(layer, out_bytes=layer.out_bytes * math.prod(factors))
    in_shape = list(tensor_shape(op.operands[0]))
    out_shape = list(tensor_shape(op.results[0]))
    axes = _resized_axes(op)
    if _windowed(op):
        return _window_layer(op, name, axes)
    view = [1 if axis in axes else length for axis, length in enumerate(in_shape)]
    layer = elementwise_layer(name, op.name, view, 1, element)
    return dataclasses.replace(
        layer,
        in_bytes=layer.in_bytes * math.prod(in_shape[axis] for axis in axes),
        out_bytes=layer.out_bytes * math.prod(out_shape[axis] for axis in axes),
    )


@dataclasses.dataclass(frozen=True)
class ResizeReach:
    """How the tiles of one resized axis read the input. Output y reads inputs
    `low[y]..high[y]` (clamped to the input); a tile of outputs from y0 reads a window
    from `origin(y0) = floor(y0 * ratio) + offset`, an affine floor of y0 that is at
    most every `low` of the tile (it may lie before the input: padding, never read),
    `extent` inputs long; whatever the tiling, n outputs read at most
    `(n - 1) * stride + kernel` inputs, which is what the planner is told (a pool's
    window), with `before` rows of padding."""

    in_length: int
    out_length: int
    ratio: Fraction
    offset: int
    low: np.ndarray
    high: np.ndarray

    @classmethod
    def of(cls, op: Operation, axis: int) -> ResizeReach:
        """The reach of a resize along one of its axes."""
        in_length = tensor_shape(op.operands[0])[axis]
        out_length = tensor_shape(op.results[0])[axis]
        axes, scales, mode, coordinates, nearest = _resize_fields(op)
        bits = RESIZE_FRACTION_BITS.get(8 * element_bytes(op.operands[0].type), 0)
        reads = resize_axis_reads(
            mode, coordinates, nearest, scales[axes.index(axis)], in_length, out_length, bits
        )
        return cls.of_reads(in_length, out_length, reads, coordinates == "align_corners")

    @classmethod
    def of_reads(
        cls, in_length: int, out_length: int, reads: Sequence[np.ndarray], corners: bool
    ) -> ResizeReach:
        """The reach of an axis whose outputs read `reads` (`resize_axis_reads`); the
        ratio of the window's origin is the lengths' (less one each with aligned
        `corners`)."""
        low, high = np.minimum.reduce(reads), np.maximum.reduce(reads)
        if corners and out_length > 1:
            ratio = Fraction(max(in_length - 1, 1), out_length - 1)
        else:
            ratio = Fraction(in_length, out_length)
        floors = _floors(np.arange(out_length), ratio)
        return cls(in_length, out_length, ratio, int((low - floors).min()), low, high)

    @property
    def stride(self) -> int:
        """The planner's stride: ceil(ratio), at least 1."""
        return max(1, math.ceil(self.ratio))

    @property
    def kernel(self) -> int:
        """The planner's window of one output: the most inputs from an origin to the
        highest it reads."""
        floors = _floors(np.arange(self.out_length), self.ratio)
        return int((self.high - floors).max()) - self.offset + 1

    @property
    def before(self) -> int:
        """Rows of padding a window may start with (before the input)."""
        return max(0, -self.offset)

    def origin(self, start: int) -> int:
        """Where the window of the tile from output `start` starts."""
        return int(_floors(np.array([start]), self.ratio)[0]) + self.offset

    def extent(self, tile: int, size: int) -> int:
        """The inputs a window of the tiles of `size` outputs holds (tiles of `tile`,
        the last one the remainder)."""
        return max(
            int(self.high[start : start + size].max()) - self.origin(start) + 1
            for start in range(0, self.out_length, tile)
            if min(tile, self.out_length - start) == size
        )

    def origin_value(self, lowering: FunctionLowering, bound: Bound) -> SSAValue:
        """`origin` of a tile's output origin, as an index value."""
        em = lowering.emitter
        p, q = self.ratio.numerator, self.ratio.denominator
        scaled = Bound(bound.index, bound.start * p, bound.step * p, bound.size)
        return em.offset(em.floor_div(scaled, q), self.offset)


def _floors(values: np.ndarray, ratio: Fraction) -> np.ndarray:
    return values.astype(np.int64) * ratio.numerator // ratio.denominator


def _resize_fields(op: Operation) -> tuple[list[int], list[float], str, str, str]:
    """A resize's axes and their scales, mode, coordinate and nearest modes."""
    props = op.props()  # type: ignore[attr-defined]
    axes = _resized_axes(op)
    if isinstance(op, qnn.ResizeOp):
        _, scales, _ = qnn.resize_plan(op)
    else:
        all_scales = props.floats("scales") or []
        scales = [all_scales[axis] for axis in axes]
    mode = props.str("mode") or "linear"
    coordinates = props.str("coordinate_transformation_mode") or "half_pixel"
    nearest = props.str("nearest_mode") or "round_prefer_floor" if mode == "nearest" else ""
    return axes, list(scales), mode, coordinates, nearest


def _windowed(op: Operation) -> bool:
    """Whether a resize (not by whole factors) is tiled in windows of its rows and
    columns: an NHWC tensor resized along them only."""
    rank = len(tensor_shape(op.operands[0]))
    axes = _resized_axes(op)
    return rank == 4 and bool(axes) and set(axes) <= {1, 2}


def _window_layer(op: Operation, name: str, axes: Sequence[int]) -> Layer:
    """A resize of rows and columns as the planner sees it: a pool of each axis's
    `ResizeReach` (its stride, kernel and padding before), reading 2^k values per output
    (linear) or one (nearest)."""
    n, h, w, c = tensor_shape(op.operands[0])
    _, out_h, out_w, _ = tensor_shape(op.results[0])
    reaches = {axis: ResizeReach.of(op, axis) for axis in axes}
    kernel = [reaches[a].kernel if a in reaches else 1 for a in (1, 2)]
    strides = [reaches[a].stride if a in reaches else 1 for a in (1, 2)]
    before = [reaches[a].before if a in reaches else 0 for a in (1, 2)]
    _, _, mode, _, _ = _resize_fields(op)
    return Layer(
        name, op.name, "pool", "vector", n, h, w, c, out_h, out_w, c,
        kernel=(kernel[0], kernel[1]), strides=(strides[0], strides[1]),
        pads=(before[0], before[1], 0, 0), groups=c,
        reads=2 ** len(axes) if mode == "linear" else 1,
        in_bytes=element_bytes(op.operands[0].type),
        out_bytes=element_bytes(op.results[0].type),
        quantized=quantized_element(op.results[0].type) is not None,
        in_c_stored=stored_channels(op.operands[0]),
        out_c_stored=stored_channels(op.results[0]),
    )  # fmt: skip


def _resized_axes(op: Operation) -> list[int]:
    """The axes a resize changes (a linear one's, as `qnn.resize_plan` gives them)."""
    if isinstance(op, qnn.ResizeOp):
        return qnn.resize_plan(op)[0]
    in_shape, out_shape = tensor_shape(op.operands[0]), tensor_shape(op.results[0])
    return [axis for axis, (a, b) in enumerate(zip(in_shape, out_shape)) if a != b]


def _repeat_view(op: Operation, factors: Sequence[int]) -> tuple[list[int], list[int]]:
    """The input of a nearest resize by whole factors seen with a unit axis after each
    repeated axis, and the positions of those unit axes."""
    view: list[int] = []
    repeated: list[int] = []
    for length, factor in zip(tensor_shape(op.operands[0]), factors):
        view.append(length)
        if factor != 1:
            repeated.append(len(view))
            view.append(1)
    return view, repeated


def lower_resize(lowering: FunctionLowering, op: nn.ResizeOp) -> None:
    """A nearest resize by whole factors, as DMA: the input seen with a unit axis after
    each repeated axis, the output with the factor there. Each input box is loaded
    once per combination of repeats into its places in one SRAM tile of the output,
    which is stored once, in runs as long as the input's (the DDR side of every copy
    is contiguous where the input's rows are). A result that lives in a box of another
    buffer is written into a buffer of its own, then copied there."""
    factors = repeats_of(op)
    if factors is None:  # another pattern of indices: a gather on the vector unit
        if _windowed(op):
            _resize_windows(lowering, op)
            return
        scales = op.props().floats("scales") or []
        axes = _resized_axes(op)
        _resize_planes(lowering, op, axes, [scales[axis] for axis in axes])
        return
    view, repeated = _repeat_view(op, factors)
    output_view = list(view)
    for axis, factor in zip(repeated, (f for f in factors if f != 1)):
        output_view[axis] = factor
    element = buffer_element(op.input)
    source = lowering.reshaped(lowering.whole(op.input), view)
    target = lowering.storage(op.result)
    own = target if target.whole else lowering.scratch(target.shape, element)
    output = lowering.reshaped(own, output_view)
    plan = lowering.plan(op, resize_layer(op, op.name))
    tiled = Elementwise(lowering, plan, view)
    b = tiled.builder

    def body(bounds: Bounds) -> None:
        box, origins = tiled.box(bounds), tiled.origins(bounds)
        tile_box = list(box)
        for axis in repeated:
            tile_box[axis] = output_view[axis]
        buffer = b.sram("output", tile_box, element)
        offsets = b.offsets_of(source, origins)
        for copy in itertools.product(*(range(output_view[axis]) for axis in repeated)):
            place = [0] * len(box)
            for axis, index in zip(repeated, copy):
                place[axis] = index
            lowering.copy_box(source.buffer, offsets, buffer, place, box)
        b.store(buffer, output, origins)

    tiled.run(body)
    if own is not target:
        lowering.copy_box(own.buffer, own.base, target.buffer, target.base, target.shape)


def lower_linear_resize(lowering: FunctionLowering, op: qnn.ResizeOp) -> None:
    """A linear resize on the vector unit: in windows of the rows and columns of an
    NHWC tensor (`_resize_windows`), else in tiles of whole planes (`_resize_planes`)."""
    if _windowed(op):
        _resize_windows(lowering, op)
        return
    axes, scales, _ = qnn.resize_plan(op)
    _resize_planes(lowering, op, axes, scales)


def _resize_windows(lowering: FunctionLowering, op: Operation) -> None:
    """A resize of the rows and columns of an NHWC tensor on the vector unit, tiled as
    a pool: tiles of output rows, columns and channels, each loading the input window
    its outputs read (`ResizeReach`: an affine floor of the tile's origin, padding before
    the input never read) and resized by one `tile.resize` of that window. A tile that
    holds the whole rows and columns is a resize of whole planes."""
    axes, scales, mode, coordinates, nearest = _resize_fields(op)
    reaches = {axis: ResizeReach.of(op, axis) for axis in axes}
    plan = lowering.plan(op, resize_layer(op, op.name))
    b = LayerBuilder(lowering, plan)
    em = b.em
    batch, _, _, channels = tensor_shape(op.operands[0])
    _, out_h, out_w, _ = tensor_shape(op.results[0])
    element = buffer_element(op.operands[0])
    x = lowering.whole(op.operands[0], spatially=True)
    y = lowering.storage(op.results[0])
    tiles = {1: plan.tile.rows, 2: plan.tile.columns}
    dims = [
        Dim("n", batch, 1),
        Dim("h", out_h, tiles[1]),
        Dim("w", out_w, tiles[2]),
        Dim("c", channels, plan.tile.channels),
    ]
    values: dict[str, object] = {
        "axes": axes,
        "mode": None if mode == "linear" else mode,
        "coordinate_transformation_mode": coordinates,
        "nearest_mode": nearest or None,
    }
    whole_lengths = {1: out_h, 2: out_w}
    zero_point = zero_point_of(op.operands[0])

    def body(bounds: Bounds) -> None:
        n, c = em.affine([(bounds["n"], 1)]), em.affine([(bounds["c"], 1)])
        spatial = {1: bounds["h"], 2: bounds["w"]}
        outputs = {axis: em.affine([(bound, 1)]) for axis, bound in spatial.items()}
        whole = all(spatial[axis].size == whole_lengths[axis] for axis in axes)
        box = [1, 0, 0, bounds["c"].size]
        starts: list[SSAValue | int] = [n, 0, 0, c]
        windows: list[SSAValue] = []
        for axis, bound in spatial.items():
            reach = reaches.get(axis)
            if reach is None:
                box[axis], starts[axis] = bound.size, outputs[axis]
            elif whole:
                box[axis], starts[axis] = reach.in_length, 0
            else:
                box[axis] = reach.extent(tiles[axis], bound.size)
                window = reach.origin_value(lowering, bound)
                starts[axis] = window
                windows.append(window)
        buffer = b.sram("input", box, element)
        b.load(x, starts, buffer, pad=zero_point)
        out = b.sram("output", [1, spatial[1].size, spatial[2].size, bounds["c"].size], element)
        origin: list[SSAValue] = []
        window_values: dict[str, object] = {}
        if not whole:
            origin = [outputs[axis] for axis in axes] + windows
            window_values = {
                "input_lengths": [reaches[axis].in_length for axis in axes],
                "output_lengths": [reaches[axis].out_length for axis in axes],
            }
        resize = create(tile.ResizeOp, [buffer, out, *origin], **values, **window_values)
        resize.properties["scales"] = DenseArrayBase.from_list(f32, scales)
        em.add(resize)
        b.store(out, y, [n, outputs[1], outputs[2], c])

    b.at(["n", "h", "w", "c"], body)
    b.emit(dims)


def _resize_planes(
    lowering: FunctionLowering, op: Operation, axes: list[int], scales: list[float]
) -> None:
    """A resize on the vector unit: tiles over the axes it does not resize (batch and
    channels), each holding the whole input and output along the resized ones (the
    planner counts a tile's element as its planes), loaded, resized by one
    `tile.resize` (the op's mode and coordinate modes) and stored."""
    props = op.props()  # type: ignore[attr-defined]
    in_shape = list(tensor_shape(op.operands[0]))
    out_shape = list(tensor_shape(op.results[0]))
    view = [1 if axis in axes else length for axis, length in enumerate(in_shape)]
    element = buffer_element(op.operands[0])
    source, target = lowering.storage(op.operands[0]), lowering.storage(op.results[0])
    tiled = Elementwise(lowering, lowering.plan(op, resize_layer(op, op.name)), view)
    b = tiled.builder
    mode = props.str("mode") or "linear"
    values = {
        "axes": axes,
        "mode": None if mode == "linear" else mode,
        "coordinate_transformation_mode": props.str("coordinate_transformation_mode"),
        "nearest_mode": props.str("nearest_mode") if mode == "nearest" else None,
    }

    def body(bounds: Bounds) -> None:
        box, origins = tiled.box(bounds), tiled.origins(bounds)
        planes = [
            (in_shape[axis], out_shape[axis]) if axis in axes else (size, size)
            for axis, size in enumerate(box)
        ]
        buffer = b.sram("input", [whole for whole, _ in planes], element)
        b.load(source, origins, buffer)
        out = b.sram("output", [resized for _, resized in planes], element)
        resize = create(tile.ResizeOp, [buffer, out], **values)
        resize.properties["scales"] = DenseArrayBase.from_list(f32, scales)
        b.em.add(resize)
        b.store(out, target, origins)

    tiled.run(body)


def _permute(
    lowering: FunctionLowering, op: Operation, source: Storage, target: Storage, perm: list[int]
) -> None:
    """Tile one side of the permutation (`target` is `source` permuted) by its leading
    axes and last axis; each box is loaded from the source, permuted in SRAM and
    stored to the target.

    The boxes follow the side whose last axis is the shorter: its whole rows are then
    what the other side reads or writes in runs. A channels-last map of 2 channels
    made channels-first is tiled by the source, whose boxes of whole rows of pixels
    (each 2 channels) are read in one run and written as 2 runs of a plane's rows;
    tiled by the target, each box of a plane's rows would read one byte a burst."""
    by_source = source.shape[-1] < target.shape[-1]
    shape = list(source.shape if by_source else target.shape)
    element = buffer_element(op.operands[0])
    plan = lowering.plan(op, elementwise_layer(op.name, op.name, shape, 1, element))
    tiled = Elementwise(lowering, plan, shape)
    b, em = tiled.builder, tiled.builder.em

    def body(bounds: Bounds) -> None:
        box, origins = tiled.box(bounds), tiled.origins(bounds)
        if by_source:  # output axis a is input axis perm[a]
            input_box, input_origins = box, origins
            output_box = [box[axis] for axis in perm]
            output_origins = [origins[axis] for axis in perm]
        else:
            output_box, output_origins = box, origins
            input_box = [0] * len(perm)
            input_origins = [0] * len(perm)
            for axis, input_axis in enumerate(perm):
                input_box[input_axis], input_origins[input_axis] = box[axis], origins[axis]
        buffer = b.sram("input", input_box, element)
        b.load(source, input_origins, buffer)
        out = b.sram("output", output_box, element)
        em.add(create(tile.TransposeOp, [buffer, out], perm=perm))
        b.store(out, target, output_origins)

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
        first = [0] * rank
        for axis, begin, end in zip(axes, starts, ends):
            axis %= rank
            first[axis] = nn.slice_bounds(source_shape[axis], begin, end, 1)[0]
        starts_of.append(first)
    element = buffer_element(op.operands[0])
    source = lowering.storage(op.operands[0])
    for result, first in zip(op.results, starts_of):
        shape = list(tensor_shape(result))
        if not all(shape):
            continue  # an empty piece moves nothing
        plan = lowering.plan(op, elementwise_layer(op.name, op.name, shape, 1, element))
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
    shape = list(tensor_shape(op.result))
    rank = len(shape)
    pads = list(props.ints("pads") or [0] * 2 * rank)
    element = buffer_element(op.input)
    layer = elementwise_layer(op.name, op.name, shape, 1, element)
    plan = lowering.plan(op, layer)
    # Boxes reach past the input into the padding: it must be a buffer of its own.
    source, target = lowering.whole(op.input), lowering.storage(op.result)
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
    output_element = buffer_element(result)
    multipliers, shifts = None, None
    if isinstance(op, qnn.ConcatOp):
        multipliers, shifts = props.ints("multipliers"), props.ints("shifts")
    target = lowering.storage(result)
    start = 0
    for index, value in enumerate(op.operands):
        value_shape = list(tensor_shape(value))
        element = buffer_element(value)
        rescale = multipliers is not None and shifts is not None
        identity = (multipliers[index], shifts[index]) == IDENTITY_MULTIPLIER if (
            rescale and multipliers and shifts
        ) else True  # fmt: skip
        same = value.type == result.type or (
            quantized_element(value.type) == quantized_element(result.type)
        )
        needs_rescale = rescale and not (identity and same)
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
    layer = elementwise_layer(
        op.name, op.name, shape, 1, element, pair_bytes, output_element=output_element
    )
    plan = lowering.plan(op, layer)
    tiled = Elementwise(lowering, plan, shape)
    b, em = tiled.builder, tiled.builder.em
    params: Storage | None = None
    if rescale is not None:
        array = requant_params([rescale[0]], [rescale[1]])
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
            create(
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
