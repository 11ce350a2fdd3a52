"""The QDQ rewriting: a float `nn` function into the QDQ form, from calibration statistics.

The QDQ form is the quantized level before integer lowering: ordinary `nn` ops on
float tensors whose inputs are `quant.dcast`s of quantized values and whose results
feed `quant.qcast`s. It runs in the float interpreter and computes the int8 model's
numbers (fake quantization); `lower-to-qnn` then turns its patterns into `qnn` ops.

What each op becomes depends on its role (`ROLES`):

- **matmul-like** (conv, conv_transpose, gemm, matmul): the activation input is
  quantized per tensor; constant weights per output channel, symmetric over
  [-127, 127] (`weight_axis` says where the output channel is: O for conv, the M/group
  axis for conv_transpose, N for gemm and matmul); the bias becomes an int32 constant
  of scale s_in * s_w per channel. A fused relu or clip needs nothing: the calibrated
  range of the result is already the activated one, and lowering turns the activation
  into clamp bounds.
- **arithmetic** (add, mul, average pooling): inputs and result quantized
  per tensor, each with its own calibrated range; constant operands by their data.
- **lookup** (sigmoid, tanh, hard_swish, ...): int8 in, int8 out, each with its own
  range: lowering makes a 256-entry table of it.
- **normalize** (softmax, layer_norm, lrn): int8 in, int8 out over whole rows of the
  last axis (an LRN's window of channels), the input with its calibrated range, the
  result with its own (over [0, 1] for probabilities); a layer norm's scale and bias
  stay float constants: lowering makes an integer `qnn.softmax` (an exp table, an
  integer sum and reciprocal), `qnn.layer_norm` (integer statistics, gamma and beta
  folded into its weights) or `qnn.lrn` (window sums of squares, their function
  through a table by octave).
- **shared** (max pooling, reshape, transpose, pad, slice, split, squeeze, unsqueeze,
  flatten, resize, depth_to_space, relu, clip, identity): the op moves or selects
  values, or (a linear resize) interpolates between them, so its results have the
  scale and zero point of its input.
- **concat**: its inputs and its result share one type, over the union of their ranges.

Shared scales are found with a union-find over values: a shared op joins its results
to its input, a concat joins its inputs to its result; every group gets one type,
over the union of its members' calibrated ranges. Each quantized value gets one
`quant.qcast` + `quant.dcast` pair after its definition; quantized ops read the
`dcast`, and so does every other reader of a value that a quantized op computes
(its float value no longer exists in the int8 model).

An op stays float, between `dcast` and `qcast`, when it has no quantized form
(log_softmax, ...), when it is excluded by name (`exclude-names`: its location name,
the ONNX node name, or `file:line:col` for parsed IR) or by op type (`exclude-ops`:
`conv` or `nn.conv`), when its weights or bias are not constants, when its fused
activation is not a clamp (leaky_relu, hard_swish, sigmoid: run `graph-opt
{activations=relu,clip}` before quantizing so that they stay separate and get a
table), or when a value it needs has no calibration statistics. The pass emits one
remark per function with the counts, and a note at each op that stays float with
its reason.

`quantize_module` is the Python entry point (used by the `quantize` pass,
irc/transforms/quantize.py, whose docstring shows the IR before and after, by
`irc-quantize`, the driver and mixed precision).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Literal, Protocol

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, NameLoc, StringAttr, TensorType, f32, i64
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from irc.diagnostics import Diagnostic, Location, Severity, error
from irc.dialects import nn, quant
from irc.dialects.base import tensor_type
from irc.dialects.quant import UniformQuantizedType
from irc.interp.quant import dequantized_parts
from irc.ir import fixed_point
from irc.ir.constants import constant_array
from irc.ir.placement import FLOAT_REASON_ATTR
from irc.quantize import scheme

if TYPE_CHECKING:
    from irc.quantize.calibration import TensorStats


class RangeSource(Protocol):
    """Where calibrated ranges come from (`CalibrationStats`): the statistics of a
    tensor by its `value_key`, with its calibrated `range`, or None."""

    def get(self, key: str | None) -> TensorStats | None: ...


# --------------------------------------------------------------------------------------
# Roles


class Role(StrEnum):
    """How an op is quantized."""

    MATMUL = "matmul"
    """int8 products summed in int32: weights per channel, an int32 bias."""
    ARITHMETIC = "arithmetic"
    """Inputs and result per tensor, each with its own range."""
    LOOKUP = "lookup"
    """An elementwise function of one int8 input: a lookup table."""
    NORMALIZE = "normalize"
    """A function of whole rows of one int8 input (softmax, layer norm, LRN): input
    and result per tensor, each with its own range."""
    SHARED = "shared"
    """Moves or selects values: the results have the input's type."""
    CONCAT = "concat"
    """Inputs and result share one type over the union of their ranges."""


