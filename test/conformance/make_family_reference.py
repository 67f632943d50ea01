#!/usr/bin/python3
"""Writes the weights, inputs and outputs of GPT-2, LLaMA-style and BERT models for
Kiln's conformance tests of the Transformer family (nn::DecoderOnlyLM, nn::BertClassifier).

Hugging Face's `transformers` is not installed here, so the modules below are written in
its style, module by module, with its parameter names (GPT2LMHeadModel, LlamaForCausalLM,
BertForSequenceClassification): a state_dict saved from the real classes has the same
names and layouts. Each part that PyTorch also has is checked against PyTorch's own
function first (tanh-GELU against F.gelu(approximate="tanh"), attention against
torch.nn.MultiheadAttention), so that the reference is tied to real semantics, not to
what this file believes.

Run with Debian's python3-torch:
  /usr/bin/python3 make_family_reference.py --model gpt2 --out DIR
"""
import argparse
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_reference import write_safetensors  # noqa: E402

# Sizes of models/gpt_tiny.cpp, test/conformance/llama_tiny.cpp, models/bert_tiny.cpp.
CONFIGS = {
    "gpt2": dict(vocab=256, d=64, heads=4, layers=2, d_ff=256, positions=64, eps=1e-5),
    "llama": dict(vocab=256, d=64, heads=4, layers=2, d_ff=160, positions=64, eps=1e-6,
                  rope_theta=10000.0),
    "bert": dict(vocab=256, d=64, heads=4, layers=2, d_ff=128, positions=64,
                 type_vocab=2, labels=3, eps=1e-12),
}


