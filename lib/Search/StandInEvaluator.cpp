//===- StandInEvaluator.cpp - A scripted, seeded evaluator ----------------===//

#include "optiml/Search/CandidateEvaluator.h"
#include "optiml/Search/Search.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/xxhash.h"
#include <chrono>
#include <cmath>
#include <fcntl.h>
#include <thread>
#include <unistd.h>

using namespace llvm;

namespace optiml {

CandidateEvaluator::~CandidateEvaluator() = default;

EvalOutcome StandInEvaluator::passing(double Ms, double NoisePctBand) {
  EvalOutcome O;
  O.Compiled = true;
  O.Verified = true;
  O.Time.Available = true;
  O.Time.MedianMs = Ms;
  O.Time.NoisePct = NoisePctBand;
  O.Time.Replays = 20;
  return O;
}

EvalOutcome StandInEvaluator::compileFailure(StringRef Why) {
  EvalOutcome O;
  O.Failure = Why.str();
  O.CompileLog = Why.str();
  return O;
}

EvalOutcome StandInEvaluator::verifyFailure(StringRef FirstDifference) {
  EvalOutcome O;
  O.Compiled = true;
  O.Failure = FirstDifference.str();
  return O;
}

void StandInEvaluator::set(StringRef Source, Script S,
                           ArrayRef<std::string> Flags) {
  std::lock_guard<std::mutex> L(Mu);
  Table[sourceKey(Source, Flags)] = std::move(S);
}

void StandInEvaluator::setCodeKey(StringRef Source, StringRef Key,
                                  ArrayRef<std::string> Flags) {
  std::lock_guard<std::mutex> L(Mu);
  CodeKeys[sourceKey(Source, Flags)] = Key.str();
}

std::optional<std::string> StandInEvaluator::codeKey(const CandidateSpec &C) {
  std::string Key = sourceKey(C.Source, C.ExtraNvccFlags);
  std::lock_guard<std::mutex> L(Mu);
  CodeKeyCalls.push_back(Key);
  auto It = CodeKeys.find(Key);
  if (It == CodeKeys.end())
    return std::nullopt;
  return It->second;
}

std::vector<std::string> StandInEvaluator::codeKeyCalls() const {
  std::lock_guard<std::mutex> L(Mu);
  return CodeKeyCalls;
}

std::vector<std::string> StandInEvaluator::calls() const {
  std::lock_guard<std::mutex> L(Mu);
  return Calls;
}

// Multiplicative noise in [-NoisePct, +NoisePct] percent, a function of the
// seed, the program and which measurement this is: reruns are reproducible.
double StandInEvaluator::noisy(double Ms, StringRef Key, unsigned Salt) const {
  if (NoisePct <= 0)
    return Ms;
  std::string S = (Key + "/" + Twine(Seed) + "/" + Twine(Salt)).str();
  uint64_t H = xxh3_64bits(S);
  double U = double(H >> 11) / double(1ULL << 53); // [0, 1)
  return Ms * (1 + NoisePct / 100 * (2 * U - 1));
}

void StandInEvaluator::logCall(StringRef Key) {
  {
    std::lock_guard<std::mutex> L(Mu);
    Calls.push_back(Key.str());
  }
  if (CallLog.empty())
    return;
  int FD = ::open(CallLog.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (FD < 0)
    return;
  std::string Line = Key.str() + "\n";
  (void)!::write(FD, Line.data(), Line.size());
  ::fsync(FD);
  ::close(FD);
}

StandInEvaluator::Script StandInEvaluator::lookup(const CandidateSpec &C) {
  std::string Key = sourceKey(C.Source, C.ExtraNvccFlags);
  {
    std::lock_guard<std::mutex> L(Mu);
    auto It = Table.find(Key);
    if (It != Table.end())
      return It->second;
  }
  if (Fallback)
    return Fallback(C.Source);
  return Script{compileFailure("stand-in: no scripted outcome for this "
                               "program"),
                std::nullopt, true};
}

Expected<EvalOutcome>
StandInEvaluator::evaluateOriginal(const CandidateSpec &Original) {
  OriginalTime = lookup(Original).Outcome.Time;
  return evaluate(Original);
}

Expected<EvalOutcome> StandInEvaluator::evaluate(const CandidateSpec &C) {
  std::string Key = sourceKey(C.Source, C.ExtraNvccFlags);
  logCall(Key);
  if (DelayMs)
    std::this_thread::sleep_for(std::chrono::milliseconds(DelayMs));
  EvalOutcome O = lookup(C).Outcome;
  if (O.Time.Available)
    O.Time.MedianMs = noisy(O.Time.MedianMs, Key, 0);
  return O;
}

Expected<Remeasurement>
StandInEvaluator::remeasure(const CandidateSpec &C,
                            const RemeasureOptions &Opts) {
  {
    std::lock_guard<std::mutex> L(Mu);
    ++Remeasures;
  }
  Script S = lookup(C);
  Remeasurement R;
  R.Candidate = S.Outcome.Time;
  if (S.RemeasuredMs)
    R.Candidate.MedianMs = *S.RemeasuredMs;
  R.Candidate.Replays = Opts.Rounds * Opts.Replays;
  R.Verified = S.Outcome.Compiled && S.Outcome.Verified;
  R.Failure = S.Outcome.Failure;
  R.Original = OriginalTime;
  R.Original.Replays = Opts.Rounds * Opts.Replays;
  if (Opts.Sanitize) {
    R.SanitizerRan = true;
    R.SanitizerClean = S.SanitizerClean;
    if (!S.SanitizerClean)
      R.SanitizerDetail = "racecheck: scripted hazard";
  }
  return R;
}

} // namespace optiml
