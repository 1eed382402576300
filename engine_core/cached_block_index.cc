#include "engine_core/cached_block_index.h"

#include <glog/logging.h>

namespace llmserve::engine_core {

CachedBlockIndex::CachedBlockIndex(std::span<KVCacheBlock> blocks) : blocks_(blocks) {
  // Load factor at most 1/2 even with every block cached.
  size_t capacity = 16;
  while (capacity < 2 * blocks.size()) capacity *= 2;
  slots_.assign(capacity, Slot{});
  mask_ = capacity - 1;
}

KVCacheBlock* CachedBlockIndex::Find(const BlockHash& hash) const {
  const uint32_t tag = Tag(hash);
  for (size_t i = Home(hash);; i = (i + 1) & mask_) {
    const Slot& s = slots_[i];
    if (s.block_id < 0) return nullptr;
    if (s.tag == tag && blocks_[s.block_id].hash == hash) return &blocks_[s.block_id];
  }
}

void CachedBlockIndex::Insert(KVCacheBlock* block) {
  CHECK_LT(static_cast<size_t>(size_), slots_.size() / 2) << "prefix cache index overfull";
  size_t i = Home(block->hash);
  while (slots_[i].block_id >= 0) i = (i + 1) & mask_;
  slots_[i] = Slot{Tag(block->hash), block->block_id};
  ++size_;
}

void CachedBlockIndex::Erase(const KVCacheBlock* block) {
  size_t i = Home(block->hash);
  while (slots_[i].block_id != block->block_id) {
    CHECK_GE(slots_[i].block_id, 0) << "block " << block->block_id << " is not in the index";
    i = (i + 1) & mask_;
  }
  // Backward-shift deletion: pull later entries of the probe run into the hole
  // when their home position allows it, so lookups never need tombstones.
  size_t hole = i;
  for (size_t j = (hole + 1) & mask_; slots_[j].block_id >= 0; j = (j + 1) & mask_) {
    const size_t home = Home(blocks_[slots_[j].block_id].hash);
    // Entry j may move to `hole` iff `home` is not cyclically in (hole, j].
    const bool home_in_range = hole < j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (!home_in_range) {
      slots_[hole] = slots_[j];
      hole = j;
    }
  }
  slots_[hole] = Slot{};
  --size_;
}

void CachedBlockIndex::Clear() {
  slots_.assign(slots_.size(), Slot{});
  size_ = 0;
}

}  // namespace llmserve::engine_core
