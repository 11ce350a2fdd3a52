"""Benchmark: what the shipped rule files cost in the passes that apply them.

    .venv/bin/python bench/bench_rules.py [--repeat N] [--blocks N]

`canonicalize` applies irc/rules/canonicalize.rules after constant folding, and
`fuse-activation` applies irc/rules/fuse-activation.rules, both compiled to xDSL
patterns when loaded. This script times each pass, then the same pass without its
rules (canonicalize with every rule disabled: the walk, constant folding and dead
code removal; fuse-activation's walk with no pattern), and prints the difference:
the time spent in the rules, matching and rewriting. The models are DenseNet-121
(the light model as shipped, ~900 ops), a synthetic model large enough that
rewriting dominates (`--blocks` repetitions of conv, relu, transposes, reshape chains,
x*1), and that model once canonical, where no rule fires and only matching costs.
Compiling the rule files is timed separately (it happens once per process).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker

from irc.importers.onnx import import_model
from irc.ir.context import make_context
from irc.ir.io import parse_module
from irc.passes import parse_pipeline
from irc.rewrite import load_rules
from irc.testing.models import light_model
from irc.transforms.canonicalize import CanonicalizePass
from irc.transforms.fuse_activation import FuseActivationPass


def synthetic_model(blocks: int) -> ModuleOp:
    """A long chain of blocks in which many rules have something to do."""
    lines = ["func.func @main(%x0: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {"]
    lines.append("  %w = nn.constant dense<0.01> : tensor<8x8x1x1xf32>")
    lines.append("  %one = nn.constant dense<1.0> : tensor<1x8x8x8xf32>")
    for i in range(blocks):
        x, y = f"%x{i}", f"%x{i + 1}"
        lines += [
            f"  %c{i} = nn.conv {x}, %w : (tensor<1x8x8x8xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x8x8xf32>",
            f"  %r{i} = nn.relu %c{i} : tensor<1x8x8x8xf32>",
            f"  %t{i} = nn.transpose %r{i} {{perm = [0, 2, 3, 1]}} : (tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>",
            f"  %u{i} = nn.transpose %t{i} {{perm = [0, 3, 1, 2]}} : (tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>",
            f"  %f{i} = nn.flatten %u{i} : (tensor<1x8x8x8xf32>) -> tensor<1x512xf32>",
            f"  %s{i} = nn.reshape %f{i} : (tensor<1x512xf32>) -> tensor<1x8x8x8xf32>",
            f"  %i{i} = nn.identity %s{i} : tensor<1x8x8x8xf32>",
            f"  {y} = nn.mul %i{i}, %one : tensor<1x8x8x8xf32>",
        ]
    lines.append(f"  func.return %x{blocks} : tensor<1x8x8x8xf32>")
    lines.append("}")
    return parse_module("\n".join(lines), make_context(), "synthetic.mlir")


def timed(module: ModuleOp, module_pass: ModulePass) -> float:
    """Seconds of applying `module_pass` to a fresh copy of `module`."""
    copy = module.clone()
    ctx = make_context()
    start = time.perf_counter()
    module_pass.apply(ctx, copy)
    return time.perf_counter() - start


def compare(
    module: ModuleOp, with_rules: ModulePass, without_rules: ModulePass, repeat: int
) -> tuple[float, float]:
    """The fastest of `repeat` runs of each pass, run in turns (the fastest run is the
    one least disturbed by other work on the machine)."""
    runs = [(timed(module, with_rules), timed(module, without_rules)) for _ in range(repeat)]
    return min(run[0] for run in runs), min(run[1] for run in runs)


@dataclass(frozen=True)
class WalkOnly(ModulePass):
    """fuse-activation without its rule: the same walk, with no pattern to try."""

    name = "walk-only"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier([])).rewrite_module(op)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs per figure (the fastest)")
    parser.add_argument("--blocks", type=int, default=2000, help="blocks of the synthetic model")
    args = parser.parse_args()

    start = time.perf_counter()
    canonicalize_rules = load_rules("canonicalize")
    rule_count = len(canonicalize_rules) + len(load_rules("fuse-activation"))
    compile_seconds = time.perf_counter() - start

    synthetic = synthetic_model(args.blocks)
    settled = synthetic.clone()
    for module_pass in parse_pipeline("canonicalize,fuse-activation"):
        module_pass.apply(make_context(), settled)
    models = {
        "densenet121 (light)": import_model(light_model("densenet121")),
        f"synthetic, {args.blocks} blocks": synthetic,
        # Nothing fires any more: the time is that of matching alone.
        "synthetic, canonical": settled,
    }
    every_rule = tuple(rule.rule_name for rule in canonicalize_rules)
    pipelines: dict[str, tuple[ModulePass, ModulePass]] = {
        "canonicalize": (CanonicalizePass(), CanonicalizePass(disable_patterns=every_rule)),
        "fuse-activation": (FuseActivationPass(), WalkOnly()),
    }
    print(
        f"compiling {rule_count} rules (2 files, once per process): {compile_seconds * 1000:.1f} ms"
    )
    print(f"{'model':<28}{'pass':<17}{'ops':>7}{'pass':>11}{'no rules':>11}{'rules':>11}")
    for model_name, module in models.items():
        ops = sum(1 for _ in module.walk())
        for pass_name, (with_rules, without_rules) in pipelines.items():
            pass_seconds, bare_seconds = compare(module, with_rules, without_rules, args.repeat)
            print(
                f"{model_name:<28}{pass_name:<17}{ops:>7}{pass_seconds * 1000:>9.1f}ms"
                f"{bare_seconds * 1000:>9.1f}ms{(pass_seconds - bare_seconds) * 1000:>9.1f}ms"
            )


if __name__ == "__main__":
    main()
