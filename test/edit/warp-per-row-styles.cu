// warp-per-row on row loops written eighteen ways: row sums through a row
// pointer with the row length a runtime argument; a row max behind an early
// return with fmaxf on very short rows; a sum of squares in a counting
// `while` loop; a template over the element type and the column count
// (float x 77, double x 32); the row means of an AoS matrix of float2; a
// gemv through inline index helpers; a row L1 norm in a namespace launched
// through a macro; a two-pass row normalize (sum, then a second loop
// writing the row); a CSR row dot under __restrict__; rows counted over a 2D
// grid of 1D blocks; a weight table each thread fills before the loop; the
// halves of float2 rows in two sums stored through make_float2, and in one
// float2 accumulator written member by member (per block: each member
// staged through shared memory); a row's mean, variance and max kept in
// one struct accumulator (a layer norm's statistics); an
// integer count of positive elements (exact); members kept by comparisons
// (`if (v < a.lo) a.lo = v;`, `s.w = s.w < v ? v : s.w`) in a struct with
// NaN elements, a float4 beside two sums, and integer members, with the
// comparisons' look-alikes refused (NOT lines, never launched). Rows of
// 77, 33 and 5 elements (not multiples of 32) as well as 32 and 64. The edits
// applied one after another compile with nvcc and the input is left as it
// was. The program checks each kernel against the CPU, so the GPU check
// (scripts/gpu-edit-family.sh) runs `eval` on the result.
// REQUIRES: cuda-sdk
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/k.cu && cp %s %t/all.cu
// RUN: clang-optiml transforms -v %t/k.cu | FileCheck --check-prefix=WHY %s
// RUN: clang-optiml transforms -v %t/k.cu | FileCheck --check-prefix=NOT %s
// RUN: sed -n 's|^// EDIT: ||p' %s > %t/edits.jsonl
// RUN: while read -r e; do \
// RUN:   echo "$e" > %t/e.json && \
// RUN:   clang-optiml apply %t/all.cu --edit %t/e.json -o %t/next.cu && mv %t/next.cu %t/all.cu || exit 1; \
// RUN: done < %t/edits.jsonl
// RUN: grep -v '^//' %t/all.cu | FileCheck --check-prefix=OUT %s
// RUN: %if nvcc %{ %nvcc -c -arch=sm_90 -o %t/all.o %t/all.cu %}
// RUN: python3 %inputs/edit/host-run.py %t/k.cu | FileCheck --check-prefix=HOST %s
// RUN: python3 %inputs/edit/host-run.py %t/all.cu | FileCheck --check-prefix=HOST %s
// RUN: cmp %s %t/k.cu
// Its kernels run on the host (host-run.py: a block's threads as fibers
// where they wait for each other), before the edits and after: every
// check passes.
// HOST-NOT: FAIL
// HOST: {{^PASS$}}

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(call)                                                            \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      fprintf(stderr, "CUDA error %s at line %d\n", cudaGetErrorString(e_),    \
              __LINE__);                                                       \
      exit(2);                                                                 \
    }                                                                          \
  } while (0)

// Row sums: the row reached through a pointer, its length an argument.
// WHY: warp-per-row row_sums: one thread per item 'r' (bound 'rows') with 1 inner loop: row_sums/loop0 (sum of 's'); rewrite: one warp per item, lanes stride the loops
__global__ void row_sums(const float *m, float *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    const float *row = m + (size_t)r * cols;
    float s = 0.0f;
    for (int j = 0; j < cols; ++j)
      s += row[j];
    out[r] = s;
  }
}
// OUT: for (int j = lane{{[0-9]+}}; j < cols; j += 32)
// OUT: for (int offset{{[0-9]*}} = 16; offset{{[0-9]*}} > 0; offset{{[0-9]*}} /= 2) s += __shfl_xor_sync(0xffffffffu, s, offset{{[0-9]*}});
// OUT-NEXT: if (lane{{[0-9]+}} == 0) out[r] = s;

// Row max: early return, fmaxf from the lowest float.
// WHY: warp-per-row row_max: one thread per item 'r' (bound 'rows') with 1 inner loop: row_max/loop0 (max of 'm'); rewrite: one warp per item, lanes stride the loops
__global__ void row_max(const float *a, float *mx, int rows, int cols) {
  const int r = threadIdx.x + blockIdx.x * blockDim.x;
  if (r >= rows)
    return;
  float m = -FLT_MAX;
  for (int j = 0; j < cols; j++)
    m = fmaxf(m, a[r * cols + j]);
  mx[r] = m;
}
// OUT: const int r = blockIdx.x * (blockDim.x / 4) + threadIdx.x / 4;
// OUT: unsigned group_mask{{[0-9]*}} = 0xfu << (threadIdx.x % 32 - lane{{[0-9]+}});
// OUT: for (int offset{{[0-9]*}} = 2; offset{{[0-9]*}} > 0; offset{{[0-9]*}} /= 2) m = fmaxf(m, __shfl_xor_sync(group_mask{{[0-9]*}}, m, offset{{[0-9]*}}, 4));

// Sum of squares in a while loop over an unsigned counter.
// WHY: warp-per-row sq_while: one thread per item 'r' (bound 'rows') with 1 inner loop: sq_while/loop0 (sum of 'acc'); rewrite: one warp per item, lanes stride the loops
__global__ void sq_while(const float *x, float *out, unsigned rows,
                         unsigned cols) {
  unsigned r = blockDim.x * blockIdx.x + threadIdx.x;
  if (r >= rows)
    return;
  float acc = 0.f;
  unsigned j = 0;
  while (j < cols) {
    float v = x[r * cols + j];
    acc += v * v;
    ++j;
  }
  out[r] = acc;
}
// OUT: unsigned r = blockIdx.x;
// OUT: unsigned j = lane{{[0-9]+}};
// OUT: j += 64;
// OUT: __shared__ float acc_warps{{[0-9]*}}[2];

