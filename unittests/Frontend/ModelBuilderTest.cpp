#include "optiml/Frontend/ModelBuilder.h"
#include "optiml/Frontend/Analysis.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Stmt.h"
#include "clang/Frontend/ASTUnit.h"
#include "gtest/gtest.h"

using namespace optiml;

namespace {

/// Parses \p Body (after the mock header) and builds the model.
struct Parsed {
  ParsedTU TU;
  KernelModel Model;
};

Parsed parse(const std::string &Body) {
  ToolchainOptions TO;
  TO.ResourceDir = OPTIML_TEST_RESOURCE_DIR;
  auto Tools = discoverToolchain(TO);
  EXPECT_TRUE(bool(Tools)) << llvm::toString(Tools.takeError());
  ParseConfig Config;
  Config.Tools = *Tools;
  Config.ExtraArgs = {"-nocudainc", "-nocudalib", "-I" OPTIML_TEST_INPUTS_DIR};
  std::string Code = "#include \"cuda_mock.h\"\n" + Body;
  auto TU = parseCuda(Code, "/tmp/model-test.cu", Config, CudaSide::Host);
  EXPECT_TRUE(bool(TU));
  Parsed P;
  P.TU = std::move(*TU);
  EXPECT_EQ(P.TU.errorCount(), 0u);
  for (const Diagnostic &D : P.TU.Diags)
    ADD_FAILURE() << D.str();
  P.Model = buildKernelModel(P.TU.AST->getASTContext());
  return P;
}

const MemoryAccess *access(const KernelInfo &K, const std::string &Index) {
  for (const MemoryAccess &A : K.Accesses)
    if (A.Index == Index)
      return &A;
  return nullptr;
}

TEST(ModelBuilderTest, CoalescingThroughLocalsAndInductionVariables) {
  Parsed P = parse(R"(
__global__ void k(float *a, const float *b, int n, int ld) {
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + tid;
  int j = i;
  j = j + 1;                 // assigned again: no longer trusted
  for (int g = i; g < n; g += blockDim.x * gridDim.x)
    a[g] = b[g * 4] + b[tid * ld] + b[j] + b[i / 2] + b[-tid + 7];
})");
  ASSERT_EQ(P.Model.Kernels.size(), 1u);
  const KernelInfo &K = P.Model.Kernels[0];
  ASSERT_TRUE(access(K, "g"));
  EXPECT_EQ(access(K, "g")->Pattern, Coalescing::Unit);
  EXPECT_TRUE(access(K, "g")->IsWrite);
  EXPECT_FALSE(access(K, "g")->IsRead);
  ASSERT_TRUE(access(K, "g * 4"));
  EXPECT_EQ(access(K, "g * 4")->Pattern, Coalescing::Strided);
  EXPECT_EQ(access(K, "g * 4")->Stride, 4);
  EXPECT_EQ(access(K, "tid * ld")->Pattern, Coalescing::Strided);
  EXPECT_FALSE(access(K, "tid * ld")->Stride.has_value());
  EXPECT_EQ(access(K, "j")->Pattern, Coalescing::Unknown);
  EXPECT_EQ(access(K, "i / 2")->Pattern, Coalescing::Unknown);
  EXPECT_EQ(access(K, "-tid + 7")->Pattern, Coalescing::Strided);
  EXPECT_EQ(access(K, "-tid + 7")->Stride, -1);
  EXPECT_TRUE(K.Params[0].Written);
  EXPECT_FALSE(K.Params[0].Read);
  EXPECT_TRUE(K.Params[1].Read);
}

TEST(ModelBuilderTest, TripCounts) {
  Parsed P = parse(R"(
__global__ void k(float *a, int n) {
  for (int i = 0; i < 10; ++i) a[i] = 0;       // 10
  for (int i = 10; i > 0; --i) a[i] = 0;       // 10
  for (int i = 0; i <= 10; i += 3) a[i] = 0;   // 4: 0 3 6 9
  for (int i = 0; i != 12; i += 4) a[i] = 0;   // 3
  for (int i = 0; i < n; ++i) a[i] = 0;        // unknown
  for (int i = 1; i < 64; i *= 2) a[i] = 0;    // multiplicative: unknown
  for (int i = 0; i < 10; --i) a[i] = 0;       // wrong direction: unknown
})");
  const KernelInfo &K = P.Model.Kernels[0];
  ASSERT_EQ(K.Loops.size(), 7u);
  EXPECT_EQ(K.Loops[0].TripCount, 10);
  EXPECT_EQ(K.Loops[1].TripCount, 10);
  EXPECT_EQ(K.Loops[2].TripCount, 4);
  EXPECT_EQ(K.Loops[3].TripCount, 3);
  EXPECT_FALSE(K.Loops[4].TripCount.has_value());
  EXPECT_FALSE(K.Loops[5].TripCount.has_value());
  EXPECT_FALSE(K.Loops[6].TripCount.has_value());
  EXPECT_EQ(K.Loops[4].Bound, "n");
}

TEST(ModelBuilderTest, LoopIdsMatchFindLoopStmt) {
  Parsed P = parse(R"(
namespace ns {
__global__ void k(float *a, int n) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      while (a[j] > 0) a[j] -= 1;
      for (int q = 0; q < 2; ++q) a[q] = 0;
    }
  do { n--; } while (n > 0);
}
})");
  const KernelInfo &K = P.Model.Kernels[0];
  std::vector<std::string> Ids;
  for (const LoopInfo &L : K.Loops)
    Ids.push_back(L.Id);
  EXPECT_EQ(Ids, (std::vector<std::string>{"ns::k/loop0", "ns::k/loop0.0",
                                           "ns::k/loop0.0.0", "ns::k/loop0.0.1",
                                           "ns::k/loop1"}));
  clang::ASTContext &Ctx = P.TU.AST->getASTContext();
  const clang::FunctionDecl *FD = findKernelDecl(Ctx, "ns::k");
  ASSERT_TRUE(FD);
  EXPECT_EQ(findKernelDecl(Ctx, "k"), nullptr);
  const clang::SourceManager &SM = Ctx.getSourceManager();
  for (const LoopInfo &L : K.Loops) {
    const clang::Stmt *S = findLoopStmt(FD, L.Id);
    ASSERT_TRUE(S) << L.Id;
    EXPECT_EQ(SM.getFileOffset(S->getBeginLoc()), L.Range.Begin.Offset) << L.Id;
  }
  EXPECT_EQ(findLoopStmt(FD, "ns::k/loop2"), nullptr);
  EXPECT_EQ(K.Loops[1].Parent, "ns::k/loop0");
  EXPECT_EQ(K.Loops[3].Depth, 2u);
}

