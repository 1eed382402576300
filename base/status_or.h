#pragma once
// StatusOr<T>: a value or the Status saying why there is none. Misuse is a
// CHECK failure, never undefined behaviour: making one from an OK status, or
// reading the value of one that holds an error.

#include <optional>
#include <utility>

#include "base/status.h"

namespace llmserve {

namespace status_internal {
// Aborts the process with `what` and the status (glog FATAL).
[[noreturn]] void DieOfStatusOrMisuse(const char* what, const Status& status);
}  // namespace status_internal

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit on purpose
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT: must not be ok
    if (status_.ok()) status_internal::DieOfStatusOrMisuse("StatusOr made from an OK status", status_);
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  // The value; the caller must have checked ok().
  T& value() & { return Checked(); }
  const T& value() const& { return Checked(); }
  T&& value() && { return std::move(Checked()); }
  T* operator->() { return &Checked(); }
  const T* operator->() const { return &Checked(); }
  T& operator*() { return Checked(); }
  const T& operator*() const { return Checked(); }

 private:
  T& Checked() {
    if (!value_) status_internal::DieOfStatusOrMisuse("value() of a StatusOr holding an error", status_);
    return *value_;
  }
  const T& Checked() const {
    if (!value_) status_internal::DieOfStatusOrMisuse("value() of a StatusOr holding an error", status_);
    return *value_;
  }

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
