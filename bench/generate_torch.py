#!/usr/bin/python3
"""Greedy generation with the base Transformer: Kiln with its KV cache, Kiln re-decoding
whole prefixes, and PyTorch with a KV cache of its own, on the same random weights and
sources, side by side in one run (2 threads each).

  64 tokens generated from a 64-token source, batch 1 and batch 8; <eos> never stops a
  row, so every run generates exactly the same number of tokens.

Run it through bench/run_generate_bench.sh, which puts PyTorch on OpenBLAS. Prints the
median tokens/s of each and whether the three produced the same tokens.
"""
import argparse
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "test", "conformance"))
from make_reference import CONFIGS, Translator, write_safetensors  # noqa: E402

BOS = 1


class CachedGreedy:
    """Incremental greedy decoding over torch.nn.Transformer's weights: each layer keeps
    preallocated self-attention key/value caches [B, H, max_len, dk] written in place one
    position per step, and cross-attention keys/values computed once per source."""

    def __init__(self, model):
        self.m = model
        self.t = model.transformer
        self.heads = self.t.decoder.layers[0].self_attn.num_heads
        self.d = model.d_model
        self.dk = self.d // self.heads
        self.weights = self.decoder_weights()

    def decoder_weights(self):
        """(weight, bias) of every matrix product of a decoder step, by (layer, role);
        the output projection's bias is None."""
        d, weights = self.d, {}
        for i, layer in enumerate(self.t.decoder.layers):
            sa, ca = layer.self_attn, layer.multihead_attn
            w, b = ca.in_proj_weight, ca.in_proj_bias
            weights.update({
                (i, "self_qkv"): (sa.in_proj_weight, sa.in_proj_bias),
                (i, "self_out"): (sa.out_proj.weight, sa.out_proj.bias),
                (i, "cross_q"): (w[:d], b[:d]),
                (i, "cross_k"): (w[d:2 * d], b[d:2 * d]),
                (i, "cross_v"): (w[2 * d:], b[2 * d:]),
                (i, "cross_out"): (ca.out_proj.weight, ca.out_proj.bias),
                (i, "linear1"): (layer.linear1.weight, layer.linear1.bias),
                (i, "linear2"): (layer.linear2.weight, layer.linear2.bias)})
        weights["logits"] = (self.m.embed.weight, None)
        # Detached: a slice of a parameter carries its grad_fn, which torch.onnx.export
        # refuses to bake into a graph as a constant (bench/onnx_export.py).
        return {key: tuple(t if t is None else t.detach() for t in pair)
                for key, pair in weights.items()}

    def linear(self, key, x):
        """x times the transposed weight of `key`, plus its bias: where a subclass
        changes how the weights are stored (bench/torch_int8.py)."""
        return torch.nn.functional.linear(x, *self.weights[key])

    def encode(self, src, lengths):
        return self.m.encode(src, lengths)

    def split(self, x):  # [B, T, D] -> [B, H, T, dk]
        b, t, _ = x.shape
        return x.view(b, t, self.heads, self.dk).transpose(1, 2)

    def attend(self, q, k, v, mask, out_key):
        s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dk)
        if mask is not None:
            s = s + mask
        o = torch.matmul(torch.softmax(s, dim=-1), v)
        b, h, t, dk = o.shape
        return self.linear(out_key, o.transpose(1, 2).reshape(b, t, h * dk))

    def cross_kv(self, memory):
        """Cross-attention keys and values of every decoder layer, computed once."""
        return [(self.split(self.linear((i, "cross_k"), memory)),
                 self.split(self.linear((i, "cross_v"), memory)))
                for i in range(len(self.t.decoder.layers))]

    @staticmethod
    def pad_bias(lengths, s):
        """[B, 1, 1, S]: -inf at the padded source positions, 0 elsewhere."""
        b = lengths.shape[0]
        pad = torch.zeros(b, 1, 1, s, device=lengths.device)
        return pad.masked_fill(Translator.padding_mask(lengths, s).view(b, 1, 1, s),
                               float("-inf"))

    def step(self, token, pe_row, append, cross, pad):
        """One decoder position: token [B, 1], its positional encoding pe_row [D]; for
        each layer, append(layer index, k, v) stores this position's self-attention keys
        and values [B, H, 1, dk] and returns those of every position so far. Returns the
        next-token logits [B, V]."""
        x = self.m.embed(token) * math.sqrt(self.d) + pe_row
        for i, (layer, (ck, cv)) in enumerate(zip(self.t.decoder.layers, cross)):
            q, k, v = self.linear((i, "self_qkv"), x).chunk(3, dim=-1)
            keys, values = append(i, self.split(k), self.split(v))
            h = self.attend(self.split(q), keys, values, None, (i, "self_out"))
            x = layer.norm1(x + h)
            q = self.linear((i, "cross_q"), x)
            x = layer.norm2(x + self.attend(self.split(q), ck, cv, pad, (i, "cross_out")))
            hidden = layer.activation(self.linear((i, "linear1"), x))
            x = layer.norm3(x + self.linear((i, "linear2"), hidden))
        x = self.t.decoder.norm(x)
        return self.linear("logits", x[:, -1])

    def generate(self, src, lengths, steps):
        b, s = src.shape
        device = src.device
        cross = self.cross_kv(self.encode(src, lengths))
        pad = self.pad_bias(lengths, s)
        caches = [(torch.empty(b, self.heads, steps, self.dk, device=device),
                   torch.empty(b, self.heads, steps, self.dk, device=device))
                  for _ in cross]
        pe = self.m.positions(steps).to(device)
        token = torch.full((b, 1), BOS, dtype=torch.long, device=device)
        out = []
        for p in range(steps):
            def append(i, k, v):
                kc, vc = caches[i]
                kc[:, :, p:p + 1] = k
                vc[:, :, p:p + 1] = v
                return kc[:, :, :p + 1], vc[:, :, :p + 1]

            logits = self.step(token, pe[p], append, cross, pad)
            token = logits.argmax(dim=-1, keepdim=True)
            out.append(token)
        return torch.cat(out, dim=1)


