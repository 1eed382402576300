#pragma once
// The free-block list: an intrusive doubly linked list threaded through the
// blocks themselves (sentinel head and tail nodes), so popping the front, appending
// and removing a block from the middle (a prefix-cache hit on a free block) are
// all O(1) and allocate nothing. The front is the next block to be reused, so
// the order is the eviction order: least recently freed first.

#include <cstdint>
#include <span>
#include <vector>

#include "engine_core/kv_cache_block.h"

namespace llmserve::engine_core {

class FreeBlockQueue final {
 public:
  // Links `blocks` in order (block ids ascending): all free.
  explicit FreeBlockQueue(std::span<KVCacheBlock> blocks);
  FreeBlockQueue(const FreeBlockQueue&) = delete;
  FreeBlockQueue& operator=(const FreeBlockQueue&) = delete;

  // Removes and returns the front block; the queue must not be empty.
  KVCacheBlock* PopFront();
  // Unlinks `block`, which must be in the queue.
  void Remove(KVCacheBlock* block);
  // Links `block`, which must not be in the queue, at the back.
  void Append(KVCacheBlock* block);
  // Number of blocks in the queue.
  int32_t size() const { return size_; }
  // True when `block` is linked into a free list.
  static bool Contains(const KVCacheBlock* block) { return block->next_free != nullptr; }
  // The blocks front to back (a copy; for tests and debugging).
  std::vector<int32_t> BlockIds() const;

 private:
  KVCacheBlock head_;
  KVCacheBlock tail_;
  int32_t size_ = 0;
};

}  // namespace llmserve::engine_core
