"""The `tile` dialect: bufferized IR of explicit buffers, copies and compute on tiles.

Below `qnn`, a layer is computed tile by tile: buffers live in a memory space, DDR
(the whole tensors) or SRAM (the tiles), `tile.copy` moves boxes between them, and
the compute ops read and write SRAM tiles in place. Loops over tiles are xDSL's own
`scf.for` over `index` values, with `arith` ops for the tile origins.

Buffers are builtin memrefs with a static shape, an element type of `i8`, `ui8`,
`i32` or `f32` (storage integers: quantization parameters are op properties or
parameter buffers, never types) and a string memory space, `"ddr"` or `"sram"`:
`memref<1x6x14x8xi8, "sram">`. At run time a buffer is a numpy array that the op
which allocated it owns; ops write their outputs in place and return nothing.

Layouts are NHWC. Convolutions and matrix products add into `i32` accumulators (or
`f32` ones for float programs); `tile.bias_add` and `tile.requantize` finish them
with exactly the arithmetic of `qnn.requantize` (irc/ir/fixed_point.py), so a tiled
program gives the same integers as the `qnn` ops it replaces. A 3x3 conv tiled by
rows of 4, its input halo padded with the input zero point -3:

    %acc = tile.alloc : memref<1x4x12x16xi32, "sram">
    %box = tile.alloc : memref<1x6x14x8xi8, "sram">
    scf.for %r = %c0 to %c3 step %c1 {
      %row = arith.muli %r, %c4 : index
      %top = arith.subi %row, %c1 : index
      tile.copy %x[%c0, %top, %cm1, %c0] to %box[%c0, %c0, %c0, %c0] sizes [1, 6, 14, 8]
          {pad = -3} : memref<1x12x12x8xi8, "ddr"> to memref<1x6x14x8xi8, "sram">
      tile.conv %box, %w, %acc {input_zero_point = -3}
          : memref<1x6x14x8xi8, "sram">, memref<16x3x3x8xi8, "sram">, memref<1x4x12x16xi32, "sram">
      ...
    }

The op reference is docs/tile-ops.md; docs/tiling.md explains how layers are tiled.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any, ClassVar, Self

from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    Signedness,
    StringAttr,
    TensorType,
    f32,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    base,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import NoTerminator

from irc.dialects.base import (
    Props,
    bool_prop,
    check_rounding,
    fail,
    float_prop,
    int_prop,
    ints_constraint,
    ints_prop,
    print_entries,
    print_value,
    rounding_prop,
    split_entries,
    str_prop,
)
from irc.dialects.quant import quantized_element
from irc.ir import fixed_point

SRAM_SPACE = "sram"
"""The memory space of tiles: the NPU's local SRAM, the only one compute ops work in.
Every other space is a system memory named by the target (`"ddr"`, `"dram"`,
`"flash"`, `"system_sram"`, ...: docs/targets.md), holding whole tensors."""

_SPACE_NAME = re.compile(r"[a-z][a-z0-9_]*")

ui8 = IntegerType(8, Signedness.UNSIGNED)
ELEMENT_TYPES: tuple[Attribute, ...] = (i8, ui8, i16, i32, i64, f32)
"""The element types a buffer can hold: 8- and 16-bit activations, i32 accumulators and
biases, i64 wide accumulators and biases (of 16-bit activations), f32 (a float layer);
i16 is also a softmax's exp table."""

EIGHT_BIT = (i8, ui8)

ACTIVATIONS = (i8, ui8, i16)
"""The element types of integer activations: 8-bit, and 16-bit (int16x8 layers)."""

SEGMENTS = "operandSegmentSizes"


def _number_prop(default: int | None = None) -> Any:
    """An optional property holding an integer (`-3`) or a float (`0.5`)."""
    value = None if default is None else IntegerAttr(default, i64)
    return opt_prop_def(
        IntegerAttr.constr(type=I64) | FloatAttr.constr(type=Float32Type), default_value=value
    )


# --------------------------------------------------------------------------------------
# Checks shared by the ops


def space_of(buffer_type: MemRefType) -> str:
    """The memory space of a buffer type ("sram", a system memory's name; "" if it has
    none)."""
    space = buffer_type.memory_space
    return space.data if isinstance(space, StringAttr) else ""


def in_system_memory(buffer_type: MemRefType) -> bool:
    """Whether a buffer lives in a system memory (not in the NPU's local SRAM)."""
    return space_of(buffer_type) != SRAM_SPACE


def check_buffer_type(value_type: Attribute, what: str) -> MemRefType:
    """A buffer type: a static memref in a named memory space of a storage element type."""
    if not isinstance(value_type, MemRefType):
        raise fail(f"{what} must be a memref, got {value_type}")
    if any(size < 0 for size in value_type.get_shape()):
        raise fail(f"{what} must have a static shape, got {value_type}")
    if not _SPACE_NAME.fullmatch(space_of(value_type)):
        raise fail(
            f'{what} must be in a memory space: "sram" or a system memory\'s name such as '
            f'"ddr", got {value_type.memory_space}'
        )
    if value_type.element_type not in ELEMENT_TYPES:
        raise fail(
            f"{what} must hold i8, ui8, i16, i32, i64 or f32 elements, got "
            f"{value_type.element_type}"
        )
    return value_type


def buffer(value: SSAValue) -> MemRefType:
    """The (verified) buffer type of an operand."""
    assert isinstance(value.type, MemRefType), "the verifier checked the buffer types"
    return value.type


def shape_of(value: SSAValue) -> tuple[int, ...]:
    """The static shape of a buffer operand."""
    return tuple(buffer(value).get_shape())


def element_of(value: SSAValue) -> Attribute:
    """The element type of a buffer operand."""
    return buffer(value).element_type


def storage_range(element_type: Attribute) -> tuple[int, int]:
    """The range of an integer element type."""
    assert isinstance(element_type, IntegerType)
    bits = element_type.width.data
    if element_type.signedness.data == Signedness.UNSIGNED:
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def check_number(props: Props, name: str, element_type: Attribute, what: str) -> None:
    """An int-or-float property fits `element_type` (an integer in range, or f32)."""
    value = props.attr(name)
    if value is None:
        return
    if isinstance(value, FloatAttr):
        if element_type != f32:
            raise fail(f"'{name}' of {what} is a float, but {what} holds {element_type}")
        return
    assert isinstance(value, IntegerAttr)
    if element_type == f32:
        return
    low, high = storage_range(element_type)
    if not low <= value.value.data <= high:
        raise fail(
            f"'{name}' {value.value.data} is outside the range [{low}, {high}] of {element_type}"
        )


def check_in_range(props: Props, name: str, element_type: Attribute, default: int = 0) -> int:
    """An integer property (a zero point) lies in the range of `element_type`."""
    value = props.int(name)
    value = default if value is None else value
    if isinstance(element_type, IntegerType):
        low, high = storage_range(element_type)
        if not low <= value <= high:
            raise fail(f"'{name}' {value} is outside the range [{low}, {high}] of {element_type}")
    return value


def check_clamp(props: Props, element_type: Attribute) -> tuple[int, int]:
    """The clamp bounds (defaulting to the storage range), ordered within that range."""
    low, high = storage_range(element_type)
    clamp_min, clamp_max = props.int("clamp_min"), props.int("clamp_max")
    clamp_min = low if clamp_min is None else clamp_min
    clamp_max = high if clamp_max is None else clamp_max
    if not low <= clamp_min <= clamp_max <= high:
        raise fail(
            f"clamp bounds [{clamp_min}, {clamp_max}] are not an ordered part of the "
            f"range [{low}, {high}] of {element_type}"
        )
    return clamp_min, clamp_max


def check_rank(value: SSAValue, rank: int, what: str) -> tuple[int, ...]:
    """The shape of a buffer operand, which must have `rank` dimensions."""
    shape = shape_of(value)
    if len(shape) != rank:
        raise fail(f"{what} must have rank {rank}, got {buffer(value)}")
    return shape


def check_window(
    name: str, out: int, input_size: int, kernel: int, stride: int, dilation: int
) -> None:
    """`out` windows of `kernel` taps read at most `input_size` input rows (or columns)."""
    needed = (out - 1) * stride + (kernel - 1) * dilation + 1
    if needed > input_size:
        raise fail(
            f"{out} output {name} need (out - 1) * stride + (kernel - 1) * dilation + 1 = "
            f"{needed} input {name}, but the input box has {input_size}"
        )


def check_pair(props: Props, name: str, default: int) -> list[int]:
    """A two-entry window property (strides, dilations), positive, defaulted."""
    values = props.ints(name) or [default, default]
    if len(values) != 2 or any(v < 1 for v in values):
        raise fail(f"'{name}' must be two positive integers, got {values}")
    return values


# --------------------------------------------------------------------------------------
# The base op


