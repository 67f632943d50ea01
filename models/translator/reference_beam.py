#!/usr/bin/python3
"""PyTorch reference decoding for the shipped translator: greedy and beam search. Kiln's
C++ decoding is tested against the outputs (and scores) printed here.

    /usr/bin/python3 models/translator/reference_beam.py 4096 1000000 21
    /usr/bin/python3 models/translator/reference_beam.py --beam 4 --alpha 0.6 --scores 4096
    /usr/bin/python3 models/translator/reference_beam.py --greedy 4096
    /usr/bin/python3 models/translator/reference_beam.py --heldout            # accuracy
    echo 4096 | /usr/bin/python3 models/translator/reference_beam.py -       # stdin

Prints one line per input: INPUT<TAB>OUTPUT (with --scores: INPUT<TAB>OUTPUT<TAB>SCORE,
and with --nbest every finished hypothesis, best first, as INPUT<TAB>RANK<TAB>OUTPUT<TAB>
NORMALIZED<TAB>RAW).

Greedy: start from [<bos>]; at each step append the arg-max token of the last position's
logits (lowest id on a tie); stop after <eos> or after MAX_LEN generated tokens.

Beam search with beam size K, length penalty ALPHA and MAX_LEN (GNMT normalisation):
  * A hypothesis is the tokens generated after <bos>; its raw score is the sum of its
    tokens' log-probabilities (log_softmax of float32 logits, summed in double).
  * live = [<bos> with score 0], finished = [].
  * Step t = 1..MAX_LEN: width = K - len(finished). Every live hypothesis h is extended by
    every vocabulary token v (no token is excluded) with score(h) + logp(v | h). The
    `width` best candidates are kept: higher raw score first, ties broken by the lower
    index of h in `live`, then by the lower token id. Kept candidates ending in <eos> move
    to `finished` (in that order); the others, in that order, are the new `live`.
    Stop when `live` is empty.
  * After step MAX_LEN, hypotheses still live are finished as they are (without <eos>).
  * Each finished hypothesis Y gets normalized = raw / lp(Y) with
        lp(Y) = ((5 + |Y|) / 6) ** ALPHA,   |Y| = generated tokens, <eos> included.
    The output is the finished hypothesis with the highest normalized score (the earlier
    finished one on a tie). K = 1 is exactly greedy decoding.
"""
import argparse
import json
import math
import os
import struct
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "test", "conformance"))

from make_reference import Translator  # noqa: E402
import tokenizer as tok  # noqa: E402


def read_safetensors(path):
    dtypes = {"F32": np.float32, "I32": np.int32, "I64": np.int64}
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        arr = np.frombuffer(data[begin:end], dtype=dtypes[info["dtype"]])
        out[name] = torch.from_numpy(arr.reshape(info["shape"]).copy())
    return out


def load(model_dir=HERE):
    with open(os.path.join(model_dir, "config.json")) as f:
        config = json.load(f)
    vocab = tok.Vocab.load(os.path.join(model_dir, config["vocab_file"]))
    assert len(vocab) == config["vocab_size"]
    model = Translator(dict(d_model=config["d_model"], nhead=config["heads"],
                            enc=config["encoder_layers"], dec=config["decoder_layers"],
                            d_ff=config["d_ff"], vocab=config["vocab_size"]))
    model.load_state_dict(read_safetensors(os.path.join(model_dir, "translator.safetensors")))
    # Dropout is 0: training mode is the same function, and keeps PyTorch off its
    # nested-tensor fast path.
    model.train()
    return model, vocab, config


@torch.no_grad()
def greedy(model, src_ids, max_len):
    """src_ids: list of ids. Returns (generated ids incl. <eos> if reached, raw score)."""
    src = torch.tensor([src_ids])
    lengths = torch.tensor([len(src_ids)])
    memory = model.encode(src, lengths)
    ys, score = [tok.BOS], 0.0
    for _ in range(max_len):
        logp = torch.log_softmax(model.decode(torch.tensor([ys]), memory, lengths)[0, -1], -1)
        v = int(logp.argmax())
        ys.append(v)
        score += float(logp[v])
        if v == tok.EOS:
            break
    return ys[1:], score


