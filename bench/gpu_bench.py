#!/usr/bin/python3
"""Kiln on a GPU against PyTorch on the same GPU, fp32 (issue 12, item 5), side by side
in one run, medians, on the same weights and inputs; run it through
bench/run_gpu_bench.sh, which runs it from a bundle of tools/make-gpu-bundle.sh.

  encoder b1/b8/b64 s128 (ms per encode, output read back);
  greedy, 64 tokens from a 64-token source, b1 and b8, with KV caches (tokens/s, the
      whole generation, encoding included);
  causal attention, B = 1, 8 heads, head dim 64, L = 512 ... 8192, against
      torch.nn.functional.scaled_dot_product_attention;
  each matrix product of the base Transformer (a linear layer: product and bias), at
      the rows (M) of the cases above, against torch.nn.functional.linear (one cuBLAS
      product with its bias), in GFLOP/s.

PyTorch runs once with TF32 off (the fp32 baseline of the goals) and once with it on
(torch.backends.cuda.matmul.fp32_precision "ieee" or "tf32"; before PyTorch 2.9,
torch.set_float32_matmul_precision "highest" or "high"); Kiln's products are fp32 on the
CUDA cores either way (Halide 14 has no tensor-core code).

Timing. Kiln: a run as a user sees it, through kiln-run --repeat (outputs read back;
the first run, which loads the kernels, is one of the repetitions) and generate_bench
(each step reads its logits back). PyTorch: the same work timed on the host until its
result is on the CPU (.cpu() waits for the GPU); for attention and the products also the
PyTorch kernel alone, between CUDA events. The attention and product models
(bench/attention_model.cpp, matmul_model.cpp) gather their operands from tables by
row ids and return row sums, so that no large tensor crosses the bus in a timed run;
PyTorch's like-for-like timing also sums the rows and reads them back.

--device cpu runs the same cases on the CPU (a bundle made with KILN_GPU_TARGET=host)
to check the plumbing where there is no GPU; PyTorch without scaled_dot_product_attention
(before 2.0) then runs attention as explicit math (bench/attention_torch.py), and the
table says so. --quick shrinks every case to seconds. Prints markdown tables, each as
soon as its cases are done; progress goes to stderr. A case that fails (a Kiln tool's
error, say) is a row with the error, the others still run, and the exit status is 1.
"""
import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import torch

from attention_torch import HEAD_DIM, HEADS
from attention_torch import attention as explicit_attention
from generate_torch import CachedGreedy, kiln_run, torch_run
from transformer_latency import kiln_median_ms, torch_median_ms

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "test", "conformance"))
from make_reference import CONFIGS, Translator, write_safetensors  # noqa: E402

CONFIG = CONFIGS["base"]
TABLE_ROWS = 4096  # the tables of attention_model.cpp and matmul_model.cpp
NO_SDPA = ("explicit math (bench/attention_torch.py: this PyTorch has no "
           "scaled_dot_product_attention)")

# (K, N, what it is) of matmul_model.cpp's entries, with the rows M each has in the
# encoder and greedy cases: the encoder's B x 128 positions (b1, b8, b64), a decode
# step's B rows (b1, b8), decode_start's B x 64 source positions.
ENCODER_M, STEP_M = (128, 1024, 8192), (1, 8)
MATMULS = [(512, 1536, "self-attention q/k/v", STEP_M + ENCODER_M),
           (512, 512, "attention output, cross q", STEP_M + ENCODER_M),
           (512, 1024, "cross-attention k/v", (64, 512)),
           (512, 2048, "feed-forward in", STEP_M + ENCODER_M),
           (2048, 512, "feed-forward out", STEP_M + ENCODER_M),
           (512, 8000, "logits", STEP_M)]

FULL = dict(encoder_batches=(1, 8, 64), src_len=128, greedy_batches=(1, 8), tokens=64,
            greedy_src_len=64, lengths=(512, 1024, 2048, 4096, 8192), repeat=11,
            greedy_repeat=5, rows=None)
