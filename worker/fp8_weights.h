#pragma once
// FP8 checkpoints (vLLM's "fp8" quant_method, or compressed-tensors'
// float-quantized format): a linear layer's NAME.weight
// is F8_E4M3 [out, in] and its scale is either
//   NAME.weight_scale_inv  [ceil(out / block_rows), ceil(in / block_cols)]
//                          (weight_block_size; Qwen3-FP8, DeepSeek-V3), or
//   NAME.weight_scale      one value for the tensor (no block size), or one
//                          per output channel ([out, 1] or [out]: per_channel),
// f32 or bf16, with w[o][i] = fp8(q[o][i]) × scale of (o, i)'s block.

#include <string>
#include <vector>

#include "base/status_or.h"
#include "worker/quantization_config.h"
#include "worker/safetensors.h"

namespace llmserve::worker {

// Weight `t` (F8_E4M3, [rows × cols]) times its scales, as f32 [rows × cols].
// Errors name the tensor: a missing scale, or one of the wrong shape or type.
StatusOr<std::vector<float>> DequantizeFp8(const Checkpoint& ckpt, const TensorView& t, const Fp8Layout& layout);

}  // namespace llmserve::worker
