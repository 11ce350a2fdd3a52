"""Can the NPU run this op? `unsupported_reasons(op, target, key)` says why not.

An op runs on the NPU when its kind is in the target's support table (`target.ops`)
and it is within every limit written there. Each limit of irc/targets/schema.py has one
check here; the reasons name the op, the offending value and what the target allows:

    nn.resize mode="cubic": target npu-demo supports nearest, linear
    qnn.conv kernel 11x11: target npu-demo supports kernels up to 7x7
    nn.lrn: not in target npu-demo's support table
    qnn.lut (sigmoid) needs a lookup table: target npu-demo has none

The table is keyed by kind (`conv`, `max_pool`, ...): the `nn` op's name without its
prefix. An op's `qnn` form has the same operands and properties, so the same checks
apply to both; the backend table (irc/backend) gives the key of an instance whose
kind is not its name (a `qnn.lut` is the function it tabulates, a `qnn.clamp` a relu
or a clip). Whether the NPU computes in the op's data types, and whether irc can lower
the op at all, are the backend table's checks; these are the target's limits only.

Spatial ops are read through their `layout` property: a channels-last (`nhwc`) op's
layout operands and results are viewed channels-first (`channels_first_perm`), so the
same checks see the same channels, kernels and batch in both layouts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.ir import Operation, SSAValue
from xdsl.traits import ConstantLike

from irc.dialects import nn
from irc.dialects.base import broadcast_shapes, channels_first_perm, tensor_type
from irc.targets.model import OpSupport, Target
from irc.targets.render import format_number


def unsupported_reasons(op: Operation, target: Target, key: str | None = None) -> list[str]:
    """Why `target`'s support table does not take `op`: [] if it does, else every reason.

    `key` is the op's kind in the table (default: its name without the dialect
    prefix). Constants are data and always supported; an op without properties (not
    an `nn` or `qnn` op) is not in any support table.
    """
    if op.has_trait(ConstantLike):
        return []
    kind = key or op.name.partition(".")[2]
    props = getattr(op, "props", None)
    if props is None:
        return [f"{op.name}: not an nn op: target {target.name} runs nn ops only"]
    label = op.name if kind == op.name.partition(".")[2] else f"{op.name} ({kind})"
    support = target.ops.get(kind)
    if support is None:
        return [f"{label}: not in target {target.name}'s support table"]
    check = _Check(op, kind, label, support, target)
    for rule in _RULES:
        rule(check)
    _fused_activation_lut(check)
    return check.reasons


def _fused_activation_lut(c: _Check) -> None:
    """A fused activation that the target computes with its lookup table (its own op
    needs one) cannot run on a target without one, whatever the producer allows."""
    activation = c.op.properties.get("activation")
    if not isinstance(activation, nn.ActivationAttr) or c.target.lut.supported:
        return
    kind = activation.kind.data
    standalone = c.target.ops.get(kind)
    if standalone is not None and standalone.needs_lut:
        c.reasons.append(
            f"{c.label} fused activation {kind} needs a lookup table: "
            f"target {c.target.name} has none"
        )


# --------------------------------------------------------------------------------------
# The op seen by the checks


def _shape(value: SSAValue) -> tuple[int, ...]:
    return tuple(tensor_type(value).get_shape())


def _dims(values: Sequence[int]) -> str:
    """`11x11`, `3`."""
    return "x".join(str(v) for v in values)


def _listing(values: Sequence[object]) -> str:
    return ", ".join(format_number(v) if isinstance(v, int | float) else str(v) for v in values)


@dataclass
class _Check:
    """One op under check against its entry in the support table."""

    op: Operation
    kind: str
    """The op's key in the support table."""
    label: str
    """How reasons name the op: `qnn.conv`, or `qnn.lut (sigmoid)`."""
    support: OpSupport
    target: Target
    reasons: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.props: nn.Props = self.op.props()  # type: ignore[attr-defined]
        self.layout_operands: tuple[int, ...] = getattr(self.op, "LAYOUT_OPERANDS", ())

    def fail(self, detail: str, allowed: str) -> None:
        """Record `<op> <detail>: target <name> <allowed>`."""
        self.reasons.append(f"{self.label} {detail}: target {self.target.name} {allowed}")

    @property
    def channels_last(self) -> bool:
        return bool(self.layout_operands) and self.props.str("layout") == "nhwc"

    def operand_shape(self, index: int) -> tuple[int, ...]:
        """An operand's shape, channels-first if it is a layout operand of an nhwc op."""
        shape = _shape(self.op.operands[index])
        if self.channels_last and index in self.layout_operands:
            return tuple(shape[p] for p in channels_first_perm(len(shape)))
        return shape

    def result_shape(self, index: int = 0) -> tuple[int, ...]:
        """A result's shape, channels-first for an nhwc op."""
        shape = _shape(self.op.results[index])
        if self.channels_last:
            return tuple(shape[p] for p in channels_first_perm(len(shape)))
        return shape

    def all_shapes(self) -> list[tuple[int, ...]]:
        values = [*self.op.operands, *self.op.results]
        return [_shape(value) for value in values]

    def window(self) -> tuple[list[int], list[int], list[int], list[int]]:
        """Kernel, strides, pads and dilations of a sliding-window op."""
        spatial = len(self.operand_shape(0)) - 2
        if self.kind in _CONV_OPS:
            kernel = list(self.operand_shape(1)[2:])
        else:
            kernel = self.props.ints("kernel_shape") or [1] * spatial
        strides = self.props.ints("strides") or [1] * spatial
        pads = self.props.ints("pads") or [0] * (2 * spatial)
        dilations = self.props.ints("dilations") or [1] * spatial
        return kernel, strides, pads, dilations

    def kernel_text(self, value: int) -> str:
        """A per-axis limit written for this op's spatial rank: 7 -> `7x7` for 2-D."""
        return _dims([value] * max(1, len(self.operand_shape(0)) - 2))


