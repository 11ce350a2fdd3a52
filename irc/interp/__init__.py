"""The reference interpreter: run IR on numpy arrays.

- `evaluate_op` runs one op on given arrays, without a module (constant folding and the
  ONNX importer's folding of shape subgraphs use it).
- `run_function` runs a module's entry function (`func.func @main` by default) on named
  or positional inputs and returns its outputs by name. A command stream (`npu` ops)
  runs on the simulator instead: `irc.sim.run.run_function` runs IR of every level.
- `function_signature` lists the entry function's inputs and outputs with their names
  and types (what `irc-run` shows and checks).

Inputs and outputs are named by the `irc.name` argument and result attributes that the
ONNX importer sets (`arg0`, `arg1`, ... and `output_0`, ... when absent). The numpy
implementations of the ops live in one module per dialect (irc/interp/nn.py), each an
xDSL `InterpreterFunctions` class; `make_interpreter` registers them all.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, StringAttr, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.interpreter import Interpreter, InterpreterFunctions, OpImpl, PythonValues
from xdsl.ir import Attribute, Operation

from irc.diagnostics import error
from irc.dialects.nn import ConstantOp
from irc.interp._xdsl import ArithFunctions, FuncFunctions, ScfFunctions
from irc.interp.nn import NNFunctions
from irc.interp.part import PartFunctions
from irc.interp.qnn import QNNFunctions
from irc.interp.quant import QuantFunctions
from irc.interp.tile import TileFunctions
from irc.ir import weights

NAME_ATTR = "irc.name"
"""Argument/result attribute holding the ONNX name of a function input or output."""

Signature = tuple[list[tuple[str, TensorType]], list[tuple[str, TensorType]]]
"""(inputs, outputs) of a function, each a list of (name, tensor type)."""

FunctionCall = Callable[[Interpreter, FuncOp, Sequence[np.ndarray]], Sequence[object]]
"""What runs a function on its bound arguments, in place of the interpreter's
`call_op`: the simulator, for a command stream (irc.sim.run.run_function)."""


def interpreter_functions() -> list[InterpreterFunctions]:
    """Every dialect's interpreter implementations, as registered by `make_interpreter`
    (a command stream runs on the simulator, irc/sim/machine.py, instead)."""
    return [
        FuncFunctions(),
        ScfFunctions(),
        ArithFunctions(),
        NNFunctions(),
        PartFunctions(),
        QuantFunctions(),
        QNNFunctions(),
        TileFunctions(),
    ]


def make_interpreter(module: ModuleOp) -> Interpreter:
    """An xDSL `Interpreter` for `module` with every irc dialect's implementations."""
    interpreter = Interpreter(module, listeners=(_ResultTypeCheck(),))
    for functions in interpreter_functions():
        interpreter.register_implementations(functions)
    return interpreter


class _ResultTypeCheck(Interpreter.Listener):
    """Checks that every op produced arrays of exactly its result types (a bug otherwise)."""

    def did_interpret_op(self, op: Operation, results: PythonValues) -> None:
        _check_results(op, results)


def _check_results(op: Operation, results: Sequence[np.ndarray]) -> None:
    for index, (result, value) in enumerate(zip(op.results, results)):
        if not isinstance(result.type, TensorType):
            continue
        expected_shape = tuple(result.type.get_shape())
        expected_dtype = weights.dtype_of(result.type.get_element_type())
        if value.shape != expected_shape or value.dtype != expected_dtype:
            raise AssertionError(
                f"interpreter bug: '{op.name}' result #{index} is {value.dtype}{list(value.shape)}, "
                f"its type is {result.type}"
            )


# --------------------------------------------------------------------------------------
# One op


@functools.cache
def _standalone() -> tuple[
    dict[type[Operation], OpImpl[InterpreterFunctions, Operation]], NNFunctions, Interpreter
]:
    functions = NNFunctions()
    table = dict(NNFunctions._impls())  # the same @impl table an Interpreter would use
    return table, functions, Interpreter(ModuleOp([]))


