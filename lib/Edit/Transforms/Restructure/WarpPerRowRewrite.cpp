//===- WarpPerRowRewrite.cpp - warp-per-row: the rewrite ------------------===//
//
// The text a warp-per-row plan becomes: lanes striding the inner loops,
// butterfly shuffles (and shared memory across warps) for the reductions,
// lane 0 for the writes outside the loops, and the launches' new grids.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../../Patterns/ThreadPerItem.h"
#include "../TransformSupport.h"
#include "PlannedTransform.h"
#include "WarpPerRowInternal.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/STLExtras.h"
#include <functional>

using namespace llvm;
using clang::dyn_cast;
using clang::dyn_cast_or_null;
using clang::isa;

namespace optiml {
namespace warpperrow {

namespace {

/// Whether \p E can take `+ lane` without parentheses.
bool addsWithoutParens(const clang::Expr *E) {
  E = E->IgnoreImpCasts();
  if (isa<clang::DeclRefExpr, clang::IntegerLiteral, clang::ArraySubscriptExpr,
          clang::CallExpr, clang::MemberExpr, clang::ParenExpr>(E))
    return true;
  if (const auto *B = dyn_cast<clang::BinaryOperator>(E))
    return B->isAdditiveOp() || B->isMultiplicativeOp();
  return false;
}

/// `Acc = Acc op Other`; a max or min written as a selection keeps its own
/// comparison, with \p Other read once into \p Tmp of type \p Type (a
/// shuffle must run in every lane, not in one branch).
std::string combine(const Reduction &R, StringRef Acc, StringRef Other,
                    StringRef Type = "", StringRef Tmp = "") {
  if (R.Cond) {
    const Reduction::Select &S = *R.Cond;
    StringRef L = S.AccLeft ? Acc : Tmp, Rt = S.AccLeft ? Tmp : Acc;
    StringRef T = S.AccIfTrue ? Acc : Tmp, F = S.AccIfTrue ? Tmp : Acc;
    return ("{ " + Type + " " + Tmp + " = " + Other + "; " + Acc + " = " + L +
            " " + S.Op + " " + Rt + " ? " + T + " : " + F + "; }")
        .str();
  }
  switch (R.Op) {
  case Reduction::Sum:
    return (Acc + " += " + Other).str();
  case Reduction::Prod:
    return (Acc + " *= " + Other).str();
  default:
    return (Acc + " = " + R.Func + "(" + Acc + ", " + Other + ")").str();
  }
}

/// Whether the kernel \p Body only reads scalar members of its parameter
/// \p P (`A.n`, `A.rowptr[i]`): never writes it, takes its address, binds
/// it to a reference or calls its methods, so every member keeps the value
/// the launch copied in.
bool onlyReadsMembers(const clang::Stmt *Body, const clang::ParmVarDecl *P) {
  auto MemberOfP = [&](const clang::Expr *E) {
    E = E->IgnoreParens();
    if (!isa<clang::MemberExpr>(E))
      return false;
    while (const auto *M = dyn_cast<clang::MemberExpr>(E)) {
      if (M->isArrow() || !isa<clang::FieldDecl>(M->getMemberDecl()))
        return false;
      E = M->getBase()->IgnoreParens();
    }
    return referencedDecl(E) == P;
  };
  bool Ok = true;
  std::function<void(const clang::Stmt *)> Walk = [&](const clang::Stmt *S) {
    if (!S || !Ok)
      return;
    if (const auto *C = dyn_cast<clang::ImplicitCastExpr>(S);
        C && C->getCastKind() == clang::CK_LValueToRValue &&
        MemberOfP(C->getSubExpr()) && C->getType()->isScalarType())
      return; // a member's value, read
    if (const auto *D = dyn_cast<clang::DeclRefExpr>(S); D && D->getDecl() == P)
      Ok = false;
    for (const clang::Stmt *Ch : S->children())
      Walk(Ch);
  };
  Walk(Body);
  return Ok;
}

/// For \p Bound a member of a struct parameter of \p Kernel passed by value
/// (`A.n`, `A.dims.rows`): the same member of the variable the launch
/// \p L passes for it (`A.n`), when that denotes the value the kernel
/// reads: the argument is a variable of the parameter's type, spelled by
/// its name; the struct is trivially copyable (the kernel's copy holds the
/// variable's members); the kernel only reads the parameter's members; and
/// no argument of the launch has side effects (which could change the
/// variable between the launch's grid and its arguments). Nothing, with
/// \p WhyNot, when \p Bound is such a member but the launch does not allow
/// it; nothing and an empty \p WhyNot when \p Bound is no such member.
std::optional<std::string> memberAtLaunch(const EditContext &Ctx,
                                          const clang::FunctionDecl *Kernel,
                                          const clang::Expr *Bound,
                                          const LaunchSite &L,
                                          std::string &WhyNot) {
  WhyNot.clear();
  std::vector<std::string> Path;
  const clang::Expr *E = Bound->IgnoreParenImpCasts();
  while (const auto *M = dyn_cast<clang::MemberExpr>(E)) {
    if (M->isArrow() || !isa<clang::FieldDecl>(M->getMemberDecl()) ||
        !M->getMemberDecl()->getIdentifier())
      return std::nullopt;
    Path.insert(Path.begin(), M->getMemberDecl()->getName().str());
    E = M->getBase()->IgnoreParens();
  }
  const auto *P = dyn_cast_or_null<clang::ParmVarDecl>(referencedDecl(E));
  if (Path.empty() || !P || P->getDeclContext() != Kernel)
    return std::nullopt;
  std::string Text = looseExprText(Ctx, Bound);
  auto No = [&](const Twine &Why) -> std::optional<std::string> {
    WhyNot = ("the bound '" + Text + "' is a member of the parameter '" +
              P->getName() + "', and " + Why)
                 .str();
    return std::nullopt;
  };
  const auto *RD = P->getType()->getAsCXXRecordDecl();
  if (P->getType()->isDependentType() || !RD || !RD->hasDefinition() ||
      !RD->isTriviallyCopyable())
    return No("its type is not a trivially copyable struct known in the "
              "kernel (its copy might not hold the launch's members)");
  if (!onlyReadsMembers(Kernel->getBody(), P))
    return No("the kernel does more with '" + P->getName() +
              "' than read its members");
  const clang::CUDAKernelCallExpr *Call = findLaunchCall(Ctx, L);
  unsigned I = P->getFunctionScopeIndex();
  if (!Call || I >= Call->getNumArgs() || I >= L.Args.size())
    return No(L.Id + " passes no argument for it");
  const clang::Expr *Arg = Call->getArg(I)->IgnoreParenImpCasts();
  if (const auto *CE = dyn_cast<clang::CXXConstructExpr>(Arg);
      CE && CE->getNumArgs() == 1 &&
      CE->getConstructor()->isCopyOrMoveConstructor())
    Arg = CE->getArg(0)->IgnoreParenImpCasts();
  const auto *V = dyn_cast_or_null<clang::VarDecl>(referencedDecl(Arg));
  std::string Spelled = StringRef(L.Args[I]).trim().str();
  if (!V || !V->getIdentifier() || Spelled != V->getName() ||
      !Ctx.AST.hasSameUnqualifiedType(V->getType().getNonReferenceType(),
                                      P->getType()))
    return No(L.Id + " passes '" + Spelled +
              "', not a variable of its type named there, whose member "
              "the new grid could read");
  auto HasEffects = [&](const clang::Expr *A) {
    return A && A->HasSideEffects(Ctx.AST);
  };
  bool Effects = llvm::any_of(Call->arguments(), HasEffects);
  if (const clang::CallExpr *Config = Call->getConfig())
    for (unsigned C = 2; C < Config->getNumArgs(); ++C)
      Effects |= !Config->getArg(C)->isDefaultArgument() &&
                 HasEffects(Config->getArg(C));
  if (Effects)
    return No(L.Id +
              " has an argument with side effects, which could change '" +
              Spelled + "' between the grid and the arguments");
  return Spelled + "." + join(Path, ".");
}

} // namespace

std::optional<std::string> itemsAtLaunch(const EditContext &Ctx,
                                         const clang::FunctionDecl *Kernel,
                                         const clang::Expr *Bound,
                                         const LaunchSite &L,
                                         std::string &WhyNot) {
  std::string WhyMember;
  if (auto M = memberAtLaunch(Ctx, Kernel, Bound, L, WhyMember))
    return M;
  if (!WhyMember.empty()) {
    WhyNot = WhyMember;
    return std::nullopt;
  }
  return boundAtLaunch(Ctx, Bound, L, WhyNot);
}

std::string itemCoverageProblem(const EditContext &Ctx, const ThreadItem &Item,
                                const LaunchSite &L) {
  std::string Why =
      Item.GridRows ? gridRowsCoverageProblem(Ctx, L, Item.Bound)
                    : gridCoverageProblem(Ctx, L, Item.Bound, Item.Dim - 'x');
  if (Why.empty())
    return "";
  return "launch " + L.Id +
         " is not shown to run a thread for every item below the guard's "
         "bound '" +
         looseExprText(Ctx, Item.Bound) + "': " + Why +
         "; the new launch runs a warp or block for every item, so an original "
         "grid that stops short would have "
         "items computed that the original left alone";
}

// Why long: the new kernel text is emitted in the order it reads (row and
// lane indices, the strided loop, the shuffles, the broadcast, the launch
// changes), each part depending on the plan's choices (lanes, per warp or
// block, rows kept in registers).
Expected<clang::tooling::Replacements>
WarpPerRow::rewrite(const EditContext &Ctx, const Edit &E,
                    const Plan &P) const {
  if (P.Streamed)
    return rewriteStream(Ctx, E, P);
  clang::tooling::Replacements Repls;
  auto Add = [&](unsigned Off, unsigned Len, StringRef Text) -> Error {
    return addReplacement(
        Repls, clang::tooling::Replacement(Ctx.FileName, Off, Len, Text), E);
  };
  auto SpanOr = [&](const clang::Stmt *S) -> Expected<SourceSpan> {
    if (auto Sp = looseStmtSpan(Ctx, S))
      return *Sp;
    return reject(E, "macro",
                  "the statement at " + where(Ctx, S) +
                      " is written inside a macro expansion");
  };
  std::string Lane = freshName(Ctx.Code, "lane");
  std::string Off = freshName(Ctx.Code, "offset");
  bool Groups = !P.PerBlock && P.Lanes != 32;
  std::string Mask = Groups ? freshName(Ctx.Code, "group_mask") : "0xffffffffu";
  std::string K = freshName(Ctx.Code, "k");
  int64_t Warps = P.BlockSize / 32;
  std::string Stride = std::to_string(P.stride());
  std::string LanesText = std::to_string(P.Lanes);
  std::string SyncWarp = Groups ? "__syncwarp(" + Mask + ");" : "__syncwarp();";

  // The online softmax combine's names.
  std::string MName, Run, OnlineType, RunType, ElemVar, MNew, MOther, RunOther;
  if (P.Fused) {
    const clang::PrintingPolicy &PP = Ctx.AST.getPrintingPolicy();
    MName = P.Fused->Max->getName().str();
    Run = freshName(Ctx.Code, P.Fused->Sum->getName().str() + "_run");
    OnlineType = P.Fused->Max->getType().getUnqualifiedType().getAsString(PP);
    RunType = P.Fused->Sum->getType().getUnqualifiedType().getAsString(PP);
    ElemVar = freshName(Ctx.Code, "elem");
    MNew = freshName(Ctx.Code, MName + "_new");
    MOther = freshName(Ctx.Code, MName + "_other");
    RunOther = freshName(Ctx.Code, Run + "_other");
  }
  // exp(x - max) for a partial whose max was x; 1 when x is the max (also
  // when both are -inf, where the difference is not a number).
  auto Rescale = [&](const std::string &X) {
    return "(" + X + " == " + MNew + " ? 1 : " + P.Fused->Exp + "(" + X +
           " - " + MNew + "))";
  };
  // The larger of the running max and \p X: the program's own function,
  // or its own comparison when it selects.
  auto MaxOf = [&](const std::string &X) -> std::string {
    if (!P.Fused->Cond)
      return P.Fused->MaxFunc + "(" + MName + ", " + X + ")";
    const Reduction::Select &S = *P.Fused->Cond;
    std::string L = S.AccLeft ? MName : X, R = S.AccLeft ? X : MName;
    std::string T = S.AccIfTrue ? MName : X, F = S.AccIfTrue ? X : MName;
    return L + " " + S.Op + " " + R + " ? " + T + " : " + F;
  };

  // The item index and the lane.
  const clang::VarDecl *Idx = P.Item.Index;
  auto InitSp = looseExprSpan(Ctx, Idx->getInit());
  auto DeclSp = looseStmtSpan(Ctx, P.Item.IndexDecl);
  if (!InitSp || !DeclSp)
    return reject(E, "macro", "the item index is written inside a macro");
  std::string Indent = indentationAt(Ctx.Code, DeclSp->Begin.Offset);
  std::string IndexInit =
      P.PerBlock ? "blockIdx.x"
      : Groups   ? "blockIdx.x * (blockDim.x / " + LanesText +
                       ") + threadIdx.x / " + LanesText
                 : "blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32";
  if (Error Err = Add(InitSp->Begin.Offset,
                      InitSp->End.Offset - InitSp->Begin.Offset, IndexInit))
    return std::move(Err);
  std::string LaneDecl = "\n" + Indent + "int " + Lane + " = threadIdx.x" +
                         (P.PerBlock ? "" : " % " + LanesText) + ";";
  if (Groups) {
    // The lanes of this item's group: shuffles name only them, so groups
    // whose item is past the bound may leave early.
    std::string Bits = "0x" + std::string(P.Lanes / 4, 'f') + "u";
    LaneDecl += "\n" + Indent + "unsigned " + Mask + " = " + Bits +
                " << (threadIdx.x % 32 - " + Lane + ");";
  }
  if (Error Err = Add(DeclSp->End.Offset, 0, LaneDecl))
    return std::move(Err);

  // The register form: each lane's elements of the row are loaded once,
  // before the first pass that reads them.
  std::string PerLane = std::to_string(P.PerLane);
  // With \p Load, every element the registers hold (the pass \p L may
  // skip the first ones).
  auto RegisterHeader = [&](const InnerLoop &L, bool Load = false) {
    std::string J = L.Var->getName().str();
    std::string Start = Lane + " + " + K + " * " + Stride;
    const clang::Expr *From = P.RegStart ? P.RegStart : L.Start;
    if (!isZero(From, Ctx.AST, 0))
      Start = (addsWithoutParens(From) ? writtenText(Ctx, From)
                                       : "(" + writtenText(Ctx, From) + ")") +
              " + " + Start;
    std::string Cond = writtenText(Ctx, L.Cond);
    if (!Load && writtenText(Ctx, From) != writtenText(Ctx, L.Start))
      Cond = J + " >= " + writtenText(Ctx, L.Start) + " && " + Cond;
    std::string Init =
        L.InitDeclares
            ? L.Var->getType().getAsString(Ctx.AST.getPrintingPolicy()) + " " +
                  J + " = " + Start
            : J + " = " + Start;
    return "for (int " + K + " = 0; " + K + " < " + PerLane + "; ++" + K +
           ") if (" + Init + "; " + Cond + ")";
  };

  for (size_t LI = 0; LI < P.Loops.size(); ++LI) {
    const InnerLoop &L = P.Loops[LI];
    auto FS = SpanOr(L.For);
    if (!FS)
      return FS.takeError();
    std::string In = indentationAt(Ctx.Code, FS->Begin.Offset);
    bool OnlineMax = P.Fused && LI == P.Fused->MaxLoop;
    std::string OnlineBody;
    // The max pass already summed the exponentials, in every lane; a sum
    // pass that also stores keeps its stores, without the sum.
    bool Stash = P.Fused && LI == P.Fused->SumLoop && P.Fused->SumStmt;
    std::string AddRun =
        P.Fused ? P.Fused->Sum->getName().str() + " += " + Run + ";" : "";
    if (P.Fused && LI == P.Fused->SumLoop && !Stash) {
      if (Error Err =
              Add(FS->Begin.Offset, FS->End.Offset - FS->Begin.Offset, AddRun))
        return std::move(Err);
      continue;
    }
    std::optional<SourceSpan> Dropped;
    if (Stash) {
      Dropped = looseStmtSpan(Ctx, P.Fused->SumStmt);
      if (!Dropped)
        return reject(E, "macro",
                      "the statement at " + where(Ctx, P.Fused->SumStmt) +
                          " is written inside a macro expansion");
      // Its whole line when it stands alone on it.
      unsigned B = Dropped->Begin.Offset, End = Dropped->End.Offset;
      while (B > 0 && (Ctx.Code[B - 1] == ' ' || Ctx.Code[B - 1] == '\t'))
        --B;
      if (End < Ctx.Code.size() && Ctx.Code[End] == ';')
        ++End;
      if (B > 0 && Ctx.Code[B - 1] == '\n' && End < Ctx.Code.size() &&
          Ctx.Code[End] == '\n')
        ++End;
      else
        B = Dropped->Begin.Offset;
      if (Error Err = Add(B, End - B, ""))
        return std::move(Err);
    }
    // The fused pass of a max pass that started one element later runs
    // over the sum pass's range.
    const InnerLoop &HL =
        OnlineMax && P.Fused->Widened ? P.Loops[P.Fused->SumLoop] : L;
    // Lanes other than the first start sums and products from the
    // identity.
    std::string Before;
    for (const Reduction &R : L.Reductions)
      if (R.NeedsZeroing && !Stash)
        Before += "if (" + Lane + " != 0) " + accText(R) +
                  (R.Op == Reduction::Sum ? " = 0;" : " = 1;") + "\n" + In;
    if (Stash)
      Before += AddRun + "\n" + In;
    if (OnlineMax)
      Before += RunType + " " + Run + " = 0;\n" + In;
    bool FromRegisters = llvm::is_contained(P.CachedLoops, LI);
    clang::SourceLocation RParen = L.rParen();
    if (RParen.isMacroID())
      return reject(E, "macro",
                    "the loop header at " + where(Ctx, L.For) +
                        " is written inside a macro");
    unsigned HeaderEnd = Ctx.AST.getSourceManager().getFileOffset(RParen) + 1;
    if (OnlineMax) {
      // The body becomes the running max and the rescaled sum, after the
      // locals the max pass declared.
      auto Spliced =
          [&](const clang::Stmt *S,
              std::optional<SourceSpan> Sp) -> Expected<std::string> {
        if (!Sp)
          return reject(E, "macro",
                        "the statement at " + where(Ctx, S) +
                            " is written inside a macro");
        std::vector<TextEdit> Edits;
        if (FromRegisters)
          for (const clang::ArraySubscriptExpr *A : rowReads(S, L.Var))
            for (const CachedArray &C : P.Cached)
              if (C.Array == declOf(A->getBase()))
                if (auto ASp = looseExprSpan(Ctx, A))
                  Edits.push_back({ASp->Begin.Offset,
                                   ASp->End.Offset - ASp->Begin.Offset,
                                   C.Name + "[" + K + "]"});
        return spliceText(Ctx.Code, Sp->Begin.Offset, Sp->End.Offset,
                          std::move(Edits));
      };
      OnlineBody = " {\n";
      for (const clang::Stmt *S : P.Fused->Locals) {
        auto Local = Spliced(S, looseStmtSpan(Ctx, S));
        if (!Local)
          return Local.takeError();
        OnlineBody += In + "  " + *Local + "\n";
      }
      auto Elem = Spliced(P.Fused->Elem, looseExprSpan(Ctx, P.Fused->Elem));
      if (!Elem)
        return Elem.takeError();
      OnlineBody += In + "  " + OnlineType + " " + ElemVar + " = " + *Elem +
                    ";\n" + In + "  " + OnlineType + " " + MNew + " = " +
                    MaxOf(ElemVar) + ";\n" + In + "  " + Run + " = " + Run +
                    " * " + Rescale(MName) + " + " + P.Fused->Exp + "(" +
                    ElemVar + " - " + MNew + ");\n" + In + "  " + MName +
                    " = " + MNew + ";\n" + In + "}";
    }
    if (FromRegisters) {
      // `#pragma unroll` needs a line of its own.
      std::string Load;
      if (indentationAt(Ctx.Code, FS->Begin.Offset).size() !=
          FS->Begin.Offset - (Ctx.Code.rfind('\n', FS->Begin.Offset) + 1))
        Load = "\n" + In;
      if (LI == P.CachedLoops.front()) {
        std::vector<std::string> Steps;
        for (const CachedArray &C : P.Cached) {
          Load += C.ElemType + " " + C.Name + "[" + PerLane + "];\n" + In;
          Steps.push_back(C.Name + "[" + K + "] = " + C.Array->getName().str() +
                          "[" +
                          (C.Offset ? C.Offset->getName().str() + " + " : "") +
                          L.Var->getName().str() + "];");
        }
        Load += "#pragma unroll\n" + In + RegisterHeader(L, true) + " ";
        Load += Steps.size() == 1 ? Steps[0] : "{ " + join(Steps, " ") + " }";
        Load += "\n" + In;
      }
      if (Error Err =
              Add(FS->Begin.Offset, HeaderEnd - FS->Begin.Offset,
                  Load + Before + "#pragma unroll\n" + In + RegisterHeader(HL)))
        return std::move(Err);
      for (const clang::ArraySubscriptExpr *A : rowReads(L.body(), L.Var)) {
        if (OnlineMax)
          break; // the body was rewritten as a whole
        auto It = llvm::find_if(P.Cached, [&](const CachedArray &C) {
          return C.Array == declOf(A->getBase());
        });
        if (It == P.Cached.end())
          continue;
        auto ASp = looseExprSpan(Ctx, A);
        if (!ASp)
          return reject(E, "macro",
                        "the read at " + where(Ctx, A) +
                            " is written inside a macro");
        if (Dropped && ASp->Begin.Offset >= Dropped->Begin.Offset &&
            ASp->Begin.Offset < Dropped->End.Offset)
          continue; // dropped with the sum
        if (Error Err =
                Add(ASp->Begin.Offset, ASp->End.Offset - ASp->Begin.Offset,
                    It->Name + "[" + K + "]"))
          return std::move(Err);
      }
    } else {
      // Start at the lane, step by the lanes.
      auto St = looseExprSpan(Ctx, L.Start);
      auto IncSp = looseExprSpan(Ctx, L.Inc);
      if (!St || !IncSp)
        return reject(E, "macro",
                      "the loop header at " + where(Ctx, L.For) +
                          " is written inside a macro");
      std::string Start;
      if (isZero(HL.Start, Ctx.AST, 0))
        Start = Lane;
      else if (addsWithoutParens(HL.Start))
        Start = looseExprText(Ctx, HL.Start) + " + " + Lane;
      else
        Start = "(" + looseExprText(Ctx, HL.Start) + ") + " + Lane;
      if (Error Err =
              Add(St->Begin.Offset, St->End.Offset - St->Begin.Offset, Start))
        return std::move(Err);
      if (Error Err =
              Add(IncSp->Begin.Offset, IncSp->End.Offset - IncSp->Begin.Offset,
                  L.Var->getName().str() + " += " + Stride))
        return std::move(Err);
      if (!Before.empty())
        if (Error Err = Add(FS->Begin.Offset, 0, Before))
          return std::move(Err);
    }
    // Combine the lanes' partial results; every lane gets the total.
    std::string After;
    if (OnlineMax) {
      // Pairs (max, sum of exp(e - max)) combine as the sums rescaled to
      // the larger max.
      auto Merge = [&](const std::string &MO, const std::string &SO,
                       const std::string &Pad) {
        return "\n" + In + Pad + OnlineType + " " + MNew + " = " + MaxOf(MO) +
               ";" + "\n" + In + Pad + Run + " = " + Run + " * " +
               Rescale(MName) + " + " + SO + " * " + Rescale(MO) + ";" + "\n" +
               In + Pad + MName + " = " + MNew + ";";
      };
      auto Shfl = [&](const std::string &V) {
        return "__shfl_xor_sync(" + Mask + ", " + V + ", " + Off +
               (Groups ? ", " + LanesText : "") + ")";
      };
      After += "\n" + In + "for (int " + Off + " = " +
               std::to_string(P.PerBlock ? 16 : P.Lanes / 2) + "; " + Off +
               " > 0; " + Off + " /= 2) {";
      After += "\n" + In + "  " + OnlineType + " " + MOther + " = " +
               Shfl(MName) + ";";
      After +=
          "\n" + In + "  " + RunType + " " + RunOther + " = " + Shfl(Run) + ";";
      After += Merge(MOther, RunOther, "  ");
      After += "\n" + In + "}";
      if (P.PerBlock) {
        std::string MPart = freshName(Ctx.Code, MName + "_warps");
        std::string SPart = freshName(Ctx.Code, Run + "_warps");
        std::string W = freshName(Ctx.Code, "w");
        std::string Ws = std::to_string(Warps);
        After += "\n" + In + "{";
        After += "\n" + In + "  __shared__ " + OnlineType + " " + MPart + "[" +
                 Ws + "];";
        After += "\n" + In + "  __shared__ " + RunType + " " + SPart + "[" +
                 Ws + "];";
        After += "\n" + In + "  if (" + Lane + " % 32 == 0) {";
        After +=
            "\n" + In + "    " + MPart + "[" + Lane + " / 32] = " + MName + ";";
        After +=
            "\n" + In + "    " + SPart + "[" + Lane + " / 32] = " + Run + ";";
        After += "\n" + In + "  }";
        After += "\n" + In + "  __syncthreads();";
        After += "\n" + In + "  " + MName + " = " + MPart + "[0];";
        After += "\n" + In + "  " + Run + " = " + SPart + "[0];";
        After += "\n" + In + "  for (int " + W + " = 1; " + W + " < " + Ws +
                 "; ++" + W + ") {";
        After += Merge(MPart + "[" + W + "]", SPart + "[" + W + "]", "    ");
        After += "\n" + In + "  }";
        After += "\n" + In + "}";
      }
      if (Error Err =
              Add(HeaderEnd, FS->End.Offset - HeaderEnd, OnlineBody + After))
        return std::move(Err);
      continue;
    }
    if (!L.Reductions.empty() && !Stash) {
      std::string Head = "for (int " + Off + " = " +
                         std::to_string(P.PerBlock ? 16 : P.Lanes / 2) + "; " +
                         Off + " > 0; " + Off + " /= 2)";
      std::vector<std::string> Steps;
      for (const Reduction &R : L.Reductions) {
        std::string A = accText(R);
        std::string Shfl = "__shfl_xor_sync(" + Mask + ", " + A + ", " + Off +
                           (Groups ? ", " + LanesText : "") + ")";
        std::string Step =
            R.Cond ? combine(R, A, Shfl, accType(R, Ctx.AST),
                             freshName(Ctx.Code, accStem(R) + "_other"))
                   : combine(R, A, Shfl) + ";";
        Steps.push_back(Step);
      }
      if (Steps.size() == 1) {
        After += "\n" + In + Head + " " + Steps[0];
      } else {
        After += "\n" + In + Head + " {";
        for (const std::string &S : Steps)
          After += "\n" + In + "  " + S;
        After += "\n" + In + "}";
      }
      if (P.PerBlock) {
        // Across the warps of the block through shared memory.
        for (const Reduction &R : L.Reductions) {
          std::string A = accText(R);
          std::string Part = freshName(Ctx.Code, accStem(R) + "_warps");
          std::string T = accType(R, Ctx.AST);
          std::string W = freshName(Ctx.Code, "w");
          After += "\n" + In + "{";
          After += "\n" + In + "  __shared__ " + T + " " + Part + "[" +
                   std::to_string(Warps) + "];";
          After += "\n" + In + "  if (" + Lane + " % 32 == 0) " + Part + "[" +
                   Lane + " / 32] = " + A + ";";
          After += "\n" + In + "  __syncthreads();";
          After += "\n" + In + "  " + A + " = " + Part + "[0];";
          After += "\n" + In + "  for (int " + W + " = 1; " + W + " < " +
                   std::to_string(Warps) + "; ++" + W + ") " +
                   (R.Cond ? combine(R, A, Part + "[" + W + "]", T,
                                     freshName(Ctx.Code, accStem(R) + "_other"))
                           : combine(R, A, Part + "[" + W + "]") + ";");
          After += "\n" + In + "}";
        }
      }
    }
    if (llvm::is_contained(P.SyncAfter, L.For))
      After += "\n" + In + (P.PerBlock ? "__syncthreads();" : SyncWarp);
    if (!After.empty())
      if (Error Err = Add(FS->End.Offset, 0, After))
        return std::move(Err);
  }
  for (const clang::Stmt *S : P.LaneZero) {
    auto Sp = SpanOr(S);
    if (!Sp)
      return Sp.takeError();
    if (Error Err = Add(Sp->Begin.Offset, 0, "if (" + Lane + " == 0) "))
      return std::move(Err);
    if (llvm::is_contained(P.SyncAfter, S))
      if (Error Err = Add(Sp->End.Offset, 0,
                          "\n" + indentationAt(Ctx.Code, Sp->Begin.Offset) +
                              (P.PerBlock ? "__syncthreads();" : SyncWarp)))
        return std::move(Err);
  }

  // Launches: one warp (group, block) per item.
  if (Error Err = rewriteLaunches(Ctx, E, P, Repls))
    return std::move(Err);
  return Repls;
}

Error rewriteLaunches(const EditContext &Ctx, const Edit &E, const Plan &P,
                      clang::tooling::Replacements &Repls) {
  int64_t PerBlockItems = P.itemsPerBlock();
  for (const LaunchSite &L : P.Kernel.Info->Launches) {
    std::string Why;
    auto N = itemsAtLaunch(Ctx, P.Kernel.Decl, P.Item.Bound, L, Why);
    if (!N)
      return reject(E, "launch", Why, L.Range.Begin);
    std::string Grid = PerBlockItems == 1
                           ? *N
                           : "(" + parenthesize(*N) + " + " +
                                 std::to_string(PerBlockItems - 1) + ") / " +
                                 std::to_string(PerBlockItems);
    if (Error Err =
            addReplacement(Repls, replaceSpan(Ctx, L.GridRange, Grid), E))
      return Err;
    if (Error Err = addReplacement(
            Repls, replaceSpan(Ctx, L.BlockRange, std::to_string(P.BlockSize)),
            E))
      return Err;
  }
  return Error::success();
}

} // namespace warpperrow
} // namespace optiml
