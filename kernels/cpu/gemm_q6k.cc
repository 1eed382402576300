#include "kernels/cpu/gemm_q6k.h"

#include <cmath>
#include <cstring>

#include "base/float16.h"

namespace llmserve::kernels::cpu::q6k {

namespace {

size_t Groups(size_t rows) { return (rows + kGroupRows - 1) / kGroupRows; }

// Row j of a group block from one GGUF Q6_K block (ql, qh, scales, d).
void PackRow(const uint8_t* block, size_t j, uint8_t* dst) {
  std::memcpy(dst + kQlAt + j * kBlock / 2, block, kBlock / 2);
  std::memcpy(dst + kQhAt + j * kBlock / 4, block + kBlock / 2, kBlock / 4);
  std::memcpy(dst + kScalesAt + j * kSubBlocks, block + 192, kSubBlocks);
  const float d = base::HalfToFloat(base::LoadU16(block + 208));
  std::memcpy(dst + kDAt + j * sizeof(float), &d, sizeof(float));
}

// Quant c (0..255) of a row's packed block: ql, qh point at the row's bytes.
int Quant(const uint8_t* ql, const uint8_t* qh, size_t c) {
  const size_t half = c / 128, t = c % 128 / 32, l = c % 32;
  const uint8_t low_byte = ql[64 * half + l + 32 * (t % 2)];
  const int low = t < 2 ? low_byte & 0xf : low_byte >> 4;
  return low | (((qh[32 * half + l] >> (2 * t)) & 3) << 4);
}

// Output (i, 8g + j) over all blocks, in the header's order.
float Dot(const Problem& p, size_t i, size_t g, size_t j) {
  const size_t blocks = p.k / kBlock;
  float acc = 0.f;
  for (size_t b = 0; b < blocks; ++b) {
    const uint8_t* gb = p.w + (g * blocks + b) * kGroupBlockBytes;
    const uint8_t* ql = gb + kQlAt + j * kBlock / 2;
    const uint8_t* qh = gb + kQhAt + j * kBlock / 4;
    const auto* sc = reinterpret_cast<const int8_t*>(gb + kScalesAt + j * kSubBlocks);
    const int8_t* xq = p.xq + i * p.k + b * kBlock;
    const int16_t* xs = p.xsum + (i * blocks + b) * kSums;
    int32_t isum = 0;
    for (size_t s = 0; s < kSubBlocks; ++s) {
      int32_t dot = 0;
      for (size_t c = 16 * s; c < 16 * s + 16; ++c) dot += Quant(ql, qh, c) * int32_t{xq[c]};
      isum += sc[s] * (dot - 32 * int32_t{xs[s]});
    }
    float dw;
    std::memcpy(&dw, gb + kDAt + j * sizeof(float), sizeof(float));
    acc = std::fma(static_cast<float>(isum), dw * p.xd[i * blocks + b], acc);
  }
  return acc;
}

}  // namespace

size_t PackedBytes(size_t rows, size_t cols) { return Groups(rows) * (cols / kBlock) * kGroupBlockBytes; }

void Pack(const uint8_t* src, size_t rows, size_t cols, size_t row_stride, uint8_t* dst) {
  const size_t blocks = cols / kBlock;
  const size_t src_row_bytes = row_stride / kBlock * kBlockBytes;
  std::memset(dst, 0, PackedBytes(rows, cols));
  for (size_t r = 0; r < rows; ++r) {
    const size_t g = r / kGroupRows, j = r % kGroupRows;
    for (size_t b = 0; b < blocks; ++b)
      PackRow(src + r * src_row_bytes + b * kBlockBytes, j, dst + (g * blocks + b) * kGroupBlockBytes);
  }
}

void GemmScalar(const Problem& p, size_t group_begin, size_t group_end) {
  for (size_t g = group_begin; g < group_end; ++g) {
    for (size_t i = 0; i < p.m; ++i) {
      for (size_t j = 0; j < kGroupRows && g * kGroupRows + j < p.n; ++j)
        p.y[i * p.ldy + g * kGroupRows + j] = Dot(p, i, g, j);
    }
  }
}

}  // namespace llmserve::kernels::cpu::q6k
