// MlaAttention: every head's softmax over the cached latent rows and the
// value part of their weighted sum, against a double-precision loop; a
// token's output does not depend on the batch, its block layout or the thread
// count; fp32 and bf16 caches; the portable and AVX-512 paths.
#include "kernels/cpu/mla_attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "base/float16.h"
#include "tests/kernels/cpu_path.h"

namespace llmserve::kernels::cpu {
namespace {

constexpr size_t kHeads = 11, kLatent = 40, kValue = 32, kBlock = 4, kContext = 13;

MlaAttentionShape Shape(KvDType dtype) {
  MlaAttentionShape s;
  s.kv_dtype = dtype;
  s.num_heads = kHeads;
  s.latent_dim = kLatent;
  s.value_dim = kValue;
  s.block_size = kBlock;
  s.scale = 0.3f;
  return s;
}

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> v(n);
  for (auto& x : v) x = normal(rng);
  return v;
}

// The context's rows written through `blocks` into a cache of 16 blocks; what a row reads back as.
std::vector<uint8_t> Cache(const std::vector<float>& rows, const std::vector<int32_t>& blocks,
                           const MlaAttentionShape& s, std::vector<float>* stored) {
  std::vector<uint8_t> cache(16 * kBlock * kLatent * 4);
  *stored = rows;
  for (size_t j = 0; j < kContext; ++j) {
    const int64_t slot = blocks[j / kBlock] * static_cast<int64_t>(kBlock) + static_cast<int64_t>(j % kBlock);
    WriteMlaCacheToken(&rows[j * kLatent], slot, s, cache.data());
    if (s.kv_dtype == KvDType::kBF16) {
      for (size_t d = 0; d < kLatent; ++d) {
        (*stored)[j * kLatent + d] = base::Bf16ToFloat(base::FloatToBf16(rows[j * kLatent + d]));
      }
    }
  }
  return cache;
}

// out[h] for the query at `position` of q [heads × latent], in double.
std::vector<double> Reference(const std::vector<float>& q, const std::vector<float>& rows, size_t position,
                              float scale) {
  std::vector<double> out(kHeads * kValue, 0.0);
  for (size_t h = 0; h < kHeads; ++h) {
    std::vector<double> p(position + 1);
    double max = -INFINITY, sum = 0;
    for (size_t j = 0; j <= position; ++j) {
      double dot = 0;
      for (size_t d = 0; d < kLatent; ++d) dot += static_cast<double>(q[h * kLatent + d]) * rows[j * kLatent + d];
      p[j] = dot * scale;
      max = std::max(max, p[j]);
    }
    for (auto& x : p) sum += (x = std::exp(x - max));
    for (size_t j = 0; j <= position; ++j) {
      for (size_t d = 0; d < kValue; ++d) out[h * kValue + d] += p[j] / sum * rows[j * kLatent + d];
    }
  }
  return out;
}

class MlaAttentionTest : public ::testing::TestWithParam<std::tuple<Isa, KvDType>> {};

TEST_P(MlaAttentionTest, MatchesDoubleReferenceAndDoesNotDependOnTheBatch) {
  const auto [isa, dtype] = GetParam();
  if (!test_paths::EnterCpuPath(isa)) GTEST_SKIP() << test_paths::CpuPathSkipReason(isa);
  SetMaxIsa(isa);
  const MlaAttentionShape s = Shape(dtype);
  const std::vector<int32_t> blocks = {7, 2, 12, 5};  // scattered blocks for the 13 positions
  std::vector<float> stored;
  const auto cache = Cache(Random(kContext * kLatent, 1), blocks, s, &stored);
  // Three query tokens of one request at positions 12, 4 and 0.
  const std::vector<int32_t> positions = {12, 4, 0}, requests = {0, 0, 0};
  const auto q = Random(3 * kHeads * kLatent, 2);
  PagedAttentionBatch b;
  b.tokens = 3;
  b.positions = positions.data();
  b.token_request = requests.data();
  b.block_tables = blocks.data();
  b.block_table_stride = blocks.size();
  std::vector<float> out(3 * kHeads * kValue);
  ThreadPool two(2), one(1);
  MlaAttention(q.data(), kHeads * kLatent, b, s, cache.data(), out.data(), kHeads * kValue, two);
  for (size_t t = 0; t < 3; ++t) {
    const std::vector<float> qt(q.begin() + t * kHeads * kLatent, q.begin() + (t + 1) * kHeads * kLatent);
    const auto want = Reference(qt, stored, positions[t], s.scale);
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_NEAR(out[t * kHeads * kValue + i], want[i], 1e-5 * (1 + std::abs(want[i]))) << "token " << t;
    }
    // Alone, on one thread: the same bits.
    PagedAttentionBatch alone = b;
    alone.tokens = 1;
    alone.positions = &positions[t];
    std::vector<float> single(kHeads * kValue);
    MlaAttention(qt.data(), kHeads * kLatent, alone, s, cache.data(), single.data(), kHeads * kValue, one);
    EXPECT_TRUE(std::equal(single.begin(), single.end(), out.begin() + t * kHeads * kValue)) << "token " << t;
  }
  SetMaxIsa(Isa::kAmx);
}

INSTANTIATE_TEST_SUITE_P(Paths, MlaAttentionTest,
                         ::testing::Combine(::testing::Values(Isa::kScalar, Isa::kAvx512),
                                            ::testing::Values(KvDType::kF32, KvDType::kBF16)),
                         [](const auto& info) {
                           return std::string(IsaName(std::get<0>(info.param))) +
                                  (std::get<1>(info.param) == KvDType::kF32 ? "F32" : "Bf16");
                         });

}  // namespace
}  // namespace llmserve::kernels::cpu
