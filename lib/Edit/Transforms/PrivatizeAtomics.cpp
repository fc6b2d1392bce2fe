//===- PrivatizeAtomics.cpp - Shared-memory copies of atomic targets ------===//
//
// Pattern: atomicAdd into a small global array indexed by data (histogram
// bins, counters, bucket sizes), the array touched by nothing else in the
// kernel, its size known at compile time (from the index's range, or given
// as params.bins; indices outside a given size fall back to the global
// atomic).
//
// Rewrite: a per-block (or per-warp) copy in shared memory, zeroed at the
// start, updated by the kernel's atomics, and merged with one global atomic
// per non-zero bin per block at the end. A one-element-per-thread kernel
// becomes a grid-stride loop and its launches are capped, so each block
// amortizes the merge over many elements.
//
//===----------------------------------------------------------------------===//

#include "../CatalogInternal.h"
#include "RestructureSupport.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ParentMapContext.h"
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

/// Shared memory a block may use without opting in (bytes).
constexpr int64_t SharedLimit = 48 * 1024;

struct AtomicUse {
  const clang::CallExpr *Call = nullptr;
  const clang::DeclRefExpr *BaseRef = nullptr;
  const clang::Expr *Index = nullptr; ///< null: element 0
  std::optional<int64_t> Range;       ///< proven exclusive upper bound
};

struct Plan {
  ResolvedKernel Kernel;
  const clang::ParmVarDecl *Array = nullptr;
  std::string ElemType;
  std::vector<AtomicUse> Uses;
  int64_t Bins = 0;
  bool Guarded = false; ///< some index is not proven below Bins
  bool PerWarp = false;
  int64_t BlockSize = 256;
  int64_t MaxBlocks = 1056;
  std::optional<ThreadItem> Map; ///< converted to a grid-stride loop
  bool CapGrid = false;
  std::string Description;
};

/// An exclusive upper bound of a non-negative integer expression.
std::optional<int64_t> indexRange(const clang::Expr *E,
                                  const clang::ASTContext &AST,
                                  const clang::FunctionDecl *K,
                                  unsigned Depth = 0) {
  if (!E || Depth > 8)
    return std::nullopt;
  if (auto V = intValue(E, AST))
    return *V >= 0 ? std::optional<int64_t>(*V + 1) : std::nullopt;
  const clang::Expr *I = E->IgnoreParenImpCasts();
  auto Small = [](clang::QualType T) -> std::optional<int64_t> {
    T = T.getCanonicalType();
    if (T->isSpecificBuiltinType(clang::BuiltinType::UChar) ||
        T->isSpecificBuiltinType(clang::BuiltinType::Char8))
      return 256;
    if (T->isBooleanType())
      return 2;
    return std::nullopt;
  };
  if (auto R = Small(I->getType()))
    return R;
  if (const auto *C = dyn_cast<clang::ExplicitCastExpr>(I)) {
    if (auto R = Small(C->getType()))
      return R;
    if (C->getType()->isIntegerType())
      return indexRange(C->getSubExpr(), AST, K, Depth + 1);
  }
  auto NonNeg = [&](const clang::Expr *X) {
    return X->IgnoreParenImpCasts()->getType()->isUnsignedIntegerType() ||
           indexRange(X, AST, K, Depth + 1).has_value();
  };
  if (const auto *B = dyn_cast<clang::BinaryOperator>(I)) {
    auto L = intValue(B->getLHS(), AST), R = intValue(B->getRHS(), AST);
    switch (B->getOpcode()) {
    case clang::BO_Rem:
      if (R && *R > 0 && NonNeg(B->getLHS()))
        return *R;
      break;
    case clang::BO_And:
      if (R && *R >= 0)
        return *R + 1;
      if (L && *L >= 0)
        return *L + 1;
      break;
    case clang::BO_Shr:
      if (R && *R >= 0 && *R < 63) {
        if (auto LR = indexRange(B->getLHS(), AST, K, Depth + 1))
          return ((*LR - 1) >> *R) + 1;
        clang::QualType LT = B->getLHS()->IgnoreParenImpCasts()->getType();
        if (LT->isUnsignedIntegerType()) {
          uint64_t W = AST.getTypeSize(LT);
          if (W > uint64_t(*R) && W - *R < 40)
            return int64_t(1) << (W - *R);
        }
      }
      break;
    case clang::BO_Div:
      if (R && *R > 0)
        if (auto LR = indexRange(B->getLHS(), AST, K, Depth + 1))
          return (*LR - 1) / *R + 1;
      break;
    default:
      break;
    }
    return std::nullopt;
  }
  if (const auto *C = dyn_cast<clang::ConditionalOperator>(I)) {
    auto A = indexRange(C->getTrueExpr(), AST, K, Depth + 1);
    auto B = indexRange(C->getFalseExpr(), AST, K, Depth + 1);
    if (A && B)
      return std::max(*A, *B);
    return std::nullopt;
  }
  if (const auto *V = dyn_cast_or_null<clang::VarDecl>(declOf(I)))
    if (V->isLocalVarDecl() && V->getInit() &&
        !llvm::is_contained(writtenDecls(K->getBody()), V))
      return indexRange(V->getInit(), AST, K, Depth + 1);
  return std::nullopt;
}