TEST(ModelBuilderTest, OnlyMainFileKernelsAndLaunchedInstantiations) {
  Parsed P = parse(R"(
template <int N> __global__ void t(float *a) { a[threadIdx.x] = N; }
template <int N> __global__ void never(float *a) { a[threadIdx.x] = N; }
void go(float *a) { t<1><<<1, 32>>>(a); t<2><<<1, 64>>>(a); t<1><<<2, 32>>>(a); }
)");
  ASSERT_EQ(P.Model.Kernels.size(), 2u);
  const KernelInfo &T = P.Model.Kernels[0];
  EXPECT_EQ(T.Instantiations, (std::vector<std::string>{"t<1>", "t<2>"}));
  ASSERT_EQ(T.Launches.size(), 3u);
  EXPECT_EQ(T.Launches[2].Id, "t/launch2");
  EXPECT_EQ(T.Launches[2].Grid, "2");
  EXPECT_TRUE(P.Model.Kernels[1].Instantiations.empty());
  EXPECT_TRUE(P.Model.Kernels[1].Launches.empty());
}

TEST(ModelBuilderTest, TemplateElementsFromTheirInstantiations) {
  Parsed P = parse(R"(
template <typename T, int N> __global__ void k(const T *x, T *y, int *c) {
  y[threadIdx.x] = x[threadIdx.x] * N; c[0] = 1;
}
template <typename T> __global__ void mixed(T *y) { y[threadIdx.x] = 0; }
void go(float *a, double *d, int *c) {
  k<float, 2><<<1, 32>>>(a, a, c); k<float, 4><<<1, 32>>>(a, a, c);
  mixed<float><<<1, 32>>>(a); mixed<double><<<1, 32>>>(d);
}
)");
  ASSERT_EQ(P.Model.Kernels.size(), 2u);
  const KernelInfo &K = P.Model.Kernels[0];
  ASSERT_EQ(K.Params.size(), 3u);
  // As written the element is 'T'; every instantiation makes it a float.
  EXPECT_EQ(K.Params[1].ElementType, "T");
  EXPECT_EQ(K.Params[1].ElementSize, 0u);
  EXPECT_EQ(K.Params[1].InstanceElementType, "float");
  EXPECT_EQ(K.Params[1].InstanceElementSize, 4u);
  EXPECT_TRUE(K.Params[1].InstanceIsFloat);
  // Not dependent: nothing to resolve.
  EXPECT_EQ(K.Params[2].ElementSize, 4u);
  EXPECT_EQ(K.Params[2].InstanceElementType, "");
  // Instantiations that disagree leave the element unresolved.
  const KernelInfo &M = P.Model.Kernels[1];
  EXPECT_EQ(M.Params[0].InstanceElementType, "");
  EXPECT_EQ(M.Params[0].InstanceElementSize, 0u);
}

