// Every output the unit tests accept for privatize-atomics (unittests/Edit/Restructure*Test.cpp
// compares them byte for byte) also compiles for sm_90 with nvcc.
// REQUIRES: nvcc
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %inputs/edit/restructure/atomics-buckets.expected.cu
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %inputs/edit/restructure/atomics-histogram-warp.expected.cu
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %inputs/edit/restructure/atomics-histogram.expected.cu
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %inputs/edit/restructure/atomics-weighted.expected.cu
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %inputs/edit/restructure/atomics-vector-lane.expected.cu
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %inputs/edit/restructure/atomics-vector-shorts.expected.cu
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %inputs/edit/restructure/atomics-vector-weighted.expected.cu
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %inputs/edit/restructure/atomics-vector-operators.expected.cu
