#!/usr/bin/env bash
# Kiln vs PyTorch latency of the base Transformer (bench/transformer_latency.py), with
# PyTorch on OpenBLAS rather than this image's reference BLAS. Run after tools/run-demo.sh
# or a full build (needs build/models/transformer_base.so and build/tools/kiln-run).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh python3-torch python3-numpy libopenblas0-openmp
cmake --build build --target kiln-run transformer_base
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp
export OPENBLAS_CORETYPE=SkylakeX OMP_NUM_THREADS=2
/usr/bin/python3 bench/transformer_latency.py --kiln-run build/tools/kiln-run/kiln-run \
  --model build/models/transformer_base.so "$@"
