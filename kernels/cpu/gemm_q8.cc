#include "kernels/cpu/gemm_q8.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/float16.h"

namespace llmserve::kernels::cpu::q8 {

namespace {

size_t Groups(size_t rows) { return (rows + kGroupRows - 1) / kGroupRows; }

}  // namespace

size_t PackedBytes(size_t rows, size_t cols) {
  const size_t blocks = cols / kBlock;
  return Groups(rows) * blocks * (kGroupRows * kBlock + kGroupRows * sizeof(float));
}

bool Pack(const uint8_t* src, size_t rows, size_t cols, size_t row_stride, uint8_t* dst) {
  const size_t blocks = cols / kBlock, groups = Groups(rows);
  const size_t src_row_bytes = row_stride / kBlock * kBlockBytes;
  std::memset(dst, 0, PackedBytes(rows, cols));
  auto* scales = reinterpret_cast<float*>(dst + groups * blocks * kGroupRows * kBlock);
  bool has_min_quant = false;
  for (size_t r = 0; r < rows; ++r) {
    const size_t g = r / kGroupRows, j = r % kGroupRows;
    for (size_t b = 0; b < blocks; ++b) {
      const uint8_t* block = src + r * src_row_bytes + b * kBlockBytes;
      scales[(g * blocks + b) * kGroupRows + j] = base::HalfToFloat(base::LoadU16(block));
      std::memcpy(dst + ((g * blocks + b) * kGroupRows + j) * kBlock, block + 2, kBlock);
      has_min_quant = has_min_quant || std::find(block + 2, block + 2 + kBlock, uint8_t{0x80}) != block + 2 + kBlock;
    }
  }
  return has_min_quant;
}

bool PackInt8(const int8_t* q, const float* block_scales, size_t rows, size_t cols, size_t row_stride,
              uint8_t* dst) {
  const size_t blocks = cols / kBlock, groups = Groups(rows);
  std::memset(dst, 0, PackedBytes(rows, cols));
  auto* scales = reinterpret_cast<float*>(dst + groups * blocks * kGroupRows * kBlock);
  bool has_min_quant = false;
  for (size_t r = 0; r < rows; ++r) {
    const size_t g = r / kGroupRows, j = r % kGroupRows;
    const int8_t* row = q + r * row_stride;
    has_min_quant = has_min_quant || std::find(row, row + cols, int8_t{-128}) != row + cols;
    for (size_t b = 0; b < blocks; ++b) {
      scales[(g * blocks + b) * kGroupRows + j] = block_scales[r * blocks + b];
      std::memcpy(dst + ((g * blocks + b) * kGroupRows + j) * kBlock, row + b * kBlock, kBlock);
    }
  }
  return has_min_quant;
}

void QuantizeRow(const float* x, size_t cols, int8_t* q, float* d) {
  for (size_t b = 0; b < cols / kBlock; ++b) {
    const float* xb = x + b * kBlock;
    float amax = 0.f;
    for (size_t i = 0; i < kBlock; ++i) amax = std::max(amax, std::fabs(xb[i]));
    const float scale = amax / 127.f;
    const float inverse = scale != 0.f ? 1.f / scale : 0.f;
    d[b] = base::HalfToFloat(base::FloatToHalf(scale));
    for (size_t i = 0; i < kBlock; ++i) q[b * kBlock + i] = static_cast<int8_t>(std::round(xb[i] * inverse));
  }
}

void GemmScalar(const Problem& p, size_t group_begin, size_t group_end) {
  const size_t blocks = p.k / kBlock;
  const auto* scales = reinterpret_cast<const float*>(p.w + Groups(p.n) * blocks * kGroupRows * kBlock);
  for (size_t g = group_begin; g < group_end; ++g) {
    const auto* wq = reinterpret_cast<const int8_t*>(p.w + g * blocks * kGroupRows * kBlock);
    const float* wd = scales + g * blocks * kGroupRows;
    for (size_t i = 0; i < p.m; ++i) {
      const int8_t* xq = p.xq + i * p.k;
      const float* xd = p.xd + i * blocks;
      for (size_t j = 0; j < kGroupRows && g * kGroupRows + j < p.n; ++j) {
        float acc = 0.f;
        for (size_t b = 0; b < blocks; ++b) {
          const int8_t* w = wq + (b * kGroupRows + j) * kBlock;
          int32_t sum = 0;
          for (size_t c = 0; c < kBlock; ++c) sum += int32_t{w[c]} * int32_t{xq[b * kBlock + c]};
          acc = std::fma(static_cast<float>(sum), wd[b * kGroupRows + j] * xd[b], acc);
        }
        p.y[i * p.ldy + g * kGroupRows + j] = acc;
      }
    }
  }
}

}  // namespace llmserve::kernels::cpu::q8
