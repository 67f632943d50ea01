#!/usr/bin/env bash
# The main job: builds Kiln, compiles the demo model (models/demo.cpp) to a shared library,
# makes a weights file for it, and runs it with the driver. Installs missing Debian
# packages first; safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target kiln-run demo

model=build/models/demo.so
weights=build/models/demo.safetensors
echo "== compiled $model"
build/tools/kiln-run/kiln-run --list "$model"
echo "== random weights (seed 1) -> $weights"
build/tools/kiln-run/kiln-run --init-weights "$weights" "$model" --seed 1
echo "== run: a batch of 2 sequences of 7 random vectors, 20 timed runs"
build/tools/kiln-run/kiln-run "$model" --weights "$weights" --entry forward \
  --dim B=2 --dim S=7 --random --seed 7 --repeat 20
