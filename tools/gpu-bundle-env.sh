# Sourced (not run) by the scripts that run on the GPU machine from a bundle of
# tools/make-gpu-bundle.sh: tools/run-gpu-tests.sh and bench/run_gpu_bench.sh.
#
#   source tools/gpu-bundle-env.sh "${1:-build-gpu}"
#
# Sets bundle (the bundle's absolute path), python ($PYTHON or python3: with PyTorch and
# numpy) and out ($OUT, the device tool's output folder, or BUNDLE/results; created),
# and puts the bundle's runtime libraries on LD_LIBRARY_PATH. gpu_info prints the GPU.
bundle=$(realpath "$1")
python=${PYTHON:-python3}
out=${OUT:-$bundle/results}
mkdir -p "$out"
export LD_LIBRARY_PATH="$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

gpu_info() {
  nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total,clocks.max.sm \
    --format=csv 2>&1 || echo "nvidia-smi: not found or failed"
}
