// PagedAttention with bf16 products, on each kernel this CPU has (AMX tiles,
// vdpbf16ps): close to the double precision reference on bf16-rounded q/k/v,
// and bitwise the same whatever the chunking of the prompt, the batch around
// a request or the thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/linear.h"
#include "kernels/cpu/paged_attention.h"
#include "tests/kernels/cpu_path.h"

namespace llmserve::kernels::cpu {
namespace {

// Runs `body` once per bf16-product attention kernel this CPU has, with the
// ISA capped so that PagedAttention picks that kernel: AMX (Isa::kAmx), then
// vdpbf16ps (Isa::kAvx512Bf16, which an AMX CPU also runs when capped).
template <typename Body>
void ForEachBf16Kernel(Body body) {
  bool any = false;
  for (const Isa cap : {Isa::kAmx, Isa::kAvx512Bf16}) {
    if (!test_paths::EnterCpuPath(cap)) continue;
    any = true;
    SetMaxIsa(cap);
    SCOPED_TRACE(IsaName(cap));
    body();
    SetMaxIsa(Isa::kAmx);
    if (::testing::Test::HasFatalFailure()) return;
  }
  if (!any) GTEST_SKIP() << test_paths::CpuPathSkipReason(Isa::kAvx512Bf16) << " (nor amx)";
}

struct Problem {
  PagedAttentionShape s;
  size_t tokens = 0;
  std::vector<float> q, k, v;  // [tokens × heads × head_dim]
  std::vector<int32_t> table;  // one request's blocks, scattered
  size_t num_blocks = 0;

  Problem(KvDType dtype, size_t window, size_t n, size_t group, size_t head_dim, uint32_t seed, size_t block = 32)
      : tokens(n) {
    s.kv_dtype = dtype;
    s.num_kv_heads = 2;
    s.num_q_heads = 2 * group;
    s.head_dim = head_dim;
    s.block_size = block;
    s.scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
    s.sliding_window = window;
    s.bf16_products = true;
    std::mt19937 rng(seed);
    std::normal_distribution<float> d;
    q.resize(n * s.num_q_heads * head_dim);
    k.resize(n * s.num_kv_heads * head_dim);
    v.resize(k.size());
    for (auto* a : {&q, &k, &v}) {
      for (auto& x : *a) x = 2.0f * d(rng);
    }
    const size_t blocks = (n + block - 1) / block;
    num_blocks = 2 * blocks + 3;
    for (size_t i = 0; i < blocks; ++i) table.push_back(static_cast<int32_t>(num_blocks - 1 - 2 * i));
  }
  size_t q_stride() const { return s.num_q_heads * s.head_dim; }
  size_t kv_stride() const { return s.num_kv_heads * s.head_dim; }
  size_t cache_elems() const { return num_blocks * s.num_kv_heads * s.block_size * s.head_dim; }

