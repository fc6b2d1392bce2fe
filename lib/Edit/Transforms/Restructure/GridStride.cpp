//===- GridStride.cpp - One element per thread -> grid-stride loop -------===//
//
//   int i = blockIdx.x * blockDim.x + threadIdx.x;
//   if (i < n) body
// becomes
//   for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
//        i += blockDim.x * gridDim.x) body
// and each launch's grid G becomes (G < M ? G : M). The loop covers every
// element below the bound for any grid, so capping is always safe; a launch
// whose grid cannot be rewritten keeps its grid (and is named in prepare()'s
// reason). The original computes only the elements its grid reaches, so
// every launch must be shown to reach the bound (gridCoverageProblem()): a
// grid that stops short on purpose (`n / 512` blocks of 256 threads) would
// have the loop compute elements the original left alone.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../../Patterns/ThreadPerItem.h"
#include "../TransformSupport.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"

using namespace clang;
using namespace llvm;

namespace optiml {
namespace {

struct GridStridePlan {
  ResolvedKernel Kernel;
  MapPattern Map;
  std::vector<std::pair<const LaunchSite *, GridExpr>> Caps;
  std::vector<std::string> Uncapped; ///< "<id>: why"
};

class GridStrideTransform : public Transform {
public:
  StringRef kind() const override { return "grid-stride"; }
  StringRef description() const override {
    return "turn a one-element-per-thread kernel into a grid-stride loop and "
           "cap the grid at its launch sites";
  }
  TargetKind targetKind() const override { return TargetKind::Kernel; }
  std::vector<ParamSpec> params() const override {
    return {ParamSpec::integer(
        "max_blocks",
        "the most blocks a launch gets (a multiple of the SM "
        "count: 132 on H200)",
        1, 1 << 30, DefaultGridCap)};
  }

  Applicability prepare(const EditContext &Ctx,
                        StringRef Target) const override {
    Applicability A;
    Edit E = defaultEdit(kind(), Target);
    auto Plan = planOrReason(A, analyze(Ctx, E));
    if (!Plan)
      return A;
    A.Reason = "one element per thread ('" + Plan->Map.IndexName +
               "' guarded by '" + Plan->Map.IndexName + " < " +
               Plan->Map.BoundText +
               "'): a grid-stride loop lets a capped "
               "grid cover any size";
    if (!Plan->Uncapped.empty())
      A.Reason += "; grids left as they are: " + join(Plan->Uncapped, "; ");
    for (int64_t M : {132 * 4, 132 * 8, 132 * 16}) {
      Edit S = E;
      S.Params["max_blocks"] = int64_t(M);
      A.Suggestions.push_back(S);
    }
    return A;
  }

