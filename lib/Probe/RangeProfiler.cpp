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

struct RangeProfiler::State {
  CUcontext Ctx = nullptr;
  CUpti_Profiler_Host_Object *Host = nullptr;
  CUpti_RangeProfiler_Object *Profiler = nullptr;
  std::vector<std::string> Metrics;
  std::vector<const char *> MetricPtrs;
  std::vector<uint8_t> Config, CounterData;
};

std::string RangeProfiler::setUp(CUcontext Ctx,
                                 const std::vector<std::string> &Metrics,
                                 std::vector<std::string> &Rejected) {
#define OPTIML_CUPTI(Call, What)                                               \
  if (CUptiResult R_ = (Call); R_ != CUPTI_SUCCESS)                            \
    return cuptiError(What, R_);

  S = new State;
  S->Ctx = Ctx;
  // Once per process: tearDown() does not deinitialize, and a profiler
  // set up again (freshProfiler) finds it initialized.
  if (!Initialized) {
    auto Init = params<CUpti_Profiler_Initialize_Params>(
        CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    OPTIML_CUPTI(cuptiProfilerInitialize(&Init), "cuptiProfilerInitialize");
    Initialized = true;
  }

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

  auto HostInit = params<CUpti_Profiler_Host_Initialize_Params>(
      CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  HostInit.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  HostInit.pChipName = Chip.pChipName;
  HostInit.pCounterAvailabilityImage = AvailImage.data();
  OPTIML_CUPTI(cuptiProfilerHostInitialize(&HostInit),
               "cuptiProfilerHostInitialize");
  S->Host = HostInit.pHostObject;

  for (const std::string &M : Metrics) {
    auto Props = params<CUpti_Profiler_Host_GetMetricProperties_Params>(
        CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE);
    Props.pHostObject = S->Host;
    Props.pMetricName = M.c_str();
    if (cuptiProfilerHostGetMetricProperties(&Props) == CUPTI_SUCCESS)
      S->Metrics.push_back(M);
    else
      Rejected.push_back(M);
  }
  if (S->Metrics.empty())
    return "none of the requested metrics is known to this chip (" +
           std::string(Chip.pChipName) + ")";
  for (const std::string &M : S->Metrics)
    S->MetricPtrs.push_back(M.c_str());

  auto Add = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  Add.pHostObject = S->Host;
  Add.ppMetricNames = S->MetricPtrs.data();
  Add.numMetrics = S->MetricPtrs.size();
  OPTIML_CUPTI(cuptiProfilerHostConfigAddMetrics(&Add),
               "cuptiProfilerHostConfigAddMetrics");
  auto Size = params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  Size.pHostObject = S->Host;
  OPTIML_CUPTI(cuptiProfilerHostGetConfigImageSize(&Size),
               "cuptiProfilerHostGetConfigImageSize");
  S->Config.resize(Size.configImageSize);
  auto Image = params<CUpti_Profiler_Host_GetConfigImage_Params>(
      CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  Image.pHostObject = S->Host;
  Image.pConfigImage = S->Config.data();
  Image.configImageSize = S->Config.size();
  OPTIML_CUPTI(cuptiProfilerHostGetConfigImage(&Image),
               "cuptiProfilerHostGetConfigImage");
  auto NumPasses = params<CUpti_Profiler_Host_GetNumOfPasses_Params>(
      CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  NumPasses.pConfigImage = S->Config.data();
  NumPasses.configImageSize = S->Config.size();
  OPTIML_CUPTI(cuptiProfilerHostGetNumOfPasses(&NumPasses),
               "cuptiProfilerHostGetNumOfPasses");
  Passes = NumPasses.numOfPasses;

  if (std::string Why = enable(); !Why.empty())
    return Why;
  Ready = true;
  return "";
}

/// The range-profiler object on the context, and a counter-data image
/// sized for it.
std::string RangeProfiler::enable() {
  auto Enable = params<CUpti_RangeProfiler_Enable_Params>(
      CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
  Enable.ctx = S->Ctx;
  OPTIML_CUPTI(cuptiRangeProfilerEnable(&Enable), "cuptiRangeProfilerEnable");
  S->Profiler = Enable.pRangeProfilerObject;

  auto DataSize = params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  DataSize.pRangeProfilerObject = S->Profiler;
  DataSize.pMetricNames = S->MetricPtrs.data();
  DataSize.numMetrics = S->MetricPtrs.size();
  DataSize.maxNumOfRanges = 1;
  DataSize.maxNumRangeTreeNodes = 1;
  OPTIML_CUPTI(cuptiRangeProfilerGetCounterDataSize(&DataSize),
               "cuptiRangeProfilerGetCounterDataSize");
  S->CounterData.resize(DataSize.counterDataSize);
  Used = false;
  return "";
}

std::string RangeProfiler::begin(Replay Mode, bool Fresh, bool UserRange) {
  if (Fresh && Used) {
    // Everything anew, the host object and config image too, as for the
    // program's first profiled launch.
    CUcontext Ctx = S->Ctx;
    std::vector<std::string> Metrics = S->Metrics, Rejected;
    tearDown();
    if (std::string Why = setUp(Ctx, Metrics, Rejected); !Why.empty())
      return "setting the range profiler up again: " + Why;
  }
  Used = true;
  // A fresh counter-data image per launch: one range, evaluated at finish().
  std::fill(S->CounterData.begin(), S->CounterData.end(), 0);
  auto DataInit =
      params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
          CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  DataInit.pRangeProfilerObject = S->Profiler;
  DataInit.pCounterData = S->CounterData.data();
  DataInit.counterDataSize = S->CounterData.size();
  OPTIML_CUPTI(cuptiRangeProfilerCounterDataImageInitialize(&DataInit),
               "cuptiRangeProfilerCounterDataImageInitialize");
  auto Set = params<CUpti_RangeProfiler_SetConfig_Params>(
      CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  Set.pRangeProfilerObject = S->Profiler;
  Set.pConfig = S->Config.data();
  Set.configSize = S->Config.size();
  Set.pCounterDataImage = S->CounterData.data();
  Set.counterDataImageSize = S->CounterData.size();
  Set.range =
      UserRange && Mode == Replay::User ? CUPTI_UserRange : CUPTI_AutoRange;
  Set.replayMode = Mode == Replay::User ? CUPTI_UserReplay : CUPTI_KernelReplay;
  Set.maxRangesPerPass = 1;
  Set.numNestingLevels = 1;
  Set.minNestingLevel = 1;
  Set.passIndex = 0;
  Set.targetNestingLevel = 1;
  OPTIML_CUPTI(cuptiRangeProfilerSetConfig(&Set),
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

std::string RangeProfiler::pushRange() {
  auto Push = params<CUpti_RangeProfiler_PushRange_Params>(
      CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE);
  Push.pRangeProfilerObject = S->Profiler;
  Push.pRangeName = "launch";
  OPTIML_CUPTI(cuptiRangeProfilerPushRange(&Push),
               "cuptiRangeProfilerPushRange");
  return "";
}

std::string RangeProfiler::popRange() {
  auto Pop = params<CUpti_RangeProfiler_PopRange_Params>(
      CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
  Pop.pRangeProfilerObject = S->Profiler;
  OPTIML_CUPTI(cuptiRangeProfilerPopRange(&Pop), "cuptiRangeProfilerPopRange");
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
  auto Decode = params<CUpti_RangeProfiler_DecodeData_Params>(
      CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  Decode.pRangeProfilerObject = S->Profiler;
  OPTIML_CUPTI(cuptiRangeProfilerDecodeData(&Decode),
               "cuptiRangeProfilerDecodeData");
  auto Info = params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  Info.pCounterDataImage = S->CounterData.data();
  Info.counterDataImageSize = S->CounterData.size();
  OPTIML_CUPTI(cuptiRangeProfilerGetCounterDataInfo(&Info),
               "cuptiRangeProfilerGetCounterDataInfo");
  if (Info.numTotalRanges == 0)
    return "the range profiler recorded no range for the launch";
  std::vector<double> V(S->MetricPtrs.size(), 0.0);
  auto Eval = params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
      CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
  Eval.pHostObject = S->Host;
  Eval.pCounterDataImage = S->CounterData.data();
  Eval.counterDataImageSize = S->CounterData.size();
  Eval.rangeIndex = Info.numTotalRanges - 1;
  Eval.ppMetricNames = S->MetricPtrs.data();
  Eval.numMetrics = S->MetricPtrs.size();
  Eval.pMetricValues = V.data();
  OPTIML_CUPTI(cuptiProfilerHostEvaluateToGpuValues(&Eval),
               "cuptiProfilerHostEvaluateToGpuValues");
  for (size_t I = 0; I < V.size(); ++I)
    Values[S->Metrics[I]] = V[I];
  return "";
#undef OPTIML_CUPTI
}

void RangeProfiler::tearDown() {
  if (!S)
    return;
  if (S->Profiler) {
    auto Disable = params<CUpti_RangeProfiler_Disable_Params>(
        CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    Disable.pRangeProfilerObject = S->Profiler;
    cuptiRangeProfilerDisable(&Disable);
  }
  Used = false;
  if (S->Host) {
    auto Deinit = params<CUpti_Profiler_Host_Deinitialize_Params>(
        CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
    Deinit.pHostObject = S->Host;
    cuptiProfilerHostDeinitialize(&Deinit);
  }
  delete S;
  S = nullptr;
  Ready = false;
}

} // namespace probe
} // namespace optiml
