#include "CatalogInternal.h"
#include "CatalogTesting.h"
#include "Patterns/ThreadPerItem.h"
#include "Transforms/TransformSupport.h"
#include "clang/AST/Decl.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include <map>

using namespace optiml;
using namespace optiml::testing_catalog;

namespace {

const Transform &vectorize() {
  static auto T = createVectorizeTransform();
  return *T;
}

TEST(CatalogVectorizeTest, Float4WithTailAndFallback) {
  std::string Src =
      R"(__global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}
void run(int n, const float *x, float *y) {
  saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y);
}
)";
  EXPECT_EQ(applyTo(vectorize(), Src,
                    makeEdit("vectorize", "saxpy", {{"width", int64_t(4)}})),
            R"(__global__ void saxpy(int n, float a, const float *x, float *y) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (reinterpret_cast<unsigned long long>(x) % 16 == 0 &&
      reinterpret_cast<unsigned long long>(y) % 16 == 0) {
    for (int v = tid; v < n / 4; v += blockDim.x * gridDim.x) {
      float4 x_v = reinterpret_cast<const float4 *>(x)[v];
      float4 y_v = reinterpret_cast<float4 *>(y)[v];
      y_v.x = a * x_v.x + y_v.x;
      y_v.y = a * x_v.y + y_v.y;
      y_v.z = a * x_v.z + y_v.z;
      y_v.w = a * x_v.w + y_v.w;
      reinterpret_cast<float4 *>(y)[v] = y_v;
    }
    for (int i = n / 4 * 4 + tid; i < n; i += blockDim.x * gridDim.x) {
      y[i] = a * x[i] + y[i];
    }
  } else {
    for (int i = tid; i < n; i += blockDim.x * gridDim.x) {
      y[i] = a * x[i] + y[i];
    }
  }
}
void run(int n, const float *x, float *y) {
  saxpy<<<(n + 1023) / 1024, 256>>>(n, 2.0f, x, y);
}
)");
}

TEST(CatalogVectorizeTest, Int2WriteOnlyOutputLocalsAndIndexUse) {
  std::string Src = R"(__global__ void iota_add(const int *a, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int t = a[i] * 2;
  out[i] = t + i;
}
void run(const int *a, int *out, int n) {
  iota_add<<<(n + 127) / 128, 128>>>(a, out, n);
}
)";
  EXPECT_EQ(applyTo(vectorize(), Src,
                    makeEdit("vectorize", "iota_add", {{"width", int64_t(2)}})),
            R"(__global__ void iota_add(const int *a, int *out, int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (reinterpret_cast<unsigned long long>(a) % 8 == 0 &&
      reinterpret_cast<unsigned long long>(out) % 8 == 0) {
    for (int v = tid; v < n / 2; v += blockDim.x * gridDim.x) {
      int2 a_v = reinterpret_cast<const int2 *>(a)[v];
      int2 out_v;
      {
        int t = a_v.x * 2;
        out_v.x = t + (v * 2 + 0);
      }
      {
        int t = a_v.y * 2;
        out_v.y = t + (v * 2 + 1);
      }
      reinterpret_cast<int2 *>(out)[v] = out_v;
    }
    for (int i = n / 2 * 2 + tid; i < n; i += blockDim.x * gridDim.x) {
      int t = a[i] * 2;
      out[i] = t + i;
    }
  } else {
    for (int i = tid; i < n; i += blockDim.x * gridDim.x) {
      int t = a[i] * 2;
      out[i] = t + i;
    }
  }
}
void run(const int *a, int *out, int n) {
  iota_add<<<(n + 255) / 256, 128>>>(a, out, n);
}
)");
}

TEST(CatalogVectorizeTest, ConditionalWriteLoadsFirst) {
  std::string Src = R"(__global__ void relu(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    if (x[i] < 0.0f) x[i] = 0.0f;
  }
}
void run(float *x, int n) { relu<<<(n + 255) / 256, 256>>>(x, n); }
)";
  std::string Out = applyTo(
      vectorize(), Src, makeEdit("vectorize", "relu", {{"width", int64_t(2)}}));
  EXPECT_NE(Out.find("float2 x_v = reinterpret_cast<float2 *>(x)[v];"),
            std::string::npos)
      << Out;
  EXPECT_NE(Out.find("if (x_v.y < 0.0f) x_v.y = 0.0f;"), std::string::npos)
      << Out;
}

