#!/usr/bin/env bash
# Installs what is missing, builds jx, and runs one thing:
#   scripts/build.sh example    the Fashion-MNIST training example (Release, build folder: build/)
#   scripts/build.sh test       the whole test suite       (Release, build/)
#   scripts/build.sh sanitize   the suite under AddressSanitizer + UBSan (build-asan/)
# JX_BUILD_DIR=DIR picks another build folder.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-}
case $mode in
  example | test) dir=${JX_BUILD_DIR:-build}; config=(-DCMAKE_BUILD_TYPE=Release) ;;
  sanitize) dir=${JX_BUILD_DIR:-build-asan}; config=(-DJX_SANITIZE=address,undefined) ;;
  *) echo "usage: $0 example|test|sanitize" >&2; exit 2 ;;
esac

scripts/install_deps.sh

# The project's own builds treat warnings as errors; a user's plain CMake build does not.
config+=(-DJX_WERROR=ON)
# Ninja only for a new folder: CMake refuses to change the generator of an existing one.
[[ -f $dir/CMakeCache.txt ]] || config+=(-G Ninja)
cmake -S . -B "$dir" "${config[@]}"

jobs=$(nproc)
if [[ $mode == example ]]; then
  cmake --build "$dir" -j "$jobs" --target fashion_mnist  # the library and the example, no tests
  "$dir/examples/fashion_mnist"
else
  cmake --build "$dir" -j "$jobs"
  ctest --test-dir "$dir" --output-on-failure -j "$jobs"
fi
