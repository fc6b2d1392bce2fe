//===- SharedTilingWindow.cpp - rows' window loads and interior form ------===//
//
// The loads of the register window of shared-tiling rows (the rewrite is
// SharedTilingRows.cpp), and its interior form.
//
// A thread of rows tests, per output row, the kernel's guard and, per
// read, the bounds of the read's own `if`s (`iy >= 0 && iy < h && ...`);
// the window's loads test them once more. Unrolled, conv2d rows=8 spent
// about 340 instructions per output on a 7x7 filter, 49 of them the
// multiply-adds. Most threads are far from every bound: for them every test
// holds. interiorCondition() is one test per bound at the coordinate where
// the bound is tightest over the thread's rows, the offset loops' ranges
// and the reads; where it holds, the rewrite runs a copy of the rows in
// which each of those tests is written as the value it has there
// (interiorEdits()), and the other threads run the rows as before.
//
// Why it is exact: every part of the guard and of a read's own `if`s is a
// comparison of the thread's row or column, or of the read's, with a bound
// the same for every thread (analyzeStencil refuses anything else), and
// such a comparison is monotonic in the coordinate. The least and the
// greatest row a thread's reads touch are its first row plus the least
// offset and its last row plus the greatest (offsets over the loops'
// constant ranges); so when the comparison holds there, it holds wherever
// the original tests it, and replacing the test by its value changes
// nothing the thread computes. The comparisons have no side effects: the
// bounds have none, and the coordinates are locals.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../TransformSupport.h"
#include "SharedTilingInternal.h"
#include "optiml/Support/TextTemplate.h"
#include "clang/AST/ParentMapContext.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace clang;
using namespace llvm;

namespace optiml {
namespace sharedtiling {

namespace {

/// `$ > b` and `$ >= b` bound the coordinate from below.
bool lowerBound(StringRef Cmp) { return Cmp.substr(2).starts_with(">"); }

} // namespace

// Why long: the two kinds of condition (the rows', folded per window row,
// and the elements') are built side by side, then the two templates.
WindowLoads windowLoads(const StencilPlan &P, const RowNames &N, int64_t Rows,
                        StringRef YT, StringRef XT, StringRef Elem,
                        bool Interior,
                        function_ref<std::string(StringRef)> Fresh) {
  std::string XN = P.X->getNameAsString();
  // When a window element is needed: a read of it passes its guard for
  // one of the thread's rows. Each read's condition splits into the part
  // that does not change along the window row (its row range, the guard on
  // the row index and on x), folded over the thread's rows once per window
  // row and distinct text, and the part that does (the read's own bounds,
  // in its guard's order so that the compiler shares them with the guard
  // left around the read, then its column range). Or-ing whole conditions
  // per row and element left the compiler 1,800 predicate operations on
  // conv2d rows=8 (89 registers at rows=4); split, 740 (40 registers).
  std::vector<std::string> RowConds;
  std::vector<std::pair<size_t, std::string>> Conds; // row group, the rest
  for (const StencilRead &Rd : P.Reads) {
    std::vector<std::string> RowParts = {
        N.R + " - " + N.F + " >= " + std::to_string(Rd.DY.Lo + P.HaloYLo),
        N.R + " - " + N.F + " <= " + std::to_string(Rd.DY.Hi + P.HaloYLo)};
    std::vector<std::string> Parts;
    if (!Interior) {
      for (const BoundCmp &B : P.GuardY)
        RowParts.push_back(fillIn(B.Text, N.Yr));
      for (const BoundCmp &B : P.GuardX)
        RowParts.push_back(fillIn(B.Text, XN));
      for (const std::string &G : Rd.GuardY)
        Parts.push_back(fillIn(G, N.Gy));
      for (const std::string &G : Rd.GuardX)
        Parts.push_back(fillIn(G, N.Gx));
    }
    std::string RowCond = "(" + join(RowParts, " && ") + ")";
    auto It = find(RowConds, RowCond);
    size_t Group = It - RowConds.begin();
    if (It == RowConds.end())
      RowConds.push_back(RowCond);
    Parts.push_back(N.C + " >= " + std::to_string(Rd.DX.Lo + P.HaloXLo));
    Parts.push_back(N.C + " <= " + std::to_string(Rd.DX.Hi + P.HaloXLo));
    std::pair<size_t, std::string> Cond(Group, join(Parts, " && "));
    if (!is_contained(Conds, Cond))
      Conds.push_back(std::move(Cond));
  }
  std::vector<std::string> Flags, FlagDecls, FlagUpdates;
  for (size_t G = 0; G < RowConds.size(); ++G) {
    Flags.push_back(Fresh("rowNeed"));
    FlagDecls.push_back(Flags.back() + " = false");
    FlagUpdates.push_back(Flags.back() + " = " + Flags.back() + " || " +
                          RowConds[G] + ";");
  }
  std::vector<std::string> Needs;
  for (const auto &[Group, Rest] : Conds)
    Needs.push_back("(" + Rest + " && " + Flags[Group] + ")");
  // Window row r: which of the thread's rows read it, under which guard;
  // then each element, loaded when one of them does.
  WindowLoads Loads;
  Loads.PerRow = indentLines(
      fillTemplate(
          R"(bool ${FlagDecls};
#pragma unroll
for (int ${F} = 0; ${F} < ${Rows}; ++${F}) {
  ${YrDecl}${FlagUpdates}
})",
          {{"FlagDecls", join(FlagDecls, ", ")},
           {"FlagUpdates", join(FlagUpdates, "\n  ")},
           {"F", N.F},
           {"Rows", std::to_string(Rows)},
           {"YrDecl", Interior ? std::string()
                               : "const " + YT.str() + " " + N.Yr + " = " +
                                     N.YBase + " + " + N.F + ";\n  "}}),
      "  ");
  Loads.PerElement =
      indentLines(fillTemplate(
                      R"(const ${XT} ${Gx} = ${X} + ${C} - ${HX};
const bool ${Need} = ${Conds};
${Elem} = ${Need} ? ${In}[${Cast}${Gy} * ${Pitch} + ${Gx}] : ${Zero};)",
                      {{"XT", XT.str()},
                       {"Gx", N.Gx},
                       {"X", XN},
                       {"C", N.C},
                       {"HX", std::to_string(P.HaloXLo)},
                       {"Need", N.Need},
                       {"Conds", join(Needs, " ||\n    ")},
                       {"Elem", Elem.str()},
                       {"In", P.In->getNameAsString()},
                       {"Cast", P.IndexCast},
                       {"Pitch", P.Pitch},
                       {"Gy", N.Gy},
                       // `float(0)`; a type of several
                       // words (`unsigned int`) has no
                       // functional cast.
                       {"Zero", StringRef(P.ElemType).contains(' ')
                                    ? "static_cast<" + P.ElemType + ">(0)"
                                    : P.ElemType + "(0)"}}),
                  "    ");
  return Loads;
}