  Expected<tooling::Replacements> apply(const EditContext &Ctx,
                                        const Edit &E) const override {
    auto Plan = analyze(Ctx, E);
    if (!Plan)
      return Plan.takeError();
    int64_t Max = E.getInt("max_blocks").value_or(DefaultGridCap);
    if (Max < 1)
      return reject(E, "params", "max_blocks must be at least 1");
    const MapPattern &P = Plan->Map;
    const SourceManager &SM = Ctx.AST.getSourceManager();
    tooling::Replacements R;
    std::string Head = "for (" + P.IndexType + " " + P.IndexName + " = " +
                       P.InitText + "; " + P.IndexName + " < " + P.BoundText +
                       ";\n" + P.Indent + "     " + P.IndexName +
                       " += blockDim.x * gridDim.x)";
    if (P.EarlyReturn) {
      SourceSpan S{{0, 0, P.RegionBegin}, {0, 0, P.RegionEnd}};
      if (Error Err = addReplacement(
              R, replaceSpan(Ctx, S, Head + " " + P.BodyBlock), E))
        return std::move(Err);
    } else {
      unsigned RParen =
          SM.getFileOffset(SM.getExpansionLoc(P.Guard->getRParenLoc())) + 1;
      SourceSpan S{{0, 0, P.RegionBegin}, {0, 0, RParen}};
      if (Error Err = addReplacement(R, replaceSpan(Ctx, S, Head), E))
        return std::move(Err);
    }
    for (const auto &[L, G] : Plan->Caps) {
      std::string M = std::to_string(Max);
      const Expr *X = G.E->IgnoreParenImpCasts();
      std::string T = G.Text;
      if (isa<ConditionalOperator>(X) ||
          (isa<BinaryOperator>(X) && !cast<BinaryOperator>(X)->isAdditiveOp() &&
           !cast<BinaryOperator>(X)->isMultiplicativeOp()))
        T = "(" + T + ")";
      if (Error Err = addReplacement(
              R,
              replaceSpan(Ctx, G.Span, T + " < " + M + " ? " + T + " : " + M),
              E))
        return std::move(Err);
    }
    return R;
  }

private:
  Expected<GridStridePlan> analyze(const EditContext &Ctx,
                                   const Edit &E) const {
    auto K = resolveKernel(Ctx, E, E.Target);
    if (!K)
      return K.takeError();
    GridStridePlan Plan;
    Plan.Kernel = *K;
    if (K->Info->Uses2DThreads)
      return reject(E, "not-applicable",
                    "kernel '" + E.Target +
                        "' uses 2D thread or block indices; grid-stride "
                        "handles one-dimensional kernels");
    std::string Why;
    auto P = matchMapPattern(Ctx, K->Decl, Why, /*IndexByMeaning=*/false,
                             /*ConstantMacros=*/true);
    if (!P)
      return reject(E, "not-applicable", "kernel '" + E.Target + "': " + Why);
    if (std::string Problem = elementwiseBodyProblem(Ctx, *P); !Problem.empty())
      return reject(E, "not-applicable",
                    "kernel '" + E.Target + "': " + Problem);
    // elementwiseBodyProblem() reads the body's own text; a helper it calls
    // may read the thread's coordinates too.
    if (std::string Problem =
            threadShapeCallProblem(P->Body, Ctx.AST.getSourceManager());
        !Problem.empty())
      return reject(E, "not-applicable",
                    "kernel '" + E.Target + "': " + Problem);
    Plan.Map = std::move(*P);
    if (std::string Why = coverageProblem(Ctx, *K->Info, Plan.Map);
        !Why.empty())
      return reject(E, "not-applicable", "kernel '" + E.Target + "': " + Why);
    for (const LaunchSite &L : K->Info->Launches) {
      std::string WhyNot;
      auto G = grid1D(Ctx, L, WhyNot);
      if (G && G->E->HasSideEffects(Ctx.AST))
        WhyNot = "the grid of " + L.Id + " has side effects", G.reset();
      if (G)
        Plan.Caps.push_back({&L, *G});
      else
        Plan.Uncapped.push_back(WhyNot);
    }
    return Plan;
  }

  /// Why some launch of \p K may run fewer threads than the guard's bound
  /// (gridCoverageProblem()); "" when every launch is shown to reach it.
  static std::string coverageProblem(const EditContext &Ctx,
                                     const KernelInfo &K, const MapPattern &P) {
    std::string Effect =
        "the grid-stride loop computes every element below the bound "
        "whatever the grid, the original only those its threads reach";
    if (K.Launches.empty())
      return "it is never launched in this file, so no grid can be shown to "
             "cover the guard's bound '" +
             P.BoundText + "'; " + Effect;
    for (const LaunchSite &L : K.Launches)
      if (std::string Why = gridCoverageProblem(Ctx, L, P.Bound, 0);
          !Why.empty())
        return "launch " + L.Id +
               " is not shown to run a thread for every element below the "
               "guard's bound '" +
               P.BoundText + "': " + Why + "; " + Effect +
               ", so an original grid that stops short would have elements "
               "computed that it left alone";
    return "";
  }
};

} // namespace

std::unique_ptr<Transform> createGridStrideTransform() {
  return std::make_unique<GridStrideTransform>();
}

} // namespace optiml
