//===- CatalogVectorizeKeepTest.cpp - vectorize keeping the blocks -------===//
//
// vectorize's form that keeps every block's elements (`blocks: "keep"`):
// maps that read their block, and maps without a bounds guard.
//
//===----------------------------------------------------------------------===//

#include "CatalogInternal.h"
#include "CatalogTesting.h"

using namespace optiml;
using namespace optiml::testing_catalog;

namespace {

const Transform &vectorize() {
  static auto T = createVectorizeTransform();
  return *T;
}

Edit keep(const char *Kernel, int64_t W) {
  return makeEdit("vectorize", Kernel,
                  {{"width", W}, {"blocks", std::string("keep")}});
}

TEST(CatalogVectorizeKeepTest, ConstantBlockAndPerBlockRead) {
  std::string Src = R"(#define B 512
__global__ void add_offsets(int *out, const int *sums, int n) {
  int i = blockIdx.x * B + threadIdx.x;
  if (blockIdx.x > 0 && i < n)
    out[i] += sums[blockIdx.x - 1];
}
void run(int *o, const int *s, int n) {
  add_offsets<<<(n + B - 1) / B, B>>>(o, s, n);
}
)";
  Applicability A = prepareOn(vectorize(), Src, "add_offsets");
  EXPECT_TRUE(A.Applies) << A.Reason;
  ASSERT_EQ(A.Suggestions.size(), 2u);
  EXPECT_EQ(A.Suggestions[0].getString("blocks"), "keep");
  EXPECT_EQ(applyTo(vectorize(), Src,
                    makeEdit("vectorize", "add_offsets",
                             {{"width", int64_t(2)},
                              {"blocks", std::string("keep")}})),
            R"(#define B 512
__global__ void add_offsets(int *out, const int *sums, int n) {
  int first = blockIdx.x * B + (threadIdx.x * 2);
  bool full = true;
  for (int k = 0; k < 2; ++k) {
    int i = blockIdx.x * B + (threadIdx.x * 2 + k);
    full = full && (blockIdx.x > 0 && i < n) &&
           static_cast<unsigned long long>(i) ==
               static_cast<unsigned long long>(first) + k;
  }
  if (full &&
      reinterpret_cast<unsigned long long>(out + first) % 8 == 0) {
    int2 out_v = reinterpret_cast<int2 *>(out + first)[0];
    out_v.x += sums[blockIdx.x - 1];
    out_v.y += sums[blockIdx.x - 1];
    reinterpret_cast<int2 *>(out + first)[0] = out_v;
  } else {
    for (int k = 0; k < 2; ++k) {
      int i = blockIdx.x * B + (threadIdx.x * 2 + k);
      if (blockIdx.x > 0 && i < n)
        out[i] += sums[blockIdx.x - 1];
    }
  }
}
void run(int *o, const int *s, int n) {
  add_offsets<<<(n + B - 1) / B, B / 2>>>(o, s, n);
}
)");
}

