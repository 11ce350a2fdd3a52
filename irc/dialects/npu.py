"""The `npu` dialect: the command stream of the simulated NPU.

A program is one function whose body is a flat list, in program order, of:

- **views**: `npu.view` names a buffer at a static byte address of a memory (the
  NPU's local `sram`, or a system memory the target names: `ddr`, `dram`, `flash`,
  `system_sram`, ...), with a shape and element strides (a builtin memref with a
  strided layout); every command reads and writes views, so every address is static;
- **commands**, each executed by one engine queue: `npu.dma` (system memory <-> SRAM copies of
  strided boxes, with an optional fill of the destination frame: the padding of a
  halo, the zeros of a transposed conv's upsampled input) on `dma_in` or `dma_out`;
  `npu.conv` and `npu.matmul` on the MAC array, with a fused output stage (bias,
  requantize, clamp); `npu.fill`, `npu.pool`, `npu.add`, `npu.mul`, `npu.addf`,
  `npu.mulf`, `npu.clamp`, `npu.lut`, `npu.requantize` and `npu.transpose` on the
  vector unit; `npu.host_call` of a CPU-fallback function on the host;
- **synchronisation**: `npu.signal` on a queue sets a token once every command
  before it on that queue has finished; `npu.wait` on a queue holds the commands
  after it until the token is set. Queues are otherwise independent: two commands of
  different queues are ordered only through a signal and a wait;
- the runtime's **boundary**: `npu.place` writes an argument or a constant (the
  weights blob) into a system memory before the stream runs, `npu.read` reads a
  result back after `npu.end`, which ends the stream.

On an NPU of several **cores** (`npu.cores` on the function, the target's `[cores]`),
every command and synchronisation names its core (`core`, default 0): each core has
its own queues and its own SRAM, named `sram` (core 0), `sram1`, `sram2`, ...; a
command reaches its core's SRAM and the system memories, which the cores share (the
host too: host calls are core 0's). A signal on one core and a wait on another
synchronise the two cores.

The function carries the memory it needs: `npu.<memory>_bytes` for each memory it
uses (`npu.ddr_bytes`: from address 0; `npu.sram_bytes`: up to the highest SRAM byte
it uses, so a target with at least that much runs it), `npu.weights_memory` and
`npu.weights_bytes` (the read-only weights region at the start of that memory, by
default `ddr`), and
`npu.sram_alignment` (the target's). A 3x3 conv tile, its input box padded with
the zero point:

        %x = npu.view ddr[4096] : memref<1x7x12x8xi8, strided<[1152, 96, 8, 1]>, "ddr">
        %box = npu.view sram[64] : memref<1x7x12x8xi8, strided<[1344, 112, 8, 1]>, "sram">
        %frame = npu.view sram[0] : memref<1x7x14x8xi8, "sram">
        npu.dma %x to %box fill %frame {pad = -3} : ...
        npu.signal {queue = "dma_in", token = 0}
        npu.wait {queue = "mac", token = 0}
        npu.conv %frame, %w, %acc bias %b requantize %p into %out {input_zero_point = -3} : ...

The op reference is docs/isa.md; docs/simulator.md describes the simulator.
"""

from __future__ import annotations

from typing import ClassVar, Self

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DenseArrayBase,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    MemRefType,
    NoneAttr,
    StridedLayoutAttr,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    f32,
    i32,
    i64,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Dialect, Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure, SymbolTable

from irc.dialects import tile
from irc.dialects.base import Props, bool_prop, check_rounding, fail, int_prop, rounding_prop
from irc.dialects.tile import (
    ACTIVATIONS,
    TileOp,
    buffer,
    check_clamp,
    check_in_range,
    check_number,
    element_of,
    shape_of,
    space_of,
)
from irc.ir import fixed_point, weights

QUEUES = ("dma_in", "dma_out", "mac", "vector", "host", "dma_weights", "dma_stage")
"""The engine queues, in the order the simulator reports them (`dma_weights`: the
weight stream of a target whose MAC array fetches its weights on a channel of its own,
`weight_stream` in its target file; `dma_stage`: its DMA engine copying a layer's
weights into a faster system memory while the layer before runs)."""

WEIGHTS_BYTES_ATTR = "npu.weights_bytes"
WEIGHTS_MEMORY_ATTR = "npu.weights_memory"
SRAM_BYTES_ATTR = "npu.sram_bytes"
SRAM_ALIGNMENT_ATTR = "npu.sram_alignment"
SRAM = tile.SRAM_SPACE
CORES_ATTR = "npu.cores"
"""The function attribute holding the number of NPU cores a program runs on (absent:
one)."""


def core_sram(core: int) -> str:
    """The memory space of core `core`'s own SRAM: `sram` (core 0), `sram1`, `sram2`..."""
    return SRAM if core == 0 else f"{SRAM}{core}"


def sram_core(space: str) -> int | None:
    """The core whose SRAM the memory space `space` is (None: a system memory)."""
    if space == SRAM:
        return 0
    suffix = space.removeprefix(SRAM)
    if suffix != space and suffix.isdigit() and not suffix.startswith("0"):
        return int(suffix)
    return None


def is_sram(space: str) -> bool:
    """Whether `space` is the SRAM of a core (not a system memory)."""
    return sram_core(space) is not None


def engine(core: int, queue: str) -> int:
    """The index of core `core`'s `queue` among every core's queues (`QUEUES` per core,
    core after core): the simulator's and the scoreboard's queue numbers."""
    return core * len(QUEUES) + QUEUES.index(queue)


def engine_name(index: int) -> str:
    """The name of engine queue `index`: the queue's (`mac`) on core 0, `core1.mac` on
    core 1."""
    core, queue = divmod(index, len(QUEUES))
    return QUEUES[queue] if core == 0 else f"core{core}.{QUEUES[queue]}"


