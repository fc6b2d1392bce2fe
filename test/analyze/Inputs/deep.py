"""Writes a CUDA file whose kernel holds one deep expression:
    deep.py parens N   x[0] = ((((...v...))));   (N nested parentheses)
    deep.py sum N      x[0] = v + v + ... + v;   (N terms: a tree N deep)
The kernel is launched with a constant block size, so a launch-bounds edit
applies to it."""
import sys

kind, n = sys.argv[1], int(sys.argv[2])
if kind == "parens":
    expr = "(" * n + "v" + ")" * n
else:
    expr = " + ".join(["v"] * n)
print('#include "cuda_mock.h"\n')
print("__global__ void deep(float *x) {")
print("  float v = x[threadIdx.x];")
print("  x[threadIdx.x] = %s;" % expr)
print("}\n")
print("int main() {")
print("  float *x;")
print("  cudaMalloc(&x, 256 * sizeof(float));")
print("  deep<<<1, 256>>>(x);")
print("  return 0;")
print("}")
