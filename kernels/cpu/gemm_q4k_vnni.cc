// AVX-512 VNNI kernel for Q4_K and Q5_K weights (gemm_q4k.h), on ymm
// registers. The weights are in InterleaveForVnni's order: a 32-byte chunk
// holds 4 consecutive quant bytes of each of a group's 8 rows, so vpdpbusd of
// its nibbles (unsigned) with 4 activations (signed, broadcast) adds 4
// products to each row's lane: one int32 lane per output row, no horizontal
// sums. Each sub-block's lane sums are multiplied by the 8 rows' scales
// (vpmulld) into isum. The integer sums are exact, so the results equal the
// scalar and AVX2 kernels' bit for bit. Up to kTile activation rows share each
// unpacked chunk.
#include <cstring>
#include <vector>

#include "kernels/cpu/avx512_vnni_target.h"
#include "kernels/cpu/gemm_q4k.h"
#include "kernels/cpu/gemm_q4k_min_sums.h"
#include "kernels/cpu/group_rows_avx2.h"

namespace llmserve::kernels::cpu::q4k {

void InterleaveForVnni(Format f, uint8_t* packed, size_t rows, size_t cols) {
  const Layout l = LayoutOf(f);
  const size_t group_blocks = (rows + kGroupRows - 1) / kGroupRows * (cols / kBlock);
  std::vector<uint8_t> old(l.group_block_bytes);
  for (size_t gb = 0; gb < group_blocks; ++gb) {
    uint8_t* block = packed + gb * l.group_block_bytes;
    std::memcpy(old.data(), block, old.size());
    for (size_t j = 0; j < kGroupRows; ++j) {
      for (size_t s = 0; s < kSubBlocks; ++s) block[l.scales_at + s * kGroupRows + j] = old[l.scales_at + j * kSubBlocks + s];
      for (size_t p = 0; p < 4; ++p) {
        for (size_t t = 0; t < 8; ++t) {
          std::memcpy(block + l.quants_at + ((p * 8 + t) * kGroupRows + j) * 4,
                      old.data() + l.quants_at + j * kBlock / 2 + 32 * p + 4 * t, 4);
        }
      }
      if (f == Format::kQ5_K) {
        for (size_t t = 0; t < 8; ++t)
          std::memcpy(block + l.qh_at + (t * kGroupRows + j) * 4, old.data() + l.qh_at + j * 32 + 4 * t, 4);
      }
    }
  }
}

namespace {

static_assert(kGroupRows == 8, "one ymm lane per output row of a group");

constexpr size_t kTile = 4;  // activation rows sharing each unpacked chunk

// 16 in each byte whose qh bit s is set (the fifth bit of sub-block s's quant).
LLMSERVE_AVX512_VNNI_INLINE __m256i FifthBits(__m256i qh, size_t s) {
  const __m256i bit = _mm256_set1_epi8(static_cast<char>(1 << s));
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, bit), bit), _mm256_set1_epi8(16));
}

