#!/usr/bin/env bash
# Session 3, device call 2 (nvidia-h200-x2, repository root, dist/ carried).
# GPU 1, in the background: the optimized column (optimize, catalog policy,
# mcts, seed 1, budget 10) on half of the suite. GPU 0: the probe's GPU
# checks and ncu side by side (L2 clean now reads 4x L2; last launch matched
# by being last), then the other half of the suite. Both halves resume in the
# next call; results under bench/results/search/2026-11-30-column.
set -u
B=dist/clang-optiml-0.1.0-linux-x86_64.tar.xz
R=bench/results/search/2026-11-30-column
export PATH=/usr/local/cuda/bin:$PATH
s=$(date +%s); el() { echo "[$(( $(date +%s) - s )) s] $*"; }
left() { echo $(( $1 - ($(date +%s) - s) )); }  # seconds until $1 s into the call
# Sanity first: a short search with candidates timed in their verification run.
W=$(mktemp -d); tar -C $W -xJf $B; T=$(ls -d $W/clang-optiml-*)/bin/clang-optiml
el sanity
CUDA_VISIBLE_DEVICES=0 timeout 150 $T optimize examples/saxpy.cu --budget 3 --run-dir $OUT/sanity --verify-first 1 --no-sanitize --final-rounds 2 > $OUT/sanity.log 2>&1
echo "sanity rc=$?"; tail -8 $OUT/sanity.log
python3 -c "
import json
for l in open('$OUT/sanity/journal.jsonl'):
    d=json.loads(l)
    if d.get('type')=='node': print(d['id'], d['status'], d['summary'][:60], d['outcome'].get('time'), d['outcome'].get('stages_seconds'))
"
grep -q "faster than the original\|beat the original\|is verified faster" $OUT/sanity.log || { echo "sanity failed: stopping"; exit 1; }
COL=(--budget 10 --strategies mcts --seeds 1 "--extra=--verify-first=1 --no-sanitize --final-rounds=3")
( export CUDA_VISIBLE_DEVICES=1; timeout $(left 575) python3 bench/search/compare.py run --bundle $B --results $R \
    --programs softmax,gemv,histogram,axpy,dot,scan,bias_gelu,batched_gemm_small "${COL[@]}" \
    --deadline $(left 470) --stop-at $(left 545) --out $OUT/a > $OUT/column-a.log 2>&1 ) &
export CUDA_VISIBLE_DEVICES=0
el probe checks
timeout 170 python3 bench/eval/probe_gpu_checks.py --bundle $B --out $OUT/probe --deadline 140 > $OUT/probe.log 2>&1; echo "rc=$?"; tail -22 $OUT/probe.log
el ncu compare
timeout 130 python3 bench/eval/ncu_compare.py --bundle $B --out $OUT/ncu --deadline 95 > $OUT/ncu.log 2>&1; tail -8 $OUT/ncu.log
el column b
timeout $(left 575) python3 bench/search/compare.py run --bundle $B --results $R \
    --programs layernorm,spmv_csr,transpose,conv2d,jacobi2d,stencil3d7,cg,sgemm "${COL[@]}" \
    --deadline $(left 470) --stop-at $(left 545) --out $OUT/b > $OUT/column-b.log 2>&1
wait
el done
tail -6 $OUT/column-a.log $OUT/column-b.log
cd $OUT && tar czf checks.tar.gz probe ncu && rm -rf probe ncu
