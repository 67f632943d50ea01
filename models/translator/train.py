#!/usr/bin/python3
"""Trains the shipped translator: numbers in digits -> English words (see tokenizer.py for
the exact rules), with the same module the conformance suite checks Kiln against
(test/conformance/make_reference.py: Translator = shared embedding scaled by sqrt(d_model)
+ sinusoidal positions, torch.nn.Transformer post-norm with final LayerNorms, tied output
projection).

Run from anywhere with Debian's python3-torch:
    /usr/bin/python3 models/translator/train.py
Writes, next to this file: translator.safetensors, config.json, vocab.txt, heldout.tsv.
Everything is seeded: the held-out set, the training stream and the initial weights.
"""
import argparse
import json
import math
import os
import random
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "test", "conformance"))

from make_reference import Translator, write_safetensors  # noqa: E402
import tokenizer as tok  # noqa: E402

MODEL = dict(d_model=128, nhead=4, enc=3, dec=3, d_ff=256, vocab=len(tok.TOKENS))
HELDOUT_SIZE = 200
HELDOUT_DIGITS = range(3, tok.MAX_SOURCE_LEN + 1)  # 1- and 2-digit numbers all train


def random_digits(rng, n_digits):
    """An n_digits-digit number (1 digit includes 0): half of the time every digit is
    uniform; otherwise each digit after the first is 0 with probability 1/2, so that
    round numbers and zero groups ("12000345", "3000000", "100200") are common."""
    if n_digits == 1:
        return rng.randint(0, 9)
    digits = [rng.randint(1, 9)]
    sparse = rng.random() < 0.5
    for _ in range(n_digits - 1):
        digits.append(0 if sparse and rng.random() < 0.5 else rng.randint(0, 9))
    return int("".join(map(str, digits)))


def sample_number(rng):
    """Digit count L in 1..8 with P(L) proportional to L, then random_digits."""
    n_digits = rng.choices(range(1, tok.MAX_SOURCE_LEN + 1),
                           weights=range(1, tok.MAX_SOURCE_LEN + 1))[0]
    return random_digits(rng, n_digits)


def make_heldout(seed):
    """HELDOUT_SIZE distinct numbers from the training distribution, as evenly as
    possible over 3..8 digits."""
    rng = random.Random(seed)
    lengths = list(HELDOUT_DIGITS)
    numbers, seen = [], set()
    i = 0
    while len(numbers) < HELDOUT_SIZE:
        n = random_digits(rng, lengths[i % len(lengths)])
        if n not in seen:
            seen.add(n)
            numbers.append(n)
            i += 1
    return numbers


def make_batch(numbers, vocab):
    srcs = [vocab.encode_source(str(n)) for n in numbers]
    tgts = [vocab.encode_target(tok.number_to_words(n)) for n in numbers]
    s_len = max(map(len, srcs))
    t_len = max(map(len, tgts)) + 1
    src = torch.full((len(numbers), s_len), tok.PAD, dtype=torch.long)
    tgt_in = torch.full((len(numbers), t_len), tok.PAD, dtype=torch.long)
    tgt_out = torch.full((len(numbers), t_len), tok.PAD, dtype=torch.long)
    for i, (s, t) in enumerate(zip(srcs, tgts)):
        src[i, :len(s)] = torch.tensor(s)
        tgt_in[i, :len(t) + 1] = torch.tensor([tok.BOS] + t)
        tgt_out[i, :len(t) + 1] = torch.tensor(t + [tok.EOS])
    lengths = torch.tensor([len(s) for s in srcs])
    return src, lengths, tgt_in, tgt_out


@torch.no_grad()
def greedy(model, src, lengths, max_tokens):
    """Batched greedy decoding; returns one list of ids per row, without <bos>/<eos>."""
    memory = model.encode(src, lengths)
    ys = torch.full((src.shape[0], 1), tok.BOS, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_tokens):
        nxt = model.decode(ys, memory, lengths)[:, -1].argmax(-1)
        nxt = torch.where(done, torch.full_like(nxt, tok.PAD), nxt)
        ys = torch.cat([ys, nxt[:, None]], 1)
        done |= nxt == tok.EOS
        if done.all():
            break
    out = []
    for row in ys[:, 1:].tolist():
        out.append(row[:row.index(tok.EOS)] if tok.EOS in row else row)
    return out


