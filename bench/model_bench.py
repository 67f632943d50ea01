#!/usr/bin/python3
"""Kiln, ONNX Runtime and PyTorch side by side on the base Transformer (d_model 512,
8 heads, 6 + 6 layers, d_ff 2048, vocabulary 8000, random weights), in one run, on the
same weights and inputs, fp32, 2 threads each; plus the machine's ceilings measured in the
same run: an OpenBLAS 2048^3 sgemm, the cores' FMA peak (bench/fma_peak.cpp: no product
runs faster) and a plain streaming read of the decode weights' size.

  encoder b1 s128 (16 padded positions), encoder b8 s128, and a short sentence, encoder
  b1 s16 (no goal; the form Kiln picks at run time for few rows): median ms of one encode;
  greedy, 64 tokens from a 64-token source, b1 and b8, with key/value caches: median ms
  per generated position (the whole generation, encoding included, / 64); every engine
  must generate the same tokens.

Kiln runs through kiln-run (encoder) and bench/generate_bench (KVCacheDecoder); PyTorch
is Debian's python3-torch (eval mode, its fast path on; bench/generate_torch.py's cached
greedy decoding); ONNX Runtime is onnxruntime-node on graphs bench/onnx_export.py writes
(bench/ort_bench.js). Run it through bench/run_model_bench.sh, which installs and builds
what it needs and puts PyTorch on OpenBLAS. Prints a markdown table.

The machines this runs on are shared, and their load moves by tens of percent within a
minute, so one engine timed after another can land in a different load. --rounds R
times every case R times, the engines' order rotated each round, and the ceilings once
a round; a ratio is taken within each round (the engines of one case timed back to back)
and the table shows the median over the rounds with their range.
"""
import argparse
import ctypes
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import torch

from generate_torch import BOS, CachedGreedy, kiln_run, torch_run
from onnx_export import export
from transformer_latency import kiln_median_ms, torch_median_ms

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "test", "conformance"))
from make_reference import CONFIGS, Translator, write_safetensors  # noqa: E402

CONFIG = CONFIGS["base"]
DTYPE_BYTES = {"f32": 4, "i32": 4, "i64": 8, "bf16": 2, "f16": 2, "i8": 1}


def log(started, what):
    print(f"model_bench: {what} ({time.time() - started:.0f} s)", file=sys.stderr,
          flush=True)


def start_run(threads=2):
    """Sets PyTorch up as every engine runs (threads, seed; the nested-tensor prototype
    warning of eval()'s encoder fast path, PyTorch's fastest, silenced) and returns
    (threads, load average before, start time)."""
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    warnings.filterwarnings("ignore", message=".*nested tensors.*")
    return threads, os.getloadavg()[0], time.time()


def print_machine(threads, load_before, started, args):
    """The line under which a run's tables are read: the CPU, the load, the repeats."""
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), platform.processor())
    rounds = (f"{args.rounds} rounds, the engines' order rotated each round; in each, "
              if args.rounds > 1 else "")
    print(f"\n{cpu}, {os.cpu_count()} cores, {threads} threads per engine; load average "
          f"{load_before:.1f} before, {os.getloadavg()[0]:.1f} after; "
          f"{time.time() - started:.0f} s. {rounds}medians of {args.encoder_repeat} "
          f"(encoder) and {args.greedy_repeat} (greedy) runs after one warm-up.\n")


ENGINES = ("Kiln", "ORT", "PyTorch")


def rotated(round_index):
    """The engines in the order of one round: each goes first in turn."""
    k = round_index % len(ENGINES)
    return ENGINES[k:] + ENGINES[:k]


def median(values):
    return float(np.median(values))


def spread(values, fmt, unit=""):
    """A median over rounds, with the rounds' range when there are several."""
    text = format(median(values), fmt) + unit
    if len(values) > 1:
        text += f" ({format(min(values), fmt)}–{format(max(values), fmt)})"
    return text


def read_manifest(model_so):
    lib = ctypes.CDLL(os.path.abspath(model_so))
    lib.kiln_model_manifest.restype = ctypes.c_char_p
    return json.loads(lib.kiln_model_manifest())


