"""The target file format: every table, key, unit, limit and the ops each limit applies to.

This is the one declaration of the format. The loader (irc/targets/loader.py) validates
files against it, `irc-target show` writes files in it, and tests check that
docs/targets.md documents every key declared here.

Hardware figures are written in human units named in the key (`clock_mhz`, `size_kib`,
`bandwidth_gb_per_s`, `transition_us`); `Field.scale` converts them to the base units
of the dataclasses in irc/targets/model.py. GB is 10^9 bytes and KiB 1024 bytes, as
vendors quote bandwidths and memory sizes.

Every number has a range that real hardware stays in, so that a typo (a clock of
1e-300 MHz, an SRAM of a TiB) is an error at its line rather than a 300-digit time or
a simulator that cannot allocate its memory: clocks of 1 MHz to 10 GHz, bandwidths of
1 MB/s to 10 TB/s, host rates of 10^6 to 10^15 per second, SRAM of 1 KiB to 256 MiB
(the largest on-chip memories of inference chips are a few hundred MB), and the
bounds of each key below. Integers are integers (16.0 is an error), numbers finite.

Op names are those of the nn dialect without the `nn.` prefix. They are listed here
rather than read from irc/dialects/nn.py so that reading a target file does not import
the dialect; tests/test_targets.py checks that the lists agree with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from irc.targets import model

# --------------------------------------------------------------------------------------
# Sections: the hardware tables


FieldKind = Literal["int", "ints", "number", "bool", "string", "strings"]


@dataclass(frozen=True)
class Field:
    """One key of a hardware table."""

    key: str
    """The key in the file, with its unit (`clock_mhz`)."""
    attribute: str
    """The attribute of the section's dataclass it sets (`clock_hz`)."""
    kind: FieldKind
    help: str
    unit: str = ""
    """The unit of the value in the file, for docs and messages (`MHz`)."""
    scale: float = 1.0
    """The value in the file times `scale` is the value in base units."""
    minimum: float | None = None
    """The bound the quantity has by its nature (a clock is more than 0)."""
    exclusive_minimum: bool = False
    floor: float | None = None
    """The smallest value a real target has, when that is above `minimum` (a clock of
    at least 1 MHz): a value between the two is physically absurd, and would print as
    a time of 300 digits."""
    maximum: float | None = None
    """The largest value a real target has (no NPU clock above 10 GHz)."""
    power_of_two: bool = False
    required: bool = True
    required_when: str = ""
    """For an optional key: the other key of its table that makes it required
    (`supported`: a lookup table's entries)."""
    default: object = None
    """For an optional key that no other key requires: its value when omitted."""
    zero_allowed: bool = False
    """0 is allowed besides the range from `floor` (a read-only memory's write
    bandwidth)."""
    choices: tuple[str, ...] = ()
    """For a string: the values it may take (any non-empty string when empty)."""


@dataclass(frozen=True)
class Section:
    """A hardware table (`[sram]`) and its keys."""

    name: str
    help: str
    fields: tuple[Field, ...]
    required: bool = True
    """False for a table a file may leave out: then every key takes its default."""

    def field(self, key: str) -> Field | None:
        """The field written `key`, if the table has one."""
        return next((f for f in self.fields if f.key == key), None)


KIB = 1024
GIGA = 1e9
MEGA = 1e6
MICRO = 1e-6

MEMORIES_TABLE = "memories"
"""The memory hierarchy: one `[memories.<name>]` table per memory, with `MEMORY_FIELDS`."""

SCRATCH = model.SCRATCH
"""The memory every target has: the NPU's local SRAM, the only one compute commands
work in (tiles are loaded into it by DMA). Its name is the IR's memory space of tiles."""

MAX_MEMORY_KIB = 1 << 30
"""The largest memory: 1 TiB (the address space of a 40-bit AXI port)."""

MAX_SCRATCH_KIB = 1 << 18
"""The largest local SRAM: 256 MiB (the largest on-chip memories of inference chips are
a few hundred MB; the simulator holds it whole)."""

