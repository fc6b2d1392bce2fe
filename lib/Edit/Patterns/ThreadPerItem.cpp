//===- ThreadPerItem.cpp - One item per thread behind a bounds guard ------===//

#include "ThreadPerItem.h"
#include "../CatalogInternal.h"
#include "../Transforms/TransformSupport.h"
#include "optiml/Frontend/ASTUtil.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Decl.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include <map>

using namespace clang;
using namespace llvm;

namespace optiml {

//===--- The map shape
//-----------------------------------------------------===//

static std::string typeText(const VarDecl *VD) {
  PrintingPolicy PP(VD->getASTContext().getLangOpts());
  PP.SuppressTagKeyword = true;
  return VD->getType().getUnqualifiedType().getAsString(PP);
}

/// The first top-level `T i = <x index>;` of \p Stmts (sets P.Index and
/// P.IndexDecl) and its position; Stmts.size() when there is none.
static size_t findMapIndex(const EditContext &Ctx, ArrayRef<const Stmt *> Stmts,
                           bool IndexByMeaning, MapPattern &P) {
  for (size_t I = 0; I < Stmts.size(); ++I) {
    const auto *DS = dyn_cast<DeclStmt>(Stmts[I]);
    if (!DS || !DS->isSingleDecl())
      continue;
    const auto *VD = dyn_cast<VarDecl>(DS->getSingleDecl());
    if (!VD || !VD->hasInit() || !VD->getType()->isIntegerType())
      continue;
    auto D = linearIndexDim(VD->getInit());
    if (IndexByMeaning && !D && !VD->getType()->isDependentType() &&
        !VD->getType()->isBooleanType() &&
        Ctx.AST.getTypeSize(VD->getType()) >= 32)
      if (auto L = linearIndexByMeaning(VD->getInit(), Ctx.AST);
          L && !L->GridRows)
        D = L->Dim;
    if (D && *D == 'x') {
      P.Index = VD;
      P.IndexDecl = DS;
      return I;
    }
  }
  return Stmts.size();
}

/// The index's type as written ("unsigned", "size_t"), without const; as
/// clang prints it when the declaration's text does not say.
static std::string writtenIndexType(const EditContext &Ctx,
                                    const MapPattern &P) {
  const SourceManager &SM = Ctx.AST.getSourceManager();
  SourceLocation B = P.IndexDecl->getBeginLoc(), N = P.Index->getLocation();
  if (B.isFileID() && N.isFileID()) {
    StringRef T = StringRef(Ctx.Code)
                      .slice(SM.getFileOffset(B), SM.getFileOffset(N))
                      .trim();
    SmallVector<StringRef, 4> Words;
    T.split(Words, ' ', -1, false);
    std::string Kept;
    for (StringRef W : Words)
      if (W != "const" && W != "register") {
        if (!Kept.empty())
          Kept += ' ';
        Kept += W.str();
      }
    if (!Kept.empty() && Kept.find_first_of(",=*&") == std::string::npos)
      return Kept;
  }
  return typeText(P.Index);
}

std::optional<MapPattern>
matchMapPattern(const EditContext &Ctx, const FunctionDecl *Kernel,
                std::string &WhyNot, bool IndexByMeaning, bool ConstantMacros) {
  const auto *Body = dyn_cast_or_null<CompoundStmt>(Kernel->getBody());
  if (!Body) {
    WhyNot = "the kernel has no body";
    return std::nullopt;
  }
  SmallVector<const Stmt *, 16> Stmts(Body->body_begin(), Body->body_end());
  MapPattern P;
  size_t DeclAt = findMapIndex(Ctx, Stmts, IndexByMeaning, P);
  if (!P.Index) {
    WhyNot = "no index of the form 'i = blockIdx.x * blockDim.x + "
             "threadIdx.x' at the top level of the kernel body";
    return std::nullopt;
  }
  P.IndexName = P.Index->getNameAsString();
  P.IndexType = writtenIndexType(Ctx, P);
  P.InitText = exprText(Ctx, P.Index->getInit());
  if (P.InitText.empty() || containsMacro(P.IndexDecl)) {
    WhyNot = "the index declaration is written with a macro";
    return std::nullopt;
  }
  if (DeclAt + 1 >= Stmts.size()) {
    WhyNot = "nothing follows the index '" + P.IndexName + "'";
    return std::nullopt;
  }
  const auto *If = dyn_cast<IfStmt>(Stmts[DeclAt + 1]);
  if (!If || If->getElse() || If->getInit() || If->getConditionVariable()) {
    WhyNot =
        "the index '" + P.IndexName +
        "' is not followed at once by a bounds guard 'if (" + P.IndexName +
        " < n)' (found '" +
        StringRef(stmtText(Ctx, Stmts[DeclAt + 1])).split('\n').first.str() +
        "')";
    return std::nullopt;
  }
  P.Guard = If;
  // With ConstantMacros, macros that name no variable and call nothing may
  // appear in the bound and the body: their text as written is what the
  // compiler saw, and no use of a variable lies inside one.
  auto MacroFree = [&](const Stmt *S) {
    return ConstantMacros ? onlyConstantMacros(S, Ctx.AST) : !containsMacro(S);
  };
  auto Span = [&](const Stmt *S) -> std::optional<SourceSpan> {
    if (!ConstantMacros)
      return stmtSpan(Ctx, S);
    auto Sp = fileSpan(Ctx.AST.getSourceManager(), Ctx.AST.getLangOpts(),
                       S->getSourceRange(), Ctx.file());
    return Sp ? std::optional<SourceSpan>(withSemicolon(Ctx, *Sp))
              : std::nullopt;
  };
  const auto *Cond =
      dyn_cast<BinaryOperator>(If->getCond()->IgnoreParenImpCasts());
  std::string CondText = exprText(Ctx, If->getCond());
  if (auto CondSpan = Span(If->getCond()); ConstantMacros && CondSpan)
    CondText =
        Ctx.Code.slice(CondSpan->Begin.Offset, CondSpan->End.Offset).str();
  auto Bad = [&](StringRef What) {
    WhyNot = ("the guard 'if (" + CondText + ")' " + What).str();
    return std::nullopt;
  };
  if (!Cond || !Cond->isComparisonOp())
    return Bad("is not a single comparison of the index with a bound");
  BinaryOperatorKind Op = Cond->getOpcode();
  const Expr *Bound = nullptr;
  if (refersTo(Cond->getLHS(), P.Index)) {
    Bound = Cond->getRHS();
  } else if (refersTo(Cond->getRHS(), P.Index)) {
    Bound = Cond->getLHS();
    Op = BinaryOperator::reverseComparisonOp(Op);
  } else {
    return Bad("does not compare the index '" + P.IndexName + "' itself");
  }
  const Stmt *Then = If->getThen();
  auto IsBareReturn = [](const Stmt *S) {
    if (const auto *CS = dyn_cast<CompoundStmt>(S); CS && CS->size() == 1)
      S = CS->body_front();
    const auto *R = dyn_cast<ReturnStmt>(S);
    return R && !R->getRetValue();
  };
  if (Op == BO_LT) {
    if (DeclAt + 2 != Stmts.size())
      return Bad("is not the last statement of the kernel");
    P.EarlyReturn = false;
    if (const auto *CS = dyn_cast<CompoundStmt>(Then))
      P.Body.assign(CS->body_begin(), CS->body_end());
    else
      P.Body.push_back(Then);
  } else if (Op == BO_GE && IsBareReturn(Then)) {
    P.EarlyReturn = true;
    P.Body.assign(Stmts.begin() + DeclAt + 2, Stmts.end());
    if (P.Body.empty())
      return Bad("is followed by nothing");
  } else {
    return Bad("is neither 'if (" + P.IndexName + " < n) ...' nor 'if (" +
               P.IndexName + " >= n) return;'");
  }
  P.Bound = Bound;
  if (auto BoundSpan = Span(Bound); ConstantMacros && BoundSpan)
    P.BoundText =
        Ctx.Code.slice(BoundSpan->Begin.Offset, BoundSpan->End.Offset).str();
  else
    P.BoundText = exprText(Ctx, Bound);
  if (!threadVariance(Bound, Kernel).uniform())
    return Bad("bounds the index with a value that is not the same for "
               "every thread");
  if (ConstantMacros
          ? !MacroFree(If->getCond()) || (P.EarlyReturn && !MacroFree(Then))
          : containsMacro(If))
    return Bad(ConstantMacros ? "is written with a macro that names a "
                                "variable or calls a function"
                              : "is written with a macro");
  for (const Stmt *S : P.Body)
    if (!MacroFree(S)) {
      WhyNot = ConstantMacros ? "the guarded body uses a macro that names a "
                                "variable or calls a function"
                              : "the guarded body uses a macro";
      return std::nullopt;
    }
  auto DeclSpan = stmtSpan(Ctx, P.IndexDecl);
  auto IfSpan = Span(If);
  if (!DeclSpan || !IfSpan) {
    WhyNot = "the kernel's index or guard has no place in the file";
    return std::nullopt;
  }
  for (const Stmt *S : P.Body) {
    auto Sp = Span(S);
    if (!Sp) {
      WhyNot = "the guarded body has no place in the file";
      return std::nullopt;
    }
    P.BodySpans.push_back(*Sp);
  }
  P.RegionBegin = DeclSpan->Begin.Offset;
  P.Indent = indentationAt(Ctx.Code, P.RegionBegin);
  if (P.EarlyReturn) {
    auto First = Span(P.Body.front());
    auto Last = Span(P.Body.back());
    if (!First || !Last) {
      WhyNot = "the guarded body has no place in the file";
      return std::nullopt;
    }
    P.BodyBegin = First->Begin.Offset;
    P.BodyEnd = Last->End.Offset;
    P.RegionEnd = P.BodyEnd;
    std::string Inner = Ctx.Code.slice(P.BodyBegin, P.BodyEnd).str();
    P.BodyBlock =
        "{\n" + P.Indent + "  " + reindent(Inner, 2) + "\n" + P.Indent + "}";
  } else {
    auto ThenSpan = Span(Then);
    if (!ThenSpan) {
      WhyNot = "the guarded body has no place in the file";
      return std::nullopt;
    }
    P.BodyBegin = ThenSpan->Begin.Offset;
    P.BodyEnd = ThenSpan->End.Offset;
    P.RegionEnd = IfSpan->End.Offset;
    std::string Inner = Ctx.Code.slice(P.BodyBegin, P.BodyEnd).str();
    if (isa<CompoundStmt>(Then)) {
      // Written `if (i < n) {` on one line: the block's lines are already
      // one level in from the declaration.
      P.BodyBlock = Inner;
    } else {
      std::string ThenIndent = indentationAt(Ctx.Code, P.BodyBegin);
      bool OwnLine =
          StringRef(Ctx.Code)
              .slice(P.BodyBegin - (P.BodyBegin > 0 ? 1 : 0), P.BodyBegin)
              .trim(" \t")
              .empty() &&
          Ctx.Code.rfind('\n', P.BodyBegin) > Ctx.Code.rfind(')', P.BodyBegin);
      (void)OwnLine;
      P.BodyBlock =
          "{\n" + P.Indent + "  " +
          reindent(Inner, int(P.Indent.size() + 2) - int(ThenIndent.size())) +
          "\n" + P.Indent + "}";
    }
  }
  return P;
}

/// Whether local \p V may hold a different value for another element of
/// the same row (another x, which the rewrites give to other threads, or a
/// divided grid): written after its declaration, or initialized from
/// threadIdx.x, blockIdx.x or gridDim.x, a call to a function of the
/// program, or another such local. (Values of y and z stay with the
/// elements: a 1D map's threads along y repeat the same elements, and a 2D
/// map's rows stay in their threads.)
static bool threadDependentLocal(const VarDecl *V, const Stmt *KernelBody,
                                 const SourceManager &SM, unsigned Depth) {
  if (Depth > 8 || writtenVars(KernelBody).contains(V))
    return true;
  const Expr *Init = V->getInit();
  if (!Init)
    return false;
  struct Reads : RecursiveASTVisitor<Reads> {
    const Stmt *KernelBody;
    const SourceManager &SM;
    unsigned Depth;
    bool Found = false;
    bool VisitExpr(Expr *E) {
      if (auto B = asBuiltinVar(E))
        Found |= B->Dim == 'x' && B->Var != "blockDim";
      return !Found;
    }
    bool VisitDeclRefExpr(DeclRefExpr *DR) {
      if (const auto *L = dyn_cast<VarDecl>(DR->getDecl());
          L && L->isLocalVarDecl())
        Found |= threadDependentLocal(L, KernelBody, SM, Depth + 1);
      return !Found;
    }
    bool VisitCallExpr(CallExpr *C) {
      const FunctionDecl *F = C->getDirectCallee();
      Found |= !F || (F->hasBody() && !SM.isInSystemHeader(F->getLocation()));
      return !Found;
    }
  } R{{}, KernelBody, SM, Depth};
  R.TraverseStmt(const_cast<Expr *>(Init));
  return R.Found;
}

/// A local declared before the body and read in it whose value depends on
/// the thread along x or the grid (threadDependentLocal()); null if none.
static const VarDecl *threadDependentRead(const MapPattern &P,
                                          const SourceManager &SM) {
  const auto *Kernel = dyn_cast<FunctionDecl>(P.Index->getDeclContext());
  if (!Kernel || !Kernel->getBody())
    return nullptr;
  struct Reads : RecursiveASTVisitor<Reads> {
    DenseSet<const VarDecl *> Inside, Outside;
    bool VisitVarDecl(VarDecl *V) {
      Inside.insert(V);
      return true;
    }
    bool VisitDeclRefExpr(DeclRefExpr *DR) {
      if (const auto *V = dyn_cast<VarDecl>(DR->getDecl());
          V && V->isLocalVarDecl())
        Outside.insert(V);
      return true;
    }
  } R;
  for (const Stmt *S : P.Body)
    R.TraverseStmt(const_cast<Stmt *>(S));
  for (const VarDecl *V : R.Outside)
    if (V != P.Index && !R.Inside.contains(V) &&
        threadDependentLocal(V, Kernel->getBody(), SM, 0))
      return V;
  return nullptr;
}

std::string elementwiseBodyProblem(const EditContext &Ctx,
                                   const MapPattern &P) {
  for (const Stmt *S : P.Body) {
    if (mentionsBuiltin(S))
      return "the body uses a thread or block index directly ('" +
             StringRef(stmtText(Ctx, S)).split('\n').first.trim().str() +
             "'): its meaning would change";
    if (callsFunction(S, "__syncthreads") || callsFunction(S, "__syncwarp"))
      return "the body synchronizes threads";
    if (callsFunction(S, "__shfl") || callsFunction(S, "__ballot") ||
        callsFunction(S, "__any_sync") || callsFunction(S, "__all_sync"))
      return "the body uses warp primitives";
    DenseSet<const ValueDecl *> W = writtenVars(S);
    if (W.contains(P.Index))
      return "the body writes the index '" + P.IndexName + "'";
    if (const ValueDecl *B = referencedDecl(P.Bound); B && W.contains(B))
      return "the body writes the bound '" + P.BoundText + "'";
  }
  struct Finder : RecursiveASTVisitor<Finder> {
    bool Return = false, Shared = false;
    bool VisitReturnStmt(ReturnStmt *) {
      Return = true;
      return true;
    }
    bool VisitDeclRefExpr(DeclRefExpr *DR) {
      if (const auto *VD = dyn_cast<VarDecl>(DR->getDecl()))
        if (VD->hasAttr<CUDASharedAttr>())
          Shared = true;
      return true;
    }
    // Lambdas may return.
    bool TraverseLambdaExpr(LambdaExpr *) { return true; }
  } F;
  for (const Stmt *S : P.Body)
    F.TraverseStmt(const_cast<Stmt *>(S));
  if (const VarDecl *V = threadDependentRead(P, Ctx.AST.getSourceManager()))
    return "the body reads '" + V->getNameAsString() +
           "', declared before the index with a value that depends on the "
           "thread's x coordinate or the grid ('" +
           sourceText(Ctx.AST.getSourceManager(), Ctx.AST.getLangOpts(),
                      V->getSourceRange()) +
           "'): a thread running the body for other elements would read "
           "its own value for all of them";
  if (F.Return)
    return "the body returns early";
  if (F.Shared)
    return "the body uses shared memory";
  return "";
}

//===--- The one-item-per-thread shape, any dimension
//----------------------===//

/// `i < n`, `n > i`, `i <= n - 1`: the bound n. For the early-return form
/// the negation: `i >= n`, `n <= i`.
static const Expr *boundOf(const Expr *Cond, const VarDecl *I, bool Negated) {
  const auto *B = dyn_cast<BinaryOperator>(Cond->IgnoreParenImpCasts());
  if (!B)
    return nullptr;
  BinaryOperatorKind Lt = Negated ? BO_GE : BO_LT;
  BinaryOperatorKind Gt = Negated ? BO_LE : BO_GT;
  if (B->getOpcode() == Lt && declOf(B->getLHS()) == I)
    return B->getRHS();
  if (B->getOpcode() == Gt && declOf(B->getRHS()) == I)
    return B->getLHS();
  return nullptr;
}

/// Products of thread and block coordinates ("blockDim.x", "blockIdx.x",
/// sorted; none for a constant) and their integer coefficients.
using IndexTerms = std::map<std::vector<std::string>, int64_t>;

/// \p Local, when given, names what a variable \p E reads stands for (its
/// initializer) or null.
static std::optional<IndexTerms>
expandIndex(const Expr *E, const ASTContext &AST, unsigned Depth,
            function_ref<const Expr *(const VarDecl *)> Local = {}) {
  if (!E || Depth > 16)
    return std::nullopt;
  E = E->IgnoreParens();
  if (auto B = asBuiltinVar(E))
    return IndexTerms{{{B->Var.str() + "." + B->Dim}, 1}};
  if (const auto *DR = dyn_cast<DeclRefExpr>(E); DR && Local) {
    const auto *V = dyn_cast<VarDecl>(DR->getDecl());
    const Expr *Init = V ? Local(V) : nullptr;
    return Init ? expandIndex(Init, AST, Depth + 1, Local) : std::nullopt;
  }
  if (const auto *C = dyn_cast<CastExpr>(E)) {
    // A cast keeps the value when it narrows nothing: coordinates and their
    // products are unsigned 32-bit values.
    QualType T = C->getType();
    bool Keeps = C->getCastKind() == CK_LValueToRValue ||
                 (T->isIntegerType() && !T->isBooleanType() &&
                  !T->isDependentType() && AST.getTypeSize(T) >= 32);
    return Keeps ? expandIndex(C->getSubExpr(), AST, Depth + 1, Local)
                 : std::nullopt;
  }
  if (const auto *L = dyn_cast<IntegerLiteral>(E))
    return IndexTerms{{{}, int64_t(L->getValue().getLimitedValue(1u << 30))}};
  if (const auto *Call = dyn_cast<CallExpr>(E)) {
    const FunctionDecl *FD = Call->getDirectCallee();
    const auto *Body = FD && Call->getNumArgs() == 0 && FD->hasBody()
                           ? dyn_cast_or_null<CompoundStmt>(FD->getBody())
                           : nullptr;
    const auto *Ret = Body && Body->size() == 1
                          ? dyn_cast<ReturnStmt>(Body->body_front())
                          : nullptr;
    return Ret ? expandIndex(Ret->getRetValue(), AST, Depth + 1, Local)
               : std::nullopt;
  }
  const auto *B = dyn_cast<BinaryOperator>(E);
  if (!B || (B->getOpcode() != BO_Add && B->getOpcode() != BO_Mul))
    return std::nullopt;
  auto L = expandIndex(B->getLHS(), AST, Depth + 1, Local);
  auto R = expandIndex(B->getRHS(), AST, Depth + 1, Local);
  if (!L || !R)
    return std::nullopt;
  IndexTerms Out;
  if (B->getOpcode() == BO_Add) {
    Out = *L;
    for (const auto &[M, C] : *R)
      Out[M] += C;
  } else {
    for (const auto &[ML, CL] : *L)
      for (const auto &[MR, CR] : *R) {
        std::vector<std::string> M = ML;
        M.insert(M.end(), MR.begin(), MR.end());
        llvm::sort(M);
        Out[M] += CL * CR;
      }
  }
  for (auto It = Out.begin(); It != Out.end();)
    It = It->second ? std::next(It) : Out.erase(It);
  return Out;
}

std::optional<LinearIndex> linearIndexByMeaning(const Expr *E,
                                                const ASTContext &AST) {
  return linearIndexByMeaning(E, AST, {});
}

std::optional<LinearIndex>
linearIndexByMeaning(const Expr *E, const ASTContext &AST,
                     function_ref<const Expr *(const VarDecl *)> Local) {
  auto Terms = expandIndex(E, AST, 0, Local);
  if (!Terms)
    return std::nullopt;
  for (char D : {'x', 'y', 'z'}) {
    std::string S(1, D);
    if (*Terms == IndexTerms{{{"blockDim." + S, "blockIdx." + S}, 1},
                             {{"threadIdx." + S}, 1}})
      return LinearIndex{D, false};
  }
  if (*Terms == IndexTerms{{{"blockDim.x", "blockIdx.x"}, 1},
                           {{"blockDim.x", "blockIdx.y", "gridDim.x"}, 1},
                           {{"threadIdx.x"}, 1}})
    return LinearIndex{'x', true};
  return std::nullopt;
}

const VarDecl *instantiatedVar(const VarDecl *V, const FunctionDecl *Inst) {
  SmallVector<const Stmt *, 32> Work = {Inst->getBody()};
  while (!Work.empty()) {
    const Stmt *S = Work.pop_back_val();
    if (!S)
      continue;
    if (const auto *DS = dyn_cast<DeclStmt>(S))
      for (const Decl *D : DS->decls())
        if (const auto *IV = dyn_cast<VarDecl>(D);
            IV && IV->getLocation() == V->getLocation())
          return IV;
    for (const Stmt *C : S->children())
      Work.push_back(C);
  }
  return nullptr;
}

/// The index \p V holds, read by its meaning: an integer of at least 32
/// bits initialized with a linear index; in a template where it depends on
/// the template's parameters, the same index in every instantiation.
static std::optional<LinearIndex> indexByMeaning(const VarDecl *V,
                                                 const FunctionDecl *Kernel) {
  const ASTContext &AST = Kernel->getASTContext();
  auto Form = [&](const VarDecl *X) -> std::optional<LinearIndex> {
    clang::QualType T = X ? X->getType() : clang::QualType();
    if (T.isNull() || !X->getInit() || !T->isIntegerType() ||
        T->isBooleanType() || AST.getTypeSize(T) < 32)
      return std::nullopt;
    return linearIndexByMeaning(X->getInit(), AST);
  };
  if (!V->getType()->isDependentType() &&
      !V->getInit()->isInstantiationDependent())
    return Form(V);
  std::vector<const FunctionDecl *> Insts = templateInstantiations(Kernel);
  std::optional<LinearIndex> Common;
  for (const FunctionDecl *I : Insts) {
    auto L = Form(instantiatedVar(V, I));
    if (!L ||
        (Common && (Common->Dim != L->Dim || Common->GridRows != L->GridRows)))
      return std::nullopt;
    Common = L;
  }
  return Common;
}

std::optional<ThreadItem> matchThreadItem(const FunctionDecl *Kernel,
                                          std::string &WhyNot,
                                          const ThreadItemOptions &Opts) {
  const auto *Body = dyn_cast_or_null<CompoundStmt>(Kernel->getBody());
  if (!Body) {
    WhyNot = "the kernel has no body";
    return std::nullopt;
  }
  ThreadItem T;
  auto It = Body->body_begin(), End = Body->body_end();
  for (; It != End; ++It) {
    const auto *DS = dyn_cast<DeclStmt>(*It);
    const VarDecl *V = DS && DS->isSingleDecl()
                           ? dyn_cast<VarDecl>(DS->getSingleDecl())
                           : nullptr;
    if (V && V->getInit() && V->getType()->isIntegerType()) {
      if (auto D = linearIndexDim(V->getInit(), /*ThroughHelpers=*/true)) {
        T.Index = V;
        T.IndexDecl = DS;
        T.Dim = *D;
        ++It;
        break;
      }
    }
    if (V && V->getInit() && Opts.ByMeaning)
      if (auto L = indexByMeaning(V, Kernel)) {
        T.Index = V;
        T.IndexDecl = DS;
        T.Dim = L->Dim;
        T.GridRows = L->GridRows;
        ++It;
        break;
      }
    T.Before.push_back(*It);
  }
  if (!T.Index) {
    WhyNot = Opts.ByMeaning
                 ? "no thread index at the top level of the kernel: expected "
                   "an integer of at least 32 bits holding 'blockIdx.x * "
                   "blockDim.x + threadIdx.x' (in any order, through casts "
                   "or a helper returning it), or '(blockIdx.y * gridDim.x "
                   "+ blockIdx.x) * blockDim.x + threadIdx.x' over a 2D grid"
                 : "no thread index: expected 'int i = blockIdx.x * "
                   "blockDim.x + threadIdx.x;' at the top of the kernel";
    return std::nullopt;
  }
  if (It == End) {
    WhyNot = "the index '" + T.Index->getName().str() +
             "' is not followed by a bounds guard";
    return std::nullopt;
  }
  const auto *If = dyn_cast<IfStmt>(*It);
  if (!If || If->getInit() || If->getConditionVariable()) {
    WhyNot = "the statement after the index '" + T.Index->getName().str() +
             "' is not a bounds guard 'if (" + T.Index->getName().str() +
             " < n)'";
    return std::nullopt;
  }
  T.Guard = If;
  if (const Expr *B = boundOf(If->getCond(), T.Index, /*Negated=*/false)) {
    if (If->getElse() || std::next(It) != End) {
      WhyNot = "statements follow the bounds guard or it has an else branch";
      return std::nullopt;
    }
    T.Bound = B;
    if (const auto *CS = dyn_cast<CompoundStmt>(If->getThen()))
      T.Body.assign(CS->body_begin(), CS->body_end());
    else
      T.Body.push_back(If->getThen());
  } else if (const Expr *B =
                 boundOf(If->getCond(), T.Index, /*Negated=*/true)) {
    const Stmt *Then = If->getThen();
    if (const auto *CS = dyn_cast<CompoundStmt>(Then))
      Then = CS->size() == 1 ? CS->body_front() : nullptr;
    const auto *Ret = dyn_cast_or_null<ReturnStmt>(Then);
    if (!Ret || Ret->getRetValue() || If->getElse()) {
      WhyNot = "the bounds guard does not return";
      return std::nullopt;
    }
    T.Bound = B;
    T.EarlyReturn = true;
    T.Body.assign(std::next(It), End);
  } else {
    WhyNot = "the guard '" + T.Index->getName().str() +
             "' is compared with is not a single 'i < n' bound";
    return std::nullopt;
  }
  if (mentions(T.Bound, T.Index) ||
      llvm::is_contained(writtenDecls(Body), T.Index)) {
    WhyNot = "the index '" + T.Index->getName().str() + "' is written";
    return std::nullopt;
  }
  return T;
}

} // namespace optiml
