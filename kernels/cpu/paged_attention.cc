#include "kernels/cpu/paged_attention.h"

#include "kernels/cpu/avx512_mask.h"
#include "kernels/cpu/bf16_round_avx512.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/kv_fp8.h"
#include "kernels/cpu/linear.h"
#include "kernels/cpu/paged_attention_item.h"

#include <glog/logging.h>

#include <algorithm>
#include <atomic>
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


// n floats rounded to bf16 (the bits of F32ToBf16) into dst[0], dst[step], ...
__attribute__((target("avx512f,avx512bw,avx512vl"))) void StoreRowBf16Avx512(const float* src, size_t n, uint16_t* dst,
                                                                     size_t step) {
  for (size_t d = 0; d < n; d += 16) {
    const size_t left = n - d;
    const __mmask16 m = LowMask(left);
    const __m256i bf16 = RoundToBf16Avx512(_mm512_maskz_loadu_ps(m, src + d));
    if (step == 1) {
      _mm256_mask_storeu_epi16(dst + d, m, bf16);
      continue;
    }
    alignas(32) uint16_t lanes[16];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), bf16);
    for (size_t l = 0; l < 16 && l < left; ++l) dst[(d + l) * step] = lanes[l];
  }
}

// Writes head_dim floats to cache elements off, off + step, ..., rounding to
// bf16 or (divided by `scale`) to fp8 when the cache is.
void StoreRow(const float* src, const PagedAttentionShape& s, float scale, void* cache, size_t off, size_t step) {
  if (s.kv_dtype == KvDType::kF32) {
    float* dst = static_cast<float*>(cache) + off;
    if (step == 1) {
      std::memcpy(dst, src, s.head_dim * sizeof(float));
      return;
    }
    for (size_t d = 0; d < s.head_dim; ++d) dst[d * step] = src[d];
    return;
  }
  if (IsFp8(s.kv_dtype)) {
    uint8_t* dst = static_cast<uint8_t*>(cache) + off;
    const bool e4m3 = s.kv_dtype == KvDType::kFp8E4M3;
    for (size_t d = 0; d < s.head_dim; ++d) {
      const float x = src[d] / scale;
      dst[d * step] = e4m3 ? EncodeFp8E4M3(x) : EncodeFp8E5M2(x);
    }
    return;
  }
  uint16_t* dst = static_cast<uint16_t*>(cache) + off;
  if (static_cast<int>(ActiveIsa()) >= static_cast<int>(Isa::kAvx512)) {
    StoreRowBf16Avx512(src, s.head_dim, dst, step);
    return;
  }
  for (size_t d = 0; d < s.head_dim; ++d) dst[d * step] = F32ToBf16(src[d]);
}

// The cache vector at elements off, off + step, ... as floats in `tmp` (fp8
// codes times `scale`).
const float* LoadRow(const void* cache, const PagedAttentionShape& s, float scale, size_t off, size_t step,
                     float* tmp) {
  if (s.kv_dtype == KvDType::kF32) {
    const float* src = static_cast<const float*>(cache) + off;
    if (step == 1) return src;
    for (size_t d = 0; d < s.head_dim; ++d) tmp[d] = src[d * step];
    return tmp;
  }
  if (IsFp8(s.kv_dtype)) {
    const uint8_t* src = static_cast<const uint8_t*>(cache) + off;
    const auto& values = s.kv_dtype == KvDType::kFp8E4M3 ? Fp8E4M3Values() : Fp8E5M2Values();
    for (size_t d = 0; d < s.head_dim; ++d) tmp[d] = values[src[d * step]] * scale;
    return tmp;
  }
  const uint16_t* src = static_cast<const uint16_t*>(cache) + off;
  for (size_t d = 0; d < s.head_dim; ++d) tmp[d] = Bf16ToF32(src[d * step]);
  return tmp;
}

}  // namespace