QUICK = dict(encoder_batches=(1, 2), src_len=16, greedy_batches=(1, 2), tokens=4,
             greedy_src_len=8, lengths=(64, 128), repeat=3, greedy_repeat=3,
             rows=(1, 64))


def log(what):
    print(f"gpu_bench: {what}", file=sys.stderr, flush=True)


def precisions(device):
    """(column label, TF32 on) of each PyTorch run."""
    if device == "cuda":
        return (("TF32 off", False), ("TF32 on", True))
    return (("fp32", False),)


def set_tf32(on):
    """PyTorch 2.9 made torch.backends.cuda.matmul.fp32_precision the switch, and mixing
    it with the older API is an error, so only one of them is used."""
    if tuple(map(int, re.match(r"(\d+)\.(\d+)", torch.__version__).groups())) >= (2, 9):
        torch.backends.cuda.matmul.fp32_precision = "tf32" if on else "ieee"
    else:
        torch.set_float32_matmul_precision("high" if on else "highest")


def kernel_ms(fn, repeat, device):
    """Median ms of fn's GPU work between CUDA events, calls queued back to back (no
    host wait between them); on the CPU, its wall time."""
    if device != "cuda":
        return torch_median_ms(fn, repeat)
    fn()
    events = []
    for _ in range(repeat):
        start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
        start.record()
        fn()
        end.record()
        events.append((start, end))
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in events)


def gflops(flop, ms):
    rate = flop / ms / 1e6
    return f"{rate:.0f}" if rate >= 100 else f"{rate:.2g}"


def max_rel_diff(kiln, reference):
    reference = reference.double()
    return float((torch.from_numpy(kiln).double() - reference).abs().max() /
                 reference.abs().max())


def save_npy(work, name, tensor):
    path = os.path.join(work, name + ".npy")
    np.save(path, tensor.int().numpy())
    return path


class Table:
    """A markdown table printed as soon as all its rows are in; a case that failed is
    one row naming the error, and the others still run."""

    failed = []  # "table: case" of every case that failed, in every table

    def __init__(self, title, header):
        self.title, self.header, self.rows = title, header, []

    def case(self, label, fn):
        try:
            self.rows.append([label] + [str(c) for c in fn()])
        except Exception as e:  # one failed case must not lose the others' figures
            if isinstance(e, subprocess.CalledProcessError):  # Kiln's tools: say why
                e = f"{os.path.basename(e.cmd[0])} failed: {e.stderr or e.stdout}"
            message = " ".join(str(e).split())[:300].replace("|", "/")
            log(f"{self.title}, {label}: error: {message}")
            Table.failed.append(f"{self.title.split(',')[0]}: {label}")
            self.rows.append([label, f"error: {message}"] +
                             [""] * (len(self.header) - 2))

    def print(self):
        print(f"\n{self.title}\n")
        print("| " + " | ".join(self.header) + " |")
        print("|" + "---|" * len(self.header))
        for row in self.rows:
            print("| " + " | ".join(row) + " |")
        sys.stdout.flush()


