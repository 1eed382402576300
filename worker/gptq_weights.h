#pragma once
// GPTQ 4-bit checkpoints (AutoGPTQ / GPTQModel's layout). A linear layer
// PREFIX holds
//   PREFIX.qweight  int32 [in / 8, out]: 8 quants per int32 along the input
//                   dimension, lowest nibble first;
//   PREFIX.qzeros   int32 [groups, out / 8]: 8 zero points per int32 along the
//                   output dimension, lowest nibble first;
//   PREFIX.scales   f16 [groups, out];
//   PREFIX.g_idx    int32 [in], optional: each input column's group;
// and w[o][i] = scales[g][o] × (q[i][o] − (z[g][o] + zero_offset)) with
// g = i / group_size (zero_offset 1 in GPTQ's original format).

#include <string>

#include "base/status_or.h"
#include "worker/int8_weights.h"
#include "worker/quantization_config.h"
#include "worker/safetensors.h"

namespace llmserve::worker {

// The [rows × cols] weight PREFIX widened to int8 groups (q − z fits in
// int8; the scales are the f16 values, exactly). Errors name the tensor: a
// missing or misshapen one, or a g_idx other than i / group_size (act-order
// checkpoints whose groups are permuted are not supported yet).
StatusOr<Int8Groups> DecodeGptq(const Checkpoint& ckpt, const std::string& prefix, size_t rows, size_t cols,
                                const Int4Layout& layout);

}  // namespace llmserve::worker
