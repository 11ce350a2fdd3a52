"""Calibration: run the float model on sample inputs and record the range of every tensor.

    samples = load_samples("calib/", function_signature(module)[0])
    stats = calibrate(module, samples, ObserverConfig("percentile", percentile=99.99))
    stats.save("stats.json")
    low, high = CalibrationStats.load("stats.json").range(value_key(conv.results[0]))

`calibrate` runs the entry function with the reference interpreter once per sample. An
interpreter listener hands every float result of an `nn` op (constants excepted: the
quantize pass reads weights themselves) and every float argument of the function to
that tensor's observer (irc/quantize/observers.py), which keeps what it needs (two
numbers, or a histogram) and drops the array: memory does not grow with the samples.

Tensors are named by `value_key`: the location of the op that computes them (the ONNX
node name, or `file:line:col` in parsed IR) and the result index, `conv1#0`, or
`arg:NAME` for the function's arguments. Passes keep op locations, so the key of a
value is the same before and after graph passes that do not replace its op, and in
the module the quantize pass rewrites. When several ops share a location (an ONNX node
imported as a reshape and a gemm), the last one in program order stands for it, as in
numerical verification (irc/numerics.py).

The statistics file (`CalibrationStats.save`) is JSON with the schema
`irc-calibration/1`: the observer and its settings, the number of samples, and per
tensor its calibrated range, its observed extremes, the op and shape it came from, and
what the observer keeps (a histogram, moving averages). Keys are sorted and the
floats printed exactly, so the same calibration gives the same bytes and loading the
file gives back the same ranges. Ranges of the histogram observers can be recomputed
from a file with another of them (`CalibrationStats.with_observer`), without running
the model again.

Calibration sets (`load_samples`, which every reader of calibration data uses:
irc-calibrate, irc-quantize, and irc-compile through the quantize pass): a directory
of `.npy` files (one sample each, for a model with one input) or `.npz` files (one
sample each, arrays named by input name or positionally `arr_0`, `arr_1`, ... as
`np.savez` names them), or one `.npz` file whose arrays have a leading axis of
samples. An array of a model input's exact shape
is one sample; one with an extra leading axis holds a sample per row; and when the
input's first dimension is a batch of b, an array of n*b rows holds n samples of b rows.
"""

from __future__ import annotations

import json
import math
import re
import sys
import time
import zipfile
from collections.abc import Iterable, Iterator, Mapping, Sequence, Sized
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, StringAttr, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.interpreter import Interpreter, PythonValues
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue
from xdsl.traits import ConstantLike

from irc.diagnostics import Diagnostic, IrcError, Location, Severity, emit, error
from irc.dialects import nn
from irc.dialects.base import tensor_type
from irc.dialects.nn import ConstantOp
from irc.fileio import StagedOutputs
from irc.interp import NAME_ATTR, function_signature, make_interpreter
from irc.ir.weights import dtype_of
from irc.quantize.observers import (
    OBSERVERS,
    Histogram,
    Observer,
    ObserverConfig,
)

SCHEMA = "irc-calibration/1"
"""The `schema` field of a statistics file."""

Sample = dict[str, np.ndarray]
"""One input of the model: an array per input name."""

InputSignature = Sequence[tuple[str, TensorType]]
"""The entry function's inputs: (name, type) in argument order (`function_signature`)."""


# --------------------------------------------------------------------------------------
# Naming tensors


def _argument_name(function: FuncOp, index: int) -> str:
    attrs = function.arg_attrs
    if isinstance(attrs, ArrayAttr) and index < len(attrs.data):
        entry = attrs.data[index]
        if isinstance(entry, DictionaryAttr):
            name = entry.data.get(NAME_ATTR)
            if isinstance(name, StringAttr):
                return name.data
    return f"arg{index}"


def value_key(value: SSAValue) -> str | None:
    """The name of a tensor in calibration statistics and error reports.

    `NAME#i` for result i of an op whose location is NAME (the ONNX node name, or
    `file:line:col` for parsed IR); `arg:NAME` for an argument of `@main` (NAME from
    `irc.name`, else `argN`), `@f:arg:NAME` for an argument of another function. None
    for a value whose op has no location (it cannot be recognised elsewhere).
    """
    if isinstance(value, BlockArgument):
        block = value.block
        function = block.parent_op()
        if not isinstance(function, FuncOp) or block is not function.body.blocks.first:
            return None
        name = f"arg:{_argument_name(function, value.index)}"
        return name if function.sym_name.data == "main" else f"@{function.sym_name.data}:{name}"
    assert isinstance(value, OpResult)
    location = Location.of_attr(value.op.location)
    if location.name is not None:
        return f"{location.name}#{value.index}"
    if location.line is not None:
        return f"{location.file}:{location.line}:{location.col}#{value.index}"
    return None


def _is_float_tensor(value: SSAValue) -> bool:
    value_type = value.type
    if not isinstance(value_type, TensorType):
        return False
    try:
        return dtype_of(value_type.get_element_type()).kind == "f"
    except ValueError:  # an element type numpy cannot hold
        return False


