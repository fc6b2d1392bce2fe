#!/usr/bin/env python3
"""Runs a CUDA program on the host: its kernels thread by thread, one
after another, so that a program that checks its own results (PASS/FAIL
lines, its exit status) can be checked on a machine without a GPU.

    host-run.py PROGRAM.cu [-- ARGS...]

The program is compiled as C++ with a small stand-in for the CUDA runtime
(cudaMalloc is malloc, cudaMemcpy and cudaMemcpyToSymbol are memcpy, a
`k<<<grid, block>>>(args)` launch runs k for every block and thread, x
fastest) and, where the compiler has it, AddressSanitizer: a read or write
outside an allocation fails the run. Only kernels whose threads do not wait
for each other can run so: a program using shared memory, barriers, warp
primitives or atomics is refused (exit 2), as is one whose launches cannot
be read. The exit status is the program's; the build's errors go to stderr
with exit 2.
"""
import os
import re
import subprocess
import sys
import tempfile

SHIM = r"""
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __restrict__
#define __constant__
#define __launch_bounds__(...)
struct dim3 {
  unsigned x, y, z;
  dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct uint3 { unsigned x, y, z; };
static uint3 threadIdx, blockIdx;
static dim3 blockDim, gridDim;
#define OPTIML_VEC2(T, N) struct N { T x, y; }; \
  inline N make_##N(T a, T b) { return N{a, b}; }
#define OPTIML_VEC4(T, N) struct N { T x, y, z, w; }; \
  inline N make_##N(T a, T b, T c, T d) { return N{a, b, c, d}; }
OPTIML_VEC2(float, float2) OPTIML_VEC4(float, float4)
OPTIML_VEC2(double, double2) OPTIML_VEC2(int, int2) OPTIML_VEC4(int, int4)
OPTIML_VEC2(unsigned, uint2) OPTIML_VEC4(unsigned, uint4)
struct float3 { float x, y, z; };
inline float3 make_float3(float a, float b, float c) { return float3{a, b, c}; }
typedef int cudaError_t;
typedef void *cudaStream_t;
enum { cudaSuccess = 0 };
enum cudaMemcpyKind { cudaMemcpyHostToHost, cudaMemcpyHostToDevice,
                      cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice,
                      cudaMemcpyDefault };
inline const char *cudaGetErrorString(cudaError_t) { return "no error"; }
template <class T> cudaError_t cudaMalloc(T **p, size_t n) {
  *p = (T *)malloc(n ? n : 1);
  return 0;
}
inline cudaError_t cudaFree(void *p) { free(p); return 0; }
inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n, cudaMemcpyKind) {
  memcpy(d, s, n);
  return 0;
}
inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n,
                                   cudaMemcpyKind, cudaStream_t = 0) {
  memcpy(d, s, n);
  return 0;
}
inline cudaError_t cudaMemset(void *d, int v, size_t n) { memset(d, v, n); return 0; }
inline cudaError_t cudaGetLastError() { return 0; }
inline cudaError_t cudaDeviceSynchronize() { return 0; }
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return 0; }
inline cudaError_t cudaStreamCreate(cudaStream_t *s) { *s = 0; return 0; }
inline cudaError_t cudaStreamDestroy(cudaStream_t) { return 0; }
// CUDA's device min and max for integers and floats.
template <class A, class B> auto min(A a, B b) -> decltype(a < b ? a : b) { return a < b ? a : b; }
template <class A, class B> auto max(A a, B b) -> decltype(a < b ? b : a) { return a < b ? b : a; }
template <class T>
cudaError_t cudaMemcpyToSymbol(T &sym, const void *src, size_t n, size_t off = 0,
                               cudaMemcpyKind = cudaMemcpyHostToDevice) {
  memcpy((char *)&sym + off, src, n);
  return 0;
}
template <class T>
cudaError_t cudaMemcpyToSymbolAsync(T &sym, const void *src, size_t n, size_t off = 0,
                                    cudaMemcpyKind = cudaMemcpyHostToDevice,
                                    cudaStream_t = 0) {
  memcpy((char *)&sym + off, src, n);
  return 0;
}
template <class T> T __ldg(const T *p) { return *p; }
inline float __fdividef(float a, float b) { return a / b; }
inline float rsqrtf(float a) { return 1.f / std::sqrt(a); }
template <class F> void optiml_host_launch(dim3 g, dim3 b, F f) {
  gridDim = g;
  blockDim = b;
  for (unsigned bz = 0; bz < g.z; ++bz)
    for (unsigned by = 0; by < g.y; ++by)
      for (unsigned bx = 0; bx < g.x; ++bx)
        for (unsigned tz = 0; tz < b.z; ++tz)
          for (unsigned ty = 0; ty < b.y; ++ty)
            for (unsigned tx = 0; tx < b.x; ++tx) {
              blockIdx = {bx, by, bz};
              threadIdx = {tx, ty, tz};
              f();
            }
}
"""

