#!/usr/bin/env bash
# The runtime's per-step overhead and the temporaries' bytes of the base Transformer
# (bench/session_overhead.cpp): decode_step timed with the real kernels, then with a copy
# of the model whose kernels return at once (bench/make_noop_model.py), whose time is the
# runtime's own. Builds what it needs with -DKILN_BUILD_BENCHMARKS=ON. Extra arguments go
# to session_overhead (--batch B --source S --steps N --repeat R).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_BENCHMARKS=ON >/dev/null
cmake --build build --target session_overhead transformer_base kiln-run
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
model=build/models/transformer_base.so
build/tools/kiln-run/kiln-run "$model" --init-weights "$work/weights.safetensors" >/dev/null
python3 bench/make_noop_model.py "$model" "$work/noop.c"
cc -shared -fPIC -O2 "$work/noop.c" -o "$work/noop.so"
echo "== real kernels"
build/bench/session_overhead "$model" "$work/weights.safetensors" "$@"
echo "== no-op kernels (the runtime alone)"
build/bench/session_overhead "$work/noop.so" "$work/weights.safetensors" "$@"
