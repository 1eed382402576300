#include "engine_core/block_pool.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace llmserve::engine_core {
namespace {

BlockHash H(uint64_t v) {
  BlockHash h;
  h.words = {v, v * 0x9e3779b97f4a7c15ULL, 0, 0};
  return h;
}

TEST(FreeBlockQueueTest, PopAppendRemoveFromMiddle) {
  std::vector<KVCacheBlock> blocks(5);
  for (int i = 0; i < 5; ++i) blocks[i].block_id = i;
  FreeBlockQueue q(blocks);
  EXPECT_EQ(q.size(), 5);
  EXPECT_EQ(q.PopFront()->block_id, 0);
  q.Remove(&blocks[2]);
  EXPECT_FALSE(FreeBlockQueue::Contains(&blocks[2]));
  EXPECT_EQ(q.BlockIds(), (std::vector<int32_t>{1, 3, 4}));
  q.Append(&blocks[0]);
  q.Append(&blocks[2]);
  EXPECT_EQ(q.BlockIds(), (std::vector<int32_t>{1, 3, 4, 0, 2}));
  q.Remove(&blocks[2]);  // the tail
  q.Remove(&blocks[1]);  // the head
  EXPECT_EQ(q.BlockIds(), (std::vector<int32_t>{3, 4, 0}));
  EXPECT_EQ(q.size(), 3);
}

TEST(BlockPoolTest, NullBlockIsNeverHandedOut) {
  BlockPool pool(4, true);
  EXPECT_EQ(pool.num_usable_blocks(), 3);
  EXPECT_EQ(pool.num_free_blocks(), 3);
  std::vector<int32_t> ids;
  pool.GetNewBlocks(3, &ids);
  EXPECT_EQ(ids, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_DOUBLE_EQ(pool.usage(), 1.0);
  pool.FreeBlock(BlockPool::kNullBlockId);  // ignored
  EXPECT_EQ(pool.num_free_blocks(), 0);
}

TEST(BlockPoolTest, FreedBlockKeepsHashUntilReused) {
  BlockPool pool(3, true);
  std::vector<int32_t> ids;
  pool.GetNewBlocks(1, &ids);
  pool.CacheBlock(ids[0], H(42));
  pool.FreeBlock(ids[0]);
  ASSERT_NE(pool.GetCachedBlock(H(42)), nullptr);  // lazy eviction: still findable
  EXPECT_EQ(pool.GetCachedBlock(H(42))->block_id, ids[0]);
  // Block 2 is at the front of the free list, block 1 (cached) behind it.
  std::vector<int32_t> more;
  pool.GetNewBlocks(1, &more);
  EXPECT_EQ(more[0], 2);
  EXPECT_NE(pool.GetCachedBlock(H(42)), nullptr);
  pool.GetNewBlocks(1, &more);  // now the cached block is reused and evicted
  EXPECT_EQ(more[1], ids[0]);
  EXPECT_EQ(pool.GetCachedBlock(H(42)), nullptr);
  EXPECT_EQ(pool.num_cached_blocks(), 0);
}

TEST(BlockPoolTest, TouchTakesCachedBlockOffTheFreeList) {
  BlockPool pool(4, true);
  std::vector<int32_t> ids;
  pool.GetNewBlocks(2, &ids);
  pool.CacheBlock(ids[0], H(1));
  pool.FreeBlock(ids[0]);
  EXPECT_EQ(pool.num_free_blocks(), 2);
  const int32_t id = ids[0];
  pool.Touch(std::span<const int32_t>(&id, 1));
  EXPECT_EQ(pool.num_free_blocks(), 1);
  EXPECT_EQ(pool.block(id).ref_cnt, 1);
  pool.Touch(std::span<const int32_t>(&id, 1));  // a second holder
  EXPECT_EQ(pool.block(id).ref_cnt, 2);
  EXPECT_FALSE(pool.ResetPrefixCache());  // blocks in use
  pool.FreeBlock(id);
  pool.FreeBlock(id);
  pool.FreeBlock(ids[1]);
  EXPECT_TRUE(pool.ResetPrefixCache());
  EXPECT_EQ(pool.GetCachedBlock(H(1)), nullptr);
}

TEST(BlockPoolTest, CachingOffNeverFinds) {
  BlockPool pool(3, false);
  std::vector<int32_t> ids;
  pool.GetNewBlocks(1, &ids);
  pool.CacheBlock(ids[0], H(9));
  EXPECT_EQ(pool.GetCachedBlock(H(9)), nullptr);
}

// The open-addressing index against a reference model under heavy churn with
// colliding home slots and duplicate hashes.
TEST(CachedBlockIndexTest, MatchesReferenceUnderChurn) {
  const int kBlocks = 64;
  std::vector<KVCacheBlock> blocks(kBlocks);
  for (int i = 0; i < kBlocks; ++i) blocks[i].block_id = i;
  CachedBlockIndex index(blocks);
  std::vector<bool> in(kBlocks, false);
  std::mt19937 rng(7);
  for (int step = 0; step < 20000; ++step) {
    const int b = static_cast<int>(rng() % kBlocks);
    if (in[b]) {
      index.Erase(&blocks[b]);
      in[b] = false;
    } else {
      // Few distinct values and words[0] multiples of 128: long probe runs and duplicates.
      const uint64_t v = rng() % 24;
      blocks[b].hash.words = {v * 128, v, 0, 0};
      index.Insert(&blocks[b]);
      in[b] = true;
    }
    if (step % 97 == 0) {
      for (uint64_t v = 0; v < 24; ++v) {
        BlockHash h;
        h.words = {v * 128, v, 0, 0};
        bool expect = false;
        for (int i = 0; i < kBlocks; ++i) expect |= in[i] && blocks[i].hash == h;
        KVCacheBlock* found = index.Find(h);
        ASSERT_EQ(found != nullptr, expect) << "step " << step << " v " << v;
        if (found) {
          EXPECT_TRUE(in[found->block_id]);
          EXPECT_EQ(found->hash, h);
        }
      }
    }
  }
  int count = 0;
  for (bool x : in) count += x;
  EXPECT_EQ(index.size(), count);
}

}  // namespace
}  // namespace llmserve::engine_core
