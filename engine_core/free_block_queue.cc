#include "engine_core/free_block_queue.h"

#include <glog/logging.h>

namespace llmserve::engine_core {

FreeBlockQueue::FreeBlockQueue(std::span<KVCacheBlock> blocks) {
  head_.next_free = &tail_;
  tail_.prev_free = &head_;
  for (KVCacheBlock& b : blocks) Append(&b);
}

KVCacheBlock* FreeBlockQueue::PopFront() {
  CHECK_GT(size_, 0) << "pop from an empty free-block queue";
  KVCacheBlock* b = head_.next_free;
  Remove(b);
  return b;
}

void FreeBlockQueue::Remove(KVCacheBlock* block) {
  DCHECK(Contains(block));
  block->prev_free->next_free = block->next_free;
  block->next_free->prev_free = block->prev_free;
  block->prev_free = nullptr;
  block->next_free = nullptr;
  --size_;
}

void FreeBlockQueue::Append(KVCacheBlock* block) {
  DCHECK(!Contains(block));
  KVCacheBlock* last = tail_.prev_free;
  last->next_free = block;
  block->prev_free = last;
  block->next_free = &tail_;
  tail_.prev_free = block;
  ++size_;
}

std::vector<int32_t> FreeBlockQueue::BlockIds() const {
  std::vector<int32_t> ids;
  ids.reserve(size_);
  for (const KVCacheBlock* b = head_.next_free; b != &tail_; b = b->next_free) {
    ids.push_back(b->block_id);
  }
  return ids;
}

}  // namespace llmserve::engine_core
