"""`fuse-activation`: every fusion is exact, bit for bit.

Each (producer, activation) pair on hand-made IR, the chains of activations that are
absorbed into an existing one, every light model after `canonicalize` and the
pytorch backend cases that contain activations: the interpreter must give the same
outputs before and after (rtol = atol = 0, and the same bytes on inputs with signed
zeros, infinities and NaNs), and every fusable pair must be fused.
"""

from __future__ import annotations

import itertools
from collections import Counter
from functools import lru_cache
from pathlib import Path

import numpy as np
import onnx
import pytest
from xdsl.dialects.builtin import ModuleOp

from irc.diagnostics import IrcError
from irc.dialects import nn
from irc.importers.onnx import import_model
from irc.interp import run_function
from irc.interp.nn import ACTIVATION_FUNCTIONS
from irc.ir.context import make_context
from irc.ir.io import parse_module
from irc.passes import parse_pipeline
from irc.testing.models import light_models, materialize_light_model, pytorch_cases
from irc.testing.numerics import apply_and_compare, random_function_inputs
from irc.transforms.fuse_activation import ACTIVATION_OPS, PRODUCERS, compose

SEED = 0

# --------------------------------------------------------------------------------------
# Helpers


def parse(text: str) -> ModuleOp:
    return parse_module(text, make_context(), "test.mlir")


def special_inputs(module: ModuleOp, seed: int) -> dict[str, np.ndarray]:
    """Random inputs (scaled so that clips at 6 bite) with signed zeros, infinities and a
    NaN at the start of the first input, and -0.0/+0.0 at the start of the others (so
    that an add produces -0.0 + -0.0 = -0.0)."""
    inputs = {name: array * 4 for name, array in random_function_inputs(module, seed).items()}
    for index, array in enumerate(inputs.values()):
        specials = [-0.0, 0.0, -0.0, np.inf, -np.inf, np.nan] if index == 0 else [-0.0, -0.0, 0.0]
        flat = array.reshape(-1)
        count = min(len(specials), flat.size)
        flat[:count] = specials[:count]
    return inputs


def assert_bit_identical(before: ModuleOp, after: ModuleOp, seed: int = SEED) -> None:
    """Both modules give the same output bytes on `special_inputs`."""
    inputs = special_inputs(before, seed)
    expected = run_function(before, inputs)
    actual = run_function(after, inputs)
    assert expected.keys() == actual.keys()
    for name, array in expected.items():
        assert actual[name].dtype == array.dtype
        assert actual[name].tobytes() == array.tobytes(), f"output {name} differs"


def fuse(module: ModuleOp, pipeline: str = "fuse-activation") -> ModuleOp:
    """Apply the pipeline, checking exactness on random and on special inputs."""
    after = apply_and_compare(module, pipeline, seed=SEED, rtol=0, atol=0)
    assert_bit_identical(module, after)
    return after


def ops_named(module: ModuleOp, name: str) -> list[nn.NNOp]:
    return [op for op in module.walk() if op.name == name and isinstance(op, nn.NNOp)]


def activation_text(op: nn.NNOp) -> str | None:
    attr = op.properties.get("activation")
    return None if attr is None else str(attr)


def fusable_pairs(module: ModuleOp) -> Counter[tuple[str, str]]:
    """(producer, activation op) pairs that the pass should have fused: an activation op
    with a fused form whose operand is the only use of a producer without activation."""
    pairs: Counter[tuple[str, str]] = Counter()
    for op in module.walk():
        if not isinstance(op, nn.NNOp) or type(op) not in ACTIVATION_OPS:
            continue
        producer = op.operands[0].owner
        if (
            isinstance(producer, PRODUCERS)
            and op.operands[0].has_one_use()
            and "activation" not in producer.properties
            and ACTIVATION_OPS[type(op)](op) is not None
        ):
            pairs[(producer.name, op.name)] += 1
    return pairs


def locations(module: ModuleOp) -> set[str]:
    """The locations of the module's ops (fusion only removes ops: the fused producer
    keeps its own)."""
    return {str(op.location) for op in module.walk()}


def activation_ops(module: ModuleOp) -> Counter[str]:
    return Counter(op.name for op in module.walk() if type(op) in ACTIVATION_OPS)


# --------------------------------------------------------------------------------------
# Every (producer, activation) pair

