#!/usr/bin/env bash
# Builds Kiln and runs every test (lit + GoogleTest, through ctest), then builds it again
# with sanitizers and runs the suite once more. Installs missing Debian packages first, so
# it works on a fresh machine; safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

# python3-torch: the conformance suite checks the compiled Transformer against PyTorch;
# clang-format-14: the style check (tools/check-format.sh); clang-14 and libclang-rt-14-dev:
# the fuzz smoke test (tools/run-fuzz.sh).
tools/install-deps.sh python3-torch python3-numpy clang-format-14 clang-14 libclang-rt-14-dev
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_TESTS=ON >/dev/null
cmake --build build -j"$(nproc)"
(cd build && ctest --output-on-failure -j"$(nproc)")

# The suite again, with Kiln's runtime, compiler, tools and tests built under
# AddressSanitizer and UndefinedBehaviorSanitizer, LeakSanitizer on: any finding fails its
# test (README, "Sanitizers"). It leaves out the host-cuda models (KILN_BUILD_CUDA_MODELS,
# which the plain build above compiles) and with them the GPU tests, which only skip
# without a GPU: it checks Kiln's C++, not PTX.
cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_TESTS=ON \
  -DKILN_SANITIZE=address,undefined -DKILN_BUILD_CUDA_MODELS=OFF >/dev/null
cmake --build build-sanitize -j"$(nproc)"
cd build-sanitize
ASAN_OPTIONS=detect_leaks=1:check_initialization_order=1 \
  UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j"$(nproc)"
