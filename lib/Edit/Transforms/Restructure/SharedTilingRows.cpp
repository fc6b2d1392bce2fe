//===- SharedTilingRows.cpp - shared-tiling rewrites of 2D stencils -------===//
//
// The staged tile (rewriteStencil, the plan of SharedTilingStencil.cpp: the
// block loads its tile with the halo, then each read reads the tile), and
// rows:
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
#include "../../Patterns/SideEffects.h"
#include "../TransformSupport.h"
#include "SharedStaging.h"
#include "SharedTilingInternal.h"
#include "optiml/Frontend/ASTUtil.h"
#include "optiml/Support/TextTemplate.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/Stmt.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace clang;
using namespace llvm;

namespace optiml {
namespace sharedtiling {

namespace {

/// The streamed form's shape: the guarded statements are Pre, one loop
/// whose variable V moves every read's row by exactly V (all reads are in
/// it), and Post; Pre declares the row's own variables (one per row once
/// streamed) and writes no memory; neither does the loop.
struct StreamShape {
  std::vector<const Stmt *> Pre, Post;
  const ForStmt *Loop = nullptr;
  const VarDecl *V = nullptr;
  int64_t Lo = 0, Hi = 0;
  int64_t Shift = 0; ///< a read at V for row f is window row f + V + Shift
  std::vector<const VarDecl *> PerRow;
};

/// The guarded statements as a list (the guard's braces opened).
std::vector<const Stmt *> guardedStmts(const StencilPlan &P) {
  if (!P.EarlyReturn && P.Inner.size() == 1)
    if (const auto *CS = dyn_cast<CompoundStmt>(P.Inner.front()))
      return {CS->body_begin(), CS->body_end()};
  return P.Inner;
}

std::optional<StreamShape> streamShape(const EditContext &Ctx,
                                       const StencilPlan &P) {
  std::vector<const Stmt *> Stmts = guardedStmts(P);
  size_t At = Stmts.size();
  for (size_t I = 0; I < Stmts.size(); ++I)
    if (any_of(P.Reads, [&](const StencilRead &Rd) {
          return containsStmt(Stmts[I], Rd.Access);
        })) {
      if (At != Stmts.size())
        return std::nullopt;
      At = I;
    }
  if (At == Stmts.size())
    return std::nullopt;
  StreamShape Sh;
  const Stmt *LS = Stmts[At];
  if (const auto *AS = dyn_cast<AttributedStmt>(LS))
    LS = AS->getSubStmt();
  Sh.Loop = dyn_cast<ForStmt>(LS);
  if (!Sh.Loop || !is_contained(P.OffsetLoops, Sh.Loop))
    return std::nullopt;
  const auto *DS = dyn_cast_or_null<DeclStmt>(Sh.Loop->getInit());
  Sh.V = DS && DS->isSingleDecl() ? dyn_cast<VarDecl>(DS->getSingleDecl())
                                  : nullptr;
  if (!Sh.V)
    return std::nullopt;
  std::optional<int64_t> Const;
  for (const StencilRead &Rd : P.Reads) {
    if (Rd.DY.Vars.size() != 1 || Rd.DY.Vars[0].first != Sh.V ||
        Rd.DY.Vars[0].second != 1 || (Const && *Const != Rd.DY.Const))
      return std::nullopt;
    Const = Rd.DY.Const;
    Sh.Lo = Rd.DY.Lo - *Const;
    Sh.Hi = Rd.DY.Hi - *Const;
  }
  Sh.Shift = *Const + P.HaloYLo;
  Sh.Pre.assign(Stmts.begin(), Stmts.begin() + At);
  Sh.Post.assign(Stmts.begin() + At + 1, Stmts.end());
  for (const Stmt *S : Stmts)
    if (!onlyConstantMacros(S, Ctx.AST))
      return std::nullopt;
  if (!memoryWrites(Sh.Loop).empty())
    return std::nullopt;
  for (const Stmt *S : Sh.Pre) {
    if (!memoryWrites(S).empty())
      return std::nullopt;
    const auto *D = dyn_cast<DeclStmt>(S);
    if (!D)
      continue;
    for (const Decl *Dc : D->decls()) {
      const auto *VD = dyn_cast<VarDecl>(Dc);
      if (!VD)
        return std::nullopt;
      QualType T = VD->getType();
      const CXXRecordDecl *RD = T->getAsCXXRecordDecl();
      if (T->isArrayType() || T->isReferenceType() ||
          (RD && !RD->hasTrivialDefaultConstructor()) ||
          (VD->hasInit() && VD->getInitStyle() != VarDecl::CInit))
        return std::nullopt;
      Sh.PerRow.push_back(VD);
    }
  }
  return Sh;
}

/// Why a thread's rows could not run one after another as separate
/// outputs: a variable declared outside the guarded code and written in it
/// would carry from one row to the next. Empty when none is.
std::string carriedVariable(const EditContext &Ctx, const StencilPlan &P) {
  DenseSet<const ValueDecl *> Own;
  std::function<void(const Stmt *)> Declared = [&](const Stmt *S) {
    if (!S)
      return;
    if (const auto *DS = dyn_cast<DeclStmt>(S))
      for (const Decl *D : DS->decls())
        if (const auto *VD = dyn_cast<ValueDecl>(D))
          Own.insert(VD);
    for (const Stmt *C : S->children())
      Declared(C);
  };
  for (const Stmt *S : P.Inner)
    Declared(S);
  for (const Stmt *S : P.Inner)
    for (const ValueDecl *D : writtenDecls(S))
      if (!Own.contains(D))
        return "'" + D->getNameAsString() +
               "' is declared outside the guarded code and written at " +
               where(Ctx, S) +
               ": with several rows per thread it would carry "
               "from one row to the next";
  return "";
}

/// The body of the window form: the whole window loaded, then the guard and
/// the body once per row.
std::string windowText(const StencilPlan &P, const RowNames &N, int64_t Rows,
                       int64_t WR, int64_t WC, const WindowLoads &Loads,
                       llvm::StringRef Body, llvm::StringRef YT, bool YUsed) {
  return fillTemplate(
      R"(// shared-tiling rows=${Rows}: ${Rows} rows per thread, the input window in registers.
${T} ${Win}[${WR}][${WC}];
#pragma unroll
for (int ${R} = 0; ${R} < ${WR}; ++${R}) {
  const ${YT} ${Gy} = ${YBase} + ${R} - ${HY};
  ${RowLoads}
  #pragma unroll
  for (int ${C} = 0; ${C} < ${WC}; ++${C}) {
    ${Loads}
  }
}
#pragma unroll
for (int ${F} = 0; ${F} < ${Rows}; ++${F}) {
  ${YLine}${Body}
})",
      {{"Rows", std::to_string(Rows)},
       {"T", P.ElemType},
       {"Win", N.Win},
       {"WR", std::to_string(WR)},
       {"WC", std::to_string(WC)},
       {"R", N.R},
       {"C", N.C},
       {"YT", YT.str()},
       {"Gy", N.Gy},
       {"YBase", N.YBase},
       {"HY", std::to_string(P.HaloYLo)},
       {"F", N.F},
       {"RowLoads", Loads.PerRow},
       {"Loads", Loads.PerElement},
       {"YLine", YUsed ? "const " + YT.str() + " " + P.Y->getNameAsString() +
                             " = " + N.YBase + " + " + N.F + ";\n  "
                       : std::string()},
       {"Body", Body.str()}});
}

/// A block's text without its braces (the lines between them, trimmed).
std::string unbraced(StringRef Block) {
  Block = Block.trim();
  if (Block.starts_with("{") && Block.ends_with("}"))
    Block = Block.drop_front().drop_back().trim();
  return Block.str();
}

/// The text of [Begin, End) with the edits inside it, lines after the first
/// moved from column \p From to \p To.
std::string regionText(StringRef Code, unsigned Begin, unsigned End,
                       const std::vector<TextEdit> &Edits, size_t From,
                       size_t To) {
  std::vector<TextEdit> Inside;
  for (const TextEdit &E : Edits)
    if (E.Offset >= Begin && E.Offset + E.Length <= End)
      Inside.push_back(E);
  return reindent(spliceText(Code, Begin, End, std::move(Inside)),
                  int(To) - int(From));
}

// Why long: the streamed form's text is three loops over the rows (their
// start, the window rows, their end) around the three parts of the guarded
// code, each part regenerated with its variables renamed per row. With
// \p Interior, the rows' guard is written as the `true` it is there. With
// \p CF (cols), each part runs once per column, the row's variables are
// renamed per row and column, and the window row is loaded as vectors.
Expected<std::string>
streamedText(const EditContext &Ctx, const Edit &E, const StencilPlan &P,
             const StreamShape &Sh, const RowNames &N, int64_t Rows, int64_t WR,
             int64_t WC, const WindowLoads &Loads, std::vector<TextEdit> Edits,
             llvm::StringRef YT, bool Interior, const ColsForm *CF) {
  auto NotApplicable = [&](const Twine &Why) {
    return reject(E, "not-applicable", "kernel '" + E.Target + "': " + Why);
  };
  StringRef Code = Ctx.Code;
  // Pre's declarations the edits remove (a row pointer whose every read
  // became a window read, idleDeclEdits): neither kept per row nor written.
  std::vector<const Stmt *> PreKept;
  DenseSet<const VarDecl *> Gone;
  for (const Stmt *S : Sh.Pre) {
    auto Sp = looseStmtSpan(Ctx, S);
    bool Removed =
        isa<DeclStmt>(S) && Sp && any_of(Edits, [&](const TextEdit &T) {
          return T.Text.empty() && T.Offset <= Sp->Begin.Offset &&
                 T.Offset + T.Length >= Sp->End.Offset;
        });
    if (!Removed) {
      PreKept.push_back(S);
      continue;
    }
    for (const Decl *D : cast<DeclStmt>(S)->decls())
      Gone.insert(cast<VarDecl>(D));
  }
  std::vector<const VarDecl *> PerRow;
  for (const VarDecl *D : Sh.PerRow)
    if (!Gone.contains(D))
      PerRow.push_back(D);
  // Each row's own variables: `sum` becomes `sum[f]` (`sum[f][cx]`).
  std::string Idx = "[" + N.F + "]" + (CF ? "[" + N.Cx + "]" : "");
  std::vector<TextEdit> Renames;
  std::vector<const Stmt *> All = PreKept;
  All.push_back(Sh.Loop);
  llvm::append_range(All, Sh.Post);
  for (const VarDecl *D : PerRow)
    for (const Stmt *S : All) {
      std::vector<const DeclRefExpr *> Refs;
      collectRefs(S, D, Refs);
      for (const DeclRefExpr *Ref : Refs) {
        auto Sp = looseExprSpan(Ctx, Ref);
        if (!Sp)
          return NotApplicable("a use of '" + D->getName() +
                               "' has no place in the file");
        bool InRead = any_of(P.Reads, [&](const StencilRead &Rd) {
          return containsStmt(Rd.Access, Ref);
        });
        if (!InRead)
          Renames.push_back({Sp->Begin.Offset,
                             Sp->End.Offset - Sp->Begin.Offset,
                             D->getNameAsString() + Idx});
      }
    }
  std::string Decls;
  for (const VarDecl *D : PerRow)
    Decls += typeName(D->getType().getUnqualifiedType(), Ctx.AST) + " " +
             D->getNameAsString() + "[" + std::to_string(Rows) + "]" +
             (CF ? "[" + std::to_string(CF->Cols) + "]" : "") + ";\n";
  // Pre's declarations become assignments (their initializers renamed).
  for (const Stmt *S : PreKept) {
    const auto *DS = dyn_cast<DeclStmt>(S);
    if (!DS)
      continue;
    auto Sp = looseStmtSpan(Ctx, DS);
    if (!Sp)
      return NotApplicable("a declaration has no place in the file");
    std::string Text;
    for (const Decl *Dc : DS->decls()) {
      const auto *VD = cast<VarDecl>(Dc);
      if (!VD->hasInit())
        continue;
      auto Init = looseExprSpan(Ctx, VD->getInit());
      if (!Init)
        return NotApplicable("the initializer of '" + VD->getName() +
                             "' has no place in the file");
      Text += (Text.empty() ? "" : " ") + VD->getNameAsString() + Idx + " = " +
              regionText(Code, Init->Begin.Offset, Init->End.Offset, Renames, 0,
                         0) +
              ";";
    }
    llvm::erase_if(Renames, [&](const TextEdit &R) {
      return R.Offset >= Sp->Begin.Offset && R.Offset < Sp->End.Offset;
    });
    Edits.push_back(
        {Sp->Begin.Offset, Sp->End.Offset - Sp->Begin.Offset, Text});
  }
  llvm::append_range(Edits, Renames);

  auto Part = [&](const std::vector<const Stmt *> &Ss, size_t To,
                  std::string &Out) -> bool {
    if (Ss.empty())
      return true;
    auto B = looseStmtSpan(Ctx, Ss.front()),
         End = looseStmtSpan(Ctx, Ss.back());
    if (!B || !End)
      return false;
    Out = regionText(Code, B->Begin.Offset, End->End.Offset, Edits,
                     indentationAt(Code, B->Begin.Offset).size(), To);
    return true;
  };
  std::string Pre, Post, Body;
  size_t PartIndent = CF ? 6 : 4;
  if (!Part(PreKept, PartIndent, Pre) || !Part(Sh.Post, PartIndent, Post))
    return NotApplicable("the guarded code has no place in the file");
  const Stmt *LB = Sh.Loop->getBody();
  auto BSp = looseStmtSpan(Ctx, LB);
  if (!BSp)
    return NotApplicable("the loop's body has no place in the file");
  if (isa<CompoundStmt>(LB))
    Body =
        regionText(Code, BSp->Begin.Offset, BSp->End.Offset, Edits,
                   indentationAt(Code, BSp->End.Offset - 1).size(), PartIndent);
  else
    Body = "{\n" + std::string(PartIndent + 2, ' ') +
           regionText(Code, BSp->Begin.Offset, BSp->End.Offset, Edits,
                      indentationAt(Code, BSp->Begin.Offset).size(),
                      PartIndent + 2) +
           "\n" + std::string(PartIndent, ' ') + "}";

  std::string Cond = looseExprText(Ctx, P.Guard->getCond());
  if (Cond.empty())
    return NotApplicable("the guard has no place in the file");
  if (P.EarlyReturn)
    Cond = "!(" + Cond + ")";
  if (Interior)
    Cond = "true";
  std::string Y = P.Y->getNameAsString(), F = N.F;
  // The row index, where the loop's body uses it after the edits (other
  // than in a read, or, in the interior form, a test); with cols, the
  // column index likewise.
  auto Survives = [&](const VarDecl *V) {
    return refSurvives(Ctx, LB, V, BSp->Begin.Offset, BSp->End.Offset, Edits);
  };
  std::string YDecl =
      "const " + YT.str() + " " + Y + " = " + N.YBase + " + " + F + ";\n  ";
  std::string YLine = Survives(P.Y) ? YDecl + "  " : std::string();
  auto Mentions = [&](const std::vector<const Stmt *> &Ss, const VarDecl *V) {
    return any_of(Ss, [&](const Stmt *S) { return mentions(S, V); });
  };
  // Per column: `for (cx ...) { const int x = xBase + cx; Part }`.
  auto PerColumn = [&](const std::string &Part, bool XUsed,
                       const std::string &Indent) {
    if (!CF)
      return Part;
    std::string XDecl = XUsed ? "const " + CF->XT + " " +
                                    P.X->getNameAsString() + " = " + N.XBase +
                                    " + " + N.Cx + ";\n" + Indent + "  "
                              : std::string();
    return "#pragma unroll\n" + Indent + "for (int " + N.Cx + " = 0; " + N.Cx +
           " < " + std::to_string(CF->Cols) + "; ++" + N.Cx + ") {\n" + Indent +
           "  " + XDecl + Part + "\n" + Indent + "}";
  };
  bool PostY = Mentions(Sh.Post, P.Y);
  // Where the guard is written `true`, the row index only for Pre.
  bool StartY = !Interior || Mentions(PreKept, P.Y);
  std::string Start =
      "#pragma unroll\nfor (int " + F + " = 0; " + F + " < " +
      std::to_string(Rows) + "; ++" + F + ") {\n  " +
      (StartY ? YDecl : std::string()) + N.Run + "[" + F + "] = " + Cond +
      ";\n" +
      (PreKept.empty()
           ? std::string()
           : "  if (" + N.Run + "[" + F + "]) {\n    " +
                 PerColumn(Pre, Mentions(PreKept, P.X), "    ") + "\n  }\n") +
      "}";
  std::string End =
      Sh.Post.empty()
          ? std::string()
          : "\n#pragma unroll\nfor (int " + F + " = 0; " + F + " < " +
                std::to_string(Rows) + "; ++" + F + ") {\n  " +
                (PostY ? YDecl : std::string()) + "if (" + N.Run + "[" + F +
                "]) {\n    " +
                (CF && !CF->Store.empty()
                     ? CF->Store
                     : PerColumn(Post, Mentions(Sh.Post, P.X), "    ")) +
                "\n  }\n}";
  // The window row: its elements one by one, or (cols) as vectors.
  std::string Window = CF ? P.ElemType + " " + N.Win + "[" +
                                std::to_string(CF->Width) + "];\n  " +
                                indentLines(CF->Loads, "  ")
                          : fillTemplate(R"(${RowLoads}
  ${T} ${Win}[${WC}];
  #pragma unroll
  for (int ${C} = 0; ${C} < ${WC}; ++${C}) {
    ${Loads}
  })",
                                         {{"RowLoads", Loads.PerRow},
                                          {"T", P.ElemType},
                                          {"Win", N.Win},
                                          {"WC", std::to_string(WC)},
                                          {"C", N.C},
                                          {"Loads", Loads.PerElement}});
  std::string VT = typeName(Sh.V->getType(), Ctx.AST);
  return fillTemplate(
      R"(// shared-tiling rows=${Rows}${ColsNote}: ${Rows} rows per thread, the input streamed through registers one row at a time.
bool ${Run}[${Rows}];
${Decls}${Start}
#pragma unroll
for (int ${R} = 0; ${R} < ${WR}; ++${R}) {
  const ${YT} ${Gy} = ${YBase} + ${R} - ${HY};
  ${Window}
  #pragma unroll
  for (int ${F} = 0; ${F} < ${Rows}; ++${F}) {
    ${YLine}const ${VT} ${V} = ${VInit};
    if (${Run}[${F}] && ${V} >= ${Lo} && ${V} <= ${Hi}) ${Body}
  }
}${End})",
      {{"Rows", std::to_string(Rows)},
       {"ColsNote", CF ? " cols=" + std::to_string(CF->Cols) +
                             " (each window row loaded as vectors)"
                       : std::string()},
       {"Run", N.Run},
       {"Decls", Decls},
       {"Start", Start},
       {"R", N.R},
       {"WR", std::to_string(WR)},
       {"YT", YT.str()},
       {"Gy", N.Gy},
       {"YBase", N.YBase},
       {"HY", std::to_string(P.HaloYLo)},
       {"Window", Window},
       {"F", F},
       {"YLine", YLine},
       {"VT", VT},
       {"V", Sh.V->getNameAsString()},
       {"VInit", plusConst(N.R + " - " + F, -Sh.Shift)},
       {"Lo", std::to_string(Sh.Lo)},
       {"Hi", std::to_string(Sh.Hi)},
       {"Body", CF ? "{\n      " +
                         PerColumn(unbraced(Body), Survives(P.X), "      ") +
                         "\n    }"
                   : Body},
       {"End", End}});
}

} // namespace

