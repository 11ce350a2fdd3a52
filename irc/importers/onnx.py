"""ONNX import: an `onnx.ModelProto` becomes a `builtin.module` holding `func.func @main`.

Every supported ONNX node becomes one `nn` op (or a few, where the ONNX semantics of an
old opset differ from the `nn` op's), located at the node's name. The function's
arguments are the graph inputs that are not initializers, in graph order; its results
are the graph outputs. Both carry their ONNX names as `{irc.name = "..."}`.

    module = import_model("model.onnx", input_shapes={"input": [1, 3, 224, 224]})

What the importer guarantees:

- Shapes are static. A graph input with a symbolic dimension needs `input_shapes`.
- Shape-like inputs (a Reshape's shape, a Slice's starts, a Pad's pads, ...) become
  properties. They must be constants at import time: initializers, Constant nodes, or
  values that the reference interpreter computes from those and from static shapes (the
  Shape -> Gather -> Concat -> Reshape chains that exporters emit). The ops of such
  chains are removed once folded (dead code elimination at the end of import).
- Errors are `IrcError`s naming the node: all unsupported ops of a model are reported
  together, never only the first.
- What onnxruntime or ONNX's strict shape inference refuses is an error even where
  onnx.checker passes it: duplicate node names, initializers or declared types
  (graph outputs, value_info) that contradict what irc computes, malformed attributes
  and shape-like inputs. Runtime tensors hold at least one element.
- External-data tensors are read only from files inside the model's directory.
- The same model always gives the same IR.

Opsets 6 to 21 of the default domain are supported; each op's converter handles the
differences between versions (attributes that became inputs, changed defaults, the 2-D
coercion of the old Softmax, legacy broadcasting before opset 7, ...).

Quantized models (both formats of onnxruntime's `quantize_static`) import into the QDQ
form of the quantized level: QuantizeLinear becomes `quant.qcast` to a
`!quant.uniform` type (the storage type, scale and zero point of the node; per axis for
a 1-D scale), DequantizeLinear `quant.dcast` (after a `quant.scast` of integers from an
initializer or a graph input; symmetric int8 weights get the range [-127, 127]), and
QLinearConv, QLinearMatMul and onnxruntime's com.microsoft QGemm, QLinearAdd,
QLinearMul, QLinearConcat, QLinear(Global)AveragePool, QLinearSoftmax, QLinearSigmoid
and QLinearLeakyRelu their float op between the dcasts of their inputs and the qcast
of their result. Ops that only move values (MaxPool, Reshape, ...) may read quantized
tensors; a quantized graph output returns its stored integers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np
import onnx
from onnx import numpy_helper
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    DenseArrayBase,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    NameLoc,
    StringAttr,
    TensorType,
    UnknownLoc,
    f32,
    i64,
)
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from irc.diagnostics import Diagnostic, IrcError, Location
from irc.dialects import nn, quant
from irc.dialects.base import broadcast_shapes, tensor_type
from irc.ir import weights

MIN_OPSET = 6
MAX_OPSET = 21
"""The range of default-domain opset versions the importer understands."""

DEFAULT_DOMAINS = ("", "ai.onnx")

INPUT_SHAPE_HINT = "--input-shape NAME=1x3x224x224"

MAX_TENSOR_ELEMENTS = 2**31 - 1
"""The most elements a tensor of an imported model may have. Larger shapes come from a
broken model (or a huge declared input): no NPU model has them, and the interpreter
would try to allocate them."""


# --------------------------------------------------------------------------------------
# Public API


def import_model(
    model: onnx.ModelProto | str | Path,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    model_dir: Path | None = None,
) -> ModuleOp:
    """Import an ONNX model (a proto or a file path) as a module of `nn` ops.

    `input_shapes` gives static shapes to graph inputs (needed for symbolic dimensions).
    `model_dir` is the only directory external-data files may be read from; it defaults
    to the directory of the model file. Raises `IrcError` for any problem of the model.
    """
    source = "<onnx model>"
    if isinstance(model, str | Path):
        path = Path(model)
        source = str(path)
        model = load_model(path)
        if model_dir is None:
            model_dir = path.parent
    _check_model(model, source)
    return _GraphImporter(model, source, model_dir, dict(input_shapes or {})).run()


def load_model(path: Path | str) -> onnx.ModelProto:
    """Read an ONNX file without its external data; unreadable files are `IrcError`s."""
    path = Path(path)
    if not path.is_file():
        raise IrcError(
            Diagnostic(f"cannot open ONNX model '{path}': no such file", Location(str(path)))
        )
    if path.stat().st_size == 0:
        raise IrcError(
            Diagnostic(
                f"cannot read ONNX model '{path}': the file is empty",
                Location(str(path)),
                hint="the export or the copy of the model did not finish",
            )
        )
    try:
        return onnx.load(str(path), load_external_data=False)
    except Exception as failure:  # protobuf and onnx raise many kinds; all mean a bad file
        raise IrcError(
            Diagnostic(
                f"cannot read ONNX model '{path}': {_first_line(failure)}",
                Location(str(path)),
                hint="the file is not a valid ONNX protobuf (truncated or another format?)",
            )
        ) from None


# --------------------------------------------------------------------------------------
# Reading and checking the model


def _first_line(failure: BaseException) -> str:
    text = str(failure).strip()
    return text.splitlines()[0] if text else type(failure).__name__


def _check_model(model: onnx.ModelProto, source: str | None) -> None:
    if not isinstance(model, onnx.ModelProto):
        raise TypeError(f"expected an onnx.ModelProto or a path, got {type(model).__name__}")
    try:
        onnx.checker.check_model(_without_external_data(with_bulk_replaced(model, _emptied)))
    except Exception as failure:  # ValidationError, or C++ errors surfacing as others
        message = str(failure).strip()
        raise IrcError(
            Diagnostic(
                f"the ONNX model is malformed: {message.splitlines()[0] if message else failure}",
                Location(source),
                hint="onnx.checker.check_model rejects it; fix or re-export the model",
            )
        ) from None


def _external_tensors(model: onnx.ModelProto) -> Iterator[onnx.TensorProto]:
    """The top-level graph's tensors whose data lives in external files."""
    for tensor in model.graph.initializer:
        if tensor.data_location == onnx.TensorProto.EXTERNAL:
            yield tensor
    for node in model.graph.node:
        for attribute in node.attribute:
            if attribute.HasField("t") and attribute.t.data_location == onnx.TensorProto.EXTERNAL:
                yield attribute.t


BULK_TENSOR_BYTES = 1 << 20
"""Initializers above this size are the model's bulk (see `with_bulk_replaced`)."""


def with_bulk_replaced(
    model: onnx.ModelProto, replace: Callable[[onnx.TensorProto], onnx.TensorProto]
) -> onnx.ModelProto:
    """A copy of `model` whose large inline initializers (BULK_TENSOR_BYTES) are
    `replace(tensor)`, made without copying them.

    onnx's checker and onnxruntime take a model as serialized bytes, which for
    VGG-19 is another 548 MB, and the C++ side parses it into yet another copy; and
    emptying the fields of a proto in place frees nothing (protobuf's arena keeps
    the memory until the proto goes). So the big tensors are left out of the copy:
    emptied for the checker, moved to external data for onnxruntime.
    """
    copy = onnx.ModelProto()
    for descriptor, _ in model.ListFields():
        if descriptor.name != "graph":
            _copy_field(model, copy, descriptor.name)
    for descriptor, _ in model.graph.ListFields():
        if descriptor.name != "initializer":
            _copy_field(model.graph, copy.graph, descriptor.name)
    for tensor in model.graph.initializer:
        if tensor.HasField("raw_data") and tensor_data_bytes(tensor) > BULK_TENSOR_BYTES:
            copy.graph.initializer.append(replace(tensor))
        else:
            copy.graph.initializer.append(tensor)
    return copy


def tensor_data_bytes(tensor: onnx.TensorProto) -> int:
    """The size of `tensor`'s data, from its shape and element type. (A proto's
    `ByteSize()` serializes it: for ZFNet-512's 288 MB gemm weight a transient of twice
    that.)"""
    try:
        itemsize = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type)).itemsize
    except (KeyError, TypeError, ValueError):  # UNDEFINED or an unknown data type
        return tensor.ByteSize()
    return math.prod(tensor.dims) * itemsize


def model_data_bytes(model: onnx.ModelProto) -> int:
    """About the size of `model` as a proto, without serializing it: the data of its
    initializers and of its top-level nodes' tensor attributes."""
    size = sum(tensor_data_bytes(tensor) for tensor in model.graph.initializer)
    for node in model.graph.node:
        for attribute in node.attribute:
            if attribute.HasField("t"):
                size += tensor_data_bytes(attribute.t)
    return size


def _copy_field(source: Any, target: Any, name: str) -> None:
    value = getattr(source, name)
    if hasattr(value, "extend"):  # a repeated field
        getattr(target, name).extend(value)
    elif hasattr(value, "CopyFrom"):  # a message
        getattr(target, name).CopyFrom(value)
    else:
        setattr(target, name, value)


def _emptied(tensor: onnx.TensorProto) -> onnx.TensorProto:
    """`tensor` with no data (and shape (0,)), for the checker."""
    return onnx.helper.make_tensor(tensor.name, tensor.data_type, [0], [])


def _without_external_data(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model for the checker, whose external-data checks resolve paths against the
    working directory: a copy with external tensors emptied (the importer checks and
    reads them itself, from the model directory only). Copying is cheap exactly when
    there are external tensors, since they hold the model's bulk."""
    if next(_external_tensors(model), None) is None:
        return model
    stripped = onnx.ModelProto()
    stripped.CopyFrom(model)
    for tensor in _external_tensors(stripped):
        del tensor.external_data[:]
        tensor.data_location = onnx.TensorProto.DEFAULT
        del tensor.dims[:]
        tensor.dims.append(0)
    return stripped


def _external_bytes(tensor: onnx.TensorProto, model_dir: Path | None, source: str | None) -> bytes:
    """The bytes of an external-data tensor, read only from inside `model_dir`."""
    info = {entry.key: entry.value for entry in tensor.external_data}
    location = info.get("location", "")

    def fail(message: str, hint: str) -> IrcError:
        return IrcError(
            Diagnostic(f"tensor '{tensor.name}': {message}", Location(source), hint=hint)
        )

    if model_dir is None:
        raise fail(
            "its data is in an external file, but the model's directory is unknown",
            "import the model from its file path, or pass model_dir",
        )
    if not location:
        raise fail("external data without a 'location'", "re-save the model with onnx.save")
    base = model_dir.resolve()
    path = (base / location).resolve()
    if Path(location).is_absolute() or not path.is_relative_to(base):
        raise fail(
            f"external data file '{location}' lies outside the model directory '{base}'",
            "external data must be a relative path inside the model's directory",
        )
    if not path.is_file():
        raise fail(f"external data file '{path}' does not exist", "copy it next to the model")
    try:
        offset = int(info.get("offset", "0"))
        length = int(info["length"]) if "length" in info else -1
    except ValueError:
        raise fail("malformed external data offset or length", "re-save the model") from None
    with path.open("rb") as file:
        file.seek(offset)
        data = file.read(length)
    if length >= 0 and len(data) != length:
        raise fail(
            f"external data file '{path}' holds {len(data)} bytes at offset {offset}, "
            f"expected {length}",
            "the file is truncated or belongs to another model",
        )
    return data


def tensor_to_array(
    tensor: onnx.TensorProto, model_dir: Path | None = None, source: str | None = None
) -> np.ndarray:
    """A numpy array of an ONNX tensor (external data read only from inside `model_dir`)."""
    if tensor.data_location == onnx.TensorProto.EXTERNAL:
        inline = onnx.TensorProto()
        inline.CopyFrom(tensor)
        del inline.external_data[:]
        inline.data_location = onnx.TensorProto.DEFAULT
        inline.raw_data = _external_bytes(tensor, model_dir, source)
        tensor = inline
    try:
        array = numpy_helper.to_array(tensor)
    except Exception as failure:  # size mismatches, unknown data types
        raise IrcError(
            Diagnostic(
                f"tensor '{tensor.name}' is malformed: {_first_line(failure)}", Location(source)
            )
        ) from None
    _element_type(array.dtype, f"tensor '{tensor.name}'", source)
    return array


def _element_type(dtype: np.dtype, what: str, source: str | None) -> Attribute:
    """The MLIR element type of a numpy dtype that irc supports, or an `IrcError`."""
    try:
        return weights.element_type_of(dtype)
    except (ValueError, KeyError, TypeError):
        raise IrcError(
            Diagnostic(
                f"{what} has element type {dtype}, which irc does not support", Location(source)
            )
        ) from None


def _onnx_element_type(elem_type: int, what: str, source: str | None) -> Attribute:
    """The MLIR element type of an ONNX `TensorProto.DataType`."""
    try:
        dtype = onnx.helper.tensor_dtype_to_np_dtype(elem_type)
    except (KeyError, ValueError, TypeError):
        dtype = None
    if dtype is None or dtype.kind not in "fiub" or dtype.itemsize > 8:
        name = (
            onnx.TensorProto.DataType.Name(elem_type)
            if elem_type in onnx.TensorProto.DataType.values()
            else elem_type
        )
        raise IrcError(
            Diagnostic(
                f"{what} has ONNX element type {name}, which irc does not support", Location(source)
            )
        )
    return _element_type(dtype, what, source)


# --------------------------------------------------------------------------------------
# Property values


def _ints(values: Iterable[int] | None) -> DenseArrayBase | None:
    return None if values is None else DenseArrayBase.from_list(i64, [int(v) for v in values])


def _ints_unless(values: Sequence[int], default: int) -> DenseArrayBase | None:
    """`values` as a property, or None (the op's default) if every value is `default`."""
    return None if all(v == default for v in values) else _ints(values)


def _int(value: int | None) -> IntegerAttr | None:
    return None if value is None else IntegerAttr(int(value), i64)


def _float(value: float | None) -> FloatAttr | None:
    return None if value is None else FloatAttr(float(value), f32)


def _floats(values: Iterable[float] | None) -> DenseArrayBase | None:
    return None if values is None else DenseArrayBase.from_list(f32, [float(v) for v in values])


def _bool(value: int | bool | None) -> IntegerAttr | None:
    return None if value is None else BoolAttr.from_bool(bool(value))


def _str(value: str | None) -> StringAttr | None:
    return None if value is None else StringAttr(value)


def _attribute_value(attribute: onnx.AttributeProto) -> Any:
    value = onnx.helper.get_attribute_value(attribute)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, list) and value and isinstance(value[0], bytes):
        return [v.decode("utf-8", errors="replace") for v in value]
    return value


