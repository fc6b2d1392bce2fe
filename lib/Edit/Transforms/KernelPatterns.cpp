//===- KernelPatterns.cpp - Kernel shapes the restructuring edits share ---===//

#include "KernelPatterns.h"
#include "../CatalogInternal.h"
#include "optiml/Frontend/ASTUtil.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"
#include <algorithm>

using namespace clang;
using namespace llvm;

namespace optiml {

//===--- Text --------------------------------------------------------------===//

std::string spliceText(StringRef Code, unsigned Begin, unsigned End,
                       std::vector<TextEdit> Edits) {
  llvm::sort(Edits, [](const TextEdit &A, const TextEdit &B) {
    return A.Offset < B.Offset;
  });
  std::string Out;
  unsigned Pos = Begin;
  for (const TextEdit &T : Edits) {
    if (T.Offset < Pos || T.Offset + T.Length > End)
      continue; // overlapping or outside: callers never produce these
    Out += Code.slice(Pos, T.Offset).str();
    Out += T.Text;
    Pos = T.Offset + T.Length;
  }
  Out += Code.slice(Pos, End).str();
  return Out;
}

static std::optional<SourceSpan> exprSpan(const EditContext &Ctx,
                                          const Stmt *S) {
  return fileSpan(Ctx.AST.getSourceManager(), Ctx.AST.getLangOpts(),
                  S->getSourceRange());
}

std::optional<SourceSpan> stmtSpan(const EditContext &Ctx, const Stmt *S) {
  if (containsMacro(S))
    return std::nullopt;
  auto Span = exprSpan(Ctx, S);
  if (!Span)
    return std::nullopt;
  if (isa<CompoundStmt>(S) || isa<DeclStmt>(S) || isa<NullStmt>(S))
    return Span;
  // A statement's source range stops before its `;`.
  unsigned P = Span->End.Offset;
  while (P < Ctx.Code.size() && (Ctx.Code[P] == ' ' || Ctx.Code[P] == '\t'))
    ++P;
  if (P < Ctx.Code.size() && Ctx.Code[P] == ';') {
    Span->End.Column += P + 1 - Span->End.Offset;
    Span->End.Offset = P + 1;
  }
  return Span;
}

std::string exprText(const EditContext &Ctx, const Expr *E) {
  auto Span = exprSpan(Ctx, E);
  if (!Span || containsMacro(E))
    return "";
  return Ctx.Code.slice(Span->Begin.Offset, Span->End.Offset).str();
}

std::string stmtText(const EditContext &Ctx, const Stmt *S) {
  auto Span = stmtSpan(Ctx, S);
  if (!Span)
    return "";
  return Ctx.Code.slice(Span->Begin.Offset, Span->End.Offset).str();
}

bool containsMacro(const Stmt *S) {
  if (!S)
    return false;
  // `__shared__ float s[256];`: attribute macros in declarations are not
  // rewritten; their initializers are what matter.
  if (const auto *DS = dyn_cast<DeclStmt>(S)) {
    for (const Decl *D : DS->decls())
      if (const auto *VD = dyn_cast<VarDecl>(D))
        if (VD->getLocation().isMacroID() ||
            (VD->hasInit() && containsMacro(VD->getInit())))
          return true;
    return false;
  }
  if (S->getBeginLoc().isMacroID() || S->getEndLoc().isMacroID())
    return true;
  for (const Stmt *C : S->children())
    if (containsMacro(C))
      return true;
  return false;
}

std::string parenthesize(StringRef Text) {
  Text = Text.trim();
  bool Simple = !Text.empty() && llvm::all_of(Text, [](char C) {
    return isAlnum(C) || C == '_' || C == '.';
  });
  if (Simple)
    return Text.str();
  if (Text.starts_with("(") && Text.ends_with(")")) {
    // Parenthesized as a whole only if the first '(' closes at the end.
    int Depth = 0;
    for (size_t I = 0; I < Text.size(); ++I) {
      if (Text[I] == '(')
        ++Depth;
      else if (Text[I] == ')' && --Depth == 0)
        return I + 1 == Text.size() ? Text.str() : "(" + Text.str() + ")";
    }
  }
  return "(" + Text.str() + ")";
}

std::string reindent(StringRef Text, int Delta) {
  if (Delta == 0)
    return Text.str();
  SmallVector<StringRef, 16> Lines;
  Text.split(Lines, '\n');
  std::string Out;
  for (size_t I = 0; I < Lines.size(); ++I) {
    StringRef L = Lines[I];
    if (I > 0) {
      Out += '\n';
      if (L.trim().empty()) {
        continue;
      } else if (Delta > 0) {
        Out += std::string(Delta, ' ');
      } else {
        size_t Drop = 0;
        while (Drop < L.size() && Drop < size_t(-Delta) && L[Drop] == ' ')
          ++Drop;
        L = L.drop_front(Drop);
      }
    }
    Out += L.str();
  }
  return Out;
}

static bool hasIdentifier(StringRef Code, StringRef Name) {
  size_t Pos = 0;
  while ((Pos = Code.find(Name, Pos)) != StringRef::npos) {
    bool Before = Pos > 0 && (isAlnum(Code[Pos - 1]) || Code[Pos - 1] == '_');
    size_t After = Pos + Name.size();
    bool AfterId =
        After < Code.size() && (isAlnum(Code[After]) || Code[After] == '_');
    if (!Before && !AfterId)
      return true;
    Pos = After;
  }
  return false;
}

std::string freshName(StringRef Code, StringRef Base) {
  if (!hasIdentifier(Code, Base))
    return Base.str();
  for (unsigned N = 1;; ++N) {
    std::string Name = (Base + Twine(N)).str();
    if (!hasIdentifier(Code, Name))
      return Name;
  }
}

//===--- Expressions -------------------------------------------------------===//

static bool isBuiltin(const Expr *E, StringRef Var, char Dim) {
  auto B = asBuiltinVar(E ? E->IgnoreParenCasts() : nullptr);
  return B && B->Var == Var && B->Dim == Dim;
}

std::optional<char> linearIndexDim(const Expr *E) {
  if (!E)
    return std::nullopt;
  const auto *Add = dyn_cast<BinaryOperator>(E->IgnoreParenCasts());
  if (!Add || Add->getOpcode() != BO_Add)
    return std::nullopt;
  for (int Swap = 0; Swap < 2; ++Swap) {
    const Expr *MulE = Swap ? Add->getRHS() : Add->getLHS();
    const Expr *TidE = Swap ? Add->getLHS() : Add->getRHS();
    const auto *Mul = dyn_cast<BinaryOperator>(MulE->IgnoreParenCasts());
    if (!Mul || Mul->getOpcode() != BO_Mul)
      continue;
    auto T = asBuiltinVar(TidE->IgnoreParenCasts());
    if (!T || T->Var != "threadIdx")
      continue;
    char D = T->Dim;
    if ((isBuiltin(Mul->getLHS(), "blockIdx", D) &&
         isBuiltin(Mul->getRHS(), "blockDim", D)) ||
        (isBuiltin(Mul->getLHS(), "blockDim", D) &&
         isBuiltin(Mul->getRHS(), "blockIdx", D)))
      return D;
  }
  return std::nullopt;
}

const ValueDecl *referencedDecl(const Expr *E) {
  if (!E)
    return nullptr;
  if (const auto *DR = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts()))
    return DR->getDecl();
  return nullptr;
}