TEST(ModelBuilderTest, ArraysOfDevicePointersKnowTheirInnerElement) {
  Parsed P = parse(R"(
typedef float real;
__global__ void k(const real *const *a, double **d, float *c, int n) {
  c[threadIdx.x] = a[blockIdx.x][threadIdx.x] + d[0][0];
}
void go(const float **a, double **d, float *c) { k<<<1, 32>>>(a, d, c, 4); }
)");
  ASSERT_EQ(P.Model.Kernels.size(), 1u);
  const KernelInfo &K = P.Model.Kernels[0];
  ASSERT_EQ(K.Params.size(), 4u);
  EXPECT_TRUE(K.Params[0].ElementIsPointer);
  EXPECT_EQ(K.Params[0].ElementSize, 8u);
  EXPECT_EQ(K.Params[0].InnerElementType, "float");
  EXPECT_EQ(K.Params[0].InnerElementSize, 4u);
  EXPECT_TRUE(K.Params[0].InnerIsFloat);
  EXPECT_TRUE(K.Params[1].ElementIsPointer);
  EXPECT_EQ(K.Params[1].InnerElementType, "double");
  EXPECT_EQ(K.Params[1].InnerElementSize, 8u);
  // A plain pointer and a scalar hold no pointers to follow.
  EXPECT_FALSE(K.Params[2].ElementIsPointer);
  EXPECT_FALSE(K.Params[3].ElementIsPointer);
}

