//===- Specialize.cpp - A copy of the body for the launches' constants ----===//
//
// A kernel written for sizes known only at run time (`int n` as a loop
// bound, `i % cols`) is compiled for every value; the launches of one
// program often pass the same constant each time. `specialize` puts a copy
// of the body, with those parameters redeclared as constexpr, under
// `if (n == 32)`, and keeps the body as written for any other value:
//
//   __global__ void k(int n, ...) {
//     __shared__ float t[32][33];     // hoisted: allocated once
//     if (n == 32) {
//       constexpr int n = 32;         // shadows the parameter
//       <body>
//     } else {
//       <body>
//     }
//   }
//
// The condition reads kernel parameters only, so every thread of a launch
// takes the same branch and barriers inside stay matched. Exact: the copy
// computes what the body computes for that value. Refused: a parameter the
// body writes or takes the address of (it would write a constant), a
// launch passing something that is not an integer constant or another
// value than the rest, labels (a copy would define them twice), static
// `__shared__` declarations inside nested blocks (each copy would allocate
// its own), preprocessing directives in the body other than loop hints.
//
//===----------------------------------------------------------------------===//

#include "../Restructure/PlannedTransform.h"
#include "../TransformSupport.h"
#include "optiml/Edit/Checks.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/StringExtras.h"

#include <set>

using namespace llvm;
using namespace clang;

namespace optiml {
namespace {

struct SpecValue {
  const ParmVarDecl *Param = nullptr;
  int64_t Value = 0;
  std::string Type;
};

struct SpecPlan {
  ResolvedKernel Kernel;
  std::vector<SpecValue> Values;
  /// Top-level declarations moved before the branch: the __shared__ ones
  /// and the constants their types name, in the body's order.
  std::vector<const Stmt *> Hoisted;
  unsigned BodyBegin = 0, BodyEnd = 0; ///< inside the braces
  std::string Indent;
  std::string Why; ///< what the constants make constant
};

/// Where a parameter decides more than a value: a loop's header or a
/// divisor (what a constant turns into unrolling and shifts).
struct Decides : RecursiveASTVisitor<Decides> {
  const ValueDecl *P;
  bool Loop = false, Divisor = false;
  explicit Decides(const ValueDecl *P) : P(P) {}
  void loop(const Stmt *Header) { Loop |= Header && mentions(Header, P); }
  bool VisitForStmt(ForStmt *F) {
    loop(F->getCond());
    loop(F->getInc());
    loop(F->getInit());
    return true;
  }
  bool VisitWhileStmt(WhileStmt *W) {
    loop(W->getCond());
    return true;
  }
  bool VisitDoStmt(DoStmt *D) {
    loop(D->getCond());
    return true;
  }
  bool VisitBinaryOperator(BinaryOperator *B) {
    BinaryOperatorKind K = B->getOpcode();
    if ((K == BO_Div || K == BO_Rem || K == BO_DivAssign ||
         K == BO_RemAssign) &&
        mentions(B->getRHS(), P))
      Divisor = true;
    return true;
  }
};

/// Every variable declared inside \p S (any depth), and the labels.
struct Declared : RecursiveASTVisitor<Declared> {
  std::vector<const VarDecl *> Vars;
  const LabelStmt *Label = nullptr;
  bool VisitVarDecl(VarDecl *V) {
    Vars.push_back(V);
    return true;
  }
  bool VisitLabelStmt(LabelStmt *L) {
    if (!Label)
      Label = L;
    return true;
  }
};

/// Local variables a statement names (array bounds in its types included).
struct LocalRefs : RecursiveASTVisitor<LocalRefs> {
  std::vector<const VarDecl *> Vars;
  bool VisitDeclRefExpr(DeclRefExpr *R) {
    if (const auto *V = dyn_cast<VarDecl>(R->getDecl()))
      if (V->isLocalVarDecl())
        Vars.push_back(V);
    return true;
  }
};

bool isShared(const VarDecl *V) { return V->hasAttr<CUDASharedAttr>(); }

/// An integer a constant can stand for (not bool, an enum or a template
/// parameter's type).
bool isSpecializable(QualType T) {
  return !T->isDependentType() && T->isIntegerType() && !T->isBooleanType() &&
         !T->isEnumeralType();
}

class Specialize : public PlannedTransform<SpecPlan> {
public:
  StringRef kind() const override { return "specialize"; }
  StringRef description() const override {
    return "a copy of the kernel's body for the integer constants every "
           "launch passes (loop bounds, divisors), beside the body as "
           "written for other values";
  }
  TargetKind targetKind() const override { return TargetKind::Kernel; }
  std::vector<ParamSpec> params() const override {
    return {ParamSpec::string(
        "param", "the one integer parameter to specialize (default: every "
                 "one that each launch passes the same constant for)")};
  }

