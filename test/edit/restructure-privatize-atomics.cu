// Every output the unit tests accept for privatize-atomics (unittests/Edit/Restructure*Test.cpp
// compares them byte for byte) also compiles for sm_90 with nvcc.
// REQUIRES: nvcc
// RUN: rm -rf %t && split-file %inputs/edit/restructure/atomics.cases %t
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t/atomics-buckets.expected.cu
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t/atomics-histogram-warp.expected.cu
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t/atomics-histogram.expected.cu
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t/atomics-weighted.expected.cu
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t/atomics-vector-lane.expected.cu
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t/atomics-vector-shorts.expected.cu
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t/atomics-vector-weighted.expected.cu
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t/atomics-vector-operators.expected.cu
