#pragma once
// Merges the KV connector reports of an engine's tensor-parallel workers into
// the one the scheduler sees (vLLM's KVOutputAggregator): a request's send or
// load is finished once every worker has reported it (workers may report it
// in different steps), and a block failed to load if any worker says so.

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "proto/model_runner_output.h"

namespace llmserve::engine_core {

class KVOutputAggregator final {
 public:
  explicit KVOutputAggregator(uint32_t world_size) : world_size_(world_size) {}

  // One step's reports, one per worker (nullopt: that worker had no news);
  // returns the merged report, nullopt when it is empty.
  std::optional<proto::KVConnectorOutput> Merge(const std::vector<std::optional<proto::KVConnectorOutput>>& reports);

 private:
  // Counts `ids` and moves those every worker has now reported to `done`.
  void Count(const std::vector<std::string>& ids, std::unordered_map<std::string, uint32_t>* counts,
             std::vector<std::string>* done);

  uint32_t world_size_;
  std::unordered_map<std::string, uint32_t> sending_;  // reports so far, per request
  std::unordered_map<std::string, uint32_t> recving_;
};

}  // namespace llmserve::engine_core
