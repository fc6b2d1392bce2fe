// Every output the unit tests accept for transpose-through-shared (unittests/Edit/Restructure*Test.cpp
// compares them byte for byte) also compiles for sm_90 with nvcc.
// REQUIRES: nvcc
// RUN: rm -rf %t && split-file %inputs/edit/restructure/transpose.cases %t
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t/transpose-basic.expected.cu
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t/transpose-gather.expected.cu
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %t/transpose-template.expected.cu
