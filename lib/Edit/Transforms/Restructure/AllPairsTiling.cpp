//===- AllPairsTiling.cpp - Stage an all-pairs loop's sequence in tiles ---===//
//
// Pattern: a loop that every thread of a block runs over the same sequence
// of global elements (n-body interactions, a matrix-vector product's shared
// vector): `for (int j = A; j < B; ++j)` with A and B the same in every
// thread, reading `p[j]` from arrays the loop does not write.
//
// Rewrite: the block walks the sequence in tiles; for each tile its threads
// copy `p[base .. base + tile)` into shared memory cooperatively,
// synchronize, run the original loop body over the tile (reading the shared
// copy), and synchronize again before the next tile; the last tile is
// partial. Threads outside the kernel's bounds guard still take part in the
// copies and barriers but skip the computation; their loads before the loop
// are skipped too.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../../Patterns/SideEffects.h"
#include "../../Patterns/ThreadPerItem.h"
#include "../TransformSupport.h"
#include "PlannedTransform.h"
#include "SharedStaging.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLExtras.h"
#include <functional>

using namespace llvm;
using clang::dyn_cast;
using clang::dyn_cast_or_null;
using clang::isa;

namespace optiml {
namespace {

/// Statement \p S's text as written, with the `;` that ends it, a macro at
/// either end included (a type spelled `REAL` in `REAL ax = 0.f;`): these
/// statements are copied verbatim, so the macro may stay as it is. Nothing
/// when the statement is not written in the main file as a whole.
std::optional<SourceSpan> writtenStmtSpan(const EditContext &Ctx,
                                          const clang::Stmt *S) {
  if (auto Sp = looseStmtSpan(Ctx, S))
    return Sp;
  const clang::SourceManager &SM = Ctx.AST.getSourceManager();
  clang::SourceLocation B = SM.getExpansionRange(S->getBeginLoc()).getBegin();
  clang::SourceLocation End = SM.getExpansionRange(S->getEndLoc()).getEnd();
  if (!SM.isWrittenInMainFile(B) || !SM.isWrittenInMainFile(End))
    return std::nullopt;
  auto Sp = fileSpan(SM, Ctx.AST.getLangOpts(), clang::SourceRange(B, End));
  if (!Sp || Sp->End.Offset <= Sp->Begin.Offset)
    return std::nullopt;
  StringRef Code = Ctx.Code;
  unsigned P = Sp->End.Offset;
  if (Code[P - 1] == ';' || Code[P - 1] == '}')
    return Sp;
  while (P < Code.size() && (Code[P] == ' ' || Code[P] == '\t'))
    ++P;
  if (P < Code.size() && Code[P] == ';')
    Sp->End.Offset = P + 1;
  return Sp;
}

struct Staged {
  const clang::ValueDecl *Base = nullptr;
  std::string ElemType, Tile;
  std::vector<const clang::ArraySubscriptExpr *> Reads;
};

struct Plan {
  ResolvedLoop Loop;
  const clang::ForStmt *For = nullptr;
  const clang::VarDecl *Var = nullptr;
  const clang::Expr *End = nullptr;
  std::optional<ThreadItem> Item; ///< the bounds guard, if any
  std::vector<const clang::Stmt *> Pre, Post;
  std::vector<Staged> Arrays;
  int64_t Tile = 256;
  std::string Description;
};

bool readsMemory(const clang::Stmt *S) {
  if (!S)
    return false;
  if (isa<clang::ArraySubscriptExpr>(S))
    return true;
  if (const auto *U = dyn_cast<clang::UnaryOperator>(S))
    if (U->getOpcode() == clang::UO_Deref)
      return true;
  if (isa<clang::CallExpr>(S))
    return true;
  return llvm::any_of(S->children(), readsMemory);
}

std::string flipped(const EditContext &Ctx, const clang::Expr *Cond) {
  if (const auto *B =
          dyn_cast<clang::BinaryOperator>(Cond->IgnoreParenImpCasts())) {
    const char *Op = nullptr;
    switch (B->getOpcode()) {
    case clang::BO_GE:
      Op = "<";
      break;
    case clang::BO_GT:
      Op = "<=";
      break;
    case clang::BO_LE:
      Op = ">";
      break;
    case clang::BO_LT:
      Op = ">=";
      break;
    default:
      break;
    }
    if (Op)
      return looseExprText(Ctx, B->getLHS()) + " " + Op + " " +
             looseExprText(Ctx, B->getRHS());
  }
  return "!(" + looseExprText(Ctx, Cond) + ")";
}

/// Removes up to \p N leading spaces from every line but the first.
std::string dedent(StringRef Text, unsigned N) {
  std::string Out;
  for (size_t I = 0; I < Text.size(); ++I) {
    Out += Text[I];
    if (Text[I] == '\n')
      for (unsigned K = 0; K < N && I + 1 < Text.size() && Text[I + 1] == ' ';
           ++K)
        ++I;
  }
  return Out;
}

class AllPairsTiling : public PlannedTransform<Plan> {
public:
  StringRef kind() const override { return "all-pairs-tiling"; }
  StringRef description() const override {
    return "stage the sequence an all-pairs loop walks in shared-memory "
           "tiles copied cooperatively by the block";
  }
  TargetKind targetKind() const override { return TargetKind::Loop; }
  std::vector<ParamSpec> params() const override {
    return {
        ParamSpec::integer("tile", "elements per staged tile", 32, 4096, 256)};
  }

