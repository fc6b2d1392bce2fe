//===- CountingLoopTest.cpp - Loops that count by one ---------------------===//

#include "Patterns/CountingLoop.h"
#include "CatalogTesting.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Stmt.h"

using namespace optiml;
using namespace optiml::testing_catalog;

namespace {

/// "name: [lo, hi]" for every loop variable of kernel `k` with a constant
/// range, sorted; "name: -" for a counting loop without one.
std::string ranges(const Input &In) {
  clang::ASTContext &AST = In.TU.AST->getASTContext();
  const clang::FunctionDecl *FD = findKernelDecl(AST, "k");
  if (!FD || !FD->getBody())
    return "no kernel";
  auto Ranges = constantLoopRanges(FD->getBody(), AST);
  std::vector<std::string> Out;
  for (const clang::Stmt *S :
       llvm::cast<clang::CompoundStmt>(FD->getBody())->body()) {
    const auto *F = llvm::dyn_cast<clang::ForStmt>(S);
    if (!F)
      continue;
    std::optional<CountingLoop> C = countingLoop(F, AST);
    if (!C) {
      Out.push_back("other");
      continue;
    }
    std::string Name = C->Var->getNameAsString();
    auto It = Ranges.find(C->Var);
    Out.push_back(It == Ranges.end()
                      ? Name + ": -"
                      : Name + ": [" + std::to_string(It->second.first) + ", " +
                            std::to_string(It->second.second) + "]");
  }
  return llvm::join(Out, "; ");
}

TEST(CountingLoopTest, UpDownEitherSideAndTheWaysToStep) {
  Input In(R"(
#define N 7
__global__ void k(int n, float *p) {
  for (int a = 0; a < N; ++a) p[a] = 0;
  for (int b = 1; b <= 4; b++) p[b] = 0;
  for (int c = 0; 5 > c; c += 1) p[c] = 0;
  for (int d = 6; d >= 2; --d) p[d] = 0;
  for (int e = 6; e > 2; e -= 1) p[e] = 0;
  for (int f = 0; 3 <= f; --f) p[f] = 0;
  for (int g = 0; g < n; ++g) p[g] = 0;
  for (int h = 0; h < 8; ++h) { p[h] = 0; h += 1; }
  for (int i = 5; i < 5; ++i) p[i] = 0;
  for (int j = 0; j < 8; j += 2) p[j] = 0;
  for (int l = 0; l > 8; ++l) p[l] = 0;
  for (float m = 0; m < 8; ++m) p[0] = m;
  for (int o = 0, q = 0; o < 8; ++o) p[o] = q;
}
)");
  ASSERT_TRUE(In.Ctx);
  EXPECT_EQ(ranges(In), "a: [0, 6]; b: [1, 4]; c: [0, 4]; d: [2, 6]; "
                        "e: [3, 6]; f: -; g: -; h: -; i: -; other; "
                        "other; other; other");
}

TEST(CountingLoopTest, UpOnlyLeavesTheDownLoopsOut) {
  Input In(R"(
__global__ void k(float *p) {
  for (int a = 0; a < 4; ++a)
    for (int d = 3; d >= 0; --d) p[a * 4 + d] = 0;
}
)");
  ASSERT_TRUE(In.Ctx);
  clang::ASTContext &AST = In.TU.AST->getASTContext();
  const clang::FunctionDecl *FD = findKernelDecl(AST, "k");
  ASSERT_NE(FD, nullptr);
  EXPECT_EQ(constantLoopRanges(FD->getBody(), AST).size(), 2u);
  auto Up = constantLoopRanges(FD->getBody(), AST, /*UpOnly=*/true);
  ASSERT_EQ(Up.size(), 1u);
  EXPECT_EQ(Up.begin()->first->getName(), "a");
  EXPECT_EQ(Up.begin()->second, std::make_pair(int64_t(0), int64_t(3)));
}

/// For every `while` loop of kernel `k`: "v up|down [<=] BOUND" when it
/// counts, else the reason.
std::string whiles(const Input &In) {
  clang::ASTContext &AST = In.TU.AST->getASTContext();
  const clang::FunctionDecl *FD = findKernelDecl(AST, "k");
  if (!FD || !FD->getBody())
    return "no kernel";
  std::vector<std::string> Out;
  const clang::Stmt *Prev = nullptr;
  for (const clang::Stmt *S :
       llvm::cast<clang::CompoundStmt>(FD->getBody())->body()) {
    if (const auto *W = llvm::dyn_cast<clang::WhileStmt>(S)) {
      std::string Why;
      auto C = countingWhile(W, Prev, AST, &Why);
      Out.push_back(
          !C ? Why
             : C->Var->getNameAsString() + (C->Step == 1 ? " up" : " down") +
                   (C->Inclusive ? " incl" : "") + " step@" +
                   std::to_string(AST.getSourceManager()
                                      .getPresumedLoc(C->Inc->getBeginLoc())
                                      .getLine()));
    }
    Prev = S;
  }
  return llvm::join(Out, "; ");
}

TEST(CountingLoopTest, WhileLoopsThatCount) {
  Input In(R"(
__global__ void k(int n, float *p) {
  unsigned a = 0;
  while (a < n) { p[a] = 0; ++a; }
  int b = n;
  while (b >= 0) { p[b] = 0; b--; }
  int c = 0;
  while (n >= c) { p[c] = 1; c += 1; }
  int d = 0;
  p[0] = 1;
  while (d < n) { p[d] = 0; ++d; }
  int e = 0;
  while (e < n) { p[e] = 0; e += 2; }
  int f = 0;
  while (f < n) { if (p[f] > 0) { ++f; continue; } p[f] = 1; ++f; }
  int g = 0;
  while (g < n) { for (int i = 0; i < 2; ++i) if (i) continue; ++g; }
  int h = 0;
  while (h < n) { if (p[h] < 0) break; ++h; }
  int m = 0;
  while (m < n + m) { ++m; }
  int o = 0;
  while (o > n) { ++o; }
}
)");
  ASSERT_TRUE(In.Ctx);
  EXPECT_EQ(whiles(In),
            "a up step@5; b down incl step@7; c up incl step@9; "
            "its counter is not an integer declared with its start just "
            "before the loop; "
            "its body does not end by stepping the counter by one; "
            "its body writes the counter before the step; g up step@18; "
            "it has a 'continue' or 'break', which skips or leaves the step; "
            "its bound depends on the counter; "
            "its condition does not compare the counter with a bound in the "
            "direction it counts");
}

// In a template, a counter whose type depends on the template's parameters
// counts too (the caller checks the instantiations).
TEST(CountingLoopTest, WhileLoopWithDependentCounter) {
  Input In(R"(
template <typename I>
__global__ void k(I n, float *p) {
  I a = 0;
  while (a < n) { p[a] = 0; ++a; }
  float b = 0;
  while (b < n) { p[0] = b; ++b; }
}
void run(float *p) { k<int><<<1, 1>>>(4, p); }
)");
  ASSERT_TRUE(In.Ctx);
  EXPECT_EQ(whiles(In), "a up step@6; its counter is not an integer declared "
                        "with its start just before the loop");
}

// Given every statement before the loop, the counter may be declared
// earlier, with statements between that never name it; one that does
// (here reading `c`, which would see another start once the loop's start
// is rewritten) leaves the loop uncounted.
TEST(CountingLoopTest, WhileCounterDeclaredEarlier) {
  Input In(R"(
__global__ void k(int n, const int *off, float *p) {
  int a = off[0];
  const int end = off[1];
  float s = 0.f;
  while (a < end) { s += p[a]; ++a; }
  int c = off[2];
  int d = c + 1;
  while (c < n) { p[c] = d; ++c; }
  p[0] = s;
}
)");
  ASSERT_TRUE(In.Ctx);
  clang::ASTContext &AST = In.TU.AST->getASTContext();
  const clang::FunctionDecl *FD = findKernelDecl(AST, "k");
  ASSERT_TRUE(FD && FD->getBody());
  std::vector<const clang::Stmt *> Earlier;
  std::vector<std::string> Out;
  for (const clang::Stmt *S :
       llvm::cast<clang::CompoundStmt>(FD->getBody())->body()) {
    if (const auto *W = llvm::dyn_cast<clang::WhileStmt>(S)) {
      std::string Why;
      auto C = countingWhile(W, Earlier, AST, &Why);
      Out.push_back(
          C ? C->Var->getNameAsString() + " from " +
                  std::to_string(AST.getSourceManager()
                                     .getPresumedLoc(C->Decl->getBeginLoc())
                                     .getLine())
            : Why);
    }
    Earlier.push_back(S);
  }
  EXPECT_EQ(llvm::join(Out, "; "),
            "a from 4; its counter 'c' is used between its declaration and "
            "the loop");
}

} // namespace
