#!/usr/bin/env bash
# Builds jx for a machine that has no LLVM (a GPU box, a deployment target) and packs it:
#   scripts/package.sh DIR      writes DIR/jx-<version>-linux-x86_64.tar.gz
# Release, LLVM linked into libjx (-DJX_STATIC_LLVM=ON), build folder build-package/
# (JX_BUILD_DIR=DIR picks another). The tarball unpacks to jx-<version>/:
#   bin/           jx_tests, the benchmarks, the examples
#   lib/           libjx, and every library they load that a plain Ubuntu 24.04 lacks
#   fixtures/      the test fixtures (the tests look beside their binary)
#   run-tests.sh   the test suite with lib/ on the library path (GPU tests skip without a GPU)
# The benchmarks' compiled references (Eigen, the FMA-peak loop) target x86-64-v4 (AVX-512);
# JX_BENCH_ARCH=x86-64-v3 (AVX2) or native picks another.
set -euo pipefail
cd "$(dirname "$0")/.."

out=${1:?usage: scripts/package.sh DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=${JX_BUILD_DIR:-build-package}

scripts/install_deps.sh
config=(-DCMAKE_BUILD_TYPE=Release -DJX_WERROR=ON -DJX_STATIC_LLVM=ON -DJX_BUILD_TESTS=ON
        -DJX_BUILD_EXAMPLES=ON -DJX_BUILD_BENCHMARKS=ON
        "-DJX_BENCH_ARCH=${JX_BENCH_ARCH:-x86-64-v4}"
        # Binaries find libjx beside them (build tree) or in ../lib (package), wherever it lies.
        -DCMAKE_BUILD_RPATH_USE_ORIGIN=ON '-DCMAKE_BUILD_RPATH=$ORIGIN;$ORIGIN/../lib'
        # libtorch (the peer benchmarks' reference) would take gigabytes along.
        -DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON)
[[ -f $build/CMakeCache.txt ]] || config+=(-G Ninja)
cmake -S . -B "$build" "${config[@]}"
cmake --build "$build" -j "$(nproc)"

version=$(sed -n 's/^project(jx VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
name=jx-$version
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/$name
mkdir -p "$root/bin" "$root/lib" "$root/fixtures"

binaries=("$build/tests/jx_tests")
for f in "$build"/benchmarks/bench_* "$build"/examples/*; do
  [[ -f $f && -x $f ]] && binaries+=("$f")
done
cp "${binaries[@]}" "$root/bin/"
cp -P "$build"/libjx.so* "$root/lib/"
strip --strip-unneeded "$root"/bin/* "$root"/lib/libjx.so.*.*
cp tests/fixtures/*.npz "$root/fixtures/"

# Every library the binaries and libjx load, except what every Ubuntu 24.04 has: glibc, the
# GCC runtime (libstdc++, libgcc_s), zlib and zstd (which apt itself needs).
system_libs='^(linux-vdso|ld-linux-x86-64|libc|libm|libdl|librt|libpthread|libresolv|libstdc\+\+|libgcc_s|libz|libzstd)\.so'
for f in "$root"/bin/* "$root"/lib/libjx.so.*.*; do
  ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }'
done | sort -u | while read -r soname path; do
  [[ $soname =~ $system_libs || $soname == libjx.so* ]] && continue
  [[ -e $root/lib/$soname ]] || cp -L "$path" "$root/lib/$soname"
done

cat > "$root/run-tests.sh" <<'EOF'
#!/usr/bin/env bash
# Runs jx's test suite from this package; arguments go to Catch (e.g. "[devices]"). Tests that
# need a GPU say "JX_SKIPPED: no GPU" and pass where there is none.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export JX_TEST_FIXTURES=$here/fixtures
exec "$here/bin/jx_tests" "$@"
EOF
chmod +x "$root/run-tests.sh"

tarball=$out/$name-linux-x86_64.tar.gz
tar -C "$stage" -czf "$tarball" "$name"
echo "package: $tarball ($(du -h "$tarball" | cut -f1)); lib/: $(ls "$root/lib" | tr '\n' ' ')"
