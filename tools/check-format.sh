#!/usr/bin/env bash
# Checks that every C and C++ file of the tree is formatted as .clang-format says
# (clang-format 14, LLVM style, 90 columns) and names each file that is not, with the
# command that fixes it. Run by the test suite; safe to run by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format=${CLANG_FORMAT:-clang-format-14}
if ! command -v "$clang_format" >/dev/null; then
  echo "check-format: $clang_format not found (apt-get install clang-format-14)" >&2
  exit 1
fi
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.c' '*.cpp' '*.h' '*.hpp')
else
  mapfile -t files < <(find . -path ./build -prune -o \
    \( -name '*.c' -o -name '*.cpp' -o -name '*.h' -o -name '*.hpp' \) -print)
fi
bad=()
for f in "${files[@]}"; do
  [[ -f $f ]] || continue
  if ! "$clang_format" --dry-run --Werror "$f" >/dev/null 2>&1; then
    bad+=("$f")
  fi
done
if ((${#bad[@]})); then
  printf 'check-format: not formatted: %s\n' "${bad[@]}" >&2
  echo "check-format: fix with: $clang_format -i ${bad[*]}" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files formatted as .clang-format says"