def evaluate_op(op: Operation, operands: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
    """Run one `nn` op on `operands` (arrays of its operand types) and return its results.

    The op need not belong to a module. Errors that the data causes (an out-of-range
    gather index, a constant without data) are `IrcError`s at the op's location.
    """
    # The registered implementation is called directly, not through Interpreter.run_op:
    # that wraps every exception with a print of the op's whole module, weights and all.
    table, functions, interpreter = _standalone()
    run = table.get(type(op))
    if run is None:
        raise error(f"the interpreter cannot evaluate '{op.name}'", op)
    arrays = tuple(np.asarray(operand) for operand in operands)
    if len(arrays) != len(op.operands):
        raise ValueError(f"'{op.name}' takes {len(op.operands)} operands, got {len(arrays)}")
    with np.errstate(all="ignore"):
        results = run(functions, interpreter, op, arrays).values
    _check_results(op, results)
    return tuple(results)


# --------------------------------------------------------------------------------------
# A whole function


def find_function(module: ModuleOp, entry: str = "main") -> FuncOp:
    """The module's `func.func @entry`, or an error naming the functions it has."""
    functions = [op for op in module.ops if isinstance(op, FuncOp)]
    for function in functions:
        if function.sym_name.data == entry:
            return function
    names = ", ".join(f"@{f.sym_name.data}" for f in functions) or "none"
    raise error(
        f"the module has no function @{entry}",
        # The module itself is rarely located; its first function is, in the file.
        functions[0] if functions else module,
        hint=f"functions in the module: {names}",
    )


def _names(attrs: ArrayAttr[DictionaryAttr] | None, count: int, fallback: str) -> list[str]:
    names = []
    dictionaries = list(attrs.data) if attrs is not None else []
    for index in range(count):
        name = None
        if index < len(dictionaries) and isinstance(dictionaries[index], DictionaryAttr):
            value = dictionaries[index].data.get(NAME_ATTR)
            if isinstance(value, StringAttr):
                name = value.data
        names.append(name if name is not None else f"{fallback}{index}")
    return names


def _tensor_types(function: FuncOp, types: Sequence[Attribute], what: str) -> list[TensorType]:
    tensor_types = []
    for index, value_type in enumerate(types):
        if not isinstance(value_type, TensorType) or any(d < 0 for d in value_type.get_shape()):
            raise error(
                f"{what} #{index} of @{function.sym_name.data} has type {value_type}, "
                "not a statically shaped tensor",
                function,
            )
        tensor_types.append(value_type)
    return tensor_types


def function_signature(module: ModuleOp, entry: str = "main") -> Signature:
    """The (name, type) of every input and output of `func.func @entry`."""
    function = find_function(module, entry)
    function_type = function.function_type
    inputs = _tensor_types(function, function_type.inputs.data, "argument")
    outputs = _tensor_types(function, function_type.outputs.data, "result")
    input_names = _names(function.arg_attrs, len(inputs), "arg")
    output_names = _names(function.res_attrs, len(outputs), "output_")
    return list(zip(input_names, inputs)), list(zip(output_names, outputs))


def _describe(value_type: TensorType) -> str:
    dtype = weights.dtype_of(value_type.get_element_type())
    return f"{value_type} (numpy {dtype.name}{list(value_type.get_shape())})"


def _conform_input(
    function: FuncOp, index: int, name: str, value_type: TensorType, value: object
) -> np.ndarray:
    """`value` as an array of exactly `value_type`, or an error naming the input."""
    at = function.body.blocks.first.args[index] if function.body.blocks.first else function
    expected = _describe(value_type)
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as failure:
        raise error(
            f"input '{name}' is not an array: {failure}", at, hint=f"expected {expected}"
        ) from None
    shape = tuple(value_type.get_shape())
    if array.shape != shape:
        raise error(
            f"input '{name}' has shape {list(array.shape)}, expected {list(shape)}",
            at,
            hint=f"input '{name}' has type {expected}",
        )
    dtype = weights.dtype_of(value_type.get_element_type())
    if array.dtype == dtype:
        return array
    # Narrowing float data (float64 for a float32 input) only rounds, which is what a
    # user means; other conversions are allowed only when every value survives them
    # (int32 data for an int64 input, uint8 pixels for a float32 input).
    converted = array.astype(dtype) if np.can_cast(array.dtype, dtype, "same_kind") else None
    both_float = array.dtype.kind == "f" and dtype.kind == "f"
    if converted is not None and not both_float and not np.array_equal(converted, array):
        converted = None
    if converted is None:
        raise error(
            f"input '{name}' has element type {array.dtype.name}, which cannot be converted "
            f"to {dtype.name} without changing values",
            at,
            hint=f"input '{name}' has type {expected}; convert the data with .astype('{dtype.name}')",
        )
    return converted


def _list_inputs(signature: list[tuple[str, TensorType]], limit: int = 8) -> str:
    """The inputs with their types for a hint, the first `limit` of them if there are more."""
    shown = ", ".join(f"'{name}': {value_type}" for name, value_type in signature[:limit])
    if len(signature) > limit:
        return f"{shown}, ... ({len(signature)} inputs in all)"
    return shown or "none"


def _bind_inputs(
    function: FuncOp,
    signature: list[tuple[str, TensorType]],
    inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray],
) -> list[np.ndarray]:
    names = [name for name, _ in signature]
    expected = _list_inputs(signature)
    if isinstance(inputs, Mapping):
        unknown = [name for name in inputs if name not in names]
        if unknown:
            raise error(
                f"unknown input '{unknown[0]}' for @{function.sym_name.data}",
                function,
                hint=f"the inputs are {expected}",
            )
        missing = [(name, value_type) for name, value_type in signature if name not in inputs]
        if len(missing) == 1:
            name, value_type = missing[0]
            raise error(
                f"missing input '{name}' of type {_describe(value_type)}",
                function,
                hint=f"provide every input: {expected}",
            )
        if missing:
            raise error(
                f"missing {len(missing)} inputs: {_list_inputs(missing)}",
                function,
                hint=f"provide every input: {expected}",
            )
        values = [inputs[name] for name in names]
    else:
        values = list(inputs)
        if len(values) != len(signature):
            raise error(
                f"@{function.sym_name.data} takes {len(signature)} inputs, got {len(values)}",
                function,
                hint=f"the inputs are, in order: {expected}",
            )
    return [
        _conform_input(function, index, name, value_type, value)
        for index, ((name, value_type), value) in enumerate(zip(signature, values))
    ]