bool refersTo(const Expr *E, const ValueDecl *D) {
  return D && referencedDecl(E) == D;
}

bool mentions(const Stmt *S, const ValueDecl *D) {
  if (!S)
    return false;
  if (const auto *DR = dyn_cast<DeclRefExpr>(S))
    if (DR->getDecl() == D)
      return true;
  if (const auto *DS = dyn_cast<DeclStmt>(S))
    for (const Decl *X : DS->decls())
      if (const auto *VD = dyn_cast<VarDecl>(X))
        if (VD->hasInit() && mentions(VD->getInit(), D))
          return true;
  for (const Stmt *C : S->children())
    if (mentions(C, D))
      return true;
  return false;
}

bool mentionsBuiltin(const Stmt *S, StringRef Var) {
  if (!S)
    return false;
  if (const auto *E = dyn_cast<Expr>(S))
    if (auto B = asBuiltinVar(E))
      return Var.empty() || B->Var == Var;
  if (const auto *DS = dyn_cast<DeclStmt>(S))
    for (const Decl *X : DS->decls())
      if (const auto *VD = dyn_cast<VarDecl>(X))
        if (VD->hasInit() && mentionsBuiltin(VD->getInit(), Var))
          return true;
  for (const Stmt *C : S->children())
    if (mentionsBuiltin(C, Var))
      return true;
  return false;
}

