//===- EvalJudge.cpp - Judging probe results ------------------------------===//

#include "EvaluatorInternal.h"
#include "optiml/Eval/Compare.h"
#include "optiml/Eval/Evaluator.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

using namespace llvm;

namespace optiml {

namespace {

const ProbeKernel *findTarget(ArrayRef<ProbeKernel> Targets,
                              StringRef Demangled) {
  std::string Base = kernelBaseName(Demangled);
  for (const ProbeKernel &K : Targets)
    if (kernelNameMatches(K.Name, Base))
      return &K;
  return nullptr;
}

const ProbeParam *findParam(const ProbeKernel *K, unsigned Index) {
  if (!K)
    return nullptr;
  for (const ProbeParam &P : K->Params)
    if (P.Index == Index)
      return &P;
  return nullptr;
}

std::string paramName(const KernelModel *Model, const ProbeKernel *K,
                      unsigned Index) {
  std::string Name;
  if (Model && K)
    if (const KernelInfo *KI = Model->findKernel(K->Name))
      for (const ParamInfo &P : KI->Params)
        if (P.Index == Index)
          Name = P.Name;
  std::string Type;
  if (const ProbeParam *P = findParam(K, Index))
    Type = P->ElementType;
  std::string Out = "parameter " + std::to_string(Index);
  if (!Type.empty())
    Out += ", " + Type;
  return Name.empty() ? Out : "'" + Name + "' (" + Out + ")";
}

} // namespace

/// The parameter, and which of its buffers: "'c' (parameter 2, float *)",
/// "... word 1" (a pointer inside a struct), "..., the buffer its element
/// 3 points into" (an array of device pointers), "..., the buffer its
/// element 3's 'c' points into" (an array of structs with pointers).
std::string bufferName(const KernelModel *Model, const ProbeKernel *K,
                       const BufferCheck &B) {
  std::string Out = paramName(Model, K, B.Param);
  if (B.Word)
    Out += " word " + std::to_string(B.Word);
  if (!B.Element)
    return Out;
  // In an array of structs, followed pointer K * Fields + F is element K's
  // member F.
  const ProbeParam *P = findParam(K, B.Param);
  if (P && !P->PointerFields.empty()) {
    size_t N = P->PointerFields.size();
    return Out + ", the buffer its element " +
           std::to_string((B.Element - 1) / N) + "'s '" +
           P->PointerFields[(B.Element - 1) % N].Name + "' points into";
  }
  return Out + ", the buffer its element " + std::to_string(B.Element - 1) +
         " points into";
}

namespace {

/// One line on a buffer that failed its check.
std::string describeBuffer(const LaunchRecord &L, const BufferCheck &B,
                           const KernelModel *Model, const ProbeKernel *K) {
  std::string S;
  raw_string_ostream OS(S);
  OS << kernelBaseName(L.Kernel) << " launch " << L.Ordinal << ": "
     << bufferName(Model, K, B) << ": ";
  if (B.UnexpectedWrite && B.Status == "ok")
    OS << "changed, though the original does not write it (input mutation "
          "or a stray write)";
  else if (B.Status == "mismatch") {
    OS << B.Mismatches << " element(s) differ";
    if (B.FirstDiffIndex)
      OS << ", first at [" << *B.FirstDiffIndex << "]: expected " << B.Expected
         << ", got " << B.Actual;
    if (B.MaxAbsErr > 0)
      OS << " (max abs err " << format("%.3g", B.MaxAbsErr) << ")";
  } else if (B.Status == "size-mismatch")
    OS << "the buffer's size differs from the original's";
  else if (B.Status == "missing-snapshot")
    OS << "the original made no such launch (no reference snapshot)";
  else if (B.Status == "stale-output")
    OS << "right only because the buffer already held the answer (with it "
          "poisoned the result differs)";
  else
    OS << B.Status;
  if (!B.Detail.empty())
    OS << " [" << B.Detail << "]";
  return S;
}

bool bufferFailed(const BufferCheck &B) {
  return B.Status != "ok" || B.UnexpectedWrite;
}

} // namespace

/// The reference against itself: calibrated tolerance, or the buffer that
/// makes the program nondeterministic.
void judgeSelfCheck(const ProbeResult &Self, ArrayRef<ProbeKernel> Targets,
                    const KernelModel *Model, VerifyReport &V,
                    Tolerance &Calibrated) {
  for (const LaunchRecord &L : Self.Launches) {
    if (!L.Verified)
      continue;
    const ProbeKernel *K = findTarget(Targets, L.Kernel);
    ++V.LaunchesCompared;
    for (const BufferCheck &B : L.Buffers) {
      ++V.BuffersCompared;
      const ProbeParam *P = findParam(K, B.Param);
      ElementType T = P ? elementTypeFor(*P, B.Element) : ElementType();
      if (B.Status != "ok" && B.Status != "mismatch") {
        V.Disagreements.push_back({kernelBaseName(L.Kernel), L.Ordinal,
                                   "two runs of the original disagree: " +
                                       describeBuffer(L, B, Model, K)});
        if (V.Status != VerifyStatus::Nondeterministic) {
          V.Status = VerifyStatus::Nondeterministic;
          V.Detail = V.Disagreements.back().Detail;
        }
        continue;
      }
      CompareResult Noise;
      Noise.Mismatches = B.Mismatches;
      Noise.FirstDiffIndex = B.FirstDiffIndex;
      Noise.MaxAbsErr = B.MaxAbsErr;
      Noise.MaxRelErr = B.MaxRelErr;
      Noise.Scale = B.Scale;
      Noise.Expected = B.Expected;
      Noise.Actual = B.Actual;
      if (B.UnexpectedWrite && !Noise.Mismatches)
        Noise.Mismatches = 1;
      Calibration C = calibrate(T, Tolerance(), Noise);
      if (C.Nondeterministic) {
        V.Disagreements.push_back(
            {kernelBaseName(L.Kernel), L.Ordinal,
             kernelBaseName(L.Kernel) + " launch " + std::to_string(L.Ordinal) +
                 ": " + bufferName(Model, K, B) + ": " + C.Reason});
        if (V.Status != VerifyStatus::Nondeterministic) {
          V.Status = VerifyStatus::Nondeterministic;
          V.Detail = V.Disagreements.back().Detail;
        }
        continue;
      }
      if (B.MaxAbsErr > 0 || B.MaxRelErr > 0)
        V.Notes.push_back(formatv("float noise between two runs of the "
                                  "original in {0} ({1}): max abs {2:G3}, max "
                                  "rel {3:G3}",
                                  kernelBaseName(L.Kernel),
                                  bufferName(Model, K, B), B.MaxAbsErr,
                                  B.MaxRelErr)
                              .str());
      Calibrated.RelTol = std::max(Calibrated.RelTol, C.Tol.RelTol);
      Calibrated.AbsTol = std::max(Calibrated.AbsTol, C.Tol.AbsTol);
      Calibrated.ScaleRelTol =
          std::max(Calibrated.ScaleRelTol, C.Tol.ScaleRelTol);
    }
  }
}

std::optional<SelfCheckDisagreement>
disagreesOnlyAtLastLaunch(const VerifyReport &SelfCheck, unsigned VerifyFirst) {
  // Another reason (the runs exit differently) leaves no disagreement.
  if (SelfCheck.Status != VerifyStatus::Nondeterministic ||
      SelfCheck.Disagreements.empty())
    return std::nullopt;
  for (const SelfCheckDisagreement &D : SelfCheck.Disagreements)
    if (D.Ordinal < VerifyFirst)
      return std::nullopt;
  return SelfCheck.Disagreements.front();
}

void judgeCandidate(const ProbeResult &Ref, const ProbeResult &Cand,
                    ArrayRef<ProbeKernel> Targets, const KernelModel *Model,
                    VerifyReport &V) {
  unsigned Failures = 0;
  std::string First;
  std::map<std::pair<std::string, unsigned>, bool> Seen;
  for (const LaunchRecord &L : Cand.Launches) {
    if (!L.Verified)
      continue;
    Seen[{kernelBaseName(L.Kernel), L.Ordinal}] = true;
    const ProbeKernel *K = findTarget(Targets, L.Kernel);
    ++V.LaunchesCompared;
    for (const BufferCheck &B : L.Buffers) {
      ++V.BuffersCompared;
      if (!bufferFailed(B))
        continue;
      if (!Failures++)
        First = describeBuffer(L, B, Model, K);
    }
  }
  for (const LaunchRecord &L : Ref.Launches)
    if (L.Verified && !Seen.count({kernelBaseName(L.Kernel), L.Ordinal}) &&
        !Failures++)
      First = "the candidate never made launch " + std::to_string(L.Ordinal) +
              " of " + kernelBaseName(L.Kernel) + ", which the original made";
  if (Failures) {
    V.Status = VerifyStatus::Mismatch;
    V.Detail = First;
    if (Failures > 1)
      V.Detail += formatv(" (and {0} more)", Failures - 1).str();
    return;
  }
  if (V.LaunchesCompared == 0) {
    V.Status = VerifyStatus::Failed;
    V.Detail = "no launch of the target kernels was verified (does the "
               "program launch them?)";
    return;
  }
  V.Status = VerifyStatus::Verified;
}

} // namespace optiml