ROLES: dict[type[Operation], Role] = {
    nn.ConvOp: Role.MATMUL,
    nn.ConvTransposeOp: Role.MATMUL,
    nn.GemmOp: Role.MATMUL,
    nn.MatMulOp: Role.MATMUL,
    nn.AddOp: Role.ARITHMETIC,
    nn.MulOp: Role.ARITHMETIC,
    nn.DivOp: Role.ARITHMETIC,
    nn.AveragePoolOp: Role.ARITHMETIC,
    nn.GlobalAveragePoolOp: Role.ARITHMETIC,
    nn.ReduceMeanOp: Role.ARITHMETIC,
    nn.ReduceSumOp: Role.ARITHMETIC,
    nn.SigmoidOp: Role.LOOKUP,
    nn.TanhOp: Role.LOOKUP,
    nn.HardSwishOp: Role.LOOKUP,
    nn.HardSigmoidOp: Role.LOOKUP,
    nn.LeakyReluOp: Role.LOOKUP,
    nn.EluOp: Role.LOOKUP,
    nn.CeluOp: Role.LOOKUP,
    nn.SeluOp: Role.LOOKUP,
    nn.GeluOp: Role.LOOKUP,
    nn.SoftplusOp: Role.LOOKUP,
    nn.SoftsignOp: Role.LOOKUP,
    nn.MishOp: Role.LOOKUP,
    nn.ExpOp: Role.LOOKUP,
    nn.ErfOp: Role.LOOKUP,
    nn.SoftmaxOp: Role.NORMALIZE,
    nn.MaskedSoftmaxOp: Role.NORMALIZE,
    nn.LayerNormOp: Role.NORMALIZE,
    nn.LRNOp: Role.NORMALIZE,
    nn.MaxPoolOp: Role.SHARED,
    nn.GlobalMaxPoolOp: Role.SHARED,
    nn.ReduceMaxOp: Role.SHARED,
    nn.ReshapeOp: Role.SHARED,
    nn.FlattenOp: Role.SHARED,
    nn.SqueezeOp: Role.SHARED,
    nn.UnsqueezeOp: Role.SHARED,
    nn.TransposeOp: Role.SHARED,
    nn.SliceOp: Role.SHARED,
    nn.SplitOp: Role.SHARED,
    nn.PadOp: Role.SHARED,
    nn.ResizeOp: Role.SHARED,
    nn.DepthToSpaceOp: Role.SHARED,
    nn.ReluOp: Role.SHARED,
    nn.ClipOp: Role.SHARED,
    nn.IdentityOp: Role.SHARED,
    nn.ConcatOp: Role.CONCAT,
}
"""The ops that have a quantized form, and how they are quantized. Every other op
stays float."""

CLAMP_ACTIVATIONS = ("relu", "clip")
"""Fused activations that become clamp bounds of the integer op's requantization."""


def weight_axis(op: nn.NNOp) -> int | None:
    """The output-channel axis of a matmul-like op's weight (operand 1), or None for a
    weight without one (a 1-D matmul operand): per-channel scales run along it.

    conv: O of (O, I/g, k...) and of channels-last (O, k..., I/g); conv_transpose: the
    M/g axis of (I, M/g, k...), last in channels-last (I, k..., M/g), whose scales are
    shared by the groups; gemm: N of B, axis 0 with trans_b (N, K), else 1; matmul: the
    last axis of the right operand.
    """
    rank = len(tensor_type(op.operands[1]).get_shape())
    if isinstance(op, nn.ConvOp):
        return 0
    if isinstance(op, nn.ConvTransposeOp):
        return rank - 1 if op.props().str("layout") == "nhwc" else 1
    if isinstance(op, nn.GemmOp):
        return 0 if op.props().bool("trans_b") else 1
    if isinstance(op, nn.MatMulOp):
        return rank - 1 if rank >= 2 else None
    raise ValueError(f"{op.name} has no weight")


def layer_name(op: Operation) -> str:
    """The name an op is excluded by: its location name (the ONNX node name), or
    `file:line:col` for parsed IR without names."""
    location = Location.of(op)
    if location.name is not None:
        return location.name
    if location.line is not None:
        return f"{location.file or '<input>'}:{location.line}:{location.col or 1}"
    return ""


def op_type_matches(op: Operation, names: Iterable[str]) -> bool:
    """Whether `op` is one of the op types `names` (`conv` or `nn.conv`)."""
    short = op.name.removeprefix("nn.")
    return any(name in (op.name, short) for name in names)


# --------------------------------------------------------------------------------------
# Configuration and plan


@dataclass(frozen=True)
class QuantizeConfig:
    """What to quantize and how (the options of the pass)."""

    exclude_names: frozenset[str] = frozenset()
    """Ops that stay float, by `layer_name`."""
    exclude_ops: frozenset[str] = frozenset()
    """Op types that stay float (`conv` or `nn.conv`)."""
    activations: Literal["int8", "uint8", "int16"] = "int8"
    """The storage type of activations (int16: symmetric, zero point 0, with 8-bit
    weights and wide accumulators)."""
    int16_names: frozenset[str] = frozenset()
    """Ops (by `layer_name`) whose activations are int16 whatever `activations` says."""
    int16_ops: frozenset[str] = frozenset()
    """Op types (`conv` or `nn.conv`) whose activations are int16."""
    per_channel: bool = True
    """Weights per output channel (else one scale per weight tensor)."""
    keep_float: Callable[[Operation], bool] | None = None
    """Further ops to keep float (mixed precision's automatic mode)."""
    keep_sixteen: Callable[[Operation], bool] | None = None
    """Further ops whose activations are int16 (mixed precision's automatic mode with
    the int16 fallback)."""
    bias_correction: bool = True
    """Correct conv and gemm biases for the mean error of their int8 weights."""


@dataclass
class FunctionPlan:
    """What `quantize` does to one function: the quantized ops, the type of every
    quantized value, and why each other compute op stays float."""

    function: FuncOp
    quantized: list[Operation] = field(default_factory=list)
    types: dict[SSAValue, UniformQuantizedType] = field(default_factory=dict)
    float_reasons: dict[Operation, str] = field(default_factory=dict)
    channel_means: dict[SSAValue, np.ndarray] = field(default_factory=dict)
    """The calibrated per-channel means of conv and gemm inputs (bias correction)."""

    @property
    def float_ops(self) -> list[Operation]:
        """The compute ops that stay float, in program order."""
        return list(self.float_reasons)


@dataclass
class QuantizeSummary:
    """What `quantize_module` did: every function's plan."""

    plans: list[FunctionPlan] = field(default_factory=list)

    @property
    def quantized_ops(self) -> list[Operation]:
        """Every quantized op, in program order."""
        return [op for plan in self.plans for op in plan.quantized]

    @property
    def float_reasons(self) -> dict[Operation, str]:
        """Every compute op that stays float, with its reason."""
        return {op: reason for plan in self.plans for op, reason in plan.float_reasons.items()}