// A template over the element type and the row length.
// WHY: warp-per-row row_sum_t: one thread per item 'r' (bound 'rows') with 1 inner loop: row_sum_t/loop0 (sum of 'acc'); rows of at most 77 elements; rewrite: one warp per item, lanes stride the loops
template <typename T, int COLS>
__global__ void row_sum_t(const T *in, T *out, int rows) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    T acc = T(0);
#pragma unroll
    for (int c = 0; c < COLS; ++c)
      acc += in[r * COLS + c];
    out[r] = acc;
  }
}
// OUT: #pragma unroll
// OUT-NEXT: for (int c = lane{{[0-9]+}}; c < COLS; c += 32)

// Row means of an array of structures: each element a float2.
// WHY: warp-per-row aos_mean: one thread per item 'r' (bound 'rows') with 1 inner loop: aos_mean/loop0 (sum of 's'); rewrite: one warp per item, lanes stride the loops
__global__ void aos_mean(const float2 *m, float *mean, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float s = 0.f;
    for (int j = 0; j < cols; ++j) {
      float2 v = m[r * cols + j];
      s += v.x + v.y;
    }
    mean[r] = s / (2 * cols);
  }
}
// OUT: for (int j = lane{{[0-9]+}}; j < cols; j += 8) {
// OUT: if (lane{{[0-9]+}} == 0) mean[r] = s / (2 * cols);

// A gemv written with inline index helpers.
__device__ __forceinline__ int global_row() {
  return blockIdx.x * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int at(int r, int c, int ld) { return r * ld + c; }
// WHY: warp-per-row gemv: one thread per item 'i' (bound 'm') with 1 inner loop: gemv/loop0 (sum of 'dot'); rewrite: one warp per item, lanes stride the loops
__global__ void gemv(const float *A, const float *x, float *y, int m, int n,
                     float alpha) {
  int i = global_row();
  if (i < m) {
    float dot = 0.f;
    for (int k = 0; k < n; ++k)
      dot += A[at(i, k, n)] * x[k];
    y[i] = alpha * dot;
  }
}
// OUT: int i = blockIdx.x;
// OUT: for (int k = lane{{[0-9]+}}; k < n; k += 128)

// A kernel in a namespace, launched through a macro.
namespace la {
// WHY: warp-per-row la::row_l1: one thread per item 'r' (bound 'rows') with 1 inner loop: la::row_l1/loop0 (sum of 's'); rewrite: one warp per item, lanes stride the loops
__global__ void row_l1(const double *a, double *norm, long rows, long cols) {
  long r = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    double s = 0.0;
    for (long j = 0; j < cols; ++j)
      s += fabs(a[r * cols + j]);
    norm[r] = s;
  }
}
// OUT: long r = blockIdx.x * (blockDim.x / 16) + threadIdx.x / 16;
// OUT: for (long j = lane{{[0-9]+}}; j < cols; j += 16)
} // namespace la
#define LAUNCH(kernel, grid, block, ...) kernel<<<grid, block>>>(__VA_ARGS__)

// Two passes: the row's absolute sum, then the row scaled by it.
// WHY: warp-per-row normalize: one thread per item 'r' (bound 'rows') with 2 inner loops: normalize/loop0 (sum of 's') normalize/loop1 (elementwise writes); rewrite: one warp per item, lanes stride the loops
__global__ void normalize(const float *x, float *y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows)
    return;
  float s = 1.f;
  for (int j = 0; j < cols; ++j)
    s += fabsf(x[r * cols + j]);
  const float inv = 1.f / s;
  for (int j = 0; j < cols; ++j)
    y[r * cols + j] = x[r * cols + j] * inv;
}
// OUT: if (lane{{[0-9]+}} != 0) s = 0;
// OUT-NEXT: for (int j = lane{{[0-9]+}}; j < cols; j += 96)
// OUT: __shared__ float s_warps{{[0-9]*}}[3];
// OUT: const float inv = 1.f / s;
// OUT-NEXT: for (int j = lane{{[0-9]+}}; j < cols; j += 96)
// OUT-NEXT: y[r * cols + j] = x[r * cols + j] * inv;

// CSR rows dotted with a vector, every pointer __restrict__.
// WHY: warp-per-row csr_dot: one thread per item 'row' (bound 'n') with 1 inner loop: csr_dot/loop0 (sum of 'dot'); rewrite: one warp per item, lanes stride the loops
__global__ void csr_dot(int n, const int *__restrict__ rp,
                        const int *__restrict__ ci,
                        const float *__restrict__ val,
                        const float *__restrict__ x, float *__restrict__ y) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n) {
    float dot = 0.f;
    for (int k = rp[row]; k < rp[row + 1]; ++k)
      dot += val[k] * x[ci[k]];
    y[row] = dot;
  }
}
// OUT: for (int k = rp[row] + lane{{[0-9]+}}; k < rp[row + 1]; k += 8)

// Rows over a 2D grid of 1D blocks, counted row by row.
// WHY: warp-per-row grid2d_rows: one thread per item 'r' (bound 'rows') with 1 inner loop: grid2d_rows/loop0 (min of 'lo'); rewrite: one warp per item, lanes stride the loops
__global__ void grid2d_rows(const float *a, float *out, int rows, int cols) {
  int r = (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;
  if (r < rows) {
    float lo = a[r * cols];
    for (int j = 1; j < cols; ++j)
      if (a[r * cols + j] < lo)
        lo = a[r * cols + j];
    out[r] = lo;
  }
}
// OUT: int r = blockIdx.x * (blockDim.x / 8) + threadIdx.x / 8;
// OUT: float lo = a[r * cols];
// OUT-NEXT: for (int j = 1 + lane{{[0-9]+}}; j < cols; j += 8)

// A weight table each thread fills before the loop (every lane needs it).
// WHY: warp-per-row weighted: one thread per item 'r' (bound 'rows') with 1 inner loop: weighted/loop0 (sum of 's'); rewrite: one warp per item, lanes stride the loops
__global__ void weighted(const float *x, float *y, int rows, int cols,
                         float even, float odd) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows)
    return;
  float w[2];
  w[0] = even;
  w[1] = odd;
  float s = 0.f;
  for (int j = 0; j < cols; ++j)
    s += w[j & 1] * x[r * cols + j];
  y[r] = s;
}
// OUT: float w[2];
// OUT-NEXT: w[0] = even;
// OUT-NEXT: w[1] = odd;
// OUT: for (int j = lane{{[0-9]+}}; j < cols; j += 4)

