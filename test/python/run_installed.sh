#!/bin/sh
# Installs the build tree into a fresh prefix and runs the translator's Python tests
# against the installed package alone: the extension must find the runtime through its
# own RPATH, with nothing of the build tree on any path.
# Usage: run_installed.sh CMAKE BUILD_DIR PREFIX PYTHON PACKAGE_DIR (relative to PREFIX)
set -eu
cmake=$1 build=$2 prefix=$3 python=$4 package_dir=$5
rm -rf "$prefix"
"$cmake" --install "$build" --prefix "$prefix" >/dev/null
export PYTHONPATH="$prefix/$package_dir"
"$python" -c 'import kiln, sys; assert kiln.__file__.startswith(sys.argv[1]), kiln.__file__' \
  "$prefix"
exec "$python" -m unittest test_translator