  // Attention output of every token when the prompt runs in `chunks`
  // (sizes summing to tokens): each chunk writes its K/V into a cache whose
  // unwritten slots hold NaN, then attends.
  std::vector<float> Run(const std::vector<size_t>& chunks, ThreadPool& pool) const {
    const size_t es = KvElementSize(s.kv_dtype);
    std::vector<uint8_t> kc(cache_elems() * es), vc(kc.size());
    if (s.kv_dtype == KvDType::kF32) {
      std::vector<float> nan(cache_elems(), std::nanf(""));
      std::memcpy(kc.data(), nan.data(), kc.size());
      std::memcpy(vc.data(), nan.data(), vc.size());
    } else {
      std::memset(kc.data(), 0xff, kc.size());  // bf16 NaN
      std::memset(vc.data(), 0xff, vc.size());
    }
    std::vector<float> out(tokens * q_stride(), -1.f);
    size_t begin = 0;
    for (size_t c : chunks) {
      std::vector<int64_t> slots(c);
      std::vector<int32_t> pos(c), req(c, 0);
      for (size_t i = 0; i < c; ++i) {
        const size_t t = begin + i;
        const size_t bs = s.block_size;
        slots[i] = table[t / bs] * static_cast<int64_t>(bs) + static_cast<int64_t>(t % bs);
        pos[i] = static_cast<int32_t>(t);
      }
      WriteKvCache(&k[begin * kv_stride()], kv_stride(), &v[begin * kv_stride()], kv_stride(), c, slots.data(), s,
                   kc.data(), vc.data(), pool);
      PagedAttentionBatch b{c, pos.data(), req.data(), table.data(), table.size()};
      PagedAttention(&q[begin * q_stride()], q_stride(), b, s, kc.data(), vc.data(), &out[begin * q_stride()],
                     q_stride(), pool);
      begin += c;
    }
    return out;
  }
};

TEST(PagedAttentionBf16, MatchesReferenceOnBf16RoundedOperands) {
  ForEachBf16Kernel([] {
    ThreadPool pool(2);
    for (const KvDType dtype : {KvDType::kF32, KvDType::kBF16}) {
      for (const size_t window : {size_t{0}, size_t{45}}) {
        for (const auto& [group, block] : std::vector<std::pair<size_t, size_t>>{{1, 32}, {2, 32}, {3, 32}, {2, 64}}) {
          Problem p(dtype, window, 100, group, 64, 3 + static_cast<uint32_t>(group), block);
          const auto out = p.Run({p.tokens}, pool);
          std::vector<float> qr = p.q, kr = p.k, vr = p.v;
          for (auto* a : {&qr, &kr, &vr}) {
            for (auto& x : *a) x = Bf16ToF32(F32ToBf16(x));
          }
          std::vector<float> ref(out.size());
          CausalAttentionReference(qr.data(), kr.data(), vr.data(), p.tokens, p.s, ref.data());
          // The softmax numerators are rounded to bf16 (relative 2^-9): the
          // output, a weighted mean of values of size ~2, moves by ~1e-2 at most.
          double worst = 0;
          for (size_t i = 0; i < out.size(); ++i) worst = std::max(worst, std::fabs(static_cast<double>(out[i]) - ref[i]));
          EXPECT_LT(worst, 2e-2) << "dtype " << static_cast<int>(dtype) << " window " << window << " group " << group
                                 << " block " << block;
          // And it did round: fp32 products give other bits.
          PagedAttentionShape f32 = p.s;
          f32.bf16_products = false;
          Problem pf = p;
          pf.s = f32;
          EXPECT_NE(pf.Run({p.tokens}, pool), out);
        }
      }
    }
  });
}

// A bf16 cache and an fp32 cache holding the same bf16-exact values build the
// same K/V tiles (the two conversions differ), so they give the same bits.
TEST(PagedAttentionBf16, Bf16CacheGivesTheBitsOfAnF32CacheOfTheSameValues) {
  ForEachBf16Kernel([] {
    ThreadPool pool(2);
    for (const size_t head_dim : {size_t{64}, size_t{128}}) {
      for (const auto& [n, block] : std::vector<std::pair<size_t, size_t>>{{1, 32}, {17, 32}, {45, 32}, {70, 64}}) {
        Problem p32(KvDType::kF32, 0, n, 2, head_dim, 11 + static_cast<uint32_t>(n), block);
        for (auto* a : {&p32.k, &p32.v}) {
          for (auto& x : *a) x = Bf16ToF32(F32ToBf16(x));
        }
        Problem p16 = p32;
        p16.s.kv_dtype = KvDType::kBF16;
        std::vector<size_t> decode(n, 1);
        EXPECT_EQ(p16.Run({n}, pool), p32.Run({n}, pool)) << "prompt, head_dim " << head_dim << " tokens " << n;
        EXPECT_EQ(p16.Run(decode, pool), p32.Run(decode, pool)) << "decode, head_dim " << head_dim << " tokens " << n;
      }
    }
  });
}

TEST(PagedAttentionBf16, ChunkingAndDecodeGiveTheSameBits) {
  ForEachBf16Kernel([] {
    ThreadPool pool(2), one(1);
    for (const KvDType dtype : {KvDType::kF32, KvDType::kBF16}) {
      for (const auto& [window, block] : std::vector<std::pair<size_t, size_t>>{{0, 32}, {40, 32}, {0, 64}, {70, 96}}) {
        Problem p(dtype, window, 150, 2, 128, 11, block);
        const auto whole = p.Run({150}, pool);
        for (const auto& chunks : std::vector<std::vector<size_t>>{
                 {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 140}, {5, 37, 108}, {31, 33, 1, 85}, {149, 1}, {64, 64, 22}}) {
          EXPECT_EQ(p.Run(chunks, pool), whole) << "dtype " << static_cast<int>(dtype) << " window " << window
                                                << " block " << block << " first chunk " << chunks[0];
        }
        // Every token decoded alone, on one thread.
        std::vector<size_t> singles(150, 1);
        EXPECT_EQ(p.Run(singles, one), whole) << "decode, dtype " << static_cast<int>(dtype) << " window " << window
                                              << " block " << block;
      }
    }
  });
}

TEST(PagedAttentionBf16, RequestBitsDoNotDependOnTheBatch) {
  ForEachBf16Kernel([] {
    ThreadPool pool(2);
    Problem p(KvDType::kF32, 0, 70, 2, 64, 21);
    const auto alone = p.Run({70}, pool);
    // The same 70 tokens in a batch with a 40-token request before them, both
    // in one call (the other request reuses blocks of the cache past p's).
    std::vector<float> kc(p.cache_elems(), 0.f), vc(kc.size(), 0.f);
    const std::vector<int32_t> other_table = {1, 3};  // blocks p's table does not use (p uses 8, 6, 4)
    const size_t other = 40, total = other + p.tokens;
    std::vector<float> q(total * p.q_stride()), k(total * p.kv_stride()), v(k.size());
    std::mt19937 rng(5);
    std::normal_distribution<float> d;
    for (size_t i = 0; i < other * p.q_stride(); ++i) q[i] = d(rng);
    for (size_t i = 0; i < other * p.kv_stride(); ++i) k[i] = d(rng), v[i] = d(rng);
    std::copy(p.q.begin(), p.q.end(), q.begin() + static_cast<long>(other * p.q_stride()));
    std::copy(p.k.begin(), p.k.end(), k.begin() + static_cast<long>(other * p.kv_stride()));
    std::copy(p.v.begin(), p.v.end(), v.begin() + static_cast<long>(other * p.kv_stride()));
    std::vector<int64_t> slots(total);
    std::vector<int32_t> pos(total), req(total);
    for (size_t t = 0; t < total; ++t) {
      const bool mine = t >= other;
      const size_t j = mine ? t - other : t;
      const auto& table = mine ? p.table : other_table;
      slots[t] = table[j / 32] * 32 + static_cast<int64_t>(j % 32);
      pos[t] = static_cast<int32_t>(j);
      req[t] = mine ? 1 : 0;
    }
    std::vector<int32_t> tables(2 * 3, 0);
    std::copy(other_table.begin(), other_table.end(), tables.begin());
    std::copy(p.table.begin(), p.table.end(), tables.begin() + 3);
    WriteKvCache(k.data(), p.kv_stride(), v.data(), p.kv_stride(), total, slots.data(), p.s, kc.data(), vc.data(), pool);
    PagedAttentionBatch b{total, pos.data(), req.data(), tables.data(), 3};
    std::vector<float> out(total * p.q_stride());
    PagedAttention(q.data(), p.q_stride(), b, p.s, kc.data(), vc.data(), out.data(), p.q_stride(), pool);
    EXPECT_EQ(std::vector<float>(out.begin() + static_cast<long>(other * p.q_stride()), out.end()), alone);
  });
}

}  // namespace
}  // namespace llmserve::kernels::cpu