// Both halves of a float2 summed in two floats, stored through make_float2.
// WHY: warp-per-row pair_means: one thread per item 'r' (bound 'rows') with 1 inner loop: pair_means/loop0 (sum of 'sx', sum of 'sy'); rewrite: one warp per item, lanes stride the loops
__global__ void pair_means(const float2 *m, float2 *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float sx = 0.f, sy = 0.f;
    for (int j = 0; j < cols; ++j) {
      const float2 v = m[r * cols + j];
      sx += v.x;
      sy += v.y;
    }
    out[r] = make_float2(sx / cols, sy / cols);
  }
}
// OUT: for (int j = lane{{[0-9]+}}; j < cols; j += 16) {
// OUT: sx += __shfl_xor_sync(group_mask{{[0-9]*}}, sx, offset{{[0-9]*}}, 16);
// OUT: sy += __shfl_xor_sync(group_mask{{[0-9]*}}, sy, offset{{[0-9]*}}, 16);
// OUT: if (lane{{[0-9]+}} == 0) out[r] = make_float2(sx / cols, sy / cols);

// Both halves of a float2 summed in one float2 accumulator: each member is
// a sum of its own, combined across lanes (and warps) member by member;
// `make_float2(0.f, 0.f)` starts both from 0, so no lane resets them.
// WHY: warp-per-row pair_sums: one thread per item 'r' (bound 'rows') with 1 inner loop: pair_sums/loop0 (sum of 'acc.x', sum of 'acc.y'); rewrite: one warp per item, lanes stride the loops
__global__ void pair_sums(const float2 *m, float2 *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float2 acc = make_float2(0.f, 0.f);
    for (int j = 0; j < cols; ++j) {
      acc.x += m[r * cols + j].x;
      acc.y += m[r * cols + j].y;
    }
    out[r] = acc;
  }
}
// OUT: int r = blockIdx.x;
// OUT: float2 acc = make_float2(0.f, 0.f);
// OUT-NEXT: for (int j = lane{{[0-9]+}}; j < cols; j += 64) {
// OUT: acc.x += __shfl_xor_sync(0xffffffffu, acc.x, offset{{[0-9]*}});
// OUT-NEXT: acc.y += __shfl_xor_sync(0xffffffffu, acc.y, offset{{[0-9]*}});
// OUT: __shared__ float acc_x_warps{{[0-9]*}}[2];
// OUT: acc.x = acc_x_warps{{[0-9]*}}[0];
// OUT: __shared__ float acc_y_warps{{[0-9]*}}[2];
// OUT: for (int w{{[0-9]*}} = 1; w{{[0-9]*}} < 2; ++w{{[0-9]*}}) acc.y += acc_y_warps{{[0-9]*}}[w{{[0-9]*}}];
// OUT: if (lane{{[0-9]+}} == 0) out[r] = acc;

// A row's mean, variance and max through one struct accumulator (a layer
// norm's statistics): two sums starting from 0 and a max from -FLT_MAX,
// which every lane starts from and which is combined as a max.
struct RowStats {
  float sum, sq, hi;
};
// WHY: warp-per-row row_stats: one thread per item 'r' (bound 'rows') with 1 inner loop: row_stats/loop0 (sum of 'st.sum', sum of 'st.sq', max of 'st.hi'); rewrite: one warp per item, lanes stride the loops
__global__ void row_stats(const float *x, float *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows)
    return;
  RowStats st = {0.f, 0.f, -FLT_MAX};
  for (int j = 0; j < cols; ++j) {
    const float v = x[r * cols + j];
    st.sum += v;
    st.sq = st.sq + v * v;
    st.hi = fmaxf(st.hi, v);
  }
  const float mean = st.sum / cols;
  out[3 * r] = mean;
  out[3 * r + 1] = st.sq / cols - mean * mean;
  out[3 * r + 2] = st.hi;
}
// OUT: RowStats st = {0.f, 0.f, -FLT_MAX};
// OUT-NEXT: for (int j = lane{{[0-9]+}}; j < cols; j += 16) {
// OUT: for (int offset{{[0-9]*}} = 8; offset{{[0-9]*}} > 0; offset{{[0-9]*}} /= 2) {
// OUT-NEXT: st.sum += __shfl_xor_sync(group_mask{{[0-9]*}}, st.sum, offset{{[0-9]*}}, 16);
// OUT-NEXT: st.sq += __shfl_xor_sync(group_mask{{[0-9]*}}, st.sq, offset{{[0-9]*}}, 16);
// OUT-NEXT: st.hi = fmaxf(st.hi, __shfl_xor_sync(group_mask{{[0-9]*}}, st.hi, offset{{[0-9]*}}, 16));
// OUT-NEXT: }
// OUT-NEXT: const float mean = st.sum / cols;
// OUT-NEXT: if (lane{{[0-9]+}} == 0) out[3 * r] = mean;

// An integer count of the positive elements of each row.
// WHY: warp-per-row count_pos: one thread per item 'r' (bound 'rows') with 1 inner loop: count_pos/loop0 (sum of 'c'); rewrite: one warp per item, lanes stride the loops
__global__ void count_pos(const float *a, int *count, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    int c = 0;
    for (int j = 0; j < cols; ++j)
      c += a[r * cols + j] > 0.f ? 1 : 0;
    count[r] = c;
  }
}
// OUT: c += __shfl_xor_sync(0xffffffffu, c, offset{{[0-9]*}});

