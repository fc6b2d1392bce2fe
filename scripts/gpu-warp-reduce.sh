#!/usr/bin/env bash
# On a GPU node: apply warp-reduce to two shared-memory tree reductions
# (examples/reduction.cu, integer sum with one atomicAdd per block; a float
# sum with a warp tail and a per-block store) with the bundle, and evaluate
# each against its original: verified launch by launch, timed, profiled.
# When the bundle predates the tree form, apply fails and the result kept in
# test/Inputs/edit/warp-reduce/*.expected.cu (byte-identical to what apply
# writes here, checked by test/edit/warp-reduce.test) is evaluated.
#
#   scripts/gpu-warp-reduce.sh dist/clang-optiml-0.1.0-linux-x86_64.tar.xz
#
# Results (logs, JSON reports, the rewritten sources) go under $OUT (or
# ./gpu-results).
set -uo pipefail
bundle=$1
out=${OUT:-$PWD/gpu-results}
mkdir -p "$out"
work=$(mktemp -d)
tar -C "$work" -xJf "$bundle"
tool=$(ls -d "$work"/clang-optiml-*)/bin/clang-optiml
export PATH=/usr/local/cuda/bin:$PATH
inputs=test/Inputs/edit/warp-reduce

one() { # name original kernel changes_precision expected
  local name=$1 orig=$2 kernel=$3 prec=$4 expected=$5
  echo "{\"kind\":\"warp-reduce\",\"target\":\"$kernel\",\"params\":{\"changes_precision\":$prec}}" \
    > "$out/$name.edit.json"
  echo "== $name: apply warp-reduce to $orig"
  if "$tool" apply "$orig" --edit "$out/$name.edit.json" -o "$out/$name.cu"; then
    cmp -s "$out/$name.cu" "$expected" && echo "same as $expected" ||
      echo "differs from $expected (bundle and repository disagree)"
  else
    echo "apply failed: evaluating $expected instead"
    cp "$expected" "$out/$name.cu"
  fi
  local extra=()
  [ "$prec" = true ] && extra=(--precision-changing)
  echo "== $name: eval against $orig"
  "$tool" eval "$out/$name.cu" --against "$orig" --kernel "$kernel" --json \
    "${extra[@]}" > "$out/$name.eval.json"
  echo "exit $?"
  head -c 4000 "$out/$name.eval.json"; echo
}

{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  "$tool" --version
  one reduction examples/reduction.cu block_sum false \
    "$inputs/reduction.expected.cu"
  one block_sums_float "$inputs/block_sums_float.cu" block_sums true \
    "$inputs/block_sums_float.expected.cu"
} 2>&1 | tee "$out/warp-reduce.log"
ls -la "$out"