def observed_values(function: FuncOp) -> dict[SSAValue, str]:
    """The values calibration observes in `function`, with their keys.

    The function's float arguments and the float results of every `nn` op except
    constants, in program order; of several values with the same key, only the last.
    """
    by_key: dict[str, SSAValue] = {}
    entry_block = function.body.blocks.first
    assert entry_block is not None
    for argument in entry_block.args:
        key = value_key(argument)
        if key is not None and _is_float_tensor(argument):
            by_key[key] = argument
    for op in function.walk():
        if op is function or isinstance(op, ConstantOp) or not op.name.startswith("nn."):
            continue
        for result in op.results:
            key = value_key(result)
            if key is not None and _is_float_tensor(result):
                by_key.pop(key, None)  # re-inserted last: program order of the survivors
                by_key[key] = result
    return {value: key for key, value in by_key.items()}


# --------------------------------------------------------------------------------------
# Calibration sets


def _natural_key(path: Path) -> list[object]:
    """Sort `s2.npy` before `s10.npy`."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", path.name)]


@dataclass(frozen=True)
class _ArrayInfo:
    """An array in a calibration file: where it is, its shape and dtype."""

    member: str | None  # the array's name inside an .npz; None for a .npy file
    shape: tuple[int, ...]
    dtype: np.dtype


@dataclass(frozen=True)
class _SampleFile:
    """A calibration file, checked: which array feeds which input, and how many samples."""

    path: Path
    arrays: dict[str, _ArrayInfo]  # by input name
    count: int
    ignored: tuple[str, ...] = ()  # arrays of an .npz that feed no input


def _read_npy_header(stream: IO[bytes], size: int) -> tuple[tuple[int, ...], np.dtype, int]:
    """The shape and dtype in a .npy header, and how many bytes of data follow it
    in a stream of `size` bytes."""
    version = np.lib.format.read_magic(stream)
    if version == (1, 0):
        shape, _, dtype = np.lib.format.read_array_header_1_0(stream)
    elif version == (2, 0):
        shape, _, dtype = np.lib.format.read_array_header_2_0(stream)
    else:
        raise ValueError(f"unsupported .npy format version {version}")
    return tuple(shape), np.dtype(dtype), size - stream.tell()


def _file_error(path: Path, message: str, hint: str | None = None) -> IrcError:
    return error(message, Location(file=str(path)), hint)


def _list_arrays(arrays: Iterable[str]) -> str:
    return ", ".join(f"'{name}'" for name in arrays) or "none"


def _human_bytes(count: int) -> str:
    size = float(count)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if size < 1024:
            return f"{size:.0f} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TiB"


def _array_headers(path: Path) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """The shape and dtype of every array in a .npy or .npz file, without its data.

    A header that claims more data than the file holds is an error here, before
    anything is allocated for it (a damaged header can claim terabytes)."""
    kind = "a .npy" if path.suffix == ".npy" else "an .npz"
    headers: dict[str, tuple[tuple[int, ...], np.dtype]] = {}
    available: dict[str, int] = {}
    try:
        if path.suffix == ".npy":
            with path.open("rb") as stream:
                shape, dtype, available[""] = _read_npy_header(stream, path.stat().st_size)
                headers[""] = (shape, dtype)
        else:
            with zipfile.ZipFile(path) as archive:
                for info in archive.infolist():
                    if not info.filename.endswith(".npy"):
                        continue
                    name = info.filename.removesuffix(".npy")
                    with archive.open(info) as stream:
                        shape, dtype, available[name] = _read_npy_header(stream, info.file_size)
                        headers[name] = (shape, dtype)
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as failure:
        raise _file_error(
            path,
            f"cannot read '{path.name}' as {kind} file: {failure}",
            hint="write calibration data with numpy.save (.npy) or numpy.savez (.npz)",
        ) from None
    for name, (shape, dtype) in headers.items():
        claimed = math.prod(shape) * dtype.itemsize
        if claimed > available[name]:
            what = f"array '{name}'" if name else "the array"
            raise _file_error(
                path,
                f"the header of {what} in '{path.name}' claims {_shape_text(shape)} {dtype} "
                f"values ({_human_bytes(claimed)}), but the file holds "
                f"{_human_bytes(max(available[name], 0))} of data",
                hint="the file is truncated or its header is damaged: write it again with "
                "numpy.save / numpy.savez",
            )
    return headers


def _sample_count(shape: tuple[int, ...], input_shape: tuple[int, ...]) -> int | None:
    """How many samples an array of `shape` holds for an input of `input_shape`
    (see the module docstring), or None if it fits neither layout."""
    if shape == input_shape:
        return 1
    if len(shape) == len(input_shape) + 1 and shape[1:] == input_shape:
        return shape[0]
    if (
        input_shape
        and len(shape) == len(input_shape)
        and shape[1:] == input_shape[1:]
        and input_shape[0] > 0
        and shape[0] % input_shape[0] == 0
    ):
        return shape[0] // input_shape[0]
    return None


def _shape_text(shape: Sequence[int]) -> str:
    return "x".join(str(d) for d in shape) if shape else "a scalar"


def _takes(source: np.dtype, target: np.dtype) -> bool:
    """Whether data of `source` may feed an input of `target`: floats a float input
    (rounded to its precision), integers an integer one (each value must survive the
    conversion), booleans a boolean one. Integers do not feed a float input: such
    data is, most often, pixels that the model expects scaled."""
    if target.kind == "f":
        return source.kind == "f"
    if target.kind in "iu":
        return source.kind in "iu"
    return source.kind == target.kind


def _dtype_hint(source: np.dtype, target: np.dtype) -> str:
    if source.kind in "iu" and target.kind == "f":
        return (
            f"integer data does not feed a {target} input: scale it as the model expects "
            f"(pixels of 0..255 are usually divided by 255, then normalised) and save it "
            f"as {target} (array.astype('{target}'))"
        )
    return f"save the data as {target} (array.astype('{target}'))"


def _check_file(path: Path, inputs: InputSignature) -> _SampleFile:
    """Match a file's arrays with the inputs and check their shapes and dtypes."""
    headers = _array_headers(path)
    names = [name for name, _ in inputs]
    chosen: dict[str, str] = {}
    if path.suffix == ".npy":
        if len(inputs) != 1:
            raise _file_error(
                path,
                f"a .npy file holds one array, but the model has {len(inputs)} inputs",
                hint=f"write one .npz file per sample with arrays named {_list_arrays(dict(inputs))}",
            )
        chosen[names[0]] = ""
    elif all(name in headers for name in names):
        chosen = {name: name for name in names}
    elif set(headers) == {f"arr_{index}" for index in range(len(names))}:
        chosen = {name: f"arr_{index}" for index, name in enumerate(names)}
    else:
        missing = [name for name in names if name not in headers]
        raise _file_error(
            path,
            f"'{path.name}' has no array for input '{missing[0]}'"
            + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""),
            hint=f"its arrays are {_list_arrays(headers)}; the model's inputs are "
            f"{_list_arrays(dict(inputs))}: name the arrays after them "
            "(numpy.savez(file, **{name: array})) or give them in input order (arr_0, ...)",
        )
    arrays: dict[str, _ArrayInfo] = {}
    counts: dict[str, int] = {}
    for name, input_type in inputs:
        member = chosen[name]
        shape, dtype = headers[member]
        input_shape = tuple(input_type.get_shape())
        input_dtype = dtype_of(input_type.get_element_type())
        what = f"array '{member}'" if member else "the array"
        count = _sample_count(shape, input_shape)
        if count is None:
            raise _file_error(
                path,
                f"{what} in '{path.name}' has shape {_shape_text(shape)}, which does not fit "
                f"input '{name}' of shape {_shape_text(input_shape)}",
                hint=f"give one sample of shape {_shape_text(input_shape)}, or samples along "
                f"a leading axis (Nx{_shape_text(input_shape)})",
            )
        if not _takes(dtype, input_dtype):
            raise _file_error(
                path,
                f"{what} in '{path.name}' has element type {dtype}, but input '{name}' "
                f"takes {input_dtype}",
                hint=_dtype_hint(dtype, input_dtype),
            )
        arrays[name] = _ArrayInfo(member or None, shape, dtype)
        counts[name] = count
    if len(set(counts.values())) > 1:
        listed = ", ".join(f"'{name}': {count}" for name, count in counts.items())
        raise _file_error(
            path,
            f"the arrays in '{path.name}' hold different numbers of samples ({listed})",
            hint="every input needs the same number of samples",
        )
    ignored = tuple(member for member in headers if member not in chosen.values())
    return _SampleFile(path, arrays, next(iter(counts.values())), ignored)


