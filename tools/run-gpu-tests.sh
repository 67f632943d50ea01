#!/usr/bin/env bash
# Runs the GPU tests on a machine with an NVIDIA GPU and its driver, from a bundle that
# tools/make-gpu-bundle.sh assembled elsewhere (README, "Running on a GPU"). Needs the
# bundle, this repository's test/ scripts, and python3 with PyTorch and numpy (for the
# base Transformer's reference); nothing is built here. Prints the GPU, the tests'
# output and a one-line summary; exits nonzero when a test failed. With OUT set (the
# device tool's output folder) the log and gtest's XML report are written there too.
#
#   tools/run-gpu-tests.sh [BUNDLE_DIR] [gtest options]      # default build-gpu
set -uo pipefail
cd "$(dirname "$0")/.."
source tools/gpu-bundle-env.sh "${1:-build-gpu}"
shift || true

run() {
  gpu_info
  # PyTorch's base Transformer (its own random weights), the reference for the CUDA one.
  local reference="$bundle/pytorch-reference"
  rm -rf "$reference" "$bundle/cases/pytorch"
  "$python" test/conformance/make_reference.py --config base --out "$reference" &&
    "$python" test/gpu/make_pytorch_cases.py "$reference" "$bundle/cases/pytorch" ||
    echo "error: writing the PyTorch reference failed (GpuConformance will fail)"
  KILN_GPU_BUNDLE="$bundle" "$bundle/bin/KilnGpuTests" \
    --gtest_output="xml:$out/gpu-tests.xml" "$@"
}

log="$out/gpu-tests.log"
run "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
counts=$(grep -o 'tests="[0-9]*" failures="[0-9]*"' "$out/gpu-tests.xml" 2>/dev/null |
  head -n1)
if grep -q '^\[  SKIPPED \] every GPU test' "$log"; then
  # Here a skip is a failure: this script is for a machine with a GPU.
  summary="SKIPPED: $(grep -m1 -o 'every GPU test: .*' "$log")"
  status=3
elif [[ $status -eq 0 ]]; then
  summary="PASS"
else
  summary="FAIL"
fi
echo "GPU tests: $summary (${counts:-no report}; exit status $status)" | tee -a "$log"
exit $status
