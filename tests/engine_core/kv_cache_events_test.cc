// The KV events the block pool queues, driven through the KV cache manager as
// the scheduler drives it: BlockStored for newly full blocks (hashes in the
// external int form, the parent, their tokens), BlockRemoved when a cached
// block is evicted for reuse, AllBlocksCleared on a reset; nothing when off.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <numeric>
#include <variant>
#include <vector>

#include "engine_core/kv_cache_manager.h"

namespace llmserve::engine_core {
namespace kv_cache_events_test {

constexpr int32_t kBlockSize = 4;

std::vector<int32_t> Tokens(int32_t n, int32_t start) {
  std::vector<int32_t> t(n);
  std::iota(t.begin(), t.end(), start);
  return t;
}

class KVCacheEventsTest : public ::testing::TestWithParam<HashAlgo> {
 protected:
  void Init(int32_t num_blocks, bool events = true) {
    KVCacheConfig c;
    c.num_blocks = num_blocks;
    c.block_size = kBlockSize;
    c.max_model_len = 1024;
    c.hash_algo = GetParam();
    c.enable_kv_cache_events = events;
    kv_ = std::make_unique<KVCacheManager>(c);
  }
  std::unique_ptr<Request> MakeRequest(std::vector<int32_t> prompt) {
    const int32_t handle = next_handle_++;
    auto r = std::make_unique<Request>(handle, "r" + std::to_string(handle), std::move(prompt), StopConditions{});
    r->UpdateBlockHashes(kv_->hasher(), kBlockSize);
    return r;
  }
  // Prefix lookup, then room for the rest of the prompt (the scheduler's admission).
  void Admit(Request& r) {
    std::vector<int32_t> hits;
    const int32_t hit = kv_->GetComputedBlocks(r, &hits);
    ASSERT_TRUE(kv_->AllocateSlots(r, r.num_tokens() - hit, hit, hits));
    r.num_computed_tokens = r.num_tokens();
  }
  uint64_t Ext(const BlockHash& h) const { return ExternalBlockHash(h, GetParam()); }