NON_FINITE_HINT = (
    "calibration needs finite inputs: repair or drop these samples (numpy.isfinite finds them)"
)


def non_finite_values(array: np.ndarray) -> str | None:
    """How many NaN and infinite values a float array has, in words (`3 NaN and 1
    infinite values`); None if it has none."""
    if array.dtype.kind != "f" or bool(np.isfinite(array).all()):
        return None
    nan = int(np.count_nonzero(np.isnan(array)))
    infinite = int(np.count_nonzero(np.isinf(array)))
    counts = [f"{nan} NaN" if nan else "", f"{infinite} infinite" if infinite else ""]
    return " and ".join(count for count in counts if count) + (
        " value" if nan + infinite == 1 else " values"
    )


class CalibrationSet(Sequence[Sample]):
    """Samples read from calibration files on demand (see `load_samples`).

    Iterating reads each file once; indexing keeps the last file read.
    """

    def __init__(
        self, files: list[_SampleFile], inputs: InputSignature, source: Path | None = None
    ) -> None:
        self.files = files
        self.inputs = list(inputs)
        self.source = source
        """The directory or file the samples come from."""
        self._offsets = np.cumsum([0] + [file.count for file in files])
        self._cached: tuple[int, list[Sample]] | None = None

    def __len__(self) -> int:
        return int(self._offsets[-1])

    def __iter__(self) -> Iterator[Sample]:
        for file in self.files:
            yield from self._read(file)

    def __getitem__(self, index: int) -> Sample:  # type: ignore[override]
        if not -len(self) <= index < len(self):
            raise IndexError(f"sample {index} of {len(self)}")
        index %= len(self)
        file_index = int(np.searchsorted(self._offsets, index, side="right")) - 1
        if self._cached is None or self._cached[0] != file_index:
            self._cached = (file_index, self._read(self.files[file_index]))
        return self._cached[1][index - int(self._offsets[file_index])]

    def _read(self, file: _SampleFile) -> list[Sample]:
        loaded = _load_arrays(file)
        samples: list[Sample] = [{} for _ in range(file.count)]
        for name, input_type in self.inputs:
            array = _conform(loaded[name], name, input_type, file.path)
            input_shape = tuple(input_type.get_shape())
            for index in range(file.count):
                samples[index][name] = _slice_sample(array, input_shape, index)
            problem = non_finite_values(array)
            if problem is not None:
                member = file.arrays[name].member
                what = f"array '{member}'" if member else "the array"
                first = next(i for i in range(file.count) if non_finite_values(samples[i][name]))
                where = (
                    f" (first in sample index {first} of {file.count})" if file.count > 1 else ""
                )
                raise _file_error(
                    file.path, f"{what} in '{file.path.name}' has {problem}{where}", NON_FINITE_HINT
                )
        return samples


