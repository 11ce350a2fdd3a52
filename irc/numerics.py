"""Numerical verification of passes: run the IR before and after, and compare.

A pass may rewrite the IR as it likes as long as the program computes the same
numbers. `NumericsChecker` checks that: it draws seeded random inputs for the entry
function, runs the reference interpreter on the IR before a pass, and, given the IR
after the pass, runs it on the same inputs and compares the outputs within a
tolerance. `irc-opt --verify-each-numerics` uses it before the first pass and after
every pass; a pass's numerical tests use it through `irc.testing.numerics`. `compare`
compares a run's outputs with reference outputs by name (`irc-run
--compare-onnxruntime`, the tests).

Every comparison follows one rule (`compare_arrays`): an element of a float tensor
passes when |actual - expected| <= atol + rtol * magnitude, where the magnitude is the
largest finite |expected| of the whole tensor. The tolerance scales with the tensor,
not with the element, because that is how floating-point errors behave: a sum of
products carries an error relative to the size of its terms, so a value that is small
beside the rest of its tensor (a logit near zero among logits in the thousands, a
convolution output that cancels) carries the absolute error of the large ones, and a
correct rewrite that rounds differently (a folded batch norm) moves it by far more than
rtol of itself. A real bug (a wrong formula, a dropped bias) moves values by a fraction
of the tensor's scale, far beyond rtol of it. Integer and boolean tensors must be
equal; NaNs must be at the same places, and infinities equal.

    checker = NumericsChecker(module, seed=0, rtol=1e-4, atol=1e-5)
    FoldBatchNormPass().apply(ctx, module)
    checker.check(module, "fold-batchnorm")  # raises NumericalDivergence if it broke

When the outputs differ, the checker finds where the difference starts. It runs
both IRs again, recording op results, and matches the values of the two IRs by the
location of the op that computes them (the ONNX node name, or `file:line:col` in
parsed text; passes keep locations on the ops they create) and the result index,
when their types agree. The error points at the first matched value, in the
program order of the IR after the pass, that differs beyond the tolerance and whose
difference reaches a differing output; if no matched value does, at the first
output that differs.

Intermediate differences alone are not errors, and not every one is a culprit: a
pass that folds a batch norm or an activation into a convolution keeps the
convolution's location on an op that now computes more. Such a value is recognised
as moved when it equals the value of an op the pass removed just after it (up to
VANISHED_SUCCESSOR_DEPTH ops away), and a difference that later values no longer
show (it "healed") is not blamed.

Memory stays bounded by what one run needs when nothing diverges: only the outputs
are kept between checks. Only a divergence costs two more runs, and those keep only
the values of the IR before the pass whose location also exists after it (and of
the ops removed just after those), each matched value dropped once compared.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType, UnknownLoc
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.interpreter import Interpreter, PythonValues
from xdsl.ir import Attribute, Operation, OpResult, SSAValue

from irc.diagnostics import Diagnostic, IrcError, Location, Severity, error
from irc.dialects.nn import ConstantOp
from irc.interp import function_signature, make_interpreter
from irc.ir.weights import dtype_of

DEFAULT_RTOL = 1e-4
"""Relative tolerance of numerical verification (`--numerics-rtol`)."""

DEFAULT_ATOL = 1e-5
"""Absolute tolerance of numerical verification (`--numerics-atol`)."""

DEFAULT_SEED = 0
"""Seed of the random inputs of numerical verification (`--numerics-seed`)."""


# --------------------------------------------------------------------------------------
# Inputs


def random_function_inputs(
    module: ModuleOp, seed: int, entry: str = "main"
) -> dict[str, np.ndarray]:
    """Seeded inputs for the entry function, by name: standard-normal floats,
    integers in {0, 1} and fair booleans, of exactly the argument types."""
    rng = np.random.default_rng(seed)
    inputs: dict[str, np.ndarray] = {}
    for name, tensor_type in function_signature(module, entry)[0]:
        dtype = dtype_of(tensor_type.get_element_type())
        shape = tuple(tensor_type.get_shape())
        if dtype.kind == "f":
            inputs[name] = rng.standard_normal(shape).astype(dtype)
        elif dtype == np.bool_:
            inputs[name] = rng.random(shape) < 0.5
        else:
            inputs[name] = rng.integers(0, 2, size=shape).astype(dtype)
    return inputs


# --------------------------------------------------------------------------------------
# Comparing arrays


@dataclass(frozen=True)
class ValueComparison:
    """How an array compares with the reference it should equal.

    An element passes when |actual - expected| <= `tolerance`, which is atol + rtol *
    `magnitude`, the largest finite |expected| of the array (0 for integer and boolean
    arrays, which must be equal; see the module's docstring); NaNs must be at the same
    places. `max_rel_error` is the largest |actual - expected| / |expected| over
    elements whose expected value is non-zero, for information. `worst_index` is the
    element furthest outside the tolerance, the one with the largest difference (None
    when all pass), with the two values there. `problem` explains a failure that is
    not numeric.
    """

    max_abs_error: float = 0.0
    max_rel_error: float = 0.0
    mismatched: int = 0
    size: int = 0
    magnitude: float = 0.0
    tolerance: float = 0.0
    worst_index: tuple[int, ...] | None = None
    actual_at_worst: float | None = None
    expected_at_worst: float | None = None
    problem: str | None = None

    @property
    def ok(self) -> bool:
        """True when every element is within tolerance and nothing else is wrong."""
        return self.problem is None and self.mismatched == 0

    def describe(self) -> str:
        """The errors in one phrase: maximum absolute error against the tolerance,
        maximum relative error, and where the worst element is."""
        if self.problem is not None:
            return self.problem
        text = (
            f"max abs error {self.max_abs_error:.3g} (tolerance {self.tolerance:.3g}, for "
            f"values up to {self.magnitude:.5g}), max rel error {self.max_rel_error:.3g}, "
            f"{self.mismatched} of {self.size} elements beyond tolerance"
        )
        if self.worst_index is not None:
            index = ", ".join(str(i) for i in self.worst_index)
            text += (
                f"; worst at index [{index}]: {self.actual_at_worst:.7g} "
                f"instead of {self.expected_at_worst:.7g}"
            )
        return text


def compare_arrays(
    actual: np.ndarray, expected: np.ndarray, rtol: float, atol: float
) -> ValueComparison:
    """Compare `actual` with `expected`: within atol + rtol times the largest finite
    |expected| of the array, element by element (see `ValueComparison`)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    if actual.shape != expected.shape:
        return ValueComparison(
            problem=f"shape {list(actual.shape)} differs from {list(expected.shape)}"
        )
    if actual.dtype != expected.dtype:
        return ValueComparison(problem=f"dtype {actual.dtype} differs from {expected.dtype}")
    if actual.size == 0:
        return ValueComparison(size=0)
    actual64, expected64 = actual.astype(np.float64), expected.astype(np.float64)
    actual_nan, expected_nan = np.isnan(actual64), np.isnan(expected64)
    if np.any(actual_nan != expected_nan):
        count = int(np.count_nonzero(actual_nan != expected_nan))
        return ValueComparison(
            size=actual.size, problem=f"NaN at {count} positions where the other has a number"
        )
    # Equal infinities (and NaNs at the same places) compare as equal.
    same = (actual64 == expected64) | actual_nan
    with np.errstate(invalid="ignore"):  # inf - inf, masked out by `same`
        difference = np.where(same, 0.0, np.abs(actual64 - expected64))
    magnitudes = np.abs(expected64)
    finite = np.isfinite(magnitudes)
    magnitude = float(magnitudes[finite].max()) if np.any(finite) else 0.0
    exact = expected.dtype.kind in "biu"  # integers and booleans have no rounding
    tolerance = 0.0 if exact else atol + rtol * magnitude
    mismatched = int(np.count_nonzero(difference > tolerance))
    max_abs = float(difference.max())
    nonzero = (magnitudes > 0) & finite
    if np.any(nonzero):
        max_rel = float((difference[nonzero] / magnitudes[nonzero]).max())
    else:
        max_rel = math.inf if max_abs > 0 else 0.0
    if mismatched == 0:
        return ValueComparison(max_abs, max_rel, 0, actual.size, magnitude, tolerance)
    worst = np.unravel_index(int(np.argmax(difference)), actual.shape)
    return ValueComparison(
        max_abs,
        max_rel,
        mismatched,
        actual.size,
        magnitude,
        tolerance,
        tuple(int(i) for i in worst),
        float(actual64[worst]),
        float(expected64[worst]),
    )


# --------------------------------------------------------------------------------------
# Comparing outputs with their reference (irc-run --compare-onnxruntime, the tests)


@dataclass
class OutputComparison:
    """How one output compares with its reference.

    `max_abs_error` is max |actual - expected|; `max_rel_error` is the largest
    |actual - expected| / |expected| over elements whose expected value is non-zero.
    An element passes when |actual - expected| <= `tolerance`, atol + rtol times the
    largest finite |expected| of the output (the rule of `compare_arrays`);
    `mismatched` counts those that do not. `problem` explains a failure that is not
    numeric (a missing output, a shape or dtype mismatch, NaNs).
    """

    name: str
    shape: tuple[int, ...]
    max_abs_error: float = 0.0
    max_rel_error: float = 0.0
    mismatched: int = 0
    tolerance: float = 0.0
    problem: str | None = None

    @property
    def ok(self) -> bool:
        """True when every element is within tolerance and nothing else is wrong."""
        return self.problem is None and self.mismatched == 0


@dataclass
class ComparisonReport:
    """The comparison of every expected output; `ok` when all of them pass."""

    rtol: float
    atol: float
    outputs: list[OutputComparison] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every output passed."""
        return all(output.ok for output in self.outputs)

    def format(self) -> str:
        """A table with one line per output: errors, mismatches and the verdict."""
        lines = [
            f"compared with rtol={self.rtol:g}, atol={self.atol:g} "
            f"(tolerance: atol + rtol x the output's largest |value|):"
        ]
        width = max((len(output.name) for output in self.outputs), default=4)
        for output in self.outputs:
            verdict = "ok" if output.ok else "FAIL"
            shape = "x".join(str(d) for d in output.shape) or "scalar"
            if output.problem is not None:
                lines.append(f"  {output.name:<{width}}  {verdict}: {output.problem}")
                continue
            lines.append(
                f"  {output.name:<{width}}  {shape:>14}  max abs {output.max_abs_error:.3e}"
                f"  max rel {output.max_rel_error:.3e}  tolerance {output.tolerance:.3e}"
                f"  mismatched {output.mismatched}  {verdict}"
            )
        lines.append("PASS" if self.ok else "FAIL")
        return "\n".join(lines)


def compare(
    actual: Mapping[str, np.ndarray],
    expected: Mapping[str, np.ndarray],
    rtol: float = 1e-4,
    atol: float = 1e-5,
) -> ComparisonReport:
    """Compare every output in `expected` with the one of the same name in `actual`.

    Each output is compared by `compare_arrays`: float outputs within atol + rtol
    times their largest finite |value|, integer and boolean outputs exactly, NaNs at
    the same places.
    """
    report = ComparisonReport(rtol=rtol, atol=atol)
    for name, reference in expected.items():
        reference = np.asarray(reference)
        comparison = OutputComparison(name, tuple(reference.shape))
        report.outputs.append(comparison)
        if name not in actual:
            comparison.problem = "missing from the results"
            continue
        value = np.asarray(actual[name])
        if value.shape != reference.shape:
            comparison.problem = (
                f"shape {list(value.shape)} differs from the expected {list(reference.shape)}"
            )
            continue
        if value.dtype != reference.dtype:
            comparison.problem = f"dtype {value.dtype} differs from the expected {reference.dtype}"
            continue
        measured = compare_arrays(value, reference, rtol, atol)
        comparison.max_abs_error = measured.max_abs_error
        comparison.max_rel_error = measured.max_rel_error
        comparison.mismatched = measured.mismatched
        comparison.tolerance = measured.tolerance
        comparison.problem = measured.problem
    return report


# --------------------------------------------------------------------------------------
# The error


class NumericalDivergence(IrcError):
    """A pass changed what the program computes.

    `value_location` is where the first differing value is computed in the IR after
    the pass (or the op that computes the first differing output), `value` describes
    it (`nn.conv result #0`, or `output 'prob'`), and `comparison` holds its errors.
    """

    def __init__(
        self,
        pass_name: str,
        value: str,
        value_location: Location,
        comparison: ValueComparison,
        diagnostic: Diagnostic,
    ) -> None:
        super().__init__(diagnostic)
        self.pass_name = pass_name
        self.value = value
        self.value_location = value_location
        self.comparison = comparison


# --------------------------------------------------------------------------------------
# The checker

ValueKey = tuple[Attribute, int, Attribute]
"""How a value is recognised across a pass: (op location, result index, result type)."""


class NumericsChecker:
    """Checks, pass after pass, that a module computes what it computed at the start.

    The entry function is `entry`, by default `@main` or else the module's only
    function. The constructor draws inputs for it from `seed` (see
    `random_function_inputs`), runs the module and keeps a copy of it and its
    outputs as the reference. Each `check` runs the module as a pass left it and
    compares its outputs with the reference's; when they agree within `rtol` and
    `atol`, the module becomes the new reference, so every pass is compared with the
    IR just before it.
    """

    def __init__(
        self,
        module: ModuleOp,
        *,
        seed: int = DEFAULT_SEED,
        rtol: float = DEFAULT_RTOL,
        atol: float = DEFAULT_ATOL,
        entry: str | None = None,
    ) -> None:
        require_weights(module)
        self.seed = seed
        self.rtol = rtol
        self.atol = atol
        self.entry = entry_name(module) if entry is None else entry
        self.inputs = random_function_inputs(module, seed, self.entry)
        self.reference = module.clone()
        self.reference_outputs = _run(self.reference, self.entry, self._arguments())
        self.checks = 0
        """How many checks have passed."""

    def _arguments(self) -> list[np.ndarray]:
        return list(self.inputs.values())

    def check(self, module: ModuleOp, pass_name: str) -> None:
        """Check `module`, as the pass `pass_name` left it, against the reference.

        Raises `NumericalDivergence` naming the pass and the first differing value
        when an output differs beyond the tolerance, and an `IrcError` when the pass
        changed the entry function's signature or left IR the interpreter cannot run.

        Only the outputs decide: values inside the program may legitimately change
        where an op keeps its location but computes more (a convolution into which a
        batch norm or an activation was folded). So intermediate values are compared
        only to explain a difference in the outputs (see the module's docstring).
        """
        if module.is_structurally_equivalent(self.reference):
            self.checks += 1  # the pass changed nothing: no need to run it again
            return
        self._check_signature(module, pass_name)
        try:
            outputs = _run(module, self.entry, self._arguments())
        except IrcError as failure:
            blame = f"the interpreter ran the IR before pass '{pass_name}', not after it"
            failure.diagnostics[0].notes.append(Diagnostic(blame, severity=Severity.NOTE))
            raise
        comparisons = [
            compare_arrays(actual, expected, self.rtol, self.atol)
            for actual, expected in zip(outputs, self.reference_outputs)
        ]
        if all(comparison.ok for comparison in comparisons):
            self.reference = module.clone()
            self.reference_outputs = outputs
            self.checks += 1
            return
        raise self._divergence(module, pass_name, comparisons)

    def _check_signature(self, module: ModuleOp, pass_name: str) -> None:
        before = _entry_function(self.reference, self.entry).function_type
        function = _entry_function(module, self.entry)
        if function.function_type != before:
            raise error(
                f"pass '{pass_name}' changed the signature of @{self.entry} from {before} "
                f"to {function.function_type}",
                function,
                hint="a pass must keep the types of the entry function's inputs and outputs",
            )

    # ---- locating a divergence -----------------------------------------------------------

    def _divergence(
        self, module: ModuleOp, pass_name: str, outputs: list[ValueComparison]
    ) -> NumericalDivergence:
        """Run both IRs again, comparing matched values, and build the error."""
        after_function = _entry_function(module, self.entry)
        before_function = _entry_function(self.reference, self.entry)
        after_values = _values_by_key(after_function)
        before_values = _values_by_key(before_function)
        common = after_values.keys() & before_values.keys()
        successors = _vanished_successors(before_values, common, after_values)

        wanted_before = {before_values[key] for key in common}
        wanted_before.update(value for values in successors.values() for value in values)
        recorded: dict[OpResult, np.ndarray] = {}

        def record(result: OpResult, value: np.ndarray) -> None:
            recorded[result] = value

        _run(self.reference, self.entry, self._arguments(), _Listener(wanted_before, record))

        compared: dict[SSAValue, ValueComparison] = {}
        moved_from: dict[SSAValue, OpResult] = {}
        wanted_after = {after_values[key]: key for key in common}

        def compare(result: OpResult, value: np.ndarray) -> None:
            key = wanted_after[result]
            expected = recorded.pop(before_values[key])
            comparison = compare_arrays(value, expected, self.rtol, self.atol)
            # A value that now computes what a vanished op after it computed (a folded
            # batch norm, a fused activation) is compared with that op's value.
            for successor in successors.get(key, ()):
                if comparison.ok:
                    break
                if successor.type == result.type and successor in recorded:
                    moved = compare_arrays(value, recorded[successor], self.rtol, self.atol)
                    if moved.ok or moved.max_abs_error < comparison.max_abs_error:
                        comparison = moved
                        moved_from[result] = successor
            compared[result] = comparison

        _run(module, self.entry, self._arguments(), _Listener(set(wanted_after), compare))

        differing_outputs = {index for index, c in enumerate(outputs) if not c.ok}
        first = _first_propagating_difference(after_function, compared, differing_outputs)
        names = [name for name, _ in function_signature(module, self.entry)[1]]
        notes = [
            Diagnostic(
                f"output '{names[index]}' of @{self.entry}: {comparison.describe()}",
                severity=Severity.NOTE,
            )
            for index, comparison in enumerate(outputs)
            if not comparison.ok
        ]
        tolerance = f"rtol={self.rtol:g}, atol={self.atol:g}"
        hint = (
            f"values are matched with the IR before the pass by op location and result "
            f"index, on random inputs from seed {self.seed}"
        )
        if first is not None:
            op = first.owner
            assert isinstance(op, Operation)
            value = f"{op.name} result #{first.index}"
            where = Location.of(op)
            comparison = compared[first]
            counterpart = ""
            if first in moved_from:
                folded = moved_from[first]
                counterpart = (
                    f" (compared with {folded.op.name} result #{folded.index} at "
                    f"{Location.of(folded.op)} before the pass, which it now computes)"
                )
            message = (
                f"pass '{pass_name}' changed the numerics: the first value that differs "
                f"({tolerance}) is {value}{counterpart}: {comparison.describe()}"
            )
        else:
            index = min(differing_outputs)
            comparison = outputs[index]
            value = f"output '{names[index]}'"
            returned = _return_op(after_function).operands[index]
            where = Location.of(returned)
            if where.line is None and where.name is None:
                where = Location.of(_return_op(after_function))
            message = (
                f"pass '{pass_name}' changed the numerics: {value} of @{self.entry} differs "
                f"({tolerance}): {comparison.describe()}"
            )
        diagnostic = Diagnostic(message, where, Severity.ERROR, hint, notes)
        return NumericalDivergence(pass_name, value, where, comparison, diagnostic)


def entry_name(module: ModuleOp) -> str:
    """The function to run: `@main`, or the module's only function (a test case)."""
    names = [op.sym_name.data for op in module.ops if isinstance(op, FuncOp)]
    return names[0] if len(names) == 1 else "main"


def require_weights(module: ModuleOp) -> None:
    """Raise an `IrcError` at the first constant whose weights were elided."""
    for op in module.walk():
        if isinstance(op, ConstantOp) and not op.has_data():
            raise error(
                "numerical verification needs the values of the weights, but this "
                "constant's were elided when the IR was printed",
                op,
                hint="print the IR with --weights=resource or --weights=sidecar "
                "(irc-import-onnx -o model.mlir writes a sidecar) to keep them",
            )


class _Listener(Interpreter.Listener):
    """Calls `found(result, array)` for each of the `wanted` results an op produces."""

    def __init__(
        self, wanted: set[OpResult], found: Callable[[OpResult, np.ndarray], None]
    ) -> None:
        self.wanted = wanted
        self.found = found

    def did_interpret_op(self, op: Operation, results: PythonValues) -> None:
        for result, value in zip(op.results, results):
            if result in self.wanted:
                self.found(result, value)


def _run(
    module: ModuleOp,
    entry: str,
    arguments: Sequence[np.ndarray],
    listener: Interpreter.Listener | None = None,
) -> list[np.ndarray]:
    """The outputs of `@entry` on `arguments` (in argument order), as new arrays."""
    require_weights(module)
    function = _entry_function(module, entry)
    interpreter = make_interpreter(module)
    if listener is not None:
        interpreter.listeners = (*interpreter.listeners, listener)
    with np.errstate(all="ignore"):
        results = interpreter.call_op(function, tuple(arguments))
    return [np.array(value) for value in results]


def _entry_function(module: ModuleOp, entry: str) -> FuncOp:
    function_signature(module, entry)  # the error that lists the functions if it is missing
    return next(op for op in module.ops if isinstance(op, FuncOp) and op.sym_name.data == entry)


def _return_op(function: FuncOp) -> ReturnOp:
    last = function.body.blocks.last
    assert last is not None and isinstance(last.last_op, ReturnOp)
    return last.last_op


def _computed_values(function: FuncOp) -> Iterator[OpResult]:
    """The results of the function's ops in program order, constants excepted (a
    constant differs only if a pass rewrote it, and then its first user shows it)."""
    for op in function.walk():
        if op is function or isinstance(op, ConstantOp):
            continue
        yield from op.results


def _values_by_key(function: FuncOp) -> dict[ValueKey, OpResult]:
    """The values that can be recognised across a pass, by their `ValueKey`.

    Ops without a location are left out. When several ops share a location (a pass
    that expands an op into several keeps its location on each), the last in program
    order stands for it: it computes what the original op computed.
    """
    values: dict[ValueKey, OpResult] = {}
    for result in _computed_values(function):
        location = result.op.location
        if isinstance(location, UnknownLoc) or not isinstance(result.type, TensorType):
            continue
        values[(location, result.index, result.type)] = result
    return values


VANISHED_SUCCESSOR_DEPTH = 3
"""How far after a value `_vanished_successors` looks for the ops a pass folded into
it (a batch norm, then an activation: 2)."""


def _vanished_successors(
    before_values: dict[ValueKey, OpResult],
    common: set[ValueKey],
    after_values: dict[ValueKey, OpResult],
) -> dict[ValueKey, list[OpResult]]:
    """For each value found on both sides, the values computed after it, before the
    pass, by ops that the pass removed (those without a counterpart after the pass),
    up to VANISHED_SUCCESSOR_DEPTH ops away."""
    key_of = {value: key for key, value in before_values.items()}
    successors: dict[ValueKey, list[OpResult]] = {}
    for key in common:
        found: list[OpResult] = []
        frontier = [before_values[key]]
        for _ in range(VANISHED_SUCCESSOR_DEPTH):
            frontier = [
                result
                for value in frontier
                for use in value.uses
                for result in use.operation.results
                if key_of.get(result) not in after_values and result not in found
            ]
            found += frontier
        if found:
            successors[key] = found
    return successors


def _first_propagating_difference(
    function: FuncOp,
    compared: dict[SSAValue, ValueComparison],
    differing_outputs: set[int],
) -> OpResult | None:
    """The first compared value, in program order, that differs and whose difference
    reaches a differing output of the function.

    A difference travels along values that differ or have no counterpart before the
    pass; a value that matches its counterpart stops it. So a convolution that now
    includes a folded batch norm differs from the plain convolution it replaced, but
    the activation after it agrees again, and that difference is not reported.
    """
    reaches: dict[SSAValue, bool] = {}
    computed = list(_computed_values(function))
    for result in reversed(computed):
        comparison = compared.get(result)
        if comparison is not None and comparison.ok:
            reaches[result] = False
            continue
        reaches[result] = any(
            (isinstance(use.operation, ReturnOp) and use.index in differing_outputs)
            or any(reaches.get(user_result, False) for user_result in use.operation.results)
            for use in result.uses
        )
    for result in computed:
        comparison = compared.get(result)
        if comparison is not None and not comparison.ok and reaches[result]:
            return result
    return None
