//===- SharedTilingFlat.cpp - Block-sized products over a flat index -----===//
//
// Pattern: a block-sized product (SharedTilingBlock.cpp) written over 1D
// blocks of D * D threads, one matrix per block, its indices decoded from
// the thread's flat index:
//   const size_t gid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
//   if (gid >= total) return;
//   const size_t mat = gid / (D * D);
//   const int row = (int)(gid % (D * D)) / D;  // or (gid / D) % D
//   const int col = (int)(gid % D);
//
// Why the decoding is exact: with blockDim.x == N at every launch, gid is
// bx * N + tx with tx = threadIdx.x in [0, N), computed exactly when its
// type holds bx * N + N - 1 (bx < 2^31). Each division and remainder by a
// constant c is read as a function of bx and tx alone, where the algebra
// holds for any c > 0 that divides what it must:
//   (bx * (N/Q) + tx/Q) / c = bx * (N/(Q*c)) + tx/(Q*c)   c divides N/Q
//   (bx * (N/Q) + tx/Q) % c = (tx/Q) % c                  c divides N/Q
//   ((tx/Q) % M) / c        = (tx/(Q*c)) % (M/c)          c divides M
//   ((tx/Q) % M) % c        = (tx/Q) % c                  c divides M
// (floor division of non-negative values; bx * (N/Q) is a multiple of c).
// With N = D * D, the matrix is bx (Q = N), the row tx / D and the column
// tx % D: exactly row = threadIdx.y and col = threadIdx.x of a D x D block,
// whose rewrite then applies with the block made 2D.
//
// The early return: `gid >= n` holds for a suffix of the gids, so an
// output row (column) has a thread that does not return exactly when its
// first element's thread (row 0's) does not. The rewrite keeps every
// thread to the barriers and guards instead: a row of A is staged where
// its row has a live thread, a column of B where its column has one, and
// the statements after the loop run for the live outputs only.
//
//===----------------------------------------------------------------------===//

#include "../../Patterns/SideEffects.h"
#include "SharedTilingInternal.h"
#include "optiml/Frontend/ASTUtil.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Stmt.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include <algorithm>
#include <cstdint>
#include <functional>

using namespace clang;
using namespace llvm;

namespace optiml {
namespace sharedtiling {

namespace {

/// blockIdx.x is below gridDim.x, at most 2^31 - 1.
constexpr uint64_t MaxBlockIdx = (uint64_t(1) << 31) - 1;

/// What an integer expression of the decoding is, for bx = blockIdx.x and
/// tx = threadIdx.x in [0, N) (N = blockDim.x).
struct Value {
  enum KindT {
    Const,  ///< C
    Scaled, ///< bx * C
    Mixed,  ///< bx * (N / Q) + tx / Q; Q == N: bx
    Local,  ///< (tx / Q) % M, M <= N / Q (M == N / Q: tx / Q)
  } Kind = Const;
  int64_t C = 0, Q = 1, M = 1;

  static Value local(int64_t Q, int64_t M, int64_t N) {
    return {Local, 0, Q, std::min(M, N / Q)};
  }
  uint64_t max(int64_t N) const {
    switch (Kind) {
    case Const:
      return uint64_t(C);
    case Scaled:
      return MaxBlockIdx * uint64_t(C);
    case Mixed:
      return MaxBlockIdx * uint64_t(N / Q) + uint64_t(N / Q) - 1;
    case Local:
      return uint64_t(M) - 1;
    }
    return 0;
  }
  std::string text(int64_t N) const {
    std::string Tx = Q == 1 ? "threadIdx.x" : "threadIdx.x / " + itostr(Q);
    switch (Kind) {
    case Const:
      return itostr(C);
    case Scaled:
      return "blockIdx.x * " + itostr(C);
    case Mixed:
      return Q == N ? "blockIdx.x"
                    : "blockIdx.x * " + itostr(N / Q) + " + " + Tx;
    case Local:
      return M == N / Q ? Tx : "(" + Tx + ") % " + itostr(M);
    }
    return "";
  }
};

/// Reads expressions as Values over blocks of N threads; Why says what
/// could not be read.
class Decoder {
public:
  Decoder(const EditContext &Ctx, int64_t N) : Ctx(Ctx), N(N) {}
  DenseMap<const ValueDecl *, Value> Env;
  std::string Why;
  bool TooNarrow = false; ///< Why is a type too narrow for a value

