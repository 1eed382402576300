#include "kernels/cpu/rms_norm.h"

// GCC 12 reports its own _mm512_undefined_* helpers as maybe-uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cmath>

#include <glog/logging.h>

#include "kernels/cpu/avx512_mask.h"
#include "kernels/cpu/bf16_round_avx512.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/gemm_amx.h"

namespace llmserve::kernels::cpu {
namespace {

// Eight double lanes reduced in a fixed order: lane l sums x[i]^2 for i ≡ l
// (mod 8) in index order, then ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)). The same
// bits for a row wherever it sits in the batch, on either path below.
double SumSquaresScalar(const float* row, size_t dim) {
  double lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (size_t i = 0; i < dim; ++i) {
    const double v = static_cast<double>(row[i]);
    const double sq = v * v;
    lane[i & 7] += sq;
  }
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

// The same lanes, eight at a time (missing tail elements add +0: exact).
__attribute__((target("avx512f,avx512vl"))) double SumSquaresAvx512(const float* row, size_t dim) {
  __m512d acc = _mm512_setzero_pd();
  for (size_t i = 0; i < dim; i += 8) {
    const size_t left = dim - i;
    const __mmask8 mask = left >= 8 ? static_cast<__mmask8>(0xff) : static_cast<__mmask8>((1u << left) - 1);
    const __m512d v = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(mask, row + i));
    acc = _mm512_add_pd(acc, _mm512_mul_pd(v, v));
  }
  alignas(64) double lane[8];
  _mm512_store_pd(lane, acc);
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

__attribute__((target("avx512f"))) void ScaleAvx512(const float* row, float inv_rms, const float* weight,
                                                    float* dst, size_t dim) {
  const __m512 s = _mm512_set1_ps(inv_rms);
  for (size_t i = 0; i < dim; i += 16) {
    const __mmask16 mask = LowMask(dim - i);
    const __m512 v = _mm512_mul_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(mask, row + i), s),
                                   _mm512_maskz_loadu_ps(mask, weight + i));
    _mm512_mask_storeu_ps(dst + i, mask, v);
  }
}

// ScaleAvx512's products rounded to bf16 into one row of the tiled A (`dst`:
// amx::TiledARow); columns dim..kpad are zero.
__attribute__((target("avx512f,avx512bw"))) void ScaleTiledAvx512(const float* row, float inv_rms,
                                                                   const float* weight, size_t dim, size_t kpad,
                                                                   uint16_t* dst) {
  const __m512 s = _mm512_set1_ps(inv_rms);
  for (size_t i = 0; i < kpad; i += 16) {
    const __mmask16 mask = LowMask(i < dim ? dim - i : 0);
    const __m512 v = _mm512_mul_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(mask, row + i), s),
                                   _mm512_maskz_loadu_ps(mask, weight + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + amx::TiledAColumn(i)), RoundToBf16Avx512(v));
  }
}

float InvRms(double sum_sq, size_t dim, float eps) {
  return 1.0f / std::sqrt(static_cast<float>(sum_sq / dim) + eps);
}

}  // namespace

void RmsNormRows(const float* x, size_t x_stride, const float* weight, float* out,
                 size_t out_stride, size_t rows, size_t dim, float eps) {
  const bool avx512 = static_cast<int>(ActiveIsa()) >= static_cast<int>(Isa::kAvx512);
  for (size_t r = 0; r < rows; ++r) {
    const float* row = x + r * x_stride;
    const double sum_sq = avx512 ? SumSquaresAvx512(row, dim) : SumSquaresScalar(row, dim);
    const float inv_rms = InvRms(sum_sq, dim, eps);
    float* dst = out + r * out_stride;
    if (avx512) {
      ScaleAvx512(row, inv_rms, weight, dst, dim);
    } else {
      for (size_t i = 0; i < dim; ++i) dst[i] = row[i] * inv_rms * weight[i];
    }
  }
}

void RmsNorm(const float* x, size_t x_stride, const float* weight, float* out, size_t out_stride,
             size_t rows, size_t dim, float eps, ThreadPool& pool) {
  const size_t grain = dim >= 512 ? 4 : 64;
  pool.ParallelFor(rows, grain, [&](size_t begin, size_t end, size_t) {
    RmsNormRows(x + begin * x_stride, x_stride, weight, out + begin * out_stride, out_stride,
                end - begin, dim, eps);
  });
}

void RmsNormTiled(const float* x, size_t x_stride, const float* weight, size_t rows, size_t dim, float eps,
                  uint16_t* a, ThreadPool& pool) {
  CHECK_GE(static_cast<int>(ActiveIsa()), static_cast<int>(Isa::kAvx512));
  const size_t kpad = amx::PaddedK(dim);
  const size_t grain = dim >= 512 ? 4 : 64;
  pool.ParallelFor(rows, grain, [&](size_t begin, size_t end, size_t) {
    for (size_t r = begin; r < end; ++r) {
      const float* row = x + r * x_stride;
      ScaleTiledAvx512(row, InvRms(SumSquaresAvx512(row, dim), dim, eps), weight, dim, kpad,
                       amx::TiledARow(a, r, kpad));
    }
  });
}

}  // namespace llmserve::kernels::cpu
