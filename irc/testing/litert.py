"""LiteRT as the reference of irc's TFLite import: every tensor, compared bit for bit.

LiteRT (the `ai-edge-litert` package, a test dependency) runs a model with its
built-in kernels (`OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES`: no XNNPACK,
which rounds otherwise) and keeps every intermediate tensor
(`experimental_preserve_all_tensors=True`). irc's values are matched with LiteRT's
tensors by the location of the ops that compute them: the importer locates each op at
the name of the tensor it computes, made unique
(`irc.importers.tflite.tensor_locations`).

    model = tflite_models.mobilenet_v2_block(0)
    inputs = random_inputs(model, seed=0)
    expected = litert_tensors(model, inputs)
    mismatches = compare(model, qnn_tensors(import_tflite(model), inputs), expected)

Every level of irc is compared this way: the `qnn` reference interpreter
(`qnn_tensors`), and a compiled package's command stream on the simulator
(`simulated_tensors`, the layer capture of `irc-run --compare`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from irc.diagnostics import Location
from irc.importers.tflite import TFLiteModel, read_tflite, tensor_locations

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.interpreter import PythonValues
    from xdsl.ir import Operation

    from irc.driver.pipeline import CompileOptions


def model_info(model: bytes) -> TFLiteModel:
    """The parsed flatbuffer (its tensors, operators, inputs and outputs)."""
    return read_tflite(model, "<tflite model>")


def random_inputs(model: bytes, seed: int = 0) -> list[np.ndarray]:
    """Seeded inputs of every model input, in order: uniform int8 values over the whole
    range, or standard normal float32 values for a float input."""
    info = model_info(model)
    rng = np.random.default_rng(seed)
    inputs: list[np.ndarray] = []
    for index in info.inputs:
        tensor = info.tensors[index]
        if tensor.dtype == "float32":
            inputs.append(rng.standard_normal(tensor.shape).astype(np.float32))
        else:
            inputs.append(rng.integers(-128, 128, size=tensor.shape, dtype=np.int8))
    return inputs


@functools.cache
def ruy_rounding() -> str:
    """How LiteRT's conv (ruy) rounds on this CPU: "double_up" (ruy's x86 AVX2 and
    AVX-512 kernels, and ARM's), or "double_away" (its portable code, on an x86 CPU
    without AVX2). Found by running a conv whose products fall on ties of the second
    rounding (`tflite_models.SINGLE_OP_MODELS["conv_ties"]`) and asking which import
    LiteRT agrees with, so that no test depends on the CPU."""
    from irc.importers.tflite import import_tflite
    from irc.testing.tflite_models import SINGLE_OP_MODELS

    model = SINGLE_OP_MODELS["conv_ties"](0)
    inputs = random_inputs(model, 0)
    expected = litert_tensors(model, inputs)
    agreeing = [
        rounding
        for rounding in ("double_up", "double_away")
        if not compare(
            model, qnn_tensors(import_tflite(model, ruy_rounding=rounding), inputs), expected
        )[1]
    ]
    assert len(agreeing) == 1, f"LiteRT's conv rounds as {agreeing or 'neither'} of ruy's two ways"
    return agreeing[0]


def litert_tensors(model: bytes, inputs: Sequence[np.ndarray]) -> dict[int, np.ndarray]:
    """Every tensor LiteRT's built-in kernels compute on `inputs`, by tensor index
    (constants included)."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    interpreter = Interpreter(
        model_content=model,
        experimental_preserve_all_tensors=True,
        experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
        num_threads=1,
    )
    interpreter.allocate_tensors()
    for detail, value in zip(interpreter.get_input_details(), inputs, strict=True):
        interpreter.set_tensor(detail["index"], value)
    interpreter.invoke()
    tensors: dict[int, np.ndarray] = {}
    for detail in interpreter.get_tensor_details():
        try:
            tensors[detail["index"]] = np.array(interpreter.get_tensor(detail["index"]))
        except ValueError:  # a tensor without data (an optional input never allocated)
            continue
    return tensors


