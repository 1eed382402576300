#include "engine_core/kv_cache_manager.h"

#include <gtest/gtest.h>

#include <memory>
#include <numeric>
#include <vector>

namespace llmserve::engine_core {
namespace {

constexpr int32_t kBlockSize = 4;

KVCacheConfig Config(int32_t num_blocks, bool caching = true, HashAlgo algo = HashAlgo::kSha256) {
  KVCacheConfig c;
  c.num_blocks = num_blocks;
  c.block_size = kBlockSize;
  c.max_model_len = 1024;
  c.enable_prefix_caching = caching;
  c.hash_algo = algo;
  return c;
}

std::vector<int32_t> Tokens(int32_t n, int32_t start = 100) {
  std::vector<int32_t> t(n);
  std::iota(t.begin(), t.end(), start);
  return t;
}

class KVCacheManagerTest : public ::testing::Test {
 protected:
  std::unique_ptr<Request> MakeRequest(std::vector<int32_t> prompt, std::string salt = "") {
    const int32_t handle = next_handle_++;
    std::string id = "r";
    id += std::to_string(handle);
    auto r = std::make_unique<Request>(handle, std::move(id), std::move(prompt), StopConditions{});
    r->cache_salt = std::move(salt);
    r->UpdateBlockHashes(kv_->hasher(), kBlockSize);
    return r;
  }
  // Admits a request the way the scheduler does: prefix lookup, then allocate the rest.
  int32_t Admit(Request& r) {
    std::vector<int32_t> hits;
    const int32_t hit = kv_->GetComputedBlocks(r, &hits);
    const int32_t n = r.num_tokens() - hit;
    EXPECT_TRUE(kv_->AllocateSlots(r, n, hit, hits));
    r.num_computed_tokens = r.num_tokens();
    return hit;
  }
  void Init(int32_t num_blocks, bool caching = true) {
    kv_ = std::make_unique<KVCacheManager>(Config(num_blocks, caching));
  }
  std::unique_ptr<KVCacheManager> kv_;
  int32_t next_handle_ = 0;
};

TEST_F(KVCacheManagerTest, PrefixHitAfterFirstRequestFinishes) {
  Init(16);
  auto a = MakeRequest(Tokens(10));  // 2 full blocks + 2 tokens
  EXPECT_EQ(Admit(*a), 0);
  const std::vector<int32_t> a_blocks = a->block_ids;
  ASSERT_EQ(a_blocks.size(), 3u);
  kv_->Free(*a);
  EXPECT_EQ(kv_->num_free_blocks(), 15);

  auto b = MakeRequest(Tokens(10));
  std::vector<int32_t> hits;
  EXPECT_EQ(kv_->GetComputedBlocks(*b, &hits), 8);
  EXPECT_EQ(hits, (std::vector<int32_t>{a_blocks[0], a_blocks[1]}));
  EXPECT_TRUE(kv_->AllocateSlots(*b, 2, 8, hits));
  EXPECT_EQ(b->block_ids[0], a_blocks[0]);
  EXPECT_EQ(b->block_ids[1], a_blocks[1]);
  EXPECT_EQ(kv_->prefix_cache_stats().queries, 20);
  EXPECT_EQ(kv_->prefix_cache_stats().hits, 8);
  EXPECT_EQ(kv_->prefix_cache_stats().requests, 2);
}

TEST_F(KVCacheManagerTest, HitIsCappedOneTokenShortOfThePrompt) {
  Init(16);
  auto a = MakeRequest(Tokens(8));  // exactly 2 full blocks
  Admit(*a);
  kv_->Free(*a);
  auto b = MakeRequest(Tokens(8));
  std::vector<int32_t> hits;
  // 8 tokens cached, but the last token must be recomputed: only block 0 hits.
  EXPECT_EQ(kv_->GetComputedBlocks(*b, &hits), 4);
  EXPECT_EQ(hits.size(), 1u);
}

TEST_F(KVCacheManagerTest, CacheSaltIsolates) {
  Init(16);
  auto a = MakeRequest(Tokens(12), "tenant-a");
  Admit(*a);
  kv_->Free(*a);
  std::vector<int32_t> hits;
  auto other_salt = MakeRequest(Tokens(12), "tenant-b");
  EXPECT_EQ(kv_->GetComputedBlocks(*other_salt, &hits), 0);
  auto no_salt = MakeRequest(Tokens(12));
  EXPECT_EQ(kv_->GetComputedBlocks(*no_salt, &hits), 0);
  auto same_salt = MakeRequest(Tokens(12), "tenant-a");
  EXPECT_EQ(kv_->GetComputedBlocks(*same_salt, &hits), 8);
}

TEST_F(KVCacheManagerTest, LoraIdIsolates) {
  Init(16);
  auto a = MakeRequest(Tokens(12));
  Admit(*a);
  kv_->Free(*a);
  auto b = std::make_unique<Request>(99, "lora", Tokens(12), StopConditions{});
  b->lora_name = "adapter-3";
  b->UpdateBlockHashes(kv_->hasher(), kBlockSize);
  std::vector<int32_t> hits;
  EXPECT_EQ(kv_->GetComputedBlocks(*b, &hits), 0);
}

TEST_F(KVCacheManagerTest, PartialBlockIsNeverCached) {
  Init(16);
  auto a = MakeRequest(Tokens(6));  // one full block, one half block
  Admit(*a);
  EXPECT_EQ(a->num_cached_blocks, 1);
  EXPECT_FALSE(kv_->pool().block(a->block_ids[1]).has_hash);
  EXPECT_EQ(kv_->pool().num_cached_blocks(), 1);
  // Two decode tokens fill block 1; it is cached at the next allocation that covers it.
  a->AppendOutputToken(1);
  a->UpdateBlockHashes(kv_->hasher(), kBlockSize);
  ASSERT_TRUE(kv_->AllocateSlots(*a, 1));
  a->num_computed_tokens += 1;
  EXPECT_FALSE(kv_->pool().block(a->block_ids[1]).has_hash);
  a->AppendOutputToken(2);
  a->UpdateBlockHashes(kv_->hasher(), kBlockSize);
  ASSERT_TRUE(kv_->AllocateSlots(*a, 1));
  EXPECT_TRUE(kv_->pool().block(a->block_ids[1]).has_hash);
  EXPECT_EQ(a->num_cached_blocks, 2);
}

TEST_F(KVCacheManagerTest, EvictionIsLeastRecentlyFreedWithChainTailsFirst) {
  Init(9);  // 8 usable blocks
  auto a = MakeRequest(Tokens(12, 100));  // 3 full blocks
  auto b = MakeRequest(Tokens(12, 500));
  Admit(*a);
  Admit(*b);
  const auto a_ids = a->block_ids;
  const auto b_ids = b->block_ids;
  kv_->Free(*a);  // freed first: its blocks go to the list first, tail first
  kv_->Free(*b);
  const std::vector<int32_t> order = kv_->pool().FreeListOrder();
  // Two never-used blocks, then a's chain tail-first, then b's.
  ASSERT_EQ(order.size(), 8u);
  EXPECT_EQ(std::vector<int32_t>(order.begin() + 2, order.end()),
            (std::vector<int32_t>{a_ids[2], a_ids[1], a_ids[0], b_ids[2], b_ids[1], b_ids[0]}));

  // A new 16-token request with no hits takes 4 blocks: the 2 unused ones, then a's tail
  // and middle. a's head block survives, so a's first block still hits.
  auto c = MakeRequest(Tokens(16, 900));
  Admit(*c);
  EXPECT_EQ(c->block_ids[2], a_ids[2]);
  EXPECT_EQ(c->block_ids[3], a_ids[1]);
  auto a2 = MakeRequest(Tokens(12, 100));
  std::vector<int32_t> hits;
  EXPECT_EQ(kv_->GetComputedBlocks(*a2, &hits), 4);
  auto b2 = MakeRequest(Tokens(12, 500));
  hits.clear();
  EXPECT_EQ(kv_->GetComputedBlocks(*b2, &hits), 8);  // capped at 11 tokens -> 2 blocks
}

TEST_F(KVCacheManagerTest, AllocateFailureHasNoSideEffects) {
  Init(6);  // 5 usable
  auto a = MakeRequest(Tokens(8, 100));
  Admit(*a);  // 2 blocks
  kv_->Free(*a);  // both cached, on the free list
  auto filler = MakeRequest(Tokens(8, 700));
  Admit(*filler);  // takes 2 never-used blocks; free list: 1 unused, a's 2 cached blocks
  EXPECT_EQ(kv_->num_free_blocks(), 3);

  auto b = MakeRequest(Tokens(40, 100));  // shares a's 2 blocks, needs 10 in all
  std::vector<int32_t> hits;
  ASSERT_EQ(kv_->GetComputedBlocks(*b, &hits), 8);
  const auto free_before = kv_->pool().FreeListOrder();
  const int32_t cached_before = kv_->pool().num_cached_blocks();
  std::vector<int32_t> refs_before;
  for (int32_t i = 0; i < 6; ++i) refs_before.push_back(kv_->pool().block(i).ref_cnt);

  EXPECT_FALSE(kv_->AllocateSlots(*b, 32, 8, hits));
  EXPECT_TRUE(b->block_ids.empty());
  EXPECT_EQ(b->num_cached_blocks, 0);
  EXPECT_EQ(kv_->pool().FreeListOrder(), free_before);
  EXPECT_EQ(kv_->pool().num_cached_blocks(), cached_before);
  for (int32_t i = 0; i < 6; ++i) EXPECT_EQ(kv_->pool().block(i).ref_cnt, refs_before[i]);

  // A chunk that fits succeeds: 2 hit blocks (evictable, count against free) + 1 new.
  EXPECT_TRUE(kv_->AllocateSlots(*b, 4, 8, hits));
  EXPECT_EQ(b->block_ids.size(), 3u);
  EXPECT_EQ(kv_->num_free_blocks(), 0);
}

TEST_F(KVCacheManagerTest, FullSequenceMustFitGatesAdmission) {
  Init(5);  // 4 usable
  auto r = MakeRequest(Tokens(20));  // needs 5 blocks
  EXPECT_TRUE(kv_->AllocateSlots(*r, 4, 0, {}, 0, /*full_sequence_must_fit=*/false));
  kv_->Free(*r);
  EXPECT_FALSE(kv_->AllocateSlots(*r, 4, 0, {}, 0, /*full_sequence_must_fit=*/true));
  EXPECT_TRUE(r->block_ids.empty());
}

TEST_F(KVCacheManagerTest, LookaheadSlotsAndMaxModelLenCap) {
  KVCacheConfig c = Config(32);
  c.max_model_len = 10;
  kv_ = std::make_unique<KVCacheManager>(c);
  auto r = MakeRequest(Tokens(4));
  ASSERT_TRUE(kv_->AllocateSlots(*r, 4, 0, {}, /*lookahead=*/3));
  EXPECT_EQ(r->block_ids.size(), 2u);  // 7 slots
  r->num_computed_tokens = 4;
  ASSERT_TRUE(kv_->AllocateSlots(*r, 4, 0, {}, /*lookahead=*/8));
  EXPECT_EQ(r->block_ids.size(), 3u);  // capped at max_model_len = 10 slots
}

TEST_F(KVCacheManagerTest, CachingOffNeverHits) {
  Init(16, /*caching=*/false);
  EXPECT_EQ(kv_->hasher(), nullptr);
  auto a = MakeRequest(Tokens(12));
  Admit(*a);
  kv_->Free(*a);
  auto b = MakeRequest(Tokens(12));
  std::vector<int32_t> hits;
  EXPECT_EQ(kv_->GetComputedBlocks(*b, &hits), 0);
  EXPECT_EQ(kv_->pool().num_cached_blocks(), 0);
}

TEST_F(KVCacheManagerTest, XxHashAlgorithmAlsoHits) {
  kv_ = std::make_unique<KVCacheManager>(Config(16, true, HashAlgo::kXxHash));
  auto a = MakeRequest(Tokens(9));
  Admit(*a);
  kv_->Free(*a);
  auto b = MakeRequest(Tokens(9));
  std::vector<int32_t> hits;
  EXPECT_EQ(kv_->GetComputedBlocks(*b, &hits), 8);
}

TEST_F(KVCacheManagerTest, SharedBlocksAreRefCountedAndResetNeedsIdle) {
  Init(16);
  auto a = MakeRequest(Tokens(9));
  Admit(*a);
  auto b = MakeRequest(Tokens(9));
  EXPECT_EQ(Admit(*b), 8);  // a is still running: its blocks are shared
  EXPECT_EQ(kv_->pool().block(a->block_ids[0]).ref_cnt, 2);
  EXPECT_FALSE(kv_->ResetPrefixCache());
  kv_->Free(*a);
  EXPECT_EQ(kv_->pool().block(b->block_ids[0]).ref_cnt, 1);
  kv_->Free(*b);
  EXPECT_TRUE(kv_->ResetPrefixCache());
  EXPECT_DOUBLE_EQ(kv_->usage(), 0.0);
  auto c = MakeRequest(Tokens(9));
  std::vector<int32_t> hits;
  EXPECT_EQ(kv_->GetComputedBlocks(*c, &hits), 0);
}

}  // namespace
}  // namespace llmserve::engine_core
