//===- AccumulationTest.cpp - Sums of products, as people write them ------===//

#include "Patterns/Accumulation.h"
#include "CatalogTesting.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"

using namespace optiml;
using namespace optiml::testing_catalog;

namespace {

/// The statements of kernel `k`'s body.
std::vector<const clang::Stmt *> bodyOfK(const Input &In) {
  const clang::FunctionDecl *FD =
      findKernelDecl(In.TU.AST->getASTContext(), "k");
  if (!FD || !FD->getBody())
    return {};
  const auto *CS = llvm::cast<clang::CompoundStmt>(FD->getBody());
  return {CS->body_begin(), CS->body_end()};
}

/// "X * Y" or "fma(X, Y)" for the update \p S makes to the first local of
/// kernel `k`, the factors by the array each reads; "-" for none.
std::string update(const Input &In, size_t I) {
  auto Body = bodyOfK(In);
  const auto *Acc = llvm::cast<clang::VarDecl>(
      llvm::cast<clang::DeclStmt>(Body[0])->getSingleDecl());
  std::optional<ProductUpdate> U = productUpdate(Body[I], Acc);
  if (!U)
    return "-";
  auto Name = [](const clang::Expr *E) -> std::string {
    const auto *A =
        llvm::dyn_cast<clang::ArraySubscriptExpr>(E->IgnoreParenImpCasts());
    const auto *D = A ? llvm::dyn_cast<clang::DeclRefExpr>(
                            A->getBase()->IgnoreParenImpCasts())
                      : nullptr;
    return D ? D->getDecl()->getNameAsString() : "?";
  };
  if (U->Fma.empty())
    return Name(U->X) + " * " + Name(U->Y);
  return U->Fma + "(" + Name(U->X) + ", " + Name(U->Y) + ")";
}

TEST(AccumulationTest, TheWaysToAddAProduct) {
  Input In(R"(
__global__ void k(const float *a, const float *b, float *c, int n) {
  float acc = 0.f;
  acc += a[n] * b[n];
  acc = acc + a[n] * b[n];
  acc = b[n] * a[n] + acc;
  acc = fmaf(a[n], b[n], acc);
  acc = fmaf(a[n], b[n], 1.0f);
  acc -= a[n] * b[n];
  acc += a[n] + b[n];
  c[n] = acc + a[n] * b[n];
  acc = a[n] * b[n];
}
)");
  ASSERT_TRUE(In.Ctx);
  EXPECT_EQ(update(In, 1), "a * b");
  EXPECT_EQ(update(In, 2), "a * b");
  EXPECT_EQ(update(In, 3), "b * a");
  EXPECT_EQ(update(In, 4), "fmaf(a, b)");
  // Not a sum into acc: an fma that starts over, a difference, a sum of
  // the two, a store elsewhere, a plain assignment.
  for (size_t I : {5u, 6u, 7u, 8u, 9u})
    EXPECT_EQ(update(In, I), "-") << I;
}

TEST(AccumulationTest, PointersLoadedTheSameInEveryThread) {
  Input In(R"(
__global__ void k(const float *const *A, float *const *C, float **P, int n) {
  const float *a = A[blockIdx.x];
  const float *own = A[blockIdx.x * 16 + threadIdx.y];
  float *c = C[blockIdx.x + n];
  c[threadIdx.x] = a[threadIdx.x] + own[0];
}
__global__ void w(const float *const *A, float **P) {
  const float *a = A[blockIdx.x];
  P[blockIdx.x] = nullptr;
  a += 0;
}
)");
  ASSERT_TRUE(In.Ctx);
  clang::ASTContext &AST = In.TU.AST->getASTContext();
  auto Init = [&](const char *Kernel, size_t I) {
    const clang::FunctionDecl *FD = findKernelDecl(AST, Kernel);
    const auto *CS = llvm::cast<clang::CompoundStmt>(FD->getBody());
    return std::make_pair(
        llvm::cast<clang::VarDecl>(
            llvm::cast<clang::DeclStmt>(CS->body_begin()[I])->getSingleDecl())
            ->getInit(),
        FD);
  };
  auto [A, K] = Init("k", 0);
  EXPECT_TRUE(uniformPointerLoad(A, K));
  auto [Own, K1] = Init("k", 1);
  EXPECT_FALSE(uniformPointerLoad(Own, K1)); // differs between threads
  auto [C, K2] = Init("k", 2);
  EXPECT_TRUE(uniformPointerLoad(C, K2));
  // The kernel stores a pointer: the array could change under a load.
  auto [WA, W] = Init("w", 0);
  EXPECT_FALSE(uniformPointerLoad(WA, W));
}

} // namespace
