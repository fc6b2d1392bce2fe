#!/bin/sh
# Applies each parameter set of variants.json (privatize-atomics on the
# histogram kernel) to bench/kernels/histogram/naive.cu, labels the BENCH
# line "optimized" as RestructureBenchTest does, and writes
# <variant>/histogram/optimized.cu. Needs a clang-optiml build and the SDK.
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$here/../../..
tool=${CLANG_OPTIML:-clang-optiml}
for v in $(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))))' "$here/variants.json"); do
  mkdir -p "$here/$v/histogram"
  python3 - "$here/variants.json" "$v" > "$here/$v/histogram/edit.json" <<'PY'
import json, sys
params = json.load(open(sys.argv[1]))[sys.argv[2]]
print(json.dumps({"kind": "privatize-atomics", "target": "histogram", "params": params}))
PY
  "$tool" apply "$root/bench/kernels/histogram/naive.cu" --edit "$here/$v/histogram/edit.json" -o "$here/$v/histogram/optimized.cu"
  sed -i 's/"histogram", "naive"/"histogram", "optimized"/' "$here/$v/histogram/optimized.cu"
done