bool streamsRows(const EditContext &Ctx, const StencilPlan &P) {
  return streamShape(Ctx, P).has_value();
}

// Why long: the checks the rows need beyond the stencil shape, the cols
// plan, the loads' text, the reads' edits (a second set for cols' vector
// window), either form's text and cols' edge form, then the launches.
Expected<tooling::Replacements> rewriteStencilRows(const EditContext &Ctx,
                                                   const Edit &E,
                                                   const StencilPlan &P,
                                                   int64_t Rows, int64_t Cols) {
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
  if (std::string Why = carriedVariable(Ctx, P); !Why.empty())
    return NotApplicable(Why);
  std::optional<StreamShape> Stream = streamShape(Ctx, P);
  int64_t WR = Rows + P.HaloYLo + P.HaloYHi, WC = 1 + P.HaloXLo + P.HaloXHi;
  if (!Stream && WR * WC > 128)
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
  RowNames N;
  N.YBase = Fresh(P.Y->getName().str() + "Base");
  N.Win = Fresh("win");
  N.R = Fresh("r");
  N.C = Fresh("c");
  N.Gy = Fresh("gy");
  N.Gx = Fresh("gx");
  N.Need = Fresh("need");
  N.F = Fresh("f");
  N.Yr = Fresh("yr");
  N.Run = Fresh("run");
  std::string YT = typeName(P.Y->getType(), Ctx.AST),
              XT = typeName(P.X->getType(), Ctx.AST);
  std::string XN = P.X->getNameAsString();
  // cols: the thread's columns (SharedTilingCols.cpp).
  std::optional<ColsForm> CF;
  if (Cols != 1) {
    if (!Stream)
      return NotApplicable("cols takes a stencil whose guarded code loops "
                           "over the rows its reads move along (the streamed "
                           "form of rows)");
    N.XBase = Fresh(XN + "Base");
    N.Cx = Fresh("cx");
    auto Form = planCols(Ctx, E, P, Cols, N, Fresh);
    if (!Form)
      return Form.takeError();
    CF = std::move(*Form);
    planVectorStore(Ctx, P, *CF, N, Stream->Post, Stream->PerRow);
  }

  // Reads from the window, the offset loops unrolled.
  unsigned Begin = P.InsertAt, End = LastSpan->End.Offset;
  // With cols, the interior form's window row starts CF->Lo columns from
  // the thread's first column: column cx's read at dx is its element
  // cx + dx - CF->Lo.
  std::vector<TextEdit> Edits, ColsReads;
  for (const StencilRead &Rd : P.Reads) {
    auto S = looseExprSpan(Ctx, Rd.Access);
    if (!S)
      return NotApplicable("a read has no place in the file");
    std::string DY = offsetText(Rd.DY, P.HaloYLo);
    std::string Row = DY == "0" ? N.F : N.F + " + " + DY;
    std::string Col = "[" + offsetText(Rd.DX, P.HaloXLo) + "]";
    Edits.push_back({S->Begin.Offset, S->End.Offset - S->Begin.Offset,
                     N.Win + (Stream ? "" : "[" + Row + "]") + Col});
    if (CF) {
      std::string DX = offsetText(Rd.DX, -CF->Lo);
      ColsReads.push_back({S->Begin.Offset, S->End.Offset - S->Begin.Offset,
                           N.Win + "[" + N.Cx +
                               (DX == "0" ? std::string() : " + " + DX) + "]"});
    }
  }
  for (const ForStmt *L : P.OffsetLoops) {
    if (Stream && L == Stream->Loop)
      continue;
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
    ColsReads.push_back(Edits.back());
  }
  // The guard and the body, once per row: an early return moves on to the
  // next row.
  auto ReturnAsContinue = [&]() -> std::optional<TextEdit> {
    const Stmt *Then = P.Guard->getThen();
    if (const auto *CS = dyn_cast<CompoundStmt>(Then))
      Then = CS->body_front();
    auto S = looseStmtSpan(Ctx, Then);
    if (!S)
      return std::nullopt;
    return TextEdit{S->Begin.Offset, S->End.Offset - S->Begin.Offset,
                    "continue;"};
  };
  if (!Stream && P.EarlyReturn) {
    auto C = ReturnAsContinue();
    if (!C)
      return NotApplicable("the guard's return has no place in the file");
    Edits.push_back(*C);
  }
  // The rows as they test every bound, or as they run where every test
  // holds (SharedTilingWindow.cpp); the edits that write the tests' values
  // go first, so that they win over any edit inside a test.
  auto RowsText = [&](bool Interior) -> Expected<std::string> {
    std::string Elem =
        N.Win + (Stream ? "" : "[" + N.R + "]") + "[" + N.C + "]";
    WindowLoads Loads = windowLoads(P, N, Rows, YT, XT, Elem, Interior, Fresh);
    std::vector<TextEdit> All;
    if (Interior)
      All = interiorEdits(Ctx, P, /*Guard=*/!Stream);
    llvm::append_range(All, CF && Interior ? ColsReads : Edits);
    // Declarations only the replaced reads (or, in the interior form, the
    // tests) read go: a row pointer into the input, an index.
    std::vector<TextEdit> Idle = idleDeclEdits(Ctx, P, Begin, End, All);
    All.insert(All.begin(), Idle.begin(), Idle.end());
    if (Stream)
      return streamedText(Ctx, E, P, *Stream, N, Rows, WR, WC, Loads,
                          std::move(All), YT, Interior,
                          CF && Interior ? &*CF : nullptr);
    bool YUsed =
        refSurvives(Ctx, P.Kernel.Decl->getBody(), P.Y, Begin, End, All);
    std::string Body = reindent(spliceText(Code, Begin, End, std::move(All)),
                                2 - int(P.Indent.size()));
    return windowText(P, N, Rows, WR, WC, Loads, Body, YT, YUsed);
  };
  auto Text = RowsText(false);
  if (!Text)
    return Text.takeError();
  // With cols, the threads outside the interior (few, but in every warp
  // along the image's left and right edges) run the rows' tested form
  // above, one column at a time, in a loop kept rolled: each column
  // streams its own window with every test kept, so its registers stay
  // those of one column (conv2d: the kernel keeps the interior's 48; both
  // columns' windows at once took 56). It replaced a per-output loop, which
  // ran each output's reads and tests one by one (about five times the
  // interior's instructions, conv2d's edge warps 13% of its time).
  if (CF)
    *Text = fillTemplate(
        R"(// The edge form: each of the thread's columns in turn, every test kept.
#pragma unroll 1
for (int ${Cx} = 0; ${Cx} < ${Cols}; ++${Cx}) {
  const ${XT} ${X} = ${XBase} + ${Cx};
  ${Rows}
})",
        {{"Cx", N.Cx},
         {"Cols", std::to_string(Cols)},
         {"XT", XT},
         {"X", XN},
         {"XBase", N.XBase},
         {"Rows", indentLines(*Text, "  ")}});
  std::string Inside =
      interiorCondition(P, N.YBase, CF ? N.XBase : XN, Rows, Cols);
  if (CF)
    Inside = Inside.empty() ? CF->Cond : Inside + " && " + CF->Cond;
  if (!Inside.empty()) {
    auto Fast = RowsText(true);
    if (!Fast)
      return Fast.takeError();
    *Text = "// Threads whose every bounds test holds skip the tests.\nif (" +
            Inside + ") {\n  " + indentLines(*Fast, "  ") + "\n} else {\n  " +
            indentLines(*Text, "  ") + "\n}";
  }

  tooling::Replacements Repl;
  if (Error Err = addPinAsserts(Ctx, E, P, Repl))
    return std::move(Err);
  if (Error Err = addReplacement(Repl,
                                 replaceSpan(Ctx, *YSpan,
                                             "const " + YT + " " + N.YBase +
                                                 " = (" + YInit + ") * " +
                                                 std::to_string(Rows) + ";"),
                                 E))
    return std::move(Err);
  if (CF) {
    auto XSpan = looseStmtSpan(Ctx, CF->XDecl);
    if (!XSpan)
      return NotApplicable("the column index has no place in the file");
    if (Error Err = addReplacement(Repl,
                                   replaceSpan(Ctx, *XSpan,
                                               "const " + XT + " " + N.XBase +
                                                   " = (" + CF->XInit + ") * " +
                                                   std::to_string(Cols) + ";"),
                                   E))
      return std::move(Err);
  }
  if (Error Err = addReplacement(Repl,
                                 replaceSpan(Ctx, offsetSpan(Begin, End),
                                             indentLines(*Text, P.Indent)),
                                 E))
    return std::move(Err);

  if (Error Err = shrinkStencilGrids(Ctx, E, P, Rows, CF ? Cols : 1, Repl))
    return std::move(Err);
  return Repl;
}