def _is_constant(value: SSAValue) -> bool:
    return isinstance(value.owner, nn.ConstantOp)


def _is_f32_tensor(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and value.type.get_element_type() == f32


def _weight_operands(op: Operation) -> tuple[int, ...]:
    """Operands of a matmul-like op quantized as weights and bias (not as activations)."""
    if isinstance(op, nn.ConvOp | nn.ConvTransposeOp | nn.GemmOp):
        return (1, 2)
    if isinstance(op, nn.MatMulOp) and _is_constant(op.operands[1]):
        return (1,)
    if isinstance(op, nn.LayerNormOp):
        return (1, 2)  # gamma and beta: float constants the lowering folds in
    if isinstance(op, nn.DivOp):
        return (1,)  # the divisor: a constant the requantization folds in
    if isinstance(op, nn.MaskedSoftmaxOp):
        return (1,)  # the mask: i1, not a number
    return ()


def activation_operands(op: Operation) -> list[SSAValue]:
    """The operands of a quantized op that are quantized per tensor as activations."""
    weights = _weight_operands(op)
    return [value for index, value in enumerate(op.operands) if index not in weights]


def _quantized_values(op: Operation) -> list[SSAValue]:
    """The values a quantized op quantizes per tensor: its activation operands and results."""
    return [*activation_operands(op), *op.results]


NOT_A_POSITIVE_DIVISOR = "it divides by something other than a positive constant scalar"


def positive_divisor(op: nn.DivOp) -> float | None:
    """The divisor of `x / c` when c is a finite positive constant scalar (the division
    is then a rescale of x by 1 / c), else None."""
    divisor = constant_array(op.operands[1])
    if divisor is None or divisor.size != 1:
        return None
    value = float(divisor.reshape(-1)[0])
    return value if np.isfinite(value) and value > 0 else None


def _structural_problem(op: nn.NNOp, role: Role) -> str | None:
    """Why the op's form rules out its quantized form, or None."""
    activation = op.properties.get("activation")
    if isinstance(activation, nn.ActivationAttr) and activation.kind.data not in CLAMP_ACTIVATIONS:
        return (
            f"its fused activation {activation.kind.data} is not a clamp (keep it a separate "
            "op: graph-opt{activations=relu,clip})"
        )
    if role is Role.MATMUL:
        needs_constant = [1, 2] if not isinstance(op, nn.MatMulOp) else []
        for index in needs_constant:
            if index < len(op.operands) and constant_array(op.operands[index]) is None:
                what = "weights" if index == 1 else "bias"
                return f"its {what} are not constants with data"
    if isinstance(op, nn.DivOp) and positive_divisor(op) is None:
        return NOT_A_POSITIVE_DIVISOR
    if isinstance(op, nn.MaskedSoftmaxOp) and constant_array(op.operands[1]) is None:
        return "its mask is not a constant with data"
    if isinstance(op, nn.SoftmaxOp | nn.MaskedSoftmaxOp | nn.LayerNormOp):
        rank = len(tensor_type(op.operands[0]).get_shape())
        axis = op.props().int("axis")
        if axis is not None and axis % max(rank, 1) != rank - 1:
            return f"its axis {axis} is not the last: the integer {op.name[3:]} normalizes rows"
    if isinstance(op, nn.LayerNormOp):
        for value in op.operands[1:]:
            if constant_array(value) is None:
                return "its scale and bias are not constants with data"
    if isinstance(op, nn.ResizeOp):
        mode, coordinates = op.props().str("mode"), op.props().str("coordinate_transformation_mode")
        if mode == "cubic":
            return 'resize mode "cubic" has no integer form (nearest and linear do)'
        if mode == "linear" and coordinates not in fixed_point.LINEAR_RESIZE_MODES:
            return f'a linear resize in "{coordinates}" coordinates has no integer form'
    numbers = op.operands[:1] if isinstance(op, nn.MaskedSoftmaxOp) else op.operands
    for value in [*numbers, *op.results]:
        if not _is_f32_tensor(value):
            return f"it computes on {tensor_type(value).get_element_type()}, not f32"
    return None


class _Groups:
    """Union-find over values: the groups of values that share one quantized type."""

    def __init__(self) -> None:
        self.parent: dict[SSAValue, SSAValue] = {}

    def find(self, value: SSAValue) -> SSAValue:
        root = value
        while self.parent.get(root, root) is not root:
            root = self.parent[root]
        while value is not root:  # path compression
            self.parent[value], value = root, self.parent.get(value, root)
        return root

    def union(self, first: SSAValue, second: SSAValue) -> None:
        for value in (first, second):
            self.parent.setdefault(value, value)
        first_root, second_root = self.find(first), self.find(second)
        if first_root is not second_root:
            self.parent[second_root] = first_root

    def members(self, value: SSAValue) -> bool:
        return value in self.parent


def _value_range(
    value: SSAValue, stats: RangeSource, key: str | None
) -> tuple[float, float] | None:
    """The calibrated range of a value, or the data range of a constant."""
    data = constant_array(value)
    if data is not None:
        if data.size == 0:
            return None
        return float(np.min(data)), float(np.max(data))
    found = stats.get(key)
    if found is None:
        return None
    low, high = (float(bound) for bound in found.range)
    if not (math.isfinite(low) and math.isfinite(high)) or low > high:
        return None
    return low, high


def plan_function(function: FuncOp, stats: RangeSource, config: QuantizeConfig) -> FunctionPlan:
    """Decide which ops of `function` are quantized and the type of every quantized
    value (see the module docstring), without changing the IR.

    A value's statistics are found by its `value_key`, for the values calibration
    observes (`observed_values`: of several ops sharing a location, the last one).
    """
    from irc.quantize.calibration import observed_values

    plan = FunctionPlan(function)
    block = function.body.blocks.first
    if block is None:
        return plan
    keys = observed_values(function)
    ops = [op for op in block.ops if isinstance(op, nn.NNOp) and not isinstance(op, nn.ConstantOp)]

    # 1. The candidates: ops with a quantized form that the options do not exclude.
    candidates: list[nn.NNOp] = []
    for op in ops:
        role = ROLES.get(type(op))
        name = layer_name(op)
        if role is None:
            plan.float_reasons[op] = f"{op.name} has no quantized form"
        elif excluded := [n for n in [name, *location_names(op)] if n in config.exclude_names]:
            plan.float_reasons[op] = f"excluded by name ('{excluded[0]}')"
        elif op_type_matches(op, config.exclude_ops):
            plan.float_reasons[op] = f"excluded by op type ({op.name})"
        elif config.keep_float is not None and config.keep_float(op):
            plan.float_reasons[op] = "kept float by mixed precision"
        elif (problem := _structural_problem(op, role)) is not None:
            plan.float_reasons[op] = problem
        else:
            candidates.append(op)

    # 2. Shared scales: one group per set of values that must have one type.
    groups = _Groups()
    for op in candidates:
        role = ROLES[type(op)]
        if role is Role.SHARED:
            for result in op.results:
                groups.union(op.operands[0], result)
        elif role is Role.CONCAT:
            for operand in op.operands:
                groups.union(op.results[0], operand)

    ranges: dict[SSAValue, tuple[float, float]] = {}

    def own_range(value: SSAValue) -> tuple[float, float] | None:
        if value not in ranges:
            if isinstance(value.owner, nn.SoftmaxOp | nn.MaskedSoftmaxOp):
                # Probabilities lie in [0, 1]: the whole interval, as TFLite and
                # onnxruntime quantize them; a calibrated maximum below 1 would
                # saturate the confident rows of inputs calibration did not see.
                ranges[value] = (0.0, 1.0)
                return ranges[value]
            found = _value_range(value, stats, keys.get(value))
            if found is None:
                return None
            ranges[value] = found
        return ranges[value]

    group_ranges: dict[SSAValue, tuple[float, float]] = {}
    for value in list(groups.parent):
        found = own_range(value)
        if found is None:
            continue
        root = groups.find(value)
        low, high = group_ranges.get(root, found)
        group_ranges[root] = (min(low, found[0]), max(high, found[1]))

    def range_of(value: SSAValue) -> tuple[float, float] | None:
        if groups.members(value):
            return group_ranges.get(groups.find(value))
        return own_range(value)

    # 3. Feasibility: every value the op quantizes has a range.
    feasible: list[nn.NNOp] = []
    for op in candidates:
        missing = [value for value in _quantized_values(op) if range_of(value) is None]
        if missing:
            key = keys.get(missing[0])
            what = f"'{key}'" if key else f"{missing[0].name_hint or 'a value'} (it has no name)"
            plan.float_reasons[op] = f"no calibration statistics for {what}"
        else:
            feasible.append(op)

    # 4. Ops that only move values are quantized where int8 values flow: a group of
    #    shared values that no quantized computing op reads or writes stays float (a
    #    reshape between a float softmax and the output is not worth an int8 round trip).
    touched = {
        groups.find(value)
        for op in feasible
        if ROLES[type(op)] not in (Role.SHARED, Role.CONCAT)
        for value in _quantized_values(op)
        if groups.members(value)
    }
    signed = config.activations != "uint8"
    sixteen = _sixteen_bit_roots(feasible, groups, config)
    for op in feasible:
        if (
            ROLES[type(op)] in (Role.SHARED, Role.CONCAT)
            and groups.find(op.results[0]) not in touched
        ):
            plan.float_reasons[op] = (
                "it only moves float values (no quantized op reads or writes them)"
            )
            continue
        plan.quantized.append(op)
        if isinstance(op, nn.ConvOp | nn.GemmOp):
            input_stats = stats.get(keys.get(op.operands[0]))
            if input_stats is not None and input_stats.channel_mean is not None:
                plan.channel_means[op.operands[0]] = np.array(input_stats.channel_mean)
        for value in _quantized_values(op):
            if value not in plan.types:
                low, high = range_of(value)  # type: ignore[misc]
                root = groups.find(value) if groups.members(value) else value
                if root in sixteen:
                    plan.types[value] = scheme.symmetric_activation_type(low, high, bits=16)
                else:
                    plan.types[value] = scheme.activation_type(low, high, signed=signed)
    # Keep the float reasons in program order.
    order: dict[Operation, int] = {op: index for index, op in enumerate(ops)}
    plan.float_reasons = dict(sorted(plan.float_reasons.items(), key=lambda item: order[item[0]]))
    return plan


def is_sixteen_bit(op: Operation, config: QuantizeConfig) -> bool:
    """Whether `op`'s activations are int16 under `config` (all of them, or `op` by
    name or op type)."""
    if config.activations == "int16":
        return True
    if config.keep_sixteen is not None and config.keep_sixteen(op):
        return True
    names = [layer_name(op), *location_names(op)]
    return any(name in config.int16_names for name in names) or op_type_matches(
        op, config.int16_ops
    )


def _sixteen_bit_roots(
    ops: Iterable[Operation], groups: _Groups, config: QuantizeConfig
) -> set[SSAValue]:
    """The values (group roots, for values in a group) that are int16: every value an
    int16 op quantizes, and with it its whole group of shared values. An int8 op
    reading or writing one of them becomes a 16x8 op there (a conv with an int16
    input, or an int8 conv whose result is int16)."""
    roots: set[SSAValue] = set()
    for op in ops:
        if not is_sixteen_bit(op, config):
            continue
        for value in _quantized_values(op):
            roots.add(groups.find(value) if groups.members(value) else value)
    return roots


# --------------------------------------------------------------------------------------
# Rewriting


def _tensor_of(value_type: Attribute, element: Attribute) -> TensorType:
    assert isinstance(value_type, TensorType)
    return TensorType(element, value_type.get_shape())


def _name(value: SSAValue, suffix: str) -> str | None:
    return f"{value.name_hint}_{suffix}" if value.name_hint else None


def _stored_constant(
    data: np.ndarray,
    element: UniformQuantizedType,
    location: Attribute,
    name: str | None,
) -> list[Operation]:
    """Ops that make a quantized constant: stored integers -> scast -> dcast."""
    stored = nn.ConstantOp.from_array(data, location=location)  # type: ignore[arg-type]
    stored_type = tensor_type(stored.result)
    scast = quant.StorageCastOp(
        operands=[stored.result], result_types=[_tensor_of(stored_type, element)]
    )
    dcast = quant.DequantizeCastOp(
        operands=[scast.result], result_types=[_tensor_of(stored_type, element.expressed_type)]
    )
    for op in (scast, dcast):
        op.location = location  # type: ignore[assignment]
    if name:
        stored.result.name_hint = f"{name}_i"
        dcast.result.name_hint = f"{name}_q"
    return [stored, scast, dcast]


def _activation_constant(
    value: SSAValue, element: UniformQuantizedType
) -> tuple[list[Operation], SSAValue]:
    """A constant operand quantized as an activation (its stored data, scast, dcast)."""
    data = constant_array(value)
    assert data is not None and isinstance(value.owner, nn.ConstantOp)
    from irc.interp.quant import quantize

    ops = _stored_constant(
        quantize(np.asarray(data, dtype=np.float32), element),
        element,
        value.owner.location,
        value.name_hint,
    )
    return ops, ops[-1].results[0]


def _quantize_value(
    value: SSAValue, element: UniformQuantizedType, readers: Callable[[Operation], bool]
) -> None:
    """Insert qcast + dcast after the definition of `value`; the ops `readers` selects
    read the dcast instead of `value`."""
    value_type = tensor_type(value)
    qcast = quant.QuantizeCastOp(operands=[value], result_types=[_tensor_of(value_type, element)])
    dcast = quant.DequantizeCastOp(operands=[qcast.result], result_types=[value_type])
    from irc.quantize.calibration import value_key

    owner = value.owner
    if isinstance(owner, Operation):
        parent = owner.location
        Rewriter.insert_op([qcast, dcast], InsertPoint.after(owner))
    else:
        assert isinstance(owner, Block)
        function = owner.parent_op()
        parent = function.location if function is not None else qcast.location
        Rewriter.insert_op([qcast, dcast], _after_earlier_arguments(owner, value))
    tensor = (value_key(value) or "").removesuffix("#0")
    # A qcast of a result stands for its producer's quantized output and keeps its
    # name; the casts of an argument and every dcast are named after the tensor they
    # convert (`arg:image/quantize`, `/fc/Gemm/dequantize`), so one left standing as a
    # layer of its own is not confused with its producer in reports.
    qcast.location = parent
    if isinstance(owner, Block) and tensor:
        qcast.location = NameLoc(StringAttr(f"{tensor}/quantize"), parent)
    dcast.location = NameLoc(StringAttr(f"{tensor}/dequantize"), parent) if tensor else parent
    qcast.result.name_hint = _name(value, "q")
    dcast.result.name_hint = _name(value, "dq")
    value.replace_uses_with_if(
        dcast.result, lambda use: use.operation is not qcast and readers(use.operation)
    )


def _after_earlier_arguments(block: Block, argument: SSAValue) -> InsertPoint:
    """Where the casts of a block argument go: after those of the arguments before it,
    so that the casts read in argument order."""

    def cast_argument_index(op: Operation) -> int | None:
        if isinstance(op, quant.DequantizeCastOp):
            op = op.input.owner  # type: ignore[assignment]
        if isinstance(op, quant.QuantizeCastOp) and isinstance(op.input, BlockArgument):
            return op.input.index
        return None

    assert isinstance(argument, BlockArgument)
    for op in block.ops:
        index = cast_argument_index(op)
        if index is None or index > argument.index:
            return InsertPoint.before(op)
    return InsertPoint.at_end(block)


def _input_scale(plan: FunctionPlan, op: Operation) -> float:
    element = plan.types[op.operands[0]]
    return element.scale_values[0]


def _quantize_weights(op: nn.NNOp, plan: FunctionPlan, config: QuantizeConfig) -> None:
    """Replace the constant weight and bias of a matmul-like op by their stored forms.

    A gemm's alpha and beta are folded into its weight and bias first (the integer op
    has neither).
    """
    weight_value = op.operands[1]
    weight = constant_array(weight_value)
    if weight is None:
        return  # a matmul of two activations
    weight = np.asarray(weight, dtype=np.float32)
    props = op.props()
    bias_value = op.operands[2] if len(op.operands) > 2 else None
    bias = None if bias_value is None else np.asarray(constant_array(bias_value), np.float32)
    if isinstance(op, nn.GemmOp):
        alpha, beta = props.float("alpha"), props.float("beta")
        if alpha != 1.0:
            weight = (np.float32(alpha) * weight).astype(np.float32)
        if bias is not None and beta != 1.0:
            bias = (np.float32(beta) * bias).astype(np.float32)
        for name in ("alpha", "beta"):
            op.properties.pop(name, None)
    axis = weight_axis(op)
    if config.per_channel and axis is not None:
        stored_weight, weight_element = scheme.quantize_weights(weight, axis)
    else:
        stored_weight, weight_element = scheme.quantize_weights(weight.reshape(1, -1), 0)
        stored_weight = stored_weight.reshape(weight.shape)
        weight_element = UniformQuantizedType.make(
            weight_element.scale_values[0], 0, storage_range=scheme.WEIGHT_RANGE
        )
    weight_scales = np.asarray(weight_element.scale_values, dtype=np.float32)
    mean = plan.channel_means.get(op.operands[0])
    if config.bias_correction and bias is not None and mean is not None:
        errors = _weight_error(weight, stored_weight, weight_element)
        correction = _error_correction(op, errors, weight.shape, mean)
        if correction is not None:
            bias = (bias.astype(np.float64) - correction).astype(np.float32)
    insert_at = InsertPoint.before(op)
    assert isinstance(weight_value.owner, nn.ConstantOp)
    weight_ops = _stored_constant(
        stored_weight, weight_element, weight_value.owner.location, weight_value.name_hint
    )
    Rewriter.insert_op(weight_ops, insert_at)
    operands = list(op.operands)
    operands[1] = weight_ops[-1].results[0]
    if bias is not None and bias_value is not None:
        assert isinstance(bias_value.owner, nn.ConstantOp)
        input_bits = plan.types[op.operands[0]].storage_bits.data
        bias_data, bias_element = _bias(
            op, bias, weight_scales, _input_scale(plan, op), 64 if input_bits > 8 else 32
        )
        bias_ops = _stored_constant(
            bias_data, bias_element, bias_value.owner.location, bias_value.name_hint
        )
        Rewriter.insert_op(bias_ops, insert_at)
        operands[2] = bias_ops[-1].results[0]
    old = [value for value in op.operands[1:]]
    op.operands = operands
    for value in old:
        if isinstance(value.owner, nn.ConstantOp) and not value.uses:
            Rewriter.erase_op(value.owner)


def bias_correction(
    op: nn.NNOp, weight: np.ndarray, dequantized: np.ndarray, mean: np.ndarray
) -> np.ndarray | None:
    """E[(W_q - W) x] per output channel of a conv or gemm, from its input's mean per
    channel: the mean shift that rounding the weights adds to each output channel,
    which subtracting it from the bias removes. None when the shapes do not match (or
    for another op).

    For a conv the weight errors are summed over the kernel taps (a padded border,
    where fewer taps see the input, is treated like the interior) and each output
    channel's sum is dotted with the means of its group's input channels; for a gemm
    the error of op(B) (K x N) is dotted with the means of A's K columns.
    """
    error = dequantized.astype(np.float64) - weight.astype(np.float64)
    return _error_correction(op, [((), error)], weight.shape, mean)


def _weight_error(
    weight: np.ndarray, stored: np.ndarray, element: UniformQuantizedType
) -> Iterator[tuple[tuple[slice, ...], np.ndarray]]:
    """W_q - W in float64, W_q the dequantized `stored`, a slice at a time
    (`dequantized_parts`): (index, error of that slice) pairs. Whole, the error and
    the dequantized weight in float64 took 1.2 GB on ZFNet-512's gemm weight. The same
    numbers as in `bias_correction`."""
    for index, dequantized in dequantized_parts(stored, element):
        yield index, dequantized.astype(np.float64) - weight[index].astype(np.float64)


def _error_correction(
    op: nn.NNOp,
    errors: Iterable[tuple[tuple[slice, ...], np.ndarray]],
    shape: tuple[int, ...],
    mean: np.ndarray,
) -> np.ndarray | None:
    """`bias_correction` from the weight error W_q - W (of `shape`) in float64, given
    as (index, error[index]) slices: the correction is linear in the error, so each
    slice adds its part."""

    def ranges(index: tuple[slice, ...]) -> list[np.ndarray]:
        full = (*index, *[slice(None)] * (len(shape) - len(index)))
        return [np.arange(length)[part] for length, part in zip(shape, full)]

    if isinstance(op, nn.ConvOp):
        channels_last = op.props().str("layout") == "nhwc"
        in_axis = len(shape) - 1 if channels_last else 1
        taps = tuple(axis for axis in range(1, len(shape)) if axis != in_axis)
        out_channels, per_group = shape[0], shape[in_axis]
        groups = op.props().int("group") or 1
        if per_group * groups != mean.size or out_channels % groups:
            return None
        group_of = np.arange(out_channels) // (out_channels // groups)
        means = mean.reshape(groups, per_group)
        correction = np.zeros(out_channels)
        for index, error in errors:
            axes = ranges(index)
            outputs, inputs = axes[0], axes[in_axis]
            per_input = error.sum(axis=taps)  # (O, I/group) of the slice
            correction[outputs] += np.einsum(
                "oi,oi->o", per_input, means[group_of[outputs]][:, inputs]
            )
        return correction
    if isinstance(op, nn.GemmOp):
        trans_b = op.props().bool("trans_b")
        k_axis = 1 if trans_b else 0
        if shape[k_axis] != mean.size:
            return None
        correction = np.zeros(shape[1 - k_axis])
        for index, error in errors:
            axes = ranges(index)
            matrix = error.T if trans_b else error  # (K, N) of the slice
            correction[axes[1 - k_axis]] += mean[axes[k_axis]] @ matrix
        return correction
    return None


def _bias(
    op: nn.NNOp, bias: np.ndarray, weight_scales: np.ndarray, input_scale: float, bits: int = 32
) -> tuple[np.ndarray, UniformQuantizedType]:
    """The int32 bias of a matmul-like op and its type (scale s_in * s_w per channel);
    int64 (`bits` 64, values within 48 bits) for a 16-bit input."""
    channels = tensor_type(op.results[0]).get_shape()
    if isinstance(op, nn.GemmOp):
        rows, columns = channels
        full = np.broadcast_to(bias, (rows, columns))
        bias = full[0] if np.all(full == full[:1]) else np.ascontiguousarray(full)
        count = columns
    else:
        count = bias.shape[0]
    per_channel = weight_scales.size > 1
    if per_channel and weight_scales.size != count:  # grouped conv_transpose: M/g scales
        weight_scales = np.tile(weight_scales, count // weight_scales.size)
    scales = scheme.bias_scales(input_scale, weight_scales)
    data = scheme.quantize_bias(
        bias, input_scale, weight_scales if per_channel else weight_scales[0], bits
    )
    if per_channel:
        element = UniformQuantizedType.make(
            [float(s) for s in scales], 0, bits=bits, axis=bias.ndim - 1
        )
    else:
        element = UniformQuantizedType.make(float(scales.reshape(-1)[0]), 0, bits=bits)
    return data, element


def rewrite_function(plan: FunctionPlan, config: QuantizeConfig) -> None:
    """Rewrite the function of `plan` into the QDQ form the plan describes."""
    quantized = set(plan.quantized)
    # Weights first: their stored forms need the input scale, and the old float
    # constants must be gone before constants are quantized as activations.
    for op in plan.quantized:
        if ROLES[type(op)] is Role.MATMUL:
            assert isinstance(op, nn.NNOp)
            _quantize_weights(op, plan, config)
    for value, element in plan.types.items():
        producer = value.owner if isinstance(value.owner, Operation) else None
        if producer is not None and producer in quantized:
            # The float value no longer exists: every reader gets the dequantized one.
            _quantize_value(value, element, lambda reader: True)
        elif _is_constant(value):
            ops, replacement = _activation_constant(value, element)
            assert producer is not None
            Rewriter.insert_op(ops, InsertPoint.after(producer))
            value.replace_uses_with_if(replacement, lambda use: use.operation in quantized)
            if not value.uses:
                Rewriter.erase_op(producer)
        else:
            _quantize_value(value, element, lambda reader: reader in quantized)


def quantize_module(
    module: ModuleOp, stats: RangeSource, config: QuantizeConfig | None = None
) -> QuantizeSummary:
    """Rewrite every function of `module` into the QDQ form (see the module docstring)."""
    config = config or QuantizeConfig()
    summary = QuantizeSummary()
    functions = [op for op in module.ops if isinstance(op, FuncOp)]
    for function in functions:
        plan = plan_function(function, stats, config)
        rewrite_function(plan, config)
        for op, reason in plan.float_reasons.items():
            # Why it stays float: what the partition's reasons quote.
            op.attributes[FLOAT_REASON_ATTR] = StringAttr(reason)
        summary.plans.append(plan)
    return summary


def _channel_vector(value: SSAValue, rank: int) -> tuple[np.ndarray, int] | None:
    """A constant that varies along one axis only, broadcast against a tensor of
    `rank` with its channels on axis 1 or last: (its values along that axis, the axis)."""
    data = constant_array(value)
    if data is None or data.ndim > rank:
        return None
    shape = (1,) * (rank - data.ndim) + tuple(data.shape)
    varying = [axis for axis, size in enumerate(shape) if size != 1]
    if len(varying) != 1 or varying[0] not in (1, rank - 1):
        return None
    return np.asarray(data, dtype=np.float32).reshape(-1), varying[0]


def affine_to_depthwise(module: ModuleOp) -> int:
    """Turn per-channel `x * s + t` by constants into depthwise 1x1 convolutions; the
    number of rewrites.

    A batch norm that cannot be folded into a conv (it follows a concat, as in
    DenseNet) becomes a per-channel mul and add, and some exporters write batch norms
    that way (Inception v2). Quantized as they are, the mul's result is rounded to
    int8 before the add: two roundings. As a depthwise conv with weights s and bias
    t (one weight per channel, which symmetric per-channel int8 stores exactly, as
    +-127) it is rounded once, with the add's fused activation as its clamp. The
    conv takes the location of the op whose result it computes (the add's, or the
    mul's when there is no add), so calibration statistics of that result apply to
    it; run before calibrating (`prepare_for_calibration`).
    """
    rewrites = 0
    for mul in [op for op in module.walk() if isinstance(op, nn.MulOp)]:
        x, scale = mul.operands
        rank = len(tensor_type(x).get_shape())
        if constant_array(x) is not None or rank < 3 or not _is_f32_tensor(x):
            continue
        found = _channel_vector(scale, rank)
        if found is None or tensor_type(mul.results[0]) != tensor_type(x):
            continue
        weights, axis = found
        last: nn.NNOp = mul
        bias = None
        user = mul.results[0].get_user_of_unique_use()
        if isinstance(user, nn.AddOp) and user.operands[0] is mul.results[0]:
            shift = _channel_vector(user.operands[1], rank)
            activation = user.properties.get("activation")
            clamp = activation is None or (
                isinstance(activation, nn.ActivationAttr)
                and activation.kind.data in CLAMP_ACTIVATIONS
            )
            same_type = tensor_type(user.results[0]) == tensor_type(x)
            if shift is not None and shift[1] == axis and clamp and same_type:
                last, bias = user, shift[0]
        channels = tensor_type(x).get_shape()[axis]
        weights = np.broadcast_to(weights, (channels,))
        layout = "nhwc" if axis == rank - 1 else "nchw"
        kernel = np.ascontiguousarray(weights.reshape((channels,) + (1,) * (rank - 1)))
        operands = [x, nn.ConstantOp.from_array(kernel, location=mul.location).result]
        if bias is not None:
            shift_op = nn.ConstantOp.from_array(
                np.ascontiguousarray(np.broadcast_to(bias, (channels,))), location=last.location
            )
            operands.append(shift_op.result)
        properties: dict[str, Attribute | None] = {
            "group": IntegerAttr(channels, i64),
            "layout": StringAttr(layout) if layout == "nhwc" else None,
            "activation": last.properties.get("activation") if last is not mul else None,
        }
        conv = nn.ConvOp.build(operands, properties, location=last.location)
        constants = [value.owner for value in operands[1:]]
        Rewriter.insert_op([*constants, conv], InsertPoint.before(last))  # type: ignore[list-item]
        conv.result.name_hint = last.results[0].name_hint
        last.results[0].replace_all_uses_with(conv.result)
        for op in (last, mul) if last is not mul else (mul,):
            Rewriter.erase_op(op)
        rewrites += 1
    return rewrites


def prepare_for_calibration(module: ModuleOp) -> tuple[int, int]:
    """What `irc-quantize` does to a module after the graph passes and before
    calibrating it: `affine_to_depthwise`, then `unique_locations`; the counts."""
    return affine_to_depthwise(module), unique_locations(module)


def unique_locations(module: ModuleOp) -> int:
    """Give distinct names to ops that share a location; the number of ops renamed.

    Calibration names a tensor by its op's location (`value_key`), and when several
    ops share one (fold-batchnorm's mul and add keep the batch norm's name, the
    transposes of convert-layout their conv's), only the last op in program order
    gets statistics. Renaming the others `NAME.OP` (`bn1.mul`, `conv1.transpose`;
    `.2`, `.3`, ... if needed) before calibrating gives every tensor its own
    statistics. The op that keeps the name is the last one that computes (not an op
    that only moves values, such as the transposes around a conv), so that the ONNX
    node's name still names its main op; the new location wraps the old one, so
    `exclude-names` with the node's name still finds every op made from it
    (`location_names`). Run on the module that is then calibrated and quantized.
    """
    renamed = 0
    for function in module.ops:
        if not isinstance(function, FuncOp):
            continue
        by_name: dict[str, list[Operation]] = {}
        for op in function.walk():
            if op is function or op.name in ("func.return", "nn.constant") or not op.results:
                continue
            name = layer_name(op)
            if name:
                by_name.setdefault(name, []).append(op)
        taken = set(by_name)
        for name, ops in by_name.items():
            if len(ops) < 2:
                continue
            computing = [op for op in ops if ROLES.get(type(op)) not in (Role.SHARED, None)]
            keeper = (computing or ops)[-1]
            for op in ops:
                if op is keeper:
                    continue
                base = f"{name}.{op.name.split('.', 1)[-1]}"
                candidate, count = base, 1
                while candidate in taken:
                    count += 1
                    candidate = f"{base}.{count}"
                taken.add(candidate)
                op.location = NameLoc(StringAttr(candidate), op.location)
                renamed += 1
    return renamed


def location_names(op: Operation) -> list[str]:
    """Every name in an op's location, outermost first: `["bn1.mul", "bn1"]` for an op
    that `unique_locations` renamed."""
    names = []
    location: Attribute = op.location
    while isinstance(location, NameLoc):
        names.append(location.desc.data)
        location = location.location
    return names


def check_layer_names(module: ModuleOp, names: Iterable[str], option: str, where: Location) -> None:
    """An error for the first of `names` (the option `option`, such as
    `--exclude-names`) that names no layer of `module`: no computing `nn` op has it as
    its `layer_name` or in its location (`location_names`). The hint gives the closest
    layer names, or how to list them."""
    known: set[str] = set()
    for op in module.walk():
        if isinstance(op, nn.NNOp) and not isinstance(op, nn.ConstantOp):
            known.add(layer_name(op))
            known.update(location_names(op))
    known.discard("")
    unknown = [name for name in names if name and name not in known]
    if not unknown:
        return
    close = difflib.get_close_matches(unknown[0], sorted(known), n=3)
    more = f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""
    listing = (
        "layers are named after their ONNX nodes, as they stand after the graph passes, "
        "which merge some nodes into others (a bias add or an activation into its matmul "
        "or conv); --mlir-print-debuginfo prints the names as op locations"
    )
    raise error(
        f"{option} names no layer of the model: '{unknown[0]}'{more}",
        where,
        hint=f"close matches: {', '.join(repr(n) for n in close)}; {listing}" if close else listing,
    )


def check_op_types(names: Iterable[str], option: str, where: Location) -> None:
    """An error for the first of `names` (the option `option`, such as `--exclude-ops`)
    that is no op type of the `nn` dialect (`conv` or `nn.conv`); an op type the model
    does not use is not an error (a list of op types serves many models)."""
    from irc.dialects.nn import NN

    known = sorted({op.name.removeprefix("nn.") for op in NN.operations})
    unknown = [name for name in names if name and name.removeprefix("nn.") not in known]
    if not unknown:
        return
    close = difflib.get_close_matches(unknown[0].removeprefix("nn."), known, n=3)
    listing = "op types are the nn dialect's ops, with or without `nn.` (docs/nn-ops.md)"
    raise error(
        f"{option} names no op type: '{unknown[0]}'",
        where,
        hint=f"close matches: {', '.join(repr(n) for n in close)}; {listing}" if close else listing,
    )


def summary_remark(plan: FunctionPlan) -> Diagnostic:
    """The remark `quantize` emits for a function, with a note per float op."""
    total = len(plan.quantized) + len(plan.float_reasons)
    notes = [
        Diagnostic(f"stays float: {reason}", Location.of(op), Severity.NOTE)
        for op, reason in plan.float_reasons.items()
    ]
    message = (
        f"quantize: {len(plan.quantized)} of {total} ops quantized, {len(plan.float_reasons)} float"
    )
    return Diagnostic(message, Location.of(plan.function), Severity.REMARK, notes=notes)


__all__ = [
    "ROLES",
    "FunctionPlan",
    "QuantizeConfig",
    "QuantizeSummary",
    "Role",
    "activation_operands",
    "affine_to_depthwise",
    "check_layer_names",
    "layer_name",
    "location_names",
    "plan_function",
    "prepare_for_calibration",
    "quantize_module",
    "rewrite_function",
    "unique_locations",
    "weight_axis",
]
