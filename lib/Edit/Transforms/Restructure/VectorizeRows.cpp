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
// The same map written with a flat index, `out[y * cols + x] = f(in[i])`
// with `int i = y * cols + x;` (in either order, through integer casts of
// 32 bits or more, locals never written, an index helper `idx(x, y, cols)`
// returning such a sum), is read by what the index computes: x once with
// coefficient 1 and one row term `y * S`, S a parameter never written or a
// constant, the same for every access, nothing else. Each thread's W
// elements y * S + x .. + W - 1 are then those of W original threads of
// one row, whatever S is (a pitch other than the column bound included;
// rows that overlap, S below the bound, had two threads at one element, a
// race of the original's own). The vector path, taken when those W columns
// are below the bound and every matrix's address of element x of the row
// is aligned (checked per thread, so where the column count is not a
// multiple of W the rows that happen to be aligned take it), does the work
// those threads did; the body keeps its locals (lanes re-declare them at
// x + K, the declarations only the indices read left out) and only the
// loads move ahead of it. An index with another term (`i + cols`: a
// neighbour, vectorize-stencil's), x scaled (`2 * x`), or x times a
// variable (`x * rows + y`: a transposed access) is refused.
//
// In both forms the body runs W times per thread: it may not write what it
// does not declare, nor call a helper whose result depends on the thread
// (threadShapeCallProblem()).
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../../Patterns/SideEffects.h"
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

/// Why \p V's elements, of type \p T, have no vector form here.
std::string elementTypeProblem(const EditContext &Ctx, const VarDecl *V,
                               QualType T) {
  return ("'" + V->getName() + "' has element type '" +
          T.getAsString(Ctx.AST.getPrintingPolicy()) +
          "': only float, int, uint, short, ushort, char, uchar, double "
          "and __half have vector types here")
      .str();
}

/// The terms of a flat index (FlatIndex::read()): how often x is added
/// alone, the row lengths S of its row terms `y * S`, and the other terms
/// (true: subtracted).
struct FlatTerms {
  int X = 0;
  SmallVector<const Expr *, 2> Strides;
  SmallVector<std::pair<const Expr *, bool>, 2> Others;
};

/// Reads an access's index as the sum of its terms, by what it computes.
struct FlatIndex {
  const EditContext &Ctx;
  const RowMap &M;
  const FunctionDecl *Kernel;
  DenseSet<const ValueDecl *> Written, DepX, Inside;

