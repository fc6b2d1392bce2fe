#!/bin/sh
# On the GPU node, from the repository root: builds and runs each variant's
# optimized.cu (nvcc -O3 -arch=sm_90, as bench/run.py does) and collects its
# BENCH and CHECK lines in $OUT/histogram-variants.txt ("restructure" is
# the recorded edit). About a minute.
set -e
here=bench/results/restructure-histogram-variants
nvcc=${NVCC:-nvcc}
mkdir -p "$OUT"
# The recorded edit (bench/results/restructure/histogram) first, for a
# same-session comparison.
for d in bench/results/restructure/histogram "$here"/*/histogram; do
  v=$(basename "$(dirname "$d")")
  "$nvcc" -O3 -arch=sm_90 -std=c++17 -Xptxas -v -o "$OUT/$v" "$d/optimized.cu" 2> "$OUT/$v.ptxas.txt"
  echo "== $v $(grep -o 'Used [0-9]* registers' "$OUT/$v.ptxas.txt" | head -1)" | tee -a "$OUT/histogram-variants.txt"
  timeout 90 "$OUT/$v" > "$OUT/$v.log" 2>&1 || true
  if grep -q '^BENCH' "$OUT/$v.log"; then
    grep -E '^(BENCH|CHECK)' "$OUT/$v.log" | tee -a "$OUT/histogram-variants.txt"
  else
    { echo "$v failed:"; tail -3 "$OUT/$v.log"; } | tee -a "$OUT/histogram-variants.txt"
  fi
done
