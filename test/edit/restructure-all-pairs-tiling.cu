// Every output the unit tests accept for all-pairs-tiling (unittests/Edit/Restructure*Test.cpp
// compares them byte for byte) also compiles for sm_90 with nvcc.
// REQUIRES: nvcc
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %inputs/edit/restructure/tiling-gemv.expected.cu
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %inputs/edit/restructure/tiling-nbody.expected.cu
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %inputs/edit/restructure/tiling-template.expected.cu
