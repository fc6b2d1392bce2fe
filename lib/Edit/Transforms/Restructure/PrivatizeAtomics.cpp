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
// amortizes the merge over many elements. With copies=lane the copy is
// laid out [bins][32], one column per lane, so a warp's 32 updates fall in
// 32 different banks.
//
// Wide loads (vector_bytes 4, 8 or 16): when the grid-stride loop reads its
// input only as p[i] (unit stride, elements of 1, 2 or 4 bytes), the loop
// reads one 4-, 8- or 16-byte word per thread per iteration and runs the
// body on each element of the word; a scalar loop takes the tail (n not a
// multiple of the word) and every element when a pointer is not aligned
// to the word at run time.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../../Patterns/ThreadPerItem.h"
#include "../TransformSupport.h"
#include "PlannedTransform.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLExtras.h"
#include <functional>
#include <map>

using namespace llvm;
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

enum class Copies { Block, Warp, Lane };

/// A load `p[i]` of the loop's input at the loop variable.
struct InputLoad {
  const clang::ArraySubscriptExpr *Access = nullptr;
  const clang::ParmVarDecl *Array = nullptr;
};

/// The grid-stride loop over the input, `for (T i = <linear index>; i < n;
/// i += blockDim.x * gridDim.x) body`, written so or made so from one item
/// per thread.
struct InputLoop {
  const clang::VarDecl *Index = nullptr;
  const clang::Expr *Bound = nullptr;
  const clang::ForStmt *For = nullptr; ///< null: from the ThreadItem
  std::vector<InputLoad> Loads;
  std::vector<const clang::ParmVarDecl *> Arrays; ///< the loaded pointers
  int64_t ElemBytes = 0;
};