_Rule = Callable[[_Check], None]
_RULES: list[_Rule] = []


def _rule(limit: str, *kinds: str) -> Callable[[_Rule], _Rule]:
    """Register a check that runs when the op's entry sets `limit` (and, if `kinds` are
    given, the op is of one of them)."""

    def register(check: _Rule) -> _Rule:
        def guarded(c: _Check) -> None:
            value = getattr(c.support, limit)
            default = OpSupport.__dataclass_fields__[limit].default
            if value is None or value == default:
                return
            if kinds and c.kind not in kinds:
                return
            check(c)

        _RULES.append(guarded)
        return check

    return register


_WINDOW_OPS = ("conv", "conv_transpose", "max_pool", "average_pool")
_CONV_OPS = ("conv", "conv_transpose")


# --------------------------------------------------------------------------------------
# Every op


@_rule("max_rank")
def _max_rank(c: _Check) -> None:
    limit = c.support.max_rank
    assert limit is not None
    rank = max((len(shape) for shape in c.all_shapes()), default=0)
    if rank > limit:
        c.fail(f"rank {rank}", f"supports tensors up to rank {limit}")


@_rule("max_dimension")
def _max_dimension(c: _Check) -> None:
    limit = c.support.max_dimension
    assert limit is not None
    largest = max((dim for shape in c.all_shapes() for dim in shape), default=0)
    if largest > limit:
        c.fail(f"dimension {largest}", f"supports dimensions up to {limit}")


# --------------------------------------------------------------------------------------
# Spatial ops


@_rule("layouts")
def _layouts(c: _Check) -> None:
    layout = c.props.str("layout")
    allowed = c.support.layouts or ()
    if layout not in allowed:
        c.fail(f'layout="{layout}"', f"supports {', '.join(allowed)}")


@_rule("spatial_dims")
def _spatial_dims(c: _Check) -> None:
    spatial = len(c.operand_shape(0)) - 2
    allowed = c.support.spatial_dims or ()
    if spatial not in allowed:
        c.fail(f"{spatial}-D", f"supports {' and '.join(f'{d}-D' for d in allowed)}")


@_rule("max_batch")
def _max_batch(c: _Check) -> None:
    limit = c.support.max_batch
    assert limit is not None
    if c.kind == "matmul":
        batch_dims = _matmul_dims(c)[0]
        batch = math.prod(batch_dims)
        detail = f"batch {batch} (batch dimensions {_dims(batch_dims)})"
    else:
        batch = c.operand_shape(0)[0]
        detail = f"batch {batch}"
    if batch > limit:
        c.fail(detail, f"supports batch up to {limit}")


# --------------------------------------------------------------------------------------
# Sliding windows


@_rule("max_kernel", *_WINDOW_OPS)
def _max_kernel(c: _Check) -> None:
    limit = c.support.max_kernel
    assert limit is not None
    kernel = c.window()[0]
    if max(kernel) > limit:
        c.fail(f"kernel {_dims(kernel)}", f"supports kernels up to {c.kernel_text(limit)}")


