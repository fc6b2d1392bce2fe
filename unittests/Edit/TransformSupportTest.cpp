//===- TransformSupportTest.cpp - The transforms' helper library ----------===//
//
// The helpers every transform shares, and the places where two families of
// transforms need different rules (the variants are named by the
// difference; these tests say what it is).
//
//===----------------------------------------------------------------------===//

#include "Transforms/TransformSupport.h"
#include "CatalogInternal.h"
#include "CatalogTesting.h"
#include "Patterns/ThreadPerItem.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Stmt.h"
#include <map>

using namespace optiml;
using namespace optiml::testing_catalog;

namespace {

/// The statements of kernel \p Name's body.
std::vector<const clang::Stmt *> bodyOf(const Input &In, llvm::StringRef Name) {
  const clang::FunctionDecl *FD =
      findKernelDecl(In.TU.AST->getASTContext(), Name);
  if (!FD || !FD->getBody())
    return {};
  const auto *CS = llvm::cast<clang::CompoundStmt>(FD->getBody());
  return {CS->body_begin(), CS->body_end()};
}

std::string spanText(const Input &In, const std::optional<SourceSpan> &S) {
  if (!S)
    return "<none>";
  return In.Code.substr(S->Begin.Offset, S->End.Offset - S->Begin.Offset);
}

TEST(TransformSupportTest, StmtSpanRefusesMacrosLooseStmtSpanOnlyAtTheEnds) {
  Input In(R"(#define TWICE(v) (2 * (v))
__global__ void k(int n, float *y) {
  y[0] = TWICE(y[1]) + 1.0f;
  y[1] = 3.0f;
}
)");
  ASSERT_TRUE(In.Ctx);
  auto Body = bodyOf(In, "k");
  ASSERT_EQ(Body.size(), 2u);
  EXPECT_EQ(spanText(In, stmtSpan(*In.Ctx, Body[0])), "<none>");
  EXPECT_EQ(spanText(In, looseStmtSpan(*In.Ctx, Body[0])),
            "y[0] = TWICE(y[1]) + 1.0f;");
  EXPECT_EQ(spanText(In, looseExprSpan(*In.Ctx, Body[0])),
            "y[0] = TWICE(y[1]) + 1.0f");
  // Without macros the two agree, the `;` included.
  EXPECT_EQ(spanText(In, stmtSpan(*In.Ctx, Body[1])), "y[1] = 3.0f;");
  EXPECT_EQ(spanText(In, looseStmtSpan(*In.Ctx, Body[1])), "y[1] = 3.0f;");
}

TEST(TransformSupportTest, ConstantMacroTextIsWhatTheCompilerSaw) {
  Input In(R"(#define N 3000
#define HALF 1500 + 1
#define AT(i) y[(i)]
#define INF __builtin_huge_valf()
__device__ float next_value();
#define RND next_value()
__global__ void k(int n, float *y) {
  int a = (N + 255) / 256;
  int b = HALF;
  int c = N;
  int d = HALF / 4;
  y[0] = AT(n) + 1.0f;
  int e = n * N;
  float f = -INF;
  float g = RND;
}
)");
  ASSERT_TRUE(In.Ctx);
  auto Body = bodyOf(In, "k");
  ASSERT_EQ(Body.size(), 8u);
  auto Init = [&](size_t I) {
    return llvm::cast<clang::VarDecl>(
               llvm::cast<clang::DeclStmt>(Body[I])->getSingleDecl())
        ->getInit();
  };
  // Constants inside, at the ends, or alone: the text as written.
  EXPECT_EQ(constantMacroText(*In.Ctx, Init(0)), "(N + 255) / 256");
  EXPECT_EQ(exprText(*In.Ctx, Init(0)), "(N + 255) / 256");
  EXPECT_EQ(constantMacroText(*In.Ctx, Init(5)), "n * N");
  EXPECT_EQ(looseExprText(*In.Ctx, Init(5)), "n * N");
  EXPECT_EQ(constantMacroText(*In.Ctx, Init(2)), "N");
  // A macro of several tokens alone stays one value in other text.
  EXPECT_EQ(constantMacroText(*In.Ctx, Init(1)), "(HALF)");
  EXPECT_EQ(spanText(In, constantMacroSpan(*In.Ctx, Init(1))), "HALF");
  // `HALF / 4` is `1500 + (1 / 4)`: its `1 / 4` starts inside the
  // expansion, so neither it nor the whole is read as written.
  const auto *Sum =
      llvm::cast<clang::BinaryOperator>(Init(3)->IgnoreImpCasts());
  EXPECT_EQ(constantMacroText(*In.Ctx, Sum->getRHS()), "");
  EXPECT_EQ(constantMacroText(*In.Ctx, Init(3)), "");
  // A constant the compiler evaluates through a builtin is one; a call of
  // another function is not.
  EXPECT_EQ(constantMacroText(*In.Ctx, Init(6)), "-INF");
  EXPECT_EQ(constantMacroText(*In.Ctx, Init(7)), "");
  // A macro that reads a variable is no constant.
  EXPECT_EQ(spanText(In, stmtSpan(*In.Ctx, Body[4])), "<none>");
  EXPECT_EQ(spanText(In, constantMacroSpan(*In.Ctx, Body[4])), "<none>");
}

TEST(TransformSupportTest, ConstantMacrosAreReadInsideMacroArguments) {
  Input In(R"(#define N 3000
#define ID(x) x
#define ADD(x, y) x + y
#define TWICE(x) ((x) + (x))
__global__ void k(int n, float *y) {
  int a = ID((N + 255) / 256);
  int b = ADD(n, N);
  int c = TWICE(N * 2);
}
)");
  ASSERT_TRUE(In.Ctx);
  auto Body = bodyOf(In, "k");
  ASSERT_EQ(Body.size(), 3u);
  auto Init = [&](size_t I) {
    return llvm::cast<clang::VarDecl>(
               llvm::cast<clang::DeclStmt>(Body[I])->getSingleDecl())
        ->getInit()
        ->IgnoreImpCasts();
  };
  // An argument as the invocation writes it, the constant macro in it
  // included.
  EXPECT_EQ(constantMacroText(*In.Ctx, Init(0)), "(N + 255) / 256");
  // `n + N` is made of two arguments: the text between their ends is
  // `n, N`, not the expression. Each argument alone is read.
  const auto *Sum = llvm::cast<clang::BinaryOperator>(Init(1));
  EXPECT_EQ(constantMacroText(*In.Ctx, Sum), "");
  EXPECT_EQ(constantMacroText(*In.Ctx, Sum->getLHS()->IgnoreImpCasts()), "n");
  EXPECT_EQ(constantMacroText(*In.Ctx, Sum->getRHS()), "N");
  // One use of an argument the body uses twice reads as written; the
  // whole expansion, constant, is the invocation; a part of the body that
  // starts inside it is not read.
  const auto *Twice = llvm::cast<clang::BinaryOperator>(
      llvm::cast<clang::ParenExpr>(Init(2))->getSubExpr());
  const auto *Use = llvm::cast<clang::ParenExpr>(Twice->getLHS());
  EXPECT_EQ(constantMacroText(*In.Ctx, Use->getSubExpr()), "N * 2");
  EXPECT_EQ(constantMacroText(*In.Ctx, Use), "");
  EXPECT_EQ(spanText(In, constantMacroSpan(*In.Ctx, Init(2))), "TWICE(N * 2)");
}

TEST(TransformSupportTest, MacroBodyTextReadsTheDefinition) {
  Input In(R"(#define N 3000
#define THREADS 256
#define BLOCKS ((N + THREADS - 1) / THREADS)
#define OF(n) (((n) + THREADS - 1) / THREADS)
#define SPLIT ((N + \
  THREADS - 1) / THREADS)
__global__ void k(int n, float *y) {
  int a = BLOCKS;
  int b = OF(n);
  int c = SPLIT;
}
)");
  ASSERT_TRUE(In.Ctx);
  auto Body = bodyOf(In, "k");
  ASSERT_EQ(Body.size(), 3u);
  // The numerator of `((E + D - 1) / D)`: `E + D - 1`'s left `E + D`.
  auto Sum = [&](size_t I) {
    const clang::Expr *E =
        llvm::cast<clang::VarDecl>(
            llvm::cast<clang::DeclStmt>(Body[I])->getSingleDecl())
            ->getInit()
            ->IgnoreParenImpCasts();
    const auto *Div = llvm::cast<clang::BinaryOperator>(E);
    const auto *Less =
        llvm::cast<clang::BinaryOperator>(Div->getLHS()->IgnoreParenImpCasts());
    return llvm::cast<clang::BinaryOperator>(Less->getLHS());
  };
  // As the definition writes it, the macros it invokes whole.
  EXPECT_EQ(macroBodyText(*In.Ctx, Sum(0)), "N + THREADS");
  EXPECT_EQ(macroBodyText(*In.Ctx, Sum(0)->getLHS()), "N");
  // A parameter's token would need the argument: not read from the body.
  EXPECT_EQ(macroBodyText(*In.Ctx, Sum(1)), "");
  // A line continuation inside: not plain text.
  EXPECT_EQ(macroBodyText(*In.Ctx, Sum(2)), "");
  EXPECT_EQ(macroBodyText(*In.Ctx, Sum(2)->getLHS()), "N");
}

