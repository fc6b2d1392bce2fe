#!/usr/bin/env bash
# Session 4, device call 1 (nvidia-h200-x2, repository root, dist/ carried;
# bundle at 8c80381: DRAM byte counts from a one-pass session on the
# program's own launch).
# GPU 1, in the background: three of the optimized column's last four programs.
# GPU 0: ncu side by side, the probe's GPU checks, warp-reduce grid_stride
# on dot, then the column continues.
set -u
B=dist/clang-optiml-0.1.0-linux-x86_64.tar.xz
R=bench/results/search/2026-11-30-column
export PATH=/usr/local/cuda/bin:$PATH
s=$(date +%s); el() { echo "[$(( $(date +%s) - s )) s] $*"; }
left() { echo $(( $1 - ($(date +%s) - s) )); }  # seconds until $1 s into the call
COL=(--budget 10 --strategies mcts --seeds 1 "--extra=--verify-first=1 --no-sanitize --final-rounds=3")
( export CUDA_VISIBLE_DEVICES=1; timeout $(left 575) python3 bench/search/compare.py run --bundle $B --results $R \
    --programs bias_gelu,cg,batched_gemm_small "${COL[@]}" \
    --deadline $(left 450) --stop-at $(left 545) --out $OUT/a > $OUT/column-a.log 2>&1 ) &
export CUDA_VISIBLE_DEVICES=0
el ncu compare
timeout 130 python3 bench/eval/ncu_compare.py --bundle $B --out $OUT/ncu --deadline 95 > $OUT/ncu.log 2>&1; grep -E "FAIL|within|dram__bytes_write" $OUT/ncu.log
el probe checks
timeout 200 python3 bench/eval/probe_gpu_checks.py --bundle $B --out $OUT/probe > $OUT/probe.log 2>&1; echo "rc=$?"; tail -22 $OUT/probe.log
el dot grid_stride
mkdir -p $OUT/dot; OUT=$OUT/dot timeout 200 bash bench/checks/dot-grid-stride/run.sh > $OUT/dot.log 2>&1; tail -n 40 $OUT/dot.log
el column b
timeout $(left 575) python3 bench/search/compare.py run --bundle $B --results $R \
    --programs sgemm "${COL[@]}" \
    --deadline $(left 450) --stop-at $(left 545) --out $OUT/b > $OUT/column-b.log 2>&1
wait
el done
tail -n 12 $OUT/column-a.log; tail -n 4 $OUT/column-b.log
cd $OUT && tar czf checks.tar.gz probe ncu dot && rm -rf probe ncu dot