def gelu_new(x):
    """GPT-2's activation, as transformers.activations.NewGELUActivation writes it."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi)
                                       * (x + 0.044715 * torch.pow(x, 3.0))))


def attention(q, k, v, mask):
    """softmax(q·kᵀ/√d + mask)·v over [B, H, T, d]; `mask` is additive."""
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    return torch.softmax(scores + mask, dim=-1) @ v


def split_heads(x, heads):
    b, t, d = x.shape
    return x.view(b, t, heads, d // heads).transpose(1, 2)


def merge_heads(x):
    b, h, t, d = x.shape
    return x.transpose(1, 2).reshape(b, t, h * d)


def causal_mask(t):
    return torch.triu(torch.full((t, t), float("-inf")), diagonal=1)


class Conv1D(torch.nn.Module):
    """transformers.pytorch_utils.Conv1D: weight [in, out], y = x·W + b."""

    def __init__(self, nf, nx):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(nx, nf) * 0.1)
        self.bias = torch.nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        return torch.addmm(self.bias, x.view(-1, x.shape[-1]), self.weight).view(
            *x.shape[:-1], -1)


class GPT2Attention(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.heads, self.d = c["heads"], c["d"]
        self.c_attn = Conv1D(3 * c["d"], c["d"])
        self.c_proj = Conv1D(c["d"], c["d"])

    def forward(self, x):
        q, k, v = self.c_attn(x).split(self.d, dim=2)
        q, k, v = (split_heads(t, self.heads) for t in (q, k, v))
        return self.c_proj(merge_heads(attention(q, k, v, causal_mask(x.shape[1]))))


class GPT2MLP(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_fc = Conv1D(c["d_ff"], c["d"])
        self.c_proj = Conv1D(c["d"], c["d_ff"])

    def forward(self, x):
        return self.c_proj(gelu_new(self.c_fc(x)))


class GPT2Block(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ln_1 = torch.nn.LayerNorm(c["d"], eps=c["eps"])
        self.attn = GPT2Attention(c)
        self.ln_2 = torch.nn.LayerNorm(c["d"], eps=c["eps"])
        self.mlp = GPT2MLP(c)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2Model(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.wte = torch.nn.Embedding(c["vocab"], c["d"])
        self.wpe = torch.nn.Embedding(c["positions"], c["d"])
        self.h = torch.nn.ModuleList(GPT2Block(c) for _ in range(c["layers"]))
        self.ln_f = torch.nn.LayerNorm(c["d"], eps=c["eps"])

    def forward(self, ids):
        x = self.wte(ids) + self.wpe(torch.arange(ids.shape[1]))
        for block in self.h:
            x = block(x)
        return self.ln_f(x)


class GPT2LMHeadModel(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.transformer = GPT2Model(c)

    def forward(self, ids):
        # lm_head is tied to wte: HF's checkpoints store it once, as transformer.wte.
        return self.transformer(ids) @ self.transformer.wte.weight.t()


class LlamaRMSNorm(torch.nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.eps))


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rotary(x, positions, theta):
    """LlamaRotaryEmbedding + apply_rotary_pos_emb: pairs (i, i + d/2)."""
    d = x.shape[-1]
    inv_freq = 1.0 / (theta ** (torch.arange(0, d, 2).float() / d))
    freqs = positions.float()[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return x * emb.cos() + rotate_half(x) * emb.sin()


class LlamaAttention(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.heads, self.theta = c["heads"], c["rope_theta"]
        for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
            setattr(self, name, torch.nn.Linear(c["d"], c["d"], bias=False))

    def forward(self, x):
        positions = torch.arange(x.shape[1])
        q = rotary(split_heads(self.q_proj(x), self.heads), positions, self.theta)
        k = rotary(split_heads(self.k_proj(x), self.heads), positions, self.theta)
        v = split_heads(self.v_proj(x), self.heads)
        return self.o_proj(merge_heads(attention(q, k, v, causal_mask(x.shape[1]))))


class LlamaMLP(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.gate_proj = torch.nn.Linear(c["d"], c["d_ff"], bias=False)
        self.up_proj = torch.nn.Linear(c["d"], c["d_ff"], bias=False)
        self.down_proj = torch.nn.Linear(c["d_ff"], c["d"], bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.input_layernorm = LlamaRMSNorm(c["d"], c["eps"])
        self.self_attn = LlamaAttention(c)
        self.post_attention_layernorm = LlamaRMSNorm(c["d"], c["eps"])
        self.mlp = LlamaMLP(c)

    def forward(self, x):
        x = x + self.self_attn(self.input_layernorm(x))
        return x + self.mlp(self.post_attention_layernorm(x))


class LlamaModel(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed_tokens = torch.nn.Embedding(c["vocab"], c["d"])
        self.layers = torch.nn.ModuleList(LlamaDecoderLayer(c) for _ in range(c["layers"]))
        self.norm = LlamaRMSNorm(c["d"], c["eps"])

    def forward(self, ids):
        x = self.embed_tokens(ids)
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


class LlamaForCausalLM(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.model = LlamaModel(c)
        self.lm_head = torch.nn.Linear(c["d"], c["vocab"], bias=False)

    def forward(self, ids):
        return self.lm_head(self.model(ids))


class BertSelfAttention(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.heads = c["heads"]
        self.query = torch.nn.Linear(c["d"], c["d"])
        self.key = torch.nn.Linear(c["d"], c["d"])
        self.value = torch.nn.Linear(c["d"], c["d"])

    def forward(self, x, mask):
        q, k, v = (split_heads(f(x), self.heads) for f in (self.query, self.key, self.value))
        return merge_heads(attention(q, k, v, mask))


class BertOutput(torch.nn.Module):
    """BertSelfOutput and BertOutput: dense, then LayerNorm over the residual."""

    def __init__(self, d_in, d, eps):
        super().__init__()
        self.dense = torch.nn.Linear(d_in, d)
        self.LayerNorm = torch.nn.LayerNorm(d, eps=eps)

    def forward(self, x, residual):
        return self.LayerNorm(self.dense(x) + residual)


class BertAttention(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self = BertSelfAttention(c)
        self.output = BertOutput(c["d"], c["d"], c["eps"])

    def forward(self, x, mask):
        return self.output(self.self(x, mask), x)


class BertIntermediate(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = torch.nn.Linear(c["d"], c["d_ff"])

    def forward(self, x):
        return F.gelu(self.dense(x))


class BertLayer(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = BertAttention(c)
        self.intermediate = BertIntermediate(c)
        self.output = BertOutput(c["d_ff"], c["d"], c["eps"])

    def forward(self, x, mask):
        h = self.attention(x, mask)
        return self.output(self.intermediate(h), h)


class BertEncoder(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = torch.nn.ModuleList(BertLayer(c) for _ in range(c["layers"]))


class BertEmbeddings(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.word_embeddings = torch.nn.Embedding(c["vocab"], c["d"])
        self.position_embeddings = torch.nn.Embedding(c["positions"], c["d"])
        self.token_type_embeddings = torch.nn.Embedding(c["type_vocab"], c["d"])
        self.LayerNorm = torch.nn.LayerNorm(c["d"], eps=c["eps"])

    def forward(self, ids, types):
        x = (self.word_embeddings(ids) + self.token_type_embeddings(types)
             + self.position_embeddings(torch.arange(ids.shape[1])))
        return self.LayerNorm(x)


class BertPooler(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = torch.nn.Linear(c["d"], c["d"])

    def forward(self, x):
        return torch.tanh(self.dense(x[:, 0]))


class BertModel(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = BertEmbeddings(c)
        self.encoder = BertEncoder(c)
        self.pooler = BertPooler(c)

    def forward(self, ids, types, attention_mask):
        # HF's extended attention mask: 0 kept, the dtype's minimum for padding.
        mask = (1.0 - attention_mask[:, None, None, :].float()) * torch.finfo(
            torch.float32).min
        x = self.embeddings(ids, types)
        for layer in self.encoder.layer:
            x = layer(x, mask)
        return self.pooler(x)


class BertForSequenceClassification(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.bert = BertModel(c)
        self.classifier = torch.nn.Linear(c["d"], c["labels"])

    def forward(self, ids, types, attention_mask):
        return self.classifier(self.bert(ids, types, attention_mask))


def check_against_pytorch():
    """The hand-written parts equal PyTorch's own, where PyTorch has one."""
    x = torch.randn(1000) * 4
    assert torch.allclose(gelu_new(x), F.gelu(x, approximate="tanh"), atol=1e-6)
    g = torch.Generator().manual_seed(1)
    b, t, d, heads = 2, 5, 16, 4
    mha = torch.nn.MultiheadAttention(d, heads, batch_first=True, bias=False)
    x = torch.randn(b, t, d, generator=g)
    wq, wk, wv = mha.in_proj_weight.chunk(3)
    q, k, v = (split_heads(x @ w.t(), heads) for w in (wq, wk, wv))
    for mask in (causal_mask(t), torch.zeros(t, t)):
        ours = mha.out_proj(merge_heads(attention(q, k, v, mask)))
        theirs, _ = mha(x, x, x, attn_mask=mask, need_weights=False)
        assert torch.allclose(ours, theirs, atol=1e-5), (ours - theirs).abs().max()
    # Rotation by 0 is the identity, and rotary keeps each pair's norm.
    y = torch.randn(3, 8, generator=g)
    assert torch.allclose(rotary(y, torch.zeros(3), 10000.0), y)
    r = rotary(y, torch.arange(3), 10000.0)
    assert torch.allclose(r[:, :4] ** 2 + r[:, 4:] ** 2, y[:, :4] ** 2 + y[:, 4:] ** 2,
                          atol=1e-5)


