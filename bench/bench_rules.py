"""Benchmark: compiled rewrite rules against the hand-written patterns they port.

    .venv/bin/python bench/bench_rules.py [--repeat N] [--blocks N]

`canonicalize` and `fuse-activation` run either the shipped rule files
(irc/rules/*.rules, compiled to xDSL patterns when loaded) or, with `rules=false`,
the hand-written Python patterns they were ported from; both give the same IR
(tests/test_rule_ports.py). This script times both on DenseNet-121 (the light model
as shipped, ~900 ops) and on a synthetic model large enough that pattern matching
dominates (`--blocks` repetitions of conv, relu, transposes, reshape chains, x*1),
then on that model once canonical, where no rule fires and only matching costs, and
prints the median time of each and their ratio. Compiling the rule files is
timed separately (it happens once per process).
"""

from __future__ import annotations

import argparse
import statistics
import time

from xdsl.dialects.builtin import ModuleOp

from irc.importers.onnx import import_model
from irc.ir.context import make_context
from irc.ir.io import parse_module
from irc.passes import parse_pipeline
from irc.testing.models import light_model


def synthetic_model(blocks: int) -> ModuleOp:
    """A long chain of blocks that every ported rule has something to do in."""
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


def run(module: ModuleOp, pipeline: str, repeat: int) -> float:
    """Median seconds of applying `pipeline` to fresh copies of `module`."""
    passes = parse_pipeline(pipeline)
    times = []
    for _ in range(repeat):
        copy = module.clone()
        ctx = make_context()
        start = time.perf_counter()
        for module_pass in passes:
            module_pass.apply(ctx, copy)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per figure (median)")
    parser.add_argument("--blocks", type=int, default=2000, help="blocks of the synthetic model")
    args = parser.parse_args()

    from irc.rewrite import load_rules

    start = time.perf_counter()
    rule_count = len(load_rules("canonicalize")) + len(load_rules("fuse-activation"))
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
    pipelines = {
        "canonicalize": ("canonicalize", "canonicalize{rules=false}"),
    }
    print(
        f"compiling {rule_count} rules (2 files, once per process): {compile_seconds * 1000:.1f} ms"
    )
    print(f"{'model':<28}{'pass':<17}{'ops':>7}{'rules':>11}{'patterns':>11}{'ratio':>8}")
    for model_name, module in models.items():
        ops = sum(1 for _ in module.walk())
        for pass_name, (with_rules, with_patterns) in pipelines.items():
            rules_seconds = run(module, with_rules, args.repeat)
            patterns_seconds = run(module, with_patterns, args.repeat)
            print(
                f"{model_name:<28}{pass_name:<17}{ops:>7}{rules_seconds * 1000:>9.1f}ms"
                f"{patterns_seconds * 1000:>9.1f}ms{rules_seconds / patterns_seconds:>8.2f}"
            )


if __name__ == "__main__":
    main()
