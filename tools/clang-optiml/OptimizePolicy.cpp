//===- OptimizePolicy.cpp - optimize's policy and dry run -----------------===//

#include "OptimizePolicy.h"
#include "optiml/Support/Sort.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"
#include <chrono>
#include <future>
#ifdef OPTIML_WITH_LLM
#include "optiml/LLM/PromptTemplate.h"
#endif

using namespace llvm;

namespace optiml {
namespace tool {

/// Picks the policy (--policy, else mixed when an LLM is configured) and
/// builds it. An LLM policy without a usable configuration is an error.
Expected<std::unique_ptr<PolicySetup>>
makePolicy(const Analysis &A, const CommandContext &Ctx,
           const std::optional<GpuQuery> &Gpu, const PolicyChoice &Choice) {
  StringRef PolicyName = Choice.Name;
  auto S = std::make_unique<PolicySetup>();
  S->Catalog = std::make_unique<CatalogPolicy>(A.Path, A.Config);
  S->Rewriter = std::make_unique<RewriterApplier>(A.Path, A.Config);
  S->Name = PolicyName.empty() ? "catalog" : PolicyName.str();
#ifdef OPTIML_WITH_LLM
  if (PolicyName == "catalog") {
    errs() << "clang-optiml: policy catalog (--policy catalog)\n";
    return std::move(S);
  }
  auto Setup =
      configuredLLM(A.Path, PolicyName.empty() ? "" : "--policy " + S->Name);
  if (!Setup)
    return Setup.takeError();
  if (!*Setup) {
    S->Name = "catalog";
    errs() << "clang-optiml: policy catalog (no LLM configured for this "
              "project)\n";
    return std::move(S);
  }
  if (PolicyName.empty())
    S->Name = "mixed";
  errs() << "clang-optiml: policy " << S->Name << ": " << (*Setup)->Description
         << "\n";
  auto Dir = llm::findPromptDirectory("", Ctx.Argv0,
                                      reinterpret_cast<void *>(&makePolicy));
  if (!Dir)
    return Dir.takeError();
  auto Prompts = llm::PromptLibrary::load(*Dir);
  if (!Prompts)
    return Prompts.takeError();
  S->Client = std::move((*Setup)->Client);
  LLMPolicyOptions LO;
  LO.NumProposals = Choice.Proposals;
  LO.Rank = Choice.Rank;
  if (Gpu && !Gpu->Gpus.empty())
    LO.GPUDescription =
        Gpu->Gpus.front().Name + " (" + Gpu->Gpus.front().Arch + ")";
  S->LLM = std::make_unique<LLMPolicy>(A.Path, A.Config, *S->Client,
                                       std::move(*Prompts), LO);
  S->LLM->setLogger([](StringRef L) {
    WithColor::warning(errs(), "clang-optiml") << L << "\n";
  });
  S->Checked = std::make_unique<LLMCheckedApplier>(*S->LLM, *S->Rewriter);
  if (S->Name == "mixed") {
    S->Mixed = std::make_unique<MixedPolicy>();
    S->Mixed->add(*S->Catalog, 1.0);
    S->Mixed->add(*S->LLM, 1.0);
  }
#else
  (void)Ctx;
  (void)Gpu;
#endif
  return std::move(S);
}

int runDry(const Analysis &A, ArrayRef<std::string> Targets,
           StringRef InputFile, bool NoCompile, PolicySetup &Setup,
           function_ref<Expected<std::unique_ptr<Builder>>()> MakeBuilder) {
  Policy &Pol = Setup.policy();
  EditApplier &App = Setup.applier();
  PolicyContext Ctx;
  Ctx.FileName = A.Path;
  Ctx.Source = A.Code;
  Ctx.Kernels = Targets;
  auto Acts = Pol.propose(Ctx);
  if (!Acts)
    return reportError(Acts.takeError());
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

  outs() << InputFile << ": dry run: " << Acts->size() << " candidate edit"
         << (Acts->size() == 1 ? "" : "s")
         << " at the first level (kernels: " << join(Targets, ", ") << ")\n";
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
      outs() << "the original does not compile with nvcc:\n"
             << StringRef(lastLines(R->ErrorSummary, 3)).rtrim() << "\n";
      NoBuild = "the original does not compile";
      B.reset();
    }
  }
  if (!NoBuild.empty())
    outs() << "compile skipped: " << NoBuild << "\n";
  outs().flush();
  // Each edit is applied and checked here, its build started at once (a few
  // at a time), and its lines printed, in order, as soon as its build is
  // done: a long list shows its first results within seconds. Each block is
  // flushed, so a pipe or a log sees it then too.
  if (B)
    errs() << "compiling each candidate with nvcc as it passes the "
              "checks...\n";
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
    outs() << Text;
    outs().flush();
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
  outs() << formatv("{0} of {1} applied and checked", Applied, Acts->size());
  if (B)
    outs() << formatv(", {0} compiled", Compiled);
  outs() << "; nothing was run or written (a CUDA GPU is needed to measure)\n";
  outs().flush();
  if (OriginalFails)
    return reportError(createStringError(
        "'%s' does not compile with nvcc; fix it first (flags it needs to "
        "build at all, such as -lcublas, go with --build-arg)",
        InputFile.str().c_str()));
  return 0;
}

} // namespace tool
} // namespace optiml