bool isThreadCall(StringRef Name) {
  return Name.starts_with("__sync") || Name.starts_with("__threadfence") ||
         Name.starts_with("atomic") || Name.starts_with("__shfl") ||
         Name.starts_with("__ballot") || Name.starts_with("__any") ||
         Name.starts_with("__all") || Name == "__activemask" ||
         Name.starts_with("__reduce_") || Name.starts_with("__match_");
}

bool callsFunction(const Stmt *S, StringRef Prefix) {
  if (!S)
    return false;
  if (const auto *C = dyn_cast<CallExpr>(S))
    if (const FunctionDecl *FD = C->getDirectCallee())
      if (FD->getDeclName().isIdentifier() &&
          FD->getName().starts_with(Prefix))
        return true;
  if (const auto *DS = dyn_cast<DeclStmt>(S))
    for (const Decl *X : DS->decls())
      if (const auto *VD = dyn_cast<VarDecl>(X))
        if (VD->hasInit() && callsFunction(VD->getInit(), Prefix))
          return true;
  for (const Stmt *C : S->children())
    if (callsFunction(C, Prefix))
      return true;
  return false;
}

namespace {
struct WriteFinder : RecursiveASTVisitor<WriteFinder> {
  DenseSet<const ValueDecl *> Written;
  static const ValueDecl *root(const Expr *E) {
    E = E->IgnoreParenImpCasts();
    while (const auto *ME = dyn_cast<MemberExpr>(E))
      E = ME->getBase()->IgnoreParenImpCasts();
    return referencedDecl(E);
  }
  void note(const Expr *E) {
    if (const ValueDecl *D = root(E))
      Written.insert(D);
  }
  bool VisitBinaryOperator(BinaryOperator *B) {
    if (B->isAssignmentOp())
      note(B->getLHS());
    return true;
  }
  bool VisitUnaryOperator(UnaryOperator *U) {
    if (U->isIncrementDecrementOp() || U->getOpcode() == UO_AddrOf)
      note(U->getSubExpr());
    return true;
  }
  bool VisitCallExpr(CallExpr *C) {
    const FunctionDecl *FD = C->getDirectCallee();
    if (!FD)
      return true;
    for (unsigned I = 0; I < C->getNumArgs() && I < FD->getNumParams(); ++I) {
      QualType T = FD->getParamDecl(I)->getType();
      if (T->isReferenceType() && !T.getNonReferenceType().isConstQualified())
        note(C->getArg(I));
    }
    return true;
  }
};
} // namespace

DenseSet<const ValueDecl *> writtenVars(const Stmt *S) {
  WriteFinder F;
  F.TraverseStmt(const_cast<Stmt *>(S));
  return std::move(F.Written);
}

static Variance join(Variance A, Variance B) {
  A.X |= B.X;
  A.Y |= B.Y;
  A.Z |= B.Z;
  A.Unknown |= B.Unknown;
  return A;
}