TEST(CatalogVectorizeTest, RefusesNearMisses) {
  struct Case {
    const char *Src, *Why;
  } Cases[] = {
      {R"(__global__ void k(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i + 1] = x[i];
}
)",
       "access 'y[i + 1]' is not at the thread's own element 'i' (it is "
       "written)"},
      {R"(__global__ void k(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = y[n - 1 - i];
}
)",
       "'y' is read at another element than the thread's own and written"},
      {R"(__global__ void k(const long long *x, long long *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}
)",
       "'y' has element type 'long long': only float, int, uint, short, "
       "ushort, char, uchar, double and __half have vector types here"},
      // A value computed before the index from the thread's x coordinate:
      // a thread running several elements would read its own for all.
      {R"(__global__ void k(const float *x, float *y, int n) {
  int lane = threadIdx.x % 32;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + lane;
}
void run(const float *x, float *y, int n) { k<<<(n + 255) / 256, 256>>>(x, y, n); }
)",
       "the body reads 'lane', declared before the index with a value that "
       "depends on the thread's x coordinate or the grid ('int lane = "
       "threadIdx.x % 32')"},
      {R"(__global__ void k(const float *x, float *y, int n) {
  const int b = blockIdx.x;
  const int s = b * 2;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * s;
}
void run(const float *x, float *y, int n) { k<<<(n + 255) / 256, 256>>>(x, y, n); }
)",
       "the body reads 's', declared before the index"},
      // A macro that names a variable: its text hides a use of the index.
      {R"(#define AT(p) p[i]
__global__ void k(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = AT(x);
}
)",
       "the guarded body uses a macro that names a variable or calls a "
       "function"},
      {R"(__global__ void k(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = *x;
}
)",
       "is not of the form p[i]"},
      {R"(__global__ void k(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[2 * i] = x[i];
}
)",
       "'y[2 * i]' is not at the thread's own element"},
  };
  for (const Case &C : Cases) {
    Applicability A = prepareOn(vectorize(), C.Src, "k");
    EXPECT_FALSE(A.Applies) << C.Src;
    EXPECT_NE(A.Reason.find(C.Why), std::string::npos)
        << "reason: " << A.Reason << "\nexpected: " << C.Why;
  }
  EXPECT_EQ(applyTo(vectorize(), Cases[0].Src,
                    makeEdit("vectorize", "k", {{"width", int64_t(3)}})),
            "error: vectorize k rejected: [params] width must be 2 or 4");
}

TEST(CatalogVectorizeTest, Half2OnlyWidthTwo) {
  std::string Src = R"(#include "cuda_fp16_mock.h"
__global__ void hadd(const __half *x, half *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + y[i];
}
void run(const __half *x, __half *y, int n) {
  hadd<<<(n + 255) / 256, 256>>>(x, y, n);
}
)";
  Applicability A = prepareOn(vectorize(), Src, "hadd");
  ASSERT_TRUE(A.Applies) << A.Reason;
  ASSERT_EQ(A.Suggestions.size(), 1u);
  EXPECT_EQ(A.Suggestions[0].getInt("width"), int64_t(2));
  std::string Out = applyTo(
      vectorize(), Src, makeEdit("vectorize", "hadd", {{"width", int64_t(2)}}));
  for (const char *Line :
       {"reinterpret_cast<unsigned long long>(x) % 4 == 0 &&",
        "__half2 x_v = reinterpret_cast<const __half2 *>(x)[v];",
        "__half2 y_v = reinterpret_cast<__half2 *>(y)[v];",
        "y_v.y = x_v.y + y_v.y;",
        // operator= on a class element is a write: the vector is stored.
        "reinterpret_cast<__half2 *>(y)[v] = y_v;"})
    EXPECT_NE(Out.find(Line), std::string::npos) << Line << "\n" << Out;
  EXPECT_EQ(applyTo(vectorize(), Src,
                    makeEdit("vectorize", "hadd", {{"width", int64_t(4)}})),
            "error: vectorize hadd rejected: [not-applicable] kernel 'hadd': "
            "'x' has element type '__half', whose vector type __half2 holds 2 "
            "elements; use width 2");
}

