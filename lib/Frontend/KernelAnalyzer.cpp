//===- KernelAnalyzer.cpp - One kernel body, in source order --------------===//
//
// Walks each kernel body once, in source order, recording loops, memory
// accesses and calls. The coalescing analysis computes, for each index
// expression, its coefficient in threadIdx.x (see coefficientOf).
//
//===----------------------------------------------------------------------===//

#include "ModelBuilderInternal.h"
#include "optiml/Frontend/ASTUtil.h"
#include "optiml/Frontend/ModelBuilder.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Index/USRGeneration.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include <algorithm>
#include <map>
#include <set>

using namespace clang;
using namespace llvm;

namespace optiml {

namespace {

//===----------------------------------------------------------------------===//
// The coefficient of threadIdx.x in an index expression.
//===----------------------------------------------------------------------===//

struct Coef {
  enum Kind { Zero, Const, Symbolic, Unknown } K = Zero;
  int64_t C = 0;
  bool Indirect = false;

  static Coef zero() { return {}; }
  static Coef constant(int64_t C) {
    if (C == 0)
      return zero();
    Coef R;
    R.K = Const;
    R.C = C;
    return R;
  }
  static Coef symbolic() {
    Coef R;
    R.K = Symbolic;
    return R;
  }
  static Coef unknown(bool Indirect = false) {
    Coef R;
    R.K = Unknown;
    R.Indirect = Indirect;
    return R;
  }
};

Coef add(Coef A, Coef B, bool Subtract) {
  bool Ind = A.Indirect || B.Indirect;
  Coef R;
  if (A.K == Coef::Unknown || B.K == Coef::Unknown)
    R = Coef::unknown();
  else if (B.K == Coef::Zero)
    R = A;
  else if (A.K == Coef::Zero)
    R = Subtract ? (B.K == Coef::Const ? Coef::constant(-B.C) : B) : B;
  else if (A.K == Coef::Const && B.K == Coef::Const)
    R = Coef::constant(Subtract ? A.C - B.C : A.C + B.C);
  else
    R = Coef::symbolic();
  R.Indirect = Ind;
  return R;
}

/// Per-kernel facts the analysis consults while walking.
class KernelAnalyzer : public RecursiveASTVisitor<KernelAnalyzer> {
public:
  KernelAnalyzer(ASTContext &Ctx, KernelInfo &K, const FunctionDecl *FD)
      : Ctx(Ctx), SM(Ctx.getSourceManager()), LO(Ctx.getLangOpts()), K(K),
        FD(FD) {}

  void run() {
    collectRoles(FD->getBody());
    TraverseStmt(FD->getBody());
  }

  bool shouldVisitTemplateInstantiations() const { return false; }

  //--- Loops -----------------------------------------------------------------

  bool TraverseAttributedStmt(AttributedStmt *S) {
    for (const Attr *A : S->getAttrs())
      if (const auto *LH = dyn_cast<LoopHintAttr>(A))
        if (LH->getOption() == LoopHintAttr::Unroll ||
            LH->getOption() == LoopHintAttr::UnrollCount)
          PendingUnroll = true;
    return RecursiveASTVisitor::TraverseAttributedStmt(S);
  }

  bool TraverseForStmt(ForStmt *S) { return traverseLoop(S, "for"); }
  bool TraverseWhileStmt(WhileStmt *S) { return traverseLoop(S, "while"); }
  bool TraverseDoStmt(DoStmt *S) { return traverseLoop(S, "do"); }
  bool TraverseCXXForRangeStmt(CXXForRangeStmt *S) {
    return traverseLoop(S, "range-for");
  }

  //--- Accesses and calls ----------------------------------------------------

  bool VisitArraySubscriptExpr(ArraySubscriptExpr *E) {
    // buf[a][b]: record the element access once, at the outermost
    // subscript; the inner `buf[a]` only selects a row.
    if (E->getType()->isArrayType())
      return true;
    if (const auto *Inner =
            dyn_cast<ArraySubscriptExpr>(E->getBase()->IgnoreParenImpCasts())) {
      // A[i][k] with A a `float **`: an access through the pointer A[i].
      if (Inner->getType()->isPointerType())
        recordAccess(E, Inner, E->getIdx());
      else
        recordMultiDim(E, Inner);
      return true;
    }
    recordAccess(E, E->getBase(), E->getIdx());
    return true;
  }

  bool VisitUnaryOperator(UnaryOperator *U) {
    if (U->getOpcode() != UO_Deref)
      return true;
    const Expr *Sub = U->getSubExpr()->IgnoreParenImpCasts();
    if (const auto *BO = dyn_cast<BinaryOperator>(Sub);
        BO && BO->isAdditiveOp() && BO->getOpcode() == BO_Add) {
      const Expr *L = BO->getLHS(), *R = BO->getRHS();
      if (R->getType()->isPointerType())
        std::swap(L, R);
      recordAccess(U, L, R);
    } else {
      recordAccess(U, Sub, nullptr);
    }
    return true;
  }

