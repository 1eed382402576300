#include "worker/lora_batch.h"

#include <glog/logging.h>

namespace llmserve::worker {

void LoraBatch::Group(const int32_t* row_slot, size_t n) {
  groups_.clear();
  for (size_t i = 0; i < n; ++i) {
    if (row_slot[i] < 0) continue;
    auto it = groups_.begin();
    while (it != groups_.end() && it->first != row_slot[i]) ++it;
    if (it == groups_.end()) it = groups_.insert(groups_.end(), {row_slot[i], {}});
    it->second.push_back(static_cast<int32_t>(i));
  }
}

void LoraBatch::Apply(const LoraSlots& slots, size_t layer, LoraTarget target, const float* x, size_t x_stride,
                      float* y, size_t y_stride, kernels::cpu::ThreadPool& pool) const {
  std::vector<kernels::cpu::LoraGroup> groups;
  groups.reserve(groups_.size());
  for (const auto& [slot, rows] : groups_) {
    CHECK_LT(static_cast<size_t>(slot), slots.size());
    CHECK(slots[slot] != nullptr);
    const kernels::cpu::LoraFactors f = slots[slot]->Factors(layer, target);
    if (f.rank != 0) groups.push_back({f, rows.data(), rows.size()});
  }
  // Every group's rows in one pool round.
  kernels::cpu::LoraApplyGroups(groups.data(), groups.size(), x, x_stride, y, y_stride, pool);
}

}  // namespace llmserve::worker
