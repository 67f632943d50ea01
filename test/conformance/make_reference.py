#!/usr/bin/python3
"""Writes a PyTorch encoder-decoder Transformer's weights, inputs and outputs for Kiln's
conformance tests: the reference is an implementation nobody here wrote.

The module is `embed` (shared source/target embedding, tied output projection without
bias) + `transformer` = torch.nn.Transformer(batch_first=True, dropout=0), so the weights
file carries exactly the state_dict names a PyTorch user has.

Run with Debian's python3-torch: /usr/bin/python3 make_reference.py --config tiny --out DIR
"""
import argparse
import json
import math
import os
import struct

import torch

CONFIGS = {
    # name: d_model, heads, encoder layers, decoder layers, d_ff, vocab
    "tiny": dict(d_model=32, nhead=4, enc=2, dec=2, d_ff=64, vocab=50),
    "base": dict(d_model=512, nhead=8, enc=6, dec=6, d_ff=2048, vocab=8000),
    # The options off the paper's path: LayerNorm before each sublayer, GELU.
    "tiny_prenorm_gelu": dict(d_model=32, nhead=4, enc=2, dec=2, d_ff=64, vocab=50,
                              norm_first=True, activation="gelu"),
}


class Translator(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.d_model = c["d_model"]
        self.embed = torch.nn.Embedding(c["vocab"], c["d_model"])
        self.transformer = torch.nn.Transformer(
            d_model=c["d_model"], nhead=c["nhead"], num_encoder_layers=c["enc"],
            num_decoder_layers=c["dec"], dim_feedforward=c["d_ff"], dropout=0.0,
            batch_first=True, norm_first=c.get("norm_first", False),
            activation=c.get("activation", "relu"))

    def positions(self, length):
        pe = torch.zeros(length, self.d_model)
        pos = torch.arange(length, dtype=torch.float64).unsqueeze(1)
        div = torch.pow(10000.0, torch.arange(0, self.d_model, 2, dtype=torch.float64)
                        / self.d_model)
        pe[:, 0::2] = torch.sin(pos / div).float()
        pe[:, 1::2] = torch.cos(pos / div).float()
        return pe

    def embed_tokens(self, ids):
        return self.embed(ids) * math.sqrt(self.d_model) + \
            self.positions(ids.shape[1]).to(ids.device)

    @staticmethod
    def padding_mask(lengths, length):
        return torch.arange(length, device=lengths.device).unsqueeze(0) >= \
            lengths.unsqueeze(1)

    def encode(self, src_ids, src_lengths):
        mask = self.padding_mask(src_lengths, src_ids.shape[1])
        return self.transformer.encoder(self.embed_tokens(src_ids),
                                        src_key_padding_mask=mask)

    def decode(self, tgt_ids, memory, src_lengths):
        t = tgt_ids.shape[1]
        causal = torch.triu(torch.full((t, t), float("-inf"), device=tgt_ids.device),
                            diagonal=1)
        out = self.transformer.decoder(
            self.embed_tokens(tgt_ids), memory, tgt_mask=causal,
            memory_key_padding_mask=self.padding_mask(src_lengths, memory.shape[1]))
        return out @ self.embed.weight.t()


def write_safetensors(path, tensors):
    dtypes = {torch.float32: "F32", torch.int32: "I32", torch.int64: "I64"}
    header, offset, blobs = {}, 0, []
    for name, t in tensors.items():
        t = t.detach().contiguous()
        data = t.numpy().tobytes()
        header[name] = {"dtype": dtypes[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config", choices=CONFIGS, default="tiny")
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    torch.manual_seed(args.seed)
    c = CONFIGS[args.config]
    model = Translator(c)
    # Move biases and LayerNorm weights away from 0 and 1 so that every tensor matters.
    with torch.no_grad():
        for name, t in model.named_parameters():
            if name.endswith("bias"):
                t.uniform_(-0.2, 0.2)
            elif "norm" in name and name.endswith("weight"):
                t.uniform_(0.5, 1.5)
    # Training mode with dropout 0 is the same function, and keeps PyTorch off its
    # nested-tensor fast path, which zeroes padded positions.
    model.train()
    os.makedirs(args.out, exist_ok=True)
    write_safetensors(os.path.join(args.out, "weights.safetensors"), model.state_dict())

    cases = {"b1": ([9], 6), "b3": ([9, 4, 7], 5)}
    with torch.no_grad():
        for case, (lengths, tgt_len) in cases.items():
            g = torch.Generator().manual_seed(args.seed + len(lengths))
            src_len = max(lengths)
            src = torch.randint(0, c["vocab"], (len(lengths), src_len), generator=g)
            tgt = torch.randint(0, c["vocab"], (len(lengths), tgt_len), generator=g)
            lens = torch.tensor(lengths)
            memory = model.encode(src, lens)
            logits = model.decode(tgt, memory, lens)
            write_safetensors(os.path.join(args.out, f"{case}.safetensors"), {
                "src_ids": src.int(), "src_lengths": lens.int(), "tgt_ids": tgt.int(),
                "memory": memory.float(), "logits": logits.float()})
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(c, f)


if __name__ == "__main__":
    main()
