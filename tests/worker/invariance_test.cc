// Determinism: a request's logits are bitwise identical whatever else is in
// the batch, however its prompt was chunked, and whether its prefix came from
// the cache.
#include <gtest/gtest.h>

#include "kernels/cpu/cpu_features.h"
#include "tests/worker/worker_test_util.h"

namespace llmserve::worker {
namespace {

using testing::Blocks;
using testing::ScratchDir;

// Each test runs at both matmul precisions: kF32 (the FMA kernels) and kBF16
// (AMX tiles or vdpbf16ps where the CPU has them), and with the linear
// layers quantized to int8 at load (the int8 kernels).
struct Mode {
  kernels::cpu::MatmulPrecision precision;
  std::string quantization;  // LoadOptions::quantization
  const char* name;
};

class InvarianceTest : public ::testing::TestWithParam<Mode> {
 protected:
  void SetUp() override {
    auto spec = testing::TinySpec("qwen3", 11);
    spec.num_layers = 3;
    ASSERT_TRUE(WriteTestModel(spec, dir_ / "m").ok());
    LoadOptions opts;
    opts.show_progress = false;
    opts.precision = GetParam().precision;
    opts.quantization = GetParam().quantization;
    auto m = Model::Load(dir_ / "m", opts, nullptr, &pool_);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    model_ = std::move(m).value();
    cache_ = std::make_unique<KvCache>(model_->CacheShape(64, 4));
  }
  std::vector<int32_t> Tokens(size_t n, int salt) {
    std::vector<int32_t> t(n);
    for (size_t i = 0; i < n; ++i) t[i] = static_cast<int32_t>((i * 37 + salt * 101 + 5) % 512);
    return t;
  }

