"""Make the exported transformer models that irc's import tests read.

The files next to this script are the output of

    python tests/data/transformers/make_models.py

run once in a Python that has torch 2.13 and onnxscript (torch is not one of irc's
dependencies; the .onnx files are shipped so that the tests need neither). Each model
is small (d_model 32) and has seeded random weights; what the tests check is the
structure the exporters emit, not what the weights learnt:

- `encoder_layer.onnx`: `torch.nn.TransformerEncoderLayer` (4 heads, batch first),
  exported by the TorchScript exporter at opset 17: the shape arithmetic around the
  heads, LayerNormalization, Erf-free relu feed-forward.
- `causal_attention.onnx`: a GPT-style block (pre-norm, causal mask built from the
  input's length with `triu`, `einsum` scores, position ids from `arange`/`cumsum`,
  GELU), exported by the TorchScript exporter at opset 14, where layer norm and GELU
  are decomposed (ReduceMean/Sub/Pow/Sqrt/Div, Erf).
- `vit.onnx`: a ViT-style patch embedding (a 4x4-stride conv), a class token,
  position embeddings, two pre-norm encoder layers with GELU and a linear head,
  exported by the dynamo (onnxscript) exporter at opset 20.
"""

from __future__ import annotations

import math
from pathlib import Path

import torch
from torch import nn

HERE = Path(__file__).resolve().parent
D_MODEL, HEADS, FEEDFORWARD, TOKENS = 32, 4, 64, 16


class CausalAttentionBlock(nn.Module):
    """Pre-norm causal self-attention and a GELU feed-forward, written out by hand."""

    def __init__(self) -> None:
        super().__init__()
        self.position = nn.Embedding(64, D_MODEL)
        self.norm1 = nn.LayerNorm(D_MODEL)
        self.qkv = nn.Linear(D_MODEL, 3 * D_MODEL)
        self.proj = nn.Linear(D_MODEL, D_MODEL)
        self.norm2 = nn.LayerNorm(D_MODEL)
        self.up = nn.Linear(D_MODEL, FEEDFORWARD)
        self.down = nn.Linear(FEEDFORWARD, D_MODEL)
        self.act = nn.GELU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, width = x.shape
        positions = torch.cumsum(torch.ones_like(x[0, :, 0], dtype=torch.long), 0) - 1
        positions = (positions + torch.arange(tokens) * 0) % self.position.num_embeddings
        x = x + self.position(positions)
        h = self.norm1(x)
        q, k, v = self.qkv(h).split(width, dim=-1)
        head = width // HEADS
        q = q.reshape(batch, tokens, HEADS, head).transpose(1, 2)
        k = k.reshape(batch, tokens, HEADS, head).transpose(1, 2)
        v = v.reshape(batch, tokens, HEADS, head).transpose(1, 2)
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(head)
        mask = torch.triu(torch.ones(tokens, tokens), diagonal=1)
        scores = scores.masked_fill(mask == 1, -1e4)
        attention = torch.softmax(scores, dim=-1)
        out = torch.matmul(attention, v).transpose(1, 2).reshape(batch, tokens, width)
        x = x + self.proj(out)
        return x + self.down(self.act(self.up(self.norm2(x))))


class PatchEncoder(nn.Module):
    """A ViT in miniature: patches, a class token, two encoder layers, a head."""

    def __init__(self) -> None:
        super().__init__()
        self.patches = nn.Conv2d(3, D_MODEL, kernel_size=4, stride=4)
        self.cls = nn.Parameter(torch.randn(1, 1, D_MODEL) * 0.02)
        self.position = nn.Parameter(torch.randn(1, TOKENS + 1, D_MODEL) * 0.02)
        layer = nn.TransformerEncoderLayer(
            D_MODEL,
            HEADS,
            FEEDFORWARD,
            dropout=0.0,
            activation="gelu",
            batch_first=True,
            norm_first=True,
        )
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(D_MODEL)
        self.head = nn.Linear(D_MODEL, 10)

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        x = self.patches(image).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.position
        x = self.norm(self.encoder(x))
        return self.head(x[:, 0])


def main() -> None:
    torch.manual_seed(0)
    # The fused fast path (aten::_transformer_encoder_layer_fwd) has no ONNX export.
    torch.backends.mha.set_fastpath_enabled(False)
    encoder = nn.TransformerEncoderLayer(
        D_MODEL, HEADS, FEEDFORWARD, dropout=0.0, batch_first=True
    ).eval()
    tokens = torch.randn(1, TOKENS, D_MODEL)
    with torch.no_grad():
        torch.onnx.export(
            encoder,
            (tokens,),
            HERE / "encoder_layer.onnx",
            opset_version=17,
            input_names=["tokens"],
            output_names=["encoded"],
            dynamo=True,
            external_data=False,
            dynamic_shapes=({1: torch.export.Dim("sequence", min=2, max=64)},),
        )
        torch.onnx.export(
            CausalAttentionBlock().eval(),
            (tokens,),
            HERE / "causal_attention.onnx",
            opset_version=14,
            input_names=["tokens"],
            output_names=["hidden"],
            dynamo=False,
            dynamic_axes={"tokens": {1: "sequence"}},
        )
        program = torch.onnx.export(
            PatchEncoder().eval(),
            (torch.randn(1, 3, 16, 16),),
            opset_version=20,
            input_names=["image"],
            output_names=["logits"],
            dynamo=True,
        )
        program.save(HERE / "vit.onnx", external_data=False)


if __name__ == "__main__":
    main()