class Bench:
    def __init__(self, args, sizes, work):
        self.args, self.sizes, self.work = args, sizes, work
        self.device = args.device
        self.precisions = precisions(args.device)
        bundle = args.bundle
        self.kiln_run = os.path.join(bundle, "bin", "kiln-run")
        self.generate_bench = os.path.join(bundle, "bin", "generate_bench")
        self.models = {name: os.path.join(bundle, "models", name + "_cuda.so")
                       for name in ("transformer_base", "attention_causal",
                                    "matmul_shapes")}

    def to(self, tensor):
        return tensor.to(self.device)

    def per_precision(self, fn):
        """fn() under each PyTorch precision, in precisions() order (TF32 off first);
        then TF32 off again, the fp32 baseline that what follows runs with."""
        results = []
        for _, tf32 in self.precisions:
            set_tf32(tf32)
            results.append(fn())
        set_tf32(False)
        return results

    def alone(self):
        """How a PyTorch kernel alone is timed."""
        return "between CUDA events" if self.device == "cuda" else "wall time"

    def columns(self, what):
        return [f"{what} ({label})" for label, _ in self.precisions]

    def kiln_ms(self, model, weights, entry, inputs, outputs=None):
        return kiln_median_ms(self.kiln_run, self.models[model], weights, entry, inputs,
                              self.sizes["repeat"], save_outputs=outputs)

    def encoder(self, model, weights):
        s = self.sizes
        table = Table(
            f"Encoder, base Transformer, s{s['src_len']} (no padding): median ms of one "
            "encode, its output read back",
            ["case", "Kiln ms"] + self.columns("PyTorch ms") +
            self.columns("PyTorch ÷ Kiln") + ["goal", "max abs diff vs PyTorch"])

        def run(batch):
            src = torch.randint(0, CONFIG["vocab"], (batch, s["src_len"]))
            lens = torch.full((batch,), s["src_len"])
            files = {"src_ids": save_npy(self.work, "src_ids", src),
                     "src_lengths": save_npy(self.work, "src_lengths", lens)}
            out = os.path.join(self.work, f"encode_b{batch}")
            kiln = self.kiln_ms("transformer_base", weights, "encode", files, out)
            src, lens = self.to(src), self.to(lens)
            with torch.no_grad():
                ms = self.per_precision(lambda: torch_median_ms(
                    lambda: model.encode(src, lens).cpu(), s["repeat"]))
                reference = model.encode(src, lens).cpu()
            diff = (torch.from_numpy(np.load(os.path.join(out, "memory.npy"))) -
                    reference).abs().max()
            goal = "≥ 0.8× PyTorch (TF32 off)" if batch == 8 else ""
            return ([f"{kiln:.2f}"] + [f"{m:.2f}" for m in ms] +
                    [f"{m / kiln:.2f}×" for m in ms] + [goal, f"{float(diff):.1e}"])

        for batch in s["encoder_batches"]:
            table.case(f"encoder b{batch}", lambda: run(batch))
            log(f"encoder b{batch}")
        table.print()

    def greedy(self, model, weights):
        s = self.sizes
        table = Table(
            f"Greedy decoding with KV caches, {s['tokens']} tokens from a "
            f"{s['greedy_src_len']}-token source: median tokens/s of the whole "
            "generation, encoding included",
            ["case", "Kiln tokens/s", "Kiln step ms"] + self.columns("PyTorch tokens/s") +
            self.columns("Kiln ÷ PyTorch") + ["goal", "same tokens as PyTorch"])
        gen = CachedGreedy(model)
        batches = s["greedy_batches"]
        src = torch.randint(3, CONFIG["vocab"], (max(batches), s["greedy_src_len"]))
        sources = os.path.join(self.work, "sources.txt")
        with open(sources, "w") as f:
            f.writelines(" ".join(map(str, row)) + "\n" for row in src.tolist())

        def run(batch):
            rate, tokens, step_ms = kiln_run(self.generate_bench, self.models[
                "transformer_base"], weights, sources, batch, s["tokens"],
                s["greedy_repeat"], "kv")
            rows, lens = self.to(src[:batch]), self.to(torch.full((batch,), src.shape[1]))
            runs = self.per_precision(
                lambda: torch_run(gen, rows, lens, s["tokens"], s["greedy_repeat"]))
            rates = [r for r, _ in runs]
            same = torch.equal(tokens, runs[0][1])
            goal = "≥ 2× PyTorch" if batch == 1 else ""
            return ([f"{rate:.1f}", f"{step_ms:.3f}"] + [f"{r:.1f}" for r in rates] +
                    [f"{rate / r:.2f}×" for r in rates] +
                    [goal, "yes" if same else "no"])

        for batch in batches:
            table.case(f"greedy b{batch}", lambda: run(batch))
            log(f"greedy b{batch}")
        table.print()

    def attention(self):
        s = self.sizes
        sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)
        name = "SDPA" if sdpa else "explicit math"
        table = Table(
            f"Causal attention, B = 1, {HEADS} heads, head dim {HEAD_DIM}, median ms. "
            "Kiln: one run of bench/attention_model.cpp (q, k, v gathered by row ids, "
            "attention, row sums read back); PyTorch like for like: "
            f"{'scaled_dot_product_attention' if sdpa else NO_SDPA} on q, k, v already "
            f"on the device, row sums read back; {name} alone: {self.alone()}",
            ["L", "Kiln ms"] + self.columns("PyTorch ms") +
            self.columns(f"{name} alone ms") + self.columns("PyTorch ÷ Kiln") +
            self.columns(f"{name} alone ÷ Kiln") + ["goal", "max rel diff vs PyTorch"])
        tables = {n: torch.rand(TABLE_ROWS, HEAD_DIM) * 2 - 1
                  for n in ("q_table", "k_table", "v_table")}
        weights = os.path.join(self.work, "attention.safetensors")
        write_safetensors(weights, tables)

        def attend(q, k, v):
            return sdpa(q, k, v, is_causal=True) if sdpa else explicit_attention(q, k, v)

        def run(length):
            ids = torch.randint(0, TABLE_ROWS, (1, HEADS, length), dtype=torch.int32)
            out = os.path.join(self.work, f"attention_{length}")
            kiln = self.kiln_ms("attention_causal", weights, "forward",
                                {"ids": save_npy(self.work, "ids", ids)}, out)
            q, k, v = (self.to(tables[n][ids.long()]) for n in ("q_table", "k_table",
                                                                "v_table"))
            with torch.no_grad():
                user = self.per_precision(lambda: torch_median_ms(
                    lambda: attend(q, k, v).sum(-1).cpu(), s["repeat"]))
                alone = self.per_precision(
                    lambda: kernel_ms(lambda: attend(q, k, v), s["repeat"], self.device))
                reference = attend(q, k, v).sum(-1).cpu()
            diff = max_rel_diff(np.load(os.path.join(out, "row_sums.npy")), reference)
            goal = "≥ 1× SDPA alone (TF32 off)" if length >= 2048 else ""
            return ([f"{kiln:.3f}"] + [f"{m:.3f}" for m in user + alone] +
                    [f"{m / kiln:.2f}×" for m in user + alone] + [goal, f"{diff:.1e}"])

        for length in s["lengths"]:
            table.case(str(length), lambda: run(length))
            log(f"attention L={length}")
        table.print()

    def matmuls(self):
        s = self.sizes
        table = Table(
            "Matrix products of the base Transformer: linear layers, x [M, K] times a "
            "weight stored [N, K] plus a bias, fp32, median. Kiln: one run of "
            "bench/matmul_model.cpp (x gathered by row ids, its kiln.linear kernel, row "
            "sums read back), GFLOP/s from that run's time; PyTorch like for like: "
            "torch.nn.functional.linear (one cuBLAS product with the bias) on x already "
            f"on the device, row sums read back; linear alone: {self.alone()}",
            ["M × K × N", "product", "Kiln ms", "Kiln GFLOP/s"] +
            self.columns("PyTorch ms") + self.columns("linear alone GFLOP/s") +
            self.columns("PyTorch ÷ Kiln") + ["max rel diff vs PyTorch"])
        tensors = {}
        for k, n, _, _ in MATMULS:
            tensors.setdefault(f"table_k{k}", torch.rand(TABLE_ROWS, k) * 2 - 1)
            tensors[f"k{k}_n{n}.weight"] = (torch.rand(n, k) * 2 - 1) / k ** 0.5
            tensors[f"k{k}_n{n}.bias"] = torch.rand(n) * 2 - 1
        weights = os.path.join(self.work, "matmul.safetensors")
        write_safetensors(weights, tensors)

        def run(m, k, n):
            ids = torch.randint(0, TABLE_ROWS, (m,), dtype=torch.int32)
            out = os.path.join(self.work, f"matmul_{m}_{k}_{n}")
            kiln = self.kiln_ms("matmul_shapes", weights, f"k{k}_n{n}",
                                {"ids": save_npy(self.work, "ids", ids)}, out)
            x = self.to(tensors[f"table_k{k}"][ids.long()])
            w, b = (self.to(tensors[f"k{k}_n{n}.{p}"]) for p in ("weight", "bias"))

            def linear():
                return torch.nn.functional.linear(x, w, b)

            with torch.no_grad():
                user = self.per_precision(lambda: torch_median_ms(
                    lambda: linear().sum(1).cpu(), s["repeat"]))
                alone = self.per_precision(
                    lambda: kernel_ms(linear, s["repeat"], self.device))
                reference = linear().sum(1).cpu()
            flop = 2 * m * k * n
            diff = max_rel_diff(np.load(os.path.join(out, "row_sums.npy")), reference)
            return ([f"{kiln:.3f}", gflops(flop, kiln)] + [f"{u:.3f}" for u in user] +
                    [gflops(flop, a) for a in alone] +
                    [f"{u / kiln:.2f}×" for u in user] + [f"{diff:.1e}"])

        for k, n, use, rows in MATMULS:
            for m in s["rows"] or rows:
                table.case(f"{m} × {k} × {n}", lambda: [use] + run(m, k, n))
            log(f"matmul {k} x {n}")
        table.print()


