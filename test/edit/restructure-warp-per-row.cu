// Every output the unit tests accept for warp-per-row (unittests/Edit/Restructure*Test.cpp
// compares them byte for byte) also compiles for sm_90 with nvcc.
// REQUIRES: nvcc
// RUN: rm -rf %t && split-file %inputs/edit/restructure/warp.cases %t
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t/warp-gemv-template.expected.cu
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t/warp-layernorm-block.expected.cu
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t/warp-rows-known.expected.cu
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t/warp-softmax.expected.cu
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t/warp-spmv.expected.cu