def parameter_bytes_read(manifest, entry):
    """Bytes of weights the steps of an entry read: the union, per parameter, of the
    element ranges that its steps' arguments (the parameter or views of it) cover. An
    embedding gather reads only its ids' rows (a few KB), not its table: where the table
    is also the tied output projection's weight, that product reads it whole, and at a
    reduced precision the projection reads a converted copy while the gather reads the
    f32 table."""
    buffers = entry["buffers"]
    spans = {}
    for step in entry["steps"]:
        # An embedding's own kernel, or a group that gathers (Plan.cpp names both).
        if re.search(r"_embedding(_checked)?$", manifest["kernels"][step["kernel"]]):
            continue
        for arg in step["args"]:
            chain = [buffers[arg]]
            while chain[-1]["kind"] == "view":
                chain.append(buffers[chain[-1]["view_of"]])
            root = chain[-1]
            if root["kind"] != "parameter":
                continue
            # A parameter's views have static shapes, offsets and strides.
            offset = sum(int(view.get("offset", 0)) for view in chain[:-1])
            shape, strides = chain[0]["shape"], chain[0].get("strides")
            extent = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if strides \
                else int(np.prod(shape))
            spans.setdefault(root["parameter"], []).append((offset, offset + extent))
    total = 0
    for index, ranges in spans.items():
        end = 0
        for lo, hi in sorted(ranges):
            total += max(0, hi - max(lo, end)) * DTYPE_BYTES[
                manifest["parameters"][index]["dtype"]]
            end = max(end, hi)
    return total


def encoder_flops(batch, length):
    """Multiply-adds x 2 of the encoder's matrix products: q, k, v and output
    projections, the feed-forward pair, and attention's two products over all
    positions."""
    d, ff = CONFIG["d_model"], CONFIG["d_ff"]
    projections = 2 * batch * length * (4 * d * d + 2 * d * ff)
    return CONFIG["enc"] * (projections + 4 * batch * length ** 2 * d)


def sgemm_gflops(repeat, n=2048):
    a, b = torch.randn(n, n), torch.randn(n, n)
    return 2 * n ** 3 / torch_median_ms(lambda: torch.matmul(a, b), repeat) / 1e6


class Ort:
    """Runs bench/ort_bench.js on jobs in the work directory."""

    def __init__(self, script, work, threads):
        self.script, self.work, self.threads = script, work, threads

    def run(self, case, repeat, **job):
        path = os.path.join(self.work, f"ort_{case}.json")
        with open(path, "w") as f:
            json.dump({"case": case, "repeat": repeat, "threads": self.threads,
                       "dir": self.work, **job}, f)
        return json.loads(subprocess.run(["node", self.script, path], check=True,
                                         capture_output=True, text=True).stdout)

    def input(self, name, tensor):
        """Writes an int64 tensor for a job and returns its description."""
        file = name + ".bin"
        tensor.numpy().astype(np.int64).tofile(os.path.join(self.work, file))
        return {"name": name, "dtype": "int64", "shape": list(tensor.shape), "file": file}


def save_npy(work, name, tensor):
    path = os.path.join(work, name + ".npy")
    np.save(path, tensor.int().numpy())
    return path


