"""Reading and writing textual IR.

- `parse_module` parses MLIR text into a module. Every op without an explicit `loc(...)`
  gets the `file:line:col` where it was written, as MLIR's parser does, so that
  verifier errors point into the file. Weights printed as `dense_resource<...>` are
  loaded back from the file's resource section or from its sidecar. A hexadecimal
  element of a float `dense<...>` is its bit pattern, as in MLIR (xDSL prints -inf
  and NaN that way, and would read them back as integers).
- `split_input` cuts a file at lines that are exactly `// -----`, keeping line numbers.
- `print_module` / `write_module` print a module with a chosen `WeightsMode`.
- `verify_module` runs every op's verifier and reports all failures with locations.
"""

from __future__ import annotations

import bisect
import io
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, cast

import numpy as np
from xdsl.context import Context
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import (
    AnyDenseElement,
    AnyFloat,
    BytesAttr,
    ComplexType,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FileLineColLoc,
    IndexType,
    IntAttr,
    IntegerType,
    LocationAttr,
    MemRefType,
    ModuleOp,
    NameLoc,
    RankedStructure,
    StringAttr,
    TensorType,
    UnknownLoc,
    VectorType,
)
from xdsl.ir import Attribute, Operation
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import IsTerminator, NoTerminator
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.utils.lexer import Span
from xdsl.utils.mlir_lexer import MLIRTokenKind

from irc.diagnostics import Diagnostic, IrcError, Location, error
from irc.fileio import StagedOutputs
from irc.ir import weights
from irc.ir.weights import WeightsMode, WeightsPrinting

SPLIT_MARKER = "// -----"


class LocatingParser(Parser):
    """xDSL's parser, giving every op its source position as a `FileLineColLoc`."""

    def __init__(self, ctx: Context, text: str, name: str) -> None:
        super().__init__(ctx, text, name)
        self._filename = StringAttr(name)
        self._line_starts = [0]
        position = text.find("\n")
        while position != -1:
            self._line_starts.append(position + 1)
            position = text.find("\n", position + 1)

    _location_end = -1
    """Where the last location written in the text ended."""

    def parse_optional_location(self) -> LocationAttr | None:
        location = super().parse_optional_location()
        if location is not None:
            self._location_end = self._current_token.span.start
        return location

    def parse_operation(self) -> Operation:
        start = self._current_token.span.start
        op = super().parse_operation()
        # An op that ends in `loc(...)` keeps it, `loc(unknown)` included, as in MLIR.
        written = self._location_end == self._current_token.span.start
        if isinstance(op.location, UnknownLoc) and not written:
            line = bisect.bisect_right(self._line_starts, start)
            column = start - self._line_starts[line - 1] + 1
            op.location = FileLineColLoc(self._filename, IntAttr(line), IntAttr(column))
        return op

    def _parse_tensor_literal_element(self) -> Parser._TensorLiteralElement:
        if self._current_token.text[:2] in ("0x", "0X"):
            element = super()._parse_tensor_literal_element()
            return _BitPatternElement(element.is_negative, element.value, element.span)
        return super()._parse_tensor_literal_element()

    def at_end(self) -> bool:
        """True if the input holds nothing but whitespace and comments."""
        return self._current_token.kind == MLIRTokenKind.EOF

    def current_span(self) -> Span:
        """The span of the token the parser is looking at."""
        return self._current_token.span


class _BitPatternElement(Parser._TensorLiteralElement):
    """A hexadecimal tensor-literal element: for a float type, its bit pattern."""

    def to_type(
        self,
        parser: AttrParser,
        type: AnyFloat | IntegerType | IndexType | ComplexType,
    ) -> float | int | tuple[int, int] | tuple[float, float]:
        if isinstance(type, AnyFloat) and isinstance(self.value, int):
            if self.value.bit_length() > type.bitwidth:
                parser.raise_error("hexadecimal float constant out of range for type", self.span)
            raw = self.value.to_bytes(type.compile_time_size, "little")
            return next(type.iter_unpack(raw))
        return super().to_type(parser, type)


def split_input(text: str) -> list[str]:
    """Split at lines that are exactly `// -----`; each chunk keeps its line numbers."""
    chunks: list[str] = []
    current: list[str] = []
    first_line = 0
    lines = text.splitlines(keepends=True)
    for index, line in enumerate(lines):
        if line.rstrip("\r\n").rstrip() == SPLIT_MARKER:
            chunks.append("\n" * first_line + "".join(current))
            current, first_line = [], index + 1
        else:
            current.append(line)
    chunks.append("\n" * first_line + "".join(current))
    return chunks