TEST(ModelBuilderTest, StructsOfDevicePointersKnowTheirMembers) {
  Parsed P = parse(R"(
typedef float real;
struct Out { real *c; };
struct Mats { const float *a; int n; double *d; Out out; };
struct Plain { float x, y; };
struct Odd { int n; int *p; } __attribute__((packed));
__global__ void k(const Mats *m, Mats byValue, Plain *q, Odd *o) {
  m[0].out.c[threadIdx.x] = m[0].a[threadIdx.x] + byValue.n + q->x + o->n;
}
void go(const Mats *m, Mats v, Plain *q, Odd *o) { k<<<1, 32>>>(m, v, q, o); }
)");
  ASSERT_EQ(P.Model.Kernels.size(), 1u);
  const KernelInfo &K = P.Model.Kernels[0];
  const auto &F = K.Params[0].ElementPointerFields;
  ASSERT_EQ(F.size(), 3u);
  EXPECT_EQ(F[0].Offset, 0u);
  EXPECT_EQ(F[0].Name, "a");
  EXPECT_EQ(F[0].InnerType, "float");
  EXPECT_EQ(F[0].InnerSize, 4u);
  EXPECT_TRUE(F[0].InnerIsFloat);
  EXPECT_EQ(F[1].Offset, 16u);
  EXPECT_EQ(F[1].InnerType, "double");
  // A nested struct's member, its typedef seen through.
  EXPECT_EQ(F[2].Offset, 24u);
  EXPECT_EQ(F[2].Name, "out.c");
  EXPECT_EQ(F[2].InnerType, "float");
  // Passed by value (the probe reads the words of the argument itself), a
  // struct without pointers, a pointer that is not on a whole word.
  EXPECT_TRUE(K.Params[1].ElementPointerFields.empty());
  EXPECT_TRUE(K.Params[2].ElementPointerFields.empty());
  EXPECT_TRUE(K.Params[3].ElementPointerFields.empty());
}

TEST(ModelBuilderTest, AccessesThroughPointersReadFromMemory) {
  // The batched products of cublasSgemmBatched's interface: the matrices'
  // pointers read from arrays, from structs in an array, or in place.
  Parsed P = parse(R"(
struct Mats { const float *a, *b; float *c; };
__global__ void bmm(const float *const *A, const float *const *B,
                    float *const *C, int n) {
  const float *a = A[blockIdx.x];
  const float *b = B[blockIdx.x];
  float *c = C[blockIdx.x];
  float acc = 0.f;
  for (int k = 0; k < n; ++k)
    acc += a[threadIdx.y * n + k] * b[k * n + threadIdx.x];
  c[threadIdx.y * n + threadIdx.x] = acc;
}
__global__ void structs(const Mats *m, int n) {
  const Mats p = m[blockIdx.x];
  float acc = 0.f;
  for (int k = 0; k < n; ++k)
    acc += p.a[threadIdx.y * n + k] * p.b[k * n + threadIdx.x];
  p.c[threadIdx.y * n + threadIdx.x] = acc;
}
__global__ void notLoads(const float *const *A, float *out) {
  __shared__ float *tab[4];
  const float *moved = A[0];
  moved = A[1];
  out[threadIdx.x] = moved[threadIdx.x] + tab[0][threadIdx.x];
}
void go(const float **A, float **C, const Mats *m, float *o) {
  bmm<<<8, dim3(16, 16)>>>(A, A, C, 16);
  structs<<<8, dim3(16, 16)>>>(m, 16);
  notLoads<<<1, 32>>>(A, o);
}
)");
  ASSERT_EQ(P.Model.Kernels.size(), 3u);
  auto Through = [](const KernelInfo &K) {
    std::vector<std::string> Out;
    for (const MemoryAccess &A : K.Accesses)
      if (!A.Through.empty()) {
        EXPECT_EQ(A.Space, AddressSpace::Global);
        EXPECT_EQ(A.ParamIndex, -1);
        Out.push_back(std::string(A.IsWrite ? "write " : "read ") + A.Base +
                      "[" + A.Index + "] <- " + A.Through);
      }
    return Out;
  };
  const KernelInfo &Bmm = P.Model.Kernels[0];
  EXPECT_EQ(Through(Bmm), (std::vector<std::string>{
                              "read a[threadIdx.y * n + k] <- A[blockIdx.x]",
                              "read b[k * n + threadIdx.x] <- B[blockIdx.x]",
                              "write c[threadIdx.y * n + threadIdx.x] <- "
                              "C[blockIdx.x]"}));
  EXPECT_EQ(Bmm.Class, KernelClass::MatmulLike);
  const KernelInfo &S = P.Model.Kernels[1];
  EXPECT_EQ(Through(S), (std::vector<std::string>{
                            "read p.a[threadIdx.y * n + k] <- m[blockIdx.x]",
                            "read p.b[k * n + threadIdx.x] <- m[blockIdx.x]",
                            "write p.c[threadIdx.y * n + threadIdx.x] <- "
                            "m[blockIdx.x]"}));
  EXPECT_EQ(S.Class, KernelClass::MatmulLike);
  // A pointer local assigned again, a pointer read from shared memory.
  EXPECT_TRUE(Through(P.Model.Kernels[2]).empty());
}

