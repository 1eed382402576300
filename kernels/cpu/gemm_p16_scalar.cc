#include <cmath>
#include <cstring>

#include "kernels/cpu/gemm_p16.h"

namespace llmserve::kernels::cpu::p16 {
namespace {

size_t ElementSize(WeightDType dtype) { return dtype == WeightDType::kF32 ? 4 : 2; }

float Load(const uint8_t* base, WeightDType dtype, size_t index) {
  if (dtype == WeightDType::kF32) {
    float f;
    std::memcpy(&f, base + index * 4, 4);
    return f;
  }
  uint16_t b;
  std::memcpy(&b, base + index * 2, 2);
  return dtype == WeightDType::kBF16 ? Bf16ToF32(b) : F16ToF32(b);
}

}  // namespace

size_t PackedBytes(size_t rows, size_t cols, WeightDType dtype) {
  return (rows + 15) / 16 * 16 * cols * ElementSize(dtype);
}

namespace {
// Same-type copy of 16 rows into one panel; kEs = element size.
template <size_t kEs>
void CopyPanel(const uint8_t* s, size_t first_row, size_t count, size_t cols, size_t row_stride,
               uint8_t* out) {
  for (size_t j = 0; j < count; ++j) {
    const uint8_t* in = s + (first_row + j) * row_stride * kEs;
    for (size_t c = 0; c < cols; ++c) std::memcpy(out + (c * 16 + j) * kEs, in + c * kEs, kEs);
  }
}
}  // namespace

void Pack(const void* src, WeightDType src_dtype, size_t rows, size_t cols, size_t row_stride,
          WeightDType dst_dtype, uint8_t* dst) {
  const auto* s = static_cast<const uint8_t*>(src);
  const size_t panels = (rows + 15) / 16;
  const size_t es = ElementSize(dst_dtype);
  std::memset(dst, 0, PackedBytes(rows, cols, dst_dtype));
  for (size_t p = 0; p < panels; ++p) {
    const size_t count = rows - p * 16 < 16 ? rows - p * 16 : 16;
    uint8_t* out = dst + p * cols * 16 * es;
    if (src_dtype == dst_dtype) {
      if (es == 2) {
        CopyPanel<2>(s, p * 16, count, cols, row_stride, out);
      } else {
        CopyPanel<4>(s, p * 16, count, cols, row_stride, out);
      }
      continue;
    }
    for (size_t j = 0; j < count; ++j) {  // only conversion offered: to bf16
      const size_t r = p * 16 + j;
      for (size_t c = 0; c < cols; ++c) {
        const uint16_t b = F32ToBf16(Load(s, src_dtype, r * row_stride + c));
        std::memcpy(out + (c * 16 + j) * 2, &b, 2);
      }
    }
  }
}

void GemmScalar(const Problem& p, size_t panel_begin, size_t panel_end) {
  const size_t es = ElementSize(p.dtype);
  for (size_t panel = panel_begin; panel < panel_end; ++panel) {
    const uint8_t* w = p.w + panel * p.k * 16 * es;
    const size_t width = p.n - panel * 16 < 16 ? p.n - panel * 16 : 16;
    for (size_t i = 0; i < p.m; ++i) {
      const float* x = p.x + i * p.ldx;
      float acc[16] = {};
      for (size_t k = 0; k < p.k; ++k) {
        for (size_t j = 0; j < 16; ++j) acc[j] = std::fma(x[k], Load(w, p.dtype, k * 16 + j), acc[j]);
      }
      std::memcpy(p.y + i * p.ldy + panel * 16, acc, width * sizeof(float));
    }
  }
}

}  // namespace llmserve::kernels::cpu::p16
