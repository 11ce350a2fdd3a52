"""irc bytecode: a module (the command stream and its host functions) as bytes.

The encoding is generic, in the spirit of MLIR's bytecode: every op is written as its
name, location, operands, result types, properties, attributes and regions, so any
module irc can print it can also encode, and `decode(encode(module))` is the same
module (`is_structurally_equivalent`, locations included). Attributes and types are
written by structure, not as text, so decoding parses nothing. The data of dense
constants is not in the bytecode but in the weights blob beside it (`weights.bin`),
each array at a 64-byte aligned offset; the bytecode refers to it by offset and length.

Layout (all integers are unsigned LEB128 varints unless said otherwise; signed ones
are zigzag-encoded first):

    magic "IRCB" (4 bytes), version (u32, little-endian)
    strings:     count, then each as (length, UTF-8 bytes)
    attributes:  count, then each entry as a kind and its fields; an entry refers only
                 to entries before it
      0 text:         string id of the MLIR text (an attribute of no kind below)
      1 parametrized: name (string id), parameter count, parameter attribute ids
                      (types such as memref and tensor, quant.uniform, locations, ...)
      2 IntAttr:      zigzag value        3 FloatData:  8-byte IEEE double
      4 StringAttr:   string id           5 BytesAttr:  length, raw bytes
      6 ArrayAttr:    count, attribute ids
      7 DictionaryAttr: count, (key string id, attribute id)...
      8 signedness:   0 signless, 1 signed, 2 unsigned
    the module:  one op, encoded as
      op       := name (string id), location (attribute id + 1, 0 if unknown),
                  operands (count, value ids), results (count, type attribute ids),
                  properties (count, (name string id, value)...),
                  attributes (count, (name string id, value)...),
                  regions (count, region...)
      region   := block count, block...
      block    := argument count, argument type ids, op count, op...
      value    := tag, then
                  0 attribute: attribute id
                  1 integer:   type id, zigzag value          (IntegerAttr)
                  2 string:    string id                      (StringAttr)
                  3 unit                                      (UnitAttr)
                  4 float:     type id, 8-byte IEEE double    (FloatAttr)
                  5 array:     element type id, byte length, raw bytes (DenseArrayBase)
                  6 dense:     type id, blob offset, byte length        (dense<...>)

Values (SSA) are numbered in the order they are defined: an op's results, then its
regions' values; each block's arguments when the block starts. Strings and
attributes are numbered in first-use order, so the same module always gives the same
bytes; the properties and attributes of an op that prints them sorted by name (irc's
`nn`, `qnn`, `tile`, `npu` ops: `SORTED_ENTRIES`) are written sorted, so an op built in
memory and the same op parsed from its text give the same bytes. Bytes that do not decode are a `BytecodeError` naming the byte offset, never a
traceback (the package's checksums catch damage before decoding).
"""

from __future__ import annotations

import functools
import struct
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FloatAttr,
    FloatData,
    IntAttr,
    IntegerAttr,
    ModuleOp,
    NameLoc,
    Signedness,
    SignednessAttr,
    StridedLayoutAttr,
    StringAttr,
    UnitAttr,
    UnknownLoc,
)
from xdsl.ir import Attribute, Block, Operation, ParametrizedAttribute, Region, SSAValue
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError

from irc.diagnostics import IrcError, Location, error

MAGIC = b"IRCB"
VERSION = 1
BLOB_ALIGNMENT = 64
"""Every dense array starts at a multiple of this in the weights blob."""

TAG_ATTRIBUTE, TAG_INTEGER, TAG_STRING, TAG_UNIT, TAG_FLOAT, TAG_ARRAY, TAG_DENSE = range(7)
"""How an op's property or attribute value is written."""

(
    ENTRY_TEXT,
    ENTRY_PARAMETRIZED,
    ENTRY_INT,
    ENTRY_FLOAT,
    ENTRY_STRING,
    ENTRY_BYTES,
    ENTRY_ARRAY,
    ENTRY_DICTIONARY,
    ENTRY_SIGNEDNESS,
) = range(9)
"""The kinds of entries of the attribute table."""


