"""The ONNX models irc is tested on, from the onnx package's backend test data.

- The light architectures (`light_models()`: AlexNet, DenseNet-121, Inception v1/v2,
  ResNet-50, ShuffleNet, SqueezeNet, VGG-19, ZFNet-512). They ship without trained
  weights: every parameter is the output of a ConstantOfShape node that fills it with
  one constant, whose shape input is an initializer. With constant weights a model's
  output hardly depends on its input, so comparing two implementations on it proves
  little. `materialize_light_model` gives every parameter seeded random values with
  the statistics of a freshly initialised network.
- The pytorch-converted and pytorch-operator backend cases (`pytorch_cases()`): small
  models of one or a few ops with reference inputs and outputs.
"""

from __future__ import annotations

import math
import os
from collections.abc import Container
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import onnx

PYTORCH_SUITES = ("pytorch-converted", "pytorch-operator")
"""The backend test suites whose cases `pytorch_cases` lists."""

MIN_IR_VERSION = 4
"""IR version 4 lets initializers be absent from the graph inputs (opset 9's IR)."""


@cache
def onnx_test_data_dir() -> Path:
    """`onnx/backend/test/data` inside the installed onnx package."""
    import onnx

    return Path(onnx.__file__).parent / "backend" / "test" / "data"


HEAVY_LIGHT_MODELS = frozenset({"vgg19"})
"""Light models too big to go through every pass's tests: VGG-19 has 143 M parameters
(548 MB of float32); a test that imports it, runs a pass and interprets the IR before
and after holds several copies, beyond the 2 GB a test process may hold. Its ops
(conv, relu, max pool, a gemm head with dropout, softmax) are those of bvlc_alexnet and
zfnet512, which every such test keeps. VGG-19 is materialized, imported and checked
against onnxruntime in a pytest process of its own (`run_heavy_in_own_process`),
where it peaks at 1.8 GB."""

HEAVY_PROCESS_ENV = "IRC_HEAVY_LIGHT_MODELS"
"""Set to 1 in the pytest process that `run_heavy_in_own_process` starts."""


def heavy_in_this_process() -> bool:
    """Whether this is a process `run_heavy_in_own_process` started (where the tests
    parametrized over `light_models(heavy=heavy_in_this_process())` take the heavy
    models too)."""
    return os.environ.get(HEAVY_PROCESS_ENV) == "1"


def light_models(*, heavy: bool = True) -> list[Path]:
    """Every `light_*.onnx` model shipped with onnx, sorted by name (without
    HEAVY_LIGHT_MODELS unless `heavy`)."""
    paths = sorted((onnx_test_data_dir() / "light").glob("light_*.onnx"))
    return [p for p in paths if heavy or p.stem.removeprefix("light_") not in HEAVY_LIGHT_MODELS]


def run_heavy_in_own_process(test_file: Path | str, name: str) -> None:
    """Run the tests of `test_file` whose ids name the heavy model `name` in a new
    pytest process (with HEAVY_PROCESS_ENV set), so that its memory is not added to
    what this one holds. An `AssertionError` with pytest's output if any fails or
    none runs; in the process it starts, a skip (the test calling it is running there
    too)."""
    import subprocess
    import sys

    if heavy_in_this_process():
        import pytest

        pytest.skip("this is the heavy models' own process")

    environment = {**os.environ, HEAVY_PROCESS_ENV: "1"}
    for name_of_xdist in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT"):
        environment.pop(name_of_xdist, None)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"]
    result = subprocess.run(
        [*command, str(test_file), "-k", name],
        capture_output=True,
        text=True,
        env=environment,
        check=False,
    )
    if result.returncode != 0:
        raise AssertionError(
            f"the {name} tests of {test_file} failed in their own process "
            f"(exit {result.returncode}):\n{result.stdout[-6000:]}{result.stderr[-2000:]}"
        )


def light_model(name: str) -> Path:
    """The light model called `name` (`resnet50` or `light_resnet50`)."""
    stem = name if name.startswith("light_") else f"light_{name}"
    path = onnx_test_data_dir() / "light" / f"{stem}.onnx"
    if not path.is_file():
        known = ", ".join(p.stem.removeprefix("light_") for p in light_models())
        raise FileNotFoundError(f"no light model '{name}'; there are: {known}")
    return path


# --------------------------------------------------------------------------------------
# Materializing the light models


