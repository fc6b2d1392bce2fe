#!/usr/bin/env bash
# The CMake package end to end on a GPU node, through the bundle, as a user
# types it (docs/cmake.md): examples/cmake-project (three translation units:
# a kernel in an included .cu, one in a header, a static library) is
# configured and built, app-optimize searches and records, the rebuild
# takes the tuned kernels from the database; the rebuilt program's output
# is compared with the original's and its kernels are timed against the
# original's with ncu; then one source changes and only its variant stops
# being served.
#
#   python3 bench/gpu-run.py cmake-project [--phase search|check]
#
# which runs, from the repository root,
#
#   bash scripts/gpu-cmake-project.sh search BUNDLE  # configure, build, app-optimize
#   bash scripts/gpu-cmake-project.sh check          # rebuild, compare, time, change
#
# (BUNDLE defaults to dist/clang-optiml-*-linux-x86_64.tar.xz). State lives
# in $STATE (default gpu-state/cmake-project, ignored by git), so the two
# steps can run as two calls on the same machine. Logs go to $OUT when set.
set -u
R=$PWD
S=${STATE:-gpu-state/cmake-project}
mkdir -p "$S" && S=$(cd "$S" && pwd)
LOG=${OUT:-$S}
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$S" "$LOG"
if [ "${1:-}" = search ]; then
  # The bundle of this working tree, unpacked afresh.
  rm -rf "$S/unpack" "$S/prefix" && mkdir -p "$S/unpack"
  if [ -n "${2:-}" ]; then
    tar -C "$S/unpack" -xJf "$2" || exit 1
  else
    tar -C "$S/unpack" -xJf dist/clang-optiml-*-linux-x86_64.tar.xz || exit 1
  fi
  mv "$S"/unpack/clang-optiml-* "$S/prefix"
fi
P=$S/prefix
W=$S/proj

case "${1:-}" in
search)
  rm -rf "$W" && cp -r "$R/examples/cmake-project" "$W" && cd "$W"
  "$P/bin/clang-optiml" --version
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  cmake -S . -B build -G Ninja -DCMAKE_PREFIX_PATH="$P" || exit 1
  cmake --build build || exit 1
  ./build/app | tee "$S/original.out"
  cp build/app "$S/app.original"
  time cmake --build build --target app-optimize 2>&1 | tee "$LOG/app-optimize.log"
  "$P/bin/clang-optiml" db list -p build | tee "$LOG/db-list.txt"
  ;;
check)
  cd "$W" || exit 1
  cmake --build build 2>&1 | tee "$LOG/rebuild.log"
  ./build/app | tee "$S/tuned.out"
  # The program's own output: PASS, and checksums within 1e-5 relative.
  python3 - "$S/original.out" "$S/tuned.out" <<'PY' | tee "$LOG/compare.txt"
import sys
a = open(sys.argv[1]).read().split("\n"); b = open(sys.argv[2]).read().split("\n")
ok = len(a) == len(b)
for x, y in zip(a, b):
    if ":" in x and ":" in y:
        u, v = float(x.split(":")[1]), float(y.split(":")[1])
        good = abs(u - v) <= 1e-5 * max(1.0, abs(u))
        print(f"{x.split(':')[0]}: {u:.6e} vs {v:.6e} {'ok' if good else 'DIFFERS'}")
        ok &= good
    elif x != y:
        print(f"{x!r} vs {y!r} DIFFERS"); ok = False
print("outputs match" if ok else "outputs DIFFER")
PY
  # Kernel times, original and tuned binaries, 5 runs each (ncu's
  # gpu__time_duration of every kernel launch).
  for bin in "$S/app.original" build/app; do
    for i in 1 2 3 4 5; do
      ncu --csv --metrics gpu__time_duration.sum "$bin" 2>/dev/null |
        awk -F'","' -v b="$(basename "$bin")" '/gpu__time_duration/ {gsub(/"/,"",$NF); print b "," $5 "," $(NF-1) "," $NF}'
    done
  done | tee "$LOG/kernel-times.csv"
  # One source changes: only its variant stops being served.
  echo "// edited" >> src/transpose.cu
  cmake --build build 2>&1 | tee "$LOG/rebuild-after-change.log"
  "$P/bin/clang-optiml" db list -p build | tee "$LOG/db-list-after-change.txt"
  ;;
*)
  echo "usage: $0 search [BUNDLE] | check" >&2; exit 2 ;;
esac
