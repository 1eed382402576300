#include "kernels/cpu/linear.h"

#include <glog/logging.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "base/float8.h"
#include "kernels/cpu/gemm_amx.h"
#include "kernels/cpu/gemm_dpbf16.h"
#include "kernels/cpu/gemm_p16.h"
#include "kernels/cpu/gemm_q8.h"
#include "kernels/cpu/linear_chunks.h"

namespace llmserve::kernels::cpu {

using linear_internal::ChunkPanels;
using linear_internal::ForGroups;
using linear_internal::QuantizeRows;

float Bf16ToF32(uint16_t bits) {
  uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

float F16ToF32(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  uint32_t exp = (bits >> 10) & 0x1f;
  uint32_t mant = bits & 0x3ff;
  uint32_t u;
  if (exp == 0) {
    if (mant == 0) {
      u = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) {
        mant <<= 1;
        --exp;
      }
      u = sign | (exp << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    u = sign | 0x7f800000u | (mant << 13);
  } else {
    u = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

float WeightToF32(const uint8_t* base, WeightDType dtype, size_t index) {
  switch (dtype) {
    case WeightDType::kF32: {
      float f;
      std::memcpy(&f, base + index * 4, 4);
      return f;
    }
    case WeightDType::kBF16: {
      uint16_t b;
      std::memcpy(&b, base + index * 2, 2);
      return Bf16ToF32(b);
    }
    case WeightDType::kF16: {
      uint16_t b;
      std::memcpy(&b, base + index * 2, 2);
      return F16ToF32(b);
    }
    case WeightDType::kI8:
      return static_cast<float>(static_cast<int8_t>(base[index]));
    case WeightDType::kI32: {
      int32_t v;
      std::memcpy(&v, base + index * 4, 4);
      return static_cast<float>(v);
    }
    case WeightDType::kF8E4M3:
      return base::Fp8E4M3ToFloat(base[index]);
  }
  return 0.f;
}

void LinearReference(const float* x, size_t m, const void* w, WeightDType dtype, size_t rows,
                     size_t cols, float* y) {
  const auto* base = static_cast<const uint8_t*>(w);
  for (size_t i = 0; i < m; ++i) {
    for (size_t r = 0; r < rows; ++r) {
      float acc = 0.f;
      for (size_t c = 0; c < cols; ++c) acc += x[i * cols + c] * WeightToF32(base, dtype, r * cols + c);
      y[i * rows + r] = acc;
    }
  }
}

namespace {

// kBF16 weights for these levels use the AMX layouts (gemm_amx.h), which the
// AVX512-BF16 kernel reads as well (gemm_dpbf16.h).
bool UsesTiledLayout(Isa isa) { return isa == Isa::kAmx || isa == Isa::kAvx512Bf16; }

}  // namespace

LinearWeight LinearWeight::Pack(const void* data, WeightDType dtype, size_t rows, size_t cols,
                                size_t row_stride, MatmulPrecision precision) {
  CHECK_GE(row_stride, cols);
  CHECK(dtype != WeightDType::kI8 && dtype != WeightDType::kI32 && dtype != WeightDType::kF8E4M3)
      << "integer weights are packed with PackInt8; FP8 ones are scaled first";
  LinearWeight w;
  w.rows_ = rows;
  w.cols_ = cols;
  w.dtype_ = dtype;
  w.precision_ = precision;
  w.isa_ = ActiveIsa();
  if (precision == MatmulPrecision::kBF16 && UsesTiledLayout(w.isa_)) {
    w.packed_dtype_ = WeightDType::kBF16;
    w.data_.resize(amx::PackedBytes(rows, cols));
    amx::Pack(data, dtype, rows, cols, row_stride, reinterpret_cast<uint16_t*>(w.data_.data()));
    return w;
  }
  if (UsesTiledLayout(w.isa_)) w.isa_ = Isa::kAvx512;  // kF32 has no bf16-hardware kernel
  w.packed_dtype_ = precision == MatmulPrecision::kBF16 ? WeightDType::kBF16 : dtype;
  w.data_.resize(p16::PackedBytes(rows, cols, w.packed_dtype_));
  p16::Pack(data, dtype, rows, cols, row_stride, w.packed_dtype_, w.data_.data());
  return w;
}

namespace {

// Rows per work item when a large-m GEMM is split by rows as well (a
// multiple of the 16-row tile block).
constexpr size_t kRowChunk = 256;

// Activations rounded to bf16 and back, for kBF16 on the P16 kernels.
void RoundRowsToBf16(const float* x, size_t count, float* out) {
  for (size_t i = 0; i < count; ++i) out[i] = Bf16ToF32(F32ToBf16(x[i]));
}

}  // namespace

LinearWeight LinearWeight::Quantized(Quant quant, size_t rows, size_t cols, size_t packed_bytes) {
  LinearWeight w;
  w.rows_ = rows;
  w.cols_ = cols;
  w.quant_ = quant;
  w.isa_ = ActiveIsa() >= Isa::kAvx2 ? Isa::kAvx2 : Isa::kScalar;
  w.data_.resize(packed_bytes);
  return w;
}

LinearWeight LinearWeight::PackQ8_0(const void* blocks, size_t rows, size_t cols, size_t row_stride) {
  CHECK_EQ(cols % q8::kBlock, 0u);
  CHECK_EQ(row_stride % q8::kBlock, 0u);
  CHECK_GE(row_stride, cols);
  LinearWeight w = Quantized(Quant::kQ8_0, rows, cols, q8::PackedBytes(rows, cols));
  w.isa_ = linear_internal::IntegerKernelIsa();
  w.q8_has_min_quant_ = q8::Pack(static_cast<const uint8_t*>(blocks), rows, cols, row_stride, w.data_.data());
  if (w.isa_ == Isa::kAvx512) q8::InterleaveForVnni(w.data_.data(), rows, cols);
  return w;
}

LinearWeight LinearWeight::PackInt8(const int8_t* q, const float* block_scales, size_t rows, size_t cols,
                                    size_t row_stride) {
  CHECK_EQ(cols % q8::kBlock, 0u);
  CHECK_GE(row_stride, cols);
  LinearWeight w = Quantized(Quant::kQ8_0, rows, cols, q8::PackedBytes(rows, cols));
  w.isa_ = linear_internal::IntegerKernelIsa();
  w.q8_has_min_quant_ = q8::PackInt8(q, block_scales, rows, cols, row_stride, w.data_.data());
  if (w.isa_ == Isa::kAvx512) q8::InterleaveForVnni(w.data_.data(), rows, cols);
  return w;
}

void LinearWeight::SetInputOrder(std::vector<uint32_t> order) {
  CHECK(quant_ == Quant::kQ8_0) << "SetInputOrder is for int8 weights";
  CHECK_EQ(order.size(), cols_);
  input_order_ = std::move(order);
}

void LinearWeight::ApplyQ8_0(const float* x, size_t m, float* y, ThreadPool& pool) const {
  const size_t blocks = cols_ / q8::kBlock;
  thread_local std::vector<int8_t, AlignedAllocator<int8_t>> xq;
  thread_local std::vector<float> xd;
  if (xq.size() < m * cols_) xq.resize(m * cols_);
  if (xd.size() < m * blocks) xd.resize(m * blocks);
  int8_t* q = xq.data();
  float* d = xd.data();
  QuantizeRows(m, cols_, pool, [&](size_t i) {
    const float* row = x + i * cols_;
    if (!input_order_.empty()) {
      thread_local std::vector<float> gathered;
      gathered.resize(cols_);
      for (size_t c = 0; c < cols_; ++c) gathered[c] = row[input_order_[c]];
      row = gathered.data();
    }
    q8::QuantizeRow(row, cols_, q + i * cols_, d + i * blocks);
  });
  const q8::Problem problem{q, d, m, cols_, data_.data(), q8_has_min_quant_, rows_, y, rows_};
  ForGroups<q8::kGroupRows>(rows_, q8::PackedBytes(q8::kGroupRows, cols_), pool, [&](size_t begin, size_t end) {
    if (isa_ == Isa::kAvx512) q8::GemmVnni(problem, begin, end);
    else if (isa_ == Isa::kAvx2) q8::GemmAvx2(problem, begin, end);
    else q8::GemmScalar(problem, begin, end);
  });
}

bool LinearWeight::TakesTiledInput() const {
  return quant_ == Quant::kNone && precision_ == MatmulPrecision::kBF16 && UsesTiledLayout(isa_);
}

size_t LinearWeight::TiledInputElements(size_t m) const { return amx::TiledABytes(m, amx::PaddedK(cols_)) / 2; }

void LinearWeight::ApplyTiled(const uint16_t* a, size_t m, float* y, ThreadPool& pool) const {
  CHECK(TakesTiledInput());
  if (m == 0 || rows_ == 0) return;
  if (cols_ == 0) {
    std::memset(y, 0, m * rows_ * sizeof(float));
    return;
  }
  // Each output row is reduced inside one call by the same sequence of tile
  // (or vdpbf16ps) steps whatever m is; threads share out ranges of output
  // panels only, so which thread computes an output never changes its bits.
  const size_t kpad = amx::PaddedK(cols_);
  const size_t panels = (rows_ + 15) / 16;
  const auto* w = reinterpret_cast<const uint16_t*>(data_.data());
  if (isa_ == Isa::kAmx) {
    pool.ParallelForChunks(panels, ChunkPanels(16 * kpad * 2, 4), [&](size_t begin, size_t end, size_t) {
      amx::Gemm(a, m, kpad, w, rows_, y, rows_, begin, end);
    });
  } else {
    const size_t chunk = ChunkPanels(16 * kpad * 2, 6);
    const size_t panel_chunks = (panels + chunk - 1) / chunk;
    if (m > kRowChunk && panel_chunks < 8 * pool.size()) {
      // Few panel chunks (o and down in a prefill: 64 panels, 11 chunks)
      // left the threads up to a chunk apart; items of kRowChunk rows × one
      // panel chunk balance them (figures:
      // docs/perf/2026-11-25-zen5-k-sliced-decode.md). Item rows start on a
      // 16-row tile block, so every output keeps the bits of one call over
      // all rows.
      const size_t row_chunks = (m + kRowChunk - 1) / kRowChunk;
      pool.ParallelForChunks(panel_chunks * row_chunks, 1, [&](size_t begin, size_t end, size_t) {
        for (size_t item = begin; item < end; ++item) {
          const size_t pc = item / row_chunks, r0 = item % row_chunks * kRowChunk;
          dpbf16::Gemm(a + r0 * kpad, std::min(kRowChunk, m - r0), kpad, w, rows_, y + r0 * rows_, rows_,
                       pc * chunk, std::min(panels, (pc + 1) * chunk));
        }
      });
      return;
    }
    pool.ParallelForChunks(panels, chunk, [&](size_t begin, size_t end, size_t) {
      dpbf16::Gemm(a, m, kpad, w, rows_, y, rows_, begin, end);
    });
  }
}

void LinearWeight::Apply(const float* x, size_t m, float* y, ThreadPool& pool) const {
  if (m == 0 || rows_ == 0) return;
  if (cols_ == 0) {
    std::memset(y, 0, m * rows_ * sizeof(float));
    return;
  }
  if (quant_ == Quant::kQ8_0) return ApplyQ8_0(x, m, y, pool);
  if (quant_ == Quant::kKQuant) return ApplyKQuant(x, m, y, pool);
  if (TakesTiledInput()) {
    const size_t kpad = amx::PaddedK(cols_);
    thread_local std::vector<uint16_t, AlignedAllocator<uint16_t>> a;
    if (a.size() < TiledInputElements(m)) a.resize(TiledInputElements(m));
    uint16_t* ap = a.data();
    if (m * kpad >= (size_t{1} << 16)) {
      pool.ParallelFor(m, 8, [&](size_t begin, size_t end, size_t) {
        amx::ConvertRows(x, cols_, cols_, begin, end, ap, kpad);
      });
    } else {
      amx::ConvertRows(x, cols_, cols_, 0, m, ap, kpad);
    }
    ApplyTiled(ap, m, y, pool);
    return;
  }
  const size_t panels = (rows_ + 15) / 16;
  const float* xs = x;
  if (precision_ == MatmulPrecision::kBF16) {
    thread_local std::vector<float> rounded;
    if (rounded.size() < m * cols_) rounded.resize(m * cols_);
    RoundRowsToBf16(x, m * cols_, rounded.data());
    xs = rounded.data();
  }
  const p16::Problem problem{xs, m, cols_, data_.data(), packed_dtype_, cols_, rows_, y, rows_};
  const size_t es = packed_dtype_ == WeightDType::kF32 ? 4 : 2;
  const Isa isa = isa_;
  pool.ParallelForChunks(panels, ChunkPanels(16 * cols_ * es, 8), [&](size_t begin, size_t end, size_t) {
    switch (isa) {
      case Isa::kAmx:
      case Isa::kAvx512Bf16:
      case Isa::kAvx512:
        p16::GemmAvx512(problem, begin, end);
        break;
      case Isa::kAvx2:
        p16::GemmAvx2(problem, begin, end);
        break;
      case Isa::kScalar:
        p16::GemmScalar(problem, begin, end);
        break;
    }
  });
}

}  // namespace llmserve::kernels::cpu
