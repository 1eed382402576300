#include "common/gguf/gguf_metadata.h"

#include <limits>

namespace llmserve::common::gguf {

Status GgufMetadata::Add(std::string key, GgufValue value) {
  if (index_.count(key) != 0) return Status::InvalidArgument("metadata key '" + key + "' appears twice");
  index_.emplace(key, entries_.size());
  entries_.emplace_back(std::move(key), std::move(value));
  return Status::Ok();
}

const GgufValue* GgufMetadata::Find(std::string_view key) const {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

StatusOr<const GgufValue*> GgufMetadata::Lookup(std::string_view key) const {
  if (const GgufValue* value = Find(key)) return value;
  return Status::NotFound(source_ + (source_.empty() ? "" : ": ") + "metadata key '" + std::string(key) +
                          "' is missing");
}

Status GgufMetadata::WrongType(std::string_view key, const std::string& expected, const GgufValue& actual) const {
  return Status::InvalidArgument(source_ + (source_.empty() ? "" : ": ") + "metadata key '" + std::string(key) +
                                 "' is " + actual.TypeName() + ", expected " + expected);
}

StatusOr<int64_t> GgufMetadata::GetInteger(std::string_view key) const {
  LLMSERVE_ASSIGN_OR_RETURN(const GgufValue* value, Lookup(key));
  return std::visit(
      [&](const auto& v) -> StatusOr<int64_t> {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, uint64_t>) {
          if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
            return WrongType(key, "an integer up to 2^63-1 (it holds " + std::to_string(v) + ")", *value);
          }
          return static_cast<int64_t>(v);
        } else if constexpr (std::is_integral_v<V> && !std::is_same_v<V, bool>) {
          return static_cast<int64_t>(v);
        } else {
          return WrongType(key, "an integer", *value);
        }
      },
      value->storage());
}

}  // namespace llmserve::common::gguf
