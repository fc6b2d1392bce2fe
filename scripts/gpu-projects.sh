#!/usr/bin/env bash
# Projects on a GPU node, through the bundle: warp-reduce on the CUDA samples' reduction
# (eval --against), optimize of kernels in an included .cu (needle) and a header,
# the tuned-variant database. Run from the repository root: bash scripts/gpu-projects.sh
set -x
R=$PWD; export PATH=/usr/local/cuda/bin:$PATH
P=$(mktemp -d); tar -C $P -xJf dist/clang-optiml-0.1.0-linux-x86_64.tar.xz; export PATH=$(ls -d $P/clang-optiml-*)/bin:$PATH
clang-optiml --version; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
W=$(mktemp -d)
# 1. warp-reduce on the CUDA samples' reduction
mkdir $W/red && cp $R/test/edit/Inputs/reduce-cg/reduce.cu $W/red/ && cd $W/red
echo '{"kind":"warp-reduce","target":"reduce0","params":{}}' > w.json
clang-optiml apply reduce.cu --edit w.json -o reduce.warp.cu; echo "apply rc=$?"
clang-optiml eval reduce.warp.cu --against reduce.cu; echo "eval-against rc=$?"
# 2. kernels in an included .cu (needle) and in a header; optimize from the main file; db
mkdir $W/needle && cp $R/test/Inputs/include-kernels/needle/* $R/test/Inputs/cuda_mock.h $W/needle/ && cd $W/needle
clang-optiml analyze needle.cu | head -12
timeout 240 clang-optiml optimize needle.cu --budget 8 -o out/ --report needle.html; echo "optimize needle rc=$?"
ls -R out 2>/dev/null
if [ -f out/needle_kernel.cu ]; then nvcc -arch=sm_90 -o orig needle.cu && ./orig > orig.txt; mkdir fast && cp needle.cu cuda_mock.h fast/ && cp out/needle_kernel.cu fast/ && (cd fast && nvcc -arch=sm_90 -o fast needle.cu && ./fast > ../fast.txt); cmp orig.txt fast.txt && echo "needle outputs identical"; fi
clang-optiml db list; echo "db list rc=$?"
mkdir $W/header && cp -r $R/test/Inputs/include-kernels/header/* $W/header/ && cp $R/test/Inputs/cuda_mock.h $W/header/ && cd $W/header
timeout 200 clang-optiml optimize main.cu --budget 8 -o out/ -- -Iinclude; echo "optimize header rc=$?"
ls -R out 2>/dev/null
clang-optiml db list
