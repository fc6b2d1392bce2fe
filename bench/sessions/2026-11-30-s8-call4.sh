#!/usr/bin/env bash
# Session 8's call 4 (2026-11-30, nvidia-h200; bundle built from the
# commit that adds this script's parent, "the verdict says when memory-bound
# means on-chip memory"):
#   T=360 bash bench/sessions/2026-11-30-s8-call4.sh > $OUT/call.log 2>&1
# Results: bench/results/eval/2026-11-30-s8/call4/.
# The verdict line of every bundled example from the shipped bundle
# (eval --json, metrics on), then bench/eval/ncu_compare.py on all five
# programs as shipped.
set -u
B=dist/clang-optiml-0.1.0-linux-x86_64.tar.xz
T=${T:-360}
export PATH=/usr/local/cuda/bin:$PATH
[ -f $B ] || { echo "missing $B (tools/bundle.sh)"; exit 2; }
s=$(date +%s); el() { echo "[$(( $(date +%s) - s )) s] $*"; }
W=$(mktemp -d); tar -C $W -xJf $B; TOOL=$(ls -d $W/clang-optiml-*)/bin/clang-optiml
$TOOL --version
for ex in saxpy transpose reduction matmul; do
  el "eval $ex"
  $TOOL eval examples/$ex.cu --json --no-sanitize --verify-first 1 --cache-dir $W/cache \
    > $OUT/$ex.eval.json 2> $OUT/$ex.eval.stderr
  python3 -c "import json,sys;d=json.load(open('$OUT/$ex.eval.json'));[print('$ex', k['name'], k['time'].get('median_ms'), '|', k['metrics'].get('verdict')) for k in d['kernels']]"
done
left=$(( T - ($(date +%s) - s) - 10 ))
el "ncu_compare ($left s left)"
timeout $left python3 bench/eval/ncu_compare.py --bundle $B --out $OUT/ncu > $OUT/ncu.log 2>&1
grep -E "FAIL|within" $OUT/ncu.log
el done
( cd $OUT && tar czf ../all.tgz --exclude=call.log . && find . -mindepth 1 -not -name call.log -delete \
  && mv ../all.tgz . && ls -la )