PRODUCER_IR = {
    # name: (function arguments, producer op text producing %y, the type of %y)
    "conv": (
        "%x: tensor<1x3x6x6xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>",
        "nn.conv %x, %w, %b : (tensor<1x3x6x6xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>)"
        " -> tensor<1x4x4x4xf32>",
        "tensor<1x4x4x4xf32>",
    ),
    "conv_transpose": (
        "%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3x3xf32>",
        "nn.conv_transpose %x, %w {strides = [2, 2]} : (tensor<1x3x4x4xf32>,"
        " tensor<3x2x3x3xf32>) -> tensor<1x2x9x9xf32>",
        "tensor<1x2x9x9xf32>",
    ),
    "gemm": (
        "%a: tensor<3x5xf32>, %b: tensor<4x5xf32>, %c: tensor<4xf32>",
        "nn.gemm %a, %b, %c {trans_b = true} : (tensor<3x5xf32>, tensor<4x5xf32>,"
        " tensor<4xf32>) -> tensor<3x4xf32>",
        "tensor<3x4xf32>",
    ),
    "matmul": (
        "%a: tensor<2x3x5xf32>, %b: tensor<5x4xf32>",
        "nn.matmul %a, %b : (tensor<2x3x5xf32>, tensor<5x4xf32>) -> tensor<2x3x4xf32>",
        "tensor<2x3x4xf32>",
    ),
    "add": (
        "%a: tensor<2x3x4xf32>, %b: tensor<4xf32>",
        "nn.add %a, %b : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>",
        "tensor<2x3x4xf32>",
    ),
}

ACTIVATION_IR = {
    # name: (activation op text applied to %y, the fused attribute it becomes)
    "relu": ("nn.relu %y", "#nn.activation<relu>"),
    "relu6": ("nn.clip %y {min = 0.0, max = 6.0}", "#nn.activation<clip min = 0.0, max = 6.0>"),
    "clip": (
        "nn.clip %y {min = -1.5, max = 2.5}",
        "#nn.activation<clip min = -1.5, max = 2.5>",
    ),
    "clip_min_zero": ("nn.clip %y {min = 0.0}", "#nn.activation<relu>"),
    "leaky_relu": ("nn.leaky_relu %y {alpha = 0.1}", "#nn.activation<leaky_relu alpha = 0.1>"),
    "leaky_relu_default": ("nn.leaky_relu %y", "#nn.activation<leaky_relu alpha = 0.01>"),
    "hard_swish": ("nn.hard_swish %y", "#nn.activation<hard_swish>"),
    "sigmoid": ("nn.sigmoid %y", "#nn.activation<sigmoid>"),
}


def pair_module(producer: str, activation: str) -> str:
    arguments, producer_op, result_type = PRODUCER_IR[producer]
    activation_op, _ = ACTIVATION_IR[activation]
    return (
        f"func.func @main({arguments}) -> {result_type} {{\n"
        f"  %y = {producer_op}\n"
        f"  %r = {activation_op} : {result_type}\n"
        f"  func.return %r : {result_type}\n"
        "}\n"
    )


@pytest.mark.parametrize("activation", ACTIVATION_IR)
@pytest.mark.parametrize("producer", PRODUCER_IR)
def test_every_pair_fuses_exactly(producer: str, activation: str) -> None:
    module = parse(pair_module(producer, activation))
    after = fuse(module)
    (fused,) = ops_named(after, f"nn.{producer}")
    assert activation_text(fused) == ACTIVATION_IR[activation][1]
    assert not activation_ops(after)
    assert len(list(after.walk())) == len(list(module.walk())) - 1


def test_the_producers_are_the_ops_with_an_activation_property() -> None:
    with_activation = {
        op.name for op in nn.NN.operations if "activation" in op.get_irdl_definition().properties
    }
    assert {op.name for op in PRODUCERS} == with_activation
    assert {f"nn.{name}" for name in PRODUCER_IR} == with_activation


def test_the_fused_op_keeps_its_location_and_attributes() -> None:
    module = parse(
        "func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {\n"
        '  %y = nn.add %a, %b {irc.note = "kept"} : tensor<4xf32>\n'
        "  %r = nn.relu %y : tensor<4xf32>\n"
        "  func.return %r : tensor<4xf32>\n"
        "}\n"
    )
    location = ops_named(module, "nn.add")[0].location
    (fused,) = ops_named(fuse(module), "nn.add")
    assert fused.location == location
    assert str(fused.attributes["irc.note"]) == '"kept"'


# --------------------------------------------------------------------------------------
# Chains and compositions


def chain_module(first: str, then: str) -> ModuleOp:
    """add, then the `first` activation op, then the `then` activation op."""
    return parse(
        "func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<4xf32>) -> tensor<2x3x4xf32> {\n"
        "  %y = nn.add %a, %b : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>\n"
        f"  %f = {first} : tensor<2x3x4xf32>\n"
        f"  %r = {then.replace('%y', '%f')} : tensor<2x3x4xf32>\n"
        "  func.return %r : tensor<2x3x4xf32>\n"
        "}\n"
    )


