#include "common/gguf/gguf_value.h"

#include <array>

namespace llmserve::common::gguf {

namespace {
constexpr std::array<const char*, 13> kNames = {"uint8", "int8",  "uint16", "int16",  "uint32", "int32", "float32",
                                                "bool",  "string", "array", "uint64", "int64", "float64"};
// The variant's alternative i holds GgufValueType kIndexType[i % 12].
constexpr std::array<GgufValueType, 12> kIndexType = {
    GgufValueType::kUint8,  GgufValueType::kInt8,   GgufValueType::kUint16,  GgufValueType::kInt16,
    GgufValueType::kUint32, GgufValueType::kInt32,  GgufValueType::kFloat32, GgufValueType::kBool,
    GgufValueType::kString, GgufValueType::kUint64, GgufValueType::kInt64,   GgufValueType::kFloat64};
}  // namespace

std::string GgufValueTypeName(uint32_t number) {
  return number < kNames.size() ? kNames[number] : "type " + std::to_string(number);
}

bool IsGgufValueType(uint32_t number) { return number < kNames.size(); }

GgufValueType GgufValue::type() const {
  return storage_.index() < kIndexType.size() ? kIndexType[storage_.index()] : GgufValueType::kArray;
}

GgufValueType GgufValue::element_type() const { return kIndexType[storage_.index() % kIndexType.size()]; }

std::string GgufValue::TypeName() const {
  if (type() != GgufValueType::kArray) return GgufValueTypeName(type());
  return "array of " + GgufValueTypeName(element_type());
}

}  // namespace llmserve::common::gguf
