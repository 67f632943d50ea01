#!/usr/bin/python3
"""Latency of the base Transformer: Kiln's compiled model (through kiln-run) against
PyTorch on the same weights and inputs, side by side in one run, 2 threads each.

  encode: batch 1, source length 128
  decode: batch 1, target length 64 (whole prefix), over that encoder memory

PyTorch must run on OpenBLAS (see ../shared/DESIGN.md): run this through
bench/run_transformer_latency.sh, which sets the library path. Prints medians in ms.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "test", "conformance"))
from make_reference import CONFIGS, Translator, write_safetensors  # noqa: E402


def kiln_median_ms(kiln_run, model, weights, entry, inputs, repeat, save_outputs=None):
    """Median ms of `repeat` runs of entry through kiln-run; with save_outputs, the last
    run's outputs are written there as NAME.npy."""
    args = [kiln_run, model, "--weights", weights, "--entry", entry,
            "--repeat", str(repeat), "--print", "none"]
    if save_outputs:
        args += ["--save-outputs", save_outputs]
    for name, path in inputs.items():
        args += ["--input", f"{name}={path}"]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    m = re.search(r"median\s+([0-9.]+)\s*ms", out)
    if not m:
        raise RuntimeError("no median in kiln-run output:\n" + out)
    return float(m.group(1))


def torch_median_ms(fn, repeat):
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kiln-run", required=True)
    p.add_argument("--model", required=True, help="transformer_base.so")
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--src-len", type=int, default=128)
    p.add_argument("--tgt-len", type=int, default=64)
    args = p.parse_args()
    torch.set_num_threads(2)
    torch.manual_seed(0)
    model = Translator(CONFIGS["base"]).eval()
    work = tempfile.mkdtemp(prefix="kiln-bench-")
    weights = os.path.join(work, "weights.safetensors")
    write_safetensors(weights, model.state_dict())

    src = torch.randint(0, CONFIGS["base"]["vocab"], (1, args.src_len))
    tgt = torch.randint(0, CONFIGS["base"]["vocab"], (1, args.tgt_len))
    lens = torch.tensor([args.src_len])
    with torch.no_grad():
        memory = model.encode(src, lens)
    files = {}
    for name, t in {"src_ids": src.int(), "src_lengths": lens.int(), "tgt_ids": tgt.int(),
                    "memory": memory.float()}.items():
        files[name] = os.path.join(work, name + ".npy")
        np.save(files[name], t.numpy())

    with torch.no_grad():
        t_enc = torch_median_ms(lambda: model.encode(src, lens), args.repeat)
        t_dec = torch_median_ms(lambda: model.decode(tgt, memory, lens), args.repeat)
    k_enc = kiln_median_ms(args.kiln_run, args.model, weights, "encode",
                           {k: files[k] for k in ("src_ids", "src_lengths")}, args.repeat)
    k_dec = kiln_median_ms(args.kiln_run, args.model, weights, "decode",
                           {k: files[k] for k in ("tgt_ids", "memory", "src_lengths")},
                           args.repeat)
    print(f"base Transformer, 2 threads, median of {args.repeat} runs")
    print(f"{'':24}{'Kiln ms':>10}{'PyTorch ms':>12}{'PyTorch/Kiln':>14}")
    print(f"{'encode B=1 S=%d' % args.src_len:24}{k_enc:10.2f}{t_enc:12.2f}{t_enc / k_enc:14.2f}")
    print(f"{'decode B=1 T=%d' % args.tgt_len:24}{k_dec:10.2f}{t_dec:12.2f}{t_dec / k_dec:14.2f}")


if __name__ == "__main__":
    main()