/// Offsets rendered: "ky - 3", "1", "0".
std::string offsetText(const Offset &O, int64_t Add) {
  std::string S;
  for (const auto &[V, C] : O.Vars) {
    std::string Term = (C == 1 || C == -1) ? V->getNameAsString()
                                           : std::to_string(C < 0 ? -C : C) +
                                                 " * " + V->getNameAsString();
    if (S.empty())
      S = C < 0 ? "-" + Term : Term;
    else
      S += (C < 0 ? " - " : " + ") + Term;
  }
  int64_t K = O.Const + Add;
  if (S.empty())
    return std::to_string(K);
  return plusConst(S, K);
}

Expected<tooling::Replacements>
rewriteStencil(const EditContext &Ctx, const Edit &E, const StencilPlan &P) {
  const KernelInfo &K = *P.Kernel.Info;
  std::string FnText =
      Ctx.Code.slice(K.Range.Begin.Offset, K.Range.End.Offset).str();
  HaloTile T;
  T.ElemType = P.ElemType;
  T.Tile = freshName(FnText, P.In->getName().str() + "Tile");
  T.Slot = freshName(FnText, "slot");
  T.Ty = freshName(FnText, "ty");
  T.Tx = freshName(FnText, "tx");
  T.Gy = freshName(FnText, "gy");
  T.Gx = freshName(FnText, "gx");
  T.BX = P.BX;
  T.BY = P.BY;
  T.HaloY = P.HaloYLo;
  T.HaloX = P.HaloXLo;
  T.Rows = P.BY + P.HaloYLo + P.HaloYHi;
  T.Cols = P.BX + P.HaloXLo + P.HaloXHi;
  T.Load = P.In->getNameAsString() + "[" + P.IndexCast + T.Gy + " * " +
           P.Pitch + " + " + T.Gx + "]";

  // One condition per box of reads: some thread of the block that passes
  // the guard reads the slot. Boxes of reads with the same own guards merge
  // when they touch.
  struct Box {
    int64_t YLo, YHi, XLo, XHi;
    std::vector<std::string> GY, GX;
  };
  std::vector<Box> Boxes;
  for (const StencilRead &R : P.Reads) {
    Box B{R.DY.Lo, R.DY.Hi, R.DX.Lo, R.DX.Hi, R.GuardY, R.GuardX};
    if (none_of(Boxes, [&](const Box &O) {
          return O.YLo == B.YLo && O.YHi == B.YHi && O.XLo == B.XLo &&
                 O.XHi == B.XHi && O.GY == B.GY && O.GX == B.GX;
        }))
      Boxes.push_back(B);
  }
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (size_t I = 0; I < Boxes.size() && !Changed; ++I)
      for (size_t J = I + 1; J < Boxes.size() && !Changed; ++J) {
        Box &A = Boxes[I], &B = Boxes[J];
        if (A.GY != B.GY || A.GX != B.GX)
          continue;
        bool SameY = A.YLo == B.YLo && A.YHi == B.YHi;
        bool SameX = A.XLo == B.XLo && A.XHi == B.XHi;
        bool TouchX = A.XLo <= B.XHi + 1 && B.XLo <= A.XHi + 1;
        bool TouchY = A.YLo <= B.YHi + 1 && B.YLo <= A.YHi + 1;
        if ((SameY && TouchX) || (SameX && TouchY)) {
          A.YLo = std::min(A.YLo, B.YLo);
          A.YHi = std::max(A.YHi, B.YHi);
          A.XLo = std::min(A.XLo, B.XLo);
          A.XHi = std::max(A.XHi, B.XHi);
          Boxes.erase(Boxes.begin() + J);
          Changed = true;
        }
      }
  }
  std::vector<std::string> Conds;
  for (const Box &B : Boxes) {
    std::vector<std::string> Parts;
    // A reader row r = gy - d for some d in [YLo, YHi]: the guard's lower
    // bounds hold for the largest r, its upper bounds for the smallest.
    for (const BoundCmp &C : P.GuardY)
      Parts.push_back(
          fillIn(C.Text, plusConst(T.Gy, C.Lower ? -B.YLo : -B.YHi)));
    for (const BoundCmp &C : P.GuardX)
      Parts.push_back(
          fillIn(C.Text, plusConst(T.Gx, C.Lower ? -B.XLo : -B.XHi)));
    // ... and the reader lies in this block.
    if (P.HaloYLo + B.YLo > 0)
      Parts.push_back(T.Ty + " >= " + std::to_string(P.HaloYLo + B.YLo));
    if (P.HaloYLo + P.BY + B.YHi < T.Rows)
      Parts.push_back(T.Ty + " < " + std::to_string(P.HaloYLo + P.BY + B.YHi));
    if (P.HaloXLo + B.XLo > 0)
      Parts.push_back(T.Tx + " >= " + std::to_string(P.HaloXLo + B.XLo));
    if (P.HaloXLo + P.BX + B.XHi < T.Cols)
      Parts.push_back(T.Tx + " < " + std::to_string(P.HaloXLo + P.BX + B.XHi));
    // The read's own guard admits the element.
    for (const std::string &G : B.GY)
      Parts.push_back(fillIn(G, T.Gy));
    for (const std::string &G : B.GX)
      Parts.push_back(fillIn(G, T.Gx));
    Conds.push_back(Parts.empty() ? "true" : join(Parts, " && "));
  }
  if (Conds.size() == 1)
    T.Cond = Conds.front();
  else {
    for (std::string &C : Conds)
      C = "(" + C + ")";
    T.Cond = join(Conds, " ||\n" + P.Indent + "      ");
  }

  tooling::Replacements R;
  if (Error Err = addPinAsserts(Ctx, E, P, R))
    return std::move(Err);
  std::string Staging = haloTileLoad(T, P.Indent) + "\n" + P.Indent;
  if (Error Err = addReplacement(R, insertAt(Ctx, P.InsertAt, Staging), E))
    return std::move(Err);
  for (const DeclStmt *DS : P.DeadAliases) {
    auto S = wholeSpan(Ctx, DS, /*Statement=*/true);
    if (!S)
      return reject(E, "internal",
                    "kernel '" + E.Target +
                        "': a row pointer's declaration "
                        "has no place in the file");
    // Its line too, when it stands alone there.
    auto [B, End] = ownLines(Ctx.Code, S->Begin.Offset, S->End.Offset);
    if (Error Err = addReplacement(
            R, tooling::Replacement(Ctx.FileName, B, End - B, ""), E))
      return std::move(Err);
  }
  for (const StencilRead &Rd : P.Reads) {
    auto S = looseExprSpan(Ctx, Rd.Access);
    if (!S)
      return reject(E, "internal",
                    "kernel '" + E.Target + "': the read '" +
                        exprText(Ctx, Rd.Access) +
                        "' has no place in the file");
    std::string Text = T.Tile + "[" + plusConst("threadIdx.y", 0) +
                       (offsetText(Rd.DY, P.HaloYLo) == "0"
                            ? ""
                            : " + " + offsetText(Rd.DY, P.HaloYLo)) +
                       "][threadIdx.x" +
                       (offsetText(Rd.DX, P.HaloXLo) == "0"
                            ? ""
                            : " + " + offsetText(Rd.DX, P.HaloXLo)) +
                       "]";
    if (Error Err = addReplacement(
            R,
            tooling::Replacement(Ctx.FileName, S->Begin.Offset,
                                 S->End.Offset - S->Begin.Offset, Text),
            E))
      return std::move(Err);
  }
  return R;
}

