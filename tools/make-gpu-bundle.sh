#!/usr/bin/env bash
# Assembles the GPU test bundle from a build (no GPU needed): the models compiled for
# CUDA, kiln-run, the runtime libraries, KilnGpuTests, the translator's files and the op
# cases with the reference interpreter's outputs (test/gpu/README.md gives the layout).
# It needs only libc, libstdc++ and, at run time, the NVIDIA driver: the script checks
# that with ldd and keeps it under the device tool's 64 MiB. tools/run-gpu-tests.sh
# runs it on the device (README, "Running on a GPU"), and bench/run_gpu_bench.sh the
# benchmark: generate_bench and the attention and matrix-product models are in it too.
#
#   tools/make-gpu-bundle.sh [BUILD_DIR [BUNDLE_DIR]]     # defaults: build, build-gpu
#
# KILN_GPU_TARGET is the models' target, x86-64-linux-avx2-f16c-fma-cuda by default:
# host-cuda with a portable host part (any x86-64 CPU since Haswell or Zen 1), since the
# device's CPU is not this machine's; the CUDA part is what runs the kernels, for compute
# capability 7.0 unless the target names one. KILN_GPU_TARGET=host makes a CPU bundle,
# which checks the bundle itself on a machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
bundle=${2:-build-gpu}
target=${KILN_GPU_TARGET:-x86-64-linux-avx2-f16c-fma-cuda}
limit_mib=48 # of the device tool's 64 MiB, the rest for the repository itself

# The e2e tests whose harness checks compiled models against the reference interpreter.
record_filter='OpsTest.*:DedupTest.*:Positions.*:DecoderStates.*:TinyGptTest.*'
record_filter+=':TransformerTinyTest.*:DemoModelTest.*'

[[ -f "$build/CMakeCache.txt" ]] || { echo "error: $build is not a configured build" \
  "(cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release first)" >&2; exit 1; }
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
[[ "$build_type" == Release ]] || echo "warning: $build is a '$build_type' build:" \
  "bench/run_gpu_bench.sh's Kiln figures (runtime, kiln-run) want Release" >&2
# The benchmark's programs are built only with KILN_BUILD_BENCHMARKS.
cmake -S . -B "$build" -DKILN_BUILD_BENCHMARKS=ON >/dev/null
cmake --build "$build" --target KilnGpuTests KilnE2ETests kiln-run translator-gen \
  transformer_base-gen demo-gen transformer_tiny-gen generate_bench attention_causal-gen \
  matmul_shapes-gen

rm -rf "$bundle"
mkdir -p "$bundle"/{bin,lib,models,cases,translator}

echo "recording the e2e op cases (reference interpreter outputs)"
KILN_RECORD_CASES="$bundle/cases/ops" "$build/test/e2e/KilnE2ETests" \
  --gtest_filter="$record_filter" --gtest_brief=1 >"$bundle/cases/record.log" 2>&1 ||
  { cat "$bundle/cases/record.log"; exit 1; }

# Every model a case names, the probe model, the shipped two and the benchmark's two,
# each from its NAME-gen.
models=$(awk 'FNR == 1 && $1 == "model" { print $2 }' "$bundle"/cases/ops/*/case.txt |
  sort -u)
for model in $models e2e_unary translator transformer_base attention_causal \
  matmul_shapes; do
  [[ -e "$bundle/models/${model}_cuda.so" ]] && continue
  gen=$(find "$build" -name "$model-gen" -type f -perm -u+x | head -n1)
  [[ -n "$gen" ]] || { echo "error: no $model-gen under $build" >&2; exit 1; }
  "$gen" -o "$bundle/models" --name "${model}_cuda" --target="$target" \
    --kernels-dir "$bundle/kernels/$model"
done
rm -rf "$bundle/kernels"

cp "$build/tools/kiln-run/kiln-run" "$build/test/gpu/KilnGpuTests" \
  "$build/bench/generate_bench" "$bundle/bin/"
cp -L "$build"/runtime/libkiln_runtime.so.0 "$build"/runtime/libkiln_generate.so.0 \
  "$bundle/lib/"
cp models/translator/{config.json,vocab.txt,translator.safetensors,heldout.tsv} \
  models/translator/beam_reference.tsv "$bundle/translator/"

# Nothing of LLVM, MLIR or Halide's compiler may be needed on the device.
status=0
for file in "$bundle"/bin/* "$bundle"/lib/* "$bundle"/models/*.so; do
  extra=$(LD_LIBRARY_PATH="$bundle/lib" ldd "$file" | awk '{ print $1 }' |
    grep -Ev '^(linux-vdso|/lib64/ld-linux-x86-64|libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|libkiln_runtime|libkiln_generate)[.]' || true)
  if [[ -n "$extra" ]]; then
    echo "error: $file needs $(echo $extra)" >&2
    status=1
  fi
done
size_mib=$(( $(du -sb "$bundle" | cut -f1) / 1048576 ))
if (( size_mib > limit_mib )); then
  echo "error: the bundle is $size_mib MiB, over $limit_mib MiB" >&2
  status=1
fi
echo "$bundle: $(ls "$bundle/cases/ops" | wc -l) op cases, $(ls "$bundle/models" | wc -l)" \
  "models for $target, $size_mib MiB"
exit $status
