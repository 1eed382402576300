// K-quant quantisation with a plain choice of scales: each sub-block's own
// range sets its scale (and min), the super-block's d (and dmin) is the
// largest of those over 63 (Q6_K: 127), and the 6- or 8-bit sub-block codes
// round to nearest. Values are then coded against the scales the format
// will actually decode (d·s rounded to float), so the only errors are the
// rounding of the codes and of the scales.

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/gguf/block_layouts.h"
#include "base/float16.h"
#include "common/gguf/quantize.h"

namespace llmserve::common::gguf {

using base::HalfToFloat;
using base::StoreU16;

namespace {

using quantize_internal::RoundClamp;
using quantize_internal::ScaleToHalf;
using quantize_internal::SignedAbsMax;

// The inverse of UnpackScaleMin: eight 6-bit scales and mins into 12 bytes.
void PackScaleMin(const int* scale, const int* min, uint8_t* out) {
  for (int j = 0; j < 4; ++j) {
    out[j] = static_cast<uint8_t>(scale[j] | ((scale[j + 4] >> 4) << 6));
    out[j + 4] = static_cast<uint8_t>(min[j] | ((min[j + 4] >> 4) << 6));
    out[j + 8] = static_cast<uint8_t>((scale[j + 4] & 0xf) | ((min[j + 4] & 0xf) << 4));
  }
}

// One Q4_K / Q5_K super-block (`levels` = 15 or 31): codes q[256], and the
// block's d, dmin and packed scales written to `d_out`, `dmin_out`, `scales_out`.
Status ChooseType1K(const float* x, int levels, const char* name, uint8_t* d_out, uint8_t* dmin_out,
                    uint8_t* scales_out, int* q) {
  float sub_scale[8], sub_min[8];  // sub_min ≥ 0: the amount subtracted
  for (int k = 0; k < 8; ++k) {
    const auto [lo, hi] = std::minmax_element(x + 32 * k, x + 32 * k + 32);
    const float low = std::min(0.0f, *lo);
    sub_scale[k] = (*hi - low) / static_cast<float>(levels);
    sub_min[k] = -low;
  }
  uint16_t dh = 0, dminh = 0;
  LLMSERVE_RETURN_IF_ERROR(ScaleToHalf(*std::max_element(sub_scale, sub_scale + 8) / 63.0f, name, &dh));
  LLMSERVE_RETURN_IF_ERROR(ScaleToHalf(*std::max_element(sub_min, sub_min + 8) / 63.0f, name, &dminh));
  const float d = HalfToFloat(dh), dmin = HalfToFloat(dminh);
  int scale[8], min[8];
  for (int k = 0; k < 8; ++k) {
    scale[k] = d > 0 ? RoundClamp(sub_scale[k] / d, sub_scale[k] > 0 ? 1 : 0, 63) : 0;
    min[k] = dmin > 0 ? RoundClamp(sub_min[k] / dmin, 0, 63) : 0;
    const float dk = d * static_cast<float>(scale[k]);
    const float mk = dmin * static_cast<float>(min[k]);
    const float inverse = dk > 0 ? 1.0f / dk : 0.0f;
    for (int l = 0; l < 32; ++l) q[32 * k + l] = RoundClamp((x[32 * k + l] + mk) * inverse, 0, levels);
  }
  StoreU16(d_out, dh);
  StoreU16(dmin_out, dminh);
  PackScaleMin(scale, min, scales_out);
  return Status::Ok();
}

// The low 4 bits of sub-block k's values: low nibbles (k even) or high
// nibbles (k odd) of qs[32·(k/2) ..].
void PackK4Bits(const int* q, uint8_t* qs) {
  std::memset(qs, 0, kQK_K / 2);
  for (int k = 0; k < 8; ++k) {
    for (int l = 0; l < 32; ++l) qs[32 * (k / 2) + l] |= static_cast<uint8_t>((q[32 * k + l] & 0xf) << (4 * (k & 1)));
  }
}

}  // namespace

Status QuantizeQ4K(const float* src, uint64_t blocks, uint8_t* dst) {
  int q[kQK_K];
  for (uint64_t b = 0; b < blocks; ++b, src += kQK_K) {
    auto* block = reinterpret_cast<BlockQ4_K*>(dst) + b;
    LLMSERVE_RETURN_IF_ERROR(ChooseType1K(src, 15, "Q4_K", block->d, block->dmin, block->scales, q));
    PackK4Bits(q, block->qs);
  }
  return Status::Ok();
}

Status QuantizeQ5K(const float* src, uint64_t blocks, uint8_t* dst) {
  int q[kQK_K];
  for (uint64_t b = 0; b < blocks; ++b, src += kQK_K) {
    auto* block = reinterpret_cast<BlockQ5_K*>(dst) + b;
    LLMSERVE_RETURN_IF_ERROR(ChooseType1K(src, 31, "Q5_K", block->d, block->dmin, block->scales, q));
    PackK4Bits(q, block->qs);
    std::memset(block->qh, 0, sizeof(block->qh));
    for (int k = 0; k < 8; ++k) {
      for (int l = 0; l < 32; ++l) block->qh[l] |= static_cast<uint8_t>(((q[32 * k + l] >> 4) & 1) << k);
    }
  }
  return Status::Ok();
}

// Q6_K: sixteen sub-blocks of 16, each scaled so its largest magnitude maps
// to code 0 (q - 32 = -32); signed 8-bit sub-block scales over d = max/127.
Status QuantizeQ6K(const float* src, uint64_t blocks, uint8_t* dst) {
  for (uint64_t b = 0; b < blocks; ++b, src += kQK_K) {
    auto* block = reinterpret_cast<BlockQ6_K*>(dst) + b;
    float sub_scale[16];
    float largest = 0;
    for (int k = 0; k < 16; ++k) {
      sub_scale[k] = SignedAbsMax(src + 16 * k, 16) / -32.0f;
      largest = std::max(largest, std::fabs(sub_scale[k]));
    }
    uint16_t dh = 0;
    LLMSERVE_RETURN_IF_ERROR(ScaleToHalf(largest / 127.0f, "Q6_K", &dh));
    const float d = HalfToFloat(dh);
    std::memset(block, 0, sizeof(*block));
    for (int v = 0; v < kQK_K; ++v) {
      const int k = v / 16;
      if (v % 16 == 0) block->scales[k] = static_cast<int8_t>(d > 0 ? RoundClamp(sub_scale[k] / d, -127, 127) : 0);
      const float scale = d * static_cast<float>(block->scales[k]);
      const int q = scale != 0 ? RoundClamp(src[v] / scale, -32, 31) + 32 : 32;
      // Layout (see dequantize_k.cc): per half of 128, value l + 32·g.
      const int half = v / 128, g = (v % 128) / 32, l = v % 32;
      block->ql[64 * half + l + 32 * (g % 2)] |= static_cast<uint8_t>((q & 0xf) << (g < 2 ? 0 : 4));
      block->qh[32 * half + l] |= static_cast<uint8_t>((q >> 4) << (2 * g));
    }
    StoreU16(block->d, dh);
  }
  return Status::Ok();
}

}  // namespace llmserve::common::gguf