static Variance varianceOf(const Expr *E, const DenseSet<const ValueDecl *> &W,
                           SmallPtrSetImpl<const VarDecl *> &Visiting) {
  Variance V;
  if (!E)
    return V;
  E = E->IgnoreParenImpCasts();
  if (auto B = asBuiltinVar(E)) {
    if (B->Var == "threadIdx") {
      V.X = B->Dim == 'x';
      V.Y = B->Dim == 'y';
      V.Z = B->Dim == 'z';
    }
    return V;
  }
  if (const auto *DR = dyn_cast<DeclRefExpr>(E)) {
    const ValueDecl *D = DR->getDecl();
    if (isa<EnumConstantDecl>(D) || isa<FunctionDecl>(D))
      return V;
    const auto *VD = dyn_cast<VarDecl>(D);
    if (!VD || W.contains(VD)) {
      V.Unknown = true;
      return V;
    }
    if (isa<ParmVarDecl>(VD))
      return V;
    if (!VD->isLocalVarDecl()) {
      V.Unknown = !VD->getType().isConstQualified() &&
                  !VD->hasAttr<CUDAConstantAttr>();
      return V;
    }
    if (VD->hasAttr<CUDASharedAttr>() || !VD->hasInit() ||
        !Visiting.insert(VD).second) {
      V.Unknown = true;
      return V;
    }
    V = varianceOf(VD->getInit(), W, Visiting);
    Visiting.erase(VD);
    return V;
  }
  if (isa<ArraySubscriptExpr>(E) || isa<CXXMemberCallExpr>(E)) {
    V.Unknown = true;
    return V;
  }
  // &p[i] is an address, not a load.
  if (const auto *U = dyn_cast<UnaryOperator>(E); U && U->getOpcode() == UO_AddrOf)
    if (const auto *A =
            dyn_cast<ArraySubscriptExpr>(U->getSubExpr()->IgnoreParens()))
      return join(varianceOf(A->getBase(), W, Visiting),
                  varianceOf(A->getIdx(), W, Visiting));
  if (const auto *U = dyn_cast<UnaryOperator>(E);
      U && (U->getOpcode() == UO_Deref || U->isIncrementDecrementOp())) {
    V.Unknown = true;
    return V;
  }
  if (const auto *C = dyn_cast<CallExpr>(E)) {
    const FunctionDecl *FD = C->getDirectCallee();
    if (!FD || !FD->getDeclName().isIdentifier() ||
        !isMathFunction(FD->getName())) {
      V.Unknown = true;
      return V;
    }
    for (const Expr *A : C->arguments())
      V = join(V, varianceOf(A, W, Visiting));
    return V;
  }
  for (const Stmt *C : E->children())
    if (const auto *CE = dyn_cast_or_null<Expr>(C))
      V = join(V, varianceOf(CE, W, Visiting));
  return V;
}

Variance threadVariance(const Expr *E, const FunctionDecl *Kernel) {
  DenseSet<const ValueDecl *> W = writtenVars(Kernel->getBody());
  SmallPtrSet<const VarDecl *, 8> Visiting;
  return varianceOf(E, W, Visiting);
}

//===--- The map shape -----------------------------------------------------===//

static std::string typeText(const VarDecl *VD) {
  PrintingPolicy PP(VD->getASTContext().getLangOpts());
  PP.SuppressTagKeyword = true;
  return VD->getType().getUnqualifiedType().getAsString(PP);
}

