#pragma once
// The prefix cache's hash → block table. Open addressing with linear probing
// over a fixed power-of-two slot array sized for every block at once (a block
// holds at most one hash), so inserting and evicting never allocate. Several
// blocks may carry the same hash (two requests computed the same prefix before
// either was cached); lookups return any one of them, and erasing removes the
// given block's entry (backward-shift deletion, no tombstones).

#include <cstdint>
#include <span>
#include <vector>

#include "engine_core/kv_cache_block.h"

namespace llmserve::engine_core {

class CachedBlockIndex final {
 public:
  // An empty index over `blocks` (whose `hash` fields are the keys).
  explicit CachedBlockIndex(std::span<KVCacheBlock> blocks);

  // A block cached under `hash`, or nullptr.
  KVCacheBlock* Find(const BlockHash& hash) const;
  // Adds `block` under its `hash` field (duplicates allowed).
  void Insert(KVCacheBlock* block);
  // Removes `block`'s entry; it must be present.
  void Erase(const KVCacheBlock* block);
  // Removes every entry.
  void Clear();
  // Number of entries.
  int32_t size() const { return size_; }

 private:
  struct Slot {
    uint32_t tag = 0;       // high bits of the hash, to skip most key compares
    int32_t block_id = -1;  // -1: empty
  };
  size_t Home(const BlockHash& h) const { return static_cast<size_t>(h.words[0]) & mask_; }
  static uint32_t Tag(const BlockHash& h) { return static_cast<uint32_t>(h.words[1] >> 32); }

  std::span<KVCacheBlock> blocks_;
  std::vector<Slot> slots_;
  size_t mask_;
  int32_t size_ = 0;
};

}  // namespace llmserve::engine_core
