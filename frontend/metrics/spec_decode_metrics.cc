#include "frontend/metrics/spec_decode_metrics.h"

namespace llmserve::frontend::metrics {

SpecDecodeMetrics::SpecDecodeMetrics(Registry& registry, std::string model_name)
    : model_name_(std::move(model_name)) {
  const std::vector<std::string> labels = {"model_name", "engine"};
  drafts_ = &registry.AddCounter("vllm:spec_decode_num_drafts", "Number of spec decoding drafts.", labels);
  draft_tokens_ = &registry.AddCounter("vllm:spec_decode_num_draft_tokens", "Number of draft tokens.", labels);
  accepted_ = &registry.AddCounter("vllm:spec_decode_num_accepted_tokens", "Number of accepted tokens.", labels);
  accepted_per_pos_ = &registry.AddCounter("vllm:spec_decode_num_accepted_tokens_per_pos",
                                           "Accepted tokens per draft position.", {"model_name", "engine", "position"});
}

SpecDecodeMetrics::EngineSeries& SpecDecodeMetrics::ForEngine(uint32_t engine, size_t positions) {
  EngineSeries& s = engines_[engine];
  const std::vector<std::string> v = {model_name_, std::to_string(engine)};
  if (s.drafts == nullptr) {
    s.drafts = &drafts_->Labels(v);
    s.draft_tokens = &draft_tokens_->Labels(v);
    s.accepted = &accepted_->Labels(v);
  }
  while (s.accepted_per_pos.size() < positions) {
    s.accepted_per_pos.push_back(&accepted_per_pos_->Labels({v[0], v[1], std::to_string(s.accepted_per_pos.size())}));
  }
  return s;
}

void SpecDecodeMetrics::Record(uint32_t engine, const proto::SpecDecodingStats& stats) {
  std::lock_guard<std::mutex> lock(mu_);
  EngineSeries& s = ForEngine(engine, stats.num_accepted_tokens_per_pos.size());
  s.num_spec_tokens = stats.num_spec_tokens;
  s.drafts->Inc(static_cast<double>(stats.num_drafts));
  s.draft_tokens->Inc(static_cast<double>(stats.num_draft_tokens));
  s.accepted->Inc(static_cast<double>(stats.num_accepted_tokens));
  for (size_t pos = 0; pos < stats.num_accepted_tokens_per_pos.size(); ++pos) {
    s.accepted_per_pos[pos]->Inc(static_cast<double>(stats.num_accepted_tokens_per_pos[pos]));
  }
}

std::optional<SpecDecodeTotals> SpecDecodeMetrics::Totals(uint32_t engine) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = engines_.find(engine);
  if (it == engines_.end()) return std::nullopt;
  const EngineSeries& s = it->second;
  SpecDecodeTotals t;
  t.num_spec_tokens = s.num_spec_tokens;
  t.drafts = s.drafts->value();
  t.draft_tokens = s.draft_tokens->value();
  t.accepted_tokens = s.accepted->value();
  for (const Counter* c : s.accepted_per_pos) t.accepted_per_pos.push_back(c->value());
  return t;
}

std::vector<std::string> SpecDecodeMetrics::ExposedNames() const {
  return {drafts_->exposed_name(), draft_tokens_->exposed_name(), accepted_->exposed_name(),
          accepted_per_pos_->exposed_name()};
}

}  // namespace llmserve::frontend::metrics
