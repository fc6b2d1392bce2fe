#include "CatalogTesting.h"

using namespace optiml;
using namespace optiml::testing_catalog;

namespace {

const Transform &warpReduce() {
  static auto T = createWarpReduceTransform();
  return *T;
}

TEST(CatalogWarpReduceTest, AtomicPerThreadBecomesOnePerWarp) {
  std::string Src = R"(__global__ void sum(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(out, x[i]);
}
void run(const float *x, float *out, int n) {
  int threads = 256;
  sum<<<(n + threads - 1) / threads, threads>>>(x, out, n);
}
)";
  EXPECT_TRUE(warpReduce().changesPrecision(makeEdit("warp-reduce", "sum")));
  EXPECT_EQ(applyTo(warpReduce(), Src, makeEdit("warp-reduce", "sum")),
            R"(__global__ void sum(const float *x, float *out, int n) {
  float warp_sum = 0;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    warp_sum += x[i];
  for (int off = 16; off > 0; off /= 2)
    warp_sum += __shfl_down_sync(0xffffffffu, warp_sum, off);
  if (threadIdx.x % 32 == 0)
    atomicAdd(out, warp_sum);
}
void run(const float *x, float *out, int n) {
  int threads = 256;
  sum<<<(n + threads - 1) / threads, threads>>>(x, out, n);
}
)");
}

TEST(CatalogWarpReduceTest, GridStrideCountWithConversion) {
  std::string Src =
      R"(__global__ void count(const float *x, int *hits, int n, float t) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    if (x[i] > t) atomicAdd(&hits[0], 1);
    if (x[i] < -t) atomicAdd(&hits[0], x[i] < -2 * t ? 2 : 1);
  }
}
void run(const float *x, int *hits, int n) {
  count<<<528, dim3(128)>>>(x, hits, n, 0.5f);
}
)";
  EXPECT_EQ(
      applyTo(warpReduce(), Src, makeEdit("warp-reduce", "count")),
      R"(__global__ void count(const float *x, int *hits, int n, float t) {
  int warp_sum = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    if (x[i] > t) warp_sum += 1;
    if (x[i] < -t) warp_sum += x[i] < -2 * t ? 2 : 1;
  }
  for (int off = 16; off > 0; off /= 2)
    warp_sum += __shfl_down_sync(0xffffffffu, warp_sum, off);
  if (threadIdx.x % 32 == 0)
    atomicAdd(&hits[0], warp_sum);
}
void run(const float *x, int *hits, int n) {
  count<<<528, dim3(128)>>>(x, hits, n, 0.5f);
}
)");
}

TEST(CatalogWarpReduceTest, RefusesNearMisses) {
  struct Case {
    const char *Src, *Why;
  } Cases[] = {
      {R"(__global__ void k(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  atomicAdd(out, x[i]);
}
void run(const float *x, float *out, int n) { k<<<1, 256>>>(x, out, n); }
)",
       "returns early"},
      {R"(__global__ void k(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&out[i % 16], x[i]);
}
void run(const float *x, float *out, int n) { k<<<1, 256>>>(x, out, n); }
)",
       "is not the same for every thread"},
      {R"(__global__ void k(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(out, x[i]);
}
void run(const float *x, float *out, int n) { k<<<1, 100>>>(x, out, n); }
)",
       "uses blocks of 100 threads, not a multiple of 32"},
      {R"(__global__ void k(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(out, x[i]);
}
void run(const float *x, float *out, int n, int b) { k<<<1, b>>>(x, out, n); }
)",
       "is not a one-dimensional constant"},
      {R"(__global__ void k(const int *x, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicMax(out, x[i]);
}
void run(const int *x, int *out, int n) { k<<<1, 256>>>(x, out, n); }
)",
       "only atomicAdd is combined"},
      {R"(__global__ void k(const float *x, float *out, int n) {
  __shared__ float s[256];
  s[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}
)",
       "no shared-memory tree loop"},
  };
  for (const Case &C : Cases) {
    Applicability A = prepareOn(warpReduce(), C.Src, "k");
    EXPECT_FALSE(A.Applies) << C.Src;
    EXPECT_NE(A.Reason.find(C.Why), std::string::npos)
        << "reason: " << A.Reason << "\nexpected: " << C.Why;
  }
}