MEMORY_FIELDS: tuple[Field, ...] = (
    Field(
        "size_kib",
        "size_bytes",
        "int",
        "capacity",
        unit="KiB",
        scale=KIB,
        minimum=1,
        maximum=MAX_MEMORY_KIB,
    ),
    Field(
        "banks",
        "banks",
        "int",
        "number of banks (buffers of a layer in separate banks do not contend)",
        minimum=1,
        maximum=65536,
        required=False,
        default=1,
    ),
    Field(
        "alignment_bytes",
        "alignment_bytes",
        "int",
        "every buffer starts at a multiple of this",
        unit="bytes",
        minimum=1,
        maximum=4096,
        power_of_two=True,
    ),
    Field(
        "read_bandwidth_gb_per_s",
        "read_bytes_per_second",
        "number",
        "sustained read bandwidth",
        unit="GB/s",
        scale=GIGA,
        minimum=0,
        exclusive_minimum=True,
        floor=0.001,
        maximum=100_000,
    ),
    Field(
        "write_bandwidth_gb_per_s",
        "write_bytes_per_second",
        "number",
        "sustained write bandwidth (0: read-only, as flash)",
        unit="GB/s",
        scale=GIGA,
        minimum=0,
        floor=0.001,
        maximum=100_000,
        zero_allowed=True,
    ),
    Field(
        "read_latency_cycles",
        "read_latency_cycles",
        "int",
        "NPU clock cycles from a read request to its first data",
        unit="cycles",
        minimum=0,
        maximum=1_000_000,
    ),
    Field(
        "write_latency_cycles",
        "write_latency_cycles",
        "int",
        "NPU clock cycles from a write request to its completion",
        unit="cycles",
        minimum=0,
        maximum=1_000_000,
    ),
    Field(
        "burst_bytes",
        "burst_bytes",
        "int",
        "bytes per burst: transfers move whole bursts",
        unit="bytes",
        minimum=1,
        maximum=65536,
        power_of_two=True,
    ),
    Field(
        "max_reads",
        "max_reads",
        "int",
        "read bursts in flight at once (with the latency, bounds the read rate)",
        minimum=1,
        maximum=4096,
    ),
    Field(
        "max_writes",
        "max_writes",
        "int",
        "write bursts in flight at once (0 for a read-only memory)",
        minimum=0,
        maximum=4096,
    ),
    Field(
        "port",
        "port",
        "string",
        "the port it sits on: memories on one port share its bandwidth",
    ),
)
"""The keys of a `[memories.<name>]` table."""

PLACEMENT = Section(
    "placement",
    "where the weights and the activations live",
    (
        Field(
            "weights",
            "weights",
            "string",
            "the memory that holds the weights (read-only while the model runs)",
        ),
        Field(
            "activations",
            "activations",
            "strings",
            "the memories that hold the tensors between layers (and the model's inputs and "
            "outputs), in order of preference: a tensor goes to the first with room for it "
            "while it is live",
        ),
    ),
)
"""Vela's memory modes are three placements: Sram_Only (weights and activations in
system SRAM), Shared_Sram (weights in flash, activations in system SRAM) and
Dedicated_Sram (both in DRAM, activations cached in the NPU's own SRAM)."""

MAX_CORES = 64
"""The most NPU cores a target may have (multi-core NPUs have a handful; 64 bounds a
typo without limiting any real design)."""

