//===- WarpPerRow.cpp - One warp (or block) per outer item ----------------===//
//
// Pattern: each thread owns one item (a row, a CSR segment, an output of a
// matrix-vector product) behind a bounds guard and runs one or more
// sequential `for` loops over a range that is the same for every thread
// working on that item. Each loop either reduces into scalars (sum,
// product, max, min) or writes elements indexed by its induction variable.
//
// Rewrite: a warp (or a block) per item. The lanes stride every inner loop
// (so loads coalesce), reduced scalars are combined with butterfly shuffles
// (and shared memory across the warps of a block), which also leaves the
// result in every lane for later passes; statements that write memory
// outside the loops run in lane 0 only; elementwise loops are written by all
// lanes. Every launch gets a grid of one warp (block) per item.
//
//===----------------------------------------------------------------------===//

#include "../CatalogInternal.h"
#include "RestructureSupport.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLExtras.h"
#include <functional>

using namespace llvm;
using namespace optiml::restructure;
using clang::dyn_cast;
using clang::dyn_cast_or_null;
using clang::isa;

namespace optiml {
namespace {

struct Reduction {
  const clang::VarDecl *Acc = nullptr;
  enum OpKind { Sum, Prod, Max, Min } Op = Sum;
  std::string Func; ///< fmaxf, max, ... for Max/Min
  bool NeedsZeroing = false;
};

struct InnerLoop {
  const clang::ForStmt *For = nullptr;
  const clang::VarDecl *Var = nullptr;
  const clang::Expr *Start = nullptr;
  std::vector<Reduction> Reductions;
  bool Writes = false;
  std::string Id; ///< loop id from the model
};

struct Plan {
  ResolvedKernel Kernel;
  ThreadItem Item;
  std::vector<InnerLoop> Loops;
  std::vector<const clang::Stmt *> LaneZero; ///< memory writes outside loops
  /// Statements after which the lanes must see each other's writes.
  std::vector<const clang::Stmt *> SyncAfter;
  bool PerBlock = false;
  int64_t BlockSize = 256;
  std::string Description;
};

const char *opName(Reduction::OpKind K) {
  switch (K) {
  case Reduction::Sum:
    return "sum";
  case Reduction::Prod:
    return "product";
  case Reduction::Max:
    return "max";
  case Reduction::Min:
    return "min";
  }
  return "";
}

bool isZero(const clang::Expr *E, const clang::ASTContext &AST, int One) {
  E = stripCasts(E);
  if (const auto *F = dyn_cast<clang::FloatingLiteral>(E))
    return F->getValueAsApproximateDouble() == One;
  if (auto V = intValue(E, AST))
    return *V == One;
  return false;
}

/// Recognizes `acc += e`, `acc = acc + e`, `acc = fmaxf(acc, e)`, ...
std::optional<Reduction> matchAccumulate(const clang::Stmt *S,
                                         const clang::ValueDecl *D) {
  const auto *E = dyn_cast<clang::Expr>(S);
  if (!E)
    return std::nullopt;
  E = E->IgnoreParenImpCasts();
  Reduction R;
  R.Acc = dyn_cast<clang::VarDecl>(D);
  if (!R.Acc ||
      !(R.Acc->getType()->isArithmeticType() ||
        R.Acc->getType()->isDependentType()) ||
      R.Acc->getType()->isBooleanType())
    return std::nullopt;
  if (const auto *CA = dyn_cast<clang::CompoundAssignOperator>(E)) {
    if (declOf(CA->getLHS()) != D || mentions(CA->getRHS(), D))
      return std::nullopt;
    switch (CA->getOpcode()) {
    case clang::BO_AddAssign:
    case clang::BO_SubAssign:
      R.Op = Reduction::Sum;
      return R;
    case clang::BO_MulAssign:
      R.Op = Reduction::Prod;
      return R;
    default:
      return std::nullopt;
    }
  }
  const auto *A = dyn_cast<clang::BinaryOperator>(E);
  if (!A || A->getOpcode() != clang::BO_Assign || declOf(A->getLHS()) != D)
    return std::nullopt;
  const clang::Expr *RHS = stripCasts(A->getRHS());
  if (const auto *B = dyn_cast<clang::BinaryOperator>(RHS)) {
    const clang::Expr *L = B->getLHS(), *Rt = B->getRHS();
    bool LIsAcc = declOf(L) == D, RIsAcc = declOf(Rt) == D;
    if (B->getOpcode() == clang::BO_Sub && LIsAcc && !mentions(Rt, D)) {
      R.Op = Reduction::Sum;
      return R;
    }
    if (B->getOpcode() != clang::BO_Add && B->getOpcode() != clang::BO_Mul)
      return std::nullopt;
    if (!((LIsAcc && !mentions(Rt, D)) || (RIsAcc && !mentions(L, D))))
      return std::nullopt;
    R.Op = B->getOpcode() == clang::BO_Add ? Reduction::Sum : Reduction::Prod;
    return R;
  }
  if (const auto *C = dyn_cast<clang::CallExpr>(RHS)) {
    const clang::FunctionDecl *FD = C->getDirectCallee();
    if (!FD || !FD->getIdentifier() || C->getNumArgs() != 2)
      return std::nullopt;
    StringRef N = FD->getName();
    bool IsMax = N == "fmaxf" || N == "fmax" || N == "max";
    bool IsMin = N == "fminf" || N == "fmin" || N == "min";
    if (!IsMax && !IsMin)
      return std::nullopt;
    const clang::Expr *X = C->getArg(0), *Y = C->getArg(1);
    if (!((declOf(X) == D && !mentions(Y, D)) ||
          (declOf(Y) == D && !mentions(X, D))))
      return std::nullopt;
    R.Op = IsMax ? Reduction::Max : Reduction::Min;
    R.Func = N.str();
    if (FD->isInStdNamespace())
      R.Func = "std::" + R.Func;
    return R;
  }
  return std::nullopt;
}

std::vector<const clang::Stmt *> bodyStmts(const clang::Stmt *Body) {
  if (const auto *CS = dyn_cast<clang::CompoundStmt>(Body))
    return {CS->body_begin(), CS->body_end()};
  return {Body};
}

bool declaredIn(const clang::ValueDecl *D, const clang::Stmt *S,
                const EditContext &Ctx) {
  const clang::SourceManager &SM = Ctx.AST.getSourceManager();
  clang::SourceLocation L = D->getLocation();
  clang::SourceRange R = S->getSourceRange();
  return !SM.isBeforeInTranslationUnit(L, R.getBegin()) &&
         !SM.isBeforeInTranslationUnit(R.getEnd(), L);
}

class WarpPerRow : public Transform {
public:
  StringRef kind() const override { return "warp-per-row"; }
  StringRef description() const override {
    return "one warp (or block) per outer item: lanes stride the inner "
           "loops, shuffles combine sums, maxima and minima";
  }
  TargetKind targetKind() const override { return TargetKind::Kernel; }
  std::vector<ParamSpec> params() const override {
    ParamSpec Per;
    Per.ParamType = ParamSpec::String;
    Per.Name = "per";
    Per.Description = "who owns an item: a warp (short rows) or a whole "
                      "block (long rows)";
    Per.Choices = {"warp", "block"};
    Per.Default = std::string("warp");
    ParamSpec BS;
    BS.ParamType = ParamSpec::Int;
    BS.Name = "block_size";
    BS.Description = "threads per block at every launch (a multiple of 32)";
    BS.Min = 32;
    BS.Max = 1024;
    BS.Default = int64_t(256);
    return {Per, BS};
  }
  bool changesPrecision(const Edit &) const override {
    // Sums and products are reassociated across lanes.
    return true;
  }

