#include "worker/int4_weights.h"

#include <cstring>

#include "base/float16.h"

namespace llmserve::worker {

namespace {

uint32_t Word(const TensorView& t, size_t index) {
  uint32_t w;
  std::memcpy(&w, static_cast<const uint8_t*>(t.data) + index * 4, 4);
  return w;
}

// Nibble `n` (lowest first) of a packed int32.
int Nibble(uint32_t word, size_t n) { return static_cast<int>((word >> (4 * n)) & 0xF); }

}  // namespace

StatusOr<Int8Groups> DecodeInt4(const Checkpoint& ckpt, const std::string& prefix, size_t rows, size_t cols,
                                const Int4Layout& layout) {
  const bool awq = layout.packing == Int4Packing::kAwq;
  const size_t group = layout.group_size == 0 ? cols : layout.group_size;
  if (cols % 8 != 0 || rows % 8 != 0 || cols % group != 0) {
    return Status::InvalidArgument(prefix + ": a 4-bit weight of " + std::to_string(rows) + " × " +
                                   std::to_string(cols) + " does not split into 8-quant words and groups of " +
                                   std::to_string(group));
  }
  const size_t groups = cols / group;
  LLMSERVE_ASSIGN_OR_RETURN(TensorView qweight,
                            ckpt.Get(prefix + ".qweight", awq ? std::vector<size_t>{cols, rows / 8}
                                                              : std::vector<size_t>{cols / 8, rows}));
  LLMSERVE_ASSIGN_OR_RETURN(TensorView qzeros, ckpt.Get(prefix + ".qzeros", {groups, rows / 8}));
  LLMSERVE_ASSIGN_OR_RETURN(TensorView scales, ckpt.Get(prefix + ".scales", {groups, rows}));
  for (const TensorView* t : {&qweight, &qzeros}) {
    if (t->dtype != kernels::cpu::WeightDType::kI32)
      return Status::InvalidArgument(t->file + ": tensor " + t->name + " is not int32");
  }
  if (scales.dtype != kernels::cpu::WeightDType::kF16) {
    return Status::InvalidArgument(scales.file + ": tensor " + scales.name + " is not float16");
  }
  if (const TensorView* g_idx = ckpt.Find(prefix + ".g_idx"); g_idx != nullptr && !awq) {
    if (g_idx->shape != std::vector<size_t>{cols} || g_idx->dtype != kernels::cpu::WeightDType::kI32)
      return Status::InvalidArgument(g_idx->file + ": tensor " + g_idx->name + " is not int32 [" +
                                     std::to_string(cols) + "]");
    for (size_t i = 0; i < cols; ++i) {
      if (Word(*g_idx, i) != i / group) {
        return Status::Unimplemented(g_idx->file + ": tensor " + g_idx->name +
                                     " permutes the groups (act-order, desc_act), which is not supported yet");
      }
    }
  }
  Int8Groups out;
  out.rows = rows;
  out.cols = cols;
  out.group = group;
  out.q.resize(rows * cols);
  out.scales.resize(rows * groups);
  for (size_t g = 0; g < groups; ++g) {
    for (size_t o = 0; o < rows; ++o) {
      uint16_t half;
      std::memcpy(&half, static_cast<const uint8_t*>(scales.data) + (g * rows + o) * 2, 2);
      out.scales[o * groups + g] = base::HalfToFloat(half);
    }
  }
  for (size_t i = 0; i < cols; ++i) {
    const size_t g = i / group;
    for (size_t o = 0; o < rows; ++o) {
      // Output column o sits in nibble `zn` of its zero-point word (and, for
      // AWQ, of its quant word).
      const size_t zn = awq ? kAwqNibble[o % 8] : o % 8;
      const int q = awq ? Nibble(Word(qweight, i * (rows / 8) + o / 8), zn)
                        : Nibble(Word(qweight, (i / 8) * rows + o), i % 8);
      const int z = Nibble(Word(qzeros, g * (rows / 8) + o / 8), zn) + layout.zero_offset;
      out.q[o * cols + i] = static_cast<int8_t>(q - z);
    }
  }
  return out;
}

}  // namespace llmserve::worker