def _load_arrays(file: _SampleFile) -> dict[str, np.ndarray]:
    try:
        if file.path.suffix == ".npy":
            return {name: np.load(file.path, allow_pickle=False) for name in file.arrays}
        with np.load(file.path, allow_pickle=False) as archive:
            return {name: archive[info.member] for name, info in file.arrays.items()}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as failure:
        raise _file_error(file.path, f"cannot read '{file.path.name}': {failure}") from None
    except MemoryError:
        size = sum(math.prod(info.shape) * info.dtype.itemsize for info in file.arrays.values())
        raise _file_error(
            file.path,
            f"'{file.path.name}' holds {_human_bytes(size)} of samples, more than this "
            "machine can read into memory",
            hint="split the calibration set into smaller files (a directory of one "
            ".npy/.npz per sample is read file by file)",
        ) from None


def _slice_sample(array: np.ndarray, input_shape: tuple[int, ...], index: int) -> np.ndarray:
    if array.shape == input_shape:
        return array
    if array.ndim == len(input_shape) + 1:
        return array[index]
    batch = input_shape[0]
    return array[index * batch : (index + 1) * batch]


def _conform(array: np.ndarray, name: str, input_type: TensorType, path: Path | None) -> np.ndarray:
    """`array` as the input's dtype, or an error when conversion would change values."""
    dtype = dtype_of(input_type.get_element_type())
    if array.dtype == dtype:
        return array
    where = Location(file=str(path)) if path is not None else Location()
    if not _takes(array.dtype, dtype):
        raise error(
            f"input '{name}' has element type {array.dtype}, but the model takes {dtype}",
            where,
            hint=_dtype_hint(array.dtype, dtype),
        )
    with np.errstate(over="ignore"):
        converted = array.astype(dtype)
    # Narrowing floats only rounds (unless a value overflows); others keep every value.
    if array.dtype.kind == "f" and dtype.kind == "f":
        if non_finite_values(converted) is not None and non_finite_values(array) is None:
            raise error(
                f"input '{name}' has {array.dtype} values beyond the range of {dtype} "
                f"(the largest magnitude is {float(np.abs(array).max()):g})",
                where,
                hint=f"the model's input '{name}' is {dtype}; scale the data into its range",
            )
    elif not np.array_equal(converted, array):
        raise error(
            f"input '{name}' has {array.dtype} values that {dtype} cannot represent",
            where,
            hint=f"the model's input '{name}' is {dtype}; convert the data before saving it",
        )
    return converted


def load_samples(path: Path | str, inputs: InputSignature | ModuleOp) -> CalibrationSet:
    """The calibration set at `path` for a model with `inputs` (see the module docstring).

    `inputs` is the entry function's signature (`function_signature(module)[0]`) or the
    module itself. Every file's arrays are checked (from their headers, without reading
    the data) before any sample is read: a missing or unreadable path, a directory
    without .npy/.npz files, an array missing for an input (or under another name), a
    shape that fits the input neither as one sample nor as a stack of samples, a
    header that claims more data than the file holds, a dtype that cannot feed the
    input (integers do not feed a float input), or an empty set are `IrcError`s naming
    the file, with a hint; so are NaN or infinite values, found as each file is read.
    Directory entries that are not .npy/.npz files and arrays that feed no input are
    skipped with a warning naming them.
    """
    if isinstance(inputs, ModuleOp):
        inputs = function_signature(inputs)[0]
    if any(isinstance(item, str) for item in inputs):
        raise TypeError(
            "load_samples takes the input signature (function_signature(module)[0]) or the "
            "module, not input names: it checks shapes and dtypes"
        )
    path = Path(path)
    skipped: list[Path] = []
    if path.is_dir():
        files = []
        for child in sorted(path.iterdir(), key=_natural_key):
            if child.name.startswith("."):
                continue  # hidden, as for ls
            if child.suffix in (".npy", ".npz") and child.is_file():
                files.append(child)
            else:
                skipped.append(child)
        if not files:
            raise _file_error(
                path,
                f"the calibration directory '{path}' holds no .npy or .npz files",
                hint="save each sample with numpy.save / numpy.savez into the directory",
            )
    elif path.is_file():
        if path.suffix not in (".npy", ".npz"):
            raise _file_error(
                path,
                f"'{path.name}' is not a calibration set",
                hint="give a directory of .npy/.npz files (one sample each) or one .npz "
                "file whose arrays hold a sample per row",
            )
        files = [path]
    else:
        raise _file_error(
            path,
            f"cannot open calibration data '{path}': no such file or directory",
            hint="give a directory of .npy/.npz files (one sample each) or one .npz file "
            "whose arrays hold a sample per row",
        )
    checked = [_check_file(file, inputs) for file in files]
    calibration_set = CalibrationSet(checked, inputs, path)
    if len(calibration_set) == 0:
        raise _file_error(
            path,
            "the calibration set is empty: its arrays hold no samples",
            hint="calibration needs at least one sample (a few hundred are typical)",
        )
    if skipped:
        names = [f"'{entry.name}{'/' if entry.is_dir() else ''}'" for entry in skipped]
        emit(
            Diagnostic(
                f"skipped {len(skipped)} of the {len(skipped) + len(files)} entries of "
                f"'{path}', which are not .npy or .npz files: {_first_few(names)}",
                Location(file=str(path)),
                Severity.WARNING,
                hint="only .npy and .npz files are samples; move the others out",
            )
        )
    _warn_ignored_arrays(checked, inputs, path)
    return calibration_set


