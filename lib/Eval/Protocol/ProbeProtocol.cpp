//===- ProbeProtocol.cpp - JSON for the evaluator <-> probe exchange ------===//
//
// Part of optimlProbeProtocol, which optimlEval and liboptiml-probe.so both
// link. So it uses only nlohmann/json, the standard library and the parts of
// LLVMSupport that the probe links statically (Error, StringRef). Every
// nlohmann exception is caught here and becomes an llvm::Error.
//
//===----------------------------------------------------------------------===//

#include "optiml/Eval/ProbeProtocol.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

using nlohmann::json;

namespace optiml {

const char *toString(ProbeMode M) {
  switch (M) {
  case ProbeMode::Reference:
    return "reference";
  case ProbeMode::Candidate:
    return "candidate";
  case ProbeMode::Time:
    return "time";
  case ProbeMode::Metrics:
    return "metrics";
  }
  return "reference";
}

namespace {

/// A failure while reading a document; thrown inside this file only.
struct ReadError {
  std::string Message;
};

std::optional<ProbeMode> parseMode(const std::string &S) {
  for (ProbeMode M : {ProbeMode::Reference, ProbeMode::Candidate,
                      ProbeMode::Time, ProbeMode::Metrics})
    if (S == toString(M))
      return M;
  return std::nullopt;
}

/// JSON has no NaN or Inf: write them as strings so a result with an
/// infinite error survives the round trip.
json number(double V) {
  if (std::isnan(V))
    return "nan";
  if (std::isinf(V))
    return V > 0 ? "inf" : "-inf";
  return V;
}

double toDouble(const json &J, const std::string &Where) {
  if (J.is_number())
    return J.get<double>();
  if (J.is_string()) {
    const std::string &S = J.get_ref<const std::string &>();
    if (S == "nan")
      return std::numeric_limits<double>::quiet_NaN();
    if (S == "inf")
      return std::numeric_limits<double>::infinity();
    if (S == "-inf")
      return -std::numeric_limits<double>::infinity();
  }
  throw ReadError{"'" + Where + "' must be a number"};
}

const json &object(const json &J, const std::string &Where) {
  if (!J.is_object())
    throw ReadError{"'" + Where + "' must be an object"};
  return J;
}

const json &array(const json &J, const std::string &Where) {
  if (!J.is_array())
    throw ReadError{"'" + Where + "' must be an array"};
  return J;
}

/// Reads an optional field; a present field of the wrong type is an error.
template <typename T>
void field(const json &Obj, const char *Key, T &Out, const std::string &Where) {
  auto It = Obj.find(Key);
  if (It == Obj.end() || It->is_null())
    return;
  std::string Path = Where.empty() ? Key : Where + "." + Key;
  if constexpr (std::is_same_v<T, bool>) {
    if (!It->is_boolean())
      throw ReadError{"'" + Path + "' must be a boolean"};
    Out = It->template get<bool>();
  } else if constexpr (std::is_same_v<T, double>) {
    Out = toDouble(*It, Path);
  } else if constexpr (std::is_integral_v<T>) {
    if (!It->is_number_integer() ||
        (std::is_unsigned_v<T> && !It->is_number_unsigned()))
      throw ReadError{"'" + Path + "' must be a non-negative integer"};
    uint64_t V = It->template get<uint64_t>();
    if (V > std::numeric_limits<T>::max())
      throw ReadError{"'" + Path + "' is too large"};
    Out = static_cast<T>(V);
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!It->is_string())
      throw ReadError{"'" + Path + "' must be a string"};
    Out = It->template get<std::string>();
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    Out.clear();
    for (const json &E : array(*It, Path)) {
      if (!E.is_string())
        throw ReadError{"'" + Path + "' must hold strings"};
      Out.push_back(E.get<std::string>());
    }
  } else if constexpr (std::is_same_v<T, std::vector<double>>) {
    Out.clear();
    for (const json &E : array(*It, Path))
      Out.push_back(toDouble(E, Path));
  } else {
    static_assert(sizeof(T) == 0, "unsupported field type");
  }
}

void dims(const json &Obj, const char *Key, unsigned (&Out)[3],
          const std::string &Where) {
  auto It = Obj.find(Key);
  if (It == Obj.end())
    return;
  std::string Path = Where + "." + Key;
  if (!It->is_array() || It->size() != 3)
    throw ReadError{"'" + Path + "' must be an array of 3 integers"};
  for (unsigned I = 0; I < 3; ++I) {
    const json &E = (*It)[I];
    if (!E.is_number_unsigned() ||
        E.get<uint64_t>() > std::numeric_limits<unsigned>::max())
      throw ReadError{"'" + Path + "' must be an array of 3 integers"};
    Out[I] = E.get<unsigned>();
  }
}

ProbeMode modeField(const json &Obj, const std::string &Where) {
  std::string Mode = "reference";
  field(Obj, "mode", Mode, Where);
  if (auto M = parseMode(Mode))
    return *M;
  throw ReadError{"unknown mode '" + Mode +
                  "' (expected reference, candidate, time or metrics)"};
}

json toJSON(const Tolerance &T) {
  return json{{"relTol", number(T.RelTol)},
              {"absTol", number(T.AbsTol)},
              {"scaleRelTol", number(T.ScaleRelTol)},
              {"nanEqual", T.NaNEqual}};
}

Tolerance readTolerance(const json &J, const std::string &Where) {
  object(J, Where);
  Tolerance T;
  field(J, "relTol", T.RelTol, Where);
  field(J, "absTol", T.AbsTol, Where);
  field(J, "scaleRelTol", T.ScaleRelTol, Where);
  field(J, "nanEqual", T.NaNEqual, Where);
  if (!(T.RelTol >= 0) || !(T.AbsTol >= 0) || !(T.ScaleRelTol >= 0))
    throw ReadError{"'" + Where + "' tolerances must be non-negative"};
  return T;
}

/// What a followed pointer points to, written and read alike for an array
/// of pointers and for a struct's pointer member.
void writeInner(json &J, const std::string &Type, unsigned Size, bool Float) {
  J["innerElementType"] = Type;
  J["innerElementSize"] = Size;
  J["innerFloat"] = Float;
}

void readInner(const json &J, std::string &Type, unsigned &Size, bool &Float,
               const std::string &Where) {
  field(J, "innerElementType", Type, Where);
  field(J, "innerElementSize", Size, Where);
  field(J, "innerFloat", Float, Where);
}

json toJSON(const ProbeKernel &K) {
  json Params = json::array();
  for (const ProbeParam &P : K.Params) {
    json J{{"index", P.Index},
           {"pointer", P.Pointer},
           {"elementType", P.ElementType},
           {"elementSize", P.ElementSize},
           {"float", P.Float}};
    if (P.PointerArray) {
      J["pointerArray"] = true;
      writeInner(J, P.InnerElementType, P.InnerElementSize, P.InnerFloat);
    }
    if (!P.PointerFields.empty()) {
      json Fields = json::array();
      for (const ProbePointerField &F : P.PointerFields) {
        json FJ{{"offset", F.Offset}, {"name", F.Name}};
        writeInner(FJ, F.InnerElementType, F.InnerElementSize, F.InnerFloat);
        Fields.push_back(std::move(FJ));
      }
      J["pointerFields"] = std::move(Fields);
    }
    Params.push_back(std::move(J));
  }
  return json{{"name", K.Name}, {"params", std::move(Params)}};
}

ProbeKernel readKernel(const json &J, const std::string &Where) {
  object(J, Where);
  ProbeKernel K;
  field(J, "name", K.Name, Where);
  if (K.Name.empty())
    throw ReadError{"'" + Where + ".name' must be a non-empty string"};
  if (auto It = J.find("params"); It != J.end()) {
    unsigned I = 0;
    for (const json &PJ : array(*It, Where + ".params")) {
      std::string PW = Where + ".params[" + std::to_string(I++) + "]";
      object(PJ, PW);
      ProbeParam P;
      field(PJ, "index", P.Index, PW);
      field(PJ, "pointer", P.Pointer, PW);
      field(PJ, "elementType", P.ElementType, PW);
      field(PJ, "elementSize", P.ElementSize, PW);
      field(PJ, "float", P.Float, PW);
      field(PJ, "pointerArray", P.PointerArray, PW);
      readInner(PJ, P.InnerElementType, P.InnerElementSize, P.InnerFloat, PW);
      if (auto F = PJ.find("pointerFields"); F != PJ.end()) {
        unsigned FI = 0;
        for (const json &FJ : array(*F, PW + ".pointerFields")) {
          std::string FW = PW + ".pointerFields[" + std::to_string(FI++) + "]";
          object(FJ, FW);
          ProbePointerField PF;
          field(FJ, "offset", PF.Offset, FW);
          field(FJ, "name", PF.Name, FW);
          readInner(FJ, PF.InnerElementType, PF.InnerElementSize, PF.InnerFloat,
                    FW);
          // Each member a whole pointer inside the struct.
          if (PF.Offset % 8 || PF.Offset + 8 > P.ElementSize)
            throw ReadError{"'" + FW +
                            ".offset' must be a multiple of 8 inside the "
                            "parameter's element"};
          P.PointerFields.push_back(std::move(PF));
        }
      }
      K.Params.push_back(std::move(P));
    }
  }
  return K;
}

json toJSON(const BufferCheck &B) {
  json J{{"param", B.Param},
         {"word", B.Word},
         {"element", B.Element},
         {"bytes", B.Bytes},
         {"status", B.Status},
         {"written", B.Written},
         {"poisonChecked", B.PoisonChecked},
         {"unexpectedWrite", B.UnexpectedWrite},
         {"mismatches", B.Mismatches},
         {"maxAbsErr", number(B.MaxAbsErr)},
         {"maxRelErr", number(B.MaxRelErr)}};
  if (B.FirstDiffIndex) {
    J["firstDiffIndex"] = *B.FirstDiffIndex;
    J["expected"] = B.Expected;
    J["actual"] = B.Actual;
  }
  if (B.Scale > 0)
    J["scale"] = number(B.Scale);
  if (!B.Detail.empty())
    J["detail"] = B.Detail;
  return J;
}

BufferCheck readBuffer(const json &J, const std::string &Where) {
  object(J, Where);
  BufferCheck B;
  field(J, "param", B.Param, Where);
  field(J, "word", B.Word, Where);
  field(J, "element", B.Element, Where);
  field(J, "bytes", B.Bytes, Where);
  field(J, "status", B.Status, Where);
  field(J, "written", B.Written, Where);
  field(J, "poisonChecked", B.PoisonChecked, Where);
  field(J, "unexpectedWrite", B.UnexpectedWrite, Where);
  field(J, "mismatches", B.Mismatches, Where);
  field(J, "maxAbsErr", B.MaxAbsErr, Where);
  field(J, "maxRelErr", B.MaxRelErr, Where);
  if (J.contains("scale"))
    field(J, "scale", B.Scale, Where);
  if (J.contains("firstDiffIndex") && !J["firstDiffIndex"].is_null()) {
    uint64_t Index = 0;
    field(J, "firstDiffIndex", Index, Where);
    B.FirstDiffIndex = Index;
  }
  field(J, "expected", B.Expected, Where);
  field(J, "actual", B.Actual, Where);
  field(J, "detail", B.Detail, Where);
  return B;
}

json toJSON(const LaunchRecord &L) {
  json Buffers = json::array();
  for (const BufferCheck &B : L.Buffers)
    Buffers.push_back(toJSON(B));
  json Times = json::array();
  for (double T : L.TimesMs)
    Times.push_back(number(T));
  json Metrics = json::object();
  for (const auto &[Name, V] : L.Metrics)
    Metrics[Name] = number(V);
  json J{{"kernel", L.Kernel},
         {"ordinal", L.Ordinal},
         {"grid", {L.Grid[0], L.Grid[1], L.Grid[2]}},
         {"block", {L.Block[0], L.Block[1], L.Block[2]}},
         {"dynamicShared", L.DynamicShared},
         {"registers", L.Registers},
         {"staticShared", L.StaticShared},
         {"localBytes", L.LocalBytes},
         {"verified", L.Verified},
         {"buffers", std::move(Buffers)},
         {"timesMs", std::move(Times)},
         {"metrics", std::move(Metrics)}};
  if (!L.ComparedOn.empty())
    J["comparedOn"] = L.ComparedOn;
  if (!L.Replay.empty()) {
    J["replay"] = L.Replay;
    J["l2Cleaned"] = L.L2Cleaned;
    J["passes"] = L.Passes;
  }
  return J;
}

LaunchRecord readLaunch(const json &J, const std::string &Where) {
  object(J, Where);
  LaunchRecord L;
  field(J, "kernel", L.Kernel, Where);
  field(J, "ordinal", L.Ordinal, Where);
  dims(J, "grid", L.Grid, Where);
  dims(J, "block", L.Block, Where);
  field(J, "dynamicShared", L.DynamicShared, Where);
  field(J, "registers", L.Registers, Where);
  field(J, "staticShared", L.StaticShared, Where);
  field(J, "localBytes", L.LocalBytes, Where);
  field(J, "verified", L.Verified, Where);
  if (auto It = J.find("buffers"); It != J.end()) {
    unsigned I = 0;
    for (const json &B : array(*It, Where + ".buffers"))
      L.Buffers.push_back(
          readBuffer(B, Where + ".buffers[" + std::to_string(I++) + "]"));
  }
  field(J, "timesMs", L.TimesMs, Where);
  if (auto It = J.find("metrics"); It != J.end()) {
    for (const auto &[Name, V] : object(*It, Where + ".metrics").items())
      L.Metrics[Name] = toDouble(V, Where + ".metrics." + Name);
  }
  field(J, "comparedOn", L.ComparedOn, Where);
  field(J, "replay", L.Replay, Where);
  field(J, "l2Cleaned", L.L2Cleaned, Where);
  field(J, "passes", L.Passes, Where);
  return L;
}

std::string dump(const json &J) {
  // Kernel names and messages come from the program: never throw on bad UTF-8.
  return J.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

/// Runs Read on the parsed document, turning every failure into an Error.
template <typename T, typename Fn>
llvm::Expected<T> readDocument(llvm::StringRef Text, const char *What,
                               Fn Read) {
  try {
    json J = json::parse(Text.begin(), Text.end());
    return Read(object(J, What));
  } catch (const ReadError &E) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "invalid %s: %s", What, E.Message.c_str());
  } catch (const json::exception &E) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "invalid %s: %s", What, E.what());
  } catch (const std::exception &E) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "invalid %s: %s", What, E.what());
  }
}

} // namespace

