"""The rules ported to rule files give exactly the IR of the patterns they replace.

`canonicalize` applies irc/rules/canonicalize.rules and `fuse-activation` applies
irc/rules/fuse-activation.rules; with `rules=false` they apply the hand-written
patterns those files were ported from. On the whole test corpus (the light models as
shipped, with their constant weights, which makes more rules fire; every pytorch
case; the networks the suite builds; the inputs of the lit tests), both must print
the same IR, locations included.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp

from irc.diagnostics import IrcError
from irc.importers.onnx import import_model
from irc.ir.context import make_context
from irc.ir.io import PrintOptions, module_to_string, parse_module, split_input, verify_module
from irc.passes import parse_pipeline
from irc.testing.models import light_models, pytorch_cases
from irc.testing.networks import mobilenet_v2_style, resnet_style

FILECHECK = Path(__file__).resolve().parent / "filecheck"

PIPELINES = {
    "canonicalize": ("canonicalize", "canonicalize{rules=false}"),
}


def printed(module: ModuleOp, pipeline: str) -> str:
    module = module.clone()
    ctx = make_context()
    for module_pass in parse_pipeline(pipeline):
        module_pass.apply(ctx, module)
    return module_to_string(module, PrintOptions(debuginfo=True))


def parsed(text: str, name: str) -> ModuleOp | None:
    try:
        module = parse_module(text, make_context(), name)
        verify_module(module)
    except IrcError:
        return None  # chunks that test the driver's errors
    return module


def lit_inputs() -> Iterator[tuple[str, str]]:
    """Every chunk of the lit tests that holds nn ops and is valid IR on its own (the
    driver's error tests are not), with an id."""
    for path in sorted(FILECHECK.rglob("*.mlir")):
        if "Inputs" in path.parts:
            continue
        for index, chunk in enumerate(split_input(path.read_text())):
            name = f"{path.relative_to(FILECHECK)}#{index}"
            if "nn." in chunk and parsed(chunk, name) is not None:
                yield name, chunk


LIT_INPUTS = list(lit_inputs())


@pytest.mark.parametrize("pipeline", PIPELINES)
@pytest.mark.parametrize("name, text", LIT_INPUTS, ids=[name for name, _ in LIT_INPUTS])
def test_lit_inputs(pipeline: str, name: str, text: str) -> None:
    module = parsed(text, name)
    assert module is not None
    with_rules, with_patterns = PIPELINES[pipeline]
    assert printed(module, with_rules) == printed(module, with_patterns)


@pytest.mark.parametrize("pipeline", PIPELINES)
@pytest.mark.parametrize("path", light_models(), ids=lambda p: p.stem.removeprefix("light_"))
def test_light_models(pipeline: str, path: Path) -> None:
    module = import_model(path)
    with_rules, with_patterns = PIPELINES[pipeline]
    assert printed(module, with_rules) == printed(module, with_patterns)


CASES = pytorch_cases()


@pytest.mark.parametrize("pipeline", PIPELINES)
@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_pytorch_cases(pipeline: str, case) -> None:
    module = import_model(case.model_path)
    with_rules, with_patterns = PIPELINES[pipeline]
    assert printed(module, with_rules) == printed(module, with_patterns)


@pytest.mark.parametrize("pipeline", PIPELINES)
@pytest.mark.parametrize("build", [mobilenet_v2_style, resnet_style], ids=lambda b: b.__name__)
def test_built_networks(pipeline: str, build) -> None:
    module = import_model(build(seed=0))
    with_rules, with_patterns = PIPELINES[pipeline]
    assert printed(module, with_rules) == printed(module, with_patterns)


def test_the_corpus_makes_the_rules_fire() -> None:
    """The comparison means something only if the rules rewrite the corpus."""
    module = import_model(next(p for p in light_models() if "resnet50" in p.stem))
    before = module_to_string(module)
    assert printed(module, "canonicalize") != before
    assert "nn.sum" in before and "nn.sum" not in printed(module, "canonicalize")
