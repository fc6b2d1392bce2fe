#!/usr/bin/env bash
# Installs what clang-optiml needs (Debian 12 packages, when missing), then
# configures and builds into ./build. Extra arguments are ninja targets
# (default: the tool).
#
#   scripts/build.sh                 # the clang-optiml binary
#   scripts/build.sh optiml-test-deps
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(cmake ninja-build python3 clang-22 lld-22 llvm-22-dev llvm-22-tools
          libclang-22-dev nlohmann-json3-dev libcurl4-openssl-dev
          libsqlite3-dev libgtest-dev zlib1g-dev libzstd-dev
          clang-tools-22 clang-format-22 clang-tidy-22 clangd-22 neovim emacs-nox elpa-eglot
          bear git)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
    missing+=("$p")
done
if ((${#missing[@]})); then
  echo "clang-optiml: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
    --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ ! -x /usr/local/cuda/bin/nvcc ] && [ -z "${CUDA_PATH:-}" ]; then
  echo "clang-optiml: note: no CUDA toolkit at /usr/local/cuda (set CUDA_PATH);" \
       "tests that need the SDK will be skipped" >&2
fi

# Two cores link LLVM tools slowly: one link at a time, Ninja, clang + lld.
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld \
    -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld \
    -DLLVM_DIR=/usr/lib/llvm-22/lib/cmake/llvm \
    -DClang_DIR=/usr/lib/llvm-22/lib/cmake/clang \
    -DLLVM_PARALLEL_LINK_JOBS=1
fi
if (($# == 0)); then set -- clang-optiml; fi
ninja -C build "$@"