// Tree reductions written three ways: a store into an int array from a
// blockDim.x / 2 loop with `s >>= 1` and an atomic with a cast; a float
// array with a constant start, `s /= 2`, threadIdx.x used directly and a
// per-block store; a max over a loop to s > 32 and a volatile warp tail.
TEST(CatalogWarpReduceTest, TreeBlockDimStartAtomicWithCast) {
  std::string Src =
      R"(__global__ void k(const int *in, unsigned long long *total, int n) {
  __shared__ int acc[256];
  int me = threadIdx.x;
  acc[me] = me < n ? in[blockIdx.x * blockDim.x + me] : 0;
  __syncthreads();
  for (int h = blockDim.x / 2; h > 0; h >>= 1) {
    if (me < h)
      acc[me] += acc[me + h];
    __syncthreads();
  }
  if (me == 0)
    atomicAdd(total, (unsigned long long)acc[0]);
}
void run(const int *in, unsigned long long *t, int n) { k<<<(n + 255) / 256, 256>>>(in, t, n); }
)";
  Applicability A = prepareOn(warpReduce(), Src, "k");
  ASSERT_TRUE(A.Applies) << A.Reason;
  EXPECT_EQ(A.Reason, "shared-memory tree reduction (+) of int in 'acc': warp "
                      "shuffles and one __syncthreads() instead of one per "
                      "step; thread 0 keeps its final statement");
  ASSERT_EQ(A.Suggestions.size(), 1u);
  EXPECT_FALSE(warpReduce().changesPrecision(A.Suggestions[0]));
  EXPECT_EQ(
      applyTo(warpReduce(), Src, A.Suggestions[0]),
      R"(__global__ void k(const int *in, unsigned long long *total, int n) {
  __shared__ int acc[256 / 32];
  int me = threadIdx.x;
  int v = me < n ? in[blockIdx.x * blockDim.x + me] : 0;
  for (int off = 16; off > 0; off /= 2)
    v += __shfl_down_sync(0xffffffff, v, off);
  if (me % 32 == 0)
    acc[me / 32] = v;
  __syncthreads();
  if (me < 32) {
    v = me < blockDim.x / 32 ? acc[me] : 0;
    for (int off = 16; off > 0; off /= 2)
      v += __shfl_down_sync(0xffffffff, v, off);
  }
  if (me == 0)
    atomicAdd(total, (unsigned long long)v);
}
void run(const int *in, unsigned long long *t, int n) { k<<<(n + 255) / 256, 256>>>(in, t, n); }
)");
}

TEST(CatalogWarpReduceTest, TreeEarlyReturnBecomesGuard) {
  // `if (tid != 0) return;` after the tree: thread 0's statements after it
  // read the register, inside `if (tid == 0) { ... }`.
  std::string Src =
      R"(__global__ void k(const float *in, float *out, int n) {
  __shared__ float acc[256];
  unsigned me = threadIdx.x;
  acc[me] = in[blockIdx.x * blockDim.x + me];
  __syncthreads();
  for (unsigned h = blockDim.x >> 1; h != 0; h >>= 1) {
    if (me < h)
      acc[me] += acc[me + h];
    __syncthreads();
  }
  if (me != 0)
    return;
  float total = acc[0];
  out[blockIdx.x] = total;
}
void run(const float *in, float *out, int n) { k<<<n / 256, 256>>>(in, out, n); }
)";
  Applicability A = prepareOn(warpReduce(), Src, "k");
  ASSERT_TRUE(A.Applies) << A.Reason;
  EXPECT_NE(A.Reason.find("note: the early return at 12:3 becomes 'if (me == "
                          "0) { ... }' around thread 0's statements"),
            std::string::npos)
      << A.Reason;
  ASSERT_EQ(A.Suggestions.size(), 1u);
  EXPECT_EQ(applyTo(warpReduce(), Src, A.Suggestions[0]),
            R"(__global__ void k(const float *in, float *out, int n) {
  __shared__ float acc[256 / 32];
  unsigned me = threadIdx.x;
  float v = in[blockIdx.x * blockDim.x + me];
  for (int off = 16; off > 0; off /= 2)
    v += __shfl_down_sync(0xffffffff, v, off);
  if (me % 32 == 0)
    acc[me / 32] = v;
  __syncthreads();
  if (me < 32) {
    v = me < blockDim.x / 32 ? acc[me] : 0;
    for (int off = 16; off > 0; off /= 2)
      v += __shfl_down_sync(0xffffffff, v, off);
  }
  if (me == 0) {
    float total = v;
    out[blockIdx.x] = total;
  }
}
void run(const float *in, float *out, int n) { k<<<n / 256, 256>>>(in, out, n); }
)");
}

