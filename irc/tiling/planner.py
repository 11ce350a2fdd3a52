"""How a layer is cut into tiles that fit the target's SRAM, and what each choice costs.

Every layer the NPU runs is seen as a convolution in NHWC terms (`Layer`): a conv
(grouped or depthwise), a gemm or matmul (a 1x1 conv over M rows of K channels), a
pooling (a depthwise window on the vector unit) or an elementwise op (a 1x1 window
on the vector unit, over one or two inputs). A `Tile` is the part of the output one
step computes: `rows` x `columns` output pixels of `channels` output channels, from
`depth` input channels (fewer than the layer's: the K dimension is split, and int32
partial sums stay in an SRAM accumulator until the last step).

For a tile, the model counts (docs/tiling.md gives the formulas):

- **SRAM**: the input tile with its halo (`(rows - 1) * stride + (kernel - 1) *
  dilation + 1` input rows, the same for columns), the weight tile, the output tile,
  the int32 accumulator of a MAC layer (over the K steps when K is split), and the
  per-channel bias and requantization parameters (or a vector op's table); each buffer rounded up to the SRAM alignment, and the
  streamed ones (input, weights, output) twice when double buffered.
- **DDR traffic**, for the better of two loop orders: weights stationary (each weight
  tile loaded once, the input loaded again for every output-channel tile) or input
  stationary (each input tile loaded once, the weights again for every spatial
  tile); with a split K both are loaded at every step. A DMA of a box of a row-major
  tensor moves contiguous runs, each rounded up to whole bursts, and costs the DDR
  latency once per descriptor. A weight tile of a conv is contiguous when it holds the
  whole K (OHWI); a slice of K is a run of its inputs for every output channel and
  tap; a channel tile's bias and requantization pairs are a DMA each.
- **Compute cycles**: on the MAC array, per output pixel, ceil(channels / columns)
  x ceil(depth / rows) passes for each kernel tap (a depthwise conv puts the taps on
  the rows: ceil(channels / columns) x ceil(taps / rows)), plus rows + columns cycles
  to fill and drain the array for every tile step; on the vector unit, per output
  pixel, ceil(channels / lanes) per tap or input.
- **Time**: double buffered, DMA overlaps compute. Compute bound, the layer takes its
  compute plus the first tile's loads and the last tile's store, which nothing
  overlaps (of weights the stream loads in chunks, `streams_weights`, the first chunk
  only), plus the part of the last full tile's store that a short last tile does not
  hide; bound by its transfers (loads and stores share the DDR's bandwidth), their
  total plus the last tile's compute. Single buffered, the sum (at least the busiest
  port's time, which a split across cores shares).

`plan_layer` evaluates candidate tiles and keeps the fastest that fits (ties: less
DDR traffic, then less SRAM, then the larger tile): double buffered tiles and the
whole layer single buffered, then every tile single buffered if none of those fits.
A layer whose smallest tile does not fit even single buffered is a `TilingError`
that gives the SRAM it needs (`minimum_sram`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache, wraps
from itertools import product
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from xdsl.dialects.builtin import IntegerAttr, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from irc.dialects.quant import quantized_element
from irc.ir.weights import dtype_of
from irc.targets.model import SCRATCH

if TYPE_CHECKING:
    from irc.targets import Target

Kind = Literal["conv", "depthwise", "pool", "elementwise"]
Engine = Literal["mac", "vector"]

STAGE_SHARE = 4
"""A layer's weights are staged in the fastest memory of activations only when they
take at most 1 / STAGE_SHARE of it: the rest is the feature maps' (a policy, not a
hardware figure)."""

STAGED_OPS = ("qnn.conv", "nn.conv")
"""The layers whose weights may be staged: convolutions (transposed ones build their
kernel on the fly; a fully connected layer reads each weight once, and Vela's weight
buffering leaves it too)."""

REQUANT_PAIR_BYTES = 8
"""Per output channel of a quantized layer: its requantization (multiplier, shift) as
two int32, as the tile level holds them (`tile.requantize`'s parameters)."""

ACCUMULATOR_BYTES = 4
"""int32 partial sums (float32 for an unquantized layer), and per output channel of a
MAC layer its int32 (or float32) bias."""

WIDE_BYTES = 8
"""An element of the wide i64 accumulator and bias of a MAC layer over 16-bit
activations (`Layer.wide`)."""


class TilingError(Exception):
    """A layer that cannot be tiled for the target (too little SRAM, a bad forced tile)."""


@dataclass(frozen=True)
class Layer:
    """A layer in NHWC terms: what tiling needs to know about one op."""

    name: str
    op: str
    kind: Kind
    engine: Engine
    batch: int
    in_h: int
    in_w: int
    in_c: int
    out_h: int
    out_w: int
    out_c: int
    kernel: tuple[int, int] = (1, 1)
    strides: tuple[int, int] = (1, 1)
    dilations: tuple[int, int] = (1, 1)
    pads: tuple[int, int, int, int] = (0, 0, 0, 0)
    """top, left, bottom, right."""
    groups: int = 1
    inputs: int = 1
    """Activation inputs read per output element (2 for an add)."""
    in_bytes: int = 1
    out_bytes: int = 1
    weight_bytes: int = 1
    has_weights: bool = False
    has_bias: bool = True
    """A MAC layer adds a bias per output channel (loaded beside its weights)."""
    weights_by_depth: bool = False
    """A gemm's weights are stored K x N (a tile of them is a run of its output
    channels for each of its K rows), not N x K as a conv's."""
    quantized: bool = True
    channel_parameter_bytes: int = 0
    """SRAM bytes of constant data per output channel of a vector-unit layer (the
    (multiplier, shift) pairs of a per-channel requantize)."""
    table_bytes: int = 0
    """SRAM bytes of constant data the whole layer shares (a lookup table, one
    (multiplier, shift) pair)."""
    in_c_stored: int = 0
    """Channels per pixel of the input as stored in DDR (0: in_c); more when channel
    alignment pads the tensor's channel stride to whole bursts."""
    out_c_stored: int = 0
    """Channels per pixel of the output as stored (0: out_c)."""
    channels_last: bool = True
    """The activations' layout in DDR (NHWC), which decides how contiguous a box is."""
    conv_steps: bool = False
    """The lowering computes it in `tile.conv` steps, whose first weights the command
    stream can stream in chunks (`streams_weights`)."""
    whole_channels: bool = False
    """Every tile holds the whole last axis (a softmax normalizes rows of it)."""
    reads: int = 0
    """Values each output element of a vector-unit layer reads, if not its kernel's
    taps (a pool) or its `inputs` (another layer): a resize's 2^k neighbours."""
    upsample: tuple[int, int] = (1, 1)
    """A transposed conv's strides: the layer is the stride-1 conv (flipped kernel,
    `pads` of `dilation * (kernel - 1) - pad`) over its input with `factor - 1` zero
    points inserted between pixels; `in_h` and `in_w` stay the stored input's."""
    in_memory: str = ""
    """The system memory its input lives in ("": the last of the placement's memories
    of activations, the slowest a tensor may end up in)."""
    out_memory: str = ""
    """The system memory its output lives in ("": as `in_memory`)."""

    @property
    def vector_reads(self) -> int:
        """Values each output element of a vector-unit layer reads (`reads`)."""
        if self.reads:
            return self.reads
        return self.kernel[0] * self.kernel[1] if self.kind == "pool" else self.inputs

    @property
    def wide(self) -> bool:
        """A quantized MAC layer over 16-bit activations (int16x8, or a matmul with a
        16-bit operand): its accumulator and bias are i64."""
        return self.engine == "mac" and self.quantized and 2 in (self.in_bytes, self.weight_bytes)

    @property
    def sixteen(self) -> bool:
        """Whether its passes take the target's `int16_cycles`: a wide MAC layer, or a
        vector layer reading or writing 16-bit integers."""
        if self.engine == "mac":
            return self.wide
        return 2 in (self.in_bytes, self.out_bytes)

    @property
    def accumulator_bytes(self) -> int:
        """Bytes per element of its accumulator (and its bias, per channel)."""
        return WIDE_BYTES if self.wide else ACCUMULATOR_BYTES

    @property
    def upsampled(self) -> tuple[int, int]:
        """The input's rows and columns as the layer reads them (zero points inserted)."""
        return (
            (self.in_h - 1) * self.upsample[0] + 1,
            (self.in_w - 1) * self.upsample[1] + 1,
        )

    @property
    def macs(self) -> int:
        """Multiply-accumulates (0 for a vector-unit layer). A transposed conv counts
        only the products of stored input pixels, not of the inserted zero points that
        the array also multiplies."""
        if self.engine != "mac":
            return 0
        if self.upsample != (1, 1):
            rows, columns = (
                _taps_hitting(out, kernel, dilation, pad, size, factor)
                for out, kernel, dilation, pad, size, factor in zip(
                    (self.out_h, self.out_w),
                    self.kernel,
                    self.dilations,
                    self.pads[:2],
                    (self.in_h, self.in_w),
                    self.upsample,
                )
            )
            return self.batch * rows * columns * self.out_c * self.in_c // self.groups
        taps = self.kernel[0] * self.kernel[1]
        return self.batch * self.out_h * self.out_w * self.out_c * taps * self.in_c // self.groups

    @property
    def depth_per_group(self) -> int:
        """Input channels each output channel reads."""
        return self.in_c // self.groups


@dataclass(frozen=True)
class Tile:
    """The output part one step computes: rows x columns x channels, from `depth` inputs."""

    rows: int
    columns: int
    channels: int
    depth: int

    def __str__(self) -> str:
        return f"{self.rows}x{self.columns}x{self.channels}/{self.depth}"


@dataclass(frozen=True)
class Plan:
    """The chosen tile of a layer and everything the model counted for it."""

    layer: Layer
    tile: Tile
    counts: tuple[int, int, int, int]
    """Tiles along output rows, columns, channels, and K steps."""
    order: Literal["weights", "input"]
    """The stationary operand of the loop order."""
    double_buffered: bool
    buffers: dict[str, int] = field(default_factory=dict)
    """SRAM bytes of each buffer (aligned, times two when double buffered but for the
    accumulator and a vector layer's parameters)."""
    sram_bytes: int = 0
    ddr_read: int = 0
    """Bytes moved from DDR, bursts included."""
    ddr_written: int = 0
    compute_cycles: int = 0
    load_cycles: int = 0
    store_cycles: int = 0
    cycles: int = 0
    lower_bound: int = 0
    """max(ideal compute cycles, compulsory DDR traffic / bytes per cycle)."""
    sram_offsets: dict[str, tuple[int, ...]] = field(default_factory=dict)
    """The SRAM offset of each buffer's copies (two when double buffered: ping, pong)."""
    staged: bool = False
    """The layer's weights are copied whole into the fastest memory of activations
    while the layer before runs (`LayerModel.stage_memory`), and its tiles load them
    from there."""
    cores: int = 1
    """The NPU cores the layer runs on: its outermost dimension of several tiles
    (`split`) is cut into one share a core (irc/tiling/builder.py, `core_shares`)."""
    split: str = ""
    """What the cores' shares cut (`SPLITS`: "output channels", "rows", ...), on
    several cores."""
    one_core_cycles: int = 0
    """The estimated cycles of the same tile on one core (= `cycles` on one)."""
    cores_note: str = ""
    """On a target of several cores, why the layer runs on the cores it does."""
    core: int = 0
    """The core a plan on one core runs on (plan-tiles' `assign_cores`): another than
    core 0 when the layer does not wait for what runs there and starts earlier."""

    @property
    def tile_count(self) -> int:
        """Tile steps (K steps included)."""
        return math.prod(self.counts)

    @property
    def efficiency(self) -> float:
        """lower_bound / cycles (1.0: the layer runs at its bound)."""
        return self.lower_bound / self.cycles if self.cycles else 1.0


# --------------------------------------------------------------------------------------
# Layers from ops


def _shape(value: object) -> list[int]:
    value_type = getattr(value, "type", None)
    assert isinstance(value_type, TensorType)
    return list(value_type.get_shape())


def element_bytes(value_type: Attribute) -> int:
    """Bytes per element of a tensor type as stored: a quantized type's storage
    integers, else the element type itself."""
    assert isinstance(value_type, TensorType)
    element = quantized_element(value_type)
    if element is not None:
        return max(1, element.storage_type.width.data // 8)
    return dtype_of(value_type.get_element_type()).itemsize


def _element_bytes(value: SSAValue) -> int:
    return element_bytes(value.type)


PLAN_ATTR = "irc.tiling"
"""The discardable attribute that records an op's plan (plan-tiles writes it)."""

FORCE_ATTR = "irc.tile_sizes"
"""A discardable attribute that forces an op's tile: array<i64: rows, columns, channels, depth>."""

STORED_CHANNELS_ATTR = "irc.stored_channels"
"""On the op defining an NHWC tensor: its channels per pixel as stored in DDR, when
channel alignment pads them (plan-tiles decides, plan-ddr and lower-to-tile follow)."""


def stored_channels(value: SSAValue) -> int:
    """The stored channels of a tensor whose channel stride is padded, else 0."""
    owner = value.owner
    if isinstance(owner, Operation):
        attribute = owner.attributes.get(STORED_CHANNELS_ATTR)
        if isinstance(attribute, IntegerAttr):
            return attribute.value.data
    return 0


def nhwc(shape: Sequence[int], channels_last: bool) -> tuple[int, int, int, int]:
    """(N, H, W, C) of a rank-3 or rank-4 activation (a 1-D spatial op has W = 1)."""
    if len(shape) == 3:
        shape = [*shape[:2], 1, shape[2]] if channels_last else [*shape, 1]
    assert len(shape) == 4, "the backend's checks take 1-D and 2-D layers only"
    if channels_last:
        n, h, w, c = shape
    else:
        n, c, h, w = shape
    return n, h, w, c


def pair(values: Sequence[int] | None, default: int) -> tuple[int, int]:
    """Two window values (kernel, strides, dilations) of a 1-D or 2-D op."""
    if not values:
        return (default, default)
    return (values[0], values[1]) if len(values) >= 2 else (values[0], 1)


def pads_of(values: Sequence[int] | None) -> tuple[int, int, int, int]:
    """(top, left, bottom, right) of 2-D pads, or of a 1-D window's (begin, end)."""
    if not values:
        return (0, 0, 0, 0)
    if len(values) == 4:  # begins (top, left), then ends (bottom, right)
        return (values[0], values[1], values[2], values[3])
    return (values[0], 0, values[1], 0)


def layer_name(op: Operation) -> str:
    """The ONNX node name of `op`, else `file:line` of parsed IR (the file's name
    without its directory), else its op name. The simulator names the commands of a
    layer the same way (irc/sim/run.py's `event_layer`), so plans and figures meet."""
    from pathlib import Path

    from irc.diagnostics import Location

    location = Location.of(op)
    if location.name:
        return location.name
    if location.line is not None:
        return f"{Path(location.file or '').name}:{location.line}"
    return op.name


# --------------------------------------------------------------------------------------
# The cost of one tile choice


def _align(size: int, alignment: int) -> int:
    return -(-size // alignment) * alignment


def _input_extent(out: int, kernel: int, stride: int, dilation: int, limit: int) -> int:
    """Input rows (or columns) that `out` output rows read, halo included, at most the
    padded input's."""
    return min((out - 1) * stride + (kernel - 1) * dilation + 1, limit)


def _read_extent(
    out: int, kernel: int, stride: int, dilation: int, pad: int, size: int, factor: int = 1
) -> int:
    """How many of the `size` stored input rows (or columns) `out` output rows read
    (stored row `i` at position `i * factor` of an upsampled input)."""
    read = {
        row
        for position in range(out)
        for tap in range(kernel)
        if (row := position * stride + tap * dilation - pad) % factor == 0
        and 0 <= row // factor < size
    }
    return len(read)


def _taps_hitting(out: int, kernel: int, dilation: int, pad: int, size: int, factor: int) -> int:
    """(output row, kernel tap) pairs of a stride-1 window over an input upsampled by
    `factor` whose tap lands on one of the `size` stored rows."""
    return sum(
        1
        for position in range(out)
        for tap in range(kernel)
        if (row := position + tap * dilation - pad) % factor == 0 and 0 <= row // factor < size
    )


def _splits(total: int, size: int) -> list[tuple[int, int]]:
    """(size, count) of the pieces `total` is cut into: full ones and the remainder."""
    full, rest = divmod(total, size)
    pieces = [(size, full)] if full else []
    if rest:
        pieces.append((rest, 1))
    return pieces


def _box_runs(shape: Sequence[int], box: Sequence[int]) -> tuple[int, int, int]:
    """(contiguous runs, elements per run, alignment step) of a box in a row-major
    tensor. Every run of every box of this size starts at a multiple of the step (in
    elements): a box cut along the last axis (a channel tile of an NHWC map) starts
    at multiples of its size there, and its runs are one row of that axis apart; a
    box cut along another axis (rows or columns, whose origins move with halos and
    strides) starts at any multiple of the axes inside it."""
    run = 1
    step = math.prod(shape)
    for axis in range(len(shape) - 1, -1, -1):
        run *= box[axis]
        if box[axis] != shape[axis]:
            inner = math.prod(shape[axis + 1 :])
            last = axis == len(shape) - 1
            step = inner * (math.gcd(box[axis], shape[axis]) if last else 1)
            break
    elements = math.prod(box)
    return (elements // run if run else 0), run, step


@lru_cache(maxsize=4096)  # bounded: a process may plan many models of many shapes
def mean_bursts(run_bytes: int, step_bytes: int, burst: int) -> float:
    """The bursts a run of `run_bytes` touches on average when runs start at multiples
    of `step_bytes`: at offsets k * gcd(step, burst) within a burst, all equally often
    (over many tiles). An aligned run (the step a multiple of the burst) touches
    ceil(run / burst); a misaligned one often one more."""
    granule = math.gcd(step_bytes, burst) or burst
    offsets = range(0, burst, granule)
    return sum(-(-(offset + run_bytes) // burst) for offset in offsets) / len(offsets)


_Figure = TypeVar("_Figure")


def _remembered(method: Callable[..., _Figure]) -> Callable[..., _Figure]:
    """A `LayerModel` method whose results are remembered by its arguments, in a dict of
    the model's own: unlike an lru_cache of the bound method, it makes no reference
    cycle, so a model (and all it remembered) goes as soon as its layer is planned."""

    @wraps(method)
    def remembered(model: LayerModel, *arguments: Hashable) -> _Figure:
        key = (method, arguments)
        try:
            return model.figures[key]
        except KeyError:
            figure = model.figures[key] = method(model, *arguments)
            return figure

    return remembered


@dataclass
class _Cost:
    compute: int = 0
    load: int = 0
    """The loads on `dma_in` (every load, the weights' too, without a weight stream)."""
    weight_load: int = 0
    """The loads of weights on the weight stream (`dma_weights`), of a target with one."""
    store: int = 0
    read: int = 0
    """Bytes read from system memories (not the local SRAM's rolling buffers)."""
    written: int = 0
    ports: dict[str, int] = field(default_factory=dict)
    """The DMA cycles each port carries (loads and stores through its memories)."""
    inputs: tuple[int, int] = (0, 0)
    """Of the loads: the input's (cycles, bytes)."""
    weights: tuple[int, int] = (0, 0)
    """Of the loads: the weights' (cycles, bytes), on whichever queue."""

    def carry(self, port: str, cycles: int) -> None:
        self.ports[port] = self.ports.get(port, 0) + cycles

    @property
    def transfers(self) -> int:
        """The DMA's time when it overlaps compute: the loads (one queue, and the
        weight stream's another), the stores (another), or the busiest port, whichever
        is longest."""
        return max(self.load, self.weight_load, self.store, *self.ports.values())


@dataclass(frozen=True)
class _Memory:
    """A system memory as the model sees it: bytes per cycle each way, burst,
    latencies and port."""

    read_rate: float
    write_rate: float
    burst: int
    read_latency: int
    write_latency: int
    port: str
    local: bool = False
    """The NPU's local SRAM (a cascade's rolling buffer): not system-memory traffic."""

    @classmethod
    def of(cls, target: Target, name: str) -> _Memory:
        memory = target.memories[name or target.placement.activations[-1]]
        clock = target.mac_array.clock_hz
        return cls(
            memory.read_bytes_per_cycle(clock),
            memory.write_bytes_per_cycle(clock),
            memory.burst_bytes,
            memory.read_latency_cycles,
            memory.write_latency_cycles,
            memory.port,
            memory.name == SCRATCH,
        )


class LayerModel:
    """The cost model of one layer on one target (the planner's, and a cascade's for
    each of its members, irc/tiling/cascade.py)."""

    def __init__(self, layer: Layer, target: Target, stage: bool = False) -> None:
        self.layer = layer
        self.target = target
        self.input_memory = _Memory.of(target, layer.in_memory)
        self.output_memory = _Memory.of(target, layer.out_memory or layer.in_memory)
        self.weight_memory = _Memory.of(target, target.placement.weights)
        self.weight_stream = target.mac_array.weight_stream
        """Weights load on a channel of their own, beside the inputs (`dma_weights`)."""
        self.stage_memory = self._stage_memory() if stage else None
        """With `stage`, where the layer's weights may be staged (None: nowhere)."""
        self.alignment = target.scratch.alignment_bytes
        in_h, in_w = layer.upsampled
        self.padded_h = in_h + layer.pads[0] + layer.pads[2]
        self.padded_w = in_w + layer.pads[1] + layer.pads[3]
        # A search costs thousands of tiles whose pieces share sizes: the figures of
        # each piece (pure functions of their arguments for this layer) are
        # remembered here (`_remembered`), for as long as the model lives.
        self.figures: dict[tuple[object, tuple[Hashable, ...]], Any] = {}

    # ---- geometry ---------------------------------------------------------------------

    def input_channels(self, tile: Tile) -> int:
        """Input channels a tile reads."""
        layer = self.layer
        if layer.kind in ("depthwise", "pool", "elementwise"):
            return tile.channels
        if layer.groups == 1:
            return tile.depth
        out_per_group = layer.out_c // layer.groups
        groups_touched = max(1, tile.channels // out_per_group)
        return groups_touched * tile.depth

    def input_box(self, tile: Tile) -> tuple[int, int, int]:
        layer = self.layer
        rows = _input_extent(
            tile.rows, layer.kernel[0], layer.strides[0], layer.dilations[0], self.padded_h
        )
        columns = _input_extent(
            tile.columns, layer.kernel[1], layer.strides[1], layer.dilations[1], self.padded_w
        )
        return rows, columns, self.input_channels(tile)

    def weight_elements(self, tile: Tile) -> int:
        layer = self.layer
        if not layer.has_weights:
            return 0
        taps = layer.kernel[0] * layer.kernel[1]
        if layer.kind == "depthwise":
            return tile.channels * taps
        return tile.channels * taps * tile.depth

    @property
    def weights_bytes(self) -> int:
        """The bytes of the layer's whole weight tensor."""
        layer = self.layer
        return self.weight_elements(Tile(1, 1, layer.out_c, self.full_depth)) * layer.weight_bytes

    def _stage_memory(self) -> _Memory | None:
        """The fastest memory of activations, if the layer's weights may be staged there:
        a convolution whose weights live in another memory, slower to read, and take at
        most 1 / STAGE_SHARE of it."""
        layer, target = self.layer, self.target
        fast = target.placement.activations[0]
        if layer.op not in STAGED_OPS or not layer.has_weights or fast == target.placement.weights:
            return None
        memory = _Memory.of(target, fast)
        if memory.read_rate <= self.weight_memory.read_rate:
            return None
        if self.weights_bytes * STAGE_SHARE > target.memories[fast].size_bytes:
            return None
        return memory

    def weights_port_cycles(self, plan: Plan) -> int:
        """The cycles a plan of this layer keeps the weights' memory's port busy, a
        staged layer's copy left out (it runs beside the layer before)."""
        cost = self.cost(plan.tile, plan.order, plan.staged)
        busy = cost.ports.get(self.weight_memory.port, 0)
        return busy - (self.stage_copy()[0] if plan.staged else 0)

    def stage_copy(self) -> tuple[int, int, int]:
        """The copy of the whole weights into the stage memory: (cycles reading their
        memory, cycles writing the stage, bytes)."""
        assert self.stage_memory is not None
        size = self.weights_bytes
        read = self.dma_cycles(self.weight_memory, True, 1, size, 1)
        written = self.dma_cycles(self.stage_memory, False, 1, size, 1)
        return read[0], written[0], read[1]

    # ---- SRAM -------------------------------------------------------------------------

    def buffers(self, tile: Tile, double: bool) -> dict[str, int]:
        layer, align = self.layer, self.alignment
        copies = 2 if double else 1
        rows, columns, channels = self.input_box(tile)
        buffers = {
            "input": copies
            * layer.inputs
            * _align(rows * columns * channels * layer.in_bytes, align),
            "output": copies
            * _align(tile.rows * tile.columns * tile.channels * layer.out_bytes, align),
        }
        if layer.has_weights:
            weights = self.weight_elements(tile) * layer.weight_bytes
            buffers["weights"] = copies * _align(weights, align)
            buffers["parameters"] = copies * self.parameter_bytes(tile.channels)
            # The int32 tile the array accumulates into, over the K steps when K is split.
            accumulator = tile.rows * tile.columns * tile.channels * layer.accumulator_bytes
            buffers["accumulator"] = _align(accumulator, align)
        elif layer.channel_parameter_bytes or layer.table_bytes:
            buffers["parameters"] = _align(
                tile.channels * layer.channel_parameter_bytes + layer.table_bytes, align
            )
        return buffers

    def parameter_bytes(self, channels: int) -> int:
        """SRAM bytes of a MAC layer's per-channel constants for `channels` outputs: the
        bias, then (quantized) the requantization pairs, each aligned."""
        align = self.alignment
        size = _align(channels * self.layer.accumulator_bytes, align)
        if self.layer.quantized:
            size += _align(channels * REQUANT_PAIR_BYTES, align)
        return size

    # ---- DMA --------------------------------------------------------------------------

    def dma_cycles(
        self,
        memory: _Memory,
        read: bool,
        runs: int,
        run_bytes: int,
        descriptors: int,
        step_bytes: int = 0,
    ) -> tuple[int, int]:
        """(cycles, bytes moved) of `runs` contiguous runs read from (or written to)
        `memory`, whole bursts each; runs that start at multiples of `step_bytes` (0:
        burst-aligned) touch a burst more when they straddle a burst boundary."""
        burst = memory.burst
        if not run_bytes:
            moved = 0
        elif not step_bytes or step_bytes % burst == 0:
            moved = runs * _align(run_bytes, burst)
        else:
            moved = round(runs * mean_bursts(run_bytes, step_bytes, burst) * burst)
        latency = memory.read_latency if read else memory.write_latency
        rate = memory.read_rate if read else memory.write_rate
        cycles = descriptors * latency + math.ceil(moved / rate)
        return cycles, moved

    @_remembered
    def input_dma(self, tile_rows: int, tile_columns: int, channels: int) -> tuple[int, int]:
        layer = self.layer
        box_h = _input_extent(
            tile_rows, layer.kernel[0], layer.strides[0], layer.dilations[0], self.padded_h
        )
        box_w = _input_extent(
            tile_columns, layer.kernel[1], layer.strides[1], layer.dilations[1], self.padded_w
        )
        # Padding (and a transposed conv's inserted zeros) is not in DDR: the box is
        # clipped to the stored input.
        in_h, in_w = layer.upsampled
        box_h = min(-(-min(box_h, in_h) // layer.upsample[0]), layer.in_h)
        box_w = min(-(-min(box_w, in_w) // layer.upsample[1]), layer.in_w)
        stored = layer.in_c_stored or layer.in_c
        if layer.channels_last:
            shape, box = (layer.in_h, layer.in_w, stored), (box_h, box_w, channels)
        else:
            shape, box = (stored, layer.in_h, layer.in_w), (channels, box_h, box_w)
        runs, run, step = _box_runs(shape, box)
        cycles, moved = self.dma_cycles(
            self.input_memory, True, runs, run * layer.in_bytes, 1, step * layer.in_bytes
        )
        return cycles * layer.inputs, moved * layer.inputs

    @_remembered
    def output_dma(self, rows: int, columns: int, channels: int) -> tuple[int, int]:
        layer = self.layer
        stored = layer.out_c_stored or layer.out_c
        if layer.channels_last:
            shape, box = (layer.out_h, layer.out_w, stored), (rows, columns, channels)
        else:
            shape, box = (stored, layer.out_h, layer.out_w), (channels, rows, columns)
        runs, run, step = _box_runs(shape, box)
        return self.dma_cycles(
            self.output_memory, False, runs, run * layer.out_bytes, 1, step * layer.out_bytes
        )

    @_remembered
    def parameter_dma(self, memory: _Memory, channels: int) -> tuple[int, int]:
        """(cycles, bytes) of a channel tile's bias and requantization pairs read from
        `memory`: one DMA of each, as the lowering emits them, each with the memory's
        latency and starting at a multiple of its own size (a tile's slice)."""
        layer = self.layer
        cycles = moved = 0
        sizes = [layer.accumulator_bytes if layer.has_bias else 0]
        sizes.append(REQUANT_PAIR_BYTES if layer.quantized else 0)
        for size in sizes:
            if size:
                run = channels * size
                c, m = self.dma_cycles(memory, True, 1, run, 1, run)
                cycles, moved = cycles + c, moved + m
        return cycles, moved

    @_remembered
    def _weight_runs(self, memory: _Memory, channels: int, depth: int) -> tuple[int, int]:
        """(cycles, bytes) of a weight tile alone read from `memory`: a slice of K of an
        O x KH x KW x I weight is a run of `depth` inputs for every output channel and
        tap, the runs I apart, the slices `depth` apart (so a run starts at a multiple of
        both); a slice of N of a gemm's K x N weight is a run for each of its K rows;
        else one run, at a multiple of its size (a slice of output channels)."""
        layer = self.layer
        taps = layer.kernel[0] * layer.kernel[1]
        if layer.weights_by_depth:
            if channels == layer.out_c:
                size = depth * channels * layer.weight_bytes
                return self.dma_cycles(memory, True, 1, size, 1, size)
            full = layer.out_c * layer.weight_bytes
            run = channels * layer.weight_bytes
            return self.dma_cycles(memory, True, depth, run, 1, math.gcd(full, run))
        if layer.kind == "conv" and depth < self.full_depth:
            full = self.full_depth * layer.weight_bytes
            run = depth * layer.weight_bytes
            return self.dma_cycles(memory, True, channels * taps, run, 1, math.gcd(full, run))
        elements = channels * taps * (1 if layer.kind == "depthwise" else depth)
        size = elements * layer.weight_bytes
        return self.dma_cycles(memory, True, 1, size, 1, size)

    @_remembered
    def staged_weight_dma(self, channels: int, depth: int) -> tuple[int, int, int, int]:
        """A staged layer's weight tile: (cycles, bytes) of its weights from the stage
        memory, then (cycles, bytes) of its parameters from the weights' memory."""
        assert self.stage_memory is not None
        weights = self._weight_runs(self.stage_memory, channels, depth)
        rest = self.parameter_dma(self.weight_memory, channels)
        return weights[0], weights[1], rest[0], rest[1]

    @_remembered
    def weight_dma(self, channels: int, depth: int) -> tuple[int, int]:
        """(cycles, bytes) of a weight tile and its parameters from the weights' memory:
        a DMA of the weights (the slice's runs when the tile holds part of K), one of
        the bias and one of the requantization pairs."""
        weights = self._weight_runs(self.weight_memory, channels, depth)
        rest = self.parameter_dma(self.weight_memory, channels)
        return weights[0] + rest[0], weights[1] + rest[1]

    # ---- compute ----------------------------------------------------------------------

    @_remembered
    def compute_cycles(self, rows: int, columns: int, channels: int, depth: int) -> int:
        layer, array = self.layer, self.target.mac_array
        pixels = rows * columns
        taps = layer.kernel[0] * layer.kernel[1]
        if layer.engine == "vector":
            lanes = self.target.vector_unit.lanes
            per_pixel = math.ceil(channels / lanes) * layer.vector_reads
            return pixels * per_pixel * self.target.data_types.activation_cycles(layer.sixteen)
        passes = self.target.data_types.activation_cycles(layer.sixteen)
        depthwise = layer.kind == "depthwise"
        return array.cycles(1, rows, columns, channels, depth, taps, depthwise, passes)

    # ---- a whole plan -----------------------------------------------------------------

    def cost(self, tile: Tile, order: str, staged: bool = False) -> _Cost:
        layer = self.layer
        split = tile.depth < self.full_depth
        h_pieces = _splits(layer.out_h, tile.rows)
        w_pieces = _splits(layer.out_w, tile.columns)
        c_pieces = _splits(layer.out_c, tile.channels)
        k_pieces = _splits(self.full_depth, tile.depth)
        spatial_tiles = layer.batch * sum(c for _, c in h_pieces) * sum(c for _, c in w_pieces)
        channel_tiles = sum(c for _, c in c_pieces)
        k_steps = sum(c for _, c in k_pieces)
        shared_input = not split and layer.kind == "conv" and layer.groups == 1
        total = _Cost()
        for (h, hc), (w, wc), (ch, cc), (k, kc) in product(h_pieces, w_pieces, c_pieces, k_pieces):
            count = layer.batch * hc * wc * cc * kc
            total.compute += count * self.compute_cycles(h, w, ch, k)
            channels = self.input_channels(Tile(h, w, ch, k))
            in_cycles, in_bytes = self.input_dma(h, w, channels)
            # Loads of the input: once per spatial tile when it is stationary, K is
            # whole and every output channel reads the same inputs (a dense conv or
            # gemm); else at every step.
            in_count = count / channel_tiles if order == "input" and shared_input else count
            total.load += round(in_count * in_cycles)
            total.carry(self.input_memory.port, round(in_count * in_cycles))
            if not self.input_memory.local:
                total.read += round(in_count * in_bytes)
            total.inputs = (
                total.inputs[0] + round(in_count * in_cycles),
                total.inputs[1] + round(in_count * in_bytes),
            )
            if layer.has_weights:
                w_count = count / spatial_tiles if order == "weights" and not split else count
                # The bias and pairs of a channel tile load once for all its K steps.
                p_count = w_count / k_steps
                p_cycles, p_bytes = self.parameter_dma(self.weight_memory, ch)
                if staged:
                    # The weights from the stage (dma_in), the parameters from their
                    # memory (on the weight stream, if the target has one).
                    assert self.stage_memory is not None
                    s_cycles, s_bytes = self._weight_runs(self.stage_memory, ch, k)
                    total.load += round(w_count * s_cycles)
                    total.carry(self.stage_memory.port, round(w_count * s_cycles))
                    total.read += round(w_count * s_bytes)
                    w_cycles = round(p_count * p_cycles)
                    w_bytes = round(p_count * p_bytes)
                else:
                    weights = self._weight_runs(self.weight_memory, ch, k)
                    w_cycles = round(w_count * weights[0] + p_count * p_cycles)
                    w_bytes = round(w_count * weights[1] + p_count * p_bytes)
                if self.weight_stream:
                    total.weight_load += w_cycles
                else:
                    total.load += w_cycles
                total.carry(self.weight_memory.port, w_cycles)
                total.read += w_bytes
                total.weights = (total.weights[0] + w_cycles, total.weights[1] + w_bytes)
            out_cycles, out_bytes = self.output_dma(h, w, ch)
            total.store += (count // kc) * out_cycles
            total.carry(self.output_memory.port, (count // kc) * out_cycles)
            if not self.output_memory.local:
                total.written += (count // kc) * out_bytes
        if staged:
            # The copy into the stage, once, while the layer before runs: it takes its
            # time on the weights' queue and on both memories' ports, not before the
            # first tile.
            assert self.stage_memory is not None
            read, written, size = self.stage_copy()
            if self.weight_stream:
                total.weight_load += read
            else:
                total.load += read
            total.carry(self.weight_memory.port, read)
            total.carry(self.stage_memory.port, written)
            total.read += size
            total.written += size
        return total

    def whole(self, tile: Tile) -> bool:
        """Whether the tile is the whole layer (one tile, nothing to overlap)."""
        layer = self.layer
        return (
            layer.batch == 1
            and tile.rows >= layer.out_h
            and tile.columns >= layer.out_w
            and tile.channels >= layer.out_c
            and tile.depth >= self.full_depth
        )

    @property
    def full_depth(self) -> int:
        layer = self.layer
        if layer.kind in ("depthwise", "pool", "elementwise"):
            return 1
        return layer.depth_per_group if layer.groups > 1 else layer.in_c

    def streams_weights(self, tile: Tile) -> bool:
        """Whether the command stream loads the first weights of this plan in chunks
        of the MAC array's width, the first step split to start on the first chunk
        (irc/stream/lowering.py: an integer conv of one group whose weights hold the
        whole depth, in chunks that keep SRAM alignment)."""
        layer = self.layer
        columns = self.target.mac_array.columns
        taps = layer.kernel[0] * layer.kernel[1]
        chunk_bytes = columns * taps * tile.depth * layer.weight_bytes
        return (
            layer.conv_steps
            and layer.quantized
            and layer.groups == 1
            and tile.depth == self.full_depth
            and tile.channels > columns
            and chunk_bytes % self.alignment == 0
        )

    def first_and_last(self, tile: Tile, staged: bool = False) -> tuple[int, int]:
        """Cycles of the first tile's loads and of the last tile's store (the last
        tile is the remainder along each dimension), which nothing overlaps (a staged
        layer's weights from the stage)."""
        layer = self.layer
        channels = self.input_channels(tile)
        first = self.input_dma(tile.rows, tile.columns, channels)[0]
        weights = vector = 0

        def weight_cycles(channels: int) -> int:
            if staged:
                figures = self.staged_weight_dma(channels, tile.depth)
                return figures[0] + figures[2]
            return self.weight_dma(channels, tile.depth)[0]

        if self.streams_weights(tile):
            # The first step starts on one chunk of the weights; its requantize runs on
            # the vector unit, which the next step (the same accumulator) waits for.
            weights = weight_cycles(self.target.mac_array.columns)
            lanes = self.target.vector_unit.lanes
            vector = tile.rows * tile.columns * math.ceil(tile.channels / lanes)
        elif layer.has_weights:
            weights = weight_cycles(tile.channels)
        # On a weight stream, the first weights load beside the first input.
        first = (max(first, weights) if self.weight_stream else first + weights) + vector
        rows, columns, out_channels = self.last_tile(tile)
        last = self.output_dma(rows, columns, out_channels)[0]
        return first, last

    def last_tile(self, tile: Tile) -> tuple[int, int, int]:
        """Rows, columns and output channels of the last tile (the remainder along
        each dimension)."""
        layer = self.layer
        return (
            _splits(layer.out_h, tile.rows)[-1][0],
            _splits(layer.out_w, tile.columns)[-1][0],
            _splits(layer.out_c, tile.channels)[-1][0],
        )

    def store_backlog(self, tile: Tile) -> int:
        """Cycles the store of the tile before the last still runs after the last
        tile's compute (it began when its own compute ended, as the last tile's began;
        a short last tile does not hide it). It counts when compute bounds the layer:
        otherwise the DDR's time, every store included, already does."""
        layer = self.layer
        rows, columns, out_channels = self.last_tile(tile)
        if (rows, columns, out_channels) == (layer.out_h, layer.out_w, layer.out_c):
            return 0
        previous = self.output_dma(tile.rows, tile.columns, tile.channels)[0]
        compute = self.compute_cycles(rows, columns, out_channels, self.full_depth)
        return max(previous - compute, 0)

    @cached_property
    def ideal_compute(self) -> int:
        """The layer's compute at the ideal rate: every MAC of the array (or lane of
        the vector unit) of every core busy every cycle."""
        layer, array = self.layer, self.target.mac_array
        if layer.engine == "mac":
            compute = math.ceil(layer.macs / array.macs_per_cycle)
        else:
            elements = layer.batch * layer.out_h * layer.out_w * layer.out_c
            compute = math.ceil(elements * layer.vector_reads / self.target.vector_unit.lanes)
        compute *= self.target.data_types.activation_cycles(layer.sixteen)
        return math.ceil(compute / self.target.cores.count)

    def compulsory(self, inputs: int | None = None, output: bool = True) -> dict[str, float]:
        """The cycles of the layer's compulsory traffic through each port: `inputs` of
        its inputs (all of them by default) read once (a strided 1x1 conv skips rows),
        the output written once (if `output`), the weights read once."""
        layer = self.layer
        read_h = _read_extent(
            layer.out_h, layer.kernel[0], layer.strides[0], layer.dilations[0],
            layer.pads[0], layer.in_h, layer.upsample[0],
        )  # fmt: skip
        read_w = _read_extent(
            layer.out_w, layer.kernel[1], layer.strides[1], layer.dilations[1],
            layer.pads[1], layer.in_w, layer.upsample[1],
        )  # fmt: skip
        ports: dict[str, float] = {}

        def carry(memory: _Memory, size: int, read: bool) -> None:
            rate = memory.read_rate if read else memory.write_rate
            ports[memory.port] = ports.get(memory.port, 0.0) + size / rate

        count = layer.inputs if inputs is None else inputs
        carry(
            self.input_memory,
            count * layer.batch * read_h * read_w * layer.in_c * layer.in_bytes,
            True,
        )
        if output:
            carry(
                self.output_memory,
                layer.batch * layer.out_h * layer.out_w * layer.out_c * layer.out_bytes,
                False,
            )
        if layer.has_weights:
            taps = layer.kernel[0] * layer.kernel[1]
            size = layer.out_c * taps * layer.depth_per_group * layer.weight_bytes
            carry(self.weight_memory, size, True)
        return ports

    @cached_property
    def lower_bound(self) -> int:
        """The larger of the ideal compute and the compulsory traffic through the
        busiest port."""
        return max(self.ideal_compute, math.ceil(max(self.compulsory().values())))

    def plan(self, tile: Tile, double: bool) -> Plan:
        layer = self.layer
        buffers = self.buffers(tile, double)
        best: Plan | None = None
        orders: tuple[Literal["weights", "input"], ...] = (
            ("weights", "input") if layer.has_weights else ("input",)
        )
        stagings = (False, True) if self.stage_memory is not None else (False,)
        counts = (
            layer.batch * -(-layer.out_h // tile.rows),
            -(-layer.out_w // tile.columns),
            -(-layer.out_c // tile.channels),
            -(-self.full_depth // tile.depth),
        )
        for order, staged in product(orders, stagings):
            cost = self.cost(tile, order, staged)
            cycles = self.cycles(tile, cost, double, staged)
            one_core, read, note = cycles, cost.read, ""
            split, cores = self.split(order, counts)
            if cores > 1:
                part = self._share(cost, order, split, cores, counts)
                split_cycles = self.cycles(tile, part, double, staged)
                split_cycles += 2 * self.target.cores.sync_latency_cycles
                if split_cycles < cycles:
                    cycles, read = split_cycles, part.read
                    note = (
                        f"split over {split} on {cores} cores: {split_cycles:,} estimated "
                        f"cycles against {one_core:,} on one"
                    )
                else:
                    note = (
                        f"one core: split over {split} it would take {split_cycles:,} "
                        f"estimated cycles against {one_core:,}"
                    )
                    split, cores = "", 1
            elif self.target.cores.count > 1:
                note = "one core: one tile, nothing to split"
            lock = self._lock_step(tile, cost, order, counts, double, staged)
            if lock is not None and lock[0] < cycles:
                previous = (
                    f"split over {split}: {cycles:,}" if cores > 1 else f"one core: {one_core:,}"
                )
                cycles, read, cores = lock
                split = LOCK_STEP
                note = (
                    f"split over {LOCK_STEP} on {cores} cores, each input tile loaded once "
                    f"into every core's SRAM: {cycles:,} estimated cycles ({previous})"
                )
            plan = Plan(
                layer,
                tile,
                counts,
                order,
                double,
                buffers,
                sum(buffers.values()),
                read,
                cost.written,
                cost.compute,
                cost.load + cost.weight_load,
                cost.store,
                cycles,
                self.lower_bound,
                staged=staged,
                cores=cores,
                split=split,
                one_core_cycles=one_core,
                cores_note=note,
            )
            if best is None or _rank(plan) < _rank(best):
                best = plan
        assert best is not None
        return best

    def cycles(self, tile: Tile, cost: _Cost, double: bool, staged: bool) -> int:
        """The layer's time with these costs (of one core's share, on several)."""
        if not double:
            # One thing at a time on a core; the cores of a split share the ports,
            # which carry every core's transfers.
            serial = cost.compute + cost.load + cost.weight_load + cost.store
            return max(serial, *cost.ports.values()) if cost.ports else serial
        # Loads and stores overlap compute; they take turns on a port they share (all
        # of them, when one memory holds everything).
        first, last = self.first_and_last(tile, staged)
        if cost.compute >= cost.transfers:
            return cost.compute + first + last + self.store_backlog(tile)
        # Bound by the transfers, which already hold the first loads and the last
        # store: what they cannot hide is the last tile's compute, between its loads
        # and its store (and no less than the exposed time of a compute-bound layer).
        rows, columns, channels = self.last_tile(tile)
        exposed = self.compute_cycles(rows, columns, channels, tile.depth)
        return max(cost.transfers + exposed, cost.compute + first + last)

    def _share(
        self, cost: _Cost, order: str, split: str, cores: int, counts: tuple[int, int, int, int]
    ) -> _Cost:
        """One core's part of `cost` when the layer is split `split` over `cores`: its
        queues run its share of the tiles; the ports, which the cores share, carry
        everything, and what every core loads whole (the weights of a split over
        pixels when they are stationary, the input of a split over output channels
        when it is) is loaded by each core."""
        figures = self.shares(order, counts)
        assert figures is not None
        share = figures[0]
        layer = self.layer
        part = _Cost(
            round(cost.compute * share),
            round(cost.load * share),
            round(cost.weight_load * share),
            round(cost.store * share),
            cost.read,
            cost.written,
            dict(cost.ports),
        )
        shared_input = layer.kind == "conv" and layer.groups == 1 and counts[3] == 1
        if order == "weights" and split != "output channels" and layer.has_weights:
            (cycles, size), memory = cost.weights, self.weight_memory
            on_stream = self.weight_stream
        elif order == "input" and split == "output channels" and shared_input:
            (cycles, size), memory = cost.inputs, self.input_memory
            on_stream = False
        else:
            return part
        # Each core loads all of it, not its share.
        extra = cycles - round(cycles * share)
        if on_stream:
            part.weight_load += extra
        else:
            part.load += extra
        part.carry(memory.port, (cores - 1) * cycles)
        part.read += (cores - 1) * size
        return part

    def _lock_step(
        self,
        tile: Tile,
        cost: _Cost,
        order: str,
        counts: tuple[int, int, int, int],
        double: bool,
        staged: bool,
    ) -> tuple[int, int, int] | None:
        """(cycles, bytes read, cores) of the layer split over output channels in lock
        step, on a target whose DMA broadcasts loads to every core's SRAM
        (`Cores.broadcast_loads`): the cores walk the same tiles, each computing its
        share of the output channels, and core 0 loads each input tile once for all
        of them (irc/tiling/builder.py). None when the layer cannot run so: not a
        dense conv or gemm, one channel tile, or a split K (whose output stage, after
        the K steps' loop, the command stream cannot join to a core's last step)."""
        layer, target = self.layer, self.target
        if not (
            target.cores.broadcast_loads
            and target.cores.count > 1
            and layer.engine == "mac"
            and layer.kind == "conv"
            and layer.groups == 1
            and counts[2] > 1
            and counts[3] == 1
        ):
            return None
        cores = min(target.cores.count, counts[2])
        share = -(-counts[2] // cores) / counts[2]
        # The input loads: one per tile the cores compute together, where one core
        # loads one per tile it computes (those that scale with the channel tiles).
        scales = order != "input"
        inputs, input_bytes = cost.inputs
        once = round(inputs * share) if scales else inputs
        part = _Cost(
            round(cost.compute * share),
            round(cost.load * share) - round(inputs * share) + once,
            round(cost.weight_load * share),
            round(cost.store * share),
            cost.read - input_bytes + (round(input_bytes * share) if scales else input_bytes),
            cost.written,
            dict(cost.ports),
        )
        port = self.input_memory.port
        if port in part.ports:
            part.ports[port] -= inputs - once
        # Each tile the cores compute together: core 1 waits for core 0's load of its
        # input, core 0's next load into that buffer for core 1's compute.
        together = counts[0] * counts[1] * -(-counts[2] // cores)
        sync = 2 * target.cores.sync_latency_cycles * together
        return self.cycles(tile, part, double, staged) + sync, part.read, cores

    def split(self, order: str, counts: tuple[int, int, int, int]) -> tuple[str, int]:
        """What a plan with these tile `counts` (rows, columns, channels, K steps) and
        loop order splits on the target's cores (`SPLITS`), and on how many (one per
        tile of it at most); ("", 1) on one core or when nothing splits."""
        shares = self.shares(order, counts)
        return ("", 1) if shares is None else (shares[1], shares[2])

    def shares(
        self, order: str, counts: tuple[int, int, int, int]
    ) -> tuple[float, str, int] | None:
        """On the target's cores: the share of the layer's tiles the busiest core runs,
        what the split cuts and how many cores it uses. The split dimension is the
        loop nest's outermost of several tiles (irc/tiling/builder.py,
        `split_dimension`): the output channels first in a weights-stationary order,
        the batch, rows, then columns first in an input-stationary one."""
        cores = self.target.cores.count
        if cores < 2:
            return None
        layer = self.layer
        spatial = [
            ("batch", layer.batch),
            ("rows", counts[0] // layer.batch),
            ("columns", counts[1]),
        ]
        channels = [("output channels", counts[2])]
        dims = channels + spatial if order == "weights" else spatial + channels
        for name, count in dims:
            if count > 1:
                used = min(cores, count)
                return -(-count // used) / count, name, used
        return None

    # ---- candidates -------------------------------------------------------------------

    def candidates(self, full_rows: bool) -> Iterator[Tile]:
        layer, array = self.layer, self.target.mac_array
        rows = divisions(layer.out_h)
        columns = [layer.out_w] if full_rows else divisions(layer.out_w)
        granule = array.columns if layer.engine == "mac" else self.target.vector_unit.lanes
        channels = [layer.out_c] if layer.whole_channels else channel_sizes(layer.out_c, granule)
        if layer.kind == "conv" and layer.groups > 1:
            out_per_group = layer.out_c // layer.groups
            channels = [
                c for c in channels if c % out_per_group == 0 or out_per_group % c == 0
            ] or [layer.out_c]
        depths = [1] if self.full_depth == 1 else channel_sizes(self.full_depth, array.rows)
        for h, w, c, k in product(rows, columns, channels, depths):
            if k < self.full_depth and c > self.out_per_group:
                continue  # the groups' input channels would not be one box
            yield Tile(h, w, c, k)

    @property
    def out_per_group(self) -> int:
        """Output channels per group (all of them for an ungrouped layer)."""
        layer = self.layer
        return layer.out_c // layer.groups if layer.kind == "conv" else layer.out_c


CYCLE_TOLERANCE = 0.01
"""Plans within this fraction of the fastest count as equally fast."""


LOCK_STEP = "output channels in lock step"
"""A split over output channels where the cores walk the same tiles together, each
input tile loaded once into every core's SRAM (`Cores.broadcast_loads`)."""

SPLITS = ("output channels", "batch", "rows", "columns", LOCK_STEP)
"""What a layer split across cores cuts into one share a core: its output channels
(each core its share of the weights, all of the input), or its batch, rows or columns
(all of the weights, its share of the input); or its output channels in lock step
(each core its share of the weights, the input loaded once for all)."""


def _choose(plans: list[Plan]) -> Plan:
    """The plan that moves the fewest DDR bytes among those within CYCLE_TOLERANCE of
    the fastest (ties: less SRAM, then the larger tile): a plan that doubles the
    traffic to save a fraction of a percent of the time is not worth it."""
    fastest = min(plan.cycles for plan in plans)
    close = [plan for plan in plans if plan.cycles <= fastest * (1 + CYCLE_TOLERANCE)]
    return min(close, key=lambda plan: (plan.ddr_read + plan.ddr_written, *_rank(plan)[2:]))


def _rank(plan: Plan) -> tuple[int, int, int, int, tuple[int, ...]]:
    tile = plan.tile
    volume = tile.rows * tile.columns * tile.channels * tile.depth
    return (
        plan.cycles,
        plan.ddr_read + plan.ddr_written,
        plan.sram_bytes,
        -volume,
        (tile.rows, tile.columns, tile.channels, tile.depth),
    )


PIECES = (1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 28, 32, 48, 64, 96, 128, 256, 512)
"""The piece counts a dimension is cut into: every count up to 8, then fewer and fewer."""


def divisions(total: int) -> list[int]:
    """Tile sizes along an output dimension: ceil(total / k) for k in PIECES, and 1."""
    return sorted({-(-total // k) for k in PIECES if k <= total} | {1}, reverse=True)


def channel_sizes(total: int, granule: int) -> list[int]:
    """Channel tile sizes: ceil(total / k) for k in PIECES rounded up to the array's
    granule (so that no pass of the array is half empty), the divisors of the granule
    below it (for layers that cannot afford a whole granule), and the total."""
    sizes = {total}
    for pieces in PIECES:
        size = -(-total // pieces)
        if size >= granule:
            sizes.add(min(total, _align(size, granule)))
    sizes.update(d for d in range(1, min(granule, total) + 1) if granule % d == 0)
    return sorted(sizes, reverse=True)


# --------------------------------------------------------------------------------------
# Planning


def plan_layer(
    layer: Layer, target: Target, forced: Tile | None = None, stage: bool = True
) -> Plan:
    """The fastest tile of `layer` that fits the target's SRAM (see the module
    docstring), or the `forced` one; a `TilingError` if none fits. With `stage`, a
    plan may stage the layer's weights (`Plan.staged`), the copy costed as hidden
    behind the layer before (plan-tiles then checks how much of it is).

    Layers of the same shape get the same plan, so plans are remembered by everything
    but the layer's name: a ResNet-50 has 72 layers of 25 shapes.
    """
    try:
        plan = _plan_shape(replace(layer, name=""), target, forced, stage)
    except TilingError:
        _plan_shape.__wrapped__(layer, target, forced, stage)  # the same error, naming it
        raise
    return replace(plan, layer=layer)


def plan_tile(layer: Layer, target: Target, tile: Tile, double: bool) -> Plan:
    """The plan of `layer` with this tile and buffering, whether or not it fits the
    SRAM (a cascade's member, whose SRAM the cascade lays out), without offsets."""
    model = LayerModel(layer, target)
    return model.plan(_clamp(tile, layer, model.full_depth), double)


@lru_cache(maxsize=4096)
def _plan_shape(layer: Layer, target: Target, forced: Tile | None, stage: bool = True) -> Plan:
    model = LayerModel(layer, target, stage=stage)
    capacity = target.scratch.size_bytes
    if forced is not None:
        tile = _clamp(forced, layer, model.full_depth)
        for double in (True, False):
            plan = model.plan(tile, double)
            if plan.sram_bytes <= capacity:
                return replace(plan, sram_offsets=sram_layout(plan, target))
        raise TilingError(
            f"the forced tile {tile} of {_describe(layer)} needs "
            f"{plan.sram_bytes} bytes of SRAM; the target has {capacity}"
        )
    block_rows = target.mac_array.output_block[0] if target.mac_array.output_block else 1
    for single in (False, True):
        # Whole rows first (a contiguous run a row, and a smaller search); tiles of part
        # of a row when none fits, or when the best whole rows are fewer than a
        # micro-block's (which wastes the array). Double buffered, and the whole layer
        # in one tile single buffered (a fully connected layer's weights, loaded in one
        # piece, are often faster so than in double-buffered pieces); every tile single
        # buffered only when no double-buffered one fits.
        plans: list[Plan] = []
        for full_rows in (True, False):
            plans += [
                model.plan(tile, double)
                for tile in model.candidates(full_rows)
                if full_rows or tile.columns < layer.out_w
                for double in ((False,) if single else (True, False))
                if (double or single or model.whole(tile))
                and sum(model.buffers(tile, double).values()) <= capacity
            ]
            if plans and _choose(plans).tile.rows >= min(block_rows, layer.out_h):
                break
        if plans:
            chosen = _choose(plans)
            return replace(chosen, sram_offsets=sram_layout(chosen, target))
    needed = minimum_sram(layer, target)
    raise TilingError(
        f"{_describe(layer)} needs at least {needed} bytes of SRAM "
        f"(one output element per tile, single buffered); the target has {capacity}"
    )


def clamp_tile(tile: Tile, layer: Layer, full_depth: int) -> Tile:
    """A forced tile made valid for the layer (see `_clamp`)."""
    return _clamp(tile, layer, full_depth)


def _clamp(tile: Tile, layer: Layer, full_depth: int) -> Tile:
    """A forced tile made valid for the layer: each size at most the dimension's; for a
    grouped conv, channels that cover whole groups or divide one group (rounded down),
    and the whole depth when a tile spans several groups; all channels for a layer
    that needs them whole (a softmax)."""
    channels = layer.out_c if layer.whole_channels else max(1, min(tile.channels, layer.out_c))
    depth = max(1, min(tile.depth, full_depth))
    if layer.kind == "conv" and layer.groups > 1:
        per_group = layer.out_c // layer.groups
        if channels >= per_group:
            channels -= channels % per_group
            if channels > per_group:
                depth = full_depth
        else:
            channels = max(d for d in range(1, channels + 1) if per_group % d == 0)
    return Tile(
        max(1, min(tile.rows, layer.out_h)),
        max(1, min(tile.columns, layer.out_w)),
        channels,
        depth,
    )


def sram_layout(
    plan: Plan, target: Target, start: int = -1, once: Sequence[str] = ()
) -> dict[str, tuple[int, ...]]:
    """Where each buffer of a plan lives in SRAM: each kind of buffer in a bank of its
    own when they all fit (input, weights, output, then parameters and accumulator
    together), so that the DMA filling one and the array reading another do not
    contend; else packed one after another. Copies of a double-buffered buffer are
    consecutive (ping, then pong); every offset is a multiple of the alignment. The
    accumulator, and a vector layer's parameters or table (loaded once, before the
    loops), have one copy, as have the buffers named in `once` (whose size in the
    plan's buffers is then one copy's). From `start` on (a member of a cascade), the
    buffers are packed."""
    copies = 2 if plan.double_buffered else 1
    single = {"accumulator"} if plan.layer.has_weights else {"accumulator", "parameters"}
    single |= set(once)
    sizes = {
        name: (size, 1) if name in single else (size // copies, copies)
        for name, size in plan.buffers.items()
    }
    groups = [["input"], ["weights"], ["output"], ["parameters", "accumulator"]]
    groups = [[name for name in group if name in sizes] for group in groups]
    groups = [group for group in groups if group]
    bank = target.scratch.bank_bytes
    fits = (
        start < 0
        and bank % target.scratch.alignment_bytes == 0
        and len(groups) <= target.scratch.banks
        and all(sum(sizes[name][0] * sizes[name][1] for name in group) <= bank for group in groups)
    )
    offsets: dict[str, tuple[int, ...]] = {}
    cursor = max(start, 0)
    for index, group in enumerate(groups):
        if fits:
            cursor = index * bank
        for name in group:
            size, count = sizes[name]
            offsets[name] = tuple(cursor + copy * size for copy in range(count))
            cursor += size * count
    return offsets


def _describe(layer: Layer) -> str:
    """`op` for a layer named after its op or its position in parsed IR (`file:line`,
    which the diagnostic's location gives), else `'name' (op)`."""
    if layer.name.startswith(layer.op) or re.fullmatch(r"[\w.\-]+:\d+", layer.name):
        return layer.op
    return f"'{layer.name}' ({layer.op})"


def minimum_sram(layer: Layer, target: Target) -> int:
    """The SRAM the smallest tile needs, single buffered: the least any plan needs."""
    model = LayerModel(layer, target)
    # A grouped conv's one output channel reads its group's inputs; a softmax's one
    # row is all its channels.
    tile = Tile(1, 1, layer.out_c if layer.whole_channels else 1, 1)
    return sum(model.buffers(tile, False).values())


@dataclass(frozen=True)
class NetworkBound:
    """What no schedule of a network can beat: its compute at the ideal rate, and its
    compulsory off-chip traffic (every weight read once, the model's inputs read and
    outputs written once) through the busiest port; the bound is the larger."""

    compute: int
    traffic: int

    @property
    def cycles(self) -> int:
        return max(self.compute, self.traffic)


def network_bound(
    layers: Sequence[Layer], target: Target, input_bytes: int, output_bytes: int
) -> NetworkBound:
    """The bound of a network of `layers` (the planned NPU layers) whose inputs and
    outputs take `input_bytes` and `output_bytes`: the weights in their memory, the
    inputs and outputs in the fastest memory of activations (the bound assumes the
    best placement)."""
    compute = sum(LayerModel(replace(layer, name=""), target).ideal_compute for layer in layers)
    ports: dict[str, float] = {}
    weights = _Memory.of(target, target.placement.weights)
    weight_bytes = sum(
        layer.out_c * layer.kernel[0] * layer.kernel[1] * layer.depth_per_group * layer.weight_bytes
        for layer in layers
        if layer.has_weights
    )
    ports[weights.port] = weight_bytes / weights.read_rate
    fastest = max(
        (_Memory.of(target, name) for name in target.placement.activations),
        key=lambda memory: memory.read_rate,
    )
    cycles = input_bytes / fastest.read_rate + output_bytes / fastest.write_rate
    ports[fastest.port] = ports.get(fastest.port, 0.0) + cycles
    return NetworkBound(compute, math.ceil(max(ports.values())))
