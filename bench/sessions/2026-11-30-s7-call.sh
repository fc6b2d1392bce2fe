#!/usr/bin/env bash
# Session 7's calls 1 and 2 (2026-11-30, nvidia-h200-x2, dist/ carried):
#   call 1 (17:05, cold machine, 563 s): T=585 bash bench/sessions/2026-11-30-s7-call.sh probe
#   call 2 (17:14, warm machine, 464 s): T=585 bash bench/sessions/2026-11-30-s7-call.sh
# (each > $OUT/call.log 2>&1). Call 1 ran the probe part and left
# spmv_csr random seed 3, transpose mcts/greedy seed 3 and transpose random
# seed 3 (stopped midway, resumed) to call 2, which finished all 36 runs.
# Prepared in session 6 (as bench/sessions/next-call.sh).
# After these calls OPTIML_PROBE_WARMUP, OPTIML_METRICS_DRAM_ONE_PASS and
# OPTIML_PROBE_L2_CLEAN were removed from eval (measured no effect): to run
# this again, build the bundle at 2b3f159.
#
# Two bundles travel in dist/: dist/strategies/ holds the one the strategy
# comparison began with (bfa3512: range profiler reused between launches),
# so its last runs are judged like its first; dist/ holds the current one
# (fresh profiler per profiled launch), which the probe part measures.
#
# The last 7 runs of the strategy comparison, in two lanes on one results
# directory kept on the warm machine under gpu-state/ (git-ignored; a fresh
# machine starts from the committed copy); the lanes never share a run:
#   GPU 0: transpose random, seeds 2 and 3 (about 5 minutes each)
#   GPU 1: with "probe" first (about 8 minutes, current bundle):
#            bench/eval/ncu_compare.py as shipped, all five programs, and
#            once more on prog.cu (a second sample of its small kernels),
#            and on prog.cu with OPTIML_PROBE_WARMUP=1 (one unprofiled
#            launch before the passes: saxpy's duration), and on
#            reduction, matmul and prog.cu with
#            OPTIML_METRICS_DRAM_ONE_PASS=1 (DRAM bytes from a 1-pass run);
#            bench/eval/dram_context.py (saxpy's DRAM write and duration,
#            fresh/reused profiler, warm-up);
#            bench/eval/dram_single.py (block_sum's and matmul's DRAM
#            writes: 1-pass counts, CUPTI kernel replay, ncu's spread, ncu
#            application replay);
#            bench/eval/probe_gpu_checks.py
#          then spmv_csr (mcts, greedy, random seed 3) and transpose mcts
#          and greedy seed 3.
# At the end everything under $OUT is packed into $OUT/all.tgz (a call
# brings back only a few files): extract it, then extract its
# search-results.tar.gz into bench/results/search/.
#   T=585 bash bench/sessions/next-call.sh [probe] > $OUT/call.log 2>&1; tail -n 60 $OUT/call.log
set -u
B=dist/clang-optiml-0.1.0-linux-x86_64.tar.xz
BS=dist/strategies/clang-optiml-0.1.0-linux-x86_64.tar.xz
S=gpu-state/strategies
T=${T:-585}
export PATH=/usr/local/cuda/bin:$PATH
for b in $B $BS; do
  [ -f $b ] || { echo "missing $b (dist/strategies/: tools/bundle.sh at bfa3512, moved there)"; exit 2; }
done
s=$(date +%s); el() { echo "[$(( $(date +%s) - s )) s] $*"; }
left() { echo $(( $1 - ($(date +%s) - s) )); }  # seconds until $1 s into the call
if [ ! -d $S ]; then
  el "fresh machine: results from the repository"
  mkdir -p gpu-state && cp -r bench/results/search/strategies $S
else
  el "warm machine: results of the last call"