// A row's range in a small struct, each end kept by a comparison as the
// scalar forms are (`if (v < a.lo) a.lo = v;`): every lane starts from
// the same ends and the lanes combine each member with its own comparison
// (NaN elements are never taken, as in the loop).
struct Range {
  float lo, hi;
};
// WHY: warp-per-row row_range: one thread per item 'r' (bound 'rows') with 1 inner loop: row_range/loop0 (min of 'a.lo', max of 'a.hi'); rewrite: one warp per item, lanes stride the loops
__global__ void row_range(const float *m, Range *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    Range a = {FLT_MAX, -FLT_MAX};
    for (int c = 0; c < cols; ++c) {
      float v = m[r * cols + c];
      if (v < a.lo)
        a.lo = v;
      if (v > a.hi) {
        a.hi = v;
      }
    }
    out[r] = a;
  }
}
// OUT: Range a = {FLT_MAX, -FLT_MAX};
// OUT-NEXT: for (int c = lane{{[0-9]+}}; c < cols; c += 16) {
// OUT: for (int offset{{[0-9]*}} = 8; offset{{[0-9]*}} > 0; offset{{[0-9]*}} /= 2) {
// OUT-NEXT: { float a_lo_other{{[0-9]*}} = __shfl_xor_sync(group_mask{{[0-9]*}}, a.lo, offset{{[0-9]*}}, 16); a.lo = a_lo_other{{[0-9]*}} < a.lo ? a_lo_other{{[0-9]*}} : a.lo; }
// OUT-NEXT: { float a_hi_other{{[0-9]*}} = __shfl_xor_sync(group_mask{{[0-9]*}}, a.hi, offset{{[0-9]*}}, 16); a.hi = a_hi_other{{[0-9]*}} > a.hi ? a_hi_other{{[0-9]*}} : a.hi; }
// OUT-NEXT: }
// OUT-NEXT: if (lane{{[0-9]+}} == 0) out[r] = a;

// A float4 of a row's sum, sum of squares, min and max (the last two as
// selections, the accumulator on either side), per block: each member
// staged through shared memory and combined with its own operation.
// WHY: warp-per-row row_moments: one thread per item 'r' (bound 'rows') with 1 inner loop: row_moments/loop0 (sum of 's.x', sum of 's.y', min of 's.z', max of 's.w'); rewrite: one warp per item, lanes stride the loops
__global__ void row_moments(const float *x, float4 *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows)
    return;
  float4 s = make_float4(0.f, 0.f, FLT_MAX, -FLT_MAX);
  for (int j = 0; j < cols; ++j) {
    const float v = x[r * cols + j];
    s.x += v;
    s.y += v * v;
    s.z = v < s.z ? v : s.z;
    s.w = s.w < v ? v : s.w;
  }
  out[r] = s;
}
// OUT: float4 s = make_float4(0.f, 0.f, FLT_MAX, -FLT_MAX);
// OUT-NEXT: for (int j = lane{{[0-9]+}}; j < cols; j += 64) {
// OUT: s.x += __shfl_xor_sync(0xffffffffu, s.x, offset{{[0-9]*}});
// OUT-NEXT: s.y += __shfl_xor_sync(0xffffffffu, s.y, offset{{[0-9]*}});
// OUT-NEXT: { float s_z_other{{[0-9]*}} = __shfl_xor_sync(0xffffffffu, s.z, offset{{[0-9]*}}); s.z = s_z_other{{[0-9]*}} < s.z ? s_z_other{{[0-9]*}} : s.z; }
// OUT-NEXT: { float s_w_other{{[0-9]*}} = __shfl_xor_sync(0xffffffffu, s.w, offset{{[0-9]*}}); s.w = s.w < s_w_other{{[0-9]*}} ? s_w_other{{[0-9]*}} : s.w; }
// OUT: __shared__ float s_z_warps{{[0-9]*}}[2];
// OUT: for (int w{{[0-9]*}} = 1; w{{[0-9]*}} < 2; ++w{{[0-9]*}}) { float s_z_other{{[0-9]*}} = s_z_warps{{[0-9]*}}[w{{[0-9]*}}]; s.z = s_z_other{{[0-9]*}} < s.z ? s_z_other{{[0-9]*}} : s.z; }
// OUT: __shared__ float s_w_warps{{[0-9]*}}[2];
// OUT: if (lane{{[0-9]+}} == 0) out[r] = s;

// Integer members: a count and a max that keeps the accumulator when the
// comparison holds (`t.hi = t.hi >= v ? t.hi : v`), exact on integers
// (there is no NaN to replace it).
struct Tally {
  int n, hi;
};
// WHY: warp-per-row int_tally: one thread per item 'r' (bound 'rows') with 1 inner loop: int_tally/loop0 (sum of 't.n', max of 't.hi'); rewrite: one warp per item, lanes stride the loops
__global__ void int_tally(const int *a, Tally *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    Tally t = {0, -1000};
    for (int j = 0; j < cols; ++j) {
      int v = a[r * cols + j];
      t.n += v > 0;
      t.hi = t.hi >= v ? t.hi : v;
    }
    out[r] = t;
  }
}
// OUT: Tally t = {0, -1000};
// OUT-NEXT: for (int j = lane{{[0-9]+}}; j < cols; j += 8) {
// OUT: t.n += __shfl_xor_sync(group_mask{{[0-9]*}}, t.n, offset{{[0-9]*}}, 8);
// OUT-NEXT: { int t_hi_other{{[0-9]*}} = __shfl_xor_sync(group_mask{{[0-9]*}}, t.hi, offset{{[0-9]*}}, 8); t.hi = t.hi >= t_hi_other{{[0-9]*}} ? t.hi : t_hi_other{{[0-9]*}}; }