std::string writeProbeConfig(const ProbeConfig &C) {
  json Kernels = json::array();
  for (const ProbeKernel &K : C.Kernels)
    Kernels.push_back(toJSON(K));
  json J{{"mode", toString(C.Mode)},
         {"kernels", std::move(Kernels)},
         {"verifyFirst", C.VerifyFirst},
         {"verifyLast", C.VerifyLast},
         {"snapshotDir", C.SnapshotDir},
         {"tolerance", toJSON(C.Tol)},
         {"replays", C.Replays},
         {"timeLaunches", C.TimeLaunches},
         {"flushL2", C.FlushL2},
         {"metrics", C.Metrics},
         {"cleanL2", C.CleanL2},
         {"compareOnHost", C.CompareOnHost},
         {"timeVerified", C.TimeVerified},
         {"freshProfiler", C.FreshProfiler},
         {"restoreWrittenOnly", C.RestoreWrittenOnly},
         {"kernelReplay", C.KernelReplay},
         {"warmUpLaunches", C.WarmUpLaunches},
         {"cleanInPass", C.CleanInPass},
         {"resultPath", C.ResultPath}};
  return dump(J);
}

llvm::Expected<ProbeConfig> readProbeConfig(llvm::StringRef JSONText) {
  return readDocument<ProbeConfig>(JSONText, "probe config", [](const json &J) {
    ProbeConfig C;
    C.Mode = modeField(J, "");
    if (auto It = J.find("kernels"); It != J.end()) {
      unsigned I = 0;
      for (const json &K : array(*It, "kernels"))
        C.Kernels.push_back(
            readKernel(K, "kernels[" + std::to_string(I++) + "]"));
    }
    field(J, "verifyFirst", C.VerifyFirst, "");
    field(J, "verifyLast", C.VerifyLast, "");
    field(J, "snapshotDir", C.SnapshotDir, "");
    if (auto It = J.find("tolerance"); It != J.end())
      C.Tol = readTolerance(*It, "tolerance");
    field(J, "replays", C.Replays, "");
    field(J, "timeLaunches", C.TimeLaunches, "");
    field(J, "flushL2", C.FlushL2, "");
    field(J, "metrics", C.Metrics, "");
    field(J, "cleanL2", C.CleanL2, "");
    field(J, "compareOnHost", C.CompareOnHost, "");
    field(J, "timeVerified", C.TimeVerified, "");
    field(J, "freshProfiler", C.FreshProfiler, "");
    field(J, "restoreWrittenOnly", C.RestoreWrittenOnly, "");
    field(J, "kernelReplay", C.KernelReplay, "");
    field(J, "warmUpLaunches", C.WarmUpLaunches, "");
    field(J, "cleanInPass", C.CleanInPass, "");
    field(J, "resultPath", C.ResultPath, "");
    if ((C.Mode == ProbeMode::Reference || C.Mode == ProbeMode::Candidate) &&
        C.SnapshotDir.empty())
      throw ReadError{std::string("mode ") + toString(C.Mode) +
                      " needs 'snapshotDir'"};
    if (C.ResultPath.empty())
      throw ReadError{"'resultPath' is required"};
    return C;
  });
}