TEST(TransformSupportTest, OnlyConstantMacrosAcceptsWholeConstantExpansions) {
  Input In(R"(#define D 32
#define SQ (D * D)
#define AT(i) y[(i) + 1]
#define PLUS2 2 +
#define SUM34 3 + 4
#define TID threadIdx.x
__global__ void k(int n, float *y) {
  y[n * D + D] = SQ;
  y[D * D] = 1.0f;
  y[0] = AT(n);
  y[1] = PLUS2 n;
  y[TID] = 0.0f;
  y[2] = D;
  y[3] = n * SUM34;
}
)");
  ASSERT_TRUE(In.Ctx);
  auto Body = bodyOf(In, "k");
  ASSERT_EQ(Body.size(), 7u);
  const clang::ASTContext &AST = In.TU.AST->getASTContext();
  // Constants, alone, in operands, or at both ends of an expression.
  EXPECT_TRUE(onlyConstantMacros(Body[0], AST));
  EXPECT_TRUE(onlyConstantMacros(Body[1], AST));
  EXPECT_TRUE(onlyConstantMacros(Body[5], AST));
  // The left part of an expression that names nothing: the text as
  // written still reads the same.
  EXPECT_TRUE(onlyConstantMacros(Body[3], AST));
  // A macro that names a variable, one that reads the thread index, one
  // whose expansion the surrounding expression splits (n * 3 + 4).
  EXPECT_FALSE(onlyConstantMacros(Body[2], AST));
  EXPECT_FALSE(onlyConstantMacros(Body[4], AST));
  EXPECT_FALSE(onlyConstantMacros(Body[6], AST));
  // containsMacro() refuses all of them.
  for (const clang::Stmt *S : Body)
    EXPECT_TRUE(containsMacro(S));
}