  std::unique_ptr<KVCacheManager> kv_;
  int32_t next_handle_ = 0;
};

TEST_P(KVCacheEventsTest, StoredCarriesHashesParentAndTokensOfTheNewBlocks) {
  Init(16);
  auto a = MakeRequest(Tokens(10, 100));  // 2 full blocks + 2 tokens
  Admit(*a);
  auto events = kv_->TakeKVEvents();
  ASSERT_EQ(events.size(), 1u);
  const auto& s = std::get<proto::BlockStored>(events[0]);
  EXPECT_EQ(s.block_hashes, (std::vector<uint64_t>{Ext(a->block_hashes[0]), Ext(a->block_hashes[1])}));
  EXPECT_FALSE(s.parent_block_hash.has_value());
  EXPECT_EQ(s.token_ids, Tokens(8, 100));
  EXPECT_EQ(s.block_size, kBlockSize);
  EXPECT_FALSE(s.lora_id.has_value());
  EXPECT_EQ(s.medium, std::optional<std::string>("GPU"));
  EXPECT_TRUE(kv_->TakeKVEvents().empty()) << "taking empties the queue";

  // Decoding fills the third block: one more BlockStored whose parent is block 1.
  for (int32_t t : {900, 901}) a->AppendOutputToken(t);
  a->UpdateBlockHashes(kv_->hasher(), kBlockSize);
  ASSERT_TRUE(kv_->AllocateSlots(*a, 2));
  a->num_computed_tokens = a->num_tokens();
  events = kv_->TakeKVEvents();
  ASSERT_EQ(events.size(), 1u);
  const auto& s2 = std::get<proto::BlockStored>(events[0]);
  EXPECT_EQ(s2.block_hashes, std::vector<uint64_t>{Ext(a->block_hashes[2])});
  EXPECT_EQ(s2.parent_block_hash, std::optional<uint64_t>(Ext(a->block_hashes[1])));
  EXPECT_EQ(s2.token_ids, (std::vector<int32_t>{108, 109, 900, 901}));
}

TEST_P(KVCacheEventsTest, PrefixHitStoresOnlyTheBlocksBeyondTheHit) {
  Init(16);
  auto a = MakeRequest(Tokens(9, 100));
  Admit(*a);
  kv_->Free(*a);
  (void)kv_->TakeKVEvents();
  std::vector<int32_t> prompt = Tokens(8, 100);
  for (int32_t t : Tokens(5, 500)) prompt.push_back(t);  // 2 shared blocks, a new third
  auto b = MakeRequest(prompt);
  Admit(*b);
  auto events = kv_->TakeKVEvents();
  ASSERT_EQ(events.size(), 1u);
  const auto& s = std::get<proto::BlockStored>(events[0]);
  EXPECT_EQ(s.block_hashes, std::vector<uint64_t>{Ext(b->block_hashes[2])});
  EXPECT_EQ(s.parent_block_hash, std::optional<uint64_t>(Ext(b->block_hashes[1])));
  EXPECT_EQ(s.token_ids, (std::vector<int32_t>{500, 501, 502, 503}));
}

TEST_P(KVCacheEventsTest, EvictionRemovesInFreeOrderThenResetClears) {
  Init(5);  // 4 usable blocks
  auto a = MakeRequest(Tokens(8, 100));  // 2 full blocks, both cached
  Admit(*a);
  const std::vector<BlockHash> a_hashes = a->block_hashes;
  kv_->Free(*a);  // tail first: block 1 of a is evicted before block 0
  (void)kv_->TakeKVEvents();
  auto b = MakeRequest(Tokens(13, 300));  // 4 blocks: takes the 2 free ones, then evicts a's
  Admit(*b);
  auto events = kv_->TakeKVEvents();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(std::get<proto::BlockRemoved>(events[0]).block_hashes, std::vector<uint64_t>{Ext(a_hashes[1])});
  EXPECT_EQ(std::get<proto::BlockRemoved>(events[1]).block_hashes, std::vector<uint64_t>{Ext(a_hashes[0])});
  const auto& s = std::get<proto::BlockStored>(events[2]);
  EXPECT_EQ(s.block_hashes.size(), 3u);
  EXPECT_EQ(s.token_ids, Tokens(12, 300));

  EXPECT_FALSE(kv_->ResetPrefixCache()) << "b still holds blocks";
  EXPECT_TRUE(kv_->TakeKVEvents().empty()) << "a failed reset clears nothing";
  kv_->Free(*b);
  ASSERT_TRUE(kv_->ResetPrefixCache());
  events = kv_->TakeKVEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<proto::AllBlocksCleared>(events[0]));
  // Blocks whose hash the reset dropped are reused without a BlockRemoved.
  auto c = MakeRequest(Tokens(3, 700));
  Admit(*c);
  EXPECT_TRUE(kv_->TakeKVEvents().empty());
}

TEST_P(KVCacheEventsTest, NothingIsQueuedWhenOff) {
  Init(5, /*events=*/false);
  auto a = MakeRequest(Tokens(8, 100));
  Admit(*a);
  kv_->Free(*a);
  auto b = MakeRequest(Tokens(16, 300));
  Admit(*b);
  kv_->Free(*b);
  EXPECT_TRUE(kv_->ResetPrefixCache());
  EXPECT_TRUE(kv_->TakeKVEvents().empty());
}

INSTANTIATE_TEST_SUITE_P(Algos, KVCacheEventsTest, ::testing::Values(HashAlgo::kSha256, HashAlgo::kXxHash));

// vLLM's int form is int.from_bytes(digest, "big") & (2**64 - 1): the last 8
// digest bytes, big-endian.
TEST(ExternalBlockHash, IsTheLowSixtyFourBitsOfTheBigEndianDigest) {
  BlockHash sha;
  unsigned char digest[32];
  for (int i = 0; i < 32; ++i) digest[i] = static_cast<unsigned char>(i + 1);
  std::memcpy(sha.words.data(), digest, 32);
  EXPECT_EQ(ExternalBlockHash(sha, HashAlgo::kSha256), 0x191a1b1c1d1e1f20ull);
  // XXH3-128's canonical digest is high64 then low64, both big-endian.
  BlockHash xx;
  xx.words[0] = 0x1122334455667788ull;  // low64
  xx.words[1] = 0x99aabbccddeeff00ull;  // high64
  EXPECT_EQ(ExternalBlockHash(xx, HashAlgo::kXxHash), 0x1122334455667788ull);
}

}  // namespace kv_cache_events_test
}  // namespace llmserve::engine_core