@_rule("max_dilated_kernel", *_WINDOW_OPS)
def _max_dilated_kernel(c: _Check) -> None:
    limit = c.support.max_dilated_kernel
    assert limit is not None
    kernel, _, _, dilations = c.window()
    extents = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    if max(extents) > limit:
        how = (
            f" (kernel {_dims(kernel)}, dilation {_dims(dilations)})" if max(dilations) > 1 else ""
        )
        c.fail(
            f"dilated kernel {_dims(extents)}{how}",
            f"supports dilated kernels up to {c.kernel_text(limit)}",
        )


@_rule("max_kernel_elements", *_WINDOW_OPS)
def _max_kernel_elements(c: _Check) -> None:
    limit = c.support.max_kernel_elements
    assert limit is not None
    kernel, _, _, dilations = c.window()
    elements = math.prod((k - 1) * d + 1 for k, d in zip(kernel, dilations))
    if elements > limit:
        dilated = f" with dilation {_dims(dilations)}" if max(dilations) > 1 else ""
        c.fail(
            f"kernel {_dims(kernel)}{dilated} spans {elements} elements",
            f"supports kernels spanning up to {limit} elements",
        )


@_rule("max_padded_kernel", *_WINDOW_OPS)
def _max_padded_kernel(c: _Check) -> None:
    limit = c.support.max_padded_kernel
    assert limit is not None
    kernel, _, pads, _ = c.window()
    if max(pads) > 0 and max(kernel) > limit:
        c.fail(
            f"kernel {_dims(kernel)} with pads {pads}",
            f"supports kernels up to {c.kernel_text(limit)} when padding",
        )


@_rule("strides", *_WINDOW_OPS)
def _strides(c: _Check) -> None:
    strides = c.window()[1]
    allowed = c.support.strides or ()
    if any(stride not in allowed for stride in strides):
        c.fail(f"stride {_dims(strides)}", f"supports strides {_listing(allowed)}")


@_rule("dilations", *_WINDOW_OPS)
def _dilations(c: _Check) -> None:
    dilations = c.window()[3]
    allowed = c.support.dilations or ()
    if any(dilation not in allowed for dilation in dilations):
        c.fail(f"dilation {_dims(dilations)}", f"supports dilations {_listing(allowed)}")


@_rule("max_padding")
def _max_padding(c: _Check) -> None:
    limit = c.support.max_padding
    assert limit is not None
    pads = c.props.ints("pads") or [0]
    if max(pads) > limit:
        c.fail(f"padding {max(pads)} (pads {pads})", f"supports padding up to {limit} per side")


# --------------------------------------------------------------------------------------
# Convolutions and matrix products


@_rule("max_input_channels", *_CONV_OPS)
def _max_input_channels(c: _Check) -> None:
    limit = c.support.max_input_channels
    assert limit is not None
    channels = c.operand_shape(0)[1]
    if channels > limit:
        c.fail(f"{channels} input channels", f"supports up to {limit}")


@_rule("max_output_channels", *_CONV_OPS)
def _max_output_channels(c: _Check) -> None:
    limit = c.support.max_output_channels
    assert limit is not None
    channels = c.result_shape()[1]
    if channels > limit:
        c.fail(f"{channels} output channels", f"supports up to {limit}")


@_rule("groups", *_CONV_OPS)
def _groups(c: _Check) -> None:
    group = c.props.int("group") or 1
    inputs, outputs = c.operand_shape(0)[1], c.result_shape()[1]
    if group == 1 or c.support.groups == "any":
        return
    if c.support.groups == "none":
        c.fail(f"group {group}", "supports group 1 only")
    elif not group == inputs == outputs:
        c.fail(
            f"group {group} ({inputs} input channels, {outputs} output channels)",
            "supports group 1 and depthwise convolutions (group = input channels = "
            "output channels)",
        )


@_rule("activations")
def _activations(c: _Check) -> None:
    activation = c.op.properties.get("activation")
    if not isinstance(activation, nn.ActivationAttr):
        return
    kind = activation.kind.data
    allowed = c.support.activations or ()
    if kind not in allowed:
        fuses = f"fuses {', '.join(allowed)}" if allowed else "fuses no activation"
        c.fail(f"activation {kind}", fuses)


@_rule("constant_weights")
def _constant_weights(c: _Check) -> None:
    weights = c.op.operands[1].owner
    if not (isinstance(weights, Operation) and weights.has_trait(ConstantLike)):
        c.fail("weights (operand #1) are not a constant", "needs constant weights")


def _matmul_dims(c: _Check) -> tuple[tuple[int, ...], int, int, int]:
    """(batch dimensions, M, K, N) of a matmul or gemm."""
    lhs, rhs = list(_shape(c.op.operands[0])), list(_shape(c.op.operands[1]))
    if c.kind == "gemm":
        m, k = (lhs[1], lhs[0]) if c.props.bool("trans_a") else (lhs[0], lhs[1])
        n = rhs[0] if c.props.bool("trans_b") else rhs[1]
        return (), m, k, n
    lhs = [1, *lhs] if len(lhs) == 1 else lhs
    rhs = [*rhs, 1] if len(rhs) == 1 else rhs
    batch = broadcast_shapes(lhs[:-2], rhs[:-2])
    return batch, lhs[-2], lhs[-1], rhs[-1]


