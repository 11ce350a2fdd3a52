"""The `nn` canonicalization rules (irc/rules/canonicalize.rules), numerically.

- Every case of tests/filecheck/dialects/nn/canonicalize.mlir (where FileCheck checks
  the rewritten IR) computes bit for bit the same outputs after `canonicalize`, on
  seeded random inputs and on infinities, NaNs and signed zeros; matmul + add -> gemm,
  the one rule that rounds differently, within rtol 1e-5.
- Every light model of the onnx package and every pytorch backend case gives the
  same outputs after `canonicalize` (rtol 1e-5; measured: bit-identical), and the
  rules fire where the table below says, and nowhere else.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from pathlib import Path

import numpy as np
import onnx
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, f32

from irc.dialects import nn
from irc.importers.onnx import import_model
from irc.interp import function_signature, run_function
from irc.ir.context import make_context
from irc.ir.io import parse_module, split_input
from irc.ir.weights import dtype_of
from irc.passes import parse_pipeline
from irc.testing.models import light_models, materialize_light_model, pytorch_cases
from irc.testing.numerics import apply_and_compare

LIT_FILE = Path(__file__).parent / "filecheck" / "dialects" / "nn" / "canonicalize.mlir"

GEMM_RTOL = 1e-5
"""matmul + add rounds the product to float32 before adding the bias; gemm adds it
first and rounds once."""
MODEL_RTOL, MODEL_ATOL = 1e-5, 1e-7


def lit_cases() -> dict[str, str]:
    """The cases of the lit file by function name, each renamed to `@main`; cases
    whose constants have no data (elided weights) cannot run and are left out."""
    cases = {}
    for chunk in split_input(LIT_FILE.read_text()):
        match = re.search(r"func\.func @(\w+)", chunk)
        if match is None or "dense_resource" in chunk:
            continue
        cases[match.group(1)] = chunk.replace(f"@{match.group(1)}(", "@main(", 1)
    return cases


LIT_CASES = lit_cases()


def parse(text: str) -> ModuleOp:
    return parse_module(text, make_context(), str(LIT_FILE))


def apply(pipeline: str, module: ModuleOp) -> ModuleOp:
    """`module` after `pipeline` (in place)."""
    ctx = make_context()
    for module_pass in parse_pipeline(pipeline):
        module_pass.apply(ctx, module)
    return module


def op_counts(module: ModuleOp) -> Counter[str]:
    """How many ops of each `nn` op name the module holds, constants aside."""
    return Counter(
        op.name
        for op in module.walk()
        if isinstance(op, nn.NNOp) and not isinstance(op, nn.ConstantOp)
    )


def locations(module: ModuleOp) -> set[str]:
    """The locations of the module's ops: a rule gives the ops it builds the location
    of an op it replaces, so canonicalization never adds one."""
    return {str(op.location) for op in module.walk()}


@pytest.mark.parametrize("name", LIT_CASES)
def test_lit_case_computes_the_same(name: str) -> None:
    module = parse(LIT_CASES[name])
    if "gemm" in name:
        apply_and_compare(module, "canonicalize", rtol=GEMM_RTOL, atol=1e-6)
    else:
        apply_and_compare(module, "canonicalize", rtol=0.0, atol=0.0)


SPECIAL_VALUES = np.array(
    [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -2.5, 3.4e38, -3.4e38, 1e-45], np.float32
)


@pytest.mark.parametrize("name", [name for name in LIT_CASES if "gemm" not in name])
def test_lit_case_keeps_special_values(name: str) -> None:
    """Infinities, NaNs, zeros of both signs, the largest and smallest floats go through
    the rewritten IR as through the original (-0.0 and +0.0 compare equal here: x + 0.0
    turns a -0.0 into +0.0, see irc/rules/canonicalize.rules)."""
    module = parse(LIT_CASES[name])
    rng = np.random.default_rng(1)
    inputs = {}
    for input_name, input_type in function_signature(module)[0]:
        dtype = dtype_of(input_type.get_element_type())
        shape = tuple(input_type.get_shape())
        if dtype.kind == "f":
            inputs[input_name] = rng.choice(SPECIAL_VALUES, shape).astype(dtype)
        else:
            inputs[input_name] = rng.integers(-5, 5, shape).astype(dtype)
    expected = run_function(module, inputs)
    actual = run_function(apply("canonicalize", module.clone()), inputs)
    for output, array in expected.items():
        assert actual[output].dtype == array.dtype
        assert np.array_equal(actual[output], array, equal_nan=array.dtype.kind == "f"), output


def dense_layer(rows: int, inputs: int, outputs: int, seed: int) -> ModuleOp:
    """x @ w + b with seeded random constants w and b, as exporters write a Linear."""
    rng = np.random.default_rng(seed)
    x_type = TensorType(f32, [rows, inputs])
    function = func.FuncOp("main", ((x_type,), (TensorType(f32, [rows, outputs]),)))
    block = function.body.block
    weight = nn.ConstantOp.from_array(
        (rng.standard_normal((inputs, outputs)) / np.sqrt(inputs)).astype(np.float32)
    )
    bias = nn.ConstantOp.from_array(rng.standard_normal((1, outputs)).astype(np.float32))
    product = nn.MatMulOp.build([block.args[0], weight])
    total = nn.AddOp.build([bias, product])
    block.add_ops([weight, bias, product, total, func.ReturnOp(total)])
    return ModuleOp([function])


def test_matmul_add_to_gemm_on_a_dense_layer() -> None:
    module = dense_layer(rows=16, inputs=512, outputs=100, seed=3)
    after = apply_and_compare(module, "canonicalize", rtol=GEMM_RTOL, atol=1e-6)
    assert op_counts(after) == Counter({"nn.gemm": 1})


# --------------------------------------------------------------------------------------
# Real models

RULES_FIRED_ON_LIGHT_MODELS: dict[str, dict[str, int]] = {
    # Inference dropout, before the classifier.
    "bvlc_alexnet": {"nn.dropout": -2},
    "inception_v1": {"nn.dropout": -1},
    "squeezenet": {"nn.dropout": -1},
    # Residual sums of two inputs become adds.
    "resnet50": {"nn.sum": -16, "nn.add": 16},
    "shufflenet": {"nn.sum": -13, "nn.add": 13},
}
"""How the count of each op changes when the rules (constant folding aside) run on a
light model; models not listed are already canonical."""

RULES_FIRED_ON_PYTORCH_CASES: dict[str, dict[str, int]] = {
    "pytorch-operator/test_operator_flatten": {"nn.flatten": -1, "nn.reshape": 1},
    "pytorch-operator/test_operator_view": {"nn.flatten": -1, "nn.reshape": 1},
    # A slice of the whole of a size-1 axis.
    "pytorch-operator/test_operator_index": {"nn.slice": -1},
    # A permutation of six size-1 axes: a reshape to the same type.
    "pytorch-operator/test_operator_permute2": {"nn.transpose": -1},
}
"""The same for the pytorch backend cases."""


def rules_fired(module: ModuleOp, canonical: ModuleOp) -> dict[str, int]:
    """The change in each op's count from `module` with its constants folded to
    `canonical`: what the rules other than constant folding did."""
    before = op_counts(apply("fold-constants", module.clone()))
    after = op_counts(canonical)
    return {
        name: after[name] - before[name]
        for name in sorted(before | after)
        if after[name] != before[name]
    }


@lru_cache(maxsize=1)  # one model at a time (tests/conftest.py empties it after the module)
def materialized(path: Path) -> onnx.ModelProto:
    return materialize_light_model(path, seed=0)


@pytest.mark.slow
@pytest.mark.parametrize(
    "path", light_models(heavy=False), ids=lambda p: p.stem.removeprefix("light_")
)
def test_light_model_canonicalizes_exactly(path: Path) -> None:
    module = import_model(materialized(path))
    canonical = apply_and_compare(module, "canonicalize", rtol=MODEL_RTOL, atol=MODEL_ATOL)
    name = path.stem.removeprefix("light_")
    assert rules_fired(module, canonical) == RULES_FIRED_ON_LIGHT_MODELS.get(name, {})
    assert locations(canonical) <= locations(module)
    assert "nn.dropout" not in op_counts(canonical)


CASES = pytorch_cases()


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_pytorch_case_canonicalizes_exactly(case) -> None:
    module = import_model(case.model_path)
    canonical = apply_and_compare(module, "canonicalize", rtol=MODEL_RTOL, atol=MODEL_ATOL)
    assert rules_fired(module, canonical) == RULES_FIRED_ON_PYTORCH_CASES.get(case.id, {})
    assert locations(canonical) <= locations(module)


def test_every_expected_case_exists() -> None:
    light = {path.stem.removeprefix("light_") for path in light_models(heavy=False)}
    assert set(RULES_FIRED_ON_LIGHT_MODELS) <= light
    assert set(RULES_FIRED_ON_PYTORCH_CASES) <= {case.id for case in CASES}