TEST(ModelBuilderTest, ArraysOfPointersToATemplateParameter) {
  // The batched interface written as a template: the matrices' element is
  // what every specialization launched gives T.
  Parsed P = parse(R"(
template <typename T>
__global__ void bmm(const T *const *a, T **c, int n) {
  c[blockIdx.x][threadIdx.x] = a[blockIdx.x][threadIdx.x];
}
template <typename T>
__global__ void mixed(T **c) { c[0][threadIdx.x] = 0; }
void go(const float **a, float **c, double **d) {
  bmm<<<1, 32>>>(a, c, 4);
  mixed<<<1, 32>>>(c);
  mixed<<<1, 32>>>(d);
}
)");
  const KernelInfo *B = nullptr, *M = nullptr;
  for (const KernelInfo &K : P.Model.Kernels)
    (K.Name == "bmm" ? B : M) = &K;
  ASSERT_TRUE(B && M);
  for (unsigned I : {0u, 1u}) {
    EXPECT_TRUE(B->Params[I].ElementIsPointer);
    EXPECT_EQ(B->Params[I].InnerElementType, "float");
    EXPECT_EQ(B->Params[I].InnerElementSize, 4u);
    EXPECT_TRUE(B->Params[I].InnerIsFloat);
  }
  // float in one launch, double in the other: left unknown (bytes).
  EXPECT_TRUE(M->Params[0].ElementIsPointer);
  EXPECT_EQ(M->Params[0].InnerElementSize, 0u);
}

TEST(ModelBuilderTest, ElementsSeenThroughTypedefs) {
  Parsed P = parse(R"(
typedef float real;
using idx = unsigned int;
__global__ void k(real *x, const idx *i) { x[threadIdx.x] = i[threadIdx.x]; }
void go(real *x, idx *i) { k<<<1, 32>>>(x, i); }
)");
  ASSERT_EQ(P.Model.Kernels.size(), 1u);
  const KernelInfo &K = P.Model.Kernels[0];
  // As written for the rewrites, as the compiler sees it for the verifier.
  EXPECT_EQ(K.Params[0].ElementType, "real");
  EXPECT_EQ(K.Params[0].CanonicalElementType, "float");
  EXPECT_EQ(K.Params[1].ElementType, "idx");
  EXPECT_EQ(K.Params[1].CanonicalElementType, "unsigned int");
}

TEST(ModelBuilderTest, LaunchSpansPointAtTheWrittenText) {
  std::string Body =
      "__global__ void k(int *a) { a[threadIdx.x] = 1; }\n"
      "void go(int *a, int n) { k<<<(n + 127) / 128, 128>>>(a); }\n";
  Parsed P = parse(Body);
  const LaunchSite &L = P.Model.Kernels[0].Launches[0];
  std::string Code = "#include \"cuda_mock.h\"\n" + Body;
  EXPECT_EQ(Code.substr(L.GridRange.Begin.Offset,
                        L.GridRange.End.Offset - L.GridRange.Begin.Offset),
            "(n + 127) / 128");
  EXPECT_EQ(Code.substr(L.BlockRange.Begin.Offset,
                        L.BlockRange.End.Offset - L.BlockRange.Begin.Offset),
            "128");
}