std::optional<MapPattern> matchMapPattern(const EditContext &Ctx,
                                          const FunctionDecl *Kernel,
                                          std::string &WhyNot) {
  const auto *Body = dyn_cast_or_null<CompoundStmt>(Kernel->getBody());
  if (!Body) {
    WhyNot = "the kernel has no body";
    return std::nullopt;
  }
  SmallVector<const Stmt *, 16> Stmts(Body->body_begin(), Body->body_end());
  MapPattern P;
  size_t DeclAt = Stmts.size();
  for (size_t I = 0; I < Stmts.size(); ++I) {
    const auto *DS = dyn_cast<DeclStmt>(Stmts[I]);
    if (!DS || !DS->isSingleDecl())
      continue;
    const auto *VD = dyn_cast<VarDecl>(DS->getSingleDecl());
    if (!VD || !VD->hasInit() || !VD->getType()->isIntegerType())
      continue;
    if (auto D = linearIndexDim(VD->getInit()); D && *D == 'x') {
      P.Index = VD;
      P.IndexDecl = DS;
      DeclAt = I;
      break;
    }
  }
  if (!P.Index) {
    WhyNot = "no index of the form 'i = blockIdx.x * blockDim.x + "
             "threadIdx.x' at the top level of the kernel body";
    return std::nullopt;
  }
  P.IndexName = P.Index->getNameAsString();
  P.IndexType = typeText(P.Index);
  // The type as written ("unsigned", "size_t"), without const.
  {
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
        P.IndexType = Kept;
    }
  }
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
    WhyNot = "the index '" + P.IndexName +
             "' is not followed at once by a bounds guard 'if (" +
             P.IndexName + " < n)' (found '" +
             StringRef(stmtText(Ctx, Stmts[DeclAt + 1])).split('\n').first.str() +
             "')";
    return std::nullopt;
  }
  P.Guard = If;
  const auto *Cond = dyn_cast<BinaryOperator>(If->getCond()->IgnoreParenImpCasts());
  std::string CondText = exprText(Ctx, If->getCond());
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
  P.BoundText = exprText(Ctx, Bound);
  if (!threadVariance(Bound, Kernel).uniform())
    return Bad("bounds the index with a value that is not the same for "
               "every thread");
  if (containsMacro(If))
    return Bad("is written with a macro");
  for (const Stmt *S : P.Body)
    if (containsMacro(S)) {
      WhyNot = "the guarded body uses a macro";
      return std::nullopt;
    }
  auto DeclSpan = stmtSpan(Ctx, P.IndexDecl);
  auto IfSpan = stmtSpan(Ctx, If);
  if (!DeclSpan || !IfSpan) {
    WhyNot = "the kernel's index or guard has no place in the file";
    return std::nullopt;
  }
  P.RegionBegin = DeclSpan->Begin.Offset;
  P.Indent = indentationAt(Ctx.Code, P.RegionBegin);
  if (P.EarlyReturn) {
    auto First = stmtSpan(Ctx, P.Body.front());
    auto Last = stmtSpan(Ctx, P.Body.back());
    if (!First || !Last) {
      WhyNot = "the guarded body has no place in the file";
      return std::nullopt;
    }
    P.BodyBegin = First->Begin.Offset;
    P.BodyEnd = Last->End.Offset;
    P.RegionEnd = P.BodyEnd;
    std::string Inner = Ctx.Code.slice(P.BodyBegin, P.BodyEnd).str();
    P.BodyBlock = "{\n" + P.Indent + "  " + reindent(Inner, 2) + "\n" +
                  P.Indent + "}";
  } else {
    auto ThenSpan = stmtSpan(Ctx, Then);
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
          Ctx.Code.rfind('\n', P.BodyBegin) >
              Ctx.Code.rfind(')', P.BodyBegin);
      (void)OwnLine;
      P.BodyBlock = "{\n" + P.Indent + "  " +
                    reindent(Inner, int(P.Indent.size() + 2) -
                                        int(ThenIndent.size())) +
                    "\n" + P.Indent + "}";
    }
  }
  return P;
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
  if (F.Return)
    return "the body returns early";
  if (F.Shared)
    return "the body uses shared memory";
  return "";
}

//===--- Launch sites ------------------------------------------------------===//

const CUDAKernelCallExpr *findLaunchCall(const EditContext &Ctx,
                                         const LaunchSite &L) {
  struct Finder : RecursiveASTVisitor<Finder> {
    const SourceManager &SM;
    unsigned Offset;
    const CUDAKernelCallExpr *Found = nullptr;
    Finder(const SourceManager &SM, unsigned Offset)
        : SM(SM), Offset(Offset) {}
    bool VisitCUDAKernelCallExpr(CUDAKernelCallExpr *K) {
      SourceLocation Loc = SM.getExpansionLoc(K->getBeginLoc());
      if (SM.isInMainFile(Loc) && SM.getFileOffset(Loc) == Offset && !Found)
        Found = K;
      return !Found;
    }
  };
  Finder F(Ctx.AST.getSourceManager(), L.Range.Begin.Offset);
  F.TraverseDecl(Ctx.AST.getTranslationUnitDecl());
  return F.Found;
}

