//===- ProbeVerify.cpp - Verifying launches -------------------------------===//
//
// The reference's launches saved (with a poisoned rerun that finds the
// buffers a launch writes), and a candidate's launches compared with them,
// on the GPU where it can.
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
// Verification
//===-------------------------------------------------------------------===//

/// Compares Actual with the expected contents of B, typed after the
/// argument's pointer and exactly before it.
void compareInto(const Buffer &B, const std::vector<uint8_t> &Expected,
                 const std::vector<uint8_t> &Actual, BufferCheck &Check) {
  ProbeState &S = state();
  if (Expected.size() != Actual.size()) {
    Check.Status = "size-mismatch";
    Check.Detail = "the allocation holds " + std::to_string(Actual.size()) +
                   " bytes, the reference's " + std::to_string(Expected.size());
    return;
  }
  size_t Off = std::min(B.Offset, Actual.size());
  llvm::ArrayRef<uint8_t> E(Expected), A(Actual);
  CompareResult R =
      compareBuffers(E.drop_front(Off), A.drop_front(Off), B.Type,
                     effectiveTolerance(B.Type.Kind, S.Config.Tol));
  Check.Mismatches = R.Mismatches;
  Check.FirstDiffIndex = R.FirstDiffIndex;
  Check.Expected = R.Expected;
  Check.Actual = R.Actual;
  Check.MaxAbsErr = R.MaxAbsErr;
  Check.MaxRelErr = R.MaxRelErr;
  Check.Scale = R.Scale;
  if (Off && bufferChanged(E.take_front(Off), A.take_front(Off))) {
    ++Check.Mismatches;
    Check.Detail = "bytes before the argument's pointer differ";
  }
  if (Check.Mismatches)
    Check.Status = "mismatch";
}

/// Relaunches from the pre-launch state with Victim poisoned.
bool poisonedRelaunch(Launch &L, size_t Victim, std::string &Error) {
  Buffer &V = L.Buffers[Victim];
  return restoreFrom(L, &Buffer::Before, Error) &&
         ok(cuMemsetD8Async(V.Base, Poison, V.Size, L.Stream),
            "cuMemsetD8Async", Error) &&
         ok(relaunch(L), "relaunch", Error) &&
         ok(cuStreamSynchronize(L.Stream), "cuStreamSynchronize", Error);
}

/// Relaunches from the pre-launch state with Victim poisoned and reads the
/// victim back. A kernel that skips work when its output already holds the
/// answer, or works only the first time, leaves poison where the reference
/// wrote values.
bool poisonedRun(Launch &L, size_t Victim, std::vector<uint8_t> &Out,
                 std::string &Error) {
  Buffer &V = L.Buffers[Victim];
  return poisonedRelaunch(L, Victim, Error) &&
         toHost(V.Base, V.Size, Out, Error);
}

/// Puts the program's state back as its own launch left it.
bool restoreHost(Launch &L, const std::vector<std::vector<uint8_t>> &After,
                 std::string &Error) {
  for (size_t I = 0; I < L.Buffers.size(); ++I)
    if (!ok(cuMemcpyHtoD(L.Buffers[I].Base, After[I].data(), After[I].size()),
            "cuMemcpyHtoD", Error))
      return false;
  return true;
}

