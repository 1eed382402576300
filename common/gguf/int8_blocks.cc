#include "common/gguf/int8_blocks.h"

#include <string>

#include "base/float16.h"
#include "common/gguf/block_layouts.h"

namespace llmserve::common::gguf {

using base::HalfToFloat;
using base::LoadU16;

bool HasInt8Blocks(GgmlType type) {
  return type == GgmlType::kQ8_0 || type == GgmlType::kQ4_0 || type == GgmlType::kQ5_0;
}

Status ToInt8Blocks(GgmlType type, const uint8_t* src, uint64_t n, int8_t* q, float* scales) {
  if (!HasInt8Blocks(type)) {
    return Status::InvalidArgument(std::string("ggml type ") + TypeInfo(type).name + " is not scale × int8 blocks");
  }
  if (n % kQK != 0) return Status::InvalidArgument(std::to_string(n) + " values are not whole blocks of 32");
  for (uint64_t b = 0; b < n / kQK; ++b, q += kQK) {
    if (type == GgmlType::kQ8_0) {
      const auto& block = reinterpret_cast<const BlockQ8_0*>(src)[b];
      scales[b] = HalfToFloat(LoadU16(block.d));
      for (int j = 0; j < kQK; ++j) q[j] = block.qs[j];
    } else if (type == GgmlType::kQ4_0) {
      const auto& block = reinterpret_cast<const BlockQ4_0*>(src)[b];
      scales[b] = HalfToFloat(LoadU16(block.d));
      for (int j = 0; j < kQK / 2; ++j) {
        q[j] = static_cast<int8_t>((block.qs[j] & 0xf) - 8);
        q[j + kQK / 2] = static_cast<int8_t>((block.qs[j] >> 4) - 8);
      }
    } else {
      const auto& block = reinterpret_cast<const BlockQ5_0*>(src)[b];
      scales[b] = HalfToFloat(LoadU16(block.d));
      const uint32_t qh = static_cast<uint32_t>(block.qh[0]) | static_cast<uint32_t>(block.qh[1]) << 8 |
                          static_cast<uint32_t>(block.qh[2]) << 16 | static_cast<uint32_t>(block.qh[3]) << 24;
      for (int j = 0; j < kQK; ++j) {
        const int nibble = j < kQK / 2 ? block.qs[j] & 0xf : block.qs[j - kQK / 2] >> 4;
        q[j] = static_cast<int8_t>((nibble | static_cast<int>(((qh >> j) & 1u) << 4)) - 16);
      }
    }
  }
  return Status::Ok();
}

}  // namespace llmserve::common::gguf