/// The expression a dim3 config argument was built from: the integer in
/// `g` (implicitly converted) or in `dim3(g)` / `dim3(g, 1)` / `dim3(g, 1, 1)`.
static const Expr *dim3X(const Expr *A, const ASTContext &AST, bool &Is1D) {
  Is1D = false;
  A = A->IgnoreParenImpCasts();
  if (const auto *M = dyn_cast<MaterializeTemporaryExpr>(A))
    A = M->getSubExpr()->IgnoreParenImpCasts();
  if (const auto *B = dyn_cast<CXXBindTemporaryExpr>(A))
    A = B->getSubExpr()->IgnoreParenImpCasts();
  if (const auto *FC = dyn_cast<CXXFunctionalCastExpr>(A))
    A = FC->getSubExpr()->IgnoreParenImpCasts();
  if (A->getType()->isIntegerType()) {
    Is1D = true;
    return A;
  }
  const auto *CE = dyn_cast<CXXConstructExpr>(A);
  if (!CE || CE->getNumArgs() == 0)
    return nullptr;
  const Expr *X = CE->getArg(0)->IgnoreParenImpCasts();
  if (!X->getType()->isIntegerType())
    return nullptr;
  Is1D = true;
  for (unsigned I = 1; I < CE->getNumArgs(); ++I) {
    const Expr *D = CE->getArg(I);
    if (isa<CXXDefaultArgExpr>(D))
      continue;
    auto V = intValue(D->IgnoreParenImpCasts(), AST);
    if (!V || *V != 1)
      Is1D = false;
  }
  return X;
}

std::optional<GridExpr> grid1D(const EditContext &Ctx, const LaunchSite &L,
                               std::string &WhyNot) {
  if (L.InMacro) {
    WhyNot = "launch " + L.Id + " is written inside a macro";
    return std::nullopt;
  }
  const CUDAKernelCallExpr *K = findLaunchCall(Ctx, L);
  if (!K || !K->getConfig() || K->getConfig()->getNumArgs() < 1) {
    WhyNot = "launch " + L.Id + " was not found in the AST";
    return std::nullopt;
  }
  bool Is1D = false;
  const Expr *X = dim3X(K->getConfig()->getArg(0), Ctx.AST, Is1D);
  if (!X || !Is1D) {
    WhyNot = "the grid of " + L.Id + " ('" + L.Grid +
             "') is not a one-dimensional integer expression";
    return std::nullopt;
  }
  auto Span = exprSpan(Ctx, X);
  if (!Span || isa<CXXDefaultArgExpr>(X) || containsMacro(X)) {
    WhyNot = "the grid of " + L.Id + " cannot be rewritten in place";
    return std::nullopt;
  }
  GridExpr G;
  G.E = X;
  G.Span = *Span;
  G.Text = Ctx.Code.slice(Span->Begin.Offset, Span->End.Offset).str();
  return G;
}

std::optional<int64_t> intValue(const Expr *E, const ASTContext &AST) {
  if (!E || E->isValueDependent() || E->isTypeDependent())
    return std::nullopt;
  Expr::EvalResult R;
  if (E->EvaluateAsInt(R, AST))
    return R.Val.getInt().getExtValue();
  return std::nullopt;
}

std::optional<CeilDiv> matchCeilDiv(const Expr *E) {
  const auto *Div = dyn_cast<BinaryOperator>(E->IgnoreParenImpCasts());
  if (!Div || Div->getOpcode() != BO_Div)
    return std::nullopt;
  const auto *DL = dyn_cast<IntegerLiteral>(Div->getRHS()->IgnoreParenImpCasts());
  if (!DL)
    return std::nullopt;
  int64_t B = DL->getValue().getSExtValue();
  auto Lit = [](const Expr *X) -> std::optional<int64_t> {
    if (const auto *IL = dyn_cast<IntegerLiteral>(X->IgnoreParenImpCasts()))
      return IL->getValue().getSExtValue();
    return std::nullopt;
  };
  const auto *Num = dyn_cast<BinaryOperator>(Div->getLHS()->IgnoreParenImpCasts());
  if (!Num)
    return std::nullopt;
  CeilDiv C;
  C.Divisor = B;
  C.DivisorExpr = Div->getRHS();
  // (E + B - 1) parses as ((E + B) - 1).
  if (Num->getOpcode() == BO_Sub && Lit(Num->getRHS()) == 1) {
    const auto *Add = dyn_cast<BinaryOperator>(Num->getLHS()->IgnoreParenImpCasts());
    if (Add && Add->getOpcode() == BO_Add && Lit(Add->getRHS()) == B) {
      C.Numerator = Add->getLHS();
      return C;
    }
    return std::nullopt;
  }
  if (Num->getOpcode() != BO_Add)
    return std::nullopt;
  // (E + (B - 1)) and (E + B') with B' == B - 1.
  const Expr *R = Num->getRHS()->IgnoreParenImpCasts();
  if (Lit(R) == B - 1) {
    C.Numerator = Num->getLHS();
    return C;
  }
  if (const auto *Sub = dyn_cast<BinaryOperator>(R);
      Sub && Sub->getOpcode() == BO_Sub && Lit(Sub->getLHS()) == B &&
      Lit(Sub->getRHS()) == 1) {
    C.Numerator = Num->getLHS();
    return C;
  }
  return std::nullopt;
}

