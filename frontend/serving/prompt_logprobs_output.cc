#include "frontend/serving/prompt_logprobs_output.h"

#include <cmath>

namespace llmserve::frontend::serving {

namespace {
double FiniteLogprob(double logprob) { return std::isfinite(logprob) ? logprob : -9999.0; }
}  // namespace

nlohmann::json PromptLogprobsJson(const proto::Logprobs& rows, const TokenText& decoded) {
  nlohmann::json out = nlohmann::json::array({nullptr});
  for (size_t r = 0; r < rows.token_ids.size(); ++r) {
    const auto& ids = rows.token_ids[r];
    const auto& lps = rows.logprobs[r];
    nlohmann::json entry = nlohmann::json::object();
    // vLLM builds a dict in this order, so a prompt token among the top-k
    // ends with the top entry's rank.
    for (size_t k = 0; k < ids.size(); ++k) {
      const int32_t rank = k == 0 ? rows.sampled_token_ranks[r] : static_cast<int32_t>(k);
      entry[std::to_string(ids[k])] = {
          {"logprob", FiniteLogprob(lps[k])}, {"rank", rank}, {"decoded_token", decoded(ids[k])}};
    }
    out.push_back(std::move(entry));
  }
  return out;
}

std::vector<openai::TokenLogprob> EchoedPromptLogprobs(const std::vector<int32_t>& prompt, const proto::Logprobs* rows,
                                                       int32_t top, const TokenText& text) {
  std::vector<openai::TokenLogprob> out;
  for (size_t i = 0; i < prompt.size(); ++i) {
    openai::TokenLogprob& t = out.emplace_back();
    t.token = text(prompt[i]);
    const bool have = i > 0 && rows != nullptr && i - 1 < rows->token_ids.size() && !rows->token_ids[i - 1].empty();
    if (!have) {
      t.null_logprob = true;
      continue;
    }
    const auto& ids = rows->token_ids[i - 1];
    const auto& lps = rows->logprobs[i - 1];
    t.logprob = lps[0];
    for (size_t k = 1; k < ids.size() && k <= static_cast<size_t>(top); ++k) t.top.emplace_back(text(ids[k]), lps[k]);
  }
  return out;
}

}  // namespace llmserve::frontend::serving
