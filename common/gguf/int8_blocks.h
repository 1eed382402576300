#pragma once
// The legacy GGUF block types whose values are scale × small integer —
// Q8_0 (d·q), Q4_0 (d·(q − 8)) and Q5_0 (d·(q − 16)) — read as int8 values
// and one float scale per block of 32, exactly: what the int8 kernels
// (LinearWeight::PackInt8) multiply, so a Q4_0 or Q5_0 file runs on them at
// about one byte a weight instead of being widened to bf16. Q4_1 and Q5_1
// add a min per block and are not of this kind.

#include <cstdint>

#include "base/status.h"
#include "common/gguf/ggml_type.h"

namespace llmserve::common::gguf {

// Whether `type` is Q8_0, Q4_0 or Q5_0.
bool HasInt8Blocks(GgmlType type);

// The `n` values stored at `src` (whole blocks of 32) as q[0..n) and
// scales[0..n/32), value i = scales[i / 32] × q[i] exactly. Another type is
// InvalidArgument.
Status ToInt8Blocks(GgmlType type, const uint8_t* src, uint64_t n, int8_t* q, float* scales);

}  // namespace llmserve::common::gguf
