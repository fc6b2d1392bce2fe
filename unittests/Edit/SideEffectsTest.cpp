//===- SideEffectsTest.cpp - What an expression may change ----------------===//

#include "Patterns/SideEffects.h"
#include "CatalogTesting.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Stmt.h"

using namespace optiml;
using namespace optiml::testing_catalog;

namespace {

/// The initializer of local \p Var in kernel `k`.
const clang::Expr *initOf(const Input &In, llvm::StringRef Var) {
  const clang::FunctionDecl *FD =
      findKernelDecl(In.TU.AST->getASTContext(), "k");
  if (!FD || !FD->getBody())
    return nullptr;
  for (const clang::Stmt *S :
       llvm::cast<clang::CompoundStmt>(FD->getBody())->body())
    if (const auto *DS = llvm::dyn_cast<clang::DeclStmt>(S))
      for (const clang::Decl *D : DS->decls())
        if (const auto *V = llvm::dyn_cast<clang::VarDecl>(D);
            V && V->getName() == Var)
          return V->getInit();
  return nullptr;
}

/// Whether the initializer of local \p Var in kernel `k` may have effects.
std::optional<bool> initEffects(const Input &In, llvm::StringRef Var) {
  const clang::FunctionDecl *FD =
      findKernelDecl(In.TU.AST->getASTContext(), "k");
  if (!FD || !FD->getBody())
    return std::nullopt;
  for (const clang::Stmt *S :
       llvm::cast<clang::CompoundStmt>(FD->getBody())->body())
    if (const auto *DS = llvm::dyn_cast<clang::DeclStmt>(S))
      for (const clang::Decl *D : DS->decls())
        if (const auto *V = llvm::dyn_cast<clang::VarDecl>(D);
            V && V->getName() == Var && V->getInit())
          return mayHaveSideEffects(V->getInit(), In.TU.AST->getASTContext());
  return std::nullopt;
}

TEST(SideEffectsTest, CallsAreJudgedByWhatTheyDo) {
  Input In(R"(
struct v3 { float x, y, z; };
__device__ v3 make(float a, float b, float c) { v3 t; t.x = a; t.y = b; t.z = c; return t; }
__device__ float twice(float a) { float r = a; r *= 2; return r; }
__device__ float nested(float a) { return twice(a) + make(a, a, a).x; }
__device__ float store(float *p, float a) { *p = a; return a; }
__device__ float bump(float &a) { return a; }
__device__ float global_counter;
__device__ float touch(float a) { global_counter = a; return a; }
__device__ float recurse(float a) { return a > 0 ? recurse(a - 1) : a; }
__device__ float opaque(float a);
# 1 "toolkit_math.h" 1 3
__device__ float tk_sqrt(float);
__device__ void tk_sleep(unsigned);
__device__ long long tk_clock();
__device__ float tk_load(const float *);
# 20 "input.cu" 2
__global__ void k(float *p, const float *q, volatile float *vp, float a) {
  float c0 = a * 2 + q[0];
  v3 c1 = make(a, 1, 2);
  float c2 = nested(a);
  float c3 = tk_sqrt(a);
  float c4 = __builtin_fabsf(a);
  float e0 = store(p, a);
  float e1 = bump(a);
  float e2 = touch(a);
  float e3 = opaque(a);
  float e4 = *vp;
  float e5 = (p[0] = a);
  float e6 = a++;
  long long e7 = tk_clock();
  float e8 = tk_load(q);
  float e9 = recurse(a);
}
)");
  ASSERT_TRUE(In.Ctx);
  for (const char *Pure : {"c0", "c1", "c2", "c3", "c4"})
    EXPECT_EQ(initEffects(In, Pure), false) << Pure;
  // Writes through a pointer, a non-const reference, a global, an unseen
  // body, a volatile read, an assignment, an increment, a toolkit function
  // without arguments or with a pointer, recursion beyond the depth bound.
  for (const char *Impure :
       {"e0", "e1", "e2", "e3", "e4", "e5", "e6", "e7", "e8", "e9"})
    EXPECT_EQ(initEffects(In, Impure), true) << Impure;
}

TEST(SideEffectsTest, WarpCollectivesAndAtomicsAreEffects) {
  Input In(R"(
__global__ void k(float *p, int *c, float a) {
  float s = __shfl_xor_sync(0xffffffffu, a, 1);
  int t = atomicAdd(c, 1);
}
)");
  ASSERT_TRUE(In.Ctx);
  EXPECT_EQ(initEffects(In, "s"), true);
  EXPECT_EQ(initEffects(In, "t"), true);
}

TEST(SideEffectsTest, IndexHelpersAndMemory) {
  Input In(R"(
__device__ inline int at(int x, int y, int w) { return y * w + x; }
__device__ int twostep(int x) { int t = x; return t; }
__device__ int hits;
__device__ int counted(int x) { return x + hits++; }
struct S { __device__ int get(int x) const { return x; } };
__global__ void k(const float *p, int n, S s) {
  int x = threadIdx.x;
  int h0 = at(x, 1, n);
  int h1 = twostep(x);
  int h2 = counted(x);
  int h3 = s.get(x);
  int m0 = at(x - 1, 2, n) * 2 + __builtin_fabsf(n);
  float m1 = p[at(x, 0, n)];
  int m2 = *&n;
  int m3 = counted(x);
  int b0 = threadIdx.x + 1;
  int b1 = blockIdx.x * 2;
}
)");
  ASSERT_TRUE(In.Ctx);
  const clang::ASTContext &AST = In.TU.AST->getASTContext();
  auto Helper = [&](llvm::StringRef Var) -> std::string {
    const auto *C = llvm::dyn_cast_or_null<clang::CallExpr>(
        initOf(In, Var) ? initOf(In, Var)->IgnoreParenImpCasts() : nullptr);
    const clang::FunctionDecl *FD = nullptr;
    const clang::Expr *R = C ? indexHelperReturn(C, AST, FD) : nullptr;
    return R && FD ? FD->getNameAsString() : "";
  };
  // One `return <expr>;` that changes nothing: a helper; a body with more
  // statements, an effect or a member function: not.
  EXPECT_EQ(Helper("h0"), "at");
  EXPECT_EQ(Helper("h1"), "");
  EXPECT_EQ(Helper("h2"), "");
  EXPECT_EQ(Helper("h3"), "");
  // Calls to pure functions compute; subscripts, '*' and '&', calls with
  // effects read or write.
  EXPECT_FALSE(readsOrWritesMemory(initOf(In, "m0"), &AST));
  EXPECT_TRUE(readsOrWritesMemory(initOf(In, "m1"), &AST));
  EXPECT_TRUE(readsOrWritesMemory(initOf(In, "m2"), &AST));
  EXPECT_TRUE(readsOrWritesMemory(initOf(In, "m3"), &AST));
  // Without the AST every call counts; builtins count unless freed.
  EXPECT_TRUE(readsOrWritesMemory(initOf(In, "m0"), nullptr));
  EXPECT_TRUE(readsOrWritesMemory(initOf(In, "b0"), nullptr, {false, true}));
  EXPECT_FALSE(readsOrWritesMemory(initOf(In, "b0"), nullptr, {true, true}));
  EXPECT_FALSE(readsOrWritesMemory(initOf(In, "b1"), nullptr, {false, true}));
}

} // namespace