TEST(TransformSupportTest, LinearIndexThroughHelpersOnlyWhenAsked) {
  Input In(
      R"(__device__ int gid() { return blockIdx.x * blockDim.x + threadIdx.x; }
__global__ void k(int n, float *y) {
  int i = gid();
  int j = threadIdx.y + blockDim.y * blockIdx.y;
  y[i + j] = 0;
}
)");
  ASSERT_TRUE(In.Ctx);
  auto Body = bodyOf(In, "k");
  ASSERT_EQ(Body.size(), 3u);
  auto Init = [&](int I) {
    const auto *DS = llvm::cast<clang::DeclStmt>(Body[I]);
    return llvm::cast<clang::VarDecl>(DS->getSingleDecl())->getInit();
  };
  EXPECT_EQ(linearIndexDim(Init(0)), std::nullopt);
  EXPECT_EQ(linearIndexDim(Init(0), /*ThroughHelpers=*/true), 'x');
  EXPECT_EQ(linearIndexDim(Init(1)), 'y');
  EXPECT_EQ(linearIndexDim(Init(1), /*ThroughHelpers=*/true), 'y');
}

TEST(TransformSupportTest, FoldLaunchIntegerFoldsConstantsAndAsksTheLeaf) {
  Input In(R"(#define BLK 256
__global__ void k(int n, float *y) {
  int a = BLK;
  int b = a * 2 + 1 - (a - 3);
  int w = 3;
  w += 1;
  int c = w + 1;
  long d = (long)a * 2;
  int e = a / 2;
  int f = BLK * 3 / 4 + n;
  int g = BLK * 3 / 4;
  int v0 = 1, v1 = v0, v2 = v1, v3 = v2, v4 = v3, v5 = v4, v6 = v5;
  int v7 = v6, v8 = v7, d7 = v7, d8 = v8;
}
)");
  ASSERT_TRUE(In.Ctx);
  const clang::ASTContext &AST = In.TU.AST->getASTContext();
  std::map<std::string, const clang::VarDecl *> V;
  for (const clang::Stmt *S : bodyOf(In, "k"))
    if (const auto *DS = llvm::dyn_cast<clang::DeclStmt>(S))
      for (const clang::Decl *D : DS->decls())
        if (const auto *VD = llvm::dyn_cast<clang::VarDecl>(D))
          V[VD->getNameAsString()] = VD;
  // A leaf that follows variables never written to their initializers; one
  // that also looks through explicit casts; one that knows nothing.
  auto Stable = [](const clang::Expr *X,
                   LaunchFoldNext Next) -> std::optional<int64_t> {
    const auto *D = llvm::dyn_cast_or_null<clang::VarDecl>(referencedDecl(X));
    if (!D || !D->hasInit() || !stableVar(D))
      return std::nullopt;
    return Next(D->getInit());
  };
  auto Casts = [&](const clang::Expr *X,
                   LaunchFoldNext Next) -> std::optional<int64_t> {
    if (const auto *C = llvm::dyn_cast<clang::ExplicitCastExpr>(X))
      return Next(C->getSubExpr());
    return Stable(X, Next);
  };
  auto None = [](const clang::Expr *,
                 LaunchFoldNext) -> std::optional<int64_t> {
    return std::nullopt;
  };
  auto Fold = [&](const char *Name, LaunchFoldLeaf Leaf) {
    return foldLaunchInteger(V.at(Name)->getInit(), AST, Leaf);
  };
  // + - * over the leaf's values; constants (macros, `/` of constants)
  // without asking it.
  EXPECT_EQ(Fold("b", Stable), 260);
  EXPECT_EQ(Fold("b", None), std::nullopt);
  EXPECT_EQ(Fold("g", None), 192);
  EXPECT_EQ(Fold("a", None), 256);
  // w is written after its initializer; n is unknown; `/` of a variable is
  // not folded.
  EXPECT_EQ(Fold("c", Stable), std::nullopt);
  EXPECT_EQ(Fold("f", Stable), std::nullopt);
  EXPECT_EQ(Fold("e", Stable), std::nullopt);
  // An explicit cast is the leaf's to look through.
  EXPECT_EQ(Fold("d", Stable), std::nullopt);
  EXPECT_EQ(Fold("d", Casts), 512);
  // Eight steps past the expression asked about (d7's v7 to v0's 1), and
  // no more.
  EXPECT_EQ(Fold("d7", Stable), 1);
  EXPECT_EQ(Fold("d8", Stable), std::nullopt);
}