class TileOp(IRDLOperation):
    """Base class of `tile` ops: buffer checks, `nn`-style properties and syntax.

    The default syntax lists the operands, the non-default properties in a
    dictionary, and the operand types: `tile.fill %b {value = 0} : memref<4xi32, "sram">`.
    Subclasses override `check` for their own rules.
    """

    SORTED_ENTRIES: ClassVar[bool] = True
    """Its properties and attributes print sorted by name (`print_entries`)."""

    def props(self) -> Props:
        """The op's properties with defaults filled in."""
        return Props(type(self), dict(self.properties))

    def check(self, props: Props) -> None:
        """Op-specific checks; raise `fail(...)` on error."""

    def check_buffer(self, buffer_type: MemRefType, what: str) -> None:
        """The checks of a buffer operand or result (`check_buffer_type`)."""
        check_buffer_type(buffer_type, what)

    def verify_(self) -> None:
        for index, operand in enumerate(self.operands):
            if isinstance(operand.type, MemRefType):
                self.check_buffer(operand.type, f"operand #{index}")
        for index, result in enumerate(self.results):
            if isinstance(result.type, MemRefType):
                self.check_buffer(result.type, f"result #{index}")
        self.check(self.props())

    # ---- syntax --------------------------------------------------------------------------

    def print_properties(self, printer: Printer, skip: Sequence[str] = ()) -> None:
        print_entries(self, printer, (SEGMENTS, *skip))

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_operand)
        self.print_properties(printer)
        printer.print_string(" : ")
        printer.print_list([operand.type for operand in self.operands], printer.print_attribute)

    @classmethod
    def _parse_entries(cls, parser: Parser) -> tuple[dict[str, Attribute], dict[str, Attribute]]:
        entries_at = parser.pos
        entries = parser.parse_optional_attr_dict()
        return split_entries(cls, parser, entries, entries_at)

    @classmethod
    def parse(cls, parser: Parser) -> TileOp:
        start = parser.pos
        unresolved = parser.parse_comma_separated_list(
            parser.Delimiter.NONE, parser.parse_unresolved_operand
        )
        properties, attributes = cls._parse_entries(parser)
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        operands = parser.resolve_operands(unresolved, types, start)
        return cls.create(operands=list(operands), properties=properties, attributes=attributes)


def _parse_indices(parser: Parser) -> list[UnresolvedOperand]:
    """`[%a, %b]` (possibly empty) as unresolved index operands."""
    return parser.parse_comma_separated_list(
        parser.Delimiter.SQUARE, parser.parse_unresolved_operand
    )


def _print_indices(printer: Printer, values: Sequence[SSAValue]) -> None:
    printer.print_string("[")
    printer.print_list(values, printer.print_operand)
    printer.print_string("]")


# --------------------------------------------------------------------------------------
# Buffers


@irdl_op_definition
class AllocOp(TileOp):
    """Allocate a buffer in DDR or SRAM, filled with zeros.

    `offset` is the buffer's byte offset in its memory once memory is planned. A
    double-buffered SRAM buffer has a second copy at `alternate`: the command stream
    puts each new tile in the copy the previous one is not in, so that the next
    tile's loads overlap this one's compute.

        %acc = tile.alloc {offset = 4096} : memref<1x4x12x16xi32, "sram">
        %box = tile.alloc {alternate = 12992, offset = 0} : memref<1x7x58x32xi8, "sram">
    """

    name = "tile.alloc"
    result = result_def(MemRefType)
    offset = int_prop()
    alternate = int_prop()

    def check(self, props: Props) -> None:
        for name in ("offset", "alternate"):
            value = props.int(name)
            if value is not None and value < 0:
                raise fail(f"'{name}' must not be negative, got {value}")
        if props.int("alternate") is not None and props.int("offset") is None:
            raise fail("a buffer with an 'alternate' copy needs its 'offset'")

    def print(self, printer: Printer) -> None:
        self.print_properties(printer)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> AllocOp:
        properties, attributes = cls._parse_entries(parser)
        parser.parse_punctuation(":")
        result_type = parser.parse_type()
        return cls.create(result_types=[result_type], properties=properties, attributes=attributes)


@irdl_op_definition
class OnCoreOp(TileOp):
    """Run the ops of the body on NPU core `core`: its loads and stores on that core's
    DMA queues, its compute on its MAC array and vector unit, its SRAM buffers (the
    body's `tile.alloc`s in `sram`) in that core's own SRAM. A layer split across
    cores is one `tile.on_core` per core, each over its share of the tiles; ops outside
    any run on core 0. Functionally the body runs in place, in program order.

        tile.on_core 1 {
          %box = tile.alloc {offset = 0} : memref<1x4x56x32xi8, "sram">
          ...
        }
    """

    name = "tile.on_core"
    core = int_prop()
    body = region_def("single_block")
    traits = traits_def(NoTerminator())

    def check(self, props: Props) -> None:
        core = props.int("core")
        if core is None or core < 0:
            raise fail(f"tile.on_core needs 'core', a non-negative integer, got {core}")
        for op in self.body.walk():
            if isinstance(op, OnCoreOp) and op is not self:
                raise fail("a tile.on_core holds no other tile.on_core")

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.props().int('core')} ")
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)

    @classmethod
    def parse(cls, parser: Parser) -> OnCoreOp:
        core = parser.parse_integer()
        region = parser.parse_region()
        if not region.blocks:
            region.add_block(Block())
        return cls.create(properties={"core": IntegerAttr(core, i64)}, regions=[region])

    @classmethod
    def build_on(cls, core: int, ops: Sequence[Operation]) -> OnCoreOp:
        """The region of `ops` on `core`."""
        return cls.create(
            properties={"core": IntegerAttr(core, i64)}, regions=[Region(Block(list(ops)))]
        )


def _check_boundary(tensor: Attribute, memref: Attribute) -> None:
    """A tensor and a buffer in a system memory of the same shape whose elements are
    stored alike."""
    if not isinstance(tensor, TensorType):
        raise fail(f"expected a tensor, got {tensor}")
    assert isinstance(memref, MemRefType)
    if not in_system_memory(memref):
        raise fail(f'the buffer must be in a system memory (such as "ddr"), got {memref}')
    if tuple(tensor.get_shape()) != tuple(memref.get_shape()):
        raise fail(f"{tensor} and {memref} differ in shape")
    element = tensor.get_element_type()
    quantized = quantized_element(tensor)
    stored = quantized.storage_type if quantized is not None else element
    if stored != memref.element_type:
        raise fail(
            f"the tensor's elements are stored as {stored}, the buffer holds {memref.element_type}"
        )


