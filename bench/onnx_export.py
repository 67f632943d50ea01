#!/usr/bin/python3
"""Exports the base Transformer (test/conformance/make_reference.py's Translator) to ONNX
for ONNX Runtime, with torch.onnx.export at opset 17, as three graphs:

  encoder.onnx       src_ids [B, S], src_lengths [B] (int64)   -> memory [B, S, D]
  decode_start.onnx  memory [B, S, D], src_lengths [B]         -> pad_bias [B, 1, 1, S],
                     cross_k_L, cross_v_L [B, H, S, dk] for every decoder layer L
  decode_step.onnx   tgt_ids [B, 1], step [1] (int64), pad_bias, cross_k_L, cross_v_L,
                     past_k_L, past_v_L [B, H, P, dk]       -> logits [B, V],
                     present_k_L, present_v_L [B, H, P + 1, dk]

decode_step is greedy decoding with self-attention key/value caches the way ONNX Runtime
users run it (past in, present out); its math is bench/generate_torch.py's CachedGreedy,
so PyTorch and ONNX Runtime decode the same way.
"""
import os
import sys

import torch

from generate_torch import CachedGreedy

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "test", "conformance"))
from make_reference import Translator  # noqa: E402

OPSET = 17


class Encoder(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.m = model

    def forward(self, src_ids, src_lengths):
        return self.m.encode(src_ids, src_lengths)


class DecodeStart(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.m = model  # a submodule, so that its weights export as initializers
        self.gen = CachedGreedy(model)

    def forward(self, memory, src_lengths):
        kv = [t for pair in self.gen.cross_kv(memory) for t in pair]
        return (CachedGreedy.pad_bias(src_lengths, memory.shape[1]), *kv)


class DecodeStep(torch.nn.Module):
    def __init__(self, model, max_len):
        super().__init__()
        self.m = model  # a submodule, so that its weights export as initializers
        self.gen = CachedGreedy(model)
        self.layers = len(model.transformer.decoder.layers)
        self.register_buffer("pe", model.positions(max_len))

    def forward(self, tgt_ids, step, pad_bias, *caches):
        n = self.layers
        cross = list(zip(caches[0:2 * n:2], caches[1:2 * n:2]))
        past = list(zip(caches[2 * n::2], caches[2 * n + 1::2]))
        present = []

        def append(i, k, v):
            keys = torch.cat([past[i][0], k], dim=2)
            values = torch.cat([past[i][1], v], dim=2)
            present.extend([keys, values])
            return keys, values

        pe_row = self.pe.index_select(0, step)
        logits = self.gen.step(tgt_ids, pe_row, append, cross, pad_bias)
        return (logits, *present)


def layer_names(prefix, layers):
    return [f"{prefix}_{kv}_{i}" for i in range(layers) for kv in ("k", "v")]


def export(model, out_dir, max_len):
    """Writes the three graphs into out_dir. The model is exported in eval mode with
    gradients enabled: that keeps torch.nn.TransformerEncoder off its fused fast path,
    which has no ONNX export, and computes the same function."""
    model = model.eval()
    layers = len(model.transformer.decoder.layers)
    cfg = CachedGreedy(model)
    b, s = 2, 5
    src = torch.randint(3, model.embed.num_embeddings, (b, s))
    lengths = torch.tensor([s, s - 2])
    memory = torch.randn(b, s, model.d_model)
    batch_src = {0: "B", 1: "S"}
    heads_src = {0: "B", 2: "S"}
    with torch.enable_grad():
        torch.onnx.export(Encoder(model), (src, lengths),
                          os.path.join(out_dir, "encoder.onnx"),
                          input_names=["src_ids", "src_lengths"], output_names=["memory"],
                          dynamic_axes={"src_ids": batch_src, "src_lengths": {0: "B"},
                                        "memory": batch_src},
                          opset_version=OPSET)
        cross_names = layer_names("cross", layers)
        torch.onnx.export(DecodeStart(model), (memory, lengths),
                          os.path.join(out_dir, "decode_start.onnx"),
                          input_names=["memory", "src_lengths"],
                          output_names=["pad_bias", *cross_names],
                          dynamic_axes={"memory": batch_src, "src_lengths": {0: "B"},
                                        "pad_bias": {0: "B", 3: "S"},
                                        **{n: heads_src for n in cross_names}},
                          opset_version=OPSET)
        past = 3
        past_names = layer_names("past", layers)
        present_names = layer_names("present", layers)
        cross = [torch.randn(b, cfg.heads, s, cfg.dk) for _ in cross_names]
        caches = [torch.randn(b, cfg.heads, past, cfg.dk) for _ in past_names]
        tokens = torch.randint(3, model.embed.num_embeddings, (b, 1))
        pad = CachedGreedy.pad_bias(lengths, s)
        torch.onnx.export(DecodeStep(model, max_len),
                          (tokens, torch.tensor([past]), pad, *cross, *caches),
                          os.path.join(out_dir, "decode_step.onnx"),
                          input_names=["tgt_ids", "step", "pad_bias", *cross_names,
                                       *past_names],
                          output_names=["logits", *present_names],
                          dynamic_axes={"tgt_ids": {0: "B"}, "pad_bias": {0: "B", 3: "S"},
                                        "logits": {0: "B"},
                                        **{n: heads_src for n in cross_names},
                                        **{n: {0: "B", 2: "P"} for n in past_names},
                                        **{n: {0: "B", 2: "P+1"} for n in present_names}},
                          opset_version=OPSET)