  bool VisitCallExpr(CallExpr *C) {
    if (isa<CUDAKernelCallExpr>(C))
      return true;
    StringRef Name = calleeName(C);
    if (Name.empty())
      return true;
    if (isAtomic(Name) && C->getNumArgs() > 0) {
      // atomicAdd(sum, v) and atomicAdd(p + i, v): the pointer is the access.
      const Expr *P = C->getArg(0)->IgnoreParenImpCasts();
      if (isa<DeclRefExpr>(P))
        recordAccess(P, P, nullptr);
      else if (const auto *BO = dyn_cast<BinaryOperator>(P);
               BO && BO->getOpcode() == BO_Add) {
        const Expr *L = BO->getLHS(), *R = BO->getRHS();
        if (R->getType()->isPointerType())
          std::swap(L, R);
        recordAccess(P, L, R);
      }
    }
    CallSite CS{Name.str(), filePos(SM, C->getBeginLoc()), currentLoop()};
    if (Name.starts_with("__syncthreads") ||
        isBlockBarrier(C->getDirectCallee()))
      K.Syncthreads.push_back(CS);
    else if (isAtomic(Name))
      K.Atomics.push_back(CS);
    else if (isMathFunction(Name))
      K.MathCalls.push_back(CS);
    else if (isWarpPrimitive(Name))
      K.WarpPrimitives.push_back(CS);
    else if (const FunctionDecl *Callee = C->getDirectCallee();
             Callee && Callee->hasAttr<CUDADeviceAttr>() &&
             !SM.isInSystemHeader(Callee->getLocation()) &&
             (SM.isInMainFile(SM.getExpansionLoc(Callee->getLocation())) ||
              // A helper the user wrote in a file the main file includes
              // (declarations of a toolkit stand-in are not helpers).
              (Callee->isDefined() &&
               isUserFile(SM, SM.getFileID(SM.getExpansionLoc(
                                  Callee->getDefinition()->getLocation()))))))
      K.DeviceCalls.push_back(CS);
    return true;
  }

  bool VisitVarDecl(VarDecl *VD) {
    if (VD->hasAttr<CUDASharedAttr>()) {
      SharedDecl S;
      S.Name = VD->getNameAsString();
      S.Type = VD->getType().getAsString(policy());
      QualType T = VD->getType();
      if (T->isIncompleteArrayType() || VD->hasExternalStorage())
        S.Dynamic = true;
      else if (!T->isDependentType() && !T->isIncompleteType())
        S.Bytes = Ctx.getTypeSizeInChars(T).getQuantity();
      K.Shared.push_back(std::move(S));
      SharedVars.insert(VD);
      return true;
    }
    // A local pointer to dynamic shared memory handed out by a helper
    // (`T *sdata = SharedMemory<T>();`): its accesses are shared ones.
    if (VD->getType()->isPointerType() && VD->hasInit() &&
        !Assigned.contains(VD))
      if (const VarDecl *Behind = sharedVarBehind(VD->getInit())) {
        SharedDecl S;
        S.Name = VD->getNameAsString();
        S.Type = VD->getType().getAsString(policy());
        S.Dynamic = Behind->hasExternalStorage() ||
                    Behind->getType()->isIncompleteArrayType();
        if (!S.Dynamic && !Behind->getType()->isDependentType())
          S.Bytes = Ctx.getTypeSizeInChars(Behind->getType()).getQuantity();
        K.Shared.push_back(std::move(S));
        SharedVars.insert(VD);
        return true;
      }
    // Locals loaded from memory the parameters point to: a pointer
    // (`const float *a = A[blockIdx.x];`) or a struct whose members are
    // pointers (`const Mats p = m[blockIdx.x];`).
    if (VD->hasInit() && !Assigned.contains(VD) && VD->isLocalVarDecl()) {
      const Expr *Init = VD->getInit();
      if (const auto *CE = dyn_cast<CXXConstructExpr>(Init->IgnoreImplicit());
          CE && CE->getNumArgs() == 1 &&
          CE->getConstructor()->isCopyOrMoveConstructor())
        Init = CE->getArg(0);
      if (VD->getType()->isPointerType()) {
        if (const Expr *Load = pointerLoad(Init)) {
          LoadedPointers[VD] = Load;
          return true;
        }
      } else if (VD->getType()->isRecordType()) {
        if (const Expr *Load = recordLoad(Init))
          LoadedRecords[VD] = Load;
        return true;
      }
    }
    // Local pointers into parameters: `const float *row = A + r * n;`
    if (VD->getType()->isPointerType() && VD->hasInit() &&
        !Assigned.contains(VD)) {
      const Expr *Init = VD->getInit()->IgnoreParenImpCasts();
      const Expr *Base = Init, *Offset = nullptr;
      if (const auto *BO = dyn_cast<BinaryOperator>(Init);
          BO && BO->getOpcode() == BO_Add) {
        Base = BO->getLHS();
        Offset = BO->getRHS();
        if (Offset->getType()->isPointerType())
          std::swap(Base, Offset);
      } else if (const auto *U = dyn_cast<UnaryOperator>(Init);
                 U && U->getOpcode() == UO_AddrOf) {
        if (const auto *AS =
                dyn_cast<ArraySubscriptExpr>(U->getSubExpr()->IgnoreParens())) {
          Base = AS->getBase();
          Offset = AS->getIdx();
        }
      }
      Base = Base->IgnoreParenImpCasts();
      if (const auto *DR = dyn_cast<DeclRefExpr>(Base))
        if (const auto *PVD = dyn_cast<ParmVarDecl>(DR->getDecl()))
          if (PVD->getType()->isPointerType())
            Aliases[VD] = {PVD, Offset};
    }
    return true;
  }

