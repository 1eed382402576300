#include "kernels/cpu/paged_attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/cpu/activation.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/linear.h"
#include "kernels/cpu/embedding.h"
#include "tests/kernels/cpu_path.h"

namespace llmserve::kernels::cpu {
namespace {

TEST(PagedAttention, MatchesDenseCausalReferenceThroughScatteredBlocks) {
  PagedAttentionShape s;
  s.num_q_heads = 6;
  s.num_kv_heads = 2;
  s.head_dim = 16;  // one the AVX-512 path is built for
  s.block_size = 4;
  s.scale = 0.3f;
  for (const bool avx512 : {true, false}) {
  PagedAttentionAllowAvx512(avx512);
  for (size_t window : {0, 5}) {
    s.sliding_window = window;
    const size_t tokens = 11, num_blocks = 9;
    std::mt19937 rng(2);
    std::normal_distribution<float> d;
    std::vector<float> q(tokens * s.num_q_heads * s.head_dim), k(tokens * s.num_kv_heads * s.head_dim),
        v(k.size());
    for (auto* a : {&q, &k, &v}) {
      for (auto& x : *a) x = d(rng);
    }
    const std::vector<int32_t> table = {7, 2, 5};  // positions 0-3 in block 7, 4-7 in 2, 8-10 in 5
    std::vector<int64_t> slots(tokens);
    std::vector<int32_t> pos(tokens), req(tokens, 0);
    for (size_t t = 0; t < tokens; ++t) {
      slots[t] = table[t / 4] * 4 + static_cast<int64_t>(t % 4);
      pos[t] = static_cast<int32_t>(t);
    }
    std::vector<float> kc(num_blocks * s.num_kv_heads * s.block_size * s.head_dim, 0.f), vc(kc.size(), 0.f);
    ThreadPool pool(2);
    const size_t kv_stride = s.num_kv_heads * s.head_dim, q_stride = s.num_q_heads * s.head_dim;
    WriteKvCache(k.data(), kv_stride, v.data(), kv_stride, tokens, slots.data(), s, kc.data(), vc.data(), pool);
    PagedAttentionBatch b{tokens, pos.data(), req.data(), table.data(), table.size()};
    std::vector<float> out(q.size()), ref(q.size());
    PagedAttention(q.data(), q_stride, b, s, kc.data(), vc.data(), out.data(), q_stride, pool);
    CausalAttentionReference(q.data(), k.data(), v.data(), tokens, s, ref.data());
    for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], ref[i], 1e-5f) << "avx512 " << avx512 << " window " << window << " i " << i;
    // A decode of the last token alone gives the same bits as inside the batch.
    PagedAttentionBatch last{1, &pos[tokens - 1], req.data(), table.data(), table.size()};
    std::vector<float> one(q_stride);
    PagedAttention(&q[(tokens - 1) * q_stride], q_stride, last, s, kc.data(), vc.data(), one.data(), q_stride, pool);
    for (size_t i = 0; i < q_stride; ++i) EXPECT_EQ(one[i], out[(tokens - 1) * q_stride + i]);
  }
  }
  PagedAttentionAllowAvx512(true);
}

TEST(PagedAttention, Bf16CacheMatchesReferenceOnRoundedKeysAndValues) {
  PagedAttentionShape s;
  s.kv_dtype = KvDType::kBF16;
  s.num_q_heads = 4;
  s.num_kv_heads = 2;
  s.head_dim = 32;
  s.block_size = 4;
  s.scale = 0.2f;
  const size_t tokens = 10;
  std::mt19937 rng(5);
  std::normal_distribution<float> d;
  std::vector<float> q(tokens * 4 * 32), k(tokens * 2 * 32), v(k.size());
  for (auto* a : {&q, &k, &v}) {
    for (auto& x : *a) x = d(rng);
  }
  std::vector<float> kr = k, vr = v;  // what the cache holds
  for (auto* a : {&kr, &vr}) {
    for (auto& x : *a) x = Bf16ToF32(F32ToBf16(x));
  }
  const std::vector<int32_t> table = {3, 0, 1};
  std::vector<int64_t> slots(tokens);
  std::vector<int32_t> pos(tokens), req(tokens, 0);
  for (size_t t = 0; t < tokens; ++t) {
    slots[t] = table[t / 4] * 4 + static_cast<int64_t>(t % 4);
    pos[t] = static_cast<int32_t>(t);
  }
  std::vector<uint16_t> kc(4 * 2 * 4 * 32), vc(kc.size());
  ThreadPool pool(2);
  WriteKvCache(k.data(), 64, v.data(), 64, tokens, slots.data(), s, kc.data(), vc.data(), pool);
  EXPECT_EQ(kc[(3 * 2 + 0) * 4 * 32 + 5 * 4 + 0], F32ToBf16(k[5]));  // K block 3, head 0, dim 5, slot 0 (transposed)
  EXPECT_EQ(vc[((3 * 2 + 0) * 4 + 0) * 32 + 5], F32ToBf16(v[5]));  // V block 3, head 0, slot 0, dim 5
  std::vector<float> ref(q.size());
  CausalAttentionReference(q.data(), kr.data(), vr.data(), tokens, s, ref.data());
  std::vector<std::vector<float>> outs;
  for (const bool avx512 : {true, false}) {
    PagedAttentionAllowAvx512(avx512);
    PagedAttentionBatch b{tokens, pos.data(), req.data(), table.data(), table.size()};
    std::vector<float> out(q.size());
    PagedAttention(q.data(), 128, b, s, kc.data(), vc.data(), out.data(), 128, pool);
    for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], ref[i], 1e-5f) << "avx512 " << avx512 << " i " << i;
    outs.push_back(out);
  }
  PagedAttentionAllowAvx512(true);
}

