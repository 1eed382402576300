// Determinism with the attention shape the AMX attention kernel takes
// (head_dim 32, block size 32; bf16 checkpoints run it at MatmulPrecision::
// kBF16 on AMX CPUs): a request's logits are bitwise identical however its
// prompt was chunked, whether its prefix came from the cache, and whatever
// else is in the batch.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "tests/worker/worker_test_util.h"

namespace llmserve::worker {
namespace {

using testing::Blocks;
using testing::ScratchDir;

constexpr size_t kBlock = 32;

class AttentionShapeInvarianceTest
    : public ::testing::TestWithParam<std::tuple<kernels::cpu::MatmulPrecision, kernels::cpu::KvDType>> {
 protected:
  void SetUp() override {
    auto spec = testing::TinySpec("qwen3", 17);
    spec.num_layers = 2;
    spec.head_dim = 32;
    spec.kv_cache_scale = 0.5f;  // what fp8 caches divide K (and twice it V) by
    ASSERT_TRUE(WriteTestModel(spec, dir_ / "m").ok());
    LoadOptions opts;
    opts.show_progress = false;
    opts.precision = std::get<0>(GetParam());
    auto m = Model::Load(dir_ / "m", opts, nullptr, &pool_);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    model_ = std::move(m).value();
    cache_ = std::make_unique<KvCache>(model_->CacheShape(24, kBlock, std::get<1>(GetParam())));
  }
  std::vector<int32_t> Tokens(size_t n, int salt) {
    std::vector<int32_t> t(n);
    for (size_t i = 0; i < n; ++i) t[i] = static_cast<int32_t>((i * 53 + salt * 131 + 7) % 512);
    return t;
  }

  ScratchDir dir_;
  kernels::cpu::ThreadPool pool_{2};
  std::unique_ptr<Model> model_;
  std::unique_ptr<KvCache> cache_;
};

TEST_P(AttentionShapeInvarianceTest, ChunkingAndDecodeDoNotChangeLogits) {
  const auto tokens = Tokens(100, 1);
  const auto whole = testing::RunPrompt(*model_, *cache_, tokens, {100}, Blocks(0, 4));
  for (const auto& chunks : std::vector<std::vector<size_t>>{{1}, {40, 1, 7}, {33}, {99}}) {
    const auto chunked = testing::RunPrompt(*model_, *cache_, tokens, chunks, Blocks(8, 4));
    ASSERT_EQ(chunked.size(), whole.size());
    EXPECT_TRUE(chunked == whole) << "chunks " << chunks[0] << "...";
  }
}

TEST_P(AttentionShapeInvarianceTest, PrefixFromCacheAndBatchDoNotChangeLogits) {
  // Y shares X's first 64 tokens (2 blocks). Y from scratch vs Y whose first
  // 2 blocks are X's, its remaining 30 tokens in one batch with another prompt.
  const auto x = Tokens(70, 2);
  auto y = std::vector<int32_t>(x.begin(), x.begin() + 64);
  for (int32_t t : Tokens(30, 3)) y.push_back(t);
  const auto scratch = testing::RunPrompt(*model_, *cache_, y, {94}, Blocks(0, 3));
  testing::RunPrompt(*model_, *cache_, x, {70}, Blocks(4, 3));  // fills blocks 4..6
  ForwardBatch b;
  b.AddRequest(Tokens(45, 4), 0, Blocks(12, 2), kBlock, false);
  b.AddRequest(std::vector<int32_t>(y.begin() + 64, y.end()), 64, {4, 5, 9}, kBlock, false);
  for (int32_t i = 0; i < 30; ++i) b.logits_indices.push_back(45 + i);
  b.FinishBlockTables();
  std::vector<float> reused;
  ASSERT_TRUE(model_->Forward(b, *cache_, &reused).ok());
  const size_t vocab = model_->config().vocab_size;
  EXPECT_TRUE(reused == std::vector<float>(scratch.begin() + 64 * vocab, scratch.end()));
}

std::string CacheName(kernels::cpu::KvDType t) {
  switch (t) {
    case kernels::cpu::KvDType::kF32: return "F32Cache";
    case kernels::cpu::KvDType::kBF16: return "Bf16Cache";
    case kernels::cpu::KvDType::kFp8E4M3: return "Fp8E4M3Cache";
    case kernels::cpu::KvDType::kFp8E5M2: return "Fp8E5M2Cache";
  }
  return "";
}

INSTANTIATE_TEST_SUITE_P(
    PrecisionsAndCaches, AttentionShapeInvarianceTest,
    ::testing::Combine(::testing::Values(kernels::cpu::MatmulPrecision::kF32, kernels::cpu::MatmulPrecision::kBF16),
                       ::testing::Values(kernels::cpu::KvDType::kF32, kernels::cpu::KvDType::kBF16,
                                         kernels::cpu::KvDType::kFp8E4M3, kernels::cpu::KvDType::kFp8E5M2)),
    [](const auto& info) {
      return std::string(std::get<0>(info.param) == kernels::cpu::MatmulPrecision::kF32 ? "F32" : "Bf16") +
             CacheName(std::get<1>(info.param));
    });

}  // namespace
}  // namespace llmserve::worker