  bool VisitMemberExpr(MemberExpr *) { return true; }

  bool VisitPseudoObjectExpr(PseudoObjectExpr *E) {
    if (auto B = asBuiltinVar(E))
      if (B->Dim != 'x' && (B->Var == "threadIdx" || B->Var == "blockIdx"))
        K.Uses2DThreads = true;
    return true;
  }

private:
  struct Alias {
    const ParmVarDecl *Param;
    const Expr *Offset;
  };

  PrintingPolicy policy() const {
    PrintingPolicy PP(LO);
    PP.SuppressTagKeyword = true;
    return PP;
  }

  std::string currentLoop() const {
    return LoopStack.empty() ? "" : K.Loops[LoopStack.back()].Id;
  }

  std::string text(SourceRange R) const { return sourceText(SM, LO, R); }

  /// Which lvalues are written, read-modify-written, or atomically updated.
  void collectRoles(Stmt *Body) {
    struct RoleVisitor : RecursiveASTVisitor<RoleVisitor> {
      KernelAnalyzer &A;
      explicit RoleVisitor(KernelAnalyzer &A) : A(A) {}
      static const Expr *target(const Expr *E) {
        E = E->IgnoreParens();
        while (const auto *ME = dyn_cast<MemberExpr>(E))
          E = ME->getBase()->IgnoreParens();
        return E;
      }
      void noteVar(const Expr *E, const Expr *Value = nullptr) {
        if (const auto *DR = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts()))
          if (const auto *VD = dyn_cast<VarDecl>(DR->getDecl())) {
            A.Assigned.insert(VD);
            if (Value)
              A.AssignedValues[VD].push_back(Value);
          }
      }
      bool VisitBinaryOperator(BinaryOperator *B) {
        if (B->getOpcode() == BO_Assign) {
          A.Writes.insert(target(B->getLHS()));
          noteVar(B->getLHS(), B->getRHS());
        }
        return true;
      }
      bool VisitCompoundAssignOperator(CompoundAssignOperator *B) {
        A.ReadWrites.insert(target(B->getLHS()));
        noteVar(B->getLHS(), B->getRHS());
        return true;
      }
      bool VisitUnaryOperator(UnaryOperator *U) {
        if (U->isIncrementDecrementOp()) {
          A.ReadWrites.insert(target(U->getSubExpr()));
          noteVar(U->getSubExpr());
        }
        return true;
      }
      bool VisitCallExpr(CallExpr *C) {
        // An assignment written with an operator that is (or, with
        // dependent operands in a template, may be) overloaded:
        // `s[t] += v` where some operator+= is visible.
        if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(C);
            Op && Op->getNumArgs() >= 1) {
          OverloadedOperatorKind K = Op->getOperator();
          if (K == OO_Equal) {
            A.Writes.insert(target(Op->getArg(0)));
            noteVar(Op->getArg(0),
                    Op->getNumArgs() > 1 ? Op->getArg(1) : nullptr);
          } else if (Op->isAssignmentOp() || K == OO_PlusPlus ||
                     K == OO_MinusMinus) {
            A.ReadWrites.insert(target(Op->getArg(0)));
            noteVar(Op->getArg(0),
                    Op->getNumArgs() > 1 ? Op->getArg(1) : nullptr);
          }
          return true;
        }
        if (!isAtomic(calleeName(C)) || C->getNumArgs() == 0)
          return true;
        const Expr *P = C->getArg(0)->IgnoreParenImpCasts();
        if (const auto *U = dyn_cast<UnaryOperator>(P);
            U && U->getOpcode() == UO_AddrOf)
          A.Atomics.insert(target(U->getSubExpr()));
        else
          A.AtomicPointers.insert(P);
        return true;
      }
    };
    RoleVisitor V(*this);
    V.TraverseStmt(Body);
  }

