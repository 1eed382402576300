#include "engine_core/kv_connector/kv_output_aggregator.h"

#include <algorithm>

namespace llmserve::engine_core {

void KVOutputAggregator::Count(const std::vector<std::string>& ids, std::unordered_map<std::string, uint32_t>* counts,
                               std::vector<std::string>* done) {
  for (const std::string& id : ids) {
    if (++(*counts)[id] < world_size_) continue;
    counts->erase(id);
    done->push_back(id);
  }
}

std::optional<proto::KVConnectorOutput> KVOutputAggregator::Merge(
    const std::vector<std::optional<proto::KVConnectorOutput>>& reports) {
  proto::KVConnectorOutput merged;
  for (const auto& report : reports) {
    if (!report) continue;
    Count(report->finished_sending, &sending_, &merged.finished_sending);
    Count(report->finished_recving, &recving_, &merged.finished_recving);
    merged.invalid_block_ids.insert(merged.invalid_block_ids.end(), report->invalid_block_ids.begin(),
                                    report->invalid_block_ids.end());
  }
  std::sort(merged.invalid_block_ids.begin(), merged.invalid_block_ids.end());
  merged.invalid_block_ids.erase(std::unique(merged.invalid_block_ids.begin(), merged.invalid_block_ids.end()),
                                 merged.invalid_block_ids.end());
  if (merged.empty()) return std::nullopt;
  return merged;
}

}  // namespace llmserve::engine_core
