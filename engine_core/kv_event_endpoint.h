#pragma once
// Endpoint rules of vLLM's ZmqEventPublisher: which endpoints a publisher
// binds (rather than connects), and how a DP rank shifts an endpoint so the
// ranks of one deployment do not collide.

#include <cstdint>
#include <string>

#include "base/status_or.h"

namespace llmserve::engine_core {

// True when the PUB socket binds: the endpoint has a wildcard ("*" or "::")
// or is ipc:// or inproc://. Otherwise it connects (to a subscriber that binds).
bool KVEventEndpointBinds(const std::string& endpoint);

// The endpoint DP rank `rank` uses: unchanged for rank 0 or an empty endpoint;
// tcp port + rank (a "*" port stays "*"); inproc name + "_dp<rank>"; ipc
// endpoints are an error for rank > 0, as in vLLM.
StatusOr<std::string> KVEventEndpointForRank(const std::string& endpoint, int32_t rank);

}  // namespace llmserve::engine_core