@functools.cache
def _registry() -> dict[str, type[ParametrizedAttribute]]:
    """Every parametrized attribute irc's dialects define, by name."""
    from irc.ir.context import DIALECTS, load_dialect

    found: dict[str, type[ParametrizedAttribute]] = {
        attribute.name: attribute for attribute in (StridedLayoutAttr, NameLoc)
    }
    for name in DIALECTS:
        for attribute in load_dialect(name).attributes:
            if issubclass(attribute, ParametrizedAttribute):
                found[attribute.name] = attribute
    return found


class BytecodeError(IrcError):
    """Bytes that are not a valid irc bytecode (a corrupted or foreign package)."""


# --------------------------------------------------------------------------------------
# Encoding


@dataclass
class _Tables:
    """Strings and attributes by first use, and the weights blob."""

    strings: dict[str, int] = field(default_factory=dict)
    attributes: dict[Attribute, int] = field(default_factory=dict)
    entries: _Writer = field(default_factory=lambda: _Writer())
    """The attribute table's entries, each after the entries it refers to."""
    blob: bytearray = field(default_factory=bytearray)

    def string(self, text: str) -> int:
        index = self.strings.get(text)
        if index is None:
            index = self.strings[text] = len(self.strings)
        return index

    def attribute(self, attribute: Attribute) -> int:
        index = self.attributes.get(attribute)
        if index is None:
            index = self._entry(attribute)
            self.attributes[attribute] = index
        return index

    def _entry(self, attribute: Attribute) -> int:
        """Write the table entry of an attribute not in the table yet; its id."""
        entry = _Writer()
        match attribute:
            case IntAttr():
                entry.uint(ENTRY_INT)
                entry.sint(attribute.data)
            case FloatData():
                entry.uint(ENTRY_FLOAT)
                entry.raw(struct.pack("<d", attribute.data))
            case StringAttr():
                entry.uint(ENTRY_STRING)
                entry.uint(self.string(attribute.data))
            case BytesAttr():
                entry.uint(ENTRY_BYTES)
                entry.uint(len(attribute.data))
                entry.raw(attribute.data)
            case ArrayAttr():
                ids = [self.attribute(element) for element in attribute.data]
                entry.uint(ENTRY_ARRAY)
                entry.uint(len(ids))
                for element_id in ids:
                    entry.uint(element_id)
            case DictionaryAttr():
                pairs = [(self.string(k), self.attribute(v)) for k, v in attribute.data.items()]
                entry.uint(ENTRY_DICTIONARY)
                entry.uint(len(pairs))
                for key, value_id in pairs:
                    entry.uint(key)
                    entry.uint(value_id)
            case SignednessAttr():
                entry.uint(ENTRY_SIGNEDNESS)
                entry.uint(attribute.data.value)
            case ParametrizedAttribute() if _registry().get(attribute.name) is type(attribute):
                ids = [self.attribute(parameter) for parameter in attribute.parameters]
                entry.uint(ENTRY_PARAMETRIZED)
                entry.uint(self.string(attribute.name))
                entry.uint(len(ids))
                for parameter_id in ids:
                    entry.uint(parameter_id)
            case _:
                entry.uint(ENTRY_TEXT)
                entry.uint(self.string(str(attribute)))
        self.entries.raw(entry.out)
        return len(self.attributes)

    def array(self, data: bytes) -> int:
        """Append `data` to the blob at the next aligned offset; its offset."""
        offset = -len(self.blob) % BLOB_ALIGNMENT + len(self.blob)
        self.blob.extend(bytes(offset - len(self.blob)))
        self.blob.extend(data)
        return offset


class _Writer:
    def __init__(self) -> None:
        self.out = bytearray()

    def uint(self, value: int) -> None:
        out = self.out
        while value >= 0x80:
            out.append((value & 0x7F) | 0x80)
            value >>= 7
        out.append(value)

    def sint(self, value: int) -> None:
        self.uint(value * 2 if value >= 0 else -value * 2 - 1)

    def raw(self, data: bytes | bytearray) -> None:
        self.out.extend(data)


