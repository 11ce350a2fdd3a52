"""Per-pass numerical verification: `irc.numerics` and `irc-opt --verify-each-numerics`.

Wrong passes are simulated by test passes registered for the duration of a test
(added to `irc.passes.PASSES`, pointing at this module). The checks: a correct pass
is accepted, a wrong one is reported naming the pass and the location of the first
value it changed (mid-graph, not only at the output), legitimate changes of a value
that keeps its location (a fused activation) are not errors, and the command line
fails with exit status 1 and writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnknownLoc
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter

from irc import passes
from irc.diagnostics import IrcError
from irc.dialects import nn
from irc.importers.onnx import import_model
from irc.ir.context import make_context
from irc.ir.io import parse_module
from irc.numerics import (
    NumericalDivergence,
    NumericsChecker,
    compare_arrays,
    random_function_inputs,
)
from irc.passes import option, parse_pipeline
from irc.testing.models import light_model, materialize_light_model
from irc.testing.numerics import apply_and_compare
from irc.tools.opt import main
from irc.transforms import fold_batchnorm
from irc.transforms.fold_batchnorm import ChannelAffine, FoldBatchNormPass

RNG = np.random.default_rng(7)


def dense(array: np.ndarray) -> str:
    """An MLIR dense literal of a float array."""
    return f"dense<{np.round(array, 3).tolist()}>"


W1 = RNG.standard_normal((4, 2, 3, 3)).astype(np.float32)
W2 = RNG.standard_normal((4, 4, 1, 1)).astype(np.float32)
W3 = RNG.standard_normal((2, 4, 1, 1)).astype(np.float32)

# Three convolutions with ReLUs; the second convolution (line 7) is mid-graph.
CHAIN = f"""\
func.func @main(%x: tensor<1x2x6x6xf32> {{irc.name = "image"}}) -> (tensor<1x2x6x6xf32> {{irc.name = "out"}}) {{
  %w1 = nn.constant {dense(W1)} : tensor<4x2x3x3xf32>
  %w2 = nn.constant {dense(W2)} : tensor<4x4x1x1xf32>
  %w3 = nn.constant {dense(W3)} : tensor<2x4x1x1xf32>
  %c1 = nn.conv %x, %w1 {{pads = [1, 1, 1, 1]}} : (tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  %r1 = nn.relu %c1 : tensor<1x4x6x6xf32>
  %c2 = nn.conv %r1, %w2 : (tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %r2 = nn.relu %c2 : tensor<1x4x6x6xf32>
  %c3 = nn.conv %r2, %w3 : (tensor<1x4x6x6xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x6x6xf32>
  %i = nn.identity %c3 : tensor<1x2x6x6xf32>
  %out = nn.add %i, %x : tensor<1x2x6x6xf32>
  func.return %out : tensor<1x2x6x6xf32>
}}
"""
CHAIN_FILE = "chain.mlir"
SECOND_CONV_LINE = 7
"""The line of `%c2` in CHAIN: where a pass that perturbs it must be reported."""


def parse(text: str = CHAIN, filename: str = CHAIN_FILE) -> ModuleOp:
    return parse_module(text, make_context(), filename)


# --------------------------------------------------------------------------------------
# Test passes


def _convs(module: ModuleOp) -> list[nn.ConvOp]:
    return [op for op in module.walk() if isinstance(op, nn.ConvOp)]


def _scale_weights(conv: nn.ConvOp, factor: float) -> None:
    """Replace the conv's weights by `factor` times them, at the constant's location."""
    weight = conv.operands[1].owner
    assert isinstance(weight, nn.ConstantOp)
    scaled = nn.ConstantOp.from_array(weight.array() * np.float32(factor), weight.location)
    PatternRewriter(weight).replace(weight, [scaled], scaled.results)


@dataclass(frozen=True)
class PerturbSecondConvPass(ModulePass):
    """Wrong: scales the weights of the second convolution in program order."""

    name = "test-perturb-second-conv"
    factor: float = option(1.5, "what the weights are multiplied by")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        _scale_weights(_convs(op)[1], self.factor)


@dataclass(frozen=True)
class FuseReluKeepingLocationPass(ModulePass):
    """Right: fuses each relu into the conv before it; the conv keeps its location, so
    its value changes (it now includes the relu) while the program's does not. Wrong
    with `wrong`: the fused activation is a leaky relu."""

    name = "test-fuse-relu"
    wrong: bool = option(False, "fuse a leaky relu instead")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for relu in [o for o in op.walk() if isinstance(o, nn.ReluOp)]:
            conv = relu.operands[0].owner
            if not isinstance(conv, nn.ConvOp) or not conv.results[0].has_one_use():
                continue
            properties = dict(conv.properties)
            properties["activation"] = (
                nn.ActivationAttr.make("leaky_relu", alpha=0.5)
                if self.wrong
                else nn.ActivationAttr.make("relu")
            )
            fused = nn.ConvOp.build(
                list(conv.operands), properties, [conv.results[0].type], conv.location
            )
            block = conv.parent_block()
            assert block is not None
            block.insert_op_before(fused, conv)
            relu.results[0].replace_all_uses_with(fused.results[0])
            block.erase_op(relu)
            block.erase_op(conv)


@dataclass(frozen=True)
class WrongUnlocatedAddPass(ModulePass):
    """Wrong, with no location: the final add becomes a subtraction built without one."""

    name = "test-wrong-unlocated-add"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        add = next(o for o in op.walk() if isinstance(o, nn.AddOp))
        sub = nn.SubOp.build(list(add.operands), location=UnknownLoc())
        PatternRewriter(add).replace(add, [sub], sub.results)


@dataclass(frozen=True)
class TinyChangePass(ModulePass):
    """Scales the last convolution's weights by 1 + 1e-3: a relative error of 1e-3."""

    name = "test-tiny-change"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        _scale_weights(_convs(op)[-1], 1.001)


@dataclass(frozen=True)
class ChangeSignaturePass(ModulePass):
    """Wrong: makes @main return its input's relu... of another type (the first conv)."""

    name = "test-change-signature"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from xdsl.dialects.func import FuncOp, ReturnOp

        function = next(o for o in op.walk() if isinstance(o, FuncOp))
        conv = _convs(op)[0]
        returned = function.body.blocks.last.last_op
        assert isinstance(returned, ReturnOp)
        returned.operands = [conv.results[0]]
        function.update_function_type()


@dataclass(frozen=True)
class PipelineWithWrongPass(ModulePass):
    """A named pipeline (like graph-opt) whose second pass is wrong."""

    name = "test-pipeline"

    def pipeline(self) -> list[ModulePass]:
        return [passes.get_pass_class("canonicalize")(), PerturbSecondConvPass()]

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for sub_pass in self.pipeline():
            sub_pass.apply(ctx, op)


def _affine_without_square_root(op: nn.BatchNormOp) -> ChannelAffine | None:
    """A batch norm's affine map with the wrong scale gamma / (var + epsilon)."""
    arrays = [
        fold_batchnorm.constant_array(value) for value in (op.scale, op.bias, op.mean, op.var)
    ]
    if any(array is None for array in arrays):
        return None
    gamma, beta, mean, variance = (np.asarray(array, np.float64) for array in arrays)
    scale = gamma / (variance + (op.props().float("epsilon") or 0.0))
    return ChannelAffine(scale, beta - mean * scale)


@dataclass(frozen=True)
class FoldBatchNormWithoutSquareRootPass(FoldBatchNormPass):
    """Wrong: fold-batchnorm with scale = gamma / (var + epsilon), no square root."""

    name = "test-fold-batchnorm-no-sqrt"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        wrong = staticmethod(_affine_without_square_root)
        with mock.patch.object(ChannelAffine, "of", wrong):
            super().apply(ctx, op)


@dataclass(frozen=True)
class FoldBatchNormDroppingBiasPass(FoldBatchNormPass):
    """Wrong: fold-batchnorm that gives the folded op a zero bias (drops beta - mean *
    scale, and the op's own bias)."""

    name = "test-fold-batchnorm-drop-bias"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        right = fold_batchnorm._folded_constants

        def without_bias(
            producer: fold_batchnorm.FoldableProducer, affine: ChannelAffine
        ) -> tuple[np.ndarray, np.ndarray]:
            weight, bias = right(producer, affine)
            return weight, np.zeros_like(bias)

        with mock.patch.object(fold_batchnorm, "_folded_constants", without_bias):
            super().apply(ctx, op)


TEST_PASSES = {
    "test-fold-batchnorm-no-sqrt": "FoldBatchNormWithoutSquareRootPass",
    "test-fold-batchnorm-drop-bias": "FoldBatchNormDroppingBiasPass",
    "test-perturb-second-conv": "PerturbSecondConvPass",
    "test-fuse-relu": "FuseReluKeepingLocationPass",
    "test-wrong-unlocated-add": "WrongUnlocatedAddPass",
    "test-tiny-change": "TinyChangePass",
    "test-change-signature": "ChangeSignaturePass",
    "test-pipeline": "PipelineWithWrongPass",
}


@pytest.fixture(autouse=True)
def register_test_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, class_name in TEST_PASSES.items():
        monkeypatch.setitem(passes.PASSES, name, (__name__, class_name))


def apply(module: ModuleOp, pipeline: str) -> None:
    for module_pass in parse_pipeline(pipeline):
        module_pass.apply(make_context(), module)


# --------------------------------------------------------------------------------------
# Inputs and comparison


def test_random_inputs_are_seeded_and_of_the_argument_types() -> None:
    module = parse(
        """\
func.func @main(%f: tensor<2x3xf32> {irc.name = "f"}, %i: tensor<4xi64>, %b: tensor<5xi1>) -> tensor<2x3xf32> {
  func.return %f : tensor<2x3xf32>
}
"""
    )
    first = random_function_inputs(module, seed=3)
    again = random_function_inputs(module, seed=3)
    other = random_function_inputs(module, seed=4)
    assert list(first) == ["f", "arg1", "arg2"]
    assert first["f"].dtype == np.float32 and first["f"].shape == (2, 3)
    assert first["arg1"].dtype == np.int64 and set(first["arg1"].tolist()) <= {0, 1}
    assert first["arg2"].dtype == np.bool_
    assert all(np.array_equal(first[name], again[name]) for name in first)
    assert not np.array_equal(first["f"], other["f"])


def test_compare_arrays_reports_errors_and_the_worst_element() -> None:
    expected = np.array([[1.0, 2.0, 0.0], [-4.0, 5.0, 6.0]], np.float32)
    assert compare_arrays(expected.copy(), expected, 1e-4, 1e-5).ok
    actual = expected.copy()
    actual[1, 0] = -4.1  # abs 0.1, rel 0.025
    actual[0, 2] = 1e-6  # within atol
    comparison = compare_arrays(actual, expected, 1e-4, 1e-5)
    assert not comparison.ok
    assert comparison.mismatched == 1 and comparison.size == 6
    assert comparison.worst_index == (1, 0)
    assert comparison.max_abs_error == pytest.approx(0.1, rel=1e-5)
    assert comparison.max_rel_error == pytest.approx(0.025, rel=1e-5)
    assert comparison.actual_at_worst == pytest.approx(-4.1)
    assert comparison.expected_at_worst == pytest.approx(-4.0)
    assert "worst at index [1, 0]: -4.1 instead of -4" in comparison.describe()
    # The tolerance is atol + rtol * 6, the largest |expected|, for every element.
    assert comparison.magnitude == 6.0
    assert comparison.tolerance == pytest.approx(1e-5 + 6e-4)
    assert "(tolerance 0.00061, for values up to 6)" in comparison.describe()
    assert compare_arrays(actual, expected, 0.017, 1e-5).ok
    assert not compare_arrays(actual, expected, 0.016, 1e-5).ok
    # 1e-6 where 0 is expected is within rtol of the tensor, without any atol.
    assert compare_arrays(actual, expected, 0.017, 0.0).ok


def test_tolerance_scales_with_the_magnitude_of_the_tensor() -> None:
    """The red-team case: one logit of 1000 moved from 2.5291 to 2.5295 in a tensor
    whose largest value is 49,476 is rounding, not a bug (issue 19, item 7)."""
    rng = np.random.default_rng(0)
    logits = (rng.standard_normal(1000) * 5000).astype(np.float32)
    logits[0], logits[1] = 49476.0, 2.5291
    moved = logits.copy()
    moved[1] = 2.5295
    assert compare_arrays(moved, logits, 1e-4, 1e-5).ok
    # The same move where the tensor's values are small is beyond the tolerance.
    small = np.array([2.5291, -1.0, 0.5], np.float32)
    nudged = small.copy()
    nudged[0] = 2.5295
    comparison = compare_arrays(nudged, small, 1e-4, 1e-5)
    assert not comparison.ok and comparison.worst_index == (0,)
    assert comparison.tolerance == pytest.approx(1e-5 + 1e-4 * 2.5291)


def test_the_worst_element_is_the_largest_difference() -> None:
    expected = np.array([1000.0, 1.0, -2.0, 0.0], np.float32)
    actual = np.array([1000.5, 1.3, -2.0, 0.2], np.float32)
    comparison = compare_arrays(actual, expected, 1e-4, 1e-5)  # tolerance 0.1
    assert comparison.mismatched == 3
    assert comparison.worst_index == (0,)
    assert (comparison.actual_at_worst, comparison.expected_at_worst) == (1000.5, 1000.0)


def test_integers_must_be_equal_whatever_their_magnitude() -> None:
    expected = np.array([100_000, 7, 0], np.int64)
    assert not compare_arrays(expected + np.array([1, 0, 0]), expected, 1e-4, 1e-5).ok
    assert compare_arrays(expected.copy(), expected, 1e-4, 1e-5).ok
    flags = np.array([True, False])
    assert not compare_arrays(~flags, flags, 1.0, 1.0).ok


def test_compare_arrays_nans_infinities_and_integers() -> None:
    values = np.array([np.inf, -np.inf, np.nan, 1.0])
    assert compare_arrays(values.copy(), values, 0.0, 0.0).ok
    moved = np.array([np.inf, -np.inf, 1.0, np.nan])
    assert "NaN at 2 positions" in (compare_arrays(moved, values, 1e-4, 1e-5).problem or "")
    flipped = np.array([-np.inf, -np.inf, np.nan, 1.0])
    assert not compare_arrays(flipped, values, 1e-4, 1e-5).ok
    integers = np.array([3, 4, 5])
    assert not compare_arrays(integers + np.array([0, 0, 1]), integers, 1e-4, 1e-5).ok
    assert "dtype" in (compare_arrays(integers.astype(np.int32), integers, 1, 1).problem or "")
    assert "shape" in (compare_arrays(integers[:2], integers, 1, 1).problem or "")


# --------------------------------------------------------------------------------------
# The checker


def test_correct_passes_are_accepted_and_become_the_reference() -> None:
    module = parse()
    checker = NumericsChecker(module, seed=1)
    for pass_name in ("canonicalize", "cse", "test-fuse-relu"):
        apply(module, pass_name)
        checker.check(module, pass_name)
    assert checker.checks == 3
    # The fused convolutions changed value at their locations, the program did not.
    assert [conv.activation is not None for conv in _convs(module)] == [True, True, False]
    assert checker.reference.is_structurally_equivalent(module)


def test_wrong_pass_is_reported_at_the_mid_graph_value_it_changed() -> None:
    module = parse()
    checker = NumericsChecker(module)
    apply(module, "test-perturb-second-conv")
    with pytest.raises(NumericalDivergence) as caught:
        checker.check(module, "test-perturb-second-conv")
    divergence = caught.value
    assert divergence.pass_name == "test-perturb-second-conv"
    assert divergence.value == "nn.conv result #0"
    assert (divergence.value_location.file, divergence.value_location.line) == (
        CHAIN_FILE,
        SECOND_CONV_LINE,
    )
    assert divergence.comparison.max_abs_error > 0.01
    assert divergence.comparison.worst_index is not None
    text = str(divergence)
    assert text.startswith(f"{CHAIN_FILE}:{SECOND_CONV_LINE}:")
    assert "pass 'test-perturb-second-conv' changed the numerics" in text
    assert "note: output 'out' of @main: max abs error" in text
    assert checker.checks == 0


def test_a_difference_that_heals_is_not_blamed() -> None:
    """Fusing changes the first conv's value; the real bug is the second conv."""
    module = parse()
    checker = NumericsChecker(module)
    apply(module, "test-fuse-relu,test-perturb-second-conv")
    with pytest.raises(NumericalDivergence) as caught:
        checker.check(module, "both")
    # %c1 (line 5) differs too, but %c2 agrees again only where the bug is not.
    assert caught.value.value_location.line == SECOND_CONV_LINE


def test_a_wrong_fusion_is_blamed_on_the_fused_op() -> None:
    module = parse()
    checker = NumericsChecker(module)
    apply(module, "test-fuse-relu{wrong}")
    with pytest.raises(NumericalDivergence) as caught:
        checker.check(module, "test-fuse-relu")
    assert caught.value.value_location.line == 5  # %c1, the first fused conv


def test_a_wrong_value_without_location_is_reported_at_the_output() -> None:
    module = parse()
    checker = NumericsChecker(module)
    apply(module, "test-wrong-unlocated-add")
    with pytest.raises(NumericalDivergence) as caught:
        checker.check(module, "test-wrong-unlocated-add")
    assert caught.value.value == "output 'out'"
    assert "output 'out' of @main differs" in str(caught.value)
    assert caught.value.value_location.line == 12  # the return


def test_tolerances_decide() -> None:
    module = parse()
    apply(module, "test-tiny-change")
    with pytest.raises(NumericalDivergence):
        NumericsChecker(parse()).check(module, "test-tiny-change")
    NumericsChecker(parse(), rtol=1e-2, atol=1e-2).check(module, "test-tiny-change")


def dense_f32(array: np.ndarray) -> str:
    """An exact MLIR dense literal of a float32 array."""
    return f"dense<{np.asarray(array, np.float32).tolist()}>"


# A conv with a large bias whose batch norm subtracts it again in channel 1: before
# fold-batchnorm, channel 1 is 5e4 + w.x rounded to float32 (ulp 0.004) minus 5e4;
# after, the conv computes w.x + 2.5 directly. Channel 0 keeps values near 5e4.
CANCELLING_WEIGHT = np.random.default_rng(3).standard_normal((2, 4, 1, 1)).astype(np.float32)
CANCELLING = f"""\
func.func @main(%x: tensor<1x4x4x4xf32>) -> tensor<1x2x4x4xf32> {{
  %w = nn.constant {dense_f32(CANCELLING_WEIGHT)} : tensor<2x4x1x1xf32>
  %b = nn.constant dense<[50000.0, 50000.0]> : tensor<2xf32>
  %gamma = nn.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %beta = nn.constant dense<[0.0, 2.5]> : tensor<2xf32>
  %mean = nn.constant dense<[0.0, 50000.0]> : tensor<2xf32>
  %var = nn.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %c = nn.conv %x, %w, %b : (tensor<1x4x4x4xf32>, tensor<2x4x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %y = nn.batch_norm %c, %gamma, %beta, %mean, %var : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  func.return %y : tensor<1x2x4x4xf32>
}}
"""


def test_a_correct_fold_that_rounds_differently_is_accepted() -> None:
    """Channel 1 moves by about 2e-3 where its values are near 1: 8e-3 of themselves,
    but 4e-8 of the output's largest value, and that is what rounding is relative to."""
    module = parse(CANCELLING, "cancelling.mlir")
    checker = NumericsChecker(module)
    apply(module, "fold-batchnorm")
    assert not any(isinstance(op, nn.BatchNormOp) for op in module.walk())
    checker.check(module, "fold-batchnorm")
    assert checker.checks == 1


def test_changing_the_signature_is_an_error() -> None:
    module = parse()
    checker = NumericsChecker(module)
    apply(module, "test-change-signature")
    with pytest.raises(IrcError, match="changed the signature of @main"):
        checker.check(module, "test-change-signature")


ELIDED = """\
func.func @main(%x: tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32> {
  %w = nn.constant dense_resource<conv_w> : tensor<4x2x1x1xf32>
  %y = nn.conv %x, %w : (tensor<1x2x4x4xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x4x4xf32>
  func.return %y : tensor<1x4x4x4xf32>
}
"""


def test_elided_weights_are_a_clear_error() -> None:
    with pytest.raises(IrcError) as caught:
        NumericsChecker(parse(ELIDED, "elided.mlir"))
    text = str(caught.value)
    assert text.startswith("elided.mlir:2:")
    assert "numerical verification needs the values of the weights" in text
    assert "--weights=resource" in text


def test_apply_and_compare_asserts_with_the_location() -> None:
    after = apply_and_compare(parse(), "canonicalize,test-fuse-relu")
    assert not any(isinstance(op, nn.ReluOp) for op in after.walk())
    with pytest.raises(AssertionError, match=f"{CHAIN_FILE}:{SECOND_CONV_LINE}:"):
        apply_and_compare(parse(), "canonicalize,test-perturb-second-conv")


@cache
def squeezenet() -> ModuleOp:
    return import_model(materialize_light_model(light_model("squeezenet"), seed=0))


def test_real_model_divergence_is_named_by_its_onnx_node() -> None:
    module = squeezenet().clone()
    second_conv = _convs(module)[1]
    node_name = second_conv.location.desc.data  # type: ignore[attr-defined]
    checker = NumericsChecker(module, seed=2)
    apply(module, "canonicalize,test-perturb-second-conv")
    with pytest.raises(NumericalDivergence) as caught:
        checker.check(module, "test-perturb-second-conv")
    assert caught.value.value_location.name == node_name
    assert str(caught.value).startswith(f"'{node_name}': error: pass 'test-perturb-second-conv'")


@cache
def resnet50() -> ModuleOp:
    return import_model(materialize_light_model(light_model("resnet50"), seed=0))


@pytest.mark.slow
def test_deep_network_keeps_a_correct_fold_and_catches_wrong_ones() -> None:
    """ResNet-50 with the suite's weights (issue 19, item 7): fold-batchnorm passes,
    and the same fold with a wrong formula or without the bias is caught at a conv."""
    module = resnet50()
    checker = NumericsChecker(module)
    for wrong in ("test-fold-batchnorm-no-sqrt", "test-fold-batchnorm-drop-bias"):
        broken = module.clone()
        apply(broken, wrong)
        with pytest.raises(NumericalDivergence) as caught:
            checker.check(broken, wrong)
        divergence = caught.value
        assert divergence.value == "nn.conv result #0"
        assert divergence.comparison.worst_index is not None
        assert divergence.comparison.max_abs_error > 10 * divergence.comparison.tolerance
    folded = module.clone()
    apply(folded, "fold-batchnorm")
    checker.check(folded, "fold-batchnorm")
    assert checker.checks == 1


# --------------------------------------------------------------------------------------
# irc-opt --verify-each-numerics


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    """Run irc-opt in-process; returns (exit status, stdout, stderr)."""
    status = main([str(arg) for arg in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture
def chain_file(tmp_path: Path) -> Path:
    path = tmp_path / CHAIN_FILE
    path.write_text(CHAIN)
    return path


def test_cli_accepts_correct_passes(capsys: pytest.CaptureFixture[str], chain_file: Path) -> None:
    status, out, err = run(
        capsys, chain_file, "--verify-each-numerics", "-p", "canonicalize,cse,test-fuse-relu"
    )
    assert (status, err) == (0, "")
    assert "activation = #nn.activation<relu>" in out


def test_cli_names_the_pass_and_the_location(
    capsys: pytest.CaptureFixture[str], chain_file: Path, tmp_path: Path
) -> None:
    output = tmp_path / "out.mlir"
    status, _, err = run(
        capsys,
        chain_file,
        "--verify-each-numerics",
        "-p",
        "canonicalize,test-perturb-second-conv,cse",
        "-o",
        output,
    )
    assert status == 1
    first_line = err.splitlines()[0]
    assert first_line.startswith(f"{chain_file}:{SECOND_CONV_LINE}:")
    assert "error: pass 'test-perturb-second-conv' changed the numerics" in first_line
    assert "nn.conv result #0" in first_line
    assert "hint: values are matched with the IR before the pass" in err
    assert not output.exists()
    assert list(tmp_path.iterdir()) == [chain_file]


def test_cli_names_the_pass_inside_a_named_pipeline(
    capsys: pytest.CaptureFixture[str], chain_file: Path
) -> None:
    status, _, err = run(capsys, chain_file, "--verify-each-numerics", "-p", "test-pipeline")
    assert status == 1
    assert "error: pass 'test-perturb-second-conv' changed the numerics" in err
    assert (
        "note: pass 'test-perturb-second-conv' ran as part of the pipeline 'test-pipeline'" in err
    )


def test_cli_tolerance_and_seed_options(
    capsys: pytest.CaptureFixture[str], chain_file: Path
) -> None:
    status, _, err = run(capsys, chain_file, "--verify-each-numerics", "-p", "test-tiny-change")
    assert status == 1 and "changed the numerics" in err
    loose = ("--numerics-rtol=1e-2", "--numerics-atol", "1e-2", "--numerics-seed", "5")
    status, _, err = run(
        capsys, chain_file, "--verify-each-numerics", *loose, "-p", "test-tiny-change"
    )
    assert (status, err) == (0, "")
    # Without the flag, nothing is checked.
    status, _, _ = run(capsys, chain_file, "-p", "test-perturb-second-conv")
    assert status == 0


def test_cli_seed_is_reported(capsys: pytest.CaptureFixture[str], chain_file: Path) -> None:
    status, _, err = run(
        capsys,
        chain_file,
        "--verify-each-numerics",
        "--numerics-seed=9",
        "-p",
        "test-perturb-second-conv",
    )
    assert status == 1 and "random inputs from seed 9" in err


@pytest.mark.parametrize("flag", ["--numerics-rtol=-1", "--numerics-atol=x", "--numerics-seed=-2"])
def test_cli_rejects_bad_numerics_options(capsys: pytest.CaptureFixture[str], flag: str) -> None:
    status, _, err = run(capsys, "--verify-each-numerics", flag)
    assert status == 2 and "error: argument" in err


def test_cli_elided_weights(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "elided.mlir"
    path.write_text(ELIDED)
    status, out, err = run(capsys, path, "--verify-each-numerics", "-p", "canonicalize")
    assert status == 1 and out == ""
    assert err.startswith(f"{path}:2:")
    assert "needs the values of the weights" in err
    # Structural passes alone do not need them.
    status, _, _ = run(capsys, path, "-p", "canonicalize")
    assert status == 0


@pytest.mark.slow
def test_cli_graph_opt_keeps_the_numerics_of_a_light_model(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`irc-opt --verify-each-numerics -p graph-opt` on ResNet-50 with the other seed of
    issue 19 (4242; seed 0 is checked above). All light models with both seeds were
    run by hand (docs/testing.md): in the suite one stands for them, for time."""
    from irc.fileio import StagedOutputs
    from irc.ir.io import PrintOptions, write_module
    from irc.ir.weights import WeightsMode

    source = tmp_path / "resnet50.mlir"
    module = import_model(materialize_light_model(light_model("resnet50"), seed=4242))
    with StagedOutputs() as staged:
        write_module(module, source, PrintOptions(weights=WeightsMode.SIDECAR), staged)
    del module
    output = tmp_path / "out.mlir"
    status, _, err = run(capsys, source, "-p", "graph-opt", "--verify-each-numerics", "-o", output)
    assert status == 0, err
    assert "error" not in err and output.exists()