namespace {

// KV head h of one token into its slot.
void WriteKvHead(const float* key, const float* value, size_t block, size_t slot, size_t h,
                 const PagedAttentionShape& s, void* k_cache, void* v_cache) {
  if (internal::TileReadyLayout(s)) {
    const size_t base = internal::TileReadyBlockOffset(s, block, h);
    StoreRow(key, s, s.k_scale, k_cache, base + slot * s.head_dim, 1);
    StoreRow(value, s, s.v_scale, v_cache, base + slot, s.block_size);
  } else {
    StoreRow(key, s, s.k_scale, k_cache, internal::KeyOffset(s, block, h, slot), s.block_size);
    StoreRow(value, s, s.v_scale, v_cache, internal::ValueOffset(s, block, h, slot), 1);
  }
}

}  // namespace

void WriteKvCacheToken(const float* k, const float* v, int64_t slot, const PagedAttentionShape& s, void* k_cache,
                       void* v_cache) {
  if (slot < 0) return;
  const size_t block = static_cast<size_t>(slot) / s.block_size, offset = static_cast<size_t>(slot) % s.block_size;
  for (size_t h = 0; h < s.num_kv_heads; ++h) {
    WriteKvHead(k + h * s.head_dim, v + h * s.head_dim, block, offset, h, s, k_cache, v_cache);
  }
}

void WriteKvCache(const float* k, size_t k_stride, const float* v, size_t v_stride, size_t tokens,
                  const int64_t* slot_mapping, const PagedAttentionShape& s, void* k_cache,
                  void* v_cache, ThreadPool& pool) {
  // Over (token, KV head) pairs: a decode step's few tokens still spread over
  // the threads (each pair writes its own cache elements).
  const size_t heads = s.num_kv_heads;
  pool.ParallelFor(tokens * heads, 32, [&](size_t begin, size_t end, size_t) {
    for (size_t i = begin; i < end; ++i) {
      const size_t t = i / heads, h = i % heads;
      if (slot_mapping[t] < 0) continue;
      const size_t slot = static_cast<size_t>(slot_mapping[t]);
      WriteKvHead(k + t * k_stride + h * s.head_dim, v + t * v_stride + h * s.head_dim, slot / s.block_size,
                  slot % s.block_size, h, s, k_cache, v_cache);
    }
  });
}

namespace {

std::atomic<bool> g_allow_avx512{true};
std::atomic<bool> g_allow_bf16_products{true};

// Portable implementation of one query token's group (the reference order
// of operations).
void AttendGeneric(const internal::AttentionTile& t, size_t i, const PagedAttentionShape& s, size_t group,
                   const void* k_cache, const void* v_cache, float* scores, float* acc, float* row) {
  const size_t hd = s.head_dim, first = t.first[i], last = t.last[i], ctx = last - first + 1;
  const float* q = t.q[i];
  for (size_t j = first; j <= last; ++j) {
    const size_t block = static_cast<size_t>(t.table[j / s.block_size]);
    const float* key =
        LoadRow(k_cache, s, s.k_scale, internal::KeyOffset(s, block, t.kv_head, j % s.block_size), s.block_size, row);
    for (size_t g = 0; g < group; ++g) scores[g * ctx + (j - first)] = Dot(q + g * hd, key, hd) * s.scale;
  }
  std::fill(acc, acc + group * hd, 0.f);
  for (size_t g = 0; g < group; ++g) {
    float* sc = scores + g * ctx;
    float mx = sc[0];
    for (size_t j = 1; j < ctx; ++j) mx = std::max(mx, sc[j]);
    float sum = 0.f;
    for (size_t j = 0; j < ctx; ++j) {
      sc[j] = std::exp(sc[j] - mx);
      sum += sc[j];
    }
    for (size_t j = first; j <= last; ++j) {
      const float* val = LoadRow(
          v_cache, s, s.v_scale,
          internal::ValueOffset(s, static_cast<size_t>(t.table[j / s.block_size]), t.kv_head, j % s.block_size), 1, row);
      const float p = sc[j - first];
      float* a = acc + g * hd;
      for (size_t d = 0; d < hd; ++d) a[d] += p * val[d];
    }
    const float inv = 1.0f / sum;
    for (size_t d = 0; d < hd; ++d) t.out[i][g * hd + d] = acc[g * hd + d] * inv;
  }
}

}  // namespace

