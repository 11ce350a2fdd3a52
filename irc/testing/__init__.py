"""Test support shared by the test suite, the fuzzer and the benchmarks (the tools do
not use it: irc.testing sits beside irc.tools, above the driver).

- `irc.testing.models`: the ONNX models irc is checked on — the light architectures
  shipped with the onnx package, with their constant weights replaced by seeded random
  ones (`materialize_light_model`), and the pytorch-converted / pytorch-operator
  backend cases with their reference inputs and outputs (`pytorch_cases`).
- `irc.testing.reference`: seeded model inputs (`random_inputs`). onnxruntime as the
  reference implementation (`run_onnxruntime`) is `irc.importers.reference`, and the
  comparison that `irc-run --compare-onnxruntime` and the tests report (`compare`) is
  `irc.numerics`'s.

Both modules import onnx (and onnxruntime when running a model) only when called,
so importing `irc.testing` stays cheap.
"""
