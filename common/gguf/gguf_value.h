#pragma once
// A GGUF metadata value: one of the twelve scalar types, a string, or an
// array of one of them (GGUF's array of arrays is not supported: no model
// file uses one, and refusing it keeps parsing flat).

#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace llmserve::common::gguf {

// Value types as GGUF numbers them (gguf.md: gguf_metadata_value_type).
enum class GgufValueType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

// "uint32", "string", "array"…; "type 42" for a number GGUF does not define.
std::string GgufValueTypeName(uint32_t number);
inline std::string GgufValueTypeName(GgufValueType type) { return GgufValueTypeName(static_cast<uint32_t>(type)); }
// True for the numbers 0..12.
bool IsGgufValueType(uint32_t number);

// The C++ type of each GGUF element type (bool for kBool, std::string for kString).
template <typename T> struct GgufTypeOf;
template <> struct GgufTypeOf<uint8_t> { static constexpr GgufValueType kType = GgufValueType::kUint8; };
template <> struct GgufTypeOf<int8_t> { static constexpr GgufValueType kType = GgufValueType::kInt8; };
template <> struct GgufTypeOf<uint16_t> { static constexpr GgufValueType kType = GgufValueType::kUint16; };
template <> struct GgufTypeOf<int16_t> { static constexpr GgufValueType kType = GgufValueType::kInt16; };
template <> struct GgufTypeOf<uint32_t> { static constexpr GgufValueType kType = GgufValueType::kUint32; };
template <> struct GgufTypeOf<int32_t> { static constexpr GgufValueType kType = GgufValueType::kInt32; };
template <> struct GgufTypeOf<float> { static constexpr GgufValueType kType = GgufValueType::kFloat32; };
template <> struct GgufTypeOf<bool> { static constexpr GgufValueType kType = GgufValueType::kBool; };
template <> struct GgufTypeOf<std::string> { static constexpr GgufValueType kType = GgufValueType::kString; };
template <> struct GgufTypeOf<uint64_t> { static constexpr GgufValueType kType = GgufValueType::kUint64; };
template <> struct GgufTypeOf<int64_t> { static constexpr GgufValueType kType = GgufValueType::kInt64; };
template <> struct GgufTypeOf<double> { static constexpr GgufValueType kType = GgufValueType::kFloat64; };

class GgufValue {
 public:
  // Scalars and arrays, in the order of GgufValueType (kArray skipped).
  using Storage = std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float, bool, std::string,
                               uint64_t, int64_t, double, std::vector<uint8_t>, std::vector<int8_t>,
                               std::vector<uint16_t>, std::vector<int16_t>, std::vector<uint32_t>,
                               std::vector<int32_t>, std::vector<float>, std::vector<bool>,
                               std::vector<std::string>, std::vector<uint64_t>, std::vector<int64_t>,
                               std::vector<double>>;

  GgufValue() = default;  // uint8 0
  // Any scalar, string or array of the types above. A char* is a string.
  template <typename T>
    requires(!std::is_same_v<std::decay_t<T>, GgufValue> && std::is_constructible_v<Storage, T>)
  GgufValue(T value) : storage_(std::move(value)) {}  // NOLINT: implicit on purpose
  GgufValue(const char* s) : storage_(std::string(s)) {}  // NOLINT

  // kArray for arrays.
  GgufValueType type() const;
  // The element type of an array, else the same as type().
  GgufValueType element_type() const;
  // The value as T when it holds exactly a T, else nullptr.
  template <typename T>
  const T* get_if() const { return std::get_if<T>(&storage_); }
  const Storage& storage() const { return storage_; }
  // "uint32", "array of string".
  std::string TypeName() const;

  bool operator==(const GgufValue& other) const = default;

 private:
  Storage storage_;
};

}  // namespace llmserve::common::gguf