void PagedAttentionAllowAvx512(bool allow) { g_allow_avx512.store(allow); }
void PagedAttentionAllowBf16Products(bool allow) { g_allow_bf16_products.store(allow); }

bool internal::TileReadyLayout(const PagedAttentionShape& s) {
  return g_allow_avx512.load() && g_allow_bf16_products.load() && internal::AmxAttentionUsable(s);
}

void PagedAttention(const float* q, size_t q_stride, const PagedAttentionBatch& b,
                    const PagedAttentionShape& s, const void* k_cache, const void* v_cache,
                    float* out, size_t out_stride, ThreadPool& pool) {
  CHECK_EQ(s.num_q_heads % s.num_kv_heads, 0u);
  const size_t group = s.num_q_heads / s.num_kv_heads;
  const size_t hd = s.head_dim;
  const bool avx512 = g_allow_avx512.load();
  const bool dpbf16 = avx512 && g_allow_bf16_products.load() && internal::Dpbf16AttentionUsable(s);
  if (internal::TileReadyLayout(s)) {
    internal::PagedAttentionAmx(q, q_stride, b, s, k_cache, v_cache, out, out_stride, pool);
    return;
  }
  // Tiles: runs of up to kMaxTileTokens consecutive tokens of one request.
  // Which tokens share a tile never changes a token's result.
  std::vector<std::pair<size_t, size_t>> tiles;  // [begin, end) token ranges
  size_t keys = 0;
  for (size_t t = 0; t < b.tokens;) {
    size_t e = t + 1;
    while (e < b.tokens && e - t < internal::kMaxTileTokens && b.token_request[e] == b.token_request[t]) ++e;
    tiles.emplace_back(t, e);
    t = e;
  }
  for (size_t t = 0; t < b.tokens; ++t) keys += static_cast<size_t>(b.positions[t]) + 1;
  // Items are (kv head, tile); threads claim them one at a time. Small
  // batches (short decodes) run on the calling thread: waking the pool would
  // cost more than the work.
  const size_t items = tiles.size() * s.num_kv_heads;
  const size_t chunk = keys * s.num_q_heads * hd < (size_t{1} << 18) ? items : 1;
  pool.ParallelForChunks(items, chunk, [&](size_t begin, size_t end, size_t) {
    thread_local std::vector<float> scores;
    thread_local std::vector<float> acc;
    for (size_t index = begin; index < end; ++index) {
      const size_t kvh = index / tiles.size();
      const auto [tb, te] = tiles[index % tiles.size()];
      internal::AttentionTile tile;
      tile.kv_head = kvh;
      tile.tokens = te - tb;
      tile.table = b.block_tables + static_cast<size_t>(b.token_request[tb]) * b.block_table_stride;
      size_t longest = 0;
      for (size_t i = 0; i < tile.tokens; ++i) {
        const size_t t = tb + i;
        tile.last[i] = static_cast<size_t>(b.positions[t]);
        tile.first[i] = s.sliding_window > 0 && tile.last[i] + 1 > s.sliding_window
                            ? tile.last[i] + 1 - s.sliding_window
                            : 0;
        tile.q[i] = q + t * q_stride + kvh * group * hd;
        tile.out[i] = out + t * out_stride + kvh * group * hd;
        longest = std::max(longest, tile.last[i] - tile.first[i] + 1);
      }
      if (scores.size() < tile.tokens * group * longest) scores.resize(tile.tokens * group * longest);
      if (dpbf16 && internal::AttendTileDpbf16(tile, s, group, k_cache, v_cache, scores.data())) continue;
      if (avx512 && internal::AttendTileAvx512(tile, s, group, k_cache, v_cache, scores.data())) continue;
      if (acc.size() < (group + 1) * hd) acc.resize((group + 1) * hd);
      for (size_t i = 0; i < tile.tokens; ++i) {
        AttendGeneric(tile, i, s, group, k_cache, v_cache, scores.data(), acc.data(), acc.data() + group * hd);
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
