#pragma once
// 4-bit group-quantized checkpoints, GPTQ's and AWQ's layouts. A linear
// layer PREFIX holds
//   PREFIX.qweight  int32, 8 quants per word: GPTQ [in / 8, out], packed along
//                   the input dimension, lowest nibble first; AWQ [in, out / 8],
//                   packed along the output dimension in AWQ's order (column
//                   j of a word in nibble [0, 4, 1, 5, 2, 6, 3, 7][j]);
//   PREFIX.qzeros   int32 [groups, out / 8], packed along the output dimension
//                   as the format packs qweight's output columns (GPTQ: lowest
//                   nibble first);
//   PREFIX.scales   f16 [groups, out];
//   PREFIX.g_idx    int32 [in], GPTQ only and optional: each input column's group;
// and w[o][i] = scales[g][o] × (q[i][o] − (z[g][o] + zero_offset)) with
// g = g_idx[i], else i / group_size (zero_offset 1 in GPTQ's original format,
// else 0).
//
// compressed-tensors' pack-quantized format (W4A16) instead:
//   PREFIX.weight_packed      int32 [out, in / 8], 8 quants per word along the
//                             input dimension, lowest nibble first;
//   PREFIX.weight_scale       float [out, groups] (groups = 1 per channel);
//   PREFIX.weight_zero_point  int32 [out / 8, groups], packed along the output
//                             dimension (asymmetric schemes only);
//   PREFIX.weight_g_idx       int32 [in], optional (actorder);
// quants and zero points stored plus 8, and w[o][i] = scale[o][g] × (q − z).

#include <string>

#include "base/status_or.h"
#include "worker/int8_weights.h"
#include "worker/quantization_config.h"
#include "worker/safetensors.h"

namespace llmserve::worker {

// The [rows × cols] weight PREFIX widened to int8 groups (q − z fits in
// int8; the scales are the f16 values, exactly). A g_idx other than
// i / group_size (act-order, desc_act) gives the columns sorted by group, with
// Int8Groups::input_order saying where each came from. Errors name the
// tensor: a missing or misshapen one, or a g_idx whose groups are not each
// group_size columns.
StatusOr<Int8Groups> DecodeInt4(const Checkpoint& ckpt, const std::string& prefix, size_t rows, size_t cols,
                                const Int4Layout& layout);

// The nibble of a packed word that holds output column `j` (mod 8) in AWQ's order.
inline constexpr int kAwqNibble[8] = {0, 4, 1, 5, 2, 6, 3, 7};

}  // namespace llmserve::worker