// The reads of a stencil, as analyzeStencil (SharedTilingStencil.cpp)
// follows them.

/// The parameter array \p AS reads, directly or through a row pointer.
const ParmVarDecl *readArray(const ArraySubscriptExpr *AS,
                             ArrayRef<PointerAlias> Aliases) {
  if (const PointerAlias *A = aliasOf(AS, Aliases))
    return A->Param;
  return dyn_cast_or_null<ParmVarDecl>(referencedDecl(AS->getBase()));
}

/// The thread coordinates \p E depends on, an index helper's call
/// (`idx(x, y, w)`) depending on those of its arguments.
static Variance helperVariance(const Expr *E, const FunctionDecl *FD) {
  E = E->IgnoreParenCasts();
  SmallVector<const Expr *, 4> Parts;
  const FunctionDecl *H = nullptr;
  if (const auto *C = dyn_cast<CallExpr>(E);
      C && indexHelperReturn(C, FD->getASTContext(), H))
    Parts.append(C->arg_begin(), C->arg_end());
  else if (const auto *B = dyn_cast<BinaryOperator>(E);
           B && (B->isAdditiveOp() || B->isMultiplicativeOp()))
    Parts = {B->getLHS(), B->getRHS()};
  else if (const auto *U = dyn_cast<UnaryOperator>(E);
           U && (U->getOpcode() == UO_Minus || U->getOpcode() == UO_Plus))
    Parts = {U->getSubExpr()};
  else
    return threadVariance(E, FD);
  Variance V;
  for (const Expr *Part : Parts) {
    Variance W = helperVariance(Part, FD);
    V.X |= W.X;
    V.Y |= W.Y;
    V.Z |= W.Z;
    V.Unknown |= W.Unknown;
  }
  return V;
}

