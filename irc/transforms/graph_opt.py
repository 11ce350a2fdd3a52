"""`graph-opt`: the graph-level optimisation pipeline, as one named pass.

The graph passes are run in the order in which each one leaves work for the next
(see `GraphOptPass`). They are found through the registry (`irc.passes.get_pass_class`)
when the pipeline is built, so naming `graph-opt` imports them and nothing else does.

irc-opt runs a named pipeline pass by pass (it calls `pipeline()`), so that
`--mlir-print-ir-after-all`, `--mlir-timing`, `--verify-each` and
`--verify-each-numerics` see, and name, each pass inside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from irc.passes import get_pass_class, option


@dataclass(frozen=True)
class GraphOptPass(ModulePass):
    """Run the graph optimisations in order: fold, fuse, convert the layout, cancel transposes.

    The passes, in order, and why there:

    1. `canonicalize`: drop identities and inference dropouts, fold constant and shape
       subgraphs, turn MatMul + Add into Gemm, so that the producer of every batch
       norm, pad and activation is the op itself, not a copy of its value.
       Then `fuse-norms`: layer norms written as their arithmetic (TorchScript
       exports before opset 17) become `nn.layer_norm`, attention masks applied to
       a softmax's input `nn.masked_softmax`, and erf GELUs `nn.gelu`, on folded
       constants.
    2. `fold-batchnorm`: fold each batch norm into the conv/gemm before it (others
       become a per-channel mul and add). First, because a conv can absorb a batch
       norm only while it has no fused activation, and because it makes each
       activation follow its conv directly.
    3. `fuse-pad`: fold zero pads into the padding of the conv or pooling after them,
       while pads are still in the channels-first order they were written in (a pad
       left for `convert-layout` would need its transposes moved through it).
    4. `canonicalize`: clean up after the folds, before the layout is converted.
    5. `convert-layout{layout=...}` (not with `layout=keep`): rewrite spatial ops to
       the target layout with transposes around each.
    6. `cancel-transposes`: sink and cancel those transposes (and the model's own
       that are not needed), leaving them at the function's inputs and outputs.
       Separate from step 5 so that numerical verification can tell them apart.
    7. `fuse-activation`: fuse activations into the conv, gemm, matmul or add before
       them. After the layout conversion, so that no transpose sits between a conv
       and its relu, and after step 2, so that the batch norm is gone from between them.
    8. `canonicalize`, `cse`, `dce`: final clean-up (duplicate transposed constants
       and dead ops).

    `layout` chooses the layout of spatial ops (`keep`: no conversion; transposes
    are still cancelled); `activations` restricts the activation kinds fused (empty:
    every kind `fuse-activation` fuses).

    Before:

        func.func @main(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
          %w = nn.constant dense<...> : tensor<4x3x3x3xf32>
          %c = nn.conv %x, %w {pads = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
          %n = nn.batch_norm %c, %gamma, %beta, %mean, %var : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
          %r = nn.relu %n : tensor<1x4x8x8xf32>
          func.return %r : tensor<1x4x8x8xf32>
        }

    After `graph-opt` (`layout=nhwc`, the default):

        func.func @main(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
          %w = nn.constant dense<...> : tensor<4x3x3x3xf32>      // w * scale, O,kh,kw,I
          %b = nn.constant dense<...> : tensor<4xf32>            // beta - mean * scale
          %t = nn.transpose %x {perm = [0, 2, 3, 1]} : (tensor<1x3x8x8xf32>) -> tensor<1x8x8x3xf32>
          %c = nn.conv %t, %w, %b {activation = #nn.activation<relu>, layout = "nhwc", pads = [1, 1, 1, 1]} : (tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x8x8x4xf32>
          %y = nn.transpose %c {perm = [0, 3, 1, 2]} : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
          func.return %y : tensor<1x4x8x8xf32>
        }
    """

    name = "graph-opt"

    layout: Literal["nhwc", "nchw", "keep"] = option(
        "nhwc", "the layout of spatial ops: nhwc, nchw, or keep (no layout conversion)"
    )
    activations: tuple[str, ...] = option(
        (), "the activation kinds to fuse (empty: every kind fuse-activation fuses)"
    )

    def __post_init__(self) -> None:
        # Build the passes once, so that a bad option of a pass inside the pipeline is
        # reported when the pipeline is parsed, not when it runs.
        self.pipeline()

    def pipeline(self) -> list[ModulePass]:
        """The passes that `graph-opt` runs, in order, with their options."""
        steps: list[tuple[str, dict[str, Any]]] = [
            ("canonicalize", {}),
            ("fuse-norms", {}),
            ("fold-batchnorm", {}),
            ("fuse-pad", {}),
            ("canonicalize", {}),
        ]
        if self.layout != "keep":
            steps.append(("convert-layout", {"layout": self.layout, "cancel": False}))
        steps.append(("cancel-transposes", {}))
        fuse_options = {"activations": self.activations} if self.activations else {}
        steps += [
            ("fuse-activation", fuse_options),
            ("canonicalize", {}),
            ("cse", {}),
            ("dce", {}),
        ]
        return [get_pass_class(name)(**options) for name, options in steps]

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for module_pass in self.pipeline():
            module_pass.apply(ctx, op)
