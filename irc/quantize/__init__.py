"""int8 post-training quantization: the scheme, calibration, reports and the driver.

- scheme.py: the arithmetic every quantized op shares: scales and zero points from
  ranges, the fixed-point multiplier and shift, requantization with its rounding rule.
- calibration.py, observers.py: running the float model to collect tensor ranges.
- report.py, mixed_precision.py: layer-wise float vs int8 errors, and keeping layers in
  float.

The IR levels are described in docs/quantization.md: `nn` (float) -> QDQ form (`nn` ops
between `quant.dcast` and `quant.qcast`) -> `qnn` (integer ops, irc/dialects/qnn.py).
"""