class _BoundaryOp(TileOp):
    """Shared syntax of `tile.to_buffer` and `tile.to_tensor`: `%v : A to B`."""

    source = operand_def(base(TensorType) | base(MemRefType))
    result = result_def(base(TensorType) | base(MemRefType))

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.source)
        self.print_properties(printer)
        printer.print_string(" : ")
        printer.print_attribute(self.source.type)
        printer.print_string(" to ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> _BoundaryOp:
        start = parser.pos
        unresolved = parser.parse_unresolved_operand()
        properties, attributes = cls._parse_entries(parser)
        parser.parse_punctuation(":")
        source_type = parser.parse_type()
        parser.parse_keyword("to")
        result_type = parser.parse_type()
        (source,) = parser.resolve_operands([unresolved], [source_type], start)
        return cls.create(
            operands=[source],
            result_types=[result_type],
            properties=properties,
            attributes=attributes,
        )


@irdl_op_definition
class ToBufferOp(_BoundaryOp):
    """A new DDR buffer holding a copy of a tensor (its storage integers if quantized).

    The tensor's shape is the buffer's, and its elements are stored as the buffer's.
    `offset` is the buffer's byte offset once DDR is planned: in the activation arena
    for a function argument or a host op's result, in the read-only weights region
    for a constant.

        %x = tile.to_buffer %input : tensor<1x12x12x8x!quant.uniform<i8:f32, 0.1:-3>>
               to memref<1x12x12x8xi8, "ddr">
    """

    name = "tile.to_buffer"
    offset = int_prop()

    def check(self, props: Props) -> None:
        if not isinstance(self.result.type, MemRefType):
            raise fail(f"the result must be a memref, got {self.result.type}")
        _check_boundary(self.source.type, self.result.type)
        offset = props.int("offset")
        if offset is not None and offset < 0:
            raise fail(f"'offset' must not be negative, got {offset}")


@irdl_op_definition
class ToTensorOp(_BoundaryOp):
    """A tensor holding a copy of a DDR buffer (read as storage integers if quantized).

    The tensor's shape is the buffer's, and its elements are stored as the buffer's:

        %y = tile.to_tensor %out : memref<1x12x12x16xi8, "ddr">
               to tensor<1x12x12x16x!quant.uniform<i8:f32, 0.2:5>>
    """

    name = "tile.to_tensor"

    def check(self, props: Props) -> None:
        if not isinstance(self.source.type, MemRefType):
            raise fail(f"the operand must be a memref, got {self.source.type}")
        _check_boundary(self.result.type, self.source.type)


@irdl_op_definition
class ViewOp(_BoundaryOp):
    """The same buffer seen with another static shape (a zero-copy reshape).

    The result aliases the whole source: same memory space, element type and number
    of elements, row-major order kept. Writing through either writes both:

        %rows = tile.view %x : memref<1x4x4x8xi8, "ddr"> to memref<16x8xi8, "ddr">
    """

    name = "tile.view"

    def check(self, props: Props) -> None:
        source, result = self.source.type, self.result.type
        if not isinstance(source, MemRefType) or not isinstance(result, MemRefType):
            raise fail(f"a view takes a memref to a memref, got {source} to {result}")
        if space_of(source) != space_of(result) or source.element_type != result.element_type:
            raise fail(f"{source} and {result} differ in memory space or element type")
        if math.prod(source.get_shape()) != math.prod(result.get_shape()):
            raise fail(f"{source} and {result} differ in their number of elements")


def rolling_axis(rolling: Sequence[int], shape: Sequence[int]) -> int:
    """The axis along which a rolling buffer of `shape` holds part of a tensor of shape
    `rolling` (the one where the tensor is longer); -1 if it holds all of it."""
    longer = [axis for axis, (n, size) in enumerate(zip(rolling, shape)) if n != size]
    return longer[0] if longer else -1


def _check_rolling(side: str, rolling: Sequence[int], buffer_type: MemRefType) -> None:
    shape = buffer_type.get_shape()
    if len(rolling) != len(shape):
        raise fail(f"'{side}_rolling' must give {len(shape)} sizes, got {list(rolling)}")
    if space_of(buffer_type) != SRAM_SPACE:
        raise fail(f"a rolling {side} is an SRAM buffer, got {buffer_type}")
    longer = [axis for axis, (n, size) in enumerate(zip(rolling, shape)) if n != size]
    if len(longer) > 1 or any(rolling[axis] < shape[axis] for axis in longer):
        raise fail(
            f"'{side}_rolling' {list(rolling)} must equal the buffer's shape {list(shape)} "
            "but along one axis, where it is longer"
        )


@irdl_op_definition
class CopyOp(TileOp):
    """Copy a box of `sizes` elements from `source` at offsets to `dest` at offsets.

    There is one `index` offset per dimension on each side. The source box may start
    at negative offsets or run past the end of `source`: its elements outside
    `source` are written as `pad` (default 0). This is how the padding of a conv or
    a pool is materialised (with the input zero point, or the storage minimum for
    max pooling). The destination box must lie inside `dest`; otherwise running
    the op is an error naming the buffer and the box.

        tile.copy %x[%c0, %top, %cm1, %c0] to %box[%c0, %c0, %c0, %c0]
            sizes [1, 6, 14, 8] {pad = -3}
            : memref<1x12x12x8xi8, "ddr"> to memref<1x6x14x8xi8, "sram">

    With `upsample` (one factor per dimension), the source is read as if `f - 1`
    elements of `pad` stood between consecutive elements along a dimension of factor
    `f`: source element `i` is at position `i * f`, and the source offsets are
    positions. This is the zero insertion of a transposed convolution: its input box
    is copied upsampled, and a stride-1 conv runs over it.

        tile.copy %x[%c0, %cm2, %cm2, %c0] to %box[%c0, %c0, %c0, %c0]
            sizes [1, 9, 9, 8] {pad = -3, upsample = [1, 2, 2, 1]}
            : memref<1x4x4x8xi8, "ddr"> to memref<1x9x9x8xi8, "sram">

    A side with `source_rolling` (or `dest_rolling`) is a **rolling buffer**: an SRAM
    buffer holding a window of rows of a larger tensor of that shape (a cascade's
    intermediate tensor, docs/tiling.md). Its offsets are the tensor's: along the one
    axis where the tensor is longer than the buffer, element `i` lives at `i` modulo
    the buffer's length, so a box may wrap around its end; padding is what lies
    outside the tensor. The producer writes rows at their own offsets and the
    consumer reads its halo box from there, the rows it still needs never
    overwritten (the cascade sizes the buffer for that).

        tile.copy %t[%c0, %top, %cm1, %c0] to %box[%c0, %c0, %c0, %c0]
            sizes [1, 6, 58, 64] {pad = -3, source_rolling = [1, 56, 56, 64]}
            : memref<1x10x56x64xi8, "sram"> to memref<1x6x58x64xi8, "sram">

    With `broadcast = n`, a copy into SRAM writes the box into the SRAM of each of the
    first `n` cores, at the same place (a layer split over output channels in lock
    step loads each input tile once for all its cores; `Cores.broadcast_loads`).
    Functionally it is one copy: the tile level has one buffer per `tile.alloc`.
    """

    name = "tile.copy"
    source = operand_def(MemRefType)
    dest = operand_def(MemRefType)
    source_offsets = var_operand_def(IndexType)
    dest_offsets = var_operand_def(IndexType)
    sizes = prop_def(ints_constraint())
    pad = _number_prop(0)
    upsample = ints_prop()
    source_rolling = ints_prop()
    dest_rolling = ints_prop()
    broadcast = int_prop()
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def check(self, props: Props) -> None:
        source_type, dest_type = buffer(self.source), buffer(self.dest)
        broadcast = props.int("broadcast")
        if broadcast is not None and (
            broadcast < 2
            or space_of(dest_type) != SRAM_SPACE
            or props.ints("dest_rolling") is not None
        ):
            raise fail(
                f"'broadcast' copies into an SRAM buffer (not a rolling one) of 2 or more "
                f"cores, got {broadcast} into {dest_type}"
            )
        for side, buffer_type in (("source", source_type), ("dest", dest_type)):
            rolling = props.ints(f"{side}_rolling")
            if rolling is not None:
                _check_rolling(side, rolling, buffer_type)
        if props.ints("source_rolling") is not None and props.ints("dest_rolling") is not None:
            raise fail("a copy reads or writes one rolling buffer, not two")
        rank = len(source_type.get_shape())
        if len(dest_type.get_shape()) != rank:
            raise fail(f"source {source_type} and destination {dest_type} differ in rank")
        if source_type.element_type != dest_type.element_type:
            raise fail(f"source {source_type} and destination {dest_type} differ in element type")
        for what, offsets in (("source", self.source_offsets), ("destination", self.dest_offsets)):
            if len(offsets) != rank:
                raise fail(f"the {what} needs {rank} offsets, got {len(offsets)}")
        sizes = props.ints("sizes") or []
        if len(sizes) != rank or any(size < 1 for size in sizes):
            raise fail(f"'sizes' must be {rank} positive integers, got {sizes}")
        dest_shape = dest_type.get_shape()
        if any(size > extent for size, extent in zip(sizes, dest_shape)):
            raise fail(f"a box of sizes {sizes} does not fit in the destination {dest_type}")
        check_number(props, "pad", source_type.element_type, "the source")
        upsample = props.ints("upsample")
        if upsample is not None and (len(upsample) != rank or min(upsample) < 1):
            raise fail(f"'upsample' must be {rank} positive factors, got {upsample}")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.source)
        _print_indices(printer, self.source_offsets)
        printer.print_string(" to ")
        printer.print_operand(self.dest)
        _print_indices(printer, self.dest_offsets)
        printer.print_string(" sizes ")
        print_value(printer, self.sizes)
        self.print_properties(printer, skip=("sizes",))
        printer.print_string(" : ")
        printer.print_attribute(self.source.type)
        printer.print_string(" to ")
        printer.print_attribute(self.dest.type)

    @classmethod
    def parse(cls, parser: Parser) -> CopyOp:
        start = parser.pos
        source = parser.parse_unresolved_operand()
        source_offsets = _parse_indices(parser)
        parser.parse_keyword("to")
        dest = parser.parse_unresolved_operand()
        dest_offsets = _parse_indices(parser)
        parser.parse_keyword("sizes")
        sizes = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)
        properties, attributes = cls._parse_entries(parser)
        parser.parse_punctuation(":")
        source_type = parser.parse_type()
        parser.parse_keyword("to")
        dest_type = parser.parse_type()
        index = IndexType()
        operands = parser.resolve_operands(
            [source, dest, *source_offsets, *dest_offsets],
            [source_type, dest_type, *[index] * (len(source_offsets) + len(dest_offsets))],
            start,
        )
        properties["sizes"] = DenseArrayBase.from_list(i64, sizes)
        return cls.create(
            operands=list(operands),
            properties={
                **properties,
                SEGMENTS: DenseArrayBase.from_list(
                    IntegerType(32), [1, 1, len(source_offsets), len(dest_offsets)]
                ),
            },
            attributes=attributes,
        )


class FillFields(TileOp):
    """The operands, properties and checks of `tile.fill`, which the `npu`
    command of the same name shares."""

    target = operand_def(MemRefType)
    value = _number_prop()

    def check(self, props: Props) -> None:
        if props.attr("value") is None:
            raise fail(f"'{self.name}' requires property 'value'")
        check_number(props, "value", element_of(self.target), "the buffer")


@irdl_op_definition
class FillOp(FillFields):
    """Set every element of a buffer to `value` (an integer, or a float for f32).

    The value must fit the buffer's element type:

        tile.fill %acc {value = 0} : memref<1x4x12x16xi32, "sram">
    """

    name = "tile.fill"


# --------------------------------------------------------------------------------------
# Compute on tiles


