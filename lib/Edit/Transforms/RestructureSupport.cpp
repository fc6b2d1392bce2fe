//===- RestructureSupport.cpp - Shapes the restructuring edits share ------===//

#include "RestructureSupport.h"
#include "optiml/Frontend/ASTUtil.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/STLExtras.h"

using namespace clang;
using llvm::StringRef;

namespace optiml {
namespace restructure {

//===--- Text --------------------------------------------------------------===//

std::optional<Span> exprSpan(const EditContext &Ctx, const Stmt *S) {
  if (!S)
    return std::nullopt;
  const SourceManager &SM = Ctx.AST.getSourceManager();
  SourceRange R = S->getSourceRange();
  if (R.getBegin().isMacroID() || R.getEnd().isMacroID())
    return std::nullopt;
  auto FS = fileSpan(SM, Ctx.AST.getLangOpts(), R);
  if (!FS)
    return std::nullopt;
  return Span{FS->Begin.Offset, FS->End.Offset};
}

std::optional<Span> stmtSpan(const EditContext &Ctx, const Stmt *S) {
  auto Sp = exprSpan(Ctx, S);
  if (!Sp)
    return std::nullopt;
  // Statements ending in ';' (also loops and ifs whose body is one) do not
  // include it in their range.
  StringRef Code = Ctx.Code;
  unsigned E = Sp->End;
  if (E > 0 && (Code[E - 1] == ';' || Code[E - 1] == '}'))
    return Sp;
  unsigned P = E;
  while (P < Code.size() && (Code[P] == ' ' || Code[P] == '\t'))
    ++P;
  if (P < Code.size() && Code[P] == ';')
    Sp->End = P + 1;
  return Sp;
}

std::string exprText(const EditContext &Ctx, const Stmt *S) {
  auto Sp = exprSpan(Ctx, S);
  if (!Sp)
    return "";
  return Ctx.Code.substr(Sp->Begin, Sp->End - Sp->Begin).str();
}

std::string splice(StringRef Code, unsigned Begin, unsigned End,
                   std::vector<TextEdit> Edits) {
  std::stable_sort(Edits.begin(), Edits.end(),
                   [](const TextEdit &A, const TextEdit &B) {
                     return A.Offset < B.Offset;
                   });
  std::string Out;
  unsigned Pos = Begin;
  for (const TextEdit &E : Edits) {
    if (E.Offset < Pos || E.Offset + E.Length > End)
      continue; // overlapping: callers never produce these
    Out += Code.substr(Pos, E.Offset - Pos).str();
    Out += E.Text;
    Pos = E.Offset + E.Length;
  }
  Out += Code.substr(Pos, End - Pos).str();
  return Out;
}

std::string indentLines(StringRef Text, StringRef Prefix) {
  std::string Out;
  size_t Start = 0;
  bool First = true;
  while (Start <= Text.size()) {
    size_t NL = Text.find('\n', Start);
    StringRef Line = Text.substr(Start, NL == StringRef::npos
                                            ? StringRef::npos
                                            : NL - Start);
    if (!First && !Line.trim().empty())
      Out += Prefix.str();
    Out += Line.str();
    First = false;
    if (NL == StringRef::npos)
      break;
    Out += "\n";
    Start = NL + 1;
  }
  return Out;
}

std::string freshName(StringRef Code, StringRef Base) {
  auto Free = [&](StringRef N) {
    size_t P = 0;
    while ((P = Code.find(N, P)) != StringRef::npos) {
      bool LeftOk = P == 0 || !(isalnum(Code[P - 1]) || Code[P - 1] == '_');
      size_t E = P + N.size();
      bool RightOk = E >= Code.size() || !(isalnum(Code[E]) || Code[E] == '_');
      if (LeftOk && RightOk)
        return false;
      P = E;
    }
    return true;
  };
  if (Free(Base))
    return Base.str();
  for (unsigned I = 1;; ++I) {
    std::string N = (Base + llvm::Twine(I)).str();
    if (Free(N))
      return N;
  }
}

std::string lineIndent(StringRef Code, unsigned Offset) {
  size_t LineStart = Offset == 0 ? 0 : Code.rfind('\n', Offset - 1);
  LineStart = LineStart == StringRef::npos ? 0 : LineStart + 1;
  if (Offset == 0)
    LineStart = 0;
  size_t E = LineStart;
  while (E < Code.size() && (Code[E] == ' ' || Code[E] == '\t'))
    ++E;
  return Code.substr(LineStart, E - LineStart).str();
}

std::string paren(StringRef Text) {
  Text = Text.trim();
  bool Simple = !Text.empty() && llvm::all_of(Text, [](char C) {
    return isalnum(C) || C == '_' || C == '.';
  });
  if (Simple)
    return Text.str();
  if (Text.starts_with("(") && Text.ends_with(")")) {
    int Depth = 0;
    bool Whole = true;
    for (size_t I = 0; I < Text.size(); ++I) {
      Depth += Text[I] == '(' ? 1 : Text[I] == ')' ? -1 : 0;
      if (Depth == 0 && I + 1 < Text.size()) {
        Whole = false;
        break;
      }
    }
    if (Whole)
      return Text.str();
  }
  return "(" + Text.str() + ")";
}

std::string where(const EditContext &Ctx, const Stmt *S) {
  const SourceManager &SM = Ctx.AST.getSourceManager();
  SourcePos P = filePos(SM, SM.getExpansionLoc(S->getBeginLoc()));
  return std::to_string(P.Line) + ":" + std::to_string(P.Column);
}

//===--- Expressions -------------------------------------------------------===//

const Expr *stripCasts(const Expr *E) {
  while (E) {
    const Expr *N = E->IgnoreParenImpCasts();
    if (const auto *C = dyn_cast<ExplicitCastExpr>(N))
      N = C->getSubExpr();
    if (N == E)
      return E;
    E = N;
  }
  return E;
}

const ValueDecl *declOf(const Expr *E) {
  if (const auto *D = dyn_cast_or_null<DeclRefExpr>(stripCasts(E)))
    return D->getDecl();
  return nullptr;
}

namespace {
template <class F> void forEachStmt(const Stmt *S, F Fn) {
  if (!S)
    return;
  Fn(S);
  for (const Stmt *C : S->children())
    forEachStmt(C, Fn);
}
} // namespace

bool mentions(const Stmt *S, const ValueDecl *D) {
  bool Found = false;
  forEachStmt(S, [&](const Stmt *N) {
    if (const auto *R = dyn_cast<DeclRefExpr>(N))
      Found |= R->getDecl() == D;
  });
  return Found;
}

bool mentionsBuiltin(const Stmt *S, StringRef Var) {
  bool Found = false;
  forEachStmt(S, [&](const Stmt *N) {
    if (const auto *E = dyn_cast<Expr>(N))
      if (auto B = asBuiltinVar(E))
        Found |= Var.empty() || B->Var == Var;
  });
  return Found;
}

static std::optional<BuiltinVarRef> builtin(const Expr *E) {
  return asBuiltinVar(E->IgnoreParenImpCasts());
}

std::optional<char> linearIndexDim(const Expr *E) {
  E = stripCasts(E);
  if (const auto *Call = dyn_cast<CallExpr>(E)) {
    const FunctionDecl *FD = Call->getDirectCallee();
    if (!FD || Call->getNumArgs() != 0 || !FD->hasBody())
      return std::nullopt;
    const auto *Body = dyn_cast<CompoundStmt>(FD->getBody());
    if (!Body || Body->size() != 1)
      return std::nullopt;
    const auto *Ret = dyn_cast<ReturnStmt>(Body->body_front());
    if (!Ret || !Ret->getRetValue())
      return std::nullopt;
    return linearIndexDim(Ret->getRetValue());
  }
  const auto *Add = dyn_cast<BinaryOperator>(E);
  if (!Add || Add->getOpcode() != BO_Add)
    return std::nullopt;
  for (int Side = 0; Side < 2; ++Side) {
    const Expr *T = stripCasts(Side ? Add->getLHS() : Add->getRHS());
    const Expr *M = stripCasts(Side ? Add->getRHS() : Add->getLHS());
    auto TB = builtin(T);
    const auto *Mul = dyn_cast<BinaryOperator>(M);
    if (!TB || TB->Var != "threadIdx" || !Mul || Mul->getOpcode() != BO_Mul)
      continue;
    auto A = builtin(stripCasts(Mul->getLHS()));
    auto B = builtin(stripCasts(Mul->getRHS()));
    if (!A || !B || A->Dim != TB->Dim || B->Dim != TB->Dim)
      continue;
    if ((A->Var == "blockIdx" && B->Var == "blockDim") ||
        (A->Var == "blockDim" && B->Var == "blockIdx"))
      return TB->Dim;
  }
  return std::nullopt;
}

static bool uniformImpl(const Expr *E, const FunctionDecl *K, unsigned Depth) {
  if (Depth > 16)
    return false;
  bool Ok = true;
  forEachStmt(E, [&](const Stmt *N) {
    if (!Ok)
      return;
    if (const auto *X = dyn_cast<Expr>(N)) {
      if (auto B = asBuiltinVar(X)) {
        Ok = B->Var == "blockIdx" || B->Var == "blockDim" ||
             B->Var == "gridDim";
        return;
      }
    }
    if (isa<CallExpr>(N) && !isa<CXXConstructExpr>(N)) {
      const auto *C = cast<CallExpr>(N);
      const FunctionDecl *FD = C->getDirectCallee();
      Ok = FD && isMathFunction(FD->getName());
      return;
    }
    if (const auto *R = dyn_cast<DeclRefExpr>(N)) {
      const auto *V = dyn_cast<VarDecl>(R->getDecl());
      if (!V || isa<ParmVarDecl>(V))
        return;
      if (!V->isLocalVarDecl()) {
        Ok = V->getType().isConstQualified() || V->isConstexpr();
        return;
      }
      if (!V->getInit() || llvm::is_contained(writtenDecls(K->getBody()), V)) {
        Ok = false;
        return;
      }
      Ok = uniformImpl(V->getInit(), K, Depth + 1);
    }
    // Loads from memory may differ between calls, but not between threads
    // reading the same address; an address is uniform when its parts are.
  });
  return Ok;
}

bool isBlockUniform(const Expr *E, const FunctionDecl *Kernel) {
  return uniformImpl(E, Kernel, 0);
}

std::optional<int64_t> intValue(const Expr *E, const ASTContext &AST) {
  if (!E || E->isValueDependent() || E->isTypeDependent())
    return std::nullopt;
  if (auto V = E->getIntegerConstantExpr(AST))
    return V->getExtValue();
  return std::nullopt;
}

std::vector<const ValueDecl *> writtenDecls(const Stmt *S) {
  std::vector<const ValueDecl *> Out;
  auto Add = [&](const Expr *E) {
    if (const ValueDecl *D = declOf(E))
      if (!llvm::is_contained(Out, D))
        Out.push_back(D);
  };
  forEachStmt(S, [&](const Stmt *N) {
    if (const auto *B = dyn_cast<BinaryOperator>(N)) {
      if (B->isAssignmentOp())
        Add(B->getLHS());
    } else if (const auto *U = dyn_cast<UnaryOperator>(N)) {
      if (U->isIncrementDecrementOp() || U->getOpcode() == UO_AddrOf)
        Add(U->getSubExpr());
    } else if (const auto *C = dyn_cast<CXXOperatorCallExpr>(N)) {
      if (C->isAssignmentOp() && C->getNumArgs() > 0)
        Add(C->getArg(0));
    }
  });
  return Out;
}

static void addWrite(std::vector<MemWrite> &Out, const Expr *LHS) {
  const Expr *L = LHS->IgnoreParens();
  if (const auto *A = dyn_cast<ArraySubscriptExpr>(L)) {
    Out.push_back({A, A->getBase()->IgnoreParenImpCasts(), A->getIdx()});
  } else if (const auto *U = dyn_cast<UnaryOperator>(L)) {
    if (U->getOpcode() == UO_Deref)
      Out.push_back({U, U->getSubExpr()->IgnoreParenImpCasts(), nullptr});
  } else if (const auto *M = dyn_cast<MemberExpr>(L)) {
    addWrite(Out, M->getBase());
  }
}

std::vector<MemWrite> memoryWrites(const Stmt *S) {
  std::vector<MemWrite> Out;
  forEachStmt(S, [&](const Stmt *N) {
    if (const auto *B = dyn_cast<BinaryOperator>(N)) {
      if (B->isAssignmentOp())
        addWrite(Out, B->getLHS());
    } else if (const auto *U = dyn_cast<UnaryOperator>(N)) {
      if (U->isIncrementDecrementOp())
        addWrite(Out, U->getSubExpr());
    }
  });
  return Out;
}

const Stmt *opaqueCall(const Stmt *S) {
  const Stmt *Found = nullptr;
  forEachStmt(S, [&](const Stmt *N) {
    const auto *C = dyn_cast<CallExpr>(N);
    if (Found || !C || isa<CXXOperatorCallExpr>(C))
      return;
    const FunctionDecl *FD = C->getDirectCallee();
    StringRef Name = FD && FD->getIdentifier() ? FD->getName() : "";
    if (isMathFunction(Name) || Name.starts_with("atomic") ||
        Name.starts_with("__shfl") || Name.starts_with("__ldg") ||
        Name == "__syncthreads" || Name == "__syncwarp")
      return;
    for (const Expr *A : C->arguments()) {
      QualType T = A->IgnoreParenImpCasts()->getType();
      if (T->isPointerType() || T->isReferenceType() || T->isArrayType())
        Found = C;
    }
    if (FD)
      for (const ParmVarDecl *P : FD->parameters())
        if (P->getType()->isReferenceType() &&
            !P->getType().getNonReferenceType().isConstQualified())
          Found = C;
  });
  return Found;
}

static const Stmt *jumpImpl(const Stmt *S, bool InLoop) {
  if (!S)
    return nullptr;
  if (isa<ReturnStmt, GotoStmt>(S))
    return S;
  if (!InLoop && isa<BreakStmt, ContinueStmt>(S))
    return S;
  bool Loop = isa<ForStmt, WhileStmt, DoStmt, CXXForRangeStmt>(S);
  if (isa<SwitchStmt>(S)) {
    // `break` leaves the switch only.
    for (const Stmt *C : S->children()) {
      if (const Stmt *J = jumpImpl(C, true))
        if (!isa<BreakStmt>(J) || !InLoop)
          if (isa<ReturnStmt, GotoStmt>(J) || !InLoop)
            return isa<BreakStmt>(J) ? nullptr : J;
    }
    return nullptr;
  }
  for (const Stmt *C : S->children())
    if (const Stmt *J = jumpImpl(C, InLoop || Loop))
      return J;
  return nullptr;
}

const Stmt *firstJump(const Stmt *S) {
  // S itself is the region: a loop's own break/continue stay inside it.
  bool Loop = isa<ForStmt, WhileStmt, DoStmt, CXXForRangeStmt>(S);
  for (const Stmt *C : S->children())
    if (const Stmt *J = jumpImpl(C, Loop))
      return J;
  return isa<ReturnStmt, GotoStmt>(S) ? S : nullptr;
}

//===--- The one-item-per-thread shape -------------------------------------===//

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

std::optional<ThreadItem> matchThreadItem(const FunctionDecl *Kernel,
                                          std::string &WhyNot) {
  const auto *Body = dyn_cast_or_null<CompoundStmt>(Kernel->getBody());
  if (!Body) {
    WhyNot = "the kernel has no body";
    return std::nullopt;
  }
  ThreadItem T;
  auto It = Body->body_begin(), End = Body->body_end();
  for (; It != End; ++It) {
    const auto *DS = dyn_cast<DeclStmt>(*It);
    const VarDecl *V =
        DS && DS->isSingleDecl() ? dyn_cast<VarDecl>(DS->getSingleDecl())
                                 : nullptr;
    if (V && V->getInit() && V->getType()->isIntegerType()) {
      if (auto D = linearIndexDim(V->getInit())) {
        T.Index = V;
        T.IndexDecl = DS;
        T.Dim = *D;
        ++It;
        break;
      }
    }
    T.Before.push_back(*It);
  }
  if (!T.Index) {
    WhyNot = "no thread index: expected 'int i = blockIdx.x * blockDim.x + "
             "threadIdx.x;' at the top of the kernel";
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
  if (mentions(T.Bound, T.Index) || llvm::is_contained(
                                        writtenDecls(Body), T.Index)) {
    WhyNot = "the index '" + T.Index->getName().str() + "' is written";
    return std::nullopt;
  }
  return T;
}

//===--- Launch sites ------------------------------------------------------===//

namespace {
struct LaunchFinder : RecursiveASTVisitor<LaunchFinder> {
  const SourceManager &SM;
  unsigned Offset;
  const CUDAKernelCallExpr *Found = nullptr;
  bool shouldVisitTemplateInstantiations() const { return false; }
  bool VisitCUDAKernelCallExpr(CUDAKernelCallExpr *E) {
    SourceLocation L = SM.getExpansionLoc(E->getBeginLoc());
    if (SM.isInMainFile(L) && SM.getFileOffset(L) == Offset && !Found)
      Found = E;
    return true;
  }
};
} // namespace

const CUDAKernelCallExpr *findLaunch(const EditContext &Ctx,
                                     const LaunchSite &L) {
  LaunchFinder F{{}, Ctx.AST.getSourceManager(), L.Range.Begin.Offset, nullptr};
  F.TraverseDecl(Ctx.AST.getTranslationUnitDecl());
  return F.Found;
}

std::optional<std::string> boundAtLaunch(const EditContext &Ctx,
                                         const Expr *Bound,
                                         const LaunchSite &L,
                                         std::string &WhyNot) {
  if (const auto *P = dyn_cast_or_null<ParmVarDecl>(declOf(Bound))) {
    unsigned I = P->getFunctionScopeIndex();
    if (I >= L.Args.size()) {
      WhyNot = L.Id + " passes no argument for '" + P->getName().str() + "'";
      return std::nullopt;
    }
    return L.Args[I];
  }
  if (intValue(Bound, Ctx.AST))
    return exprText(Ctx, Bound);
  WhyNot = "the bound '" + exprText(Ctx, Bound) +
           "' is neither a kernel parameter nor a constant, so the launch "
           "cannot size the grid from it";
  return std::nullopt;
}

std::string launchProblem(const KernelInfo &K) {
  for (const LaunchSite &L : K.Launches)
    if (L.InMacro)
      return L.Id + " is written inside a macro; its grid cannot be rewritten";
  return "";
}

std::string cappedGrid(StringRef Grid, int64_t Max) {
  int64_t Literal;
  if (!Grid.trim().getAsInteger(10, Literal))
    return std::to_string(std::min(Literal, Max));
  std::string G = paren(Grid), M = std::to_string(Max);
  return G + " < " + M + " ? " + G + " : " + M;
}

bool gridIsInteger(const EditContext &Ctx, const LaunchSite &L) {
  if (StringRef(L.Grid).contains("dim3"))
    return false;
  const CUDAKernelCallExpr *C = findLaunch(Ctx, L);
  if (!C || !C->getConfig() || C->getConfig()->getNumArgs() < 1)
    return false;
  const Expr *G = C->getConfig()->getArg(0)->IgnoreImplicit();
  if (const auto *CE = dyn_cast<CXXConstructExpr>(G))
    if (CE->getNumArgs() >= 1 && !CE->getArg(0)->isDefaultArgument() &&
        CE->getArg(0)->getType()->isIntegerType() &&
        (CE->getNumArgs() < 2 || CE->getArg(1)->isDefaultArgument()))
      G = CE->getArg(0);
  return G->IgnoreParenImpCasts()->getType()->isIntegerType();
}

} // namespace restructure
} // namespace optiml