def core_count(function: FuncOp) -> int:
    """The cores a program runs on (its `npu.cores`, default 1)."""
    value = function.attributes.get(CORES_ATTR)
    return int(value.value.data) if isinstance(value, IntegerAttr) else 1


def memory_bytes_attr(memory: str) -> str:
    """The function attribute holding the bytes of `memory` a program needs
    (`npu.ddr_bytes`, `npu.sram_bytes`, `npu.flash_bytes`)."""
    return f"npu.{memory}_bytes"


def memory_sizes(function: FuncOp) -> dict[str, int]:
    """The bytes of each memory a program needs, from its `npu.<memory>_bytes`
    attributes (the memory's name is the IR's memory space)."""
    sizes = {}
    for name, value in function.attributes.items():
        memory = name.removeprefix("npu.").removesuffix("_bytes")
        if (
            name.startswith("npu.")
            and name.endswith("_bytes")
            and name != WEIGHTS_BYTES_ATTR
            and isinstance(value, IntegerAttr)
        ):
            sizes[memory] = int(value.value.data)
    return sizes


DEFAULT_WEIGHTS_MEMORY = "ddr"
"""The memory of the weights region when a program does not name one."""


def weights_region(function: FuncOp) -> tuple[str, int]:
    """The memory of a program's read-only weights region (`npu.weights_memory`, by
    default `ddr`) and its bytes from address 0 (`npu.weights_bytes`)."""
    memory = function.attributes.get(WEIGHTS_MEMORY_ATTR)
    size = function.attributes.get(WEIGHTS_BYTES_ATTR)
    return (
        memory.data if isinstance(memory, StringAttr) else DEFAULT_WEIGHTS_MEMORY,
        int(size.value.data) if isinstance(size, IntegerAttr) else 0,
    )


# --------------------------------------------------------------------------------------
# Views: buffers at static addresses


def element_bytes(buffer_type: MemRefType) -> int:
    """Bytes of one element of a buffer."""
    return int(weights.dtype_of(buffer_type.element_type).itemsize)


def strides_of(buffer_type: MemRefType) -> tuple[int, ...]:
    """A buffer's strides in elements (row-major when its layout has none)."""
    layout = buffer_type.layout
    shape = buffer_type.get_shape()
    if isinstance(layout, StridedLayoutAttr):
        return tuple(int(stride.data) for stride in layout.strides.data)  # type: ignore[union-attr]
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def extent_bytes(buffer_type: MemRefType) -> int:
    """Bytes from a buffer's first element to the end of its last one."""
    shape = buffer_type.get_shape()
    if any(size == 0 for size in shape):
        return 0
    last = sum((size - 1) * stride for size, stride in zip(shape, strides_of(buffer_type)))
    return (last + 1) * element_bytes(buffer_type)


def _function_of(op: Operation) -> FuncOp | None:
    function = op.parent_op()
    while function is not None and not isinstance(function, FuncOp):
        function = function.parent_op()
    return function


def _memory_attr(op: Operation, name: str) -> int | None:
    """An integer attribute of the function holding `op` (its memory sizes)."""
    function = _function_of(op)
    if function is None:
        return None
    value = function.attributes.get(name)
    return value.value.data if isinstance(value, IntegerAttr) else None


class _HostData(TileOp):
    """An op whose buffers in system memory may hold any element type the host computes
    with (i64 indices, f64 values of a host-only subgraph), not only the NPU's."""

    def check_buffer(self, buffer_type: MemRefType, what: str) -> None:
        """A buffer of the NPU's element types, or in a system memory of any type with a
        numpy dtype."""
        if is_sram(space_of(buffer_type)) or buffer_type.element_type in tile.ELEMENT_TYPES:
            tile.check_buffer_type(buffer_type, what)
            return
        if any(size < 0 for size in buffer_type.get_shape()):
            raise fail(f"{what} must have a static shape, got {buffer_type}")
        try:
            weights.dtype_of(buffer_type.element_type)
        except ValueError:
            raise fail(f"{what} holds {buffer_type.element_type}, which no buffer holds") from None


@irdl_op_definition
class ViewOp(_HostData):
    """A buffer at a static byte `address` of a memory (its memory space: `sram`, or a
    system memory): its shape, element type and element strides are the result type's
    (a strided layout, or row-major without).

        %box = npu.view sram[12992] : memref<1x7x58x32xi8, "sram">
        %rows = npu.view ddr[4096] : memref<1x7x56x32xi8, strided<[100352, 1792, 32, 1]>, "ddr">

    The address is a multiple of the element size; the view lies inside its memory
    (`npu.<memory>_bytes` of the function: `npu.ddr_bytes`, `npu.sram_bytes`).
    """

    name = "npu.view"
    result = result_def(MemRefType)
    address = int_prop()
    traits = traits_def(Pure())

    def check(self, props: Props) -> None:
        address = props.int("address")
        view = buffer(self.result)
        if address is None:
            raise fail("npu.view needs 'address', its byte address")
        if address < 0:
            raise fail(f"'address' must be a non-negative byte address, got {address}")
        layout = view.layout
        if not isinstance(layout, StridedLayoutAttr | NoneAttr):
            raise fail(f"the view's layout must be strided, got {layout}")
        if isinstance(layout, StridedLayoutAttr):
            offset = layout.offset
            if not (isinstance(offset, IntAttr) and offset.data == 0):
                raise fail("the view's address is the property; its layout offset must be 0")
            if any(not isinstance(s, IntAttr) or s.data < 0 for s in layout.strides.data):
                raise fail(f"the view's strides must be static and non-negative, got {layout}")
        size = element_bytes(view)
        if address % size:
            raise fail(f"address {address} is not a multiple of the element size {size}")
        space = space_of(view)
        limit = _memory_attr(self, memory_bytes_attr(space))
        end = address + extent_bytes(view)
        if limit is not None and end > limit:
            raise fail(f"the view [{address}, {end}) is outside the {limit} bytes of {space}")

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {space_of(buffer(self.result))}[{self.props().int('address')}]")
        self.print_properties(printer, skip=("address",))
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> ViewOp:
        start = parser.pos
        space = parser.parse_identifier()
        parser.parse_punctuation("[")
        address = parser.parse_integer()
        parser.parse_punctuation("]")
        properties, attributes = cls._parse_entries(parser)
        parser.parse_punctuation(":")
        result_type = parser.parse_type()
        if not isinstance(result_type, MemRefType) or space_of(result_type) != space:
            parser.raise_error(f'expected a memref in memory space "{space}"', start, parser.pos)
        properties["address"] = IntegerAttr(address, i64)
        return cls.create(result_types=[result_type], properties=properties, attributes=attributes)