CHAINS = {
    # name: (first activation op, second activation op, the fused result or None if the
    # second one must stay)
    "relu_relu": ("nn.relu %y", "nn.relu %y", "#nn.activation<relu>"),
    "relu_relu6": (
        "nn.relu %y",
        "nn.clip %y {min = 0.0, max = 6.0}",
        "#nn.activation<clip min = 0.0, max = 6.0>",
    ),
    "relu_clip_above_zero": (
        "nn.relu %y",
        "nn.clip %y {min = 0.5, max = 3.0}",
        "#nn.activation<clip min = 0.5, max = 3.0>",
    ),
    "relu6_relu": (
        "nn.clip %y {min = 0.0, max = 6.0}",
        "nn.relu %y",
        "#nn.activation<clip min = 0.0, max = 6.0>",
    ),
    "clip_min_zero_relu": ("nn.clip %y {min = 0.0}", "nn.relu %y", "#nn.activation<relu>"),
    "empty_clip_relu": (
        "nn.clip %y {min = 2.0, max = 1.0}",
        "nn.relu %y",
        "#nn.activation<clip min = 2.0, max = 1.0>",
    ),
    "relu_clip_below_zero": ("nn.relu %y", "nn.clip %y {min = -1.0, max = 1.0}", None),
    "clip_below_zero_relu": ("nn.clip %y {min = -1.0, max = 1.0}", "nn.relu %y", None),
    "clip_negative_zero_relu": ("nn.clip %y {min = -0.0, max = 6.0}", "nn.relu %y", None),
    "relu_leaky_relu": ("nn.relu %y", "nn.leaky_relu %y {alpha = 0.2}", None),
    "sigmoid_relu": ("nn.sigmoid %y", "nn.relu %y", None),
    "relu_sigmoid": ("nn.relu %y", "nn.sigmoid %y", None),
    "relu6_relu6": (
        "nn.clip %y {min = 0.0, max = 6.0}",
        "nn.clip %y {min = 0.0, max = 6.0}",
        None,
    ),
}


@pytest.mark.parametrize("name", CHAINS)
def test_chains_fuse_only_when_the_composition_is_exact(name: str) -> None:
    first, then, expected = CHAINS[name]
    module = chain_module(first, then)
    first_op = module.body.block.first_op.body.block.ops.first.next_op  # after the add
    assert isinstance(first_op, nn.NNOp)
    after = fuse(module)
    (add,) = ops_named(after, "nn.add")
    remaining = activation_ops(after)
    if expected is None:
        # The first activation fused, the second one stays.
        assert activation_text(add) == str(ACTIVATION_OPS[type(first_op)](first_op))
        assert remaining == Counter({then.split()[0]: 1})
    else:
        assert activation_text(add) == expected
        assert not remaining


# Every activation attribute the pass can build or meet, including bounds at -0.0.
ATTRIBUTES = [
    nn.ActivationAttr.make("relu"),
    nn.ActivationAttr.make("sigmoid"),
    nn.ActivationAttr.make("hard_swish"),
    nn.ActivationAttr.make("leaky_relu", alpha=0.1),
    *(
        nn.ActivationAttr.make("clip", min=low, max=high)
        for low, high in itertools.product([-1.0, -0.0, 0.0, 0.5, 6.0], [-0.0, 0.0, 2.0, 6.0])
    ),
]

SPECIAL_VALUES = np.array(
    [np.nan, -np.inf, -7, -6, -1, -0.5, -1e-30, -0.0, 0.0, 1e-30, 0.5, 1, 2, 6, 7, np.inf],
    np.float32,
)


def apply(attr: nn.ActivationAttr, x: np.ndarray) -> np.ndarray:
    return ACTIVATION_FUNCTIONS[attr.kind.data](x, **attr.named_values())


@pytest.mark.parametrize("first", ATTRIBUTES, ids=str)
def test_every_composition_is_exact(first: nn.ActivationAttr) -> None:
    values = np.concatenate([SPECIAL_VALUES, np.random.default_rng(1).normal(0, 4, 200)])
    values = values.astype(np.float32)
    for then in ATTRIBUTES:
        composed = compose(first, then)
        if composed is not None:
            expected = apply(then, apply(first, values))
            assert apply(composed, values).tobytes() == expected.tobytes(), (first, then)


def test_the_exact_compositions_are_found() -> None:
    relu = nn.ActivationAttr.make("relu")
    relu6 = nn.ActivationAttr.make("clip", min=0.0, max=6.0)
    assert compose(relu, relu) == relu
    assert compose(relu, relu6) == relu6
    assert compose(relu6, relu) == relu6
    # A clip at -0.0 can give -0.0 (max(+0.0, -0.0) is -0.0), which relu makes +0.0.
    clip_at_negative_zero = nn.ActivationAttr.make("clip", min=-0.0, max=6.0)
    assert compose(clip_at_negative_zero, relu) is None
    clipped = apply(clip_at_negative_zero, np.float32([0.0]))
    assert np.signbit(clipped[0]) and not np.signbit(apply(relu, clipped)[0])