class Role(StrEnum):
    """What a parameter tensor is for, as seen from the node that consumes it."""

    CONV_WEIGHT = "conv weight"
    DENSE_WEIGHT = "dense weight"
    BIAS = "bias"
    BN_SCALE = "batch-norm scale"
    BN_BIAS = "batch-norm bias"
    BN_MEAN = "batch-norm mean"
    BN_VAR = "batch-norm variance"
    CHANNEL_SCALE = "channel scale"
    PRELU_SLOPE = "prelu slope"
    OTHER = "other"


@dataclass(frozen=True)
class Parameter:
    """A parameter to randomize: its shape, its role and, for weights, its fan-in."""

    shape: tuple[int, ...]
    role: Role
    fan_in: int = 1


# Ops that only reshape a parameter on its way to the node that gives it its role
# (DenseNet applies its per-channel scales through Unsqueeze, Inception v1 reshapes its
# classifier weights, for instance).
PASS_THROUGH_OPS = frozenset({"Unsqueeze", "Squeeze", "Reshape", "Flatten", "Identity"})

BN_ROLES = {1: Role.BN_SCALE, 2: Role.BN_BIAS, 3: Role.BN_MEAN, 4: Role.BN_VAR}

LOGIT_STD = 3.0
"""The spread of the logits that feed a Softmax, after calibration. Like a trained
classifier's, it makes the softmax peaked without being one-hot: on random inputs the
light models' largest probability is 0.04 to 0.5 and the entropy 2 to 5 nats (uniform
over 1000 classes is 6.9)."""

CALIBRATION_BATCH = 4
"""Samples in the calibration run of a model with batch norms. Statistics of a single
image underestimate how much the deep, 7x7 layers vary between images: calibrated on
one, the logits on others spread twice as wide."""

VARIANCE_FLOOR = 0.01
"""Calibrated running variances are at least this fraction of their layer's mean, so a
channel that happened to be constant on the calibration input is not amplified 300x."""


def _sample(parameter: Parameter, rng: np.random.Generator) -> np.ndarray:
    """Float32 values for one parameter, as a freshly initialised network has them.

    Weights are He (Kaiming) normal, std = sqrt(2 / fan_in), which keeps the second
    moment of activations steady through conv/gemm + ReLU layers. Biases are small,
    batch-norm scales and channel scales around 1. Batch-norm statistics are drawn in
    valid ranges (mean near 0, variance in [0.5, 1.5]) and then replaced by calibrated
    ones (see `_calibrate`).
    """
    shape = parameter.shape

    def normal(std: float) -> np.ndarray:
        values = rng.standard_normal(shape, dtype=np.float32)
        values *= np.float32(std)
        return values

    def uniform(low: float, high: float) -> np.ndarray:
        values = rng.random(shape, dtype=np.float32)
        values *= np.float32(high - low)
        values += np.float32(low)
        return values

    match parameter.role:
        case Role.CONV_WEIGHT | Role.DENSE_WEIGHT:
            return normal(math.sqrt(2.0 / parameter.fan_in))
        case Role.BIAS | Role.BN_BIAS:
            return normal(0.05)
        case Role.BN_SCALE | Role.CHANNEL_SCALE:
            return uniform(0.8, 1.2)
        case Role.BN_MEAN:
            return normal(0.1)
        case Role.BN_VAR:
            return uniform(0.5, 1.5)
        case Role.PRELU_SLOPE:
            return uniform(0.1, 0.3)
        case _:
            return normal(0.1)


def _attribute(node: onnx.NodeProto, name: str, default: object) -> object:
    from onnx import helper

    for attribute in node.attribute:
        if attribute.name == name:
            return helper.get_attribute_value(attribute)
    return default


def _int_attribute(node: onnx.NodeProto, name: str, default: int) -> int:
    value = _attribute(node, name, default)
    if not isinstance(value, int):
        raise ValueError(f"attribute '{name}' of {node.op_type} '{node.name}' is not an integer")
    return value


def _squeeze_axes(node: onnx.NodeProto, constants: dict[str, np.ndarray]) -> list[int] | None:
    """The axes of a Squeeze or Unsqueeze: an attribute before opset 13, an input since."""
    axes = _attribute(node, "axes", None)
    if isinstance(axes, list):
        return axes
    if len(node.input) > 1 and node.input[1] in constants:
        return constants[node.input[1]].tolist()
    return None