// Look-alikes of a member kept by a comparison, refused (never launched):
// the value assigned is not the one compared; the comparison is with
// another member; the member is also summed; the `if` has an else branch,
// or a second statement; a float member kept when the comparison holds (a
// NaN element would replace it, and the next element the NaN, which
// depends on the order lanes do not keep); the member kept by two
// comparisons.
__global__ void range_other_value(const float *m, const float *q, Range *out,
                                  int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    Range a = {FLT_MAX, -FLT_MAX};
    for (int c = 0; c < cols; ++c) {
      float v = m[r * cols + c], w = q[r * cols + c];
      if (v > a.hi)
        a.hi = w;
    }
    out[r] = a;
  }
}
// NOT: not warp-per-row range_other_value: the loop at [[#@LINE-8]]:5 writes 'a' member by member, but the statement at [[#@LINE-6]]:7 reads or writes it in a way that is not a member's sum, product, max or min (loop-carried dependence)
__global__ void range_other_member(const float *m, Range *out, int rows,
                                   int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    Range a = {FLT_MAX, -FLT_MAX};
    for (int c = 0; c < cols; ++c) {
      float v = m[r * cols + c];
      if (v > a.lo)
        a.hi = v;
    }
    out[r] = a;
  }
}
// NOT: not warp-per-row range_other_member: the loop at [[#@LINE-8]]:5 writes 'a' member by member, but the statement at [[#@LINE-6]]:7 reads or writes it in a way that is not a member's sum, product, max or min (loop-carried dependence)
__global__ void range_sum_and_max(const float *m, Range *out, int rows,
                                  int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    Range a = {0.f, 0.f};
    for (int c = 0; c < cols; ++c) {
      float v = m[r * cols + c];
      a.hi += v;
      if (v > a.hi)
        a.hi = v;
    }
    out[r] = a;
  }
}
// NOT: not warp-per-row range_sum_and_max: the loop at [[#@LINE-9]]:5 writes 'a' member by member, but keeps its member 'hi' as both a sum and a max (at [[#@LINE-6]]:7)
__global__ void range_else(const float *m, Range *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    Range a = {FLT_MAX, -FLT_MAX};
    for (int c = 0; c < cols; ++c) {
      float v = m[r * cols + c];
      if (v > a.hi)
        a.hi = v;
      else
        a.lo = v;
    }
    out[r] = a;
  }
}
// NOT: not warp-per-row range_else: the loop at [[#@LINE-10]]:5 writes 'a' member by member, but the statement at [[#@LINE-8]]:7 reads or writes it in a way that is not a member's sum, product, max or min (loop-carried dependence)
__global__ void range_two_stmts(const float *m, Range *out, int rows,
                                int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    Range a = {FLT_MAX, -FLT_MAX};
    for (int c = 0; c < cols; ++c) {
      float v = m[r * cols + c];
      if (v > a.hi) {
        a.hi = v;
        a.lo = v;
      }
    }
    out[r] = a;
  }
}
// NOT: not warp-per-row range_two_stmts: the loop at [[#@LINE-10]]:5 writes 'a' member by member, but the statement at [[#@LINE-8]]:7 reads or writes it in a way that is not a member's sum, product, max or min (loop-carried dependence)
__global__ void range_kept_float(const float *m, Range *out, int rows,
                                 int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    Range a = {FLT_MAX, -FLT_MAX};
    for (int c = 0; c < cols; ++c) {
      float v = m[r * cols + c];
      a.hi = a.hi > v ? a.hi : v;
    }
    out[r] = a;
  }
}
// NOT: not warp-per-row range_kept_float: the loop at [[#@LINE-7]]:5 writes 'a' member by member, but the statement at [[#@LINE-5]]:7 reads or writes it in a way that is not a member's sum, product, max or min (loop-carried dependence)
__global__ void range_twice(const float *m, Range *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    Range a = {FLT_MAX, -FLT_MAX};
    for (int c = 0; c < cols; ++c) {
      float v = m[r * cols + c];
      if (v > a.hi)
        a.hi = v;
      if (2.f * v > a.hi)
        a.hi = 2.f * v;
    }
    out[r] = a;
  }
}
// NOT: not warp-per-row range_twice: the loop at [[#@LINE-10]]:5 writes 'a' member by member, but keeps its member 'hi' as a max in two statements (again at [[#@LINE-6]]:7), one a comparison; a max or min written as a comparison is combined only as its member's one statement

template <typename T> T *upload(const std::vector<T> &h) {
  T *d = nullptr;
  CHECK(cudaMalloc(&d, h.size() * sizeof(T)));
  CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}
template <typename T> std::vector<T> download(const T *d, size_t n) {
  std::vector<T> h(n);
  CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}
static int failures = 0;
// Sums are reassociated across lanes: a relative tolerance.
template <typename T>
void expect(const char *name, const std::vector<T> &got,
            const std::vector<T> &want) {
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::fabs((double)got[i] - (double)want[i]) /
                                (1.0 + std::fabs((double)want[i])));
  bool ok = worst < 1e-4;
  printf("%s %s (worst error %.2e)\n", ok ? "PASS" : "FAIL", name, worst);
  failures += !ok;
}
static void expect_exact(const char *name, const std::vector<int> &got,
                         const std::vector<int> &want) {
  bool ok = got == want;
  printf("%s %s\n", ok ? "PASS" : "FAIL", name);
  failures += !ok;
}
// Maxima and minima are exact (and a NaN where a number is due fails).
static void expect_same(const char *name, const std::vector<float> &got,
                        const std::vector<float> &want) {
  bool ok = got == want;
  printf("%s %s\n", ok ? "PASS" : "FAIL", name);
  failures += !ok;
}
template <typename T> std::vector<T> values(size_t n, unsigned seed) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = (T)((int)((i * 2654435761u + seed * 40503u) >> 9) % 19 - 9) / 8;
  return v;
}

static void run_row_sums(int rows, int cols) {
  auto m = values<float>((size_t)rows * cols, 1);
  std::vector<float> want(rows, 0.f);
  for (int r = 0; r < rows; ++r)
    for (int j = 0; j < cols; ++j)
      want[r] += m[(size_t)r * cols + j];
  float *dm = upload(m), *dout = upload(std::vector<float>(rows, 0.f));
  row_sums<<<(rows + 127) / 128, 128>>>(dm, dout, rows, cols);
  CHECK(cudaGetLastError());
  expect("row_sums", download(dout, rows), want);
}

static void run_row_max(int rows, int cols) {
  auto a = values<float>((size_t)rows * cols, 2);
  std::vector<float> want(rows, -FLT_MAX);
  for (int r = 0; r < rows; ++r)
    for (int j = 0; j < cols; ++j)
      want[r] = std::max(want[r], a[r * cols + j]);
  float *da = upload(a), *dmx = upload(std::vector<float>(rows, 0.f));
  row_max<<<(rows + 255) / 256, 256>>>(da, dmx, rows, cols);
  CHECK(cudaGetLastError());
  expect("row_max", download(dmx, rows), want);
}