def _check_view(value: SSAValue, what: str) -> ViewOp:
    """An operand that is a view at a static address."""
    owner = value.owner
    if not isinstance(owner, ViewOp):
        raise fail(f"{what} takes views (npu.view) at static addresses")
    return owner


def _placed(value: SSAValue) -> tuple[str, int, str, int] | None:
    """A view's (space, address) and its program's weights region (memory, end); None
    outside a program (the view's function) or for an operand that is not a view."""
    owner = value.owner
    function = _function_of(owner) if isinstance(owner, ViewOp) else None
    if function is None:
        return None
    memory, weights_end = weights_region(function)
    address = owner.props().int("address") or 0  # type: ignore[union-attr]
    return space_of(buffer(value)), address, memory, weights_end


def _check_not_weights(value: SSAValue, what: str) -> None:
    """A view written by `what` lies outside the read-only weights region."""
    placed = _placed(value)
    if placed is None:
        return
    space, address, memory, weights_end = placed
    if space == memory and address < weights_end:
        raise fail(
            f"{what} writes {space} address {address}, inside the read-only weights region "
            f"[0, {weights_end})"
        )


def _check_in_weights(value: SSAValue) -> None:
    """A view a load on the weight stream reads lies in the weights region."""
    placed = _placed(value)
    if placed is None:
        return
    space, begin, memory, weights_end = placed
    end = begin + extent_bytes(buffer(value))
    if space != memory or end > weights_end:
        raise fail(
            f"a load on the weight stream reads {space} [{begin}, {end}), outside the "
            f"weights region ({memory} [0, {weights_end}))"
        )


# --------------------------------------------------------------------------------------
# The runtime's boundary


@irdl_op_definition
class PlaceOp(_HostData):
    """The runtime writes a tensor (an argument, or a constant of the weights blob)
    into a view in a system memory before the stream starts; it takes no time on the
    NPU.

        npu.place %x into %v : tensor<1x8x8x16xi8>, memref<1x8x8x16xi8, "ddr">
    """

    name = "npu.place"
    value = operand_def(TensorType)
    target = operand_def(MemRefType)

    def check(self, props: Props) -> None:
        tile._check_boundary(self.value.type, self.target.type)
        _check_view(self.target, "npu.place")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.value)
        printer.print_string(" into ")
        printer.print_operand(self.target)
        self.print_properties(printer)
        printer.print_string(" : ")
        printer.print_list([self.value.type, self.target.type], printer.print_attribute)

    @classmethod
    def parse(cls, parser: Parser) -> PlaceOp:
        start = parser.pos
        value = parser.parse_unresolved_operand()
        parser.parse_keyword("into")
        target = parser.parse_unresolved_operand()
        properties, attributes = cls._parse_entries(parser)
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        operands = parser.resolve_operands([value, target], types, start)
        return cls.create(operands=list(operands), properties=properties, attributes=attributes)


@irdl_op_definition
class ReadOp(_HostData, tile._BoundaryOp):
    """The runtime reads a result out of a view in a system memory after the stream has
    ended; it takes no time on the NPU.

        %y = npu.read %v : memref<1x8x8x16xi8, "ddr"> to tensor<1x8x8x16xi8>
    """

    name = "npu.read"
    source = operand_def(MemRefType)
    result = result_def(TensorType)

    def check(self, props: Props) -> None:
        tile._check_boundary(self.result.type, self.source.type)
        _check_view(self.source, "npu.read")


# --------------------------------------------------------------------------------------
# Commands


class Command(TileOp):
    """A command of the stream: it runs on one queue of one core, on views only.

    `QUEUE` is the queue of every command of the kind (the DMA's depends on its
    direction: `queue()`); `core` the NPU core whose queue runs it (0 by default; a
    program on several cores says how many in `npu.cores`). A command of the MAC array
    or the vector unit reads and writes its core's SRAM only (`core_sram`), at
    addresses aligned to `npu.sram_alignment`.
    """

    QUEUE: ClassVar[str] = ""
    COMPUTE: ClassVar[bool] = True
    core = int_prop(0)

    def queue(self) -> str:
        """The queue that runs this command."""
        return self.QUEUE

    def core_index(self) -> int:
        """The core that runs this command."""
        return self.props().int("core") or 0

    def engine(self) -> int:
        """The engine queue that runs this command, among every core's (`engine`)."""
        return engine(self.core_index(), self.queue())

    def views(self) -> list[SSAValue]:
        """The buffer operands (views) the command reads or writes."""
        return [operand for operand in self.operands if isinstance(operand.type, MemRefType)]

    def verify_(self) -> None:
        super().verify_()
        core = self.core_index()
        function = _function_of(self)
        cores = core_count(function) if function is not None else None
        if core < 0 or (cores is not None and core >= cores):
            raise fail(
                f"{self.name} runs on core {core}; the program has "
                f"{cores} {'core' if cores == 1 else 'cores'} (npu.cores)"
                if cores is not None
                else f"'core' must be a non-negative integer, got {core}"
            )
        alignment = _memory_attr(self, SRAM_ALIGNMENT_ATTR) if self.COMPUTE else None
        own = core_sram(core)
        for operand in self.views():
            owner = _check_view(operand, self.name)
            space = space_of(buffer(operand))
            if is_sram(space) and space != own:
                raise fail(
                    f"{self.name} on core {core} uses {space}, another core's SRAM: a "
                    f"core reaches its own SRAM ({own}) and the system memories"
                )
            if not self.COMPUTE:
                continue
            if space != own:
                raise fail(f"{self.name} runs on SRAM only, got {operand.type}")
            address = owner.props().int("address")
            if alignment and address is not None and address % alignment:
                raise fail(
                    f"{self.name}: a buffer at SRAM address {address} is not aligned to "
                    f"{alignment} bytes"
                )