void verifyReference(Launch &L, std::string &Error) {
  ProbeState &S = state();
  size_t N = L.Buffers.size();
  std::vector<std::vector<uint8_t>> Before(N), After(N);
  for (size_t I = 0; I < N; ++I)
    if (!toHost(L.Buffers[I].Before, L.Buffers[I].Size, Before[I], Error) ||
        !toHost(L.Buffers[I].Base, L.Buffers[I].Size, After[I], Error))
      return;
  std::vector<BufferCheck> Checks(N);
  for (size_t I = 0; I < N; ++I) {
    Checks[I].Param = L.Buffers[I].Param;
    Checks[I].Word = L.Buffers[I].Word;
    Checks[I].Element = L.Buffers[I].Element;
    Checks[I].Bytes = L.Buffers[I].Size;
    Checks[I].Written = bufferChanged(Before[I], After[I]);
  }
  // Outputs also get a run from a poisoned start (first launches only: the
  // staged last launch can no longer be relaunched at exit). A launch that
  // recomputes what the buffer already holds changes nothing, so "output"
  // means written by this or an earlier verified launch of the kernel.
  std::vector<std::vector<uint8_t>> Poisoned(N);
  for (size_t I = 0; I < N; ++I)
    if (Checks[I].Written)
      S.WrittenEver.insert(
          {L.Kernel, Checks[I].Param, Checks[I].Word, Checks[I].Element});
  if (L.What == Action::Verify) {
    for (size_t I = 0; I < N; ++I) {
      if (!S.WrittenEver.count(
              {L.Kernel, Checks[I].Param, Checks[I].Word, Checks[I].Element}))
        continue;
      std::string PoisonError;
      if (!poisonedRun(L, I, Poisoned[I], PoisonError)) {
        Poisoned[I].clear();
        error(L.Kernel + " launch " + std::to_string(L.Record.Ordinal) +
              ": poisoned relaunch failed: " + PoisonError);
      }
    }
    if (!restoreHost(L, After, Error))
      return;
  }
  for (size_t I = 0; I < N; ++I) {
    SnapshotEntry E;
    E.Kernel = L.Kernel;
    E.Ordinal = L.Record.Ordinal;
    E.Param = Checks[I].Param;
    E.Word = Checks[I].Word;
    E.Element = Checks[I].Element;
    E.Offset = L.Buffers[I].Offset;
    E.Written = Checks[I].Written;
    Checks[I].PoisonChecked = !Poisoned[I].empty();
    const Buffer &B = L.Buffers[I];
    std::vector<uint8_t> Saved = canonicalContents(L, B, After[I]);
    if (!Poisoned[I].empty())
      Poisoned[I] = canonicalContents(L, B, std::move(Poisoned[I]));
    std::string SaveError;
    if (!S.Store->save(E, Saved, Poisoned[I].empty() ? nullptr : &Poisoned[I],
                       SaveError))
      error(SaveError);
  }
  L.Record.Buffers = std::move(Checks);
  L.Record.Verified = true;
}

//===-------------------------------------------------------------------===//
// Comparison on the GPU
//===-------------------------------------------------------------------===//

/// bufferChanged on the device: 8-byte words, then the bytes after them.
/// Returns "" or why the device cannot tell.
std::string changedOnDevice(const Buffer &B, CUstream Stream, bool &Changed) {
  ProbeState &S = state();
  DeviceKernels::Comparison Words, Tail;
  uint64_t N = B.Size / 8;
  std::string Why = S.Kernels.compare(
      B.Before, B.Base, N, {ElementKind::UInt, 8}, Tolerance(), Stream, Words);
  if (Why.empty() && B.Size % 8)
    Why = S.Kernels.compare(B.Before + N * 8, B.Base + N * 8, B.Size % 8,
                            ElementType(), Tolerance(), Stream, Tail);
  Changed = Words.Mismatches || Tail.Mismatches;
  return Why;
}