// A bf16 cache holds each K and V element rounded by F32ToBf16 at its place
// in the layout, on the AVX-512 and the scalar stores alike; the per-token
// writer fills the same bytes as the batched one, and skips negative slots.
TEST(PagedAttention, KvCacheWritesRoundEachElementInPlace) {
  PagedAttentionShape s;
  s.num_q_heads = 4;
  s.num_kv_heads = 2;
  s.head_dim = 40;  // two full vectors and a tail
  s.block_size = 8;
  s.kv_dtype = KvDType::kBF16;
  const size_t tokens = 5, num_blocks = 3, stride = 2 * s.num_kv_heads * s.head_dim;
  std::mt19937 rng(4);
  std::normal_distribution<float> d;
  std::vector<float> kv(tokens * stride);
  for (auto& x : kv) x = d(rng);
  kv[3] = std::nanf("");
  const std::vector<int64_t> slots = {17, 3, -1, 8, 23};
  const size_t elems = num_blocks * s.num_kv_heads * s.head_dim * s.block_size;
  ThreadPool pool(2);
  for (const Isa isa : {Isa::kAvx512, Isa::kScalar}) {
    if (!test_paths::EnterCpuPath(isa)) continue;  // scalar always runs
    SetMaxIsa(isa);
    std::vector<uint16_t> kc(elems, 0x5555), vc(elems, 0x5555), kt(elems, 0x5555), vt(elems, 0x5555);
    const float* k = kv.data();
    const float* v = kv.data() + s.num_kv_heads * s.head_dim;
    WriteKvCache(k, stride, v, stride, tokens, slots.data(), s, kc.data(), vc.data(), pool);
    for (size_t t = 0; t < tokens; ++t) {
      WriteKvCacheToken(k + t * stride, v + t * stride, slots[t], s, kt.data(), vt.data());
    }
    SetMaxIsa(Isa::kAmx);
    EXPECT_EQ(kc, kt) << IsaName(isa);
    EXPECT_EQ(vc, vt) << IsaName(isa);
    size_t written = 0;
    for (size_t t = 0; t < tokens; ++t) {
      if (slots[t] < 0) continue;
      const size_t block = static_cast<size_t>(slots[t]) / s.block_size, slot = static_cast<size_t>(slots[t]) % s.block_size;
      for (size_t h = 0; h < s.num_kv_heads; ++h) {
        for (size_t e = 0; e < s.head_dim; ++e) {
          // K transposed per block ([head_dim][block_size]), V row-major.
          const size_t base = (block * s.num_kv_heads + h) * s.head_dim * s.block_size;
          ASSERT_EQ(kc[base + e * s.block_size + slot], F32ToBf16(k[t * stride + h * s.head_dim + e]));
          ASSERT_EQ(vc[base + slot * s.head_dim + e], F32ToBf16(v[t * stride + h * s.head_dim + e]));
          written += 2;
        }
      }
    }
    EXPECT_EQ(static_cast<size_t>(std::count(kc.begin(), kc.end(), 0x5555) + std::count(vc.begin(), vc.end(), 0x5555)),
              2 * elems - written);
  }
}

TEST(Activation, SiluMulMatchesReference) {
  const size_t rows = 3, ff = 1000;
  std::vector<float> gu(rows * 2 * ff), out(rows * ff), ref(rows * ff);
  for (size_t i = 0; i < gu.size(); ++i) gu[i] = static_cast<float>(i % 17) * 0.37f - 3.f;
  ThreadPool pool(2);
  SiluMul(gu.data(), rows, ff, out.data(), pool);
  SiluMulReference(gu.data(), rows, ff, ref.data());
  for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], ref[i], 1e-6f * (1.f + std::fabs(ref[i]))) << i;
  // Rows are independent: row 2 alone gives the same bits as inside the batch.
  std::vector<float> one(ff);
  SiluMul(gu.data() + 2 * 2 * ff, 1, ff, one.data(), pool);
  EXPECT_EQ(0, std::memcmp(one.data(), out.data() + 2 * ff, ff * sizeof(float)));
  EXPECT_NEAR(ref[0], -3.f / (1 + std::exp(3.f)) * gu[ff], 1e-6);
}

TEST(Embedding, LookupWidensRows) {
  const std::vector<uint16_t> table = {F32ToBf16(1.f), F32ToBf16(2.f), F32ToBf16(-3.f), F32ToBf16(0.5f)};
  const std::vector<int32_t> ids = {1, 0, 1};
  std::vector<float> out(6);
  ThreadPool pool(1);
  EmbeddingLookup(table.data(), WeightDType::kBF16, 2, 2, ids.data(), ids.size(), out.data(), pool);
  EXPECT_EQ(out, (std::vector<float>{-3.f, 0.5f, 1.f, 2.f, -3.f, 0.5f}));
}

}  // namespace
}  // namespace llmserve::kernels::cpu
