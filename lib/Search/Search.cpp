//===- Search.cpp - MCTS, greedy, beam and random search over edits -------===//

#include "optiml/Search/Search.h"
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
  return Q + CPuct * Prior * std::sqrt(double(ParentVisits)) /
                 (1.0 + ChildVisits);
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

namespace {

using Clock = std::chrono::steady_clock;

class Searcher {
public:
  Searcher(StringRef Original, const SearchOptions &O, Policy &P,
           EditApplier &A, CandidateEvaluator &E)
      : OriginalSrc(Original.str()), O(O), P(P), A(A), E(E), Rng(O.Seed) {}

  Expected<SearchResult> run();

private:
  Error init();
  Error lockRunDir();
  Error checkHeader(const JournalContents &JC);
  Error resume(JournalContents &JC);
  void warn(StringRef Message);
  void note(llvm::StringRef Message);
  std::string resumeNote(llvm::StringRef Path) const;
  bool haveBudget() {
    if (Stopped)
      return false;
    if (O.Budget && Evals >= O.Budget) {
      StopReason = formatv("budget of {0} evaluations spent", O.Budget);
      return false;
    }
    if (O.TimeLimitSeconds > 0 && elapsed() >= O.TimeLimitSeconds) {
      StopReason = formatv("time limit of {0} s reached", O.TimeLimitSeconds);
      return false;
    }
    if (O.ShouldStop && O.ShouldStop()) {
      StopReason = "stopped";
      Stopped = true;
      return false;
    }
    return true;
  }
  double elapsed() const {
    return std::chrono::duration<double>(Clock::now() - Start).count();
  }

  Error ensureProposed(unsigned Id);
  /// Tries untried actions of \p Parent (the one at \p Index first) until
  /// one yields a new program, which is evaluated. Returns its id, or none
  /// when every remaining action was rejected or a duplicate.
  Expected<std::optional<unsigned>> expand(unsigned Parent, size_t Index = 0);
  Expected<unsigned> evaluateNode(unsigned Id);
  ApplyOutcome applyCached(unsigned Parent, const Edit &Ed);
  /// Applies (and has built) ahead the edits most likely expanded next.
  void prefetchAfter(unsigned Parent);
  void prefetchRandom(unsigned NewId);
  void startPrefetch(const std::vector<std::pair<unsigned, Edit>> &Next);
  /// The nodes runRandom draws from.
  std::vector<unsigned> randomOpen() const;
  Error record(unsigned Id);
  void backup(unsigned Id, double R);
  void noteEvaluation(unsigned Id);
  void progress(StringRef Current);
  unsigned evaluatedChildren(const SearchNode &N) const;
  bool selectable(const SearchNode &N) const {
    return N.Status == NodeStatus::Evaluated && N.expandable() &&
           !N.Exhausted;
  }
  double q(const SearchNode &N) const {
    if (!N.Visits)
      return 0;
    return O.Backup == BackupMode::Max ? N.MaxValue : N.ValueSum / N.Visits;
  }
  CandidateSpec spec(const SearchNode &N) const {
    return CandidateSpec{N.Source, N.Flags, N.ChangesPrecision};
  }

  Error runMcts();
  Error runGreedy();
  Error runBeam();
  Error runRandom();
  Error finalize(SearchResult &R);

  std::string OriginalSrc;
  const SearchOptions &O;
  Policy &P;
  EditApplier &A;
  CandidateEvaluator &E;
  std::mt19937_64 Rng;
  /// Held while the search runs; declared before the journal and the
  /// background work so that it is released after them.
  std::optional<FileLock> Lock;
  std::vector<SearchNode> Nodes;
  std::map<std::string, unsigned> ByKey;
  /// Edits applied ahead of their expansion (prefetchAfter), by parent and
  /// edit; with a concurrent applier they may still be running.
  std::map<std::pair<unsigned, std::string>, std::shared_future<ApplyOutcome>>
      Applied;
  /// Background prefetches (apply, then hand to the evaluator to build);
  /// waited for when the search ends.
  std::vector<std::future<void>> Background;
  std::unique_ptr<JournalWriter> J;
  unsigned Evals = 0, EvalsThisRun = 0;
  int Best = 0;
  double BestSpeedup = 1;
  std::vector<std::pair<unsigned, double>> Curve;
  std::string StopReason;
  bool Stopped = false;
  Clock::time_point Start = Clock::now();
};

} // namespace

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
  std::string Best =
      BestSpeedup > 1 ? formatv("; best so far {0:F2}x", BestSpeedup).str()
                      : "; nothing faster yet";
  return formatv("resuming the search in {0}: {1} evaluation{2}{3} already "
                 "made ({4} verified, {5} failed){6}",
                 Path, Evals, Evals == 1 ? "" : "s", Budget, Verified, Failed,
                 Best)
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
  progress("measuring the original");
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
  Nodes.push_back(std::move(Root));
  ByKey[Nodes[0].Key] = 0;
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
        N.Status == NodeStatus::Failed)
      ByKey.emplace(N.Key, N.Id);
  }
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