TEST(TransformSupportTest, SplitJoinedKeepsTermsAsWritten) {
  Input In(R"(__global__ void k(int n, int m, float *y) {
  int x = threadIdx.x;
  if (x > 0 && (x < n - 1) && (n > 2 || m > 2) && ((m > 1 && n > 1)))
    y[x] = 1.0f;
  if (x >= n || (m < 1)) return;
  if (x < n) y[x] = 2.0f;
}
)");
  ASSERT_TRUE(In.Ctx);
  auto Body = bodyOf(In, "k");
  ASSERT_EQ(Body.size(), 4u);
  auto Terms = [&](const clang::Stmt *S, clang::BinaryOperatorKind Join) {
    std::vector<std::string> Out;
    for (const clang::Expr *T :
         splitJoined(llvm::cast<clang::IfStmt>(S)->getCond(), Join))
      Out.push_back(exprText(*In.Ctx, T));
    return Out;
  };
  // Left to right; a parenthesized chain of the same operator is split
  // through its parentheses, one of the other operator stays one term.
  EXPECT_EQ(Terms(Body[1], clang::BO_LAnd),
            (std::vector<std::string>{"x > 0", "(x < n - 1)",
                                      "(n > 2 || m > 2)", "m > 1", "n > 1"}));
  EXPECT_EQ(Terms(Body[2], clang::BO_LOr),
            (std::vector<std::string>{"x >= n", "(m < 1)"}));
  // Split by the other operator, the condition is one term.
  EXPECT_EQ(Terms(Body[2], clang::BO_LAnd),
            (std::vector<std::string>{"x >= n || (m < 1)"}));
  EXPECT_EQ(Terms(Body[3], clang::BO_LAnd),
            (std::vector<std::string>{"x < n"}));
}