TEST(CatalogWarpReduceTest, TreeConstantStartPerBlockStore) {
  std::string Src =
      R"(__device__ float load(const float *p, int i, int n) { return i < n ? p[i] : 0.0f; }
__global__ void k(const float *x, float *out, int n) {
  __shared__ float v[128];
  v[threadIdx.x] = load(x, blockIdx.x * 128 + threadIdx.x, n);
  __syncthreads();
  for (unsigned int s = 64; s != 0; s /= 2) {
    if (threadIdx.x < s) {
      v[threadIdx.x] = v[threadIdx.x] + v[threadIdx.x + s];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = v[0] * 0.5f;
}
void run(const float *x, float *out, int n) { k<<<n / 128, dim3(128)>>>(x, out, n); }
)";
  Applicability A = prepareOn(warpReduce(), Src, "k");
  ASSERT_TRUE(A.Applies) << A.Reason;
  ASSERT_EQ(A.Suggestions.size(), 1u);
  EXPECT_TRUE(warpReduce().changesPrecision(A.Suggestions[0]));
  // The array is named v: the register gets a fresh name.
  EXPECT_EQ(
      applyTo(warpReduce(), Src, A.Suggestions[0]),
      R"(__device__ float load(const float *p, int i, int n) { return i < n ? p[i] : 0.0f; }
__global__ void k(const float *x, float *out, int n) {
  __shared__ float v[128 / 32];
  float v1 = load(x, blockIdx.x * 128 + threadIdx.x, n);
  for (int off = 16; off > 0; off /= 2)
    v1 += __shfl_down_sync(0xffffffff, v1, off);
  if (threadIdx.x % 32 == 0)
    v[threadIdx.x / 32] = v1;
  __syncthreads();
  if (threadIdx.x < 32) {
    v1 = threadIdx.x < blockDim.x / 32 ? v[threadIdx.x] : 0;
    for (int off = 16; off > 0; off /= 2)
      v1 += __shfl_down_sync(0xffffffff, v1, off);
  }
  if (threadIdx.x == 0) out[blockIdx.x] = v1 * 0.5f;
}
void run(const float *x, float *out, int n) { k<<<n / 128, dim3(128)>>>(x, out, n); }
)");
  // A float sum reassociates: claiming otherwise is refused.
  EXPECT_NE(applyTo(warpReduce(), Src,
                    makeEdit("warp-reduce", "k",
                             {{"changes_precision", ParamValue(false)}}))
                .find("changes_precision is false, but the reduction "
                      "reassociates floating-point sums"),
            std::string::npos);
}

TEST(CatalogWarpReduceTest, TreeMaxWithWarpTail) {
  std::string Src = R"(__global__ void k(const int *in, int *out) {
  __shared__ volatile int best[512];
  const unsigned t = threadIdx.x;
  best[t] = in[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (unsigned s = blockDim.x >> 1; s >= 64; s = s >> 1) {
    if (t < s) best[t] = max(best[t], best[t + s]);
    __syncthreads();
  }
  if (t < 32) {
    best[t] = max(best[t], best[t + 32]);
    best[t] = max(best[t + 16], best[t]);
    best[t] = max(best[t], best[t + 8]);
    best[t] = max(best[t], best[t + 4]);
    best[t] = max(best[t], best[t + 2]);
    best[t] = max(best[t], best[t + 1]);
  }
  if (t == 0)
    out[blockIdx.x] = best[0];
}
void run(const int *in, int *out, int n) { k<<<n / 512, 512>>>(in, out); }
)";
  Applicability A = prepareOn(warpReduce(), Src, "k");
  ASSERT_TRUE(A.Applies) << A.Reason;
  EXPECT_EQ(A.Reason, "shared-memory tree reduction (max) of int in 'best' "
                      "with a warp-synchronous tail: warp shuffles and one "
                      "__syncthreads() instead of one per step; thread 0 "
                      "keeps its final statement");
  EXPECT_FALSE(warpReduce().changesPrecision(A.Suggestions[0]));
  EXPECT_EQ(applyTo(warpReduce(), Src, A.Suggestions[0]),
            R"(__global__ void k(const int *in, int *out) {
  __shared__ volatile int best[512 / 32];
  const unsigned t = threadIdx.x;
  int v = in[blockIdx.x * blockDim.x + t];
  for (int off = 16; off > 0; off /= 2)
    v = max(v, __shfl_down_sync(0xffffffff, v, off));
  if (t % 32 == 0)
    best[t / 32] = v;
  __syncthreads();
  if (t < 32) {
    v = t < blockDim.x / 32 ? best[t] : best[0];
    for (int off = 16; off > 0; off /= 2)
      v = max(v, __shfl_down_sync(0xffffffff, v, off));
  }
  if (t == 0)
    out[blockIdx.x] = v;
}
void run(const int *in, int *out, int n) { k<<<n / 512, 512>>>(in, out); }
)");
}

TEST(CatalogWarpReduceTest, TreeKeepsBarrierForOtherSharedMemory) {
  std::string Src = R"(__global__ void k(const float *in, float *out) {
  __shared__ float scale[1];
  __shared__ float sum[64];
  if (threadIdx.x == 0) scale[0] = in[0];
  sum[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) sum[threadIdx.x] += sum[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[0] = sum[0] * scale[0];
}
)";
  Applicability A = prepareOn(warpReduce(), Src, "k");
  ASSERT_TRUE(A.Applies) << A.Reason;
  EXPECT_NE(A.Reason.find("note: the kernel uses other shared memory: the "
                          "barrier before the loop stays"),
            std::string::npos);
  EXPECT_NE(A.Reason.find("note: the kernel is not launched in this file"),
            std::string::npos);
  EXPECT_EQ(applyTo(warpReduce(), Src, A.Suggestions[0]),
            R"(__global__ void k(const float *in, float *out) {
  __shared__ float scale[1];
  __shared__ float sum[64 / 32];
  if (threadIdx.x == 0) scale[0] = in[0];
  float v = in[threadIdx.x];
  __syncthreads();
  for (int off = 16; off > 0; off /= 2)
    v += __shfl_down_sync(0xffffffff, v, off);
  if (threadIdx.x % 32 == 0)
    sum[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < blockDim.x / 32 ? sum[threadIdx.x] : 0;
    for (int off = 16; off > 0; off /= 2)
      v += __shfl_down_sync(0xffffffff, v, off);
  }
  if (threadIdx.x == 0) out[0] = v * scale[0];
}
)");
}