def test_a_clip_with_min_negative_zero_is_not_a_relu() -> None:
    # max(+0.0, -0.0) is -0.0 where relu gives +0.0: fusing it as a relu would be wrong.
    module = parse(pair_module("add", "relu").replace("nn.relu %y", "nn.clip %y {min = -0.0}"))
    after = fuse(module)
    assert activation_ops(after) == Counter({"nn.clip": 1})


# --------------------------------------------------------------------------------------
# Options


def test_activations_option_restricts_the_kinds() -> None:
    module = parse(pair_module("conv", "relu6"))
    after = fuse(module, "fuse-activation{activations=relu,sigmoid}")
    assert activation_ops(after) == Counter({"nn.clip": 1})
    after = fuse(module, "fuse-activation{activations=clip}")
    assert not activation_ops(after)


def test_composition_needs_the_composed_kind_to_be_listed() -> None:
    # relu then relu6 is clip: not allowed when only relus may be fused.
    module = chain_module("nn.relu %y", "nn.clip %y {min = 0.0, max = 6.0}")
    after = fuse(module, "fuse-activation{activations=relu}")
    (add,) = ops_named(after, "nn.add")
    assert activation_text(add) == "#nn.activation<relu>"
    assert activation_ops(after) == Counter({"nn.clip": 1})


def test_producers_option_restricts_the_producers() -> None:
    module = parse(pair_module("gemm", "relu"))
    assert activation_ops(fuse(module, "fuse-activation{producers=nn.conv,nn.add}"))
    assert not activation_ops(fuse(module, "fuse-activation{producers=nn.gemm}"))


@pytest.mark.parametrize(
    "pipeline, message",
    [
        ("fuse-activation{activations=relu,tanh}", "unknown activation kind 'tanh'"),
        ("fuse-activation{producers=conv}", "unknown producer 'conv'"),
    ],
)
def test_unknown_option_values_are_errors(pipeline: str, message: str) -> None:
    with pytest.raises(IrcError, match=message):
        parse_pipeline(pipeline)


# --------------------------------------------------------------------------------------
# Models


@lru_cache(maxsize=1)  # one model at a time (tests/conftest.py empties it after the module)
def canonical_light_model(path: Path) -> ModuleOp:
    module = import_model(materialize_light_model(path, seed=SEED))
    for module_pass in parse_pipeline("canonicalize"):
        module_pass.apply(make_context(), module)
    return module


@pytest.mark.slow
@pytest.mark.parametrize(
    "path", light_models(heavy=False), ids=lambda p: p.stem.removeprefix("light_")
)
def test_light_models_fuse_every_pair_exactly(path: Path) -> None:
    module = canonical_light_model(path)
    pairs = fusable_pairs(module)
    relus_before = len(ops_named(module, "nn.relu"))
    after = apply_and_compare(module, "fuse-activation", seed=SEED, rtol=0, atol=0)
    relus_after = len(ops_named(after, "nn.relu"))
    assert not fusable_pairs(after)
    assert locations(after) <= locations(module)
    assert relus_before - relus_after == sum(
        count for (_, kind), count in pairs.items() if kind == "nn.relu"
    )
    # No relu of a single-use conv remains, and every conv -> relu pair became one conv.
    for relu in ops_named(after, "nn.relu"):
        owner = relu.operands[0].owner
        assert not (isinstance(owner, nn.ConvOp) and relu.operands[0].has_one_use())
    fused_convs = [op for op in ops_named(after, "nn.conv") if "activation" in op.properties]
    assert len(fused_convs) == pairs[("nn.conv", "nn.relu")]
    assert sum(activation_ops(module).values()) - sum(activation_ops(after).values()) == sum(
        pairs.values()
    )


def _has_activation(case_path: Path) -> bool:
    kinds = {"Relu", "Clip", "LeakyRelu", "HardSwish", "Sigmoid"}
    return any(node.op_type in kinds for node in onnx.load(str(case_path)).graph.node)


ACTIVATION_CASES = [case for case in pytorch_cases() if _has_activation(case.model_path)]


@pytest.mark.parametrize("case", ACTIVATION_CASES, ids=[case.id for case in ACTIVATION_CASES])
def test_pytorch_cases_with_activations(case) -> None:
    module = import_model(case.model_path)
    pairs = fusable_pairs(module)
    before = activation_ops(module)
    after = fuse(module)
    assert not fusable_pairs(after)
    assert locations(after) <= locations(module)
    assert sum(before.values()) - sum(activation_ops(after).values()) == sum(pairs.values())
    # The shipped reference outputs still come out of the fused module.
    outputs = run_function(after, case.inputs)
    for name, expected in case.outputs.items():
        np.testing.assert_allclose(outputs[name], expected, rtol=1e-4, atol=1e-5)
