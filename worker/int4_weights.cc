#include "worker/int4_weights.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>

#include "base/float16.h"
#include "kernels/cpu/embedding.h"

namespace llmserve::worker {

namespace {

uint32_t Word(const TensorView& t, size_t index) {
  uint32_t w;
  std::memcpy(&w, static_cast<const uint8_t*>(t.data) + index * 4, 4);
  return w;
}

// Nibble `n` (lowest first) of a packed int32.
int Nibble(uint32_t word, size_t n) { return static_cast<int>((word >> (4 * n)) & 0xF); }

// GPTQ's g_idx (each input column's group): empty when it is i / group (the
// columns in order), else the columns sorted by group (stable), which act-order
// (desc_act) checkpoints need; each group must hold exactly `group` columns.
StatusOr<std::vector<uint32_t>> ActOrder(const TensorView& g_idx, size_t cols, size_t group) {
  if (g_idx.shape != std::vector<size_t>{cols} || g_idx.dtype != kernels::cpu::WeightDType::kI32)
    return Status::InvalidArgument(g_idx.file + ": tensor " + g_idx.name + " is not int32 [" + std::to_string(cols) +
                                   "]");
  const size_t groups = cols / group;
  std::vector<size_t> members(groups, 0);
  bool in_order = true;
  for (size_t i = 0; i < cols; ++i) {
    const uint32_t g = Word(g_idx, i);
    if (g >= groups)
      return Status::InvalidArgument(g_idx.file + ": tensor " + g_idx.name + " names group " + std::to_string(g) +
                                     " of " + std::to_string(groups));
    ++members[g];
    in_order = in_order && g == i / group;
  }
  if (in_order) return std::vector<uint32_t>();
  for (size_t g = 0; g < groups; ++g) {
    if (members[g] != group)
      return Status::InvalidArgument(g_idx.file + ": tensor " + g_idx.name + " puts " + std::to_string(members[g]) +
                                     " columns in group " + std::to_string(g) + ", not the group size " +
                                     std::to_string(group));
  }
  std::vector<uint32_t> order(cols);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return Word(g_idx, a) < Word(g_idx, b); });
  return order;
}

// Int8Groups of rows × cols in groups of `group`, zeroed, in the column order
// `g_idx` gives (when given).
StatusOr<Int8Groups> Sized(const TensorView* g_idx, size_t rows, size_t cols, size_t group) {
  Int8Groups out;
  if (g_idx != nullptr) {
    LLMSERVE_ASSIGN_OR_RETURN(out.input_order, ActOrder(*g_idx, cols, group));
  }
  out.rows = rows;
  out.cols = cols;
  out.group = group;
  out.q.resize(rows * cols);
  out.scales.resize(rows * out.groups());
  return out;
}

// compressed-tensors' pack-quantized layout (int4_weights.h).
StatusOr<Int8Groups> DecodePackQuantized(const Checkpoint& ckpt, const std::string& prefix, size_t rows, size_t cols,
                                         const Int4Layout& layout) {
  const size_t group = layout.group_size == 0 ? cols : layout.group_size;
  if (cols % 8 != 0 || cols % group != 0 || (!layout.symmetric && rows % 8 != 0)) {
    return Status::InvalidArgument(prefix + ": a 4-bit weight of " + std::to_string(rows) + " × " +
                                   std::to_string(cols) + " does not split into 8-quant words and groups of " +
                                   std::to_string(group));
  }
  const size_t groups = cols / group;
  LLMSERVE_ASSIGN_OR_RETURN(TensorView packed, ckpt.Get(prefix + ".weight_packed", {rows, cols / 8}));
  LLMSERVE_ASSIGN_OR_RETURN(TensorView scale, ckpt.Get(prefix + ".weight_scale", {rows, groups}));
  if (packed.dtype != kernels::cpu::WeightDType::kI32)
    return Status::InvalidArgument(packed.file + ": tensor " + packed.name + " is not int32");
  if (scale.dtype == kernels::cpu::WeightDType::kI32 || scale.dtype == kernels::cpu::WeightDType::kI8 ||
      scale.dtype == kernels::cpu::WeightDType::kF8E4M3)
    return Status::InvalidArgument(scale.file + ": tensor " + scale.name + " is not a float tensor");
  std::optional<TensorView> zeros;
  if (!layout.symmetric) {
    LLMSERVE_ASSIGN_OR_RETURN(zeros, ckpt.Get(prefix + ".weight_zero_point", {rows / 8, groups}));
    if (zeros->dtype != kernels::cpu::WeightDType::kI32)
      return Status::InvalidArgument(zeros->file + ": tensor " + zeros->name + " is not int32");
  }
  LLMSERVE_ASSIGN_OR_RETURN(Int8Groups out, Sized(ckpt.Find(prefix + ".weight_g_idx"), rows, cols, group));
  kernels::cpu::ConvertToF32(scale.data, scale.dtype, rows * groups, out.scales.data());
  // Quants and zero points are stored plus 8 (unsigned nibbles of signed values).
  for (size_t o = 0; o < rows; ++o) {
    for (size_t c = 0; c < cols; ++c) {
      const size_t i = out.input_order.empty() ? c : out.input_order[c], g = c / group;  // checkpoint column, group
      const int q = Nibble(Word(packed, o * (cols / 8) + i / 8), i % 8) - 8;
      const int z = zeros ? Nibble(Word(*zeros, (o / 8) * groups + g), o % 8) - 8 : 0;
      out.q[o * cols + c] = static_cast<int8_t>(q - z);
    }
  }
  return out;
}

}  // namespace

StatusOr<Int8Groups> DecodeInt4(const Checkpoint& ckpt, const std::string& prefix, size_t rows, size_t cols,
                                const Int4Layout& layout) {
  if (layout.packing == Int4Packing::kPackQuantized) return DecodePackQuantized(ckpt, prefix, rows, cols, layout);
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
  LLMSERVE_ASSIGN_OR_RETURN(Int8Groups out, Sized(awq ? nullptr : ckpt.Find(prefix + ".g_idx"), rows, cols, group));
  for (size_t g = 0; g < groups; ++g) {
    for (size_t o = 0; o < rows; ++o) {
      uint16_t half;
      std::memcpy(&half, static_cast<const uint8_t*>(scales.data) + (g * rows + o) * 2, 2);
      out.scales[o * groups + g] = base::HalfToFloat(half);
    }
  }
  for (size_t c = 0; c < cols; ++c) {
    const size_t i = out.input_order.empty() ? c : out.input_order[c], g = c / group;  // checkpoint column, group
    for (size_t o = 0; o < rows; ++o) {
      // Output column o sits in nibble `zn` of its zero-point word (and, for
      // AWQ, of its quant word).
      const size_t zn = awq ? kAwqNibble[o % 8] : o % 8;
      const int q = awq ? Nibble(Word(qweight, i * (rows / 8) + o / 8), zn)
                        : Nibble(Word(qweight, (i / 8) * rows + o), i % 8);
      const int z = Nibble(Word(qzeros, g * (rows / 8) + o / 8), zn) + layout.zero_offset;
      out.q[o * cols + c] = static_cast<int8_t>(q - z);
    }
  }
  return out;
}

}  // namespace llmserve::worker