TEST(CatalogVectorizeTest, DoubleTwoWide) {
  std::string Src =
      R"(__global__ void dscale(const double *x, double *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 0.5 * x[i];
}
void run(const double *x, double *y, int n) {
  dscale<<<(n + 255) / 256, 256>>>(x, y, n);
}
)";
  Applicability A = prepareOn(vectorize(), Src, "dscale");
  ASSERT_TRUE(A.Applies) << A.Reason;
  ASSERT_EQ(A.Suggestions.size(), 1u);
  EXPECT_EQ(A.Suggestions[0].getInt("width"), int64_t(2));
  std::string Out =
      applyTo(vectorize(), Src,
              makeEdit("vectorize", "dscale", {{"width", int64_t(2)}}));
  for (const char *Line :
       {"reinterpret_cast<unsigned long long>(x) % 16 == 0 &&",
        "double2 x_v = reinterpret_cast<const double2 *>(x)[v];",
        "y_v.y = 0.5 * x_v.y;", "reinterpret_cast<double2 *>(y)[v] = y_v;",
        "dscale<<<(n + 511) / 512, 256>>>(x, y, n);"})
    EXPECT_NE(Out.find(Line), std::string::npos) << Line << "\n" << Out;
  EXPECT_EQ(applyTo(vectorize(), Src,
                    makeEdit("vectorize", "dscale", {{"width", int64_t(4)}})),
            "error: vectorize dscale rejected: [not-applicable] kernel "
            "'dscale': 'x' has element type 'double', whose vector type "
            "double2 holds 2 elements; use width 2");
}

TEST(CatalogVectorizeTest, ConstantMacrosInBoundAndBody) {
  // N is one expression as the guard reads it: `(N) / 4`, not `1000 + 3 / 4`.
  std::string Src = R"(#define N 1000 + 3
#define ALPHA 2.0f
__global__ void k(const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) y[i] = ALPHA * x[i];
}
void run(const float *x, float *y) { k<<<16, 64>>>(x, y); }
)";
  Input In(Src);
  ASSERT_TRUE(In.Ctx);
  const clang::FunctionDecl *FD =
      findKernelDecl(In.TU.AST->getASTContext(), "k");
  std::string Why;
  EXPECT_FALSE(matchMapPattern(*In.Ctx, FD, Why, true));
  EXPECT_EQ(Why, "the guard 'if (i < N)' is written with a macro");
  auto P = matchMapPattern(*In.Ctx, FD, Why, true, /*ConstantMacros=*/true);
  ASSERT_TRUE(P) << Why;
  EXPECT_EQ(P->BoundText, "N");
  ASSERT_EQ(P->BodySpans.size(), 1u);
  EXPECT_EQ(In.Ctx->Code.slice(P->BodySpans[0].Begin.Offset,
                               P->BodySpans[0].End.Offset),
            "y[i] = ALPHA * x[i];");
  std::string Out = applyTo(
      vectorize(), Src, makeEdit("vectorize", "k", {{"width", int64_t(4)}}));
  for (const char *Line :
       {"for (int v = tid; v < (N) / 4; v += blockDim.x * gridDim.x) {",
        "y_v.w = ALPHA * x_v.w;",
        "for (int i = (N) / 4 * 4 + tid; i < (N); i += blockDim.x * "
        "gridDim.x) {",
        "k<<<(16 + 3) / 4, 64>>>(x, y);"})
    EXPECT_NE(Out.find(Line), std::string::npos) << Line << "\n" << Out;
}

TEST(CatalogVectorizeTest, SmallIntegersAlignToTheirOwnVector) {
  std::string Src = R"(__global__ void widen(const unsigned char *a,
                      const unsigned short *b, unsigned *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}
void run(const unsigned char *a, const unsigned short *b, unsigned *o, int n) {
  widen<<<(n + 255) / 256, 256>>>(a, b, o, n);
}
)";
  Applicability A = prepareOn(vectorize(), Src, "widen");
  ASSERT_TRUE(A.Applies) << A.Reason;
  EXPECT_EQ(A.Suggestions.size(), 2u);
  std::string Out =
      applyTo(vectorize(), Src,
              makeEdit("vectorize", "widen", {{"width", int64_t(4)}}));
  for (const char *Line :
       {"reinterpret_cast<unsigned long long>(a) % 4 == 0 &&",
        "reinterpret_cast<unsigned long long>(b) % 8 == 0 &&",
        "reinterpret_cast<unsigned long long>(out) % 16 == 0) {",
        "uchar4 a_v = reinterpret_cast<const uchar4 *>(a)[v];",
        "ushort4 b_v = reinterpret_cast<const ushort4 *>(b)[v];",
        "uint4 out_v;", "out_v.w = a_v.w + b_v.w;",
        "reinterpret_cast<uint4 *>(out)[v] = out_v;"})
    EXPECT_NE(Out.find(Line), std::string::npos) << Line << "\n" << Out;
}

