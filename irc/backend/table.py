"""The backend table: one entry per kind of op that irc runs on an NPU.

Read it top to bottom: each `Entry` names the op classes of its kind, what the NPU
does with them, irc's own check of an instance, the layer model the tile planner
plans, the lowering to the tile level, and the commands that lowering emits (see
`irc.backend` for what each field means and who reads it). `COMMANDS` pairs each
tile compute op with the `npu` command it becomes and that command's cost on the
vector unit; MAC commands are timed from their shapes (irc/sim/timing.py).

An op kind that has no entry here runs on the host, whatever the target's support
table says: `place` gives "irc has no NPU lowering of it" as the reason.
"""

from __future__ import annotations

import math

from irc.backend import CommandSpec, Entry
from irc.backend.mac import check_conv, check_gemm, conv_layer, gemm_layer, lower_conv, lower_gemm
from irc.backend.movement import (
    check_concat,
    check_pad,
    check_resize,
    check_slice,
    lower_concat,
    lower_depth_to_space,
    lower_linear_resize,
    lower_pad,
    lower_resize,
    lower_slices,
    lower_transpose,
    resize_layer,
    transpose_layer,
)
from irc.backend.vector import (
    check_cast,
    check_float_elementwise,
    check_lrn,
    check_pool,
    check_requantize,
    clamp_key,
    elementwise_op_layer,
    emit_add,
    emit_cast,
    emit_clamp,
    emit_float_binary,
    emit_float_clamp,
    emit_mul,
    layer_norm_layer,
    lower_layer_norm,
    lower_lrn,
    lower_lut,
    lower_pool,
    lower_requantize,
    lower_softmax,
    lower_with,
    lrn_layer,
    lut_key,
    lut_layer,
    max_pool_key,
    pool_layer,
    requantize_layer,
    softmax_layer,
)
from irc.dialects import nn, npu, part, qnn, quant, tile

# --------------------------------------------------------------------------------------
# The commands: each tile compute op, the npu command of the same fields, its engine
# and, on the vector unit, (what it reads, what it writes, cycles per output element)

CONV = CommandSpec(tile.ConvOp, npu.ConvOp, "mac")
MATMUL = CommandSpec(tile.MatmulOp, npu.MatmulOp, "mac")
FILL = CommandSpec(tile.FillOp, npu.FillOp, "vector", lambda op: ([], [op.target], 1))
POOL = CommandSpec(
    tile.PoolOp,
    npu.PoolOp,
    "vector",
    lambda op: ([op.input], [op.output], math.prod(op.props().ints("kernel_shape") or [1, 1])),
)
REQUANTIZE = CommandSpec(
    tile.RequantizeOp, npu.RequantizeOp, "vector", lambda op: ([op.acc, op.params], [op.output], 1)
)
ADD = CommandSpec(tile.AddOp, npu.AddOp, "vector", lambda op: ([op.lhs, op.rhs], [op.output], 2))
MUL = CommandSpec(tile.MulOp, npu.MulOp, "vector", lambda op: ([op.lhs, op.rhs], [op.output], 2))
ADDF = CommandSpec(tile.AddFOp, npu.AddFOp, "vector", lambda op: ([op.lhs, op.rhs], [op.output], 2))
MULF = CommandSpec(tile.MulFOp, npu.MulFOp, "vector", lambda op: ([op.lhs, op.rhs], [op.output], 2))
CLAMP = CommandSpec(tile.ClampOp, npu.ClampOp, "vector", lambda op: ([op.input], [op.output], 1))
TRANSPOSE = CommandSpec(
    tile.TransposeOp, npu.TransposeOp, "vector", lambda op: ([op.input], [op.output], 1)
)
RESIZE = CommandSpec(  # a linear output reads its 2^k neighbours, a nearest one 1
    tile.ResizeOp,
    npu.ResizeOp,
    "vector",
    lambda op: (
        [op.input],
        [op.output],
        2 ** len(op.props().ints("axes") or []) if op.props().str("mode") == "linear" else 1,
    ),
)
LUT = CommandSpec(
    tile.LutOp, npu.LutOp, "vector", lambda op: ([op.input, op.table], [op.output], 1)
)
SOFTMAX = CommandSpec(  # three passes: the maximum, the exps and their sum, the division
    tile.SoftmaxOp,
    npu.SoftmaxOp,
    "vector",
    lambda op: ([op.input, *([op.mask] if op.mask else []), op.table], [op.output], 3),
)
LAYER_NORM = CommandSpec(  # four passes: the two sums, z, the weights and requantization
    tile.LayerNormOp, npu.LayerNormOp, "vector", lambda op: ([op.input, op.params], [op.output], 4)
)
LRN = CommandSpec(  # three passes: the window sums, the lookup, the product and requantization
    tile.LRNOp, npu.LRNOp, "vector", lambda op: ([op.input, op.table], [op.output], 3)
)
QUANTIZE = CommandSpec(
    tile.QuantizeOp, npu.QuantizeOp, "vector", lambda op: ([op.input], [op.output], 1)
)
DEQUANTIZE = CommandSpec(
    tile.DequantizeOp, npu.DequantizeOp, "vector", lambda op: ([op.input], [op.output], 1)
)