  Applicability prepare(const EditContext &Ctx,
                        StringRef Target) const override {
    Applicability A;
    Edit E;
    auto P = planDefault(Ctx, Target, A, E);
    if (!P)
      return A;
    std::vector<std::string> Parts;
    for (const SpecValue &V : P->Values)
      Parts.push_back("'" + V.Param->getNameAsString() + "' is " +
                      std::to_string(V.Value));
    A.Reason = "every launch passes the same constant: " + join(Parts, ", ") +
               " (" + P->Why + "); the copy compiles with it constant";
    A.Suggestions.push_back(E);
    return A;
  }

protected:
  Expected<SpecPlan> analyze(const EditContext &Ctx,
                             const Edit &E) const override {
    auto K = resolveKernel(Ctx, E, E.Target);
    if (!K)
      return K.takeError();
    std::string Name = "kernel '" + E.Target + "'";
    auto NotApplicable = [&](const Twine &Why) {
      return reject(E, "not-applicable", Name + ": " + Why);
    };
    if (K->Info->InMacro)
      return reject(E, "macro", Name + " is defined inside a macro");
    const FunctionDecl *FD = K->Decl;
    const auto *Body = dyn_cast_or_null<CompoundStmt>(FD->getBody());
    if (!Body || Body->getLBracLoc().isMacroID() ||
        Body->getRBracLoc().isMacroID() || !Ctx.inFile(Body->getLBracLoc()))
      return NotApplicable("its body is not written out in this file");
    if (K->Info->Launches.empty())
      return NotApplicable("it is never launched in this file, so the "
                           "values its parameters take are unknown");

    SpecPlan P;
    P.Kernel = *K;
    std::optional<std::string> Only = E.getString("param");
    if (Only && !any_of(FD->parameters(), [&](const ParmVarDecl *D) {
          return D->getName() == *Only;
        }))
      return reject(E, "params", Name + " has no parameter '" + *Only + "'");
    Declared Inside;
    Inside.TraverseStmt(const_cast<CompoundStmt *>(Body));
    DenseSet<const ValueDecl *> Written =
        writtenVars(const_cast<CompoundStmt *>(Body));
    std::vector<std::string> Refused, Decisions;
    for (unsigned I = 0; I < FD->getNumParams(); ++I) {
      const ParmVarDecl *D = FD->getParamDecl(I);
      if (Only && D->getName() != *Only)
        continue;
      if (!isSpecializable(D->getType())) {
        if (Only)
          return NotApplicable("'" + *Only + "' is not an integer");
        continue;
      }
      auto Why = constantOf(Ctx, *K->Info, D, I, Inside, Written);
      if (!Why) {
        Refused.push_back(rejectionReason(Why.takeError()));
        continue;
      }
      P.Values.push_back(*Why);
      Decides U(D);
      U.TraverseStmt(const_cast<CompoundStmt *>(Body));
      if (U.Loop)
        Decisions.push_back("'" + D->getNameAsString() + "' bounds a loop");
      else if (U.Divisor)
        Decisions.push_back("'" + D->getNameAsString() + "' is a divisor");
    }
    if (P.Values.empty())
      return NotApplicable(Refused.empty()
                               ? Twine("it has no integer parameter")
                               : Twine(join(Refused, "; ")));
    if (Decisions.empty() && !Only)
      return NotApplicable(
          "no loop bound or divisor uses its constant parameters, so a "
          "copy with them constant would compile to the same code (give "
          "params.param to specialize one anyway)");
    P.Why = Decisions.empty() ? "asked for" : join(Decisions, ", ");

    if (Inside.Label)
      return NotApplicable("it has a label ('" +
                           Inside.Label->getDecl()->getName() +
                           "'), which a copy would define twice");
    if (Error Err = planHoisting(Ctx, E, Body, P))
      return std::move(Err);

    const SourceManager &SM = Ctx.AST.getSourceManager();
    P.BodyBegin = SM.getFileOffset(Body->getLBracLoc()) + 1;
    P.BodyEnd = SM.getFileOffset(Body->getRBracLoc());
    // The body is repeated as written: a directive in it would be edit
    // text, which may hold loop hints only.
    std::vector<CheckFailure> Directives = checkEditDirectives(
        Ctx.AST.getLangOpts(), Ctx.Code,
        {ByteRange{P.BodyBegin, P.BodyEnd, "the kernel's body"}});
    if (!Directives.empty())
      return NotApplicable("its body holds a preprocessing directive (" +
                           Directives.front().Message +
                           "), which the copy would repeat");
    P.Indent =
        Body->body_empty()
            ? indentationAt(Ctx.Code, P.BodyBegin - 1) + "  "
            : indentationAt(Ctx.Code, SM.getFileOffset(SM.getExpansionLoc(
                                          Body->body_front()->getBeginLoc())));
    return P;
  }