TEST(CatalogVectorizeKeepTest, Refusals) {
  struct Case {
    const char *Src, *Why;
  };
  const Case Cases[] = {
      {R"(__global__ void k(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = blockIdx.x + threadIdx.x;
}
void run(float *y, int n) { k<<<(n + 255) / 256, 256>>>(y, n); }
)",
       "the body reads 'threadIdx.x', which may appear only in the index"},
      {R"(__global__ void k(float *y, const float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = b[blockIdx.x];
}
void run(float *y, const float *b, int n, int t) {
  k<<<(n + t - 1) / t, t>>>(y, b, n);
}
)",
       "the block of launch k/launch0 ('t') cannot be read at the launch"},
      {R"(__global__ void k(float *y, const float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    __syncthreads();
    y[i] = b[blockIdx.x];
  }
}
void run(float *y, const float *b, int n) { k<<<(n + 255) / 256, 256>>>(y, b, n); }
)",
       "the body calls '__syncthreads', which works with the other threads"},
      {R"(__global__ void k(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += y[blockIdx.x];
}
void run(float *y, int n) { k<<<(n + 255) / 256, 256>>>(y, n); }
)",
       "'y' is written at the thread's own element and read at an index the "
       "same for the whole block"},
      {R"(__global__ void k(float *y, const float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (blockIdx.x < n) y[i] = b[blockIdx.x];
}
void run(float *y, const float *b, int n) { k<<<n, 256>>>(y, b, n); }
)",
       "has no conjunct 'i < bound'"},
      {R"(__global__ void k(float *y, const float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = b[threadIdx.x];
}
void run(float *y, const float *b, int n) { k<<<(n + 255) / 256, 256>>>(y, b, n); }
)",
       "nor a read at an index the same for the whole block"},
      {R"(#define B 256
__global__ void k(float *y, int n) {
  int i = blockIdx.x * B + threadIdx.x;
  if (i < n) y[i] = 1.0f;
}
void run(float *y, int n) { k<<<(n + 127) / 128, 128>>>(y, n); }
)",
       "the index steps by 256 elements a block, but launch k/launch0 runs "
       "blocks of 128 threads"},
  };
  for (const Case &C : Cases) {
    Applicability A = prepareOn(vectorize(), C.Src, "k");
    EXPECT_FALSE(A.Applies) << C.Src;
    EXPECT_NE(A.Reason.find(C.Why), std::string::npos)
        << "reason: " << A.Reason << "\nexpected: " << C.Why;
  }
  // A block of 98 threads is no multiple of 4.
  std::string Odd = R"(__global__ void k(float *y, const float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = b[blockIdx.x];
}
void run(float *y, const float *b, int n) { k<<<(n + 97) / 98, 98>>>(y, b, n); }
)";
  EXPECT_EQ(applyTo(vectorize(), Odd,
                    makeEdit("vectorize", "k",
                             {{"width", int64_t(4)},
                              {"blocks", std::string("keep")}})),
            "error: vectorize k rejected: [not-applicable] kernel 'k': launch "
            "k/launch0 runs blocks of 98 threads, not a multiple of the width "
            "4");
}

TEST(CatalogVectorizeKeepTest, GuardFreeMapWithAUniformLocalFirst) {
  std::string Src = R"(#define TBSIZE 256
__global__ void mul(float *__restrict__ b, const float *__restrict__ c) {
  const float scalar = 0.4f;
  const int i = blockDim.x * blockIdx.x + threadIdx.x;
  b[i] = scalar * c[i];
}
void run(float *b, const float *c, int n) {
  mul<<<n / TBSIZE, TBSIZE>>>(b, c);
}
)";
  Applicability A = prepareOn(vectorize(), Src, "mul");
  EXPECT_TRUE(A.Applies) << A.Reason;
  EXPECT_NE(A.Reason.find("map kernel without a bounds guard"),
            std::string::npos)
      << A.Reason;
  ASSERT_EQ(A.Suggestions.size(), 2u);
  EXPECT_EQ(A.Suggestions[0].getString("blocks"), "keep");
  EXPECT_EQ(applyTo(vectorize(), Src, keep("mul", 2)),
            R"(#define TBSIZE 256
__global__ void mul(float *__restrict__ b, const float *__restrict__ c) {
  const float scalar = 0.4f;
  int first = (blockDim.x * 2) * blockIdx.x + (threadIdx.x * 2);
  bool full = true;
  for (int k = 0; k < 2; ++k) {
    int i = (blockDim.x * 2) * blockIdx.x + (threadIdx.x * 2 + k);
    full = full && static_cast<unsigned long long>(i) ==
               static_cast<unsigned long long>(first) + k;
  }
  if (full &&
      reinterpret_cast<unsigned long long>(b + first) % 8 == 0 &&
      reinterpret_cast<unsigned long long>(c + first) % 8 == 0) {
    float2 b_v;
    float2 c_v = reinterpret_cast<const float2 *>(c + first)[0];
    b_v.x = scalar * c_v.x;
    b_v.y = scalar * c_v.y;
    reinterpret_cast<float2 *>(b + first)[0] = b_v;
  } else {
    for (int k = 0; k < 2; ++k) {
      int i = (blockDim.x * 2) * blockIdx.x + (threadIdx.x * 2 + k);
      b[i] = scalar * c[i];
    }
  }
}
void run(float *b, const float *c, int n) {
  mul<<<n / TBSIZE, TBSIZE / 2>>>(b, c);
}
)");
}