# --------------------------------------------------------------------------------------
# The graph importer


class _GraphImporter:
    """Imports one ONNX graph into a block, node by node, then wraps it in @main."""

    def __init__(
        self,
        model: onnx.ModelProto,
        source: str | None,
        model_dir: Path | None,
        input_shapes: dict[str, Sequence[int]],
    ) -> None:
        self.model = model
        self.graph = model.graph
        self.source = source
        self.model_dir = model_dir
        self.input_shapes = input_shapes
        self.block = Block()
        self.values: dict[str, SSAValue] = {}
        self.known_arrays: dict[SSAValue, np.ndarray | None] = {}
        self.opset = self._default_opset()
        self.computed_on = {name for node in self.graph.node for name in node.input if name}
        """The values that nodes read (a graph output may be empty; these may not)."""
        self.consumed = self.computed_on | {output.name for output in self.graph.output}
        self.declared: dict[str, onnx.TypeProto] = {
            value.name: value.type for value in [*self.graph.value_info, *self.graph.output]
        }
        """The types the model declares for its values (value_info and graph outputs),
        which must agree with the types irc computes."""

    # ---- the whole graph -------------------------------------------------------------

    def run(self) -> ModuleOp:
        self._check_node_names()
        self._check_supported()
        self._import_initializers()
        arguments = self._import_inputs()
        self._import_nodes()
        results = self._import_outputs()
        self.block.add_op(func.ReturnOp(*(value for _, value in results)))
        _eliminate_dead_ops(self.block)
        function = func.FuncOp(
            "main",
            ([value.type for _, value in arguments], [value.type for _, value in results]),
            Region(self.block),
            arg_attrs=ArrayAttr([_name_dict(name) for name, _ in arguments]),
            res_attrs=ArrayAttr([_name_dict(name) for name, _ in results]),
        )
        # Named after the ONNX graph, so that diagnostics about the whole function
        # (a pass's remarks) say which model they are about.
        function.location = NameLoc(StringAttr(self.graph.name or "main"), UnknownLoc())
        return ModuleOp([function])

    def _default_opset(self) -> int:
        versions = [
            entry.version for entry in self.model.opset_import if entry.domain in DEFAULT_DOMAINS
        ]
        if not versions:
            if any(node.domain in DEFAULT_DOMAINS for node in self.graph.node):
                raise self.error("the model uses ONNX ops but imports no default-domain opset")
            return MAX_OPSET
        opset = max(versions)
        if not MIN_OPSET <= opset <= MAX_OPSET:
            raise self.error(
                f"the model uses ONNX opset {opset}; irc supports opsets {MIN_OPSET} to {MAX_OPSET}",
                hint=f"convert it: onnx.version_converter.convert_version(model, {min(max(opset, MIN_OPSET), MAX_OPSET)})",
            )
        return opset

    def error(self, message: str, hint: str | None = None) -> IrcError:
        return IrcError(Diagnostic(message, Location(self.source), hint=hint))

    def _check_node_names(self) -> None:
        """Node names are unique, as onnxruntime requires (diagnostics name nodes)."""
        first_index: dict[str, int] = {}
        for index, node in enumerate(self.graph.node):
            if not node.name:
                continue
            if node.name in first_index:
                raise IrcError(
                    Diagnostic(
                        f"two nodes are named '{node.name}' (#{first_index[node.name]} "
                        f"{self.graph.node[first_index[node.name]].op_type} and #{index} "
                        f"{node.op_type})",
                        Location(self.source, name=node.name),
                        hint="node names must be unique (onnxruntime refuses the model): "
                        "rename one, or re-export the model",
                    )
                )
            first_index[node.name] = index

    def contradicted_declaration(self, name: str, value: SSAValue) -> str | None:
        """The model's declared type of `name` as text if `value`'s type contradicts
        it; None if they agree or nothing is declared."""
        declared = self.declared.get(name)
        return None if declared is None else _contradicted(declared, value.type)

    def _check_supported(self) -> None:
        """Report every node whose op irc cannot import, all at once."""
        versions = {entry.domain or "ai.onnx": entry.version for entry in self.model.opset_import}
        diagnostics = []
        for index, node in enumerate(self.graph.node):
            if _converter_of(node) is not None:
                continue
            domain = node.domain or "ai.onnx"
            version = versions.get(domain, "?")
            diagnostics.append(
                Diagnostic(
                    f"unsupported ONNX op '{node.op_type}' (domain '{domain}', opset {version})",
                    Location(self.source, name=_node_name(node, index)),
                    hint="the nn dialect has no op for it (docs/adding-an-op.md explains how to add one)",
                )
            )
        if diagnostics:
            raise IrcError(diagnostics)

    def _import_initializers(self) -> None:
        input_types = {value.name: value.type for value in self.graph.input}
        for tensor in self.graph.initializer:
            array = tensor_to_array(tensor, self.model_dir, self.source)
            _check_no_nan(array, tensor.name, self.source)
            declared = input_types.get(tensor.name)
            contradicted = None if declared is None else _contradicted(declared, array)
            if contradicted is not None:
                raise self.error(
                    f"initializer '{tensor.name}' is {_type_text(array)}, but the graph input "
                    f"it initializes is declared as {contradicted}",
                    hint="onnxruntime refuses such a model: fix the input's declaration, or "
                    "remove the initializer from the graph inputs",
                )
            constant = nn.ConstantOp.from_array(array, location=_name_loc(tensor.name))
            self.block.add_op(constant)
            self.values[tensor.name] = constant.result
            self.known_arrays[constant.result] = array
        if self.graph.sparse_initializer:
            raise self.error(
                "sparse initializers are not supported", hint="store them as dense tensors"
            )

    def _import_inputs(self) -> list[tuple[str, SSAValue]]:
        initializers = {tensor.name for tensor in self.graph.initializer}
        inputs = [value for value in self.graph.input if value.name not in initializers]
        names = [value.name for value in inputs]
        diagnostics = []
        for name in self.input_shapes:
            if name not in names:
                known = ", ".join(names) or "none"
                diagnostics.append(
                    Diagnostic(
                        f"--input-shape names '{name}', which is not a graph input",
                        Location(self.source),
                        hint=f"the graph inputs are: {known}",
                    )
                )
        arguments: list[tuple[str, SSAValue]] = []
        for value in inputs:
            try:
                value_type = self._input_type(value)
            except IrcError as failure:
                diagnostics.extend(failure.diagnostics)
                continue
            argument = self.block.insert_arg(value_type, len(self.block.args))
            self.values[value.name] = argument
            arguments.append((value.name, argument))
        if diagnostics:
            raise IrcError(diagnostics)
        return arguments

    def _input_type(self, value: onnx.ValueInfoProto) -> TensorType:
        what = f"graph input '{value.name}'"
        if value.type.WhichOneof("value") != "tensor_type":
            raise self.error(f"{what} is not a tensor", hint="irc imports tensor inputs only")
        tensor_type = value.type.tensor_type
        element_type = _onnx_element_type(tensor_type.elem_type, what, self.source)
        declared: list[int | str] | None = None
        if tensor_type.HasField("shape"):
            declared = [
                dim.dim_value if dim.HasField("dim_value") else (dim.dim_param or "?")
                for dim in tensor_type.shape.dim
            ]
        given = self.input_shapes.get(value.name)
        if given is not None:
            given = [int(d) for d in given]
            if any(d < 0 for d in given):
                raise self.error(f"--input-shape gives {what} negative dimensions {given}")
            if declared is not None:
                if len(given) != len(declared):
                    raise self.error(
                        f"--input-shape gives {what} rank {len(given)} ({_dims_text(given)}), "
                        f"but the model declares rank {len(declared)} ({_dims_text(declared)})",
                        hint=f"give {len(declared)} dimensions",
                    )
                for axis, (want, have) in enumerate(zip(declared, given)):
                    if isinstance(want, int) and want != have:
                        raise self.error(
                            f"--input-shape gives {what} dimension {axis} = {have}, but the model "
                            f"fixes it to {want}",
                            hint="only symbolic dimensions can be chosen",
                        )
            given_type = TensorType(element_type, given)
            _check_size(given_type, what, Location(self.source))
            _check_not_empty(given_type, what, Location(self.source))
            return given_type
        if not _is_static(declared):
            shown = "unknown rank" if declared is None else _dims_text(declared)
            suggestion = (
                INPUT_SHAPE_HINT.replace("NAME", value.name)
                if declared is None
                else f"--input-shape {value.name}="
                + "x".join(str(d) if isinstance(d, int) else "1" for d in declared)
            )
            raise self.error(
                f"{what} has a dynamic shape ({shown}); irc needs static shapes",
                hint=f"fix its shape with {suggestion} (input_shapes in Python)",
            )
        declared_type = TensorType(element_type, declared)
        _check_size(declared_type, what, Location(self.source))
        _check_not_empty(declared_type, what, Location(self.source))
        return declared_type

    def _import_nodes(self) -> None:
        """Convert every node; a failed node's outputs are poisoned so that its
        dependents are skipped, and all failures are reported together."""
        diagnostics: list[Diagnostic] = []
        poisoned: set[str] = set()
        for index, proto in enumerate(self.graph.node):
            if any(name in poisoned for name in proto.input):
                poisoned.update(proto.output)
                continue
            node = OnnxNode(proto, index, self)
            try:
                self._convert(node)
            except IrcError as failure:
                diagnostics.extend(failure.diagnostics)
                poisoned.update(proto.output)
        if diagnostics:
            raise IrcError(diagnostics)

    def _convert(self, node: OnnxNode) -> None:
        for position, name in enumerate(node.proto.input):
            if name and name not in self.values:
                raise node.error(f"input #{position} '{name}' is not defined before this node")
        converter = _converter_of(node.proto)
        assert converter is not None, "_check_supported lets only known ops through"
        if not _takes_quantized_inputs(node.proto) and any(
            quant.quantized_element(value.type) for value in node.inputs()
        ):
            converted: SSAValue | Sequence[SSAValue | None] = _convert_on_dequantized(
                node, converter
            )
        else:
            converted = converter(node)
        produced = [converted] if isinstance(converted, SSAValue) else converted
        for position, name in enumerate(node.proto.output):
            if not name:
                continue
            value = produced[position] if position < len(produced) else None
            if value is None:
                if name in self.consumed:
                    raise node.error(
                        f"output #{position} '{name}' is not supported by irc, but it is used"
                    )
                continue
            _check_size(
                value.type,
                f"{node.op_type}: output '{name}'",
                Location(self.source, name=node.name),
            )
            if (
                0 in tensor_type(value).get_shape()
                and name in self.computed_on
                and self.known_array(value) is None
            ):
                raise node.error(
                    f"output '{name}' would have shape {_dims_text(tensor_type(value).get_shape())}"
                    ": no elements",
                    hint=EMPTY_TENSOR_HINT,
                )
            contradicted = self.contradicted_declaration(name, value)
            if contradicted is not None:
                raise node.error(
                    f"output '{name}' is declared as {contradicted}, but {node.op_type} "
                    f"computes {_type_text(value.type)}",
                    hint=DECLARED_TYPE_HINT,
                )
            self.values[name] = value

    def _import_outputs(self) -> list[tuple[str, SSAValue]]:
        results = []
        for output in self.graph.output:
            if output.name not in self.values:
                raise self.error(f"graph output '{output.name}' is not produced by any node")
            value = self.values[output.name]
            contradicted = self.contradicted_declaration(output.name, value)
            if contradicted is not None:  # an input or initializer (nodes are checked)
                raise self.error(
                    f"graph output '{output.name}' is declared as {contradicted}, but it is "
                    f"{_type_text(value.type)}",
                    hint=DECLARED_TYPE_HINT,
                )
            element = quant.quantized_element(value.type)
            if element is not None:
                # A quantized graph output (a QuantizeLinear's) leaves as the integers
                # ONNX gives: its storage values.
                storage = TensorType(element.storage_type, tensor_type(value).get_shape())
                cast = quant.StorageCastOp(operands=[value], result_types=[storage])
                cast.location = _name_loc(output.name)
                self.block.add_op(cast)
                value = cast.result
            results.append((output.name, value))
        return results

    # ---- values known at import time ---------------------------------------------------

    def known_array(self, value: SSAValue) -> np.ndarray | None:
        """The value as an array if it is computable at import time, else None.

        Constants are known; `nn.shape` is known from its operand's static type; any
        other op is evaluated by the reference interpreter when all its operands are
        known. Walks the producers iteratively (exporters' shape chains can be long).
        """
        stack = [value]
        while stack:
            current = stack[-1]
            if current in self.known_arrays:
                stack.pop()
                continue
            op = current.owner
            if not isinstance(op, nn.NNOp):
                self.known_arrays[current] = None
                stack.pop()
                continue
            if isinstance(op, nn.ShapeOp):
                shape = tensor_type(op.input).get_shape()
                start, end = nn.shape_op_range(
                    len(shape), op.props().int("start"), op.props().int("end")
                )
                self.known_arrays[current] = np.array(shape[start:end], dtype=np.int64)
                stack.pop()
                continue
            pending = [operand for operand in op.operands if operand not in self.known_arrays]
            if pending:
                stack.extend(pending)
                continue
            operands = [self.known_arrays[operand] for operand in op.operands]
            known_operands = [array for array in operands if array is not None]
            if len(known_operands) != len(operands):
                arrays: Sequence[np.ndarray | None] = [None] * len(op.results)
            else:
                from irc.interp import evaluate_op

                arrays = list(evaluate_op(op, known_operands))
            for result, array in zip(op.results, arrays):
                self.known_arrays[result] = array
            stack.pop()
        return self.known_arrays[value]


