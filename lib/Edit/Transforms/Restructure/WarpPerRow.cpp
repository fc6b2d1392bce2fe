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

#include "../../CatalogInternal.h"
#include "../../Patterns/ThreadPerItem.h"
#include "../TransformSupport.h"
#include "PlannedTransform.h"
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
  const clang::BinaryOperator *Cond = nullptr; ///< `j < end` or `j <= end`
  bool InitDeclares = false; ///< `for (int j = ...` rather than `j = ...`
  std::vector<Reduction> Reductions;
  bool Writes = false;
  std::string Id; ///< loop id from the model
};

/// An array whose row elements stay in registers across passes.
struct CachedArray {
  const clang::ValueDecl *Array = nullptr;
  std::string ElemType;
  std::string Name; ///< the register array
};

/// The largest row length a loop can run, when every launch (or template
/// instantiation) fixes it at compile time; else why not.
struct RowLength {
  std::optional<int64_t> Max;
  std::string WhyNot;
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
  int64_t Lanes = 32; ///< lanes per item in the warp form
  /// Keeping rows in registers: the arrays, the passes that read them
  /// (indices into Loops), values per lane.
  std::vector<CachedArray> Cached;
  std::vector<size_t> CachedLoops;
  int64_t PerLane = 0;
  /// The online softmax combine: a max pass fused with the following
  /// pass that sums exp(e - max).
  struct Online {
    size_t MaxLoop = 0, SumLoop = 0;
    const clang::VarDecl *Max = nullptr, *Sum = nullptr;
    const clang::Expr *Elem = nullptr; ///< e in `m = fmaxf(m, e)`
    std::string MaxFunc, Exp;
  };
  std::optional<Online> Fused;
  /// The longest row, when the launches fix it (for suggestions).
  std::optional<int64_t> RowMax;
  std::string Description;

  int64_t stride() const { return PerBlock ? BlockSize : Lanes; }
};

/// Values per lane above which the register form is refused.
constexpr int64_t MaxValuesPerLane = 64;

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
  if (auto V = integerConstantValue(E, AST))
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

/// The text of \p S as written, also when it begins or ends in a macro
/// expansion (`j < COLS`).
std::string writtenText(const EditContext &Ctx, const clang::Stmt *S) {
  const clang::SourceManager &SM = Ctx.AST.getSourceManager();
  return clang::Lexer::getSourceText(
             clang::CharSourceRange::getTokenRange(S->getSourceRange()), SM,
             Ctx.AST.getLangOpts())
      .str();
}

/// The compile-time value of a non-type template parameter of \p Kernel in
/// each of its instantiations; the largest, or nothing.
std::optional<int64_t>
largestInstantiation(const clang::FunctionDecl *Kernel,
                     const clang::NonTypeTemplateParmDecl *NT,
                     std::string &WhyNot) {
  const clang::FunctionTemplateDecl *FT =
      Kernel->getDescribedFunctionTemplate();
  if (!FT || NT->getDepth() != 0) {
    WhyNot = "'" + NT->getName().str() +
             "' is not a template parameter of the kernel";
    return std::nullopt;
  }
  std::optional<int64_t> Max;
  for (const clang::FunctionDecl *Spec : FT->specializations()) {
    const clang::TemplateArgumentList *Args =
        Spec->getTemplateSpecializationArgs();
    if (!Args || NT->getIndex() >= Args->size() ||
        Args->get(NT->getIndex()).getKind() !=
            clang::TemplateArgument::Integral)
      continue;
    int64_t V = Args->get(NT->getIndex()).getAsIntegral().getExtValue();
    Max = std::max(Max.value_or(V), V);
  }
  if (!Max)
    WhyNot = "no instantiation of the kernel fixes '" + NT->getName().str() +
             "'";
  return Max;
}

