#pragma once
// Where an engine core sends its KV events: one batch per step that changed
// the prefix cache (vLLM's EventPublisher). Implementations own their
// delivery; Publish is called on the engine's main loop, so it must be cheap.

#include "proto/kv_events.h"

namespace llmserve::engine_core {

class KVEventPublisher {
 public:
  virtual ~KVEventPublisher() = default;
  // Hands over one step's events, in order; the publisher stamps its DP rank
  // when the batch has none.
  virtual void Publish(proto::KVEventBatch batch) = 0;
};

}  // namespace llmserve::engine_core