TEST(CatalogWarpReduceTest, TreeKeepingItsValueInARegister) {
  // `p[tid] = r += p[tid + s]`: r equals the thread's element throughout,
  // so thread 0's r is the block's sum, and reads of it become the result.
  const char *Src = R"(__global__ void k(const float *in, float *out) {
  __shared__ float p[128];
  int tid = threadIdx.x;
  float r = in[blockIdx.x * blockDim.x + tid];
  p[tid] = r;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s)
      p[tid] = r += p[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = r + p[0];
}
void run(const float *in, float *out, int n) { k<<<n / 128, 128>>>(in, out); }
)";
  Applicability A = prepareOn(warpReduce(), Src, "k");
  ASSERT_TRUE(A.Applies) << A.Reason;
  EXPECT_NE(A.Reason.find("keeping its running value in 'r'"),
            std::string::npos)
      << A.Reason;
  std::string Out = applyTo(warpReduce(), Src, A.Suggestions[0]);
  EXPECT_NE(Out.find("  float v = r;\n"), std::string::npos) << Out;
  EXPECT_NE(Out.find("if (tid == 0) out[blockIdx.x] = v + v;"),
            std::string::npos)
      << Out;
  EXPECT_EQ(Out.find("p[tid] = r"), std::string::npos) << Out;
}

