#pragma once
// Engine -> workers, once per step: what to compute. A diff, as in vLLM V1:
// requests the workers have not seen come in full (NewRequestData); requests
// they already hold come as changes only (CachedRequestData), so a decode step
// costs a few bytes per request.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "proto/pooling_params.h"
#include "proto/sampling_params.h"
#include "base/status.h"
#include "proto/encoded_value.h"
#include "proto/wire_codec.h"

namespace llmserve::proto {

// A request scheduled for the first time (or resumed after preemption, when
// the workers dropped its state). Array, vLLM field order.
struct NewRequestData {
  std::string req_id;
  std::vector<int32_t> prompt_token_ids;
  SamplingParams sampling_params;
  std::vector<std::vector<int32_t>> block_ids;  // one list per KV-cache group
  int32_t num_computed_tokens = 0;              // prefix-cache hit
  std::optional<std::string> lora_name;
  std::optional<PoolingParams> pooling_params;  // set: pool the prompt instead of sampling

  bool operator==(const NewRequestData&) const = default;
};

// Changes to requests the workers already hold; parallel lists indexed like req_ids.
struct CachedRequestData {
  std::vector<std::string> req_ids;
  // For these, new_block_ids REPLACES the block table instead of extending it.
  std::vector<std::string> resumed_req_ids;
  // Tokens sampled last step, only where workers cannot know them (pipeline parallel).
  std::vector<std::vector<int32_t>> new_token_ids;
  // Full token lists for requests not scheduled in the previous step.
  std::map<std::string, std::vector<int32_t>> all_token_ids;
  // Per request: blocks added this step (one list per group), or nullopt.
  std::vector<std::optional<std::vector<std::vector<int32_t>>>> new_block_ids;
  std::vector<int32_t> num_computed_tokens;
  std::vector<int32_t> num_output_tokens;

  bool operator==(const CachedRequestData&) const = default;
};

// Allowed-token rows of the structured-output requests of a step, in
// xgrammar's layout: ceil(vocab / 32) int32 words a row, bit (id & 31) of word
// (id >> 5) set = token id allowed. Travels as msgpack bin (the words in
// little-endian order), nil when there are no rows.
struct GrammarBitmask {
  std::vector<int32_t> words;

  bool operator==(const GrammarBitmask&) const = default;
};

struct SchedulerOutput {
  std::vector<NewRequestData> scheduled_new_reqs;
  CachedRequestData scheduled_cached_reqs;
  std::map<std::string, int32_t> num_scheduled_tokens;  // req_id -> tokens this step
  int32_t total_num_scheduled_tokens = 0;
  std::map<std::string, std::vector<int32_t>> scheduled_spec_decode_tokens;
  std::vector<int32_t> num_common_prefix_blocks;  // per KV group
  std::vector<std::string> finished_req_ids;      // finished since the last step: drop state
  std::vector<std::string> preempted_req_ids;
  // Structured-output requests that sample this step -> their row in grammar_bitmask.
  std::map<std::string, int32_t> structured_output_request_ids;
  GrammarBitmask grammar_bitmask;
  // The KV connector's metadata for this step (vLLM's kv_connector_metadata),
  // in the connector's own msgpack layout; empty without a connector.
  EncodedValue kv_connector_metadata;

  bool operator==(const SchedulerOutput&) const = default;
};

void Pack(wire::Packer& p, const GrammarBitmask& v);
Status Read(const msgpack::object& o, std::string_view field, GrammarBitmask* out);
void Pack(wire::Packer& p, const NewRequestData& v);
Status Read(const msgpack::object& o, std::string_view field, NewRequestData* out);
void Pack(wire::Packer& p, const CachedRequestData& v);
Status Read(const msgpack::object& o, std::string_view field, CachedRequestData* out);
void Pack(wire::Packer& p, const SchedulerOutput& v);
Status Read(const msgpack::object& o, std::string_view field, SchedulerOutput* out);

}  // namespace llmserve::proto