void Searcher::progress(StringRef Current) {
  if (!O.OnProgress)
    return;
  SearchProgress Pr;
  Pr.Done = Evals;
  Pr.Budget = O.Budget;
  Pr.BestSpeedup = BestSpeedup;
  Pr.Current = Current.str();
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
      Res = "same program as node " + std::to_string(C.DuplicateOf);
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
                                                   size_t Index) {
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
    if (Nodes[Id].Status == NodeStatus::Rejected ||
        Nodes[Id].Status == NodeStatus::Duplicate) {
      // Free: no evaluation spent, never selected.
      if (auto Err = record(Id))
        return std::move(Err);
      continue;
    }
    ByKey[Nodes[Id].Key] = Id;
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
    progress("re-measuring " + N.Summary);
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
    Nodes[Id].Reward.Why = Nodes[Id].Outcome.Failure.empty()
                               ? Nodes[Id].Reward.Why
                               : Nodes[Id].Reward.Why + ": " +
                                     Nodes[Id].Outcome.Failure;
  backup(Id, Nodes[Id].Reward.Total);
  noteEvaluation(Id);
  if (auto Err = record(Id))
    return std::move(Err);
  progress(Nodes[Id].Summary);
  return Id;
}

Error Searcher::runMcts() {
  while (haveBudget()) {
    unsigned Id = 0;
    bool Evaluated = false;
    while (!Evaluated && haveBudget()) {
      if (auto Err = ensureProposed(Id))
        return Err;
      SearchNode &N = Nodes[Id];
      bool CanWiden = !N.Untried.empty() && N.Depth < O.MaxDepth &&
                      evaluatedChildren(N) <
                          wideningLimit(N.Visits, O.WideningC, O.WideningAlpha);
      std::vector<unsigned> Sel;
      for (unsigned C : N.Children)
        if (selectable(Nodes[C]))
          Sel.push_back(C);
      if (CanWiden || (Sel.empty() && !N.Untried.empty())) {
        auto New = expand(Id);
        if (!New)
          return New.takeError();
        if (*New) {
          Evaluated = true;
          break;
        }
        continue; // everything left was rejected or a duplicate
      }
      if (Sel.empty()) {
        // Nothing left below this node.
        Nodes[Id].Exhausted = true;
        if (Id == 0) {
          StopReason = "every reachable program has been evaluated";
          return Error::success();
        }
        break; // start again from the root
      }
      unsigned BestC = Sel.front();
      double BestS = -1e300;
      for (unsigned C : Sel) {
        double S = puctScore(q(Nodes[C]), Nodes[C].Prior, N.Visits,
                             Nodes[C].Visits, O.CPuct);
        if (S > BestS) {
          BestS = S;
          BestC = C;
        }
      }
      Id = BestC;
    }
  }
  return Error::success();
}

Error Searcher::runGreedy() {
  // Best first: always expand the best state that still has actions.
  while (haveBudget()) {
    int Pick = -1;
    for (const SearchNode &N : Nodes) {
      if (!(N.Status == NodeStatus::Original ||
            N.Status == NodeStatus::Evaluated) ||
          !N.expandable() || N.Exhausted)
        continue;
      if (Pick < 0 || N.Reward.Total > Nodes[Pick].Reward.Total + 1e-12 ||
          (std::abs(N.Reward.Total - Nodes[Pick].Reward.Total) <= 1e-12 &&
           N.Depth > Nodes[Pick].Depth))
        Pick = N.Id;
    }
    if (Pick < 0) {
      StopReason = "every reachable program has been evaluated";
      return Error::success();
    }
    if (auto Err = ensureProposed(Pick))
      return Err;
    if (Nodes[Pick].Untried.empty()) {
      Nodes[Pick].Exhausted = true;
      continue;
    }
    auto New = expand(Pick);
    if (!New)
      return New.takeError();
  }
  return Error::success();
}

Error Searcher::runBeam() {
  std::vector<unsigned> Beam{0};
  while (haveBudget() && !Beam.empty()) {
    std::vector<unsigned> Next;
    for (unsigned B : Beam) {
      if (auto Err = ensureProposed(B))
        return Err;
      while (!Nodes[B].Untried.empty() && haveBudget()) {
        auto New = expand(B);
        if (!New)
          return New.takeError();
      }
      for (unsigned C : Nodes[B].Children)
        if (selectable(Nodes[C]))
          Next.push_back(C);
    }
    stableSort(Next, [&](unsigned L, unsigned R) {
      return Nodes[L].Reward.Total > Nodes[R].Reward.Total;
    });
    if (Next.size() > O.BeamWidth)
      Next.resize(O.BeamWidth);
    Beam = std::move(Next);
  }
  if (Beam.empty() && StopReason.empty())
    StopReason = "every reachable program has been evaluated";
  return Error::success();
}

Error Searcher::runRandom() {
  while (haveBudget()) {
    std::vector<unsigned> Open = randomOpen();
    if (Open.empty()) {
      StopReason = "every reachable program has been evaluated";
      return Error::success();
    }
    unsigned Pick = Open[Rng() % Open.size()];
    if (auto Err = ensureProposed(Pick))
      return Err;
    if (Nodes[Pick].Untried.empty()) {
      Nodes[Pick].Exhausted = true;
      continue;
    }
    auto New = expand(Pick, Rng() % Nodes[Pick].Untried.size());
    if (!New)
      return New.takeError();
  }
  return Error::success();
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
    progress("final check of " + Nodes[Id].Summary);
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
      Problems.push_back(formatv("node {0}: {1:F2}x on re-measurement, {2}",
                                 Id, S.Raw, toString(S.Cmp)));
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

Expected<SearchResult> runSearch(StringRef Original, const SearchOptions &O,
                                 Policy &P, EditApplier &A,
                                 CandidateEvaluator &E) {
  Searcher S(Original, O, P, A, E);
  return S.run();
}

} // namespace optiml