def torch_run(gen, src, lengths, steps, repeat):
    """(tokens/s, the tokens [batch, steps] on the CPU), timed until the tokens are on
    the CPU: where the model runs on a GPU, .cpu() waits for its kernels."""
    with torch.no_grad():
        tokens = gen.generate(src, lengths, steps).cpu()  # warm-up
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            gen.generate(src, lengths, steps).cpu()
            times.append(time.perf_counter() - start)
    return src.shape[0] * steps / statistics.median(times), tokens


def kiln_run(bench, model, weights, sources_file, batch, steps, repeat, decoder):
    """Runs generate_bench: (tokens/s, the tokens [batch, steps], median ms of a step)."""
    out = subprocess.run([bench, model, weights, sources_file, "--batch", str(batch),
                          "--tokens", str(steps), "--repeat", str(repeat),
                          "--decoder", decoder], check=True, capture_output=True,
                         text=True).stdout
    rate = float(re.search(r"tokens/s ([0-9.]+)", out).group(1))
    step_ms = float(re.search(r"step: median ([0-9.]+) ms", out).group(1))
    rows = [list(map(int, line.split(":")[1].split())) for line in out.splitlines()
            if line.startswith("row")]
    return rate, torch.tensor(rows), step_ms


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bench", required=True, help="build/bench/generate_bench")
    p.add_argument("--model", required=True, help="transformer_base.so")
    p.add_argument("--tokens", type=int, default=64)
    p.add_argument("--src-len", type=int, default=64)
    p.add_argument("--batches", default="1,8")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--prefix-repeat", type=int, default=3)
    args = p.parse_args()
    torch.set_num_threads(2)
    torch.manual_seed(0)
    # eval() takes nn.TransformerEncoder's nested-tensor fast path, which warns it is a
    # prototype; it is PyTorch's fastest encoder, so keep it and drop the noise.
    warnings.filterwarnings("ignore", message=".*nested tensors.*")
    config = CONFIGS["base"]
    model = Translator(config).eval()
    work = tempfile.mkdtemp(prefix="kiln-gen-bench-")
    weights = os.path.join(work, "weights.safetensors")
    write_safetensors(weights, model.state_dict())
    batches = [int(b) for b in args.batches.split(",")]
    # Ids from 3 up: no <pad>, <bos> or <eos> in the sources.
    src = torch.randint(3, config["vocab"], (max(batches), args.src_len))
    sources_file = os.path.join(work, "sources.txt")
    with open(sources_file, "w") as f:
        for row in src.tolist():
            f.write(" ".join(map(str, row)) + "\n")

    gen = CachedGreedy(model)
    print(f"base Transformer, greedy, {args.tokens} tokens from a {args.src_len}-token "
          f"source, 2 threads; median tokens/s of {args.repeat} runs "
          f"({args.prefix_repeat} for whole-prefix)")
    print(f"{'':10}{'Kiln KV':>10}{'Kiln prefix':>13}{'PyTorch KV':>12}"
          f"{'KV/prefix':>11}{'Kiln/PyTorch':>14}  same tokens")
    for b in batches:
        s, lens = src[:b], torch.full((b,), args.src_len)
        k_kv, k_tokens, _ = kiln_run(args.bench, args.model, weights, sources_file, b,
                                     args.tokens, args.repeat, "kv")
        k_pre, p_tokens, _ = kiln_run(args.bench, args.model, weights, sources_file, b,
                                      args.tokens, args.prefix_repeat, "prefix")
        t_kv, t_tokens = torch_run(gen, s, lens, args.tokens, args.repeat)
        same = torch.equal(k_tokens, p_tokens) and torch.equal(k_tokens, t_tokens)
        print(f"{'batch %d' % b:10}{k_kv:10.1f}{k_pre:13.1f}{t_kv:12.1f}"
              f"{k_kv / k_pre:11.2f}{k_kv / t_kv:14.2f}  {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
