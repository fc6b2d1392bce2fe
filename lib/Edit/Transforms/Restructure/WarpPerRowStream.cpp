//===- WarpPerRowStream.cpp - warp-per-row per=stream (CSR-stream) --------===//
//
// A thread-per-row CSR loop
//
//   int row = blockIdx.x * blockDim.x + threadIdx.x;
//   if (row < n) {
//     float sum = 0.f;
//     for (int k = ptr[row]; k < ptr[row + 1]; ++k) sum += val[k] * x[col[k]];
//     y[row] = sum;
//   }
//
// leaves most lanes idle on short rows and reads val and col with a stride
// of a row between lanes. With per=stream, a block of B threads takes
// R = B / lanes consecutive rows. Their terms lie side by side, from
// ptr[r0] to ptr[r0 + R]: the block's threads compute them B at a time
// into shared memory (each lane one term, the reads coalesced), and the
// thread of each row adds the terms of its row in order. The launches run
// ceil(n / R) blocks of B threads; the threads past the block's R rows
// return once the terms are summed.
//
// Why it is exact: each row adds the same terms, each computed by the same
// expression at the same k, in the same order, from the same zero; the
// terms are rounded to their type before the add (a multiply and add that
// the compiler fused into one instruction in the original is two here).
// The term reads only k and parameters the kernel does not write (and no
// memory the kernel writes), so which thread computes it does not matter.
// The chunks cover [ptr[r0], ptr[r0 + R]), which holds every row's terms
// when the block's offsets do not decrease; every thread checks its row's
// pair and, where one decreases (the loop of such a row runs no term, but
// its neighbours' ranges may lie outside the block's), the block's rows run
// their loops as the kernel wrote them. The offsets read are those the
// kernel reads (ptr[r0] to ptr[r0 + rows], rows the block's rows below n).
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../../Patterns/SideEffects.h"
#include "../TransformSupport.h"
#include "WarpPerRowInternal.h"
#include "optiml/Support/TextTemplate.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "llvm/ADT/STLExtras.h"

using namespace llvm;

