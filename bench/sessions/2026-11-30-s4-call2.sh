#!/usr/bin/env bash
# Session 4, device call 2 (nvidia-h200, one GPU: the two-GPU kind was not
# lent; repository root, dist/ carried; bundle at the commit that adds this
# script: counter-data image sized per metric set, --verify-last).
# ncu side by side, DRAM counts from the program's own launch and, for
# comparison, from the replays; the probe's GPU checks; then the column's cg
# (its atomicAdd dot products make the 1300th launch disagree between two
# runs of the original, so the last launch is not verified: --verify-first=3
# --verify-last=false) and dot again (the catalog now proposes warp-reduce
# grid_stride).
set -u
B=dist/clang-optiml-0.1.0-linux-x86_64.tar.xz
R=bench/results/search/2026-11-30-column
export PATH=/usr/local/cuda/bin:$PATH
s=$(date +%s); el() { echo "[$(( $(date +%s) - s )) s] $*"; }
left() { echo $(( $1 - ($(date +%s) - s) )); }  # seconds until $1 s into the call
el ncu compare, DRAM from the own launch
timeout 130 python3 bench/eval/ncu_compare.py --bundle $B --out $OUT/ncu --deadline 95 > $OUT/ncu.log 2>&1; grep -E "within|dram__bytes_write|FAIL" $OUT/ncu.log
el ncu compare, DRAM from the replays
OPTIML_PROBE_DRAM_FROM_REPLAYS=1 timeout 130 python3 bench/eval/ncu_compare.py --bundle $B --out $OUT/ncu-replays --deadline 95 > $OUT/ncu-replays.log 2>&1; grep -E "within|dram__bytes_write|FAIL" $OUT/ncu-replays.log
el probe checks
timeout 150 python3 bench/eval/probe_gpu_checks.py --bundle $B --out $OUT/probe > $OUT/probe.log 2>&1; echo "rc=$?"; grep -E "checks passed|FAIL|saxpy" $OUT/probe.log
cd $OUT && tar czf checks.tar.gz probe ncu ncu-replays && rm -rf probe ncu ncu-replays; cd - > /dev/null
el column cg
timeout $(left 575) python3 bench/search/compare.py run --bundle $B --results $R \
    --programs cg --budget 10 --strategies mcts --seeds 1 \
    "--extra=--verify-first=3 --verify-last=false --no-sanitize --final-rounds=3" \
    --deadline $(left 320) --stop-at $(left 545) --out $OUT/a > $OUT/column-a.log 2>&1
el column dot
timeout $(left 575) python3 bench/search/compare.py run --bundle $B --results $R \
    --programs dot --rerun dot --budget 10 --strategies mcts --seeds 1 \
    "--extra=--verify-first=1 --no-sanitize --final-rounds=3" \
    --deadline $(left 420) --stop-at $(left 560) --out $OUT/b > $OUT/column-b.log 2>&1
el done
tail -n 3 $OUT/column-a.log $OUT/column-b.log