def randomize(model):
    """Move biases and norm weights off 0 and 1 so that every tensor matters."""
    with torch.no_grad():
        for name, t in model.named_parameters():
            if name.endswith("bias"):
                t.uniform_(-0.2, 0.2)
            elif ("norm" in name.lower() or ".ln_" in name) and name.endswith("weight"):
                t.uniform_(0.5, 1.5)
            elif t.dim() == 2:
                t.normal_(0.0, 0.15)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", choices=CONFIGS, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    check_against_pytorch()
    torch.manual_seed(args.seed)
    c = CONFIGS[args.model]
    model = {"gpt2": GPT2LMHeadModel, "llama": LlamaForCausalLM,
             "bert": BertForSequenceClassification}[args.model](c)
    randomize(model)
    model.eval()
    os.makedirs(args.out, exist_ok=True)
    write_safetensors(os.path.join(args.out, "weights.safetensors"), model.state_dict())

    g = torch.Generator().manual_seed(args.seed + 1)
    with torch.no_grad():
        if args.model == "bert":
            # Batch size -> lengths (padded to the longest).
            cases = {"b1": [7], "b3": [12, 5, 9], "b2": [1, 16]}
            for case, lengths in cases.items():
                s = max(lengths)
                ids = torch.randint(0, c["vocab"], (len(lengths), s), generator=g)
                types = torch.randint(0, c["type_vocab"], (len(lengths), s), generator=g)
                lens = torch.tensor(lengths)
                mask = (torch.arange(s)[None, :] < lens[:, None]).long()
                write_safetensors(os.path.join(args.out, f"{case}.safetensors"), {
                    "ids": ids.int(), "token_type_ids": types.int(), "lengths": lens.int(),
                    "logits": model(ids, types, mask).float()})
            return
        # Batch size, length.
        cases = {"b1": (1, 9), "b3": (3, 13), "b2": (2, 1)}
        for case, (b, t) in cases.items():
            ids = torch.randint(0, c["vocab"], (b, t), generator=g)
            write_safetensors(os.path.join(args.out, f"{case}.safetensors"),
                              {"ids": ids.int(), "logits": model(ids).float()})


if __name__ == "__main__":
    main()
