"""The model package: what `irc-compile` writes and `irc.runtime.Session` loads.

A package is a directory (docs/package.md):

- `manifest.json`: what the package holds and how it was made: the model's inputs
  and outputs (names, shapes, dtypes, and the quantization parameters of the tensors
  the NPU sees), the target, the compiler's version, the pipeline and its options,
  the memory the program needs, the size and SHA-256 of every other file, and the
  SHA-256 of its own content;
- `program.bin`: the command stream with its host functions, in irc bytecode
  (irc/codegen/bytecode.py);
- `weights.bin`: the weights blob: every dense constant, 64-byte aligned;
- `target.toml`: the target the program was compiled for, in the target file format,
  so that the package runs without the preset or file it was compiled with.

The same module, target and options always give byte-identical files. Reading a
package (`read_package`) trusts nothing: the manifest's checksum, every field against
its schema, every file against its size and SHA-256, and the manifest's inputs,
outputs, memory and stream against what the decoded program says of itself.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, SSAValue
from xdsl.traits import SymbolTable

from irc.codegen import bytecode
from irc.diagnostics import IrcError, Location, error
from irc.dialects import npu
from irc.dialects.quant import UniformQuantizedType
from irc.fileio import StagedOutputs
from irc.ir import weights
from irc.targets import Target

FORMAT = "irc-package"
VERSION = 2
"""Version 2 added `manifest_sha256`."""
MANIFEST, PROGRAM, WEIGHTS, TARGET = "manifest.json", "program.bin", "weights.bin", "target.toml"
ENTRY = "main"
CHECKSUM = "manifest_sha256"
"""The manifest's key for the SHA-256 of its own canonical content (`manifest_checksum`)."""


@dataclass
class Package:
    """A package read back: its manifest, its module (decoded) and its target."""

    path: Path
    manifest: dict[str, Any]
    module: ModuleOp
    target: Target

    @property
    def inputs(self) -> list[dict[str, Any]]:
        """The model's inputs as the manifest describes them, in argument order."""
        return self.manifest["inputs"]

    @property
    def outputs(self) -> list[dict[str, Any]]:
        """The model's outputs, in result order."""
        return self.manifest["outputs"]


# --------------------------------------------------------------------------------------
# Writing


def entry_function(module: ModuleOp, entry: str = ENTRY) -> FuncOp:
    """The module's entry function; an `IrcError` if it has none."""
    function = SymbolTable.lookup_symbol(module, entry)
    if not isinstance(function, FuncOp):
        raise error(f"the module has no function @{entry}", module)
    return function


def build_manifest(
    module: ModuleOp,
    target: Target,
    files: Mapping[str, bytes],
    compile_info: Mapping[str, Any],
) -> dict[str, Any]:
    """The manifest of a package holding `files` (name -> content) for `module`.

    `compile_info` adds what only the compiler knows: `model` (name, source file),
    `pipeline` (the passes, as text) and `options` (the driver's options).
    """
    from irc import __version__

    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "compiler": {"name": "irc", "version": __version__},
        "model": dict(compile_info.get("model", {})),
        "pipeline": compile_info.get("pipeline", ""),
        "options": dict(compile_info.get("options", {})),
        **program_view(module, target),
        "files": {
            name: {"bytes": len(content), "sha256": hashlib.sha256(content).hexdigest()}
            for name, content in sorted(files.items())
        },
    }
    manifest[CHECKSUM] = manifest_checksum(manifest)
    return manifest


def program_view(module: ModuleOp, target: Target) -> dict[str, Any]:
    """What the program says of itself, as the manifest records it: `target`, `entry`,
    `inputs`, `outputs`, `memory` and `stream`."""
    function = entry_function(module)
    inputs, outputs = _boundary(module, function)
    attributes = function.attributes

    def number(name: str) -> int:
        value = attributes.get(name)
        return int(value.value.data) if value is not None else 0  # type: ignore[attr-defined]

    block = function.body.block
    commands = sum(isinstance(op, npu.Command) for op in block.ops)
    host_calls = sum(isinstance(op, npu.HostCallOp) for op in block.ops)
    return {
        "target": {"name": target.name, "file": TARGET},
        "entry": ENTRY,
        "inputs": inputs,
        "outputs": outputs,
        "memory": {
            **{f"{name}_bytes": size for name, size in sorted(npu.memory_sizes(function).items())},
            "weights_memory": npu.weights_region(function)[0],
            "weights_bytes": number(npu.WEIGHTS_BYTES_ATTR),
            "sram_alignment": number("npu.sram_alignment"),
        },
        "stream": {"commands": commands, "host_calls": host_calls},
    }


