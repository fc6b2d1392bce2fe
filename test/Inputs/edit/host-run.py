#!/usr/bin/env python3
"""Runs a CUDA program on the host, so that a program that checks its own
results (PASS/FAIL lines, its exit status) can be checked on a machine
without a GPU.

    host-run.py PROGRAM.cu [-- ARGS...]

The program is compiled as C++ with a small stand-in for the CUDA runtime:
cudaMalloc is malloc, cudaMemcpy and cudaMemcpyToSymbol are memcpy, and a
launch `k<<<grid, block[, shared bytes]>>>(args)` runs the blocks one after
another. A block's threads run one after another too, unless the program
waits or exchanges between threads (`__syncthreads` and its votes
`__syncthreads_and/_or/_count`, `__syncwarp`, warp shuffles and votes): then each thread of a block is a fiber, switched at
those points, a barrier releasing its threads once every live one has
reached it and a shuffle reading the values its warp's lanes left.
`__shared__` variables are one per kernel (the blocks do not overlap), and
atomics are plain read-modify-writes (one thread runs at a time). Built
with AddressSanitizer where the compiler has it (and the threads are not
fibers): a read or write outside an allocation fails the run. Cooperative
groups: the block's group only (`this_thread_block()`, `sync`). Refused
(exit 2): tiled partitions and grid groups, textures, inline assembly,
launches that cannot be read. The exit status is the program's; a build that fails
prints its errors, exit 2.
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
#include <type_traits>
#include <vector>
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __restrict__
#define __constant__
#define __shared__ static
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
template <class A, class B> typename std::common_type<A, B>::type min(A a, B b) {
  return a < b ? a : b;
}
template <class A, class B> typename std::common_type<A, B>::type max(A a, B b) {
  return a < b ? b : a;
}
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
// Atomics: one thread runs at a time, so a read-modify-write is atomic.
template <class T, class U> T atomicAdd(T *p, U v) { T o = *p; *p = o + (T)v; return o; }
template <class T, class U> T atomicSub(T *p, U v) { T o = *p; *p = o - (T)v; return o; }
template <class T, class U> T atomicMax(T *p, U v) { T o = *p; *p = o < (T)v ? (T)v : o; return o; }
template <class T, class U> T atomicMin(T *p, U v) { T o = *p; *p = (T)v < o ? (T)v : o; return o; }
template <class T, class U> T atomicExch(T *p, U v) { T o = *p; *p = (T)v; return o; }
template <class T, class U> T atomicAnd(T *p, U v) { T o = *p; *p = o & (T)v; return o; }
template <class T, class U> T atomicOr(T *p, U v) { T o = *p; *p = o | (T)v; return o; }
template <class T, class U, class V> T atomicCAS(T *p, U c, V v) {
  T o = *p; if (o == (T)c) *p = (T)v; return o;
}
inline unsigned atomicInc(unsigned *p, unsigned m) { unsigned o = *p; *p = o >= m ? 0 : o + 1; return o; }
inline int __popc(unsigned v) { return __builtin_popcount(v); }
inline int __popcll(unsigned long long v) { return __builtin_popcountll(v); }
inline int __ffs(int v) { return __builtin_ffs(v); }
inline int __clz(int v) { return v ? __builtin_clz((unsigned)v) : 32; }
inline float __expf(float v) { return std::exp(v); }
inline float __logf(float v) { return std::log(v); }
inline float __saturatef(float v) { return v < 0.f ? 0.f : v > 1.f ? 1.f : v; }
static char *optiml_dyn_smem = nullptr;
#define __align__(n) alignas(n)

#ifdef OPTIML_FIBERS
#include <functional>
#include <ucontext.h>
#include <vector>
// Each thread of a block is a fiber; the scheduler runs every runnable one
// until it ends or waits, then releases the warps and the block whose live
// threads all wait.
namespace optiml_emu {
enum State { Run, Block, Warp, Done };
struct Fiber { ucontext_t ctx; uint3 idx; State state; };
static ucontext_t sched;
static std::vector<Fiber> fibers;
static std::vector<char> stacks;
static const size_t kStack = 128 * 1024;
static unsigned cur, nthreads;
static std::function<void()> body;
static std::vector<unsigned long long> slots;
static void entry() {
  body();
  fibers[cur].state = Done;
  swapcontext(&fibers[cur].ctx, &sched);
}
inline void wait(State s) {
  fibers[cur].state = s;
  swapcontext(&fibers[cur].ctx, &sched);
}
inline unsigned lane() { return cur % 32; }
inline unsigned warpBase() { return cur - cur % 32; }
inline void runBlock() {
  if (stacks.size() < (size_t)nthreads * kStack)
    stacks.resize((size_t)nthreads * kStack);
  fibers.assign(nthreads, Fiber());
  slots.assign(nthreads, 0);
  for (unsigned i = 0; i < nthreads; ++i) {
    Fiber &f = fibers[i];
    f.idx = {i % blockDim.x, i / blockDim.x % blockDim.y, i / (blockDim.x * blockDim.y)};
    f.state = Run;
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = &stacks[(size_t)i * kStack];
    f.ctx.uc_stack.ss_size = kStack;
    f.ctx.uc_link = &sched;
    makecontext(&f.ctx, entry, 0);
  }
  for (;;) {
    for (unsigned i = 0; i < nthreads; ++i)
      if (fibers[i].state == Run) {
        cur = i;
        threadIdx = fibers[i].idx;
        swapcontext(&sched, &fibers[i].ctx);
      }
    bool released = false, blockWait = false, live = false;
    for (unsigned w = 0; w < nthreads; w += 32) {
      unsigned end = w + 32 < nthreads ? w + 32 : nthreads;
      bool all = true, any = false;
      for (unsigned i = w; i < end; ++i) {
        if (fibers[i].state == Warp) any = true;
        else if (fibers[i].state != Done) all = false;
      }
      if (any && all) {
        for (unsigned i = w; i < end; ++i)
          if (fibers[i].state == Warp) fibers[i].state = Run;
        released = true;
      }
    }
    if (released) continue;
    for (unsigned i = 0; i < nthreads; ++i) {
      live |= fibers[i].state != Done;
      blockWait |= fibers[i].state == Block;
    }
    if (!live) return;
    bool allBlock = true;
    for (unsigned i = 0; i < nthreads; ++i)
      if (fibers[i].state != Done && fibers[i].state != Block) allBlock = false;
    if (blockWait && allBlock) {
      for (unsigned i = 0; i < nthreads; ++i)
        if (fibers[i].state == Block) fibers[i].state = Run;
      continue;
    }
    fprintf(stderr, "host-run: block (%u, %u, %u): its threads wait for each other "
            "at different barriers (a deadlock on the GPU too)\n",
            blockIdx.x, blockIdx.y, blockIdx.z);
    exit(3);
  }
}
// A warp's exchange: every lane leaves its value, then reads another's.
template <class T> T exchange(T v, unsigned src) {
  static_assert(sizeof(T) <= sizeof(unsigned long long), "shuffle of a wide type");
  memcpy(&slots[cur], &v, sizeof(T));
  wait(Warp);
  T r = v;
  unsigned from = warpBase() + src;
  if (src < 32 && from < nthreads && fibers[from].state != Done)
    memcpy(&r, &slots[from], sizeof(T));
  wait(Warp);
  return r;
}
} // namespace optiml_emu
inline void __syncthreads() { optiml_emu::wait(optiml_emu::Block); }
// A barrier that also counts the predicates of the block's live threads.
inline int optiml_block_count(int p, int *live) {
  using namespace optiml_emu;
  slots[cur] = p ? 1 : 0;
  wait(Block);
  int count = 0, n = 0;
  for (unsigned i = 0; i < nthreads; ++i)
    if (fibers[i].state != Done) {
      ++n;
      count += (int)slots[i];
    }
  wait(Block);
  *live = n;
  return count;
}
inline int __syncthreads_count(int p) { int n; return optiml_block_count(p, &n); }
inline int __syncthreads_and(int p) { int n; return optiml_block_count(p, &n) == n; }
inline int __syncthreads_or(int p) { int n; return optiml_block_count(p, &n) != 0; }
inline void __syncwarp(unsigned = 0xffffffffu) { optiml_emu::wait(optiml_emu::Warp); }
template <class T> T __shfl_sync(unsigned, T v, int src, int width = 32) {
  unsigned l = optiml_emu::lane();
  return optiml_emu::exchange(v, (unsigned)(l - l % width + ((src % width) + width) % width));
}
template <class T> T __shfl_down_sync(unsigned, T v, unsigned d, int width = 32) {
  unsigned l = optiml_emu::lane();
  return optiml_emu::exchange(v, l % width + d < (unsigned)width ? l + d : l);
}
template <class T> T __shfl_up_sync(unsigned, T v, unsigned d, int width = 32) {
  unsigned l = optiml_emu::lane();
  return optiml_emu::exchange(v, l % width >= d ? l - d : l);
}
template <class T> T __shfl_xor_sync(unsigned, T v, int m, int width = 32) {
  unsigned l = optiml_emu::lane(), t = l ^ (unsigned)m;
  return optiml_emu::exchange(v, t / width == l / width ? t : l);
}
inline unsigned __ballot_sync(unsigned, int p) {
  unsigned r = 0;
  for (unsigned k = 0; k < 32; ++k)
    r |= (optiml_emu::exchange<int>(p ? 1 : 0, k) ? 1u : 0u) << k;
  return r;
}
inline int __any_sync(unsigned m, int p) { return __ballot_sync(m, p) != 0; }
inline int __all_sync(unsigned m, int p) { return __ballot_sync(m, !p) == 0; }
inline unsigned __activemask() { return 0xffffffffu; }
template <class F> void optiml_host_launch(dim3 g, dim3 b, size_t smem, F f) {
  gridDim = g;
  blockDim = b;
  std::vector<char> dyn(smem + 16);
  optiml_dyn_smem = dyn.data();
  optiml_emu::body = f;
  optiml_emu::nthreads = b.x * b.y * b.z;
  for (unsigned bz = 0; bz < g.z; ++bz)
    for (unsigned by = 0; by < g.y; ++by)
      for (unsigned bx = 0; bx < g.x; ++bx) {
        blockIdx = {bx, by, bz};
        optiml_emu::runBlock();
      }
}
#else
template <class F> void optiml_host_launch(dim3 g, dim3 b, size_t smem, F f) {
  gridDim = g;
  blockDim = b;
  std::vector<char> dyn(smem + 16);
  optiml_dyn_smem = dyn.data();
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
#endif
"""

