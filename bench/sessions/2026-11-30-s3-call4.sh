#!/usr/bin/env bash
# Session 3, device call 4 (nvidia-h200-x2, repository root, dist/ carried;
# the bundle of call 3): the optimized column continues on both GPUs
# (axpy resumes from its journal), within the session's last device minutes.
set -u
B=dist/clang-optiml-0.1.0-linux-x86_64.tar.xz
R=bench/results/search/2026-11-30-column
export PATH=/usr/local/cuda/bin:$PATH
s=$(date +%s); el() { echo "[$(( $(date +%s) - s )) s] $*"; }
COL=(--budget 10 --strategies mcts --seeds 1 "--extra=--verify-first=1 --no-sanitize --final-rounds=3")
( export CUDA_VISIBLE_DEVICES=1; timeout 390 python3 bench/search/compare.py run --bundle $B --results $R \
    --programs axpy,dot,scan,bias_gelu,batched_gemm_small "${COL[@]}" \
    --deadline 200 --stop-at 370 --out $OUT/a > $OUT/column-a.log 2>&1 ) &
export CUDA_VISIBLE_DEVICES=0
timeout 390 python3 bench/search/compare.py run --bundle $B --results $R \
    --programs jacobi2d,stencil3d7,cg,sgemm "${COL[@]}" \
    --deadline 200 --stop-at 370 --out $OUT/b > $OUT/column-b.log 2>&1
wait
el done
tail -n 14 $OUT/column-a.log; tail -n 5 $OUT/column-b.log
