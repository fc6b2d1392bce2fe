//===- SharedTilingCols.cpp - shared-tiling rows with several columns -----===//
//
// cols: a streamed rows rewrite (SharedTilingRows.cpp) whose threads each
// compute Cols adjacent columns of their rows. Thread (x, t) computes the
// columns x * Cols .. x * Cols + Cols - 1 of the rows t * R .. t * R + R - 1.
// Where every bound the guard and the reads test holds (the interior form,
// SharedTilingWindow.cpp), each window row is loaded once as whole vectors
// of Cols elements (a row of a 7-wide window for 2 columns: 5 float2 loads
// where the columns one by one issue 14 scalar ones) and every column's
// outputs read it. The other threads (few, but in every warp along the
// image's left and right edges) run the edge form: each of their columns
// in turn (a rolled loop) runs the rows' tested form of one column, its
// own window loaded element by element where a read passes its tests
// (windowLoads()), so that one column's window and sums are live at a
// time. The launches' grids shrink along x by Cols.
//
// The launches of rows and cols: shrinkStencilGrids().
//
// Why it is exact: each output is computed by the original statements
// from the input elements its reads name (a window element holds the
// element of its column). The vector loads read more than the reads do:
// whole vectors around the window, which lie in rows the thread reads and
// in columns from 0 to below the column bound, which must be the pitch;
// each vector holds at least one element the thread itself reads, and the
// condition asks for their alignment (the pitch a multiple of Cols, the
// array aligned). Assumed: the array holds whole rows of the pitch for
// the rows it reads, as an h x pitch image does; a buffer ending inside
// its last row could be read past its end by up to Cols - 1 elements. A
// read at the thread's own point (offset 0, 0) is required, so that the
// columns between the reads are ones the kernel reads too. The edge form
// is rows' own tested form (SharedTilingWindow.cpp) for each column x in
// turn, exact as rows is.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../TransformSupport.h"
#include "SharedStaging.h"
#include "SharedTilingInternal.h"
#include "VectorizeInternal.h"
#include "optiml/Frontend/ASTUtil.h"
#include "optiml/Support/TextTemplate.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace clang;
using namespace llvm;

