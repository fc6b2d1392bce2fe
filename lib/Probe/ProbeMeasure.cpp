//===- ProbeMeasure.cpp - Timing and metrics ------------------------------===//
//
// A launch timed by replays, and profiled with the range profiler (after an
// L2 clean, as ncu's cache control does).
//
//===----------------------------------------------------------------------===//

#include "ProbeInternal.h"
#include "ProbeLaunch.h"
#include "optiml/Eval/Compare.h"

#include <cuda.h>
#include <cupti.h>

#include <cxxabi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>

namespace optiml {
namespace probe {

//===-------------------------------------------------------------------===//
// L2
//===-------------------------------------------------------------------===//

/// Queues an L2 clean on the launch's stream. A failure is reported once,
/// with what it costs (Consequence).
bool cleanL2(Launch &L, const char *Consequence) {
  ProbeState &S = state();
  std::string Why = S.Kernels.cleanL2(L.Stream);
  if (Why.empty())
    return true;
  if (!S.CleanL2Failed)
    error("cannot clean L2 (" + Why + "): " + Consequence);
  S.CleanL2Failed = true;
  return false;
}

//===-------------------------------------------------------------------===//
// Timing
//===-------------------------------------------------------------------===//

void timeLaunch(Launch &L, std::string &Error) {
  ProbeState &S = state();
  unsigned K = S.Config.Replays;
  while (S.Events.size() < 2 * K) {
    CUevent E;
    if (!ok(cuEventCreate(&E, CU_EVENT_DEFAULT), "cuEventCreate", Error))
      return;
    S.Events.push_back(E);
  }
  if (!snapshotTo(L, &Buffer::After, Error))
    return;
  bool Flush = S.Config.FlushL2;
  for (unsigned R = 0; R < K; ++R) {
    if (!restoreFrom(L, &Buffer::Before, Error))
      return;
    // After the restore: its copies leave the inputs in L2, dirty.
    if (Flush && !cleanL2(L, "timed replays are not flushed"))
      Flush = false;
    if (!ok(cuEventRecord(S.Events[2 * R], L.Stream), "cuEventRecord", Error) ||
        !ok(relaunch(L), "relaunch", Error) ||
        !ok(cuEventRecord(S.Events[2 * R + 1], L.Stream), "cuEventRecord",
            Error))
      return;
  }
  if (!ok(cuStreamSynchronize(L.Stream), "cuStreamSynchronize", Error))
    return;
  for (unsigned R = 0; R < K; ++R) {
    float Ms = 0;
    if (!ok(cuEventElapsedTime(&Ms, S.Events[2 * R], S.Events[2 * R + 1]),
            "cuEventElapsedTime", Error))
      return;
    L.Record.TimesMs.push_back(Ms);
  }
  // The program continues from exactly what its own launch produced.
  if (restoreFrom(L, &Buffer::After, Error))
    ok(cuStreamSynchronize(L.Stream), "cuStreamSynchronize", Error);
}

//===-------------------------------------------------------------------===//
// Metrics
//===-------------------------------------------------------------------===//

/// Marks the buffers the program's own launch left as it found them
/// (compared on the device); a buffer that cannot be compared counts as
/// changed.
void markUnchanged(Launch &L) {
  for (Buffer &B : L.Buffers) {
    bool Changed = true;
    B.Unchanged = changedOnDevice(B, L.Stream, Changed).empty() && !Changed;
  }
}

/// Runs the profiler's passes as relaunches from the pre-launch state, each
/// after an L2 clean (so the DRAM writes counted are the launch's own, as
/// with ncu's cache control), then puts back what the program's own launch
/// left. CUPTI's kernel replay would restore memory between its passes,
/// leaving dirty lines that the next pass writes back.
void profileLaunch(Launch &L, std::string &Error) {
  ProbeState &S = state();
  if (!snapshotTo(L, &Buffer::After, Error))
    return;
  if (S.Config.RestoreWrittenOnly)
    markUnchanged(L);
  RangeProfiler::Replay Mode = RangeProfiler::Replay::User;
  bool InPass = S.Config.CleanInPass;
  std::string Why = S.Profiler.begin(Mode, S.Config.FreshProfiler, InPass);
  if (!Why.empty()) {
    error(L.Kernel + " launch " + std::to_string(L.Record.Ordinal) +
          ": user replay unavailable (" + Why + "): kernel replay, " + DirtyL2);
    Mode = RangeProfiler::Replay::Kernel;
    InPass = false;
    Why = S.Profiler.begin(Mode, S.Config.FreshProfiler);
  }
  L.Record.Replay = Mode == RangeProfiler::Replay::User ? "user" : "kernel";
  // Unprofiled launches first (outside any pass, as the L2 clean is).
  if (Why.empty() && Mode == RangeProfiler::Replay::User)
    for (unsigned W = 0; W < S.Config.WarmUpLaunches; ++W)
      if (!restoreFrom(L, &Buffer::Before, Error) ||
          !ok(relaunch(L), "relaunch (warm-up)", Error))
        break;
  bool Cleaned = true, Done = false;
  // The profiler says when it has every pass; the bound only guards
  // against one that never does.
  size_t MaxPasses = S.Profiler.passes() + 2;
  size_t Pass = 0;
  for (; Why.empty() && !Done && Pass < MaxPasses; ++Pass) {
    if (!restoreFrom(L, &Buffer::Before, Error))
      break;
    // After the restore, whose copies leave dirty lines; waited for, so
    // the pass holds nothing but the launch. CleanInPass: inside the pass,
    // after the profiler's start and before the range (as ncu flushes
    // right before the kernel).
    if (InPass && !(Why = S.Profiler.startPass()).empty())
      break;
    Cleaned &= S.Config.CleanL2 && cleanL2(L, DirtyL2);
    if (!ok(cuCtxSynchronize(), "cuCtxSynchronize", Error)) {
      bool Ignored = false;
      if (InPass) // the pass is open
        S.Profiler.endPass(Ignored);
      break;
    }
    if (!InPass && !(Why = S.Profiler.startPass()).empty())
      break;
    if (InPass && !(Why = S.Profiler.pushRange()).empty()) {
      bool Ignored = false;
      S.Profiler.endPass(Ignored);
      break;
    }
    bool Launched = ok(relaunch(L), "relaunch", Error);
    if (InPass) // Why is empty here: the pass started and the range opened
      Why = S.Profiler.popRange();
    Launched = Launched && ok(cuCtxSynchronize(), "cuCtxSynchronize", Error);
    std::string EndWhy = S.Profiler.endPass(Done);
    if (Why.empty())
      Why = EndWhy;
    if (!Launched)
      break;
    if (Mode == RangeProfiler::Replay::Kernel)
      Done = true; // every pass ran inside the one launch
  }
  L.Record.L2Cleaned = Cleaned && Mode == RangeProfiler::Replay::User;
  L.Record.Passes = Mode == RangeProfiler::Replay::User ? Pass : 0;
  if (Why.empty() && Error.empty())
    Why = Done ? S.Profiler.finish(L.Record.Metrics)
               : "the range profiler did not complete its " +
                     std::to_string(S.Profiler.passes()) + " passes in " +
                     std::to_string(Pass) + " launches";
  if (!Why.empty())
    S.Result.MetricsUnavailable = Why;
  // The program continues from exactly what its own launch produced.
  std::string RestoreError;
  if (restoreFrom(L, &Buffer::After, RestoreError))
    ok(cuCtxSynchronize(), "cuCtxSynchronize", RestoreError);
  for (Buffer &B : L.Buffers)
    B.Unchanged = false;
  if (Error.empty())
    Error = RestoreError;
}

/// Enter side of a launch the profiler cannot replay from a copy (no
/// memory for one): CUPTI's kernel replay profiles the program's own
/// launch, with L2 cleaned before its first pass only.
void profileInPlace(Launch &L, std::string &Error) {
  ProbeState &S = state();
  L.ProfileInPlace = true;
  L.Record.Replay = "kernel";
  if (S.Config.CleanL2)
    cleanL2(L, DirtyL2);
  if (!ok(cuCtxSynchronize(), "cuCtxSynchronize", Error))
    return;
  std::string Why =
      S.Profiler.begin(RangeProfiler::Replay::Kernel, S.Config.FreshProfiler);
  if (Why.empty())
    Why = S.Profiler.startPass();
  if (!Why.empty()) {
    S.Result.MetricsUnavailable = Why;
    L.ProfileInPlace = false; // nothing to stop
  }
}

/// Exit side of profileInPlace.
void finishInPlace(Launch &L) {
  ProbeState &S = state();
  bool Done = false;
  std::string Why = S.Profiler.endPass(Done);
  if (Why.empty())
    Why = S.Profiler.finish(L.Record.Metrics);
  if (!Why.empty())
    S.Result.MetricsUnavailable = Why;
}

} // namespace probe
} // namespace optiml
