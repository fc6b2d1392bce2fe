//===- WarpReduce.cpp - Per-thread atomics -> warp shuffles + one atomic ---===//
//
// A kernel whose threads each add into one block-uniform address
//   if (i < n) atomicAdd(sum, x[i]);
// accumulates into a register instead, combines the 32 lanes of each warp
// with __shfl_down_sync, and lets lane 0 do the one atomicAdd:
//   float warp_sum = 0;
//   if (i < n) warp_sum += x[i];
//   for (int off = 16; off > 0; off /= 2)
//     warp_sum += __shfl_down_sync(0xffffffffu, warp_sum, off);
//   if (threadIdx.x % 32 == 0)
//     atomicAdd(sum, warp_sum);
// The shuffles need every lane of every warp to reach them: the kernel may
// not return early, must be one-dimensional, and every launch's block must be
// a known multiple of 32. Floating-point sums are reassociated.
//
//===----------------------------------------------------------------------===//

#include "../CatalogInternal.h"
#include "KernelPatterns.h"
#include "optiml/Frontend/ASTUtil.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"

using namespace clang;
using namespace llvm;

namespace optiml {
namespace {

struct WarpReducePlan {
  ResolvedKernel Kernel;
  std::vector<const CallExpr *> Atomics;
  std::string Target; ///< the address, as written
  std::string Type;   ///< accumulator type
  bool NeedsCast = false;
};

class WarpReduceTransform : public Transform {
public:
  StringRef kind() const override { return "warp-reduce"; }
  StringRef description() const override {
    return "replace per-thread atomicAdd into one address with warp shuffles "
           "and one atomic per warp (reassociates sums)";
  }
  TargetKind targetKind() const override { return TargetKind::Kernel; }
  bool changesPrecision(const Edit &) const override { return true; }

  Applicability prepare(const EditContext &Ctx,
                        StringRef Target) const override {
    Edit E;
    E.Kind = kind().str();
    E.Target = Target.str();
    Applicability A;
    auto Plan = analyze(Ctx, E);
    if (!Plan) {
      A.Reason = rejectionMessage(Plan.takeError());
      return A;
    }
    A.Applies = true;
    A.Reason = std::to_string(Plan->Atomics.size()) +
               " atomicAdd(s) per thread into '" + Plan->Target +
               "', the same address for every thread: one per warp instead";
    A.Suggestions.push_back(E);
    return A;
  }

