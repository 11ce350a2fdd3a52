"""DDR planning (irc/tiling/memory.py, `plan-ddr`).

- A hypothesis property test over random straight-line programs of values with live
  ranges, views, slices and in-place results: no two groups live at the same time
  overlap, every group is aligned, every view or slice lies inside its buffer, and
  the arena is at least the bytes live at once and at most the naive sum.
- The digits CNN in int8 and a hand-built int8 function with every kind of sharing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_tiling import digits_int8
from xdsl.dialects.func import FuncOp

from irc.backend import plan_memory
from irc.diagnostics import collect_diagnostics
from irc.ir.context import make_context
from irc.ir.io import parse_module
from irc.passes import parse_pipeline
from irc.targets import load_target, using_target
from irc.tiling.memory import Home, Homes, PlacementError, Value, check_plan, place

ALIGNMENT = 64


@st.composite
def programs(draw: st.DrawFn) -> list[Value]:
    """Values defined in order, each read up to a later op; some share a buffer."""
    count = draw(st.integers(1, 30))
    values: list[Value] = []
    for index in range(count):
        size = draw(st.integers(1, 5000))
        last = draw(st.integers(index, count + 1))
        role = draw(st.sampled_from(["own", "own", "weight", "view", "in-place", "slice"]))
        parents = [
            i for i, v in enumerate(values) if v.role not in ("weight", "fused") and v.size >= size
        ]
        value = Value(f"v{index}", size, index, last)
        if role == "weight":
            value.role = "weight"
        elif role != "own" and parents:
            parent = draw(st.sampled_from(parents))
            value.role, value.parent = role, parent  # type: ignore[assignment]
            value.offset_in_parent = draw(st.integers(0, values[parent].size - size))
        values.append(value)
    return values


@settings(max_examples=300, deadline=None, derandomize=True)
@given(values=programs())
def test_placements_never_overlap(values: list[Value]) -> None:
    plan = place(values, Homes.single("ddr", ALIGNMENT))
    assert check_plan(plan) == []
    assert plan.peak_live_bytes <= plan.arena_bytes <= plan.naive_bytes
    assert all(v.offset >= 0 for v in plan.values)
    weights = [v for v in plan.values if v.role == "weight"]
    assert plan.weights_bytes == sum(-(-v.size // ALIGNMENT) * ALIGNMENT for v in weights)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(values=programs(), fast=st.integers(0, 4096))
def test_a_fast_memory_holds_what_fits_and_the_next_one_the_rest(
    values: list[Value], fast: int
) -> None:
    # Activations prefer a small fast memory, then a large slow one (the weights'):
    # every group lies inside its memory, none overlaps another live in the same one.
    homes = Homes(Home("flash", 1 << 30, 64), (Home("sram2", fast, 16), Home("flash", 1 << 30, 64)))
    plan = place(values, homes)
    assert check_plan(plan) == []
    placed = [v for v in plan.values if v.role not in ("weight", "fused")]
    assert {v.memory for v in placed} <= {"sram2", "flash"}
    for value in placed:
        base = plan.base(value.memory)
        assert base + value.offset + value.size <= plan.home(value.memory).capacity
    # The fast memory is used whenever anything fits in it alone.
    singles = [v for v in placed if v.parent is None and -(-v.size // 16) * 16 <= fast]
    if singles:
        assert plan.arenas["sram2"] > 0
    assert all(v.memory == "flash" for v in plan.values if v.role == "weight")


def test_a_tensor_no_memory_holds_is_an_error() -> None:
    values = [Value("big", 4096, 0, 1), Value("small", 64, 1, 2)]
    with pytest.raises(PlacementError, match=r"big \(4096 bytes\) does not fit in sram2 or dram"):
        place(
            values, Homes(Home("dram", 1024, 64), (Home("sram2", 512, 16), Home("dram", 1024, 64)))
        )


def test_the_digits_model_plans_soundly() -> None:
    module = digits_int8()
    function = next(op for op in module.ops if isinstance(op, FuncOp))
    target = load_target("npu-demo")
    assert target.memories["ddr"].alignment_bytes == ALIGNMENT
    plan, _ = plan_memory(function, target)
    assert check_plan(plan) == []
    roles = {value.role for value in plan.values}
    assert {"argument", "weight", "fused"} <= roles
    assert plan.arena_bytes < plan.naive_bytes
    unshared, _ = plan_memory(function, target, zero_copy=False, in_place=False)
    assert plan.arena_bytes <= unshared.arena_bytes
    assert all(value.offset == -1 for value in plan.values if value.role == "fused")


FUNCTION = """
func.func @main(%x: tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1>>) -> tensor<1x4x4x16x!quant.uniform<i8:f32, 0.1>> {
  %c = qnn.clamp %x {clamp_min = 0} : tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1>>
  %d = qnn.clamp %c {clamp_max = 100} : tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1>>
  %e = qnn.clamp %x {clamp_min = 1} : tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1>>
  %cat = qnn.concat %d, %e {axis = 3} : (tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1>>, tensor<1x4x4x8x!quant.uniform<i8:f32, 0.1>>) -> tensor<1x4x4x16x!quant.uniform<i8:f32, 0.1>>
  func.return %cat : tensor<1x4x4x16x!quant.uniform<i8:f32, 0.1>>
}
"""


def test_sharing_rules_on_a_small_function(tmp_path: Path) -> None:
    """%c and %d: in place of each other and written into the concat's first slice;
    %e: the second slice; %x is a function argument, never overwritten."""
    module = parse_module(FUNCTION, make_context(), "f.mlir")
    report = tmp_path / "ddr.json"
    with collect_diagnostics(), using_target(load_target("npu-demo")):
        for module_pass in parse_pipeline(f"plan-ddr{{report={report}}}"):
            module_pass.apply(make_context(), module)
    data = json.loads(report.read_text())["main"]
    buffers = {entry["name"]: entry for entry in data["buffers"]}
    assert buffers["x"]["role"] == "argument"
    assert buffers["e"] == {**buffers["e"], "role": "slice", "in": "cat", "offset": 8}
    assert buffers["d"]["role"] == "slice" and buffers["d"]["offset"] == buffers["cat"]["offset"]
    assert buffers["c"]["role"] == "in-place" and buffers["c"]["in"] == "d"
    assert data["arena_bytes"] == 128 + 256  # %x and the concat, live together


def test_plan_ddr_needs_a_target() -> None:
    from irc.diagnostics import IrcError

    module = parse_module(FUNCTION, make_context(), "f.mlir")
    with pytest.raises(IrcError, match="pass 'plan-ddr' needs a target"):
        for module_pass in parse_pipeline("plan-ddr"):
            module_pass.apply(make_context(), module)