namespace optiml {
namespace warpperrow {

namespace {

const clang::Expr *bare(const clang::Expr *E) {
  return E ? E->IgnoreParenImpCasts() : nullptr;
}

const clang::VarDecl *varOf(const clang::Expr *E) {
  const auto *D = dyn_cast_or_null<clang::DeclRefExpr>(bare(E));
  return D ? dyn_cast<clang::VarDecl>(D->getDecl()) : nullptr;
}

/// \p E, or for a local the kernel never writes, its initializer (again).
const clang::Expr *followLocal(const clang::Expr *E,
                               ArrayRef<const clang::ValueDecl *> Written) {
  for (int Depth = 0; Depth < 4; ++Depth) {
    const clang::VarDecl *V = varOf(E);
    if (!V || isa<clang::ParmVarDecl>(V) || !V->hasLocalStorage() ||
        !V->getInit() || is_contained(Written, V))
      return bare(E);
    E = V->getInit();
  }
  return bare(E);
}

/// The parameter \p E names: `p` for a pointer parameter, `A` for `A.p`, a
/// pointer member of a struct parameter passed by value; else null.
const clang::ParmVarDecl *offsetsRoot(const clang::Expr *E) {
  E = bare(E);
  if (!E || !E->getType()->isPointerType())
    return nullptr;
  if (const auto *M = dyn_cast<clang::MemberExpr>(E)) {
    if (M->isArrow())
      return nullptr;
    const auto *P = dyn_cast_or_null<clang::ParmVarDecl>(varOf(M->getBase()));
    return P && P->getType()->isRecordType() ? P : nullptr;
  }
  return dyn_cast_or_null<clang::ParmVarDecl>(varOf(E));
}

/// `off[i]` (Plus 0) or `off[i + 1]` / `off[1 + i]` (Plus 1), with off a
/// pointer parameter (or member, offsetsRoot()) and i the item index: off
/// (without casts), else null.
const clang::Expr *offsetRead(const clang::Expr *E, const clang::VarDecl *Index,
                              int Plus, const clang::ASTContext &AST) {
  const auto *AS = dyn_cast_or_null<clang::ArraySubscriptExpr>(E);
  if (!AS)
    return nullptr;
  // getBase() takes the side whose type is not an integer; in a template
  // an index of a dependent type is not, so the pointer is found by type.
  const clang::Expr *Base = bare(AS->getLHS()), *Idx = bare(AS->getRHS());
  if (!Base->getType()->isPointerType())
    std::swap(Base, Idx);
  if (!offsetsRoot(Base))
    return nullptr;
  if (Plus == 0)
    return varOf(Idx) == Index ? Base : nullptr;
  const auto *Add = dyn_cast<clang::BinaryOperator>(Idx);
  if (!Add || Add->getOpcode() != clang::BO_Add)
    return nullptr;
  auto IsOne = [&](const clang::Expr *X) {
    auto V = bare(X)->getIntegerConstantExpr(AST);
    return V && *V == 1;
  };
  if ((varOf(Add->getLHS()) == Index && IsOne(Add->getRHS())) ||
      (varOf(Add->getRHS()) == Index && IsOne(Add->getLHS())))
    return Base;
  return nullptr;
}

/// The term e of a loop body `acc += e` (`acc = acc + e`, `acc = e +
/// acc`), braced or not, or null. A counting while's body ends with its
/// step \p Inc, which is not part of the sum.
const clang::Expr *termOf(const clang::Stmt *S, const clang::VarDecl *Acc,
                          const clang::Expr *Inc) {
  if (const auto *CS = dyn_cast<clang::CompoundStmt>(S)) {
    size_t N = CS->size();
    if (N == 2 && Inc && CS->body_back() == Inc)
      N = 1;
    if (N != 1)
      return nullptr;
    S = CS->body_front();
  }
  return addedTerm(S, Acc);
}

/// The expression of an instantiation of the kernel template standing at
/// \p E's place in its pattern (instantiated statements keep the
/// pattern's source locations), without parentheses and implicit casts;
/// null if none.
const clang::Expr *instantiatedExpr(const clang::Expr *E,
                                    const clang::FunctionDecl *Inst) {
  clang::SourceRange R = E->getSourceRange();
  SmallVector<const clang::Stmt *, 32> Work = {Inst->getBody()};
  while (!Work.empty()) {
    const clang::Stmt *S = Work.pop_back_val();
    if (!S)
      continue;
    if (const auto *X = dyn_cast<clang::Expr>(S); X && X->getSourceRange() == R)
      return X->IgnoreParenImpCasts();
    for (const clang::Stmt *C : S->children())
      Work.push_back(C);
  }
  return nullptr;
}

/// Why the types the stream form writes do not hold in \p Kernel, a
/// template whose pattern leaves them open: in every instantiation the
/// offsets must be integers and the term of the sum's own arithmetic type
/// (the shared terms are declared with the sum's type as written); empty
/// when they hold.
std::string instantiatedTypesProblem(const clang::FunctionDecl *Kernel,
                                     const clang::Expr *Off,
                                     const clang::Expr *Term,
                                     const clang::VarDecl *Acc) {
  std::vector<const clang::FunctionDecl *> Insts =
      templateInstantiations(Kernel);
  if (Insts.empty())
    return "the kernel template is never instantiated here, so the types of "
           "its offsets, terms and sum are unknown";
  for (const clang::FunctionDecl *I : Insts) {
    const clang::Expr *IOff = instantiatedExpr(Off, I);
    const clang::Expr *ITerm = instantiatedExpr(Term, I);
    const clang::VarDecl *IAcc = instantiatedVar(Acc, I);
    std::string In = " in " + instantiationName(I);
    if (!IOff || !IOff->getType()->isPointerType() ||
        !IOff->getType()->getPointeeType()->isIntegerType())
      return "the row offsets are not integers" + In;
    if (!ITerm || !IAcc || !ITerm->getType()->isArithmeticType() ||
        !IAcc->getType()->isArithmeticType())
      return "the sum and its terms are not of arithmetic types" + In;
    if (mayHaveSideEffects(ITerm, I->getASTContext()))
      return "the term may have side effects" + In;
    if (!I->getASTContext().hasSameUnqualifiedType(ITerm->getType(),
                                                   IAcc->getType()))
      return "the term is a '" +
             typeName(ITerm->getType(), I->getASTContext()) +
             "' and the sum a '" +
             typeName(IAcc->getType(), I->getASTContext()) + "'" + In +
             "; the terms are kept in the sum's type, which would round them";
  }
  return "";
}

/// The first variable \p S refers to that is neither \p K nor a parameter
/// or global the kernel leaves alone, or null.
const clang::VarDecl *foreignVar(const clang::Stmt *S, const clang::VarDecl *K,
                                 ArrayRef<const clang::ValueDecl *> Written) {
  if (!S)
    return nullptr;
  if (const auto *D = dyn_cast<clang::DeclRefExpr>(S))
    if (const auto *V = dyn_cast<clang::VarDecl>(D->getDecl());
        V && V != K &&
        ((V->hasLocalStorage() && !isa<clang::ParmVarDecl>(V)) ||
         is_contained(Written, V)))
      return V;
  for (const clang::Stmt *C : S->children())
    if (const clang::VarDecl *V = foreignVar(C, K, Written))
      return V;
  return nullptr;
}

} // namespace

// Why long: the CSR shape's preconditions in order (one loop summing one
// accumulator from zero, its bounds two neighbouring offsets, its term a
// function of k and unwritten parameters), each refusal with its reason.
Error planStream(const EditContext &Ctx, const Edit &E, Plan &P) {
  auto No = [&](const Twine &Why) {
    return reject(E, "not-applicable", "params.per=stream: " + Why);
  };
  const clang::ASTContext &AST = Ctx.AST;
  if (P.Loops.size() != 1)
    return No("the item's body has " + Twine(P.Loops.size()) +
              " inner loops; the stream form takes one");
  const InnerLoop &L = P.Loops.front();
  if (!L.isWhile() && !L.InitDeclares)
    return No("the loop at " + where(Ctx, L.For) +
              " does not declare its counter in its 'for' header");
  if (L.Hinted)
    return No("'#pragma unroll' stands before the loop at " +
              where(Ctx, L.For));
  if (L.Writes || L.Reductions.size() != 1 ||
      L.Reductions[0].Op != Reduction::Sum || L.Reductions[0].Member ||
      L.Reductions[0].Cond || L.Reductions[0].DependentCall)
    return No("the loop at " + where(Ctx, L.For) +
              " does not only sum one accumulator");
  const clang::VarDecl *Acc = L.Reductions[0].Acc;
  std::vector<const clang::ValueDecl *> Written =
      writtenDecls(P.Kernel.Decl->getBody());
  // Bounds: off[i] and off[i + 1] of one parameter the kernel does not
  // write, through unwritten locals.
  const clang::Expr *Off =
      offsetRead(followLocal(L.Start, Written), P.Item.Index, 0, AST);
  const clang::Expr *OffEnd =
      L.Cond ? offsetRead(followLocal(L.Cond->getRHS(), Written), P.Item.Index,
                          1, AST)
             : nullptr;
  if (!Off || !OffEnd || L.Cond->getOpcode() != clang::BO_LT ||
      writtenText(Ctx, Off) != writtenText(Ctx, OffEnd) ||
      offsetsRoot(Off) != offsetsRoot(OffEnd))
    return No("the loop at " + where(Ctx, L.For) + " does not run from off[" +
              P.Item.Index->getName().str() + "] to below off[" +
              P.Item.Index->getName().str() +
              " + 1] of one array parameter (CSR row offsets)");
  std::string OffText = writtenText(Ctx, Off);
  const clang::ParmVarDecl *Root = offsetsRoot(Off);
  clang::QualType OffElem = Off->getType()->getPointeeType();
  if (!OffElem->isIntegerType() && !OffElem->isDependentType())
    return No("the row offsets '" + OffText + "' are not integers");
  for (const MemWrite &W : rowWrites(P.Kernel.Decl->getBody())) {
    const clang::ValueDecl *B = declOf(W.Base);
    if (!B)
      return No("the kernel writes through '" + looseExprText(Ctx, W.Base) +
                "', which cannot be followed");
    if (B == Root || writtenText(Ctx, W.Base) == OffText)
      return No("the kernel writes the row offsets '" + OffText + "'");
  }
  if (is_contained(Written, Root))
    return No("the kernel assigns '" + Root->getName() +
              "', which holds the row offsets");
  // The term: a function of k and parameters nothing writes, reading no
  // memory the kernel writes.
  const clang::Expr *Term =
      termOf(L.body(), Acc, L.isWhile() ? L.Inc : nullptr);
  if (!Term)
    return No("the body of the loop at " + where(Ctx, L.For) +
              " is not one statement '" + Acc->getName() + " += e'" +
              (L.isWhile() ? " and its step" : ""));
  // In a template whose pattern leaves the types open, the types and the
  // term's calls are checked in every instantiation.
  bool Open = OffElem->isDependentType() || Term->isTypeDependent() ||
              Acc->getType()->isDependentType();
  if (Open) {
    if (std::string Why =
            instantiatedTypesProblem(P.Kernel.Decl, Off, Term, Acc);
        !Why.empty())
      return No(Why);
  } else if (mayHaveSideEffects(Term, AST))
    return No("the term '" + looseExprText(Ctx, Term) +
              "' may have side effects");
  if (const clang::VarDecl *V = foreignVar(Term, L.Var, Written))
    return No("the term '" + looseExprText(Ctx, Term) + "' reads '" +
              V->getName() +
              "', which the kernel writes or each thread holds; another "
              "thread of the block computes it");
  for (const MemWrite &W : rowWrites(P.Kernel.Decl->getBody()))
    if (const clang::ValueDecl *B = declOf(W.Base); B && mentions(Term, B))
      return No("the term '" + looseExprText(Ctx, Term) + "' reads '" +
                B->getName() + "', which the kernel writes");
  if (!Open && (!Term->getType()->isArithmeticType() ||
                !Acc->getType()->isArithmeticType()))
    return No("the sum and its terms are not of arithmetic types");
  // The sum starts from zero: its declaration sets it so, and nothing
  // between it and the loop touches it.
  const clang::Stmt *AccDecl = nullptr;
  bool Between = false, Touched = false;
  for (const clang::Stmt *S : P.Item.Body) {
    if (S == L.For || S == L.Hinted)
      break;
    if (const auto *DS = dyn_cast<clang::DeclStmt>(S);
        DS && is_contained(DS->decls(), Acc)) {
      AccDecl = S;
      Between = true;
      continue;
    }
    Touched |= Between && mentions(S, Acc);
  }
  if (!AccDecl || !Acc->getInit() || !isZero(Acc->getInit(), AST, 0) || Touched)
    return No("'" + Acc->getName() +
              "' is not declared as zero in the item's body before the loop "
              "and left alone until it");
  int64_t Rows = P.itemsPerBlock();
  if (Rows < 1 || Rows > P.BlockSize)
    return No("block_size / lanes rows per block must be at least 1");
  Plan::Stream S;
  S.Terms = E.getInt("terms").value_or(1);
  if (S.Terms < 1 || S.Terms > 8)
    return reject(E, "params", "params.terms must be in [1, 8]");
  S.Offsets = Off;
  S.Term = Term;
  S.OffsetType = typeName(OffElem.getUnqualifiedType(), AST);
  // An open term's type is the sum's in every instantiation (checked).
  S.TermType = typeName(
      (Open ? Acc->getType() : Term->getType()).getUnqualifiedType(), AST);
  S.AccType = typeName(Acc->getType().getUnqualifiedType(), AST);
  S.IndexType = typeName(P.Item.Index->getType().getUnqualifiedType(), AST);
  P.Streamed = S;
  return Error::success();
}

// Why long: the rewrite's four places (the index, the block's pass before
// the guard, the loop, the launches), the pass one template.
Expected<clang::tooling::Replacements>
rewriteStream(const EditContext &Ctx, const Edit &E, const Plan &P) {
  const Plan::Stream &S = *P.Streamed;
  const InnerLoop &L = P.Loops.front();
  clang::tooling::Replacements Repls;
  auto Span = [&](const clang::Stmt *St) -> Expected<SourceSpan> {
    if (auto Sp = looseStmtSpan(Ctx, St))
      return *Sp;
    return reject(E, "macro",
                  "the statement at " + where(Ctx, St) +
                      " is written inside a macro expansion");
  };
  auto InitSp = looseExprSpan(Ctx, P.Item.Index->getInit());
  if (!InitSp)
    return reject(E, "macro", "the item index is written inside a macro");
  auto GuardSp = Span(P.Item.Guard);
  auto LoopSp = Span(L.For);
  if (!GuardSp)
    return GuardSp.takeError();
  if (!LoopSp)
    return LoopSp.takeError();
  auto BoundSp = looseExprSpan(Ctx, P.Item.Bound);
  if (!BoundSp)
    return reject(E, "macro", "the item bound is written inside a macro");
  std::string Bound = parenthesize(looseExprText(Ctx, P.Item.Bound));
  int64_t Rows = P.itemsPerBlock();
  std::string R = std::to_string(Rows), T = std::to_string(P.BlockSize);
  std::string K = L.Var->getNameAsString();
  std::string KT = typeName(L.Var->getType().getUnqualifiedType(), Ctx.AST);
  auto Fresh = [&](StringRef Base) { return freshName(Ctx.Code, Base); };
  std::string Ptrs = Fresh("rowOffsets"), Terms = Fresh("rowTerms"),
              Base = Fresh("rowBase"), Here = Fresh("rowsHere"), I = Fresh("i"),
              InOrder = Fresh("rowsInOrder"),
              Sum = Fresh(P.Loops.front().Reductions[0].Acc->getName().str() +
                          "Stream"),
              First = Fresh("first"), Last = Fresh("last"),
              Mine = Fresh("mine"), MineEnd = Fresh("mineEnd"),
              Chunk = Fresh("chunk"), Lo = Fresh("lo"), Hi = Fresh("hi"),
              J = Fresh("j");
  // A 64-bit index keeps the block's first row in 64 bits.
  clang::QualType IdxT = P.Item.Index->getType();
  std::string BlockRow =
      !IdxT->isDependentType() && Ctx.AST.getTypeSize(IdxT) > 32
          ? "(" + S.IndexType + ")blockIdx.x * " + R
          : "blockIdx.x * " + R;
  if (Error Err = addReplacement(
          Repls, replaceSpan(Ctx, *InitSp, BlockRow + " + threadIdx.x"), E))
    return std::move(Err);
  std::string Indent = indentationAt(Ctx.Code, GuardSp->Begin.Offset);
  // Each thread's terms of a chunk: one, or S.Terms a block apart (the
  // loads coalesced, issued together).
  std::string C = std::to_string(P.BlockSize * S.Terms);
  std::string Q = S.Terms == 1 ? "" : Fresh("t");
  std::vector<std::pair<StringRef, std::string>> Names = {
      {"KT", KT},
      {"K", K},
      {"Q", Q},
      {"P", std::to_string(S.Terms)},
      {"T", T},
      {"Chunk", Chunk},
      {"OT", S.OffsetType},
      {"Last", Last},
      {"Terms", Terms},
      {"Term", writtenText(Ctx, S.Term)}};
  std::string Compute = fillTemplate(S.Terms == 1 ? R"(    {
      const ${KT} ${K} = ${Chunk} + (${OT})threadIdx.x;
      if (${K} < ${Last})
        ${Terms}[threadIdx.x] = ${Term};
    })"
                                                  : R"(    #pragma unroll
    for (int ${Q} = 0; ${Q} < ${P}; ++${Q}) {
      const ${KT} ${K} = ${Chunk} + (${OT})(${Q} * ${T}) + (${OT})threadIdx.x;
      if (${K} < ${Last})
        ${Terms}[${Q} * ${T} + threadIdx.x] = ${Term};
    })",
                                     Names);
  std::string Pass = fillTemplate(
      R"(// warp-per-row per=stream: this block's ${R} rows; its ${T} threads compute the rows' terms together, ${C} at a time, and each row's thread adds its own in order.
__shared__ ${OT} ${Ptrs}[${R1}];
__shared__ ${TT} ${Terms}[${C}];
const ${IT} ${Base} = ${BlockRow};
const int ${Here} = ${Bound} - ${Base} < ${R} ? (int)(${Bound} - ${Base}) : ${R};
for (int ${I} = threadIdx.x; ${I} <= ${Here}; ${I} += ${T})
  ${Ptrs}[${I}] = ${Off}[${Base} + ${I}];
__syncthreads();
// Where a row's offsets decrease, the rows run their own loops.
const bool ${InOrder} = __syncthreads_and((int)threadIdx.x >= ${Here} || ${Ptrs}[threadIdx.x] <= ${Ptrs}[threadIdx.x + 1]);
${AT} ${Sum} = 0;
if (${InOrder} && ${Here} > 0) {
  const ${OT} ${First} = ${Ptrs}[0], ${Last} = ${Ptrs}[${Here}];
  ${OT} ${Mine} = 0, ${MineEnd} = 0;
  if ((int)threadIdx.x < ${Here}) {
    ${Mine} = ${Ptrs}[threadIdx.x];
    ${MineEnd} = ${Ptrs}[threadIdx.x + 1];
  }
  for (${OT} ${Chunk} = ${First}; ${Chunk} < ${Last}; ${Chunk} += ${C}) {
${Compute}
    __syncthreads();
    const ${OT} ${Lo} = ${Mine} > ${Chunk} ? ${Mine} : ${Chunk};
    const ${OT} ${Hi} = ${MineEnd} < ${Chunk} + ${C} ? ${MineEnd} : ${Chunk} + ${C};
    for (${OT} ${J} = ${Lo}; ${J} < ${Hi}; ++${J})
      ${Sum} += ${Terms}[${J} - ${Chunk}];
    __syncthreads();
  }
}
if (threadIdx.x >= ${R})
  return;
)",
      {{"R", R},
       {"R1", std::to_string(Rows + 1)},
       {"T", T},
       {"C", C},
       {"Compute", Compute},
       {"OT", S.OffsetType},
       {"TT", S.TermType},
       {"AT", S.AccType},
       {"IT", S.IndexType},
       {"BlockRow", BlockRow},
       {"KT", KT},
       {"K", K},
       {"Ptrs", Ptrs},
       {"Terms", Terms},
       {"Base", Base},
       {"Here", Here},
       {"Bound", Bound},
       {"I", I},
       {"Off", writtenText(Ctx, S.Offsets)},
       {"InOrder", InOrder},
       {"Sum", Sum},
       {"First", First},
       {"Last", Last},
       {"Mine", Mine},
       {"MineEnd", MineEnd},
       {"Chunk", Chunk},
       {"Lo", Lo},
       {"Hi", Hi},
       {"J", J},
       {"Term", writtenText(Ctx, S.Term)}});
  if (Error Err = addReplacement(
          Repls,
          clang::tooling::Replacement(Ctx.FileName, GuardSp->Begin.Offset, 0,
                                      indentLines(Pass, Indent) + Indent),
          E))
    return std::move(Err);
  std::string LoopIndent = indentationAt(Ctx.Code, LoopSp->Begin.Offset);
  std::string LoopText =
      Ctx.Code.slice(LoopSp->Begin.Offset, LoopSp->End.Offset).str();
  std::string AccName = L.Reductions[0].Acc->getNameAsString();
  if (Error Err = addReplacement(
          Repls,
          replaceSpan(Ctx, *LoopSp,
                      "if (" + InOrder + ") {\n" + LoopIndent + "  " + AccName +
                          " += " + Sum + ";\n" + LoopIndent + "} else {\n" +
                          LoopIndent + "  " + indentLines(LoopText, "  ") +
                          "\n" + LoopIndent + "}"),
          E))
    return std::move(Err);
  if (Error Err = rewriteLaunches(Ctx, E, P, Repls))
    return std::move(Err);
  return Repls;
}

} // namespace warpperrow
} // namespace optiml