std::string writeProbeResult(const ProbeResult &R) {
  json Launches = json::array();
  for (const LaunchRecord &L : R.Launches)
    Launches.push_back(toJSON(L));
  json J{{"mode", toString(R.Mode)},
         {"launches", std::move(Launches)},
         {"errors", R.Errors}};
  if (!R.MetricsUnavailable.empty())
    J["metricsUnavailable"] = R.MetricsUnavailable;
  if (R.ProfilerPasses)
    J["profilerPasses"] = R.ProfilerPasses;
  return dump(J);
}

llvm::Expected<ProbeResult> readProbeResult(llvm::StringRef JSONText) {
  return readDocument<ProbeResult>(JSONText, "probe result", [](const json &J) {
    ProbeResult R;
    R.Mode = modeField(J, "");
    if (auto It = J.find("launches"); It != J.end()) {
      unsigned I = 0;
      for (const json &L : array(*It, "launches"))
        R.Launches.push_back(
            readLaunch(L, "launches[" + std::to_string(I++) + "]"));
    }
    field(J, "errors", R.Errors, "");
    field(J, "metricsUnavailable", R.MetricsUnavailable, "");
    field(J, "profilerPasses", R.ProfilerPasses, "");
    return R;
  });
}

std::optional<unsigned> stagedLastOrdinal(long RefLaunches,
                                          unsigned VerifyFirst, bool VerifyLast,
                                          bool HasSnapshotAtLast) {
  if (!VerifyLast || !HasSnapshotAtLast ||
      RefLaunches <= static_cast<long>(VerifyFirst))
    return std::nullopt;
  return static_cast<unsigned>(RefLaunches - 1);
}

