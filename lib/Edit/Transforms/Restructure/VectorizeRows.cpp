//===- VectorizeRows.cpp - vectorize on 2D maps along matrix rows ---------===//
//
// A 2D map along the rows of row-major matrices
//   int c = blockIdx.x * blockDim.x + threadIdx.x;
//   int r = blockIdx.y * blockDim.y + threadIdx.y;
//   if (r >= rows || c >= cols) return;
//   const float *src = x + (size_t)r * cols;  float *dst = out + r * cols;
//   dst[c] = f(src[c]);
// (every access p[c] through a row pointer with the same row length) gives
// each thread W consecutive columns: c = (...) * W, one vector per row
// pointer when the row length and the column bound are multiples of W and
// the matrices aligned, the W columns one by one (up to the bound)
// otherwise. Launch grids get their x dimension divided by W; each must be
// shown to cover the column bound (gridCoverageProblem()), since the
// divided grid may reach columns past an original grid that stopped short.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../../Patterns/ThreadPerItem.h"
#include "../TransformSupport.h"
#include "VectorizeInternal.h"
#include "optiml/Frontend/ASTUtil.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/Stmt.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include <map>

using namespace clang;
using namespace llvm;

namespace optiml {
namespace {

/// `v < n` conjuncts (`v >= n` disjuncts when \p Negated) bounding
/// \p M's column and row.
bool rowBounds(const Expr *C, bool Negated, RowMap &M) {
  const auto *B = dyn_cast<BinaryOperator>(C->IgnoreParenImpCasts());
  if (!B)
    return false;
  if (B->getOpcode() == (Negated ? BO_LOr : BO_LAnd))
    return rowBounds(B->getLHS(), Negated, M) &&
           rowBounds(B->getRHS(), Negated, M);
  const ValueDecl *V = nullptr;
  const Expr *N = nullptr;
  if (B->getOpcode() == (Negated ? BO_GE : BO_LT))
    V = referencedDecl(B->getLHS()), N = B->getRHS();
  else if (B->getOpcode() == (Negated ? BO_LE : BO_GT))
    V = referencedDecl(B->getRHS()), N = B->getLHS();
  const Expr *&Slot = V == M.Col ? M.ColBound : M.RowBound;
  if (!N || (V != M.Col && V != M.Row) || Slot)
    return false;
  Slot = N;
  return true;
}

/// The matrix of a row pointer's initializer `matrix + r * stride` (either
/// order, through casts), with \p Stride set; null otherwise.
const ParmVarDecl *rowPointerMatrix(const Expr *Init, const VarDecl *Row,
                                    const Expr *&Stride) {
  const auto *Add = dyn_cast<BinaryOperator>(Init->IgnoreParenImpCasts());
  if (!Add || Add->getOpcode() != BO_Add)
    return nullptr;
  for (int Swap = 0; Swap < 2; ++Swap) {
    const auto *Matrix = dyn_cast_or_null<ParmVarDecl>(
        referencedDecl(Swap ? Add->getRHS() : Add->getLHS()));
    const auto *Mul = dyn_cast<BinaryOperator>(
        stripCasts(Swap ? Add->getLHS() : Add->getRHS()));
    if (!Matrix || !Matrix->getType()->isPointerType() || !Mul ||
        Mul->getOpcode() != BO_Mul)
      continue;
    for (int M = 0; M < 2; ++M)
      if (declOf(M ? Mul->getRHS() : Mul->getLHS()) == Row) {
        Stride = M ? Mul->getLHS() : Mul->getRHS();
        return Matrix;
      }
  }
  return nullptr;
}

/// Whether two row lengths are the same: one parameter, or equal constants.
bool sameStride(const Expr *A, const Expr *B, const ASTContext &AST) {
  const ValueDecl *DA = declOf(A), *DB = declOf(B);
  if (isa_and_nonnull<ParmVarDecl>(DA) || isa_and_nonnull<ParmVarDecl>(DB))
    return DA == DB;
  auto VA = integerConstantValue(stripCasts(A), AST);
  return VA && VA == integerConstantValue(stripCasts(B), AST);
}

/// Records the accesses and column uses of a 2D map's body: every array
/// access must be p[c] through a row pointer.
struct RowWalker : AccessWalker<RowWalker> {
  const EditContext &Ctx;
  RowMap &M;
  std::vector<RowUse> *Uses = nullptr;
  std::string Problem;
  RowWalker(const EditContext &Ctx, RowMap &M) : Ctx(Ctx), M(M) {}
  bool fail(const Twine &Why) {
    if (Problem.empty())
      Problem = Why.str();
    return false;
  }
  bool access(ArraySubscriptExpr *A, bool Read, bool Write, bool Plain) {
    const auto *V = dyn_cast_or_null<VarDecl>(referencedDecl(A->getBase()));
    auto It = V ? M.Ptrs.find(V) : M.Ptrs.end();
    std::string Text = exprText(Ctx, A);
    if (It == M.Ptrs.end())
      return fail("access '" + Text + "' is not through a row pointer");
    if (referencedDecl(A->getIdx()) != M.Col)
      return fail("access '" + Text + "' is not at the thread's column '" +
                  M.Col->getName() + "'");
    auto Span = fileSpan(Ctx.AST.getSourceManager(), Ctx.AST.getLangOpts(),
                         A->getSourceRange(), Ctx.file());
    if (!Span)
      return fail("access '" + Text + "' is written with a macro");
    It->second.Read |= Read;
    It->second.Written |= Write;
    if (Write && !Plain)
      It->second.OnlyPlainWrites = false;
    Uses->push_back(
        {Span->Begin.Offset, Span->End.Offset - Span->Begin.Offset, V});
    return true;
  }
  bool pointerUse(UnaryOperator *U) {
    return fail("the body dereferences or takes an address ('" +
                exprText(Ctx, U) + "')");
  }
  bool VisitDeclRefExpr(DeclRefExpr *DR) {
    const ValueDecl *D = DR->getDecl();
    if (D == M.Col) {
      auto Span = fileSpan(Ctx.AST.getSourceManager(), Ctx.AST.getLangOpts(),
                           DR->getSourceRange(), Ctx.file());
      if (!Span)
        return fail("the column is used inside a macro");
      Uses->push_back(
          {Span->Begin.Offset, Span->End.Offset - Span->Begin.Offset, nullptr});
    } else if (const auto *V = dyn_cast<VarDecl>(D); V && M.Ptrs.count(V)) {
      return fail("row pointer '" + V->getName() + "' is used other than as " +
                  V->getName() + "[" + M.Col->getName() + "]");
    } else if (D->getType()->isPointerType()) {
      return fail("pointer '" + D->getName() +
                  "' is used other than through a row pointer");
    }
    return true;
  }
  bool VisitCallExpr(CallExpr *C) {
    if (const FunctionDecl *FD = C->getDirectCallee();
        FD && FD->getBody() && mentionsBuiltin(FD->getBody()))
      return fail("the body calls '" + FD->getName() +
                  "', which reads thread or block indices");
    return true;
  }
  bool VisitDeclStmt(DeclStmt *) {
    M.NeedsScope = true;
    return true;
  }
};

} // namespace

/// Matches the 2D map along matrix rows in \p K (the file comment): the
/// indices, the guard, the row pointers and the body. \p Shape stays false
/// until a row pointer is found.
std::string matchRowMap(const EditContext &Ctx, const FunctionDecl *K,
                        RowMap &M, bool &Shape) {
  const auto *Body = dyn_cast_or_null<CompoundStmt>(K->getBody());
  if (!Body || Body->size() < 3)
    return "";
  std::vector<const Stmt *> Stmts(Body->body_begin(), Body->body_end());
  for (int I = 0; I < 2; ++I) {
    const auto *DS = dyn_cast<DeclStmt>(Stmts[I]);
    const auto *V = DS && DS->isSingleDecl()
                        ? dyn_cast<VarDecl>(DS->getSingleDecl())
                        : nullptr;
    auto D = V && V->getInit() && V->getType()->isIntegerType()
                 ? linearIndexDim(V->getInit())
                 : std::nullopt;
    if (D == 'x' && !M.Col)
      M.Col = V;
    else if (D == 'y' && !M.Row)
      M.Row = V;
    else
      return "";
  }
  const auto *If = dyn_cast<IfStmt>(Stmts[2]);
  bool Plain = If && !If->getElse() && !If->getInit();
  std::vector<const Stmt *> Guarded;
  if (Plain && Stmts.size() == 3 && rowBounds(If->getCond(), false, M) &&
      M.ColBound && M.RowBound) {
    if (const auto *CS = dyn_cast<CompoundStmt>(If->getThen()))
      Guarded.assign(CS->body_begin(), CS->body_end());
    else
      Guarded.push_back(If->getThen());
  } else {
    M.ColBound = M.RowBound = nullptr;
    const Stmt *Then = Plain ? If->getThen() : nullptr;
    if (const auto *CS = dyn_cast_or_null<CompoundStmt>(Then))
      Then = CS->size() == 1 ? CS->body_front() : nullptr;
    if (!isa_and_nonnull<ReturnStmt>(Then) ||
        !rowBounds(If->getCond(), true, M) || !M.ColBound || !M.RowBound)
      return ("the statement after the indices is not a guard bounding '" +
              M.Col->getName() + "' and '" + M.Row->getName() +
              "' (a 2D map along matrix rows)")
          .str();
    Guarded.assign(Stmts.begin() + 3, Stmts.end());
  }
  M.Guard = If;
  DenseSet<const ValueDecl *> Written = writtenVars(Body);
  for (const VarDecl *V : {M.Col, M.Row})
    if (Written.contains(V))
      return ("'" + V->getName() + "' is written after its declaration").str();
  for (const Expr *B : {M.ColBound, M.RowBound})
    if (!isBlockUniform(B, K) || mentions(B, M.Col) || mentions(B, M.Row))
      return "the bounds differ between threads";
  size_t I = 0;
  for (; I < Guarded.size(); ++I) {
    const auto *DS = dyn_cast<DeclStmt>(Guarded[I]);
    const auto *V = DS && DS->isSingleDecl()
                        ? dyn_cast<VarDecl>(DS->getSingleDecl())
                        : nullptr;
    const Expr *Stride = nullptr;
    const ParmVarDecl *Matrix =
        V && V->getInit() && V->getType()->isPointerType()
            ? rowPointerMatrix(V->getInit(), M.Row, Stride)
            : nullptr;
    if (!Matrix)
      break;
    Shape = true;
    if (Written.contains(V))
      return ("the row pointer '" + V->getName() +
              "' is written after its declaration")
          .str();
    if (mentions(Stride, M.Col) || !isBlockUniform(Stride, K) ||
        (M.Stride && !sameStride(M.Stride, Stride, Ctx.AST)))
      return ("the row length of '" + V->getName() +
              "' differs from the other row pointers' (or between threads): "
              "one row length is checked for vector alignment")
          .str();
    M.Stride = Stride;
    QualType T = V->getType()->getPointeeType();
    auto Form = vectorForm(T, Ctx.AST);
    if (T->isDependentType() || !Form || T.isVolatileQualified())
      return ("'" + V->getName() + "' has element type '" +
              T.getAsString(Ctx.AST.getPrintingPolicy()) +
              "': only float, int, uint, short, ushort, char, uchar, double "
              "and __half have vector types here")
          .str();
    M.Ptrs[V] = RowPointer{Matrix, *Form};
  }
  M.Body.assign(Guarded.begin() + I, Guarded.end());
  if (M.Ptrs.empty() || M.Body.empty())
    return ("no row pointer 'p = matrix + " + M.Row->getName() +
            " * cols' before the body of the 2D map")
        .str();
  return "";
}

/// The body of \p M can run for W columns, one after another, and its
/// accesses are all p[c]; else the reason.
std::string rowBodyProblem(const EditContext &Ctx, RowMap &M) {
  MapPattern P;
  P.Index = M.Col;
  P.IndexName = M.Col->getNameAsString();
  P.Bound = M.ColBound;
  P.BoundText = exprText(Ctx, M.ColBound);
  P.Body = M.Body;
  if (std::string Why = elementwiseBodyProblem(Ctx, P); !Why.empty())
    return Why;
  for (const Stmt *S : M.Body) {
    DenseSet<const ValueDecl *> W = writtenVars(S);
    if (W.contains(M.Row) || W.contains(referencedDecl(M.RowBound)) ||
        W.contains(declOf(M.Stride)) ||
        any_of(M.Ptrs, [&](auto &KV) { return W.contains(KV.first); }))
      return ("the body writes '" + M.Row->getName() +
              "', a bound, the row length or a row pointer")
          .str();
    if (const Stmt *J = firstJump(S))
      return "the body jumps ('" + stmtText(Ctx, J) + "')";
  }
  RowWalker Walk(Ctx, M);
  for (const Stmt *S : M.Body) {
    M.Uses.emplace_back();
    Walk.Uses = &M.Uses.back();
    Walk.TopLevelAssign = isa<Expr>(S);
    if (!Walk.TraverseStmt(const_cast<Stmt *>(S)) || !Walk.Problem.empty())
      return Walk.Problem.empty() ? "the body cannot be split into columns"
                                  : Walk.Problem;
  }
  return "";
}

/// Each launch's grid with its x dimension to divide: a local dim3
/// variable (divided where the launch names it), `dim3(x, ...)` written at
/// the launch, or an integer; else the reason.
std::string rowGrids(const EditContext &Ctx, const KernelInfo &KI, RowMap &M) {
  std::string Bound = exprText(Ctx, M.ColBound);
  if (KI.Launches.empty())
    return "it is never launched in this file, so no grid can be shown to "
           "cover the column bound '" +
           Bound + "'";
  for (const LaunchSite &L : KI.Launches) {
    if (L.InMacro && !L.GridInPlace)
      return macroGridProblem(L);
    // The divided grid covers at least the columns the original did, and
    // only those below the bound when the original reached the bound.
    if (std::string Why = gridCoverageProblem(Ctx, L, M.ColBound, 0);
        !Why.empty())
      return "launch " + L.Id +
             " is not shown to run a thread for every column below the "
             "guard's bound '" +
             Bound + "': " + Why +
             "; with consecutive columns per thread the divided grid would "
             "reach columns the original never wrote";
    const CUDAKernelCallExpr *Call = findLaunchCall(Ctx, L);
    if (!Call || !Call->getConfig() || Call->getConfig()->getNumArgs() < 1)
      return "launch " + L.Id + " was not found in the AST";
    const Expr *G = Call->getConfig()->getArg(0)->IgnoreImplicit();
    const auto *C = dyn_cast<CXXConstructExpr>(G);
    if (C && C->getNumArgs() == 1 &&
        C->getConstructor()->isCopyOrMoveConstructor()) {
      G = C->getArg(0)->IgnoreImplicit()->IgnoreParens();
      C = dyn_cast<CXXConstructExpr>(G);
    }
    const auto *V = dyn_cast_or_null<VarDecl>(referencedDecl(G));
    const auto *Fn = V ? dyn_cast<FunctionDecl>(V->getDeclContext()) : nullptr;
    if (V && V->isLocalVarDecl() && Fn && Fn->getBody() &&
        (V->getType().isConstQualified() ||
         !writtenVars(Fn->getBody()).contains(V))) {
      auto Span = spelledSpan(Ctx, G);
      std::string N = V->getNameAsString();
      if (Span) {
        M.Grids.push_back(
            {*Span, "dim3(", ", " + N + ".y, " + N + ".z)", N + ".x"});
        continue;
      }
    }
    if (C && C->getNumArgs() >= 1 && !isa<CXXDefaultArgExpr>(C->getArg(0)) &&
        !C->getArg(0)->HasSideEffects(Ctx.AST))
      if (auto Span = spelledSpan(Ctx, C->getArg(0))) {
        M.Grids.push_back(
            {*Span, "", "", parenthesize(spelledText(Ctx, C->getArg(0)))});
        continue;
      }
    return "the grid of " + L.Id + " ('" + L.Grid +
           "') is neither a dim3 variable nor a dim3(...) written at the "
           "launch, so its x dimension cannot be divided by the width";
  }
  return "";
}

/// The text replacing a 2D map's body (vector path, column-by-column
/// fallback) for width \p W.
std::string rowMapText(const EditContext &Ctx, const RowMap &M, int64_t W,
                       StringRef KText) {
  auto First = stmtSpan(Ctx, M.Body.front());
  std::string I = indentationAt(Ctx.Code, First->Begin.Offset);
  std::string In2 = I + "  ", Wd = std::to_string(W);
  std::string Col = M.Col->getNameAsString();
  static const char Comp[] = {'x', 'y', 'z', 'w'};
  std::map<const VarDecl *, std::string> VecName;
  std::vector<std::string> Cond = {parenthesize(exprText(Ctx, M.ColBound)) +
                                   " % " + Wd + " == 0"};
  if (exprText(Ctx, M.Stride) != exprText(Ctx, M.ColBound))
    Cond.push_back(parenthesize(exprText(Ctx, M.Stride)) + " % " + Wd +
                   " == 0");
  for (const auto &[V, P] : M.Ptrs) {
    VecName[V] = freshName(KText, V->getName().str() + "_v");
    std::string A = "reinterpret_cast<unsigned long long>(" +
                    P.Matrix->getNameAsString() + ") % " +
                    std::to_string(W * P.Form.Bytes) + " == 0";
    if (!is_contained(Cond, A))
      Cond.push_back(A);
  }
  // The body with c's uses and accesses replaced.
  auto Lanes = [&](auto Replace, const std::string &Target) {
    std::string Out;
    for (size_t S = 0; S < M.Body.size(); ++S) {
      auto Span = stmtSpan(Ctx, M.Body[S]);
      std::vector<TextEdit> Edits;
      for (const RowUse &U : M.Uses[S])
        Edits.push_back({U.Offset, U.Length, Replace(U)});
      std::string Text = spliceText(Ctx.Code, Span->Begin.Offset,
                                    Span->End.Offset, std::move(Edits));
      int ColN = int(indentationAt(Ctx.Code, Span->Begin.Offset).size());
      Out += Target + reindent(Text, int(Target.size()) - ColN) + "\n";
    }
    return Out;
  };
  std::string Out = "if (" + join(Cond, " &&\n" + I + "    ") + ") {\n";
  for (const auto &[V, P] : M.Ptrs) {
    std::string VT = P.Form.type(W);
    bool Const = V->getType()->getPointeeType().isConstQualified();
    if (P.Read || !P.OnlyPlainWrites)
      Out += In2 + VT + " " + VecName[V] + " = *reinterpret_cast<" +
             (Const ? "const " : "") + VT + " *>(" + V->getNameAsString() +
             " + " + Col + ");\n";
    else
      Out += In2 + VT + " " + VecName[V] + ";\n";
  }
  for (int64_t K = 0; K < W; ++K) {
    std::string Target = M.NeedsScope ? In2 + "  " : In2;
    std::string Lane = Lanes(
        [&](const RowUse &U) {
          return U.Ptr ? VecName[U.Ptr] + "." + Comp[K]
                       : "(" + Col + " + " + std::to_string(K) + ")";
        },
        Target);
    Out += M.NeedsScope ? In2 + "{\n" + Lane + In2 + "}\n" : Lane;
  }
  for (const auto &[V, P] : M.Ptrs)
    if (P.Written)
      Out += In2 + "*reinterpret_cast<" + P.Form.type(W) + " *>(" +
             V->getNameAsString() + " + " + Col + ") = " + VecName[V] + ";\n";
  std::string K = freshName(KText, "k");
  std::string Shifted = "(" + Col + " + " + K + ")";
  Out += I + "} else {\n" + In2 + "for (int " + K + " = 0; " + K + " < " + Wd +
         " && " + Shifted + " < " + exprText(Ctx, M.ColBound) + "; ++" + K +
         ") {\n";
  Out += Lanes(
      [&](const RowUse &U) {
        return U.Ptr ? U.Ptr->getNameAsString() + "[" + Shifted + "]" : Shifted;
      },
      In2 + "  ");
  Out += In2 + "}\n" + I + "}";
  return Out;
}

} // namespace optiml