def _role_at(node: onnx.NodeProto, index: int, shape: tuple[int, ...]) -> tuple[Role, int] | None:
    """The role (and fan-in) of a tensor of `shape` used as input `index` of `node`."""
    size = math.prod(shape)
    match node.op_type, index:
        case (("Conv" | "ConvTranspose"), 1):
            # Conv weights are (M, C/group, k...); ConvTranspose ones (C, M/group, k...),
            # whose fan-in as PyTorch counts it is also the size of one slice.
            return Role.CONV_WEIGHT, max(1, size // shape[0])
        case (("Conv" | "ConvTranspose" | "Gemm"), 2):
            return Role.BIAS, 1
        case "Gemm", 1 if len(shape) == 2:
            return Role.DENSE_WEIGHT, shape[1] if _attribute(node, "transB", 0) else shape[0]
        case "MatMul", 1:
            return Role.DENSE_WEIGHT, shape[-2] if len(shape) >= 2 else shape[0]
        case "BatchNormalization", _ if index in BN_ROLES:
            return BN_ROLES[index], 1
        case "Mul", _:
            return Role.CHANNEL_SCALE, 1
        case (("Add" | "Sum" | "Sub"), _):
            return Role.BIAS, 1
        case "PRelu", 1:
            return Role.PRELU_SLOPE, 1
    return None


def _shape_after(
    node: onnx.NodeProto, shape: tuple[int, ...], constants: dict[str, np.ndarray]
) -> tuple[int, ...]:
    """The shape of a parameter after a pass-through op (unchanged if unknown)."""
    rank = len(shape)
    match node.op_type:
        case "Reshape" if len(node.input) > 1 and node.input[1] in constants:
            target = [int(d) for d in constants[node.input[1]]]
            target = [shape[i] if d == 0 else d for i, d in enumerate(target)]
            if -1 in target:
                known = math.prod(d for d in target if d != -1)
                target[target.index(-1)] = math.prod(shape) // max(known, 1)
            return tuple(target)
        case "Flatten":
            axis = _int_attribute(node, "axis", 1) % (rank + 1)
            return (math.prod(shape[:axis]), math.prod(shape[axis:]))
        case "Unsqueeze":
            axes = _squeeze_axes(node, constants)
            if axes is None:
                return shape
            new_rank = rank + len(axes)
            result = list(shape)
            for axis in sorted(a % new_rank for a in axes):
                result.insert(axis, 1)
            return tuple(result)
        case "Squeeze":
            axes = _squeeze_axes(node, constants)
            dropped = (
                {i for i, d in enumerate(shape) if d == 1}
                if axes is None
                else {a % rank for a in axes}
            )
            return tuple(d for i, d in enumerate(shape) if i not in dropped)
    return shape


def _find_role(
    name: str,
    shape: tuple[int, ...],
    consumers: dict[str, list[tuple[onnx.NodeProto, int]]],
    constants: dict[str, np.ndarray],
) -> Parameter:
    """The role of tensor `name`, following it through pass-through ops to its users."""
    pending = [(name, shape)]
    seen = set()
    while pending:
        tensor, tensor_shape = pending.pop(0)
        if tensor in seen:
            continue
        seen.add(tensor)
        for node, index in consumers.get(tensor, []):
            if node.op_type in PASS_THROUGH_OPS and index == 0:
                passed = _shape_after(node, tensor_shape, constants)
                pending.extend((output, passed) for output in node.output)
                continue
            found = _role_at(node, index, tensor_shape)
            if found is not None:
                return Parameter(shape, *found)
    return Parameter(shape, Role.OTHER)


def parameter_roles(model: onnx.ModelProto) -> dict[str, Parameter]:
    """Every float parameter of a light model that `materialize_light_model` replaces.

    Parameters are the outputs of ConstantOfShape nodes whose shape is an initializer,
    and float initializers with a role (a few light models keep some trained values,
    which do not fit random weights around them). Each is given the role of the node
    that consumes it: a BatchNormalization's mean is found by its input position,
    never by its name.
    """
    from onnx import TensorProto, numpy_helper

    float_types = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE}
    graph = model.graph
    initializers = {tensor.name: tensor for tensor in graph.initializer}
    constants = {
        name: numpy_helper.to_array(tensor)
        for name, tensor in initializers.items()
        if tensor.data_type == TensorProto.INT64
    }
    consumers: dict[str, list[tuple[onnx.NodeProto, int]]] = {}
    for node in graph.node:
        for index, tensor in enumerate(node.input):
            consumers.setdefault(tensor, []).append((node, index))

    roles: dict[str, Parameter] = {}
    for node in graph.node:
        if node.op_type != "ConstantOfShape":
            continue
        if node.input[0] not in constants:
            raise ValueError(
                f"ConstantOfShape '{node.name or node.output[0]}' has a computed shape; "
                "only shapes given as initializers can be materialized"
            )
        shape = tuple(int(d) for d in constants[node.input[0]])
        roles[node.output[0]] = _find_role(node.output[0], shape, consumers, constants)
    for name, tensor in initializers.items():
        if name in roles or tensor.data_type not in float_types:
            continue
        parameter = _find_role(name, tuple(tensor.dims), consumers, constants)
        if parameter.role is not Role.OTHER:
            roles[name] = parameter
    return roles


