//===- BlockScanInput.cpp - block-scan's recognizers and its text ---------===//
//
// The parts of block-scan that need no plan: what a barrier statement, a
// doubling offset, a loop bound and the block size look like, how an index
// into one array split in two halves reads (`h * len + i`), which element
// types the shuffles move, and the text of the rewritten scan. The plan and
// the symbolic run of a step are in BlockScan.cpp; BlockScanInternal.h
// declares these.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../TransformSupport.h"
#include "BlockScanInternal.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/Type.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/STLExtras.h"
#include <algorithm>
#include <functional>

using namespace llvm;
using clang::dyn_cast;
using clang::dyn_cast_or_null;
using clang::isa;

namespace optiml {
namespace block_scan {

bool isBarrierStmt(const clang::Stmt *S) {
  const auto *C = dyn_cast_or_null<clang::CallExpr>(S);
  return C && C->getDirectCallee() && isBlockBarrier(C->getDirectCallee());
}

/// The element types the shuffles move.
bool shuffleType(clang::QualType T) {
  using BT = clang::BuiltinType;
  const auto *B = T.getCanonicalType()->getAs<BT>();
  return B && llvm::is_contained({BT::Int, BT::UInt, BT::Long, BT::ULong,
                                  BT::LongLong, BT::ULongLong, BT::Float,
                                  BT::Double},
                                 B->getKind());
}

/// `off <<= 1`, `off *= 2`, `off += off`, `off = off * 2`, `off = 2 * off`,
/// `off = off << 1`, `off = off + off`.
bool doubles(const clang::Expr *Inc, const clang::VarDecl *Off,
             const clang::ASTContext &AST) {
  const auto *B = dyn_cast_or_null<clang::BinaryOperator>(
      Inc ? Inc->IgnoreParenImpCasts() : nullptr);
  if (!B || declOf(B->getLHS()) != Off)
    return false;
  auto Is = [&](const clang::Expr *E, int64_t N) {
    auto V = intValue(E, AST);
    return V && *V == N;
  };
  const clang::Expr *R = B->getRHS();
  switch (B->getOpcode()) {
  case clang::BO_ShlAssign:
    return Is(R, 1);
  case clang::BO_MulAssign:
    return Is(R, 2);
  case clang::BO_AddAssign:
    return declOf(R) == Off;
  case clang::BO_Assign: {
    const auto *S = dyn_cast<clang::BinaryOperator>(R->IgnoreParenImpCasts());
    if (!S)
      return false;
    const clang::Expr *L = S->getLHS(), *Rt = S->getRHS();
    switch (S->getOpcode()) {
    case clang::BO_Mul:
      return (declOf(L) == Off && Is(Rt, 2)) || (Is(L, 2) && declOf(Rt) == Off);
    case clang::BO_Shl:
      return declOf(L) == Off && Is(Rt, 1);
    case clang::BO_Add:
      return declOf(L) == Off && declOf(Rt) == Off;
    default:
      return false;
    }
  }
  default:
    return false;
  }
}

/// \p S reads or writes memory, calls something or applies a unary
/// operator (a swap of locals does none of that).
bool touchesMemory(const clang::Stmt *S) {
  return isa_and_nonnull<clang::ArraySubscriptExpr, clang::CallExpr,
                         clang::MemberExpr, clang::UnaryOperator>(S) ||
         (S && llvm::any_of(S->children(), touchesMemory));
}

/// The loop's steps are apart: its body starts with a barrier, or ends
/// with one followed at most by statements that only change locals (the
/// swap of two pointers).
bool stepsApart(const clang::CompoundStmt *Body) {
  if (!Body || Body->body_empty() || isBarrierStmt(Body->body_front()))
    return Body && !Body->body_empty();
  auto Last = llvm::find_if(llvm::reverse(Body->body()), touchesMemory);
  return Last != Body->body_rend() && isBarrierStmt(*Last);
}

/// The loop's constant bound \p Bound; where it is a template parameter,
/// the least value the instantiations give it (no launch's block exceeds
/// that when none exceeds its instantiation's).
std::optional<int64_t> loopBound(const EditContext &Ctx,
                                 const clang::FunctionDecl *Kernel,
                                 const clang::Expr *Bound) {
  if (!Bound->isValueDependent())
    return intValue(Bound, Ctx.AST);
  const auto *NT =
      dyn_cast_or_null<clang::NonTypeTemplateParmDecl>(declOf(Bound));
  std::optional<int64_t> Least;
  for (const clang::FunctionDecl *I : templateInstantiations(Kernel)) {
    const clang::TemplateArgumentList *Args =
        I->getTemplateSpecializationArgs();
    if (!NT || NT->getDepth() || !Args || NT->getIndex() >= Args->size() ||
        Args->get(NT->getIndex()).getKind() !=
            clang::TemplateArgument::Integral)
      return std::nullopt;
    int64_t N = Args->get(NT->getIndex()).getAsIntegral().getSExtValue();
    Least = Least ? std::min(*Least, N) : N;
  }
  return Least;
}

/// \p E is blockDim.x, or a local never written after its initializer
/// blockDim.x (\p Written: the kernel's written variables).
bool isBlockDimX(const clang::Expr *E,
                 const llvm::DenseSet<const clang::ValueDecl *> &Written) {
  const clang::Expr *S = stripCasts(E);
  if (auto B = asBuiltinVar(S))
    return B->Var == "blockDim" && B->Dim == 'x';
  const auto *V = dyn_cast_or_null<clang::VarDecl>(declOf(S));
  if (!V || !V->isLocalVarDecl() || !V->getInit() || Written.contains(V))
    return false;
  auto B = asBuiltinVar(stripCasts(V->getInit()));
  return B && B->Var == "blockDim" && B->Dim == 'x';
}

/// The terms of a sum of \p E, each with whether it is subtracted.
static void
sumTerms(const clang::Expr *E, bool Minus,
         SmallVectorImpl<std::pair<const clang::Expr *, bool>> &Out) {
  E = E->IgnoreParenImpCasts();
  if (const auto *B = dyn_cast<clang::BinaryOperator>(E);
      B &&
      (B->getOpcode() == clang::BO_Add || B->getOpcode() == clang::BO_Sub)) {
    sumTerms(B->getLHS(), Minus, Out);
    sumTerms(B->getRHS(), B->getOpcode() == clang::BO_Sub ? !Minus : Minus,
             Out);
    return;
  }
  Out.push_back({E, Minus});
}

const clang::Expr *splitHalfIndex(const clang::Expr *Index,
                                  const ExprTest &IsLen, IndexTerms &Rest) {
  SmallVector<std::pair<const clang::Expr *, bool>, 4> Terms;
  sumTerms(Index, false, Terms);
  const clang::Expr *Found = nullptr;
  Rest.clear();
  for (const auto &[Term, Minus] : Terms) {
    const auto *M = dyn_cast<clang::BinaryOperator>(Term);
    const clang::Expr *Half = nullptr;
    if (M && M->getOpcode() == clang::BO_Mul && !Minus)
      Half = IsLen(M->getRHS())   ? M->getLHS()
             : IsLen(M->getLHS()) ? M->getRHS()
                                  : nullptr;
    if (!Half) {
      Rest.push_back({Term, Minus});
      continue;
    }
    if (Found)
      return nullptr; // two halves named
    Found = Half;
  }
  return Found;
}

std::optional<bool> offsetTest(const clang::Expr *E, const ExprTest &IsTid,
                               const clang::VarDecl *Off,
                               const clang::ASTContext &AST, bool InRange) {
  E = E->IgnoreParenImpCasts();
  if (const auto *U = dyn_cast<clang::UnaryOperator>(E))
    if (U->getOpcode() == clang::UO_LNot)
      if (auto C = offsetTest(U->getSubExpr(), IsTid, Off, AST, InRange))
        return !*C;
  const auto *B = dyn_cast<clang::BinaryOperator>(E);
  if (!B)
    return std::nullopt;
  const clang::Expr *L = B->getLHS(), *R = B->getRHS();
  auto IsOff = [&](const clang::Expr *X) { return declOf(X) == Off; };
  auto IsZero = [&](const clang::Expr *X) {
    auto V = intValue(X, AST);
    return V && *V == 0;
  };
  // tid - off >= 0, in signed arithmetic (unsigned, it always holds)
  if (const auto *S = dyn_cast<clang::BinaryOperator>(stripCasts(L));
      S && S->getOpcode() == clang::BO_Sub &&
      S->getType()->isSignedIntegerType() && IsTid(S->getLHS()) &&
      IsOff(S->getRHS()) && IsZero(R)) {
    if (B->getOpcode() == clang::BO_GE)
      return InRange;
    if (B->getOpcode() == clang::BO_LT)
      return !InRange;
  }
  switch (B->getOpcode()) {
  case clang::BO_GE:
    if (IsTid(L) && IsOff(R))
      return InRange;
    break;
  case clang::BO_LE:
    if (IsOff(L) && IsTid(R))
      return InRange;
    break;
  case clang::BO_LT:
    if (IsTid(L) && IsOff(R))
      return !InRange;
    break;
  case clang::BO_GT:
    if (IsOff(L) && IsTid(R))
      return !InRange;
    break;
  default:
    break;
  }
  return std::nullopt;
}

const clang::Expr *storeHalf(const clang::Expr *Index, const ExprTest &IsLen,
                             const ExprTest &IsTid,
                             const clang::ASTContext &AST,
                             std::optional<int64_t> &Len) {
  IndexTerms Rest;
  const clang::Expr *H = splitHalfIndex(Index, IsLen, Rest);
  Len.reset();
  if (!H)
    H = splitHalfIndex(
        Index,
        [&](const clang::Expr *X) {
          auto V = intValue(X, AST);
          if (V && *V > 0)
            Len = V;
          return V && *V > 0;
        },
        Rest);
  // h picks a half: a local integer variable or a constant.
  const auto *V = dyn_cast_or_null<clang::VarDecl>(H ? declOf(H) : nullptr);
  bool Picks =
      H && ((V && V->isLocalVarDecl() && V->getType()->isIntegerType()) ||
            intValue(H, AST));
  if (!Picks || Rest.size() != 1 || Rest[0].second || !IsTid(Rest[0].first)) {
    Len.reset();
    return nullptr;
  }
  return H;
}

std::string bufferChoice(const EditContext &Ctx, const clang::ForStmt *Loop,
                         const clang::Stmt *Store,
                         ArrayRef<const clang::VarDecl *> Changed,
                         const clang::Expr *FirstIndex,
                         ArrayRef<const clang::Stmt *> BeforeLoop,
                         const clang::VarDecl *&Cur,
                         const clang::VarDecl *&Peer, int &PeerStart) {
  auto IsChoice = [](const clang::VarDecl *V) {
    return V && V->isLocalVarDecl() && V->getType()->isIntegerType();
  };
  if (Changed.empty() || Changed.size() > 2 || !llvm::all_of(Changed, IsChoice))
    return "the loop at " + where(Ctx, Loop) +
           " does not switch buffers through one integer variable (or two "
           "flipped together)";
  const auto *Named = dyn_cast_or_null<clang::VarDecl>(declOf(FirstIndex));
  Cur = Changed.size() == 1                  ? Changed[0]
        : llvm::is_contained(Changed, Named) ? Named
                                             : nullptr;
  if (!Cur)
    return "the store '" + looseExprText(Ctx, Store) +
           "' picks its buffer by neither '" + Changed[0]->getName().str() +
           "' nor '" + Changed[1]->getName().str() +
           "', the variables the loop flips";
  if (Changed.size() == 2)
    Peer = Changed[0] == Cur ? Changed[1] : Changed[0];
  auto Start = [&](const clang::VarDecl *V) {
    return V->getInit() ? intValue(V->getInit(), Ctx.AST) : std::nullopt;
  };
  auto Init = Start(Cur);
  auto NamedValue = intValue(FirstIndex, Ctx.AST);
  if (!Init || (Named != Cur && (!NamedValue || *NamedValue != *Init)))
    return "the store '" + looseExprText(Ctx, Store) +
           "' does not write the buffer '" + Cur->getName().str() +
           "' names when the loop starts";
  for (const clang::VarDecl *V : {Cur, Peer}) {
    if (!V)
      continue;
    auto N = Start(V);
    if (!N || (*N != 0 && *N != 1))
      return "'" + V->getName().str() + "' starts at " +
             (N ? std::to_string(*N) : std::string("a value not known")) +
             "; a buffer choice starts at 0 or 1";
    for (const clang::Stmt *S : BeforeLoop)
      if (writtenVars(S).contains(V))
        return "'" + V->getName().str() + "' changes before the loop";
  }
  if (Peer)
    PeerStart = *Start(Peer) != *Init ? 1 : 0;
  return "";
}

std::string beforeStoreWhy(const EditContext &Ctx, const clang::Stmt *S,
                           ArrayRef<const clang::VarDecl *> Arrays,
                           ArrayRef<const clang::VarDecl *> Swapped) {
  const auto *DS = dyn_cast<clang::DeclStmt>(S);
  for (const clang::VarDecl *A : Arrays)
    if (A && !DS && mentions(S, A))
      return "'" + A->getName().str() +
             "' is used before the scan's store at " + where(Ctx, S);
  for (const clang::Decl *D :
       DS ? DS->decls() : clang::DeclStmt::decl_range(nullptr, nullptr)) {
    const auto *V = dyn_cast<clang::VarDecl>(D);
    if (!V || llvm::is_contained(Swapped, V) || !V->getInit())
      continue;
    for (const clang::VarDecl *A : Arrays) {
      if (!A || !mentions(V->getInit(), A))
        continue;
      clang::QualType T = V->getType();
      if (T->isPointerType() || T->isReferenceType() || T->isArrayType())
        return "'" + V->getName().str() + "' at " + where(Ctx, S) +
               " points into '" + A->getName().str() +
               "'; reads and writes through it are not followed, and the "
               "scan moves where the values are";
      return "'" + A->getName().str() +
             "' is used before the scan's store at " + where(Ctx, S);
    }
  }
  return "";
}

/// The declaration statement inside \p S that declares \p V, or null.
static const clang::DeclStmt *declaring(const clang::Stmt *S,
                                        const clang::VarDecl *V) {
  if (!S)
    return nullptr;
  if (const auto *DS = dyn_cast<clang::DeclStmt>(S);
      DS && llvm::is_contained(DS->decls(), V))
    return DS;
  for (const clang::Stmt *C : S->children())
    if (const clang::DeclStmt *DS = declaring(C, V))
      return DS;
  return nullptr;
}

std::optional<std::pair<unsigned, unsigned>> unusedDeclaration(
    const EditContext &Ctx, const clang::Stmt *Body, const clang::VarDecl *V,
    ArrayRef<std::pair<unsigned, unsigned>> Removed, const clang::Stmt *Kept) {
  const clang::SourceManager &SM = Ctx.AST.getSourceManager();
  auto Offset = [&](clang::SourceLocation L) -> std::optional<unsigned> {
    if (!L.isFileID() || !SM.isWrittenInMainFile(L))
      return std::nullopt;
    return SM.getFileOffset(L);
  };
  std::vector<const clang::DeclRefExpr *> Refs, KeptRefs;
  collectRefs(Body, V, Refs);
  collectRefs(Kept, V, KeptRefs);
  for (const clang::DeclRefExpr *R : Refs) {
    auto At = Offset(R->getLocation());
    if (!At || none_of(Removed, [&](const std::pair<unsigned, unsigned> &G) {
          return *At >= G.first && *At < G.second;
        }))
      return std::nullopt;
  }
  const clang::DeclStmt *DS = declaring(Body, V);
  auto Span = DS ? stmtSpan(Ctx, DS) : std::nullopt;
  if (!KeptRefs.empty() || !Span || Removed.empty() ||
      Span->End.Offset > Removed.front().first)
    return std::nullopt;
  StringRef Code = Ctx.Code;
  if (DS->isSingleDecl()) {
    // The whole statement, with its line when it stands alone on it.
    unsigned B = Span->Begin.Offset, E = Span->End.Offset;
    while (B > 0 && (Code[B - 1] == ' ' || Code[B - 1] == '\t'))
      --B;
    if (B > 0 && Code[B - 1] == '\n' && E < Code.size() && Code[E] == '\n')
      return std::make_pair(B, E + 1);
    return std::make_pair(Span->Begin.Offset, Span->End.Offset);
  }
  auto EndOf = [&](const clang::Decl *D) -> std::optional<unsigned> {
    return Offset(clang::Lexer::getLocForEndOfToken(D->getEndLoc(), 0, SM,
                                                    Ctx.AST.getLangOpts()));
  };
  auto I = llvm::find(DS->decls(), V);
  if (I != DS->decl_begin()) {
    // `, pin = 1`: from the end of the declarator before it.
    auto B = EndOf(*std::prev(I)), E = EndOf(V);
    return B && E ? std::optional(std::make_pair(*B, *E)) : std::nullopt;
  }
  // `pin = 1, ` before the next declarator (whose `*` or `&` it leaves),
  // for an integer, whose declarator starts at its name.
  auto B = Offset(V->getLocation()), E = EndOf(V);
  if (!B || !E || !V->getType()->isIntegerType())
    return std::nullopt;
  size_t Comma = Code.find_first_not_of(" \t\n", *E);
  if (Comma == StringRef::npos || Code[Comma] != ',')
    return std::nullopt;
  size_t Next = Code.find_first_not_of(" \t\n", Comma + 1);
  if (Next == StringRef::npos)
    return std::nullopt;
  return std::make_pair(*B, unsigned(Next));
}

std::string scanText(const EditContext &Ctx, unsigned RegionBegin,
                     StringRef ElemType, StringRef Value, StringRef Dest) {
  std::string I0 = indentationAt(Ctx.Code, RegionBegin);
  std::string I1 = I0 + "  ", I2 = I1 + "  ";
  std::string T = ElemType.str();
  std::string V = freshName(Ctx.Code, "scan_v");
  std::string Lane = freshName(Ctx.Code, "scan_lane");
  std::string Warp = freshName(Ctx.Code, "scan_warp");
  std::string D = freshName(Ctx.Code, "scan_d");
  std::string Y = freshName(Ctx.Code, "scan_y");
  std::string S = freshName(Ctx.Code, "scan_s");
  std::string Sums = freshName(Ctx.Code, "scan_warp_sums");
  auto ShuffleScan = [&](const std::string &X, const std::string &In) {
    return In + "for (unsigned " + D + " = 1; " + D + " < 32; " + D +
           " <<= 1) {\n" + In + "  " + T + " " + Y +
           " = __shfl_up_sync(0xffffffffu, " + X + ", " + D + ");\n" + In +
           "  if (" + Lane + " >= " + D + ")\n" + In + "    " + X + " += " + Y +
           ";\n" + In + "}\n";
  };
  std::string Text;
  Text += "{\n";
  Text += I1 + T + " " + V + " = " + Value.str() + ";\n";
  Text += I1 + "const unsigned " + Lane + " = threadIdx.x % 32, " + Warp +
          " = threadIdx.x / 32;\n";
  Text += ShuffleScan(V, I1);
  Text += I1 + "__shared__ " + T + " " + Sums + "[32];\n";
  Text += I1 + "if (" + Lane + " == 31)\n" + I2 + Sums + "[" + Warp +
          "] = " + V + ";\n";
  Text += I1 + "__syncthreads();\n";
  Text += I1 + "if (" + Warp + " == 0) {\n";
  Text += I2 + T + " " + S + " = " + Lane + " < blockDim.x / 32 ? " + Sums +
          "[" + Lane + "] : static_cast<" + T + ">(0);\n";
  Text += ShuffleScan(S, I2);
  Text += I2 + Sums + "[" + Lane + "] = " + S + ";\n";
  Text += I1 + "}\n";
  Text += I1 + "__syncthreads();\n";
  Text += I1 + "if (" + Warp + " > 0)\n" + I2 + V + " += " + Sums + "[" + Warp +
          " - 1];\n";
  Text += I1 + Dest.str() + " = " + V + ";\n";
  Text += I0 + "}\n" + I0 + "__syncthreads();";
  return Text;
}

} // namespace block_scan
} // namespace optiml
