#pragma once
// Status: the result of anything that can fail because of a user or a peer
// (bad input, unknown model field, peer gone). Broken invariants use CHECK.
// It lives in base/ because every folder, the wire codecs included, reports
// errors with it. Status and StatusOr are the vocabulary of the whole tree, so
// they sit in namespace llmserve rather than llmserve::base.

#include <string>
#include <string_view>
#include <utility>

namespace llmserve {

// What kind of failure; the frontend maps these to HTTP status codes.
enum class StatusCode {
  kOk = 0,
  kInvalidArgument,    // the caller's input is wrong (HTTP 400)
  kNotFound,           // a named thing does not exist (HTTP 404)
  kResourceExhausted,  // a bounded queue or budget is full (HTTP 429)
  kUnavailable,        // a peer is gone or not ready (HTTP 503)
  kDataLoss,           // bytes from a file or peer are malformed
  kUnimplemented,      // a valid request for something we do not support
  kInternal,           // something failed that should not have
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status ResourceExhausted(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status DataLoss(std::string m) { return {StatusCode::kDataLoss, std::move(m)}; }
  static Status Unimplemented(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "INVALID_ARGUMENT: message", or "OK".
  std::string ToString() const;

  // Returns a copy whose message is prefixed by `context: `.
  Status WithContext(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Returns the status from the enclosing function when it is not ok.
#define LLMSERVE_RETURN_IF_ERROR(expr)            \
  do {                                            \
    ::llmserve::Status _llmserve_status = (expr); \
    if (!_llmserve_status.ok()) return _llmserve_status; \
  } while (0)

}  // namespace llmserve