def materialize_light_model(path: Path, seed: int) -> onnx.ModelProto:
    """The light model at `path` with seeded random parameters, ready to run.

    1. Every parameter (see `parameter_roles`) gets random values for its role (see
       `_sample`), drawn from `numpy.random.default_rng(seed)` in graph order; the
       ConstantOfShape nodes that made them become initializers of the same name.
    2. Calibration (`_calibrate`), so that activations neither explode nor vanish:
       He init alone keeps plain conv + ReLU stacks steady, but not the residual sums
       of ResNet-50 and ShuffleNet, whose activations would grow a thousandfold and
       make the output independent of the input. So, as in a trained network, each
       batch norm's running mean and variance are the statistics of its input,
       measured on a seeded calibration batch; and the layer that feeds a Softmax is
       scaled so that its logits have a spread of LOGIT_STD.
    3. Graph inputs that are initializers are removed (the IR version is raised to 4,
       which allows that) and initializers nothing uses any more are dropped. The
       remaining inputs keep their shapes.

    The same seed gives the same model; the result passes `onnx.checker` and runs in
    onnxruntime.
    """
    import onnx

    model = onnx.load(str(path))
    graph = model.graph
    roles = parameter_roles(model)
    # Ranks of the batch norms' inputs, inferred while the weights are still tiny
    # ConstantOfShape nodes (shape inference on the materialized model copies it all).
    inferred = onnx.shape_inference.infer_shapes(model)
    ranks = {
        value.name: len(value.type.tensor_type.shape.dim)
        for value in [*inferred.graph.value_info, *inferred.graph.input]
        if value.type.tensor_type.HasField("shape")
    }
    initializers = {tensor.name: tensor for tensor in graph.initializer}
    rng = np.random.default_rng(seed)

    # The parameters to sample, in graph order (which fixes the random stream).
    sampled: dict[str, np.dtype] = {}
    kept_nodes = []
    for node in graph.node:
        name = node.output[0] if node.output else ""
        if node.op_type == "ConstantOfShape" and name in roles:
            sampled[name] = _constant_of_shape_dtype(node)
        else:
            kept_nodes.append(node)
    for name, tensor in initializers.items():
        if name in roles and name not in sampled:
            sampled[name] = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type))

    used = {tensor for node in kept_nodes for tensor in node.input}
    used.update(output.name for output in graph.output)
    kept_initializers = [
        tensor for name, tensor in initializers.items() if name in used and name not in sampled
    ]
    del graph.node[:]
    graph.node.extend(kept_nodes)
    real_inputs = [value for value in graph.input if value.name not in initializers]
    del graph.input[:]
    graph.input.extend(real_inputs)
    model.ir_version = max(model.ir_version, MIN_IR_VERSION)
    del graph.initializer[:]
    graph.initializer.extend(kept_initializers)
    # Calibration needs the values of the batch norms' statistics and of the logit
    # layers only; each other parameter becomes its initializer as soon as it is
    # drawn, so that the weights are never held twice (VGG-19's are 548 MB).
    calibrated = _calibrated_parameters(model, sampled.keys())
    values: dict[str, np.ndarray] = {}
    for name, dtype in sampled.items():
        array = _sample(roles[name], rng).astype(dtype, copy=False)
        if name in calibrated:
            values[name] = array
            graph.initializer.append(onnx.numpy_helper.from_array(array, name))
            continue
        # As from_array, but the array is gone before the proto copies its bytes.
        # (appending a proto would copy it: it is made in place).
        tensor = graph.initializer.add()
        tensor.name = name
        tensor.dims.extend(array.shape)
        tensor.data_type = onnx.helper.np_dtype_to_tensor_dtype(array.dtype)
        data = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
        del array
        tensor.raw_data = data
        del data
    _calibrate(model, values, ranks, rng)
    return model