class PrivatizeAtomics : public Transform {
public:
  StringRef kind() const override { return "privatize-atomics"; }
  StringRef description() const override {
    return "per-block or per-warp shared-memory copies of a small array "
           "updated by atomics, merged once per block; grid-stride loop";
  }
  TargetKind targetKind() const override { return TargetKind::Kernel; }
  std::vector<ParamSpec> params() const override {
    ParamSpec A;
    A.ParamType = ParamSpec::String;
    A.Name = "array";
    A.Description = "the pointer parameter the atomics update (needed when "
                    "several are)";
    ParamSpec B;
    B.ParamType = ParamSpec::Int;
    B.Name = "bins";
    B.Description = "number of elements to privatize when the index range "
                    "cannot be proven; other indices use the global atomic";
    B.Min = 1;
    B.Max = 12288;
    ParamSpec C;
    C.ParamType = ParamSpec::String;
    C.Name = "copies";
    C.Description = "one private copy per block, or one per warp (less "
                    "contention, more shared memory)";
    C.Choices = {"block", "warp"};
    C.Default = std::string("block");
    ParamSpec BS;
    BS.ParamType = ParamSpec::Int;
    BS.Name = "block_size";
    BS.Description = "threads per block at every launch (copies=warp only)";
    BS.Min = 32;
    BS.Max = 1024;
    BS.Default = int64_t(256);
    ParamSpec M;
    M.ParamType = ParamSpec::Int;
    M.Name = "max_blocks";
    M.Description = "grid cap for the grid-stride loop";
    M.Min = 1;
    M.Max = 1 << 20;
    M.Default = int64_t(1056);
    return {A, B, C, BS, M};
  }
  bool changesPrecision(const Edit &) const override {
    // Floating-point atomics are summed in another order.
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
    W.Params["copies"] = std::string("warp");
    A.Suggestions = {W, E};
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
  Expected<clang::tooling::Replacements>
  rewrite(const EditContext &Ctx, const Edit &E, const Plan &P) const;
};

Expected<Plan> PrivatizeAtomics::analyze(const EditContext &Ctx,
                                         const Edit &E) const {
  Plan P;
  auto K = resolveKernel(Ctx, E, E.Target);
  if (!K)
    return K.takeError();
  P.Kernel = *K;
  const KernelInfo &KI = *K->Info;
  if (KI.InMacro)
    return reject(E, "macro", "kernel '" + E.Target +
                                  "' is defined inside a macro expansion");
  std::string Copies = E.getString("copies").value_or("block");
  if (Copies != "block" && Copies != "warp")
    return reject(E, "params", "params.copies must be 'block' or 'warp'");
  P.PerWarp = Copies == "warp";
  P.BlockSize = E.getInt("block_size").value_or(256);
  if (P.BlockSize < 32 || P.BlockSize > 1024 || P.BlockSize % 32)
    return reject(E, "params",
                  "params.block_size must be a multiple of 32 in [32, 1024]");
  P.MaxBlocks = E.getInt("max_blocks").value_or(1056);
  if (P.MaxBlocks < 1)
    return reject(E, "params", "params.max_blocks must be positive");

  // Every atomic whose target is an element of a pointer parameter.
  std::vector<AtomicUse> All;
  std::vector<std::pair<const clang::CallExpr *, std::string>> Other;
  std::function<void(const clang::Stmt *)> Walk = [&](const clang::Stmt *S) {
    if (!S)
      return;
    for (const clang::Stmt *C : S->children())
      Walk(C);
    const auto *Call = dyn_cast<clang::CallExpr>(S);
    const clang::FunctionDecl *FD = Call ? Call->getDirectCallee() : nullptr;
    if (!FD || !FD->getIdentifier() || !FD->getName().starts_with("atomic") ||
        Call->getNumArgs() < 2)
      return;
    const clang::Expr *A0 = Call->getArg(0)->IgnoreParenImpCasts();
    AtomicUse U;
    U.Call = Call;
    if (const auto *UO = dyn_cast<clang::UnaryOperator>(A0)) {
      if (UO->getOpcode() == clang::UO_AddrOf)
        if (const auto *AS = dyn_cast<clang::ArraySubscriptExpr>(
                UO->getSubExpr()->IgnoreParens())) {
          U.BaseRef = dyn_cast<clang::DeclRefExpr>(
              AS->getBase()->IgnoreParenImpCasts());
          U.Index = AS->getIdx();
        }
    } else if (const auto *BO = dyn_cast<clang::BinaryOperator>(A0)) {
      if (BO->getOpcode() == clang::BO_Add) {
        const clang::Expr *L = BO->getLHS()->IgnoreParenImpCasts();
        const clang::Expr *R = BO->getRHS()->IgnoreParenImpCasts();
        if (L->getType()->isPointerType()) {
          U.BaseRef = dyn_cast<clang::DeclRefExpr>(L);
          U.Index = BO->getRHS();
        } else if (R->getType()->isPointerType()) {
          U.BaseRef = dyn_cast<clang::DeclRefExpr>(R);
          U.Index = BO->getLHS();
        }
      }
    } else {
      U.BaseRef = dyn_cast<clang::DeclRefExpr>(A0);
    }
    if (U.BaseRef && isa<clang::ParmVarDecl>(U.BaseRef->getDecl()))
      All.push_back(U);
  };
  Walk(K->Decl->getBody());
  if (All.empty())
    return reject(E, "not-applicable",
                  "kernel '" + E.Target +
                      "' has no atomic on an element of a pointer parameter");
  std::vector<const clang::ParmVarDecl *> Arrays;
  for (const AtomicUse &U : All) {
    const auto *PV = cast<clang::ParmVarDecl>(U.BaseRef->getDecl());
    if (!llvm::is_contained(Arrays, PV))
      Arrays.push_back(PV);
  }
  if (auto Name = E.getString("array")) {
    for (const clang::ParmVarDecl *PV : Arrays)
      if (PV->getName() == *Name)
        P.Array = PV;
    if (!P.Array)
      return reject(E, "params",
                    "params.array '" + *Name +
                        "' is not a parameter updated by atomics");
  } else if (Arrays.size() > 1) {
    return reject(E, "params",
                  "several parameters are updated by atomics; name one in "
                  "params.array");
  } else {
    P.Array = Arrays.front();
  }
  std::string AName = P.Array->getName().str();
  for (const AtomicUse &U : All)
    if (U.BaseRef->getDecl() == P.Array)
      P.Uses.push_back(U);

  for (const AtomicUse &U : P.Uses) {
    StringRef Fn = U.Call->getDirectCallee()->getName();
    if (Fn != "atomicAdd")
      return reject(E, "not-applicable",
                    Fn + " on '" + AName + "' at " + where(Ctx, U.Call) +
                        " cannot be privatized (only atomicAdd is)");
    auto Parents = Ctx.AST.getParents(*U.Call);
    const clang::Stmt *Parent =
        Parents.empty() ? nullptr : Parents[0].get<clang::Stmt>();
    if (!Parent || isa<clang::Expr>(Parent))
      return reject(E, "not-applicable",
                    "the result of the atomic at " + where(Ctx, U.Call) +
                        " is used; a private copy cannot return the global "
                        "old value");
  }
  // Nothing else may touch the array.
  unsigned Refs = 0;
  std::function<void(const clang::Stmt *)> Count = [&](const clang::Stmt *S) {
    if (!S)
      return;
    if (const auto *R = dyn_cast<clang::DeclRefExpr>(S))
      if (R->getDecl() == P.Array && !llvm::any_of(P.Uses, [&](auto &U) {
            return U.BaseRef == R;
          })) {
        ++Refs;
        return;
      }
    for (const clang::Stmt *C : S->children())
      Count(C);
  };
  Count(K->Decl->getBody());
  if (Refs)
    return reject(E, "not-applicable",
                  "'" + AName +
                      "' is also read, written or passed on outside its "
                      "atomics; a private copy would hide those");

  clang::QualType ET = P.Array->getType()->getPointeeType();
  if (ET.isNull() || ET->isDependentType() ||
      !(ET->isIntegerType() || ET->isRealFloatingType()))
    return reject(E, "not-applicable",
                  "'" + AName + "' has no integer or floating-point element "
                                "type known in the template");
  P.ElemType =
      ET.getUnqualifiedType().getAsString(Ctx.AST.getPrintingPolicy());

  // The number of bins.
  int64_t Proven = 0;
  bool AllProven = true;
  std::string Unproven;
  for (AtomicUse &U : P.Uses) {
    U.Range = U.Index ? indexRange(U.Index, Ctx.AST, K->Decl)
                      : std::optional<int64_t>(1);
    if (U.Range) {
      Proven = std::max(Proven, *U.Range);
    } else {
      AllProven = false;
      if (Unproven.empty())
        Unproven = exprText(Ctx, U.Index);
    }
  }
  if (auto B = E.getInt("bins")) {
    P.Bins = *B;
    for (const AtomicUse &U : P.Uses)
      if (!U.Range || *U.Range > P.Bins) {
        P.Guarded = true;
        if (U.Index && U.Index->HasSideEffects(Ctx.AST))
          return reject(E, "not-applicable",
                        "the index '" + exprText(Ctx, U.Index) +
                            "' has side effects and its range is not "
                            "known; it cannot be checked against the bins");
      }
  } else if (!AllProven) {
    return reject(E, "not-applicable",
                  "the size of '" + AName +
                      "' is not known at compile time: the index '" +
                      Unproven +
                      "' is not bounded by its type, a constant mask or a "
                      "modulus; give params.bins to privatize that many "
                      "elements");
  } else {
    P.Bins = Proven;
  }
  uint64_t ElemBytes = Ctx.AST.getTypeSizeInChars(ET).getQuantity();
  int64_t Warps = P.BlockSize / 32;
  int64_t Bytes = P.Bins * ElemBytes * (P.PerWarp ? Warps : 1);
  if (Bytes > SharedLimit)
    return reject(E, "not-applicable",
                  "the private copies of '" + AName + "' need " +
                      Twine(Bytes) + " bytes of shared memory (" +
                      Twine(P.Bins) + " elements" +
                      (P.PerWarp ? " per warp" : "") + "), more than " +
                      Twine(SharedLimit));

  // The shape: one element per thread becomes a grid-stride loop.
  std::string Why;
  P.Map = matchThreadItem(K->Decl, Why);
  if (P.Map) {
    bool Ok = P.Map->Dim == 'x' && isBlockUniform(P.Map->Bound, K->Decl);
    for (const clang::Stmt *S : P.Map->Body)
      Ok &= !mentionsBuiltin(S) && !firstJump(S);
    for (const clang::Stmt *S : P.Map->Before)
      Ok &= isa<clang::DeclStmt>(S) && !mentionsBuiltin(S, "threadIdx");
    if (!Ok)
      P.Map.reset();
  }
  if (!P.Map) {
    if (const clang::Stmt *J = firstJump(K->Decl->getBody()))
      return reject(E, "not-applicable",
                    "the kernel leaves early at " + where(Ctx, J) +
                        "; every thread must reach the merge");
  }
  // Already a grid-stride loop: `i += blockDim.x * gridDim.x`.
  bool GridStride = false;
  if (!P.Map)
    for (const clang::Stmt *S : cast<clang::CompoundStmt>(K->Decl->getBody())
                                    ->body())
      if (const auto *F = dyn_cast<clang::ForStmt>(S))
        if (F->getInc() && mentionsBuiltin(F->getInc(), "gridDim"))
          GridStride = true;
  P.CapGrid = P.Map || GridStride;
  if (std::string W = launchProblem(KI); !W.empty())
    return reject(E, "launch", W);
  if (P.CapGrid)
    for (const LaunchSite &L : KI.Launches)
      if (!gridIsInteger(Ctx, L))
        return reject(E, "launch",
                      L.Id + " has a dim3 grid; the cap needs a plain "
                             "block count",
                      L.Range.Begin);

  raw_string_ostream OS(P.Description);
  OS << P.Uses.size() << " atomicAdd" << (P.Uses.size() > 1 ? "s" : "")
     << " into '" << AName << "' (" << P.Bins << " " << P.ElemType
     << " elements, " << (P.Guarded ? "given" : "bounded by the index")
     << "); rewrite: a private copy per " << (P.PerWarp ? "warp" : "block")
     << " in shared memory, merged once per block";
  if (P.Map)
    OS << ", grid-stride loop, grid capped at " << P.MaxBlocks;
  else if (GridStride)
    OS << ", grid capped at " << P.MaxBlocks;
  else
    OS << " (the kernel is not one element per thread: launches keep "
          "their grid)";
  return P;
}

Expected<clang::tooling::Replacements>
PrivatizeAtomics::rewrite(const EditContext &Ctx, const Edit &E,
                          const Plan &P) const {
  const auto *Body = cast<clang::CompoundStmt>(P.Kernel.Decl->getBody());
  auto BodySp = exprSpan(Ctx, Body);
  if (!BodySp)
    return reject(E, "macro", "the kernel body is written inside a macro");
  unsigned Begin = BodySp->Begin + 1, End = BodySp->End - 1;
  std::string AName = P.Array->getName().str();
  std::string Priv = freshName(Ctx.Code, AName + "_private");
  std::string B = freshName(Ctx.Code, "bin");
  std::string W = freshName(Ctx.Code, "w");
  int64_t Warps = P.BlockSize / 32;
  std::string Bins = std::to_string(P.Bins);
  std::string Mine = P.PerWarp ? Priv + "[threadIdx.x / 32]" : Priv;
  std::vector<TextEdit> Edits;

  // Atomics go to the private copy.
  for (const AtomicUse &U : P.Uses) {
    auto RefSp = exprSpan(Ctx, U.BaseRef);
    auto CallSp = exprSpan(Ctx, U.Call);
    if (!RefSp || !CallSp)
      return reject(E, "macro",
                    "the atomic at " + where(Ctx, U.Call) +
                        " is written inside a macro expansion");
    if (!P.Guarded || (U.Range && *U.Range <= P.Bins)) {
      Edits.push_back({RefSp->Begin, RefSp->End - RefSp->Begin, Mine});
      continue;
    }
    std::string Call =
        Ctx.Code.substr(CallSp->Begin, CallSp->End - CallSp->Begin).str();
    std::string PrivCall = Call;
    PrivCall.replace(RefSp->Begin - CallSp->Begin, RefSp->End - RefSp->Begin,
                     Mine);
    std::string Cond =
        "(size_t)" + paren(exprText(Ctx, U.Index)) + " < " + Bins;
    Edits.push_back({CallSp->Begin, CallSp->End - CallSp->Begin,
                     "(" + Cond + " ? " + PrivCall + " : " + Call + ")"});
  }

  // One element per thread becomes a grid-stride loop.
  std::string Indent = "  ";
  if (!Body->body_empty())
    if (auto Sp = stmtSpan(Ctx, Body->body_front()))
      Indent = lineIndent(Ctx.Code, Sp->Begin);
  if (P.Map) {
    const ThreadItem &M = *P.Map;
    auto DeclSp = stmtSpan(Ctx, M.IndexDecl);
    auto GuardSp = stmtSpan(Ctx, M.Guard);
    auto InitSp = exprSpan(Ctx, M.Index->getInit());
    if (!DeclSp || !GuardSp || !InitSp)
      return reject(E, "macro", "the index or its guard is in a macro");
    std::string Name = M.Index->getName().str();
    std::string Type =
        Ctx.Code.substr(DeclSp->Begin, InitSp->Begin - DeclSp->Begin).str();
    // "int i = " -> "int i"
    Type = StringRef(Type).rtrim(" =").str();
    std::string Head = "for (" + Type + " = " + exprText(Ctx, M.Index->getInit()) +
                       "; " + Name + " < " + exprText(Ctx, M.Bound) + "; " +
                       Name + " += blockDim.x * gridDim.x)";
    if (!M.EarlyReturn) {
      // `T i = ...; if (i < n)` -> `for (...)`; the guarded statement
      // stays as it is.
      auto CondSp = exprSpan(Ctx, M.Guard->getCond());
      unsigned RParen = CondSp->End;
      while (RParen < Ctx.Code.size() && Ctx.Code[RParen] != ')')
        ++RParen;
      Edits.push_back({DeclSp->Begin, RParen + 1 - DeclSp->Begin, Head});
    } else {
      // `T i = ...; if (i >= n) return; rest` -> `for (...) { rest }`.
      auto LastSp = stmtSpan(Ctx, M.Body.back());
      auto FirstSp = stmtSpan(Ctx, M.Body.front());
      if (!LastSp || !FirstSp)
        return reject(E, "macro", "the kernel body has macro statements");
      std::vector<TextEdit> Inner;
      for (const TextEdit &T : Edits)
        if (T.Offset >= FirstSp->Begin && T.Offset < LastSp->End)
          Inner.push_back(T);
      llvm::erase_if(Edits, [&](const TextEdit &T) {
        return T.Offset >= FirstSp->Begin && T.Offset < LastSp->End;
      });
      std::string Rest =
          splice(Ctx.Code, FirstSp->Begin, LastSp->End, Inner);
      Edits.push_back({DeclSp->Begin, LastSp->End - DeclSp->Begin,
                       Head + " {\n" + Indent + "  " +
                           indentLines(Rest, "  ") + "\n" + Indent + "}"});
    }
  }

  std::string Pro, Epi;
  const std::string &I = Indent;
  if (P.PerWarp) {
    Pro = "\n" + I + "__shared__ " + P.ElemType + " " + Priv + "[" +
          std::to_string(Warps) + "][" + Bins + "];\n" + I + "for (int " + B +
          " = threadIdx.x; " + B + " < " + std::to_string(Warps * P.Bins) +
          "; " + B + " += blockDim.x)\n" + I + "  " + Priv + "[" + B + " / " +
          Bins + "][" + B + " % " + Bins + "] = 0;\n" + I + "__syncthreads();";
    Epi = "\n" + I + "__syncthreads();\n" + I + "for (int " + B +
          " = threadIdx.x; " + B + " < " + Bins + "; " + B +
          " += blockDim.x) {\n" + I + "  " + P.ElemType + " sum = 0;\n" + I +
          "  for (int " + W + " = 0; " + W + " < " + std::to_string(Warps) +
          "; ++" + W + ")\n" + I + "    sum += " + Priv + "[" + W + "][" + B +
          "];\n" + I + "  if (sum != 0)\n" + I + "    atomicAdd(&" + AName +
          "[" + B + "], sum);\n" + I + "}";
  } else {
    Pro = "\n" + I + "__shared__ " + P.ElemType + " " + Priv + "[" + Bins +
          "];\n" + I + "for (int " + B + " = threadIdx.x; " + B + " < " +
          Bins + "; " + B + " += blockDim.x)\n" + I + "  " + Priv + "[" + B +
          "] = 0;\n" + I + "__syncthreads();";
    Epi = "\n" + I + "__syncthreads();\n" + I + "for (int " + B +
          " = threadIdx.x; " + B + " < " + Bins + "; " + B +
          " += blockDim.x)\n" + I + "  if (" + Priv + "[" + B + "] != 0)\n" +
          I + "    atomicAdd(&" + AName + "[" + B + "], " + Priv + "[" + B +
          "]);";
  }
  // Prologue after '{', epilogue after the last statement.
  unsigned EpiAt = End;
  if (!Body->body_empty())
    if (auto Sp = stmtSpan(Ctx, Body->body_back()))
      EpiAt = Sp->End;
  Edits.push_back({Begin, 0, Pro});
  Edits.push_back({EpiAt, 0, Epi});
  std::string NewBody = splice(Ctx.Code, Begin, End, Edits);

  clang::tooling::Replacements Repls;
  if (Error Err = addReplacement(
          Repls, clang::tooling::Replacement(Ctx.FileName, Begin, End - Begin,
                                             NewBody),
          E))
    return std::move(Err);
  for (const LaunchSite &L : P.Kernel.Info->Launches) {
    if (P.CapGrid) {
      std::string G = paren(L.Grid);
      std::string Cap = std::to_string(P.MaxBlocks);
      std::string Capped = G + " < " + Cap + " ? " + G + " : " + Cap;
      int64_t Literal;
      if (!StringRef(L.Grid).trim().getAsInteger(10, Literal))
        Capped = std::to_string(std::min(Literal, P.MaxBlocks));
      if (Error Err = addReplacement(
              Repls, replaceSpan(Ctx, L.GridRange, Capped), E))
        return std::move(Err);
    }
    if (P.PerWarp)
      if (Error Err = addReplacement(
              Repls,
              replaceSpan(Ctx, L.BlockRange, std::to_string(P.BlockSize)), E))
        return std::move(Err);
  }
  return Repls;
}

} // namespace

std::unique_ptr<Transform> createPrivatizeAtomicsTransform() {
  return std::make_unique<PrivatizeAtomics>();
}

} // namespace optiml
