"""What a target is, in base units: the dataclasses that `load_target` returns.

A `Target` describes an NPU and the CPU it falls back to: its cores, the MAC array,
the data types, the memories, the DMA, the vector unit and lookup table, the host's
cost model, and the support table (`ops`: per nn op, the limits within which the NPU
runs it).
Every number is in a base unit (bytes, hertz, bytes per second, seconds); the target
files (irc/targets/presets/*.toml, docs/targets.md) write them in human units and the
loader converts them.

Loading and printing targets does not import the nn dialect; only irc/targets/support.py,
which checks ops, does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

SCRATCH = "sram"
"""The name of the NPU's local SRAM, the memory every target has (irc.targets.schema)."""


@dataclass(frozen=True)
class MacArray:
    """The multiply-accumulate array: `rows` x `columns` int8 MACs at `clock_hz`.

    Without `output_block` the array is a plain grid: input channels on its rows,
    output channels on its columns. With it, the array computes the output in
    micro-blocks as Arm's Ethos-U does (Vela's `npu_performance.py`): a micro-block
    of `output_block` = (rows, columns, channels) outputs takes `block_cycles` per
    `input_block_depth` input channels and kernel tap, at least the cycles its weights
    take through the weight decoder (`weight_bytes_per_cycle`); a depthwise conv
    takes `taps_per_step` taps a step, and so does a conv over few input channels when
    that takes fewer steps ("part-kernel first": `taps_per_step` taps of
    `input_block_depth / taps_per_step` channels a step); and the output stage writes
    at most `output_elements_per_cycle` elements a cycle (0: no bound). With
    `weight_stream`, the array fetches its weights on a DMA channel of its own (the
    `dma_weights` queue), beside the loads of activations (`dma_in`); they still share
    the port of the memory they come from."""

    rows: int
    columns: int
    clock_hz: float
    output_block: tuple[int, ...] = ()
    input_block_depth: int = 0
    weight_bytes_per_cycle: float = 0.0
    taps_per_step: int = 0
    output_elements_per_cycle: float = 0.0
    weight_stream: bool = False

    @property
    def macs_per_cycle(self) -> int:
        """int8 multiply-accumulates per clock cycle (rows x columns)."""
        return self.rows * self.columns

    @property
    def block_cycles(self) -> float:
        """Cycles a micro-block takes per `input_block_depth` channels and tap."""
        return math.prod(self.output_block) * self.input_block_depth / self.macs_per_cycle

    def cycles(
        self,
        batch: int,
        rows: int,
        columns: int,
        channels: int,
        depth: int,
        taps: int,
        depthwise: bool,
        passes: int = 1,
    ) -> int:
        """The cycles of one step over `batch` x `rows` x `columns` outputs of
        `channels` channels, each summing `depth` input channels over `taps` kernel
        taps (a depthwise step: each output channel its own input channel), each pass
        taking `passes` times an 8-bit one (16-bit activations)."""
        pixels = batch * rows * columns
        if not self.output_block:
            if depthwise:
                steps = math.ceil(channels / self.columns) * math.ceil(taps / self.rows)
            else:
                steps = math.ceil(channels / self.columns) * math.ceil(depth / self.rows) * taps
            return pixels * steps * passes + self.rows + self.columns
        block_rows, block_columns, block_channels = self.output_block
        blocks = batch * math.ceil(rows / block_rows) * math.ceil(columns / block_columns)
        weights = block_channels * self.input_block_depth / self.weight_bytes_per_cycle
        if depthwise:  # a 16-bit step takes `passes` times as long
            per_step = max(weights, self.block_cycles * blocks * passes)
            steps = math.ceil(taps / self.taps_per_step)
        else:  # a 16-bit input block is `passes` times shallower
            per_step = max(weights, self.block_cycles * blocks)
            depth_first = taps * math.ceil(depth * passes / self.input_block_depth)
            packed = max(1, self.taps_per_step // passes)  # Vela: 4 taps (2 at 16 bits)
            granule = self.input_block_depth // self.taps_per_step
            part_kernel = math.ceil(taps / packed) * math.ceil(depth / granule)
            steps = min(depth_first, part_kernel)
        cycles = per_step * steps * math.ceil(channels / block_channels)
        if self.output_elements_per_cycle:
            cycles = max(cycles, pixels * channels / self.output_elements_per_cycle)
        return math.ceil(cycles)

    @property
    def macs_per_second(self) -> float:
        """Peak int8 multiply-accumulates per second."""
        return self.macs_per_cycle * self.clock_hz


@dataclass(frozen=True)
class DataTypes:
    """The element types the NPU computes in (int8 is always supported)."""

    int8: bool
    int16: bool
    fp16: bool
    int16_cycles: int = 0
    """With `int16`: the cycles a pass over 16-bit activations takes per pass over
    8-bit ones (the MAC array takes half the input channels per cycle); 0 without."""
    int16_accumulator_bits: int = 0
    """With `int16`: the bits of the accumulator of a MAC layer with 16-bit activations
    (40 on Ethos-U, 48 as in TFLite's and TOSA's int16x8, 64); 0 without."""

    def holds_wide(self, bound: int) -> bool:
        """Whether the 16-bit accumulator holds sums of magnitude up to `bound`."""
        return bound < 1 << (self.int16_accumulator_bits - 1)

    def activation_cycles(self, sixteen: bool) -> int:
        """The cycles per pass of a layer with 16-bit (`sixteen`) or 8-bit activations."""
        return self.int16_cycles if sixteen else 1


@dataclass(frozen=True)
class Memory:
    """One memory of the target (`[memories.<name>]`): the NPU's local SRAM, or a
    system memory (system SRAM, DRAM, flash) that DMA moves tiles from and to.

    Memories on the same `port` share it: their transfers take turns. A transfer's rate
    is the bandwidth, or less when the latency is long and few bursts may be in flight
    (Little's law: `max_reads` bursts per `read_latency_cycles`)."""

    name: str
    size_bytes: int
    alignment_bytes: int
    """Every buffer in it starts at a multiple of this (a power of two)."""
    read_bytes_per_second: float
    write_bytes_per_second: float
    """0 for a read-only memory (flash)."""
    read_latency_cycles: int
    """NPU clock cycles from a read request to its first data."""
    write_latency_cycles: int
    """NPU clock cycles from a write request to its completion."""
    burst_bytes: int
    """Transfers move whole bursts: a run of bytes costs the bursts it touches."""
    max_reads: int
    """Read bursts in flight at once."""
    max_writes: int
    """Write bursts in flight at once (0 for a read-only memory)."""
    port: str
    banks: int = 1

    @property
    def bank_bytes(self) -> int:
        """The size of one bank."""
        return self.size_bytes // self.banks

    @property
    def writable(self) -> bool:
        """Whether the NPU may write it (flash is read-only)."""
        return self.write_bytes_per_second > 0

    def read_bytes_per_cycle(self, clock_hz: float) -> float:
        """Bytes read per NPU cycle: the bandwidth, or the bursts in flight per latency
        when that is less."""
        return _rate(self.read_bytes_per_second / clock_hz, self.max_reads, self, True)

    def write_bytes_per_cycle(self, clock_hz: float) -> float:
        """Bytes written per NPU cycle (0 for a read-only memory)."""
        if not self.writable:
            return 0.0
        return _rate(self.write_bytes_per_second / clock_hz, self.max_writes, self, False)


def _rate(bandwidth: float, in_flight: int, memory: Memory, read: bool) -> float:
    latency = memory.read_latency_cycles if read else memory.write_latency_cycles
    if latency == 0:
        return bandwidth
    return min(bandwidth, in_flight * memory.burst_bytes / latency)


@dataclass(frozen=True)
class Placement:
    """Where tensors live (`[placement]`): the weights' memory, and the activations'
    memories in order of preference (a tensor goes to the first with room for it)."""

    weights: str
    activations: tuple[str, ...]


@dataclass(frozen=True)
class VectorUnit:
    """The unit that runs elementwise ops, pooling and requantization."""

    lanes: int
    """Elementwise int8 operations per cycle."""


@dataclass(frozen=True)
class Lut:
    """The lookup table that evaluates activations such as sigmoid and tanh."""

    supported: bool
    entries: int
    """Entries of the table (0 when there is none)."""


@dataclass(frozen=True)
class Host:
    """The cost model of the host CPU that runs the ops the NPU cannot."""

    macs_per_second: float
    elements_per_second: float
    """Elementwise operations per second."""
    transition_seconds: float
    """The synchronisation cost of one NPU<->CPU transition."""
    bandwidth_bytes_per_second: float
    """Copies between host and NPU memory."""


@dataclass(frozen=True)
class OpSupport:
    """The limits within which the NPU runs one nn op (`op`, without the `nn.` prefix).

    A limit that is None (or a capability that keeps its default) does not restrict
    the op. Which limits an op may have is declared in irc/targets/schema.py
    (`OP_LIMITS`); docs/targets.md describes each, and irc/targets/support.py checks them.
    """

    op: str

    # every op
    max_rank: int | None = None
    max_dimension: int | None = None

    # spatial ops (those with a `layout` property) and nn.resize
    layouts: tuple[str, ...] | None = None
    spatial_dims: tuple[int, ...] | None = None
    max_batch: int | None = None

    # sliding windows (conv, conv_transpose, max_pool, average_pool)
    max_kernel: int | None = None
    max_dilated_kernel: int | None = None
    max_kernel_elements: int | None = None
    max_padded_kernel: int | None = None
    strides: tuple[int, ...] | None = None
    dilations: tuple[int, ...] | None = None
    max_padding: int | None = None

    # convolutions and matrix products
    max_input_channels: int | None = None
    max_output_channels: int | None = None
    groups: str | None = None
    activations: tuple[str, ...] | None = None
    constant_weights: bool = False
    max_m: int | None = None
    max_k: int | None = None
    max_n: int | None = None
    supports_transposed_lhs: bool = True

    # pooling
    supports_ceil_mode: bool = True
    supports_count_include_pad: bool = True

    # elementwise
    supports_broadcast: bool = True
    max_inputs: int | None = None
    needs_lut: bool = False

    # softmax and reductions
    last_axis_only: bool = False
    max_axis_size: int | None = None
    max_reduced_elements: int | None = None
    max_reduced_axes: int | None = None

    # data movement
    max_outputs: int | None = None
    steps: tuple[int, ...] | None = None
    perms: tuple[tuple[int, ...], ...] | None = None
    modes: tuple[str, ...] | None = None
    coordinate_transformation_modes: tuple[str, ...] | None = None
    nearest_modes: tuple[str, ...] | None = None
    scales: tuple[float, ...] | None = None
    min_scale: float | None = None
    max_scale: float | None = None
    blocksizes: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Cores:
    """The NPU's cores (`[cores]`): `count` copies of everything the other sections
    describe for the NPU, each core with its own MAC array, vector unit and lookup
    table, DMA queues and local SRAM (`[memories.sram]`, the scratch memory: with
    `sram = "private"` each core has one of its own, of that size). The cores share
    the system memories (every other `[memories.*]`) and the ports they sit on, so
    their transfers take turns there as one core's do. A core that waits for another
    sees its signal `sync_latency_cycles` after it is raised."""

    count: int = 1
    """The number of cores (1: a single-core NPU, a target without `[cores]`)."""
    sram: str = "private"
    """How the cores hold the local SRAM: "private", a copy per core (shared SRAM
    across cores is not supported yet)."""
    sync_latency_cycles: int = 0
    """NPU clock cycles from a signal on one core to a wait on another seeing it."""
    broadcast_loads: bool = False
    """One DMA can write the same box into every core's SRAM: a layer split over output
    channels may run in lock step, each input tile read once for all the cores (the
    Ethos-U65-512's parallel mode; `npu.dma`'s `broadcast`)."""


@dataclass(frozen=True)
class Target:
    """An NPU and its host, as a target file describes them (in base units).

    `ops` is the support table, keyed by nn op name without the `nn.` prefix
    ("conv", "max_pool", ...); an op missing from it is not supported. Load one with
    `irc.targets.load_target`.
    """

    name: str
    description: str
    source: str
    """The preset name, or the path of the target file."""
    mac_array: MacArray
    data_types: DataTypes
    memories: Mapping[str, Memory]
    """Every memory by name; `SCRATCH` ("sram") is the NPU's local SRAM."""
    placement: Placement
    vector_unit: VectorUnit
    lut: Lut
    host: Host
    ops: Mapping[str, OpSupport]
    cores: Cores = Cores()
    """The NPU's cores; each has the MAC array, vector unit, lookup table and local
    SRAM above, and all share the system memories."""

    def __hash__(self) -> int:
        # The support table is a read-only mapping, which is not hashable itself.
        memories = tuple(self.memories)
        return hash((self.name, self.source, tuple(sorted(self.ops)), memories, self.cores))

    def with_memory(self, name: str, **changes: object) -> Target:
        """The target with memory `name`'s fields changed (`size_bytes=4096`): what a
        design-space exploration varies."""
        import dataclasses
        from types import MappingProxyType

        memories = dict(self.memories)
        memories[name] = dataclasses.replace(memories[name], **changes)  # type: ignore[arg-type]
        return dataclasses.replace(self, memories=MappingProxyType(memories))

    @property
    def scratch(self) -> Memory:
        """The NPU's local SRAM: the memory compute commands work in."""
        return self.memories[SCRATCH]

    @property
    def weights_memory(self) -> Memory:
        """The memory that holds the weights."""
        return self.memories[self.placement.weights]

    @property
    def activation_memories(self) -> tuple[Memory, ...]:
        """The memories that hold activations, in order of preference."""
        return tuple(self.memories[name] for name in self.placement.activations)

    @property
    def system_memories(self) -> tuple[Memory, ...]:
        """Every memory but the local SRAM, in the file's order."""
        return tuple(memory for name, memory in self.memories.items() if name != SCRATCH)

    @property
    def peak_tops(self) -> float:
        """Peak int8 tera-operations per second of all the cores together (a MAC
        counts as two operations)."""
        return 2 * self.mac_array.macs_per_second * self.cores.count / 1e12
