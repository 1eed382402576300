#pragma once
// Worker -> engine, once per step: the tokens sampled for each scheduled
// request (only the output rank replies).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "proto/engine_core_output.h"
#include "base/status.h"
#include "proto/wire_codec.h"

namespace llmserve::proto {

// What the workers' KV connectors report after a step (vLLM's KVConnectorOutput).
struct KVConnectorOutput {
  std::vector<std::string> finished_sending;  // requests whose KV send completed: their blocks may go
  std::vector<std::string> finished_recving;  // requests whose asynchronous KV load completed
  // Blocks whose external KV failed to load: their requests recompute them.
  std::vector<int32_t> invalid_block_ids;

  bool empty() const { return finished_sending.empty() && finished_recving.empty() && invalid_block_ids.empty(); }
  bool operator==(const KVConnectorOutput&) const = default;
};

struct ModelRunnerOutput {
  std::vector<std::string> req_ids;  // in the order of sampled_token_ids
  // Tokens per request; empty for a partial prefill chunk (nothing sampled).
  std::vector<std::vector<int32_t>> sampled_token_ids;
  // Per request, when it asked for logprobs (parallel to req_ids).
  std::vector<std::optional<Logprobs>> logprobs;
  int32_t num_nans_in_logits = 0;
  // Set when the step failed on the worker: the engine fails cleanly.
  std::optional<std::string> error;
  // vLLM's prompt_logprobs_dict: the whole prompt's rows of each request
  // that asked for prompt_logprobs, sent once, in the step that finishes its
  // prefill (the step that samples its first token).
  std::map<std::string, Logprobs> prompt_logprobs;
  // vLLM's pooler_output, keyed by request: the pooled hidden state of each
  // pooling request whose prefill this step finished.
  std::map<std::string, std::vector<float>> pooler_output;
  // Set when the workers run a KV connector and it has news.
  std::optional<KVConnectorOutput> kv_connector_output;

  bool operator==(const ModelRunnerOutput&) const = default;
};

void Pack(wire::Packer& p, const KVConnectorOutput& v);
Status Read(const msgpack::object& o, std::string_view field, KVConnectorOutput* out);
void Pack(wire::Packer& p, const ModelRunnerOutput& v);
Status Read(const msgpack::object& o, std::string_view field, ModelRunnerOutput* out);

}  // namespace llmserve::proto