  std::optional<Value> eval(const Expr *E, unsigned Depth = 0) {
    E = E->IgnoreParens();
    // The builtin itself (asBuiltinVar looks through casts, which count).
    if (auto B = isa<PseudoObjectExpr, MSPropertyRefExpr>(E) ? asBuiltinVar(E)
                                                             : std::nullopt) {
      if (B->Dim == 'x' && B->Var == "threadIdx")
        return Value::local(1, N, N);
      if (B->Dim == 'x' && B->Var == "blockIdx")
        return Value{Value::Mixed, 0, N, 1};
      if (B->Dim == 'x' && B->Var == "blockDim")
        return Value{Value::Const, N};
      return fail(E, "reads " + B->Var.str() + "." + std::string(1, B->Dim) +
                         ", which the decoding does not take");
    }
    if (!E->isTypeDependent() && E->getType()->isIntegerType() &&
        !mentionsBuiltin(E))
      if (auto C = intValue(E, Ctx.AST)) {
        if (*C < 0)
          return fail(E, "is a negative constant");
        return Value{Value::Const, *C};
      }
    if (const auto *CE = dyn_cast<CastExpr>(E)) {
      // `(int)x` is a no-op cast around the conversion.
      if (const auto *IC = dyn_cast<ImplicitCastExpr>(CE->getSubExpr());
          IC && IC->isPartOfExplicitCast() && CE->getCastKind() == CK_NoOp)
        CE = IC;
      CastKind CK = CE->getCastKind();
      if (CK != CK_LValueToRValue && CK != CK_NoOp && CK != CK_IntegralCast)
        return fail(E, "is not an integer computation");
      auto V = eval(CE->getSubExpr(), Depth);
      return V ? checked(E, *V) : std::nullopt;
    }
    if (const auto *DR = dyn_cast<DeclRefExpr>(E)) {
      auto It = Env.find(DR->getDecl());
      if (It != Env.end())
        return It->second;
      return fail(E, "names '" + DR->getDecl()->getNameAsString() +
                         "', which is not a constant or a decoded index");
    }
    if (const auto *B = dyn_cast<BinaryOperator>(E))
      return binary(B, Depth);
    if (const auto *C = dyn_cast<CallExpr>(E))
      return call(C, Depth);
    return fail(E, "is not a constant, a builtin index or '*', '+', '/', "
                   "'%' of them");
  }

private:
  const EditContext &Ctx;
  int64_t N;

  std::optional<Value> fail(const Expr *E, const Twine &Reason) {
    std::string Text = exprText(Ctx, E);
    if (Why.empty())
      Why = (Text.empty() ? "the expression at " + where(Ctx, E)
                          : "'" + Text + "'") +
            " " + Reason.str();
    return std::nullopt;
  }

  /// \p V as the value of \p E, when \p E's type holds it.
  std::optional<Value> checked(const Expr *E, const Value &V) {
    QualType T = E->getType();
    if (!T->isIntegerType() || T->isBooleanType())
      return fail(E, "is not an integer");
    unsigned W = Ctx.AST.getIntWidth(T);
    bool Signed = T->isSignedIntegerOrEnumerationType();
    uint64_t TMax = W >= 64 ? (Signed ? uint64_t(INT64_MAX) : UINT64_MAX)
                            : (uint64_t(1) << (Signed ? W - 1 : W)) - 1;
    if (V.max(N) > TMax) {
      TooNarrow = Why.empty();
      return fail(E, "is " + V.text(N) + ", up to " + utostr(V.max(N)) +
                         " with gridDim.x up to 2^31 - 1, which '" +
                         typeName(T, Ctx.AST) + "' does not hold");
    }
    return V;
  }