def _matrix_limit(letter: str) -> _Rule:
    def check(c: _Check) -> None:
        limit = getattr(c.support, f"max_{letter.lower()}")
        _, m, k, n = _matmul_dims(c)
        value = {"M": m, "K": k, "N": n}[letter]
        if value > limit:
            c.fail(f"{letter}={value}", f"supports {letter} up to {limit}")

    return check


for _letter in ("M", "K", "N"):
    _rule(f"max_{_letter.lower()}", "gemm", "matmul")(_matrix_limit(_letter))


@_rule("supports_transposed_lhs", "gemm")
def _transposed_lhs(c: _Check) -> None:
    if c.props.bool("trans_a"):
        c.fail("trans_a=true", "does not support a transposed lhs")


# --------------------------------------------------------------------------------------
# Pooling


@_rule("supports_ceil_mode", "max_pool", "average_pool")
def _ceil_mode(c: _Check) -> None:
    if c.props.bool("ceil_mode"):
        c.fail("ceil_mode=true", "does not support ceil_mode")


@_rule("supports_count_include_pad", "average_pool")
def _count_include_pad(c: _Check) -> None:
    pads = c.window()[2]
    if c.props.bool("count_include_pad") and max(pads) > 0:
        c.fail(
            f"count_include_pad=true with pads {pads}",
            "does not count padding in averages",
        )


# --------------------------------------------------------------------------------------
# Elementwise


@_rule("supports_broadcast")
def _broadcast(c: _Check) -> None:
    shapes = [_shape(operand) for operand in c.op.operands]
    if len(set(shapes)) > 1:
        written = " and ".join(_dims(shape) or "scalar" for shape in shapes)
        c.fail(f"broadcasts {written}", "needs operands of one shape")


@_rule("max_inputs")
def _max_inputs(c: _Check) -> None:
    limit = c.support.max_inputs
    assert limit is not None
    count = len(c.op.operands)
    if count > limit:
        c.fail(f"{count} inputs", f"supports up to {limit}")


@_rule("needs_lut")
def _needs_lut(c: _Check) -> None:
    if not c.target.lut.supported:
        c.reasons.append(f"{c.label} needs a lookup table: target {c.target.name} has none")
        return
    table = c.props.ints("table")  # a qnn.lut's: 256 entries, or 513 interpolated ones
    steps = len(table) - 1 if table and len(table) % 2 else 0
    if steps > c.target.lut.entries:
        c.reasons.append(
            f"{c.label} has an interpolated 16-bit table of {steps} steps: target "
            f"{c.target.name}'s lookup table has {c.target.lut.entries} entries"
        )


# --------------------------------------------------------------------------------------
# Softmax and reductions


def _axis(c: _Check) -> tuple[int, int]:
    """(axis, rank) of a softmax."""
    rank = len(_shape(c.op.operands[0]))
    axis = c.props.int("axis")
    return nn.normalize_axis(-1 if axis is None else axis, rank), rank


@_rule("last_axis_only")
def _last_axis_only(c: _Check) -> None:
    axis, rank = _axis(c)
    if axis != rank - 1:
        c.fail(f"axis {axis} of a rank-{rank} tensor", "supports the last axis only")


@_rule("max_axis_size")
def _max_axis_size(c: _Check) -> None:
    limit = c.support.max_axis_size
    assert limit is not None
    axis, _ = _axis(c)
    size = _shape(c.op.operands[0])[axis]
    if size > limit:
        c.fail(f"axis size {size}", f"supports up to {limit}")


def _reduced_axes(c: _Check) -> list[int]:
    """The axes a reduction or global pool reduces (of its input as written)."""
    rank = len(_shape(c.op.operands[0]))
    if c.kind.startswith("global_"):
        spatial = range(1, rank - 1) if c.channels_last else range(2, rank)
        return list(spatial)
    axes = c.props.ints("axes")
    return list(range(rank)) if axes is None else sorted(nn.normalize_axis(a, rank) for a in axes)


@_rule("max_reduced_elements")
def _max_reduced_elements(c: _Check) -> None:
    limit = c.support.max_reduced_elements
    assert limit is not None
    shape = _shape(c.op.operands[0])
    axes = _reduced_axes(c)
    elements = math.prod(shape[axis] for axis in axes)
    if elements > limit:
        sizes = _dims([shape[axis] for axis in axes])
        c.fail(
            f"reduces {elements} elements ({sizes}) into each output",
            f"supports up to {limit}",
        )


