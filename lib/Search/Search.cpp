//===- Search.cpp - Searches over edits: bookkeeping and result -----------===//

#include "optiml/Search/Search.h"
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

const char *toString(Strategy S) {
  switch (S) {
  case Strategy::MCTS:
    return "mcts";
  case Strategy::Greedy:
    return "greedy";
  case Strategy::Beam:
    return "beam";
  case Strategy::Random:
    return "random";
  }
  return "?";
}

std::optional<Strategy> parseStrategy(StringRef S) {
  for (Strategy X :
       {Strategy::MCTS, Strategy::Greedy, Strategy::Beam, Strategy::Random})
    if (S == toString(X))
      return X;
  return std::nullopt;
}

const char *toString(NodeStatus S) {
  switch (S) {
  case NodeStatus::Original:
    return "original";
  case NodeStatus::Evaluated:
    return "evaluated";
  case NodeStatus::Failed:
    return "failed";
  case NodeStatus::Rejected:
    return "rejected";
  case NodeStatus::Duplicate:
    return "duplicate";
  }
  return "?";
}

double puctScore(double Q, double Prior, unsigned ParentVisits,
                 unsigned ChildVisits, double CPuct) {
  return Q +
         CPuct * Prior * std::sqrt(double(ParentVisits)) / (1.0 + ChildVisits);
}

unsigned wideningLimit(unsigned Visits, double C, double Alpha) {
  double L = std::ceil(C * std::pow(double(std::max(Visits, 1u)), Alpha));
  return std::max(1u, unsigned(L));
}

std::vector<unsigned> SearchResult::bestPath() const {
  std::vector<unsigned> P;
  for (int Id = Best; Id >= 0; Id = Nodes[Id].Parent)
    P.push_back(Id);
  std::reverse(P.begin(), P.end());
  return P;
}

