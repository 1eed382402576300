#pragma once
// The key-value metadata of a GGUF file, in file order, with typed getters.
// Getters are strict about types (a uint64 is not a uint32): GGUF writers
// store each key with one type, and a mismatch means a file we do not
// understand. GetInteger is the one lenient getter, for counts that writers
// store with differing integer types.

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status_or.h"
#include "common/gguf/gguf_value.h"

namespace llmserve::common::gguf {

// "uint32", "string", "array of float32" for a C++ type T.
template <typename T> struct GgufTypeName {
  static std::string Get() { return GgufValueTypeName(GgufTypeOf<T>::kType); }
};
template <typename E> struct GgufTypeName<std::vector<E>> {
  static std::string Get() { return "array of " + GgufValueTypeName(GgufTypeOf<E>::kType); }
};

class GgufMetadata {
 public:
  // `source` prefixes error messages (the file name); may be empty.
  explicit GgufMetadata(std::string source = "") : source_(std::move(source)) {}

  // Appends `key`; InvalidArgument when it is already present.
  Status Add(std::string key, GgufValue value);
  // The value of `key`, or nullptr.
  const GgufValue* Find(std::string_view key) const;
  bool Has(std::string_view key) const { return Find(key) != nullptr; }

  // The value of `key` as T (a scalar type, std::string, or a std::vector of
  // either): NotFound when the key is absent, InvalidArgument naming the key,
  // the expected and the actual type when it holds another type.
  template <typename T>
  StatusOr<T> Get(std::string_view key) const {
    LLMSERVE_ASSIGN_OR_RETURN(const T* value, Typed<T>(key));
    return *value;
  }
  // As Get, but `fallback` when the key is absent.
  template <typename T>
  StatusOr<T> GetOr(std::string_view key, T fallback) const {
    return Has(key) ? Get<T>(key) : StatusOr<T>(std::move(fallback));
  }
  // An array without a copy: points into this metadata, valid while it lives.
  template <typename E>
  StatusOr<const std::vector<E>*> GetArray(std::string_view key) const {
    return Typed<std::vector<E>>(key);
  }
  // Any of the eight integer types as int64 (InvalidArgument for a uint64
  // above INT64_MAX or a non-integer).
  StatusOr<int64_t> GetInteger(std::string_view key) const;

  // Every entry in file order.
  const std::vector<std::pair<std::string, GgufValue>>& entries() const { return entries_; }
  size_t size() const { return entries_.size(); }

 private:
  template <typename T>
  StatusOr<const T*> Typed(std::string_view key) const {
    LLMSERVE_ASSIGN_OR_RETURN(const GgufValue* value, Lookup(key));
    if (const T* typed = value->get_if<T>()) return typed;
    return WrongType(key, GgufTypeName<T>::Get(), *value);
  }
  StatusOr<const GgufValue*> Lookup(std::string_view key) const;
  Status WrongType(std::string_view key, const std::string& expected, const GgufValue& actual) const;

  std::string source_;
  std::vector<std::pair<std::string, GgufValue>> entries_;
  std::map<std::string, size_t, std::less<>> index_;  // key → position in entries_
};

}  // namespace llmserve::common::gguf