TEST(CatalogWarpReduceTest, TreeRefusals) {
  // Each source differs from a good tree in one way.
  auto Tree = [](const char *Decl, const char *Store, const char *Loop,
                 const char *Step, const char *After, const char *Launch) {
    return std::string(
               "__global__ void k(const float *in, float *out, int n) {\n"
               "  ") +
           Decl + "\n  int tid = threadIdx.x;\n  " + Store +
           "\n  __syncthreads();\n  " + Loop + " {\n    if (tid < s)\n      " +
           Step + "\n    __syncthreads();\n  }\n  " + After +
           "\n}\nvoid run(const float *in, float *out, int n) { " + Launch +
           " }\n";
  };
  const char *D = "__shared__ float p[256];";
  const char *St = "p[tid] = in[blockIdx.x * blockDim.x + tid];";
  const char *L = "for (int s = blockDim.x / 2; s > 0; s >>= 1)";
  const char *Sp = "p[tid] += p[tid + s];";
  const char *F = "if (tid == 0) out[blockIdx.x] = p[0];";
  const char *G = "k<<<n / 256, 256>>>(in, out, n);";
  struct Case {
    std::string Src;
    const char *Why;
  } Cases[] = {
      {Tree(D, St, L, Sp, F, G), nullptr},
      {Tree(D, St, L, Sp, F, "k<<<n / 96, 96>>>(in, out, n);"),
       "launch k/launch0 uses blocks of 96 threads: the tree needs a power "
       "of two, the shuffles a multiple of 32"},
      {Tree(D, St, L, Sp, F, "k<<<n / 512, 512>>>(in, out, n);"),
       "uses blocks of 512 threads, more than 'p' holds (256)"},
      {Tree(D, St, L, "p[tid] += p[tid + s + 1];", F, G),
       "the tree loop's step 'p[tid] += p[tid + s + 1]' is not 'p[tid] += "
       "p[tid + s]' (or max/min of the two, or 'p[tid] = r = r + p[tid + "
       "s]' with r the value stored)"},
      // The register kept beside the element must be the value stored.
      {[&] {
         std::string Src = Tree(D, St, L, "p[tid] = r = r + p[tid + s];",
                                "if (tid == 0) out[blockIdx.x] = r;", G);
         Src.insert(Src.find("  p[tid] ="), "  float r = 0.f;\n");
         return Src;
       }(),
       "the tree's steps keep 'r' equal to p[tid], but the store at 6:3 "
       "stores 'in[blockIdx.x * blockDim.x + tid]', not 'r'"},
      {Tree(D, St, L, "p[2 * tid] += p[2 * tid + s];", F, G),
       "'p' is indexed by '2 * tid' in the tree loop, not by threadIdx.x"},
      // A doubling stride is read as an interleaved tree, whose guard is
      // not `tid < s`.
      {Tree(D, St, "for (int s = 1; s < blockDim.x; s *= 2)", Sp, F, G),
       "the interleaved tree loop's guard 'tid < s' is not 'tid % (2 * s) "
       "== 0'"},
      {Tree(D, St, "for (int s = blockDim.x / 2; s > 0; s -= 1)", Sp, F, G),
       "the loop at 7:3 is not a tree loop 'for (... s = ...; s > 0; s >>= "
       "1)'"},
      {Tree(D, St, "for (int s = blockDim.x / 2; s > 4; s >>= 1)", Sp, F, G),
       "the tree loop's condition 's > 4' is not 's > 0'"},
      {Tree(D, St, "for (int s = n / 2; s > 0; s >>= 1)", Sp, F, G),
       "the tree loop starts at 'n / 2', not blockDim.x / 2"},
      {Tree(D, St, "for (int s = blockDim.x / 2; s > 32; s >>= 1)", Sp, F, G),
       "the tree loop stops at 32 but is not followed by a warp tail"},
      {Tree(D, "p[tid] = in[tid]; p[tid] *= 2;", L, Sp, F, G),
       "'p' is used at 5:21 before the loop other than by one plain store"},
      {Tree(D, "p[tid] = in[tid]; p[tid] = 2;", L, Sp, F, G),
       "'p' is written twice before the loop (5:3 and 5:21)"},
      {Tree(D, "if (tid < n) p[tid] = in[tid];", L, Sp, F, G),
       "other than by one plain store 'p[tid] = value;' that every thread "
       "runs"},
      {Tree(D, "p[tid] = in[tid] + p[0];", L, Sp, F, G), "reads 'p' itself"},
      {Tree(D, St, L, Sp, "out[blockIdx.x * 256 + tid] = p[tid];", G),
       "'p' is read at"},
      {Tree(D, St, L, Sp, "if (tid == 0) out[blockIdx.x] = p[1];", G),
       "thread 0 reads 'p[1]' after the loop; only 'p[0]' holds the result"},
      {Tree(D, St, L, Sp, "if (tid == 0) p[0] = 0;", G),
       "'p' is written or its address taken at"},
      {Tree(D, St, L, Sp, "if (tid == 0) out[blockIdx.x] = *p;", G),
       "'p' is used other than as 'p[0]' after the loop"},
      {Tree(D, St, L, Sp, "", G),
       "the result 'p[0]' is not read after the loop"},
      {[&] {
         std::string Src =
             Tree(D, St, "for (s = blockDim.x / 2; s > 0; s >>= 1)", Sp,
                  "if (tid == 0) out[blockIdx.x] = p[0] + s;", G);
         Src.insert(Src.find("  p[tid] ="), "  int s;\n");
         return Src;
       }(),
       "the stride 's' is used at 13:3 after the loop"},

      {Tree(D, St, L, Sp, "if (tid == 0) { out[blockIdx.x] = p[0]; return; }",
            G),
       "returns at 12:43: every lane of a warp must reach the shuffles"},
      // One early return of the threads other than 0 after the tree.
      {Tree(D, St, L, Sp, "if (tid != 0) return; out[blockIdx.x] = p[0];", G),
       nullptr},
      {Tree(D, St, L, Sp, "if (0 < tid) { return; } out[blockIdx.x] = p[0];",
            G),
       nullptr},
      {Tree(D, St, L, Sp, "if (tid) return; out[blockIdx.x] = p[0];", G),
       nullptr},
      {Tree(D, St, L, Sp, "if (tid > 1) return; out[blockIdx.x] = p[0];", G),
       "returns at 12:16"},
      {Tree(D, St, L, Sp,
            "if (tid == 0) out[0] = p[0]; if (tid != 0) return; out[1] = p[0];",
            G),
       "'p' is read both by 'if (tid == 0) ...' at 12:3 and after the early "
       "return at 12:32"},
      {Tree(D, St, L, Sp, "if (tid != 0) return; out[blockIdx.x] = p[1];", G),
       "thread 0 reads 'p[1]' after the loop"},
      {Tree(D, St, L, Sp, "if (tid != 0) return;", G),
       "the result 'p[0]' is not read after the loop by 'if (tid == 0) ...' "
       "(or after 'if (tid != 0) return;')"},
      {[&] {
         std::string Src = Tree(D, St, L, Sp, "out[blockIdx.x] = p[0];", G);
         Src.insert(Src.find("  __syncthreads();\n  for"),
                    "  if (tid != 0) return;\n");
         return Src;
       }(),
       "returns early at 6:3, before the tree is done"},
      {Tree("__shared__ bool p[256];", "p[tid] = in[tid] > 0;", L,
            "p[tid] += p[tid + s];", F, G),
       "'p' holds 'bool'"},
      {Tree("__shared__ float p[16];", St, L, Sp, F, G),
       "'p' has 16 elements, fewer than a warp"},
      {Tree(D, St, L, Sp, "if (tid == 0) out[blockIdx.x + threadIdx.y] = p[0];",
            G),
       "uses 2D thread indices"},
  };
  for (const Case &C : Cases) {
    Applicability A = prepareOn(warpReduce(), C.Src, "k");
    if (!C.Why) {
      EXPECT_TRUE(A.Applies) << A.Reason << "\n" << C.Src;
      continue;
    }
    EXPECT_FALSE(A.Applies) << C.Src;
    EXPECT_NE(A.Reason.find(C.Why), std::string::npos)
        << "reason: " << A.Reason << "\nexpected: " << C.Why << "\n"
        << C.Src;
  }
  // A block that cannot be seen is noted, with what the loop implies.
  Applicability Unknown =
      prepareOn(warpReduce(),
                Tree(D, St, "for (int s = 128; s > 0; s >>= 1)", Sp, F,
                     "int b = n % 7 ? 256 : 128; k<<<n / b, b>>>(in, out, n);"),
                "k");
  EXPECT_TRUE(Unknown.Applies) << Unknown.Reason;
  EXPECT_NE(Unknown.Reason.find("note: the block of k/launch0 ('b') is not a "
                                "one-dimensional constant: it must be a power "
                                "of two and a multiple of 32, 256 like the "
                                "loop's start"),
            std::string::npos)
      << Unknown.Reason;
  // The pre-loop barrier is required: without it the original races.
  std::string NoPre = Tree(D, St, L, Sp, F, G);
  NoPre.replace(NoPre.find("__syncthreads();"), 16, "");
  Applicability A = prepareOn(warpReduce(), NoPre, "k");
  EXPECT_FALSE(A.Applies);
  EXPECT_NE(A.Reason.find("no __syncthreads() between the store at"),
            std::string::npos)
      << A.Reason;
}