def _first_few(items: Sequence[str], shown: int = 5) -> str:
    listed = ", ".join(items[:shown])
    return listed + (f" and {len(items) - shown} more" if len(items) > shown else "")


def _warn_ignored_arrays(files: list[_SampleFile], inputs: InputSignature, path: Path) -> None:
    """One warning for the arrays of the .npz files that feed no input."""
    ignored: dict[str, list[Path]] = {}
    for file in files:
        for member in file.ignored:
            ignored.setdefault(member, []).append(file.path)
    if not ignored:
        return
    arrays = [
        f"'{member}' ({_plural(len(paths), 'file')}, first '{paths[0].name}')"
        if len(files) > 1
        else f"'{member}'"
        for member, paths in ignored.items()
    ]
    emit(
        Diagnostic(
            f"ignored {_plural(len(ignored), 'array')} of '{path}' that no input of the "
            f"model is named after: {_first_few(arrays)}",
            Location(file=str(path)),
            Severity.WARNING,
            hint=f"the model's inputs are {_list_arrays(dict(inputs))}",
        )
    )


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


@dataclass(frozen=True)
class ChosenSamples:
    """The samples a compile calibrates on, and where they came from."""

    samples: list[Sample]
    description: str
    """In words: `8 samples of calib/`, `8 random normal samples (seed 0)`."""
    random: bool
    """Drawn at random: ranges that mean nothing for real inputs."""


def choose_samples(
    module: ModuleOp, data: Path | str | None, count: int, seed: int = 0
) -> ChosenSamples:
    """The first `count` samples of the calibration set at `data`, or, without data,
    `count` samples of seeded standard normal noise in the shapes and element types of
    the entry function's inputs (what `quantize` calibrates on, and `irc-compile`'s
    error report measures)."""
    signature = function_signature(module)[0]
    if data:
        loaded = load_samples(data, signature)
        chosen = [dict(loaded[index]) for index in range(min(count, len(loaded)))]
        return ChosenSamples(chosen, f"{len(chosen)} samples of {data}", False)
    rng = np.random.default_rng(seed)
    samples = [
        {
            name: rng.standard_normal(value_type.get_shape()).astype(
                dtype_of(value_type.get_element_type())
            )
            for name, value_type in signature
        }
        for _ in range(count)
    ]
    return ChosenSamples(samples, f"{count} random normal samples (seed {seed})", True)


def bind_sample(
    sample: Mapping[str, np.ndarray] | Sequence[np.ndarray], inputs: InputSignature
) -> list[np.ndarray]:
    """The arrays of one sample in argument order, checked against the inputs."""
    names = [name for name, _ in inputs]
    if isinstance(sample, Mapping):
        unknown = [name for name in sample if name not in names]
        missing = [name for name in names if name not in sample]
        if missing:
            extra = f" (it has {_list_arrays(dict.fromkeys(unknown))})" if unknown else ""
            raise error(
                f"a sample has no input '{missing[0]}'{extra}",
                hint=f"the model's inputs are {_list_arrays(dict(inputs))}",
            )
        if unknown:
            raise error(
                f"a sample has an unknown input '{unknown[0]}'",
                hint=f"the model's inputs are {_list_arrays(dict(inputs))}",
            )
        values = [sample[name] for name in names]
    else:
        values = list(sample)
        if len(values) != len(inputs):
            raise error(
                f"a sample has {len(values)} arrays, the model takes {len(inputs)}",
                hint=f"the model's inputs are, in order, {_list_arrays(dict(inputs))}",
            )
    arrays = []
    for (name, input_type), value in zip(inputs, values):
        array = np.asarray(value)
        shape = tuple(input_type.get_shape())
        if array.shape != shape:
            raise error(
                f"input '{name}' of a sample has shape {_shape_text(array.shape)}, "
                f"expected {_shape_text(shape)}",
                hint=f"input '{name}' has type {input_type}",
            )
        arrays.append(_conform(array, name, input_type, None))
    return arrays


# --------------------------------------------------------------------------------------
# Progress


class ProgressBar:
    """A one-line text progress bar on a stream: `label [####....] 12/40 3.1/s`.

    Redrawn at most every `interval` seconds and once at the end; `enabled=None`
    shows it only when the stream is a terminal.
    """

    WIDTH = 24

    def __init__(
        self,
        label: str,
        total: int | None,
        enabled: bool | None = None,
        stream: IO[str] | None = None,
        interval: float = 0.1,
    ) -> None:
        self.label = label
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.enabled = enabled
        self.interval = interval
        self.done = 0
        self.start = time.perf_counter()
        self._drawn = -math.inf

    def line(self) -> str:
        """The bar as text."""
        elapsed = time.perf_counter() - self.start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        if self.total:
            filled = round(self.WIDTH * min(self.done / self.total, 1.0))
            bar = "#" * filled + "." * (self.WIDTH - filled)
            count = f"{self.done}/{self.total}"
        else:
            bar, count = "", str(self.done)
        text = f"{self.label} [{bar}] {count} {rate:.2f}/s" if bar else f"{self.label} {count}"
        if self.total and 0 < self.done < self.total and rate > 0:
            text += f" eta {(self.total - self.done) / rate:.0f}s"
        return text

    def advance(self, steps: int = 1) -> None:
        """Count `steps` more done and redraw if it is time."""
        self.done += steps
        now = time.perf_counter()
        if self.enabled and now - self._drawn >= self.interval:
            self._drawn = now
            self.stream.write("\r" + self.line() + "\x1b[K")
            self.stream.flush()

    def finish(self) -> None:
        """Draw the final state and end the line."""
        if self.enabled:
            self.stream.write("\r" + self.line() + "\x1b[K\n")
            self.stream.flush()


