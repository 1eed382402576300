#include "common/gguf/dequantize.h"

#include <cstring>

#include "common/gguf/block_layouts.h"
#include "base/float16.h"

namespace llmserve::common::gguf {

using base::Bf16ToFloat;
using base::HalfToFloat;
using base::LoadU16;

namespace {

// The 16-bit plain types: one value per element.
template <float (*kWiden)(uint16_t)>
void Dequantize16(const uint8_t* src, uint64_t n, float* dst) {
  for (uint64_t i = 0; i < n; ++i) dst[i] = kWiden(LoadU16(src + 2 * i));
}

void DequantizeQ4_0(const uint8_t* src, uint64_t blocks, float* dst) {
  for (uint64_t b = 0; b < blocks; ++b, dst += kQK) {
    const auto& block = reinterpret_cast<const BlockQ4_0*>(src)[b];
    const float d = HalfToFloat(LoadU16(block.d));
    for (int j = 0; j < kQK / 2; ++j) {
      dst[j] = static_cast<float>((block.qs[j] & 0xf) - 8) * d;
      dst[j + kQK / 2] = static_cast<float>((block.qs[j] >> 4) - 8) * d;
    }
  }
}

void DequantizeQ4_1(const uint8_t* src, uint64_t blocks, float* dst) {
  for (uint64_t b = 0; b < blocks; ++b, dst += kQK) {
    const auto& block = reinterpret_cast<const BlockQ4_1*>(src)[b];
    const float d = HalfToFloat(LoadU16(block.d));
    const float m = HalfToFloat(LoadU16(block.m));
    for (int j = 0; j < kQK / 2; ++j) {
      dst[j] = static_cast<float>(block.qs[j] & 0xf) * d + m;
      dst[j + kQK / 2] = static_cast<float>(block.qs[j] >> 4) * d + m;
    }
  }
}

// Value j of a Q5 block: its nibble, and bit j of qh as the fifth bit.
inline int Q5Value(const uint8_t* qs, uint32_t qh, int j) {
  const int nibble = j < kQK / 2 ? qs[j] & 0xf : qs[j - kQK / 2] >> 4;
  return nibble | static_cast<int>(((qh >> j) & 1u) << 4);
}

inline uint32_t LoadU32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

void DequantizeQ5_0(const uint8_t* src, uint64_t blocks, float* dst) {
  for (uint64_t b = 0; b < blocks; ++b, dst += kQK) {
    const auto& block = reinterpret_cast<const BlockQ5_0*>(src)[b];
    const float d = HalfToFloat(LoadU16(block.d));
    const uint32_t qh = LoadU32(block.qh);
    for (int j = 0; j < kQK; ++j) dst[j] = static_cast<float>(Q5Value(block.qs, qh, j) - 16) * d;
  }
}

void DequantizeQ5_1(const uint8_t* src, uint64_t blocks, float* dst) {
  for (uint64_t b = 0; b < blocks; ++b, dst += kQK) {
    const auto& block = reinterpret_cast<const BlockQ5_1*>(src)[b];
    const float d = HalfToFloat(LoadU16(block.d));
    const float m = HalfToFloat(LoadU16(block.m));
    const uint32_t qh = LoadU32(block.qh);
    for (int j = 0; j < kQK; ++j) dst[j] = static_cast<float>(Q5Value(block.qs, qh, j)) * d + m;
  }
}

void DequantizeQ8_0(const uint8_t* src, uint64_t blocks, float* dst) {
  for (uint64_t b = 0; b < blocks; ++b, dst += kQK) {
    const auto& block = reinterpret_cast<const BlockQ8_0*>(src)[b];
    const float d = HalfToFloat(LoadU16(block.d));
    for (int j = 0; j < kQK; ++j) dst[j] = static_cast<float>(block.qs[j]) * d;
  }
}

}  // namespace

Status DequantizeRow(GgmlType type, const uint8_t* src, uint64_t n, float* dst) {
  const GgmlTypeInfo& info = TypeInfo(type);
  if (!info.dequantizable) {
    return Status::Unimplemented(std::string("cannot dequantize ggml type ") + info.name +
                                 "; supported: " + DequantizableTypeNames());
  }
  if (n % info.block_size != 0) {
    return Status::InvalidArgument(std::to_string(n) + " values are not a whole number of " + info.name +
                                   " blocks of " + std::to_string(info.block_size));
  }
  if (n == 0) return Status::Ok();
  const uint64_t blocks = n / info.block_size;
  switch (type) {
    case GgmlType::kF32: std::memcpy(dst, src, n * sizeof(float)); break;
    case GgmlType::kF16: Dequantize16<HalfToFloat>(src, n, dst); break;
    case GgmlType::kBF16: Dequantize16<Bf16ToFloat>(src, n, dst); break;
    case GgmlType::kQ4_0: DequantizeQ4_0(src, blocks, dst); break;
    case GgmlType::kQ4_1: DequantizeQ4_1(src, blocks, dst); break;
    case GgmlType::kQ5_0: DequantizeQ5_0(src, blocks, dst); break;
    case GgmlType::kQ5_1: DequantizeQ5_1(src, blocks, dst); break;
    case GgmlType::kQ8_0: DequantizeQ8_0(src, blocks, dst); break;
    case GgmlType::kQ4_K: DequantizeQ4K(src, blocks, dst); break;
    case GgmlType::kQ5_K: DequantizeQ5K(src, blocks, dst); break;
    case GgmlType::kQ6_K: DequantizeQ6K(src, blocks, dst); break;
    default: return Status::Internal(std::string("no dequantizer for ") + info.name);
  }
  return Status::Ok();
}

}  // namespace llmserve::common::gguf
