"""Differential fuzzing of the whole pipeline: random ONNX graphs, every level compared.

In the spirit of NNSmith, `generate(seed, max_ops)` builds a random ONNX graph (opset
13) of 1 to `max_ops` ops that is valid by construction, `check_graph(model, seed)`
runs it through every level of irc and compares the levels, and `minimize(model,
fails)` shrinks a failing graph while it still fails.

    python -m irc.testing.fuzz --count 1000 --seed 0 --jobs 2 --save-failures DIR

The op set
----------
On 4-D NCHW tensors: Conv (plain, grouped, depthwise with a channel multiplier;
square or rectangular kernels 1 to 5, strides 1 and 2, dilations 1 and 2, asymmetric
pads, with or without a bias), MaxPool and AveragePool (kernels 1 to 3, strides,
pads, count_include_pad, now and then dilations and ceil_mode), GlobalAveragePool,
BatchNormalization, Pad (constant, and now and then reflect or edge), Resize (nearest
and linear, every coordinate transformation mode the NPU knows, integer up-scales),
ReduceMean (over H and W, or over C; keepdims 0 over H and W gives a 2-D tensor),
Transpose (any permutation), Reshape (to another factorisation, or to 2-D), Flatten,
MatMul by a constant (over the last axis). On 2-D tensors: Gemm (transB, alpha, beta,
with or without a bias), MatMul, Reshape back to 4-D. On any tensor: Add, Sub, Mul
(with a constant of a broadcastable shape, or with an earlier tensor of the same or a
broadcastable shape), Relu, Clip (relu6, [-1, 1], min only), LeakyRelu, Sigmoid,
HardSwish (opset 14: written as x * HardSigmoid(x, 1/6, 1/2), as ONNX defines it),
Tanh, Softmax (over any axis, the last and the channels most often), Concat (with
earlier tensors that agree on every other axis, or with itself).

Transformers: Tokens (a 4-D map as [n, h * w, c], a Reshape and a Transpose, as a
ViT's patch embedding leaves it), Attention on tokens (Q, K, V by MatMul, 1, 2 or 4
heads split by Reshape and Transpose, Q K^T as a MatMul of two activations, a Div by
sqrt(d), now and then a causal mask as a Where of -inf, -1e9 or -1e4 or an Add of a 0
/ -1e4 bias, Softmax over the last axis, times V, the heads merged, a projection),
LayerNorm over the last axis written as its arithmetic (ReduceMean, Sub, Pow,
ReduceMean, Add, Sqrt, Div, with or without gamma and beta, as TorchScript exports
it before opset 17), and the exact GELU written with Erf.

Beyond those, more of what irc imports: ConvTranspose (kernels 1 to 4, strides 1 and 2,
pads, output_padding), Slice (one axis, negative starts, steps 1 and 2), Split (two
parts, one of which is used), GlobalMaxPool, ReduceSum and ReduceMax (keepdims),
DepthToSpace (DCR and CRD), PRelu (per channel), Max and Min (like Add), Div by a
constant away from zero, Abs, Neg, Elu, Exp (of Clip(x, -3, 3)), Squeeze and Unsqueeze (between 4-D with
1x1 maps and 2-D).

The construction rules
----------------------
- Every tensor's shape is tracked; an op is drawn among those whose attributes can be
  chosen valid for the shape of its input, and the attributes are drawn so that the
  output exists (every output dimension at least 1) and stays small: at most
  `MAX_ELEMENTS` elements per tensor (`LARGE_MAX_ELEMENTS` and maps up to 32x32 in
  one graph out of ten), so a graph of 30 ops simulates in about a second.
- Branches: an op's main input is the newest tensor most of the time, else any earlier
  tensor (graph inputs included). Joins: Add/Sub/Mul and Concat take a second operand
  among the earlier tensors whose shape fits (equal, broadcastable, or equal but on the
  concatenation axis), now and then the same tensor twice (x + x, x * x, Concat(x, x)).
- Weights are seeded normal numbers scaled by 1/sqrt(fan-in), batch-norm variances
  are in [0.5, 1.5], constants of Mul are near +-1: activations keep a unit scale
  through deep graphs, so the int8 ranges and the float tolerances stay meaningful.
- One or two inputs of batch 1, or now and then 2 (beyond the NPU's limit: host
  fallbacks), static shapes: 4-D of 1 to 8 channels and 1 to 16 (32) rows and columns, or
  now and then 2-D. Outputs are the last tensor and up to two other
  tensors, mostly ones that no op reads, now and then one that ops also read.
- The same seed gives the same model, bit for bit; every model passes `onnx.checker`
  (with strict shape inference) and runs in onnxruntime.

The levels compared (`check_graph`)
-----------------------------------
1. `nn`: the imported module in irc's float interpreter against onnxruntime;
2. `graph-opt`: the same after `graph-opt{activations=relu,clip}`; both within
   `FLOAT_RTOL`/`FLOAT_ATOL` (tests/test_models.py's 1e-4/1e-5) of onnxruntime, the
   absolute tolerance scaled by the output's largest magnitude (`compare_float`);
3. `qnn`: calibrated (min-max, two samples) and quantized as `irc-compile -O2` does
   (with bias correction; one seed in SIXTEEN_BIT_EVERY with every activation int16,
   another with the adds', muls' and convolutions' int16: `quantize_config`), lowered
   to integer ops, the ops the target cannot run marked for the host: the integer
   reference. It must run;
4. `tile`: `plan-tiles`, `plan-ddr`, `lower-to-tile` for the target (`--target auto`,
   the default: edge-2tops for a graph with a softmax, an erf, an LRN or a matmul of two
   computed values, for the int16 seeds, and every fourth other seed, npu-demo for
   the rest; or the one
   `--target` names). The seed turns channel alignment and double buffering
   on and off, as `-O0` to `-O2` do, and cascades (on in three seeds of four, chosen
   by cost or, in every third seed, forced in stripes of 1 to 4 rows: `cascade_options`),
   and gives the target a weight stream in every other run of 16 seeds
   (`weight_stream_option`) and two cores in every other run of 32 (`cores_option`,
   `two_cores`; in half of those every layer in small tiles, each split across the
   cores whatever its cost): bit-exact with qnn;
5. `npu`: `lower-to-npu`, the command stream on the simulator: bit-exact with qnn;
6. `package`: the package's files loaded by `irc.runtime.Session`: bit-exact with qnn.

An `IrcError` (a diagnostic) is a legitimate rejection of the graph: the graph is
"skipped" and the message recorded (the run prints the rejections by level and
message, since a rejection of a valid graph may still be a limitation worth fixing).
Any other exception, or a mismatch, is a failure. numpy's RuntimeWarnings in irc's
code are recorded and printed with the seed that first raised them: not failures, but
worth a look (one led to a bug in quantization).
"""

from __future__ import annotations

import argparse
import hashlib
import math
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

if TYPE_CHECKING:
    import onnx

    from irc.quantize.qdq import QuantizeConfig
    from irc.targets import Target

OPSET = 13
MAX_ELEMENTS = 4096
"""At most this many elements in any tensor of a generated graph."""
LARGE_MAX_ELEMENTS = 16384
"""The limit in one graph out of ten, whose inputs are up to 32x32."""
MAX_CHANNELS = 16
FLOAT_RTOL, FLOAT_ATOL = 1e-4, 1e-5
"""tests/test_models.py's tolerances of the float levels against onnxruntime."""
LEVELS = ("onnxruntime", "nn", "graph-opt", "qnn", "tile", "npu", "package")
"""The levels `check_graph` runs, in order."""
REGRESSIONS = Path(__file__).parents[2] / "tests" / "fuzz_regressions"
"""Where minimized failures are saved (tests/test_fuzz.py runs every one)."""


# --------------------------------------------------------------------------------------
# The generator


@dataclass(frozen=True)
class _Tensor:
    name: str
    shape: tuple[int, ...]

    @property
    def size(self) -> int:
        return math.prod(self.shape)


