//===- SearchExpand.cpp - Growing the search tree -------------------------===//
//
// A node's edits proposed by the policy, applied (cached per parent),
// its likely next candidates built ahead (prefetch), a child expanded and
// a node evaluated.
//
//===----------------------------------------------------------------------===//

#include "SearchInternal.h"
#include "optiml/Frontend/Parse.h"
#include "optiml/Search/Journal.h"
#include "optiml/Support/FileUtil.h"
#include "optiml/Support/Sort.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>
#include <map>
#include <random>
#include <set>

using namespace llvm;

namespace optiml {
namespace search {

Error Searcher::ensureProposed(unsigned Id) {
  SearchNode &N0 = Nodes[Id];
  bool First = !N0.Proposed;
  bool Again = N0.Proposed && N0.Untried.empty() && P.canProposeMore() &&
               N0.ProposalRounds < O.MaxProposalRounds;
  if (!First && !Again)
    return Error::success();
  if (N0.Depth >= O.MaxDepth || !N0.expandable()) {
    N0.Proposed = true;
    return Error::success();
  }

  std::vector<TriedAction> Tried;
  std::set<std::string> TriedKeys;
  for (unsigned Ch : N0.Children) {
    const SearchNode &C = Nodes[Ch];
    if (!C.Step)
      continue;
    TriedKeys.insert(editKey(*C.Step));
    std::string Res;
    switch (C.Status) {
    case NodeStatus::Rejected:
      Res = "rejected: " + C.RejectReason;
      break;
    case NodeStatus::Duplicate:
      Res = (C.SameCode ? "same compiled code as node "
                        : "same program as node ") +
            std::to_string(C.DuplicateOf);
      break;
    case NodeStatus::Failed:
      Res = "failed: " + C.Outcome.Failure;
      break;
    default:
      Res = formatv("{0:F2}x ({1})", C.Reward.Speed.Raw,
                    toString(C.Reward.Speed.Cmp));
    }
    Tried.push_back({*C.Step, Res});
  }

  PolicyContext Ctx;
  Ctx.FileName = O.FileName;
  Ctx.Source = N0.Source;
  Ctx.Path = N0.Path;
  Ctx.Kernels = O.Kernels;
  Ctx.Last = &N0.Outcome;
  Ctx.Original = &Nodes[0].Outcome;
  Ctx.Tried = Tried;
  auto Acts = P.propose(Ctx);
  SearchNode &N = Nodes[Id]; // propose() does not touch Nodes; be safe
  N.Proposed = true;
  ++N.ProposalRounds;
  if (!Acts)
    return Acts.takeError();
  std::vector<Action> Fresh;
  std::set<std::string> Seen = TriedKeys;
  for (Action &Ac : *Acts)
    if (Seen.insert(editKey(Ac.E)).second)
      Fresh.push_back(std::move(Ac));
  double Sum = 0;
  for (Action &Ac : Fresh) {
    Ac.Prior = std::max(Ac.Prior, 1e-6);
    Sum += Ac.Prior;
  }
  for (Action &Ac : Fresh)
    Ac.Prior /= Sum;
  // Best first; ties keep the policy's order.
  stableSort(Fresh, [](const Action &L, const Action &R) {
    return L.Prior > R.Prior;
  });
  for (Action &Ac : Fresh)
    N.Untried.push_back(std::move(Ac));
  return Error::success();
}

ApplyOutcome Searcher::applyCached(unsigned Parent, const Edit &Ed) {
  auto K = std::make_pair(Parent, editKey(Ed));
  auto It = Applied.find(K);
  if (It != Applied.end()) {
    ApplyOutcome R = It->second.get(); // waits for a background apply
    Applied.erase(It);
    return R;
  }
  return A.apply(Nodes[Parent].Source, Ed);
}

/// What the evaluator is asked to build for an applied edit: nothing when
/// it did not apply or gives a program already known.
static std::optional<CandidateSpec>
prefetchSpec(const ApplyOutcome &AO, std::vector<std::string> Flags,
             bool ChangesPrecision, const std::set<std::string> &Known) {
  if (!AO.Applied)
    return std::nullopt;
  for (const std::string &F : AO.ExtraNvccFlags)
    if (!is_contained(Flags, F))
      Flags.push_back(F);
  if (Known.count(sourceKey(AO.NewCode, Flags)))
    return std::nullopt;
  return CandidateSpec{AO.NewCode, Flags,
                       ChangesPrecision || AO.ChangesPrecision};
}

void Searcher::prefetchAfter(unsigned Parent) {
  if (!O.Prefetch)
    return;
  // The next O.Prefetch untried edits, the ones most likely expanded next
  // (MCTS, greedy and beam take a node's actions in order).
  const SearchNode &N = Nodes[Parent];
  std::vector<std::pair<unsigned, Edit>> Next;
  for (size_t I = 0; I < N.Untried.size() && Next.size() < O.Prefetch; ++I)
    Next.emplace_back(Parent, N.Untried[I].E);
  startPrefetch(Next);
}

std::vector<unsigned> Searcher::randomOpen() const {
  std::vector<unsigned> Open;
  for (const SearchNode &N : Nodes)
    if ((N.Status == NodeStatus::Original ||
         N.Status == NodeStatus::Evaluated) &&
        N.expandable() && !N.Exhausted && N.Depth < O.MaxDepth)
      Open.push_back(N.Id);
  return Open;
}

void Searcher::prefetchRandom(unsigned NewId) {
  if (!O.Prefetch)
    return;
  // runRandom's next two draws, made on a copy of the generator, for both
  // ways the candidate about to run can turn out: closed (failed, or a
  // regression) or open. A node never proposed to cannot be guessed.
  std::vector<std::pair<unsigned, Edit>> Next;
  auto Guess = [&](const std::vector<unsigned> &Open) {
    if (Open.empty())
      return;
    std::mt19937_64 R = Rng;
    const SearchNode &N = Nodes[Open[R() % Open.size()]];
    if (!N.Proposed || N.Untried.empty())
      return;
    const Edit &E = N.Untried[R() % N.Untried.size()].E;
    for (const auto &[P, Ed] : Next)
      if (P == N.Id && editKey(Ed) == editKey(E))
        return;
    Next.emplace_back(N.Id, E);
  };
  std::vector<unsigned> Open = randomOpen();
  Guess(Open);
  if (Nodes[NewId].Depth < O.MaxDepth) {
    Open.push_back(NewId);
    Guess(Open);
  }
  if (Next.size() > O.Prefetch)
    Next.resize(O.Prefetch);
  startPrefetch(Next);
}

void Searcher::startPrefetch(
    const std::vector<std::pair<unsigned, Edit>> &Next) {
  // Each edit applied (on a background thread when the applier allows it,
  // while the GPU runs the candidate about to be evaluated) and then built
  // in the background.
  struct Started {
    std::shared_future<ApplyOutcome> F;
    std::vector<std::string> Flags;
    bool ChangesPrecision;
  };
  std::vector<Started> All;
  for (const auto &[Parent, Ed] : Next) {
    auto K = std::make_pair(Parent, editKey(Ed));
    if (Applied.count(K))
      continue;
    const SearchNode &N = Nodes[Parent];
    std::shared_future<ApplyOutcome> F;
    if (A.concurrent()) {
      // On a large stack: the edit checks walk the AST, as deep as the
      // source's expressions.
      F = std::async(std::launch::async, [&Ap = A, Source = N.Source, Ed = Ed] {
            ApplyOutcome O;
            if (!runOnLargeStack([&] { O = Ap.apply(Source, Ed); }))
              O.Error = "internal error: the edit checks crashed";
            return O;
          }).share();
    } else {
      std::promise<ApplyOutcome> Done;
      Done.set_value(A.apply(N.Source, Ed));
      F = Done.get_future().share();
    }
    Applied.emplace(K, F);
    All.push_back({F, N.Flags, N.ChangesPrecision});
  }
  Background.erase(std::remove_if(Background.begin(), Background.end(),
                                  [](std::future<void> &F) {
                                    return F.wait_for(std::chrono::seconds(
                                               0)) == std::future_status::ready;
                                  }),
                   Background.end());
  if (All.empty())
    return;
  std::set<std::string> Known;
  for (const auto &KV : ByKey)
    Known.insert(KV.first);
  Background.push_back(
      std::async(std::launch::async,
                 [&Ev = E, All = std::move(All), Known = std::move(Known)] {
                   std::vector<CandidateSpec> Specs;
                   for (const Started &S : All)
                     if (auto C = prefetchSpec(S.F.get(), S.Flags,
                                               S.ChangesPrecision, Known))
                       Specs.push_back(std::move(*C));
                   if (!Specs.empty())
                     Ev.prefetch(Specs);
                 }));
}

Expected<std::optional<unsigned>> Searcher::expand(unsigned Parent,
                                                   size_t Index, bool Only) {
  while (!Nodes[Parent].Untried.empty()) {
    if (!haveBudget())
      return std::nullopt;
    SearchNode &Par = Nodes[Parent];
    Index = std::min(Index, Par.Untried.size() - 1);
    Action Ac = std::move(Par.Untried[Index]);
    Par.Untried.erase(Par.Untried.begin() + Index);
    Index = 0;

    SearchNode N;
    N.Id = Nodes.size();
    N.Parent = Parent;
    N.Step = Ac.E;
    N.Prior = Ac.Prior;
    N.Origin = Ac.Origin;
    N.Rationale = Ac.Rationale;
    N.Depth = Par.Depth + 1;
    N.Path = Par.Path;
    N.Path.push_back(Ac.E);
    N.Flags = Par.Flags;
    N.ChangesPrecision = Par.ChangesPrecision;

    progress("applying " + editKey(Ac.E));
    ApplyOutcome AO = applyCached(Parent, Ac.E);
    N.Summary = AO.Summary.empty() ? editKey(Ac.E) : AO.Summary;
    N.Checks = AO.Failures;
    if (!AO.Applied) {
      N.Status = NodeStatus::Rejected;
      N.RejectReason = AO.reason();
      N.Reward = rejectedReward(O.Reward, N.RejectReason);
    } else {
      N.Source = std::move(AO.NewCode);
      N.Diff = std::move(AO.Diff);
      for (const std::string &F : AO.ExtraNvccFlags)
        if (!is_contained(N.Flags, F))
          N.Flags.push_back(F);
      N.ChangesPrecision |= AO.ChangesPrecision;
      N.Key = sourceKey(N.Source, N.Flags);
      auto Dup = ByKey.find(N.Key);
      if (Dup != ByKey.end()) {
        N.Status = NodeStatus::Duplicate;
        N.DuplicateOf = Dup->second;
        N.Source.clear();
      }
    }
    unsigned Id = N.Id;
    Nodes[Parent].Children.push_back(Id);
    Nodes.push_back(std::move(N));
    if (Nodes[Id].Status != NodeStatus::Rejected &&
        Nodes[Id].Status != NodeStatus::Duplicate)
      checkCompiledCode(Id);
    if (Nodes[Id].Status == NodeStatus::Rejected ||
        Nodes[Id].Status == NodeStatus::Duplicate) {
      // Free: no evaluation spent, never selected.
      if (auto Err = record(Id))
        return std::move(Err);
      if (Only)
        return std::nullopt;
      continue;
    }
    ByKey[Nodes[Id].Key] = Id;
    if (!Nodes[Id].CodeKey.empty())
      ByCode.emplace(Nodes[Id].CodeKey, Id);
    if (O.Strat == Strategy::Random)
      prefetchRandom(Id);
    else
      prefetchAfter(Parent);
    auto R = evaluateNode(Id);
    if (!R)
      return R.takeError();
    return std::optional<unsigned>(Id);
  }
  return std::nullopt;
}

void Searcher::checkCompiledCode(unsigned Id) {
  // Built here (the evaluation then reuses the build): two programs that
  // compile alike measure alike, and the second would spend an evaluation.
  progress("compiling " + Nodes[Id].Summary);
  std::optional<std::string> Key = E.codeKey(spec(Nodes[Id]));
  if (!Key)
    return;
  SearchNode &N = Nodes[Id];
  N.CodeKey = std::move(*Key);
  auto Same = ByCode.find(N.CodeKey);
  if (Same == ByCode.end())
    return;
  N.Status = NodeStatus::Duplicate;
  N.DuplicateOf = Same->second;
  N.SameCode = true;
  N.Source.clear();
  // Reached again by another path, this program is a plain duplicate.
  ByKey.emplace(N.Key, Same->second);
  ++SameCodeSkipped;
  progress(formatv("skipped {0}: same compiled code as node {1} ({2} "
                   "skipped so far)",
                   N.Summary, N.DuplicateOf, SameCodeSkipped)
               .str(),
           /*Phase=*/true);
}

Expected<unsigned> Searcher::evaluateNode(unsigned Id) {
  progress(Nodes[Id].Summary);
  auto Out = E.evaluate(spec(Nodes[Id]));
  if (!Out)
    return Out.takeError();
  SearchNode &N = Nodes[Id];
  N.Outcome = std::move(*Out);
  N.Evaluation = ++Evals;
  ++EvalsThisRun;
  // The baseline the evaluator measured near this candidate, when it says.
  EvalOutcome Orig = Nodes[0].Outcome;
  if (N.Outcome.Baseline && N.Outcome.Baseline->Available)
    Orig.Time = *N.Outcome.Baseline;
  N.Reward = computeReward(Orig, N.Outcome, O.Reward);
  N.Status = N.Reward.Failed ? NodeStatus::Failed : NodeStatus::Evaluated;

  // A speedup far beyond the best so far is re-measured (interleaved with
  // the original) before it may lead: one lucky measurement must not steer
  // the search or end up in the output.
  if (N.Status == NodeStatus::Evaluated &&
      N.Reward.Speed.Cmp == Comparison::Faster &&
      N.Reward.Speed.Counted >
          O.Reward.SuspiciousFactor * std::max(BestSpeedup, 1.0)) {
    progress("re-measuring " + N.Summary, /*Phase=*/true);
    auto RM = E.remeasure(spec(N), RemeasureOptions{3, 50, false});
    if (!RM)
      return RM.takeError();
    SearchNode &M = Nodes[Id];
    M.Remeasured = true;
    M.FirstMeasuredMs = M.Outcome.Time.MedianMs;
    if (!RM->Verified) {
      M.Outcome.Verified = false;
      M.Outcome.Failure = "re-measurement: " + RM->Failure;
    } else {
      M.Outcome.Time = RM->Candidate;
    }
    EvalOutcome O2 = Orig;
    if (RM->Original.Available)
      O2.Time = RM->Original;
    M.Reward = computeReward(O2, M.Outcome, O.Reward);
    M.Status = M.Reward.Failed ? NodeStatus::Failed : NodeStatus::Evaluated;
  }
  if (Nodes[Id].Status == NodeStatus::Failed)
    Nodes[Id].Reward.Why =
        Nodes[Id].Outcome.Failure.empty()
            ? Nodes[Id].Reward.Why
            : Nodes[Id].Reward.Why + ": " + Nodes[Id].Outcome.Failure;
  backup(Id, Nodes[Id].Reward.Total);
  noteEvaluation(Id);
  if (auto Err = record(Id))
    return std::move(Err);
  progress(Nodes[Id].Summary);
  return Id;
}

} // namespace search
} // namespace optiml
