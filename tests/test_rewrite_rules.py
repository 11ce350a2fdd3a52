"""The rewrite-rule language: natives, runtime behaviour, and what lit cannot check.

(Parsing, semantic errors and application are covered by tests/filecheck/rewrite/.)
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker

from irc.diagnostics import IrcError
from irc.dialects import nn
from irc.ir.context import make_context
from irc.ir.io import module_to_string, parse_module
from irc.rewrite import RuleContext, constraint, helper, load_rules, rules_from_text
from irc.testing.numerics import random_function_inputs


def apply(rules_text: str, ir: str, **arguments: object) -> tuple[str, object, object]:
    """Apply rules to IR, the file's parameters bound to `arguments`; returns the printed
    result and the modules before and after."""
    ctx: Context = make_context()
    module = parse_module(ir, ctx, "input.mlir")
    before = module.clone()
    patterns = [rule(**arguments) for rule in rules_from_text(rules_text, "test.rules")]
    walker = PatternRewriteWalker(GreedyRewritePatternApplier(patterns, ctx=ctx))
    walker.rewrite_module(module)
    module.verify()
    return module_to_string(module), before, module


def same_outputs(before, after) -> None:
    from irc.interp import run_function

    inputs = random_function_inputs(before, seed=3)
    expected, actual = run_function(before, inputs), run_function(after, inputs)
    for name, array in expected.items():
        np.testing.assert_array_equal(actual[name], array)


@constraint("test_is_power_of_two")
def is_power_of_two(number: int) -> bool:
    return number > 0 and number & (number - 1) == 0


@helper("test_halve")
def halve(values: list[int]) -> list[int]:
    return [value // 2 for value in values]


@helper("test_negated_constant", builds_ops=True)
def negated_constant(context: RuleContext, value) -> object:
    """A helper that creates an op: the negation of a constant, as a new constant."""
    from irc.rewrite.natives import constant_data

    data = constant_data(value)
    assert data is not None
    return context.insert(nn.ConstantOp.from_array(-data)).results[0]


def test_user_natives_are_called_by_name() -> None:
    rules = """
    rule halve_even_split {
      match $s = nn.split($x) {axis = $axis, sizes = $sizes};
      where test_is_power_of_two(shape($x)[1]);
      replace nn.split($x) {axis = $axis, sizes = $sizes};
    }
    """
    # The helper and constraint compile and run (the rule rebuilds an equal split).
    patterns = rules_from_text(rules, "natives.rules")
    assert [p.rule_name for p in patterns] == ["halve_even_split"]


def test_helper_that_builds_ops() -> None:
    rules = """
    rule sub_constant_to_add {
      match nn.sub($x, $c);
      where is_constant($c);
      replace nn.add($x, test_negated_constant($c));
    }
    """
    ir = """
    func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
      %c = nn.constant dense<[1.0, -2.0, 0.5]> : tensor<3xf32>
      %y = nn.sub %x, %c : tensor<3xf32>
      func.return %y : tensor<3xf32>
    }
    """
    text, before, after = apply(rules, ir)
    assert "nn.sub" not in text
    assert "dense<[-1.000000e+00, 2.000000e+00, -5.000000e-01]>" in text
    same_outputs(before, after)


def test_float_property_literals_compare_as_stored() -> None:
    # 0.1 is stored as the f32 nearest to 0.1; the literal is converted the same way.
    rules = """
    rule leaky_to_relu {
      match nn.leaky_relu($x) {alpha = 0.1};
      replace nn.relu($x);
    }
    """
    ir = """
    func.func @main(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
      %a = nn.leaky_relu %x {alpha = 0.1} : tensor<3xf32>
      %b = nn.leaky_relu %x {alpha = 0.2} : tensor<3xf32>
      func.return %a, %b : tensor<3xf32>, tensor<3xf32>
    }
    """
    text, _, _ = apply(rules, ir)
    assert "%a = nn.relu %x" in text
    assert "%b = nn.leaky_relu %x {alpha = 0.2}" in text


def test_variadic_captures_and_spread() -> None:
    rules = """
    rule rotate_max {
      match nn.max($first, $rest...);
      where rank($first) == 1;
      replace nn.min($rest..., $first);
    }
    """
    ir = """
    func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>, %c: tensor<2xf32>) -> tensor<2xf32> {
      %m = nn.max %a, %b, %c : tensor<2xf32>
      func.return %m : tensor<2xf32>
    }
    """
    text, _, _ = apply(rules, ir)
    assert "nn.min %b, %c, %a" in text


def test_a_rule_that_builds_an_invalid_op_is_reported_at_the_rule() -> None:
    rules = """
    rule bad_gemm {
      match nn.relu($x);
      replace nn.gemm($x, $x);
    }
    """
    ir = """
    func.func @main(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
      %r = nn.relu %x : tensor<1x2x3x3xf32>
      func.return %r : tensor<1x2x3x3xf32>
    }
    """
    with pytest.raises(IrcError) as raised:
        apply(rules, ir)
    text = str(raised.value)
    assert "test.rules:4:15: error: rule 'bad_gemm' built an invalid 'nn.gemm'" in text
    assert "gemm operands must be 2-D" in text


def test_absent_means_unset() -> None:
    rules = """
    rule only_unfused {
      match nn.relu($c = nn.matmul($a, $b) {activation = absent});
      where one_use($c);
      replace nn.matmul($a, $b) {...$c, activation = #nn.activation<relu>};
    }
    """
    ir = """
    func.func @main(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
      %m = nn.matmul %a, %a {activation = #nn.activation<sigmoid>} : tensor<2x2xf32>
      %r = nn.relu %m : tensor<2x2xf32>
      func.return %r : tensor<2x2xf32>
    }
    """
    text, _, _ = apply(rules, ir)
    assert "nn.relu" in text  # the matmul already has an activation: no fusion


def test_rule_files_are_compiled_once(tmp_path) -> None:
    path = tmp_path / "once.rules"
    path.write_text("rule drop { match nn.identity($x); replace $x; }\n")
    assert load_rules(path) is load_rules(path)
    path.write_text("rule drop_again { match nn.identity($x); replace $x; }\n")
    assert [p.rule_name for p in load_rules(path)] == ["drop_again"]


def test_generated_code_is_kept_for_inspection() -> None:
    (pattern,) = rules_from_text("rule drop { match nn.identity($x); replace $x; }", "x.rules")
    assert pattern.source.startswith("def match_and_rewrite(self, op, rewriter):")
    assert "rt.check_types" in pattern.source
    assert pattern.location.line == 1


# --------------------------------------------------------------------------------------
# Parameters: how a pass hands its options to a file's rules


@constraint("test_is_listed")
def is_listed(name: str, names: frozenset[str]) -> bool:
    return name in names


PARAMETER_RULES = """
param kinds;
param max_rank = 1;

rule drop_listed {
  match $op = nn.identity|nn.dropout($x);
  where test_is_listed(op_kind($op), kinds), rank($x) <= max_rank;
  replace $x;
}
"""

PARAMETER_IR = """
func.func @main(%x: tensor<4xf32>, %m: tensor<2x2xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<2x2xf32>) {
  %i = nn.identity %x : tensor<4xf32>
  %d = nn.dropout %x : tensor<4xf32>
  %j = nn.identity %m : tensor<2x2xf32>
  func.return %i, %d, %j : tensor<4xf32>, tensor<4xf32>, tensor<2x2xf32>
}
"""


@helper("op_kind")
def op_kind(op) -> str:
    return op.name.removeprefix("nn.")


def test_parameters_reach_conditions_and_natives() -> None:
    # The same compiled rule, instantiated with different arguments, does different
    # things: each instance reads its own.
    only_identity, _, _ = apply(PARAMETER_RULES, PARAMETER_IR, kinds=frozenset({"identity"}))
    assert "nn.identity %x" not in only_identity
    assert "nn.dropout %x" in only_identity
    both, _, _ = apply(PARAMETER_RULES, PARAMETER_IR, kinds=frozenset({"identity", "dropout"}))
    assert "nn.dropout" not in both
    # max_rank's default (1) keeps the 2-D identity; an argument overrides it.
    assert "nn.identity %m" in both
    wider, _, _ = apply(PARAMETER_RULES, PARAMETER_IR, kinds=frozenset({"identity"}), max_rank=2)
    assert "nn.identity" not in wider


def test_a_parameter_without_value_or_default_is_an_error_at_its_declaration() -> None:
    (rule,) = rules_from_text(PARAMETER_RULES, "params.rules")
    assert [(p.name, p.has_default, p.default) for p in rule.parameters] == [
        ("kinds", False, None),
        ("max_rank", True, 1),
    ]
    with pytest.raises(IrcError) as raised:
        rule()
    assert "params.rules:2:7: error: the rule file's parameter 'kinds' has no value" in str(
        raised.value
    )
    with pytest.raises(TypeError, match="no parameter 'kind' in the rule file"):
        rule(kind=frozenset())


# --------------------------------------------------------------------------------------
# Layering: transforms -> rewrite -> interp -> dialects -> ir

IRC = Path(__file__).resolve().parent.parent / "irc"


def imported_modules(path: Path) -> set[str]:
    """Every module a source file imports, at its top or inside functions."""
    modules = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules.add(node.module)
    return modules


def imports_of(package: str) -> dict[str, set[str]]:
    return {
        str(path.relative_to(IRC.parent)): imported_modules(path)
        for path in sorted((IRC / package).glob("*.py"))
    }


def test_the_dialects_import_no_pass_and_no_rule_machinery() -> None:
    for path, modules in imports_of("dialects").items():
        upward = {m for m in modules if m.startswith(("irc.transforms", "irc.rewrite"))}
        assert not upward, f"{path} imports {sorted(upward)}"


def test_the_rule_machinery_imports_no_pass() -> None:
    # constant_array is on its way from irc/transforms/fold_constants.py to irc/ir/.
    allowed = {"irc/rewrite/natives.py": {"irc.transforms.fold_constants"}}
    for path, modules in imports_of("rewrite").items():
        upward = {m for m in modules if m.startswith("irc.transforms")}
        assert upward <= allowed.get(path, set()), f"{path} imports {sorted(upward)}"