CORES = Section(
    "cores",
    "the NPU's cores (optional: one core when omitted)",
    (
        Field(
            "count",
            "count",
            "int",
            "NPU cores, each with its own MAC array, vector unit, DMA queues and local SRAM "
            "([memories.sram]); the system memories and their ports are shared",
            minimum=1,
            maximum=MAX_CORES,
            required=False,
            default=1,
        ),
        Field(
            "sram",
            "sram",
            "string",
            'how the cores hold the local SRAM: "private", each core its own copy of '
            "[memories.sram] (shared SRAM across cores is not supported yet)",
            required=False,
            default="private",
            choices=("private",),
        ),
        Field(
            "sync_latency_cycles",
            "sync_latency_cycles",
            "int",
            "NPU clock cycles from a signal on one core to a wait on another core seeing it",
            unit="cycles",
            minimum=0,
            maximum=1_000_000,
            required=False,
            default=0,
        ),
        Field(
            "broadcast_loads",
            "broadcast_loads",
            "bool",
            "one DMA can write the same box into every core's SRAM (the cores run a layer "
            "in lock step, each input tile read once for all of them)",
            required=False,
            default=False,
        ),
    ),
    required=False,
)
"""A multi-core NPU: `count` copies of the MAC array, vector unit, DMA queues and local
SRAM described by the other tables, sharing the system memories."""

SECTIONS: tuple[Section, ...] = (
    Section(
        "target",
        "what the target is called",
        (
            Field("name", "name", "string", "the target's name"),
            Field("description", "description", "string", "one line about the target"),
        ),
    ),
    CORES,
    Section(
        "mac_array",
        "the multiply-accumulate array",
        (
            Field("rows", "rows", "int", "rows of int8 MACs", minimum=1, maximum=4096),
            Field("columns", "columns", "int", "columns of int8 MACs", minimum=1, maximum=4096),
            Field(
                "clock_mhz",
                "clock_hz",
                "number",
                "the NPU clock",
                unit="MHz",
                scale=MEGA,
                minimum=0,
                exclusive_minimum=True,
                floor=1,
                maximum=10_000,
            ),
            Field(
                "output_block",
                "output_block",
                "ints",
                "an array of micro-blocks (Ethos-U): the rows, columns and channels of the "
                "outputs one micro-block computes; omit for a plain rows x columns array",
                minimum=1,
                maximum=4096,
                required=False,
                default=(),
            ),
            Field(
                "input_block_depth",
                "input_block_depth",
                "int",
                "input channels a micro-block takes per kernel tap in one step",
                minimum=1,
                maximum=4096,
                required=False,
                required_when="output_block",
            ),
            Field(
                "weight_bytes_per_cycle",
                "weight_bytes_per_cycle",
                "number",
                "weights the decoder feeds the array per cycle: a step of a micro-block "
                "column takes at least its weights' time",
                unit="bytes",
                minimum=0,
                exclusive_minimum=True,
                maximum=65536,
                required=False,
                required_when="output_block",
            ),
            Field(
                "taps_per_step",
                "taps_per_step",
                "int",
                "kernel taps a step takes when it packs taps: a depthwise conv's, and a "
                "conv's over few input channels (input_block_depth / taps_per_step of them)",
                minimum=1,
                maximum=4096,
                required=False,
                required_when="output_block",
            ),
            Field(
                "output_elements_per_cycle",
                "output_elements_per_cycle",
                "number",
                "elements the output stage (bias, requantize, activation) writes a cycle",
                minimum=0,
                exclusive_minimum=True,
                maximum=65536,
                required=False,
                required_when="output_block",
            ),
            Field(
                "weight_stream",
                "weight_stream",
                "bool",
                "the array fetches its weights on a DMA channel of its own (Ethos-U's "
                "weight stream): weight loads run on the `dma_weights` queue, beside the "
                "loads of activations on `dma_in`",
                required=False,
                default=False,
            ),
        ),
    ),
    Section(
        "data_types",
        "the element types the NPU computes in",
        (
            Field("int8", "int8", "bool", "int8 tensors (must be true: irc compiles to int8)"),
            Field("int16", "int16", "bool", "int16 tensors (16-bit activations, 8-bit weights)"),
            Field("fp16", "fp16", "bool", "float16 tensors"),
            Field(
                "int16_cycles",
                "int16_cycles",
                "int",
                "cycles a MAC-array or vector pass over 16-bit activations takes per 8-bit one",
                minimum=1,
                maximum=8,
                required=False,
                required_when="int16",
            ),
            Field(
                "int16_accumulator_bits",
                "int16_accumulator_bits",
                "int",
                "bits of the accumulator of a MAC layer with 16-bit activations (its sums "
                "and bias); 48 or more holds every layer irc's 48-bit reference allows",
                minimum=32,
                maximum=64,
                required=False,
                required_when="int16",
            ),
        ),
    ),
    PLACEMENT,
    Section(
        "vector_unit",
        "the unit for elementwise ops, pooling and requantization",
        (
            Field(
                "lanes",
                "lanes",
                "int",
                "elementwise int8 operations per cycle",
                minimum=1,
                maximum=65536,
            ),
        ),
    ),
    Section(
        "lut",
        "the lookup table for activations such as sigmoid and tanh",
        (
            Field("supported", "supported", "bool", "whether the NPU has a lookup table"),
            Field(
                "entries",
                "entries",
                "int",
                "entries of the table",
                minimum=256,
                maximum=65536,
                power_of_two=True,
                required=False,
                required_when="supported",
            ),
        ),
    ),
    Section(
        "host",
        "the host CPU that runs fallback ops",
        (
            Field(
                "gmacs_per_s",
                "macs_per_second",
                "number",
                "multiply-accumulates per second",
                unit="10^9 MAC/s",
                scale=GIGA,
                minimum=0,
                exclusive_minimum=True,
                floor=0.001,
                maximum=1_000_000,
            ),
            Field(
                "gelements_per_s",
                "elements_per_second",
                "number",
                "elementwise operations per second",
                unit="10^9 elements/s",
                scale=GIGA,
                minimum=0,
                exclusive_minimum=True,
                floor=0.001,
                maximum=1_000_000,
            ),
            Field(
                "transition_us",
                "transition_seconds",
                "number",
                "synchronisation cost of one NPU<->CPU transition",
                unit="µs",
                scale=MICRO,
                minimum=0,
                maximum=1_000_000,
            ),
            Field(
                "bandwidth_gb_per_s",
                "bandwidth_bytes_per_second",
                "number",
                "copies between host and NPU memory",
                unit="GB/s",
                scale=GIGA,
                minimum=0,
                exclusive_minimum=True,
                floor=0.001,
                maximum=10_000,
            ),
        ),
    ),
)
"""The hardware tables, in the order a target file and `irc-target show` write them
(the `[memories.<name>]` tables come before `[placement]`)."""