TEST(ModelBuilderTest, LaunchMacroArgumentsRewritableInPlace) {
  std::string Body =
      "#define L(k, g, b, ...) k<<<g, b>>>(__VA_ARGS__)\n"
      "#define P(k, g, b, ...) k<<<(g), (b)>>>(__VA_ARGS__)\n"
      "#define N(k, n, ...) k<<<((n) + 127) / 128, 128>>>(__VA_ARGS__)\n"
      "#define T(k, g, b, ...) (k<<<g, b>>>(__VA_ARGS__), k<<<g, b>>>(1 + "
      "(__VA_ARGS__)))\n"
      "#define S(k, g, b, ...) (puts(#g), k<<<g, b>>>(__VA_ARGS__))\n"
      "#define C(n) (((n) + 127) / 128)\n"
      "#define BIG 4096\n"
      "int puts(const char *);\n"
      "__global__ void k(int a) {}\n"
      "void go(int n) {\n"
      "  k<<<(n + 127) / 128, 128>>>(0);\n"
      "  L(k, (n + 127) / 128, 128, 1);\n"
      "  P(k, n / 4, 32 *\n"
      "    4, 2);\n"
      "  N(k, n, 3);\n"
      "  T(k, n, 128, 4);\n"
      "  S(k, n, 128, 5);\n"
      "  L(k, C(n), 128, 6);\n"
      "  P(k, (BIG + 127) / 128, BIG / 32, 7);\n"
      "  L(k, n * 2 + C(n), 128, 8);\n"
      "}\n";
  Parsed P = parse(Body);
  std::string Code = "#include \"cuda_mock.h\"\n" + Body;
  const std::vector<LaunchSite> &Ls = P.Model.Kernels[0].Launches;
  ASSERT_EQ(Ls.size(), 10u);
  auto Text = [&](const SourceSpan &S) {
    return Code.substr(S.Begin.Offset, S.End.Offset - S.Begin.Offset);
  };
  // Written out; through a macro taking both as arguments used once (bare,
  // or in parentheses of the body).
  for (unsigned I : {0u, 1u, 2u, 7u, 8u, 9u}) {
    EXPECT_EQ(Ls[I].InMacro, I > 0) << I;
    EXPECT_TRUE(Ls[I].GridInPlace) << I;
    EXPECT_TRUE(Ls[I].BlockInPlace) << I;
  }
  EXPECT_EQ(Text(Ls[1].GridRange), "(n + 127) / 128");
  EXPECT_EQ(Text(Ls[1].BlockRange), "128");
  EXPECT_EQ(Text(Ls[2].GridRange), "n / 4");
  EXPECT_EQ(Text(Ls[2].BlockRange), "32 *\n    4");
  // The grid written in the body (its block too); arguments used twice
  // (two launches) or stringized.
  for (unsigned I : {3u, 4u, 5u, 6u}) {
    EXPECT_TRUE(Ls[I].InMacro) << I;
    EXPECT_FALSE(Ls[I].GridInPlace) << I;
  }
  EXPECT_FALSE(Ls[3].BlockInPlace);
  EXPECT_FALSE(Ls[4].BlockInPlace);
  EXPECT_FALSE(Ls[5].BlockInPlace);
  EXPECT_TRUE(Ls[6].BlockInPlace);
  // Macros invoked inside the argument are replaced with it, written as
  // the invocation writes them: at an end of the argument too.
  EXPECT_EQ(Text(Ls[7].GridRange), "C(n)");
  EXPECT_EQ(Text(Ls[8].GridRange), "(BIG + 127) / 128");
  EXPECT_EQ(Ls[8].Grid, "(BIG + 127) / 128");
  EXPECT_EQ(Text(Ls[8].BlockRange), "BIG / 32");
  EXPECT_EQ(Text(Ls[9].GridRange), "n * 2 + C(n)");
}