def is_stream(function: FuncOp) -> bool:
    """Whether the function is a command stream (its body holds `npu` commands)."""
    block = function.body.blocks.first
    return block is not None and any(isinstance(op, Command) for op in block.ops)


def dma_queue(source: str | None, into: str) -> str:
    """The queue of a DMA reading the `source` memory (None: a fill) into `into`: a
    move within SRAM runs on the vector unit (a cascade's tile into or out of its
    rolling buffer: the DMA engines serve the system memories, and a move there would
    hold up the loads or stores queued behind it), one out of SRAM on `dma_out`,
    anything else on `dma_in` (a DMA marked `weights` runs on `dma_weights` into SRAM,
    on `dma_stage` into a system memory, instead: `DmaOp.queue`)."""
    if source is not None and is_sram(source):
        return "vector" if is_sram(into) else "dma_out"
    return "dma_in"


@irdl_op_definition
class DmaOp(Command):
    """Copy a strided box between a system memory and SRAM, two system memories, or
    two places in SRAM (a cascade's rolling buffer and a tile): dest = source.

    `source` and `dest` have the same shape and element type; their strides describe
    the box in each memory (the DMA moves the contiguous runs they make). With `fill`,
    the DMA first writes `pad` into every element of that frame, a view around
    `dest`: the padding of a halo, or the frame of a transposed conv's upsampled input
    when `dest` has strides of `factor` times the frame's. A DMA into SRAM from a
    system memory (or between system memories, or a fill) runs on `dma_in`, one out of
    SRAM into a system memory on `dma_out`, and a move within SRAM (a cascade's tile
    into or out of its rolling buffer) on the vector unit (`dma_queue`). With
    `weights`, a load of weights from the weights region runs on the weight stream,
    `dma_weights` (a target with `weight_stream`: Ethos-U fetches weights on a channel
    of its own, beside the loads of activations), and a copy of a layer's weights into
    a faster system memory (its stage) on the DMA engine's queue, `dma_stage`, beside
    the layer before. With `broadcast = n` (a target with `broadcast_loads`), a load
    into SRAM writes the box, and its frame, into the SRAM of each of cores 0 to n-1 at
    the same address: one read of the source for every core of a layer in lock step.

        npu.dma %rows to %box fill %frame {pad = -3}
            : memref<1x7x56x32xi8, strided<[100352, 1792, 32, 1]>, "ddr">,
              memref<1x7x56x32xi8, strided<[12992, 1856, 32, 1]>, "sram">,
              memref<1x7x58x32xi8, "sram">
    """

    name = "npu.dma"
    COMPUTE: ClassVar[bool] = False
    source = opt_operand_def(MemRefType)
    dest = opt_operand_def(MemRefType)
    frame = opt_operand_def(MemRefType)
    pad = tile._number_prop()
    weights = bool_prop(False)
    broadcast = int_prop()
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def queue(self) -> str:
        if self.props().bool("weights"):
            dest = self.dest
            staging = dest is not None and not is_sram(space_of(buffer(dest)))
            return "dma_stage" if staging else "dma_weights"
        into = self.dest if self.dest is not None else self.frame
        assert into is not None
        return dma_queue(
            space_of(buffer(self.source)) if self.source is not None else None,
            space_of(buffer(into)),
        )

    def check(self, props: Props) -> None:
        source, dest, frame = self.source, self.dest, self.frame
        if (source is None) != (dest is None):
            raise fail("npu.dma copies from a source to a dest: give both or neither")
        if source is None and frame is None:
            raise fail("npu.dma needs a source and a dest, a fill frame, or both")
        if (
            source is not None
            and dest is not None
            and (element_of(source) != element_of(dest) or shape_of(source) != shape_of(dest))
        ):
            raise fail(f"source {source.type} and dest {dest.type} differ in shape or element type")
        if props.bool("weights"):
            if (
                source is None
                or dest is None
                or frame is not None
                or is_sram(space_of(buffer(source)))
            ):
                raise fail(
                    "a load on the weight stream ('weights') copies from the weights region, "
                    "without a fill"
                )
            _check_in_weights(source)
        if frame is not None:
            if dest is not None and (
                space_of(buffer(frame)) != space_of(buffer(dest))
                or element_of(frame) != element_of(dest)
            ):
                raise fail(f"the frame {frame.type} is not in the dest's memory and type")
            if props.attr("pad") is None:
                raise fail("a fill frame needs 'pad'")
            check_number(props, "pad", element_of(frame), "the frame")
            if dest is not None and not _inside(dest, frame):
                raise fail("the dest view does not lie inside the fill frame")
        for written in (dest, frame):
            if written is not None:
                _check_not_weights(written, "npu.dma")
        broadcast = props.int("broadcast")
        if broadcast is not None:
            into = dest if dest is not None else frame
            assert into is not None
            if broadcast < 2 or space_of(buffer(into)) != SRAM:
                raise fail(
                    f"'broadcast' loads into core 0's SRAM and as many others, 2 or more "
                    f"cores in all, got {broadcast} into {into.type}"
                )

    def print(self, printer: Printer) -> None:
        if self.source is not None and self.dest is not None:
            printer.print_string(" ")
            printer.print_operand(self.source)
            printer.print_string(" to ")
            printer.print_operand(self.dest)
        if self.frame is not None:
            printer.print_string(" fill ")
            printer.print_operand(self.frame)
        self.print_properties(printer)
        printer.print_string(" : ")
        printer.print_list([view.type for view in self.views()], printer.print_attribute)

    @classmethod
    def parse(cls, parser: Parser) -> DmaOp:
        start = parser.pos
        names = []
        segments = [0, 0, 0]
        if parser.parse_optional_keyword("fill") is None:
            names += [parser.parse_unresolved_operand()]
            parser.parse_keyword("to")
            names += [parser.parse_unresolved_operand()]
            segments[:2] = [1, 1]
            if parser.parse_optional_keyword("fill") is not None:
                names.append(parser.parse_unresolved_operand())
                segments[2] = 1
        else:
            names.append(parser.parse_unresolved_operand())
            segments[2] = 1
        properties, attributes = cls._parse_entries(parser)
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        operands = parser.resolve_operands(names, types, start)
        properties[tile.SEGMENTS] = DenseArrayBase.from_list(i32, segments)
        return cls.create(operands=list(operands), properties=properties, attributes=attributes)


