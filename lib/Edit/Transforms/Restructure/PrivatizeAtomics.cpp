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
#include "../../Patterns/SideEffects.h"
#include "../../Patterns/ThreadPerItem.h"
#include "../TransformSupport.h"
#include "PlannedTransform.h"
#include "PrivatizeAtomicsInternal.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include <functional>
#include <map>

using namespace llvm;
using clang::dyn_cast;
using clang::dyn_cast_or_null;
using clang::isa;

namespace optiml {
namespace privatizeatomics {

namespace {

/// The name an atomic call calls: its callee's, or in a template, where
/// the call depends on template parameters, the name it looks up.
std::string atomicName(const clang::CallExpr *Call) {
  if (const clang::FunctionDecl *FD = Call->getDirectCallee())
    return FD->getIdentifier() ? FD->getName().str() : "";
  if (const auto *U = dyn_cast<clang::UnresolvedLookupExpr>(
          Call->getCallee()->IgnoreParenImpCasts()))
    return U->getName().getAsString();
  return "";
}

/// \p E (casts and parentheses stripped) as the array of an atomic: a
/// parameter `a`, or `s.a` where `s` is a struct parameter passed by value
/// and `a` its pointer member (the same pointer in every thread, as long
/// as `s` is only read member by member: otherUse checks).
bool atomicBase(const clang::Expr *E, AtomicUse &U) {
  E = E->IgnoreParenImpCasts();
  if (const auto *R = dyn_cast<clang::DeclRefExpr>(E)) {
    if (!isa<clang::ParmVarDecl>(R->getDecl()))
      return false;
    U.BaseRef = R;
    U.Base = R;
    return true;
  }
  const auto *M = dyn_cast<clang::MemberExpr>(E);
  if (!M || M->isArrow())
    return false;
  const auto *F = dyn_cast<clang::FieldDecl>(M->getMemberDecl());
  const auto *R = dyn_cast<clang::DeclRefExpr>(M->getBase()->IgnoreParens());
  if (!F || !F->getType()->isPointerType() || !R ||
      !isa<clang::ParmVarDecl>(R->getDecl()) ||
      !R->getDecl()->getType()->isRecordType())
    return false;
  U.BaseRef = R;
  U.Base = M;
  U.Field = F;
  return true;
}

/// The atomics in \p Body whose target is an element of an array
/// atomicBase accepts: `&a[i]`, `a + i`, `i + a` or `a`. In a template the
/// calls may be unresolved and `a + i` an operator call; instantiations
/// are checked later (instantiationProblem).
std::vector<AtomicUse> atomicUses(const clang::Stmt *Body) {
  std::vector<AtomicUse> All;
  auto IsPointer = [](const clang::Expr *X) {
    return X->IgnoreParenImpCasts()->getType()->isPointerType();
  };
  std::function<void(const clang::Stmt *)> Walk = [&](const clang::Stmt *S) {
    if (!S)
      return;
    for (const clang::Stmt *C : S->children())
      Walk(C);
    const auto *Call = dyn_cast<clang::CallExpr>(S);
    if (!Call || isa<clang::CXXOperatorCallExpr>(Call) ||
        !StringRef(atomicName(Call)).starts_with("atomic") ||
        Call->getNumArgs() < 2)
      return;
    const clang::Expr *A0 = Call->getArg(0)->IgnoreParenImpCasts();
    AtomicUse U;
    U.Call = Call;
    const clang::Expr *L = nullptr, *R = nullptr;
    if (const auto *UO = dyn_cast<clang::UnaryOperator>(A0)) {
      if (UO->getOpcode() != clang::UO_AddrOf)
        return;
      const auto *AS =
          dyn_cast<clang::ArraySubscriptExpr>(UO->getSubExpr()->IgnoreParens());
      if (!AS)
        return;
      L = AS->getLHS();
      R = AS->getRHS();
    } else if (const auto *BO = dyn_cast<clang::BinaryOperator>(A0)) {
      if (BO->getOpcode() != clang::BO_Add)
        return;
      L = BO->getLHS();
      R = BO->getRHS();
    } else if (const auto *OC = dyn_cast<clang::CXXOperatorCallExpr>(A0)) {
      if (OC->getOperator() != clang::OO_Plus || OC->getNumArgs() != 2)
        return;
      L = OC->getArg(0);
      R = OC->getArg(1);
    } else {
      if (atomicBase(A0, U))
        All.push_back(U);
      return;
    }
    if (IsPointer(L) && !IsPointer(R) && atomicBase(L, U))
      U.Index = R;
    else if (IsPointer(R) && !IsPointer(L) && atomicBase(R, U))
      U.Index = L;
    else
      return;
    All.push_back(U);
  };
  Walk(Body);
  return All;
}

/// The call of \p Inst, an instantiation of a kernel template, that
/// instantiates \p Call of its pattern (at the same place); null if none.
const clang::CallExpr *counterpartCall(const clang::FunctionDecl *Inst,
                                       const clang::CallExpr *Call) {
  const clang::CallExpr *Found = nullptr;
  std::function<void(const clang::Stmt *)> Find = [&](const clang::Stmt *S) {
    if (!S || Found)
      return;
    if (const auto *C = dyn_cast<clang::CallExpr>(S))
      if (!isa<clang::CXXOperatorCallExpr>(C) &&
          C->getBeginLoc() == Call->getBeginLoc() &&
          C->getEndLoc() == Call->getEndLoc())
        Found = C;
    for (const clang::Stmt *Ch : S->children())
      Find(Ch);
  };
  Find(Inst->getBody());
  return Found;
}

/// In a kernel template, the largest indexRange() of \p U's index over the
/// instantiations, each read with its template arguments (`v % BINS`);
/// nothing when one has none or there are no instantiations.
std::optional<int64_t> instantiatedRange(const clang::FunctionDecl *K,
                                         const AtomicUse &U) {
  std::vector<const clang::FunctionDecl *> Insts = templateInstantiations(K);
  if (Insts.empty() || !U.Index)
    return std::nullopt;
  int64_t Most = 0;
  for (const clang::FunctionDecl *Inst : Insts) {
    const clang::CallExpr *C = counterpartCall(Inst, U.Call);
    if (!C)
      return std::nullopt;
    std::vector<AtomicUse> Found = atomicUses(C);
    auto It = llvm::find_if(
        Found, [&](const AtomicUse &X) { return X.Call == C && X.Index; });
    if (It == Found.end())
      return std::nullopt;
    auto R = indexRange(It->Index, Inst->getASTContext(), Inst);
    if (!R)
      return std::nullopt;
    Most = std::max(Most, *R);
  }
  return Most;
}

/// Why the array of \p P is touched other than by its atomics, or "". A
/// struct parameter holding it may only have its other members read.
std::string otherUse(const EditContext &Ctx, const clang::FunctionDecl *K,
                     const Plan &P) {
  std::string Why;
  std::function<void(const clang::Stmt *)> Walk = [&](const clang::Stmt *S) {
    if (!S || !Why.empty())
      return;
    const auto *R = dyn_cast<clang::DeclRefExpr>(S);
    if (R && R->getDecl() == P.Array &&
        llvm::none_of(P.Uses, [&](auto &U) { return U.BaseRef == R; })) {
      const clang::MemberExpr *M = nullptr;
      const clang::Stmt *Above = nullptr;
      if (P.Field) {
        auto Ps = Ctx.AST.getParents(*R);
        M = Ps.empty() ? nullptr : Ps[0].get<clang::MemberExpr>();
        if (M) {
          auto Qs = Ctx.AST.getParents(*M);
          Above = Qs.empty() ? nullptr : Qs[0].get<clang::Stmt>();
        }
      }
      const auto *UO = dyn_cast_or_null<clang::UnaryOperator>(Above);
      if (!P.Field || (M && M->getMemberDecl() == P.Field))
        Why = "'" + P.ArrayText +
              "' is also read, written or passed on outside its atomics; a "
              "private copy would hide those";
      else if (!M || M->isArrow() ||
               (UO && UO->getOpcode() == clang::UO_AddrOf))
        Why = "'" + P.Array->getName().str() + "' is used at " + where(Ctx, R) +
              " other than by reading its members; a copy of it or its "
              "address could reach '" +
              P.ArrayText + "' past the private copy";
      return;
    }
    for (const clang::Stmt *C : S->children())
      Walk(C);
  };
  Walk(K->getBody());
  return Why;
}

/// Whether the value \p Call returns is used (it is not a statement of
/// its own).
bool resultUsed(const EditContext &Ctx, const clang::CallExpr *Call) {
  auto Parents = Ctx.AST.getParents(*Call);
  const clang::Stmt *Parent =
      Parents.empty() ? nullptr : Parents[0].get<clang::Stmt>();
  return !Parent || isa<clang::Expr>(Parent);
}

/// Whether memory holding elements of type \p A may be accessed through an
/// lvalue of type \p B by C++'s rules: the same type up to signedness, a
/// character type, void, a class or an array (which may hold one), or a
/// type that depends on template parameters.
bool mayAccess(clang::QualType A, clang::QualType B,
               const clang::ASTContext &AST) {
  if (A.isNull() || B.isNull() || A->isDependentType() || B->isDependentType())
    return true;
  A = A.getCanonicalType().getUnqualifiedType();
  B = B.getCanonicalType().getUnqualifiedType();
  if (B->isCharType() || B->isVoidType() || B->isRecordType() ||
      B->isArrayType() || B->isEnumeralType() || A->isCharType())
    return true;
  auto Unsigned = [&](clang::QualType T) {
    return T->isSignedIntegerType() ? AST.getCorrespondingUnsignedType(T) : T;
  };
  return AST.hasSameUnqualifiedType(Unsigned(A), Unsigned(B));
}

/// Why a pointer other than the array of \p P may point into it and be
/// used in \p K, or "": the private copy holds the array's updates back
/// until the block's merge, so a read through another pointer would miss
/// them and a store would be overtaken by the merge. As elsewhere in the
/// catalog, a pointer to const (or the array and the pointer both
/// __restrict__) is taken not to alias it, and neither is one whose
/// elements cannot be the array's (mayAccess); an atomicAdd whose result
/// is unused (\p All) commutes with the merge. Pointers are the kernel's
/// parameters and, when the array is `s.a`, the other pointer members of
/// `s`.
std::string aliasProblem(const EditContext &Ctx, const clang::FunctionDecl *K,
                         const Plan &P, const std::vector<AtomicUse> &All) {
  clang::QualType AT = P.Field ? P.Field->getType() : P.Array->getType();
  llvm::SmallPtrSet<const clang::Expr *, 8> Commutes;
  for (const AtomicUse &U : All)
    if (atomicName(U.Call) == "atomicAdd" && !resultUsed(Ctx, U.Call))
      Commutes.insert(U.Base);
  std::string Why;
  std::function<void(const clang::Stmt *)> Walk = [&](const clang::Stmt *S) {
    if (!S || !Why.empty())
      return;
    const auto *X = dyn_cast<clang::Expr>(S);
    const auto *M = dyn_cast<clang::MemberExpr>(S);
    const auto *R = dyn_cast<clang::DeclRefExpr>(S);
    const clang::ValueDecl *D =
        M && P.Field && !M->isArrow() && M->getMemberDecl() != P.Field &&
                declOf(M->getBase()) == P.Array
            ? M->getMemberDecl()
        : R && R->getDecl() != P.Array && isa<clang::ParmVarDecl>(R->getDecl())
            ? R->getDecl()
            : nullptr;
    clang::QualType T = D ? D->getType() : clang::QualType();
    if (D && T->isPointerType() && !T->getPointeeType().isConstQualified() &&
        !(AT.isRestrictQualified() && T.isRestrictQualified()) &&
        mayAccess(AT->getPointeeType(), T->getPointeeType(), Ctx.AST) &&
        !Commutes.contains(X)) {
      Why = "'" + looseExprText(Ctx, X) +
            "' points to elements that are not const and is used at " +
            where(Ctx, X) + "; it may point into '" + P.ArrayText +
            "', whose updates the private copy holds back until the block "
            "ends (declare both pointers __restrict__ if they never overlap, "
            "or it 'const " +
            T->getPointeeType().getAsString(Ctx.AST.getPrintingPolicy()) +
            " *' if it is only read)";
      return;
    }
    if (M && D)
      return;
    for (const clang::Stmt *C : S->children())
      Walk(C);
  };
  Walk(K->getBody());
  return Why;
}

/// The atomics call CUDA's atomicAdd (not one declared in the file being
/// edited, whose meaning is its own) on integer or floating-point elements.
/// A kernel template is read in each instantiation (its calls may be
/// unresolved in the pattern, its element type a template parameter).
/// \p ElemBytes gets the largest element size. Returns why not, or "".
std::string instantiationProblem(const EditContext &Ctx,
                                 const clang::FunctionDecl *K, const Plan &P,
                                 clang::QualType ET, int64_t &ElemBytes) {
  const clang::SourceManager &SM = Ctx.AST.getSourceManager();
  auto CalleeProblem = [&](const clang::CallExpr *C,
                           const clang::ASTContext &AST,
                           const std::string &In) -> std::string {
    const clang::FunctionDecl *FD = C->getDirectCallee();
    if (!FD || !FD->getIdentifier() || FD->getName() != "atomicAdd")
      return "the atomic at " + where(Ctx, C) + In + " does not call atomicAdd";
    if (SM.isWrittenInMainFile(SM.getSpellingLoc(FD->getLocation())))
      return "the atomic at " + where(Ctx, C) + In +
             " calls the atomicAdd declared on line " +
             std::to_string(SM.getExpansionLineNumber(FD->getLocation())) +
             " of this file, not CUDA's; its meaning is its own";
    clang::QualType T =
        C->getArg(0)->IgnoreParenImpCasts()->getType()->getPointeeType();
    if (T.isNull() || T->isBooleanType() ||
        !(T->isIntegerType() || T->isRealFloatingType()))
      return "the atomic at " + where(Ctx, C) + In + " adds to elements of '" +
             (T.isNull() ? std::string("?")
                         : T.getAsString(AST.getPrintingPolicy())) +
             "', not integers or floating-point numbers";
    ElemBytes =
        std::max<int64_t>(ElemBytes, AST.getTypeSizeInChars(T).getQuantity());
    return "";
  };
  if (!K->getDescribedFunctionTemplate()) {
    for (const AtomicUse &U : P.Uses)
      if (std::string W = CalleeProblem(U.Call, Ctx.AST, ""); !W.empty())
        return W;
    if (!ET.isNull() && !ET->isDependentType() && !ET->isIncompleteType())
      ElemBytes = Ctx.AST.getTypeSizeInChars(ET).getQuantity();
    return "";
  }
  std::vector<const clang::FunctionDecl *> Insts = templateInstantiations(K);
  if (Insts.empty())
    return "the kernel template is never instantiated in this file: what "
           "its atomics call, and on which element type, is not known";
  for (const clang::FunctionDecl *Inst : Insts) {
    std::string In = " in " + instantiationName(Inst);
    for (const AtomicUse &U : P.Uses) {
      const clang::CallExpr *Found = counterpartCall(Inst, U.Call);
      if (!Found)
        return "the atomic at " + where(Ctx, U.Call) + " has no counterpart" +
               In;
      if (std::string W = CalleeProblem(Found, Inst->getASTContext(), In);
          !W.empty())
        return W;
    }
  }
  return "";
}

/// \p S calls nothing but atomics (no barrier, shuffle, inline assembly,
/// constructor or function that could hold one).
bool onlyAtomicCalls(const clang::Stmt *S) {
  if (!S)
    return true;
  if (isa<clang::AsmStmt, clang::CXXOperatorCallExpr,
          clang::CXXUnresolvedConstructExpr, clang::CUDAKernelCallExpr>(S))
    return false;
  if (const auto *CE = dyn_cast<clang::CXXConstructExpr>(S))
    if (!CE->getConstructor()->isTrivial())
      return false;
  if (const auto *C = dyn_cast<clang::CallExpr>(S))
    if (!StringRef(atomicName(C)).starts_with("atomic"))
      return false;
  return llvm::all_of(S->children(), onlyAtomicCalls);
}

/// `if (c) return;`, a statement of the kernel's body, the only way out of
/// the kernel, followed only by statements whose calls are atomics (no
/// barrier, shuffle or function that could hold one): those statements
/// may become `if (!(c)) { ... }`, so that the threads that returned reach
/// the merge and add nothing. Null when the kernel has no such shape.
const clang::IfStmt *guardedReturn(const clang::FunctionDecl *K) {
  const auto *Body = dyn_cast<clang::CompoundStmt>(K->getBody());
  if (!Body)
    return nullptr;
  const clang::IfStmt *Found = nullptr;
  for (const clang::Stmt *S : Body->body()) {
    const auto *If = dyn_cast<clang::IfStmt>(S);
    const clang::Stmt *Then = If ? If->getThen() : nullptr;
    if (const auto *CS = dyn_cast_or_null<clang::CompoundStmt>(Then))
      Then = CS->size() == 1 ? CS->body_front() : nullptr;
    const auto *Ret = dyn_cast_or_null<clang::ReturnStmt>(Then);
    if (!Found && Ret && !Ret->getRetValue() && !If->getElse() &&
        !If->getInit() && !If->getConditionVariable() && !If->isConsteval() &&
        !If->isConstexpr()) {
      Found = If;
      continue;
    }
    if (firstJump(S) || (Found && !onlyAtomicCalls(S)))
      return nullptr;
  }
  return Found && Found != Body->body_back() ? Found : nullptr;
}

} // namespace

static std::string blockShapeProblem(const EditContext &Ctx,
                                     const clang::FunctionDecl *K,
                                     const KernelInfo &KI);

/// Whether \p S declares shared memory or calls a barrier: the block's
/// threads work together, so its size may be assumed.
static bool cooperates(const clang::Stmt *S) {
  if (!S)
    return false;
  if (const auto *DS = dyn_cast<clang::DeclStmt>(S))
    for (const clang::Decl *D : DS->decls())
      if (D->hasAttr<clang::CUDASharedAttr>())
        return true;
  if (const auto *C = dyn_cast<clang::CallExpr>(S))
    if (StringRef(atomicName(C)).starts_with("__sync"))
      return true;
  return llvm::any_of(S->children(), cooperates);
}

/// Setting every launch's block to params.block_size (copies=warp, or the
/// parameter given) keeps the kernel's meaning only where the threads cover
/// the input in a grid-stride loop and do not work together; otherwise the
/// launches must already use that block size. Returns why not, or "".
static std::string blockChangeProblem(const EditContext &Ctx, const Plan &P,
                                      const KernelInfo &KI) {
  if (!P.SetBlock || (P.CapGrid && !cooperates(P.Kernel.Decl->getBody())))
    return "";
  std::string Why;
  auto Sizes = launchBlockSizesX(Ctx, KI, Why);
  if (Sizes &&
      llvm::all_of(*Sizes, [&](int64_t B) { return B == P.BlockSize; }))
    return "";
  return "the launches' blocks would become " + std::to_string(P.BlockSize) +
         " threads, but the kernel " +
         (P.CapGrid ? "declares shared memory or waits at barriers (its "
                      "block size may be assumed)"
                    : "is not a grid-stride loop (fewer threads would cover "
                      "less of the input)") +
         " and its launches' block size is not known to be " +
         std::to_string(P.BlockSize) +
         (Sizes ? " (they use " +
                      join(map_range(*Sizes,
                                     [](int64_t B) { return Twine(B).str(); }),
                           ", ") +
                      ")"
                : " (" + Why + ")") +
         "; give params.block_size equal to the launches' or copies 'block' "
         "or 'lane'";
}

// Why long: one ordered list of preconditions (the atomics, their target,
// its bin count, the index's range, the block shape, the launches), each
// refusal naming its reason; they share the partial match as locals.
Expected<Plan> PrivatizeAtomics::analyze(const EditContext &Ctx,
                                         const Edit &E) const {
  Plan P;
  auto K = resolveKernel(Ctx, E, E.Target);
  if (!K)
    return K.takeError();
  P.Kernel = *K;
  const KernelInfo &KI = *K->Info;
  if (KI.InMacro)
    return reject(E, "macro",
                  "kernel '" + E.Target +
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
  std::optional<int64_t> MaxThreads = launchBoundsThreads(K->Decl, Ctx.AST);
  // The default: 256 threads, or as many as __launch_bounds__ allows.
  P.BlockSize = E.getInt("block_size").value_or(blockWithin(MaxThreads, 256));
  P.SetBlock = P.Layout == Copies::Warp || E.getInt("block_size");
  if (P.BlockSize < 32 || P.BlockSize > 1024 || P.BlockSize % 32)
    return reject(E, "params",
                  "params.block_size must be a multiple of 32 in [32, 1024]");
  if (MaxThreads && P.SetBlock && P.BlockSize > *MaxThreads)
    return reject(E, "params",
                  "params.block_size " + Twine(P.BlockSize) +
                      " exceeds the kernel's __launch_bounds__(" +
                      Twine(*MaxThreads) + "): its launches would fail");
  P.MaxBlocks = E.getInt("max_blocks").value_or(DefaultGridCap);
  if (P.MaxBlocks < 1)
    return reject(E, "params", "params.max_blocks must be positive");

  // Every atomic whose target is an element of a pointer parameter (or of
  // a struct parameter's pointer member).
  std::vector<AtomicUse> All = atomicUses(K->Decl->getBody());
  if (All.empty())
    return reject(E, "not-applicable",
                  "kernel '" + E.Target +
                      "' has no atomic on an element of a pointer parameter");
  // The arrays, each a parameter or a parameter's member.
  std::vector<std::pair<const clang::ParmVarDecl *, const clang::FieldDecl *>>
      Arrays;
  auto ArrayOf = [](const AtomicUse &U) {
    return std::make_pair(cast<clang::ParmVarDecl>(U.BaseRef->getDecl()),
                          U.Field);
  };
  auto TextOf = [](const std::pair<const clang::ParmVarDecl *,
                                   const clang::FieldDecl *> &A) {
    return A.first->getName().str() +
           (A.second ? "." + A.second->getName().str() : std::string());
  };
  for (const AtomicUse &U : All)
    if (!llvm::is_contained(Arrays, ArrayOf(U)))
      Arrays.push_back(ArrayOf(U));
  if (auto Name = E.getString("array")) {
    for (const auto &A : Arrays)
      if (TextOf(A) == *Name)
        std::tie(P.Array, P.Field) = A;
    if (!P.Array)
      return reject(E, "params",
                    "params.array '" + *Name +
                        "' is not a parameter updated by atomics");
  } else if (Arrays.size() > 1) {
    return reject(E, "params",
                  "several parameters are updated by atomics; name one in "
                  "params.array");
  } else {
    std::tie(P.Array, P.Field) = Arrays.front();
  }
  P.ArrayText = TextOf({P.Array, P.Field});
  const std::string &AName = P.ArrayText;
  for (const AtomicUse &U : All)
    if (ArrayOf(U) == std::make_pair(P.Array, P.Field))
      P.Uses.push_back(U);

  for (const AtomicUse &U : P.Uses) {
    std::string Fn = atomicName(U.Call);
    if (Fn != "atomicAdd")
      return reject(E, "not-applicable",
                    Fn + " on '" + AName + "' at " + where(Ctx, U.Call) +
                        " cannot be privatized (only atomicAdd is)");
    if (resultUsed(Ctx, U.Call))
      return reject(E, "not-applicable",
                    "the result of the atomic at " + where(Ctx, U.Call) +
                        " is used; a private copy cannot return the global "
                        "old value");
  }
  // Nothing else may touch the array, nor read what may be the array.
  if (std::string W = otherUse(Ctx, K->Decl, P); !W.empty())
    return reject(E, "not-applicable", W);
  if (std::string W = aliasProblem(Ctx, K->Decl, P, All); !W.empty())
    return reject(E, "not-applicable", W);

  clang::QualType ET =
      (P.Field ? P.Field->getType() : P.Array->getType())->getPointeeType();
  // In a template the atomics and the element type are read in each
  // instantiation; the rewrite spells the type as the pattern does.
  int64_t ElemBytes = 0;
  if (std::string W = instantiationProblem(Ctx, K->Decl, P, ET, ElemBytes);
      !W.empty())
    return reject(E, "not-applicable", W);
  if (ET.isNull() || (!ET->isDependentType() && !ET->isIntegerType() &&
                      !ET->isRealFloatingType()))
    return reject(E, "not-applicable",
                  "'" + AName + "' has no integer or floating-point elements");
  P.ElemType = ET.getUnqualifiedType().getAsString(Ctx.AST.getPrintingPolicy());

  // The number of bins.
  int64_t Proven = 0;
  bool AllProven = true;
  std::string Unproven;
  for (AtomicUse &U : P.Uses) {
    U.Range = U.Index ? indexRange(U.Index, Ctx.AST, K->Decl)
                      : std::optional<int64_t>(1);
    if (!U.Range)
      U.Range = instantiatedRange(K->Decl, U);
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
        if (U.Index && mayHaveSideEffects(U.Index, Ctx.AST))
          return reject(E, "not-applicable",
                        "the index '" + looseExprText(Ctx, U.Index) +
                            "' has side effects and its range is not "
                            "known; it cannot be checked against the bins");
      }
  } else if (!AllProven) {
    return reject(E, "not-applicable",
                  "the size of '" + AName +
                      "' is not known at compile time: the index '" + Unproven +
                      "' is not bounded by its type, a constant mask, a "
                      "modulus or a clamp such as 'min(max(b, 0), 63)'; give "
                      "params.bins to privatize that many elements");
  } else {
    P.Bins = Proven;
  }
  int64_t Warps = P.BlockSize / 32;
  int64_t NCopies = P.Layout == Copies::Warp   ? Warps
                    : P.Layout == Copies::Lane ? 32
                                               : 1;
  int64_t Bytes = P.Bins * ElemBytes * NCopies;
  if (Bytes > SharedLimit)
    return reject(E, "not-applicable",
                  "the private copies of '" + AName + "' need " + Twine(Bytes) +
                      " bytes of shared memory (" + Twine(P.Bins) +
                      " elements" +
                      (P.Layout == Copies::Warp   ? " per warp"
                       : P.Layout == Copies::Lane ? " per lane"
                                                  : "") +
                      "), more than " + Twine(SharedLimit));

  // The shape: one element per thread becomes a grid-stride loop.
  std::string Why;
  P.Map = matchThreadItem(K->Decl, Why);
  if (P.Map) {
    // A thread of the loop runs other threads' items, under a capped grid:
    // what they read of the thread or block (here or through a helper, or
    // in a declaration before the index: `int b = blockIdx.x;`) would
    // change. Such kernels keep their launches instead.
    const clang::SourceManager &SM = Ctx.AST.getSourceManager();
    bool Ok = P.Map->Dim == 'x' && isBlockUniform(P.Map->Bound, K->Decl);
    for (const clang::Stmt *S : P.Map->Body)
      Ok &= !mentionsBuiltin(S) && !firstJump(S) && !threadShapeCall(S, SM);
    for (const clang::Stmt *S : P.Map->Before)
      Ok &= isa<clang::DeclStmt>(S) && !mentionsBuiltin(S) &&
            !threadShapeCall(S, SM);
    if (!Ok)
      P.Map.reset();
  }
  if (!P.Map) {
    if (const clang::Stmt *J = firstJump(K->Decl->getBody())) {
      P.EarlyReturn = guardedReturn(K->Decl);
      if (!P.EarlyReturn)
        return reject(E, "not-applicable",
                      "the kernel leaves early at " + where(Ctx, J) +
                          "; every thread must reach the merge (a single "
                          "'if (c) return;' in the kernel's body is "
                          "accepted when what follows it calls nothing but "
                          "atomics: it becomes 'if (!(c)) { ... }')");
    }
  }
  // Already a grid-stride loop: `i += blockDim.x * gridDim.x`.
  bool GridStride = false;
  if (!P.Map)
    for (const clang::Stmt *S :
         cast<clang::CompoundStmt>(K->Decl->getBody())->body())
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
  if (std::string W = blockChangeProblem(Ctx, P, KI); !W.empty())
    return reject(E, "launch", W);
  if (P.CapGrid)
    for (const LaunchSite &L : KI.Launches)
      if (!gridIsInteger(Ctx, L))
        return reject(E, "launch",
                      L.Id + " has a dim3 grid; the cap needs a plain "
                             "block count",
                      L.Range.Begin);
  // The grid-stride loop made from one item per thread handles every item
  // below the bound whatever the grid; the original only those its threads
  // reach, so each launch must be shown to reach the bound.
  if (P.Map)
    for (const LaunchSite &L : KI.Launches)
      if (std::string W = gridCoverageProblem(Ctx, L, P.Map->Bound, 0);
          !W.empty())
        return reject(E, "launch",
                      L.Id +
                          " is not shown to run a thread for every item "
                          "below the guard's bound '" +
                          looseExprText(Ctx, P.Map->Bound) + "': " + W +
                          "; the grid-stride loop would add the items its "
                          "threads never reached",
                      L.Range.Begin);

  raw_string_ostream OS(P.Description);
  OS << P.Uses.size() << " atomicAdd" << (P.Uses.size() > 1 ? "s" : "")
     << " into '" << AName << "' (" << P.Bins << " " << P.ElemType
     << " elements, " << (P.Guarded ? "given" : "bounded by the index")
     << "); rewrite: "
     << (P.Layout == Copies::Lane
             ? "a private column per lane"
             : std::string("a private copy per ") +
                   (P.Layout == Copies::Warp ? "warp" : "block"))
     << " in shared memory, merged once per block";
  if (P.EarlyReturn)
    OS << ", the statements after the early return at "
       << where(Ctx, P.EarlyReturn) << " guarded by its negation instead";
  if (P.Loop)
    OS << ", " << P.VectorBytes << "-byte loads of '"
       << join(map_range(
                   P.Loop->Arrays,
                   [](const clang::ParmVarDecl *A) { return A->getName(); }),
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
} // namespace privatizeatomics

std::unique_ptr<Transform> createPrivatizeAtomicsTransform() {
  return std::make_unique<privatizeatomics::PrivatizeAtomics>();
}

} // namespace optiml
