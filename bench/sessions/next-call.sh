#!/usr/bin/env bash
# Prepared in session 5 for the next session's device calls (nvidia-h200-x2,
# repository root, dist/ carried; rename to <date>-sN-callK.sh when run).
# The strategy comparison continues in two lanes on one results directory
# kept on the warm machine under gpu-state/ (git-ignored; a fresh machine
# starts from the committed copy):
#   GPU 1: with "probe" first bench/eval/dram_context.py,
#          bench/eval/probe_gpu_checks.py and bench/eval/ncu_compare.py (as
#          shipped; on prog.cu with OPTIML_PROBE_FRESH_PROFILER=1 and with
#          OPTIML_METRICS_PER_KERNEL=1; on all five with
#          OPTIML_PROBE_RESTORE_WRITTEN_ONLY=1: docs/eval.md; about 7-8
#          minutes in all), then spmv_csr
#          (9 runs, mcts seed 1 resumes)
#   GPU 0: gemv (random seed 3 resumes), then transpose (9 runs)
# At the end the results directory is packed once into
# $OUT/search-results.tar.gz (extract it into bench/results/search/).
#   T=585 bash bench/sessions/next-call.sh [probe]
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