def manifest_checksum(manifest: Mapping[str, Any]) -> str:
    """The SHA-256 of the manifest without its `manifest_sha256`, as canonical JSON
    (keys sorted, no spaces): the same for the manifest written and the one read back,
    since JSON numbers round-trip exactly."""
    content = {key: value for key, value in manifest.items() if key != CHECKSUM}
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def package_files(
    module: ModuleOp, target: Target, compile_info: Mapping[str, Any]
) -> dict[str, bytes]:
    """Every file of the package of `module` (a command stream), by name."""
    from irc.targets.render import target_toml

    entry = entry_function(module)
    if not npu.is_stream(entry):
        raise error(
            "the entry function is not a command stream: a package holds npu commands",
            entry,
            hint="lower the module to the npu dialect first (lower-to-npu)",
        )
    program, blob = bytecode.encode(module)
    files = {PROGRAM: program, WEIGHTS: blob, TARGET: target_toml(target).encode()}
    manifest = build_manifest(module, target, files, compile_info)
    files[MANIFEST] = (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()
    return files


def write_package(
    module: ModuleOp,
    target: Target,
    directory: Path,
    compile_info: Mapping[str, Any],
    staged: StagedOutputs,
) -> dict[str, bytes]:
    """Stage the package's files into `directory`; the files, by name."""
    files = package_files(module, target, compile_info)
    stage_files(files, directory, staged)
    return files


def stage_files(files: Mapping[str, bytes], directory: Path, staged: StagedOutputs) -> None:
    """Stage `files` (name -> content) into `directory`."""
    for name, content in files.items():
        staged.stage(directory / name, functools.partial(_write, content))


def _write(content: bytes, file: BinaryIO) -> None:
    file.write(content)


def _quantization(element: Attribute) -> dict[str, Any] | None:
    if not isinstance(element, UniformQuantizedType):
        return None
    scales = [float(scale.data) for scale in element.scales.data]
    zero_points = [int(point.data) for point in element.zero_points.data]
    per_axis = element.is_per_axis
    return {
        "storage": f"{'i' if element.signed.data else 'u'}{element.storage_bits.data}",
        "scale": scales if per_axis else scales[0],
        "zero_point": zero_points if per_axis else zero_points[0],
        "axis": element.quantized_axis,
    }


def _tensor(name: str, value_type: Attribute, npu_type: Attribute | None) -> dict[str, Any]:
    assert isinstance(value_type, TensorType)
    element = value_type.get_element_type()
    entry: dict[str, Any] = {
        "name": name,
        "shape": list(value_type.get_shape()),
        "dtype": weights.dtype_of(element).name,
        "quantization": _quantization(element),
    }
    if npu_type is not None and entry["quantization"] is None:
        assert isinstance(npu_type, TensorType)
        # The host converts the tensor: the NPU holds it with these parameters.
        entry["npu_quantization"] = _quantization(npu_type.get_element_type())
    return entry


def _boundary(module: ModuleOp, function: FuncOp) -> tuple[list[dict], list[dict]]:
    """The entry's inputs and outputs, with what the NPU sees of each when a host
    function converts it (the input's quantization, the output's dequantization)."""
    block = function.body.block
    placed: dict[SSAValue, SSAValue] = {}  # view -> argument placed into it
    read: dict[SSAValue, SSAValue] = {}  # npu.read result -> view
    npu_input: dict[SSAValue, Attribute] = {}
    npu_output: dict[SSAValue, Attribute] = {}
    for op in block.ops:
        if isinstance(op, npu.PlaceOp) and op.operands[0] in block.args:
            placed[op.operands[1]] = op.operands[0]
        elif isinstance(op, npu.ReadOp):
            read[op.results[0]] = op.operands[0]
        elif isinstance(op, npu.HostCallOp):
            callee = SymbolTable.lookup_symbol(module, op.callee)
            if not isinstance(callee, FuncOp):
                continue
            host_inputs = list(callee.function_type.inputs.data)
            host_outputs = list(callee.function_type.outputs.data)
            # A one-to-one host function converts what it reads into what it writes.
            if len(host_inputs) != 1 or len(host_outputs) != 1:
                continue
            source, dest = op.operands
            if source in placed:
                npu_input[placed[source]] = host_outputs[0]
            npu_output[dest] = host_inputs[0]
    names_in = _names(function, "arg_attrs", len(block.args), "input")
    inputs = [
        _tensor(name, argument.type, npu_input.get(argument))
        for name, argument in zip(names_in, block.args)
    ]
    terminator = block.last_op
    assert terminator is not None
    results = list(terminator.operands)
    names_out = _names(function, "res_attrs", len(results), "output")
    outputs = [
        _tensor(name, value.type, npu_output.get(read.get(value)))  # type: ignore[arg-type]
        for name, value in zip(names_out, results)
    ]
    return inputs, outputs


def _names(function: FuncOp, which: str, count: int, prefix: str) -> list[str]:
    dictionaries = getattr(function, which)
    names = []
    for index in range(count):
        name = None
        if dictionaries is not None:
            entry = dictionaries.data[index].data.get("irc.name")
            if isinstance(entry, StringAttr):
                name = entry.data
        names.append(name or f"{prefix}_{index}")
    return names


# --------------------------------------------------------------------------------------
# Reading


def _package_error(path: Path, message: str, hint: str | None = None) -> IrcError:
    return error(message, Location(file=str(path)), hint)


CORRUPT_HINT = "the package was changed or damaged after irc-compile wrote it: compile it again"


def is_package(path: Path) -> bool:
    """Whether `path` is a directory with an irc package's manifest (of any version)."""
    try:
        manifest = json.loads((path / MANIFEST).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(manifest, dict) and manifest.get("format") == FORMAT


def read_manifest(path: Path) -> dict[str, Any]:
    """The manifest of the package at `path`, checked for format and version, against
    its own checksum, and field by field against its schema."""
    manifest_path = path / MANIFEST
    if not path.is_dir():
        raise _package_error(
            path,
            f"'{path}' is not a package directory",
            "give the directory irc-compile -o wrote",
        )
    if not manifest_path.is_file():
        raise _package_error(
            manifest_path,
            f"'{path}' has no {MANIFEST}: it is not an irc package",
            "give the directory irc-compile -o wrote",
        )
    try:
        manifest = json.loads(manifest_path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as failure:
        raise _package_error(
            manifest_path, f"cannot read the manifest: {failure}", CORRUPT_HINT
        ) from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise _package_error(manifest_path, f"not an {FORMAT} manifest", CORRUPT_HINT)
    if manifest.get("version") != VERSION:
        raise _package_error(
            manifest_path,
            f"package format version {manifest.get('version')}; this irc reads version {VERSION}",
            "compile the model again with this irc",
        )
    if manifest.get(CHECKSUM) != manifest_checksum(manifest):
        raise _package_error(
            manifest_path, f"{MANIFEST} does not match its own SHA-256 ({CHECKSUM})", CORRUPT_HINT
        )
    _ManifestSchema(manifest_path).check(manifest)
    return manifest


DTYPES = (
    *("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"),
    *("float16", "float32", "float64"),
)
"""The dtypes a package's inputs and outputs may have (irc.ir.weights.dtype_of)."""

_SHA256 = re.compile(r"[0-9a-f]{64}")
_TOP_LEVEL = (
    *("format", "version", CHECKSUM, "compiler", "model", "pipeline", "options"),
    *("target", "entry", "inputs", "outputs", "memory", "stream", "files"),
)
"""Every key of a manifest, all required."""


class _ManifestSchema:
    """The checks of every field of a manifest; each problem is an `IrcError` naming
    the field as a path (`outputs[0].shape`)."""

    def __init__(self, manifest_path: Path) -> None:
        self.manifest_path = manifest_path

    def fail(self, where: str, problem: str) -> IrcError:
        return _package_error(self.manifest_path, f"the manifest's {where} {problem}", CORRUPT_HINT)

    def mapping(
        self, where: str, value: object, required: tuple[str, ...], optional: tuple[str, ...] = ()
    ) -> Mapping[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, f"is {_show(value)}, not an object")
        for key in required:
            if key not in value:
                raise self.fail(where, f"has no '{key}'")
        for key in value:
            if key not in required and key not in optional:
                raise self.fail(where, f"has an unknown key '{key}'")
        return value

    def text(self, where: str, value: object) -> str:
        if not isinstance(value, str):
            raise self.fail(where, f"is {_show(value)}, not a string")
        return value

    def count(self, where: str, value: object) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise self.fail(where, f"is {_show(value)}, not a non-negative integer")
        return value

    def items(self, where: str, value: object) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(where, f"is {_show(value)}, not a list")
        return value

    def check(self, manifest: Mapping[str, Any]) -> None:
        self.mapping("top level", manifest, _TOP_LEVEL)
        compiler = self.mapping("compiler", manifest["compiler"], ("name", "version"))
        for key, value in compiler.items():
            self.text(f"compiler.{key}", value)
        for key, value in self.mapping("model", manifest["model"], (), ("name", "source")).items():
            self.text(f"model.{key}", value)
        self.text("pipeline", manifest["pipeline"])
        self.mapping("options", manifest["options"], (), tuple(manifest["options"]))
        target = self.mapping("target", manifest["target"], ("name", "file"))
        self.text("target.name", target["name"])
        if target["file"] != TARGET:
            raise self.fail("target.file", f"is {_show(target['file'])}, not '{TARGET}'")
        self.text("entry", manifest["entry"])
        for side in ("inputs", "outputs"):
            for index, entry in enumerate(self.items(side, manifest[side])):
                self.tensor(f"{side}[{index}]", entry)
        memory = ("weights_memory", "weights_bytes", "sram_bytes", "sram_alignment")
        sizes = manifest["memory"]
        others = tuple(key for key in sizes if isinstance(sizes, dict) and key.endswith("_bytes"))
        for key, value in self.mapping("memory", sizes, memory, others).items():
            if key == "weights_memory":
                self.text(f"memory.{key}", value)
            else:
                self.count(f"memory.{key}", value)
        stream = self.mapping("stream", manifest["stream"], ("commands", "host_calls"))
        for key, value in stream.items():
            self.count(f"stream.{key}", value)
        files = self.mapping("files", manifest["files"], (PROGRAM, TARGET, WEIGHTS))
        for name, record in files.items():
            record = self.mapping(f"files.{name}", record, ("bytes", "sha256"))
            self.count(f"files.{name}.bytes", record["bytes"])
            if not _SHA256.fullmatch(self.text(f"files.{name}.sha256", record["sha256"])):
                raise self.fail(f"files.{name}.sha256", "is not 64 lowercase hex digits")

    def tensor(self, where: str, entry: object) -> None:
        entry = self.mapping(
            where, entry, ("name", "shape", "dtype", "quantization"), ("npu_quantization",)
        )
        self.text(f"{where}.name", entry["name"])
        for axis, size in enumerate(self.items(f"{where}.shape", entry["shape"])):
            self.count(f"{where}.shape[{axis}]", size)
        if entry["dtype"] not in DTYPES:
            raise self.fail(
                f"{where}.dtype", f"is {_show(entry['dtype'])}, not one of {', '.join(DTYPES)}"
            )
        for key in ("quantization", "npu_quantization"):
            if entry.get(key) is not None:
                self.quantization(f"{where}.{key}", entry[key], len(entry["shape"]))

    def quantization(self, where: str, value: object, rank: int) -> None:
        value = self.mapping(where, value, ("storage", "scale", "zero_point", "axis"))
        if not re.fullmatch(r"[iu](8|16|32)", str(value["storage"])):
            raise self.fail(f"{where}.storage", f"is {_show(value['storage'])}, not i8, u8, ...")
        axis = value["axis"]
        scales, zero_points = value["scale"], value["zero_point"]
        if axis is not None:
            if self.count(f"{where}.axis", axis) >= rank:
                raise self.fail(f"{where}.axis", f"is {axis}, but the tensor has rank {rank}")
            scales = self.items(f"{where}.scale", scales)
            zero_points = self.items(f"{where}.zero_point", zero_points)
            if len(scales) != len(zero_points) or not scales:
                raise self.fail(where, "has lists of scales and zero points of different lengths")
        else:
            scales, zero_points = [scales], [zero_points]
        for scale in scales:
            if not isinstance(scale, float | int) or isinstance(scale, bool):
                raise self.fail(f"{where}.scale", f"holds {_show(scale)}, not a number")
            if not (math.isfinite(scale) and scale > 0):
                raise self.fail(f"{where}.scale", f"holds {scale}, not a positive number")
        for point in zero_points:
            if not isinstance(point, int) or isinstance(point, bool):
                raise self.fail(f"{where}.zero_point", f"holds {_show(point)}, not an integer")


def _show(value: object) -> str:
    """A manifest value in a message: its JSON, shortened."""
    text = json.dumps(value) if not isinstance(value, str) else f"'{value}'"
    return text if len(text) <= 40 else text[:37] + "..."


def check_against_program(manifest_path: Path, manifest: Mapping[str, Any], view: Mapping) -> None:
    """The manifest must say what the program says of itself (`program_view`): an
    edited shape, name or scale would make `Session` describe one model and run
    another."""
    for key, expected in view.items():
        difference = _first_difference(manifest[key], expected, key)
        if difference is not None:
            where, recorded, actual = difference
            raise _package_error(
                manifest_path,
                f"the manifest's {where} is {_show(recorded)}, but the program's is {_show(actual)}",
                CORRUPT_HINT,
            )


_MISSING = "<missing>"


def _first_difference(recorded: object, actual: object, where: str) -> tuple[str, Any, Any] | None:
    """The first place (a field path) where two JSON values differ, with the values."""
    if isinstance(recorded, dict) and isinstance(actual, dict):
        for key in sorted(recorded.keys() | actual.keys()):
            found = _first_difference(
                recorded.get(key, _MISSING), actual.get(key, _MISSING), f"{where}.{key}"
            )
            if found is not None:
                return found
        return None
    if isinstance(recorded, list) and isinstance(actual, list):
        if len(recorded) != len(actual):
            return f"{where} (its length)", len(recorded), len(actual)
        for index, (one, other) in enumerate(zip(recorded, actual)):
            found = _first_difference(one, other, f"{where}[{index}]")
            if found is not None:
                return found
        return None
    if recorded == actual and type(recorded) is type(actual):
        return None
    return where, recorded, actual


def read_file(path: Path, manifest: Mapping[str, Any], name: str) -> bytes:
    """A package file, checked against the size and SHA-256 the manifest records."""
    record = manifest["files"].get(name)
    file_path = path / name
    if not isinstance(record, dict):
        raise _package_error(path / MANIFEST, f"the manifest does not list {name}", CORRUPT_HINT)
    try:
        content = file_path.read_bytes()
    except OSError as failure:
        raise _package_error(
            file_path, f"cannot read {name}: {failure.strerror or failure}", CORRUPT_HINT
        ) from None
    if len(content) != record.get("bytes"):
        raise _package_error(
            file_path,
            f"{name} has {len(content)} bytes; the manifest says {record.get('bytes')}",
            CORRUPT_HINT,
        )
    if hashlib.sha256(content).hexdigest() != record.get("sha256"):
        raise _package_error(
            file_path, f"{name} does not match its SHA-256 in the manifest", CORRUPT_HINT
        )
    return content


def read_package(path: Path | str) -> Package:
    """The package at `path`: manifest checked, files verified, program decoded, and
    the manifest checked against the program."""
    from irc.ir.context import make_context
    from irc.targets import parse_target

    path = Path(path)
    manifest = read_manifest(path)
    target_text = read_file(path, manifest, TARGET).decode()
    target = parse_target(target_text, str(path / TARGET))
    program = read_file(path, manifest, PROGRAM)
    blob = read_file(path, manifest, WEIGHTS)
    module = bytecode.decode(program, blob, make_context(), str(path / PROGRAM))
    try:
        view = program_view(module, target)
    except IrcError as failure:  # no entry function
        raise _package_error(path / PROGRAM, failure.diagnostics[0].message, CORRUPT_HINT) from None
    check_against_program(path / MANIFEST, manifest, view)
    return Package(path, manifest, module, target)