def _inside(inner: SSAValue, outer: SSAValue) -> bool:
    """Every byte of view `inner` lies in the address range of view `outer`."""
    inner_owner, outer_owner = inner.owner, outer.owner
    if not isinstance(inner_owner, ViewOp) or not isinstance(outer_owner, ViewOp):
        return True  # Command.verify_ reports operands that are not views
    begin = inner_owner.props().int("address") or 0
    outer_begin = outer_owner.props().int("address") or 0
    end = begin + extent_bytes(buffer(inner))
    return outer_begin <= begin and end <= outer_begin + extent_bytes(buffer(outer))


# ---- the MAC array ------------------------------------------------------------------


class _MacCommand(Command):
    """The output stage of a MAC command: after the last K step the bias is added to
    the accumulator (`bias`), then the accumulator is requantized into an 8-bit
    `output` with the (multiplier, shift) pairs of `params`, its `output_zero_point`,
    clamp and `rounding` (half to even, or one of TFLite's rules:
    `fixed_point.ROUNDINGS`); or, for a float command, clamped in place (`clamp_min`,
    `clamp_max`, numbers). Without a stage the accumulator is the result."""

    QUEUE: ClassVar[str] = "mac"
    bias = opt_operand_def(MemRefType)
    params = opt_operand_def(MemRefType)
    output = opt_operand_def(MemRefType)
    output_zero_point = int_prop(0)
    clamp_min = tile._number_prop()
    clamp_max = tile._number_prop()
    rounding = rounding_prop()
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def check_stage(self, props: Props) -> None:
        acc = self.operands[2]  # the accumulator: conv's and matmul's third operand
        floating = element_of(acc) == f32
        rounding = check_rounding(props)
        if rounding != fixed_point.HALF_EVEN and (self.output is None or element_of(acc) != i32):
            raise fail("'rounding' belongs to the requantizing stage of an i32 accumulator")
        if self.bias is not None:
            channels = shape_of(acc)[-1]
            if element_of(self.bias) != element_of(acc) or shape_of(self.bias) != (channels,):
                raise fail(f"the bias must be [{channels}] of {element_of(acc)}")
        if (self.params is None) != (self.output is None):
            raise fail("a requantizing stage needs both params and output")
        if self.output is None:
            if not floating and (
                props.attr("clamp_min") is not None or props.attr("clamp_max") is not None
            ):
                raise fail("an int32 result is clamped by its requantize (params, output)")
            if props.int("output_zero_point"):
                raise fail("'output_zero_point' belongs to a requantizing stage")
            low, high = props.attr("clamp_min"), props.attr("clamp_max")
            if low is not None and high is not None and tile._value(low) > tile._value(high):
                raise fail(f"clamp_min {tile._value(low)} is above clamp_max {tile._value(high)}")
            return
        if floating:
            raise fail("a float accumulator is not requantized")
        if element_of(self.output) not in ACTIVATIONS or shape_of(self.output) != shape_of(acc):
            raise fail(
                f"the output must be an 8- or 16-bit tile of the accumulator's shape {acc.type}"
            )
        channels = shape_of(acc)[-1]
        assert self.params is not None  # with the output, checked above
        if element_of(self.params) != i32 or shape_of(self.params) not in (
            (channels, 2),
            (1, 2),
        ):
            raise fail(f"params must be [{channels}, 2] or [1, 2] i32 (multiplier, shift)")
        check_in_range(props, "output_zero_point", element_of(self.output))
        for name in ("clamp_min", "clamp_max"):
            if isinstance(props.attr(name), FloatAttr):
                raise fail(f"'{name}' of an 8-bit output must be an integer")
        check_clamp(props, element_of(self.output))

    def _print_stage(self, printer: Printer) -> None:
        if self.bias is not None:
            printer.print_string(" bias ")
            printer.print_operand(self.bias)
        if self.params is not None and self.output is not None:
            printer.print_string(" requantize ")
            printer.print_operand(self.params)
            printer.print_string(" into ")
            printer.print_operand(self.output)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.operands[:3], printer.print_operand)
        self._print_stage(printer)
        self.print_properties(printer)
        printer.print_string(" : ")
        printer.print_list([view.type for view in self.operands], printer.print_attribute)

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        start = parser.pos
        names = parser.parse_comma_separated_list(
            parser.Delimiter.NONE, parser.parse_unresolved_operand
        )
        segments = [1, 1, 1, 0, 0, 0]
        if parser.parse_optional_keyword("bias") is not None:
            names.append(parser.parse_unresolved_operand())
            segments[3] = 1
        if parser.parse_optional_keyword("requantize") is not None:
            names.append(parser.parse_unresolved_operand())
            parser.parse_keyword("into")
            names.append(parser.parse_unresolved_operand())
            segments[4:] = [1, 1]
        properties, attributes = cls._parse_entries(parser)
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        operands = parser.resolve_operands(names, types, start)
        properties[tile.SEGMENTS] = DenseArrayBase.from_list(i32, segments)
        return cls.create(operands=list(operands), properties=properties, attributes=attributes)