TEST(TransformSupportTest, MatchCeilDivReadsSelectsAndHelpers) {
  Input In(
      R"(int iDivUp(int a, int b) { return (a % b != 0) ? (a / b + 1) : (a / b); }
unsigned ceil_div(unsigned a, unsigned b) { return (a + b - 1) / b; }
int floor_div(int a, int b) { return a / b; }
int narrow(short a, int b) { return (a + b - 1) / b; }
void host(int n, long long big) {
  int s0 = n % 128 != 0 ? n / 128 + 1 : n / 128;
  int s1 = n % 128 ? 1 + n / 128 : n / 128;
  int s2 = n % 128 == 0 ? n / 128 : n / 128 + 1;
  int s3 = !(n % 128) ? n / 128 : n / 128 + 1;
  int h0 = iDivUp(n, 128);
  int h1 = ceil_div(n, 128);
  int q0 = n % 128 == 0 ? n / 128 + 1 : n / 128;
  int q1 = n % 64 ? n / 128 + 1 : n / 128;
  int q2 = n % 128 ? n / 128 + 2 : n / 128;
  int q3 = floor_div(n, 128);
  int q4 = narrow(n, 128);
  int q5 = iDivUp(n++, 128);
  int q6 = iDivUp((int)big, 128);
}
)");
  ASSERT_TRUE(In.Ctx);
  const clang::ASTContext &AST = In.TU.AST->getASTContext();
  const clang::FunctionDecl *Host = nullptr;
  for (const clang::Decl *D : AST.getTranslationUnitDecl()->decls())
    if (const auto *FD = llvm::dyn_cast<clang::FunctionDecl>(D);
        FD && FD->getName() == "host")
      Host = FD;
  ASSERT_TRUE(Host && Host->getBody());
  std::map<std::string, std::optional<CeilDiv>> C;
  for (const clang::Stmt *S : Host->getBody()->children())
    if (const auto *DS = llvm::dyn_cast<clang::DeclStmt>(S))
      for (const clang::Decl *D : DS->decls())
        if (const auto *VD = llvm::dyn_cast<clang::VarDecl>(D))
          C[VD->getNameAsString()] = matchCeilDivOrHelper(VD->getInit(), AST);
  // The samples' iDivUp spelled in place (either test, either order of the
  // `+ 1`) and called; a helper's numerator is the call's argument.
  for (const char *Name : {"s0", "s1", "s2", "s3", "h0", "h1"}) {
    SCOPED_TRACE(Name);
    ASSERT_TRUE(C[Name]);
    EXPECT_EQ(C[Name]->Divisor, 128);
    EXPECT_EQ(exprText(*In.Ctx, C[Name]->Numerator), "n");
  }
  // The test inverted, another divisor in the test, `+ 2`, a floor
  // division, a parameter narrower than the argument, an argument with a
  // side effect, a 64-bit value cast down (the helper's `a` is as wide as
  // the cast, so this one reads: the cast is the numerator).
  for (const char *Name : {"q0", "q1", "q2", "q3", "q4", "q5"}) {
    SCOPED_TRACE(Name);
    EXPECT_FALSE(C[Name]);
  }
  ASSERT_TRUE(C["q6"]);
  EXPECT_EQ(exprText(*In.Ctx, C["q6"]->Numerator), "(int)big");
}

TEST(TransformSupportTest,
     MatchCeilDivReadsTheRemainderFormsAndExactQuotients) {
  Input In(R"(constexpr int H = 1024, M = 1001;
__global__ void k(int n, int m, float *y) {
  int a0 = (n + 127) / 128;
  int a1 = n / 128 + (n % 128 != 0);
  int a2 = (n % 128 > 0) + n / 128;
  int a3 = n / 128 + (n % 128 ? 1 : 0);
  int a4 = n / 128 + !!(n % 128);
  int a5 = n / 128 + (0 != n % 128);
  int a6 = H / 8 + (H % 8 != 0);
  int a7 = H / 8;
  int r0 = n / 128 + (m % 128 != 0);
  int r1 = n / 128 + (n % 64 != 0);
  int r2 = n++ / 128 + (n++ % 128 != 0);
  int r3 = (n - 1) / 128 + 1;
  int r4 = n / 128 + (n % 128 == 0);
  int r5 = M / 8;
  int r6 = n / 128;
}
)");
  ASSERT_TRUE(In.Ctx);
  const clang::ASTContext &AST = In.TU.AST->getASTContext();
  auto Value = [&](const clang::Expr *X) {
    return intValue(X->IgnoreParenImpCasts(), AST);
  };
  std::map<std::string, std::optional<CeilDiv>> C;
  for (const clang::Stmt *S : bodyOf(In, "k"))
    if (const auto *DS = llvm::dyn_cast<clang::DeclStmt>(S))
      for (const clang::Decl *D : DS->decls())
        if (const auto *VD = llvm::dyn_cast<clang::VarDecl>(D))
          C[VD->getNameAsString()] = matchCeilDiv(VD->getInit(), Value);
  for (const char *Name : {"a0", "a1", "a2", "a3", "a4", "a5"}) {
    SCOPED_TRACE(Name);
    ASSERT_TRUE(C[Name]);
    EXPECT_EQ(C[Name]->Divisor, 128);
    EXPECT_EQ(exprText(*In.Ctx, C[Name]->Numerator), "n");
  }
  // A constant numerator: the remainder form, and an exact quotient.
  for (const char *Name : {"a6", "a7"}) {
    SCOPED_TRACE(Name);
    ASSERT_TRUE(C[Name]);
    EXPECT_EQ(C[Name]->Divisor, 8);
    EXPECT_EQ(exprText(*In.Ctx, C[Name]->Numerator), "H");
  }
  // Different numerators or divisors, a numerator with side effects (read
  // twice as written, once rewritten), `(n - 1) / B + 1` (one block for
  // n = 0), the remainder's test inverted, a constant that is not a
  // multiple, and a floor division of an unknown value.
  for (const char *Name : {"r0", "r1", "r2", "r3", "r4", "r5", "r6"}) {
    SCOPED_TRACE(Name);
    EXPECT_FALSE(C[Name]);
  }
}

