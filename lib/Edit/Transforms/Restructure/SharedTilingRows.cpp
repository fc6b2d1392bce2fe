//===- SharedTilingRows.cpp - shared-tiling rows on 2D stencils -----------===//
//
// A 2D stencil (the shape SharedTilingStencil.cpp recognizes) with R
// consecutive output rows per thread: thread (x, t) computes the rows
// t * R .. t * R + R - 1 of column x. The (R + halo) x (1 + halo) input
// window those rows read is loaded once into registers, each element
// exactly when one of the thread's rows that passes the guard reads it (and
// the read's own `if` admits it), so a row's neighbours are loaded once
// instead of once per output that reads them. Then the guard and the body
// run once per row, unrolled, with every read of the input replaced by its
// window element; the loops that move a read's offset are unrolled, so the
// window's indices are constants and it lives in registers. The launches'
// grids shrink along y by R.
//
// Why it is exact: each output is computed by the original statements, with
// the same row and column, from the same input values (a window element
// holds the input element the read would have loaded: it was loaded
// because that very read runs). Rows past the guard's upper bound are
// skipped as before; the new grid covers every row the old one did, and
// rows it adds lie past the guard's bound: the grid's y extent must be
// ceil(bound / BY) for the bound the guard uses.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../TransformSupport.h"
#include "SharedStaging.h"
#include "SharedTilingInternal.h"
#include "optiml/Frontend/ASTUtil.h"
#include "optiml/Support/TextTemplate.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Stmt.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace clang;
using namespace llvm;