def exact_match(model, numbers, vocab):
    correct, wrong = 0, []
    for i in range(0, len(numbers), 100):
        chunk = numbers[i:i + 100]
        src, lengths, _, _ = make_batch(chunk, vocab)
        for n, ids in zip(chunk, greedy(model, src, lengths, tok.MAX_TARGET_WORDS + 1)):
            got = vocab.decode_target(ids)
            if got == tok.number_to_words(n):
                correct += 1
            else:
                wrong.append((n, got))
    return correct / len(numbers), wrong


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=HERE)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--steps", type=int, default=3000)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--lr", type=float, default=1e-3, help="peak learning rate")
    p.add_argument("--warmup", type=int, default=300)
    p.add_argument("--eval-every", type=int, default=500)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    vocab = tok.Vocab()
    for n in (0, 7, 13, 21, 100, 4096, 1000000, 77777777, tok.MAX_NUMBER):
        assert all(w in vocab.ids for w in tok.number_to_words(n).split())

    heldout = make_heldout(args.seed)
    heldout_set = set(heldout)
    probe = random.Random(args.seed + 2)  # a second, disjoint sample to watch training
    probe_numbers = []
    while len(probe_numbers) < 500:
        n = sample_number(probe)
        if n not in heldout_set:
            probe_numbers.append(n)

    model = Translator(MODEL)
    with torch.no_grad():  # embed * sqrt(d_model) starts at unit scale, like the positions
        model.embed.weight.normal_(0.0, MODEL["d_model"] ** -0.5)
    # Training mode with dropout 0 is the function Kiln computes (and keeps PyTorch off the
    # nested-tensor fast path).
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(0.9, 0.98), eps=1e-9)

    def lr_at(step):  # linear warmup, then cosine decay to 2% of the peak
        if step < args.warmup:
            return args.lr * (step + 1) / args.warmup
        t = (step - args.warmup) / max(1, args.steps - args.warmup)
        return args.lr * (0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * t)))

    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=tok.PAD)
    rng = random.Random(args.seed + 1)
    start = time.time()
    seen_train = 0
    running = 0.0
    for step in range(args.steps):
        numbers = []
        while len(numbers) < args.batch:
            n = sample_number(rng)
            if n not in heldout_set:
                numbers.append(n)
        seen_train += len(numbers)
        src, lengths, tgt_in, tgt_out = make_batch(numbers, vocab)
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        logits = model.decode(tgt_in, model.encode(src, lengths), lengths)
        loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        running = loss.item() if step == 0 else 0.98 * running + 0.02 * loss.item()
        if (step + 1) % args.eval_every == 0 or step + 1 == args.steps:
            acc, _ = exact_match(model, probe_numbers, vocab)
            print(f"step {step + 1:5d}  loss {running:.4f}  lr {lr_at(step):.2e}  "
                  f"probe exact {acc:.3f}  {time.time() - start:.0f}s", flush=True)
    train_s = time.time() - start

    acc, wrong = exact_match(model, heldout, vocab)
    print(f"trained {args.steps} steps x {args.batch} = {seen_train} examples "
          f"in {train_s:.0f}s")
    print(f"held-out greedy exact match: {acc * 100:.1f}% of {len(heldout)}")
    for n, got in wrong[:20]:
        print(f"  {n}: got '{got}', want '{tok.number_to_words(n)}'")

    os.makedirs(args.out, exist_ok=True)
    write_safetensors(os.path.join(args.out, "translator.safetensors"),
                      {k: v.float() for k, v in model.state_dict().items()})
    vocab.save(os.path.join(args.out, "vocab.txt"))
    with open(os.path.join(args.out, "heldout.tsv"), "w", encoding="utf-8") as f:
        for n in heldout:
            f.write(f"{n}\t{tok.number_to_words(n)}\n")
    config = {
        "d_model": MODEL["d_model"], "heads": MODEL["nhead"],
        "encoder_layers": MODEL["enc"], "decoder_layers": MODEL["dec"],
        "d_ff": MODEL["d_ff"], "vocab_size": len(vocab),
        "activation": "relu", "norm_first": False, "final_norm": True,
        "layer_norm_eps": 1e-5, "shared_embeddings": True, "tied_output": True,
        "embedding_scale": "sqrt(d_model)", "positions": "sinusoidal",
        "pad_id": tok.PAD, "bos_id": tok.BOS, "eos_id": tok.EOS, "unk_id": tok.UNK,
        "max_source_len": tok.MAX_SOURCE_LEN,
        "max_target_len": tok.MAX_TARGET_WORDS + 1,
        "max_target_len_note": "target tokens generated after <bos>, <eos> included",
        "vocab_file": "vocab.txt",
        "source_tokenization": "characters: each character of the input is one token",
        "target_tokenization": "words: the output is split on whitespace, one token per "
                               "word; detokenize by joining with single spaces",
        "task": f"integers 0..{tok.MAX_NUMBER} in decimal digits -> English words",
        "training": {"seed": args.seed, "steps": args.steps, "batch": args.batch,
                     "peak_lr": args.lr, "warmup": args.warmup,
                     "examples": seen_train, "seconds": round(train_s),
                     "heldout_greedy_exact": acc},
    }
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