TEST(TransformSupportTest, TextHelpers) {
  EXPECT_EQ(freshName("int i, i1; float i2x;", "i"), "i2");
  EXPECT_EQ(freshName("int tile_;", "tile"), "tile");
  EXPECT_EQ(parenthesize("n"), "n");
  EXPECT_EQ(parenthesize("a + b"), "(a + b)");
  EXPECT_EQ(parenthesize("(a + b)"), "(a + b)");
  EXPECT_EQ(parenthesize("(a) + (b)"), "((a) + (b))");
  EXPECT_EQ(indentLines("a\nb\n\nc", "  "), "a\n  b\n\n  c");
  EXPECT_EQ(reindent("a\n    b", -2), "a\n  b");
  // Insertions at one offset keep their order.
  EXPECT_EQ(
      spliceText("0123456789", 2, 8, {{5, 0, "B"}, {3, 1, "x"}, {5, 0, "C"}}),
      "2x4BC567");
  EXPECT_EQ(cappedGrid("4096", 1056), "1056");
  EXPECT_EQ(cappedGrid("(n + 255) / 256", 1056),
            "((n + 255) / 256) < 1056 ? ((n + 255) / 256) : 1056");
}

TEST(TransformSupportTest, ThreadPerItemShapes) {
  Input In(
      R"(__device__ int gid() { return blockIdx.x * blockDim.x + threadIdx.x; }
__global__ void map(int n, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = 2 * y[i];
}
__global__ void helper(int n, float *y) {
  int i = gid();
  if (i >= n)
    return;
  y[i] = 2 * y[i];
}
)");
  ASSERT_TRUE(In.Ctx);
  clang::ASTContext &AST = In.TU.AST->getASTContext();
  std::string Why;
  auto M = matchMapPattern(*In.Ctx, findKernelDecl(AST, "map"), Why);
  ASSERT_TRUE(M) << Why;
  EXPECT_EQ(M->IndexName, "i");
  EXPECT_EQ(M->BoundText, "n");
  EXPECT_FALSE(M->EarlyReturn);
  // MapPattern wants the index written out; ThreadItem follows the helper.
  EXPECT_FALSE(matchMapPattern(*In.Ctx, findKernelDecl(AST, "helper"), Why));
  auto T = matchThreadItem(findKernelDecl(AST, "helper"), Why);
  ASSERT_TRUE(T) << Why;
  EXPECT_TRUE(T->EarlyReturn);
  EXPECT_EQ(T->Dim, 'x');
  EXPECT_EQ(T->Body.size(), 1u);
}