def parse_module(
    text: str,
    ctx: Context,
    filename: str = "<stdin>",
    *,
    weights_dir: Path | None = None,
) -> ModuleOp:
    """Parse MLIR text into a module, with locations and weights resolved.

    `weights_dir` is where a sidecar named by the module's `irc.weights` attribute is
    looked for (the directory of the input file); without it a sidecar is an error.
    """
    parser = LocatingParser(ctx, text, filename)
    try:
        module = ModuleOp([]) if parser.at_end() else parser.parse_module()
    except ParseError as parse_error:
        hint = None
        if "is not registered" in parse_error.msg:
            hint = "use --allow-unregistered-dialect to accept ops of unknown dialects"
        location = Location.of_span(parse_error.span)
        message = parse_error.msg.strip()
        if parse_error.span.start >= len(text.rstrip()):
            # xDSL's message at the end of the input names only the construct it was
            # in (" in block definition"): say what happened.
            message = (
                f"unexpected end of the file ({message})"
                if message
                else "unexpected end of the file"
            )
            hint = "the IR ends before it is complete: is a '}' missing?"
        raise IrcError(Diagnostic(message or "syntax error", location, hint=hint)) from None
    except (VerifyException, DiagnosticException) as failure:
        # Raised while building an attribute or op that the syntax allowed.
        message = str(failure).strip().splitlines()[0] if str(failure).strip() else "invalid IR"
        raise error(message, parser.current_span()) from None
    _load_weights(module, ctx, weights_dir)
    return module


def _load_weights(module: ModuleOp, ctx: Context, weights_dir: Path | None) -> None:
    """Replace every `dense_resource<h>` whose bytes are known by a `dense<...>`."""
    blobs: dict[str, np.ndarray] = {}
    sidecar = module.attributes.pop(weights.WEIGHTS_FILE_ATTR, None)
    if sidecar is not None:
        blobs = _read_sidecar(sidecar, module, weights_dir)
    interface = ctx.get_dialect("builtin").get_interface(OpAsmDialectInterface)

    def resolve(attr: Attribute) -> Attribute:
        if not isinstance(attr, DenseResourceAttr):
            return attr
        handle = attr.resource_handle.data
        if handle in blobs:
            resource_type = _resource_type(attr, module)
            array = blobs[handle]
            expected = tuple(resource_type.get_shape())
            if array.shape != expected:
                raise error(
                    f"sidecar blob '{handle}' has shape {list(array.shape)}, "
                    f"but the IR expects {list(expected)}",
                    module,
                )
            return _dense_with_type(array, resource_type)
        hex_blob = interface.lookup(handle) if interface else None
        if hex_blob:
            data = weights.blob_bytes(hex_blob)
            return DenseIntOrFPElementsAttr(_resource_type(attr, module), BytesAttr(data))
        return attr

    try:
        _resolve_all(module, resolve)
    finally:
        if interface is not None:
            # The blobs now live in the module; forget them so that a later parse
            # with this context does not see (or rename around) stale handles.
            interface._blob_storage.clear()  # xDSL offers no public way to do this


def _resolve_all(module: ModuleOp, resolve) -> None:
    for op in module.walk():
        for entries in (op.properties, op.attributes):
            for name, value in list(entries.items()):
                if isinstance(value, DenseResourceAttr):
                    entries[name] = resolve(value)
                    _name_after_handle(op, value.resource_handle)


def _name_after_handle(op: Operation, handle: StringAttr) -> None:
    """Name the op after its resource handle, so that printing it again keeps the name."""
    if not isinstance(op.location, NameLoc):
        op.location = NameLoc(handle, op.location)


def _resource_type(attr: DenseResourceAttr, module: ModuleOp) -> RankedStructure[AnyDenseElement]:
    """The type of a `dense_resource<...>`, which must be one a `dense<...>` can have."""
    resource_type = attr.type
    if not (
        isinstance(resource_type, TensorType | VectorType | MemRefType)
        and isinstance(resource_type.get_element_type(), AnyDenseElement)
    ):
        raise error(
            f"'dense_resource<{attr.resource_handle.data}>' has type {resource_type}, "
            "which a dense<...> value cannot have",
            module,
        )
    # Both the shaped type and its element type were checked; mypy narrows only the first.
    return cast("RankedStructure[AnyDenseElement]", resource_type)


def _dense_with_type(
    array: np.ndarray, value_type: RankedStructure[AnyDenseElement]
) -> DenseIntOrFPElementsAttr:
    dtype = weights.dtype_of(value_type.get_element_type())
    dense = weights.dense_from_numpy(np.asarray(array, dtype=dtype))
    return DenseIntOrFPElementsAttr(value_type, dense.data)


def _read_sidecar(attr: Attribute, module: ModuleOp, weights_dir: Path | None) -> dict:
    if not isinstance(attr, StringAttr):
        raise error(f"'{weights.WEIGHTS_FILE_ATTR}' must be a string naming a file", module)
    name = attr.data
    hint = "the sidecar must be a relative path inside the directory of the IR file"
    if weights_dir is None:
        raise error(
            f"the module's weights are in a sidecar file '{name}', but the IR was not read "
            "from a file",
            module,
            hint="pass the .mlir file by path, next to its sidecar",
        )
    base = weights_dir.resolve()
    path = (base / name).resolve()
    if Path(name).is_absolute() or not path.is_relative_to(base):
        raise error(f"sidecar '{name}' lies outside '{base}'", module, hint=hint)
    if not path.is_file():
        raise error(f"sidecar weights file '{path}' does not exist", module, hint=hint)
    try:
        return weights.load_sidecar(path)
    except (OSError, ValueError) as failure:
        raise error(f"cannot read sidecar weights file '{path}': {failure}", module) from None


