#include "worker/fp8_weights.h"

#include "base/float8.h"
#include "kernels/cpu/embedding.h"

namespace llmserve::worker {

StatusOr<std::vector<float>> DequantizeFp8(const Checkpoint& ckpt, const TensorView& t, const Fp8Layout& layout) {
  using kernels::cpu::WeightDType;
  const size_t rows = t.shape[0], cols = t.shape[1];
  const bool blocks = layout.block_rows != 0;
  const std::string name = t.name + (blocks ? "_scale_inv" : "_scale");
  const TensorView* s = ckpt.Find(name);
  if (s == nullptr) return Status::NotFound(t.file + ": tensor " + t.name + " is FP8 but its scale " + name + " is missing");
  // Per channel: blocks of one row × the whole row.
  const size_t block_rows = blocks ? layout.block_rows : layout.per_channel ? 1 : rows;
  const size_t block_cols = blocks ? layout.block_cols : cols;
  const size_t scale_rows = (rows + block_rows - 1) / block_rows, scale_cols = (cols + block_cols - 1) / block_cols;
  const bool float_type = s->dtype == WeightDType::kF32 || s->dtype == WeightDType::kBF16 || s->dtype == WeightDType::kF16;
  const bool shape_ok = blocks               ? s->shape == std::vector<size_t>{scale_rows, scale_cols}
                        : layout.per_channel ? s->shape == std::vector<size_t>{rows, 1} ||
                                                   s->shape == std::vector<size_t>{rows}
                                             : s->num_elements() == 1;
  if (!float_type || !shape_ok) {
    std::string expected = "[] or [1] (one scale per tensor)";
    if (layout.per_channel) {
      TensorView want;
      want.shape = {rows, 1};
      expected = want.ShapeString() + " (one scale per output channel)";
    }
    if (blocks) {
      TensorView want;
      want.shape = {scale_rows, scale_cols};
      expected = want.ShapeString();
    }
    return Status::InvalidArgument(s->file + ": tensor " + name + " has shape " + s->ShapeString() +
                                   ", expected a float tensor of shape " + expected);
  }
  std::vector<float> scales(scale_rows * scale_cols);
  kernels::cpu::ConvertToF32(s->data, s->dtype, scales.size(), scales.data());
  std::vector<float> w(rows * cols);
  const auto* q = static_cast<const uint8_t*>(t.data);
  for (size_t r = 0; r < rows; ++r) {
    const float* row_scales = &scales[r / block_rows * scale_cols];
    for (size_t c = 0; c < cols; ++c) w[r * cols + c] = base::Fp8E4M3ToFloat(q[r * cols + c]) * row_scales[c / block_cols];
  }
  return w;
}

}  // namespace llmserve::worker
