//===- KernelClassify.cpp - What kind of kernel it is ---------------------===//

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

/// `acc += X[..] * Y[..]` (or `acc = acc + X*Y`) inside a loop, with X and Y
/// different arrays.
class MacFinder : public RecursiveASTVisitor<MacFinder> {
public:
  bool Found = false;
  bool Accumulates = false;
  std::string Detail;

  static const Expr *arrayBase(const Expr *E) {
    E = E->IgnoreParenImpCasts();
    if (const auto *C = dyn_cast<CallExpr>(E)) // __ldg(&a[i])
      if (C->getNumArgs() == 1)
        E = C->getArg(0)->IgnoreParenImpCasts();
    if (const auto *U = dyn_cast<UnaryOperator>(E))
      E = U->getSubExpr()->IgnoreParenImpCasts();
    if (const auto *AS = dyn_cast<ArraySubscriptExpr>(E))
      return arrayName(AS->getBase()).empty() ? nullptr : AS->getBase();
    return nullptr;
  }

  /// The array an access's base names: a variable (`a`) or a member of one
  /// (`p.a`, `m->a`); empty for anything else.
  static std::string arrayName(const Expr *Base) {
    Base = Base->IgnoreParenImpCasts();
    if (const auto *DR = dyn_cast<DeclRefExpr>(Base))
      return DR->getDecl()->getNameAsString();
    if (const auto *ME = dyn_cast<MemberExpr>(Base)) {
      std::string Outer = arrayName(ME->getBase());
      if (!Outer.empty())
        return Outer + (ME->isArrow() ? "->" : ".") +
               ME->getMemberDecl()->getNameAsString();
    }
    return "";
  }

  bool TraverseForStmt(ForStmt *S) {
    ++Depth;
    Stack.push_back(S);
    bool R = RecursiveASTVisitor::TraverseForStmt(S);
    Stack.pop_back();
    --Depth;
    return R;
  }
  bool TraverseWhileStmt(WhileStmt *S) {
    ++Depth;
    Stack.push_back(S);
    bool R = RecursiveASTVisitor::TraverseWhileStmt(S);
    Stack.pop_back();
    --Depth;
    return R;
  }

  /// The loops around the first multiply-accumulate found.
  std::vector<const Stmt *> FoundLoops;

  /// The loops around the first accumulation of a value read from memory.
  std::vector<const Stmt *> AccumulateLoops;

  void checkProduct(const Expr *E) {
    const auto *M = dyn_cast<BinaryOperator>(E->IgnoreParenImpCasts());
    if (!M || M->getOpcode() != BO_Mul) {
      if (E->IgnoreParenImpCasts() != nullptr && containsArrayRead(E)) {
        if (!Accumulates)
          AccumulateLoops = Stack;
        Accumulates = true;
      }
      return;
    }
    if (!Accumulates)
      AccumulateLoops = Stack;
    const Expr *A = arrayBase(M->getLHS()), *B = arrayBase(M->getRHS());
    if (A && B && arrayName(A) != arrayName(B)) {
      if (!Found)
        FoundLoops = Stack;
      Found = true;
      Detail = arrayName(A) + " * " + arrayName(B);
    }
    Accumulates = true;
  }

  static bool containsArrayRead(const Stmt *S) {
    if (!S)
      return false;
    if (isa<ArraySubscriptExpr>(S))
      return true;
    for (const Stmt *C : S->children())
      if (containsArrayRead(C))
        return true;
    return false;
  }

  bool VisitCompoundAssignOperator(CompoundAssignOperator *C) {
    if (Depth == 0 || C->getOpcode() != BO_AddAssign)
      return true;
    if (!isa<DeclRefExpr>(C->getLHS()->IgnoreParenImpCasts()))
      return true; // accumulating into a scalar
    checkProduct(C->getRHS());
    return true;
  }

  bool VisitBinaryOperator(BinaryOperator *B) {
    if (Depth == 0 || B->getOpcode() != BO_Assign)
      return true;
    const auto *L = dyn_cast<DeclRefExpr>(B->getLHS()->IgnoreParenImpCasts());
    const auto *Sum =
        dyn_cast<BinaryOperator>(B->getRHS()->IgnoreParenImpCasts());
    if (!L || !Sum || Sum->getOpcode() != BO_Add)
      return true;
    for (const Expr *Side : {Sum->getLHS(), Sum->getRHS()}) {
      const auto *D = dyn_cast<DeclRefExpr>(Side->IgnoreParenImpCasts());
      if (D && D->getDecl() == L->getDecl())
        checkProduct(Side == Sum->getLHS() ? Sum->getRHS() : Sum->getLHS());
    }
    // Running max/min: acc = fmaxf(acc, x[i]) counts as accumulation.
    return true;
  }

  bool VisitCallExpr(CallExpr *C) {
    if (Depth == 0)
      return true;
    StringRef N = calleeName(C);
    if ((N.contains("max") || N.contains("min")) && containsArrayRead(C))
      Accumulates = true;
    return true;
  }

private:
  unsigned Depth = 0;
  std::vector<const Stmt *> Stack;
};