# --------------------------------------------------------------------------------------
# Statistics


@dataclass
class TensorStats:
    """What calibration learnt about one tensor.

    `range` is the calibrated range the quantized type must cover (before the scheme
    extends it to 0); `low`/`high` the extremes observed; `state` what the observer
    keeps (`histogram`, `average`). `channel_mean`, for a tensor that a conv or gemm
    reads as its input, is its mean per channel (the axis the op reduces over) over
    every sample, which `quantize` uses for bias correction.
    """

    op: str
    shape: tuple[int, ...]
    range: tuple[float, float]
    low: float
    high: float
    samples: int
    state: dict[str, Any] = field(default_factory=dict)
    channel_mean: tuple[float, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        """The entry of this tensor in the statistics file."""
        entry = {
            "op": self.op,
            "shape": list(self.shape),
            "range": [float(self.range[0]), float(self.range[1])],
            "min": float(self.low),
            "max": float(self.high),
            "samples": self.samples,
            **self.state,
        }
        if self.channel_mean is not None:
            entry["channel_mean"] = [float(mean) for mean in self.channel_mean]
        return entry

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> TensorStats:
        """The tensor entry `to_json` wrote (KeyError/TypeError/ValueError if malformed)."""
        known = {"op", "shape", "range", "min", "max", "samples", "channel_mean"}
        low, high = (float(v) for v in data["range"])
        means = data.get("channel_mean")
        return TensorStats(
            str(data["op"]),
            tuple(int(d) for d in data["shape"]),
            (low, high),
            float(data["min"]),
            float(data["max"]),
            int(data["samples"]),
            {key: value for key, value in data.items() if key not in known},
            None if means is None else tuple(float(mean) for mean in means),
        )


class CalibrationStats:
    """Calibrated ranges by tensor key (`value_key`), with the observer that made them."""

    def __init__(
        self, observer: ObserverConfig, samples: int, tensors: Mapping[str, TensorStats]
    ) -> None:
        self.observer = observer
        self.samples = samples
        self.tensors = dict(sorted(tensors.items()))

    def __contains__(self, key: object) -> bool:
        return key in self.tensors

    def __len__(self) -> int:
        return len(self.tensors)

    def get(self, key: str | None) -> TensorStats | None:
        """The statistics of a tensor, or None."""
        return self.tensors.get(key) if key is not None else None

    def range(
        self, key: str | SSAValue, at: Operation | SSAValue | None = None
    ) -> tuple[float, float]:
        """The calibrated [low, high] of a tensor, by key or by value.

        A tensor without statistics is an `IrcError` at `at` (or at the value): the
        statistics belong to another model, or a pass renamed the op.
        """
        if isinstance(key, SSAValue):
            at = at if at is not None else key
            key_text = value_key(key)
        else:
            key_text = key
        stats = self.get(key_text)
        if stats is None:
            raise error(
                f"no calibration statistics for tensor '{key_text}'",
                at,
                hint="the statistics were computed for another model, or for this one "
                "before a pass changed its ops; calibrate the model as it is now",
            )
        return stats.range

    def histogram(self, key: str) -> Histogram | None:
        """The histogram kept for a tensor by a histogram observer, or None."""
        stats = self.get(key)
        if stats is None or "histogram" not in stats.state:
            return None
        return Histogram.from_json(
            stats.state["histogram"], stats.low, stats.high, self.observer.bins
        )

    def with_observer(self, observer: ObserverConfig) -> CalibrationStats:
        """The same statistics with ranges chosen by another observer, without running
        the model again: `minmax` from the extremes, and any histogram observer from
        the histograms a histogram observer kept (with the same number of bins)."""
        problem = observer.check()
        if problem is not None:
            raise error(problem)
        if observer.name == "moving-average" or (
            observer.keeps_histogram
            and not (self.observer.keeps_histogram and self.observer.bins == observer.bins)
        ):
            raise error(
                f"ranges for the '{observer.name}' observer cannot be computed from "
                f"statistics made by '{self.observer.name}'",
                hint="calibrate again with --observer "
                f"{observer.name}; histograms are kept by percentile, entropy and mse",
            )
        tensors = {}
        for key, stats in self.tensors.items():
            rebuilt = restore_observer(observer, stats)
            state = rebuilt.state()
            tensors[key] = TensorStats(
                stats.op,
                stats.shape,
                rebuilt.calibrated_range(),
                stats.low,
                stats.high,
                stats.samples,
                state,
                stats.channel_mean,
            )
        return CalibrationStats(observer, self.samples, tensors)

    # ---- files ------------------------------------------------------------------------

    def to_json_text(self) -> str:
        """The statistics file's text: sorted keys, exact floats, one tensor per line."""
        header = {
            "schema": SCHEMA,
            "observer": {"name": self.observer.name, **self.observer.settings()},
            "samples": self.samples,
        }
        lines = ["{"]
        for key in sorted(header):
            lines.append(f"  {json.dumps(key)}: {json.dumps(header[key], sort_keys=True)},")
        lines.append('  "tensors": {')
        entries = [
            f"    {json.dumps(key)}: {json.dumps(stats.to_json(), sort_keys=True, allow_nan=False)}"
            for key, stats in self.tensors.items()
        ]
        lines.append(",\n".join(entries))
        lines.append("  }")
        lines.append("}")
        return "\n".join(line for line in lines if line) + "\n"

    def save(self, path: Path | str) -> None:
        """Write the statistics file (atomically: a failure leaves no half file)."""
        with StagedOutputs() as staged:
            staged.stage_text(path, self.to_json_text())

    @staticmethod
    def from_json_text(text: str, source: str = "<statistics>") -> CalibrationStats:
        """Parse a statistics file's text; malformed content is an `IrcError`."""
        where = Location(file=source)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as failure:
            raise error(
                f"the calibration statistics are not valid JSON: {failure}",
                Location(file=source, line=failure.lineno, col=failure.colno),
            ) from None
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            found = data.get("schema") if isinstance(data, dict) else None
            raise error(
                f"not a calibration statistics file (schema {found!r}, expected '{SCHEMA}')",
                where,
                hint="write statistics with irc-calibrate",
            )
        try:
            settings = dict(data["observer"])
            name = settings.pop("name")
            observer = ObserverConfig(name, **settings)
            problem = observer.check()
            if problem is not None:
                raise ValueError(problem)
            tensors = {
                str(key): TensorStats.from_json(entry) for key, entry in data["tensors"].items()
            }
            samples = int(data["samples"])
        except (KeyError, TypeError, ValueError, AttributeError) as failure:
            raise error(
                f"malformed calibration statistics: {failure!r}",
                where,
                hint="the file was not written by irc-calibrate, or was edited",
            ) from None
        return CalibrationStats(observer, samples, tensors)

    @staticmethod
    def load(path: Path | str) -> CalibrationStats:
        """Read a statistics file written by `save`."""
        path = Path(path)
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError) as failure:
            raise error(
                f"cannot read calibration statistics '{path}': {failure}", Location(file=str(path))
            ) from None
        return CalibrationStats.from_json_text(text, str(path))