// ThreadItemOptions::ByMeaning reads the index as a sum of products of
// coordinates: any order and grouping, casts that narrow nothing, helpers,
// a 2D grid counted row by row, and a template's index in every
// instantiation. Without it, the written-out forms only.
TEST(TransformSupportTest, ThreadIndexByMeaning) {
  Input In(
      R"(__device__ unsigned gid() { return threadIdx.x + blockDim.x * blockIdx.x; }
template <typename I>
__global__ void grid2d(I n, float *y) {
  const I i = (I)(blockIdx.x * blockDim.x + threadIdx.x + blockIdx.y * gridDim.x * blockDim.x);
  if (i < n)
    y[i] = 0;
}
__global__ void helper(int n, float *y) {
  size_t i = (size_t)gid();
  if (i >= n)
    return;
  y[i] = 0;
}
__global__ void wrong(int n, float *y) {
  int i = (blockIdx.y * gridDim.y + blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = 0;
}
__global__ void narrow(int n, float *y) {
  int i = (short)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = 0;
}
void run(int n, float *y) {
  grid2d<int><<<dim3(2, 2), 32>>>(n, y);
  grid2d<long><<<dim3(2, 2), 32>>>(n, y);
}
)");
  ASSERT_TRUE(In.Ctx);
  clang::ASTContext &AST = In.TU.AST->getASTContext();
  ThreadItemOptions Meaning;
  Meaning.ByMeaning = true;
  std::string Why;
  const clang::FunctionDecl *Grid = findKernelDecl(AST, "grid2d");
  EXPECT_FALSE(matchThreadItem(Grid, Why));
  auto T = matchThreadItem(Grid, Why, Meaning);
  ASSERT_TRUE(T) << Why;
  EXPECT_TRUE(T->GridRows);
  EXPECT_EQ(T->Index->getName(), "i");
  T = matchThreadItem(findKernelDecl(AST, "helper"), Why, Meaning);
  ASSERT_TRUE(T) << Why;
  EXPECT_FALSE(T->GridRows);
  auto Init = [&](const char *K) {
    const auto *Body =
        llvm::cast<clang::CompoundStmt>(findKernelDecl(AST, K)->getBody());
    const auto *DS = llvm::cast<clang::DeclStmt>(Body->body_front());
    return llvm::cast<clang::VarDecl>(DS->getSingleDecl())->getInit();
  };
  auto L = linearIndexByMeaning(Init("helper"), AST);
  ASSERT_TRUE(L);
  EXPECT_EQ(L->Dim, 'x');
  EXPECT_FALSE(linearIndexByMeaning(Init("wrong"), AST));
  EXPECT_FALSE(linearIndexByMeaning(Init("narrow"), AST));
  EXPECT_FALSE(matchThreadItem(findKernelDecl(AST, "wrong"), Why, Meaning));
  EXPECT_NE(Why.find("at least 32 bits"), std::string::npos) << Why;
}

// linearIndexByMeaning with a callback reads a variable as the expression
// it stands for (here: a local's initializer), as far as the callback says.
TEST(TransformSupportTest, ThreadIndexByMeaningThroughLocals) {
  Input In(
      R"(__device__ unsigned rows() { return blockIdx.y * gridDim.x + blockIdx.x; }
__global__ void k(float *y) {
  unsigned lane = threadIdx.x;
  unsigned next = threadIdx.x + 1;
  unsigned i = rows() * blockDim.x + lane;
  unsigned j = rows() * blockDim.x + next;
  y[i] = y[j];
}
)");
  ASSERT_TRUE(In.Ctx);
  clang::ASTContext &AST = In.TU.AST->getASTContext();
  const auto *Body =
      llvm::cast<clang::CompoundStmt>(findKernelDecl(AST, "k")->getBody());
  auto Init = [&](unsigned N) {
    const auto *DS = llvm::cast<clang::DeclStmt>(Body->body_begin()[N]);
    return llvm::cast<clang::VarDecl>(DS->getSingleDecl())->getInit();
  };
  auto Follow = [](const clang::VarDecl *V) -> const clang::Expr * {
    return V->getInit();
  };
  auto NoLocals = [](const clang::VarDecl *) -> const clang::Expr * {
    return nullptr;
  };
  // Without the callback the local is opaque.
  EXPECT_FALSE(linearIndexByMeaning(Init(2), AST));
  EXPECT_FALSE(linearIndexByMeaning(Init(2), AST, NoLocals));
  auto L = linearIndexByMeaning(Init(2), AST, Follow);
  ASSERT_TRUE(L);
  EXPECT_EQ(L->Dim, 'x');
  EXPECT_TRUE(L->GridRows);
  // What the local stands for counts: the next thread's index is not it.
  EXPECT_FALSE(linearIndexByMeaning(Init(3), AST, Follow));
}

} // namespace

TEST(TransformSupportTest, TemplateInstantiationsGiveTheDependentTypes) {
  Input In(R"(namespace ns {
template <typename T>
__global__ void scale(int n, const T *x, T *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = 2 * x[i];
}
template <typename T>
__global__ void never(T *y) { y[0] = 0; }
template <typename T>
__global__ void special(T *y) { y[0] = 0; }
template <>
__global__ void special<int>(int *y) { y[0] = 1; }
} // namespace ns
__global__ void plain(float *y) { y[0] = 0; }
void run(int n, float *xf, float *yf, double *xd, double *yd, int *yi) {
  ns::scale<float><<<1, 32>>>(n, xf, yf);
  ns::scale<double><<<1, 32>>>(n, xd, yd);
  ns::scale<float><<<2, 32>>>(n, xf, yf);
  ns::special<int><<<1, 1>>>(yi);
}
)");
  ASSERT_TRUE(In.Ctx);
  clang::ASTContext &AST = In.TU.AST->getASTContext();
  const clang::FunctionDecl *Scale = findKernelDecl(AST, "ns::scale");
  ASSERT_TRUE(Scale);
  auto Insts = templateInstantiations(Scale);
  // One per distinct set of arguments, in the order clang made them.
  ASSERT_EQ(Insts.size(), 2u);
  EXPECT_EQ(instantiationName(Insts[0]), "ns::scale<float>");
  EXPECT_EQ(instantiationName(Insts[1]), "ns::scale<double>");
  const clang::ParmVarDecl *X = Scale->getParamDecl(1);
  ASSERT_TRUE(X->getType()->getPointeeType()->isDependentType());
  const clang::ParmVarDecl *XF = instantiatedParam(X, Insts[0]);
  ASSERT_TRUE(XF);
  EXPECT_EQ(XF->getName(), "x");
  EXPECT_EQ(XF->getType().getAsString(AST.getPrintingPolicy()),
            "const float *");
  EXPECT_EQ(instantiatedParam(X, Insts[1])
                ->getType()
                .getAsString(AST.getPrintingPolicy()),
            "const double *");
  // Never instantiated, or not a template: nothing to read the types from.
  EXPECT_TRUE(templateInstantiations(findKernelDecl(AST, "ns::never")).empty());
  EXPECT_TRUE(templateInstantiations(findKernelDecl(AST, "plain")).empty());
  // An explicit specialization has its own body: it is no instantiation.
  EXPECT_TRUE(
      templateInstantiations(findKernelDecl(AST, "ns::special")).empty());
}