class _Graph:
    """A graph under construction: its nodes, initializers and every tensor's shape."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self.inputs: list[_Tensor] = []
        self.tensors: list[_Tensor] = []
        self.consumed: set[str] = set()
        self.max_elements = MAX_ELEMENTS
        """At most this many elements in a tensor."""
        self.max_nodes = 0
        """The graph's size: a builder of two nodes does not fit in the last slot."""

    # ---- drawing ----------------------------------------------------------------------

    def chance(self, probability: float) -> bool:
        return bool(self.rng.random() < probability)

    def pick(self, options: Sequence[Any]) -> Any:
        return options[int(self.rng.integers(len(options)))]

    def integer(self, low: int, high: int) -> int:
        """An integer in [low, high]."""
        return int(self.rng.integers(low, high + 1))

    def normal(self, shape: Sequence[int], std: float) -> np.ndarray:
        return (self.rng.standard_normal(tuple(shape)) * std).astype(np.float32)

    # ---- building ---------------------------------------------------------------------

    def constant(self, array: np.ndarray) -> str:
        from onnx import numpy_helper

        name = f"c{len(self.initializers)}"
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def add_input(self, shape: tuple[int, ...]) -> _Tensor:
        tensor = _Tensor(f"input{len(self.inputs)}", shape)
        self.inputs.append(tensor)
        self.tensors.append(tensor)
        return tensor

    def emit(
        self, op_type: str, inputs: Sequence[str], shape: tuple[int, ...], **attributes: Any
    ) -> _Tensor:
        from onnx import helper

        index = len(self.nodes)
        output = _Tensor(f"t{index}", tuple(int(d) for d in shape))
        self.nodes.append(
            helper.make_node(
                op_type, list(inputs), [output.name], name=f"n{index}_{op_type}", **attributes
            )
        )
        self.consumed.update(name for name in inputs if name)
        self.tensors.append(output)
        return output

    def emit_many(
        self,
        op_type: str,
        inputs: Sequence[str],
        shapes: Sequence[tuple[int, ...]],
        **attributes: Any,
    ) -> list[_Tensor]:
        """A node of several outputs (Split)."""
        from onnx import helper

        index = len(self.nodes)
        outputs = [_Tensor(f"t{index}_{i}", shape) for i, shape in enumerate(shapes)]
        self.nodes.append(
            helper.make_node(
                op_type,
                list(inputs),
                [output.name for output in outputs],
                name=f"n{index}_{op_type}",
                **attributes,
            )
        )
        self.consumed.update(name for name in inputs if name)
        self.tensors.extend(outputs)
        return outputs

    def model(self, outputs: Sequence[_Tensor], name: str) -> onnx.ModelProto:
        from onnx import TensorProto, helper

        def info(tensor: _Tensor) -> Any:
            return helper.make_tensor_value_info(tensor.name, TensorProto.FLOAT, tensor.shape)

        graph = helper.make_graph(
            self.nodes,
            name,
            [info(tensor) for tensor in self.inputs],
            [info(tensor) for tensor in outputs],
            initializer=self.initializers,
        )
        model = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="irc-fuzz"
        )
        model.ir_version = 8
        return model

    # ---- choosing operands ------------------------------------------------------------

    def partners(self, x: _Tensor, fits: Callable[[tuple[int, ...]], bool]) -> list[_Tensor]:
        return [t for t in self.tensors if t.name != x.name and fits(t.shape)]


OpBuilder = Callable[[_Graph, _Tensor], "_Tensor | None"]
"""Adds one op on `x` (and maybe earlier tensors); None when it does not fit `x`."""


def _conv_output(size: int, kernel: int, stride: int, dilation: int, pads: int) -> int:
    return (size + pads - dilation * (kernel - 1) - 1) // stride + 1


