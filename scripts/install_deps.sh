#!/usr/bin/env bash
# Installs the Debian 12 packages jx needs to build and test (DESIGN.md section 6), and nothing
# that is already there. `--with-torch` adds libtorch-dev, used only by the peer benchmarks.
# Everything comes from apt; run it as often as you like.
set -euo pipefail

packages=(
  cmake ninja-build g++ ccache   # the toolchain; ccache makes rebuilds of a fresh clone cheap
  llvm-19-dev                    # ORC JIT and the X86 + NVPTX back ends
  libfmt-dev
  catch2                         # v2, the test framework
  libeigen3-dev                  # reference results in tests
  libopenblas-dev                # large CPU dots
  zlib1g-dev                     # gzipped datasets
  libzstd-dev                    # what LLVM's static libraries link (cmake -DJX_STATIC_LLVM=ON)
  dataset-fashion-mnist          # the training example's data, under /usr/share/datasets
  python3-numpy                  # tests check that NumPy reads the .npz files jx writes
)
for arg in "$@"; do
  case $arg in
    --with-torch) packages+=(libtorch-dev) ;;
    *) echo "usage: $0 [--with-torch]" >&2; exit 2 ;;
  esac
done

# Only what dpkg does not report as installed ("ii"), so a ready machine never touches apt.
missing=()
for p in "${packages[@]}"; do
  [[ $(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null) == ii* ]] || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install_deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=()
if ((EUID != 0)); then
  command -v sudo >/dev/null || { echo "install_deps: run as root or install sudo" >&2; exit 1; }
  sudo=(sudo)
fi
echo "install_deps: installing ${missing[*]}"
# env, not export: sudo drops the environment. Noninteractive: no prompts, this runs in CI.
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -q --no-install-recommends "${missing[@]}"