struct Plan {
  ResolvedKernel Kernel;
  const clang::ParmVarDecl *Array = nullptr;
  std::string ElemType;
  std::vector<AtomicUse> Uses;
  int64_t Bins = 0;
  bool Guarded = false; ///< some index is not proven below Bins
  Copies Layout = Copies::Block;
  int64_t BlockSize = 256;
  int64_t MaxBlocks = DefaultGridCap;
  bool SetBlock = false;    ///< launches get BlockSize threads
  int64_t VectorBytes = 1; ///< bytes per load in the grid-stride loop
  std::optional<ThreadItem> Map; ///< converted to a grid-stride loop
  std::optional<InputLoop> Loop; ///< when VectorBytes > 1
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
  if (auto V = integerConstantValue(E, AST))
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
    auto L = integerConstantValue(B->getLHS(), AST), R = integerConstantValue(B->getRHS(), AST);
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

class PrivatizeAtomics : public PlannedTransform<Plan> {
public:
  StringRef kind() const override { return "privatize-atomics"; }
  StringRef description() const override {
    return "per-block, per-warp or per-lane shared-memory copies of a small "
           "array updated by atomics, merged once per block; grid-stride "
           "loop, optionally with 4- to 16-byte input loads";
  }
  TargetKind targetKind() const override { return TargetKind::Kernel; }
  std::vector<ParamSpec> params() const override {
    return {
        ParamSpec::string(
            "array", "the pointer parameter the atomics update (needed when "
                     "several are)"),
        ParamSpec::integer(
            "bins",
            "number of elements to privatize when the index range "
            "cannot be proven; other indices use the global atomic",
            1, 12288),
        ParamSpec::string("copies",
                          "one private copy per block, one per warp (less "
                          "contention, more shared memory), or one column per "
                          "lane ([bins][32]: no bank conflicts, 32 copies)",
                          {"block", "warp", "lane"}, "block"),
        ParamSpec::integer("block_size",
                           "threads per block at every launch; copies=warp "
                           "sizes its copies by it and sets 256 when it is not "
                           "given, the other layouts keep the launches' blocks",
                           32, 1024),
        ParamSpec::integer("max_blocks", "grid cap for the grid-stride loop", 1,
                           1 << 20, DefaultGridCap),
        ParamSpec::integer(
            "vector_bytes",
            "bytes each thread loads per iteration of the "
            "grid-stride loop: 1 (one element), 4, 8 or 16 (one "
            "word, the body run on each element; scalar tail and "
            "unaligned fallback)",
            1, 16, 1)};
  }
  bool changesPrecision(const Edit &) const override {
    // Floating-point atomics are summed in another order.
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
    Edit W = E;
    W.Params["copies"] = std::string("warp");
    A.Suggestions = {W, E};
    // Byte and short inputs: 16-byte words, and one column per lane when
    // 32 copies fit, else one copy per warp.
    auto ElemBytes = [&](const Edit &X) -> int64_t {
      auto VP = analyze(Ctx, X);
      if (!VP) {
        consumeError(VP.takeError());
        return 0;
      }
      return VP->Loop->ElemBytes;
    };
    for (const char *Layout : {"lane", "warp"}) {
      Edit V = E;
      V.Params["vector_bytes"] = int64_t(16);
      V.Params["copies"] = std::string(Layout);
      int64_t Bytes = ElemBytes(V);
      if (Bytes == 0)
        continue;
      if (Bytes <= 2)
        A.Suggestions.insert(A.Suggestions.begin(), V);
      break;
    }
    return A;
  }

private:
  Expected<Plan> analyze(const EditContext &Ctx,
                         const Edit &E) const override;
  Expected<InputLoop> inputLoop(const EditContext &Ctx, const Edit &E,
                                const Plan &P) const;
  Expected<clang::tooling::Replacements>
  rewrite(const EditContext &Ctx, const Edit &E,
          const Plan &P) const override;
};

static std::string blockShapeProblem(const EditContext &Ctx,
                                     const clang::FunctionDecl *K,
                                     const KernelInfo &KI);

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
  std::string Layout = E.getString("copies").value_or("block");
  if (Layout == "block")
    P.Layout = Copies::Block;
  else if (Layout == "warp")
    P.Layout = Copies::Warp;
  else if (Layout == "lane")
    P.Layout = Copies::Lane;
  else
    return reject(E, "params",
                  "params.copies must be 'block', 'warp' or 'lane'");
  P.VectorBytes = E.getInt("vector_bytes").value_or(1);
  if (P.VectorBytes != 1 && P.VectorBytes != 4 && P.VectorBytes != 8 &&
      P.VectorBytes != 16)
    return reject(E, "params", "params.vector_bytes must be 1, 4, 8 or 16");
  P.BlockSize = E.getInt("block_size").value_or(256);
  P.SetBlock = P.Layout == Copies::Warp || E.getInt("block_size");
  if (P.BlockSize < 32 || P.BlockSize > 1024 || P.BlockSize % 32)
    return reject(E, "params",
                  "params.block_size must be a multiple of 32 in [32, 1024]");
  P.MaxBlocks = E.getInt("max_blocks").value_or(DefaultGridCap);
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
        Unproven = looseExprText(Ctx, U.Index);
    }
  }
  if (auto B = E.getInt("bins")) {
    P.Bins = *B;
    for (const AtomicUse &U : P.Uses)
      if (!U.Range || *U.Range > P.Bins) {
        P.Guarded = true;
        if (U.Index && U.Index->HasSideEffects(Ctx.AST))
          return reject(E, "not-applicable",
                        "the index '" + looseExprText(Ctx, U.Index) +
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
  int64_t NCopies = P.Layout == Copies::Warp   ? Warps
                    : P.Layout == Copies::Lane ? 32
                                               : 1;
  int64_t Bytes = P.Bins * ElemBytes * NCopies;
  if (Bytes > SharedLimit)
    return reject(E, "not-applicable",
                  "the private copies of '" + AName + "' need " +
                      Twine(Bytes) + " bytes of shared memory (" +
                      Twine(P.Bins) + " elements" +
                      (P.Layout == Copies::Warp   ? " per warp"
                       : P.Layout == Copies::Lane ? " per lane"
                                                  : "") +
                      "), more than " + Twine(SharedLimit));

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
  if (P.VectorBytes > 1) {
    auto L = inputLoop(Ctx, E, P);
    if (!L)
      return L.takeError();
    P.Loop = std::move(*L);
  }
  if (std::string W = launchProblem(KI); !W.empty())
    return reject(E, "launch", W);
  if (std::string W = blockShapeProblem(Ctx, P.Kernel.Decl, KI); !W.empty())
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
     << "); rewrite: "
     << (P.Layout == Copies::Lane ? "a private column per lane"
                                  : std::string("a private copy per ") +
                                        (P.Layout == Copies::Warp ? "warp"
                                                                  : "block"))
     << " in shared memory, merged once per block";
  if (P.Loop)
    OS << ", " << P.VectorBytes << "-byte loads of '"
       << join(map_range(P.Loop->Arrays,
                         [](const clang::ParmVarDecl *A) {
                           return A->getName();
                         }),
               "', '")
       << "' (" << P.VectorBytes / P.Loop->ElemBytes
       << " elements each, scalar tail and unaligned fallback)";
  if (P.Map)
    OS << ", grid-stride loop, grid capped at " << P.MaxBlocks;
  else if (GridStride)
    OS << ", grid capped at " << P.MaxBlocks;
  else
    OS << " (the kernel is not one element per thread: launches keep "
          "their grid)";
  return P;
}

/// A binary operation: a built-in operator, or, in a template whose
/// operands are dependent, an operator call (once operator overloads such
/// as cuda_fp16.h's are visible).
struct BinaryOp {
  clang::BinaryOperatorKind Op;
  const clang::Expr *LHS, *RHS;
};
/// True when \p E reads threadIdx/blockDim in y or z.
static bool usesSecondDimension(const clang::Stmt *S) {
  if (!S)
    return false;
  if (const auto *E = dyn_cast<clang::Expr>(S))
    if (auto B = asBuiltinVar(E))
      if ((B->Var == "threadIdx" || B->Var == "blockDim") &&
          (B->Dim == 'y' || B->Dim == 'z'))
        return true;
  for (const clang::Stmt *C : S->children())
    if (usesSecondDimension(C))
      return true;
  return false;
}

/// \p E, a launch's block argument, is one number or a dim3 made of one
/// (the other two defaulted or written 1).
static bool oneDimensionalDim3(const clang::Expr *E) {
  E = E->IgnoreImplicit();
  if (const auto *T = dyn_cast<clang::CXXFunctionalCastExpr>(E))
    E = T->getSubExpr()->IgnoreImplicit();
  if (E->IgnoreParenImpCasts()->getType()->isIntegerType())
    return true;
  const auto *CE = dyn_cast<clang::CXXConstructExpr>(E);
  if (!CE)
    return false;
  if (CE->getNumArgs() == 1) // the copy of another dim3, or one number
    return oneDimensionalDim3(CE->getArg(0));
  for (unsigned I = 1; I < CE->getNumArgs(); ++I) {
    const clang::Expr *A = CE->getArg(I);
    if (A->isDefaultArgument())
      continue;
    if (!A->IgnoreImpCasts()->getType()->isIntegerType() ||
        !isa<clang::IntegerLiteral>(A->IgnoreParenImpCasts()) ||
        cast<clang::IntegerLiteral>(A->IgnoreParenImpCasts())->getValue() != 1)
      return false;
  }
  return CE->getNumArgs() >= 1 &&
         CE->getArg(0)->IgnoreParenImpCasts()->getType()->isIntegerType();
}

/// Whether \p V, a dim3 variable, is assigned, incremented or has its
/// address taken anywhere in \p Body (then its shape at the launch is not
/// its initializer's).
static bool changedIn(const clang::Stmt *Body, const clang::VarDecl *V) {
  if (!Body)
    return false;
  auto RefersTo = [&](const clang::Expr *E) {
    E = E->IgnoreParenImpCasts();
    if (const auto *M = dyn_cast<clang::MemberExpr>(E))
      E = M->getBase()->IgnoreParenImpCasts();
    const auto *D = dyn_cast<clang::DeclRefExpr>(E);
    return D && D->getDecl() == V;
  };
  if (const auto *B = dyn_cast<clang::BinaryOperator>(Body))
    if (B->isAssignmentOp() && RefersTo(B->getLHS()))
      return true;
  if (const auto *O = dyn_cast<clang::CXXOperatorCallExpr>(Body))
    if (O->isAssignmentOp() && O->getNumArgs() >= 1 && RefersTo(O->getArg(0)))
      return true;
  if (const auto *U = dyn_cast<clang::UnaryOperator>(Body))
    if ((U->isIncrementDecrementOp() || U->getOpcode() == clang::UO_AddrOf) &&
        RefersTo(U->getSubExpr()))
      return true;
  for (const clang::Stmt *C : Body->children())
    if (changedIn(C, V))
      return true;
  return false;
}

/// The rewrite merges the private copies with threadIdx.x alone, and
/// copies=warp writes the block size as one number: both are right only
/// for one-dimensional blocks. Returns why a launch's block is not
/// (provably) one-dimensional, or "".
static std::string blockShapeProblem(const EditContext &Ctx,
                                     const clang::FunctionDecl *K,
                                     const KernelInfo &KI) {
  if (usesSecondDimension(K->getBody()))
    return "the kernel reads threadIdx or blockDim in y or z (written for "
           "blocks of more than one dimension); the private copies are "
           "indexed and merged in x alone";
  for (const LaunchSite &L : KI.Launches) {
    const clang::CUDAKernelCallExpr *C = findLaunchCall(Ctx, L);
    if (!C || !C->getConfig() || C->getConfig()->getNumArgs() < 2)
      return L.Id + ": its block shape cannot be read";
    const clang::Expr *Block = C->getConfig()->getArg(1)->IgnoreImplicit();
    if (const auto *CE = dyn_cast<clang::CXXConstructExpr>(Block))
      if (CE->getNumArgs() == 1)
        Block = CE->getArg(0)->IgnoreImplicit();
    bool OneD = false;
    if (const auto *D =
            dyn_cast<clang::DeclRefExpr>(Block->IgnoreParenImpCasts())) {
      const auto *V = dyn_cast<clang::VarDecl>(D->getDecl());
      if (V && V->getType()->isIntegerType())
        OneD = true;
      else if (V && V->hasInit() && V->isLocalVarDecl() &&
               oneDimensionalDim3(V->getInit())) {
        const auto *Fn = dyn_cast<clang::FunctionDecl>(V->getDeclContext());
        OneD = Fn && !changedIn(Fn->getBody(), V);
      }
    } else {
      OneD = oneDimensionalDim3(Block);
    }
    if (!OneD)
      return L.Id + " launches blocks of '" + L.Block +
             "', not provably one-dimensional; the private copies are "
             "indexed and merged in x alone";
  }
  return "";
}

static std::optional<BinaryOp> binaryOp(const clang::Expr *E) {
  if (!E)
    return std::nullopt;
  E = E->IgnoreParenImpCasts();
  if (const auto *B = dyn_cast<clang::BinaryOperator>(E))
    return BinaryOp{B->getOpcode(), B->getLHS(), B->getRHS()};
  if (const auto *C = dyn_cast<clang::CXXOperatorCallExpr>(E))
    if (C->getNumArgs() == 2 && C->isInfixBinaryOp())
      return BinaryOp{
          clang::BinaryOperator::getOverloadedOpcode(C->getOperator()),
          C->getArg(0), C->getArg(1)};
  return std::nullopt;
}

/// `i += blockDim.x * gridDim.x` (either order) on \p I.
static bool isGridStrideStep(const clang::Expr *Inc, const clang::VarDecl *I) {
  auto B = binaryOp(Inc);
  if (!B || B->Op != clang::BO_AddAssign || declOf(B->LHS) != I)
    return false;
  const auto *M = dyn_cast<clang::BinaryOperator>(stripCasts(B->RHS));
  return M && M->getOpcode() == clang::BO_Mul &&
         mentionsBuiltin(M, "blockDim") && mentionsBuiltin(M, "gridDim") &&
         !mentionsBuiltin(M, "threadIdx") && !mentionsBuiltin(M, "blockIdx");
}

Expected<InputLoop> PrivatizeAtomics::inputLoop(const EditContext &Ctx,
                                                const Edit &E,
                                                const Plan &P) const {
  auto No = [&](const Twine &Why) {
    return reject(E, "not-applicable",
                  "params.vector_bytes " + Twine(P.VectorBytes) + ": " + Why);
  };
  InputLoop L;
  const clang::FunctionDecl *K = P.Kernel.Decl;
  std::vector<const clang::Stmt *> Body;
  if (P.Map) {
    L.Index = P.Map->Index;
    L.Bound = P.Map->Bound;
    Body = P.Map->Body;
  } else {
    const auto *KB = cast<clang::CompoundStmt>(K->getBody());
    for (const clang::Stmt *S : KB->body()) {
      const auto *F = dyn_cast<clang::ForStmt>(S);
      if (!F) {
        if (isa<clang::DeclStmt>(S) && !mentionsBuiltin(S, "threadIdx") &&
            !L.For)
          continue;
        return No("the kernel is not a single grid-stride loop over the "
                  "input (statement at " +
                  where(Ctx, S) + ")");
      }
      const auto *DS = dyn_cast_or_null<clang::DeclStmt>(F->getInit());
      const auto *V = DS && DS->isSingleDecl()
                          ? dyn_cast<clang::VarDecl>(DS->getSingleDecl())
                          : nullptr;
      auto C = binaryOp(F->getCond());
      if (L.For || !V || !V->getInit() || linearIndexDim(V->getInit(), /*ThroughHelpers=*/true) != 'x' ||
          !C || C->Op != clang::BO_LT || declOf(C->LHS) != V ||
          !isGridStrideStep(F->getInc(), V))
        return No("the loop at " + where(Ctx, F) +
                  " is not 'for (i = blockIdx.x * blockDim.x + threadIdx.x; "
                  "i < n; i += blockDim.x * gridDim.x)'");
      if (!isBlockUniform(C->RHS, K) || mentions(C->RHS, V))
        return No("the loop bound '" + looseExprText(Ctx, C->RHS) +
                  "' is not the same in every thread");
      if (llvm::is_contained(writtenDecls(F->getBody()), V))
        return No("the loop variable '" + V->getName() + "' is written in "
                  "the loop");
      L.For = F;
      L.Index = V;
      L.Bound = C->RHS;
      Body = {F->getBody()};
    }
    if (!L.For)
      return No("the kernel has no grid-stride loop over the input");
  }
  std::string I = L.Index->getName().str();

  // Every use of i is a load p[i] from a pointer parameter.
  // Enclosing: the subscript whose index \p S is part of, if any.
  std::string Problem;
  std::function<void(const clang::Stmt *, const clang::ArraySubscriptExpr *)>
      Walk = [&](const clang::Stmt *S,
                 const clang::ArraySubscriptExpr *Enclosing) {
        if (!S || !Problem.empty())
          return;
        if (const auto *A = dyn_cast<clang::ArraySubscriptExpr>(S)) {
          // In a template, `p[i]` with `i` of a dependent type keeps its
          // operands in written order (getBase() cannot tell them apart).
          auto IsIndex = [&](const clang::Expr *X) {
            const auto *R = dyn_cast<clang::DeclRefExpr>(X->IgnoreParenImpCasts());
            return R && R->getDecl() == L.Index;
          };
          if (IsIndex(A->getRHS()) || IsIndex(A->getLHS())) {
            const auto *Base = dyn_cast<clang::DeclRefExpr>(
                (IsIndex(A->getRHS()) ? A->getLHS() : A->getRHS())
                    ->IgnoreParenImpCasts());
            const auto *PV = Base ? dyn_cast<clang::ParmVarDecl>(Base->getDecl())
                                  : nullptr;
            if (!PV || !PV->getType()->isPointerType()) {
              Problem = "'" + looseExprText(Ctx, A) +
                        "' is not a load from a pointer parameter";
              return;
            }
            L.Loads.push_back({A, PV});
            if (!llvm::is_contained(L.Arrays, PV))
              L.Arrays.push_back(PV);
            return;
          }
          // The privatized array's subscript is the bin, not a load.
          Walk(A->getBase(), Enclosing);
          Walk(A->getIdx(), declOf(A->getBase()) == P.Array ? nullptr : A);
          return;
        }
        if (const auto *R = dyn_cast<clang::DeclRefExpr>(S))
          if (R->getDecl() == L.Index) {
            if (Enclosing)
              Problem = "the load '" + looseExprText(Ctx, Enclosing) +
                        "' is not unit-stride in '" + I + "'";
            else
              Problem = "'" + I + "' is used at " + where(Ctx, R) +
                        " other than as the index of a load p[" + I + "]";
            return;
          }
        for (const clang::Stmt *C : S->children())
          Walk(C, Enclosing);
      };
  for (const clang::Stmt *S : Body)
    Walk(S, nullptr);
  if (!Problem.empty())
    return No(Problem);
  if (L.Loads.empty())
    return No("the loop loads nothing at '" + I + "'");

  // The loaded elements: integers or floats of one size dividing the word.
  std::vector<const clang::ValueDecl *> Written = writtenDecls(K->getBody());
  for (const MemWrite &W : memoryWrites(K->getBody()))
    if (const clang::ValueDecl *D = declOf(W.Base))
      Written.push_back(D);
  for (const clang::ParmVarDecl *A : L.Arrays) {
    clang::QualType T = A->getType()->getPointeeType();
    std::string Name = A->getName().str();
    if (T->isDependentType())
      return No("the element type of '" + Name +
                "' depends on a template parameter");
    if (T.isVolatileQualified())
      return No("'" + Name + "' is volatile");
    if (!(T->isIntegerType() || T->isRealFloatingType()) ||
        T->isBooleanType())
      return No("'" + Name + "' has element type '" +
                T.getUnqualifiedType().getAsString(
                    Ctx.AST.getPrintingPolicy()) +
                "', which has no vector form (integers and floats have)");
    int64_t Size = Ctx.AST.getTypeSizeInChars(T).getQuantity();
    if (Size > P.VectorBytes || P.VectorBytes % Size)
      return No("'" + Name + "' has " + Twine(Size) +
                "-byte elements, which do not fill a " +
                Twine(P.VectorBytes) + "-byte word");
    if (L.ElemBytes && L.ElemBytes != Size)
      return No("the loaded arrays have elements of different sizes");
    L.ElemBytes = Size;
    if (llvm::is_contained(Written, A))
      return No("'" + Name + "' is written in the kernel");
  }
  if (L.ElemBytes == P.VectorBytes)
    return No("one element is already " + Twine(L.ElemBytes) + " bytes");

  // The body runs on the word's elements in another order: it may only
  // update atomics and its own locals.
  for (const clang::Stmt *S : Body) {
    if (const clang::Stmt *J = firstJump(S))
      return No("the loop body leaves early at " + where(Ctx, J));
    if (const clang::Stmt *C = opaqueCall(S))
      return No("the loop body calls a function at " + where(Ctx, C) +
                " that may write memory");
    auto Writes = memoryWrites(S);
    if (!Writes.empty())
      return No("the loop body writes memory ('" +
                looseExprText(Ctx, Writes.front().Target) +
                "'); only atomics may be reordered");
  }
  std::vector<const clang::ValueDecl *> Local;
  std::function<void(const clang::Stmt *)> Decls = [&](const clang::Stmt *S) {
    if (!S)
      return;
    if (const auto *DS = dyn_cast<clang::DeclStmt>(S))
      for (const clang::Decl *D : DS->decls())
        if (const auto *V = dyn_cast<clang::ValueDecl>(D))
          Local.push_back(V);
    for (const clang::Stmt *C : S->children())
      Decls(C);
  };
  for (const clang::Stmt *S : Body)
    Decls(S);
  for (const clang::Stmt *S : Body)
    for (const clang::ValueDecl *D : writtenDecls(S))
      if (!llvm::is_contained(Local, D) && D != L.Index)
        return No("the loop body updates '" + D->getName() +
                  "', declared outside it; its order would change");
  return L;
}

Expected<clang::tooling::Replacements>
PrivatizeAtomics::rewrite(const EditContext &Ctx, const Edit &E,
                          const Plan &P) const {
  const auto *Body = cast<clang::CompoundStmt>(P.Kernel.Decl->getBody());
  auto BodySp = looseExprSpan(Ctx, Body);
  if (!BodySp)
    return reject(E, "macro", "the kernel body is written inside a macro");
  unsigned Begin = BodySp->Begin.Offset + 1, End = BodySp->End.Offset - 1;
  std::string AName = P.Array->getName().str();
  std::string Priv = freshName(Ctx.Code, AName + "_private");
  std::string B = freshName(Ctx.Code, "bin");
  std::string W = freshName(Ctx.Code, "w");
  int64_t Warps = P.BlockSize / 32;
  std::string Bins = std::to_string(P.Bins);

  // [From, To) with the edits inside it applied.
  auto Render = [&](unsigned From, unsigned To,
                    const std::vector<TextEdit> &Inner) {
    std::vector<TextEdit> In;
    for (const TextEdit &T : Inner)
      if (T.Offset >= From && T.Offset + T.Length <= To)
        In.push_back(T);
    return spliceText(Ctx.Code, From, To, In);
  };
  auto Outside = [](const TextEdit &T, const std::vector<TextEdit> &Spans) {
    return llvm::none_of(Spans, [&](const TextEdit &S) {
      return T.Offset >= S.Offset && T.Offset + T.Length <= S.Offset + S.Length;
    });
  };
  // The body's edits: atomics go to the private copy, and \p Loads (the
  // input loads, replaced by word elements) are applied inside them too.
  auto BodyEdits =
      [&](const std::vector<TextEdit> &Loads) -> Expected<std::vector<TextEdit>> {
    std::vector<TextEdit> Out;
    for (const AtomicUse &U : P.Uses) {
      auto RefSp = looseExprSpan(Ctx, U.BaseRef);
      auto CallSp = looseExprSpan(Ctx, U.Call);
      auto ArgSp = looseExprSpan(Ctx, U.Call->getArg(0));
      auto IdxSp = U.Index ? looseExprSpan(Ctx, U.Index) : std::optional<SourceSpan>();
      if (!RefSp || !CallSp || !ArgSp || (U.Index && !IdxSp))
        return reject(E, "macro",
                      "the atomic at " + where(Ctx, U.Call) +
                          " is written inside a macro expansion");
      std::string Idx = U.Index ? Render(IdxSp->Begin.Offset, IdxSp->End.Offset, Loads) : "0";
      TextEdit Target;
      if (P.Layout == Copies::Lane)
        Target = {ArgSp->Begin.Offset, ArgSp->End.Offset - ArgSp->Begin.Offset,
                  "&" + Priv + "[" + Idx + "][threadIdx.x % 32]"};
      else
        Target = {RefSp->Begin.Offset, RefSp->End.Offset - RefSp->Begin.Offset,
                  P.Layout == Copies::Warp ? Priv + "[threadIdx.x / 32]"
                                           : Priv};
      if (!P.Guarded || (U.Range && *U.Range <= P.Bins)) {
        Out.push_back(Target);
        continue;
      }
      std::vector<TextEdit> PrivEdits = {Target};
      for (const TextEdit &T : Loads)
        if (Outside(T, {Target}))
          PrivEdits.push_back(T);
      std::string PrivCall = Render(CallSp->Begin.Offset, CallSp->End.Offset, PrivEdits);
      std::string Call = Render(CallSp->Begin.Offset, CallSp->End.Offset, Loads);
      std::string Cond = "(size_t)" + parenthesize(Idx) + " < " + Bins;
      Out.push_back({CallSp->Begin.Offset, CallSp->End.Offset - CallSp->Begin.Offset,
                     "(" + Cond + " ? " + PrivCall + " : " + Call + ")"});
    }
    for (const TextEdit &T : Loads)
      if (Outside(T, Out))
        Out.push_back(T);
    return Out;
  };
  auto Edits0 = BodyEdits({});
  if (!Edits0)
    return Edits0.takeError();
  std::vector<TextEdit> Edits = std::move(*Edits0);

  std::string Indent = "  ";
  if (!Body->body_empty())
    if (auto Sp = looseStmtSpan(Ctx, Body->body_front()))
      Indent = indentationAt(Ctx.Code, Sp->Begin.Offset);
  const std::string &I = Indent;
  std::string Step = " += blockDim.x * gridDim.x";

  if (P.Loop) {
    // The loop becomes a loop over words (when the pointers are aligned)
    // and a scalar loop for the rest.
    const InputLoop &L = *P.Loop;
    const clang::Stmt *First, *Last;
    std::optional<SourceSpan> Region;
    std::string TypeName; // "int i", as written
    std::string Init = looseExprText(Ctx, L.Index->getInit());
    auto DeclSp = looseStmtSpan(Ctx, L.For ? L.For->getInit() : P.Map->IndexDecl);
    auto InitSp = looseExprSpan(Ctx, L.Index->getInit());
    bool Wrap = false; // several statements: braces around them
    if (L.For) {
      Region = looseStmtSpan(Ctx, L.For);
      First = Last = L.For->getBody();
    } else if (!P.Map->EarlyReturn) {
      auto GuardSp = looseStmtSpan(Ctx, P.Map->Guard);
      if (DeclSp && GuardSp)
        Region = offsetSpan(DeclSp->Begin.Offset, GuardSp->End.Offset);
      First = Last = P.Map->Guard->getThen();
    } else {
      First = P.Map->Body.front();
      Last = P.Map->Body.back();
      auto LastSp = looseStmtSpan(Ctx, Last);
      if (DeclSp && LastSp)
        Region = offsetSpan(DeclSp->Begin.Offset, LastSp->End.Offset);
      Wrap = true;
    }
    auto FirstSp = looseStmtSpan(Ctx, First), LastSp = looseStmtSpan(Ctx, Last);
    if (!Region || !DeclSp || !InitSp || !FirstSp || !LastSp)
      return reject(E, "macro", "the loop or its body is in a macro");
    TypeName = StringRef(Ctx.Code.substr(DeclSp->Begin.Offset,
                                         InitSp->Begin.Offset - DeclSp->Begin.Offset))
                   .rtrim(" =")
                   .str();
    std::string Name = L.Index->getName().str();
    std::string Type = L.Index->getType().getUnqualifiedType().getAsString(
        Ctx.AST.getPrintingPolicy());
    std::string N = looseExprText(Ctx, L.Bound);
    std::string PN = parenthesize(N);
    int64_t Per = P.VectorBytes / L.ElemBytes;
    std::string PerText = std::to_string(Per);
    std::string From = freshName(Ctx.Code, "scalar_from");
    std::string V = freshName(Ctx.Code, "v");
    std::string K = freshName(Ctx.Code, "e");
    std::string Word = P.VectorBytes == 4   ? "unsigned int"
                       : P.VectorBytes == 8 ? "uint2"
                                            : "uint4";
    std::map<const clang::ParmVarDecl *, std::string> WordName, ElemName;
    std::vector<std::string> Aligned;
    for (const clang::ParmVarDecl *A : L.Arrays) {
      std::string AN = A->getName().str();
      WordName[A] = freshName(Ctx.Code, AN + "_v");
      ElemName[A] = freshName(Ctx.Code, AN + "_e");
      Aligned.push_back("reinterpret_cast<unsigned long long>(" + AN +
                        ") % " + std::to_string(P.VectorBytes) + " == 0");
    }
    std::vector<TextEdit> Loads;
    for (const InputLoad &Ld : L.Loads) {
      auto Sp = looseExprSpan(Ctx, Ld.Access);
      if (!Sp)
        return reject(E, "macro",
                      "the load at " + where(Ctx, Ld.Access) +
                          " is written inside a macro expansion");
      Loads.push_back(
          {Sp->Begin.Offset, Sp->End.Offset - Sp->Begin.Offset, ElemName[Ld.Array] + "[" + K + "]"});
    }
    auto VecEdits = BodyEdits(Loads);
    if (!VecEdits)
      return VecEdits.takeError();
    // The body as the statement of a loop whose head is at indent I.
    auto BodyText = [&](const std::vector<TextEdit> &Inner) {
      std::string T = Render(FirstSp->Begin.Offset, LastSp->End.Offset, Inner);
      if (!Wrap)
        return T;
      return "{\n" + I + "  " + indentLines(T, "  ") + "\n" + I + "}";
    };
    std::string VecBody = indentLines(BodyText(*VecEdits), "    ");
    std::string Out = Type + " " + From + " = 0;\n";
    Out += I + "if (" + join(Aligned, " &&\n" + I + "    ") + ") {\n";
    Out += I + "  " + From + " = " + PN + " / " + PerText + " * " + PerText +
           ";\n";
    Out += I + "  for (" + Type + " " + V + " = " + Init + "; " + V + " < " +
           PN + " / " + PerText + "; " + V + Step + ") {\n";
    for (const clang::ParmVarDecl *A : L.Arrays) {
      std::string Elem = A->getType()
                             ->getPointeeType()
                             .getUnqualifiedType()
                             .getAsString(Ctx.AST.getPrintingPolicy());
      Out += I + "    " + Word + " " + WordName[A] + " = reinterpret_cast<const " +
             Word + " *>(" + A->getName().str() + ")[" + V + "];\n";
      Out += I + "    const " + Elem + " *" + ElemName[A] +
             " = reinterpret_cast<const " + Elem + " *>(&" + WordName[A] +
             ");\n";
    }
    Out += I + "    #pragma unroll\n";
    Out += I + "    for (int " + K + " = 0; " + K + " < " + PerText + "; ++" +
           K + ")" + (VecBody.front() == '{' ? " " : "\n" + I + "      ") +
           VecBody + "\n";
    Out += I + "  }\n";
    Out += I + "}\n";
    Out += I + "for (" + TypeName + " = " + From + " + " + Init + "; " + Name +
           " < " + N + "; " + Name + Step + ") " + BodyText(Edits);
    llvm::erase_if(Edits, [&](const TextEdit &T) {
      return T.Offset >= Region->Begin.Offset && T.Offset < Region->End.Offset;
    });
    Edits.push_back({Region->Begin.Offset, Region->End.Offset - Region->Begin.Offset, Out});
  } else if (P.Map) {
    // One element per thread becomes a grid-stride loop.
    const ThreadItem &M = *P.Map;
    auto DeclSp = looseStmtSpan(Ctx, M.IndexDecl);
    auto GuardSp = looseStmtSpan(Ctx, M.Guard);
    auto InitSp = looseExprSpan(Ctx, M.Index->getInit());
    if (!DeclSp || !GuardSp || !InitSp)
      return reject(E, "macro", "the index or its guard is in a macro");
    std::string Name = M.Index->getName().str();
    std::string Type =
        Ctx.Code.substr(DeclSp->Begin.Offset, InitSp->Begin.Offset - DeclSp->Begin.Offset).str();
    // "int i = " -> "int i"
    Type = StringRef(Type).rtrim(" =").str();
    std::string Head = "for (" + Type + " = " +
                       looseExprText(Ctx, M.Index->getInit()) + "; " + Name +
                       " < " + looseExprText(Ctx, M.Bound) + "; " + Name + Step +
                       ")";
    if (!M.EarlyReturn) {
      // `T i = ...; if (i < n)` -> `for (...)`; the guarded statement
      // stays as it is.
      auto CondSp = looseExprSpan(Ctx, M.Guard->getCond());
      unsigned RParen = CondSp->End.Offset;
      while (RParen < Ctx.Code.size() && Ctx.Code[RParen] != ')')
        ++RParen;
      Edits.push_back({DeclSp->Begin.Offset, RParen + 1 - DeclSp->Begin.Offset, Head});
    } else {
      // `T i = ...; if (i >= n) return; rest` -> `for (...) { rest }`.
      auto LastSp = looseStmtSpan(Ctx, M.Body.back());
      auto FirstSp = looseStmtSpan(Ctx, M.Body.front());
      if (!LastSp || !FirstSp)
        return reject(E, "macro", "the kernel body has macro statements");
      std::string Rest = Render(FirstSp->Begin.Offset, LastSp->End.Offset, Edits);
      llvm::erase_if(Edits, [&](const TextEdit &T) {
        return T.Offset >= FirstSp->Begin.Offset && T.Offset < LastSp->End.Offset;
      });
      Edits.push_back({DeclSp->Begin.Offset, LastSp->End.Offset - DeclSp->Begin.Offset,
                       Head + " {\n" + Indent + "  " +
                           indentLines(Rest, "  ") + "\n" + Indent + "}"});
    }
  }

  std::string Pro, Epi;
  if (P.Layout == Copies::Warp) {
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
  } else if (P.Layout == Copies::Lane) {
    // Zeroed and summed along rows; the sum reads lane (l + bin) % 32 first
    // so the threads of a warp start in different banks.
    std::string Ln = freshName(Ctx.Code, "lane");
    Pro = "\n" + I + "__shared__ " + P.ElemType + " " + Priv + "[" + Bins +
          "][32];\n" + I + "for (int " + B + " = threadIdx.x; " + B + " < " +
          std::to_string(32 * P.Bins) + "; " + B + " += blockDim.x)\n" + I +
          "  " + Priv + "[" + B + " / 32][" + B + " % 32] = 0;\n" + I +
          "__syncthreads();";
    Epi = "\n" + I + "__syncthreads();\n" + I + "for (int " + B +
          " = threadIdx.x; " + B + " < " + Bins + "; " + B +
          " += blockDim.x) {\n" + I + "  " + P.ElemType + " sum = 0;\n" + I +
          "  for (int " + Ln + " = 0; " + Ln + " < 32; ++" + Ln + ")\n" + I +
          "    sum += " + Priv + "[" + B + "][(" + Ln + " + " + B +
          ") % 32];\n" + I + "  if (sum != 0)\n" + I + "    atomicAdd(&" +
          AName + "[" + B + "], sum);\n" + I + "}";
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
    if (auto Sp = looseStmtSpan(Ctx, Body->body_back()))
      EpiAt = Sp->End.Offset;
  Edits.push_back({Begin, 0, Pro});
  Edits.push_back({EpiAt, 0, Epi});
  std::string NewBody = spliceText(Ctx.Code, Begin, End, Edits);

  clang::tooling::Replacements Repls;
  if (Error Err = addReplacement(
          Repls, clang::tooling::Replacement(Ctx.FileName, Begin, End - Begin,
                                             NewBody),
          E))
    return std::move(Err);
  for (const LaunchSite &L : P.Kernel.Info->Launches) {
    if (P.CapGrid)
      if (Error Err = addReplacement(
              Repls,
              replaceSpan(Ctx, L.GridRange, cappedGrid(L.Grid, P.MaxBlocks)),
              E))
        return std::move(Err);
    if (P.SetBlock)
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
