#include "common/gguf/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "common/gguf/block_layouts.h"
#include "base/float16.h"

namespace llmserve::common::gguf {

using base::FloatToBf16;
using base::FloatToHalf;
using base::HalfToFloat;
using base::StoreU16;

namespace quantize_internal {

int RoundClamp(float x, int lo, int hi) {
  const float r = std::nearbyint(x);  // default rounding mode: ties to even
  if (!(r >= static_cast<float>(lo))) return lo;
  if (r > static_cast<float>(hi)) return hi;
  return static_cast<int>(r);
}

Status ScaleToHalf(float scale, const char* type, uint16_t* half) {
  *half = FloatToHalf(scale);
  if (!std::isfinite(HalfToFloat(*half))) {
    return Status::InvalidArgument(std::string("values too large for ") + type + ": a block scale of " +
                                   std::to_string(scale) + " does not fit a half");
  }
  return Status::Ok();
}

float SignedAbsMax(const float* x, int n) {
  float best = 0;
  for (int i = 0; i < n; ++i) {
    if (std::fabs(x[i]) > std::fabs(best)) best = x[i];
  }
  return best;
}

}  // namespace quantize_internal

namespace {

using quantize_internal::RoundClamp;
using quantize_internal::ScaleToHalf;
using quantize_internal::SignedAbsMax;

// Values j and j+16 share byte j: low and high nibble.
void PackNibbles(const int* q, uint8_t* qs) {
  for (int j = 0; j < kQK / 2; ++j) qs[j] = static_cast<uint8_t>((q[j] & 0xf) | ((q[j + kQK / 2] & 0xf) << 4));
}

// Bit 4 of value j is bit j of a little-endian uint32.
void PackFifthBits(const int* q, uint8_t* qh) {
  std::memset(qh, 0, 4);
  for (int j = 0; j < kQK; ++j) qh[j / 8] |= static_cast<uint8_t>(((q[j] >> 4) & 1) << (j % 8));
}

// "Type-0" block (Q4_0, Q5_0): d = -(signed max) / offset, so the largest
// magnitude maps to code 0; codes are round(x / d) + offset.
Status QuantizeType0(const float* x, int offset, const char* name, uint8_t* d_out, int* q) {
  uint16_t dh = 0;
  LLMSERVE_RETURN_IF_ERROR(ScaleToHalf(SignedAbsMax(x, kQK) / static_cast<float>(-offset), name, &dh));
  const float d = HalfToFloat(dh);
  const float id = d != 0 ? 1.0f / d : 0.0f;
  for (int j = 0; j < kQK; ++j) q[j] = RoundClamp(x[j] * id, -offset, offset - 1) + offset;
  StoreU16(d_out, dh);
  return Status::Ok();
}

// "Type-1" block (Q4_1, Q5_1): y = q·d + m with m the block's minimum.
Status QuantizeType1(const float* x, int levels, const char* name, uint8_t* d_out, uint8_t* m_out, int* q) {
  const auto [lo, hi] = std::minmax_element(x, x + kQK);
  uint16_t dh = 0, mh = 0;
  LLMSERVE_RETURN_IF_ERROR(ScaleToHalf((*hi - *lo) / static_cast<float>(levels), name, &dh));
  LLMSERVE_RETURN_IF_ERROR(ScaleToHalf(*lo, name, &mh));
  const float d = HalfToFloat(dh), m = HalfToFloat(mh);
  const float id = d != 0 ? 1.0f / d : 0.0f;
  for (int j = 0; j < kQK; ++j) q[j] = RoundClamp((x[j] - m) * id, 0, levels);
  StoreU16(d_out, dh);
  StoreU16(m_out, mh);
  return Status::Ok();
}

Status QuantizeLegacy(GgmlType type, const float* x, uint64_t blocks, uint8_t* dst) {
  const GgmlTypeInfo& info = TypeInfo(type);
  int q[kQK];
  for (uint64_t b = 0; b < blocks; ++b, x += kQK, dst += info.block_bytes) {
    switch (type) {
      case GgmlType::kQ4_0: {
        auto* block = reinterpret_cast<BlockQ4_0*>(dst);
        LLMSERVE_RETURN_IF_ERROR(QuantizeType0(x, 8, info.name, block->d, q));
        PackNibbles(q, block->qs);
        break;
      }
      case GgmlType::kQ5_0: {
        auto* block = reinterpret_cast<BlockQ5_0*>(dst);
        LLMSERVE_RETURN_IF_ERROR(QuantizeType0(x, 16, info.name, block->d, q));
        PackNibbles(q, block->qs);
        PackFifthBits(q, block->qh);
        break;
      }
      case GgmlType::kQ4_1: {
        auto* block = reinterpret_cast<BlockQ4_1*>(dst);
        LLMSERVE_RETURN_IF_ERROR(QuantizeType1(x, 15, info.name, block->d, block->m, q));
        PackNibbles(q, block->qs);
        break;
      }
      case GgmlType::kQ5_1: {
        auto* block = reinterpret_cast<BlockQ5_1*>(dst);
        LLMSERVE_RETURN_IF_ERROR(QuantizeType1(x, 31, info.name, block->d, block->m, q));
        PackNibbles(q, block->qs);
        PackFifthBits(q, block->qh);
        break;
      }
      default: return Status::Internal(std::string("not a legacy quantized type: ") + info.name);
    }
  }
  return Status::Ok();
}

// Q8_0 is symmetric: d = max|x| / 127, codes round(x / d) in [-127, 127].
Status QuantizeQ8_0(const float* x, uint64_t blocks, uint8_t* dst) {
  for (uint64_t b = 0; b < blocks; ++b, x += kQK) {
    auto* block = reinterpret_cast<BlockQ8_0*>(dst) + b;
    uint16_t dh = 0;
    LLMSERVE_RETURN_IF_ERROR(ScaleToHalf(std::fabs(SignedAbsMax(x, kQK)) / 127.0f, "Q8_0", &dh));
    const float d = HalfToFloat(dh);
    const float id = d != 0 ? 1.0f / d : 0.0f;
    for (int j = 0; j < kQK; ++j) block->qs[j] = static_cast<int8_t>(RoundClamp(x[j] * id, -127, 127));
    StoreU16(block->d, dh);
  }
  return Status::Ok();
}

}  // namespace

Status QuantizeRow(GgmlType type, const float* src, uint64_t n, uint8_t* dst) {
  const GgmlTypeInfo& info = TypeInfo(type);
  if (!info.dequantizable) return Status::Unimplemented(std::string("cannot quantize to ggml type ") + info.name);
  if (n % info.block_size != 0) {
    return Status::InvalidArgument(std::to_string(n) + " values are not a whole number of " + info.name +
                                   " blocks of " + std::to_string(info.block_size));
  }
  if (n == 0) return Status::Ok();
  const bool plain = info.block_size == 1;
  if (!plain && !std::all_of(src, src + n, [](float v) { return std::isfinite(v); })) {
    return Status::InvalidArgument(std::string("cannot quantize a non-finite value to ") + info.name);
  }
  const uint64_t blocks = n / info.block_size;
  switch (type) {
    case GgmlType::kF32: std::memcpy(dst, src, n * sizeof(float)); return Status::Ok();
    case GgmlType::kF16:
      for (uint64_t i = 0; i < n; ++i) StoreU16(dst + 2 * i, FloatToHalf(src[i]));
      return Status::Ok();
    case GgmlType::kBF16:
      for (uint64_t i = 0; i < n; ++i) StoreU16(dst + 2 * i, FloatToBf16(src[i]));
      return Status::Ok();
    case GgmlType::kQ8_0: return QuantizeQ8_0(src, blocks, dst);
    case GgmlType::kQ4_K: return QuantizeQ4K(src, blocks, dst);
    case GgmlType::kQ5_K: return QuantizeQ5K(src, blocks, dst);
    case GgmlType::kQ6_K: return QuantizeQ6K(src, blocks, dst);
    default: return QuantizeLegacy(type, src, blocks, dst);
  }
}

}  // namespace llmserve::common::gguf
