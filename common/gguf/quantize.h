#pragma once
// Quantisation of float32 rows into ggml's block layouts, for tests and for
// writing test models (not a production quantiser: round to nearest with a
// plain per-block or per-sub-block scale choice, no search for the scale that
// minimises the error). What it writes is what dequantize.h reads back.

#include <cstdint>

#include "base/status.h"
#include "common/gguf/ggml_type.h"

namespace llmserve::common::gguf {

// Writes the `n` values at `src` to `dst` in `type`'s layout
// (RowBytes(type, n) bytes). F32 / F16 / BF16 are converted (nearest, ties to
// even). Errors: InvalidArgument when `n` is not a whole number of blocks, or,
// for a quantized type, on a non-finite input or a block whose scale does not
// fit the format's half-precision fields; Unimplemented for types llmserve
// cannot dequantize.
Status QuantizeRow(GgmlType type, const float* src, uint64_t n, uint8_t* dst);

// The K-quant super-blocks, `blocks` of them (QuantizeRow dispatches here).
Status QuantizeQ4K(const float* src, uint64_t blocks, uint8_t* dst);
Status QuantizeQ5K(const float* src, uint64_t blocks, uint8_t* dst);
Status QuantizeQ6K(const float* src, uint64_t blocks, uint8_t* dst);

namespace quantize_internal {
// The integer nearest to `x` (ties to even), clamped to [lo, hi].
int RoundClamp(float x, int lo, int hi);
// The half nearest to `scale`, or InvalidArgument naming `type` when it is not finite.
Status ScaleToHalf(float scale, const char* type, uint16_t* half);
// The value of largest magnitude among x[0..n), with its sign.
float SignedAbsMax(const float* x, int n);
}  // namespace quantize_internal

}  // namespace llmserve::common::gguf
