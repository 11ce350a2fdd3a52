"""Weights: numpy-backed constant data, and how it is printed and read back.

In memory a constant holds a builtin `dense<...>` attribute whose payload is the raw
little-endian bytes of the tensor (`DenseIntOrFPElementsAttr`), so converting to and
from numpy is a zero-copy view, however large the tensor.

In text, a constant with at most `inline_limit` elements is always printed inline
(`dense<[1.0, 2.0]>`). Larger ones are printed as `dense_resource<name>` handles, and
the `WeightsMode` decides where their bytes go:

- `elide`: nowhere. The IR stays small and readable; re-parsed, the constants have
  shapes but no data (structural passes work, the interpreter refuses to run).
- `resource`: into the file's `{-# dialect_resources: {builtin: {...}} #-}` section,
  exactly as MLIR writes blobs (hex, with a 4-byte alignment prefix). Lossless and
  readable by `mlir-opt`.
- `sidecar`: into a `.npz` file next to the output, named by the module attribute
  `irc.weights`. Lossless and compact.
- `inline`: into the op itself as a hex `dense<"0x...">`. Lossless, MLIR-compatible.

See docs/weights.md for the reasoning.
"""

from __future__ import annotations

import math
import re
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import BinaryIO

import numpy as np
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    Signedness,
    TensorType,
)
from xdsl.ir import Attribute, Operation
from xdsl.printer import Printer

WEIGHTS_FILE_ATTR = "irc.weights"
"""Module attribute naming the sidecar file that holds the module's weights."""

MLIR_BLOB_ALIGNMENT = 4
"""Alignment recorded in the prefix of every blob, as MLIR does for f32 data."""


class WeightsMode(StrEnum):
    """Where the bytes of large constants go when IR is printed."""

    ELIDE = "elide"
    RESOURCE = "resource"
    SIDECAR = "sidecar"
    INLINE = "inline"


# --------------------------------------------------------------------------------------
# numpy <-> builtin attributes


def dtype_of(element_type: Attribute) -> np.dtype:
    """The numpy dtype that stores one element of an MLIR element type."""
    match element_type:
        case Float32Type():
            return np.dtype(np.float32)
        case Float16Type():
            return np.dtype(np.float16)
        case Float64Type():
            return np.dtype(np.float64)
        case IntegerType():
            width = element_type.width.data
            if width == 1:
                return np.dtype(np.bool_)
            if width not in (8, 16, 32, 64):
                raise ValueError(f"no numpy dtype for {element_type}")
            unsigned = element_type.signedness.data == Signedness.UNSIGNED
            return np.dtype(f"{'u' if unsigned else 'i'}{width // 8}")
        case IndexType():
            return np.dtype(np.int64)
        case _ if isinstance(getattr(element_type, "storage_type", None), IntegerType):
            # A quantized type (irc.dialects.quant) is held as its storage integers.
            return dtype_of(element_type.storage_type)  # type: ignore[attr-defined]
        case _:
            raise ValueError(f"no numpy dtype for {element_type}")


def element_type_of(dtype: np.dtype | type) -> IntegerType | AnyFloat:
    """The MLIR element type for a numpy dtype (signless integers for signed ones)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return IntegerType(1)
    if dtype.kind == "f":
        float_types: dict[int, AnyFloat] = {2: Float16Type(), 4: Float32Type(), 8: Float64Type()}
        return float_types[dtype.itemsize]
    if dtype.kind == "i":
        return IntegerType(dtype.itemsize * 8)
    if dtype.kind == "u":
        return IntegerType(dtype.itemsize * 8, Signedness.UNSIGNED)
    raise ValueError(f"no MLIR element type for numpy dtype {dtype}")


def is_float_type(element_type: Attribute) -> bool:
    """True for floating-point element types."""
    return isinstance(element_type, AnyFloat) and not isinstance(element_type, BFloat16Type)


def tensor_type_of(array: np.ndarray) -> TensorType:
    """The ranked tensor type of a numpy array."""
    return TensorType(element_type_of(array.dtype), array.shape)


def dense_from_numpy(
    array: np.ndarray, shape: Sequence[int] | None = None
) -> DenseIntOrFPElementsAttr:
    """A `dense<...>` attribute holding a copy of `array`'s bytes (little-endian), or
    the bytes themselves when `array` views a whole `bytes` object (immutable).
    `shape` (of as many elements) reshapes it: the bytes of a strided view (a
    transposed weight) are gathered in one copy, which reshaping the view itself
    would make twice."""
    array = np.asarray(array)
    element_type = element_type_of(array.dtype)
    if array.dtype == np.bool_:
        array = array.astype(np.int8)
    little = array.dtype.byteorder in "<|" or (array.dtype.byteorder == "=" and np.little_endian)
    base = array.base
    while isinstance(base, np.ndarray):  # a view of a view (a reshaped frombuffer)
        base = base.base
    if (
        isinstance(base, bytes)
        and len(base) == array.nbytes
        and array.flags.c_contiguous
        and little
    ):
        data = base  # a view of immutable bytes (an ONNX tensor's): no copy needed
    elif little:
        data = array.tobytes()  # C order, gathered straight into the bytes
    else:
        data = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()
    dims = array.shape if shape is None else tuple(shape)
    assert math.prod(dims) == array.size, f"cannot give {array.shape} the shape {dims}"
    return DenseIntOrFPElementsAttr(TensorType(element_type, dims), BytesAttr(data))


def numpy_from_dense(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    """A read-only numpy view of a `dense<...>` attribute's data, in its shape."""
    element_type = attr.get_element_type()
    shape = tuple(attr.get_shape())
    dtype = dtype_of(element_type)
    if dtype == np.bool_:
        return (np.frombuffer(attr.data.data, np.int8) != 0).reshape(shape)
    return np.frombuffer(attr.data.data, dtype.newbyteorder("<")).reshape(shape)