def restore_observer(config: ObserverConfig, stats: TensorStats) -> Observer:
    """An observer of `config` holding what `stats` recorded (to recompute its range)."""
    observer = config.create()
    if stats.samples == 0:
        return observer  # the tensor never had a finite value
    observer.low, observer.high, observer.samples = stats.low, stats.high, stats.samples
    observer.load_state(stats.state)
    return observer


# --------------------------------------------------------------------------------------
# Running the model


def channel_axes(function: FuncOp) -> dict[SSAValue, int]:
    """The values that a conv or gemm reads as its input, with the axis of the channels
    its weights reduce over: 1, or the last axis of a channels-last conv; for a gemm
    the K axis of A (1, or 0 with `trans_a`). Of several readers, the first."""
    axes: dict[SSAValue, int] = {}
    for op in function.walk():
        if isinstance(op, nn.ConvOp):
            rank = len(tensor_type(op.operands[0]).get_shape())
            axes.setdefault(op.operands[0], rank - 1 if op.props().str("layout") == "nhwc" else 1)
        elif isinstance(op, nn.GemmOp):
            axes.setdefault(op.operands[0], 0 if op.props().bool("trans_a") else 1)
    return axes


class _ChannelMean:
    """The running mean of a tensor per channel, in float64."""

    def __init__(self, axis: int) -> None:
        self.axis = axis
        self.total: np.ndarray | None = None
        self.count = 0

    def observe(self, array: np.ndarray) -> None:
        values = np.asarray(array, dtype=np.float64)
        moved = np.moveaxis(values, self.axis, 0).reshape(values.shape[self.axis], -1)
        sums = moved.sum(axis=1)
        self.total = sums if self.total is None else self.total + sums
        self.count += moved.shape[1]

    def mean(self) -> tuple[float, ...] | None:
        if self.total is None or self.count == 0 or not np.all(np.isfinite(self.total)):
            return None
        return tuple(float(mean) for mean in self.total / self.count)


class _Recorder(Interpreter.Listener):
    """Hands each observed value to its observer as the interpreter produces it."""

    def __init__(
        self, observers: dict[SSAValue, Observer], means: dict[SSAValue, _ChannelMean]
    ) -> None:
        self.observers = observers
        self.means = means

    def did_interpret_op(self, op: Operation, results: PythonValues) -> None:
        for result, value in zip(op.results, results):
            observer = self.observers.get(result)
            if observer is not None:
                observer.observe(value)
                if (mean := self.means.get(result)) is not None:
                    mean.observe(value)


def entry_function(module: ModuleOp, entry: str = "main") -> FuncOp:
    """The function `entry` of `module` (an `IrcError` listing the functions if absent)."""
    function_signature(module, entry)  # raises the error that names the functions
    return next(op for op in module.ops if isinstance(op, FuncOp) and op.sym_name.data == entry)


