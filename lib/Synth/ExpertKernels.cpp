//===- ExpertKernels.cpp - Kernels written for speed ----------------------===//
//
// For the classes where the catalog cannot yet reach a library's speed from
// the plain template (docs/benchmarks.md), a second template written the
// way an expert would: a register-blocked GEMM and a single-pass scan. Both
// handle every size (guarded loads and stores); synthesize verifies them
// like any candidate and keeps the faster program.
//
//===----------------------------------------------------------------------===//

#include "TemplatesInternal.h"
#include "optiml/Synth/Templates.h"

using namespace llvm;

namespace optiml {
namespace synth {

/// C = A B with 128 x 128 output tiles per block of 256 threads, each
/// thread an 8 x 8 register tile (two 4 x 4 quadrants, so that its reads
/// of the shared tiles are 16-byte and free of bank conflicts), K in steps
/// of 8 through two shared buffers (the next step's tiles are loaded while
/// the current one is used). Loads are 16-byte where a row's four elements
/// lie inside the matrix and the row length allows it, else guarded
/// element by element.
static KernelCode gemmBlocked(const Spec &S) {
  const Tensor &A = S.Inputs[0], &B = S.Inputs[1], &Out = S.Outputs[0];
  GemmShape G = gemmShape(S);
  const std::string &M = G.M, &K = G.K, &N = G.N;
  const KernelParams &P = G.P;
  bool Float = Out.Type == ElementType::Float;
  KernelCode C;
  C.Title = G.Title + ", register-blocked";
  C.Kernels = fillTemplate(
      R"(// Four consecutive elements of row r of a [rows, cols] matrix, from
// column c: one 16-byte load when they lie inside it and are aligned.
__device__ __forceinline__ void ${Kern}_load4(const ${T} *__restrict__ m,
                                              int rows, int cols, int r,
                                              int c, ${T} v[4]) {
  if (${Vec} && r < rows && c + 3 < cols && (cols & 3) == 0) {
    float4 q = *reinterpret_cast<const float4 *>(m + (size_t)r * cols + c);
    v[0] = q.x;
    v[1] = q.y;
    v[2] = q.z;
    v[3] = q.w;
    return;
  }
  for (int i = 0; i < 4; ++i)
    v[i] = r < rows && c + i < cols ? m[(size_t)r * cols + c + i] : (${T})0;
}

// 128 x 128 tiles of the output per block of 256 threads; each thread
// accumulates an 8 x 8 tile in registers: rows ty*4..+3 and 64+ty*4..+3,
// columns tx*4..+3 and 64+tx*4..+3.
__global__ void __launch_bounds__(256)
    ${Kern}(${Params}) {
  __shared__ ${T} As[2][8][128];
  __shared__ ${T} Bs[2][8][128];
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int row0 = blockIdx.y * 128, col0 = blockIdx.x * 128;
  // What each thread loads per step: 4 of A's 128 x 8 tile (row tid / 2,
  // columns (tid % 2) * 4..+3) and 4 of B's 8 x 128 tile (row tid / 32,
  // columns (tid % 32) * 4..+3).
  const int ar = tid / 2, ac = (tid % 2) * 4, br = tid / 32, bc = (tid % 32) * 4;
  ${T} acc[8][8];
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j)
      acc[i][j] = 0;
  ${T} a[4], b[4];
  ${Kern}_load4(${A}, ${M}, ${K}, row0 + ar, ac, a);
  ${Kern}_load4(${B}, ${K}, ${N}, br, col0 + bc, b);
  for (int i = 0; i < 4; ++i)
    As[0][ac + i][ar] = a[i];
  for (int i = 0; i < 4; ++i)
    Bs[0][br][bc + i] = b[i];
  __syncthreads();
  int buf = 0;
  for (int k0 = 0; k0 < ${K}; k0 += 8) {
    const bool more = k0 + 8 < ${K};
    if (more) {
      ${Kern}_load4(${A}, ${M}, ${K}, row0 + ar, k0 + 8 + ac, a);
      ${Kern}_load4(${B}, ${K}, ${N}, k0 + 8 + br, col0 + bc, b);
    }
#pragma unroll
    for (int kk = 0; kk < 8; ++kk) {
      ${T} ra[8], rb[8];
      for (int i = 0; i < 4; ++i) {
        ra[i] = As[buf][kk][ty * 4 + i];
        ra[4 + i] = As[buf][kk][64 + ty * 4 + i];
        rb[i] = Bs[buf][kk][tx * 4 + i];
        rb[4 + i] = Bs[buf][kk][64 + tx * 4 + i];
      }
      for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 8; ++j)
          acc[i][j] += ra[i] * rb[j];
    }
    if (more) {
      for (int i = 0; i < 4; ++i)
        As[1 - buf][ac + i][ar] = a[i];
      for (int i = 0; i < 4; ++i)
        Bs[1 - buf][br][bc + i] = b[i];
      __syncthreads();
      buf = 1 - buf;
    }
  }
  for (int i = 0; i < 8; ++i) {
    int r = row0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + i - 4);
    if (r >= ${M})
      continue;
    for (int j = 0; j < 8; ++j) {
      int c = col0 + (j < 4 ? tx * 4 + j : 64 + tx * 4 + j - 4);
      if (c < ${N})
        ${C}[(size_t)r * ${N} + c] = acc[i][j];
    }
  }
}
)",
      {{"Kern", kernelName(S) + "_blocked"},
       {"Params", P.Decl},
       {"M", M},
       {"N", N},
       {"K", K},
       {"T", typeName(Out)},
       {"Vec", Float ? "true" : "false"},
       {"A", A.Name},
       {"B", B.Name},
       {"C", Out.Name}});
  C.Launch = fillTemplate(
      R"(  dim3 threads(256), blocks((${N} + 127) / 128, (${M} + 127) / 128);
  ${Kern}<<<blocks, threads>>>(${Args});
)",
      {{"N", N},
       {"M", M},
       {"Kern", kernelName(S) + "_blocked"},
       {"Args", P.Args}});
  return C;
}

