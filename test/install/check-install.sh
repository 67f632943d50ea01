#!/usr/bin/env bash
# check-install.sh STEP ARGS... - the steps of the install.* tests (test/install/CMakeLists.txt):
#
#   prefix BUILD SOURCE PREFIX       install BUILD into a fresh PREFIX; nothing installed may
#                                    name the source or build tree (the install relocates)
#   find_package PREFIX PROJECT WORK build PROJECT (find_package(Kiln), kiln_add_model) with
#                                    CMAKE_PREFIX_PATH=PREFIX only, check the model's
#                                    numbers, start the installed kiln-run
#   pkg_config PREFIX PROJECT WORK MODEL
#                                    build PROJECT/check_tiny.c with pkg-config alone, run
#                                    it on MODEL (the one find_package built)
#   kiln_compile PREFIX PROJECT WORK CHECKER
#                                    kiln-compile a copy of PROJECT/tiny.cpp, check it with
#                                    CHECKER (find_package's check_tiny) and --emit; the
#                                    copy given a C++ error fails with the compiler's message
set -euo pipefail

# Nothing may come from the build tree's libraries: the installed files must find their
# own.
unset LD_LIBRARY_PATH

fail() {
  echo "check-install: $*" >&2
  exit 1
}

# Runs a command with its output in LOG, shown only when it fails.
quietly() {
  local log=$1
  shift
  "$@" >"$log" 2>&1 || {
    cat "$log" >&2
    fail "failed: $*"
  }
}

step_prefix() {
  local build=$1 source=$2 prefix=$3
  rm -rf "$prefix"
  quietly "$prefix.log" cmake --install "$build" --prefix "$prefix"
  local leaks
  leaks=$(grep -rIl -e "$source" -e "$build" "$prefix" || true)
  [[ -z $leaks ]] || fail "installed files name the source or build tree: $leaks"
  local lib
  for lib in kiln_runtime kiln_generate; do
    compgen -G "$prefix/lib*/lib$lib.so.0" >/dev/null ||
      fail "no versioned lib$lib.so.0 under $prefix"
  done
}

step_find_package() {
  local prefix=$1 project=$2 work=$3
  rm -rf "$work" && mkdir -p "$work"
  quietly "$work/configure.log" cmake -S "$project" -B "$work" -G Ninja \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
  grep -qF "Kiln_DIR: $prefix/" "$work/configure.log" ||
    fail "find_package(Kiln) did not find $prefix: $(grep Kiln_DIR "$work/configure.log")"
  quietly "$work/build.log" cmake --build "$work"
  "$work/check_tiny" "$work/tiny.so" "$work/tiny.safetensors"
  quietly "$work/help.log" "$prefix/bin/kiln-run" --help
  "$prefix/bin/kiln-run" --list "$work/tiny.so" >"$work/list.log"
  grep -q "forward" "$work/list.log" || fail "kiln-run --list: no entry forward"
}

step_pkg_config() {
  local prefix=$1 project=$2 work=$3 model=$4
  export PKG_CONFIG_PATH
  PKG_CONFIG_PATH=$(dirname "$(compgen -G "$prefix/lib*/pkgconfig/kiln-runtime.pc")")
  mkdir -p "$work"
  # shellcheck disable=SC2046 # pkg-config's flags are meant to split
  cc $(pkg-config --cflags kiln-runtime) "$project/check_tiny.c" -o "$work/check_tiny" \
    $(pkg-config --libs kiln-runtime) -lm
  LD_LIBRARY_PATH=$(pkg-config --variable=libdir kiln-runtime) \
    "$work/check_tiny" "$model" "$work/tiny.safetensors"
}

step_kiln_compile() {
  local prefix=$1 project=$2 work=$3 checker=$4
  rm -rf "$work" && mkdir -p "$work"
  # A cache of its own, so that the first call compiles for sure.
  export KILN_COMPILE_CACHE=$work/cache
  cp "$project/tiny.cpp" "$work/model.cpp"
  quietly "$work/model.log" "$prefix/bin/kiln-compile" "$work/model.cpp" -o "$work/model.so"
  grep -q "^kiln-compile: compiled $work/model.so" "$work/model.log" ||
    fail "kiln-compile did not say what it compiled: $(cat "$work/model.log")"
  [[ ! -e $work/model.kernels ]] || fail "kiln-compile left model.kernels beside model.so"
  "$checker" "$work/model.so" "$work/model.safetensors"

  # Options reach the model's compiler (here from the cache: nothing changed).
  "$prefix/bin/kiln-compile" "$work/model.cpp" --emit=mlir >"$work/model.mlir"
  grep -q "kiln.softmax" "$work/model.mlir" || fail "--emit=mlir: no kiln.softmax"

  # An edited model is compiled again, and its C++ error is the compiler's own.
  sed -i 's/softmax(/notAnOp(/' "$work/model.cpp"
  grep -q notAnOp "$work/model.cpp" || fail "tiny.cpp has no softmax( to break"
  rm "$work/model.so"
  if "$prefix/bin/kiln-compile" "$work/model.cpp" -o "$work/model.so" 2>"$work/broken.log"
  then
    fail "kiln-compile accepted a model calling notAnOp"
  fi
  grep -q "model.cpp:[0-9]*:[0-9]*: error: .*notAnOp" "$work/broken.log" ||
    fail "kiln-compile did not show the C++ error: $(cat "$work/broken.log")"
  [[ ! -e $work/model.so ]] || fail "kiln-compile wrote model.so for a broken model"
}

step=$1
shift
"step_$step" "$@"