/// How many elements the loop \p L runs at most, when its start is a
/// constant and its end is a constant, a template parameter, or a kernel
/// parameter that every launch passes as a constant.
RowLength rowLength(const EditContext &Ctx, const Plan &P,
                    const InnerLoop &L) {
  RowLength R;
  std::string At = "the loop at " + where(Ctx, L.For);
  std::optional<int64_t> Start = integerConstantValue(L.Start, Ctx.AST);
  if (!Start) {
    R.WhyNot = At + " starts at '" + writtenText(Ctx, L.Start) +
               "', not at a compile-time constant";
    return R;
  }
  const clang::Expr *End = L.Cond->getRHS();
  std::string EndText = writtenText(Ctx, End);
  std::optional<int64_t> Max = integerConstantValue(End, Ctx.AST);
  const clang::ValueDecl *D = Max ? nullptr : declOf(End);
  if (Max) {
    // A constant: a literal, a macro, a constexpr or static const.
  } else if (const auto *NT =
                 dyn_cast_or_null<clang::NonTypeTemplateParmDecl>(D)) {
    std::string Why;
    Max = largestInstantiation(P.Kernel.Decl, NT, Why);
    if (!Max) {
      R.WhyNot = At + " runs to '" + EndText + "': " + Why;
      return R;
    }
  } else if (const auto *Parm = dyn_cast_or_null<clang::ParmVarDecl>(D)) {
    unsigned I = Parm->getFunctionScopeIndex();
    if (P.Kernel.Info->Launches.empty()) {
      R.WhyNot = At + " runs to the parameter '" + EndText +
                 "' and no launch of the kernel fixes it";
      return R;
    }
    for (const LaunchSite &LS : P.Kernel.Info->Launches) {
      const clang::CUDAKernelCallExpr *C = findLaunchCall(Ctx, LS);
      std::optional<int64_t> V;
      if (C && I < C->getNumArgs())
        V = integerConstantValue(C->getArg(I), Ctx.AST);
      if (!V) {
        R.WhyNot = At + " runs to the parameter '" + EndText + "', and " +
                   LS.Id + " passes '" +
                   (I < LS.Args.size() ? LS.Args[I] : std::string("?")) +
                   "', which is not a compile-time constant";
        return R;
      }
      Max = std::max(Max.value_or(*V), *V);
    }
  } else {
    R.WhyNot = At + " runs to '" + EndText +
               "', which is neither a constant, a template parameter nor a "
               "kernel parameter that the launches pass as a constant";
    return R;
  }
  int64_t Len =
      *Max - *Start + (L.Cond->getOpcode() == clang::BO_LE ? 1 : 0);
  if (Len <= 0) {
    R.WhyNot = At + " runs no iteration";
    return R;
  }
  R.Max = Len;
  return R;
}

/// Reads `a[j]` in \p S, with `a` a variable and `j` the loop variable.
std::vector<const clang::ArraySubscriptExpr *>
rowReads(const clang::Stmt *S, const clang::VarDecl *J) {
  std::vector<const clang::ArraySubscriptExpr *> Out;
  std::function<void(const clang::Stmt *)> Walk = [&](const clang::Stmt *N) {
    if (!N)
      return;
    if (const auto *A = dyn_cast<clang::ArraySubscriptExpr>(N))
      if (declOf(A->getIdx()) == J && declOf(A->getBase()) &&
          isa<clang::VarDecl>(declOf(A->getBase())))
        Out.push_back(A);
    for (const clang::Stmt *C : N->children())
      Walk(C);
  };
  Walk(S);
  return Out;
}

int64_t nextPowerOfTwo(int64_t V) {
  int64_t P = 1;
  while (P < V)
    P *= 2;
  return P;
}

class WarpPerRow : public PlannedTransform<Plan> {
public:
  StringRef kind() const override { return "warp-per-row"; }
  StringRef description() const override {
    return "one warp (or block) per outer item: lanes stride the inner "
           "loops, shuffles combine sums, maxima and minima";
  }
  TargetKind targetKind() const override { return TargetKind::Kernel; }
  std::vector<ParamSpec> params() const override {
    return {
        ParamSpec::string("per",
                          "who owns an item: a warp (short rows) or a whole "
                          "block (long rows)",
                          {"warp", "block"}, "warp"),
        ParamSpec::integer(
            "block_size",
            "threads per block at every launch (a multiple of 32)", 32, 1024,
            256),
        ParamSpec::integer("lanes",
                           "lanes per item in the warp form (4, 8, 16 or 32): "
                           "32 / lanes items share a warp (short rows)",
                           4, 32, 32),
        ParamSpec::boolean(
            "registers",
            "load the row once into registers and run every later pass from "
            "them (rows whose length is fixed at compile time, at most 64 "
            "values per lane)",
            false),
        ParamSpec::boolean(
            "online",
            "fuse a max pass and the next pass summing exp(e - max) into one "
            "pass with a running max and a rescaled sum (online softmax)",
            false)};
  }
  bool changesPrecision(const Edit &) const override {
    // Sums and products are reassociated across lanes.
    return true;
  }

