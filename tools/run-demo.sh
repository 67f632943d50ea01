#!/usr/bin/env bash
# The main job: builds Kiln, compiles the shipped translator (models/translator.cpp, a
# Transformer trained to write numbers in English words) to a shared library, and
# translates a handful of inputs with the driver, token by token with the KV cache,
# greedy and with beam search. Installs missing Debian packages first; safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target kiln-run translator

run=build/tools/kiln-run/kiln-run
model=build/models/translator.so
weights=models/translator/translator.safetensors
config=models/translator/config.json
inputs=(7 42 2026 4096 90017 12000345 99999999 31415926)

echo "== compiled $model"
"$run" --list "$model" | sed -n '/^entry/p'
echo "== greedy, KV cache: input, translation, log-probability"
"$run" translate "$model" --weights "$weights" --config "$config" "${inputs[@]}"
echo "== beam search, 4 beams, length penalty 0.6"
"$run" translate "$model" --weights "$weights" --config "$config" --beam 4 --alpha 0.6 \
  "${inputs[@]}"
