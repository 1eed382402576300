// AVX-512 VNNI kernel for Q6_K weights (gemm_q6k.h), on ymm registers. The
// weights are in InterleaveForVnni's order: a 32-byte chunk holds 4
// consecutive ql (or qh) bytes of each of a group's 8 rows, from which 4
// vectors of quants (0..63, unsigned) for 4 consecutive positions per row
// follow; vpdpbusd of each with 4 activations (signed, broadcast) adds 4
// products to each row's lane: no horizontal sums. A 16-wide sub-block's lane
// sums, less 32 times its activation sum, are multiplied by the 8 rows'
// scales (vpmulld) into isum. The integer sums are exact, so the results equal
// the scalar and AVX2 kernels' bit for bit. Up to kTile activation rows share
// each unpacked chunk.
#include <cstring>
#include <vector>

#include "kernels/cpu/avx512_vnni_target.h"
#include "kernels/cpu/gemm_q6k.h"
#include "kernels/cpu/group_rows_avx2.h"

namespace llmserve::kernels::cpu::q6k {

void InterleaveForVnni(uint8_t* packed, size_t rows, size_t cols) {
  const size_t group_blocks = (rows + kGroupRows - 1) / kGroupRows * (cols / kBlock);
  std::vector<uint8_t> old(kGroupBlockBytes);
  for (size_t gb = 0; gb < group_blocks; ++gb) {
    uint8_t* block = packed + gb * kGroupBlockBytes;
    std::memcpy(old.data(), block, old.size());
    for (size_t j = 0; j < kGroupRows; ++j) {
      for (size_t s = 0; s < kSubBlocks; ++s) block[kScalesAt + s * kGroupRows + j] = old[kScalesAt + j * kSubBlocks + s];
      for (size_t h = 0; h < 2; ++h) {
        for (size_t u = 0; u < 8; ++u) {
          for (size_t a = 0; a < 2; ++a) {
            std::memcpy(block + kQlAt + (((h * 2 + a) * 8 + u) * kGroupRows + j) * 4,
                        old.data() + kQlAt + j * kBlock / 2 + 64 * h + 32 * a + 4 * u, 4);
          }
          std::memcpy(block + kQhAt + ((h * 8 + u) * kGroupRows + j) * 4,
                      old.data() + kQhAt + j * kBlock / 4 + 32 * h + 4 * u, 4);
        }
      }
    }
  }
}

namespace {

static_assert(kGroupRows == 8, "one ymm lane per output row of a group");

constexpr size_t kTile = 2;  // activation rows sharing each unpacked chunk (4 spill)

// Lane j = isum of weight row j of the group block `gb`, for each activation
// row of the tile (`xq`: their quants in this block, `xs`: their per-16 sums).
template <size_t R>
LLMSERVE_AVX512_VNNI_INLINE void IntSums(const uint8_t* gb, const int8_t* const xq[R], const int16_t* const xs[R],
                                         __m256i isum[R]) {
  const __m256i nibble = _mm256_set1_epi8(0x0f), pair = _mm256_set1_epi8(3);
  for (size_t r = 0; r < R; ++r) isum[r] = _mm256_setzero_si256();
#pragma GCC unroll 2
  for (size_t h = 0; h < 2; ++h) {
#pragma GCC unroll 2
    for (size_t uh = 0; uh < 2; ++uh) {  // chunks 4uh..4uh+3: the first or second sub-block of each quant set t
      __m256i acc[4][R];
      for (size_t t = 0; t < 4; ++t)
        for (size_t r = 0; r < R; ++r) acc[t][r] = _mm256_setzero_si256();
#pragma GCC unroll 4
      for (size_t u = 4 * uh; u < 4 * uh + 4; ++u) {
        const __m256i qla = _mm256_load_si256(reinterpret_cast<const __m256i*>(gb + kQlAt + ((h * 2 + 0) * 8 + u) * 32));
        const __m256i qlb = _mm256_load_si256(reinterpret_cast<const __m256i*>(gb + kQlAt + ((h * 2 + 1) * 8 + u) * 32));
        const __m256i qh = _mm256_load_si256(reinterpret_cast<const __m256i*>(gb + kQhAt + (h * 8 + u) * 32));
        __m256i q[4];
        q[0] = _mm256_and_si256(qla, nibble);
        q[1] = _mm256_and_si256(qlb, nibble);
        q[2] = _mm256_and_si256(_mm256_srli_epi16(qla, 4), nibble);
        q[3] = _mm256_and_si256(_mm256_srli_epi16(qlb, 4), nibble);
        for (size_t t = 0; t < 4; ++t) {
          const __m256i top = _mm256_and_si256(_mm256_srli_epi16(qh, static_cast<int>(2 * t)), pair);
          q[t] = _mm256_or_si256(q[t], _mm256_slli_epi16(top, 4));
          for (size_t r = 0; r < R; ++r)
            acc[t][r] = _mm256_dpbusd_epi32(acc[t][r], q[t], Broadcast4(xq[r] + 128 * h + 32 * t + 4 * u));
        }
      }
      for (size_t t = 0; t < 4; ++t) {
        const size_t s = 8 * h + 2 * t + uh;
        const __m256i sc = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(gb + kScalesAt + s * kGroupRows)));
        for (size_t r = 0; r < R; ++r) {
          const __m256i centred = _mm256_sub_epi32(acc[t][r], _mm256_set1_epi32(32 * int32_t{xs[r][s]}));
          isum[r] = _mm256_add_epi32(isum[r], _mm256_mullo_epi32(centred, sc));
        }
      }
    }
  }
}

// Activation rows [i, i + R) against group g.
template <size_t R>
LLMSERVE_AVX512_VNNI void Tile(const Problem& p, size_t g, size_t i) {
  const size_t blocks = p.k / kBlock;
  __m256 acc[R];
  for (size_t r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
  for (size_t b = 0; b < blocks; ++b) {
    const uint8_t* gb = p.w + (g * blocks + b) * kGroupBlockBytes;
    PrefetchGroupBlockAhead(gb, kGroupBlockBytes);
    const int8_t* xq[R];
    const int16_t* xs[R];
    for (size_t r = 0; r < R; ++r) {
      xq[r] = p.xq + (i + r) * p.k + b * kBlock;
      xs[r] = p.xsum + ((i + r) * blocks + b) * kSums;
    }
    __m256i isum[R];
    IntSums<R>(gb, xq, xs, isum);
    const __m256 dw = _mm256_load_ps(reinterpret_cast<const float*>(gb + kDAt));
    for (size_t r = 0; r < R; ++r) {
      const __m256 dx = _mm256_set1_ps(p.xd[(i + r) * blocks + b]);
      acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[r]), _mm256_mul_ps(dw, dx), acc[r]);
    }
  }
  for (size_t r = 0; r < R; ++r) StoreGroupLanes(p.y + (i + r) * p.ldy + g * kGroupRows, p.n - g * kGroupRows, acc[r]);
}

}  // namespace

LLMSERVE_AVX512_VNNI void GemmVnni(const Problem& p, size_t group_begin, size_t group_end) {
  for (size_t g = group_begin; g < group_end; ++g) {
    size_t i = 0;
    for (; i + kTile <= p.m; i += kTile) Tile<kTile>(p, g, i);
    for (; i < p.m; ++i) Tile<1>(p, g, i);
  }
}

}  // namespace llmserve::kernels::cpu::q6k
