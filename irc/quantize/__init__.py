"""int8 post-training quantization: the scheme, calibration, reports and the driver.

- scheme.py: scales and zero points from ranges, and from them the fixed-point
  multipliers and shifts of the integer ops (their arithmetic, requantization with its
  rounding rule, is irc/ir/fixed_point.py).
- calibration.py, observers.py: running the float model to collect tensor ranges.
- qdq.py: the rewriting of float `nn` ops into the QDQ form (the `quantize` pass and
  mixed precision use it).
- report.py, mixed_precision.py: layer-wise float vs int8 errors, and keeping layers in
  float.

The IR levels are described in docs/quantization.md: `nn` (float) -> QDQ form (`nn` ops
between `quant.dcast` and `quant.qcast`) -> `qnn` (integer ops, irc/dialects/qnn.py).
"""
