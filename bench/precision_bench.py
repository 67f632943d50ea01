#!/usr/bin/python3
"""Kiln's weight precisions (fp32, bf16, int8) against PyTorch fp32 and PyTorch's dynamic
int8 quantization (bench/torch_int8.py), on the base Transformer with the same random
weights and inputs, side by side in one run, 2 threads each:

  encoder b8 s128: median ms of one encode;
  greedy, 64 tokens from a 64-token source, b1 and b8, with key/value caches: median ms
  per generated position (the whole generation, encoding included, / 64);
  decode_step at b1: the weight bytes it reads (from the manifest) and the GB/s that
  makes at the median step time, beside a plain streaming read of the fp32 step's size;
  accuracy: the relative error ||l - l_fp32|| / ||l_fp32|| of teacher-forced logits
  (b2, 64 target positions) and how much of the greedy b8 generation matches fp32
  (rows identical, and the mean length of the prefix that matches).

Every Kiln precision loads the same fp32 checkpoint and converts it at load time. Run it
through bench/run_precision_bench.sh. Prints markdown tables.
"""
import argparse
import os
import sys
import tempfile

import numpy as np
import torch

from generate_torch import CachedGreedy, kiln_run, torch_run
from model_bench import (CONFIG, ceiling_tool, log, parameter_bytes_read, print_machine,
                         read_manifest, save_npy, start_run)
from torch_int8 import DynamicInt8Greedy
from transformer_latency import kiln_median_ms, torch_median_ms

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "test", "conformance"))
from make_reference import Translator, write_safetensors  # noqa: E402

PRECISIONS = ("f32", "bf16", "int8")


def kiln_logits(args, model, weights, work, src, lens, tgt):
    """Teacher-forced logits of `model` through kiln-run: encode, then decode."""
    out = os.path.join(work, "kiln_out_" + os.path.basename(model))
    files = {"src_ids": save_npy(work, "acc_src", src),
             "src_lengths": save_npy(work, "acc_lens", lens)}
    kiln_median_ms(args.kiln_run, model, weights, "encode", files, 1, save_outputs=out)
    files = {"tgt_ids": save_npy(work, "acc_tgt", tgt),
             "memory": os.path.join(out, "memory.npy"),
             "src_lengths": files["src_lengths"]}
    kiln_median_ms(args.kiln_run, model, weights, "decode", files, 1, save_outputs=out)
    return torch.from_numpy(np.load(os.path.join(out, "logits.npy")))


def relative_error(got, want):
    return float((got - want).norm() / want.norm())


