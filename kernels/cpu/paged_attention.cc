#include "kernels/cpu/paged_attention.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace llmserve::kernels::cpu {
namespace {

// q·k with eight lanes combined in a fixed order (vectorises; deterministic).
inline float Dot(const float* a, const float* b, size_t n) {
  float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (size_t l = 0; l < 8; ++l) lane[l] += a[i + l] * b[i + l];
  }
  for (; i < n; ++i) lane[i & 7] += a[i] * b[i];
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

inline size_t SlotOffset(const PagedAttentionShape& s, size_t block, size_t kv_head, size_t slot) {
  return ((block * s.num_kv_heads + kv_head) * s.block_size + slot) * s.head_dim;
}

}  // namespace

void WriteKvCache(const float* k, size_t k_stride, const float* v, size_t v_stride, size_t tokens,
                  const int64_t* slot_mapping, const PagedAttentionShape& s, float* k_cache,
                  float* v_cache, ThreadPool& pool) {
  pool.ParallelFor(tokens, 16, [&](size_t begin, size_t end, size_t) {
    for (size_t t = begin; t < end; ++t) {
      if (slot_mapping[t] < 0) continue;
      const size_t block = static_cast<size_t>(slot_mapping[t]) / s.block_size;
      const size_t slot = static_cast<size_t>(slot_mapping[t]) % s.block_size;
      for (size_t h = 0; h < s.num_kv_heads; ++h) {
        std::memcpy(k_cache + SlotOffset(s, block, h, slot), k + t * k_stride + h * s.head_dim,
                    s.head_dim * sizeof(float));
        std::memcpy(v_cache + SlotOffset(s, block, h, slot), v + t * v_stride + h * s.head_dim,
                    s.head_dim * sizeof(float));
      }
    }
  });
}

void PagedAttention(const float* q, size_t q_stride, const PagedAttentionBatch& b,
                    const PagedAttentionShape& s, const float* k_cache, const float* v_cache,
                    float* out, size_t out_stride, ThreadPool& pool) {
  CHECK_EQ(s.num_q_heads % s.num_kv_heads, 0u);
  const size_t group = s.num_q_heads / s.num_kv_heads;
  const size_t hd = s.head_dim;
  pool.ParallelFor(b.tokens * s.num_kv_heads, 1, [&](size_t begin, size_t end, size_t) {
    thread_local std::vector<float> scores;
    thread_local std::vector<float> acc;
    for (size_t item = begin; item < end; ++item) {
      const size_t t = item / s.num_kv_heads, kvh = item % s.num_kv_heads;
      const size_t pos = static_cast<size_t>(b.positions[t]);
      const size_t first =
          s.sliding_window > 0 && pos + 1 > s.sliding_window ? pos + 1 - s.sliding_window : 0;
      const size_t ctx = pos + 1 - first;
      const int32_t* table = b.block_tables + static_cast<size_t>(b.token_request[t]) * b.block_table_stride;
      scores.resize(group * ctx);
      acc.resize(group * hd);
      // Scores, block by block: each key is loaded once for the whole GQA group.
      for (size_t j = first; j <= pos; ++j) {
        const float* key = k_cache + SlotOffset(s, table[j / s.block_size], kvh, j % s.block_size);
        for (size_t g = 0; g < group; ++g) {
          const float* qh = q + t * q_stride + (kvh * group + g) * hd;
          scores[g * ctx + (j - first)] = Dot(qh, key, hd) * s.scale;
        }
      }
      float inv_sum[64];
      std::vector<float> inv_sum_big;
      float* inv = inv_sum;
      if (group > 64) {
        inv_sum_big.resize(group);
        inv = inv_sum_big.data();
      }
      for (size_t g = 0; g < group; ++g) {
        float* sc = &scores[g * ctx];
        float mx = sc[0];
        for (size_t j = 1; j < ctx; ++j) mx = std::max(mx, sc[j]);
        float sum = 0.f;
        for (size_t j = 0; j < ctx; ++j) {
          sc[j] = std::exp(sc[j] - mx);
          sum += sc[j];
        }
        inv[g] = 1.0f / sum;
      }
      std::fill(acc.begin(), acc.end(), 0.f);
      for (size_t j = first; j <= pos; ++j) {
        const float* val = v_cache + SlotOffset(s, table[j / s.block_size], kvh, j % s.block_size);
        for (size_t g = 0; g < group; ++g) {
          const float p = scores[g * ctx + (j - first)];
          float* a = &acc[g * hd];
          for (size_t d = 0; d < hd; ++d) a[d] += p * val[d];
        }
      }
      for (size_t g = 0; g < group; ++g) {
        float* o = out + t * out_stride + (kvh * group + g) * hd;
        for (size_t d = 0; d < hd; ++d) o[d] = acc[g * hd + d] * inv[g];
      }
    }
  });
}

void CausalAttentionReference(const float* q, const float* k, const float* v, size_t tokens,
                              const PagedAttentionShape& s, float* out) {
  const size_t group = s.num_q_heads / s.num_kv_heads;
  const size_t hd = s.head_dim;
  for (size_t t = 0; t < tokens; ++t) {
    const size_t first =
        s.sliding_window > 0 && t + 1 > s.sliding_window ? t + 1 - s.sliding_window : 0;
    for (size_t h = 0; h < s.num_q_heads; ++h) {
      const size_t kvh = h / group;
      const float* qh = q + (t * s.num_q_heads + h) * hd;
      std::vector<double> sc(t + 1 - first);
      double mx = -INFINITY;
      for (size_t j = first; j <= t; ++j) {
        const float* kj = k + (j * s.num_kv_heads + kvh) * hd;
        double d = 0;
        for (size_t i = 0; i < hd; ++i) d += static_cast<double>(qh[i]) * kj[i];
        sc[j - first] = d * s.scale;
        mx = std::max(mx, sc[j - first]);
      }
      double sum = 0;
      for (auto& x : sc) sum += (x = std::exp(x - mx));
      for (size_t i = 0; i < hd; ++i) {
        double o = 0;
        for (size_t j = first; j <= t; ++j) o += sc[j - first] * v[(j * s.num_kv_heads + kvh) * hd + i];
        out[(t * s.num_q_heads + h) * hd + i] = static_cast<float>(o / sum);
      }
    }
  }
}

}  // namespace llmserve::kernels::cpu
