#pragma once
// Feeds the same bytes to every decoder of the wire contracts; used by the
// randomized malformed-input test and the libFuzzer target.

#include <cstddef>
#include <cstdint>

#include "proto/admin.pb.h"
#include "proto/coordinator.pb.h"
#include "proto/engine_config.pb.h"
#include "proto/handshake.pb.h"
#include "proto/messages.h"

namespace llmserve::proto::testing {

// Returns how many decoders accepted the input (the value matters only to
// keep the calls from being optimised away).
inline int DecodeAll(const uint8_t* data, size_t size) {
  const char* p = reinterpret_cast<const char*>(data);
  int accepted = 0;
  { EngineCoreRequest v; accepted += Decode(p, size, &v).ok(); }
  { SamplingParams v; accepted += Decode(p, size, &v).ok(); }
  { UtilityRequest v; accepted += Decode(p, size, &v).ok(); }
  { StartDpWave v; accepted += Decode(p, size, &v).ok(); }
  { EngineCoreOutputs v; accepted += Decode(p, size, &v).ok(); }
  { SchedulerOutput v; accepted += Decode(p, size, &v).ok(); }
  { ModelRunnerOutput v; accepted += Decode(p, size, &v).ok(); }
  { std::vector<std::string> abort_ids; accepted += Decode(p, size, &abort_ids).ok(); }
  { RequestType t; accepted += ParseRequestType(p, size, &t).ok(); }
  { HandshakeMessage m; accepted += m.ParseFromArray(p, static_cast<int>(size)); }
  { EngineConfig m; accepted += m.ParseFromArray(p, static_cast<int>(size)); }
  { LoadSnapshot m; accepted += m.ParseFromArray(p, static_cast<int>(size)); }
  { ScaleRequest m; accepted += m.ParseFromArray(p, static_cast<int>(size)); }
  { ScaleResponse m; accepted += m.ParseFromArray(p, static_cast<int>(size)); }
  { DrainCommand m; accepted += m.ParseFromArray(p, static_cast<int>(size)); }
  { ReadyResponse m; accepted += m.ParseFromArray(p, static_cast<int>(size)); }
  { FrontendNotice m; accepted += m.ParseFromArray(p, static_cast<int>(size)); }
  { EngineReport m; accepted += m.ParseFromArray(p, static_cast<int>(size)); }
  return accepted;
}

}  // namespace llmserve::proto::testing