  ScratchDir dir_;
  kernels::cpu::ThreadPool pool_{2};
  std::unique_ptr<Model> model_;
  std::unique_ptr<KvCache> cache_;
};

TEST_P(InvarianceTest, ChunkingDoesNotChangeLogits) {
  const auto tokens = Tokens(23, 1);
  const auto whole = testing::RunPrompt(*model_, *cache_, tokens, {23}, Blocks(0, 6));
  for (const auto& chunks : std::vector<std::vector<size_t>>{{1}, {5, 2}, {7, 1, 3}, {22}}) {
    const auto chunked = testing::RunPrompt(*model_, *cache_, tokens, chunks, Blocks(10, 6));
    ASSERT_EQ(chunked.size(), whole.size());
    EXPECT_TRUE(chunked == whole) << "chunks " << chunks[0] << "...";
  }
}

// A prefill that samples only its last row runs the last layer past the K/V
// write on that row alone; a chunk that samples nothing runs it on no rows.
// Neither may change the sampled logits or what later chunks read.
TEST_P(InvarianceTest, SamplingOnlySomeRowsDoesNotChangeLogits) {
  const auto tokens = Tokens(23, 7);
  const auto every_row = testing::RunPrompt(*model_, *cache_, tokens, {23}, Blocks(0, 6));
  const size_t vocab = model_->config().vocab_size;
  const std::vector<float> last_row(every_row.end() - vocab, every_row.end());
  for (size_t first_chunk : {size_t{0}, size_t{10}}) {
    std::vector<float> logits;
    if (first_chunk > 0) {  // a chunk that samples nothing
      ForwardBatch b;
      b.AddRequest(std::vector<int32_t>(tokens.begin(), tokens.begin() + first_chunk), 0, Blocks(10, 6), 4, false);
      b.FinishBlockTables();
      ASSERT_TRUE(model_->Forward(b, *cache_, &logits).ok());
      EXPECT_TRUE(logits.empty());
    }
    ForwardBatch b;
    b.AddRequest(std::vector<int32_t>(tokens.begin() + first_chunk, tokens.end()), static_cast<int32_t>(first_chunk),
                 Blocks(10, 6), 4, true);
    b.FinishBlockTables();
    ASSERT_TRUE(model_->Forward(b, *cache_, &logits).ok());
    EXPECT_TRUE(logits == last_row) << "first chunk " << first_chunk;
  }
}

TEST_P(InvarianceTest, BatchCompositionDoesNotChangeLogits) {
  const auto x = Tokens(13, 2);
  // X alone: prefill 10 then decode 3 single tokens.
  const auto alone = testing::RunPrompt(*model_, *cache_, x, {10, 1}, Blocks(0, 4));
  // X again, sharing each step with other requests (a prefill and decodes) in different orders.
  const auto other = Tokens(30, 3), third = Tokens(9, 4);
  std::vector<float> mixed;
  const size_t vocab = model_->config().vocab_size;
  size_t done = 0, other_done = 0, step = 0;
  while (done < x.size()) {
    const size_t n = done == 0 ? 10 : 1;
    ForwardBatch b;
    const size_t on = std::min<size_t>(step % 2 ? 7 : 3, other.size() - other_done);
    if (step % 2 == 0) b.AddRequest(third, 0, Blocks(40, 3), 4, true);
    if (on > 0) {
      b.AddRequest(std::vector<int32_t>(other.begin() + other_done, other.begin() + other_done + on),
                   static_cast<int32_t>(other_done), Blocks(20, 8), 4, true);
    }
    const size_t first_x = b.num_tokens();
    b.AddRequest(std::vector<int32_t>(x.begin() + done, x.begin() + done + n), static_cast<int32_t>(done), Blocks(50, 4), 4,
                 false);
    if (step % 3 == 1) b.AddRequest({7}, 0, Blocks(60, 1), 4, true);
    const size_t logits_before = b.logits_indices.size();
    for (size_t i = 0; i < n; ++i) b.logits_indices.push_back(static_cast<int32_t>(first_x + i));
    b.FinishBlockTables();
    std::vector<float> logits;
    ASSERT_TRUE(model_->Forward(b, *cache_, &logits).ok());
    mixed.insert(mixed.end(), logits.begin() + logits_before * vocab, logits.begin() + (logits_before + n) * vocab);
    done += n;
    other_done += on;
    ++step;
  }
  ASSERT_EQ(mixed.size(), alone.size());
  EXPECT_TRUE(mixed == alone);
}

// Speculative decoding's verification: a chunk of the last token and 4 drafts
// whose 5 rows give logits, beside another request and over KV slots that a
// rejected draft run wrote before, gives each row bitwise the logits of
// single-token decode steps (so greedy verification equals plain decoding).
TEST_P(InvarianceTest, VerificationRowsEqualDecodeRows) {
  const auto x = Tokens(14, 9);
  const size_t vocab = model_->config().vocab_size;
  const auto decoded = testing::RunPrompt(*model_, *cache_, x, {9, 1}, Blocks(0, 4));
  const std::vector<float> want(decoded.begin() + 9 * vocab, decoded.end());
  const auto blocks = Blocks(20, 4);
  auto run = [&](const std::vector<int32_t>& chunk, int32_t start, bool logits, std::vector<float>* out) {
    ForwardBatch b;
    b.AddRequest(Tokens(6, 10), 0, Blocks(40, 2), 4, true);
    b.AddRequest(chunk, start, blocks, 4, false);
    if (logits) b.AddLogitsRows(chunk.size());
    b.FinishBlockTables();
    ASSERT_TRUE(model_->Forward(b, *cache_, out).ok());
  };
  std::vector<float> logits;
  run(std::vector<int32_t>(x.begin(), x.begin() + 9), 0, false, &logits);
  run({x[9], 1, 2, 3, 4}, 9, false, &logits);  // drafts that were rejected
  run(std::vector<int32_t>(x.begin() + 9, x.end()), 9, true, &logits);
  ASSERT_EQ(logits.size(), 6 * vocab);
  EXPECT_TRUE(std::vector<float>(logits.begin() + vocab, logits.end()) == want);
}

TEST_P(InvarianceTest, PrefixFromCacheDoesNotChangeLogits) {
  // Y shares X's first 12 tokens (3 blocks of 4). Y from scratch vs Y whose
  // first 3 blocks are X's cached blocks and only the rest is computed.
  const auto x = Tokens(15, 5);
  auto y = std::vector<int32_t>(x.begin(), x.begin() + 12);
  for (int32_t t : Tokens(6, 6)) y.push_back(t);
  const auto scratch = testing::RunPrompt(*model_, *cache_, y, {18}, Blocks(0, 5));
  testing::RunPrompt(*model_, *cache_, x, {15}, Blocks(10, 4));  // fills blocks 10..13
  std::vector<int32_t> blocks = {10, 11, 12, 30, 31};
  ForwardBatch b;
  b.AddRequest(std::vector<int32_t>(y.begin() + 12, y.end()), 12, blocks, 4, false);
  for (int32_t i = 0; i < 6; ++i) b.logits_indices.push_back(i);
  b.FinishBlockTables();
  std::vector<float> reused;
  ASSERT_TRUE(model_->Forward(b, *cache_, &reused).ok());
  const size_t vocab = model_->config().vocab_size;
  std::vector<float> tail(scratch.begin() + 12 * vocab, scratch.end());
  EXPECT_TRUE(reused == tail);
}

TEST_P(InvarianceTest, Bf16CacheKeepsChunkingInvariance) {
  KvCache cache(model_->CacheShape(32, 4, kernels::cpu::KvDType::kBF16));
  EXPECT_EQ(cache.shape().bytes_per_block() * 2, cache_->shape().bytes_per_block());
  const auto tokens = Tokens(14, 8);
  const auto whole = testing::RunPrompt(*model_, cache, tokens, {14}, Blocks(0, 4));
  const auto chunked = testing::RunPrompt(*model_, cache, tokens, {3, 1, 6}, Blocks(8, 4));
  EXPECT_TRUE(chunked == whole);
  // Close to the fp32-cache logits (bf16 rounding of K/V only). Attention
  // with bf16 products (kBF16 where the CPU has AVX512-BF16; AMX attention
  // needs blocks of 32) rounds an fp32 cache's K/V to bf16 as well, so the
  // two caches then give the same logits. On the int8 kernels a nudged
  // activation can change its quantization step, hence a wider bound.
  const auto f32 = testing::RunPrompt(*model_, *cache_, tokens, {14}, Blocks(0, 4));
  EXPECT_LE(testing::MaxRelativeError(whole, f32), GetParam().quantization.empty() ? 2e-2 : 5e-2);
  // Int8 weights leave attention in f32 products (LinearWeight::PackInt8
  // keeps precision kF32), so only bf16 models multiply in bf16 there.
  const bool bf16_products = GetParam().precision == kernels::cpu::MatmulPrecision::kBF16 &&
                             GetParam().quantization.empty() &&
                             static_cast<int>(kernels::cpu::ActiveIsa()) >= static_cast<int>(kernels::cpu::Isa::kAvx512Bf16);
  if (bf16_products) {
    EXPECT_TRUE(whole == f32);
  } else {
    EXPECT_GT(testing::MaxRelativeError(whole, f32), 0.0);
  }
}

// A prompt longer than 64 tokens takes the large-m matmul path (AMX: row
// chunks, K blocks) and several attention tiles; chunks of it take the small-m
// path and other tile boundaries. The logits must not change.
TEST_P(InvarianceTest, LongPromptChunkingDoesNotChangeLogits) {
  const auto tokens = Tokens(90, 9);
  const auto whole = testing::RunPrompt(*model_, *cache_, tokens, {90}, Blocks(0, 23));
  const auto chunked = testing::RunPrompt(*model_, *cache_, tokens, {37, 1, 45}, Blocks(30, 23));
  ASSERT_EQ(chunked.size(), whole.size());
  EXPECT_TRUE(chunked == whole);
}

INSTANTIATE_TEST_SUITE_P(Precisions, InvarianceTest,
                         ::testing::Values(Mode{kernels::cpu::MatmulPrecision::kF32, "", "F32"},
                                           Mode{kernels::cpu::MatmulPrecision::kBF16, "", "Bf16"},
                                           Mode{kernels::cpu::MatmulPrecision::kBF16, "int8", "Int8"}),
                         [](const ::testing::TestParamInfo<Mode>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace llmserve::worker