def qnn_tensors(module: ModuleOp, inputs: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
    """Every value the integer reference interpreter computes, by the name of its op's
    location (of several ops at one location, the last in program order: the tensor
    the TFLite operator writes)."""
    from xdsl.interpreter import Interpreter

    from irc.interp import find_function, make_interpreter

    values: dict[str, np.ndarray] = {}

    class Recorder(Interpreter.Listener):
        def did_interpret_op(self, op: Operation, results: PythonValues) -> None:
            name = Location.of_attr(op.location).name
            if name is not None and results:
                values[name] = np.array(results[0])

    function = find_function(module)
    interpreter = make_interpreter(module)
    interpreter.listeners = (*interpreter.listeners, Recorder())
    with np.errstate(all="ignore"):
        interpreter.call_op(function, tuple(inputs))
    block = function.body.blocks.first
    assert block is not None
    names = [
        attrs.data["irc.name"].data  # type: ignore[attr-defined]
        for attrs in (function.arg_attrs or [])
    ]
    for name, value in zip(names, inputs):
        values.setdefault(name, np.array(value))
    return values


@dataclass
class SimulatedLevels:
    """What the simulator computed for a compiled TFLite model."""

    tensors: dict[str, np.ndarray]
    """The simulator's value of every layer (an NPU layer's DDR buffer as its own
    commands left it, a host layer's value), by location name."""
    on_npu: set[str]
    """The layers that ran on the NPU."""
    not_compared: list[str]
    """Layers the simulator keeps no buffer of its own for (in a concat's slice)."""
    outputs: dict[str, np.ndarray]
    """The stream's outputs, by name."""


def simulated_tensors(
    path: Path, options: CompileOptions, inputs: Sequence[np.ndarray]
) -> SimulatedLevels:
    """Compile the TFLite file at `path` as `irc-compile` does and run its command
    stream on the simulator, capturing every layer (`irc.driver.compare`)."""
    from irc.driver.compare import compare_layers, compile_levels
    from irc.interp import function_signature
    from irc.sim.run import run_function

    levels = compile_levels(path, options)
    names = [name for name, _ in function_signature(levels.planned)[0]]
    feeds = dict(zip(names, inputs, strict=True))
    comparison = compare_layers(levels, feeds)
    tensors: dict[str, np.ndarray] = {}
    on_npu: set[str] = set()
    for layer in comparison.layers:
        if "npu" in layer.arrays:
            tensors[layer.name] = layer.arrays["npu"]
            if layer.device == "npu":
                on_npu.add(layer.name)
    outputs = run_function(levels.stream, feeds)
    return SimulatedLevels(tensors, on_npu, list(comparison.not_compared), outputs)


@dataclass(frozen=True)
class Mismatch:
    """A tensor where irc and LiteRT differ."""

    tensor: str
    elements: int
    """How many elements differ (all of them for a shape difference)."""
    total: int
    largest: float
    """The largest difference (in integer steps, or float units)."""

    def __str__(self) -> str:
        return (
            f"{self.tensor}: {self.elements} of {self.total} elements differ, by up to "
            f"{self.largest:g}"
        )


def compare(
    model: bytes, got: Mapping[str, np.ndarray], expected: Mapping[int, np.ndarray]
) -> tuple[int, list[Mismatch]]:
    """Compare irc's values (by location name) with LiteRT's tensors (by index), every
    tensor an operator computes and irc has a value for: how many were compared, and
    those that differ."""
    info = model_info(model)
    locations = tensor_locations(model)
    computed = {index for operator in info.operators for index in operator.outputs if index >= 0}
    compared = 0
    mismatches = []
    for index in sorted(computed):
        name = locations.get(index)
        if name is None or name not in got or index not in expected:
            continue
        compared += 1
        mine, theirs = np.asarray(got[name]), np.asarray(expected[index])
        if mine.size == theirs.size:
            # A layer's buffer may hold the tensor in another shape (its reshape is a view).
            mine = mine.reshape(theirs.shape)
        if mine.shape != theirs.shape:
            mismatches.append(Mismatch(name, theirs.size, theirs.size, float("inf")))
            continue
        delta = np.abs(mine.astype(np.float64) - theirs.astype(np.float64))
        if np.any(delta > 0):
            mismatches.append(
                Mismatch(name, int(np.count_nonzero(delta)), delta.size, float(delta.max()))
            )
    return compared, mismatches
