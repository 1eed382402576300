#include "engine_core/block_pool.h"

#include <glog/logging.h>

namespace llmserve::engine_core {

namespace {
std::vector<KVCacheBlock> MakeBlocks(int32_t n) {
  CHECK_GE(n, 2) << "a block pool needs the null block and at least one usable block";
  std::vector<KVCacheBlock> blocks(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) blocks[i].block_id = i;
  return blocks;
}
}  // namespace

BlockPool::BlockPool(int32_t num_blocks, bool enable_caching)
    : enable_caching_(enable_caching),
      blocks_(MakeBlocks(num_blocks)),
      free_(std::span<KVCacheBlock>(blocks_).subspan(1)),  // block 0 starts (and stays) taken
      index_(blocks_) {
  blocks_[kNullBlockId].ref_cnt = 1;
}

void BlockPool::EvictIfCached(KVCacheBlock* block) {
  if (!block->has_hash) return;
  index_.Erase(block);
  block->has_hash = false;
  block->hash = BlockHash{};
}

void BlockPool::GetNewBlocks(int32_t n, std::vector<int32_t>* out) {
  CHECK_LE(n, free_.size()) << "allocating more blocks than are free";
  for (int32_t i = 0; i < n; ++i) {
    KVCacheBlock* b = free_.PopFront();
    DCHECK_EQ(b->ref_cnt, 0);
    EvictIfCached(b);
    b->ref_cnt = 1;
    out->push_back(b->block_id);
  }
}

KVCacheBlock* BlockPool::GetCachedBlock(const BlockHash& hash) const {
  if (!enable_caching_) return nullptr;
  return index_.Find(hash);
}

void BlockPool::Touch(std::span<const int32_t> block_ids) {
  for (int32_t id : block_ids) {
    KVCacheBlock& b = blocks_[id];
    if (b.ref_cnt == 0) free_.Remove(&b);
    ++b.ref_cnt;
  }
}

void BlockPool::CacheBlock(int32_t block_id, const BlockHash& hash) {
  if (!enable_caching_) return;
  KVCacheBlock& b = blocks_[block_id];
  CHECK(!b.has_hash) << "block " << block_id << " is already cached";
  CHECK_NE(block_id, kNullBlockId);
  b.hash = hash;
  b.has_hash = true;
  index_.Insert(&b);
}

void BlockPool::FreeBlock(int32_t id) {
  if (id == kNullBlockId) return;
  KVCacheBlock& b = blocks_[id];
  CHECK_GT(b.ref_cnt, 0) << "freeing block " << id << " which nobody holds";
  if (--b.ref_cnt == 0) free_.Append(&b);
}

bool BlockPool::ResetPrefixCache() {
  if (free_.size() != num_usable_blocks()) return false;
  index_.Clear();
  for (KVCacheBlock& b : blocks_) {
    b.has_hash = false;
    b.hash = BlockHash{};
  }
  return true;
}

double BlockPool::usage() const {
  const int32_t usable = num_usable_blocks();
  return 1.0 - static_cast<double>(free_.size()) / static_cast<double>(usable);
}

}  // namespace llmserve::engine_core
