#include "kernels/cpu/gemm_q4k.h"

#include <cmath>
#include <cstring>

#include "base/float16.h"

namespace llmserve::kernels::cpu::q4k {

namespace {

size_t Groups(size_t rows) { return (rows + kGroupRows - 1) / kGroupRows; }

// The 6-bit scale and min of sub-block s of a block's 12 scale bytes:
// sub-blocks 0-3 keep theirs in the low 6 bits of bytes s and s+4; 4-7 keep
// their low 4 bits in byte s+4's nibbles and their top 2 bits in the spare
// top bits of bytes s-4 (scale) and s (min).
void ScaleMin(const uint8_t* scales, size_t s, uint8_t* scale, uint8_t* min) {
  if (s < 4) {
    *scale = scales[s] & 63;
    *min = scales[s + 4] & 63;
  } else {
    *scale = static_cast<uint8_t>((scales[s + 4] & 0xf) | ((scales[s - 4] >> 6) << 4));
    *min = static_cast<uint8_t>((scales[s + 4] >> 4) | ((scales[s] >> 6) << 4));
  }
}

size_t FileBlockBytes(Format f) { return f == Format::kQ5_K ? kQ5BlockBytes : kBlockBytes; }

// Row j of a group block from one GGUF block: d, dmin, 12 scale bytes, then
// (Q5_K) 32 qh bytes, then the nibbles.
void PackRow(Format f, const uint8_t* block, size_t j, uint8_t* dst) {
  const Layout l = LayoutOf(f);
  const float d = base::HalfToFloat(base::LoadU16(block));
  const float dmin = base::HalfToFloat(base::LoadU16(block + 2));
  std::memcpy(dst + l.d_at + j * sizeof(float), &d, sizeof(float));
  std::memcpy(dst + l.dmin_at + j * sizeof(float), &dmin, sizeof(float));
  for (size_t s = 0; s < kSubBlocks; ++s) {
    uint8_t scale, min;
    ScaleMin(block + 4, s, &scale, &min);
    dst[l.scales_at + j * kSubBlocks + s] = scale;
    dst[l.mins_at + (s / 2 * kGroupRows + j) * 2 + s % 2] = min;
  }
  const uint8_t* nibbles = block + 16;
  if (f == Format::kQ5_K) {
    std::memcpy(dst + l.qh_at + j * 32, block + 16, 32);
    nibbles += 32;
  }
  std::memcpy(dst + l.quants_at + j * kBlock / 2, nibbles, kBlock / 2);
}

}  // namespace

size_t PackedBytes(Format f, size_t rows, size_t cols) {
  return Groups(rows) * (cols / kBlock) * LayoutOf(f).group_block_bytes;
}

void Pack(Format f, const uint8_t* src, size_t rows, size_t cols, size_t row_stride, uint8_t* dst) {
  const size_t blocks = cols / kBlock, file_block = FileBlockBytes(f);
  const size_t src_row_bytes = row_stride / kBlock * file_block;
  const size_t group_block = LayoutOf(f).group_block_bytes;
  std::memset(dst, 0, PackedBytes(f, rows, cols));
  for (size_t r = 0; r < rows; ++r) {
    const size_t g = r / kGroupRows, j = r % kGroupRows;
    for (size_t b = 0; b < blocks; ++b)
      PackRow(f, src + r * src_row_bytes + b * file_block, j, dst + (g * blocks + b) * group_block);
  }
}

void QuantizeRow(const float* x, size_t cols, int8_t* q, float* d, int16_t* sums) {
  for (size_t b = 0; b < cols / kBlock; ++b) {
    const float* xb = x + b * kBlock;
    int8_t* qb = q + b * kBlock;
    float amax = 0.f, max = 0.f;
    for (size_t i = 0; i < kBlock; ++i) {
      if (std::fabs(xb[i]) > amax) {
        amax = std::fabs(xb[i]);
        max = xb[i];
      }
    }
    const float iscale = amax != 0.f ? -127.f / max : 0.f;
    d[b] = amax != 0.f ? 1.f / iscale : 0.f;
    for (size_t i = 0; i < kBlock; ++i) {
      const float v = std::nearbyint(iscale * xb[i]);  // the default rounding: half to even
      qb[i] = static_cast<int8_t>(v > 127.f ? 127.f : v);
    }
  }
  SumsOf16(q, cols, sums);
}

void SumsOf16(const int8_t* q, size_t n, int16_t* sums) {
  for (size_t t = 0; t < n / 16; ++t) {
    int sum = 0;
    for (size_t i = 0; i < 16; ++i) sum += q[t * 16 + i];
    sums[t] = static_cast<int16_t>(sum);
  }
}

namespace {

// Output (i, 8g + j) over all blocks, in the header's order.
float Dot(const Problem& p, size_t i, size_t g, size_t j) {
  const Layout l = LayoutOf(p.format);
  const size_t blocks = p.k / kBlock;
  float acc = 0.f;
  for (size_t b = 0; b < blocks; ++b) {
    const uint8_t* gb = p.w + (g * blocks + b) * l.group_block_bytes;
    const uint8_t* wq = gb + l.quants_at + j * kBlock / 2;
    const uint8_t* qh = gb + l.qh_at + j * 32;
    const int8_t* xq = p.xq + i * p.k + b * kBlock;
    const int16_t* xs = p.xsum + (i * blocks + b) * kSums;
    int32_t isum = 0, msum = 0;
    for (size_t s = 0; s < kSubBlocks; ++s) {
      const uint8_t* bytes = wq + s / 2 * 32;
      const int shift = s % 2 == 0 ? 0 : 4;
      int32_t dot = 0;
      for (size_t c = 0; c < 32; ++c) {
        int32_t q = (bytes[c] >> shift) & 0xf;
        if (p.format == Format::kQ5_K) q += ((qh[c] >> s) & 1) << 4;
        dot += q * int32_t{xq[s * 32 + c]};
      }
      isum += gb[l.scales_at + j * kSubBlocks + s] * dot;
      msum += gb[l.mins_at + (s / 2 * kGroupRows + j) * 2 + s % 2] * (int32_t{xs[2 * s]} + xs[2 * s + 1]);
    }
    float dw, dmin;
    std::memcpy(&dw, gb + l.d_at + j * sizeof(float), sizeof(float));
    std::memcpy(&dmin, gb + l.dmin_at + j * sizeof(float), sizeof(float));
    const float dx = p.xd[i * blocks + b];
    acc = std::fma(static_cast<float>(isum), dw * dx, acc);
    acc = std::fma(-static_cast<float>(msum), dmin * dx, acc);
  }
  return acc;
}

}  // namespace

void GemmScalar(const Problem& p, size_t group_begin, size_t group_end) {
  for (size_t g = group_begin; g < group_end; ++g) {
    for (size_t i = 0; i < p.m; ++i) {
      for (size_t j = 0; j < kGroupRows && g * kGroupRows + j < p.n; ++j)
        p.y[i * p.ldy + g * kGroupRows + j] = Dot(p, i, g, j);
    }
  }
}

}  // namespace llmserve::kernels::cpu::q4k