TEST(CatalogVectorizeTest, RowMapHalf2AndReason) {
  std::string Src = R"(#include "cuda_fp16_mock.h"
__global__ void hrows(int rows, int cols, const __half *x, __half *y) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (c < cols && r < rows) {
    const __half *a = x + r * cols;
    __half *b = y + r * cols;
    b[c] = a[c] + b[c];
  }
}
__global__ void stray(int rows, int cols, const float *x, float *y) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r >= rows || c >= cols) return;
  const float *a = x + r * cols;
  float *b = y + r * cols;
  b[c] = a[c] + a[c + 1];
}
void run(int rows, int cols, const __half *x, __half *y) {
  hrows<<<dim3((cols + 31) / 32, (rows + 7) / 8), dim3(32, 8)>>>(rows, cols,
                                                                 x, y);
}
)";
  Applicability A = prepareOn(vectorize(), Src, "hrows");
  ASSERT_TRUE(A.Applies) << A.Reason;
  EXPECT_EQ(A.Reason, "2D map along matrix rows: every global access is p[c] "
                      "through a row pointer into x, y; each thread takes "
                      "consecutive columns");
  ASSERT_EQ(A.Suggestions.size(), 1u);
  EXPECT_EQ(A.Suggestions[0].getInt("width"), int64_t(2));
  std::string Out =
      applyTo(vectorize(), Src,
              makeEdit("vectorize", "hrows", {{"width", int64_t(2)}}));
  for (const char *Line :
       {"int c = (blockIdx.x * blockDim.x + threadIdx.x) * 2;",
        "if (cols % 2 == 0 &&",
        "reinterpret_cast<unsigned long long>(x) % 4 == 0 &&",
        "__half2 a_v = *reinterpret_cast<const __half2 *>(a + c);",
        "__half2 b_v = *reinterpret_cast<__half2 *>(b + c);",
        "b_v.y = a_v.y + b_v.y;", "*reinterpret_cast<__half2 *>(b + c) = b_v;",
        "for (int k = 0; k < 2 && (c + k) < cols; ++k) {"})
    EXPECT_NE(Out.find(Line), std::string::npos) << Line << "\n" << Out;
  Applicability S = prepareOn(vectorize(), Src, "stray");
  EXPECT_FALSE(S.Applies);
  EXPECT_NE(S.Reason.find("access 'a[c + 1]' is not at the thread's column "
                          "'c'"),
            std::string::npos)
      << S.Reason;
}

// One walk reads both forms' bodies (AccessWalker): `*p` and `&x` stop it
// with each form's reason; a compound or incremented element is read and
// written.
TEST(CatalogVectorizeTest, MapAndRowWalkersReadAccessesAlike) {
  std::string Src = R"(__global__ void addr(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = *(&x[i]);
}
__global__ void rowderef(int rows, int cols, const float *x, float *y) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (c < cols && r < rows) {
    const float *a = x + r * cols;
    float *b = y + r * cols;
    b[c] = a[c] + *a;
  }
}
__global__ void rowinc(int rows, int cols, const float *x, float *y) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (c < cols && r < rows) {
    const float *a = x + r * cols;
    float *b = y + r * cols;
    b[c] += a[c];
    b[c]++;
  }
}
void run(int rows, int cols, const float *x, float *y) {
  addr<<<(cols + 255) / 256, 256>>>(x, y, cols);
  rowderef<<<dim3((cols + 31) / 32, (rows + 7) / 8), dim3(32, 8)>>>(rows, cols,
                                                                    x, y);
  rowinc<<<dim3((cols + 31) / 32, (rows + 7) / 8), dim3(32, 8)>>>(rows, cols,
                                                                  x, y);
}
)";
  Applicability A = prepareOn(vectorize(), Src, "addr");
  EXPECT_FALSE(A.Applies);
  EXPECT_NE(A.Reason.find("access '*(&x[i])' is not of the form p[i]"),
            std::string::npos)
      << A.Reason;
  Applicability D = prepareOn(vectorize(), Src, "rowderef");
  EXPECT_FALSE(D.Applies);
  EXPECT_NE(D.Reason.find("the body dereferences or takes an address ('*a')"),
            std::string::npos)
      << D.Reason;
  Applicability I = prepareOn(vectorize(), Src, "rowinc");
  ASSERT_TRUE(I.Applies) << I.Reason;
  std::string Out =
      applyTo(vectorize(), Src,
              makeEdit("vectorize", "rowinc", {{"width", int64_t(4)}}));
  for (const char *Line :
       {"float4 b_v = *reinterpret_cast<float4 *>(b + c);", "b_v.w += a_v.w;",
        "b_v.w++;", "*reinterpret_cast<float4 *>(b + c) = b_v;"})
    EXPECT_NE(Out.find(Line), std::string::npos) << Line << "\n" << Out;
}

