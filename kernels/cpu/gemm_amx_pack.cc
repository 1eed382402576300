// Weight packing and activation conversion for the AMX GEMM (gemm_amx.h).
#include "kernels/cpu/gemm_amx.h"

#include <immintrin.h>

// GCC 12 reports its own _mm512_undefined_* helpers as (maybe-)uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include <cstring>
#include <vector>

#include "kernels/cpu/aligned_buffer.h"
#include "kernels/cpu/avx512_mask.h"
#include "kernels/cpu/bf16_round_avx512.h"

#define LLMSERVE_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma")))

namespace llmserve::kernels::cpu::amx {
namespace {

LLMSERVE_AVX512 void ConvertRowsAvx512(const float* x, size_t ldx, size_t k, size_t r0, size_t r1,
                                       uint16_t* a, size_t kpad) {
  for (size_t r = r0; r < r1; ++r) {
    const float* src = x + r * ldx;
    uint16_t* dst = TiledARow(a, r, kpad);
    for (size_t c = 0; c < kpad; c += 16) {
      const __mmask16 mask = LowMask(c < k ? k - c : 0);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + TiledAColumn(c)),
                          RoundToBf16Avx512(_mm512_maskz_loadu_ps(mask, src + c)));
    }
  }
}

// A weight element as bf16 bits: bf16 as stored (bit for bit), f16 / f32
// rounded to nearest even.
uint16_t ToBf16Bits(const uint8_t* base, WeightDType dtype, size_t index) {
  if (dtype == WeightDType::kBF16) {
    uint16_t b;
    std::memcpy(&b, base + index * 2, 2);
    return b;
  }
  return F32ToBf16(WeightToF32(base, dtype, index));
}

}  // namespace

void PackReference(const void* src, WeightDType dtype, size_t rows, size_t cols, size_t row_stride,
                   uint16_t* dst) {
  const auto* s = static_cast<const uint8_t*>(src);
  const size_t kpad = PaddedK(cols);
  const size_t panels = (rows + 15) / 16;
  std::memset(dst, 0, PackedBytes(rows, cols));
  std::vector<uint16_t> row(kpad);
  for (size_t p = 0; p < panels; ++p) {
    // Pairs (k, k + 1) of one row are 32-bit units; unit q of row n goes to
    // tile q / 16, tile row q % 16, column n.
    auto* panel = reinterpret_cast<uint32_t*>(dst + p * kpad * 16);
    for (size_t n = 0; n < 16 && p * 16 + n < rows; ++n) {
      const size_t r = p * 16 + n;
      for (size_t c = 0; c < cols; ++c) row[c] = ToBf16Bits(s, dtype, r * row_stride + c);
      for (size_t c = cols; c < kpad; ++c) row[c] = 0;
      const uint16_t* in = row.data();
      for (size_t q = 0; q < kpad / 2; ++q) {
        uint32_t pair;
        std::memcpy(&pair, in + 2 * q, 4);
        panel[(q / 16) * 256 + (q % 16) * 16 + n] = pair;
      }
    }
  }
}

namespace {

// Transposes a 16 × 16 matrix of 32-bit units: rows in[0..15] (each 16
// units, in[n] at in + n * in_stride units) to out rows q = 0..15 (64 bytes
// apart): out[q][n] = in[n][q].
LLMSERVE_AVX512 void Transpose16x16(const uint32_t* in, size_t in_stride, uint32_t* out) {
  __m512i r[16], t[16];
  for (int n = 0; n < 16; ++n) r[n] = _mm512_loadu_si512(in + n * in_stride);
  // Per 128-bit lane L: t[2i], t[2i + 1] hold rows 2i, 2i + 1 of columns
  // 4L, 4L + 1 and 4L + 2, 4L + 3.
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  // r[4i + j], lane L: rows 4i..4i + 3 of column 4L + j.
  for (int i = 0; i < 4; ++i) {
    r[4 * i + 0] = _mm512_unpacklo_epi64(t[4 * i + 0], t[4 * i + 2]);
    r[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i + 0], t[4 * i + 2]);
    r[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
    r[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
  }
  // Output row 4L + j gathers lane L of r[j], r[4 + j], r[8 + j], r[12 + j].
  for (int j = 0; j < 4; ++j) {
    const __m512i x0 = _mm512_shuffle_i32x4(r[j], r[4 + j], 0x44);
    const __m512i x1 = _mm512_shuffle_i32x4(r[j], r[4 + j], 0xee);
    const __m512i y0 = _mm512_shuffle_i32x4(r[8 + j], r[12 + j], 0x44);
    const __m512i y1 = _mm512_shuffle_i32x4(r[8 + j], r[12 + j], 0xee);
    _mm512_store_si512(out + (0 + j) * 16, _mm512_shuffle_i32x4(x0, y0, 0x88));
    _mm512_store_si512(out + (4 + j) * 16, _mm512_shuffle_i32x4(x0, y0, 0xdd));
    _mm512_store_si512(out + (8 + j) * 16, _mm512_shuffle_i32x4(x1, y1, 0x88));
    _mm512_store_si512(out + (12 + j) * 16, _mm512_shuffle_i32x4(x1, y1, 0xdd));
  }
}

}  // namespace

void Pack(const void* src, WeightDType dtype, size_t rows, size_t cols, size_t row_stride,
          uint16_t* dst) {
  const auto* s = static_cast<const uint8_t*>(src);
  const size_t kpad = PaddedK(cols);
  const size_t panels = (rows + 15) / 16;
  // A panel's 16 rows as bf16, zero-padded to kpad (and to 16 rows); each
  // 1 KiB tile is then a 16 × 16 transpose of 32-bit pairs.
  std::vector<uint16_t, AlignedAllocator<uint16_t>> staging(16 * kpad);
  for (size_t p = 0; p < panels; ++p) {
    for (size_t n = 0; n < 16; ++n) {
      uint16_t* row = staging.data() + n * kpad;
      const size_t r = p * 16 + n;
      size_t c = 0;
      if (r < rows) {
        if (dtype == WeightDType::kBF16) {
          std::memcpy(row, s + r * row_stride * 2, cols * 2);
          c = cols;
        } else {
          for (; c < cols; ++c) row[c] = ToBf16Bits(s, dtype, r * row_stride + c);
        }
      }
      std::memset(row + c, 0, (kpad - c) * 2);
    }
    uint16_t* panel = dst + p * kpad * 16;
    for (size_t kb = 0; kb < kpad / 32; ++kb) {
      Transpose16x16(reinterpret_cast<const uint32_t*>(staging.data() + kb * 32), kpad / 2,
                     reinterpret_cast<uint32_t*>(panel + kb * 512));
    }
  }
}

void ConvertRows(const float* x, size_t ldx, size_t k, size_t r0, size_t r1, uint16_t* a,
                 size_t kpad) {
  ConvertRowsAvx512(x, ldx, k, r0, r1, a, kpad);
}

}  // namespace llmserve::kernels::cpu::amx
