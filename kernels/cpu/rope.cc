#include "kernels/cpu/rope.h"

// GCC 12 reports its own _mm512_undefined_* helpers as (maybe-)uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "kernels/cpu/avx512_mask.h"
#include "kernels/cpu/cpu_features.h"

namespace llmserve::kernels::cpu {
namespace {

double YarnMscale(double scale, double mscale) {
  return scale <= 1.0 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0;
}

double YarnCorrectionDim(double rotations, size_t dim, double base, double max_pos) {
  return (static_cast<double>(dim) * std::log(max_pos / (rotations * 2 * M_PI))) / (2 * std::log(base));
}

}  // namespace

RopeFrequencies ComputeRopeFrequencies(size_t rotary_dim, double theta, const RopeScaling& s) {
  RopeFrequencies out;
  const size_t half = rotary_dim / 2;
  std::vector<double> inv(half);
  for (size_t i = 0; i < half; ++i) {
    // HF rounds the exponent and the frequency to fp32.
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(rotary_dim);
    inv[i] = static_cast<float>(1.0 / std::pow(theta, static_cast<double>(exponent)));
  }
  switch (s.type) {
    case RopeScaling::Type::kNone:
      break;
    case RopeScaling::Type::kLinear:
      for (auto& f : inv) f /= s.factor;
      break;
    case RopeScaling::Type::kLlama3: {
      const double low_wavelen = s.original_max_position / s.low_freq_factor;
      const double high_wavelen = s.original_max_position / s.high_freq_factor;
      for (auto& f : inv) {
        const double wavelen = 2 * M_PI / f;
        if (wavelen > low_wavelen) {
          f = f / s.factor;
        } else if (wavelen >= high_wavelen) {  // medium band: interpolate
          const double smooth = (s.original_max_position / wavelen - s.low_freq_factor) /
                                (s.high_freq_factor - s.low_freq_factor);
          f = (1 - smooth) * f / s.factor + smooth * f;
        }
      }
      break;
    }
    case RopeScaling::Type::kYarn: {
      double low = YarnCorrectionDim(s.beta_fast, rotary_dim, theta, s.original_max_position);
      double high = YarnCorrectionDim(s.beta_slow, rotary_dim, theta, s.original_max_position);
      if (s.truncate) {
        low = std::floor(low);
        high = std::ceil(high);
      }
      low = std::max(low, 0.0);
      high = std::min(high, static_cast<double>(rotary_dim - 1));
      if (low == high) high += 0.001;
      for (size_t i = 0; i < half; ++i) {
        const double ramp = std::clamp((static_cast<double>(i) - low) / (high - low), 0.0, 1.0);
        const double extrapolation_factor = 1.0 - ramp;
        const double extrapolated = inv[i];
        const double interpolated = inv[i] / s.factor;
        inv[i] = interpolated * (1 - extrapolation_factor) + extrapolated * extrapolation_factor;
      }
      if (s.attention_factor > 0) {
        out.attention_scaling = static_cast<float>(s.attention_factor);
      } else if (s.mscale > 0 && s.mscale_all_dim > 0) {
        out.attention_scaling =
            static_cast<float>(YarnMscale(s.factor, s.mscale) / YarnMscale(s.factor, s.mscale_all_dim));
      } else {
        out.attention_scaling = static_cast<float>(YarnMscale(s.factor, 1.0));
      }
      break;
    }
  }
  out.inv_freq.resize(half);
  for (size_t i = 0; i < half; ++i) out.inv_freq[i] = static_cast<float>(inv[i]);
  return out;
}

void BuildRopeTable(const RopeFrequencies& freqs, const int32_t* positions, size_t n,
                    RopeTable* table) {
  const size_t half = freqs.inv_freq.size();
  table->half = half;
  table->cos.resize(n * half);
  table->sin.resize(n * half);
  for (size_t t = 0; t < n; ++t) {
    for (size_t i = 0; i < half; ++i) {
      const double angle = static_cast<double>(positions[t]) * freqs.inv_freq[i];
      table->cos[t * half + i] = static_cast<float>(std::cos(angle)) * freqs.attention_scaling;
      table->sin[t * half + i] = static_cast<float>(std::sin(angle)) * freqs.attention_scaling;
    }
  }
}

namespace {

// One head: (a, b) = (v[i], v[i + half]) -> (a c - b s, b c + a s).
void RotateHeadScalar(float* v, const float* c, const float* s, size_t half) {
  for (size_t i = 0; i < half; ++i) {
    const float a = v[i], b = v[i + half];
    v[i] = a * c[i] - b * s[i];
    v[i + half] = b * c[i] + a * s[i];
  }
}

// The same arithmetic 16 lanes at a time. The explicitly rounded forms keep
// the compiler from fusing a multiply and an add into an FMA (which rounds
// once), so the bits equal the scalar loop's.
__attribute__((target("avx512f"))) void RotateHeadAvx512(float* v, const float* c, const float* s, size_t half) {
  constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  for (size_t i = 0; i < half; i += 16) {
    const __mmask16 m = LowMask(half - i);
    const __m512 a = _mm512_maskz_loadu_ps(m, v + i), b = _mm512_maskz_loadu_ps(m, v + i + half);
    const __m512 cv = _mm512_maskz_loadu_ps(m, c + i), sv = _mm512_maskz_loadu_ps(m, s + i);
    const __m512 ac = _mm512_mul_round_ps(a, cv, kNearest), bs = _mm512_mul_round_ps(b, sv, kNearest);
    const __m512 bc = _mm512_mul_round_ps(b, cv, kNearest), as = _mm512_mul_round_ps(a, sv, kNearest);
    _mm512_mask_storeu_ps(v + i, m, _mm512_sub_round_ps(ac, bs, kNearest));
    _mm512_mask_storeu_ps(v + i + half, m, _mm512_add_round_ps(bc, as, kNearest));
  }
}

}  // namespace

void ApplyRopeToken(float* x, size_t heads, size_t head_dim, const RopeTable& table, size_t token) {
  const size_t half = table.half;
  const float* c = &table.cos[token * half];
  const float* s = &table.sin[token * half];
  const bool avx512 = static_cast<int>(ActiveIsa()) >= static_cast<int>(Isa::kAvx512);
  for (size_t h = 0; h < heads; ++h) {
    if (avx512) {
      RotateHeadAvx512(x + h * head_dim, c, s, half);
    } else {
      RotateHeadScalar(x + h * head_dim, c, s, half);
    }
  }
}

void ApplyRope(float* x, size_t tokens, size_t token_stride, size_t heads, size_t head_dim,
               const RopeTable& table, ThreadPool& pool) {
  pool.ParallelFor(tokens, 4, [&](size_t begin, size_t end, size_t) {
    for (size_t t = begin; t < end; ++t) ApplyRopeToken(x + t * token_stride, heads, head_dim, table, t);
  });
}

void ApplyRopeReference(float* head, size_t head_dim, const RopeFrequencies& freqs,
                        int32_t position) {
  (void)head_dim;
  const size_t half = freqs.inv_freq.size();
  for (size_t i = 0; i < half; ++i) {
    const double angle = static_cast<double>(position) * freqs.inv_freq[i];
    const float c = static_cast<float>(std::cos(angle)) * freqs.attention_scaling;
    const float s = static_cast<float>(std::sin(angle)) * freqs.attention_scaling;
    const float a = head[i], b = head[i + half];
    head[i] = a * c - b * s;
    head[i + half] = b * c + a * s;
  }
}

}  // namespace llmserve::kernels::cpu