def _check_no_nan(array: np.ndarray, name: str, source: str | None) -> None:
    """NaN weights are an error: no computation means them, and every layer that reads
    them (and int8 calibration of everything after it) becomes NaN. Infinities are
    kept: models use -inf on purpose, for masks and as the padding of max pools."""
    if array.dtype.kind in "fc" and np.isnan(array).any():
        count = int(np.isnan(array).sum())
        raise IrcError(
            Diagnostic(
                f"initializer '{name}' holds {count} NaN value{'s' if count > 1 else ''} "
                f"(of {array.size})",
                Location(source),
                hint="the weights are broken: check the training run or the export that wrote them",
            )
        )


EMPTY_TENSOR_HINT = (
    "irc computes on tensors that hold at least one element (only constants, such as an "
    "empty Resize 'roi', may be empty): check the model's shapes"
)


def _check_not_empty(value_type: TensorType, what: str, location: Location) -> None:
    """An error if a tensor computed at run time (`value_type`) has no elements."""
    if 0 in value_type.get_shape():
        raise IrcError(
            Diagnostic(
                f"{what} has shape {_dims_text(value_type.get_shape())}: no elements",
                location,
                hint=EMPTY_TENSOR_HINT,
            )
        )


DECLARED_TYPE_HINT = (
    "the model's declared types are wrong (onnx.shape_inference.infer_shapes(model, "
    "strict_mode=True) shows where): fix them, or re-export the model"
)


def _contradicted(declared: onnx.TypeProto, actual: Attribute | np.ndarray) -> str | None:
    """`declared` as text if the element type or a fixed dimension of the tensor type
    it declares differs from `actual` (a tensor type or an array), else None. Symbolic
    and absent dimensions, an absent shape and an undefined element type declare
    nothing; a quantized tensor is compared by its storage type, as ONNX holds it."""
    if declared.WhichOneof("value") != "tensor_type":
        return None
    tensor = declared.tensor_type
    dtype, shape = _dtype_and_shape(actual)
    if tensor.elem_type != onnx.TensorProto.UNDEFINED:
        try:
            declared_dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type)
        except (KeyError, ValueError, TypeError):
            declared_dtype = None
        if declared_dtype != dtype:
            return _onnx_type_text(tensor)
    if tensor.HasField("shape"):
        dims = tensor.shape.dim
        if len(dims) != len(shape) or any(
            dim.HasField("dim_value") and dim.dim_value != size for dim, size in zip(dims, shape)
        ):
            return _onnx_type_text(tensor)
    return None


def _dtype_and_shape(actual: Attribute | np.ndarray) -> tuple[np.dtype, list[int]]:
    if isinstance(actual, np.ndarray):
        return actual.dtype, list(actual.shape)
    assert isinstance(actual, TensorType)
    element = quant.quantized_element(actual)
    element_type = actual.get_element_type() if element is None else element.storage_type
    return weights.dtype_of(element_type), list(actual.get_shape())


def _type_text(actual: Attribute | np.ndarray) -> str:
    """A tensor type (or an array's) as `float32 1x4`."""
    dtype, shape = _dtype_and_shape(actual)
    return f"{dtype} {_dims_text(shape)}"


def _onnx_type_text(tensor: onnx.TypeProto.Tensor) -> str:
    """A declared ONNX tensor type as `float32 1x4` (`?` for an unknown dimension)."""
    try:
        element = str(onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type))
    except (KeyError, ValueError, TypeError):
        values = onnx.TensorProto.DataType.values()
        element = (
            onnx.TensorProto.DataType.Name(tensor.elem_type).lower()
            if tensor.elem_type in values
            else f"element type {tensor.elem_type}"
        )
    if not tensor.HasField("shape"):
        return f"{element} of any shape"
    dims = [
        dim.dim_value if dim.HasField("dim_value") else (dim.dim_param or "?")
        for dim in tensor.shape.dim
    ]
    return f"{element} {_dims_text(dims)}"


def _check_size(value_type: Attribute, what: str, location: Location) -> None:
    """An error if `value_type` is a tensor of more than MAX_TENSOR_ELEMENTS."""
    if isinstance(value_type, TensorType):
        shape = value_type.get_shape()
        elements = math.prod(shape)
        if elements > MAX_TENSOR_ELEMENTS:
            raise IrcError(
                Diagnostic(
                    f"{what} would have shape {_dims_text(shape)}: {elements:,} elements, more "
                    f"than irc supports ({MAX_TENSOR_ELEMENTS:,})",
                    location,
                    hint="check the model's shapes (a wrong reshape or expand target, or a "
                    "huge declared input dimension)",
                )
            )


def _node_name(node: onnx.NodeProto, index: int) -> str:
    return node.name or f"{node.op_type}_{index}"


def _name_loc(name: str) -> NameLoc:
    return NameLoc(StringAttr(name), UnknownLoc())


def _name_dict(name: str) -> DictionaryAttr:
    return DictionaryAttr({"irc.name": StringAttr(name)})


def _is_static(dims: Sequence[int | str] | None) -> TypeGuard[Sequence[int]]:
    """True if the rank is known and every dimension is a number, not a symbol."""
    return dims is not None and all(isinstance(d, int) for d in dims)


def _dims_text(dims: Sequence[int | str]) -> str:
    return "x".join(str(d) for d in dims) if dims else "scalar"


QUANT_CASTS = (quant.QuantizeCastOp, quant.DequantizeCastOp, quant.StorageCastOp)


def _eliminate_dead_ops(block: Block) -> None:
    """Erase nn ops and quant casts whose results are unused (folded shape chains,
    unused weights, the casts of a quantized value that only its shape was taken of)."""
    for op in reversed(list(block.ops)):
        if isinstance(op, (nn.NNOp, *QUANT_CASTS)) and all(
            result.first_use is None for result in op.results
        ):
            op.detach()
            op.erase()


# --------------------------------------------------------------------------------------
# One node


@dataclass
class OnnxNode:
    """One ONNX node being imported: its attributes, its inputs, and how to emit ops."""

    proto: onnx.NodeProto
    index: int
    importer: _GraphImporter
    attributes: dict[str, onnx.AttributeProto] = field(init=False)
    substitutes: dict[int, SSAValue] = field(default_factory=dict)
    """Inputs to read in place of the graph's values, by position (the dequantized
    inputs that a float converter sees when it imports a quantized op)."""

    def __post_init__(self) -> None:
        self.attributes = {attribute.name: attribute for attribute in self.proto.attribute}

    @property
    def op_type(self) -> str:
        return self.proto.op_type

    @property
    def name(self) -> str:
        return _node_name(self.proto, self.index)

    @property
    def opset(self) -> int:
        return self.importer.opset

    def attr(self, name: str, default: Any = None) -> Any:
        """An attribute's value (strings decoded, tensors as protos), or `default`."""
        attribute = self.attributes.get(name)
        return default if attribute is None else _attribute_value(attribute)

    def has_input(self, position: int) -> bool:
        return position < len(self.proto.input) and bool(self.proto.input[position])

    def input(self, position: int) -> SSAValue:
        """A required input."""
        if not self.has_input(position):
            raise self.error(f"input #{position} is missing")
        if position in self.substitutes:
            return self.substitutes[position]
        return self.importer.values[self.proto.input[position]]

    def inputs(self) -> list[SSAValue]:
        """Every present input, in order."""
        return [
            self.input(position)
            for position in range(len(self.proto.input))
            if self.has_input(position)
        ]

    def shape(self, position: int) -> list[int]:
        return list(tensor_type(self.input(position)).get_shape())

    def output_used(self, position: int) -> bool:
        return (
            position < len(self.proto.output)
            and bool(self.proto.output[position])
            and self.proto.output[position] in self.importer.consumed
        )

    def constant(self, position: int, what: str) -> np.ndarray | None:
        """The value of a shape-like input that must be known at import time; None if
        the input is absent."""
        if not self.has_input(position):
            return None
        array = self.importer.known_array(self.input(position))
        if array is None:
            raise self.error(
                f"{what} (input #{position}, '{self.proto.input[position]}') must be known at "
                "import time, but it depends on runtime values",
                hint="irc needs static shapes: make it a constant (onnxsim can fold it), or "
                f"fix the model's input shapes with {INPUT_SHAPE_HINT}",
            )
        return array

    def constant_ints(self, position: int, what: str) -> list[int] | None:
        """A shape-like input of integers (a 1-D int64 tensor in ONNX), as a list."""
        array = self.constant(position, what)
        if array is None:
            return None
        array = np.asarray(array)
        if array.dtype.kind not in "iu" or array.ndim > 1:
            raise self.error(
                f"{what} (input #{position}, '{self.proto.input[position]}') must be a 1-D "
                f"integer tensor, but it is {_type_text(array)}",
                hint="onnxruntime refuses such a model: store it as a 1-D int64 tensor",
            )
        return [int(v) for v in array.reshape(-1)]

    def attr_or_input_ints(self, attribute: str, position: int, since: int) -> list[int] | None:
        """A list of ints that is an attribute before opset `since` and an input after."""
        if self.opset < since:
            value = self.attr(attribute)
            return None if value is None else [int(v) for v in value]
        return self.constant_ints(position, f"'{attribute}'")

    def error(self, message: str, hint: str | None = None) -> IrcError:
        return IrcError(
            Diagnostic(
                f"{self.op_type}: {message}",
                Location(self.importer.source, name=self.name),
                hint=hint,
            )
        )

    def emit(
        self,
        op_class: type[nn.NNOp],
        operands: Sequence[SSAValue],
        properties: Mapping[str, Attribute | None] | None = None,
        result_types: Sequence[Attribute] | None = None,
    ) -> nn.NNOp:
        """Build an op at this node's location, check it, and append it to the block."""
        try:
            op = op_class.build(operands, properties, result_types, _name_loc(self.name))
            op.verify_()
        except VerifyException as failure:
            raise self.error(str(failure).strip() or f"'{op_class.name}' is invalid") from None
        self.importer.block.add_op(op)
        return op

    def emit_value(
        self,
        op_class: type[nn.NNOp],
        operands: Sequence[SSAValue],
        properties: Mapping[str, Attribute | None] | None = None,
        result_types: Sequence[Attribute] | None = None,
    ) -> SSAValue:
        """`emit` an op with one result and return that result."""
        return self.emit(op_class, operands, properties, result_types).results[0]

    def reshape(self, value: SSAValue, shape: Sequence[int]) -> SSAValue:
        value_type = value.type
        assert isinstance(value_type, TensorType)
        if list(value_type.get_shape()) == list(shape):
            return value
        return self.emit_value(
            nn.ReshapeOp, [value], {}, [TensorType(value_type.get_element_type(), shape)]
        )

    def emit_cast(
        self,
        op_class: type[quant.QuantizeCastOp | quant.DequantizeCastOp | quant.StorageCastOp],
        value: SSAValue,
        element_type: Attribute,
    ) -> SSAValue:
        """Append a `quant` cast of `value` to a tensor of `element_type` (same shape)."""
        result_type = TensorType(element_type, tensor_type(value).get_shape())
        op = op_class(operands=[value], result_types=[result_type])
        op.location = _name_loc(self.name)
        try:
            op.verify()
        except VerifyException as failure:
            raise self.error(str(failure).strip() or f"'{op_class.name}' is invalid") from None
        self.importer.block.add_op(op)
        return op.result