/// compareInto on the device: Ref holds Expected (kept on the host to print
/// values), Actual the candidate's buffer. Only the counts, the first
/// index, the error maxima and two values come back. Check is changed only
/// on success; otherwise returns why the device could not compare.
std::string compareOnDevice(const Buffer &B,
                            const std::vector<uint8_t> &Expected,
                            CUdeviceptr Ref, CUdeviceptr Actual,
                            CUstream Stream, BufferCheck &Check) {
  ProbeState &S = state();
  size_t Off = std::min<size_t>(B.Offset, B.Size);
  ElementType T = B.Type;
  unsigned Size = std::max(1u, T.Size);
  uint64_t N = (B.Size - Off) / Size;
  DeviceKernels::Comparison Typed, Prefix;
  // The scale comes from the expected values, which the host holds.
  double Scale = 0;
  Tolerance Tol =
      scaledTolerance(llvm::ArrayRef<uint8_t>(Expected)
                          .drop_front(std::min(Off, Expected.size()))
                          .take_front(N * Size),
                      T, effectiveTolerance(T.Kind, S.Config.Tol), &Scale);
  std::string Why =
      S.Kernels.compare(Ref + Off, Actual + Off, N, T, Tol, Stream, Typed);
  if (Why.empty() && Off)
    Why = S.Kernels.compare(Ref, Actual, Off, ElementType(), Tolerance(),
                            Stream, Prefix);
  // A tail shorter than one element compares exactly, as on the host.
  size_t TailAt = Off + N * Size, Tail = B.Size - TailAt;
  std::vector<uint8_t> TailBytes(Tail), At(Size);
  if (Why.empty() && Tail)
    if (CUresult R = cuMemcpyDtoH(TailBytes.data(), Actual + TailAt, Tail))
      Why = driverError("cuMemcpyDtoH", R);
  if (Why.empty() && Typed.FirstDiff)
    if (CUresult R = cuMemcpyDtoH(At.data(),
                                  Actual + Off + *Typed.FirstDiff * Size, Size))
      Why = driverError("cuMemcpyDtoH", R);
  if (!Why.empty())
    return Why;

  BufferCheck C = Check;
  C.Mismatches = Typed.Mismatches;
  C.MaxAbsErr = Typed.MaxAbsErr;
  C.MaxRelErr = Typed.MaxRelErr;
  C.Scale = Scale;
  if (Typed.FirstDiff) {
    C.FirstDiffIndex = Typed.FirstDiff;
    C.Expected = formatElement(
        llvm::ArrayRef<uint8_t>(Expected).drop_front(Off), *Typed.FirstDiff, T);
    C.Actual = formatElement(At, 0, T);
  }
  if (Tail &&
      std::memcmp(Expected.data() + TailAt, TailBytes.data(), Tail) != 0) {
    ++C.Mismatches;
    if (!C.FirstDiffIndex) {
      C.FirstDiffIndex = N;
      C.Expected = "(trailing bytes)";
      C.Actual = "(trailing bytes differ)";
    }
  }
  if (Prefix.Mismatches) {
    ++C.Mismatches;
    C.Detail = "bytes before the argument's pointer differ";
  }
  if (C.Mismatches)
    C.Status = "mismatch";
  Check = C;
  return "";
}

/// Uploads Expected once and compares it with Actual on the device. False
/// when the device cannot (no room, another size, misaligned, no kernels):
/// the caller then compares on the host.
bool compareUploaded(const Buffer &B, const std::vector<uint8_t> &Expected,
                     CUdeviceptr Actual, CUstream Stream, BufferCheck &Check) {
  ProbeState &S = state();
  if (Expected.size() != B.Size)
    return false;
  std::string Error;
  CUdeviceptr Ref = S.Scratch.get(B.Size, Error);
  if (!Ref)
    return false;
  bool Done = cuMemcpyHtoD(Ref, Expected.data(), B.Size) == CUDA_SUCCESS &&
              compareOnDevice(B, Expected, Ref, Actual, Stream, Check).empty();
  S.Scratch.put(B.Size, Ref);
  return Done;
}