@_rule("max_reduced_axes")
def _max_reduced_axes(c: _Check) -> None:
    limit = c.support.max_reduced_axes
    assert limit is not None
    axes = _reduced_axes(c)
    if len(axes) > limit:
        c.fail(f"reduces {len(axes)} axes {axes}", f"supports up to {limit}")


# --------------------------------------------------------------------------------------
# Data movement


@_rule("max_outputs")
def _max_outputs(c: _Check) -> None:
    limit = c.support.max_outputs
    assert limit is not None
    count = len(c.op.results)
    if count > limit:
        c.fail(f"{count} outputs", f"supports up to {limit}")


@_rule("steps")
def _steps(c: _Check) -> None:
    starts = c.props.ints("starts") or []
    steps = c.props.ints("steps") or [1] * len(starts)
    allowed = c.support.steps or ()
    if any(step not in allowed for step in steps):
        c.fail(f"steps {steps}", f"supports steps {_listing(allowed)}")


@_rule("perms")
def _perms(c: _Check) -> None:
    perm = c.props.ints("perm") or []
    allowed = c.support.perms or ()
    if tuple(perm) not in allowed:
        c.fail(f"perm {perm}", f"supports {', '.join(str(list(p)) for p in allowed)}")


@_rule("modes")
def _modes(c: _Check) -> None:
    mode = c.props.str("mode")
    allowed = c.support.modes or ()
    if mode not in allowed:
        c.fail(f'mode="{mode}"', f"supports {', '.join(allowed)}")


@_rule("coordinate_transformation_modes")
def _coordinate_modes(c: _Check) -> None:
    mode = c.props.str("coordinate_transformation_mode")
    allowed = c.support.coordinate_transformation_modes or ()
    if mode not in allowed:
        c.fail(f'coordinate_transformation_mode="{mode}"', f"supports {', '.join(allowed)}")


@_rule("nearest_modes")
def _nearest_modes(c: _Check) -> None:
    mode = c.props.str("nearest_mode")
    allowed = c.support.nearest_modes or ()
    if c.props.str("mode") == "nearest" and mode not in allowed:
        c.fail(f'nearest_mode="{mode}"', f"supports {', '.join(allowed)}")


def _resized(c: _Check) -> list[tuple[int, float]]:
    """(axis, scale) of every axis a resize scales (scale 1 leaves an axis alone)."""
    scales = c.props.floats("scales") or []
    return [(axis, scale) for axis, scale in enumerate(scales) if not math.isclose(scale, 1.0)]


def _scale_detail(offending: list[tuple[int, float]]) -> str:
    if len(offending) == 1:
        axis, scale = offending[0]
        return f"scale {format_number(_f32(scale))} on axis {axis}"
    scales = _listing([_f32(scale) for _, scale in offending])
    return f"scales {scales} on axes {_listing([axis for axis, _ in offending])}"


def _f32(value: float) -> float:
    """A float32 property value as written (0.3, not 0.30000001192092896)."""
    return float(f"{value:.7g}")


@_rule("scales", "resize")
def _scales(c: _Check) -> None:
    allowed = c.support.scales or ()
    offending = [
        (axis, scale)
        for axis, scale in _resized(c)
        if not any(math.isclose(scale, a, rel_tol=1e-6) for a in allowed)
    ]
    if offending:
        c.fail(_scale_detail(offending), f"supports scales {_listing(allowed)}")


@_rule("min_scale", "resize")
def _min_scale(c: _Check) -> None:
    limit = c.support.min_scale
    assert limit is not None
    offending = [(axis, s) for axis, s in _resized(c) if s < limit * (1 - 1e-6)]
    if offending:
        c.fail(_scale_detail(offending), f"supports scales down to {format_number(limit)}")


@_rule("max_scale", "resize")
def _max_scale(c: _Check) -> None:
    limit = c.support.max_scale
    assert limit is not None
    offending = [(axis, s) for axis, s in _resized(c) if s > limit * (1 + 1e-6)]
    if offending:
        c.fail(_scale_detail(offending), f"supports scales up to {format_number(limit)}")


@_rule("blocksizes", "depth_to_space")
def _blocksizes(c: _Check) -> None:
    blocksize = c.props.int("blocksize")
    allowed = c.support.blocksizes or ()
    if blocksize not in allowed:
        c.fail(f"blocksize {blocksize}", f"supports block sizes {_listing(allowed)}")
