#!/usr/bin/env python3
"""Runs a 2D stencil kernel and its rewrite on the CPU, thread by thread,
and compares every output: the kernels of ORIG and NEW named KERNEL, both
`(int h, int w, const float *in, const float *filt, float *out)`, launched
with 16 x 16 blocks over ceil(w / 16) x ceil(h / 16) blocks (the rewrite's
grid divided by --cols along x and --rows along y, rounded up). The CUDA
builtins the kernels use are declared for the host (threadIdx, blockIdx,
blockDim, gridDim, float2, float4) and the original's one-line macros;
built with AddressSanitizer where the
compiler has it, so a read outside the input fails. Each size is HxW, with
+N to start the input N floats past an aligned allocation, and oM the
outputs M floats past theirs.

    host-emulate.py ORIG NEW KERNEL --rows R --cols C --sizes 70x66,33x36+1
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def kernel(path, name, rename):
    src = open(path).read()
    m = re.search(r"__global__\s+void\s+" + re.escape(name) + r"\s*\(", src)
    if not m:
        sys.exit(f"host-emulate: no kernel '{name}' in {path}")
    i = src.index("{", m.end())
    depth = 0
    for j in range(i, len(src)):
        depth += {"{": 1, "}": -1}.get(src[j], 0)
        if depth == 0:
            break
    text = src[m.start():j + 1]
    return text.replace("void " + name, "void " + rename, 1)


PRELUDE = r"""
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
struct U3 { unsigned x, y, z; };
static U3 threadIdx, blockIdx, blockDim, gridDim;
struct float2 { float x, y; };
struct float4 { float x, y, z, w; };
inline float2 make_float2(float a, float b) { return float2{a, b}; }
inline float4 make_float4(float a, float b, float c, float d) {
  return float4{a, b, c, d};
}
#define __global__
#define __restrict__
"""

MAIN = r"""
template <class F> static void launch(F f, unsigned gx, unsigned gy) {
  gridDim = {gx, gy, 1};
  blockDim = {16, 16, 1};
  for (unsigned b = 0; b < gx * gy; ++b)
    for (unsigned t = 0; t < 256; ++t) {
      blockIdx = {b % gx, b / gx, 0};
      threadIdx = {t % 16, t / 16, 0};
      f();
    }
}
int main(int argc, char **argv) {
  int h = atoi(argv[1]), w = atoi(argv[2]), off = atoi(argv[3]);
  int rows = atoi(argv[4]), cols = atoi(argv[5]), outOff = atoi(argv[6]);
  float *base = (float *)malloc(sizeof(float) * (h * w + off));
  float *in = base + off;
  float *filt = (float *)malloc(sizeof(float) * 49);
  float *a = (float *)calloc(h * w + outOff, sizeof(float)) + outOff;
  float *b = (float *)calloc(h * w + outOff, sizeof(float)) + outOff;
  for (int i = 0; i < h * w; ++i) in[i] = (float)((i * 7919) % 1000) / 1000.f - 0.5f;
  for (int i = 0; i < 49; ++i) filt[i] = (float)((i * 31) % 17) / 17.f - 0.5f;
  unsigned gx = (w + 15) / 16, gy = (h + 15) / 16;
  launch([&] { orig_kernel(h, w, in, filt, a); }, gx, gy);
  launch([&] { new_kernel(h, w, in, filt, b); }, (gx + cols - 1) / cols, (gy + rows - 1) / rows);
  int bad = 0;
  for (int i = 0; i < h * w; ++i) bad += a[i] != b[i];
  printf("%dx%d+%d: %d of %d outputs differ\n", h, w, off, bad, h * w);
  if (outOff)
    printf("(outputs %d floats past their allocation)\n", outOff);
  return bad != 0;
}
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("orig")
    ap.add_argument("new")
    ap.add_argument("kernel")
    ap.add_argument("--rows", type=int, required=True)
    ap.add_argument("--cols", type=int, default=1)
    ap.add_argument("--sizes", required=True)
    ap.add_argument("--define", action="append", default=[])
    a = ap.parse_args()
    # The original's one-line macros (`#define K 7`), then --define's.
    defines = "".join(line + "\n" for line in open(a.orig).read().splitlines()
                      if line.startswith("#define ") and not line.endswith("\\"))
    defines += "".join(f"#define {d.replace('=', ' ', 1)}\n" for d in a.define)
    src = (PRELUDE + defines + kernel(a.orig, a.kernel, "orig_kernel") + "\n" +
           kernel(a.new, a.kernel, "new_kernel") + "\n" + MAIN)
    with tempfile.TemporaryDirectory() as tmp:
        cpp, exe = os.path.join(tmp, "emu.cpp"), os.path.join(tmp, "emu")
        open(cpp, "w").write(src)
        cxx = os.environ.get("CXX", "c++")
        base = [cxx, "-std=c++17", "-O1", "-g", "-o", exe, cpp]
        if subprocess.run(base[:1] + ["-fsanitize=address"] + base[1:],
                          capture_output=True).returncode != 0:
            r = subprocess.run(base, capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit("host-emulate: the host build failed:\n" + r.stderr)
        failed = False
        env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
        for size in a.sizes.split(","):
            m = re.fullmatch(r"(\d+)x(\d+)(?:\+(\d+))?(?:o(\d+))?", size)
            if not m:
                sys.exit(f"host-emulate: bad size '{size}'")
            r = subprocess.run([exe, m[1], m[2], m[3] or "0", str(a.rows), str(a.cols),
                                m[4] or "0"],
                               capture_output=True, text=True, env=env)
            sys.stdout.write(r.stdout)
            if r.returncode != 0:
                sys.stdout.write(r.stderr[-2000:])
                failed = True
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