@irdl_op_definition
class ConvOp(tile.ConvFields, _MacCommand):
    """A conv tile on the MAC array (the arithmetic of `tile.conv`), then the output
    stage (see the ISA page): bias, requantize into the 8-bit output, clamp.

        npu.conv %box, %w, %acc bias %b requantize %p into %out
            {accumulate = true, input_zero_point = -3, output_zero_point = 5}
            : memref<1x7x58x32xi8, "sram">, memref<64x3x3x32xi8, "sram">,
              memref<1x5x56x64xi32, "sram">, memref<64xi32, "sram">,
              memref<64x2xi32, "sram">, memref<1x5x56x64xi8, "sram">
    """

    name = "npu.conv"

    def check(self, props: Props) -> None:
        super().check(props)
        self.check_stage(props)


@irdl_op_definition
class MatmulOp(tile.MatmulFields, _MacCommand):
    """A matrix product tile on the MAC array (the arithmetic of `tile.matmul`), then
    the output stage, as `npu.conv`'s.

        npu.matmul %a, %b, %acc requantize %p into %out
            : memref<8x64xi8, "sram">, memref<64x32xi8, "sram">, memref<8x32xi32, "sram">,
              memref<32x2xi32, "sram">, memref<8x32xi8, "sram">
    """

    name = "npu.matmul"

    def check(self, props: Props) -> None:
        super().check(props)
        self.check_stage(props)


# ---- the vector unit ----------------------------------------------------------------


class _VectorCommand(Command):
    QUEUE: ClassVar[str] = "vector"


@irdl_op_definition
class FillOp(tile.FillFields, _VectorCommand):
    """Write `value` into every element of an SRAM buffer (as `tile.fill`).

    On the vector unit, one cycle per lane-wide group of elements.

        npu.fill %acc {value = 0} : memref<1x4x12x16xi32, "sram">
    """

    name = "npu.fill"


@irdl_op_definition
class PoolOp(tile.PoolFields, _VectorCommand):
    """Max or average pooling of a padded input box (as `tile.pool`); the output
    origin operands are `arith.constant` indices.

        npu.pool %box, %out[%c0, %c4] {kind = "max", kernel_shape = [3, 3]}
            : memref<1x6x14x8xi8, "sram">, memref<1x4x12x8xi8, "sram">
    """

    name = "npu.pool"

    def check(self, props: Props) -> None:
        super().check(props)
        for index in self.origin:
            if not isinstance(index.owner, arith.ConstantOp):
                raise fail("the output origin of npu.pool is arith.constant indices")


@irdl_op_definition
class RequantizeOp(tile.RequantizeFields, _VectorCommand):
    """Requantize an i32 or 8-bit tile into an 8-bit one (as `tile.requantize`).

    On the vector unit: `ceil(channels / lanes)` cycles per output pixel.

        npu.requantize %in, %p, %out {input_zero_point = -3, output_zero_point = 5}
            : memref<64xi8, "sram">, memref<1x2xi32, "sram">, memref<64xi8, "sram">
    """

    name = "npu.requantize"


@irdl_op_definition
class AddOp(tile.AddFields, _VectorCommand):
    """Add two quantized tiles (as `tile.add`).

    On the vector unit: `2 * ceil(channels / lanes)` cycles per output pixel (one per
    input).

        npu.add %a, %b, %out {lhs_multiplier = 1073741824, lhs_shift = -1, ...}
            : memref<1x2x8x8xi8, "sram">, memref<1x2x8x8xi8, "sram">, memref<1x2x8x8xi8, "sram">
    """

    name = "npu.add"


@irdl_op_definition
class MulOp(tile.MulFields, _VectorCommand):
    """Multiply two quantized tiles (as `tile.mul`).

    On the vector unit: `2 * ceil(channels / lanes)` cycles per output pixel.

        npu.mul %a, %b, %out {multiplier = 1518500250, shift = 7}
            : memref<64xi8, "sram">, memref<64xi8, "sram">, memref<64xi8, "sram">
    """

    name = "npu.mul"


@irdl_op_definition
class ClampOp(tile.ClampFields, _VectorCommand):
    """Clamp a tile into another (as `tile.clamp`).

    On the vector unit: `ceil(channels / lanes)` cycles per output pixel.

        npu.clamp %in, %out {clamp_min = -5} : memref<64xi8, "sram">, memref<64xi8, "sram">
    """

    name = "npu.clamp"


@irdl_op_definition
class AddFOp(tile.FloatBinaryFields, _VectorCommand):
    """Add two f32 tiles (as `tile.addf`).

    On the vector unit: `2 * ceil(channels / lanes)` cycles per output pixel.

        npu.addf %a, %b, %out : memref<64xf32, "sram">, memref<64xf32, "sram">, memref<64xf32, "sram">
    """

    name = "npu.addf"


