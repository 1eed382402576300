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

void SpecDecodeMetrics::Record(uint32_t engine, const proto::SpecDecodingStats& stats) {
  const std::vector<std::string> v = {model_name_, std::to_string(engine)};
  drafts_->Labels(v).Inc(static_cast<double>(stats.num_drafts));
  draft_tokens_->Labels(v).Inc(static_cast<double>(stats.num_draft_tokens));
  accepted_->Labels(v).Inc(static_cast<double>(stats.num_accepted_tokens));
  for (size_t pos = 0; pos < stats.num_accepted_tokens_per_pos.size(); ++pos) {
    accepted_per_pos_->Labels({v[0], v[1], std::to_string(pos)})
        .Inc(static_cast<double>(stats.num_accepted_tokens_per_pos[pos]));
  }
}

std::vector<std::string> SpecDecodeMetrics::ExposedNames() const {
  return {drafts_->exposed_name(), draft_tokens_->exposed_name(), accepted_->exposed_name(),
          accepted_per_pos_->exposed_name()};
}

}  // namespace llmserve::frontend::metrics