def _calibrated_parameters(model: onnx.ModelProto, values: Container[str]) -> set[str]:
    """The random parameters (`values`) that `_calibrate` reads or changes: the running
    statistics of the batch norms and the parameters of the logit layers."""
    statistics = {
        name
        for node in model.graph.node
        if node.op_type == "BatchNormalization" and len(node.input) >= 5
        for name in node.input[3:5]
        if name in values
    }
    logits = {name for layer in _logit_layers(model, values) for name in layer.parameters}
    return statistics | logits


def _constant_of_shape_dtype(node: onnx.NodeProto) -> np.dtype:
    from onnx import helper

    for attribute in node.attribute:
        if attribute.name == "value":
            return np.dtype(helper.tensor_dtype_to_np_dtype(attribute.t.data_type))
    return np.dtype(np.float32)  # ONNX's default fill is a float32 zero


@dataclass
class BatchNormStatistics:
    """Where the calibration run reports one batch norm's input statistics, and the
    initializers that receive them."""

    measured_mean: str
    measured_var: str
    mean: str
    var: str


@dataclass
class LogitLayer:
    """A Gemm/Conv/MatMul whose output feeds a Softmax, and its random parameters."""

    output: str
    parameters: list[str]


def _calibrate(
    model: onnx.ModelProto,
    values: dict[str, np.ndarray],
    ranks: dict[str, int],
    rng: np.random.Generator,
) -> None:
    """Set batch-norm statistics and the logits' scale from one run (in `values` and
    in the model's initializers, which hold `values` already).

    The calibration graph is the model with each BatchNormalization fed the mean and
    variance of its actual input (ReduceMean over every axis but the channels) instead
    of its running statistics; those, and the logits that feed each Softmax, are graph
    outputs. One onnxruntime run on a seeded standard-normal batch measures them all,
    and with the measured statistics stored the model computes on each of those
    samples exactly what the calibration graph computed. The batch has
    CALIBRATION_BATCH samples when there are batch norms: the model's batch dimension
    is freed for the run (inputs, outputs, and Reshape targets whose leading 1 is the
    batch, which become 0, "copy the input's dimension").
    """
    import onnx
    from onnx import numpy_helper

    from irc.importers.reference import run_onnxruntime
    from irc.testing.reference import random_inputs

    graph = model.graph
    nodes, statistics, extra_initializers = _normalizing_nodes(model, values, ranks)
    logit_layers = _logit_layers(model, values)
    if not statistics and not logit_layers:
        return
    extra_outputs = [name for s in statistics for name in (s.measured_mean, s.measured_var)]
    extra_outputs += [layer.output for layer in logit_layers]
    batch = CALIBRATION_BATCH if statistics else 1
    if batch > 1:
        nodes, batched_shapes = _free_batch_in_reshapes(nodes, model)
        extra_initializers += batched_shapes

    # The calibration graph is built in place and undone, to avoid copying the weights.
    saved = onnx.GraphProto()
    saved.node.extend(graph.node)
    saved.input.extend(graph.input)
    saved.output.extend(graph.output)
    saved.value_info.extend(graph.value_info)
    initializer_count = len(graph.initializer)
    try:
        del graph.node[:]
        graph.node.extend(nodes)
        del graph.value_info[:]
        graph.output.extend(_untyped_output(name) for name in extra_outputs)
        shapes = {}
        if batch > 1:
            for value in [*graph.input, *graph.output]:
                if value.type.tensor_type.shape.dim:
                    value.type.tensor_type.shape.dim[0].Clear()
                    value.type.tensor_type.shape.dim[0].dim_param = "batch"
            shapes = {value.name: (batch, *_dims(value)[1:]) for value in saved.input}
        graph.initializer.extend(extra_initializers)
        inputs = random_inputs(model, seed=int(rng.integers(2**31)), shapes=shapes)
        measured = run_onnxruntime(model, inputs)
    finally:
        for field_name in ("node", "input", "output", "value_info"):
            container = getattr(graph, field_name)
            del container[:]
            container.extend(getattr(saved, field_name))
        del graph.initializer[initializer_count:]

    changed: dict[str, np.ndarray] = {}
    for entry in statistics:
        variance = measured[entry.measured_var].astype(np.float64)
        floor = VARIANCE_FLOOR * float(variance.mean()) + 1e-6
        changed[entry.mean] = measured[entry.measured_mean].astype(values[entry.mean].dtype)
        changed[entry.var] = np.maximum(variance, floor).astype(values[entry.var].dtype)
    for layer in logit_layers:
        spread = float(measured[layer.output].astype(np.float64).std())
        scale = LOGIT_STD / max(spread, 1e-12)
        for name in layer.parameters:
            changed[name] = (values[name] * scale).astype(values[name].dtype)
    values.update(changed)
    for tensor in graph.initializer:
        if tensor.name in changed:
            tensor.CopyFrom(numpy_helper.from_array(changed[tensor.name], tensor.name))