TEST(CatalogWarpReduceTest, AtomicsBesideSharedMemoryWithoutTree) {
  // Shared memory that is not a tree does not hide per-thread atomics.
  std::string Src = R"(__global__ void k(const float *x, float *out) {
  __shared__ float w[1];
  if (threadIdx.x == 0) w[0] = x[0];
  __syncthreads();
  atomicAdd(out, x[blockIdx.x * blockDim.x + threadIdx.x] * w[0]);
}
void run(const float *x, float *out) { k<<<4, 64>>>(x, out); }
)";
  Applicability A = prepareOn(warpReduce(), Src, "k");
  ASSERT_TRUE(A.Applies) << A.Reason;
  EXPECT_EQ(A.Reason, "1 atomicAdd(s) per thread into 'out', the same "
                      "address for every thread: one per warp instead");
}

// A cooperative groups thread_block's rank and size read as threadIdx.x and
// blockDim.x (threadBlockMember) when every launch's block is a known
// one-dimensional constant; a 2D block (the rank counts y too), a launch
// with an unknown block, and a class of that name outside
// cooperative_groups are refused.
TEST(CatalogWarpReduceTest, TreeOverThreadBlockRank) {
  auto Src = [](const std::string &Group, const std::string &Block) {
    return R"(namespace cooperative_groups {
struct thread_block {
  __device__ static unsigned thread_rank() {
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  }
  __device__ static unsigned size() { return blockDim.x * blockDim.y; }
};
__device__ thread_block this_thread_block() { return thread_block(); }
}
namespace other {
struct thread_block {
  __device__ static unsigned thread_rank() { return threadIdx.y; }
};
}
namespace cg = cooperative_groups;
__global__ void k(const float *x, float *out, int n) {
  )" + Group +
           R"( block;
  __shared__ float s[256];
  unsigned r = block.thread_rank();
  s[r] = r < n ? x[blockIdx.x * 256 + r] : 0.f;
  __syncthreads();
  for (unsigned k = cg::this_thread_block().size() / 2; k > 0; k >>= 1) {
    if (r < k)
      s[r] += s[r + k];
    __syncthreads();
  }
  if (r == 0)
    out[blockIdx.x] = s[0];
}
void run(const float *x, float *out, int n, int b) {
  k<<<n / 256, )" +
           Block + R"(>>>(x, out, n);
}
)";
  };
  std::string Out = applyTo(warpReduce(), Src("cg::thread_block", "256"),
                            makeEdit("warp-reduce", "k"));
  EXPECT_NE(Out.find(R"(  __shared__ float s[256 / 32];
  unsigned r = block.thread_rank();
  float v = r < n ? x[blockIdx.x * 256 + r] : 0.f;
  for (int off = 16; off > 0; off /= 2)
    v += __shfl_down_sync(0xffffffff, v, off);
  if (r % 32 == 0)
    s[r / 32] = v;
  __syncthreads();
  if (r < 32) {
    v = r < blockDim.x / 32 ? s[r] : 0;
    for (int off = 16; off > 0; off /= 2)
      v += __shfl_down_sync(0xffffffff, v, off);
  }
  if (r == 0)
    out[blockIdx.x] = v;
}
)"),
            std::string::npos)
      << Out;
  struct Case {
    std::string Src;
    const char *Why;
  } Cases[] = {
      {Src("cg::thread_block", "dim3(32, 8)"),
       "reads 'block.thread_rank()', which the rewrite takes for threadIdx.x "
       "or blockDim.x, true only in one-dimensional blocks: the block of "
       "k/launch0 ('dim3(32, 8)') is not a one-dimensional constant"},
      {Src("cg::thread_block", "b"),
       "true only in one-dimensional blocks: the block of k/launch0 ('b') is "
       "not a one-dimensional constant"},
      {Src("other::thread_block", "256"),
       "the tree loop's guard compares 'r' with the stride: not threadIdx.x "
       "or a local equal to it"},
  };
  for (const Case &C : Cases) {
    Applicability A = prepareOn(warpReduce(), C.Src, "k");
    EXPECT_FALSE(A.Applies) << C.Src;
    EXPECT_NE(A.Reason.find(C.Why), std::string::npos)
        << "reason: " << A.Reason << "\nexpected: " << C.Why;
  }
}