CandidateAction candidateAction(unsigned Ordinal, bool HasSnapshot,
                                std::optional<unsigned> RefLast,
                                unsigned VerifyFirst) {
  if (!RefLast)
    return HasSnapshot ? CandidateAction::Verify : CandidateAction::None;
  // A first launch of the reference, even one past this run's VerifyFirst
  // (a reference made with other options), is matched by its ordinal.
  if (HasSnapshot && Ordinal != *RefLast)
    return CandidateAction::Verify;
  return Ordinal >= VerifyFirst ? CandidateAction::StageLast
                                : CandidateAction::None;
}

std::string kernelBaseName(llvm::StringRef Demangled) {
  // Drop the parameter list: the last top-level "(...)" that ends the name.
  llvm::StringRef S = Demangled.trim();
  if (S.ends_with(")")) {
    int Depth = 0;
    for (size_t I = S.size(); I-- > 0;) {
      char C = S[I];
      if (C == ')')
        ++Depth;
      else if (C == '(' && --Depth == 0) {
        // "(anonymous namespace)::k" starts with a paren that is no list.
        if (I > 0)
          S = S.take_front(I);
        break;
      }
    }
  }
  // Drop a return type ("void ns::k<int>"): the name follows the last
  // space outside <> and ().
  int Depth = 0;
  size_t Start = 0;
  for (size_t I = 0; I < S.size(); ++I) {
    char C = S[I];
    if (C == '<' || C == '(')
      ++Depth;
    else if ((C == '>' || C == ')') && Depth > 0)
      --Depth;
    else if (C == ' ' && Depth == 0)
      Start = I + 1;
  }
  return S.drop_front(Start).trim().str();
}

bool kernelNameMatches(llvm::StringRef Pattern, llvm::StringRef BaseName) {
  if (Pattern.empty())
    return false;
  if (BaseName == Pattern)
    return true;
  return BaseName.starts_with(Pattern) && BaseName[Pattern.size()] == '<';
}

} // namespace optiml