def _check_accumulator(
    inputs: Sequence[Attribute],
    weight: Attribute,
    acc: Attribute,
    what: str,
    weights: Sequence[Attribute] = (i8,),
) -> bool:
    """Integer operands (i8/ui8/i16 inputs, a weight of `weights`; an i32 accumulator,
    or a wide i64 one when an operand is i16) or float ones (all f32).

    Returns True for a float op.
    """
    if all(t == f32 for t in (*inputs, weight, acc)):
        return True
    if all(t in ACTIVATIONS for t in inputs) and weight in weights:
        wide = i16 in (*inputs, weight)
        if acc == (i64 if wide else i32):
            return False
        raise fail(
            f"{what} of {'16' if wide else '8'}-bit operands accumulates in "
            f"{'i64' if wide else 'i32'}, got {acc}"
        )
    listed = ", ".join(str(t) for t in (*inputs, weight, acc))
    allowed = " or ".join(str(t) for t in weights)
    raise fail(
        f"{what} takes i8, ui8 or i16 inputs with {allowed} weights and an i32 (i64 for "
        f"16-bit operands) accumulator, or all f32; got {listed}"
    )


class ConvFields(TileOp):
    """The operands, properties and checks of `tile.conv`, which the `npu`
    command of the same name shares."""

    input = operand_def(MemRefType)
    weight = operand_def(MemRefType)
    acc = operand_def(MemRefType)
    strides = ints_prop()
    dilations = ints_prop()
    group = int_prop(1)
    input_zero_point = int_prop(0)
    accumulate = bool_prop(False)

    def check(self, props: Props) -> None:
        _check_accumulator(
            [element_of(self.input)], element_of(self.weight), element_of(self.acc), self.name
        )
        check_in_range(props, "input_zero_point", element_of(self.input))
        batch, in_h, in_w, channels = check_rank(self.input, 4, "the input")
        out_channels, kernel_h, kernel_w, group_channels = check_rank(self.weight, 4, "the weight")
        acc_batch, out_h, out_w, acc_channels = check_rank(self.acc, 4, "the accumulator")
        group = props.int("group") or 1
        if group < 1 or channels % group or out_channels % group:
            raise fail(
                f"group {group} does not divide the {channels} input and {out_channels} "
                "output channels"
            )
        if group_channels != channels // group:
            raise fail(
                f"the weight has {group_channels} channels per group, expected "
                f"{channels} / {group} = {channels // group}"
            )
        if (acc_batch, acc_channels) != (batch, out_channels):
            raise fail(
                f"the accumulator {buffer(self.acc)} must have batch {batch} and "
                f"{out_channels} channels"
            )
        strides, dilations = check_pair(props, "strides", 1), check_pair(props, "dilations", 1)
        check_window("rows", out_h, in_h, kernel_h, strides[0], dilations[0])
        check_window("columns", out_w, in_w, kernel_w, strides[1], dilations[1])


@irdl_op_definition
class ConvOp(ConvFields):
    """Convolve an NHWC input box into an accumulator tile (no padding: it is in the box).

    input [N, IH, IW, C], weight [O, KH, KW, C / group] (symmetric: zero point 0),
    acc [N, OH, OW, O]:

        acc[n, y, x, o] = (accumulate ? acc[n, y, x, o] : 0)
            + sum over (ky, kx, c) of (input[n, y * sy + ky * dy, x * sx + kx * dx, g * C/group + c]
                                       - input_zero_point) * weight[o, ky, kx, c]

    with g the group of output channel o. Integer sums are exact and saturated to
    int32, or for a 16-bit input to the 48-bit range of its wide i64 accumulator (as
    `qnn.conv`); a float conv (all f32) ignores `input_zero_point`.

        tile.conv %box, %w, %acc {accumulate = true, input_zero_point = -3}
            : memref<1x6x14x4xi8, "sram">, memref<16x3x3x4xi8, "sram">,
              memref<1x4x12x16xi32, "sram">
    """

    name = "tile.conv"


class MatmulFields(TileOp):
    """The operands, properties and checks of `tile.matmul`, which the `npu`
    command of the same name shares."""

    a = operand_def(MemRefType)
    b = operand_def(MemRefType)
    acc = operand_def(MemRefType)
    a_zero_point = int_prop(0)
    b_zero_point = int_prop(0)
    trans_b = bool_prop(False)
    accumulate = bool_prop(False)

    def check(self, props: Props) -> None:
        _check_accumulator(
            [element_of(self.a)],
            element_of(self.b),
            element_of(self.acc),
            self.name,
            weights=(i8, i16),
        )
        check_in_range(props, "a_zero_point", element_of(self.a))
        check_in_range(props, "b_zero_point", element_of(self.b))
        rows, depth = check_rank(self.a, 2, "a")
        b_shape = check_rank(self.b, 2, "b")
        b_depth, columns = reversed(b_shape) if props.bool("trans_b") else b_shape
        if b_depth != depth:
            raise fail(f"a has {depth} columns but b has {b_depth} rows (after trans_b)")
        if check_rank(self.acc, 2, "the accumulator") != (rows, columns):
            raise fail(f"the accumulator must be {rows}x{columns}, got {buffer(self.acc)}")


@irdl_op_definition
class MatmulOp(MatmulFields):
    """Multiply a [M, K] tile by a [K, N] tile (or [N, K] with `trans_b`) into acc [M, N].

    The product is added to the accumulator or replaces it:

        acc = (accumulate ? acc : 0) + (a - a_zero_point) @ (trans_b ? (b - b_zero_point)^T : (b - b_zero_point))

    b is weights (symmetric: zero point 0) or another layer's activations, with their
    zero point (8-bit, or 16-bit for an int16 activation). Integer sums are exact and
    saturated to int32, or to 48 bits in the wide i64 accumulator of 16-bit operands;
    a float matmul (all f32) ignores the zero points.

        tile.matmul %a, %b, %acc {accumulate = true, a_zero_point = 4}
            : memref<8x16xi8, "sram">, memref<16x32xi8, "sram">, memref<8x32xi32, "sram">
    """

    name = "tile.matmul"


@irdl_op_definition
class BiasAddOp(TileOp):
    """Add a bias along the last axis of an accumulator, in place: acc += bias.

    The bias is [C] for an accumulator [..., C]; i32 (saturating to int32), i64 (a wide
    accumulator, saturating to 48 bits) or f32.

        tile.bias_add %acc, %bias : memref<1x4x12x16xi32, "sram">, memref<16xi32, "sram">
    """

    name = "tile.bias_add"
    acc = operand_def(MemRefType)
    bias = operand_def(MemRefType)

    def check(self, props: Props) -> None:
        acc_element, bias_element = element_of(self.acc), element_of(self.bias)
        if acc_element not in (i32, i64, f32) or bias_element != acc_element:
            raise fail(
                f"the accumulator and the bias must both be i32, both i64 or both f32, got "
                f"{acc_element} and {bias_element}"
            )
        channels = shape_of(self.acc)[-1] if shape_of(self.acc) else 1
        if shape_of(self.bias) != (channels,):
            raise fail(
                f"the bias must be [{channels}] for {buffer(self.acc)}, got {buffer(self.bias)}"
            )


class RequantizeFields(TileOp):
    """The operands, properties and checks of `tile.requantize`, which the `npu`
    command of the same name shares."""

    acc = operand_def(MemRefType)
    params = operand_def(MemRefType)
    output = operand_def(MemRefType)
    input_zero_point = int_prop(0)
    output_zero_point = int_prop(0)
    clamp_min = int_prop()
    clamp_max = int_prop()
    rounding = rounding_prop()

    def check(self, props: Props) -> None:
        if check_rounding(props) != fixed_point.HALF_EVEN and element_of(self.acc) == i64:
            raise fail("a wide (i64) accumulator is requantized half to even")
        if element_of(self.acc) not in (i32, i64, *ACTIVATIONS) or element_of(self.params) != i32:
            raise fail(
                f"the input must be i32, i64, i8, ui8 or i16 and the parameters i32, got "
                f"{element_of(self.acc)} and {element_of(self.params)}"
            )
        check_in_range(props, "input_zero_point", element_of(self.acc))
        output_element = element_of(self.output)
        if output_element not in ACTIVATIONS:
            raise fail(f"the output must be i8, ui8 or i16, got {output_element}")
        shape = shape_of(self.acc)
        if shape_of(self.output) != shape:
            raise fail(f"the output {buffer(self.output)} differs in shape from {buffer(self.acc)}")
        channels = shape[-1] if shape else 1
        params_shape = shape_of(self.params)
        if params_shape not in ((channels, 2), (1, 2)):
            raise fail(
                f"the parameters must be [{channels}, 2] or [1, 2] (multiplier, shift), "
                f"got {buffer(self.params)}"
            )
        check_in_range(props, "output_zero_point", output_element)
        check_clamp(props, output_element)


