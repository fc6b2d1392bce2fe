#!/usr/bin/env bash
# Device call 5 of 2026-11-30 (bundle at 360c6ea): shared-tiling (stencils) and
# hoist on the suite's jacobi2d and conv2d (results in
# bench/results/edits/2026-11-30-stencil).
export PATH=/usr/local/cuda/bin:$PATH
timeout 330 bash scripts/gpu-stencil-edits.sh dist/clang-optiml-0.1.0-linux-x86_64.tar.xz > $OUT/stencil.log 2>&1
echo rc=$?; tail -40 $OUT/stencil.log
cd $OUT && tar czf stencil-edits.tar.gz stencil-edits && rm -rf stencil-edits
