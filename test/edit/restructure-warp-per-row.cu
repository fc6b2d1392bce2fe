// Every output the unit tests accept for warp-per-row (unittests/Edit/Restructure*Test.cpp
// compares them byte for byte) also compiles for sm_90 with nvcc.
// REQUIRES: nvcc
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %inputs/edit/restructure/warp-gemv-template.expected.cu
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %inputs/edit/restructure/warp-layernorm-block.expected.cu
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %inputs/edit/restructure/warp-rows-known.expected.cu
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %inputs/edit/restructure/warp-softmax.expected.cu
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %inputs/edit/restructure/warp-spmv.expected.cu