@irdl_op_definition
class RequantizeOp(RequantizeFields):
    """Requantize an i32 or wide i64 accumulator (or an 8- or 16-bit tile) into an 8- or
    16-bit tile, per channel of the last axis.

    params is [C, 2] i32 holding (multiplier, shift) for each of the C channels of the
    last axis, or [1, 2] for the whole tile:

        out = clamp(fixed_point_multiply(acc - input_zero_point, M, s) + output_zero_point,
                    clamp_min, clamp_max)

    rounding half to even (or by `rounding`, one of TFLite's rules), exactly
    `qnn.requantize` (irc/ir/fixed_point.py); an 8- or 16-bit input less its zero
    point is a standalone rescale (of a concat input, say).
    A wide i64 accumulator (of 16-bit activations) is scaled by the 16-bit multiplier
    round(M / 2^16) and a right shift of 15 + s (`fixed_point.wide_fixed_point_multiply`),
    which needs s >= -14. The
    clamp defaults to the output's storage range. Invalid (M, s) pairs in params are
    an error when the op runs.

        tile.requantize %acc, %params, %out {output_zero_point = 5}
            : memref<1x4x12x16xi32, "sram">, memref<16x2xi32, "sram">,
              memref<1x4x12x16xi8, "sram">
    """

    name = "tile.requantize"


POOL_KINDS = ("max", "average")

POOL_ROUNDINGS = (*fixed_point.ROUNDINGS, "half_away")
"""The rounding rules of an average pool: `qnn.average_pool`'s (half_even, TFLite's
half_away of the stored values) and `qnn.global_average_pool`'s (TFLite's integer
mean: the count folded into the multiplier, then that multiply's rounding)."""


class OriginFields(TileOp):
    """The syntax of a tile op of an input, an output and the tile's origin in the
    whole layer (`index` operands, possibly none), which `tile.pool` and
    `tile.resize` share: `%in, %out[%a, %b] {...} : type, type`."""

    input = operand_def(MemRefType)
    output = operand_def(MemRefType)
    origin = var_operand_def(IndexType)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.input)
        printer.print_string(", ")
        printer.print_operand(self.output)
        if self.origin:
            _print_indices(printer, self.origin)
        self.print_properties(printer)
        printer.print_string(" : ")
        printer.print_list([self.input.type, self.output.type], printer.print_attribute)

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        start = parser.pos
        source = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        output = parser.parse_unresolved_operand()
        origin: list[UnresolvedOperand] = []
        if parser.parse_optional_punctuation("[") is not None:
            origin = parser.parse_comma_separated_list(
                parser.Delimiter.NONE, parser.parse_unresolved_operand
            )
            parser.parse_punctuation("]")
        properties, attributes = cls._parse_entries(parser)
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        if len(types) != 2:
            parser.raise_error("expected the input and output types", start)
        operands = parser.resolve_operands(
            [source, output, *origin], [*types, *[IndexType()] * len(origin)], start
        )
        return cls.create(operands=list(operands), properties=properties, attributes=attributes)


class PoolFields(OriginFields):
    """The operands, properties and checks of `tile.pool`, which the `npu`
    command of the same name shares."""

    kind = prop_def(StringAttr)
    kernel_shape = prop_def(ints_constraint())
    strides = ints_prop()
    dilations = ints_prop()
    pads = ints_prop()
    input_h = int_prop()
    input_w = int_prop()
    count_include_pad = bool_prop(False)
    input_zero_point = int_prop(0)
    output_zero_point = int_prop(0)
    multiplier = int_prop(fixed_point.IDENTITY_MULTIPLIER[0])
    shift = int_prop(fixed_point.IDENTITY_MULTIPLIER[1])
    rounding = rounding_prop()
    bias = int_prop()

    def check(self, props: Props) -> None:
        rounding = check_rounding(props, allowed=POOL_ROUNDINGS)
        if rounding != fixed_point.HALF_EVEN and element_of(self.input) == f32:
            raise fail("a float average has no rounding")
        if props.int("bias") is not None and rounding not in fixed_point.TFLITE_ROUNDINGS:
            raise fail("a 'bias' (TFLite's mean of stored values) takes one of its roundings")
        kind = props.str("kind")
        if kind not in POOL_KINDS:
            raise fail(f'\'kind\' must be "max" or "average", got "{kind}"')
        input_element, output_element = element_of(self.input), element_of(self.output)
        if input_element != output_element or input_element not in (*ACTIVATIONS, f32):
            raise fail(
                f"input and output must both be i8, ui8, i16 or f32, got {input_element} and "
                f"{output_element}"
            )
        batch, in_h, in_w, channels = check_rank(self.input, 4, "the input")
        out_batch, out_h, out_w, out_channels = check_rank(self.output, 4, "the output")
        if (out_batch, out_channels) != (batch, channels):
            raise fail(
                f"the output {buffer(self.output)} must have batch {batch} and {channels} channels"
            )
        kernel = props.ints("kernel_shape") or []
        if len(kernel) != 2 or any(k < 1 for k in kernel):
            raise fail(f"'kernel_shape' must be two positive integers, got {kernel}")
        strides, dilations = check_pair(props, "strides", 1), check_pair(props, "dilations", 1)
        check_window("rows", out_h, in_h, kernel[0], strides[0], dilations[0])
        check_window("columns", out_w, in_w, kernel[1], strides[1], dilations[1])
        if len(self.origin) not in (0, 2):
            raise fail(f"the output origin has 2 indices [%oy, %ox], got {len(self.origin)}")
        if kind == "max":
            return
        if len(self.origin) != 2:
            raise fail("average pooling needs the tile's output origin [%oy, %ox]")
        pads = props.ints("pads") or [0, 0, 0, 0]
        if len(pads) != 4 or any(p < 0 for p in pads):
            raise fail(f"'pads' must be four non-negative integers, got {pads}")
        for name in ("input_h", "input_w"):
            size = props.int(name)
            if size is None or size < 1:
                raise fail(f"average pooling needs a positive '{name}' (the unpadded input)")
        check_in_range(props, "input_zero_point", input_element)
        check_in_range(props, "output_zero_point", output_element)
        multiplier, shift = props.int("multiplier"), props.int("shift")
        assert multiplier is not None and shift is not None  # the properties have defaults
        problem = fixed_point.check_multiplier(multiplier, shift)
        if problem is not None:
            raise fail(f"'multiplier': {problem}")


@irdl_op_definition
class PoolOp(PoolFields):
    """Max or average pooling of an NHWC input box (padding materialised) into a tile.

    input [N, IH, IW, C] and out [N, OH, OW, C]; `[%oy, %ox]` is the tile's output
    origin in the whole layer's output (`index` operands, needed by average pooling).

    max: out = the largest value of each window; the box's padding must hold the
    storage minimum (or -inf) so that it never wins.

    average: the padding must hold `input_zero_point`. With sum = the sum of
    (x - input_zero_point) over the window and count its taps inside the original
    unpadded input of `input_h` x `input_w` (plus those in the explicit `pads`
    [top, left, bottom, right] with `count_include_pad`; taps past the end padding
    never count), computed from the output position (origin + index in the tile):

        out = clamp(round_half_even(sum * M * 2^-(31 + s) / count) + output_zero_point,
                    storage range)

    exactly `qnn.average_pool` (`fixed_point.divide_round` with `multiplier`, `shift`);
    with `rounding`, TFLite's: "half_away" divides the stored values' sum (the input
    and output zero points are one) with ties away from zero, and the rules of
    `fixed_point.ROUNDINGS` fold the count into the multiplier as TFLite's integer mean
    does (`fixed_point.pool_average`); with `bias`, TFLite's optimized mean of the
    stored values, `fixed_point.tflite_raw_mean` (as `qnn.global_average_pool` says).
    A float average (f32) is sum / count.

        tile.pool %box, %out[%oy, %c0] {kind = "average", kernel_shape = [3, 3],
            pads = [1, 1, 1, 1], input_h = 12, input_w = 12, input_zero_point = -3}
            : memref<1x6x14x8xi8, "sram">, memref<1x4x12x8xi8, "sram">
    """

    name = "tile.pool"


class _ElementwiseOp(TileOp):
    """Elementwise ops on 8- or 16-bit tiles of one shape."""

    def check_same_shapes(
        self,
        operands: Sequence[SSAValue],
        elements: Sequence[Attribute] = ACTIVATIONS,
        broadcast: bool = False,
    ) -> None:
        """Every operand buffer has the last one's (the output's) shape, or with
        `broadcast` the same rank and a size of 1 where it differs; and elements of
        `elements`."""
        shape = shape_of(operands[-1])
        for index, operand in enumerate(operands):
            operand_shape = shape_of(operand)
            broadcasts = len(operand_shape) == len(shape) and all(
                size in (1, extent) for size, extent in zip(operand_shape, shape)
            )
            if operand_shape != shape and not (broadcast and broadcasts):
                raise fail(
                    f"operand #{index} {buffer(operand)} differs in shape from the output "
                    f"{buffer(operands[-1])}" + (" (a size of 1 broadcasts)" if broadcast else "")
                )
            if element_of(operand) not in elements:
                names = " or ".join(str(element) for element in elements)
                raise fail(f"operand #{index} must hold {names}, got {element_of(operand)}")


class QuantizedBinaryFields(_ElementwiseOp):
    """`tile.add` and `tile.mul`: two 8- or 16-bit tiles into a third, with zero points and
    a clamp. An input may have a size of 1 where the output has more (a per-channel
    or per-tensor operand): it broadcasts, as in numpy."""

    lhs = operand_def(MemRefType)
    rhs = operand_def(MemRefType)
    output = operand_def(MemRefType)

    def check_binary(self, props: Props) -> None:
        """Shapes, zero points in range, clamp bounds within the output's range."""
        self.check_same_shapes([self.lhs, self.rhs, self.output], broadcast=True)
        check_in_range(props, "lhs_zero_point", element_of(self.lhs))
        check_in_range(props, "rhs_zero_point", element_of(self.rhs))
        check_in_range(props, "output_zero_point", element_of(self.output))
        check_clamp(props, element_of(self.output))


