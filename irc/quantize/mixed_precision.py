"""Mixed precision: keep some layers in float, by choice or automatically.

**By choice.** The `quantize` pass (and `irc-quantize`) keeps float the ops named in
`exclude-names` (their location name: the ONNX node name) and the op types in
`exclude-ops` (`conv` or `nn.conv`); see `QuantizeConfig`.

**Automatically.** `auto_mixed_precision(float_module, stats, samples, metric,
threshold)` keeps the most sensitive layers in float until the model's outputs meet
the threshold:

1. Quantize everything and measure the metric of the outputs against the float
   model on the samples (`output_metric`: for `cosine` the cosine similarity of
   each output, averaged over the samples; for `sqnr` the signal-to-quantization-
   noise ratio in dB over all samples; the worst output counts). If it meets the
   threshold, nothing stays float.
2. Measure each layer's sensitivity: quantize everything except that one layer and
   measure again; the sensitivity is the metric's gain. The layers are the ops that
   compute new values in int8 (convolutions, matrix products, add, mul, average
   pooling, lookup-table functions); ops that only move values follow their input.
3. Keep layers in float greedily, most sensitive first (program order among equal
   gains), measuring after each, until the threshold is met (or every layer is float).

With `fallback="int16"` the sensitive layers get 16-bit activations instead of
float (`QuantizeConfig.keep_sixteen`): the same search, where a layer's sensitivity
is the gain of making only its activations int16 (its neighbours read or write them
as 16x8 layers). Such layers stay integer, so they need no float unit.

Everything runs on the QDQ form in the float interpreter, which computes the integer
model's numbers to within one LSB per op (the lowered `qnn` form agrees with it), and
is deterministic: the same samples give the same choice. It costs one evaluation per
layer plus one per layer kept float; `max_layers` bounds the greedy step.

**Where float layers run.** A layer kept float (and any other float island) runs on
the NPU only if the target computes in float: on a target whose `data_types` has no
`fp16`, the backend table (irc/backend) places every float op on the host, with the
reason it was kept float (`irc.float`), and `partition` marks it so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation

from irc.diagnostics import error
from irc.quantize.calibration import ProgressBar
from irc.quantize.qdq import (
    ROLES,
    QuantizeConfig,
    QuantizeSummary,
    RangeSource,
    Role,
    layer_name,
    quantize_module,
)

Metric = Literal["cosine", "sqnr"]
"""The output metrics mixed precision can aim at."""

Fallback = Literal["float", "int16"]
"""What mixed precision gives the layers it takes out of int8."""

COMPUTING_ROLES = (Role.MATMUL, Role.ARITHMETIC, Role.LOOKUP, Role.NORMALIZE)
"""Roles whose ops compute new values in int8: the layers mixed precision weighs."""


# --------------------------------------------------------------------------------------
# Measuring


def _cosine(reference: np.ndarray, candidate: np.ndarray) -> float:
    x = reference.astype(np.float64).ravel()
    y = candidate.astype(np.float64).ravel()
    norms = math.sqrt(float(x @ x)) * math.sqrt(float(y @ y))
    if norms == 0:
        return 1.0 if not x.any() and not y.any() else 0.0
    return float(x @ y) / norms


def output_metric(
    reference: Sequence[Mapping[str, np.ndarray]],
    candidate: Sequence[Mapping[str, np.ndarray]],
    metric: Metric,
) -> float:
    """The metric of `candidate` outputs against `reference` outputs (one mapping of
    outputs by name per sample): the worst output's mean cosine over the samples, or
    its SQNR in dB over all samples (infinite when equal)."""
    values = []
    for name in reference[0]:
        if metric == "cosine":
            cosines = [_cosine(ref[name], cand[name]) for ref, cand in zip(reference, candidate)]
            values.append(float(np.mean(cosines)))
        else:
            signal = sum(float(np.sum(ref[name].astype(np.float64) ** 2)) for ref in reference)
            noise = sum(
                float(np.sum((ref[name].astype(np.float64) - cand[name]) ** 2))
                for ref, cand in zip(reference, candidate)
            )
            values.append(math.inf if noise == 0 else 10 * math.log10(max(signal, 1e-300) / noise))
    return min(values)


def parse_goal(text: str) -> tuple[Metric, float]:
    """`cosine=0.99` or `sqnr=30` (the `--auto` option) as (metric, threshold)."""
    metric, _, value = text.partition("=")
    if metric not in ("cosine", "sqnr") or not value:
        raise error(
            f"invalid mixed-precision goal '{text}'",
            hint="write cosine=THRESHOLD (e.g. cosine=0.99) or sqnr=DECIBELS (e.g. sqnr=30)",
        )
    try:
        threshold = float(value)
    except ValueError:
        raise error(
            f"invalid threshold '{value}' in '{text}'", hint="the threshold is a number"
        ) from None
    if metric == "cosine" and not 0 < threshold <= 1:
        raise error(f"a cosine threshold must be in (0, 1], got {threshold}")
    return metric, threshold  # type: ignore[return-value]


# --------------------------------------------------------------------------------------
# Layers


@dataclass(frozen=True)
class Layer:
    """A layer mixed precision can keep float: its position (the function and the op's
    index among the function's ops), its name and op."""

    function: str
    index: int
    name: str
    op: str

    def describe(self) -> str:
        """`name (nn.conv)`."""
        return f"{self.name or f'@{self.function} op #{self.index}'} ({self.op})"


def _function_ops(module: ModuleOp) -> dict[Operation, tuple[str, int]]:
    positions: dict[Operation, tuple[str, int]] = {}
    for function in module.ops:
        if not isinstance(function, FuncOp) or function.body.blocks.first is None:
            continue
        for index, op in enumerate(function.body.blocks.first.ops):
            positions[op] = (function.sym_name.data, index)
    return positions


def quantizable_layers(module: ModuleOp, stats: RangeSource, config: QuantizeConfig) -> list[Layer]:
    """The layers of `module` that `config` quantizes and that compute in int8, in
    program order (found by quantizing a copy)."""
    copy = module.clone()
    positions = _function_ops(copy)
    summary = quantize_module(copy, stats, config)
    layers = []
    for op in summary.quantized_ops:
        role = ROLES.get(type(op))
        if role is not None and role in COMPUTING_ROLES and op in positions:
            function, index = positions[op]
            layers.append(Layer(function, index, layer_name(op), op.name))
    return layers


def quantize_keeping_float(
    module: ModuleOp,
    stats: RangeSource,
    config: QuantizeConfig,
    keep: Sequence[Layer],
    fallback: Fallback = "float",
) -> tuple[ModuleOp, QuantizeSummary]:
    """A QDQ copy of `module` with the layers `keep` (found by position) left float,
    or with 16-bit activations for `fallback="int16"`, and what `quantize_module` did
    to it."""
    copy = module.clone()
    positions = _function_ops(copy)
    wanted = {(layer.function, layer.index) for layer in keep}
    previous = config.keep_sixteen if fallback == "int16" else config.keep_float

    def chosen(op: Operation) -> bool:
        if positions.get(op) in wanted:
            return True
        return previous is not None and previous(op)

    if fallback == "int16":
        changed = replace(config, keep_sixteen=chosen)
    else:
        changed = replace(config, keep_float=chosen)
    summary = quantize_module(copy, stats, changed)
    return copy, summary


# --------------------------------------------------------------------------------------
# The search


@dataclass
class Sensitivity:
    """A layer and the metric of the model with only that layer float."""

    layer: Layer
    metric: float
    gain: float


@dataclass
class MixedPrecisionResult:
    """What `auto_mixed_precision` chose, and what it measured."""

    metric: Metric
    threshold: float
    quantized_metric: float
    """The metric with every layer quantized."""
    final_metric: float
    """The metric with the chosen layers float."""
    kept_float: list[Layer] = field(default_factory=list)
    """The layers kept float, in the order they were chosen (most sensitive first)."""
    sensitivities: list[Sensitivity] = field(default_factory=list)
    """Every layer's sensitivity, most sensitive first."""
    evaluations: int = 0
    """Quantized models the search ran on the samples."""
    fallback: Fallback = "float"
    """What the chosen layers became: float, or int16 activations."""

    @property
    def met(self) -> bool:
        """Whether the final metric meets the threshold."""
        return self.final_metric >= self.threshold

    @property
    def exclude_names(self) -> list[str]:
        """The names of the layers kept float, or made int16 with the int16 fallback
        (what `exclude-names`, or `int16-names`, would be)."""
        return [layer.name for layer in self.kept_float]

    def format_text(self, limit: int = 10) -> str:
        """A summary: the metric before and after, and the layers kept float."""
        unit = " dB" if self.metric == "sqnr" else ""
        kind = self.fallback
        lines = [
            f"mixed precision ({self.metric} >= {self.threshold:g}): all int8 "
            f"{self.quantized_metric:.6g}{unit}, with {len(self.kept_float)} {kind} "
            f"layer{'s' if len(self.kept_float) != 1 else ''} {self.final_metric:.6g}{unit}"
            + ("" if self.met else " (threshold not met)")
            + f"; {self.evaluations} evaluations"
        ]
        verb = "kept float" if kind == "float" else "made int16"
        for layer in self.kept_float:
            lines.append(f"  {verb}: {layer.describe()}")
        if self.sensitivities:
            lines.append(f"  most sensitive layers (metric with only that layer {kind}):")
            for entry in self.sensitivities[:limit]:
                lines.append(
                    f"    {entry.layer.describe()}: {entry.metric:.6g}{unit} "
                    f"(gain {entry.gain:+.3g})"
                )
        return "\n".join(lines)


def auto_mixed_precision(
    float_module: ModuleOp,
    stats: RangeSource,
    samples: Sequence[Mapping[str, np.ndarray] | Sequence[np.ndarray]],
    metric: Metric = "cosine",
    threshold: float = 0.99,
    *,
    config: QuantizeConfig | None = None,
    max_layers: int | None = None,
    progress: bool | None = None,
    entry: str = "main",
    fallback: Fallback = "float",
) -> MixedPrecisionResult:
    """Keep the most sensitive layers float (or make their activations int16, with
    `fallback="int16"`) until the outputs meet `threshold`.

    See the module docstring for the method. `config` holds the exclusions made by
    choice (kept float in every candidate); `max_layers` bounds how many layers the
    greedy step may take out of int8. The modules are not changed.
    """
    from irc.interp import run_function

    if metric not in ("cosine", "sqnr"):
        raise error(f"unknown metric '{metric}'", hint="the metrics are cosine and sqnr")
    if not samples:
        raise error("mixed precision needs at least one sample")
    config = config or QuantizeConfig()
    reference = [run_function(float_module, sample, entry) for sample in samples]

    if fallback not in ("float", "int16"):
        raise error(f"unknown fallback '{fallback}'", hint="the fallbacks are float and int16")
    result = MixedPrecisionResult(metric, threshold, math.nan, math.nan, fallback=fallback)

    def evaluate(keep: Sequence[Layer]) -> float:
        quantized, _ = quantize_keeping_float(float_module, stats, config, keep, fallback)
        outputs = [run_function(quantized, sample, entry) for sample in samples]
        result.evaluations += 1
        return output_metric(reference, outputs, metric)

    layers = quantizable_layers(float_module, stats, config)
    result.quantized_metric = result.final_metric = evaluate([])
    if result.met or not layers:
        return result

    bar = ProgressBar("sensitivity", len(layers), progress)
    for layer in layers:
        value = evaluate([layer])
        result.sensitivities.append(Sensitivity(layer, value, value - result.quantized_metric))
        bar.advance()
    bar.finish()
    # Most sensitive first; program order among equal gains (the sort is stable).
    result.sensitivities.sort(key=lambda sensitivity: -sensitivity.gain)

    limit = len(layers) if max_layers is None else min(max_layers, len(layers))
    for sensitivity in result.sensitivities[:limit]:
        result.kept_float.append(sensitivity.layer)
        result.final_metric = evaluate(result.kept_float)
        if result.met:
            break
    return result
