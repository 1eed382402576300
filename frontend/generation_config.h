#pragma once
// The server's sampling defaults, as vLLM's --generation-config and
// --override-generation-config set them: the model's generation_config.json
// ("auto"), none ("vllm"), or the generation_config.json of another folder;
// then the override's keys on top. Read keys: temperature, top_p, top_k,
// min_p, repetition_penalty and max_new_tokens (a cap on max_tokens).

#include <string>

#include "base/status_or.h"
#include "frontend/openai/sampling_request.h"

namespace llmserve::frontend {

// `setting` is "auto", "vllm" or a folder; `override_json` is "" or a JSON
// object. InvalidArgument for an override that is not a JSON object of
// numbers, or a folder that does not exist.
StatusOr<openai::GenerationDefaults> LoadGenerationDefaults(const std::string& setting, const std::string& model_dir,
                                                            const std::string& override_json);

}  // namespace llmserve::frontend
