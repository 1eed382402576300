#pragma once
// --kv-events-config: vLLM's KVEventsConfig JSON (vllm/config/kv_events.py),
// checked and turned into the engine's proto.

#include <string>

#include "base/status.h"
#include "proto/engine_config.pb.h"

namespace llmserve::deploy {

// Parses `json` into `*out` with vLLM's keys and defaults:
// enable_kv_cache_events (false), publisher ("zmq" or null / "null"; unset
// means zmq when events are enabled, as at vLLM main), endpoint
// ("tcp://*:5557"), replay_endpoint (null), buffer_steps (10000), hwm
// (100000), max_queue_size (100000), topic (""). Empty `json`: events off.
// An unknown key or a value of the wrong type is an error naming the key.
Status ParseKVEventsConfig(const std::string& json, proto::KVEventsConfig* out);

}  // namespace llmserve::deploy
