#!/usr/bin/env bash
# Builds Kiln's libFuzzer targets (test/fuzz, clang-14 + ASan + UBSan, in build-fuzz/ or
# $KILN_FUZZ_BUILD) and runs each for SECONDS (default 60), starting from the checked-in
# seed corpus and dictionary. Prints each target's executions; on a crash, leak, hang or
# sanitizer report it keeps the input under BUILD/crashes/TARGET/ and exits 1.
#   tools/run-fuzz.sh [SECONDS] [TARGET...]     targets: json dimexpr manifest
#                                               safetensors npy (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

seconds=${1:-60}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(json dimexpr manifest safetensors npy)
build=${KILN_FUZZ_BUILD:-$root/build-fuzz}

tools/install-deps.sh clang-14 libclang-rt-14-dev
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
CXX=clang++-14 cmake -S test/fuzz -B "$build" -G Ninja "${launcher[@]}" >/dev/null
cmake --build "$build" -j"${KILN_FUZZ_JOBS:-2}" -- $(printf 'fuzz_%s ' "${targets[@]}") \
  >/dev/null

failed=0
for t in "${targets[@]}"; do
  corpus=$build/corpus/$t crashes=$build/crashes/$t/ log=$build/logs/$t.log
  mkdir -p "$corpus" "$crashes" "$(dirname "$log")"
  # New inputs go to the first (scratch) directory; the checked-in seeds stay as they are.
  # -timeout: one input taking 10 s is a hang, which the runtime must never do on input.
  if "$build/fuzz_$t" "$corpus" "test/fuzz/corpus/$t" -dict="test/fuzz/dict/$t.dict" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$crashes" \
    -print_final_stats=1 >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    printf 'fuzz %-12s %10s executions in %ss, no crash\n' "$t" "${runs:-?}" "$seconds"
    [[ -n $runs ]] || { echo "  no statistics in $log" >&2; failed=1; }
  else
    failed=1
    printf 'fuzz %-12s FAILED; log %s, input:\n' "$t" "$log"
    ls "$crashes" | sed "s|^|  $crashes|"
    grep -m3 -E 'ERROR|SUMMARY|runtime error' "$log" | sed 's/^/  /' ||
      tail -n3 "$log" | sed 's/^/  /'
  fi
done
exit $failed
