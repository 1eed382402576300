#pragma once
// StatusOr<T>: a value or the Status saying why there is none.

#include <optional>
#include <utility>

#include "proto/status.h"

namespace llmserve {

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit on purpose
  StatusOr(Status status) : status_(std::move(status)) {}  // NOLINT: must not be ok

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

// Assigns the value of a StatusOr expression to `lhs`, or returns its status.
#define LLMSERVE_ASSIGN_OR_RETURN(lhs, expr) \
  LLMSERVE_ASSIGN_OR_RETURN_IMPL(LLMSERVE_CONCAT(_llmserve_or_, __LINE__), lhs, expr)
#define LLMSERVE_CONCAT_INNER(a, b) a##b
#define LLMSERVE_CONCAT(a, b) LLMSERVE_CONCAT_INNER(a, b)
#define LLMSERVE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return tmp.status();                  \
  lhs = std::move(tmp).value()

}  // namespace llmserve