  Applicability prepare(const EditContext &Ctx,
                        StringRef Target) const override {
    Applicability A;
    Edit E;
    auto P = planDefault(Ctx, Target, A, E);
    if (!P)
      return A;
    A.Reason = P->Description;
    Edit S = E;
    S.Params["tile"] = int64_t(256);
    A.Suggestions = {S};
    return A;
  }

private:
  Expected<Plan> analyze(const EditContext &Ctx, const Edit &E) const override;
  Expected<clang::tooling::Replacements>
  rewrite(const EditContext &Ctx, const Edit &E, const Plan &P) const override;
};

// Why long: one ordered list of the pattern's preconditions (the loop, its
// bounds, the accumulators, every read of the staged array, the launches),
// each refusal naming its reason; the partial match they share (loop,
// index, bound, accumulators) would otherwise be passed between helpers.
Expected<Plan> AllPairsTiling::analyze(const EditContext &Ctx,
                                       const Edit &E) const {
  Plan P;
  auto L = resolveLoop(Ctx, E, E.Target);
  if (!L)
    return L.takeError();
  P.Loop = *L;
  P.Tile = E.getInt("tile").value_or(256);
  if (P.Tile < 32 || P.Tile > 4096)
    return reject(E, "params", "params.tile must be in [32, 4096]");
  const clang::FunctionDecl *K = L->Kernel.Decl;
  P.For = dyn_cast<clang::ForStmt>(L->S);
  std::string At = "loop " + E.Target;
  if (!P.For)
    return reject(E, "not-applicable", At + " is not a 'for' loop");
  if (L->Info->Depth != 0)
    return reject(E, "not-applicable",
                  At + " is nested in another loop; only a top-level loop "
                       "can be walked tile by tile by the whole block");
  if (L->Kernel.Info->Uses2DThreads)
    return reject(E, "not-applicable",
                  "kernel '" + L->Kernel.Info->QualifiedName +
                      "' uses 2D thread indices");
  // Where the loop sits: at the top of the kernel or of its guarded body.
  const auto *KBody = cast<clang::CompoundStmt>(K->getBody());
  std::vector<const clang::Stmt *> Seq;
  std::string Why;
  P.Item = matchThreadItem(K, Why);
  if (P.Item && !llvm::is_contained(P.Item->Body, P.For))
    P.Item.reset();
  if (P.Item) {
    Seq = P.Item->Body;
  } else if (llvm::is_contained(KBody->body(), P.For)) {
    Seq.assign(KBody->body_begin(), KBody->body_end());
  } else {
    return reject(E, "not-applicable",
                  At + " is neither at the top of the kernel nor at the "
                       "top of its 'if (i < n)' body; every thread of the "
                       "block must reach its barriers");
  }
  bool SeenLoop = false;
  for (const clang::Stmt *S : Seq) {
    if (S == P.For) {
      SeenLoop = true;
      continue;
    }
    if (!P.Item)
      continue;
    (SeenLoop ? P.Post : P.Pre).push_back(S);
  }
  for (const clang::Stmt *S : P.Pre) {
    const auto *DS = dyn_cast<clang::DeclStmt>(S);
    bool Ok = DS != nullptr;
    if (DS)
      for (const clang::Decl *D : DS->decls()) {
        const auto *V = dyn_cast<clang::VarDecl>(D);
        Ok &= V && !V->getType()->isReferenceType() &&
              !V->getType()->getContainedAutoType() &&
              !isa<clang::ArrayType>(V->getType().getTypePtr()) &&
              (!V->getInit() || !mayHaveSideEffects(V->getInit(), Ctx.AST));
      }
    if (!Ok)
      return reject(E, "not-applicable",
                    "the statement at " + where(Ctx, S) +
                        " before the loop is not a declaration without "
                        "side effects; threads outside the bounds must be "
                        "able to skip it");
  }
  // Every thread must reach the barriers (the early-return guard itself is
  // rewritten away).
  std::vector<const clang::Stmt *> Checked;
  if (P.Item && P.Item->EarlyReturn)
    Checked = P.Item->Body;
  else
    Checked = {K->getBody()};
  for (const clang::Stmt *S : Checked)
    if (const clang::Stmt *Jmp = firstJump(S))
      return reject(E, "not-applicable",
                    "the kernel leaves early at " + where(Ctx, Jmp) +
                        "; every thread must reach the barriers");
  if (!L->Kernel.Info->Syncthreads.empty())
    return reject(E, "not-applicable",
                  "kernel '" + L->Kernel.Info->QualifiedName +
                      "' already synchronizes its threads");

  // The loop: j from a uniform start to a uniform end, step one.
  if (const auto *DS = dyn_cast_or_null<clang::DeclStmt>(P.For->getInit()))
    if (DS->isSingleDecl())
      P.Var = dyn_cast<clang::VarDecl>(DS->getSingleDecl());
  if (!P.Var || !P.Var->getInit())
    return reject(E, "not-applicable",
                  At + " does not declare its induction variable");
  std::string J = P.Var->getName().str();
  const auto *C = dyn_cast_or_null<clang::BinaryOperator>(
      P.For->getCond() ? P.For->getCond()->IgnoreParenImpCasts() : nullptr);
  if (!C || C->getOpcode() != clang::BO_LT || declOf(C->getLHS()) != P.Var)
    return reject(E, "not-applicable",
                  At + " is not bounded as '" + J + " < end'");
  P.End = C->getRHS();
  const auto *Inc = dyn_cast_or_null<clang::UnaryOperator>(
      P.For->getInc() ? P.For->getInc()->IgnoreParenImpCasts() : nullptr);
  if (!Inc || !Inc->isIncrementOp() || declOf(Inc->getSubExpr()) != P.Var)
    return reject(E, "not-applicable",
                  At + " does not step '" + J + "' by one");
  if (!isBlockUniform(P.Var->getInit(), K) || !isBlockUniform(P.End, K))
    return reject(E, "not-applicable",
                  At + " runs over a range that differs between the threads "
                       "of a block; nothing is shared");
  const clang::Stmt *Body = P.For->getBody();
  if (llvm::is_contained(writtenDecls(Body), P.Var) || firstJump(Body))
    return reject(E, "not-applicable",
                  At + " writes '" + J + "' or leaves early");
  bool LoopWrites = !memoryWrites(Body).empty();

  // The arrays read at [j].
  std::function<void(const clang::Stmt *)> Walk = [&](const clang::Stmt *S) {
    if (!S)
      return;
    if (const auto *A = dyn_cast<clang::ArraySubscriptExpr>(S)) {
      const clang::ValueDecl *B = declOf(A->getBase());
      if (B && declOf(A->getIdx()) == P.Var &&
          A->getBase()->IgnoreParenImpCasts()->getType()->isPointerType()) {
        auto It = llvm::find_if(P.Arrays,
                                [&](const Staged &X) { return X.Base == B; });
        if (It == P.Arrays.end()) {
          P.Arrays.push_back({B, "", "", {}});
          It = std::prev(P.Arrays.end());
        }
        It->Reads.push_back(A);
        return;
      }
    }
    for (const clang::Stmt *Ch : S->children())
      Walk(Ch);
  };
  Walk(Body);
  if (P.Arrays.empty())
    return reject(E, "not-applicable",
                  At + " reads no array at '[" + J +
                      "]': no sequence shared by the block");
  int64_t Bytes = 0;
  for (Staged &S : P.Arrays) {
    std::string N = S.Base->getName().str();
    // Other reads of the same array inside the loop are not staged.
    bool OtherUse = false;
    std::function<void(const clang::Stmt *)> Uses = [&](const clang::Stmt *X) {
      if (!X)
        return;
      if (const auto *A = dyn_cast<clang::ArraySubscriptExpr>(X))
        if (llvm::is_contained(S.Reads, A))
          return;
      if (const auto *R = dyn_cast<clang::DeclRefExpr>(X))
        OtherUse |= R->getDecl() == S.Base;
      for (const clang::Stmt *Ch : X->children())
        Uses(Ch);
    };
    Uses(Body);
    if (OtherUse)
      return reject(E, "not-applicable",
                    "'" + N + "' is used in " + At + " other than as '" + N +
                        "[" + J + "]'");
    for (const MemWrite &W : memoryWrites(K->getBody()))
      if (declOf(W.Base) == S.Base)
        return reject(E, "not-applicable",
                      "'" + N + "' is written at " + where(Ctx, W.Target) +
                          "; a staged copy would be stale");
    if (const auto *V = dyn_cast<clang::VarDecl>(S.Base))
      if (!isa<clang::ParmVarDecl>(V) &&
          (!V->getInit() || !isBlockUniform(V->getInit(), K) ||
           llvm::is_contained(writtenDecls(K->getBody()), V)))
        return reject(E, "not-applicable",
                      "'" + N +
                          "' points to different data in different "
                          "threads");
    clang::QualType T =
        S.Base->getType()->getPointeeType().getUnqualifiedType();
    if (LoopWrites && !S.Base->getType()->getPointeeType().isConstQualified())
      return reject(E, "not-applicable",
                    At + " writes memory and '" + N +
                        "' is not a pointer to const: they may alias");
    S.ElemType = T.getAsString(Ctx.AST.getPrintingPolicy());
    S.Tile = freshName(Ctx.Code, N + "_tile");
    if (!T->isDependentType())
      Bytes += Ctx.AST.getTypeSizeInChars(T).getQuantity() * P.Tile;
  }
  if (Bytes > 48 * 1024)
    return reject(E, "params",
                  "the tiles need " + Twine(Bytes) +
                      " bytes of shared memory, more than 49152; use a "
                      "smaller params.tile");
  std::vector<std::string> Names;
  for (const Staged &S : P.Arrays)
    Names.push_back("'" + S.Base->getName().str() + "[" + J + "]'");
  P.Description = "every thread of a block walks " + J + " over [" +
                  looseExprText(Ctx, P.Var->getInit()) + ", " +
                  looseExprText(Ctx, P.End) + ") reading " + join(Names, ", ") +
                  "; rewrite: stage tiles of " + std::to_string(P.Tile) +
                  " elements in shared memory" +
                  (P.Item ? " (threads outside the bounds help copy)" : "");
  return P;
}

Expected<clang::tooling::Replacements>
AllPairsTiling::rewrite(const EditContext &Ctx, const Edit &E,
                        const Plan &P) const {
  auto ForSp = looseStmtSpan(Ctx, P.For);
  if (!ForSp)
    return reject(E, "macro", "the loop is written inside a macro");
  std::string Base = freshName(Ctx.Code, "base");
  std::string T = freshName(Ctx.Code, "t");
  std::string Tile = std::to_string(P.Tile);
  std::string Active = freshName(Ctx.Code, "active");
  std::string End = looseExprText(Ctx, P.End);
  std::string J = P.Var->getName().str();

  // Every piece copied or replaced must be written in the file.
  auto Written = [&](const clang::Stmt *S) {
    return S && bool(writtenStmtSpan(Ctx, S));
  };
  if (!looseExprSpan(Ctx, P.For->getCond()) ||
      !looseExprSpan(Ctx, P.Var->getInit()) ||
      (P.Item &&
       (!looseStmtSpan(Ctx, P.Item->Guard) ||
        (P.Item->EarlyReturn && !looseStmtSpan(Ctx, P.Item->Body.back())))) ||
      !llvm::all_of(P.Pre, Written) || !llvm::all_of(P.Post, Written))
    return reject(E, "macro",
                  "a part of the kernel the rewrite moves is written inside "
                  "a macro");
  for (const clang::Stmt *S : P.Pre)
    for (const clang::Decl *D : cast<clang::DeclStmt>(S)->decls())
      if (const auto *V = cast<clang::VarDecl>(D);
          V->getInit() && readsMemory(V->getInit()) &&
          !looseExprSpan(Ctx, V->getInit()))
        return reject(E, "macro",
                      "the initializer of '" + V->getName() +
                          "' is written inside a macro");

  // Where the new text goes and its indentation.
  unsigned RegionBegin = ForSp->Begin.Offset, RegionEnd = ForSp->End.Offset;
  if (P.Item) {
    auto GSp = looseStmtSpan(Ctx, P.Item->Guard);
    RegionBegin = GSp->Begin.Offset;
    RegionEnd = P.Item->EarlyReturn
                    ? looseStmtSpan(Ctx, P.Item->Body.back())->End.Offset
                    : GSp->End.Offset;
  }
  std::string I = indentationAt(Ctx.Code, RegionBegin);
  // Lines of the loop as written sit one level deeper inside a guard.
  unsigned Depth = P.Item && !P.Item->EarlyReturn ? 2 : 0;

  // The loop over one tile: reads of p[j] come from the shared copy.
  std::vector<TextEdit> Reads;
  for (const Staged &S : P.Arrays)
    for (const clang::ArraySubscriptExpr *A : S.Reads) {
      auto Sp = looseExprSpan(Ctx, A);
      if (!Sp)
        return reject(E, "macro", "a read is written inside a macro");
      Reads.push_back({Sp->Begin.Offset, Sp->End.Offset - Sp->Begin.Offset,
                       S.Tile + "[" + J + " - " + Base + "]"});
    }
  auto CondSp = looseExprSpan(Ctx, P.For->getCond());
  auto InitSp = looseExprSpan(Ctx, P.Var->getInit());
  Reads.push_back(
      {InitSp->Begin.Offset, InitSp->End.Offset - InitSp->Begin.Offset, Base});
  Reads.push_back(
      {CondSp->Begin.Offset, 0, J + " < " + Base + " + " + Tile + " && "});
  std::string Loop =
      spliceText(Ctx.Code, ForSp->Begin.Offset, ForSp->End.Offset, Reads);
  std::string Inner = I + "  ";
  std::string LoopText = P.Item ? "if (" + Active + ")\n" + Inner + "  " +
                                      indentLines(dedent(Loop, Depth), "    ")
                                : indentLines(dedent(Loop, Depth), "  ");

  std::string Load;
  std::string Idx = Base + " + " + T;
  if (P.Arrays.size() == 1) {
    const Staged &S = P.Arrays.front();
    Load =
        S.Tile + "[" + T + "] = " + S.Base->getName().str() + "[" + Idx + "];";
  } else {
    Load = "{";
    for (const Staged &S : P.Arrays)
      Load += "\n" + Inner + "    " + S.Tile + "[" + T +
              "] = " + S.Base->getName().str() + "[" + Idx + "];";
    Load += "\n" + Inner + "  }";
  }
  std::string Count = Tile + " && " + Idx + " < " + End;
  std::string Out;
  auto Line = [&](const std::string &S) {
    if (!Out.empty())
      Out += "\n" + I;
    Out += S;
  };
  if (P.Item) {
    std::string Cond = P.Item->EarlyReturn
                           ? flipped(Ctx, P.Item->Guard->getCond())
                           : looseExprText(Ctx, P.Item->Guard->getCond());
    Line("bool " + Active + " = " + Cond + ";");
    for (const clang::Stmt *S : P.Pre) {
      // Loads of threads outside the bounds are skipped.
      const auto *DS = cast<clang::DeclStmt>(S);
      std::vector<TextEdit> Guarded;
      for (const clang::Decl *D : DS->decls()) {
        const auto *V = cast<clang::VarDecl>(D);
        if (!V->getInit() || !readsMemory(V->getInit()))
          continue;
        auto Sp = looseExprSpan(Ctx, V->getInit());
        std::string Ty = V->getType().getUnqualifiedType().getAsString(
            Ctx.AST.getPrintingPolicy());
        Guarded.push_back({Sp->Begin.Offset, Sp->End.Offset - Sp->Begin.Offset,
                           Active + " ? " +
                               parenthesize(looseExprText(Ctx, V->getInit())) +
                               " : " + Ty + "()"});
      }
      auto Sp = writtenStmtSpan(Ctx, S);
      Line(dedent(
          spliceText(Ctx.Code, Sp->Begin.Offset, Sp->End.Offset, Guarded),
          Depth));
    }
  }
  for (const Staged &S : P.Arrays)
    Line(sharedTileDecl(S.ElemType, S.Tile, {P.Tile}));
  Line(tileLoopHead(Base, looseExprText(Ctx, P.Var->getInit()), End, P.Tile) +
       " {");
  Line("  " + cooperativeLoop(T, Count, Load, Inner));
  Line("  __syncthreads();");
  Line("  " + LoopText);
  Line("  __syncthreads();");
  Line("}");
  if (P.Item && !P.Post.empty()) {
    Line("if (" + Active + ") {");
    for (const clang::Stmt *S : P.Post) {
      auto Sp = writtenStmtSpan(Ctx, S);
      Line("  " + indentLines(
                      dedent(Ctx.Code.substr(Sp->Begin.Offset,
                                             Sp->End.Offset - Sp->Begin.Offset),
                             Depth),
                      "  "));
    }
    Line("}");
  }
  clang::tooling::Replacements Repls;
  if (Error Err = addReplacement(
          Repls,
          clang::tooling::Replacement(Ctx.FileName, RegionBegin,
                                      RegionEnd - RegionBegin, Out),
          E))
    return std::move(Err);
  return Repls;
}

} // namespace

std::unique_ptr<Transform> createAllPairsTilingTransform() {
  return std::make_unique<AllPairsTiling>();
}

} // namespace optiml