class AddFields(QuantizedBinaryFields):
    """The operands, properties and checks of `tile.add`, which the `npu`
    command of the same name shares."""

    lhs_zero_point = int_prop(0)
    rhs_zero_point = int_prop(0)
    output_zero_point = int_prop(0)
    lhs_multiplier = prop_def(IntegerAttr.constr(type=I64))
    lhs_shift = prop_def(IntegerAttr.constr(type=I64))
    rhs_multiplier = prop_def(IntegerAttr.constr(type=I64))
    rhs_shift = prop_def(IntegerAttr.constr(type=I64))
    multiplier = prop_def(IntegerAttr.constr(type=I64))
    shift = prop_def(IntegerAttr.constr(type=I64))
    left_shift = int_prop(fixed_point.ADD_LEFT_SHIFT)
    clamp_min = int_prop()
    clamp_max = int_prop()
    input_rounding = rounding_prop()
    rounding = rounding_prop()

    def check(self, props: Props) -> None:
        self.check_binary(props)
        check_rounding(props, "input_rounding")
        check_rounding(props)
        left_shift = props.int("left_shift")
        assert left_shift is not None  # the property has a default
        # The centred inputs, shifted, stay in int32: 9 bits for 8-bit inputs, 17 for 16.
        largest = 15 if i16 in (element_of(self.lhs), element_of(self.rhs)) else 22
        if not 0 <= left_shift <= largest:
            bits = 16 if largest == 15 else 8
            raise fail(
                f"left_shift {left_shift} is outside [0, {largest}] ({bits}-bit inputs in int32)"
            )
        for prefix in ("lhs_", "rhs_", ""):
            multiplier, shift = props.int(prefix + "multiplier"), props.int(prefix + "shift")
            assert multiplier is not None and shift is not None  # required properties
            problem = fixed_point.check_multiplier(multiplier, shift)
            if problem is not None:
                raise fail(f"'{prefix}multiplier': {problem}")


@irdl_op_definition
class AddOp(AddFields):
    """Add two quantized tiles of one shape into a third (TFLite's int8 and int16 ADD, as
    `qnn.add`).

    Each input, less its zero point, is shifted left and rescaled to a common scale,
    and the int32 sum is requantized to the output:

        a = fixed_point_multiply((x - lhs_zero_point) << left_shift, lhs_multiplier, lhs_shift)
        b = fixed_point_multiply((y - rhs_zero_point) << left_shift, rhs_multiplier, rhs_shift)
        out = clamp(fixed_point_multiply(a + b, multiplier, shift) + output_zero_point,
                    clamp_min, clamp_max)

    every multiply rounding half to even, or as `input_rounding` (the inputs') and
    `rounding` (the sum's) say; the clamp defaults to the output's range.

        tile.add %a, %b, %out {lhs_multiplier = 1073741824, lhs_shift = -1, ...}
            : memref<1x2x8x8xi8, "sram">, memref<1x2x8x8xi8, "sram">, memref<1x2x8x8xi8, "sram">
    """

    name = "tile.add"


class MulFields(QuantizedBinaryFields):
    """The operands, properties and checks of `tile.mul`, which the `npu`
    command of the same name shares."""

    lhs_zero_point = int_prop(0)
    rhs_zero_point = int_prop(0)
    output_zero_point = int_prop(0)
    multiplier = prop_def(IntegerAttr.constr(type=I64))
    shift = prop_def(IntegerAttr.constr(type=I64))
    clamp_min = int_prop()
    clamp_max = int_prop()
    rounding = rounding_prop()

    def check(self, props: Props) -> None:
        self.check_binary(props)
        check_rounding(props)
        multiplier, shift = props.int("multiplier"), props.int("shift")
        assert multiplier is not None and shift is not None  # required properties
        problem = fixed_point.check_multiplier(multiplier, shift)
        if problem is not None:
            raise fail(f"'multiplier': {problem}")


@irdl_op_definition
class MulOp(MulFields):
    """Multiply two quantized tiles of one shape into a third (TFLite's int8 MUL, as `qnn.mul`).

        out = clamp(fixed_point_multiply((x - lhs_zero_point) * (y - rhs_zero_point),
                                         multiplier, shift) + output_zero_point,
                    clamp_min, clamp_max)

    rounding half to even (or by `rounding`); the clamp defaults to the output's range.

        tile.mul %a, %b, %out {multiplier = 1518500250, shift = 7}
            : memref<64xi8, "sram">, memref<64xi8, "sram">, memref<64xi8, "sram">
    """

    name = "tile.mul"


class ClampFields(_ElementwiseOp):
    """The operands, properties and checks of `tile.clamp`, which the `npu`
    command of the same name shares."""

    input = operand_def(MemRefType)
    output = operand_def(MemRefType)
    clamp_min = _number_prop()
    clamp_max = _number_prop()

    def check(self, props: Props) -> None:
        self.check_same_shapes([self.input, self.output], (*ACTIVATIONS, f32))
        if element_of(self.input) != element_of(self.output):
            raise fail("input and output must have the same element type")
        if element_of(self.output) == f32:
            low, high = props.attr("clamp_min"), props.attr("clamp_max")
            if low is not None and high is not None and _value(low) > _value(high):
                raise fail(f"clamp_min {_value(low)} is above clamp_max {_value(high)}")
            return
        for name in ("clamp_min", "clamp_max"):
            if isinstance(props.attr(name), FloatAttr):
                raise fail(f"'{name}' of an integer clamp must be an integer")
        check_clamp(props, element_of(self.output))


@irdl_op_definition
class ClampOp(ClampFields):
    """Clamp a tile's stored values to [clamp_min, clamp_max] into another tile.

    On 8- and 16-bit tiles the bounds are stored integers, defaulting to the element type's
    range (relu, relu6 or clip at one scale); on f32 tiles they are numbers, and a
    missing one is unbounded (a float relu is `clamp_min = 0.0`):

        tile.clamp %in, %out {clamp_min = -5} : memref<64xi8, "sram">, memref<64xi8, "sram">
    """

    name = "tile.clamp"


class FloatBinaryFields(_ElementwiseOp):
    """`tile.addf` and `tile.mulf`: two f32 tiles into a third; an input with a size
    of 1 where the output has more broadcasts."""

    lhs = operand_def(MemRefType)
    rhs = operand_def(MemRefType)
    output = operand_def(MemRefType)

    def check(self, props: Props) -> None:
        self.check_same_shapes([self.lhs, self.rhs, self.output], (f32,), broadcast=True)


@irdl_op_definition
class AddFOp(FloatBinaryFields):
    """Add two f32 tiles into a third: out = lhs + rhs (float programs); an input
    with a size of 1 where the output has more broadcasts.

        tile.addf %a, %b, %out
            : memref<64xf32, "sram">, memref<64xf32, "sram">, memref<64xf32, "sram">
    """

    name = "tile.addf"


@irdl_op_definition
class MulFOp(FloatBinaryFields):
    """Multiply two f32 tiles into a third: out = lhs * rhs (float programs); an input
    with a size of 1 where the output has more broadcasts (a per-channel scale).

        tile.mulf %a, %s, %out
            : memref<4x16xf32, "sram">, memref<1x16xf32, "sram">, memref<4x16xf32, "sram">
    """

    name = "tile.mulf"


RESIZE_MODES = ("linear", "nearest")
"""The modes of `tile.resize`."""