std::string interiorCondition(const StencilPlan &P, StringRef YBase,
                              StringRef X, int64_t Rows, int64_t Cols) {
  std::vector<std::string> Parts;
  auto Add = [&](StringRef Cmp, bool Lower, const std::string &Least,
                 const std::string &Greatest) {
    std::string T = fillIn(Cmp, Lower ? Least : Greatest);
    if (!is_contained(Parts, T))
      Parts.push_back(std::move(T));
  };
  std::string First = YBase.str(), Last = plusConst(YBase, Rows - 1);
  for (const BoundCmp &B : P.GuardY)
    Add(B.Text, B.Lower, First, Last);
  for (const BoundCmp &B : P.GuardX)
    Add(B.Text, B.Lower, X.str(), plusConst(X, Cols - 1));
  for (const StencilRead &Rd : P.Reads) {
    for (const std::string &G : Rd.GuardY)
      Add(G, lowerBound(G), plusConst(YBase, Rd.DY.Lo),
          plusConst(YBase, Rows - 1 + Rd.DY.Hi));
    for (const std::string &G : Rd.GuardX)
      Add(G, lowerBound(G), plusConst(X, Rd.DX.Lo),
          plusConst(X, Cols - 1 + Rd.DX.Hi));
  }
  return join(Parts, " && ");
}

namespace {

/// Whether the text at \p Off is replaced by one of \p Edits.
bool replaced(unsigned Off, ArrayRef<TextEdit> Edits) {
  return any_of(Edits, [&](const TextEdit &T) {
    return T.Length && Off >= T.Offset && Off < T.Offset + T.Length;
  });
}

/// Whether some edit's text names \p Name.
bool named(StringRef Name, ArrayRef<TextEdit> Edits) {
  return any_of(
      Edits, [&](const TextEdit &T) { return namesIdentifier(T.Text, Name); });
}

/// The `if` whose whole condition \p Cond is.
const IfStmt *ifOf(const EditContext &Ctx, const Expr *Cond) {
  for (const DynTypedNode &N : Ctx.AST.getParents(*Cond))
    if (const auto *If = N.get<IfStmt>(); If && If->getCond() == Cond &&
                                          !If->getInit() &&
                                          !If->getConditionVariable())
      return If;
  return nullptr;
}

/// Every reference to a local of \p S, by the offset it is written at
/// (nothing for a local also referenced from a macro expansion: its uses
/// cannot all be seen in the text).
void localRefs(const EditContext &Ctx, const Stmt *S,
               DenseMap<const VarDecl *, std::vector<unsigned>> &Refs,
               DenseSet<const VarDecl *> &Unseen) {
  if (!S)
    return;
  if (const auto *DR = dyn_cast<DeclRefExpr>(S))
    if (const auto *V = dyn_cast<VarDecl>(DR->getDecl());
        V && V->isLocalVarDecl()) {
      if (auto Sp = looseExprSpan(Ctx, DR); Sp && DR->getLocation().isFileID())
        Refs[V].push_back(Sp->Begin.Offset);
      else
        Unseen.insert(V);
    }
  for (const Stmt *C : S->children())
    localRefs(Ctx, C, Refs, Unseen);
}

} // namespace

