#include "frontend/serving/beam_search.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

namespace llmserve::frontend::serving {

double BeamSearchScore(const std::vector<int32_t>& tokens, double cum_logprob,
                       std::optional<int32_t> eos_token_id, double length_penalty) {
  size_t seq_len = tokens.size();
  if (seq_len > 0 && eos_token_id && tokens.back() == *eos_token_id) --seq_len;
  // vLLM divides by zero here (a prompt of only EOS, ended at once); count it as one token.
  return cum_logprob / std::pow(static_cast<double>(std::max<size_t>(seq_len, 1)), length_penalty);
}

BeamSearch::BeamSearch(BeamSearchParams params, std::vector<int32_t> prompt)
    : params_(std::move(params)), prompt_len_(prompt.size()) {
  live_.push_back(Beam{std::move(prompt), 0.0, false, {}});
}

void BeamSearch::Step(const std::vector<std::vector<BeamCandidate>>& candidates) {
  struct Extension {
    double cum_logprob;
    int32_t token;
    size_t beam;
  };
  const bool eos_ends = params_.eos_token_id && !params_.ignore_eos;
  std::vector<Extension> extensions;
  std::vector<std::vector<BeamCandidate>> rows(live_.size());  // candidates without repeats
  for (size_t b = 0; b < live_.size() && b < candidates.size(); ++b) {
    std::unordered_set<int32_t> seen;
    for (const BeamCandidate& c : candidates[b])
      if (seen.insert(c.first).second) rows[b].push_back(c);
  }
  for (size_t b = 0; b < live_.size(); ++b) {
    const Beam& beam = live_[b];
    for (const auto& [token, logprob] : rows[b]) {
      const double cum = beam.cum_logprob + logprob;
      if (eos_ends && token == *params_.eos_token_id) {
        Beam ended{beam.tokens, cum, true, beam.rows};
        ended.rows.push_back(rows[b]);
        if (params_.include_stop_str_in_output) ended.tokens.push_back(token);
        ended_.push_back(std::move(ended));
      } else {
        extensions.push_back(Extension{cum, token, b});
      }
    }
  }
  std::stable_sort(extensions.begin(), extensions.end(),
                   [](const Extension& a, const Extension& b) { return a.cum_logprob > b.cum_logprob; });
  const size_t keep = std::min(extensions.size(), static_cast<size_t>(std::max(params_.beam_width, 0)));
  std::vector<Beam> next;
  next.reserve(keep);
  for (size_t i = 0; i < keep; ++i) {
    const Extension& e = extensions[i];
    Beam beam{live_[e.beam].tokens, e.cum_logprob, false, live_[e.beam].rows};
    beam.tokens.push_back(e.token);
    beam.rows.push_back(rows[e.beam]);
    next.push_back(std::move(beam));
  }
  live_ = std::move(next);
  ++steps_;
}

std::vector<Beam> BeamSearch::Best() const {
  std::vector<Beam> all = ended_;
  all.insert(all.end(), live_.begin(), live_.end());
  std::vector<double> score(all.size());
  for (size_t i = 0; i < all.size(); ++i)
    score[i] = BeamSearchScore(all[i].tokens, all[i].cum_logprob, params_.eos_token_id, params_.length_penalty);
  std::vector<size_t> order(all.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return score[a] > score[b]; });
  std::vector<Beam> best;
  for (size_t i = 0; i < order.size() && best.size() < static_cast<size_t>(params_.beam_width); ++i)
    best.push_back(all[order[i]]);
  return best;
}

std::vector<int32_t> BeamSearch::OutputTokens(const Beam& beam) const {
  return std::vector<int32_t>(beam.tokens.begin() + static_cast<std::ptrdiff_t>(prompt_len_), beam.tokens.end());
}

std::vector<int32_t> BeamSearch::TextTokens(const Beam& beam) const {
  std::vector<int32_t> ids = OutputTokens(beam);
  if (!ids.empty() && params_.eos_token_id && !params_.ignore_eos && ids.back() == *params_.eos_token_id)
    ids.pop_back();
  return ids;
}

}  // namespace llmserve::frontend::serving
