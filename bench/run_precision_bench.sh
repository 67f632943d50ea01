#!/usr/bin/env bash
# Kiln fp32 / bf16 / int8 weights vs PyTorch fp32 and PyTorch dynamic int8 on the base
# Transformer, side by side in one run (bench/precision_bench.py); prints markdown
# tables. Builds what it needs in build/ with -DKILN_BUILD_BENCHMARKS=ON. Extra arguments
# go to precision_bench.py (e.g. --encoder-repeat 3 --greedy-repeat 1 for a quick check).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh python3-torch python3-numpy libopenblas0-openmp libbenchmark-dev
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_BENCHMARKS=ON \
  >/dev/null
cmake --build build --target kiln-run generate_bench stream_read transformer_base \
  transformer_base_bf16 transformer_base_int8 >&2

export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp
export OPENBLAS_CORETYPE=SkylakeX OMP_NUM_THREADS=2 HL_NUM_THREADS=2
/usr/bin/python3 bench/precision_bench.py --kiln-run build/tools/kiln-run/kiln-run \
  --generate-bench build/bench/generate_bench --stream-read build/bench/stream_read \
  --f32 build/models/transformer_base.so --bf16 build/bench/transformer_base_bf16.so \
  --int8 build/bench/transformer_base_int8.so "$@"