def run_with_listener(
    module: ModuleOp,
    function: FuncOp,
    arguments: Sequence[np.ndarray],
    listener: Interpreter.Listener,
) -> list[np.ndarray]:
    """Run `function` on `arguments` with an extra interpreter listener; the outputs."""
    interpreter = make_interpreter(module)
    interpreter.listeners = (*interpreter.listeners, listener)
    with np.errstate(all="ignore"):
        return list(interpreter.call_op(function, tuple(arguments)))


def require_weights(module: ModuleOp) -> None:
    """Raise the constant's own `IrcError` if weights were elided from the text."""
    for op in module.walk():
        has_data = getattr(op, "has_data", None)
        if op.has_trait(ConstantLike) and has_data is not None and not has_data():
            op.array()  # type: ignore[attr-defined]  # raises the error that explains it


def calibrate(
    module: ModuleOp,
    samples: Iterable[Mapping[str, np.ndarray] | Sequence[np.ndarray]],
    observer: str | ObserverConfig = "minmax",
    *,
    progress: bool | None = None,
    entry: str = "main",
) -> CalibrationStats:
    """Run the float model on every sample and calibrate the range of every tensor.

    `samples` is a `CalibrationSet` (`load_samples`) or any iterable of samples (a
    dict of arrays by input name, or a list in argument order). `observer` is an
    observer name (`minmax`, `moving-average`, `percentile`, `entropy`, `mse`) or an
    `ObserverConfig` with settings. A progress bar goes to stderr when it is a
    terminal, or always with `progress=True`.
    """
    config = ObserverConfig(observer) if isinstance(observer, str) else observer
    problem = config.check()
    if problem is not None:
        raise error(problem, hint=f"the observers are {', '.join(OBSERVERS)}")
    function = entry_function(module, entry)
    inputs = function_signature(module, entry)[0]
    require_weights(module)
    keys = observed_values(function)
    observers = {value: config.create() for value in keys}
    means = {value: _ChannelMean(axis) for value, axis in channel_axes(function).items()}
    entry_block = function.body.blocks.first
    assert entry_block is not None
    arguments_observed = [observers.get(argument) for argument in entry_block.args]
    arguments_averaged = [means.get(argument) for argument in entry_block.args]
    recorder = _Recorder(observers, means)
    total = len(samples) if isinstance(samples, Sized) else None
    bar = ProgressBar("calibrating", total, progress)
    count = 0
    for sample in samples:
        arguments = bind_sample(sample, inputs)
        for (name, _), array in zip(inputs, arguments):
            if (problem := non_finite_values(array)) is not None:
                raise error(f"input '{name}' of sample {count} has {problem}", hint=NON_FINITE_HINT)
        for argument_observer, mean, array in zip(
            arguments_observed, arguments_averaged, arguments
        ):
            if argument_observer is not None:
                argument_observer.observe(array)
            if mean is not None:
                mean.observe(array)
        run_with_listener(module, function, arguments, recorder)
        count += 1
        bar.advance()
    bar.finish()
    if count == 0:
        raise error(
            "calibration needs at least one sample, and the calibration set is empty",
            hint="give a directory of .npy/.npz files or an .npz file with a sample per row",
        )
    tensors: dict[str, TensorStats] = {}
    unseen: list[str] = []
    for value, key in keys.items():
        tensor_observer = observers[value]
        value_type = value.type
        assert isinstance(value_type, TensorType)
        if not tensor_observer.seen and math.prod(value_type.get_shape()) != 0:
            unseen.append(key)  # a tensor without elements needs no range
        op_name = value.op.name if isinstance(value, OpResult) else "func.arg"
        tensors[key] = TensorStats(
            op_name,
            tuple(value_type.get_shape()),
            tensor_observer.calibrated_range(),
            tensor_observer.low if tensor_observer.seen else 0.0,
            tensor_observer.high if tensor_observer.seen else 0.0,
            tensor_observer.samples,
            tensor_observer.state(),
            means[value].mean() if value in means else None,
        )
    where = (
        Location(file=str(samples.source)) if isinstance(samples, CalibrationSet) else Location()
    )
    _warn_constant_inputs(inputs, arguments_observed, count, where)
    if unseen:
        emit(
            Diagnostic(
                f"{len(unseen)} tensors had no finite value in any calibration sample "
                f"(first: '{unseen[0]}'); their range is [0, 0]",
                where,
                Severity.WARNING,
                hint="the inputs are finite, so the model computes these NaNs or infinities "
                "(an overflow, or a function outside its domain)",
            )
        )
    return CalibrationStats(config, count, tensors)


def _warn_constant_inputs(
    inputs: InputSignature, observers: Sequence[Observer | None], count: int, where: Location
) -> None:
    """Warn when a float input holds one value in every element of every sample: the
    ranges calibrated from it are degenerate, and errors measured on it mean nothing."""
    constant = [
        f"'{name}' (always {observer.low:g})"
        for (name, _), observer in zip(inputs, observers)
        if observer is not None and observer.seen and observer.low == observer.high
    ]
    if not constant:
        return
    emit(
        Diagnostic(
            f"{'inputs' if len(constant) > 1 else 'input'} {_first_few(constant)} "
            f"{'are' if len(constant) > 1 else 'is'} the same constant in every element of all "
            f"{_plural(count, 'calibration sample')}: the calibrated ranges are degenerate, "
            "and an error report on these samples means nothing",
            where,
            Severity.WARNING,
            hint="calibrate on real inputs of the model (a few hundred typical ones)",
        )
    )
