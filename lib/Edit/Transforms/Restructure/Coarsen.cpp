//===- Coarsen.cpp - Each thread computes K elements ----------------------===//
//
//   int i = blockIdx.x * blockDim.x + threadIdx.x;
//   if (i < n) body
// becomes
//   #pragma unroll
//   for (int k = 0; k < K; ++k) {
//     int i = (blockIdx.x * K + k) * blockDim.x + threadIdx.x;
//     if (i < n) body
//   }
// so a block covers K consecutive blocks' worth of elements, each step still
// coalesced, and every launch's grid G becomes ceil(G / K). Blocks
// 0..ceil(G/K)-1 cover at least the G * blockDim elements the original grid
// did, and the original guard still bounds each element. They may cover up
// to (K - 1) * blockDim more, which only the guard keeps out: so every
// launch must be shown to reach the bound (gridCoverageProblem()), else a
// grid that stops short (`n / 256`, a fixed 8 blocks) would have elements
// computed that the original left alone.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../../Patterns/ThreadPerItem.h"
#include "../TransformSupport.h"
#include "optiml/Frontend/ASTUtil.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"

using namespace clang;
using namespace llvm;

namespace optiml {
namespace {

struct CoarsenPlan {
  ResolvedKernel Kernel;
  MapPattern Map;
  std::vector<GridExpr> Grids;
};

class CoarsenTransform : public Transform {
public:
  StringRef kind() const override { return "coarsen"; }
  StringRef description() const override {
    return "each thread computes K elements (K blocks' worth, coalesced); "
           "launch grids divided by K";
  }
  TargetKind targetKind() const override { return TargetKind::Kernel; }
  std::vector<ParamSpec> params() const override {
    return {ParamSpec::integer("factor", "elements per thread (K)", 2, 16)
                .required()};
  }

  Applicability prepare(const EditContext &Ctx,
                        StringRef Target) const override {
    Applicability A;
    Edit E = defaultEdit(kind(), Target);
    auto Plan = planOrReason(A, analyze(Ctx, E));
    if (!Plan)
      return A;
    A.Reason = "one element per thread ('" + Plan->Map.IndexName + " < " +
               Plan->Map.BoundText + "'); " +
               std::to_string(Plan->Grids.size()) +
               " launch grid(s) can be divided";
    for (int64_t K : {2, 4, 8}) {
      Edit S = E;
      S.Params["factor"] = K;
      A.Suggestions.push_back(S);
    }
    return A;
  }

  Expected<tooling::Replacements> apply(const EditContext &Ctx,
                                        const Edit &E) const override {
    std::optional<int64_t> K = E.getInt("factor");
    if (!K || *K < 2 || *K > 16)
      return reject(E, "params", "factor must be an integer from 2 to 16");
    auto Plan = analyze(Ctx, E);
    if (!Plan)
      return Plan.takeError();
    const MapPattern &P = Plan->Map;
    // Fresh names need only be new within the kernel.
    std::string KernelText = StringRef(Ctx.Code)
                                 .slice(Plan->Kernel.Info->Range.Begin.Offset,
                                        Plan->Kernel.Info->Range.End.Offset)
                                 .str();
    std::string Step = freshName(KernelText, "k");
    std::string Factor = std::to_string(*K);

    std::string NewInit = "(blockIdx.x * " + Factor + " + " + Step +
                          ") * blockDim.x + threadIdx.x";
    auto InitSpan = fileSpan(Ctx.AST.getSourceManager(), Ctx.AST.getLangOpts(),
                             P.Index->getInit()->getSourceRange(), Ctx.file());
    if (!InitSpan)
      return reject(E, "not-applicable", "the index has no place in the file");
    std::string Region =
        spliceText(Ctx.Code, P.RegionBegin, P.RegionEnd,
                   {{InitSpan->Begin.Offset,
                     InitSpan->End.Offset - InitSpan->Begin.Offset, NewInit}});
    std::string Text = "#pragma unroll\n" + P.Indent + "for (int " + Step +
                       " = 0; " + Step + " < " + Factor + "; ++" + Step +
                       ") {\n" + P.Indent + "  " + reindent(Region, 2) + "\n" +
                       P.Indent + "}";
    tooling::Replacements R;
    SourceSpan S{{0, 0, P.RegionBegin}, {0, 0, P.RegionEnd}};
    if (Error Err = addReplacement(R, replaceSpan(Ctx, S, Text), E))
      return std::move(Err);
    for (const GridExpr &G : Plan->Grids)
      if (Error Err = addReplacement(
              R, replaceSpan(Ctx, G.Span, ceilDivGridText(Ctx, G, *K)), E))
        return std::move(Err);
    return R;
  }

private:
  Expected<CoarsenPlan> analyze(const EditContext &Ctx, const Edit &E) const {
    auto K = resolveKernel(Ctx, E, E.Target);
    if (!K)
      return K.takeError();
    CoarsenPlan Plan;
    Plan.Kernel = *K;
    if (K->Info->Uses2DThreads)
      return reject(E, "not-applicable",
                    "kernel '" + E.Target +
                        "' uses 2D thread or block indices; coarsen handles "
                        "one-dimensional kernels");
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
    for (const LaunchSite &L : K->Info->Launches) {
      std::string WhyNot;
      auto G = grid1D(Ctx, L, WhyNot);
      if (!G)
        return reject(E, "not-applicable",
                      WhyNot + ": its grid could not be divided by the factor",
                      L.Range.Begin);
      if (G->E->HasSideEffects(Ctx.AST))
        return reject(E, "not-applicable",
                      "the grid of " + L.Id + " has side effects",
                      L.Range.Begin);
      if (std::string Why = gridCoverageProblem(Ctx, L, Plan.Map.Bound, 0);
          !Why.empty())
        return reject(
            E, "not-applicable",
            "launch " + L.Id +
                " is not shown to run a thread for every element below the "
                "guard's bound '" +
                Plan.Map.BoundText + "': " + Why +
                "; the divided grid runs up to K - 1 blocks' worth of "
                "threads past the original one, so an original grid that "
                "stops short would have elements computed that it left alone",
            L.Range.Begin);
      Plan.Grids.push_back(*G);
    }
    return Plan;
  }
};

} // namespace

std::unique_ptr<Transform> createCoarsenTransform() {
  return std::make_unique<CoarsenTransform>();
}

} // namespace optiml
