#pragma once
// PoolingParams: what a pooling request (an embedding) asks of a model run
// by the pooling runner. An array in vLLM 0.11's PoolingParams field order,
// defaults omitted; positions we carry no data for are nil.
//
// The engine and the workers only need to know that a request pools (the
// pooling type is the engine's, --pooler-config): the workers return the
// pooled hidden state, and the frontend truncates it to `dimensions` and
// normalizes it, as vLLM's pooler does on the worker.

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"
#include "proto/wire_codec.h"

namespace llmserve::proto {

struct PoolingParams {
  std::optional<int32_t> dimensions;  // matryoshka truncation; nil: the whole hidden state
  std::optional<bool> normalize;      // L2-normalize; nil: the pooler config's default
  std::string task = "embed";         // the only pooling task served

  bool operator==(const PoolingParams&) const = default;
};

void Pack(wire::Packer& p, const PoolingParams& v);
Status Read(const msgpack::object& o, std::string_view field, PoolingParams* out);

}  // namespace llmserve::proto
