// Every output the unit tests accept for all-pairs-tiling (unittests/Edit/Restructure*Test.cpp
// compares them byte for byte) also compiles for sm_90 with nvcc.
// REQUIRES: nvcc
// RUN: rm -rf %t && split-file %inputs/edit/restructure/tiling.cases %t
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t/tiling-gemv.expected.cu
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t/tiling-nbody.expected.cu
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t/tiling-template.expected.cu