TEST(ModelBuilderTest, MultiDimSharedAndReassignedUniformLocals) {
  Parsed P = parse(R"(
__global__ void k(int *out) {
  __shared__ int buf[2][64];
  __shared__ int col[32][33];
  int tid = threadIdx.x;
  int cur = 0;
  for (int off = 1; off < 64; off <<= 1) {
    int nxt = 1 - cur;
    buf[nxt][tid] = buf[cur][tid];
    cur = nxt;
  }
  int drift = 0;
  drift = drift + tid;         // takes a thread-dependent value
  col[tid][0] = buf[cur][drift];
  out[tid] = col[0][tid];
})");
  const KernelInfo &K = P.Model.Kernels[0];
  ASSERT_TRUE(access(K, "nxt][tid"));
  EXPECT_EQ(access(K, "nxt][tid")->Space, AddressSpace::Shared);
  EXPECT_EQ(access(K, "nxt][tid")->Pattern, Coalescing::Unit);
  EXPECT_TRUE(access(K, "nxt][tid")->IsWrite);
  EXPECT_EQ(access(K, "cur][drift")->Pattern, Coalescing::Unknown);
  // Row stride of col is 33 elements.
  ASSERT_TRUE(access(K, "tid][0"));
  EXPECT_EQ(access(K, "tid][0")->Stride, 33);
  EXPECT_EQ(access(K, "0][tid")->Pattern, Coalescing::Unit);
}

TEST(ModelBuilderTest, ConvolutionWindowIsAStencil) {
  Parsed P = parse(R"(
__global__ void conv(const float *in, const float *w, float *out, int n) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
  for (int i = 0; i < 5; ++i)
    s += in[x + i] * w[i];
  out[x] = s;
}
__global__ void dotrow(const float *a, const float *b, float *out, int n) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
  for (int i = 0; i < n; ++i)
    s += a[x * n + i] * b[i];
  out[x] = s;
})");
  ASSERT_EQ(P.Model.Kernels.size(), 2u);
  EXPECT_EQ(P.Model.Kernels[0].Class, KernelClass::Stencil);
  EXPECT_EQ(P.Model.Kernels[0].ClassReason,
            "weighted sum of in * w over a fixed 5 window");
  EXPECT_EQ(P.Model.Kernels[1].Class, KernelClass::MatmulLike);
}

TEST(ModelBuilderTest, CentredWindowsAreStencils) {
  // A loop over offsets on both sides of the element (1D radius, a
  // separable filter of run-time radius, a 3D 7-point neighbourhood in a
  // z-march) combines neighbours: a stencil, not a reduction or a GEMM.
  // A loop from 0 over a row stays a reduction.
  Parsed P = parse(R"(
__global__ void s1(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float r = 0;
  for (int j = -3; j <= 3; j++)
    r += in[i + j];
  out[i] = r;
}
__global__ void row(const float *in, const float *f, float *out, int w, int r) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
  for (int k = -r; k <= r; k++)
    s += in[x + k] * f[r + k];
  out[x] = s;
}
__global__ void rowsum(const float *in, float *out) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
  for (int j = 0; j < 16; j++)
    s += in[r * 16 + j];
  out[r] = s;
})");
  ASSERT_EQ(P.Model.Kernels.size(), 3u);
  EXPECT_EQ(P.Model.Kernels[0].Class, KernelClass::Stencil);
  EXPECT_EQ(P.Model.Kernels[1].Class, KernelClass::Stencil);
  EXPECT_EQ(P.Model.Kernels[1].ClassReason,
            "weighted sum of in * f over offsets on both sides of each "
            "element");
  EXPECT_EQ(P.Model.Kernels[2].Class, KernelClass::Reduction);
}