namespace optiml {
namespace sharedtiling {

namespace {

/// The y extent of a launch's grid: the second argument of a `dim3(...)`,
/// written at the launch or in a local variable's initializer (never
/// written after it). \p Var is that variable, if any.
const Expr *gridY(const EditContext &Ctx, const LaunchSite &Site,
                  const VarDecl *&Var) {
  Var = nullptr;
  const CUDAKernelCallExpr *Call = findLaunchCall(Ctx, Site);
  if (!Call || !Call->getConfig() || Call->getConfig()->getNumArgs() < 1)
    return nullptr;
  const Expr *G = Call->getConfig()->getArg(0)->IgnoreImplicit();
  const auto *CE = dyn_cast<CXXConstructExpr>(G);
  if (CE && CE->getNumArgs() == 1 && CE->getArg(0)->getType()->isRecordType())
    G = CE->getArg(0)->IgnoreImplicit();
  if (const auto *DR = dyn_cast<DeclRefExpr>(G)) {
    const auto *VD = dyn_cast<VarDecl>(DR->getDecl());
    const auto *Fn =
        VD ? dyn_cast<FunctionDecl>(VD->getDeclContext()) : nullptr;
    if (!VD || !VD->isLocalVarDecl() || !VD->hasInit() || !Fn ||
        !Fn->getBody() || writtenVars(Fn->getBody()).contains(VD))
      return nullptr;
    Var = VD;
    G = VD->getInit()->IgnoreImplicit();
  }
  CE = dyn_cast<CXXConstructExpr>(G);
  if (!CE || CE->getNumArgs() < 2 || isa<CXXDefaultArgExpr>(CE->getArg(1)))
    return nullptr;
  if (CE->getNumArgs() == 3 && !isa<CXXDefaultArgExpr>(CE->getArg(2)) &&
      intValue(CE->getArg(2)->IgnoreParenImpCasts(), Ctx.AST) != 1)
    return nullptr;
  return CE->getArg(1)->IgnoreParenImpCasts();
}

/// Whitespace removed, for comparing two spellings of one expression.
std::string squeeze(StringRef S) {
  std::string Out;
  for (char C : S)
    if (!isSpace(C))
      Out += C;
  return Out;
}

} // namespace

// Why long: the checks the window needs beyond the stencil shape, then
// the window's text, the body's text, and each launch's grid.
Expected<tooling::Replacements> rewriteStencilRows(const EditContext &Ctx,
                                                   const Edit &E,
                                                   const StencilPlan &P,
                                                   int64_t Rows) {
  std::string Name = "kernel '" + E.Target + "'";
  auto NotApplicable = [&](const Twine &Why) {
    return reject(E, "not-applicable", Name + ": " + Why);
  };
  if (Rows != 2 && Rows != 4 && Rows != 8)
    return reject(E, "params",
                  "rows on a 2D stencil must be 2, 4 or 8 (got " + Twine(Rows) +
                      ")");
  const KernelInfo &K = *P.Kernel.Info;
  StringRef Code = Ctx.Code;
  // The row index has its own declaration and nothing else before the
  // guard reads it: it becomes the first of the thread's rows.
  const DeclStmt *YDecl = nullptr;
  for (const Stmt *S : P.Before) {
    const auto *DS = dyn_cast<DeclStmt>(S);
    if (DS && is_contained(DS->decls(), P.Y)) {
      if (!DS->isSingleDecl())
        return NotApplicable("the row index '" + P.Y->getName() +
                             "' shares its declaration; rows needs it alone");
      YDecl = DS;
    } else if (mentions(S, P.Y)) {
      return NotApplicable("'" + P.Y->getName() +
                           "' is used before the guard at " + where(Ctx, S));
    }
  }
  int64_t WR = Rows + P.HaloYLo + P.HaloYHi, WC = 1 + P.HaloXLo + P.HaloXHi;
  if (WR * WC > 128)
    return NotApplicable("the window of " + Twine(Rows) + " rows would hold " +
                         Twine(WR * WC) +
                         " values per thread (at most 128 fit in registers)");
  auto YSpan = YDecl ? looseStmtSpan(Ctx, YDecl) : std::nullopt;
  std::string YInit = looseExprText(Ctx, P.Y->getInit());
  auto LastSpan = looseStmtSpan(
      Ctx, P.EarlyReturn ? P.Inner.back() : static_cast<const Stmt *>(P.Guard));
  if (!YSpan || YInit.empty() || !LastSpan)
    return NotApplicable("the row index or the guard has no place in the file");

  std::string FnText =
      Code.slice(K.Range.Begin.Offset, K.Range.End.Offset).str();
  auto Fresh = [&](StringRef Base) {
    std::string N = freshName(FnText, Base);
    FnText += " " + N;
    return N;
  };
  std::string YBase = Fresh(P.Y->getName().str() + "Base"), Win = Fresh("win"),
              R = Fresh("r"), C = Fresh("c"), Gy = Fresh("gy"),
              Gx = Fresh("gx"), Need = Fresh("need"), F = Fresh("f"),
              Yr = Fresh("yr");
  std::string YT = typeName(P.Y->getType(), Ctx.AST),
              XT = typeName(P.X->getType(), Ctx.AST);
  std::string XN = P.X->getNameAsString();

  // When a window element is needed: one condition per distinct read.
  std::vector<std::string> Conds;
  for (const StencilRead &Rd : P.Reads) {
    std::vector<std::string> Parts = {
        R + " - " + F + " >= " + std::to_string(Rd.DY.Lo + P.HaloYLo),
        R + " - " + F + " <= " + std::to_string(Rd.DY.Hi + P.HaloYLo),
        C + " >= " + std::to_string(Rd.DX.Lo + P.HaloXLo),
        C + " <= " + std::to_string(Rd.DX.Hi + P.HaloXLo)};
    for (const BoundCmp &B : P.GuardY)
      Parts.push_back(fillIn(B.Text, Yr));
    for (const BoundCmp &B : P.GuardX)
      Parts.push_back(fillIn(B.Text, XN));
    for (const std::string &G : Rd.GuardY)
      Parts.push_back(fillIn(G, Gy));
    for (const std::string &G : Rd.GuardX)
      Parts.push_back(fillIn(G, Gx));
    std::string Cond = "(" + join(Parts, " && ") + ")";
    if (!is_contained(Conds, Cond))
      Conds.push_back(Cond);
  }

  // The guard and the body, once per row: reads from the window, the
  // offset loops unrolled, an early return moving on to the next row.
  unsigned Begin = P.InsertAt, End = LastSpan->End.Offset;
  std::vector<TextEdit> Edits;
  for (const StencilRead &Rd : P.Reads) {
    auto S = looseExprSpan(Ctx, Rd.Access);
    if (!S)
      return NotApplicable("a read has no place in the file");
    std::string DY = offsetText(Rd.DY, P.HaloYLo);
    std::string Row = DY == "0" ? F : F + " + " + DY;
    Edits.push_back(
        {S->Begin.Offset, S->End.Offset - S->Begin.Offset,
         Win + "[" + Row + "][" + offsetText(Rd.DX, P.HaloXLo) + "]"});
  }
  for (const ForStmt *L : P.OffsetLoops) {
    auto S = looseStmtSpan(Ctx, L);
    if (!S)
      return NotApplicable("a loop has no place in the file");
    size_t LineStart = Code.rfind('\n', S->Begin.Offset);
    size_t PrevStart = LineStart == StringRef::npos || LineStart == 0
                           ? 0
                           : Code.rfind('\n', LineStart - 1) + 1;
    StringRef Prev = LineStart == StringRef::npos
                         ? StringRef()
                         : Code.slice(PrevStart, LineStart);
    if (Prev.contains("#pragma unroll"))
      continue;
    Edits.push_back(
        {S->Begin.Offset, 0,
         "#pragma unroll\n" + indentationAt(Code, S->Begin.Offset)});
  }
  if (P.EarlyReturn) {
    const Stmt *Then = P.Guard->getThen();
    if (const auto *CS = dyn_cast<CompoundStmt>(Then))
      Then = CS->body_front();
    auto S = looseStmtSpan(Ctx, Then);
    if (!S)
      return NotApplicable("the guard's return has no place in the file");
    Edits.push_back(
        {S->Begin.Offset, S->End.Offset - S->Begin.Offset, "continue;"});
  }
  std::string Body = reindent(spliceText(Code, Begin, End, std::move(Edits)),
                              2 - int(P.Indent.size()));

  std::string Text = fillTemplate(
      R"(// shared-tiling rows=${Rows}: ${Rows} rows per thread, the input window in registers.
${T} ${Win}[${WR}][${WC}];
#pragma unroll
for (int ${R} = 0; ${R} < ${WR}; ++${R}) {
  #pragma unroll
  for (int ${C} = 0; ${C} < ${WC}; ++${C}) {
    const ${YT} ${Gy} = ${YBase} + ${R} - ${HY};
    const ${XT} ${Gx} = ${X} + ${C} - ${HX};
    bool ${Need} = false;
    #pragma unroll
    for (int ${F} = 0; ${F} < ${Rows}; ++${F}) {
      const ${YT} ${Yr} = ${YBase} + ${F};
      ${Need} = ${Need} || ${Conds};
    }
    ${Win}[${R}][${C}] = ${Need} ? ${In}[${Cast}${Gy} * ${Pitch} + ${Gx}] : ${T}(0);
  }
}
#pragma unroll
for (int ${F} = 0; ${F} < ${Rows}; ++${F}) {
  const ${YT} ${Y} = ${YBase} + ${F};
  ${Body}
})",
      {{"Rows", std::to_string(Rows)},
       {"T", P.ElemType},
       {"Win", Win},
       {"WR", std::to_string(WR)},
       {"WC", std::to_string(WC)},
       {"R", R},
       {"C", C},
       {"YT", YT},
       {"XT", XT},
       {"Gy", Gy},
       {"Gx", Gx},
       {"YBase", YBase},
       {"HY", std::to_string(P.HaloYLo)},
       {"HX", std::to_string(P.HaloXLo)},
       {"X", XN},
       {"Need", Need},
       {"F", F},
       {"Yr", Yr},
       {"Conds", join(Conds, " ||\n          ")},
       {"In", P.In->getNameAsString()},
       {"Cast", P.IndexCast},
       {"Pitch", P.Pitch},
       {"Y", P.Y->getNameAsString()},
       {"Body", Body}});

