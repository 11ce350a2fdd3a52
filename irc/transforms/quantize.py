"""`quantize`: rewrite a float `nn` function into the QDQ form, from calibration statistics.

The rewriting itself, the roles of ops, shared scales and what stays float, is
irc/quantize/qdq.py (`quantize_module`); this module is the pass over it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from irc.diagnostics import emit
from irc.passes import option
from irc.quantize.qdq import QuantizeConfig, quantize_module, summary_remark


def _names(values: Sequence[str]) -> frozenset[str]:
    return frozenset(value for value in values if value)


@dataclass(frozen=True)
class QuantizePass(ModulePass):
    """Rewrite float nn ops into the QDQ form (quant.dcast -> op -> quant.qcast) from calibration statistics.

    Activations are quantized per tensor and asymmetric over their calibrated range
    (the statistics file of `irc-quantize` or `irc.quantize.calibration.calibrate`),
    weights per output channel and symmetric over [-127, 127], biases to int32 with
    scale s_in * s_w. Ops that only move values (max_pool, reshape, transpose, pad,
    slice, split, squeeze, unsqueeze, flatten, resize nearest, relu, clip) keep their
    input's type; a concat's inputs and result share one type over the union of their
    ranges. Ops without a quantized form, excluded ones, and ops with a value that
    has no statistics stay float between dcast and qcast; a remark gives the counts
    and a note at each float op its reason.

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

    stats: str = dataclasses.field(
        metadata={"help": "the calibration statistics file (irc-calibration/1 JSON)"}
    )
    exclude_names: tuple[str, ...] = option(
        (), "ops that stay float, by location name (ONNX node name) or file:line:col"
    )
    exclude_ops: tuple[str, ...] = option((), "op types that stay float (conv or nn.conv)")
    activations: Literal["int8", "uint8"] = option(
        "int8", "the storage type of activations: int8 or uint8"
    )
    weights: Literal["per-channel", "per-tensor"] = option(
        "per-channel", "weight scales: one per output channel, or one per tensor"
    )
    bias_correction: bool = option(
        True, "correct conv and gemm biases for the mean error of their int8 weights"
    )

    def config(self) -> QuantizeConfig:
        """The pass options as a `QuantizeConfig`."""
        return QuantizeConfig(
            exclude_names=_names(self.exclude_names),
            exclude_ops=_names(self.exclude_ops),
            activations=self.activations,
            per_channel=self.weights == "per-channel",
            bias_correction=self.bias_correction,
        )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from irc.quantize.calibration import CalibrationStats

        summary = quantize_module(op, CalibrationStats.load(self.stats), self.config())
        for plan in summary.plans:
            if plan.quantized or plan.float_reasons:
                emit(summary_remark(plan))
