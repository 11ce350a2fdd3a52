"""The model package: what `irc-compile` writes and `irc.runtime.Session` loads.

A package is a directory (docs/package.md):

- `manifest.json`: what the package holds and how it was made: the model's inputs
  and outputs (names, shapes, dtypes, and the quantization parameters of the tensors
  the NPU sees), the target, the compiler's version, the pipeline and its options,
  the memory the program needs, and the size and SHA-256 of every other file;
- `program.bin`: the command stream with its host functions, in irc bytecode
  (irc/codegen/bytecode.py);
- `weights.bin`: the weights blob: every dense constant, 64-byte aligned;
- `target.toml`: the target the program was compiled for, in the target file format,
  so that the package runs without the preset or file it was compiled with.

The same module, target and options always give byte-identical files.
"""

from __future__ import annotations

import functools
import hashlib
import json
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
VERSION = 1
MANIFEST, PROGRAM, WEIGHTS, TARGET = "manifest.json", "program.bin", "weights.bin", "target.toml"
ENTRY = "main"


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
        "format": FORMAT,
        "version": VERSION,
        "compiler": {"name": "irc", "version": __version__},
        "model": dict(compile_info.get("model", {})),
        "target": {"name": target.name, "file": TARGET},
        "pipeline": compile_info.get("pipeline", ""),
        "options": dict(compile_info.get("options", {})),
        "entry": ENTRY,
        "inputs": inputs,
        "outputs": outputs,
        "memory": {
            "ddr_bytes": number(npu.DDR_BYTES_ATTR),
            "weights_bytes": number(npu.WEIGHTS_BYTES_ATTR),
            "sram_bytes": number(npu.SRAM_BYTES_ATTR),
            "sram_alignment": number("npu.sram_alignment"),
        },
        "stream": {"commands": commands, "host_calls": host_calls},
        "files": {
            name: {"bytes": len(content), "sha256": hashlib.sha256(content).hexdigest()}
            for name, content in sorted(files.items())
        },
    }


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


def read_manifest(path: Path) -> dict[str, Any]:
    """The manifest of the package at `path`, checked for format and version."""
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
    for key in ("files", "inputs", "outputs", "target", "entry"):
        if key not in manifest:
            raise _package_error(manifest_path, f"the manifest has no '{key}'", CORRUPT_HINT)
    return manifest


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
    """The package at `path`: manifest checked, files verified, program decoded."""
    from irc.ir.context import make_context
    from irc.targets import parse_target

    path = Path(path)
    manifest = read_manifest(path)
    target_text = read_file(path, manifest, TARGET).decode()
    target = parse_target(target_text, str(path / TARGET))
    program = read_file(path, manifest, PROGRAM)
    blob = read_file(path, manifest, WEIGHTS)
    module = bytecode.decode(program, blob, make_context(), str(path / PROGRAM))
    return Package(path, manifest, module, target)
