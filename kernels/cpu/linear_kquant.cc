// LinearWeight for GGUF K-quant weights (Q4_K, Q5_K, Q6_K): packing the
// parts of a stacked weight each in its own format, and the matmul over them
// with one quantization of the activations (Q8_K, gemm_q4k.h).
#include <glog/logging.h>

#include <algorithm>
#include <vector>

#include "kernels/cpu/gemm_q4k.h"
#include "kernels/cpu/gemm_q6k.h"
#include "kernels/cpu/linear.h"
#include "kernels/cpu/linear_chunks.h"

namespace llmserve::kernels::cpu {

namespace {

size_t PackedBytes(KQuantType type, size_t rows, size_t cols) {
  switch (type) {
    case KQuantType::kQ4_K: return q4k::PackedBytes(q4k::Format::kQ4_K, rows, cols);
    case KQuantType::kQ5_K: return q4k::PackedBytes(q4k::Format::kQ5_K, rows, cols);
    case KQuantType::kQ6_K: return q6k::PackedBytes(rows, cols);
  }
  return 0;
}

// Packs a part for the kernels of `isa` (the VNNI ones read their own order).
void PackPart(const KQuantRows& part, size_t cols, Isa isa, uint8_t* dst) {
  const auto* src = static_cast<const uint8_t*>(part.blocks);
  const bool vnni = isa == Isa::kAvx512;
  switch (part.type) {
    case KQuantType::kQ4_K:
    case KQuantType::kQ5_K: {
      const auto f = part.type == KQuantType::kQ5_K ? q4k::Format::kQ5_K : q4k::Format::kQ4_K;
      q4k::Pack(f, src, part.rows, cols, part.row_stride, dst);
      if (vnni) q4k::InterleaveForVnni(f, dst, part.rows, cols);
      return;
    }
    case KQuantType::kQ6_K:
      q6k::Pack(src, part.rows, cols, part.row_stride, dst);
      if (vnni) q6k::InterleaveForVnni(dst, part.rows, cols);
      return;
  }
}

// Groups [begin, end) of one segment's problem.
void GemmSegment(KQuantType type, Isa isa, q4k::Problem p, size_t begin, size_t end) {
  if (type == KQuantType::kQ6_K) {
    if (isa == Isa::kAvx512) q6k::GemmVnni(p, begin, end);
    else if (isa == Isa::kAvx2) q6k::GemmAvx2(p, begin, end);
    else q6k::GemmScalar(p, begin, end);
    return;
  }
  p.format = type == KQuantType::kQ5_K ? q4k::Format::kQ5_K : q4k::Format::kQ4_K;
  if (isa == Isa::kAvx512) q4k::GemmVnni(p, begin, end);
  else if (isa == Isa::kAvx2) q4k::GemmAvx2(p, begin, end);
  else q4k::GemmScalar(p, begin, end);
}

}  // namespace

LinearWeight LinearWeight::PackKQuants(const std::vector<KQuantRows>& parts, size_t cols) {
  CHECK(!parts.empty());
  CHECK_EQ(cols % q4k::kBlock, 0u);
  size_t rows = 0, bytes = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    CHECK_EQ(parts[i].row_stride % q4k::kBlock, 0u);
    CHECK_GE(parts[i].row_stride, cols);
    if (i + 1 < parts.size()) CHECK_EQ(parts[i].rows % q4k::kGroupRows, 0u) << "part " << i;
    rows += parts[i].rows;
    bytes += PackedBytes(parts[i].type, parts[i].rows, cols);
  }
  LinearWeight w = Quantized(Quant::kKQuant, rows, cols, bytes);
  w.isa_ = linear_internal::IntegerKernelIsa();
  size_t first_row = 0, offset = 0;
  for (const KQuantRows& part : parts) {
    PackPart(part, cols, w.isa_, w.data_.data() + offset);
    w.segments_.push_back({part.type, first_row, part.rows, offset});
    first_row += part.rows;
    offset += PackedBytes(part.type, part.rows, cols);
  }
  return w;
}

LinearWeight LinearWeight::PackQ4_K(const void* blocks, size_t rows, size_t cols, size_t row_stride) {
  return PackKQuants({{KQuantType::kQ4_K, blocks, rows, row_stride}}, cols);
}

void LinearWeight::ApplyKQuant(const float* x, size_t m, float* y, ThreadPool& pool) const {
  const size_t blocks = cols_ / q4k::kBlock;
  thread_local std::vector<int8_t, AlignedAllocator<int8_t>> xq;
  thread_local std::vector<float> xd;
  thread_local std::vector<int16_t> xsum;
  if (xq.size() < m * cols_) xq.resize(m * cols_);
  if (xd.size() < m * blocks) xd.resize(m * blocks);
  if (xsum.size() < m * blocks * q4k::kSums) xsum.resize(m * blocks * q4k::kSums);
  int8_t* q = xq.data();
  float* d = xd.data();
  int16_t* sums = xsum.data();
  linear_internal::QuantizeRows(m, cols_, pool, [&](size_t i) {
    int16_t* row_sums = sums + i * blocks * q4k::kSums;
    if (isa_ >= Isa::kAvx2) q4k::QuantizeRowAvx2(x + i * cols_, cols_, q + i * cols_, d + i * blocks, row_sums);
    else q4k::QuantizeRow(x + i * cols_, cols_, q + i * cols_, d + i * blocks, row_sums);
  });
  constexpr size_t kGroupRows = q4k::kGroupRows;
  const size_t groups = (rows_ + kGroupRows - 1) / kGroupRows;
  // Chunks are sized by the mean bytes of a group: a property of the weight alone.
  linear_internal::ForGroups<kGroupRows>(rows_, data_.size() / groups, pool, [&](size_t begin, size_t end) {
    for (const KQuantSegment& s : segments_) {
      const size_t first = s.first_row / kGroupRows, last = first + (s.rows + kGroupRows - 1) / kGroupRows;
      if (end <= first || begin >= last) continue;
      const q4k::Problem p{q, d, sums, m, cols_, data_.data() + s.offset, q4k::Format::kQ4_K, s.rows,
                           y + s.first_row, rows_};
      GemmSegment(s.type, isa_, p, std::max(begin, first) - first, std::min(end, last) - first);
    }
  });
}

}  // namespace llmserve::kernels::cpu