  /// An integer type that holds any index below 2^31: a conversion to it
  /// changes no element's index.
  bool wide(QualType T) const {
    return T->isIntegerType() && !T->isBooleanType() &&
           Ctx.AST.getTypeSize(T) >= 32;
  }
  /// \p E without parentheses and conversions between wide() integers.
  const Expr *strip(const Expr *E) const {
    for (;;) {
      E = E->IgnoreParens();
      const auto *C = dyn_cast<CastExpr>(E);
      if (!C || !wide(C->getType()) ||
          !C->getSubExpr()->getType()->isIntegerType())
        return E;
      E = C->getSubExpr();
    }
  }
  /// A local of the body standing for its initializer: wide, never written.
  const VarDecl *followable(const Expr *E) const {
    const auto *V = dyn_cast_or_null<VarDecl>(declOf(E));
    return V && Inside.contains(V) && V->getInit() && wide(V->getType()) &&
                   !Written.contains(V)
               ? V
               : nullptr;
  }
  /// In an index helper's body (\p Frame its call), the argument a
  /// parameter reference \p E stands for; else null.
  const Expr *argument(const Expr *E, const CallExpr *Frame) const {
    const auto *R = dyn_cast<DeclRefExpr>(strip(E));
    const auto *P = R ? dyn_cast<ParmVarDecl>(R->getDecl()) : nullptr;
    const auto *FD = Frame ? Frame->getDirectCallee() : nullptr;
    if (!P || !FD || P->getDeclContext() != FD->getDefinition() ||
        P->getFunctionScopeIndex() >= Frame->getNumArgs() ||
        !wide(P->getType()))
      return nullptr;
    return Frame->getArg(P->getFunctionScopeIndex());
  }
  bool isRow(const Expr *E, const CallExpr *Frame) const {
    if (const Expr *A = argument(E, Frame))
      return isRow(A, nullptr);
    const auto *R = dyn_cast<DeclRefExpr>(strip(E));
    return !Frame && R && R->getDecl() == M.Row;
  }
  /// The row length \p E stands for: a parameter the kernel never writes or
  /// an integer constant; else null.
  const Expr *stride(const Expr *E, const CallExpr *Frame) const {
    if (const Expr *A = argument(E, Frame))
      return stride(A, nullptr);
    if (integerConstantValue(strip(E), Ctx.AST))
      return E;
    const auto *R = dyn_cast<DeclRefExpr>(strip(E));
    const auto *P = R ? dyn_cast<ParmVarDecl>(R->getDecl()) : nullptr;
    return !Frame && P && P->getDeclContext() == Kernel && !Written.contains(P)
               ? E
               : nullptr;
  }
  /// Adds \p E's terms to \p T; \p Frame: the index helper's call whose
  /// body \p E is in.
  void read(const Expr *E, const CallExpr *Frame, FlatTerms &T,
            unsigned Depth) const {
    const Expr *S = strip(E);
    const auto *B = dyn_cast<BinaryOperator>(S);
    if (Depth > 16)
      T.Others.push_back({E, false});
    else if (B && B->getOpcode() == BO_Add) {
      read(B->getLHS(), Frame, T, Depth + 1);
      read(B->getRHS(), Frame, T, Depth + 1);
    } else if (B && B->getOpcode() == BO_Sub) {
      read(B->getLHS(), Frame, T, Depth + 1);
      T.Others.push_back({B->getRHS(), true});
    } else if (const Expr *A = argument(S, Frame)) {
      read(A, nullptr, T, Depth + 1);
    } else if (!Frame && isa<DeclRefExpr>(S) && declOf(S) == M.Col) {
      ++T.X;
    } else if (const VarDecl *V = Frame ? nullptr : followable(S)) {
      read(V->getInit(), nullptr, T, Depth + 1);
    } else if (const Expr *R = B && B->getOpcode() == BO_Mul
                                   ? rowStride(B, Frame)
                                   : nullptr) {
      T.Strides.push_back(R);
    } else if (const auto *C = dyn_cast<CallExpr>(S); C && !Frame) {
      const FunctionDecl *FD = nullptr;
      const Expr *Ret = indexHelperReturn(C, Ctx.AST, FD);
      if (Ret && wide(FD->getReturnType()))
        read(Ret, C, T, Depth + 1);
      else
        T.Others.push_back({E, false});
    } else {
      T.Others.push_back({E, false});
    }
  }
  /// `y * S` or `S * y`: S as rowStride() reads it; else null.
  const Expr *rowStride(const BinaryOperator *B, const CallExpr *Frame) const {
    for (int Swap = 0; Swap < 2; ++Swap)
      if (isRow(Swap ? B->getRHS() : B->getLHS(), Frame))
        return stride(Swap ? B->getLHS() : B->getRHS(), Frame);
    return nullptr;
  }
  /// Why access \p A (index \p Idx) is not at the thread's own element
  /// `y * S + x`; else "" with \p Stride and \p Base set.
  std::string problem(const Expr *Idx, StringRef Text, const Expr *&Stride,
                      std::string &Base) const {
    std::string Own = "'" + M.Row->getNameAsString() + " * " +
                      exprText(Ctx, M.ColBound) + " + " +
                      M.Col->getNameAsString() + "'";
    std::string Pre = "access '" + Text.str() + "' ";
    auto Slope = vectorizestencil::xSlope(Idx, M.Col, DepX, Ctx.AST);
    if (!Slope)
      return Pre + "does not move by a constant when '" +
             M.Col->getName().str() +
             "' grows by one (a transposed or strided access): a flat 2D "
             "map reads each matrix at the thread's own element " +
             Own;
    if (*Slope == 0)
      return Pre +
             "is the same element for every column of a row, not the "
             "thread's own element " +
             Own;
    if (*Slope != 1)
      return Pre + "moves by " + std::to_string(*Slope) + " elements when '" +
             M.Col->getName().str() +
             "' grows by one, so a thread's columns are not consecutive "
             "elements: a flat 2D map reads each matrix at " +
             Own;
    FlatTerms T;
    read(Idx, nullptr, T, 0);
    std::vector<std::string> Added;
    for (auto [O, Minus] : T.Others) {
      if (vectorizestencil::mentionsAny(O, DepX))
        return Pre + "computes its index through '" + exprText(Ctx, O) +
               "', which is not read as a sum of '" + M.Col->getName().str() +
               "' and a row term (a conversion to fewer than 32 bits, a "
               "local written after its declaration, or a helper that is "
               "not one return of such a sum)";
      Added.push_back((Minus ? "-" : "") + exprText(Ctx, O));
    }
    if (!Added.empty())
      return Pre + "is not at the thread's own element " + Own + ": it adds '" +
             join(Added, "', '") +
             "' (a neighbour in another row or column: a stencil, which "
             "vectorize-stencil handles)";
    if (T.X != 1 || T.Strides.size() != 1)
      return Pre + "has no row term '" + M.Row->getName().str() +
             " * S' (S a parameter or a constant): it is not at the "
             "thread's own element " +
             Own;
    Stride = T.Strides.front();
    const Expr *E = stripCasts(Idx);
    while (const VarDecl *V = followable(E))
      E = stripCasts(V->getInit());
    for (const ValueDecl *L : Inside)
      if (mentions(E, L))
        return Pre + "computes its index from '" + L->getName().str() +
               "', a local of the body: the vector loads come before it";
    Base = exprText(Ctx, E);
    return "";
  }
};

