// AVX-512 attention for one (token, KV head) item. Numerics: every reduction
// (q·k over head_dim, the softmax sum, p·V over positions) runs in a fixed
// order that depends only on head_dim and the item's context, so results are
// as batch- and chunk-invariant as the generic path.
// GCC 12 reports its own _mm512_reduce_* intrinsics as maybe-uninitialized
// (they start from _mm256_undefined_*); the values are fully defined.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cmath>

#include "kernels/cpu/paged_attention_item.h"

namespace llmserve::kernels::cpu::internal {

bool HaveAvx512() {
  static const bool have = __builtin_cpu_supports("avx512f");
  return have;
}

namespace {

// exp(x) for x ≤ 0 (Cody–Waite reduction, degree-6 polynomial; ~2 ulp),
// flushing to 0 below -87.
__attribute__((target("avx512f"))) inline __m512 Exp(__m512 x) {
  const __m512 lo = _mm512_set1_ps(-87.0f);
  const __mmask16 tiny = _mm512_cmp_ps_mask(x, lo, _CMP_LT_OQ);
  x = _mm512_max_ps(x, lo);
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(_mm512_mul_ps(p, r), r, _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_maskz_mov_ps(static_cast<__mmask16>(~tiny), _mm512_scalef_ps(p, n));
}

// 16 cache elements at element `off` as floats (bf16 widened by a shift).
template <bool BF16>
__attribute__((target("avx512f"))) inline __m512 LoadCache(const void* cache, size_t off) {
  if constexpr (BF16) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(static_cast<const uint16_t*>(cache) + off));
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  } else {
    return _mm512_loadu_ps(static_cast<const float*>(cache) + off);
  }
}

template <int NV, bool BF16>  // NV = head_dim / 16
__attribute__((target("avx512f"))) void Attend(const AttentionItem& it, const PagedAttentionShape& s, size_t group,
                                               const void* k_cache, const void* v_cache, float* scores) {
  constexpr size_t hd = 16 * NV;
  const size_t ctx = it.last - it.first + 1;
  const __m512 scale = _mm512_set1_ps(s.scale);
  // Scores: each key row is loaded once for the whole group.
  for (size_t j = it.first; j <= it.last; ++j) {
    const size_t key = CacheOffset(s, it.table[j / s.block_size], it.kv_head, j % s.block_size);
    __m512 k[NV];
    for (int v = 0; v < NV; ++v) k[v] = LoadCache<BF16>(k_cache, key + 16 * v);
    for (size_t g = 0; g < group; ++g) {
      const float* q = it.q + g * hd;
      __m512 acc = _mm512_mul_ps(_mm512_loadu_ps(q), k[0]);
      for (int v = 1; v < NV; ++v) acc = _mm512_fmadd_ps(_mm512_loadu_ps(q + 16 * v), k[v], acc);
      scores[g * ctx + (j - it.first)] = _mm512_reduce_add_ps(_mm512_mul_ps(acc, scale));
    }
  }
  // Softmax numerators in place; 1 / sum per head.
  float inv_sum[64];
  for (size_t g = 0; g < group; ++g) {
    float* sc = scores + g * ctx;
    __m512 mx = _mm512_set1_ps(-INFINITY);
    size_t j = 0;
    for (; j + 16 <= ctx; j += 16) mx = _mm512_max_ps(mx, _mm512_loadu_ps(sc + j));
    float m = _mm512_reduce_max_ps(mx);
    for (; j < ctx; ++j) m = std::max(m, sc[j]);
    const __m512 vm = _mm512_set1_ps(m);
    __m512 sum = _mm512_setzero_ps();
    for (j = 0; j + 16 <= ctx; j += 16) {
      const __m512 e = Exp(_mm512_sub_ps(_mm512_loadu_ps(sc + j), vm));
      _mm512_storeu_ps(sc + j, e);
      sum = _mm512_add_ps(sum, e);
    }
    if (j < ctx) {
      const __mmask16 m16 = static_cast<__mmask16>((1u << (ctx - j)) - 1);
      const __m512 e = _mm512_maskz_mov_ps(m16, Exp(_mm512_sub_ps(_mm512_maskz_loadu_ps(m16, sc + j), vm)));
      _mm512_mask_storeu_ps(sc + j, m16, e);
      sum = _mm512_add_ps(sum, e);
    }
    inv_sum[g] = 1.0f / _mm512_reduce_add_ps(sum);
  }
  // p·V: each value row loaded once for the group; accumulators per head.
  for (size_t g0 = 0; g0 < group; g0 += 2) {
    const size_t gn = std::min<size_t>(2, group - g0);
    __m512 acc[2][NV];
    for (size_t g = 0; g < 2; ++g) {
      for (int v = 0; v < NV; ++v) acc[g][v] = _mm512_setzero_ps();
    }
    for (size_t j = it.first; j <= it.last; ++j) {
      const size_t val = CacheOffset(s, it.table[j / s.block_size], it.kv_head, j % s.block_size);
      __m512 vv[NV];
      for (int v = 0; v < NV; ++v) vv[v] = LoadCache<BF16>(v_cache, val + 16 * v);
      for (size_t g = 0; g < gn; ++g) {
        const __m512 p = _mm512_set1_ps(scores[(g0 + g) * ctx + (j - it.first)]);
        for (int v = 0; v < NV; ++v) acc[g][v] = _mm512_fmadd_ps(p, vv[v], acc[g][v]);
      }
    }
    for (size_t g = 0; g < gn; ++g) {
      const __m512 inv = _mm512_set1_ps(inv_sum[g0 + g]);
      for (int v = 0; v < NV; ++v) _mm512_storeu_ps(it.out + (g0 + g) * hd + 16 * v, _mm512_mul_ps(acc[g][v], inv));
    }
  }
}

}  // namespace

template <bool BF16>
bool Dispatch(const AttentionItem& item, const PagedAttentionShape& s, size_t group, const void* k_cache,
              const void* v_cache, float* scores) {
  switch (s.head_dim) {
    case 16: Attend<1, BF16>(item, s, group, k_cache, v_cache, scores); return true;
    case 32: Attend<2, BF16>(item, s, group, k_cache, v_cache, scores); return true;
    case 64: Attend<4, BF16>(item, s, group, k_cache, v_cache, scores); return true;
    case 128: Attend<8, BF16>(item, s, group, k_cache, v_cache, scores); return true;
    case 256: Attend<16, BF16>(item, s, group, k_cache, v_cache, scores); return true;
    default: return false;
  }
}

bool AttendAvx512(const AttentionItem& item, const PagedAttentionShape& s, size_t group, const void* k_cache,
                  const void* v_cache, float* scores) {
  if (!HaveAvx512() || group > 64) return false;
  return s.kv_dtype == KvDType::kBF16 ? Dispatch<true>(item, s, group, k_cache, v_cache, scores)
                                      : Dispatch<false>(item, s, group, k_cache, v_cache, scores);
}

}  // namespace llmserve::kernels::cpu::internal
