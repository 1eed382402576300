#pragma once
// CompletionRequest: a validated POST /v1/completions body.
//
// prompt: a string, a list of strings, a list of token ids, or a list of lists
// of token ids; each entry is one prompt (choices are indexed prompt * n + i,
// as in vLLM). Unknown fields are accepted and listed in `ignored_fields` so
// the server can log them, as vLLM does (OpenAI would reject them). `suffix`
// is rejected (unsupported), as is best_of other than n.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/openai/json_fields.h"
#include "frontend/openai/sampling_request.h"

namespace llmserve::frontend::openai {

// One prompt: text to tokenize, or token ids as given.
struct PromptInput {
  std::optional<std::string> text;   // set when the client sent text
  std::vector<int32_t> token_ids;    // set when the client sent ids

  bool operator==(const PromptInput&) const = default;
};

struct CompletionRequest {
  std::optional<std::string> model;    // unset = the default served model
  std::vector<PromptInput> prompts;    // at least one, none empty
  SamplingRequest sampling;            // max_tokens defaults to 16 here, as in OpenAI/vLLM
  bool add_special_tokens = true;      // add BOS etc. when tokenizing text (vLLM extension)
  std::vector<std::string> ignored_fields;  // unknown fields, ignored

  bool operator==(const CompletionRequest&) const = default;
};

// Parses and validates a /v1/completions body.
MaybeError ParseCompletionRequest(std::string_view body, const ParseOptions& options, CompletionRequest* out);

// Reads a "prompt"-style field (string, [string], [int], [[int]]) named `name`.
MaybeError ReadPrompts(FieldReader& reader, const char* name, std::vector<PromptInput>* out);

}  // namespace llmserve::frontend::openai
