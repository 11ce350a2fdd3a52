"""Cascades: layers run stripe by stripe through rolling SRAM buffers.

Tiled one at a time, every layer writes its output to a system memory and the next
reads it back. A **cascade** runs a run of layers (convolutions, depthwise, pooling,
elementwise ops, each but the first reading an earlier one, each but the last read
only by later ones: a chain, a residual block, several blocks) stripe by stripe:
each stripe computes the next rows of the last member's output, and before them the
rows of every earlier member those rows read. An intermediate tensor lives in a
**rolling buffer** in the local SRAM, holding only the rows its readers still need
(`tile.copy`'s `source_rolling` and `dest_rolling`), so only the cascade's inputs,
the skip inputs of its elementwise members, its weights and its output cross the
system memories. As Vela's cascade builder (`cascade_builder.py`) and the fused-layer
CNN accelerators (Alwani et al., MICRO 2016).

This module is the planning: the rows each member computes in each stripe
(`schedule`), the rows each rolling buffer needs (`rolling_rows`), the members' tiles
and the cascade's SRAM layout under the target's SRAM and its cost in the planner's
model (`plan_cascade`), and which cascades to form among a function's layers
(`choose`, by cost; `force`, for tests): a cascade is formed only where it is faster
than its layers apart, with the traffic of their intermediate tensors (each layer's
plan). `plan-tiles` records the choice on the ops (`irc.cascade`), `plan-ddr` gives
the intermediate tensors no buffer (irc/tiling/memory.py), and `lower-to-tile` emits
the stripe loop (irc/tiling/lowering.py, `CascadeEmission`). docs/tiling.md,
"Cascades", describes it all.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from itertools import product
from typing import TYPE_CHECKING

from irc.targets.model import SCRATCH
from irc.tiling.planner import (
    CYCLE_TOLERANCE,
    Layer,
    LayerModel,
    Plan,
    Tile,
    clamp_tile,
    plan_tile,
    sram_layout,
)

if TYPE_CHECKING:
    from irc.targets import Target

CASCADE_ATTR = "irc.cascade"
"""The op attribute of a cascade's member: its cascade (`group`), its place (`index`
of `members`), the `stripe` height, its row `window` (output rows, input rows, kernel,
stride, dilation, top padding), the members it `reads` and, but for the last member,
`rolling` = [SRAM offset, rows] of its output's rolling buffer."""

MAX_MEMBERS = 12
"""The longest cascade considered (the search is quadratic in a chain's length)."""


@dataclass(frozen=True)
class Rows:
    """How a layer's output rows read its input rows (a window along the rows)."""

    out_h: int
    in_h: int
    kernel: int = 1
    stride: int = 1
    dilation: int = 1
    pad_top: int = 0

    def first(self, out_row: int) -> int:
        """The first stored input row that output row `out_row` reads."""
        return max(0, out_row * self.stride - self.pad_top)

    def end(self, out_end: int) -> int:
        """The stored input rows outputs [0, out_end) read are [0, end)."""
        if out_end <= 0:
            return 0
        reach = (out_end - 1) * self.stride - self.pad_top + (self.kernel - 1) * self.dilation
        return max(0, min(self.in_h, reach + 1))

    def box(self, count: int) -> int:
        """Input rows (padding included) a box of `count` output rows spans."""
        return (count - 1) * self.stride + (self.kernel - 1) * self.dilation + 1


@dataclass(frozen=True)
class Member:
    """A layer that may join a cascade: its planner model, rows and plan apart."""

    layer: Layer
    rows: Rows
    width: int
    """Output columns."""
    channels: int
    """Output channels."""
    plan: Plan
    """Its plan as a layer of its own (the comparison)."""

    @cached_property
    def shape(self) -> Layer:
        """Its layer without its name: what its cost depends on (cost models are
        remembered by it)."""
        return replace(self.layer, name="")

    @property
    def flat(self) -> bool:
        """The planner sees it as rows of pixels (an elementwise op)."""
        return self.layer.kind == "elementwise"

    def tile_rows(self, rows: int) -> int:
        """A tile's `rows` for `rows` output rows of whole width."""
        return rows * self.width if self.flat else rows


Schedule = tuple[tuple[tuple[int, int], ...], ...]
"""Per stripe, per member: (first output row, rows) it computes in that stripe."""