// A tree written out step by step (the CUDA samples' unrolled form) over a
// constant block: `if (tid < K) step; __syncthreads();` and the last
// warp's steps through a volatile alias, each run step checked against
// the launch's block (walkUnrolled, checkUnrolledLaunches). Refused: a
// last-warp step more than 32 away, and a launch whose block needs steps
// that are not written.
TEST(CatalogWarpReduceTest, TreeWrittenOutStepByStep) {
  auto Src = [](const std::string &Last, const std::string &Block) {
    return R"(__global__ void k(const int *in, int *out) {
  __shared__ int s[128];
  int tid = threadIdx.x;
  s[tid] = in[blockIdx.x * 128 + tid];
  __syncthreads();
  if (tid < 64) s[tid] += s[tid + 64];
  __syncthreads();
  if (tid < 32) {
    volatile int *w = s;
    )" + Last +
           R"(
    w[tid] += w[tid + 16];
    w[tid] += w[tid + 8];
    w[tid] += w[tid + 4];
    w[tid] += w[tid + 2];
    w[tid] += w[tid + 1];
  }
  if (tid == 0)
    atomicAdd(out, s[0]);
}
void run(const int *in, int *out, int n) { k<<<n / 128, )" +
           Block + R"(>>>(in, out); }
)";
  };
  EXPECT_EQ(applyTo(warpReduce(), Src("w[tid] += w[tid + 32];", "128"),
                    makeEdit("warp-reduce", "k")),
            R"(__global__ void k(const int *in, int *out) {
  __shared__ int s[128 / 32];
  int tid = threadIdx.x;
  int v = in[blockIdx.x * 128 + tid];
  for (int off = 16; off > 0; off /= 2)
    v += __shfl_down_sync(0xffffffff, v, off);
  if (tid % 32 == 0)
    s[tid / 32] = v;
  __syncthreads();
  if (tid < 32) {
    v = tid < blockDim.x / 32 ? s[tid] : 0;
    for (int off = 16; off > 0; off /= 2)
      v += __shfl_down_sync(0xffffffff, v, off);
  }
  if (tid == 0)
    atomicAdd(out, v);
}
void run(const int *in, int *out, int n) { k<<<n / 128, 128>>>(in, out); }
)");
  struct Case {
    std::string Src;
    const char *Why;
  } Cases[] = {
      {Src("w[tid] += w[tid + 64];", "128"),
       "the last warp's step at 11:5 adds an element more than 32 away: only "
       "the first warp runs it"},
      {Src("w[tid] += w[tid + 32];", "64"),
       "launch k/launch0 uses blocks of 64 threads, whose tree needs the "
       "strides 32, 16, 8, 4, 2, 1, but the steps written out run 64, 32, 16, "
       "8, 4, 2, 1"},
  };
  for (const Case &C : Cases) {
    Applicability A = prepareOn(warpReduce(), C.Src, "k");
    EXPECT_FALSE(A.Applies) << C.Src;
    EXPECT_NE(A.Reason.find(C.Why), std::string::npos)
        << "reason: " << A.Reason << "\nexpected: " << C.Why;
  }
}