TEST(CatalogVectorizeKeepTest, GuardFreeRefusals) {
  struct Case {
    const char *Src, *Why;
  };
  const Case Cases[] = {
      {R"(__global__ void k(float *a, const float *b) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (b[i] > 0.5f) a[i] = b[i];
}
void run(float *a, const float *b, int n) { k<<<n / 256, 256>>>(a, b); }
)",
       "no bounds guard, and 'a[i]' is accessed under a condition"},
      {R"(__global__ void k(float *a, const float *b, int m) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float t = b[i];
  a[i] = m > 2 ? t : b[i];
}
void run(float *a, const float *b, int n) { k<<<n / 256, 256>>>(a, b, 3); }
)",
       "no bounds guard, and 'b[i]' is accessed under a condition"},
      {R"(__global__ void k(float *a, const float *b, int m) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  a[i] = b[i];
  m > 2 && (a[i] += 1.0f) > 0.0f;
}
void run(float *a, const float *b, int n) { k<<<n / 256, 256>>>(a, b, 3); }
)",
       "no bounds guard, and 'a[i]' is accessed under a condition"},
      {R"(__global__ void k(float *a, int reps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  while (reps-- > 0) a[i] += 1.0f;
}
void run(float *a, int n) { k<<<n / 256, 256>>>(a, 2); }
)",
       "no bounds guard, and 'a[i]' is accessed under a condition"},
      {R"(__global__ void k(float *a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  a[i] = threadIdx.x;
}
void run(float *a, int n) { k<<<n / 256, 256>>>(a); }
)",
       "the body reads 'threadIdx.x', which may appear only in the index"},
      // A local from blockDim.x changes when the block shrinks: no uniform
      // declaration, so the form is not found (the reason is the
      // grid-stride form's).
      {R"(__global__ void k(float *a) {
  const int w = blockDim.x;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  a[i] = w;
}
void run(float *a, int n) { k<<<n / 256, 256>>>(a); }
)",
       "is not followed at once by a bounds guard"},
      {R"(__global__ void k(float *a, int t) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  a[i] = 1.0f;
}
void run(float *a, int n, int t) { k<<<n / t, t>>>(a, t); }
)",
       "the block of launch k/launch0 ('t') cannot be read at the launch"},
  };
  for (const Case &C : Cases) {
    Applicability A = prepareOn(vectorize(), C.Src, "k");
    EXPECT_FALSE(A.Applies) << C.Src;
    EXPECT_NE(A.Reason.find(C.Why), std::string::npos)
        << "reason: " << A.Reason << "\nexpected: " << C.Why;
  }
}

TEST(CatalogVectorizeKeepTest, GuardFreeTemplates) {
  // Instantiated for double only: double2, so width 2 alone.
  std::string Src = R"(template <class T> __global__ void k(T *a, const T *b) {
  const int i = blockDim.x * blockIdx.x + threadIdx.x;
  a[i] = b[i] + T(1);
}
void run(double *a, const double *b, int n) { k<<<n / 256, 256>>>(a, b); }
)";
  Applicability A = prepareOn(vectorize(), Src, "k");
  EXPECT_TRUE(A.Applies) << A.Reason;
  EXPECT_NE(A.Reason.find("vector path for k<double>"), std::string::npos)
      << A.Reason;
  ASSERT_EQ(A.Suggestions.size(), 1u);
  EXPECT_EQ(A.Suggestions[0].getInt("width"), 2);
  // Never instantiated: the element types are unknown.
  A = prepareOn(vectorize(), R"(template <class T> __global__ void k(T *a) {
  const int i = blockDim.x * blockIdx.x + threadIdx.x;
  a[i] = T(1);
}
)",
                "k");
  EXPECT_FALSE(A.Applies);
  EXPECT_NE(A.Reason.find("never"), std::string::npos) << A.Reason;
}

} // namespace