class ResizeFields(OriginFields):
    """The operands, properties and checks of `tile.resize`, which the `npu` command of
    the same name shares: an input and output of one element type (8- or 16-bit
    integers for a linear resize, any for a nearest one) and rank, equal but along
    `axes`; one scale per axis. The tile holds the axes whole, or it is a window of
    them: `input_lengths` and `output_lengths` are then the whole tensors' lengths
    along `axes`, and the origin operands the output tile's origin along each axis,
    then the input window's (which may start before the input or end past it: the
    reads stay inside)."""

    axes = prop_def(ints_constraint())
    input_lengths = ints_prop()
    output_lengths = ints_prop()
    scales = prop_def(DenseArrayBase.constr(Float32Type))
    mode = str_prop("linear")
    coordinate_transformation_mode = str_prop("half_pixel")
    nearest_mode = str_prop("round_prefer_floor")

    def check(self, props: Props) -> None:
        from irc.dialects.nn import RESIZE_COORDINATE_MODES, RESIZE_NEAREST_MODES

        mode = props.str("mode")
        if mode not in RESIZE_MODES:
            raise fail(f'\'mode\' must be "linear" or "nearest", got "{mode}"')
        element = element_of(self.input)
        allowed = ACTIVATIONS if mode == "linear" else ELEMENT_TYPES
        if element not in allowed or element_of(self.output) != element:
            what = "i8, ui8 or i16" if mode == "linear" else "element"
            raise fail(
                f"input and output must hold the same {what} type, got {element} and "
                f"{element_of(self.output)}"
            )
        shape, out = shape_of(self.input), shape_of(self.output)
        axes, scales = props.ints("axes") or [], props.floats("scales") or []
        if len(out) != len(shape):
            raise fail(f"the output {buffer(self.output)} must have the input's rank")
        if not axes or len(set(axes)) != len(axes) or any(not 0 <= a < len(shape) for a in axes):
            raise fail(f"'axes' must name distinct axes below the rank {len(shape)}, got {axes}")
        if len(scales) != len(axes) or any(not scale > 0 for scale in scales):
            raise fail(f"'scales' needs one positive scale per axis, got {scales}")
        coordinates = props.str("coordinate_transformation_mode")
        modes = fixed_point.LINEAR_RESIZE_MODES if mode == "linear" else RESIZE_COORDINATE_MODES
        if coordinates not in modes or coordinates == "tf_crop_and_resize":
            listed = ", ".join(m for m in modes if m != "tf_crop_and_resize")
            raise fail(
                f"'coordinate_transformation_mode' of a {mode} resize must be one of "
                f'{listed}; got "{coordinates}"'
            )
        if mode == "nearest" and props.str("nearest_mode") not in RESIZE_NEAREST_MODES:
            raise fail(
                f"'nearest_mode' must be one of {', '.join(RESIZE_NEAREST_MODES)}; got "
                f'"{props.str("nearest_mode")}"'
            )
        for axis, (size, length) in enumerate(zip(shape, out)):
            if axis not in axes and size != length:
                raise fail(
                    f"axis {axis} is not resized but the output {buffer(self.output)} differs "
                    f"there from the input {buffer(self.input)}"
                )
        lengths = props.ints("input_lengths"), props.ints("output_lengths")
        if not self.origin and lengths == (None, None):
            return
        if len(self.origin) != 2 * len(axes) or None in lengths:
            raise fail(
                f"a window of {len(axes)} resized axes needs 'input_lengths', "
                f"'output_lengths' and {2 * len(axes)} origin indices (the output tile's, "
                f"then the input window's), got {len(self.origin)}"
            )
        for name, values, tile_sizes in zip(
            ("input_lengths", "output_lengths"), lengths, (shape, out)
        ):
            assert values is not None
            if len(values) != len(axes) or any(v < 1 for v in values):
                raise fail(f"'{name}' needs one positive length per axis, got {list(values)}")
            if name == "output_lengths" and any(
                tile_sizes[axis] > v for axis, v in zip(axes, values)
            ):
                raise fail(
                    f"the output {buffer(self.output)} is larger than 'output_lengths' "
                    f"{list(values)} along the resized axes"
                )


@irdl_op_definition
class ResizeOp(ResizeFields):
    """Resize a tile along `axes`, which it holds whole, or a window of them. Linear:
    exactly `qnn.resize` (`fixed_point.resize_linear`: ONNX's source coordinates in
    the coordinate mode, Q10 weights for 8-bit values and Q15 for 16-bit ones, the
    weighted sum of the neighbours rounded half to even). Nearest: each output reads
    the input index of ONNX's nearest resize (`nearest_mode`), as `nn.resize`
    computes it: a gather.

    A window (a tile of rows and columns of a resize too large for SRAM): the output
    tile starts at `[%oy, %ox]` of the whole output (`output_lengths` long), the input
    window at `[%iy, %ix]` of the whole input (`input_lengths`); each output reads
    what it reads in the whole resize, at its place in the window, which must hold
    it (an error otherwise).

        tile.resize %in, %out {axes = [1, 2], scales = [2.0, 2.0]}
            : memref<1x4x4x8xi8, "sram">, memref<1x8x8x8xi8, "sram">
        tile.resize %in, %out {axes = [1, 2], mode = "nearest", scales = [1.5, 0.5]}
            : memref<1x4x4x8xi8, "sram">, memref<1x6x2x8xi8, "sram">
        tile.resize %in, %out[%oy, %ox, %iy, %ix] {axes = [1, 2], input_lengths = [64, 64],
                output_lengths = [128, 128], scales = [2.0, 2.0]}
            : memref<1x6x66x8xi8, "sram">, memref<1x8x128x8xi8, "sram">
    """

    name = "tile.resize"


class TransposeFields(TileOp):
    """The operands, properties and checks of `tile.transpose`, which the `npu`
    command of the same name shares."""

    input = operand_def(MemRefType)
    output = operand_def(MemRefType)
    perm = prop_def(ints_constraint())

    def check(self, props: Props) -> None:
        shape = shape_of(self.input)
        perm = props.ints("perm") or []
        if sorted(perm) != list(range(len(shape))):
            raise fail(f"'perm' {perm} is not a permutation of the {len(shape)} axes")
        expected = tuple(shape[axis] for axis in perm)
        if shape_of(self.output) != expected:
            raise fail(
                f"the output must be {list(expected)} (the input's axes in 'perm' order), "
                f"got {buffer(self.output)}"
            )
        if element_of(self.input) != element_of(self.output):
            raise fail("input and output must have the same element type")


@irdl_op_definition
class TransposeOp(TransposeFields):
    """Permute the axes of a tile into another: output axis i is input axis perm[i]
    (as `nn.transpose`); same element type, any rank.

        tile.transpose %in, %out {perm = [0, 2, 1]}
            : memref<2x3x4xi8, "sram">, memref<2x4x3xi8, "sram">
    """

    name = "tile.transpose"


def _value(attribute: Attribute) -> float:
    assert isinstance(attribute, IntegerAttr | FloatAttr)
    return float(attribute.value.data)


class LutFields(TileOp):
    """The operands, properties and checks of `tile.lut`, which the `npu`
    command of the same name shares."""

    input = operand_def(MemRefType)
    table = operand_def(MemRefType)
    output = operand_def(MemRefType)

    def check(self, props: Props) -> None:
        input_element = element_of(self.input)
        if input_element not in ACTIVATIONS:
            raise fail(f"the input must hold i8, ui8 or i16, got {input_element}")
        sixteen = input_element == i16
        entries = fixed_point.LUT16_ENTRIES if sixteen else 256
        if shape_of(self.table) != (entries,):
            raise fail(
                f"the table of {input_element} values must have {entries} entries, got "
                f"{buffer(self.table)}"
            )
        allowed = (i16,) if sixteen else EIGHT_BIT
        if element_of(self.table) not in allowed or element_of(self.output) != element_of(
            self.table
        ):
            raise fail(
                f"the table and the output must hold the same {'16' if sixteen else '8'}-bit "
                f"type, got {element_of(self.table)} and {element_of(self.output)}"
            )
        if shape_of(self.output) != shape_of(self.input):
            raise fail(
                f"the output {buffer(self.output)} differs in shape from {buffer(self.input)}"
            )


@irdl_op_definition
class LutOp(LutFields):
    """Map an 8-bit tile through a 256-entry table: out = table[x - storage_min]; or an
    i16 tile through a 513-entry i16 table with interpolation.

    storage_min is -128 for i8 and 0 for ui8 inputs (as `qnn.lut`); the output has
    the table's element type. An i16 input reads entries 256 + (x >> 7) and the next
    and interpolates by x & 127, exactly `qnn.lut`'s 16-bit lookup
    (`fixed_point.interpolated_lookup`).

        tile.lut %in, %table, %out
            : memref<64xi8, "sram">, memref<256xi8, "sram">, memref<64xi8, "sram">
        tile.lut %in16, %table16, %out16
            : memref<64xi16, "sram">, memref<513xi16, "sram">, memref<64xi16, "sram">
    """

    name = "tile.lut"


class SoftmaxFields(TileOp):
    """The operands, properties and checks of `tile.softmax`, which the `npu` command
    of the same name shares: an 8-bit input and output of one shape, whose last axis
    the tile holds whole, the 256-entry i16 exp table, and an optional i8 mask (1 leaves
    an element out) that broadcasts to the input."""

    input = operand_def(MemRefType)
    mask = opt_operand_def(MemRefType)
    table = operand_def(MemRefType)
    output = operand_def(MemRefType)
    multiplier = prop_def(IntegerAttr.constr(type=I64))
    shift = prop_def(IntegerAttr.constr(type=I64))
    output_zero_point = int_prop(0)

    WIDE_OUTPUT: ClassVar[bool] = False

    def check(self, props: Props) -> None:
        _check_row_op(self, props)
        entries = fixed_point.LUT16_ENTRIES if element_of(self.input) == i16 else 256
        if shape_of(self.table) != (entries,) or element_of(self.table) != i16:
            raise fail(
                f"the table of {element_of(self.input)} values must be {entries} i16 entries, "
                f"got {buffer(self.table)}"
            )
        if self.mask is not None:
            mask, rows = shape_of(self.mask), shape_of(self.input)
            if (
                element_of(self.mask) != i8
                or len(mask) != len(rows)
                or any(m not in (1, n) for m, n in zip(mask, rows))
            ):
                raise fail(
                    f"the mask {buffer(self.mask)} must be i8 that broadcasts to {buffer(self.input)}"
                )


