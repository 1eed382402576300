#pragma once
// Scalar dequantisation of ggml-typed rows to float32, following the
// published block formats (block_layouts.h) in ggml's float32 operation
// order. Every product there is exact in float32 (a half's 11-bit
// significand times integers of at most 8 + 6 bits), so the only rounding is
// the final subtraction of a min: any correct implementation of the formats
// gives the same bits (scripts/gguf_reference.py, an independent numpy one,
// does; the tests hold this).

#include <cstdint>

#include "base/status.h"
#include "common/gguf/ggml_type.h"

namespace llmserve::common::gguf {

// Writes the `n` values stored at `src` in `type`'s layout to dst[0..n).
// `n` must be a whole number of blocks (InvalidArgument otherwise); a type
// llmserve cannot dequantize is Unimplemented. `src` may be unaligned.
Status DequantizeRow(GgmlType type, const uint8_t* src, uint64_t n, float* dst);

// The K-quant super-blocks, `blocks` of them (DequantizeRow dispatches here).
void DequantizeQ4K(const uint8_t* src, uint64_t blocks, float* dst);
void DequantizeQ5K(const uint8_t* src, uint64_t blocks, float* dst);
void DequantizeQ6K(const uint8_t* src, uint64_t blocks, float* dst);

}  // namespace llmserve::common::gguf