  Applicability prepare(const EditContext &Ctx,
                        StringRef Target) const override {
    Applicability A;
    Edit E;
    auto P = planDefault(Ctx, Target, A, E);
    if (!P)
      return A;
    A.Reason = P->Description;
    A.Suggestions = suggest(Ctx, E, *P);
    return A;
  }

private:
  Expected<Plan> analyze(const EditContext &Ctx,
                         const Edit &E) const override;
  Error planRegisters(const EditContext &Ctx, const Edit &E, Plan &P) const;
  Error planOnline(const EditContext &Ctx, const Edit &E, Plan &P) const;
  std::vector<Edit> suggest(const EditContext &Ctx, const Edit &E,
                            const Plan &P) const;
  Error analyzeLoop(const EditContext &Ctx, const Edit &E, Plan &P,
                    const clang::ForStmt *For,
                    ArrayRef<const clang::Stmt *> Later) const;
  Expected<clang::tooling::Replacements>
  rewrite(const EditContext &Ctx, const Edit &E,
          const Plan &P) const override;
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
  P.Lanes = E.getInt("lanes").value_or(32);
  if (P.Lanes != 4 && P.Lanes != 8 && P.Lanes != 16 && P.Lanes != 32)
    return reject(E, "params", "params.lanes must be 4, 8, 16 or 32");
  if (P.PerBlock && P.Lanes != 32)
    return reject(E, "params",
                  "params.lanes applies to the warp form only; a block "
                  "shares one item among all its threads");
  bool Registers = E.getBool("registers").value_or(false);
  bool Online = E.getBool("online").value_or(false);
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
                  "the bound '" + looseExprText(Ctx, Item->Bound) +
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

  // The longest row, when every loop's length is fixed at compile time.
  for (const InnerLoop &L : P.Loops) {
    RowLength Len = rowLength(Ctx, P, L);
    if (!Len.Max) {
      P.RowMax.reset();
      break;
    }
    P.RowMax = std::max(P.RowMax.value_or(0), *Len.Max);
  }
  if (Online)
    if (Error Err = planOnline(Ctx, E, P))
      return std::move(Err);
  if (Registers)
    if (Error Err = planRegisters(Ctx, E, P))
      return std::move(Err);

  std::string D;
  raw_string_ostream OS(D);
  OS << "one thread per item '" << IName << "' (bound '"
     << looseExprText(Ctx, Item->Bound) << "') with " << P.Loops.size()
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
  if (P.RowMax)
    OS << "; rows of at most " << *P.RowMax << " elements";
  if (P.PerBlock || P.Lanes == 32)
    OS << "; rewrite: one " << (P.PerBlock ? "block" : "warp")
       << " per item, lanes stride the loops";
  else
    OS << "; rewrite: one group of " << P.Lanes << " lanes per item ("
       << 32 / P.Lanes << " items per warp), lanes stride the loops";
  if (P.Fused)
    OS << ", '" << P.Fused->Max->getName() << "' and '"
       << P.Fused->Sum->getName() << "' in one pass (online softmax)";
  if (!P.Cached.empty()) {
    std::vector<std::string> Names;
    for (const CachedArray &C : P.Cached)
      Names.push_back("'" + C.Array->getName().str() + "'");
    OS << ", " << join(Names, ", ") << " kept in registers (" << P.PerLane
       << " per lane)";
  }
  P.Description = D;
  return P;
}

