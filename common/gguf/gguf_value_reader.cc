#include "common/gguf/gguf_value_reader.h"

#include <string>
#include <vector>

#include "common/gguf/gguf_type_dispatch.h"

namespace llmserve::common::gguf {

namespace {

template <typename T>
Status ReadElement(ByteReader& reader, T* out) {
  if constexpr (std::is_same_v<T, std::string>) {
    return reader.ReadString(out, "a string value");
  } else if constexpr (std::is_same_v<T, bool>) {
    uint8_t byte = 0;
    LLMSERVE_RETURN_IF_ERROR(reader.Read(&byte, "a bool value"));
    if (byte > 1) return Status::DataLoss("a bool value is " + std::to_string(byte) + ", not 0 or 1");
    *out = byte != 0;
    return Status::Ok();
  } else {
    return reader.Read(out, "a value");
  }
}

// The fewest bytes an element of T takes in the file (a string: its length).
template <typename T>
constexpr uint64_t MinElementBytes() {
  if constexpr (std::is_same_v<T, std::string>) return 8;
  else return sizeof(T);
}

template <typename T>
StatusOr<GgufValue> ReadArray(ByteReader& reader, uint64_t count) {
  // Bounding the count by the bytes left keeps a corrupt count from
  // reserving memory the file cannot back.
  if (count > reader.remaining() / MinElementBytes<T>()) {
    return Status::DataLoss("an array of " + std::to_string(count) + " " + GgufValueTypeName(GgufTypeOf<T>::kType) +
                            " cannot fit in the " + std::to_string(reader.remaining()) + " bytes left");
  }
  std::vector<T> values(count);
  for (uint64_t i = 0; i < count; ++i) {
    T element{};
    Status s = ReadElement(reader, &element);
    if (!s.ok()) return s.WithContext("element " + std::to_string(i));
    values[i] = std::move(element);
  }
  return GgufValue(std::move(values));
}

}  // namespace

StatusOr<GgufValue> ReadGgufValue(ByteReader& reader, uint32_t type) {
  if (!IsGgufValueType(type)) return Status::DataLoss("undefined value type " + std::to_string(type));
  if (static_cast<GgufValueType>(type) != GgufValueType::kArray) {
    return DispatchScalar(static_cast<GgufValueType>(type), [&](auto tag) -> StatusOr<GgufValue> {
      typename decltype(tag)::type value{};
      LLMSERVE_RETURN_IF_ERROR(ReadElement(reader, &value));
      return GgufValue(std::move(value));
    });
  }
  uint32_t element_type = 0;
  uint64_t count = 0;
  LLMSERVE_RETURN_IF_ERROR(reader.Read(&element_type, "an array's element type"));
  LLMSERVE_RETURN_IF_ERROR(reader.Read(&count, "an array's length"));
  if (!IsGgufValueType(element_type)) {
    return Status::DataLoss("an array of undefined value type " + std::to_string(element_type));
  }
  if (static_cast<GgufValueType>(element_type) == GgufValueType::kArray) {
    return Status::Unimplemented("an array of arrays (not supported)");
  }
  return DispatchScalar(static_cast<GgufValueType>(element_type), [&](auto tag) {
    return ReadArray<typename decltype(tag)::type>(reader, count);
  });
}

}  // namespace llmserve::common::gguf