SECTION_BY_NAME = {section.name: section for section in SECTIONS}


OPS_TABLE = "ops"
"""The support table: `[ops]` (limits of every op) and one `[ops.<name>]` per nn op."""


# --------------------------------------------------------------------------------------
# Limits: the keys of [ops.<name>]


LimitKind = Literal[
    "count", "size", "ints", "choice", "choices", "flag", "number", "numbers", "perms"
]
"""count: positive integer; size: non-negative integer; ints: list of integers; choice:
one string; choices: list of strings; flag: boolean; number: positive number;
numbers: list of positive numbers; perms: list of permutations."""


@dataclass(frozen=True)
class Limit:
    """One limit of the support table (`max_kernel`, `strides`, ...)."""

    key: str
    kind: LimitKind
    help: str
    """What the limit restricts, for docs/targets.md and `irc-target`."""
    minimum: float = 1
    maximum: float = (1 << 31) - 1
    choices: tuple[str, ...] = ()
    allow_empty: bool = False
    """An empty list means something (no fused activation) rather than nothing runs."""


ACTIVATION_KINDS = ("relu", "clip", "leaky_relu", "hard_swish", "sigmoid")
"""The fused activations of nn ops (irc.dialects.nn.ACTIVATIONS)."""

LAYOUTS = ("nchw", "nhwc")
PAD_MODES = ("constant", "reflect", "edge", "wrap")
RESIZE_MODES = ("nearest", "linear", "cubic")
RESIZE_COORDINATE_MODES = (
    "half_pixel",
    "half_pixel_symmetric",
    "pytorch_half_pixel",
    "align_corners",
    "asymmetric",
)
"""nn.resize's coordinate transformation modes (tf_crop_and_resize needs regions of
interest, which nn.resize does not take)."""
RESIZE_NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
DEPTH_TO_SPACE_MODES = ("DCR", "CRD")
GROUPS = ("none", "depthwise", "any")