def agreement(tokens, reference):
    """(rows equal to the reference's, mean length of the prefix each row shares)."""
    same = (tokens == reference).int()
    prefix = same.cumprod(dim=1).sum(dim=1).float()
    return int((prefix == tokens.shape[1]).sum()), float(prefix.mean())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kiln-run", required=True)
    p.add_argument("--generate-bench", required=True)
    p.add_argument("--stream-read", required=True)
    for precision in PRECISIONS:
        p.add_argument(f"--{precision}", required=True, metavar="MODEL.so",
                       help=f"transformer_base compiled with --weights={precision}")
    p.add_argument("--encoder-repeat", type=int, default=7)
    p.add_argument("--greedy-repeat", type=int, default=3)
    p.add_argument("--ceiling-repeat", type=int, default=11)
    p.add_argument("--src-len", type=int, default=128, help="encoder case")
    p.add_argument("--greedy-src-len", type=int, default=64)
    p.add_argument("--tokens", type=int, default=64)
    args = p.parse_args()
    models = {precision: getattr(args, precision) for precision in PRECISIONS}
    threads, load_before, started = start_run()

    model = Translator(CONFIG).eval()
    scratch = tempfile.TemporaryDirectory(prefix="kiln-precision-bench-")
    work = scratch.name
    weights = os.path.join(work, "weights.safetensors")
    write_safetensors(weights, model.state_dict())
    fp32, int8 = CachedGreedy(model), DynamicInt8Greedy(model)
    torch_engines = {"PyTorch fp32": fp32, "PyTorch int8": int8}
    log(started, "weights written, PyTorch int8 quantized")

    # Encoder b8.
    src = torch.randint(0, CONFIG["vocab"], (8, args.src_len))
    lens = torch.full((8,), args.src_len)
    files = {"src_ids": save_npy(work, "src_ids", src),
             "src_lengths": save_npy(work, "src_lengths", lens)}
    encoder = {f"Kiln {p}": kiln_median_ms(args.kiln_run, m, weights, "encode", files,
                                           args.encoder_repeat)
               for p, m in models.items()}
    with torch.no_grad():
        for name, gen in torch_engines.items():
            encoder[name] = torch_median_ms(lambda: gen.encode(src, lens),
                                            args.encoder_repeat)
    log(started, "encoder b8")

    # Greedy b1 and b8.
    gsrc = torch.randint(3, CONFIG["vocab"], (8, args.greedy_src_len))
    sources = os.path.join(work, "sources.txt")
    with open(sources, "w") as f:
        f.writelines(" ".join(map(str, row)) + "\n" for row in gsrc.tolist())
    greedy, tokens, step_ms = {1: {}, 8: {}}, {}, {}
    for b in (1, 8):
        for p, m in models.items():
            rate, toks, ms = kiln_run(args.generate_bench, m, weights, sources, b,
                                      args.tokens, args.greedy_repeat, "kv")
            greedy[b][f"Kiln {p}"] = 1e3 * b / rate
            tokens[f"Kiln {p}", b], step_ms[p, b] = toks, ms
        for name, gen in torch_engines.items():
            rate, toks = torch_run(gen, gsrc[:b], torch.full((b,), args.greedy_src_len),
                                   args.tokens, args.greedy_repeat)
            greedy[b][name] = 1e3 * b / rate
            tokens[name, b] = toks
        log(started, f"greedy b{b}")

    # Accuracy: teacher-forced logits.
    asrc = torch.randint(3, CONFIG["vocab"], (2, args.greedy_src_len))
    alens = torch.tensor([args.greedy_src_len, args.greedy_src_len - 9])
    atgt = torch.randint(3, CONFIG["vocab"], (2, args.tokens))
    logits = {f"Kiln {p}": kiln_logits(args, m, weights, work, asrc, alens, atgt)
              for p, m in models.items()}
    with torch.no_grad():
        logits["PyTorch fp32"] = model.decode(atgt, model.encode(asrc, alens), alens)
        logits["PyTorch int8"] = int8.logits(atgt, int8.encode(asrc, alens), alens)
    log(started, "accuracy")

    # Bandwidth of the batch-1 step.
    step_bytes = {}
    for p, m in models.items():
        manifest = read_manifest(m)
        entry = next(e for e in manifest["entries"] if e["name"] == "decode_step")
        step_bytes[p] = parameter_bytes_read(manifest, entry)
    stream = ceiling_tool([args.stream_read, str(step_bytes["f32"])], args.ceiling_repeat,
                          "GB/s")

    print_machine(threads, load_before, started, args)
    names = [f"Kiln {p}" for p in PRECISIONS] + list(torch_engines)
    print("| case | " + " | ".join(names) + " | Kiln bf16 ÷ fp32 | Kiln int8 ÷ fp32 "
          "| PyTorch int8 ÷ Kiln int8 |")
    print("|---" * (len(names) + 4) + "|")
    rows = [(f"encoder b8 s{args.src_len}, ms", encoder)] + [
        (f"greedy b{b}, {args.tokens} tokens from {args.greedy_src_len}, ms per "
         "position", greedy[b]) for b in (1, 8)]
    for label, ms in rows:
        base = ms["Kiln f32"]
        print(f"| {label} | " + " | ".join(f"{ms[n]:.2f}" for n in names) +
              f" | {base / ms['Kiln bf16']:.2f}× | {base / ms['Kiln int8']:.2f}× "
              f"| {ms['PyTorch int8'] / ms['Kiln int8']:.2f}× |")
    print("\n| decode_step b1 | weight bytes read | median step | GB/s | % of the "
          "streaming read |")
    print("|---|---|---|---|---|")
    for p in PRECISIONS:
        gbs = step_bytes[p] / step_ms[p, 1] / 1e6
        print(f"| Kiln {p} | {step_bytes[p] / 1e6:.1f} MB | {step_ms[p, 1]:.2f} ms "
              f"| {gbs:.1f} | {100 * gbs / stream:.0f} % |")
    print(f"| streaming read of {step_bytes['f32'] / 1e6:.1f} MB (bench/stream_read.cpp) "
          f"| | | {stream:.1f} | 100 % |")
    print("\n| accuracy | logits rel. error vs its fp32 (b2, 64 positions) | greedy b8: "
          "rows equal to its fp32 | mean matching prefix (of 64) |")
    print("|---|---|---|---|")
    for name in names:
        ref = "Kiln f32" if name.startswith("Kiln") else "PyTorch fp32"
        same, prefix = agreement(tokens[name, 8], tokens[ref, 8])
        print(f"| {name} | {relative_error(logits[name], logits[ref]):.1e} | {same}/8 "
              f"| {prefix:.1f} |")
    same, _ = agreement(tokens["Kiln f32", 8], tokens["PyTorch fp32", 8])
    print(f"\nKiln fp32 and PyTorch fp32: logits rel. error "
          f"{relative_error(logits['Kiln f32'], logits['PyTorch fp32']):.1e}, greedy b8 "
          f"rows equal {same}/8.")


if __name__ == "__main__":
    main()