  Applicability prepare(const EditContext &Ctx,
                        StringRef Target) const override {
    Applicability A;
    Edit E;
    E.Kind = kind().str();
    E.Target = Target.str();
    auto P = analyze(Ctx, E);
    if (!P) {
      A.Reason = rejectionReason(P.takeError());
      return A;
    }
    A.Applies = true;
    A.Reason = P->Description;
    Edit W = E;
    W.Params["per"] = std::string("warp");
    W.Params["block_size"] = int64_t(256);
    Edit B = E;
    B.Params["per"] = std::string("block");
    B.Params["block_size"] = int64_t(256);
    A.Suggestions = {W, B};
    return A;
  }

  Expected<clang::tooling::Replacements>
  apply(const EditContext &Ctx, const Edit &E) const override {
    auto P = analyze(Ctx, E);
    if (!P)
      return P.takeError();
    return rewrite(Ctx, E, *P);
  }

private:
  Expected<Plan> analyze(const EditContext &Ctx, const Edit &E) const;
  Error analyzeLoop(const EditContext &Ctx, const Edit &E, Plan &P,
                    const clang::ForStmt *For,
                    ArrayRef<const clang::Stmt *> Later) const;
  Expected<clang::tooling::Replacements>
  rewrite(const EditContext &Ctx, const Edit &E, const Plan &P) const;
};

Expected<Plan> WarpPerRow::analyze(const EditContext &Ctx,
                                   const Edit &E) const {
  Plan P;
  auto K = resolveKernel(Ctx, E, E.Target);
  if (!K)
    return K.takeError();
  P.Kernel = *K;
  const KernelInfo &KI = *K->Info;
  std::string Per = E.getString("per").value_or("warp");
  if (Per != "warp" && Per != "block")
    return reject(E, "params", "params.per must be 'warp' or 'block'");
  P.PerBlock = Per == "block";
  P.BlockSize = E.getInt("block_size").value_or(256);
  if (P.BlockSize < 32 || P.BlockSize > 1024 || P.BlockSize % 32)
    return reject(E, "params",
                  "params.block_size must be a multiple of 32 in [32, 1024]");
  if (KI.InMacro)
    return reject(E, "macro", "kernel '" + E.Target +
                                  "' is defined inside a macro expansion");
  if (!KI.Shared.empty() || !KI.Syncthreads.empty() ||
      !KI.WarpPrimitives.empty())
    return reject(E, "not-applicable",
                  "kernel '" + E.Target +
                      "' already cooperates across threads (shared memory, "
                      "__syncthreads or warp primitives)");
  std::string Why;
  auto Item = matchThreadItem(K->Decl, Why);
  if (!Item)
    return reject(E, "not-applicable", Why);
  P.Item = *Item;
  std::string IName = Item->Index->getName().str();
  if (Item->Dim != 'x')
    return reject(E, "not-applicable",
                  "the item index '" + IName + "' is in dimension " +
                      Twine(Item->Dim) + "; only x is supported");
  for (const clang::Stmt *S : Item->Before) {
    const auto *DS = dyn_cast<clang::DeclStmt>(S);
    bool Ok = DS != nullptr;
    if (DS)
      for (const clang::Decl *D : DS->decls()) {
        const auto *V = dyn_cast<clang::VarDecl>(D);
        Ok &= V && (!V->getInit() || !mentionsBuiltin(V->getInit(),
                                                        "threadIdx"));
      }
    if (!Ok)
      return reject(E, "not-applicable",
                    "statement at " + where(Ctx, S) +
                        " comes before the item index and is not a "
                        "thread-independent declaration");
  }
  if (!isBlockUniform(Item->Bound, K->Decl))
    return reject(E, "not-applicable",
                  "the bound '" + exprText(Ctx, Item->Bound) +
                      "' differs between threads");
  for (const clang::Stmt *S : Item->Body) {
    if (mentionsBuiltin(S))
      return reject(E, "not-applicable",
                    "the body uses thread or block indices at " +
                        where(Ctx, S) + " other than through '" + IName +
                        "'; lanes sharing an item would disagree");
    if (const clang::Stmt *C = opaqueCall(S))
      return reject(E, "not-applicable",
                    "the call at " + where(Ctx, C) +
                        " takes a pointer or reference; its writes cannot "
                        "be followed");
  }

  // Each top-level statement: an inner loop, or a statement every lane runs
  // (lane 0 alone when it writes memory).
  for (size_t I = 0; I < Item->Body.size(); ++I) {
    const clang::Stmt *S = Item->Body[I];
    ArrayRef<const clang::Stmt *> Later =
        ArrayRef(Item->Body).drop_front(I + 1);
    if (const auto *For = dyn_cast<clang::ForStmt>(S)) {
      if (Error Err = analyzeLoop(Ctx, E, P, For, Later))
        return std::move(Err);
      continue;
    }
    if (isa<clang::WhileStmt, clang::DoStmt, clang::CXXForRangeStmt>(S))
      return reject(E, "not-applicable",
                    "the inner loop at " + where(Ctx, S) +
                        " is not a 'for' loop with a unit step");
    bool HasLoop = false;
    std::function<void(const clang::Stmt *)> Find =
        [&](const clang::Stmt *N) {
          if (!N)
            return;
          HasLoop |= isa<clang::ForStmt, clang::WhileStmt, clang::DoStmt,
                         clang::CXXForRangeStmt>(N);
          for (const clang::Stmt *C : N->children())
            Find(C);
        };
    Find(S);
    if (HasLoop)
      return reject(E, "not-applicable",
                    "the loop inside the statement at " + where(Ctx, S) +
                        " is not at the top level of the item's body");
    if (const clang::Stmt *J = firstJump(S))
      return reject(E, "not-applicable",
                    "the jump at " + where(Ctx, J) +
                        " leaves the item's body early");
    bool WritesMemory = !memoryWrites(S).empty();
    for (const clang::Stmt *N : {S}) {
      std::function<void(const clang::Stmt *)> Atom =
          [&](const clang::Stmt *X) {
            if (const auto *C = dyn_cast_or_null<clang::CallExpr>(X))
              if (const auto *FD = C->getDirectCallee())
                if (FD->getIdentifier() &&
                    FD->getName().starts_with("atomic"))
                  WritesMemory = true;
            if (X)
              for (const clang::Stmt *C : X->children())
                Atom(C);
          };
      Atom(N);
    }
    if (!WritesMemory)
      continue;
    if (isa<clang::DeclStmt>(S))
      return reject(E, "not-applicable",
                    "the declaration at " + where(Ctx, S) +
                        " writes memory; only one lane may do that");
    P.LaneZero.push_back(S);
    for (const MemWrite &W : memoryWrites(S))
      if (const clang::ValueDecl *B = declOf(W.Base))
        if (llvm::any_of(Later, [&](const clang::Stmt *L) {
              return mentions(L, B);
            })) {
          P.SyncAfter.push_back(S);
          break;
        }
  }
  if (P.Loops.empty())
    return reject(E, "not-applicable",
                  "the item's body has no inner 'for' loop to share among "
                  "the lanes");
  if (std::string Why = launchProblem(KI); !Why.empty())
    return reject(E, "launch", Why);
  for (const LaunchSite &L : KI.Launches) {
    std::string WhyL;
    if (!boundAtLaunch(Ctx, Item->Bound, L, WhyL))
      return reject(E, "launch", WhyL, L.Range.Begin);
  }

  std::string D;
  raw_string_ostream OS(D);
  OS << "one thread per item '" << IName << "' (bound '"
     << exprText(Ctx, Item->Bound) << "') with " << P.Loops.size()
     << " inner loop" << (P.Loops.size() > 1 ? "s" : "") << ":";
  for (const InnerLoop &L : P.Loops) {
    OS << " " << (L.Id.empty() ? std::string("loop") : L.Id) << " (";
    std::vector<std::string> Parts;
    for (const Reduction &R : L.Reductions)
      Parts.push_back(std::string(opName(R.Op)) + " of '" +
                      R.Acc->getName().str() + "'");
    if (L.Writes)
      Parts.push_back("elementwise writes");
    OS << join(Parts, ", ") << ")";
  }
  OS << "; rewrite: one " << (P.PerBlock ? "block" : "warp")
     << " per item, lanes stride the loops";
  P.Description = D;
  return P;
}

Error WarpPerRow::analyzeLoop(const EditContext &Ctx, const Edit &E, Plan &P,
                              const clang::ForStmt *For,
                              ArrayRef<const clang::Stmt *> Later) const {
  InnerLoop L;
  L.For = For;
  for (const LoopInfo &LI : P.Kernel.Info->Loops)
    if (auto Sp = exprSpan(Ctx, For))
      if (LI.Range.Begin.Offset == Sp->Begin)
        L.Id = LI.Id;
  std::string At = "the loop at " + where(Ctx, For);
  // Induction variable and start.
  if (const auto *DS = dyn_cast_or_null<clang::DeclStmt>(For->getInit())) {
    if (DS->isSingleDecl())
      if (const auto *V = dyn_cast<clang::VarDecl>(DS->getSingleDecl())) {
        L.Var = V;
        L.Start = V->getInit();
      }
  } else if (const auto *A =
                 dyn_cast_or_null<clang::BinaryOperator>(For->getInit())) {
    if (A->getOpcode() == clang::BO_Assign)
      if (const auto *V = dyn_cast_or_null<clang::VarDecl>(declOf(A->getLHS()))) {
        L.Var = V;
        L.Start = A->getRHS();
      }
  }
  if (!L.Var || !L.Start || !L.Var->getType()->isIntegerType())
    return reject(E, "not-applicable",
                  At + " has no integer induction variable initialized in "
                       "its header");
  std::string J = L.Var->getName().str();
  // Condition: j < B or j <= B.
  const auto *C =
      dyn_cast_or_null<clang::BinaryOperator>(For->getCond()
                                                  ? For->getCond()
                                                        ->IgnoreParenImpCasts()
                                                  : nullptr);
  if (!C ||
      (C->getOpcode() != clang::BO_LT && C->getOpcode() != clang::BO_LE) ||
      declOf(C->getLHS()) != L.Var || mentions(C->getRHS(), L.Var))
    return reject(E, "not-applicable",
                  At + " is not bounded as '" + J + " < end'");
  // Step: ++j, j++, j += 1, j = j + 1.
  bool Unit = false;
  if (const auto *Inc = For->getInc()) {
    const clang::Expr *I = Inc->IgnoreParenImpCasts();
    if (const auto *U = dyn_cast<clang::UnaryOperator>(I))
      Unit = U->isIncrementOp() && declOf(U->getSubExpr()) == L.Var;
    else if (const auto *CA = dyn_cast<clang::CompoundAssignOperator>(I))
      Unit = CA->getOpcode() == clang::BO_AddAssign &&
             declOf(CA->getLHS()) == L.Var &&
             isZero(CA->getRHS(), Ctx.AST, 1);
    else if (const auto *A = dyn_cast<clang::BinaryOperator>(I))
      if (A->getOpcode() == clang::BO_Assign && declOf(A->getLHS()) == L.Var)
        if (const auto *Add =
                dyn_cast<clang::BinaryOperator>(stripCasts(A->getRHS())))
          Unit = Add->getOpcode() == clang::BO_Add &&
                 declOf(Add->getLHS()) == L.Var &&
                 isZero(Add->getRHS(), Ctx.AST, 1);
  }
  if (!Unit)
    return reject(E, "not-applicable",
                  At + " does not step '" + J +
                      "' by one; only contiguous inner loops are strided");
  const clang::Stmt *Body = For->getBody();
  if (llvm::is_contained(writtenDecls(Body), L.Var))
    return reject(E, "not-applicable",
                  At + " writes its induction variable '" + J + "'");
  if (const clang::Stmt *Jmp = firstJump(Body))
    return reject(E, "not-applicable",
                  At + " leaves early at " + where(Ctx, Jmp) +
                      "; lanes would stop at different elements");

  // Scalars from outside the loop: only reductions.
  std::vector<const clang::Stmt *> Top = bodyStmts(Body);
  for (const clang::ValueDecl *D : writtenDecls(Body)) {
    if (declaredIn(D, For, Ctx))
      continue;
    std::optional<Reduction> R;
    for (const clang::Stmt *S : Top) {
      if (!mentions(S, D))
        continue;
      auto M = matchAccumulate(S, D);
      if (!M || R) {
        R.reset();
        break;
      }
      R = M;
    }
    // The accumulator may not be read elsewhere in the loop.
    unsigned Mentioning = 0;
    for (const clang::Stmt *S : Top)
      Mentioning += mentions(S, D);
    if (!R || Mentioning != 1)
      return reject(E, "not-applicable",
                    At + " carries '" + D->getName() +
                        "' from one element to the next in a way that is "
                        "not a sum, product, max or min (loop-carried "
                        "dependence)");
    if (R->Op == Reduction::Sum || R->Op == Reduction::Prod) {
      // Lanes other than the first start from the identity unless the
      // value before the loop is known to be it.
      bool Identity = false;
      if (const clang::Expr *Init = R->Acc->getInit())
        if (isZero(Init, Ctx.AST, R->Op == Reduction::Sum ? 0 : 1)) {
          Identity = true;
          for (const InnerLoop &Prev : P.Loops)
            Identity &= !mentions(Prev.For, R->Acc);
          for (const clang::Stmt *S : P.Item.Body) {
            if (S == For)
              break;
            Identity &= !llvm::is_contained(writtenDecls(S), R->Acc);
          }
        }
      R->NeedsZeroing = !Identity;
    }
    L.Reductions.push_back(*R);
  }
  // Memory: each lane writes only elements of its own iterations.
  std::vector<MemWrite> Writes = memoryWrites(Body);
  for (const MemWrite &W : Writes) {
    const clang::ValueDecl *Base = declOf(W.Base);
    bool OwnElement = W.Index && mentions(W.Index, L.Var);
    if (!OwnElement || !Base)
      return reject(E, "not-applicable",
                    At + " writes '" + exprText(Ctx, W.Target) +
                        "', which does not depend on '" + J +
                        "'; every lane would write it");
    if (declaredIn(Base, For, Ctx))
      continue;
    L.Writes = true;
    // Reads of the same array at another element are a dependence
    // between iterations that other lanes now run.
    std::string WIdx = exprText(Ctx, W.Index);
    std::function<Error(const clang::Stmt *)> Check =
        [&](const clang::Stmt *N) -> Error {
      if (!N)
        return Error::success();
      if (const auto *AS = dyn_cast<clang::ArraySubscriptExpr>(N))
        if (declOf(AS->getBase()) == Base &&
            exprText(Ctx, AS->getIdx()) != WIdx)
          return reject(E, "not-applicable",
                        At + " reads '" + exprText(Ctx, AS) +
                            "' and writes '" + exprText(Ctx, W.Target) +
                            "': a dependence between iterations");
      for (const clang::Stmt *Ch : N->children())
        if (Error Err = Check(Ch))
          return Err;
      return Error::success();
    };
    if (Error Err = Check(Body))
      return Err;
    if (llvm::any_of(Later, [&](const clang::Stmt *S) {
          return mentions(S, Base);
        }) &&
        !llvm::is_contained(P.SyncAfter, For))
      P.SyncAfter.push_back(For);
  }
  P.Loops.push_back(std::move(L));
  return Error::success();
}

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

std::string combine(const Reduction &R, StringRef Acc, StringRef Other) {
  switch (R.Op) {
  case Reduction::Sum:
    return (Acc + " += " + Other).str();
  case Reduction::Prod:
    return (Acc + " *= " + Other).str();
  default:
    return (Acc + " = " + R.Func + "(" + Acc + ", " + Other + ")").str();
  }
}

Expected<clang::tooling::Replacements>
WarpPerRow::rewrite(const EditContext &Ctx, const Edit &E,
                    const Plan &P) const {
  clang::tooling::Replacements Repls;
  auto Add = [&](unsigned Off, unsigned Len, StringRef Text) -> Error {
    return addReplacement(
        Repls, clang::tooling::Replacement(Ctx.FileName, Off, Len, Text), E);
  };
  auto SpanOr = [&](const clang::Stmt *S) -> Expected<Span> {
    if (auto Sp = stmtSpan(Ctx, S))
      return *Sp;
    return reject(E, "macro",
                  "the statement at " + where(Ctx, S) +
                      " is written inside a macro expansion");
  };
  std::string Lane = freshName(Ctx.Code, "lane");
  std::string Off = freshName(Ctx.Code, "offset");
  int64_t Warps = P.BlockSize / 32;
  std::string Stride = P.PerBlock ? std::to_string(P.BlockSize) : "32";

  // The item index and the lane.
  const clang::VarDecl *Idx = P.Item.Index;
  auto InitSp = exprSpan(Ctx, Idx->getInit());
  auto DeclSp = stmtSpan(Ctx, P.Item.IndexDecl);
  if (!InitSp || !DeclSp)
    return reject(E, "macro", "the item index is written inside a macro");
  std::string Indent = lineIndent(Ctx.Code, DeclSp->Begin);
  if (Error Err = Add(InitSp->Begin, InitSp->End - InitSp->Begin,
                      P.PerBlock ? "blockIdx.x"
                                 : "blockIdx.x * (blockDim.x / 32) + "
                                   "threadIdx.x / 32"))
    return std::move(Err);
  if (Error Err = Add(DeclSp->End, 0,
                      "\n" + Indent + "int " + Lane + " = threadIdx.x" +
                          (P.PerBlock ? "" : " % 32") + ";"))
    return std::move(Err);

  for (const InnerLoop &L : P.Loops) {
    auto FS = SpanOr(L.For);
    if (!FS)
      return FS.takeError();
    std::string In = lineIndent(Ctx.Code, FS->Begin);
    // Start at the lane, step by the lanes.
    auto St = exprSpan(Ctx, L.Start);
    auto IncSp = exprSpan(Ctx, L.For->getInc());
    if (!St || !IncSp)
      return reject(E, "macro", "the loop header at " + where(Ctx, L.For) +
                                    " is written inside a macro");
    std::string Start;
    if (isZero(L.Start, Ctx.AST, 0))
      Start = Lane;
    else if (addsWithoutParens(L.Start))
      Start = exprText(Ctx, L.Start) + " + " + Lane;
    else
      Start = "(" + exprText(Ctx, L.Start) + ") + " + Lane;
    if (Error Err = Add(St->Begin, St->End - St->Begin, Start))
      return std::move(Err);
    if (Error Err = Add(IncSp->Begin, IncSp->End - IncSp->Begin,
                        L.Var->getName().str() + " += " + Stride))
      return std::move(Err);
    // Lanes other than the first start sums and products from the
    // identity.
    std::string Before;
    for (const Reduction &R : L.Reductions)
      if (R.NeedsZeroing)
        Before += "if (" + Lane + " != 0) " + R.Acc->getName().str() +
                  (R.Op == Reduction::Sum ? " = 0;" : " = 1;") + "\n" + In;
    if (!Before.empty())
      if (Error Err = Add(FS->Begin, 0, Before))
        return std::move(Err);
    // Combine the lanes' partial results; every lane gets the total.
    std::string After;
    if (!L.Reductions.empty()) {
      std::string Head = "for (int " + Off + " = 16; " + Off + " > 0; " + Off +
                         " /= 2)";
      std::vector<std::string> Steps;
      for (const Reduction &R : L.Reductions) {
        std::string A = R.Acc->getName().str();
        Steps.push_back(combine(R, A,
                                "__shfl_xor_sync(0xffffffffu, " + A + ", " +
                                    Off + ")") +
                        ";");
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
                   combine(R, A, Part + "[" + W + "]") + ";";
          After += "\n" + In + "}";
        }
      }
    }
    if (llvm::is_contained(P.SyncAfter, L.For))
      After += "\n" + In + (P.PerBlock ? "__syncthreads();" : "__syncwarp();");
    if (!After.empty())
      if (Error Err = Add(FS->End, 0, After))
        return std::move(Err);
  }
  for (const clang::Stmt *S : P.LaneZero) {
    auto Sp = SpanOr(S);
    if (!Sp)
      return Sp.takeError();
    if (Error Err = Add(Sp->Begin, 0, "if (" + Lane + " == 0) "))
      return std::move(Err);
    if (llvm::is_contained(P.SyncAfter, S))
      if (Error Err = Add(Sp->End, 0,
                          "\n" + lineIndent(Ctx.Code, Sp->Begin) +
                              (P.PerBlock ? "__syncthreads();"
                                          : "__syncwarp();")))
        return std::move(Err);
  }

  // Launches: one warp (block) per item.
  for (const LaunchSite &L : P.Kernel.Info->Launches) {
    std::string Why;
    auto N = boundAtLaunch(Ctx, P.Item.Bound, L, Why);
    if (!N)
      return reject(E, "launch", Why, L.Range.Begin);
    std::string Grid =
        P.PerBlock ? *N
                   : "(" + paren(*N) + " + " + std::to_string(Warps - 1) +
                         ") / " + std::to_string(Warps);
    if (Warps == 1 && !P.PerBlock)
      Grid = *N;
    if (Error Err = addReplacement(Repls, replaceSpan(Ctx, L.GridRange, Grid),
                                   E))
      return std::move(Err);
    if (Error Err = addReplacement(
            Repls, replaceSpan(Ctx, L.BlockRange, std::to_string(P.BlockSize)),
            E))
      return std::move(Err);
  }
  return Repls;
}

} // namespace

std::unique_ptr<Transform> createWarpPerRowTransform() {
  return std::make_unique<WarpPerRow>();
}

} // namespace optiml