/// Compares the launch's buffers with the reference's snapshots, on the GPU
/// unless the config asks for the host (a buffer the device cannot compare
/// is copied back and compared on the host). CanRelaunch: the launch can be
/// replayed from a poisoned start (not a staged launch, read at exit).
void verifyCandidate(Launch &L, std::string &Error, bool CanRelaunch) {
  ProbeState &S = state();
  size_t N = L.Buffers.size();
  bool Device = !S.Config.CompareOnHost && S.Kernels.load().empty();
  bool AllOnDevice = Device;
  // Host copies of the buffers after the launch, made only when needed.
  std::vector<std::vector<uint8_t>> After(N), Expected(N);
  auto HostAfter = [&](size_t I) {
    return !After[I].empty() ||
           toHost(L.Buffers[I].Base, L.Buffers[I].Size, After[I], Error);
  };
  std::vector<BufferCheck> Checks(N);
  std::vector<const SnapshotEntry *> Refs(N, nullptr);
  for (size_t I = 0; I < N; ++I) {
    const Buffer &B = L.Buffers[I];
    BufferCheck &C = Checks[I];
    C.Param = B.Param;
    C.Word = B.Word;
    C.Element = B.Element;
    C.Bytes = B.Size;
    if (!Device || !changedOnDevice(B, L.Stream, C.Written).empty()) {
      std::vector<uint8_t> Before;
      if (!toHost(B.Before, B.Size, Before, Error) || !HostAfter(I))
        return;
      C.Written = bufferChanged(Before, After[I]);
      AllOnDevice = false;
    }
    Refs[I] =
        S.Store->find(L.Kernel, L.Record.Ordinal, B.Param, B.Word, B.Element);
    if (!Refs[I]) {
      C.Status = "missing-snapshot";
      C.Detail = "the reference saved no buffer for this argument";
      continue;
    }
    C.UnexpectedWrite = C.Written && !S.Store->everWritten(L.Kernel, B.Param,
                                                           B.Word, B.Element);
    std::string ReadError;
    if (!S.Store->read(*Refs[I], Expected[I], ReadError)) {
      C.Status = "missing-snapshot";
      C.Detail = ReadError;
      continue;
    }
    // Arrays of device pointers are compared as (buffer, offset) pairs.
    if (Device && !B.PointerArray &&
        compareUploaded(B, Expected[I], B.Base, L.Stream, C))
      continue;
    if (!HostAfter(I))
      return;
    compareInto(B, Expected[I], canonicalContents(L, B, After[I]), C);
    AllOnDevice = false;
  }
  // The reference saved buffers this launch does not reach.
  for (const SnapshotEntry *E : S.Store->launch(L.Kernel, L.Record.Ordinal)) {
    bool Reached = std::any_of(Refs.begin(), Refs.end(),
                               [&](const SnapshotEntry *R) { return R == E; });
    if (Reached)
      continue;
    BufferCheck C;
    C.Param = E->Param;
    C.Word = E->Word;
    C.Element = E->Element;
    C.Bytes = E->Bytes;
    C.Status = "missing-snapshot";
    C.Detail = "the argument does not point to device memory in this run";
    Checks.push_back(C);
  }
  // From the reference's poisoned start, the candidate must give what the
  // reference gave. Only worth asking when everything else agrees.
  bool AllOk =
      std::all_of(Checks.begin(), Checks.end(),
                  [](const BufferCheck &C) { return C.Status == "ok"; });
  bool Poisons =
      CanRelaunch && AllOk &&
      std::any_of(Refs.begin(), Refs.end(),
                  [](const SnapshotEntry *R) { return R && R->PoisonChecked; });
  // What the program's own launch left, to put back after the relaunches:
  // a device copy when there is room, else host copies.
  bool AfterOnDevice = false;
  if (Poisons) {
    std::string CopyError;
    AfterOnDevice = Device && snapshotTo(L, &Buffer::After, CopyError);
    for (size_t I = 0; !AfterOnDevice && I < N; ++I)
      if (!HostAfter(I))
        return;
  }
  bool Relaunched = false;
  for (size_t I = 0; Poisons && I < N; ++I) {
    if (!Refs[I] || !Refs[I]->PoisonChecked)
      continue;
    const Buffer &B = L.Buffers[I];
    std::vector<uint8_t> Want, Got;
    std::string PoisonError;
    BufferCheck Poisoned;
    bool Read = S.Store->readPoisoned(*Refs[I], Want, PoisonError);
    // Even a failed relaunch may have changed the buffers: restore below.
    Relaunched |= Read;
    bool Compared = Read && poisonedRelaunch(L, I, PoisonError);
    if (Compared && !(Device && !B.PointerArray &&
                      compareUploaded(B, Want, B.Base, L.Stream, Poisoned))) {
      AllOnDevice = false;
      Compared = toHost(B.Base, B.Size, Got, PoisonError);
      if (Compared)
        compareInto(B, Want, canonicalContents(L, B, std::move(Got)), Poisoned);
    }
    if (!Compared) {
      error(L.Kernel + " launch " + std::to_string(L.Record.Ordinal) +
            ": poisoned relaunch failed: " + PoisonError);
      continue;
    }
    Checks[I].PoisonChecked = true;
    if (Poisoned.Status != "ok") {
      Checks[I].Status = "stale-output";
      Checks[I].Mismatches = Poisoned.Mismatches;
      Checks[I].FirstDiffIndex = Poisoned.FirstDiffIndex;
      Checks[I].Expected = Poisoned.Expected;
      Checks[I].Actual = Poisoned.Actual;
      Checks[I].Detail =
          "relaunched with this buffer poisoned, the result differs from the "
          "reference's: the kernel relies on what the buffer held before";
    }
  }
  if (Relaunched) {
    bool Restored = AfterOnDevice ? restoreFrom(L, &Buffer::After, Error) &&
                                        ok(cuStreamSynchronize(L.Stream),
                                           "cuStreamSynchronize", Error)
                                  : restoreHost(L, After, Error);
    if (!Restored)
      return;
  }
  L.Record.Buffers = std::move(Checks);
  L.Record.Verified = true;
  L.Record.ComparedOn = AllOnDevice ? "device" : "host";
}

} // namespace probe
} // namespace optiml