# --------------------------------------------------------------------------------------
# Printing


class IrcPrinter(Printer):
    """xDSL's printer, printing dense constants as a `WeightsPrinting` policy says."""

    def __init__(self, policy: WeightsPrinting, **kwargs) -> None:
        super().__init__(**kwargs)
        self.weights_policy = policy
        self._op_stack: list[Operation] = []

    def print_op(self, op: Operation) -> None:
        self._op_stack.append(op)
        try:
            super().print_op(op)
        finally:
            self._op_stack.pop()

    def print_attribute(self, attribute: Attribute) -> None:
        if isinstance(attribute, DenseIntOrFPElementsAttr):
            weights.print_dense(self, attribute, self.weights_policy, self._name_hint())
            return
        super().print_attribute(attribute)

    def _name_hint(self) -> str:
        if self._op_stack and isinstance(self._op_stack[-1].location, NameLoc):
            return self._op_stack[-1].location.desc.data
        return "cst"


@dataclass
class PrintOptions:
    """How a module is printed: MLIR's printing flags plus where weights go."""

    generic: bool = False
    debuginfo: bool = False
    weights: WeightsMode = WeightsMode.ELIDE
    inline_limit: int = 16
    extra_blobs: dict[str, np.ndarray] = field(default_factory=dict)


def print_module(module: Operation, stream: IO[str], options: PrintOptions) -> dict:
    """Print `module` to `stream`; returns the blobs that a sidecar must hold.

    In `resource` mode the blobs are appended to the text as a resource section.
    In `sidecar` mode they are returned for the caller to write (see `write_module`).
    """
    policy = WeightsPrinting(mode=options.weights, inline_limit=options.inline_limit)
    printer = IrcPrinter(
        policy,
        stream=stream,
        print_generic_format=options.generic,
        print_debuginfo=options.debuginfo,
    )
    printer.print_op(module)
    stream.write("\n")
    if options.weights is WeightsMode.RESOURCE:
        stream.write(weights.resource_section(policy.blobs))
    return policy.blobs


def module_to_string(module: Operation, options: PrintOptions | None = None) -> str:
    """Print to a string (weights elided unless `options` says otherwise)."""
    stream = io.StringIO()
    print_module(module, stream, options or PrintOptions())
    return stream.getvalue()


def sidecar_path_for(output: Path) -> Path:
    """The sidecar that goes with an output file: `model.mlir` -> `model.weights.npz`."""
    return output.with_name(output.stem + ".weights.npz")


def write_module(
    module: ModuleOp, output: Path, options: PrintOptions, outputs: StagedOutputs
) -> None:
    """Stage `module` (and its sidecar in `sidecar` mode) for writing to `output`."""
    sidecar = sidecar_path_for(output)
    stream = io.StringIO()
    blobs = print_module(module, stream, options)
    if options.weights is WeightsMode.SIDECAR and blobs:
        # Print again, now naming the sidecar: the handles are known only after a print.
        module.attributes[weights.WEIGHTS_FILE_ATTR] = StringAttr(sidecar.name)
        try:
            stream = io.StringIO()
            blobs = print_module(module, stream, options)
        finally:
            module.attributes.pop(weights.WEIGHTS_FILE_ATTR, None)
        outputs.stage(sidecar, lambda file: weights.save_sidecar(file, blobs))
    outputs.stage_text(output, stream.getvalue())


# --------------------------------------------------------------------------------------
# Verification


def verify_diagnostics(module: Operation) -> Iterator[Diagnostic]:
    """Run every op's verifier; yield one diagnostic per op that fails."""
    for op in module.walk():
        try:
            _verify_terminator(op)
            op.verify_()
        except (VerifyException, DiagnosticException) as failure:
            message = str(failure).strip() or f"'{op.name}' failed to verify"
            yield Diagnostic(message, Location.of(op))
        except IrcError as failure:
            yield from failure.diagnostics


def _verify_terminator(op: Operation) -> None:
    """The block-structure check of xDSL's `Operation.verify`, without its IR dump."""
    block = op.parent
    region = block.parent if block is not None else None
    if block is None or region is None or block.last_op is not op:
        return
    parent = region.parent
    if op.has_trait(IsTerminator) or (parent is not None and parent.has_trait(NoTerminator)):
        return
    if len(region.blocks) > 1 or parent is not None:
        raise VerifyException(f"'{op.name}' ends its block but is not a terminator")


def verify_module(module: Operation) -> None:
    """Raise an `IrcError` listing every op that fails to verify."""
    diagnostics = list(verify_diagnostics(module))
    if diagnostics:
        raise IrcError(diagnostics)
