#pragma once
// The prompt's logprobs as the OpenAI servers answer them (vLLM):
//  * "prompt_logprobs": [null, {"<id>": {"logprob", "rank", "decoded_token"}}, ...]
//    one entry per prompt token, the first null (nothing predicts it); each
//    dict holds the prompt token (its own rank) and the top-k (ranks 1..k);
//  * echo with logprobs: the prompt tokens as completion logprob entries
//    before the output's, the first with a null logprob.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frontend/openai/responses.h"
#include "proto/engine_core_output.h"

namespace llmserve::frontend::serving {

// Token id -> text.
using TokenText = std::function<std::string(int32_t)>;

// The prompt_logprobs list of a prompt whose engine rows are `rows` (one per
// prompt token after the first). -inf is written as -9999.0.
nlohmann::json PromptLogprobsJson(const proto::Logprobs& rows, const TokenText& decoded);

// The completion logprob entries of an echoed prompt: token i > 0 from row
// i - 1 of `rows` (null: the rows did not come, every logprob is null), with
// at most `top` alternatives; token 0 has none.
std::vector<openai::TokenLogprob> EchoedPromptLogprobs(const std::vector<int32_t>& prompt, const proto::Logprobs* rows,
                                                       int32_t top, const TokenText& text);

}  // namespace llmserve::frontend::serving