# --------------------------------------------------------------------------------------
# Printing


@dataclass
class WeightsPrinting:
    """How constants are printed, and the blobs collected while printing one module."""

    mode: WeightsMode = WeightsMode.ELIDE
    inline_limit: int = 16
    blobs: dict[str, np.ndarray] = field(default_factory=dict)

    def handle_for(self, name_hint: str, array: np.ndarray) -> str:
        """A fresh, valid resource handle for a constant, derived from its name."""
        base = re.sub(r"[^A-Za-z0-9_.]", "_", name_hint) or "cst"
        if not re.match(r"[A-Za-z_]", base):
            base = "_" + base
        handle, counter = base, 0
        while handle in self.blobs:
            counter += 1
            handle = f"{base}_{counter}"
        self.blobs[handle] = array
        return handle


def constant_data(value: Attribute, op: Operation) -> np.ndarray:
    """The data of a constant op's `value` as a read-only array; an `IrcError` at `op`
    if its weights were elided when the IR was printed (a `dense_resource` with no
    blob)."""
    if isinstance(value, DenseIntOrFPElementsAttr):
        return numpy_from_dense(value)
    from irc.diagnostics import error

    handle = getattr(value, "resource_handle", None)
    name = handle.data if handle is not None else str(value)
    raise error(
        f"constant 'dense_resource<{name}>' has no data: "
        "its weights were elided when this IR was printed",
        op,
        hint="print the IR with --weights=resource or --weights=sidecar to keep them",
    )


def print_dense(
    printer: Printer, value: DenseIntOrFPElementsAttr, policy: WeightsPrinting, name_hint: str
) -> None:
    """Print a dense constant (with its type) as `policy` says."""
    if _is_splat(value):
        # Print the one value without unpacking the whole tensor.
        size = len(value.data.data) // len(value)
        scalar_type = TensorType(value.get_element_type(), [])
        DenseIntOrFPElementsAttr(scalar_type, BytesAttr(value.data.data[:size])).print_without_type(
            printer
        )
        printer.print_string(" : ")
        printer.print_attribute(value.type)
        return
    if len(value) <= policy.inline_limit:
        Printer.print_attribute(printer, value)  # the builtin form, not the policy's
        return
    if policy.mode is WeightsMode.INLINE:
        printer.print_string(f'dense<"0x{value.data.data.hex().upper()}"> : ')
        printer.print_attribute(value.type)
        return
    handle = policy.handle_for(name_hint, numpy_from_dense(value))
    printer.print_string(f"dense_resource<{handle}> : ")
    printer.print_attribute(value.type)


def _is_splat(value: DenseIntOrFPElementsAttr) -> bool:
    data = value.data.data
    size = len(data) // max(len(value), 1)
    if len(data) <= size or data[:size] != data[size : 2 * size]:
        return False
    return data == data[:size] * len(value)


def resource_section(blobs: dict[str, np.ndarray]) -> str:
    """The `{-# dialect_resources ... #-}` trailer holding `blobs`, MLIR's format."""
    if not blobs:
        return ""
    prefix = MLIR_BLOB_ALIGNMENT.to_bytes(4, "little").hex()
    entries = ",\n".join(
        f'      {handle}: "0x{prefix}{dense_from_numpy(array).data.data.hex().upper()}"'
        for handle, array in blobs.items()
    )
    return f"\n{{-#\n  dialect_resources: {{\n    builtin: {{\n{entries}\n    }}\n  }}\n#-}}\n"


def blob_bytes(hex_blob: str) -> bytes:
    """The data bytes of an MLIR hex blob (`0x` + 4-byte alignment + data)."""
    return bytes.fromhex(hex_blob[2 + 8 :])


def save_sidecar(file: BinaryIO, blobs: dict[str, np.ndarray]) -> None:
    """Write the blobs as a `.npz` sidecar (deterministic bytes for the same blobs).

    The archive is the one `np.savez` writes, built here because `np.savez(file, **blobs)`
    would take a blob named `file` or `allow_pickle` for its own parameter.
    """
    with zipfile.ZipFile(file, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for handle, array in blobs.items():
            with archive.open(f"{handle}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asarray(array))


def load_sidecar(path: Path) -> dict[str, np.ndarray]:
    """Read every blob of a `.npz` sidecar."""
    with np.load(path, allow_pickle=False) as data:
        return {handle: data[handle] for handle in data.files}
