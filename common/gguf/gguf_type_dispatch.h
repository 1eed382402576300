#pragma once
// Calls a generic function with the C++ type of a GGUF scalar value type, so
// the reader and the writer handle the twelve scalar types in one place:
//   DispatchScalar(type, [&](auto tag) { using T = typename decltype(tag)::type; ... });
// Private to common/gguf/*.cc.

#include <glog/logging.h>

#include <cstdint>
#include <string>

#include "common/gguf/gguf_value.h"

namespace llmserve::common::gguf {

template <typename T> struct TypeTag { using type = T; };

// `type` must be a scalar type (not kArray, not an undefined number).
template <typename F>
decltype(auto) DispatchScalar(GgufValueType type, F&& f) {
  switch (type) {
    case GgufValueType::kUint8: return f(TypeTag<uint8_t>{});
    case GgufValueType::kInt8: return f(TypeTag<int8_t>{});
    case GgufValueType::kUint16: return f(TypeTag<uint16_t>{});
    case GgufValueType::kInt16: return f(TypeTag<int16_t>{});
    case GgufValueType::kUint32: return f(TypeTag<uint32_t>{});
    case GgufValueType::kInt32: return f(TypeTag<int32_t>{});
    case GgufValueType::kFloat32: return f(TypeTag<float>{});
    case GgufValueType::kBool: return f(TypeTag<bool>{});
    case GgufValueType::kString: return f(TypeTag<std::string>{});
    case GgufValueType::kUint64: return f(TypeTag<uint64_t>{});
    case GgufValueType::kInt64: return f(TypeTag<int64_t>{});
    case GgufValueType::kFloat64: return f(TypeTag<double>{});
    case GgufValueType::kArray: break;
  }
  LOG(FATAL) << "DispatchScalar on " << GgufValueTypeName(type);
}

}  // namespace llmserve::common::gguf
