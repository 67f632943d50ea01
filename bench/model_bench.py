#!/usr/bin/python3
"""Kiln, ONNX Runtime and PyTorch side by side on the base Transformer (d_model 512,
8 heads, 6 + 6 layers, d_ff 2048, vocabulary 8000, random weights), in one run, on the
same weights and inputs, fp32, 2 threads each; plus the machine's ceilings measured in the
same run: an OpenBLAS 2048^3 sgemm and a plain streaming read of the decode weights' size.

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
    print(f"\n{cpu}, {os.cpu_count()} cores, {threads} threads per engine; load average "
          f"{load_before:.1f} before, {os.getloadavg()[0]:.1f} after; "
          f"{time.time() - started:.0f} s. Medians of {args.encoder_repeat} (encoder) "
          f"and {args.greedy_repeat} (greedy) runs after one warm-up.\n")


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


def encoder_case(args, model, weights, ort, work, batch, length, pad):
    """Median ms of Kiln, ONNX Runtime and PyTorch on one encode, and their largest
    difference from PyTorch on the positions that are not padding."""
    src = torch.randint(0, CONFIG["vocab"], (batch, length))
    lens = torch.full((batch,), length - pad)
    files = {"src_ids": save_npy(work, "src_ids", src),
             "src_lengths": save_npy(work, "src_lengths", lens)}
    kiln_out = os.path.join(work, f"kiln_b{batch}")
    ms = {"Kiln": kiln_median_ms(args.kiln_run, args.model, weights, "encode", files,
                                 args.encoder_repeat, save_outputs=kiln_out)}
    with torch.no_grad():
        ms["PyTorch"] = torch_median_ms(lambda: model.encode(src, lens),
                                        args.encoder_repeat)
        reference = model.encode(src, lens)
    ort_out = os.path.join(work, "ort_memory.bin")
    ms["ORT"] = ort.run("encode", args.encoder_repeat, output=ort_out,
                        inputs=[ort.input("src_ids", src),
                                ort.input("src_lengths", lens)])["median_ms"]
    valid = reference[:, :length - pad]
    outputs = {"Kiln": np.load(os.path.join(kiln_out, "memory.npy")),
               "ORT": np.fromfile(ort_out, dtype=np.float32).reshape(reference.shape)}
    diff = {k: float((torch.from_numpy(v)[:, :length - pad] - valid).abs().max())
            for k, v in outputs.items()}
    return ms, diff


def greedy_case(args, gen, weights, ort, sources_file, src, batch):
    """Median ms per generated position of each engine, whether all generated the same
    tokens, Kiln's median decode step in ms, and ONNX Runtime's version."""
    s, lens = src[:batch], torch.full((batch,), src.shape[1])
    rate, kiln_tokens, step_ms = kiln_run(args.generate_bench, args.model, weights,
                                          sources_file, batch, args.tokens,
                                          args.greedy_repeat, "kv")
    torch_rate, torch_tokens = torch_run(gen, s, lens, args.tokens, args.greedy_repeat)
    result = ort.run("greedy", args.greedy_repeat, src_ids=ort.input("src_ids", s),
                     src_lengths=ort.input("src_lengths", lens), steps=args.tokens,
                     bos=BOS, layers=CONFIG["dec"], heads=gen.heads, dk=gen.dk)
    ms = {"Kiln": 1e3 * batch / rate, "PyTorch": 1e3 * batch / torch_rate,
          "ORT": result["median_ms"] / args.tokens}
    same = torch.equal(kiln_tokens, torch_tokens) and \
        torch.equal(kiln_tokens, torch.tensor(result["tokens"]))
    return ms, same, step_ms, result["version"]


def stream_read_gbs(binary, size, repeat):
    out = subprocess.run([binary, str(size), "--threads", "2", "--repeat", str(repeat)],
                         check=True, capture_output=True, text=True).stdout
    return float(re.search(r"median ([0-9.]+) GB/s", out).group(1))


def ratio_cells(ms, goal):
    best = min(ms["ORT"], ms["PyTorch"])
    return (f"| {ms['Kiln']:.2f} | {ms['ORT']:.2f} | {ms['PyTorch']:.2f} "
            f"| {best / ms['Kiln']:.2f}× | {ms['ORT'] / ms['Kiln']:.2f}× | {goal} ")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kiln-run", required=True)
    p.add_argument("--generate-bench", required=True)
    p.add_argument("--stream-read", required=True)
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

    enc1, diff1 = encoder_case(args, model, weights, ort, work, 1, args.src_len, args.pad)
    log(started, "encoder b1")
    enc8, diff8 = encoder_case(args, model, weights, ort, work, 8, args.src_len, 0)
    log(started, "encoder b8")
    short, diff_short = encoder_case(args, model, weights, ort, work, 1,
                                     args.short_src_len, 0)
    log(started, "encoder b1 short")

    gen = CachedGreedy(model)
    src = torch.randint(3, CONFIG["vocab"], (8, args.greedy_src_len))
    sources_file = os.path.join(work, "sources.txt")
    with open(sources_file, "w") as f:
        f.writelines(" ".join(map(str, row)) + "\n" for row in src.tolist())
    greedy1, same1, step_ms, ort_version = greedy_case(args, gen, weights, ort,
                                                       sources_file, src, 1)
    log(started, "greedy b1")
    greedy8, same8, _, _ = greedy_case(args, gen, weights, ort, sources_file, src, 8)
    log(started, "greedy b8")

    manifest = read_manifest(args.model)
    step_entry = next(e for e in manifest["entries"] if e["name"] == "decode_step")
    step_bytes = parameter_bytes_read(manifest, step_entry)
    stream = stream_read_gbs(args.stream_read, step_bytes, args.ceiling_repeat)
    sgemm = sgemm_gflops(args.ceiling_repeat)
    flops8 = encoder_flops(8, args.src_len)
    kiln_gbs = step_bytes / step_ms / 1e6

    def agree(diff):
        return f"max abs diff vs PyTorch: Kiln {diff['Kiln']:.1e}, ORT {diff['ORT']:.1e}"

    print_machine(threads, load_before, started, args)
    print(f"| case | Kiln | ONNX Runtime {ort_version} | PyTorch {torch.__version__} "
          "(OpenBLAS) | best peer ÷ Kiln "
          "| ORT ÷ Kiln | goal (best peer or ORT ÷ Kiln) | agreement |")
    print("|---|---|---|---|---|---|---|---|")
    print(f"| encoder b1 s{args.src_len} ({args.pad} padded), ms "
          f"{ratio_cells(enc1, '≥ 1.30× best peer')}| {agree(diff1)} |")
    print(f"| encoder b8 s{args.src_len}, ms {ratio_cells(enc8, '≥ 1.15× best peer')}"
          f"| {agree(diff8)} |")
    print(f"| encoder b1 s{args.short_src_len}, ms {ratio_cells(short, '')}"
          f"| {agree(diff_short)} |")
    for b, ms, same in ((1, greedy1, same1), (8, greedy8, same8)):
        print(f"| greedy b{b}, {args.tokens} tokens from {args.greedy_src_len}, ms per "
              f"position {ratio_cells(ms, '≥ 1.5× ORT' if b == 1 else '')}"
              f"| same tokens: {'yes' if same else 'NO'} |")
    print()
    print("| measure | value | goal |")
    print("|---|---|---|")
    print(f"| OpenBLAS sgemm 2048³ (torch.matmul), {threads} threads "
          f"| {sgemm:.1f} GFLOP/s | |")
    gflops = {k: flops8 / v / 1e6 for k, v in enc8.items()}
    print(f"| encoder b8 s{args.src_len} ({flops8 / 1e9:.1f} GFLOP): Kiln / ORT / "
          f"PyTorch | {gflops['Kiln']:.1f} / {gflops['ORT']:.1f} / "
          f"{gflops['PyTorch']:.1f} GFLOP/s; Kiln = {100 * gflops['Kiln'] / sgemm:.0f} % "
          "of sgemm | ≥ 85 % |")
    print(f"| streaming read of {step_bytes / 1e6:.1f} MB (bench/stream_read.cpp, C++, "
          f"{threads} threads) | {stream:.1f} GB/s | |")
    print(f"| Kiln decode_step b1: {step_bytes / 1e6:.1f} MB of weights in "
          f"{step_ms:.2f} ms (median step) | {kiln_gbs:.1f} GB/s = "
          f"{100 * kiln_gbs / stream:.0f} % of the streaming read | ≥ 80 % |")
    print(f"| kernels per decode_step (manifest) | {len(step_entry['steps'])} kernels "
          f"over {len(step_entry['buffers'])} buffers | ≤ 50 |")
    if not (same1 and same8):
        sys.exit("model_bench: the engines generated different tokens")


if __name__ == "__main__":
    main()