/// The thread coordinates \p AS's element depends on (a row pointer's
/// offsets included).
Variance readVariance(const ArraySubscriptExpr *AS,
                      ArrayRef<PointerAlias> Aliases, const FunctionDecl *FD) {
  Variance V = helperVariance(AS->getIdx(), FD);
  if (const PointerAlias *A = aliasOf(AS, Aliases))
    for (const Expr *O : A->Offsets) {
      Variance W = threadVariance(O, FD);
      V.X |= W.X;
      V.Y |= W.Y;
      V.Z |= W.Z;
      V.Unknown |= W.Unknown;
    }
  return V;
}

/// Why a read of a pointer parameter in \p Inner was not followed to
/// offsets from the point: its index goes through a call, or depends on
/// template parameters (", ..." to append), or empty.
std::string unfollowedIndex(const EditContext &Ctx,
                            ArrayRef<const Stmt *> Inner,
                            const FunctionDecl *FD) {
  std::string Why;
  std::function<void(const Stmt *)> Walk = [&](const Stmt *St) {
    if (!St || !Why.empty())
      return;
    if (const auto *AS = dyn_cast<ArraySubscriptExpr>(St))
      if (const auto *PV =
              dyn_cast_or_null<ParmVarDecl>(referencedDecl(AS->getBase()));
          PV && threadVariance(AS->getIdx(), FD).Unknown) {
        std::string At = "'" + PV->getNameAsString() + "' is read at '" +
                         exprText(Ctx, AS->getIdx()) + "' (" + where(Ctx, AS) +
                         "), ";
        if (AS->getIdx()->isInstantiationDependent())
          Why = "; " + At +
                "which depends on template parameters (the pattern is not "
                "followed per instantiation)";
        else if (callsFunction(AS->getIdx(), ""))
          Why = "; " + At + "an index through a function call";
      }
    for (const Stmt *C : St->children())
      Walk(C);
  };
  for (const Stmt *St : Inner)
    Walk(St);
  return Why;
}

} // namespace sharedtiling
} // namespace optiml
