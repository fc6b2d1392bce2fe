#!/usr/bin/env bash
# Session 3, device call 3 (nvidia-h200-x2, repository root, dist/ carried;
# bundle with the buffer-scale tolerance for precision-changing edits, and the
# program's own launch as the first profiled pass).
# GPU 1, in the background: the optimized column continues (gemv again, then
# the rest of its half). GPU 0: the probe's GPU checks, the SIGKILL/--resume
# demonstration, then the other half of the column.
set -u
B=dist/clang-optiml-0.1.0-linux-x86_64.tar.xz
R=bench/results/search/2026-11-30-column
export PATH=/usr/local/cuda/bin:$PATH
s=$(date +%s); el() { echo "[$(( $(date +%s) - s )) s] $*"; }
left() { echo $(( $1 - ($(date +%s) - s) )); }  # seconds until $1 s into the call
COL=(--budget 10 --strategies mcts --seeds 1 "--extra=--verify-first=1 --no-sanitize --final-rounds=3")
( export CUDA_VISIBLE_DEVICES=1; timeout $(left 575) python3 bench/search/compare.py run --bundle $B --results $R \
    --programs gemv,histogram,axpy,dot,scan,bias_gelu,batched_gemm_small "${COL[@]}" \
    --deadline $(left 450) --stop-at $(left 545) --out $OUT/a > $OUT/column-a.log 2>&1 ) &
export CUDA_VISIBLE_DEVICES=0
el probe checks
timeout 200 python3 bench/eval/probe_gpu_checks.py --bundle $B --out $OUT/probe > $OUT/probe.log 2>&1; echo "rc=$?"; tail -22 $OUT/probe.log
el resume demo
timeout 200 python3 bench/search/resume_demo.py --bundle $B --out $OUT/resume > $OUT/resume.log 2>&1; echo "rc=$?"; cat $OUT/resume.log
el ncu compare
timeout 130 python3 bench/eval/ncu_compare.py --bundle $B --out $OUT/ncu --deadline 95 > $OUT/ncu.log 2>&1; grep -E "FAIL|within" $OUT/ncu.log
el column b
timeout $(left 575) python3 bench/search/compare.py run --bundle $B --results $R \
    --programs transpose,conv2d,jacobi2d,stencil3d7,cg,sgemm "${COL[@]}" \
    --deadline $(left 450) --stop-at $(left 545) --out $OUT/b > $OUT/column-b.log 2>&1
wait
el done
tail -n 12 $OUT/column-a.log; tail -n 4 $OUT/column-b.log
cd $OUT && tar czf checks.tar.gz probe resume ncu && rm -rf probe resume ncu