# What threads that run one after another cannot do.
REFUSED = re.compile(r"\b(__shared__|__syncthreads|__syncwarp|__shfl\w*|atomic\w+|"
                     r"cooperative_groups|__ballot\w*|__any_sync|__all_sync)\b")


def split_top(text, sep=","):
    """text split at top-level separators (outside (), [], {}, <>)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        if ch == sep and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return [p.strip() for p in out]


def closing(text, i):
    """The index of the ')' matching the '(' at text[i]."""
    depth = 0
    for j in range(i, len(text)):
        depth += {"(": 1, ")": -1}.get(text[j], 0)
        if depth == 0:
            return j
    return -1


def host_source(src):
    """src with its launches as host loops, or raises ValueError."""
    if REFUSED.search(src):
        raise ValueError("uses %s: its threads cannot run one after another"
                         % REFUSED.search(src).group(1))
    src = re.sub(r"#include\s*<cuda_runtime(_api)?\.h>", "", src)
    out, pos = "", 0
    launch = re.compile(r"([A-Za-z_][\w:]*(?:<[^<>;()]*>)?)\s*<<<")
    while True:
        m = launch.search(src, pos)
        if not m:
            return out + src[pos:]
        line = src[src.rfind("\n", 0, m.start()) + 1:m.start()]
        if "//" in line:  # in a comment
            out += src[pos:m.end()]
            pos = m.end()
            continue
        end = src.find(">>>", m.end())
        paren = src.find("(", end)
        if end < 0 or paren < 0 or src[end + 3:paren].strip():
            raise ValueError("a launch at offset %d cannot be read" % m.start())
        config = split_top(src[m.end():end])
        close = closing(src, paren)
        if len(config) < 2 or close < 0:
            raise ValueError("a launch at offset %d cannot be read" % m.start())
        out += src[pos:m.start()]
        out += "optiml_host_launch(dim3(%s), dim3(%s), [&] { %s%s; })" % (
            config[0], config[1], m.group(1), src[paren:close + 1])
        pos = close + 1


def main():
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        sys.stdout.write(__doc__)
        return 0 if args else 2
    path, rest = args[0], args[1:]
    if rest[:1] == ["--"]:
        rest = rest[1:]
    try:
        src = host_source(open(path).read())
    except (OSError, ValueError) as e:
        sys.stderr.write("host-run: %s: %s\n" % (path, e))
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        cpp, exe = os.path.join(tmp, "host.cpp"), os.path.join(tmp, "host")
        with open(cpp, "w") as f:
            f.write(SHIM + '#line 1 "%s"\n' % os.path.basename(path) + src)
        cxx = os.environ.get("CXX", "c++")
        build = [cxx, "-std=c++17", "-O1", "-g", "-w", "-o", exe, cpp]
        if subprocess.run(build[:1] + ["-fsanitize=address"] + build[1:],
                          capture_output=True).returncode != 0:
            r = subprocess.run(build, capture_output=True, text=True)
            if r.returncode != 0:
                sys.stderr.write("host-run: %s does not build for the host:\n%s"
                                 % (path, r.stderr[-4000:]))
                return 2
        env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
        r = subprocess.run([exe] + rest, env=env)
        return r.returncode


if __name__ == "__main__":
    sys.exit(main())
