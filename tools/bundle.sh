#!/bin/bash
# Builds the relocatable bundle for GPU nodes without LLVM (docs/deploy.md):
#
#   tools/bundle.sh            -> dist/clang-optiml-<version>-linux-x86_64.tar.xz
#
# clang-optiml is linked statically against Debian's clang/LLVM archives
# (OPTIML_LLVM_LINK=STATIC), with lld, --gc-sections and stripped; the
# bundle holds it, liboptiml-probe.so, clang's resource headers in
# lib/clang/<major> (found beside the tool), and prompts/ when present.
# Environment: BUILD_DIR (default build-static), JOBS (default 2), CC/CXX
# (default clang-22/clang++-22), CUDA_ROOT (default /usr/local/cuda).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-static}
jobs=${JOBS:-2}
cuda=${CUDA_ROOT:-/usr/local/cuda}
version=$(sed -n 's/^project(clang-optiml.*VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
name=clang-optiml-$version
dist=$root/dist
stage=$build/stage/$name

cmake -S "$root" -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER="${CC:-clang-22}" -DCMAKE_CXX_COMPILER="${CXX:-clang++-22}" \
  -DOPTIML_LLVM_LINK=STATIC -DOPTIML_INCLUDE_TESTS=OFF -DOPTIML_WITH_LLM=OFF -DCUDA_ROOT="$cuda" \
  -DCMAKE_CXX_FLAGS="-ffunction-sections -fdata-sections" \
  -DCMAKE_EXE_LINKER_FLAGS="-fuse-ld=lld -Wl,--gc-sections -Wl,--icf=all -Wl,-s" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fuse-ld=lld -Wl,--gc-sections -Wl,-s" \
  -DCMAKE_SKIP_RPATH=ON >/dev/null
ninja -C "$build" -j "$jobs" clang-optiml optiml-probe

rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/lib" "$dist"
cp "$build/bin/clang-optiml" "$stage/bin/"
cp "$build/lib/liboptiml-probe.so" "$stage/lib/"
resource=$(sed -n 's/^OPTIML_CLANG_RESOURCE_DIR:PATH=//p' "$build/CMakeCache.txt")
major=$(basename "$resource")
mkdir -p "$stage/lib/clang/$major"
cp -r "$resource/include" "$stage/lib/clang/$major/"
if [ -d "$root/prompts" ]; then
  mkdir -p "$stage/share/clang-optiml"
  cp -r "$root/prompts" "$stage/share/clang-optiml/"
fi

# Only system libraries may remain: no libLLVM, libclang-cpp, libz3,
# libcurl or libsqlite3 (GPU nodes lack them).
echo "run-time dependencies:"
for f in "$stage/bin/clang-optiml" "$stage/lib/liboptiml-probe.so"; do
  needed=$(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
  echo "  $(basename "$f"): $needed"
  if echo "$needed" | grep -Eq 'libLLVM|libclang|libz3|libcurl|libsqlite'; then
    echo "bundle.sh: $(basename "$f") needs a library GPU nodes lack" >&2
    exit 1
  fi
done
"$stage/bin/clang-optiml" --version

out=$dist/$name-linux-x86_64.tar.xz
tar -C "$build/stage" -cf - "$name" | xz -9e -T0 > "$out.tmp"
mv "$out.tmp" "$out"
size=$(stat -c %s "$out")
echo "$out: $((size / 1024)) KiB"
if [ "$size" -gt $((20 * 1024 * 1024)) ]; then
  echo "bundle.sh: warning: the bundle is over 20 MiB" >&2
fi
