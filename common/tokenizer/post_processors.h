#pragma once
// Post-processors (tokenizer.json "post_processor"): add the special tokens
// around an encoded sequence when add_special_tokens is on.
// Supported types: TemplateProcessing (single-sequence template), ByteLevel
// (offsets only, so a no-op on ids), Sequence.

#include <cstdint>
#include <memory>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/tokenizer/json_context.h"
#include "base/status_or.h"

namespace llmserve::common::tokenizer {

class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  // Rewrites the ids of one encoded sequence (called only when special tokens
  // are to be added).
  virtual void Process(std::vector<int32_t>* ids) const = 0;
};

// Builds the post-processor described by `config`; JSON null gives nullptr.
StatusOr<std::unique_ptr<PostProcessor>> MakePostProcessor(const nlohmann::json& config,
                                                           const JsonContext& ctx);

// A template "[prefix...] $A [suffix...]" (how tokenizer_config's
// add_bos_token / add_eos_token are applied).
std::unique_ptr<PostProcessor> MakeAffixProcessor(std::vector<int32_t> prefix,
                                                  std::vector<int32_t> suffix);

}  // namespace llmserve::common::tokenizer
