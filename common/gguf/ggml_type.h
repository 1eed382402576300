#pragma once
// ggml tensor types as GGUF numbers them (ggml.h's enum ggml_type, the values
// stored in a GGUF tensor info), with each type's block geometry. Every type
// a GGUF file may name is listed, so that a file's sizes can be checked even
// for types llmserve cannot dequantize; numbers ggml retired (4, 5, 31-33,
// 36-38) are unknown.

#include <cstdint>
#include <string>

#include "base/status_or.h"

namespace llmserve::common::gguf {

enum class GgmlType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,
  kIQ2_XXS = 16,
  kIQ2_XS = 17,
  kIQ3_XXS = 18,
  kIQ1_S = 19,
  kIQ4_NL = 20,
  kIQ3_S = 21,
  kIQ2_S = 22,
  kIQ4_XS = 23,
  kI8 = 24,
  kI16 = 25,
  kI32 = 26,
  kI64 = 27,
  kF64 = 28,
  kIQ1_M = 29,
  kBF16 = 30,
  kTQ1_0 = 34,
  kTQ2_0 = 35,
  kMXFP4 = 39,
};

// Geometry of one type: a row of n values takes n / block_size blocks of
// block_bytes each (plain types have block_size 1).
struct GgmlTypeInfo {
  GgmlType type;
  const char* name;      // as ggml spells it: "Q4_K", "BF16"
  uint32_t block_size;   // values per block
  uint32_t block_bytes;  // bytes per block
  bool dequantizable;    // llmserve can dequantize (and quantize) it
};

// The type numbered `number`, or nullptr when GGUF defines no such type.
const GgmlTypeInfo* FindGgmlType(uint32_t number);
// The info of a known type (CHECK-fails on a value outside the enum).
const GgmlTypeInfo& TypeInfo(GgmlType type);
// "Q4_K", or "unknown type 99" for a number GGUF does not define.
std::string GgmlTypeName(uint32_t number);
inline std::string GgmlTypeName(GgmlType type) { return GgmlTypeName(static_cast<uint32_t>(type)); }

// Bytes of a row of `n` values of `type`: an error when n is not a whole
// number of blocks or the size overflows.
StatusOr<uint64_t> RowBytes(GgmlType type, uint64_t n);

// The names of the types llmserve dequantizes, comma-separated (for errors).
std::string DequantizableTypeNames();

}  // namespace llmserve::common::gguf