def _dims(value: onnx.ValueInfoProto) -> tuple[int, ...]:
    return tuple(dim.dim_value for dim in value.type.tensor_type.shape.dim)


def _free_batch_in_reshapes(
    nodes: list[onnx.NodeProto], model: onnx.ModelProto
) -> tuple[list[onnx.NodeProto], list[onnx.TensorProto]]:
    """Rewrite Reshapes of activations to a constant shape that starts with the batch
    size 1 so that their leading dimension follows the input's (0: copy)."""
    from onnx import numpy_helper

    constants = {tensor.name: tensor for tensor in model.graph.initializer}
    rewritten: list[onnx.NodeProto] = []
    shapes: list[onnx.TensorProto] = []
    for node in nodes:
        target = constants.get(node.input[1]) if node.op_type == "Reshape" else None
        if target is None or node.input[0] in constants:
            rewritten.append(node)
            continue
        shape = numpy_helper.to_array(target).copy()
        if shape.size == 0 or shape[0] != 1:
            rewritten.append(node)
            continue
        shape[0] = 0
        name = f"{node.input[1]}_irc_calibration_batch_{len(shapes)}"
        shapes.append(numpy_helper.from_array(shape, name))
        copy = _node_copy(node)
        copy.input[1] = name
        rewritten.append(copy)
    return rewritten, shapes


def _node_copy(node: onnx.NodeProto) -> onnx.NodeProto:
    """A deep copy of an ONNX node."""
    import onnx

    copy = onnx.NodeProto()
    copy.CopyFrom(node)
    return copy


def _untyped_output(name: str) -> onnx.ValueInfoProto:
    from onnx import ValueInfoProto

    value = ValueInfoProto()
    value.name = name
    return value


def _opset(model: onnx.ModelProto) -> int:
    return next(
        (entry.version for entry in model.opset_import if entry.domain in ("", "ai.onnx")), 1
    )


def _normalizing_nodes(
    model: onnx.ModelProto, values: dict[str, np.ndarray], ranks: dict[str, int]
) -> tuple[list[onnx.NodeProto], list[BatchNormStatistics], list[onnx.TensorProto]]:
    """The model's nodes with batch norms normalizing by their input's statistics.

    Only batch norms whose running mean and variance are random parameters change.
    Returns the nodes, where each batch norm's statistics are reported, and the
    initializers the new nodes need (ReduceMean's axes, from opset 18 on).
    """
    from onnx import helper, numpy_helper

    opset = _opset(model)
    nodes: list[onnx.NodeProto] = []
    statistics: list[BatchNormStatistics] = []
    axes_initializers: list[onnx.TensorProto] = []
    for index, node in enumerate(model.graph.node):
        if (
            node.op_type != "BatchNormalization"
            or len(node.input) < 5
            or node.input[3] not in values
            or node.input[4] not in values
        ):
            nodes.append(node)
            continue
        source = node.input[0]
        prefix = f"irc_calibration_{index}"
        reduced = [0, *range(2, ranks.get(source, 4))]
        axes = reduced if opset < 18 else None  # make_node leaves out None attributes
        axes_input = [] if opset < 18 else [f"{prefix}_axes"]
        if axes_input:
            # ReduceMean takes its axes as an attribute before opset 18, as an input since.
            axes_initializers.append(
                numpy_helper.from_array(np.array(reduced, np.int64), axes_input[0])
            )
        mean, kept_mean, centered, squared, var = (
            f"{prefix}_{part}" for part in ("mean", "kept_mean", "centered", "squared", "var")
        )
        normalizing = helper.make_node(
            "BatchNormalization",
            [source, node.input[1], node.input[2], mean, var],
            list(node.output),
        )
        normalizing.attribute.extend(node.attribute)
        nodes += [
            helper.make_node("ReduceMean", [source, *axes_input], [mean], keepdims=0, axes=axes),
            helper.make_node(
                "ReduceMean", [source, *axes_input], [kept_mean], keepdims=1, axes=axes
            ),
            helper.make_node("Sub", [source, kept_mean], [centered]),
            helper.make_node("Mul", [centered, centered], [squared]),
            helper.make_node("ReduceMean", [squared, *axes_input], [var], keepdims=0, axes=axes),
            normalizing,
        ]
        statistics.append(BatchNormStatistics(mean, var, node.input[3], node.input[4]))
    return nodes, statistics, axes_initializers


