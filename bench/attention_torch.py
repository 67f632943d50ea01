#!/usr/bin/env python3
"""Causal self-attention in PyTorch, the baseline of bench/attention_bench.cpp.

Same shapes as the Halide benchmark (B = 1, 8 heads, head dim 64, S = 512, 1024, 2048)
and the same graph, op by op: the causal mask built per call (as kiln.causal_mask is),
q @ k^T, scale, add the mask, softmax, @ v. Prints one JSON object per sequence length:
the median and best wall time over the timed runs, the bytes of the intermediates the
graph allocates (from their sizes: the mask and the four [8, S, S] tensors) and, with
--rss, how far the process's peak RSS rose during the first call (one process per
length, so that freed memory is not reused).

Run it as run_attention_bench.sh does, with a real BLAS:
  LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp OPENBLAS_CORETYPE=SkylakeX \
      /usr/bin/python3 bench/attention_torch.py
"""

import argparse
import json
import subprocess
import sys
import time

HEADS, HEAD_DIM = 8, 64


def attention(q, k, v):
    import torch

    s = q.shape[-2]
    mask = torch.triu(torch.full((s, s), float("-inf")), diagonal=1)
    scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / HEAD_DIM**0.5)
    weights = torch.softmax(scores + mask, dim=-1)
    return torch.matmul(weights, v)


def status_bytes(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return -1


def measure(length, runs, rss):
    import torch

    torch.set_num_threads(2)
    gen = torch.Generator().manual_seed(7)
    q, k, v = (torch.rand(1, HEADS, length, HEAD_DIM, generator=gen) * 2 - 1 for _ in range(3))
    result = {"S": length, "threads": torch.get_num_threads()}
    if rss:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        before = status_bytes("VmRSS")
        attention(q, k, v)
        result["rss_growth_bytes"] = status_bytes("VmHWM") - before
    for _ in range(3):
        attention(q, k, v)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        attention(q, k, v)
        times.append(time.perf_counter() - start)
    times.sort()
    result["median_ms"] = times[len(times) // 2] * 1e3
    result["best_ms"] = times[0] * 1e3
    result["intermediate_bytes"] = 4 * (length * length + 4 * HEADS * length * length)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[512, 1024, 2048])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--rss", action="store_true",
                        help="also measure the first call's RSS growth (one process per S)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    for length in args.lengths:
        if args.rss and not args.child:
            out = subprocess.run([sys.executable, __file__, "--child", "--rss", "--runs",
                                  str(args.runs), "--lengths", str(length)],
                                 check=True, capture_output=True, text=True).stdout
            print(out.strip(), flush=True)
        else:
            print(json.dumps(measure(length, args.runs, args.rss)), flush=True)


if __name__ == "__main__":
    main()