// Lane j = isum of weight row j of the group block `gb`, for each activation
// row of the tile (`xq`: their quants in this block).
template <Format F, size_t R>
LLMSERVE_AVX512_VNNI_INLINE void IntSums(const uint8_t* gb, const int8_t* const xq[R], __m256i isum[R]) {
  constexpr Layout kL = LayoutOf(F);
  const __m256i low = _mm256_set1_epi8(0x0f);
  for (size_t r = 0; r < R; ++r) isum[r] = _mm256_setzero_si256();
#pragma GCC unroll 4
  for (size_t p = 0; p < 4; ++p) {
    __m256i lo_sum[R], hi_sum[R];
    for (size_t r = 0; r < R; ++r) lo_sum[r] = hi_sum[r] = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (size_t t = 0; t < 8; ++t) {
      const __m256i c = _mm256_load_si256(reinterpret_cast<const __m256i*>(gb + kL.quants_at + (p * 8 + t) * 32));
      __m256i lo = _mm256_and_si256(c, low), hi = _mm256_and_si256(_mm256_srli_epi16(c, 4), low);
      if constexpr (F == Format::kQ5_K) {
        const __m256i qh = _mm256_load_si256(reinterpret_cast<const __m256i*>(gb + kL.qh_at + t * 32));
        lo = _mm256_or_si256(lo, FifthBits(qh, 2 * p));
        hi = _mm256_or_si256(hi, FifthBits(qh, 2 * p + 1));
      }
      for (size_t r = 0; r < R; ++r) {
        lo_sum[r] = _mm256_dpbusd_epi32(lo_sum[r], lo, Broadcast4(xq[r] + 64 * p + 4 * t));
        hi_sum[r] = _mm256_dpbusd_epi32(hi_sum[r], hi, Broadcast4(xq[r] + 64 * p + 32 + 4 * t));
      }
    }
    const __m256i sc_lo = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(gb + kL.scales_at + 2 * p * kGroupRows)));
    const __m256i sc_hi =
        _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(gb + kL.scales_at + (2 * p + 1) * kGroupRows)));
    for (size_t r = 0; r < R; ++r) {
      isum[r] = _mm256_add_epi32(isum[r], _mm256_mullo_epi32(lo_sum[r], sc_lo));
      isum[r] = _mm256_add_epi32(isum[r], _mm256_mullo_epi32(hi_sum[r], sc_hi));
    }
  }
}

// Activation rows [i, i + R) against group g.
template <Format F, size_t R>
LLMSERVE_AVX512_VNNI void Tile(const Problem& p, size_t g, size_t i) {
  constexpr Layout kL = LayoutOf(F);
  const size_t blocks = p.k / kBlock;
  __m256 acc[R];
  for (size_t r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
  for (size_t b = 0; b < blocks; ++b) {
    const uint8_t* gb = p.w + (g * blocks + b) * kL.group_block_bytes;
    PrefetchGroupBlockAhead(gb, kL.group_block_bytes);
    const int8_t* xq[R];
    for (size_t r = 0; r < R; ++r) xq[r] = p.xq + (i + r) * p.k + b * kBlock;
    __m256i isum[R];
    IntSums<F, R>(gb, xq, isum);
    const __m256 dw = _mm256_load_ps(reinterpret_cast<const float*>(gb + kL.d_at));
    const __m256 dmin = _mm256_load_ps(reinterpret_cast<const float*>(gb + kL.dmin_at));
    for (size_t r = 0; r < R; ++r) {
      const __m256 dx = _mm256_set1_ps(p.xd[(i + r) * blocks + b]);
      const __m256i msum = MinSums<F>(gb, p.xsum + ((i + r) * blocks + b) * kSums);
      acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[r]), _mm256_mul_ps(dw, dx), acc[r]);
      acc[r] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(msum), _mm256_mul_ps(dmin, dx), acc[r]);
    }
  }
  for (size_t r = 0; r < R; ++r) StoreGroupLanes(p.y + (i + r) * p.ldy + g * kGroupRows, p.n - g * kGroupRows, acc[r]);
}

template <Format F>
LLMSERVE_AVX512_VNNI void Groups(const Problem& p, size_t group_begin, size_t group_end) {
  for (size_t g = group_begin; g < group_end; ++g) {
    size_t i = 0;
    for (; i + kTile <= p.m; i += kTile) Tile<F, kTile>(p, g, i);
    for (; i + 2 <= p.m; i += 2) Tile<F, 2>(p, g, i);
    for (; i < p.m; ++i) Tile<F, 1>(p, g, i);
  }
}

}  // namespace

LLMSERVE_AVX512_VNNI void GemmVnni(const Problem& p, size_t group_begin, size_t group_end) {
  if (p.format == Format::kQ5_K) return Groups<Format::kQ5_K>(p, group_begin, group_end);
  Groups<Format::kQ4_K>(p, group_begin, group_end);
}

}  // namespace llmserve::kernels::cpu::q4k
