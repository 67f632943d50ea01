#!/usr/bin/env bash
# Fused vs unfused Halide attention (bench/attention_bench.cpp) and PyTorch
# (bench/attention_torch.py), causal, B = 1, 8 heads, head dim 64, S = 512, 1024, 2048,
# printed as one table. Builds attention_bench in build-bench (Release, benchmarks on,
# tests off) unless BUILD_DIR names another build with -DKILN_BUILD_BENCHMARKS=ON.
# Both sides use 2 threads. The peak-RSS columns come from one fresh process per
# (path, S), so that no run reuses memory another freed.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-bench}
if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DKILN_BUILD_BENCHMARKS=ON -DKILN_BUILD_TESTS=OFF >/dev/null
fi
ninja -C "$BUILD_DIR" attention_bench >/dev/null
BENCH="$BUILD_DIR/bench/attention_bench"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
export HL_NUM_THREADS=2

echo "== Halide, fused and unfused side by side (median of 5 repetitions)" >&2
"$BENCH" --benchmark_out="$OUT/halide.json" --benchmark_out_format=json >&2
echo "== peak RSS growth, one process per path and length" >&2
for path in fused unfused; do
  for s in 512 1024 2048; do
    "$BENCH" --benchmark_filter="^$path/S=$s/" --benchmark_repetitions=1 \
      --benchmark_min_time=0.01 --benchmark_out="$OUT/rss_${path}_$s.json" \
      --benchmark_out_format=json >/dev/null
  done
done

echo "== PyTorch" >&2
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp OPENBLAS_CORETYPE=SkylakeX
export OMP_NUM_THREADS=2
/usr/bin/python3 bench/attention_torch.py --rss >"$OUT/torch.jsonl"
# The same with glibc told to keep freed memory: PyTorch allocates its [8, S, S]
# intermediates afresh on every call, and by default each comes back from the kernel
# as new pages to fault in (on this VM, more than half of PyTorch's time). The Halide
# paths allocate their buffers once, so this is the like-for-like baseline.
MALLOC_MMAP_THRESHOLD_=4294967296 MALLOC_TRIM_THRESHOLD_=68719476736 \
  MALLOC_TOP_PAD_=1073741824 /usr/bin/python3 bench/attention_torch.py >"$OUT/torch_reuse.jsonl"

/usr/bin/python3 - "$OUT" <<'PY'
import glob, json, os, re, sys

out = sys.argv[1]


def parse(name):
    path, s = re.match(r"^(fused|unfused)/S=(\d+)", name).groups()
    return path, int(s)


rows = {}
for b in json.load(open(os.path.join(out, "halide.json")))["benchmarks"]:
    if b.get("aggregate_name") == "median":
        path, s = parse(b["run_name"])
        rows.setdefault(s, {})[path] = b
rss = {}
for f in glob.glob(os.path.join(out, "rss_*.json")):
    for b in json.load(open(f))["benchmarks"]:
        rss[parse(b["run_name"])] = b["rss_growth_bytes"]


def load_jsonl(name):
    return {r["S"]: r for r in map(json.loads, open(os.path.join(out, name)))}


torch, reuse = load_jsonl("torch.jsonl"), load_jsonl("torch_reuse.jsonl")
mib = lambda x: "%.1f" % (x / 2**20)
print()
print("causal attention, B=1, H=8, d=64, 2 threads. Times: medians, ms. torch: PyTorch as")
print("is; torch reuse: glibc keeps freed memory (no page faults on its fresh [8,S,S]")
print("tensors). Memory, MiB: inter = intermediate buffers from their sizes (fused: the")
print("kernel's scratch, its heap peak measured plus its stack tiles); rss = peak RSS")
print("growth in the first run, measured, one process per path and S (includes the 4 MiB")
print("output at S=2048).")
fmt = "%5s %7s %8s %7s %7s %9s %8s %7s %10s %6s %8s %6s"
print(fmt % ("S", "fused", "unfused", "torch", "torch", "unfused/", "torch/", "inter",
             "inter", "rss", "rss", "rss"))
print(fmt % ("", "", "", "", "reuse", "fused", "fused", "fused", "unf|torch", "fused",
             "unfused", "torch"))
for s in sorted(rows):
    f, u, t, r = rows[s]["fused"], rows[s]["unfused"], torch[s], reuse[s]
    ft, ut = f["real_time"], u["real_time"]
    best_torch = min(t["median_ms"], r["median_ms"])
    print(fmt % (s, "%.2f" % ft, "%.2f" % ut, "%.2f" % t["median_ms"], "%.2f" % r["median_ms"],
                 "%.2fx" % (ut / ft), "%.2fx" % (best_torch / ft),
                 mib(f["intermediate_bytes"]), mib(u["intermediate_bytes"]),
                 mib(rss.get(("fused", s), -1)), mib(rss.get(("unfused", s), -1)),
                 mib(t.get("rss_growth_bytes", -1))))
print("(torch/fused: against the faster PyTorch run. unfused and torch allocate the same")
print("intermediates: the [S,S] mask and four [8,S,S] tensors.)")
PY