// A flat 2D map (index y * cols + x through a local, inline, or a helper)
// is the map along rows: each thread's 4 columns as one vector where its
// row is aligned (checked per thread), the body kept whole otherwise.
TEST(CatalogVectorizeTest, FlatIndexIsARowMap) {
  std::string Src = R"(__device__ long at(int x, int y, int w) {
  return (long)y * w + x;
}
__global__ void flat(int rows, int cols, const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < cols && y < rows) {
    int i = y * cols + x;
    out[i] = in[at(x, y, cols)] + i;
  }
}
void run(int rows, int cols, const float *in, float *out) {
  flat<<<dim3((cols + 31) / 32, (rows + 7) / 8), dim3(32, 8)>>>(rows, cols,
                                                                in, out);
}
)";
  Applicability A = prepareOn(vectorize(), Src, "flat");
  ASSERT_TRUE(A.Applies) << A.Reason;
  EXPECT_EQ(A.Reason, "2D map along matrix rows: every global access is at "
                      "the thread's own element 'y * cols + x' of in, out; "
                      "each thread takes consecutive columns, a vector where "
                      "its row is aligned");
  EXPECT_EQ(applyTo(vectorize(), Src,
                    makeEdit("vectorize", "flat", {{"width", int64_t(2)}})),
            R"(__device__ long at(int x, int y, int w) {
  return (long)y * w + x;
}
__global__ void flat(int rows, int cols, const float *in, float *out) {
  int x = (blockIdx.x * blockDim.x + threadIdx.x) * 2;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < cols && y < rows) {
    if (cols - x >= 2 &&
        reinterpret_cast<unsigned long long>(out + (y * cols + x)) % 8 == 0 &&
        reinterpret_cast<unsigned long long>(in + (at(x, y, cols))) % 8 == 0) {
      float2 out_v;
      float2 in_v = *reinterpret_cast<const float2 *>(in + (at(x, y, cols)));
      {
        int i = y * cols + (x + 0);
        out_v.x = in_v.x + i;
      }
      {
        int i = y * cols + (x + 1);
        out_v.y = in_v.y + i;
      }
      *reinterpret_cast<float2 *>(out + (y * cols + x)) = out_v;
    } else {
      for (int k = 0; k < 2 && (x + k) < cols; ++k) {
        int i = y * cols + (x + k);
        out[i] = in[at((x + k), y, cols)] + i;
      }
    }
  }
}
void run(int rows, int cols, const float *in, float *out) {
  flat<<<dim3((((cols + 31) / 32) + 1) / 2, (rows + 7) / 8), dim3(32, 8)>>>(rows, cols,
                                                                in, out);
}
)");
}

