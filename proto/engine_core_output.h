#pragma once
// Engine -> frontend messages: per-step outputs, grouped per frontend
// (client index), plus utility-call results and scheduler stats.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "proto/encoded_value.h"
#include "proto/wire_codec.h"

namespace llmserve::proto {

// Why a request finished (vLLM FinishReason values on the wire).
enum class FinishReason : int32_t { kStop = 0, kLength = 1, kAbort = 2, kError = 3 };

// "stop", "length", "abort", "error": the OpenAI finish_reason spelling.
const char* FinishReasonName(FinishReason reason);

// The single frame an engine sends on every output socket when it dies.
inline constexpr char kEngineCoreDead[] = "ENGINE_CORE_DEAD";

// Top-N logprobs of the tokens produced in one step for one request
// (vLLM LogprobsLists): row i belongs to new_token_ids[i]; column 0 is the
// sampled token, columns 1..N the top candidates.
struct Logprobs {
  std::vector<std::vector<int32_t>> token_ids;
  std::vector<std::vector<float>> logprobs;
  std::vector<int32_t> sampled_token_ranks;  // rank of the sampled token (1 = best)

  bool operator==(const Logprobs&) const = default;
};

// Request lifecycle events (vLLM EngineCoreEventType).
struct EngineCoreEvent {
  int32_t type = 0;        // 1 QUEUED, 2 SCHEDULED, 3 PREEMPTED
  double timestamp = 0.0;  // engine monotonic seconds

  bool operator==(const EngineCoreEvent&) const = default;
};

// One request's news from one step.
struct EngineCoreOutput {
  std::string request_id;
  std::vector<int32_t> new_token_ids;
  std::optional<Logprobs> new_logprobs;
  // The prompt's logprobs (vLLM's new_prompt_logprobs_tensors, as lists): one
  // row per prompt token after the first, column 0 that token, then the
  // top-k; sent once, with the first output token, when the request asked
  // for prompt_logprobs.
  std::optional<Logprobs> new_prompt_logprobs;
  // A pooling request's pooled hidden state (hidden_size floats, before
  // truncation and normalization), sent once, with its finish.
  std::optional<std::vector<float>> pooling_output;
  std::optional<FinishReason> finish_reason;  // set once, on the last output
  // The stop token id or stop string that ended the request, if any.
  std::optional<int32_t> stop_token_id;
  std::optional<std::string> stop_string;
  std::vector<EngineCoreEvent> events;
  int32_t num_cached_tokens = 0;  // prompt tokens served from the prefix cache (or a KV connector)
  // Set on a request's last output when its KV connector has parameters for
  // the next hop (vLLM's kv_transfer_params, e.g. where a decoder reads the KV).
  EncodedValue kv_transfer_params;
  // Our extension: why the engine refused or failed the request (with
  // finish_reason kAbort / kError). kResourceExhausted = waiting queue full
  // (the frontend answers 429).
  std::optional<StatusCode> error_code;
  std::optional<std::string> error_message;

  bool operator==(const EngineCoreOutput&) const = default;
};

// Load an engine reports (to frontends for metrics, to the coordinator for LB).
// Speculative decoding counters since the last report (vLLM's
// SpecDecodingStats). Map, every field written.
struct SpecDecodingStats {
  int32_t num_spec_tokens = 0;      // drafts per step at most (num_speculative_tokens)
  int64_t num_drafts = 0;           // draft runs verified (one per request and step)
  int64_t num_draft_tokens = 0;     // draft tokens verified
  int64_t num_accepted_tokens = 0;  // of those, accepted
  std::vector<int64_t> num_accepted_tokens_per_pos;  // [i]: runs whose draft i was accepted

  bool operator==(const SpecDecodingStats&) const = default;
};

struct SchedulerStats {
  int32_t num_running_reqs = 0;
  int32_t num_waiting_reqs = 0;
  int64_t num_waiting_tokens = 0;  // prompt tokens not yet computed, waiting queue
  double kv_cache_usage = 0.0;     // fraction of KV blocks in use
  int64_t prefix_cache_queries = 0;  // tokens looked up since the last report
  int64_t prefix_cache_hits = 0;     // tokens found since the last report
  int64_t num_preemptions = 0;       // since the last report
  int64_t step_counter = 0;
  int64_t current_wave = 0;
  std::vector<int32_t> iteration_tokens;  // scheduled tokens per step since the last report
  std::optional<SpecDecodingStats> spec_decoding_stats;  // set when speculative decoding is on

  bool operator==(const SchedulerStats&) const = default;
};

// The answer to a UtilityRequest: failure_message set on failure; result is a
// method-defined string (JSON for structured results).
struct UtilityOutput {
  int64_t call_id = 0;
  std::optional<std::string> failure_message;
  std::optional<std::string> result;

  bool operator==(const UtilityOutput&) const = default;
};

// Everything one engine sends one frontend after a step.
struct EngineCoreOutputs {
  int32_t engine_index = 0;
  std::vector<EngineCoreOutput> outputs;
  std::optional<SchedulerStats> scheduler_stats;
  double timestamp = 0.0;
  std::optional<UtilityOutput> utility_output;
  std::optional<std::vector<std::string>> finished_requests;  // ids finished since the last send
  std::optional<int64_t> wave_complete;
  std::optional<int64_t> start_wave;

  bool operator==(const EngineCoreOutputs&) const = default;
};

void Pack(wire::Packer& p, const Logprobs& v);
Status Read(const msgpack::object& o, std::string_view field, Logprobs* out);
void Pack(wire::Packer& p, const EngineCoreEvent& v);
Status Read(const msgpack::object& o, std::string_view field, EngineCoreEvent* out);
void Pack(wire::Packer& p, const EngineCoreOutput& v);
Status Read(const msgpack::object& o, std::string_view field, EngineCoreOutput* out);
void Pack(wire::Packer& p, const SpecDecodingStats& v);
Status Read(const msgpack::object& o, std::string_view field, SpecDecodingStats* out);
void Pack(wire::Packer& p, const SchedulerStats& v);
Status Read(const msgpack::object& o, std::string_view field, SchedulerStats* out);
void Pack(wire::Packer& p, const UtilityOutput& v);
Status Read(const msgpack::object& o, std::string_view field, UtilityOutput* out);
void Pack(wire::Packer& p, const EngineCoreOutputs& v);
Status Read(const msgpack::object& o, std::string_view field, EngineCoreOutputs* out);

}  // namespace llmserve::proto
