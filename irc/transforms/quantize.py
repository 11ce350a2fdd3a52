"""`quantize`: rewrite a float `nn` function into the QDQ form, from calibration statistics.

The rewriting itself, the roles of ops, shared scales and what stays float, is
irc/quantize/qdq.py (`quantize_module`); calibration is irc/quantize/calibration.py;
this module is the pass over them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from irc.diagnostics import Diagnostic, Location, Severity, emit, error
from irc.passes import PIPELINE_FILE, PassOptionError, option
from irc.quantize.qdq import (
    QuantizeConfig,
    check_layer_names,
    check_op_types,
    quantize_module,
    summary_remark,
)

if TYPE_CHECKING:
    from irc.quantize.calibration import CalibrationStats, ChosenSamples


def _names(values: Sequence[str]) -> frozenset[str]:
    return frozenset(value for value in values if value)


MAX_CALIBRATION_SAMPLES = 100_000
"""More samples than any calibration needs: percentile and entropy observers settle
within a few hundred, and each random sample is a whole model run."""


@dataclass(frozen=True)
class QuantizePass(ModulePass):
    """Rewrite float nn ops into the QDQ form (quant.dcast -> op -> quant.qcast) from calibration statistics.

    Activations are quantized per tensor and asymmetric over their calibrated range
    (int16 ones, `activations=int16` or the ops of `int16-names` and `int16-ops`:
    symmetric, zero point 0, their biases int64)
    (the statistics file of `irc-quantize` or `irc.quantize.calibration.calibrate`),
    weights per output channel and symmetric over [-127, 127], biases to int32 with
    scale s_in * s_w. Ops that only move values (max_pool, reshape, transpose, pad,
    slice, split, squeeze, unsqueeze, flatten, resize nearest, relu, clip) keep their
    input's type; a concat's inputs and result share one type over the union of their
    ranges. Ops without a quantized form, excluded ones, and ops with a value that
    has no statistics stay float between dcast and qcast, each with its reason as the
    discardable attribute `irc.float`; a remark gives the counts and a note at each
    float op its reason.

    The statistics come from a file (`stats=`, written by `irc-calibrate` or
    `irc-quantize --save-stats` for the same module), or the pass calibrates the
    module itself: on the first `calibration-samples` samples of `calibration-data`
    (a directory of .npy/.npz files, or one .npz), or, without data, on that many
    seeded random normal samples (`seed`), with a warning; `observer` chooses how
    ranges are calibrated. This is how `irc-compile` runs it, so that `irc-opt` can
    reproduce a compile from its pipeline. Run `prepare-quantize` first, as
    calibration names tensors by their op's location.

    With statistics giving `x` the range [-1, 3] and the conv [0, 6]:

        %w = nn.constant dense<[[[[1.27]], [[-1.27]]], [[[1.28]], [[2.54]]], [[[-1.26]], [[3.81]]]]> : tensor<3x2x1x1xf32>
        %b = nn.constant dense<[0.1, -0.05, 0.0]> : tensor<3xf32>
        %y = nn.conv %x, %w, %b {activation = #nn.activation<relu>} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
        %p = nn.max_pool %y {kernel_shape = [2, 2]} : (tensor<1x3x4x4xf32>) -> tensor<1x3x3x3xf32>

    becomes (the max_pool keeps the conv's type; `...` stands for repeated types)

        %x_q = quant.qcast %x : tensor<1x2x4x4xf32> to tensor<1x2x4x4x!quant.uniform<i8:f32, 0.01568627543747425:-64>>
        %x_dq = quant.dcast %x_q : ... to tensor<1x2x4x4xf32>
        %w_i = nn.constant dense<[[[[127]], [[-127]]], [[[64]], [[127]]], [[[-42]], [[127]]]]> : tensor<3x2x1x1xi8>
        %0 = quant.scast %w_i : tensor<3x2x1x1xi8> to tensor<3x2x1x1x!quant.uniform<i8<-127:127>:f32:0, {0.009999999776482582, 0.019999999552965164, 0.029999999329447746}>>
        %w_q = quant.dcast %0 : ... to tensor<3x2x1x1xf32>
        %b_i = nn.constant dense<[638, -159, 0]> : tensor<3xi32>
        %1 = quant.scast %b_i : tensor<3xi32> to tensor<3x!quant.uniform<i32:f32:0, {0.00015686274855397642, 0.00031372549710795283, 0.00047058824566192925}>>
        %b_q = quant.dcast %1 : ... to tensor<3xf32>
        %y = nn.conv %x_dq, %w_q, %b_q {activation = #nn.activation<relu>} : ...
        %y_q = quant.qcast %y : tensor<1x3x4x4xf32> to tensor<1x3x4x4x!quant.uniform<i8:f32, 0.0235294122248888:-128>>
        %y_dq = quant.dcast %y_q : ... to tensor<1x3x4x4xf32>
        %p = nn.max_pool %y_dq {kernel_shape = [2, 2]} : (tensor<1x3x4x4xf32>) -> tensor<1x3x3x3xf32>
        %p_q = quant.qcast %p : tensor<1x3x3x3xf32> to tensor<1x3x3x3x!quant.uniform<i8:f32, 0.0235294122248888:-128>>
        %p_dq = quant.dcast %p_q : ... to tensor<1x3x3x3xf32>
    """

    name = "quantize"

    stats: str = option(
        "", "the calibration statistics file (irc-calibration/1 JSON); empty: calibrate here"
    )
    calibration_data: str = option(
        "", "calibrate on these samples (a directory of .npy/.npz, or one .npz); empty: random"
    )
    calibration_samples: int = option(8, "calibrate on at most this many samples")
    observer: Literal["minmax", "moving-average", "percentile", "entropy", "mse"] = option(
        "minmax", "how tensor ranges are calibrated"
    )
    percentile: float = option(99.99, "the percentile the percentile observer keeps")
    seed: int = option(0, "the seed of the random calibration samples")
    exclude_names: tuple[str, ...] = option(
        (), "ops that stay float, by location name (ONNX node name) or file:line:col"
    )
    exclude_ops: tuple[str, ...] = option((), "op types that stay float (conv or nn.conv)")
    activations: Literal["int8", "uint8", "int16"] = option(
        "int8",
        "the storage type of activations: int8, uint8, or int16 (symmetric, with int8 "
        "weights and 48-bit accumulators)",
    )
    int16_names: tuple[str, ...] = option(
        (), "ops whose activations are int16, by location name (ONNX node name) or file:line:col"
    )
    int16_ops: tuple[str, ...] = option(
        (), "op types whose activations are int16 (conv or nn.conv)"
    )
    weights: Literal["per-channel", "per-tensor"] = option(
        "per-channel", "weight scales: one per output channel, or one per tensor"
    )
    bias_correction: bool = option(
        True, "correct conv and gemm biases for the mean error of their int8 weights"
    )

    def statistics(self, module: ModuleOp) -> CalibrationStats:
        """The statistics file, or the module calibrated on its samples."""
        from irc.quantize.calibration import CalibrationStats, calibrate
        from irc.quantize.observers import ObserverConfig

        if self.stats:
            return CalibrationStats.load(self.stats)
        chosen = self.samples(module)
        if chosen.random:
            emit(
                Diagnostic(
                    f"quantize: calibrating on {chosen.description}: the ranges, and the "
                    "errors, mean nothing for real inputs",
                    Location(file=PIPELINE_FILE),
                    Severity.WARNING,
                    hint="give calibration data: quantize{calibration-data=PATH} "
                    "(irc-compile --calibration-data)",
                )
            )
        observer = ObserverConfig(self.observer, percentile=self.percentile)
        problem = observer.check()
        if problem is not None:
            raise error(problem, Location(file=PIPELINE_FILE))
        return calibrate(module, chosen.samples, observer, progress=False)

    def samples(self, module: ModuleOp) -> ChosenSamples:
        """The samples the pass calibrates on (without a statistics file)."""
        from irc.quantize.calibration import choose_samples

        data = self.calibration_data or None
        return choose_samples(module, data, self.calibration_samples, self.seed)

    def config(self) -> QuantizeConfig:
        """The pass options as a `QuantizeConfig`."""
        return QuantizeConfig(
            exclude_names=_names(self.exclude_names),
            exclude_ops=_names(self.exclude_ops),
            activations=self.activations,
            int16_names=_names(self.int16_names),
            int16_ops=_names(self.int16_ops),
            per_channel=self.weights == "per-channel",
            bias_correction=self.bias_correction,
        )

    def __post_init__(self) -> None:
        if self.stats and self.calibration_data:
            raise PassOptionError("give stats or calibration-data, not both")
        if not 1 <= self.calibration_samples <= MAX_CALIBRATION_SAMPLES:
            raise PassOptionError(
                f"calibration-samples must be 1 to {MAX_CALIBRATION_SAMPLES:,}, "
                f"got {self.calibration_samples}"
            )
        if not 0 <= self.seed < 2**63:
            raise PassOptionError(f"seed must be 0 to 2**63 - 1, got {self.seed}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_layer_names(op, self.exclude_names, "exclude-names", Location(file=PIPELINE_FILE))
        check_op_types(self.exclude_ops, "exclude-ops", Location(file=PIPELINE_FILE))
        check_layer_names(op, self.int16_names, "int16-names", Location(file=PIPELINE_FILE))
        check_op_types(self.int16_ops, "int16-ops", Location(file=PIPELINE_FILE))
        summary = quantize_module(op, self.statistics(op), self.config())
        for plan in summary.plans:
            if plan.quantized or plan.float_reasons:
                emit(summary_remark(plan))