// Look-alikes of a flat 2D map, each refused with what its index computes;
// a body writing what it does not declare is refused in both 2D forms.
TEST(CatalogVectorizeTest, FlatIndexLookAlikes) {
  std::string Src = R"(__device__ short narrow(int x, int y, int w) {
  return y * w + x;
}
__global__ void a(int rows, int cols, int pitch, float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < cols && y < rows)
    out[y * cols + x] = in[y * pitch + x];
}
__global__ void b(int rows, int cols, int pitch, float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < cols && y < rows)
    out[narrow(x, y, cols)] = 1.0f;
}
__global__ void c(int rows, int cols, int pitch, float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < cols && y < rows) {
    int i = y * cols + x;
    i += pitch;
    out[i] = 1.0f;
  }
}
__global__ void d(int rows, int cols, int pitch, float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < cols && y < rows) {
    int r = y * cols;
    out[r + x] = in[y * cols + x - 1];
  }
}
__global__ void e(int rows, int cols, int pitch, float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < cols && y < rows) {
    pitch = pitch + 1;
    out[y * cols + x] = pitch;
  }
}
__global__ void f(int rows, int cols, int pitch, float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < cols && y < rows) {
    const float *src = in + y * cols;
    float *dst = out + y * cols;
    pitch *= 2;
    dst[x] = src[x] * pitch;
  }
}
__global__ void g(int rows, int cols, int pitch, float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < cols && y < rows)
    out[y * cols + x] = in[y];
}
void run(int rows, int cols, float *in, float *out) {
  dim3 grid((cols + 31) / 32, (rows + 7) / 8), block(32, 8);
  a<<<grid, block>>>(rows, cols, cols, in, out);
  b<<<grid, block>>>(rows, cols, cols, in, out);
  c<<<grid, block>>>(rows, cols, cols, in, out);
  d<<<grid, block>>>(rows, cols, cols, in, out);
  e<<<grid, block>>>(rows, cols, cols, in, out);
  f<<<grid, block>>>(rows, cols, cols, in, out);
  g<<<grid, block>>>(rows, cols, cols, in, out);
}
)";
  std::map<std::string, std::string> Want = {
      {"a", "access 'in[y * pitch + x]' steps 'pitch' elements from row to "
            "row where 'out[y * cols + x]' steps 'cols'"},
      {"b", "access 'out[narrow(x, y, cols)]' computes its index through "
            "'narrow(x, y, cols)', which is not read as a sum of 'x' and a "
            "row term"},
      {"c", "access 'out[i]' computes its index through 'i'"},
      {"d", "access 'out[r + x]' computes its index from 'r', a local of the "
            "body"},
      {"e", "the body writes 'pitch', which it does not declare"},
      {"f", "the body writes 'pitch', which it does not declare"},
      {"g", "access 'in[y]' is the same element for every column of a row"},
  };
  for (auto &[Name, Reason] : Want) {
    Applicability A = prepareOn(vectorize(), Src, Name);
    EXPECT_FALSE(A.Applies) << Name;
    EXPECT_NE(A.Reason.find(Reason), std::string::npos)
        << Name << ": " << A.Reason;
  }
}

/// gridCoverageProblem() at each launch of kernel \p Name in \p Src,
/// against the bound of its guard.
std::vector<std::string> coverage(const std::string &Src, llvm::StringRef Name,
                                  bool Rows = false) {
  Input In(Src);
  std::vector<std::string> Out;
  const KernelInfo *K = In.Model.findKernel(Name.str());
  const clang::FunctionDecl *FD =
      findKernelDecl(In.TU.AST->getASTContext(), Name);
  std::string Why;
  auto P = K && FD ? matchMapPattern(*In.Ctx, FD, Why, true) : std::nullopt;
  if (!P)
    return {"no map: " + Why};
  for (const LaunchSite &L : K->Launches)
    Out.push_back(Rows ? gridRowsCoverageProblem(*In.Ctx, L, P->Bound)
                       : gridCoverageProblem(*In.Ctx, L, P->Bound, 0));
  return Out;
}

TEST(CatalogVectorizeTest, GridCoverageFloorPlusOneAndSmallerBounds) {
  std::vector<std::string> Got = coverage(R"(
__global__ void k(int n, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}
void run(int n, const float *x, float *y) {
  k<<<n / 256 + 1, 256>>>(n, x, y);
  k<<<n / 256, 256>>>(n, x, y);
  k<<<(n + 255) / 256, 256>>>(n - 1, x + 1, y);
  k<<<(n + 255) / 256, 256>>>(n + 1, x, y);
}
)",
                                          "k");
  ASSERT_EQ(Got.size(), 4u);
  EXPECT_EQ(Got[0], "");
  EXPECT_NE(Got[1].find("its grid ('n / 256') is not ceil"), std::string::npos)
      << Got[1];
  EXPECT_EQ(Got[2], "");
  EXPECT_NE(Got[3].find("sized from 'n'"), std::string::npos) << Got[3];
}