TEST(TransformSupportTest, LaunchMacrosWrittenOutAsTheirExpansion) {
  Input In(
      R"(#define LAUNCH_N(k, n, ...) k<<<((n) + 255) / 256, 256>>>(__VA_ARGS__)
#define LAUNCH(k, g, b, ...) k<<<(g), (b)>>>(__VA_ARGS__)
#define LOGGED(k, n, ...) do { count += n; k<<<n, 1>>>(__VA_ARGS__); } while (0)
#define NAMED(k, n) k<<<n, 1>>>(#k)
int count;
__global__ void a(float *x, int n) { x[0] = n; }
__global__ void b(float *x, int n) { x[0] = n; }
__global__ void c(const char *s) {}
__global__ void d(float *x, int n) { x[0] = n; }
void run(float *x, int n) {
  LAUNCH_N(a, n,
           x, n);
  LAUNCH(a, (n + 127) / 128, 128, x, n);
  LOGGED(b, n, x, n);
  NAMED(c, n);
  LAUNCH(d, n, 1, x, n);
}
)");
  ASSERT_TRUE(In.Ctx);
  auto WriteOut = [&](llvm::StringRef Kernel, std::string &WhyNot,
                      std::string &Written) -> std::optional<std::string> {
    const KernelInfo *K = In.Model.findKernel(Kernel.str());
    EXPECT_TRUE(K);
    if (!K)
      return std::nullopt;
    return writeOutLaunchMacros(*In.Ctx, *K, WhyNot, &Written);
  };
  std::string WhyNot, Written;
  // The body with the arguments as written, the variadic ones together; a
  // launch whose invocation spells grid and block in place is left alone.
  auto A = WriteOut("a", WhyNot, Written);
  ASSERT_TRUE(A) << WhyNot;
  EXPECT_NE(A->find("  a<<<((n) + 255) / 256, 256>>>(x, n);\n  LAUNCH(a, "),
            std::string::npos)
      << *A;
  EXPECT_EQ(Written, "the launch macro 'LAUNCH_N' at 12:3 written out as the "
                     "launch it expands to");
  // A body that does more than launch, one that stringizes, and launches
  // that are all in place are not written out.
  EXPECT_FALSE(WriteOut("b", WhyNot, Written));
  EXPECT_EQ(WhyNot, "'LOGGED' expands to more than the launch of b/launch0, "
                    "so it is not written out");
  EXPECT_FALSE(WriteOut("c", WhyNot, Written));
  EXPECT_NE(WhyNot.find("'NAMED' stringizes or pastes"), std::string::npos)
      << WhyNot;
  EXPECT_FALSE(WriteOut("d", WhyNot, Written));
  EXPECT_NE(WhyNot.find("no launch of 'd'"), std::string::npos) << WhyNot;
  // For a transform that inserts statements before each launch, a macro
  // that spells them in place is written out too.
  auto D = writeOutLaunchMacros(*In.Ctx, *In.Model.findKernel("d"), WhyNot,
                                &Written, "", /*InPlaceToo=*/true);
  ASSERT_TRUE(D) << WhyNot;
  EXPECT_NE(D->find("  d<<<(n), (1)>>>(x, n);\n}"), std::string::npos) << *D;
  // Only the launch named, when one is.
  auto A0 = writeOutLaunchMacros(*In.Ctx, *In.Model.findKernel("a"), WhyNot,
                                 &Written, "a/launch1", /*InPlaceToo=*/true);
  ASSERT_TRUE(A0) << WhyNot;
  EXPECT_NE(A0->find("  LAUNCH_N(a, n,\n"), std::string::npos) << *A0;
  EXPECT_NE(A0->find("  a<<<((n + 127) / 128), (128)>>>(x, n);"),
            std::string::npos)
      << *A0;
}