  std::optional<Value> binary(const BinaryOperator *B, unsigned Depth) {
    BinaryOperatorKind Op = B->getOpcode();
    if (Op != BO_Mul && Op != BO_Add && Op != BO_Div && Op != BO_Rem)
      return fail(B, "is not '*', '+', '/' or '%'");
    auto L = eval(B->getLHS(), Depth);
    auto R = L ? eval(B->getRHS(), Depth) : std::nullopt;
    if (!L || !R)
      return std::nullopt;
    std::optional<Value> Out;
    if (Op == BO_Mul || Op == BO_Add) {
      if (R->Kind != Value::Const && L->Kind == Value::Const)
        std::swap(L, R);
      if (Op == BO_Mul && R->Kind == Value::Const && R->C > 0 &&
          R->C <= (1 << 20)) {
        if (L->Kind == Value::Mixed && L->Q == N)
          Out = Value{Value::Scaled, R->C};
        else if (L->Kind == Value::Scaled && L->C * R->C <= (1 << 20))
          Out = Value{Value::Scaled, L->C * R->C};
      }
      if (Op == BO_Add && L->Kind == Value::Local)
        std::swap(L, R);
      // bx * (N / Q) + tx / Q
      if (Op == BO_Add && L->Kind == Value::Scaled && R->Kind == Value::Local &&
          R->M == N / R->Q && L->C == N / R->Q)
        Out = Value{Value::Mixed, 0, R->Q};
      if (!Out)
        return fail(B, "is " + L->text(N) + (Op == BO_Mul ? " * " : " + ") +
                           R->text(N) +
                           ", not blockIdx.x * blockDim.x + "
                           "threadIdx.x or a part of it");
      return checked(B, *Out);
    }
    int64_t C = R->Kind == Value::Const ? R->C : 0;
    if (C <= 0 || (L->Kind != Value::Mixed && L->Kind != Value::Local))
      return fail(B, "divides " + L->text(N) + " by " + R->text(N) +
                         ", not a decoded index by a positive constant");
    bool Div = Op == BO_Div;
    // What the divisor must divide: the bx coefficient, or the modulus.
    int64_t Span = L->Kind == Value::Mixed ? N / L->Q : L->M;
    if (L->Kind == Value::Local && !Div && C >= L->M)
      return checked(B, *L); // (tx / Q) % M is below C already
    if (Span % C != 0)
      return fail(B, "takes " + L->text(N) + (Div ? " / " : " % ") + itostr(C) +
                         " with blocks of " + itostr(N) + " threads, where " +
                         itostr(C) + " does not divide " + itostr(Span) +
                         ": it is not a function of the block and the "
                         "thread's place in it alone");
    if (L->Kind == Value::Mixed)
      Out = Div ? Value{Value::Mixed, 0, L->Q * C} : Value::local(L->Q, C, N);
    else
      Out =
          Div ? Value::local(L->Q * C, L->M / C, N) : Value::local(L->Q, C, N);
    return checked(B, *Out);
  }