TEST(CatalogVectorizeTest, GridRowsCoverageCountsTheBlocksOfA2DGrid) {
  std::vector<std::string> Got = coverage(R"(
__global__ void k(int n, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}
void run(int n, const float *x, float *y) {
  int nb = (n + 255) / 256;
  int gx = nb < 65535 ? nb : 1024;
  dim3 grid(gx, (nb + gx - 1) / gx);
  k<<<grid, 256>>>(n, x, y);
  k<<<dim3(64, (nb + 63) / 64), 256>>>(n, x, y);
  k<<<dim3(64, 8), 256>>>(131072, x, y);
  k<<<dim3(64, 8), 256>>>(n, x, y);
  k<<<dim3(gx, nb / gx), 256>>>(n, x, y);
  k<<<dim3(32, (nb + 63) / 64), 256>>>(n, x, y);
  k<<<nb, 256>>>(n, x, y);
}
)",
                                          "k", true);
  ASSERT_EQ(Got.size(), 7u);
  EXPECT_EQ(Got[0], "");
  EXPECT_EQ(Got[1], "");
  EXPECT_EQ(Got[2], "");
  for (unsigned I : {3u, 4u, 5u})
    EXPECT_NE(Got[I].find("is not ceil(n / block)"), std::string::npos)
        << I << ": " << Got[I];
  EXPECT_EQ(Got[6], "");
}

TEST(CatalogVectorizeTest, GridCoverageReadsCeilDivisionsAndConstants) {
  std::vector<std::string> Got = coverage(R"(
#define DIV_UP(a, b) (((a) + (b) - 1) / (b))
__host__ __device__ inline int ceil_div(int a, int b) {
  return (a + b - 1) / b;
}
__global__ void k(int n, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}
void run(int n, int m, const float *x, float *y) {
  k<<<(n + 255) / 256, 256>>>(n, x, y);
  k<<<DIV_UP(n, 128), 128>>>(n, x, y);
  k<<<ceil_div(n, 256), 256>>>(n, x, y);
  k<<<(n + 127) / 128, 256>>>(n, x, y);
  k<<<40, 256>>>(10000, x, y);
  const int threads = 256;
  int blocks = (n + threads - 1) / threads;
  k<<<blocks, threads>>>(n, x, y);
  dim3 block(64, 4);
  dim3 grid((unsigned)((n + block.x - 1) / block.x));
  k<<<grid, block>>>(n, x, y);
  k<<<(n + 255) / 256 + 1, 256>>>(n, x, y);
  k<<<2, 256>>>(n, x, y);
  k<<<n / 512, 256>>>(n, x, y);
  k<<<(m + 255) / 256, 256>>>(n, x, y);
  k<<<(n + 511) / 512, 256>>>(n, x, y);
  k<<<40, 256>>>(100000, x, y);
  int w = n;
  w += 1;
  k<<<(w + 255) / 256, 256>>>(w, x, y);
  int late = (w + 255) / 256;
  k<<<late, 256>>>(w, x, y);
}
)",
                                          "k");
  const std::string NotCeil =
      "') is not ceil(n / block) (`(n + B - 1) / B`, a macro or a helper "
      "computing it) nor constants that multiply to at least the bound";
  const std::string Differ = "' there (or they may differ when the launch "
                             "runs)";
  std::vector<std::string> Want = {
      "", "", "", "", "", "", "", "", "its grid ('2" + NotCeil,
      "its grid ('n / 512" + NotCeil,
      "its grid is sized from 'm' but the kernel's bound 'n' is 'n" + Differ,
      std::string("its grid divides by 512, which is not shown to be at most "
                  "its block's 256 threads along x"),
      std::string("its grid runs 40 x 256 threads along x, fewer than 100000 "
                  "('100000')"),
      // Grid and bound are one expression at the launch: w's value then.
      "",
      // The grid was computed before the launch, from a variable written.
      "its grid is sized from 'w' but the kernel's bound 'n' is 'w" + Differ};
  EXPECT_EQ(Got, Want);
}