Converter = Callable[[OnnxNode], "SSAValue | Sequence[SSAValue | None]"]


# --------------------------------------------------------------------------------------
# Ops that map one to one: inputs pass through, attributes become properties


@dataclass(frozen=True)
class _Direct:
    """An ONNX op that is exactly one nn op; `attributes` maps each ONNX attribute to
    (property name, property constructor). ONNX defaults equal the nn ones."""

    op: type[nn.NNOp]
    attributes: dict[str, tuple[str, Callable[[Any], Attribute | None]]] = field(
        default_factory=dict
    )

    def __call__(self, node: OnnxNode) -> SSAValue:
        properties = {
            prop: make(node.attr(onnx_name)) for onnx_name, (prop, make) in self.attributes.items()
        }
        return node.emit_value(self.op, node.inputs(), properties)


def _same(*names: str, kind: Callable[[Any], Attribute | None] = _float) -> dict:
    return {name: (name, kind) for name in names}


DIRECT: dict[str, _Direct] = {
    "Relu": _Direct(nn.ReluOp),
    "LeakyRelu": _Direct(nn.LeakyReluOp, _same("alpha")),
    "Elu": _Direct(nn.EluOp, _same("alpha")),
    "Celu": _Direct(nn.CeluOp, _same("alpha")),
    "Selu": _Direct(nn.SeluOp, _same("alpha", "gamma")),
    "Sigmoid": _Direct(nn.SigmoidOp),
    "HardSigmoid": _Direct(nn.HardSigmoidOp, _same("alpha", "beta")),
    "HardSwish": _Direct(nn.HardSwishOp),
    "Tanh": _Direct(nn.TanhOp),
    "Softplus": _Direct(nn.SoftplusOp),
    "Softsign": _Direct(nn.SoftsignOp),
    "Gelu": _Direct(nn.GeluOp, _same("approximate", kind=_str)),
    "Mish": _Direct(nn.MishOp),
    "Exp": _Direct(nn.ExpOp),
    "Log": _Direct(nn.LogOp),
    "Sqrt": _Direct(nn.SqrtOp),
    "Erf": _Direct(nn.ErfOp),
    "Reciprocal": _Direct(nn.ReciprocalOp),
    "Floor": _Direct(nn.FloorOp),
    "Ceil": _Direct(nn.CeilOp),
    "Neg": _Direct(nn.NegOp),
    "Abs": _Direct(nn.AbsOp),
    "Identity": _Direct(nn.IdentityOp),
    "Sum": _Direct(nn.SumOp),
    "Max": _Direct(nn.MaxOp),
    "Min": _Direct(nn.MinOp),
    "Where": _Direct(nn.WhereOp),
    "MatMul": _Direct(nn.MatMulOp),
    # Gemm's `broadcast` (opset < 7) needs nothing: nn.gemm always broadcasts C.
    "Gemm": _Direct(
        nn.GemmOp,
        {
            "alpha": ("alpha", _float),
            "beta": ("beta", _float),
            "transA": ("trans_a", _bool),
            "transB": ("trans_b", _bool),
        },
    ),
    "LRN": _Direct(nn.LRNOp, {**_same("alpha", "beta", "bias"), "size": ("size", _int)}),
    "InstanceNormalization": _Direct(nn.InstanceNormOp, _same("epsilon")),
    "GlobalAveragePool": _Direct(nn.GlobalAveragePoolOp),
    "GlobalMaxPool": _Direct(nn.GlobalMaxPoolOp),
    "Concat": _Direct(nn.ConcatOp, _same("axis", kind=_int)),
    "Flatten": _Direct(nn.FlattenOp, _same("axis", kind=_int)),
    "DepthToSpace": _Direct(
        nn.DepthToSpaceOp, {"blocksize": ("blocksize", _int), "mode": ("mode", _str)}
    ),
    "Shape": _Direct(nn.ShapeOp, _same("start", "end", kind=_int)),
}


# --------------------------------------------------------------------------------------
# Elementwise binary ops (with the legacy broadcasting of opsets < 7)


BINARY: dict[str, type[nn.NNOp]] = {
    "Add": nn.AddOp,
    "Sub": nn.SubOp,
    "Mul": nn.MulOp,
    "Div": nn.DivOp,
    "Pow": nn.PowOp,
    "Equal": nn.EqualOp,
    "Less": nn.LessOp,
    "Greater": nn.GreaterOp,
    "LessOrEqual": nn.LessOrEqualOp,
    "GreaterOrEqual": nn.GreaterOrEqualOp,
}


def _binary(op_class: type[nn.NNOp]) -> Converter:
    def convert(node: OnnxNode) -> SSAValue:
        lhs, rhs = node.input(0), node.input(1)
        if node.opset < 7 and node.attr("broadcast", 0) and node.attr("axis") is not None:
            rhs = _align_legacy_broadcast(node, rhs, len(node.shape(0)), node.attr("axis"))
        return node.emit_value(op_class, [lhs, rhs])

    return convert


def _align_legacy_broadcast(node: OnnxNode, rhs: SSAValue, lhs_rank: int, axis: int) -> SSAValue:
    """Before opset 7, `broadcast=1, axis=k` aligns B's first axis with A's axis k;
    trailing unit axes make numpy's suffix-aligned broadcasting do the same."""
    rhs_shape = list(tensor_type(rhs).get_shape())
    axis = axis + lhs_rank if axis < 0 else axis
    trailing = lhs_rank - axis - len(rhs_shape)
    if axis < 0 or trailing < 0:
        raise node.error(
            f"cannot broadcast a rank-{len(rhs_shape)} operand from axis {axis} of rank {lhs_rank}"
        )
    return node.reshape(rhs, rhs_shape + [1] * trailing)


def _convert_prelu(node: OnnxNode) -> SSAValue:
    x, slope = node.input(0), node.input(1)
    x_shape, slope_shape = node.shape(0), node.shape(1)
    if (
        node.opset < 7
        and len(slope_shape) == 1
        and len(x_shape) > 2
        and slope_shape[0] == x_shape[1] > 1
    ):
        # PRelu-6 applies a 1-D slope per channel (axis 1).
        slope = node.reshape(slope, [slope_shape[0]] + [1] * (len(x_shape) - 2))
    return node.emit_value(nn.PReluOp, [x, slope])


# --------------------------------------------------------------------------------------
# Activations with bounds, softmax, cast, dropout


def _convert_clip(node: OnnxNode) -> SSAValue:
    if node.opset < 11:
        low, high = node.attr("min"), node.attr("max")
    else:
        low_array = node.constant(1, "'min'")
        high_array = node.constant(2, "'max'")
        low = None if low_array is None else float(np.asarray(low_array).reshape(-1)[0])
        high = None if high_array is None else float(np.asarray(high_array).reshape(-1)[0])
    return node.emit_value(nn.ClipOp, [node.input(0)], {"min": _float(low), "max": _float(high)})


def _softmax(op_class: type[nn.NNOp]) -> Converter:
    def convert(node: OnnxNode) -> SSAValue:
        return _emit_softmax(node, op_class, node.input(0), node.opset)

    return convert


def _emit_softmax(node: OnnxNode, op_class: type[nn.NNOp], x: SSAValue, opset: int) -> SSAValue:
    """Softmax or LogSoftmax of `x` with the semantics of `opset`."""
    shape = list(tensor_type(x).get_shape())
    rank = len(shape)
    if opset >= 13:
        return node.emit_value(op_class, [x], {"axis": _int(node.attr("axis", -1))})
    # Before opset 13, the input is coerced to 2-D at `axis` (default 1) and the
    # softmax runs over the second dimension.
    axis = node.attr("axis", 1)
    if not -rank <= axis <= rank:
        raise node.error(f"axis {axis} is out of range for rank {rank}")
    axis = axis + rank if axis < 0 else axis
    if axis == rank - 1:
        return node.emit_value(op_class, [x], {"axis": _int(-1)})
    flat = node.reshape(x, [math.prod(shape[:axis]), math.prod(shape[axis:])])
    normalized = node.emit_value(op_class, [flat], {"axis": _int(1)})
    return node.reshape(normalized, shape)


def _convert_cast(node: OnnxNode) -> SSAValue:
    target = _onnx_element_type(
        node.attr("to"), f"Cast node '{node.name}' target", node.importer.source
    )
    return node.emit_value(nn.CastOp, [node.input(0)], {"to": target})


def _convert_dropout(node: OnnxNode) -> list[SSAValue | None]:
    x = node.input(0)
    ratio = node.attr("ratio")
    if node.opset < 7 and not node.attr("is_test", 0) and node.output_used(1):
        raise node.error(
            "is_test=0 (training) with a used mask", hint="export the model in eval mode"
        )
    if node.opset >= 12:
        training = node.constant(2, "'training_mode'")
        if training is not None and bool(np.asarray(training).reshape(-1)[0]):
            raise node.error("training_mode is true", hint="export the model in eval mode")
        if node.has_input(1):
            ratio_array = node.importer.known_array(node.input(1))
            ratio = None if ratio_array is None else float(np.asarray(ratio_array).reshape(-1)[0])
    if ratio is not None and not 0 <= ratio < 1:
        raise node.error(
            f"ratio {ratio} is not in [0, 1)",
            hint="onnxruntime refuses such a model: a dropout ratio is a probability below 1",
        )
    output = node.emit_value(nn.DropoutOp, [x], {"ratio": _float(ratio)})
    if not node.output_used(1):
        return [output, None]
    # At inference nothing is dropped: the mask is all ones (bool from opset 10).
    x_type = x.type
    assert isinstance(x_type, TensorType)
    mask = np.ones(
        [1], dtype=np.bool_ if node.opset >= 10 else weights.dtype_of(x_type.get_element_type())
    )
    value = weights.dense_from_numpy(mask)
    mask_type = TensorType(value.get_element_type(), x_type.get_shape())
    return [output, node.emit_value(nn.ConstantOfShapeOp, [], {"value": value}, [mask_type])]


# --------------------------------------------------------------------------------------
# Convolution and pooling


def _spatial_attrs(node: OnnxNode, spatial: int) -> tuple[list[int], list[int]]:
    strides = list(node.attr("strides") or [1] * spatial)
    dilations = list(node.attr("dilations") or [1] * spatial)
    if len(strides) != spatial or len(dilations) != spatial:
        raise node.error(f"strides {strides} and dilations {dilations} must have {spatial} values")
    return strides, dilations


