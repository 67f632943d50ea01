#!/usr/bin/python3
"""PyTorch's dynamic int8 quantization of the base Transformer, as a peer for Kiln's int8
weights: every matrix product with a weight (q/k/v, output projections, the feed-forward
pair, the tied output projection) becomes a torch.nn.quantized.dynamic.Linear made by
torch.quantization.quantize_dynamic with per-channel weight scales (fbgemm: int8
weights, activations quantized per call). Attention's products and LayerNorm stay fp32,
as in Kiln.

quantize_dynamic applied to the model as it stands would convert only the feed-forward
linears: nn.MultiheadAttention keeps its packed in_proj as a plain parameter and its
out_proj is a NonDynamicallyQuantizableLinear. So the products are rebuilt as
nn.Linear modules over the same weights first, and quantize_dynamic converts all of them.
"""
import torch

from generate_torch import CachedGreedy


def quantized_linears(weights):
    """{key: dynamic int8 Linear} for {key: (weight, bias or None)}."""
    modules = torch.nn.ModuleDict()
    names = {}
    for n, (key, (w, b)) in enumerate(weights.items()):
        linear = torch.nn.Linear(w.shape[1], w.shape[0], bias=b is not None)
        with torch.no_grad():
            linear.weight.copy_(w)
            if b is not None:
                linear.bias.copy_(b)
        names[key] = str(n)
        modules[str(n)] = linear
    # Debian's PyTorch 1.13 is built without fbgemm: its x86 engine is oneDNN.
    engines = torch.backends.quantized.supported_engines
    torch.backends.quantized.engine = "fbgemm" if "fbgemm" in engines else "onednn"
    quantized = torch.quantization.quantize_dynamic(
        modules, {torch.nn.Linear: torch.quantization.per_channel_dynamic_qconfig},
        dtype=torch.qint8)
    return {key: quantized[name] for key, name in names.items()}


class DynamicInt8Greedy(CachedGreedy):
    """CachedGreedy (and an encoder) whose weight products run in int8."""

    def __init__(self, model):
        super().__init__(model)
        weights = dict(self.weights)
        for i, layer in enumerate(self.t.encoder.layers):
            sa = layer.self_attn
            weights.update({
                ("enc", i, "self_qkv"): (sa.in_proj_weight, sa.in_proj_bias),
                ("enc", i, "self_out"): (sa.out_proj.weight, sa.out_proj.bias),
                ("enc", i, "linear1"): (layer.linear1.weight, layer.linear1.bias),
                ("enc", i, "linear2"): (layer.linear2.weight, layer.linear2.bias)})
        self.int8 = quantized_linears(weights)

    def linear(self, key, x):
        return self.int8[key](x)

    def encode(self, src, lengths):
        """nn.TransformerEncoder's post-norm layers, with the int8 products."""
        x = self.m.embed_tokens(src)
        pad = self.pad_bias(lengths, src.shape[1])
        for i, layer in enumerate(self.t.encoder.layers):
            q, k, v = self.linear(("enc", i, "self_qkv"), x).chunk(3, dim=-1)
            h = self.attend(self.split(q), self.split(k), self.split(v), pad,
                            ("enc", i, "self_out"))
            x = layer.norm1(x + h)
            hidden = layer.activation(self.linear(("enc", i, "linear1"), x))
            x = layer.norm2(x + self.linear(("enc", i, "linear2"), hidden))
        return self.t.encoder.norm(x)

    def logits(self, tgt, memory, lengths):
        """Teacher-forced logits [B, T, V] of a whole target prefix, the causal way the
        cache computes them one position at a time."""
        b, t = tgt.shape
        cross = self.cross_kv(memory)
        pad = self.pad_bias(lengths, memory.shape[1])
        pe = self.m.positions(t)
        keys = [[] for _ in cross]

        def append(i, k, v):
            keys[i].append((k, v))
            return (torch.cat([kv[0] for kv in keys[i]], dim=2),
                    torch.cat([kv[1] for kv in keys[i]], dim=2))

        return torch.stack([self.step(tgt[:, p:p + 1], pe[p], append, cross, pad)
                            for p in range(t)], dim=1)