def _logit_layers(model: onnx.ModelProto, values: Container[str]) -> list[LogitLayer]:
    """The layers with random weights whose output feeds a Softmax (through reshapes
    and dropout), with the names of their weights and biases (through reshapes too)."""
    producers = {output: node for node in model.graph.node for output in node.output}

    def source(tensor: str, skipped: tuple[str, ...]) -> tuple[str, onnx.NodeProto | None]:
        producer = producers.get(tensor)
        while producer is not None and producer.op_type in skipped:
            tensor = producer.input[0]
            producer = producers.get(tensor)
        return tensor, producer

    layers: list[LogitLayer] = []
    for node in model.graph.node:
        if node.op_type not in ("Softmax", "LogSoftmax"):
            continue
        _, producer = source(node.input[0], (*PASS_THROUGH_OPS, "Dropout"))
        if producer is None or producer.op_type not in ("Gemm", "Conv", "MatMul"):
            continue
        parameters = [source(name, tuple(PASS_THROUGH_OPS))[0] for name in producer.input[1:3]]
        known = all(name in values for name in parameters)
        if known and all(layer.output != producer.output[0] for layer in layers):
            layers.append(LogitLayer(producer.output[0], parameters))
    return layers


# --------------------------------------------------------------------------------------
# The pytorch-converted and pytorch-operator backend cases


@dataclass
class Case:
    """One backend test case: a model with inputs and the outputs it must produce."""

    name: str
    suite: str
    directory: Path
    model_path: Path
    inputs: dict[str, np.ndarray] = field(repr=False)
    outputs: dict[str, np.ndarray] = field(repr=False)

    @property
    def id(self) -> str:
        """`suite/name`, unique among all cases (used as the pytest id)."""
        return f"{self.suite}/{self.name}"


def pytorch_cases() -> list[Case]:
    """Every case of the pytorch-converted and pytorch-operator suites, by name.

    The shipped tensors are unnamed; as in onnx's backend test runner, the i-th
    `input_i.pb` is the i-th graph input that is not an initializer and the i-th
    `output_i.pb` the i-th graph output.
    """
    cases = []
    for suite in PYTORCH_SUITES:
        for directory in sorted((onnx_test_data_dir() / suite).iterdir()):
            if (directory / "model.onnx").is_file():
                cases.append(_load_case(suite, directory))
    return cases


def _load_case(suite: str, directory: Path) -> Case:
    import onnx

    model_path = directory / "model.onnx"
    model = onnx.load(str(model_path))
    initializers = {tensor.name for tensor in model.graph.initializer}
    input_names = [value.name for value in model.graph.input if value.name not in initializers]
    output_names = [value.name for value in model.graph.output]
    data = directory / "test_data_set_0"
    inputs = _read_tensors(sorted(data.glob("input_*.pb"), key=_index_of), input_names)
    outputs = _read_tensors(sorted(data.glob("output_*.pb"), key=_index_of), output_names)
    return Case(directory.name, suite, directory, model_path, inputs, outputs)


def _index_of(path: Path) -> int:
    return int(path.stem.rsplit("_", 1)[1])


def _read_tensors(files: list[Path], names: list[str]) -> dict[str, np.ndarray]:
    import onnx
    from onnx import numpy_helper

    if len(files) != len(names):
        raise ValueError(f"{len(files)} tensors in {files[0].parent} for {len(names)} names")
    tensors = {}
    for path, name in zip(files, names, strict=True):
        tensor = onnx.TensorProto()
        tensor.ParseFromString(path.read_bytes())
        tensors[name] = numpy_helper.to_array(tensor)
    return tensors