LIMITS: tuple[Limit, ...] = (
    Limit(
        "max_rank",
        "count",
        "largest rank of any operand or result (also allowed in [ops], for every op)",
        maximum=16,
    ),
    Limit(
        "max_dimension",
        "count",
        "largest size of any dimension of any operand or result (also allowed in [ops])",
    ),
    Limit(
        "layouts",
        "choices",
        "data layouts the op may use (its `layout` property)",
        choices=LAYOUTS,
    ),
    Limit(
        "spatial_dims",
        "ints",
        "numbers of spatial axes supported (1 for 1-D, 2 for 2-D, 3 for 3-D ops)",
        maximum=3,
    ),
    Limit(
        "max_batch",
        "count",
        "largest batch: the first axis of a spatial op or resize; the product of the "
        "batch axes of a matmul",
    ),
    Limit("max_kernel", "count", "largest kernel size along each spatial axis", maximum=65536),
    Limit(
        "max_dilated_kernel",
        "count",
        "largest extent of the dilated kernel, (k - 1) * dilation + 1, along each spatial axis",
        maximum=65536,
    ),
    Limit(
        "max_kernel_elements",
        "count",
        "largest product of the dilated kernel's extents over the spatial axes",
    ),
    Limit(
        "max_padded_kernel",
        "count",
        "largest kernel size along each spatial axis when the op pads",
        maximum=65536,
    ),
    Limit("strides", "ints", "allowed stride values (each spatial axis)", maximum=1024),
    Limit("dilations", "ints", "allowed dilation values (each spatial axis)", maximum=1024),
    Limit(
        "max_padding",
        "size",
        "largest padding on any side of any axis",
        minimum=0,
        maximum=65536,
    ),
    Limit("max_input_channels", "count", "largest number of input channels"),
    Limit("max_output_channels", "count", "largest number of output channels"),
    Limit(
        "groups",
        "choice",
        "grouped convolutions: `none` (group 1 only), `depthwise` (group 1, or group = "
        "input channels = output channels), `any`",
        choices=GROUPS,
    ),
    Limit(
        "activations",
        "choices",
        "activations the op may have fused (`activation` property); [] for none",
        choices=ACTIVATION_KINDS,
        allow_empty=True,
    ),
    Limit(
        "constant_weights",
        "flag",
        "true: the weights (second operand) must be a constant (default false)",
    ),
    Limit("max_m", "count", "largest M (rows of the result) of a matrix product"),
    Limit("max_k", "count", "largest K (the reduced dimension) of a matrix product"),
    Limit("max_n", "count", "largest N (columns of the result) of a matrix product"),
    Limit(
        "supports_transposed_lhs",
        "flag",
        "false: a gemm with trans_a = true is not supported (default true)",
    ),
    Limit(
        "supports_ceil_mode",
        "flag",
        "false: pooling with ceil_mode = true is not supported (default true)",
    ),
    Limit(
        "supports_count_include_pad",
        "flag",
        "false: a padded average pool with count_include_pad = true is not supported "
        "(default true)",
    ),
    Limit(
        "supports_broadcast",
        "flag",
        "false: operands of different shapes (broadcasting) are not supported (default true)",
    ),
    Limit("max_inputs", "count", "largest number of operands"),
    Limit(
        "needs_lut",
        "flag",
        "true: the target evaluates the op with its lookup table, so it needs [lut] "
        "supported = true (default false)",
    ),
    Limit(
        "last_axis_only",
        "flag",
        "true: only along the last axis (default false)",
    ),
    Limit("max_axis_size", "count", "largest size of the axis the op works along"),
    Limit(
        "max_reduced_elements",
        "count",
        "largest number of input elements reduced into one output element",
    ),
    Limit("max_reduced_axes", "count", "largest number of reduced axes", maximum=16),
    Limit("max_outputs", "count", "largest number of results"),
    Limit(
        "steps",
        "ints",
        "allowed step values (each sliced axis; negative steps slice backwards)",
        minimum=-1024,
        maximum=1024,
    ),
    Limit(
        "perms",
        "perms",
        "allowed permutations, each a list of axes (`[0, 2, 3, 1]`)",
        maximum=16,
    ),
    Limit("modes", "choices", "allowed values of the op's `mode` property"),
    Limit(
        "coordinate_transformation_modes",
        "choices",
        "allowed coordinate transformation modes",
        choices=RESIZE_COORDINATE_MODES,
    ),
    Limit(
        "nearest_modes",
        "choices",
        "allowed rounding modes of nearest resizing",
        choices=RESIZE_NEAREST_MODES,
    ),
    Limit(
        "scales",
        "numbers",
        "allowed scale factors of the resized axes (axes with scale 1 are not resized)",
        minimum=0,
        maximum=1024,
    ),
    Limit(
        "min_scale", "number", "smallest scale factor of a resized axis", minimum=0, maximum=1024
    ),
    Limit("max_scale", "number", "largest scale factor of a resized axis", minimum=0, maximum=1024),
    Limit("blocksizes", "ints", "allowed block sizes", maximum=64),
)
"""Every limit, in the order `irc-target show` writes them and support.py checks them."""