std::string ceilDivGridText(const EditContext &Ctx, const GridExpr &G,
                            int64_t K) {
  if (auto C = matchCeilDiv(G.E)) {
    std::string N = exprText(Ctx, C->Numerator);
    int64_t B = C->Divisor * K;
    return "(" + N + " + " + std::to_string(B - 1) + ") / " +
           std::to_string(B);
  }
  std::string Text = G.Text;
  const Expr *E = G.E->IgnoreParenImpCasts();
  bool Tight = isa<DeclRefExpr>(E) || isa<IntegerLiteral>(E) ||
               isa<ParenExpr>(G.E) || isa<CallExpr>(E) ||
               (isa<BinaryOperator>(E) &&
                cast<BinaryOperator>(E)->isMultiplicativeOp());
  if (!Tight)
    Text = "(" + Text + ")";
  return "(" + Text + " + " + std::to_string(K - 1) + ") / " +
         std::to_string(K);
}

std::optional<std::vector<int64_t>> launchBlockSizesX(const EditContext &Ctx,
                                                      const KernelInfo &K,
                                                      std::string &WhyNot) {
  std::vector<int64_t> Sizes;
  if (K.Launches.empty()) {
    WhyNot = "kernel '" + K.QualifiedName + "' is never launched in this file, "
             "so its block size is unknown";
    return std::nullopt;
  }
  for (const LaunchSite &L : K.Launches) {
    const CUDAKernelCallExpr *Call = findLaunchCall(Ctx, L);
    if (!Call || !Call->getConfig() || Call->getConfig()->getNumArgs() < 2) {
      WhyNot = "launch " + L.Id + " was not found in the AST";
      return std::nullopt;
    }
    const Expr *B = Call->getConfig()->getArg(1);
    bool Is1D = false;
    const Expr *X = dim3X(B, Ctx.AST, Is1D);
    // A local `dim3 block(256);` or `int threads = 256;`.
    if (!X) {
      if (const auto *VD = dyn_cast_or_null<VarDecl>(
              referencedDecl(B->IgnoreParenImpCasts()));
          VD && VD->hasInit() && VD->isLocalVarDecl()) {
        const auto *Fn = dyn_cast<FunctionDecl>(VD->getDeclContext());
        if (Fn && Fn->getBody() && !writtenVars(Fn->getBody()).contains(VD))
          X = dim3X(VD->getInit(), Ctx.AST, Is1D);
      }
    }
    std::optional<int64_t> V;
    if (X) {
      V = intValue(X, Ctx.AST);
      if (!V)
        if (const auto *VD = dyn_cast_or_null<VarDecl>(referencedDecl(X));
            VD && VD->hasInit() && VD->isLocalVarDecl()) {
          const auto *Fn = dyn_cast<FunctionDecl>(VD->getDeclContext());
          if (VD->getType().isConstQualified() ||
              (Fn && Fn->getBody() &&
               !writtenVars(Fn->getBody()).contains(VD)))
            V = intValue(VD->getInit(), Ctx.AST);
        }
    }
    if (!V || !Is1D) {
      WhyNot = "the block of " + L.Id + " ('" + L.Block +
               "') is not a one-dimensional constant";
      return std::nullopt;
    }
    Sizes.push_back(*V);
  }
  return Sizes;
}

} // namespace optiml
