#pragma once
// Which rows of a forward pass use which LoRA adapter: the rows grouped by
// adapter slot, and the adapters' updates applied group by group.

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "kernels/cpu/thread_pool.h"
#include "worker/lora_adapter.h"

namespace llmserve::worker {

// The adapters a model holds, by slot (null: a freed slot).
using LoraSlots = std::vector<std::shared_ptr<const LoraAdapter>>;

class LoraBatch {
 public:
  // Groups rows 0..n-1 by row_slot[i] (an adapter slot, or -1 for none).
  void Group(const int32_t* row_slot, size_t n);
  // No row uses an adapter.
  bool empty() const { return groups_.empty(); }
  // For every group: rows of y += its adapter's update of `target` in
  // `layer` applied to the same rows of x (a no-op where the adapter does
  // not target it). y points at the projection's first output column.
  void Apply(const LoraSlots& slots, size_t layer, LoraTarget target, const float* x, size_t x_stride, float* y,
             size_t y_stride, kernels::cpu::ThreadPool& pool) const;

 private:
  std::vector<std::pair<int32_t, std::vector<int32_t>>> groups_;  // (slot, its rows in order)
};

}  // namespace llmserve::worker
