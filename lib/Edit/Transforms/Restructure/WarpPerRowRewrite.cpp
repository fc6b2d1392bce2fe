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

} // namespace

// Why long: the new kernel text is emitted in the order it reads (row and
// lane indices, the strided loop, the shuffles, the broadcast, the launch
// changes), each part depending on the plan's choices (lanes, per warp or
// block, rows kept in registers).
Expected<clang::tooling::Replacements>
WarpPerRow::rewrite(const EditContext &Ctx, const Edit &E,
                    const Plan &P) const {
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
  // Items per block in the warp form.
  int64_t PerBlockItems = P.BlockSize / P.Lanes;
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
  auto RegisterHeader = [&](const InnerLoop &L) {
    std::string J = L.Var->getName().str();
    std::string Start = Lane + " + " + K + " * " + Stride;
    if (!isZero(L.Start, Ctx.AST, 0))
      Start =
          (addsWithoutParens(L.Start) ? writtenText(Ctx, L.Start)
                                      : "(" + writtenText(Ctx, L.Start) + ")") +
          " + " + Start;
    std::string Init =
        L.InitDeclares
            ? L.Var->getType().getAsString(Ctx.AST.getPrintingPolicy()) + " " +
                  J + " = " + Start
            : J + " = " + Start;
    return "for (int " + K + " = 0; " + K + " < " + PerLane + "; ++" + K +
           ") if (" + Init + "; " + writtenText(Ctx, L.Cond) + ")";
  };

  for (size_t LI = 0; LI < P.Loops.size(); ++LI) {
    const InnerLoop &L = P.Loops[LI];
    auto FS = SpanOr(L.For);
    if (!FS)
      return FS.takeError();
    std::string In = indentationAt(Ctx.Code, FS->Begin.Offset);
    bool OnlineMax = P.Fused && LI == P.Fused->MaxLoop;
    std::string OnlineBody;
    if (P.Fused && LI == P.Fused->SumLoop) {
      // The max pass already summed the exponentials, in every lane.
      if (Error Err = Add(FS->Begin.Offset, FS->End.Offset - FS->Begin.Offset,
                          P.Fused->Sum->getName().str() + " += " + Run + ";"))
        return std::move(Err);
      continue;
    }
    // Lanes other than the first start sums and products from the
    // identity.
    std::string Before;
    for (const Reduction &R : L.Reductions)
      if (R.NeedsZeroing)
        Before += "if (" + Lane + " != 0) " + R.Acc->getName().str() +
                  (R.Op == Reduction::Sum ? " = 0;" : " = 1;") + "\n" + In;
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
      // The body becomes the running max and the rescaled sum.
      std::vector<TextEdit> ElemEdits;
      if (FromRegisters)
        for (const clang::ArraySubscriptExpr *A :
             rowReads(P.Fused->Elem, L.Var))
          for (const CachedArray &C : P.Cached)
            if (C.Array == declOf(A->getBase()))
              if (auto ASp = looseExprSpan(Ctx, A))
                ElemEdits.push_back({ASp->Begin.Offset,
                                     ASp->End.Offset - ASp->Begin.Offset,
                                     C.Name + "[" + K + "]"});
      auto ESp = looseExprSpan(Ctx, P.Fused->Elem);
      if (!ESp)
        return reject(E, "macro",
                      "the element at " + where(Ctx, P.Fused->Elem) +
                          " is written inside a macro");
      std::string Elem = spliceText(Ctx.Code, ESp->Begin.Offset,
                                    ESp->End.Offset, std::move(ElemEdits));
      OnlineBody = " {\n" + In + "  " + OnlineType + " " + ElemVar + " = " +
                   Elem + ";\n" + In + "  " + OnlineType + " " + MNew + " = " +
                   P.Fused->MaxFunc + "(" + MName + ", " + ElemVar + ");\n" +
                   In + "  " + Run + " = " + Run + " * " + Rescale(MName) +
                   " + " + P.Fused->Exp + "(" + ElemVar + " - " + MNew +
                   ");\n" + In + "  " + MName + " = " + MNew + ";\n" + In + "}";
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
        Load += "#pragma unroll\n" + In + RegisterHeader(L) + " ";
        Load += Steps.size() == 1 ? Steps[0] : "{ " + join(Steps, " ") + " }";
        Load += "\n" + In;
      }
      if (Error Err =
              Add(FS->Begin.Offset, HeaderEnd - FS->Begin.Offset,
                  Load + Before + "#pragma unroll\n" + In + RegisterHeader(L)))
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
      if (isZero(L.Start, Ctx.AST, 0))
        Start = Lane;
      else if (addsWithoutParens(L.Start))
        Start = looseExprText(Ctx, L.Start) + " + " + Lane;
      else
        Start = "(" + looseExprText(Ctx, L.Start) + ") + " + Lane;
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
        return "\n" + In + Pad + OnlineType + " " + MNew + " = " +
               P.Fused->MaxFunc + "(" + MName + ", " + MO + ");" + "\n" + In +
               Pad + Run + " = " + Run + " * " + Rescale(MName) + " + " + SO +
               " * " + Rescale(MO) + ";" + "\n" + In + Pad + MName + " = " +
               MNew + ";";
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
    if (!L.Reductions.empty()) {
      auto TypeOf = [&](const Reduction &R) {
        return R.Acc->getType().getUnqualifiedType().getAsString(
            Ctx.AST.getPrintingPolicy());
      };
      std::string Head = "for (int " + Off + " = " +
                         std::to_string(P.PerBlock ? 16 : P.Lanes / 2) + "; " +
                         Off + " > 0; " + Off + " /= 2)";
      std::vector<std::string> Steps;
      for (const Reduction &R : L.Reductions) {
        std::string A = R.Acc->getName().str();
        std::string Shfl = "__shfl_xor_sync(" + Mask + ", " + A + ", " + Off +
                           (Groups ? ", " + LanesText : "") + ")";
        std::string Step = R.Cond ? combine(R, A, Shfl, TypeOf(R),
                                            freshName(Ctx.Code, A + "_other"))
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
          std::string A = R.Acc->getName().str();
          std::string Part = freshName(Ctx.Code, A + "_warps");
          std::string T = R.Acc->getType().getUnqualifiedType().getAsString(
              Ctx.AST.getPrintingPolicy());
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
                                     freshName(Ctx.Code, A + "_other"))
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
  for (const LaunchSite &L : P.Kernel.Info->Launches) {
    std::string Why;
    auto N = boundAtLaunch(Ctx, P.Item.Bound, L, Why);
    if (!N)
      return reject(E, "launch", Why, L.Range.Begin);
    std::string Grid = P.PerBlock ? *N
                                  : "(" + parenthesize(*N) + " + " +
                                        std::to_string(PerBlockItems - 1) +
                                        ") / " + std::to_string(PerBlockItems);
    if (PerBlockItems == 1 && !P.PerBlock)
      Grid = *N;
    if (Error Err =
            addReplacement(Repls, replaceSpan(Ctx, L.GridRange, Grid), E))
      return std::move(Err);
    if (Error Err = addReplacement(
            Repls, replaceSpan(Ctx, L.BlockRange, std::to_string(P.BlockSize)),
            E))
      return std::move(Err);
  }
  return Repls;
}

} // namespace warpperrow
} // namespace optiml
