//===- JSONInternal.h - The search's JSON for outcomes and timings -*- C++
//-*-===//
//
// Shared by the journal and the evaluation cache, so that an outcome reads
// back the same from either. These throw nlohmann::json exceptions on a
// malformed document: callers catch them at their boundary.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_LIB_SEARCH_JSONINTERNAL_H
#define OPTIML_LIB_SEARCH_JSONINTERNAL_H

#include "optiml/Search/CandidateEvaluator.h"
#include <nlohmann/json.hpp>

namespace optiml {

nlohmann::json timingToJ(const Timing &T);
Timing timingFromJ(const nlohmann::json &J);
nlohmann::json outcomeToJ(const EvalOutcome &O);
EvalOutcome outcomeFromJ(const nlohmann::json &J);
nlohmann::json remeasurementToJ(const Remeasurement &R);
Remeasurement remeasurementFromJ(const nlohmann::json &J);

} // namespace optiml

#endif