static void run_sq_while(unsigned rows, unsigned cols) {
  auto x = values<float>((size_t)rows * cols, 3);
  std::vector<float> want(rows, 0.f);
  for (unsigned r = 0; r < rows; ++r)
    for (unsigned j = 0; j < cols; ++j)
      want[r] += x[r * cols + j] * x[r * cols + j];
  float *dx = upload(x), *dout = upload(std::vector<float>(rows, 0.f));
  sq_while<<<(rows + 63) / 64, 64>>>(dx, dout, rows, cols);
  CHECK(cudaGetLastError());
  expect("sq_while", download(dout, rows), want);
}

template <typename T, int COLS> static void run_row_sum_t(const char *name) {
  const int rows = 333;
  auto in = values<T>((size_t)rows * COLS, 4);
  std::vector<T> want(rows, T(0));
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < COLS; ++c)
      want[r] += in[r * COLS + c];
  T *din = upload(in), *dout = upload(std::vector<T>(rows, T(0)));
  row_sum_t<T, COLS><<<(rows + 127) / 128, 128>>>(din, dout, rows);
  CHECK(cudaGetLastError());
  expect(name, download(dout, rows), want);
}

static void run_aos_mean(int rows, int cols) {
  auto flat = values<float>((size_t)rows * cols * 2, 5);
  std::vector<float2> m((size_t)rows * cols);
  std::vector<float> want(rows, 0.f);
  for (size_t i = 0; i < m.size(); ++i)
    m[i] = make_float2(flat[2 * i], flat[2 * i + 1]);
  for (int r = 0; r < rows; ++r) {
    float s = 0.f;
    for (int j = 0; j < cols; ++j)
      s += m[r * cols + j].x + m[r * cols + j].y;
    want[r] = s / (2 * cols);
  }
  float2 *dm = upload(m);
  float *dmean = upload(std::vector<float>(rows, 0.f));
  aos_mean<<<(rows + 127) / 128, 128>>>(dm, dmean, rows, cols);
  CHECK(cudaGetLastError());
  expect("aos_mean", download(dmean, rows), want);
}

static void run_gemv(int m, int n) {
  auto A = values<float>((size_t)m * n, 6), x = values<float>(n, 7);
  std::vector<float> want(m, 0.f);
  for (int i = 0; i < m; ++i) {
    float dot = 0.f;
    for (int k = 0; k < n; ++k)
      dot += A[i * n + k] * x[k];
    want[i] = 0.5f * dot;
  }
  float *dA = upload(A), *dx = upload(x),
        *dy = upload(std::vector<float>(m, 0.f));
  gemv<<<(m + 255) / 256, 256>>>(dA, dx, dy, m, n, 0.5f);
  CHECK(cudaGetLastError());
  expect("gemv", download(dy, m), want);
}

static void run_row_l1(long rows, long cols) {
  auto a = values<double>((size_t)(rows * cols), 8);
  std::vector<double> want(rows, 0.0);
  for (long r = 0; r < rows; ++r)
    for (long j = 0; j < cols; ++j)
      want[r] += std::fabs(a[r * cols + j]);
  double *da = upload(a), *dn = upload(std::vector<double>(rows, 0.0));
  LAUNCH(la::row_l1, (rows + 127) / 128, 128, da, dn, rows, cols);
  CHECK(cudaGetLastError());
  expect("la::row_l1", download(dn, rows), want);
}

static void run_normalize(int rows, int cols) {
  auto x = values<float>((size_t)rows * cols, 9);
  std::vector<float> want((size_t)rows * cols);
  for (int r = 0; r < rows; ++r) {
    float s = 1.f;
    for (int j = 0; j < cols; ++j)
      s += std::fabs(x[r * cols + j]);
    for (int j = 0; j < cols; ++j)
      want[r * cols + j] = x[r * cols + j] * (1.f / s);
  }
  float *dx = upload(x), *dy = upload(std::vector<float>(want.size(), 0.f));
  normalize<<<(rows + 127) / 128, 128>>>(dx, dy, rows, cols);
  CHECK(cudaGetLastError());
  expect("normalize", download(dy, want.size()), want);
}

// Row lengths 0..40 (empty rows too), columns spread over the vector.
static void run_csr_dot(int n, int ncols) {
  std::vector<int> rp(n + 1, 0), ci;
  for (int r = 0; r < n; ++r) {
    int len = (r * 7) % 41;
    for (int k = 0; k < len; ++k)
      ci.push_back((r * 13 + k * 29) % ncols);
    rp[r + 1] = (int)ci.size();
  }
  auto val = values<float>(ci.size(), 10), x = values<float>(ncols, 11);
  std::vector<float> want(n, 0.f);
  for (int r = 0; r < n; ++r)
    for (int k = rp[r]; k < rp[r + 1]; ++k)
      want[r] += val[k] * x[ci[k]];
  int *drp = upload(rp), *dci = upload(ci);
  float *dval = upload(val), *dx = upload(x),
        *dy = upload(std::vector<float>(n, 0.f));
  csr_dot<<<(n + 127) / 128, 128>>>(n, drp, dci, dval, dx, dy);
  CHECK(cudaGetLastError());
  expect("csr_dot", download(dy, n), want);
}

static void run_grid2d_rows(int rows, int cols) {
  auto a = values<float>((size_t)rows * cols, 12);
  std::vector<float> want(rows);
  for (int r = 0; r < rows; ++r) {
    want[r] = a[r * cols];
    for (int j = 1; j < cols; ++j)
      want[r] = std::min(want[r], a[r * cols + j]);
  }
  float *da = upload(a), *dout = upload(std::vector<float>(rows, 0.f));
  // 4 blocks of 64 threads per grid row.
  dim3 grid(4, (rows + 255) / 256);
  grid2d_rows<<<grid, 64>>>(da, dout, rows, cols);
  CHECK(cudaGetLastError());
  expect("grid2d_rows", download(dout, rows), want);
}

static void run_weighted(int rows, int cols) {
  auto x = values<float>((size_t)rows * cols, 14);
  std::vector<float> want(rows, 0.f);
  for (int r = 0; r < rows; ++r)
    for (int j = 0; j < cols; ++j)
      want[r] += (j & 1 ? -0.25f : 1.5f) * x[r * cols + j];
  float *dx = upload(x), *dy = upload(std::vector<float>(rows, 0.f));
  weighted<<<(rows + 127) / 128, 128>>>(dx, dy, rows, cols, 1.5f, -0.25f);
  CHECK(cudaGetLastError());
  expect("weighted", download(dy, rows), want);
}

