"""What a target is, in base units: the dataclasses that `load_target` returns.

A `Target` describes an NPU and the CPU it falls back to: the MAC array, the data
types, the memories, the DMA, the vector unit and lookup table, the host's cost model,
and the support table (`ops`: per nn op, the limits within which the NPU runs it).
Every number is in a base unit (bytes, hertz, bytes per second, seconds); the target
files (irc/targets/presets/*.toml, docs/targets.md) write them in human units and the
loader converts them.

Loading and printing targets does not import the nn dialect; only irc/targets/support.py,
which checks ops, does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class MacArray:
    """The multiply-accumulate array: `rows` x `columns` int8 MACs at `clock_hz`."""

    rows: int
    columns: int
    clock_hz: float

    @property
    def macs_per_cycle(self) -> int:
        """int8 multiply-accumulates per clock cycle (rows x columns)."""
        return self.rows * self.columns

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
class Sram:
    """On-chip memory that compute commands work in."""

    size_bytes: int
    banks: int
    alignment_bytes: int
    """Every buffer in SRAM starts at a multiple of this (a power of two)."""

    @property
    def bank_bytes(self) -> int:
        """The size of one bank."""
        return self.size_bytes // self.banks


@dataclass(frozen=True)
class Ddr:
    """Off-chip memory (DRAM or flash) that holds weights and spilled tensors."""

    bandwidth_bytes_per_second: float
    latency_cycles: int
    """Cycles of the NPU clock from a read request to its first data."""


@dataclass(frozen=True)
class Dma:
    """The DMA engine that copies between DDR and SRAM."""

    channels: int
    """Transfers that can be in flight at once."""
    burst_bytes: int
    """Bytes per burst: transfers are carried out in whole bursts."""


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
    sram: Sram
    ddr: Ddr
    dma: Dma
    vector_unit: VectorUnit
    lut: Lut
    host: Host
    ops: Mapping[str, OpSupport]

    def __hash__(self) -> int:
        # The support table is a read-only mapping, which is not hashable itself.
        return hash((self.name, self.source, tuple(sorted(self.ops))))

    @property
    def peak_tops(self) -> float:
        """Peak int8 tera-operations per second (a MAC counts as two operations)."""
        return 2 * self.mac_array.macs_per_second / 1e12