Error WarpPerRow::analyzeLoop(const EditContext &Ctx, const Edit &E, Plan &P,
                              const clang::ForStmt *For,
                              ArrayRef<const clang::Stmt *> Later) const {
  InnerLoop L;
  L.For = For;
  for (const LoopInfo &LI : P.Kernel.Info->Loops)
    if (auto Sp = looseExprSpan(Ctx, For))
      if (LI.Range.Begin.Offset == Sp->Begin.Offset)
        L.Id = LI.Id;
  std::string At = "the loop at " + where(Ctx, For);
  // Induction variable and start.
  if (const auto *DS = dyn_cast_or_null<clang::DeclStmt>(For->getInit())) {
    if (DS->isSingleDecl())
      if (const auto *V = dyn_cast<clang::VarDecl>(DS->getSingleDecl())) {
        L.Var = V;
        L.Start = V->getInit();
        L.InitDeclares = true;
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
  L.Cond = C;
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
                    At + " writes '" + looseExprText(Ctx, W.Target) +
                        "', which does not depend on '" + J +
                        "'; every lane would write it");
    if (declaredIn(Base, For, Ctx))
      continue;
    L.Writes = true;
    // Reads of the same array at another element are a dependence
    // between iterations that other lanes now run.
    std::string WIdx = looseExprText(Ctx, W.Index);
    std::function<Error(const clang::Stmt *)> Check =
        [&](const clang::Stmt *N) -> Error {
      if (!N)
        return Error::success();
      if (const auto *AS = dyn_cast<clang::ArraySubscriptExpr>(N))
        if (declOf(AS->getBase()) == Base &&
            looseExprText(Ctx, AS->getIdx()) != WIdx)
          return reject(E, "not-applicable",
                        At + " reads '" + looseExprText(Ctx, AS) +
                            "' and writes '" + looseExprText(Ctx, W.Target) +
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


Error WarpPerRow::planRegisters(const EditContext &Ctx, const Edit &E,
                                Plan &P) const {
  auto Refuse = [&](const Twine &Why) {
    return reject(E, "not-applicable", "params.registers: " + Why);
  };
  // The passes over one range (same start, same end) that read each array
  // at the loop's element.
  auto Header = [&](const InnerLoop &L) {
    return writtenText(Ctx, L.Start) + ";" +
           writtenText(Ctx, L.Cond->getRHS()) +
           (L.Cond->getOpcode() == clang::BO_LE ? "<=" : "<");
  };
  std::vector<const clang::ValueDecl *> Arrays;
  std::map<const clang::ValueDecl *, std::vector<size_t>> Passes;
  for (size_t I = 0; I < P.Loops.size(); ++I)
    for (const clang::ArraySubscriptExpr *A :
         rowReads(P.Loops[I].For->getBody(), P.Loops[I].Var)) {
      if (P.Fused && I == P.Fused->SumLoop)
        continue; // folded into the max pass
      const clang::ValueDecl *D = declOf(A->getBase());
      std::vector<size_t> &Ls = Passes[D];
      if (Ls.empty())
        Arrays.push_back(D);
      if (Ls.empty() || (Ls.back() != I &&
                         Header(P.Loops[Ls.front()]) == Header(P.Loops[I])))
        if (!llvm::is_contained(Ls, I))
          Ls.push_back(I);
    }
  std::string Key;
  for (const clang::ValueDecl *D : Arrays) {
    const std::vector<size_t> &Ls = Passes[D];
    if (Ls.size() < 2)
      continue;
    if (Key.empty())
      Key = Header(P.Loops[Ls.front()]);
    if (Header(P.Loops[Ls.front()]) != Key)
      continue;
    CachedArray C;
    C.Array = D;
    clang::QualType T = D->getType();
    clang::QualType Elem;
    if (T->isPointerType())
      Elem = T->getPointeeType();
    else if (T->isArrayType())
      Elem = clang::QualType(T->getArrayElementTypeNoTypeQual(), 0);
    if (Elem.isNull())
      continue;
    C.ElemType = Elem.getUnqualifiedType().getAsString(
        Ctx.AST.getPrintingPolicy());
    C.Name = freshName(Ctx.Code, D->getName().str() + "_reg");
    P.Cached.push_back(C);
    for (size_t I : Ls)
      if (!llvm::is_contained(P.CachedLoops, I))
        P.CachedLoops.push_back(I);
  }
  if (P.Cached.empty())
    return Refuse("no array is read at the loop's element ('x[j]') by two "
                  "or more passes over the same range; there is nothing to "
                  "keep");
  llvm::sort(P.CachedLoops);
  const InnerLoop &First = P.Loops[P.CachedLoops.front()];
  const InnerLoop &Last = P.Loops[P.CachedLoops.back()];
  // The registers must hold what the memory would: the arrays are not
  // written, and nothing else writes memory before the last pass reads
  // them.
  for (const CachedArray &C : P.Cached) {
    std::string N = C.Array->getName().str();
    for (const clang::Stmt *S : P.Item.Body) {
      for (const MemWrite &W : memoryWrites(S))
        if (declOf(W.Base) == C.Array)
          return Refuse("'" + N + "' is written at " + where(Ctx, W.Target) +
                        "; registers would hold stale values");
      if (llvm::is_contained(writtenDecls(S), C.Array))
        return Refuse("'" + N + "' is reassigned at " + where(Ctx, S));
    }
  }
  bool Between = false;
  for (const clang::Stmt *S : P.Item.Body) {
    if (S == First.For)
      Between = true;
    if (S == Last.For)
      break;
    if (Between && !memoryWrites(S).empty())
      return Refuse("the statement at " + where(Ctx, S) +
                    " writes memory before the last pass that reads '" +
                    P.Cached.front().Array->getName() +
                    "'; registers would hold stale values if they alias");
  }
  RowLength Len = rowLength(Ctx, P, First);
  if (!Len.Max)
    return Refuse("the row length must be fixed at compile time: " +
                  Len.WhyNot);
  int64_t Stride = P.stride();
  P.PerLane = (*Len.Max + Stride - 1) / Stride;
  int64_t Total = P.PerLane * int64_t(P.Cached.size());
  if (Total > MaxValuesPerLane)
    return Refuse("rows of up to " + Twine(*Len.Max) + " elements need " +
                  Twine(Total) + " values per lane with " + Twine(Stride) +
                  " lanes per row (at most " + Twine(MaxValuesPerLane) +
                  "); use per \"block\" or a larger block_size");
  return Error::success();
}


Error WarpPerRow::planOnline(const EditContext &Ctx, const Edit &E,
                             Plan &P) const {
  auto Single = [](const clang::ForStmt *F) -> const clang::Expr * {
    std::vector<const clang::Stmt *> B = bodyStmts(F->getBody());
    return B.size() == 1 ? dyn_cast<clang::Expr>(B.front()) : nullptr;
  };
  auto Header = [&](const InnerLoop &L) {
    return L.Var->getName().str() + ";" + writtenText(Ctx, L.Start) + ";" +
           writtenText(Ctx, L.Cond);
  };
  for (size_t A = 0; A < P.Loops.size(); ++A) {
    const InnerLoop &LA = P.Loops[A];
    if (LA.Reductions.size() != 1 || LA.Writes ||
        LA.Reductions[0].Op != Reduction::Max)
      continue;
    // `m = fmaxf(m, e)`: the element e.
    const auto *Asg =
        dyn_cast_or_null<clang::BinaryOperator>(Single(LA.For));
    const auto *Call =
        Asg ? dyn_cast<clang::CallExpr>(stripCasts(Asg->getRHS())) : nullptr;
    if (!Call || Call->getNumArgs() != 2)
      continue;
    const clang::VarDecl *M = LA.Reductions[0].Acc;
    const clang::Expr *Elem =
        declOf(Call->getArg(0)) == M ? Call->getArg(1) : Call->getArg(0);
    // The next pass over the same range: `s += expf(e - m)`.
    size_t B = A + 1;
    if (B >= P.Loops.size())
      continue;
    const InnerLoop &LB = P.Loops[B];
    if (LB.Reductions.size() != 1 || LB.Writes ||
        LB.Reductions[0].Op != Reduction::Sum || Header(LA) != Header(LB))
      continue;
    const clang::VarDecl *S = LB.Reductions[0].Acc;
    const clang::Expr *Term = nullptr;
    const clang::Expr *SB = Single(LB.For);
    if (!SB)
      continue;
    SB = SB->IgnoreParenImpCasts();
    if (const auto *CA = dyn_cast<clang::CompoundAssignOperator>(SB)) {
      if (CA->getOpcode() == clang::BO_AddAssign)
        Term = CA->getRHS();
    } else if (const auto *BA = dyn_cast<clang::BinaryOperator>(SB)) {
      if (const auto *Sum =
              dyn_cast<clang::BinaryOperator>(stripCasts(BA->getRHS())))
        if (Sum->getOpcode() == clang::BO_Add)
          Term = declOf(Sum->getLHS()) == S ? Sum->getRHS() : Sum->getLHS();
    }
    const auto *ExpCall =
        Term ? dyn_cast<clang::CallExpr>(stripCasts(Term)) : nullptr;
    const clang::FunctionDecl *FD =
        ExpCall ? ExpCall->getDirectCallee() : nullptr;
    if (!FD || !FD->getIdentifier() || ExpCall->getNumArgs() != 1 ||
        !(FD->getName() == "expf" || FD->getName() == "exp" ||
          FD->getName() == "__expf"))
      continue;
    const auto *Diff =
        dyn_cast<clang::BinaryOperator>(stripCasts(ExpCall->getArg(0)));
    if (!Diff || Diff->getOpcode() != clang::BO_Sub ||
        declOf(Diff->getRHS()) != M ||
        writtenText(Ctx, Diff->getLHS()) != writtenText(Ctx, Elem))
      continue;
    // Between the passes: nothing may change m or memory (the fused pass
    // reads the elements earlier).
    bool Between = false;
    const clang::Stmt *Bad = nullptr;
    for (const clang::Stmt *St : P.Item.Body) {
      if (St == LB.For)
        break;
      if (Between && (llvm::is_contained(writtenDecls(St), M) ||
                      !memoryWrites(St).empty()))
        Bad = Bad ? Bad : St;
      if (St == LA.For)
        Between = true;
    }
    if (Bad)
      return reject(E, "not-applicable",
                    "params.online: the statement at " + where(Ctx, Bad) +
                        " between the max pass and the sum pass writes '" +
                        M->getName() + "' or memory");
    Plan::Online O;
    O.MaxLoop = A;
    O.SumLoop = B;
    O.Max = M;
    O.Sum = S;
    O.Elem = Elem;
    O.MaxFunc = LA.Reductions[0].Func;
    O.Exp = (FD->isInStdNamespace() ? "std::" : "") + FD->getName().str();
    P.Fused = O;
    return Error::success();
  }
  return reject(E, "not-applicable",
                "params.online: no pass computing a max ('m = fmaxf(m, e)') "
                "is followed by a pass over the same range that only sums "
                "'expf(e - m)'");
}

/// Whether \p E reads its value from memory (`row_ptr[r]`, `*p`), directly
/// or through the initializer of a local: a loop bound taken from data, as
/// in CSR, where rows are usually short.
static bool boundFromMemory(const clang::Expr *E, unsigned Depth = 0) {
  if (!E || Depth > 3)
    return false;
  E = E->IgnoreParenImpCasts();
  if (isa<clang::ArraySubscriptExpr>(E))
    return true;
  if (const auto *U = dyn_cast<clang::UnaryOperator>(E))
    return U->getOpcode() == clang::UO_Deref;
  if (const auto *D = dyn_cast<clang::DeclRefExpr>(E))
    if (const auto *V = dyn_cast<clang::VarDecl>(D->getDecl()))
      if (V->hasLocalStorage() && !isa<clang::ParmVarDecl>(V))
        return boundFromMemory(V->getInit(), Depth + 1);
  return false;
}

std::vector<Edit> WarpPerRow::suggest(const EditContext &Ctx, const Edit &E,
                                      const Plan &P) const {
  auto Make = [&](StringRef Per, int64_t Lanes, int64_t BS) {
    Edit S = E;
    S.Params["per"] = Per.str();
    if (Per == "warp")
      S.Params["lanes"] = Lanes;
    S.Params["block_size"] = BS;
    // Keep rows in registers where that applies; else fuse a softmax's max
    // and sum passes, which saves one read of the row.
    for (StringRef Extra : {"registers", "online"}) {
      Edit R = S;
      R.Params[Extra.str()] = true;
      if (auto Ok = analyze(Ctx, R))
        return R;
      else
        consumeError(Ok.takeError());
    }
    return S;
  };
  if (!P.RowMax) {
    // Row lengths are only known at run time. Rows whose bounds are read
    // from memory (CSR) are usually short: groups of 8 lanes first (the
    // suite's SpMV, 8-24 nonzeros per row, ran 1.33x faster than
    // thread-per-row with 8 lanes and 0.70x with a full warp on the H200).
    // Dense rows of a run-time length (softmax, norms, GEMV) are usually
    // long: a full warp first.
    bool Sparse = llvm::any_of(P.Loops, [](const InnerLoop &L) {
      return boundFromMemory(L.Start) ||
             (L.Cond && boundFromMemory(L.Cond->getRHS()));
    });
    if (Sparse)
      return {Make("warp", 8, 256), Make("warp", 32, 256),
              Make("block", 32, 256)};
    return {Make("warp", 32, 256), Make("warp", 8, 256),
            Make("block", 32, 256)};
  }
  int64_t L = *P.RowMax;
  int64_t Lanes = std::clamp<int64_t>(nextPowerOfTwo(L), 4, 32);
  // About 16 elements per thread in the block form.
  int64_t BS = std::clamp<int64_t>(nextPowerOfTwo((L + 15) / 16), 128, 1024);
  Edit W = Make("warp", Lanes, 256), B = Make("block", 32, BS);
  if (L > 32 * 16)
    return {B, W};
  return {W, B};
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
  std::string Mask =
      Groups ? freshName(Ctx.Code, "group_mask") : "0xffffffffu";
  std::string K = freshName(Ctx.Code, "k");
  int64_t Warps = P.BlockSize / 32;
  // Items per block in the warp form.
  int64_t PerBlockItems = P.BlockSize / P.Lanes;
  std::string Stride = std::to_string(P.stride());
  std::string LanesText = std::to_string(P.Lanes);
  std::string SyncWarp = Groups ? "__syncwarp(" + Mask + ");" : "__syncwarp();";

  // The online softmax combine's names.
  std::string MName, Run, OnlineType, RunType, ElemVar, MNew, MOther,
      RunOther;
  if (P.Fused) {
    const clang::PrintingPolicy &PP = Ctx.AST.getPrintingPolicy();
    MName = P.Fused->Max->getName().str();
    Run = freshName(Ctx.Code, P.Fused->Sum->getName().str() + "_run");
    OnlineType =
        P.Fused->Max->getType().getUnqualifiedType().getAsString(PP);
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
  if (Error Err = Add(InitSp->Begin.Offset, InitSp->End.Offset - InitSp->Begin.Offset, IndexInit))
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
      Start = (addsWithoutParens(L.Start)
                   ? writtenText(Ctx, L.Start)
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
    clang::SourceLocation RParen = L.For->getRParenLoc();
    if (RParen.isMacroID())
      return reject(E, "macro", "the loop header at " + where(Ctx, L.For) +
                                    " is written inside a macro");
    unsigned HeaderEnd =
        Ctx.AST.getSourceManager().getFileOffset(RParen) + 1;
    if (OnlineMax) {
      // The body becomes the running max and the rescaled sum.
      std::vector<TextEdit> ElemEdits;
      if (FromRegisters)
        for (const clang::ArraySubscriptExpr *A :
             rowReads(P.Fused->Elem, L.Var))
          for (const CachedArray &C : P.Cached)
            if (C.Array == declOf(A->getBase()))
              if (auto ASp = looseExprSpan(Ctx, A))
                ElemEdits.push_back({ASp->Begin.Offset, ASp->End.Offset - ASp->Begin.Offset,
                                     C.Name + "[" + K + "]"});
      auto ESp = looseExprSpan(Ctx, P.Fused->Elem);
      if (!ESp)
        return reject(E, "macro", "the element at " +
                                      where(Ctx, P.Fused->Elem) +
                                      " is written inside a macro");
      std::string Elem =
          spliceText(Ctx.Code, ESp->Begin.Offset, ESp->End.Offset, std::move(ElemEdits));
      OnlineBody =
          " {\n" + In + "  " + OnlineType + " " + ElemVar + " = " + Elem +
          ";\n" + In + "  " + OnlineType + " " + MNew + " = " +
          P.Fused->MaxFunc + "(" + MName + ", " + ElemVar + ");\n" + In +
          "  " + Run + " = " + Run + " * " + Rescale(MName) + " + " +
          P.Fused->Exp + "(" + ElemVar + " - " + MNew + ");\n" + In + "  " +
          MName + " = " + MNew + ";\n" + In + "}";
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
          Steps.push_back(C.Name + "[" + K + "] = " +
                          C.Array->getName().str() + "[" +
                          L.Var->getName().str() + "];");
        }
        Load += "#pragma unroll\n" + In + RegisterHeader(L) + " ";
        Load += Steps.size() == 1 ? Steps[0]
                                  : "{ " + join(Steps, " ") + " }";
        Load += "\n" + In;
      }
      if (Error Err = Add(FS->Begin.Offset, HeaderEnd - FS->Begin.Offset,
                          Load + Before + "#pragma unroll\n" + In +
                              RegisterHeader(L)))
        return std::move(Err);
      for (const clang::ArraySubscriptExpr *A :
           rowReads(L.For->getBody(), L.Var)) {
        if (OnlineMax)
          break; // the body was rewritten as a whole
        auto It = llvm::find_if(P.Cached, [&](const CachedArray &C) {
          return C.Array == declOf(A->getBase());
        });
        if (It == P.Cached.end())
          continue;
        auto ASp = looseExprSpan(Ctx, A);
        if (!ASp)
          return reject(E, "macro", "the read at " + where(Ctx, A) +
                                        " is written inside a macro");
        if (Error Err = Add(ASp->Begin.Offset, ASp->End.Offset - ASp->Begin.Offset,
                            It->Name + "[" + K + "]"))
          return std::move(Err);
      }
    } else {
      // Start at the lane, step by the lanes.
      auto St = looseExprSpan(Ctx, L.Start);
      auto IncSp = looseExprSpan(Ctx, L.For->getInc());
      if (!St || !IncSp)
        return reject(E, "macro", "the loop header at " + where(Ctx, L.For) +
                                      " is written inside a macro");
      std::string Start;
      if (isZero(L.Start, Ctx.AST, 0))
        Start = Lane;
      else if (addsWithoutParens(L.Start))
        Start = looseExprText(Ctx, L.Start) + " + " + Lane;
      else
        Start = "(" + looseExprText(Ctx, L.Start) + ") + " + Lane;
      if (Error Err = Add(St->Begin.Offset, St->End.Offset - St->Begin.Offset, Start))
        return std::move(Err);
      if (Error Err = Add(IncSp->Begin.Offset, IncSp->End.Offset - IncSp->Begin.Offset,
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
      After += "\n" + In + "  " + RunType + " " + RunOther + " = " +
               Shfl(Run) + ";";
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
        After += "\n" + In + "    " + MPart + "[" + Lane + " / 32] = " +
                 MName + ";";
        After += "\n" + In + "    " + SPart + "[" + Lane + " / 32] = " + Run +
                 ";";
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
      std::string Head = "for (int " + Off + " = " +
                         std::to_string(P.PerBlock ? 16 : P.Lanes / 2) + "; " +
                         Off + " > 0; " + Off + " /= 2)";
      std::vector<std::string> Steps;
      for (const Reduction &R : L.Reductions) {
        std::string A = R.Acc->getName().str();
        std::string Shfl = "__shfl_xor_sync(" + Mask + ", " + A + ", " + Off +
                           (Groups ? ", " + LanesText : "") + ")";
        Steps.push_back(combine(R, A, Shfl) + ";");
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
    std::string Grid =
        P.PerBlock ? *N
                   : "(" + parenthesize(*N) + " + " +
                         std::to_string(PerBlockItems - 1) + ") / " +
                         std::to_string(PerBlockItems);
    if (PerBlockItems == 1 && !P.PerBlock)
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
