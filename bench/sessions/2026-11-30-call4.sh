#!/usr/bin/env bash
# Device call 4 of 2026-11-30 (bundle at 360c6ea): the first strategy-comparison
# runs (state in bench/results/search/2026-11-30). The 60 s per-run limit let
# only 1-2 evaluations happen per run: not a comparison (docs/benchmarks.md).
export PATH=/usr/local/cuda/bin:$PATH
timeout 560 python3 bench/search/compare.py run --bundle dist/clang-optiml-0.1.0-linux-x86_64.tar.xz \
  --results bench/results/search/2026-11-30 --programs transpose,softmax --strategies mcts,greedy,random \
  --seeds 1 --budget 30 --time-per-run 60s --deadline 400 --stop-at 530 --out $OUT > $OUT/compare.log 2>&1
echo rc=$?; tail -30 $OUT/compare.log
python3 bench/search/compare.py summarize bench/results/search/2026-11-30 | tee $OUT/summary.md