TEST(CatalogVectorizeTest, GridCoverageFollowsStructMembers) {
  std::vector<std::string> Got = coverage(R"(
struct Args {
  int n;
  const float *x;
  float *y;
};
__global__ void ks(Args p) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < p.n) p.y[i] = p.x[i];
}
void run(int n, const float *x, float *y) {
  Args a{n, x, y};
  ks<<<(n + 255) / 256, 256>>>(a);
  ks<<<(n + 255) / 256, 256>>>(Args{n, x, y});
  Args b{2 * n, x, y};
  ks<<<(n + 255) / 256, 256>>>(b);
  Args c{n, x, y};
  c.n = 2 * n;
  ks<<<(n + 255) / 256, 256>>>(c);
}
)",
                                          "ks");
  std::vector<std::string> Want = {
      "", "",
      std::string("its grid is sized from 'n' but the kernel's bound 'p.n' "
                  "is '2 * n' there (or they may differ when the launch "
                  "runs)"),
      std::string("the struct it passes for 'p' ('c') is not a '{...}' "
                  "written at the launch or in the initializer of a variable "
                  "never written after, so 'p.n' cannot be followed")};
  EXPECT_EQ(Got, Want);
}

TEST(CatalogVectorizeTest, MapIndexByMeaningOnlyWhenAsked) {
  Input In(R"(__device__ unsigned gid() {
  return threadIdx.x + blockDim.x * blockIdx.x;
}
__global__ void k(unsigned n, float *y) {
  unsigned i = gid();
  if (i < n) y[i] = 0.0f;
}
__global__ void narrow(unsigned n, float *y) {
  unsigned short i = gid();
  if (i < n) y[i] = 0.0f;
}
)");
  ASSERT_TRUE(In.Ctx);
  clang::ASTContext &AST = In.TU.AST->getASTContext();
  std::string Why;
  EXPECT_FALSE(matchMapPattern(*In.Ctx, findKernelDecl(AST, "k"), Why));
  EXPECT_NE(Why.find("no index of the form"), std::string::npos) << Why;
  auto P = matchMapPattern(*In.Ctx, findKernelDecl(AST, "k"), Why, true);
  ASSERT_TRUE(P) << Why;
  EXPECT_EQ(P->InitText, "gid()");
  EXPECT_EQ(P->BoundText, "n");
  // A 16-bit index would wrap: not read by its meaning.
  EXPECT_FALSE(
      matchMapPattern(*In.Ctx, findKernelDecl(AST, "narrow"), Why, true));
}

TEST(CatalogVectorizeTest, SameValueAndStableExpressions) {
  Input In(R"(__global__ void k(int n, float *y) {}
const int C = 4;
void run(int n, int m) {
  int w = n;
  w += 1;
  int a = (n + 255) / 256, b = ((n) + 255) / 256, c = (m + 255) / 256;
  long d = (long)n * C, e = (long)n * C, f = (int)n * C;
  int g = w;
}
)");
  ASSERT_TRUE(In.Ctx);
  const clang::ASTContext &AST = In.TU.AST->getASTContext();
  std::map<std::string, const clang::VarDecl *> V;
  struct Finder : clang::RecursiveASTVisitor<Finder> {
    std::map<std::string, const clang::VarDecl *> &V;
    bool VisitVarDecl(clang::VarDecl *D) {
      V[D->getNameAsString()] = D;
      return true;
    }
  } F{{}, V};
  F.TraverseDecl(
      const_cast<clang::TranslationUnitDecl *>(AST.getTranslationUnitDecl()));
  auto Init = [&](const char *N) { return V.at(N)->getInit(); };
  // Parentheses and implicit conversions aside; explicit casts count.
  EXPECT_TRUE(sameValueExpr(Init("a"), Init("b")));
  EXPECT_FALSE(sameValueExpr(Init("a"), Init("c")));
  EXPECT_TRUE(sameValueExpr(Init("d"), Init("e")));
  EXPECT_FALSE(sameValueExpr(Init("d"), Init("f")));
  // n, m and C are never written; w is.
  EXPECT_TRUE(stableVar(V.at("n")));
  EXPECT_TRUE(stableVar(V.at("C")));
  EXPECT_FALSE(stableVar(V.at("w")));
  EXPECT_TRUE(stableExpr(Init("d"), AST));
  EXPECT_FALSE(stableExpr(Init("g"), AST));
}

} // namespace
