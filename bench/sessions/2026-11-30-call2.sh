#!/usr/bin/env bash
# Device call 2 of 2026-11-30 (run from the repository root on the H200 node,
# with dist/ carried): the probe's GPU checks, the restructuring bench, the
# remaining example edits, ncu side by side. Everything lands in $OUT/call2.tar.gz.
set -u
B=dist/clang-optiml-0.1.0-linux-x86_64.tar.xz
R=$OUT/r; mkdir -p $R
export PATH=/usr/local/cuda/bin:$PATH
W=$(mktemp -d); tar -C $W -xJf $B; T=$(ls -d $W/clang-optiml-*)/bin/clang-optiml
s=$(date +%s); el() { echo "[$(( $(date +%s) - s )) s] $*"; }
el probe checks
timeout 150 python3 bench/eval/probe_gpu_checks.py --bundle $B --out $R/probe > $R/probe.log 2>&1; echo "rc=$?" >> $R/probe.log; tail -25 $R/probe.log
el restructure bench
timeout 150 python3 bench/run.py --out $R/restructure --kernels softmax,layernorm,spmv_csr,gemv,histogram --optimized-dir bench/results/restructure --jobs 16 --timeout 60 --deadline 100 > $R/restructure.log 2>&1; tail -12 $R/restructure.log; cat $R/restructure/results.md 2>/dev/null | head -30
el example edits
timeout 150 python3 bench/edits/verify_examples.py --tool $T --out $R/verify --jobs 4 --deadline 110 --first-only examples/reduction.cu examples/matmul.cu > $R/verify.log 2>&1; tail -16 $R/verify.log
el ncu compare
timeout 170 python3 bench/eval/ncu_compare.py --bundle $B --out $R/ncu --deadline 120 > $R/ncu.log 2>&1; tail -30 $R/ncu.log
el done
tar -C $OUT -czf $OUT/call2.tar.gz r && rm -rf $R