def length_penalty(length, alpha):
    return ((5.0 + length) / 6.0) ** alpha


@torch.no_grad()
def beam_search(model, src_ids, k, alpha, max_len):
    """Returns the finished hypotheses as (ids without <bos>, normalized, raw), best first."""
    src = torch.tensor([src_ids])
    lengths = torch.tensor([len(src_ids)])
    memory = model.encode(src, lengths)
    live = [([tok.BOS], 0.0)]
    finished = []  # (ids, raw), in the order they finished
    for _ in range(max_len):
        if not live:
            break
        n = len(live)
        logits = model.decode(torch.tensor([ids for ids, _ in live]),
                              memory.expand(n, -1, -1), lengths.expand(n))
        logp = torch.log_softmax(logits[:, -1], -1).tolist()
        cands = [(score + lp, i, v)
                 for i, (_, score) in enumerate(live) for v, lp in enumerate(logp[i])]
        cands.sort(key=lambda c: (-c[0], c[1], c[2]))
        new_live = []
        for score, i, v in cands[:k - len(finished)]:
            ids = live[i][0] + [v]
            if v == tok.EOS:
                finished.append((ids[1:], score))
            else:
                new_live.append((ids, score))
        live = new_live
    finished += [(ids[1:], score) for ids, score in live]
    ranked = [(ids, raw / length_penalty(len(ids), alpha), raw) for ids, raw in finished]
    # sorted() is stable: on equal normalized scores the earlier finished one stays first.
    return sorted(ranked, key=lambda h: -h[1])


def main():
    p = argparse.ArgumentParser(description="Greedy / beam-search reference decoding.",
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__)
    p.add_argument("inputs", nargs="*", help="numbers in digits; '-' reads lines from stdin")
    p.add_argument("--model-dir", default=HERE)
    p.add_argument("--beam", type=int, default=4, help="beam size K (default 4)")
    p.add_argument("--alpha", type=float, default=0.6, help="length penalty (default 0.6)")
    p.add_argument("--max-len", type=int, default=None,
                   help="most generated tokens, <eos> included (default: config "
                        "max_target_len)")
    p.add_argument("--greedy", action="store_true", help="greedy decoding instead")
    p.add_argument("--scores", action="store_true", help="print the score too")
    p.add_argument("--nbest", action="store_true", help="print every finished hypothesis")
    p.add_argument("--heldout", nargs="?", const=os.path.join(HERE, "heldout.tsv"),
                   help="decode a TSV of INPUT<TAB>EXPECTED and report exact match")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    torch.set_num_threads(args.threads)

    model, vocab, config = load(args.model_dir)
    max_len = args.max_len or config["max_target_len"]

    def translate(text):
        ids = vocab.encode_source(text)
        if args.greedy:
            out, raw = greedy(model, ids, max_len)
            return [(out, raw, raw)]
        return beam_search(model, ids, args.beam, args.alpha, max_len)

    if args.heldout:
        with open(args.heldout, encoding="utf-8") as f:
            pairs = [line.rstrip("\n").split("\t") for line in f if line.strip()]
        correct = 0
        for src, want in pairs:
            got = vocab.decode_target(translate(src)[0][0])
            correct += got == want
            if got != want:
                print(f"MISS\t{src}\tgot '{got}'\twant '{want}'")
        mode = "greedy" if args.greedy else f"beam K={args.beam} alpha={args.alpha}"
        print(f"{mode}: {correct}/{len(pairs)} exact = {100.0 * correct / len(pairs):.1f}%")
        return

    inputs = args.inputs
    if inputs == ["-"] or not inputs:
        inputs = [line.strip() for line in sys.stdin if line.strip()]
    for text in inputs:
        hyps = translate(text)
        if args.nbest:
            for rank, (ids, norm, raw) in enumerate(hyps):
                print(f"{text}\t{rank}\t{vocab.decode_target(ids)}\t{norm:.6f}\t{raw:.6f}")
        elif args.scores:
            print(f"{text}\t{vocab.decode_target(hyps[0][0])}\t{hyps[0][1]:.6f}")
        else:
            print(f"{text}\t{vocab.decode_target(hyps[0][0])}")


if __name__ == "__main__":
    main()