namespace optiml {
namespace sharedtiling {

namespace {

/// The first use of a thread coordinate builtin (`threadIdx.x`,
/// `blockIdx.y`, `blockDim.x`, `gridDim.z`, ...) under \p S, or null.
const Expr *coordinateUse(const Stmt *S) {
  if (!S)
    return nullptr;
  if (const auto *E = dyn_cast<Expr>(S); E && asBuiltinVar(E))
    return E;
  for (const Stmt *C : S->children())
    if (const Expr *D = coordinateUse(C))
      return D;
  return nullptr;
}

/// `threadIdx.x`.
std::string coordinateName(const Expr *E) {
  BuiltinVarRef R = *asBuiltinVar(E);
  return R.Var.str() + "." + std::string(1, R.Dim);
}

int64_t roundUp(int64_t V, int64_t M) { return (V + M - 1) / M * M; }

/// The vector of Cols lanes of \p Elem that cols loads and stores
/// (float, int, unsigned, double), if it has one.
std::optional<VectorForm> colsVector(QualType Elem, int64_t Cols,
                                     const ASTContext &AST) {
  std::optional<VectorForm> VF = vectorForm(Elem, AST);
  if (!VF || !is_contained({"float", "int", "uint", "double"}, VF->Prefix) ||
      Cols > VF->MaxWidth)
    return std::nullopt;
  return VF;
}

} // namespace

std::string fillIn(StringRef Pattern, StringRef Coord) {
  std::string S;
  for (char C : Pattern)
    S += C == '$' ? Coord.str() : std::string(1, C);
  return S;
}

/// `Name`, `Name + 2`, `Name - 1`.
std::string plusConst(StringRef Name, int64_t C) {
  if (C == 0)
    return Name.str();
  return (Name + (C > 0 ? " + " : " - ") + Twine(C > 0 ? C : -C)).str();
}

std::string upperBoundName(ArrayRef<BoundCmp> Guard) {
  std::string Bound;
  for (const BoundCmp &B : Guard)
    if (StringRef Text(B.Text);
        !B.Lower && (Text.starts_with("$ < ") || Text.starts_with("$ <= "))) {
      bool Strict = Text.starts_with("$ < ");
      StringRef T = Text.drop_front(Strict ? 4 : 5).trim();
      if (T.starts_with("(") && T.ends_with(")"))
        T = T.drop_front().drop_back().trim();
      // `$ < h - 1` and `$ <= h - 1` need no more points than `$ < h`.
      int64_t Less = 0;
      if (size_t Minus = T.rfind(" - ");
          Minus != StringRef::npos &&
          !T.substr(Minus + 3).getAsInteger(10, Less) && Less >= 0) {
        T = T.take_front(Minus);
      } else {
        Less = 0;
      }
      if ((Strict || Less >= 1) &&
          all_of(T, [](char Ch) { return isAlnum(Ch) || Ch == '_'; }))
        Bound = T.str();
    }
  return Bound;
}

// Why long: each assumption the vector loads make is checked in turn, with
// its own reason, before the loads' text.
Expected<ColsForm> planCols(const EditContext &Ctx, const Edit &E,
                            const StencilPlan &P, int64_t Cols,
                            const RowNames &N,
                            function_ref<std::string(StringRef)> Fresh) {
  auto NotApplicable = [&](const Twine &Why) {
    return reject(E, "not-applicable",
                  "kernel '" + E.Target + "': cols " + Twine(Cols) + ": " +
                      Why);
  };
  if (Cols != 2 && Cols != 4)
    return reject(E, "params",
                  "cols on a 2D stencil must be 2 or 4 (got " + Twine(Cols) +
                      ")");
  ColsForm F;
  F.Cols = Cols;
  // Each element type has its vector of Cols lanes.
  QualType Elem = P.In->getType()->getPointeeType();
  std::optional<VectorForm> VF = colsVector(Elem, Cols, Ctx.AST);
  if (!VF)
    return NotApplicable("the input's elements ('" + P.ElemType +
                         "') have no vector type of " + Twine(Cols) +
                         " lanes here");
  // The column index: its own declaration, read first by the guard.
  for (const Stmt *S : P.Before) {
    const auto *DS = dyn_cast<DeclStmt>(S);
    if (DS && is_contained(DS->decls(), P.X)) {
      if (!DS->isSingleDecl())
        return NotApplicable("the column index '" + P.X->getName() +
                             "' shares its declaration; cols needs it alone");
      F.XDecl = DS;
    } else if (mentions(S, P.X)) {
      return NotApplicable("'" + P.X->getName() +
                           "' is used before the guard at " + where(Ctx, S));
    }
  }
  F.XInit = looseExprText(Ctx, P.X->getInit());
  if (!F.XDecl || F.XInit.empty())
    return NotApplicable("the column index has no place in the file");
  F.XT = typeName(P.X->getType(), Ctx.AST);
  // A thread's columns are told apart only by its column index: nothing
  // but the indices' declarations reads a thread coordinate.
  std::vector<const Stmt *> Rest = P.Inner;
  for (const Stmt *S : P.Before)
    if (const auto *DS = dyn_cast<DeclStmt>(S);
        S != F.XDecl && !(DS && is_contained(DS->decls(), P.Y)))
      Rest.push_back(S);
  for (const Stmt *S : Rest)
    if (const Expr *D = coordinateUse(S))
      return NotApplicable("'" + coordinateName(D) + "' is read at " +
                           where(Ctx, D) +
                           ": each of a thread's columns would see the same "
                           "value");
  // The vectors span whole rows' columns below the bound: the bound must
  // be the pitch, and each thread must read its own element.
  std::string Bound = upperBoundName(P.GuardX);
  if (Bound.empty())
    return NotApplicable("the guard has no upper bound 'x < w' on the column");
  if (StringRef(P.Pitch).trim() != Bound)
    return NotApplicable("the pitch '" + P.Pitch +
                         "' is not the column bound '" + Bound +
                         "': whole vectors of a row may lie outside the "
                         "columns the kernel reads");
  if (none_of(P.Reads, [](const StencilRead &Rd) {
        return Rd.DX.Lo <= 0 && Rd.DX.Hi >= 0 && Rd.DY.Lo <= 0 && Rd.DY.Hi >= 0;
      }))
    return NotApplicable("no read reads the thread's own element, so the "
                         "columns between the reads may not all be read");
  F.Lo = -roundUp(P.HaloXLo, Cols);
  int64_t Hi = roundUp(Cols + P.HaloXHi, Cols);
  F.Width = Hi - F.Lo;
  if (F.Width > 16)
    return NotApplicable("the window row would hold " + Twine(F.Width) +
                         " values (at most 16)");
  std::string VT = VF->type(Cols), Vec = Fresh("rowVec"), K = Fresh("k"),
              V = Fresh("v");
  std::string In = P.In->getNameAsString();
  const std::string &Pitch = Bound; // a name (upperBoundName)
  static const char *Lanes[] = {"x", "y", "z", "w"};
  std::vector<std::string> Moves;
  for (int64_t L = 0; L < Cols; ++L)
    Moves.push_back(N.Win + "[" + std::to_string(Cols) + " * " + K +
                    (L ? " + " + std::to_string(L) : std::string()) +
                    "] = " + V + "." + Lanes[L] + ";");
  F.Loads = fillTemplate(
      R"(const ${VT} *${Vec} = reinterpret_cast<const ${VT} *>(&${In}[${Cast}${Gy} * ${Pitch} + ${First}]);
#pragma unroll
for (int ${K} = 0; ${K} < ${NV}; ++${K}) {
  const ${VT} ${V} = ${Vec}[${K}];
  ${Moves}
})",
      {{"VT", VT},
       {"Vec", Vec},
       {"In", In},
       {"Cast", P.IndexCast},
       {"Gy", N.Gy},
       {"Pitch", Pitch},
       {"First", plusConst(N.XBase, F.Lo)},
       {"K", K},
       {"NV", std::to_string(F.Width / Cols)},
       {"V", V},
       {"Moves", join(Moves, "\n  ")}});
  F.Cond = plusConst(N.XBase, F.Lo) + " >= 0 && " + plusConst(N.XBase, Hi) +
           " <= " + Pitch + " && " + Pitch + " % " + std::to_string(Cols) +
           " == 0 && reinterpret_cast<size_t>(" + In + ") % sizeof(" + VT +
           ") == 0";
  return F;
}

namespace {

const Expr *bare(const Expr *E) { return E->IgnoreParenImpCasts(); }

/// `A * pitch` or `pitch * A` (the pitch a name, as upperBoundName gives
/// it), casts and parentheses aside.
bool multipleOfPitch(const Expr *E, StringRef Pitch) {
  const auto *M = dyn_cast<BinaryOperator>(bare(E));
  if (!M || M->getOpcode() != BO_Mul)
    return false;
  auto IsPitch = [&](const Expr *Op) {
    const ValueDecl *D = referencedDecl(Op);
    return D && D->getName() == Pitch;
  };
  return IsPitch(M->getLHS()) || IsPitch(M->getRHS());
}

} // namespace

void planVectorStore(const EditContext &Ctx, const StencilPlan &P, ColsForm &CF,
                     const RowNames &N, ArrayRef<const Stmt *> Post,
                     ArrayRef<const VarDecl *> PerRow) {
  if (Post.size() != 1)
    return;
  const auto *Store = dyn_cast<BinaryOperator>(Post.front());
  if (!Store || Store->getOpcode() != BO_Assign)
    return;
  const auto *Sub = dyn_cast<ArraySubscriptExpr>(bare(Store->getLHS()));
  const auto *Val = dyn_cast<DeclRefExpr>(bare(Store->getRHS()));
  if (!Sub || !Val || !is_contained(PerRow, Val->getDecl()))
    return;
  // The element: `A + x` or `x + A`, A a multiple of the pitch that names
  // neither the column nor a row's own variable.
  const auto *Add = dyn_cast<BinaryOperator>(bare(Sub->getIdx()));
  if (!Add || Add->getOpcode() != BO_Add)
    return;
  bool XLeft = refersTo(Add->getLHS(), P.X);
  const Expr *X = XLeft ? Add->getLHS() : Add->getRHS();
  const Expr *A = XLeft ? Add->getRHS() : Add->getLHS();
  std::string Pitch = upperBoundName(P.GuardX);
  if (!refersTo(X, P.X) || mentions(A, P.X) || Pitch.empty() ||
      !multipleOfPitch(A, Pitch) ||
      any_of(PerRow, [&](const VarDecl *D) { return mentions(A, D); }))
    return;
  // The array: a pointer parameter whose elements have a vector of Cols
  // lanes, holding the row's variable's type exactly.
  const auto *Out = dyn_cast<DeclRefExpr>(bare(Sub->getBase()));
  const auto *OutParm = Out ? dyn_cast<ParmVarDecl>(Out->getDecl()) : nullptr;
  if (!OutParm || !OutParm->getType()->isPointerType())
    return;
  QualType Elem = OutParm->getType()->getPointeeType();
  std::optional<VectorForm> VF = colsVector(Elem, CF.Cols, Ctx.AST);
  if (!VF || !Ctx.AST.hasSameUnqualifiedType(Elem, Val->getDecl()->getType()))
    return;
  auto ASpan = looseExprSpan(Ctx, A);
  if (!ASpan)
    return;
  std::string AText =
      Ctx.Code.slice(ASpan->Begin.Offset, ASpan->End.Offset).str();
  std::string VT = VF->type(CF.Cols), Name = OutParm->getNameAsString();
  std::vector<std::string> Lanes;
  for (int64_t C = 0; C < CF.Cols; ++C)
    Lanes.push_back(Val->getDecl()->getNameAsString() + "[" + N.F + "][" +
                    std::to_string(C) + "]");
  CF.Store = "*reinterpret_cast<" + VT + " *>(&" + Name + "[" + AText + " + " +
             N.XBase + "]) = make_" + VT + "(" + join(Lanes, ", ") + ");";
  CF.Cond +=
      " && reinterpret_cast<size_t>(" + Name + ") % sizeof(" + VT + ") == 0";
}

Error shrinkStencilGrids(const EditContext &Ctx, const Edit &E,
                         const StencilPlan &P, int64_t Rows, int64_t Cols,
                         tooling::Replacements &Repl) {
  // Each launch's grid: y shrinks by R (x by Cols), and must have covered
  // exactly the rows (columns) below the guard's bound, so that the ones it
  // now adds are skipped.
  auto NotApplicable = [&](const Twine &Why) {
    return reject(E, "not-applicable", "kernel '" + E.Target + "': " + Why);
  };
  std::string YBound = upperBoundName(P.GuardY),
              XBound = Cols != 1 ? upperBoundName(P.GuardX) : std::string();
  if (YBound.empty())
    return NotApplicable("the guard has no upper bound 'y < h' on the row, so "
                         "the rows the launches cover cannot be shown");
  for (const LaunchSite &Site : P.Kernel.Info->Launches) {
    // The bound as the launch passes it: a parameter's argument, or the
    // same name (a constant) at the launch.
    auto AtLaunch = [&](const std::string &Bound) {
      for (unsigned I = 0; I < P.Kernel.Decl->getNumParams(); ++I)
        if (P.Kernel.Decl->getParamDecl(I)->getName() == Bound &&
            I < Site.Args.size())
          return Site.Args[I];
      return Bound;
    };
    struct Axis {
      unsigned Dim;
      int64_t Block, By;
      std::string Bound;
      const char *Name, *What;
    };
    std::vector<Axis> Axes = {{1, P.BY, Rows, AtLaunch(YBound), "y", "rows"}};
    if (Cols != 1)
      Axes.push_back({0, P.BX, Cols, AtLaunch(XBound), "x", "columns"});
    const VarDecl *Var = nullptr;
    std::vector<const Expr *> Extents;
    for (const Axis &A : Axes) {
      const VarDecl *AV = nullptr;
      const Expr *G = coveringExtent(Ctx, Site, A.Dim, A.Block, A.Bound, AV);
      if (!G || (Var && AV != Var))
        return NotApplicable("the grid of " + Site.Id + " ('" + Site.Grid +
                             "') is not a dim3 whose " + A.Name +
                             " extent is ceil(" + A.Bound + " / " +
                             Twine(A.Block) + "), so the " + A.What +
                             " it covers cannot be shown to be those below "
                             "the guard's bound");
      Var = AV;
      Extents.push_back(G);
    }
    if (Var) {
      std::string V = Var->getNameAsString();
      auto Div = [&](const char *Field, int64_t By) {
        return By == 1
                   ? V + "." + Field
                   : "(" + V + "." + Field + " + " + std::to_string(By - 1) +
                         ") / " + std::to_string(By);
      };
      std::string NewGrid =
          "dim3(" + Div("x", Cols) + ", " + Div("y", Rows) + ", " + V + ".z)";
      if (Error Err = addReplacement(
              Repl, replaceSpan(Ctx, Site.GridRange, NewGrid), E))
        return Err;
      continue;
    }
    for (size_t I = 0; I < Axes.size(); ++I) {
      auto S = looseExprSpan(Ctx, Extents[I]);
      if (!S)
        return NotApplicable("the grid of " + Site.Id +
                             " has no place in the file");
      std::string NewExtent =
          ceilDivText(looseExprText(Ctx, Extents[I]), Axes[I].By);
      if (Error Err = addReplacement(Repl, replaceSpan(Ctx, *S, NewExtent), E))
        return Err;
    }
  }
  return Error::success();
}

} // namespace sharedtiling
} // namespace optiml