def _conv(g: _Graph, x: _Tensor) -> _Tensor | None:
    if len(x.shape) != 4:
        return None
    n, c, h, w = x.shape
    roll = g.rng.random()
    if roll < 0.6:
        group, out = 1, g.integer(1, MAX_CHANNELS)
    elif roll < 0.85 or c == 1:
        group, out = c, c * g.pick([1, 1, 2])
    else:
        divisors = [d for d in range(2, c) if c % d == 0]
        if not divisors:
            return None
        group = g.pick(divisors)
        out = group * g.integer(1, max(1, MAX_CHANNELS // group))
    if out > 4 * MAX_CHANNELS:
        return None
    square = g.chance(0.8)
    kh = g.pick([1, 1, 2, 3, 3, 5])
    kw = kh if square else g.pick([1, 2, 3])
    stride = g.pick([1, 1, 2]) if square else 1
    strides = [stride, stride] if g.chance(0.9) else [g.pick([1, 2]), g.pick([1, 2])]
    dilation = 2 if g.chance(0.15) else 1
    pads = [g.integer(0, (k - 1) * dilation) if k > 1 else 0 for k in (kh, kw, kh, kw)]
    if g.chance(0.5):  # symmetric, as most networks
        pads[2], pads[3] = pads[0], pads[1]
    oh = _conv_output(h, kh, strides[0], dilation, pads[0] + pads[2])
    ow = _conv_output(w, kw, strides[1], dilation, pads[1] + pads[3])
    if oh < 1 or ow < 1 or n * out * oh * ow > g.max_elements:
        return None
    fan_in = (c // group) * kh * kw
    weight = g.constant(g.normal((out, c // group, kh, kw), 1 / math.sqrt(fan_in)))
    inputs = [x.name, weight]
    if g.chance(0.7):
        inputs.append(g.constant(g.normal((out,), 0.1)))
    attributes: dict[str, Any] = {"kernel_shape": [kh, kw], "pads": pads, "strides": strides}
    if dilation != 1:
        attributes["dilations"] = [dilation, dilation]
    if group != 1:
        attributes["group"] = group
    return g.emit("Conv", inputs, (n, out, oh, ow), **attributes)


def _pool(op_type: str) -> OpBuilder:
    def build(g: _Graph, x: _Tensor) -> _Tensor | None:
        if len(x.shape) != 4:
            return None
        n, c, h, w = x.shape
        kh = g.pick([1, 2, 2, 3, 3])
        kw = kh if g.chance(0.8) else g.pick([1, 2, 3])
        stride = g.pick([1, 2, 2])
        dilation = 2 if op_type == "MaxPool" and g.chance(0.05) else 1
        pads = [g.integer(0, k - 1) if g.chance(0.4) else 0 for k in (kh, kw, kh, kw)]
        ceil = g.chance(0.1)
        sizes = []
        for size, k, begin, end in ((h, kh, pads[0], pads[2]), (w, kw, pads[1], pads[3])):
            span = size + begin + end - dilation * (k - 1) - 1
            out = (-(-span // stride) if ceil else span // stride) + 1
            if span < 0 or (ceil and (out - 1) * stride >= size + begin):
                # A last window that starts in the padding: onnx's shape inference and
                # onnxruntime disagree on whether it exists.
                return None
            sizes.append(out)
        attributes: dict[str, Any] = {
            "kernel_shape": [kh, kw],
            "pads": pads,
            "strides": [stride, stride],
        }
        if ceil:
            attributes["ceil_mode"] = 1
        if dilation != 1:
            attributes["dilations"] = [dilation, dilation]
        if op_type == "AveragePool" and g.chance(0.5):
            attributes["count_include_pad"] = 1
        return g.emit(op_type, [x.name], (n, c, *sizes), **attributes)

    return build


def _global_average_pool(g: _Graph, x: _Tensor) -> _Tensor | None:
    if len(x.shape) != 4:
        return None
    return g.emit("GlobalAveragePool", [x.name], (*x.shape[:2], 1, 1))


def _batch_norm(g: _Graph, x: _Tensor) -> _Tensor | None:
    if len(x.shape) not in (2, 4):
        return None
    c = x.shape[1]
    scale = g.rng.uniform(0.5, 1.5, c).astype(np.float32)
    variance = g.rng.uniform(0.5, 1.5, c).astype(np.float32)
    inputs = [
        x.name,
        g.constant(scale),
        g.constant(g.normal((c,), 0.1)),
        g.constant(g.normal((c,), 0.1)),
        g.constant(variance),
    ]
    return g.emit("BatchNormalization", inputs, x.shape, epsilon=1e-5)


def _pad(g: _Graph, x: _Tensor) -> _Tensor | None:
    if len(x.shape) != 4:
        return None
    mode = g.pick(["constant"] * 8 + ["reflect", "edge"])
    limit = 2 if mode != "reflect" else min(2, x.shape[2] - 1, x.shape[3] - 1)
    if limit < 1:
        return None
    spatial = [g.integer(0, limit) for _ in range(4)]  # top, left, bottom, right
    pads = [0, 0, spatial[0], spatial[1], 0, 0, spatial[2], spatial[3]]
    n, c, h, w = x.shape
    shape = (n, c, h + spatial[0] + spatial[2], w + spatial[1] + spatial[3])
    if math.prod(shape) > g.max_elements:
        return None
    inputs = [x.name, g.constant(np.array(pads, np.int64))]
    if mode == "constant" and g.chance(0.3):
        inputs.append(g.constant(np.array(g.pick([0.5, -1.0]), np.float32)))
    return g.emit("Pad", inputs, shape, mode=mode)


def _resize(g: _Graph, x: _Tensor) -> _Tensor | None:
    if len(x.shape) != 4:
        return None
    n, c, h, w = x.shape
    scale_h, scale_w = g.pick([(2, 2), (2, 2), (2, 1), (1, 2), (3, 3)])
    shape = (n, c, h * scale_h, w * scale_w)
    if math.prod(shape) > g.max_elements:
        return None
    mode = g.pick(["nearest", "linear"])
    transform = g.pick(["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"])
    attributes: dict[str, Any] = {"mode": mode, "coordinate_transformation_mode": transform}
    if mode == "nearest":
        attributes["nearest_mode"] = g.pick(["round_prefer_floor", "floor"])
    scales = g.constant(np.array([1, 1, scale_h, scale_w], np.float32))
    return g.emit("Resize", [x.name, "", scales], shape, **attributes)


def _reduce_mean(g: _Graph, x: _Tensor) -> _Tensor | None:
    if len(x.shape) != 4:
        return None
    n, c, h, w = x.shape
    if g.chance(0.7):
        if g.chance(0.3):
            return g.emit("ReduceMean", [x.name], (n, c), axes=[2, 3], keepdims=0)
        return g.emit("ReduceMean", [x.name], (n, c, 1, 1), axes=[2, 3], keepdims=1)
    return g.emit("ReduceMean", [x.name], (n, 1, h, w), axes=[1], keepdims=1)


def _transpose(g: _Graph, x: _Tensor) -> _Tensor | None:
    if len(x.shape) != 4:
        perm = [int(axis) for axis in g.rng.permutation(len(x.shape))]
    elif g.chance(0.8):
        perm = [0, *(int(axis) + 1 for axis in g.rng.permutation(3))]
    else:
        perm = [int(axis) for axis in g.rng.permutation(4)]
    if perm == list(range(len(x.shape))):
        return None
    return g.emit("Transpose", [x.name], tuple(x.shape[axis] for axis in perm), perm=perm)


def _divisors(value: int) -> list[int]:
    return [d for d in range(1, value + 1) if value % d == 0]


def _reshape(g: _Graph, x: _Tensor) -> _Tensor | None:
    n, rest = x.shape[0], x.size // x.shape[0]
    if len(x.shape) == 4 and g.chance(0.4):
        shape: tuple[int, ...] = (n, rest)
    else:
        channels = g.pick([d for d in _divisors(rest) if d <= 4 * MAX_CHANNELS])
        rows = g.pick(_divisors(rest // channels))
        shape = (n, channels, rows, rest // channels // rows)
    if shape == x.shape:
        return None
    spec = list(shape)
    if g.chance(0.3):
        spec[g.integer(1, len(spec) - 1)] = -1
    return g.emit("Reshape", [x.name, g.constant(np.array(spec, np.int64))], shape)


def _flatten(g: _Graph, x: _Tensor) -> _Tensor | None:
    if len(x.shape) != 4:
        return None
    return g.emit("Flatten", [x.name], (x.shape[0], x.size // x.shape[0]), axis=1)


def _gemm(g: _Graph, x: _Tensor) -> _Tensor | None:
    if len(x.shape) != 2:
        return None
    n, k = x.shape
    m = g.integer(1, 32)
    transposed = g.chance(0.5)
    weight = g.normal((m, k) if transposed else (k, m), 1 / math.sqrt(k))
    inputs = [x.name, g.constant(weight)]
    attributes: dict[str, Any] = {"transB": 1} if transposed else {}
    if g.chance(0.7):
        inputs.append(g.constant(g.normal((m,), 0.1)))
        if g.chance(0.2):
            attributes["beta"] = 0.5
    if g.chance(0.2):
        attributes["alpha"] = 0.5
    return g.emit("Gemm", inputs, (n, m), **attributes)


def _matmul(g: _Graph, x: _Tensor) -> _Tensor | None:
    k = x.shape[-1]
    m = g.integer(1, 32)
    shape = (*x.shape[:-1], m)
    if math.prod(shape) > g.max_elements:
        return None
    weight = g.constant(g.normal((k, m), 1 / math.sqrt(k)))
    return g.emit("MatMul", [x.name, weight], shape)


def _broadcasts_into(small: tuple[int, ...], big: tuple[int, ...]) -> bool:
    try:
        return tuple(np.broadcast_shapes(small, big)) == big
    except ValueError:
        return False


def _binary(op_type: str) -> OpBuilder:
    def build(g: _Graph, x: _Tensor) -> _Tensor | None:
        shape = x.shape
        partners = g.partners(
            x, lambda s: _broadcasts_into(s, x.shape) or _broadcasts_into(x.shape, s)
        )
        if g.chance(0.05):
            partners = [x]  # x + x, x * x
        if partners and g.chance(0.6):
            other = g.pick(partners)
            shape = tuple(int(d) for d in np.broadcast_shapes(x.shape, other.shape))
            if math.prod(shape) > g.max_elements:
                return None
            operand = other.name
        else:
            choices: list[tuple[int, ...]] = [x.shape[1:], (1,), ()]
            if len(x.shape) == 4:
                choices += [(x.shape[1], 1, 1), (x.shape[3],), (1, x.shape[1], 1, 1)]
            constant_shape = g.pick(choices)
            if op_type == "Mul":
                magnitude = g.rng.uniform(0.5, 1.5, constant_shape)
                signs = np.where(g.rng.random(constant_shape) < 0.2, -1.0, 1.0)
                value = (magnitude * signs).astype(np.float32)
            else:
                value = g.normal(constant_shape, 0.5)
            operand = g.constant(value)
        operands = [x.name, operand] if g.chance(0.7) else [operand, x.name]
        return g.emit(op_type, operands, shape)

    return build


def _unary(op_type: str) -> OpBuilder:
    def build(g: _Graph, x: _Tensor) -> _Tensor | None:
        if op_type in ("HardSwish", "Exp") and len(g.nodes) + 2 > g.max_nodes:
            return None  # two nodes
        if op_type == "Clip":
            bounds = g.pick([(0.0, 6.0), (-1.0, 1.0), (0.0, None), (-0.5, 2.0)])
            inputs = [x.name, g.constant(np.array(bounds[0], np.float32))]
            if bounds[1] is not None:
                inputs.append(g.constant(np.array(bounds[1], np.float32)))
            return g.emit("Clip", inputs, x.shape)
        if op_type == "HardSwish":  # an opset 14 op: x * HardSigmoid(x) in opset 13
            gate = g.emit("HardSigmoid", [x.name], x.shape, alpha=1 / 6, beta=0.5)
            return g.emit("Mul", [x.name, gate.name], x.shape)
        if op_type == "Exp":  # on [-3, 3], so that exp(exp(x)) stays in range
            low, high = (g.constant(np.array(bound, np.float32)) for bound in (-3.0, 3.0))
            clipped = g.emit("Clip", [x.name, low, high], x.shape)
            return g.emit("Exp", [clipped.name], x.shape)
        if op_type == "LeakyRelu":
            return g.emit(op_type, [x.name], x.shape, alpha=g.pick([0.01, 0.1, 0.2]))
        return g.emit(op_type, [x.name], x.shape)

    return build


def _softmax(g: _Graph, x: _Tensor) -> _Tensor | None:
    rank = len(x.shape)
    axis = g.pick([1, -1, -1, *range(-rank, rank)])  # the last and the channels most often
    return g.emit("Softmax", [x.name], x.shape, axis=axis)


def _tokens(g: _Graph, x: _Tensor) -> _Tensor | None:
    """A 4-D map as a sequence of tokens [n, h * w, c], as a ViT's patch embedding
    leaves it: a Reshape and a Transpose."""
    if len(x.shape) != 4 or len(g.nodes) + 2 > g.max_nodes:
        return None
    n, c, h, w = x.shape
    flat = g.emit("Reshape", [x.name, g.constant(np.array([n, c, h * w], np.int64))], (n, c, h * w))
    return g.emit("Transpose", [flat.name], (n, h * w, c), perm=[0, 2, 1])


def _attention(g: _Graph, x: _Tensor) -> _Tensor | None:
    """Scaled dot-product self-attention over the tokens of [n, T, C], as torch's
    exporter writes it: Q, K and V by MatMul, split into 1, 2 or 4 heads (Reshape,
    Transpose), Q K^T (a MatMul of two activations), divided by sqrt(d), now and then
    a causal mask (a Where of -inf, -1e9 or -1e4 over the scores, or an Add of a 0 / -1e4
    bias), Softmax over the last axis, times V, the heads merged and projected."""
    if len(x.shape) == 4:  # a map's pixels as the tokens
        n, c, h, w = x.shape
        t, tokens = h * w, 2
    elif len(x.shape) == 3:
        (n, t, c), tokens = x.shape, 0
    else:
        return None
    heads = g.pick([h for h in (1, 2, 4) if c % h == 0])
    d = c // heads
    mask = g.pick([None, None, "where", "add"])
    split = heads > 1
    # Q, K, V; the heads split (K^T alone for one head); scores, scale, mask; softmax,
    # times V; the heads merged; the projection.
    count = tokens + 3 + (6 if split else 1) + 2 + (mask is not None) + 2 + 2 * split + 1
    if len(g.nodes) + count > g.max_nodes or n * heads * t * t > g.max_elements:
        return None
    if tokens:
        sequence = _tokens(g, x)
        assert sequence is not None
        x = sequence

    def projection(source: _Tensor) -> _Tensor:
        return g.emit(
            "MatMul", [source.name, g.constant(g.normal((c, c), 1 / math.sqrt(c)))], (n, t, c)
        )

    def heads_of(value: _Tensor, perm: list[int]) -> _Tensor:
        parts = g.emit("Reshape", [value.name, g.constant(np.array([n, t, heads, d], np.int64))],
                       (n, t, heads, d))  # fmt: skip
        shape = tuple((n, t, heads, d)[axis] for axis in perm)
        return g.emit("Transpose", [parts.name], shape, perm=perm)

    q, k, v = projection(x), projection(x), projection(x)
    if split:
        q, k, v = heads_of(q, [0, 2, 1, 3]), heads_of(k, [0, 2, 3, 1]), heads_of(v, [0, 2, 1, 3])
        lead: tuple[int, ...] = (n, heads)
    else:
        k = g.emit("Transpose", [k.name], (n, c, t), perm=[0, 2, 1])
        lead = (n,)
    scores = g.emit("MatMul", [q.name, k.name], (*lead, t, t))
    scale = g.constant(np.array(math.sqrt(d), np.float32))
    scores = g.emit("Div", [scores.name, scale], scores.shape)
    causal = np.triu(np.ones((t, t), bool), k=1)
    if mask == "where":
        fill = g.constant(np.array(g.pick([-np.inf, -1e9, -1e4]), np.float32))
        scores = g.emit("Where", [g.constant(causal), fill, scores.name], scores.shape)
    elif mask == "add":
        bias = g.constant(np.where(causal, np.float32(-1e4), np.float32(0)))
        scores = g.emit("Add", [scores.name, bias], scores.shape)
    if mask is not None:
        # The masked scores hold -inf or -1e4: no other op reads them (nor outputs them).
        g.tensors.remove(scores)
    weights = g.emit("Softmax", [scores.name], scores.shape, axis=-1)
    out = g.emit("MatMul", [weights.name, v.name], (*lead, t, d))
    if split:
        merged = g.emit("Transpose", [out.name], (n, t, heads, d), perm=[0, 2, 1, 3])
        out = g.emit("Reshape", [merged.name, g.constant(np.array([n, t, c], np.int64))], (n, t, c))
    return projection(out)


def _layer_norm(g: _Graph, x: _Tensor) -> _Tensor | None:
    """A layer norm over the last axis written as its arithmetic, as TorchScript exports
    it before opset 17 (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div), with or
    without the Mul by gamma and Add of beta: fuse-norms makes it one nn.layer_norm."""
    channels = x.shape[-1]
    affine = g.chance(0.7)
    if channels < 2 or len(g.nodes) + 7 + 2 * affine > g.max_nodes:
        return None
    reduced = (*x.shape[:-1], 1)
    mean = g.emit("ReduceMean", [x.name], reduced, axes=[-1], keepdims=1)
    centred = g.emit("Sub", [x.name, mean.name], x.shape)
    square = g.emit("Pow", [centred.name, g.constant(np.array(2.0, np.float32))], x.shape)
    variance = g.emit("ReduceMean", [square.name], reduced, axes=[-1], keepdims=1)
    # Not torch's 1e-5: a row of (nearly) equal values, which graphs such as a softmax
    # over a batch of one make, has a float32 variance of rounding noise, and 1 /
    # sqrt(eps) amplifies it past the float tolerance in any float32 implementation.
    epsilon = g.constant(np.array(g.pick([1e-3, 1e-2]), np.float32))
    shifted = g.emit("Add", [variance.name, epsilon], reduced)
    deviation = g.emit("Sqrt", [shifted.name], reduced)
    normalized = g.emit("Div", [centred.name, deviation.name], x.shape)
    if not affine:
        return normalized
    gamma = g.constant(g.rng.uniform(0.5, 1.5, channels).astype(np.float32))
    scaled = g.emit("Mul", [normalized.name, gamma], x.shape)
    return g.emit("Add", [scaled.name, g.constant(g.normal((channels,), 0.1))], x.shape)


def _erf_gelu(g: _Graph, x: _Tensor) -> _Tensor | None:
    """The exact GELU as torch exports it before opset 20: x * (1 + erf(x / sqrt 2)) / 2
    (fuse-norms makes it one nn.gelu, a lookup table)."""
    if len(g.nodes) + 5 > g.max_nodes:
        return None
    root = g.constant(np.array(math.sqrt(2.0), np.float32))
    scaled = g.emit("Div", [x.name, root], x.shape)
    erf = g.emit("Erf", [scaled.name], x.shape)
    shifted = g.emit("Add", [erf.name, g.constant(np.array(1.0, np.float32))], x.shape)
    product = g.emit("Mul", [x.name, shifted.name], x.shape)
    return g.emit("Mul", [product.name, g.constant(np.array(0.5, np.float32))], x.shape)


def _concat(g: _Graph, x: _Tensor) -> _Tensor | None:
    rank = len(x.shape)
    axis = g.pick([1, 1, 1, 2, 3] if rank == 4 else [1])

    def fits(shape: tuple[int, ...]) -> bool:
        return len(shape) == rank and all(
            a == b for i, (a, b) in enumerate(zip(shape, x.shape, strict=True)) if i != axis
        )

    partners = g.partners(x, fits)
    chosen = [x]
    for _ in range(g.integer(1, 2)):
        chosen.append(g.pick(partners) if partners and g.chance(0.8) else x)
    g.rng.shuffle(chosen)
    shape = list(x.shape)
    shape[axis] = sum(t.shape[axis] for t in chosen)
    if math.prod(shape) > g.max_elements or (axis == 1 and shape[1] > 4 * MAX_CHANNELS):
        return None
    return g.emit("Concat", [t.name for t in chosen], tuple(shape), axis=axis)


def _conv_transpose(g: _Graph, x: _Tensor) -> _Tensor | None:
    if len(x.shape) != 4:
        return None
    n, c, h, w = x.shape
    out = g.integer(1, MAX_CHANNELS)
    kernel = g.pick([1, 2, 3, 4])
    stride = g.pick([1, 2, 2])
    pads = [g.integer(0, kernel - 1) if g.chance(0.5) else 0 for _ in range(4)]
    output_padding = g.integer(0, stride - 1) if g.chance(0.3) else 0
    sizes = [
        (size - 1) * stride - begin - end + kernel + output_padding
        for size, begin, end in ((h, pads[0], pads[2]), (w, pads[1], pads[3]))
    ]
    if min(sizes) < 1 or n * out * sizes[0] * sizes[1] > g.max_elements:
        return None
    weight = g.constant(g.normal((c, out, kernel, kernel), 1 / math.sqrt(c * kernel)))
    inputs = [x.name, weight]
    if g.chance(0.6):
        inputs.append(g.constant(g.normal((out,), 0.1)))
    attributes: dict[str, Any] = {
        "kernel_shape": [kernel, kernel],
        "pads": pads,
        "strides": [stride, stride],
    }
    if output_padding:
        attributes["output_padding"] = [output_padding, output_padding]
    return g.emit("ConvTranspose", inputs, (n, out, *sizes), **attributes)


def _slice(g: _Graph, x: _Tensor) -> _Tensor | None:
    axis = g.integer(1, len(x.shape) - 1)
    size = x.shape[axis]
    if size < 2:
        return None
    start = g.integer(0, size - 2)
    end = g.integer(start + 1, size)
    step = 2 if g.chance(0.15) else 1
    shape = list(x.shape)
    shape[axis] = -(-(end - start) // step)
    begin = start - size if g.chance(0.2) else start  # negative indices count from the end
    inputs = [
        x.name,
        g.constant(np.array([begin], np.int64)),
        g.constant(np.array([end], np.int64)),
        g.constant(np.array([axis], np.int64)),
        g.constant(np.array([step], np.int64)),
    ]
    return g.emit("Slice", inputs, tuple(shape))


def _split(g: _Graph, x: _Tensor) -> _Tensor | None:
    axis = g.integer(1, len(x.shape) - 1)
    size = x.shape[axis]
    if size < 2:
        return None
    first = g.integer(1, size - 1)
    sizes = [first, size - first]
    shapes = []
    for part in sizes:
        shape = list(x.shape)
        shape[axis] = part
        shapes.append(tuple(shape))
    split = g.constant(np.array(sizes, np.int64))
    parts = g.emit_many("Split", [x.name, split], shapes, axis=axis)
    return parts[g.integer(0, 1)]


def _global_max_pool(g: _Graph, x: _Tensor) -> _Tensor | None:
    if len(x.shape) != 4:
        return None
    return g.emit("GlobalMaxPool", [x.name], (*x.shape[:2], 1, 1))


def _lrn(g: _Graph, x: _Tensor) -> _Tensor | None:
    """ONNX's LRN across the channels of a 4-D map: AlexNet's constants, or stronger
    ones (the integer form's table is steeper); odd windows (onnxruntime takes no
    others)."""
    if len(x.shape) != 4:
        return None
    alpha, beta, bias = g.pick([(1e-4, 0.75, 1.0), (0.5, 0.75, 2.0), (1.0, 0.5, 1.0)])
    size = g.pick([1, 3, 5])
    return g.emit("LRN", [x.name], x.shape, size=size, alpha=alpha, beta=beta, bias=bias)


def _reduce(op_type: str) -> OpBuilder:
    def build(g: _Graph, x: _Tensor) -> _Tensor | None:
        if len(x.shape) != 4:
            return None
        axes = g.pick([[2, 3], [1], [3], [-1]])
        shape = tuple(
            1 if axis in axes or axis - 4 in axes else d for axis, d in enumerate(x.shape)
        )
        if op_type == "ReduceSum":  # opset 13 takes its axes as an input
            inputs = [x.name, g.constant(np.array(axes, np.int64))]
            return g.emit(op_type, inputs, shape, keepdims=1)
        return g.emit(op_type, [x.name], shape, axes=axes, keepdims=1)

    return build


def _depth_to_space(g: _Graph, x: _Tensor) -> _Tensor | None:
    if len(x.shape) != 4 or x.shape[1] % 4:
        return None
    n, c, h, w = x.shape
    mode = g.pick(["DCR", "CRD"])
    return g.emit("DepthToSpace", [x.name], (n, c // 4, 2 * h, 2 * w), blocksize=2, mode=mode)


def _prelu(g: _Graph, x: _Tensor) -> _Tensor | None:
    slope_shape = (x.shape[1], 1, 1) if len(x.shape) == 4 else (x.shape[-1],)
    slope = g.rng.uniform(0.0, 0.3, slope_shape).astype(np.float32)
    return g.emit("PRelu", [x.name, g.constant(slope)], x.shape)


def _divide(g: _Graph, x: _Tensor) -> _Tensor | None:
    shape = g.pick([(), (1,), x.shape[1:]])
    magnitude = g.rng.uniform(0.5, 2.0, shape)
    divisor = (magnitude * np.where(g.rng.random(shape) < 0.2, -1.0, 1.0)).astype(np.float32)
    return g.emit("Div", [x.name, g.constant(divisor)], x.shape)


def _squeeze(g: _Graph, x: _Tensor) -> _Tensor | None:
    if len(x.shape) == 4 and x.shape[2:] == (1, 1):
        axes = g.constant(np.array([2, 3], np.int64))
        return g.emit("Squeeze", [x.name, axes], x.shape[:2])
    if len(x.shape) == 2:
        axes = g.constant(np.array([2, 3], np.int64))
        return g.emit("Unsqueeze", [x.name, axes], (*x.shape, 1, 1))
    return None


OPS: dict[str, tuple[float, OpBuilder]] = {
    # op type: (relative weight, builder)
    "Conv": (6.0, _conv),
    "Gemm": (2.0, _gemm),
    "MatMul": (1.0, _matmul),
    "Add": (3.0, _binary("Add")),
    "Sub": (1.0, _binary("Sub")),
    "Mul": (2.0, _binary("Mul")),
    "Relu": (2.0, _unary("Relu")),
    "Clip": (1.5, _unary("Clip")),
    "LeakyRelu": (1.0, _unary("LeakyRelu")),
    "Sigmoid": (1.0, _unary("Sigmoid")),
    "HardSwish": (1.0, _unary("HardSwish")),
    "Tanh": (1.0, _unary("Tanh")),
    "MaxPool": (1.5, _pool("MaxPool")),
    "AveragePool": (1.0, _pool("AveragePool")),
    "GlobalAveragePool": (0.7, _global_average_pool),
    "Concat": (2.0, _concat),
    "Reshape": (0.8, _reshape),
    "Flatten": (0.5, _flatten),
    "Transpose": (1.0, _transpose),
    "Pad": (1.0, _pad),
    "Softmax": (0.7, _softmax),
    "BatchNormalization": (1.0, _batch_norm),
    "Resize": (0.8, _resize),
    "ReduceMean": (0.7, _reduce_mean),
    # Beyond the list of issue 10: more of irc's importer.
    "ConvTranspose": (1.0, _conv_transpose),
    "Slice": (0.7, _slice),
    "Split": (0.5, _split),
    "GlobalMaxPool": (0.3, _global_max_pool),
    "LRN": (0.3, _lrn),
    "ReduceSum": (0.3, _reduce("ReduceSum")),
    "ReduceMax": (0.3, _reduce("ReduceMax")),
    "DepthToSpace": (0.4, _depth_to_space),
    "PRelu": (0.5, _prelu),
    "Max": (0.5, _binary("Max")),
    "Min": (0.5, _binary("Min")),
    "Div": (0.5, _divide),
    "Abs": (0.3, _unary("Abs")),
    "Neg": (0.3, _unary("Neg")),
    "Elu": (0.3, _unary("Elu")),
    "Exp": (0.2, _unary("Exp")),
    "Squeeze": (0.4, _squeeze),
    # Transformers (issue 20): token sequences, attention, layer norms, the erf GELU.
    "Tokens": (0.6, _tokens),
    "Attention": (1.5, _attention),
    "LayerNorm": (0.8, _layer_norm),
    "ErfGelu": (0.4, _erf_gelu),
}
"""Every op the generator draws, with its weight in the draw."""


def generate(seed: int, max_ops: int = 30) -> onnx.ModelProto:
    """A random valid ONNX graph (opset 13) of 1 to `max_ops` ops; the same for a seed."""
    rng = np.random.default_rng(seed)
    g = _Graph(rng)
    batch = 2 if g.chance(0.08) else 1  # beyond the NPU's batch limit: host fallbacks
    side = 16
    if g.chance(0.1):  # larger maps: layers that split into tiles on a small SRAM
        g.max_elements, side = LARGE_MAX_ELEMENTS, 32
    if g.chance(0.9):
        first = g.add_input((batch, g.integer(1, 8), g.integer(1, side), g.integer(1, side)))
    else:
        first = g.add_input((batch, g.integer(1, 64)))
    if g.chance(0.2):
        g.add_input(first.shape if g.chance(0.6) else (batch, g.integer(1, 8), *first.shape[2:]))
    target_ops = g.max_nodes = g.integer(1, max_ops)
    names = list(OPS)
    weights = np.array([OPS[name][0] for name in names])
    weights = weights / weights.sum()
    attempts = 0
    while len(g.nodes) < target_ops and attempts < 50 * target_ops:
        attempts += 1
        x = g.tensors[-1] if g.chance(0.7) else g.pick(g.tensors)
        name = names[int(rng.choice(len(names), p=weights))]
        constants = len(g.initializers)
        if OPS[name][1](g, x) is None:
            # Drop the constants a builder made before it found the op did not fit.
            del g.initializers[constants:]
    produced = g.tensors[len(g.inputs) :]
    if not produced:  # the loop never fitted an op: one that always does
        produced = [_unary("Relu")(g, g.tensors[0])]  # type: ignore[list-item]
    last = produced[-1]
    # Extra outputs: tensors no op reads, or now and then one that ops also read.
    loose = [t for t in produced[:-1] if t.name not in g.consumed or g.chance(0.15)]
    outputs = [last, *(loose[i] for i in sorted(rng.permutation(len(loose))[:2]))]
    return g.model(outputs, f"fuzz_{seed}")


# --------------------------------------------------------------------------------------
# The differential check


@dataclass
class Result:
    """What `check_graph` found: `status` is "pass", "skip" (irc rejected the graph with
    a diagnostic) or "fail" (a mismatch or a crash); `level` is where it stopped."""

    seed: int
    status: str
    level: str = ""
    message: str = ""
    ops: int = 0
    levels_passed: list[str] = field(default_factory=list)
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)
    """numpy's RuntimeWarnings (overflow, invalid values) raised in irc's code: not a
    failure (a float graph may overflow), but where integer code meets an infinity or a
    NaN, a bug may hide (one did: see tests/test_fuzz.py)."""
    cores: int = 0
    """The cores its command stream runs commands on (0: it reached no stream)."""

    @property
    def failed(self) -> bool:
        """A mismatch or a crash."""
        return self.status == "fail"

    def signature(self) -> tuple[str, str, str]:
        """What a minimized case must keep failing with: the status, the level, and the
        first line of the message with its numbers dropped."""
        first = self.message.strip().splitlines()[0] if self.message.strip() else ""
        words = [word for word in first.split() if not any(ch.isdigit() for ch in word)]
        return self.status, self.level, " ".join(words[:6])


def compare_float(actual: Mapping[str, np.ndarray], expected: Mapping[str, np.ndarray]) -> str:
    """The empty string when every output is within FLOAT_RTOL of onnxruntime's,
    elementwise, with an absolute tolerance of FLOAT_ATOL times the output's largest
    magnitude (at least FLOAT_ATOL): a difference of sums of products near zero (a Sub
    of two branches, a conv output that cancels) keeps the absolute error of its
    operands, which is relative to the operands' scale, not to the small result. Else
    what differs."""
    from irc.numerics import compare

    problems = []
    for name, reference in expected.items():
        scale = max(1.0, float(np.max(np.abs(reference)))) if reference.size else 1.0
        report = compare(actual, {name: reference}, FLOAT_RTOL, FLOAT_ATOL * scale)
        if not report.ok:
            problems.append(report.format())
    return "\n".join(problems)


def compare_exact(actual: Mapping[str, np.ndarray], expected: Mapping[str, np.ndarray]) -> str:
    """The empty string when every output is identical, bit for bit; else what differs."""
    problems = []
    if set(actual) != set(expected):
        return f"outputs {sorted(actual)} differ from the expected {sorted(expected)}"
    for name, reference in expected.items():
        value = np.asarray(actual[name])
        if value.shape != reference.shape or value.dtype != reference.dtype:
            problems.append(
                f"{name}: {value.dtype}{list(value.shape)} against "
                f"{reference.dtype}{list(reference.shape)}"
            )
        elif not np.array_equal(value, reference, equal_nan=True):
            differ = int(np.count_nonzero(value != reference))
            largest = float(np.max(np.abs(value.astype(np.float64) - reference)))
            problems.append(
                f"{name}: {differ} of {reference.size} elements differ, by up to {largest:.4g}"
            )
    return "\n".join(problems)


class _Mismatch(Exception):
    pass


def cascade_options(seed: int) -> tuple[bool, int]:
    """Whether a seed plans cascades, and the stripe height that forces them (0: by
    cost): off in one seed of four (as -O1), forced in every third seed of the others,
    so that cascades the cost model would not choose run too."""
    if seed % 4 == 3:
        return False, 0
    return True, (1 + seed // 4 % 4 if seed % 3 == 1 else 0)


def weight_stream_option(seed: int) -> bool:
    """Whether a seed gives the target's MAC array a weight stream (`weight_stream`:
    weight loads on `dma_weights`, a queue of their own): every other run of 16 seeds,
    independent of the choices above."""
    return seed // 16 % 2 == 1


def cores_option(seed: int) -> bool:
    """Whether a seed runs on two cores (`two_cores`): every other run of 32 seeds,
    independent of the choices above."""
    return seed // 32 % 2 == 1


SMALL_TILE = (2, 4, 8, 8)
"""The tile forced on every layer in half the two-core seeds: layers of several tiles,
each split across the cores whatever its cost (`plan_module`'s `split_cores`)."""


def two_cores(target: Target) -> Target:
    """`target` with two cores (a 20-cycle signal between them) and system memories
    eight times as fast: the MAC array bounds more of a small graph's layers, so that
    the planner splits them across the cores."""
    from irc.targets.model import Cores

    memories = {
        name: memory
        if name == target.scratch.name
        else replace(
            memory,
            read_bytes_per_second=memory.read_bytes_per_second * 8,
            write_bytes_per_second=memory.write_bytes_per_second * 8,
            max_reads=memory.max_reads * 8,
            max_writes=memory.max_writes * 8,
        )
        for name, memory in target.memories.items()
    }
    return replace(target, memories=memories, cores=Cores(count=2, sync_latency_cycles=20))


def check_graph(
    model: onnx.ModelProto, seed: int, package: bool = True, target: str = "npu-demo"
) -> Result:
    """Run `model` through every level of irc and compare them (see the module
    docstring); never raises for what irc does wrong: that is a failed `Result`.

    `target` is a preset name or a target file. The seed also chooses the backend's
    options, as `-O0` to `-O2` would: channel alignment on or off, double buffering on
    or off (the four combinations in turn)."""
    from irc.diagnostics import IrcError

    start = time.perf_counter()
    result = Result(seed, "pass", ops=len(model.graph.node))
    level = LEVELS[0]

    def passed(name: str) -> None:
        nonlocal level
        result.levels_passed.append(level)
        level = name

    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RuntimeWarning)
            result.cores = _run_levels(model, seed, passed, package, target)
        result.levels_passed.append(level)
        level = ""
    except _Mismatch as mismatch:
        result.status, result.message = "fail", f"mismatch: {mismatch}"
    except IrcError as rejection:
        result.status, result.message = "skip", str(rejection)
    except Exception as crash:  # a bug in irc (or in the generator): recorded, never raised
        result.status, result.message = "fail", _describe_crash(crash)
    result.level = level
    result.seconds = time.perf_counter() - start
    result.warnings = sorted(
        {
            f"{Path(w.filename).name}:{w.lineno}: {w.message}"
            for w in caught
            if issubclass(w.category, RuntimeWarning) and "/irc/" in w.filename
        }
    )
    return result


def _describe_crash(crash: Exception) -> str:
    """The exception's type and first line, where in irc it was raised, then the
    innermost frames (xDSL appends whole modules to interpreter errors: dropped)."""
    frames = traceback.extract_tb(crash.__traceback__)
    ours = [frame for frame in frames if "/irc/" in frame.filename] or frames
    where = f"{Path(ours[-1].filename).name}:{ours[-1].lineno} in {ours[-1].name}" if ours else ""
    first = str(crash).strip().splitlines()[0] if str(crash).strip() else ""
    stack = "".join(traceback.format_list(frames[-6:]))
    return f"{type(crash).__name__}: {first[:300]} (raised at {where})\n{stack}"


SIXTEEN_BIT_EVERY = 6
"""One seed in SIXTEEN_BIT_EVERY quantizes every activation to int16, and another one
the adds, muls and convolutions only (16x8 layers at the edges): `quantize_config`."""


def quantize_config(seed: int) -> QuantizeConfig:
    """How the `qnn` level quantizes the graph of `seed`: int8, as `irc-compile -O2`
    (with bias correction), or with int16 activations (all, or the adds, muls and
    convolutions' only) for one seed in SIXTEEN_BIT_EVERY each."""
    from irc.quantize.qdq import QuantizeConfig

    if seed % SIXTEEN_BIT_EVERY == SIXTEEN_BIT_EVERY - 1:
        return QuantizeConfig(bias_correction=True, activations="int16")
    if seed % SIXTEEN_BIT_EVERY == 2:
        return QuantizeConfig(bias_correction=True, int16_ops=frozenset({"add", "mul", "conv"}))
    return QuantizeConfig(bias_correction=True)


def _run_levels(
    model: onnx.ModelProto,
    seed: int,
    passed: Callable[[str], None],
    package: bool,
    target_spec: str,
) -> int:
    """Run the levels in turn (`passed` after each); the cores the command stream runs
    commands on."""
    from xdsl.dialects.func import FuncOp

    from irc.diagnostics import collect_diagnostics
    from irc.dialects import npu
    from irc.driver.pipeline import GRAPH_OPT, int8_module
    from irc.importers.onnx import import_model
    from irc.importers.reference import run_onnxruntime
    from irc.ir.context import make_context
    from irc.ir.io import verify_module
    from irc.passes import parse_pipeline
    from irc.quantize.calibration import calibrate
    from irc.quantize.qdq import prepare_for_calibration
    from irc.sim.run import run_function
    from irc.targets import load_target, using_target
    from irc.testing.reference import random_inputs
    from irc.transforms.partition import partition_module
    from irc.transforms.plan_tiles import plan_module

    feeds = random_inputs(model, seed)
    expected = run_onnxruntime(model, feeds)
    passed("nn")

    def check(problem: str) -> None:
        if problem:
            raise _Mismatch(problem)

    with collect_diagnostics():  # the passes' remarks and warnings
        module = import_model(model)
        verify_module(module)
        check(compare_float(run_function(module, feeds), expected))
        passed("graph-opt")
        for module_pass in parse_pipeline(GRAPH_OPT):
            module_pass.apply(make_context(), module)
        verify_module(module)
        check(compare_float(run_function(module, feeds), expected))
        passed("qnn")
        target = load_target(target_spec)
        if weight_stream_option(seed) and not target.mac_array.weight_stream:
            stream = replace(target.mac_array, weight_stream=True)
            target = replace(target, mac_array=stream)
        tile_sizes: tuple[int, ...] = ()
        if cores_option(seed):
            if target.cores.count == 1:
                target = two_cores(target)
            tile_sizes = SMALL_TILE if seed // 64 % 2 else ()
        align_channels, double_buffer = seed % 2 == 0, seed // 2 % 2 == 0
        prepare_for_calibration(module)
        samples = [feeds, random_inputs(model, seed + 1)]
        stats = calibrate(module, samples, "minmax", progress=False)
        quantized = int8_module(module, stats, quantize_config(seed), target)
        reference = run_function(quantized, feeds)
        passed("tile")
        with using_target(target):
            # Placement as irc-compile decides it; every third graph by the cost model.
            mode: Literal["support", "cost"] = "cost" if seed % 3 == 0 else "support"
            partition_module(quantized, target, mode, outline_npu=False)
            plan_module(
                quantized,
                target,
                tile_sizes,
                align_channels,
                *cascade_options(seed),
                split_cores=bool(tile_sizes),
            )
            double = "true" if double_buffer else "false"
            backend = parse_pipeline(
                f"builtin.module(plan-ddr,lower-to-tile,lower-to-npu{{double-buffer={double}}})"
            )
            for module_pass in backend[:-1]:
                module_pass.apply(make_context(), quantized)
            verify_module(quantized)
            check(compare_exact(run_function(quantized, feeds), reference))
            passed("npu")
            backend[-1].apply(make_context(), quantized)
            cores = len({op.core_index() for op in quantized.walk() if isinstance(op, npu.Command)})
            check(compare_exact(run_function(quantized, feeds), reference))
        passed("package")
        if not package:
            return cores
        from irc.codegen.package import package_files, stage_files
        from irc.fileio import StagedOutputs
        from irc.runtime import Session

        assert any(isinstance(op, FuncOp) for op in quantized.ops)
        files = package_files(quantized, target, {"model": {"name": model.graph.name}})
        with tempfile.TemporaryDirectory(prefix="irc-fuzz-") as directory:
            with StagedOutputs() as staged:
                stage_files(files, Path(directory), staged)
            outputs = Session(directory).run(feeds)
        assert outputs is not None
        check(compare_exact(outputs, reference))
    return cores


# --------------------------------------------------------------------------------------
# The minimizer


def _prune(model: onnx.ModelProto) -> onnx.ModelProto:
    """Drop the nodes no output needs, the initializers no node reads, the unused inputs."""
    import onnx

    pruned = onnx.ModelProto()
    pruned.CopyFrom(model)
    graph = pruned.graph
    needed = {output.name for output in graph.output}
    kept = []
    for node in reversed(graph.node):
        if any(name in needed for name in node.output):
            kept.append(node)
            needed.update(name for name in node.input if name)
    del graph.node[:]
    graph.node.extend(reversed(kept))
    initializers = [tensor for tensor in graph.initializer if tensor.name in needed]
    del graph.initializer[:]
    graph.initializer.extend(initializers)
    inputs = [value for value in graph.input if value.name in needed]
    if inputs:  # a graph needs an input to be run with one
        del graph.input[:]
        graph.input.extend(inputs)
    return pruned


def _shapes(model: onnx.ModelProto) -> dict[str, tuple[int, ...]] | None:
    """Every tensor's static shape, by strict shape inference; None if it fails."""
    import onnx

    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    except Exception:
        return None
    shapes = {}
    for value in [*inferred.graph.input, *inferred.graph.value_info, *inferred.graph.output]:
        dims = value.type.tensor_type.shape.dim
        if all(dim.HasField("dim_value") for dim in dims):
            shapes[value.name] = tuple(dim.dim_value for dim in dims)
    return shapes


def _valid(model: onnx.ModelProto) -> bool:
    """Does `model` pass the checker, and does onnxruntime run it?"""
    import onnx

    from irc.importers.reference import run_onnxruntime
    from irc.testing.reference import random_inputs

    try:
        onnx.checker.check_model(model, full_check=True)
        run_onnxruntime(model, random_inputs(model, 0))
    except Exception:
        return False
    return True


def _with_outputs(model: onnx.ModelProto, names: Sequence[str]) -> onnx.ModelProto | None:
    import onnx
    from onnx import TensorProto, helper

    shapes = _shapes(model)
    if shapes is None or any(name not in shapes for name in names):
        return None
    changed = onnx.ModelProto()
    changed.CopyFrom(model)
    del changed.graph.output[:]
    changed.graph.output.extend(
        helper.make_tensor_value_info(name, TensorProto.FLOAT, shapes[name]) for name in names
    )
    return _prune(changed)


def _candidates(model: onnx.ModelProto) -> list[onnx.ModelProto]:
    """Smaller variants of `model`, the most promising first."""
    import onnx

    variants: list[onnx.ModelProto | None] = []
    outputs = [output.name for output in model.graph.output]
    produced = [node.output[0] for node in model.graph.node]
    # Fewer outputs.
    if len(outputs) > 1:
        variants += [_with_outputs(model, [name]) for name in outputs]
    # Truncated at an earlier tensor, the earliest first.
    variants += [_with_outputs(model, [name]) for name in produced[:-1]]
    # One op removed: its consumers read an earlier tensor of the same shape.
    shapes = _shapes(model) or {}
    graph_inputs = [value.name for value in model.graph.input]
    for index, node in enumerate(model.graph.node):
        output = node.output[0]
        earlier = [*graph_inputs, *produced[:index]]
        sources = [name for name in node.input if name in earlier]
        sources += [name for name in earlier if name not in sources]
        same = [name for name in sources if shapes.get(name) == shapes.get(output)]
        if output in outputs:
            continue  # truncation covers it
        if same:
            replacement, reshaped = same[0], False
        elif sources and sources[0] in node.input:
            # Bypassed: what follows sees the op's input, of another shape; kept only
            # if the ops after accept it (elementwise ops, pooling, ...).
            replacement, reshaped = sources[0], True
        else:
            continue
        changed = onnx.ModelProto()
        changed.CopyFrom(model)
        del changed.graph.node[index]
        for other in changed.graph.node:
            for position, name in enumerate(other.input):
                if name == output:
                    other.input[position] = replacement
        variants.append(_reinfer_outputs(changed) if reshaped else _prune(changed))
    # One op removed: its output becomes a graph input (what feeds the op goes too).
    for index, node in enumerate(model.graph.node):
        output = node.output[0]
        if output not in shapes or output in outputs:
            continue
        changed = onnx.ModelProto()
        changed.CopyFrom(model)
        del changed.graph.node[index]
        changed.graph.input.append(
            onnx.helper.make_tensor_value_info(output, onnx.TensorProto.FLOAT, shapes[output])
        )
        variants.append(_prune(changed))
    # Smaller inputs: spatial dimensions halved, channels halved (the graph must still
    # be valid: constants of Reshape or Gemm weights may not allow it).
    for value_index, value in enumerate(model.graph.input):
        dims = [dim.dim_value for dim in value.type.tensor_type.shape.dim]
        for axis in range(1, len(dims)):
            if dims[axis] <= 1:
                continue
            changed = onnx.ModelProto()
            changed.CopyFrom(model)
            dim = changed.graph.input[value_index].type.tensor_type.shape.dim[axis]
            dim.dim_value = max(1, dims[axis] // 2)
            variants.append(_reinfer_outputs(changed))
    return [variant for variant in variants if variant is not None]


def _reinfer_outputs(model: onnx.ModelProto) -> onnx.ModelProto | None:
    """`model` with its outputs' shapes inferred again (after a change of shapes)."""
    for value in model.graph.output:
        value.type.tensor_type.ClearField("shape")
    del model.graph.value_info[:]
    names = [output.name for output in model.graph.output]
    return _with_outputs(model, names)


def minimize(
    model: onnx.ModelProto,
    fails: Callable[[onnx.ModelProto], bool],
    budget_seconds: float = 300.0,
) -> onnx.ModelProto:
    """The smallest variant of `model` that `fails` still holds for, found greedily:
    fewer outputs, truncation at an earlier tensor, one op removed (its consumers
    rewired to an earlier tensor of the same shape, else to its own input), or an op
    removed and its output made a graph input, inputs with halved dimensions; each
    accepted only if the model stays valid (checker, onnxruntime) and fails."""
    start = time.perf_counter()
    current = model
    improved = True
    while improved and time.perf_counter() - start < budget_seconds:
        improved = False
        for candidate in _candidates(current):
            if time.perf_counter() - start > budget_seconds:
                break
            if _size(candidate) >= _size(current) or not _valid(candidate):
                continue
            if fails(candidate):
                current, improved = candidate, True
                break
    return current


def _size(model: onnx.ModelProto) -> tuple[int, int]:
    """Ops first, then the elements of the inputs."""
    elements = sum(
        math.prod(dim.dim_value for dim in value.type.tensor_type.shape.dim)
        for value in model.graph.input
    )
    return len(model.graph.node), elements


def save_regression(model: onnx.ModelProto, seed: int, directory: Path = REGRESSIONS) -> Path:
    """Save a minimized case as `<directory>/seed<seed>_<hash>.onnx`; returns its path."""
    directory.mkdir(parents=True, exist_ok=True)
    content = model.SerializeToString()
    digest = hashlib.sha256(content).hexdigest()[:8]
    path = directory / f"seed{seed}_{digest}.onnx"
    path.write_bytes(content)
    return path


def minimize_failure(
    model: onnx.ModelProto, result: Result, target: str = "npu-demo"
) -> onnx.ModelProto:
    """`model` minimized while `check_graph` fails on it with `result`'s signature."""
    wanted = result.signature()

    def fails(candidate: onnx.ModelProto) -> bool:
        return check_graph(candidate, result.seed, target=target).signature() == wanted

    return minimize(model, fails)


# --------------------------------------------------------------------------------------
# The command line


TRANSFORMER_TARGET = "edge-2tops"
"""The preset whose support table lists attention's ops (matmul of two activations,
softmax, layer norm, GELU): `--target auto` runs transformer graphs on it."""


def choose_target(model: onnx.ModelProto, seed: int) -> str:
    """`--target auto`: edge-2tops for a graph with a softmax, an erf, an LRN or a
    matmul of two computed values, for a seed with int16 activations
    (`quantize_config`), and every fourth other graph, so that the NPU runs attention,
    layer norms, GELUs, LRNs and 16-bit layers; npu-demo (no int16) for the rest."""
    config = quantize_config(seed)
    if config.activations == "int16" or config.int16_ops:
        return TRANSFORMER_TARGET
    constants = {tensor.name for tensor in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type in ("Softmax", "Erf", "LRN"):
            return TRANSFORMER_TARGET
        if node.op_type == "MatMul" and not constants & set(node.input):
            return TRANSFORMER_TARGET
    return TRANSFORMER_TARGET if seed % 4 == 3 else "npu-demo"


def _check_seed(job: tuple[int, int, bool, str]) -> tuple[Result, bytes | None]:
    """Generate and check one graph; a failure comes back with its minimized model."""
    seed, max_ops, shrink, target = job
    model = generate(seed, max_ops)
    if target == "auto":
        target = choose_target(model, seed)  # fixed while the failure is minimized
    result = check_graph(model, seed, target=target)
    if not result.failed or not shrink:
        return result, None
    return result, minimize_failure(model, result, target).SerializeToString()


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m irc.testing.fuzz`: check generated graphs; exit 1 on any failure."""
    parser = argparse.ArgumentParser(
        allow_abbrev=False, prog="python -m irc.testing.fuzz", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--count", type=int, default=100, help="graphs to check")
    parser.add_argument("--seed", type=int, default=0, help="the first graph's seed")
    parser.add_argument("--max-ops", type=int, default=30, help="ops per graph at most")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument(
        "--save-failures", type=Path, default=None, help="save minimized failures here"
    )
    parser.add_argument("--no-minimize", action="store_true", help="report failures as found")
    parser.add_argument(
        "--target",
        default="auto",
        help="a preset name or a target file; auto (the default): edge-2tops for graphs "
        "with attention's ops, else npu-demo",
    )
    args = parser.parse_args(argv)
    import onnx

    seeds = range(args.seed, args.seed + args.count)
    jobs = [(seed, args.max_ops, not args.no_minimize, args.target) for seed in seeds]
    start = time.perf_counter()
    statuses: Counter[str] = Counter()
    reached: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    warned: Counter[str] = Counter()
    cores: Counter[int] = Counter()
    failures: list[tuple[Result, bytes | None]] = []
    print(
        f"fuzzing {args.count} graphs, seeds {args.seed}..{args.seed + args.count - 1}, "
        f"at most {args.max_ops} ops, {args.jobs} jobs",
        flush=True,
    )

    def record(done: int, result: Result, minimized: bytes | None) -> None:
        statuses[result.status] += 1
        cores[result.cores] += 1
        reached.update(result.levels_passed)
        for warning in result.warnings:
            warned[warning] += 1
            if warned[warning] == 1:
                print(f"warning (first at seed {result.seed}): {warning}", flush=True)
        if result.status == "skip":
            skipped[f"{result.level}: {' '.join(result.signature()[2:])}"] += 1
        if result.failed:
            failures.append((result, minimized))
            print(f"FAIL seed {result.seed} at {result.level}: {result.message.splitlines()[0]}")
        if done % 50 == 0 or done == args.count:
            elapsed = time.perf_counter() - start
            print(
                f"[{done}/{args.count}] {dict(statuses)} {elapsed:.0f} s "
                f"({done / elapsed:.2f} graphs/s)",
                flush=True,
            )

    if args.jobs > 1:
        import multiprocessing

        with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
            for done, (result, minimized) in enumerate(
                pool.imap_unordered(_check_seed, jobs), start=1
            ):
                record(done, result, minimized)
    else:
        for done, job in enumerate(jobs, start=1):
            record(done, *_check_seed(job))
    elapsed = time.perf_counter() - start
    print(f"\nseeds {args.seed}..{args.seed + args.count - 1}, {elapsed:.1f} s")
    print("levels passed: " + ", ".join(f"{level} {reached[level]}" for level in LEVELS))
    print(f"results: {dict(statuses)}")
    print(
        "command streams on "
        + ", ".join(f"{count} cores: {cores[count]}" for count in sorted(cores) if count)
    )
    for reason, count in skipped.most_common():
        print(f"  skipped {count}: {reason}")
    for warning, count in warned.most_common():
        print(f"  RuntimeWarning in {count} graphs: {warning}")
    for result, minimized in sorted(failures, key=lambda pair: pair[0].seed):
        print(f"\nFAIL seed {result.seed} ({result.ops} ops) at {result.level}:")
        print(result.message.rstrip())
        if minimized is not None:
            small = onnx.load_from_string(minimized)
            print(f"minimized to {len(small.graph.node)} ops:")
            print(onnx.helper.printable_graph(small.graph))
            if args.save_failures is not None:
                path = save_regression(small, result.seed, args.save_failures)
                print(f"saved {path}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