  Expected<tooling::Replacements> rewrite(const EditContext &Ctx, const Edit &E,
                                          const SpecPlan &P) const override {
    std::vector<TextEdit> Cut;
    std::string Hoisted;
    for (const Stmt *S : P.Hoisted) {
      std::optional<SourceSpan> Sp = stmtSpan(Ctx, S);
      if (!Sp)
        return reject(E, "macro",
                      "kernel '" + E.Target +
                          "': a __shared__ declaration is written through a "
                          "macro");
      auto [B, End] = ownLines(Ctx.Code, Sp->Begin.Offset, Sp->End.Offset);
      Cut.push_back({B, End - B, ""});
      Hoisted += P.Indent +
                 Ctx.Code.slice(Sp->Begin.Offset, Sp->End.Offset).str() + "\n";
    }
    // The body after the cuts, trailing indentation off, on lines of its
    // own: once under the condition, once under else.
    std::string Body =
        StringRef(spliceText(Ctx.Code, P.BodyBegin, P.BodyEnd, Cut))
            .rtrim(" \t")
            .str();
    if (!StringRef(Body).starts_with("\n"))
      Body = "\n" + StringRef(Body).ltrim(" \t").str();
    if (!StringRef(Body).ends_with("\n"))
      Body += "\n";
    std::vector<std::string> Conds;
    std::string Consts;
    for (const SpecValue &V : P.Values) {
      std::string N = V.Param->getNameAsString();
      Conds.push_back(N + " == " + std::to_string(V.Value));
      Consts += "\n" + P.Indent + "  constexpr " + V.Type + " " + N + " = " +
                std::to_string(V.Value) + ";";
    }
    // The closing brace keeps its indentation when it starts its line.
    std::string Close = indentationAt(Ctx.Code, P.BodyEnd);
    if (P.BodyEnd < Close.size() ||
        Ctx.Code.slice(P.BodyEnd - Close.size(), P.BodyEnd) != Close ||
        (P.BodyEnd > Close.size() &&
         Ctx.Code[P.BodyEnd - Close.size() - 1] != '\n'))
      Close.clear();
    std::string Text = "\n" + Hoisted + P.Indent + "if (" +
                       join(Conds, " && ") + ") {" + Consts + Body + P.Indent +
                       "} else {" + Body + P.Indent + "}\n" + Close;
    tooling::Replacements Repls;
    if (Error Err = addReplacement(
            Repls, replaceSpan(Ctx, offsetSpan(P.BodyBegin, P.BodyEnd), Text),
            E))
      return std::move(Err);
    return Repls;
  }

private:
  /// The constant every launch passes for parameter \p I, or why none.
  Expected<SpecValue>
  constantOf(const EditContext &Ctx, const KernelInfo &K, const ParmVarDecl *D,
             unsigned I, const Declared &Inside,
             const DenseSet<const ValueDecl *> &Written) const {
    Edit E = defaultEdit(kind(), K.QualifiedName);
    std::string N = "'" + D->getNameAsString() + "'";
    QualType T = D->getType();
    if (D->getName().empty())
      return reject(E, "not-applicable",
                    "parameter " + Twine(I) + " has no name");
    if (Written.count(D))
      return reject(E, "not-applicable",
                    N + " is written or its address taken in the kernel");
    for (const VarDecl *V : Inside.Vars)
      if (V->getName() == D->getName())
        return reject(E, "not-applicable",
                      N + " is declared again inside the body (already "
                          "specialized?)");
    std::optional<int64_t> Value;
    std::string First;
    for (const LaunchSite &L : K.Launches) {
      const CUDAKernelCallExpr *Call = findLaunchCall(Ctx, L);
      if (!Call || Call->getNumArgs() <= I)
        return reject(E, "not-applicable",
                      "the launch " + L.Id + " was not found");
      const Expr *A = Call->getArg(I);
      std::optional<int64_t> V =
          A->isValueDependent() ? std::nullopt : intValue(A, Ctx.AST);
      if (!V)
        return reject(E, "not-applicable",
                      N + " gets '" +
                          (I < L.Args.size() ? L.Args[I] : std::string("?")) +
                          "' at " + L.Id + ", not a constant");
      if (T->isUnsignedIntegerType() && *V < 0)
        return reject(E, "not-applicable",
                      N + " gets a negative value at " + L.Id);
      if (Value && *V != *Value)
        return reject(E, "not-applicable",
                      N + " is " + std::to_string(*Value) + " at " + First +
                          " but " + std::to_string(*V) + " at " + L.Id);
      if (!Value) {
        Value = V;
        First = L.Id;
      }
    }
    return SpecValue{D, *Value, typeName(T, Ctx.AST)};
  }

