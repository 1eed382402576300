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
  if (events_enabled_) {
    events_.emplace_back(proto::BlockRemoved{{ExternalBlockHash(block->hash, event_hash_algo_)}});
  }
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

void BlockPool::CacheFullBlocks(std::span<const int32_t> block_ids, std::span<const BlockHash> hashes,
                                const BlockHash* parent, std::span<const int32_t> token_ids,
                                int32_t block_size, std::string_view lora_name) {
  CHECK_EQ(block_ids.size(), hashes.size());
  if (!enable_caching_ || block_ids.empty()) return;
  for (size_t i = 0; i < block_ids.size(); ++i) CacheBlock(block_ids[i], hashes[i]);
  if (!events_enabled_) return;
  proto::BlockStored stored;
  stored.block_hashes.reserve(hashes.size());
  for (const BlockHash& h : hashes) stored.block_hashes.push_back(ExternalBlockHash(h, event_hash_algo_));
  if (parent != nullptr) stored.parent_block_hash = ExternalBlockHash(*parent, event_hash_algo_);
  stored.token_ids.assign(token_ids.begin(), token_ids.end());
  stored.block_size = block_size;
  if (!lora_name.empty()) stored.lora_name = std::string(lora_name);
  events_.emplace_back(std::move(stored));
}

void BlockPool::EnableKVEvents(HashAlgo algo) {
  events_enabled_ = true;
  event_hash_algo_ = algo;
}

std::vector<proto::KVCacheEvent> BlockPool::TakeKVEvents() {
  std::vector<proto::KVCacheEvent> out;
  out.swap(events_);
  return out;
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
  if (events_enabled_) events_.emplace_back(proto::AllBlocksCleared{});
  return true;
}

double BlockPool::usage() const {
  const int32_t usable = num_usable_blocks();
  return 1.0 - static_cast<double>(free_.size()) / static_cast<double>(usable);
}

}  // namespace llmserve::engine_core