  bool traverseLoop(Stmt *S, StringRef Kind) {
    LoopInfo L;
    L.Kind = Kind.str();
    L.HasUnrollPragma = PendingUnroll;
    PendingUnroll = false;
    std::string Parent = currentLoop();
    unsigned Ordinal = ChildCount[Parent]++;
    L.Id = Parent.empty() ? K.QualifiedName + "/loop" + std::to_string(Ordinal)
                          : Parent + "." + std::to_string(Ordinal);
    L.Parent = Parent;
    L.Depth = LoopStack.size();
    if (auto Span = fileSpan(SM, LO, S->getSourceRange()))
      L.Range = *Span;
    else
      L.Range.Begin = filePos(SM, S->getBeginLoc());
    if (auto *F = dyn_cast<ForStmt>(S))
      describeFor(F, L);
    K.Loops.push_back(std::move(L));
    LoopStack.push_back(K.Loops.size() - 1);
    bool R;
    if (auto *F = dyn_cast<ForStmt>(S))
      R = RecursiveASTVisitor::TraverseForStmt(F);
    else if (auto *W = dyn_cast<WhileStmt>(S))
      R = RecursiveASTVisitor::TraverseWhileStmt(W);
    else if (auto *D = dyn_cast<DoStmt>(S))
      R = RecursiveASTVisitor::TraverseDoStmt(D);
    else
      R = RecursiveASTVisitor::TraverseCXXForRangeStmt(
          cast<CXXForRangeStmt>(S));
    LoopStack.pop_back();
    return R;
  }