/// Calls \p Fn on each variable declared in \p S.
template <class F> void forEachLocal(const Stmt *S, F Fn) {
  struct Decls : RecursiveASTVisitor<Decls> {
    F &Fn;
    explicit Decls(F &Fn) : Fn(Fn) {}
    bool VisitVarDecl(VarDecl *V) {
      Fn(V);
      return true;
    }
  } D(Fn);
  D.TraverseStmt(const_cast<Stmt *>(S));
}

/// Whether some access in \p Body is at an index depending on both \p M's
/// column and row: then the kernel is read as a flat 2D map.
bool flatShape(const RowMap &M, ArrayRef<const Stmt *> Body) {
  DenseSet<const ValueDecl *> DX = vectorizestencil::dependents(M.Col, Body);
  DenseSet<const ValueDecl *> DY = vectorizestencil::dependents(M.Row, Body);
  struct Find : RecursiveASTVisitor<Find> {
    DenseSet<const ValueDecl *> &DX, &DY;
    bool Found = false;
    Find(DenseSet<const ValueDecl *> &DX, DenseSet<const ValueDecl *> &DY)
        : DX(DX), DY(DY) {}
    bool VisitArraySubscriptExpr(ArraySubscriptExpr *A) {
      Found |= vectorizestencil::mentionsAny(A->getIdx(), DX) &&
               vectorizestencil::mentionsAny(A->getIdx(), DY);
      return !Found;
    }
  } F(DX, DY);
  for (const Stmt *S : Body)
    F.TraverseStmt(const_cast<Stmt *>(S));
  return F.Found;
}