namespace search {

Error Searcher::lockRunDir() {
  SmallString<256> JPath(O.RunDir);
  sys::path::append(JPath, "journal.jsonl");
  // Checked before anything is created: a mistyped directory must not
  // become a fresh run.
  if (O.Resume && !sys::fs::exists(JPath))
    return createStringError(
        std::make_error_code(std::errc::no_such_file_or_directory),
        sys::fs::is_directory(O.RunDir)
            ? "cannot resume: '%s' holds no search journal (journal.jsonl); "
              "drop --resume to start a new search there"
            : "cannot resume: there is no run directory '%s'; drop --resume "
              "to start a new search there",
        O.RunDir.c_str());
  if (std::error_code EC = sys::fs::create_directories(O.RunDir))
    return createStringError(EC, "cannot create run directory '%s': %s",
                             O.RunDir.c_str(), EC.message().c_str());
  SmallString<256> LockPath(O.RunDir);
  sys::path::append(LockPath, "lock");
  std::string Holder;
  auto L = FileLock::tryAcquire(LockPath, &Holder);
  if (!L) {
    std::string Msg;
    std::error_code EC;
    handleAllErrors(L.takeError(), [&](const ErrorInfoBase &EI) {
      Msg = EI.message();
      EC = EI.convertToErrorCode();
    });
    // A file system without locks (some network and FUSE ones) should not
    // stop the search; say what is lost.
    if (EC == std::errc::no_lock_available ||
        EC == std::errc::operation_not_supported ||
        EC == std::errc::function_not_supported) {
      warn(Msg + "; nothing stops a second search from writing this run "
                 "directory at the same time");
      return Error::success();
    }
    return createStringError(EC, "%s", Msg.c_str());
  }
  if (!*L)
    return createStringError(
        std::make_error_code(std::errc::device_or_resource_busy),
        "run directory '%s' is in use by another search (%s); wait for it "
        "to finish, or choose another --run-dir",
        O.RunDir.c_str(), Holder.c_str());
  Lock = std::move(*L);
  return Error::success();
}

void Searcher::note(StringRef Message) {
  if (O.OnNote)
    O.OnNote(Message);
  else
    WithColor::note() << Message << "\n";
}

std::string Searcher::resumeNote(StringRef Path) const {
  unsigned Failed = 0, Verified = 0;
  for (const SearchNode &N : Nodes) {
    Failed += N.Status == NodeStatus::Failed;
    Verified += N.Status == NodeStatus::Evaluated;
  }
  std::string Budget =
      O.Budget ? formatv(" of the budget of {0}", O.Budget).str() : "";
  std::string Best = BestSpeedup > 1
                         ? formatv("; best so far {0:F2}x", BestSpeedup).str()
                         : "; nothing faster yet";
  std::string Same =
      SameCodeSkipped
          ? formatv(", {0} skipped as the same compiled code", SameCodeSkipped)
                .str()
          : "";
  return formatv("resuming the search in {0}: {1} evaluation{2}{3} already "
                 "made ({4} verified, {5} failed{6}){7}",
                 Path, Evals, Evals == 1 ? "" : "s", Budget, Verified, Failed,
                 Same, Best)
      .str();
}

void Searcher::warn(StringRef Message) {
  if (O.OnWarning)
    O.OnWarning(Message);
  else
    WithColor::warning() << Message << "\n";
}

Error Searcher::checkHeader(const JournalContents &JC) {
  const JournalHeader &H = *JC.Header;
  if (H.OriginalKey != sourceKey(OriginalSrc))
    return createStringError(
        "the run directory '%s' holds a search of a different program "
        "(the input changed since the run started); use another --run-dir",
        O.RunDir.c_str());
  auto Mismatch = [&](StringRef What, StringRef Journaled, StringRef Now,
                      StringRef Fix) {
    return createStringError(
        "%s:%u: cannot resume: the journal's search uses %s %s, this run "
        "%s; %s, or choose another --run-dir",
        JC.Path.c_str(), JC.HeaderLine, What.str().c_str(),
        Journaled.str().c_str(), Now.str().c_str(), Fix.str().c_str());
  };
  StringRef Strat = toString(O.Strat);
  if (H.Strategy != Strat)
    return Mismatch("strategy", H.Strategy, ("asks for " + Strat).str(),
                    ("resume with --strategy " + H.Strategy));
  if (H.Policy != P.name())
    return Mismatch("policy", H.Policy, ("uses " + P.name()).str(),
                    ("resume with --policy " + H.Policy));
  if (H.Kernels != O.Kernels)
    return Mismatch(H.Kernels.size() == 1 ? "kernel" : "kernels",
                    join(H.Kernels, ", "), ("targets " + join(O.Kernels, ", ")),
                    "resume with the same --kernel options");
  return Error::success();
}

Error Searcher::init() {
  if (!O.RunDir.empty())
    if (Error Err = lockRunDir())
      return Err;
  if (!O.RunDir.empty() && O.Resume) {
    auto JC = readJournal(O.RunDir);
    if (!JC)
      return JC.takeError();
    if (!JC->Dropped.empty())
      warn(JC->Dropped);
    if (JC->Header)
      if (Error Err = checkHeader(*JC))
        return Err;
    if (!JC->Nodes.empty()) {
      if (auto Err = resume(*JC))
        return Err;
      note(resumeNote(JC->Path));
      auto W = JournalWriter::open(O.RunDir, /*Append=*/true, JC->ValidBytes);
      if (!W)
        return W.takeError();
      J = std::move(*W);
      return Error::success();
    }
    // The header and node 0 are written once the original is measured: a
    // run stopped before that left nothing to continue.
    warn(formatv("{0} holds no search node yet (the run was stopped while "
                 "measuring the original); starting the search afresh",
                 JC->Path)
             .str());
    auto W = JournalWriter::open(O.RunDir, /*Append=*/true, /*TruncateTo=*/0);
    if (!W)
      return W.takeError();
    J = std::move(*W);
  } else if (!O.RunDir.empty()) {
    auto W = JournalWriter::open(O.RunDir, /*Append=*/false);
    if (!W)
      return W.takeError();
    J = std::move(*W);
  }

  SearchNode Root;
  Root.Source = OriginalSrc;
  Root.Key = sourceKey(OriginalSrc);
  Root.Summary = "original";
  progress("measuring the original", /*Phase=*/true);
  auto Out = E.evaluateOriginal(spec(Root));
  if (!Out)
    return Out.takeError();
  Root.Outcome = std::move(*Out);
  if (!Root.Outcome.passed()) {
    // One that does not build usually lacks a flag (a library to link).
    bool Build = StringRef(Root.Outcome.Failure).starts_with("nvcc: ");
    return createStringError(
        "the original program does not pass its own evaluation (%s); fix it "
        "%s first",
        Root.Outcome.Failure.empty() ? "no timing"
                                     : Root.Outcome.Failure.c_str(),
        Build ? "(flags it needs to build at all, such as -lcublas, go with "
                "--build-arg)"
              : "or pick a deterministic harness");
  }
  Root.Reward.Expandable = true;
  // An edit that compiles to the original's code is its duplicate.
  if (std::optional<std::string> Code = E.codeKey(spec(Root)))
    Root.CodeKey = std::move(*Code);
  Nodes.push_back(std::move(Root));
  ByKey[Nodes[0].Key] = 0;
  if (!Nodes[0].CodeKey.empty())
    ByCode[Nodes[0].CodeKey] = 0;
  backup(0, 0);
  if (J) {
    JournalHeader H;
    H.File = O.FileName;
    H.OriginalKey = Nodes[0].Key;
    H.Strategy = toString(O.Strat);
    H.Policy = P.name().str();
    H.Seed = O.Seed;
    H.Budget = O.Budget;
    H.Kernels = O.Kernels;
    // Known now: measuring the original may have dropped the last launch.
    VerificationScope VS = E.verification();
    H.VerifyLast = VS.LastLaunch;
    H.VerifyLastDropped = VS.Dropped;
    if (auto Err = J->writeHeader(H))
      return Err;
  }
  return record(0);
}

Error Searcher::resume(JournalContents &JC) {
  // readJournal checked the tree: node 0 the original, parents earlier.
  if (JC.Nodes.empty() || JC.Nodes[0].Status != NodeStatus::Original)
    return createStringError("journal in '%s' has no original node",
                             O.RunDir.c_str());
  Nodes = std::move(JC.Nodes);
  Nodes[0].Source = OriginalSrc;
  for (SearchNode &N : Nodes) {
    N.Visits = 0;
    N.ValueSum = 0;
    N.MaxValue = -1e300;
    N.Children.clear();
  }
  for (SearchNode &N : Nodes) {
    if (N.Parent >= 0) {
      if (unsigned(N.Parent) >= N.Id)
        return createStringError("journal in '%s': node %u has parent %d",
                                 O.RunDir.c_str(), N.Id, N.Parent);
      Nodes[N.Parent].Children.push_back(N.Id);
      N.Path = Nodes[N.Parent].Path;
      if (N.Step)
        N.Path.push_back(*N.Step);
    }
    if (N.Status == NodeStatus::Original || N.Status == NodeStatus::Evaluated ||
        N.Status == NodeStatus::Failed) {
      ByKey.emplace(N.Key, N.Id);
      if (!N.CodeKey.empty())
        ByCode.emplace(N.CodeKey, N.Id);
    }
    if (N.Status == NodeStatus::Duplicate && N.SameCode) {
      ByKey.emplace(N.Key, N.DuplicateOf);
      ++SameCodeSkipped;
    }
  }
  if (Error Err = rebuildSources(JC.MissingSources))
    return Err;
  // Replay the backups in the order the nodes were made: the statistics
  // come out exactly as the killed run had them.
  backup(0, 0);
  for (SearchNode &N : Nodes) {
    if (!N.Evaluation)
      continue;
    backup(N.Id, N.Reward.Total);
    Evals = std::max(Evals, N.Evaluation);
    noteEvaluation(N.Id);
  }
  return Error::success();
}

Error Searcher::rebuildSources(const std::vector<unsigned> &Missing) {
  if (Missing.empty())
    return Error::success();
  std::string Dir = sys::path::parent_path(nodeSourcePath(O.RunDir, 0)).str();
  auto Cannot = [&](const SearchNode &N, const Twine &Why) {
    return createStringError(
        formatv("cannot resume: node {0}'s source is missing from '{1}' and "
                "{2}; restore that folder, or start afresh without --resume",
                N.Id, Dir, Why)
            .str());
  };
  // Ascending ids: a parent is rebuilt before its children.
  for (unsigned Id : Missing) {
    SearchNode &N = Nodes[Id];
    if (!N.Step)
      return Cannot(N, "the journal records no edit to rebuild it from");
    const SearchNode &Par = Nodes[N.Parent];
    if (Par.Source.empty())
      return Cannot(
          N, formatv("its parent, node {0}, has no source either", Par.Id));
    ApplyOutcome AO = A.apply(Par.Source, *N.Step);
    if (!AO.Applied)
      return Cannot(N, "its edit (" + editKey(*N.Step) +
                           ") no longer applies to node " +
                           std::to_string(Par.Id) + ": " + AO.reason());
    std::string Key = sourceKey(AO.NewCode, N.Flags);
    if (Key != N.Key)
      return Cannot(N, formatv("its edit ({0}) now gives another program "
                               "(key {1}; the journal has {2}): the edits "
                               "changed since the search ran",
                               editKey(*N.Step), Key, N.Key));
    N.Source = std::move(AO.NewCode);
    if (Error Err = writeNodeSource(O.RunDir, Id, N.Source))
      return Err;
  }
  note(formatv("rebuilt the source{0} of {1} node{0} from {2} by applying "
               "their edits again (the journal came without them)",
               Missing.size() == 1 ? "" : "s", Missing.size(), Dir)
           .str());
  return Error::success();
}

Error Searcher::record(unsigned Id) {
  if (!J)
    return Error::success();
  return J->writeNode(Nodes[Id]);
}

void Searcher::backup(unsigned Id, double R) {
  for (int I = Id; I >= 0; I = Nodes[I].Parent) {
    SearchNode &N = Nodes[I];
    ++N.Visits;
    N.ValueSum += R;
    N.MaxValue = std::max(N.MaxValue, R);
  }
}

void Searcher::noteEvaluation(unsigned Id) {
  const SearchNode &N = Nodes[Id];
  if (N.Status == NodeStatus::Evaluated &&
      N.Reward.Speed.Cmp == Comparison::Faster &&
      N.Reward.Speed.Counted > BestSpeedup) {
    BestSpeedup = N.Reward.Speed.Counted;
    Best = Id;
  }
  Curve.push_back({N.Evaluation, BestSpeedup});
}

void Searcher::progress(StringRef Current, bool Phase) {
  if (!O.OnProgress)
    return;
  SearchProgress Pr;
  Pr.Phase = Phase;
  Pr.Done = Evals;
  Pr.Budget = O.Budget;
  Pr.BestSpeedup = BestSpeedup;
  Pr.Current = Current.str();
  Pr.SameCodeSkipped = SameCodeSkipped;
  Pr.ElapsedSeconds = elapsed();
  if (EvalsThisRun) {
    double Per = Pr.ElapsedSeconds / EvalsThisRun;
    double Eta = -1;
    if (O.Budget)
      Eta = Per * (O.Budget - std::min(O.Budget, Evals));
    if (O.TimeLimitSeconds > 0) {
      double Left = std::max(0.0, O.TimeLimitSeconds - Pr.ElapsedSeconds);
      Eta = Eta < 0 ? Left : std::min(Eta, Left);
    }
    Pr.EtaSeconds = Eta;
  }
  O.OnProgress(Pr);
}

unsigned Searcher::evaluatedChildren(const SearchNode &N) const {
  unsigned C = 0;
  for (unsigned Ch : N.Children)
    if (Nodes[Ch].Evaluation)
      ++C;
  return C;
}

Error Searcher::finalize(SearchResult &R) {
  // Candidates that led, best first: if the best fails its final check,
  // the next one may still be a verified improvement.
  std::vector<unsigned> Order;
  for (const SearchNode &N : Nodes)
    if (N.Status == NodeStatus::Evaluated &&
        N.Reward.Speed.Cmp == Comparison::Faster)
      Order.push_back(N.Id);
  stableSort(Order, [&](unsigned L, unsigned Rr) {
    return Nodes[L].Reward.Speed.Counted > Nodes[Rr].Reward.Speed.Counted;
  });
  if (Order.size() > 3)
    Order.resize(3);
  if (Order.empty()) {
    R.Conclusion = formatv("no candidate beat the original beyond noise in {0} "
                           "evaluations; nothing written",
                           Evals);
    return Error::success();
  }
  std::vector<std::string> Problems;
  for (unsigned Id : Order) {
    if (!O.Finalize) {
      R.Best = Id;
      R.FinalSpeedup = Nodes[Id].Reward.Speed.Counted;
      R.Improved = true;
      break;
    }
    progress("final check of " + Nodes[Id].Summary, /*Phase=*/true);
    auto RM = E.remeasure(spec(Nodes[Id]), O.Final);
    if (!RM)
      return RM.takeError();
    R.Finalized = true;
    R.Final = *RM;
    R.Best = Id;
    SpeedupAssessment S =
        assessSpeedup(RM->Original, RM->Candidate, O.Reward.MinNoisePct);
    R.FinalSpeedup = S.Raw;
    if (!RM->Verified) {
      Problems.push_back(formatv("node {0} failed verification when "
                                 "re-run: {1}",
                                 Id, RM->Failure));
      continue;
    }
    if (RM->SanitizerRan && !RM->SanitizerClean) {
      Problems.push_back(
          formatv("node {0}: compute-sanitizer: {1}", Id, RM->SanitizerDetail));
      continue;
    }
    if (S.Cmp != Comparison::Faster) {
      Problems.push_back(formatv("node {0}: {1:F2}x on re-measurement, {2}", Id,
                                 S.Raw, toString(S.Cmp)));
      continue;
    }
    R.Improved = true;
    break;
  }
  if (!R.Improved) {
    R.Best = 0;
    R.Conclusion = "no candidate is verified faster than the original beyond "
                   "noise after the final check (" +
                   join(Problems, "; ") + "); nothing written";
    return Error::success();
  }
  const SearchNode &B = Nodes[R.Best];
  R.FinalSource = B.Source;
  R.FinalFlags = B.Flags;
  R.FinalDiff = A.diff(OriginalSrc, B.Source);
  R.Conclusion =
      formatv("{0:F2}x faster than the original (verified{1}), after {2} "
              "edit{3}",
              R.FinalSpeedup,
              R.Final && R.Final->SanitizerRan ? ", sanitizer clean" : "",
              B.Depth, B.Depth == 1 ? "" : "s");
  return Error::success();
}

Expected<SearchResult> Searcher::run() {
  if (!O.Budget && O.TimeLimitSeconds <= 0)
    return createStringError("give the search a budget: evaluations "
                             "(--budget) or time (--time)");
  if (auto Err = init())
    return std::move(Err);
  Error Err = Error::success();
  switch (O.Strat) {
  case Strategy::MCTS:
    Err = runMcts();
    break;
  case Strategy::Greedy:
    Err = runGreedy();
    break;
  case Strategy::Beam:
    Err = runBeam();
    break;
  case Strategy::Random:
    Err = runRandom();
    break;
  }
  if (Err)
    return std::move(Err);
  if (StopReason.empty())
    (void)haveBudget(); // fills in why it stopped

  SearchResult R;
  if (auto Err = finalize(R))
    return std::move(Err);
  R.Evaluations = Evals;
  R.EvaluationsThisRun = EvalsThisRun;
  for (const SearchNode &N : Nodes)
    if (N.Evaluation && N.Outcome.Cached)
      ++R.EvaluationsCached;
  R.SameCodeSkipped = SameCodeSkipped;
  if (SameCodeSkipped)
    note(formatv("{0} candidate{1} not evaluated: {2} to the same code as a "
                 "program already measured",
                 SameCodeSkipped, SameCodeSkipped == 1 ? " was" : "s were",
                 SameCodeSkipped == 1 ? "it compiles" : "they compile")
             .str());
  R.BestEvaluation = Nodes[R.Best].Evaluation;
  R.BestSpeedup = BestSpeedup;
  R.Curve = Curve;
  R.StopReason = StopReason;
  R.Seconds = elapsed();
  R.Nodes = std::move(Nodes);
  if (J)
    if (auto Err = J->writeFinal(R))
      return std::move(Err);
  return R;
}

} // namespace search

Expected<SearchResult> runSearch(StringRef Original, const SearchOptions &O,
                                 Policy &P, EditApplier &A,
                                 CandidateEvaluator &E) {
  search::Searcher S(Original, O, P, A, E);
  return S.run();
}

} // namespace optiml
