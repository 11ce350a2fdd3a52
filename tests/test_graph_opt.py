"""`graph-opt` on real networks: the acceptance test of the graph optimisation passes.

On every light model of the onnx package (weights materialised from a fixed seed) and
on the networks the suite builds (`irc.testing.networks`: MobileNetV2-style and
ResNet-style, NCHW, with explicit BatchNormalization), after importing and running
`graph-opt`:

- no `nn.batch_norm` or `nn.dropout` remains;
- every conv followed by a ReLU or Clip (directly, or through a batch norm that folds
  into it) carries it as a fused activation: no `nn.relu`/`nn.clip` reads a conv;
- every conv is channels-last (the default `layout=nhwc`);
- the only `nn.transpose` ops are at the function's inputs and outputs, and the
  model's own channel shuffles (ShuffleNet: Reshape, Transpose, Reshape, which is
  the computation itself, not a layout change; at most as many as the model has);
- the outputs match onnxruntime running the ORIGINAL model within rtol 1e-4 / atol 1e-5.

Each model is one test that checks everything and lists every failed criterion.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import onnx
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import BlockArgument, Operation

from irc.diagnostics import IrcError, collect_diagnostics
from irc.dialects import nn
from irc.importers.onnx import import_model
from irc.importers.reference import run_onnxruntime
from irc.interp import run_function
from irc.ir.context import make_context
from irc.ir.io import verify_module
from irc.numerics import compare
from irc.passes import get_pass_class, parse_pipeline
from irc.resources import release_memory
from irc.testing.models import light_models, materialize_light_model
from irc.testing.networks import NETWORKS
from irc.testing.reference import random_inputs
from irc.tools.opt import main

RTOL, ATOL = 1e-4, 1e-5
SEED = 0

MODEL_BUILDERS: dict[str, Callable[[], onnx.ModelProto]] = {
    **{
        path.stem.removeprefix("light_"): (
            lambda path=path: materialize_light_model(path, seed=SEED)  # type: ignore[misc]
        )
        for path in light_models(heavy=False)
    },
    **{name: (lambda build=build: build(SEED)) for name, build in NETWORKS.items()},
}
SLOW_MODELS = {"bvlc_alexnet", "zfnet512"}
"""The models with the largest weights (seconds to materialise, import and transpose)."""


@cache
def _network(name: str) -> onnx.ModelProto:
    return NETWORKS[name](SEED)


def original(name: str) -> onnx.ModelProto:
    """The model before irc sees it. The built networks, used by several tests, are
    cached; the light models are not (ZFNet-512 alone holds 250 MB of weights)."""
    return _network(name) if name in NETWORKS else MODEL_BUILDERS[name]()


def graph_opt(module: ModuleOp, pipeline: str = "graph-opt") -> None:
    with collect_diagnostics():  # the transpose-count remarks
        for module_pass in parse_pipeline(pipeline):
            module_pass.apply(make_context(), module)
    verify_module(module)


# --------------------------------------------------------------------------------------
# What graph-opt must leave


def _main(module: ModuleOp) -> FuncOp:
    return next(op for op in module.ops if isinstance(op, FuncOp))


def _producer(op: Operation, index: int = 0) -> Operation | None:
    owner = op.operands[index].owner
    return owner if isinstance(owner, Operation) else None


def _at_boundary(transpose: nn.TransposeOp) -> bool:
    """A transpose of a function argument, or one whose result is only returned."""
    if isinstance(transpose.operands[0], BlockArgument):
        return True
    uses = list(transpose.results[0].uses)
    return bool(uses) and all(isinstance(use.operation, ReturnOp) for use in uses)


def _is_channel_shuffle(transpose: nn.TransposeOp) -> bool:
    """Reshape to (N, groups, C/groups, ...) -> swap the two group axes -> reshape back,
    in either layout: a permutation of the data that IS the computation."""
    perm = transpose.props().ints("perm") or []
    swapped = [index for index, axis in enumerate(perm) if index != axis]
    users = [use.operation for use in transpose.results[0].uses]
    return (
        len(perm) == 5
        and len(swapped) == 2
        and swapped[1] == swapped[0] + 1
        and isinstance(_producer(transpose), nn.ReshapeOp)
        and len(users) == 1
        and isinstance(users[0], nn.ReshapeOp)
    )


def _expected_fusions(model: onnx.ModelProto) -> int:
    """ONNX Relu/Clip nodes whose input is a Conv, directly or through a
    BatchNormalization, with no other consumer along the way: graph-opt must fuse each."""
    producers = {output: node for node in model.graph.node for output in node.output}
    consumers: dict[str, int] = {}
    for node in model.graph.node:
        for name in node.input:
            consumers[name] = consumers.get(name, 0) + 1
    count = 0
    for node in model.graph.node:
        if node.op_type not in ("Relu", "Clip"):
            continue
        source = producers.get(node.input[0])
        if source is not None and source.op_type == "BatchNormalization":
            if consumers.get(source.output[0]) != 1:
                continue
            source = producers.get(source.input[0])
        if source is not None and source.op_type == "Conv" and consumers[source.output[0]] == 1:
            count += 1
    return count


@dataclass
class Outcome:
    """The criteria a model meets after graph-opt; `problems` lists the failed ones."""

    problems: list[str]
    transposes_left: int
    fused_convs: int


def check_graph_opt(name: str) -> Outcome:
    model = original(name)
    module = import_model(model)
    graph_opt(module)
    # The weights graph-opt replaced are garbage in reference cycles (an erased op and
    # its results) until a full collection: ZFNet-512's 302 MB gemm weight would stay
    # while the module and onnxruntime run.
    release_memory()
    problems: list[str] = []
    ops = list(_main(module).walk())

    leftovers = [op.name for op in ops if isinstance(op, nn.BatchNormOp | nn.DropoutOp)]
    if leftovers:
        problems.append(f"{len(leftovers)} ops remain that must be gone: {sorted(set(leftovers))}")

    unfused = [
        op
        for op in ops
        if isinstance(op, nn.ReluOp | nn.ClipOp) and isinstance(_producer(op), nn.ConvOp)
    ]
    if unfused:
        problems.append(f"{len(unfused)} relu/clip ops still read a conv")
    convs = [op for op in ops if isinstance(op, nn.ConvOp)]
    fused = [conv for conv in convs if conv.activation is not None]
    expected = _expected_fusions(model)
    if len(fused) < expected:
        problems.append(f"{len(fused)} convs carry an activation; the model has {expected} to fuse")
    channels_first = [conv for conv in convs if conv.props().str("layout") != "nhwc"]
    if channels_first:
        problems.append(f"{len(channels_first)} of {len(convs)} convs are not channels-last")

    transposes = [op for op in ops if isinstance(op, nn.TransposeOp)]
    inside = [t for t in transposes if not _at_boundary(t)]
    shuffles = [t for t in inside if _is_channel_shuffle(t)]
    model_transposes = sum(node.op_type == "Transpose" for node in model.graph.node)
    if len(inside) > len(shuffles):
        problems.append(
            f"{len(inside) - len(shuffles)} transposes inside the graph (not at an input or "
            f"output, not a channel shuffle)"
        )
    if len(shuffles) > model_transposes:
        problems.append(f"{len(shuffles)} channel shuffles, but the model has {model_transposes}")

    inputs = random_inputs(model, seed=SEED)
    try:
        actual = run_function(module, inputs)
    except IrcError as failure:
        problems.append(f"the optimised IR does not run: {failure}")
    else:
        report = compare(actual, run_onnxruntime(model, inputs), RTOL, ATOL)
        if not report.ok:
            problems.append(f"outputs differ from onnxruntime:\n{report.format()}")
    return Outcome(problems, len(transposes), len(fused))


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=[pytest.mark.slow] if name in SLOW_MODELS else [])
        for name in MODEL_BUILDERS
    ],
)
def test_graph_opt_on_model(name: str) -> None:
    outcome = check_graph_opt(name)
    assert not outcome.problems, f"{name} after graph-opt:\n- " + "\n- ".join(outcome.problems)


def test_every_model_is_covered() -> None:
    assert len(light_models(heavy=False)) == 8  # VGG-19 only in tests/test_models.py
    assert {"mobilenet_v2_style", "resnet_style"} <= MODEL_BUILDERS.keys()


# --------------------------------------------------------------------------------------
# The pipeline and its options


def test_pipeline_order_and_options() -> None:
    graph_opt_class = get_pass_class("graph-opt")
    names = [p.name for p in graph_opt_class().pipeline()]  # type: ignore[attr-defined]
    assert names == [
        "canonicalize",
        "fuse-norms",
        "fold-batchnorm",
        "fuse-pad",
        "canonicalize",
        "convert-layout",
        "cancel-transposes",
        "fuse-activation",
        "canonicalize",
        "cse",
        "dce",
    ]
    (kept,) = parse_pipeline("graph-opt{layout=keep activations=relu}")
    kept_passes = kept.pipeline()  # type: ignore[attr-defined]
    assert "convert-layout" not in [p.name for p in kept_passes]
    fuse = next(p for p in kept_passes if p.name == "fuse-activation")
    assert fuse.activations == ("relu",)
    (nchw,) = parse_pipeline("graph-opt{layout=nchw}")
    convert = next(p for p in nchw.pipeline() if p.name == "convert-layout")  # type: ignore[attr-defined]
    assert convert.layout == "nchw"


def test_bad_option_inside_the_pipeline_is_reported_when_parsing() -> None:
    with pytest.raises(IrcError, match="unknown activation kind 'tanh'"):
        parse_pipeline("graph-opt{activations=tanh}")
    with pytest.raises(IrcError, match="layout"):
        parse_pipeline("graph-opt{layout=nwhc}")


def test_layout_keep_and_restricted_activations() -> None:
    model = original("mobilenet_v2_style")
    module = import_model(model)
    graph_opt(module, "graph-opt{layout=keep activations=relu}")
    ops = list(module.walk())
    assert not any(isinstance(op, nn.TransposeOp | nn.BatchNormOp) for op in ops)
    assert all(op.props().str("layout") != "nhwc" for op in ops if isinstance(op, nn.ConvOp))
    # ReLU6 is a clip: not fused when only relu is allowed.
    clips = [op for op in ops if isinstance(op, nn.ClipOp)]
    assert clips and all(isinstance(_producer(op), nn.ConvOp) for op in clips)
    inputs = random_inputs(model, seed=SEED)
    report = compare(run_function(module, inputs), run_onnxruntime(model, inputs), RTOL, ATOL)
    assert report.ok, report.format()


@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_each_pass_of_graph_opt_keeps_the_numerics(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """irc-opt --verify-each-numerics runs graph-opt pass by pass on the networks."""
    from irc.fileio import StagedOutputs
    from irc.ir.io import PrintOptions, write_module
    from irc.ir.weights import WeightsMode

    source = tmp_path / f"{name}.mlir"
    with StagedOutputs() as staged:
        options = PrintOptions(weights=WeightsMode.SIDECAR)
        write_module(import_model(original(name)), source, options, staged)
    output = tmp_path / "out.mlir"
    status = main(
        [
            str(source),
            "-p",
            "graph-opt",
            "--verify-each-numerics",
            "--mlir-timing",
            "-o",
            str(output),
        ]
    )
    err = capsys.readouterr().err
    assert status == 0, err
    # Every pass of the pipeline ran (and was checked) on its own.
    for title in (
        "FoldBatchNorm",
        "FusePad",
        "ConvertLayout",
        "CancelTransposes",
        "FuseActivation",
    ):
        assert f"  {title}\n" in err
    assert "Numerics verification" in err
    assert output.exists()