  Expected<tooling::Replacements> apply(const EditContext &Ctx,
                                        const Edit &E) const override {
    auto Plan = analyze(Ctx, E);
    if (!Plan)
      return Plan.takeError();
    const auto *Body = cast<CompoundStmt>(Plan->Kernel.Decl->getBody());
    const SourceManager &SM = Ctx.AST.getSourceManager();
    // Fresh names need only be new within the kernel.
    StringRef KText = StringRef(Ctx.Code).slice(
        Plan->Kernel.Info->Range.Begin.Offset, Plan->Kernel.Info->Range.End.Offset);
    std::string Acc = freshName(KText, "warp_sum");
    std::string Off = freshName(KText, "off");
    tooling::Replacements R;
    auto First = stmtSpan(Ctx, Body->body_front());
    std::string Indent = indentationAt(Ctx.Code, First->Begin.Offset);
    if (Error Err = addReplacement(
            R,
            insertAt(Ctx, First->Begin.Offset,
                     Plan->Type + " " + Acc + " = 0;\n" + Indent),
            E))
      return std::move(Err);
    for (const CallExpr *C : Plan->Atomics) {
      auto Span = fileSpan(SM, Ctx.AST.getLangOpts(), C->getSourceRange());
      std::string V = exprText(Ctx, C->getArg(1));
      if (Plan->NeedsCast)
        V = "static_cast<" + Plan->Type + ">(" + V + ")";
      if (Error Err = addReplacement(
              R, replaceSpan(Ctx, *Span, Acc + " += " + V), E))
        return std::move(Err);
    }
    unsigned RBrace = SM.getFileOffset(SM.getExpansionLoc(Body->getRBracLoc()));
    std::string Tail =
        Indent + "for (int " + Off + " = 16; " + Off + " > 0; " + Off +
        " /= 2)\n" + Indent + "  " + Acc + " += __shfl_down_sync(0xffffffffu, " +
        Acc + ", " + Off + ");\n" + Indent + "if (threadIdx.x % 32 == 0)\n" +
        Indent + "  atomicAdd(" + Plan->Target + ", " + Acc + ");\n";
    // Insert at the start of the closing brace's line.
    unsigned LineStart = RBrace;
    while (LineStart > 0 && (Ctx.Code[LineStart - 1] == ' ' ||
                             Ctx.Code[LineStart - 1] == '\t'))
      --LineStart;
    if (LineStart == 0 || Ctx.Code[LineStart - 1] != '\n') {
      Tail = "\n" + Tail;
      LineStart = RBrace;
    }
    if (Error Err = addReplacement(R, insertAt(Ctx, LineStart, Tail), E))
      return std::move(Err);
    return R;
  }

private:
  Expected<WarpReducePlan> analyze(const EditContext &Ctx,
                                   const Edit &E) const {
    auto K = resolveKernel(Ctx, E, E.Target);
    if (!K)
      return K.takeError();
    WarpReducePlan Plan;
    Plan.Kernel = *K;
    auto No = [&](const Twine &Why, SourcePos Pos = {}) {
      return reject(E, "not-applicable", "kernel '" + E.Target + "': " + Why,
                    Pos);
    };
    const auto *Body = dyn_cast_or_null<CompoundStmt>(K->Decl->getBody());
    if (!Body || Body->body_empty())
      return No("has no body");
    if (K->Info->Uses2DThreads)
      return No("uses 2D thread indices; warp lanes are threadIdx.x % 32 only "
                "in one-dimensional blocks");
    if (containsMacro(Body))
      return No("its body uses macros");

    // Atomics used as statements, and all atomics.
    struct Finder : RecursiveASTVisitor<Finder> {
      std::vector<const CallExpr *> All, AsStmt;
      bool Return = false;
      static bool isAtomicCall(const Stmt *S) {
        const auto *C = dyn_cast_or_null<CallExpr>(S);
        const FunctionDecl *FD = C ? C->getDirectCallee() : nullptr;
        return FD && FD->getDeclName().isIdentifier() &&
               FD->getName().starts_with("atomic");
      }
      void noteChild(const Stmt *S) {
        if (isAtomicCall(S))
          AsStmt.push_back(cast<CallExpr>(S));
      }
      bool VisitCompoundStmt(CompoundStmt *CS) {
        for (const Stmt *S : CS->body())
          noteChild(S);
        return true;
      }
      bool VisitIfStmt(IfStmt *S) {
        noteChild(S->getThen());
        noteChild(S->getElse());
        return true;
      }
      bool VisitForStmt(ForStmt *S) {
        noteChild(S->getBody());
        return true;
      }
      bool VisitWhileStmt(WhileStmt *S) {
        noteChild(S->getBody());
        return true;
      }
      bool VisitDoStmt(DoStmt *S) {
        noteChild(S->getBody());
        return true;
      }
      bool VisitCallExpr(CallExpr *C) {
        if (isAtomicCall(C))
          All.push_back(C);
        return true;
      }
      bool VisitReturnStmt(ReturnStmt *) {
        Return = true;
        return true;
      }
      bool TraverseLambdaExpr(LambdaExpr *) { return true; }
    } F;
    F.TraverseStmt(const_cast<CompoundStmt *>(Body));
    const SourceManager &SM = Ctx.AST.getSourceManager();
    if (F.All.empty()) {
      if (!K->Info->Shared.empty() && !K->Info->Syncthreads.empty())
        return No("no atomics to combine (shared-memory tree reductions are "
                  "not rewritten by warp-reduce yet)");
      return No("has no atomics to combine");
    }
    if (F.All.size() != F.AsStmt.size())
      return No("the result of an atomic is used",
                filePos(SM, F.All.front()->getBeginLoc()));
    if (F.Return)
      return No("returns early: every lane of a warp must reach the shuffles");
    for (const CallExpr *C : F.All) {
      StringRef Name = C->getDirectCallee()->getName();
      SourcePos Pos = filePos(SM, C->getBeginLoc());
      if (Name != "atomicAdd")
        return No("uses " + Name + "; only atomicAdd is combined", Pos);
      if (C->getNumArgs() != 2)
        return No("atomicAdd with an unexpected number of arguments", Pos);
      std::string T = exprText(Ctx, C->getArg(0));
      T.erase(std::remove_if(T.begin(), T.end(), ::isspace), T.end());
      if (Plan.Target.empty())
        Plan.Target = exprText(Ctx, C->getArg(0));
      std::string First = Plan.Target;
      First.erase(std::remove_if(First.begin(), First.end(), ::isspace),
                  First.end());
      if (T != First)
        return No("atomics go to different addresses ('" + Plan.Target +
                      "' and '" + exprText(Ctx, C->getArg(0)) + "')",
                  Pos);
      if (!threadVariance(C->getArg(0), K->Decl).uniform())
        return No("the address '" + exprText(Ctx, C->getArg(0)) +
                      "' is not the same for every thread",
                  Pos);
      QualType PT = C->getArg(0)->IgnoreImpCasts()->getType();
      if (!PT->isPointerType())
        return No("the atomic's address is not a pointer", Pos);
      QualType VT = PT->getPointeeType().getCanonicalType().getUnqualifiedType();
      std::string Type;
      if (VT == Ctx.AST.FloatTy)
        Type = "float";
      else if (VT == Ctx.AST.DoubleTy)
        Type = "double";
      else if (VT == Ctx.AST.IntTy)
        Type = "int";
      else if (VT == Ctx.AST.UnsignedIntTy)
        Type = "unsigned";
      else
        return No("atomicAdd on '" + VT.getAsString() +
                      "': only float, double, int and unsigned are combined",
                  Pos);
      if (!Plan.Type.empty() && Plan.Type != Type)
        return No("atomics of different types", Pos);
      Plan.Type = Type;
      QualType ArgT =
          C->getArg(1)->IgnoreImpCasts()->getType().getCanonicalType();
      if (ArgT.getUnqualifiedType() != VT)
        Plan.NeedsCast = true;
    }
    Plan.Atomics = F.All;
    std::string Why;
    auto Blocks = launchBlockSizesX(Ctx, *K->Info, Why);
    if (!Blocks)
      return No(Why + "; warp shuffles need blocks that are whole warps");
    for (size_t I = 0; I < Blocks->size(); ++I)
      if ((*Blocks)[I] % 32 != 0)
        return No("launch " + K->Info->Launches[I].Id + " uses blocks of " +
                  std::to_string((*Blocks)[I]) +
                  " threads, not a multiple of 32");
    return Plan;
  }
};

} // namespace

std::unique_ptr<Transform> createWarpReduceTransform() {
  return std::make_unique<WarpReduceTransform>();
}

} // namespace optiml
