#!/usr/bin/env bash
# Session 5, every device call (nvidia-h200-x2, repository root, dist/
# carried; the bundle of 26dfdbd): the strategy comparison continues, one
# run per GPU (compare.py --gpus 2: gemv then transpose on GPU 0, softmax
# then spmv_csr on GPU 1). The results directory lives under gpu-state/
# (git-ignored, so it stays on the machine between calls while it is warm;
# on a fresh machine it starts from the committed copy). The first call
# first runs bench/eval/dram_context.py on GPU 0 (about a minute).
#   bash bench/sessions/2026-11-30-s5-call.sh [dram]
# Calls: 1 `bash ... dram`, 2 `bash ...` (both with the limits of T=585,
# then written out as numbers), 3 `T=540 bash ...` (the session's last
# device minutes).
set -u
B=dist/clang-optiml-0.1.0-linux-x86_64.tar.xz
S=gpu-state/strategies
export PATH=/usr/local/cuda/bin:$PATH
s=$(date +%s); el() { echo "[$(( $(date +%s) - s )) s] $*"; }
left() { echo $(( $1 - ($(date +%s) - s) )); }  # seconds until $1 s into the call
if [ ! -d $S ]; then
  el "fresh machine: results from the repository"
  mkdir -p gpu-state && cp -r bench/results/search/strategies $S
else
  el "warm machine: results of the last call"
fi
if [ "${1:-}" = dram ]; then
  el dram_context
  CUDA_VISIBLE_DEVICES=0 timeout 150 python3 bench/eval/dram_context.py --bundle $B \
    --out $OUT/dram > $OUT/dram.log 2>&1; tail -n 12 $OUT/dram.log
fi
el strategies
timeout $(left ${T:-585}) python3 bench/search/compare.py run --bundle $B --results $S \
  --programs gemv,softmax,transpose,spmv_csr --strategies mcts,greedy,random \
  --seeds 1,2,3 --budget 30 --gpus 2 \
  "--extra=--verify-first=1 --no-sanitize --final-rounds=3" \
  --deadline $(left $(( ${T:-585} - 95 ))) --stop-at $(left $(( ${T:-585} - 25 ))) --out $OUT > $OUT/strategies.log 2>&1
el done
grep -E "run\(s\)|exit|deadline" $S/driver.log | tail -n 12
tail -n 20 $OUT/strategies.log
