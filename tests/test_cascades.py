"""Cascades (irc/tiling/cascade.py; docs/tiling.md, "Cascades"): layers run stripe by
stripe, their intermediate tensors in rolling SRAM buffers.

- the schedule and the rolling buffers, on random windows and reading patterns
  (hypothesis): every member computes each of its rows once, before any reader needs
  it, and a rolling buffer never overwrites a row a later stripe still reads (checked
  by running the stripes on buffers of exactly the planned rows);
- plans: a cascade never needs more SRAM than the target has, and never beats its own
  lower bound (hypothesis, random chains on npu-demo);
- programs: chains and residual blocks (3x3 and 1x1 convs, strided, depthwise, max
  and average pools, adds of a skip input or of two members, a cascade across two
  residual blocks) in forced stripes of several heights run bit-exactly at the tile
  level and through the command stream on the simulator against the `qnn` program;
  deleting any synchronisation of a cascade's stream is a hazard the simulator
  reports (the mutation test of tests/test_simulator.py);
- the choice by cost: on npu-demo a residual block is cascaded, and the cascade moves
  fewer DDR bytes and takes fewer simulated cycles than its layers apart.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_interp_tile import qtype
from test_lower_to_tile import conv, int8, program
from test_simulator import NPU_DEMO, check_every_deletion, compile_to_npu, parse

from irc.dialects import npu, tile
from irc.interp import run_function
from irc.quantize import scheme
from irc.sim.run import simulate
from irc.targets.model import Cores
from irc.tiling.cascade import (
    Member,
    Rows,
    Sources,
    _halvings,
    chain_sources,
    core_spans,
    plan_cascade,
    rolling_rows,
    schedule,
)
from irc.tiling.planner import Layer, plan_layer

# --------------------------------------------------------------------------------------
# The schedule and the rolling buffers


def test_the_schedule_of_a_residual_block() -> None:
    """Two 3x3 pad-1 convs and an add over 16 rows in stripes of 3 (the lit test's
    block): the first conv leads by a row, and its rolling buffer holds the 5 rows the
    second conv's 3-row stripe reads (one above, one below, and the row it has already
    computed for the next stripe)."""
    conv3 = Rows(16, 16, 3, 1, 1, 1)
    rows = [conv3, conv3, Rows(16, 16)]
    stripes = schedule(rows, 3)
    assert stripes[0] == ((0, 4), (0, 3), (0, 3))
    assert stripes[1] == ((4, 3), (3, 3), (3, 3))
    assert stripes[-1] == ((16, 0), (15, 1), (15, 1))
    assert len(stripes) == 6
    assert rolling_rows(rows, stripes) == [5, 3]


def test_a_strided_member_reads_twice_the_rows() -> None:
    """A stride-2 3x3 conv after a 1x1 one: per output row of the stripe, the 1x1 conv
    computes two rows."""
    rows = [Rows(16, 16), Rows(8, 16, 3, 2, 1, 1)]
    stripes = schedule(rows, 2)
    assert [stripe[0][1] for stripe in stripes] == [4, 4, 4, 4]
    assert [stripe[1][1] for stripe in stripes] == [2, 2, 2, 2]
    assert rolling_rows(rows, stripes) == [5]


@st.composite
def windows(draw: st.DrawFn) -> tuple[list[Rows], Sources, int]:
    """A random cascade's row windows: each member reads the one before it or, for an
    elementwise one, also an earlier member (a residual add); and a stripe height."""
    count = draw(st.integers(2, 6))
    height = draw(st.integers(1, 24))
    rows: list[Rows] = []
    sources: list[tuple[int, ...]] = []
    for index in range(count):
        if index and draw(st.booleans()):
            # An elementwise member of the previous one's rows, maybe of an earlier too.
            previous = rows[-1].out_h
            earlier = [i for i in range(index - 1) if rows[i].out_h == previous]
            read = (
                index - 1,
                *([draw(st.sampled_from(earlier))] if earlier and draw(st.booleans()) else []),
            )
            rows.append(Rows(previous, previous))
            sources.append(tuple(sorted(read)))
            continue
        kernel = draw(st.integers(1, 5))
        stride = draw(st.integers(1, 2))
        dilation = draw(st.integers(1, 2))
        reach = (kernel - 1) * dilation
        pad = draw(st.integers(0, reach))
        in_h = rows[-1].out_h if rows else height
        out_h = (in_h + pad + draw(st.integers(0, reach)) - reach - 1) // stride + 1
        if out_h < 1:
            kernel, stride, dilation, pad, out_h = 1, 1, 1, 0, in_h
        rows.append(Rows(out_h, in_h, kernel, stride, dilation, pad))
        sources.append(() if index == 0 else (index - 1,))
    stripe = draw(st.integers(1, rows[-1].out_h))
    return rows, tuple(sources), stripe


@settings(max_examples=300, deadline=None)
@given(windows(), st.integers(1, 3))
def test_stripes_compute_every_row_once_and_rolling_buffers_keep_what_is_read(
    case: tuple[list[Rows], Sources, int], cores: int
) -> None:
    """On one core, and on each core of several, each with its share of the stripes
    (`core_spans`) and rolling buffers of its own (the rows of the most any core
    needs): a core computes each row its stripes read, in order, once."""
    rows, sources, stripe = case
    spans = core_spans(rows[-1].out_h, stripe, cores)
    assert spans[0][0] == 0 and spans[-1][1] == rows[-1].out_h
    assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))
    schedules = [schedule(rows, stripe, sources, span) for span in spans]
    rolling = [max(n) for n in zip(*(rolling_rows(rows, c, sources) for c in schedules))]
    for (first, end), stripes in zip(spans, schedules):
        _check_stripes(rows, sources, stripes, rolling, first, end)


def _check_stripes(
    rows: list[Rows],
    sources: Sources,
    stripes: Sequence[tuple[tuple[int, int], ...]],
    rolling: list[int],
    first: int,
    end: int,
) -> None:
    # Each member's rows: consecutive ranges, each row once; the last member's are
    # the core's [first, end).
    for member in range(len(rows)):
        ranges = [s[member] for s in stripes]
        assert all(a[0] + a[1] == b[0] for a, b in itertools.pairwise(ranges))
    assert stripes[0][-1][0] == first
    assert sum(s[-1][1] for s in stripes) == end - first
    # Run the stripes on rolling buffers of the planned rows: slot r % R holds row r.
    slots = [[-1] * size for size in rolling]
    for stripe_rows in stripes:
        for member, (start, count) in enumerate(stripe_rows):
            window = rows[member]
            for source in sources[member]:
                if count:
                    first = window.first(start)
                    end = window.end(start + count)
                    for row in range(first, end):
                        assert slots[source][row % rolling[source]] == row, (
                            f"member {member} reads row {row} of member {source}, "
                            "which is not in its rolling buffer"
                        )
            if member < len(rows) - 1:
                assert count <= rolling[member], "a stripe's rows do not fit its buffer"
                for row in range(start, start + count):
                    slots[member][row % rolling[member]] = row


# --------------------------------------------------------------------------------------
# Plans on random chains


def _conv_member(
    name: str, height: int, channels: int, out_channels: int, kernel: int, stride: int
) -> Member:
    pad = kernel // 2
    out_h = (height + 2 * pad - kernel) // stride + 1
    layer = Layer(
        name, "qnn.conv", "conv", "mac", 1, height, height, channels, out_h, out_h, out_channels,
        kernel=(kernel, kernel), strides=(stride, stride), pads=(pad, pad, pad, pad),
        has_weights=True, conv_steps=True,
    )  # fmt: skip
    return Member(
        layer, Rows(out_h, height, kernel, stride, 1, pad), out_h, out_channels,
        plan_layer(layer, NPU_DEMO),
    )  # fmt: skip


@st.composite
def chains(draw: st.DrawFn) -> list[Member]:
    height = draw(st.sampled_from([8, 14, 28, 56]))
    channels = draw(st.sampled_from([8, 16, 64, 128]))
    members = []
    for index in range(draw(st.integers(2, 4))):
        out_channels = draw(st.sampled_from([16, 32, 64, 256]))
        kernel = draw(st.sampled_from([1, 3]))
        stride = draw(st.sampled_from([1, 1, 2])) if height > 4 else 1
        member = _conv_member(f"c{index}", height, channels, out_channels, kernel, stride)
        members.append(member)
        height, channels = member.rows.out_h, out_channels
    return members


@settings(max_examples=60, deadline=None)
@given(chains(), st.integers(1, 8))
def test_no_cascade_overflows_the_sram_or_beats_its_bound(
    members: list[Member], stripe: int
) -> None:
    plan = plan_cascade(members, NPU_DEMO, min(stripe, members[-1].rows.out_h))
    if plan is None:
        return  # nothing fits: no cascade is formed
    capacity = NPU_DEMO.scratch.size_bytes
    assert plan.sram_bytes <= capacity
    # The rolling buffers and every member's buffers lie inside the SRAM, apart.
    regions = [(offset, rows) for offset, rows in plan.rolling]
    spans = []
    for (offset, rows), member in zip(regions, members):
        spans.append((offset, offset + rows * member.width * member.channels))
    for member_plan in plan.member_plans(NPU_DEMO):
        for name, copies in member_plan.sram_offsets.items():
            size = member_plan.buffers[name] // len(copies)
            spans += [(start, start + size) for start in copies]
    spans.sort()
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans)), spans
    assert spans[-1][1] <= capacity
    # The chain's own network bound (its ideal compute, or its input, weights and
    # output crossing DDR once): no estimate beats it.
    assert plan.cycles >= plan.lower_bound > 0


# --------------------------------------------------------------------------------------
# Programs, bit-exact


def _add(
    name: str, lhs: str, lhs_type: str, rhs: str, rhs_type: str, shape: Sequence[int]
) -> tuple[str, str]:
    """`%name = qnn.add %lhs, %rhs` with a relu, of a given output scale."""
    lhs_scale, rhs_scale = _scale(lhs_type), _scale(rhs_type)
    out_type = qtype(shape, 0.15, -4)
    props = ", ".join(
        f"{k} = {v}" for k, v in sorted(scheme.add_parameters(lhs_scale, rhs_scale, 0.15).items())
    )
    line = (
        f"  %{name} = qnn.add %{lhs}, %{rhs} {{{props}, clamp_min = -4}} "
        f": ({lhs_type}, {rhs_type}) -> {out_type}"
    )
    return line, out_type


def _scale(type_text: str) -> float:
    return float(type_text.split("f32, ")[1].split(":")[0].rstrip(">"))


def _pool(
    name: str, source: str, source_type: str, shape: Sequence[int], kind: str
) -> tuple[str, str, tuple[int, ...]]:
    out_h = (shape[1] + 2 - 3) // 2 + 1
    out_w = (shape[2] + 2 - 3) // 2 + 1
    out_shape = (1, out_h, out_w, shape[3])
    entries = [
        'layout = "nhwc"',
        "kernel_shape = [3, 3]",
        "strides = [2, 2]",
        "pads = [1, 1, 1, 1]",
    ]
    if kind == "max_pool":
        out_type = source_type.replace("x".join(map(str, shape)), "x".join(map(str, out_shape)))
    else:
        out_type = qtype(out_shape, 0.08, 2)
        multiplier, shift = scheme.rescale_multiplier(_scale(source_type), 0.08)
        entries.append(f"multiplier = {multiplier}, shift = {shift}, count_include_pad = true")
    line = (
        f"  %{name} = qnn.{kind} %{source} {{{', '.join(entries)}}} : ({source_type}) -> {out_type}"
    )
    return line, out_type, out_shape


def _programs() -> dict[str, tuple[str, list[np.ndarray]]]:
    rng = np.random.default_rng(31)
    programs = {}
    # A chain: 3x3, strided 3x3, 1x1, depthwise 3x3.
    shape = (1, 13, 11, 8)
    x_type = qtype(shape, 0.1, -3)
    a = conv(rng, "a", "x", x_type, shape, 16)
    b = conv(rng, "b", "a", a.output_type, a.output_shape, 16, strides=(2, 2))
    c = conv(rng, "c", "b", b.output_type, b.output_shape, 24, kernel=(1, 1), pads=(0, 0, 0, 0))
    d = conv(rng, "d", "c", c.output_type, c.output_shape, 24, group=24)
    body = a.lines + b.lines + c.lines + d.lines
    programs["chain"] = (
        program([("x", x_type)], body, [("d", d.output_type)]),
        [int8(rng, shape)],
    )
    # A residual block: 1x1, 3x3, 1x1 and the add of the block's input.
    shape = (1, 12, 10, 16)
    x_type = qtype(shape, 0.1, -3)
    a = conv(rng, "a", "x", x_type, shape, 8, kernel=(1, 1), pads=(0, 0, 0, 0))
    b = conv(rng, "b", "a", a.output_type, a.output_shape, 8)
    c = conv(
        rng,
        "c",
        "b",
        b.output_type,
        b.output_shape,
        16,
        kernel=(1, 1),
        pads=(0, 0, 0, 0),
        relu=False,
    )
    add, add_type = _add("y", "c", c.output_type, "x", x_type, shape)
    programs["residual"] = (
        program([("x", x_type)], a.lines + b.lines + c.lines + add, [("y", add_type)]),
        [int8(rng, shape)],
    )
    # Two residual blocks: the first block's sum feeds the second block's conv and its
    # add (a member read by two later members), after a max pool.
    shape = (1, 18, 14, 8)
    x_type = qtype(shape, 0.1, -3)
    pool, pool_type, pooled = _pool("p", "x", x_type, shape, "max_pool")
    a = conv(rng, "a", "p", pool_type, pooled, 8)
    first, first_type = _add("s", "a", a.output_type, "p", pool_type, pooled)
    b = conv(rng, "b", "s", first_type, pooled, 8)
    second, second_type = _add("y", "b", b.output_type, "s", first_type, pooled)
    body = pool + "\n" + a.lines + first + "\n" + b.lines + second
    programs["two blocks"] = (
        program([("x", x_type)], body, [("y", second_type)]),
        [int8(rng, shape)],
    )
    # An average pool between convs.
    shape = (1, 15, 9, 16)
    x_type = qtype(shape, 0.1, -3)
    a = conv(rng, "a", "x", x_type, shape, 16)
    pool, pool_type, pooled = _pool("p", "a", a.output_type, a.output_shape, "average_pool")
    b = conv(rng, "b", "p", pool_type, pooled, 8, kernel=(1, 1), pads=(0, 0, 0, 0))
    programs["average pool"] = (
        program([("x", x_type)], a.lines + pool + "\n" + b.lines, [("b", b.output_type)]),
        [int8(rng, shape)],
    )
    return programs


PROGRAMS = _programs()


@pytest.mark.parametrize("stripe", [1, 2, 3, 5, 64])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_a_cascade_is_bit_exact_at_the_tile_level_and_on_the_simulator(
    name: str, stripe: int
) -> None:
    text, inputs = PROGRAMS[name]
    expected = run_function(parse(text), inputs)
    pipeline = f"plan-tiles{{cascades=true cascade-stripe={stripe}}},lower-to-tile"
    tiled = compile_to_npu(text, pipeline)
    assert "source_rolling" in str(tiled), "no cascade was formed"
    outputs = run_function(tiled, inputs)
    for key in expected:
        np.testing.assert_array_equal(outputs[key], expected[key])
    stream = compile_to_npu(text, pipeline + ",lower-to-npu")
    simulated, report = simulate(stream, inputs, NPU_DEMO)
    for key in expected:
        np.testing.assert_array_equal(simulated[key], expected[key])
    assert report.cycles > 0


TWO_CORES = replace(NPU_DEMO, cores=Cores(count=2, sync_latency_cycles=40))
"""npu-demo with two cores: a forced cascade is split across them by rows."""


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_a_cascade_split_across_two_cores_is_bit_exact(name: str) -> None:
    """Each core runs its share of the stripes with its own rolling buffers (in its
    own SRAM), recomputing the rows above its share that its first stripe reads."""
    text, inputs = PROGRAMS[name]
    expected = run_function(parse(text), inputs)
    pipeline = "plan-tiles{cascades=true cascade-stripe=2},lower-to-tile"
    tiled = compile_to_npu(text, pipeline, TWO_CORES)
    regions = [op for op in tiled.walk() if isinstance(op, tile.OnCoreOp)]
    assert sorted(op.props().int("core") for op in regions) == [0, 1]
    assert all("source_rolling" in str(op) for op in regions)
    outputs = run_function(tiled, inputs)
    for key in expected:
        np.testing.assert_array_equal(outputs[key], expected[key])
    stream = compile_to_npu(text, pipeline + ",lower-to-npu", TWO_CORES)
    simulated, report = simulate(stream, inputs, TWO_CORES)
    for key in expected:
        np.testing.assert_array_equal(simulated[key], expected[key])
    assert report.total.busy["core1.mac"] > 0 or report.total.busy["core1.vector"] > 0


def test_deleting_any_synchronisation_of_a_split_cascade_is_reported() -> None:
    text, inputs = PROGRAMS["residual"]
    pipeline = "plan-tiles{cascades=true cascade-stripe=4},lower-to-tile,lower-to-npu"
    stream = compile_to_npu(text, pipeline, TWO_CORES)
    assert {op.core_index() for op in stream.walk() if isinstance(op, npu.Command)} == {0, 1}
    assert check_every_deletion(stream, inputs, TWO_CORES) >= 10


def test_deleting_any_synchronisation_of_a_cascade_is_reported() -> None:
    text, inputs = PROGRAMS["residual"]
    pipeline = "plan-tiles{cascades=true cascade-stripe=4},lower-to-tile,lower-to-npu"
    stream = compile_to_npu(text, pipeline)
    assert check_every_deletion(stream, inputs) >= 10


def test_npu_demo_cascades_a_residual_block_where_it_pays() -> None:
    """Chosen by cost (no forced stripe): the residual block runs as one cascade, with
    fewer DDR bytes and fewer simulated cycles than its layers apart."""
    text, inputs = PROGRAMS["residual"]
    runs = {}
    for cascades in (False, True):
        pipeline = f"plan-tiles{{cascades={str(cascades).lower()}}},lower-to-tile,lower-to-npu"
        _outputs, report = simulate(compile_to_npu(text, pipeline), inputs, NPU_DEMO)
        runs[cascades] = report
    assert "irc.cascade" in str(compile_to_npu(text, "plan-tiles{cascades=true}")), (
        "the block is not cascaded"
    )
    apart, cascaded = runs[False].total, runs[True].total
    assert cascaded.ddr_read + cascaded.ddr_written < apart.ddr_read + apart.ddr_written
    assert runs[True].cycles < runs[False].cycles


def test_a_chain_of_sources_reads_the_member_before() -> None:
    assert chain_sources(3) == ((), (0,), (1,))


def test_member_tiles_halve_down_to_the_granule() -> None:
    assert _halvings(256, 16) == [256, 128, 64, 32, 16]
    assert _halvings(24, 16) == [24, 16]
    assert _halvings(8, 16) == [8]
    assert _halvings(56, 1) == [56, 28, 14, 7, 4, 2, 1]  # columns: down to one