LIMIT_BY_KEY = {limit.key: limit for limit in LIMITS}

MODE_CHOICES: dict[str, tuple[str, ...]] = {
    "pad": PAD_MODES,
    "resize": RESIZE_MODES,
    "depth_to_space": DEPTH_TO_SPACE_MODES,
}
"""The values of `modes` per op (the op's `mode` property)."""

GENERAL_LIMITS = ("max_rank", "max_dimension")
"""Limits of every op; also allowed directly in [ops], for every op at once."""


def _limits(*groups: tuple[str, ...]) -> tuple[str, ...]:
    keys = [key for group in (GENERAL_LIMITS, *groups) for key in group]
    return tuple(limit.key for limit in LIMITS if limit.key in keys)


_SPATIAL = ("layouts", "spatial_dims", "max_batch")
_WINDOW = (
    "max_kernel",
    "max_dilated_kernel",
    "max_kernel_elements",
    "max_padded_kernel",
    "strides",
    "dilations",
    "max_padding",
)
_CONV = (
    *_SPATIAL,
    *_WINDOW,
    "max_input_channels",
    "max_output_channels",
    "groups",
    "activations",
    "constant_weights",
)
_POOL = (*_SPATIAL, *_WINDOW, "supports_ceil_mode")
_MATRIX = ("max_m", "max_k", "max_n", "activations", "constant_weights")
_BROADCAST = ("supports_broadcast",)
_UNARY = ("needs_lut",)

UNARY_OPS = (
    "abs",
    "ceil",
    "celu",
    "clip",
    "elu",
    "erf",
    "exp",
    "floor",
    "gelu",
    "hard_sigmoid",
    "hard_swish",
    "leaky_relu",
    "log",
    "mish",
    "neg",
    "reciprocal",
    "relu",
    "selu",
    "sigmoid",
    "softplus",
    "softsign",
    "sqrt",
    "tanh",
)
BINARY_OPS = (
    "div",
    "equal",
    "greater",
    "greater_or_equal",
    "less",
    "less_or_equal",
    "mod",
    "mul",
    "prelu",
    "sub",
    "where",
)
PLAIN_OPS = (
    "cast",
    "constant_of_shape",
    "cumsum",
    "dropout",
    "expand",
    "flatten",
    "gather",
    "identity",
    "reshape",
    "shape",
    "squeeze",
    "tile",
    "trilu",
    "unsqueeze",
)
"""Ops with no limits beyond the general ones."""