  std::optional<int64_t> constantOf(const Expr *E) const {
    if (!E || E->isValueDependent() || E->isTypeDependent())
      return std::nullopt;
    Expr::EvalResult R;
    if (E->EvaluateAsInt(R, Ctx))
      return R.Val.getInt().getExtValue();
    // `const int n = 64;` locals
    if (const auto *DR = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts()))
      if (const auto *VD = dyn_cast<VarDecl>(DR->getDecl()))
        if (VD->getType().isConstQualified() && VD->hasInit() &&
            !VD->getInit()->isValueDependent())
          if (VD->getInit()->EvaluateAsInt(R, Ctx))
            return R.Val.getInt().getExtValue();
    return std::nullopt;
  }

  static bool mentionsThreadIndex(const Stmt *S) {
    if (!S)
      return false;
    if (const auto *E = dyn_cast<Expr>(S))
      if (auto B = asBuiltinVar(E))
        return B->Var == "threadIdx" || B->Var == "blockIdx";
    for (const Stmt *C : S->children())
      if (mentionsThreadIndex(C))
        return true;
    return false;
  }

  void describeFor(ForStmt *F, LoopInfo &L) {
    const VarDecl *IV = nullptr;
    const Expr *InitE = nullptr;
    if (const auto *DS = dyn_cast_or_null<DeclStmt>(F->getInit())) {
      if (DS->isSingleDecl())
        if (const auto *VD = dyn_cast<VarDecl>(DS->getSingleDecl())) {
          IV = VD;
          InitE = VD->getInit();
        }
    } else if (const auto *BO = dyn_cast_or_null<BinaryOperator>(F->getInit());
               BO && BO->getOpcode() == BO_Assign) {
      if (const auto *DR =
              dyn_cast<DeclRefExpr>(BO->getLHS()->IgnoreParenImpCasts()))
        if (const auto *VD = dyn_cast<VarDecl>(DR->getDecl())) {
          IV = VD;
          InitE = BO->getRHS();
        }
    }
    if (!IV)
      return;
    auto IsIV = [&](const Expr *E) {
      if (const auto *DR = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts()))
        return DR->getDecl() == IV;
      return false;
    };

    // Bound: `iv < B`, `iv <= B`, `iv > B`, `iv >= B`, `iv != B`.
    const Expr *BoundE = nullptr;
    BinaryOperatorKind Cmp = BO_LT;
    if (const auto *C = dyn_cast_or_null<BinaryOperator>(
            F->getCond() ? F->getCond()->IgnoreParenImpCasts() : nullptr);
        C && C->isComparisonOp()) {
      if (IsIV(C->getLHS())) {
        BoundE = C->getRHS();
        Cmp = C->getOpcode();
      } else if (IsIV(C->getRHS())) {
        BoundE = C->getLHS();
        Cmp = BinaryOperator::reverseComparisonOp(C->getOpcode());
      }
    }

    // Step: ++iv, iv++, --iv, iv += c, iv -= c, iv = iv + c.
    const Expr *StepE = nullptr;
    std::optional<int64_t> Step;
    bool Multiplicative = false;
    const Expr *Inc =
        F->getInc() ? F->getInc()->IgnoreParenImpCasts() : nullptr;
    if (const auto *U = dyn_cast_or_null<UnaryOperator>(Inc);
        U && U->isIncrementDecrementOp() && IsIV(U->getSubExpr())) {
      Step = U->isIncrementOp() ? 1 : -1;
    } else if (const auto *CA = dyn_cast_or_null<CompoundAssignOperator>(Inc);
               CA && IsIV(CA->getLHS())) {
      StepE = CA->getRHS();
      if (CA->getOpcode() == BO_AddAssign || CA->getOpcode() == BO_SubAssign) {
        if (auto V = constantOf(StepE))
          Step = CA->getOpcode() == BO_AddAssign ? *V : -*V;
      } else {
        Multiplicative = true;
      }
    } else if (const auto *BO = dyn_cast_or_null<BinaryOperator>(Inc);
               BO && BO->getOpcode() == BO_Assign && IsIV(BO->getLHS())) {
      if (const auto *Sum =
              dyn_cast<BinaryOperator>(BO->getRHS()->IgnoreParenImpCasts());
          Sum && Sum->isAdditiveOp()) {
        const Expr *Other = IsIV(Sum->getLHS()) ? Sum->getRHS()
                            : IsIV(Sum->getRHS()) && Sum->getOpcode() == BO_Add
                                ? Sum->getLHS()
                                : nullptr;
        StepE = Other;
        if (Other)
          if (auto V = constantOf(Other))
            Step = Sum->getOpcode() == BO_Add ? *V : -*V;
      } else {
        Multiplicative = true;
      }
    }

    L.InductionVar = IV->getNameAsString();
    if (InitE)
      L.Init = text(InitE->getSourceRange());
    if (BoundE)
      L.Bound = text(BoundE->getSourceRange());
    if (Inc)
      L.Step = text(Inc->getSourceRange());
    L.ThreadDependentBounds =
        mentionsThreadIndex(InitE) || mentionsThreadIndex(BoundE);

    // Induction variables keep the thread dependence of their start when the
    // step is uniform: `for (i = tid; i < n; i += stride)` stays unit-stride.
    // A multiplicative step (s >>= 1) keeps a uniform start uniform.
    Coef IVCoef = Coef::unknown();
    if (InitE) {
      Coef StepCoef = StepE ? coefficientOf(StepE) : Coef::zero();
      Coef InitCoef = coefficientOf(InitE);
      if (StepCoef.K == Coef::Zero &&
          (!Multiplicative || InitCoef.K == Coef::Zero))
        IVCoef = InitCoef;
    }
    InductionCoef[IV] = IVCoef;

    // Constant trip count.
    std::optional<int64_t> I0 = constantOf(InitE), B = constantOf(BoundE);
    if (!I0 || !B || !Step || *Step == 0 || Multiplicative)
      return;
    int64_t Lo = *I0, Hi = *B, S = *Step;
    int64_t Trip = 0;
    switch (Cmp) {
    case BO_LT:
      Trip = S > 0 && Hi > Lo ? (Hi - Lo + S - 1) / S : 0;
      break;
    case BO_LE:
      Trip = S > 0 && Hi >= Lo ? (Hi - Lo) / S + 1 : 0;
      break;
    case BO_GT:
      Trip = S < 0 && Lo > Hi ? (Lo - Hi + (-S) - 1) / (-S) : 0;
      break;
    case BO_GE:
      Trip = S < 0 && Lo >= Hi ? (Lo - Hi) / (-S) + 1 : 0;
      break;
    case BO_NE:
      if ((Hi - Lo) % S != 0 || (Hi - Lo) / S < 0)
        return;
      Trip = (Hi - Lo) / S;
      break;
    default:
      return;
    }
    if ((S > 0 && (Cmp == BO_GT || Cmp == BO_GE)) ||
        (S < 0 && (Cmp == BO_LT || Cmp == BO_LE)))
      return; // runs forever or not at all: not a trip count we trust
    L.TripCount = Trip;
  }

  /// Coefficient of threadIdx.x in \p E. Memoized per variable through
  /// VarCoef; Depth guards against pathological chains.
  Coef coefficientOf(const Expr *E, unsigned Depth = 0) {
    if (!E || Depth > 32)
      return Coef::unknown();
    E = E->IgnoreParenImpCasts();
    if (auto B = asBuiltinVar(E))
      return B->Var == "threadIdx" && B->Dim == 'x' ? Coef::constant(1)
                                                    : Coef::zero();
    if (isa<IntegerLiteral>(E) || isa<CharacterLiteral>(E) ||
        isa<CXXBoolLiteralExpr>(E) || isa<SizeOfPackExpr>(E) ||
        isa<UnaryExprOrTypeTraitExpr>(E))
      return Coef::zero();
    if (const auto *DR = dyn_cast<DeclRefExpr>(E)) {
      const ValueDecl *D = DR->getDecl();
      if (isa<ParmVarDecl>(D) || isa<NonTypeTemplateParmDecl>(D) ||
          isa<EnumConstantDecl>(D))
        return Coef::zero();
      const auto *VD = dyn_cast<VarDecl>(D);
      if (!VD)
        return Coef::unknown();
      if (!VD->isLocalVarDecl() || VD->getType().isConstQualified()) {
        if (!VD->isLocalVarDecl())
          return Coef::zero(); // globals, __constant__: uniform
      }
      if (auto It = InductionCoef.find(VD); It != InductionCoef.end())
        return It->second;
      if (auto It = VarCoef.find(VD); It != VarCoef.end())
        return It->second;
      Coef C = Coef::unknown();
      if (VD->hasInit() && !Assigned.contains(VD)) {
        // Cycles run through reassigned variables (below); assume uniform
        // while inside, as there.
        VarCoef[VD] = Coef::zero();
        ++Tentative;
        C = coefficientOf(VD->getInit(), Depth + 1);
        --Tentative;
        VarCoef.erase(VD);
      } else if (Assigned.contains(VD) && !isa<ParmVarDecl>(VD)) {
        // Reassigned (cur = nxt): uniform if every value it takes is
        // uniform. Assume uniform while checking (the greatest fixpoint),
        // and cache nothing decided under that assumption but VD itself.
        VarCoef[VD] = Coef::zero();
        ++Tentative;
        bool Uniform = !VD->hasInit() ||
                       coefficientOf(VD->getInit(), Depth + 1).K == Coef::Zero;
        for (const Expr *V : AssignedValues.lookup(VD))
          Uniform = Uniform && coefficientOf(V, Depth + 1).K == Coef::Zero;
        --Tentative;
        VarCoef.erase(VD);
        C = Uniform ? Coef::zero() : Coef::unknown();
      }
      if (Tentative == 0)
        VarCoef[VD] = C;
      return C;
    }
    if (const auto *ME = dyn_cast<MemberExpr>(E)) {
      // Fields of by-value parameters (a struct of sizes) are uniform.
      const Expr *Base = ME->getBase()->IgnoreParenImpCasts();
      if (const auto *DR = dyn_cast<DeclRefExpr>(Base))
        if (isa<ParmVarDecl>(DR->getDecl()))
          return Coef::zero();
      return Coef::unknown();
    }
    if (const auto *U = dyn_cast<UnaryOperator>(E)) {
      Coef C = coefficientOf(U->getSubExpr(), Depth + 1);
      switch (U->getOpcode()) {
      case UO_Plus:
        return C;
      case UO_Minus:
        if (C.K == Coef::Const)
          return Coef::constant(-C.C);
        return C;
      case UO_Deref:
        return Coef::unknown(/*Indirect=*/true);
      default:
        return C.K == Coef::Zero ? C : Coef::unknown();
      }
    }
    if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
      Coef L = coefficientOf(BO->getLHS(), Depth + 1);
      Coef R = coefficientOf(BO->getRHS(), Depth + 1);
      bool Ind = L.Indirect || R.Indirect;
      auto Mark = [&](Coef C) {
        C.Indirect |= Ind;
        return C;
      };
      switch (BO->getOpcode()) {
      case BO_Add:
        return add(L, R, false);
      case BO_Sub:
        return add(L, R, true);
      case BO_Mul: {
        if (L.K == Coef::Zero && R.K == Coef::Zero)
          return Mark(Coef::zero());
        if (L.K != Coef::Zero && R.K != Coef::Zero)
          return Mark(Coef::unknown());
        Coef Var = L.K == Coef::Zero ? R : L;
        const Expr *Scale = L.K == Coef::Zero ? BO->getLHS() : BO->getRHS();
        if (Var.K == Coef::Unknown)
          return Mark(Var);
        if (auto V = constantOf(Scale)) {
          if (Var.K == Coef::Const)
            return Mark(Coef::constant(Var.C * *V));
          return Mark(*V == 0 ? Coef::zero() : Coef::symbolic());
        }
        return Mark(Coef::symbolic());
      }
      case BO_Shl:
        if (R.K == Coef::Zero && L.K == Coef::Const)
          if (auto V = constantOf(BO->getRHS()); V && *V >= 0 && *V < 32)
            return Mark(Coef::constant(L.C << *V));
        [[fallthrough]];
      default:
        if (L.K == Coef::Zero && R.K == Coef::Zero)
          return Mark(Coef::zero());
        return Mark(Coef::unknown());
      case BO_Comma:
        return R;
      }
    }
    if (const auto *CO = dyn_cast<ConditionalOperator>(E)) {
      Coef A = coefficientOf(CO->getTrueExpr(), Depth + 1);
      Coef B = coefficientOf(CO->getFalseExpr(), Depth + 1);
      Coef C = coefficientOf(CO->getCond(), Depth + 1);
      if (C.K == Coef::Zero && A.K == B.K && A.C == B.C)
        return A;
      return Coef::unknown(A.Indirect || B.Indirect);
    }
    if (isa<ArraySubscriptExpr>(E))
      return Coef::unknown(/*Indirect=*/true);
    if (const auto *C = dyn_cast<CallExpr>(E)) {
      bool AllZero = true, Ind = false;
      for (const Expr *A : C->arguments()) {
        Coef AC = coefficientOf(A, Depth + 1);
        AllZero &= AC.K == Coef::Zero;
        Ind |= AC.Indirect;
      }
      // __ldg(p + i) and friends load: indirect.
      if (calleeName(C).starts_with("__ldg"))
        return Coef::unknown(true);
      return AllZero ? Coef::zero() : Coef::unknown(Ind);
    }
    if (const auto *CE = dyn_cast<CastExpr>(E))
      return coefficientOf(CE->getSubExpr(), Depth + 1);
    if (const auto *FC = dyn_cast<CXXFunctionalCastExpr>(E))
      return coefficientOf(FC->getSubExpr(), Depth + 1);
    return Coef::unknown();
  }

  /// `buf[i][j]` on a constant-size array: the coefficient is the sum of
  /// each index's coefficient times the size of the dimensions inside it.
  void recordMultiDim(const ArraySubscriptExpr *Outer,
                      const ArraySubscriptExpr *Inner) {
    std::vector<const Expr *> Indexes = {Outer->getIdx()};
    const Expr *Root = Inner;
    while (const auto *AS = dyn_cast<ArraySubscriptExpr>(Root)) {
      Indexes.insert(Indexes.begin(), AS->getIdx());
      Root = AS->getBase()->IgnoreParenImpCasts();
    }
    const auto *DR = dyn_cast<DeclRefExpr>(Root);
    const auto *VD = DR ? dyn_cast<VarDecl>(DR->getDecl()) : nullptr;
    if (!VD || !SharedVars.contains(VD))
      return; // local arrays are registers or stack, not modelled
    // Row sizes from the declared type, innermost last.
    std::vector<int64_t> Dims;
    QualType T = VD->getType();
    while (const auto *CAT = Ctx.getAsConstantArrayType(T)) {
      Dims.push_back(CAT->getSize().getSExtValue());
      T = CAT->getElementType();
    }
    Coef Total = Coef::zero();
    std::string Text;
    for (size_t D = 0; D < Indexes.size(); ++D) {
      int64_t Stride = 1;
      bool Known = Dims.size() == Indexes.size();
      for (size_t E = D + 1; Known && E < Dims.size(); ++E)
        Stride *= Dims[E];
      Coef C = coefficientOf(Indexes[D]);
      // A symbolic or unknown coefficient stays as it is.
      if (C.K == Coef::Const)
        C = Known ? Coef::constant(C.C * Stride) : Coef::symbolic();
      Total = add(Total, C, false);
      Text += (D ? "][" : "") + text(Indexes[D]->getSourceRange());
    }
    recordResolved(Outer, AddressSpace::Shared, VD->getNameAsString(), -1, Text,
                   Total);
  }

  /// Whether \p E names memory a parameter points to: the parameter or a
  /// local pointer into it.
  bool pointsIntoParam(const Expr *E) const {
    const auto *DR = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
    if (!DR)
      return false;
    if (const auto *PVD = dyn_cast<ParmVarDecl>(DR->getDecl()))
      return PVD->getType()->isPointerType();
    const auto *VD = dyn_cast<VarDecl>(DR->getDecl());
    return VD && Aliases.contains(VD);
  }

  /// Whether \p E is an element of memory a parameter points to: `X[i]`
  /// or `*X` with pointsIntoParam(X).
  bool isParamElement(const Expr *E) const {
    if (const auto *AS = dyn_cast<ArraySubscriptExpr>(E))
      return pointsIntoParam(AS->getBase());
    const auto *U = dyn_cast<UnaryOperator>(E);
    return U && U->getOpcode() == UO_Deref && pointsIntoParam(U->getSubExpr());
  }

  /// The read that gives the struct \p E from memory a parameter points
  /// to (`m[i]`, `*m`, `m->out`; for `m[i].out` and a local holding one,
  /// the read of the whole), else null.
  const Expr *recordLoad(const Expr *E) const {
    E = E->IgnoreParenImpCasts();
    if (!E->getType()->isRecordType())
      return nullptr;
    if (const auto *ME = dyn_cast<MemberExpr>(E)) {
      if (ME->isArrow())
        return pointsIntoParam(ME->getBase()) ? E : nullptr;
      return recordLoad(ME->getBase());
    }
    if (isParamElement(E))
      return E;
    if (const auto *DR = dyn_cast<DeclRefExpr>(E))
      if (const auto *VD = dyn_cast<VarDecl>(DR->getDecl()))
        if (auto It = LoadedRecords.find(VD); It != LoadedRecords.end())
          return It->second;
    return nullptr;
  }

  /// The read that gives the pointer \p E from memory a parameter points
  /// to (`A[blockIdx.x]`, `*A`, `m->a`; for `m[i].a` and `p.a` with `p` a
  /// struct local read from such memory, the struct's read), else null.
  const Expr *pointerLoad(const Expr *E) const {
    E = E->IgnoreParenImpCasts();
    if (!E->getType()->isPointerType())
      return nullptr;
    if (isParamElement(E))
      return E;
    if (const auto *ME = dyn_cast<MemberExpr>(E)) {
      if (ME->isArrow())
        return pointsIntoParam(ME->getBase()) ? E : nullptr;
      return recordLoad(ME->getBase());
    }
    return nullptr;
  }

  /// An access through a pointer read from memory (pointerLoad): recorded
  /// as a global access to the pointer as written, through that read.
  bool recordLoadedAccess(const Expr *Access, const Expr *Base,
                          const Expr *Index) {
    std::string Name;
    const Expr *Load = nullptr;
    if (const auto *DR = dyn_cast<DeclRefExpr>(Base)) {
      const auto *VD = dyn_cast<VarDecl>(DR->getDecl());
      auto It = VD ? LoadedPointers.find(VD) : LoadedPointers.end();
      if (It == LoadedPointers.end())
        return false;
      Name = VD->getNameAsString();
      Load = It->second;
    } else if ((Load = pointerLoad(Base))) {
      Name = text(Base->getSourceRange());
    } else {
      return false;
    }
    std::string IndexText = Index ? text(Index->getSourceRange()) : "0";
    Coef C = Index ? coefficientOf(Index) : Coef::zero();
    recordResolved(Access, AddressSpace::Global, Name, -1, IndexText, C);
    K.Accesses.back().Through = text(Load->getSourceRange());
    return true;
  }

  void recordAccess(const Expr *Access, const Expr *Base, const Expr *Index) {
    Base = Base->IgnoreParenImpCasts();
    if (recordLoadedAccess(Access, Base, Index))
      return;
    const auto *DR = dyn_cast<DeclRefExpr>(Base);
    if (!DR)
      return;
    const auto *VD = dyn_cast<VarDecl>(DR->getDecl());
    if (!VD)
      return;
    MemoryAccess A;
    const Expr *Offset = nullptr;
    if (const auto *PVD = dyn_cast<ParmVarDecl>(VD)) {
      if (!PVD->getType()->isPointerType())
        return;
      A.Space = AddressSpace::Global;
      A.Base = PVD->getNameAsString();
      A.ParamIndex = PVD->getFunctionScopeIndex();
    } else if (SharedVars.contains(VD)) {
      A.Space = AddressSpace::Shared;
      A.Base = VD->getNameAsString();
    } else if (auto It = Aliases.find(VD); It != Aliases.end()) {
      A.Space = AddressSpace::Global;
      A.Base = It->second.Param->getNameAsString();
      A.ParamIndex = It->second.Param->getFunctionScopeIndex();
      Offset = It->second.Offset;
    } else {
      return;
    }

    std::string IndexText = Index ? text(Index->getSourceRange()) : "0";
    Coef C = Index ? coefficientOf(Index) : Coef::zero();
    if (Offset) {
      IndexText = "(" + text(Offset->getSourceRange()) + ") + " + IndexText;
      C = add(coefficientOf(Offset), C, false);
    }
    recordResolved(Access, A.Space, A.Base, A.ParamIndex, IndexText, C);
  }

  void recordResolved(const Expr *Access, AddressSpace Space, std::string Base,
                      int ParamIndex, std::string IndexText, Coef C) {
    MemoryAccess A;
    A.Space = Space;
    A.Base = std::move(Base);
    A.ParamIndex = ParamIndex;
    A.Index = IndexText;
    A.Indirect = C.Indirect;
    switch (C.K) {
    case Coef::Zero:
      A.Pattern = Coalescing::Uniform;
      A.Stride = 0;
      break;
    case Coef::Const:
      A.Pattern = C.C == 1 ? Coalescing::Unit : Coalescing::Strided;
      A.Stride = C.C;
      break;
    case Coef::Symbolic:
      A.Pattern = Coalescing::Strided;
      break;
    case Coef::Unknown:
      A.Pattern = Coalescing::Unknown;
      break;
    }

    const Expr *Key = Access;
    if (Atomics.contains(Key) || AtomicPointers.contains(Key)) {
      A.IsAtomic = A.IsRead = A.IsWrite = true;
    } else if (ReadWrites.contains(Key)) {
      A.IsRead = A.IsWrite = true;
    } else if (Writes.contains(Key)) {
      A.IsWrite = true;
    } else {
      A.IsRead = true;
    }
    A.Loop = currentLoop();
    A.Pos = filePos(SM, Access->getBeginLoc());
    K.Accesses.push_back(std::move(A));
  }

  ASTContext &Ctx;
  const SourceManager &SM;
  const LangOptions &LO;
  KernelInfo &K;
  const FunctionDecl *FD;

  bool PendingUnroll = false;
  std::vector<size_t> LoopStack;
  std::map<std::string, unsigned> ChildCount;
  DenseSet<const Expr *> Writes, ReadWrites, Atomics, AtomicPointers;
  DenseSet<const VarDecl *> Assigned, SharedVars;
  DenseMap<const VarDecl *, Alias> Aliases;
  /// Locals read from memory the parameters point to, and the read.
  DenseMap<const VarDecl *, const Expr *> LoadedPointers, LoadedRecords;
  DenseMap<const VarDecl *, Coef> InductionCoef, VarCoef;
  DenseMap<const VarDecl *, std::vector<const Expr *>> AssignedValues;
  unsigned Tentative = 0;
};

} // namespace

void analyzeKernelBody(ASTContext &Ctx, KernelInfo &K, const FunctionDecl *FD) {
  KernelAnalyzer(Ctx, K, FD).run();
}

} // namespace optiml