@irdl_op_definition
class MulFOp(tile.FloatBinaryFields, _VectorCommand):
    """Multiply two f32 tiles (as `tile.mulf`).

    On the vector unit: `2 * ceil(channels / lanes)` cycles per output pixel.

        npu.mulf %a, %s, %out : memref<4x16xf32, "sram">, memref<1x16xf32, "sram">, memref<4x16xf32, "sram">
    """

    name = "npu.mulf"


@irdl_op_definition
class TransposeOp(tile.TransposeFields, _VectorCommand):
    """Permute a tile's axes into another (as `tile.transpose`).

    On the vector unit: `ceil(last axis / lanes)` cycles per output row.

        npu.transpose %in, %out {perm = [0, 2, 1]} : memref<2x3x4xi8, "sram">, memref<2x4x3xi8, "sram">
    """

    name = "npu.transpose"


@irdl_op_definition
class ResizeOp(tile.ResizeFields, _VectorCommand):
    """Resize an SRAM tile along `axes`, which it holds whole or as a window (as
    `tile.resize`); a window's origin operands are `arith.constant` indices.

    On the vector unit: `ceil(last axis / lanes)` cycles per output row, times the
    2^k neighbours each output of a linear resize reads.

        npu.resize %in, %out {axes = [1, 2], scales = [2.0, 2.0]}
            : memref<1x4x4x8xi8, "sram">, memref<1x8x8x8xi8, "sram">
        npu.resize %in, %out[%c8, %c0, %c3, %c-1] {axes = [1, 2], input_lengths = [64, 64],
                output_lengths = [128, 128], scales = [2.0, 2.0]}
            : memref<1x6x66x8xi8, "sram">, memref<1x8x128x8xi8, "sram">
    """

    name = "npu.resize"

    def check(self, props: Props) -> None:
        super().check(props)
        for index in self.origin:
            if not isinstance(index.owner, arith.ConstantOp):
                raise fail("the window origin of npu.resize is arith.constant indices")


@irdl_op_definition
class LutOp(tile.LutFields, _VectorCommand):
    """Map an 8-bit tile through a 256-entry table (as `tile.lut`).

    On the vector unit: `ceil(channels / lanes)` cycles per output pixel.

        npu.lut %in, %table, %out : memref<64xi8, "sram">, memref<256xi8, "sram">, memref<64xi8, "sram">
    """

    name = "npu.lut"


@irdl_op_definition
class SoftmaxOp(tile.SoftmaxFields, _VectorCommand):
    """Softmax over the last axis of an 8-bit SRAM buffer (as `tile.softmax`).

    On the vector unit: three passes of `ceil(channels / lanes)` cycles per row (the
    maximum; the exps and their sum; the probabilities).

        npu.softmax %in, %table, %out {multiplier = 2139095040, shift = 7, output_zero_point = -128} : memref<16x16xi8, "sram">, memref<256xi16, "sram">, memref<16x16xi8, "sram">
    """

    name = "npu.softmax"


@irdl_op_definition
class LayerNormOp(tile.LayerNormFields, _VectorCommand):
    """Layer normalization over the last axis of an 8-bit (or i16) SRAM buffer (as
    `tile.layer_norm`; i64 (weight, bias) pairs for i16 values).

    On the vector unit: four passes of `ceil(channels / lanes)` cycles per row (the
    sum and the sum of squares; the normalized values; the weights, biases and
    requantization).

        npu.layer_norm %in, %params, %out {input_zero_point = 3, epsilon_term = 4, multiplier = 2137224968, shift = 15, output_zero_point = -2} : memref<16x32xi8, "sram">, memref<32x2xi32, "sram">, memref<16x32xi8, "sram">
    """

    name = "npu.layer_norm"


@irdl_op_definition
class LRNOp(tile.LRNFields, _VectorCommand):
    """Local response normalization across the last axis of an 8-bit (or i16) SRAM
    buffer (as `tile.lrn`; an i32 table).

    On the vector unit: three passes of `ceil(channels / lanes)` cycles per row (the
    squares and their running window sums; the octave lookup and interpolation; the
    product and requantization).

        npu.lrn %in, %table, %out {input_zero_point = -128, size = 5, multiplier = 1073741824, shift = 27, output_zero_point = -128} : memref<4x16xi8, "sram">, memref<225xi32, "sram">, memref<4x16xi8, "sram">
    """

    name = "npu.lrn"


@irdl_op_definition
class QuantizeOp(tile.CastFields, _VectorCommand):
    """Quantize an f32 tile to 8 bits (as `tile.quantize`): a model's float input.

    On the vector unit: `ceil(channels / lanes)` cycles per output pixel.

        npu.quantize %x, %q {scale = 0.0078125 : f32, zero_point = -128} : memref<64xf32, "sram">, memref<64xi8, "sram">
    """

    name = "npu.quantize"


@irdl_op_definition
class DequantizeOp(tile.CastFields, _VectorCommand):
    """Dequantize an 8-bit tile to f32 (as `tile.dequantize`): a model's float output.

    On the vector unit: `ceil(channels / lanes)` cycles per output pixel.

        npu.dequantize %q, %x {scale = 0.0078125 : f32, zero_point = -128} : memref<64xi8, "sram">, memref<64xf32, "sram">
    """

    name = "npu.dequantize"
    FLOATS_IN: ClassVar[bool] = False


# ---- the host -----------------------------------------------------------------------


