#!/usr/bin/env bash
# Kiln vs ONNX Runtime 1.30 vs PyTorch 1.13 on the base Transformer, side by side in one
# run (bench/model_bench.py), with the sgemm, FMA-peak and streaming-read ceilings;
# prints a markdown table. Builds what it needs in build/ with
# -DKILN_BUILD_BENCHMARKS=ON and installs onnxruntime-node into build/bench-deps. Extra
# arguments go to model_bench.py (e.g. --rounds 1 --encoder-repeat 3 --greedy-repeat 1
# for a quick check).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh python3-torch python3-numpy libopenblas0-openmp libbenchmark-dev
for tool in node npm; do
  if ! command -v "$tool" >/dev/null; then
    echo "run_model_bench.sh: needs $tool (Node.js)" >&2
    exit 1
  fi
done
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_BENCHMARKS=ON \
  >/dev/null
cmake --build build --target kiln-run transformer_base generate_bench stream_read \
  fma_peak >&2

# onnxruntime-node's postinstall downloads CUDA binaries from a host outside the package
# registry; the CPU binaries are in the package itself, so skip it.
ORT_VERSION=1.30.0
DEPS=build/bench-deps
if [[ "$(node -p "require('./$DEPS/node_modules/onnxruntime-node/package.json').version" \
  2>/dev/null)" != "$ORT_VERSION" ]]; then
  mkdir -p "$DEPS"
  ONNXRUNTIME_NODE_INSTALL=skip npm install --prefix "$DEPS" --no-save --no-package-lock \
    --ignore-scripts "onnxruntime-node@$ORT_VERSION" >&2
fi
export NODE_PATH="$PWD/$DEPS/node_modules"

export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp
export OPENBLAS_CORETYPE=SkylakeX OMP_NUM_THREADS=2 HL_NUM_THREADS=2
/usr/bin/python3 bench/model_bench.py --kiln-run build/tools/kiln-run/kiln-run \
  --generate-bench build/bench/generate_bench --stream-read build/bench/stream_read \
  --fma-peak build/bench/fma_peak --model build/models/transformer_base.so "$@"