OP_LIMITS: dict[str, tuple[str, ...]] = {
    **{op: _limits(_UNARY) for op in UNARY_OPS},
    **{op: _limits(_BROADCAST) for op in BINARY_OPS},
    **{op: _limits() for op in PLAIN_OPS},
    "add": _limits(_BROADCAST, ("activations",)),
    "pow": _limits(_BROADCAST, _UNARY),
    "sum": _limits(_BROADCAST, ("max_inputs",)),
    "max": _limits(_BROADCAST, ("max_inputs",)),
    "min": _limits(_BROADCAST, ("max_inputs",)),
    "conv": _limits(_CONV),
    "conv_transpose": _limits(_CONV),
    "gemm": _limits(_MATRIX, ("supports_transposed_lhs",)),
    "matmul": _limits(_MATRIX, ("max_batch",)),
    "max_pool": _limits(_POOL),
    "average_pool": _limits(_POOL, ("supports_count_include_pad",)),
    "global_average_pool": _limits(_SPATIAL, ("max_reduced_elements",)),
    "global_max_pool": _limits(_SPATIAL, ("max_reduced_elements",)),
    "batch_norm": _limits(_SPATIAL),
    "instance_norm": _limits(_SPATIAL, _UNARY),
    "lrn": _limits(_SPATIAL, _UNARY),
    "layer_norm": _limits(_UNARY),
    "softmax": _limits(_UNARY, ("last_axis_only", "max_axis_size")),
    "log_softmax": _limits(_UNARY, ("last_axis_only", "max_axis_size")),
    "masked_softmax": _limits(_UNARY, ("max_axis_size",)),
    "reduce_max": _limits(("max_reduced_elements", "max_reduced_axes")),
    "reduce_mean": _limits(("max_reduced_elements", "max_reduced_axes")),
    "reduce_min": _limits(("max_reduced_elements", "max_reduced_axes")),
    "reduce_sum": _limits(("max_reduced_elements", "max_reduced_axes")),
    "concat": _limits(("max_inputs",)),
    "split": _limits(("max_outputs",)),
    "slice": _limits(("steps",)),
    "transpose": _limits(("perms",)),
    "pad": _limits(("modes", "max_padding")),
    "resize": _limits(
        (
            "modes",
            "coordinate_transformation_modes",
            "nearest_modes",
            "scales",
            "min_scale",
            "max_scale",
            "max_batch",
        )
    ),
    "depth_to_space": _limits(("layouts", "max_batch", "blocksizes", "modes")),
    "requantize": _limits(),
    "quantize": _limits(),
    "dequantize": _limits(),
}
"""Every kind of op a support table may list, with the limits it may have: every nn op
(name without `nn.`) but nn.constant, and the kinds only the integer level has
(`INTEGER_KINDS`)."""

INTEGER_KINDS = ("requantize",)
"""Kinds with no `nn` op: `qnn.requantize`, a rescale from one quantized type to
another (TOSA's RESCALE, TFLite's QUANTIZE of an int8 tensor), which lower-to-qnn
makes where scales differ."""

CAST_KINDS = {"quantize": "quant.qcast", "dequantize": "quant.dcast"}
"""Kinds of the `quant` casts: a float model's input quantized and its output
dequantized on the NPU (TFLite's QUANTIZE of a float tensor and DEQUANTIZE)."""


def kind_label(kind: str) -> str:
    """The op a kind is written as: `nn.conv`, `qnn.requantize` or `quant.qcast`."""
    if kind in CAST_KINDS:
        return CAST_KINDS[kind]
    return f"qnn.{kind}" if kind in INTEGER_KINDS else f"nn.{kind}"


DATA_OPS = ("constant",)
"""nn ops that are data, not computation: always supported, never in the table."""


def limit_choices(op: str, limit: Limit) -> tuple[str, ...]:
    """The allowed strings of a `choice`/`choices` limit of `op`."""
    if limit.key == "modes":
        return MODE_CHOICES[op]
    return limit.choices


def ops_with_limit(key: str) -> list[str]:
    """The ops that may have the limit `key`, sorted."""
    return sorted(op for op, keys in OP_LIMITS.items() if key in keys)