/// The inclusive scan in one pass over the data (decoupled look-back):
/// each block takes the next tile of 256 x 32 elements (16 for doubles:
/// static shared memory holds 48 KiB) in the order blocks
/// start, scans it in registers and shared memory, publishes its total,
/// and finds its prefix by looking back at its predecessors' published
/// totals (a warp at a time), so the data is read once and written once.
static KernelCode scanLookback(const Spec &S) {
  const Tensor &In = S.Inputs[0], &Out = S.Outputs[0];
  std::string N = countExpr(In), K = kernelName(S) + "_onepass";
  // Four-byte elements move 16 bytes at a time through whole tiles.
  bool Vec = In.Type != ElementType::Double;
  std::string V4 = In.Type == ElementType::Float ? "float4" : "int4";
  std::string LoadVec = fillTemplate(R"(  if (full) {
    // A whole tile: 16-byte loads, four elements each.
    for (int i = 0; i < kItems / 4; ++i) {
      int q = i * 256 + threadIdx.x, j = q * 4;
      ${V4} w = reinterpret_cast<const ${V4} *>(in + base)[q];
      s_data[j + j / 32] = w.x;
      s_data[j + 1 + (j + 1) / 32] = w.y;
      s_data[j + 2 + (j + 2) / 32] = w.z;
      s_data[j + 3 + (j + 3) / 32] = w.w;
    }
  } else )",
                                     {{"V4", V4}});
  std::string StoreVec = fillTemplate(R"(  if (full) {
    for (int i = 0; i < kItems / 4; ++i) {
      int q = i * 256 + threadIdx.x, j = q * 4;
      ${V4} w;
      w.x = s_data[j + j / 32];
      w.y = s_data[j + 1 + (j + 1) / 32];
      w.z = s_data[j + 2 + (j + 2) / 32];
      w.w = s_data[j + 3 + (j + 3) / 32];
      reinterpret_cast<${V4} *>(out + base)[q] = w;
    }
  } else )",
                                      {{"V4", V4}});
  KernelCode C;
  C.Title = "inclusive scan (prefix sums) of " + In.Name + " [" + N +
            "] into " + Out.Name + ", in one pass";
  C.Kernels = fillTemplate(
      R"(// Tile status: 0 nothing yet, 1 its own total published, 2 the total
// of everything up to and including it published.
__global__ void __launch_bounds__(256)
    ${K}(int n, const ${T} *__restrict__ in, ${T} *__restrict__ out,
         ${T} *tile_total, ${T} *tile_prefix, int *tile_status,
         unsigned *next_tile) {
  constexpr int kItems = ${Items}, kTile = 256 * kItems;
  // The tile passes through shared memory so that global loads and stores
  // are coalesced (element j at j + j / 32: the elements a warp's threads
  // read at once, one from each thread's consecutive run, then lie in 32
  // different banks).
  __shared__ ${T} s_data[kTile + kTile / 32];
  __shared__ int s_tile;
  __shared__ ${T} s_warp[8];
  __shared__ ${T} s_before;
  if (threadIdx.x == 0)
    s_tile = (int)atomicAdd(next_tile, 1u);
  __syncthreads();
  const int tile = s_tile;
  const long long base = (long long)tile * kTile;
  const bool full = base + kTile <= n;
  (void)full;
${LoadVec}{
    for (int i = 0; i < kItems; ++i) {
      int j = i * 256 + threadIdx.x;
      s_data[j + j / 32] = base + j < n ? in[base + j] : (${T})0;
    }
  }
  __syncthreads();
  ${T} v[kItems];
  for (int i = 0; i < kItems; ++i) {
    int j = threadIdx.x * kItems + i;
    v[i] = s_data[j + j / 32];
  }
  for (int i = 1; i < kItems; ++i)
    v[i] += v[i - 1];
  // The threads' totals scanned across the block: in each warp with
  // shuffles, then the warps' totals by the first warp.
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  ${T} x = v[kItems - 1];
  for (int d = 1; d < 32; d *= 2) {
    ${T} y = __shfl_up_sync(0xffffffffu, x, d);
    if (lane >= d)
      x += y;
  }
  if (lane == 31)
    s_warp[warp] = x;
  __syncthreads();
  if (warp == 0) {
    ${T} w = lane < 8 ? s_warp[lane] : (${T})0;
    for (int d = 1; d < 8; d *= 2) {
      ${T} y = __shfl_up_sync(0xffffffffu, w, d);
      if (lane >= d)
        w += y;
    }
    if (lane < 8)
      s_warp[lane] = w;
  }
  __syncthreads();
  const ${T} total = s_warp[7];
  ${T} before_thread = x - v[kItems - 1] + (warp > 0 ? s_warp[warp - 1] : (${T})0);
  if (warp == 0) {
    ${T} before = 0;
    if (tile == 0) {
      if (lane == 0) {
        tile_prefix[0] = total;
        __threadfence();
        atomicExch(&tile_status[0], 2);
      }
    } else {
      if (lane == 0) {
        tile_total[tile] = total;
        __threadfence();
        atomicExch(&tile_status[tile], 1);
      }
      // Look back a warp of predecessors at a time: lane i reads tile
      // (end - i); the nearest with its prefix published ends the walk.
      for (int end = tile - 1;; end -= 32) {
        const int t = end - lane;
        int status;
        do {
          status = t >= 0 ? *(volatile int *)&tile_status[t] : 2;
        } while (__any_sync(0xffffffffu, status == 0));
        __threadfence();
        ${T} value = t < 0 ? (${T})0
                   : status == 2 ? *(volatile ${T} *)&tile_prefix[t]
                                 : *(volatile ${T} *)&tile_total[t];
        unsigned done = __ballot_sync(0xffffffffu, status == 2);
        int stop = done ? __ffs(done) - 1 : 31;
        if (lane > stop)
          value = 0;
        for (int d = 16; d > 0; d /= 2)
          value += __shfl_down_sync(0xffffffffu, value, d);
        before += __shfl_sync(0xffffffffu, value, 0);
        if (done)
          break;
      }
      if (lane == 0) {
        tile_prefix[tile] = before + total;
        __threadfence();
        atomicExch(&tile_status[tile], 2);
      }
    }
    if (lane == 0)
      s_before = before;
  }
  __syncthreads();
  before_thread += s_before;
  for (int i = 0; i < kItems; ++i) {
    int j = threadIdx.x * kItems + i;
    s_data[j + j / 32] = v[i] + before_thread;
  }
  __syncthreads();
${StoreVec}{
    for (int i = 0; i < kItems; ++i) {
      int j = i * 256 + threadIdx.x;
      if (base + j < n)
        out[base + j] = s_data[j + j / 32];
    }
  }
}
)",
      {{"K", K},
       {"T", typeName(In)},
       {"Items", Vec ? "32" : "16"},
       {"LoadVec", Vec ? LoadVec : "  "},
       {"StoreVec", Vec ? StoreVec : "  "}});
  C.Launch = fillTemplate(
      R"(  {
    int tiles = (${N} + ${Tile} - 1) / ${Tile};
    ${T} *tile_total = nullptr, *tile_prefix = nullptr;
    int *tile_status = nullptr;
    unsigned *next_tile = nullptr;
    OPTIML_CHECK(cudaMalloc(&tile_total, sizeof(${T}) * tiles));
    OPTIML_CHECK(cudaMalloc(&tile_prefix, sizeof(${T}) * tiles));
    OPTIML_CHECK(cudaMalloc(&tile_status, sizeof(int) * tiles));
    OPTIML_CHECK(cudaMalloc(&next_tile, sizeof(unsigned)));
    OPTIML_CHECK(cudaMemset(tile_status, 0, sizeof(int) * tiles));
    OPTIML_CHECK(cudaMemset(next_tile, 0, sizeof(unsigned)));
    ${K}<<<tiles, 256>>>(${N}, d_${In}, d_${Out}, tile_total, tile_prefix,
                         tile_status, next_tile);
    OPTIML_CHECK(cudaGetLastError());
    OPTIML_CHECK(cudaFree(tile_total));
    OPTIML_CHECK(cudaFree(tile_prefix));
    OPTIML_CHECK(cudaFree(tile_status));
    OPTIML_CHECK(cudaFree(next_tile));
  }
)",
      {{"K", K},
       {"N", N},
       {"Tile", Vec ? "8192" : "4096"},
       {"T", typeName(In)},
       {"In", In.Name},
       {"Out", Out.Name}});
  return C;
}

std::vector<std::pair<std::string, KernelCode>> expertCodes(const Spec &S) {
  switch (S.Class) {
  case ProgramClass::Gemm:
    return {{"register-blocked 128x128 tiles", gemmBlocked(S)}};
  case ProgramClass::Scan:
    return {{"one pass, decoupled look-back", scanLookback(S)}};
  default:
    return {};
  }
}

} // namespace synth
} // namespace optiml