class _Encoder:
    def __init__(self) -> None:
        self.tables = _Tables()
        self.values: dict[SSAValue, int] = {}
        self.body = _Writer()

    def value_id(self, value: SSAValue, user: Operation) -> int:
        index = self.values.get(value)
        if index is None:
            raise error(f"'{user.name}' uses a value defined after it or outside the module", user)
        return index

    def define(self, value: SSAValue) -> None:
        self.values[value] = len(self.values)

    def op(self, op: Operation) -> None:
        write, tables = self.body, self.tables
        if op.successors:
            raise error(f"'{op.name}' has successors, which irc bytecode does not encode", op)
        write.uint(tables.string(op.name))
        location = op.location
        write.uint(0 if isinstance(location, UnknownLoc) else tables.attribute(location) + 1)
        write.uint(len(op.operands))
        for operand in op.operands:
            write.uint(self.value_id(operand, op))
        write.uint(len(op.results))
        for result in op.results:
            write.uint(tables.attribute(result.type))
            self.define(result)
        # Ops that print their entries sorted are written sorted: one op built in
        # memory and the same op parsed from its text give the same bytes.
        in_order = getattr(type(op), "SORTED_ENTRIES", False)
        for entries in (op.properties, op.attributes):
            write.uint(len(entries))
            for name in sorted(entries) if in_order else entries:
                write.uint(tables.string(name))
                self.attribute_value(entries[name])
        write.uint(len(op.regions))
        for region in op.regions:
            self.region(region)

    def region(self, region: Region) -> None:
        write = self.body
        blocks = list(region.blocks)
        write.uint(len(blocks))
        for block in blocks:
            write.uint(len(block.args))
            for argument in block.args:
                write.uint(self.tables.attribute(argument.type))
                self.define(argument)
            ops = list(block.ops)
            write.uint(len(ops))
            for op in ops:
                self.op(op)

    def attribute_value(self, value: Attribute) -> None:
        write, tables = self.body, self.tables
        match value:
            case IntegerAttr():
                write.uint(TAG_INTEGER)
                write.uint(tables.attribute(value.type))
                write.sint(value.value.data)
            case StringAttr():
                write.uint(TAG_STRING)
                write.uint(tables.string(value.data))
            case UnitAttr():
                write.uint(TAG_UNIT)
            case FloatAttr():
                write.uint(TAG_FLOAT)
                write.uint(tables.attribute(value.type))
                write.raw(struct.pack("<d", value.value.data))
            case DenseArrayBase():
                data = value.data.data
                write.uint(TAG_ARRAY)
                write.uint(tables.attribute(value.elt_type))
                write.uint(len(data))
                write.raw(data)
            case DenseIntOrFPElementsAttr():
                data = value.data.data
                write.uint(TAG_DENSE)
                write.uint(tables.attribute(value.type))
                write.uint(tables.array(data))
                write.uint(len(data))
            case _:
                write.uint(TAG_ATTRIBUTE)
                write.uint(tables.attribute(value))


def encode(module: ModuleOp) -> tuple[bytes, bytes]:
    """The bytecode of `module`, and the weights blob its dense constants are in."""
    encoder = _Encoder()
    encoder.op(module)
    tables = encoder.tables
    head = _Writer()
    head.raw(MAGIC + struct.pack("<I", VERSION))
    head.uint(len(tables.strings))
    for text in tables.strings:
        data = text.encode()
        head.uint(len(data))
        head.raw(data)
    head.uint(len(tables.attributes))
    head.raw(tables.entries.out)
    return bytes(head.out + encoder.body.out), bytes(tables.blob)


# --------------------------------------------------------------------------------------
# Decoding


