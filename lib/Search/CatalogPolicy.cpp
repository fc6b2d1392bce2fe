//===- CatalogPolicy.cpp - Catalog edits with model- and profile-based priors
//-===//

#include "optiml/Search/CatalogPolicy.h"
#include "optiml/Edit/Diff.h"
#include "optiml/Edit/Rewriter.h"
#include "optiml/Edit/Transform.h"
#include "optiml/Frontend/Analysis.h"
#include "optiml/Frontend/ModelBuilder.h"
#include "clang/Frontend/ASTUnit.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Path.h"

using namespace llvm;

namespace optiml {

static bool hasUncoalescedAccess(const KernelInfo &K) {
  for (const MemoryAccess &A : K.Accesses)
    if (A.Space == AddressSpace::Global &&
        (A.Pattern == Coalescing::Strided || A.Pattern == Coalescing::Unknown))
      return true;
  return false;
}

double catalogPrior(StringRef Kind, const KernelInfo &K, StringRef Bound,
                    double OccupancyPct, std::string *Why) {
  // A base belief per kind, then boosts from what the model and the last
  // profile say. The numbers are relative; the search normalizes them.
  double P = StringSwitch<double>(Kind)
                 .Case("restrict-const", 0.5)
                 .Case("read-only-cache", 0.4)
                 .Case("launch-config", 0.5)
                 .Case("launch-bounds", 0.3)
                 .Case("unroll", 0.4)
                 .Case("grid-stride", 0.4)
                 .Case("vectorize", 0.5)
                 .Case("fast-math", 0.3)
                 .Case("hoist", 0.3)
                 .Case("shared-tiling", 0.5)
                 .Case("warp-reduce", 0.5)
                 .Case("coarsen", 0.4)
                 .Case("compile-flags", 0.2)
                 .Case("specialize", 0.3)
                 // Restructuring transforms apply only when their pattern
                 // was recognized, which is itself strong evidence.
                 .Case("transpose-through-shared", 0.5)
                 .Case("warp-per-row", 0.5)
                 .Case("privatize-atomics", 0.5)
                 .Case("all-pairs-tiling", 0.5)
                 .Case("block-scan", 0.5)
                 .Case("constant-memory", 0.5)
                 .Case("vectorize-stencil", 0.5)
                 .Default(0.3);
  std::string Reason;
  auto Boost = [&](double F, StringRef R) {
    P *= F;
    if (!Reason.empty())
      Reason += "; ";
    Reason += R.str();
  };
  bool Uncoalesced = hasUncoalescedAccess(K);
  if (Uncoalesced &&
      (Kind == "shared-tiling" || Kind == "transpose-through-shared" ||
       Kind == "all-pairs-tiling"))
    Boost(3, "uncoalesced global accesses: stage through shared memory");
  if (Kind == "warp-per-row" &&
      (K.Class == KernelClass::Reduction || K.Class == KernelClass::MatmulLike))
    Boost(3, "one thread per row walks the row alone: a warp per row "
             "coalesces it");
  if (Kind == "privatize-atomics" && !K.Atomics.empty())
    Boost(3, "atomics into a small array: privatize per block");
  if (K.Class == KernelClass::MatmulLike && Kind == "shared-tiling")
    Boost(2, "matmul-like: tiles are reused");
  if (K.Class == KernelClass::Stencil && Kind == "shared-tiling")
    Boost(1.5, "stencil: neighbours are reused");
  if (K.Class == KernelClass::Stencil && Kind == "vectorize-stencil" &&
      Bound != "compute-bound")
    Boost(2, "stencil: whole rows in 16-byte loads and stores");
  if (K.Class == KernelClass::Stencil && Kind == "constant-memory")
    Boost(1.5, "stencil: its filter's taps become constant operands");
  if (Kind == "block-scan")
    Boost(3, "a prefix sum with a barrier per step: warp shuffles need two");
  if (K.Class == KernelClass::Reduction && Kind == "warp-reduce")
    Boost(3, "reduction: warp shuffles replace shared-memory steps");
  if (!K.Atomics.empty() && Kind == "warp-reduce")
    Boost(1.5, "atomics: aggregate per warp first");
  if (K.Class == KernelClass::Map && Bound != "compute-bound" &&
      (Kind == "vectorize" || Kind == "grid-stride"))
    Boost(2, "memory-bound map: wider and fewer memory transactions");
  if (Bound == "memory-bound" &&
      (Kind == "read-only-cache" || Kind == "restrict-const"))
    Boost(1.5, "memory-bound: read-only path and no aliasing");
  if (Bound == "compute-bound" && (Kind == "fast-math" || Kind == "unroll" ||
                                   Kind == "hoist" || Kind == "specialize"))
    Boost(2, "compute-bound: fewer instructions");
  if (Bound == "compute-bound" && !K.MathCalls.empty() && Kind == "fast-math")
    Boost(1.5, "math intrinsics in a compute-bound kernel");
  bool LowOccupancy = OccupancyPct >= 0 && OccupancyPct < 50;
  if ((LowOccupancy || Bound == "latency-bound") &&
      (Kind == "launch-config" || Kind == "launch-bounds" ||
       Kind == "compile-flags"))
    Boost(2.5, "low occupancy: change the launch or register budget");
  if (Bound == "latency-bound" && Kind == "coarsen")
    Boost(1.5, "latency-bound: more independent work per thread");
  if (Why)
    *Why = Reason;
  return P;
}

Expected<std::vector<Action>> CatalogPolicy::propose(const PolicyContext &Ctx) {
  auto TU = parseCuda(Ctx.Source, FileName, Config, CudaSide::Host);
  if (!TU)
    return TU.takeError();
  if (TU->errorCount())
    return createStringError("catalog policy: the program state does not "
                             "parse (%u errors)",
                             TU->errorCount());
  clang::ASTContext &AST = TU->AST->getASTContext();
  KernelModel Full = buildKernelModel(AST);
  Full.File = TU->FileName;
  // Edits rewrite this file: its kernels, with the launches written in it
  // (the main file may launch the kernels of a file it includes).
  KernelModel Model = modelForFile(Full, TU->FileName);
  EditContext EC{TU->FileName, Ctx.Source, Model, AST, Config};

  std::string Bound = Ctx.Last ? Ctx.Last->Bound : "";
  double Occ = -1;
  if (Ctx.Last) {
    auto It = Ctx.Last->Metrics.find(
        "sm__warps_active.avg.pct_of_peak_sustained_active");
    if (It != Ctx.Last->Metrics.end())
      Occ = It->second;
  }

  std::vector<Action> Out;
  for (const KernelInfo &K : Model.Kernels) {
    if (!Ctx.Kernels.empty() && !is_contained(Ctx.Kernels, K.QualifiedName) &&
        !is_contained(Ctx.Kernels, K.Name))
      continue;
    if (Full.findKernel(K.QualifiedName)->Launches.empty() &&
        Ctx.Kernels.empty())
      continue; // never launched: cannot be measured
    for (Candidate &C : listCandidates(EC, K)) {
      if (!C.A.Applies)
        continue;
      std::string Why;
      double Base = catalogPrior(C.T->kind(), K, Bound, Occ, &Why);
      if (C.A.PriorScale > 0 && C.A.PriorScale != 1) {
        Base *= C.A.PriorScale;
        Why += (Why.empty() ? "" : "; ") + C.A.PriorWhy;
      }
      // Suggestions come best first: decay their priors with rank.
      double Rank = 1;
      for (Edit &E : C.A.Suggestions) {
        Action A;
        A.E = std::move(E);
        A.Prior = Base * Rank;
        A.Origin = "catalog";
        A.Rationale = C.A.Reason + (Why.empty() ? "" : " (" + Why + ")");
        Out.push_back(std::move(A));
        Rank *= 0.7;
      }
    }
  }
  return Out;
}

ApplyOutcome RewriterApplier::apply(StringRef Code, const Edit &E) {
  ApplyOutcome R;
  auto A = applyEdit(FileName, Code, Config, E, Checks);
  if (!A) {
    handleAllErrors(
        A.takeError(),
        [&](const EditRejected &Rej) { R.Failures = Rej.Failures; },
        [&](const ErrorInfoBase &EI) { R.Error = EI.message(); });
    R.Summary = findTransform(E.Kind) ? findTransform(E.Kind)->summary(E)
                                      : E.Kind + " " + E.Target;
    return R;
  }
  if (A->File != translationUnitFile(FileName, ParseConfig())) {
    // The program state is this file's text; an edit of another file (a
    // kernel defined in an included file) belongs to a search of that file.
    R.Failures.push_back({"scope", "", 0, 0,
                          "the edit rewrites '" + A->File + "', not '" +
                              FileName + "', the file this search rewrites"});
    R.Summary = std::move(A->Summary);
    return R;
  }
  R.Applied = true;
  R.NewCode = std::move(A->NewCode);
  R.Diff = std::move(A->Diff);
  R.Summary = std::move(A->Summary);
  R.ChangesPrecision = A->ChangesPrecision;
  R.ExtraNvccFlags = std::move(A->ExtraNvccFlags);
  return R;
}

std::string RewriterApplier::diff(StringRef Old, StringRef New) {
  std::string Name = diffName(FileName, Config);
  return unifiedDiff(Old, New, "a/" + Name, "b/" + Name);
}

} // namespace optiml
