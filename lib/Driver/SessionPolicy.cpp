//===- SessionPolicy.cpp - The session's policy and dry run ---------------===//

#include "SessionPolicy.h"
#include "optiml/Support/Process.h"
#include "optiml/Support/Sort.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"
#include <chrono>
#include <future>
#ifdef OPTIML_WITH_LLM
#include "optiml/Driver/Program.h"
#include "optiml/LLM/LLMConfig.h"
#include "optiml/LLM/PromptTemplate.h"
#endif

using namespace llvm;

namespace optiml {

bool policyAvailable(StringRef Policy) {
#ifdef OPTIML_WITH_LLM
  (void)Policy;
  return true;
#else
  return Policy != "llm" && Policy != "mixed";
#endif
}

Expected<std::unique_ptr<PolicySetup>>
makePolicy(const Analysis &A, const OptimizeRequest &R,
           const std::optional<GpuQuery> &Gpu, SessionObserver &Obs) {
  StringRef PolicyName = R.Policy;
  auto S = std::make_unique<PolicySetup>();
  S->Catalog = std::make_unique<CatalogPolicy>(A.Path, A.Config);
  S->Rewriter = std::make_unique<RewriterApplier>(A.Path, A.Config);
  S->Name = PolicyName.empty() ? "catalog" : PolicyName.str();
#ifdef OPTIML_WITH_LLM
  if (PolicyName == "catalog") {
    Obs.message("clang-optiml: policy catalog (--policy catalog)");
    return std::move(S);
  }
  auto Setup =
      configureLLM(R.LLM ? *R.LLM : llm::LLMSettings(), A.Path,
                   PolicyName.empty() ? "" : "--policy " + S->Name, R.Log);
  if (!Setup)
    return Setup.takeError();
  if (!*Setup) {
    S->Name = "catalog";
    Obs.message("clang-optiml: policy catalog (no LLM configured for this "
                "project)");
    return std::move(S);
  }
  if (PolicyName.empty())
    S->Name = "mixed";
  Obs.message("clang-optiml: policy " + S->Name + ": " + (*Setup)->Description);
  auto Dir = llm::findPromptDirectory("", R.Argv0,
                                      reinterpret_cast<void *>(&makePolicy));
  if (!Dir)
    return Dir.takeError();
  auto Prompts = llm::PromptLibrary::load(*Dir);
  if (!Prompts)
    return Prompts.takeError();
  S->Client = std::move((*Setup)->Client);
  LLMPolicyOptions LO;
  LO.NumProposals = R.LLMProposals;
  LO.Rank = R.LLMRank;
  if (Gpu && !Gpu->Gpus.empty())
    LO.GPUDescription =
        Gpu->Gpus.front().Name + " (" + Gpu->Gpus.front().Arch + ")";
  S->LLM = std::make_unique<LLMPolicy>(A.Path, A.Config, *S->Client,
                                       std::move(*Prompts), LO);
  S->LLM->setLogger([&Obs](StringRef L) { Obs.warning(L); });
  S->Checked = std::make_unique<LLMCheckedApplier>(*S->LLM, *S->Rewriter);
  if (S->Name == "mixed") {
    S->Mixed = std::make_unique<MixedPolicy>();
    S->Mixed->add(*S->Catalog, 1.0);
    S->Mixed->add(*S->LLM, 1.0);
  }
#else
  (void)R;
  (void)Gpu;
  (void)Obs;
#endif
  return std::move(S);
}

// Why long: the listing's steps in order (proposals, the original's build,
// each edit applied, built in the background and printed in order).
Error dryRun(const Analysis &A, ArrayRef<std::string> Targets,
             StringRef InputFile, bool NoCompile, PolicySetup &Setup,
             SessionObserver &Obs,
             function_ref<Expected<std::unique_ptr<Builder>>()> MakeBuilder) {
  Policy &Pol = Setup.policy();
  EditApplier &App = Setup.applier();
  PolicyContext Ctx;
  Ctx.FileName = A.Path;
  Ctx.Source = A.Code;
  Ctx.Kernels = Targets;
  auto Acts = Pol.propose(Ctx);
  if (!Acts)
    return Acts.takeError();
  double Sum = 0;
  for (const Action &Ac : *Acts)
    Sum += Ac.Prior;
  stableSort(*Acts, [](const Action &L, const Action &R) {
    return L.Prior > R.Prior;
  });

  std::unique_ptr<Builder> B;
  std::string NoBuild;
  if (!NoCompile) {
    auto BB = MakeBuilder();
    if (BB)
      B = std::move(*BB);
    else
      NoBuild = toString(BB.takeError());
  } else {
    NoBuild = "--no-compile";
  }

  std::string Head;
  raw_string_ostream HS(Head);
  HS << InputFile << ": dry run: " << Acts->size() << " candidate edit"
     << (Acts->size() == 1 ? "" : "s")
     << " at the first level (kernels: " << join(Targets, ", ") << ")\n";
  Obs.result(Head);
  Head.clear();
  // The original first: if it does not build, neither will any edit of it,
  // and the cause is the program's setup, not the edits.
  bool OriginalFails = false;
  if (B) {
    auto R = B->build({A.Path, "", {}});
    if (!R) {
      NoBuild = toString(R.takeError());
      B.reset();
    } else if (!R->Succeeded) {
      OriginalFails = true;
      HS << "the original does not compile with nvcc:\n"
         << StringRef(lastLines(R->ErrorSummary, 3)).rtrim() << "\n";
      NoBuild = "the original does not compile";
      B.reset();
    }
  }
  if (!NoBuild.empty())
    HS << "compile skipped: " << NoBuild << "\n";
  Obs.result(Head);
  // Each edit is applied and checked here, its build started at once (a few
  // at a time), and its lines printed, in order, as soon as its build is
  // done: a long list shows its first results within seconds. Each block is
  // flushed, so a pipe or a log sees it then too.
  if (B)
    Obs.message("compiling each candidate with nvcc as it passes the "
                "checks...");
  unsigned Applied = 0, Compiled = 0;
  std::vector<ApplyOutcome> Outs(Acts->size());
  std::vector<std::shared_future<Expected<BuildResult> *>> Builds(Acts->size());
  std::vector<std::unique_ptr<Expected<BuildResult>>> Built(Acts->size());
  DefaultThreadPool Pool(
      hardware_concurrency(std::max(1u, B ? B->options().Jobs : 1u)));
  size_t Printed = 0;
  auto Print = [&](size_t I) {
    const Action &Ac = (*Acts)[I];
    const ApplyOutcome &AO2 = Outs[I];
    std::string Text;
    raw_string_ostream OS(Text);
    OS << formatv("[{0}] {1}{2}  (prior {3:F2})\n", I + 1,
                  Setup.Name == "catalog" ? "" : Ac.Origin + ": ",
                  AO2.Summary.empty() ? editKey(Ac.E) : AO2.Summary,
                  Sum > 0 ? Ac.Prior / Sum : 0);
    if (Ac.Origin == "llm" && !Ac.Rationale.empty() &&
        !StringRef(Ac.Rationale).starts_with("refused: "))
      OS << "    why: " << Ac.Rationale << "\n";
    if (!AO2.Applied) {
      OS << "    rejected: " << AO2.reason() << "\n";
    } else {
      ++Applied;
      std::string Verdict = "applied, checks passed";
      if (AO2.NewCode == A.Code && AO2.ExtraNvccFlags.empty())
        Verdict += " (no change)";
      if (AO2.ChangesPrecision)
        Verdict += ", may change floating-point results";
      if (!AO2.ExtraNvccFlags.empty())
        Verdict += ", nvcc flags: " + join(AO2.ExtraNvccFlags, " ");
      OS << "    " << Verdict << "\n";
      if (Builds[I].valid()) {
        Expected<BuildResult> &R = *Builds[I].get();
        if (!R)
          OS << "    nvcc could not run: " << toString(R.takeError()) << "\n";
        else if (R->Succeeded) {
          ++Compiled;
          OS << "    compiles with nvcc\n";
        } else {
          OS << "    does not compile with nvcc: "
             << lastLines(R->ErrorSummary, 3) << "\n";
        }
      }
    }
    Obs.result(Text);
  };
  auto Ready = [&](size_t I) {
    return !Builds[I].valid() || Builds[I].wait_for(std::chrono::seconds(0)) ==
                                     std::future_status::ready;
  };
  for (size_t I = 0; I < Acts->size(); ++I) {
    Outs[I] = App.apply(A.Code, (*Acts)[I].E);
    if (B && Outs[I].Applied) {
      BuildRequest Req;
      Req.SourcePath = A.Path;
      Req.Source = Outs[I].NewCode;
      Req.ExtraFlags = Outs[I].ExtraNvccFlags;
      Builds[I] = Pool.async([&B, &Built, I, Req = std::move(Req)] {
        Built[I] = std::make_unique<Expected<BuildResult>>(B->build(Req));
        return Built[I].get();
      });
    }
    while (Printed <= I && Ready(Printed))
      Print(Printed++);
  }
  while (Printed < Acts->size())
    Print(Printed++);
  Pool.wait();
  std::string Tail =
      formatv("{0} of {1} applied and checked", Applied, Acts->size()).str();
  if (B)
    Tail += formatv(", {0} compiled", Compiled).str();
  Obs.result(Tail + "; nothing was run or written (a CUDA GPU is needed to "
                    "measure)\n");
  if (OriginalFails)
    return createStringError(
        "'%s' does not compile with nvcc; fix it first (flags it needs to "
        "build at all, such as -lcublas, go with --build-arg)",
        InputFile.str().c_str());
  return Error::success();
}

} // namespace optiml
