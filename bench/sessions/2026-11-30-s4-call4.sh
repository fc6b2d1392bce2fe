#!/usr/bin/env bash
# Session 4, device call 4 (nvidia-h200-x2, repository root, dist/ carried;
# the bundle of call 3), about 5 minutes: the session's last device time.
# GPU 0: the column's cg resumes (its final check), then the suite's dot and
# cg rows are measured into bench/results/2026-11-30-s4-suite (the other
# kernels are kept: run.py skips kernels already measured).
# GPU 1, in the background: the strategy comparison continues on softmax.
set -u
B=dist/clang-optiml-0.1.0-linux-x86_64.tar.xz
R=bench/results/search/2026-11-30-column
S=bench/results/search/strategies
export PATH=/usr/local/cuda/bin:$PATH
s=$(date +%s); el() { echo "[$(( $(date +%s) - s )) s] $*"; }
left() { echo $(( $1 - ($(date +%s) - s) )); }  # seconds until $1 s into the call
( export CUDA_VISIBLE_DEVICES=1
  timeout $(left 285) python3 bench/search/compare.py run --bundle $B --results $S \
    --programs softmax --strategies mcts,greedy,random --seeds 1,2,3 --budget 30 \
    "--extra=--verify-first=1 --no-sanitize --final-rounds=3" \
    --deadline $(left 200) --stop-at $(left 270) --out $OUT/s1 > $OUT/strategies-1.log 2>&1 ) &
export CUDA_VISIBLE_DEVICES=0
el column cg
timeout 170 python3 bench/search/compare.py run --bundle $B --results $R \
    --programs cg --budget 10 --strategies mcts --seeds 1 \
    "--extra=--verify-first=3 --verify-last=false --no-sanitize --final-rounds=3" \
    --deadline 10 --stop-at 160 --out $OUT/a > $OUT/column-a.log 2>&1
grep -E "cg mcts" $OUT/column-a.log
python3 bench/search/compare.py export-optimized $R --out $R/optimized
el suite rows
mkdir -p $OUT/suite && cp -r bench/results/2026-11-30-s4-suite/. $OUT/suite/ && rm -f $OUT/suite/kernels/dot.json $OUT/suite/kernels/cg.json
timeout $(left 280) python3 bench/run.py --out $OUT/suite --kernels dot,cg --optimized-dir $R/optimized --jobs 16 --timeout 60 --deadline $(left 240) > $OUT/suite.log 2>&1; grep -E "^\| (dot|cg) |Geomean" $OUT/suite.log
tar czf $OUT/suite.tar.gz -C $OUT suite && rm -rf $OUT/suite
wait
el done
tail -n 4 $OUT/strategies-1.log