/// Records the accesses and column uses of a 2D map's body: every array
/// access must be p[c] through a row pointer, or in a flat 2D map (with
/// \p Flat) p[y * cols + x] for a pointer parameter p.
struct RowWalker : AccessWalker<RowWalker> {
  const EditContext &Ctx;
  RowMap &M;
  const FlatIndex *Flat = nullptr;
  std::vector<RowUse> *Uses = nullptr;
  std::string Problem, StrideAccess;
  /// What the body names outside the indices of flat accesses.
  DenseSet<const ValueDecl *> Seen;
  RowWalker(const EditContext &Ctx, RowMap &M) : Ctx(Ctx), M(M) {}
  bool fail(const Twine &Why) {
    if (Problem.empty())
      Problem = Why.str();
    return false;
  }
  bool access(ArraySubscriptExpr *A, bool Read, bool Write, bool Plain) {
    if (Flat)
      return flatAccess(A, Read, Write, Plain);
    const auto *V = dyn_cast_or_null<VarDecl>(referencedDecl(A->getBase()));
    auto It = V ? M.Ptrs.find(V) : M.Ptrs.end();
    std::string Text = exprText(Ctx, A);
    if (It == M.Ptrs.end())
      return fail("access '" + Text + "' is not through a row pointer");
    if (referencedDecl(A->getIdx()) != M.Col)
      return fail("access '" + Text + "' is not at the thread's column '" +
                  M.Col->getName() + "'");
    return record(A, It->second, Read, Write, Plain);
  }
  bool record(ArraySubscriptExpr *A, RowPointer &P, bool Read, bool Write,
              bool Plain) {
    auto Span = fileSpan(Ctx.AST.getSourceManager(), Ctx.AST.getLangOpts(),
                         A->getSourceRange(), Ctx.file());
    if (!Span)
      return fail("access '" + exprText(Ctx, A) + "' is written with a macro");
    P.Read |= Read;
    P.Written |= Write;
    if (Write && !Plain)
      P.OnlyPlainWrites = false;
    const auto *V = cast<VarDecl>(referencedDecl(A->getBase()));
    Uses->push_back(
        {Span->Begin.Offset, Span->End.Offset - Span->Begin.Offset, V});
    return true;
  }
  /// p[y * cols + x] in a flat 2D map: the index read by FlatIndex, one
  /// row length for every access, the column's uses inside the index kept
  /// for the scalar path.
  bool flatAccess(ArraySubscriptExpr *A, bool Read, bool Write, bool Plain) {
    std::string Text = exprText(Ctx, A);
    const auto *P = dyn_cast_or_null<ParmVarDecl>(referencedDecl(A->getBase()));
    if (!P || !P->getType()->isPointerType())
      return fail("access '" + Text + "' is not through a pointer parameter");
    const Expr *Stride = nullptr;
    std::string Base;
    if (std::string Why = Flat->problem(A->getIdx(), Text, Stride, Base);
        !Why.empty())
      return fail(Why);
    if (M.Stride && !sameStride(M.Stride, Stride, Ctx.AST))
      return fail("access '" + Text + "' steps '" + exprText(Ctx, Stride) +
                  "' elements from row to row where '" + StrideAccess +
                  "' steps '" + exprText(Ctx, M.Stride) +
                  "': a flat 2D map reads every matrix with one row length");
    if (!M.Stride)
      M.Stride = Stride, StrideAccess = Text;
    QualType T = P->getType()->getPointeeType();
    auto Form = vectorForm(T, Ctx.AST);
    if (T->isDependentType() || !Form || T.isVolatileQualified())
      return fail(elementTypeProblem(Ctx, P, T));
    RowPointer &RP = M.Ptrs.insert({P, RowPointer{P, *Form}}).first->second;
    if (RP.Base.empty())
      RP.Base = Base;
    std::vector<const DeclRefExpr *> Refs;
    collectRefs(A->getIdx(), M.Col, Refs);
    for (const DeclRefExpr *R : Refs) {
      auto Span = fileSpan(Ctx.AST.getSourceManager(), Ctx.AST.getLangOpts(),
                           R->getSourceRange(), Ctx.file());
      if (!Span)
        return fail("the column is used inside a macro");
      Uses->push_back({Span->Begin.Offset,
                       Span->End.Offset - Span->Begin.Offset, nullptr, true});
    }
    return record(A, RP, Read, Write, Plain);
  }
  bool pointerUse(UnaryOperator *U) {
    return fail("the body dereferences or takes an address ('" +
                exprText(Ctx, U) + "')");
  }
  bool VisitDeclRefExpr(DeclRefExpr *DR) {
    const ValueDecl *D = DR->getDecl();
    Seen.insert(D);
    if (D == M.Col) {
      auto Span = fileSpan(Ctx.AST.getSourceManager(), Ctx.AST.getLangOpts(),
                           DR->getSourceRange(), Ctx.file());
      if (!Span)
        return fail("the column is used inside a macro");
      Uses->push_back(
          {Span->Begin.Offset, Span->End.Offset - Span->Begin.Offset, nullptr});
    } else if (const auto *V = dyn_cast<VarDecl>(D);
               V && M.Ptrs.count(V) && !Flat) {
      return fail("row pointer '" + V->getName() + "' is used other than as " +
                  V->getName() + "[" + M.Col->getName() + "]");
    } else if (D->getType()->isPointerType() && Flat) {
      return fail("pointer '" + D->getName() +
                  "' is used other than at the thread's own element");
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
/// until a row pointer is found, or without one an access at an index of
/// both x and y (a flat 2D map).
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
      return elementTypeProblem(Ctx, V, T);
    M.Ptrs[V] = RowPointer{Matrix, *Form};
  }
  M.Body.assign(Guarded.begin() + I, Guarded.end());
  if (M.Ptrs.empty() && !M.Body.empty() && flatShape(M, M.Body)) {
    Shape = M.Flat = true;
    return "";
  }
  if (M.Ptrs.empty() || M.Body.empty())
    return ("no row pointer 'p = matrix + " + M.Row->getName() +
            " * cols' before the body of the 2D map")
        .str();
  return "";
}

/// In a flat 2D map, the body's declarations of integers named only in
/// the indices of accesses (`int i = y * cols + x;`), which the vector
/// lanes do without; the lanes need their own scopes only for the others.
static void skipIndexLocals(const EditContext &Ctx, RowMap &M,
                            const DenseSet<const ValueDecl *> &Seen) {
  M.NeedsScope = false;
  for (size_t I = 0; I < M.Body.size(); ++I) {
    const auto *DS = dyn_cast<DeclStmt>(M.Body[I]);
    if (DS && all_of(DS->decls(), [&](const Decl *D) {
          const auto *V = dyn_cast<VarDecl>(D);
          return V && V->getType()->isIntegerType() && V->getInit() &&
                 !V->getInit()->HasSideEffects(Ctx.AST) && !Seen.contains(V);
        })) {
      M.LaneSkips.insert(I);
      continue;
    }
    forEachLocal(M.Body[I], [&](const VarDecl *) { M.NeedsScope = true; });
  }
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
        (M.Stride && W.contains(declOf(M.Stride))) ||
        any_of(M.Ptrs, [&](auto &KV) { return W.contains(KV.first); }))
      return ("the body writes '" + M.Row->getName() +
              "', a bound, the row length or a row pointer")
          .str();
    if (const Stmt *J = firstJump(S))
      return "the body jumps ('" + stmtText(Ctx, J) + "')";
  }
  RowWalker Walk(Ctx, M);
  const auto *K = cast<FunctionDecl>(M.Col->getDeclContext());
  FlatIndex Flat{Ctx,
                 M,
                 K,
                 writtenVars(K->getBody()),
                 vectorizestencil::dependents(M.Col, M.Body),
                 {}};
  for (const Stmt *S : M.Body)
    forEachLocal(S, [&](const VarDecl *V) { Flat.Inside.insert(V); });
  if (M.Flat)
    Walk.Flat = &Flat;
  for (const Stmt *S : M.Body) {
    M.Uses.emplace_back();
    Walk.Uses = &M.Uses.back();
    Walk.TopLevelAssign = isa<Expr>(S);
    if (!Walk.TraverseStmt(const_cast<Stmt *>(S)) || !Walk.Problem.empty())
      return Walk.Problem.empty() ? "the body cannot be split into columns"
                                  : Walk.Problem;
  }
  if (std::string Why = outsideWriteProblem(Ctx, M.Body, M.Col); !Why.empty())
    return Why;
  if (M.Flat)
    skipIndexLocals(Ctx, M, Walk.Seen);
  return threadShapeCallProblem(M.Body, Ctx.AST.getSourceManager());
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