std::vector<TextEdit> interiorEdits(const EditContext &Ctx,
                                    const StencilPlan &P, bool Guard) {
  std::vector<TextEdit> Edits;
  auto Taken = [&](unsigned Off) {
    return any_of(Edits, [&](const TextEdit &T) { return T.Offset == Off; });
  };
  auto Write = [&](const Expr *Cond, bool Value) {
    auto S = looseExprSpan(Ctx, Cond);
    if (!S || Taken(S->Begin.Offset))
      return;
    Edits.push_back({S->Begin.Offset, S->End.Offset - S->Begin.Offset,
                     Value ? "true" : "false"});
  };
  // `if (c) S` whose c holds becomes `S`; `if (c) continue;` whose c
  // does not goes (the tests have no side effects, see above).
  auto Drop = [&](const Expr *Cond, bool Holds) {
    const IfStmt *If = ifOf(Ctx, Cond);
    if (!If || If->getElse())
      return false;
    auto IS = looseStmtSpan(Ctx, If), TS = looseStmtSpan(Ctx, If->getThen());
    if (!IS || !TS || TS->Begin.Offset <= IS->Begin.Offset ||
        Taken(IS->Begin.Offset))
      return false;
    if (Holds) {
      Edits.push_back(
          {IS->Begin.Offset, TS->Begin.Offset - IS->Begin.Offset, ""});
      return true;
    }
    if (!isa<ContinueStmt>(If->getThen()))
      return false;
    auto [B, E] = ownLines(Ctx.Code, IS->Begin.Offset, IS->End.Offset);
    Edits.push_back({B, E - B, ""});
    return true;
  };
  if (Guard)
    Write(P.Guard->getCond(), !P.EarlyReturn);
  for (const StencilRead &Rd : P.Reads)
    for (const auto &[Cond, Holds] : Rd.OwnConds)
      if (!Drop(Cond, Holds))
        Write(Cond, Holds);
  return Edits;
}

bool refSurvives(const EditContext &Ctx, const Stmt *Root, const VarDecl *V,
                 unsigned Begin, unsigned End, ArrayRef<TextEdit> Edits) {
  std::vector<TextEdit> Inside;
  for (const TextEdit &T : Edits)
    if (T.Offset >= Begin && T.Offset + T.Length <= End)
      Inside.push_back(T);
  DenseMap<const VarDecl *, std::vector<unsigned>> Refs;
  DenseSet<const VarDecl *> Unseen;
  localRefs(Ctx, Root, Refs, Unseen);
  return Unseen.count(V) || any_of(Refs.lookup(V), [&](unsigned Off) {
           return Off >= Begin && Off < End && !replaced(Off, Inside);
         });
}

std::vector<TextEdit> idleDeclEdits(const EditContext &Ctx,
                                    const StencilPlan &P, unsigned Begin,
                                    unsigned End,
                                    const std::vector<TextEdit> &Edits) {
  DenseMap<const VarDecl *, std::vector<unsigned>> Refs;
  DenseSet<const VarDecl *> Unseen;
  localRefs(Ctx, P.Kernel.Decl->getBody(), Refs, Unseen);
  std::vector<const DeclStmt *> Decls;
  std::function<void(const Stmt *)> Find = [&](const Stmt *S) {
    if (!S)
      return;
    if (const auto *DS = dyn_cast<DeclStmt>(S))
      Decls.push_back(DS);
    for (const Stmt *C : S->children())
      Find(C);
  };
  Find(P.Kernel.Decl->getBody());
  std::vector<TextEdit> All = Edits, Out;
  // A declaration goes when each of its locals is read nowhere the
  // edits leave and its initializer has no side effects; once it has
  // gone, what only it read may go too.
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (const DeclStmt *DS : Decls) {
      auto S = looseStmtSpan(Ctx, DS);
      if (!S || S->Begin.Offset < Begin || S->End.Offset > End ||
          replaced(S->Begin.Offset, All))
        continue;
      bool Idle = all_of(DS->decls(), [&](const Decl *D) {
        const auto *V = dyn_cast<VarDecl>(D);
        return V && V->isLocalVarDecl() && !V->isStaticLocal() &&
               !V->getType()->isReferenceType() && !Unseen.count(V) &&
               !named(V->getName(), All) &&
               (!V->getInit() || !V->getInit()->HasSideEffects(Ctx.AST)) &&
               all_of(Refs.lookup(V),
                      [&](unsigned Off) { return replaced(Off, All); });
      });
      // Edits inside it are dropped with it; one that starts inside and
      // ends outside (none is made so) keeps it.
      bool Straddled = any_of(All, [&](const TextEdit &T) {
        return T.Offset >= S->Begin.Offset && T.Offset < S->End.Offset &&
               (T.Offset + T.Length > S->End.Offset || !T.Length);
      });
      if (!Idle || Straddled)
        continue;
      auto [B, E] = ownLines(Ctx.Code, S->Begin.Offset, S->End.Offset);
      All.push_back({B, E - B, ""});
      Out.push_back(All.back());
      Changed = true;
    }
  }
  return Out;
}

} // namespace sharedtiling
} // namespace optiml