COMMANDS = (
    CONV, MATMUL, FILL, POOL, REQUANTIZE, ADD, MUL, ADDF, MULF, CLAMP, TRANSPOSE, RESIZE,
    LUT, SOFTMAX, LAYER_NORM, LRN, QUANTIZE, DEQUANTIZE,
)  # fmt: skip
"""Every tile compute op that becomes a command (copies become `npu.dma`s: the stream
lowering's own, irc/stream/lowering.py)."""

# A MAC layer clears its accumulator when K is split, adds its bias and requantizes
# its accumulator tile as it leaves the array (the command's output stage).
_MAC_STAGE = (FILL, REQUANTIZE, CLAMP)

# --------------------------------------------------------------------------------------
# The entries

ENTRIES: tuple[Entry, ...] = (
    # ---- the MAC array
    Entry(
        "conv",
        (qnn.ConvOp, nn.ConvOp),
        "convolution (grouped, depthwise; 1-D, 2-D) on the MAC array, requantized as it "
        "leaves the array",
        check=check_conv,
        layer=conv_layer,
        lower=lower_conv,
        accumulates=True,
        cascades=True,
        commands=(CONV, *_MAC_STAGE),
    ),
    Entry(
        "conv_transpose",
        (qnn.ConvTransposeOp, nn.ConvTransposeOp),
        "the stride-1 conv of the flipped kernel over the input with zero points inserted",
        check=check_conv,
        layer=conv_layer,
        lower=lower_conv,
        accumulates=True,
        commands=(CONV, *_MAC_STAGE),
    ),
    Entry(
        "gemm",
        (qnn.GemmOp, nn.GemmOp),
        "a 1x1 conv over M rows of K channels, with its bias",
        check=check_gemm,
        layer=gemm_layer,
        lower=lower_gemm,
        accumulates=True,
        commands=(MATMUL, *_MAC_STAGE),
    ),
    Entry(
        "matmul",
        (qnn.MatMulOp, nn.MatMulOp),
        "weights or another layer's activations (with their zero point) as the right side",
        check=check_gemm,
        layer=gemm_layer,
        lower=lower_gemm,
        accumulates=True,
        commands=(MATMUL, *_MAC_STAGE),
    ),
    # ---- the vector unit: pooling
    Entry(
        "max_pool",
        (qnn.MaxPoolOp, nn.MaxPoolOp),
        "a depthwise window of max on the vector unit, padding below every value (one "
        "window over the whole image: the support table's global_max_pool)",
        check=check_pool,
        layer=pool_layer,
        lower=lower_pool,
        cascades=True,
        commands=(POOL,),
        support_key=max_pool_key,
    ),
    Entry(
        "average_pool",
        (qnn.AveragePoolOp, nn.AveragePoolOp),
        "a depthwise window of sums on the vector unit, divided with rounding",
        check=check_pool,
        layer=pool_layer,
        lower=lower_pool,
        cascades=True,
        commands=(POOL,),
    ),
    Entry(
        "global_average_pool",
        (qnn.GlobalAveragePoolOp, nn.GlobalAveragePoolOp),
        "one window over the whole image",
        check=check_pool,
        layer=pool_layer,
        lower=lower_pool,
        commands=(POOL,),
    ),
    # ---- the vector unit: the model's float inputs and outputs
    Entry(
        "quantize",
        (quant.QuantizeCastOp,),
        "f32 to 8 bits on the vector unit (a float model's input): divided by the "
        "scale, rounded half to even, saturated",
        check=check_cast,
        layer=elementwise_op_layer,
        lower=lower_with(emit_cast),
        commands=(QUANTIZE,),
    ),
    Entry(
        "dequantize",
        (quant.DequantizeCastOp,),
        "8 bits to f32 on the vector unit (a float model's output)",
        check=check_cast,
        layer=elementwise_op_layer,
        lower=lower_with(emit_cast),
        commands=(DEQUANTIZE,),
    ),
    # ---- the vector unit: elementwise
    Entry(
        "add",
        (qnn.AddOp,),
        "both inputs rescaled to one scale, added and requantized (broadcasting)",
        layer=elementwise_op_layer,
        lower=lower_with(emit_add),
        in_place=True,
        cascades=True,
        commands=(ADD,),
    ),
    Entry(
        "add",
        (nn.AddOp,),
        "a float add (broadcasting), its fused relu or clip a clamp",
        check=check_float_elementwise,
        layer=elementwise_op_layer,
        lower=lower_with(emit_float_binary),
        in_place=True,
        cascades=True,
        commands=(ADDF, CLAMP),
    ),
    Entry(
        "mul",
        (qnn.MulOp,),
        "the product of the centred inputs, requantized (broadcasting)",
        layer=elementwise_op_layer,
        lower=lower_with(emit_mul),
        in_place=True,
        cascades=True,
        commands=(MUL,),
    ),
    Entry(
        "mul",
        (nn.MulOp,),
        "a float mul (broadcasting), its fused relu or clip a clamp",
        check=check_float_elementwise,
        layer=elementwise_op_layer,
        lower=lower_with(emit_float_binary),
        in_place=True,
        cascades=True,
        commands=(MULF, CLAMP),
    ),
    Entry(
        "clamp",
        (qnn.ClampOp,),
        "an int8 relu or clip: the stored values clamped (the support table's relu or clip)",
        layer=elementwise_op_layer,
        lower=lower_with(emit_clamp),
        in_place=True,
        cascades=True,
        commands=(CLAMP,),
        support_key=clamp_key,
    ),
    Entry(
        "relu",
        (nn.ReluOp,),
        "a float relu: a clamp",
        check=check_float_elementwise,
        layer=elementwise_op_layer,
        lower=lower_with(emit_float_clamp),
        in_place=True,
        cascades=True,
        commands=(CLAMP,),
    ),
    Entry(
        "clip",
        (nn.ClipOp,),
        "a float clip: a clamp",
        check=check_float_elementwise,
        layer=elementwise_op_layer,
        lower=lower_with(emit_float_clamp),
        in_place=True,
        cascades=True,
        commands=(CLAMP,),
    ),
    Entry(
        "lut",
        (qnn.LutOp,),
        "an int8 function through the 256-entry lookup table (the support table's entry "
        "of the function it tabulates)",
        layer=lut_layer,
        lower=lower_lut,
        in_place=True,
        cascades=True,
        commands=(LUT,),
        support_key=lut_key,
    ),
    Entry(
        "softmax",
        (qnn.SoftmaxOp,),
        "int8 softmax of whole rows of the last axis: the 256-entry i16 exp table, an "
        "integer sum and reciprocal, three passes of the vector unit",
        layer=softmax_layer,
        lower=lower_softmax,
        in_place=True,
        commands=(SOFTMAX,),
    ),
    Entry(
        "layer_norm",
        (qnn.LayerNormOp,),
        "int8 (or int16) layer normalization of whole rows of the last axis: integer "
        "sums, an integer square root, gamma and beta as per-channel weights, four passes",
        layer=layer_norm_layer,
        lower=lower_layer_norm,
        in_place=True,
        commands=(LAYER_NORM,),
    ),
    Entry(
        "lrn",
        (qnn.LRNOp,),
        "int8 (or int16) local response normalization across the channels (NHWC): "
        "running window sums of squares, their function interpolated by octave in an "
        "i32 table, three passes",
        check=check_lrn,
        layer=lrn_layer,
        lower=lower_lrn,
        in_place=True,
        commands=(LRN,),
    ),
    Entry(
        "requantize",
        (qnn.RequantizeOp,),
        "a rescale to another type on the vector unit (alone; a MAC layer's own is its "
        "output stage)",
        check=check_requantize,
        layer=requantize_layer,
        lower=lower_requantize,
        in_place=True,
        commands=(REQUANTIZE,),
    ),
    # ---- data movement: copies through SRAM
    Entry(
        "pad",
        (qnn.PadOp,),
        "boxes of the input copied into the output, the rest filled with the zero point",
        check=check_pad,
        lower=lower_pad,
        commands=(FILL,),
    ),
    Entry(
        "transpose",
        (nn.TransposeOp,),
        "each output tile read as its input box and permuted on the vector unit",
        layer=transpose_layer,
        lower=lower_transpose,
        commands=(TRANSPOSE,),
    ),
    Entry(
        "depth_to_space",
        (nn.DepthToSpaceOp,),
        "the transpose of the input's 6-D view (channels as blocks and depth) into the "
        "output's (rows and columns as blocks)",
        lower=lower_depth_to_space,
        commands=(TRANSPOSE,),
    ),
    Entry(
        "resize",
        (nn.ResizeOp,),
        "a nearest resize: by whole factors each input box loaded once per repeat into an "
        "SRAM tile of the output (DMA only); another one a gather on the vector unit, in "
        "windows of rows and columns (NHWC) or whole planes",
        check=check_resize,
        layer=resize_layer,
        lower=lower_resize,
        commands=(RESIZE,),
    ),
    Entry(
        "resize",
        (qnn.ResizeOp,),
        "a linear resize on the vector unit: tiles of output rows, columns and channels, "
        "each reading the input window its outputs need (NHWC; other axes: whole planes), "
        "each output the weighted sum of its neighbours (Q10 weights, Q15 for 16 bits)",
        layer=resize_layer,
        lower=lower_linear_resize,
        commands=(RESIZE,),
    ),
    Entry(
        "slice", (nn.SliceOp,), "a box of the input, copied", check=check_slice, lower=lower_slices
    ),
    Entry("split", (nn.SplitOp,), "each result a box of the input, copied", lower=lower_slices),
    Entry(
        "concat",
        (qnn.ConcatOp, nn.ConcatOp),
        "each input written into its slice (by its producer: zero-copy), rescaled if needed",
        check=check_concat,
        lower=lower_concat,
        gathers=True,
        commands=(REQUANTIZE,),
    ),
    # ---- views: the input's buffer, nothing moves
    Entry("reshape", (nn.ReshapeOp,), "a view of the input's buffer", view=True),
    Entry("flatten", (nn.FlattenOp,), "a view of the input's buffer", view=True),
    Entry("squeeze", (nn.SqueezeOp,), "a view of the input's buffer", view=True),
    Entry("unsqueeze", (nn.UnsqueezeOp,), "a view of the input's buffer", view=True),
    Entry("identity", (nn.IdentityOp,), "a view of the input's buffer", view=True),
    Entry(
        "transfer",
        (part.TransferOp,),
        "a copy between host and NPU memory, which share DDR: the same buffer",
        view=True,
    ),
)
"""Every kind of op irc runs on an NPU, in the order of docs/architecture.md's table."""