/// Whether \p Loop walks a window of offsets on both sides of zero: a
/// `for` whose variable starts at a negative value (`-RADIUS`, `-r`, `-1`).
/// Summing over such a loop combines each element's neighbours (a stencil
/// or a convolution), which a reduction's loop from 0 does not.
bool isCentredWindow(const Stmt *Loop, const ASTContext &AST) {
  const auto *F = dyn_cast_or_null<ForStmt>(Loop);
  const auto *DS = F ? dyn_cast_or_null<DeclStmt>(F->getInit()) : nullptr;
  const auto *V = DS && DS->isSingleDecl()
                      ? dyn_cast<VarDecl>(DS->getSingleDecl())
                      : nullptr;
  if (!V || !V->getInit() || !V->getType()->isIntegerType())
    return false;
  const Expr *I = V->getInit()->IgnoreParenImpCasts();
  if (const auto *U = dyn_cast<UnaryOperator>(I);
      U && U->getOpcode() == UO_Minus)
    return true;
  Expr::EvalResult R;
  return !I->isValueDependent() && I->EvaluateAsInt(R, AST) &&
         R.Val.getInt().isNegative();
}

} // namespace

void classify(KernelInfo &K, const FunctionDecl *FD) {
  auto Reason = [&](KernelClass C, std::string Why) {
    K.Class = C;
    K.ClassReason = std::move(Why);
  };
  // Prefer an access whose index visibly loads (x[col[j]]) over one whose
  // index variable was loaded earlier (val[j] with j from rowptr).
  const MemoryAccess *Gather = nullptr;
  for (const MemoryAccess &A : K.Accesses)
    if (A.Space == AddressSpace::Global && A.Indirect &&
        (!Gather || (A.Index.find('[') != std::string::npos &&
                     Gather->Index.find('[') == std::string::npos)))
      Gather = &A;
  if (Gather)
    return Reason(KernelClass::GatherScatter, "index of " + Gather->Base + "[" +
                                                  Gather->Index +
                                                  "] is loaded from memory");
  for (const MemoryAccess &A : K.Accesses)
    if (A.Space == AddressSpace::Global && A.IsAtomic &&
        A.Pattern == Coalescing::Unknown)
      return Reason(KernelClass::GatherScatter,
                    "atomic updates at data-dependent addresses of " + A.Base);

  MacFinder Mac;
  Mac.TraverseStmt(FD->getBody());
  const ASTContext &AST = FD->getASTContext();
  if (Mac.Found && !Mac.FoundLoops.empty() &&
      isCentredWindow(Mac.FoundLoops.back(), AST))
    return Reason(KernelClass::Stencil, "weighted sum of " + Mac.Detail +
                                            " over offsets on both sides of "
                                            "each element");
  if (!Mac.Found && Mac.Accumulates && !Mac.AccumulateLoops.empty() &&
      isCentredWindow(Mac.AccumulateLoops.back(), AST))
    return Reason(KernelClass::Stencil, "a loop sums values read at offsets "
                                        "on both sides of each element");
  if (Mac.Found) {
    // A weighted sum over a small fixed window (convolution) is a stencil:
    // every loop around the multiply-accumulate has a small constant trip.
    const SourceManager &SM = FD->getASTContext().getSourceManager();
    std::vector<std::string> Window;
    for (const Stmt *S : Mac.FoundLoops) {
      unsigned Offset = SM.getFileOffset(SM.getFileLoc(S->getBeginLoc()));
      for (const LoopInfo &L : K.Loops)
        if (L.Range.Begin.Offset == Offset && L.TripCount && *L.TripCount <= 32)
          Window.push_back(std::to_string(*L.TripCount));
    }
    if (!Mac.FoundLoops.empty() && Window.size() == Mac.FoundLoops.size()) {
      std::string Shape;
      for (size_t I = 0; I < Window.size(); ++I)
        Shape += (I ? "x" : "") + Window[I];
      return Reason(KernelClass::Stencil, "weighted sum of " + Mac.Detail +
                                              " over a fixed " + Shape +
                                              " window");
    }
    return Reason(KernelClass::MatmulLike,
                  "multiply-accumulate of " + Mac.Detail + " in a loop");
  }

  for (const MemoryAccess &A : K.Accesses)
    if (A.Space == AddressSpace::Global && A.IsAtomic &&
        A.Pattern == Coalescing::Uniform)
      return Reason(KernelClass::Reduction,
                    "atomic accumulation into " + A.Base + "[" + A.Index + "]");
  if (!K.WarpPrimitives.empty())
    return Reason(KernelClass::Reduction, "warp shuffles combine values");
  if (!K.Shared.empty() && !K.Syncthreads.empty()) {
    for (const LoopInfo &L : K.Loops)
      if (L.Step.find(">>=") != std::string::npos ||
          L.Step.find("/=") != std::string::npos ||
          L.Step.find("*=") != std::string::npos ||
          L.Step.find("<<=") != std::string::npos)
        for (const MemoryAccess &A : K.Accesses)
          if (A.Space == AddressSpace::Shared && A.Loop == L.Id && A.IsWrite)
            return Reason(KernelClass::Reduction,
                          "tree combination in shared memory " + A.Base +
                              " (loop " + L.Id + ")");
  }
  if (Mac.Accumulates)
    return Reason(KernelClass::Reduction,
                  "a loop accumulates values read from memory");

  // Stencil: one array read at three or more distinct offsets.
  std::map<std::string, std::set<std::string>> ReadIndexes;
  for (const MemoryAccess &A : K.Accesses)
    if (A.IsRead && !A.IsWrite)
      ReadIndexes[A.Base].insert(A.Index);
  for (const auto &[Base, Indexes] : ReadIndexes)
    if (Indexes.size() >= 3)
      return Reason(KernelClass::Stencil, Base + " is read at " +
                                              std::to_string(Indexes.size()) +
                                              " neighbouring indexes");

  return Reason(KernelClass::Map, "each thread reads and writes its own "
                                  "elements");
}

} // namespace optiml
