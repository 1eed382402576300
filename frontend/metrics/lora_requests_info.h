#pragma once
// vllm:lora_requests_info: vLLM's gauge of which LoRA adapters have requests
// running (scheduled in an engine) and waiting (in an engine's queue). Labels
// max_lora (--max-loras), waiting_lora_adapters and running_lora_adapters
// (adapter names, comma-joined, in name order; "" when none); the value is
// the Unix time the pair of lists was last current. As with vLLM's
// prometheus_client gauge, a series stays once created, so the current state
// is the series with the greatest value.
//
// The frontend follows each adapter request through its engine events (what
// vLLM's output processor does): it waits from its arrival, runs from a
// SCHEDULED event, waits again after PREEMPTED, and leaves at its finish.
// Without --enable-lora the family is not registered. Each API server follows
// its own requests; a scrape merged over several shows every server's series,
// one per label set with the latest time (GaugeMerge::kMax; vLLM sums them,
// which makes a sum of Unix times of a state two servers shared).

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "frontend/metrics/registry.h"

namespace llmserve::frontend::metrics {

class LoraRequestsInfo {
 public:
  using Clock = std::function<double()>;  // Unix seconds

  // Registers the family in `registry`, which must outlive this.
  LoraRequestsInfo(Registry& registry, int32_t max_loras, Clock clock);
  LoraRequestsInfo(const LoraRequestsInfo&) = delete;
  LoraRequestsInfo& operator=(const LoraRequestsInfo&) = delete;

  // A request of adapter `lora` arrived: it waits.
  void Arrived(const std::string& lora);
  // One of its waiting requests was scheduled: it runs.
  void Scheduled(const std::string& lora);
  // One of its running requests was preempted: it waits again.
  void Preempted(const std::string& lora);
  // One of its requests ended, running or waiting.
  void Finished(const std::string& lora, bool running);
  // Sets the current lists' series to now (also done by every change).
  void Stamp();

 private:
  struct Counts {
    int64_t waiting = 0, running = 0;
  };
  void Move(const std::string& lora, int64_t waiting, int64_t running);
  void StampLocked();

  Family<Gauge>* family_;
  std::string max_loras_;
  Clock clock_;
  std::mutex mu_;
  std::map<std::string, Counts> adapters_;  // adapters with requests now
};

}  // namespace llmserve::frontend::metrics