  /// An index helper's value: its expression with the parameters bound to
  /// the arguments' values.
  std::optional<Value> call(const CallExpr *C, unsigned Depth) {
    const FunctionDecl *FD = nullptr;
    const Expr *Ret = Depth < 4 ? indexHelperReturn(C, Ctx.AST, FD) : nullptr;
    if (!Ret)
      return fail(C, "calls a function that is not an index helper "
                     "('return <expression>;' alone, changing nothing)");
    DenseMap<const ValueDecl *, Value> Saved = Env;
    for (unsigned I = 0; I < C->getNumArgs(); ++I) {
      auto V = eval(C->getArg(I), Depth);
      if (!V)
        return std::nullopt;
      Env[FD->getParamDecl(I)] = *V;
    }
    auto V = eval(Ret, Depth + 1);
    Env = std::move(Saved);
    return V ? checked(C, *V) : std::nullopt;
  }
};

/// `if (C) return;` alone.
const IfStmt *bareReturnIf(const Stmt *S) {
  const auto *If = dyn_cast<IfStmt>(S);
  if (!If || If->getElse() || If->getInit() || If->getConditionVariable())
    return nullptr;
  const Stmt *Then = If->getThen();
  if (const auto *CS = dyn_cast<CompoundStmt>(Then); CS && CS->size() == 1)
    Then = CS->body_front();
  const auto *R = dyn_cast<ReturnStmt>(Then);
  return R && !R->getRetValue() ? If : nullptr;
}

/// Whether a later declaration of \p Stmts divides or takes a remainder of
/// an expression that names \p V: the sign of a decoded index.
bool isDecoded(ArrayRef<const Stmt *> Stmts, const VarDecl *V) {
  std::function<bool(const Stmt *)> Divides = [&](const Stmt *S) {
    if (!S)
      return false;
    if (const auto *B = dyn_cast<BinaryOperator>(S);
        B && (B->getOpcode() == BO_Div || B->getOpcode() == BO_Rem) &&
        mentions(B->getLHS(), V))
      return true;
    return any_of(S->children(), Divides);
  };
  return any_of(Stmts,
                [&](const Stmt *S) { return isa<DeclStmt>(S) && Divides(S); });
}

/// The block every launch of \p K uses, when it is one constant N x 1 x 1;
/// else 0 with \p Why.
int64_t flatBlock(const EditContext &Ctx, const ResolvedKernel &K,
                  std::string &Why) {
  if (K.Info->Launches.empty()) {
    Why = "it is never launched in this file, so its block cannot be shown "
          "to be D * D threads";
    return 0;
  }
  if (std::string P = launchProblem(*K.Info); !P.empty()) {
    Why = P;
    return 0;
  }
  int64_t N = 0;
  for (const LaunchSite &Site : K.Info->Launches) {
    const CUDAKernelCallExpr *Call = findLaunchCall(Ctx, Site);
    std::optional<Dim3> D;
    if (Call && Call->getConfig() && Call->getConfig()->getNumArgs() >= 2)
      D = constDim3(Ctx, Call->getConfig()->getArg(1));
    if (!D || (*D)[1] != 1 || (*D)[2] != 1 || (N && (*D)[0] != N)) {
      Why = "the block of " + Site.Id + " ('" + Site.Block + "') is " +
            (D ? dimText(*D) : std::string("not a constant")) +
            "; decoding a flat index into a matrix, a row and a column needs "
            "the same constant 1D block at every launch";
      return 0;
    }
    N = (*D)[0];
  }
  return N;
}

} // namespace

bool plainIndexCalls(const Stmt *S, const ASTContext &AST, unsigned Depth) {
  if (!S)
    return true;
  if (const auto *C = dyn_cast<CallExpr>(S)) {
    const FunctionDecl *FD = nullptr;
    const Expr *Ret = Depth < 4 ? indexHelperReturn(C, AST, FD) : nullptr;
    if (!Ret ||
        readsOrWritesMemory(Ret, &AST,
                            {/*ThreadCoords=*/false, /*BlockCoords=*/true}) ||
        !plainIndexCalls(Ret, AST, Depth + 1))
      return false;
  }
  return all_of(S->children(), [&](const Stmt *Child) {
    return plainIndexCalls(Child, AST, Depth);
  });
}

bool callsReadThreadCoords(const Stmt *S, unsigned Depth) {
  if (!S)
    return false;
  if (const auto *C = dyn_cast<CallExpr>(S)) {
    const FunctionDecl *Def = nullptr;
    if (const FunctionDecl *FD = C->getDirectCallee();
        FD && FD->hasBody(Def) && Def->getBody() &&
        (mentionsBuiltin(Def->getBody(), "threadIdx") ||
         mentionsBuiltin(Def->getBody(), "blockDim") ||
         (Depth < 4 && callsReadThreadCoords(Def->getBody(), Depth + 1))))
      return true;
  }
  return any_of(S->children(), [&](const Stmt *Child) {
    return callsReadThreadCoords(Child, Depth);
  });
}

// Why long: the decoding's preconditions in order (the index, the block,
// each declaration, the early return, the flat index's uses), each refusal
// naming its reason; they share the partial match as locals.
std::optional<FlatIndices> flatIndices(const EditContext &Ctx,
                                       const ResolvedKernel &K,
                                       ArrayRef<const Stmt *> Stmts, size_t &At,
                                       std::optional<int64_t> Tile,
                                       std::string &Why) {
  Why.clear();
  const FunctionDecl *FD = K.Decl;
  const auto *GidDS =
      At < Stmts.size() ? dyn_cast<DeclStmt>(Stmts[At]) : nullptr;
  const auto *Gid = GidDS && GidDS->isSingleDecl()
                        ? dyn_cast<VarDecl>(GidDS->getSingleDecl())
                        : nullptr;
  if (!Gid || !Gid->hasInit() || !Gid->getType()->isIntegerType() ||
      !isDecoded(Stmts.drop_front(At + 1), Gid))
    return std::nullopt;
  std::string G = "'" + Gid->getNameAsString() + "'";
  auto No = [&](const Twine &Reason) -> std::optional<FlatIndices> {
    Why = Reason.str();
    return std::nullopt;
  };
  FlatIndices F;
  F.Gid = Gid;
  F.GidDecl = GidDS;
  F.Threads = flatBlock(Ctx, K, Why);
  if (!F.Threads)
    return std::nullopt;
  for (int64_t D : {8, 16, 32})
    if (D * D == F.Threads)
      F.D = D;
  std::string Blocks = "blocks of " + itostr(F.Threads) + " threads";
  if (!F.D)
    return No(G + " is decoded by division, but the launches use " + Blocks +
              ": one D x D matrix per block needs 64, 256 or 1024 (8, 16 or "
              "32 squared)");
  if (Tile && *Tile != F.D)
    return No("the launches use " + Blocks + ", one " + itostr(F.D) + "x" +
              itostr(F.D) + " matrix per block: tile must be " + itostr(F.D) +
              " (got " + itostr(*Tile) + ")");
  Decoder Dec(Ctx, F.Threads);
  auto V = Dec.eval(Gid->getInit());
  if (!V || V->Kind != Value::Mixed || V->Q != 1)
    return No(G +
              " is not the flat index 'blockIdx.x * blockDim.x + "
              "threadIdx.x' (" +
              (V ? "it is " + V->text(F.Threads) : Dec.Why) +
              (Dec.TooNarrow ? ": compute it in 64 bits, '(size_t)blockIdx.x "
                               "* blockDim.x + threadIdx.x'"
                             : "") +
              ")");
  Dec.Env[Gid] = *V;
  DenseSet<const ValueDecl *> Written = writtenVars(FD->getBody());
  std::string Tail = "the row threadIdx.x / " + itostr(F.D) +
                     ", the column threadIdx.x % " + itostr(F.D) +
                     " or the matrix blockIdx.x of " + Blocks;
  for (++At; At < Stmts.size(); ++At) {
    if (const IfStmt *If = bareReturnIf(Stmts[At]);
        If && mentions(If->getCond(), Gid) && !F.Return) {
      F.Return = If;
      continue;
    }
    const auto *DS = dyn_cast<DeclStmt>(Stmts[At]);
    if (!DS)
      break;
    bool Decodes = false, Uniform = true;
    for (const Decl *D : DS->decls()) {
      const auto *VD = dyn_cast<VarDecl>(D);
      const Expr *Init = VD && VD->hasInit() ? VD->getInit() : nullptr;
      if (!Init || VD->isStaticLocal())
        return No("the declaration at " + where(Ctx, DS) +
                  " is not of initialized locals");
      auto Names = [&](ArrayRef<const ValueDecl *> Vars) {
        return any_of(
            Vars, [&](const ValueDecl *X) { return X && mentions(Init, X); });
      };
      bool Flat = mentionsBuiltin(Init, "threadIdx") ||
                  mentionsBuiltin(Init, "blockDim") ||
                  Names({Gid, F.Row, F.Col});
      Decodes |= Flat;
      // Computed from the matrix (and values the same in every thread),
      // without loads or calls: the same in the block.
      SmallVector<const ValueDecl *, 4> Same(F.Blocks.begin(), F.Blocks.end());
      Same.append(F.Derived.begin(), F.Derived.end());
      if (!Flat && Names(Same) && nonUniformRef(Init, Same, FD).empty() &&
          !readsOrWritesMemory(Init, nullptr,
                               {/*ThreadCoords=*/true, /*BlockCoords=*/true})) {
        if (Written.contains(VD))
          return No("'" + VD->getNameAsString() +
                    "', computed from the "
                    "matrix index, is written");
        F.Derived.push_back(VD);
        continue;
      }
      if (!Flat) {
        Uniform &= threadVariance(Init, FD).uniform() &&
                   !mayHaveSideEffects(Init, Ctx.AST);
        continue;
      }
      std::string Name = "'" + VD->getNameAsString() + "'";
      if (!VD->getType()->isIntegerType())
        return No(Name + " is computed from " + G + " but is not an integer");
      auto W = Dec.eval(Init);
      if (!W)
        return No(Name + " is not decoded from " + G + " exactly: " + Dec.Why);
      if (W->Kind == Value::Mixed && W->Q == F.Threads)
        F.Blocks.push_back(VD);
      else if (W->Kind == Value::Local && W->Q == F.D && W->M == F.D && !F.Row)
        F.Row = VD;
      else if (W->Kind == Value::Local && W->Q == 1 && W->M == F.D && !F.Col)
        F.Col = VD;
      else
        return No(Name + " is " + W->text(F.Threads) + ", not " + Tail);
      if (Written.contains(VD))
        return No("the index " + Name + " is written");
      Dec.Env[VD] = *W;
    }
    // Past the indices, what follows is the product's.
    if (F.Row && F.Col && !Decodes)
      break;
    if (!Decodes && !Uniform)
      return No("the declaration at " + where(Ctx, DS) +
                " differs between threads but is not decoded from " + G);
    F.Decls.push_back(DS);
  }
  if (!F.Row || !F.Col)
    return No(G + " decodes no " + (F.Row ? "column" : "row") + " (" + Tail +
              ")");
  if (Written.contains(Gid))
    return No("the flat index " + G + " is written");
  F.Decls.insert(F.Decls.begin(), GidDS);

  // gid is read by the decoding and the early return only: they go.
  std::vector<const DeclRefExpr *> All, Known;
  collectRefs(FD->getBody(), Gid, All);
  for (const DeclStmt *DS : F.Decls)
    if (DS != GidDS)
      collectRefs(DS, Gid, Known);
  if (F.Return)
    collectRefs(F.Return->getCond(), Gid, Known);
  if (All.size() != Known.size())
    return No("the flat index " + G +
              " is used past the decoding (the rewrite removes it)");
  if (F.Return) {
    const Expr *Bound = boundOf(F.Return->getCond(), Gid, /*Less=*/false);
    if (!Bound || !Bound->getType()->isArithmeticType() ||
        !nonUniformRef(Bound, {}, FD).empty() ||
        readsOrWritesMemory(Bound, &Ctx.AST) || mentionsBuiltin(Bound))
      return No("the early return 'if (" + exprText(Ctx, F.Return->getCond()) +
                ") return;' is not 'if (" + Gid->getNameAsString() +
                " >= n) return;' with n the same for every thread: the "
                "threads past the end must still reach the barriers, so the "
                "rewrite guards their loads and stores instead, which needs "
                "a bound");
  }
  return F;
}

bool flatGuards(const EditContext &Ctx, const FlatIndices &F, StringRef Y,
                StringRef R, std::string &AGuard, std::string &BGuard,
                std::string &Live) {
  std::string T = typeName(F.Gid->getType().getUnqualifiedType(), Ctx.AST);
  std::string D = itostr(F.D);
  // The flat index of the thread at (Row, Col) of the original block.
  auto NotLive = [&](StringRef Row, StringRef Col) {
    std::string Local =
        Col == "0" ? "(" + T + ")(" + Row.str() + " * " + D + ")"
        : Row == "0"
            ? "(" + T + ")" + Col.str()
            : "(" + T + ")(" + Row.str() + " * " + D + " + " + Col.str() + ")";
    std::string Flat =
        "(" + T + ")blockIdx.x * " + itostr(F.Threads) + " + " + Local;
    return renamedText(Ctx, F.Return->getCond(), {{F.Gid, "(" + Flat + ")"}},
                       false);
  };
  auto A = NotLive(Y, "0"), B = NotLive("0", "threadIdx.x"),
       L = NotLive(R, "threadIdx.x");
  if (!A || !B || !L)
    return false;
  AGuard = " && !(" + *A + ")";
  BGuard = " && !(" + *B + ")";
  Live = "!(" + *L + ")";
  return true;
}

} // namespace sharedtiling
} // namespace optiml