// The interleaved trees (the CUDA samples' reduce0 and reduce1): the
// stride doubles from 1, and the same shuffles replace the loop.
TEST(CatalogWarpReduceTest, InterleavedTrees) {
  auto Src = [](const std::string &Body, const std::string &Block) {
    return R"(__global__ void k(const int *in, int *out) {
  __shared__ int p[256];
  unsigned tid = threadIdx.x;
  p[tid] = in[blockIdx.x * blockDim.x + tid];
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
)" + Body + R"(
    __syncthreads();
  }
  if (tid == 0)
    out[blockIdx.x] = p[0];
}
void run(const int *in, int *out, int n) { k<<<n / 256, )" +
           Block + R"(>>>(in, out); }
)";
  };
  const std::string Rewritten = R"(__global__ void k(const int *in, int *out) {
  __shared__ int p[256 / 32];
  unsigned tid = threadIdx.x;
  int v = in[blockIdx.x * blockDim.x + tid];
  for (int off = 16; off > 0; off /= 2)
    v += __shfl_down_sync(0xffffffff, v, off);
  if (tid % 32 == 0)
    p[tid / 32] = v;
  __syncthreads();
  if (tid < 32) {
    v = tid < blockDim.x / 32 ? p[tid] : 0;
    for (int off = 16; off > 0; off /= 2)
      v += __shfl_down_sync(0xffffffff, v, off);
  }
  if (tid == 0)
    out[blockIdx.x] = v;
}
void run(const int *in, int *out, int n) { k<<<n / 256, 256>>>(in, out); }
)";
  // Every spelling of the guard, and the strided index, that is proven
  // the same tree.
  for (const char *Body : {
           "    if (tid % (2 * s) == 0)\n      p[tid] += p[tid + s];",
           "    if ((tid % (s * 2)) == 0)\n      p[tid] = p[tid] + p[tid + s];",
           "    if ((tid & (2 * s - 1)) == 0)\n      p[tid] += p[tid + s];",
           "    if (!(tid % (s << 1)))\n      p[tid] += p[tid + s];",
           "    int i = 2 * s * tid;\n    if (i < blockDim.x)\n      p[i] += "
           "p[i + s];",
           "    unsigned i = 2 * tid * s;\n    if (256 > i)\n      p[i] += "
           "p[s + i];",
       }) {
    std::string In = Src(Body, "256");
    Applicability A = prepareOn(warpReduce(), In, "k");
    ASSERT_TRUE(A.Applies) << A.Reason << "\n" << In;
    EXPECT_EQ(A.Reason,
              "shared-memory tree reduction (+) of int in 'p' with "
              "interleaved addressing: warp shuffles and one __syncthreads() "
              "instead of one per step; thread 0 keeps its final statement");
    EXPECT_EQ(applyTo(warpReduce(), In, makeEdit("warp-reduce", "k")),
              Rewritten);
  }
  struct Case {
    std::string Src;
    const char *Why;
  } Cases[] = {
      {Src("    if (tid % (2 * s) == 0)\n      p[tid] += p[tid + s];", "96"),
       "launch k/launch0 uses blocks of 96 threads: the tree needs a power "
       "of two, the shuffles a multiple of 32"},
      {Src("    if (tid % (2 * s) == 0)\n      p[tid] += p[tid + s];",
           "n % 256"),
       "is not a one-dimensional constant: an interleaved tree adds up a "
       "whole block only when it is a power of two"},
      {Src("    if (tid % s == 0)\n      p[tid] += p[tid + s];", "256"),
       "the interleaved tree loop's guard 'tid % s == 0' is not 'tid % (2 * "
       "s) == 0'"},
      {Src("    if ((tid & (2 * s)) == 0)\n      p[tid] += p[tid + s];", "256"),
       "the interleaved tree loop's guard '(tid & (2 * s)) == 0' is not"},
      {Src("    if (tid % (2 * s) == 0)\n      p[tid] += p[tid + 2 * s];",
           "256"),
       "the interleaved tree loop's step 'p[tid] += p[tid + 2 * s]' is not "
       "'p[tid] += p[tid + s]'"},
      {Src("    int i = 2 * s * tid;\n    if (i < blockDim.x)\n      p[tid] "
           "+= p[i + s];",
           "256"),
       "'p' is indexed by 'tid' in the tree loop, not by 'i'"},
      {Src("    short i = 2 * s * tid;\n    if (i < blockDim.x)\n      p[i] += "
           "p[i + s];",
           "256"),
       "the interleaved tree loop's index 'i' is not an integer '2 * s * "
       "tid'"},
      {Src("    int i = 2 * s * tid;\n    if (i < 128)\n      p[i] += p[i + "
           "s];",
           "256"),
       "launch k/launch0 uses blocks of 256 threads but the interleaved tree "
       "stops at 'i < 128', which reduces 128 values"},
  };
  for (const Case &C : Cases) {
    Applicability A = prepareOn(warpReduce(), C.Src, "k");
    EXPECT_FALSE(A.Applies) << C.Src;
    EXPECT_NE(A.Reason.find(C.Why), std::string::npos)
        << "reason: " << A.Reason << "\nexpected: " << C.Why << "\n"
        << C.Src;
  }
  // The stride must start at 1 and stop at the block.
  std::string From2 =
      Src("    if (tid % (2 * s) == 0)\n      p[tid] += p[tid + s];", "256");
  From2.replace(From2.find("s = 1;"), 6, "s = 2;");
  Applicability A = prepareOn(warpReduce(), From2, "k");
  EXPECT_FALSE(A.Applies);
  EXPECT_NE(A.Reason.find("the interleaved tree loop starts at '2', not 1"),
            std::string::npos)
      << A.Reason;
  std::string Half =
      Src("    if (tid % (2 * s) == 0)\n      p[tid] += p[tid + s];", "256");
  Half.replace(Half.find("s < blockDim.x;"), 15, "s < blockDim.x / 2;");
  A = prepareOn(warpReduce(), Half, "k");
  EXPECT_FALSE(A.Applies);
  EXPECT_NE(A.Reason.find("the interleaved tree loop's condition 's < "
                          "blockDim.x / 2' is not 's < blockDim.x'"),
            std::string::npos)
      << A.Reason;
}

} // namespace