class _Reader:
    def __init__(self, data: bytes, where: str) -> None:
        self.data, self.position, self.where = data, 0, where

    def fail(self, message: str) -> BytecodeError:
        return BytecodeError(
            error(
                f"{message} at byte {self.position}",
                Location(file=self.where),
                "the package is damaged or was not written by irc-compile: compile it again",
            ).diagnostics
        )

    def uint(self) -> int:
        data, position = self.data, self.position
        result = shift = 0
        while True:
            if position >= len(data):
                self.position = position
                raise self.fail("the bytecode ends in the middle of a number")
            byte = data[position]
            position += 1
            result |= (byte & 0x7F) << shift
            if byte < 0x80:
                self.position = position
                return result
            shift += 7

    def sint(self) -> int:
        value = self.uint()
        return value >> 1 if not value & 1 else -(value >> 1) - 1

    def raw(self, count: int) -> bytes:
        end = self.position + count
        if end > len(self.data):
            raise self.fail(f"the bytecode ends inside a {count}-byte field")
        chunk = self.data[self.position : end]
        self.position = end
        return chunk


class _Decoder:
    def __init__(self, data: bytes, blob: bytes, ctx: Context, where: str) -> None:
        self.read = _Reader(data, where)
        self.blob, self.ctx, self.where = blob, ctx, where
        self.strings: list[str] = []
        self.attributes: list[Attribute] = []
        self.values: list[SSAValue] = []
        self.integers: dict[tuple[int, int], IntegerAttr] = {}

    def header(self) -> None:
        read = self.read
        if read.raw(4) != MAGIC:
            raise read.fail("not irc bytecode (no IRCB magic)")
        (version,) = struct.unpack("<I", read.raw(4))
        if version != VERSION:
            raise BytecodeError(
                error(
                    f"bytecode version {version}; this irc reads version {VERSION}",
                    Location(file=self.where),
                    "compile the model again with this irc",
                ).diagnostics
            )
        for _ in range(read.uint()):
            try:
                self.strings.append(read.raw(read.uint()).decode())
            except UnicodeDecodeError:
                raise read.fail("a string is not UTF-8") from None
        for _ in range(read.uint()):
            self.attributes.append(self.entry())

    def string(self, index: int) -> str:
        if index >= len(self.strings):
            raise self.read.fail(f"string {index} does not exist")
        return self.strings[index]

    def attribute(self, index: int) -> Attribute:
        if index >= len(self.attributes):
            raise self.read.fail(f"attribute {index} does not exist")
        return self.attributes[index]

    def entry(self) -> Attribute:
        """The next entry of the attribute table."""
        read = self.read
        kind = read.uint()
        if kind == ENTRY_INT:
            return IntAttr(read.sint())
        if kind == ENTRY_FLOAT:
            return FloatData(struct.unpack("<d", read.raw(8))[0])
        if kind == ENTRY_STRING:
            return StringAttr(self.string(read.uint()))
        if kind == ENTRY_BYTES:
            return BytesAttr(read.raw(read.uint()))
        if kind == ENTRY_ARRAY:
            return ArrayAttr(tuple(self.attribute(read.uint()) for _ in range(read.uint())))
        if kind == ENTRY_DICTIONARY:
            count = read.uint()
            return DictionaryAttr(
                {self.string(read.uint()): self.attribute(read.uint()) for _ in range(count)}
            )
        if kind == ENTRY_SIGNEDNESS:
            return SignednessAttr(Signedness(read.uint()))
        if kind == ENTRY_PARAMETRIZED:
            name = self.string(read.uint())
            attribute_type = _registry().get(name)
            if attribute_type is None:
                raise read.fail(f"unknown attribute '{name}' (compiled by another version of irc?)")
            parameters = [self.attribute(read.uint()) for _ in range(read.uint())]
            return attribute_type.new(parameters)
        if kind == ENTRY_TEXT:
            text = self.string(read.uint())
            try:
                parser = Parser(self.ctx, text, self.where)
                attribute = (
                    parser.parse_optional_location()
                    if text.startswith("loc(")
                    else parser.parse_attribute()
                )
            except ParseError as failure:
                raise read.fail(f"attribute '{text}' does not parse: {failure.msg}") from None
            if attribute is None:
                raise read.fail(f"'{text}' is not a location")
            return attribute
        raise read.fail(f"unknown attribute kind {kind}")

    def op(self) -> Operation:
        read = self.read
        name = self.string(read.uint())
        op_type = self.ctx.get_optional_op(name)
        if op_type is None:
            raise read.fail(f"unknown op '{name}' (compiled by another version of irc?)")
        location_id = read.uint()
        location = self.attribute(location_id - 1) if location_id else UnknownLoc()
        operands = [self.value(read.uint()) for _ in range(read.uint())]
        result_types = [self.attribute(read.uint()) for _ in range(read.uint())]
        properties = {self.string(read.uint()): self.attribute_value() for _ in range(read.uint())}
        attributes = {self.string(read.uint()): self.attribute_value() for _ in range(read.uint())}
        region_count = read.uint()
        # Results are numbered before the regions' values, as the encoder did.
        first_result = len(self.values)
        self.values.extend([None] * len(result_types))  # type: ignore[list-item]
        regions = [self.region() for _ in range(region_count)]
        op = op_type.create(
            operands=operands,
            result_types=result_types,
            properties=properties,
            attributes=attributes,
            location=location,  # type: ignore[arg-type]
            regions=regions,
        )
        self.values[first_result : first_result + len(result_types)] = op.results
        return op

    def region(self) -> Region:
        read = self.read
        blocks = []
        for _ in range(read.uint()):
            block = Block(arg_types=[self.attribute(read.uint()) for _ in range(read.uint())])
            self.values.extend(block.args)
            block.add_ops(self.op() for _ in range(read.uint()))
            blocks.append(block)
        return Region(blocks)

    def value(self, index: int) -> SSAValue:
        if index >= len(self.values) or self.values[index] is None:
            raise self.read.fail(f"value {index} is used before it is defined")
        return self.values[index]

    def attribute_value(self) -> Attribute:
        read = self.read
        tag = read.uint()
        if tag == TAG_ATTRIBUTE:
            return self.attribute(read.uint())
        if tag == TAG_INTEGER:
            key = (read.uint(), read.sint())
            integer = self.integers.get(key)
            if integer is None:
                # Built as the encoder saw it: the value was checked against its type then.
                integer = IntegerAttr.new([IntAttr(key[1]), self.attribute(key[0])])
                self.integers[key] = integer
            return integer
        if tag == TAG_STRING:
            return StringAttr(self.string(read.uint()))
        if tag == TAG_UNIT:
            return UnitAttr()
        if tag == TAG_FLOAT:
            value_type = self.attribute(read.uint())
            (number,) = struct.unpack("<d", read.raw(8))
            return FloatAttr.new([FloatData(number), value_type])
        if tag == TAG_ARRAY:
            element_type = self.attribute(read.uint())
            data = read.raw(read.uint())
            return DenseArrayBase.new([element_type, BytesAttr(data)])
        if tag == TAG_DENSE:
            value_type = self.attribute(read.uint())
            offset, length = read.uint(), read.uint()
            if offset + length > len(self.blob):
                raise read.fail(
                    f"a constant lies at bytes {offset}..{offset + length} of a "
                    f"{len(self.blob)}-byte weights blob"
                )
            data = self.blob[offset : offset + length]
            return DenseIntOrFPElementsAttr(value_type, BytesAttr(data))  # type: ignore[arg-type]
        raise read.fail(f"unknown value tag {tag}")


def decode(data: bytes, blob: bytes, ctx: Context, where: str = "program.bin") -> ModuleOp:
    """The module that `encode` wrote as `data` (with its weights blob `blob`).

    Bytes that are not a valid encoding raise a `BytecodeError` naming `where`.
    """
    decoder = _Decoder(data, blob, ctx, where)
    try:
        decoder.header()
        module = decoder.op()
    except IrcError:
        raise
    except Exception as failure:  # an op or attribute rejected while being built
        raise decoder.read.fail(f"invalid content ({failure})") from None
    if decoder.read.position != len(data):
        raise decoder.read.fail("bytes remain after the module")
    if not isinstance(module, ModuleOp):
        raise decoder.read.fail(f"the top-level op is '{module.name}', not builtin.module")
    return module