def check_constants_have_data(module: ModuleOp) -> None:
    """Fail before computing anything when weights were elided from the text: the
    `IrcError` of the first constant without data."""
    for op in module.walk():
        if isinstance(op, ConstantOp) and not op.has_data():
            op.array()  # raises the IrcError that explains how to keep the weights


def run_function(
    module: ModuleOp,
    inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray],
    entry: str = "main",
    call: FunctionCall | None = None,
) -> dict[str, np.ndarray]:
    """Run `func.func @entry` of `module`; returns its outputs by name, in result order.

    The outputs are new arrays, named by their `irc.name` result attributes
    (`output_0`, ... when absent).

    `inputs` maps input names to arrays, or lists the arrays in argument order. Arrays
    are converted to the argument types when that keeps their values (float64 data
    for a float32 input); a wrong shape, a missing or unknown name, or data that would
    change in conversion is an `IrcError` naming the input. `call`, if given, runs the
    function on the converted arguments instead of the interpreter (and checks the
    constants itself): irc.sim.run.run_function runs a command stream so.
    """
    function = find_function(module, entry)
    input_signature, output_signature = function_signature(module, entry)
    arguments = _bind_inputs(function, input_signature, inputs)
    if call is None:
        check_constants_have_data(module)
    interpreter = make_interpreter(module)
    with np.errstate(all="ignore"):
        if call is not None:
            results: Sequence[object] = call(interpreter, function, arguments)
        else:
            results = interpreter.call_op(function, tuple(arguments))
    # Fresh arrays: results may be views of inputs or of read-only constant data.
    return {name: np.array(value) for (name, _), value in zip(output_signature, results)}
