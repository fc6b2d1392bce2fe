#!/bin/bash
# Builds the relocatable bundle for GPU nodes without LLVM (docs/deploy.md):
#
#   tools/bundle.sh            -> dist/clang-optiml-<version>-linux-x86_64.tar.xz
#
# clang-optiml is linked statically against Debian's clang/LLVM archives
# (OPTIML_LLVM_LINK=STATIC), with lld, --gc-sections and stripped, and with
# the LLM client (OPTIML_WITH_LLM=ON). The bundle holds it, libcurl and
# every library it needs that is not part of glibc or GCC's runtime (in
# lib/, found through the tool's RPATH $ORIGIN/../lib), and what
# `cmake --install` lays out: liboptiml-probe.so, clang's resource headers
# in lib/clang/<major> (found beside the tool), prompts and the CMake
# package in lib/cmake/ClangOptiml.
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
# The executables built here (clang-optiml and the editor proxy
# clangd-optiml) find the shipped libraries in ../lib. A DT_RPATH (--disable-new-dtags), not a DT_RUNPATH:
# the loader searches an executable's RPATH for the dependencies of its
# libraries too (libcurl's libssl, ...), a RUNPATH only for its own. The
# backslash keeps $ORIGIN literal through ninja's shell.
rpath='-Wl,--disable-new-dtags -Wl,-rpath,\$ORIGIN/../lib'
# Libraries every node has (glibc, GCC's runtime), and the CUDA driver and
# CUPTI that the probe takes from the node's toolkit.
system_libs='^(libc|libm|libmvec|libpthread|libdl|librt|libresolv|libutil|libanl|libnsl|libBrokenLocale|ld-linux-x86-64|libstdc\+\+|libgcc_s)\.so'
node_cuda_libs='^(libcuda|libcupti)\.so'

cmake -S "$root" -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER="${CC:-clang-22}" -DCMAKE_CXX_COMPILER="${CXX:-clang++-22}" \
  -DOPTIML_LLVM_LINK=STATIC -DOPTIML_INCLUDE_TESTS=OFF -DOPTIML_WITH_LLM=ON -DCUDA_ROOT="$cuda" \
  -DCMAKE_CXX_FLAGS="-ffunction-sections -fdata-sections" \
  -DCMAKE_EXE_LINKER_FLAGS="-fuse-ld=lld -Wl,--gc-sections -Wl,--icf=all -Wl,-s $rpath" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fuse-ld=lld -Wl,--gc-sections -Wl,-s" \
  -DCMAKE_SKIP_RPATH=ON >/dev/null  # no build-tree RPATH; ours is in the link flags
ninja -C "$build" -j "$jobs" clang-optiml clangd-optiml optiml-probe

# The bundle is the installed prefix (docs/cmake.md): the tools, the probe,
# clang's resource headers, prompts and the CMake package.
rm -rf "$stage"
mkdir -p "$dist"
cmake --install "$build" --prefix "$stage" >/dev/null
for f in bin/clang-optiml bin/clangd-optiml lib/liboptiml-probe.so \
         lib/cmake/ClangOptiml/ClangOptimlConfig.cmake; do
  if [ ! -f "$stage/$f" ]; then
    echo "bundle.sh: the installed prefix lacks $f" >&2
    exit 1
  fi
done
# libcurl and its dependencies, as the loader resolves them here (ldd walks
# the whole closure), minus what every node has.
shipped=()
while read -r soname path; do
  if [[ $soname =~ $system_libs ]]; then continue; fi
  if [ ! -f "$path" ]; then
    echo "bundle.sh: clang-optiml needs $soname, which is not found here" >&2
    exit 1
  fi
  cp -L "$path" "$stage/lib/$soname"
  shipped+=("$soname")
done < <(env -u LD_LIBRARY_PATH ldd "$stage/bin/clang-optiml" |
           sed -n 's/^[[:space:]]*\([^ ]*\) => \([^ ]*\) .*/\1 \2/p')
# No libLLVM, libclang-cpp or libz3 (the tool is static against them), and
# every library an ELF file of the bundle needs is shipped in lib/ or is one
# every node has.
echo "shipped libraries: ${shipped[*]}"
echo "run-time dependencies:"
for exe in clang-optiml clangd-optiml; do
  rpath_seen=$(readelf -d "$stage/bin/$exe" | sed -n 's/.*(RPATH).*\[\(.*\)\]/\1/p')
  if [ "$rpath_seen" != '$ORIGIN/../lib' ]; then
    echo "bundle.sh: $exe's RPATH is '$rpath_seen', not \$ORIGIN/../lib" >&2
    exit 1
  fi
done
for f in "$stage"/bin/* "$stage"/lib/*.so*; do
  needed=$(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  echo "  $(basename "$f"): $(echo $needed)"
  for lib in $needed; do
    if [[ $lib =~ libLLVM|libclang|libz3 ]]; then
      echo "bundle.sh: $(basename "$f") needs $lib: GPU nodes lack it" >&2
      exit 1
    fi
    if [[ $lib =~ $system_libs ]] || [ -f "$stage/lib/$lib" ]; then continue; fi
    if [[ $lib =~ $node_cuda_libs ]] && [ "$(basename "$f")" = liboptiml-probe.so ]; then
      continue
    fi
    echo "bundle.sh: $(basename "$f") needs $lib, which is neither shipped nor on every node" >&2
    exit 1
  done
done
# And the loader really takes them from the bundle.
outside=$(env -u LD_LIBRARY_PATH ldd "$stage/bin/clang-optiml" |
            sed -n 's/^[[:space:]]*\([^ ]*\) => \([^ ]*\) .*/\1 \2/p' |
            while read -r soname path; do
              [[ $soname =~ $system_libs ]] ||
                [[ $(realpath -m "$path") == "$stage/lib/"* ]] || echo "$soname ($path)"
            done)
if [ -n "$outside" ]; then
  echo "bundle.sh: clang-optiml loads these from outside the bundle: $outside" >&2
  exit 1
fi
"$stage/bin/clang-optiml" --version
# Where it was built from, for the run records (bench/gpu-run.py reads it).
{
  commit=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
  if [ -n "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
    commit="$commit (with uncommitted changes)"
  fi
  echo "commit: $commit"
  echo "built: $(date -u '+%Y-%m-%d %H:%M UTC')"
} > "$stage/BUILD-INFO"

out=$dist/$name-linux-x86_64.tar.xz
tar -C "$build/stage" -cf - "$name" | xz -9e -T0 > "$out.tmp"
mv "$out.tmp" "$out"
size=$(stat -c %s "$out")
echo "$out: $((size / 1024)) KiB"
if [ "$size" -gt $((20 * 1024 * 1024)) ]; then
  echo "bundle.sh: warning: the bundle is over 20 MiB" >&2
fi