def _explicit_pads(
    node: OnnxNode,
    sizes: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
) -> list[int]:
    """`pads` of a Conv or pooling node, with auto_pad turned into explicit values."""
    spatial = len(kernel)
    auto_pad = node.attr("auto_pad", "NOTSET")
    if auto_pad == "NOTSET":
        return list(node.attr("pads") or [0] * (2 * spatial))
    if auto_pad == "VALID":
        return [0] * (2 * spatial)
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        raise node.error(
            f"unknown auto_pad '{auto_pad}'", hint="use NOTSET, VALID, SAME_UPPER or SAME_LOWER"
        )
    begins, ends = [], []
    for size, k, stride, dilation in zip(sizes, kernel, strides, dilations):
        output = -(-size // stride)
        total = max(0, (output - 1) * stride + (k - 1) * dilation + 1 - size)
        smaller, larger = total // 2, total - total // 2
        # SAME_UPPER puts the odd padding at the end, SAME_LOWER at the beginning.
        begin, end = (smaller, larger) if auto_pad == "SAME_UPPER" else (larger, smaller)
        begins.append(begin)
        ends.append(end)
    return begins + ends


def _check_kernel_shape(node: OnnxNode, kernel: Sequence[int]) -> None:
    declared = node.attr("kernel_shape")
    if declared is not None and list(declared) != list(kernel):
        raise node.error(f"kernel_shape {list(declared)} differs from the weight's {list(kernel)}")


def _convert_conv(node: OnnxNode) -> SSAValue:
    properties = _conv_properties(node, node.shape(0), node.shape(1))
    return node.emit_value(nn.ConvOp, node.inputs(), properties)


def _conv_properties(
    node: OnnxNode, x_shape: Sequence[int], w_shape: Sequence[int]
) -> dict[str, Attribute | None]:
    """The nn.conv properties of a Conv (or QLinearConv) node."""
    if len(x_shape) < 3 or len(w_shape) != len(x_shape):
        raise node.error(
            f"input rank {len(x_shape)} and weight rank {len(w_shape)} must be equal and >= 3"
        )
    kernel = w_shape[2:]
    _check_kernel_shape(node, kernel)
    strides, dilations = _spatial_attrs(node, len(kernel))
    pads = _explicit_pads(node, x_shape[2:], kernel, strides, dilations)
    return {
        "strides": _ints_unless(strides, 1),
        "pads": _ints_unless(pads, 0),
        "dilations": _ints_unless(dilations, 1),
        "group": _int(node.attr("group")),
    }


def _convert_conv_transpose(node: OnnxNode) -> SSAValue:
    x_shape, w_shape = node.shape(0), node.shape(1)
    if len(x_shape) < 3 or len(w_shape) != len(x_shape):
        raise node.error(
            f"input rank {len(x_shape)} and weight rank {len(w_shape)} must be equal and >= 3"
        )
    kernel = w_shape[2:]
    spatial = len(kernel)
    _check_kernel_shape(node, kernel)
    strides, dilations = _spatial_attrs(node, spatial)
    output_padding = list(node.attr("output_padding") or [0] * spatial)
    if len(output_padding) != spatial or any(
        not 0 <= padding < max(stride, dilation)
        for padding, stride, dilation in zip(output_padding, strides, dilations)
    ):
        raise node.error(
            f"output_padding {output_padding} must have {spatial} values, each at least 0 "
            f"and smaller than the stride {strides} or the dilation {dilations}",
            hint="onnxruntime refuses such a model: a larger output comes from output_shape",
        )
    auto_pad = node.attr("auto_pad", "NOTSET")
    output_shape = node.attr("output_shape")
    if output_shape is None and auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        output_shape = [size * stride for size, stride in zip(x_shape[2:], strides)]
    if output_shape is not None:
        if len(output_shape) != spatial:
            raise node.error(f"output_shape {list(output_shape)} must have {spatial} values")
        pads, output_padding = _transpose_pads(
            x_shape[2:], kernel, strides, dilations, output_padding, output_shape, auto_pad
        )
    elif auto_pad in ("NOTSET", "VALID"):
        pads = (
            list(node.attr("pads") or [0] * (2 * spatial))
            if auto_pad == "NOTSET"
            else [0] * (2 * spatial)
        )
    else:
        raise node.error(
            f"unknown auto_pad '{auto_pad}'", hint="use NOTSET, VALID, SAME_UPPER or SAME_LOWER"
        )
    properties = {
        "strides": _ints_unless(strides, 1),
        "pads": _ints_unless(pads, 0),
        "dilations": _ints_unless(dilations, 1),
        "output_padding": _ints_unless(output_padding, 0),
        "group": _int(node.attr("group")),
    }
    return node.emit_value(nn.ConvTransposeOp, node.inputs(), properties)


def _transpose_pads(
    sizes: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    output_padding: Sequence[int],
    output_shape: Sequence[int],
    auto_pad: str,
) -> tuple[list[int], list[int]]:
    """Pads and output padding that give a ConvTranspose the requested output_shape
    (the ONNX spec's formula: SAME_UPPER puts the odd padding at the end, all other
    modes at the beginning); an output larger than the natural one grows at the end."""
    begins, ends, extra = [], [], []
    for i, size in enumerate(sizes):
        natural = strides[i] * (size - 1) + output_padding[i] + (kernel[i] - 1) * dilations[i] + 1
        total = natural - output_shape[i]
        if total < 0:
            begins.append(0)
            ends.append(0)
            extra.append(output_padding[i] - total)
            continue
        smaller, larger = total // 2, total - total // 2
        begin, end = (smaller, larger) if auto_pad == "SAME_UPPER" else (larger, smaller)
        begins.append(begin)
        ends.append(end)
        extra.append(output_padding[i])
    return begins + ends, extra


def _pool(op_class: type[nn.NNOp]) -> Converter:
    def convert(node: OnnxNode) -> list[SSAValue | None]:
        x_shape = node.shape(0)
        kernel = node.attr("kernel_shape")
        if kernel is None:
            raise node.error("kernel_shape is required")
        kernel = list(kernel)
        strides, dilations = _spatial_attrs(node, len(kernel))
        pads = _explicit_pads(node, x_shape[2:], kernel, strides, dilations)
        properties: dict[str, Attribute | None] = {
            "kernel_shape": _ints(kernel),
            "strides": _ints_unless(strides, 1),
            "pads": _ints_unless(pads, 0),
            "dilations": _ints_unless(dilations, 1),
            "ceil_mode": _bool(node.attr("ceil_mode")),
        }
        if op_class is nn.AveragePoolOp:
            properties["count_include_pad"] = _bool(node.attr("count_include_pad"))
        if node.output_used(1):
            raise node.error(
                "the Indices output is not supported", hint="use MaxPool without indices"
            )
        return [node.emit_value(op_class, [node.input(0)], properties), None]

    return convert


# --------------------------------------------------------------------------------------
# Normalization


def _convert_batch_norm(node: OnnxNode) -> list[SSAValue | None]:
    if node.opset < 7 and not node.attr("is_test", 0):
        raise node.error(
            "is_test=0 runs batch normalization in training mode",
            hint="export the model in eval mode",
        )
    if node.attr("training_mode", 0):
        raise node.error("training_mode=1 is not supported", hint="export the model in eval mode")
    if any(node.output_used(position) for position in range(1, len(node.proto.output))):
        raise node.error(
            "only the normalized output is supported; the running statistics are used",
            hint="export the model in eval mode",
        )
    x_shape = node.shape(0)
    if node.opset < 9 and node.attr("spatial", 1) == 0:
        channels = x_shape[1] if len(x_shape) > 1 else None
        if any(node.shape(position) != [channels] for position in range(1, 5)):
            raise node.error(
                "spatial=0 (per-activation statistics) is not supported",
                hint="nn.batch_norm takes one statistic per channel",
            )
    operands = [node.input(position) for position in range(5)]
    return [node.emit_value(nn.BatchNormOp, operands, {"epsilon": _float(node.attr("epsilon"))})]


def _convert_layer_norm(node: OnnxNode) -> list[SSAValue | None]:
    if node.output_used(1) or node.output_used(2):
        raise node.error("the Mean and InvStdDev outputs are not supported")
    properties = {"axis": _int(node.attr("axis")), "epsilon": _float(node.attr("epsilon"))}
    return [node.emit_value(nn.LayerNormOp, node.inputs(), properties)]


def _convert_mod(node: OnnxNode) -> SSAValue:
    return node.emit_value(
        nn.ModOp, [node.input(0), node.input(1)], {"fmod": _bool(node.attr("fmod"))}
    )


def _convert_cumsum(node: OnnxNode) -> SSAValue:
    axis = node.constant_ints(1, "the axis")
    if axis is None or len(axis) != 1:
        raise node.error("the axis must be one integer")
    properties = {
        "axis": _int(axis[0]),
        "exclusive": _bool(node.attr("exclusive")),
        "reverse": _bool(node.attr("reverse")),
    }
    return node.emit_value(nn.CumSumOp, [node.input(0)], properties)


def _convert_trilu(node: OnnxNode) -> SSAValue:
    k = node.constant_ints(1, "the diagonal k")
    if k is not None and len(k) != 1:
        raise node.error("the diagonal k must be one integer")
    properties = {"upper": _bool(node.attr("upper", 1)), "k": _int(k[0] if k else None)}
    return node.emit_value(nn.TriluOp, [node.input(0)], properties)


def _convert_range(node: OnnxNode) -> SSAValue:
    """Range's length depends on its values, so they must be known: it becomes the
    constant it computes (exporters build position ids and masks with it)."""
    bounds = [
        node.constant(position, f"'{what}'")
        for position, what in enumerate(("start", "limit", "delta"))
    ]
    start, limit, delta = (np.asarray(bound) for bound in bounds)
    if any(bound.size != 1 for bound in (start, limit, delta)):
        raise node.error("start, limit and delta must be scalars")
    if delta.item() == 0:
        raise node.error("delta is 0: the range never ends")
    count = max(math.ceil((limit.item() - start.item()) / delta.item()), 0)
    if count == 0:
        raise node.error(
            f"the range from {start.item()} to {limit.item()} by {delta.item()} is empty",
            hint="irc's runtime tensors hold at least one element",
        )
    # ONNX: output[i] = start + i * delta, in the inputs' element type.
    array = start.reshape(()) + np.arange(count, dtype=start.dtype) * delta.reshape(())
    constant = nn.ConstantOp.from_array(array.astype(start.dtype), location=_name_loc(node.name))
    node.importer.block.add_op(constant)
    node.importer.known_arrays[constant.result] = array.astype(start.dtype)
    return constant.result


# --------------------------------------------------------------------------------------
# Einsum: transposes, reshapes, sums and (batched) matmuls


def _einsum_terms(node: OnnxNode, ranks: Sequence[int]) -> tuple[list[str], str]:
    """The letters of each input and of the output, an ellipsis spelt out as letters
    of its own (upper case ones no term uses)."""
    equation = str(node.attr("equation", "")).replace(" ", "")
    inputs_text, arrow, output_text = equation.partition("->")
    terms = inputs_text.split(",")
    if len(terms) != len(ranks):
        raise node.error(f"equation '{equation}' has {len(terms)} inputs, the node {len(ranks)}")
    used = set(equation)
    spare = [letter for letter in "ZYXWVUTSRQPONMLKJIHGFEDCBA" if letter not in used]
    ellipsis_rank = max(
        (rank - len(term.replace("...", "")) for term, rank in zip(terms, ranks) if "..." in term),
        default=0,
    )
    if ellipsis_rank > len(spare):
        raise node.error(f"equation '{equation}' has too many axes under '...'")
    broadcast = "".join(spare[:ellipsis_rank])

    def expand(term: str, rank: int | None) -> str:
        if "..." not in term:
            return term
        own = ellipsis_rank if rank is None else rank - len(term.replace("...", ""))
        return term.replace("...", broadcast[ellipsis_rank - own :])

    expanded = [expand(term, rank) for term, rank in zip(terms, ranks)]
    for term, rank in zip(expanded, ranks):
        if not term.isalpha() or len(term) != rank:
            raise node.error(f"equation '{equation}' does not match inputs of ranks {list(ranks)}")
        if len(set(term)) != len(term):
            raise node.error(
                f"equation '{equation}' repeats a letter within a term (a diagonal)",
                hint="irc imports einsums of transposes, sums and matrix products",
            )
    if arrow:
        output = expand(output_text, None)
    else:  # implicit mode: the letters used once, in alphabetical order, after '...'
        counts = "".join(expanded)
        output = broadcast + "".join(
            sorted(c for c in set(counts) if counts.count(c) == 1 and c not in broadcast)
        )
    return expanded, output


def _convert_einsum(node: OnnxNode) -> SSAValue:
    """An einsum as the ops it is made of: every operand first sums the axes only it
    has, then operands are taken pairwise into a matmul over the shared batch axes,
    and a transpose gives the output's order."""
    values = node.inputs()
    terms, output = _einsum_terms(node, [len(node.shape(i)) for i in range(len(values))])
    sizes: dict[str, int] = {}
    for position, term in enumerate(terms):
        for letter, size in zip(term, node.shape(position)):
            if sizes.setdefault(letter, size) != size and 1 not in (size, sizes[letter]):
                raise node.error(f"axis '{letter}' has sizes {sizes[letter]} and {size}")
            sizes[letter] = max(sizes[letter], size)
    missing = [letter for letter in output if letter not in sizes]
    if missing:
        raise node.error(f"output axis '{missing[0]}' is in no input")
    operands = list(zip(values, terms))
    value, term = operands.pop(0)
    while True:
        later = output + "".join(t for _, t in operands)
        value, term = _einsum_sum_axes(node, value, term, later)
        if not operands:
            break
        other, other_term = operands.pop(0)
        keep = output + "".join(t for _, t in operands)
        other, other_term = _einsum_sum_axes(node, other, other_term, keep + term)
        value, term = _einsum_product(node, value, term, other, other_term, keep, sizes)
    if term != output:
        perm = [term.index(letter) for letter in output]
        value = node.emit_value(nn.TransposeOp, [value], {"perm": _ints(perm)})
    return value


def _einsum_sum_axes(node: OnnxNode, value: SSAValue, term: str, keep: str) -> tuple[SSAValue, str]:
    """Sum the axes of `term` that no later term nor the output names."""
    summed = [axis for axis, letter in enumerate(term) if letter not in keep]
    if not summed:
        return value, term
    properties = {"axes": _ints(summed), "keepdims": _bool(False)}
    reduced = node.emit_value(nn.ReduceSumOp, [value], properties)
    return reduced, "".join(letter for letter in term if letter in keep)


def _einsum_product(
    node: OnnxNode,
    lhs: SSAValue,
    lhs_term: str,
    rhs: SSAValue,
    rhs_term: str,
    keep: str,
    sizes: Mapping[str, int],
) -> tuple[SSAValue, str]:
    """lhs x rhs as one matmul: [batch, rows, inner] x [batch, inner, columns]."""
    batch = [c for c in lhs_term if c in rhs_term and c in keep]
    inner = [c for c in lhs_term if c in rhs_term and c not in keep]
    rows = [c for c in lhs_term if c not in rhs_term]
    columns = [c for c in rhs_term if c not in lhs_term]

    def arranged(value: SSAValue, term: str, order: list[str], shape: list[int]) -> SSAValue:
        if list(term) != order:
            perm = [term.index(letter) for letter in order]
            value = node.emit_value(nn.TransposeOp, [value], {"perm": _ints(perm)})
        return node.reshape(value, shape)

    def size(letters: Sequence[str], term: str, value: SSAValue) -> list[int]:
        shape = dict(zip(term, tensor_type(value).get_shape()))
        return [shape[letter] for letter in letters]

    lhs_batch, rhs_batch = size(batch, lhs_term, lhs), size(batch, rhs_term, rhs)
    m, k, n = (math.prod(sizes[c] for c in group) for group in (rows, inner, columns))
    a = arranged(lhs, lhs_term, [*batch, *rows, *inner], [*lhs_batch, m, k])
    b = arranged(rhs, rhs_term, [*batch, *inner, *columns], [*rhs_batch, k, n])
    product = node.emit_value(nn.MatMulOp, [a, b])
    out_batch = list(tensor_type(product).get_shape())[: len(batch)]
    shape = [*out_batch, *(sizes[c] for c in rows), *(sizes[c] for c in columns)]
    return node.reshape(product, shape), "".join([*batch, *rows, *columns])


# --------------------------------------------------------------------------------------
# Reductions


def _reduce(op_class: type[nn.NNOp], axes_input_since: int) -> Converter:
    """A Reduce* op; its axes became an input at `axes_input_since` (13 for ReduceSum,
    18 for the others), together with noop_with_empty_axes."""

    def convert(node: OnnxNode) -> SSAValue:
        x = node.input(0)
        axes = node.attr_or_input_ints("axes", 1, axes_input_since)
        if not axes:
            axes = None  # no axes means every axis ...
            if node.opset >= axes_input_since and node.attr("noop_with_empty_axes", 0):
                return node.emit_value(nn.IdentityOp, [x])  # ... unless it means none
        properties = {"axes": _ints(axes), "keepdims": _bool(node.attr("keepdims"))}
        return node.emit_value(op_class, [x], properties)

    return convert


# --------------------------------------------------------------------------------------
# Shapes: ops whose shape-like inputs must be constants


CONSTANT_VALUE_ATTRIBUTES = (
    "value",
    "value_float",
    "value_floats",
    "value_int",
    "value_ints",
    "value_string",
    "value_strings",
    "sparse_value",
)
"""The attributes of which a Constant node holds exactly one."""


def _convert_constant(node: OnnxNode) -> SSAValue:
    source = node.importer.source
    given = [name for name in CONSTANT_VALUE_ATTRIBUTES if name in node.attributes]
    if len(given) > 1:
        raise node.error(
            f"it has {len(given)} values ({', '.join(given)}); a Constant holds exactly one",
            hint="onnxruntime would take one and ignore the others: keep the one that is meant",
        )
    if "value" in node.attributes:
        array = tensor_to_array(node.attr("value"), node.importer.model_dir, source)
    elif "value_float" in node.attributes:
        array = np.array(node.attr("value_float"), dtype=np.float32)
    elif "value_floats" in node.attributes:
        array = np.array(node.attr("value_floats"), dtype=np.float32)
    elif "value_int" in node.attributes:
        array = np.array(node.attr("value_int"), dtype=np.int64)
    elif "value_ints" in node.attributes:
        array = np.array(node.attr("value_ints"), dtype=np.int64)
    else:
        kinds = ", ".join(sorted(node.attributes)) or "none"
        raise node.error(
            f"unsupported constant kind ({kinds})", hint="irc supports numeric tensors only"
        )
    constant = nn.ConstantOp.from_array(array, location=_name_loc(node.name))
    node.importer.block.add_op(constant)
    node.importer.known_arrays[constant.result] = array
    return constant.result


def _convert_constant_of_shape(node: OnnxNode) -> SSAValue:
    shape = node.constant_ints(0, "the shape")
    assert shape is not None
    if any(d < 0 for d in shape):
        raise node.error(f"shape {shape} has negative dimensions")
    tensor = node.attr("value")
    importer = node.importer
    fill = (
        np.zeros([1], np.float32)
        if tensor is None
        else tensor_to_array(tensor, importer.model_dir, importer.source)
    )
    if np.asarray(fill).size != 1:
        raise node.error(
            f"'value' must hold one element, but it is {_type_text(np.asarray(fill))}",
            hint="onnxruntime refuses such a model: give the fill value as a 1-element tensor",
        )
    value = weights.dense_from_numpy(np.asarray(fill).reshape([1]))
    result_type = TensorType(value.get_element_type(), shape)
    return node.emit_value(nn.ConstantOfShapeOp, [], {"value": value}, [result_type])


def reshape_target(input_shape: Sequence[int], shape: Sequence[int], allowzero: bool) -> list[int]:
    """The static result shape of ONNX Reshape (0 copies the input's dimension unless
    `allowzero`, -1 is inferred); `ValueError` if impossible."""
    target = []
    for axis, dim in enumerate(shape):
        if dim == 0 and not allowzero:
            if axis >= len(input_shape):
                raise ValueError(f"0 at position {axis} has no input dimension to copy")
            dim = input_shape[axis]
        target.append(dim)
    total = math.prod(input_shape)
    unknown = [axis for axis, dim in enumerate(target) if dim == -1]
    if len(unknown) > 1 or any(dim < -1 for dim in target):
        raise ValueError("at most one dimension may be -1, and none may be smaller")
    if unknown:
        known = math.prod(dim for dim in target if dim != -1)
        if known == 0 or total % known:
            raise ValueError(f"cannot infer the -1 dimension of {total} elements")
        target[unknown[0]] = total // known
    if math.prod(target) != total:
        raise ValueError(
            f"{list(target)} does not hold the {total} elements of {list(input_shape)}"
        )
    return target


def _convert_reshape(node: OnnxNode) -> SSAValue:
    x = node.input(0)
    shape = node.constant_ints(1, "the shape")
    assert shape is not None
    try:
        target = reshape_target(node.shape(0), shape, bool(node.attr("allowzero", 0)))
    except ValueError as failure:
        raise node.error(
            f"cannot reshape {_dims_text(node.shape(0))} to {shape}: {failure}"
        ) from None
    element_type = tensor_type(x).get_element_type()
    return node.emit_value(nn.ReshapeOp, [x], {}, [TensorType(element_type, target)])


def _convert_expand(node: OnnxNode) -> SSAValue:
    x = node.input(0)
    shape = node.constant_ints(1, "the shape")
    assert shape is not None
    try:
        target = broadcast_shapes(node.shape(0), shape)
    except VerifyException:
        raise node.error(f"cannot expand {_dims_text(node.shape(0))} to {shape}") from None
    element_type = tensor_type(x).get_element_type()
    return node.emit_value(nn.ExpandOp, [x], {}, [TensorType(element_type, target)])


def _convert_tile(node: OnnxNode) -> SSAValue:
    repeats = node.constant_ints(1, "'repeats'")
    return node.emit_value(nn.TileOp, [node.input(0)], {"repeats": _ints(repeats)})


def _convert_gather(node: OnnxNode) -> SSAValue:
    axis = node.attr("axis", 0)
    gathered = node.emit_value(nn.GatherOp, node.inputs(), {"axis": _int(axis)})
    # Indices known at import time must select entries that exist: onnxruntime fails
    # on them at run time, and the NPU would read outside the tensor.
    indices = node.importer.known_array(node.input(1))
    if indices is not None and indices.size:
        shape = node.shape(0)
        size = shape[axis + len(shape) if axis < 0 else axis]
        flat = np.asarray(indices).reshape(-1)
        outside = flat[(flat < -size) | (flat >= size)]
        if outside.size:
            raise node.error(
                f"index {int(outside[0])} of '{node.proto.input[1]}' is out of range for "
                f"axis {axis} of size {size}",
                hint=f"indices along this axis must lie in [{-size}, {size - 1}]",
            )
    return gathered


def _convert_transpose(node: OnnxNode) -> SSAValue:
    perm = node.attr("perm")
    if perm is None:
        perm = list(reversed(range(len(node.shape(0)))))
    return node.emit_value(nn.TransposeOp, [node.input(0)], {"perm": _ints(perm)})


def _convert_squeeze(node: OnnxNode) -> SSAValue:
    axes = node.attr_or_input_ints("axes", 1, 13)
    if axes is None:
        axes = [axis for axis, dim in enumerate(node.shape(0)) if dim == 1]
    return node.emit_value(nn.SqueezeOp, [node.input(0)], {"axes": _ints(axes)})


def _convert_unsqueeze(node: OnnxNode) -> SSAValue:
    axes = node.attr_or_input_ints("axes", 1, 13)
    if axes is None:
        raise node.error("'axes' is required")
    return node.emit_value(nn.UnsqueezeOp, [node.input(0)], {"axes": _ints(axes)})


def _convert_slice(node: OnnxNode) -> SSAValue:
    if node.opset < 10:
        starts, ends = node.attr("starts"), node.attr("ends")
        axes, steps = node.attr("axes"), None
    else:
        starts = node.constant_ints(1, "'starts'")
        ends = node.constant_ints(2, "'ends'")
        axes = node.constant_ints(3, "'axes'")
        steps = node.constant_ints(4, "'steps'")
    if starts is None or ends is None:
        raise node.error("'starts' and 'ends' are required")
    properties = {
        "starts": _ints(starts),
        "ends": _ints(ends),
        "axes": _ints(axes),
        "steps": _ints(steps),
    }
    return node.emit_value(nn.SliceOp, [node.input(0)], properties)


def _convert_split(node: OnnxNode) -> list[SSAValue]:
    shape = node.shape(0)
    axis = node.attr("axis", 0)
    if not -len(shape) <= axis < len(shape):
        raise node.error(f"axis {axis} is out of range for rank {len(shape)}")
    size = shape[axis]
    sizes = node.attr_or_input_ints("split", 1, 13)
    count = len(node.proto.output)
    if sizes is None:
        num_outputs = node.attr("num_outputs")
        if num_outputs is not None and num_outputs != count:
            raise node.error(
                f"num_outputs is {num_outputs}, but the node has {count} "
                f"output{'s' if count != 1 else ''}",
                hint="num_outputs must equal the number of outputs",
            )
        if num_outputs is not None:  # opset 18: the last piece may be smaller
            chunk = -(-size // num_outputs)
            sizes = [chunk] * (num_outputs - 1) + [size - chunk * (num_outputs - 1)]
        elif size % count:
            raise node.error(f"dimension {size} does not split evenly into {count} outputs")
        else:
            sizes = [size // count] * count
    if len(sizes) != count:
        raise node.error(f"{len(sizes)} split sizes for {count} outputs")
    op = node.emit(nn.SplitOp, [node.input(0)], {"axis": _int(axis), "sizes": _ints(sizes)})
    return list(op.results)


def _convert_pad(node: OnnxNode) -> SSAValue:
    rank = len(node.shape(0))
    if node.opset < 11:
        pads, value = node.attr("pads"), node.attr("value")
    else:
        pads = node.constant_ints(1, "'pads'")
        constant_value = node.constant(2, "'constant_value'")
        value = None if constant_value is None else float(np.asarray(constant_value).reshape(-1)[0])
        axes = node.constant_ints(3, "'axes'")
        if axes is not None and pads is not None:
            if len(pads) != 2 * len(axes):
                raise node.error(f"{len(pads)} pads for {len(axes)} axes")
            full = [0] * (2 * rank)
            for index, axis in enumerate(axes):
                axis = axis + rank if axis < 0 else axis
                full[axis], full[rank + axis] = pads[index], pads[len(axes) + index]
            pads = full
    if pads is None:
        raise node.error("'pads' is required")
    properties = {"pads": _ints(pads), "mode": _str(node.attr("mode")), "value": _float(value)}
    return node.emit_value(nn.PadOp, [node.input(0)], properties)


# --------------------------------------------------------------------------------------
# Resize and Upsample


def _convert_resize(node: OnnxNode) -> SSAValue:
    if node.opset < 11:  # Resize-10: X, scales; Upsample's coordinates
        return _emit_legacy_resize(node, node.constant(1, "'scales'"))
    coordinate_mode = node.attr("coordinate_transformation_mode", "half_pixel")
    if coordinate_mode == "tf_crop_and_resize":
        raise node.error(
            "coordinate_transformation_mode tf_crop_and_resize is not supported",
            hint="nn.resize takes no regions of interest",
        )
    shape = node.shape(0)
    rank = len(shape)
    axes = node.attr("axes")
    axes = list(range(rank)) if axes is None else [a + rank if a < 0 else a for a in axes]
    scales = node.constant(2, "'scales'")
    sizes = node.constant_ints(3, "'sizes'")
    if sizes and scales is not None and scales.size:
        raise node.error(
            "it has both 'scales' and 'sizes'",
            hint="onnxruntime refuses such a model: give one of them, the other empty or absent",
        )
    if sizes:
        if len(sizes) != len(axes):
            raise node.error(f"{len(sizes)} sizes for {len(axes)} axes")
        full_scales, output = _scales_for_sizes(node, shape, axes, sizes)
    elif scales is not None and scales.size:
        if scales.size != len(axes):
            raise node.error(f"{scales.size} scales for {len(axes)} axes")
        full_scales = [1.0] * rank
        for axis, scale in zip(axes, np.asarray(scales, np.float32).reshape(-1)):
            full_scales[axis] = float(scale)
        output = _scaled_sizes(shape, full_scales)
    else:
        raise node.error("one of 'scales' and 'sizes' is required")
    mode = node.attr("mode", "nearest")
    if node.attr("antialias", 0) and mode != "nearest" and any(s < 1 for s in full_scales):
        raise node.error("antialiased downsampling is not supported", hint="use antialias=0")
    properties = {
        "scales": _floats(full_scales),
        "mode": _str(mode),
        "coordinate_transformation_mode": _str(coordinate_mode),
        "nearest_mode": _str(node.attr("nearest_mode")),
        "cubic_coeff_a": _float(node.attr("cubic_coeff_a")),
        "exclude_outside": _bool(node.attr("exclude_outside")),
    }
    return _emit_resize(node, properties, output)


def _scales_for_sizes(
    node: OnnxNode, shape: Sequence[int], axes: Sequence[int], sizes: Sequence[int]
) -> tuple[list[float], list[int]]:
    """Scales and output shape of a Resize given target `sizes` on `axes`, with the
    opset-18 keep_aspect_ratio_policy."""
    scales, output = [1.0] * len(shape), list(shape)
    policy = node.attr("keep_aspect_ratio_policy", "stretch")
    if policy == "stretch":
        for axis, size in zip(axes, sizes):
            scales[axis] = float(np.float32(size) / np.float32(shape[axis]))
            output[axis] = size
        return scales, output
    if policy not in ("not_larger", "not_smaller"):
        raise node.error(f"unknown keep_aspect_ratio_policy '{policy}'")
    ratios = [np.float32(size) / np.float32(shape[axis]) for axis, size in zip(axes, sizes)]
    scale = min(ratios) if policy == "not_larger" else max(ratios)
    for axis in axes:
        scales[axis] = float(scale)
        output[axis] = int(np.floor(np.float32(scale) * np.float32(shape[axis]) + np.float32(0.5)))
    return scales, output


def _scaled_sizes(shape: Sequence[int], scales: Sequence[float]) -> list[int]:
    # floor(size * scale), in float32 as onnxruntime computes it.
    return [
        int(np.floor(np.float32(size) * np.float32(scale))) for size, scale in zip(shape, scales)
    ]


def _emit_resize(
    node: OnnxNode, properties: Mapping[str, Attribute | None], output: Sequence[int]
) -> SSAValue:
    x = node.input(0)
    if any(d <= 0 for d in output):
        raise node.error(f"the output shape {list(output)} would be empty")
    element_type = tensor_type(x).get_element_type()
    return node.emit_value(nn.ResizeOp, [x], properties, [TensorType(element_type, output)])


def _emit_legacy_resize(node: OnnxNode, scales: np.ndarray | None) -> SSAValue:
    """Upsample (opsets 7-9) and Resize-10: asymmetric coordinates, nearest pixels
    rounded down when upsampling and up when downsampling (as onnxruntime does)."""
    shape = node.shape(0)
    if scales is None or np.asarray(scales).size != len(shape):
        raise node.error(f"'scales' must hold {len(shape)} values")
    scale_list = [float(s) for s in np.asarray(scales, np.float32).reshape(-1)]
    mode = node.attr("mode", "nearest")
    mode = {"bilinear": "linear", "trilinear": "linear"}.get(mode, mode)
    nearest_mode = None
    if mode == "nearest":
        shrinking = any(s < 1 for s in scale_list)
        if shrinking and any(s > 1 for s in scale_list):
            raise node.error(
                "nearest resizing that enlarges some axes and shrinks others is not supported",
                hint="split it into two resizes",
            )
        nearest_mode = "ceil" if shrinking else "floor"
    properties = {
        "scales": _floats(scale_list),
        "mode": _str(mode),
        "coordinate_transformation_mode": _str("asymmetric"),
        "nearest_mode": _str(nearest_mode),
    }
    return _emit_resize(node, properties, _scaled_sizes(shape, scale_list))


def _convert_upsample(node: OnnxNode) -> SSAValue:
    if node.opset < 9:
        scales = node.attr("scales")
        return _emit_legacy_resize(node, None if scales is None else np.array(scales, np.float32))
    return _emit_legacy_resize(node, node.constant(1, "'scales'"))


# --------------------------------------------------------------------------------------
# Quantized models: QuantizeLinear / DequantizeLinear (QDQ) and the QLinear ops
#
# Both formats of onnxruntime's quantize_static import into irc's QDQ form. A quantized
# tensor is a value of a `!quant.uniform` type (storage, scale and zero point as the
# model gives them); DequantizeLinear is a `quant.dcast` of it (after a `quant.scast`
# where the integers come from an initializer or a graph input) and QuantizeLinear a
# `quant.qcast`. A QLinear op (QLinearConv, QLinearMatMul, and onnxruntime's QGemm,
# QLinearAdd, ... of the com.microsoft domain) becomes its float op between the dcasts
# of its inputs and the qcast of its result: the same patterns as the `quantize` pass
# writes, so that `lower-to-qnn` lowers imported and irc-quantized models alike.


STORAGE_DTYPES: dict[np.dtype, tuple[int, bool]] = {
    np.dtype(np.int8): (8, True),
    np.dtype(np.uint8): (8, False),
    np.dtype(np.int16): (16, True),
    np.dtype(np.uint16): (16, False),
    np.dtype(np.int32): (32, True),
}
"""The integer types a quantized tensor can be stored in: (bits, signed)."""

NARROW_INT8 = (-127, 127)
"""The storage range of symmetric int8 weights (irc's and onnxruntime's)."""


def _storage_dtype(value: SSAValue) -> np.dtype:
    """The integer type `value`'s elements are stored in (quantized or plain)."""
    value_type = tensor_type(value)
    element = quant.quantized_element(value_type)
    return weights.dtype_of(element.storage_type if element else value_type.get_element_type())


def _zero_point_dtype(node: OnnxNode, position: int, default: np.dtype) -> np.dtype:
    """The type of a zero point input, which says how a result is stored; `default`
    when the input is absent."""
    zero_point = node.constant(position, "the zero point")
    return default if zero_point is None else np.asarray(zero_point).dtype


def _quantized_type(
    node: OnnxNode,
    scale_position: int,
    zero_point_position: int,
    shape: Sequence[int],
    storage: np.dtype,
    axis: int | None = None,
    what: str = "the input",
) -> quant.UniformQuantizedType:
    """The quantized type that a node's scale and zero point inputs give a tensor of
    `shape` stored as `storage`. A scale of one value is per tensor; a 1-D scale of
    several values is per axis `axis` (the op allows no such scale if `axis` is None).
    An absent zero point is 0."""
    scale = node.constant(scale_position, f"{what}'s scale")
    if scale is None:
        raise node.error(f"{what}'s scale (input #{scale_position}) is missing")
    scale = np.asarray(scale)
    zero_point = node.constant(zero_point_position, f"{what}'s zero point")
    if scale.dtype != np.float32:
        raise node.error(
            f"{what}'s scale is {scale.dtype}; irc's quantized types express float32",
            hint="quantize the model with float32 scales",
        )
    if storage not in STORAGE_DTYPES:
        raise node.error(
            f"{what} is stored as {storage}, which irc cannot quantize to",
            hint="irc's quantized types are stored as int8, uint8, int16, uint16 or int32",
        )
    if zero_point is not None and np.asarray(zero_point).dtype != storage:
        raise node.error(
            f"{what}'s zero point is {np.asarray(zero_point).dtype}, but the tensor is "
            f"stored as {storage}"
        )
    scales = scale.reshape(-1)
    zero_points = (
        np.zeros(scales.shape, np.int64)
        if zero_point is None
        else np.asarray(zero_point).reshape(-1).astype(np.int64)
    )
    if zero_points.size != scales.size:
        raise node.error(f"{what} has {scales.size} scales but {zero_points.size} zero points")
    if not np.all(np.isfinite(scales) & (scales > 0)):
        raise node.error(f"{what}'s scales must be positive and finite")
    quantized_axis = None
    if scales.size != 1:
        rank = len(shape)
        if axis is None or scale.ndim != 1:
            allowed = "one scale" if axis is None else "a scalar or 1-D scale"
            raise node.error(f"{what}'s scale has shape {list(scale.shape)}; {allowed} expected")
        if not -rank <= axis < rank:
            raise node.error(f"{what}'s quantization axis {axis} is out of range for rank {rank}")
        quantized_axis = axis + rank if axis < 0 else axis
        if shape[quantized_axis] != scales.size:
            raise node.error(
                f"{what} has {shape[quantized_axis]} slices along axis {quantized_axis} but "
                f"{scales.size} scales"
            )
    bits, signed = STORAGE_DTYPES[storage]
    try:
        return quant.UniformQuantizedType.make(
            [float(s) for s in scales],
            [int(z) for z in zero_points],
            bits=bits,
            signed=signed,
            axis=quantized_axis,
        )
    except VerifyException as failure:
        raise node.error(f"{what}'s quantization parameters are invalid: {failure}") from None


def _narrowed(element: quant.UniformQuantizedType, data: np.ndarray) -> quant.UniformQuantizedType:
    """`element` with int8's symmetric range [-127, 127] when it describes `data` so:
    the weights of onnxruntime's symmetric quantization are typed as irc's."""
    bits, signed = element.storage_bits.data, bool(element.signed.data)
    if (bits, signed) != (8, True) or any(element.zero_point_values) or data.size == 0:
        return element
    if int(data.min()) < NARROW_INT8[0]:
        return element
    return quant.UniformQuantizedType.make(
        element.scale_values,
        element.zero_point_values,
        storage_range=NARROW_INT8,
        axis=element.quantized_axis,
    )


def _reinterpret(node: OnnxNode, value: SSAValue, element: quant.UniformQuantizedType) -> SSAValue:
    """`value`'s integers as a tensor of `element` (`quant.scast`s where needed)."""
    current = quant.quantized_element(value.type)
    if current == element:
        return value
    if current is not None:
        value = node.emit_cast(quant.StorageCastOp, value, current.storage_type)
    return node.emit_cast(quant.StorageCastOp, value, element)


def _quantized_input(
    node: OnnxNode,
    position: int,
    scale_position: int,
    zero_point_position: int,
    axis: int | None = None,
    what: str = "the input",
) -> SSAValue:
    """Input `position` as a quantized tensor, typed by the scale and zero point inputs."""
    value = node.input(position)
    element = _quantized_type(
        node,
        scale_position,
        zero_point_position,
        tensor_type(value).get_shape(),
        _storage_dtype(value),
        axis,
        what,
    )
    if quant.quantized_element(value.type) is None:
        data = node.importer.known_array(value)
        if data is not None:
            element = _narrowed(element, np.asarray(data))
    return _reinterpret(node, value, element)


def _dequantize(node: OnnxNode, value: SSAValue) -> SSAValue:
    element = quant.quantized_element(value.type)
    assert element is not None
    return node.emit_cast(quant.DequantizeCastOp, value, element.expressed_type)


def _dequantized_input(
    node: OnnxNode,
    position: int,
    scale_position: int,
    zero_point_position: int,
    axis: int | None = None,
    what: str = "the input",
) -> SSAValue:
    """Input `position` dequantized: the float tensor that a QLinear op computes on."""
    quantized = _quantized_input(node, position, scale_position, zero_point_position, axis, what)
    return _dequantize(node, quantized)


def _quantized_output(
    node: OnnxNode,
    value: SSAValue,
    scale_position: int,
    zero_point_position: int,
    default_storage: np.dtype,
) -> SSAValue:
    """The float result `value` quantized by the node's output scale and zero point."""
    storage = _zero_point_dtype(node, zero_point_position, default_storage)
    shape = tensor_type(value).get_shape()
    element = _quantized_type(
        node, scale_position, zero_point_position, shape, storage, None, "the output"
    )
    return node.emit_cast(quant.QuantizeCastOp, value, element)


def _scales(value: SSAValue) -> np.ndarray:
    element = quant.quantized_element(value.type)
    assert element is not None
    return np.asarray(element.scale_values, np.float32)


def _dequantized_bias(
    node: OnnxNode, position: int, scales: np.ndarray, channel_axis: int
) -> SSAValue:
    """An int32 bias input of scale `scales` (per channel along `channel_axis` if there
    are several) and zero point 0, dequantized."""
    bias = node.input(position)
    if _storage_dtype(bias) != np.int32:
        raise node.error(f"the bias (input #{position}) must be int32, not {_storage_dtype(bias)}")
    shape = tensor_type(bias).get_shape()
    axis = None
    if scales.size > 1:
        axis = channel_axis + len(shape) if channel_axis < 0 else channel_axis
        if not 0 <= axis < len(shape) or shape[axis] != scales.size:
            raise node.error(
                f"the bias of shape {_dims_text(shape)} does not have one value per channel "
                f"of the {scales.size} scales"
            )
    if not np.all(scales > 0):
        raise node.error("the bias scale (the product of the input scales) underflows to 0")
    element = quant.UniformQuantizedType.make([float(s) for s in scales], 0, bits=32, axis=axis)
    return _dequantize(node, _reinterpret(node, bias, element))


def _no_blocks(node: OnnxNode) -> None:
    if node.attr("block_size", 0):
        raise node.error(
            "blocked quantization (block_size > 0) is not supported",
            hint="irc quantizes per tensor or per axis",
        )


def _convert_quantize_linear(node: OnnxNode) -> SSAValue:
    _no_blocks(node)
    x = node.input(0)
    default = np.dtype(np.uint8)  # ONNX's type without a zero point ...
    output_dtype = node.attr("output_dtype", 0)
    if output_dtype:  # ... unless opset 21's output_dtype says otherwise
        default = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(output_dtype))
    storage = _zero_point_dtype(node, 2, default)
    element = _quantized_type(
        node, 1, 2, node.shape(0), storage, node.attr("axis", 1), "the output"
    )
    if tensor_type(x).get_element_type() != element.expressed_type:
        raise node.error(
            f"the input is {tensor_type(x).get_element_type()}; irc quantizes float32 tensors"
        )
    return node.emit_cast(quant.QuantizeCastOp, x, element)


def _convert_dequantize_linear(node: OnnxNode) -> SSAValue:
    _no_blocks(node)
    return _dequantized_input(node, 0, 1, 2, node.attr("axis", 1))


def _convert_qlinear_conv(node: OnnxNode) -> SSAValue:
    # x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B
    x = _quantized_input(node, 0, 1, 2, what="x")
    w = _quantized_input(node, 3, 4, 5, axis=0, what="w")
    operands = [_dequantize(node, x), _dequantize(node, w)]
    if node.has_input(8):  # int32, of scale x_scale * w_scale and zero point 0
        operands.append(_dequantized_bias(node, 8, _scales(x) * _scales(w), 0))
    x_shape = tensor_type(x).get_shape()
    properties = _conv_properties(node, x_shape, tensor_type(w).get_shape())
    y = node.emit_value(nn.ConvOp, operands, properties)
    return _quantized_output(node, y, 6, 7, _storage_dtype(x))


def _convert_qlinear_matmul(node: OnnxNode) -> SSAValue:
    # a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point;
    # a may be quantized per row, b per column.
    a = _quantized_input(node, 0, 1, 2, axis=-2, what="a")
    b = _quantized_input(node, 3, 4, 5, axis=-1, what="b")
    y = node.emit_value(nn.MatMulOp, [_dequantize(node, a), _dequantize(node, b)])
    return _quantized_output(node, y, 6, 7, _storage_dtype(a))


def _convert_qgemm(node: OnnxNode) -> SSAValue:
    # com.microsoft QGemm: A, a_scale, a_zero_point, B, b_scale, b_zero_point, C,
    # y_scale, y_zero_point. B may be quantized per column (N); C is int32 of scale
    # alpha * a_scale * b_scale; without y_scale the result stays float.
    trans_a, trans_b = bool(node.attr("transA", 0)), bool(node.attr("transB", 0))
    alpha = float(node.attr("alpha", 1.0))
    a = _quantized_input(node, 0, 1, 2, what="A")
    b = _quantized_input(node, 3, 4, 5, axis=0 if trans_b else 1, what="B")
    operands = [_dequantize(node, a), _dequantize(node, b)]
    if node.has_input(6):
        scales = np.float32(alpha) * _scales(a) * _scales(b)
        operands.append(_dequantized_bias(node, 6, scales, -1))
    properties = {
        "alpha": _float(alpha),
        "trans_a": _bool(trans_a),
        "trans_b": _bool(trans_b),
    }
    y = node.emit_value(nn.GemmOp, operands, properties)
    if not node.has_input(7):
        return y
    return _quantized_output(node, y, 7, 8, _storage_dtype(a))


def _qlinear_binary(op_class: type[nn.NNOp]) -> Converter:
    """QLinearAdd, QLinearMul: A, A_scale, A_zero_point, B, B_scale, B_zero_point,
    C_scale, C_zero_point."""

    def convert(node: OnnxNode) -> SSAValue:
        a = _quantized_input(node, 0, 1, 2, what="A")
        b = _dequantized_input(node, 3, 4, 5, what="B")
        y = node.emit_value(op_class, [_dequantize(node, a), b])
        return _quantized_output(node, y, 6, 7, _storage_dtype(a))

    return convert


def _qlinear_unary(emit: Callable[[OnnxNode, SSAValue], SSAValue]) -> Converter:
    """QLinearSigmoid, QLinearSoftmax, the QLinear pools ...: X, X_scale, X_zero_point,
    Y_scale, Y_zero_point; `emit` imports the float op on the dequantized X."""

    def convert(node: OnnxNode) -> SSAValue:
        if node.attr("channels_last", 0):
            raise node.error(
                "channels_last=1 is not supported", hint="import the NCHW form of the model"
            )
        x = _quantized_input(node, 0, 1, 2, what="X")
        y = emit(node, _dequantize(node, x))
        return _quantized_output(node, y, 3, 4, _storage_dtype(x))

    return convert


def _emit_qlinear_average_pool(node: OnnxNode, x: SSAValue) -> SSAValue:
    node.substitutes[0] = x  # AveragePool's attributes, on the dequantized input
    produced = _pool(nn.AveragePoolOp)(node)
    average = produced if isinstance(produced, SSAValue) else produced[0]
    assert average is not None
    return average


def _convert_qlinear_concat(node: OnnxNode) -> SSAValue:
    # Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) for each input.
    count, extra = divmod(len(node.proto.input) - 2, 3)
    if count < 1 or extra:
        raise node.error("expected Y_scale, Y_zero_point and (tensor, scale, zero point) triples")
    quantized = [
        _quantized_input(node, 2 + 3 * i, 3 + 3 * i, 4 + 3 * i, what=f"input {i}")
        for i in range(count)
    ]
    inputs = [_dequantize(node, value) for value in quantized]
    y = node.emit_value(nn.ConcatOp, inputs, {"axis": _int(node.attr("axis"))})
    return _quantized_output(node, y, 0, 1, _storage_dtype(quantized[0]))


SHARED_SCALE_OPS = frozenset(
    {
        "MaxPool",
        "GlobalMaxPool",
        "ReduceMax",
        "ReduceMin",
        "Reshape",
        "Flatten",
        "Transpose",
        "Squeeze",
        "Unsqueeze",
        "Identity",
        "Dropout",
        "Slice",
        "Split",
        "Gather",
        "Concat",
        "Expand",
        "Tile",
        "DepthToSpace",
        "Resize",
        "Shape",
    }
)
"""Ops that only move or select values, which onnxruntime's QOperator models apply to
quantized tensors directly (MaxPool, Reshape, ...): on the dequantized values with
the result quantized again with the same type, they compute the same integers."""


def _convert_on_dequantized(node: OnnxNode, converter: Converter) -> Sequence[SSAValue | None]:
    """Import a float op whose inputs include quantized tensors (only ops of
    SHARED_SCALE_OPS, whose integers are a selection of their inputs' integers)."""
    elements = {
        position: quant.quantized_element(node.input(position).type)
        for position in range(len(node.proto.input))
        if node.has_input(position)
    }
    quantized = {position: element for position, element in elements.items() if element}
    first = min(quantized)
    if node.op_type not in SHARED_SCALE_OPS or (
        node.op_type == "Resize" and node.attr("mode", "nearest") != "nearest"
    ):
        raise node.error(
            f"input #{first} '{node.proto.input[first]}' is a quantized tensor, which irc "
            f"imports into {node.op_type} only through a DequantizeLinear",
            hint="quantized tensors feed DequantizeLinear, the QLinear ops, and ops that "
            "only move values (MaxPool, Reshape, Transpose, Concat, ...)",
        )
    element = quantized[first]
    if any(other != element for other in quantized.values()) or element.is_per_axis:
        raise node.error(
            "its quantized inputs must share one per-tensor scale and zero point",
            hint="dequantize them first (DequantizeLinear)",
        )
    for position in quantized:
        node.substitutes[position] = _dequantize(node, node.input(position))
    produced = converter(node)
    results = [produced] if isinstance(produced, SSAValue) else list(produced)
    return [
        node.emit_cast(quant.QuantizeCastOp, result, element)
        if result is not None and tensor_type(result).get_element_type() == element.expressed_type
        else result
        for result in results
    ]


# --------------------------------------------------------------------------------------
# The registry


CONVERTERS: dict[str, Converter] = {
    **DIRECT,
    **{op_type: _binary(op_class) for op_type, op_class in BINARY.items()},
    "PRelu": _convert_prelu,
    "Clip": _convert_clip,
    "Softmax": _softmax(nn.SoftmaxOp),
    "LogSoftmax": _softmax(nn.LogSoftmaxOp),
    "Cast": _convert_cast,
    "Dropout": _convert_dropout,
    "Conv": _convert_conv,
    "ConvTranspose": _convert_conv_transpose,
    "MaxPool": _pool(nn.MaxPoolOp),
    "AveragePool": _pool(nn.AveragePoolOp),
    "BatchNormalization": _convert_batch_norm,
    "LayerNormalization": _convert_layer_norm,
    "Mod": _convert_mod,
    "CumSum": _convert_cumsum,
    "Trilu": _convert_trilu,
    "Range": _convert_range,
    "Einsum": _convert_einsum,
    "ReduceMean": _reduce(nn.ReduceMeanOp, 18),
    "ReduceSum": _reduce(nn.ReduceSumOp, 13),
    "ReduceMax": _reduce(nn.ReduceMaxOp, 18),
    "ReduceMin": _reduce(nn.ReduceMinOp, 18),
    "Constant": _convert_constant,
    "ConstantOfShape": _convert_constant_of_shape,
    "Reshape": _convert_reshape,
    "Expand": _convert_expand,
    "Tile": _convert_tile,
    "Transpose": _convert_transpose,
    "Gather": _convert_gather,
    "Squeeze": _convert_squeeze,
    "Unsqueeze": _convert_unsqueeze,
    "Slice": _convert_slice,
    "Split": _convert_split,
    "Pad": _convert_pad,
    "Resize": _convert_resize,
    "Upsample": _convert_upsample,
    "QuantizeLinear": _convert_quantize_linear,
    "DequantizeLinear": _convert_dequantize_linear,
    "QLinearConv": _convert_qlinear_conv,
    "QLinearMatMul": _convert_qlinear_matmul,
}
"""Every supported ONNX op type (default domain) and the function that imports it."""

CONTRIB_DOMAIN = "com.microsoft"
"""onnxruntime's domain, where quantize_static's QOperator format finds its ops."""

CONTRIB_CONVERTERS: dict[str, Converter] = {
    "QuantizeLinear": _convert_quantize_linear,
    "DequantizeLinear": _convert_dequantize_linear,
    "QGemm": _convert_qgemm,
    "QLinearAdd": _qlinear_binary(nn.AddOp),
    "QLinearMul": _qlinear_binary(nn.MulOp),
    "QLinearConcat": _convert_qlinear_concat,
    "QLinearAveragePool": _qlinear_unary(_emit_qlinear_average_pool),
    "QLinearGlobalAveragePool": _qlinear_unary(
        lambda node, x: node.emit_value(nn.GlobalAveragePoolOp, [x])
    ),
    "QLinearSoftmax": _qlinear_unary(
        lambda node, x: _emit_softmax(node, nn.SoftmaxOp, x, node.attr("opset", node.opset))
    ),
    "QLinearSigmoid": _qlinear_unary(lambda node, x: node.emit_value(nn.SigmoidOp, [x])),
    "QLinearLeakyRelu": _qlinear_unary(
        lambda node, x: node.emit_value(
            nn.LeakyReluOp, [x], {"alpha": _float(node.attr("alpha", 0.01))}
        )
    ),
}
"""The ops of onnxruntime's com.microsoft domain that the importer supports."""

QUANTIZED_OPS = frozenset({"QuantizeLinear", "DequantizeLinear", "QLinearConv", "QLinearMatMul"})
"""Default-domain ops whose converters take quantized tensors (every contrib op does)."""


def _converter_of(node: onnx.NodeProto) -> Converter | None:
    if node.domain in DEFAULT_DOMAINS:
        return CONVERTERS.get(node.op_type)
    if node.domain == CONTRIB_DOMAIN:
        return CONTRIB_CONVERTERS.get(node.op_type)
    return None


def _takes_quantized_inputs(node: onnx.NodeProto) -> bool:
    return node.domain == CONTRIB_DOMAIN or node.op_type in QUANTIZED_OPS


def supported_ops() -> list[str]:
    """The ONNX op types the importer supports, sorted: the default domain's, then
    onnxruntime's as `com.microsoft.<op>`."""
    return sorted(CONVERTERS) + sorted(f"{CONTRIB_DOMAIN}.{op}" for op in CONTRIB_CONVERTERS)