class EncoderCase:
    """One encode of fresh random ids, timed per engine; each engine's largest
    difference from PyTorch on the positions that are not padding, over all runs."""

    def __init__(self, args, model, weights, ort, work, batch, length, pad):
        self.args, self.model, self.weights, self.ort = args, model, weights, ort
        self.work, self.batch, self.valid = work, batch, length - pad
        self.name = f"b{batch}_s{length}"
        self.src = torch.randint(0, CONFIG["vocab"], (batch, length))
        self.lens = torch.full((batch,), length - pad)
        self.files = {"src_ids": save_npy(work, f"src_ids_{self.name}", self.src),
                      "src_lengths": save_npy(work, f"src_lengths_{self.name}", self.lens)}
        with torch.no_grad():
            self.reference = self.model.encode(self.src, self.lens)[:, :self.valid]
        self.diff = {"Kiln": 0.0, "ORT": 0.0}

    def time(self, engine):
        """Median ms of one encode by `engine`."""
        args, repeat = self.args, self.args.encoder_repeat
        if engine == "Kiln":
            out = os.path.join(self.work, f"kiln_{self.name}")
            ms = kiln_median_ms(args.kiln_run, args.model, self.weights, "encode",
                                self.files, repeat, save_outputs=out)
            self.agree(engine, np.load(os.path.join(out, "memory.npy")))
            return ms
        if engine == "PyTorch":
            with torch.no_grad():
                return torch_median_ms(lambda: self.model.encode(self.src, self.lens),
                                       repeat)
        out = os.path.join(self.work, "ort_memory.bin")
        result = self.ort.run("encode", repeat, output=out,
                              inputs=[self.ort.input("src_ids", self.src),
                                      self.ort.input("src_lengths", self.lens)])
        self.agree(engine, np.fromfile(out, dtype=np.float32).reshape(
            self.batch, -1, CONFIG["d_model"]))
        return result["median_ms"]

    def agree(self, engine, output):
        valid = torch.from_numpy(output)[:, :self.valid]
        diff = float((valid - self.reference).abs().max())
        self.diff[engine] = max(self.diff[engine], diff)


class GreedyCase:
    """Greedy generation from the first `batch` sources, timed per engine in ms per
    generated position; whether every run of every engine generated the same tokens,
    Kiln's decode steps (median ms of each run) and ONNX Runtime's version."""

    def __init__(self, args, gen, weights, ort, sources_file, src, batch):
        self.args, self.gen, self.weights, self.ort = args, gen, weights, ort
        self.sources_file, self.batch = sources_file, batch
        self.src, self.lens = src[:batch], torch.full((batch,), src.shape[1])
        self.tokens, self.same, self.step_ms, self.version = None, True, [], None

    def time(self, engine):
        args, batch = self.args, self.batch
        if engine == "Kiln":
            rate, tokens, step_ms = kiln_run(args.generate_bench, args.model,
                                             self.weights, self.sources_file, batch,
                                             args.tokens, args.greedy_repeat, "kv")
            self.step_ms.append(step_ms)
        elif engine == "PyTorch":
            rate, tokens = torch_run(self.gen, self.src, self.lens, args.tokens,
                                     args.greedy_repeat)
        else:
            result = self.ort.run("greedy", args.greedy_repeat,
                                  src_ids=self.ort.input("src_ids", self.src),
                                  src_lengths=self.ort.input("src_lengths", self.lens),
                                  steps=args.tokens, bos=BOS, layers=CONFIG["dec"],
                                  heads=self.gen.heads, dk=self.gen.dk)
            self.version = result["version"]
            self.compare(torch.tensor(result["tokens"]))
            return result["median_ms"] / args.tokens
        self.compare(tokens)
        return 1e3 * batch / rate

    def compare(self, tokens):
        if self.tokens is None:
            self.tokens = tokens
        self.same = self.same and torch.equal(self.tokens, tokens)


def ceiling_tool(command, repeat, unit):
    """The median that a C++ ceiling tool (bench/stream_read.cpp, bench/fma_peak.cpp)
    prints for `command` on 2 threads, in `unit`."""
    out = subprocess.run(command + ["--threads", "2", "--repeat", str(repeat)],
                         check=True, capture_output=True, text=True).stdout
    return float(re.search(rf"median ([0-9.]+) {unit}", out).group(1))


def ratio_cells(rounds, goal):
    """Table cells of one case from its rounds (each a dict of engine -> ms): the
    engines' median ms, then the ratios taken within each round."""
    ms = {e: [r[e] for r in rounds] for e in ENGINES}
    best = [min(r["ORT"], r["PyTorch"]) / r["Kiln"] for r in rounds]
    ort = [r["ORT"] / r["Kiln"] for r in rounds]
    return (f"| {median(ms['Kiln']):.2f} | {median(ms['ORT']):.2f} "
            f"| {median(ms['PyTorch']):.2f} | {spread(best, '.2f', '×')} "
            f"| {spread(ort, '.2f', '×')} | {goal} ")