static void run_pair_means(int rows, int cols) {
  auto flat = values<float>((size_t)rows * cols * 2, 16);
  std::vector<float2> m((size_t)rows * cols);
  std::vector<float> want(2 * rows, 0.f);
  for (size_t i = 0; i < m.size(); ++i)
    m[i] = make_float2(flat[2 * i], flat[2 * i + 1]);
  for (int r = 0; r < rows; ++r) {
    float sx = 0.f, sy = 0.f;
    for (int j = 0; j < cols; ++j) {
      sx += m[r * cols + j].x;
      sy += m[r * cols + j].y;
    }
    want[2 * r] = sx / cols;
    want[2 * r + 1] = sy / cols;
  }
  float2 *dm = upload(m), *dout = upload(std::vector<float2>(rows));
  pair_means<<<(rows + 63) / 64, 64>>>(dm, dout, rows, cols);
  CHECK(cudaGetLastError());
  auto got2 = download(dout, rows);
  std::vector<float> got(2 * rows);
  for (int r = 0; r < rows; ++r) {
    got[2 * r] = got2[r].x;
    got[2 * r + 1] = got2[r].y;
  }
  expect("pair_means", got, want);
}

static void run_pair_sums(int rows, int cols) {
  auto flat = values<float>((size_t)rows * cols * 2, 15);
  std::vector<float2> m((size_t)rows * cols);
  std::vector<float> want(2 * rows, 0.f);
  for (size_t i = 0; i < m.size(); ++i)
    m[i] = make_float2(flat[2 * i], flat[2 * i + 1]);
  for (int r = 0; r < rows; ++r)
    for (int j = 0; j < cols; ++j) {
      want[2 * r] += m[r * cols + j].x;
      want[2 * r + 1] += m[r * cols + j].y;
    }
  float2 *dm = upload(m), *dout = upload(std::vector<float2>(rows));
  pair_sums<<<(rows + 127) / 128, 128>>>(dm, dout, rows, cols);
  CHECK(cudaGetLastError());
  auto got2 = download(dout, rows);
  std::vector<float> got(2 * rows);
  for (int r = 0; r < rows; ++r) {
    got[2 * r] = got2[r].x;
    got[2 * r + 1] = got2[r].y;
  }
  expect("pair_sums", got, want);
}

static void run_row_stats(int rows, int cols) {
  auto x = values<float>((size_t)rows * cols, 17);
  std::vector<float> want(3 * rows);
  for (int r = 0; r < rows; ++r) {
    float sum = 0.f, sq = 0.f, hi = -FLT_MAX;
    for (int j = 0; j < cols; ++j) {
      const float v = x[r * cols + j];
      sum += v;
      sq += v * v;
      hi = std::max(hi, v);
    }
    const float mean = sum / cols;
    want[3 * r] = mean;
    want[3 * r + 1] = sq / cols - mean * mean;
    want[3 * r + 2] = hi;
  }
  float *dx = upload(x), *dout = upload(std::vector<float>(3 * rows, 0.f));
  row_stats<<<(rows + 127) / 128, 128>>>(dx, dout, rows, cols);
  CHECK(cudaGetLastError());
  expect("row_stats", download(dout, 3 * rows), want);
}

static void run_count_pos(int rows, int cols) {
  auto a = values<float>((size_t)rows * cols, 13);
  std::vector<int> want(rows, 0);
  for (int r = 0; r < rows; ++r)
    for (int j = 0; j < cols; ++j)
      want[r] += a[r * cols + j] > 0.f ? 1 : 0;
  float *da = upload(a);
  int *dc = upload(std::vector<int>(rows, -1));
  count_pos<<<(rows + 127) / 128, 128>>>(da, dc, rows, cols);
  CHECK(cudaGetLastError());
  expect_exact("count_pos", download(dc, rows), want);
}

// Every third row holds a NaN, which neither comparison ever takes.
static void run_row_range(int rows, int cols) {
  auto m = values<float>((size_t)rows * cols, 18);
  for (int r = 0; r < rows; r += 3)
    m[(size_t)r * cols + r % cols] = NAN;
  std::vector<float> want(2 * rows);
  for (int r = 0; r < rows; ++r) {
    float lo = FLT_MAX, hi = -FLT_MAX;
    for (int c = 0; c < cols; ++c) {
      float v = m[r * cols + c];
      if (v < lo)
        lo = v;
      if (v > hi)
        hi = v;
    }
    want[2 * r] = lo;
    want[2 * r + 1] = hi;
  }
  float *dm = upload(m);
  Range *dout = upload(std::vector<Range>(rows, Range{0.f, 0.f}));
  row_range<<<(rows + 127) / 128, 128>>>(dm, dout, rows, cols);
  CHECK(cudaGetLastError());
  auto got2 = download(dout, rows);
  std::vector<float> got(2 * rows);
  for (int r = 0; r < rows; ++r) {
    got[2 * r] = got2[r].lo;
    got[2 * r + 1] = got2[r].hi;
  }
  expect_same("row_range", got, want);
}

static void run_row_moments(int rows, int cols) {
  auto x = values<float>((size_t)rows * cols, 19);
  std::vector<float> sums(2 * rows), ends(2 * rows);
  for (int r = 0; r < rows; ++r) {
    float s = 0.f, sq = 0.f, lo = FLT_MAX, hi = -FLT_MAX;
    for (int j = 0; j < cols; ++j) {
      const float v = x[r * cols + j];
      s += v;
      sq += v * v;
      lo = v < lo ? v : lo;
      hi = hi < v ? v : hi;
    }
    sums[2 * r] = s;
    sums[2 * r + 1] = sq;
    ends[2 * r] = lo;
    ends[2 * r + 1] = hi;
  }
  float *dx = upload(x);
  float4 *dout = upload(std::vector<float4>(rows));
  row_moments<<<(rows + 127) / 128, 128>>>(dx, dout, rows, cols);
  CHECK(cudaGetLastError());
  auto got4 = download(dout, rows);
  std::vector<float> gsums(2 * rows), gends(2 * rows);
  for (int r = 0; r < rows; ++r) {
    gsums[2 * r] = got4[r].x;
    gsums[2 * r + 1] = got4[r].y;
    gends[2 * r] = got4[r].z;
    gends[2 * r + 1] = got4[r].w;
  }
  expect("row_moments sums", gsums, sums);
  expect_same("row_moments ends", gends, ends);
}

