// Every output the unit tests accept for transpose-through-shared (unittests/Edit/Restructure*Test.cpp
// compares them byte for byte) also compiles for sm_90 with nvcc.
// REQUIRES: nvcc
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %inputs/edit/restructure/transpose-basic.expected.cu
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %inputs/edit/restructure/transpose-gather.expected.cu
// RUN: %nvcc -c -arch=sm_90 -I%inputs -o %t.nvcc.o %inputs/edit/restructure/transpose-template.expected.cu