def run_rounds(args, started, cases, ceilings):
    """Times every case's engines in each round, the order rotated, and the ceilings
    after them; returns, per case name, the rounds' dicts of engine -> ms, and per
    ceiling its value in each round."""
    times = {name: [] for name in cases}
    values = {name: [] for name in ceilings}
    for r in range(args.rounds):
        for name, case in cases.items():
            times[name].append({e: case.time(e) for e in rotated(r)})
            log(started, f"round {r + 1}: {name}")
        for name, measure in ceilings.items():
            values[name].append(measure())
    return times, values


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kiln-run", required=True)
    p.add_argument("--generate-bench", required=True)
    p.add_argument("--stream-read", required=True)
    p.add_argument("--fma-peak", required=True)
    p.add_argument("--model", required=True, help="transformer_base.so")
    p.add_argument("--work", help="keep the weights, graphs and inputs in this directory "
                   "(default: a temporary one, removed at the end)")
    p.add_argument("--encoder-repeat", type=int, default=11)
    p.add_argument("--greedy-repeat", type=int, default=5)
    p.add_argument("--ceiling-repeat", type=int, default=11)
    p.add_argument("--src-len", type=int, default=128, help="encoder cases")
    p.add_argument("--pad", type=int, default=16, help="padded positions, encoder b1")
    p.add_argument("--short-src-len", type=int, default=16,
                   help="the short encoder case, b1")
    p.add_argument("--greedy-src-len", type=int, default=64)
    p.add_argument("--tokens", type=int, default=64)
    p.add_argument("--rounds", type=int, default=3,
                   help="times every case, the engines' order rotated each round")
    args = p.parse_args()
    threads, load_before, started = start_run()

    model = Translator(CONFIG).eval()
    # About 420 MB of weights and graphs: kept only where --work asks for it.
    scratch = None if args.work else \
        tempfile.TemporaryDirectory(prefix="kiln-model-bench-")
    work = args.work or scratch.name
    os.makedirs(work, exist_ok=True)
    weights = os.path.join(work, "weights.safetensors")
    write_safetensors(weights, model.state_dict())
    export(model, work, args.tokens)
    log(started, f"weights and ONNX graphs in {work}")
    ort = Ort(os.path.join(os.path.dirname(os.path.abspath(__file__)), "ort_bench.js"),
              work, threads)

    src_len, short_len = args.src_len, args.short_src_len
    gen = CachedGreedy(model)
    src = torch.randint(3, CONFIG["vocab"], (8, args.greedy_src_len))
    sources_file = os.path.join(work, "sources.txt")
    with open(sources_file, "w") as f:
        f.writelines(" ".join(map(str, row)) + "\n" for row in src.tolist())
    cases = {
        "enc1": EncoderCase(args, model, weights, ort, work, 1, src_len, args.pad),
        "enc8": EncoderCase(args, model, weights, ort, work, 8, src_len, 0),
        "short": EncoderCase(args, model, weights, ort, work, 1, short_len, 0),
        "greedy1": GreedyCase(args, gen, weights, ort, sources_file, src, 1),
        "greedy8": GreedyCase(args, gen, weights, ort, sources_file, src, 8),
    }
    manifest = read_manifest(args.model)
    step_entry = next(e for e in manifest["entries"] if e["name"] == "decode_step")
    step_bytes = parameter_bytes_read(manifest, step_entry)
    ceilings = {
        "stream": lambda: ceiling_tool([args.stream_read, str(step_bytes)],
                                       args.ceiling_repeat, "GB/s"),
        "sgemm": lambda: sgemm_gflops(args.ceiling_repeat),
        "fma": lambda: ceiling_tool([args.fma_peak], args.ceiling_repeat, "GFLOP/s"),
    }
    times, ceiling = run_rounds(args, started, cases, ceilings)
    flops8 = encoder_flops(8, src_len)

    def agree(case):
        diff = cases[case].diff
        return f"max abs diff vs PyTorch: Kiln {diff['Kiln']:.1e}, ORT {diff['ORT']:.1e}"

    print_machine(threads, load_before, started, args)
    print(f"| case | Kiln | ONNX Runtime {cases['greedy1'].version} | PyTorch "
          f"{torch.__version__} (OpenBLAS) | best peer ÷ Kiln "
          "| ORT ÷ Kiln | goal (best peer or ORT ÷ Kiln) | agreement |")
    print("|---|---|---|---|---|---|---|---|")
    print(f"| encoder b1 s{src_len} ({args.pad} padded), ms "
          f"{ratio_cells(times['enc1'], '≥ 1.30× best peer')}| {agree('enc1')} |")
    print(f"| encoder b8 s{src_len}, ms "
          f"{ratio_cells(times['enc8'], '≥ 1.15× best peer')}| {agree('enc8')} |")
    print(f"| encoder b1 s{short_len}, ms {ratio_cells(times['short'], '')}"
          f"| {agree('short')} |")
    for b in (1, 8):
        case, goal = cases[f"greedy{b}"], "≥ 1.5× ORT" if b == 1 else ""
        print(f"| greedy b{b}, {args.tokens} tokens from {args.greedy_src_len}, ms per "
              f"position {ratio_cells(times[f'greedy{b}'], goal)}"
              f"| same tokens: {'yes' if case.same else 'NO'} |")
    print()
    sgemm = ceiling["sgemm"]
    kiln_gflops = [flops8 / r["Kiln"] / 1e6 for r in times["enc8"]]
    share = [100 * g / c for g, c in zip(kiln_gflops, sgemm)]
    peers = {e: median([flops8 / r[e] / 1e6 for r in times["enc8"]]) for e in ENGINES}
    fma = ceiling["fma"]
    fma_share = {e: [100 * flops8 / r[e] / 1e6 / c for r, c in zip(times["enc8"], fma)]
                 for e in ENGINES}
    stream = ceiling["stream"]
    step_ms = cases["greedy1"].step_ms
    kiln_gbs = [step_bytes / ms / 1e6 for ms in step_ms]
    stream_share = [100 * g / c for g, c in zip(kiln_gbs, stream)]
    print("| measure | value | goal |")
    print("|---|---|---|")
    print(f"| OpenBLAS sgemm 2048³ (torch.matmul), {threads} threads "
          f"| {spread(sgemm, '.1f')} GFLOP/s | |")
    print(f"| encoder b8 s{src_len} ({flops8 / 1e9:.1f} GFLOP): Kiln / ORT / "
          f"PyTorch | {peers['Kiln']:.1f} / {peers['ORT']:.1f} / "
          f"{peers['PyTorch']:.1f} GFLOP/s; Kiln = {spread(share, '.0f', ' %')} "
          "of sgemm | ≥ 85 % |")
    print(f"| FMA peak (bench/fma_peak.cpp, independent FMAs, {threads} threads) "
          f"| {spread(fma, '.1f')} GFLOP/s; encoder b8: Kiln "
          f"{spread(fma_share['Kiln'], '.0f', ' %')}, ORT "
          f"{spread(fma_share['ORT'], '.0f', ' %')}, PyTorch "
          f"{spread(fma_share['PyTorch'], '.0f', ' %')} of it | |")
    print(f"| streaming read of {step_bytes / 1e6:.1f} MB (bench/stream_read.cpp, C++, "
          f"{threads} threads) | {spread(stream, '.1f')} GB/s | |")
    print(f"| Kiln decode_step b1: {step_bytes / 1e6:.1f} MB of weights in "
          f"{median(step_ms):.2f} ms (median step) | {spread(kiln_gbs, '.1f')} GB/s = "
          f"{spread(stream_share, '.0f', ' %')} of the streaming read | ≥ 80 % |")
    print(f"| kernels per decode_step (manifest) | {len(step_entry['steps'])} kernels "
          f"over {len(step_entry['buffers'])} buffers | ≤ 50 |")
    if not (cases["greedy1"].same and cases["greedy8"].same):
        sys.exit("model_bench: the engines generated different tokens")


if __name__ == "__main__":
    main()