static void run_int_tally(int rows, int cols) {
  std::vector<int> a((size_t)rows * cols);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = (int)((i * 2654435761u) >> 7) % 201 - 100;
  std::vector<int> want(2 * rows);
  for (int r = 0; r < rows; ++r) {
    int n = 0, hi = -1000;
    for (int j = 0; j < cols; ++j) {
      int v = a[r * cols + j];
      n += v > 0;
      hi = hi >= v ? hi : v;
    }
    want[2 * r] = n;
    want[2 * r + 1] = hi;
  }
  int *da = upload(a);
  Tally *dout = upload(std::vector<Tally>(rows, Tally{-1, -1}));
  int_tally<<<(rows + 127) / 128, 128>>>(da, dout, rows, cols);
  CHECK(cudaGetLastError());
  auto got2 = download(dout, rows);
  std::vector<int> got(2 * rows);
  for (int r = 0; r < rows; ++r) {
    got[2 * r] = got2[r].n;
    got[2 * r + 1] = got2[r].hi;
  }
  expect_exact("int_tally", got, want);
}

int main() {
  run_row_sums(1000, 77);
  run_row_max(1000, 5);
  run_sq_while(333, 64);
  run_row_sum_t<float, 77>("row_sum_t<float, 77>");
  run_row_sum_t<double, 32>("row_sum_t<double, 32>");
  run_aos_mean(500, 77);
  run_gemv(1000, 77);
  run_row_l1(257, 33);
  run_normalize(1000, 77);
  run_csr_dot(1001, 300);
  run_grid2d_rows(1000, 77);
  run_weighted(1000, 5);
  run_pair_means(777, 5);
  run_pair_sums(300, 77);
  run_row_stats(501, 77);
  run_count_pos(999, 32);
  run_row_range(1000, 77);
  run_row_moments(501, 77);
  run_int_tally(999, 33);
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}

// Every launch gets one warp, group of lanes or block per row:
// OUT: row_sums<<<(rows + 7) / 8, 256>>>(dm, dout, rows, cols);
// OUT: row_max<<<(rows + 63) / 64, 256>>>(da, dmx, rows, cols);
// OUT: sq_while<<<rows, 64>>>(dx, dout, rows, cols);
// OUT: row_sum_t<T, COLS><<<(rows + 7) / 8, 256>>>(din, dout, rows);
// OUT: aos_mean<<<(rows + 31) / 32, 256>>>(dm, dmean, rows, cols);
// OUT: gemv<<<m, 128>>>(dA, dx, dy, m, n, 0.5f);
// OUT: LAUNCH(la::row_l1, (rows + 15) / 16, 256, da, dn, rows, cols);
// OUT: normalize<<<rows, 96>>>(dx, dy, rows, cols);
// OUT: csr_dot<<<(n + 31) / 32, 256>>>(n, drp, dci, dval, dx, dy);
// OUT: grid2d_rows<<<(rows + 15) / 16, 128>>>(da, dout, rows, cols);
// OUT: weighted<<<(rows + 63) / 64, 256>>>(dx, dy, rows, cols, 1.5f, -0.25f);
// OUT: pair_means<<<(rows + 1) / 2, 32>>>(dm, dout, rows, cols);
// OUT: pair_sums<<<rows, 64>>>(dm, dout, rows, cols);
// OUT: row_stats<<<(rows + 15) / 16, 256>>>(dx, dout, rows, cols);
// OUT: count_pos<<<(rows + 7) / 8, 256>>>(da, dc, rows, cols);
// OUT: row_range<<<(rows + 15) / 16, 256>>>(dm, dout, rows, cols);
// OUT: row_moments<<<rows, 64>>>(dx, dout, rows, cols);
// OUT: int_tally<<<(rows + 31) / 32, 256>>>(da, dout, rows, cols);

// The edits, applied one after another by the RUN lines above and by
// scripts/gpu-edit-family.sh on the GPU:
// EDIT: {"kind":"warp-per-row","target":"row_sums","params":{}}
// EDIT: {"kind":"warp-per-row","target":"row_max","params":{"lanes":4}}
// EDIT: {"kind":"warp-per-row","target":"sq_while","params":{"per":"block","block_size":64}}
// EDIT: {"kind":"warp-per-row","target":"row_sum_t","params":{}}
// EDIT: {"kind":"warp-per-row","target":"aos_mean","params":{"lanes":8}}
// EDIT: {"kind":"warp-per-row","target":"gemv","params":{"per":"block","block_size":128}}
// EDIT: {"kind":"warp-per-row","target":"la::row_l1","params":{"lanes":16}}
// EDIT: {"kind":"warp-per-row","target":"normalize","params":{"per":"block","block_size":96}}
// EDIT: {"kind":"warp-per-row","target":"csr_dot","params":{"lanes":8}}
// EDIT: {"kind":"warp-per-row","target":"grid2d_rows","params":{"lanes":8,"block_size":128}}
// EDIT: {"kind":"warp-per-row","target":"weighted","params":{"lanes":4}}
// EDIT: {"kind":"warp-per-row","target":"pair_means","params":{"lanes":16,"block_size":32}}
// EDIT: {"kind":"warp-per-row","target":"pair_sums","params":{"per":"block","block_size":64}}
// EDIT: {"kind":"warp-per-row","target":"row_stats","params":{"lanes":16}}
// EDIT: {"kind":"warp-per-row","target":"count_pos","params":{}}
// EDIT: {"kind":"warp-per-row","target":"row_range","params":{"lanes":16}}
// EDIT: {"kind":"warp-per-row","target":"row_moments","params":{"per":"block","block_size":64}}
// EDIT: {"kind":"warp-per-row","target":"int_tally","params":{"lanes":8}}