Sources = tuple[tuple[int, ...], ...]
"""Per member: the earlier members whose outputs it reads (through its window, `rows`)."""


def chain_sources(count: int) -> Sources:
    """The sources of a plain chain: each member reads the one before."""
    return tuple(() if index == 0 else (index - 1,) for index in range(count))


def _consumers(sources: Sequence[Sequence[int]]) -> list[list[int]]:
    """For each member (or candidate), the later ones that read it."""
    consumers: list[list[int]] = [[] for _ in sources]
    for member, read in enumerate(sources):
        for source in read:
            consumers[source].append(member)
    return consumers


def schedule(
    rows: Sequence[Rows],
    stripe: int,
    sources: Sources | None = None,
    span: tuple[int, int] | None = None,
) -> Schedule:
    """Each member's rows in each stripe of `stripe` rows of the last member's output
    (of its rows [first, end) = `span`: one core's share, `core_spans`; all of them by
    default): every member computes, as late as it can, the rows its readers' stripes
    read, from the first row they read on (a core's share recomputes the rows it
    reads that the share before also computes)."""
    sources = sources or chain_sources(len(rows))
    consumers = _consumers(sources)
    first, last = span if span is not None else (0, rows[-1].out_h)
    done = [0] * len(rows)
    done[-1] = first
    for member in range(len(rows) - 2, -1, -1):
        done[member] = min(rows[reader].first(done[reader]) for reader in consumers[member])
    stripes: list[tuple[tuple[int, int], ...]] = []
    for index in range(-(-(last - first) // stripe)):
        ends = [0] * len(rows)
        ends[-1] = min(last, first + (index + 1) * stripe)
        for member in range(len(rows) - 2, -1, -1):
            needed = max(rows[reader].end(ends[reader]) for reader in consumers[member])
            ends[member] = max(done[member], needed)
        stripes.append(tuple((start, end - start) for start, end in zip(done, ends)))
        done = ends
    return tuple(stripes)


def core_spans(rows: int, stripe: int, cores: int) -> list[tuple[int, int]]:
    """Each core's share of a cascade's `rows` output rows in stripes of `stripe`: runs
    of whole stripes, the larger first, on at most one core a stripe."""
    stripes = -(-rows // stripe)
    used = min(cores, stripes)
    spans, start = [], 0
    for core in range(used):
        end = min(rows, start + (stripes // used + (core < stripes % used)) * stripe)
        spans.append((start, end))
        start = end
    return spans


def rolling_rows(
    rows: Sequence[Rows], stripes: Schedule, sources: Sources | None = None
) -> list[int]:
    """Rows of each intermediate tensor's rolling buffer: the most rows live at once,
    from the first row any of its readers still needs (from the first row of its
    next rows on) to the last its producer has written (a row is overwritten only
    once no later stripe reads it), and at least the rows its producer writes in one
    stripe."""
    sources = sources or chain_sources(len(rows))
    consumers = _consumers(sources)
    needed = [1] * (len(rows) - 1)
    for stripe in stripes:
        for member in range(len(rows) - 1):
            start, count = stripe[member]
            lowest = min(rows[reader].first(stripe[reader][0]) for reader in consumers[member])
            # The rows live, and at least the rows written at once (a strided reader
            # skips some of them: they are overwritten at once).
            needed[member] = max(needed[member], start + count - lowest, count)
    return [min(n, r.out_h) for n, r in zip(needed, rows)]


@dataclass(frozen=True)
class Run:
    """Consecutive stripes that one loop computes: the same rows per member, each
    member's first row moving by a constant step."""

    first: int
    """The first stripe."""
    length: int
    steps: tuple[int, ...]
    """Per member: how far its first row moves from one stripe to the next."""


def runs(stripes: Schedule) -> list[Run]:
    """The stripes grouped into loops (a stripe of its own when it differs)."""
    result: list[Run] = []
    index = 0
    while index < len(stripes):
        end = index + 1
        steps = tuple(count for _, count in stripes[index])
        if end < len(stripes) and _counts(stripes[end]) == _counts(stripes[index]):
            steps = tuple(b[0] - a[0] for a, b in zip(stripes[index], stripes[end]))
            while (
                end < len(stripes)
                and _counts(stripes[end]) == _counts(stripes[index])
                and tuple(b[0] - a[0] for a, b in zip(stripes[end - 1], stripes[end])) == steps
            ):
                end += 1
        result.append(Run(index, end - index, steps))
        index = end
    return result


def _counts(stripe: tuple[tuple[int, int], ...]) -> tuple[int, ...]:
    return tuple(count for _, count in stripe)


@dataclass(frozen=True)
class CascadePlan:
    """A chain of members run stripe by stripe, and what the model counts for it."""

    members: tuple[Member, ...]
    sources: Sources
    stripe: int
    """Output rows of the last member per stripe."""
    stripes: Schedule
    rolling: tuple[tuple[int, int], ...]
    """Per intermediate tensor: its rolling buffer's SRAM offset and rows."""
    tiles: tuple[tuple[Tile, bool, str], ...]
    """Each member's tile in the cascade (rows: the most it computes in a stripe;
    whole columns), whether it is double buffered, its loop order."""
    sram_bytes: int
    cycles: int
    ddr_read: int
    ddr_written: int
    compute_cycles: int

    @property
    def separate_cycles(self) -> int:
        """The members' cycles as layers of their own."""
        return sum(member.plan.cycles for member in self.members)

    @property
    def separate_bytes(self) -> int:
        """The members' system-memory traffic as layers of their own."""
        return sum(m.plan.ddr_read + m.plan.ddr_written for m in self.members)

    def member_plans(self, target: Target) -> tuple[Plan, ...]:
        """Each member's plan in the cascade: its tile, buffering and loop order, and
        its buffers' SRAM offsets, after the rolling buffers."""
        cursor = sum(
            _align(rows * m.width * m.channels * m.layer.out_bytes, target.scratch.alignment_bytes)
            for (_, rows), m in zip(self.rolling, self.members)
        )
        plans: list[Plan] = []
        for member, (tile, double, order) in zip(self.members, self.tiles):
            plan = _member_plan(member, tile, double, target, cursor)
            plans.append(replace(plan, order="weights" if order == "weights" else "input"))
            cursor += plan.sram_bytes
        return tuple(plans)

    lower_bound: int = 0
    """The larger of the members' compute at the ideal rate and the cascade's
    compulsory traffic through the busiest port: its inputs from memory read once,
    every weight once, its output written once (not the members' own bounds, whose
    sum counts the intermediate tensors it keeps on chip)."""
    cores: int = 1
    """The cores the cascade runs on: each runs its share of the stripes
    (`core_spans`) with rolling buffers of its own."""


def _options(member: Member, rows: int, target: Target) -> list[tuple[Tile, bool]]:
    """A member's tiles in a cascade, best first: `rows` rows of whole columns, all
    output channels and the whole depth (its weights stay in SRAM across the
    stripes); then half or a quarter of the columns (the weights still stay); then
    fewer channels, then less depth; each double buffered, then the same single
    buffered."""
    layer = member.layer
    granule = target.mac_array.columns if layer.engine == "mac" else target.vector_unit.lanes
    depth = _model(member.shape, target).full_depth
    # No tile narrower than the array (or the vector unit): each would be a command of
    # its own in every stripe.
    channels = _halvings(layer.out_c, granule)
    if layer.whole_channels:
        channels = [layer.out_c]
    rows_granule = target.mac_array.rows
    depths = _halvings(depth, rows_granule)
    # Narrower tiles of all the channels keep the weights in SRAM with a smaller
    # accumulator; they come before fewer channels.
    columns = [layer.out_w] if member.flat else _halvings(layer.out_w, 1)[:3]
    tiles = dict.fromkeys(
        clamp_tile(Tile(member.tile_rows(rows), w, c, k), layer, depth)
        for k in depths
        for c in channels
        for w in columns
        if (k == depth or c == layer.out_c) and (w == layer.out_w or c == layer.out_c)
    )
    return [(tile, double) for double in (True, False) for tile in tiles]


def _halvings(total: int, granule: int) -> list[int]:
    """Channel (or depth) tiles of a member: the whole, then halves, quarters, ...
    rounded up to the array's granule, down to one granule."""
    sizes = [total]
    pieces = 2
    while pieces <= total and -(-total // pieces) >= granule:
        share = -(-total // pieces)
        size = min(total, -(-share // granule) * granule)
        if size < sizes[-1]:
            sizes.append(size)
        pieces *= 2
    if granule < sizes[-1]:
        sizes.append(granule)
    return sizes


def resident(layer: Layer, tile: Tile, target: Target) -> bool:
    """A member's weights stay in SRAM for the whole cascade: its tile holds all its
    output channels and their whole depth (loaded once, one copy)."""
    return (
        layer.has_weights
        and tile.channels >= layer.out_c
        and tile.depth >= _model(layer, target).full_depth
    )


def _member_plan(member: Member, tile: Tile, double: bool, target: Target, start: int) -> Plan:
    """A member's plan in a cascade, its buffers packed from `start`: double-buffered
    inputs and outputs, but one copy of weights and parameters that stay in SRAM."""
    plan = plan_tile(member.layer, target, tile, double)
    if double and resident(member.layer, plan.tile, target):
        buffers = dict(plan.buffers)
        for name in ("weights", "parameters"):
            buffers[name] //= 2
        once = ("weights", "parameters")
        offsets = sram_layout(replace(plan, buffers=buffers), target, start, once)
        return replace(
            plan, buffers=buffers, sram_bytes=sum(buffers.values()), sram_offsets=offsets
        )
    return replace(plan, sram_offsets=sram_layout(plan, target, start=start))


def _member_size(member: Member, tile: Tile, double: bool, target: Target) -> int:
    """The SRAM bytes of a member's buffers in a cascade (`_member_plan`'s)."""
    return _size_of(member.shape, tile, double, target)


@lru_cache(maxsize=16384)
def _size_of(layer: Layer, tile: Tile, double: bool, target: Target) -> int:
    buffers = _model(layer, target).buffers(tile, double)
    if double and resident(layer, tile, target):
        return sum(
            size // 2 if name in ("weights", "parameters") else size
            for name, size in buffers.items()
        )
    return sum(buffers.values())


@lru_cache(maxsize=4096)
def _model(layer: Layer, target: Target) -> LayerModel:
    """The cost model of a stripe's layer (remembered: its figures are reused across
    the stripe heights and tiles a search tries)."""
    return LayerModel(layer, target)


def _stripe_model(
    member: Member, rows: int, chained: tuple[int, bool], target: Target
) -> LayerModel:
    """The cost model of one stripe of `rows` output rows of a member that reads
    `chained[0]` of its inputs from rolling buffers in the local SRAM and writes its
    output to one if `chained[1]`. An elementwise member's other inputs come from their
    memory (the chained ones are local copies, which `_part` adds)."""
    return _stripe_model_of(member.shape, member.rows, member.width, rows, chained, target)


@lru_cache(maxsize=8192)
def _stripe_model_of(
    layer: Layer, window: Rows, width: int, rows: int, chained: tuple[int, bool], target: Target
) -> LayerModel:
    # Where its tensors live ("" in a layer: the slowest memory of activations).
    own_in = layer.in_memory or target.placement.activations[-1]
    own_out = layer.out_memory or own_in
    in_memory = SCRATCH if chained[0] else own_in
    out_memory = SCRATCH if chained[1] else own_out
    if layer.kind == "elementwise":
        pixels = rows * width
        stripe_layer = replace(
            layer, in_h=pixels, out_h=pixels, in_memory=in_memory, out_memory=out_memory
        )
    else:
        stripe_layer = replace(
            layer,
            in_h=window.box(rows),
            out_h=rows,
            pads=(0, layer.pads[1], 0, layer.pads[3]),
            in_memory=in_memory,
            out_memory=out_memory,
        )
    if chained[0] and layer.inputs > chained[0]:
        stripe_layer = replace(
            stripe_layer, inputs=layer.inputs - chained[0], reads=layer.vector_reads,
            in_memory=own_in,
        )  # fmt: skip
    return LayerModel(stripe_layer, target)


@dataclass(frozen=True)
class _Part:
    """What one member adds to a cascade's time and traffic."""

    compute: int
    load: int
    weight_load: int
    """On the weight stream, of a target with one (`LayerModel.weight_stream`)."""
    store: int
    ports: tuple[tuple[str, int], ...]
    read: int
    written: int
    double: bool
    first: int
    """The loads before its first stripe can start (the first member's)."""
    last: int
    """Its last store (the last member's)."""

    @property
    def time(self) -> int:
        """Its own time: overlapped when double buffered, else taking turns."""
        if self.double:
            return max(
                self.compute, self.load, self.weight_load, self.store, *(c for _, c in self.ports)
            )
        return self.compute + self.load + self.weight_load + self.store


def _part(
    member: Member,
    position: tuple[int, int, int],
    tile: Tile,
    double: bool,
    order: str,
    stripes: Schedule,
    target: Target,
) -> _Part:
    """A member's part of a cascade (`position`: its index, the last index, and how
    many of its inputs are other members'): its stripes costed by the layer model, an
    intermediate read from or written to the local SRAM, weights that stay in SRAM
    loaded once."""
    index, last_index, reads = position
    counts = Counter(stripe[index][1] for stripe in stripes if stripe[index][1])
    return _part_of(
        member.shape, member.rows, member.width,
        (index == 0, index == last_index, reads),
        tile, double, order,
        tuple(sorted(counts.items())), stripes[0][index][1], stripes[-1][index][1],
        target,
    )  # fmt: skip


@lru_cache(maxsize=16384)
def _part_of(
    layer: Layer,
    window: Rows,
    width: int,
    place: tuple[bool, bool, int],
    tile: Tile,
    double: bool,
    order: str,
    counts: tuple[tuple[int, int], ...],
    first_rows: int,
    last_rows: int,
    target: Target,
) -> _Part:
    """`_part` of a member by what it depends on (remembered: the cascades a search
    tries share members in the same places, with the same stripes)."""
    is_first, is_last, reads = place
    chained = (reads, not is_last)

    def model_of(rows: int) -> LayerModel:
        return _stripe_model_of(layer, window, width, rows, chained, target)

    def tile_rows(rows: int) -> int:
        return rows * width if layer.kind == "elementwise" else rows

    compute = load = weight_load = store = read = written = 0
    ports: dict[str, int] = {}
    for rows, times in counts:
        model = model_of(rows)
        cost = model.cost(replace(tile, rows=tile_rows(rows)), order)
        compute += times * cost.compute
        load += times * cost.load
        weight_load += times * cost.weight_load
        store += times * cost.store
        read += times * cost.read
        written += times * cost.written
        for port, cycles in cost.ports.items():
            ports[port] = ports.get(port, 0) + times * cycles
        if chained[0] and layer.inputs > chained[0]:
            local = chained[0] * rows * width * tile.channels * layer.in_bytes
            load += times * math.ceil(local / target.scratch.burst_bytes)
    model = model_of(first_rows or 1)
    weights = model.weight_dma(tile.channels, tile.depth) if layer.has_weights else (0, 0)
    active = sum(times for _, times in counts)
    if resident(layer, tile, target) and active > 1:
        # Its weights stay in SRAM: loaded once, before the first stripe.
        if model.weight_stream:
            weight_load -= (active - 1) * weights[0]
        else:
            load -= (active - 1) * weights[0]
        read -= (active - 1) * weights[1]
        ports[model.weight_memory.port] -= (active - 1) * weights[0]
    first = last = 0
    if is_first:
        channels = model.input_channels(tile)
        loads = (weights[0], model.input_dma(tile_rows(first_rows), width, channels)[0])
        first = max(loads) if model.weight_stream else sum(loads)
    if is_last:
        model = model_of(last_rows)
        last = model.output_dma(tile_rows(last_rows), width, tile.channels)[0]
    return _Part(
        compute, load, weight_load, store, tuple(sorted(ports.items())),
        read, written, double, first, last,
    )  # fmt: skip


def _total(per_core: Sequence[Sequence[_Part]], latency: int = 0) -> int:
    """A cascade's cycles from its members' parts on each core it runs on: the
    double-buffered members' loads, compute and stores overlap (one queue each, and
    each port's transfers taking turns: the cores share the ports), a single-buffered
    member's take turns with everything; plus the first stripe's loads and the last
    one's store, which nothing hides; on several cores, the busiest core's, and the
    `latency` of the signals to and from the cascade's neighbours."""
    ports: dict[str, int] = {}
    busiest = serial = edges = 0
    for parts in per_core:
        overlapped = [part for part in parts if part.double]
        for part in overlapped:
            for port, cycles in part.ports:
                ports[port] = ports.get(port, 0) + cycles
        busiest = max(
            busiest,
            sum(part.compute for part in overlapped),
            sum(part.load for part in overlapped),
            sum(part.weight_load for part in overlapped),
            sum(part.store for part in overlapped),
        )
        serial = max(serial, sum(part.time for part in parts if not part.double))
        edges = max(edges, sum(part.first + part.last for part in parts))
    across = 2 * latency if len(per_core) > 1 else 0
    return max([busiest, *ports.values()]) + serial + edges + across


def plan_cascade(
    members: Sequence[Member],
    target: Target,
    stripe: int,
    sources: Sources | None = None,
    cores: int = 1,
) -> CascadePlan | None:
    """The cascade of `members` in stripes of `stripe` rows, on `cores` cores (each its
    share of the stripes, `core_spans`), its tiles chosen to fit the SRAM beside the
    rolling buffers; None if nothing fits.

    Each member starts with its best option (`_options`); while the members need more
    SRAM than there is, the member whose next smaller option costs the fewest extra
    cycles per byte it saves takes it."""
    sources = sources or chain_sources(len(members))
    rows = [member.rows for member in members]
    spans = core_spans(rows[-1].out_h, stripe, cores)
    schedules = [schedule(rows, stripe, sources, span) for span in spans]
    stripes = tuple(stripe for core in schedules for stripe in core)
    rolling = [
        max(needed) for needed in zip(*(rolling_rows(rows, core, sources) for core in schedules))
    ]
    alignment = target.scratch.alignment_bytes
    rolling_bytes = [
        _align(r * m.width * m.channels * m.layer.out_bytes, alignment)
        for r, m in zip(rolling, members)
    ]
    budget = target.scratch.size_bytes - sum(rolling_bytes)
    if budget <= 0:
        return None
    last_index = len(members) - 1
    options: list[list[tuple[Tile, bool]]] = []
    sizes: list[list[int]] = []
    for index, member in enumerate(members):
        most = max(stripe[index][1] for stripe in stripes)
        fitting = [
            (option, size)
            for option in _options(member, most, target)
            if (size := _member_size(member, *option, target)) <= budget
        ]
        if not fitting:
            return None
        options.append([option for option, _ in fitting])
        sizes.append([size for _, size in fitting])
    parts: dict[tuple[int, int], tuple[tuple[_Part, ...], str]] = {}

    def part_of(index: int, option: int) -> tuple[tuple[_Part, ...], str]:
        """The member's part on each core with this option, in its better loop order
        (the faster, or of two as fast the one that moves fewer bytes)."""
        if (index, option) not in parts:
            member, (tile, double) = members[index], options[index][option]
            position = (index, last_index, len(sources[index]))
            orders = ("weights", "input") if member.layer.has_weights else ("input",)
            candidates = [
                (
                    tuple(
                        _part(member, position, tile, double, o, core, target) for core in schedules
                    ),
                    o,
                )
                for o in orders
            ]
            parts[index, option] = min(
                candidates, key=lambda candidate: (_time(candidate[0]), _moved(candidate[0]))
            )
        return parts[index, option]

    chosen = [0] * len(members)

    def step(index: int) -> tuple[tuple[float, float], int, int] | None:
        """The member's next option that needs less SRAM: (extra cycles, then extra
        bytes moved, per byte of SRAM saved; the member, the option)."""
        size = sizes[index][chosen[index]]
        for option in range(chosen[index] + 1, len(options[index])):
            if sizes[index][option] < size:
                now, then = part_of(index, chosen[index])[0], part_of(index, option)[0]
                saved = size - sizes[index][option]
                moved = _moved(then) - _moved(now)
                return ((_time(then) - _time(now)) / saved, moved / saved), index, option
        return None

    steps = [step(index) for index in range(len(members))]
    total = sum(sizes[index][0] for index in range(len(members)))
    while total > budget:
        candidates = [candidate for candidate in steps if candidate is not None]
        if not candidates:
            return None
        _, index, option = min(candidates)
        total += sizes[index][option] - sizes[index][chosen[index]]
        chosen[index] = option
        steps[index] = step(index)
    picked = [(*options[i][chosen[i]], *part_of(i, chosen[i])) for i in range(len(members))]
    per_core = [[part[core] for _, _, part, _ in picked] for core in range(len(schedules))]
    every = [part for core in per_core for part in core]
    offsets: list[tuple[int, int]] = []
    cursor = 0
    for r, size_bytes in zip(rolling[:last_index], rolling_bytes):
        offsets.append((cursor, r))
        cursor += size_bytes
    cursor += sum(sizes[index][chosen[index]] for index in range(len(members)))
    tiles = tuple((tile, double, order) for tile, double, _, order in picked)
    return CascadePlan(
        tuple(members), sources, stripe, stripes, tuple(offsets), tiles, cursor,
        _total(per_core, target.cores.sync_latency_cycles),
        sum(part.read for part in every), sum(part.written for part in every),
        sum(part.compute for part in every),
        cascade_bound(members, sources, target), len(schedules),
    )  # fmt: skip


def _time(parts: Sequence[_Part]) -> int:
    """A member's time on the cores it runs on (the busiest core's)."""
    return max(part.time for part in parts)


def _moved(parts: Sequence[_Part]) -> int:
    """The bytes a member moves on all its cores."""
    return sum(part.read + part.written for part in parts)


def splits_by_rows(members: Sequence[Member]) -> bool:
    """Whether a cascade may be split across cores by its output rows: every member
    computes rows from rows (none reduces all of them into one: a global pool)."""
    return all(member.rows.out_h > 1 for member in members)


def cascade_bound(members: Sequence[Member], sources: Sources, target: Target) -> int:
    """A cascade's lower bound (`CascadePlan.lower_bound`): its members' ideal compute
    over the rows they compute (a member computes only the rows its readers in the
    cascade read: a stride-2 reader of 1x1 skips a last odd row), or the compulsory
    traffic through the busiest port."""
    consumers = _consumers(sources)
    computed = [member.rows.out_h for member in members]
    for index in reversed(range(len(members))):
        if consumers[index]:
            computed[index] = max(
                members[reader].rows.end(computed[reader]) for reader in consumers[index]
            )
    compute = 0
    ports: dict[str, float] = {}
    for index, member in enumerate(members):
        model = _model(member.shape, target)
        compute += model.ideal_compute * computed[index] // member.rows.out_h
        external = member.layer.inputs - len(sources[index])
        for port, cycles in model.compulsory(external, index == len(members) - 1).items():
            ports[port] = ports.get(port, 0.0) + cycles
    return max(compute, math.ceil(max(ports.values(), default=0.0)))


def _align(size: int, alignment: int) -> int:
    return -(-size // alignment) * alignment


def stripe_heights(rows: int) -> list[int]:
    """The stripe heights tried for `rows` output rows: 1, 2, 3, 4, 8, 16, ... rows and
    the whole height, and ceil(rows / k) for k up to 4 (the halves, thirds, quarters)."""
    heights = {rows, *(-(-rows // k) for k in (2, 3, 4)), *(h for h in (3,) if h < rows)}
    height = 1
    while height < rows:
        heights.add(height)
        height *= 2
    return sorted(heights)


def best_cascade(
    members: Sequence[Member], target: Target, sources: Sources | None = None
) -> CascadePlan | None:
    """The fastest cascade of `members` over the stripe heights, on one core or (on a
    target of several, when it splits by rows into several stripes) on all of them
    (ties: less traffic, then less SRAM), None if none fits."""
    sources = sources or chain_sources(len(members))
    best: CascadePlan | None = None
    counts = [1]
    if target.cores.count > 1 and splits_by_rows(members):
        counts.append(target.cores.count)
    for stripe, cores in product(stripe_heights(members[-1].rows.out_h), counts):
        if cores > 1 and stripe >= members[-1].rows.out_h:
            continue  # one stripe: nothing to share
        plan = plan_cascade(members, target, stripe, sources, cores)
        if plan is None:
            continue
        rank = (plan.cycles, plan.ddr_read + plan.ddr_written, plan.sram_bytes)
        if best is None or rank < (best.cycles, best.ddr_read + best.ddr_written, best.sram_bytes):
            best = plan
    return best


def choose(
    candidates: Sequence[Member],
    reads: Sequence[Sequence[int]],
    closed: Sequence[bool],
    target: Target,
) -> list[tuple[int, CascadePlan]]:
    """The cascades to form among a function's `candidates` (in program order), each
    with the position of its first member. `reads[i]`: the earlier candidates whose
    outputs candidate `i` reads through its window; `closed[i]`: only candidates read
    its output. A cascade is a run of candidates each but the first reading one of the
    run, each but the last read only by later ones of the run. Of the splits into
    cascades and single layers, the one that moves the fewest bytes among those
    within CYCLE_TOLERANCE of the fewest cycles (a cascade only where it is faster
    than its layers apart, their spills included), as the planner chooses a tile."""
    Split = tuple[int, int, list[tuple[int, CascadePlan]]]
    readers = _consumers(reads)
    best: list[Split] = [(0, 0, [])]
    for end in range(1, len(candidates) + 1):
        cycles, moved, plans = best[end - 1]
        single = candidates[end - 1].plan
        options: list[Split] = [
            (cycles + single.cycles, moved + single.ddr_read + single.ddr_written, plans)
        ]
        for start in range(max(0, end - MAX_MEMBERS), end - 1):
            sources = _run_sources(start, end, reads, readers, closed)
            if sources is None:
                continue
            cascade = _remembered_cascade(candidates[start:end], sources, target)
            if cascade is None or cascade.cycles >= cascade.separate_cycles:
                continue
            cycles, moved, plans = best[start]
            options.append(
                (
                    cycles + cascade.cycles,
                    moved + cascade.ddr_read + cascade.ddr_written,
                    [*plans, (start, cascade)],
                )
            )
        fastest = min(option[0] for option in options)
        close = [option for option in options if option[0] <= fastest * (1 + CYCLE_TOLERANCE)]
        best.append(min(close, key=lambda option: (option[1], option[0])))
    return best[-1][2]


def _run_sources(
    start: int,
    end: int,
    reads: Sequence[Sequence[int]],
    readers: Sequence[Sequence[int]],
    closed: Sequence[bool],
) -> Sources | None:
    """The sources of candidates [start, end) as a cascade (indices within it), or None
    if they cannot form one (see `choose`)."""
    for index in range(start, end - 1):
        if not closed[index] or not readers[index] or max(readers[index]) >= end:
            return None
    sources = []
    for index in range(start, end):
        inside = tuple(source - start for source in reads[index] if source >= start)
        if index > start and not inside:
            return None
        sources.append(inside)
    return tuple(sources)


_CASCADES: dict[tuple[object, ...], CascadePlan | None] = {}
"""Cascades already planned, by their members' shapes (a ResNet repeats its blocks)."""


def _remembered_cascade(
    members: Sequence[Member], sources: Sources, target: Target
) -> CascadePlan | None:
    key = (
        target,
        sources,
        tuple((m.shape, m.rows, m.width, m.channels, m.plan.cycles) for m in members),
    )
    if key not in _CASCADES:
        if len(_CASCADES) > 4096:
            _CASCADES.clear()
        _CASCADES[key] = best_cascade(members, target, sources)
    plan = _CASCADES[key]
    return None if plan is None else replace(plan, members=tuple(members))


def force(
    candidates: Sequence[Member],
    reads: Sequence[Sequence[int]],
    closed: Sequence[bool],
    target: Target,
    stripe: int,
) -> list[tuple[int, CascadePlan]]:
    """Every cascade that fits with stripes of `stripe` rows (at most the last
    member's rows), whatever its cost: from each candidate on, the longest run that
    forms one (see `choose`), on every core of the target when it splits by rows
    (`splits_by_rows`); for tests and experiments."""
    readers = _consumers(reads)
    formed: list[tuple[int, CascadePlan]] = []
    start = 0
    while start < len(candidates):
        for end in range(min(len(candidates), start + MAX_MEMBERS), start + 1, -1):
            sources = _run_sources(start, end, reads, readers, closed)
            if sources is None:
                continue
            height = min(stripe, candidates[end - 1].rows.out_h)
            members = candidates[start:end]
            # On several cores, split across them (when it splits into stripes).
            cores = target.cores.count if splits_by_rows(members) else 1
            plan = plan_cascade(members, target, height, sources, cores)
            if plan is not None:
                formed.append((start, plan))
                start = end
                break
        else:
            start += 1
    return formed
