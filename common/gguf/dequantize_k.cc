// The K-quant super-blocks (256 values). Q4_K and Q5_K are "type-1"
// (y = scale·q - min) over eight sub-blocks of 32; Q6_K is "type-0"
// (y = scale·q) over sixteen sub-blocks of 16. The operation order is the
// format's (the sub-block scale d·s first), though every product is exact.

#include "common/gguf/block_layouts.h"
#include "common/gguf/dequantize.h"
#include "base/float16.h"

namespace llmserve::common::gguf {

using base::HalfToFloat;
using base::LoadU16;

namespace {

// Sub-block k (0..7) of a Q4_K / Q5_K block: the 4-bit parts of its 32
// values are the low (k even) or high (k odd) nibbles of qs[32·(k/2) ..].
inline int Nibble(const uint8_t* qs, int k, int l) {
  const uint8_t byte = qs[32 * (k / 2) + l];
  return (k & 1) ? byte >> 4 : byte & 0xf;
}

}  // namespace

void DequantizeQ4K(const uint8_t* src, uint64_t blocks, float* dst) {
  for (uint64_t b = 0; b < blocks; ++b) {
    const auto& block = reinterpret_cast<const BlockQ4_K*>(src)[b];
    const float d = HalfToFloat(LoadU16(block.d));
    const float dmin = HalfToFloat(LoadU16(block.dmin));
    for (int k = 0; k < 8; ++k, dst += 32) {
      int scale, min;
      UnpackScaleMin(block.scales, k, &scale, &min);
      const float dk = d * static_cast<float>(scale);
      const float mk = dmin * static_cast<float>(min);
      for (int l = 0; l < 32; ++l) dst[l] = dk * static_cast<float>(Nibble(block.qs, k, l)) - mk;
    }
  }
}

void DequantizeQ5K(const uint8_t* src, uint64_t blocks, float* dst) {
  for (uint64_t b = 0; b < blocks; ++b) {
    const auto& block = reinterpret_cast<const BlockQ5_K*>(src)[b];
    const float d = HalfToFloat(LoadU16(block.d));
    const float dmin = HalfToFloat(LoadU16(block.dmin));
    for (int k = 0; k < 8; ++k, dst += 32) {
      int scale, min;
      UnpackScaleMin(block.scales, k, &scale, &min);
      const float dk = d * static_cast<float>(scale);
      const float mk = dmin * static_cast<float>(min);
      for (int l = 0; l < 32; ++l) {
        const int q = Nibble(block.qs, k, l) | (((block.qh[l] >> k) & 1) << 4);
        dst[l] = dk * static_cast<float>(q) - mk;
      }
    }
  }
}

// Q6_K, per half of 128 values (ql += 64, qh += 32 per half): value
// l + 32·g (g = 0..3, l = 0..31) takes its low 4 bits from the low (g < 2)
// or high nibble of ql[l + 32·(g % 2)] and its top 2 bits from bits 2g, 2g+1
// of qh[l]; every 16 consecutive values share one signed scale.
void DequantizeQ6K(const uint8_t* src, uint64_t blocks, float* dst) {
  for (uint64_t b = 0; b < blocks; ++b) {
    const auto& block = reinterpret_cast<const BlockQ6_K*>(src)[b];
    const float d = HalfToFloat(LoadU16(block.d));
    for (int half = 0; half < 2; ++half) {
      const uint8_t* ql = block.ql + 64 * half;
      const uint8_t* qh = block.qh + 32 * half;
      for (int v = 0; v < 128; ++v) {
        const int g = v / 32, l = v % 32;
        const uint8_t low_byte = ql[l + 32 * (g % 2)];
        const int low = g < 2 ? low_byte & 0xf : low_byte >> 4;
        const int q = low | (((qh[l] >> (2 * g)) & 3) << 4);
        const float scale = d * static_cast<float>(block.scales[(128 * half + v) / 16]);
        dst[128 * half + v] = scale * static_cast<float>(q - 32);
      }
    }
    dst += kQK_K;
  }
}

}  // namespace llmserve::common::gguf
