#pragma once
// The SharedStorageConnector's per-step metadata (vLLM's
// SharedStorageConnectorMetadata): which requests' KV the workers load from
// files into the cache, and which they save, block by block. Travels inside
// SchedulerOutput.kv_connector_metadata.

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "proto/encoded_value.h"
#include "proto/wire_codec.h"

namespace llmserve::proto {

// One request's transfer this step. Tokens [first_token, end_token) of the
// request's stored prompt prefix go between the files under `key` and the
// cache slots of `block_ids` (the request's blocks from token 0 on, so token
// t sits in block_ids[t / block_size]). Both bounds are multiples of the
// block size.
struct SharedStorageRequestMeta {
  std::string req_id;
  std::string key;                // the folder under shared_storage_path (a hash of the prefix)
  bool is_store = false;          // true: save to files; false: load from them
  int32_t first_token = 0;        // the first token moved (loads skip the local prefix-cache hit)
  int32_t end_token = 0;          // one past the last token moved
  std::vector<int32_t> block_ids;  // at least end_token / block_size of them

  bool operator==(const SharedStorageRequestMeta&) const = default;
};

struct SharedStorageMetadata {
  std::vector<SharedStorageRequestMeta> requests;

  bool operator==(const SharedStorageMetadata&) const = default;
};

void Pack(wire::Packer& p, const SharedStorageRequestMeta& v);
Status Read(const msgpack::object& o, std::string_view field, SharedStorageRequestMeta* out);
void Pack(wire::Packer& p, const SharedStorageMetadata& v);
Status Read(const msgpack::object& o, std::string_view field, SharedStorageMetadata* out);

// The metadata as SchedulerOutput.kv_connector_metadata carries it, and back
// (an empty value decodes to no requests).
EncodedValue EncodeSharedStorageMetadata(const SharedStorageMetadata& meta);
Status DecodeSharedStorageMetadata(const EncodedValue& value, SharedStorageMetadata* out);

}  // namespace llmserve::proto