  tooling::Replacements Repl;
  if (Error Err = addReplacement(Repl,
                                 replaceSpan(Ctx, *YSpan,
                                             "const " + YT + " " + YBase +
                                                 " = (" + YInit + ") * " +
                                                 std::to_string(Rows) + ";"),
                                 E))
    return std::move(Err);
  if (Error Err = addReplacement(
          Repl,
          replaceSpan(Ctx, offsetSpan(Begin, End), indentLines(Text, P.Indent)),
          E))
    return std::move(Err);

  // Each launch's grid: y shrinks by R, and must have covered exactly the
  // rows below the guard's bound, so that the rows it now adds are skipped.
  std::string Bound;
  for (const BoundCmp &B : P.GuardY)
    if (!B.Lower && StringRef(B.Text).starts_with("$ < ")) {
      StringRef T = StringRef(B.Text).drop_front(4).trim();
      if (T.starts_with("(") && T.ends_with(")"))
        T = T.drop_front().drop_back().trim();
      // `$ < h - 1` needs no more rows than `$ < h`.
      if (size_t Minus = T.rfind(" - ");
          Minus != StringRef::npos &&
          all_of(T.substr(Minus + 3), [](char Ch) { return isDigit(Ch); }))
        T = T.take_front(Minus);
      if (all_of(T, [](char Ch) { return isAlnum(Ch) || Ch == '_'; }))
        Bound = T.str();
    }
  if (Bound.empty())
    return NotApplicable("the guard has no upper bound 'y < h' on the row, so "
                         "the rows the launches cover cannot be shown");
  for (const LaunchSite &Site : K.Launches) {
    const VarDecl *Var = nullptr;
    const Expr *Gy2 = gridY(Ctx, Site, Var);
    auto CD =
        Gy2 ? matchCeilDiv(Gy2,
                           [&](const Expr *X) {
                             return intValue(X->IgnoreParenImpCasts(), Ctx.AST);
                           })
            : std::nullopt;
    // The bound as the launch passes it: a parameter's argument, or the
    // same name (a constant) at the launch.
    std::string AtLaunch = Bound;
    for (unsigned I = 0; I < P.Kernel.Decl->getNumParams(); ++I)
      if (P.Kernel.Decl->getParamDecl(I)->getName() == Bound &&
          I < Site.Args.size())
        AtLaunch = Site.Args[I];
    if (!CD || CD->Divisor != P.BY ||
        squeeze(looseExprText(Ctx, CD->Numerator)) !=
            squeeze(StringRef(AtLaunch).trim("()")))
      return NotApplicable("the grid of " + Site.Id + " ('" + Site.Grid +
                           "') is not a dim3 whose y extent is ceil(" +
                           AtLaunch + " / " + Twine(P.BY) +
                           "), so the rows it covers cannot be shown to be " +
                           "those below the guard's bound");
    std::string NewGrid;
    SourceSpan At;
    if (Var) {
      std::string V = Var->getNameAsString();
      NewGrid = "dim3(" + V + ".x, (" + V + ".y + " + std::to_string(Rows - 1) +
                ") / " + std::to_string(Rows) + ", " + V + ".z)";
      At = Site.GridRange;
    } else {
      auto S = looseExprSpan(Ctx, Gy2);
      if (!S)
        return NotApplicable("the grid of " + Site.Id +
                             " has no place in "
                             "the file");
      NewGrid = ceilDivText(looseExprText(Ctx, Gy2), Rows);
      At = *S;
    }
    if (Error Err = addReplacement(Repl, replaceSpan(Ctx, At, NewGrid), E))
      return std::move(Err);
  }
  return Repl;
}

} // namespace sharedtiling
} // namespace optiml