# Cooperative groups: the whole block only.
COOPERATIVE_GROUPS = r"""
namespace cooperative_groups {
struct thread_block {
  void sync() const { __syncthreads(); }
  unsigned thread_rank() const {
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  }
  unsigned size() const { return blockDim.x * blockDim.y * blockDim.z; }
};
inline thread_block this_thread_block() { return thread_block(); }
template <class G> void sync(const G &g) { g.sync(); }
} // namespace cooperative_groups
"""

# What the stand-in does not model.
REFUSED = re.compile(r"\b(tex1D\w*|tex2D\w*|tex3D\w*|surf\w+D|asm|tiled_partition|"
                     r"this_grid|coalesced_threads)\b")
# What makes a block's threads fibers.
WAITS = re.compile(r"\b(__syncthreads(?:_and|_or|_count)?|__syncwarp|__shfl\w*_sync|__ballot_sync|__any_sync|"
                   r"__all_sync|cooperative_groups)\b")


def split_top(text, sep=","):
    """text split at top-level separators (outside (), [], {})."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
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
    code = re.sub(r"//[^\n]*", "", src)
    if REFUSED.search(code):
        raise ValueError("uses %s, which the host stand-in does not model"
                         % REFUSED.search(code).group(1))
    src = re.sub(r"#include\s*<cuda_runtime(_api)?\.h>", "", src)
    # `extern __shared__ T s[];`: the launch's dynamic shared memory.
    src = re.sub(r"extern\s+__shared__\s+(?:__align__\(\s*\d+\s*\)\s+)?([\w:]+(?:\s+[\w:]+)*?)\s+(\w+)\s*\[\s*\]\s*;",
                 r"\1 *\2 = (\1 *)optiml_dyn_smem;", src)
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
        out += "optiml_host_launch(dim3(%s), dim3(%s), %s, [&] { %s%s; })" % (
            config[0], config[1], config[2] if len(config) > 2 else "0", m.group(1),
            src[paren:close + 1])
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
        text = open(path).read()
        fibers = bool(WAITS.search(re.sub(r"//[^\n]*", "", text)))
        src = host_source(text)
    except (OSError, ValueError) as e:
        sys.stderr.write("host-run: %s: %s\n" % (path, e))
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        cpp, exe = os.path.join(tmp, "host.cpp"), os.path.join(tmp, "host")
        with open(cpp, "w") as f:
            f.write(("#define OPTIML_FIBERS 1\n" if fibers else "") + SHIM +
                    '#line 1 "%s"\n' % os.path.basename(path) + src)
        cxx = os.environ.get("CXX", "c++")
        # The runtime's headers are the stand-in (empty here, the shim
        # above has it all), wherever the program includes them from.
        for h in ("cuda_runtime.h", "cuda_runtime_api.h", "cuda.h"):
            open(os.path.join(tmp, h), "w").close()
        with open(os.path.join(tmp, "cooperative_groups.h"), "w") as f:
            f.write(COOPERATIVE_GROUPS)
        build = [cxx, "-std=c++17", "-O1", "-g", "-w", "-I", tmp,
                 "-I", os.path.dirname(os.path.abspath(path)), "-o", exe, cpp]
        # AddressSanitizer does not follow fibers' stacks.
        if fibers or subprocess.run(build[:1] + ["-fsanitize=address"] + build[1:],
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
