#!/usr/bin/env bash
# Greedy generation with the base Transformer (bench/generate_torch.py): Kiln's KV-cache
# decoding vs whole-prefix re-decoding vs PyTorch with its own KV cache, PyTorch on
# OpenBLAS. Builds what it needs with -DKILN_BUILD_BENCHMARKS=ON.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh python3-torch python3-numpy libopenblas0-openmp libbenchmark-dev
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_BENCHMARKS=ON >/dev/null
cmake --build build --target generate_bench transformer_base
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp
export OPENBLAS_CORETYPE=SkylakeX OMP_NUM_THREADS=2
/usr/bin/python3 bench/generate_torch.py --bench build/bench/generate_bench \
  --model build/models/transformer_base.so "$@"