TEST(ModelBuilderTest, SharedMemoryHelpersAndBarrierWrappers) {
  // The CUDA samples' reductions: shared memory through a SharedMemory<T>
  // helper's conversion to T *, barriers through cooperative groups.
  Parsed P = parse(R"(
namespace cg {
struct thread_block { __device__ void sync() { __syncthreads(); } };
__device__ thread_block this_thread_block() { return thread_block(); }
__device__ void sync(thread_block &g) { g.sync(); }
}
template <class T> struct SharedMemory {
  __device__ operator T *() { extern __shared__ int smem[]; return (T *)smem; }
};
template <class T>
__global__ void reduce(const T *in, T *out, unsigned n) {
  cg::thread_block cta = cg::this_thread_block();
  T *sdata = SharedMemory<T>();
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = i < n ? in[i] : 0;
  cg::sync(cta);
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s)
      sdata[tid] += sdata[tid + s];
    cta.sync();
  }
  if (tid == 0)
    out[blockIdx.x] = sdata[0];
}
void run(const float *in, float *out, unsigned n) {
  reduce<float><<<n / 256, 256, 1024>>>(in, out, n);
})");
  ASSERT_EQ(P.Model.Kernels.size(), 1u);
  const KernelInfo &K = P.Model.Kernels[0];
  EXPECT_EQ(K.Class, KernelClass::Reduction);
  ASSERT_EQ(K.Shared.size(), 1u);
  EXPECT_EQ(K.Shared[0].Name, "sdata");
  EXPECT_TRUE(K.Shared[0].Dynamic);
  EXPECT_EQ(K.Syncthreads.size(), 2u);
  const MemoryAccess *A = access(K, "tid + s");
  ASSERT_TRUE(A);
  EXPECT_EQ(A->Space, AddressSpace::Shared);
}

} // namespace

TEST(ModelBuilderTest, AddressUsesOtherThanLaunches) {
  // Direct launches (also of a template instance) are launches; a kernel
  // stored in a pointer or passed to a function is an address use, which
  // may hide launches. The kernel's own name in its launch is neither.
  std::string Body =
      "void take(const void *f);\n"
      "template <typename F> void take_t(F f);\n"
      "__global__ void a(int *p) { p[threadIdx.x] = 1; }\n"
      "__global__ void b(int *p) { p[threadIdx.x] = 2; }\n"
      "template <typename T> __global__ void c(T *p) { p[threadIdx.x] = 3; }\n"
      "template <typename T> void go_t(T *p) {\n"
      "  c<T><<<1, 32>>>(p);\n"
      "  take_t(c<T>);\n"
      "}\n"
      "void go(int *p) {\n"
      "  a<<<1, 32>>>(p);\n"
      "  void (*f)(int *) = &b;\n"
      "  take((const void *)b);\n"
      "  c<int><<<1, 32>>>(p);\n"
      "  go_t(p);\n"
      "}\n";
  Parsed P = parse(Body);
  ASSERT_EQ(P.Model.Kernels.size(), 3u);
  const KernelInfo *A = P.Model.findKernel("a");
  const KernelInfo *B = P.Model.findKernel("b");
  const KernelInfo *C = P.Model.findKernel("c");
  ASSERT_TRUE(A && B && C);
  EXPECT_TRUE(A->AddressTaken.empty());
  EXPECT_EQ(A->Launches.size(), 1u);
  ASSERT_EQ(B->AddressTaken.size(), 2u);
  EXPECT_EQ(B->AddressTaken[0].Pos.Line, 13u); // after the mock's include
  EXPECT_EQ(B->AddressTaken[0].PassedTo, "");
  EXPECT_EQ(B->AddressTaken[1].Pos.Line, 14u);
  EXPECT_EQ(B->AddressTaken[1].PassedTo, "take");
  EXPECT_TRUE(B->Launches.empty());
  ASSERT_EQ(C->AddressTaken.size(), 1u);
  EXPECT_EQ(C->AddressTaken[0].Pos.Line, 9u);
  EXPECT_EQ(C->AddressTaken[0].PassedTo, "take_t");
  EXPECT_EQ(C->Launches.size(), 2u);
}
