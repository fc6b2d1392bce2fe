//===- TransformSupport.cpp - Text and expressions -----------------------===//
//
// Launch sites: LaunchSupport.cpp. Macros: MacroText.cpp.
//
//===----------------------------------------------------------------------===//

#include "TransformSupport.h"
#include "../CatalogInternal.h"
#include "optiml/Frontend/ASTUtil.h"
#include "optiml/Support/Sort.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"
#include <algorithm>

using namespace clang;
using namespace llvm;

namespace optiml {

//===--- Spans and text
//----------------------------------------------------===//

std::pair<unsigned, unsigned> ownLines(StringRef Code, unsigned B, unsigned E) {
  size_t LineB = Code.rfind('\n', B ? B - 1 : 0);
  LineB = LineB == StringRef::npos ? 0 : LineB + 1;
  size_t LineE = Code.find('\n', E);
  if (LineE != StringRef::npos &&
      Code.slice(LineB, B).find_first_not_of(" \t") == StringRef::npos &&
      Code.slice(E, LineE).find_first_not_of(" \t") == StringRef::npos)
    return {unsigned(LineB), unsigned(LineE + 1)};
  return {B, E};
}

bool namesIdentifier(StringRef Text, StringRef Name) {
  // The text's tokens as the compiler reads them: a name in a comment or
  // a string literal is no use of it.
  std::string Buf = Text.str();
  LangOptions LO;
  LO.CPlusPlus = LO.CPlusPlus11 = LO.CPlusPlus17 = true;
  Lexer L(SourceLocation(), LO, Buf.data(), Buf.data(),
          Buf.data() + Buf.size());
  Token T;
  do {
    L.LexFromRawLexer(T);
    if (T.is(tok::raw_identifier) && T.getRawIdentifier() == Name)
      return true;
  } while (T.isNot(tok::eof));
  return false;
}

std::string spliceText(StringRef Code, unsigned Begin, unsigned End,
                       std::vector<TextEdit> Edits) {
  stableSort(Edits, [](const TextEdit &A, const TextEdit &B) {
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

static std::optional<SourceSpan> tokenSpan(const EditContext &Ctx,
                                           const Stmt *S) {
  return fileSpan(Ctx.AST.getSourceManager(), Ctx.AST.getLangOpts(),
                  S->getSourceRange(), Ctx.file());
}

std::optional<SourceSpan> stmtSpan(const EditContext &Ctx, const Stmt *S) {
  auto Span = containsMacro(S) ? constantMacroSpan(Ctx, S) : tokenSpan(Ctx, S);
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
  if (containsMacro(E))
    return constantMacroText(Ctx, E);
  auto Span = tokenSpan(Ctx, E);
  if (!Span)
    return "";
  return Ctx.Code.slice(Span->Begin.Offset, Span->End.Offset).str();
}

std::string stmtText(const EditContext &Ctx, const Stmt *S) {
  auto Span = stmtSpan(Ctx, S);
  if (!Span)
    return "";
  return Ctx.Code.slice(Span->Begin.Offset, Span->End.Offset).str();
}

std::optional<int64_t> launchBoundsThreads(const clang::FunctionDecl *Kernel,
                                           const clang::ASTContext &AST) {
  const auto *LB = Kernel->getAttr<clang::CUDALaunchBoundsAttr>();
  if (!LB || !LB->getMaxThreads() || LB->getMaxThreads()->isValueDependent())
    return std::nullopt;
  if (auto V = LB->getMaxThreads()->getIntegerConstantExpr(AST))
    return V->getExtValue();
  return std::nullopt;
}

int64_t blockWithin(std::optional<int64_t> Max, int64_t Want) {
  if (!Max || Want <= *Max)
    return Want;
  return std::max<int64_t>(32, *Max / 32 * 32);
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

std::optional<SourceSpan> looseExprSpan(const EditContext &Ctx, const Stmt *S) {
  if (!S)
    return std::nullopt;
  const SourceManager &SM = Ctx.AST.getSourceManager();
  SourceRange R = S->getSourceRange();
  // An end in a macro: only a constant one, at its edge (`x < W`).
  if (R.getBegin().isMacroID() || R.getEnd().isMacroID())
    return constantMacroSpan(Ctx, S);
  auto FS = fileSpan(SM, Ctx.AST.getLangOpts(), R, Ctx.file());
  if (!FS)
    return std::nullopt;
  return FS;
}

SourceSpan withSemicolon(const EditContext &Ctx, SourceSpan Sp) {
  // Statements ending in ';' (also loops and ifs whose body is one) do not
  // include it in their range.
  StringRef Code = Ctx.Code;
  unsigned E = Sp.End.Offset;
  if (E > 0 && (Code[E - 1] == ';' || Code[E - 1] == '}'))
    return Sp;
  unsigned P = E;
  while (P < Code.size() && (Code[P] == ' ' || Code[P] == '\t'))
    ++P;
  if (P < Code.size() && Code[P] == ';')
    Sp.End.Offset = P + 1;
  return Sp;
}

std::optional<SourceSpan> looseStmtSpan(const EditContext &Ctx, const Stmt *S) {
  auto Sp = looseExprSpan(Ctx, S);
  if (!Sp)
    return std::nullopt;
  return withSemicolon(Ctx, *Sp);
}

std::string looseExprText(const EditContext &Ctx, const Stmt *S) {
  if (S && (S->getBeginLoc().isMacroID() || S->getEndLoc().isMacroID()))
    return constantMacroText(Ctx, S);
  auto Sp = looseExprSpan(Ctx, S);
  if (!Sp)
    return "";
  return Ctx.Code.substr(Sp->Begin.Offset, Sp->End.Offset - Sp->Begin.Offset)
      .str();
}

std::string indentLines(StringRef Text, StringRef Prefix) {
  std::string Out;
  size_t Start = 0;
  bool First = true;
  while (Start <= Text.size()) {
    size_t NL = Text.find('\n', Start);
    StringRef Line = Text.substr(Start, NL == StringRef::npos ? StringRef::npos
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

std::string where(const EditContext &Ctx, const Stmt *S) {
  const SourceManager &SM = Ctx.AST.getSourceManager();
  SourcePos P = filePos(SM, SM.getExpansionLoc(S->getBeginLoc()));
  return std::to_string(P.Line) + ":" + std::to_string(P.Column);
}

//===--- Expressions
//-------------------------------------------------------===//

static bool isBuiltin(const Expr *E, StringRef Var, char Dim) {
  auto B = asBuiltinVar(E ? E->IgnoreParenCasts() : nullptr);
  return B && B->Var == Var && B->Dim == Dim;
}

std::optional<char> linearIndexDim(const Expr *E, bool ThroughHelpers) {
  if (!E)
    return std::nullopt;
  if (ThroughHelpers)
    if (const auto *Call = dyn_cast<CallExpr>(stripCasts(E))) {
      const FunctionDecl *FD = Call->getDirectCallee();
      if (!FD || Call->getNumArgs() != 0 || !FD->hasBody())
        return std::nullopt;
      const auto *Body = dyn_cast<CompoundStmt>(FD->getBody());
      if (!Body || Body->size() != 1)
        return std::nullopt;
      const auto *Ret = dyn_cast<ReturnStmt>(Body->body_front());
      if (!Ret || !Ret->getRetValue())
        return std::nullopt;
      return linearIndexDim(Ret->getRetValue(), /*ThroughHelpers=*/true);
    }
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

SmallVector<const Expr *, 4> splitJoined(const Expr *E,
                                         BinaryOperatorKind Join) {
  SmallVector<const Expr *, 4> Terms;
  SmallVector<const Expr *, 8> Work{E};
  while (!Work.empty()) {
    const Expr *X = Work.pop_back_val();
    if (const auto *B = dyn_cast<BinaryOperator>(X->IgnoreParenImpCasts());
        B && B->getOpcode() == Join) {
      Work.push_back(B->getRHS()); // the left operand first
      Work.push_back(B->getLHS());
    } else {
      Terms.push_back(X);
    }
  }
  return Terms;
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

namespace {
/// A call whose value or effect depends on the threads of the warp or block
/// (isThreadCall() without atomics and fences, which mean the same from any
/// thread).
bool shapeDependentCall(const FunctionDecl *F) {
  if (!F->getDeclName().isIdentifier())
    return false;
  StringRef N = F->getName();
  return isThreadCall(N) && !N.starts_with("atomic") &&
         !N.starts_with("__threadfence");
}

/// The definition \p S calls or constructs with, when the program defines
/// it (outside system headers); null otherwise.
const FunctionDecl *programCallee(const Stmt *S, const SourceManager &SM) {
  const FunctionDecl *F = nullptr;
  if (const auto *C = dyn_cast<CallExpr>(S))
    F = C->getDirectCallee();
  else if (const auto *C = dyn_cast<CXXConstructExpr>(S))
    F = C->getConstructor();
  const FunctionDecl *Def = nullptr;
  if (!F || !F->hasBody(Def) || SM.isInSystemHeader(Def->getLocation()))
    return nullptr;
  return Def;
}

/// The call in \p S that threadShapeCall() reports, with \p Seen the
/// definitions already followed (each once, so recursion ends).
const FunctionDecl *shapeCallIn(const Stmt *S, const SourceManager &SM,
                                SmallPtrSetImpl<const FunctionDecl *> &Seen) {
  if (!S)
    return nullptr;
  if (const auto *C = dyn_cast<CallExpr>(S))
    if (const FunctionDecl *F = C->getDirectCallee();
        F && shapeDependentCall(F))
      return F;
  if (const FunctionDecl *Def = programCallee(S, SM);
      Def && Seen.insert(Def).second &&
      (mentionsBuiltin(Def->getBody()) ||
       shapeCallIn(Def->getBody(), SM, Seen)))
    return Def;
  if (const auto *DS = dyn_cast<DeclStmt>(S))
    for (const Decl *X : DS->decls())
      if (const auto *VD = dyn_cast<VarDecl>(X); VD && VD->hasInit())
        if (const FunctionDecl *F = shapeCallIn(VD->getInit(), SM, Seen))
          return F;
  for (const Stmt *C : S->children())
    if (const FunctionDecl *F = shapeCallIn(C, SM, Seen))
      return F;
  return nullptr;
}
} // namespace

const FunctionDecl *threadShapeCall(const Stmt *S, const SourceManager &SM) {
  SmallPtrSet<const FunctionDecl *, 8> Seen;
  return shapeCallIn(S, SM, Seen);
}

std::string threadShapeCallProblem(ArrayRef<const Stmt *> Body,
                                   const SourceManager &SM) {
  for (const Stmt *S : Body)
    if (const FunctionDecl *F = threadShapeCall(S, SM))
      return "the body calls '" + F->getQualifiedNameAsString() +
             "', whose result depends on the thread that runs it (it reads "
             "threadIdx, blockIdx, blockDim or gridDim, or is or calls a "
             "barrier, shuffle or vote): its meaning would change";
  return "";
}

bool callsFunction(const Stmt *S, StringRef Prefix) {
  if (!S)
    return false;
  if (const auto *C = dyn_cast<CallExpr>(S))
    if (const FunctionDecl *FD = C->getDirectCallee())
      if (FD->getDeclName().isIdentifier() && FD->getName().starts_with(Prefix))
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
template <class F> void forEachStmt(const Stmt *S, F Fn) {
  if (!S)
    return;
  Fn(S);
  for (const Stmt *C : S->children())
    forEachStmt(C, Fn);
}
} // namespace

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
    if (isa<EnumConstantDecl, FunctionDecl, NonTypeTemplateParmDecl>(D))
      return V;
    const auto *VD = dyn_cast<VarDecl>(D);
    if (!VD || W.contains(VD)) {
      V.Unknown = true;
      return V;
    }
    if (isa<ParmVarDecl>(VD))
      return V;
    if (!VD->isLocalVarDecl()) {
      V.Unknown =
          !VD->getType().isConstQualified() && !VD->hasAttr<CUDAConstantAttr>();
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
  if (const auto *U = dyn_cast<UnaryOperator>(E);
      U && U->getOpcode() == UO_AddrOf)
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

static bool uniformImpl(const Stmt *N, const FunctionDecl *K, unsigned Depth) {
  if (!N)
    return true;
  if (Depth > 16)
    return false;
  if (const auto *X = dyn_cast<Expr>(N))
    // Whole, not through the CUDA headers' property getters inside.
    if (auto B = asBuiltinVar(X))
      return B->Var == "blockIdx" || B->Var == "blockDim" ||
             B->Var == "gridDim";
  if (isa<CallExpr>(N) && !isa<CXXConstructExpr>(N)) {
    const FunctionDecl *FD = cast<CallExpr>(N)->getDirectCallee();
    if (!FD || !FD->getDeclName().isIdentifier() ||
        !isMathFunction(FD->getName()))
      return false;
  }
  if (const auto *R = dyn_cast<DeclRefExpr>(N)) {
    const auto *V = dyn_cast<VarDecl>(R->getDecl());
    if (!V || isa<ParmVarDecl>(V))
      return true;
    if (!V->isLocalVarDecl())
      return V->getType().isConstQualified() || V->isConstexpr();
    if (!V->getInit() || llvm::is_contained(writtenDecls(K->getBody()), V))
      return false;
    return uniformImpl(V->getInit(), K, Depth + 1);
  }
  // Loads from memory may differ between calls, but not between threads
  // reading the same address; an address is uniform when its parts are.
  return llvm::all_of(N->children(),
                      [&](const Stmt *C) { return uniformImpl(C, K, Depth); });
}

bool isBlockUniform(const Expr *E, const FunctionDecl *Kernel) {
  return uniformImpl(E, Kernel, 0);
}

std::optional<int64_t> integerConstantValue(const Expr *E,
                                            const ASTContext &AST) {
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

std::optional<int64_t> intValue(const Expr *E, const ASTContext &AST) {
  if (!E || E->isValueDependent() || E->isTypeDependent())
    return std::nullopt;
  Expr::EvalResult R;
  if (E->EvaluateAsInt(R, AST))
    return R.Val.getInt().getExtValue();
  return std::nullopt;
}

bool containsStmt(const Stmt *S, const Stmt *Target) {
  if (!S)
    return false;
  if (S == Target)
    return true;
  for (const Stmt *C : S->children())
    if (containsStmt(C, Target))
      return true;
  return false;
}

void collectRefs(const Stmt *S, const ValueDecl *D,
                 std::vector<const DeclRefExpr *> &Out) {
  if (!S)
    return;
  if (const auto *DR = dyn_cast<DeclRefExpr>(S); DR && DR->getDecl() == D)
    Out.push_back(DR);
  for (const Stmt *C : S->children())
    collectRefs(C, D, Out);
}

std::string typeName(QualType T, const ASTContext &AST) {
  PrintingPolicy PP(AST.getLangOpts());
  PP.SuppressTagKeyword = true;
  return T.getUnqualifiedType().getAsString(PP);
}

bool stableVar(const VarDecl *V) {
  if (V->getType().isConstQualified() && V->hasInit())
    return true;
  if (!V->isLocalVarDecl() && !isa<ParmVarDecl>(V))
    return false;
  const auto *Fn = dyn_cast<FunctionDecl>(V->getDeclContext());
  return Fn && Fn->getBody() && !writtenVars(Fn->getBody()).contains(V);
}

const DeclRefExpr *findDeclRef(const Stmt *S,
                               function_ref<bool(const DeclRefExpr *)> Match) {
  std::vector<const Stmt *> Work = {S};
  while (!Work.empty()) {
    const Stmt *X = Work.back();
    Work.pop_back();
    if (!X)
      continue;
    if (const auto *DR = dyn_cast<DeclRefExpr>(X); DR && Match(DR))
      return DR;
    append_range(Work, X->children());
  }
  return nullptr;
}

bool stableExpr(const Expr *E, const ASTContext &AST) {
  return !E->HasSideEffects(AST) && !findDeclRef(E, [](const DeclRefExpr *DR) {
    const auto *V = dyn_cast<VarDecl>(DR->getDecl());
    return V && !stableVar(V);
  });
}

bool sameValueExpr(const Expr *A, const Expr *B) {
  A = A->IgnoreParenImpCasts();
  B = B->IgnoreParenImpCasts();
  if (A->getStmtClass() != B->getStmtClass())
    return false;
  if (const auto *DA = dyn_cast<DeclRefExpr>(A))
    return DA->getDecl()->getCanonicalDecl() ==
           cast<DeclRefExpr>(B)->getDecl()->getCanonicalDecl();
  if (const auto *LA = dyn_cast<IntegerLiteral>(A))
    return APInt::isSameValue(LA->getValue(),
                              cast<IntegerLiteral>(B)->getValue());
  if (const auto *OA = dyn_cast<BinaryOperator>(A)) {
    const auto *OB = cast<BinaryOperator>(B);
    return OA->getOpcode() == OB->getOpcode() &&
           sameValueExpr(OA->getLHS(), OB->getLHS()) &&
           sameValueExpr(OA->getRHS(), OB->getRHS());
  }
  if (const auto *UA = dyn_cast<UnaryOperator>(A)) {
    const auto *UB = cast<UnaryOperator>(B);
    return UA->getOpcode() == UB->getOpcode() &&
           sameValueExpr(UA->getSubExpr(), UB->getSubExpr());
  }
  if (const auto *CA = dyn_cast<ExplicitCastExpr>(A)) {
    const auto *CB = cast<ExplicitCastExpr>(B);
    return CA->getType().getCanonicalType() ==
               CB->getType().getCanonicalType() &&
           sameValueExpr(CA->getSubExpr(), CB->getSubExpr());
  }
  if (const auto *MA = dyn_cast<MemberExpr>(A)) {
    const auto *MB = cast<MemberExpr>(B);
    return MA->getMemberDecl() == MB->getMemberDecl() &&
           MA->isArrow() == MB->isArrow() &&
           sameValueExpr(MA->getBase(), MB->getBase());
  }
  return false;
}

//===--- Template instantiations
//-----------------------------------------===//

std::vector<const FunctionDecl *>
templateInstantiations(const FunctionDecl *Pattern) {
  std::vector<const FunctionDecl *> Out;
  const FunctionTemplateDecl *T =
      Pattern ? Pattern->getDescribedFunctionTemplate() : nullptr;
  if (!T)
    return Out;
  for (const FunctionDecl *S : T->specializations())
    if (S->isTemplateInstantiation() && S->hasBody() && !is_contained(Out, S))
      Out.push_back(S);
  return Out;
}

const ParmVarDecl *instantiatedParam(const ParmVarDecl *Param,
                                     const FunctionDecl *Instantiation) {
  const auto *Pattern = dyn_cast<FunctionDecl>(Param->getDeclContext());
  unsigned I = Param->getFunctionScopeIndex();
  // After a parameter pack, positions differ between pattern and instance.
  if (!Instantiation || !Pattern || I >= Instantiation->getNumParams() ||
      any_of(Pattern->parameters(),
             [](const ParmVarDecl *P) { return P->isParameterPack(); }))
    return nullptr;
  return Instantiation->getParamDecl(I);
}

std::string instantiationName(const FunctionDecl *FD) {
  std::string Name;
  llvm::raw_string_ostream OS(Name);
  PrintingPolicy PP(FD->getASTContext().getLangOpts());
  PP.SuppressTagKeyword = true;
  FD->getNameForDiagnostic(OS, PP, /*Qualified=*/true);
  return Name;
}

} // namespace optiml
