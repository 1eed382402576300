// The fp8 KV cache (kv_fp8.h, paged_attention.h): the fast element
// conversions equal base/float8.h's bit for bit; a cache holds each element
// divided by its scale and narrowed at its place in the layout; and attention
// over an fp8 cache gives the bits of attention over an f32 cache holding the
// values the fp8 one reads back, on the AVX-512 and the portable kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "base/float8.h"
#include "kernels/cpu/kv_fp8.h"
#include "kernels/cpu/paged_attention.h"
#include "tests/kernels/cpu_path.h"

namespace llmserve::kernels::cpu {
namespace {

// Floats that exercise narrowing: every code's value, the midpoints between
// neighbouring codes (ties) and the floats either side of them, specials, and
// random magnitudes from 2^-30 to 2^20.
std::vector<float> NarrowingCases(float (*widen)(uint8_t), uint8_t largest) {
  std::vector<float> values;
  for (int c = 0; c <= largest; ++c) values.push_back(widen(static_cast<uint8_t>(c)));
  std::vector<float> cases = values;
  for (size_t i = 0; i + 1 < values.size(); ++i) {
    const float mid = (values[i] + values[i + 1]) / 2;
    cases.insert(cases.end(), {mid, std::nextafter(mid, 0.f), std::nextafter(mid, INFINITY)});
  }
  cases.insert(cases.end(), {0.f, INFINITY, std::nanf(""), 1e30f, 3.4e38f, 1e-45f, 1e-40f});
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> exponent(-30.f, 20.f);
  for (int i = 0; i < 200000; ++i) cases.push_back(std::exp2(exponent(rng)));
  const size_t n = cases.size();
  for (size_t i = 0; i < n; ++i) cases.push_back(-cases[i]);
  return cases;
}

TEST(KvFp8, FastNarrowingEqualsTheReference) {
  for (const float x : NarrowingCases(base::Fp8E4M3ToFloat, 0x7e)) {
    ASSERT_EQ(EncodeFp8E4M3(x), base::FloatToFp8E4M3(x)) << "e4m3 of " << x;
  }
  for (const float x : NarrowingCases(base::Fp8E5M2ToFloat, 0x7b)) {
    ASSERT_EQ(EncodeFp8E5M2(x), base::FloatToFp8E5M2(x)) << "e5m2 of " << x;
  }
}

struct Case {
  KvDType dtype;
  float k_scale, v_scale;
};

// What an fp8 cache reads back for x.
float Dequantized(float x, const Case& c, float scale) {
  return c.dtype == KvDType::kFp8E4M3 ? Fp8E4M3Values()[EncodeFp8E4M3(x / scale)] * scale
                                      : Fp8E5M2Values()[EncodeFp8E5M2(x / scale)] * scale;
}

TEST(KvFp8, AttentionReadsWhatAnF32CacheOfTheDequantizedValuesHolds) {
  const bool avx512 = test_paths::EnterCpuPath(Isa::kAvx512);
  for (const Case c : {Case{KvDType::kFp8E4M3, 1.f, 1.f}, Case{KvDType::kFp8E4M3, 0.37f, 2.5f},
                       Case{KvDType::kFp8E5M2, 1.f, 1.f}, Case{KvDType::kFp8E5M2, 3.f, 0.05f}}) {
    SCOPED_TRACE(std::string(c.dtype == KvDType::kFp8E4M3 ? "e4m3" : "e5m2") + " k_scale " +
                 std::to_string(c.k_scale) + " v_scale " + std::to_string(c.v_scale));
    PagedAttentionShape s;
    s.kv_dtype = c.dtype;
    s.k_scale = c.k_scale;
    s.v_scale = c.v_scale;
    s.num_q_heads = 8;
    s.num_kv_heads = 2;
    s.head_dim = 64;
    s.block_size = 16;
    s.scale = 0.125f;
    s.bf16_products = true;  // ignored for fp8: the fp32 kernels run
    const size_t tokens = 45, kv = s.num_kv_heads * s.head_dim, qs = s.num_q_heads * s.head_dim;
    std::mt19937 rng(11);
    std::normal_distribution<float> d(0.f, 3.f);
    std::vector<float> q(tokens * qs), k(tokens * kv), v(tokens * kv);
    for (auto* a : {&q, &k, &v}) {
      for (auto& x : *a) x = d(rng);
    }
    const std::vector<int32_t> table = {5, 0, 3};
    std::vector<int64_t> slots(tokens);
    std::vector<int32_t> pos(tokens), req(tokens, 0);
    for (size_t t = 0; t < tokens; ++t) {
      slots[t] = table[t / 16] * 16 + static_cast<int64_t>(t % 16);
      pos[t] = static_cast<int32_t>(t);
    }
    const size_t elems = 6 * kv * 16;
    std::vector<uint8_t> kc(elems, 0x7f), vc(elems, 0x7f);  // unwritten slots: NaN
    ThreadPool pool(2);
    WriteKvCache(k.data(), kv, v.data(), kv, tokens, slots.data(), s, kc.data(), vc.data(), pool);
    // Token 17 (block 0, slot 1), KV head 1, dimension 5: K transposed per block, V not.
    const float k_x = k[17 * kv + 64 + 5], v_x = v[17 * kv + 64 + 5];
    const auto narrow = c.dtype == KvDType::kFp8E4M3 ? EncodeFp8E4M3 : EncodeFp8E5M2;
    EXPECT_EQ(kc[(0 * 2 + 1) * 64 * 16 + 5 * 16 + 1], narrow(k_x / c.k_scale));
    EXPECT_EQ(vc[((0 * 2 + 1) * 16 + 1) * 64 + 5], narrow(v_x / c.v_scale));

    PagedAttentionShape f32 = s;
    f32.kv_dtype = KvDType::kF32;
    f32.bf16_products = false;
    std::vector<float> kd = k, vd = v;
    for (auto& x : kd) x = Dequantized(x, c, c.k_scale);
    for (auto& x : vd) x = Dequantized(x, c, c.v_scale);
    std::vector<float> kc32(elems, std::nanf("")), vc32(elems, std::nanf(""));
    WriteKvCache(kd.data(), kv, vd.data(), kv, tokens, slots.data(), f32, kc32.data(), vc32.data(), pool);
    PagedAttentionBatch b{tokens, pos.data(), req.data(), table.data(), table.size()};
    std::vector<float> ref(q.size());
    CausalAttentionReference(q.data(), kd.data(), vd.data(), tokens, f32, ref.data());
    for (const bool use_avx512 : {true, false}) {
      if (use_avx512 && !avx512) continue;
      SCOPED_TRACE(use_avx512 ? "avx512" : "portable");
      PagedAttentionAllowAvx512(use_avx512);
      std::vector<float> out(q.size()), out32(q.size());
      PagedAttention(q.data(), qs, b, s, kc.data(), vc.data(), out.data(), qs, pool);
      PagedAttention(q.data(), qs, b, f32, kc32.data(), vc32.data(), out32.data(), qs, pool);
      for (size_t i = 0; i < out.size(); ++i) {
        ASSERT_EQ(out[i], out32[i]) << "output " << i;
        ASSERT_NEAR(out[i], ref[i], 1e-4f * (1 + std::fabs(ref[i]))) << "output " << i;
      }
    }
    PagedAttentionAllowAvx512(true);
  }
}

TEST(KvFp8, ElementSizeIsOneByte) {
  EXPECT_EQ(KvElementSize(KvDType::kFp8E4M3), 1u);
  EXPECT_EQ(KvElementSize(KvDType::kFp8E5M2), 1u);
  EXPECT_EQ(KvElementSize(KvDType::kBF16), 2u);
}

}  // namespace
}  // namespace llmserve::kernels::cpu
