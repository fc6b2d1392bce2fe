#!/usr/bin/env bash
# Device call 1 of 2026-11-30 (repository root on the H200 node, dist/ carried;
# bundle at 8b38020): every suggested edit on the examples, then optimize on
# examples/matmul.cu. Run as one command line; kept here as the record.
mkdir -p $OUT/verify; W=$(mktemp -d); tar -C $W -xJf dist/clang-optiml-0.1.0-linux-x86_64.tar.xz
T=$(ls -d $W/clang-optiml-*)/bin/clang-optiml; export PATH=/usr/local/cuda/bin:$PATH
timeout 200 python3 bench/edits/verify_examples.py --tool $T --out $OUT/verify --jobs 3 --deadline 150 \
  examples/saxpy.cu examples/transpose.cu examples/reduction.cu examples/matmul.cu > $OUT/verify.log 2>&1
tail -3 $OUT/verify.log
BUDGET=60 TIME=230s bash scripts/gpu-optimize.sh dist/clang-optiml-0.1.0-linux-x86_64.tar.xz examples/matmul.cu 2>&1 | tail -15
