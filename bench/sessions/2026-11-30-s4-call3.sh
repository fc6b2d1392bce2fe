#!/usr/bin/env bash
# Session 4, device call 3 (nvidia-h200-x2, repository root, dist/ carried;
# bundle at the commit that adds this script: DRAM counts from the replays
# again, self-check judged element by element).
# GPU 1, in the background: the strategy comparison starts on softmax.
# GPU 0: the column's cg (last launch not verified: its atomicAdd dot products make
# the 1300th launch disagree between two runs of the original), the column's
# sources exported, the suite's event-timed optimized column
# (bench/run.py --optimized-dir), then the strategy comparison on gemv.
set -u
B=dist/clang-optiml-0.1.0-linux-x86_64.tar.xz
R=bench/results/search/2026-11-30-column
S=bench/results/search/strategies
export PATH=/usr/local/cuda/bin:$PATH
s=$(date +%s); el() { echo "[$(( $(date +%s) - s )) s] $*"; }
left() { echo $(( $1 - ($(date +%s) - s) )); }  # seconds until $1 s into the call
( export CUDA_VISIBLE_DEVICES=1
  timeout $(left 580) python3 bench/search/compare.py run --bundle $B --results $S \
    --programs softmax --strategies mcts,greedy,random --seeds 1,2,3 --budget 30 \
    "--extra=--verify-first=1 --no-sanitize --final-rounds=3" \
    --deadline $(left 500) --stop-at $(left 560) --out $OUT/s1 > $OUT/strategies-1.log 2>&1 ) &
export CUDA_VISIBLE_DEVICES=0
el column cg
timeout 260 python3 bench/search/compare.py run --bundle $B --results $R \
    --programs cg --budget 10 --strategies mcts --seeds 1 \
    "--extra=--verify-first=3 --verify-last=false --no-sanitize --final-rounds=3" \
    --deadline 10 --stop-at 240 --out $OUT/a > $OUT/column-a.log 2>&1
grep -E "cg mcts" $OUT/column-a.log
python3 bench/search/compare.py export-optimized $R --out $R/optimized
el suite, optimized column
timeout 200 python3 bench/run.py --out $OUT/suite --optimized-dir $R/optimized --jobs 16 --timeout 90 --deadline 150 > $OUT/suite.log 2>&1; tail -n 30 $OUT/suite.log
tar czf $OUT/suite.tar.gz -C $OUT suite && rm -rf $OUT/suite
el strategies
timeout $(left 580) python3 bench/search/compare.py run --bundle $B --results $S \
    --programs gemv --strategies mcts,greedy,random --seeds 1,2,3 --budget 30 \
    "--extra=--verify-first=1 --no-sanitize --final-rounds=3" \
    --deadline $(left 500) --stop-at $(left 560) --out $OUT/s0 > $OUT/strategies-0.log 2>&1
wait
el done
head -n 12 $OUT/strategies-0.log $OUT/strategies-1.log
