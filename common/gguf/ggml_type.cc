#include "common/gguf/ggml_type.h"

#include <glog/logging.h>

#include <array>

namespace llmserve::common::gguf {

namespace {

// Sizes from ggml's block structs (ggml-common.h); QK_K super-blocks are 256.
constexpr std::array<GgmlTypeInfo, 32> kTypes = {{
    {GgmlType::kF32, "F32", 1, 4, true},
    {GgmlType::kF16, "F16", 1, 2, true},
    {GgmlType::kQ4_0, "Q4_0", 32, 18, true},
    {GgmlType::kQ4_1, "Q4_1", 32, 20, true},
    {GgmlType::kQ5_0, "Q5_0", 32, 22, true},
    {GgmlType::kQ5_1, "Q5_1", 32, 24, true},
    {GgmlType::kQ8_0, "Q8_0", 32, 34, true},
    {GgmlType::kQ8_1, "Q8_1", 32, 36, false},
    {GgmlType::kQ2_K, "Q2_K", 256, 84, false},
    {GgmlType::kQ3_K, "Q3_K", 256, 110, false},
    {GgmlType::kQ4_K, "Q4_K", 256, 144, true},
    {GgmlType::kQ5_K, "Q5_K", 256, 176, true},
    {GgmlType::kQ6_K, "Q6_K", 256, 210, true},
    {GgmlType::kQ8_K, "Q8_K", 256, 292, false},
    {GgmlType::kIQ2_XXS, "IQ2_XXS", 256, 66, false},
    {GgmlType::kIQ2_XS, "IQ2_XS", 256, 74, false},
    {GgmlType::kIQ3_XXS, "IQ3_XXS", 256, 98, false},
    {GgmlType::kIQ1_S, "IQ1_S", 256, 50, false},
    {GgmlType::kIQ4_NL, "IQ4_NL", 32, 18, false},
    {GgmlType::kIQ3_S, "IQ3_S", 256, 110, false},
    {GgmlType::kIQ2_S, "IQ2_S", 256, 82, false},
    {GgmlType::kIQ4_XS, "IQ4_XS", 256, 136, false},
    {GgmlType::kI8, "I8", 1, 1, false},
    {GgmlType::kI16, "I16", 1, 2, false},
    {GgmlType::kI32, "I32", 1, 4, false},
    {GgmlType::kI64, "I64", 1, 8, false},
    {GgmlType::kF64, "F64", 1, 8, false},
    {GgmlType::kIQ1_M, "IQ1_M", 256, 56, false},
    {GgmlType::kBF16, "BF16", 1, 2, true},
    {GgmlType::kTQ1_0, "TQ1_0", 256, 54, false},
    {GgmlType::kTQ2_0, "TQ2_0", 256, 66, false},
    {GgmlType::kMXFP4, "MXFP4", 32, 17, false},
}};

}  // namespace

const GgmlTypeInfo* FindGgmlType(uint32_t number) {
  for (const GgmlTypeInfo& t : kTypes) {
    if (static_cast<uint32_t>(t.type) == number) return &t;
  }
  return nullptr;
}

const GgmlTypeInfo& TypeInfo(GgmlType type) {
  const GgmlTypeInfo* info = FindGgmlType(static_cast<uint32_t>(type));
  CHECK(info != nullptr) << "ggml type " << static_cast<uint32_t>(type) << " is not in the enum";
  return *info;
}

std::string GgmlTypeName(uint32_t number) {
  const GgmlTypeInfo* info = FindGgmlType(number);
  return info != nullptr ? info->name : "unknown type " + std::to_string(number);
}

StatusOr<uint64_t> RowBytes(GgmlType type, uint64_t n) {
  const GgmlTypeInfo& info = TypeInfo(type);
  if (n % info.block_size != 0) {
    return Status::InvalidArgument("a row of " + std::to_string(n) + " values is not a whole number of " +
                                   info.name + " blocks of " + std::to_string(info.block_size));
  }
  const uint64_t blocks = n / info.block_size;
  if (blocks > UINT64_MAX / info.block_bytes) {
    return Status::InvalidArgument("a row of " + std::to_string(n) + " " + info.name + " values overflows 64 bits");
  }
  return blocks * info.block_bytes;
}

std::string DequantizableTypeNames() {
  std::string names;
  for (const GgmlTypeInfo& t : kTypes) {
    if (t.dequantizable) names += (names.empty() ? "" : ", ") + std::string(t.name);
  }
  return names;
}

}  // namespace llmserve::common::gguf
