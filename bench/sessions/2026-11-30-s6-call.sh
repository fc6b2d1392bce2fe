#!/usr/bin/env bash
# Session 6, every device call (nvidia-h200-x2, repository root, dist/
# carried; the bundle of bfa3512, behaviourally the same as 0011b50). Calls:
#   1  bash bench/sessions/2026-11-30-s6-call.sh probe        (562 s)
#   2  T=570 bash bench/sessions/2026-11-30-s6-call.sh > $OUT/call.log 2>&1;
#      then $OUT packed into one all.tgz                       (547 s)
#   3  the same with T=530                                      (474 s)
# Call 1's $OUT held more files than a call brings back: only its logs
# came back (results archive, dram/checks/ncu tables lost; the logs hold
# the tables, and the search results stayed on the warm machine, so calls
# 2-3 packed them). The next session's script packs $OUT into one archive.
# What follows is the script as it was run.
set -u
B=dist/clang-optiml-0.1.0-linux-x86_64.tar.xz
S=gpu-state/strategies
T=${T:-585}
export PATH=/usr/local/cuda/bin:$PATH
s=$(date +%s); el() { echo "[$(( $(date +%s) - s )) s] $*"; }
left() { echo $(( $1 - ($(date +%s) - s) )); }  # seconds until $1 s into the call
if [ ! -d $S ]; then
  el "fresh machine: results from the repository"
  mkdir -p gpu-state && cp -r bench/results/search/strategies $S
else
  el "warm machine: results of the last call"
fi
lane() { # gpu programs outdir
  CUDA_VISIBLE_DEVICES=$1 timeout $(left $T) python3 bench/search/compare.py run \
    --bundle $B --results $S --programs $2 --strategies mcts,greedy,random \
    --seeds 1,2,3 --budget 30 "--extra=--verify-first=1 --no-sanitize --final-rounds=3" \
    --deadline $(left $(( T - 95 ))) --stop-at $(left $(( T - 25 ))) \
    --out $OUT/$3 > $OUT/$3.log 2>&1
}
probe_experiments() {
  el dram_context
  CUDA_VISIBLE_DEVICES=1 timeout 200 python3 bench/eval/dram_context.py --bundle $B \
    --out $OUT/dram > $OUT/dram.log 2>&1
  el probe_gpu_checks
  CUDA_VISIBLE_DEVICES=1 timeout 150 python3 bench/eval/probe_gpu_checks.py --bundle $B \
    --out $OUT/checks > $OUT/checks.log 2>&1
  # eval against ncu: all five programs as shipped, then prog.cu (the one
  # with several target kernels) under each metrics experiment.
  el ncu_compare
  CUDA_VISIBLE_DEVICES=1 timeout 150 python3 bench/eval/ncu_compare.py --bundle $B \
    --out $OUT/ncu-default > $OUT/ncu-default.log 2>&1
  CUDA_VISIBLE_DEVICES=1 OPTIML_PROBE_FRESH_PROFILER=1 timeout 100 python3 \
    bench/eval/ncu_compare.py --bundle $B --out $OUT/ncu-fresh test/Inputs/eval/prog.cu \
    > $OUT/ncu-fresh.log 2>&1
  CUDA_VISIBLE_DEVICES=1 OPTIML_METRICS_PER_KERNEL=1 timeout 100 python3 \
    bench/eval/ncu_compare.py --bundle $B --out $OUT/ncu-perkernel test/Inputs/eval/prog.cu \
    > $OUT/ncu-perkernel.log 2>&1
  CUDA_VISIBLE_DEVICES=1 OPTIML_PROBE_RESTORE_WRITTEN_ONLY=1 timeout 150 python3 \
    bench/eval/ncu_compare.py --bundle $B --out $OUT/ncu-written > $OUT/ncu-written.log 2>&1
  el "probe experiments done"
}
( [ "${1:-}" = probe ] && probe_experiments
  el "lane 1: spmv_csr"; lane 1 spmv_csr lane1 ) &
el "lane 0: gemv, transpose"
lane 0 gemv,transpose lane0
wait
el done
[ -f $OUT/dram.log ] && tail -n 26 $OUT/dram.log
[ -f $OUT/checks.log ] && tail -n 4 $OUT/checks.log
for v in default fresh perkernel written; do
  [ -f $OUT/ncu-$v.log ] && { echo "== ncu $v"; grep -E "FAIL|within" $OUT/ncu-$v.log; }
done
python3 - "$S" "$OUT" <<'PY'
import os, sys
sys.path.insert(0, "bench/search")
import compare
print("packed", compare.pack(sys.argv[1], sys.argv[2], "strategies"))
PY
rm -f $OUT/lane0/search-results.tar.gz $OUT/lane1/search-results.tar.gz
grep -E "exit|deadline|run\(s\)" $S/driver.log | tail -n 14
python3 bench/search/compare.py summarize $S | head -n 16
