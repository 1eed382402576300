#include "frontend/metrics/lora_requests_info.h"

#include <utility>

namespace llmserve::frontend::metrics {

LoraRequestsInfo::LoraRequestsInfo(Registry& registry, int32_t max_loras, Clock clock)
    : family_(&registry.AddGauge("vllm:lora_requests_info", "Running stats on lora requests.",
                                 {"max_lora", "waiting_lora_adapters", "running_lora_adapters"},
                                 GaugeMerge::kMax)),
      max_loras_(std::to_string(max_loras)),
      clock_(std::move(clock)) {}

void LoraRequestsInfo::Arrived(const std::string& lora) { Move(lora, 1, 0); }
void LoraRequestsInfo::Scheduled(const std::string& lora) { Move(lora, -1, 1); }
void LoraRequestsInfo::Preempted(const std::string& lora) { Move(lora, 1, -1); }
void LoraRequestsInfo::Finished(const std::string& lora, bool running) {
  Move(lora, running ? 0 : -1, running ? -1 : 0);
}

void LoraRequestsInfo::Move(const std::string& lora, int64_t waiting, int64_t running) {
  std::lock_guard<std::mutex> lock(mu_);
  Counts& c = adapters_[lora];
  c.waiting += waiting;
  c.running += running;
  if (c.waiting <= 0 && c.running <= 0) adapters_.erase(lora);
  StampLocked();
}

void LoraRequestsInfo::Stamp() {
  std::lock_guard<std::mutex> lock(mu_);
  StampLocked();
}

void LoraRequestsInfo::StampLocked() {
  std::string waiting, running;
  for (const auto& [name, c] : adapters_) {
    if (c.waiting > 0) waiting += (waiting.empty() ? "" : ",") + name;
    if (c.running > 0) running += (running.empty() ? "" : ",") + name;
  }
  family_->Labels({max_loras_, waiting, running}).Set(clock_());
}

}  // namespace llmserve::frontend::metrics
