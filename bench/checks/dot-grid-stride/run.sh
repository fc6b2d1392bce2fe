#!/usr/bin/env bash
# On a GPU node, from the repository root, with a bundle built at 16a54f3 or
# later in dist/: `warp-reduce grid_stride` on the suite's dot (one element
# per thread, a block tree, one atomic per block) with three grid caps,
# each evaluated against the original. Writes $OUT/dot-gs-*.cu, apply-*.txt
# and eval-*.txt. Under 5 minutes.
set -u
export PATH=/usr/local/cuda/bin:$PATH
W=$(mktemp -d); tar xJf dist/clang-optiml-0.1.0-linux-x86_64.tar.xz -C $W
B=$(ls -d $W/clang-optiml-*)/bin/clang-optiml
for M in 1056 528 2112; do
  echo "{\"kind\":\"warp-reduce\",\"target\":\"dot\",\"params\":{\"grid_stride\":true,\"max_blocks\":$M,\"changes_precision\":true}}" > $OUT/edit-$M.json
  if $B apply bench/kernels/dot/naive.cu --edit $OUT/edit-$M.json -o $OUT/dot-gs-$M.cu > $OUT/apply-$M.txt 2>&1; then
    timeout 90 $B eval $OUT/dot-gs-$M.cu --against bench/kernels/dot/naive.cu --verify-first 1 > $OUT/eval-$M.txt 2>&1
    echo "rc=$?" >> $OUT/eval-$M.txt
  fi
  tail -n 12 $OUT/eval-$M.txt 2>/dev/null || cat $OUT/apply-$M.txt
done