def describe(args):
    if args.device == "cuda":
        gpu = torch.cuda.get_device_name()
        runtime = f"CUDA {torch.version.cuda}"
    else:
        gpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                    if line.startswith("model name")), platform.processor())
        runtime = f"{torch.get_num_threads()} threads"
    listing = subprocess.run([os.path.join(args.bundle, "bin", "kiln-run"),
                              os.path.join(args.bundle, "models",
                                           "transformer_base_cuda.so"), "--list"],
                             capture_output=True, text=True).stdout.splitlines()
    target = next((line for line in listing if line.startswith("model ")), "?")
    return f"{gpu}; PyTorch {torch.__version__}, {runtime}; Kiln {target}"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("bundle", help="the directory tools/make-gpu-bundle.sh made")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--quick", action="store_true", help="tiny sizes: a plumbing check")
    p.add_argument("--only", default="greedy,attention,encoder,matmul",
                   help="the sections to run, comma-separated, in this order")
    p.add_argument("--work", help="keep weights and inputs here (default: a temporary "
                   "directory, removed at the end)")
    args = p.parse_args()
    sizes = QUICK if args.quick else FULL
    sections = args.only.split(",")
    for section in sections:
        if section not in ("greedy", "attention", "encoder", "matmul"):
            sys.exit(f"gpu_bench: --only: no section '{section}' (greedy, attention, "
                     "encoder, matmul)")
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("gpu_bench: PyTorch sees no CUDA device (--device cpu checks the "
                 "plumbing on a CPU bundle)")
    if args.device == "cpu":
        torch.set_num_threads(2)
    torch.manual_seed(0)
    set_tf32(False)
    warnings.filterwarnings("ignore", message=".*nested tensors.*")
    started = time.time()
    scratch = None if args.work else \
        tempfile.TemporaryDirectory(prefix="kiln-gpu-bench-")
    work = args.work or scratch.name
    os.makedirs(work, exist_ok=True)
    bench = Bench(args, sizes, work)

    quick = " --quick (tiny sizes: a plumbing check, not a measurement)" \
        if args.quick else ""
    print(f"{describe(args)}. Medians of {sizes['repeat']} runs "
          f"({sizes['greedy_repeat']} for greedy), one run of bench/run_gpu_bench.sh"
          f"{quick}.")
    model = weights = None
    if {"encoder", "greedy"} & set(sections):
        model = Translator(CONFIG).eval()
        weights = os.path.join(work, "weights.safetensors")
        write_safetensors(weights, model.state_dict())
        model = model.to(args.device)
        log(f"base Transformer weights in {weights} ({time.time() - started:.0f} s)")
    for section in sections:
        if section == "encoder":
            bench.encoder(model, weights)
        elif section == "greedy":
            bench.greedy(model, weights)
        elif section == "attention":
            bench.attention()
        else:
            bench.matmuls()
    log(f"done in {time.time() - started:.0f} s")
    if Table.failed:
        sys.exit(f"gpu_bench: {len(Table.failed)} cases failed (their rows say why): "
                 + "; ".join(Table.failed))


if __name__ == "__main__":
    main()
