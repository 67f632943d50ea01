#!/usr/bin/env bash
# Kiln on a GPU against PyTorch on the same GPU (bench/gpu_bench.py): encoder, greedy
# decoding, causal attention and the base Transformer's matrix products, TF32 off and
# on, printed as markdown tables (docs/benchmarks.md, "GPU"). Runs on the machine with
# the GPU, from a bundle that tools/make-gpu-bundle.sh assembled elsewhere; needs this
# repository's bench/ and test/conformance/ scripts and python3 with PyTorch and numpy;
# nothing is built here. With OUT set (the device tool's output folder) the tables and
# the log are written there too (gpu-bench.md, gpu-bench.log).
#
#   bench/run_gpu_bench.sh [BUNDLE_DIR] [gpu_bench.py options]    # default build-gpu
#
# A CPU bundle (KILN_GPU_TARGET=host tools/make-gpu-bundle.sh build DIR) with --device
# cpu --quick checks the plumbing on a machine without a GPU.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source tools/gpu-bundle-env.sh "${1:-build-gpu}"
shift || true
# The CPU check's threads (a CUDA model's host part does not use them).
export HL_NUM_THREADS=${HL_NUM_THREADS:-2} OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}

gpu_info | tee "$out/gpu-bench.log"
"$python" bench/gpu_bench.py "$bundle" "$@" 2> >(tee -a "$out/gpu-bench.log" >&2) |
  tee "$out/gpu-bench.md"
status=${PIPESTATUS[0]}
echo "GPU benchmark: exit status $status; tables in $out/gpu-bench.md" |
  tee -a "$out/gpu-bench.log"
exit "$status"