  /// The top-level __shared__ declarations (and constants they name) that
  /// move before the branch; nested static ones are refused.
  Error planHoisting(const EditContext &Ctx, const Edit &E,
                     const CompoundStmt *Body, SpecPlan &P) const {
    std::string Name = "kernel '" + E.Target + "'";
    std::map<const VarDecl *, const Stmt *> TopDecl;
    std::set<const Stmt *> Move;
    for (const Stmt *S : Body->body())
      if (const auto *DS = dyn_cast<DeclStmt>(S)) {
        bool Any = false, All = true;
        for (const Decl *D : DS->decls())
          if (const auto *V = dyn_cast<VarDecl>(D)) {
            TopDecl[V] = S;
            Any |= isShared(V);
            All &= isShared(V);
          }
        if (Any && !All)
          return reject(E, "not-applicable",
                        Name + ": a declaration at " + where(Ctx, S) +
                            " declares __shared__ and other variables "
                            "together");
        if (Any)
          Move.insert(S);
      }
    Declared Inside;
    Inside.TraverseStmt(const_cast<CompoundStmt *>(Body));
    for (const VarDecl *V : Inside.Vars)
      if (isShared(V) && !TopDecl.count(V) && !V->hasExternalStorage())
        return reject(E, "not-applicable",
                      Name + ": '" + V->getName() +
                          "' is a __shared__ array declared in a nested "
                          "block; each copy would allocate its own");
    // The constants a moved declaration's type names move with it.
    std::vector<const Stmt *> Work(Move.begin(), Move.end());
    while (!Work.empty()) {
      const Stmt *S = Work.back();
      Work.pop_back();
      LocalRefs R;
      R.TraverseStmt(const_cast<Stmt *>(S));
      for (const VarDecl *V : R.Vars) {
        auto It = TopDecl.find(V);
        if (It == TopDecl.end() || !V->isUsableInConstantExpressions(Ctx.AST))
          return reject(E, "not-applicable",
                        Name + ": the __shared__ declaration at " +
                            where(Ctx, S) + " names '" + V->getName() +
                            "', which is not a constant declared at the "
                            "body's top level");
        for (const Decl *D : cast<DeclStmt>(It->second)->decls())
          if (const auto *C = dyn_cast<VarDecl>(D);
              C && !C->isUsableInConstantExpressions(Ctx.AST))
            return reject(E, "not-applicable",
                          Name + ": '" + C->getName() +
                              "' is declared with "
                              "the constant '" +
                              V->getName() +
                              "' that a __shared__ declaration names, and is "
                              "not a constant itself");
        if (Move.insert(It->second).second)
          Work.push_back(It->second);
      }
    }
    for (const Stmt *S : Body->body())
      if (Move.count(S))
        P.Hoisted.push_back(S);
    return Error::success();
  }
};

} // namespace

std::unique_ptr<Transform> createSpecializeTransform() {
  return std::make_unique<Specialize>();
}

} // namespace optiml