@irdl_op_definition
class HostCallOp(_HostData, Command):
    """Run a function of the module on the host CPU: a subgraph the NPU does not run.

    The function takes and returns tensors; the call reads its arguments out of the
    views `inputs` and writes its results into the views `outputs`, all in system
    memories (the host does not reach the NPU's SRAM).

        npu.host_call @host_0(%a, %b) -> (%c)
            : (memref<1x10xi8, "ddr">, memref<1x10xi8, "ddr">) -> (memref<1x10xf32, "ddr">)
    """

    name = "npu.host_call"
    QUEUE: ClassVar[str] = "host"
    COMPUTE: ClassVar[bool] = False
    callee = prop_def(SymbolRefAttr)
    inputs = var_operand_def(MemRefType)
    outputs = var_operand_def(MemRefType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def check(self, props: Props) -> None:
        if self.core_index():
            raise fail("a host call runs on the host, which the cores share: core 0")
        for view in self.views():
            if is_sram(space_of(buffer(view))):
                raise fail(f"a host call reads and writes system memories only, got {view.type}")
        for view in self.outputs:
            _check_not_weights(view, "npu.host_call")
        module = self.get_toplevel_object()
        if module is self or not isinstance(module, Operation):
            return
        callee = SymbolTable.lookup_symbol(module, self.callee)
        if not isinstance(callee, FuncOp):
            raise fail(f"the callee {self.callee} is not a function of the module")
        inputs, outputs = callee.function_type.inputs.data, callee.function_type.outputs.data
        if len(inputs) != len(self.inputs) or len(outputs) != len(self.outputs):
            raise fail(
                f"{self.callee} takes {len(inputs)} and returns {len(outputs)} tensors; the "
                f"call has {len(self.inputs)} inputs and {len(self.outputs)} outputs"
            )
        for tensor_type, view in [*zip(inputs, self.inputs), *zip(outputs, self.outputs)]:
            tile._check_boundary(tensor_type, view.type)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.callee)
        printer.print_string("(")
        printer.print_list(self.inputs, printer.print_operand)
        printer.print_string(") -> (")
        printer.print_list(self.outputs, printer.print_operand)
        printer.print_string(")")
        self.print_properties(printer, skip=("callee",))
        printer.print_string(" : (")
        printer.print_list([view.type for view in self.inputs], printer.print_attribute)
        printer.print_string(") -> (")
        printer.print_list([view.type for view in self.outputs], printer.print_attribute)
        printer.print_string(")")

    @classmethod
    def parse(cls, parser: Parser) -> HostCallOp:
        start = parser.pos
        callee = parser.parse_attribute()
        if not isinstance(callee, SymbolRefAttr):
            parser.raise_error("expected the callee, @name", start, parser.pos)
        inputs = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_unresolved_operand
        )
        parser.parse_punctuation("->")
        outputs = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_unresolved_operand
        )
        properties, attributes = cls._parse_entries(parser)
        parser.parse_punctuation(":")
        input_types = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
        parser.parse_punctuation("->")
        output_types = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
        operands = parser.resolve_operands(
            [*inputs, *outputs], [*input_types, *output_types], start
        )
        properties["callee"] = callee
        properties[tile.SEGMENTS] = DenseArrayBase.from_list(i32, [len(inputs), len(outputs)])
        return cls.create(operands=list(operands), properties=properties, attributes=attributes)


# ---- synchronisation and the end ----------------------------------------------------


class _NoOperands(Command):
    """A command without operands: its properties only."""

    COMPUTE: ClassVar[bool] = False

    def print(self, printer: Printer) -> None:
        self.print_properties(printer)

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        properties, attributes = cls._parse_entries(parser)
        return cls.create(properties=properties, attributes=attributes)


class _SyncOp(_NoOperands):
    """A signal or wait: on `queue` of `core`, about `token`. A token signalled on one
    core and waited for on another synchronises the two cores (the target's
    `sync_latency_cycles` later)."""

    COMPUTE: ClassVar[bool] = False
    queue_name = prop_def(StringAttr, prop_name="queue")
    token = int_prop()

    def queue(self) -> str:
        return self.queue_name.data

    def check(self, props: Props) -> None:
        if self.queue_name.data not in QUEUES:
            raise fail(f"'queue' must be one of {', '.join(QUEUES)}, got {self.queue_name.data}")
        token = props.int("token")
        if token is None:
            raise fail(f"{self.name} needs 'token'")
        if token < 0:
            raise fail(f"'token' must be a non-negative integer, got {token}")


@irdl_op_definition
class SignalOp(_SyncOp):
    """Set `token` once every command before this one on `queue` has finished. A token
    is set once in a stream.

        npu.signal {queue = "dma_in", token = 3}
    """

    name = "npu.signal"


@irdl_op_definition
class WaitOp(_SyncOp):
    """Hold the commands after this one on `queue` until `token` is set (by a signal
    earlier in the stream).

        npu.wait {queue = "mac", token = 3}
    """

    name = "npu.wait"


@irdl_op_definition
class EndOp(_NoOperands):
    """The end of the stream: every queue has drained.

    The runtime reads the results (`npu.read`) after it.

        npu.end
    """

    name = "npu.end"
    COMPUTE: ClassVar[bool] = False


NPU = Dialect(
    "npu",
    [
        ViewOp,
        PlaceOp,
        ReadOp,
        DmaOp,
        ConvOp,
        MatmulOp,
        FillOp,
        PoolOp,
        RequantizeOp,
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
        HostCallOp,
        SignalOp,
        WaitOp,
        EndOp,
    ],
    [],
)
"""The `npu` dialect."""

__all__ = [
    "NPU",
    "QUEUES",
    "Command",
    "core_sram",
    "dma_queue",
    "engine",
    "engine_name",
    "extent_bytes",
    "is_sram",
    "sram_core",
    "strides_of",
]