fi
lane() { # gpu outdir programs strategies seeds
  CUDA_VISIBLE_DEVICES=$1 timeout $(left $T) python3 bench/search/compare.py run \
    --bundle $BS --results $S --programs $3 --strategies $4 \
    --seeds $5 --budget 30 "--extra=--verify-first=1 --no-sanitize --final-rounds=3" \
    --deadline $(left $(( T - 95 ))) --stop-at $(left $(( T - 25 ))) \
    --out $OUT/$2 >> $OUT/$2.log 2>&1
}
probe_experiments() {
  el "ncu_compare as shipped"
  CUDA_VISIBLE_DEVICES=1 timeout 150 python3 bench/eval/ncu_compare.py --bundle $B \
    --out $OUT/ncu-shipped > $OUT/ncu-shipped.log 2>&1
  CUDA_VISIBLE_DEVICES=1 timeout 100 python3 bench/eval/ncu_compare.py --bundle $B \
    --out $OUT/ncu-shipped-prog2 test/Inputs/eval/prog.cu > $OUT/ncu-shipped-prog2.log 2>&1
  CUDA_VISIBLE_DEVICES=1 OPTIML_PROBE_WARMUP=1 timeout 100 python3 bench/eval/ncu_compare.py \
    --bundle $B --out $OUT/ncu-warmup test/Inputs/eval/prog.cu > $OUT/ncu-warmup.log 2>&1
  CUDA_VISIBLE_DEVICES=1 OPTIML_METRICS_DRAM_ONE_PASS=1 timeout 120 python3 \
    bench/eval/ncu_compare.py --bundle $B --out $OUT/ncu-onepass examples/reduction.cu \
    examples/matmul.cu test/Inputs/eval/prog.cu > $OUT/ncu-onepass.log 2>&1
  el dram_context
  CUDA_VISIBLE_DEVICES=1 timeout 200 python3 bench/eval/dram_context.py --bundle $B \
    --out $OUT/dram-context > $OUT/dram-context.log 2>&1
  el dram_single
  CUDA_VISIBLE_DEVICES=1 timeout 360 python3 bench/eval/dram_single.py --bundle $B \
    --out $OUT/dram-single > $OUT/dram-single.log 2>&1
  el probe_gpu_checks
  CUDA_VISIBLE_DEVICES=1 timeout 150 python3 bench/eval/probe_gpu_checks.py --bundle $B \
    --out $OUT/checks > $OUT/checks.log 2>&1
  el "probe experiments done"
}
( [ "${1:-}" = probe ] && probe_experiments
  el "lane 1: spmv_csr, transpose mcts/greedy seed 3"
  lane 1 lane1 spmv_csr mcts,greedy,random 1,2,3
  lane 1 lane1 transpose mcts,greedy 3 ) &
el "lane 0: transpose random seeds 2, 3"
lane 0 lane0 transpose random 2,3
wait
el done
[ -f $OUT/dram-context.log ] && tail -n 26 $OUT/dram-context.log
[ -f $OUT/dram-single.log ] && tail -n 36 $OUT/dram-single.log
[ -f $OUT/checks.log ] && tail -n 4 $OUT/checks.log
for v in shipped shipped-prog2 warmup onepass; do
  [ -f $OUT/ncu-$v.log ] && { echo "== ncu $v"; grep -E "FAIL|within" $OUT/ncu-$v.log; }
done
python3 - "$S" "$OUT" <<'PY'
import os, sys
sys.path.insert(0, "bench/search")
import compare
print("packed", compare.pack(sys.argv[1], sys.argv[2], "strategies"))
PY
rm -rf $OUT/lane0 $OUT/lane1
grep -E "exit|deadline|run\(s\)" $S/driver.log | tail -n 10
python3 bench/search/compare.py summarize $S | head -n 18
# One archive: a call brings back only a few files.
( cd $OUT && tar czf ../all.tgz --exclude=call.log . && find . -mindepth 1 -not -name call.log -delete \
  && mv ../all.tgz . && ls -la )
