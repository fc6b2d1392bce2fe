//===- RangeProfiler.cpp - CUPTI range profiler for one launch ------------===//
//
// Host side (cupti_profiler_host.h) builds a config image for the metrics;
// target side (cupti_range_profiler.h) collects them with AutoRange, one
// range per launch. With user replay the probe launches once per pass
// (and can clean L2 between passes); with kernel replay the driver replays
// the launch inside it, saving and restoring memory itself, and nothing
// can run between passes. Metric names are checked one by one first: a
// single unknown name fails the whole config.
//
//===----------------------------------------------------------------------===//

#include "ProbeInternal.h"

#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <cstdlib>
#include <optional>

namespace optiml {
namespace probe {

namespace {

std::string cuptiError(const char *What, CUptiResult R) {
  const char *Text = nullptr;
  cuptiGetResultString(R, &Text);
  return std::string(What) + ": " + (Text ? Text : "unknown CUPTI error") +
         " (" + std::to_string(static_cast<int>(R)) + ")";
}

/// A CUPTI parameter struct, zeroed, with its size set.
template <typename T> T params(size_t Size) {
  T P{};
  P.structSize = Size;
  return P;
}

} // namespace

/// One metric set: its host object (which evaluates its counter data), its
/// config image and counter-data image.
struct MetricSet {
  CUpti_Profiler_Host_Object *Host = nullptr;
  std::vector<std::string> Metrics;
  std::vector<const char *> MetricPtrs;
  std::vector<uint8_t> Config, CounterData;
  size_t Passes = 0;
};

struct RangeProfiler::State {
  CUcontext Ctx = nullptr;
  std::string ChipName;
  std::vector<uint8_t> Availability;
  CUpti_RangeProfiler_Object *Profiler = nullptr;
  std::vector<MetricSet> Sets;
  size_t Active = 0; ///< the set of the session begun last
};

namespace {

void deinitHost(MetricSet &M) {
  if (!M.Host)
    return;
  auto Deinit = params<CUpti_Profiler_Host_Deinitialize_Params>(
      CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
  Deinit.pHostObject = M.Host;
  cuptiProfilerHostDeinitialize(&Deinit);
  M.Host = nullptr;
}

} // namespace

#define OPTIML_CUPTI(Call, What)                                               \
  if (CUptiResult R_ = (Call); R_ != CUPTI_SUCCESS)                            \
    return cuptiError(What, R_);

/// Builds M's host object, config image and pass count for Names (checked
/// one by one; unknown ones go to Rejected). The counter-data image is
/// sized later, once the range profiler is enabled.
static std::string buildSet(const std::string &Chip,
                            std::vector<uint8_t> &Availability,
                            const std::vector<std::string> &Names,
                            std::vector<std::string> &Rejected, MetricSet &M) {
  auto HostInit = params<CUpti_Profiler_Host_Initialize_Params>(
      CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  HostInit.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  HostInit.pChipName = Chip.c_str();
  HostInit.pCounterAvailabilityImage = Availability.data();
  OPTIML_CUPTI(cuptiProfilerHostInitialize(&HostInit),
               "cuptiProfilerHostInitialize");
  M.Host = HostInit.pHostObject;

  for (const std::string &N : Names) {
    auto Props = params<CUpti_Profiler_Host_GetMetricProperties_Params>(
        CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE);
    Props.pHostObject = M.Host;
    Props.pMetricName = N.c_str();
    if (cuptiProfilerHostGetMetricProperties(&Props) == CUPTI_SUCCESS)
      M.Metrics.push_back(N);
    else
      Rejected.push_back(N);
  }
  if (M.Metrics.empty())
    return "none of the requested metrics is known to this chip (" + Chip +
           ")";
  for (const std::string &N : M.Metrics)
    M.MetricPtrs.push_back(N.c_str());

  auto Add = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  Add.pHostObject = M.Host;
  Add.ppMetricNames = M.MetricPtrs.data();
  Add.numMetrics = M.MetricPtrs.size();
  OPTIML_CUPTI(cuptiProfilerHostConfigAddMetrics(&Add),
               "cuptiProfilerHostConfigAddMetrics");
  auto Size = params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  Size.pHostObject = M.Host;
  OPTIML_CUPTI(cuptiProfilerHostGetConfigImageSize(&Size),
               "cuptiProfilerHostGetConfigImageSize");
  M.Config.resize(Size.configImageSize);
  auto Image = params<CUpti_Profiler_Host_GetConfigImage_Params>(
      CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  Image.pHostObject = M.Host;
  Image.pConfigImage = M.Config.data();
  Image.configImageSize = M.Config.size();
  OPTIML_CUPTI(cuptiProfilerHostGetConfigImage(&Image),
               "cuptiProfilerHostGetConfigImage");
  auto NumPasses = params<CUpti_Profiler_Host_GetNumOfPasses_Params>(
      CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  NumPasses.pConfigImage = M.Config.data();
  NumPasses.configImageSize = M.Config.size();
  OPTIML_CUPTI(cuptiProfilerHostGetNumOfPasses(&NumPasses),
               "cuptiProfilerHostGetNumOfPasses");
  M.Passes = NumPasses.numOfPasses;
  return "";
}

/// Sizes M's counter-data image for one range on Profiler.
static std::string sizeCounterData(CUpti_RangeProfiler_Object *Profiler,
                                   MetricSet &M) {
  auto DataSize = params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  DataSize.pRangeProfilerObject = Profiler;
  DataSize.pMetricNames = M.MetricPtrs.data();
  DataSize.numMetrics = M.MetricPtrs.size();
  DataSize.maxNumOfRanges = 1;
  DataSize.maxNumRangeTreeNodes = 1;
  OPTIML_CUPTI(cuptiRangeProfilerGetCounterDataSize(&DataSize),
               "cuptiRangeProfilerGetCounterDataSize");
  M.CounterData.resize(DataSize.counterDataSize);
  return "";
}

std::string RangeProfiler::setUp(CUcontext Ctx,
                                 const std::vector<std::string> &Metrics,
                                 std::vector<std::string> &Rejected) {
  S = new State;
  S->Ctx = Ctx;
  auto Init = params<CUpti_Profiler_Initialize_Params>(
      CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
  OPTIML_CUPTI(cuptiProfilerInitialize(&Init), "cuptiProfilerInitialize");

  CUdevice Dev = 0;
  if (CUresult R = cuCtxGetDevice(&Dev))
    return driverError("cuCtxGetDevice", R);
  auto Supported = params<CUpti_Profiler_DeviceSupported_Params>(
      CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
  Supported.cuDevice = Dev;
  Supported.api = CUPTI_PROFILER_RANGE_PROFILING;
  OPTIML_CUPTI(cuptiProfilerDeviceSupported(&Supported),
               "cuptiProfilerDeviceSupported");
  if (Supported.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
    return "the range profiler does not support this device (architecture " +
           std::to_string(Supported.architecture) + ", vGPU " +
           std::to_string(Supported.vGpu) + ", confidential compute " +
           std::to_string(Supported.confidentialCompute) + ")";

  auto Chip = params<CUpti_Device_GetChipName_Params>(
      CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  Chip.deviceIndex = static_cast<size_t>(Dev);
  OPTIML_CUPTI(cuptiDeviceGetChipName(&Chip), "cuptiDeviceGetChipName");

  auto Avail = params<CUpti_Profiler_GetCounterAvailability_Params>(
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  Avail.ctx = Ctx;
  OPTIML_CUPTI(cuptiProfilerGetCounterAvailability(&Avail),
               "cuptiProfilerGetCounterAvailability");
  std::vector<uint8_t> AvailImage(Avail.counterAvailabilityImageSize);
  Avail.pCounterAvailabilityImage = AvailImage.data();
  OPTIML_CUPTI(cuptiProfilerGetCounterAvailability(&Avail),
               "cuptiProfilerGetCounterAvailability");

  S->ChipName = Chip.pChipName;
  S->Availability = std::move(AvailImage);
  S->Sets.emplace_back();
  if (std::string Why = buildSet(S->ChipName, S->Availability, Metrics,
                                 Rejected, S->Sets.back());
      !Why.empty())
    return Why;
  auto Enable = params<CUpti_RangeProfiler_Enable_Params>(
      CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
  Enable.ctx = Ctx;
  OPTIML_CUPTI(cuptiRangeProfilerEnable(&Enable), "cuptiRangeProfilerEnable");
  S->Profiler = Enable.pRangeProfilerObject;

  if (std::string Why = sizeCounterData(S->Profiler, S->Sets.back());
      !Why.empty())
    return Why;
  Ready = true;
  return "";
}

std::optional<size_t>
RangeProfiler::addSet(const std::vector<std::string> &Metrics,
                      std::string &Why) {
  std::vector<std::string> Rejected;
  MetricSet M;
  Why = buildSet(S->ChipName, S->Availability, Metrics, Rejected, M);
  if (Why.empty() && !Rejected.empty())
    Why = "metric '" + Rejected.front() + "' is not known to this chip";
  if (Why.empty())
    Why = sizeCounterData(S->Profiler, M);
  if (!Why.empty()) {
    deinitHost(M);
    return std::nullopt;
  }
  S->Sets.push_back(std::move(M));
  return S->Sets.size() - 1;
}

size_t RangeProfiler::passes(size_t Set) const {
  return S && Set < S->Sets.size() ? S->Sets[Set].Passes : 0;
}

std::string RangeProfiler::begin(Replay Mode, size_t Set) {
  // A fresh counter-data image per launch: one range, evaluated at finish().
  S->Active = Set;
  MetricSet &M = S->Sets.at(Set);
  // The counter-data image is laid out for the metric names of the last
  // size query on the profiler object: query again for this set (without
  // it, a set begun after another evaluated to NaN on the H200).
  if (std::string Why = sizeCounterData(S->Profiler, M); !Why.empty())
    return Why;
  std::fill(M.CounterData.begin(), M.CounterData.end(), 0);
  auto DataInit =
      params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
          CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  DataInit.pRangeProfilerObject = S->Profiler;
  DataInit.pCounterData = M.CounterData.data();
  DataInit.counterDataSize = M.CounterData.size();
  OPTIML_CUPTI(cuptiRangeProfilerCounterDataImageInitialize(&DataInit),
               "cuptiRangeProfilerCounterDataImageInitialize");
  auto SetCfg = params<CUpti_RangeProfiler_SetConfig_Params>(
      CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  SetCfg.pRangeProfilerObject = S->Profiler;
  SetCfg.pConfig = M.Config.data();
  SetCfg.configSize = M.Config.size();
  SetCfg.pCounterDataImage = M.CounterData.data();
  SetCfg.counterDataImageSize = M.CounterData.size();
  SetCfg.range = CUPTI_AutoRange;
  SetCfg.replayMode = Mode == Replay::User ? CUPTI_UserReplay : CUPTI_KernelReplay;
  SetCfg.maxRangesPerPass = 1;
  SetCfg.numNestingLevels = 1;
  SetCfg.minNestingLevel = 1;
  SetCfg.passIndex = 0;
  SetCfg.targetNestingLevel = 1;
  OPTIML_CUPTI(cuptiRangeProfilerSetConfig(&SetCfg),
               "cuptiRangeProfilerSetConfig");
  return "";
}

std::string RangeProfiler::startPass() {
  auto Start = params<CUpti_RangeProfiler_Start_Params>(
      CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
  Start.pRangeProfilerObject = S->Profiler;
  OPTIML_CUPTI(cuptiRangeProfilerStart(&Start), "cuptiRangeProfilerStart");
  return "";
}

std::string RangeProfiler::endPass(bool &AllPassesDone) {
  auto Stop = params<CUpti_RangeProfiler_Stop_Params>(
      CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
  Stop.pRangeProfilerObject = S->Profiler;
  OPTIML_CUPTI(cuptiRangeProfilerStop(&Stop), "cuptiRangeProfilerStop");
  AllPassesDone = Stop.isAllPassSubmitted != 0;
  return "";
}

std::string RangeProfiler::finish(std::map<std::string, double> &Values) {
  MetricSet &M = S->Sets.at(S->Active);
  auto Decode = params<CUpti_RangeProfiler_DecodeData_Params>(
      CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  Decode.pRangeProfilerObject = S->Profiler;
  OPTIML_CUPTI(cuptiRangeProfilerDecodeData(&Decode),
               "cuptiRangeProfilerDecodeData");
  auto Info = params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  Info.pCounterDataImage = M.CounterData.data();
  Info.counterDataImageSize = M.CounterData.size();
  OPTIML_CUPTI(cuptiRangeProfilerGetCounterDataInfo(&Info),
               "cuptiRangeProfilerGetCounterDataInfo");
  if (Info.numTotalRanges == 0)
    return "the range profiler recorded no range for the launch";
  std::vector<double> V(M.MetricPtrs.size(), 0.0);
  auto Eval = params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
      CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
  Eval.pHostObject = M.Host;
  Eval.pCounterDataImage = M.CounterData.data();
  Eval.counterDataImageSize = M.CounterData.size();
  Eval.rangeIndex = Info.numTotalRanges - 1;
  Eval.ppMetricNames = M.MetricPtrs.data();
  Eval.numMetrics = M.MetricPtrs.size();
  Eval.pMetricValues = V.data();
  OPTIML_CUPTI(cuptiProfilerHostEvaluateToGpuValues(&Eval),
               "cuptiProfilerHostEvaluateToGpuValues");
  for (size_t I = 0; I < V.size(); ++I)
    Values[M.Metrics[I]] = V[I];
  return "";
}

#undef OPTIML_CUPTI

void RangeProfiler::tearDown() {
  if (!S)
    return;
  if (S->Profiler) {
    auto Disable = params<CUpti_RangeProfiler_Disable_Params>(
        CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    Disable.pRangeProfilerObject = S->Profiler;
    cuptiRangeProfilerDisable(&Disable);
  }
  for (MetricSet &M : S->Sets)
    deinitHost(M);
  delete S;
  S = nullptr;
  Ready = false;
}

} // namespace probe
} // namespace optiml