@irdl_op_definition
class SoftmaxOp(SoftmaxFields):
    """Softmax over the last axis of an 8-bit tile holding whole rows, as `qnn.softmax`
    (irc/ir/fixed_point.py's `softmax`: the exp `table` in Q15, an integer sum and
    reciprocal, the Q15 probability requantized by (`multiplier`, `shift`) to
    `output_zero_point`, saturated to the output's storage range). With a `mask`, the
    elements where it is 1 are left out of the row (probability 0).

        tile.softmax %in, %table, %out {multiplier = 2139095040, shift = 7, output_zero_point = -128}
            : memref<16x16xi8, "sram">, memref<256xi16, "sram">, memref<16x16xi8, "sram">
    """

    name = "tile.softmax"


class LayerNormFields(TileOp):
    """The operands, properties and checks of `tile.layer_norm`, which the `npu`
    command of the same name shares: an 8-bit input and output of one shape (or both
    i16), whose last axis the tile holds whole, and [C, 2] (weight, bias) per channel,
    i32 (i64 for 16-bit values: a wide bias)."""

    input = operand_def(MemRefType)
    params = operand_def(MemRefType)
    output = operand_def(MemRefType)
    input_zero_point = int_prop(0)
    epsilon_term = int_prop(0)
    multiplier = prop_def(IntegerAttr.constr(type=I64))
    shift = prop_def(IntegerAttr.constr(type=I64))
    output_zero_point = int_prop(0)

    WIDE_OUTPUT: ClassVar[bool] = False

    def check(self, props: Props) -> None:
        _check_row_op(self, props)
        shape = shape_of(self.input)
        channels = shape[-1] if shape else 1
        wide = i64 if element_of(self.input) == i16 else i32
        if shape_of(self.params) != (channels, 2) or element_of(self.params) != wide:
            raise fail(
                f"the parameters of {element_of(self.input)} values must be [{channels}, 2] "
                f"{wide} (weight, bias), got {buffer(self.params)}"
            )
        check_in_range(props, "input_zero_point", element_of(self.input))
        if wide == i64 and props.int("input_zero_point"):
            raise fail("the input of an i16 layer norm is symmetric: its zero point must be 0")


@irdl_op_definition
class LayerNormOp(LayerNormFields):
    """Layer normalization over the last axis of an 8-bit (or i16) tile holding whole
    rows, as `qnn.layer_norm` (irc/ir/fixed_point.py's `layer_norm`: integer
    statistics, the normalized values in Q11 (Q18 for i16), then per channel
    `z * weight + bias` requantized by (`multiplier`, `shift`) to `output_zero_point`).

        tile.layer_norm %in, %params, %out {input_zero_point = 3, epsilon_term = 4, multiplier = 2137224968, shift = 15, output_zero_point = -2}
            : memref<16x32xi8, "sram">, memref<32x2xi32, "sram">, memref<16x32xi8, "sram">
    """

    name = "tile.layer_norm"


class LRNFields(TileOp):
    """The operands, properties and checks of `tile.lrn`, which the `npu` command of
    the same name shares: an 8-bit input and output of one shape (or both i16), whose
    last axis (the channels) the tile holds whole, and the i32 table of the window
    sums' function (225 entries for 8-bit values, 2753 for i16)."""

    input = operand_def(MemRefType)
    table = operand_def(MemRefType)
    output = operand_def(MemRefType)
    input_zero_point = int_prop(0)
    size = prop_def(IntegerAttr.constr(type=I64))
    multiplier = prop_def(IntegerAttr.constr(type=I64))
    shift = prop_def(IntegerAttr.constr(type=I64))
    output_zero_point = int_prop(0)

    WIDE_OUTPUT: ClassVar[bool] = True  # c * f is a wide accumulator

    def check(self, props: Props) -> None:
        _check_row_op(self, props)
        sixteen = element_of(self.input) == i16
        entries = fixed_point.lrn_table_entries(16 if sixteen else 8)
        if shape_of(self.table) != (entries,) or element_of(self.table) != i32:
            raise fail(
                f"the table of {element_of(self.input)} values must be {entries} i32 entries, "
                f"got {buffer(self.table)}"
            )
        size = props.int("size") or 0
        if not 1 <= size <= fixed_point.LRN_MAX_SIZE:
            raise fail(f"'size' must be 1 to {fixed_point.LRN_MAX_SIZE}, got {size}")
        check_in_range(props, "input_zero_point", element_of(self.input))
        if sixteen and props.int("input_zero_point"):
            raise fail("the input of an i16 lrn is symmetric: its zero point must be 0")


@irdl_op_definition
class LRNOp(LRNFields):
    """Local response normalization across the last axis (the channels) of an 8-bit
    (or i16) tile holding them whole, as `qnn.lrn` (irc/ir/fixed_point.py's `lrn`: the
    window sums of squares of the centred values, their function interpolated in
    `table` by octave, the wide product requantized by (`multiplier`, `shift`) to
    `output_zero_point`).

        tile.lrn %in, %table, %out {input_zero_point = -128, size = 5, multiplier = 1073741824, shift = 27, output_zero_point = -128}
            : memref<4x16xi8, "sram">, memref<225xi32, "sram">, memref<4x16xi8, "sram">
    """

    name = "tile.lrn"


def _check_row_op(op: SoftmaxFields | LayerNormFields | LRNFields, props: Props) -> None:
    """The checks `tile.softmax`, `tile.layer_norm` and `tile.lrn` share: 8-bit input
    and output (or both i16) of one shape, a valid output multiplier (one of a wide
    accumulator for `tile.lrn`) and zero point."""
    elements = (element_of(op.input), element_of(op.output))
    if not (all(e in EIGHT_BIT for e in elements) or elements == (i16, i16)):
        raise fail(
            f"the input and output must hold i8 or ui8, or both i16, got {elements[0]} and "
            f"{elements[1]}"
        )
    if shape_of(op.output) != shape_of(op.input):
        raise fail(f"the output {buffer(op.output)} differs in shape from {buffer(op.input)}")
    multiplier, shift = props.int("multiplier"), props.int("shift")
    assert multiplier is not None and shift is not None
    check = fixed_point.check_wide_multiplier if op.WIDE_OUTPUT else fixed_point.check_multiplier
    problem = check(multiplier, shift)
    if problem is not None:
        raise fail(f"'multiplier': {problem}")
    check_in_range(props, "output_zero_point", element_of(op.output))


class CastFields(_ElementwiseOp):
    """The operands, properties and checks of `tile.quantize` and `tile.dequantize`
    (and the `npu` commands of the same names): one tile of f32 and one of 8- or 16-bit
    integers of one shape, a per-tensor `scale` (positive, finite) and `zero_point`
    in the integers' range."""

    input = operand_def(MemRefType)
    output = operand_def(MemRefType)
    scale = float_prop(1.0)
    zero_point = int_prop()
    FLOATS_IN: ClassVar[bool] = True

    def check(self, props: Props) -> None:
        floats, integers = (
            (self.input, self.output) if self.FLOATS_IN else (self.output, self.input)
        )
        self.check_same_shapes([self.input, self.output], ELEMENT_TYPES)
        if element_of(floats) != f32:
            raise fail(f"the float side must hold f32, got {element_of(floats)}")
        if element_of(integers) not in ACTIVATIONS:
            raise fail(f"the integer side must hold i8, ui8 or i16, got {element_of(integers)}")
        scale = props.float("scale")
        if scale is None or not (math.isfinite(scale) and scale > 0):
            raise fail(f"'scale' must be positive and finite, got {scale}")
        check_in_range(props, "zero_point", element_of(integers))


@irdl_op_definition
class QuantizeOp(CastFields):
    """Quantize an f32 tile to 8 or 16 bits, as `quant.qcast`:
    out = clamp(round_half_even(x / scale) + zero_point, storage range), the division
    in float32 (see `quant.qcast` for NaN and infinities).

        tile.quantize %x, %q {scale = 0.0078125 : f32, zero_point = -128}
            : memref<64xf32, "sram">, memref<64xi8, "sram">
    """

    name = "tile.quantize"


@irdl_op_definition
class DequantizeOp(CastFields):
    """Dequantize an 8- or 16-bit tile to f32, as `quant.dcast`: x = (q - zero_point) * scale
    in float32.

        tile.dequantize %q, %x {scale = 0.0078125 : f32, zero_point = -128}
            : memref<64xi8, "sram">, memref<64xf32, "sram">
    """

    name = "tile.dequantize"
    FLOATS_IN: ClassVar[bool] = False


TILE = Dialect(
    "tile",
    [
        AllocOp,
        OnCoreOp,
        ToBufferOp,
        ToTensorOp,
        ViewOp,
        CopyOp,
        FillOp,
        ConvOp,
        MatmulOp,
        BiasAddOp,
        RequantizeOp,
        PoolOp,
        AddOp,
        MulOp,
        ClampOp,
        AddFOp,
        MulFOp,
        TransposeOp,
        ResizeOp,
        LutOp,
        SoftmaxOp,
        LayerNormOp,
        LRNOp,
        QuantizeOp,
        DequantizeOp,
    ],
    [],
)
"""The `tile` dialect."""