/// Where a vector of width \p W of \p V starts: `p + c` for a row pointer,
/// `m + (y * cols + x)` in a flat 2D map.
static std::string vectorAddress(const RowMap &M, const VarDecl *V,
                                 const RowPointer &P) {
  return V->getNameAsString() + " + " +
         (M.Flat ? parenthesize(P.Base) : M.Col->getNameAsString());
}

/// When the vector path of \p M may run: with row pointers, the column
/// bound and row length multiples of \p W and the matrices aligned; in a
/// flat 2D map, this thread's W columns below the bound and each matrix's
/// address of its first element aligned (the row's alignment, checked per
/// thread).
static std::vector<std::string> vectorCondition(const EditContext &Ctx,
                                                const RowMap &M, int64_t W) {
  std::string Wd = std::to_string(W);
  std::string Bound = parenthesize(exprText(Ctx, M.ColBound));
  std::vector<std::string> Cond;
  if (M.Flat)
    Cond.push_back(Bound + " - " + M.Col->getNameAsString() + " >= " + Wd);
  else
    Cond.push_back(Bound + " % " + Wd + " == 0");
  if (!M.Flat && exprText(Ctx, M.Stride) != exprText(Ctx, M.ColBound))
    Cond.push_back(parenthesize(exprText(Ctx, M.Stride)) + " % " + Wd +
                   " == 0");
  for (const auto &[V, P] : M.Ptrs) {
    std::string A =
        "reinterpret_cast<unsigned long long>(" +
        (M.Flat ? vectorAddress(M, V, P) : P.Matrix->getNameAsString()) +
        ") % " + std::to_string(W * P.Form.Bytes) + " == 0";
    if (!is_contained(Cond, A))
      Cond.push_back(A);
  }
  return Cond;
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
  for (const auto &[V, P] : M.Ptrs)
    VecName[V] = freshName(KText, V->getName().str() + "_v");
  // The body with c's uses and accesses replaced (none where Replace gives
  // nothing).
  auto Lanes = [&](auto Replace, const std::string &Target, bool Vector) {
    std::string Out;
    for (size_t S = 0; S < M.Body.size(); ++S) {
      if (Vector && M.LaneSkips.count(S))
        continue;
      auto Span = stmtSpan(Ctx, M.Body[S]);
      std::vector<TextEdit> Edits;
      for (const RowUse &U : M.Uses[S])
        if (std::optional<std::string> T = Replace(U))
          Edits.push_back({U.Offset, U.Length, *T});
      std::string Text = spliceText(Ctx.Code, Span->Begin.Offset,
                                    Span->End.Offset, std::move(Edits));
      int ColN = int(indentationAt(Ctx.Code, Span->Begin.Offset).size());
      Out += Target + reindent(Text, int(Target.size()) - ColN) + "\n";
    }
    return Out;
  };
  std::string Out =
      "if (" + join(vectorCondition(Ctx, M, W), " &&\n" + I + "    ") + ") {\n";
  for (const auto &[V, P] : M.Ptrs) {
    std::string VT = P.Form.type(W);
    bool Const = V->getType()->getPointeeType().isConstQualified() ||
                 (M.Flat && !P.Written);
    if (P.Read || !P.OnlyPlainWrites)
      Out += In2 + VT + " " + VecName[V] + " = *reinterpret_cast<" +
             (Const ? "const " : "") + VT + " *>(" + vectorAddress(M, V, P) +
             ");\n";
    else
      Out += In2 + VT + " " + VecName[V] + ";\n";
  }
  for (int64_t K = 0; K < W; ++K) {
    std::string Target = M.NeedsScope ? In2 + "  " : In2;
    std::string Lane = Lanes(
        [&](const RowUse &U) -> std::optional<std::string> {
          if (U.Inner)
            return std::nullopt;
          return U.Ptr ? VecName[U.Ptr] + "." + Comp[K]
                       : "(" + Col + " + " + std::to_string(K) + ")";
        },
        Target, true);
    Out += M.NeedsScope ? In2 + "{\n" + Lane + In2 + "}\n" : Lane;
  }
  for (const auto &[V, P] : M.Ptrs)
    if (P.Written)
      Out += In2 + "*reinterpret_cast<" + P.Form.type(W) + " *>(" +
             vectorAddress(M, V, P) + ") = " + VecName[V] + ";\n";
  std::string K = freshName(KText, "k");
  std::string Shifted = "(" + Col + " + " + K + ")";
  Out += I + "} else {\n" + In2 + "for (int " + K + " = 0; " + K + " < " + Wd +
         " && " + Shifted + " < " + exprText(Ctx, M.ColBound) + "; ++" + K +
         ") {\n";
  // A flat access keeps its text, the column inside its index shifted.
  Out += Lanes(
      [&](const RowUse &U) -> std::optional<std::string> {
        if (U.Ptr && M.Flat)
          return std::nullopt;
        return U.Ptr ? U.Ptr->getNameAsString() + "[" + Shifted + "]" : Shifted;
      },
      In2 + "  ", false);
  Out += In2 + "}\n" + I + "}";
  return Out;
}

std::string rowMapReason(const EditContext &Ctx, const RowMap &M,
                         StringRef Arrays) {
  std::string Col = M.Col->getNameAsString();
  if (!M.Flat)
    return "2D map along matrix rows: every global access is p[" + Col +
           "] through a row pointer into " + Arrays.str() +
           "; each thread takes consecutive columns";
  return "2D map along matrix rows: every global access is at the thread's "
         "own element '" +
         M.Row->getNameAsString() + " * " + exprText(Ctx, M.Stride) + " + " +
         Col + "' of " + Arrays.str() +
         "; each thread takes consecutive columns, a vector where its row is "
         "aligned";
}

} // namespace optiml
