#pragma once
// KV cache events as vLLM publishes them (vllm/distributed/kv_events.py):
// what external routers (llm-d, Dynamo) read to know which prefixes an engine
// holds. A batch is msgpack `[ts, [event...], data_parallel_rank]`; an event
// is a tagged array-like struct, `[class name, field...]`.
//
// BlockStored layout: vLLM 0.11's six fields (block_hashes, parent_block_hash,
// token_ids, block_size, lora_id, medium) followed by main's `lora_name`.
// main declares lora_name without a default (so its decoders need it) and
// gives every later field a default; msgspec ignores trailing array elements
// it does not know, so 0.11 decoders accept the seventh. BlockRemoved is
// 0.11's `[hashes, medium]` (main's group_idx defaults to None).
//
// Hashes are vLLM's default int form (VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES=1):
// the low 64 bits of the big-endian digest, as a msgpack uint.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/status_or.h"

namespace llmserve::proto {

// The medium vLLM's block pool reports ("GPU" even for its CPU backend).
inline constexpr char kMediumGpu[] = "GPU";

// Full blocks entered in the prefix cache, in chain order.
struct BlockStored {
  std::vector<uint64_t> block_hashes;          // one per block
  std::optional<uint64_t> parent_block_hash;   // the block before the first; nullopt: none
  std::vector<int32_t> token_ids;              // block_size tokens per block
  int32_t block_size = 0;
  std::optional<int64_t> lora_id;              // vLLM's deprecated int id (we have none)
  std::optional<std::string> medium = kMediumGpu;
  std::optional<std::string> lora_name;        // the adapter that computed the blocks
  bool operator==(const BlockStored&) const = default;
};

// Cached blocks evicted from the prefix cache.
struct BlockRemoved {
  std::vector<uint64_t> block_hashes;
  std::optional<std::string> medium = kMediumGpu;
  bool operator==(const BlockRemoved&) const = default;
};

// The whole prefix cache was dropped (reset_prefix_cache).
struct AllBlocksCleared {
  bool operator==(const AllBlocksCleared&) const = default;
};

using KVCacheEvent = std::variant<BlockStored, BlockRemoved, AllBlocksCleared>;

// The events of one engine step.
struct KVEventBatch {
  double ts = 0;                               // seconds since the epoch
  std::vector<KVCacheEvent> events;
  std::optional<int32_t> data_parallel_rank;   // filled by the publisher
  bool operator==(const KVEventBatch&) const = default;
};

// msgpack bytes of `batch`, as msgspec encodes vLLM's KVEventBatch.
std::string EncodeKVEventBatch(const KVEventBatch& batch);

// Parses a payload from vLLM or llmserve. Missing trailing fields take their
// defaults and unknown trailing ones are ignored (0.11 and main both decode);
// a wrong type or an unknown event tag is InvalidArgument.
StatusOr<KVEventBatch> DecodeKVEventBatch(std::string_view payload);

}  // namespace llmserve::proto
