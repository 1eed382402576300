#pragma once
// LLM: offline batch generation in one process (vLLM's LLM class). Prompts
// are tokenized, all submitted at once, and the engine steps with continuous
// batching until every request finishes; results come back in prompt order.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/tokenizer/tokenizer.h"
#include "engine_core/engine_factory.h"
#include "proto/engine_config.pb.h"
#include "proto/sampling_params.h"

namespace llmserve::engine_core {

// One prompt: text (tokenized with the model's tokenizer) or token ids.
struct LLMPrompt {
  std::string text;
  std::vector<int32_t> token_ids;  // used when non-empty
  std::optional<proto::SamplingParams> sampling;  // overrides the call's params
};

struct LLMOutput {
  std::string prompt;
  std::vector<int32_t> prompt_token_ids;
  std::string text;
  std::vector<int32_t> token_ids;
  std::string finish_reason;  // "stop", "length", "abort", "error"
};

class LLM {
 public:
  // Loads the model and tokenizer named by `config`.
  static StatusOr<std::unique_ptr<LLM>> Create(const proto::EngineConfig& config);

  // Generates for every prompt; `progress(done, total)` is called as requests finish.
  StatusOr<std::vector<LLMOutput>> Generate(const std::vector<LLMPrompt>& prompts,
                                            const proto::SamplingParams& sampling,
                                            const std::function<void(size_t, size_t)>& progress = {});

  const common::tokenizer::Tokenizer& tokenizer() const { return *tokenizer_; }
  uint32_t max_model_len() const { return engine_.max_model_len; }
  // Requests preempted (and recomputed) since this LLM was created.
  int64_t num_preemptions() const { return num_preemptions_; }

 private:
  LLM() = default;
  BuiltEngine engine_;
  std::unique_ptr<common::tokenizer::Tokenizer> tokenizer_;
  uint64_t next_id_ = 0;
  int64_t num_preemptions_ = 0;
};

}  // namespace llmserve::engine_core
